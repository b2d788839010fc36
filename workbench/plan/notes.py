"""What an estimate says beside its figures: where each default came from, warnings about the plan (a cluster
that cannot fit the model or finish in time, serving that misses its targets, a budget exceeded, a run far from
compute-optimal), and the refusal of a serving plan no replica can hold. Single scenarios; figures as floats.
"""
from __future__ import annotations

import numpy as np

from . import boundaries
from ..reference import catalog, prices
from ..formulas import mfu, scaling
from ..reference.numbers import compact, power_of_ten
from .scenario import Scenario, ScenarioError, fields


def defaults_used(scenario: Scenario, figures: dict) -> dict[str, str]:
    """Where each input left empty got its value from (single scenarios only)."""
    used = {}
    layout = layout_text(figures)
    if scenario.mfu is None:
        kernel, basis = mfu.kernel_for(scenario.gpu, mfu.parameters())
        where = "fitted on published runs" if basis == "fitted" else basis
        used["mfu"] = (f"{figures['mfu_prior']:.3f}: kernel efficiency {kernel:.3f} ({catalog.spec(scenario.gpu, 'generation')}, "
                       f"{where}; data/mfu_model.csv) "
                       + (f"x sustained share of peak {mfu.sustained_share(scenario.gpu):.2f} (its power limit; "
                          "data/accelerators.csv) " if mfu.sustained_share(scenario.gpu) < 1 else "")
                       + "x engineering scale "
                       f"{float(mfu.engineering_scale(figures['training_flops'])):.3f} (runs of {power_of_ten(figures['training_flops'], 2)} FLOP) "
                       f"x per-layer fixed time {figures['width_efficiency']:.3f} x cluster size "
                       f"{figures['cluster_efficiency']:.3f} x pipeline "
                       f"{1 - figures['pipeline_bubble']:.3f} / (1 + tensor-parallel traffic "
                       f"{figures['tensor_parallel_overhead']:.3f}) / (1 + pipeline traffic "
                       f"{figures['pipeline_traffic_overhead']:.3f}) / (1 + gradient sync {figures['data_parallel_overhead']:.3f}) "
                       f"on {layout}")
        if abs(figures["mfu_speed_factor"] - 1) > 1e-9:
            used["mfu"] += (f", x {figures['mfu_speed_factor']:.3f} for recompute={scenario.recompute!r} and "
                            f"precision={scenario.precision!r} (hardware FLOPs against the runs' selective recompute; "
                            "a format's measured speed-up over its peak)")
    if None in (scenario.tensor_parallel, scenario.pipeline_parallel, scenario.zero_stage, scenario.micro_batch_size):
        used["layout"] = (f"{layout}: of the layouts that fit in memory, the one with the most MFU "
                          "(workbench layouts lists them)")
    if scenario.global_batch_tokens is None:
        p = mfu.parameters()
        used["global_batch_tokens"] = (f"{figures['global_batch_tokens']:,.0f} tokens: the batch of published runs of "
                                       f"{power_of_ten(figures['training_flops'])} FLOP, {p['typical_batch_at_1e23']:,.0f} x "
                                       f"(C / 10^23) ^ {p['typical_batch_exponent']:.3f} (data/mfu_model.csv)")
    if scenario.price_per_gpu_hour is None and scenario.pricing == "self_hosted":
        used["price_per_gpu_hour"] = (f"{figures['price_per_gpu_hour']:.3f} USD/GPU-h: {figures['gpu_purchase_usd']:,.0f} USD "
                                      f"per GPU x (1 + {scenario.server_share:g} + {scenario.interconnect_share:g}) over "
                                      f"{scenario.useful_life_years:g} years")
        if scenario.gpu_purchase_usd is None:
            used["gpu_purchase_usd"] = f"{figures['gpu_purchase_usd']:,.0f} USD: data/hardware_prices.csv (low confidence)"
    elif scenario.price_per_gpu_hour is None:
        used["price_per_gpu_hour"] = (f"{figures['price_per_gpu_hour']:.2f} USD/GPU-h: "
                                      + prices.lookup(scenario.gpu, scenario.pricing, scenario.provider)[1])
    if scenario.checkpoint_interval_hours is None:
        used["checkpoint_interval_hours"] = (f"{figures['checkpoint_interval_hours']:.3g} h: Young/Daly sqrt(2 x "
                                             f"{figures['checkpoint_write_seconds']:.3g} s write x "
                                             f"{figures['cluster_mtbf_hours']:.3g} h cluster MTBF)")
    if scenario.staff_months is None:
        used["staff_months"] = f"{figures['staff_months']:.2f}: the training stages' wall-clock time"
    if scenario.serving_tokens_per_second_per_gpu is None and np.isfinite(figures["serving_tokens_per_second_per_gpu"]):
        used["serving_tokens_per_second_per_gpu"] = (
            f"{figures['serving_tokens_per_second_per_gpu']:,.0f}: roofline at batch {figures['serving_batch']:.0f} "
            f"(limited by {figures['serving_batch_limit']}) on {figures['serving_replica_gpus']:.0f}-GPU replicas: prefill "
            f"at serving_mfu {scenario.serving_mfu:g}, decode at serving_mbu {scenario.serving_mbu:g} of "
            f"{scenario.gpu}'s bandwidth, {figures['serving_tpot_ms']:.1f} ms per output token")
    if scenario.serving_tensor_parallel is None and np.isfinite(figures["serving_replica_gpus"]):
        used["serving_tensor_parallel"] = (f"{figures['serving_replica_gpus']:.0f}: the replica size that needs the "
                                           "fewest GPUs for the day's traffic, holds the model and meets the latency targets")
    if scenario.n_kv_heads is None:
        used["n_kv_heads"] = f"{min(8, max(1, round(figures['d_model'] / 128)))}: grouped-query attention as in Llama 3"
    if scenario.n_gpus is None:
        days = (f"target_days={scenario.target_days:g}" if scenario.target_days is not None else
                f"{figures['target_days_used']:.0f} days (the wall-clock of published runs of {power_of_ten(figures['training_flops'], 2)} "
                "FLOP; data/mfu_model.csv)")
        used["n_gpus"] = (f"{figures['n_gpus']:.0f}: enough whole {scenario.gpus_per_node}-GPU nodes to finish in "
                          f"{days} ("
                          + (f"memory needs at least {figures['min_gpus_to_fit']:.0f})"
                             if np.isfinite(figures["min_gpus_to_fit"]) else "the model fits at no GPU count: see the warning)"))
    if scenario.d_model is None or scenario.n_layers is None:
        used["architecture"] = (f"d_model={figures['d_model']:.0f}, n_layers={figures['n_layers']:.0f}: derived from "
                                f"{compact(figures['active_params'], 4)} active parameters (N = 12·L·h², h = 128·L)")
    if scenario.active_params is None:
        used["active_params"] = "equal to params (a dense model)"
    return used


