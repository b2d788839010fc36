"""Tidy frames for the programme view's charts and tables: a :class:`~workbench.programmes.timeline.Timeline` in, a
labelled frame out (costs in the display currency, labels in ``lang``), as :mod:`workbench.report.views` does for one run.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .charts import currency_label
from .csv_export import headed, significant, to_cents, to_csv
from ..plan.estimate import CATEGORIES
from ..reference.i18n import day_text, item_label, month_text, name_label, t
from ..reference.numbers import money
from ..programmes.timeline import Timeline

#: The engine's categories, then the programme's own (hidden costs), in the order charts stack them.
PROGRAMME_CATEGORIES = (*CATEGORIES, "data_processing", "debug", "security")
KPIS = ("usd_per_million_trained_tokens", "usd_per_million_served_tokens", "productive_gpu_hour_share", "fixed_share")
_UNITS = {"usd_per_million_trained_tokens": "per_million", "usd_per_million_served_tokens": "per_million",
          "productive_gpu_hour_share": "share", "fixed_share": "share"}


def rate(timeline: Timeline, currency: str) -> float:
    """Multiplier from USD to ``currency`` (the programme's base scenario's ``cny_per_usd``)."""
    return float(timeline.programme.base_scenario.cny_per_usd) if currency == "CNY" else 1.0


def _order(category: str) -> int:
    return PROGRAMME_CATEGORIES.index(category) if category in PROGRAMME_CATEGORIES else len(PROGRAMME_CATEGORIES)


def monthly(timeline: Timeline, currency="USD", lang="en") -> pd.DataFrame:
    """Cost per month and category: ``month``, ``month_label`` (YYYY-MM), ``category``, ``cost``,
    ``category_order``."""
    table = timeline.lines.groupby(["month", "category"], as_index=False)["cost_usd"].sum()
    table = table[table["cost_usd"] != 0]
    return pd.DataFrame({"month": table["month"].astype(int).to_numpy(),
                         "month_label": timeline.programme.month_labels(table["month"].astype(int)),
                         "category": [t(c, lang) for c in table["category"]],
                         "cost": table["cost_usd"].to_numpy() * rate(timeline, currency),
                         "category_order": [_order(c) for c in table["category"]]})


def cumulative(timeline: Timeline, currency="USD", lang="en") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(spend, alert lines) per budget resource: ``resource``, ``month``, ``month_label`` (YYYY-MM), ``spent``
    (cumulative); ``resource``, ``percent``, ``threshold``, ``label``, ``month`` (first month at or above it; NaN: not
    reached), ``month_label`` (its calendar month, or "not reached" in ``lang``)."""
    k = rate(timeline, currency)
    budgets = timeline.programme.budgets or {}
    resources = list(budgets) or ["total"]
    months = np.arange(1, timeline.programme.horizon_months + 1)
    spend = pd.concat([pd.DataFrame({"resource": budget_label(r, lang), "month": months,
                                     "month_label": timeline.programme.month_labels(months),
                                     "spent": timeline.cumulative(r).to_numpy() * k}) for r in resources],
                      ignore_index=True)
    alerts = timeline.alerts()
    lines = pd.DataFrame({"resource": [budget_label(r, lang) for r in alerts["resource"]],
                          "percent": alerts["percent"].to_numpy(),
                          "threshold": alerts["threshold_usd"].to_numpy() * k,
                          "label": [f"{p:g} %" for p in alerts["percent"]],
                          "month": pd.to_numeric(alerts["month"], errors="coerce").to_numpy(),
                          "month_label": [m if isinstance(m, str) else t("not_reached", lang)
                                          for m in alerts["calendar_month"]]})
    return spend, lines


def budget_label(resource: str, lang="en") -> str:
    """A budget's name as people read it: ``total`` -> Total, ``compute`` -> Compute, ``team:post-training`` ->
    team post-training (the tag's name in ``lang``)."""
    if ":" in resource:
        key, value = resource.split(":", 1)
        return f"{t(key, lang)} {value}"
    return t(resource, lang)


