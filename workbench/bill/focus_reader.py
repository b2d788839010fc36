"""Running the checks of :mod:`workbench.bill.focus_sql` over a bill's files with DuckDB, out of core: the engine is
given a memory limit and a spill folder, so memory stays bounded whatever the bill's size, and what leaves it is an
aggregate of a few thousand rows and the list of rejected rows with their lines.

DuckDB is imported here only, when a bill is read (an app kernel that never reads one does not load it).
"""
from __future__ import annotations

import contextlib
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import focus_files, focus_sql
from .focus_files import ActualsError

#: Encodings the engine reads itself; a CSV in another one is first copied as UTF-8.
ENGINE_ENCODINGS = ("utf-8-sig", "utf-16", "iso8859-1")
#: What the engine reports of a record it did not read, and the reason code it is listed with.
STRUCTURAL = {"TOO MANY COLUMNS": "record_extra", "MISSING COLUMNS": "record_short", "UNQUOTED VALUE": "record_quote",
              "LINE SIZE OVER MAXIMUM": "record_long_line"}


@dataclass(frozen=True)
class Limits:
    """What one read may take. ``memory_mb``: the engine's working memory (beyond it, it spills to a temporary
    folder); ``max_expanded_bytes``: what a file may hold once decompressed (a plain CSV: its size);
    ``max_expansion_ratio``: how many times its own size a gzip file may expand to (real exports: 5-30; a
    decompression bomb: about 1,000); ``max_rows``: records in all (None: no limit); ``max_line_bytes``: the longest
    record; ``max_listed``: rejections listed one by one (all are counted and their money summed)."""

    memory_mb: int = 512
    max_expanded_bytes: float = math.inf
    max_expansion_ratio: float = 200.0
    max_rows: int | None = None
    max_line_bytes: int = 1 << 20
    max_listed: int = 100_000
    threads: int | None = None

    def __post_init__(self):
        def whole(name, low, none=False):
            value = getattr(self, name)
            if none and value is None:
                return
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ActualsError(f"Limits({name}={value!r}): allowed: a whole number, {low} or more"
                                   + (", or None" if none else ""))
        whole("memory_mb", 16)
        if self.memory_mb > 1 << 20 or (self.threads or 1) > 256:
            raise ActualsError(f"Limits(memory_mb={self.memory_mb!r}, threads={self.threads!r}): allowed: at most "
                               "1,048,576 MB and 256 threads")
        whole("max_line_bytes", 1024)
        whole("max_listed", 1)
        whole("max_rows", 1, none=True)
        whole("threads", 1, none=True)
        for name in ("max_expanded_bytes", "max_expansion_ratio"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1:
                raise ActualsError(f"Limits({name}={value!r}): allowed: a number, 1 or more (inf: no limit)")


#: The command line's limits: any size, memory bounded.
DEFAULT_LIMITS = Limits()
#: A page of the app: an upload read in a kernel that must stay small and answer within a minute or two.
APP_LIMITS = Limits(memory_mb=256, max_expanded_bytes=2e9, max_rows=10_000_000)


@dataclass
class Source:
    """One export file as the engine reads it."""

    index: int
    path: Path                  # as named (in messages)
    read_path: Path             # what the engine reads (a UTF-8 copy of a CSV in another encoding)
    parquet: bool
    header: list
    columns: dict               # projected name (focus_sql.PROJECTED) -> the engine's column, or None
    types: dict | None = None   # Parquet: column -> type
    encoding: str = "utf-8-sig"
    fields: int = field(default=0)
    names: list | None = None   # Parquet: the columns as the file writes them


@contextlib.contextmanager
def session(limits: Limits):
    """A DuckDB connection with the memory limit and a spill folder of its own, removed afterwards."""
    import duckdb
    with tempfile.TemporaryDirectory(prefix="workbench-bill-") as spill:
        config = {"memory_limit": f"{int(limits.memory_mb)}MB", "temp_directory": str(Path(spill) / "spill"),
                  "preserve_insertion_order": True}
        if limits.threads:
            config["threads"] = int(limits.threads)
        # a database file, not memory: the sums' table and the tag map spill like everything else
        con = duckdb.connect(str(Path(spill) / "bill.duckdb"), config=config)
        try:
            con.execute("SET TimeZone = 'UTC'")
            con.execute("SET enable_progress_bar = false")  # a long read draws no bar in the CLI's output
            yield con, Path(spill)
        finally:
            con.close()


def engine_error(path, error, limits: Limits | None = None, sources: list | None = None) -> ActualsError:
    """The engine's error in the user's words: its memory limit reached, a line ending it cannot follow, or a file
    it cannot read (named)."""
    text = str(error).strip().splitlines()[0][:240] if str(error).strip() else type(error).__name__
    for source in sources or ():  # the user's names, not the links the engine read
        text = text.replace(str(source.read_path), str(source.path))
    if "Out of Memory" in text and limits is not None:
        return ActualsError(f"{path}: the read needs more than the {limits.memory_mb:,} MB of memory it may use "
                            f"({text}); allowed: a larger limit (Limits(memory_mb=...)), or fewer, smaller files")
    if "state machine reached an invalid state" in text:
        for source in sources or ():
            found = focus_files.lone_carriage_return(source.read_path)
            if found:
                return ActualsError(f"{source.path}: line {found}: a carriage return (\\r) alone, inside a field or "
                                    "as a line's end, in a file whose lines end otherwise; allowed: lines ending in "
                                    "\\n or \\r\\n throughout (save the export as CSV again)")
    return ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): {text}")


