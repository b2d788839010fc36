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


def _axis_labels(chart) -> list[str]:
    """The tick labels Vega draws for ``chart`` (rendered to SVG by vl-convert, the offline renderer's engine)."""
    import re
    import vl_convert
    svg = vl_convert.vegalite_to_svg(chart.to_dict())
    return re.findall(r'<text[^>]*role-axis-label[^>]*>([^<]*)</text>', svg) or re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_chinese_money_axes_read_in_wan_and_yi(est):
    """Issue 31: a Chinese reader's amount axes say 万 and 亿 (Vega's k/M/B suffixes are English), sizes 亿 and
    万亿; the English axes keep M and B."""
    frame = views.stage_category(est, "CNY", "zh")
    frame = frame.assign(cost=frame["cost"] * 100)  # ~1.2 亿 in all
    zh = _axis_labels(charts.cost_by_stage(frame, currency="CNY", lang="zh"))
    en = _axis_labels(charts.cost_by_stage(frame, currency="CNY"))
    assert any(label.endswith(" 亿") or label.endswith(" 万") for label in zh), zh
    assert not any(label[-1:] in "kMB" and label[:1].isdigit() for label in zh), zh
    assert any(label.endswith("M") for label in en), en
    curve = views.size_curve(est.scenario).rename(columns={"cost_usd": "cost"})
    current = pd.DataFrame({"params": [7e9], "tokens": [2e12], "cost": [est.total_cost_usd], "label": ["本方案"]})
    sizes = _axis_labels(charts.cost_vs_size(curve, current, lang="zh"))
    assert "10 亿" in sizes and "1 万亿" in sizes, sizes


def test_chinese_month_axes_read_as_a_chinese_reader_writes_months():
    """The programme's month axes say 2027 年 3 月 in Chinese, in calendar order (the data keep YYYY-MM, which
    orders them: 2027 年 10 月 after 2027 年 9 月)."""
    from workbench.programmes import programme_presets, timeline
    from workbench.report import programme_charts, programme_views
    tl = timeline.evaluate(programme_presets.preset("assistant-7b"))
    zh = _axis_labels(programme_charts.monthly_costs(programme_views.monthly(tl, "CNY", "zh"), lang="zh"))
    months = [label for label in zh if label.endswith(" 月") and " 年 " in label]
    assert months[:3] == ["2027 年 1 月", "2027 年 2 月", "2027 年 3 月"] and "2027 年 12 月" in months, zh
    assert months.index("2027 年 10 月") == months.index("2027 年 9 月") + 1
    assert "2027-01" in _axis_labels(programme_charts.monthly_costs(programme_views.monthly(tl)))
