"""Numbers that must add up (issue 26): served traffic equals demand whatever the cadence, what the horizon holds
plus what lies beyond it is the whole cost, risks are costs, a single scenario's plan carries its whole estimate,
exports sum to their totals; each reproducer of the issue is a test here, as given."""
import io
import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import workbench
from workbench.programmes import programme as pg
from workbench.report import programme_views
from workbench.bill import review
from workbench.programmes import timeline
from workbench.programmes.levers import levers
from workbench.programmes.placement import DAYS_PER_MONTH, live_shares
from workbench.programmes.programme import Programme, ProgrammeError, Staff, Workstream

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
ABUTTING = {"schema_version": 1, "name": "abutting releases", "horizon_months": 8,
            "base": {"params": 7e9, "n_gpus": 64, "requests_per_day": 1e8, "staff_fte": 0},
            "security_usd_per_month": 0, "content_filtering": True,
            "workstreams": [{"name": "ft", "stages": ["sft"], "start_month": 1, "every_months": 2, "cycles": 4,
                             "serve_months": 2.0, "legacy_traffic_share": 0.9, "debug_gpus": 0}]}
SMALL = {"params": 1e9, "tokens": 20e9, "n_gpus": 8, "staff_fte": 0, "requests_per_day": 1e6}


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True,
                          input=stdin, timeout=120)


def demand_tokens(p: Programme) -> np.ndarray:
    """Tokens asked for each month, computed apart from the timeline: the workstream's traffic at every moment
    any of its versions is live (its releases at cycle start + its training stages' days)."""
    out = np.zeros(p.horizon_months)
    base = p.base_scenario
    for w in p.workstreams:
        if not w.serve_months:
            continue
        s = w.scenario(base).replace(staff_fte=0.0, serving_months=0.0)
        d = workbench.estimate(s).details
        days = sum(float(d["pretrain_days_with_overheads" if st == "pretrain" else f"{st}_days"]) for st in w.stages)
        releases = np.array(w.cycle_starts()) + days / DAYS_PER_MONTH
        tokens = s.input_tokens_per_request + s.output_tokens_per_request
        for m in range(p.horizon_months):
            edges = sorted({m, m + 1, *[x for r in releases for x in (r, r + w.serve_months) if m < x < m + 1]})
            live = sum(b - a for a, b in zip(edges, edges[1:])
                       if any(r <= a + 1e-12 and r + w.serve_months >= b - 1e-12 for r in releases))
            traffic = s.requests_per_day * (1 + w.traffic_growth_per_month) ** max(0.0, m - np.floor(releases[0]))
            out[m] += traffic * tokens * DAYS_PER_MONTH * live
    return out


# -- 1. served traffic -----------------------------------------------------------------------------------
def test_abutting_releases_serve_every_month_whole():
    """The issue's reproducer: serving 2.0 months, releases every 2 months with 90 % kept on the old version."""
    tl = timeline.evaluate(pg.Programme.from_dict(ABUTTING))
    served = tl.months_tokens["served_tokens"].to_numpy()
    assert served[1:] == pytest.approx(np.full(7, served[1]), rel=1e-9)  # once the first version is out
    assert served == pytest.approx(demand_tokens(tl.programme), rel=1e-9)
    shorter = timeline.evaluate(pg.Programme.from_dict({**ABUTTING, "workstreams": [
        {**ABUTTING["workstreams"][0], "serve_months": 1.9}]}))
    # 1.9 months leaves each version's last 0.1 month uncovered: those weeks serve nothing, and are said
    assert shorter.total_cost_usd < tl.total_cost_usd
    assert shorter.months_tokens["served_tokens"].to_numpy() == pytest.approx(demand_tokens(shorter.programme))
    assert any(key == "tw_serving_gap" for key, _ in shorter.warning_items)


