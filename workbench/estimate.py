"""From a Scenario to figures and a tidy table of cost lines, in one numpy pass.

``estimate(scenario)`` broadcasts every field to a common shape (a scalar scenario is shape ``()``, a
batch is shape ``(n,)``), runs the formulas of the ``compute``, ``memory``, ``mfu``, ``scaling`` and
``prices`` modules on whole arrays, and only then builds the DataFrame of lines.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import annotation, catalog, compute, failures, finetune, memory, mfu, operations, ownership, prices, scaling, serving, storage
from .scenario import Scenario, ScenarioError, fields, no_bandwidth_error

LINE_COLUMNS = ("scenario", "stage", "category", "item", "quantity", "unit", "unit_cost_usd", "cost_usd",
                "cost_type", "formula", "source")
HEADLINE = ("training_flops", "gpu_hours", "wall_days", "n_gpus", "mfu", "total_cost_usd")


@dataclass
class Line:
    """One cost line, its numbers as arrays over the batch."""

    stage: str
    category: str
    item: str
    quantity: np.ndarray
    unit: str
    unit_cost_usd: np.ndarray
    cost_type: str  # fixed | elastic
    formula: str
    source: object  # str or object array of str

    @property
    def cost_usd(self) -> np.ndarray:
        return self.quantity * self.unit_cost_usd


@dataclass
class Estimate:
    """Result of :func:`estimate`. Headline figures are floats for a scenario, arrays for a batch."""

    scenario: Scenario
    training_flops: object
    gpu_hours: object
    wall_days: object
    n_gpus: object
    mfu: object
    total_cost_usd: object
    lines: pd.DataFrame
    details: dict = field(default_factory=dict)
    defaults_used: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)

    def totals(self, by: str = "stage") -> pd.Series | pd.DataFrame:
        """Total cost [USD] by ``stage``, ``category``, ``cost_type`` or ``group`` (pretrain / finetune /
        inference); for a batch, one column per scenario."""
        order = {"stage": STAGES, "category": CATEGORIES, "group": ("pretrain", "finetune", "inference"),
                 "cost_type": ("fixed", "elastic")}[by]
        keys = self.lines["stage"].map(STAGE_GROUPS) if by == "group" else self.lines[by]
        codes = pd.Index(order).get_indexer(keys)  # a summed table by hand: pivot_table took ~3 ms a call
        scenarios = self.lines["scenario"].to_numpy()
        known = codes >= 0
        table = np.zeros((len(order), int(scenarios.max(initial=-1)) + 1 if len(scenarios) else 1))
        np.add.at(table, (codes[known], scenarios[known]), self.lines["cost_usd"].to_numpy()[known])
        if self.scenario.batch_size is None:
            return pd.Series(table[:, 0], index=pd.Index(order, name=by), name="cost_usd")
        return pd.DataFrame(table, index=pd.Index(order, name=by), columns=pd.Index(range(table.shape[1]), name="scenario"))

    def to_dict(self) -> dict:
        """Plain-Python form (what ``workbench estimate --json`` prints): always valid JSON.

        A figure that does not exist for this scenario (no purchase price on record, no traffic to price per
        token, no failures to space checkpoints by, a model that fits at no GPU count) is ``None`` (JSON
        ``null``), and ``unavailable`` maps its path (``details.cluster_mtbf_hours``) to the reason.
        """
        def plain(x):
            return x.tolist() if isinstance(x, np.ndarray) else x
        out = {name: plain(getattr(self, name)) for name in HEADLINE}
        out["total_cost_cny"] = plain(self.total_cost_usd * self.details["cny_per_usd"])
        if self.scenario.batch_size is None:
            for by in ("stage", "group", "category", "cost_type"):
                out[f"totals_by_{by}"] = {k: float(v) for k, v in self.totals(by).items()}
            from . import budget  # budget builds on Estimate
            out["budget_alerts"] = budget.crossings(self).to_dict("records")
        out["details"] = {k: plain(v) for k, v in self.details.items()}
        out["lines"] = self.lines.to_dict("records")
        out["defaults_used"] = self.defaults_used
        out["warnings"] = list(self.warnings)
        out["scenario"] = self.scenario.to_dict()
        unavailable: dict[str, str] = {}
        out = _json_safe(out, "", unavailable, self.scenario, self._reasons())
        out["unavailable"] = unavailable
        return out

    def _reasons(self) -> dict:
        """:data:`UNAVAILABLE_REASONS`, with every serving figure explained by the replica when none holds the
        model (or the GPU has no bandwidth on record)."""
        reasons = dict(UNAVAILABLE_REASONS)
        if self.scenario.batch_size is None and not np.isfinite(self.details["serving_tpot_ms"]):
            reasons.update({name: _NO_REPLICA for name in SERVING_FIGURES})
        return reasons

    def serving_summary(self) -> dict:
        """The serving figures alone (what ``workbench serve --json`` prints), JSON-safe like :meth:`to_dict`.

        Per-token and per-request costs are GPU cost at the provisioned replicas (idle capacity of the traffic
        shape included); egress and request logs are separate lines of ``estimate``.
        """
        if self.scenario.batch_size is not None:
            raise ScenarioError("scenario", f"a batch of {self.scenario.batch_size}", "has no single serving summary",
                                "a single scenario")
        if (self.scenario.serving_tokens_per_second_per_gpu is None
                and not np.isfinite(catalog.spec(self.scenario.gpu, "mem_bandwidth_tbs"))):
            raise no_bandwidth_error(self.scenario.gpu)  # as for a plan with serving months: no figure would mean anything
        out = {name: self.details[name] for name in SERVING_FIGURES}
        out = {k: (v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v) for k, v in out.items()}
        out["monthly_lines"] = {
            line.item: float(line.cost_usd / max(self.scenario.serving_months, 1e-300))
            for line in self.lines[self.lines["stage"] == "inference"].itertuples()
            if self.scenario.serving_months > 0}
        out["warnings"] = [w for w in self.warnings if w.startswith("serving")]
        out["warnings"] += [w for w in _multi_node_warning(self.details) if w not in out["warnings"]]
        out["scenario"] = self.scenario.to_dict()
        unavailable: dict[str, str] = {}
        out = _json_safe(out, "", unavailable, self.scenario, self._reasons())
        out["unavailable"] = unavailable
        return out


_NO_REPLICA = ("the model does not fit in a serving replica (see warnings), or the GPU has no memory bandwidth on "
               "record for the serving roofline")
#: Figures of :meth:`Estimate.serving_summary`, in the order ``workbench serve`` prints them.
SERVING_FIGURES = (
    "serving_cost_per_million_input_tokens_usd", "serving_cost_per_million_output_tokens_usd",
    "serving_cost_per_million_tokens_usd", "serving_cost_per_request_usd", "serving_cost_per_month_usd",
    "serving_tokens_per_second_per_gpu", "serving_output_tokens_per_second_per_gpu", "serving_replica_gpus",
    "serving_batch", "serving_batch_limit", "serving_tpot_ms", "serving_ttft_s", "serving_gpus", "serving_gpus_peak",
    "serving_prefill_share", "serving_kv_bytes_per_token", "serving_weight_bytes", "serving_meets_targets",
    "serving_fits", "serving_utilisation", "price_per_gpu_hour")


#: Why a figure can be missing (NaN or infinite) for a valid scenario, by its name in ``to_dict()``.
UNAVAILABLE_REASONS = {
    "gpu_purchase_usd": "no purchase price on record for {gpu} (data/hardware_prices.csv); only self_hosted "
                        "pricing without a price per GPU-hour needs one",
    "serving_cost_per_million_tokens_usd": "no tokens are served (requests_per_day or tokens per request is 0)",
    "serving_cost_per_million_input_tokens_usd": "no input tokens are served (requests_per_day or "
                                                 "input_tokens_per_request is 0)",
    "serving_cost_per_million_output_tokens_usd": "no output tokens are served (requests_per_day or "
                                                  "output_tokens_per_request is 0)",
    "serving_cost_per_request_usd": "no requests are served (requests_per_day is 0)",
    "serving_tokens_per_second_per_gpu": "requests of no tokens; " + _NO_REPLICA,
    "serving_output_tokens_per_second_per_gpu": _NO_REPLICA,
    "serving_batch": _NO_REPLICA,
    "serving_tpot_ms": _NO_REPLICA,
    "serving_ttft_s": _NO_REPLICA,
    "serving_prefill_share": _NO_REPLICA,
    "serving_gpus": _NO_REPLICA,
    "serving_gpus_peak": _NO_REPLICA,
    "serving_cost_per_month_usd": _NO_REPLICA,
    "cluster_mtbf_hours": "no interruptions are expected (gpu_failure_rate_per_day is 0 and there are no spot "
                          "reclaims)",
    "checkpoint_interval_hours": "no interruptions are expected, so the Young/Daly interval is unbounded "
                                 "(no periodic checkpoint)",
    "min_gpus_to_fit": "the model does not fit at any GPU count with these memory settings (see warnings)",
    "day": "the alert line is not crossed by the plan's spend",
}


def _json_safe(value, path: str, unavailable: dict, scenario: Scenario, reasons: dict | None = None):
    """``value`` with every NaN or infinite float replaced by None, its path and reason noted in ``unavailable``."""
    reasons = UNAVAILABLE_REASONS if reasons is None else reasons
    if isinstance(value, dict):
        return {k: _json_safe(v, f"{path}.{k}" if path else str(k), unavailable, scenario, reasons)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v, f"{path}[{i}]", unavailable, scenario, reasons) for i, v in enumerate(value)]
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        name = path.rsplit(".", 1)[-1].split("[")[0]
        reason = reasons.get(name, "not defined for this scenario")
        unavailable[path] = reason.format(gpu=scenario.gpu) if isinstance(scenario.gpu, str) else reason
        return None
    return value


def _broadcast_inputs(scenario: Scenario) -> dict[str, np.ndarray]:
    """Every field as an array of the batch shape; empty (None) numeric fields become NaN."""
    values = scenario.to_dict()
    shape = () if scenario.batch_size is None else (scenario.batch_size,)
    out = {}
    for name, f in fields().items():
        value = values[name]
        if f.numeric:
            array = np.asarray(np.nan if value is None else value, dtype=float)
        else:
            array = np.asarray(value, dtype=object)
        try:
            out[name] = np.broadcast_to(array, shape)
        except ValueError:
            raise ValueError(f"{name}: batch fields must all have the same length ({shape[0]})") from None
    return out


def _fill(value: np.ndarray, default) -> np.ndarray:
    return np.where(np.isnan(value), default, value)


STAGES = ("pretrain", "sft", "preference", "evaluation", "inference")
CATEGORIES = ("compute", "storage", "network", "annotation", "logging", "staff", "power", "failures",
              "experiments", "redundancy")
#: Which stages count as fine-tuning in the pretrain / finetune / inference split.
STAGE_GROUPS = {"pretrain": "pretrain", "sft": "finetune", "preference": "finetune", "evaluation": "pretrain",
                "inference": "inference"}
_CLOUD_POWER = "0: electricity is included in the cloud GPU price (pricing is not self_hosted)"
_NO_SERVING = "0: no serving horizon (serving_months = 0)"
_CLOUD_OPS = "0: the cloud provider operates the hardware (pricing is not self_hosted)"


def _model(x: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[Line]]:
    """All figures and lines for broadcast inputs ``x``."""
    self_hosted = x["pricing"] == "self_hosted"
    active = _fill(x["active_params"], x["params"])
    d_model = _fill(x["d_model"], compute.derived_d_model(active))
    n_layers = _fill(x["n_layers"], compute.derived_n_layers(d_model))
    peak = catalog.peak_flops_per_s(x["gpu"], x["precision"])

    # -- pre-training compute and cluster size
    flops = compute.training_flops(active, x["tokens"], x["seq_len"], d_model, n_layers)
    attention = compute.attention_training_flops(x["tokens"], x["seq_len"], d_model, n_layers)
    hardware_flops = flops + compute.recompute_flops(active, x["tokens"], x["seq_len"], d_model, n_layers,
                                                     x["recompute"])
    # The prior is the model-FLOPs MFU of published runs, which recomputed attention (selective recompute, or
    # FlashAttention's backward pass): a plan that recomputes more does more hardware work per model FLOP
    # and runs proportionally slower; one that recomputes nothing, slightly faster. A given MFU is the
    # user's own measurement and already includes their recompute.
    # The prior also falls with the cluster, MFU(n) = level x (n / 1024) ** -beta (workbench.mfu): an auto-sized
    # cluster solves n = hours(n) / (24 target_days) in closed form (mfu.gpus_for_duration), then whole nodes.
    selective_flops = flops + compute.recompute_flops(active, x["tokens"], x["seq_len"], d_model, n_layers, "selective")
    given_mfu = ~np.isnan(x["mfu"])
    level = mfu.level(x["gpu"]) * selective_flops / hardware_flops
    beta = np.where(given_mfu, 0.0, mfu.scaling_exponent())
    hours_at_reference = compute.gpu_hours(flops, peak, _fill(x["mfu"], level))
    memory_bytes = memory.capacity_bytes(catalog.spec(x["gpu"], "memory_gb").astype(float))
    activations = memory.activation_bytes(x["seq_len"], d_model, n_layers, x["micro_batch_size"], x["recompute"],
                                          x["tensor_parallel"], compute.HEAD_DIM, x["attention_kernel"],
                                          x["pipeline_parallel"])
    min_gpus = memory.min_gpus_to_fit(x["params"], memory_bytes, activations, x["zero_stage"], x["tensor_parallel"],
                                      x["usable_memory_fraction"], x["pipeline_parallel"], x["gradient_precision"])
    per_node = x["gpus_per_node"]
    # auto-sizing: whole nodes, at least the model-parallel group and the count that fits in memory, at most
    # the largest cluster the n_gpus field allows (a warning says when the target duration is then missed)
    model_parallel = x["tensor_parallel"] * x["pipeline_parallel"]
    fit_gpus = np.where(np.isfinite(min_gpus), min_gpus, model_parallel)
    # a step of whole nodes that is also a whole number of model-parallel groups (data-parallel replicas)
    step = np.lcm(np.asarray(per_node, dtype=np.int64), np.asarray(model_parallel, dtype=np.int64)).astype(float)
    min_nodes_gpus = np.ceil(np.maximum(fit_gpus, model_parallel) / step) * step
    largest = np.maximum(np.floor(fields()["n_gpus"].max / step) * step, step)
    exact = mfu.gpus_for_duration(hours_at_reference, x["target_days"], beta)
    wanted = np.maximum(np.ceil(exact / step - 1e-9) * step, min_nodes_gpus)
    n_gpus = _fill(x["n_gpus"], np.minimum(wanted, largest))
    prior = mfu.level(x["gpu"]) * mfu.cluster_factor(n_gpus)
    mfu_used = _fill(x["mfu"], level * mfu.cluster_factor(n_gpus))
    hours = compute.gpu_hours(flops, peak, mfu_used)
    days = compute.wall_days(hours, n_gpus)
    states = memory.model_state_bytes(x["params"], n_gpus, x["zero_stage"], x["tensor_parallel"], x["pipeline_parallel"],
                                      x["gradient_precision"])

    # -- price of a GPU-hour: rented, or bought and amortised
    price = np.array(x["price_per_gpu_hour"], dtype=float)
    price_source = np.full(price.shape, "price_per_gpu_hour given by the user", dtype=object)
    rented = np.isnan(price) & ~self_hosted
    if rented.any():
        price[rented], price_source[rented] = prices.price_per_gpu_hour(
            x["gpu"][rented], x["pricing"][rented], x["provider"][rented])
    purchase = _fill(x["gpu_purchase_usd"], _hardware_price(x["gpu"]))
    owned = np.isnan(price) & self_hosted
    amortised = ownership.amortised_usd_per_gpu_hour(purchase, x["server_share"], x["interconnect_share"],
                                                     x["useful_life_years"])
    price = np.where(owned, amortised, price)
    price_source = np.where(owned, "self-hosted: purchase x (1 + server_share + interconnect_share) / "
                                   "(useful_life_years x 8766 h) (Cottier et al. 2024)", price_source)
    cost_type = np.where((x["pricing"] == "on_demand") | (x["pricing"] == "spot"), "elastic", "fixed")

    # -- post-training compute on the same cluster
    sft_tokens = x["sft_examples"] * x["sft_tokens_per_example"] * x["sft_epochs"]
    sft_hours = compute.gpu_hours(finetune.sft_flops(active, sft_tokens, x["sft_trainable_fraction"], x["seq_len"],
                                                     d_model, n_layers), peak, mfu_used)
    rm_params = _fill(x["reward_model_params"], active)
    rm_d_model = compute.derived_d_model(rm_params)
    rm_tokens = x["preference_pairs"] * x["preference_tokens_per_pair"] * x["reward_model_epochs"]
    rm_hours = compute.gpu_hours(compute.training_flops(rm_params, rm_tokens, x["seq_len"], rm_d_model,
                                                        compute.derived_n_layers(rm_d_model)), peak, mfu_used)
    rollout_tokens = x["rl_prompts"] * x["rl_samples_per_prompt"] * x["rl_tokens_per_sample"]
    rollout_hours = compute.gpu_hours(finetune.forward_flops(active, rollout_tokens), peak, x["rollout_mfu"])
    update_hours = compute.gpu_hours(finetune.policy_update_flops(active, rm_params, rollout_tokens), peak, mfu_used)
    eval_tokens = x["eval_checkpoints"] * x["eval_tokens_per_checkpoint"]
    eval_hours = compute.gpu_hours(finetune.forward_flops(active, eval_tokens), peak, mfu_used)

    # -- failures and checkpoints (one interval for the cluster, applied to every training stage)
    checkpoint_bytes = storage.checkpoint_bytes(x["params"], x["checkpoint_bytes_per_param"])
    node_reclaims = np.where(x["pricing"] == "spot", x["spot_interruptions_per_node_month"] / failures.DAYS_PER_MONTH, 0.0)
    interruptions_per_day = failures.cluster_interruptions_per_day(n_gpus, x["gpu_failure_rate_per_day"],
                                                                   n_gpus / per_node, node_reclaims)
    cluster_mtbf = failures.mtbf_hours(interruptions_per_day)
    write_hours = failures.checkpoint_write_hours(checkpoint_bytes, n_gpus, x["checkpoint_write_gb_per_s_per_gpu"])
    interval = _fill(x["checkpoint_interval_hours"], failures.young_daly_interval_hours(write_hours, cluster_mtbf))
    restart_hours = x["restart_minutes"] / 60.0

    def overhead(stage_hours):
        return failures.overhead(stage_hours / n_gpus, n_gpus, interruptions_per_day, interval, write_hours,
                                 restart_hours)

    stage_compute = {"pretrain": hours, "sft": sft_hours, "preference": rm_hours + rollout_hours + update_hours,
                     "evaluation": eval_hours}
    stage_overhead = {stage: overhead(h) for stage, h in stage_compute.items() if stage != "evaluation"}
    stage_gpu_hours = {stage: h + (stage_overhead[stage]["lost_gpu_hours"] + stage_overhead[stage]["checkpoint_gpu_hours"]
                                   if stage in stage_overhead else 0.0) for stage, h in stage_compute.items()}
    stage_days = {stage: h / n_gpus / 24.0 for stage, h in stage_gpu_hours.items()}
    training_days = sum(stage_days.values())
    staff_months = _fill(x["staff_months"], training_days / operations.DAYS_PER_MONTH)

    # -- serving: the replica size and operating point that need the fewest GPUs for the day's traffic
    # owned GPUs cost the same idle or busy: a self-hosted fleet is sized for the peak whatever the provisioning
    autoscaled = (x["serving_provisioning"] == "autoscaling") & ~self_hosted
    heads = np.maximum(1.0, np.round(d_model / compute.HEAD_DIM))
    point = serving.plan(
        params=x["params"], active_params=active, d_model=d_model, n_layers=n_layers,
        n_kv_heads=_fill(x["n_kv_heads"], np.minimum(8.0, heads)), head_dim=compute.HEAD_DIM,
        weight_precision=x["weight_precision"], kv_precision=x["kv_cache_precision"],
        memory_bytes_per_gpu=memory_bytes, usable_memory_fraction=x["usable_memory_fraction"],
        bandwidth_bytes_per_s_per_gpu=catalog.spec(x["gpu"], "mem_bandwidth_tbs").astype(float) * 1e12,
        peak_flops_per_s_per_gpu=catalog.peak_flops_per_s(x["gpu"], _serving_precision(x["gpu"], x["weight_precision"])),
        serving_mfu=x["serving_mfu"], serving_mbu=x["serving_mbu"], input_tokens=x["input_tokens_per_request"],
        output_tokens=x["output_tokens_per_request"], prefix_cache_hit_rate=x["prefix_cache_hit_rate"],
        tpot_target_s=x["tpot_target_ms"] / 1000.0, ttft_target_s=x["ttft_target_s"], max_batch=x["serving_max_batch"],
        gpus_per_node=per_node, prefill_mode=x["serving_prefill"], replica_gpus=x["serving_tensor_parallel"],
        tokens_per_second_per_gpu=x["serving_tokens_per_second_per_gpu"], requests_per_day=x["requests_per_day"],
        peak_to_average=x["peak_to_average"], min_replicas=x["min_replicas"], autoscaling=autoscaled)
    replica_gpus = point["replica_gpus"]
    tokens_per_request = x["input_tokens_per_request"] + x["output_tokens_per_request"]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        throughput = np.where(point["gpu_seconds_per_request"] > 0, tokens_per_request / point["gpu_seconds_per_request"], np.inf)
    running, peak_replicas = point["replicas_running"], point["replicas_peak"]
    serve_gpus = np.where(autoscaled, running, peak_replicas) * replica_gpus
    base_gpus = np.where(autoscaled, np.minimum(x["min_replicas"], peak_replicas), peak_replicas) * replica_gpus
    with np.errstate(divide="ignore", invalid="ignore"):
        # the share of the provisioned replicas' capacity the day's requests use: idle capacity is paid for too
        utilisation = np.where(np.isnan(serve_gpus) | np.isnan(point["gpu_seconds_per_request"]), np.nan,
                               np.where(serve_gpus > 0, x["requests_per_day"] / 86400.0 * point["gpu_seconds_per_request"]
                                        / np.where(serve_gpus > 0, serve_gpus, 1.0), 0.0))
    serve_month_usd = serve_gpus * serving.HOURS_PER_MONTH * price
    month_requests = x["requests_per_day"] * serving.DAYS_PER_MONTH
    month_in = month_requests * x["input_tokens_per_request"]
    month_out = month_requests * x["output_tokens_per_request"]
    month_tokens = month_in + month_out
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        usd_per_million = np.where(month_tokens > 0, serve_month_usd / (month_tokens / 1e6), np.nan)
        usd_per_million_in = np.where(month_in > 0, serve_month_usd * point["prefill_share"] / (month_in / 1e6), np.nan)
        usd_per_million_out = np.where(month_out > 0, serve_month_usd * (1 - point["prefill_share"]) / (month_out / 1e6),
                                       np.nan)
        usd_per_request = np.where(month_requests > 0, serve_month_usd / month_requests, np.nan)
    serving_on = x["serving_months"] > 0
    with np.errstate(invalid="ignore"):  # a GPU with no bandwidth on record: NaN GPUs, refused if serving is on
        serve_hours = np.where(serving_on, serve_gpus * serving.HOURS_PER_MONTH * x["serving_months"], 0.0)
        base_hours = np.where(serving_on, base_gpus * serving.HOURS_PER_MONTH * x["serving_months"], 0.0)

    # -- lines
    dataset = storage.dataset_bytes(x["tokens"], x["bytes_per_token"])
    run_months = stage_days["pretrain"] / operations.DAYS_PER_MONTH
    tdp_kw = catalog.spec(x["gpu"], "tdp_w").astype(float) / 1000.0
    # electricity is metered only for owned hardware (a cloud price includes it); accelerators without a
    # published TDP are refused for self_hosted pricing by the scenario, so no NaN reaches a line
    kwh_per_gpu_hour = np.where(self_hosted, ownership.energy_kwh(1.0, np.where(self_hosted, tdp_kw, 0.0) * 1000.0,
                                                                  x["server_power_factor"], x["power_utilisation"],
                                                                  x["pue"]), 0.0)
    power_price = np.where(self_hosted, x["usd_per_kwh"], 0.0)
    power_source = np.where(self_hosted, "TDP x server_power_factor x power_utilisation x PUE (Cottier et al. 2024)",
                            _CLOUD_POWER)
    ops_fte = np.where(self_hosted, n_gpus / 1000.0 * x["ops_fte_per_1000_gpus"], 0.0)
    ops_source = np.where(self_hosted, "ops_fte_per_1000_gpus x n_gpus / 1000 x stage months", _CLOUD_OPS)
    host_price = price * x["host_overhead_fraction"]
    host_source = np.where(x["host_overhead_fraction"] > 0, "host_overhead_fraction x GPU price",
                           "0: the GPU price includes the host CPU, RAM and disk (host_overhead_fraction = 0)")
    lines: list[Line] = []

    def compute_line(stage, item, gpu_h, formula):
        lines.append(Line(stage, "compute", item, gpu_h, "GPU-h", price, cost_type, formula, price_source))

    def training_overheads(stage, stage_hours):
        """Host share, failures, logging, staff and power lines of a training stage."""
        lines.append(Line(stage, "compute", "host CPU share", stage_hours, "GPU-h", host_price, cost_type,
                          "GPU-h x price x host_overhead_fraction", host_source))
        if stage in stage_overhead:
            o = stage_overhead[stage]
            lines.append(Line(stage, "failures", "lost work and restarts", o["lost_gpu_hours"], "GPU-h", price,
                              cost_type, "interruptions x (interval/2 + restart) x n_gpus; interruptions = wall h x "
                              "n_gpus x failure rate (+ spot reclaims)",
                              f"failure rate default: Llama 3 (419 interruptions, 54 days, 16,384 GPUs); "
                              f"interval: Young/Daly sqrt(2 x write time x MTBF) unless given"))
            lines.append(Line(stage, "failures", "checkpoint writes", o["checkpoint_gpu_hours"], "GPU-h", price,
                              cost_type, "wall h / interval x write time x n_gpus (all GPUs wait)",
                              "write time = checkpoint bytes / (n_gpus x checkpoint_write_gb_per_s_per_gpu)"))
        total_hours = stage_gpu_hours[stage]
        lines.append(Line(stage, "logging", "logs and metrics",
                          operations.log_gb_months(total_hours / 24.0, x["log_gb_per_gpu_day"], x["log_retention_days"],
                                                   x["log_sampling_ratio"]),
                          "GB-month", x["log_usd_per_gb_month"], "elastic",
                          "GPU-days x GB/GPU-day x sampling x retention days / 30.4", "log_usd_per_gb_month"))
        months = staff_months * stage_days[stage] / np.where(training_days > 0, training_days, 1.0)
        lines.append(Line(stage, "staff", "project team", operations.fte_months(x["staff_fte"], months), "FTE-month",
                          x["staff_usd_per_month"], "fixed", "staff_fte x months (the stage's share of staff_months)",
                          "staff_usd_per_month: ~200k USD salary x 1.5 overheads / 12 (planning assumption)"))
        lines.append(Line(stage, "staff", "data-centre operations",
                          operations.fte_months(ops_fte, stage_days[stage] / operations.DAYS_PER_MONTH), "FTE-month",
                          x["staff_usd_per_month"], "fixed", "ops FTE x stage months", ops_source))
        lines.append(Line(stage, "power", "electricity", total_hours * kwh_per_gpu_hour, "kWh", power_price, "elastic",
                          "GPU-h x TDP x server factor x utilisation x PUE", power_source))

    # pre-training
    compute_line("pretrain", "accelerator time", hours, "6·N_active·D·(1 + s/(12·d_model)) / (peak FLOP/s × MFU × 3600)")
    training_overheads("pretrain", hours)
    experiment_share = x["experiment_fraction"] + x["ablation_runs"] * x["ablation_run_fraction"]
    lines.append(Line("pretrain", "experiments", "trial-and-error and ablation runs", hours * experiment_share, "GPU-h",
                      price, cost_type, "pre-training GPU-h x (experiment_fraction + ablation_runs x ablation_run_fraction)",
                      "LLaMA 1 development used ~3.4x the GPU-h of its final models (Touvron et al. 2023)"))
    storage_items = [
        ("corpus on parallel file system", storage.gb_months(dataset, run_months), x["hot_storage_usd_per_gb_month"],
         "corpus bytes x run months", "hot tier"),
        ("corpus copies in object storage", storage.gb_months(dataset * x["dataset_copies"], x["retention_months"]),
         x["object_storage_usd_per_gb_month"], "corpus bytes x dataset_copies x retention_months", "object tier"),
        ("checkpoints on parallel file system", storage.gb_months(checkpoint_bytes * x["checkpoints_kept_hot"], run_months),
         x["hot_storage_usd_per_gb_month"], "checkpoint bytes x checkpoints_kept_hot x run months", "hot tier"),
        ("checkpoints in object storage",
         storage.gb_months(checkpoint_bytes * x["checkpoints_kept_object"], x["retention_months"]),
         x["object_storage_usd_per_gb_month"], "checkpoint bytes x checkpoints_kept_object x retention_months", "object tier"),
        ("final checkpoint and corpus in archive", storage.gb_months(checkpoint_bytes + dataset, x["archive_months"]),
         x["archive_storage_usd_per_gb_month"], "(checkpoint + corpus bytes) x archive_months", "archive tier"),
    ]
    for item, gb_month, unit_price, formula, tier in storage_items:
        lines.append(Line("pretrain", "storage", item, gb_month, "GB-month", unit_price, "elastic",
                          f"{formula}; corpus = tokens x bytes_per_token, checkpoint = params x checkpoint_bytes_per_param",
                          f"{tier} price per GB-month (shared/reference/prices.md)"))
    lines.append(Line("pretrain", "network", "corpus ingest", dataset / 1e9, "GB", x["ingest_usd_per_gb"], "elastic",
                      "corpus bytes x ingest price",
                      np.where(x["ingest_usd_per_gb"] > 0, "ingest_usd_per_gb",
                               "0: inbound transfer to the major clouds is not charged (ingest_usd_per_gb = 0)")))
    lines.append(Line("pretrain", "network", "cross-region checkpoint sync",
                      checkpoint_bytes * x["checkpoints_kept_object"] * x["cross_region_copies"] / 1e9, "GB",
                      x["cross_region_usd_per_gb"], "elastic", "checkpoint bytes x checkpoints_kept_object x cross_region_copies",
                      "commonly used inter-region rate, unverified (shared/reference/prices.md)"))
    lines.append(Line("pretrain", "network", "model weights egress", 2.0 * x["params"] * x["model_downloads"] / 1e9, "GB",
                      x["egress_usd_per_gb"], "elastic", "2 bytes x params x model_downloads",
                      "commonly used internet egress rate, unverified (shared/reference/prices.md)"))
    # supervised fine-tuning
    compute_line("sft", "accelerator time", sft_hours, "(4 + 2·trainable_fraction)·N·D_sft + attention; D_sft = examples × tokens × epochs")
    training_overheads("sft", sft_hours)
    _annotation_lines(lines, "sft", "SFT examples", x["sft_examples"], x["sft_usd_per_example"], x, "sft_usd_per_example")
    # preference tuning
    compute_line("preference", "reward model training", rm_hours, "6·N_rm·D_rm + attention; D_rm = pairs × tokens × epochs")
    compute_line("preference", "rollout generation", rollout_hours,
                 "2·N·T / (peak × rollout_mfu); T = prompts × samples × tokens")
    compute_line("preference", "policy updates", update_hours, "(8·N + 2·N_rm)·T / (peak × MFU)")
    training_overheads("preference", stage_compute["preference"])
    _annotation_lines(lines, "preference", "preference comparisons", x["preference_pairs"], x["preference_usd_per_pair"], x,
                      "preference_usd_per_pair: AlpacaEval 0.30 USD per comparison")
    # evaluation
    compute_line("evaluation", "benchmark runs", eval_hours, "2·N × eval_tokens_per_checkpoint × eval_checkpoints / (peak × MFU)")
    training_overheads("evaluation", eval_hours)
    # serving
    serving_source = np.where(serving_on, price_source, _NO_SERVING)
    lines.append(Line("inference", "compute", "serving replicas (base)", base_hours, "GPU-h", price, "fixed",
                      "replicas always running (fixed provisioning: the peak's; autoscaling: min_replicas) x GPUs per "
                      "replica x 730.5 h x serving_months; replica throughput from the prefill/decode roofline",
                      serving_source))
    lines.append(Line("inference", "compute", "serving replicas (autoscaled)", serve_hours - base_hours, "GPU-h", price,
                      np.where(self_hosted, "fixed", "elastic"), "(average replicas over the daily traffic curve - min_replicas) x GPUs per replica x "
                      "730.5 h x serving_months",
                      np.where(autoscaled, serving_source,
                               np.where(self_hosted, "0: owned GPUs cost the same idle or busy; the fleet is sized for "
                                                     "the peak (self_hosted)",
                                        "0: fixed provisioning runs the peak's replicas all day "
                                        "(serving_provisioning = fixed)"))))
    lines.append(Line("inference", "network", "response egress",
                      np.where(serving_on, month_out * x["egress_bytes_per_output_token"] / 1e9 * x["serving_months"], 0.0),
                      "GB", x["egress_usd_per_gb"], "elastic", "output tokens/month x egress_bytes_per_output_token x "
                      "serving_months",
                      np.where(serving_on, "commonly used internet egress rate, unverified (shared/reference/prices.md)",
                               _NO_SERVING)))
    lines.append(Line("inference", "logging", "request logs",
                      np.where(serving_on, month_tokens * x["bytes_per_token"] * x["request_log_sampling"] / 1e9
                               * x["log_retention_days"] / serving.DAYS_PER_MONTH * x["serving_months"], 0.0),
                      "GB-month", x["log_usd_per_gb_month"], "elastic", "tokens/month x bytes_per_token x "
                      "request_log_sampling, kept log_retention_days, x serving_months",
                      np.where(serving_on, "log_usd_per_gb_month", _NO_SERVING)))
    lines.append(Line("inference", "power", "electricity", serve_hours * kwh_per_gpu_hour, "kWh", power_price, "elastic",
                      "GPU-h x TDP x server factor x utilisation x PUE", power_source))
    lines.append(Line("inference", "staff", "data-centre operations",
                      operations.fte_months(np.where(self_hosted & serving_on,
                                                     serve_gpus / 1000.0 * x["ops_fte_per_1000_gpus"], 0.0),
                                            x["serving_months"]),
                      "FTE-month", x["staff_usd_per_month"], "fixed", "ops FTE x serving_months", ops_source))
    # redundancy: a visible contingency on each stage
    for stage in STAGES:
        subtotal = sum(line.cost_usd for line in lines if line.stage == stage)
        lines.append(Line(stage, "redundancy", "engineering redundancy", subtotal, "USD", x["redundancy_factor"] - 1.0,
                          "fixed", "(redundancy_factor - 1) x the stage's other lines",
                          "planning guides: redundancy factor typically 1.2-1.5"))

    n_opt, d_opt, predicted_loss = _scaling_figures(active, x["tokens"], x["scaling_law"])
    figures = {
        "training_flops": flops, "gpu_hours": hours, "wall_days": days, "n_gpus": n_gpus, "mfu": mfu_used,
        "active_params": active, "d_model": d_model, "n_layers": n_layers, "peak_flops_per_s": peak,
        "mfu_prior": prior, "attention_flops_share": attention / flops, "hardware_flops": hardware_flops,
        "hfu": mfu_used * hardware_flops / flops, "price_per_gpu_hour": price, "gpu_memory_bytes": memory_bytes,
        "model_state_bytes_per_gpu": states, "activation_bytes_per_gpu": activations,
        "memory_bytes_per_gpu": states + activations, "min_gpus_to_fit": min_gpus,
        "tokens_per_param": scaling.tokens_per_param(active, x["tokens"]),
        "compute_optimal_params": n_opt, "compute_optimal_tokens": d_opt,
        "predicted_loss": predicted_loss,
        "interruptions_per_day": interruptions_per_day, "cluster_mtbf_hours": cluster_mtbf,
        "checkpoint_interval_hours": interval, "checkpoint_write_seconds": write_hours * 3600.0,
        "checkpoint_bytes": checkpoint_bytes, "dataset_bytes": dataset,
        "pretrain_interruptions": stage_overhead["pretrain"]["interruptions"],
        "pretrain_days_with_overheads": stage_days["pretrain"], "training_days_total": training_days,
        "sft_days": stage_days["sft"], "preference_days": stage_days["preference"],
        "evaluation_days": stage_days["evaluation"],
        "sft_gpu_hours": sft_hours, "preference_gpu_hours": stage_compute["preference"], "evaluation_gpu_hours": eval_hours,
        "staff_months": staff_months, "reward_model_params": rm_params, "gpu_purchase_usd": purchase,
        "serving_gpus": serve_gpus, "serving_gpus_peak": peak_replicas * replica_gpus,
        "serving_replica_gpus": replica_gpus, "serving_batch": point["batch"], "serving_batch_limit": point["batch_limit"],
        "serving_tpot_ms": point["tpot_s"] * 1000.0, "serving_ttft_s": point["ttft_s"],
        "serving_meets_targets": point["meets_targets"], "serving_fits": point["fits"],
        "serving_min_replica_gpus": point["min_replica_gpus"], "serving_utilisation": utilisation,
        "serving_gpus_per_node": per_node,
        "serving_kv_bytes_per_token": point["kv_bytes_per_token"], "serving_weight_bytes": point["weight_bytes"],
        "serving_tokens_per_second_per_gpu": throughput,
        "serving_output_tokens_per_second_per_gpu": np.where(
            tokens_per_request > 0, np.where(tokens_per_request > 0, throughput, 0.0) * x["output_tokens_per_request"]
            / np.where(tokens_per_request > 0, tokens_per_request, 1.0), 0.0),
        "serving_prefill_share": point["prefill_share"],
        "serving_cost_per_month_usd": serve_month_usd, "serving_cost_per_million_tokens_usd": usd_per_million,
        "serving_cost_per_million_input_tokens_usd": usd_per_million_in,
        "serving_cost_per_million_output_tokens_usd": usd_per_million_out,
        "serving_cost_per_request_usd": usd_per_request,
        "cny_per_usd": x["cny_per_usd"], "n_gpus_wanted": wanted,
    }
    return figures, lines


def _scaling_figures(active, tokens, law):
    """(compute-optimal N, compute-optimal D, predicted loss) under each scenario's own scaling law."""
    active, tokens, law = np.broadcast_arrays(np.asarray(active, float), np.asarray(tokens, float), law)
    n_opt, d_opt, loss = (np.empty(active.shape) for _ in range(3))
    for name in set(np.ravel(law)):
        where = law == name
        n_opt[where], d_opt[where] = scaling.compute_optimal(6.0 * active[where] * tokens[where], name)
        loss[where] = scaling.loss(active[where], tokens[where], name)
    return n_opt, d_opt, loss


