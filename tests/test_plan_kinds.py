"""Plans without pre-training (issue 30): start from open weights, or only serve. Single runs, batches, programmes,
presets and the command line."""
import json

import numpy as np
import pandas as pd
import pytest

from workbench import Scenario, estimate
from workbench.cli import main
from workbench.programmes import programme, programme_presets as pp, timeline
from workbench.programmes.programme import ProgrammeError

SERVED = dict(params=70e9, serving_months=12, requests_per_day=1e6)


@pytest.fixture(scope="module")
def three():
    return {kind: estimate(Scenario(plan_kind=kind, **SERVED)) for kind in ("pretrain", "open_weights", "serve_only")}


def test_open_weights_has_no_pretraining_and_pays_for_its_base_model(three):
    full, open_ = three["pretrain"], three["open_weights"]
    assert set(open_.lines["stage"]) == {"sft", "preference", "evaluation", "inference"}
    assert open_.training_flops == 0
    # 70B in 16 bits is 140 GB, kept in object storage for the retention period at the object tier's price
    stored = open_.lines.set_index("item").loc["open weights in object storage"]
    s = open_.scenario
    assert stored["quantity"] == pytest.approx(140.0 * s.retention_months)
    assert stored["cost_usd"] == pytest.approx(140.0 * s.retention_months * open_.details["object_storage_usd_per_gb_month"])
    # serving is the same model served the same way: the same lines, to the cent
    serving = lambda e: e.lines[e.lines["stage"] == "inference"].set_index("item")["cost_usd"]  # noqa: E731
    assert serving(open_).to_dict() == pytest.approx(serving(full).to_dict())
    # the headline is the fine-tuning's: its GPU-hours are those of the fine-tuning stages' compute
    hours = open_.lines[(open_.lines["unit"] == "GPU-h") & (open_.lines["category"] == "compute")
                        & (open_.lines["stage"] != "inference")
                        & ~open_.lines["item"].isin(["host CPU share"])]["quantity"].sum()
    assert open_.gpu_hours == pytest.approx(hours, rel=1e-9)
    assert 0 < open_.gpu_hours < 0.01 * full.gpu_hours
    # fine-tuned on the fewest whole nodes that hold the model, not on a pre-training cluster
    assert open_.n_gpus <= 64 < full.n_gpus
    assert open_.total_cost_usd < full.total_cost_usd
    assert open_.totals("group")["pretrain"] == 0  # evaluation counts as fine-tuning here


def test_serve_only_has_only_serving(three):
    serve = three["serve_only"]
    assert set(serve.lines["stage"]) == {"inference"}
    assert serve.gpu_hours == 0 and serve.wall_days == 0 and serve.training_flops == 0
    # the serving lines of the full plan, plus the weights: 140 GB stored for the 12 months served
    full = three["pretrain"].totals("stage")["inference"]
    weights = 140.0 * 12 * serve.details["object_storage_usd_per_gb_month"]  # 0.023: the reference row
    redundancy_on_weights = weights * (serve.scenario.redundancy_factor - 1)  # storage carries the contingency
    assert serve.total_cost_usd == pytest.approx(full + weights + redundancy_on_weights, rel=1e-9)
    assert not any("compute-optimal" in w for w in serve.warnings)


def test_pretraining_messages_only_for_pretraining():
    # a 70B model on 1M tokens is far from compute-optimal: said of a pre-training plan only
    tiny = dict(params=70e9, tokens=1e6)
    assert any("compute-optimal" in w for w in estimate(Scenario(**tiny)).warnings)
    assert not any("compute-optimal" in w for w in estimate(Scenario(plan_kind="open_weights", **tiny)).warnings)
    assert "serving_months=0 costs nothing" in " ".join(estimate(Scenario(plan_kind="serve_only")).warnings)


def test_a_batch_of_kinds_is_each_kind_alone(three):
    batch = estimate(Scenario(plan_kind=np.array(["pretrain", "open_weights", "serve_only"], dtype=object), **SERVED))
    for i, kind in enumerate(("pretrain", "open_weights", "serve_only")):
        assert batch.total_cost_usd[i] == pytest.approx(three[kind].total_cost_usd, rel=1e-9)
        assert batch.gpu_hours[i] == pytest.approx(three[kind].gpu_hours, rel=1e-9)
    # the default plan is unchanged by the field's existence
    assert estimate().total_cost_usd == pytest.approx(1_667_524, abs=1)


def test_unknown_kind_is_refused_naming_the_field():
    with pytest.raises(ValueError, match="plan_kind='finetune'.*pretrain, open_weights, serve_only"):
        Scenario(plan_kind="finetune")


