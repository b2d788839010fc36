"""Levers and their risks (issue 13): per-stage pricing, the risk models (divergence restarts, diagnosis without
logs), the boundary warnings and the lever table, checked by hand and against direct estimates."""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from workbench import Scenario, ScenarioError, estimate
from workbench.reference import catalog, prices
from workbench.programmes.levers import levers


def line(est, item, stage=None):
    lines = est.lines
    rows = lines[(lines["item"] == item) & ((lines["stage"] == stage) if stage else True)]
    assert len(rows) == 1, (item, stage, len(rows))
    return rows.iloc[0]


def test_spot_for_experiments_and_reserved_for_pretraining_in_one_scenario():
    s = Scenario(pricing="reserved_1y", experiment_pricing="spot")
    est = estimate(s)
    reserved = float(prices.price_per_gpu_hour(s.gpu, "reserved_1y", "median")[0])
    spot = float(prices.price_per_gpu_hour(s.gpu, "spot", "median")[0])
    assert line(est, "accelerator time", "pretrain")["unit_cost_usd"] == pytest.approx(reserved)
    assert line(est, "accelerator time", "pretrain")["cost_type"] == "fixed"
    experiments = line(est, "trial-and-error and ablation runs")
    assert experiments["unit_cost_usd"] == pytest.approx(spot) and experiments["cost_type"] == "elastic"
    assert "experiments on spot" in experiments["source"]
    # the rest of the plan is priced as before: the experiments line moved, and on the reservation they fill hours
    # that were paid idle (the reservation is paid whole: issue 28)
    same = estimate(s.replace(experiment_pricing="same"))
    q = experiments["quantity"]
    assert same.total_cost_usd - est.total_cost_usd == pytest.approx(q * (reserved - spot) - q * reserved, rel=1e-9)
    assert same.total_cost_usd < est.total_cost_usd  # on a reservation already paid, experiments cost little


def test_post_training_and_serving_priced_their_own_way():
    s = Scenario(post_training_pricing="spot", serving_months=3, serving_provisioning="autoscaling",
                 requests_per_day=3e7, serving_pricing="reserved_1y", serving_peak_pricing="on_demand")
    est = estimate(s)
    spot = float(prices.price_per_gpu_hour(s.gpu, "spot", "median")[0])
    on_demand = float(prices.price_per_gpu_hour(s.gpu, "on_demand", "median")[0])
    assert line(est, "accelerator time", "sft")["unit_cost_usd"] == pytest.approx(spot)
    assert line(est, "accelerator time", "pretrain")["unit_cost_usd"] == pytest.approx(on_demand)
    assert line(est, "serving replicas (base)")["unit_cost_usd"] == pytest.approx(
        float(prices.price_per_gpu_hour(s.gpu, "reserved_1y", "median")[0]))
    peak = line(est, "serving replicas (autoscaled)")
    assert peak["unit_cost_usd"] == pytest.approx(on_demand) and peak["cost_type"] == "elastic" and peak["cost_usd"] > 0
    # spot post-training is reclaimed: more lost work than on demand
    lost = line(est, "lost work and restarts", "sft")["quantity"]
    assert lost > line(estimate(s.replace(post_training_pricing="same")), "lost work and restarts", "sft")["quantity"]


@pytest.mark.parametrize("changes, field, message", [
    (dict(pricing="self_hosted", experiment_pricing="spot"), "experiment_pricing", "is not same while pricing is self_hosted"),
    (dict(serving_pricing="spot", provider="lambda"), "serving_pricing", "allowed: same, on_demand"),
    (dict(post_training_pricing="cheap"), "post_training_pricing", "allowed"),
])
def test_a_stage_bought_another_way_needs_a_cloud_cluster_and_a_price(changes, field, message):
    with pytest.raises(ScenarioError, match=message) as error:
        Scenario(**changes)
    assert error.value.field == field


