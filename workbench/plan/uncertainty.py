"""Monte Carlo: ranges instead of points. Uncertain inputs are sampled from the distributions in
``data/uncertainty.csv`` (each with its rationale), all scenarios are evaluated in one vectorised pass,
and the result holds P10 / P50 / P90 of total cost and duration with the samples themselves.

Distributions are multiplicative around the scenario's own value (inputs left empty take the value the
estimate resolved, e.g. the MFU prior): ``lognormal`` with median 1 and the given sigma, or
``triangular`` with low / mode / high multipliers. Samples are clipped to each field's allowed range.
The GPU count is held at the scenario's (resolved) value, so that slower training shows up as a longer
run rather than as a bigger cluster.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..reference.data import DataFileError, cached, data_dir, read_table
from .estimate import estimate, totals
from .scenario import Scenario, ScenarioError, fields

PERCENTILES = (10, 50, 90)
#: Inputs whose empty value the estimate resolves, and where the resolved value is found.
_RESOLVED = {"mfu": "mfu", "price_per_gpu_hour": "price_per_gpu_hour", "n_gpus": "n_gpus",
             "tensor_parallel": "tensor_parallel_used", "pipeline_parallel": "pipeline_parallel_used",
             "zero_stage": "zero_stage_used", "micro_batch_size": "micro_batch_size_used",
             "global_batch_tokens": "global_batch_tokens", "target_days": "target_days_used"}
#: Resolved inputs that are whole numbers.
_WHOLE = ("tensor_parallel", "pipeline_parallel", "zero_stage", "micro_batch_size")


@cached
def distributions() -> pd.DataFrame:
    """The sampled inputs and their distributions (``data/uncertainty.csv``)."""
    numeric_fields = {name for name, f in fields().items() if f.type == "float"}  # samples are not whole numbers
    table = read_table("uncertainty.csv", numeric=("low", "mode", "high", "sigma"),
                       required=("field", "distribution", "rationale"), key="field",
                       bounds={"low": (0, 100), "mode": (0, 100), "high": (0, 100), "sigma": (0, 5)},
                       choices={"field": numeric_fields, "distribution": ("lognormal", "triangular")})
    path = data_dir() / "uncertainty.csv"
    for row_number, row in enumerate(table.to_dict("records"), start=2):
        if row["distribution"] == "lognormal" and np.isnan(row["sigma"]):
            raise DataFileError(path, "a lognormal distribution needs sigma", row_number, "sigma")
        if row["distribution"] == "triangular":
            low, mode, high = row["low"], row["mode"], row["high"]
            if np.isnan([low, mode, high]).any() or not low <= mode <= high or low == high:
                raise DataFileError(path, "a triangular distribution needs low <= mode <= high with low < high",
                                    row_number, "low")
    return table.set_index("field", drop=False)


@dataclass
class MonteCarlo:
    """Result of :func:`monte_carlo`: ``samples`` (one row per draw: sampled inputs, ``total_cost_usd``,
    ``duration_days``) and ``summary`` (P10 / P50 / P90 of both, and the deterministic estimate)."""

    samples: pd.DataFrame
    summary: pd.DataFrame
    base_total_cost_usd: float
    base_duration_days: float

    def percentile(self, column: str, q: float) -> float:
        return float(np.percentile(self.samples[column], q))


def _multipliers(row, n: int, rng: np.random.Generator) -> np.ndarray:
    if row["distribution"] == "lognormal":
        return np.exp(rng.normal(0.0, row["sigma"], n))
    if row["distribution"] == "triangular":
        return rng.triangular(row["low"], row["mode"], row["high"], n)
    raise ValueError(f"data/uncertainty.csv: unknown distribution {row['distribution']!r} for {row['field']}")


def monte_carlo(scenario: Scenario | None = None, n: int = 100_000, seed: int | None = 0, base=None) -> MonteCarlo:
    """Sample ``n`` scenarios around ``scenario`` and evaluate them in one pass; ``seed`` makes it repeatable.
    ``base``: an estimate of ``scenario`` already at hand (saves computing it again)."""
    scenario = Scenario() if scenario is None else scenario
    if not isinstance(scenario, Scenario) or scenario.batch_size is not None:
        raise ScenarioError("scenario", scenario, "is not a single Scenario", "a single workbench.Scenario")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= 10_000_000:
        raise ScenarioError("n", n, "is not a number of draws", "a whole number from 1 to 10,000,000")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ScenarioError("seed", seed, "is not a seed", "a whole number from 0, or None")
    base = estimate(scenario) if base is None else base
    rng = np.random.default_rng(seed)
    spec = fields()
    values = scenario.to_dict()
    for name, figure in _RESOLVED.items():
        values[name] = float(base.mfu if figure == "mfu" else base.n_gpus if figure == "n_gpus"
                             else base.details[figure])
        if name in _WHOLE:
            values[name] = int(round(values[name]))
    sampled = {}
    for row in distributions().to_dict("records"):
        f = spec[row["field"]]
        if row["field"] == "mfu" and scenario.mfu is not None:
            # a typed MFU is the user's measurement: its own spread, not the prior's leave-one-out error
            row = {**row, "sigma": scenario.mfu_uncertainty}
        draws = values[row["field"]] * _multipliers(row, n, rng)
        sampled[row["field"]] = np.clip(draws, f.min, f.max)
    total, figures = totals(Scenario(**{**values, **sampled}))
    samples = pd.DataFrame(sampled)
    samples["total_cost_usd"] = total
    samples["duration_days"] = figures["training_days_total"]
    rows = []
    for column, deterministic in (("total_cost_usd", base.total_cost_usd),
                                  ("duration_days", base.details["training_days_total"])):
        p = np.percentile(samples[column], PERCENTILES)
        rows.append({"figure": column, **{f"p{q}": v for q, v in zip(PERCENTILES, p)},
                     "mean": float(samples[column].mean()), "deterministic": float(deterministic)})
    return MonteCarlo(samples, pd.DataFrame(rows).set_index("figure"), float(base.total_cost_usd),
                      float(base.details["training_days_total"]))
