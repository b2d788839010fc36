"""A programme month by month: every engine cost line placed in the months it occurs.

``evaluate(programme)`` prices every workstream's scenario once (one batch for all training runs, one for
every (version, month) of serving), then spreads each line over time by its profile in
``data/timeline_profiles.csv``:

- ``run``: evenly over the stage's wall-clock time (compute, failures, hot storage, logs, power);
- ``start``: in the month the cycle starts (annotation batches, corpus ingest);
- ``release``: in the month the cycle's training ends (weights egress);
- ``retention_from_start`` / ``retention_from_end``: over ``retention_months`` from the stage's start or end
  (dataset copies, kept checkpoints in object storage), so that storage of overlapping cycles piles up;
- ``archive``: over ``archive_months`` after retention;
- ``programme_staff``: dropped, because the programme pays its staff every month (:class:`~workbench.programmes.programme.Staff`);
- ``serving``: each live version's serving lines, priced for that month's traffic;
- ``fleet``: dropped from each run: what a reservation or owned cluster costs idle is the programme's, month by
  month, not bought again by every cycle.

A cycle's stages run one after the other; the whole cycle starts at its start month. Costs that fall after
the horizon (retention and archive tails) are left out of the monthly totals and reported as
``beyond_horizon_usd``. Months are 365.25 / 12 days.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import fleets
from ..reference.i18n import month_text, name_label, t
from ..reference.numbers import money
from .programme import RESOURCE_CATEGORIES, TRAINING_STAGES, Programme, ProgrammeError
from .placement import (DAYS_PER_MONTH, FRAME_COLUMNS, GPU_HOUR_CLASSES, PROFILES, UNTAGGED, hidden_block, price_scenarios, profile_of, profiles, serving_block, staff_block, trained_tokens, training_block)  # noqa: F401


@dataclass
class Timeline:
    """Result of :func:`evaluate`: ``lines`` holds one row per (month, workstream, cycle, line) with its tags."""

    programme: Programme
    lines: pd.DataFrame
    tag_keys: tuple
    beyond_horizon_usd: float
    months_tokens: pd.DataFrame  # month, trained_tokens, served_tokens (input and output: served_input_tokens, ...)
    fleet_months: pd.DataFrame = field(default_factory=pd.DataFrame)  # fleet, month, capacity/used GPU-h, idle USD
    fleets: list = field(default_factory=list)  # one summary per fleet (workbench.programmes.fleets.apply)
    warnings: list = field(default_factory=list)  # in English, amounts in USD
    warning_items: list = field(default_factory=list)  # (key, values): see warning_text

    @property
    def total_cost_usd(self) -> float:
        return float(self.lines["cost_usd"].sum())

    def monthly(self, by: str = "category") -> pd.DataFrame:
        """Cost [USD] per month (rows, 1 to the horizon) by ``category``, ``cost_type``, ``workstream`` or a tag."""
        months = pd.Index(range(1, self.programme.horizon_months + 1), name="month")
        table = self.lines.pivot_table(index="month", columns=by, values="cost_usd", aggfunc="sum", fill_value=0.0)
        return table.reindex(months, fill_value=0.0)

    def cumulative(self, resource: str = "total") -> pd.Series:
        """Cumulative spend [USD] at the end of each month on ``resource`` (a budget resource, or ``tag:value``)."""
        if resource == "total":
            lines = self.lines
        elif ":" in resource:  # a tag's budget: the lines carrying that tag value
            key, value = resource.split(":", 1)
            lines = self.lines[self.lines[key] == value] if key in self.lines else self.lines.iloc[:0]
        else:
            lines = self.lines[self.lines["category"].isin(RESOURCE_CATEGORIES[resource])]
        months = pd.Index(range(1, self.programme.horizon_months + 1), name="month")
        return lines.groupby("month")["cost_usd"].sum().reindex(months, fill_value=0.0).cumsum()

    def first_run_workstreams(self) -> list[str]:
        """The workstreams whose first cycle is the first training run: every pre-training workstream; in a
        programme without pre-training (open weights), the fine-tuning workstream(s) that start first; none in a
        programme that only serves."""
        training = [w for w in self.programme.workstreams if w.stages]
        pretraining = [w.name for w in training if "pretrain" in w.stages]
        if pretraining or not training:
            return pretraining
        first = min(w.start_month for w in training)
        return [w.name for w in training if w.start_month == first]

    def first_run_mask(self) -> pd.Series:
        """The lines of the first training run: cycle 1 of :meth:`first_run_workstreams`, all its lines but serving
        (compute, failures, experiments, storage, network, the cleaning of its corpus, its debug environments)."""
        lines = self.lines
        return lines["workstream"].isin(self.first_run_workstreams()) & (lines["cycle"] == 1) & \
            (lines["stage"] != "inference")

    def first_run_split(self) -> tuple[float, float]:
        """(cost of the first training run, cost of everything else) [USD]: the first run (:meth:`first_run_mask`:
        the pre-training run, or the first fine-tune when the programme starts from open weights) against what comes
        after (fine-tunes, serving, staff, hidden costs of later work)."""
        first_usd = float(self.lines.loc[self.first_run_mask(), "cost_usd"].sum())
        return first_usd, self.total_cost_usd - first_usd

    def by_tag(self, key: str, by: str | None = None) -> pd.Series | pd.DataFrame:
        """Total cost [USD] per value of tag ``key`` (or ``workstream``); with ``by`` (``category``, ...), a table."""
        if key != "workstream" and key not in self.tag_keys:
            raise ProgrammeError("programme", "tag", key, "is not a tag of this programme",
                                 ", ".join(("workstream", *self.tag_keys)) or "workstream")
        if by is None:
            return self.lines.groupby(key)["cost_usd"].sum().sort_values(ascending=False)
        return self.lines.pivot_table(index=key, columns=by, values="cost_usd", aggfunc="sum", fill_value=0.0)

    def _alerts(self) -> pd.DataFrame:
        """For each budget and alert line: the threshold [USD] and the first month cumulative spend reaches it."""
        rows = []
        percents = sorted({*self.programme.alert_percents, 100.0})
        for resource, budget in self.programme.budgets.items():
            spent = self.cumulative(resource)
            for percent in percents:
                threshold = budget * percent / 100.0
                crossed = spent.index[spent.to_numpy() >= threshold * (1 - 1e-12)]
                month = int(crossed[0]) if len(crossed) else None
                rows.append({"resource": resource, "budget_usd": budget, "percent": percent, "threshold_usd": threshold,
                             "month": month, "calendar_month": None if month is None else self.programme.month_label(month),
                             "spent_usd": float(spent.iloc[-1])})
        return pd.DataFrame(rows, columns=["resource", "budget_usd", "percent", "threshold_usd", "month", "calendar_month",
                                           "spent_usd"])

    def kpis(self) -> pd.DataFrame:
        """:meth:`_kpis`, computed once per timeline (the view, its exports and its warnings each read it)."""
        return self._once("kpis", self._kpis)

    def alerts(self) -> pd.DataFrame:
        """For each budget and alert line: the threshold [USD], the first month cumulative spend reaches it and that
        month's calendar month (:meth:`_alerts`, computed once per timeline)."""
        return self._once("alerts", self._alerts)

    def _once(self, key, compute):
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            memo[key] = compute()
        return memo[key].copy()

    def _kpis(self) -> pd.DataFrame:
        """Unit costs per month: USD per trained token, USD per million served tokens, the share of training
        GPU-hours that trained a model (not lost to failures and checkpoints, nor spent on experiments or held
        by debug environments), and
        the fixed share of the month's cost. ``NaN`` where a month has nothing to divide by (for served tokens:
        fewer than a million)."""
        months = pd.Index(range(1, self.programme.horizon_months + 1), name="month")
        lines = self.lines
        per = lambda mask: lines[mask].groupby("month")["cost_usd"].sum().reindex(months, fill_value=0.0)  # noqa: E731
        gpu = lambda cls: lines[lines["gpu_hour_class"] == cls].groupby("month")["gpu_hours"].sum().reindex(months, fill_value=0.0)  # noqa: E731
        total = per(np.ones(len(lines), bool))
        serving = per(lines["stage"] == "inference")
        training = per(lines["stage"].isin(TRAINING_STAGES))
        tokens = self.months_tokens.set_index("month").reindex(months, fill_value=0.0)
        productive, lost, experiments = gpu("productive"), gpu("lost"), gpu("experiments")
        training_gpu = productive + lost + experiments + gpu("debug")
        with np.errstate(divide="ignore", invalid="ignore"):
            out = pd.DataFrame({
                "cost_usd": total,
                "usd_per_trained_token": np.where(tokens["trained_tokens"] > 0, training / tokens["trained_tokens"], np.nan),
                # below a million tokens a month there is no unit cost to speak of (traffic decaying to nothing)
                "usd_per_million_served_tokens": np.where(tokens["served_tokens"] >= 1e6,
                                                          serving / (tokens["served_tokens"] / 1e6), np.nan),
                "productive_gpu_hour_share": np.where(training_gpu > 0, productive / training_gpu, np.nan),
                "fixed_share": np.where(total > 0, per(lines["cost_type"] == "fixed") / total, np.nan),
                "trained_tokens": tokens["trained_tokens"], "served_tokens": tokens["served_tokens"],
                "gpu_hours": training_gpu + gpu("serving"),
                "fleet_utilisation": self._fleet_utilisation(months),
            }, index=months)
            # the served-token cost in its parts (they add up to usd_per_million_served_tokens): the serving
            # replicas (what workbench serve prices), content safety, request logs, response egress, and the rest
            # (power and operations of owned GPUs, contingency)
            inference = lines["stage"] == "inference"
            parts = {"gpu": inference & lines["item"].str.startswith("serving replicas"),
                     "safety": inference & (lines["category"] == "security"),
                     "logging": inference & (lines["category"] == "logging"),
                     "egress": inference & (lines["category"] == "network")}
            parts["other"] = inference & ~np.logical_or.reduce(list(parts.values()))
            for name, mask in parts.items():
                out[f"usd_per_million_served_tokens_{name}"] = np.where(tokens["served_tokens"] >= 1e6, per(mask)
                                                                        / (tokens["served_tokens"] / 1e6), np.nan)
        return out

    def cash(self) -> pd.DataFrame:
        """Spend per month two ways [USD]: ``accounting_usd`` as the lines book it (owned hardware depreciated
        straight-line over its life), and ``cash_usd`` with owned hardware paid in full in its fleet's first month and
        its resale received in the month it is sold, when that falls in the horizon; with their running totals."""
        months = pd.Index(range(1, self.programme.horizon_months + 1), name="month")
        accounting = self.lines.groupby("month")["cost_usd"].sum().reindex(months, fill_value=0.0)
        cash = accounting.copy()
        if len(self.fleet_months) and "depreciation_usd" in self.fleet_months:
            cash -= self.fleet_months.groupby("month")["depreciation_usd"].sum().reindex(months, fill_value=0.0)
        for fleet in self.fleets:  # owned: a purchase at the start of each useful life, resold at its end
            for month, usd in fleet.get("purchases", []):
                if month in cash.index:
                    cash[month] += usd
            for month, usd in fleet.get("resales", []):
                if month in cash.index:
                    cash[month] -= usd
        return pd.DataFrame({"accounting_usd": accounting, "cash_usd": cash,
                             "accounting_cumulative_usd": accounting.cumsum(), "cash_cumulative_usd": cash.cumsum()})

    def _fleet_utilisation(self, months) -> np.ndarray:
        """The share of the fleets' GPU-hours the work used, per month (NaN without a fleet that month)."""
        if not len(self.fleet_months):
            return np.full(len(months), np.nan)
        table = self.fleet_months.groupby("month")[["capacity_gpu_hours", "used_gpu_hours"]].sum().reindex(months)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(table["capacity_gpu_hours"] > 0, table["used_gpu_hours"] / table["capacity_gpu_hours"],
                            np.nan)

    def to_dict(self) -> dict:
        """Plain-Python form (``workbench plan --json``): valid JSON, ``None`` for a figure that does not exist."""
        keys = ["month", "category", "workstream", *self.tag_keys]
        monthly = (self.lines.groupby(keys, sort=True)["cost_usd"].sum().reset_index())
        monthly.insert(1, "calendar_month", self.programme.month_labels(monthly["month"]))
        by_tag = {key: {k: float(v) for k, v in self.by_tag(key).items()} for key in ("workstream", *self.tag_keys)}
        alerts = self.alerts()
        kpis = self.kpis().reset_index()
        return {
            "programme": self.programme.name, "horizon_months": self.programme.horizon_months,
            "first_month": self.programme.month_label(1), "last_month": self.programme.month_label(self.programme.horizon_months),
            "total_cost_usd": self.total_cost_usd, "beyond_horizon_usd": self.beyond_horizon_usd,
            **dict(zip(("first_run_usd", "after_first_run_usd"), self.first_run_split())),
            "by_category": {k: float(v) for k, v in self.lines.groupby("category")["cost_usd"].sum().items()},
            "by_cost_type": {k: float(v) for k, v in self.lines.groupby("cost_type")["cost_usd"].sum().items()},
            "monthly": _records(monthly), "by_tag": by_tag, "alerts": _records(alerts), "kpis": _records(kpis),
            "fleets": [{k: (float(v) if isinstance(v, (np.floating,)) else v) for k, v in f.items()}
                       for f in self.fleets],
            "warnings": list(self.warnings),
        }


