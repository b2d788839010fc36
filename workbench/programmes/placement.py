"""Placing a programme's cost lines in months: the time profile of each engine line
(``data/timeline_profiles.csv``), the pricing of every workstream's scenario in as few batches as the engine
allows, and one builder per block of lines (training cycles, serving of each live version, staff, hidden costs),
each a tidy frame of (month, workstream, cycle, line) rows. :func:`workbench.programmes.timeline.evaluate` puts them together.
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from ..plan import contingency
from ..reference import data
from ..formulas import hidden
from ..plan.estimate import estimate
from .programme import FRAME_COLUMNS, PROGRAMME_LINES, ProgrammeError, Workstream
from ..plan.scenario import Scenario, ScenarioError, fields

DAYS_PER_MONTH = 365.25 / 12
PROFILES = ("run", "start", "release", "retention_from_start", "retention_from_end", "archive", "programme_staff",
            "serving", "fleet")
GPU_HOUR_CLASSES = ("productive", "lost", "experiments", "debug", "serving", "idle", "none")
UNTAGGED = "(untagged)"


@data.cached
def profiles() -> pd.DataFrame:
    """The time profile and GPU-hour class of each engine line, ``(stage, item)``; stage ``*``: any training stage."""
    table = data.read_table("timeline_profiles.csv", required=("stage", "item", "profile", "gpu_hours", "why"),
                            key=("stage", "item"),
                            choices={"profile": PROFILES, "gpu_hours": GPU_HOUR_CLASSES})
    return table.set_index(["stage", "item"])


@data.cached
def _profile_map() -> dict[tuple[str, str], tuple[str, str]]:
    table = profiles()
    return {key: (p, g) for key, p, g in zip(table.index, table["profile"], table["gpu_hours"])}


def profile_of(stage: str, item: str) -> tuple[str, str]:
    """(profile, GPU-hour class) of an engine line; a line with none is a defect of the data table."""
    table = _profile_map()
    for key in ((stage, item), ("*", item)):
        if key in table:
            return table[key]
    raise data.DataFileError(data.data_dir() / "timeline_profiles.csv",
                             f"no time profile for the engine line {stage}/{item!r}; add a row for it")


# -- pricing every scenario in as few batches as the engine allows --------------------------------------
def _batches(scenarios: list[Scenario]) -> list[tuple[list[int], Scenario]]:
    """Group scenarios into batch Scenarios: a batch cannot mix an empty (auto) field with given values."""
    return _concatenated(scenarios, [1] * len(scenarios))


def price_scenarios(scenarios: list[Scenario], owners: list[str]) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Lines of every scenario (``scenario`` = its index in the list) and the figures it needs, in batches."""
    frames, figures = [], {}
    wanted = ("pretrain_days_with_overheads", "sft_days", "preference_days", "evaluation_days", "price_per_gpu_hour",
              "dataset_bytes", "n_gpus", "spot_wait_days", "cluster_experiment_days", "cross_region_usd_per_gb")
    for name in wanted:
        figures[name] = np.zeros(len(scenarios))
    for indices, batch in _batches(scenarios):
        try:
            est = estimate(batch)
        except ScenarioError:
            for i in indices:  # find the workstream at fault, for a message that names it
                try:
                    estimate(scenarios[i])
                except ScenarioError as error:
                    raise ProgrammeError(owners[i], error.field, error.value, error.problem, error.allowed,
                                         error.allowed_zh) from None
            raise
        lines = est.lines
        lines = lines.assign(scenario=np.asarray(indices)[lines["scenario"].to_numpy()])
        frames.append(lines)
        for name in wanted:
            value = est.n_gpus if name == "n_gpus" else est.details[name]
            figures[name][indices] = np.broadcast_to(value, (len(indices),))
    lines = pd.concat(frames, ignore_index=True)
    # the price post-training is bought at (post_training_pricing), for a fine-tuning workstream's own GPUs
    sft = lines[(lines["stage"] == "sft") & (lines["item"] == "accelerator time")]
    figures["post_training_price_per_gpu_hour"] = np.array(figures["price_per_gpu_hour"], dtype=float)
    figures["post_training_price_per_gpu_hour"][sft["scenario"].to_numpy()] = sft["unit_cost_usd"].to_numpy()
    return lines, figures