def layout_text(figures: dict) -> str:
    """``TP 8 x PP 16 x DP 128, ZeRO-1`` for the layout an estimate used."""
    return (f"TP {figures['tensor_parallel_used']:.0f} x PP {figures['pipeline_parallel_used']:.0f} x DP "
            f"{figures['data_parallel']:,.0f}, ZeRO-{figures['zero_stage_used']:.0f}, micro-batch "
            f"{figures['micro_batch_size_used']:.0f}")


def memory_warnings(scenario: Scenario, figures: dict) -> list[str]:
    """The layout does not fit in memory: what it needs, and the field to change (single scenarios)."""
    if figures["layout_fits"]:
        return []
    need = (f"{figures['memory_bytes_per_gpu'] / 2**30:,.1f} GiB per GPU of {scenario.gpu}'s "
            f"{figures['gpu_memory_bytes'] / 2**30:,.0f} GiB (usable {scenario.usable_memory_fraction:g})")
    fixes = []
    if np.isfinite(figures["fit_tensor_parallel"]):
        fixes.append(f"tensor_parallel={figures['fit_tensor_parallel']:.0f}, pipeline_parallel="
                     f"{figures['fit_pipeline_parallel']:.0f}, zero_stage={figures['fit_zero_stage']:.0f}, micro_batch_size="
                     f"{figures['fit_micro_batch_size']:.0f} fits on these "
                     f"{figures['n_gpus']:,.0f} GPUs")
    if np.isfinite(figures["fit_min_gpus"]) and figures["fit_min_gpus"] > figures["n_gpus"]:
        fixes.append(f"n_gpus of at least {figures['fit_min_gpus']:,.0f} fits with the layout settings typed")
    if not fixes:
        fixes.append(f"no layout fits at any GPU count with recompute={scenario.recompute!r}: use full recompute, a "
                     "shorter sequence or micro-batch, or a GPU with more memory")
    return [f"the model does not fit in memory with {layout_text(figures)}: {need}; " + "; ".join(fixes)
            + " (the totals assume it fits)"]


