"""Monte Carlo ranges: seedable, consistent with single estimates, documented distributions."""
import numpy as np
import pytest

from workbench import Scenario, estimate, monte_carlo
from workbench.plan.scenario import fields
from workbench.plan.uncertainty import distributions


def test_distributions_are_documented_and_name_real_fields():
    table = distributions()
    assert set(table["distribution"]) <= {"lognormal", "triangular"}
    assert set(table.index) <= set(fields())
    assert {"mfu", "price_per_gpu_hour", "gpu_failure_rate_per_day", "tokens", "sft_usd_per_example"} <= set(table.index)
    assert (table["rationale"].str.len() > 20).all()


def test_seedable_and_ordered():
    a = monte_carlo(n=5000, seed=1)
    b = monte_carlo(n=5000, seed=1)
    c = monte_carlo(n=5000, seed=2)
    assert a.samples.equals(b.samples) and not a.samples.equals(c.samples)
    row = a.summary.loc["total_cost_usd"]
    assert row["p10"] < row["p50"] < row["p90"]
    assert row["p10"] < row["deterministic"] < row["p90"]
    assert len(a.samples) == 5000 and (a.samples["total_cost_usd"] > 0).all()


def test_samples_equal_single_estimates():
    mc = monte_carlo(Scenario(params=13e9), n=200, seed=3)
    base = estimate(Scenario(params=13e9))
    fixed = {"params": 13e9, "n_gpus": base.n_gpus}
    for row in mc.samples.head(10).to_dict("records"):
        inputs = {k: row[k] for k in distributions().index}
        single = estimate(Scenario(**fixed, **inputs))
        assert single.total_cost_usd == pytest.approx(row["total_cost_usd"])
        assert single.details["training_days_total"] == pytest.approx(row["duration_days"])


def test_samples_stay_in_range_and_follow_their_distribution():
    mc = monte_carlo(n=20_000, seed=0)
    base = estimate()
    mfu = mc.samples["mfu"]
    assert mfu.between(fields()["mfu"].min, fields()["mfu"].max).all()
    # lognormal sigma 0.19 around the prior (its leave-one-out error): median ~ prior, log-spread ~ 0.19
    assert np.median(mfu) == pytest.approx(base.mfu, rel=0.01)
    assert np.std(np.log(mfu / base.mfu)) == pytest.approx(0.19, rel=0.05)
    # a typed MFU is a measurement: its own spread (mfu_uncertainty, default 0.05), a narrower range
    typed = monte_carlo(Scenario(mfu=0.4), n=20_000, seed=0)
    assert np.std(np.log(typed.samples["mfu"] / 0.4)) == pytest.approx(0.05, rel=0.05)
    wide = monte_carlo(Scenario(mfu=0.4, mfu_uncertainty=0.25), n=20_000, seed=0)
    spread = {name: mc.summary.loc["total_cost_usd"] for name, mc in (("typed", typed), ("wide", wide))}
    assert spread["typed"]["p90"] - spread["typed"]["p10"] < spread["wide"]["p90"] - spread["wide"]["p10"]
    tokens = mc.samples["tokens"] / 2e12
    assert tokens.min() >= 0.95 and tokens.max() <= 1.2


def test_bad_n_is_refused():
    with pytest.raises(ValueError, match="n=0"):
        monte_carlo(n=0)
