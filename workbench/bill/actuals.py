"""The real bill: a FOCUS billing export read, checked row by row, mapped to the workbench's categories and
attributed by tags.

FOCUS (FinOps Open Cost and Usage Specification, FinOps Foundation; exported by AWS, Google Cloud, Azure and
Oracle) names the columns read here: a cost column (``EffectiveCost`` by default: amortised, after discounts,
what FinOps practice tracks against a budget; ``BilledCost`` is what the invoice says), ``ChargePeriodStart``,
``ChargePeriodEnd``, ``BillingCurrency``, ``ServiceCategory``, ``ChargeCategory`` and, when present, ``Tags`` (a
JSON object), ``ServiceName``, ``ProviderName``, ``ConsumedQuantity``. Versions 1.0 to 1.2 are read alike; other
columns are ignored. ``ServiceCategory`` (and a few ``ServiceName``) map to categories by
``data/focus_categories.csv``; tag keys map to the attribution keys by ``data/focus_tag_keys.csv`` (matched without
regard to case, spaces or separators: ``CostCenter`` is ``cost_center``).

Bad input never passes silently and never stops the read: a missing column is an :class:`ActualsError` naming
it; a row whose cost is not a number, whose dates do not parse, whose tags are not a JSON object or whose currency
has no rate is left out of the totals and listed in ``rejected`` (the row's line in the file, the column, the
reason), with the money those rows carried where their cost could be read. The file is only read.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import focus_files
from ..reference.data import cached, read_table
from .focus_files import ActualsError
from ..reference.i18n import t

COST_COLUMNS = ("EffectiveCost", "BilledCost", "ListCost", "ContractedCost")
REQUIRED = ("ChargePeriodStart", "ChargePeriodEnd", "BillingCurrency", "ServiceCategory", "ChargeCategory")
OPTIONAL = ("Tags", "ServiceName", "ProviderName", "ConsumedQuantity", "ConsumedUnit", "ResourceId")
#: How FOCUS writes a missing value in CSV exports (the sample's ``NULL``) besides an empty cell.
MISSING = ("", "NULL", "null")
CATEGORIES = ("compute", "storage", "network", "logging", "security", "other")
UNATTRIBUTED = "(unattributed)"
#: Largest amount one charge may carry [USD, absolute]: beyond it a value is a corrupted cell, and sums overflow.
MAX_CHARGE_USD = 1e12
#: Records read at a time: memory holds one chunk as text (about 0.5 KB a record) and the accepted rows compactly.
CHUNK_ROWS = 100_000
#: FOCUS 1.0-1.2 ChargeCategory values (specification/columns/chargecategory.md).
CHARGE_CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")
_CANONICAL_CHARGE = {c.casefold(): c for c in CHARGE_CATEGORIES}
REJECTED_COLUMNS = ["row", "column", "reason", "code", "value", "cost_usd"]


@cached
def category_table() -> pd.DataFrame:
    """``data/focus_categories.csv``: ServiceCategory (and optionally ServiceName) -> workbench category."""
    return read_table("focus_categories.csv", required=("service_category", "category", "why"),
                      key=("service_category", "service_name"), choices={"category": CATEGORIES})


@cached
def tag_keys() -> dict[str, tuple[str, ...]]:
    """Attribution key -> the tag names (normalised) that carry it, from ``data/focus_tag_keys.csv``."""
    table = read_table("focus_tag_keys.csv", required=("key", "tag_names", "why"), key="key")
    return {row.key: tuple(_normal(n) for n in row.tag_names.split(";")) for row in table.itertuples()}


def _normal(tag_name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", str(tag_name).lower())


@dataclass
class Actuals:
    """Result of :func:`read_focus`. ``rows``: one per accepted charge (``row`` is its line in the file);
    ``rejected``: one per problem (``row``, ``column``, ``reason``, ``value``, ``cost_usd`` where readable)."""

    path: str
    cost_column: str
    rows: pd.DataFrame
    rejected: pd.DataFrame
    ignored_columns: tuple
    attribution_keys: tuple
    header_fields: int = 0

    def reasons(self, lang: str = "en") -> pd.Series:
        """The rejected rows' reasons in ``lang`` (``en`` or ``zh``)."""
        return self.rejected["code"].map(lambda code: reason_text(code, lang, self.header_fields))

    @property
    def total_usd(self) -> float:
        return float(self.rows["cost_usd"].sum())

    @property
    def rejected_usd(self) -> float:
        """Money on rejected rows whose cost could be read [USD] (a row counted once, whatever its problems)."""
        known = self.rejected.dropna(subset=["cost_usd"]).drop_duplicates("row")
        return float(known["cost_usd"].sum())

    @property
    def unattributed_usd(self) -> float:
        """Spend on rows with no tag that maps to any attribution key [USD]."""
        return float(self.rows.loc[~self.rows["attributed"], "cost_usd"].sum())

    def by_category(self) -> pd.Series:
        return self.rows.groupby("category")["cost_usd"].sum().reindex(CATEGORIES, fill_value=0.0)

    def by_tag(self, key: str) -> pd.Series:
        if key not in self.attribution_keys:
            raise ActualsError(f"{key!r} is not an attribution key; allowed: {', '.join(self.attribution_keys)}")
        return self.rows.groupby(key)["cost_usd"].sum().sort_values(ascending=False)

    def by_charge_category(self) -> pd.Series:
        """Spend by FOCUS ChargeCategory [USD]: usage and purchases apart from credits, adjustments and tax (all
        of them in the total, which is what was paid)."""
        table = self.rows.groupby("charge_category")["cost_usd"].sum()
        order = [*CHARGE_CATEGORIES, *sorted(set(table.index) - set(CHARGE_CATEGORIES))]
        return table.reindex(order, fill_value=0.0)

    def unrecognised(self) -> dict:
        """ServiceCategory and ChargeCategory values FOCUS does not define (matched without regard to case), with
        the spend on them [USD]: counted (as ``other`` for a service), and shown so that a mapping can be added."""
        known = {"service_category": {c.casefold() for c in category_table()["service_category"]},
                 "charge_category": {c.casefold() for c in CHARGE_CATEGORIES}}
        out = {}
        for column, allowed in known.items():
            values = self.rows[column]
            odd = ~values.map(lambda v: str(v).casefold() in allowed)
            if odd.any():
                out[column] = {str(k): float(v) for k, v in
                               self.rows[odd].groupby(column)["cost_usd"].sum().sort_values(ascending=False).items()}
        return out

    def by_month(self) -> pd.DataFrame:
        """Spend per month (of ``ChargePeriodStart``, UTC) and category [USD]."""
        return self.rows.pivot_table(index="month", columns="category", values="cost_usd", aggfunc="sum",
                                     fill_value=0.0)

    def to_dict(self) -> dict:
        """What ``workbench actuals --json`` prints (always valid JSON)."""
        total = self.total_usd
        return {
            "file": self.path, "cost_column": self.cost_column, "rows_read": int(len(self.rows)),
            "total_actual_usd": total,
            "by_category": {k: float(v) for k, v in self.by_category().items()},
            "by_month": {str(m): {k: float(v) for k, v in row.items()} for m, row in self.by_month().iterrows()},
            "by_tag": {key: {str(k): float(v) for k, v in self.by_tag(key).items()} for key in self.attribution_keys},
            "unattributed_usd": self.unattributed_usd,
            "unattributed_share": self.unattributed_usd / total if total else 0.0,
            "rejected_rows": [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                              for r in self.rejected.to_dict("records")],
            "rejected_usd": self.rejected_usd, "ignored_columns": list(self.ignored_columns),
            "by_charge_category": {k: float(v) for k, v in self.by_charge_category().items()},
            "unrecognised_values": self.unrecognised(),
        }


