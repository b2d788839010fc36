"""Sweeps behind the notebooks: values checked against the underlying formulas."""
import numpy as np
import pytest

from workbench import Scenario, estimate
from workbench.plan import explore
from workbench.formulas import scaling
from workbench.plan.presets import preset


def test_isoflop_keeps_the_budget_and_finds_the_optimum():
    frame = explore.isoflop(Scenario(), flops=1e23)
    assert np.allclose(6 * frame["params"] * frame["tokens"], 1e23)
    best = frame.loc[frame["loss"].idxmin()]
    assert frame.loc[frame["optimal"], "params"].item() == pytest.approx(best["params"], rel=0.1)
    n_opt, _ = scaling.compute_optimal(1e23)
    assert best["params"] == pytest.approx(n_opt, rel=0.1)


def test_budget_doubling():
    frame = explore.budget_doubling(1e24)
    assert list(frame["budget_multiple"]) == [1, 2, 4, 8]
    assert frame["loss"].is_monotonic_decreasing
    # N_opt grows as C^(beta/(alpha+beta)) = C^0.5126: doubling -> x1.427
    assert frame["params"][1] / frame["params"][0] == pytest.approx(2 ** (0.3658 / (0.3478 + 0.3658)))


def test_context_sweep_grows_super_linearly():
    frame = explore.context_sweep(Scenario(params=7e10, d_model=8192, n_layers=80), [2048, 8192, 32768])
    flops = frame["training_flops"].to_numpy()
    # attention term 6 D L s h: each 4x of s adds 3 x 6 x 2e12 x 80 x 2048 x 8192 x ... exactly
    step = 6 * 2e12 * 80 * 8192 * (8192 - 2048)
    assert flops[1] - flops[0] == pytest.approx(step)
    assert flops[2] - flops[1] == pytest.approx(4 * step)
    assert frame["activation_gb_per_gpu"].is_monotonic_increasing


def test_checkpoint_sweep_minimum_near_young_daly():
    frame = explore.checkpoint_sweep(preset("llama31-405b"), points=41)
    best = frame.loc[frame["failures_usd"].idxmin(), "interval_hours"]
    assert best == pytest.approx(frame["young_daly_hours"][0], rel=0.25)


def test_failure_and_spot_sweeps():
    rates = explore.failure_rate_sweep(Scenario(n_gpus=1024))
    assert rates["failure_gpu_hours"].is_monotonic_increasing and rates["mtbf_hours"].is_monotonic_decreasing
    spot = explore.spot_vs_on_demand(Scenario(n_gpus=1024), [0, 1, 10])
    assert spot["compute_and_failures_usd"][:3].is_monotonic_increasing
    assert spot["pricing"].tolist() == ["spot", "spot", "spot", "on_demand"]


def test_serving_sweep_hand_checked():
    s = Scenario(serving_months=1, d_model=4096, n_layers=32, serving_tensor_parallel=1, serving_prefill="disaggregated")
    frame = explore.serving_sweep(s, "requests_per_day", [1e4, 1e6])
    # 1e4 requests/day: far below one GPU's capacity -> the 2 minimum replicas; 1e6: 3 (test_cost_model)
    assert frame["serving_gpus"].tolist() == [2, 3]
    assert frame["cost_per_month_usd"][0] == pytest.approx(2 * 730.5 * 3.99)
    assert frame["cost_per_million_tokens_usd"][1] == pytest.approx(
        estimate(s).details["serving_cost_per_million_tokens_usd"])
