"""The programme: workstreams over months, checked against single estimates and hand arithmetic."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import workbench
from dataclasses import replace

from workbench.formulas import hidden
from workbench.programmes import timeline
from workbench.programmes import programme as pg
from workbench.programmes.programme import Programme, ProgrammeError, Staff, Workstream

MONTH_DAYS = 365.25 / 12
SMALL = {"params": 1e9, "tokens": 20e9, "n_gpus": 8, "gpu": "H100-SXM5-80GB", "staff_fte": 0}


HIDDEN = ("data_processing", "debug", "security")


def plan(*workstreams, horizon=24, base=SMALL, **kw):
    return Programme(name="test", horizon_months=horizon, workstreams=workstreams, base=base, **kw)


def engine_lines(tl):
    """The lines that come from the engine's estimate (not the programme's hidden costs)."""
    return tl.lines[~tl.lines["category"].isin(HIDDEN)]


def test_one_run_costs_what_its_estimate_costs():
    """Placing lines in months moves money in time and loses none: the horizon plus what falls after it is
    the single estimate's total (staff left to the programme)."""
    tl = timeline.evaluate(plan(Workstream(name="run")))
    single = workbench.estimate(workbench.Scenario(**SMALL))
    assert engine_lines(tl)["cost_usd"].sum() + tl.beyond_horizon_usd == pytest.approx(single.total_cost_usd, rel=1e-9)
    # retention (12 months) and archive (36) run past a 24-month horizon; a 60-month one holds everything
    long = timeline.evaluate(plan(Workstream(name="run"), horizon=60))
    assert long.beyond_horizon_usd == pytest.approx(0, abs=1e-6)
    assert engine_lines(long)["cost_usd"].sum() == pytest.approx(single.total_cost_usd, rel=1e-9)


def test_cycles_repeat_the_run_and_reannotation_scales_annotation_and_its_redundancy():
    s = workbench.Scenario(**SMALL)
    est = workbench.estimate(s)
    by_stage = est.lines.groupby(["stage", "category"])["cost_usd"].sum()
    full = timeline.evaluate(plan(Workstream(name="ft", every_months=2, cycles=5), horizon=80))
    assert engine_lines(full)["cost_usd"].sum() == pytest.approx(5 * est.total_cost_usd, rel=1e-9)
    share = timeline.evaluate(plan(Workstream(name="ft", every_months=2, cycles=5, reannotation_share=0.25), horizon=80))
    labels = (est.lines["category"] == "annotation") & (est.lines["stage"] != "evaluation")
    annotation = est.lines.loc[labels, "cost_usd"].sum()
    # the labels are bought again at the share; every release is evaluated in full (human ratings, red-teaming)
    evaluation = est.lines.loc[(est.lines["category"] == "annotation") & ~labels, "cost_usd"].sum()
    assert evaluation > 0
    assert share.lines.loc[share.lines["category"] == "annotation", "cost_usd"].sum() == pytest.approx(
        annotation * (1 + 4 * 0.25) + 5 * evaluation, rel=1e-9)
    # redundancy is (factor - 1) x the stage's other lines, each by its category's weight (the labels bought, not
    # their rework and QA review), in every cycle: it shrinks with the annotation bought again
    r = s.redundancy_factor - 1
    lines = est.lines[~est.lines["item"].str.contains("rework|QA review")]
    weight = lines["category"].map(workbench.plan.contingency.weights()).fillna(0.0) * (lines["category"] != "redundancy")
    weighted = (lines["cost_usd"] * weight).groupby([lines["stage"], lines["category"]]).sum()
    for stage in ("sft", "preference"):
        others = weighted[stage]
        ann = others.get("annotation", 0.0)
        expected = r * (others.sum() + 4 * (others.sum() - ann + 0.25 * ann))
        got = share.lines[(share.lines["stage"] == stage) & (share.lines["category"] == "redundancy")]["cost_usd"].sum()
        assert got == pytest.approx(expected, rel=1e-9)
    assert by_stage["sft"]["redundancy"] > 0


