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

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .data import cached, read_table

COST_COLUMNS = ("EffectiveCost", "BilledCost", "ListCost", "ContractedCost")
REQUIRED = ("ChargePeriodStart", "ChargePeriodEnd", "BillingCurrency", "ServiceCategory", "ChargeCategory")
OPTIONAL = ("Tags", "ServiceName", "ProviderName", "ConsumedQuantity", "ConsumedUnit", "ResourceId")
#: How FOCUS writes a missing value in CSV exports (the sample's ``NULL``) besides an empty cell.
MISSING = ("", "NULL", "null")
CATEGORIES = ("compute", "storage", "network", "logging", "security", "other")
UNATTRIBUTED = "(unattributed)"
#: Largest amount one charge may carry [USD, absolute]: beyond it a value is a corrupted cell, and sums overflow.
MAX_CHARGE_USD = 1e12
_EXTRA, _SPARE = "\0extra", 4


class ActualsError(ValueError):
    """An export that cannot be read at all: a missing file or column, an unknown format."""


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
        }


def read_focus(path, cost_column: str = "EffectiveCost", rates: dict | None = None) -> Actuals:
    """Read a FOCUS export (CSV, plain or gzip, or Parquet) at ``path``; amounts in USD.

    ``rates``: units of a currency per USD (``{"CNY": 7.1}``), for rows billed in other currencies; a row in a
    currency without a rate is rejected. See the module docstring for what is checked.
    """
    path = Path(path)
    if cost_column not in COST_COLUMNS:
        raise ActualsError(f"cost column {cost_column!r} is not a FOCUS cost column; allowed: {', '.join(COST_COLUMNS)}")
    rates = _checked_rates(rates)
    header = _header(path)
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
    frame = _read(path, header, wanted)
    # a record's number in the file (the header is 1; blank lines count): its line unless a quoted field spans lines
    line = frame.index.to_numpy() + 2
    problems: list[pd.DataFrame] = []

    def reject(mask, column, reason, values):
        if mask.any():
            problems.append(pd.DataFrame({"row": line[mask], "column": column, "reason": reason,
                                          "value": [str(v)[:80] for v in np.asarray(values)[mask]]}))

    # records with more fields than the header (an unquoted comma shifts every value after it) or fewer
    extra = [c for c in frame.columns if c.startswith(_EXTRA)]
    too_many = frame[extra].fillna("").ne("").any(axis=1).to_numpy() if extra else np.zeros(len(frame), bool)
    reject(too_many, "(record)", f"has more fields than the header's {len(header)} (an unquoted comma?)",
           ["" for _ in range(len(frame))])
    broken = too_many  # a record with fewer fields reads as empty cells, which the checks below name
    frame = frame.drop(columns=extra)

    raw_cost = frame[cost_column].str.strip()
    empty_cost = raw_cost.isin(MISSING).to_numpy() & ~broken  # FOCUS: a cost column is never null
    cost = pd.to_numeric(raw_cost.where(~empty_cost, "nan"), errors="coerce").to_numpy(dtype=float)
    unreadable = ~np.isfinite(cost)
    huge = ~unreadable & (np.abs(cost) > MAX_CHARGE_USD)
    cost = np.where(huge | broken, np.nan, cost)
    bad_cost = unreadable | huge | broken
    reject(empty_cost, cost_column, "is empty (FOCUS requires a cost on every row)", raw_cost)
    reject(unreadable & ~empty_cost & ~broken, cost_column, "is not a number", raw_cost)
    reject(huge & ~broken, cost_column, f"is beyond {MAX_CHARGE_USD:.0e} in amount (no single charge is that large)",
           raw_cost)
    starts, bad_start = _dates(frame["ChargePeriodStart"])
    ends, bad_end = _dates(frame["ChargePeriodEnd"])
    reject(bad_start, "ChargePeriodStart", "is not a date and time", frame["ChargePeriodStart"])
    reject(bad_end, "ChargePeriodEnd", "is not a date and time", frame["ChargePeriodEnd"])
    backwards = ~bad_start & ~bad_end & (ends < starts)
    reject(backwards, "ChargePeriodEnd", "is before ChargePeriodStart", frame["ChargePeriodEnd"])
    for column in ("ServiceCategory", "ChargeCategory"):
        reject(frame[column].str.strip().isin(MISSING).to_numpy(), column, "is empty (FOCUS requires it on every row)",
               frame[column])
    empty_text = frame["ServiceCategory"].str.strip().isin(MISSING).to_numpy() | \
        frame["ChargeCategory"].str.strip().isin(MISSING).to_numpy()
    currency = frame["BillingCurrency"].str.strip().str.upper()
    rate = currency.map(rates).to_numpy(dtype=float)
    no_rate = np.isnan(rate)
    reject(no_rate, "BillingCurrency", "has no exchange rate (the command line takes --rate CUR=units per USD)", currency)
    tag_column = frame["Tags"] if "Tags" in frame else pd.Series([""] * len(frame))
    # exports repeat the same few tag sets: each distinct text is parsed once
    tag_codes, tag_texts = pd.factorize(tag_column, use_na_sentinel=False)
    parsed, bad_text = _tags(pd.Series(tag_texts))
    bad_tags = bad_text[tag_codes]
    reject(bad_tags, "Tags", "is not a JSON object of tags", tag_column)

    bad = bad_cost | bad_start | bad_end | backwards | no_rate | bad_tags | empty_text | broken
    cost_usd = np.where(no_rate, np.nan, cost / np.where(no_rate, 1.0, rate))
    rejected = pd.concat(problems, ignore_index=True) if problems else pd.DataFrame(
        columns=["row", "column", "reason", "value"])
    readable = np.where(np.isfinite(cost_usd), cost_usd, np.nan)  # an unreadable cost carries no known money
    rejected["cost_usd"] = readable[rejected["row"].to_numpy(dtype=int) - 2] if len(rejected) else []
    rejected = rejected.sort_values(["row", "column"], kind="stable").reset_index(drop=True)

    keep = ~bad
    category = _categories(frame["ServiceCategory"], frame.get("ServiceName"))
    rows = pd.DataFrame({
        "row": line[keep], "start": starts[keep], "end": ends[keep],
        "month": pd.DatetimeIndex(starts[keep]).strftime("%Y-%m") if keep.any() else [],
        "cost_usd": cost_usd[keep], "currency": currency.to_numpy()[keep],
        "service_category": frame["ServiceCategory"].to_numpy()[keep],
        "service_name": (frame["ServiceName"] if "ServiceName" in frame else pd.Series([""] * len(frame))).to_numpy()[keep],
        "provider": (frame["ProviderName"] if "ProviderName" in frame else pd.Series([""] * len(frame))).to_numpy()[keep],
        "charge_category": frame["ChargeCategory"].to_numpy()[keep], "category": category[keep],
        "quantity": pd.to_numeric(_column(frame, "ConsumedQuantity").str.strip(), errors="coerce").to_numpy()[keep],
        "unit": _column(frame, "ConsumedUnit").to_numpy()[keep],
        "resource": _column(frame, "ResourceId").to_numpy()[keep],
    })
    keys = tag_keys()
    kept_codes = tag_codes[keep]
    attributed = np.zeros(len(rows), dtype=bool)
    for key, names in keys.items():
        values = np.array([_tag_value(t, names) for t in parsed], dtype=object)  # per distinct tag text
        rows[key] = np.where(values == None, UNATTRIBUTED, values)[kept_codes] if len(values) else []  # noqa: E711
        attributed |= (values != None)[kept_codes] if len(values) else attributed  # noqa: E711
    rows["attributed"] = attributed
    used = {cost_column, *REQUIRED, *OPTIONAL}
    return Actuals(str(path), cost_column, rows.reset_index(drop=True), rejected,
                   tuple(c for c in header if c not in used), tuple(keys))


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """An optional column, or empty text where the export has none; FOCUS's NULL read as empty."""
    column = frame[name] if name in frame else pd.Series([""] * len(frame), index=frame.index)
    return column.where(~column.str.strip().isin(MISSING), "")


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


