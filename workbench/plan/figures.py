"""The figures of a plan, one function per concern, over broadcast inputs.

Each function takes ``x`` (every scenario field as an array of the batch shape, see
:func:`workbench.plan.estimate.estimate`) and ``f``, the figures computed so far, and returns new figures: the
training cluster, the price of a GPU-hour, post-training compute, failures and the stages' wall-clock time,
serving, and what the cost lines need besides (corpus bytes, electricity, operations staff). :func:`plan` runs
them in order; :data:`PUBLIC` names the figures an :class:`~workbench.plan.estimate.Estimate` reports.
"""
from __future__ import annotations

import numpy as np

from ..formulas import (annotation, compute, failures, finetune, memory, mfu, operations, ownership, scaling, serving, storage)
from ..reference import catalog, prices, region_prices
from .scenario import fields
from .scenario_fields import region_key

#: The figures an estimate reports (``Estimate.details`` and its headline), in the order of ``to_dict``.
PUBLIC = (
    "training_flops", "gpu_hours", "wall_days", "n_gpus", "mfu", "active_params", "d_model", "n_layers",
    "peak_flops_per_s", "mfu_prior", "attention_flops_share", "hardware_flops", "hfu", "price_per_gpu_hour",
    "gpu_memory_bytes", "model_state_bytes_per_gpu", "activation_bytes_per_gpu", "memory_bytes_per_gpu",
    "min_gpus_to_fit", "mfu_basis", "layout_fits", "tensor_parallel_used", "pipeline_parallel_used",
    "zero_stage_used", "data_parallel", "micro_batches", "pipeline_bubble", "width_efficiency", "cluster_efficiency",
    "tensor_parallel_overhead", "pipeline_traffic_overhead", "data_parallel_overhead", "global_batch_tokens", "target_days_used", "idle_share",
    "micro_batch_size_used", "global_batch_tokens_used", "mfu_speed_factor", "fit_tensor_parallel", "fit_pipeline_parallel", "fit_zero_stage", "fit_micro_batch_size",
    "fit_min_gpus", "tokens_per_param", "compute_optimal_params", "compute_optimal_tokens", "predicted_loss",
    "interruptions_per_day", "cluster_mtbf_hours", "checkpoint_interval_hours", "checkpoint_write_seconds",
    "checkpoint_bytes", "dataset_bytes", "pretrain_interruptions", "pretrain_days_with_overheads",
    "training_days_total", "sft_days", "preference_days", "evaluation_days", "sft_gpu_hours", "preference_gpu_hours",
    "noisy_label_factor", "spot_wait_days", "cluster_experiment_days", "cluster_terms", "cluster_term_hours",
    "cluster_used_hours",
    "evaluation_gpu_hours", "staff_months", "reward_model_params", "gpu_purchase_usd", "serving_gpus",
    "serving_gpus_peak", "serving_replica_gpus", "serving_batch", "serving_batch_limit", "serving_tpot_ms",
    "serving_ttft_s", "serving_meets_targets", "serving_fits", "serving_min_replica_gpus", "serving_utilisation",
    "serving_gpus_per_node", "serving_kv_bytes_per_token", "serving_weight_bytes", "serving_tokens_per_second_per_gpu",
    "serving_output_tokens_per_second_per_gpu", "serving_prefill_share", "serving_cost_per_month_usd",
    "serving_cost_per_million_tokens_usd", "serving_cost_per_million_input_tokens_usd",
    "serving_cost_per_million_output_tokens_usd", "serving_cost_per_request_usd", "cny_per_usd", "n_gpus_wanted",
    "young_daly_interval_hours", "divergence_probability", "serving_unserved_share", "pfs_throughput_gb_per_s",
    "price_currency", "price_region", "price_source", "hot_storage_usd_per_gb_month", "object_storage_usd_per_gb_month",
    "archive_storage_usd_per_gb_month", "egress_usd_per_gb", "cross_region_usd_per_gb", "corpus_read_usd_per_gb",
)
_CLOUD_POWER = "0: electricity is included in the cloud GPU price (pricing is not self_hosted)"
_CLOUD_OPS = "0: the cloud provider operates the hardware (pricing is not self_hosted)"


def fill(value: np.ndarray, default) -> np.ndarray:
    """``value`` where given, ``default`` where it is NaN (a field left empty)."""
    return np.where(np.isnan(value), default, value)


