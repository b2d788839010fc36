"""The workbench against published training runs (``data/published_runs.csv``).

For every run the workbench estimates GPU-hours the way a user would get them without knowing the run's
MFU: through :func:`workbench.estimate` with the default MFU prior. Three errors are reported per run
(estimate / reported - 1):

* ``error``: with the prior as shipped (fitted on all runs, this one included);
* ``error_leave_one_out``: with the prior refitted without this run, the honest out-of-sample figure;
* ``error_epoch_0375``: the common rule of thumb, 6 N D at a constant MFU of 0.375
  (Epoch AI; Cottier et al. 2024, "The rising costs of training frontier AI models").
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import compute, mfu
from .estimate import estimate
from .scenario import Scenario

EPOCH_MFU = 0.375


def comparison() -> pd.DataFrame:
    """One row per published run: reported and estimated GPU-hours and the three errors."""
    runs = mfu.run_table()
    # Prices do not enter GPU-hours; a fixed one keeps runs on accelerators without a price on record.
    batch = Scenario.from_frame(pd.DataFrame({
        "params": runs["params"], "active_params": runs["active_params"].fillna(runs["params"]),
        "tokens": runs["tokens"], "seq_len": runs["seq_len"].fillna(mfu.DEFAULT_RUN_SEQ_LEN),
        "gpu": runs["gpu_id"], "precision": runs["precision"], "price_per_gpu_hour": 1.0,
    }))
    est = estimate(batch)
    loo_mfu = np.array([mfu.default_mfu(g, mfu.prior_table(exclude=name)["mfu"].to_dict())
                        for g, name in zip(runs["gpu_id"], runs["name"])])
    loo_hours = compute.gpu_hours(est.training_flops, est.details["peak_flops_per_s"], loo_mfu)
    epoch_hours = compute.gpu_hours(compute.dense_training_flops(runs["active_params"].fillna(runs["params"]),
                                                                 runs["tokens"]),
                                    est.details["peak_flops_per_s"], EPOCH_MFU)
    reported = runs["gpu_hours"].to_numpy()
    return pd.DataFrame({
        "name": runs["name"], "gpu": runs["gpu_id"], "reported_gpu_hours": reported,
        "estimated_gpu_hours": est.gpu_hours, "mfu_prior": est.mfu, "implied_mfu": runs["implied_mfu"],
        "error": est.gpu_hours / reported - 1, "error_leave_one_out": loo_hours / reported - 1,
        "error_epoch_0375": epoch_hours / reported - 1, "source": runs["source"],
    })


def summary(table: pd.DataFrame | None = None) -> dict[str, float]:
    """Median absolute error of each method over the runs with reported GPU-hours [fraction]."""
    table = comparison() if table is None else table
    table = table[table["reported_gpu_hours"].notna()]
    return {"runs": int(len(table)),
            **{f"median_abs_{c}": float(table[c].abs().median())
               for c in ("error", "error_leave_one_out", "error_epoch_0375")}}
