"""Parallel layouts of a training run: every tensor x pipeline x ZeRO choice evaluated at once, the best kept.

A layout is (t, p, z, b): ``t`` GPUs split each layer (tensor parallelism), ``p`` pipeline stages, ZeRO stage
``z``, ``b`` sequences per micro-batch; the n / (t p) copies left are data parallel. For each candidate :func:`evaluate` gives the memory per GPU
(:mod:`workbench.formulas.memory`) and the predicted MFU (:mod:`workbench.formulas.parallelism`); :func:`best` keeps, per element of
a batch, the fitting candidate with the highest MFU (the fewest GPU-hours), the way Calculon (Isaev et al. 2023,
SC'23) and Megatron users search layouts. Arrays are (batch, candidate); inputs broadcast as (batch, 1).

Links (one direction per GPU, [byte/s]): tensor parallelism runs over NVLink within its NVLink domain, else over
PCIe within a node, else over the network; data parallelism runs over the network as soon as the run spans
nodes. A PCIe card in a multi-node run therefore pays for its links in either choice.
"""
from __future__ import annotations

import numpy as np

from . import memory, parallelism

TENSOR_OPTIONS = (1, 2, 4, 8, 16, 32, 64)
PIPELINE_OPTIONS = (1, 2, 4, 8, 16, 32, 64, 128)
ZERO_OPTIONS = (1, 3)  # the distributed optimizer (Megatron) and fully sharded (FSDP); 0 and 2 only when typed
MICRO_BATCH_OPTIONS = (1, 2, 4, 8)
#: A layout whose smallest step (one micro-batch per replica) exceeds the plan's global batch by more than this
#: factor changes the training's batch; it is chosen only where no layout keeps the batch.
BATCH_TOLERANCE = 1.25
#: Bytes per gradient element exchanged by data parallelism.
GRADIENT_BYTES = {"bf16": 2.0, "fp32": 4.0}


def candidates(tensor_parallel, pipeline_parallel, zero_stage, micro_batch_size):
    """Candidate (t, p, z, b) columns, shape (batch, C): a typed value pins its dimension (NaN: every option).
    Columns that a pinning makes identical are kept (harmless: the best is the same)."""
    given = [np.atleast_1d(np.asarray(v, dtype=float))
             for v in (tensor_parallel, pipeline_parallel, zero_stage, micro_batch_size)]
    options = (TENSOR_OPTIONS, PIPELINE_OPTIONS, ZERO_OPTIONS, MICRO_BATCH_OPTIONS)
    pinned = [bool(np.all(~np.isnan(v))) for v in given]
    # a dimension typed in every row needs one option, not the grid: a 100,000-row batch stays cheap
    grid = np.array(np.meshgrid(*[(np.nan,) if pin else opts for pin, opts in zip(pinned, options)],
                                indexing="ij")).reshape(4, -1).T
    size = max(v.size for v in given)
    given = [np.broadcast_to(v, (size,)) for v in given]
    return tuple(np.where(np.isnan(v)[:, None], grid[None, :, i], v[:, None]) for i, v in enumerate(given))


def link(group, gpus_per_node, nvlink_bytes_per_s, nvlink_domain, pcie_bytes_per_s, network_bytes_per_s_per_gpu):
    """The link a collective among ``group`` GPUs runs over [byte/s one direction per GPU]: NVLink within its
    domain, else PCIe within a node, else the network."""
    group = np.asarray(group, dtype=float)
    nvlink_ok = np.asarray(nvlink_bytes_per_s, dtype=float) > 0
    return np.where(nvlink_ok & (group <= np.asarray(nvlink_domain, dtype=float)), nvlink_bytes_per_s,
                    np.where(group <= np.asarray(gpus_per_node, dtype=float), pcie_bytes_per_s,
                             network_bytes_per_s_per_gpu))


