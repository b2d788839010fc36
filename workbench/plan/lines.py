"""Cost lines, one builder per stage or concern, from broadcast inputs ``x`` and the figures of
:func:`workbench.plan.figures.plan`: pre-training (its run, experiments, storage and network), supervised
fine-tuning, preference tuning, evaluation, serving, and the redundancy on each stage. Every line carries its
quantity and unit, unit cost, fixed or elastic type, formula and source; :func:`lines_frame` makes the tidy table.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..formulas import annotation, operations, serving, storage
from . import contingency
from .figures import PRICE_GROUP

LINE_COLUMNS = ("scenario", "stage", "category", "item", "quantity", "unit", "unit_cost_usd", "cost_usd",
                "cost_type", "formula", "source")
STAGES = ("pretrain", "sft", "preference", "evaluation", "inference")
CATEGORIES = ("compute", "storage", "network", "annotation", "logging", "staff", "power", "failures",
              "experiments", "redundancy")
#: Which stages count as fine-tuning in the pretrain / finetune / inference split.
STAGE_GROUPS = {"pretrain": "pretrain", "sft": "finetune", "preference": "finetune", "evaluation": "pretrain",
                "inference": "inference"}
_NO_SERVING = "0: no serving horizon (serving_months = 0)"


def stage_groups(stages, kinds) -> np.ndarray:
    """The split group (pretrain / finetune / inference) of each line's stage: evaluation belongs to the
    pre-training of a plan that pre-trains, to its fine-tuning otherwise."""
    groups = np.array([STAGE_GROUPS[s] for s in stages], dtype=object)
    return np.where((np.asarray(stages, dtype=object) == "evaluation") & (np.asarray(kinds, dtype=object) != "pretrain"),
                    "finetune", groups)


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


#: The stages each plan kind (the ``plan_kind`` field) pays for.
KIND_STAGES = {"pretrain": STAGES, "open_weights": ("sft", "preference", "evaluation", "inference"),
               "serve_only": ("inference",)}


def all_lines(x, f) -> list[Line]:
    """Every line of the plan, stage by stage, the idle hours of what it commits to, then the redundancy on each
    stage. A plan without pre-training (``plan_kind``) has no line of the stages it does not run, and pays for the
    open weights it starts from."""
    lines = [*pretrain_lines(x, f), *sft_lines(x, f), *preference_lines(x, f), *evaluation_lines(x, f),
             *serving_lines(x, f), *commitment_lines(x, f)]
    kinds = np.asarray(x["plan_kind"], dtype=object)
    if (kinds != "pretrain").any():  # only then: a pre-training plan's lines stay as they were
        lines = [*_within_kind(kinds, lines), *open_weights_lines(x, f, kinds)]
    lines = lines + redundancy_lines(x, lines)
    if kinds.ndim == 0:  # one plan: the stages it does not run have no line at all
        lines = [line for line in lines if line.stage in KIND_STAGES[kinds.item()]]
    return lines


def _within_kind(kinds, lines: list[Line]) -> list[Line]:
    """The lines, each nought where its stage is not one its plan's kind runs."""
    runs = {stage: np.isin(kinds, [k for k, stages in KIND_STAGES.items() if stage in stages]) for stage in STAGES}
    return [Line(line.stage, line.category, line.item, np.where(runs[line.stage], line.quantity, 0.0), line.unit,
                 line.unit_cost_usd, line.cost_type, line.formula, line.source) for line in lines]


def open_weights_lines(x, f, kinds) -> list[Line]:
    """The published weights a plan starts from: downloaded once, then kept in object storage (for the retention
    period when fine-tuned, for the serving months when only served). A plan that fine-tunes pays them in its
    fine-tuning stage, one that only serves in serving."""
    weights_gb = 2.0 * np.asarray(x["params"], dtype=float) / 1e9  # published in 16-bit formats: 2 bytes a parameter
    out = []
    for kind, stage, months, months_name in (("open_weights", "sft", x["retention_months"], "retention_months"),
                                             ("serve_only", "inference", x["serving_months"], "serving_months")):
        mine = kinds == kind
        if not mine.any():
            continue
        out += [Line(stage, "network", "open weights download", np.where(mine, weights_gb, 0.0), "GB",
                     x["ingest_usd_per_gb"], "elastic", "2 bytes x params (16-bit weights), downloaded once",
                     np.where(x["ingest_usd_per_gb"] > 0, "ingest_usd_per_gb",
                              "0: inbound transfer to the major clouds is not charged (ingest_usd_per_gb = 0)")),
                Line(stage, "storage", "open weights in object storage",
                     np.where(mine, storage.gb_months(weights_gb * 1e9, months), 0.0), "GB-month",
                     f["object_storage_usd_per_gb_month"], "elastic", f"2 bytes x params x {months_name}",
                     f["object_storage_usd_per_gb_month_source"])]
    return out