def _records(frame: pd.DataFrame) -> list[dict]:
    out = []
    if "month" in frame:  # a month is a whole number, or None (not reached), never 8.0 or NaN
        frame = frame.assign(month=pd.Series([None if pd.isna(m) else int(m) for m in frame["month"]], dtype=object,
                                             index=frame.index))
    for record in frame.to_dict("records"):
        out.append({k: (None if isinstance(v, float) and not np.isfinite(v) else
                        int(v) if isinstance(v, (np.integer,)) else float(v) if isinstance(v, np.floating) else v)
                    for k, v in record.items()})
    return out


def _reach(programme, workstreams, runs, ends) -> int:
    """The month until which committed work is placed: the last cycle's end, plus the longest term a fleet can
    run past it (listed fleets' own; implicit ones: 3 years reserved, or the hardware's useful life)."""
    last = max(w.cycle_starts()[-1] + ends[i] for i, w in enumerate(workstreams))
    life = int(round(programme.base_scenario.useful_life_years * 12))
    listed = max((f.start_month - 1 + f.term(programme.base_scenario.useful_life_years) for f in programme.fleets),
                 default=0)
    reach = max(programme.horizon_months, math.ceil(last) + max(36, life), listed)
    return int(min(reach, programme.horizon_months + 1200))