def _serving_precision(gpu, weight_precision):
    """Compute format of serving: fp8 weights run fp8 matmuls where the GPU has them, everything else bf16 (fp16
    where there is no bf16)."""
    fp8 = (np.asarray(weight_precision, dtype=object) == "fp8") & ~np.isnan(catalog.peak_flops_per_s(gpu, "fp8"))
    return np.where(fp8, "fp8", mfu.training_precision(gpu))


def _hardware_price(gpu: np.ndarray) -> np.ndarray:
    table = ownership.hardware_prices()
    return catalog.map_ids(gpu, lambda g: table.get(g, np.nan))


def _annotation_lines(lines, stage, what, count, unit_price, x, source):
    bought, redone, reviewed = annotation.annotation_units(count, x["annotation_rework_rate"], x["annotation_qa_share"])
    for item, units, formula in ((what, bought, "labels x unit price"),
                                 (f"{what}: rework of noisy labels", redone, "labels x annotation_rework_rate x unit price"),
                                 (f"{what}: QA review", reviewed, "labels x annotation_qa_share x unit price")):
        lines.append(Line(stage, "annotation", item, units, "labels", unit_price, "elastic", formula, source))


def _lines_frame(lines: list[Line], shape) -> pd.DataFrame:
    n = int(np.prod(shape)) if shape else 1
    columns = {"scenario": np.tile(np.arange(n), len(lines))}
    for name in ("stage", "category", "item", "unit", "formula"):
        columns[name] = np.repeat([getattr(line, name) for line in lines], n)
    if not shape:  # one scenario: one value per line, no broadcasting needed
        for name in ("quantity", "unit_cost_usd", "cost_usd", "cost_type", "source"):
            values = [getattr(line, name) for line in lines]
            values = [v.item() if isinstance(v, np.ndarray) else v for v in values]
            columns[name] = np.array(values, dtype=object) if name in ("cost_type", "source") else np.array(values)
        return pd.DataFrame(columns, columns=list(LINE_COLUMNS))
    for name in ("quantity", "unit_cost_usd", "cost_usd"):
        columns[name] = np.concatenate([np.broadcast_to(getattr(line, name), shape).ravel() for line in lines])
    for name in ("cost_type", "source"):  # may vary across a batch
        columns[name] = np.concatenate([np.broadcast_to(np.asarray(getattr(line, name), dtype=object), shape).ravel()
                                        for line in lines])
    return pd.DataFrame(columns, columns=list(LINE_COLUMNS))


