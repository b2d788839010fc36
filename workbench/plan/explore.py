"""Sweeps for the architects' notebooks: one input varied over a grid, everything else from a scenario,
evaluated as one batch. Each returns a tidy DataFrame (one row per grid point) ready for a chart.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..formulas import scaling
from .estimate import estimate
from .scenario import Scenario, fields


def _batch(scenario: Scenario, **arrays):
    return estimate(scenario.resized(**arrays))


def isoflop(scenario: Scenario, flops: float, sizes=None, points: int = 25) -> pd.DataFrame:
    """Model sizes trading parameters for tokens at a fixed pre-training budget ``flops`` (6 N D).

    Columns: ``params``, ``tokens``, ``tokens_per_param``, ``loss`` (the scenario's scaling law),
    ``total_cost_usd``, ``compute_cost_usd`` (pre-training accelerator time), ``optimal`` (the grid point
    nearest to the compute-optimal size).
    """
    n_opt, _ = scaling.compute_optimal(flops, scenario.scaling_law)
    sizes = np.logspace(np.log10(n_opt / 10), np.log10(n_opt * 10), points) if sizes is None else np.asarray(sizes, float)
    spec = fields()
    sizes = sizes[(sizes >= spec["params"].min) & (sizes <= spec["params"].max)]
    tokens = flops / (6.0 * sizes)
    keep = (tokens >= spec["tokens"].min) & (tokens <= spec["tokens"].max)
    sizes, tokens = sizes[keep], tokens[keep]
    est = _batch(scenario, params=sizes, tokens=tokens, active_params=None, d_model=None, n_layers=None,
                 reward_model_params=None)
    compute = est.lines[(est.lines["stage"] == "pretrain") & (est.lines["item"] == "accelerator time")]
    frame = pd.DataFrame({"params": sizes, "tokens": tokens, "tokens_per_param": tokens / sizes,
                          "loss": scaling.loss(sizes, tokens, scenario.scaling_law),
                          "total_cost_usd": est.total_cost_usd, "compute_cost_usd": compute["cost_usd"].to_numpy()})
    frame["optimal"] = np.abs(np.log(frame["params"] / n_opt)) == np.abs(np.log(frame["params"] / n_opt)).min()
    return frame


def budget_doubling(flops: float, law: str = scaling.DEFAULT_LAW) -> pd.DataFrame:
    """What 1x, 2x, 4x and 8x a FLOP budget buy at the compute-optimum: size, tokens, loss."""
    budgets = flops * np.array([1.0, 2.0, 4.0, 8.0])
    n_opt, d_opt = scaling.compute_optimal(budgets, law)
    return pd.DataFrame({"budget_multiple": [1, 2, 4, 8], "flops": budgets, "params": n_opt, "tokens": d_opt,
                         "tokens_per_param": d_opt / n_opt, "loss": scaling.loss(n_opt, d_opt, law)})


def context_sweep(scenario: Scenario, seq_lens=(2048, 4096, 8192, 16384, 32768)) -> pd.DataFrame:
    """Sequence length against FLOPs, attention share, memory per GPU, minimum GPUs and cost."""
    seq_lens = np.asarray(seq_lens, dtype=float)
    est = _batch(scenario, seq_len=seq_lens)
    d = est.details
    return pd.DataFrame({
        "seq_len": seq_lens.astype(int), "training_flops": est.training_flops,
        "attention_flops_share": d["attention_flops_share"], "gpu_hours": est.gpu_hours,
        "activation_gb_per_gpu": d["activation_bytes_per_gpu"] / 1e9, "memory_gb_per_gpu": d["memory_bytes_per_gpu"] / 1e9,
        "min_gpus_to_fit": d["min_gpus_to_fit"], "n_gpus": est.n_gpus, "total_cost_usd": est.total_cost_usd,
    })


def checkpoint_sweep(scenario: Scenario, intervals_hours=None, points: int = 25) -> pd.DataFrame:
    """Checkpoint interval against the GPU time lost to failures and spent writing checkpoints [USD], on the file
    system the scenario buys (its throughput held: the U curve of one file system).

    Columns: ``interval_hours``, ``lost_work_usd``, ``checkpoint_write_usd``, ``failures_usd`` (their sum),
    ``checkpoints_written``; the Young/Daly interval of the scenario is in ``young_daly_hours``.
    """
    base = estimate(scenario.replace(checkpoint_interval_hours=None))
    optimum = float(base.details["checkpoint_interval_hours"])
    if scenario.pfs_throughput_gb_per_s is None:
        scenario = scenario.replace(pfs_throughput_gb_per_s=float(base.details["pfs_throughput_gb_per_s"]))
    if intervals_hours is None:
        centre = optimum if np.isfinite(optimum) else 1.0
        intervals_hours = np.logspace(np.log10(centre / 20), np.log10(centre * 20), points)
    spec = fields()["checkpoint_interval_hours"]
    intervals = np.clip(np.asarray(intervals_hours, dtype=float), spec.min, spec.max)
    est = _batch(scenario, checkpoint_interval_hours=intervals)
    lines = est.lines[est.lines["stage"] == "pretrain"]
    lost = lines[lines["item"] == "lost work and restarts"]["cost_usd"].to_numpy()
    writes = lines[lines["item"] == "checkpoint writes"]["cost_usd"].to_numpy()
    wall_hours = est.details["pretrain_days_with_overheads"] * 24.0
    return pd.DataFrame({"interval_hours": intervals, "lost_work_usd": lost, "checkpoint_write_usd": writes,
                         "failures_usd": lost + writes, "checkpoints_written": est.gpu_hours / est.n_gpus / intervals,
                         "young_daly_hours": optimum, "wall_hours": wall_hours})


def failure_rate_sweep(scenario: Scenario, multiples=(0.25, 0.5, 1, 2, 4, 8)) -> pd.DataFrame:
    """Failure rate (multiples of the scenario's) against interruptions, lost GPU-hours and total cost."""
    rates = scenario.gpu_failure_rate_per_day * np.asarray(multiples, dtype=float)
    rates = np.minimum(rates, fields()["gpu_failure_rate_per_day"].max)
    est = _batch(scenario, gpu_failure_rate_per_day=rates)
    failures = est.lines[est.lines["category"] == "failures"].groupby("scenario")["quantity"].sum().to_numpy()
    return pd.DataFrame({"rate_multiple": multiples, "gpu_failure_rate_per_day": rates,
                         "interruptions": est.details["pretrain_interruptions"],
                         "mtbf_hours": est.details["cluster_mtbf_hours"], "failure_gpu_hours": failures,
                         "failure_share": failures / est.gpu_hours, "total_cost_usd": est.total_cost_usd})


def spot_vs_on_demand(scenario: Scenario, reclaims_per_node_month=(0, 0.1, 0.2, 0.5, 1, 2, 5)) -> pd.DataFrame:
    """Spot at several reclaim rates against on-demand: compute plus failures cost, and total [USD]."""
    reclaims = np.asarray(reclaims_per_node_month, dtype=float)
    n = reclaims.size
    pricing = np.array(["spot"] * n + ["on_demand"], dtype=object)
    est = _batch(scenario, pricing=pricing, spot_interruptions_per_node_month=np.append(reclaims, 0.0))
    lines = est.lines[est.lines["stage"] == "pretrain"]
    compute = lines[lines["category"].isin(["compute", "failures"])].groupby("scenario")["cost_usd"].sum().to_numpy()
    return pd.DataFrame({"pricing": pricing, "spot_interruptions_per_node_month": np.append(reclaims, np.nan),
                         "price_per_gpu_hour": est.details["price_per_gpu_hour"],
                         "compute_and_failures_usd": compute, "total_cost_usd": est.total_cost_usd})


def serving_sweep(scenario: Scenario, input: str, values) -> pd.DataFrame:
    """One serving input (``requests_per_day``, ``peak_to_average``, ``input_tokens_per_request``,
    ``tpot_target_ms``, ...) against GPUs, replica, batch, time per output token, cost per month, per million input /
    output / blended tokens and per request."""
    values = np.asarray(values, dtype=float)
    est = _batch(scenario, **{input: values})
    d = est.details
    return pd.DataFrame({input: values, "serving_gpus": d["serving_gpus"], "replica_gpus": d["serving_replica_gpus"],
                         "batch": d["serving_batch"], "tpot_ms": d["serving_tpot_ms"],
                         "cost_per_month_usd": d["serving_cost_per_month_usd"],
                         "cost_per_million_input_tokens_usd": d["serving_cost_per_million_input_tokens_usd"],
                         "cost_per_million_output_tokens_usd": d["serving_cost_per_million_output_tokens_usd"],
                         "cost_per_million_tokens_usd": d["serving_cost_per_million_tokens_usd"],
                         "cost_per_request_usd": d["serving_cost_per_request_usd"]})


LAYOUT_COLUMNS = ["tensor_parallel", "pipeline_parallel", "data_parallel", "zero_stage", "micro_batch_size",
                  "memory_gib_per_gpu", "capacity_gib", "fits", "mfu", "gpu_hours", "wall_days", "pipeline_bubble",
                  "tensor_parallel_overhead", "pipeline_traffic_overhead", "data_parallel_overhead", "idle_gpus",
                  "total_cost_usd"]


def layouts(scenario: Scenario, include_unfit: bool = False) -> pd.DataFrame:
    """Every tensor x pipeline x ZeRO x micro-batch layout of ``scenario``'s training cluster, best first.

    The cluster is the plan's (given, or sized by its estimate); each layout is estimated with the model's MFU
    (a typed MFU would make them all alike). Columns :data:`LAYOUT_COLUMNS`: memory per GPU against the usable
    capacity, the predicted MFU and GPU-hours, and the terms that cost utilisation. Layouts that do not fit in
    memory are left out unless ``include_unfit``. Sorted by GPU-hours, fitting layouts first.
    """
    from ..formulas import layouts as grid  # the candidate options
    from .scenario_rules import model_shape

    base = estimate(scenario)
    layers = float(np.ravel(model_shape(scenario.to_dict())[0])[0])
    n = float(base.n_gpus)
    rows = [(t, p, z, b) for t in grid.TENSOR_OPTIONS for p in grid.PIPELINE_OPTIONS for z in grid.ZERO_OPTIONS
            for b in grid.MICRO_BATCH_OPTIONS if p <= layers and t * p <= n]
    t, p, z, b = (np.array(column, dtype=float) for column in zip(*rows))
    est = estimate(scenario.replace(n_gpus=n, mfu=None, tensor_parallel=t, pipeline_parallel=p, zero_stage=z,
                                    micro_batch_size=b))
    d = est.details
    usable = scenario.usable_memory_fraction
    table = pd.DataFrame({
        "tensor_parallel": t.astype(int), "pipeline_parallel": p.astype(int),
        "data_parallel": np.asarray(d["data_parallel"]).astype(int), "zero_stage": z.astype(int),
        "micro_batch_size": b.astype(int), "memory_gib_per_gpu": np.asarray(d["memory_bytes_per_gpu"]) / 2**30,
        "capacity_gib": np.asarray(d["gpu_memory_bytes"]) * usable / 2**30,
        "fits": np.asarray(d["layout_fits"], dtype=bool), "mfu": est.mfu, "gpu_hours": est.gpu_hours,
        "wall_days": est.wall_days, "pipeline_bubble": d["pipeline_bubble"],
        "tensor_parallel_overhead": d["tensor_parallel_overhead"],
        "pipeline_traffic_overhead": d["pipeline_traffic_overhead"],
        "data_parallel_overhead": d["data_parallel_overhead"],
        "idle_gpus": np.round(np.asarray(d["idle_share"]) * n).astype(int), "total_cost_usd": est.total_cost_usd})
    if not include_unfit:
        table = table[table["fits"]]
    return table.sort_values(["fits", "gpu_hours", "memory_gib_per_gpu"], ascending=[False, True, True],
                             kind="stable").reset_index(drop=True)[LAYOUT_COLUMNS]