def evaluate(programme: Programme) -> Timeline:
    """The programme's monthly cost lines, totals, alerts and KPIs (see the module docstring)."""
    if not isinstance(programme, Programme):
        raise ProgrammeError("programme", "programme", programme, "is not a Programme", "workbench.programmes.programme.Programme(...)")
    horizon = programme.horizon_months
    base = programme.base_scenario
    workstreams = programme.workstreams
    # the programme pays staff every month; a workstream's own serving is priced per month below
    runs = [w.scenario(base).replace(staff_fte=0.0, serving_staff_fte=0.0, serving_months=0.0) for w in workstreams]
    owners = [f"workstream {w.name!r}" for w in workstreams]
    lines, figures = price_scenarios(runs, owners)

    # stage windows of each workstream's cycle, relative to the cycle's start [months]; on a committed cluster
    # (reserved or owned) the trial-and-error runs take its time before the main run, as the estimate's commitment
    # counts them; bought by the hour, they run alongside it on GPUs rented for them
    offsets, ends = {}, np.zeros(len(workstreams))
    experiment_months = figures["cluster_experiment_days"] / DAYS_PER_MONTH
    for i, w in enumerate(workstreams):
        # a spot run first waits for its capacity (spot_capacity_wait_days): the run starts that much later
        t = figures["spot_wait_days"][i] / DAYS_PER_MONTH if "pretrain" in w.stages else 0.0
        sequential = "pretrain" in w.stages and experiment_months[i] > 0
        if sequential:
            offsets[i, "experiments"] = (t, t + experiment_months[i])
            t += experiment_months[i]
        for stage in TRAINING_STAGES:
            days = figures["pretrain_days_with_overheads" if stage == "pretrain" else f"{stage}_days"][i]
            length = days / DAYS_PER_MONTH if stage in w.stages else 0.0
            offsets[i, stage] = (t, t + length)
            t += length
        if not sequential:
            offsets[i, "experiments"] = offsets[i, "pretrain"]
        ends[i] = t

    figures["cycle_end_months"] = ends  # when each cycle's release goes live: the serving fleets start then
    # with committed GPUs the training work is placed until the fleets' terms end, so that the work after the
    # horizon runs on the fleets it is committed to (in the amount beyond the horizon) and is not counted twice
    reach = _reach(programme, workstreams, runs, ends) if programme.fleets or fleets.committed(runs) else horizon
    blocks = [training_block(programme, workstreams, runs, lines, offsets, ends, reach)]
    serving, served = serving_block(programme, workstreams, runs, ends, horizon, owners)
    blocks.append(serving)
    blocks.append(staff_block(programme, horizon))
    blocks.append(hidden_block(programme, workstreams, runs, figures, offsets, ends, reach))
    frame = pd.concat([b for b in blocks if len(b)], ignore_index=True) if any(len(b) for b in blocks) else None
    tag_keys = tuple(sorted({k for w in workstreams for k in w.tags} | {k for s in programme.staff for k in s.tags}))
    if frame is None:
        frame = pd.DataFrame(columns=[*FRAME_COLUMNS, "tags"])
    beyond = sum(float(b.attrs.get("beyond", 0.0)) for b in blocks)
    frame, fleet_beyond, fleet_months, fleet_summaries, fleet_warnings = fleets.apply(programme, runs, figures, frame,
                                                                                      reach, cut=horizon)
    beyond += fleet_beyond
    late = frame["month"].to_numpy() > horizon
    if late.any():  # placed past the horizon for the fleets: what falls after it
        beyond += float(frame.loc[late, "cost_usd"].sum())
        frame = frame[~late].reset_index(drop=True)
        if "month" in fleet_months:  # an implicit fleet that carries nothing has no months
            fleet_months = fleet_months[fleet_months["month"] <= horizon].reset_index(drop=True)
    tags = frame.pop("tags")
    for key in tag_keys:
        frame[key] = [t.get(key, UNTAGGED) for t in tags]
    trained = trained_tokens(workstreams, runs, offsets, horizon)
    months_tokens = pd.DataFrame({"month": np.arange(1, horizon + 1), "trained_tokens": trained,
                                  "served_tokens": served.sum(axis=1), "served_input_tokens": served[:, 0],
                                  "served_output_tokens": served[:, 1]})
    timeline = Timeline(programme, frame, tag_keys, beyond, months_tokens, fleet_months, fleet_summaries)
    timeline.warning_items = [(key, with_month_labels(params, programme.month_label))
                              for key, params in _warnings(timeline, ends) + fleet_warnings]
    timeline.warnings = [warning_text(key, params) for key, params in timeline.warning_items]
    return timeline