def open_source(con, index: int, path: Path, needed: dict, encoding: str, limits: Limits, spill: Path) -> Source:
    """``path`` checked against the limits and its header read; ``needed``: projected name -> FOCUS column
    (:data:`focus_sql.PROJECTED` with the cost column chosen). The engine reads the file through a link of a plain
    name in the spill folder: it would read ``[``, ``*`` and ``?`` in a name as a pattern, and a folder named
    ``EffectiveCost=999`` as a column."""
    link = _link(path, index, spill)
    if focus_files.is_parquet(path):
        try:
            described = con.execute(f"DESCRIBE SELECT * FROM read_parquet({focus_sql.literal(link)}, "
                                    "hive_partitioning=false)").fetchall()
            top = _parquet_columns(con, link)
        except Exception as error:  # noqa: BLE001 - the engine's errors for a file that is not Parquet
            text = str(error).splitlines()[0][:200].replace(str(link), str(path))
            raise ActualsError(f"{path}: not a readable Parquet file: {text}") from None
        header = [row[0] for row in described]
        types = {row[0]: str(row[1]).upper() for row in described}
        source = Source(index, path, link, True, header, _columns(header, needed, path), types, encoding, len(header))
        source.names = top  # the file's own names (the engine renames a second column of the same name)
        return source
    size = path.stat().st_size
    if path.name.lower().endswith(".gz"):
        limit = min(limits.max_expanded_bytes, limits.max_expansion_ratio * max(size, 1))
        expanded = focus_files.expanded_size(path, limit)
        if expanded > limit:
            raise ActualsError(f"{path}: {size / 1e6:,.1f} MB of gzip expands past {_bytes(limit)} "
                               f"({'the limit of ' + _bytes(limits.max_expanded_bytes) if limit == limits.max_expanded_bytes else f'{limits.max_expansion_ratio:g} times its size'}); "
                               "allowed: an export that expands to less (a real one expands 5-30 times), or split "
                               "it into monthly files")
    elif size > limits.max_expanded_bytes:
        raise ActualsError(f"{path}: {_bytes(size)}; allowed: at most {_bytes(limits.max_expanded_bytes)} here "
                           "(workbench actuals reads larger exports)")
    read_path = link
    if encoding not in ENGINE_ENCODINGS:
        read_path = focus_files.transcoded(path, encoding, spill / f"f{index:05d}.utf8.csv",
                                           min(limits.max_expanded_bytes, 4 * 10**12))
    header = focus_files.header(path, encoding)
    return Source(index, path, read_path, False, header, _columns(header, needed, path), None,
                  encoding if read_path == link else "utf-8-sig", len(header))


