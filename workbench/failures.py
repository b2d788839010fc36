"""Failures, checkpoints and restarts: the GPU time a run loses to interruptions.

A cluster of n GPUs, each failing at rate r per day, is interrupted n x r times a day (independent
failures; spot reclaims add nodes x their rate). Checkpointing every tau hours costs the write time
delta each time; an interruption loses on average tau/2 of work plus the restart time, with every GPU
billed while idle. The interval minimising the sum is tau ~= sqrt(2 delta M) for a cluster mean time
between failures M (Young 1974, "A first order approximation to the optimum checkpoint interval";
Daly 2006, FGCS 22(3)). All functions broadcast over numpy arrays.
"""
from __future__ import annotations

import numpy as np

#: Llama 3 405B pre-training (Dubey et al. 2024, arXiv:2407.21783, Sec. 3.3.4, Table 5): 419 unexpected
#: interruptions during a 54-day snapshot on 16,384 H100 GPUs.
LLAMA3_INTERRUPTIONS, LLAMA3_GPUS, LLAMA3_DAYS = 419, 16_384, 54
#: The default per-GPU rate calibrated on that run: 419 / (16,384 x 54) = 4.736e-4 per GPU-day.
LLAMA3_RATE_PER_GPU_DAY = LLAMA3_INTERRUPTIONS / (LLAMA3_GPUS * LLAMA3_DAYS)
DAYS_PER_MONTH = 365.25 / 12


def cluster_interruptions_per_day(n_gpus, gpu_failure_rate_per_day, n_nodes=0.0, node_reclaims_per_day=0.0):
    """Expected interruptions of the whole job per day [1/day]: n x r_gpu + nodes x r_node."""
    return (np.asarray(n_gpus, dtype=float) * np.asarray(gpu_failure_rate_per_day, dtype=float)
            + np.asarray(n_nodes, dtype=float) * np.asarray(node_reclaims_per_day, dtype=float))


def mtbf_hours(interruptions_per_day):
    """Cluster mean time between interruptions [h]; ``inf`` when the rate is zero."""
    rate = np.asarray(interruptions_per_day, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(rate > 0, 24.0 / np.where(rate > 0, rate, 1.0), np.inf)


def checkpoint_write_hours(checkpoint_bytes, n_gpus, write_gb_per_s_per_gpu):
    """Time to write one checkpoint with every GPU writing its shard in parallel [h]."""
    bandwidth = np.asarray(n_gpus, dtype=float) * np.asarray(write_gb_per_s_per_gpu, dtype=float) * 1e9
    return np.asarray(checkpoint_bytes, dtype=float) / bandwidth / 3600.0


def young_daly_interval_hours(write_hours, cluster_mtbf_hours):
    """Optimal checkpoint interval sqrt(2 delta M) [h] (Young 1974; Daly 2006); ``inf`` without failures."""
    with np.errstate(over="ignore"):  # a near-zero failure rate: an interval of "never", as without failures
        return np.sqrt(2.0 * np.asarray(write_hours, dtype=float) * np.asarray(cluster_mtbf_hours, dtype=float))


def overhead(wall_hours, n_gpus, interruptions_per_day, interval_hours, write_hours, restart_hours):
    """GPU-hours lost to interruptions and spent writing checkpoints over ``wall_hours`` of training.

    Returns a dict of arrays: ``interruptions`` [count], ``lost_gpu_hours`` (tau/2 of work plus the restart
    per interruption, all GPUs billed) and ``checkpoint_gpu_hours`` (wall/tau writes of delta each, all GPUs
    waiting) [GPU-h]. An infinite interval (no failures, none given) writes no intermediate checkpoint.
    """
    wall_hours, n_gpus = np.asarray(wall_hours, dtype=float), np.asarray(n_gpus, dtype=float)
    interval = np.asarray(interval_hours, dtype=float)
    interruptions = wall_hours * np.asarray(interruptions_per_day, dtype=float) / 24.0
    finite = np.isfinite(interval)
    per_interruption = np.where(finite, np.minimum(interval, wall_hours) / 2.0, wall_hours / 2.0) + restart_hours
    lost = np.where(interruptions > 0, interruptions * per_interruption * n_gpus, 0.0)
    writes = np.where(finite, wall_hours / np.where(finite, interval, 1.0), 0.0)
    return {"interruptions": interruptions, "lost_gpu_hours": lost,
            "checkpoint_gpu_hours": writes * np.asarray(write_hours, dtype=float) * n_gpus, "checkpoints_written": writes}
