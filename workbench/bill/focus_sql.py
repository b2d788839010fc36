"""The checks of a FOCUS export as SQL over its raw columns, for DuckDB (:mod:`workbench.bill.actuals` runs them).

Each file is one branch: its columns projected to the few the review needs, as text for a CSV (every cell read as
written, nothing converted behind the checks' back) and as typed for Parquet (a typed cost is a number, a typed
date a date). Every row then gets a ``mask`` of what is wrong with it (:data:`CHECKS`, 0: nothing) and its amount in
USD where that can be read. The aggregate of the accepted rows (a few thousand rows however large the bill) and the
list of the rejected ones are two queries over the same branches.
"""
from __future__ import annotations

import re

#: The engine's own null marker, set to a text no bill holds: an empty cell is empty text and FOCUS's ``NULL`` is
#: text too, both mapped to "missing" here. (With ``nullstr='NULL'`` or the default empty string the engine reads a
#: record with one extra trailing ``NULL`` or empty field as if the field were not there, shifting nothing but
#: hiding a malformed record.)
NULL_MARKER = "\x01\x02no null in a bill\x03"
MISSING_SQL = "('', 'NULL', 'null')"
#: A cost as FOCUS writes it: a plain decimal number (``1_000``, ``0x10``, ``nan`` and ``inf`` are not).
NUMBER = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
#: A date and time as FOCUS writes it (ISO 8601, extended form): ``2024-09-18``, ``2024-09-18 22:00:00``,
#: ``2024-09-18T22:00:00.5Z``, ``...+08:00``.
ISO_DATE = (r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,9})?)?)?"
            r" ?(Z|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)?")
#: Dates the review can place (pandas' nanosecond calendar); outside it a date is a corrupted cell.
FIRST_DAY, LAST_DAY = "1678-01-01", "2262-01-01"

#: A bill summary (docs/bill-summary.md: the aggregate a warehouse computes) says how many charges each of its rows
#: sums in this column; a FOCUS export has none, and each of its rows is one charge.
ROW_COUNT = "x_RowCount"
#: (bit, column, reason code) of each check, in the order a row's rejections are listed.
CHECKS = ((1, "cost", "cost_empty"), (2, "cost", "cost_not_number"), (4, "cost", "cost_huge"),
          (8, "ChargePeriodStart", "not_date"), (16, "ChargePeriodEnd", "not_date"),
          (32, "ChargePeriodEnd", "end_before_start"), (64, "ServiceCategory", "text_empty"),
          (128, "ChargeCategory", "text_empty"), (256, "BillingCurrency", "no_rate"), (512, "cost", "cost_huge"),
          (1024, "(record)", "record_long_field"), (2048, ROW_COUNT, "row_count_bad"))
TOO_LONG = 1024
#: The raw value shown with each check's rejection (a column of :func:`listing`).
SHOWN = {"cost": "cost_text", "ChargePeriodStart": "start_text", "ChargePeriodEnd": "end_text",
         "ServiceCategory": "sc_text", "ChargeCategory": "cc_text", "BillingCurrency": "currency", "(record)": "''",
         ROW_COUNT: "count_text"}
#: The projected columns: name -> FOCUS column (None: the cost column the user chose).
PROJECTED = {"cost": None, "start": "ChargePeriodStart", "end": "ChargePeriodEnd", "currency": "BillingCurrency",
             "sc": "ServiceCategory", "cc": "ChargeCategory", "tags": "Tags", "sn": "ServiceName",
             "provider": "ProviderName", "qty": "ConsumedQuantity", "unit": "ConsumedUnit", "res": "ResourceId",
             "count": ROW_COUNT}
CHARGE_CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")


