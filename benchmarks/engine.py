"""Engine figures: estimate() latency, Monte Carlo against a per-scenario loop (same run), sensitivity(),
GPU-hours side by side with llm-analysis (PyPI package, run in its own virtual environment because it
pins old transformers / huggingface-hub releases), and the validation on published runs (workbench validate)
next to llm-analysis and the constant-MFU rule, in the same run.

    .venv/bin/python benchmarks/engine.py [--skip-llm-analysis]

Prints figures; asserts nothing (targets are in the README's performance section).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import _llm_analysis
import workbench
from workbench import Scenario, estimate, monte_carlo, sensitivity
from workbench.plan import calibration
from workbench.plan.sensitivity import INPUTS
from workbench.programmes.programme import Programme, Staff, Workstream
from workbench.programmes.timeline import evaluate
from workbench.plan.uncertainty import distributions


#: (name, llm-analysis model config, params, tokens, seq_len, GPUs, reported GPU-hours): published runs whose
#: architecture llm-analysis ships (its bloom-175b config is incomplete and fails to load).
RUNS = (
    ("LLaMA-7B", "decapoda-research_llama-7b-hf", 6.7e9, 1.0e12, 2048, 2048, 82_432),
    ("LLaMA-65B", "decapoda-research_llama-65b-hf", 6.52e10, 1.4e12, 2048, 2048, 1_022_362),
    ("Llama-2-7B", "NousResearch_Llama-2-7b-hf", 7e9, 2.0e12, 4096, 2048, 184_320),
    ("OPT-175B", "facebook_opt-175b", 1.75e11, 3.0e11, 2048, 992, 809_472),
)
MFU = 0.4  # the same efficiency for both tools, so that the FLOP counts are what differs


def large_programme(workstreams=20, horizon=24) -> Programme:
    """``workstreams`` lines of work over ``horizon`` months: a pre-training run per model size, then fine-tunes
    on cadences of 1 to 3 months with releases served 3 to 6 months, each with its own team and GPU count."""
    items = []
    for i in range(workstreams):
        size = (1e9, 7e9, 13e9, 34e9)[i % 4]
        if i < 4:
            items.append(Workstream(name=f"pretrain {size / 1e9:g}B", stages=("pretrain",), start_month=1 + i,
                                    changes={"params": size, "tokens": 20 * size, "n_gpus": 64 * (i + 1)},
                                    tags={"team": "pretraining", "model_version": f"base-{i}"}))
        else:
            every = 1 + i % 3
            items.append(Workstream(name=f"fine-tune {i}", stages=("sft", "preference", "evaluation"),
                                    start_month=2 + i % 4, every_months=every, cycles=max(1, (horizon - 6) // every),
                                    reannotation_share=0.3, serve_months=3 + i % 4, traffic_growth_per_month=0.05,
                                    changes={"params": size, "n_gpus": 16 * (1 + i % 4),
                                             "requests_per_day": 50_000 * (1 + i % 5)},
                                    tags={"team": f"team-{i % 5}", "model_version": f"ft{i}-v{{cycle}}"}))
    return Programme(name="benchmark", horizon_months=horizon, workstreams=tuple(items),
                     staff=(Staff(name="core", fte=10, usd_per_month=20_000),), budgets={"total": 5e7})


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return np.percentile(times, 50), np.percentile(times, 95)


def llm_analysis_results(mfu=MFU):
    code = f"""
import json, time, logging
from llm_analysis.analysis import train
out = {{}}
for name, model, params, tokens, seq_len, gpus, reported in {RUNS!r}:
    kwargs = dict(model_name=model, gpu_name="a100-sxm-80gb", dtype_name="w16a16e16", seq_len=seq_len,
                  total_num_tokens=int(tokens), total_num_gpus=gpus, flops_efficiency={mfu}, tp_size=8,
                  ds_zero=1, log_level="ERROR")
    train(**kwargs)
    started = time.perf_counter()
    for _ in range(20):
        summary = train(**kwargs)
    out[name] = {{"gpu_hours": summary["gpu_hours"], "ms_per_call": (time.perf_counter() - started) / 20 * 1000,
                  "params": summary["num_params_total"]}}
