"""Budget tracking: the planned burn over the project's timeline and the day each alert line is crossed.

Timeline: the training stages run one after another on the same cluster (pre-training, then SFT, then
preference tuning), evaluation runs alongside them, and serving follows for ``serving_months``. Each
cost line is spent evenly over its stage's window, except annotation, which is bought from day 0 until
its stage ends (labelling runs alongside pre-training, as Llama 2's weekly batches did), and the project team, paid
over its staff months from day 0 when they outlast the stages; storage, network, other staff and redundancy follow
their stage too (a planning simplification: retention costs are committed when the run writes the data).
The cumulative spend is then piecewise linear, so crossings are exact, not sampled.
"""
from __future__ import annotations

import datetime

import numpy as np
import pandas as pd

DAYS_PER_MONTH = 365.25 / 12


def stage_windows(est) -> dict[str, tuple[float, float]]:
    """(start day, end day) of each stage of a single-scenario estimate."""
    d = est.details
    pretrain = float(d["pretrain_days_with_overheads"])
    total = float(d["training_days_total"])
    sft_end = pretrain + (total - pretrain) * _share(d["sft_gpu_hours"], d["sft_gpu_hours"] + d["preference_gpu_hours"])
    serving_days = float(est.scenario.serving_months) * DAYS_PER_MONTH
    return {"pretrain": (0.0, pretrain), "sft": (pretrain, sft_end), "preference": (sft_end, total),
            "evaluation": (0.0, total), "inference": (total, total + serving_days)}


def _share(part, whole):
    return float(part / whole) if whole > 0 else 0.5


def _spent(lines: pd.DataFrame, windows, days: np.ndarray, staff_days: float = 0.0) -> np.ndarray:
    spent = np.zeros_like(days, dtype=float)
    for (stage, category, item), cost in lines.groupby(["stage", "category", "item"])["cost_usd"].sum().items():
        start, end = windows[stage]
        if category == "annotation":  # labels are bought while the model pre-trains
            start = 0.0
        elif item == "project team" and staff_days > end:
            # the team is paid month by month for its staff months, not all in the GPUs' days (a fine-tune of
            # hours with a year's team put a year's pay, and the alert lines, on its first day)
            start, end = 0.0, staff_days
        if end > start:
            spent += cost * np.clip((days - start) / (end - start), 0.0, 1.0)
        else:
            spent += cost * (days >= start)
    return spent


def burn(est, budget_usd=None, points: int = 101) -> pd.DataFrame:
    """Planned cumulative spend: columns ``day``, ``spent_usd``, ``remaining_usd``, ``spent_share``.

    ``budget_usd`` defaults to the scenario's ``budget_usd``, else the plan's own total.
    """
    if est.scenario.batch_size is not None:
        raise ValueError("budget: burn() takes a single-scenario estimate")
    budget = _budget(est, budget_usd)
    windows = stage_windows(est)
    staff_days = float(est.details.get("staff_months", 0.0) or 0.0) * DAYS_PER_MONTH
    end = max(max(w[1] for w in windows.values()), staff_days)
    breakpoints = {w for pair in windows.values() for w in pair} | {staff_days}
    days = np.unique(np.concatenate([np.linspace(0.0, end, points), sorted(breakpoints)]))
    spent = _spent(est.lines, windows, days, staff_days)
    return pd.DataFrame({"day": days, "spent_usd": spent, "remaining_usd": budget - spent,
                         "spent_share": spent / budget if budget > 0 else np.zeros_like(spent)})  # a plan of 0


def crossings(est, budget_usd=None, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Day each alert line (``alert_percents``, plus 100 %) is crossed; NaN if the plan never reaches it.
    ``table``: :func:`burn` of the same estimate, if already computed."""
    budget = _budget(est, budget_usd)
    levels = sorted({*(float(p) for p in est.scenario.alert_percents.split(",")), 100.0})
    table = burn(est, budget) if table is None else table
    days, spent = table["day"].to_numpy(), table["spent_usd"].to_numpy()
    rows = []
    for level in levels:
        threshold = budget * level / 100.0
        reached = np.nonzero(spent >= threshold - 1e-9 * max(threshold, 1.0))[0]
        if reached.size == 0:
            day = np.nan
        elif reached[0] == 0:
            day = float(days[0])
        else:
            i = reached[0]
            day = float(np.interp(threshold, spent[i - 1:i + 1], days[i - 1:i + 1]))
        rows.append({"alert_percent": level, "threshold_usd": threshold, "day": day, "crossed": bool(reached.size),
                     "date": _date(est.scenario.start_date, day)})
    return pd.DataFrame(rows)


def _date(start: str, day: float):
    """The calendar date ``day`` days after ``start`` (YYYY-MM-DD), or None without a start or a crossing."""
    if not start or not np.isfinite(day):
        return None
    return (datetime.date.fromisoformat(start) + datetime.timedelta(days=int(np.floor(day)))).isoformat()


def _budget(est, budget_usd):
    if budget_usd is None:
        budget_usd = est.scenario.budget_usd
    return float(est.total_cost_usd if budget_usd is None else budget_usd)
