"""Default MFU: a kernel efficiency per GPU generation times the efficiencies of the run's parallel layout.

    MFU = kernel_efficiency[generation] x width x pipeline / ((1 + tensor-parallel traffic) (1 + gradient sync))
          (x expert_efficiency for a mixture-of-experts model, counted on its active parameters)

The terms are :mod:`workbench.formulas.parallelism`'s, evaluated for every tensor x pipeline x ZeRO layout by
:mod:`workbench.formulas.layouts`; the best layout that fits in memory is kept. The fitted parameters are few and live in
``data/mfu_model.csv`` with their spread: the kernel efficiency of each generation with published runs, the
width constant, the share of the gradient traffic hidden behind compute, and the typical wall-clock of a run of
a given size, and the share of a dense model's MFU a mixture-of-experts run reaches.
:func:`workbench.plan.calibration.fit` writes them from ``data/published_runs.csv`` (runs with a GPU count and
GPU-hours); ``workbench validate`` reports the fit in sample and leave-one-out.

A generation without published runs takes the H100's kernel efficiency scaled by a measured per-GPU speed-up
(MLPerf Training, ``data/generation_speedups.csv``) over the ratio of peaks, or, with no measurement on record,
the H100's share of peak; its figures say *extrapolated*.

Peak: bf16 where the GPU has it, else fp16 (V100), the format each run's MFU is quoted against. Runs without a
reported sequence length trained at 2048 tokens (GPT-3, OPT, PaLM, MPT-7B, Pythia and GLM-130B all did).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..reference import catalog
from . import compute, layouts
from ..reference.data import DataFileError, cached, data_dir, published_runs, read_table

#: Sequence length assumed for published runs that do not list one (see module docstring).
DEFAULT_RUN_SEQ_LEN = 2048
#: GPU-hours are one iteration away from the cluster that runs them; four passes settle to whole nodes.
SIZING_PASSES = 4
#: The GPU whose kernel efficiency an extrapolated generation is scaled from.
REFERENCE_GPU = "H100-SXM5-80GB"


@cached
def scaling_table() -> pd.DataFrame:
    """``data/mfu_scaling.csv``: the same model measured at several cluster sizes (utilisation or TFLOP/s per GPU),
    the check that the layout terms reproduce how one run's MFU falls with its cluster."""
    return read_table("mfu_scaling.csv", numeric=("n_gpus", "utilisation", "params", "d_model", "n_layers", "seq_len",
                                                  "tensor_parallel", "pipeline_parallel", "global_batch_tokens"),
                      required=("study", "gpu", "n_gpus", "utilisation", "measure", "params", "seq_len", "source"),
                      bounds={"n_gpus": (1, 1e7), "utilisation": (1e-3, 1e4), "params": (1e6, 1e13),
                              "d_model": (1, 1e6), "n_layers": (1, 1e4), "seq_len": (1, 1e7),
                              "tensor_parallel": (1, 4096), "pipeline_parallel": (1, 4096),
                              "global_batch_tokens": (1, 1e12)})


@cached
def model_table() -> pd.DataFrame:
    """``data/mfu_model.csv``: the fitted parameters, one row per parameter (and generation), with their spread."""
    return read_table("mfu_model.csv", numeric=("value", "low", "high", "n_runs"),
                      required=("parameter", "value", "source"), bounds={"value": (-1e-12, 1e30)})


#: What each parameter may be: (low, high), the low exclusive where a formula divides by it or a zero means nothing.
_PARAMETER_BOUNDS = {"kernel_efficiency": (0.0, 1.0), "layer_latency_s": (-1e-12, 0.1), "hidden_share": (-1e-12, 1.0),
                     "straggler_exponent": (-1e-12, 0.5), "max_mfu": (0.0, 1.0), "scale_exponent": (-1e-12, 0.5),
                     "scale_flops_low": (0.0, 1e35),
                     "typical_days_at_1e23": (0.0, 3650.0), "typical_days_exponent": (-1.0, 1.0),
                     "typical_batch_at_1e23": (0.0, 1e12), "typical_batch_exponent": (-1.0, 1.0),
                     "expert_efficiency": (0.1, 1.0), "expert_active_share_max": (0.0, 0.95)}


