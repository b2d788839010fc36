"""Serving roofline: hand-checked figures, the limits that bind, monotonic properties, the CLI."""
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from workbench import Scenario, ScenarioError, estimate, serving
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
    """tp 8, interleaved prefill: the batch that keeps 50 ms per token, worked by hand."""
    p = plan(replica_gpus=8)
    bandwidth, flops = 8 * 3.35e12 * 0.6, 8 * 989e12 * 0.5
    kv_sequence = 327_680 * 1150
    prefill = (1.4e14 + 1.31072e12) / flops              # 35.7 ms of the replica per prompt
    per_sequence = kv_sequence / bandwidth + prefill / 300  # bytes of its KV plus its share of prefills per step
    batch_for_latency = (0.05 - 140e9 / bandwidth) / per_sequence
    assert batch_for_latency == pytest.approx(289.8, abs=0.1)
    assert p["batch"] == 256 and p["batch_limit"] == "max batch"
    step = (140e9 + 256 * kv_sequence) / bandwidth
    assert p["step_s"] == pytest.approx(step)
    assert p["tpot_s"] == pytest.approx(step + 256 * prefill / 300)
    assert p["ttft_s"] == pytest.approx(prefill)
    assert p["gpu_seconds_per_request"] == pytest.approx(8 * (prefill + 300 * step / 256))
    assert p["prefill_share"] == pytest.approx(prefill / (prefill + 300 * step / 256))


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
    assert cost["fp8"] < cost["base"] and cost["kv8"] < cost["base"] and cost["cache"] < cost["base"]
    assert cost["slow"] < cost["base"]  # a looser latency target allows a larger batch


def test_disaggregated_prefill_allows_a_larger_batch():
    inter = plan(replica_gpus=8, input_tokens=8000, tpot_target_s=0.04)
    disagg = plan(replica_gpus=8, input_tokens=8000, tpot_target_s=0.04, prefill_mode="disaggregated")
    assert disagg["batch"] > inter["batch"] and disagg["gpu_seconds_per_request"] < inter["gpu_seconds_per_request"]


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
    est = estimate(params=70e9, gpu="H100-SXM5-80GB", tpot_target_ms=1)
    assert any("no replica size meets the time per output token of 1 ms" in w for w in est.warnings)


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


@settings(max_examples=60, deadline=None)
@given(st.floats(1, 1e5), st.floats(1, 1e5), st.floats(0.002, 2), st.sampled_from(["interleaved", "disaggregated"]))
def test_more_tokens_never_cost_less_per_request(n_in, n_out, tpot, mode):
    """Per request, a longer prompt never costs fewer GPU-seconds (replica size fixed), nor does a longer answer
    with disaggregated prefill. Interleaved, a longer answer spreads its prompt's prefill over more steps, which
    allows a larger batch: a request of 3 output tokens can cost slightly less than one of 2."""
    base = plan(replica_gpus=8, input_tokens=n_in, output_tokens=n_out, tpot_target_s=tpot, prefill_mode=mode)
    if not base["fits"]:
        return
    changes = [{"input_tokens": n_in * 1.5}] + ([{"output_tokens": n_out * 1.5}] if mode == "disaggregated" else [])
    for change in changes:
        more = plan(replica_gpus=8, **{"input_tokens": n_in, "output_tokens": n_out, **change}, tpot_target_s=tpot,
                    prefill_mode=mode)
        if more["fits"]:
            assert more["gpu_seconds_per_request"] >= base["gpu_seconds_per_request"] * (1 - 1e-9)


def test_cli_serve_done_when(capsys):
    assert main(["serve", "--params", "70B", "--gpu", "H100-SXM5-80GB", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["serving_cost_per_million_output_tokens_usd"] > 2 * out["serving_cost_per_million_input_tokens_usd"]
    assert out["serving_replica_gpus"] == 8 and out["serving_batch"] >= 1
    assert main(["serve", "--params", "70B", "--gpu", "H100-SXM5-80GB", "--input-tokens-per-request", "100000",
                 "--json"]) == 0
    long = json.loads(capsys.readouterr().out)
    assert long["serving_cost_per_request_usd"] > out["serving_cost_per_request_usd"]
    assert main(["serve", "--params", "70B", "--gpu", "H100-SXM5-80GB"]) == 0
    text = capsys.readouterr().out
    assert "USD per million" in text and "Output tokens" in text and "ms per output token" in text
    assert main(["serve", "--tpot-target-ms", "0"]) == 2
    assert "tpot_target_ms=0" in capsys.readouterr().err


def test_well_run_deployments_land_within_the_market_band():
    """README claim: at high, flat traffic on H100 at the median on-demand price, within 0.3x-2x of the cheapest
    public price for the same open model and weights (data/api_prices.csv)."""
    from workbench import prices
    table = prices.api_prices()
    assert len(table) >= 5 and table["source"].str.startswith("https://").all()
    blend = (1000 * table["input_usd_per_million"] + 300 * table["output_usd_per_million"]) / 1300
    cheapest = blend.groupby([table["model"], table["weights"]]).min()
    flat = dict(gpu="H100-SXM5-80GB", requests_per_day=1e8, peak_to_average=1)
    cases = {("Llama-3.1-8B", "bf16"): dict(params=8.03e9, d_model=4096, n_layers=32),
             ("Llama-3.1-70B", "bf16"): dict(params=70.6e9, d_model=8192, n_layers=80),
             ("Llama-3.1-70B", "fp8"): dict(params=70.6e9, d_model=8192, n_layers=80, weight_precision="fp8"),
             ("Llama-3.1-405B", "bf16"): dict(params=405.9e9, d_model=16384, n_layers=126, weight_precision="fp8",
                                              serving_prefill="disaggregated")}
    for key, arch in cases.items():
        ours = estimate(**flat, **arch).details["serving_cost_per_million_tokens_usd"]
        assert 0.3 <= ours / cheapest[key] <= 2.0, (key, ours, cheapest[key])