def test_fp8_carries_the_expected_cost_of_a_divergence_restart_by_hand():
    s = Scenario(precision="fp8")
    est = estimate(s)
    expected_count = 0.25 * s.tokens / 1e12  # data/precision_risks.csv: 0.25 per trillion tokens
    p = 1 - math.exp(-expected_count)
    speedup = 1.34  # fp8's end-to-end speed-up over bf16 (Fishman et al. 2024), not the peak's 2x
    # at the first divergence: 5 % rolled back, the rest (on average (L - 1 + e^-L) / L of the run) in bf16
    rest = (expected_count - 1 + math.exp(-expected_count)) / expected_count
    expected = p * 0.05 * est.gpu_hours + rest * (speedup - 1) * est.gpu_hours
    divergence = line(est, "divergence restarts (expected)")
    assert est.details["divergence_probability"] == pytest.approx(p)
    assert divergence["quantity"] == pytest.approx(expected, rel=1e-9) and divergence["category"] == "failures"
    assert not [w for w in est.warnings if w.startswith("precision=")]
    none = estimate(s.replace(divergence_allowance="none"))
    assert line(none, "divergence restarts (expected)")["cost_usd"] == 0
    # the allowance is time too: the expected restart lengthens the run
    assert est.details["training_days_total"] - none.details["training_days_total"] == pytest.approx(
        expected / est.n_gpus / 24, rel=1e-9)
    assert [w for w in none.warnings if w.startswith("precision=fp8 without a divergence allowance")]
    assert line(estimate(Scenario()), "divergence restarts (expected)")["cost_usd"] == 0  # bf16: the reference


def test_fp8_runs_its_measured_speed_up_faster_not_its_peaks():
    bf16 = estimate(Scenario(n_gpus=512))
    fp8 = estimate(Scenario(n_gpus=512, precision="fp8"))
    peak_ratio = catalog.peak_flops_per_s("H100-SXM5-80GB", "fp8") / catalog.peak_flops_per_s("H100-SXM5-80GB", "bf16")
    assert peak_ratio == pytest.approx(2.0, rel=0.01)
    assert bf16.gpu_hours / fp8.gpu_hours == pytest.approx(1.34, rel=1e-9)
    assert fp8.mfu == pytest.approx(bf16.mfu * 1.34 / peak_ratio, rel=1e-9)  # MFU against the fp8 peak
    given = estimate(Scenario(n_gpus=512, precision="fp8", mfu=0.3))  # a measured MFU is the user's own
    assert given.mfu == 0.3


def test_sampled_logs_lengthen_recovery_and_cost_lost_work():
    full, sampled = estimate(Scenario()), estimate(Scenario(log_sampling_ratio=0.1))
    lost_full = line(full, "lost work and restarts", "pretrain")["quantity"]
    lost_sampled = line(sampled, "lost work and restarts", "pretrain")["quantity"]
    interruptions = full.details["pretrain_interruptions"]
    # each interruption waits (1 - 0.1) x 120 minutes more, every GPU idle
    assert lost_sampled - lost_full == pytest.approx(interruptions * 0.9 * 2.0 * full.n_gpus, rel=0.02)
    big = estimate(Scenario(params=70e9, tokens=15e12, n_gpus=4096, log_sampling_ratio=0.1))
    assert [w for w in big.warnings if w.startswith("log_sampling_ratio=0.1 on 4,096 GPUs")]


@pytest.mark.parametrize("changes, start", [
    (dict(checkpoint_interval_hours=24), "checkpoint_interval_hours=24 is "),
    (dict(checkpoint_interval_hours=0.01), "checkpoint_interval_hours=0.01 is "),
    (dict(redundancy_factor=1.1), "redundancy_factor=1.1 is below the 1.2"),
    (dict(pricing="spot", params=70e9, tokens=15e12, n_gpus=4096), "pricing=spot for pre-training on 4,096 GPUs"),
])
def test_boundary_warnings_say_why_and_cite(changes, start):
    warnings = estimate(Scenario(**changes)).warnings
    found = [w for w in warnings if w.startswith(start)]
    assert len(found) == 1 and "(" in found[0] and found[0].endswith(")")
    assert not [w for w in estimate(Scenario()).warnings if w.split("=")[0] in (
        "checkpoint_interval_hours", "redundancy_factor", "pricing", "log_sampling_ratio", "precision")]


