"""Serving roofline: hand-checked figures, the limits that bind, monotonic properties, the CLI."""
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import workbench
from workbench import Scenario, ScenarioError, estimate
from workbench.formulas import serving
from workbench.cli import main

H100 = dict(memory_bytes_per_gpu=80 * 2**30, usable_memory_fraction=0.9, bandwidth_bytes_per_s_per_gpu=3.35e12,
            peak_flops_per_s_per_gpu=989e12, serving_mfu=0.5, serving_mbu=0.6)
LLAMA_70B = dict(params=70e9, active_params=70e9, d_model=8192, n_layers=80, n_kv_heads=8, head_dim=128,
                 weight_precision="bf16", kv_precision="bf16")


def plan(**changes):
    args = dict(**H100, **LLAMA_70B, input_tokens=1000, output_tokens=300, prefix_cache_hit_rate=0.0,
                tpot_target_s=0.05, ttft_target_s=np.nan, max_batch=256)
    args.update(changes)
    return {k: (v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v) for k, v in serving.plan(**args).items()}


def test_kv_cache_of_llama_3_70b():
    # 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 bytes = 327,680 bytes per token
    assert serving.kv_bytes_per_token(80, 8, 128, "bf16") == 327_680
    assert serving.kv_bytes_per_token(80, 8, 128, "fp8") == 163_840
    assert serving.kv_bytes_per_token(80, 64, 128, "int4") == 327_680 * 8 / 4


def test_prefill_and_decode_flops_by_hand():
    # 2 N L + 2 n_layers d L^2: 2 x 70e9 x 1000 + 2 x 80 x 8192 x 1e6
    assert serving.prefill_flops(70e9, 1000, 8192, 80) == pytest.approx(1.4e14 + 1.31072e12)
    assert serving.cached_prefill_flops(70e9, 1000, 0, 8192, 80) == serving.prefill_flops(70e9, 1000, 8192, 80)
    assert serving.cached_prefill_flops(70e9, 1000, 1000, 8192, 80) == 0
    assert serving.decode_flops_per_token(70e9, 1150, 8192, 80) == pytest.approx(1.4e11 + 4 * 80 * 8192 * 1150)


def test_llama_70b_on_8_h100_by_hand():
    """tp 8, interleaved (chunked) prefill, 50 ms per token, worked by hand."""
    p = plan(replica_gpus=8)
    bandwidth, flops = 8 * 3.35e12 * 0.6, 8 * 989e12 * 0.5
    kv_sequence = 327_680 * 1150                      # at the mean context of 1,000 + 300 / 2 tokens
    prefill = (1.4e14 + 1.31072e12) / flops            # 35.7 ms of the replica per prompt
    decode_flops = 1.4e11 + 4 * 80 * 8192 * 1150
    # a step reads the weights once and each sequence's KV cache; its compute holds the decode tokens and the
    # prompts that arrive meanwhile (batch / 300 per step): the slower of the two
    memory_limit = (0.05 - 140e9 / bandwidth) / (kv_sequence / bandwidth)
    compute_limit = 0.05 / (decode_flops / flops + prefill / 300)
    assert (memory_limit, compute_limit) == (pytest.approx(1762.1, abs=0.1), pytest.approx(322.1, abs=0.1))
    assert p["batch"] == 256 and p["batch_limit"] == "max batch"
    memory_s = (140e9 + 256 * kv_sequence) / bandwidth  # 14.7 ms
    assert p["step_s"] == pytest.approx(max(memory_s, 256 * decode_flops / flops))
    assert p["tpot_s"] == pytest.approx(max(memory_s, 256 * (decode_flops / flops + prefill / 300)))
    assert p["tpot_s"] == pytest.approx(0.03974, abs=1e-5)  # compute-bound: the prefills fill the step
    assert p["ttft_s"] == pytest.approx(prefill)
    assert p["gpu_seconds_per_request"] == pytest.approx(8 * 300 * p["tpot_s"] / 256)
    assert p["prefill_share"] == pytest.approx(prefill / (prefill + 300 * p["step_s"] / 256))