def test_staff_are_paid_every_month_they_are_on():
    p = plan(Workstream(name="run"), horizon=12,
             staff=(Staff(name="core", fte=5, usd_per_month=20000), Staff(name="late", fte=2, usd_per_month=10000, start_month=7)))
    tl = timeline.evaluate(p)
    staff = tl.monthly()["staff"]
    assert list(staff) == [100000.0] * 6 + [120000.0] * 6
    assert (tl.lines.loc[tl.lines["stage"] != "programme", "item"] != "project team").all()  # not counted twice


def test_storage_piles_up_across_cycles_until_retention_ends():
    """Kept checkpoints of each cycle stay in object storage for retention_months: the monthly bill grows with
    each cycle and falls when the first cycles' retention ends."""
    base = {**SMALL, "retention_months": 6, "archive_months": 0}
    tl = timeline.evaluate(plan(Workstream(name="ft", stages=("pretrain",), every_months=1, cycles=12), base=base, horizon=24))
    ckpt = tl.lines[tl.lines["item"] == "checkpoints in object storage"].groupby("month")["cost_usd"].sum()
    ckpt = ckpt.reindex(range(1, 25), fill_value=0.0)
    one = workbench.estimate(workbench.Scenario(**base)).lines
    per_month = one.loc[one["item"] == "checkpoints in object storage", "cost_usd"].sum() / 6
    # a cycle's run is a fraction of a month, so month 7 onwards holds 6 cycles' checkpoints at most
    assert ckpt[2] > ckpt[1] and ckpt[5] > ckpt[4]
    assert ckpt[9] == pytest.approx(6 * per_month, rel=1e-6)
    assert ckpt[20] < ckpt[12] and ckpt[24] == 0


def test_serving_follows_traffic_and_each_live_version_pays_its_replicas():
    s = workbench.Scenario(**{**SMALL, "requests_per_day": 100000, "min_replicas": 1})
    w = Workstream(name="ft", stages=("sft",), every_months=3, cycles=2, serve_months=5, traffic_growth_per_month=0.1,
                   legacy_traffic_share=0.2, changes={"requests_per_day": 100000, "min_replicas": 1})
    tl = timeline.evaluate(plan(w, horizon=12))
    serving = engine_lines(tl)
    serving = serving[serving["stage"] == "inference"]
    # months fully inside version 1's life, before version 2: that month's traffic, priced as one month of serving
    first = tl.lines[(tl.lines["cycle"] == 1) & (tl.lines["stage"] == "sft") & (tl.lines["category"] == "compute")]
    release = first["month"].max()
    month = release + 1
    traffic = 100000 * 1.1 ** (month - 1 - np.floor(workbench.estimate(s).details["sft_days"] / MONTH_DAYS))
    one = workbench.estimate(s.replace(serving_months=1, requests_per_day=traffic, staff_fte=0, serving_staff_fte=0))  # the programme pays its staff
    expected = one.lines.loc[one.lines["stage"] == "inference", "cost_usd"].sum()
    assert serving[serving["month"] == month]["cost_usd"].sum() == pytest.approx(expected, rel=1e-9)
    # the month both versions are live: each runs its own replicas
    both = serving[(serving["month"] == 5) & (serving["item"] == "serving replicas (base)")]
    assert set(both["cycle"]) == {1, 2}
    tokens = tl.kpis()["served_tokens"]
    per_request = s.input_tokens_per_request + s.output_tokens_per_request
    assert tokens[month] == pytest.approx(traffic * per_request * MONTH_DAYS, rel=1e-9)
    assert tokens[12] == 0  # both versions retired


def test_serving_of_several_workstreams_in_one_batch_costs_what_each_costs_alone():
    # the serving months of all workstreams are priced in shared batches; workstreams that differ in size, in an
    # empty (auto) field and in GPU must each cost what they cost in a programme of their own
    ws = (Workstream(name="a", stages=("sft",), every_months=2, cycles=3, serve_months=4, traffic_growth_per_month=0.2,
                     changes={"requests_per_day": 50000}),
          Workstream(name="b", stages=("sft",), start_month=2, every_months=3, cycles=2, serve_months=5,
                     changes={"requests_per_day": 80000, "params": 3e9, "mfu": 0.35}),
          Workstream(name="c", stages=("evaluation",), serve_months=6,
                     changes={"requests_per_day": 20000, "gpu": "A100-SXM4-80GB", "min_replicas": 2}))
    together = timeline.evaluate(plan(*ws, horizon=12)).lines
    for w in ws:
        alone = timeline.evaluate(plan(w, horizon=12)).lines
        mine = together[(together["workstream"] == w.name) & (together["stage"] == "inference")]
        own = alone[alone["stage"] == "inference"]
        assert len(own) and mine.groupby(["month", "cycle", "item"])["cost_usd"].sum().to_dict() == pytest.approx(
            own.groupby(["month", "cycle", "item"])["cost_usd"].sum().to_dict(), rel=1e-12)


