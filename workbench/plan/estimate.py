"""From a Scenario to figures and a tidy table of cost lines, in one numpy pass.

``estimate(scenario)`` broadcasts every field to a common shape (a scalar scenario is shape ``()``, a
batch is shape ``(n,)``), runs the formulas of the ``compute``, ``memory``, ``mfu``, ``scaling`` and
``prices`` modules on whole arrays, and only then builds the DataFrame of lines.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..reference import catalog
from . import figures
from .lines import CATEGORIES, LINE_COLUMNS, STAGE_GROUPS, STAGES, Line, all_lines, lines_frame, stage_groups  # noqa: F401 (re-exported)
from .notes import check_serving, defaults_used, multi_node_warning, warnings
from .scenario import Scenario, ScenarioError, fields, no_bandwidth_error

HEADLINE = ("training_flops", "gpu_hours", "wall_days", "n_gpus", "mfu", "total_cost_usd")


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
        keys = (stage_groups(self.lines["stage"], self.line_kinds()) if by == "group" else self.lines[by])
        codes = pd.Index(order).get_indexer(keys)  # a summed table by hand: pivot_table took ~3 ms a call
        scenarios = self.lines["scenario"].to_numpy()
        known = codes >= 0
        table = np.zeros((len(order), int(scenarios.max(initial=-1)) + 1 if len(scenarios) else 1))
        np.add.at(table, (codes[known], scenarios[known]), self.lines["cost_usd"].to_numpy()[known])
        if self.scenario.batch_size is None:
            return pd.Series(table[:, 0], index=pd.Index(order, name=by), name="cost_usd")
        return pd.DataFrame(table, index=pd.Index(order, name=by), columns=pd.Index(range(table.shape[1]), name="scenario"))

    def line_kinds(self) -> np.ndarray:
        """The plan kind (``plan_kind``) of each cost line's scenario."""
        kinds = np.asarray(self.scenario.plan_kind, dtype=object)
        return np.full(len(self.lines), kinds.item(), dtype=object) if kinds.ndim == 0 else \
            kinds[self.lines["scenario"].to_numpy()]

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
            # the plan's currency: the one its GPUs are billed in (CNY on a Chinese cloud), every amount in another
            # converted at the plan's cny_per_usd
            out["currency"] = self.details["price_currency"]
            out["total_cost"] = out["total_cost_cny"] if out["currency"] == "CNY" else out["total_cost_usd"]
        if self.scenario.batch_size is None:
            for by in ("stage", "group", "category", "cost_type"):
                out[f"totals_by_{by}"] = {k: float(v) for k, v in self.totals(by).items()}
            from ..formulas import budget  # budget builds on Estimate
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
        out["warnings"] += [w for w in multi_node_warning(self.details) if w not in out["warnings"]]
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


def broadcast_inputs(scenario: Scenario) -> dict[str, np.ndarray]:
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

def _model(x: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[Line], dict]:
    """The public figures, the lines and every figure (internal ones too) for broadcast inputs ``x``."""
    f = figures.plan(x)
    return {name: f[name] for name in figures.PUBLIC}, all_lines(x, f), f


def _scalar(value):
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value



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
    inputs = broadcast_inputs(scenario)
    figures, lines, _ = _model(inputs)
    check_serving(scenario, figures)
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
    inputs = broadcast_inputs(scenario)
    shape = next(iter(inputs.values())).shape
    figures, lines, everything = _model(inputs)
    check_serving(scenario, figures)
    total = _checked_total(scenario, lines)
    figures = {k: _scalar(np.broadcast_to(v, shape)) for k, v in figures.items()}
    single = scenario.batch_size is None
    headline = {k: figures[k] for k in HEADLINE if k != "total_cost_usd"}
    return Estimate(scenario=scenario, **headline, total_cost_usd=_scalar(total),
                    lines=lines_frame(lines, shape),
                    details={k: v for k, v in figures.items() if k not in headline},
                    defaults_used=defaults_used(scenario, figures) if single else {},
                    warnings=warnings(scenario, {**everything, **figures, "total_cost_usd": _scalar(total)})
                    if single else [])