def _concatenated(scenarios: list[Scenario], lengths: list[int]) -> list[tuple[list[int], Scenario]]:
    """Scenarios, each a batch of ``lengths[k]`` (or a single scenario when 1), joined end to end into as few batch
    Scenarios as their empty (auto) fields allow: (the scenarios joined, their batch), rows in order."""
    nullable = [name for name, f in fields().items() if f.nullable]
    groups: dict[tuple, list[int]] = {}
    for k, s in enumerate(scenarios):
        groups.setdefault(tuple(getattr(s, n) is None for n in nullable), []).append(k)
    out = []
    for members in groups.values():
        if len(members) == 1:
            out.append((members, scenarios[members[0]]))
            continue
        values = {}
        for name in fields():
            column = [getattr(scenarios[k], name) for k in members]
            if all(not isinstance(v, np.ndarray) for v in column) and all(v == column[0] for v in column):
                values[name] = column[0]
            else:
                values[name] = np.concatenate([np.broadcast_to(np.asarray(v, dtype=object if isinstance(v, str)
                                                                          else None), (lengths[k],))
                                               for v, k in zip(column, members)])
        total = sum(lengths[k] for k in members)
        if total > 1 and not any(isinstance(v, np.ndarray) for v in values.values()):
            # identical scenarios (two workstreams of one plan) are still as many batch elements: a single
            # scenario would price the first and leave the others without their lines
            values["params"] = np.full(total, float(values["params"]))
        out.append((members, Scenario(**values)))
    return out


# -- placing lines in months -----------------------------------------------------------------------------
def _weights(a: np.ndarray, b: np.ndarray, horizon: int) -> np.ndarray:
    """(instances, months) share of each instance's cost in each month: the overlap of [a, b) with the month,
    over b - a; a zero-length window is a point at a (its whole cost in the month holding a)."""
    starts = np.arange(horizon, dtype=float)[None, :]
    length = (b - a)[:, None]
    spread = np.clip(np.minimum(b[:, None], starts + 1) - np.maximum(a[:, None], starts), 0, None)
    point = (np.floor(a)[:, None] == starts).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(length > 1e-12, spread / np.where(length > 1e-12, length, 1.0), point)