def test_live_shares_split_each_moment_among_the_live_versions():
    # versions released at 0.5 and 1.5, each live 1 month, 20 % on the older: month [1, 2)
    live, carried = live_shares(np.array([0.5, 1.5]), 1.0, 0.2, 1.0, 2.0)
    assert live.tolist() == [0.5, 0.5] and carried.tolist() == pytest.approx([0.5, 0.5])  # alone in each half
    live, carried = live_shares(np.array([0.0, 0.5, 1.5]), 2.0, 0.2, 1.0, 2.0)
    # [1, 1.5): v0 and v1 live (v1 newest: 0.8); [1.5, 2): all three (v2: 0.8, the others 0.1 each)
    assert live.tolist() == [1.0, 1.0, 0.5]
    assert carried.tolist() == pytest.approx([0.5 * 0.2 + 0.5 * 0.1, 0.5 * 0.8 + 0.5 * 0.1, 0.5 * 0.8])
    assert carried.sum() == pytest.approx(1.0)


release_plans = st.fixed_dictionaries({
    "every": st.integers(1, 4), "cycles": st.integers(1, 5), "serve": st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0, 5.5]),
    "legacy": st.sampled_from([0.0, 0.1, 0.5, 0.9]), "start": st.integers(1, 3), "growth": st.sampled_from([0.0, 0.05]),
    "stages": st.sampled_from([("sft",), ("sft", "evaluation"), ("preference",)])})


def release_programme(r, horizon=10, **changes):
    w = Workstream(name="ft", stages=r["stages"], start_month=r["start"], every_months=r["every"],
                   cycles=r["cycles"], serve_months=r["serve"], legacy_traffic_share=r["legacy"],
                   traffic_growth_per_month=r["growth"], debug_gpus=0)
    return Programme(name="p", horizon_months=horizon, workstreams=(replace(w, **changes),), base=SMALL,
                     security_usd_per_month=0)


@settings(max_examples=40, **SETTINGS)
@given(release_plans)
def test_served_tokens_equal_demand_whatever_the_cadence(r):
    p = release_programme(r)
    tl = timeline.evaluate(p)
    assert tl.months_tokens["served_tokens"].to_numpy() == pytest.approx(demand_tokens(p), rel=1e-9, abs=1e-3)


@settings(max_examples=25, **SETTINGS)
@given(release_plans, st.sampled_from(["serve", "cycles", "horizon", "traffic", "growth", "staff"]))
def test_growing_a_driver_never_lowers_horizon_plus_beyond(r, driver):
    p = release_programme(r)
    grown = {"serve": lambda: release_programme(r, serve_months=r["serve"] + 1),
             "cycles": lambda: release_programme(r, cycles=r["cycles"] + 1),
             "horizon": lambda: release_programme(r, horizon=12),
             "traffic": lambda: replace(p, base={**SMALL, "requests_per_day": 2e6}),
             "growth": lambda: release_programme(r, traffic_growth_per_month=r["growth"] + 0.05),
             "staff": lambda: replace(p, staff=(Staff(name="team", fte=1, usd_per_month=1e4),))}[driver]()
    before, after = timeline.evaluate(p), timeline.evaluate(grown)
    whole = lambda tl: tl.total_cost_usd + tl.beyond_horizon_usd  # noqa: E731
    assert whole(after) >= whole(before) * (1 - 1e-12)


def test_one_more_serving_month_lowers_a_total_by_less_than_a_replica_month_at_most():
    """The attacking helper's programme: serving 6.5 months instead of 6 keeps a second version live in month 15,
    taking 90 % of the traffic; each version picks its own replica size for its traffic, and the two together cost
    1,457 USD less than one version alone (of 28.2 M). Bounded: at most one replica-month of the split month."""
    d = {"schema_version": 1, "name": "m", "horizon_months": 15, "base": {"tokens": 2e10, "staff_fte": 0},
         "security_usd_per_month": 0,
         "workstreams": [{"name": "w0", "stages": ["pretrain", "sft"], "start_month": 9, "every_months": 4,
                          "cycles": 5, "changes": {"requests_per_day": 5e7, "params": 7e9, "n_gpus": 512},
                          "serve_months": 6, "legacy_traffic_share": 0.9, "debug_gpus": 0}]}
    totals = []
    for months in (6, 6.5, 7, 8):
        d["workstreams"][0]["serve_months"] = months
        tl = timeline.evaluate(Programme.from_dict(d))
        totals.append(tl.total_cost_usd + tl.beyond_horizon_usd)
    est = workbench.estimate(workbench.Scenario(params=7e9, tokens=2e10, n_gpus=512, requests_per_day=5e7,
                                                serving_months=1))
    replica_month = est.details["serving_replica_gpus"] * est.details["price_per_gpu_hour"] * 730.5 * 1.3
    assert all(b - a > -replica_month for a, b in zip(totals, totals[1:]))
    assert max(totals) - min(totals) < replica_month  # the same tokens served: only the split moves