def crossings(timeline: Timeline, currency="USD", lang="en") -> pd.DataFrame:
    """Every budget against every alert line, one row per budget: the budget, its amount in ``currency``, then one
    column per alert line (``50 %``) holding the calendar month it is first reached, or "not reached"."""
    alerts = timeline.alerts()
    if not len(alerts):
        return pd.DataFrame()
    k = rate(timeline, currency)
    rows = []
    for resource, group in alerts.groupby("resource", sort=False):
        row = {t("budget", lang): budget_label(resource, lang),
               amount_header(currency, lang): amount_cell(group["budget_usd"].iloc[0] * k, currency, lang)}
        for percent, month in zip(group["percent"], group["calendar_month"]):
            row[f"{percent:g} %"] = month_text(month, lang) if isinstance(month, str) else t("not_reached", lang)
        rows.append(row)
    return pd.DataFrame(rows)


def attribution(timeline: Timeline, key: str, currency="USD", lang="en") -> pd.DataFrame:
    """Cost per value of tag ``key`` (or ``workstream``) and category: ``value``, ``category``, ``cost``,
    ``category_order``."""
    table = timeline.by_tag(key, "category").stack().rename("cost_usd").reset_index()
    table = table[table["cost_usd"] != 0]
    values = table[key].astype(str)
    return pd.DataFrame({"value": [name_label(v, lang) for v in values] if key == "workstream" else values.to_numpy(),
                         "category": [t(c, lang) for c in table["category"]],
                         "cost": table["cost_usd"].to_numpy() * rate(timeline, currency),
                         "category_order": [_order(c) for c in table["category"]]})


def kpis(timeline: Timeline, currency="USD", lang="en") -> pd.DataFrame:
    """Unit-cost KPIs per month, long: ``month``, ``kpi`` (label), ``value``; money in the display currency per
    million tokens, shares in per cent. Months without a figure (nothing trained or served) are left out."""
    table = timeline.kpis()
    k = rate(timeline, currency)
    values = {"usd_per_million_trained_tokens": table["usd_per_trained_token"] * 1e6 * k,
              "usd_per_million_served_tokens": table["usd_per_million_served_tokens"] * k,
              "productive_gpu_hour_share": table["productive_gpu_hour_share"] * 100,
              "fixed_share": table["fixed_share"] * 100}
    frames = [pd.DataFrame({"month": table.index.to_numpy(),
                            "month_label": timeline.programme.month_labels(table.index.to_numpy()),
                            "kpi": kpi_label(name, currency, lang),
                            "value": series.to_numpy(dtype=float), "kpi_order": KPIS.index(name)})
              for name, series in values.items()]
    out = pd.concat(frames, ignore_index=True)
    return out[np.isfinite(out["value"])].reset_index(drop=True)


def kpi_label(name: str, currency="USD", lang="en") -> str:
    unit = (f"{currency_label(currency, lang)} / 百万 token" if lang == "zh" else f"{currency} / M tokens") \
        if _UNITS[name] == "per_million" else "%"
    return f"{t(name, lang)} [{unit}]"


def tag_keys(timeline: Timeline) -> list[str]:
    """The keys costs can be attributed by: ``workstream``, then the programme's tags."""
    return ["workstream", *timeline.tag_keys]


def monthly_csv(timeline: Timeline, currency: str = "USD", lang: str = "en") -> str:
    """The monthly cost lines as CSV: the calendar month first (``2027-03``; ``2027 年 3 月`` in Chinese), then the
    workstream, cycle, stage, category, item and cost type (their labels in ``lang``), the cost in ``currency`` in
    cents that add up to :attr:`Timeline.total_cost_usd`'s, GPU-hours with six significant digits, and the tags;
    formula-safe. The programme's month number stays as the last column (``programme_month``) for joins."""
    lines = timeline.lines
    code = currency.lower()
    months = timeline.programme.month_labels(lines["month"])
    table = pd.DataFrame({
        "calendar_month": [month_text(m, lang) for m in months],
        "workstream": [name_label(w, lang) for w in lines["workstream"]], "cycle": lines["cycle"].to_numpy(),
        "stage": [t(s, lang) if t(s, lang) != s else name_label(s, lang) for s in lines["stage"]], "category": [t(c, lang) for c in lines["category"]],
        "item": [item_label(i, lang) for i in lines["item"]], "cost_type": [t(c, lang) for c in lines["cost_type"]],
        f"cost_{code}": to_cents(lines["cost_usd"].to_numpy() * rate(timeline, currency)),
        "gpu_hours": significant(lines["gpu_hours"]),
        "gpu_hour_class": [t(f"gpu_class_{c}", lang) for c in lines["gpu_hour_class"]],
    })
    for key in timeline.tag_keys:
        table[key] = lines[key].to_numpy()
    table["programme_month"] = lines["month"].to_numpy()
    return to_csv(headed(table, lang))