def _scalar(value):
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value


def _defaults_used(scenario: Scenario, figures: dict) -> dict[str, str]:
    """Where each input left empty got its value from (single scenarios only)."""
    used = {}
    if scenario.mfu is None:
        generation = catalog.spec(scenario.gpu, "generation")
        table = mfu.prior_table()
        row = table.loc[generation] if generation in table.index else table.loc["all"]
        basis = generation if generation in table.index else f"all generations ({generation} has no published run)"
        used["mfu"] = (f"{figures['mfu_prior']:.3f}: level {row['mfu']:.3f} at 1,024 GPUs (median of {int(row['n_runs'])} "
                       f"published runs on {basis}, quartiles {row['q25']:.2f}-{row['q75']:.2f}, range "
                       f"{row['min']:.2f}-{row['max']:.2f}; data/published_runs.csv) x ({figures['n_gpus']:,.0f} / 1024) ** "
                       f"-{mfu.scaling_exponent():.3f} (MFU falls with the cluster; data/mfu_scaling.csv)")
        if scenario.recompute != "selective":
            used["mfu"] += (f", x {figures['mfu'] / figures['mfu_prior']:.3f} for recompute={scenario.recompute!r} "
                            "(hardware FLOPs against the runs' selective recompute)")
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
        used["n_gpus"] = (f"{figures['n_gpus']:.0f}: enough whole {scenario.gpus_per_node}-GPU nodes to finish in "
                          f"target_days={scenario.target_days:g} ("
                          + (f"memory needs at least {figures['min_gpus_to_fit']:.0f})"
                             if np.isfinite(figures["min_gpus_to_fit"]) else "the model fits at no GPU count: see the warning)"))
    if scenario.d_model is None or scenario.n_layers is None:
        used["architecture"] = (f"d_model={figures['d_model']:.0f}, n_layers={figures['n_layers']:.0f}: derived from "
                                f"{figures['active_params']:.3g} active parameters (N = 12·L·h², h = 128·L)")
    if scenario.active_params is None:
        used["active_params"] = "equal to params (a dense model)"
    return used