# -- 2. what the horizon holds plus what lies beyond ---------------------------------------------------------
def test_cleaning_of_a_cycle_after_the_horizon_is_counted_beyond_it():
    """The issue's reproducer: the second cycle's cleaning (3,568,000 USD with these settings) was in neither amount."""
    work = {"name": "pt", "stages": ["pretrain"], "every_months": 3, "cycles": 2,
            "cleaning_core_hours_per_tb": 100000, "cleaning_survive_share": 0.01}
    short = Programme.from_dict({"schema_version": 1, "name": "x", "horizon_months": 3, "base": {"params": 7e9},
                                 "security_usd_per_month": 0, "workstreams": [work]})
    long = short.replace(horizon_months=60)
    a, b = timeline.evaluate(short), timeline.evaluate(long)
    cleaning = b.lines.loc[b.lines["category"] == "data_processing", "cost_usd"]
    assert len(cleaning) == 2 and cleaning.iloc[1] == pytest.approx(3_568_000, rel=0.01)
    assert a.total_cost_usd + a.beyond_horizon_usd == pytest.approx(b.total_cost_usd + b.beyond_horizon_usd, rel=1e-9)


work_plans = st.fixed_dictionaries({
    "stages": st.sampled_from([("pretrain",), ("sft", "preference", "evaluation"), ("pretrain", "sft"), ("sft",)]),
    "every": st.integers(1, 6), "cycles": st.integers(1, 4), "start": st.integers(1, 3),
    "horizon": st.integers(3, 12), "debug": st.sampled_from([0.0, 8.0]), "region": st.booleans(),
    "share": st.sampled_from([1.0, 0.3])})


@settings(max_examples=25, **SETTINGS)
@given(work_plans)
def test_horizon_plus_beyond_is_every_cycle_priced_alone(r):
    """For every workstream, what the horizon holds plus what lies beyond it equals the cost of its cycles laid
    out on a horizon that holds them all (its lines but those paid by the month: staff, security, serving)."""
    w = Workstream(name="w", stages=r["stages"], every_months=r["every"], cycles=r["cycles"], start_month=r["start"],
                   debug_gpus=r["debug"], data_in_other_region=r["region"], reannotation_share=r["share"])
    p = Programme(name="p", horizon_months=r["horizon"], workstreams=(w,), base=SMALL, security_usd_per_month=0)
    cut, whole = timeline.evaluate(p), timeline.evaluate(p.replace(horizon_months=120))
    assert cut.total_cost_usd + cut.beyond_horizon_usd == pytest.approx(
        whole.total_cost_usd + whole.beyond_horizon_usd, rel=1e-9)
    # and each cycle's engine lines are the single estimate's lines for its stages (annotation bought again at share)
    est = workbench.estimate(w.scenario(p.base_scenario).replace(staff_fte=0.0)).lines
    mine = est[est["stage"].isin(w.stages) & (est["item"] != "project team")]
    engine = whole.lines[~whole.lines["category"].isin(["data_processing", "debug", "security"])
                         & (whole.lines["item"] != "corpus read across regions")]
    first = engine[engine["cycle"] == 1]["cost_usd"].sum()
    tail = whole.beyond_horizon_usd if r["cycles"] == 1 and not r["region"] else None
    if tail is not None:  # one cycle: its lines, in the horizon or after it, are the estimate's to the cent
        assert first + tail == pytest.approx(mine["cost_usd"].sum(), rel=1e-9)


