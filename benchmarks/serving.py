"""Serving figures side by side with llm-analysis' ``infer`` (PyPI, run in its own virtual environment), and the
workbench's USD per million tokens against public API prices (``data/api_prices.csv``).

    .venv/bin/python benchmarks/serving.py [--skip-llm-analysis]

Both tools get the same model, GPU, tensor-parallel size, batch, prompt and output lengths and the same
efficiencies (llm-analysis' ``flops_efficiency`` = the workbench's ``serving_mfu``, ``hbm_memory_efficiency`` =
``serving_mbu``), and the KV cache of the full sequence (prompt + output) as llm-analysis counts it. Prints
figures; asserts nothing.
"""
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import _llm_analysis
from workbench import Scenario, estimate
from workbench.formulas import serving
from workbench.reference import prices

MFU, MBU = 0.5, 0.6
#: (name, llm-analysis model, llm-analysis GPU, params, d_model, layers, KV heads, memory GiB, TB/s, peak TFLOP/s, tp)
CASES = (
    ("Llama-2-7B on 1 A100-80GB", "NousResearch_Llama-2-7b-hf", "a100-sxm-80gb", 6.74e9, 4096, 32, 32, 80, 2.039, 312, 1),
    ("Llama-2-70B on 8 H100", "upstage_Llama-2-70b-instruct-v2", "h100-sxm-80gb", 68.98e9, 8192, 80, 8, 80, 3.35, 989, 8),
)
BATCHES = (1, 16, 64)
PROMPT, OUTPUT = 1000, 300


def llm_analysis():
    code = f"""
import json
from llm_analysis.analysis import infer
out = {{}}
for name, model, gpu, *_, tp in {CASES!r}:
    for batch in {BATCHES!r}:
        r = infer(model_name=model, gpu_name=gpu, dtype_name="w16a16e16", tp_size=tp, batch_size_per_gpu=batch,
                  seq_len={PROMPT}, num_tokens_to_generate={OUTPUT}, flops_efficiency={MFU},
                  hbm_memory_efficiency={MBU}, log_level="ERROR")
        out[f"{{name}}|{{batch}}"] = {{k: r[k] for k in ("prefill_latency", "decode_latency", "prefill_latency_fwd_tp_comm",
                                                     "decode_latency_fwd_tp_comm", "weight_memory_per_gpu")}}
print(json.dumps(out))
"""
    return _llm_analysis.run(code)


def ours(params, d_model, layers, kv_heads, memory_gib, tbs, tflops, tp, batch):
    bandwidth, flops = tp * tbs * 1e12 * MBU, tp * tflops * 1e12 * MFU
    kv_sequence = serving.kv_bytes_per_token(layers, kv_heads, 128, "bf16") * (PROMPT + OUTPUT)
    step = serving.decode_step_seconds(batch, 2 * params, 2 * params, kv_sequence,
                                       serving.decode_flops_per_token(params, PROMPT + OUTPUT, d_model, layers),
                                       bandwidth, flops)
    prefill = batch * serving.prefill_flops(params, PROMPT, d_model, layers) / flops
    return float(prefill), float(step)


def compare_llm_analysis():
    theirs = llm_analysis()
    print(f"Roofline against llm-analysis 0.2.2 infer ({PROMPT} prompt + {OUTPUT} output tokens, MFU {MFU}, MBU {MBU}):")
    print(f"{'case':<28}{'batch':>6}{'prefill s wb':>14}{'llma':>8}{'ratio':>7}{'step ms wb':>12}{'llma':>8}"
          f"{'ratio':>7}{'llma tp comm ms':>17}")
    for name, _, _, *spec in CASES:
        for batch in BATCHES:
            prefill, step = ours(*spec, batch)
            t = theirs[f"{name}|{batch}"]
            print(f"{name:<28}{batch:>6}{prefill:>14.3f}{t['prefill_latency']:>8.3f}{t['prefill_latency'] / prefill:>7.2f}"
                  f"{step * 1e3:>12.2f}{t['decode_latency'] * 1e3:>8.2f}{t['decode_latency'] / step:>7.2f}"
                  f"{t['decode_latency_fwd_tp_comm'] * 1e3:>17.2f}")


def compare_api_prices():
    table = prices.api_prices()
    models = {"Llama-3.1-8B": dict(params=8.03e9, d_model=4096, n_layers=32),
              "Llama-3.1-70B": dict(params=70.6e9, d_model=8192, n_layers=80),
              "Llama-3.3-70B": dict(params=70.6e9, d_model=8192, n_layers=80),
              "Llama-3.1-405B": dict(params=405.9e9, d_model=16384, n_layers=126)}
    print("\nWorkbench at high, flat traffic (1e8 requests/day of 1,000 + 300 tokens, peak-to-average 1) on H100 "
          "at the typical on-demand price (provider=median), against the cheapest public API price for the same open model:")
    print("(API prices: data/api_prices.csv, stored copies of provider pages read 2026-12-03, undated)")
    print(f"{'model':<16}{'weights prefill':>14}{'wb in':>8}{'wb out':>8}{'wb blend':>10}{'api in':>8}{'api out':>8}"
          f"{'api blend':>10}{'ratio':>7}  cheapest provider")
    for model, arch in models.items():
        offers = table[table["model"] == model]
        if offers.empty:
            continue
        offers = offers.assign(blend=(1000 * offers["input_usd_per_million"] + 300 * offers["output_usd_per_million"]) / 1300)
        for precision, prefill in (("bf16", "interleaved"), ("fp8", "interleaved"), ("fp8", "disaggregated")):
            # the cheapest offer in the same weight precision, else the cheapest of any
            same = offers[offers["weights"] == precision]
            cheapest = (same if len(same) else offers).loc[(same if len(same) else offers)["blend"].idxmin()]
            d = estimate(Scenario(**arch, gpu="H100-SXM5-80GB", requests_per_day=1e8, peak_to_average=1,
                                  weight_precision=precision, serving_prefill=prefill)).details
            blend = d["serving_cost_per_million_tokens_usd"]
            print(f"{model:<16}{precision + ' ' + prefill[:6]:>14}{d['serving_cost_per_million_input_tokens_usd']:>8.3f}"
                  f"{d['serving_cost_per_million_output_tokens_usd']:>8.3f}{blend:>10.3f}"
                  f"{cheapest['input_usd_per_million']:>8.3f}{cheapest['output_usd_per_million']:>8.3f}"
                  f"{cheapest['blend']:>10.3f}{blend / cheapest['blend']:>7.2f}  {cheapest['provider']}, "
                  f"{cheapest['weights']}, replica {d['serving_replica_gpus']:.0f} GPUs, batch {d['serving_batch']:.0f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-llm-analysis", action="store_true")
    args = parser.parse_args()
    if not args.skip_llm_analysis:
        compare_llm_analysis()
    compare_api_prices()


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    np.set_printoptions(linewidth=200)
    main()