@cached
def parameters() -> dict:
    """The fitted parameters as a dict: ``kernel_efficiency`` {generation: value} and the scalar ones. Refused,
    with the row, when a value is outside what it may be, a row repeats, or a generation is not the catalog's."""
    table = model_table()
    path = data_dir() / "mfu_model.csv"
    generations = {*catalog.accelerators()["generation"], "all"}
    seen = set()
    for row_number, row in enumerate(table.to_dict("records"), start=2):
        name, generation = row["parameter"], row["generation"] if isinstance(row["generation"], str) else ""
        if name not in _PARAMETER_BOUNDS:
            raise DataFileError(path, f"unknown parameter {name!r}; allowed: {', '.join(_PARAMETER_BOUNDS)}",
                                row_number, "parameter")
        if (name, generation) in seen:
            raise DataFileError(path, f"{name} {generation} is given twice", row_number, "parameter")
        seen.add((name, generation))
        if name == "kernel_efficiency" and generation not in generations:
            raise DataFileError(path, f"unknown generation {generation!r}; allowed: the catalog's generations or all",
                                row_number, "generation")
        low, high = _PARAMETER_BOUNDS[name]
        if not low < row["value"] <= high:
            raise DataFileError(path, f"{row['value']:g} is out of range for {name} (allowed: above {max(low, 0):g} "
                                      f"to {high:g})", row_number, "value")
    kernel = table[table["parameter"] == "kernel_efficiency"]
    out = {"kernel_efficiency": dict(zip(kernel["generation"], kernel["value"].astype(float)))}
    for name in ("layer_latency_s", "hidden_share", "straggler_exponent", "max_mfu", "scale_exponent", "scale_flops_low",
                 "typical_days_at_1e23", "typical_days_exponent", "typical_batch_at_1e23", "typical_batch_exponent",
                 "expert_efficiency", "expert_active_share_max"):
        rows = table[table["parameter"] == name]
        if rows.empty:
            raise DataFileError(data_dir() / "mfu_model.csv", f"has no row for {name}")
        out[name] = float(rows["value"].iloc[0])
    if "all" not in out["kernel_efficiency"]:
        raise DataFileError(data_dir() / "mfu_model.csv", "has no kernel_efficiency row for generation 'all'")
    if not 0 <= out["hidden_share"] < 1:
        raise DataFileError(path, "hidden_share must be at least 0 and below 1")
    return out


@cached
def speedups() -> pd.DataFrame:
    """``data/generation_speedups.csv``: measured per-GPU speed-ups of a generation over the reference GPU."""
    table = read_table("generation_speedups.csv", numeric=("speedup_per_gpu",),
                       required=("generation", "gpu", "reference_gpu", "speedup_per_gpu", "benchmark", "source"),
                       key="generation", bounds={"speedup_per_gpu": (0, 100)})
    path = data_dir() / "generation_speedups.csv"
    fitted = parameters()["kernel_efficiency"]
    for row_number, row in enumerate(table.to_dict("records"), start=2):
        ids = {}
        for column in ("gpu", "reference_gpu"):
            try:
                ids[column] = catalog.resolve_gpu(row[column])
            except catalog.UnknownGpuError as error:
                raise DataFileError(path, str(error), row_number, column) from None
        if catalog.spec(ids["gpu"], "generation") != row["generation"]:
            raise DataFileError(path, f"{ids['gpu']} is of generation {catalog.spec(ids['gpu'], 'generation')}, not "
                                      f"{row['generation']}", row_number, "generation")
        if catalog.spec(ids["reference_gpu"], "generation") not in fitted:
            raise DataFileError(path, f"the reference {ids['reference_gpu']} has no fitted kernel efficiency (its "
                                      "generation has no published run)", row_number, "reference_gpu")
        if np.isnan(_peak_bf16(ids["reference_gpu"])) or np.isnan(_peak_bf16(ids["gpu"])):
            raise DataFileError(path, "the catalog has no bf16 or fp16 peak for this GPU", row_number, "gpu")
        if not 0.05 <= row["speedup_per_gpu"] <= 20:
            raise DataFileError(path, f"{row['speedup_per_gpu']:g} is out of range (allowed: 0.05 to 20 per GPU)",
                                row_number, "speedup_per_gpu")
    return table