#: (price group, stage its idle line stands in, item) of each commitment (:func:`workbench.plan.figures.commitments`).
COMMITMENTS = (("pretrain", "pretrain", "idle committed capacity"),
               ("experiments", "pretrain", "idle committed capacity (experiments)"),
               ("post_training", "sft", "idle committed capacity"),
               ("serving_base", "inference", "idle committed capacity"))


def commitment_lines(x, f) -> list[Line]:
    """What a reservation or owned hardware costs while the plan does not use it: the rest of the term (a year or
    three; owned GPUs' useful life) at the price of the hours used, less what other work absorbs."""
    out = []
    # a plan that does not pre-train still commits its cluster: the cluster's idle hours stand in its fine-tuning
    # stage (the pre-training stage's lines are nought for it), priced as the cluster is bought
    fine_tunes_only = np.asarray(x["plan_kind"], dtype=object) != "pretrain"
    cluster_too = fine_tunes_only & (f["stage_mode"]["post_training"] == f["stage_mode"]["pretrain"])
    for group, stage, item in COMMITMENTS:
        idle = f["idle_committed_gpu_hours"][group]
        price = f["stage_price"][group]
        mode = f["stage_mode"][group]
        if group == "post_training" and np.any(fine_tunes_only):
            idle = idle + np.where(fine_tunes_only, f["idle_committed_gpu_hours"]["pretrain"], 0.0)
            price = np.where(cluster_too, f["stage_price"]["pretrain"], price)
            mode = np.where(cluster_too, f["stage_mode"]["pretrain"], mode)
            mode = mode.item() if np.ndim(mode) == 0 else mode
        out.append(Line(stage, "compute", item, idle, "GPU-h", price, "fixed",
                        "GPUs x (whole terms - hours used) x (1 - commitment_other_use_share); term: 1 or 3 years "
                        "reserved, a month rented monthly, useful_life_years owned",
                        _where(np.asarray(idle) > 0,
                               "a reservation is paid for its whole term, a monthly rental for whole months, and owned "
                               "GPUs depreciate over their life, "
                               "busy or idle (planning guides: training compute is mostly fixed or committed cost)",
                               _where(np.isin(mode, ("reserved_1y", "reserved_3y", "monthly", "self_hosted")),
                                      "0: the plan uses the whole term, or other work absorbs it "
                                      "(commitment_other_use_share)", "0: bought by the hour (nothing committed)"))))
        # owned hardware also draws power and needs its operations staff while idle (a reservation does not)
        owned = np.asarray(mode == "self_hosted", dtype=bool)
        idle_owned = np.where(owned, idle, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            idle_kwh = f["kwh_per_gpu_hour"] * x["idle_power_share"] / x["power_utilisation"]
        out.append(Line(stage, "power", f"{item}: electricity", idle_owned * idle_kwh, "kWh", f["power_price"], "fixed",
                        "idle GPU-h x TDP x server factor x idle_power_share x PUE",
                        _where(owned, "owned servers draw power idle (idle_power_share)", "0: not owned")))
        out.append(Line(stage, "staff", f"{item}: data-centre operations",
                        operations.fte_months(idle_owned / (24.0 * operations.DAYS_PER_MONTH) / 1000.0, x["ops_fte_per_1000_gpus"]),
                        "FTE-month", x["staff_usd_per_month"], "fixed",
                        "idle GPU-months / 1000 x ops_fte_per_1000_gpus",
                        _where(owned, "owned hardware is operated busy or idle", "0: not owned")))
        out.append(Line(stage, "compute", f"{item}: data-centre space",
                        idle_owned / (24.0 * operations.DAYS_PER_MONTH) * f["space_kw_per_gpu"], "kW-month",
                        x["colocation_usd_per_kw_month"], "fixed", "idle GPU-months x kW per server GPU",
                        _where(owned, "owned servers take their space busy or idle", "0: not owned")))
    return out


def _where(condition, yes, no):
    """``np.where`` that hands back ``yes`` or ``no`` itself when the condition is the same everywhere (the usual
    batch: no 100,000-element array of the same text)."""
    condition = np.asarray(condition, dtype=bool)
    if condition.all():
        return yes
    if not condition.any():
        return no
    return np.where(condition, yes, no)


def _price(group, f) -> tuple:
    """(USD/GPU-h, cost type, source) of a price group (``pretrain``, ``post_training``, ``experiments``,
    ``serving_base``, ``serving_peak``): bought as its pricing field says."""
    return f["stage_price"][group], f["stage_cost_type"][group], f["stage_price_source"][group]


def _compute(stage, item, gpu_hours, formula, f) -> Line:
    price, cost_type, source = _price(PRICE_GROUP[stage], f)
    return Line(stage, "compute", item, gpu_hours, "GPU-h", price, cost_type, formula, source)


def training_overheads(stage, x, f) -> list[Line]:
    """Host share, failures, logging, staff and power lines of a training stage."""
    (price, cost_type, _), stage_hours = _price(PRICE_GROUP[stage], f), f["stage_compute"][stage]
    lines = [Line(stage, "compute", "host CPU share", stage_hours, "GPU-h", price * x["host_overhead_fraction"], cost_type,
                  "GPU-h x price x host_overhead_fraction", f["host_source"])]
    if stage in f["stage_overhead"]:
        o = f["stage_overhead"][stage]
        lines += [Line(stage, "failures", "lost work and restarts", o["lost_gpu_hours"], "GPU-h", price, cost_type,
                       "interruptions x (interval/2 + restart) x n_gpus; interruptions = wall h x n_gpus x failure rate "
                       "(+ spot reclaims)", "failure rate default: Llama 3 (419 interruptions, 54 days, 16,384 GPUs); "
                       "interval: Young/Daly sqrt(2 x write time x MTBF) unless given"),
                  Line(stage, "failures", "checkpoint writes", o["checkpoint_gpu_hours"], "GPU-h", price, cost_type,
                       "wall h / interval x write time x n_gpus (all GPUs wait)",
                       "write time = checkpoint bytes / (n_gpus x checkpoint_write_gb_per_s_per_gpu)")]
    total_hours, days, training_days = f["stage_gpu_hours"][stage], f["stage_days"][stage], f["training_days_total"]
    # the team waits with a spot run for its capacity: pre-training's share of the staff months holds the wait
    waited = days + f["spot_wait_days"] if stage == "pretrain" else days
    months = f["staff_months"] * waited / np.where(training_days > 0, training_days, 1.0)
    return lines + [
        Line(stage, "logging", "logs and metrics",
             operations.log_gb_months(total_hours / 24.0, x["log_gb_per_gpu_day"], x["log_retention_days"],
                                      x["log_sampling_ratio"]),
             "GB-month", x["log_usd_per_gb_month"], "elastic", "GPU-days x GB/GPU-day x sampling x retention days / 30.4",
             "log_usd_per_gb_month"),
        Line(stage, "logging", "log ingestion",
             operations.log_gb_ingested(total_hours / 24.0, x["log_gb_per_gpu_day"], x["log_sampling_ratio"]), "GB",
             x["log_ingest_usd_per_gb"], "elastic", "GPU-days x GB/GPU-day x sampling", "log_ingest_usd_per_gb"),
        Line(stage, "staff", "project team", operations.fte_months(x["staff_fte"], months), "FTE-month",
             x["staff_usd_per_month"], "fixed", "staff_fte x months (the stage's share of staff_months)",
             "staff_usd_per_month: ~200k USD salary x 1.5 overheads / 12 (planning assumption)"),
        Line(stage, "staff", "data-centre operations", operations.fte_months(f["ops_fte"], days / operations.DAYS_PER_MONTH),
             "FTE-month", x["staff_usd_per_month"], "fixed", "ops FTE x stage months", f["ops_source"]),
        Line(stage, "compute", "data-centre space", f["n_gpus"] * f["space_kw_per_gpu"] * days / operations.DAYS_PER_MONTH,
             "kW-month", x["colocation_usd_per_kw_month"], "fixed", "GPUs x kW per server GPU x stage months",
             f["space_source"]),
        Line(stage, "power", "electricity", total_hours * f["kwh_per_gpu_hour"], "kWh", f["power_price"], "elastic",
             "GPU-h x TDP x server factor x utilisation x PUE", f["power_source"])]


def pretrain_lines(x, f) -> list[Line]:
    """The pre-training run, its overheads, the trial-and-error runs before it, its storage and network."""
    hours = f["gpu_hours"]
    lines = [_compute("pretrain", "accelerator time", hours,
                      "6·N_active·D·(1 + s/(12·d_model)) / (peak FLOP/s × MFU × 3600)", f),
             *training_overheads("pretrain", x, f)]
    experiment_share = x["experiment_fraction"] + x["ablation_runs"] * x["ablation_run_fraction"]
    price, cost_type, source = _price("experiments", f)
    lines.append(Line("pretrain", "experiments", "trial-and-error and ablation runs", hours * experiment_share, "GPU-h",
                      price, cost_type, "pre-training GPU-h x (experiment_fraction + ablation_runs x ablation_run_fraction)",
                      _where(f["stage_mode"]["experiments"] != f["stage_mode"]["pretrain"], source,
                               "LLaMA 1 development used ~3.4x the GPU-h of its final models (Touvron et al. 2023)")))
    # owned GPUs running the experiments draw power, are operated and take their space as the run's do
    owned = np.asarray(f["stage_mode"]["experiments"] == "self_hosted", dtype=bool)
    experiment_hours = np.where(owned, hours * experiment_share, 0.0)
    gpu_months = experiment_hours / (24.0 * operations.DAYS_PER_MONTH)
    lines += [Line("pretrain", "power", "electricity (experiments)", experiment_hours * f["kwh_per_gpu_hour"], "kWh",
                   f["power_price"], "elastic", "experiment GPU-h x TDP x server factor x utilisation x PUE",
                   f["power_source"]),
              Line("pretrain", "staff", "data-centre operations (experiments)",
                   operations.fte_months(gpu_months / 1000.0, x["ops_fte_per_1000_gpus"]), "FTE-month",
                   x["staff_usd_per_month"], "fixed", "experiment GPU-months / 1000 x ops_fte_per_1000_gpus",
                   f["ops_source"]),
              Line("pretrain", "compute", "data-centre space (experiments)", gpu_months * f["space_kw_per_gpu"],
                   "kW-month", x["colocation_usd_per_kw_month"], "fixed", "experiment GPU-months x kW per server GPU",
                   f["space_source"])]
    price, cost_type, _ = _price("pretrain", f)
    allowed = np.asarray(x["divergence_allowance"]) == "expected"
    lines.append(Line("pretrain", "failures", "divergence restarts (expected)",
                      np.where(allowed, f["divergence_gpu_hours"], 0.0), "GPU-h", price, cost_type,
                      "(1 - e^-L) x rollback_share x GPU-h + (L - 1 + e^-L) / L of the run in the fallback format; "
                      "L = divergences per 1e12 tokens x tokens / 1e12",
                      _where(~allowed, "0: divergence_allowance = none",
                             _where(np.asarray(f["divergence_gpu_hours"]) > 0,
                                        "data/precision_risks.csv (Fishman et al. 2024 for fp8; planning assumptions)",
                                        "0: bf16 is the reference format, with no divergence risk of its own "
                                        "(data/precision_risks.csv)"))))
    return lines + storage_lines(x, f) + network_lines(x, f)


def storage_lines(x, f) -> list[Line]:
    """The corpus and checkpoints on the hot tier for the run, in object storage for their retention, and the
    final checkpoint and corpus in the archive."""
    dataset, checkpoint, run_months = f["dataset_bytes"], f["checkpoint_bytes"], f["run_months"]
    hot, obj, archive = (f["hot_storage_usd_per_gb_month"], f["object_storage_usd_per_gb_month"],
                         f["archive_storage_usd_per_gb_month"])
    items = [
        ("corpus on parallel file system", storage.gb_months(dataset, run_months), hot,
         "corpus bytes x run months", "hot_storage"),
        ("corpus copies in object storage", storage.gb_months(dataset * x["dataset_copies"], x["retention_months"]),
         obj, "corpus bytes x dataset_copies x retention_months", "object_storage"),
        ("checkpoints on parallel file system", storage.gb_months(checkpoint * x["checkpoints_kept_hot"], run_months),
         hot, "checkpoint bytes x checkpoints_kept_hot x run months", "hot_storage"),
        ("checkpoints in object storage", storage.gb_months(checkpoint * x["checkpoints_kept_object"], x["retention_months"]),
         obj, "checkpoint bytes x checkpoints_kept_object x retention_months", "object_storage"),
        ("final checkpoint and corpus in archive", storage.gb_months(checkpoint + dataset, x["archive_months"]),
         archive, "(checkpoint + corpus bytes) x archive_months", "archive_storage"),
    ]
    lines = [Line("pretrain", "storage", item, gb_month, "GB-month", unit_price, "elastic",
                  f"{formula}; corpus = tokens x bytes_per_token, checkpoint = params x checkpoint_bytes_per_param",
                  f[f"{tier}_usd_per_gb_month_source"])
             for item, gb_month, unit_price, formula, tier in items]
    # throughput beyond what the stored capacity brings is bought as more capacity of the same tier
    extra = np.maximum(f["pfs_throughput_gb_per_s"] - f["pfs_capacity_gb_per_s"], 0.0)
    lines.append(Line("pretrain", "storage", "parallel file system throughput", extra * run_months, "GB/s-month",
                      hot * 1024.0 / x["pfs_gb_per_s_per_tib"], "elastic",
                      "(throughput bought - stored TiB x pfs_gb_per_s_per_tib) x run months; a GB/s is "
                      "1 / pfs_gb_per_s_per_tib TiB of the tier",
                      _where(extra > 0, "throughput bought with capacity of the hot tier at its price per GB-month: "
                             + f["hot_storage_usd_per_gb_month_source"],
                             "0: the stored capacity brings the throughput the checkpoints need")))
    return lines


def network_lines(x, f) -> list[Line]:
    """Corpus ingest, the corpus read across regions when it is kept in another, cross-region copies of the kept
    checkpoints, and downloads of the weights."""
    return [
        Line("pretrain", "network", "corpus ingest", f["dataset_bytes"] / 1e9, "GB", x["ingest_usd_per_gb"], "elastic",
             "corpus bytes x ingest price",
             np.where(x["ingest_usd_per_gb"] > 0, "ingest_usd_per_gb",
                      "0: inbound transfer to the major clouds is not charged (ingest_usd_per_gb = 0)")),
        Line("pretrain", "network", "corpus read across regions", f["dataset_bytes"] / 1e9, "GB",
             f["corpus_read_usd_per_gb"], "elastic", "corpus bytes, read once from data_region into the cluster's region",
             f["corpus_read_usd_per_gb_source"]),
        Line("pretrain", "network", "cross-region checkpoint sync",
             f["checkpoint_bytes"] * x["checkpoints_kept_object"] * x["cross_region_copies"] / 1e9, "GB",
             f["cross_region_usd_per_gb"], "elastic", "checkpoint bytes x checkpoints_kept_object x cross_region_copies",
             f["cross_region_usd_per_gb_source"]),
        Line("pretrain", "network", "model weights egress", 2.0 * x["params"] * x["model_downloads"] / 1e9, "GB",
             f["egress_usd_per_gb"], "elastic", "2 bytes x params x model_downloads", f["egress_usd_per_gb_source"])]


def sft_lines(x, f) -> list[Line]:
    """Supervised fine-tuning: its compute and overheads, and the examples bought."""
    return [_compute("sft", "accelerator time", f["sft_gpu_hours"],
                     "(4 + 2·trainable_fraction)·N·D_sft + attention; D_sft = examples × tokens × epochs", f),
            *training_overheads("sft", x, f), finetuned_checkpoint_line("sft", x, f),
            *annotation_lines("sft", "SFT examples", x["sft_examples"], x["sft_usd_per_example"], x, "sft_usd_per_example")]


def preference_lines(x, f) -> list[Line]:
    """Preference tuning: reward model, rollouts and policy updates, overheads, and the comparisons bought."""
    return [_compute("preference", "reward model training", f["reward_model_gpu_hours"],
                     "6·N_rm·D_rm + attention; D_rm = pairs × tokens × epochs", f),
            _compute("preference", "rollout generation", f["rollout_gpu_hours"],
                     "2·N·T / (peak × rollout_mfu); T = prompts × samples × tokens", f),
            _compute("preference", "policy updates", f["policy_update_gpu_hours"], "(8·N + 2·N_rm)·T / (peak × MFU)", f),
            *training_overheads("preference", x, f), finetuned_checkpoint_line("preference", x, f),
            *annotation_lines("preference", "preference comparisons", x["preference_pairs"], x["preference_usd_per_pair"],
                              x, "preference_usd_per_pair: AlpacaEval 0.30 USD per comparison")]


def finetuned_checkpoint_line(stage, x, f) -> Line:
    """The final checkpoint of a fine-tuning stage that ran, kept in object storage for the retention period: each
    release leaves one behind, so that in a programme the versions' checkpoints pile up."""
    ran = np.asarray(f["stage_compute"][stage]) > 0
    return Line(stage, "storage", "fine-tuned checkpoint in object storage",
                np.where(ran, storage.gb_months(f["checkpoint_bytes"], x["retention_months"]), 0.0), "GB-month",
                f["object_storage_usd_per_gb_month"], "elastic",
                "checkpoint bytes x retention_months (the stage's final checkpoint, if the stage ran)",
                "one checkpoint per fine-tuning stage (planning assumption); object tier: "
                + f["object_storage_usd_per_gb_month_source"])


def evaluation_lines(x, f) -> list[Line]:
    """Benchmark runs on the checkpoints evaluated and their overheads, and what a release is judged by besides:
    people rating its answers, a judge model grading them, specialists red-teaming it."""
    return [_compute("evaluation", "benchmark runs", f["evaluation_gpu_hours"],
                     "2·N × eval_tokens_per_checkpoint × eval_checkpoints / (peak × MFU)", f),
            Line("evaluation", "annotation", "human evaluation", x["human_eval_ratings"], "rating",
                 x["human_eval_usd_per_rating"], "elastic", "human_eval_ratings per release", "human_eval_ratings"),
            Line("evaluation", "annotation", "model-judge calls",
                 x["judge_eval_prompts"] * x["judge_tokens_per_prompt"] / 1e6, "M tokens",
                 x["judge_usd_per_million_tokens"], "elastic", "judge_eval_prompts x judge_tokens_per_prompt",
                 "judge_usd_per_million_tokens"),
            Line("evaluation", "annotation", "red-teaming", x["red_team_hours"], "hour", x["red_team_usd_per_hour"],
                 "elastic", "red_team_hours per release", "red_team_usd_per_hour"),
            *training_overheads("evaluation", x, f)]


def serving_lines(x, f) -> list[Line]:
    """Serving replicas (always-on base and autoscaled), response egress, request logs, power and operations."""
    self_hosted, serving_on, autoscaled = x["pricing"] == "self_hosted", f["serving_on"], f["serving_autoscaled"]
    serve_hours, base_hours = f["serving_gpu_hours"], f["serving_base_gpu_hours"]
    price, _, base_source = _price("serving_base", f)
    peak_price, peak_cost_type, peak_source = _price("serving_peak", f)
    source = _where(serving_on, base_source, _NO_SERVING)
    return [
        Line("inference", "compute", "serving replicas (base)", base_hours, "GPU-h", price, "fixed",
             "replicas always running (fixed provisioning: the peak's; autoscaling: min_replicas) x GPUs per "
             "replica x 730.5 h x serving_months; replica throughput from the prefill/decode roofline", source),
        Line("inference", "compute", "serving replicas (autoscaled)", serve_hours - base_hours, "GPU-h", peak_price,
             np.where(self_hosted, "fixed", peak_cost_type),
             "(average replicas over the daily traffic curve - min_replicas) x GPUs per replica x 730.5 h x serving_months",
             _where(autoscaled, _where(serving_on, peak_source, _NO_SERVING),
                      np.where(self_hosted, "0: owned GPUs cost the same idle or busy; the fleet is sized for the peak "
                                            "(self_hosted)",
                               "0: fixed provisioning runs the peak's replicas all day (serving_provisioning = fixed)"))),
        Line("inference", "network", "response egress",
             np.where(serving_on, f["serving_month_output_tokens"] * x["egress_bytes_per_output_token"] / 1e9
                      * x["serving_months"], 0.0),
             "GB", f["egress_usd_per_gb"], "elastic", "output tokens/month x egress_bytes_per_output_token x serving_months",
             np.where(serving_on, f["egress_usd_per_gb_source"], _NO_SERVING)),
        Line("inference", "logging", "request logs",
             np.where(serving_on, f["serving_month_tokens"] * x["bytes_per_token"] * x["request_log_sampling"] / 1e9
                      * x["log_retention_days"] / serving.DAYS_PER_MONTH * x["serving_months"], 0.0),
             "GB-month", x["log_usd_per_gb_month"], "elastic", "tokens/month x bytes_per_token x "
             "request_log_sampling, kept log_retention_days, x serving_months",
             np.where(serving_on, "log_usd_per_gb_month", _NO_SERVING)),
        Line("inference", "logging", "request log ingestion",
             np.where(serving_on, f["serving_month_tokens"] * x["bytes_per_token"] * x["request_log_sampling"] / 1e9
                      * x["serving_months"], 0.0),
             "GB", x["log_ingest_usd_per_gb"], "elastic",
             "tokens/month x bytes_per_token x request_log_sampling x serving_months",
             np.where(serving_on, "log_ingest_usd_per_gb", _NO_SERVING)),
        Line("inference", "power", "electricity", serve_hours * f["kwh_per_gpu_hour"], "kWh", f["power_price"], "elastic",
             "GPU-h x TDP x server factor x utilisation x PUE", f["power_source"]),
        Line("inference", "staff", "serving team",
             operations.fte_months(np.where(serving_on, x["serving_staff_fte"], 0.0), x["serving_months"]),
             "FTE-month", x["staff_usd_per_month"], "fixed", "serving_staff_fte x serving_months",
             np.where(serving_on, "serving_staff_fte: one engineer for a served model (planning assumption)", _NO_SERVING)),
        Line("inference", "staff", "data-centre operations",
             operations.fte_months(np.where(self_hosted & serving_on,
                                            f["serving_gpus"] / 1000.0 * x["ops_fte_per_1000_gpus"], 0.0),
                                   x["serving_months"]),
             "FTE-month", x["staff_usd_per_month"], "fixed", "ops FTE x serving_months", f["ops_source"]),
        Line("inference", "compute", "data-centre space",
             np.where(serving_on, f["serving_gpus"] * f["space_kw_per_gpu"], 0.0) * x["serving_months"], "kW-month",
             x["colocation_usd_per_kw_month"], "fixed", "serving GPUs x kW per server GPU x serving_months",
             f["space_source"])]


def redundancy_lines(x, lines: list[Line]) -> list[Line]:
    """The contingency on each stage where the model is blind (:mod:`workbench.plan.contingency`): (redundancy_factor - 1)
    x the category's weight x each line, none on a line that prices its own risk or is known to the dollar; one line
    on the stage's fixed costs and one on its elastic costs, its type following theirs."""
    out = []
    for stage in STAGES:
        mine = [line for line in lines if line.stage == stage]
        weights = contingency.line_weight([line.category for line in mine], [line.item for line in mine])
        for cost_type, item in (("fixed", "engineering redundancy"), ("elastic", "engineering redundancy (elastic)")):
            covered = sum(line.cost_usd * w * (np.asarray(line.cost_type) == cost_type)
                          for line, w in zip(mine, weights) if w > 0)
            out.append(Line(stage, "redundancy", item, covered if not isinstance(covered, int) else np.zeros(()),
                            "USD", x["redundancy_factor"] - 1.0, cost_type,
                            f"(redundancy_factor - 1) x the stage's {cost_type} lines, each x its category's weight "
                            "(data/contingency.csv); none on failures, experiments, label rework and QA, idle "
                            "commitments",
                            "planning guides: redundancy factor typically 1.2-1.5; weights: data/contingency.csv"))
    return out


def annotation_lines(stage, what, count, unit_price, x, source) -> list[Line]:
    """Labels bought, the rework of noisy ones and the QA review, each at the unit price."""
    bought, redone, reviewed = annotation.annotation_units(count, x["annotation_rework_rate"], x["annotation_qa_share"])
    return [Line(stage, "annotation", item, units, "labels", unit_price, "elastic", formula, source)
            for item, units, formula in ((what, bought, "labels x unit price"),
                                         (f"{what}: rework of noisy labels", redone,
                                          "labels x annotation_rework_rate x unit price"),
                                         (f"{what}: QA review", reviewed, "labels x annotation_qa_share x unit price"))]


def lines_frame(lines: list[Line], shape) -> pd.DataFrame:
    """The tidy table of lines (columns :data:`LINE_COLUMNS`), one row per line and scenario of the batch."""
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