def read_focus(path, cost_column: str = "EffectiveCost", rates: dict | None = None, encoding: str = "utf-8",
               chunk_rows: int = CHUNK_ROWS) -> Actuals:
    """Read a FOCUS export (CSV, plain or gzip, or Parquet) at ``path``; amounts in USD.

    ``rates``: units of a currency per USD (``{"CNY": 7.1}``), for rows billed in other currencies; a row in a
    currency without a rate is rejected. ``encoding``: a CSV's text encoding (FOCUS exports are UTF-8; an older
    tool's ``latin-1`` or ``cp1252`` can be named). The file is read ``chunk_rows`` records at a time, so memory
    holds one chunk's text and the compact accepted rows, not the whole file as text. See the module docstring for
    what is checked.
    """
    path = Path(path)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ActualsError(f"chunk_rows={chunk_rows!r}: allowed: a whole number of records, 1 or more")
    if cost_column not in COST_COLUMNS:
        raise ActualsError(f"cost column {cost_column!r} is not a FOCUS cost column; allowed: {', '.join(COST_COLUMNS)}")
    encoding = focus_files.checked_encoding(encoding)
    rates = _checked_rates(rates)
    header = focus_files.header(path, encoding)
    missing = [c for c in (cost_column, *REQUIRED) if c not in header]
    if missing:
        shown = ", ".join(repr(c) if c != c.strip() else c for c in header[:60])
        raise ActualsError(f"{path}: missing FOCUS column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                           f"(the file has: {shown}{' ...' if len(header) > 60 else ''})")
    twice = sorted({c for c in header if header.count(c) > 1 and c in {cost_column, *REQUIRED, *OPTIONAL}})
    if twice:
        raise ActualsError(f"{path}: column{'s' if len(twice) > 1 else ''} {', '.join(twice)} given twice; allowed: "
                           "each FOCUS column once")
    wanted = [c for c in dict.fromkeys(header) if c in {cost_column, *REQUIRED, *OPTIONAL}]
    keys = tag_keys()
    parts, problems = [], []
    surveyed = None if path.name.lower().endswith(".parquet") else focus_files.survey(path, encoding, len(header))
    if surveyed is not None and surveyed.miscounted:  # records not read for their shape, each with its line
        lines, codes = zip(*surveyed.miscounted)
        problems.append(pd.DataFrame({"row": np.array(lines, dtype=np.int64), "column": "(record)",
                                      "reason": [reason_text(c, "en", len(header)) for c in codes], "code": codes,
                                      "value": "", "cost_usd": np.nan}, columns=REJECTED_COLUMNS))
    for frame in focus_files.chunks(path, header, wanted, encoding, chunk_rows, surveyed):
        rows, rejected = _checked_chunk(frame, len(header), cost_column, rates, keys)
        parts.append(rows)
        problems.append(rejected)
    parts = [p for p in parts if len(p)] or parts[:1]  # an empty chunk (blank lines only) has no column types
    problems = [p for p in problems if len(p)] or problems[:1]
    rows = pd.concat(parts, ignore_index=True) if parts else _checked_chunk(
        pd.DataFrame(columns=[*wanted]), len(header), cost_column, rates, keys)[0]
    rejected = pd.concat(problems, ignore_index=True) if problems else pd.DataFrame(columns=REJECTED_COLUMNS)
    rejected = rejected.sort_values(["row", "column"], kind="stable").reset_index(drop=True)
    used = {cost_column, *REQUIRED, *OPTIONAL}
    return Actuals(str(path), cost_column, rows, rejected, tuple(c for c in header if c not in used), tuple(keys),
                   len(header))


def reason_text(code: str, lang: str = "en", header_fields: int = 0) -> str:
    """A rejection's reason (``code`` of :attr:`Actuals.rejected`) in ``lang``."""
    return t(f"reject_{code}", lang).format(fields=header_fields, limit=f"{MAX_CHARGE_USD:.0e}")


def _checked_chunk(frame: pd.DataFrame, header_fields: int, cost_column: str, rates: dict, keys: dict):
    """(accepted rows, rejections) of one chunk of records, every cell still text."""
    # a record's number in the file (the header is 1; blank lines count): its line unless a quoted field spans lines
    line = frame.index.to_numpy(dtype=np.int64)
    found: list[tuple] = []  # (mask, column, code, values): turned into rejections once costs are known

    def reject(mask, column, code, values):
        if mask.any():
            found.append((mask, column, reason_text(code, "en", header_fields), code, values))

    raw_cost = _strip(frame[cost_column])
    empty_cost = raw_cost.isin(MISSING).to_numpy()  # FOCUS: a cost column is never null
    cost = pd.to_numeric(raw_cost.where(~empty_cost, "nan"), errors="coerce").to_numpy(dtype=float)
    unreadable = ~np.isfinite(cost)
    huge = ~unreadable & (np.abs(cost) > MAX_CHARGE_USD)
    cost = np.where(huge, np.nan, cost)
    reject(empty_cost, cost_column, "cost_empty", raw_cost)
    reject(unreadable & ~empty_cost, cost_column, "cost_not_number", raw_cost)
    reject(huge, cost_column, "cost_huge", raw_cost)
    starts, bad_start = _dates(frame["ChargePeriodStart"])
    ends, bad_end = _dates(frame["ChargePeriodEnd"])
    reject(bad_start, "ChargePeriodStart", "not_date", frame["ChargePeriodStart"])
    reject(bad_end, "ChargePeriodEnd", "not_date", frame["ChargePeriodEnd"])
    backwards = ~bad_start & ~bad_end & (ends < starts)
    reject(backwards, "ChargePeriodEnd", "end_before_start", frame["ChargePeriodEnd"])
    service_category = _strip(frame["ServiceCategory"])
    service_name = _column(frame, "ServiceName")
    # FOCUS's values in another case are FOCUS's values (usage is Usage); others are kept as they are and listed
    charge_category = _strip(frame["ChargeCategory"]).map(lambda v: _CANONICAL_CHARGE.get(v.casefold(), v))
    empty_text = np.zeros(len(frame), dtype=bool)
    for column, text in (("ServiceCategory", service_category), ("ChargeCategory", charge_category)):
        empty = text.isin(MISSING).to_numpy()
        reject(empty, column, "text_empty", frame[column])
        empty_text |= empty
    currency = _strip(frame["BillingCurrency"], upper=True)
    rate = currency.map(rates).to_numpy(dtype=float)
    no_rate = np.isnan(rate)
    reject(no_rate, "BillingCurrency", "no_rate", currency)
    tag_column = frame["Tags"] if "Tags" in frame else pd.Series([""] * len(frame), index=frame.index)
    # exports repeat the same few tag sets: each distinct text is parsed once
    tag_codes, tag_texts = pd.factorize(tag_column, use_na_sentinel=False)
    parsed, problem = _tags(pd.Series(tag_texts, dtype=object))
    reject(problem[tag_codes] == 1, "Tags", "tags_not_object", tag_column)
    reject(problem[tag_codes] == 2, "Tags", "tags_nested", tag_column)
    bad_tags = problem[tag_codes] > 0

    cost_usd = np.where(no_rate, np.nan, cost / np.where(no_rate, 1.0, rate))
    # the limit holds in USD too: a tiny exchange rate must not turn a charge into an overflow
    with np.errstate(over="ignore", invalid="ignore"):
        huge_usd = np.isfinite(cost) & ~no_rate & ~(np.abs(cost_usd) <= MAX_CHARGE_USD)
    reject(huge_usd & ~huge, cost_column, "cost_huge", raw_cost)
    cost_usd = np.where(huge_usd, np.nan, cost_usd)
    bad = (~np.isfinite(cost)) | bad_start | bad_end | backwards | no_rate | bad_tags | empty_text | huge_usd
    readable = np.where(np.isfinite(cost_usd), cost_usd, np.nan)  # an unreadable cost carries no known money
    rejected = pd.DataFrame({
        "row": np.concatenate([line[m] for m, *_ in found]) if found else np.array([], dtype=np.int64),
        "column": [c for m, c, *_ in found for _ in range(int(m.sum()))],
        "reason": [r for m, c, r, *_ in found for _ in range(int(m.sum()))],
        "code": [k for m, c, r, k, _ in found for _ in range(int(m.sum()))],
        "value": [str(v)[:80] for m, c, r, k, values in found for v in np.asarray(values, dtype=object)[m]],
        "cost_usd": np.concatenate([readable[m] for m, *_ in found]) if found else np.array([], dtype=float),
    }, columns=REJECTED_COLUMNS)

    keep = ~bad
    start_kept = starts[keep]
    months = start_kept.astype("datetime64[M]")
    month_codes, month_values = pd.factorize(months)
    month_text = np.array([str(m)[:7] for m in month_values], dtype=object)  # each distinct month's text made once
    # text columns stay object arrays of shared strings: a pointer a cell (pandas would copy each into a string
    # column of its own, 2-3 times the memory for an export's few services, units and tag values)
    rows = pd.DataFrame({
        "row": line[keep], "start": start_kept, "end": ends[keep],
        "month": _text(month_text[month_codes] if len(month_codes) else np.array([], dtype=object)),
        "cost_usd": cost_usd[keep], "currency": _text(currency.to_numpy()[keep]),
        "service_category": _text(service_category.to_numpy()[keep]),
        "service_name": _text(service_name.to_numpy()[keep]),
        "provider": _text(_column(frame, "ProviderName").to_numpy()[keep]),
        "charge_category": _text(charge_category.to_numpy()[keep]),
        "category": _text(_categories(service_category[keep], service_name[keep])),
        "quantity": pd.to_numeric(_column(frame, "ConsumedQuantity"), errors="coerce").to_numpy()[keep],
        "unit": _text(_column(frame, "ConsumedUnit").to_numpy()[keep]),
        "resource": _text(_column(frame, "ResourceId").to_numpy()[keep]),
    })
    kept_codes = tag_codes[keep]
    attributed = np.zeros(len(rows), dtype=bool)
    for key, names in keys.items():
        values = np.array([_tag_value(tags, names) for tags in parsed], dtype=object)  # per distinct tag text
        present = np.array([v is not None for v in values], dtype=bool)
        rows[key] = _text(np.where(present, values, UNATTRIBUTED)[kept_codes] if len(values) else [])
        attributed |= present[kept_codes] if len(values) else attributed
    rows["attributed"] = attributed
    return rows, rejected


def _text(values) -> pd.Series:
    return pd.Series(np.asarray(values, dtype=object), dtype=object)


def _strip(column: pd.Series, upper: bool = False) -> pd.Series:
    """Text without surrounding spaces, as an object series whose equal strings are one object: each distinct
    value is stripped once (an export repeats a few services, units and currencies over millions of rows, and the
    accepted rows then cost a pointer a cell, not a string)."""
    codes, uniques = pd.factorize(column.to_numpy(dtype=object), use_na_sentinel=False)
    done = np.array([(str(u).strip().upper() if upper else str(u).strip()) for u in uniques], dtype=object)
    return pd.Series(done[codes] if len(codes) else np.array([], dtype=object), index=column.index, dtype=object)


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """An optional column stripped, or empty text where the export has none; FOCUS's NULL read as empty."""
    if name not in frame:
        return pd.Series(np.full(len(frame), "", dtype=object), index=frame.index, dtype=object)
    column = _strip(frame[name])
    return column.where(~column.isin(MISSING), "")


def _checked_rates(rates) -> dict:
    """Units of each currency per USD: positive and finite; USD itself is 1 and not given."""
    out = {"USD": 1.0}
    for key, value in (rates or {}).items():
        code = str(key).strip().upper()
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = float("nan")
        if not re.fullmatch(r"[A-Z]{3}", code) or code == "USD" or code in out or not (math.isfinite(number) and number > 0):
            raise ActualsError(f"rate {key}={value!r}: allowed: a three-letter currency other than USD, once, with a "
                               "positive number of its units per USD (CNY=7.1)")
        out[code] = number
    return out


def _dates(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(UTC datetimes, bad) of a FOCUS date-time column (ISO 8601; ``2024-09-18 22:00:00`` or ``...T22:00:00Z``)."""
    text = _strip(column)
    parsed = pd.to_datetime(text, errors="coerce", utc=True, format="ISO8601")
    bad = parsed.isna().to_numpy()
    return parsed.dt.tz_convert(None).to_numpy(), bad


def _tags(column: pd.Series) -> tuple[list[dict], np.ndarray]:
    """(tags per text, problem per text: 0 none, 1 not a JSON object, 2 an object or list as a tag's value).
    FOCUS tags are key-value pairs of plain values; a number or true/false is kept as its JSON text."""
    out, problem = [], np.zeros(len(column), dtype=np.int8)
    for i, text in enumerate(column):
        text = str(text).strip()
        if text in MISSING:
            out.append({})
            continue
        try:
            value = json.loads(text, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, dict):
            problem[i] = 1
            out.append({})
            continue
        if any(isinstance(v, (dict, list)) for v in value.values()):
            problem[i] = 2
            out.append({})
            continue
        out.append({_normal(k): (v if isinstance(v, str) else json.dumps(v)).strip() for k, v in value.items()
                    if v is not None and (not isinstance(v, str) or v.strip())})
    return out, problem


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")  # NaN and Infinity: Python's json reads them, JSON has no such values


def _tag_value(tags: dict, names: tuple) -> str | None:
    for name in names:
        if name in tags:
            return tags[name]
    return None


def _categories(service_category: pd.Series, service_name: pd.Series) -> np.ndarray:
    """The workbench category of each row; FOCUS values matched without regard to case (``compute`` is
    ``Compute``); a value FOCUS does not define is ``other`` (and listed by :meth:`Actuals.unrecognised`)."""
    table = category_table()
    by_name = {(r.service_category.casefold(), r.service_name.casefold()): r.category
               for r in table.itertuples() if r.service_name}
    by_category = {r.service_category.casefold(): r.category for r in table.itertuples() if not r.service_name}
    category_codes, categories = pd.factorize(service_category.to_numpy(dtype=object), use_na_sentinel=False)
    name_codes, names = pd.factorize(service_name.to_numpy(dtype=object), use_na_sentinel=False)
    codes, pairs = pd.factorize(category_codes.astype(np.int64) * max(len(names), 1) + name_codes)
    mapped = np.array([by_name.get((str(categories[p // max(len(names), 1)]).casefold(),
                                    str(names[p % max(len(names), 1)]).casefold()),
                                   by_category.get(str(categories[p // max(len(names), 1)]).casefold(), "other"))
                       for p in pairs], dtype=object)
    return mapped[codes] if len(codes) else np.array([], dtype=object)