def training_block(programme, workstreams, runs, lines, offsets, ends, horizon) -> pd.DataFrame:
    lines = lines[lines["stage"] != "inference"]
    known = {key: profile_of(*key) for key in set(zip(lines["stage"], lines["item"]))}
    profile, gpu_class = zip(*(known[key] for key in zip(lines["stage"], lines["item"]))) if len(lines) else ((), ())
    lines = lines.assign(profile=profile, gpu_hour_class=gpu_class)
    lines = lines[~lines["profile"].isin(("programme_staff", "fleet"))]  # paid by the programme month by month
    keep = np.array([stage in workstreams[i].stages for i, stage in zip(lines["scenario"], lines["stage"])], bool)
    lines = lines[keep] if len(lines) else lines
    rows = []  # one instance per (line, cycle)
    for i, w in enumerate(workstreams):
        mine = lines[lines["scenario"] == i]
        if not len(mine):
            continue
        retention, archive = float(runs[i].retention_months), float(runs[i].archive_months)
        # every cycle of the workstream at once: the lines tiled once per cycle, cycle-major
        cycles = np.array(w.cycle_starts())
        n, n_cycles = len(mine), len(cycles)
        t0 = np.repeat(cycles, n)
        # the trial-and-error runs have a window of their own (before the run on a committed cluster)
        window = ["experiments" if klass == "experiments" and st == "pretrain" else st
                  for st, klass in zip(mine["stage"], mine["gpu_hour_class"])]
        start = t0 + np.tile([offsets[i, st][0] for st in window], n_cycles)
        end = t0 + np.tile([offsets[i, st][1] for st in window], n_cycles)
        p = np.tile(mine["profile"].to_numpy(), n_cycles)
        release = t0 + ends[i]
        a = np.select([p == "start", p == "release", p == "retention_from_end", p == "archive"],
                      [t0, release, end, end + retention], start)
        b = np.select([p == "start", p == "release", p == "retention_from_start", p == "retention_from_end",
                       p == "archive"],
                      [t0, release, start + retention, end + retention, end + retention + archive], end)
        # a later cycle buys a share of its labels again; a release is evaluated in full every time
        annotation = (mine["category"].to_numpy() == "annotation") & (mine["stage"].to_numpy() != "evaluation")
        # the open weights a workstream starts from are downloaded and kept once, whatever its cycles
        base_weights = mine["item"].str.startswith("open weights").to_numpy()
        first = _redundancy_follows(mine, np.ones(n))
        later = _redundancy_follows(mine, np.where(annotation, w.reannotation_share, np.where(base_weights, 0.0, 1.0)))
        share = np.concatenate([first, *([later] * (n_cycles - 1))])
        counted = (mine["unit"].to_numpy() == "GPU-h") & (mine["gpu_hour_class"].to_numpy() != "none")
        gpu_hours = np.tile(np.where(counted, mine["quantity"].to_numpy(), 0.0), n_cycles) * share
        rows.append(pd.DataFrame({"a": a, "b": b, "cost": np.tile(mine["cost_usd"].to_numpy(), n_cycles) * share,
                                  "gpu_hours": gpu_hours, "workstream": w.name, "cycle": np.repeat(np.arange(1, n_cycles + 1), n),
                                  **{column: np.tile(mine[column].to_numpy(), n_cycles)
                                     for column in ("stage", "category", "item", "cost_type", "gpu_hour_class")},
                                  "tags": [tags for k in range(n_cycles) for tags in [w.tags_for(k + 1)] * n]}))
    if not rows:
        return pd.DataFrame()
    inst = pd.concat(rows, ignore_index=True)
    weights = _weights(inst["a"].to_numpy(), inst["b"].to_numpy(), horizon)
    return _spread(inst, weights)


def _redundancy_follows(lines: pd.DataFrame, share: np.ndarray) -> np.ndarray:
    """A stage's redundancy lines are factors on its other lines (of their cost type, each by its category's
    weight): when a cycle buys only a share of its annotation again, the redundancy shrinks with them."""
    category, stage, cost = lines["category"].to_numpy(), lines["stage"].to_numpy(), lines["cost_usd"].to_numpy()
    cost_type = lines["cost_type"].to_numpy()
    weighted = cost * contingency.line_weight(category, lines["item"].to_numpy())
    share = share.astype(float).copy()
    redundancy = category == "redundancy"
    for k in np.nonzero(redundancy)[0]:
        others = (stage == stage[k]) & ~redundancy & (cost_type == cost_type[k])
        full = weighted[others].sum()
        if full > 0:
            share[k] = (weighted[others] * share[others]).sum() / full
    return share


def _spread(inst: pd.DataFrame, weights: np.ndarray) -> pd.DataFrame:
    """Tidy rows (instance x month) where the weight is non-zero; the cost left outside the horizon in attrs."""
    cost = inst["cost"].to_numpy()
    beyond = float((cost * np.clip(1.0 - weights.sum(axis=1), 0.0, None)).sum())
    # a line of no cost and no GPU time in a month says nothing: left out
    r, m = np.nonzero(weights * ((cost != 0) | (inst["gpu_hours"].to_numpy() != 0))[:, None])
    out = inst.iloc[r].reset_index(drop=True).drop(columns=["a", "b", "cost"])
    out.insert(0, "month", m + 1)
    out["cost_usd"] = cost[r] * weights[r, m]
    out["gpu_hours"] = inst["gpu_hours"].to_numpy()[r] * weights[r, m]
    out = out[list(FRAME_COLUMNS) + ["tags"]]
    out.attrs["beyond"] = beyond
    return out


