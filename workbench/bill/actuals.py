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

An export is a file (CSV, CSV.gz or Parquet), a folder of them (monthly files, Hive-partitioned folders included)
or a glob. DuckDB reads it out of core (:mod:`workbench.bill.focus_reader`), with the checks as SQL
(:mod:`workbench.bill.focus_sql`): memory stays bounded whatever the bill's size, and what the review receives is
an aggregate (day x category x charge category x service x unit x tag values), a few thousand rows.

Bad input never passes silently and never stops the read: a missing column is an :class:`ActualsError` naming
it; a row whose cost is not a number, whose dates do not parse, whose tags are not a JSON object or whose currency
has no rate is left out of the totals and listed in ``rejected`` (its file, its line, the column, the reason), with
the money those rows carried where their cost could be read. The files are only read.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import focus_files, focus_reader, focus_sql
from ..reference.data import cached, read_table
from .focus_files import ActualsError
from .focus_reader import APP_LIMITS, DEFAULT_LIMITS, Limits  # noqa: F401 - the limits a caller passes
from ..reference.i18n import t

COST_COLUMNS = ("EffectiveCost", "BilledCost", "ListCost", "ContractedCost")
REQUIRED = ("ChargePeriodStart", "ChargePeriodEnd", "BillingCurrency", "ServiceCategory", "ChargeCategory")
OPTIONAL = ("Tags", "ServiceName", "ProviderName", "ConsumedQuantity", "ConsumedUnit", "ResourceId",
            focus_sql.ROW_COUNT)
