"""The MFU model against published training runs, with honest tolerances (issue 29)."""
import numpy as np
import pandas as pd
import pytest

from workbench import Scenario, estimate
from workbench.plan import calibration
from workbench.reference import data
from workbench.formulas import mfu


@pytest.fixture(scope="module")
def table():
    return calibration.comparison()


@pytest.fixture(scope="module")
def summary(table):
    return calibration.summary(table)


def test_every_run_is_compared(table):
    assert len(table) == 39
    assert table["reported_gpu_hours"].notna().sum() == 37  # GPT-3 and GLM-130B report no GPU-hours
    # runs without a published GPU count are sized like any plan, and never enter the fit of the dense model
    sized = table[~table["n_gpus_published"]]
    assert set(sized["name"]) == {"LLaMA-7B", "LLaMA-13B", "LLaMA-33B", "Llama-2-7B", "Llama-2-13B",
                                  "Llama-2-34B", "Llama-2-70B", "Llama-3.1-8B", "Llama-3.1-70B", "Olmo-3-7B",
                                  "DeepSeek-V2", "Llama-4-Scout", "Llama-4-Maverick"}
    dense = sized[~sized["name"].isin({"DeepSeek-V2", "Llama-4-Scout", "Llama-4-Maverick"})]
    assert (dense["error"] == dense["error_leave_one_out"]).all()
    # the sized mixture-of-experts runs are in the fit of the expert share: left out of it, each moves
    experts = sized.set_index("name").loc[["DeepSeek-V2", "Llama-4-Scout", "Llama-4-Maverick"]]
    assert (experts["error"] != experts["error_leave_one_out"]).all()


def test_out_of_sample_the_model_beats_the_constant_mfu_rule_on_both_figures(summary):
    # 2026-12-05, 37 runs (nine added from papers and model cards: Nemotron-4 340B, Gopher, Falcon2 11B,
    # Skywork 13B, Olmo 3 32B and 7B, DeepSeek-V2, Llama 4 Scout and Maverick; DeepSeek-V3's pre-training hours,
    # BloombergGPT's full recompute and Llama 3.1 405B's FSDP read from their papers). As shipped: 11.4 % median,
    # 86 % within +-30 %. Leave-one-out (every parameter refitted, the engineering scale held below the other runs'
    # compute, the expert share from the other mixture-of-experts runs): 12.5 % and 84 %; 6ND at 0.375: 22.2 %
    # and 70 %. Issue 29 asks for <= 15 % and >= 75 % out of sample, below the rule on both.
    assert summary["runs"] == 37
    assert summary["median_abs_error_leave_one_out"] == pytest.approx(0.125, abs=0.005)
    assert summary["median_abs_error_leave_one_out"] <= 0.15
    assert summary["within_30_error_leave_one_out"] == pytest.approx(31 / 37, abs=0.01)
    assert summary["within_30_error_leave_one_out"] >= 0.75
    assert summary["median_abs_error_leave_one_out"] < summary["median_abs_error_epoch_0375"]
    assert summary["within_30_error_leave_one_out"] > summary["within_30_error_epoch_0375"]
    assert summary["median_abs_error_epoch_0375"] == pytest.approx(0.222, abs=0.005)
    assert summary["within_30_error_epoch_0375"] == pytest.approx(26 / 37, abs=0.01)
    assert summary["median_abs_error"] < 0.12 and summary["within_30_error"] > 0.8
    assert summary["median_abs_error"] <= summary["median_abs_error_leave_one_out"]


def test_frontier_runs_as_shipped_and_left_out(table, summary):
    # every run of at least 1e24 FLOP with a published GPU count
    frontier = table[(table["training_flops"] >= 1e24) & table["n_gpus_published"]].set_index("name")
    assert set(frontier.index) == {"Llama-3.1-405B", "DeepSeek-V3", "PaLM-540B", "Falcon-180B", "Nemotron-4-340B",
                                   "Olmo-3-32B"}
    assert (frontier["error"].abs() <= 0.25).all()  # as shipped (+57 % for the 405B run before issue 29)
    # left out, all within 25 % (the done-when): the 405B run +7 % now that Nemotron-4 340B (1.9e25 FLOP) is
    # beside it (+27 % without); DeepSeek-V3 -3 % on its pre-training hours, without the fp8 divergence allowance
    # its report rules out, its expert share taken from the three other mixture-of-experts runs
    assert (frontier["error_leave_one_out"].abs() <= 0.25).all()
    assert frontier.loc["Llama-3.1-405B", "error_leave_one_out"] == pytest.approx(0.067, abs=0.01)
    assert summary["frontier_max_abs_error_leave_one_out"] == pytest.approx(0.067, abs=0.01)


