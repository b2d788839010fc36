"""Rules between a scenario's fields: batch lengths, the model's shape (pipeline stages and KV heads within its
layers and heads), parallel layouts, prices on record for the GPU and pricing mode, self-hosted power, serving.
"""
from __future__ import annotations

import datetime
import math
import re

import numpy as np

from ..reference import catalog, prices, region_prices
from ..formulas import compute, ownership
from ..reference.i18n import choice_label
from .scenario_fields import ScenarioError, fields, region_key


def model_shape(v: dict) -> tuple[np.ndarray, np.ndarray]:
    """(layers, attention heads) of the model the values describe: given, or derived from the parameter count
    as estimate() derives them [-]."""
    active = np.asarray(v["params"] if v.get("active_params") is None else v["active_params"], dtype=float)
    d_model = compute.derived_d_model(active) if v.get("d_model") is None else np.asarray(v["d_model"], dtype=float)
    layers = compute.derived_n_layers(d_model) if v.get("n_layers") is None else np.asarray(v["n_layers"], dtype=float)
    return layers, np.maximum(1.0, np.round(d_model / compute.HEAD_DIM))


def bounded_by_shape(values: dict, changes: dict) -> dict:
    """``changes`` plus the pipeline stages and KV heads of ``values`` brought within the new model's shape:
    for sweeps over model size, where a layout that fits one size cannot hold for a much smaller one."""
    merged = {**values, **changes}
    layers, heads = model_shape(merged)
    out = dict(changes)
    stages = np.asarray(np.nan if merged.get("pipeline_parallel") is None else merged["pipeline_parallel"], dtype=float)
    if np.any(stages > layers):  # an empty layout is searched within the model's shape
        out["pipeline_parallel"] = np.minimum(stages, layers)
    if merged.get("n_kv_heads") is not None and np.any(np.asarray(merged["n_kv_heads"], dtype=float) > heads):
        out["n_kv_heads"] = np.minimum(np.asarray(merged["n_kv_heads"], dtype=float), heads)
    return out