def test_the_default_scenario_has_at_least_ten_levers_ranked_by_risk_adjusted_saving():
    table = levers()
    usable = table[table["applicable"]]
    assert len(usable) >= 10
    assert list(usable["risk_adjusted_saving_usd"]) == sorted(usable["risk_adjusted_saving_usd"], reverse=True)
    assert usable["risk"].str.len().gt(10).all() and usable["source"].str.len().gt(5).all()
    assert np.allclose(usable["saving_usd"] - usable["risk_usd"], usable["risk_adjusted_saving_usd"])
    fp8 = usable.set_index("lever").loc["fp8"]
    assert fp8["risk_usd"] > 0 and fp8["risk_adjusted_saving_usd"] < fp8["saving_usd"]
    logs = usable.set_index("lever").loc["log_sampling"]
    assert logs["saving_usd"] > 0 > logs["risk_adjusted_saving_usd"]  # cheaper logs, dearer recoveries
    assert not table[~table["applicable"]]["why_not"].eq("").any()


@pytest.mark.parametrize("lever", ["fp8", "deduplication", "spot_experiments", "mfu"])
def test_a_lever_row_is_the_engine_applied_to_the_scenario(lever):
    base = Scenario()
    row = levers(base).set_index("lever").loc[lever]
    applied = estimate(base.replace(**row["applied"]))
    assert applied.total_cost_usd == pytest.approx(row["total_usd"], rel=1e-9)
    pinned = estimate(base.replace(n_gpus=row["applied"]["n_gpus"]))
    assert pinned.total_cost_usd - applied.total_cost_usd == pytest.approx(row["risk_adjusted_saving_usd"], rel=1e-9)


def test_a_reservation_carries_its_idle_commitment_and_serving_levers_apply_when_served():
    table = levers(Scenario(serving_months=6, requests_per_day=3e7, checkpoint_interval_hours=24)).set_index("lever")
    assert table.loc["reserved", "risk_usd"] > table.loc["reserved", "saving_usd"]  # a year bought for a 2-week run
    for name in ("autoscaling", "prefix_caching", "quantised_serving", "reserved_serving", "checkpoint_interval"):
        assert table.loc[name, "applicable"], name
    assert table.loc["autoscaling", "saving_usd"] > 0 and table.loc["checkpoint_interval", "saving_usd"] > 0


def test_the_cli_lists_levers_as_json_and_text():
    run = subprocess.run([sys.executable, "-m", "workbench.cli", "levers", "--json"], capture_output=True, text=True,
                         check=True)
    rows = json.loads(run.stdout)
    assert sum(r["applicable"] for r in rows) >= 10 and {"saving_usd", "risk_usd", "risk_adjusted_saving_usd",
                                                          "days_saved", "risk", "source"} <= set(rows[0])
    text = subprocess.run([sys.executable, "-m", "workbench.cli", "levers", "--precision", "fp8"], capture_output=True,
                          text=True, check=True).stdout
    assert "Not applicable here: " in text and "fp8 (precision is already fp8)" in text


from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({}, optional={
    "params": st.sampled_from([1e8, 1e9, 7e9, 70e9]), "tokens": st.sampled_from([1e9, 2e11, 2e12, 15e12]),
    "n_gpus": st.sampled_from([8, 64, 1024, 8192]), "gpu": st.sampled_from(["H100-SXM5-80GB", "A100-SXM4-80GB", "TPU-v5p"]),
    "pricing": st.sampled_from(["on_demand", "spot", "reserved_3y", "self_hosted"]),
    "precision": st.sampled_from(["bf16", "fp16", "fp8"]), "serving_months": st.sampled_from([0, 1, 24]),
    "checkpoint_interval_hours": st.sampled_from([None, 0.05, 100]), "log_sampling_ratio": st.sampled_from([0, 0.5, 1]),
    "experiment_pricing": st.sampled_from(["same", "spot", "reserved_1y"]), "price_per_gpu_hour": st.sampled_from([None, 2.5])}))
def test_fuzz_levers_give_a_table_or_a_named_refusal(changes):
    try:
        scenario = Scenario(**changes)
        table = levers(scenario)
    except ScenarioError as error:
        assert error.field and "allowed" in str(error)
        return
    usable = table[table["applicable"]]
    assert np.isfinite(usable[["saving_usd", "risk_usd", "risk_adjusted_saving_usd", "total_usd"]].to_numpy()).all()
    assert (usable["total_usd"] > 0).all()