def warnings(scenario: Scenario, figures: dict) -> list[str]:
    out = []
    pretraining, trains = scenario.plan_kind == "pretrain", scenario.plan_kind != "serve_only"
    if pretraining and scenario.n_gpus is None and figures["n_gpus_wanted"] > figures["n_gpus"]:
        out.append(f"finishing pre-training in {figures['target_days_used']:,.0f} days needs "
                   f"{figures['n_gpus_wanted']:,.0f} GPUs, more than the {fields()['n_gpus'].max:,.0f} the n_gpus field "
                   f"allows; sized at {figures['n_gpus']:,.0f} GPUs, pre-training takes {figures['wall_days']:,.1f} days")
    out += memory_warnings(scenario, figures) if trains else []
    if pretraining and figures["global_batch_tokens_used"] > 1.25 * figures["global_batch_tokens"]:
        out.append(f"the layout runs a global batch of {figures['global_batch_tokens_used']:,.0f} tokens, more than the "
                   f"{figures['global_batch_tokens']:,.0f} planned: {figures['data_parallel']:,.0f} data-parallel replicas "
                   "need a micro-batch each; use fewer GPUs, more tensor or pipeline parallelism, or a larger "
                   "global_batch_tokens")
    if trains and scenario.mfu is None and str(figures["mfu_basis"]).startswith("extrapolated"):
        out.append(f"the MFU of {scenario.gpu} is {figures['mfu_basis']}: no published training run of its generation "
                   "is on record; type a measured mfu when you have one")
    if trains and figures["idle_share"] > 0:
        group = figures["tensor_parallel_used"] * figures["pipeline_parallel_used"]
        out.append(f"n_gpus={figures['n_gpus']:.0f} is not a multiple of tensor_parallel x pipeline_parallel = {group:.0f}: "
                   f"{figures['idle_share'] * figures['n_gpus']:,.0f} GPUs have no data-parallel replica and stay idle")
    if not figures["serving_fits"]:
        out.append(f"serving: the weights ({figures['serving_weight_bytes'] / 1e9:,.0f} GB in {scenario.weight_precision}) "
                   f"and one request's KV cache do not fit in the replica"
                   + (f" of serving_tensor_parallel={scenario.serving_tensor_parallel} GPUs"
                      if scenario.serving_tensor_parallel is not None else "")
                   + "; give more GPUs per replica, a lower weight or KV-cache precision, or shorter requests")
    elif not figures["serving_meets_targets"] and np.isfinite(figures["serving_tpot_ms"]):
        ttft = (f" and time to first token {scenario.ttft_target_s:g} s" if scenario.ttft_target_s is not None else "")
        out.append(f"serving: no replica size meets the time per output token of {scenario.tpot_target_ms:g} ms{ttft}; "
                   f"the fastest replica ({figures['serving_replica_gpus']:.0f} GPUs) takes "
                   f"{figures['serving_tpot_ms']:.1f} ms per token and {figures['serving_ttft_s']:.2f} s to the first token")
    if scenario.serving_months > 0:
        out += multi_node_warning(figures)
    if scenario.budget_usd is not None and figures["total_cost_usd"] > scenario.budget_usd:
        over = figures["total_cost_usd"] - scenario.budget_usd
        out.append(f"the plan's total of {figures['total_cost_usd']:,.0f} USD is over the budget of "
                   f"{scenario.budget_usd:,.0f} USD by {over:,.0f} USD ({over / scenario.budget_usd:.0%})")
    note = scaling.optimality_warning(figures["active_params"], scenario.tokens, scenario.scaling_law) if pretraining else ""
    if note:  # the size against the tokens is a pre-training question: an open model's is its publisher's
        out.append(note)
    out += checkpoint_warnings(scenario, figures) if trains else []
    if scenario.plan_kind == "serve_only" and scenario.serving_months == 0:
        out.append("plan_kind=serve_only with serving_months=0 costs nothing: give the months of serving")
    return out + boundaries.warnings(scenario, figures)