def test_alert_months_and_the_over_budget_warning_follow_cumulative_spend():
    p = plan(Workstream(name="run"), horizon=12, staff=(Staff(name="core", fte=1, usd_per_month=10000),),
             budgets={"total": 100000, "staff": 50000}, alert_percents=(30, 50, 80)).replace(start="2027-04")
    tl = timeline.evaluate(p)
    cumulative = tl.cumulative("total")
    alerts = tl.alerts()
    for row in alerts[alerts["resource"] == "total"].itertuples():
        first = int(np.argmax(cumulative.to_numpy() >= row.threshold_usd)) + 1
        assert row.month == first
    staff = alerts[alerts["resource"] == "staff"].set_index("percent")["month"]
    assert list(staff) == [2, 3, 4, 5]  # 10 kUSD a month against 15, 25, 40 and 50 kUSD lines
    assert any("staff budget" in w and "spent by 2027-08 (the horizon ends 2028-03)" in w for w in tl.warnings)
    assert list(alerts[alerts["resource"] == "staff"]["calendar_month"]) == ["2027-05", "2027-06", "2027-07", "2027-08"]


def test_attribution_sums_to_the_total_and_cycles_name_their_version():
    tl = timeline.evaluate(pg.example())
    for key in ("workstream", *tl.tag_keys):
        assert tl.by_tag(key).sum() == pytest.approx(tl.total_cost_usd, rel=1e-12)
    versions = set(tl.by_tag("model_version").index)
    assert {"base", "v1", "v11", timeline.UNTAGGED} <= versions
    table = tl.by_tag("team", by="category")
    assert table.to_numpy().sum() == pytest.approx(tl.total_cost_usd, rel=1e-12)
    with pytest.raises(ProgrammeError, match="tag='colour': is not a tag of this programme"):
        tl.by_tag("colour")


def test_kpis_by_hand_for_one_pretraining_run():
    tl = timeline.evaluate(plan(Workstream(name="run", stages=("pretrain",), debug_gpus=0), horizon=3))
    lines = workbench.estimate(workbench.Scenario(**SMALL)).lines
    pre = lines[lines["stage"] == "pretrain"].set_index("item")["quantity"]
    productive = pre["accelerator time"]
    lost = pre["lost work and restarts"] + pre["checkpoint writes"]
    k = tl.kpis()
    assert k.loc[1, "productive_gpu_hour_share"] == pytest.approx(productive / (productive + lost + pre["trial-and-error and ablation runs"]), rel=1e-9)
    assert k.loc[1, "trained_tokens"] == pytest.approx(20e9)
    training = tl.lines[(tl.lines["month"] == 1) & (tl.lines["stage"] == "pretrain")]["cost_usd"].sum()
    engine = engine_lines(tl)
    assert training > engine[(engine["month"] == 1) & (engine["stage"] == "pretrain")]["cost_usd"].sum()  # + cleaning
    assert k.loc[1, "usd_per_trained_token"] == pytest.approx(training / 20e9)
    assert np.isnan(k.loc[2, "usd_per_trained_token"])  # nothing trained in month 2
    assert np.isnan(k.loc[1, "usd_per_million_served_tokens"])
    fixed = tl.lines[(tl.lines["month"] == 1) & (tl.lines["cost_type"] == "fixed")]["cost_usd"].sum()
    assert k.loc[1, "fixed_share"] == pytest.approx(fixed / k.loc[1, "cost_usd"])