def _link(path: Path, index: int, spill: Path) -> Path:
    name = path.name.lower()
    suffix = ".parquet" if name.endswith(".parquet") else ".csv.gz" if name.endswith(".gz") else ".csv"
    link = spill / f"f{index:05d}{suffix}"
    try:
        link.symlink_to(path.resolve())
    except OSError:  # a file system without links: the file itself (a name without pattern characters is read)
        return path
    return link


def _parquet_columns(con, path) -> list:
    """A Parquet file's top-level column names as written (its schema, walked depth first)."""
    rows = con.execute(f"SELECT name, num_children FROM parquet_schema({focus_sql.literal(path)})").fetchall()
    names, k = [], 1

    def skip(i):
        children = rows[i][1] or 0
        i += 1
        for _ in range(children):
            i = skip(i)
        return i

    while k < len(rows):
        names.append(rows[k][0])
        k = skip(k)
    return names


def _bytes(n: float) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e9 else f"{n / 1e6:,.0f} MB"


def find(header: list, column: str) -> int | None:
    """Where ``column`` is in ``header``: by its name, else by its name in any case (a warehouse such as Athena
    writes ``chargeperiodstart``); None when absent or when two columns differ only by case."""
    if column in header:
        return header.index(column)
    folded = [k for k, name in enumerate(header) if str(name).casefold() == column.casefold()]
    return folded[0] if len(folded) == 1 else None


def _columns(header: list, needed: dict, path: Path) -> dict:
    """Projected name -> the engine's name of the column (CSV: c0, c1, ... by position; Parquet: its name)."""
    out = {}
    for name, column in needed.items():
        k = find(header, column)
        out[name] = None if k is None else header[k] if focus_files.is_parquet(path) else f"c{k}"
    return out


def scan_sql(sources: list, limits: Limits, ordinal: bool, serial: bool = False,
             rejects: str | None = "wb_rejects") -> str:
    """One scan of files that share their kind and header (``ordinal``: number the records; one file only;
    ``serial``: read by one thread from the start, see :func:`focus_sql.csv_scan`)."""
    first = sources[0]
    paths = [str(s.read_path) for s in sources]
    index = focus_sql.file_index({str(s.read_path): s.index for s in sources})
    if first.parquet:
        return focus_sql.branch(index, focus_sql.parquet_scan(paths), first.columns, first.types,
                                focus_files.MAX_FIELD_CHARS, "file_row_number" if ordinal else "0")
    scan = focus_sql.csv_scan(paths, len(first.header), first.encoding, limits.max_line_bytes, serial, rejects,
                              limits.max_listed)
    return focus_sql.branch(index, scan, first.columns, None, focus_files.MAX_FIELD_CHARS,
                            "row_number() OVER ()" if ordinal else "0")


def _scans(sources: list) -> list[list]:
    """The files grouped into scans: one per kind, compression, encoding and header (a year of monthly files of
    one provider is one scan, which the engine reads file after file in bounded memory)."""
    groups = {}
    for s in sources:
        key = (s.parquet, str(s.read_path).lower().endswith(".gz"), s.encoding, tuple(s.header),
               tuple(sorted((s.types or {}).items())))
        groups.setdefault(key, []).append(s)
    return list(groups.values())


def aggregate(con, sources: list, rates: dict, max_charge_usd: float, limits: Limits, serial: bool = False,
              rejects: str | None = "wb_rejects") -> None:
    """The table ``groups``: :func:`focus_sql.aggregate` over every file (in the engine's database, which spills)."""
    rows = " UNION ALL ".join(scan_sql(group, limits, ordinal=False, serial=serial, rejects=rejects)
                              for group in _scans(sources))
    sql = focus_sql.aggregate(focus_sql.checked(rows, rates, max_charge_usd), limits.max_rows)
    try:
        # a sum needs no order: kept, it holds every file's batches in memory until they can be passed on in order
        con.execute("SET preserve_insertion_order = false")
        con.execute(f"CREATE OR REPLACE TABLE groups AS {sql}")
        con.execute("SET preserve_insertion_order = true")  # the listing numbers records in their order
    except Exception as error:  # noqa: BLE001 - a file the engine cannot read: named
        raise engine_error(sources[0].path if len(sources) == 1 else "the export", error, limits, sources) from None