def test_finetune_serve_70b_preset():
    tl = timeline.evaluate(pp.preset("finetune-serve-70b"))
    lines = tl.lines
    assert "pretrain" not in set(lines["stage"])
    first, after = tl.first_run_split()
    # the first run is the first fine-tune cycle: cycle 1 of the fine-tuning workstream, serving excluded
    cycle1 = lines[(lines["workstream"] == "monthly fine-tune") & (lines["cycle"] == 1) & (lines["stage"] != "inference")]
    assert first == pytest.approx(cycle1["cost_usd"].sum()) and first > 0
    assert first + after == pytest.approx(tl.total_cost_usd)
    served = lines[lines["stage"] == "inference"].groupby("month")["cost_usd"].sum()
    assert list(served.index) == list(range(1, 13)) and (served > 0).all()
    # the base model is downloaded and kept once, not once per monthly cycle
    weights = lines[lines["item"] == "open weights in object storage"]
    assert set(weights["cycle"]) == {1}
    assert weights["cost_usd"].sum() == pytest.approx(140.0 * 12 * 0.023, rel=0.01)


def test_serve_8b_preset_has_no_training():
    tl = timeline.evaluate(pp.preset("serve-8b"))
    assert set(tl.lines["stage"]) <= {"inference", "programme"}
    assert tl.first_run_workstreams() == [] and tl.first_run_split()[0] == 0
    served = tl.lines[tl.lines["stage"] == "inference"].groupby("month")["cost_usd"].sum()
    assert (served > 0).all() and len(served) == 12


def test_workstream_stages_must_fit_the_plan_kind():
    base = programme.example()
    open_base = {**base.base, "plan_kind": "open_weights"}
    with pytest.raises(ProgrammeError, match="stages=.*pre-trains a model whose plan_kind is open_weights"):
        programme.loads(json.dumps({**json.loads(base.to_json()), "base": open_base}))
    serve = {**json.loads(base.to_json()), "base": {**base.base, "plan_kind": "serve_only"}}
    serve["workstreams"] = [{**serve["workstreams"][1], "stages": ["sft"]}]
    with pytest.raises(ProgrammeError, match="trains a model whose plan_kind is serve_only"):
        programme.loads(json.dumps(serve))
    serve["workstreams"] = [{**serve["workstreams"][0], "stages": [], "serve_months": 0}]
    with pytest.raises(ProgrammeError, match="stages=\\[\\]: is empty and serve_months is 0"):
        programme.loads(json.dumps(serve))


def test_cli_presets(capsys):
    assert main(["plan", "--list-presets"]) in (0, None)
    listed = capsys.readouterr().out
    assert "finetune-serve-70b" in listed and "serve-8b" in listed and "source:" in listed
    assert main(["plan", "--preset", "finetune-serve-70b", "--json"]) in (0, None)
    out = json.loads(capsys.readouterr().out)
    assert out["first_run_usd"] > 0
    assert main(["plan", "--preset", "serve-8b"]) in (0, None)
    assert "No training run: the programme only serves" in capsys.readouterr().out
    assert main(["plan", "--preset", "nope"]) == 2
    assert "allowed: assistant-7b, base-70b, finetune-serve-70b, serve-8b" in capsys.readouterr().err


def test_the_planner_shows_what_the_plan_kind_has():
    from workbench.app.ui import Planner
    p = Planner()
    assert "wb-per-million" in p.headline.value and "wb-memory" in p.headline.value
    p.controls["plan_kind"].menu.value = "open_weights"
    assert p.est.scenario.plan_kind == "open_weights"
    assert "wb-per-million" not in p.headline.value and "Fine-tuning GPU-hours (no pre-training)" in p.headline.value
    assert "wb-hidden" in p.controls["tokens"].widget._dom_classes
    assert "wb-hidden" not in p.controls["sft_examples"].widget._dom_classes
    p.controls["plan_kind"].menu.value = "serve_only"
    assert "wb-gpu-hours" not in p.headline.value and "wb-memory" not in p.headline.value
    assert "wb-hidden" in p.controls["sft_examples"].widget._dom_classes
    p.controls["plan_kind"].menu.value = "pretrain"
    assert "wb-hidden" not in p.controls["tokens"].widget._dom_classes


def test_a_start_date_gives_crossing_dates():
    from workbench.formulas import budget
    from workbench.report import views
    est = estimate(Scenario(budget_usd=1e6, start_date="2027-02-01"))
    alerts = budget.crossings(est)
    for day, date in zip(alerts["day"], alerts["date"]):  # the day the line is crossed on, counted from day 0
        assert date == str(np.datetime64("2027-02-01") + np.timedelta64(int(np.floor(day)), "D"))
    _, frame = views.burn(est)
    assert list(frame["when"]) == list(alerts["date"])
    undated = views.burn(estimate(Scenario(budget_usd=1e6)), lang="zh")[1]
    assert undated["when"].iloc[0] == f"第 {undated['day'].iloc[0]:,.1f} 天"
    with pytest.raises(ValueError, match="start_date='2027-02-30': is not a calendar date"):
        Scenario(start_date="2027-02-30")