def _warnings(scenario: Scenario, figures: dict) -> list[str]:
    out = []
    if scenario.n_gpus is None and figures["n_gpus_wanted"] > figures["n_gpus"]:
        out.append(f"finishing pre-training in target_days={scenario.target_days:g} needs "
                   f"{figures['n_gpus_wanted']:,.0f} GPUs, more than the {fields()['n_gpus'].max:,.0f} the n_gpus field "
                   f"allows; sized at {figures['n_gpus']:,.0f} GPUs, pre-training takes {figures['wall_days']:,.1f} days")
    if not np.isfinite(figures["min_gpus_to_fit"]):
        out.append(f"the model does not fit in {scenario.gpu} memory at any GPU count with zero_stage="
                   f"{scenario.zero_stage}, tensor_parallel={scenario.tensor_parallel}, pipeline_parallel="
                   f"{scenario.pipeline_parallel}, recompute={scenario.recompute!r}: raise the ZeRO stage, tensor or "
                   "pipeline parallelism, or use full recompute")
    elif figures["n_gpus"] < figures["min_gpus_to_fit"]:
        out.append(f"n_gpus={figures['n_gpus']:.0f} is below the {figures['min_gpus_to_fit']:.0f} GPUs that fit "
                   f"the model states and activations in {scenario.gpu} memory")
    group = scenario.tensor_parallel * scenario.pipeline_parallel
    if scenario.n_gpus is not None and scenario.n_gpus % group:
        out.append(f"n_gpus={scenario.n_gpus:.0f} is not a multiple of tensor_parallel x pipeline_parallel = {group}: "
                   f"{scenario.n_gpus / group:,.2f} data-parallel replicas; the figures assume the GPUs are all used")
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
        out += _multi_node_warning(figures)
    if scenario.budget_usd is not None and figures["total_cost_usd"] > scenario.budget_usd:
        over = figures["total_cost_usd"] - scenario.budget_usd
        out.append(f"the plan's total of {figures['total_cost_usd']:,.0f} USD is over the budget of "
                   f"{scenario.budget_usd:,.0f} USD by {over:,.0f} USD ({over / scenario.budget_usd:.0%})")
    note = scaling.optimality_warning(figures["active_params"], scenario.tokens, scenario.scaling_law)
    if note:
        out.append(note)
    return out