def test_a_mixture_of_experts_run_reaches_a_share_of_a_dense_models_mfu():
    fitted = mfu.parameters()
    assert 0.7 < fitted["expert_efficiency"] < 0.85
    dense = estimate(Scenario(params=21e9, tokens=8e12, gpu="H800", n_gpus=1024))
    moe = estimate(Scenario(params=236e9, active_params=21e9, tokens=8e12, gpu="H800", n_gpus=1024))
    # the same active size and cluster: the experts' share of the dense MFU (a little above it, as the traffic
    # terms shrink at the lower rate)
    assert moe.mfu / dense.mfu == pytest.approx(fitted["expert_efficiency"], rel=0.08)
    assert moe.mfu < dense.mfu


def test_per_run_errors_are_bounded(table):
    known = table[table["reported_gpu_hours"].notna()].set_index("name")
    # Llama 3.1 8B reports far more GPU-hours than its FLOPs need at Hopper MFUs (its card's hours cover more
    # than the run); TinyLlama's 16 GPUs ran far above any fit: the two outliers, each within a factor 2
    assert known.loc["Llama-3.1-8B", "error"] < -0.4
    assert known["error_leave_one_out"].abs().max() < 1.0
    assert (known["error_leave_one_out"].abs() > 0.5).sum() <= 3


def test_implied_mfu_close_to_the_reference_6nd_column():
    runs = mfu.run_table().dropna(subset=["implied_mfu", "implied_mfu_6nd"])
    # ours counts attention too, so it is higher than 6ND's by s/(12 h): a few per cent
    ratio = runs["implied_mfu"] / runs["implied_mfu_6nd"]
    assert ((ratio > 0.97) & (ratio < 1.2)).all()


def test_shipped_parameters_are_the_fit():
    """data/mfu_model.csv is what calibration.fit() gives on the data shipped: nobody edited a number by hand."""
    shipped = mfu.model_table().set_index(["parameter", "generation"])["value"]
    fresh = calibration.fit().fillna({"generation": ""}).set_index(["parameter", "generation"])["value"]
    shipped.index = pd.MultiIndex.from_tuples([(p, "" if pd.isna(g) else g) for p, g in shipped.index])
    assert set(shipped.index) == set(fresh.index)
    for key, value in fresh.items():
        assert shipped[key] == pytest.approx(value, rel=1e-3), key


def test_parameters_are_few_and_their_spread_is_reported():
    table = mfu.model_table()
    fitted = table[table["n_runs"] > 0]
    kernel = fitted[fitted["parameter"] == "kernel_efficiency"]
    assert set(kernel["generation"]) == {"Ampere", "Hopper", "TPUv3", "TPUv4", "all"}
    assert (kernel["low"] <= kernel["value"]).all() and (kernel["value"] <= kernel["high"]).all()
    # besides a level per generation: the engineering-scale exponent, the straggler slope and the experts' share
    assert set(fitted["parameter"]) - {"kernel_efficiency", "scale_flops_low", "typical_days_at_1e23",
                                       "typical_days_exponent", "typical_batch_at_1e23",
                                       "typical_batch_exponent", "max_mfu",
                                       "expert_active_share_max"} == {"scale_exponent", "straggler_exponent",
                                                                                 "expert_efficiency"}
    experts = table[table["parameter"] == "expert_efficiency"].iloc[0]
    assert experts["n_runs"] == 4 and experts["low"] <= experts["value"] <= experts["high"]


def test_within_study_fall_with_the_cluster_is_reproduced():
    # the same model at several sizes (out of sample: not in the fit): within 8 % of the measured relative MFU
    check = calibration.scaling_check()
    assert set(check["study"]) == {"nemotron4-15b", "megatron-175b", "megatron-530b", "llama3-405b"}
    assert (np.abs(check["predicted_relative"] / check["measured_relative"] - 1) < 0.08).all()
    llama = check[check["study"] == "llama3-405b"].set_index("n_gpus")
    assert llama.loc[16384, "predicted_relative"] < 1  # 16 micro-batches per replica instead of 32: more bubble