def with_month_labels(params: dict, month_label) -> dict:
    """``params`` with ``month_label`` and ``horizon_label`` beside ``month`` and ``horizon``: the calendar months
    (2027-03) a warning says, from ``month_label`` (programme month -> YYYY-MM)."""
    return {**params, **{f"{k}_label": month_label(params[k]) for k in ("month", "horizon") if k in params}}


def warning_text(key: str, params: dict, lang: str = "en", currency: str = "USD", rate: float = 1.0) -> str:
    """One warning of :attr:`Timeline.warning_items` in ``lang``, amounts (``*_usd``) in ``currency`` at ``rate``."""
    values = {k: (money(v * rate, currency, lang) if k.endswith("_usd") else v) for k, v in params.items()}
    values = {k.removesuffix("_usd"): v for k, v in values.items()}
    if "resource" in values:
        values["resource"] = t(values["resource"], lang) if lang == "zh" else values["resource"]
    for field in ("month_label", "horizon_label"):  # 2027 年 3 月 for a Chinese reader
        if field in values:
            values[field] = month_text(values[field], lang)
    for field in ("workstream", "name"):  # the named programmes' workstreams in the reader's language
        if isinstance(values.get(field), str):
            values[field] = name_label(values[field], lang)
    return t(key, lang).format(**values)