def test_short_outputs_never_make_a_request_dearer_than_long_ones():
    """Attack found: 30 output tokens cost more per request than 300 when prefill time was added to the step."""
    for params, gpu, prompt in ((405e9, "H100-SXM5-80GB", 1000), (28e9, "A100-SXM4-80GB", 21_854), (7e9, "H100", 1000)):
        cost = [estimate(params=params, gpu=gpu, requests_per_day=1e8, peak_to_average=1, serving_months=1,
                         input_tokens_per_request=prompt, output_tokens_per_request=n).details["serving_cost_per_request_usd"]
                for n in (5, 30, 100, 300, 1000)]
        assert cost == sorted(cost), (params, cost)


def test_replica_size_minimises_the_gpus_provisioned():
    """At low traffic the minimum replicas decide: small replicas that meet the target, not the fastest."""
    low = estimate(output_tokens_per_request=5).details  # default 7B, 1e6 requests a day, two replicas at least
    forced = estimate(output_tokens_per_request=5, serving_tensor_parallel=1).details
    assert low["serving_gpus"] <= forced["serving_gpus"] and low["serving_meets_targets"]
    eight = estimate(params=8e9, gpu="A100-SXM4-80GB").details
    for tp in (1, 2, 4, 8):
        other = estimate(params=8e9, gpu="A100-SXM4-80GB", serving_tensor_parallel=tp).details
        if other["serving_meets_targets"]:
            assert eight["serving_gpus"] <= other["serving_gpus"]
    # more GPUs per node is more choice, never a larger bill
    assert (estimate(params=70e9, gpu="H100", gpus_per_node=16).details["serving_gpus"]
            <= estimate(params=70e9, gpu="H100", gpus_per_node=8).details["serving_gpus"])


def test_each_batch_limit_binds():
    assert plan(replica_gpus=8, tpot_target_s=0.03)["batch_limit"] == "latency target"
    long = plan(replica_gpus=8, max_batch=10_000, tpot_target_s=10.0, input_tokens=30_000)
    assert long["batch_limit"] == "kv cache memory"
    # (8 x 80 GiB x 0.9 - 140 GB) / (327,680 x 30,150) = 48.1 sequences
    assert long["batch"] == np.floor((8 * 80 * 2**30 * 0.9 - 140e9) / (327_680 * 30_150))
    assert plan(replica_gpus=8)["batch_limit"] == "max batch"


def test_output_tokens_cost_more_than_input_tokens():
    est = estimate(params=70e9, gpu="H100-SXM5-80GB")
    d = est.details
    assert d["serving_cost_per_million_output_tokens_usd"] > 2 * d["serving_cost_per_million_input_tokens_usd"]


def test_long_prompt_costs_more_per_request():
    short, long = (estimate(params=70e9, gpu="H100-SXM5-80GB", input_tokens_per_request=n).details
                   for n in (1000, 100_000))
    assert long["serving_cost_per_request_usd"] > 20 * short["serving_cost_per_request_usd"]
    # and more per input token too: attention grows with the square of the prompt
    assert long["serving_cost_per_million_input_tokens_usd"] > short["serving_cost_per_million_input_tokens_usd"]