def first_run_split(timeline: Timeline) -> tuple[float, float]:
    """(cost of the first training run, cost of everything else) [USD]: :meth:`Timeline.first_run_split`."""
    return timeline.first_run_split()


def first_run_by_category(timeline: Timeline, lang="en") -> pd.DataFrame:
    """The first training run against everything after it, by category, in the shape of :func:`attribution`
    (``value`` is the part's label, ``cost`` in USD): the frame behind "most of the cost comes after the first run"."""
    lines = timeline.lines
    first = timeline.first_run_mask()
    table = lines.assign(part=np.where(first, t("first_run", lang), t("after_first_run", lang)))
    table = table.groupby(["part", "category"], as_index=False, sort=False)["cost_usd"].sum()
    table = table[table["cost_usd"] != 0]
    return pd.DataFrame({"value": table["part"].to_numpy(), "category": [t(c, lang) for c in table["category"]],
                         "cost": table["cost_usd"].to_numpy(), "category_order": [_order(c) for c in table["category"]]})


def cadence_sweep(programme, every_months=(1, 2, 3, 4, 6)) -> pd.DataFrame:
    """What the release cadence costs over the programme's horizon: for each ``every`` (months between releases),
    the release workstreams release as often as fits between their start and the horizon, each release live for
    as many releases as the programme keeps live now. One row per cadence: ``every_months``, ``releases``,
    ``total_cost_usd``, ``first_run_usd``, ``after_first_run_usd``, ``usd_per_release`` (the cost after the
    first run, per release) and the total of each category (``<category>_usd``)."""
    from ..programmes.programme_presets import check_knob, knobs, with_knobs
    from ..programmes.timeline import evaluate
    starts = [w.start_month for w in programme.workstreams if w.every_months or w.serve_months]
    if not starts:
        raise ValueError("the programme has no release workstream (one with every_months or serve_months)")
    rows = []
    for every in every_months:
        every = check_knob("every", every)
        releases = (programme.horizon_months - max(starts)) // int(every) + 1
        p = with_knobs(programme, every=every, cycles=releases, versions=knobs(programme)["versions"])
        tl = evaluate(p)
        first, after = first_run_split(tl)
        by_category = tl.lines.groupby("category")["cost_usd"].sum()
        rows.append({"every_months": int(every), "releases": releases, "total_cost_usd": tl.total_cost_usd,
                     "first_run_usd": first, "after_first_run_usd": after, "usd_per_release": after / releases,
                     **{f"{c}_usd": float(v) for c, v in by_category.items()}})
    return pd.DataFrame(rows).fillna(0.0)