def _peak_bf16(gpu_id: str) -> float:
    return float(catalog.peak_flops_per_s(gpu_id, training_precision(gpu_id)))


@cached
def _kernel(gpu_id: str) -> tuple[float, str]:
    """(kernel efficiency, basis) of one catalog id with the shipped parameters."""
    return kernel_for(gpu_id, parameters())


def kernel_for(gpu_id: str, fitted: dict) -> tuple[float, str]:
    """(kernel efficiency, basis) of one catalog id with parameters ``fitted`` (see :func:`parameters`)."""
    fitted = fitted["kernel_efficiency"]
    generation = catalog.spec(gpu_id, "generation")
    if generation in fitted:
        return fitted[generation], "fitted"
    table = speedups()
    if generation in set(table["generation"]):
        row = table[table["generation"] == generation].iloc[0]
        reference = catalog.resolve_gpu(row["reference_gpu"])
        reference_generation = catalog.spec(reference, "generation")
        value = (fitted.get(reference_generation, fitted["all"]) * float(row["speedup_per_gpu"])
                 * _peak_bf16(reference) / _peak_bf16(gpu_id))
        return value, (f"extrapolated: {reference} x {float(row['speedup_per_gpu']):.2f} per GPU "
                       f"({row['benchmark']})")
    # no run and no measured speed-up: the share of peak the reference GPU's generation reaches, not the median
    # of all runs (which, pulled up by older Ampere runs, would make a new accelerator faster than its peak ratio)
    reference_generation = catalog.spec(REFERENCE_GPU, "generation")
    return (fitted.get(reference_generation, fitted["all"]),
            f"extrapolated: the share of peak of {REFERENCE_GPU} (no published run, no measured speed-up)")


def extrapolation(gpu_id: str) -> dict | None:
    """For a generation without published runs: its reference GPU, measured per-GPU speed-up and benchmark
    (``data/generation_speedups.csv``); ``None`` where the generation has runs or no measured speed-up."""
    if catalog.spec(gpu_id, "generation") in parameters()["kernel_efficiency"]:
        return None
    table = speedups()
    rows = table[table["generation"] == catalog.spec(gpu_id, "generation")]
    if rows.empty:
        return None
    row = rows.iloc[0]
    return {"reference_gpu": catalog.resolve_gpu(row["reference_gpu"]), "speedup_per_gpu": float(row["speedup_per_gpu"]),
            "benchmark": row["benchmark"], "source": row["source"]}


def kernel_efficiency(gpu_ids):
    """Kernel efficiency for catalog ids ``gpu_ids`` [fraction]: fitted for generations with published runs."""
    out = catalog.map_ids(gpu_ids, lambda g: _kernel(g)[0])
    return out if np.ndim(out) else float(out)


def basis(gpu_ids):
    """Where each id's kernel efficiency comes from: ``fitted`` or ``extrapolated: ...`` [text]."""
    return catalog.map_ids(gpu_ids, lambda g: _kernel(g)[1], dtype=object)


def sustained_share(gpu_ids):
    """Share of its spec-sheet peak a card sustains under its power limit where its peak is that of a faster
    part (the A100 PCIe lists the SXM4 module's 312 TFLOP/s at a lower power limit) [fraction]; 1 where the
    catalog gives none (``sustained_share_of_peak`` in ``data/accelerators.csv``, with its source)."""
    share = np.asarray(catalog.spec(gpu_ids, "sustained_share_of_peak"), dtype=float)
    out = np.where(np.isnan(share), 1.0, share)
    return out if np.ndim(out) else float(out)