def test_hidden_costs_by_hand():
    """Data cleaning, debug environments, security and content filtering from data/programme_defaults.csv."""
    d = hidden.defaults()
    s = workbench.Scenario(**{**SMALL, "requests_per_day": 50000})
    price = workbench.estimate(s).details["price_per_gpu_hour"]
    w = Workstream(name="run", stages=("pretrain",), every_months=6, cycles=2, serve_months=2,
                   changes={"requests_per_day": 50000}, data_in_other_region=True)
    tl = timeline.evaluate(plan(w, horizon=12))
    by_item = tl.lines.groupby("item")["cost_usd"].sum()
    corpus = 20e9 * s.bytes_per_token
    assert d["cleaning_survive_share"] == 0.1 and d["cleaning_core_hours_per_tb"] == 500
    assert by_item["data cleaning and deduplication"] == pytest.approx(2 * corpus / 0.1 / 1e12 * 500 * d["cpu_usd_per_core_hour"])
    # at the reference cross-region price (no provider or region: Amazon us-east-1, data/region_prices.csv)
    assert by_item["corpus read across regions"] == pytest.approx(2 * corpus / 1e9 * 0.02)
    # 8 GPUs x 40 sessions x (3 h + 1 h idle) a month, from the start month to the last cycle's end (month 7)
    debug = tl.lines[tl.lines["category"] == "debug"]
    assert sorted(debug["month"]) == list(range(1, 8))
    assert debug["cost_usd"].iloc[0] == pytest.approx(8 * 40 * 4 * price)
    assert tl.monthly("item")["security and compliance (identity, audit logs, masking)"].tolist() == [d["security_usd_per_month"]] * 12
    tokens = s.input_tokens_per_request + s.output_tokens_per_request
    records = np.ceil(tokens * 4 / 1000)
    api = timeline.evaluate(plan(w, horizon=12, content_filtering="api"))
    full_month = api.lines[(api.lines["item"] == "content filtering of prompts and responses") & (api.lines["month"] == 2)]
    assert full_month["cost_usd"].sum() == pytest.approx(50000 * MONTH_DAYS * records * 0.38 / 1000)
    assert timeline.evaluate(plan(w, horizon=12, content_filtering=True)).total_cost_usd == api.total_cost_usd
    # the default: a guard model (Llama Guard 3 8B) on the workstream's GPU, a month of serving for its traffic
    guard = tl.lines[(tl.lines["item"] == "content safety: guard model on own GPUs") & (tl.lines["month"] == 2)]
    alone = workbench.estimate(s.replace(params=8e9, serving_months=1, output_tokens_per_request=8,
                                         input_tokens_per_request=2 * s.input_tokens_per_request
                                         + s.output_tokens_per_request))
    replicas = alone.lines[alone.lines["item"].str.startswith("serving replicas")]["cost_usd"].sum()
    assert guard["cost_usd"].sum() == pytest.approx(replicas, rel=1e-9) and replicas > 0
    # at 50,000 requests a day a guard's own replicas cost more than the API's records; at the 70B preset's traffic
    # the guard is about an eighth of the API (README)
    assert guard["cost_usd"].sum() > full_month["cost_usd"].sum()
    never = timeline.evaluate(plan(replace(w, debug_never_released=True), horizon=12))
    assert never.lines[never.lines["category"] == "debug"]["cost_usd"].iloc[0] == pytest.approx(8 * 365.25 * 24 / 12 * price)
    off = timeline.evaluate(plan(replace(w, debug_gpus=0), horizon=12, security_usd_per_month=0, content_filtering=False))
    assert not off.lines["category"].isin(["debug", "security"]).any()
    # debug GPU-hours are not training progress
    assert tl.kpis().loc[3, "productive_gpu_hour_share"] == 0


def test_every_engine_line_has_a_time_profile():
    """A new engine line without a profile would be lost from every programme: the data table must cover all."""
    pricing = workbench.plan.scenario.fields()["pricing"].choices
    for mode in pricing:
        est = workbench.estimate(pricing=mode, serving_months=2, requests_per_day=1e5,
                                 gpu_purchase_usd=30000 if mode == "self_hosted" else None,
                                 provider="ctyun" if mode == "monthly" else "median")  # rents only by the month
        for stage, item in zip(est.lines["stage"], est.lines["item"]):
            profile, klass = timeline.profile_of(stage, item)
            assert profile in timeline.PROFILES and klass in timeline.GPU_HOUR_CLASSES
            assert (profile == "serving") == (stage == "inference") or profile == "fleet"


