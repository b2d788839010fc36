"""Default MFU: a prior by accelerator generation, fitted on the published training runs.

For every run in ``data/published_runs.csv`` with reported GPU-hours, the *implied* MFU is the run's
model FLOPs (:func:`workbench.compute.training_flops`, the same convention as every estimate) over
dense peak x GPU-hours. The prior for a generation is the median implied MFU of its runs; generations
without runs get the median over all runs. The spread (quartiles, range) is reported with it: the prior
is what a planner gets *without* knowing the MFU of their own stack, and should be overridden when known.

Peak: bf16 where the GPU has it, else fp16 (V100), the format each run trained in.
Runs without a reported sequence length trained at 2048 tokens (GPT-3, OPT, PaLM, MPT-7B, Pythia and
GLM-130B all did), which is what they are evaluated at.
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from . import catalog, compute
from .data import DataFileError, cached, data_dir, published_runs

#: Sequence length assumed for published runs that do not list one (see module docstring).
DEFAULT_RUN_SEQ_LEN = 2048


def training_precision(gpu_ids):
    """bf16 where the catalog has a bf16 peak, else fp16."""
    bf16 = catalog.spec(gpu_ids, "peak_bf16_dense_tflops")
    return np.where(np.isnan(np.asarray(bf16, dtype=float)), "fp16", "bf16")


@cached
def run_table() -> pd.DataFrame:
    """Published runs with resolved GPU ids, model FLOPs, generation and implied MFU."""
    runs = published_runs().copy()
    ids = []
    for row_number, name in enumerate(runs["gpu"], start=2):
        try:
            ids.append(catalog.resolve_gpu(name))
        except catalog.UnknownGpuError as error:
            raise DataFileError(data_dir() / "published_runs.csv", str(error), row_number, "gpu") from None
    runs["gpu_id"] = ids
    runs["generation"] = catalog.spec(runs["gpu_id"].to_numpy(), "generation")
    active = runs["active_params"].fillna(runs["params"]).to_numpy()
    seq_len = runs["seq_len"].fillna(DEFAULT_RUN_SEQ_LEN).to_numpy()
    d_model = compute.derived_d_model(active)
    runs["model_flops"] = compute.training_flops(active, runs["tokens"].to_numpy(), seq_len, d_model,
                                                 compute.derived_n_layers(d_model))
    runs["precision"] = training_precision(runs["gpu_id"].to_numpy())
    runs["peak_flops_per_s"] = catalog.peak_flops_per_s(runs["gpu_id"].to_numpy(), runs["precision"].to_numpy())
    runs["implied_mfu"] = runs["model_flops"] / (runs["peak_flops_per_s"] * runs["gpu_hours"] * 3600.0)
    return runs


def _summary(values: pd.Series) -> dict:
    return {"mfu": float(values.median()), "n_runs": int(values.size), "q25": float(values.quantile(0.25)),
            "q75": float(values.quantile(0.75)), "min": float(values.min()), "max": float(values.max())}


@cached
def prior_table(exclude: str | None = None) -> pd.DataFrame:
    """The prior per generation with its spread; ``exclude`` leaves one run out (for honest validation).

    The row ``all`` is the fallback for generations without published runs. Cached: do not modify.
    """
    runs = run_table()
    runs = runs[runs["implied_mfu"].notna() & (runs["name"] != exclude)]
    rows = {"all": _summary(runs["implied_mfu"])}
    for generation, group in runs.groupby("generation"):
        rows[generation] = _summary(group["implied_mfu"])
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "generation"
    return table


@cached
def _default_prior() -> dict[str, float]:
    return prior_table()["mfu"].to_dict()


def default_mfu(gpu_ids, prior: dict[str, float] | None = None):
    """MFU prior for catalog ids ``gpu_ids`` [fraction]: the median implied MFU of their generation."""
    prior = _default_prior() if prior is None else prior
    generations = catalog.accelerators()["generation"]
    out = catalog.map_ids(gpu_ids, lambda g: prior.get(generations[g], prior["all"]))
    return out if np.ndim(out) else float(out)