# -- 3. tag keys -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", pg.FRAME_COLUMNS + ("tags", "trained_tokens", "served_tokens", "served_input_tokens",
                                                  "calendar_month"))
def test_a_tag_key_cannot_overwrite_a_timeline_column(key):
    file = {**ABUTTING, "workstreams": [{**ABUTTING["workstreams"][0], "tags": {key: "x"}}]}
    with pytest.raises(ProgrammeError, match=rf"tags.{key}='x': is not a usable tag key"):
        pg.Programme.from_dict(file)


def test_every_column_of_the_timeline_is_reserved():
    p = pg.example()
    tl = timeline.evaluate(p)
    assert set(tl.lines.columns) - set(tl.tag_keys) <= set(pg.RESERVED_TAGS)
    assert set(tl.months_tokens.columns) - {"month"} <= set(pg.RESERVED_TAGS)


# -- 4. a risk is a cost -----------------------------------------------------------------------------------
def test_programme_lever_risks_are_never_negative_when_a_delay_pushes_serving_out():
    """The issue's reproducer: 70B pre-training on 1,024 GPUs, served 24 months, on a 6-month horizon."""
    p = Programme.from_dict({"schema_version": 1, "name": "delay", "horizon_months": 6,
                             "base": {"params": 70e9, "n_gpus": 1024, "requests_per_day": 1e6},
                             "workstreams": [{"name": "pt", "stages": ["pretrain"], "serve_months": 24}]})
    table = levers(p)
    priced = table[table["applicable"] & table["risk_priced"]]
    assert {"spot_pretrain", "fp8", "log_sampling"} <= set(priced["lever"])
    assert (priced["risk_usd"] > 0).all()
    assert (table.loc[table["applicable"], "risk_adjusted_saving_usd"]
            <= table.loc[table["applicable"], "saving_usd"] + 1e-6).all()


@settings(max_examples=6, **SETTINGS)
@given(st.integers(2, 8), st.sampled_from([0.0, 6.0, 24.0]), st.sampled_from([7e9, 13e9]),
       st.sampled_from([64, 256]))
def test_no_programme_lever_has_a_negative_risk(horizon, serve, params, gpus):
    p = Programme(name="p", horizon_months=horizon, base={"params": params, "n_gpus": gpus, "requests_per_day": 1e6},
                  workstreams=(Workstream(name="pt", stages=("pretrain",), serve_months=serve),
                               Workstream(name="ft", stages=("sft",), every_months=2, cycles=3, start_month=2,
                                          serve_months=serve / 4)))
    table = levers(p)
    usable = table[table["applicable"]]
    assert (usable["risk_usd"] >= -1e-6).all(), usable[["lever", "risk_usd"]]


# -- 5. a single scenario as the plan ----------------------------------------------------------------------
def test_a_single_scenario_plan_carries_its_whole_estimate(tmp_path):
    """The issue's reproducer: 70B, 10 FTE for 30 months; the bill's plan was 11,790,092 of 18,289,455 USD."""
    out = cli("estimate", "--params", "70B", "--staff-fte", "10", "--staff-months", "30", "--json")
    assert out.returncode == 0, out.stderr
    (tmp_path / "s70.json").write_text(out.stdout)
    total = json.loads(out.stdout)["total_cost_usd"]
    assert round(total) == 14_384_035  # 14,704,673 before the runs added and read again on 2026-12-05; 15,975,198 before the layout MFU model (issue 29)
    from focus_generator import write_export
    write_export(tmp_path / "bill.csv", 200)
    run = cli("actuals", str(tmp_path / "bill.csv"), "--plan", str(tmp_path / "s70.json"), "--start", "2025-03",
              "--json")
    assert run.returncode == 0, run.stderr
    plan = timeline.evaluate(pg.of_scenario(review.load_plan(str(tmp_path / "s70.json")).programme.base_scenario))
    cleaning = plan.lines.loc[plan.lines["category"] == "data_processing", "cost_usd"].sum()
    assert plan.total_cost_usd + plan.beyond_horizon_usd - cleaning == pytest.approx(total, rel=1e-12)
    assert json.loads(run.stdout)["planned_total_usd"] == pytest.approx(plan.total_cost_usd, rel=1e-12)