def structural(con, sources: list, limit: int, rejects: str = "wb_rejects") -> tuple[pd.DataFrame, int, set]:
    """(the first ``limit`` records the engine did not read: file index, record number (the header is 1; blank lines
    count), reason code; how many there are in all; the files whose rejects reached ``limit``, whose count is then
    not all). A file that is not its encoding's text is refused here."""
    empty = pd.DataFrame(columns=["file_index", "record", "code"])
    if all(s.parquet for s in sources):
        return empty, 0, set()
    joined = (f"FROM {rejects}_errors e JOIN {rejects}_scans s ON e.scan_id = s.scan_id AND e.file_id = s.file_id")
    try:
        bad_text = con.execute(f"SELECT s.file_path {joined} WHERE e.error_type = 'INVALID ENCODING' "
                               "OR e.error_type LIKE '%UNICODE%' LIMIT 1").fetchall()
    except Exception:  # noqa: BLE001 - no rejects table: nothing was rejected
        return empty, 0, set()
    by_path = {str(s.read_path): s for s in sources}
    if bad_text:
        source = by_path.get(str(bad_text[0][0]), sources[0])
        raise focus_files.first_bad_text(source.path, source.encoding)
    total = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT s.file_path, e.line {joined})").fetchall()[0][0]
    found = con.execute(f"SELECT s.file_path, e.line, min(e.error_type) {joined} GROUP BY ALL "
                        f"ORDER BY s.file_path, e.line LIMIT {int(limit)}").fetchall()
    records = [(by_path[str(p)].index, int(line), STRUCTURAL.get(str(kind), "record_unreadable"))
               for p, line, kind in found if str(p) in by_path]
    full = {by_path[str(p)].index for p, n in con.execute(
        f"SELECT s.file_path, count(DISTINCT e.line) {joined} GROUP BY ALL").fetchall()
        if str(p) in by_path and n >= limit}
    return (pd.DataFrame(records, columns=["file_index", "record", "code"]) if records else empty), int(total), full


#: Tag texts parsed at a time: at most this many, and this many characters (a tag set is short; a Parquet file may
#: hold long ones, up to the field limit).
TAG_CHUNK_TEXTS, TAG_CHUNK_CHARS = 20_000, 4_000_000


def map_tags(con, parse, columns: list) -> None:
    """The table ``tag_map``: each distinct tag text of the accepted rows with what ``parse`` (a function of a list
    of texts returning a frame of ``columns``, the text first) makes of it, parsed a chunk at a time."""
    con.execute("CREATE OR REPLACE TABLE tag_texts AS SELECT row_number() OVER () AS k, tags "
                "FROM (SELECT DISTINCT tags FROM groups WHERE mask = 0)")
    # the chunks' bounds from the texts' lengths alone (ordering by number, not by text)
    con.execute("CREATE OR REPLACE TABLE tag_sizes AS SELECT k, sum(length(tags) + 1) OVER (ORDER BY k) AS upto "
                "FROM tag_texts")
    names = ", ".join(f"{focus_sql.ident(c)} VARCHAR" for c in columns[2:-1])
    con.execute(f"CREATE OR REPLACE TABLE tag_map (tags VARCHAR, problem TINYINT, {names}{', ' if names else ''}"
                "attributed BOOLEAN)")
    done, upto = 0, 0
    while True:
        bound = con.execute("SELECT max(k) FROM tag_sizes WHERE k > ? AND k <= ? AND upto <= ?",
                            [done, done + TAG_CHUNK_TEXTS, upto + TAG_CHUNK_CHARS]).fetchall()[0][0]
        bound = bound if bound is not None else done + 1  # one text longer than a chunk: alone
        chunk = con.execute("SELECT tags FROM tag_texts WHERE k > ? AND k <= ?", [done, bound]).fetchall()
        if not chunk:
            break
        upto = con.execute("SELECT upto FROM tag_sizes WHERE k = ?", [bound]).fetchall()[0][0]
        done = bound
        frame = parse([text for (text,) in chunk])
        con.register("parsed_tags", frame)
        con.execute("INSERT INTO tag_map SELECT * FROM parsed_tags")
        con.unregister("parsed_tags")
        del chunk, frame