def test_grouped_query_attention_fp8_and_prefix_cache_lower_the_cost():
    base = Scenario(params=70e9, gpu="H100-SXM5-80GB", d_model=8192, n_layers=80, requests_per_day=1e8,
                    peak_to_average=1, input_tokens_per_request=8000)
    cost = {name: estimate(base.replace(**change)).details["serving_cost_per_request_usd"]
            for name, change in {"base": {}, "mha": {"n_kv_heads": 64}, "fp8": {"weight_precision": "fp8"},
                                 "kv8": {"kv_cache_precision": "fp8"}, "cache": {"prefix_cache_hit_rate": 0.5},
                                 "slow": {"tpot_target_ms": 200}}.items()}
    assert cost["mha"] > cost["base"]  # 8x the KV cache
    assert cost["fp8"] < cost["base"] and cost["cache"] < cost["base"]
    # 8,000-token prompts make the steps compute-bound, where KV bytes do not count; they do once decode is alone
    assert cost["kv8"] <= cost["base"]
    alone = base.replace(serving_prefill="disaggregated")
    assert (estimate(alone.replace(kv_cache_precision="fp8")).details["serving_cost_per_request_usd"]
            < estimate(alone).details["serving_cost_per_request_usd"])
    assert cost["slow"] <= cost["base"]  # a looser latency target allows a larger batch (compute-bound: same cost)
    assert (estimate(alone.replace(tpot_target_ms=200)).details["serving_cost_per_request_usd"]
            < estimate(alone.replace(tpot_target_ms=15)).details["serving_cost_per_request_usd"])


def test_disaggregated_prefill_allows_a_larger_batch():
    inter = plan(replica_gpus=8, input_tokens=8000, tpot_target_s=0.04)
    disagg = plan(replica_gpus=8, input_tokens=8000, tpot_target_s=0.04, prefill_mode="disaggregated")
    assert disagg["batch"] > inter["batch"] and disagg["tpot_s"] == disagg["step_s"]
    # interleaved prompts ride under the decode steps' weight reads; on their own replicas they do not
    assert disagg["gpu_seconds_per_request"] > inter["gpu_seconds_per_request"]
    prefill = 8 * serving.cached_prefill_flops(70e9, 8000, 0, 8192, 80) / (8 * 989e12 * 0.5)
    assert disagg["gpu_seconds_per_request"] == pytest.approx(prefill + 8 * 300 * disagg["step_s"] / disagg["batch"])


def test_mixture_of_experts_reads_only_the_routed_experts_at_small_batch():
    moe = dict(params=671e9, active_params=37e9)
    small = plan(**moe, replica_gpus=32, max_batch=1)
    # at batch 1 only the active 37B parameters' bytes are read: (74 GB + KV) / bandwidth
    assert small["step_s"] == pytest.approx((74e9 + 327_680 * 1150) / (32 * 3.35e12 * 0.6))
    assert serving.weight_bytes_read(1000, 1342e9, 74e9) == 1342e9


def test_replica_search_picks_within_a_node_or_the_fewest_nodes():
    assert plan(**{**LLAMA_70B, "params": 8e9, "active_params": 8e9, "d_model": 4096, "n_layers": 32})["replica_gpus"] <= 8
    # 405B in bf16 (810 GB) does not fit in one 8 x 80 GiB node: two nodes
    big = plan(params=405e9, active_params=405e9, d_model=16384, n_layers=126)
    assert big["replica_gpus"] == 16 and big["fits"]
    fp8 = plan(params=405e9, active_params=405e9, d_model=16384, n_layers=126, weight_precision="fp8")
    assert fp8["replica_gpus"] == 8


def test_a_model_that_fits_nowhere_is_a_warning_not_a_crash():
    est = estimate(params=70e9, gpu="H100-SXM5-80GB", serving_tensor_parallel=1)
    assert not est.details["serving_fits"]
    assert any(w.startswith("serving: the weights (140 GB in bf16)") for w in est.warnings)
    out = est.to_dict()
    assert out["unavailable"]["details.serving_cost_per_million_tokens_usd"].startswith("the model does not fit")
    with pytest.raises(ScenarioError, match=r"serving_tensor_parallel=1: .* takes 2 GPUs .*allowed: serving_tensor_parallel >= 2") as err:
        estimate(params=70e9, gpu="H100-SXM5-80GB", serving_tensor_parallel=1, serving_months=1)
    assert err.value.field == "serving_tensor_parallel"
    batch = Scenario(params=70e9, gpu="H100-SXM5-80GB", serving_tensor_parallel=1, serving_months=np.array([0.0, 1.0]))
    with pytest.raises(ScenarioError, match=r"scenario 1 of the batch"):
        estimate(batch)
    assert estimate(params=70e9, gpu="H100-SXM5-80GB", serving_tensor_parallel=2, serving_months=1).details["serving_fits"]


