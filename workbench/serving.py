"""Serving: GPUs needed for a traffic level, cost per month and per million tokens.

Capacity is sized for the peak: average tokens per second x peak-to-average ratio, divided by what one
GPU serves, rounded up to whole replicas and never below the minimum replica count.
"""
from __future__ import annotations

import numpy as np

HOURS_PER_MONTH = 8766.0 / 12  # 730.5
DAYS_PER_MONTH = 365.25 / 12
#: Share of usable memory the bf16 weights may take; the rest holds the KV cache and activations
#: (vLLM's default preallocates the remainder as KV cache; Kwon et al. 2023, arXiv:2309.06180).
WEIGHT_MEMORY_SHARE = 0.5


def tokens_per_second_per_gpu(peak_flops_per_s, serving_mfu, active_params):
    """Compute-bound serving throughput [token/s/GPU]: peak x MFU / (2 N) (2 N FLOP per token forward)."""
    return np.asarray(peak_flops_per_s, dtype=float) * np.asarray(serving_mfu) / (2.0 * np.asarray(active_params, dtype=float))


def gpus_per_replica(params, memory_bytes, usable_memory_fraction=0.9):
    """GPUs holding one copy of the bf16 weights in :data:`WEIGHT_MEMORY_SHARE` of their memory, rounded
    up to a power of two (tensor-parallel sizes) [GPU]."""
    need = 2.0 * np.asarray(params, dtype=float) / (np.asarray(memory_bytes, dtype=float) * usable_memory_fraction * WEIGHT_MEMORY_SHARE)
    return 2.0 ** np.ceil(np.log2(np.maximum(need, 1.0)))


def serving_gpus(requests_per_day, tokens_per_request, peak_to_average, tokens_per_s_per_gpu, replica_gpus, min_replicas):
    """GPUs to serve the peak load in whole replicas, at least ``min_replicas`` [GPU]."""
    peak_tokens_per_s = np.asarray(requests_per_day, dtype=float) * tokens_per_request / 86400.0 * peak_to_average
    replicas = np.ceil(peak_tokens_per_s / (np.asarray(tokens_per_s_per_gpu, dtype=float) * replica_gpus) - 1e-9)
    return np.maximum(replicas, np.asarray(min_replicas, dtype=float)) * replica_gpus


def tokens_per_month(requests_per_day, tokens_per_request):
    """Tokens served per month [token]."""
    return np.asarray(requests_per_day, dtype=float) * np.asarray(tokens_per_request, dtype=float) * DAYS_PER_MONTH