def accepted(con, keys: list) -> pd.DataFrame:
    """The accepted charges summed over files and tag texts, by the attribution keys' values (small: the bill's
    days x services x units x key values)."""
    chosen = ", ".join(f"m.{focus_sql.ident(k)}" for k in keys)
    return con.execute(f"""
        SELECT g.month, g.day, g.service_category, g.service_name, g.provider, g.charge_category, g.unit,
               g.usage_kind, g.resource, {chosen}{', ' if chosen else ''}m.attributed,
               sum(g.rows) AS rows, fsum(g.cost_usd) AS cost_usd, fsum(g.quantity) AS quantity, max(g."end") AS "end"
        FROM groups g JOIN tag_map m ON g.tags = m.tags
        WHERE g.mask = 0 AND m.problem = 0
        GROUP BY ALL""").df()


def rejected_groups(con) -> pd.DataFrame:
    """The rejected charges by file, mask (a tag problem as bit 4096 or 8192) and currency: records, charges, money
    in USD where readable and in their own currency."""
    return con.execute("""
        SELECT file_index, mask, currency, sum(records) AS records, sum(rows) AS rows, fsum(cost_usd) AS cost_usd,
               fsum(amount) AS amount
        FROM groups WHERE mask <> 0 GROUP BY ALL
        UNION ALL
        SELECT g.file_index, 4096 * m.problem AS mask, NULL AS currency, sum(g.records), sum(g.rows), fsum(g.cost_usd),
               NULL AS amount
        FROM groups g JOIN tag_map m ON g.tags = m.tags WHERE g.mask = 0 AND m.problem > 0 GROUP BY ALL""").df()


def not_one_a_line(con, sources: list, most: int) -> set:
    """The CSV files whose lines are not their header and the records read, one a line (a count of line feeds):
    they hold malformed records, blank lines or records over lines. A file with more than ``most`` malformed records
    (counted by Python's CSV reader when there are that many lines) is refused."""
    read = records_by_file(con)
    out = set()
    for source in sources:
        if source.parquet:
            continue
        feeds, ends_with_feed = focus_files.newline_count(source.read_path)
        extra = feeds + (0 if ends_with_feed else 1) - 1 - read.get(source.index, 0)
        if extra > most:  # records over lines (a description in quotes) are not malformed: counted apart
            survey = focus_files.survey(source.read_path, source.encoding)
            malformed = int((~survey.blank[1:]).sum()) - read.get(source.index, 0)
            if malformed > most:
                raise ActualsError(f"{source.path}: {malformed:,} of its records do not have the header's "
                                   f"{source.fields} fields (or could not be read as CSV); allowed: at most {most:,} "
                                   "(an export whose records have the header's fields)")
        if extra:
            out.add(source.index)
    return out


def records_by_file(con) -> dict:
    """Records the engine read, by file index (accepted and rejected rows alike)."""
    return {int(i): int(n) for i, n in con.execute("SELECT file_index, sum(records) FROM groups GROUP BY ALL").fetchall()}


def records(con) -> int:
    """Records the engine read (a bill summary's row is one record, whatever the charges it sums)."""
    return int(con.execute("SELECT coalesce(sum(records), 0) FROM groups").fetchall()[0][0])


