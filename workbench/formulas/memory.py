"""Accelerator memory for training: model states, activations, and the minimum GPU count that fits.

Bytes are per GPU. Mixed-precision Adam keeps 2 bytes of bf16 weights, 2 (bf16) or 4 (fp32) bytes of
gradients and 12 of optimizer state (fp32 master weights, momentum and variance) per parameter: 16-18 bytes
(Rajbhandari et al. 2020, ZeRO, arXiv:1910.02054, Sec. 3.1). ZeRO stage 1 shards the optimizer state over the
data-parallel GPUs, stage 2 also the gradients, stage 3 (FSDP) also the weights. Tensor parallelism splits
every layer's states and, with sequence parallelism, its activations over ``t`` GPUs; pipeline parallelism
gives each of ``p`` stages 1/p of the layers, so the unsharded states divide by t x p. Whatever ZeRO shards
ends up divided by all n GPUs (n / (t p) data-parallel copies of a 1/(t p) slice).

Capacity: accelerator memory is sold in binary units (an "80 GB" H100 holds 80 GiB = 85.9e9 bytes), so the
catalog's ``memory_gb`` is read as GiB.
"""
from __future__ import annotations

import numpy as np

GIB = 2.0 ** 30
WEIGHT_BYTES_PER_PARAM = 2.0     # bf16 weights
GRADIENT_BYTES = {"bf16": 2.0, "fp32": 4.0}
OPTIMIZER_BYTES_PER_PARAM = 12.0  # fp32 master copy + Adam m + v


def capacity_bytes(memory_gib):
    """Bytes of an accelerator whose memory is ``memory_gib`` binary gigabytes [byte]."""
    return np.asarray(memory_gib, dtype=float) * GIB


def _gradient_bytes(gradient_precision):
    precision = np.asarray(gradient_precision, dtype=object)
    return np.where(precision == "fp32", GRADIENT_BYTES["fp32"], GRADIENT_BYTES["bf16"])


def _state_split(zero_stage, gradient_precision="bf16"):
    """(bytes/param kept whole on each model-parallel shard, bytes/param sharded over all GPUs)."""
    zero_stage = np.asarray(zero_stage)
    grad = _gradient_bytes(gradient_precision)
    total = WEIGHT_BYTES_PER_PARAM + grad + OPTIMIZER_BYTES_PER_PARAM
    whole = np.select([zero_stage == 0, zero_stage == 1, zero_stage == 2],
                      [total, WEIGHT_BYTES_PER_PARAM + grad, WEIGHT_BYTES_PER_PARAM], 0.0)
    return whole, total - whole


def model_state_bytes(params, n_gpus, zero_stage, tensor_parallel=1, pipeline_parallel=1, gradient_precision="bf16"):
    """Weights, gradients and optimizer state held by one GPU [byte].

    Unsharded part / (tensor_parallel x pipeline_parallel) + ZeRO-sharded part / n_gpus. Rajbhandari et al.
    2020, Fig. 1; Narayanan et al. 2021 (Megatron-LM, arXiv:2104.04473) for the t x p model split.
    Use *total* parameters for mixture-of-experts: every expert is stored.
    """
    whole, sharded = _state_split(zero_stage, gradient_precision)
    params = np.asarray(params, dtype=float)
    model_parallel = np.asarray(tensor_parallel, dtype=float) * np.asarray(pipeline_parallel, dtype=float)
    return params * whole / model_parallel + params * sharded / np.asarray(n_gpus, dtype=float)


def activation_bytes(seq_len, d_model, n_layers, micro_batch_size, recompute, tensor_parallel=1, head_dim=128,
                     attention_kernel="flash", pipeline_parallel=1):
    """Activations one GPU keeps for the backward pass [byte].

    Korthikanti et al. 2022, arXiv:2205.05198, Table 2, per layer with tensor + sequence parallelism:
    ``none``: s b h (34 + 5 a s / h) / t, where 5 a s^2 b is the stored attention score matrix; a fused
    (FlashAttention) kernel never stores it (Dao et al. 2022, arXiv:2205.14135), so with
    ``attention_kernel="flash"`` (the default) ``none`` keeps 34 s b h / t like ``selective``;
    ``selective``: 34 s b h / t (attention recomputed);
    ``full``: 2 s b h / t per layer (its input) plus one layer's 34 s b h / t while it is recomputed.

    Pipeline parallelism (1F1B schedule, Narayanan et al. 2021): the first stage holds L/p layers for each of
    the p micro-batches in flight, i.e. L layers' worth whatever p is, which is the most any stage holds.
    Embedding and output-layer activations are left out (small for L >= 16).
    """
    s, h, L, b, t = (np.asarray(x, dtype=float) for x in (seq_len, d_model, n_layers, micro_batch_size, tensor_parallel))
    p = np.asarray(pipeline_parallel, dtype=float)
    heads = np.maximum(1.0, h / head_dim)
    per_layer = s * b * h * 34.0 / t
    scores = np.where(np.asarray(attention_kernel, dtype=object) == "standard", 5.0 * heads * s / h, 0.0)
    recompute = np.asarray(recompute, dtype=object)
    layers_in_flight = np.ceil(L / p) * p  # uneven stages: the first holds ceil(L/p) layers per micro-batch
    full = layers_in_flight * 2.0 * s * b * h / t + per_layer
    return np.where(recompute == "none", layers_in_flight * s * b * h * (34.0 + scores) / t,
                    np.where(recompute == "selective", layers_in_flight * per_layer, full))


def min_gpus_to_fit(params, memory_bytes, activation_bytes_per_gpu, zero_stage, tensor_parallel=1,
                    usable_memory_fraction=0.9, pipeline_parallel=1, gradient_precision="bf16"):
    """Fewest GPUs (a multiple of ``tensor_parallel x pipeline_parallel``) whose memory holds the model [GPU].

    Solves whole/(t p) + sharded/n + activations <= usable memory for n; ``inf`` where no GPU count is enough
    (the unsharded states or the activations alone overflow one GPU: raise tensor or pipeline parallelism, the
    ZeRO stage or recompute).
    """
    whole, sharded = _state_split(zero_stage, gradient_precision)
    params = np.asarray(params, dtype=float)
    group = np.asarray(tensor_parallel, dtype=float) * np.asarray(pipeline_parallel, dtype=float)
    room = np.asarray(memory_bytes, dtype=float) * usable_memory_fraction - activation_bytes_per_gpu - params * whole / group
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(room > 0, np.ceil(params * sharded / np.where(room > 0, room, 1.0) / group - 1e-9) * group, np.inf)
    return np.maximum(n, group)