def test_a_single_scenario_that_no_plan_can_hold_is_flagged_in_the_review(tmp_path):
    """Serving past the longest horizon (120 months) cannot be in the plan: the review says so (the attacking
    helper's reproducer: 70B on 512 GPUs served 120 months)."""
    from focus_generator import write_export
    write_export(tmp_path / "bill.csv", 100)
    bill = workbench.bill.actuals.read_focus(tmp_path / "bill.csv")
    s = workbench.Scenario(params=70e9, n_gpus=512, requests_per_day=1e7, serving_months=120)
    flags = review.compare(bill, s, start="2025-03").flags
    assert [f for f in flags if f["kind"] == "plan_not_whole" and "after 2035-02 is not priced" in f["message"]]
    assert not [f for f in review.compare(bill, s.replace(serving_months=12), start="2025-03").flags
                if f["kind"] == "plan_not_whole"]
    assert not [f for f in review.compare(bill, pg.example(), start="2025-03").flags if f["kind"] == "plan_not_whole"]


@settings(max_examples=20, **SETTINGS)
@given(st.sampled_from([1e9, 7e9, 70e9]), st.sampled_from([0.0, 0.5, 1.5, 3.0, 12.0]), st.sampled_from([None, 0.5, 30.0, 200.0]),
       st.sampled_from([0.0, 4.0]), st.sampled_from([1.0, 1.3, 2.0]),
       st.sampled_from(["on_demand", "self_hosted", "reserved_1y", "reserved_3y", "monthly"]))
def test_of_scenario_total_and_beyond_is_the_estimate(params, serving, staff_months, fte, redundancy, pricing):
    s = workbench.Scenario(params=params, serving_months=serving, staff_months=staff_months, staff_fte=fte,
                           redundancy_factor=redundancy, pricing=pricing, requests_per_day=1e6,
                           provider="ctyun" if pricing == "monthly" else "median")  # rents H100 only by the month
    tl = timeline.evaluate(pg.of_scenario(s))
    cleaning = tl.lines.loc[tl.lines["category"] == "data_processing", "cost_usd"].sum()
    assert tl.total_cost_usd + tl.beyond_horizon_usd - cleaning == pytest.approx(
        workbench.estimate(s).total_cost_usd, rel=1e-9)


@pytest.mark.parametrize("kind", ["open_weights", "serve_only"])
@pytest.mark.parametrize("pricing, gpu", [("reserved_1y", "H100"), ("reserved_3y", "H100"), ("self_hosted", "B200"),
                                          ("on_demand", "H100"), ("monthly", "H800")])
def test_a_plan_without_pretraining_pays_its_idle_commitment_in_the_estimate_as_in_its_months(kind, pricing, gpu):
    """From the second attack: a fine-tune on a reserved or owned cluster left the cluster's idle term out of the
    estimate (its line stood in the pre-training stage, which such a plan has not), while its months paid it:
    2,333,987 USD planned against 924,148 estimated. The idle term now stands in its fine-tuning stage."""
    s = workbench.Scenario(plan_kind=kind, params=13e9, n_gpus=64, pricing=pricing, gpu=gpu, serving_months=6,
                           staff_months=0.2,  # a plan that serves only pays no project team, in its months neither
                           provider="ctyun" if pricing == "monthly" else "median")
    est = workbench.estimate(s)
    tl = timeline.evaluate(pg.of_scenario(s))
    cleaning = tl.lines.loc[tl.lines["category"] == "data_processing", "cost_usd"].sum()
    assert tl.total_cost_usd + tl.beyond_horizon_usd - cleaning == pytest.approx(est.total_cost_usd, rel=1e-9)
    idle = est.lines.loc[est.lines["item"] == "idle committed capacity", "cost_usd"].sum()
    # six whole months of serving rented by the month leave nothing idle; a fine-tune holds its cluster a month
    assert (idle > 0) == (pricing != "on_demand" and (pricing, kind) != ("monthly", "serve_only")), idle


