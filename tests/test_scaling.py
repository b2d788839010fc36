"""Scaling laws against hand arithmetic."""
import numpy as np
import pytest

from workbench.formulas import scaling


def test_loss_formula():
    # besiroglu2024: 1.8172 + 482.01 / 7e10^0.3478 + 2085.43 / 1.4e12^0.3658
    expected = 1.8172 + 482.01 / 7e10 ** 0.3478 + 2085.43 / 1.4e12 ** 0.3658
    assert scaling.loss(7e10, 1.4e12) == pytest.approx(expected)
    # hoffmann2022 published values
    assert scaling.loss(7e10, 1.4e12, "hoffmann2022") == pytest.approx(1.69 + 406.4 / 7e10 ** 0.34 + 410.7 / 1.4e12 ** 0.28)


def test_compute_optimal_hand_checked():
    a, b, A, B = 0.3478, 0.3658, 482.01, 2085.43
    g = (a * A / (b * B)) ** (1 / (a + b))
    c = 5.76e23  # Chinchilla's budget
    n_opt, d_opt = scaling.compute_optimal(c)
    assert n_opt == pytest.approx(g * (c / 6) ** (b / (a + b)))
    assert 6 * n_opt * d_opt == pytest.approx(c)
    # about 72B parameters and 1.33T tokens: ~18 tokens per parameter, close to Chinchilla's 70B / 1.4T
    assert n_opt == pytest.approx(7.22e10, rel=0.01)
    assert 15 < d_opt / n_opt < 25


def test_compute_optimal_minimises_loss_on_the_isoflop_curve():
    c = 1e24
    n_opt, d_opt = scaling.compute_optimal(c)
    for factor in (0.5, 0.8, 1.25, 2.0):
        n = n_opt * factor
        assert scaling.loss(n, c / (6 * n)) > scaling.loss(n_opt, d_opt)


def test_optimality_warning():
    assert scaling.optimality_warning(7e9, 2e12) is None  # Llama 2 7B: 3.9x from optimal, within 4x
    note = scaling.optimality_warning(8e9, 15e12)  # Llama 3 8B: 1875 tokens/param
    assert note and "smaller than compute-optimal" in note and "1,875 tokens/parameter" in note
    assert "larger" in scaling.optimality_warning(1e12, 1e10)


def test_tokens_per_param():
    assert scaling.tokens_per_param(7e10, 1.4e12) == pytest.approx(20)
    np.testing.assert_allclose(scaling.tokens_per_param(np.array([1e9, 2e9]), 2e10), [20, 10])


def test_estimate_uses_the_scenarios_scaling_law():
    from workbench import Scenario, estimate
    a = estimate(Scenario(params=7e10, tokens=1.4e12))
    b = estimate(Scenario(params=7e10, tokens=1.4e12, scaling_law="hoffmann2022"))
    assert a.details["predicted_loss"] == pytest.approx(scaling.loss(7e10, 1.4e12))
    assert b.details["predicted_loss"] == pytest.approx(scaling.loss(7e10, 1.4e12, "hoffmann2022"))
    assert b.details["compute_optimal_params"] == pytest.approx(scaling.compute_optimal(6 * 7e10 * 1.4e12, "hoffmann2022")[0])