def training_precision(gpu_ids):
    """bf16 where the catalog has a bf16 peak, else fp16."""
    bf16 = catalog.spec(gpu_ids, "peak_bf16_dense_tflops")
    return np.where(np.isnan(np.asarray(bf16, dtype=float)), "fp16", "bf16")


def default_global_batch_tokens(training_flops, fitted: dict | None = None):
    """Global batch of published runs of that compute [token]: a (C / 1e23) ** b, fitted on the runs of
    ``data/published_runs.csv`` that publish their batch (``data/mfu_model.csv``). Practice, not the
    loss-optimal batch (DeepSeek LLM's 0.292 C^0.327 is about 4x larger than most runs used)."""
    p = parameters() if fitted is None else fitted
    return p["typical_batch_at_1e23"] * (np.asarray(training_flops, dtype=float) / 1e23) ** p["typical_batch_exponent"]


def engineering_scale(training_flops, fitted: dict | None = None):
    """(C / 1e23) ** g, C held at the least FLOPs of the fitted runs below them [-].

    Published runs of more compute reach a higher share of peak than their layout explains: their teams tune
    kernels, overlap communication and schedules for that scale (the issue the constant-slope prior had: the
    largest runs were engineered for their size). The exponent is fitted with the other parameters. Below the
    smallest fitted run the factor is held; above the largest it goes on, bounded by ``max_mfu``: left out of the
    fit, Llama 3.1 405B (ten times the compute of the next run) is predicted +27 % in GPU-hours with the factor
    going on and +60 % with it held at the next run's compute.
    """
    p = parameters() if fitted is None else fitted
    flops = np.maximum(np.asarray(training_flops, dtype=float), p["scale_flops_low"])
    return (flops / 1e23) ** p["scale_exponent"]


def is_mixture_of_experts(params, active_params):
    """Whether a model routes each token through a part of its parameters (active below total) [bool]."""
    return np.asarray(active_params, dtype=float) < np.asarray(params, dtype=float) * (1.0 - 1e-9)


def expert_share(params, active_params, fitted: dict | None = None):
    """The share of a dense model's MFU a mixture-of-experts model reaches, counted on its active parameters;
    1 for a dense model [fraction].

    Routing, the all-to-all exchanges of tokens between expert-parallel GPUs, the imbalance of experts' loads and
    their smaller matmuls cost time a dense model of the same active size does not spend. The layout terms do not
    see them, so the share is measured: the median over the published mixture-of-experts runs of their steady
    MFU over the dense model's prediction (``expert_efficiency`` in ``data/mfu_model.csv``). Those runs route 4-16 %
    of their parameters (``expert_active_share_max``, the largest); between it and a dense model the share is
    interpolated on the routed share, so that a model with nearly every parameter active is nearly dense, and
    fewer active parameters never cost more GPU-hours.
    """
    p = parameters() if fitted is None else fitted
    active_share = np.asarray(active_params, dtype=float) / np.asarray(params, dtype=float)
    routed = np.clip((1.0 - active_share) / max(1.0 - p["expert_active_share_max"], 1e-12), 0.0, 1.0)
    share = 1.0 - (1.0 - p["expert_efficiency"]) * np.where(np.isnan(routed), 0.0, routed)
    return np.where(is_mixture_of_experts(params, active_params), share, 1.0)


def typical_days(training_flops, fitted: dict | None = None):
    """Wall-clock days of published pre-training runs of that compute [day]: a (C / 1e23) ** b, fitted on the
    runs of ``data/published_runs.csv`` with a GPU count (``data/mfu_model.csv``)."""
    p = parameters() if fitted is None else fitted
    return p["typical_days_at_1e23"] * (np.asarray(training_flops, dtype=float) / 1e23) ** p["typical_days_exponent"]