def test_a_lever_that_crosses_a_boundary_says_so():
    big = levers(Scenario(params=70e9, tokens=15e12, n_gpus=4096)).set_index("lever")
    assert [w for w in big.loc["spot_pretrain", "crosses"] if w.startswith("pricing=spot for pre-training")]
    assert big.loc["fp8", "crosses"] == [] and big.loc["log_sampling", "crosses"]  # allowance carried; diagnosis not


def test_the_planner_says_a_boundary_beside_its_control_and_applies_a_lever():
    from workbench.app.ui import Planner
    planner = Planner(values={"checkpoint_interval_hours": 24})
    planner.advanced.selected_index = planner.advanced_groups.index("failures")  # the control is built on opening
    assert "wb-boundary" in planner.controls["checkpoint_interval_hours"].message.value
    assert "Checkpoint interval: 24 is" in planner.controls["checkpoint_interval_hours"].message.value
    planner.lever_panel._find()
    buttons = {c.children[0]._dom_classes[-1]: c.children[0] for c in planner.lever_panel.rows.children
               if hasattr(c, "children") and c.children}
    expected = levers(planner.scenario).set_index("lever").loc["checkpoint_interval", "total_usd"]
    buttons["wb-lever-checkpoint_interval"].click()
    assert planner.est.total_cost_usd == pytest.approx(expected, rel=1e-9)
    assert planner.lever_panel.rows.children == ()  # the table was the previous scenario's
    assert not [w for w in planner.est.warnings if w.startswith("checkpoint_interval_hours=")]
    planner.language.value = "zh"
    planner.lever_panel._find()
    assert "应用" in [c.children[0].description for c in planner.lever_panel.rows.children if hasattr(c, "children")
                     and c.children][0]


def test_serving_below_the_traffic_drops_a_share_of_requests_by_hand():
    from workbench.formulas import serving
    ten_per_second = 10 * 86400.0
    assert serving.unserved_share(ten_per_second, 1.0, 1.0, 1, False, 0.5) == pytest.approx(0.5)  # 5 of 10 served
    assert serving.unserved_share(ten_per_second, 1.0, 3.0, 1, False, 1.0) == 0.0  # the peak's capacity
    assert serving.unserved_share(ten_per_second, 1.0, 3.0, 1, True, 1.0) == 0.0  # following the traffic
    profile = serving.daily_profile(3.0)
    expected = np.maximum(10 * profile - 10, 0).sum() / (10 * profile).sum()  # fixed at the mean: 10 replicas
    assert serving.unserved_share(ten_per_second, 1.0, 3.0, 1, False, 1 / 3) == pytest.approx(expected)
    s = Scenario(serving_months=3, requests_per_day=3e7)
    full, half = estimate(s), estimate(s.replace(serving_headroom=0.5))
    assert full.details["serving_unserved_share"] == 0 and half.details["serving_unserved_share"] > 0.2
    assert half.total_cost_usd < full.total_cost_usd
    assert [w for w in half.warnings if w.startswith("serving_headroom=0.5: capacity below the traffic")]
    assert [w for w in levers(s).set_index("lever").loc["serve_average", "crosses"] if w.startswith("serving_headroom=")]


def test_reservations_and_odd_scenarios_give_rows_that_apply_as_shown():
    s = Scenario(precision="fp8", divergence_allowance="none")
    table = levers(s).set_index("lever")
    for name in ("mfu", "reserved", "deduplication"):  # the allowance the table prices is carried by Apply
        assert table.loc[name, "applied"]["divergence_allowance"] == "expected"
        assert estimate(s.replace(**table.loc[name, "applied"])).total_cost_usd == pytest.approx(
            table.loc[name, "total_usd"], rel=1e-9)
    reserved = levers().set_index("lever").loc["reserved"]
    # a year of the cluster bought, pre-training's days used (the other stages stay on demand): the rest idle
    est = estimate(Scenario().replace(**reserved["applied"]))
    used = est.details["pretrain_days_with_overheads"] * 24
    price = line(est, "accelerator time", "pretrain")["unit_cost_usd"]
    assert line(est, "idle committed capacity", "pretrain")["quantity"] == pytest.approx(est.n_gpus * (8766 - used))
    assert reserved["risk_usd"] == pytest.approx(est.n_gpus * (8766 - used) * price, rel=1e-9)
    assert reserved["risk_adjusted_saving_usd"] < 0  # a year bought for a 14-day run
    # the engine's total holds the idle term (issue 28): it moves by the risk-adjusted saving
    pinned = estimate(Scenario(n_gpus=reserved["applied"]["n_gpus"])).total_cost_usd
    assert pinned - reserved["total_usd"] == pytest.approx(reserved["risk_adjusted_saving_usd"], rel=1e-9)
    given = levers(Scenario(price_per_gpu_hour=2.0)).set_index("lever")
    for name in ("spot_experiments", "spot_pretrain", "reserved"):
        assert not given.loc[name, "applicable"] and "a price per GPU-hour is typed" in given.loc[name, "why_not"]
    spot = levers(Scenario(serving_months=12, requests_per_day=3e7)).set_index("lever").loc["spot_pretrain", "applied"]
    assert spot["serving_pricing"] == "on_demand"  # serving is not moved to spot by the pre-training lever


