"""Altair chart builders: a tidy frame in (see :mod:`workbench.report.views`), a chart out.

Every builder takes its titles as arguments (the app passes translated ones) and a ``currency`` code for
axis titles and tooltips. Nothing here fetches anything: rendering offline is the app's concern.

The app's builders hand each input frame to Altair unchanged, through :func:`_source` (a subset is a Vega-Lite
filter, not a second frame). That lets :class:`ChartStack` keep a specification and replace only its data when
a slider moves: building the Altair objects is ~170 ms of a redraw, the data ~2 ms.
"""
from __future__ import annotations

import contextlib
import contextvars
import math

from . import offline

offline.skip_unused_format_checkers()  # before Altair imports jsonschema: 0.6-1.4 s of every kernel's start

import altair as alt  # noqa: E402
import pandas as pd  # noqa: E402

WIDTH = 440
#: Set inside :func:`named_data`: (chart name, {dataset name: frame}).
_sink: contextvars.ContextVar = contextvars.ContextVar("workbench_named_data", default=None)
#: SI prefixes, but B (billion) rather than G for parameter counts.
_BILLIONS = "replace(format(datum.value, '~s'), 'G', 'B')"
#: The same in Chinese: 万 (10^4), 亿 (10^8) and 万亿 (10^12), as a Chinese budget writes amounts and sizes.
_WAN_YI = ("abs(datum.value) >= 1e12 ? format(datum.value / 1e12, ',.4~r') + ' 万亿' : abs(datum.value) >= 1e8 ? "
           "format(datum.value / 1e8, ',.4~r') + ' 亿' : abs(datum.value) >= 1e4 ? format(datum.value / 1e4, ',.4~r') + ' 万' "
           ": format(datum.value, ',.4~r')")


def currency_label(currency: str, lang: str = "en") -> str:
    """The currency in an axis title: ``CNY``, ``USD``; ``元``, ``美元`` for a Chinese reader."""
    return {"CNY": "元", "USD": "美元"}.get(currency, currency) if lang == "zh" else currency


def amount_labels(lang: str = "en") -> str:
    """A Vega label expression for amounts and sizes: ``1.5M``, ``2B`` in English; ``150 万``, ``20 亿`` in Chinese."""
    return _WAN_YI if lang == "zh" else _BILLIONS



def _log_labels(leading_digits: str, label: str = _BILLIONS) -> str:
    """A log axis's label expression showing only ticks whose leading digit is in ``leading_digits``: Vega
    labels every 1-9 of a decade, which overlap on a narrow axis ("3B4B")."""
    digits = ", ".join(f"'{d}'" for d in leading_digits)
    return f"indexof([{digits}], slice(format(datum.value, '.0e'), 0, 1)) >= 0 ? {label} : ''"
#: One colour per category, in CATEGORIES order, so that charts and tables agree.
CATEGORY_COLOURS = ["#4c78a8", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#ff9da6", "#f58518", "#e45756",
                    "#9d755d", "#bab0ac"]