def plan_vs_actual(review, lang="en", rate_usd=1.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(spend, alert lines) per budget of the review (the whole bill when it has no budget): cumulative billed spend
    per month from the bill's first month, planned and actual (the months billed so far): ``resource``, ``month`` (YYYY-MM), ``series``,
    ``cost`` (display currency), ``series_order``; and ``resource``, ``label``, ``threshold``."""
    from ..programmes.programme import RESOURCE_CATEGORIES
    from ..bill.review import BILLED, BILLED_AS
    monthly = review.monthly
    billed = monthly.loc[monthly["actual_usd"] != 0, "plan_month"]
    first, last = (int(billed.min()), int(billed.max())) if len(billed) else (1, 0)
    resources = list(dict.fromkeys(review.alerts["resource"])) or ["bill"]
    frames = []
    for resource in resources:
        categories = set(BILLED) if resource == "bill" else {BILLED_AS[c] for c in RESOURCE_CATEGORIES[resource]}
        mine = monthly[monthly["category"].isin(categories)].groupby(["plan_month", "month"], as_index=False)[
            ["planned_usd", "actual_usd"]].sum()
        label = t(resource, lang) if resource != "bill" else t("bill", lang)
        # both from the bill's first month: the alert lines are on spend the bill shows, as the alert days are
        mine = mine[mine["plan_month"] >= first]
        frames.append(pd.DataFrame({"resource": label, "month": mine["month"], "series": t("planned", lang),
                                    "cost": mine["planned_usd"].cumsum() * rate_usd, "series_order": 0}))
        done = mine[mine["plan_month"] <= last]
        frames.append(pd.DataFrame({"resource": label, "month": done["month"], "series": t("actual", lang),
                                    "cost": done["actual_usd"].cumsum() * rate_usd, "series_order": 1}))
    alerts = review.alerts
    lines = pd.DataFrame({"resource": [t(r, lang) if r != "bill" else t("bill", lang) for r in alerts["resource"]],
                          "label": [f"{p:g} %" for p in alerts["percent"]],
                          "threshold": alerts["threshold_usd"].to_numpy() * rate_usd})
    return pd.concat(frames, ignore_index=True), lines


def own_or_rent(timeline: Timeline, currency="USD", lang="en") -> pd.DataFrame:
    """Each owned fleet's cumulative cost by month, two ways: owned (the purchase in its first month, then its
    electricity and operations) and rented (the hours it carried, at the same GPU's on-demand price). Long:
    ``fleet``, ``month``, ``option`` (label), ``cost``; empty without an owned fleet."""
    columns = ["fleet", "month", "option", "cost"]
    owned = [f for f in timeline.fleets if f.get("purchase_usd") is not None and f.get("rent_usd_per_gpu_hour")]
    if not owned or not len(timeline.fleet_months):
        return pd.DataFrame(columns=columns)
    k = rate(timeline, currency)
    frames = []
    for fleet in owned:
        months = timeline.fleet_months[timeline.fleet_months["fleet"] == fleet["name"]].sort_values("month")
        own = months["running_usd"].cumsum() + fleet["purchase_usd"]
        rent = months["rent_usd"].cumsum()
        for label, values in ((t("own_fleet", lang), own), (t("rent_hours", lang), rent)):
            frames.append(pd.DataFrame({"fleet": fleet["name"], "month": months["month"].to_numpy(),
                                        "option": label, "cost": values.to_numpy(dtype=float) * k}))
    return pd.concat(frames, ignore_index=True)[columns]


def fleets_table(timeline: Timeline, currency="USD", lang="en") -> pd.DataFrame:
    """The fleets as a finance reader reads them: name, GPUs, how bought, months of the term, committed amount,
    what is paid idle in the horizon, the share used, and (owned) the months of use after which owning beats
    renting. Columns in the display language; money rounded in the display currency."""
    from ..reference.i18n import choice_label
    from ..reference.region_prices import region_label
    k = rate(timeline, currency)
    rows = []
    for f in timeline.fleets:
        if f.get("purchase_usd") is None:
            break_even = "–"
        elif f.get("break_even_months") is None:
            break_even = t("never", lang)
        else:
            break_even = t("months_of_use", lang).format(months=f["break_even_months"])
        end = f["start_month"] + f["term_months"] - 1
        rows.append({t("fleet_name", lang): f["name"], t("fleet_gpus", lang): f"{f['count']:,}",
                     t("fleet_bought", lang): " · ".join(
                         [choice_label("pricing", f["pricing"], lang)]
                         + ([choice_label("provider", f["provider"], lang)] if f.get("provider") else [])
                         + ([region_label(f["region"], lang, f.get("provider"))] if f.get("region") else [])),
                     t("fleet_months", lang): f"{f['start_month']}–{end}",
                     t("fleet_committed", lang): money(f['committed_usd'] * k, currency, lang),
                     t("fleet_idle", lang): money(f['idle_usd'] * k, currency, lang),
                     t("fleet_used", lang): "–" if f["utilisation"] is None else f"{f['utilisation']:.0%}",
                     t("fleet_break_even", lang): break_even})
    return pd.DataFrame(rows)


def paid_api(timeline: Timeline) -> dict | None:
    """What the programme's served tokens would cost on a paid API for an open model of its size
    (``data/api_prices.csv``: the cheapest offer of a model within 15 % of its parameters), against what serving them
    itself costs (every inference line: replicas, safety, logs, egress, contingency) [USD]; None when no workstream
    serves, its workstreams serve models of other sizes, or no API price is on record for the size."""
    from ..reference import prices
    serving = [w for w in timeline.programme.workstreams if w.serve_months]
    base = timeline.programme.base_scenario
    sizes = {float(w.scenario(base).params) for w in serving}
    if len(sizes) != 1:
        return None
    params = sizes.pop()
    table = prices.api_prices()
    size = table["model"].str.extract(r"-([0-9.]+)B$")[0].astype(float) * 1e9
    near = table[(size / params).between(1 / 1.15, 1.15)]
    if not len(near):
        return None
    tokens = timeline.months_tokens
    input_tokens, output_tokens = float(tokens["served_input_tokens"].sum()), float(tokens["served_output_tokens"].sum())
    costs = (near["input_usd_per_million"] * input_tokens + near["output_usd_per_million"] * output_tokens) / 1e6
    row = near.loc[costs.idxmin()]
    lines = timeline.lines
    return {"model": row["model"], "provider": row["provider"], "weights": row["weights"],
            "input_usd_per_million": float(row["input_usd_per_million"]),
            "output_usd_per_million": float(row["output_usd_per_million"]), "date": row["date"], "source": row["source"],
            "input_tokens": input_tokens, "output_tokens": output_tokens, "api_usd": float(costs.min()),
            "serving_usd": float(lines.loc[lines["stage"] == "inference", "cost_usd"].sum())}


def paid_api_text(timeline: Timeline, currency="USD", lang="en") -> str:
    """:func:`paid_api` as a sentence in ``lang`` and ``currency``; empty when there is nothing to compare."""
    api = paid_api(timeline)
    if api is None:
        return ""
    k = rate(timeline, currency)
    return t("paid_api", lang).format(
        api=money(api['api_usd'] * k, currency, lang), serving=money(api['serving_usd'] * k, currency, lang),
        model=api["model"], provider=api["provider"],
        # renminbi written with its sign for a Chinese reader; the English sentence puts the currency after both
        price_in=money(api['input_usd_per_million'] * k, currency, lang) if lang == "zh"
        else f"{api['input_usd_per_million'] * k:.3g}",
        price_out=money(api['output_usd_per_million'] * k, currency, lang) if lang == "zh"
        else f"{api['output_usd_per_million'] * k:.3g}", currency="" if lang == "zh" else currency,
        date=t("price_read", lang).format(date=day_text((re.findall(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", str(api["date"])) or
                                                         [str(api["date"])])[-1], lang)))


def amount_header(currency: str, lang: str, label: str | None = None) -> str:
    """The heading of a table's amounts (``label``, default "Amount"): ``Amount [USD]``; in Chinese ``金额`` alone
    (each amount carries its ¥)."""
    label = t("amount", lang) if label is None else label
    return label if lang == "zh" else f"{label} [{currency}]"


def amount_cell(value: float, currency: str, lang: str) -> str:
    """An amount in a table: ``1,234,567`` under an English heading that names the currency; ``¥123.46 万`` in
    Chinese, as a Chinese budget writes it."""
    return money(value, currency, lang) if lang == "zh" else f"{value:,.0f}"


def where_the_money_goes(timeline: Timeline, currency="USD", lang="en") -> pd.DataFrame:
    """The programme's cost by category, largest first, with its share of the total: ``category`` (in ``lang``),
    the amount in ``currency`` (rounded, grouped) and the share (whole per cent)."""
    by = timeline.lines.groupby("category")["cost_usd"].sum().sort_values(ascending=False)
    by = by[by.round() != 0]
    total = float(by.sum())
    k = rate(timeline, currency)
    return pd.DataFrame({t("category", lang): [t(c, lang) for c in by.index],
                         amount_header(currency, lang): [amount_cell(v * k, currency, lang) for v in by],
                         t("share", lang): [f"{v / total:.0%}" if total else "-" for v in by]})