def test_a_programme_has_its_levers_priced_over_its_horizon():
    from workbench.programmes import programme, timeline
    plan = programme.example()
    table = levers(plan)
    usable = table[table["applicable"]]
    assert len(usable) >= 9 and "debug_release" in set(usable["lever"])
    # at its traffic the serving replicas are at their minimum: the serving levers save nothing and say so
    idle = table.set_index("lever").loc[["autoscaling", "prefix_caching", "quantised_serving"]]
    assert not idle["applicable"].any() and idle["why_not"].str.startswith("saves nothing here").all()
    assert list(usable["risk_adjusted_saving_usd"]) == sorted(usable["risk_adjusted_saving_usd"], reverse=True)
    base = timeline.evaluate(plan).total_cost_usd
    row = usable.set_index("lever").loc["fp8"]
    variant = timeline.evaluate(plan.replace(base={**plan.base, **row["applied"]})).total_cost_usd
    assert variant == pytest.approx(row["total_usd"], rel=1e-12)
    # the risk is what it adds to the work (serving aside, after the horizon included); its saving, the plan's
    twin = timeline.evaluate(plan.replace(base={**plan.base, **row["applied"], "divergence_allowance": "none"}))
    risky = timeline.evaluate(plan.replace(base={**plan.base, **row["applied"]}))
    work = lambda tl: tl.lines.loc[tl.lines["stage"] != "inference", "cost_usd"].sum() + tl.beyond_horizon_usd  # noqa: E731
    assert row["risk_usd"] == pytest.approx(work(risky) - work(twin), rel=1e-12) and row["risk_usd"] > 0
    # its saving on the same basis: the work in the horizon and after it, serving at the plan's served tokens
    served = lambda tl: tl.months_tokens["served_tokens"].sum()  # noqa: E731
    serving = lambda tl: tl.lines.loc[tl.lines["stage"] == "inference", "cost_usd"].sum()  # noqa: E731
    before = timeline.evaluate(plan)
    like = lambda tl: work(tl) + serving(tl) * served(before) / served(tl)  # noqa: E731
    assert row["saving_usd"] == pytest.approx(like(before) - like(twin), rel=1e-12)
    assert row["risk_adjusted_saving_usd"] == pytest.approx(row["saving_usd"] - row["risk_usd"], rel=1e-12)
    assert base == before.total_cost_usd
    debug = usable.set_index("lever").loc["debug_release"]
    # each session holds its 3 working hours and then 1 h idle (the default), 0.25 h with the lever: 3.25 / 4
    held = timeline.evaluate(plan).lines
    assert debug["saving_usd"] == pytest.approx(held[held["category"] == "debug"]["cost_usd"].sum() * (1 - 3.25 / 4),
                                                rel=1e-9)
    assert debug["risk_usd"] == 0 and not debug["risk_priced"]
    assert "reserved" not in set(table["lever"])