@pytest.mark.parametrize("tokens, serving_staff", [(1.7e12, 1.0), (2e12, 1.0), (2e12, 3.0)])
def test_a_run_longer_than_the_longest_horizon_with_serving_is_planned_not_crashed(tokens, serving_staff):
    """From the attack: pre-training of 120 months and more (70B on 8 GPUs) with serving left the serving team no
    month inside the horizon (a division by zero, then a negative FTE). Its months fall past the horizon, as the
    serving does; the plan holds what it can and says so."""
    s = workbench.Scenario(params=70e9, tokens=tokens, n_gpus=8, serving_months=12, serving_staff_fte=serving_staff)
    tl = timeline.evaluate(pg.of_scenario(s))
    assert tl.total_cost_usd > 0 and all(staff.fte >= 0 for staff in tl.programme.staff)
    assert tl.total_cost_usd + tl.beyond_horizon_usd <= workbench.estimate(s).total_cost_usd * (1 + 1e-9)


def test_the_serving_team_starts_when_serving_does():
    """The serving team is paid from the release: after the experiments a committed cluster runs first."""
    s = workbench.Scenario(params=70e9, tokens=1.4e12, n_gpus=256, serving_months=12, pricing="reserved_1y",
                           experiment_fraction=2.0)
    tl = timeline.evaluate(pg.of_scenario(s))
    team = next(staff for staff in tl.programme.staff if staff.name == "serving team")
    serving = tl.lines[(tl.lines["stage"] == "inference") & (tl.lines["cost_usd"] > 0)]
    assert team.start_month == serving["month"].min()


# -- 6, 7. exports: exact, and safe in a spreadsheet -------------------------------------------------------
HOSTILE = {"schema_version": 1, "name": "=HYPERLINK(\"x\")", "horizon_months": 4, "base": {"params": 1e9, "n_gpus": 8},
           "staff": [{"name": "+team", "fte": 2, "usd_per_month": 12345.678, "tags": {"team": "@cmd"}}],
           "workstreams": [{"name": "=1+1", "stages": ["sft"], "every_months": 1, "cycles": 4, "serve_months": 1,
                            "changes": {"requests_per_day": 3.3e6}, "tags": {"team": "-2+3", "model_version": "v{cycle}"}}]}


def test_the_monthly_csv_sums_to_the_json_total_to_the_cent_and_is_formula_safe(tmp_path):
    (tmp_path / "p.json").write_text(json.dumps(HOSTILE))
    csv_run, json_run = cli("plan", str(tmp_path / "p.json"), "--csv"), cli("plan", str(tmp_path / "p.json"), "--json")
    assert csv_run.returncode == json_run.returncode == 0, csv_run.stderr + json_run.stderr
    frame = pd.read_csv(io.StringIO(csv_run.stdout), dtype={"workstream": str, "team": str})
    total = json.loads(json_run.stdout)["total_cost_usd"]
    # each line in cents, the cents adding up to the total's (not each line rounded on its own)
    assert round(frame["cost_usd"].sum(), 2) == round(total, 2)
    assert (frame["cost_usd"] * 100 - (frame["cost_usd"] * 100).round()).abs().max() < 1e-6
    tl = timeline.evaluate(pg.Programme.from_dict(HOSTILE))
    app_csv = pd.read_csv(io.StringIO(programme_views.monthly_csv(tl)), dtype=str)
    for table in (frame.astype(str), app_csv):
        cells = table.to_numpy().ravel()
        assert not [c for c in cells if c.startswith(("=", "+", "-", "@"))]
        assert {"'=1+1", "'+team"} <= set(table["workstream"]) and {"'-2+3", "'@cmd"} <= set(table["team"])
    assert round(pd.to_numeric(app_csv["cost_usd"]).sum(), 2) == round(tl.total_cost_usd, 2)


def test_the_cost_line_csv_sums_to_the_estimate_to_the_cent():
    from workbench.report import views
    est = workbench.estimate(workbench.Scenario(name="=2+5", serving_months=3))
    table = pd.read_csv(io.StringIO(views.lines_csv(est)))
    assert round(table["cost_usd"].sum(), 2) == round(est.total_cost_usd, 2)
    assert set(table["scenario_name"]) == {"'=2+5"}