#: How FOCUS writes a missing value in CSV exports (the sample's ``NULL``) besides an empty cell.
MISSING = ("", "NULL", "null")
CATEGORIES = ("compute", "storage", "network", "logging", "security", "other")
UNATTRIBUTED = "(unattributed)"
#: Largest amount one charge may carry [USD, absolute]: beyond it a value is a corrupted cell, and sums overflow.
MAX_CHARGE_USD = 1e12
#: Records of a CSV that may be malformed for the file to be read and each listed: past it a file is refused (keeping
#: them costs the engine about 1 GB a million, whatever its memory limit).
MAX_MALFORMED = 50_000
#: FOCUS 1.0-1.2 ChargeCategory values (specification/columns/chargecategory.md).
CHARGE_CATEGORIES = focus_sql.CHARGE_CATEGORIES
REJECTED_COLUMNS = ["row", "column", "reason", "code", "value", "cost_usd", "file"]
#: The accepted rows' aggregate: its keys (with the attribution keys and ``attributed``) and its sums.
ROW_KEYS = ["month", "day", "category", "service_category", "service_name", "provider", "charge_category", "unit",
            "usage_kind", "resource"]


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
    """Result of :func:`read_focus`.

    ``rows``: the accepted charges summed by ``month`` (YYYY-MM of ChargePeriodStart, UTC), ``day``, ``category``,
    ``service_category``, ``service_name``, ``provider``, ``charge_category``, ``unit``, ``usage_kind``
    (``metered``: usage with a quantity and a unit; ``idle``: usage billed with none consumed), ``resource`` (of idle
    usage only), each attribution key's value and ``attributed``; with ``rows`` (charges), ``cost_usd``,
    ``quantity`` (of metered usage) and ``end`` (the latest ChargePeriodEnd). ``rejected``: one line per problem
    (``row``: its line in ``file``, ``column``, ``reason``, ``code``, ``value``, ``cost_usd`` where readable), the
    first :attr:`Limits.max_listed`; ``rejected_count`` and ``rejected_usd`` count them all."""

    path: str
    cost_column: str
    rows: pd.DataFrame
    rejected: pd.DataFrame
    ignored_columns: tuple
    attribution_keys: tuple
    header_fields: int = 0
    rejected_count: int = 0
    rejected_money_usd: float = 0.0
    files: tuple = field(default_factory=tuple)
    listed_limit: int = DEFAULT_LIMITS.max_listed
    rejected_no_rate: dict = field(default_factory=dict)  # currency -> amount on rejected rows with no exchange rate
    rejected_unreadable: int = 0  # rejected rows whose cost could not be read (empty, not a number, too large)

    def reasons(self, lang: str = "en") -> pd.Series:
        """The rejected rows' reasons in ``lang`` (``en`` or ``zh``)."""
        return self.rejected["code"].map(lambda code: reason_text(code, lang, self.header_fields))

    @property
    def rows_read(self) -> int:
        """Charges accepted."""
        return int(self.rows["rows"].sum())

    @property
    def total_usd(self) -> float:
        return math.fsum(self.rows["cost_usd"])  # exactly rounded: the sums' order does not show in the total

    @property
    def rejected_usd(self) -> float:
        """Money on rejected rows whose cost could be read [USD] (a row counted once, whatever its problems)."""
        return float(self.rejected_money_usd)

    @property
    def unattributed_usd(self) -> float:
        """Spend on rows with no tag that maps to any attribution key [USD]."""
        return math.fsum(self.rows.loc[~self.rows["attributed"], "cost_usd"])

    def by_category(self) -> pd.Series:
        return self.rows.groupby("category")["cost_usd"].agg(math.fsum).reindex(CATEGORIES, fill_value=0.0)

    def by_tag(self, key: str) -> pd.Series:
        if key not in self.attribution_keys:
            raise ActualsError(f"{key!r} is not an attribution key; allowed: {', '.join(self.attribution_keys)}")
        # largest first; ties in reverse name order whatever the pandas (its default sort is not stable)
        spend = self.rows.groupby(key)["cost_usd"].agg(math.fsum)
        return spend.sort_index(ascending=False).sort_values(ascending=False, kind="stable")

    def by_charge_category(self) -> pd.Series:
        """Spend by FOCUS ChargeCategory [USD]: usage and purchases apart from credits, adjustments and tax (all
        of them in the total, which is what was paid)."""
        table = self.rows.groupby("charge_category")["cost_usd"].agg(math.fsum)
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
                out[column] = {str(k): float(v) for k, v in self.rows[odd].groupby(column)["cost_usd"].agg(
                    math.fsum).sort_values(ascending=False).items()}
        return out

    def by_month(self) -> pd.DataFrame:
        """Spend per month (of ``ChargePeriodStart``, UTC) and category [USD]."""
        return self.rows.pivot_table(index="month", columns="category", values="cost_usd", aggfunc=math.fsum,
                                     fill_value=0.0)

    def to_dict(self) -> dict:
        """What ``workbench actuals --json`` prints (always valid JSON)."""
        total = self.total_usd
        out = {
            "file": self.path, "cost_column": self.cost_column, "rows_read": self.rows_read,
            "total_actual_usd": total,
            "by_category": {k: float(v) for k, v in self.by_category().items()},
            "by_month": {str(m): {k: float(v) for k, v in row.items()} for m, row in self.by_month().iterrows()},
            "by_tag": {key: {str(k): float(v) for k, v in self.by_tag(key).items()} for key in self.attribution_keys},
            "unattributed_usd": self.unattributed_usd,
            "unattributed_share": self.unattributed_usd / total if total else 0.0,
            "rejected_rows": [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()
                               if k != "file" or len(self.files) > 1} for r in self.rejected.to_dict("records")],
            "rejected_usd": self.rejected_usd, "ignored_columns": list(self.ignored_columns),
            "by_charge_category": {k: float(v) for k, v in self.by_charge_category().items()},
            "unrecognised_values": self.unrecognised(),
        }
        if self.rejected_count:  # what the rejected rows carried beyond rejected_usd
            out["rejected_no_rate"] = dict(self.rejected_no_rate)
            out["rejected_unreadable_rows"] = self.rejected_unreadable
        if len(self.files) > 1:
            out["files"] = list(self.files)
        if len(self.rejected) >= self.listed_limit:
            out["rejected_count"] = self.rejected_count  # more problems than listed: all of them counted
        return out


