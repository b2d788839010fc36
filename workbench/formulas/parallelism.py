"""What a parallel layout costs in utilisation: width, tensor-parallel traffic, pipeline bubble, gradient sync.

The MFU of a run is modelled as a product of efficiencies, each a small function below:

    MFU = kernel_efficiency x width x tensor_parallel x pipeline x data_parallel

* ``kernel_efficiency`` is the share of peak the matrix multiplications of a wide model reach on a GPU
  generation, with no communication; it is fitted on published runs (:mod:`workbench.formulas.mfu`).
* :func:`width_efficiency`: every layer of every micro-batch pays a fixed time (kernel launches, synchronisation,
  the small element-wise kernels between the matmuls) beside its matmuls, whose time grows as h^2 x tokens / t.
  Narrow models, small micro-batches, wide tensor parallelism and fast GPUs spend the largest share of a step in
  that fixed time: a 1-3B model on an H100 reaches a lower share of peak than a 400B one. The fixed time per layer
  is the one fitted constant (:mod:`workbench.formulas.mfu`).
* :func:`tensor_parallel_overhead`: Megatron tensor parallelism with sequence parallelism moves, per layer
  and token, four all-reduces' worth of the h activations forward and backward (Korthikanti et al. 2022,
  arXiv:2205.05198, Sec. 4.2.2): 16 h (t-1)/t bytes against 72 h^2 / t FLOPs, partly overlapped.
* :func:`pipeline_efficiency`: the 1F1B bubble (p-1) / (v m + p - 1) for m micro-batches per step and v
  interleaved stages per GPU (Narayanan et al. 2021, arXiv:2104.04473, Sec. 2.2).
* :func:`pipeline_traffic_overhead`: the activations each stage hands to the next, forward and backward.
* :func:`straggler_efficiency`: the rest of the fall with the cluster that one model measured at several sizes
  shows, fitted on those measurements.
* :func:`data_parallel_overhead`: the gradient all-reduce (ring: 2 (d-1)/d of the gradient bytes a GPU holds,
  x 1.5 under ZeRO-3 for the weights' all-gathers; Rajbhandari et al. 2020, arXiv:1910.02054, Sec. 7) over the
  fabric between nodes, of which a share is hidden behind the backward pass.

At a fixed global batch, a larger cluster has fewer micro-batches per replica and more gradient traffic per
FLOP: the fall of MFU with the cluster follows from the layout and the batch, not from a fitted slope
(``data/mfu_scaling.csv`` holds the same model measured at several sizes, the check of that).
All functions take scalars or numpy arrays and broadcast. Bandwidths are one direction per GPU [byte/s].
"""
from __future__ import annotations

import numpy as np

#: Bytes per activation element exchanged by tensor parallelism (bf16).
ACTIVATION_BYTES = 2.0
#: Interleaved pipeline stages per GPU at most (Narayanan et al. 2021 evaluate 2-4 chunks per GPU; more
#: multiplies the point-to-point traffic for little bubble).
MAX_INTERLEAVE = 4


def width_efficiency(layer_flops_per_gpu, achieved_flops_per_s, layer_latency_s):
    """Share of a layer's time spent in its matmuls: 1 / (1 + tau F / W) [-].

    W [FLOP]: one layer's model FLOPs for one micro-batch on one GPU (forward and backward, / t); F [FLOP/s]: the
    matmul rate; tau [s]: the fixed time per layer and micro-batch (fitted).
    """
    work_s = np.asarray(layer_flops_per_gpu, dtype=float) / np.asarray(achieved_flops_per_s, dtype=float)
    return work_s / (work_s + np.asarray(layer_latency_s, dtype=float))


def tensor_parallel_overhead(tensor_parallel, d_model, achieved_flops_per_s, link_bytes_per_s, hidden_share=0.0):
    """Exposed time of tensor-parallel traffic over compute time [-]: (1 - hidden) 2 (t-1) F / (9 h B).

    Per token and layer: 16 h (t-1)/t bytes each way (4 all-reduce equivalents of 2 h bytes, ring) at B
    [byte/s] against 72 h^2 / t FLOPs at F [FLOP/s], overlapped with the matmuls (Transformer Engine) as
    :func:`exposed` allows. 0 at t = 1.
    """
    t = np.asarray(tensor_parallel, dtype=float)
    ratio = (2.0 * (t - 1.0) * np.asarray(achieved_flops_per_s, dtype=float)
             / (9.0 * np.asarray(d_model, dtype=float) * np.asarray(link_bytes_per_s, dtype=float)))
    return exposed(ratio, hidden_share)


def exposed(ratio, hidden_share):
    """Share of compute time that communication adds when ``ratio`` = communication / compute time [-].

    Overlap hides at most ``hidden_share`` of the compute time, and never all of the traffic (the first and last
    buckets of a step wait): max(ratio - h, (1 - h) ratio). Slow links therefore cost in full what exceeds
    the compute they overlap.
    """
    ratio = np.asarray(ratio, dtype=float)
    h = np.asarray(hidden_share, dtype=float)
    return np.maximum(ratio - h, (1.0 - h) * ratio)