def checkpoint_warnings(scenario: Scenario, figures: dict) -> list[str]:
    """Checkpointing the file system cannot keep up with: a write longer than the cluster's mean time between
    failures (the run would rarely finish a checkpoint), or an asynchronous checkpoint the file system cannot drain
    before the next one."""
    out = []
    write_h = float(figures["checkpoint_write_seconds"]) / 3600.0
    mtbf, interval = float(figures["cluster_mtbf_hours"]), float(figures["checkpoint_interval_hours"])
    throughput = float(figures["pfs_throughput_gb_per_s"])
    if np.isfinite(mtbf) and write_h >= mtbf:
        out.append(f"pfs_throughput_gb_per_s={throughput:.3g}: a checkpoint takes {write_h * 3600:,.0f} s to write, "
                   f"longer than the cluster's {mtbf * 3600:,.0f} s between failures: the run would rarely finish one "
                   "and the price assumes it does; buy more throughput, more GPUs' write rate or fewer failures")
    drain_h = float(figures["checkpoint_bytes"]) / 1e9 / throughput / 3600.0
    if scenario.checkpoint_writes == "asynchronous" and np.isfinite(interval) and drain_h > interval:
        out.append(f"pfs_throughput_gb_per_s={throughput:.3g}: an asynchronous checkpoint takes {drain_h * 60:,.1f} "
                   f"minutes to drain to the file system, longer than the {interval * 60:,.1f}-minute interval: "
                   "checkpoints would pile up in host memory; buy at least checkpoint bytes / interval")
    return out


def check_serving(scenario: Scenario, figures: dict) -> None:
    """A serving horizon on a replica that cannot hold the model has no price: say which field to change,
    rather than let a NaN serving line reach the total."""
    bad = (np.asarray(scenario.serving_months) > 0) & ~np.asarray(figures["serving_fits"], dtype=bool)
    if not bad.any():
        return
    i = np.unravel_index(int(np.argmax(bad)), np.shape(bad)) if np.ndim(bad) else ()
    pick = lambda v: np.asarray(v)[i] if np.ndim(v) else v  # noqa: E731
    where = f" (scenario {int(np.argmax(np.ravel(bad)))} of the batch)" if np.ndim(bad) else ""
    need = pick(figures["serving_min_replica_gpus"])
    weights_gb = pick(figures["serving_weight_bytes"]) / 1e9
    precision = pick(np.broadcast_to(np.asarray(scenario.weight_precision, dtype=object), np.shape(bad)))
    given = pick(np.broadcast_to(np.asarray(scenario.serving_tensor_parallel if scenario.serving_tensor_parallel
                                            is not None else np.nan, dtype=float), np.shape(bad)))
    field, value = ("serving_tensor_parallel", scenario.serving_tensor_parallel) if np.isfinite(given) else ("gpu", scenario.gpu)
    need_text = f"{need:,.0f} GPUs" if np.isfinite(need) else "more GPUs than any replica has"
    raise ScenarioError(field, value, f"serving for serving_months > 0 needs the weights ({weights_gb:,.0f} GB in "
                        f"{precision}) and one request's KV cache in one replica, which takes {need_text} of "
                        f"{pick(np.broadcast_to(np.asarray(scenario.gpu, dtype=object), np.shape(bad)))} memory{where}",
                        f"serving_tensor_parallel >= {need:,.0f} (or empty, to size it), a lower weight_precision or "
                        "kv_cache_precision, shorter requests, or serving_months = 0" if np.isfinite(need) else
                        "an accelerator with memory, or serving_months = 0",
                        f"每副本 GPU 数 >= {need:,.0f}（或留空自动选择）、更低的权重或 KV 缓存精度、更短的请求，或推理月数为 0"
                        if np.isfinite(need) else "有显存的加速器，或推理月数为 0")


def multi_node_warning(figures) -> list[str]:
    if not (figures["serving_fits"] and figures["serving_replica_gpus"] > figures["serving_gpus_per_node"]):
        return []
    return [f"serving: a replica of {figures['serving_replica_gpus']:,.0f} GPUs spans "
            f"{figures['serving_replica_gpus'] / figures['serving_gpus_per_node']:,.0f} nodes; tensor-parallel "
            "communication between nodes is not modelled, so its latency and cost are optimistic"]