def _header(path: Path) -> list[str]:
    """The export's column names, read without its rows."""
    if not path.is_file():
        raise ActualsError(f"{path}: no such file")
    if path.name.lower().endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
            return list(pq.read_schema(path).names)
        except ImportError as error:
            raise ActualsError(f"{path}: reading Parquet needs pyarrow ({error})") from None
        except Exception as error:  # noqa: BLE001 - pyarrow's errors for a file that is not Parquet
            raise ActualsError(f"{path}: not a readable Parquet file: {str(error).splitlines()[0][:200]}") from None
    try:
        with _open_text(path) as f:
            row = next(csv.reader(f), None)
    except (UnicodeDecodeError, OSError, EOFError, csv.Error) as error:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): "
                           f"{str(error).splitlines()[0][:200]}") from None
    if not row:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): the file is empty")
    return row


def _open_text(path: Path):
    import gzip
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _read(path: Path, header, columns) -> pd.DataFrame:
    """The ``columns`` needed, every cell as text (nothing converted behind the checks' back). A CSV is read with
    spare columns after the header's, so that a record with too many fields is seen rather than read shifted
    (pandas' column selection would silently drop the extra fields)."""
    name = path.name.lower()
    try:
        if name.endswith(".parquet"):
            frame = pd.read_parquet(path, columns=columns)
            if "Tags" in frame:  # FOCUS in Parquet may hold tags as a map (key-value pairs), not JSON text
                frame["Tags"] = frame["Tags"].map(_tags_text)
            return frame.astype(str).where(frame.notna(), "")
        names = [*(f"{c}\0{i}" if header.count(c) > 1 else c for i, c in enumerate(header)),
                 *(f"{_EXTRA}{i}" for i in range(_SPARE))]
        frame = pd.read_csv(path, header=None, skiprows=1, names=names, dtype=object, keep_default_na=False, na_values=[],
                            skip_blank_lines=False, compression="infer", encoding="utf-8-sig", engine="c")
        frame = frame[[*columns, *names[len(header):]]]
        blank = frame.eq("").all(axis=1)  # a blank line: not a record (a record has its FOCUS columns)
        return frame[~blank]
    except ImportError as error:
        raise ActualsError(f"{path}: reading Parquet needs pyarrow ({error})") from None
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError, OSError, ValueError) as error:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): "
                           f"{str(error).splitlines()[0][:200]}") from None