def link_inputs(gpu, network_gbps_per_node, gpus_per_node):
    """Catalog links of ``gpu`` as one-direction bytes per second per GPU: NVLink, its domain, PCIe, network
    (``network_gbps_per_node`` where given, else the SKU's reference server)."""
    nvlink = catalog.spec(gpu, "nvlink_gb_per_s").astype(float) * 1e9 / 2.0
    domain = catalog.spec(gpu, "nvlink_domain_gpus").astype(float)
    pcie = catalog.spec(gpu, "pcie_gb_per_s").astype(float) * 1e9 / 2.0
    network = np.where(np.isnan(network_gbps_per_node), catalog.spec(gpu, "network_gbps_per_node").astype(float),
                       network_gbps_per_node)
    return nvlink, domain, pcie, network * 1e9 / 8.0 / np.asarray(gpus_per_node, dtype=float)


def layout_inputs(x: dict, d_model, n_layers, active_params, flops_per_token, fitted: dict | None = None,
                  training_flops=None) -> dict:
    """The keyword inputs of :func:`workbench.formulas.layouts.evaluate` for a batch ``x`` of scenario fields, as (batch, 1)
    columns. ``fitted`` overrides the shipped parameters (leave-one-out validation)."""
    p = parameters() if fitted is None else fitted
    gpu = np.asarray(x["gpu"], dtype=object)
    kernel = catalog.map_ids(gpu, lambda g: _kernel(g)[0] if fitted is None else kernel_for(g, fitted)[0])
    kernel = kernel * sustained_share(gpu)
    if training_flops is not None:
        kernel = kernel * engineering_scale(training_flops, p)
    kernel = kernel * expert_share(x["params"], active_params, p)
    peak = catalog.peak_flops_per_s(gpu, training_precision(gpu))
    nvlink, domain, pcie, network = link_inputs(gpu, np.asarray(x["network_gbps_per_node"], dtype=float),
                                                x["gpus_per_node"])
    column = lambda v: np.asarray(v)[:, None] if np.ndim(v) else v  # noqa: E731
    values = {"kernel_efficiency": kernel, "layer_latency_s": p["layer_latency_s"], "hidden_share": p["hidden_share"],
              "straggler_exponent": p["straggler_exponent"], "max_mfu": p["max_mfu"],
              "d_model": d_model, "n_layers": n_layers, "params": x["params"], "active_params": active_params,
              "flops_per_token": flops_per_token, "seq_len": x["seq_len"], "global_batch_tokens": x["global_batch_tokens"], "peak_flops_per_s": peak,
              "gpus_per_node": x["gpus_per_node"],
              "nvlink_bytes_per_s": nvlink, "nvlink_domain": domain, "pcie_bytes_per_s": pcie,
              "network_bytes_per_s_per_gpu": network,
              "memory_bytes": catalog.spec(gpu, "memory_gb").astype(float) * 2.0 ** 30,
              "usable_memory_fraction": x["usable_memory_fraction"], "recompute": x["recompute"],
              "attention_kernel": x["attention_kernel"], "gradient_precision": x["gradient_precision"],
              "head_dim": compute.HEAD_DIM}
    return {k: column(v) for k, v in values.items()}