def straggler_efficiency(n_gpus, exponent, reference_gpus=1024.0, smallest_gpus=384.0):
    """(n / 1024) ** -exponent, n held at least at ``smallest_gpus`` [-].

    What the layout terms leave of how one run's utilisation falls with its cluster (stragglers, network
    congestion, synchronisation): the pooled within-study slope of measured over predicted utilisation in
    ``data/mfu_scaling.csv``, whose smallest cluster is 384 GPUs (below it the factor is held, not extrapolated).
    """
    n = np.maximum(np.asarray(n_gpus, dtype=float), smallest_gpus)
    return (n / reference_gpus) ** -np.asarray(exponent, dtype=float)


def micro_batches(global_batch_tokens, seq_len, data_parallel, micro_batch_size):
    """Micro-batches each data-parallel replica runs per optimizer step [-] (below 1: the batch is too small
    for that many replicas)."""
    return (np.asarray(global_batch_tokens, dtype=float) / np.asarray(seq_len, dtype=float)
            / (np.asarray(data_parallel, dtype=float) * np.asarray(micro_batch_size, dtype=float)))


def interleave(n_layers, pipeline_parallel):
    """Virtual stages per GPU of the interleaved schedule: the most of 1, 2 and 4 that leaves each at least one
    layer; 1 without pipeline parallelism [-]."""
    p = np.asarray(pipeline_parallel, dtype=float)
    per_stage = np.floor(np.asarray(n_layers, dtype=float) / p)
    v = np.where(per_stage >= 4, 4.0, np.where(per_stage >= 2, 2.0, 1.0))
    return np.where(p > 1, np.minimum(v, MAX_INTERLEAVE), 1.0)


def pipeline_efficiency(pipeline_parallel, n_micro_batches, virtual_stages=1):
    """1 - bubble of the (interleaved) 1F1B schedule: v m / (v m + p - 1) [-]."""
    p = np.asarray(pipeline_parallel, dtype=float)
    vm = np.asarray(virtual_stages, dtype=float) * np.asarray(n_micro_batches, dtype=float)
    return vm / (vm + p - 1.0)


def pipeline_traffic_overhead(pipeline_parallel, virtual_stages, tensor_parallel, d_model, layer_flops_per_token,
                              layers_per_stage, achieved_flops_per_s, link_bytes_per_s, hidden_share):
    """Exposed time of the activations sent between pipeline stages over compute time [-].

    Each token crosses v stage boundaries per GPU forward and again backward, 2 h bytes each, split over the t
    tensor-parallel ranks (sequence parallelism), against the FLOPs of the GPU's v x L/(p v) layers; overlapped as
    :func:`exposed` allows. 0 without pipeline parallelism.
    """
    p = np.asarray(pipeline_parallel, dtype=float)
    t = np.asarray(tensor_parallel, dtype=float)
    bytes_per_token = 2.0 * np.asarray(virtual_stages, dtype=float) * 2.0 * np.asarray(d_model, dtype=float) / t
    flops_per_token = np.asarray(layer_flops_per_token, dtype=float) * np.asarray(layers_per_stage, dtype=float) / t
    ratio = (bytes_per_token / np.asarray(link_bytes_per_s, dtype=float)
             / (flops_per_token / np.asarray(achieved_flops_per_s, dtype=float)))
    return np.where(p > 1, exposed(ratio, hidden_share), 0.0)


def data_parallel_overhead(params_per_gpu, data_parallel, zero_stage, gradient_bytes_per_param, step_flops_per_gpu,
                           achieved_flops_per_s, link_bytes_per_s, hidden_share, peers_in_node=1,
                           node_link_bytes_per_s=np.inf):
    """Exposed time of the gradient synchronisation over compute time [-].

    Traffic per GPU and step: 2 (d-1)/d x gradient bytes of the parameters it holds (x 1.5 under ZeRO-3);
    overlapped with the backward pass up to ``hidden_share`` of it (:func:`exposed`). Hierarchical all-reduce (NCCL): the ``peers_in_node``
    replicas on one node reduce over their node's links first (``node_link_bytes_per_s``: NVLink, or PCIe on a
    PCIe server), so each GPU's network link carries 1/peers of it.
    """
    d = np.asarray(data_parallel, dtype=float)
    volume = (2.0 * (d - 1.0) / d * np.asarray(params_per_gpu, dtype=float)
              * np.asarray(gradient_bytes_per_param, dtype=float)
              * np.where(np.asarray(zero_stage) >= 3, 1.5, 1.0) / np.asarray(peers_in_node, dtype=float))
    k = np.asarray(peers_in_node, dtype=float)
    within = volume * k * (k - 1.0) / k / np.asarray(node_link_bytes_per_s, dtype=float)  # the node's reduce first
    comm_s = volume / np.asarray(link_bytes_per_s, dtype=float) + within
    compute_s = np.asarray(step_flops_per_gpu, dtype=float) / np.asarray(achieved_flops_per_s, dtype=float)
    return exposed(comm_s / compute_s, hidden_share)