def _tags_text(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(dict(value), default=str)
    except (TypeError, ValueError):
        return str(value)


def _dates(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(UTC datetimes, bad) of a FOCUS date-time column (ISO 8601; ``2024-09-18 22:00:00`` or ``...T22:00:00Z``)."""
    text = column.str.strip()
    parsed = pd.to_datetime(text, errors="coerce", utc=True, format="ISO8601")
    bad = parsed.isna().to_numpy()
    return parsed.dt.tz_convert(None).to_numpy(), bad


def _tags(column: pd.Series) -> tuple[list[dict], np.ndarray]:
    out, bad = [], np.zeros(len(column), dtype=bool)
    for i, text in enumerate(column):
        text = str(text).strip()
        if text in MISSING:
            out.append({})
            continue
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, dict):
            bad[i] = True
            out.append({})
            continue
        out.append({_normal(k): str(v).strip() for k, v in value.items() if v is not None and str(v).strip()})
    return out, bad


def _tag_value(tags: dict, names: tuple) -> str | None:
    for name in names:
        if name in tags:
            return tags[name]
    return None


def _categories(service_category: pd.Series, service_name) -> np.ndarray:
    table = category_table()
    by_name = {(r.service_category, r.service_name): r.category for r in table.itertuples() if r.service_name}
    by_category = {r.service_category: r.category for r in table.itertuples() if not r.service_name}
    names = service_name if service_name is not None else pd.Series([""] * len(service_category))
    codes, pairs = pd.factorize(pd.MultiIndex.from_arrays([service_category.to_numpy(), names.to_numpy()]))
    mapped = np.array([by_name.get((c, n), by_category.get(c, "other")) for c, n in pairs], dtype=object)
    return mapped[codes] if len(codes) else np.array([], dtype=object)
