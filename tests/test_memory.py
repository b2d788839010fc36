"""Memory formulas, checked by hand."""
import numpy as np
import pytest

from workbench import memory


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
    # none adds 5 a s / h with a = h / 128 = 64 heads: 5 x 64 x 4096 / 8192 = 160 -> (34 + 160)
    assert memory.activation_bytes(s, h, L, b, "none", t) == pytest.approx(s * b * h * 194 * L / t)
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