def _check_serving(scenario: Scenario, figures: dict) -> None:
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


def _multi_node_warning(figures) -> list[str]:
    if not (figures["serving_fits"] and figures["serving_replica_gpus"] > figures["serving_gpus_per_node"]):
        return []
    return [f"serving: a replica of {figures['serving_replica_gpus']:,.0f} GPUs spans "
            f"{figures['serving_replica_gpus'] / figures['serving_gpus_per_node']:,.0f} nodes; tensor-parallel "
            "communication between nodes is not modelled, so its latency and cost are optimistic"]


def _checked_total(scenario: Scenario, lines: list[Line]) -> np.ndarray:
    """The sum of the lines, after checking that every line is a finite, non-negative amount.

    A valid scenario always passes (the fuzzing tests hold the engine to it); should a formula ever produce
    NaN or infinity, the user gets a message naming the line, never a NaN total.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        total = sum(line.cost_usd for line in lines)
    if np.isfinite(total).all() and (np.asarray(total) >= 0).all():
        return total
    for line in lines:
        cost = np.asarray(line.cost_usd)
        bad = ~np.isfinite(cost) | (cost < 0)
        if bad.any():
            where = f" (scenario {int(np.argmax(np.ravel(bad)))} of the batch)" if cost.ndim else ""
            raise ScenarioError("scenario", scenario.changes(), f"the cost line {line.stage}/{line.item} is not a "
                                f"finite, non-negative amount{where}; please report this scenario",
                                "a scenario whose every cost line can be computed")
    raise ScenarioError("scenario", scenario.changes(), "the total cost overflows", "smaller quantities")


def totals(scenario: Scenario) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(total cost [USD], figures) for a scenario or batch, without building the lines table: the fast
    path for Monte Carlo and sweeps over very large batches."""
    inputs = _broadcast_inputs(scenario)
    figures, lines = _model(inputs)
    _check_serving(scenario, figures)
    return _checked_total(scenario, lines), figures


