"""From a Scenario to figures and a tidy table of cost lines, in one numpy pass.

``estimate(scenario)`` broadcasts every field to a common shape (a scalar scenario is shape ``()``, a
batch is shape ``(n,)``), runs the formulas of the ``compute``, ``memory``, ``mfu``, ``scaling`` and
``prices`` modules on whole arrays, and only then builds the DataFrame of lines.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import catalog, compute, memory, mfu, prices, scaling
from .scenario import Scenario, fields

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

    def to_dict(self) -> dict:
        """Plain-Python form (what ``workbench estimate --json`` prints)."""
        def plain(x):
            return x.tolist() if isinstance(x, np.ndarray) else x
        out = {name: plain(getattr(self, name)) for name in HEADLINE}
        out["details"] = {k: plain(v) for k, v in self.details.items()}
        out["lines"] = json.loads(self.lines.to_json(orient="records"))
        out["defaults_used"] = self.defaults_used
        out["warnings"] = list(self.warnings)
        out["scenario"] = self.scenario.to_dict()
        return out


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


def _fill(value: np.ndarray, default: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(value), default, value)


def _model(x: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[Line]]:
    """All figures and lines for broadcast inputs ``x``."""
    active = _fill(x["active_params"], x["params"])
    d_model = _fill(x["d_model"], compute.derived_d_model(active))
    n_layers = _fill(x["n_layers"], compute.derived_n_layers(d_model))
    peak = catalog.peak_flops_per_s(x["gpu"], x["precision"])
    prior = mfu.default_mfu(x["gpu"])
    mfu_used = _fill(x["mfu"], prior)

    flops = compute.training_flops(active, x["tokens"], x["seq_len"], d_model, n_layers)
    attention = compute.attention_training_flops(x["tokens"], x["seq_len"], d_model, n_layers)
    hardware_flops = flops + compute.recompute_flops(active, x["tokens"], x["seq_len"], d_model, n_layers,
                                                     x["recompute"])
    hours = compute.gpu_hours(flops, peak, mfu_used)

    memory_bytes = catalog.spec(x["gpu"], "memory_gb").astype(float) * 1e9
    activations = memory.activation_bytes(x["seq_len"], d_model, n_layers, x["micro_batch_size"], x["recompute"],
                                          x["tensor_parallel"], compute.HEAD_DIM)
    min_gpus = memory.min_gpus_to_fit(x["params"], memory_bytes, activations, x["zero_stage"],
                                      x["tensor_parallel"], x["usable_memory_fraction"])
    per_node = x["gpus_per_node"]
    min_nodes_gpus = np.where(np.isfinite(min_gpus), np.ceil(min_gpus / per_node) * per_node, per_node)
    sized = np.maximum(compute.gpus_for_duration(hours, x["target_days"], per_node), min_nodes_gpus)
    n_gpus = _fill(x["n_gpus"], sized)
    days = compute.wall_days(hours, n_gpus)
    states = memory.model_state_bytes(x["params"], n_gpus, x["zero_stage"], x["tensor_parallel"])

    price = np.array(x["price_per_gpu_hour"], dtype=float)
    price_source = np.full(price.shape, "price_per_gpu_hour given by the user", dtype=object)
    looked_up = np.isnan(price)
    if looked_up.any():
        price[looked_up], price_source[looked_up] = prices.price_per_gpu_hour(
            x["gpu"][looked_up], x["pricing"][looked_up], x["provider"][looked_up])

    n_opt, d_opt = scaling.compute_optimal(6.0 * active * x["tokens"], scaling.DEFAULT_LAW)
    figures = {
        "training_flops": flops, "gpu_hours": hours, "wall_days": days, "n_gpus": n_gpus, "mfu": mfu_used,
        "active_params": active, "d_model": d_model, "n_layers": n_layers, "peak_flops_per_s": peak,
        "mfu_prior": prior, "attention_flops_share": attention / flops, "hardware_flops": hardware_flops,
        "hfu": mfu_used * hardware_flops / flops, "price_per_gpu_hour": price, "gpu_memory_bytes": memory_bytes,
        "model_state_bytes_per_gpu": states, "activation_bytes_per_gpu": activations,
        "memory_bytes_per_gpu": states + activations, "min_gpus_to_fit": min_gpus,
        "tokens_per_param": scaling.tokens_per_param(active, x["tokens"]),
        "compute_optimal_params": n_opt, "compute_optimal_tokens": d_opt,
        "predicted_loss": scaling.loss(active, x["tokens"], scaling.DEFAULT_LAW),
    }
    lines = [
        Line("pretrain", "compute", "accelerator time", hours, "GPU-h", price, "elastic",
             "6·N_active·D·(1 + s/(12·d_model)) / (peak FLOP/s × MFU × 3600)", price_source),
    ]
    return figures, lines


def _lines_frame(lines: list[Line], shape) -> pd.DataFrame:
    n = int(np.prod(shape)) if shape else 1
    columns = {"scenario": np.tile(np.arange(n), len(lines))}
    for name in ("stage", "category", "item", "unit", "cost_type", "formula"):
        columns[name] = np.repeat([getattr(line, name) for line in lines], n)
    for name in ("quantity", "unit_cost_usd", "cost_usd"):
        columns[name] = np.concatenate([np.broadcast_to(getattr(line, name), shape).ravel() for line in lines])
    columns["source"] = np.concatenate([np.broadcast_to(np.asarray(line.source, dtype=object), shape).ravel()
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
        used["mfu"] = (f"{figures['mfu']:.3f}: median implied MFU of {int(row['n_runs'])} published runs on {basis} "
                       f"(quartiles {row['q25']:.2f}-{row['q75']:.2f}, range {row['min']:.2f}-{row['max']:.2f}; "
                       "data/published_runs.csv)")
    if scenario.price_per_gpu_hour is None:
        used["price_per_gpu_hour"] = (f"{figures['price_per_gpu_hour']:.2f} USD/GPU-h: "
                                      + prices.lookup(scenario.gpu, scenario.pricing, scenario.provider)[1])
    if scenario.n_gpus is None:
        used["n_gpus"] = (f"{figures['n_gpus']:.0f}: enough whole {scenario.gpus_per_node}-GPU nodes to finish in "
                          f"target_days={scenario.target_days:g} (memory needs at least "
                          f"{figures['min_gpus_to_fit']:.0f})")
    if scenario.d_model is None or scenario.n_layers is None:
        used["architecture"] = (f"d_model={figures['d_model']:.0f}, n_layers={figures['n_layers']:.0f}: derived from "
                                f"{figures['active_params']:.3g} active parameters (N = 12·L·h², h = 128·L)")
    if scenario.active_params is None:
        used["active_params"] = "equal to params (a dense model)"
    return used


def _warnings(scenario: Scenario, figures: dict) -> list[str]:
    out = []
    if not np.isfinite(figures["min_gpus_to_fit"]):
        out.append(f"the model does not fit in {scenario.gpu} memory at any GPU count with zero_stage="
                   f"{scenario.zero_stage}, tensor_parallel={scenario.tensor_parallel}, recompute="
                   f"{scenario.recompute!r}: raise the ZeRO stage or tensor_parallel, or use full recompute")
    elif figures["n_gpus"] < figures["min_gpus_to_fit"]:
        out.append(f"n_gpus={figures['n_gpus']:.0f} is below the {figures['min_gpus_to_fit']:.0f} GPUs that fit "
                   f"the model states and activations in {scenario.gpu} memory")
    note = scaling.optimality_warning(figures["active_params"], scenario.tokens, scenario.scaling_law)
    if note:
        out.append(note)
    return out


def estimate(scenario: Scenario | None = None, **changes) -> Estimate:
    """Figures and cost lines for ``scenario`` (default ``Scenario()``), with ``changes`` applied.

    Headline figures: ``training_flops`` [FLOP], ``gpu_hours`` [GPU-h], ``wall_days`` [day], ``n_gpus``
    [GPU], ``mfu`` [fraction], ``total_cost_usd`` [USD]; ``lines`` is the tidy table of cost lines
    (columns :data:`LINE_COLUMNS`); ``details`` holds the other figures (memory, architecture, scaling).
    A batch scenario (array fields) gives arrays and a ``scenario`` column indexing the batch.
    """
    scenario = Scenario() if scenario is None else scenario
    if changes:
        scenario = scenario.replace(**changes)
    inputs = _broadcast_inputs(scenario)
    shape = next(iter(inputs.values())).shape
    figures, lines = _model(inputs)
    total = sum(line.cost_usd for line in lines)
    figures = {k: _scalar(np.broadcast_to(v, shape)) for k, v in figures.items()}
    single = scenario.batch_size is None
    headline = {k: figures[k] for k in HEADLINE if k != "total_cost_usd"}
    return Estimate(scenario=scenario, **headline, total_cost_usd=_scalar(total),
                    lines=_lines_frame(lines, shape),
                    details={k: v for k, v in figures.items() if k not in headline},
                    defaults_used=_defaults_used(scenario, figures) if single else {},
                    warnings=_warnings(scenario, figures) if single else [])