def live_shares(releases: np.ndarray, serve_months: float, legacy_share: float, lo: float, hi: float):
    """(live, carried) [month] of each version in the window [lo, hi): the time it is live, and the traffic it
    carries as time at the whole traffic. At each moment the newest live version carries (1 - legacy share) of the
    traffic and the older live ones share the rest (a version alone carries it all), so that the traffic served at
    a moment does not depend on the cadence or on how many versions are kept live: ``carried.sum()`` is the time
    in the window when any version is live."""
    ends = releases + serve_months
    cuts = np.unique(np.clip(np.concatenate([[lo, hi], releases, ends]), lo, hi))
    live_time, carried = np.zeros(len(releases)), np.zeros(len(releases))
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b - a <= 1e-12:
            continue
        live = np.nonzero((releases <= a + 1e-12) & (ends >= b - 1e-12))[0]
        if not len(live):
            continue
        live_time[live] += b - a
        if len(live) == 1:
            carried[live] += b - a
        else:
            newest = live.max()
            carried[live] += (b - a) * legacy_share / (len(live) - 1)
            carried[newest] += (b - a) * (1 - legacy_share) - (b - a) * legacy_share / (len(live) - 1)
    return live_time, carried


def serving_block(programme, workstreams, runs, ends, horizon, owners):
    """Each released version's serving month by month (see :func:`live_shares`): the newest live version carries
    (1 - legacy share) of the traffic, older live ones share the rest, and every live version pays its minimum
    replicas for the time it is live. A version is priced as a month of serving at the traffic it carries while
    live, times the share of the month it is live."""
    pairs, requests_of, served, guard_months = [], {}, np.zeros((horizon, 2)), []  # input and output tokens
    for i, w in enumerate(workstreams):
        if not w.serve_months:
            continue
        releases = np.array(w.cycle_starts()) + ends[i]
        first = releases[0]
        tokens_per_request = runs[i].input_tokens_per_request + runs[i].output_tokens_per_request
        d = hidden.defaults()
        filter_usd = float(hidden.content_filter_usd(1.0, tokens_per_request, d["content_filter_usd_per_1000_records"],
                                                     d["chars_per_record"], d["chars_per_token"])) \
            if programme.content_filtering == "api" else 0.0
        for month in range(1, horizon + 1):
            lo, hi = month - 1.0, float(month)
            live_time, carried = live_shares(releases, w.serve_months, w.legacy_traffic_share, lo, hi)
            live = np.nonzero(live_time > 1e-9)[0]
            if not len(live):
                continue
            traffic = runs[i].requests_per_day * (1 + w.traffic_growth_per_month) ** max(0.0, lo - np.floor(first))
            guard_months.append((i, month, traffic, float(carried.sum())))
            for k in live:
                requests = traffic * carried[k] / live_time[k]  # its traffic while live [requests/day]
                pairs.append((i, k, month, float(live_time[k]),
                              traffic * DAYS_PER_MONTH * carried[k] * filter_usd))
                requests_of.setdefault(i, []).append(requests)
                served[month - 1] += traffic * carried[k] * DAYS_PER_MONTH * np.array(
                    [runs[i].input_tokens_per_request, runs[i].output_tokens_per_request])
    if not pairs:
        return pd.DataFrame(), served
    # a month of serving per (version, month) at that version's traffic, in as few batches as the workstreams'
    # empty fields allow: the batch's columns are the workstreams' values repeated, not one Scenario per pair
    owner = np.array([p[0] for p in pairs])
    requests = np.array([r for i in requests_of for r in requests_of[i]])  # pairs were added workstream by workstream
    frames = []
    for members, _ in _batches([runs[i] for i in requests_of]):
        mine = np.isin(owner, [list(requests_of)[m] for m in members])
        index = np.nonzero(mine)[0]
        distinct, codes = np.unique(owner[index], return_inverse=True)
        values = {}
        for name in fields():
            per_run = [getattr(runs[i], name) for i in distinct]
            values[name] = per_run[0] if all(v == per_run[0] for v in per_run) else np.array(per_run)[codes]
        values.update(serving_months=1.0, requests_per_day=requests[index] if len(index) > 1 else requests[index[0]])
        try:
            lines = estimate(Scenario(**values)).lines
        except ScenarioError:
            for i in sorted(set(owner[index])):  # name the workstream at fault
                try:
                    estimate(runs[i].replace(serving_months=1.0, requests_per_day=max(requests_of[i])))
                except ScenarioError as error:
                    raise ProgrammeError(owners[i], error.field, error.value, error.problem, error.allowed,
                                         error.allowed_zh) from None
            raise
        lines = lines[(lines["stage"] == "inference") & ~lines["item"].str.startswith("idle committed capacity")]
        frames.append(lines.assign(scenario=index[lines["scenario"].to_numpy()]))
    lines = pd.concat(frames, ignore_index=True)
    index = lines["scenario"].to_numpy()
    pair = np.array([p[:3] for p in pairs])
    fraction = np.array([p[3] for p in pairs])[index]
    # a served open model is downloaded once per version: in the first month that version is live
    first_month = {}
    for i, k, month, *_ in pairs:
        first_month.setdefault((i, k), month)
    once = np.array([first_month[(i, k)] == month for i, k, month, *_ in pairs])[index]
    fraction = np.where(lines["item"].to_numpy() == "open weights download", once.astype(float), fraction)
    gpu_class = np.array([profile_of("inference", item)[1] for item in lines["item"]])
    ws = pair[index, 0]
    out = pd.DataFrame({"month": pair[index, 2], "workstream": [workstreams[i].name for i in ws],
                        "cycle": pair[index, 1] + 1, "stage": "inference", "category": lines["category"].to_numpy(),
                        "item": lines["item"].to_numpy(), "cost_type": lines["cost_type"].to_numpy(),
                        "cost_usd": lines["cost_usd"].to_numpy() * fraction,
                        "gpu_hours": np.where(lines["unit"].to_numpy() == "GPU-h", lines["quantity"].to_numpy(), 0.0) * fraction,
                        "gpu_hour_class": gpu_class,
                        "tags": [workstreams[i].tags_for(k + 1) for i, k in zip(ws, pair[index, 1])]})
    filtering = pd.DataFrame({"month": pair[:, 2], "workstream": [workstreams[i].name for i in pair[:, 0]],
                              "cycle": pair[:, 1] + 1, "stage": "inference", "category": "security",
                              "item": "content filtering of prompts and responses", "cost_type": "elastic",
                              "cost_usd": [p[4] for p in pairs], "gpu_hours": 0.0, "gpu_hour_class": "none",
                              "tags": [workstreams[i].tags_for(k + 1) for i, k in pair[:, :2]]})
    out = pd.concat([out, filtering, *([guard_block(workstreams, runs, guard_months, owners)]
                                       if programme.content_filtering == "self_hosted" else [])], ignore_index=True)
    return out[out["cost_usd"] != 0].reset_index(drop=True), served