def read_focus(path, cost_column: str = "EffectiveCost", rates: dict | None = None, encoding: str = "utf-8",
               limits: Limits = DEFAULT_LIMITS) -> Actuals:
    """Read a FOCUS export at ``path`` (a CSV, plain or gzip, or Parquet file; a folder of them; a glob); amounts
    in USD.

    ``rates``: units of a currency per USD (``{"CNY": 7.1}``), for rows billed in other currencies; a row in a
    currency without a rate is rejected. ``encoding``: a CSV's text encoding (FOCUS exports are UTF-8; an older
    tool's ``latin-1`` or ``cp1252`` can be named). ``limits``: what the read may take (:class:`Limits`: the
    engine's memory, what a compressed file may expand to, records in all). See the module docstring for what is
    checked.
    """
    if not isinstance(limits, Limits):
        raise ActualsError(f"limits={limits!r}: allowed: a workbench.bill.actuals.Limits (memory, sizes, rows)")
    if cost_column not in COST_COLUMNS:
        raise ActualsError(f"cost column {cost_column!r} is not a FOCUS cost column; allowed: {', '.join(COST_COLUMNS)}")
    encoding = focus_files.checked_encoding(encoding)
    rates = _checked_rates(rates)
    files = focus_files.sources(path)
    needed = {name: (cost_column if column is None else column) for name, column in focus_sql.PROJECTED.items()}
    keys = tag_keys()
    sources = []
    try:
        return _read(path, files, cost_column, rates, encoding, limits, needed, keys, sources)
    except ActualsError as error:  # the user's names, not the links the engine and the checks read
        text = str(error)
        for source in sources:
            text = text.replace(str(source.read_path), str(source.path))
        if text == str(error):
            raise
        raise ActualsError(text) from None


def _read(path, files, cost_column, rates, encoding, limits, needed, keys, sources) -> Actuals:
    with focus_reader.session(limits) as (con, spill):
        sources += [focus_reader.open_source(con, i, f, needed, encoding, limits, spill) for i, f in enumerate(files)]
        for source in sources:
            _check_header(source, cost_column)
        # first without keeping malformed records (fast, small); a CSV whose records do not all sit one a line in
        # what was read holds malformed records, blank lines or records over lines: read again, keeping them
        focus_reader.aggregate(con, sources, rates, MAX_CHARGE_USD, limits, rejects=None)
        structural, unread, full = pd.DataFrame(columns=["file_index", "record", "code"]), 0, set()  # none kept yet
        _check_rows(path, focus_reader.records(con) + unread, limits)
        troubled = focus_reader.not_one_a_line(con, sources, MAX_MALFORMED)
        if troubled:  # malformed records: read again by the serial reader, which loses none of the others
            focus_reader.aggregate(con, sources, rates, MAX_CHARGE_USD, limits, serial=True, rejects="wb_serial")
            structural, unread, full = focus_reader.structural(con, sources, limits.max_listed, "wb_serial")
        read_by_file = focus_reader.records_by_file(con)
        for source in (s for s in sources if s.index in full):  # more malformed records than kept: counted
            unread += focus_reader.unread_count(source, read_by_file.get(source.index, 0)) - int(
                (structural["file_index"] == source.index).sum())
        for source in sources:  # nothing lost around malformed records
            mine = int((structural["file_index"] == source.index).sum())
            if not source.parquet and (mine or source.index in full | troubled):
                focus_reader.check_conserved(source, read_by_file.get(source.index, 0),
                                             mine if source.index not in full else
                                             focus_reader.unread_count(source, read_by_file.get(source.index, 0)))
        _check_rows(path, focus_reader.records(con) + unread, limits)
        focus_reader.map_tags(con, lambda texts: _tag_frame(texts, keys), ["tags", "problem", *keys, "attributed"])
        rows = _rows(focus_reader.accepted(con, list(keys)), keys)
        bad = focus_reader.rejected_groups(con)
        rejected_money = math.fsum(bad["cost_usd"].dropna())
        no_rate, unreadable = _unpriced(bad)
        unpriced = (no_rate, unreadable + unread)  # a record not read carries no readable cost either
        rejected_count = int(bad["rows"].sum()) + unread  # a summary row: the charges it sums
        rejected = _rejected(con, sources, bad, structural, limits, rates, cost_column)
    used = {c.casefold() for c in (cost_column, *REQUIRED, *OPTIONAL)}
    ignored = tuple(dict.fromkeys(c for s in sources for c in (s.names or s.header) if str(c).casefold() not in used))
    shown = str(path) if len(files) > 1 or str(files[0]) != str(path) else str(files[0])
    return Actuals(shown, cost_column, rows, rejected, ignored, tuple(keys), max(s.fields for s in sources),
                   rejected_count, rejected_money, tuple(str(f) for f in files), limits.max_listed, *unpriced)


