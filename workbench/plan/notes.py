"""What an estimate says beside its figures: where each default came from, warnings about the plan (a cluster
that cannot fit the model or finish in time, serving that misses its targets, a budget exceeded, a run far from
compute-optimal), and the refusal of a serving plan no replica can hold. Single scenarios; figures as floats.
"""
from __future__ import annotations

import numpy as np

from . import boundaries
from ..reference import catalog, prices
from ..formulas import mfu, ownership, scaling
from ..reference.messages import Message
from ..reference.numbers import compact, power_of_ten
from .scenario import Scenario, ScenarioError, fields

#: Above this many GPUs a training cluster bought at an on-demand or spot list price gets a warning: a planning
#: threshold (64 eight-GPU servers), not a provider's quota; the list price is then a ceiling, not a quote.
LIST_PRICE_CLUSTER_GPUS = 512


def defaults_used(scenario: Scenario, figures: dict) -> dict[str, str]:
    """Where each input left empty got its value from (single scenarios only)."""
    used = {}
    layout = layout_message(figures)
    if scenario.mfu is None:
        kernel, basis = mfu.kernel_for(scenario.gpu, mfu.parameters())
        where = "fitted on published runs" if basis == "fitted" else basis
        used["mfu"] = (f"{figures['mfu_prior']:.3f}: kernel efficiency {kernel:.3f} ({catalog.spec(scenario.gpu, 'generation')}, "
                       f"{where}; data/mfu_model.csv) "
                       + (f"x sustained share of peak {mfu.sustained_share(scenario.gpu):.2f} (its power limit; "
                          "data/accelerators.csv) " if mfu.sustained_share(scenario.gpu) < 1 else "")
                       + "x engineering scale "
                       f"{float(mfu.engineering_scale(figures['training_flops'])):.3f} (runs of {power_of_ten(figures['training_flops'], 2)} FLOP) "
                       + (f"x experts' share {float(mfu.expert_share(scenario.params, scenario.active_params)):.3f} "
                          f"(a mixture of experts, {power_of_ten(scenario.active_params, 2)} of "
                          f"{power_of_ten(scenario.params, 2)} parameters "
                          "active: routing and all-to-all; data/mfu_model.csv) "
                          if mfu.is_mixture_of_experts(scenario.params, scenario.active_params) else "")
                       + f"x per-layer fixed time {figures['width_efficiency']:.3f} x cluster size "
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
    if scenario.global_batch_tokens is None and float(figures["training_flops"]) > 0:  # a plan that pre-trains
        p = mfu.parameters()
        used["global_batch_tokens"] = (f"{figures['global_batch_tokens']:,.0f} tokens: the batch of published runs of "
                                       f"{power_of_ten(figures['training_flops'])} FLOP, {p['typical_batch_at_1e23']:,.0f} x "
                                       f"(C / 10^23) ^ {p['typical_batch_exponent']:.3f} (data/mfu_model.csv)")
    if scenario.price_per_gpu_hour is None and scenario.pricing == "self_hosted":
        used["price_per_gpu_hour"] = (f"{figures['price_per_gpu_hour']:.3f} USD/GPU-h: {figures['gpu_purchase_usd']:,.0f} USD "
                                      f"per GPU x (1 + {scenario.server_share:g} + {scenario.interconnect_share:g}) over "
                                      f"{scenario.useful_life_years:g} years")
        if scenario.gpu_purchase_usd is None:
            price, currency = ownership.hardware_prices()[scenario.gpu]
            converted = (f"{price:,.0f} {currency} at {scenario.cny_per_usd:g} CNY/USD, " if currency != "USD" else "")
            used["gpu_purchase_usd"] = (f"{figures['gpu_purchase_usd']:,.0f} USD: {converted}data/hardware_prices.csv "
                                        "(low confidence)")
    elif scenario.price_per_gpu_hour is None:
        used["price_per_gpu_hour"] = f"{figures['price_per_gpu_hour']:.2f} USD/GPU-h: {figures['price_source']}"
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


def layout_message(figures: dict) -> Message:
    """``TP 8 x PP 16 x DP 128, ZeRO-1, micro-batch 1``: the layout an estimate used."""
    return Message("ew_layout", tp=figures["tensor_parallel_used"], pp=figures["pipeline_parallel_used"],
                   dp=figures["data_parallel"], zero=figures["zero_stage_used"], micro_batch=figures["micro_batch_size_used"])


def memory_warnings(scenario: Scenario, figures: dict) -> list[str]:
    """The layout does not fit in memory: what it needs, and the field to change (single scenarios)."""
    if figures["layout_fits"]:
        return []
    fixes = []
    if np.isfinite(figures["fit_tensor_parallel"]):
        fixes.append(Message("ew_fix_layout", tp=figures["fit_tensor_parallel"], pp=figures["fit_pipeline_parallel"],
                             zero=figures["fit_zero_stage"], micro_batch=figures["fit_micro_batch_size"],
                             n_gpus=figures["n_gpus"]))
    if np.isfinite(figures["fit_min_gpus"]) and figures["fit_min_gpus"] > figures["n_gpus"]:
        fixes.append(Message("ew_fix_gpus", min_gpus=figures["fit_min_gpus"]))
    if not fixes:
        fixes.append(Message("ew_fix_none", recompute=scenario.recompute))
    return [Message("ew_memory", layout=layout_message(figures), need_gib=figures["memory_bytes_per_gpu"] / 2**30,
                    gpu=scenario.gpu, memory_gib=figures["gpu_memory_bytes"] / 2**30,
                    usable=scenario.usable_memory_fraction, fixes=fixes)]


def warnings(scenario: Scenario, figures: dict) -> list[str]:
    """The warnings of a single scenario with ``figures``: each a :class:`Message` (its English sentence, code and
    values), in the order the app shows them."""
    out = []
    pretraining, trains = scenario.plan_kind == "pretrain", scenario.plan_kind != "serve_only"
    if pretraining and scenario.n_gpus is None and figures["n_gpus_wanted"] > figures["n_gpus"]:
        out.append(Message("ew_cluster_capped", target_days=figures["target_days_used"], wanted=figures["n_gpus_wanted"],
                           most=fields()["n_gpus"].max, n_gpus=figures["n_gpus"], wall_days=figures["wall_days"]))
    out += memory_warnings(scenario, figures) if trains else []
    if pretraining and figures["global_batch_tokens_used"] > 1.25 * figures["global_batch_tokens"]:
        out.append(Message("ew_global_batch", used=figures["global_batch_tokens_used"],
                           planned=figures["global_batch_tokens"], dp=figures["data_parallel"]))
    if trains and scenario.mfu is None and str(figures["mfu_basis"]).startswith("extrapolated"):
        scaled = mfu.extrapolation(scenario.gpu)
        out.append(Message("ew_mfu_scaled", gpu=scenario.gpu, reference=scaled["reference_gpu"],
                           speedup=scaled["speedup_per_gpu"], benchmark=scaled["benchmark"]) if scaled else
                   Message("ew_mfu_reference", gpu=scenario.gpu, reference=mfu.REFERENCE_GPU))
    if trains and figures["idle_share"] > 0:
        out.append(Message("ew_idle_gpus", n_gpus=figures["n_gpus"],
                           group=figures["tensor_parallel_used"] * figures["pipeline_parallel_used"],
                           idle=figures["idle_share"] * figures["n_gpus"]))
    if not figures["serving_fits"]:
        given = (Message("ew_serving_given", tp=scenario.serving_tensor_parallel)
                 if scenario.serving_tensor_parallel is not None else "")
        out.append(Message("ew_serving_no_fit", weights_gb=figures["serving_weight_bytes"] / 1e9,
                           precision=scenario.weight_precision, given=given))
    elif not figures["serving_meets_targets"] and np.isfinite(figures["serving_tpot_ms"]):
        ttft = (Message("ew_serving_ttft", ttft_target=scenario.ttft_target_s)
                if scenario.ttft_target_s is not None else "")
        out.append(Message("ew_serving_slow", tpot_target=scenario.tpot_target_ms, ttft=ttft,
                           replica_gpus=figures["serving_replica_gpus"], tpot=figures["serving_tpot_ms"],
                           ttft_s=figures["serving_ttft_s"]))
    if scenario.serving_months > 0:
        out += multi_node_warning(figures)
    if (pretraining and scenario.price_per_gpu_hour is None and scenario.pricing in ("on_demand", "spot")
            and float(figures["n_gpus"]) > LIST_PRICE_CLUSTER_GPUS):
        try:  # a reservation on record to suggest, or only a quoted price
            reserved = bool(prices.lookup(scenario.gpu, "reserved_1y", scenario.provider, scenario.region or ""))
        except prices.PriceNotFoundError:
            reserved = False
        out.append(Message("ew_list_price_cluster" if reserved else "ew_list_price_cluster_quote",
                           gpus=float(figures["n_gpus"]), mode=scenario.pricing))
    if scenario.budget_usd is not None and figures["total_cost_usd"] > scenario.budget_usd:
        over = figures["total_cost_usd"] - scenario.budget_usd
        out.append(Message("ew_over_budget", total_usd=figures["total_cost_usd"], budget_usd=scenario.budget_usd,
                           over_usd=over, share=over / scenario.budget_usd))
    note = scaling.optimality_warning(figures["active_params"], scenario.tokens, scenario.scaling_law) if pretraining else ""
    if note:  # the size against the tokens is a pre-training question: an open model's is its publisher's
        out.append(note)
    out += checkpoint_warnings(scenario, figures) if trains else []
    if trains and scenario.staff_months is None and scenario.staff_fte > 0 and float(figures["staff_months"]) < 1:
        # the empty field pays the team for the GPUs' days: a fine-tune of hours pays it for hours
        out.append(Message("ew_short_team", fte=scenario.staff_fte, months=float(figures["staff_months"])))
    if scenario.plan_kind == "serve_only" and scenario.serving_months == 0:
        out.append(Message("ew_serve_only_empty"))
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
        out.append(Message("ew_checkpoint_slow", throughput=throughput, write_s=write_h * 3600, mtbf_s=mtbf * 3600))
    drain_h = float(figures["checkpoint_bytes"]) / 1e9 / throughput / 3600.0
    if scenario.checkpoint_writes == "asynchronous" and np.isfinite(interval) and drain_h > interval:
        out.append(Message("ew_checkpoint_drain", throughput=throughput, drain_min=drain_h * 60,
                           interval_min=interval * 60))
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
    return [Message("ew_multi_node", replica_gpus=figures["serving_replica_gpus"],
                    nodes=figures["serving_replica_gpus"] / figures["serving_gpus_per_node"])]