def test_the_file_form_round_trips_and_toml_reads_the_same():
    p = pg.example()
    again = pg.loads(p.to_json())
    assert again == p and again.to_json() == p.to_json()
    toml = """
schema_version = 1
name = "toml plan"
horizon_months = 6
alert_percents = [30, 50, 80]
[base]
params = 1e9
tokens = 2e10
n_gpus = 8
[budgets]
total = 1e6
[[workstreams]]
name = "run"
stages = ["pretrain"]
tags = {team = "core"}
"""
    from_toml = pg.loads(toml, "toml")
    assert from_toml == Programme(name="toml plan", horizon_months=6, base={"params": 1e9, "tokens": 2e10, "n_gpus": 8},
                                  budgets={"total": 1e6},
                                  workstreams=(Workstream(name="run", stages=("pretrain",), tags={"team": "core"}),))


BAD = [
    ({"horizon_months": 0}, "programme · horizon_months=0: is out of range"),
    ({"horizon_months": 2.5}, "horizon_months=2.5: is not a whole number"),
    ({"budgets": {"gpu": 5}}, "budgets.gpu=5: is not a resource with a budget"),
    ({"budgets": {"total": -1}}, "budgets.total=-1: is out of range"),
    ({"alert_percents": [80, 50]}, "is not in increasing order"),
    ({"colour": "blue"}, "colour='blue': is not a programme field"),
    ({"schema_version": 2}, "schema_version=2: is missing or not supported"),
    ({"base": {"mfu": 2}}, "programme · base.mfu=2"),
    ({"workstreams": []}, "is not a list of 1 or more workstreams"),
]
BAD_WORKSTREAM = [
    ({"every_months": 0}, "workstream 'ft' · every_months=0: is out of range"),
    ({"cycles": 3, "every_months": None}, "workstream 'ft' · cycles=3: needs every_months"),
    ({"start_month": 13}, "workstream 'ft' · start_month=13: is out of range; allowed: a month from 1 to the horizon (12)"),
    ({"stages": ["pretrain", "rlhf"]}, "workstream 'ft' · stages='rlhf': is not a training stage"),
    ({"stages": "pretrain"}, "stages='pretrain': is not a list of stages"),
    ({"changes": {"tokens": "lots"}}, "workstream 'ft' · changes.tokens='lots': is not a number"),
    ({"changes": {"gpu": "nope"}}, "workstream 'ft' · changes.gpu='nope': unknown GPU"),
    ({"changes": {"serving_months": 3}}, "changes.serving_months=3"),
    ({"serve_months": 3, "changes": {"requests_per_day": 0}}, "changes.requests_per_day=0.0: is 0 while serve_months is set"),
    ({"reannotation_share": 1.5}, "reannotation_share=1.5: is out of range"),
    ({"traffic_growth_per_month": 10}, "traffic_growth_per_month=10: is out of range"),
    ({"tags": {"Team": "x"}}, "tags.Team='x': is not a usable tag key"),
    ({"tags": {"month": "x"}}, "tags.month='x': is not a usable tag key"),
    ({"tags": {"team": ""}}, "tags.team='': is not a non-empty text"),
    ({"colour": "red"}, "workstream 'ft' · colour='red': is not a workstream field"),
    ({"name": ""}, "name='': is not a non-empty text"),
]


def _file(**changes):
    data = {"schema_version": 1, "name": "p", "horizon_months": 12, "base": {},
            "workstreams": [{"name": "ft", "stages": ["sft"]}]}
    data.update(changes)
    return data


@pytest.mark.parametrize("changes, message", BAD)
def test_a_bad_programme_field_is_named_with_its_range(changes, message):
    with pytest.raises(ProgrammeError) as error:
        pg.loads(json.dumps(_file(**changes)))
    assert message in str(error.value)


@pytest.mark.parametrize("changes, message", BAD_WORKSTREAM)
def test_a_bad_workstream_field_names_the_workstream(changes, message):
    data = _file()
    data["workstreams"][0].update(changes)
    with pytest.raises(ProgrammeError) as error:
        pg.loads(json.dumps(data))
    assert message in str(error.value)


