"""A programme's fleets: GPUs committed for a term (reserved for 1 or 3 years, or owned), paid every month of
the term whether busy or idle.

Each month, the training GPU-hours of the workstreams whose GPU matches a fleet (what they buy their main way:
pre-training, and post-training and experiments when bought the same way) run on the fleet first, in the order the
fleets are listed; those hours are priced at the fleet's price, and what does not fit stays as each workstream buys
it (a warning names the month). The hours of the term left unused are a line of their own, *idle committed
capacity*, and the commitment's months after the horizon are in the amount beyond it.

A programme that lists no fleet and whose workstreams buy their cluster (or post-training, experiments or serving
base) reserved or self-hosted gets one fleet per (GPU, way of buying, what it carries): as many GPUs as its
workstreams hold at once, from the first month they use it, for as many whole terms as the GPU-hours they use
(a reservation is not bought again by every cycle). Hours that do not fit on any fleet are rented on demand when
the workstream buys its cluster reserved or owned. The base's ``commitment_other_use_share`` is the share of idle
hours other work absorbs.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..plan import contingency
from ..plan.estimate import estimate
from .programme import FLEET_PRICING, Fleet, ProgrammeError
from ..plan.scenario import ScenarioError

HOURS_PER_MONTH = 8766.0 / 12
#: GPU-hour classes a fleet carries: its workstreams' training time and debug environments (not serving).
FLEET_CLASSES = ("productive", "lost", "experiments", "debug")
POST_TRAINING = ("sft", "preference", "evaluation")


def _eligible(frame: pd.DataFrame, runs, index_of: dict) -> dict[str, np.ndarray]:
    """Rows a fleet can carry, by what they are: ``training`` (GPU time and debug environments bought the
    workstream's main way, its ``pricing``), ``post_training`` and ``experiments`` bought another way, and
    ``serving`` (the always-on base replicas, and an owned fleet's autoscaled ones, sized for the peak)."""
    known = frame["workstream"].isin(list(index_of)).to_numpy()  # not staff, fleets or the programme's own lines
    i = frame["workstream"].map(index_of).fillna(0).to_numpy(dtype=int)
    post_same = np.array([r.post_training_pricing in ("same", r.pricing) for r in runs])
    experiments_same = np.array([r.experiment_pricing in ("same", r.pricing) for r in runs])
    owned = np.array([r.pricing == "self_hosted" for r in runs])
    stage, klass = frame["stage"].to_numpy(), frame["gpu_hour_class"].to_numpy()
    some = known & (frame["gpu_hours"].to_numpy() > 0)
    cluster = some & np.isin(klass, FLEET_CLASSES) & np.isin(stage, ("pretrain", *POST_TRAINING, "development"))
    experiments = cluster & (klass == "experiments")
    post = cluster & np.isin(stage, POST_TRAINING) & ~experiments
    training = cluster & np.where(experiments, experiments_same[i], True) & np.where(post, post_same[i], True)
    item = frame["item"].to_numpy()
    # always-on serving: the base replicas and the guard model beside them (owned GPUs carry the peaks too)
    always_on = (item == "serving replicas (base)") | (item == "content safety: guard model on own GPUs")
    serving = some & (klass == "serving") & (always_on | owned[i])
    side = {"post_training": post & ~post_same[i], "experiments": experiments & ~experiments_same[i]}
    return {"training": training, **side, "side": side["post_training"] | side["experiments"], "serving": serving}


def stage_mode(run, purpose: str) -> str:
    """How a workstream buys what a fleet of ``purpose`` would carry."""
    field = {"training": None, "post_training": "post_training_pricing", "experiments": "experiment_pricing",
             "serving": "serving_pricing"}[purpose]
    mode = run.pricing if field is None else getattr(run, field)
    return run.pricing if mode == "same" else mode


def implicit_fleets(programme, runs, figures, frame, horizon, only=None) -> list[tuple[Fleet, list[int], str]]:
    """When the programme lists no fleet: one per (GPU, committed way of buying, what it carries) of the
    workstreams, holding as many GPUs as they hold at once, from their first month of use, for as many whole
    terms as the GPU-hours they use; rented by the month, one per stretch of consecutive months in use."""
    life = programme.base_scenario.useful_life_years
    names = {w.name for w in programme.workstreams}
    index_of = {w.name: i for i, w in enumerate(programme.workstreams)}
    masks = _eligible(frame, runs, index_of)
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, run in enumerate(runs):
        if only is not None and i not in only:
            continue
        together = stage_mode(run, "post_training") == stage_mode(run, "experiments")
        for purpose in ("training", "post_training", "experiments", "serving"):
            mode = stage_mode(run, purpose)
            if mode in FLEET_PRICING and (purpose in ("training", "serving") or mode != run.pricing):
                # post-training and experiments bought the same other way share one fleet (as one run's do)
                key = (run.gpu, mode, "side" if together and purpose in ("post_training", "experiments") else purpose)
                if i not in groups.setdefault(key, []):
                    groups[key].append(i)
    out = []
    for (gpu, mode, purpose), members in groups.items():
        mask = masks[purpose] & frame["workstream"].isin([programme.workstreams[i].name for i in members]).to_numpy()
        mine = frame[mask]
        if not len(mine):
            continue
        parts = [mine]
        if mode == "monthly" and purpose != "serving":
            # rented month by month: each stretch of months in use is its own rental; a month without use is
            # handed back (a reservation's or a purchase's term cannot be)
            used = sorted(set(mine.loc[mine["gpu_hours"] > 0, "month"].astype(int))) or [int(mine["month"].min())]
            stretches = [[used[0]]]
            for month in used[1:]:
                if month == stretches[-1][-1] + 1:
                    stretches[-1].append(month)
                else:
                    stretches.append([month])
            parts = [mine[mine["month"].between(a[0], a[-1])] for a in stretches]
        for part in parts:
            fleet = _implicit_fleet(programme, figures, part, gpu, mode, purpose, members, names, horizon, life,
                                    index_of, several=len(parts) > 1)
            names.add(fleet.name)
            out.append((fleet, members, purpose))
    return out


def _implicit_fleet(programme, figures, mine, gpu, mode, purpose, members, names, horizon, life, index_of,
                    several=False) -> Fleet:
    """One implicit fleet for the rows ``mine`` of ``members`` (see :func:`implicit_fleets`)."""
    if purpose != "serving":  # the clusters held at once, in any month (debug environments aside)
        held = mine[mine["gpu_hour_class"] != "debug"].groupby(["month", "workstream"]).size().reset_index()
        held["gpus"] = held["workstream"].map(lambda name: figures["n_gpus"][index_of[name]])
        count = held.groupby("month")["gpus"].sum().max() if len(held) else 1
    else:  # the base replicas' GPUs while some version is live, in the busiest month
        live = served_share(programme, figures, members, horizon)
        used = mine.groupby("month")["gpu_hours"].sum().reindex(range(1, horizon + 1), fill_value=0.0).to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            count = float(np.max(np.where(live > 1e-6, used / (HOURS_PER_MONTH * np.where(live > 1e-6, live, 1.0)),
                                          0.0)))
    start = int(mine["month"].min())
    if purpose == "serving":  # from the moment the first version goes live, not from the start of its month
        start = float(first_live(programme, members, figures)) + 1.0
    term = Fleet("x", gpu, 1, mode).term(life)
    what = {"training": "cluster", "side": "post-training and experiments"}.get(purpose, purpose.replace("_", "-"))
    name = f"{gpu} {what}, {mode.replace('_', ' ')}"
    if several:
        first, last = int(mine["month"].min()), int(mine["month"].max())
        name += f", month {first}" if first == last else f", months {first}-{last}"
    while name in names:
        name += " (fleet)"
    count = max(1, int(math.ceil(count - 1e-6)))
    # whole terms for the GPU-hours used, as a single run's commitment counts them (serving 12 months from
    # mid-month is one year, not two); use past the last term is rented on demand
    terms = max(1, math.ceil(float(mine["gpu_hours"].sum()) / (count * term * HOURS_PER_MONTH) - 1e-9))
    if mode == "monthly":  # rented month by month: held through the stretch of months it is used
        if purpose == "serving":  # from the first version's going live to the last one's end
            windows = _live_windows(programme, members, figures)
            span = max(b for _, b in windows) - min(a for a, _ in windows) if windows else 0.0
        else:  # training fills whole months of the timeline
            span = int(mine["month"].max()) - int(math.floor(start + 1e-9)) + 1
        terms = max(terms, math.ceil(span - 1e-9))
    return Fleet(name=name, gpu=gpu, count=count, pricing=mode, start_month=start, term_months=term * terms)


def _live_windows(programme, members, figures) -> list[tuple[float, float]]:
    """[start, end) of each version's serving [months from the programme's start]."""
    out = []
    for i in members:
        w = programme.workstreams[i]
        if w.serve_months > 0:
            out += [(t + figures["cycle_end_months"][i], t + figures["cycle_end_months"][i] + w.serve_months)
                    for t in w.cycle_starts()]
    return out


def first_live(programme, members, figures) -> float:
    """When the first version of ``members`` goes live [months from the programme's start]."""
    windows = _live_windows(programme, members, figures)
    return min(a for a, _ in windows) if windows else 0.0


def served_share(programme, figures, members, horizon) -> np.ndarray:
    """The share of each month (1 to the horizon) in which some version of ``members`` is live [fraction]."""
    windows = sorted(_live_windows(programme, members, figures))
    merged: list[list[float]] = []
    for a, b in windows:  # the union of the live windows
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    months = np.arange(horizon, dtype=float)
    share = np.zeros(horizon)
    for a, b in merged:
        share += np.clip(np.minimum(b, months + 1) - np.maximum(a, months), 0.0, 1.0)
    return np.minimum(share, 1.0)


def fleet_price(programme, fleet: Fleet, runs, figures, members) -> float:
    """The fleet's price per GPU-hour [USD/GPU-h]: its workstreams' own where they buy it the same way (from the
    same provider and region, when the fleet names them), otherwise the base scenario's GPU bought the fleet's way,
    from the fleet's provider and region if it names them (data/prices.csv, or the amortised purchase)."""
    where = {key: getattr(fleet, key) for key in ("provider", "region") if getattr(fleet, key) is not None}
    for i in members:
        if (runs[i].pricing == fleet.pricing and runs[i].gpu == fleet.gpu
                and all(getattr(runs[i], key) == value for key, value in where.items())):
            return float(figures["price_per_gpu_hour"][i])
    same = {name: "same" for name in ("experiment_pricing", "post_training_pricing", "serving_pricing",
                                      "serving_peak_pricing")}
    if "provider" in where and "region" not in where:
        where["region"] = None  # another provider: not the base's region
    try:
        return float(np.ravel(estimate(programme.base_scenario.replace(
            gpu=fleet.gpu, pricing=fleet.pricing, **same, **where)).details["price_per_gpu_hour"])[0])
    except ScenarioError as error:
        # the fleet has no such field: the base's, bought the fleet's way, is what to change
        raise ProgrammeError(f"fleet {fleet.name!r}", error.field if error.field in where else f"base.{error.field}",
                             error.value, error.problem, error.allowed,
                             error.allowed_zh) from None


def capacity_gpu_hours(fleet: Fleet, term: int, months: np.ndarray) -> np.ndarray:
    """GPU-hours the fleet can deliver in each month (1-based) [GPU-h]."""
    a, b = fleet.start_month - 1, fleet.start_month - 1 + term
    overlap = np.clip(np.minimum(months, b) - np.maximum(months - 1, a), 0, 1)
    return fleet.count * HOURS_PER_MONTH * overlap


#: The stages whose electricity and operations lines follow the GPU-hours a fleet of each purpose carries.
RUNNING_STAGES = {"training": ("pretrain", *POST_TRAINING), "post_training": POST_TRAINING, "side": POST_TRAINING,
                  "serving": ("inference",), "all": ("pretrain", *POST_TRAINING, "inference")}
RUNNING_ITEMS = ("electricity", "data-centre operations", "data-centre space", "electricity (experiments)",
                 "data-centre operations (experiments)", "data-centre space (experiments)",
                 "content safety: guard model electricity", "content safety: guard model operations",
                 "content safety: guard model space")


def committed(runs) -> bool:
    """Whether any workstream buys some of its GPUs for a term (reserved or owned)."""
    return any(stage_mode(run, purpose) in FLEET_PRICING for run in runs
               for purpose in ("training", "post_training", "experiments", "serving"))


def _fleets(programme, runs, figures, frame, horizon) -> list[tuple[Fleet, list[int], str, bool]]:
    """(fleet, the workstreams it may carry, what it carries, implicit?): the listed fleets carry every workstream
    whose GPU matches, in the order listed; workstreams of a GPU no fleet lists get implicit fleets for what they
    commit to (as a programme without fleets does)."""
    listed = [(f, [i for i, r in enumerate(runs) if r.gpu == f.gpu], "all", False) for f in programme.fleets]
    covered = {f.gpu for f in programme.fleets}
    rest = [i for i, r in enumerate(runs) if r.gpu not in covered]
    implicit = [(f, members, purpose, True) for f, members, purpose in
                implicit_fleets(programme, runs, figures, frame, horizon, only=rest)] if rest else []
    return listed + implicit


def apply(programme, runs, figures, frame: pd.DataFrame, horizon: int, cut: int | None = None):
    """The frame with the fleets' hours priced at their price and their idle hours as lines, the commitment's cost
    after the frame's last month [USD], a table of fleet months, a summary per fleet, and warnings (key, values).
    ``horizon`` is the frame's last month (the programme's horizon, or later when the work and the fleets' terms
    run past it); ``cut`` is the programme's horizon, which the summaries and warnings speak of."""
    cut = horizon if cut is None else cut
    share = float(programme.base_scenario.commitment_other_use_share)
    index_of = {w.name: i for i, w in enumerate(programme.workstreams)}
    if not programme.fleets and not committed(runs):
        return frame, 0.0, pd.DataFrame(), [], []  # bought by the hour throughout: nothing committed
    fleets = _fleets(programme, runs, figures, frame, horizon)
    if not fleets or not len(frame):
        return frame, 0.0, pd.DataFrame(), [], []
    frame = frame.copy()
    eligible = _eligible(frame, runs, index_of)
    eligible["all"] = eligible["training"] | eligible["serving"]
    cost = frame["cost_usd"].to_numpy(dtype=float).copy()
    month_of = frame["month"].to_numpy()
    hours = frame["gpu_hours"].to_numpy().astype(float)
    out = {"rows": [], "fleet_months": [], "summaries": [], "warnings": [], "beyond": 0.0}
    keys = dict.fromkeys((f.gpu, purpose, f.pricing if implicit else "") for f, _, purpose, implicit in fleets)
    for key in keys:
        mine = [(f, m) for f, m, purpose, implicit in fleets if (f.gpu, purpose, f.pricing if implicit else "") == key]
        gpu, purpose = key[0], key[1]
        members = sorted({i for _, m in mine for i in m})
        names = [programme.workstreams[i].name for i in members]
        on = eligible[purpose] & frame["workstream"].isin(names).to_numpy()
        demand = np.bincount(month_of[on] - 1, weights=hours[on], minlength=horizon)[:horizon].astype(float)
        carried = _carry(programme, mine, runs, figures, demand, horizon, cut, share, implicit=bool(key[2]),
                         purpose=purpose, out=out)
        # the fleets' hours at their price; the rest as the workstreams buy it
        with np.errstate(invalid="ignore", divide="ignore"):
            fraction = np.where(demand > 0, carried["hours"] / np.where(demand > 0, demand, 1.0), 0.0)
            price_bar = np.where(carried["hours"] > 0, carried["usd"] / np.where(carried["hours"] > 0,
                                                                                carried["hours"], 1.0), 0.0)
            owned_share = np.where(demand > 0, carried["owned_hours"] / np.where(demand > 0, demand, 1.0), 1.0)
        f, p = fraction[month_of[on] - 1], price_bar[month_of[on] - 1]  # noqa: E741
        # what does not fit on the fleets is bought as the workstream buys that stage; a committed way of buying
        # commits to nothing beyond the fleets, so those hours are rented on demand
        rented = _on_demand_price(programme, runs, gpu, index_of, frame.loc[on], cost[on], hours[on])
        new = (1 - f) * rented + f * p * hours[on]
        delta = new - cost[on]
        cost[on] = new
        _follow_redundancy(frame, cost, on, delta, runs, index_of)
        _running_follows_owner(programme, runs, frame, cost, names, purpose, gpu, owned_share, carried, demand,
                               eligible, out)
        remaining = demand - carried["hours"]
        _monthly_beyond_fleets(programme, runs, figures, frame.loc[on], gpu, index_of, remaining,
                               carried["capacity"], out)
        over = (remaining > 1e-6) & (np.arange(1, horizon + 1) <= cut)
        if over.any():
            out["warnings"].append(("tw_fleet_overflow", {"gpu": gpu, "month": int(np.argmax(over)) + 1,
                                                          "gpu_hours": float(remaining[over].sum())}))
    frame["cost_usd"] = cost
    if out["rows"]:
        frame = pd.concat([frame, pd.DataFrame(out["rows"])], ignore_index=True)
    return frame, out["beyond"], pd.DataFrame(out["fleet_months"]), out["summaries"], out["warnings"]


def _carry(programme, mine, runs, figures, demand, horizon, cut, share, implicit, purpose, out) -> dict:
    """Fill the demand of each month (1 to ``horizon``) from ``mine``'s fleets in order: the hours each carries at its
    price, its idle hours as lines, its months, its summary. Returns the hours carried, their cost, and the hours
    carried by owned fleets, by month."""
    life = programme.base_scenario.useful_life_years
    months = np.arange(1, horizon + 1)
    inside = months <= cut
    remaining = demand.copy()
    carried = {"hours": np.zeros(horizon), "usd": np.zeros(horizon), "owned_hours": np.zeros(horizon),
               "capacity": np.zeros(horizon)}
    for fleet, fleet_members in mine:
        term = fleet.term(life)
        price = fleet_price(programme, fleet, runs, figures, fleet_members)
        capacity = capacity_gpu_hours(fleet, term, months)
        covered = np.minimum(capacity, remaining)
        remaining -= covered
        carried["hours"] += covered
        carried["capacity"] += capacity
        carried["usd"] += covered * price
        idle = (capacity - covered) * (1.0 - share)
        owned = _owned_running(programme, fleet.gpu) if fleet.pricing == "self_hosted" else None
        if owned is not None:
            carried["owned_hours"] += covered
        after = fleet.count * HOURS_PER_MONTH * max(0.0, fleet.start_month - 1 + term - horizon) * (1.0 - share)
        out["beyond"] += after * (price + (owned["idle_usd_per_gpu_hour"] + owned["ops_usd_per_gpu_hour"]
                                           + owned["space_usd_per_gpu_hour"] if owned is not None else 0.0))
        for m in np.nonzero(capacity > 0)[0]:
            _idle_rows(out["rows"], fleet, m + 1, idle[m], price, owned)
            out["fleet_months"].append({
                "fleet": fleet.name, "month": m + 1, "capacity_gpu_hours": capacity[m], "used_gpu_hours": covered[m],
                "idle_usd": idle[m] * price,
                # owned: the straight-line depreciation booked this month (the cash view replaces it with the
                # purchases and the resales, Timeline.cash), what running it cost, and renting its busy hours
                "depreciation_usd": (covered[m] + idle[m]) * price if owned is not None else 0.0,
                "running_usd": float(_running_usd(owned, covered[m], capacity[m])) if owned is not None else 0.0,
                "rent_usd": covered[m] * owned["rent_usd_per_gpu_hour"] if owned is not None else 0.0})
        in_horizon = float(capacity[inside].sum())
        used = float(covered[inside].sum())
        idle_usd = float(idle[inside].sum()) * price
        out["summaries"].append({
            "name": fleet.name, "gpu": fleet.gpu, "count": fleet.count, "pricing": fleet.pricing,
            "provider": fleet.provider, "region": fleet.region,
            # the month it starts in (an implicit serving fleet starts when the first version goes live)
            "start_month": int(math.floor(fleet.start_month + 1e-9)), "term_months": term, "implicit": implicit,
            "carries": purpose,
            "price_usd_per_gpu_hour": price,
            "committed_usd": fleet.count * HOURS_PER_MONTH * term * price,
            "in_horizon_usd": float((covered + idle)[inside].sum()) * price,
            "after_horizon_usd": float((covered + idle)[~inside].sum()) * price + after * price,
            "idle_usd": idle_usd, "utilisation": used / in_horizon if in_horizon > 0 else None,
            **(_ownership_summary(programme, fleet, price, covered[inside], capacity[inside], owned, term)
               if owned is not None else {"purchases": [], "resales": [], "purchase_usd": None, "resale_usd": None,
                                          "resale_month": None, "break_even_months": None,
                                          "rent_usd_per_gpu_hour": None})})
        if in_horizon > 0 and used / in_horizon < 0.5 and idle_usd > 0:
            out["warnings"].append(("tw_fleet_idle", {"name": fleet.name, "share": 1 - used / in_horizon,
                                                      "amount_usd": idle_usd}))
    return carried


def _monthly_beyond_fleets(programme, runs, figures, rows: pd.DataFrame, gpu, index_of, remaining, capacity,
                           out) -> None:
    """Work the fleets do not hold is bought as its workstream buys it, on demand where that committed; a provider
    that rents the GPU only by the month has no hourly price, so such work holds GPUs for the whole month: as many
    as its workstreams' clusters hold beyond the fleets' GPUs that month, and at least enough for its hours (a
    debug environment's few GPUs); the rest of the month is a line of idle rented capacity."""
    from ..reference.prices import price_per_gpu_hour, providers_for
    if not (remaining > 1e-6).any():
        return
    monthly = {w for w in set(rows["workstream"]) if stage_mode(runs[index_of[w]], "training") == "monthly"}
    base = programme.base_scenario
    if not monthly or base.provider in providers_for(gpu, "on_demand"):  # the cheap test first: most plans
        return
    try:
        price = float(np.ravel(price_per_gpu_hour(gpu, "monthly", base.provider, base.region or "",
                                                  base.cny_per_usd)[0])[0])
    except (ScenarioError, KeyError, ValueError):
        return
    mine = rows[rows["workstream"].isin(monthly) & (rows["gpu_hours"] > 0)]
    for month, part in mine.groupby("month"):
        m = int(month) - 1
        left = float(remaining[m]) if m < len(remaining) else 0.0
        if left <= 1e-6:
            continue
        clusters = set(part.loc[part["gpu_hour_class"] != "debug", "workstream"])
        held = sum(float(figures["n_gpus"][index_of[name]]) for name in clusters)
        on_fleets = float(capacity[m]) / HOURS_PER_MONTH if m < len(capacity) else 0.0
        gpus = max(math.ceil(left / HOURS_PER_MONTH - 1e-9), math.ceil(held - on_fleets - 1e-9))
        fleet = Fleet(name=f"{gpu} rented by the month beyond the fleets", gpu=gpu, count=max(1, gpus),
                      pricing="monthly", start_month=int(month), term_months=1)
        _idle_rows(out["rows"], fleet, int(month), max(gpus * HOURS_PER_MONTH - left, 0.0), price, None)


def _idle_rows(rows, fleet, month, idle, price, owned) -> None:
    """A fleet's idle hours in a month as lines: the GPUs, and owned servers' electricity and operations."""
    if idle <= 0:
        return
    parts = [("compute", "idle committed capacity", price, idle, "idle")]
    if owned is not None:  # owned servers draw power, are operated and take their space idle too
        parts += [("power", "idle committed capacity: electricity", owned["idle_usd_per_gpu_hour"], 0.0, "none"),
                  ("staff", "idle committed capacity: data-centre operations", owned["ops_usd_per_gpu_hour"], 0.0,
                   "none"),
                  ("compute", "idle committed capacity: data-centre space", owned["space_usd_per_gpu_hour"], 0.0,
                   "none")]
    for category, item, usd, gpu_hours, klass in parts:
        rows.append({"month": month, "workstream": fleet.name, "cycle": 0, "stage": "fleet", "category": category,
                     "item": item, "cost_type": "fixed", "cost_usd": idle * usd, "gpu_hours": gpu_hours,
                     "gpu_hour_class": klass, "tags": dict(fleet.tags)})


def _running_follows_owner(programme, runs, frame, cost, names, purpose, gpu, owned_share, carried, demand,
                           eligible, out) -> None:
    """Electricity and operations staff are paid by whoever owns the GPUs: a self-hosted workstream's lines are
    kept for the hours owned fleets carry and dropped for those rented or reserved; a rented workstream's hours on
    an owned fleet gain them (at the base's busy electricity and operations per GPU-hour)."""
    stages = RUNNING_STAGES.get(purpose)
    if stages is None:  # experiments bought another way: the run's lines are not theirs
        return
    index_of = {w.name: i for i, w in enumerate(programme.workstreams)}
    month_of = frame["month"].to_numpy()
    rows = (frame["workstream"].isin(names) & frame["stage"].isin(stages)
            & frame["item"].isin(RUNNING_ITEMS)).to_numpy()
    if rows.any():
        cost[rows] *= owned_share[month_of[rows] - 1]
    rented = [n for n in names if runs[index_of[n]].pricing != "self_hosted"]
    if not rented or not carried["owned_hours"].any():
        return
    carries = eligible[purpose]
    owned = _owned_running(programme, gpu)
    for name in rented:  # each rented workstream's share of the month's demand is carried as much as the rest
        theirs = carries & (frame["workstream"] == name).to_numpy()
        by_month = np.bincount(month_of[theirs] - 1, weights=frame["gpu_hours"].to_numpy()[theirs].astype(float),
                               minlength=len(demand))[:len(demand)]
        with np.errstate(invalid="ignore", divide="ignore"):
            owned_hours = np.where(demand > 0, carried["owned_hours"] * by_month / np.where(demand > 0, demand, 1.0),
                                   0.0)
        tags = programme.workstreams[index_of[name]].tags_for(1)
        for m in np.nonzero(owned_hours > 0)[0]:
            for category, item, usd in (("power", "owned fleet: electricity", owned["busy_usd_per_gpu_hour"]),
                                        ("staff", "owned fleet: data-centre operations",
                                         owned["ops_usd_per_gpu_hour"]),
                                        ("compute", "owned fleet: data-centre space",
                                         owned["space_usd_per_gpu_hour"])):
                out["rows"].append({"month": m + 1, "workstream": name, "cycle": 0, "stage": "fleet",
                                    "category": category, "item": item, "cost_type": "fixed",
                                    "cost_usd": owned_hours[m] * usd, "gpu_hours": 0.0, "gpu_hour_class": "none",
                                    "tags": dict(tags)})


def _owned_running(programme, gpu: str) -> dict:
    """What an owned fleet costs to run per GPU-hour besides its depreciation [USD/GPU-h]: electricity idle
    (``idle_power_share`` of peak) and busy (``power_utilisation``), and data-centre operations staff, from the
    programme's base (TDP x server factor x PUE x USD/kWh; ops_fte_per_1000_gpus x staff_usd_per_month)."""
    from ..reference import catalog
    from ..formulas import ownership
    base = programme.base_scenario
    tdp_w = float(np.ravel(catalog.spec(np.array([gpu], dtype=object), "tdp_w"))[0])
    kwh = float(ownership.energy_kwh(1.0, tdp_w, base.server_power_factor, 1.0, base.pue))
    from ..reference.prices import price_per_gpu_hour
    try:  # what renting the same GPU by the hour would cost instead
        rent = float(np.ravel(price_per_gpu_hour(gpu, "on_demand", base.provider, base.region or "",
                                                 base.cny_per_usd)[0])[0])
    except (ScenarioError, KeyError, ValueError):
        rent = float("nan")
    return {"idle_usd_per_gpu_hour": kwh * base.idle_power_share * base.usd_per_kwh,
            "busy_usd_per_gpu_hour": kwh * base.power_utilisation * base.usd_per_kwh,
            "ops_usd_per_gpu_hour": base.ops_fte_per_1000_gpus / 1000.0 / HOURS_PER_MONTH * base.staff_usd_per_month,
            "space_usd_per_gpu_hour": tdp_w / 1000.0 * base.server_power_factor * base.colocation_usd_per_kw_month
            / HOURS_PER_MONTH,
            "rent_usd_per_gpu_hour": rent}


def _running_usd(owned: dict, used, capacity):
    """An owned fleet's running cost [USD]: electricity busy and idle, operations and space on every GPU-hour."""
    return (np.asarray(used) * owned["busy_usd_per_gpu_hour"]
            + (np.asarray(capacity) - np.asarray(used)) * owned["idle_usd_per_gpu_hour"]
            + np.asarray(capacity) * (owned["ops_usd_per_gpu_hour"] + owned["space_usd_per_gpu_hour"]))


def _ownership_summary(programme, fleet: Fleet, price, covered, capacity, owned, term) -> dict:
    """An owned fleet's cash and its comparison with renting: a purchase at the start of each useful life in its
    term, each resold at the end of its life (``residual_value_share``); the on-demand price of the same GPU; and
    the months of use at the fleet's utilisation after which owning costs less than renting the hours it carries
    (``None`` when never, or not within one useful life)."""
    from ..formulas import ownership
    base = programme.base_scenario
    residual = float(base.residual_value_share)
    life = max(1, int(round(base.useful_life_years * 12)))
    capex = fleet.count * price * life * HOURS_PER_MONTH / (1.0 - residual)  # booked over each life (whole months)
    first = int(math.floor(fleet.start_month + 1e-9))
    starts = [first + k * life for k in range(max(1, math.ceil(term / life - 1e-9)))]
    rent = owned["rent_usd_per_gpu_hour"]
    in_horizon = float(capacity.sum())
    utilisation = float(covered.sum() / in_horizon) if in_horizon > 0 else 0.0
    month = fleet.count * HOURS_PER_MONTH
    months = float(ownership.break_even_months(capex, residual, month * utilisation * rent,
                                               _running_usd(owned, month * utilisation, month))) \
        if np.isfinite(rent) else float("nan")
    return {"purchases": [(m, capex) for m in starts], "resales": [(m + life, capex * residual) for m in starts],
            "purchase_usd": capex, "resale_usd": capex * residual, "resale_month": first + life,
            "life_months": life,
            "break_even_months": months if np.isfinite(months) and months <= life else None,
            "rent_usd_per_gpu_hour": rent if np.isfinite(rent) else None}


def _on_demand_price(programme, runs, gpu, index_of, rows: pd.DataFrame, cost, gpu_hours) -> np.ndarray:
    """The cost of each row's hours outside the fleets: as the row is bought, but on demand where its workstream
    buys that stage reserved or owned (a commitment is the fleets'; nothing else is committed). A GPU without an
    on-demand price keeps its own."""
    from ..reference.prices import price_per_gpu_hour
    stage, klass = rows["stage"].to_numpy(), rows["gpu_hour_class"].to_numpy()
    purpose = np.where(stage == "inference", "serving", np.where(klass == "experiments", "experiments",
                       np.where(np.isin(stage, POST_TRAINING), "post_training", "training")))
    pairs = list(zip(rows["workstream"].to_numpy(), purpose))
    mode = {pair: stage_mode(runs[index_of[pair[0]]], pair[1]) in FLEET_PRICING for pair in set(pairs)}
    committed = np.array([mode[pair] for pair in pairs], dtype=bool)
    if not committed.any():
        return cost
    try:
        base = programme.base_scenario
        usd = float(np.ravel(price_per_gpu_hour(gpu, "on_demand", base.provider, base.region or "",
                                                base.cny_per_usd)[0])[0])
    except (ScenarioError, KeyError, ValueError):
        return cost
    with np.errstate(invalid="ignore", divide="ignore"):
        own = np.where(gpu_hours > 0, cost / np.where(gpu_hours > 0, gpu_hours, 1.0), 0.0)
    # host shares and the like are priced per GPU-hour at a multiple of the GPU's price: keep the multiple
    return np.where(committed & (own > 0), gpu_hours * usd, cost)


def _follow_redundancy(frame, cost, on, delta, runs, index_of) -> None:
    """A stage's redundancy is a factor on its lines (each by its category's weight): it follows them to the
    fleet's price, on the redundancy line of their cost type."""
    if not np.any(delta):
        return
    keys = ["month", "workstream", "cycle", "stage", "cost_type"]
    rows = frame.loc[on, keys]
    weight = contingency.line_weight(frame.loc[on, "category"].to_numpy(), frame.loc[on, "item"].to_numpy())
    moved = rows.assign(delta=delta * weight).groupby(keys)["delta"].sum()
    redundancy = frame[frame["category"] == "redundancy"]
    for index, key in zip(redundancy.index, zip(*(redundancy[k] for k in keys))):
        if key in moved.index:
            factor = float(runs[index_of[key[1]]].redundancy_factor) - 1.0
            cost[frame.index.get_loc(index)] += moved[key] * factor
