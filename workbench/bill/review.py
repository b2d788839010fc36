"""The monthly review: the real bill (:mod:`workbench.bill.actuals`) against the plan (a programme's
:class:`~workbench.programmes.timeline.Timeline`), as the planning guides ask: actual against planned by month, category and
tag; the day each budget alert line was crossed on actual spend; a forecast at completion; and flags for
categories running above plan, unit costs rising and resources that bill with no usage.

Only what a cloud bill shows is compared: the plan's compute, failures, experiments, debug environments and data
processing are GPU or CPU time (``compute``); storage, network, logging and security compare as they are. Staff,
annotation, electricity and the redundancy contingency are not on a cloud bill: they stay at plan in the forecast
and are reported apart. Plan month 1 is the calendar month ``start`` (by default the programme's own start, else the
bill's first month).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .actuals import UNATTRIBUTED, Actuals
from ..reference.i18n import calendar_month, month_text, t
from ..reference.numbers import money as amount_text
from ..plan.scenario_fields import excerpt
from ..programmes.timeline import UNTAGGED, Timeline

#: The plan's categories as a cloud bill shows them (None: not on a cloud bill).
BILLED_AS = {"compute": "compute", "failures": "compute", "experiments": "compute", "debug": "compute",
             "data_processing": "compute", "storage": "storage", "network": "network", "logging": "logging",
             "security": "security", "annotation": None, "staff": None, "power": None, "redundancy": None}
BILLED = ("compute", "storage", "network", "logging", "security")
ALERT_PERCENTS = (30.0, 50.0, 80.0, 100.0)
#: A last month billed for less than this share of its days is compared with that share of its plan.
PARTIAL_MONTH = 0.97
#: Budgets a bill cannot show apart: data processing is CPU time inside the bill's compute.
NOT_ON_BILL_APART = ("data_processing",)


class ReviewError(ValueError):
    """A bill and a plan that cannot be compared (months that do not overlap, a bad start month); ``zh``: the
    message in Chinese."""

    def __init__(self, message: str, zh: str = ""):
        super().__init__(message)
        self.zh = zh or message

    def message(self, lang: str = "en") -> str:
        return self.zh if lang == "zh" else str(self)


@dataclass
class Review:
    """Result of :func:`compare`."""

    monthly: pd.DataFrame      # month (YYYY-MM), plan_month, category, planned_usd, actual_usd, forecast_usd
    by_category: pd.DataFrame  # category, planned_usd, actual_usd, difference_usd, ratio, over_plan (to date)
    alerts: pd.DataFrame       # resource, budget_usd, percent, threshold_usd, day (first day at or above; NaT: not),
    #                            spent_usd, projected_month (the month the forecast path reaches it; None: not)
    forecast_usd: float        # billed categories at the plan's end: actual to date + the rest at the run-rate
    forecast_total_usd: float  # the forecast plus what the bill does not show, at plan
    planned_total_usd: float   # the whole plan over its horizon
    flags: list = field(default_factory=list)
    tags: dict = field(default_factory=dict)  # key -> frame: value, planned_usd, actual_usd (to date)
    planned_billed_usd: float = 0.0  # what the plan puts on a cloud bill over its horizon (like for like)
    last_month_share: float = 1.0  # the share of its last month the bill covers (that month's plan to date)

    def to_dict(self) -> dict:
        # keys of their own: printed beside the bill's (by_category, by_tag), they must not replace them
        return {"monthly_vs_plan": records(self.monthly), "by_category_vs_plan": records(self.by_category),
                "alerts": records(self.alerts), "forecast_usd": self.forecast_usd,
                "forecast_total_usd": self.forecast_total_usd, "planned_total_usd": self.planned_total_usd,
                "planned_billed_usd": self.planned_billed_usd,
                "flags": [_plain(flag) for flag in self.flags],
                "by_tag_vs_plan": {k: records(v) for k, v in self.tags.items()}}


def _plain(flag: dict) -> dict:
    """A flag as JSON-safe values (a ratio with no plan to divide by is None)."""
    return {k: (None if isinstance(v, (float, np.floating)) and not np.isfinite(v) else
                float(v) if isinstance(v, np.floating) else v) for k, v in flag.items()}


def records(frame: pd.DataFrame) -> list[dict]:
    """A frame as JSON-safe records: days as YYYY-MM-DD, missing values as None."""
    out = []
    for record in frame.to_dict("records"):
        out.append({k: (None if (isinstance(v, float) and not np.isfinite(v)) or v is pd.NaT else
                        str(v.date()) if isinstance(v, pd.Timestamp) else
                        float(v) if isinstance(v, np.floating) else int(v) if isinstance(v, np.integer)
                        else bool(v) if isinstance(v, np.bool_) else v) for k, v in record.items()})
    return out


def load_plan(source) -> Timeline:
    """A plan from what a user has at hand: a :class:`Timeline`, a :class:`~workbench.programmes.programme.Programme`, a
    single :class:`~workbench.plan.scenario.Scenario`, a programme preset's id (``assistant-7b``), a programme file
    (.json or .toml) or a single scenario's JSON file (the app's scenario download: no ``workstreams``)."""
    from ..programmes.programme import load, of_scenario
    from ..programmes.programme_presets import presets, preset
    from ..plan.scenario import Scenario
    from ..programmes.timeline import evaluate
    if not isinstance(source, (str, Path)):
        return as_timeline(source)
    if isinstance(source, str) and source in presets().index:
        return evaluate(preset(source))
    path = Path(source)
    if path.suffix.lower() == ".json" and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (ValueError, UnicodeDecodeError, OSError):
            data = None  # the programme reader names the problem
        if isinstance(data, dict) and isinstance(data.get("scenario"), dict) and "total_cost_usd" in data:
            data = data["scenario"]  # workbench estimate --json: the scenario it priced
        if isinstance(data, dict) and "workstreams" not in data and "horizon_months" not in data:
            return evaluate(of_scenario(Scenario.from_dict(data, single=True)))
    return evaluate(load(path))


def as_timeline(plan) -> Timeline:
    """A plan to compare with: a :class:`Timeline`, a :class:`~workbench.programmes.programme.Programme` (evaluated) or a
    single :class:`~workbench.plan.scenario.Scenario` (its planned burn, :func:`workbench.programmes.programme.of_scenario`)."""
    from ..programmes.programme import Programme, of_scenario
    from ..plan.scenario import Scenario
    from ..programmes.timeline import evaluate
    if isinstance(plan, Timeline):
        return plan
    if isinstance(plan, Programme):
        return evaluate(plan)
    if isinstance(plan, Scenario):
        return evaluate(of_scenario(plan))
    raise ReviewError(f"plan={type(plan).__name__}: allowed: a Programme, its Timeline or a single Scenario")


def compare(bill: Actuals, plan, start: str | None = None, budget_usd: float | None = None,
            over_share: float = 0.10, unit_cost_rise: float = 0.10) -> Review:
    """The bill against the plan (a programme, its timeline or a single scenario). ``budget_usd``: a budget for the cloud bill (alert lines at 30/50/80/100 %);
    otherwise the programme's budgets of billed resources. ``over_share``: a category more than this share above
    plan to date is flagged; ``unit_cost_rise``: a service whose cost per consumed unit rises more than this share
    from one month to the next is flagged."""
    plan = as_timeline(plan)
    rows = bill.rows
    if not len(rows):
        raise ReviewError("the bill has no accepted row to compare (its rejected rows are listed without --plan)",
                          "账单没有可比较的有效行（被拒绝的行见下方列表）")
    if budget_usd is not None and (isinstance(budget_usd, (bool, np.bool_))
                                   or not isinstance(budget_usd, (int, float, np.integer, np.floating))
                                   or not (np.isfinite(budget_usd) and 0 < budget_usd <= 1e15)):
        raise ReviewError(f"budget_usd={budget_usd!r}: allowed: a positive amount in USD, at most 1e15",
                          f"budget_usd={budget_usd!r}：应为正的美元金额，最多 1e15")
    budget_usd = None if budget_usd is None else float(budget_usd)
    months = sorted(rows["month"].unique())
    horizon = plan.programme.horizon_months
    start = calendar_month(start)  # 2025年3月 and 2025.3 read as 2025-03
    if start is not None and not (isinstance(start, str) and re.fullmatch(r"(19[7-9][0-9]|2[0-9]{3})-(0[1-9]|1[0-2])",
                                                                          start)
                                  and pd.Period(start, "M") + (horizon - 1) <= pd.Period("2999-12", "M")):
        shown = excerpt(start)
        raise ReviewError(f"start={shown}: is not a month the plan can start in; allowed: YYYY-MM from 1970-01, "
                          "the calendar month of plan month 1, with the plan's last month by 2999-12",
                          f"start={shown}：不是计划可以开始的月份；应为 1970-01 起的 YYYY-MM，即计划第 1 个月对应的日历月份，"
                          "且计划的最后一个月不晚于 2999-12")
    first = pd.Period(start or plan.programme.start or (months[0] if months else "1970-01"), "M")
    calendar = [str(first + k) for k in range(horizon)]
    outside = sorted(set(months) - set(calendar))
    if months and not set(months) & set(calendar):
        raise ReviewError(f"the bill's months ({months[0]} to {months[-1]}) fall outside the plan's "
                          f"{calendar[0]} to {calendar[-1]}; give start=YYYY-MM, the calendar month of plan month 1",
                          f"账单月份（{months[0]} 至 {months[-1]}）不在计划期 {calendar[0]} 至 {calendar[-1]} 内；"
                          "请设置计划第 1 个月对应的日历月份（YYYY-MM）")
    lines = plan.lines.assign(billed=plan.lines["category"].map(BILLED_AS))
    for key in plan.tag_keys:  # the plan's untagged lines and the bill's unattributed ones are one value
        lines[key] = lines[key].replace(UNTAGGED, UNATTRIBUTED)
    billed_lines = lines[lines["billed"].notna()]
    planned = billed_lines.groupby(["month", "billed"])["cost_usd"].sum()
    actual = rows[rows["month"].isin(calendar)].groupby(["month", "category"])["cost_usd"].sum()
    grid = pd.MultiIndex.from_product([range(1, horizon + 1), BILLED], names=["plan_month", "category"])
    monthly = pd.DataFrame(index=grid).reset_index()
    monthly.insert(0, "month", [calendar[m - 1] for m in monthly["plan_month"]])
    monthly["planned_usd"] = [float(planned.get((m, c), 0.0)) for m, c in zip(monthly["plan_month"], monthly["category"])]
    monthly["actual_usd"] = [float(actual.get((cal, c), 0.0)) for cal, c in zip(monthly["month"], monthly["category"])]
    billed_months = [calendar.index(m) + 1 for m in months if m in calendar]
    # the months the bill covers: an export of this month alone is compared with this month's plan
    first_billed, last = min(billed_months, default=1), max(billed_months, default=0)
    covered = (monthly["plan_month"] >= first_billed) & (monthly["plan_month"] <= last)
    # a bill that stops inside its last month (a review mid-month) is compared with that part of the month's plan
    share = _covered_share(rows, calendar[last - 1]) if last else 1.0
    weight = lambda m: np.where(np.asarray(m) == last, share, 1.0)  # noqa: E731 - plan share billed per plan month
    to_date = monthly[covered].assign(planned_usd=lambda f: f["planned_usd"] * weight(f["plan_month"]))
    by_category = to_date.groupby("category", sort=False)[["planned_usd", "actual_usd"]].sum().reindex(BILLED).reset_index()
    by_category["difference_usd"] = by_category["actual_usd"] - by_category["planned_usd"]
    with np.errstate(divide="ignore", invalid="ignore"):
        by_category["ratio"] = np.where(by_category["planned_usd"] > 0,
                                        by_category["actual_usd"] / by_category["planned_usd"], np.nan)
    by_category["over_plan"] = by_category["actual_usd"] > by_category["planned_usd"] * (1 + over_share) + 0.005

    flags = [{"kind": "over_plan", "category": r.category, "planned_usd": r.planned_usd, "actual_usd": r.actual_usd,
              "ratio": float(r.ratio), "over_share": over_share,
              "message": f"{r.category}: {r.actual_usd:,.0f} USD spent to date against {r.planned_usd:,.0f} planned "
                         f"({versus(r.planned_usd, r.actual_usd)}; flagged above +{over_share:.0%})"}
             for r in by_category.itertuples() if r.over_plan]
    flags += _unit_cost_flags(rows, unit_cost_rise) + _idle_flags(rows)
    span = [str(m) for m in pd.period_range(months[0], months[-1], freq="M")] if months else []
    gaps = [m for m in span if m not in set(months)]
    if gaps:  # a month with no charge inside the bill: a stray date, or a month missing from the export
        flags.append({"kind": "months_missing", "months": gaps,
                      "message": f"the bill has no charge in {len(gaps)} month(s) between its first and last "
                                 f"({', '.join(gaps[:6])}{' ...' if len(gaps) > 6 else ''}): a month missing from the "
                                 "export, or a stray date (plan month 1 is the bill's first month unless start is given)"})
    if outside:
        flags.append({"kind": "outside_plan", "months": outside,
                      "message": f"{len(outside)} month(s) of the bill fall outside the plan ({', '.join(outside[:6])}): "
                                 "not compared"})

    if share < PARTIAL_MONTH:
        flags.append({"kind": "partial_month", "month": calendar[last - 1], "share": share,
                      "message": f"the bill covers {share:.0%} of {calendar[last - 1]}: that month is compared with "
                                 "the same share of its plan, and the rest of it is forecast"})

    # forecast at the plan's end, category by category: fixed lines at plan, elastic ones at the run-rate of the
    # category's billed months ((actual - fixed planned) / elastic planned); months before the bill at plan
    before = float(billed_lines[billed_lines["month"] < first_billed]["cost_usd"].sum())  # not billed here: at plan
    span = billed_lines[(billed_lines["month"] >= first_billed) & (billed_lines["month"] <= last)]
    span = span.assign(cost_usd=span["cost_usd"] * weight(span["month"]))
    elastic = span["cost_type"] == "elastic"
    elastic_planned = span[elastic].groupby("billed")["cost_usd"].sum()
    fixed_planned = span[~elastic].groupby("billed")["cost_usd"].sum()
    actual_by = to_date.groupby("category")["actual_usd"].sum()
    run_rate = {c: (max(0.0, float(actual_by.get(c, 0.0)) - float(fixed_planned.get(c, 0.0)))
                    / float(elastic_planned[c]) if float(elastic_planned.get(c, 0.0)) > 0 else 1.0) for c in BILLED}
    actual_to_date = float(to_date["actual_usd"].sum())
    # what is left: the months after the bill, and the unbilled rest of its last month
    later = billed_lines[billed_lines["month"] >= max(last, 1)]
    rest = np.where(later["month"] == last, 1.0 - share, 1.0)
    rates = np.where(later["cost_type"] == "elastic", later["billed"].map(run_rate).to_numpy(dtype=float), 1.0)
    ahead = later.assign(usd=later["cost_usd"] * rest * rates).groupby(["month", "billed"])["usd"].sum()
    forecast = before + actual_to_date + float(ahead.sum()) if last else before + float(ahead.sum())
    not_billed = float(lines[lines["billed"].isna()]["cost_usd"].sum())
    # month by month: at plan before the bill starts, as billed while it runs (its last month completed at the
    # run-rate), then the lines ahead (the path the forecast at completion takes)
    monthly["forecast_usd"] = [
        p if m < first_billed else a + (float(ahead.get((m, c), 0.0)) if m == last else 0.0) if m <= last
        else float(ahead.get((m, c), 0.0))
        for m, c, p, a in zip(monthly["plan_month"], monthly["category"], monthly["planned_usd"], monthly["actual_usd"])]
    planned_billed = float(billed_lines["cost_usd"].sum())

    alerts = _alerts(bill, plan, calendar, budget_usd)
    # the same basis as the crossing days: spend on the bill, from its first month
    alerts["projected_month"] = _projected(alerts, monthly[monthly["plan_month"] >= first_billed], calendar)
    if budget_usd is None and plan.programme.budgets and not len(alerts):
        flags.append({"kind": "no_billed_budget", "message": "the programme's budgets ("
                      + ", ".join(plan.programme.budgets) + ") include what a bill does not show (staff, annotation): "
                      "give a budget for the bill (--budget) to see its alert lines"})
    # a single scenario's plan that cannot hold its whole estimate (serving past the longest horizon) says so
    from ..programmes.programme import is_single_scenario_plan
    from ..programmes.timeline import warning_text, with_month_labels
    for key, values in plan.warning_items if is_single_scenario_plan(plan.programme) else ():
        if key in ("tw_served_after", "tw_cycles_late"):
            # the months as this review's calendar says them (plan month 1 = start)
            values = with_month_labels(values, lambda m: str(first + (int(m) - 1)))
            flags.append({"kind": "plan_not_whole", "warning": [key, values],
                          "message": "the plan does not hold all of its work: " + warning_text(key, values)})
    tags = {}
    for key in bill.attribution_keys:
        if key in plan.tag_keys:
            planned_tag = span.groupby(key)["cost_usd"].sum()  # the billed months' plan (its last month's share)
            actual_tag = rows[rows["month"].isin(calendar[first_billed - 1:last])].groupby(key)["cost_usd"].sum()
            values = sorted(set(planned_tag.index) | set(actual_tag.index), key=str)
            tags[key] = pd.DataFrame({"value": values, "planned_usd": [float(planned_tag.get(v, 0.0)) for v in values],
                                      "actual_usd": [float(actual_tag.get(v, 0.0)) for v in values]})
    return Review(monthly, by_category, alerts, forecast, forecast + not_billed, plan.total_cost_usd, flags, tags,
                  planned_billed, share if last else 1.0)


def billed_plan_total(plan) -> float:
    """What the plan puts on a cloud bill over its horizon [USD] (the forecast of a bill that follows the plan)."""
    lines = as_timeline(plan).lines
    return float(lines.loc[lines["category"].map(BILLED_AS).notna(), "cost_usd"].sum())


def _alerts(bill: Actuals, plan: Timeline, calendar: list[str], budget_usd) -> pd.DataFrame:
    """The first day actual cumulative spend reaches each alert line of each budget of billed resources."""
    from ..programmes.programme import RESOURCE_CATEGORIES
    rows = bill.rows[bill.rows["month"].isin(calendar)]
    if budget_usd is not None:
        return _crossings(rows, "bill", float(budget_usd), ALERT_PERCENTS)
    percents = sorted({*plan.programme.alert_percents, 100.0})
    frames = [_crossings(rows[rows["category"].isin({BILLED_AS[c] for c in RESOURCE_CATEGORIES[resource]})],
                         resource, amount, percents)
              for resource, amount in (plan.programme.budgets or {}).items()
              if resource in RESOURCE_CATEGORIES and resource not in NOT_ON_BILL_APART
              and all(BILLED_AS.get(c) for c in RESOURCE_CATEGORIES[resource])]
    return pd.concat(frames, ignore_index=True) if frames else _crossings(rows.iloc[:0], "bill", 1.0, ())


def _covered_share(rows: pd.DataFrame, month: str) -> float:
    """The share of ``month`` (YYYY-MM) the bill covers: up to the latest charge's end within it."""
    period = pd.Period(month, "M")
    start, end = period.start_time, period.end_time.normalize() + pd.Timedelta(days=1)
    mine = rows[rows["month"] == month]
    if not len(mine):
        return 1.0
    reached = min(pd.Timestamp(mine["end"].max()), end)
    return float(min(1.0, max((reached - start) / (end - start), 0.0)))