def test_bad_files_say_what_is_wrong():
    for text, message in (("{", "is not valid JSON"), ("[1]", "is not an object"), (b"\xff\xfe", "is not UTF-8"),
                          ('{"a": 1, "a": 2}', "is given twice")):
        with pytest.raises(ProgrammeError, match=message):
            pg.loads(text)
    with pytest.raises(ProgrammeError, match="is not valid TOML"):
        pg.loads("name = ", "toml")
    data = _file(workstreams=[{"name": "a", "stages": ["sft"]}, {"name": "a", "stages": ["sft"]}])
    with pytest.raises(ProgrammeError, match="workstream 'a' · name='a': is used twice"):
        pg.loads(json.dumps(data))
    staff = _file(staff=[{"name": "core", "fte": 2, "usd_per_month": 1e9}])
    with pytest.raises(ProgrammeError, match="staff 'core' · usd_per_month=1000000000"):
        pg.loads(json.dumps(staff))


def test_a_missing_price_names_the_workstream():
    data = _file(workstreams=[{"name": "ok", "stages": ["sft"]},
                              {"name": "no price", "stages": ["sft"], "changes": {"gpu": "V100-SXM2-32GB", "precision": "fp16"}}])
    with pytest.raises(ProgrammeError, match="workstream 'no price' · changes.provider='median': no price on record"):
        pg.loads(json.dumps(data))


def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, input=stdin)


def test_cli_prints_an_example_that_plans(tmp_path):
    example = _cli("plan", "--example")
    assert example.returncode == 0
    path = tmp_path / "plan.json"
    path.write_text(example.stdout)
    out = _cli("plan", str(path), "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert {"total_cost_usd", "monthly", "by_tag", "alerts", "kpis"} <= set(result)
    expected = timeline.evaluate(pg.load(path))
    assert result["total_cost_usd"] == pytest.approx(expected.total_cost_usd, rel=1e-12)
    assert sum(r["cost_usd"] for r in result["monthly"]) == pytest.approx(result["total_cost_usd"], rel=1e-9)
    assert {"month", "category", "cost_usd", "team", "model_version"} <= set(result["monthly"][0])
    csv = _cli("plan", str(path), "--csv")
    frame = pd.read_csv(__import__("io").StringIO(csv.stdout))
    assert frame["cost_usd"].sum() == pytest.approx(expected.total_cost_usd, rel=1e-5)
    text = _cli("plan", str(path))
    assert "Budget alert lines" in text.stdout and "Warning: The total budget" in text.stdout


def test_cli_refuses_a_bad_file_in_one_line(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_file(horizon_months=500)))
    out = _cli("plan", str(path))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip().count("\n") == 0 and "horizon_months=500: is out of range" in out.stderr
    missing = _cli("plan", str(tmp_path / "nope.json"))
    assert missing.returncode == 1 and "cannot be read" in missing.stderr
    assert _cli("plan").returncode == 2 and _cli("plan", "--example", "--json").returncode == 2


_values = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                    st.text(max_size=8), st.lists(st.integers(0, 200), max_size=3))
_ws = st.fixed_dictionaries({"name": st.text(min_size=1, max_size=5)},
                            optional={k: _values for k in ("start_month", "every_months", "cycles", "reannotation_share",
                                                           "serve_months", "traffic_growth_per_month", "stages", "tags")})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(horizon=_values, workstreams=st.lists(_ws, min_size=0, max_size=3), budgets=st.one_of(
    _values, st.dictionaries(st.sampled_from(["total", "compute", "gpu"]), _values, max_size=2)))
def test_fuzz_a_programme_file_is_planned_or_refused_with_a_message(horizon, workstreams, budgets):
    data = {"schema_version": 1, "name": "fuzz", "horizon_months": horizon, "workstreams": workstreams,
            "budgets": budgets, "base": SMALL}
    try:
        p = pg.loads(json.dumps(data))
    except ProgrammeError as error:
        assert "·" in str(error)
        return
    tl = timeline.evaluate(p)
    assert np.isfinite(tl.total_cost_usd) and tl.total_cost_usd >= 0
    json.dumps(tl.to_dict(), allow_nan=False)


