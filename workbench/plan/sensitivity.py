"""Sensitivity: what moves the total most (a tornado chart's data), in one vectorised pass.

Each input of :data:`INPUTS` is set to a low and a high value, one at a time, all other inputs at the
scenario's values (inputs left empty take the value the estimate resolved, e.g. the MFU prior). The
default range is -25 % / +25 %; failure rates span 0.5x to 2x (published rates differ by more than
+-25 %), and the redundancy factor the planning range 1.2-1.5.

Every perturbed scenario is a valid one: values are clipped to the field's range and to the rules between
fields (a GPU count no smaller than the tensor-parallel group; a mixture-of-experts keeps its ratio of
active to total parameters). An input that cannot move within them is reported as such in ``note``, with
its totals at the base; sensitivity never fails on a scenario that estimates.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .estimate import estimate, totals as batch_totals
from .scenario import bounded_by_shape, Scenario, ScenarioError, fields

#: (field, low, high, how): ``scale`` multiplies the base value, ``absolute`` sets the value.
INPUTS = (
    ("params", 0.75, 1.25, "scale"), ("tokens", 0.75, 1.25, "scale"), ("seq_len", 0.75, 1.25, "scale"),
    ("mfu", 0.75, 1.25, "scale"), ("price_per_gpu_hour", 0.75, 1.25, "scale"), ("n_gpus", 0.75, 1.25, "scale"),
    ("gpu_failure_rate_per_day", 0.5, 2.0, "scale"), ("experiment_fraction", 0.75, 1.25, "scale"),
    ("sft_examples", 0.75, 1.25, "scale"), ("sft_usd_per_example", 0.75, 1.25, "scale"),
    ("preference_pairs", 0.75, 1.25, "scale"), ("preference_usd_per_pair", 0.75, 1.25, "scale"),
    ("annotation_rework_rate", 0.75, 1.25, "scale"), ("staff_fte", 0.75, 1.25, "scale"),
    ("staff_usd_per_month", 0.75, 1.25, "scale"), ("redundancy_factor", 1.2, 1.5, "absolute"),
)
#: Inputs whose empty value is resolved by the estimate, and the figure holding the resolved value.
_RESOLVED = {"mfu": "mfu", "price_per_gpu_hour": "price_per_gpu_hour", "n_gpus": "n_gpus",
             "tensor_parallel": "tensor_parallel_used", "pipeline_parallel": "pipeline_parallel_used",
             "zero_stage": "zero_stage_used", "micro_batch_size": "micro_batch_size_used",
             "global_batch_tokens": "global_batch_tokens", "target_days": "target_days_used"}
#: Resolved inputs that are whole numbers.
_WHOLE = ("tensor_parallel", "pipeline_parallel", "zero_stage", "micro_batch_size")
COLUMNS = ["input", "label", "unit", "base_value", "low_value", "high_value", "low_total_usd", "high_total_usd",
           "base_total_usd", "swing_usd", "note"]


def resolved_values(scenario: Scenario, base) -> dict:
    """The scenario's fields with the inputs the estimate resolved (MFU prior, price, GPU count) filled in."""
    values = scenario.to_dict()
    for name, figure in _RESOLVED.items():
        values[name] = float(getattr(base, figure) if figure in ("mfu", "n_gpus") else base.details[figure])
        if name in _WHOLE:
            values[name] = int(round(values[name]))
    values["n_gpus"] = float(np.clip(values["n_gpus"], values["tensor_parallel"] * values["pipeline_parallel"],
                                     fields()["n_gpus"].max))
    return values


def _perturbed(name: str, value: float, values: dict) -> dict:
    """The changes that set input ``name`` to ``value`` within every field range and cross-field rule."""
    f = fields()[name]
    value = float(np.clip(value, f.min, f.max))
    if name == "n_gpus":
        value = max(value, float(values["tensor_parallel"] * values["pipeline_parallel"]))
    if f.type == "int":
        value = int(round(value))
    changes = {name: value}
    if name == "params" and values["active_params"] is not None:  # a mixture-of-experts scales as a whole
        active = fields()["active_params"]
        changes["active_params"] = float(np.clip(values["active_params"] * value / values["params"], active.min, value))
    return {k: (v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v)
            for k, v in bounded_by_shape(values, changes).items()}


