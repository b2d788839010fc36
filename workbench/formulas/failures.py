"""Failures, checkpoints and restarts: the GPU time a run loses to interruptions.

A cluster of n GPUs, each failing at rate r per day, is interrupted n x r times a day (independent
failures; spot reclaims add nodes x their rate). Checkpointing every tau hours costs the write time
delta each time; an interruption loses on average tau/2 of work plus the restart time, with every GPU
billed while idle. The interval minimising the sum is tau ~= sqrt(2 delta M) for a cluster mean time
between failures M (Young 1974, "A first order approximation to the optimum checkpoint interval";
Daly 2006, FGCS 22(3)). An interruption whose failing node's logs were sampled away takes longer to recover
from (:func:`restart_with_diagnosis_hours`); a lower training precision may diverge and restart
(:func:`expected_divergence_gpu_hours`, ``data/precision_risks.csv``). All functions broadcast over numpy arrays.
"""
from __future__ import annotations

import numpy as np

from ..reference.data import DataFileError, cached, data_dir, read_table

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


def checkpoint_throughput(checkpoint_bytes, client_gb_per_s, capacity_gb_per_s, mtbf_hours, stall_share,
                          given_gb_per_s=np.nan, interval_hours=np.nan, asynchronous=False):
    """(file system throughput bought [GB/s], the job's stall per checkpoint [h], the checkpoint interval [h]).

    A synchronous write stalls every GPU for bytes / min(clients' rate, file system's throughput). When the throughput
    is not given it is bought to keep each write within ``stall_share`` of the interval, and at least what the
    stored capacity brings (``capacity_gb_per_s``; throughput is bought with capacity), at most what the clients can
    write. The interval, when not given, is Young/Daly's sqrt(2 W M) for that stall W: with the throughput sized to
    the stall share the two close on interval = 2 x stall_share x M. An asynchronous write stalls the job only for
    its copy at the clients' rate; the file system must drain it before the next checkpoint (throughput >= bytes /
    interval)."""
    gb = np.asarray(checkpoint_bytes, float) / 1e9
    client = np.asarray(client_gb_per_s, float)
    capacity = np.asarray(capacity_gb_per_s, float)
    mtbf, share = np.asarray(mtbf_hours, float), np.asarray(stall_share, float)
    given, chosen = np.asarray(given_gb_per_s, float), np.asarray(interval_hours, float)
    asynchronous = np.asarray(asynchronous, bool)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        job_async = gb / client / 3600.0  # the copy the job waits for
        # synchronous, sized: the interval the stall share and the failures give together, or the user's
        interval_sized = np.where(np.isfinite(chosen), chosen, 2.0 * share * mtbf)
        wanted_sync = gb / (share * interval_sized * 3600.0)
        interval_async = np.where(np.isfinite(chosen), chosen, young_daly_interval_hours(job_async, mtbf))
        wanted_async = gb / (interval_async * 3600.0)
        wanted = np.where(asynchronous, wanted_async, np.minimum(wanted_sync, client))
        # the capacity stored brings its throughput whatever is asked: a given figure below it buys nothing less
        bought = np.maximum(np.where(np.isfinite(given), given, np.nan_to_num(wanted, nan=0.0, posinf=0.0)), capacity)
        stall = np.where(asynchronous, job_async, gb / np.minimum(client, bought) / 3600.0)
        interval = np.where(np.isfinite(chosen), chosen, young_daly_interval_hours(stall, mtbf))
    return bought, stall, interval


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


def restart_with_diagnosis_hours(restart_minutes, log_sampling_ratio, unlogged_diagnosis_minutes):
    """Hours from an interruption to training again [h]: the restart, plus the search for the failing node when
    its logs were sampled away ((1 - sampling) of interruptions; planning assumption, see the field's source)."""
    sampling = np.clip(np.asarray(log_sampling_ratio, dtype=float), 0.0, 1.0)
    return (np.asarray(restart_minutes, dtype=float) + (1.0 - sampling) * np.asarray(unlogged_diagnosis_minutes, dtype=float)) / 60.0


@cached
def precision_risks():
    """``data/precision_risks.csv``: divergences per trillion tokens, the share of the run rolled back, and the
    format the rest of the run falls back to, per training precision (each with its source)."""
    table = read_table("precision_risks.csv", numeric=("speedup_over_reference", "divergence_per_trillion_tokens",
                                                        "rollback_share"),
                      required=("precision", "speedup_over_reference", "divergence_per_trillion_tokens",
                                "rollback_share", "fallback_precision", "source"), key="precision",
                       bounds={"speedup_over_reference": (0.1, 10.0)},
                       choices={"precision": {"bf16", "fp16", "fp8"}, "fallback_precision": {"bf16", "fp16", "fp8"}})
    for column, high in (("divergence_per_trillion_tokens", 100.0), ("rollback_share", 1.0)):
        bad = table[(table[column] < 0) | (table[column] > high)]
        if len(bad):  # zero is allowed here (bf16, the reference), unlike read_table's bounds
            raise DataFileError(str(data_dir() / "precision_risks.csv"), f"{bad[column].iloc[0]:g} is out of range "
                                f"(allowed: 0 to {high:g})", int(bad.index.get_loc(bad.index[0])) + 2, column)
    missing = {"bf16", "fp16", "fp8"} - set(table["precision"])
    if missing:
        raise DataFileError(str(data_dir() / "precision_risks.csv"), f"no row for {', '.join(sorted(missing))} "
                            "(allowed: a row for each training precision)")
    return table.set_index("precision")


@cached
def precision_risk_values() -> dict:
    """Precision -> (divergences per trillion tokens, rollback share, fallback precision, speed-up over the
    reference format): the table as plain values (the engine reads them on every estimate)."""
    table = precision_risks()
    return {p: (float(r.divergence_per_trillion_tokens), float(r.rollback_share), str(r.fallback_precision),
                float(r.speedup_over_reference)) for p, r in table.iterrows()}


def divergence_probability(tokens, divergences_per_trillion_tokens):
    """Probability that a run of ``tokens`` diverges at least once (Poisson events) [-]."""
    rate = np.asarray(divergences_per_trillion_tokens, dtype=float) * np.asarray(tokens, dtype=float) / 1e12
    return -np.expm1(-rate)


def expected_divergence_gpu_hours(divergences, gpu_hours, fallback_gpu_hours, rollback_share):
    """Expected extra GPU-hours of divergence restarts [GPU-h], for ``divergences`` expected over the run in the
    format (Poisson, uniform over the run): at the first one (probability 1 - exp(-divergences)) the run rolls back
    ``rollback_share`` of itself and runs the rest in the fallback format, which does not diverge. The expected
    share left after the first divergence is (L - 1 + exp(-L)) / L for L divergences expected (it comes early when
    many are expected)."""
    expected = np.asarray(divergences, dtype=float)
    gpu_hours = np.asarray(gpu_hours, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = np.where(expected > 0, (expected - 1.0 + np.exp(-expected)) / np.where(expected > 0, expected, 1.0), 0.0)
    return (-np.expm1(-expected) * np.asarray(rollback_share, dtype=float) * gpu_hours
            + rest * np.maximum(np.asarray(fallback_gpu_hours, dtype=float) - gpu_hours, 0.0))