def estimate(scenario: Scenario | None = None, **changes) -> Estimate:
    """Figures and cost lines for ``scenario`` (default ``Scenario()``), with ``changes`` applied.

    Headline figures: ``training_flops`` [FLOP], ``gpu_hours`` [GPU-h], ``wall_days`` [day], ``n_gpus``
    [GPU], ``mfu`` [fraction], ``total_cost_usd`` [USD]; ``lines`` is the tidy table of cost lines
    (columns :data:`LINE_COLUMNS`); ``details`` holds the other figures (memory, architecture, scaling).
    A batch scenario (array fields) gives arrays and a ``scenario`` column indexing the batch.
    """
    scenario = Scenario() if scenario is None else scenario
    if not isinstance(scenario, Scenario):
        raise ScenarioError("scenario", scenario, "is not a Scenario", "workbench.Scenario(...), or field=value changes")
    if changes:
        scenario = scenario.replace(**changes)
    inputs = _broadcast_inputs(scenario)
    shape = next(iter(inputs.values())).shape
    figures, lines = _model(inputs)
    _check_serving(scenario, figures)
    total = _checked_total(scenario, lines)
    figures = {k: _scalar(np.broadcast_to(v, shape)) for k, v in figures.items()}
    single = scenario.batch_size is None
    headline = {k: figures[k] for k in HEADLINE if k != "total_cost_usd"}
    return Estimate(scenario=scenario, **headline, total_cost_usd=_scalar(total),
                    lines=_lines_frame(lines, shape),
                    details={k: v for k, v in figures.items() if k not in headline},
                    defaults_used=_defaults_used(scenario, figures) if single else {},
                    warnings=_warnings(scenario, {**figures, "total_cost_usd": _scalar(total)}) if single else [])