def evaluate(t, p, z, b, *, n_gpus, kernel_efficiency, layer_latency_s, hidden_share, straggler_exponent, max_mfu, d_model, n_layers, params,
             active_params, flops_per_token, seq_len, global_batch_tokens, peak_flops_per_s, gpus_per_node, nvlink_bytes_per_s, nvlink_domain, pcie_bytes_per_s,
             network_bytes_per_s_per_gpu, memory_bytes, usable_memory_fraction, recompute, attention_kernel,
             gradient_precision, head_dim):
    """Every figure of each candidate layout [dict of arrays (batch, C)]; ``mfu`` is the model-FLOPs utilisation
    before recompute and precision, ``fits`` whether weights, gradients, optimizer and activations fit."""
    n = np.asarray(n_gpus, dtype=float)
    # whole data-parallel replicas; GPUs left over from a count that is not a multiple of t x p stay idle
    data_parallel = np.floor(n / (t * p) + 1e-9)
    valid = (data_parallel >= 1) & (p <= n_layers)
    data_parallel = np.maximum(data_parallel, 1.0)
    used = data_parallel * t * p
    # micro-batches per replica and step, at least one (an average over steps: a planner's batch need not divide
    # evenly); the batch actually run is at least one micro-batch per replica
    micro = np.maximum(parallelism.micro_batches(global_batch_tokens, seq_len, data_parallel, b), 1.0)
    batch_used = np.maximum(np.asarray(global_batch_tokens, dtype=float), data_parallel * b * seq_len)
    # a layout that needs a much larger batch than the plan's changes the training, not only its speed
    batch_raised = batch_used > BATCH_TOLERANCE * np.asarray(global_batch_tokens, dtype=float)
    virtual = parallelism.interleave(n_layers, p)
    pipeline = parallelism.pipeline_efficiency(p, micro, virtual)
    matmul_rate = kernel_efficiency * peak_flops_per_s
    width = parallelism.width_efficiency(flops_per_token / n_layers * b * seq_len / t, matmul_rate, layer_latency_s)
    achieved = matmul_rate * width
    links = (gpus_per_node, nvlink_bytes_per_s, nvlink_domain, pcie_bytes_per_s, network_bytes_per_s_per_gpu)
    tp_link, dp_link = link(t, *links), link(used, *links)
    # tensor-parallel traffic sits on the critical path (the next matmul waits for it): exposed in full
    tensor = parallelism.tensor_parallel_overhead(t, d_model, achieved, tp_link, 0.0)
    step_flops_per_gpu = flops_per_token * micro * b * seq_len / (t * p)
    # data-parallel replicas sharing a node reduce over NVLink first (hierarchical all-reduce)
    peers = np.clip(np.floor(np.asarray(gpus_per_node, dtype=float) / (t * p)), 1.0, data_parallel)
    grad = np.where(np.asarray(gradient_precision, dtype=object) == "fp32", 4.0, 2.0)
    # ... over their node's own links: NVLink within its domain, else PCIe
    node = np.asarray(gpus_per_node, dtype=float)
    node_link = link(np.minimum(used, node), *links)
    data = parallelism.data_parallel_overhead(active_params / (t * p), data_parallel, z,
                                              grad, step_flops_per_gpu, achieved, dp_link, hidden_share, peers,
                                              node_link)
    # stages sit on different nodes once a stage's group (t GPUs) and the stages outgrow one node
    pp_link = np.where(t * p <= node, link(t * p, *links), network_bytes_per_s_per_gpu)
    stage = parallelism.pipeline_traffic_overhead(p, virtual, t, d_model, flops_per_token / n_layers, n_layers / p,
                                                  achieved, pp_link, hidden_share)
    cluster = parallelism.straggler_efficiency(used, straggler_exponent)
    # no layout is predicted above the best published run (the engineering scale and small clusters multiply)
    mfu = np.minimum(kernel_efficiency * width * pipeline * cluster / ((1.0 + tensor) * (1.0 + stage) * (1.0 + data)),
                     max_mfu) * used / n
    states = memory.model_state_bytes(params, used, z, t, p, gradient_precision)
    activations = memory.activation_bytes(seq_len, d_model, n_layers, b, recompute, t, head_dim,
                                          attention_kernel, p)
    usable = memory_bytes * usable_memory_fraction
    min_gpus = memory.min_gpus_to_fit(params, memory_bytes, activations, z, t, usable_memory_fraction, p,
                                      gradient_precision)
    return {"tensor_parallel": t, "pipeline_parallel": p, "zero_stage": z, "micro_batch_size": b, "data_parallel": data_parallel, "idle_share": 1.0 - used / n,
            "micro_batches": micro, "virtual_stages": virtual, "pipeline_efficiency": pipeline,
            "width_efficiency": width, "cluster_efficiency": cluster, "tensor_parallel_overhead": tensor, "pipeline_traffic_overhead": stage,
            "data_parallel_overhead": data,
            "batch_raised": batch_raised, "batch_used_tokens": batch_used, "mfu": mfu, "model_state_bytes_per_gpu": states,
            "activation_bytes_per_gpu": activations, "memory_bytes_per_gpu": states + activations,
            "fits": valid & (states + activations <= usable), "valid": valid, "min_gpus_to_fit": min_gpus}


def pick(figures: dict, score) -> np.ndarray:
    """Per row, the column of the best candidate: the fitting one with the highest ``score``; where none fits,
    the valid one needing the least memory (the run is then flagged as not fitting)."""
    fits, valid = figures["fits"], figures["valid"]
    # among the fitting ones, those that keep the plan's batch; the others only where none does
    keeps = fits & ~figures["batch_raised"]
    fits = np.where(keeps.any(axis=1, keepdims=True), keeps, fits)
    best_fit = np.argmax(np.where(fits, score, -np.inf), axis=1)
    least_memory = np.argmin(np.where(valid, figures["memory_bytes_per_gpu"], np.inf), axis=1)
    return np.where(fits.any(axis=1), best_fit, least_memory)


def take(figures: dict, column: np.ndarray) -> dict:
    """The figures of one candidate per row [dict of arrays (batch,)]."""
    rows = np.arange(column.size)
    shape = np.shape(figures["mfu"])
    return {name: np.broadcast_to(values, shape)[rows, column] if np.ndim(values) == 2 else values
            for name, values in figures.items()}