# -- 9. errors name their place ----------------------------------------------------------------------------
@pytest.mark.parametrize("file, message", [
    ({"base": {"foo": 1}}, "programme · base.foo=1: unknown field"),
    ({"base": {"serving_months": 2}}, "programme · base.serving_months=2.0: is set"),
])
def test_a_base_field_is_named_as_the_base(file, message):
    with pytest.raises(ProgrammeError) as error:
        Programme.from_dict({**ABUTTING, **file})
    assert message in str(error.value)


@pytest.mark.parametrize("text, message", [
    ('"cycles": 4, "cycles": 2', "workstream 'ft' · cycles=2: is given twice in the same object"),
    ('"changes": {"params": 1e9, "params": 2e9}', "workstream 'ft' · changes.params=2000000000.0: is given twice"),
    ('"tags": {"team": "a", "team": "b"}', "workstream 'ft' · tags.team='b': is given twice"),
])
def test_a_key_given_twice_is_named_where_it_stands(text, message):
    body = ('{"schema_version": 1, "name": "x", "horizon_months": 8, "workstreams": [{"name": "ft", "every_months": 1, '
            + text + '}]}')
    with pytest.raises(ProgrammeError) as error:
        pg.loads(body)
    assert message in str(error.value)
    with pytest.raises(ProgrammeError, match="programme · name='y': is given twice"):
        pg.loads('{"schema_version": 1, "name": "x", "name": "y", "horizon_months": 8, "workstreams": []}')


# -- 10. a start month -------------------------------------------------------------------------------------
def test_a_start_month_is_echoed_short_and_must_be_a_month_the_plan_can_hold(tmp_path):
    from focus_generator import write_export
    write_export(tmp_path / "bill.csv", 100)
    bill = workbench.bill.actuals.read_focus(tmp_path / "bill.csv")
    plan = pg.example()
    for bad in ("x" * 5000, 10 ** 5000, "9999-12", "2999-02", "0001-01"):
        with pytest.raises(review.ReviewError) as error:
            review.compare(bill, plan, start=bad)
        assert len(str(error.value)) < 300 and "set_int_max_str_digits" not in str(error.value)
        if not isinstance(bad, str):
            assert "start=an integer of about 5,001 digits" in str(error.value)
    run = cli("actuals", str(tmp_path / "bill.csv"), "--plan", "assistant-7b", "--start", "9999-12")
    assert run.returncode != 0 and "10000" not in run.stderr + run.stdout
    run = cli("actuals", str(tmp_path / "bill.csv"), "--plan", "assistant-7b", "--start", "y" * 5000)
    assert run.returncode != 0 and len(run.stderr) < 400, run.stderr


# -- 11. names ---------------------------------------------------------------------------------------------
def test_a_staff_entry_cannot_take_a_workstreams_name():
    file = {**ABUTTING, "staff": [{"name": "ft", "fte": 1, "usd_per_month": 1e4}]}
    with pytest.raises(ProgrammeError, match="staff 'ft' · name='ft': is the name of a workstream"):
        Programme.from_dict(file)
    twice = {**ABUTTING, "staff": [{"name": "a", "fte": 1, "usd_per_month": 1e4}] * 2}
    with pytest.raises(ProgrammeError, match="staff 'a' · name='a': is used twice"):
        Programme.from_dict(twice)
    with pytest.raises(ProgrammeError, match="names the programme's own lines"):
        Programme.from_dict({**ABUTTING, "workstreams": [{**ABUTTING["workstreams"][0], "name": "programme"}]})


# -- 12. serving: what is monotone, and how far what is not can move ----------------------------------------
PARAMS = np.geomspace(1e9, 4e11, 60)