def _warnings(timeline: Timeline, ends: np.ndarray) -> list[tuple[str, dict]]:
    """(message key, values) of each warning: budgets spent before the horizon, cycles after it, releases served
    past it or retired before it, and what falls after it."""
    out = []
    alerts = timeline.alerts()
    horizon = timeline.programme.horizon_months
    for row in alerts[alerts["percent"] == 100.0].itertuples():
        if row.month is not None and not pd.isna(row.month):
            out.append(("tw_budget_spent", {"resource": row.resource, "budget_usd": row.budget_usd,
                                            "month": int(row.month), "horizon": horizon,
                                            "percent": row.spent_usd / row.budget_usd}))
    for i, w in enumerate(timeline.programme.workstreams):
        starts = np.array(w.cycle_starts())
        late = int((starts >= horizon).sum())
        if late:
            out.append(("tw_cycles_late", {"name": w.name, "late": late, "cycles": len(starts), "horizon": horizon}))
        if w.serve_months and len(starts) > 1 and w.serve_months < w.every_months - 1e-9:
            out.append(("tw_serving_gap", {"name": w.name, "gap": w.every_months - w.serve_months,
                                           "serve": w.serve_months, "every": w.every_months}))
        if w.serve_months and late < len(starts):
            served_until = float(starts[starts < horizon][-1] + ends[i] + w.serve_months)
            if served_until > horizon + 1e-9:
                out.append(("tw_served_after", {"name": w.name, "month": math.ceil(served_until - 1e-9),
                                                "horizon": horizon}))
            elif served_until < horizon - 1e-9 and late == 0:
                month = math.floor(served_until) + 1
                out.append(("tw_retired", {"name": w.name, "month": month, "horizon": horizon,
                                           "day": int((served_until - (month - 1)) * DAYS_PER_MONTH) + 1}))
    if timeline.beyond_horizon_usd > 0.005 * max(timeline.total_cost_usd, 1.0):
        out.append(("tw_beyond", {"amount_usd": timeline.beyond_horizon_usd, "horizon": horizon}))
    return out