def _projected(alerts: pd.DataFrame, monthly: pd.DataFrame, calendar: list[str]) -> list:
    """For each alert line: the calendar month the forecast path reaches it (None: not within the plan)."""
    from ..programmes.programme import RESOURCE_CATEGORIES
    out = []
    for resource, threshold in zip(alerts["resource"], alerts["threshold_usd"]):
        categories = BILLED if resource == "bill" else {BILLED_AS[c] for c in RESOURCE_CATEGORIES[resource]}
        path = monthly[monthly["category"].isin(categories)].groupby("plan_month")["forecast_usd"].sum().cumsum()
        reached = path.index[path.to_numpy() >= threshold * (1 - 1e-12)]
        out.append(calendar[int(reached[0]) - 1] if len(reached) else None)
    return out


def _crossings(rows: pd.DataFrame, resource: str, budget_usd: float, percents) -> pd.DataFrame:
    """For each alert line: the first day (of ChargePeriodStart) cumulative spend reached it; NaT: not reached."""
    daily = rows.groupby(pd.to_datetime(rows["day"]))["cost_usd"].sum().sort_index().cumsum()
    out = []
    for percent in percents:
        threshold = budget_usd * percent / 100.0
        crossed = daily.index[daily.to_numpy() >= threshold * (1 - 1e-12)]
        out.append({"resource": resource, "budget_usd": budget_usd, "percent": float(percent),
                    "threshold_usd": threshold, "day": crossed[0] if len(crossed) else pd.NaT,
                    "spent_usd": float(daily.iloc[-1]) if len(daily) else 0.0})
    return pd.DataFrame(out, columns=["resource", "budget_usd", "percent", "threshold_usd", "day", "spent_usd"])