def test_stage_reservations_sampled_logs_on_spot_and_stage_modes_are_judged_on_their_own():
    for changes, start in ((dict(post_training_pricing="reserved_1y"), "post_training_pricing=reserved_1y: post "),
                           (dict(experiment_pricing="reserved_3y"), "experiment_pricing=reserved_3y: experiments"),
                           (dict(serving_pricing="reserved_1y", serving_months=3, requests_per_day=1e7),
                            "serving_pricing=reserved_1y: serving base uses its")):
        assert [w for w in estimate(Scenario(**changes)).warnings if w.startswith(start)], changes
    # the diagnosis time follows failures, not spot reclaims: the warning's GPU-h are the engine's
    s = Scenario(n_gpus=512, pricing="spot", spot_interruptions_per_node_month=4, log_sampling_ratio=0.1)
    lost = line(estimate(s), "lost work and restarts", "pretrain")["quantity"]
    without = line(estimate(s.replace(unlogged_diagnosis_minutes=0)), "lost work and restarts", "pretrain")["quantity"]
    warning = [w for w in estimate(s).warnings if w.startswith("log_sampling_ratio=")][0]
    assert f"about {lost - without:,.0f} GPU-h" in warning
    spot_cluster = levers(Scenario(pricing="spot", experiment_pricing="on_demand")).set_index("lever")
    assert spot_cluster.loc["spot_experiments", "applicable"]  # the experiments are on demand here
    assert levers(Scenario(experiment_fraction=0.05)).set_index("lever").loc["ablations_first", "why_not"].startswith(
        "adds ")


def test_the_cli_refuses_scenario_options_with_a_programme():
    run = subprocess.run([sys.executable, "-m", "workbench.cli", "levers", "--programme", "assistant-7b", "--n-gpus", "8"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "--n-gpus is a scenario option" in run.stderr and run.stderr.count("\n") == 1


def test_a_price_on_time_ranks_the_levers_that_save_days():
    """Issue 28: with delay_cost_usd_per_day the days a lever saves or loses have a value, and the table ranks by
    the risk-adjusted saving plus it (100,000 USD a day: fp8's 2.6 days outrank spot pre-training's money)."""
    plain = levers(Scenario()).set_index("lever")
    assert (plain["value_of_days_usd"] == 0).all()
    priced = levers(Scenario(delay_cost_usd_per_day=100_000))
    usable = priced[priced["applicable"]].set_index("lever")
    assert usable.loc["fp8", "value_of_days_usd"] == pytest.approx(usable.loc["fp8", "days_saved"] * 100_000)
    order = list(usable.index)
    assert order.index("fp8") < order.index("spot_pretrain")
    plain_order = list(plain[plain["applicable"]].index)
    assert plain_order.index("spot_pretrain") < plain_order.index("fp8")  # money alone: the other way round
    rank = usable["risk_adjusted_saving_usd"] + usable["value_of_days_usd"]
    assert list(rank) == sorted(rank, reverse=True)
    log = priced.set_index("lever").loc["log_sampling"]
    assert not log["applicable"] and "hours of delay cost" in log["why_not"]
    code = subprocess.run([sys.executable, "-m", "workbench.cli", "levers", "--delay-cost-usd-per-day", "100000"],
                          capture_output=True, text=True, timeout=120)
    assert code.returncode == 0 and "value_of_days_usd" in code.stdout


def test_a_spot_run_waits_for_capacity_in_days_staff_and_the_price_of_time():
    """Issue 28: spot for a long run carries the wait for capacity (the plan's own figure; no public one exists):
    20 days later, 10 FTE paid to wait (10 x 20 / 30.44 months x 25,000 USD x 1.15 contingency on staff), and with a
    price on time, spot pre-training loses its place."""
    a = estimate(pricing="spot", staff_fte=10)
    b = estimate(pricing="spot", staff_fte=10, spot_capacity_wait_days=20)
    assert float(b.details["training_days_total"]) - float(a.details["training_days_total"]) == pytest.approx(20)
    assert b.total_cost_usd - a.total_cost_usd == pytest.approx(10 * 20 / (365.25 / 12) * 25_000 * 1.15)
    assert estimate(spot_capacity_wait_days=20).total_cost_usd == estimate().total_cost_usd  # on demand: no wait
    table = levers(Scenario(spot_capacity_wait_days=20, delay_cost_usd_per_day=100_000, staff_fte=10)).set_index("lever")
    spot = table.loc["spot_pretrain"]
    assert spot["days_saved"] == pytest.approx(-20.24, abs=0.01)
    assert spot["value_of_days_usd"] == pytest.approx(spot["days_saved"] * 100_000)
    assert not spot["applicable"] or spot["risk_adjusted_saving_usd"] + spot["value_of_days_usd"] < 0