def test_unreachable_latency_target_is_reported():
    # 2 TB of weights on 64 nodes of H100 (3.35 TB/s x 0.6 each GPU) take 1.9 ms per step
    est = estimate(params=1e12, gpu="H100-SXM5-80GB", tpot_target_ms=1)
    assert any("no replica size meets the time per output token of 1 ms" in w for w in est.warnings)
    # 1 ms is met only by spreading the weights over ten nodes, which the warning calls optimistic
    fast = estimate(params=70e9, gpu="H100-SXM5-80GB", tpot_target_ms=1, serving_months=1)
    assert fast.details["serving_replica_gpus"] == 80 and any("spans 10 nodes" in w for w in fast.warnings)


def test_daily_profile_mean_one_and_peak():
    for ratio in (1, 1.5, 3, 10, 100):
        profile = serving.daily_profile(ratio)
        assert profile.mean() == pytest.approx(1) and profile.max() == pytest.approx(ratio, rel=1e-6)
        assert (profile >= 0).all()
    assert serving.daily_profile([1, 3]).shape == (2, serving.PROFILE_STEPS)


def test_autoscaling_costs_no_more_than_fixed_and_equals_it_on_flat_traffic():
    base = Scenario(params=70e9, gpu="H100-SXM5-80GB", requests_per_day=3e7, serving_months=1)
    fixed = estimate(base).details["serving_cost_per_month_usd"]
    scaled = estimate(base.replace(serving_provisioning="autoscaling"))
    assert scaled.details["serving_cost_per_month_usd"] < 0.8 * fixed
    lines = scaled.lines.set_index("item")
    assert lines.loc["serving replicas (base)", "cost_type"] == "fixed"
    assert lines.loc["serving replicas (autoscaled)", "cost_type"] == "elastic"
    assert lines.loc["serving replicas (autoscaled)", "cost_usd"] > 0
    flat = base.replace(peak_to_average=1)
    assert estimate(flat.replace(serving_provisioning="autoscaling")).details["serving_cost_per_month_usd"] == \
        pytest.approx(estimate(flat).details["serving_cost_per_month_usd"])
    # owned GPUs cost the same idle or busy: no saving from autoscaling a self-hosted fleet
    owned = base.replace(pricing="self_hosted")
    assert estimate(owned.replace(serving_provisioning="autoscaling")).details["serving_cost_per_month_usd"] == \
        pytest.approx(estimate(owned).details["serving_cost_per_month_usd"])


def test_given_throughput_replaces_the_roofline():
    est = estimate(serving_tokens_per_second_per_gpu=1000, serving_months=1)
    d = est.details
    assert d["serving_tokens_per_second_per_gpu"] == pytest.approx(1000)
    assert d["serving_replica_gpus"] == 1  # the smallest replica that holds 14 GB of weights


def test_gpu_without_bandwidth_needs_a_throughput_to_serve():
    with pytest.raises(ScenarioError, match="serving_tokens_per_second_per_gpu=None: Ascend-910B has no memory bandwidth"):
        Scenario(gpu="Ascend-910B", price_per_gpu_hour=2, serving_months=1, precision="fp16")


