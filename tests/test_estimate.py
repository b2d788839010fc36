"""estimate(): hand-checked figures, properties, batches."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import workbench
from workbench import Scenario, ScenarioError, estimate
from workbench.plan.estimate import LINE_COLUMNS


def test_default_estimate_hand_checked():
    est = estimate()
    s = est.scenario
    h = (128 * 7e9 / 12) ** (1 / 3)  # derived width 4210.9
    layers = 33
    flops = 6 * 7e9 * 2e12 + 6 * 2e12 * layers * 4096 * h
    assert est.training_flops == pytest.approx(flops)
    assert est.mfu == pytest.approx(est.details["mfu_prior"])
    assert est.gpu_hours == pytest.approx(flops / (989e12 * est.mfu * 3600))
    # no target: the wall-clock of published runs of 9.1e22 FLOP (about 23 days); whole nodes of whole model-parallel
    # groups, at the MFU of the cluster it sizes
    days = est.details["target_days_used"]
    assert 20 < days < 26 and est.defaults_used["n_gpus"].startswith(f"{est.n_gpus:.0f}: enough whole 8-GPU nodes")
    assert est.n_gpus == np.ceil(est.gpu_hours / (days * 24) / 8) * 8
    assert est.wall_days == pytest.approx(est.gpu_hours / est.n_gpus / 24)
    assert pretrain_compute(est) == pytest.approx(est.gpu_hours * 3.99)  # median H100 on-demand offer
    assert est.total_cost_usd == pytest.approx(est.lines["cost_usd"].sum())
    assert s == Scenario()


def test_given_values_override_defaults():
    est = estimate(Scenario(params=7e10, tokens=2e12, seq_len=4096, d_model=8192, n_layers=80,
                            gpu="A100-SXM4-80GB", mfu=0.4, n_gpus=2048, price_per_gpu_hour=2.0))
    # 6 x 7e10 x 2e12 + 6 x 2e12 x 80 x 4096 x 8192 = 8.4e23 + 3.2212e22 = 8.72212e23 FLOP
    assert est.training_flops == pytest.approx(8.4e23 + 6 * 2e12 * 80 * 4096 * 8192)
    hours = est.training_flops / (312e12 * 0.4 * 3600)
    assert est.gpu_hours == pytest.approx(hours)
    assert est.wall_days == pytest.approx(hours / 2048 / 24)
    assert pretrain_compute(est) == pytest.approx(2.0 * hours)
    assert est.n_gpus == 2048 and est.defaults_used.get("mfu") is None


def test_lines_are_tidy():
    lines = estimate().lines
    assert tuple(lines.columns) == LINE_COLUMNS
    assert set(lines["cost_type"]) <= {"fixed", "elastic"}
    assert (lines["cost_usd"] == lines["quantity"] * lines["unit_cost_usd"]).all()
    assert lines["source"].str.len().min() > 0 and lines["formula"].str.len().min() > 0


def test_llama2_70b_within_25_percent_without_mfu():
    # no GPU count published: sized to the wall-clock of published runs of its compute (1,768 GPUs for 38 days;
    # 7,584 GPUs for 14 days and +48 % before issue 29); Meta reports 1,720,320 GPU-hours
    est = estimate(Scenario(params=70e9, tokens=2e12, seq_len=4096, gpu="A100-SXM4-80GB"))
    assert 1000 < est.n_gpus < 3000 and 25 < est.wall_days < 60
    assert est.gpu_hours == pytest.approx(1_720_320, rel=0.25)


def test_moe_uses_active_params():
    dense = estimate(Scenario(params=37e9, tokens=14.8e12, gpu="H800", mfu=0.3))
    moe = estimate(Scenario(params=671e9, active_params=37e9, tokens=14.8e12, gpu="H800", mfu=0.3))
    assert moe.training_flops == pytest.approx(dense.training_flops)
    # but memory holds all 671B parameters
    assert moe.details["min_gpus_to_fit"] > dense.details["min_gpus_to_fit"]


def test_memory_warning_when_cluster_too_small():
    est = estimate(Scenario(params=405e9, n_gpus=16, gpu="H100"))
    warning = next(w for w in est.warnings if "does not fit in memory" in w)
    # the message names what it needs and the field to change: the fewest GPUs any layout fits on
    assert "GiB per GPU" in warning and f"n_gpus of at least {est.details['fit_min_gpus']:,.0f}" in warning
    assert not est.details["layout_fits"]
    est = estimate(Scenario(params=405e9, seq_len=8192, tensor_parallel=1, zero_stage=0))
    assert any("does not fit" in w for w in est.warnings)
    assert np.isinf(est.details["min_gpus_to_fit"])


def test_json_form_has_required_keys():
    out = estimate().to_dict()
    for key in ("training_flops", "gpu_hours", "wall_days", "n_gpus", "mfu", "total_cost_usd", "lines"):
        assert key in out
    assert {"stage", "category", "cost_usd"} <= set(out["lines"][0])


scenario_inputs = st.fixed_dictionaries({
    "params": st.floats(1e8, 2e12), "tokens": st.floats(1e9, 5e13), "seq_len": st.integers(512, 131072),
    "mfu": st.floats(0.05, 0.9), "gpu": st.sampled_from(["H100", "A100", "H200", "B200", "A100-40GB", "H800"]),
    "pricing": st.sampled_from(["on_demand", "reserved_1y", "reserved_3y", "spot"]),
})


@settings(max_examples=150, deadline=None)
@given(scenario_inputs, st.floats(1.01, 10))
def test_properties(kw, factor):
    kw = {**kw, "n_gpus": 1024}  # a derived GPU count may jump with memory needs and shorten the run
    base = estimate(Scenario(**kw))
    assert base.total_cost_usd >= 0 and (base.lines["cost_usd"] >= 0).all()
    assert np.isfinite(base.total_cost_usd)
    for name in ("params", "tokens", "seq_len"):
        f = sc_field(name)
        bigger = min(kw[name] * factor, f.max)
        bigger = int(bigger) if name == "seq_len" else bigger
        if bigger <= kw[name]:
            continue
        more = estimate(Scenario(**{**kw, name: bigger}))
        assert more.total_cost_usd > base.total_cost_usd
        assert more.gpu_hours > base.gpu_hours
    # inverse in MFU: gpu_hours x mfu is constant
    lower_mfu = kw["mfu"] / factor
    if lower_mfu < sc_field("mfu").min:
        return
    other = estimate(Scenario(**{**kw, "mfu": lower_mfu}))
    assert other.gpu_hours * other.mfu == pytest.approx(base.gpu_hours * base.mfu, rel=1e-9)
    assert pretrain_compute(other) == pytest.approx(pretrain_compute(base) * factor, rel=1e-9)
    assert other.total_cost_usd > base.total_cost_usd


def pretrain_compute(est):
    lines = est.lines
    return lines.loc[(lines["stage"] == "pretrain") & (lines["item"] == "accelerator time"), "cost_usd"].item()


def sc_field(name):
    return workbench.plan.scenario.fields()[name]


def test_batch_equals_loop():
    rng = np.random.default_rng(0)
    n = 50
    frame = pd.DataFrame({
        "params": 10 ** rng.uniform(9, 12, n), "tokens": 10 ** rng.uniform(10, 13.5, n),
        "seq_len": rng.choice([2048, 4096, 8192], n), "gpu": rng.choice(["H100", "A100", "B200"], n),
        "pricing": rng.choice(["on_demand", "spot"], n),
        "mfu": np.where(rng.random(n) < 0.5, np.nan, rng.uniform(0.2, 0.6, n)),
    })
    frame["mfu"] = frame["mfu"].astype(object).where(frame["mfu"].notna(), None)
    batch = estimate(Scenario.from_frame(frame.drop(columns="mfu").assign(mfu=frame["mfu"].fillna(0.3))))
    for i in range(n):
        row = frame.iloc[i].drop("mfu").to_dict()
        single = estimate(Scenario(**row, mfu=0.3 if frame["mfu"][i] is None else frame["mfu"][i]))
        assert batch.total_cost_usd[i] == pytest.approx(single.total_cost_usd)
        assert batch.n_gpus[i] == single.n_gpus
        got = batch.lines[batch.lines["scenario"] == i].drop(columns="scenario").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, single.lines.drop(columns="scenario"))


def test_batch_with_default_mfu_matches_scalar():
    batch = estimate(Scenario(params=np.array([7e9, 7e10]), gpu="A100"))
    assert batch.mfu[1] == pytest.approx(estimate(Scenario(params=7e10, gpu="A100")).mfu)
    assert batch.total_cost_usd.shape == (2,)


def test_recompute_costs_time_under_the_prior():
    # issue 10: with the MFU prior (fitted on runs that recomputed attention), full recompute must cost GPU-hours;
    # the hardware utilisation (HFU) stays the prior's, so hours scale with hardware FLOPs
    none, selective, full = (estimate(Scenario(recompute=r, n_gpus=256, tensor_parallel=1, pipeline_parallel=1,
                                               zero_stage=3, micro_batch_size=1)) for r in ("none", "selective", "full"))
    assert full.gpu_hours > selective.gpu_hours > none.gpu_hours
    assert full.details["hfu"] == pytest.approx(selective.details["hfu"]) == pytest.approx(none.details["hfu"])
    ratio = full.details["hardware_flops"] / selective.details["hardware_flops"]
    assert full.gpu_hours / selective.gpu_hours == pytest.approx(ratio)
    assert "for recompute='full'" in full.defaults_used["mfu"]
    # a given MFU is the user's own measurement, recompute included
    given = [estimate(Scenario(recompute=r, mfu=0.4)).gpu_hours for r in ("none", "selective", "full")]
    assert given[0] == given[1] == given[2]


def test_parallel_layout_is_checked():
    """Attack found: pipeline stages beyond the layers were accepted, and sizing ignored the model-parallel group."""
    with pytest.raises(ScenarioError, match=r"pipeline_parallel=64: is more pipeline stages than the model's 33 layers"):
        Scenario(pipeline_parallel=64)
    with pytest.raises(ScenarioError, match=r"pipeline_parallel=17: .* 16 layers"):
        Scenario(n_layers=16, pipeline_parallel=17)
    assert Scenario(params=405e9, pipeline_parallel=16).pipeline_parallel == 16
    sized = estimate(pipeline_parallel=2, tensor_parallel=8)  # a 16-GPU group: whole groups of whole nodes
    assert sized.n_gpus % 16 == 0 and sized.n_gpus >= estimate().n_gpus
    assert estimate(pipeline_parallel=3, tensor_parallel=8).n_gpus % 24 == 0
    assert any("n_gpus=100 is not a multiple of tensor_parallel x pipeline_parallel = 8" in w
               for w in estimate(n_gpus=100, tensor_parallel=8).warnings)
    assert not any("multiple" in w for w in estimate(n_gpus=96, tensor_parallel=8).warnings)


def test_size_sweeps_bring_the_layout_within_each_size():
    """A layout valid at 7B (33 pipeline stages, 32 KV heads) cannot hold at 1B: sweeps over size clamp it."""
    from workbench import sensitivity
    from workbench.plan import explore
    from workbench.report import views
    s = Scenario(pipeline_parallel=33, n_kv_heads=32)
    curve = views.size_curve(s)
    assert len(curve) == 25 and (curve["cost_usd"] > 0).all()
    assert sensitivity(s).set_index("input").loc["params", "low_total_usd"] > 0
    assert len(explore.isoflop(s, 1e23)) == 25
    small = s.resized(params=1e9)
    assert small.pipeline_parallel < 33 and small.n_kv_heads < 32
    with pytest.raises(ScenarioError, match="pipeline_parallel"):
        s.replace(params=1e9)  # a change the user makes is checked, not clamped