def _unit_cost_flags(rows: pd.DataFrame, rise: float) -> list[dict]:
    """Services whose cost per consumed unit rose by more than ``rise`` from one month to the next."""
    usage = rows[rows["usage_kind"] == "metered"]  # usage with a quantity and a unit
    if usage.empty:
        return []
    table = usage.groupby(["service_name", "unit", "month"])[["cost_usd", "quantity"]].sum()
    table["unit_cost"] = table["cost_usd"] / table["quantity"]
    flags = []
    for (service, unit), group in table.groupby(level=[0, 1]):
        costs = group["unit_cost"].to_numpy()
        months = group.index.get_level_values("month")
        for k in range(1, len(costs)):
            if costs[k - 1] > 0 and costs[k] > costs[k - 1] * (1 + rise):
                flags.append({"kind": "unit_cost_rising", "service": service, "unit": unit, "from_month": months[k - 1],
                              "to_month": months[k], "from_usd": float(costs[k - 1]), "to_usd": float(costs[k]),
                              "message": f"{service}: cost per {unit} rose {costs[k] / costs[k - 1] - 1:+.0%} from "
                                         f"{months[k - 1]} to {months[k]} ({costs[k - 1]:.4g} -> {costs[k]:.4g} USD)"})
    return flags


def _idle_flags(rows: pd.DataFrame) -> list[dict]:
    """Resources billed for usage with none consumed (an idle volume, an instance kept but unused)."""
    idle = rows[rows["usage_kind"] == "idle"]  # usage billed with no quantity consumed
    if idle.empty:
        return []
    table = (idle.groupby(["service_name", "resource"]).agg(sum=("cost_usd", "sum"), size=("rows", "sum"))
             .sort_values("sum", ascending=False))
    return [{"kind": "billing_without_usage", "service": service, "resource": resource, "cost_usd": float(total),
             "rows": int(count), "message": f"{service} {resource or '(no resource id)'}: {total:,.2f} USD billed over "
                                            f"{int(count)} row(s) with no usage"}
            for (service, resource), (total, count) in table.head(20).iterrows()]



