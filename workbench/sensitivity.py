"""Sensitivity: what moves the total most (a tornado chart's data), in one vectorised pass.

Each input of :data:`INPUTS` is set to a low and a high value, one at a time, all other inputs at the
scenario's values (inputs left empty take the value the estimate resolved, e.g. the MFU prior). The
default range is -25 % / +25 %; failure rates span 0.5x to 2x (published rates differ by more than
+-25 %), and the redundancy factor the planning range 1.2-1.5. Values are clipped to each field's range.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .estimate import estimate
from .scenario import Scenario, fields

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
_RESOLVED = {"mfu": "mfu", "price_per_gpu_hour": "price_per_gpu_hour", "n_gpus": "n_gpus"}


def sensitivity(scenario: Scenario | None = None, inputs=INPUTS, base=None) -> pd.DataFrame:
    """Total cost at each input's low and high value, ordered by swing (largest first).

    Columns: ``input``, ``label``, ``unit``, ``base_value``, ``low_value``, ``high_value``,
    ``low_total_usd``, ``high_total_usd``, ``base_total_usd``, ``swing_usd`` (high - low, absolute).
    ``base``: an estimate of ``scenario`` already at hand (saves computing it again).
    """
    scenario = Scenario() if scenario is None else scenario
    base = estimate(scenario) if base is None else base  # the caller's estimate of the same scenario
    spec = fields()
    values = scenario.to_dict()
    for name, figure in _RESOLVED.items():
        values[name] = float(getattr(base, figure, None) if figure in ("mfu", "n_gpus") else base.details[figure])
    rows, columns = [], {}
    n = 2 * len(inputs)
    for i, (name, low, high, how) in enumerate(inputs):
        f = spec[name]
        base_value = values[name]
        pair = [low, high] if how == "absolute" else [base_value * low, base_value * high]
        pair = [min(max(v, f.min), f.max) for v in pair]
        if f.type == "int":
            pair = [int(round(v)) for v in pair]
        column = columns.setdefault(name, np.full(n, base_value, dtype=float))
        column[2 * i:2 * i + 2] = pair
        rows.append((name, f.label, f.unit, base_value, *pair))
    batch = Scenario(**{**values, **columns})
    totals = estimate(batch).total_cost_usd
    table = pd.DataFrame(rows, columns=["input", "label", "unit", "base_value", "low_value", "high_value"])
    table["low_total_usd"] = totals[0::2]
    table["high_total_usd"] = totals[1::2]
    table["base_total_usd"] = base.total_cost_usd
    table["swing_usd"] = (table["high_total_usd"] - table["low_total_usd"]).abs()
    return table.sort_values("swing_usd", ascending=False, kind="stable").reset_index(drop=True)