def listing(con, source: Source, limits: Limits, rates: dict, max_charge_usd: float) -> pd.DataFrame:
    """The rejected rows of one file with their record number and tag problem (:func:`focus_sql.listing`)."""
    # one thread from the start, so that records are numbered in the file's order and none is lost
    checked = focus_sql.checked(scan_sql([source], limits, ordinal=True, serial=True, rejects="wb_listing"),
                                rates, max_charge_usd)
    try:
        return con.execute(focus_sql.listing(checked, limits.max_listed)).df()
    except Exception as error:  # noqa: BLE001
        raise engine_error(source.path, error, limits, [source]) from None


def check_conserved(source: Source, records_read: int, unread: int) -> None:
    """A CSV with malformed records: every record it holds was read or listed as not read. The engine's CSV reader,
    left to itself, can lose records around malformed ones (a quote left open swallows the rest of the file); a
    count of its line feeds, or Python's CSV reader where records span lines, says how many there are."""
    feeds, ends_with_feed = focus_files.newline_count(source.read_path)
    if feeds + (0 if ends_with_feed else 1) == 1 + records_read + unread:
        return
    survey = focus_files.survey(source.read_path, source.encoding)  # refuses a quote left open to the end
    held = int((~survey.blank[1:]).sum())
    if held != records_read + unread:
        raise ActualsError(f"{source.path}: holds {held:,} records, of which {records_read:,} were read and "
                           f"{unread:,} rejected: {held - records_read - unread:,} could not be placed (malformed "
                           "quoting?); allowed: a CSV whose every quote that opens a field closes it")


def unread_count(source: Source, records_read: int) -> int:
    """Records of a CSV the engine did not read, counted by Python's CSV reader (for a file with more malformed
    records than the engine keeps)."""
    survey = focus_files.survey(source.read_path, source.encoding)
    return max(0, int((~survey.blank[1:]).sum()) - records_read)


def lines(source: Source, ordinals: np.ndarray, structural: pd.DataFrame, records_read: int) -> tuple[np.ndarray, np.ndarray]:
    """(the line each listed row starts on, the line of each record the engine did not read) in ``source``.

    ``ordinals``: the rows' numbers among the records the engine read (1, 2, ...; Parquet: the row, from 0);
    ``structural``: that file's unread records (their record number: header 1, blank lines counted). A file whose
    records sit one a line needs no more than a count of its line feeds; a file with blank lines or quoted fields
    spanning lines is read once more to place its records (:func:`focus_files.survey`)."""
    if source.parquet:
        return np.asarray(ordinals, dtype=np.int64) + 2, np.array([], dtype=np.int64)  # row 1 is the schema
    unread = np.sort(structural["record"].to_numpy(dtype=np.int64))
    quote_trouble = (structural["code"] == "record_quote").any()
    if not quote_trouble:
        feeds, ends_with_feed = focus_files.newline_count(source.read_path)
        physical = feeds + (0 if ends_with_feed else 1)
        if physical == 1 + records_read + len(unread):  # one record a line, no blank line: lines are record numbers
            return _record_numbers(ordinals, unread), unread
    survey = focus_files.survey(source.read_path, source.encoding)
    skipped = np.zeros(len(survey.starts), dtype=bool)
    skipped[0] = True  # the header
    skipped |= survey.blank
    inside = unread[(unread >= 1) & (unread <= len(survey.starts))]
    skipped[inside - 1] = True
    read = np.flatnonzero(~skipped)
    if len(read) != records_read:  # the two readers disagree on a malformed file: record numbers, not lines
        return _record_numbers(ordinals, unread), unread
    starts = survey.starts
    return starts[read[np.asarray(ordinals, dtype=np.int64) - 1]], starts[np.clip(unread - 1, 0, len(starts) - 1)]


def _record_numbers(ordinals: np.ndarray, unread: np.ndarray) -> np.ndarray:
    """The record number of the ``ordinals``-th record read, counting those not read (header: record 1)."""
    ordinals = np.asarray(ordinals, dtype=np.int64)
    n = ordinals + 1  # the header is record 1
    # each unread record at or before a read one's number pushes it one further
    below = unread - np.arange(len(unread)) - 1  # records read before each unread one
    return n + np.searchsorted(below, ordinals, side="right")