def cost_by_stage(frame: pd.DataFrame, *, title="Cost by stage and category", stage_title="Stage",
                  category_title="Category", cost_title="Cost", currency="USD", lang="en") -> alt.Chart:
    """Stacked bars: one bar per stage, stacked by category. Frame: stage, category, cost, stage_order,
    category_order."""
    categories = frame.sort_values("category_order")["category"].unique().tolist()
    colours = [CATEGORY_COLOURS[i] for i in sorted(frame["category_order"].unique())]
    return alt.Chart(_source(frame, "frame"), title=title, width=WIDTH, height=220).mark_bar().encode(
        y=alt.Y("stage:N", title=stage_title, sort=alt.EncodingSortField("stage_order", op="min")),
        x=alt.X("sum(cost):Q", title=f"{cost_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))),
        color=alt.Color("category:N", title=category_title, scale=alt.Scale(domain=categories, range=colours)),
        order=alt.Order("category_order:Q"),
        tooltip=[alt.Tooltip("stage:N", title=stage_title), alt.Tooltip("category:N", title=category_title),
                 alt.Tooltip("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", format=",.0f")],
    )


def tornado(frame: pd.DataFrame, *, title="Sensitivity", input_title="Input", change_title="Change in total",
            side_title="", value_title="value", currency="USD", lang="en") -> alt.Chart:
    """Horizontal bars from the base total to the total at each input's low and high value, largest swing
    on top, each bar labelled with the input's value at that end. Frame: input, side, value, unit, delta, total,
    order and ``value_text`` (the value as a reader writes it, with its unit)."""
    base = alt.Chart(_source(frame, "frame"), title=title, width=WIDTH, height=max(120, 24 * frame["input"].nunique()))
    y = alt.Y("input:N", title=input_title, sort=alt.EncodingSortField("order", op="min"))
    x = alt.X("delta:Q", title=f"{change_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang)))
    # a label sits beyond its bar's end, or inside it (in white) when the bar is longer than half the longest:
    # outside, the longest bars' labels ran over the input names on the left and the legend on the right
    inside = "(abs(datum.delta) > 0.5 * datum.longest)"
    # a side that changes nothing has no bar: its label sits on its own side of zero (low left, high right)
    right = f"((datum.delta < 0 || (datum.delta == 0 && datum.side_code == 'low')) != {inside})"
    labels = base.transform_calculate(swing="abs(datum.delta)").transform_joinaggregate(longest="max(swing)").mark_text(
        fontSize=10, color=alt.expr(f"{inside} ? 'white' : '#333'"), align=alt.expr(f"{right} ? 'right' : 'left'"),
        dx=alt.expr(f"{right} ? -3 : 3")).encode(y=y, x=x, text="value_text:N")
    return alt.layer(_tornado_bars(base, y, x, frame, input_title, side_title, value_title, change_title, currency),
                     labels)


def _tornado_bars(base, y, x, frame, input_title, side_title, value_title, change_title, currency):
    return base.mark_bar().encode(
        y=y,
        x=x,
        color=alt.Color("side:N", title=side_title, sort=frame["side"].drop_duplicates().tolist(),
                        scale=alt.Scale(domain=frame["side"].drop_duplicates().tolist(), range=["#4c78a8", "#e45756"])),
        tooltip=[alt.Tooltip("input:N", title=input_title), alt.Tooltip("side:N", title=side_title),
                 alt.Tooltip("value:Q", title=value_title, format=",.4~g"), alt.Tooltip("unit:N", title="unit"),
                 alt.Tooltip("delta:Q", title=f"{change_title} [{currency}]", format="+,.0f"),
                 alt.Tooltip("total:Q", title=f"total [{currency}]", format=",.0f")],
    )


def levers(frame: pd.DataFrame, *, title="Levers: saving if nothing goes wrong, and after the risk",
           lever_title="Lever", saving_title="Saving", currency="USD", lang="en") -> alt.Chart:
    """Per lever, two bars: the plain saving and the risk-adjusted one (a lever whose risk outweighs its saving
    goes below zero), in the table's ranking. Frame: lever (its name), order, kind (plain / risk-adjusted), usd."""
    kinds = frame["kind"].drop_duplicates().tolist()
    return alt.Chart(_source(frame, "frame"), title=title, width=WIDTH,
                     height=max(120, 30 * frame["lever"].nunique())).mark_bar().encode(
        y=alt.Y("lever:N", title=lever_title, sort=alt.EncodingSortField("order", op="min")),
        yOffset=alt.YOffset("kind:N", sort=kinds),
        x=alt.X("usd:Q", title=f"{saving_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))),
        color=alt.Color("kind:N", title="", sort=kinds, scale=alt.Scale(domain=kinds, range=["#9ecae9", "#4c78a8"])),
        tooltip=[alt.Tooltip("lever:N", title=lever_title), alt.Tooltip("kind:N", title=""),
                 alt.Tooltip("usd:Q", title=f"{saving_title} [{currency_label(currency, lang)}]", format=",.0f")],
    )


def split(frame: pd.DataFrame, *, title="Pre-training vs fine-tuning vs inference", group_title="Stage",
          cost_title="Cost", share_title="Share", currency="USD") -> alt.Chart:
    """Donut of the cost shares, each arc labelled with its share. Frame: group, cost, share and ``label``."""
    base = alt.Chart(_source(frame, "frame"), title=title, width=260, height=220).encode(
        theta=alt.Theta("cost:Q", stack=True),
        color=alt.Color("group:N", title=group_title, sort=frame["group"].tolist(),
                        scale=alt.Scale(range=["#4c78a8", "#f58518", "#54a24b"])),
        tooltip=[alt.Tooltip("group:N", title=group_title),
                 alt.Tooltip("cost:Q", title=f"{cost_title} [{currency}]", format=",.0f"),
                 alt.Tooltip("share:Q", title=share_title, format=".1%")],
    )
    return alt.layer(base.mark_arc(innerRadius=55, outerRadius=100),
                     base.mark_text(radius=120, fontSize=11).encode(text="label:N"))


def burn_down(burn: pd.DataFrame, alerts: pd.DataFrame, *, title="Planned spend", day_title="Day",
              spent_title="Spent", currency="USD", lang="en") -> alt.LayerChart:
    """Cumulative planned spend over the timeline, a rule per alert line and a point where it is crossed.
    Frames: burn (day, spent); alerts (label, threshold, day, crossed, and ``when``: the date or day it is crossed,
    as the tooltips say it)."""
    when = (alt.Tooltip("when:N", title=day_title) if "when" in alerts.columns
            else alt.Tooltip("day:Q", title=day_title, format=",.1f"))
    line = alt.Chart(_source(burn, "burn")).mark_line(color="#4c78a8").encode(
        x=alt.X("day:Q", title=day_title),
        y=alt.Y("spent:Q", title=f"{spent_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))),
        tooltip=[alt.Tooltip("day:Q", title=day_title, format=",.1f"),
                 alt.Tooltip("spent:Q", title=f"{spent_title} [{currency_label(currency, lang)}]", format=",.0f")],
    )
    # the alert lines are named in a legend: labels on the chart overlap where two lines are close
    names = list(pd.unique(alerts["label"]))
    reds = ["#fdae61", "#f4a582", "#e45756", "#b2182b", "#67001f"]
    colour = alt.Color("label:N", title=None, sort=names,
                       scale=alt.Scale(domain=names, range=[reds[min(4, i + max(0, 5 - len(names)))]
                                                            for i in range(len(names))]))
    rules = alt.Chart(_source(alerts, "alerts")).mark_rule(strokeDash=[4, 3]).encode(
        y="threshold:Q", color=colour,
        tooltip=[alt.Tooltip("label:N", title=""), alt.Tooltip("threshold:Q", title=currency, format=",.0f"), when],
    )
    points = alt.Chart(_source(alerts, "alerts")).transform_filter("datum.crossed").mark_point(
        filled=True, size=60).encode(
        x="day:Q", y="threshold:Q", color=colour,
        tooltip=[alt.Tooltip("label:N", title=""), when])
    return alt.layer(line, rules, points, title=title, width=WIDTH, height=220)


def cost_vs_size(curve: pd.DataFrame, current: pd.DataFrame, *, title="Cost against model size",
                 params_title="Parameters", cost_title="Cost", plan_title="this plan", currency="USD", lang="en") -> alt.LayerChart:
    """Total cost against parameter count at compute-optimal tokens (log-log), the current plan marked.
    Frames: curve (params, tokens, cost); current (params, tokens, cost, label)."""
    tooltip = [alt.Tooltip("params:Q", title=params_title, format=".3~g"), alt.Tooltip("tokens:Q", title="tokens", format=".3~g"),
               alt.Tooltip("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", format=",.0f")]
    line = alt.Chart(_source(curve, "curve")).mark_line(color="#4c78a8", point=True).encode(
        x=alt.X("params:Q", title=params_title, scale=alt.Scale(type="log"), axis=alt.Axis(labelExpr=_log_labels("1", amount_labels(lang)))),
        y=alt.Y("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", scale=alt.Scale(type="log"),
                axis=alt.Axis(labelExpr=_log_labels("125", amount_labels(lang)))),
        tooltip=tooltip)
    plan = alt.Chart(_source(current, "current")).mark_point(color="#e45756", filled=True, size=120, shape="diamond").encode(
        x="params:Q", y="cost:Q", tooltip=[alt.Tooltip("label:N", title=""), *tooltip])
    text = alt.Chart(_source(current, "current")).mark_text(align="left", dx=8, color="#e45756").encode(x="params:Q", y="cost:Q", text="label:N")
    return alt.layer(line, plan, text, title=title, width=WIDTH, height=220)


def compare(frame: pd.DataFrame, *, title="Scenario A against B", category_title="Category", cost_title="Cost",
            scenario_title="Scenario", currency="USD", lang="en") -> alt.Chart:
    """Grouped bars of A and B per category. Frame: category, scenario, cost."""
    return alt.Chart(_source(frame, "frame"), title=title, width=WIDTH, height=220).mark_bar().encode(
        y=alt.Y("category:N", title=category_title, sort=None),
        yOffset=alt.YOffset("scenario:N"),
        x=alt.X("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))),
        color=alt.Color("scenario:N", title=scenario_title, scale=alt.Scale(range=["#bab0ac", "#4c78a8"])),
        tooltip=[alt.Tooltip("category:N", title=category_title), alt.Tooltip("scenario:N", title=scenario_title),
                 alt.Tooltip("cost:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", format=",.0f")],
    )


def sweep(frame: pd.DataFrame, x: str, ys: list[str], *, title: str, x_title: str, y_title: str,
          log_x: bool = False, log_y: bool = False, series_title: str = "", marker: pd.DataFrame | None = None) -> alt.Chart:
    """Lines of one or more columns ``ys`` against ``x`` (a sweep from :mod:`workbench.plan.explore`), with an
    optional ``marker`` frame (columns x, y, label) of points to highlight."""
    long = frame.melt(id_vars=[x], value_vars=ys, var_name="series", value_name="value")
    scale_x = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    scale_y = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    lines = alt.Chart(long).mark_line(point=True).encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=scale_x,
                axis=alt.Axis(labelExpr=_log_labels("125", "datum.label")) if log_x else alt.Axis()),
        y=alt.Y("value:Q", title=y_title, scale=scale_y,
                axis=alt.Axis(labelExpr=_log_labels("125", "datum.label")) if log_y else alt.Axis()),
        color=alt.Color("series:N", title=series_title),
        tooltip=[alt.Tooltip(f"{x}:Q", title=x_title, format=",.4~g"), alt.Tooltip("series:N", title=series_title),
                 alt.Tooltip("value:Q", title=y_title, format=",.4~g")])
    if marker is None:
        return lines.properties(title=title, width=WIDTH, height=260)
    points = alt.Chart(marker).mark_point(color="#e45756", filled=True, size=100, shape="diamond").encode(
        x="x:Q", y="y:Q", tooltip=[alt.Tooltip("label:N", title=""), alt.Tooltip("x:Q", format=",.4~g"),
                                   alt.Tooltip("y:Q", format=",.4~g")])
    text = alt.Chart(marker).mark_text(align="left", dx=8, color="#e45756").encode(x="x:Q", y="y:Q", text="label:N")
    return alt.layer(lines, points, text, title=title, width=WIDTH, height=260)


def use_offline_renderer() -> None:
    """Render charts in JupyterLab from the kernel's bundled Vega (no CDN), as the app does."""
    offline.enable_offline_charts()  # the cached bundle: JupyterChart's own offline switch then has nothing to do
    alt.renderers.enable("jupyter", offline=True)


def calibration_errors(table: pd.DataFrame, *, title="Estimated against reported GPU-hours") -> alt.Chart:
    """Bars of the GPU-hour error per published run for each method (``workbench.plan.calibration.comparison``)."""
    known = table[table["reported_gpu_hours"].notna()]
    long = known.melt(id_vars=["name"], value_vars=["error", "error_leave_one_out", "error_epoch_0375"],
                      var_name="method", value_name="relative_error").rename(columns={"relative_error": "error"})
    names = {"error": "workbench prior", "error_leave_one_out": "prior, leave one out",
             "error_epoch_0375": "6ND at MFU 0.375"}
    long["method"] = long["method"].map(names)
    return alt.Chart(long, title=title, width=WIDTH, height=360).mark_bar().encode(
        y=alt.Y("name:N", title="run", sort=known["name"].tolist()),
        yOffset=alt.YOffset("method:N"),
        x=alt.X("error:Q", title="estimate / reported - 1", axis=alt.Axis(format="%")),
        color=alt.Color("method:N", title="method"),
        tooltip=["name:N", "method:N", alt.Tooltip("error:Q", format="+.1%")])


def cost_range(bins: pd.DataFrame, markers: pd.DataFrame, *, title="Range of total cost", cost_title="Total cost",
               share_title="Share of draws", currency="USD", lang="en") -> alt.LayerChart:
    """Histogram of sampled total costs with P10 / P50 / P90 rules. Frames: bins (low, high, share);
    markers (label, cost)."""
    bars = alt.Chart(_source(bins, "bins")).mark_bar(color="#9ecae9").encode(
        x=alt.X("low:Q", title=f"{cost_title} [{currency_label(currency, lang)}]", axis=alt.Axis(labelExpr=amount_labels(lang))), x2="high:Q",
        y=alt.Y("share:Q", title=share_title, axis=alt.Axis(format="%")), y2=alt.datum(0),
        tooltip=[alt.Tooltip("low:Q", title="from", format=",.0f"), alt.Tooltip("high:Q", title="to", format=",.0f"),
                 alt.Tooltip("share:Q", title=share_title, format=".1%")])
    rules = alt.Chart(_source(markers, "markers")).mark_rule(color="#e45756", strokeDash=[4, 3]).encode(
        x="cost:Q", tooltip=[alt.Tooltip("label:N", title=""), alt.Tooltip("cost:Q", title=currency, format=",.0f")])
    text = alt.Chart(_source(markers, "markers")).mark_text(align="left", dx=3, dy=-4, color="#e45756").encode(
        x="cost:Q", y=alt.value(8), text="label:N")
    return alt.layer(bars, rules, text, title=title, width=WIDTH, height=160)


# -- charts that keep their specification while their data change ------------------------------------------
def _source(frame: pd.DataFrame, key: str):
    """``frame`` itself; inside :func:`named_data`, a reference to it by the name ``<chart>_<key>``, the frame
    being collected for the caller (``key`` is the builder's parameter name, so the caller can find it)."""
    sink = _sink.get()
    if sink is None:
        return frame
    chart, frames = sink
    name = f"{chart}_{key}"
    frames[name] = frame
    return alt.NamedData(name=name)


@contextlib.contextmanager
def named_data(chart: str):
    """Builders called inside reference their frames by name; yields {dataset name: frame}."""
    frames: dict[str, pd.DataFrame] = {}
    token = _sink.set((chart, frames))
    try:
        yield frames
    finally:
        _sink.reset(token)


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows as Vega reads them: plain Python numbers (exact), strings and booleans; NaN and infinities as None."""
    columns = []
    for name in frame.columns:
        values = frame[name].tolist()
        if frame[name].dtype.kind == "f":
            values = [v if math.isfinite(v) else None for v in values]
        columns.append(values)
    return [dict(zip(frame.columns, row)) for row in zip(*columns)]


def _shape(frame: pd.DataFrame) -> tuple:
    """What a builder may read from a frame into its specification, by default: the columns and the distinct
    values, in order, of every column that is not a float (category names, orders, flags). A builder whose
    specification reads less says so in a ``shape`` attribute (see :func:`tornado`), to be rebuilt less often."""
    return (tuple(frame.columns), tuple(str(t) for t in frame.dtypes),
            tuple(tuple(pd.unique(frame[c])) for c in frame.columns if frame[c].dtype.kind != "f"))


def _shape_of(builder, frames: dict) -> tuple:
    own = getattr(builder, "shape", None)
    return own(**frames) if own is not None else tuple((key, _shape(frame)) for key, frame in frames.items())


# The inputs' ranking and the histogram's counts change with every slider; the specifications do not.
tornado.shape = lambda frame: (tuple(frame.columns), frame["input"].nunique(), tuple(pd.unique(frame["side"])))
cost_range.shape = lambda bins, markers: (tuple(bins.columns), _shape(markers))
# the donut's share labels are data; its groups (the legend's order) are shape
split.shape = lambda frame: (tuple(frame.columns), tuple(frame["group"]))


class ChartStack:
    """A vertical stack of charts, each ``name: (builder, {parameter: frame}, {keyword: value})``.

    :meth:`update` builds the Altair specification only when the stack's shape changes (another chart,
    language, currency, title, category or number of bars); otherwise it returns only the new datasets, which
    the front end swaps into the charts it already shows. The specification names its datasets
    ``<chart>_<parameter>``, so both paths agree on the names; ``tests/test_charts.py`` checks that the data
    path draws what a full rebuild would.
    """

    def __init__(self, spacing: int = 28):
        self.spacing = spacing
        self.signature = None
        self.spec: dict | None = None  # without datasets
        self.datasets: dict[str, list[dict]] = {}

    @staticmethod
    def _signature(parts) -> tuple:
        return tuple((name, builder.__qualname__, tuple(sorted((k, repr(v)) for k, v in kwargs.items())),
                      _shape_of(builder, frames))
                     for name, (builder, frames, kwargs) in parts.items())

    def build(self, parts) -> dict:
        """The full Vega-Lite specification (datasets included) for ``parts``."""
        built, datasets = [], {}
        for name, (builder, frames, kwargs) in parts.items():
            with named_data(name) as collected:
                built.append(builder(**frames, **kwargs))
            datasets.update({key: records(frame) for key, frame in collected.items()})
        combined = alt.vconcat(*built, spacing=self.spacing).resolve_scale(color="independent")
        # The builders' output is schema-validated in the tests; skipping validation here halves the build.
        spec = combined.to_dict(validate=False)
        spec["datasets"] = datasets
        return spec

    def update(self, parts) -> tuple[dict | None, dict[str, list[dict]]]:
        """(the specification if it changed, else None; the datasets)."""
        signature = self._signature(parts)
        if signature == self.signature:
            self.datasets = {f"{name}_{key}": records(frame)
                             for name, (_, frames, _) in parts.items() for key, frame in frames.items()}
            return None, self.datasets
        spec = self.build(parts)
        self.datasets = spec.pop("datasets")
        self.spec, self.signature = spec, signature
        return spec, self.datasets

    def full_spec(self) -> dict | None:
        """The specification with the current datasets: what the front end shows."""
        return None if self.spec is None else {**self.spec, "datasets": self.datasets}
# the day (or date) an alert line is crossed moves with every slider: data the tooltip reads, not shape
burn_down.shape = lambda burn, alerts: (tuple(burn.columns), tuple(alerts.columns), tuple(pd.unique(alerts["label"])),
                                        tuple(pd.unique(alerts["crossed"])))