MORE_COSTS_MORE = {"input_tokens_per_request": 1, "output_tokens_per_request": 1, "requests_per_day": 1,
                   "min_replicas": 1, "serving_max_batch": -1, "prefix_cache_hit_rate": -1, "tpot_target_ms": -1,
                   "serving_mbu": -1, "serving_mfu": -1, "params": 1, "usable_memory_fraction": -1}


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({
    "params": st.floats(1e8, 5e11), "gpu": st.sampled_from(["H100", "A100", "H200", "L40S", "MI300X"]),
    "price_per_gpu_hour": st.just(2.0), "requests_per_day": st.floats(1, 1e9),
    # 0, or from a millionth of a token (below it the scenario is refused: tests/test_scenario.py)
    "input_tokens_per_request": st.one_of(st.just(0.0), st.floats(1e-6, 1e5)),
    "output_tokens_per_request": st.one_of(st.just(0.0), st.floats(1e-6, 1e4)),
    "tpot_target_ms": st.floats(5, 500), "serving_prefill": st.sampled_from(["interleaved", "disaggregated"]),
    "serving_provisioning": st.sampled_from(["fixed", "autoscaling"]), "peak_to_average": st.floats(1, 10),
    "min_replicas": st.integers(1, 8), "serving_max_batch": st.integers(1, 1024),
    "prefix_cache_hit_rate": st.floats(0, 0.99), "weight_precision": st.sampled_from(["bf16", "fp8", "int4"])}),
    st.sampled_from(sorted(MORE_COSTS_MORE)), st.floats(1.05, 4))
def test_serving_cost_moves_the_right_way(kw, name, factor):
    """Attack found: replica sizes chosen by GPU-seconds per request, not GPUs provisioned, made totals fall when a
    cost driver rose. With the size chosen by GPUs for the traffic, each driver moves the month's cost one way."""
    spec = workbench.plan.scenario.fields()[name]
    current = kw.get(name, spec.default)
    value = current * factor if current > 0 else 1.0
    value = min(value, spec.max if spec.max is not None else value)
    if name == "prefix_cache_hit_rate":
        value = min(0.99, current + 0.1)
    if spec.type == "int":
        value = int(np.ceil(value))
    base, more = (estimate(Scenario(**{**kw, **({name: v} if v is not None else {})})).details for v in (None, value))
    if not (base["serving_fits"] and more["serving_fits"] and base["serving_meets_targets"] and more["serving_meets_targets"]):
        return  # the fastest replica that misses the targets is a warning, not a price
    sign = MORE_COSTS_MORE[name]
    a, b = base["serving_cost_per_month_usd"], more["serving_cost_per_month_usd"]
    assert (b >= a * (1 - 1e-9)) if sign > 0 else (b <= a * (1 + 1e-9)), (name, current, value, a, b)