def cluster_and_layout(x: dict, inputs: dict, flops, speed_factor, target_days, largest_gpus, typed_mfu=None) -> dict:
    """The cluster (given, or sized to finish in ``target_days``) and its best layout, per batch element.

    ``speed_factor`` multiplies the layout's MFU (recompute and precision); ``largest_gpus`` caps an auto-sized
    cluster; ``typed_mfu`` (NaN where not typed) sizes the cluster at the user's MFU instead of the layout's, the
    layout then chosen on that cluster. A pass that would make the cluster slower (traffic grows faster than the
    GPUs: n x MFU falls) keeps the previous size: the run is then as fast as the layout allows. Returns the chosen layout's figures (:func:`workbench.formulas.layouts.evaluate`), ``n_gpus``,
    ``n_gpus_wanted`` and ``min_gpus_to_fit`` (fewest GPUs that fit, over the candidate layouts).
    """
    t, p, z, b = layouts.candidates(x["tensor_parallel"], x["pipeline_parallel"], x["zero_stage"],
                                    x["micro_batch_size"])
    t, p, z, b = _usable(x, inputs, t, p, z, b)
    size = t.shape[0]
    given = np.broadcast_to(np.asarray(x["n_gpus"], dtype=float), (size,))
    node = np.broadcast_to(np.asarray(x["gpus_per_node"], dtype=float), (size,))[:, None]
    flops = np.broadcast_to(np.asarray(flops, dtype=float), (size,))[:, None]
    factor = np.broadcast_to(np.asarray(speed_factor, dtype=float), (size,))[:, None]
    days = np.broadcast_to(np.asarray(target_days, dtype=float), (size,))[:, None]
    # each candidate's step: whole nodes that are whole model-parallel groups
    step = np.lcm(node.astype(np.int64), (t * p).astype(np.int64)).astype(float)
    peak = inputs["peak_flops_per_s"]
    # first guess: the kernel efficiency with no communication, then passes at each candidate's own cluster
    guess = flops / (peak * inputs["kernel_efficiency"] * 0.8 * factor * 3600.0 * 24.0 * days)
    n = np.where(np.isnan(given)[:, None], np.maximum(np.ceil(guess / step - 1e-9) * step, step), given[:, None])
    largest = np.maximum(np.floor(largest_gpus / step) * step, step)
    sizing = np.isnan(given).any()
    typed = (np.full((size, 1), np.nan) if typed_mfu is None
             else np.broadcast_to(np.asarray(typed_mfu, dtype=float), (size,))[:, None])
    wanted = n
    throughput = np.zeros_like(n)  # n x MFU of the previous pass: a cluster's speed
    previous = n
    settled = np.zeros(n.shape, dtype=bool)
    for _ in range(SIZING_PASSES if sizing else 0):
        figures = layouts.evaluate(t, p, z, b, n_gpus=n, **inputs)
        mfu_now = np.where(np.isnan(typed), figures["mfu"] * factor, typed)
        speed = n * mfu_now
        slower = (n > previous) & (speed < throughput) & ~settled
        if slower.any():  # more GPUs made it slower: back to the previous size, which stays
            n = np.where(slower, previous, n)
            settled |= slower
            figures = layouts.evaluate(t, p, z, b, n_gpus=n, **inputs)
            mfu_now = np.where(np.isnan(typed), figures["mfu"] * factor, typed)
            speed = n * mfu_now
        fit_gpus = np.where(np.isfinite(figures["min_gpus_to_fit"]), figures["min_gpus_to_fit"], step)
        hours = flops / (peak * mfu_now * 3600.0)
        wanted = np.maximum(np.ceil(hours / (24.0 * days) / step - 1e-9) * step, np.ceil(fit_gpus / step - 1e-9) * step)
        sized = np.minimum(wanted, largest)
        previous, throughput = n, speed
        n = np.where(np.isnan(given)[:, None] & ~settled, sized, n)
        if np.array_equal(n, previous):  # settled: another pass would give the same cluster
            break
    figures = layouts.evaluate(t, p, z, b, n_gpus=n, **inputs)
    # the best candidate is the one with the fewest GPU-hours (highest MFU); at a typed count, the same
    column = layouts.pick(figures, figures["mfu"])
    chosen = layouts.take({**figures, "n_gpus": n, "n_gpus_wanted": np.where(np.isnan(given)[:, None], wanted, n)},
                          column)
    # the fewest GPUs that fit with the plan's own (typed) settings, over every candidate however many GPUs it has
    chosen["min_gpus_to_fit"] = np.min(figures["min_gpus_to_fit"], axis=1)
    chosen["fits"] = np.asarray(chosen["fits"], dtype=bool)
    chosen.update(_fitting_layout(x, inputs, chosen, ~chosen["fits"]))
    shape = np.shape(x["params"])  # a single scenario's inputs are 0-d
    return {name: np.reshape(values, shape) if np.size(values) == size else values for name, values in chosen.items()}


