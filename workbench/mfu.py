"""Default MFU: a level by accelerator generation that falls with the number of GPUs, fitted on published runs.

    MFU(gpu, n) = level[generation of gpu] x (n / 1024) ** -beta

*beta* is how utilisation falls as one model is spread over more GPUs (communication, stragglers, smaller
per-GPU batches). Across published runs it cannot be read off directly: the runs on large clusters are also the
large models and the mature software stacks, which raise MFU. It is fitted instead on measurements of the *same*
model at several cluster sizes (``data/mfu_scaling.csv``: Llama 3 405B, Nemotron-4 15B, Megatron-LM 175B and
530B), as the pooled within-study slope of log utilisation on log GPUs: 0.070, i.e. -4.7 % per doubling
(studies range 0.052-0.104).

The *level* is fitted on the runs of ``data/published_runs.csv`` with a reported GPU count and GPU-hours: each
run's implied MFU (model FLOPs, :func:`workbench.compute.training_flops`, over dense peak x GPU-hours) brought to
1,024 GPUs with beta, and the median taken per generation (generations without runs: over all runs). Runs
without a GPU count are left out of the fit and are, in ``workbench validate``, out-of-sample checks. The spread
(quartiles, range) is reported with it: the prior is what a planner gets *without* knowing the MFU of their own
stack, and should be overridden when known.

Peak: bf16 where the GPU has it, else fp16 (V100), the format each run trained in.
Runs without a reported sequence length trained at 2048 tokens (GPT-3, OPT, PaLM, MPT-7B, Pythia and
GLM-130B all did), which is what they are evaluated at.
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from . import catalog, compute
from .data import DataFileError, cached, data_dir, published_runs, read_table

#: Sequence length assumed for published runs that do not list one (see module docstring).
DEFAULT_RUN_SEQ_LEN = 2048
#: Cluster size the levels are quoted at [GPU].
REFERENCE_GPUS = 1024.0


@cached
def scaling_table() -> pd.DataFrame:
    """``data/mfu_scaling.csv``: the same model measured at several cluster sizes (utilisation or TFLOP/s per GPU)."""
    return read_table("mfu_scaling.csv", numeric=("n_gpus", "utilisation"),
                      required=("study", "gpu", "n_gpus", "utilisation", "measure", "source"),
                      bounds={"n_gpus": (1, 1e7), "utilisation": (1e-3, 1e4)})


@cached
def scaling_exponent() -> float:
    """beta: the pooled within-study slope of -log(utilisation) on log(GPUs) [-].

    Each study's own level is removed (its mean log), so only how one model's utilisation changes with its cluster
    enters; the unit of ``utilisation`` (MFU or TFLOP/s per GPU) cancels within a study.
    """
    table = scaling_table()
    counts = table.groupby("study")["n_gpus"].nunique()
    table = table[table["study"].map(counts) >= 2]
    if table.empty:
        raise DataFileError(data_dir() / "mfu_scaling.csv", "needs at least one study with two or more GPU counts")
    x = np.log(table["n_gpus"].to_numpy(float))
    y = np.log(table["utilisation"].to_numpy(float))
    groups = table["study"].to_numpy()
    x = x - pd.Series(x).groupby(groups).transform("mean").to_numpy()
    y = y - pd.Series(y).groupby(groups).transform("mean").to_numpy()
    beta = float(-(x * y).sum() / (x * x).sum())
    if not 0.0 <= beta < 0.5:
        raise DataFileError(data_dir() / "mfu_scaling.csv", f"the fitted slope {beta:.3f} is outside 0 to 0.5 (MFU "
                                                            "must not rise with the GPU count, nor halve per doubling)")
    return beta


def gpus_for_duration(hours_at_reference, days, beta=None):
    """GPUs that finish in ``days`` when MFU falls with the cluster [GPU, not rounded].

    ``hours_at_reference`` are the GPU-hours at the 1,024-GPU MFU; at n GPUs they are that x (n / 1024) ** beta,
    so n = hours(n) / (24 days) gives n = (hours_at_reference x 1024 ** -beta / (24 days)) ** (1 / (1 - beta)).
    """
    beta = scaling_exponent() if beta is None else np.asarray(beta, dtype=float)
    with np.errstate(over="ignore"):
        return (np.asarray(hours_at_reference, dtype=float) * REFERENCE_GPUS ** -beta
                / (24.0 * np.asarray(days, dtype=float))) ** (1.0 / (1.0 - beta))


def cluster_factor(n_gpus, beta=None):
    """(n / 1024) ** -beta: utilisation at ``n_gpus`` relative to 1,024 GPUs [-]."""
    beta = scaling_exponent() if beta is None else beta
    return (np.asarray(n_gpus, dtype=float) / REFERENCE_GPUS) ** -beta


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
    runs["mfu_at_reference"] = runs["implied_mfu"] / cluster_factor(runs["n_gpus"].to_numpy(float))
    return runs


def _summary(values: pd.Series) -> dict:
    return {"mfu": float(values.median()), "n_runs": int(values.size), "q25": float(values.quantile(0.25)),
            "q75": float(values.quantile(0.75)), "min": float(values.min()), "max": float(values.max())}


@cached
def prior_table(exclude: str | None = None) -> pd.DataFrame:
    """The level per generation at 1,024 GPUs with its spread; ``exclude`` leaves one run out (for honest
    validation). Only runs with a GPU count and GPU-hours enter.

    The row ``all`` is the fallback for generations without published runs. Cached: do not modify.
    """
    runs = run_table()
    runs = runs[runs["mfu_at_reference"].notna() & (runs["name"] != exclude)]
    rows = {"all": _summary(runs["mfu_at_reference"])}
    for generation, group in runs.groupby("generation"):
        rows[generation] = _summary(group["mfu_at_reference"])
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "generation"
    return table


@cached
def _default_prior() -> dict[str, float]:
    return prior_table()["mfu"].to_dict()


def level(gpu_ids, prior: dict[str, float] | None = None):
    """MFU at 1,024 GPUs for catalog ids ``gpu_ids`` [fraction]: the fitted level of their generation."""
    prior = _default_prior() if prior is None else prior
    generations = catalog.accelerators()["generation"]
    out = catalog.map_ids(gpu_ids, lambda g: prior.get(generations[g], prior["all"]))
    return out if np.ndim(out) else float(out)


def default_mfu(gpu_ids, n_gpus=REFERENCE_GPUS, prior: dict[str, float] | None = None):
    """MFU prior for catalog ids ``gpu_ids`` on ``n_gpus`` GPUs [fraction]: level x (n / 1024) ** -beta."""
    out = level(gpu_ids, prior) * cluster_factor(n_gpus)
    return out if np.ndim(out) else float(out)