#: The guard model's running costs on owned hardware (zero when rented: the price includes them).
GUARD_RUNNING = {"electricity": "content safety: guard model electricity",
                 "data-centre operations": "content safety: guard model operations",
                 "data-centre space": "content safety: guard model space"}


def guard_block(workstreams, runs, guard_months, owners) -> pd.DataFrame:
    """Content safety on the programme's own GPUs: a guard model (``guard_params``, Llama Guard 3 8B by default)
    served beside each workstream's versions, on the same GPU bought the same way, sized by the serving roofline for
    the month's whole traffic (it reads each prompt, and each response in its conversation, and answers in a few
    tokens), for the share of the month any version is live."""
    d = hidden.defaults()
    owners_of, scenarios, rows_of = [], [], []
    for i in sorted({g[0] for g in guard_months}):
        mine = [g for g in guard_months if g[0] == i]
        run = runs[i]
        requests = np.array([g[2] for g in mine])
        guard = dict(params=d["guard_params"], active_params=None, d_model=None, n_layers=None, n_kv_heads=None,
                     serving_tensor_parallel=None, serving_tokens_per_second_per_gpu=None, serving_months=1.0,
                     input_tokens_per_request=float(hidden.guard_input_tokens(run.input_tokens_per_request,
                                                                              run.output_tokens_per_request)),
                     output_tokens_per_request=d["guard_output_tokens"], prefix_cache_hit_rate=0.0,
                     requests_per_day=requests if len(requests) > 1 else float(requests[0]))
        owners_of.append(i)
        scenarios.append(run.replace(**guard))
        rows_of.append(mine)
    frames = []
    # every workstream's guard months in as few engine batches as their fields allow (one, usually)
    for members, batch in _concatenated(scenarios, [len(m) for m in rows_of]):
        try:
            lines = estimate(batch).lines
        except ScenarioError:
            for k in members:  # name the workstream whose guard model cannot be served
                try:
                    estimate(scenarios[k])
                except ScenarioError as own:
                    raise ProgrammeError(owners[owners_of[k]], "content_filtering", "self_hosted",
                                         f"the guard model cannot be served ({own.field}: {own.problem})",
                                         "content_filtering = api or none, or another serving GPU") from None
            raise
        # the guard's GPUs, and on owned hardware the electricity and operations staff they need
        inference = lines["stage"] == "inference"
        replicas = inference & lines["item"].str.startswith("serving replicas")
        lines = lines[replicas | (inference & lines["item"].isin(list(GUARD_RUNNING)))]
        gpu = lines["item"].str.startswith("serving replicas").to_numpy()
        guard_rows = [(owners_of[k], g) for k in members for g in rows_of[k]]
        row = lines["scenario"].to_numpy()
        i_of = np.array([r[0] for r in guard_rows])[row]
        live = np.array([r[1][3] for r in guard_rows])[row]
        frames.append(pd.DataFrame({
            "month": np.array([r[1][1] for r in guard_rows])[row],
            "workstream": [workstreams[i].name for i in i_of], "cycle": 0, "stage": "inference",
            "category": "security",
            "item": np.where(gpu, "content safety: guard model on own GPUs",
                             lines["item"].map(GUARD_RUNNING).fillna("").to_numpy()),
            "cost_type": lines["cost_type"].to_numpy(), "cost_usd": lines["cost_usd"].to_numpy() * live,
            "gpu_hours": np.where(gpu, lines["quantity"].to_numpy() * live, 0.0),
            "gpu_hour_class": np.where(gpu, "serving", "none"), "tags": [workstreams[i].tags_for(1) for i in i_of]}))
    if not frames:
        return pd.DataFrame(columns=[*FRAME_COLUMNS, "tags"])
    out = pd.concat(frames, ignore_index=True)
    return out.groupby(["month", "workstream", "cycle", "stage", "category", "item", "cost_type", "gpu_hour_class"],
                       as_index=False).agg(cost_usd=("cost_usd", "sum"), gpu_hours=("gpu_hours", "sum"),
                                           tags=("tags", "first"))[[*FRAME_COLUMNS, "tags"]]