def bill_alerts(bill: Actuals, budget_usd: float) -> pd.DataFrame:
    """The day the bill's cumulative spend reached 30 / 50 / 80 / 100 % of ``budget_usd`` (no plan needed)."""
    return _crossings(bill.rows, "bill", float(budget_usd), ALERT_PERCENTS)


#: The FOCUS service each billed category is written as in :func:`demo_export`, its unit, and the price per unit
#: a non-compute category's quantity is derived at (compute's quantity is the plan's GPU-hours).
DEMO_SERVICES = {"compute": ("Compute", "Amazon Elastic Compute Cloud", "Hours", None),
                 "storage": ("Storage", "Amazon Simple Storage Service", "GB-Mo", 0.023),
                 "network": ("Networking", "AWS Data Transfer", "GB", 0.09),
                 "logging": ("Management and Governance", "AmazonCloudWatch", "GB", 0.5),
                 "security": ("Security", "AWS Security Hub", "Findings", 0.001)}


def demo_export(plan: Timeline, path, months: int = 3, start: str = "2025-01", factors: dict | None = None,
                idle_usd: float = 0.0) -> Path:
    """A FOCUS CSV export of the plan's first ``months`` as a bill would show them: one row per day, billed
    category and tag set (the plan's billed lines spread evenly over the month, tagged with the plan's team,
    project and model version), each category's cost x ``factors[category]`` (a drift from plan; the quantity
    stays the plan's, so the unit cost drifts too), plus an idle volume billed ``idle_usd`` a day with no usage.
    For demonstrations and tests: the plan's own numbers, so that the review's answers can be checked."""
    import csv
    lines = plan.lines.assign(billed=plan.lines["category"].map(BILLED_AS)).dropna(subset=["billed"])
    keys = [k for k in plan.tag_keys if k in lines]
    monthly = lines.groupby(["month", "billed", *keys])[["cost_usd", "gpu_hours"]].sum()
    first = pd.Period(start, "M")

    def row(day, service_category, service, unit, usd, quantity, resource, tags):
        return {"ChargePeriodStart": f"{day:%Y-%m-%dT00:00:00Z}",
                "ChargePeriodEnd": f"{day + pd.Timedelta(days=1):%Y-%m-%dT00:00:00Z}", "BillingCurrency": "USD",
                "ServiceCategory": service_category, "ServiceName": service, "ChargeCategory": "Usage",
                "EffectiveCost": f"{usd:.6f}", "BilledCost": f"{usd:.6f}", "ConsumedQuantity": f"{quantity:.6f}",
                "ConsumedUnit": unit, "ResourceId": resource, "ProviderName": "AWS", "Tags": tags}

    rows = []
    for index, (usd, gpu_hours) in monthly.iterrows():
        month, category, *values = index
        if month > months:
            continue
        period = first + (month - 1)
        service_category, service, unit, unit_price = DEMO_SERVICES[category]
        days = period.days_in_month
        quantity = gpu_hours if unit_price is None else max(usd, 0.0) / unit_price
        tags = {k: v for k, v in zip(keys, values) if v != UNTAGGED}
        text = json.dumps(tags) if tags else "NULL"
        for day in pd.date_range(period.start_time, periods=days, freq="D"):
            rows.append(row(day, service_category, service, unit, usd * (factors or {}).get(category, 1.0) / days,
                            max(quantity, 0.0) / days, "", text))
    if idle_usd:
        period_days = pd.date_range(first.start_time, (first + (months - 1)).end_time.normalize(), freq="D")
        for day in period_days:
            rows.append(row(day, "Storage", "Amazon Elastic Block Store", "GB-Mo", idle_usd, 0.0, "vol-debug-scratch",
                            json.dumps({"team": "platform", "env": "dev"})))
    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