def plan(x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every figure of the plan (public and internal) for broadcast inputs ``x``."""
    f: dict[str, np.ndarray] = {}
    for step in (training_cluster, gpu_price, storage_and_transfer_prices, post_training, failures_and_stages, serving_point, commitments,
                 line_inputs, derived, headline_of_kind):
        f.update(step(x, f))
    return f


def headline_of_kind(x, f) -> dict:
    """The headline of a plan without pre-training (``plan_kind``): its training FLOPs are nought, its GPU-hours
    and days those of its fine-tuning, preference tuning and evaluation (nought when it only serves)."""
    if f["pretraining"].all():
        return {}
    post = ("sft", "preference", "evaluation")
    return {"training_flops": np.where(f["pretraining"], f["training_flops"], 0.0),
            "gpu_hours": np.where(f["pretraining"], f["gpu_hours"], sum(f["stage_compute"][s] for s in post)),
            "wall_days": np.where(f["pretraining"], f["wall_days"], sum(f["stage_days"][s] for s in post))}


def training_cluster(x, f) -> dict:
    """Architecture, pre-training FLOPs, the MFU and the cluster size (given, or sized to finish in target_days)."""
    active = fill(x["active_params"], x["params"])
    d_model = fill(x["d_model"], compute.derived_d_model(active))
    n_layers = fill(x["n_layers"], compute.derived_n_layers(d_model))
    peak = catalog.peak_flops_per_s(x["gpu"], x["precision"])
    flops = compute.training_flops(active, x["tokens"], x["seq_len"], d_model, n_layers)
    attention = compute.attention_training_flops(x["tokens"], x["seq_len"], d_model, n_layers)
    hardware_flops = flops + compute.recompute_flops(active, x["tokens"], x["seq_len"], d_model, n_layers,
                                                     x["recompute"])
    # The prior is the model-FLOPs MFU of published runs, which recomputed attention (selective recompute, or
    # FlashAttention's backward pass): a plan that recomputes more does more hardware work per model FLOP
    # and runs proportionally slower; one that recomputes nothing, slightly faster. A given MFU is the
    # user's own measurement and already includes their recompute.
    selective_flops = flops + compute.recompute_flops(active, x["tokens"], x["seq_len"], d_model, n_layers, "selective")
    # ... and the prior is fitted against the peak of bf16 (fp16 where there is none): a lower format's larger peak
    # is not a proportionally faster run; it runs its measured end-to-end speed-up faster (data/precision_risks.csv)
    reference_peak = catalog.peak_flops_per_s(x["gpu"], mfu.training_precision(x["gpu"]))
    by_precision = precision_figures(x["precision"])
    precision_factor = by_precision["speedup"] * reference_peak / peak
    speed_factor = selective_flops / hardware_flops * precision_factor
    # the layout's MFU (workbench.formulas.mfu, workbench.formulas.layouts): the best tensor x pipeline x ZeRO layout that fits, on
    # the cluster given or sized to finish in target_days (empty: the wall-clock of published runs of that size)
    batch = fill(x["global_batch_tokens"], mfu.default_global_batch_tokens(flops))
    days = fill(x["target_days"], mfu.typical_days(flops))
    # a plan without pre-training (open weights, serve only) trains on the fewest whole nodes that hold the model:
    # sized as a run with all the time it needs
    pretraining = np.asarray(x["plan_kind"]) == "pretrain"
    sizing_days = np.where(pretraining, days, 1e9)
    inputs = mfu.layout_inputs({**x, "global_batch_tokens": batch}, d_model, n_layers, active, flops / x["tokens"],
                               training_flops=flops)
    largest = float(fields()["n_gpus"].max)
    # the layout's MFU is against the reference peak: its hours take the speed-up, not the peaks' ratio; a typed
    # MFU sizes the cluster at that MFU, and the layout is then chosen on that cluster (for memory and report)
    chosen = mfu.cluster_and_layout(x, inputs, flops, speed_factor * peak / reference_peak, sizing_days, largest,
                                    typed_mfu=x["mfu"] * peak / reference_peak)
    layout_mfu = chosen["mfu"] * speed_factor
    n_gpus = chosen["n_gpus"]
    mfu_used = fill(x["mfu"], layout_mfu)
    # no pre-training run in a plan that starts from open weights or only serves: its hours and FLOPs are nought
    hours = np.where(pretraining, compute.gpu_hours(flops, peak, mfu_used), 0.0)
    return {"active_params": active, "d_model": d_model, "n_layers": n_layers, "peak_flops_per_s": peak,
            "training_flops": flops, "pretraining": pretraining, "attention_flops": attention, "hardware_flops": hardware_flops,
            "gpu_memory_bytes": memory.capacity_bytes(catalog.spec(x["gpu"], "memory_gb").astype(float)),
            "activation_bytes_per_gpu": chosen["activation_bytes_per_gpu"], "min_gpus_to_fit": chosen["min_gpus_to_fit"],
            "n_gpus_wanted": chosen["n_gpus_wanted"], "n_gpus": n_gpus, "mfu_prior": layout_mfu,
            "mfu_speed_factor": speed_factor,
            "mfu_basis": mfu.basis(x["gpu"]), "layout_fits": chosen["fits"],
            "tensor_parallel_used": chosen["tensor_parallel"], "pipeline_parallel_used": chosen["pipeline_parallel"],
            "zero_stage_used": chosen["zero_stage"], "data_parallel": chosen["data_parallel"],
            "micro_batches": chosen["micro_batches"], "pipeline_bubble": 1.0 - chosen["pipeline_efficiency"],
            "width_efficiency": chosen["width_efficiency"], "cluster_efficiency": chosen["cluster_efficiency"],
            "tensor_parallel_overhead": chosen["tensor_parallel_overhead"],
            "data_parallel_overhead": chosen["data_parallel_overhead"], "global_batch_tokens": batch,
            "pipeline_traffic_overhead": chosen["pipeline_traffic_overhead"],
            "target_days_used": days, "by_precision": by_precision, "idle_share": chosen["idle_share"],
            "micro_batch_size_used": chosen["micro_batch_size"], "global_batch_tokens_used": chosen["batch_used_tokens"],
            **{name: chosen[name] for name in ("fit_tensor_parallel", "fit_pipeline_parallel", "fit_zero_stage",
                                                "fit_micro_batch_size", "fit_min_gpus")},
            "mfu": mfu_used, "gpu_hours": hours, "wall_days": compute.wall_days(hours, n_gpus),
            "model_state_bytes_per_gpu": chosen["model_state_bytes_per_gpu"]}


#: The fields priced by region (data/region_prices.csv) when left empty, and their item there.
REGION_PRICED = {"hot_storage_usd_per_gb_month": "hot_storage", "object_storage_usd_per_gb_month": "object_storage",
                 "archive_storage_usd_per_gb_month": "archive_storage", "egress_usd_per_gb": "egress",
                 "cross_region_usd_per_gb": "cross_region"}


def _fill_from_regions(usd, source, todo, provider, origin, item, to, rate) -> None:
    """Where ``todo``, the price of ``item`` billed in ``origin`` (to ``to`` for a transfer) [USD]; in place."""
    if not todo.any():
        return
    for key in {k for k in zip(provider[todo], origin[todo], to[todo])}:
        where = todo & (provider == key[0]) & (origin == key[1]) & (to == key[2])
        quote = region_prices.lookup(key[0], key[1], item, key[2])
        usd[where] = prices.convert(quote.price, quote.currency, "USD", rate[where])
        if quote.currency == "USD":
            source[where] = quote.source
        else:  # one text per distinct rate, not per element: a Monte Carlo batch shares its rate
            texts = {r: f"billed {quote.price:g} {quote.currency} (added to USD amounts at the plan's {r:g} CNY/USD): "
                        f"{quote.source}" for r in np.unique(rate[where])}
            source[where] = [texts[r] for r in rate[where]]


def storage_and_transfer_prices(x, f) -> dict:
    """The step of :func:`plan`: :func:`region_prices_used` in the region the GPUs are billed in."""
    return region_prices_used({**x, "region": f["price_region"]})


def region_prices_used(x) -> dict:
    """Storage and transfer prices [USD per GB-month or per GB] and their sources: the field where given, else the
    price in the plan's provider and region (``data/region_prices.csv``, converted at the plan's rate where billed
    in CNY). A cloud bills transfer where the bytes leave: the checkpoints' copies from the cluster's region to the
    data's region when that is another (else to any other region), and ``corpus_read_usd_per_gb``, the corpus read
    across once, from the data's region to the cluster's (0 when they are the same)."""
    region, data_region = region_key(x["region"]), region_key(x["data_region"])
    provider = np.broadcast_to(np.asarray(x["provider"], dtype=object), region.shape)
    rate = np.broadcast_to(np.asarray(x["cny_per_usd"], dtype=float), region.shape)
    apart = (data_region != "") & (data_region != region)
    none = np.full(region.shape, "", dtype=object)
    out = {}
    for name, item in REGION_PRICED.items():
        given = np.broadcast_to(np.asarray(x[name], dtype=float), region.shape)
        usd = np.array(given, dtype=float)
        source = np.full(region.shape, f"{name} given by the user", dtype=object)
        to = np.where(apart, data_region, none) if item == "cross_region" else none
        _fill_from_regions(usd, source, np.isnan(usd), provider, region, item, to, rate)
        out[name], out[name + "_source"] = usd, source
    typed = np.broadcast_to(np.asarray(x["cross_region_usd_per_gb"], dtype=float), region.shape)
    read = np.where(apart & np.isfinite(typed), typed, 0.0)
    read_source = np.where(apart, "cross_region_usd_per_gb given by the user",
                           "0: the corpus is in the cluster's region (data_region empty or the same)").astype(object)
    _fill_from_regions(read, read_source, apart & np.isnan(typed), provider, data_region, "cross_region", region, rate)
    out["corpus_read_usd_per_gb"], out["corpus_read_usd_per_gb_source"] = read, read_source
    return out


def gpu_price(x, f) -> dict:
    """USD per GPU-hour: given, rented (``data/prices.csv``), or bought and amortised; its source; fixed or elastic."""
    self_hosted = x["pricing"] == "self_hosted"
    price = np.array(x["price_per_gpu_hour"], dtype=float)
    price_source = np.full(price.shape, "price_per_gpu_hour given by the user", dtype=object)
    currency = np.full(price.shape, "USD", dtype=object)  # the currency the GPU-hour is billed in
    region = region_key(x["region"])
    charged_in = region.copy()  # the region the GPUs are billed in: the one chosen, else the provider's cheapest
    rented = np.isnan(price) & ~self_hosted
    if rented.any():
        price[rented], price_source[rented], currency[rented], charged_in[rented] = prices.price_per_gpu_hour(
            x["gpu"][rented], x["pricing"][rented], x["provider"][rented], region[rented], x["cny_per_usd"][rented])
    purchase = fill(x["gpu_purchase_usd"], hardware_price(x["gpu"], x["cny_per_usd"]))
    owned = np.isnan(price) & self_hosted
    amortised = ownership.amortised_usd_per_gpu_hour(purchase, x["server_share"], x["interconnect_share"],
                                                     x["useful_life_years"], x["residual_value_share"])
    main_price = np.where(owned, amortised, price)
    main_source = np.where(owned, "self-hosted: purchase x (1 + server_share + interconnect_share) x "
                                  "(1 - residual_value_share) / (useful_life_years x 8766 h) (Cottier et al. 2024)", price_source)
    modes = stage_modes(x)
    stage_price, stage_source, stage_cost_type = {}, {}, {}
    for stage, mode in modes.items():
        other = mode != x["pricing"]  # a stage bought another way: its mode's rented price
        usd, source = main_price, main_source
        if other.any():  # copies only then: a 100,000-draw Monte Carlo would copy five times for nothing
            usd, source = np.array(main_price, dtype=float), np.array(main_source, dtype=object)
            # one cluster, one region: bought another way where the cluster is billed
            usd[other], rented_source, _, _ = prices.price_per_gpu_hour(x["gpu"][other], mode[other], x["provider"][other],
                                                                     charged_in[other], x["cny_per_usd"][other])
            source[other] = [f"{stage.replace('_', ' ')} on {m}: {s}" for m, s in zip(mode[other], rented_source)]
        stage_price[stage], stage_source[stage] = usd, source
        rented = (mode == "on_demand") | (mode == "spot")
        # one text where the batch agrees (a Monte Carlo's draws share a pricing): the lines compare it once, not
        # 100,000 times
        stage_cost_type[stage] = ("elastic" if rented.all() else "fixed" if not rented.any()
                                  else np.where(rented, "elastic", "fixed"))
    return {"price_per_gpu_hour": main_price, "price_source": main_source, "cost_type": stage_cost_type["pretrain"],
            "price_currency": currency, "price_region": charged_in,
            "stage_mode": modes, "stage_price": stage_price, "stage_price_source": stage_source,
            "stage_cost_type": stage_cost_type, "gpu_purchase_usd": purchase}


#: The stage groups that may be bought another way than ``pricing`` (field: ``same`` or a rented mode).
STAGE_PRICING_FIELDS = {"experiments": "experiment_pricing", "post_training": "post_training_pricing",
                        "serving_base": "serving_pricing", "serving_peak": "serving_peak_pricing"}
#: The price group of each training stage.
PRICE_GROUP = {"pretrain": "pretrain", "sft": "post_training", "preference": "post_training",
               "evaluation": "post_training", "experiments": "experiments"}


def precision_figures(precision) -> dict:
    """Per element of a batch, the training format's row of ``data/precision_risks.csv``: ``speedup`` over the
    reference format, ``divergences_per_trillion_tokens``, ``rollback_share`` and ``fallback_speedup`` (the
    speed-up of the format a diverged run falls back to). Looked up once per distinct format."""
    risks = failures.precision_risk_values()
    precision = np.asarray(precision, dtype=object)
    distinct, back = np.unique(precision.astype(str), return_inverse=True)  # a batch holds a few formats
    back = back.reshape(precision.shape)

    def column(pick):
        return np.array([pick(risks[p]) for p in distinct], dtype=float)[back]

    return {"speedup": column(lambda r: r[3]), "divergences_per_trillion_tokens": column(lambda r: r[0]),
            "rollback_share": column(lambda r: r[1]), "fallback_speedup": column(lambda r: risks[r[2]][3])}


def stage_modes(x) -> dict:
    """The pricing mode of each price group: its field's mode, or ``pricing`` where the field is ``same`` (the
    serving peak follows the serving base, on demand above a reserved or monthly one)."""
    main = np.asarray(x["pricing"], dtype=object)
    modes = {"pretrain": main}
    for stage, name in STAGE_PRICING_FIELDS.items():
        given = np.broadcast_to(np.asarray(x[name], dtype=object), main.shape)
        fallback = modes["serving_base"] if stage == "serving_peak" else main
        if stage == "serving_peak":
            # replicas that run only at the peak commit to nothing: above a reserved base they are rented on
            # demand (at the catalogue's price; a given price stands for every stage)
            reserved = np.isin(fallback, ("reserved_1y", "reserved_3y", "monthly")) & np.isnan(
                np.broadcast_to(np.asarray(x["price_per_gpu_hour"], dtype=float), main.shape))
            if reserved.any():
                # ... where the provider rents the GPU by the hour at all: one that rents it only by the month
                # (a Chinese reseller) rents the peak's replicas so too (the rules refuse autoscaling there)
                gpu, provider = (np.broadcast_to(np.asarray(x[k], dtype=object), main.shape) for k in ("gpu", "provider"))
                hourly = {(g, p): p in prices.providers_for(g, "on_demand")
                          for g, p in {(g, p) for g, p in zip(gpu[reserved], provider[reserved])}}
                reserved &= np.array([hourly.get((g, p), False) for g, p in zip(gpu.ravel(), provider.ravel())],
                                     dtype=bool).reshape(main.shape)
            fallback = np.where(reserved, "on_demand", fallback)
        modes[stage] = np.where(given == "same", fallback, given)
    return modes


def post_training(x, f) -> dict:
    """GPU-hours of SFT, the reward model, rollouts, policy updates and evaluation, on the training cluster."""
    active, peak, mfu_used = f["active_params"], f["peak_flops_per_s"], f["mfu"]
    # preference labels still wrong after rework need more passes for the same signal (a comparison is a binary
    # label: Angluin and Laird's relation); SFT examples are not binary labels and are left as they are
    noise = annotation.noisy_label_factor(annotation.residual_noise_share(x["label_noise_share"],
                                                                          x["annotation_rework_rate"]))
    sft_tokens = x["sft_examples"] * x["sft_tokens_per_example"] * x["sft_epochs"]
    sft_hours = compute.gpu_hours(finetune.sft_flops(active, sft_tokens, x["sft_trainable_fraction"], x["seq_len"],
                                                     f["d_model"], f["n_layers"]), peak, mfu_used)
    rm_params = fill(x["reward_model_params"], active)
    rm_d_model = compute.derived_d_model(rm_params)
    rm_tokens = x["preference_pairs"] * x["preference_tokens_per_pair"] * x["reward_model_epochs"] * noise
    rm_hours = compute.gpu_hours(compute.training_flops(rm_params, rm_tokens, x["seq_len"], rm_d_model,
                                                        compute.derived_n_layers(rm_d_model)), peak, mfu_used)
    rollout_tokens = x["rl_prompts"] * x["rl_samples_per_prompt"] * x["rl_tokens_per_sample"]
    eval_tokens = x["eval_checkpoints"] * x["eval_tokens_per_checkpoint"]
    return {"noisy_label_factor": noise, "sft_gpu_hours": sft_hours, "reward_model_params": rm_params,
            "reward_model_gpu_hours": rm_hours,
            "rollout_gpu_hours": compute.gpu_hours(finetune.forward_flops(active, rollout_tokens), peak, x["rollout_mfu"]),
            "policy_update_gpu_hours": compute.gpu_hours(finetune.policy_update_flops(active, rm_params, rollout_tokens),
                                                         peak, mfu_used),
            "evaluation_gpu_hours": compute.gpu_hours(finetune.forward_flops(active, eval_tokens), peak, mfu_used)}


def failures_and_stages(x, f) -> dict:
    """Interruptions, the checkpoint interval (one for the cluster, applied to every training stage), each
    stage's lost and checkpointing GPU-hours, and the stages' wall-clock days."""
    n_gpus = f["n_gpus"]
    checkpoint_bytes = storage.checkpoint_bytes(x["params"], x["checkpoint_bytes_per_param"])
    def interruptions(mode):
        reclaims = np.where(mode == "spot", x["spot_interruptions_per_node_month"] / failures.DAYS_PER_MONTH, 0.0)
        return failures.cluster_interruptions_per_day(n_gpus, x["gpu_failure_rate_per_day"], n_gpus / x["gpus_per_node"],
                                                      reclaims)

    per_day = interruptions(f["stage_mode"]["pretrain"])
    # post-training on spot is reclaimed too; the checkpoint interval stays the cluster's (pre-training's)
    post_per_day = interruptions(f["stage_mode"]["post_training"])
    mtbf = failures.mtbf_hours(per_day)
    # the file system's throughput is bought (with capacity, or on top of it): the write time follows from it
    hot_bytes = storage.dataset_bytes(x["tokens"], x["bytes_per_token"]) + checkpoint_bytes * x["checkpoints_kept_hot"]
    capacity_gb_per_s = hot_bytes / 2**40 * x["pfs_gb_per_s_per_tib"]
    pfs_gb_per_s, write_hours, interval = failures.checkpoint_throughput(
        checkpoint_bytes, n_gpus * x["checkpoint_write_gb_per_s_per_gpu"], capacity_gb_per_s, mtbf,
        x["checkpoint_stall_share"], x["pfs_throughput_gb_per_s"], x["checkpoint_interval_hours"],
        np.asarray(x["checkpoint_writes"]) == "asynchronous")
    trains = np.asarray(x["plan_kind"]) != "serve_only"  # a plan that only serves has no training stage
    stage_compute = {"pretrain": f["gpu_hours"], "sft": trains * f["sft_gpu_hours"],
                     "preference": trains * (f["reward_model_gpu_hours"] + f["rollout_gpu_hours"]
                                             + f["policy_update_gpu_hours"]),
                     "evaluation": trains * f["evaluation_gpu_hours"]}
    # a failing node is searched for when its logs were sampled away; a spot reclaim has a known cause
    diagnosis_hours = failures.restart_with_diagnosis_hours(0.0, x["log_sampling_ratio"], x["unlogged_diagnosis_minutes"])
    failures_per_day = failures.cluster_interruptions_per_day(n_gpus, x["gpu_failure_rate_per_day"])

    def restart(rate):
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(rate > 0, failures_per_day / np.where(rate > 0, rate, 1.0), 1.0)
        return x["restart_minutes"] / 60.0 + diagnosis_hours * share

    restart_hours = restart(per_day)
    stage_overhead = {stage: failures.overhead(h / n_gpus, n_gpus, per_day if stage == "pretrain" else post_per_day,
                                               interval, write_hours,
                                               restart_hours if stage == "pretrain" else restart(post_per_day))
                      for stage, h in stage_compute.items() if stage != "evaluation"}
    # the expected divergence restarts of the training format, pre-training only (data/precision_risks.csv)
    p = f["by_precision"]
    rate, rollback = p["divergences_per_trillion_tokens"], p["rollback_share"]
    # the rest of the run in the fallback format runs at that format's end-to-end speed (data/precision_risks.csv)
    fallback_hours = f["gpu_hours"] * p["speedup"] / p["fallback_speedup"]
    divergences = rate * np.asarray(x["tokens"], dtype=float) / 1e12
    divergence_probability = failures.divergence_probability(x["tokens"], rate)
    divergence_gpu_hours = failures.expected_divergence_gpu_hours(divergences, f["gpu_hours"], fallback_hours, rollback)
    allowed = np.asarray(x["divergence_allowance"]) == "expected"
    stage_gpu_hours = {stage: h + (stage_overhead[stage]["lost_gpu_hours"] + stage_overhead[stage]["checkpoint_gpu_hours"]
                                   if stage in stage_overhead else 0.0) for stage, h in stage_compute.items()}
    # an allowance for divergence is time too: the expected restart lengthens the run (staff, logs, power)
    stage_gpu_hours["pretrain"] = stage_gpu_hours["pretrain"] + np.where(allowed, divergence_gpu_hours, 0.0)
    stage_days = {stage: h / n_gpus / 24.0 for stage, h in stage_gpu_hours.items()}
    # a run on spot waits for capacity to start and to resume (the plan's own figure): days, and staff paid to wait
    spot_wait_days = np.where((f["stage_mode"]["pretrain"] == "spot") & f["pretraining"], x["spot_capacity_wait_days"], 0.0)
    training_days = sum(stage_days.values()) + spot_wait_days
    return {"checkpoint_bytes": checkpoint_bytes, "spot_wait_days": spot_wait_days, "interruptions_per_day": per_day, "cluster_mtbf_hours": mtbf,
            "restart_hours": restart_hours, "divergence_probability": divergence_probability,
            "divergence_gpu_hours": divergence_gpu_hours, "young_daly_interval_hours":
                failures.young_daly_interval_hours(write_hours, mtbf),
            "checkpoint_write_hours": write_hours, "checkpoint_interval_hours": interval,
            "pfs_throughput_gb_per_s": pfs_gb_per_s, "pfs_capacity_gb_per_s": capacity_gb_per_s,
            "stage_compute": stage_compute, "stage_overhead": stage_overhead, "stage_gpu_hours": stage_gpu_hours,
            "stage_days": stage_days, "training_days_total": training_days,
            "staff_months": fill(x["staff_months"], training_days / operations.DAYS_PER_MONTH),
            "preference_gpu_hours": stage_compute["preference"],
            "pretrain_interruptions": stage_overhead["pretrain"]["interruptions"],
            "pretrain_days_with_overheads": stage_days["pretrain"], "sft_days": stage_days["sft"],
            "preference_days": stage_days["preference"], "evaluation_days": stage_days["evaluation"]}


def serving_point(x, f) -> dict:
    """The replica size and operating point that need the fewest GPUs for the day's traffic, its GPUs and the
    serving GPU-hours and costs per month, token and request."""
    self_hosted = x["pricing"] == "self_hosted"
    # owned GPUs cost the same idle or busy: a self-hosted fleet is sized for the peak whatever the provisioning
    autoscaled = (x["serving_provisioning"] == "autoscaling") & ~self_hosted
    d_model = f["d_model"]
    heads = np.maximum(1.0, np.round(d_model / compute.HEAD_DIM))
    point = serving.plan(
        params=x["params"], active_params=f["active_params"], d_model=d_model, n_layers=f["n_layers"],
        n_kv_heads=fill(x["n_kv_heads"], np.minimum(8.0, heads)), head_dim=compute.HEAD_DIM,
        weight_precision=x["weight_precision"], kv_precision=x["kv_cache_precision"],
        memory_bytes_per_gpu=f["gpu_memory_bytes"], usable_memory_fraction=x["usable_memory_fraction"],
        bandwidth_bytes_per_s_per_gpu=catalog.spec(x["gpu"], "mem_bandwidth_tbs").astype(float) * 1e12,
        peak_flops_per_s_per_gpu=catalog.peak_flops_per_s(x["gpu"], serving_precision(x["gpu"], x["weight_precision"])),
        serving_mfu=x["serving_mfu"], serving_mbu=x["serving_mbu"], input_tokens=x["input_tokens_per_request"],
        output_tokens=x["output_tokens_per_request"], prefix_cache_hit_rate=x["prefix_cache_hit_rate"],
        tpot_target_s=x["tpot_target_ms"] / 1000.0, ttft_target_s=x["ttft_target_s"], max_batch=x["serving_max_batch"],
        gpus_per_node=x["gpus_per_node"], prefill_mode=x["serving_prefill"], replica_gpus=x["serving_tensor_parallel"],
        tokens_per_second_per_gpu=x["serving_tokens_per_second_per_gpu"],
        # replicas for headroom x demand (below 1: capacity short of the traffic, see serving_unserved_share)
        requests_per_day=x["requests_per_day"] * x["serving_headroom"],
        peak_to_average=x["peak_to_average"], min_replicas=x["min_replicas"], autoscaling=autoscaled)
    replica_gpus, seconds = point["replica_gpus"], point["gpu_seconds_per_request"]
    tokens_per_request = x["input_tokens_per_request"] + x["output_tokens_per_request"]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        throughput = np.where(seconds > 0, tokens_per_request / seconds, np.inf)
    peak_replicas = point["replicas_peak"]
    serve_gpus = np.where(autoscaled, point["replicas_running"], peak_replicas) * replica_gpus
    base_gpus = np.where(autoscaled, np.minimum(x["min_replicas"], peak_replicas), peak_replicas) * replica_gpus
    with np.errstate(divide="ignore", invalid="ignore"):
        # the share of the provisioned replicas' capacity the day's requests use: idle capacity is paid for too
        utilisation = np.where(np.isnan(serve_gpus) | np.isnan(seconds), np.nan,
                               np.where(serve_gpus > 0, x["requests_per_day"] / 86400.0 * seconds
                                        / np.where(serve_gpus > 0, serve_gpus, 1.0), 0.0))
    # the always-on base and the autoscaled replicas above it, each bought as its pricing field says
    month_usd = (base_gpus * f["stage_price"]["serving_base"]
                 + (serve_gpus - base_gpus) * f["stage_price"]["serving_peak"]) * serving.HOURS_PER_MONTH
    # capacity of at least the demand serves every request: the daily curve is walked only below it (a Monte Carlo
    # of 100,000 draws would otherwise hold 100,000 x 288 steps)
    short = np.broadcast_to(x["serving_headroom"] < 1.0, np.shape(serve_gpus)) & np.isfinite(serve_gpus)
    unserved = np.zeros(np.shape(serve_gpus))
    if short.any():
        pick = lambda a: np.broadcast_to(np.asarray(a), np.shape(serve_gpus))[short]  # noqa: E731
        unserved[short] = serving.unserved_share(
            pick(x["requests_per_day"]), pick(point["requests_per_second_per_replica"]), pick(x["peak_to_average"]),
            pick(x["min_replicas"]), pick(autoscaled), pick(x["serving_headroom"]))
    served = 1.0 - unserved  # requests beyond the capacity (serving_headroom < 1) are not served, nor billed
    with np.errstate(divide="ignore", invalid="ignore"):
        utilisation = utilisation * served
    month_requests = x["requests_per_day"] * served * serving.DAYS_PER_MONTH
    month_in = month_requests * x["input_tokens_per_request"]
    month_out = month_requests * x["output_tokens_per_request"]
    month_tokens = month_in + month_out
    serving_on = x["serving_months"] > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        per_million = np.where(month_tokens > 0, month_usd / (month_tokens / 1e6), np.nan)
        per_million_in = np.where(month_in > 0, month_usd * point["prefill_share"] / (month_in / 1e6), np.nan)
        per_million_out = np.where(month_out > 0, month_usd * (1 - point["prefill_share"]) / (month_out / 1e6), np.nan)
        per_request = np.where(month_requests > 0, month_usd / month_requests, np.nan)
        output_throughput = np.where(tokens_per_request > 0, np.where(tokens_per_request > 0, throughput, 0.0)
                                     * x["output_tokens_per_request"]
                                     / np.where(tokens_per_request > 0, tokens_per_request, 1.0), 0.0)
    with np.errstate(invalid="ignore"):  # a GPU with no bandwidth on record: NaN GPUs, refused if serving is on
        serve_hours = np.where(serving_on, serve_gpus * serving.HOURS_PER_MONTH * x["serving_months"], 0.0)
        base_hours = np.where(serving_on, base_gpus * serving.HOURS_PER_MONTH * x["serving_months"], 0.0)
    return {"serving_autoscaled": autoscaled, "serving_on": serving_on, "serving_gpu_hours": serve_hours,
            "serving_base_gpu_hours": base_hours, "serving_month_output_tokens": month_out,
            "serving_month_tokens": month_tokens,
            "serving_gpus": serve_gpus, "serving_gpus_peak": peak_replicas * replica_gpus,
            "serving_replica_gpus": replica_gpus, "serving_batch": point["batch"],
            "serving_batch_limit": point["batch_limit"], "serving_tpot_ms": point["tpot_s"] * 1000.0,
            "serving_ttft_s": point["ttft_s"], "serving_meets_targets": point["meets_targets"],
            "serving_fits": point["fits"], "serving_min_replica_gpus": point["min_replica_gpus"],
            "serving_utilisation": utilisation, "serving_gpus_per_node": x["gpus_per_node"],
            "serving_unserved_share": np.where(np.isnan(serve_gpus), np.nan, unserved),
            "serving_kv_bytes_per_token": point["kv_bytes_per_token"], "serving_weight_bytes": point["weight_bytes"],
            "serving_tokens_per_second_per_gpu": throughput, "serving_output_tokens_per_second_per_gpu": output_throughput,
            "serving_prefill_share": point["prefill_share"], "serving_cost_per_month_usd": month_usd,
            "serving_cost_per_million_tokens_usd": per_million,
            "serving_cost_per_million_input_tokens_usd": per_million_in,
            "serving_cost_per_million_output_tokens_usd": per_million_out, "serving_cost_per_request_usd": per_request}


#: The term each way of buying commits to [h]: a reservation's years, a monthly rental's month (whole months are
#: billed); owned GPUs' useful life (``useful_life_years``).
RESERVED_TERM_HOURS = {"reserved_1y": ownership.HOURS_PER_YEAR, "reserved_3y": 3 * ownership.HOURS_PER_YEAR,
                       "monthly": prices.HOURS_PER_MONTH}


def commitment_term_hours(mode, useful_life_years) -> np.ndarray:
    """Hours a way of buying commits to: a reservation's term, a monthly rental's month, owned hardware's useful
    life; NaN for on-demand and spot, which commit to nothing [h]."""
    mode = np.asarray(mode, dtype=object)
    return np.select([mode == "reserved_1y", mode == "reserved_3y", mode == "monthly", mode == "self_hosted"],
                     [RESERVED_TERM_HOURS["reserved_1y"], RESERVED_TERM_HOURS["reserved_3y"],
                      RESERVED_TERM_HOURS["monthly"], ownership.life_hours(useful_life_years)], np.nan)


def idle_committed_gpu_hours(gpus, used_hours, term_hours, other_use_share) -> np.ndarray:
    """GPU-hours a commitment pays for and the plan leaves idle: whole terms of ``gpus`` less the hours used,
    less the share other work absorbs [GPU-h]. 0 where nothing is committed (``term_hours`` NaN) or nothing used."""
    used = np.asarray(used_hours, dtype=float)
    term = np.asarray(term_hours, dtype=float)
    committed = np.isfinite(term) & (used > 0)
    terms = np.nan_to_num(whole_terms(used, term))
    idle = np.where(committed, np.asarray(gpus, dtype=float) * np.maximum(terms * term - used, 0.0), 0.0)
    return idle * (1.0 - np.asarray(other_use_share, dtype=float))


def commitments(x, f) -> dict:
    """GPU-hours of each commitment the plan pays for and leaves idle [GPU-h]: a reservation is paid for its whole
    term, a monthly rental for whole months, owned GPUs depreciate over their useful life, busy or idle. Groups bought together share one
    commitment: the training cluster (pre-training, and post-training and experiments when bought the same way),
    post-training or experiments bought another way, and the serving base. Other work may absorb a share of the
    idle hours (``commitment_other_use_share``)."""
    modes, n_gpus, share = f["stage_mode"], f["n_gpus"], x["commitment_other_use_share"]
    days = f["stage_days"]
    post_hours = (days["sft"] + days["preference"] + days["evaluation"]) * 24.0
    experiment_hours = f["gpu_hours"] * (x["experiment_fraction"] + x["ablation_runs"] * x["ablation_run_fraction"]) / n_gpus
    cluster = modes["pretrain"]
    post_same, experiments_same = modes["post_training"] == cluster, modes["experiments"] == cluster
    cluster_hours = days["pretrain"] * 24.0 + np.where(post_same, post_hours, 0.0) + np.where(experiments_same,
                                                                                               experiment_hours, 0.0)
    life = x["useful_life_years"]
    serving_hours = np.where(f["serving_on"], x["serving_months"] * serving.HOURS_PER_MONTH, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        base_gpus = np.where(serving_hours > 0, f["serving_base_gpu_hours"] / np.where(serving_hours > 0, serving_hours,
                                                                                        1.0), 0.0)
    # post-training and experiments bought the same other way share one commitment, one after the other
    together = (modes["post_training"] == modes["experiments"]) & ~post_same & ~experiments_same
    post_used = post_hours + np.where(together, experiment_hours, 0.0)
    return {"committed_used_hours": {  # wall-clock hours each commitment is used (the boundary warnings read them)
                "pretrain": cluster_hours, "post_training": np.where(post_same, 0.0, post_used),
                "experiments": np.where(experiments_same | together, 0.0, experiment_hours),
                "serving_base": serving_hours},
            "committed_gpus": {"pretrain": n_gpus, "post_training": n_gpus, "experiments": n_gpus,
                               "serving_base": np.nan_to_num(base_gpus)},
            "idle_committed_gpu_hours": {
        "pretrain": idle_committed_gpu_hours(n_gpus, cluster_hours, commitment_term_hours(cluster, life), share),
        "post_training": np.where(post_same, 0.0, idle_committed_gpu_hours(
            n_gpus, post_hours + np.where(together, experiment_hours, 0.0),
            commitment_term_hours(modes["post_training"], life), share)),
        "experiments": np.where(experiments_same | together, 0.0, idle_committed_gpu_hours(
            n_gpus, experiment_hours, commitment_term_hours(modes["experiments"], life), share)),
        "serving_base": idle_committed_gpu_hours(np.nan_to_num(base_gpus), serving_hours,
                                                 commitment_term_hours(modes["serving_base"], life), share)},
            # the days experiments hold a committed cluster before the run (the programme's timeline places them so)
            "cluster_experiment_days": np.where(np.isfinite(commitment_term_hours(cluster, life)) & experiments_same,
                                                experiment_hours / 24.0, 0.0),
            # the cluster's commitment as it is paid: its term [h] and the whole terms the plan holds it for
            "cluster_term_hours": commitment_term_hours(cluster, life), "cluster_used_hours": cluster_hours,
            "cluster_terms": whole_terms(cluster_hours, commitment_term_hours(cluster, life))}


def whole_terms(used_hours, term_hours) -> np.ndarray:
    """Whole terms a use of ``used_hours`` (wall-clock) holds a commitment of ``term_hours`` for; NaN where nothing is
    committed (``term_hours`` NaN), 0 where nothing is used."""
    used, term = np.asarray(used_hours, dtype=float), np.asarray(term_hours, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isfinite(term), np.where(used > 0, np.ceil(used / term - 1e-9), 0.0), np.nan)


def line_inputs(x, f) -> dict:
    """What the cost lines need besides: corpus bytes, the run's months, electricity per GPU-hour and its price,
    operations staff and the host's share of the GPU price, each with its source."""
    self_hosted = x["pricing"] == "self_hosted"
    tdp_kw = catalog.spec(x["gpu"], "tdp_w").astype(float) / 1000.0
    # electricity is metered only for owned hardware (a cloud price includes it); accelerators without a
    # published TDP are refused for self_hosted pricing by the scenario, so no NaN reaches a line
    kwh = np.where(self_hosted, ownership.energy_kwh(1.0, np.where(self_hosted, tdp_kw, 0.0) * 1000.0,
                                                     x["server_power_factor"], x["power_utilisation"], x["pue"]), 0.0)
    return {"dataset_bytes": storage.dataset_bytes(x["tokens"], x["bytes_per_token"]),
            "run_months": f["stage_days"]["pretrain"] / operations.DAYS_PER_MONTH, "kwh_per_gpu_hour": kwh,
            "power_price": np.where(self_hosted, x["usd_per_kwh"], 0.0),
            "power_source": np.where(self_hosted, "TDP x server_power_factor x power_utilisation x PUE "
                                                  "(Cottier et al. 2024)", _CLOUD_POWER),
            # owned servers rent data-centre space per kW of their load (TDP x server factor), busy or idle
            "space_kw_per_gpu": np.where(self_hosted, tdp_kw * x["server_power_factor"], 0.0),
            "space_source": np.where(self_hosted, "GPUs x TDP x server_power_factor x colocation_usd_per_kw_month "
                                                  "(CBRE H2 2024)", "0: the cloud price includes the data centre "
                                                                    "(pricing is not self_hosted)"),
            "ops_fte": np.where(self_hosted, f["n_gpus"] / 1000.0 * x["ops_fte_per_1000_gpus"], 0.0),
            "ops_source": np.where(self_hosted, "ops_fte_per_1000_gpus x n_gpus / 1000 x stage months", _CLOUD_OPS),
            "host_price": f["price_per_gpu_hour"] * x["host_overhead_fraction"],
            "host_source": np.where(x["host_overhead_fraction"] > 0, "host_overhead_fraction x GPU price",
                                    "0: the GPU price includes the host CPU, RAM and disk (host_overhead_fraction = 0)")}