def test_cli_serve_done_when(capsys):
    assert main(["serve", "--params", "70B", "--gpu", "H100-SXM5-80GB", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["serving_cost_per_million_output_tokens_usd"] > 2 * out["serving_cost_per_million_input_tokens_usd"]
    assert out["serving_replica_gpus"] in (2, 4, 8) and out["serving_batch"] >= 1
    assert main(["serve", "--params", "70B", "--gpu", "H100-SXM5-80GB", "--input-tokens-per-request", "100000",
                 "--json"]) == 0
    long = json.loads(capsys.readouterr().out)
    assert long["serving_cost_per_request_usd"] > out["serving_cost_per_request_usd"]
    assert main(["serve", "--params", "70B", "--gpu", "H100-SXM5-80GB"]) == 0
    text = capsys.readouterr().out
    assert "USD per million" in text and "Output tokens" in text and "ms per output token" in text
    assert main(["serve", "--tpot-target-ms", "0"]) == 1
    assert "tpot_target_ms=0" in capsys.readouterr().err


def test_well_run_deployments_land_within_the_market_band():
    """README claim: at high, flat traffic on H100 at the median on-demand price, within 0.3x-2x of the cheapest
    public price for the same open model and weights (data/api_prices.csv)."""
    from workbench.reference import prices
    table = prices.api_prices()
    assert len(table) >= 5 and table["source"].str.startswith("https://").all()
    blend = (1000 * table["input_usd_per_million"] + 300 * table["output_usd_per_million"]) / 1300
    cheapest = blend.groupby([table["model"], table["weights"]]).min()
    flat = dict(gpu="H100-SXM5-80GB", requests_per_day=1e8, peak_to_average=1)
    cases = {("Llama-3.1-8B", "bf16"): dict(params=8.03e9, d_model=4096, n_layers=32),
             ("Llama-3.1-70B", "bf16"): dict(params=70.6e9, d_model=8192, n_layers=80),
             ("Llama-3.1-70B", "fp8"): dict(params=70.6e9, d_model=8192, n_layers=80, weight_precision="fp8"),
             ("Llama-3.1-405B", "unknown"): dict(params=405.9e9, d_model=16384, n_layers=126, weight_precision="fp8")}
    for key, arch in cases.items():
        ours = estimate(**flat, **arch).details["serving_cost_per_million_tokens_usd"]
        assert 0.3 <= ours / cheapest[key] <= 2.0, (key, ours, cheapest[key])


def test_utilisation_is_demand_over_provisioned_capacity():
    d = estimate(params=70e9, gpu="H100-SXM5-80GB").details
    demand_gpu_seconds_per_second = 1e6 / 86400 * 1300 / d["serving_tokens_per_second_per_gpu"]  # at full load
    assert d["serving_utilisation"] == pytest.approx(demand_gpu_seconds_per_second / d["serving_gpus"])
    flat = estimate(params=70e9, gpu="H100-SXM5-80GB", requests_per_day=1e8, peak_to_average=1).details
    assert 0.95 < flat["serving_utilisation"] <= 1.0 and d["serving_utilisation"] < 0.5


def test_replica_across_nodes_warns_and_search_goes_beyond_the_fewest_nodes():
    big = estimate(params=405e9, gpu="H100-SXM5-80GB")
    assert big.details["serving_replica_gpus"] == 16
    assert not any("spans" in w for w in big.warnings)  # no serving in the plan: no warning in the plan's list
    assert any("spans 2 nodes" in w for w in big.serving_summary()["warnings"])
    assert any("spans 2 nodes" in w for w in estimate(params=405e9, gpu="H100-SXM5-80GB", serving_months=1).warnings)
    # a 2-trillion-parameter model meets 30 ms on a replica of more nodes than the fewest that hold it
    huge = estimate(params=2e12, gpu="H100-SXM5-80GB").details
    assert huge["serving_meets_targets"] and huge["serving_replica_gpus"] > huge["serving_min_replica_gpus"]


def test_serving_inputs_the_model_cannot_have_are_refused(capsys):
    with pytest.raises(ScenarioError, match=r"n_kv_heads=100000: is more than the model's 71 attention heads") as err:
        Scenario(params=70e9, n_kv_heads=100_000)
    assert err.value.message("zh").endswith("超过模型的 71 个注意力头（d_model / 128）；允许：1 到注意力头数")
    assert Scenario(params=70e9, d_model=8192, n_kv_heads=64).n_kv_heads == 64
    assert main(["serve", "--gpu", "Ascend-910B", "--precision", "fp16", "--price-per-gpu-hour", "2"]) == 1
    assert "Ascend-910B has no memory bandwidth" in capsys.readouterr().err


def test_found_on_re_attack():
    """Replica sizes the same for every model; one sequence's compute counts for the target; display of a batch
    below one; utilisation unknown where nothing fits."""
    from workbench.report import views
    cost = [estimate(params=920e9, requests_per_day=1e4, input_tokens_per_request=n).details["serving_cost_per_month_usd"]
            for n in (20_000, 40_000)]
    assert cost[0] <= cost[1]
    slow = estimate(gpu="H20", price_per_gpu_hour=1.5, params=70e9, weight_precision="int4", serving_mfu=0.03,
                    tpot_target_ms=20, serving_prefill="disaggregated").details
    assert slow["serving_replica_gpus"] >= 2  # one GPU's 32 ms of compute per token cannot meet 20 ms
    assert [views.format_batch(b) for b in (0.00083, 0.62, 9.7, 96.66, float("nan"))] == ["0.00083", "0.62", "9.7", "97", "-"]
    assert np.isnan(estimate(params=1e12, serving_tensor_parallel=1).details["serving_utilisation"])
