"""Altair builders for the programme view: a frame of :mod:`workbench.report.programme_views` in, a chart out.

As in :mod:`workbench.report.charts`, every frame goes through ``_source``, so that :class:`~workbench.report.charts.ChartStack`
can keep a specification and swap only its data when a knob moves.
"""
from __future__ import annotations

import altair as alt
import pandas as pd

from .charts import CATEGORY_COLOURS, WIDTH, _source, amount_labels, currency_label

#: The engine's category colours, then data processing, debug environments and security.
COLOURS = [*CATEGORY_COLOURS, "#79706e", "#d67195", "#17becf"]


#: A calendar month's label (the data's YYYY-MM, which also orders the axis) as a Chinese reader writes it.
_MONTH_ZH = "split(datum.value, '-')[0] + ' 年 ' + toNumber(split(datum.value, '-')[1]) + ' 月'"


def _month_axis(lang: str = "en", **options) -> alt.Axis:
    """The month axis: labels at -45 degrees; ``2027 年 3 月`` in Chinese."""
    # on a narrow chart every other month is left out rather than drawn over its neighbour
    return alt.Axis(labelAngle=-45, labelOverlap="parity", **({"labelExpr": _MONTH_ZH} if lang == "zh" else {}),
                    **options)


def _colour(frame: pd.DataFrame, title: str) -> alt.Color:
    categories = frame.sort_values("category_order")["category"].unique().tolist()
    orders = sorted(frame["category_order"].unique())
    return alt.Color("category:N", title=title,
                     scale=alt.Scale(domain=categories, range=[COLOURS[min(i, len(COLOURS) - 1)] for i in orders]))