def staff_block(programme, horizon) -> pd.DataFrame:
    rows = []
    for s in programme.staff:
        for month in range(s.start_month, (s.end_month or horizon) + 1):
            pay = s.fte * s.usd_per_month
            for category, item, cost in (("staff", "programme staff", pay),
                                         ("redundancy", "engineering redundancy on staff",
                                          pay * (s.redundancy_factor - 1.0))):
                if cost or category == "staff":
                    rows.append({"month": month, "workstream": s.name, "cycle": 0, "stage": "programme",
                                 "category": category, "item": item, "cost_type": "fixed", "cost_usd": cost,
                                 "gpu_hours": 0.0, "gpu_hour_class": "none", "tags": dict(s.tags)})
    return pd.DataFrame(rows)


def hidden_block(programme, workstreams, runs, figures, offsets, ends, horizon) -> pd.DataFrame:
    """Data cleaning and cross-region reads per pre-training cycle, debug environments every active month,
    security and compliance every month (see :mod:`workbench.formulas.hidden` and data/programme_defaults.csv)."""
    d = hidden.defaults()
    rows = []

    beyond = 0.0

    def add(month, w, cycle, stage, category, item, cost_type, cost, gpu_hours=0.0, klass="none", tags=None):
        nonlocal beyond
        if month > horizon:  # the work of a cycle after the horizon: in the amount beyond it
            beyond += float(cost)
        elif 1 <= month and (cost or gpu_hours):
            rows.append({"month": month, "workstream": w, "cycle": cycle, "stage": stage, "category": category,
                         "item": item, "cost_type": cost_type, "cost_usd": float(cost), "gpu_hours": float(gpu_hours),
                         "gpu_hour_class": klass, "tags": tags or {}})

    for i, w in enumerate(workstreams):
        starts = w.cycle_starts()
        if "pretrain" in w.stages:
            raw = hidden.raw_bytes(figures["dataset_bytes"][i], w.hidden("cleaning_survive_share"))
            core_hours = float(hidden.cleaning_core_hours(raw, w.hidden("cleaning_core_hours_per_tb")))
            # at the cross-region price of the workstream's region (its field, else data/region_prices.csv)
            read_usd = float(hidden.cross_region_read_usd(figures["dataset_bytes"][i],
                                                          figures["cross_region_usd_per_gb"][i]))
            for k, t0 in enumerate(starts):
                month = int(np.floor(t0)) + 1  # cleaned before the run starts
                add(month, w.name, k + 1, "pretrain", "data_processing", "data cleaning and deduplication", "elastic",
                    core_hours * d["cpu_usd_per_core_hour"], tags=w.tags_for(k + 1))
                # a workstream whose scenario names its data's region has the read as a line of its own estimate
                if w.data_in_other_region and runs[i].data_region is None:
                    a, b = t0 + offsets[i, "pretrain"][0], t0 + offsets[i, "pretrain"][1]
                    weights = _weights(np.array([a]), np.array([b]), horizon)[0]
                    beyond += read_usd * max(0.0, 1 - weights.sum())
                    for m in np.nonzero(weights)[0]:
                        add(m + 1, w.name, k + 1, "pretrain", "network", "corpus read across regions", "elastic",
                            read_usd * weights[m], tags=w.tags_for(k + 1))
        gpus = w.hidden("debug_gpus")
        if gpus and w.stages:  # development environments are for training work; a serving workstream has none
            release = None if w.debug_never_released else w.hidden("debug_auto_release_hours")
            held, _ = hidden.debug_gpu_hours(gpus, w.hidden("debug_sessions_per_month"), w.hidden("debug_session_hours"),
                                             release)
            last = max(int(np.ceil(starts[-1] + ends[i])), w.start_month)
            cost_type = "fixed" if w.debug_never_released else "elastic"
            # a workstream's debug GPUs are bought as its own training is: pre-training's way, or post-training's
            price = figures["price_per_gpu_hour" if "pretrain" in w.stages else "post_training_price_per_gpu_hour"][i]
            for month in range(w.start_month, last + 1):
                cycle = sum(1 for t0 in starts if t0 < month)
                add(month, w.name, max(cycle, 1), "development", "debug", "development and debug environments",
                    cost_type, float(held) * price, float(held), "debug",
                    tags=w.tags_for(max(cycle, 1)))
    security = programme.security_usd_per_month
    security = d["security_usd_per_month"] if security is None else security
    for month in range(1, programme.horizon_months + 1):  # the programme's own months (``horizon`` may reach past)
        add(month, PROGRAMME_LINES, 0, "programme", "security", "security and compliance (identity, audit logs, masking)",
            "fixed", security)
    out = pd.DataFrame(rows, columns=[*FRAME_COLUMNS, "tags"])
    out.attrs["beyond"] = beyond
    return out


def trained_tokens(workstreams: tuple[Workstream, ...], runs, offsets, horizon) -> np.ndarray:
    """Tokens trained per month: pre-training tokens and fine-tuning tokens, spread over their stages."""
    a, b, tokens = [], [], []
    for i, w in enumerate(workstreams):
        s = runs[i]
        per_stage = {"pretrain": s.tokens, "sft": s.sft_examples * s.sft_tokens_per_example * s.sft_epochs,
                     "preference": s.preference_pairs * s.preference_tokens_per_pair * s.reward_model_epochs}
        for t0 in w.cycle_starts():
            for stage, count in per_stage.items():
                if stage in w.stages and count:
                    a.append(t0 + offsets[i, stage][0])
                    b.append(t0 + offsets[i, stage][1])
                    tokens.append(count)
    if not tokens:
        return np.zeros(horizon)
    return (np.array(tokens)[:, None] * _weights(np.array(a), np.array(b), horizon)).sum(axis=0)
