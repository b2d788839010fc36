"""Serving: a roofline for prompt (prefill) and generated (decode) tokens, replicas, and a day's traffic.

*Prefill* processes a prompt's tokens in parallel and is bound by compute: 2 N FLOP per token plus causal
attention over the prompt, at ``serving_mfu`` of the replica's peak. *Decode* makes one token per sequence
per step and is bound by memory bandwidth: every step reads the weights once for the whole batch and each
sequence's KV cache, at ``serving_mbu`` of the replica's bandwidth (Pope et al. 2022, "Efficiently Scaling
Transformer Inference", arXiv:2211.05102, Sec. 2-3). A larger batch shares the weight read, so the cost
of a generated token falls with the batch until one of three limits binds: the memory left for the KV cache
after the weights (paged, so a sequence holds its current context; Kwon et al. 2023, vLLM, arXiv:2309.06180),
the time-per-output-token target (a step may take at most that long), or the scheduler's maximum batch.

A replica is a group of GPUs holding one copy of the weights: tensor parallel within a node (a power of two up to
``gpus_per_node``, or the whole node), or whole numbers of nodes (1-6, 8, 10, 12, 16, 20, 24, 32, 48, 64;
the fewest that hold it beyond that). Its bandwidth and
FLOP/s are its GPUs' sum; tensor-parallel communication is not charged (within NVLink a few per cent of a step;
optimistic across nodes). Unless it is given, the replica size is the candidate that needs the fewest GPUs for
the day's traffic (whole replicas, at least ``min_replicas``, at the peak or along the autoscaled curve) among
those that hold the weights and one whole sequence's KV cache and meet the latency targets; if none meets them,
the fastest that fits (``meets_targets`` is then false).

A decode step takes the slower of its memory traffic and its compute. With ``prefill_mode`` ``interleaved``
(continuous batching with chunked prefill, vLLM's default) the prompts of arriving requests ride in the same
forward passes: ``batch / output`` prompts per step add compute, not weight reads, so short prompts hide under
the weight reads and long ones make the steps compute-bound and shrink the batch that meets the target;
``disaggregated`` runs prefill on other replicas of the same size (Zhong et al. 2024, DistServe,
arXiv:2401.09670; Patel et al. 2024, Splitwise, arXiv:2311.18677), and the decode batch is limited by memory,
its step time and the scheduler only. The batch is the mean number of sequences in flight, not rounded: below
one where prompts' compute limits the replica.

Replica time per request: interleaved, output tokens x step time / batch; disaggregated, prefill time plus that.
The prefill's share of (prefill + decode alone) prices input tokens, the rest output tokens. Traffic over a day
follows a smooth daily curve with the given peak-to-average ratio (:func:`daily_profile`); fixed provisioning runs
the peak's replicas all day, autoscaling follows the curve in 5-minute steps between ``min_replicas`` and the peak.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

HOURS_PER_MONTH = 8766.0 / 12  # 730.5
DAYS_PER_MONTH = 365.25 / 12
#: Bytes per weight or KV-cache element by storage precision.
PRECISION_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
#: Tensor-parallel sizes considered within a node when ``serving_tensor_parallel`` is empty [GPU].
REPLICA_SIZES = tuple(2 ** k for k in range(13))  # 1 ... 4096, those above gpus_per_node left out
#: Whole numbers of nodes considered for a replica [node].
NODE_MULTIPLES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64)
#: Samples of the daily traffic curve: 5-minute steps, the granularity of a typical autoscaler.
PROFILE_STEPS = 288


def precision_bytes(precision):
    """Bytes per element for storage precisions ``bf16 | fp16 | fp8 | int8 | int4`` [byte]."""
    precision = np.asarray(precision, dtype=object)
    return np.select([precision == p for p in PRECISION_BYTES], list(PRECISION_BYTES.values()), np.nan)


def kv_bytes_per_token(n_layers, n_kv_heads, head_dim, kv_precision):
    """KV cache per token of context: keys and values of every layer's KV heads [byte/token].

    2 x n_layers x n_kv_heads x head_dim x bytes. Llama 3 70B (80 layers, 8 KV heads of 128, bf16): 327,680.
    """
    return (2.0 * np.asarray(n_layers, dtype=float) * np.asarray(n_kv_heads, dtype=float)
            * np.asarray(head_dim, dtype=float) * precision_bytes(kv_precision))


def prefill_flops(active_params, prompt_tokens, d_model, n_layers):
    """Forward FLOPs of a prompt of ``prompt_tokens``: 2 N L + causal attention 2 n_layers d_model L^2 [FLOP].

    Per layer QK^T and AV each take L^2 d_model multiply-adds, halved by the causal mask.
    """
    tokens = np.asarray(prompt_tokens, dtype=float)
    return (2.0 * np.asarray(active_params, dtype=float) * tokens
            + 2.0 * np.asarray(n_layers, dtype=float) * np.asarray(d_model, dtype=float) * tokens ** 2)


def cached_prefill_flops(active_params, prompt_tokens, cached_tokens, d_model, n_layers):
    """Prefill FLOPs when the first ``cached_tokens`` of the prompt are in the prefix cache [FLOP]."""
    return (prefill_flops(active_params, prompt_tokens, d_model, n_layers)
            - prefill_flops(active_params, cached_tokens, d_model, n_layers))


def decode_flops_per_token(active_params, context_tokens, d_model, n_layers):
    """Forward FLOPs of one generated token at ``context_tokens`` of context: 2 N + 4 n_layers d_model c [FLOP]."""
    return (2.0 * np.asarray(active_params, dtype=float)
            + 4.0 * np.asarray(n_layers, dtype=float) * np.asarray(d_model, dtype=float) * np.asarray(context_tokens, dtype=float))


def weight_bytes_read(batch, weight_bytes, active_weight_bytes):
    """Weight bytes read per decode step for ``batch`` sequences [byte].

    Dense models read all weights. A mixture of experts reads the experts its tokens are routed to: at most
    all of them, at least the active share; ``min(all, batch x active)`` is the upper bound used here.
    """
    return np.minimum(np.asarray(weight_bytes, dtype=float), np.asarray(batch, dtype=float) * active_weight_bytes)


def decode_step_seconds(batch, weight_bytes, active_weight_bytes, kv_bytes_per_sequence, flops_per_token,
                        bandwidth_bytes_per_s, flops_per_s):
    """Time of one decode step for ``batch`` sequences: the slower of memory and compute [s].

    ``bandwidth_bytes_per_s`` and ``flops_per_s`` are the replica's *achieved* figures (peak x utilisation).
    """
    batch = np.asarray(batch, dtype=float)
    memory_s = (weight_bytes_read(batch, weight_bytes, active_weight_bytes) + batch * kv_bytes_per_sequence) / bandwidth_bytes_per_s
    return np.maximum(memory_s, batch * flops_per_token / flops_per_s)


def latency_batch_limit(tpot_target_s, weight_bytes, active_weight_bytes, kv_bytes_per_sequence, flops_per_token,
                        bandwidth_bytes_per_s, flops_per_s, prefill_seconds_per_step_and_sequence=0.0):
    """Largest batch whose time per output token stays within ``tpot_target_s`` [sequences, not rounded].

    A step takes the slower of its memory traffic and its compute (:func:`decode_step_seconds`). With
    continuous batching and chunked prefill, the prompts of arriving requests ride in the same forward passes:
    each of the ``batch`` sequences lasts ``output`` steps, so ``batch / output`` prompts are prefilled per step,
    which adds ``batch x prefill_seconds_per_step_and_sequence`` (= prefill time / output tokens) to the step's
    compute, not to its memory traffic (the weights are read once for both). Piecewise linear, inverted here.
    """
    target = np.asarray(tpot_target_s, dtype=float)
    extra = np.asarray(prefill_seconds_per_step_and_sequence, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_sequence = kv_bytes_per_sequence / bandwidth_bytes_per_s
        partial = target / (active_weight_bytes / bandwidth_bytes_per_s + per_sequence)  # batch x active < all
        full = (target - weight_bytes / bandwidth_bytes_per_s) / per_sequence             # all weights read
        memory = np.where(partial * active_weight_bytes <= weight_bytes, partial, full)
        compute = target / (flops_per_token / flops_per_s + extra)
    return np.minimum(memory, compute)


def daily_profile(peak_to_average, steps=PROFILE_STEPS):
    """Relative traffic over a day, mean 1 and maximum ``peak_to_average`` [-], shape ``(..., steps)``.

    A von Mises bump ``exp(k cos(2 pi t / day))``: one smooth daily peak, never negative, any ratio >= 1
    (``k`` found by bisection, once per distinct ratio). Ratio 1 is flat traffic.
    """
    ratio = np.asarray(peak_to_average, dtype=float)
    distinct, index = np.unique(ratio, return_inverse=True)
    return _profiles(tuple(distinct.tolist()), steps)[index.reshape(ratio.shape)]


@lru_cache(maxsize=64)
def _profiles(ratios: tuple, steps: int) -> np.ndarray:
    ratio = np.asarray(ratios)[:, None]
    angle = np.cos(2.0 * np.pi * np.arange(steps) / steps)
    low, high = np.zeros_like(ratio), np.full_like(ratio, 1e4)
    for _ in range(80):
        middle = (low + high) / 2.0
        # exp(k (cos - 1)) is the bump divided by exp(k): no overflow, and the peak-to-mean ratio is unchanged
        above = 1.0 / np.exp(middle * (angle - 1.0)).mean(axis=-1, keepdims=True) > ratio
        high, low = np.where(above, middle, high), np.where(above, low, middle)
    shape = np.exp(low * (angle - 1.0))
    out = shape / shape.mean(axis=-1, keepdims=True)
    out.setflags(write=False)
    return out


def replicas_needed(requests_per_second, requests_per_second_per_replica, min_replicas):
    """Whole replicas for a load, at least ``min_replicas`` [replica]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        needed = np.ceil(np.asarray(requests_per_second, dtype=float) / requests_per_second_per_replica - 1e-9)
    return np.maximum(needed, np.asarray(min_replicas, dtype=float))


