"""The lines the planning guides draw around each way to spend less, checked on a scenario: a redundancy factor
below the guides' range, a checkpoint interval far from the Young/Daly optimum, a low training precision without a
divergence allowance, spot capacity for a long pre-training run on a large cluster, log sampling below what failure
diagnosis needs at the cluster's size, serving capacity below the traffic. Each warning says why, what it costs where modelled, and its source; the
thresholds and sources are in ``data/boundaries.csv``.
"""
from __future__ import annotations

import math

import numpy as np

from ..formulas import failures
from ..reference.data import DataFileError, cached, data_dir, read_table
from ..reference.messages import Message
from .figures import RESERVED_TERM_HOURS


#: The boundaries the checks below read, each a row of ``data/boundaries.csv``.
BOUNDARIES = ("redundancy_factor_min", "checkpoint_interval_ratio_max", "spot_reclaims_max", "log_diagnosis_share_max",
              "serving_unserved_share_max", "reserved_idle_share_max")
#: The term a rented commitment binds to [h]: a reservation's years, a monthly rental's month (as the estimate's
#: commitment lines count them).
TERM_HOURS = RESERVED_TERM_HOURS


@cached
def table():
    """``data/boundaries.csv``, checked: a row for each of :data:`BOUNDARIES`, positive values."""
    frame = read_table("boundaries.csv", numeric=("value",), required=("boundary", "value", "unit", "source"),
                       key="boundary", bounds={"value": (0, 1e6)})
    missing = [name for name in BOUNDARIES if name not in set(frame["boundary"])]
    if missing:
        raise DataFileError(str(data_dir() / "boundaries.csv"), f"no row for {', '.join(missing)} (allowed: a row "
                            f"for each of {', '.join(BOUNDARIES)})")
    return frame


@cached
def thresholds() -> dict[str, float]:
    """Boundary -> threshold."""
    return dict(zip(table()["boundary"], table()["value"]))


@cached
def sources() -> dict[str, str]:
    return dict(zip(table()["boundary"], table()["source"]))


def checkpoint_overhead_gpu_hours(f, interval_hours):
    """Pre-training GPU-hours lost to interruptions and spent writing checkpoints at ``interval_hours`` [GPU-h]."""
    n_gpus = f["n_gpus"]
    o = failures.overhead(f["gpu_hours"] / n_gpus, n_gpus, f["interruptions_per_day"], interval_hours,
                          f["checkpoint_write_hours"], f["restart_hours"])
    return o["lost_gpu_hours"] + o["checkpoint_gpu_hours"]


def field_of(warning: str) -> str | None:
    """The scenario field a boundary warning is about (each starts ``field=value``), or None."""
    from .scenario import fields
    name = warning.split("=", 1)[0]
    return name if "=" in warning and name in fields() else None