#: Below this, in USD, an amount is nothing (a tag value with no spend in the plan or the bill is not listed).
NOTHING_USD = 0.005
#: Above this ratio of actual to planned, a difference reads as "x N the plan", not as a percentage in thousands.
TIMES_FROM = 2.0


def versus(planned_usd: float, actual_usd: float, lang: str = "en") -> str:
    """Actual against planned in words: ``+12 %``, ``−40 %``, ``× 1,279 the plan``, ``not in the plan``."""
    if abs(planned_usd) < NOTHING_USD:
        return "" if abs(actual_usd) < NOTHING_USD else t("bill_not_planned", lang)
    ratio = actual_usd / planned_usd
    if ratio >= TIMES_FROM:  # twice the plan and more: "× 8.2 the plan" reads better than "+715 %"
        return t("bill_times_plan", lang).format(times=f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.1f}")
    return f"{(ratio - 1) * 100:+.0f} %".replace("-", "−")


def _months(months: list, lang: str) -> str:
    """The first six of ``months`` (YYYY-MM) as the reader writes them."""
    return ("、" if lang == "zh" else ", ").join(month_text(m, lang) for m in months[:6])


def flag_text(flag: dict, lang: str = "en", currency: str = "USD", rate: float = 1.0) -> str:
    """A flag's message in ``lang``, amounts in ``currency`` at ``rate`` per USD (English: ``flag["message"]``)."""
    if lang != "zh" and currency == "USD" and flag["kind"] != "no_billed_budget":
        return flag["message"]
    kind = flag["kind"]
    money = (lambda usd, digits=0: amount_text(usd * rate, currency, lang)) if lang == "zh" else \
        (lambda usd, digits=0: f"{usd * rate:,.{digits}f} {currency}")  # noqa: E731
    if kind == "over_plan":
        change = versus(flag["planned_usd"], flag["actual_usd"], lang)
        return t("flag_over_plan", lang).format(category=t(flag["category"], lang), actual=money(flag["actual_usd"]),
                                                planned=money(flag["planned_usd"]), change=change,
                                                limit=f"{flag['over_share']:.0%}")
    if kind == "unit_cost_rising":
        return t("flag_unit_cost", lang).format(service=flag["service"], unit=flag["unit"],
                                                change=f"{flag['to_usd'] / flag['from_usd'] - 1:+.0%}",
                                                start=month_text(flag["from_month"], lang),
                                                end=month_text(flag["to_month"], lang),
                                                before=f"{flag['from_usd'] * rate:.4g}", after=f"{flag['to_usd'] * rate:.4g}",
                                                currency=currency)
    if kind == "billing_without_usage":
        return t("flag_idle", lang).format(service=flag["service"], resource=flag["resource"] or "—",
                                           cost=money(flag["cost_usd"], 2), rows=flag["rows"])
    if kind == "outside_plan":
        return t("flag_outside", lang).format(count=len(flag["months"]), months=_months(flag["months"], lang))
    if kind == "partial_month":
        return t("flag_partial_month", lang).format(share=f"{flag['share']:.0%}", month=month_text(flag["month"], lang))
    if kind == "months_missing":
        return t("flag_months_missing", lang).format(count=len(flag["months"]), months=_months(flag["months"], lang))
    if kind == "no_billed_budget":
        return t("flag_no_billed_budget", lang)
    if kind == "plan_not_whole":
        from ..programmes.timeline import warning_text
        key, values = flag["warning"]
        return t("flag_plan_not_whole", lang).format(warning=warning_text(key, values, lang, currency, rate))
    return flag["message"]
