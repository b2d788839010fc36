"""The workbench against published training runs (``data/published_runs.csv``).

For every run the workbench estimates GPU-hours the way a user would get them without knowing the run's
MFU: through :func:`workbench.estimate` with the default MFU prior, the run's GPU count given where it is
published (else the cluster is sized for the default target duration, as for any plan). Three errors are
reported per run (estimate / reported - 1):

* ``error``: with the prior as shipped (fitted on all runs with a GPU count, this one included);
* ``error_leave_one_out``: with the levels refitted without this run, the honest out-of-sample figure (runs
  without a GPU count are never in the fit, so for them both errors are out of sample);
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
    rows = []
    for run in runs.to_dict("records"):
        # Prices do not enter GPU-hours; a fixed one keeps runs on accelerators without a price on record.
        scenario = Scenario(params=run["params"], active_params=_given(run["active_params"]) or run["params"],
                            tokens=run["tokens"], seq_len=_given(run["seq_len"]) or mfu.DEFAULT_RUN_SEQ_LEN,
                            gpu=run["gpu_id"], precision=run["precision"], price_per_gpu_hour=1.0,
                            n_gpus=_given(run["n_gpus"]))
        est = estimate(scenario)
        # leave-one-out: the levels refitted without this run; its MFU at its own (or re-sized) cluster
        level = mfu.level(run["gpu_id"], mfu.prior_table(exclude=run["name"])["mfu"].to_dict())
        level *= est.mfu / est.details["mfu_prior"]  # the recompute convention (1 for the runs' selective)
        n_loo = scenario.n_gpus
        if n_loo is None:
            hours_at_reference = compute.gpu_hours(est.training_flops, est.details["peak_flops_per_s"], level)
            per_node = scenario.gpus_per_node
            n_loo = max(np.ceil(mfu.gpus_for_duration(hours_at_reference, scenario.target_days) / per_node - 1e-9)
                        * per_node, per_node)
        loo_hours = compute.gpu_hours(est.training_flops, est.details["peak_flops_per_s"],
                                      level * mfu.cluster_factor(n_loo))
        epoch_hours = compute.gpu_hours(compute.dense_training_flops(scenario.active_params, scenario.tokens),
                                        est.details["peak_flops_per_s"], EPOCH_MFU)
        reported = run["gpu_hours"]
        rows.append({"name": run["name"], "gpu": run["gpu_id"], "n_gpus": est.n_gpus,
                     "n_gpus_published": scenario.n_gpus is not None, "reported_gpu_hours": reported,
                     "estimated_gpu_hours": est.gpu_hours, "mfu_prior": est.mfu, "implied_mfu": run["implied_mfu"],
                     "error": est.gpu_hours / reported - 1, "error_leave_one_out": loo_hours / reported - 1,
                     "error_epoch_0375": epoch_hours / reported - 1, "source": run["source"]})
    return pd.DataFrame(rows)


def _given(value):
    """A CSV cell as a scenario value: None where the run does not report it."""
    return None if pd.isna(value) else float(value)


def summary(table: pd.DataFrame | None = None) -> dict[str, float]:
    """Median absolute error of each method over the runs with reported GPU-hours [fraction]."""
    table = comparison() if table is None else table
    table = table[table["reported_gpu_hours"].notna()]
    return {"runs": int(len(table)),
            **{f"median_abs_{c}": float(table[c].abs().median())
               for c in ("error", "error_leave_one_out", "error_epoch_0375")}}
