"""Accelerator memory for training: model states, activations, and the minimum GPU count that fits.

Bytes are per GPU. Mixed-precision Adam keeps 2 bytes of bf16 weights, 2 of bf16 gradients and 12 of
optimizer state (fp32 master weights, momentum and variance) per parameter: 16 bytes (Rajbhandari et al.
2020, ZeRO, arXiv:1910.02054, Sec. 3.1). ZeRO stage 1 shards the optimizer state over the GPUs, stage 2
also the gradients, stage 3 (FSDP) also the weights. Tensor parallelism splits every layer's states
and, with sequence parallelism, its activations over ``tensor_parallel`` GPUs.
"""
from __future__ import annotations

import numpy as np

WEIGHT_BYTES_PER_PARAM = 2.0     # bf16 weights
GRADIENT_BYTES_PER_PARAM = 2.0   # bf16 gradients
OPTIMIZER_BYTES_PER_PARAM = 12.0  # fp32 master copy + Adam m + v


def _state_split(zero_stage):
    """(bytes/param kept whole on each model-parallel shard, bytes/param sharded over all GPUs)."""
    zero_stage = np.asarray(zero_stage)
    whole = np.select(
        [zero_stage == 0, zero_stage == 1, zero_stage == 2],
        [WEIGHT_BYTES_PER_PARAM + GRADIENT_BYTES_PER_PARAM + OPTIMIZER_BYTES_PER_PARAM,
         WEIGHT_BYTES_PER_PARAM + GRADIENT_BYTES_PER_PARAM, WEIGHT_BYTES_PER_PARAM],
        0.0)
    total = WEIGHT_BYTES_PER_PARAM + GRADIENT_BYTES_PER_PARAM + OPTIMIZER_BYTES_PER_PARAM
    return whole, total - whole


def model_state_bytes(params, n_gpus, zero_stage, tensor_parallel=1):
    """Weights, gradients and optimizer state held by one GPU [byte].

    Unsharded part / tensor_parallel + ZeRO-sharded part / n_gpus. Rajbhandari et al. 2020, Fig. 1.
    Use *total* parameters for mixture-of-experts: every expert is stored.
    """
    whole, sharded = _state_split(zero_stage)
    params = np.asarray(params, dtype=float)
    return params * whole / np.asarray(tensor_parallel, dtype=float) + params * sharded / np.asarray(n_gpus, dtype=float)


def activation_bytes(seq_len, d_model, n_layers, micro_batch_size, recompute, tensor_parallel=1, head_dim=128):
    """Activations one GPU keeps for the backward pass of one micro-batch [byte].

    Korthikanti et al. 2022, arXiv:2205.05198, Table 2, per layer with tensor + sequence parallelism:
    ``none``: s b h (34 + 5 a s / h) / t (the 5 a s^2 term is the stored attention matrix);
    ``selective``: 34 s b h / t (attention recomputed; flash attention behaves alike);
    ``full``: 2 s b h / t per layer (its input) plus one layer's 34 s b h / t while it is recomputed.
    Embedding and output-layer activations are left out (small for L >= 16).
    """
    s, h, L, b, t = (np.asarray(x, dtype=float) for x in (seq_len, d_model, n_layers, micro_batch_size, tensor_parallel))
    heads = np.maximum(1.0, h / head_dim)
    per_layer = s * b * h * 34.0 / t
    recompute = np.asarray(recompute, dtype=object)
    return np.where(recompute == "none", L * s * b * h * (34.0 + 5.0 * heads * s / h) / t,
                    np.where(recompute == "selective", L * per_layer, L * 2.0 * s * b * h / t + per_layer))


def min_gpus_to_fit(params, memory_bytes, activation_bytes_per_gpu, zero_stage, tensor_parallel=1,
                    usable_memory_fraction=0.9):
    """Fewest GPUs (a multiple of ``tensor_parallel``) whose memory holds the model states [GPU].

    Solves whole/t + sharded/n + activations <= usable memory for n; ``inf`` where no GPU count is enough
    (the unsharded states or the activations alone overflow one GPU: raise tensor_parallel, the ZeRO
    stage or recompute).
    """
    whole, sharded = _state_split(zero_stage)
    params = np.asarray(params, dtype=float)
    t = np.asarray(tensor_parallel, dtype=float)
    room = np.asarray(memory_bytes, dtype=float) * usable_memory_fraction - activation_bytes_per_gpu - params * whole / t
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(room > 0, np.ceil(params * sharded / np.where(room > 0, room, 1.0) / t - 1e-9) * t, np.inf)
    return np.maximum(n, t)