def derived(x, f) -> dict:
    """Ratios and scaling-law figures reported beside the plan."""
    flops, mfu_used = f["training_flops"], f["mfu"]
    n_opt, d_opt, loss = scaling_figures(f["active_params"], x["tokens"], x["scaling_law"])
    return {"attention_flops_share": f["attention_flops"] / flops, "hfu": mfu_used * f["hardware_flops"] / flops,
            "memory_bytes_per_gpu": f["model_state_bytes_per_gpu"] + f["activation_bytes_per_gpu"],
            "tokens_per_param": scaling.tokens_per_param(f["active_params"], x["tokens"]),
            "compute_optimal_params": n_opt, "compute_optimal_tokens": d_opt, "predicted_loss": loss,
            "checkpoint_write_seconds": f["checkpoint_write_hours"] * 3600.0, "cny_per_usd": x["cny_per_usd"]}


def scaling_figures(active, tokens, law):
    """(compute-optimal N, compute-optimal D, predicted loss) under each scenario's own scaling law."""
    active, tokens, law = np.broadcast_arrays(np.asarray(active, float), np.asarray(tokens, float), law)
    n_opt, d_opt, loss = (np.empty(active.shape) for _ in range(3))
    for name in set(np.ravel(law)):
        where = law == name
        n_opt[where], d_opt[where] = scaling.compute_optimal(6.0 * active[where] * tokens[where], name)
        loss[where] = scaling.loss(active[where], tokens[where], name)
    return n_opt, d_opt, loss


def serving_precision(gpu, weight_precision):
    """Compute format of serving: fp8 weights run fp8 matmuls where the GPU has them, everything else bf16 (fp16
    where there is no bf16)."""
    fp8 = (np.asarray(weight_precision, dtype=object) == "fp8") & ~np.isnan(catalog.peak_flops_per_s(gpu, "fp8"))
    return np.where(fp8, "fp8", mfu.training_precision(gpu))


def hardware_price(gpu: np.ndarray, cny_per_usd) -> np.ndarray:
    """Purchase price per GPU [USD] from ``data/hardware_prices.csv``, a price in CNY converted at the plan's
    ``cny_per_usd`` (NaN where none is on record)."""
    table = ownership.hardware_prices()
    price = catalog.map_ids(gpu, lambda g: table.get(g, (np.nan, "USD"))[0])
    in_cny = catalog.map_ids(gpu, lambda g: float(table.get(g, (np.nan, "USD"))[1] == "CNY")).astype(bool)
    return np.where(in_cny, price / np.asarray(cny_per_usd, dtype=float), price)