def monthly_costs(frame: pd.DataFrame, *, title="Cost per month", month_title="Month", category_title="Category",
                  cost_title="Cost", currency="USD", lang="en") -> alt.Chart:
    """Stacked bars: one bar per calendar month, stacked by category. Frame: month_label (YYYY-MM), category, cost,
    category_order."""
    return alt.Chart(_source(frame, "frame"), title=title, width=WIDTH, height=240).mark_bar().encode(
        x=alt.X("month_label:O", title=month_title, axis=_month_axis(lang)),
        y=alt.Y("sum(cost):Q", title=f"{cost_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))),
        color=_colour(frame, category_title), order=alt.Order("category_order:Q"),
        tooltip=[alt.Tooltip("month_label:O", title=month_title), alt.Tooltip("category:N", title=category_title),
                 alt.Tooltip("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", format=",.0f")],
    )


def budget_lines(spend: pd.DataFrame, lines: pd.DataFrame, *, title="Cumulative spend against budget",
                 month_title="Month", spent_title="Spent", currency="USD", line_title="Alert line",
                 crossed_title="Crossed in", lang="en") -> alt.ConcatChart:
    """One small chart per budget: cumulative spend by calendar month, a dashed rule per alert line (50 / 80 /
    100 %) named in a legend (labels on the chart would overlap when two lines are close), and a point in the month
    each line is first reached, with a tooltip. Frames: spend (resource, month_label, spent); lines (resource,
    percent, threshold, label, month, month_label)."""
    resources = list(pd.unique(spend["resource"]))
    per_row = min(3, len(resources))  # more budgets wrap onto further rows rather than run off the page
    width = max(150, (WIDTH - 60 * (per_row - 1)) // max(1, per_row))
    months = list(pd.unique(spend["month_label"]))
    labels = list(pd.unique(lines["label"])) if len(lines) else []
    reds = ["#f4a582", "#e45756", "#b2182b", "#67001f"]
    colour = alt.Color("label:N", title=line_title, sort=labels,
                       scale=alt.Scale(domain=labels, range=[reds[min(3, i + max(0, 4 - len(labels)))]
                                                             for i in range(len(labels))]))  # darker for higher
    charts = []
    for resource in resources:
        only = alt.datum.resource == resource
        x = alt.X("month_label:O", title=month_title, scale=alt.Scale(domain=months), axis=_month_axis(lang))
        line = alt.Chart(_source(spend, "spend")).transform_filter(only).mark_line(point=True, color="#4c78a8").encode(
            x=x, y=alt.Y("spent:Q", title=f"{spent_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))),
            tooltip=[alt.Tooltip("month_label:O", title=month_title),
                     alt.Tooltip("spent:Q", title=f"{spent_title} [{currency_label(currency, lang)}]", format=",.0f")])
        tips = [alt.Tooltip("label:N", title=line_title), alt.Tooltip("threshold:Q", title=currency, format=",.0f"),
                alt.Tooltip("month_label:N", title=crossed_title)]
        rules = alt.Chart(_source(lines, "lines")).transform_filter(only).mark_rule(strokeDash=[4, 3]).encode(
            y="threshold:Q", color=colour, tooltip=tips)
        crossed = alt.Chart(_source(lines, "lines")).transform_filter(only).transform_filter(
            "isValid(datum.month)").mark_point(filled=True, size=70).encode(
            x=alt.X("month_label:O", scale=alt.Scale(domain=months)), y="threshold:Q", color=colour, tooltip=tips)
        charts.append(alt.layer(line, rules, crossed, title=resource, width=width, height=170))
    return alt.concat(*charts, columns=per_row, title=title).resolve_scale(y="independent")


def attribution(frame: pd.DataFrame, *, title="Cost by tag", value_title="Tag value", category_title="Category",
                cost_title="Cost", currency="USD", lang="en") -> alt.Chart:
    """Horizontal bars: one per tag value, stacked by category, largest on top. Frame: value, category, cost,
    category_order."""
    return alt.Chart(_source(frame, "frame"), title=title, width=WIDTH,
                     height=max(80, 26 * frame["value"].nunique())).mark_bar().encode(
        y=alt.Y("value:N", title=value_title, sort=alt.EncodingSortField("cost", op="sum", order="descending")),
        x=alt.X("sum(cost):Q", title=f"{cost_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))),
        color=_colour(frame, category_title), order=alt.Order("category_order:Q"),
        tooltip=[alt.Tooltip("value:N", title=value_title), alt.Tooltip("category:N", title=category_title),
                 alt.Tooltip("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", format=",.0f")],
    )


def kpi_lines(frame: pd.DataFrame, *, title="Unit costs per month", month_title="Month", lang="en") -> alt.FacetChart:
    """One small line chart per KPI (its own scale), calendar month on x. Frame: month_label, kpi, value,
    kpi_order."""
    return alt.Chart(_source(frame, "frame"), width=WIDTH, height=80).mark_line(point=True).encode(
        x=alt.X("month_label:O", title=month_title, axis=_month_axis(lang)),
        y=alt.Y("value:Q", title=None),
        tooltip=[alt.Tooltip("month_label:O", title=month_title), alt.Tooltip("kpi:N", title=""),
                 alt.Tooltip("value:Q", title="", format=",.4~g")],
    ).facet(row=alt.Row("kpi:N", title=None, sort=alt.EncodingSortField("kpi_order", op="min"),
                        header=alt.Header(labelAngle=0, labelAlign="left", labelAnchor="start", labelOrient="top")),
            title=title).resolve_scale(y="independent")


def plan_vs_actual(spend: pd.DataFrame, lines: pd.DataFrame, *, title="Billed spend: plan against actual",
                   month_title="Month", cost_title="Cumulative cost", currency="USD", lang="en") -> alt.ConcatChart:
    """One small chart per budget (or the whole bill): cumulative planned (dashed grey) and actual (blue) billed
    spend by month, with the budget's alert lines. Frames: resource, month, series, cost, series_order;
    resource, label, threshold."""
    resources = list(pd.unique(spend["resource"]))
    per_row = min(2, len(resources))
    width = max(200, (WIDTH - 60 * (per_row - 1)) // max(1, per_row))
    charts = []
    for resource in resources:
        only = alt.datum.resource == resource
        line = alt.Chart(_source(spend, "spend")).transform_filter(only).mark_line(point=True).encode(
            x=alt.X("month:O", title=month_title, axis=_month_axis(lang)),
            y=alt.Y("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))),
            color=alt.Color("series:N", title="", sort=alt.EncodingSortField("series_order"),
                            scale=alt.Scale(range=["#9d9d9d", "#4c78a8"])),
            strokeDash=alt.StrokeDash("series:N", sort=alt.EncodingSortField("series_order"), legend=None,
                                      scale=alt.Scale(range=[[4, 3], [1, 0]])),
            tooltip=[alt.Tooltip("month:O", title=month_title), alt.Tooltip("series:N", title=""),
                     alt.Tooltip("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", format=",.0f")])
        rules = alt.Chart(_source(lines, "lines")).transform_filter(only).mark_rule(
            strokeDash=[4, 3], color="#e45756").encode(
            y="threshold:Q", tooltip=[alt.Tooltip("label:N", title=""),
                                      alt.Tooltip("threshold:Q", title=currency, format=",.0f")])
        labels = alt.Chart(_source(lines, "lines")).transform_filter(only).mark_text(
            align="left", dx=2, dy=-5, color="#e45756", fontSize=10).encode(x=alt.value(0), y="threshold:Q",
                                                                            text="label:N")
        charts.append(alt.layer(line, rules, labels, title=resource, width=width, height=200))
    return alt.concat(*charts, columns=per_row, title=title).resolve_scale(y="independent")


def own_or_rent(frame: pd.DataFrame, *, title="Owning the fleet or renting its hours: cumulative cost",
                month_title="Month", cost_title="Cost", currency="USD", lang="en") -> alt.Chart:
    """Two lines per owned fleet: the cumulative cost of owning it and of renting the hours it carried; where
    they cross, owning has paid for itself. Frame: fleet, month, option, cost."""
    return alt.Chart(_source(frame, "frame"), title=title, width=WIDTH, height=220).mark_line(point=True).encode(
        x=alt.X("month:Q", title=month_title, axis=alt.Axis(tickMinStep=1, format="d")),
        y=alt.Y("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))),
        color=alt.Color("option:N", title="", legend=alt.Legend(orient="bottom", labelLimit=400)),
        detail="fleet:N",
        tooltip=[alt.Tooltip("fleet:N", title=""), alt.Tooltip("option:N", title=""),
                 alt.Tooltip("month:Q", title=month_title),
                 alt.Tooltip("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", format=",.0f")])



# What the budget chart's specification reads (budgets, the months of the axis, the alert lines' names): the month
# a line is crossed moves with every edit and is data, not shape.
budget_lines.shape = lambda spend, lines: (tuple(spend.columns), tuple(pd.unique(spend["resource"])),
                                           tuple(pd.unique(spend["month_label"])), tuple(lines.columns),
                                           tuple(pd.unique(lines["resource"])), tuple(pd.unique(lines["label"])))
