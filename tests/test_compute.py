"""Compute and time formulas, checked by hand."""
import numpy as np
import pytest

from workbench.formulas import compute


def test_dense_flops_is_six_n_d():
    # Llama 2 7B: 6 x 7e9 x 2e12 = 8.4e22
    assert compute.dense_training_flops(7e9, 2e12) == pytest.approx(8.4e22)


def test_attention_flops_hand_checked():
    # D = 2e12 tokens, L = 32, s = 4096, h = 4096: 6 x 2e12 x 32 x 4096 x 4096 = 6.442450944e21
    assert compute.attention_training_flops(2e12, 4096, 4096, 32) == pytest.approx(6.442450944e21)


def test_attention_overhead_is_s_over_12h():
    # With N = 12 L h^2 exactly, attention / 6ND = s / (12 h): 4096 / (12 x 4096) = 1/12
    L, h, s = 32, 4096, 4096
    n = 12 * L * h**2
    ratio = compute.attention_training_flops(1e12, s, h, L) / compute.dense_training_flops(n, 1e12)
    assert ratio == pytest.approx(1 / 12)
    # 8192 context at the same width: twice the overhead (1/6)
    assert compute.attention_training_flops(1e12, 2 * s, h, L) / compute.dense_training_flops(n, 1e12) == pytest.approx(1 / 6)


def test_recompute_flops():
    # full recompute = one more forward = (6ND + attention) / 3; selective = attention forward only
    full = compute.recompute_flops(7e9, 1e12, 4096, 4096, 32, "full")
    sel = compute.recompute_flops(7e9, 1e12, 4096, 4096, 32, "selective")
    attention = 6 * 1e12 * 32 * 4096 * 4096
    assert full == pytest.approx((6 * 7e9 * 1e12 + attention) / 3)
    assert sel == pytest.approx(attention / 3)
    assert compute.recompute_flops(7e9, 1e12, 4096, 4096, 32, "none") == 0


def test_gpu_hours_and_days_hand_checked():
    # 8.4e23 FLOP at 312 TFLOP/s x 0.4: 8.4e23 / (312e12 x 0.4 x 3600) = 1,869,658.1 GPU-h
    hours = compute.gpu_hours(8.4e23, 312e12, 0.4)
    assert hours == pytest.approx(1_869_658.12, rel=1e-8)
    # on 2048 GPUs: 1,869,658.12 / 2048 / 24 = 38.04 days
    assert compute.wall_days(hours, 2048) == pytest.approx(38.0383, rel=1e-4)


def test_gpus_for_duration_rounds_up_to_whole_nodes():
    # 100,000 GPU-h in 10 days = 416.7 GPUs -> 53 nodes of 8 = 424 GPUs
    assert compute.gpus_for_duration(100_000, 10, 8) == 424
    # exact fit stays
    assert compute.gpus_for_duration(24 * 10 * 16, 10, 8) == 16
    # never below one node
    assert compute.gpus_for_duration(1, 10, 8) == 8


def test_derived_architecture():
    # N = 12 L h^2 with h = 128 L  =>  h = (128 N / 12)^(1/3) = (7.4667e10)^(1/3) = 4210.9 for 7e9
    assert compute.derived_d_model(7e9) == pytest.approx((128 * 7e9 / 12) ** (1 / 3))
    assert compute.derived_d_model(7e9) == pytest.approx(4210.9, abs=0.05)
    assert compute.derived_n_layers(4210.9) == 33
    assert compute.derived_n_layers(10.0) == 1


def test_vectorised():
    n = np.array([1e9, 7e9, 70e9])
    np.testing.assert_allclose(compute.dense_training_flops(n, 1e12), 6 * n * 1e12)