def sensitivity(scenario: Scenario | None = None, inputs=INPUTS, base=None) -> pd.DataFrame:
    """Total cost at each input's low and high value, ordered by swing (largest first).

    Columns: ``input``, ``label``, ``unit``, ``base_value``, ``low_value``, ``high_value``,
    ``low_total_usd``, ``high_total_usd``, ``base_total_usd``, ``swing_usd`` (high - low, absolute) and
    ``note`` (empty, or why an input could not move: at the edge of its range, or a rule it would break).
    ``base``: an estimate of ``scenario`` already at hand (saves computing it again).
    """
    scenario = Scenario() if scenario is None else scenario
    for name, *_ in inputs:
        if name not in fields() or not fields()[name].numeric:
            raise ScenarioError("inputs", name, "is not a numeric scenario field", "fields of data/scenario_fields.csv")
    if not isinstance(scenario, Scenario) or scenario.batch_size is not None:
        raise ScenarioError("scenario", "batch", "sensitivity takes a single scenario", "a single scenario")
    base = estimate(scenario) if base is None else base  # the caller's estimate of the same scenario
    spec = fields()
    values = resolved_values(scenario, base)
    rows, changes = [], []
    for name, low, high, how in inputs:
        if name == "mfu" and how == "scale":
            # the MFU moves by its own P10-P90 spread: a typed (measured) MFU's, or the model's leave-one-out error
            sigma = scenario.mfu_uncertainty if scenario.mfu is not None else _prior_sigma()
            low, high = float(np.exp(-1.2816 * sigma)), float(np.exp(1.2816 * sigma))
        f = spec[name]
        base_value = values[name]
        pair = [_perturbed(name, v if how == "absolute" else base_value * v, values) for v in (low, high)]
        moved = [c[name] for c in pair]
        note = "" if moved != [base_value, base_value] else "cannot move: at the edge of its allowed range"
        rows.append([name, f.label, f.unit, base_value, *moved, note])
        changes += pair
    totals = _batch_totals(values, changes, base.total_cost_usd)
    table = pd.DataFrame(rows, columns=["input", "label", "unit", "base_value", "low_value", "high_value", "note"])
    table["low_total_usd"] = [t for t, _ in totals[0::2]]
    table["high_total_usd"] = [t for t, _ in totals[1::2]]
    table["base_total_usd"] = base.total_cost_usd
    table["swing_usd"] = (table["high_total_usd"] - table["low_total_usd"]).abs()
    problems = [" / ".join(filter(None, (a, b))) for (_, a), (_, b) in zip(totals[0::2], totals[1::2])]
    table["note"] = [p or n for p, n in zip(problems, table["note"])]
    return table[COLUMNS].sort_values("swing_usd", ascending=False, kind="stable").reset_index(drop=True)


def _prior_sigma() -> float:
    from .uncertainty import distributions  # the Monte Carlo's spread of the MFU model (data/uncertainty.csv)
    return float(distributions().loc["mfu", "sigma"])


def _batch_totals(values: dict, changes: list[dict], base_total: float) -> list[tuple[float, str]]:
    """(total, problem) for each change applied to ``values``: one batch, or, should a rule the clipping does
    not know reject the batch, one scenario at a time with the rejected ones at the base total."""
    columns = {}
    for i, change in enumerate(changes):
        for name, value in change.items():
            columns.setdefault(name, np.full(len(changes), np.nan if values[name] is None else values[name], dtype=float))
            columns[name][i] = value
    try:
        totals, _ = batch_totals(Scenario(**{**values, **columns}))  # the totals only: no lines table
        return [(float(t), "") for t in np.atleast_1d(totals)]
    except ScenarioError:
        out = []
        for change in changes:
            try:
                out.append((float(estimate(Scenario(**{**values, **change})).total_cost_usd), ""))
            except ScenarioError as error:
                out.append((float(base_total), f"not applicable: {error}"))
        return out