def provisioned_replicas(requests_per_day, requests_per_second_per_replica, peak_to_average, min_replicas, autoscaling):
    """(average replicas running, peak replicas) over a day [replica].

    Fixed provisioning runs the peak's replicas all day; autoscaling follows :func:`daily_profile`.
    """
    average_rps, capacity, ratio, minimum, autoscaling = np.broadcast_arrays(
        np.asarray(requests_per_day, dtype=float) / 86400.0, np.asarray(requests_per_second_per_replica, dtype=float),
        np.asarray(peak_to_average, dtype=float), np.asarray(min_replicas, dtype=float), np.asarray(autoscaling, dtype=bool))
    peak = replicas_needed(average_rps * ratio, capacity, minimum)
    running = np.array(peak, dtype=float)
    if autoscaling.any():  # the daily curve only where it is used
        scaled = autoscaling
        curve = replicas_needed(average_rps[scaled][..., None] * daily_profile(ratio[scaled]),
                                capacity[scaled][..., None], minimum[scaled][..., None])
        running[scaled] = curve.mean(axis=-1)
    return running, peak


def unserved_share(requests_per_day, requests_per_second_per_replica, peak_to_average, min_replicas, autoscaling,
                   headroom):
    """Share of a day's requests beyond the capacity provisioned at ``headroom`` x demand [fraction]: dropped or
    queued. Fixed provisioning holds the capacity of ``headroom`` x the peak all day; autoscaling, ``headroom`` x the
    traffic of each step of :func:`daily_profile` (whole replicas, at least ``min_replicas``, in both)."""
    average_rps, capacity, ratio, minimum, autoscaling, headroom = np.broadcast_arrays(
        np.asarray(requests_per_day, dtype=float) / 86400.0, np.asarray(requests_per_second_per_replica, dtype=float),
        np.asarray(peak_to_average, dtype=float), np.asarray(min_replicas, dtype=float), np.asarray(autoscaling, dtype=bool),
        np.asarray(headroom, dtype=float))
    demand = average_rps[..., None] * daily_profile(ratio)
    wanted = np.where(autoscaling[..., None], demand, (average_rps * ratio)[..., None]) * headroom[..., None]
    served = replicas_needed(wanted, capacity[..., None], minimum[..., None]) * capacity[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        short = np.maximum(demand - served, 0.0).sum(axis=-1) / demand.sum(axis=-1)
    return np.where(np.isfinite(short), short, 0.0)


def tokens_per_month(requests_per_day, tokens_per_request):
    """Tokens served per month [token]."""
    return np.asarray(requests_per_day, dtype=float) * np.asarray(tokens_per_request, dtype=float) * DAYS_PER_MONTH


def plan(**inputs) -> dict:
    """One replica's operating point, for every scenario of a batch (arrays broadcast; NaN = not given).

    See :func:`_plan` for the inputs and figures. A batch is evaluated once per distinct row of serving inputs
    (a Monte Carlo over training inputs has one), then spread back over the batch.
    """
    names = list(inputs)
    arrays = np.broadcast_arrays(*(np.asarray(inputs[n]) for n in names))
    shape = arrays[0].shape
    if len(shape) != 1 or shape[0] < 2:
        return _plan(**inputs)
    if all(_constant(a) for a in arrays):  # the common case: a sweep or Monte Carlo over training inputs only
        out = _plan(**{n: a[:1] for n, a in zip(names, arrays)})
        return {k: np.repeat(np.asarray(v), shape[0]) for k, v in out.items()}
    codes = np.column_stack([pd.factorize(a)[0] if a.dtype == object else np.nan_to_num(a.astype(float), nan=-1.0)
                             for a in arrays])  # NaN (not given) as -1: every valid input is >= 0
    _, first, back = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    if len(first) == shape[0]:
        return _plan(**inputs)
    out = _plan(**{n: a[first] for n, a in zip(names, arrays)})
    return {k: np.asarray(v)[back.reshape(-1)] for k, v in out.items()}


def _constant(a: np.ndarray) -> bool:
    first = a[0]
    if a.dtype == object:
        return bool((a == first).all())
    return bool(((a == first) | (np.isnan(a) & np.isnan(first))).all())


def _plan(*, params, active_params, d_model, n_layers, n_kv_heads, head_dim, weight_precision, kv_precision,
          memory_bytes_per_gpu, usable_memory_fraction, bandwidth_bytes_per_s_per_gpu, peak_flops_per_s_per_gpu,
          serving_mfu, serving_mbu, input_tokens, output_tokens, prefix_cache_hit_rate, tpot_target_s,
          ttft_target_s, max_batch, gpus_per_node=8, prefill_mode="interleaved", replica_gpus=np.nan,
          tokens_per_second_per_gpu=np.nan, requests_per_day=0.0, peak_to_average=1.0, min_replicas=1.0,
          autoscaling=False):
    """The operating point of the replica size that needs the fewest GPUs for the day's traffic.

    Memory [byte], bandwidth [byte/s] and peak [FLOP/s] are per GPU; lengths [token]; targets [s] (NaN = none);
    ``replica_gpus`` NaN = searched; ``tokens_per_second_per_gpu`` NaN = from the roofline (else it replaces
    the replica's throughput); ``requests_per_day``, ``peak_to_average``, ``min_replicas`` and ``autoscaling``
    say how many whole replicas each size needs (:func:`provisioned_replicas`), which decides the size.

    Returns arrays: ``replica_gpus``, ``batch`` (mean concurrent sequences), ``batch_limit`` (which limit
    binds), ``tpot_s`` (time per output token), ``step_s`` (a decode step without prefills), ``ttft_s`` (the
    prompt's prefill), ``gpu_seconds_per_request``, ``prefill_share`` (of the replica's time, pricing input
    tokens), ``fits``, ``meets_targets``, ``kv_bytes_per_token``, ``weight_bytes``, ``min_replica_gpus``,
    ``requests_per_second_per_replica``, ``replicas_running`` (average) and ``replicas_peak``.
    """
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (
        params, active_params, d_model, n_layers, n_kv_heads, head_dim, memory_bytes_per_gpu, usable_memory_fraction,
        bandwidth_bytes_per_s_per_gpu, peak_flops_per_s_per_gpu, serving_mfu, serving_mbu, input_tokens, output_tokens,
        prefix_cache_hit_rate, tpot_target_s, ttft_target_s, max_batch, gpus_per_node, replica_gpus,
        tokens_per_second_per_gpu, requests_per_day, peak_to_average, min_replicas)))
    shape = arrays[0].shape
    (params, active, d_model, n_layers, n_kv, head_dim, memory, usable, bandwidth, peak, mfu, mbu, n_in, n_out, hit,
     tpot_target, ttft_target, max_batch, per_node, given_tp, given_rate, per_day, ratio, minimum) = (
        a[..., None] for a in arrays)
    weight_precision = np.broadcast_to(np.asarray(weight_precision, dtype=object), shape)[..., None]
    kv_precision = np.broadcast_to(np.asarray(kv_precision, dtype=object), shape)[..., None]
    weights = params * precision_bytes(weight_precision)
    active_weights = active * precision_bytes(weight_precision)
    kv_token = kv_bytes_per_token(n_layers, n_kv, head_dim, kv_precision)
    # candidates: powers of two within a node, and whole numbers of nodes (NODE_MULTIPLES), the same for every
    # model so that the cheapest of them moves one way with each input; the fewest whole nodes that hold the
    # model only where none of those does (a model larger than 64 nodes)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = (weights + kv_token * (n_in + n_out)) / (memory * usable)
    nodes = np.ceil(np.maximum(need, 1.0) / per_node) * per_node  # no tolerance: "fits" below must hold
    powers = np.asarray(REPLICA_SIZES, dtype=float)
    multi = per_node * np.asarray(NODE_MULTIPLES, dtype=float)
    candidates = np.concatenate([np.broadcast_to(powers, shape + powers.shape),
                                 np.broadcast_to(multi, shape + multi.shape[-1:]),
                                 np.broadcast_to(np.maximum(nodes, multi[..., -1:] + per_node), shape + (1,))], axis=-1)
    allowed = candidates <= per_node
    allowed[..., len(REPLICA_SIZES):-1] = True
    allowed[..., -1] = np.broadcast_to(nodes > multi[..., -1:], shape + (1,))[..., 0]
    tp = np.where(np.isnan(given_tp), candidates, given_tp)
    allowed = allowed | ~np.isnan(given_tp)
    mean_context = n_in + n_out / 2.0  # a sequence's context grows from the prompt to prompt + output
    kv_sequence = kv_token * mean_context
    kv_budget = tp * memory * usable - weights
    fits = (kv_budget >= kv_token * (n_in + n_out)) & allowed
    achieved_bandwidth, achieved_flops = tp * bandwidth * mbu, tp * peak * mfu
    flops_token = decode_flops_per_token(active, mean_context, d_model, n_layers)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        kv_limit = np.where(kv_sequence > 0, np.floor(kv_budget / kv_sequence), np.inf)
        prefill_s = cached_prefill_flops(active, n_in, n_in * hit, d_model, n_layers) / achieved_flops
        mode = np.broadcast_to(np.asarray(prefill_mode, dtype=object), shape)[..., None]
        interleaved = np.where((n_out > 0) & (mode == "interleaved"), prefill_s / n_out, 0.0)
        latency_limit = latency_batch_limit(tpot_target, weights, active_weights, kv_sequence, flops_token,
                                            achieved_bandwidth, achieved_flops, interleaved)
        limits = np.stack([kv_limit, latency_limit, np.broadcast_to(max_batch, kv_limit.shape)], axis=-1)
        limits = np.where(np.isnan(limits), np.inf, limits)
        binding = np.argmin(limits, axis=-1)
        # a replica can always run one sequence at a time: the target is reachable if that step (memory and compute)
        # is fast enough
        one_step = decode_step_seconds(1.0, weights, active_weights, kv_sequence, flops_token, achieved_bandwidth,
                                       achieved_flops)
        reachable = one_step <= tpot_target * (1 + 1e-12)
        # the mean number of sequences in flight, not rounded: below one where the prompts' prefill is what
        # limits a replica (it then waits for compute, not for memory); one where the target is out of reach
        batch = np.where(reachable, np.min(limits, axis=-1), np.minimum(1.0, np.min(limits[..., [0, 2]], axis=-1)))
        step = decode_step_seconds(batch, weights, active_weights, kv_sequence, flops_token, achieved_bandwidth,
                                   achieved_flops)
        tpot = decode_step_seconds(batch, weights, active_weights, kv_sequence, flops_token + interleaved * achieved_flops,
                                   achieved_bandwidth, achieved_flops)
        ttft = prefill_s  # the prompt's prefill alone, before any queueing
        decode_s = np.where(n_out > 0, n_out * step / batch, 0.0)
        replica_s = np.where(n_out > 0, n_out * tpot / batch, prefill_s)  # interleaved: prefills inside the steps
        replica_s = np.where(mode == "interleaved", replica_s, prefill_s + decode_s)
        split = prefill_s + decode_s
        roofline_share = np.where(split > 0, prefill_s / split, np.where(n_in + n_out > 0, n_in / (n_in + n_out), 0.0))
        override = ~np.isnan(given_rate)
        gpu_s = np.where(override, (n_in + n_out) / given_rate, tp * replica_s)
        share = np.where(override & ~np.isfinite(roofline_share), n_in / np.maximum(n_in + n_out, 1e-300), roofline_share)
        meets = reachable & (np.isnan(ttft_target) | (ttft <= ttft_target))
        rate = np.where(gpu_s > 0, tp / gpu_s, np.inf)  # requests per second per replica
        running, peak_replicas = provisioned_replicas(per_day, rate, ratio, minimum, np.broadcast_to(
            np.asarray(autoscaling, dtype=bool), shape)[..., None])
    ok = fits & np.where(override, True, meets)
    # the size with the fewest GPUs provisioned that meets the targets (ties: fewest GPU-seconds per request);
    # if none meets them, the fastest that fits (a warning says so)
    gpus = np.where(ok & np.isfinite(gpu_s), running * tp, np.inf)
    best = np.min(gpus, axis=-1, keepdims=True)
    cheapest = np.argmin(np.where(gpus <= best * (1 + 1e-12), gpu_s, np.inf), axis=-1)
    fastest = np.argmin(np.where(fits & np.isfinite(tpot), tpot, np.inf), axis=-1)
    pick = np.where(np.isfinite(best[..., 0]), cheapest, fastest)[..., None]

    def take(a):
        return np.take_along_axis(np.broadcast_to(a, fits.shape), pick, axis=-1)[..., 0]

    chosen_fits = take(fits)
    nan_unless_fits = lambda a: np.where(chosen_fits, take(a), np.nan)  # noqa: E731
    with np.errstate(divide="ignore", over="ignore"):
        out = {
            "replica_gpus": take(np.broadcast_to(tp, fits.shape)), "batch": nan_unless_fits(batch),
            "batch_limit": np.asarray(["kv cache memory", "latency target", "max batch"], dtype=object)[take(binding)],
            "tpot_s": nan_unless_fits(tpot), "step_s": nan_unless_fits(step), "ttft_s": nan_unless_fits(ttft),
            "gpu_seconds_per_request": nan_unless_fits(gpu_s), "prefill_share": nan_unless_fits(share),
            "fits": chosen_fits, "meets_targets": chosen_fits & take(meets),
            "kv_bytes_per_token": kv_token[..., 0], "weight_bytes": weights[..., 0],
            "min_replica_gpus": np.ceil(np.maximum(need, 1.0))[..., 0],
            "replicas_running": nan_unless_fits(running), "replicas_peak": nan_unless_fits(peak_replicas),
        }
        out["requests_per_second_per_replica"] = out["replica_gpus"] / out["gpu_seconds_per_request"]
    return out