def _check_rows(path, records: int, limits: Limits) -> None:
    if limits.max_rows and records > limits.max_rows:
        raise ActualsError(f"{path}: more than {limits.max_rows:,} records; allowed: at most {limits.max_rows:,} "
                           "here (workbench actuals reads larger exports)")


def _tag_frame(texts: list, keys: dict) -> pd.DataFrame:
    """Each tag text's problem (0 none, 1 not a JSON object, 2 a nested value), its attribution keys' values
    (:data:`UNATTRIBUTED` where none) and whether any key was found."""
    parsed, problem = _tags(pd.Series(texts, dtype=object))
    frame = {"tags": pd.Series(texts, dtype=object), "problem": pd.Series(problem, dtype=np.int8)}
    attributed = np.zeros(len(texts), dtype=bool)
    for key, names in keys.items():
        values = [_tag_value(tags, names) for tags in parsed]
        present = np.array([v is not None for v in values], dtype=bool)
        frame[key] = pd.Series([v if v is not None else UNATTRIBUTED for v in values], dtype=object)
        attributed |= present
    frame["attributed"] = attributed
    return pd.DataFrame(frame)


def _unpriced(bad: pd.DataFrame) -> tuple[dict, int]:
    """(amount by currency on rejected rows that have no exchange rate, rejected rows whose cost cannot be read)."""
    no_rate = bad[(bad["mask"].to_numpy() & 256) > 0].dropna(subset=["amount"])
    amounts = {str(c): float(v) for c, v in no_rate.groupby("currency")["amount"].sum().items()}
    unreadable = int(bad.loc[(bad["mask"].to_numpy() & (1 | 2 | 4 | 512 | 1024)) > 0, "rows"].sum())  # cost
    return amounts, unreadable