def _usable(x: dict, inputs: dict, t, p, z, b):
    """The candidate columns some row can use: tensor groups within a node or NVLink domain (a typed one is kept
    whatever it is), no more stages than the layers. A batch's grid shrinks to the options that matter."""
    reach = np.maximum(np.max(np.asarray(x["gpus_per_node"], dtype=float)),
                       np.max(np.asarray(inputs["nvlink_domain"], dtype=float)))
    typed_t = ~np.isnan(np.atleast_1d(np.asarray(x["tensor_parallel"], dtype=float))).reshape(-1, 1)
    typed_p = ~np.isnan(np.atleast_1d(np.asarray(x["pipeline_parallel"], dtype=float))).reshape(-1, 1)
    layers = np.atleast_1d(np.asarray(inputs["n_layers"], dtype=float)).reshape(-1, 1)
    keep = np.any((t <= reach) | typed_t, axis=0) & np.any((p <= layers) | typed_p, axis=0)
    return t[:, keep], p[:, keep], z[:, keep], b[:, keep]


def _fitting_layout(x: dict, inputs: dict, chosen: dict, missing) -> dict:
    """For rows whose layout does not fit: the fitting layout of the open grid on their GPUs that changes the
    fewest of tensor, pipeline, ZeRO and micro-batch (then the smallest t x p), and the fewest GPUs any layout
    fits on (NaN / inf where none)."""
    n_gpus = chosen["n_gpus"]
    size = np.size(missing)
    out = {name: np.full(size, np.nan) for name in ("fit_tensor_parallel", "fit_pipeline_parallel", "fit_zero_stage",
                                                    "fit_micro_batch_size", "fit_min_gpus")}
    if not np.any(missing):
        return out
    nan = np.full(size, np.nan)
    t, p, z, b = _usable({**x, "tensor_parallel": nan, "pipeline_parallel": nan}, inputs,
                         *layouts.candidates(nan, nan, nan, nan))
    figures = layouts.evaluate(t, p, z, b, n_gpus=np.reshape(n_gpus, (size, 1)), **{
        k: np.broadcast_to(v, (size, 1)) if np.ndim(v) == 2 else v for k, v in inputs.items()})
    now = [np.reshape(chosen[k], (size, 1)) for k in ("tensor_parallel", "pipeline_parallel", "zero_stage",
                                                       "micro_batch_size")]
    changed = sum((column != value).astype(float) for column, value in zip((t, p, z, b), now))
    group = np.where(figures["fits"], changed * 1e6 + (t * p * 4 + z) * 32 - b, np.inf)
    column = np.argmin(group, axis=1)
    rows = np.arange(size)
    found = np.isfinite(group[rows, column]) & np.ravel(missing)
    out["fit_tensor_parallel"] = np.where(found, t[rows, column], np.nan)
    out["fit_pipeline_parallel"] = np.where(found, p[rows, column], np.nan)
    out["fit_zero_stage"] = np.where(found, z[rows, column], np.nan)
    out["fit_micro_batch_size"] = np.where(found, b[rows, column], np.nan)
    # the fewest GPUs that fit keeping what the user typed (the chosen row's own candidates)
    out["fit_min_gpus"] = np.where(np.ravel(missing), np.ravel(chosen["min_gpus_to_fit"]), np.nan)
    return out


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
    d_model = runs["d_model"].fillna(pd.Series(compute.derived_d_model(active), index=runs.index)).to_numpy()
    n_layers = runs["n_layers"].fillna(pd.Series(compute.derived_n_layers(d_model), index=runs.index)).to_numpy()
    runs["model_flops"] = compute.training_flops(active, runs["tokens"].to_numpy(), seq_len, d_model, n_layers)
    reference = training_precision(runs["gpu_id"].to_numpy())
    runs["precision"] = np.where(runs["precision"].fillna("").astype(str) == "", reference, runs["precision"])
    runs["peak_flops_per_s"] = catalog.peak_flops_per_s(runs["gpu_id"].to_numpy(), reference)
    runs["implied_mfu"] = runs["model_flops"] / (runs["peak_flops_per_s"] * runs["gpu_hours"] * 3600.0)
    return runs