def test_auto_sized_cluster_meets_its_target():
    for days in (3, 14, 60):
        est = estimate(params=70e9, tokens=2e12, target_days=days)
        assert est.wall_days <= days * 1.001
        fewer = estimate(params=70e9, tokens=2e12, n_gpus=est.n_gpus - 8, target_days=days)
        assert fewer.wall_days > days * 0.98  # one node fewer would (about) miss it
    given = estimate(mfu=0.4, n_gpus=256), estimate(mfu=0.4, n_gpus=4096)
    assert given[0].gpu_hours == pytest.approx(given[1].gpu_hours)  # a measured MFU is taken as given


def test_default_duration_and_batch_come_from_published_runs():
    p = mfu.parameters()
    # about 24 days at 1e23 FLOP, growing slowly with compute: 1-3 months for frontier runs
    assert 15 < p["typical_days_at_1e23"] < 40 and 0 < p["typical_days_exponent"] < 0.4
    assert 40 < mfu.typical_days(4e25) < 120
    # practice: 4M tokens at Llama 2 70B's compute, 16M at Llama 3 405B's, within a factor 2
    assert mfu.default_global_batch_tokens(8.7e23) == pytest.approx(4e6, rel=1.0)
    assert mfu.default_global_batch_tokens(4e25) == pytest.approx(16e6, rel=1.0)


def test_a_missing_parameter_row_is_refused(tmp_path, monkeypatch):
    import shutil
    for path in data.data_dir().glob("*.csv"):
        shutil.copy(path, tmp_path / path.name)
    text = (tmp_path / "mfu_model.csv").read_text().splitlines()
    (tmp_path / "mfu_model.csv").write_text("\n".join(line for line in text if not line.startswith("hidden_share")))
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path))
    data.reload()
    try:
        with pytest.raises(data.DataFileError, match="mfu_model.csv.*hidden_share"):
            estimate(Scenario())
    finally:
        monkeypatch.delenv(data.DATA_DIR_ENV)
        data.reload()


@pytest.mark.parametrize("table,edit,message", [
    ("mfu_model.csv", lambda t: t.replace("kernel_efficiency,Hopper,", "kernel_efficiency,Hopper,5#", 1),
     "out of range for kernel_efficiency"),
    ("mfu_model.csv", lambda t: t.replace("kernel_efficiency,Hopper,", "kernel_efficiency,Hoper,", 1), "unknown generation 'Hoper'"),
    ("mfu_model.csv", lambda t: t + t.splitlines()[2] + "\n", "is given twice"),
    ("mfu_model.csv", lambda t: t.replace("layer_latency_s,,", "layer_latency_s,,1000000#", 1), "out of range for layer_latency_s"),
    ("generation_speedups.csv", lambda t: t.replace(",2.02,", ",99,", 1), "out of range"),
    ("generation_speedups.csv", lambda t: t.replace("Blackwell,B200,H100-SXM5-80GB", "Blackwell,B200,GB200", 1),
     "has no fitted kernel efficiency"),
    ("generation_speedups.csv", lambda t: t.replace("Blackwell,B200", "Blackwel,B200", 1), "not Blackwel"),
    ("mfu_model.csv", lambda t: t.replace("expert_efficiency,,", "expert_efficiency,,1.5#", 1),
     "out of range for expert_efficiency"),
    ("mfu_model.csv", lambda t: "\n".join(line for line in t.splitlines() if not line.startswith("expert_")) + "\n",
     "has no row for expert_efficiency"),
    ("mfu_model.csv", lambda t: t.replace("expert_active_share_max,,", "expert_active_share_max,,1.0#", 1),
     "out of range for expert_active_share_max"),
    ("published_runs.csv", lambda t: t.replace(",steady,", ",stedy,", 1), "hours_scope"),
    ("published_runs.csv", lambda t: t.replace(",full,", ",all,", 1), "recompute"),
])
def test_a_bad_parameter_table_is_refused_with_its_row(tmp_path, monkeypatch, table, edit, message):
    import re
    import shutil
    for path in data.data_dir().glob("*.csv"):
        shutil.copy(path, tmp_path / path.name)
    text = edit((tmp_path / table).read_text())
    # "5#0.25" style edits replace the value up to the next comma
    text = re.sub(r",([0-9.e+-]+)#[0-9.e+-]+,", r",\1,", text)
    (tmp_path / table).write_text(text)
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path))
    data.reload()
    try:
        with pytest.raises(data.DataFileError, match=message):
            from workbench.app import tables
            tables.check_all()
    finally:
        monkeypatch.delenv(data.DATA_DIR_ENV)
        data.reload()