def _check_header(source, cost_column: str) -> None:
    header, path = source.header, source.path
    missing = [c for c in (cost_column, *REQUIRED) if focus_reader.find(header, c) is None]
    if missing:
        shown = ", ".join(repr(c) if c != c.strip() else c for c in header[:60])
        raise ActualsError(f"{path}: missing FOCUS column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                           f"(the file has: {shown}{' ...' if len(header) > 60 else ''})")
    names = source.names or header  # a Parquet file's own names: the engine renames a second column of a name
    used = {c.casefold() for c in (cost_column, *REQUIRED, *OPTIONAL)}
    folded = [str(c).casefold() for c in names]
    twice = sorted({c for c in names if folded.count(str(c).casefold()) > 1 and str(c).casefold() in used})
    if twice:
        raise ActualsError(f"{path}: column{'s' if len(twice) > 1 else ''} {', '.join(twice)} given twice; allowed: "
                           "each FOCUS column once (names are matched in any case)")


def _rows(frame: pd.DataFrame, keys: dict) -> pd.DataFrame:
    """The accepted sums with their category, in a fixed order."""
    frame = frame.copy()
    frame["category"] = _categories(frame["service_category"], frame["service_name"])
    by = [*ROW_KEYS, *keys, "attributed"]
    frame = frame[[*by, "rows", "cost_usd", "quantity", "end"]].sort_values(by, kind="stable").reset_index(drop=True)
    frame["day"] = pd.to_datetime(frame["day"])
    frame["rows"] = frame["rows"].astype(np.int64)
    frame["attributed"] = frame["attributed"].astype(bool)
    for column in ("month", "category", "service_category", "service_name", "provider", "charge_category", "unit",
                   "usage_kind", "resource", *keys):
        frame[column] = frame[column].astype(object)
    return frame


def _rejected(con, sources, bad, structural, limits, rates, cost_column) -> pd.DataFrame:
    """One line per problem of each rejected row, with its file and line, the first ``limits.max_listed``."""
    out = []
    files = set(bad["file_index"].dropna().astype(int)) | set(structural["file_index"].astype(int))
    read_by_file = focus_reader.records_by_file(con)
    for source in (s for s in sources if s.index in files):
        if len(out) >= limits.max_listed:
            break
        mine = structural[structural["file_index"] == source.index]
        listed = focus_reader.listing(con, source, limits, rates, MAX_CHARGE_USD)
        line, unread_lines = focus_reader.lines(source, listed["ordinal"].to_numpy(), mine,
                                                read_by_file.get(source.index, 0))
        for (record_line, code) in zip(unread_lines, mine["code"]):
            out.append((int(record_line), "(record)", reason_text(code, "en", source.fields), code, "", np.nan,
                        str(source.path)))
        for row_line, record in zip(line, listed.itertuples(index=False)):
            readable = record.cost_usd if record.cost_usd is not None and np.isfinite(record.cost_usd) else np.nan
            problems = [(bit, column, code) for bit, column, code in focus_sql.CHECKS if record.mask & bit]
            if record.mask & focus_sql.TOO_LONG:  # a record not read for its shape: that alone is listed
                out.append((int(row_line), "(record)", reason_text("record_long_field", "en", source.fields),
                            "record_long_field", "", np.nan, str(source.path)))
                continue
            tag_problem = (_tags(pd.Series([record.tags], dtype=object))[1][0] if pd.isna(record.tag_problem)
                           else int(record.tag_problem))
            tagged = [(0, "Tags", "tags_not_object" if tag_problem == 1 else "tags_nested")] if tag_problem else []
            # the order the checks were listed in: cost, dates, texts, currency, tags, the converted amount
            ordered = [p for p in problems if p[0] <= 256] + tagged + [p for p in problems if p[0] > 256]
            for bit, column, code in ordered:
                value = record.tags if column == "Tags" else ("" if column == "(record)" else
                                                             getattr(record, focus_sql.SHOWN[column]))
                out.append((int(row_line), cost_column if column == "cost" else column,
                            reason_text(code, "en", source.fields), code, "" if value is None else str(value)[:80],
                            readable, str(source.path)))
    frame = pd.DataFrame(out, columns=["row", "column", "reason", "code", "value", "cost_usd", "file"])
    order = {str(s.path): s.index for s in sources}
    frame = frame.assign(_file=frame["file"].map(order)).sort_values(["_file", "row", "column"], kind="stable")
    frame = frame.drop(columns="_file").head(limits.max_listed).reset_index(drop=True)
    frame["row"] = frame["row"].astype(np.int64)
    frame["cost_usd"] = frame["cost_usd"].astype(float)
    return frame


def reason_text(code: str, lang: str = "en", header_fields: int = 0) -> str:
    """A rejection's reason (``code`` of :attr:`Actuals.rejected`) in ``lang``."""
    return t(f"reject_{code}", lang).format(fields=header_fields, limit=f"{MAX_CHARGE_USD:.0e}")


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
