"""Every chart builder produces a valid Vega-Lite spec (the app skips validation when it redraws)."""
import altair as alt
import pandas as pd
import pytest

import workbench
from workbench.plan import calibration, explore
from workbench.report import charts, views


@pytest.fixture(scope="module")
def est():
    return workbench.estimate()


def test_app_charts_validate(est):
    sens = workbench.sensitivity(est.scenario, base=est)
    burn, alerts = views.burn(est)
    curve = views.size_curve(est.scenario).rename(columns={"cost_usd": "cost"})
    current = pd.DataFrame({"params": [7e9], "tokens": [2e12], "cost": [est.total_cost_usd], "label": ["this plan"]})
    built = [
        charts.cost_by_stage(views.stage_category(est)), charts.split(views.split(est)),
        charts.tornado(views.tornado(sens, est)), charts.burn_down(burn, alerts), charts.cost_vs_size(curve, current),
        charts.cost_range(*views.cost_histogram(workbench.monte_carlo(n=500), est)),
        charts.compare(views.compare_long(views.compare(est, workbench.estimate(params=1e10)))),
    ]
    combined = alt.vconcat(*built).resolve_scale(color="independent")
    spec = combined.to_dict()  # validates against the Vega-Lite schema
    assert len(spec["vconcat"]) == len(built)


def test_notebook_charts_validate():
    frame = explore.context_sweep(workbench.Scenario(), [2048, 4096])
    charts.sweep(frame, "seq_len", ["attention_flops_share"], title="t", x_title="x", y_title="y").to_dict()
    charts.sweep(frame, "seq_len", ["gpu_hours"], title="t", x_title="x", y_title="y", log_x=True,
                 marker=pd.DataFrame({"x": [2048], "y": [1.0], "label": ["a"]})).to_dict()
    charts.calibration_errors(calibration.comparison()).to_dict()


def test_cost_by_stage_keeps_stage_order(est):
    spec = charts.cost_by_stage(views.stage_category(est)).to_dict()
    assert spec["encoding"]["y"]["sort"] == {"field": "stage_order", "op": "min"}