def test_the_runs_scope_recompute_and_rollbacks_are_honoured(table):
    """A run is estimated as it ran: hours from an iteration time against the estimate's compute alone, a run that
    checkpointed its activations with full recompute, a run that reports no rollback without a divergence allowance."""
    from workbench.plan.calibration import run_scenario
    runs = mfu.run_table().set_index("name")
    rows = table.set_index("name")
    nemotron = estimate(run_scenario({**runs.loc["Nemotron-4-340B"].to_dict(), "name": "Nemotron-4-340B"}))
    assert rows.loc["Nemotron-4-340B", "estimated_gpu_hours"] == pytest.approx(nemotron.wall_days * 24 * 6144)
    assert nemotron.details["pretrain_days_with_overheads"] > nemotron.wall_days  # which the comparison leaves out
    bloomberg = run_scenario({**runs.loc["BloombergGPT-50B"].to_dict()})
    assert bloomberg.recompute == "full" and estimate(bloomberg).details["layout_fits"]
    deepseek = run_scenario({**runs.loc["DeepSeek-V3"].to_dict()})
    assert deepseek.divergence_allowance == "none" and runs.loc["DeepSeek-V3", "gpu_hours"] == 2_664_000
    # a run without the columns is estimated with the defaults a plan gets
    default = run_scenario({**runs.loc["OPT-175B"].to_dict()})
    assert default.recompute == "selective" and default.divergence_allowance == "expected"
    # the one run whose published layout does not fit as modelled is marked (no expert parallelism)
    assert set(table.loc[~table["layout_fits"], "name"]) == {"DeepSeek-V3"}


def test_the_experts_share_is_continuous_and_fewer_active_parameters_never_cost_more():
    # a model with nearly every parameter active is nearly dense (no cliff at active < params); below the largest
    # active share of the fitted runs (Llama 4 Scout's 16 %) the full share applies
    hours = [estimate(Scenario(params=70e9, active_params=a, tokens=2e12, price_per_gpu_hour=1.0)).gpu_hours
             for a in (5e9, 11e9, 30e9, 60e9, 69.99e9, 70e9)]
    assert (np.diff(hours) > 0).all()
    assert hours[-2] == pytest.approx(hours[-1], rel=1e-3)
    fitted = mfu.parameters()
    assert mfu.expert_share(70e9, 69.99e9) > 0.999 and mfu.expert_share(236e9, 21e9) == fitted["expert_efficiency"]
    assert fitted["expert_active_share_max"] == pytest.approx(17 / 109, rel=1e-3)


def test_a_fit_without_mixture_of_experts_runs_leaves_the_share_at_one(tmp_path, monkeypatch):
    import csv
    import shutil
    for path in data.data_dir().glob("*.csv"):
        shutil.copy(path, tmp_path / path.name)
    rows = list(csv.DictReader(open(tmp_path / "published_runs.csv")))
    for row in rows:
        if row["active_params"] and float(row["active_params"]) < float(row["params"]):
            row["gpu_hours"] = ""
    with open(tmp_path / "published_runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path))
    data.reload()
    try:
        table = calibration.fit().set_index("parameter")
        assert table.loc["expert_efficiency", "value"] == 1.0 and table.loc["expert_efficiency", "n_runs"] == 0
    finally:
        monkeypatch.delenv(data.DATA_DIR_ENV)
        data.reload()


def test_a_bad_published_run_is_named_by_its_file_row_and_column():
    from workbench.plan.calibration import run_scenario
    runs = mfu.run_table()
    row = runs.index[runs["name"] == "Skywork-13B"][0] + 2
    with pytest.raises(data.DataFileError, match=rf"published_runs.csv, row {row}, column 'active_params': run "
                                                 r"'Skywork-13B': active_params=20000000000: exceeds params"):
        run_scenario({**runs.iloc[row - 2].to_dict(), "active_params": 2e10})


def test_the_mfu_note_states_the_experts_share_the_plan_gets():
    # 60B of 70B active: nearer dense than the fitted runs, so a share between the fitted one and 1, as applied
    scenario = Scenario(params=70e9, active_params=60e9, tokens=2e12, price_per_gpu_hour=1.0)
    share = float(mfu.expert_share(70e9, 60e9))
    assert mfu.parameters()["expert_efficiency"] < share < 1
    assert f"x experts' share {share:.3f} " in estimate(scenario).defaults_used["mfu"]