def literal(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def ident(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


FILE_COLUMN = "wb_file_name"  # the column the engine adds with each row's file


def _paths(paths) -> str:
    return "[" + ", ".join(literal(p) for p in paths) + "]"


def csv_scan(paths, columns: int, encoding: str, max_line_bytes: int, serial: bool = False,
             rejects: str | None = "wb_rejects", rejects_limit: int = 0) -> str:
    """CSV files of one header read by the engine with every cell as text, columns named c0, c1, ... by position (a
    header's odd or repeated names need no quoting), a record with more or fewer fields than the header rejected (not
    read shifted), and rejected records kept in the engine's rejects table with their file and line (the first
    ``rejects_limit`` of a file; 0: all; ``rejects`` None: none kept, which is fast and small: keeping them costs
    DuckDB about 1 GB a million, whatever its memory limit). ``serial``: one thread reads each file from its start: DuckDB 2.0's
    parallel reader loses records of a file with many malformed ones (400,000 records, every other one with a field
    too many: 181,818 of the 200,000 good ones read), its serial reader does not."""
    names = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(columns)) + "}"
    engine_encoding = {"utf-8-sig": "utf-8", "utf-16": "utf-16", "iso8859-1": "latin-1"}.get(encoding, "utf-8")
    gz = str(paths[0]).lower().endswith(".gz")
    return (f"read_csv({_paths(paths)}, header=true, auto_detect=false, columns={names}, delim=',', quote='\"', "
            f"escape='\"', strict_mode=true, null_padding=false, ignore_errors=true, "
            f"nullstr={literal(NULL_MARKER)}, allow_quoted_nulls=false, encoding='{engine_encoding}', "
            f"max_line_size={int(max_line_bytes)}, compression='{'gzip' if gz else 'none'}', "
            f"filename={literal(FILE_COLUMN)}, hive_partitioning=false, parallel={str(not serial).lower()}"
            + (f", store_rejects=true, rejects_table='{rejects}_errors', rejects_scan='{rejects}_scans', "
               f"rejects_limit={int(rejects_limit)})" if rejects else ")"))


def parquet_scan(paths) -> str:
    return (f"read_parquet({_paths(paths)}, file_row_number=true, filename={literal(FILE_COLUMN)}, "
            "hive_partitioning=false)")


def file_index(indexes: dict) -> str:
    """The index of each row's file: ``indexes``, file path -> index."""
    if len(indexes) == 1:
        return str(next(iter(indexes.values())))
    return (f"CASE {ident(FILE_COLUMN)} " + " ".join(f"WHEN {literal(p)} THEN {i}" for p, i in indexes.items())
            + " END")


def branch(file_index_sql: str, scan: str, sources: dict, types: dict | None, max_field_chars: int,
           ordinal: str) -> str:
    """One scan's rows (files of one header) projected to :data:`PROJECTED` (raw text, and the parsed cost and dates), ``ordinal`` the
    record's number in its file. ``sources``: projected name -> the file's column (None: absent); ``types``: the
    file's column types (None: all text, a CSV)."""
    out = [f"{file_index_sql} AS file_index", f"{ordinal} AS ordinal"]
    for name in PROJECTED:
        column = sources.get(name)
        kind = (types or {}).get(column, "VARCHAR") if column else None
        if column is None:
            out.append(f"CAST(NULL AS VARCHAR) AS {name}_text")
        elif name == "tags" and kind.startswith(("MAP", "STRUCT")):
            out.append(f"CAST(to_json({ident(column)}) AS VARCHAR) AS tags_text")  # FOCUS in Parquet: tags as a map
        else:
            out.append(f"CAST({ident(column)} AS VARCHAR) AS {name}_text")
        if name == "cost":
            numeric = kind and re.match(r"(DOUBLE|FLOAT|DECIMAL|BIGINT|INTEGER|SMALLINT|TINYINT|HUGEINT|UBIGINT|UINTEGER|"
                                        r"REAL)", kind)
            text = f"trim(CAST({ident(column)} AS VARCHAR))"
            out.append(f"TRY_CAST({ident(column)} AS DOUBLE) AS cost_num" if numeric else
                       f"CASE WHEN regexp_full_match({text}, {literal(NUMBER)}) THEN TRY_CAST({text} AS DOUBLE) "
                       "END AS cost_num")
        if name == "count" and column and kind and re.match(r"(DOUBLE|FLOAT|DECIMAL|REAL)", kind):
            # a count written as a number with a fraction (2.0): whole numbers are counts
            out[-1] = (f"CASE WHEN TRY_CAST({ident(column)} AS DOUBLE) = floor(TRY_CAST({ident(column)} AS DOUBLE)) "
                       f"THEN CAST(TRY_CAST({ident(column)} AS BIGINT) AS VARCHAR) ELSE CAST({ident(column)} AS VARCHAR) "
                       "END AS count_text")
        if name in ("start", "end"):
            out.append(f"{_timestamp(ident(column), kind)} AS {name}_ts")
        if name == "count":  # a summary's column given: each of its values must be a count
            out.append(f"{'true' if column else 'false'} AS count_given")
    # a field past the limit rejects its record (a CSV's or a Parquet file's, a map of tags as its JSON text)
    longest = " OR ".join(f"coalesce(length({name}_text), 0) > {int(max_field_chars)}" for name in PROJECTED)
    return f"SELECT *, ({longest}) AS too_long FROM (SELECT {', '.join(out)} FROM {scan})"


def _timestamp(column: str, kind: str) -> str:
    """A UTC timestamp, or NULL where the value is not a date and time FOCUS allows."""
    if kind.startswith("TIMESTAMP WITH TIME ZONE") or kind == "TIMESTAMPTZ":
        value = f"timezone('UTC', {column})"
    elif kind.startswith("TIMESTAMP") or kind == "DATE":
        value = f"TRY_CAST({column} AS TIMESTAMP)"  # a nanosecond timestamp past 2262 is not read, not an error
    else:
        text = f"trim(CAST({column} AS VARCHAR))"
        value = (f"CASE WHEN regexp_full_match({text}, {literal(ISO_DATE)}) "
                 f"THEN timezone('UTC', TRY_CAST({text} AS TIMESTAMPTZ)) END")
    return (f"CASE WHEN {value} >= TIMESTAMP '{FIRST_DAY}' AND {value} < TIMESTAMP '{LAST_DAY}' "
            f"THEN {value} END")


def checked(rows: str, rates: dict, max_charge_usd: float) -> str:
    """Every row of ``rows`` (the branches) with its ``mask`` (:data:`CHECKS`), its amount in USD where readable
    (``cost_usd``) and its text columns stripped and mapped (FOCUS's values in another case are FOCUS's values)."""
    rate = "CASE currency " + " ".join(f"WHEN {literal(code)} THEN CAST({float(value)!r} AS DOUBLE)"
                                      for code, value in rates.items()) + " END"
    limit = f"CAST({float(max_charge_usd)!r} AS DOUBLE)"
    canonical = "CASE lower(cc) " + " ".join(f"WHEN {literal(c.lower())} THEN {literal(c)}"
                                            for c in CHARGE_CATEGORIES) + " ELSE cc END"
    readable = (f"(NOT too_long AND rate IS NOT NULL AND isfinite(cost_num) AND abs(cost_num) <= {limit} "
                f"AND abs(cost_num / rate) <= {limit})")
    return f"""
    WITH stripped AS (
        SELECT *, upper(trim(coalesce(currency_text, ''))) AS currency, trim(coalesce(sc_text, '')) AS sc,
               trim(coalesce(cc_text, '')) AS cc, coalesce(trim(cost_text), '') IN {MISSING_SQL} AS cost_empty,
               {_plain('sn')} AS service_name, {_plain('provider')} AS provider, {_plain('unit')} AS unit,
               {_plain('res')} AS resource, coalesce(trim(tags_text), '') AS tags,
               CASE WHEN regexp_full_match(trim(qty_text), {literal(NUMBER)}) THEN TRY_CAST(trim(qty_text) AS DOUBLE)
               END AS quantity,
               CASE WHEN NOT count_given THEN 1
                    WHEN regexp_full_match(trim(count_text), '[0-9]{{1,15}}([.]0*)?')
                         AND CAST(CAST(trim(count_text) AS DOUBLE) AS BIGINT) >= 1
                    THEN CAST(CAST(trim(count_text) AS DOUBLE) AS BIGINT) END AS row_count
        FROM ({rows})
    ), rated AS (
        SELECT *, {rate} AS rate, {canonical} AS charge_category FROM stripped
    ), money AS (
        SELECT *, CASE WHEN {readable} THEN cost_num / rate END AS cost_usd FROM rated
    )
    SELECT *,
        (CASE WHEN cost_empty THEN 1 ELSE 0 END)
        | (CASE WHEN NOT cost_empty AND (cost_num IS NULL OR NOT isfinite(cost_num)) THEN 2 ELSE 0 END)
        | (CASE WHEN isfinite(cost_num) AND abs(cost_num) > {limit} THEN 4 ELSE 0 END)
        | (CASE WHEN start_ts IS NULL THEN 8 ELSE 0 END) | (CASE WHEN end_ts IS NULL THEN 16 ELSE 0 END)
        | (CASE WHEN end_ts < start_ts THEN 32 ELSE 0 END)
        | (CASE WHEN sc IN {MISSING_SQL} THEN 64 ELSE 0 END) | (CASE WHEN cc IN {MISSING_SQL} THEN 128 ELSE 0 END)
        | (CASE WHEN rate IS NULL THEN 256 ELSE 0 END)
        | (CASE WHEN rate IS NOT NULL AND isfinite(cost_num) AND abs(cost_num) <= {limit}
                     AND NOT abs(cost_num / rate) <= {limit} THEN 512 ELSE 0 END)
        | (CASE WHEN too_long THEN 1024 ELSE 0 END) | (CASE WHEN row_count IS NULL THEN 2048 ELSE 0 END) AS mask
    FROM money"""


def _plain(name: str) -> str:
    """An optional text column stripped; FOCUS's NULL and an absent column read as empty."""
    return f"CASE WHEN coalesce(trim({name}_text), '') IN {MISSING_SQL} THEN '' ELSE trim({name}_text) END"


def aggregate(checked_rows: str, max_rows: int | None) -> str:
    """The accepted rows summed by file, day, month, service, charge category, unit, tag text and usage kind
    (``metered``: usage with a quantity and a unit; ``idle``: usage billed with none consumed, its resource kept);
    the rejected rows by file, mask and currency, with the money they carried where readable, in USD (``cost_usd``)
    and in their own currency (``amount``). ``rows``: the records summed."""
    source = f"(SELECT * FROM ({checked_rows}) LIMIT {int(max_rows) + 1})" if max_rows else f"({checked_rows})"
    kind = ("CASE WHEN charge_category = 'Usage' AND quantity > 0 AND unit <> '' THEN 'metered' "
            "WHEN charge_category = 'Usage' AND cost_usd > 0 AND quantity = 0 THEN 'idle' ELSE '' END")
    ok = "mask = 0"
    return f"""
    SELECT file_index, mask, CASE WHEN {ok} THEN CAST(start_ts AS DATE) END AS day,
           CASE WHEN {ok} THEN strftime(start_ts, '%Y-%m') END AS month,
           CASE WHEN {ok} THEN sc END AS service_category, CASE WHEN {ok} THEN service_name END AS service_name,
           CASE WHEN {ok} THEN provider END AS provider, CASE WHEN {ok} THEN charge_category END AS charge_category,
           CASE WHEN {ok} THEN unit END AS unit, CASE WHEN {ok} THEN tags END AS tags,
           CASE WHEN {ok} THEN {kind} END AS usage_kind,
           CASE WHEN {ok} AND {kind} = 'idle' THEN resource ELSE '' END AS resource,
           CASE WHEN NOT {ok} THEN currency END AS currency,
           count(*) AS records, sum(coalesce(row_count, 1)) AS rows, fsum(cost_usd) AS cost_usd,
           fsum(CASE WHEN {kind} = 'metered' THEN quantity END) AS quantity, max(end_ts) AS "end",
           fsum(CASE WHEN NOT {ok} AND isfinite(cost_num) AND abs(cost_num) <= 1e12 THEN cost_num END) AS amount
    FROM {source}
    GROUP BY ALL"""


def listing(checked_rows: str, limit: int) -> str:
    """The rejected rows of one file, in its order: their record number, mask, raw values (80 characters), the
    money they carried where readable and their tags' problem (the table ``tag_map``; NULL: not looked up)."""
    shown = ", ".join(f"left(c.{c}, 80) AS {c}" for c in ("cost_text", "start_text", "end_text", "sc_text", "cc_text",
                                                          "currency", "count_text"))
    return (f"SELECT c.ordinal, c.mask, {shown}, c.tags, c.cost_usd, m.problem AS tag_problem "
            f"FROM ({checked_rows}) c LEFT JOIN tag_map m ON c.tags = m.tags "
            f"WHERE c.mask <> 0 OR m.problem > 0 ORDER BY c.ordinal LIMIT {int(limit)}")
