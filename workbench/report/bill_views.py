"""Tidy frames of a bill review for the app's bill page, its CSV and its workbook: plan against actual by category
and by calendar month, spend against each budget's alert lines, attribution by tag without empty rows.

Amounts are in the display currency (``rate`` per USD); labels in ``lang``. A review is
:class:`workbench.bill.review.Review`.
"""
from __future__ import annotations

import pandas as pd

from ..bill.actuals import UNATTRIBUTED
from ..bill.review import NOTHING_USD, versus  # noqa: F401 - the words of a comparison live with the review
from ..reference.i18n import day_text, month_text, t
from .csv_export import headed, to_cents, to_csv

def _compared(frame: pd.DataFrame, key: str, rate: float, lang: str) -> pd.DataFrame:
    out = pd.DataFrame({key: frame[key].to_numpy(), "planned": frame["planned_usd"].to_numpy() * rate,
                        "actual": frame["actual_usd"].to_numpy() * rate})
    out["difference"] = out["actual"] - out["planned"]
    out["versus"] = [versus(p, a, lang) for p, a in zip(frame["planned_usd"], frame["actual_usd"])]
    return out


def by_category(review, lang: str = "en", rate: float = 1.0) -> pd.DataFrame:
    """Plan against actual to date per category: ``category``, ``planned``, ``actual``, ``difference``, ``versus``."""
    frame = review.by_category.assign(category=[t(c, lang) for c in review.by_category["category"]])
    return _compared(frame, "category", rate, lang)


def billed_months(review) -> pd.DataFrame:
    """The review's months from the bill's first to its last, summed over categories (USD): ``month``,
    ``planned_usd``, ``actual_usd``. A last month the bill covers in part is planned for that share (as the
    comparison by category to date is), so that the two tables add up to the same plan."""
    monthly = review.monthly
    months = monthly.groupby(["plan_month", "month"], as_index=False)[["planned_usd", "actual_usd"]].sum()
    billed = monthly.loc[monthly["actual_usd"].abs() >= NOTHING_USD, "plan_month"]
    if billed.empty:
        return months.iloc[0:0][["month", "planned_usd", "actual_usd"]]
    inside = months["plan_month"].between(int(billed.min()), int(billed.max()))
    out = months.loc[inside, ["plan_month", "month", "planned_usd", "actual_usd"]].reset_index(drop=True)
    last = out["plan_month"] == out["plan_month"].max()
    out.loc[last, "planned_usd"] = out.loc[last, "planned_usd"] * float(getattr(review, "last_month_share", 1.0))
    return out[["month", "planned_usd", "actual_usd"]]


def by_month(review, lang: str = "en", rate: float = 1.0) -> pd.DataFrame:
    """Plan against actual per calendar month the bill covers: ``month``, ``planned``, ``actual``, ``difference``,
    ``versus``."""
    months = billed_months(review)
    return _compared(months.assign(month=[month_text(m, lang) for m in months["month"]]), "month", rate, lang)


def alert_table(review, lang: str = "en", rate: float = 1.0) -> pd.DataFrame:
    """Actual spend against each budget's alert lines: ``budget``, ``amount``, ``alert``, ``threshold``, ``spent``,
    ``reached`` (the day the bill crossed it, else the month the forecast does, else not reached)."""
    alerts = review.alerts
    reached = []
    for row in alerts.itertuples():
        if not pd.isna(row.day):
            reached.append(day_text(pd.Timestamp(row.day).date(), lang))
        elif isinstance(row.projected_month, str):
            reached.append(t("bill_forecast_in", lang).format(month=month_text(row.projected_month, lang)))
        else:
            reached.append(t("not_reached", lang))
    return pd.DataFrame({"budget": [t(r, lang) for r in alerts["resource"]],
                         "amount": alerts["budget_usd"].to_numpy() * rate,
                         "alert": [f"{p:g} %" for p in alerts["percent"]],
                         "threshold": alerts["threshold_usd"].to_numpy() * rate,
                         "spent": alerts["spent_usd"].to_numpy() * rate, "reached": reached})


def tag_table(frame: pd.DataFrame, rate: float = 1.0, lang: str = "en", top: int | None = 20) -> tuple[pd.DataFrame, int]:
    """A tag's values with spend in the plan or the bill, largest first (``top`` of them; ``None``: all), and how
    many more there are: ``value``, ``planned``, ``actual``, ``difference``, ``versus``."""
    size = frame[["planned_usd", "actual_usd"]].abs().max(axis=1)
    kept = frame[size >= NOTHING_USD].assign(_size=size).sort_values("_size", ascending=False, kind="stable")
    shown = kept if top is None else kept.head(top)
    return _compared(shown, "value", rate, lang), len(kept) - len(shown)


def review_frame(review, lang: str = "en", rate: float = 1.0) -> pd.DataFrame:
    """Every comparison of the review in one long frame, for its CSV: ``table`` (category, month or the tag key),
    ``value``, ``planned``, ``actual``, ``difference``, ``versus``."""
    parts = [by_category(review, lang, rate).rename(columns={"category": "value"}).assign(table=t("category", lang)),
             by_month(review, lang, rate).rename(columns={"month": "value"}).assign(table=t("month", lang))]
    for key, frame in review.tags.items():
        values = tag_table(frame, rate, lang, top=None)[0]
        values["value"] = [t(v, lang) if v == UNATTRIBUTED else v for v in values["value"]]
        parts.append(values.assign(table=t(key, lang)))
    out = pd.concat(parts, ignore_index=True)
    return out[["table", "value", "planned", "actual", "difference", "versus"]]


def review_csv(review, lang: str = "en", currency: str = "USD", rate: float = 1.0) -> str:
    """:func:`review_frame` as CSV, the amounts' columns named with the currency, in cents that add up within each
    table (the difference is that of the cents shown)."""
    frame = review_frame(review, lang, rate)
    for column in ("planned", "actual"):
        frame[column] = frame.groupby("table", sort=False)[column].transform(lambda v: to_cents(v.to_numpy()))
    frame["difference"] = (frame["actual"] - frame["planned"]).round(2)
    frame = frame.rename(columns={
        c: f"{c}_{currency.lower()}" for c in ("planned", "actual", "difference")})
    return to_csv(headed(frame, lang))
