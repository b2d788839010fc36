"""The full cost model: every category checked by hand, published headlines reproduced, properties."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import workbench
from workbench import Scenario, estimate
from workbench.formulas import budget, failures, serving
from workbench.plan.estimate import CATEGORIES, STAGES


def line(est, stage, item):
    lines = est.lines
    return lines[(lines["stage"] == stage) & (lines["item"] == item)].iloc[0]


@pytest.fixture(scope="module")
def default():
    return estimate()


def test_every_category_and_stage_present(default):
    assert set(default.lines["category"]) == set(CATEGORIES)
    assert set(default.lines["stage"]) == set(STAGES)
    zero = default.lines[default.lines["cost_usd"] == 0]
    # a zero line says why (or is a redundancy on an empty stage)
    assert all(src.startswith("0: ") or cat == "redundancy" for src, cat in zip(zero["source"], zero["category"]))
    nonzero = set(default.lines.loc[default.lines["cost_usd"] > 0, "category"])
    assert nonzero == set(CATEGORIES) - {"power"}  # power is in the cloud price


def test_storage_hand_checked(default):
    # corpus: 2e12 tokens x 4 bytes = 8,000 GB; 3 copies x 12 months x 0.023 = 6,624 USD
    assert line(default, "pretrain", "corpus copies in object storage")["cost_usd"] == pytest.approx(6624.0)
    # checkpoint: 7e9 x 14 bytes = 98 GB; 10 kept x 12 months x 0.023 = 270.48 USD
    assert line(default, "pretrain", "checkpoints in object storage")["cost_usd"] == pytest.approx(270.48)
    # archive: (98 + 8,000) GB x 36 months x 0.0036 = 1,049.5008 USD
    assert line(default, "pretrain", "final checkpoint and corpus in archive")["cost_usd"] == pytest.approx(1049.5008)
    # hot tier during the run: 8,000 GB x run months x 0.145
    months = default.details["pretrain_days_with_overheads"] / (365.25 / 12)
    assert line(default, "pretrain", "corpus on parallel file system")["cost_usd"] == pytest.approx(8000 * months * 0.145)
    assert line(default, "pretrain", "checkpoints on parallel file system")["cost_usd"] == pytest.approx(3 * 98 * months * 0.145)


def test_network_hand_checked(default):
    # sync: 98 GB x 10 checkpoints x 1 region x 0.02 = 19.60; egress: 14 GB x 10 downloads x 0.09 = 12.60
    assert line(default, "pretrain", "cross-region checkpoint sync")["cost_usd"] == pytest.approx(19.6)
    assert line(default, "pretrain", "model weights egress")["cost_usd"] == pytest.approx(12.6)
    ingest = line(default, "pretrain", "corpus ingest")
    assert ingest["cost_usd"] == 0 and ingest["quantity"] == pytest.approx(8000)
    assert estimate(ingest_usd_per_gb=0.01).lines.pipe(lambda l: l[l["item"] == "corpus ingest"]["cost_usd"].item()) == pytest.approx(80)


def test_annotation_hand_checked(default):
    # SFT: 27,540 x 10 USD = 275,400; rework 10 % = 27,540; QA 10 % = 27,540
    assert line(default, "sft", "SFT examples")["cost_usd"] == pytest.approx(275_400)
    assert line(default, "sft", "SFT examples: rework of noisy labels")["cost_usd"] == pytest.approx(27_540)
    assert line(default, "sft", "SFT examples: QA review")["cost_usd"] == pytest.approx(27_540)
    # preference: 1,418,091 x 0.30 = 425,427.30
    assert line(default, "preference", "preference comparisons")["cost_usd"] == pytest.approx(425_427.3)
    # evaluation per release: 12,000 human ratings x 0.30 = 3,600; 1,465 judge prompts x 2,500 tokens x 4 USD/M
    # = 14.65; 80 red-teaming hours x 100 = 8,000
    assert line(default, "evaluation", "human evaluation")["cost_usd"] == pytest.approx(3_600)
    assert line(default, "evaluation", "model-judge calls")["cost_usd"] == pytest.approx(14.65)
    assert line(default, "evaluation", "red-teaming")["cost_usd"] == pytest.approx(8_000)
    total = default.totals("category")["annotation"]
    assert total == pytest.approx((275_400 + 425_427.3) * 1.2 + 3_600 + 14.65 + 8_000)


def test_logging_and_staff_hand_checked(default):
    gpu_days = line(default, "pretrain", "accelerator time")["quantity"] + line(default, "pretrain", "lost work and restarts")["quantity"] \
        + line(default, "pretrain", "checkpoint writes")["quantity"]
    gpu_days /= 24
    # GPU-days x 0.1 GB x 90 days retention / 30.4375 days per month x 0.03 USD (CloudWatch Logs storage), and the
    # same GB ingested at 0.50 USD (issue 28: observability as billed)
    assert line(default, "pretrain", "logs and metrics")["cost_usd"] == pytest.approx(gpu_days * 0.1 * 90 / 30.4375 * 0.03)
    assert line(default, "pretrain", "log ingestion")["cost_usd"] == pytest.approx(gpu_days * 0.1 * 0.50)
    # 4 FTE x the pre-training months x 25,000 USD
    months = default.details["pretrain_days_with_overheads"] / 30.4375
    assert line(default, "pretrain", "project team")["cost_usd"] == pytest.approx(4 * months * 25_000)
    assert default.totals("category")["staff"] == pytest.approx(
        4 * default.details["training_days_total"] / 30.4375 * 25_000)
    assert estimate(staff_months=6).totals("category")["staff"] == pytest.approx(4 * 6 * 25_000)


def test_experiments_and_redundancy_hand_checked(default):
    hours = default.gpu_hours
    assert line(default, "pretrain", "trial-and-error and ablation runs")["cost_usd"] == pytest.approx(0.5 * hours * 3.99)
    more = estimate(ablation_runs=20, ablation_run_fraction=0.01)
    assert line(more, "pretrain", "trial-and-error and ablation runs")["quantity"] == pytest.approx(0.7 * hours)
    # contingency where the model is blind (issue 28): 0.3 x the category's weight, none on modelled risks
    weight = {"compute": 0.5, "storage": 1.0, "network": 1.0, "annotation": 0.33, "logging": 1.0, "staff": 0.5,
              "power": 0.5, "failures": 0.0, "experiments": 0.0}
    for stage in STAGES:
        stage_lines = default.lines[default.lines["stage"] == stage]
        for cost_type in ("fixed", "elastic"):
            covered = stage_lines[(stage_lines["category"] != "redundancy") & (stage_lines["cost_type"] == cost_type)
                                  & ~stage_lines["item"].str.contains("rework|QA review")]
            expected = 0.3 * (covered["cost_usd"] * covered["category"].map(weight)).sum()
            got = stage_lines[(stage_lines["category"] == "redundancy") & (stage_lines["cost_type"] == cost_type)]
            assert got["cost_usd"].item() == pytest.approx(expected, abs=1e-9)
    for item in ("lost work and restarts", "trial-and-error and ablation runs"):
        assert line(default, "pretrain", item)["cost_usd"] > 0  # priced, and carrying no contingency (above)
    flat = estimate(redundancy_factor=1.0)
    assert flat.totals("category")["redundancy"] == 0
    redundancy = default.totals("category")["redundancy"]
    assert default.total_cost_usd == pytest.approx(flat.total_cost_usd + redundancy)
    # the done-when of issue 28: below the pre-training GPU compute, and 0 on failures, experiments, rework
    compute = default.lines[(default.lines["stage"] == "pretrain") & (default.lines["item"] == "accelerator time")]
    assert redundancy < compute["cost_usd"].sum()
    assert round(redundancy) == 143_200 and round(default.total_cost_usd) == 1_667_524  # 129,846 and 1,540,365 before issue 29


def test_failures_hand_checked():
    # 1,024 GPUs at 4.736e-4 failures per GPU-day: 0.485 interruptions/day, MTBF 49.5 h
    rate = failures.LLAMA3_RATE_PER_GPU_DAY
    assert failures.mtbf_hours(failures.cluster_interruptions_per_day(1024, rate)) == pytest.approx(24 / (1024 * rate))
    # 70B x 14 bytes = 980 GB written by 1,024 GPUs at 0.12 GB/s = 7.975 s
    write = failures.checkpoint_write_hours(980e9, 1024, 0.12)
    assert write * 3600 == pytest.approx(980 / (1024 * 0.12))
    tau = failures.young_daly_interval_hours(write, 49.5)
    assert tau == pytest.approx(np.sqrt(2 * write * 49.5))
    # 1,000 h of training: 1,000 / 49.5 interruptions x (tau/2 + 1/6 h) x 1,024 GPUs lost
    o = failures.overhead(1000, 1024, 24 / 49.5, tau, write, 10 / 60)
    assert o["interruptions"] == pytest.approx(1000 / 49.5)
    assert o["lost_gpu_hours"] == pytest.approx(1000 / 49.5 * (tau / 2 + 10 / 60) * 1024)
    assert o["checkpoint_gpu_hours"] == pytest.approx(1000 / tau * write * 1024)


def test_llama3_interruptions_reproduced():
    # 16,384 GPUs for 54 days at the default rate: 419 interruptions (Llama 3, Sec. 3.3.4)
    default_rate = workbench.plan.scenario.fields()["gpu_failure_rate_per_day"].default
    assert failures.cluster_interruptions_per_day(16_384, default_rate) * 54 == pytest.approx(419, abs=0.5)
    # through the API: a 405B run on 16,384 H100 is interrupted every ~3 h
    est = estimate(Scenario(params=405e9, tokens=15.6e12, seq_len=8192, gpu="H100", n_gpus=16_384))
    assert est.details["interruptions_per_day"] * 54 == pytest.approx(419, abs=0.5)
    assert est.details["cluster_mtbf_hours"] == pytest.approx(3.09, abs=0.01)
    # and the time lost stays near Llama 3's ">90 % effective training time"
    lost = (line(est, "pretrain", "lost work and restarts")["quantity"] + line(est, "pretrain", "checkpoint writes")["quantity"])
    assert 0.03 < lost / est.gpu_hours < 0.10


def test_deepseek_v3_headline_reproduced():
    # 2.788M H800 GPU-hours at 2 USD = 5.576M USD of compute (DeepSeek-V3 report, Table 1)
    s = Scenario(params=671e9, active_params=37e9, tokens=14.8e12, seq_len=4096, gpu="H800", n_gpus=2048,
                 price_per_gpu_hour=2.0)
    est = estimate(s)
    compute = line(est, "pretrain", "accelerator time")
    # with the layout model on 2,048 H800 (bf16 here, DeepSeek trained in fp8: 1.34x faster) and the experts' share
    # of the four mixture-of-experts runs (0.74): 24 % more GPU-hours than its 2,664K of pre-training
    assert compute["quantity"] == pytest.approx(2.664e6 * 1.241, rel=0.01)
    assert compute["cost_usd"] == pytest.approx(2.0 * compute["quantity"])
    # at the MFU the report implies, the report's GPU-hours and cost
    implied = est.training_flops / (989e12 * 2.788e6 * 3600)
    exact = line(estimate(s.replace(mfu=implied)), "pretrain", "accelerator time")
    assert exact["quantity"] == pytest.approx(2.788e6) and exact["cost_usd"] == pytest.approx(5.576e6)
    # the same through the reference price on record: provider deepseek-v3-report
    same = estimate(s.replace(price_per_gpu_hour=None, provider="deepseek-v3-report"))
    assert line(same, "pretrain", "accelerator time")["unit_cost_usd"] == 2.0


def test_spot_with_zero_interruptions_is_price_times_hours():
    s = Scenario(pricing="spot", gpu_failure_rate_per_day=0, spot_interruptions_per_node_month=0)
    est = estimate(s)
    spot_price = workbench.reference.prices.lookup("H100-SXM5-80GB", "spot")[0]
    compute = line(est, "pretrain", "accelerator time")
    assert compute["cost_usd"] == pytest.approx(spot_price * est.gpu_hours)
    assert est.lines.loc[est.lines["category"] == "failures", "cost_usd"].sum() == 0
    # interruptions make spot lose work that on-demand does not
    interrupted = estimate(s.replace(spot_interruptions_per_node_month=2.0))
    assert interrupted.totals("category")["failures"] > 0
    on_demand = estimate(s.replace(pricing="on_demand"))
    assert on_demand.totals("category")["failures"] == 0


def test_self_hosted_hand_checked():
    est = estimate(Scenario(pricing="self_hosted"))
    # 30,000 USD x (1 + 0.5 + 0.19) / (4 years x 8,766 h) = 1.44592 USD per GPU-hour
    assert line(est, "pretrain", "accelerator time")["unit_cost_usd"] == pytest.approx(30_000 * 1.69 / (4 * 8766))
    # power: 0.7 kW x 1.82 x 0.75 x 1.2 = 1.1466 kWh per GPU-hour at 0.08 USD
    power = line(est, "pretrain", "electricity")
    gpu_hours = est.lines[(est.lines["stage"] == "pretrain") & est.lines["unit"].eq("GPU-h")
                          & est.lines["category"].isin(["compute", "failures"]) & ~est.lines["item"].eq("host CPU share")
                          & ~est.lines["item"].str.startswith("idle committed")]  # idle GPUs' power is not priced
    assert power["quantity"] == pytest.approx(gpu_hours["quantity"].sum() * 0.7 * 1.82 * 0.75 * 1.2)
    assert power["unit_cost_usd"] == 0.08
    ops = line(est, "pretrain", "data-centre operations")
    assert ops["quantity"] == pytest.approx(est.n_gpus / 1000 * 3 * est.details["pretrain_days_with_overheads"] / 30.4375)
    assert set(est.lines.loc[est.lines["category"] == "compute", "cost_type"]) == {"fixed"}
    with pytest.raises(workbench.ScenarioError, match="^gpu_purchase_usd=None: no purchase price on record for L40S"):
        Scenario(pricing="self_hosted", gpu="L40S")
    assert Scenario(pricing="self_hosted", gpu="L40S", gpu_purchase_usd=8000).gpu == "L40S"


def test_pricing_modes_order():
    """By the hour, a longer commitment is cheaper; a short run on a commitment pays the whole term (issue 28): a
    14-day run on a 1-year reservation costs more than on demand, unless other work fills the rest."""
    def compute(mode, **kw):
        lines = estimate(pricing=mode, **kw).lines
        return lines[(lines["category"] == "compute") & ~lines["item"].str.startswith("idle committed")]["cost_usd"].sum()

    hourly = {mode: compute(mode) for mode in ("on_demand", "reserved_1y", "reserved_3y", "spot")}
    assert hourly["reserved_3y"] < hourly["reserved_1y"] < hourly["on_demand"] and hourly["spot"] < hourly["on_demand"]
    totals = {mode: estimate(pricing=mode).total_cost_usd for mode in ("on_demand", "reserved_1y", "reserved_3y",
                                                                      "self_hosted")}
    assert totals["on_demand"] < totals["reserved_1y"] < totals["reserved_3y"]
    assert totals["self_hosted"] > totals["on_demand"]
    filled = estimate(pricing="reserved_1y", commitment_other_use_share=1.0).total_cost_usd
    assert filled < totals["on_demand"]
    # a run that holds the cluster for most of the year leaves little of it idle, and costs less than on demand
    kw = dict(n_gpus=256, mfu=0.35, experiment_fraction=0.0, ablation_runs=0, sft_examples=0, preference_pairs=0,
              rl_prompts=0, eval_checkpoints=0)
    days = estimate(tokens=2e12, pricing="reserved_1y", **kw).details["pretrain_days_with_overheads"]
    year = estimate(tokens=2e12 * 360 / days, pricing="reserved_1y", **kw)
    idle = year.lines.loc[year.lines["item"] == "idle committed capacity", "quantity"].sum()
    assert 0 < idle < 0.03 * 256 * 8766
    assert year.total_cost_usd < estimate(tokens=2e12 * 360 / days, **kw).total_cost_usd


def test_a_commitment_is_paid_whole_by_hand():
    """The run's n GPUs (160, auto-sized) reserved for 1 year; the run holds them for H GPU-hours (pre-training,
    post-training and the experiments on the same cluster): idle = n x 8,766 - H GPU-h at the reserved price,
    without redundancy."""
    est = estimate(pricing="reserved_1y")
    d, lines = est.details, est.lines
    price = line(est, "pretrain", "accelerator time")["unit_cost_usd"]
    held = sum(lines.loc[(lines["stage"] == s) & lines["category"].isin(["compute", "failures", "experiments"])
                         & lines["unit"].eq("GPU-h") & ~lines["item"].isin(["host CPU share", "idle committed capacity"]),
                         "quantity"].sum() for s in ("pretrain", "sft", "preference", "evaluation"))
    idle = line(est, "pretrain", "idle committed capacity")
    assert est.n_gpus == 160 and idle["quantity"] == pytest.approx(160 * 8766 - held, rel=1e-9)
    assert idle["unit_cost_usd"] == price and idle["cost_type"] == "fixed"
    # no contingency on the idle hours: the redundancy is the same with them filled
    filled = estimate(pricing="reserved_1y", commitment_other_use_share=1.0)
    assert est.totals("category")["redundancy"] == pytest.approx(filled.totals("category")["redundancy"], rel=1e-12)
    half = estimate(pricing="reserved_1y", commitment_other_use_share=0.5)
    assert line(half, "pretrain", "idle committed capacity")["cost_usd"] == pytest.approx(idle["cost_usd"] / 2)
    owned = estimate(pricing="self_hosted")
    # owned GPUs depreciate over 4 years: 160 x 4 x 8,766 GPU-h are paid, busy or idle
    idle_owned = line(owned, "pretrain", "idle committed capacity")["quantity"]
    assert idle_owned == pytest.approx(160 * 4 * 8766 - held, rel=1e-6)


def test_sft_lora_is_cheaper_and_hand_checked():
    full = estimate(n_gpus=64)
    lora = estimate(n_gpus=64, sft_trainable_fraction=0.01)
    d = full.details
    tokens = 27_540 * 798.5 * 2
    attention = 6 * tokens * d["n_layers"] * 4096 * d["d_model"]
    hours = ((4 + 2) * 7e9 * tokens + attention) / (989e12 * full.mfu * 3600)
    assert line(full, "sft", "accelerator time")["quantity"] == pytest.approx(hours)
    lora_hours = ((4 + 0.02) * 7e9 * tokens + attention) / (989e12 * full.mfu * 3600)
    assert line(lora, "sft", "accelerator time")["quantity"] == pytest.approx(lora_hours)


def test_preference_compute_hand_checked(default):
    t = 31_000 * 4 * 512
    rollout = 2 * 7e9 * t / (989e12 * 0.1 * 3600)
    assert line(default, "preference", "rollout generation")["quantity"] == pytest.approx(rollout)
    updates = (8 * 7e9 + 2 * 7e9) * t / (989e12 * default.mfu * 3600)
    assert line(default, "preference", "policy updates")["quantity"] == pytest.approx(updates)


def test_serving_hand_checked():
    """7B (d 4096, 32 layers, 8 KV heads) on one H100 per replica, prefill disaggregated, worked by hand."""
    s = Scenario(serving_months=12, d_model=4096, n_layers=32, n_kv_heads=8, serving_tensor_parallel=1,
                 serving_prefill="disaggregated")
    est = estimate(s)
    d = est.details
    kv_token = 2 * 32 * 8 * 128 * 2                      # 131,072 bytes per token of context
    kv_sequence = kv_token * (1000 + 300 / 2)           # mean context 1,150 tokens
    bandwidth, flops = 3.35e12 * 0.6, 989e12 * 0.5      # achieved bytes/s and FLOP/s
    # KV room (80 GiB x 0.9 - 14 GB) / 150.7 MB = 420; latency (50 ms - 14 GB / 2.01 TB/s) / 0.075 ms = 573;
    # the scheduler's 256 binds
    assert (80 * 2**30 * 0.9 - 14e9) / kv_sequence == pytest.approx(420.1, abs=0.1)
    assert d["serving_batch"] == 256 and d["serving_batch_limit"] == "max batch"
    step = (14e9 + 256 * kv_sequence) / bandwidth       # memory-bound: 26.16 ms > compute 7.56 ms
    assert d["serving_tpot_ms"] == pytest.approx(step * 1000) and step == pytest.approx(0.02616, abs=1e-5)
    prefill = (2 * 7e9 * 1000 + 2 * 32 * 4096 * 1000**2) / flops  # 28.84 ms
    assert d["serving_ttft_s"] == pytest.approx(prefill)
    request = prefill + 300 * step / 256                # 59.5 ms of a replica per request
    assert d["serving_tokens_per_second_per_gpu"] == pytest.approx(1300 / request)
    # peak 1e6 / 86,400 x 3 = 34.7 requests/s over 16.8 per replica -> 3 replicas of one GPU
    assert d["serving_gpus"] == 3
    price = 3.99
    assert d["serving_cost_per_month_usd"] == pytest.approx(3 * 730.5 * price)
    month = 3 * 730.5 * price
    assert d["serving_cost_per_million_input_tokens_usd"] == pytest.approx(
        month * prefill / request / (1e6 * 30.4375 * 1000 / 1e6))
    assert d["serving_cost_per_million_output_tokens_usd"] == pytest.approx(
        month * (1 - prefill / request) / (1e6 * 30.4375 * 300 / 1e6))
    assert line(est, "inference", "serving replicas (base)")["cost_usd"] == pytest.approx(3 * 730.5 * 12 * price)
    assert line(est, "inference", "serving replicas (autoscaled)")["cost_usd"] == 0
    # egress: 1e6 x 300 tokens x 30.4375 days x 4 bytes x 12 months at 0.09 USD/GB
    assert line(est, "inference", "response egress")["cost_usd"] == pytest.approx(1e6 * 300 * 30.4375 * 4 / 1e9 * 12 * 0.09)
    # request logs: 1,300 tokens x 4 bytes per request, kept 90 days, every month of 12
    assert line(est, "inference", "request logs")["quantity"] == pytest.approx(
        1e6 * 1300 * 30.4375 * 4 / 1e9 * 90 / 30.4375 * 12)


def test_stage_totals_and_split(default):
    by_stage = default.totals("stage")
    assert list(by_stage.index) == list(STAGES)
    assert by_stage.sum() == pytest.approx(default.total_cost_usd)
    split = default.totals("group")
    assert split["finetune"] == pytest.approx(by_stage["sft"] + by_stage["preference"])
    assert default.totals("cost_type").sum() == pytest.approx(default.total_cost_usd)


def test_currency(default):
    out = default.to_dict()
    assert out["total_cost_cny"] == pytest.approx(default.total_cost_usd * 7.1)
    assert estimate(cny_per_usd=7.3).to_dict()["total_cost_cny"] == pytest.approx(default.total_cost_usd * 7.3)


def test_budget_crossings(default):
    table = budget.crossings(default)
    assert list(table["alert_percent"]) == [30, 50, 80, 100]
    assert table["crossed"].all()
    assert table["day"].is_monotonic_increasing
    assert table["day"].iloc[-1] == pytest.approx(default.details["training_days_total"])
    # twice the plan as budget: 50 % is reached on the last day, 80 % never
    doubled = budget.crossings(default, 2 * default.total_cost_usd)
    assert doubled.loc[doubled["alert_percent"] == 50, "day"].item() == pytest.approx(default.details["training_days_total"])
    assert not doubled.loc[doubled["alert_percent"] == 80, "crossed"].item()
    assert np.isnan(doubled.loc[doubled["alert_percent"] == 80, "day"].item())


def test_budget_crossing_is_exact_for_a_linear_burn():
    # only pre-training compute (every other cost off): spend grows linearly over the run
    off = dict(sft_examples=0, preference_pairs=0, rl_prompts=0, eval_checkpoints=0, staff_fte=0, redundancy_factor=1,
               experiment_fraction=0, dataset_copies=0, checkpoints_kept_hot=0, checkpoints_kept_object=0,
               archive_months=0, model_downloads=0, log_gb_per_gpu_day=0, gpu_failure_rate_per_day=0,
               hot_storage_usd_per_gb_month=0, alert_percents="25,50")
    est = estimate(Scenario(**off))
    table = budget.crossings(est)
    end = est.details["training_days_total"]
    assert table["day"].tolist() == pytest.approx([end / 4, end / 2, end])
    burn = budget.burn(est)
    assert burn["spent_usd"].is_monotonic_increasing and burn["spent_share"].iloc[-1] == pytest.approx(1.0)


def test_json_has_stage_totals_and_alerts(default):
    out = default.to_dict()
    assert set(out["totals_by_stage"]) == set(STAGES)
    assert {"pretrain", "finetune", "inference"} == set(out["totals_by_group"])
    assert len(out["budget_alerts"]) == 4


def test_sensitivity_frame():
    table = workbench.sensitivity(Scenario())
    assert list(table.columns[:6]) == ["input", "label", "unit", "base_value", "low_value", "high_value"]
    assert table["swing_usd"].is_monotonic_decreasing
    assert {"params", "tokens", "seq_len", "mfu", "price_per_gpu_hour", "n_gpus", "gpu_failure_rate_per_day",
            "sft_examples", "preference_usd_per_pair", "redundancy_factor"} <= set(table["input"])
    base = estimate().total_cost_usd
    assert (table["base_total_usd"] == base).all()
    red = table.set_index("input").loc["redundancy_factor"]
    assert (red["low_value"], red["high_value"]) == (1.2, 1.5)
    flat = estimate(redundancy_factor=1.0).total_cost_usd  # the contingency is linear in the factor
    assert red["low_total_usd"] == pytest.approx(flat + (base - flat) * 0.2 / 0.3)
    price = table.set_index("input").loc["price_per_gpu_hour"]
    assert price["low_value"] == pytest.approx(3.99 * 0.75) and price["high_total_usd"] > base > price["low_total_usd"]
    mfu = table.set_index("input").loc["mfu"]
    assert mfu["high_total_usd"] < base < mfu["low_total_usd"]


inputs = st.fixed_dictionaries({
    "params": st.floats(1e8, 1e12), "tokens": st.floats(1e9, 3e13), "seq_len": st.integers(512, 65536),
    "pricing": st.sampled_from(["on_demand", "reserved_1y", "reserved_3y", "spot", "self_hosted"]),
    "gpu": st.sampled_from(["H100", "A100", "H200", "B200"]), "serving_months": st.floats(0, 24),
    "sft_examples": st.floats(0, 1e6), "preference_pairs": st.floats(0, 1e7),
    "gpu_failure_rate_per_day": st.floats(0, 1e-2), "n_gpus": st.integers(8, 20000),
})


@settings(max_examples=100, deadline=None)
@given(inputs, st.sampled_from(["sft_examples", "preference_pairs", "gpu_failure_rate_per_day", "serving_months",
                                "params", "tokens"]), st.floats(1.1, 4))
def test_every_line_non_negative_and_total_monotonic(kw, name, factor):
    # the global batch given: by default it grows with the run's compute, and a larger batch lets more layouts
    # keep it (a tiny model on many GPUs can then get a little cheaper with more tokens)
    kw = {**kw, "global_batch_tokens": 4e6}
    base = estimate(Scenario(**kw))
    assert (base.lines["cost_usd"] >= 0).all() and np.isfinite(base.lines["cost_usd"]).all()
    bigger = kw[name] * factor if kw[name] > 0 else 1.0
    spec = workbench.plan.scenario.fields()[name]
    bigger = min(bigger, spec.max)
    if spec.type == "int":
        bigger = int(bigger)
    if bigger <= kw[name]:
        return
    more = estimate(Scenario(**{**kw, name: bigger}))
    if base.details["layout_fits"] and not more.details["layout_fits"]:
        # the larger plan no longer fits in memory: it has no price (the app strikes its total through and says
        # which field to change); its total is that of the least-memory layout, which may run faster than the
        # layout the smaller plan fitted with (found by the suite on its floor's versions, 2026-12-05)
        assert any(w.startswith("the model does not fit in memory") for w in more.warnings)
        return
    assert more.total_cost_usd >= base.total_cost_usd


def test_batch_of_full_model_equals_loop():
    frame = pd.DataFrame({"pricing": ["spot", "self_hosted", "reserved_1y"], "serving_months": [0, 6, 12],
                          "params": [1e9, 7e10, 4e11]})
    batch = estimate(Scenario.from_frame(frame))
    for i, row in frame.iterrows():
        single = estimate(Scenario(**row.to_dict()))
        assert batch.total_cost_usd[i] == pytest.approx(single.total_cost_usd)
        assert batch.totals("stage")[i].to_numpy() == pytest.approx(single.totals("stage").to_numpy())


def test_sensitivity_and_monte_carlo_accept_the_estimate_at_hand():
    s = Scenario(params=13e9)
    est = estimate(s)
    assert workbench.sensitivity(s, base=est).equals(workbench.sensitivity(s))
    assert workbench.monte_carlo(s, n=500, base=est).samples.equals(workbench.monte_carlo(s, n=500).samples)


def test_the_file_systems_speed_is_bought_by_hand():
    """Issue 28: the write time follows from the throughput bought; throughput beyond the stored capacity's is a
    line per GB/s-month; the checkpoint interval moves storage and lost work together."""
    est = estimate()
    d, lines = est.details, est.lines
    stored_tib = (d["dataset_bytes"] + 3 * d["checkpoint_bytes"]) / 2**40  # corpus + 3 hot checkpoints
    assert d["pfs_throughput_gb_per_s"] == pytest.approx(stored_tib * 0.125, rel=1e-9)  # FSx: 125 MB/s per TiB
    assert d["checkpoint_write_seconds"] == pytest.approx(d["checkpoint_bytes"] / 1e9 / d["pfs_throughput_gb_per_s"])
    throughput = line(est, "pretrain", "parallel file system throughput")
    assert throughput["unit"] == "GB/s-month" and throughput["unit_cost_usd"] == pytest.approx(0.145 * 1024 / 0.125)
    assert throughput["cost_usd"] == 0 and throughput["source"].startswith("0: ")
    storage = {h: estimate(checkpoint_interval_hours=h).totals("category")["storage"] for h in (0.25, 24)}
    assert storage[0.25] > storage[24] * 1.2
    # 0.25 h: each write within 2 % of the interval: 98 GB in 18 s, 5.4 GB/s, 4.5 of them beyond the stored TiB
    quick = estimate(checkpoint_interval_hours=0.25)
    gb = quick.details["checkpoint_bytes"] / 1e9
    assert quick.details["pfs_throughput_gb_per_s"] == pytest.approx(gb / (0.02 * 0.25 * 3600))
    extra = line(quick, "pretrain", "parallel file system throughput")
    months = quick.details["pretrain_days_with_overheads"] / (365.25 / 12)
    assert extra["quantity"] == pytest.approx((quick.details["pfs_throughput_gb_per_s"] - stored_tib * 0.125)
                                              * months, rel=1e-9)
    # asynchronous: the job waits for the copy at the GPUs' rate only
    fast = estimate(checkpoint_writes="asynchronous")
    assert fast.details["checkpoint_write_seconds"] == pytest.approx(gb / (160 * 0.12))
    given = estimate(pfs_throughput_gb_per_s=30)
    assert given.details["checkpoint_write_seconds"] == pytest.approx(gb / 19.2)  # the GPUs' 160 x 0.12 bind


def test_a_405b_run_writes_at_the_throughput_it_buys():
    est = estimate(params=405e9, tokens=15.6e12, n_gpus=16384)
    d = est.details
    write = d["checkpoint_bytes"] / 1e9 / min(d["pfs_throughput_gb_per_s"], 16384 * 0.12)
    assert d["checkpoint_write_seconds"] == pytest.approx(write)
    assert d["pfs_throughput_gb_per_s"] < 1966  # the 1,966 GB/s the 405B run once assumed
    assert d["checkpoint_interval_hours"] == pytest.approx(np.sqrt(2 * write / 3600 * d["cluster_mtbf_hours"]))


def test_checkpointing_the_file_system_cannot_keep_up_with_is_said():
    slow = estimate(params=405e9, n_gpus=16384, pfs_throughput_gb_per_s=0.01, gpu_failure_rate_per_day=0.1)
    assert [w for w in slow.warnings if "longer than the cluster's" in w and "rarely finish" in w]
    piled = estimate(checkpoint_writes="asynchronous", checkpoint_interval_hours=0.01, pfs_throughput_gb_per_s=0.01)
    assert not [w for w in estimate(checkpoint_writes="asynchronous", checkpoint_interval_hours=0.01).warnings
                if "pile up" in w]  # sized: it buys bytes / interval
    assert [w for w in piled.warnings if "checkpoints would pile up in host memory" in w]
    assert not [w for w in estimate().warnings if "pfs_throughput_gb_per_s=" in w]


def test_no_idle_reservation_warning_when_other_work_fills_the_term():
    filled = estimate(params=1e9, n_gpus=8, tokens=20e9, pricing="reserved_3y", commitment_other_use_share=1.0)
    assert not [w for w in filled.warnings if "paid idle" in w]
    assert [w for w in estimate(params=1e9, n_gpus=8, tokens=20e9, pricing="reserved_3y").warnings if "paid idle" in w]


def test_a_team_paid_for_a_year_is_spent_over_the_year_not_in_the_gpus_days():
    """From the finance lead's second session: a fine-tune of 0.8 days with staff months 12 put the year's pay on
    its first day, and the alert lines with it (30 % and 50 % on day 0.4 and 0.7). The team is spent over its
    months; the burn still ends at the total."""
    est = workbench.estimate(workbench.Scenario(plan_kind="open_weights", params=70e9, serving_months=12,
                                                staff_months=12, budget_usd=30e6 / 7.1))
    burn = budget.burn(est)
    assert burn["spent_usd"].iloc[-1] == pytest.approx(est.total_cost_usd, rel=1e-12)
    alerts = budget.crossings(est, table=burn).set_index("alert_percent")
    assert alerts.loc[30.0, "day"] > 10 and alerts.loc[50.0, "day"] > 100
    team = est.lines.loc[est.lines["item"] == "project team", "cost_usd"].sum()
    month_one = np.interp(365.25 / 12, burn["day"], burn["spent_usd"])
    assert month_one < est.total_cost_usd - team * 10 / 12  # at most about a month of the team's pay in month one
