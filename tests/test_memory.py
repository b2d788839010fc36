"""Memory formulas, checked by hand."""
import numpy as np
import pytest

from workbench.formulas import memory


def test_model_states_by_zero_stage():
    p = 70e9
    # ZeRO-0: 16 bytes/param on every GPU = 1.12e12 bytes
    assert memory.model_state_bytes(p, 64, 0) == pytest.approx(1.12e12)
    # ZeRO-1: 4 bytes whole + 12 sharded over 64: 2.8e11 + 1.3125e10
    assert memory.model_state_bytes(p, 64, 1) == pytest.approx(2.8e11 + 12 * p / 64)
    # ZeRO-2: 2 + 14/64
    assert memory.model_state_bytes(p, 64, 2) == pytest.approx(2 * p + 14 * p / 64)
    # ZeRO-3: 16/64 = 1.75e10
    assert memory.model_state_bytes(p, 64, 3) == pytest.approx(1.75e10)
    # tensor parallel divides the unsharded part: ZeRO-1, t = 8: 4p/8 + 12p/64
    assert memory.model_state_bytes(p, 64, 1, 8) == pytest.approx(4 * p / 8 + 12 * p / 64)


def test_activation_bytes_korthikanti():
    s, h, L, b, t = 4096, 8192, 80, 1, 8
    # selective: 34 s b h L / t = 34 x 4096 x 8192 x 80 / 8 = 1.1408e10
    assert memory.activation_bytes(s, h, L, b, "selective", t) == pytest.approx(34 * 4096 * 8192 * 80 / 8)
    # none with a standard kernel adds 5 a s / h with a = h / 128 = 64 heads: 5 x 64 x 4096 / 8192 = 160 -> (34 + 160)
    assert memory.activation_bytes(s, h, L, b, "none", t, 128, "standard") == pytest.approx(s * b * h * 194 * L / t)
    # a fused (FlashAttention) kernel, the default, never stores the scores: none = selective
    assert memory.activation_bytes(s, h, L, b, "none", t) == pytest.approx(34 * 4096 * 8192 * 80 / 8)
    # full: 2 s b h L / t + one layer of 34 s b h / t
    assert memory.activation_bytes(s, h, L, b, "full", t) == pytest.approx((2 * L + 34) * s * b * h / t)


def test_min_gpus_to_fit_hand_checked():
    p, mem = 70e9, 80e9
    act = memory.activation_bytes(4096, 8192, 80, 1, "selective", 8)
    # ZeRO-3: 16 p / (0.9 x 80e9 - act) = 1.12e12 / 6.0592e10 = 18.48 -> multiple of t = 8 -> 24
    assert memory.min_gpus_to_fit(p, mem, act, 3, 8, 0.9) == 24
    # ZeRO-0 with t = 8: 16 p / 8 = 1.4e11 bytes per GPU > 72e9: never fits
    assert np.isinf(memory.min_gpus_to_fit(p, mem, act, 0, 8, 0.9))
    # a 1B model with ZeRO-0 fits on one tensor-parallel group
    assert memory.min_gpus_to_fit(1e9, mem, 1e9, 0, 1, 0.9) == 1


def test_more_memory_never_needs_more_gpus():
    small = memory.min_gpus_to_fit(70e9, 40e9, 5e9, 3, 8)
    big = memory.min_gpus_to_fit(70e9, 80e9, 5e9, 3, 8)
    assert big <= small


def test_pipeline_parallel_and_gradient_precision():
    p = 70e9
    # ZeRO-1, t = 8, p = 4: (2 + 2) p / 32 whole + 12 p / 64 sharded
    assert memory.model_state_bytes(p, 64, 1, 8, 4) == pytest.approx(4 * p / 32 + 12 * p / 64)
    # fp32 gradients: ZeRO-0 holds 2 + 4 + 12 = 18 bytes/param
    assert memory.model_state_bytes(p, 64, 0, 1, 1, "fp32") == pytest.approx(18 * p)
    # 1F1B: the first stage holds L/p layers for each of p micro-batches in flight = L layers, whatever p is
    one = memory.activation_bytes(4096, 8192, 80, 1, "selective", 8)
    assert memory.activation_bytes(4096, 8192, 80, 1, "selective", 8, 128, "flash", 16) == pytest.approx(one)
    # uneven stages: 126 layers over 16 stages -> 8 layers per micro-batch on the first stage, 16 in flight
    uneven = memory.activation_bytes(8192, 16384, 126, 1, "selective", 8, 128, "flash", 16)
    assert uneven == pytest.approx(128 * 34 * 8192 * 16384 / 8)
    # the fit is a multiple of t x p
    assert memory.min_gpus_to_fit(70e9, 80 * memory.GIB, one, 3, 8, 0.9, 4) % 32 == 0


def test_capacity_is_binary():
    # an "80 GB" H100 holds 80 GiB = 85,899,345,920 bytes
    assert memory.capacity_bytes(80) == 85_899_345_920


def test_llama_3_405b_fits_in_its_published_layout():
    # Dubey et al. 2024, Sec. 3.3.2: TP 8 x PP 16 (x CP x DP) on 16,384 H100, 8K sequences
    from workbench import Scenario, estimate
    est = estimate(Scenario(params=405e9, tokens=15.6e12, seq_len=8192, gpu="H100", n_gpus=16384, tensor_parallel=8,
                            pipeline_parallel=16))
    assert not [w for w in est.warnings if "memory" in w or "fit" in w], est.warnings
    assert est.details["memory_bytes_per_gpu"] < 0.9 * 80 * memory.GIB
    assert est.details["min_gpus_to_fit"] <= 16384