print(json.dumps(out))
"""
    return _llm_analysis.run(code)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-llm-analysis", action="store_true")
    args = parser.parse_args()

    estimate()
    p50, p95 = timed(estimate, 200)
    print(f"estimate(), default scenario: p50 {p50:.2f} ms, p95 {p95:.2f} ms (target p95 < 30 ms)")
    s50, s95 = timed(lambda: sensitivity(Scenario()), 30)
    print(f"sensitivity(), default scenario ({len(INPUTS)} inputs, one batch): "
          f"p50 {s50:.1f} ms, p95 {s95:.1f} ms")

    monte_carlo(n=1000)
    started = time.perf_counter()
    mc = monte_carlo(Scenario(), n=100_000, seed=0)
    mc_s = time.perf_counter() - started
    # baseline in the same run: the same draws, one estimate() per scenario
    loop_n = 300
    base = estimate()
    fixed = {"mfu": base.mfu, "price_per_gpu_hour": base.details["price_per_gpu_hour"], "n_gpus": base.n_gpus}
    draws = mc.samples.head(loop_n)
    started = time.perf_counter()
    loop_totals = [estimate(Scenario(**{**fixed, **{c: row[c] for c in distributions().index}})).total_cost_usd
                   for row in draws.to_dict("records")]
    loop_per_scenario = (time.perf_counter() - started) / loop_n
    agree = np.allclose(loop_totals, draws["total_cost_usd"], rtol=1e-9)
    print(f"monte_carlo(n=100,000): {mc_s:.2f} s (target < 1 s); loop of estimate(): {loop_per_scenario * 1000:.2f} ms "
          f"per scenario = {loop_per_scenario * 100_000:.0f} s for 100,000 (extrapolated from {loop_n}); "
          f"speed-up {loop_per_scenario * 100_000 / mc_s:,.0f}x (target >= 100x); totals agree: {agree}")
    print(f"  P10 / P50 / P90 total cost: " + " / ".join(f"{mc.summary.loc['total_cost_usd', f'p{q}']:,.0f}" for q in (10, 50, 90))
          + f" USD (deterministic {mc.base_total_cost_usd:,.0f})")

    # a programme of 20 workstreams over 24 months in one pass, against one estimate() per workstream (the
    # engine's part of it, measured in the same run): what the monthly placement costs on top
    programme = large_programme()
    evaluate(programme)
    e50, e95 = timed(lambda: evaluate(programme), 10)
    runs = [w.scenario(programme.base_scenario).replace(staff_fte=0.0, serving_months=0.0)
            for w in programme.workstreams]
    l50, _ = timed(lambda: [estimate(r) for r in runs], 10)
    timeline = evaluate(programme)
    print(f"programme, {len(programme.workstreams)} workstreams x {programme.horizon_months} months "
          f"({sum(w.cycles for w in programme.workstreams)} cycles, {len(timeline.lines):,} monthly lines): "
          f"evaluate() p50 {e50:.0f} ms, p95 {e95:.0f} ms; one estimate() per workstream in a loop: {l50:.0f} ms "
          f"(ratio {e50 / l50:.2f}); total {timeline.total_cost_usd:,.0f} USD")

    validation(args.skip_llm_analysis)
    if args.skip_llm_analysis:
        return
    theirs = llm_analysis_results()
    print(f"\nGPU-hours at MFU {MFU} on A100-SXM4-80GB (llm-analysis 0.2.2: tp 8, ZeRO-1, flash attention):")
    print(f"{'run':<12}{'reported':>12}{'workbench':>12}{'llm-analysis':>14}{'ratio':>8}{'params wb':>11}"
          f"{'llma':>8}{'wb ms':>8}{'llma ms':>9}")
    for name, model, params, tokens, seq_len, gpus, reported in RUNS:
        s = Scenario(params=params, tokens=tokens, seq_len=seq_len, gpu="A100-SXM4-80GB", n_gpus=gpus, mfu=MFU,
                     price_per_gpu_hour=1.0)
        ours = estimate(s).gpu_hours
        ms = timed(lambda: estimate(s), 20)[0]
        other = theirs[name]
        print(f"{name:<12}{reported:>12,.0f}{ours:>12,.0f}{other['gpu_hours']:>14,.0f}"
              f"{other['gpu_hours'] / ours:>8.2f}{params / 1e9:>10.2f}B{other['params'] / 1e9:>7.2f}B"
              f"{ms:>8.2f}{other['ms_per_call']:>9.2f}")


def validation(skip_llm_analysis: bool) -> None:
    """GPU-hours of published runs: the workbench without their MFU (as shipped and leave-one-out), 6ND at Epoch's
    constant 0.375, and llm-analysis at the same constant (it has no MFU model: a user types the efficiency)."""
    table = calibration.comparison().set_index("name")
    s = calibration.summary(table.reset_index())
    print(f"\nValidation on {s['runs']} published runs (workbench validate): median |error| / within +-30 %")
    print(f"  workbench, parameters as shipped:    {s['median_abs_error']:6.1%} / {s['within_30_error']:4.0%}")
    print(f"  workbench, leave-one-out refit:      {s['median_abs_error_leave_one_out']:6.1%} / "
          f"{s['within_30_error_leave_one_out']:4.0%}")
    print(f"  6ND at constant MFU 0.375 (Epoch):   {s['median_abs_error_epoch_0375']:6.1%} / "
          f"{s['within_30_error_epoch_0375']:4.0%}")
    print(f"  frontier runs (>= 1e24 FLOP, GPU count published): worst leave-one-out "
          f"{s['frontier_max_abs_error_leave_one_out']:.1%}")
    theirs = {} if skip_llm_analysis else llm_analysis_results(calibration.EPOCH_MFU)
    print(f"{'run':<12}{'reported':>12}{'wb error':>10}{'wb loo':>9}{'6ND@0.375':>11}{'llm-analysis@0.375':>20}")
    for name, _, _, _, _, _, reported in RUNS:
        row = table.loc[name]
        other = (f"{theirs[name]['gpu_hours'] / reported - 1:+.1%}" if name in theirs else "-")
        print(f"{name:<12}{reported:>12,.0f}{row['error']:>+10.1%}{row['error_leave_one_out']:>+9.1%}"
              f"{row['error_epoch_0375']:>+11.1%}{other:>20}")


if __name__ == "__main__":
    main()