def test_each_release_leaves_a_fine_tuned_checkpoint_that_piles_up():
    # by hand: 7B x 14 bytes = 98 GB, 12 months at 0.023 USD/GB-month = 27.048 USD per fine-tuning stage
    lines = workbench.estimate().lines
    ft = lines[lines["item"] == "fine-tuned checkpoint in object storage"].set_index("stage")["cost_usd"]
    assert ft.to_dict() == pytest.approx({"sft": 27.048, "preference": 27.048})
    assert lines[(lines["item"] == "fine-tuned checkpoint in object storage")
                 & (lines["stage"] == "sft")]["quantity"].iloc[0] == pytest.approx(98 * 12)
    skipped = workbench.estimate(sft_examples=0).lines  # a stage that did not run leaves nothing
    assert skipped.loc[(skipped["item"] == "fine-tuned checkpoint in object storage") & (skipped["stage"] == "sft"),
                       "cost_usd"].iloc[0] == 0
    # in the example programme, month m (2..12) holds the checkpoints of the m - 1 releases so far
    tl = timeline.evaluate(pg.example())
    kept = tl.lines[tl.lines["item"] == "fine-tuned checkpoint in object storage"].groupby("month")["cost_usd"].sum()
    per_release_month = 2 * 27.048 / 12
    assert kept[12] == pytest.approx(10 * per_release_month + kept[2], rel=1e-6)  # 10 whole months more than month 2
    assert np.all(np.diff(kept.to_numpy()) > 0)


def test_content_safety_as_teams_buy_it_and_the_served_token_cost_in_parts():
    """Issue 28: on the 70B preset a self-hosted guard costs less than the serving GPUs (the API's list price cost
    more than them), and the served-token KPI's parts add up to it."""
    from workbench.programmes import programme_presets
    p = programme_presets.preset("base-70b")
    assert p.content_filtering == "self_hosted"
    by_mode = {}
    for mode in ("self_hosted", "api", "none"):
        lines = timeline.evaluate(p.replace(content_filtering=mode)).lines
        serving = lines[lines["stage"] == "inference"]
        by_mode[mode] = (serving.loc[serving["category"] == "security", "cost_usd"].sum(),
                         serving.loc[serving["item"].str.startswith("serving replicas"), "cost_usd"].sum())
    assert by_mode["self_hosted"][0] < by_mode["self_hosted"][1] < by_mode["api"][0]
    assert by_mode["none"][0] == 0 and by_mode["none"][1] == by_mode["api"][1]
    kpis = timeline.evaluate(p).kpis()
    parts = [c for c in kpis.columns if c.startswith("usd_per_million_served_tokens_")]
    assert len(parts) == 5
    served = kpis["usd_per_million_served_tokens"].notna()
    assert served.sum() >= 20
    assert np.allclose(kpis.loc[served, parts].sum(axis=1), kpis.loc[served, "usd_per_million_served_tokens"])
    with pytest.raises(ProgrammeError, match="content_filtering='cheap': is not a way of checking content"):
        p.replace(content_filtering="cheap")