def warnings(scenario, f) -> list[str]:
    """The boundary warnings of a single scenario with figures ``f`` (see the module docstring); each starts with
    the field it is about (``field=value``), so that an app can show it beside that field's control."""
    limit, why = thresholds(), sources()
    price = float(f["stage_price"]["pretrain"])
    out = []
    if scenario.redundancy_factor < limit["redundancy_factor_min"]:
        out.append(Message("ew_contingency_low", value=scenario.redundancy_factor, least=limit["redundancy_factor_min"],
                           source=why["redundancy_factor_min"]))
    optimum = float(f["young_daly_interval_hours"])
    interval = float(f["checkpoint_interval_hours"])
    ratio = interval / optimum if np.isfinite(optimum) and optimum > 0 else 1.0
    if scenario.checkpoint_interval_hours is not None and (ratio > limit["checkpoint_interval_ratio_max"]
                                                          or ratio < 1 / limit["checkpoint_interval_ratio_max"]):
        extra = float(checkpoint_overhead_gpu_hours(f, interval) - checkpoint_overhead_gpu_hours(f, optimum))
        out.append(Message("ew_interval_long" if ratio > 1 else "ew_interval_short", interval=interval, ratio=ratio,
                           optimum=optimum, extra_gpu_hours=extra, extra_usd=extra * price,
                           source=why["checkpoint_interval_ratio_max"]))
    risks = failures.precision_risks()
    if scenario.divergence_allowance == "none" and failures.precision_risk_values()[scenario.precision][0] > 0:
        expected = float(f["divergence_gpu_hours"])
        out.append(Message("ew_divergence", precision=scenario.precision, probability=float(f["divergence_probability"]),
                           tokens=scenario.tokens, gpu_hours=expected, cost_usd=expected * price,
                           source=risks.at[scenario.precision, "source"]))
    out += _reserved_warnings(scenario, f, limit["reserved_idle_share_max"], why["reserved_idle_share_max"])
    if f["stage_mode"]["pretrain"] == "spot":
        # the run's wall-clock time with its failures and restarts: reclaims come while it lasts
        n_gpus, wall_hours = float(f["n_gpus"]), float(f["stage_days"]["pretrain"]) * 24.0
        reclaims_per_day = n_gpus / scenario.gpus_per_node * scenario.spot_interruptions_per_node_month / failures.DAYS_PER_MONTH
        share = reclaims_per_day / float(f["interruptions_per_day"]) if float(f["interruptions_per_day"]) > 0 else 0.0
        lost = share * float(f["stage_overhead"]["pretrain"]["lost_gpu_hours"])
        reclaims = reclaims_per_day * wall_hours / 24
        if reclaims > limit["spot_reclaims_max"]:
            out.append(Message("ew_spot_reclaims", n_gpus=n_gpus, days=wall_hours / 24, reclaims=reclaims,
                               lost_gpu_hours=lost, share=lost / float(f["gpu_hours"]), lost_usd=lost * price,
                               source=why["spot_reclaims_max"]))
    unserved = float(f["serving_unserved_share"]) if scenario.serving_months > 0 else 0.0
    if np.isfinite(unserved) and unserved > limit["serving_unserved_share_max"]:
        out.append(Message("ew_unserved", headroom=scenario.serving_headroom,
                           moment="each_moment" if bool(f["serving_autoscaled"]) else "daily_peak", share=unserved,
                           per_day=unserved * scenario.requests_per_day, source=why["serving_unserved_share_max"]))
    unlogged = (1.0 - scenario.log_sampling_ratio) * scenario.unlogged_diagnosis_minutes / 60.0
    if unlogged > 0:
        # failures only: a spot reclaim has a known cause and needs no search for a node
        total_rate = float(f["interruptions_per_day"])
        failure_rate = float(f["n_gpus"]) * scenario.gpu_failure_rate_per_day
        interruptions = float(f["stage_overhead"]["pretrain"]["interruptions"]) * (
            failure_rate / total_rate if total_rate > 0 else 0.0)
        idle = interruptions * unlogged * float(f["n_gpus"])
        if idle > limit["log_diagnosis_share_max"] * float(f["gpu_hours"]):
            out.append(Message("ew_log_sampling", ratio=scenario.log_sampling_ratio, n_gpus=float(f["n_gpus"]),
                               unlogged=1 - scenario.log_sampling_ratio, failures=interruptions, idle_gpu_hours=idle,
                               idle_usd=idle * price, source=why["log_diagnosis_share_max"]))
    return out


def _reserved_warnings(scenario, f, share_max: float, why: str) -> list[str]:
    """A reservation or monthly rental (of the cluster or of a stage) whose whole terms the plan leaves more than
    ``share_max`` idle: the hours the estimate's commitment lines count (figures.commitments), not counted again."""
    out = []
    fields_of = {"pretrain": "pricing", "post_training": "post_training_pricing",
                 "experiments": "experiment_pricing", "serving_base": "serving_pricing"}
    for group, field in fields_of.items():
        mode = str(np.ravel(f["stage_mode"][group])[0])
        gpus = float(np.ravel(f["committed_gpus"][group])[0])
        hours = float(np.ravel(f["committed_used_hours"][group])[0])
        if mode not in TERM_HOURS or gpus <= 0 or hours <= 0:
            continue
        # the share other work is said to absorb is already out of the idle hours (commitment_other_use_share)
        idle = float(np.ravel(f["idle_committed_gpu_hours"][group])[0])
        if idle > share_max * (idle + gpus * hours):
            price = float(np.ravel(f["stage_price"][group])[0])
            term_days = TERM_HOURS[mode] / 24.0 * math.ceil(hours / TERM_HOURS[mode] - 1e-9)
            # a plan that does not pre-train holds its cluster for its fine-tuning: named so
            shown = "post_training" if group == "pretrain" and scenario.plan_kind != "pretrain" else group
            out.append(Message("ew_reserved_idle", field=field, value=getattr(scenario, field), group=shown, gpus=gpus,
                               days=hours / 24, term_days=term_days, idle_gpu_hours=idle, idle_usd=idle * price,
                               source=why))
    return out