def _check_start_date(value):
    """A start date is a calendar day, YYYY-MM-DD, from 2000 to 2099 (empty: no date)."""
    if isinstance(value, np.ndarray):  # a batch: each date checked
        for item in np.ravel(value):
            _check_start_date(item)
        return
    if value in (None, ""):
        return
    try:
        day = datetime.date.fromisoformat(str(value))
        if not (2000 <= day.year <= 2099 and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", str(value))):
            raise ValueError
    except ValueError:
        raise ScenarioError("start_date", value, "is not a calendar date", "YYYY-MM-DD from 2000-01-01 to 2099-12-31, "
                            "or empty", "2000-01-01 到 2099-12-31 之间的 YYYY-MM-DD，或留空") from None


def _check_shape(v: dict):
    """Fields bounded by the model's shape (given, or derived from the parameter count as estimate() does)."""
    layers, heads = model_shape(v)
    if v["pipeline_parallel"] is not None and np.any(np.asarray(v["pipeline_parallel"]) > layers):
        bad = _first(np.asarray(v["pipeline_parallel"]) > layers, v["pipeline_parallel"], layers)
        raise ScenarioError("pipeline_parallel", bad[0], f"is more pipeline stages than the model's {bad[1]:,.0f} layers",
                            "1 to the number of layers (n_layers)", "1 到模型层数（n_layers）")
    if v["n_kv_heads"] is not None and np.any(np.asarray(v["n_kv_heads"]) > heads):
        bad = _first(np.asarray(v["n_kv_heads"]) > heads, v["n_kv_heads"], heads)
        raise ScenarioError("n_kv_heads", bad[0], f"is more than the model's {bad[1]:,.0f} attention heads "
                            f"(d_model / {compute.HEAD_DIM})", "1 to the number of attention heads", "1 到注意力头数")


def no_bandwidth_error(gpu: str) -> ScenarioError:
    """Serving priced on an accelerator whose bandwidth the roofline needs and the catalog lacks."""
    return ScenarioError("serving_tokens_per_second_per_gpu", None,
                         f"{gpu} has no memory bandwidth in the catalog for the serving roofline",
                         "a throughput per GPU for this accelerator, or a GPU with a published bandwidth",
                         "为该加速器填写单卡吞吐，或选择有公开带宽数据的 GPU")


#: The least positive tokens per request a plan may state (0 is allowed: no prompt, or no answer).
MIN_TOKENS_PER_REQUEST = 1e-6


def _check_combination(v: dict):
    """Rules that involve more than one field."""
    lengths = {name: value.size for name, value in v.items() if isinstance(value, np.ndarray)}
    if len(set(lengths.values())) > 1:
        first = next(iter(lengths))
        odd = next(name for name, size in lengths.items() if size != lengths[first])
        raise ScenarioError(odd, v[odd].tolist()[:5], f"has {lengths[odd]} values but {first} has {lengths[first]}",
                            "arrays of one length in a batch")
    if v["active_params"] is not None and np.any(np.asarray(v["active_params"]) > np.asarray(v["params"])):
        bad = _first(np.asarray(v["active_params"]) > np.asarray(v["params"]), v["active_params"], v["params"])
        raise ScenarioError("active_params", bad[0], f"exceeds params={bad[1]:g}", "at most the total parameter count",
                            "不超过总参数量")
    _check_shape(v)
    _check_start_date(v.get("start_date"))
    for name in ("input_tokens_per_request", "output_tokens_per_request"):
        # a millionth of a token per request is no traffic to plan for, and the roofline's times underflow below it
        tokens = np.asarray(v[name], dtype=float)
        tiny = (tokens > 0) & (tokens < MIN_TOKENS_PER_REQUEST)
        if tiny.any():
            raise ScenarioError(name, float(tokens[tiny].ravel()[0]) if tokens.ndim else float(tokens),
                                "is a vanishing fraction of a token", f"0, or {MIN_TOKENS_PER_REQUEST:g} to 1e+07 tokens",
                                f"0，或 {MIN_TOKENS_PER_REQUEST:g} 至 1e+07 个 token")
    # an empty tensor or pipeline size is searched (1 at least)
    group = (np.asarray(1 if v["tensor_parallel"] is None else v["tensor_parallel"])
             * np.asarray(1 if v["pipeline_parallel"] is None else v["pipeline_parallel"]))
    if v["n_gpus"] is not None and np.any(np.asarray(v["n_gpus"]) < group):
        bad = _first(np.asarray(v["n_gpus"]) < group, v["n_gpus"], group)
        raise ScenarioError("n_gpus", bad[0], f"is below tensor_parallel x pipeline_parallel={bad[1]:g}",
                            "at least tensor_parallel x pipeline_parallel GPUs", "不少于张量并行 × 流水线并行")
    gpu, precision = np.broadcast_arrays(np.asarray(v["gpu"], dtype=object), np.asarray(v["precision"], dtype=object))
    for g, p in {(g, p) for g, p in zip(gpu.ravel(), precision.ravel())}:
        if math.isnan(catalog.peak_flops_per_s(g, p)):
            have = [q for q in catalog.PRECISIONS if not math.isnan(catalog.peak_flops_per_s(g, q))]
            if not have:
                raise ScenarioError("gpu", g, "the catalog has no FLOPS figure for this accelerator",
                                    "a GPU with a published peak (see `workbench gpus`)")
            raise ScenarioError("precision", p, f"{g} has no {p} peak in the catalog", ", ".join(have))
    if v["serving_tokens_per_second_per_gpu"] is None:
        served, months = np.broadcast_arrays(gpu, np.asarray(v["serving_months"], dtype=float))
        serving_gpus = set(np.ravel(served[months > 0]))
        for g in serving_gpus:
            if math.isnan(catalog.spec(g, "mem_bandwidth_tbs")):
                raise no_bandwidth_error(g)
    _check_regions(v)
    gpu, mode, provider, region = np.broadcast_arrays(gpu, np.asarray(v["pricing"], dtype=object),
                                                      np.asarray(v["provider"], dtype=object),
                                                      region_key(v["region"]))
    for key in {tuple(k) for k in zip(gpu.ravel(), mode.ravel(), provider.ravel(), region.ravel())}:
        if key[1] == "self_hosted":
            # a given GPU-hour price replaces the amortised purchase price, which is then not needed
            if (v["gpu_purchase_usd"] is None and v["price_per_gpu_hour"] is None
                    and key[0] not in ownership.hardware_prices()):
                raise ScenarioError("gpu_purchase_usd", None, f"no purchase price on record for {key[0]} "
                                    "(data/hardware_prices.csv); give one for self_hosted pricing",
                                    fields()["gpu_purchase_usd"].allowed(), fields()["gpu_purchase_usd"].allowed("zh"))
            if math.isnan(catalog.spec(key[0], "tdp_w")):
                raise ScenarioError("pricing", "self_hosted", f"{key[0]} has no published TDP for the power cost",
                                    "on_demand, reserved_1y, reserved_3y, spot for this GPU",
                                    "该 GPU 可用 on_demand、reserved_1y、reserved_3y、spot")
        elif v["price_per_gpu_hour"] is None:
            try:
                prices.lookup(*key)
            except prices.PriceNotFoundError as error:
                if key[3] and _priced(key[0], key[1], key[2]):  # the provider sells it, elsewhere
                    where = prices.regions_for(key[0], key[1], key[2])
                    raise ScenarioError("region", key[3], str(error), ", ".join(["empty", *where]),
                                        "、".join(["留空", *where])) from None
                if key[3] and key[2] == prices.MEDIAN:
                    raise ScenarioError("region", key[3], str(error), "empty, or a provider that sells in it",
                                        "留空；或选择在该地域销售的供应商") from None
                modes = prices.modes_for(key[0], key[2]) if key[2] != prices.MEDIAN else []
                if modes and "on_demand" not in modes:
                    # the provider rents the GPU only another way (a reseller renting it only by the month): the way
                    # of buying is what to change; a provider renting by the hour too lists the other providers
                    raise ScenarioError("pricing", key[1], f"{key[2]} rents {key[0]} only {', '.join(modes)}, "
                                        f"not {key[1]}", ", ".join(modes),
                                        "、".join(choice_label("pricing", m, "zh") for m in modes)) from None
                offered = prices.providers_for(key[0], key[1])
                raise ScenarioError("provider", key[2], str(error),
                                    ", ".join(offered) if offered else "price_per_gpu_hour (no provider on record)",
                                    "、".join(choice_label("provider", p, "zh") for p in offered) if offered
                                    else "填写每 GPU 小时价格（没有供应商记录）") from None

    _check_stage_pricing(v, gpu)
    _check_peak_replicas(v, gpu)


#: Fields that buy a stage another way than ``pricing`` (see figures.STAGE_PRICING_FIELDS).
STAGE_PRICING = ("experiment_pricing", "post_training_pricing", "serving_pricing", "serving_peak_pricing")


def _check_stage_pricing(v: dict, gpu):
    """A stage bought another way is rented: it needs a cloud cluster's pricing and a price on record."""
    main = np.asarray(v["pricing"], dtype=object)
    for name in STAGE_PRICING:
        stage_mode, main_mode, sku, provider, region = np.broadcast_arrays(
            np.asarray(v[name], dtype=object), main, gpu, np.asarray(v["provider"], dtype=object),
            region_key(v["region"]))
        other = stage_mode != "same"
        if (other & (main_mode == "self_hosted")).any():
            raise ScenarioError(name, _first_value(stage_mode, other & (main_mode == "self_hosted")),
                                "is not same while pricing is self_hosted (owned GPUs run every stage)",
                                "same, or a cloud pricing mode for the cluster",
                                "same；或将集群计费方式设为云上模式")
        typed = v["price_per_gpu_hour"] is not None
        for key in {tuple(k) for k in zip(sku[other].ravel(), stage_mode[other].ravel(), provider[other].ravel(),
                                          region[other].ravel(), main_mode[other].ravel())}:
            # one cluster, one region: a stage bought another way is bought where the cluster is
            key = (*key[:3], charged_region(key[0], key[4], key[2], key[3], typed))
            if not _priced(*key):
                offered = [m for m in fields()[name].choices if m != "same" and _priced(key[0], m, key[2], key[3])]
                at = f" in {key[3]}" if key[3] else ""
                raise ScenarioError(name, key[1], f"has no {key[1]} price on record for {key[0]} from provider "
                                    f"{key[2]}{at} (data/prices.csv)", ", ".join(["same", *offered]),
                                    "、".join(choice_label(name, m, "zh") for m in ["same", *offered]))


def _check_peak_replicas(v: dict, gpu):
    """Autoscaled replicas above a committed serving base are rented by the hour: a provider that rents the GPU
    only by the month would rent them for whole months, which autoscaling does not save."""
    if v["price_per_gpu_hour"] is not None:
        return
    columns = np.broadcast_arrays(gpu, *(np.asarray(v[k], dtype=object) for k in (
        "provider", "pricing", "serving_pricing", "serving_peak_pricing", "serving_provisioning")),
        np.asarray(v["serving_months"], dtype=float))
    for sku, provider, main, base, peak, provisioning, months in {tuple(k) for k in zip(*(c.ravel() for c in columns))}:
        base = main if base == "same" else base
        # checked whether or not the plan serves: `workbench serve` prices the serving alone
        if (provisioning == "autoscaling" and peak == "same" and base in COMMITTED_RENTALS
                and provider != prices.MEDIAN and provider not in prices.providers_for(sku, "on_demand")):
            raise ScenarioError("serving_provisioning", provisioning,
                                f"{provider} rents {sku} only {base}: the replicas added at the "
                                "peak would be rented for whole terms, which autoscaling does not save",
                                "fixed, or a provider that rents the GPU by the hour",
                                "固定；或选择按小时出租该 GPU 的供应商")


#: Rented ways of buying that commit to a term (the serving peak above them is rented by the hour).
COMMITTED_RENTALS = ("reserved_1y", "reserved_3y", "monthly")


def _check_regions(v: dict):
    """A region, and the data's region, are regions of the plan's provider (data/regions.csv): a named provider."""
    provider = np.asarray(v["provider"], dtype=object)
    for name in ("region", "data_region"):
        value, who = np.broadcast_arrays(region_key(v[name]), provider)
        given = value != ""
        for region, owner in {(r, p) for r, p in zip(value[given].ravel(), who[given].ravel())}:
            if owner == prices.MEDIAN:
                problem = ("needs a provider: the typical price is no region's" if name == "region" else
                           "needs a provider: transfer between regions is priced by the provider's pair of regions")
                raise ScenarioError(name, region, problem, "empty, or choose a provider", "留空；或选择供应商")
            theirs = region_prices.provider_regions(owner)
            if region not in theirs:
                raise ScenarioError(name, region, f"is not a region of {owner} on record (data/regions.csv)",
                                    ", ".join(["empty", *theirs]), "、".join(["留空", *theirs]))


def charged_region(sku, mode, provider, region, typed: bool) -> str:
    """The region a plan's GPUs are billed in: the one named, else the provider's cheapest for the GPU on its
    pricing mode (empty for a typed or owned price, and for the typical price)."""
    if region or typed or mode == "self_hosted" or provider == prices.MEDIAN:
        return region
    return prices.lookup(sku, mode, provider).region


def _priced(sku, mode, provider, region="") -> bool:
    try:
        prices.lookup(sku, mode, provider, region)
    except prices.PriceNotFoundError:
        return False
    return True


def _first_value(values, mask):
    return np.ravel(values)[int(np.argmax(np.ravel(mask)))]


def _first(mask, values, limits) -> tuple[float, float]:
    """(value, limit) at the first element where ``mask`` holds: messages name a number, not an array."""
    mask, values, limits = np.broadcast_arrays(mask, np.asarray(values, dtype=float), np.asarray(limits, dtype=float))
    i = int(np.argmax(mask)) if mask.ndim else 0
    value, limit = float(np.ravel(values)[i]), float(np.ravel(limits)[i])
    return (int(value) if value.is_integer() else value), limit