def test_a_reserved_or_owned_programme_pays_its_fleets_busy_or_idle(tmp_path):
    """Issue 28: the example on reserved_1y costs at least the year of its 256 H100 and shows the idle hours and the
    utilisation; a fleet sized to the steady work is cheaper than on demand; owned GPUs carry the purchase."""
    from workbench.programmes.programme import Fleet
    p = pg.example()
    on_demand = timeline.evaluate(p).total_cost_usd
    reserved = timeline.evaluate(p.replace(base={**p.base, "pricing": "reserved_1y"}))
    cluster = next(f for f in reserved.fleets if f["carries"] == "training")
    price = float(workbench.reference.prices.price_per_gpu_hour("H100-SXM5-80GB", "reserved_1y", "median")[0][()])
    assert cluster["count"] == 256 and cluster["term_months"] == 12
    assert cluster["committed_usd"] == pytest.approx(256 * 8766 * price, rel=1e-9)
    assert reserved.total_cost_usd >= cluster["committed_usd"] and reserved.total_cost_usd > on_demand
    idle = reserved.lines[reserved.lines["item"] == "idle committed capacity"]
    assert idle["cost_usd"].sum() == pytest.approx(sum(f["idle_usd"] for f in reserved.fleets), rel=1e-9)
    assert 0 < cluster["utilisation"] < 0.1 and reserved.kpis()["fleet_utilisation"].notna().all()
    assert any(k == "tw_fleet_idle" for k, _ in reserved.warning_items)
    small = timeline.evaluate(p.replace(fleets=(Fleet(name="two H100", gpu="H100", count=2),)))
    assert small.total_cost_usd < on_demand and small.fleets[0]["utilisation"] > 0.9
    owned = timeline.evaluate(p.replace(base={**p.base, "pricing": "self_hosted"}))
    cluster = next(f for f in owned.fleets if f["carries"] == "training")
    assert cluster["term_months"] == 48 and cluster["purchase_usd"] == pytest.approx(256 * 30_000 * 1.69, rel=1e-9)
    assert owned.beyond_horizon_usd > 0.7 * cluster["purchase_usd"]  # three of the four years after the horizon
    file = tmp_path / "r.json"
    file.write_text(p.replace(fleets=(Fleet(name="two H100", gpu="H100", count=2),)).to_json())
    assert pg.load(file).fleets[0].gpu == "H100-SXM5-80GB"
    out = subprocess.run([sys.executable, "-m", "workbench.cli", "plan", str(file)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and "Fleets (committed GPUs" in out.stdout and "two H100" in out.stdout
    with pytest.raises(ProgrammeError, match="fleet 'x' · pricing='spot': is not a way of committing to GPUs"):
        p.replace(fleets=(Fleet(name="x", gpu="H100", count=2, pricing="spot"),))


def test_fleets_from_the_attacking_helper():
    """A fleet no workstream uses is paid idle (it crashed); listing a fleet leaves the rest of a reserved or owned
    programme on demand, never reserved by the hour; a reservation's term is at least its own; a self-hosted fleet
    takes a GPU with a purchase price only."""
    from workbench.programmes.programme import Fleet
    p = pg.example()
    spare = timeline.evaluate(p.replace(fleets=(Fleet(name="spare", gpu="A100-SXM4-80GB", count=8),)))
    assert spare.fleets[0]["utilisation"] == 0 and spare.fleets[0]["idle_usd"] > 0
    on_demand = timeline.evaluate(p).total_cost_usd
    for mode in ("reserved_1y", "reserved_3y", "self_hosted"):
        one = timeline.evaluate(p.replace(base={**p.base, "pricing": mode},
                                          fleets=(Fleet(name="f", gpu="H100", count=1),)))
        assert on_demand - 60_000 < one.total_cost_usd  # the rest rented on demand: no reserved hours for free
        assert any(k == "tw_fleet_overflow" for k, _ in one.warning_items)
    with pytest.raises(ProgrammeError, match="term_months=1: is out of range; allowed: 12 to 180 months for reserved_1y"):
        p.replace(fleets=(Fleet(name="f", gpu="H100", count=1, term_months=1),))
    assert p.replace(fleets=(Fleet(name="f", gpu="MI300X", count=8, pricing="self_hosted"),)).fleets[0].gpu == "MI300X"
    assert workbench.estimate(pfs_throughput_gb_per_s=0.1).total_cost_usd == workbench.estimate().total_cost_usd


def test_two_identical_workstreams_each_pay_their_training():
    """From the attack on issue 33: a second workstream identical to the first (same scenario, a later start) lost
    its pre-training silently: the two were priced as one scenario, whose lines went to the first only."""
    base = dict(provider="aws", gpu="H100", pricing="on_demand", params=7e9, tokens=3e11, n_gpus=64)
    W = pg.Workstream
    p = pg.Programme(name="twice", horizon_months=12, base=base, workstreams=(
        W("a", stages=("pretrain",)), W("b", stages=("pretrain",), start_month=7)))
    lines = timeline.evaluate(p).lines
    hours = lines[lines["stage"] == "pretrain"].groupby("workstream")["gpu_hours"].sum()
    assert hours["a"] > 20_000 and hours["b"] == pytest.approx(hours["a"], rel=1e-12)
    alone = timeline.evaluate(p.replace(workstreams=p.workstreams[:1])).total_cost_usd
    assert timeline.evaluate(p).total_cost_usd > 1.8 * alone  # programme staff and storage are shared