def test_the_readme_figures_of_the_new_presets():
    tl = timeline.evaluate(pp.preset("finetune-serve-70b"))
    assert round(tl.total_cost_usd) == 2_521_828
    alerts = tl.alerts().set_index("percent")["month"]
    assert (alerts[50.0], alerts[80.0]) == (8, 12)
    assert pd.isna(alerts[100.0])  # the 3 million are not all spent in the year
    assert round(timeline.evaluate(pp.preset("serve-8b")).total_cost_usd) == 436_146


def test_serving_is_compared_with_a_paid_api_for_the_same_tokens():
    from workbench.report import programme_views as pv
    tl = timeline.evaluate(pp.preset("serve-8b"))
    api = pv.paid_api(tl)
    run = tl.programme.workstreams[0].scenario(tl.programme.base_scenario)
    # input and output tokens in the ratio of a request's, the API's price per million of each (Llama 3.1 8B)
    assert api["model"] == "Llama-3.1-8B" and api["input_usd_per_million"] == 0.055
    assert api["input_tokens"] / api["output_tokens"] == pytest.approx(
        run.input_tokens_per_request / run.output_tokens_per_request)
    assert api["input_tokens"] + api["output_tokens"] == pytest.approx(tl.months_tokens["served_tokens"].sum())
    assert api["api_usd"] == pytest.approx(0.055 * (api["input_tokens"] + api["output_tokens"]) / 1e6)
    assert api["serving_usd"] == pytest.approx(tl.lines.loc[tl.lines["stage"] == "inference", "cost_usd"].sum())
    assert api["api_usd"] < api["serving_usd"]  # a small open model's API is far cheaper than one's own replicas
    assert "The same traffic on a paid API: 17,320 USD" in pv.paid_api_text(tl)
    # no serving, or no API price for the size: nothing to compare
    assert pv.paid_api(timeline.evaluate(pp.preset("base-70b").replace(
        base={**pp.preset("base-70b").base, "params": 30e9}))) is None


def test_where_the_money_goes_adds_up():
    from workbench.report import programme_views as pv
    tl = timeline.evaluate(pp.preset("finetune-serve-70b"))
    table = pv.where_the_money_goes(tl)
    amounts = table["Amount [USD]"].str.replace(",", "").astype(float)
    assert list(table["Category"])[:3] == ["Staff", "Compute", "Annotation"]  # 5 people for a year lead
    assert amounts.iloc[0] == 1_200_000 and amounts.sum() == pytest.approx(tl.total_cost_usd, abs=len(table))
    assert (amounts.diff().dropna() <= 0).all()


def test_what_the_attack_found_in_programmes():
    import json as js
    from workbench.app.programme_app import ProgrammeView
    from workbench.programmes.programme import ProgrammeError
    from workbench.programmes import programme as pg
    # serving only keeps the traffic that was served, and adds none
    view = ProgrammeView("assistant-7b")
    served_before = timeline.evaluate(view.programme).months_tokens["served_tokens"].sum()
    view.editor.controls[("base", "plan_kind")][0].value = "serve_only"
    assert [w.name for w in view.programme.workstreams] == ["monthly fine-tune"]
    assert view.timeline.months_tokens["served_tokens"].sum() == pytest.approx(served_before, rel=0.02)
    # a link or file that would serve tens of thousands of version-months is refused before it is priced
    data = js.loads(pg.example().to_json())
    data["horizon_months"] = 120
    data["workstreams"] = [{**data["workstreams"][1], "name": f"w{i}", "start_month": 1, "cycles": 120,
                            "every_months": 1, "serve_months": 120.0} for i in range(2)]
    with pytest.raises(ProgrammeError, match="serve more than 10,000 version-months"):
        pg.loads(js.dumps(data))
    # a truncated link says so
    link = pp.encode_plan(pp.preset("serve-8b"))
    with pytest.raises(ProgrammeError, match="is incomplete: the link was cut short"):
        pp.decode_plan(link[: len(link) // 2])
    # clearing the first month, or typing inf in a count, is a message, never an exception
    view.editor.controls[("start",)][0].value = "2028-03"
    view.editor.controls[("start",)][0].value = ""
    assert view.programme.start is None
    view.editor.controls[("horizon_months",)][0].value = "inf"
    assert "is not a number" in view.banner.value
    # a single scenario without pre-training reviews as a programme (the bill review's path)
    for kind in ("open_weights", "serve_only"):
        plan = pg.of_scenario(Scenario(plan_kind=kind, serving_months=6))
        assert timeline.evaluate(plan).total_cost_usd == pytest.approx(
            estimate(Scenario(plan_kind=kind, serving_months=6)).total_cost_usd, rel=0.02)
    # workstreams with different start dates price in one batch
    data = js.loads(pg.example().to_json())
    data["workstreams"][0]["changes"] = {"start_date": "2027-01-01"}
    data["workstreams"][1]["changes"] = {**data["workstreams"][1]["changes"], "start_date": "2027-02-01"}
    assert timeline.evaluate(pg.loads(js.dumps(data))).total_cost_usd > 0
