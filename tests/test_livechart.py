"""Charts that update in place: the data the app swaps into a shown chart draw what a full rebuild would.

The app rebuilds a chart specification only when its shape changes (charts.ChartStack); otherwise it sends
only the datasets. If a builder read something from its data into the specification that the shape leaves out,
the swapped-in chart would differ from a rebuilt one: these tests walk the planner through slider moves,
presets, languages, currencies and a pinned comparison and compare the two after every step.
"""
import numpy as np
import pandas as pd
import pytest

from workbench.report import charts
from workbench.plan.presets import presets
from workbench.plan.scenario import Scenario, fields
from workbench.app.ui import MAIN_FIELDS, Planner


def shown_equals_rebuilt(planner):
    shown = planner.stack.full_spec()
    rebuilt = charts.ChartStack().build(planner._chart_parts())
    assert shown == rebuilt


def test_a_slider_move_sends_data_only_and_draws_what_a_rebuild_draws():
    planner = Planner()
    assert planner.last_chart_rebuilt  # the first drawing is a full specification
    planner.values["tokens"] = 2.4e12
    planner.recompute()
    assert not planner.last_chart_rebuilt
    shown_equals_rebuilt(planner)
    sent = planner.chart.datasets
    assert set(sent) == set(planner.stack.build(planner._chart_parts())["datasets"])
    assert sent["size_current"][0]["tokens"] == 2.4e12  # the new value reached the data


def test_random_walk_through_the_main_controls(planner_steps=40):
    rng = np.random.default_rng(7)
    spec = fields()
    planner = Planner()
    numeric = [n for n in MAIN_FIELDS if spec[n].numeric and spec[n].type != "choice"]
    data_only = 0
    for step in range(planner_steps):
        name = numeric[rng.integers(len(numeric))]
        f = spec[name]
        lo, hi = (f.min, f.max)
        if f.scale == "log":
            lo = max(lo, 1e-3 if lo <= 0 else lo)
            value = float(10 ** rng.uniform(np.log10(lo), np.log10(hi)))
        else:
            value = float(rng.uniform(lo, hi))
        if f.type == "int":
            value = int(round(value))
        planner.values[name] = value
        if not planner.recompute():
            planner.values[name] = planner.scenario.to_dict()[name]
            continue
        data_only += not planner.last_chart_rebuilt
        shown_equals_rebuilt(planner)
    assert data_only >= planner_steps // 4  # the fast path is the common one (else this test proves nothing)


@pytest.mark.parametrize("key", list(presets()))
def test_presets_languages_currencies_and_comparison(key):
    planner = Planner()
    planner.set_scenario(Scenario.from_query(presets()[key]["query"]))
    shown_equals_rebuilt(planner)
    planner.currency_toggle.value = "CNY"
    assert planner.last_chart_rebuilt  # axis titles name the currency
    shown_equals_rebuilt(planner)
    planner.language.value = "zh"
    shown_equals_rebuilt(planner)
    planner.pin_button.click()
    assert "compare" in planner.stack.spec["vconcat"][-1]["title"] or len(planner.stack.spec["vconcat"]) == 7
    planner.values["params"] = planner.scenario.params * 2
    planner.recompute()
    shown_equals_rebuilt(planner)
    planner.unpin_button.click()
    assert len(planner.stack.spec["vconcat"]) == 6
    shown_equals_rebuilt(planner)


def test_burn_down_points_are_the_crossed_alert_lines():
    # the crossing points moved from a filtered copy of the frame to a Vega-Lite filter on the same data
    alerts = pd.DataFrame({"label": ["30 %", "50 %"], "threshold": [1.0, 2.0], "day": [3.0, np.nan],
                           "crossed": [True, False]})
    burn = pd.DataFrame({"day": [0.0, 5.0], "spent": [0.0, 1.5]})
    spec = charts.burn_down(burn, alerts).to_dict()
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["line", "rule", "point"]  # the alert lines are named in a legend, not by text on the chart
    points = spec["layer"][2]
    assert points["transform"] == [{"filter": "datum.crossed"}] and points["encoding"]["color"]["field"] == "label"
    assert charts.records(alerts)[1] == {"label": "50 %", "threshold": 2.0, "day": None, "crossed": False}


def test_records_are_plain_json_with_nan_as_null():
    frame = pd.DataFrame({"a": [1.5, np.nan, np.inf], "b": ["x", "y", "z"], "c": [1, 2, 3], "d": [True, False, True]})
    assert charts.records(frame) == [{"a": 1.5, "b": "x", "c": 1, "d": True}, {"a": None, "b": "y", "c": 2, "d": False},
                                     {"a": None, "b": "z", "c": 3, "d": True}]
    assert charts.records(pd.DataFrame({"x": [0.1 + 0.2]}))[0]["x"] == 0.1 + 0.2  # full precision
