"""Every CSV the workbench writes (the cost lines, a programme's months, the bill review's tables) goes through
:func:`to_csv`: text a spreadsheet would run as a formula is defused. Amounts are written in cents by
:func:`to_cents`, which rounds so that the cents add up to the total's cents (a CSV sums to its JSON total, to the
cent), and quantities with six significant digits by :func:`significant`: a person reads ``97258.7``, not
``97258.69785219168``."""
from __future__ import annotations

import numpy as np
import pandas as pd

#: A spreadsheet runs a cell starting with one of these as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell that a spreadsheet would run as a formula prefixed by ``'``."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = [f"'{v}" if isinstance(v, str) and v.startswith(FORMULA_STARTS) else v for v in out[column]]
    return out


def to_csv(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text: formula-safe, every number exact, no index."""
    return spreadsheet_safe(frame).to_csv(index=False)



def to_cents(amounts) -> np.ndarray:
    """``amounts`` rounded to cents so that they add up to their sum rounded to cents (largest remainder: the
    lines whose rounding lost most take the cents rounding dropped) [same unit as given]. Amounts too large for a
    cent to count (over 2**52 cents in all) are each rounded on their own."""
    amounts = np.asarray(amounts, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        x = amounts * 100.0
        total = x.sum()
    if x.size == 0 or not np.isfinite(x).all() or not np.isfinite(total) or abs(total) > 2**52:
        return np.where(np.isfinite(x), np.round(x) / 100.0, amounts)
    cents = np.round(x)
    short = int(round(total) - cents.sum())  # cents the rounding lost (+) or gained (-)
    if short:
        order = np.argsort(cents - x)  # most rounded down first
        picks = order[:abs(short)] if short > 0 else order[::-1][:abs(short)]
        cents[picks] += np.sign(short)
    return cents / 100.0


def significant(values, digits: int = 6) -> np.ndarray:
    """``values`` with ``digits`` significant digits (0 and non-finite values kept)."""
    x = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.where((x != 0) & np.isfinite(x), 10.0 ** (digits - 1 - np.floor(np.log10(np.abs(x)))), 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = np.round(x * scale) / scale
    return np.where(np.isfinite(x) & np.isfinite(rounded), rounded, x)  # a subnormal's scale overflows: kept


#: A CSV's column names for a Chinese reader (its amounts' columns name the currency: ``cost_cny`` -> 成本（元）).
HEADERS_ZH = {"scenario_name": "方案名称", "stage": "阶段", "category": "类别", "item": "项目", "quantity": "数量",
              "unit": "单位", "unit_cost": "单价", "cost": "成本", "cost_type": "成本类型", "group": "分组",
              "formula": "公式", "source": "来源", "calendar_month": "月份", "workstream": "工作流", "cycle": "轮次",
              "gpu_hours": "GPU 小时", "gpu_hour_class": "GPU 小时类别", "programme_month": "计划月序",
              "table": "表", "value": "值", "planned": "计划", "actual": "实际", "difference": "差异（实际 − 计划）",
              "versus": "相对计划"}
_CURRENCY_ZH = {"cny": "元", "usd": "美元"}


def headed(frame: pd.DataFrame, lang: str = "en") -> pd.DataFrame:
    """``frame`` with its column names in ``lang`` (tag keys and unknown names as they are)."""
    if lang != "zh":
        return frame

    def name(column):
        base, _, code = str(column).rpartition("_")
        if code in _CURRENCY_ZH and base in HEADERS_ZH:
            return f"{HEADERS_ZH[base]}（{_CURRENCY_ZH[code]}）"
        return HEADERS_ZH.get(column, column)
    return frame.rename(columns=name)