@pytest.mark.parametrize("gpu", ["H100", "A100-SXM4-80GB"])
@pytest.mark.parametrize("requests", [1e5, 1e6, 1e7])
def test_the_blended_serving_price_rises_with_the_model_and_its_split_moves_within_bounds(gpu, requests):
    d = workbench.estimate(workbench.Scenario(params=PARAMS, serving_months=1, requests_per_day=requests,
                                              gpu=gpu)).details
    for name in ("serving_cost_per_million_tokens_usd", "serving_cost_per_request_usd"):
        values = np.asarray(d[name], float)
        assert np.all(np.diff(values) >= -1e-9 * values[1:]), name
    # input and output split one replica-month by busy time: a smaller decode batch (the latency target) or
    # another replica moves the split, so either part can fall while the whole rises (README: reliability)
    for name in ("serving_cost_per_million_input_tokens_usd", "serving_cost_per_million_output_tokens_usd"):
        values = np.asarray(d[name], float)
        assert np.all(values[1:] / values[:-1] >= 0.4), name


@pytest.mark.parametrize("params", [7e9, 70e9])
@pytest.mark.parametrize("requests", [1e5, 3e6, 1e7])
def test_autoscaled_serving_falls_with_a_peakier_day_by_less_than_one_replica(params, requests):
    ratio = np.linspace(1, 4, 61)
    d = workbench.estimate(workbench.Scenario(params=params, serving_months=1, requests_per_day=requests,
                                              serving_provisioning="autoscaling", peak_to_average=ratio)).details
    month = np.asarray(d["serving_cost_per_month_usd"], float)
    replica_month = np.asarray(d["serving_replica_gpus"], float) * np.asarray(d["price_per_gpu_hour"], float) * 730.5
    # whole replicas: a flat day rounds every 5-minute step up; a varying one sometimes sits just under a whole number
    assert np.all(month[0] - month <= replica_month + 1e-6)


@pytest.mark.parametrize("pricing", ["reserved_1y", "self_hosted", "monthly"])
def test_a_long_committed_run_and_its_experiments_fit_the_commitment_the_estimate_counts(pricing):
    """A 405B run on 16,384 reserved GPUs, with experiments half its size on the same cluster: the timeline holds
    them on the cluster before the run (sequential, as the estimate's commitment counts them), not beside it on
    rented GPUs (the programme was 23 % dearer than the estimate before)."""
    s = workbench.Scenario(params=405e9, tokens=15.6e12, n_gpus=16384, pricing=pricing,
                           provider="ctyun" if pricing == "monthly" else "median")
    tl = timeline.evaluate(pg.of_scenario(s))
    cleaning = tl.lines.loc[tl.lines["category"] == "data_processing", "cost_usd"].sum()
    assert tl.total_cost_usd + tl.beyond_horizon_usd - cleaning == pytest.approx(
        workbench.estimate(s).total_cost_usd, rel=1e-9)
    assert not [w for w in tl.warning_items if w[0] == "tw_fleet_overflow"]
    experiments = tl.lines[tl.lines["gpu_hour_class"] == "experiments"]
    run = tl.lines[tl.lines["gpu_hour_class"] == "productive"]
    assert experiments["month"].min() < run["month"].min() or experiments["month"].max() <= run["month"].min()


@pytest.mark.parametrize("seed", range(30))
def test_cents_add_up_to_the_totals_cents(seed):
    """The CSV's rounding: every amount in whole cents, each within a cent of its value, and their sum the total's
    cents, for amounts of any size and sign (credits), where rounding each on its own drifts."""
    from workbench.report.csv_export import significant, to_cents
    rng = np.random.default_rng(seed)
    amounts = rng.lognormal(5, 4, size=int(rng.integers(1, 400))) * rng.choice([1, 1, 1, -1], size=1)[0]
    amounts[rng.random(amounts.size) < 0.1] *= -1
    cents = to_cents(amounts)
    assert np.allclose(cents * 100, np.round(cents * 100), atol=1e-6)
    assert np.abs(cents - amounts).max() <= 0.01 + 1e-9
    assert round(cents.sum(), 2) == round(amounts.sum(), 2)
    assert list(significant([97258.69785219168, 0.0001110607101120427, 0.0, -1234567.89])) == [
        97258.7, 0.000111061, 0.0, -1234570.0]
