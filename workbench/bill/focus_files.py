"""Finding and opening FOCUS exports for :mod:`workbench.bill.actuals`: the files a path names (a file, a folder of
monthly files, Hive-partitioned folders included, or a glob), each file's header and text encoding, what a compressed
file expands to, and the line each record starts on. Nothing is converted here: the checks are the reader's.
"""
from __future__ import annotations

import csv
import glob
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class ActualsError(ValueError):
    """An export that cannot be read at all: a missing file or column, an unknown format, a limit passed."""


#: Names a folder's or a glob's files must end with to be read as exports (a single file named alone is read as
#: Parquet when its name ends with .parquet, as gzip when with .gz, else as CSV).
EXPORT_SUFFIXES = (".csv", ".csv.gz", ".parquet")


def is_parquet(path: Path) -> bool:
    return path.name.lower().endswith(".parquet")


def sources(path) -> list[Path]:
    """The export files ``path`` names: a file; a folder, read with its sub-folders (cloud exports deliver a month a
    folder, ``billing_period=2025-01/part-0.parquet``); or a glob (``bills/2025-*.csv.gz``). Sorted by name."""
    text = str(path)
    if any(ch in text for ch in "*?[") and not Path(text).exists():
        files = _once(_globbed(text))
        if not files:
            raise ActualsError(f"{text}: no FOCUS export matches; allowed: a file, a folder or a glob of "
                               f"{', '.join(EXPORT_SUFFIXES)} files")
        return files
    path = Path(path)
    if path.is_dir():
        files = _once(_walk(path))
        if not files:
            raise ActualsError(f"{path}: the folder holds no FOCUS export; allowed: {', '.join(EXPORT_SUFFIXES)} files")
        return files
    if not path.is_file():
        raise ActualsError(f"{path}: no such file")
    return [path]


def _globbed(pattern: str):
    """The export files a glob names. ``**`` is walked by :func:`_walk` (each real folder once: Python's glob follows
    links back up the tree, and two of them make its walk grow without end)."""
    import re
    if "**" not in pattern:
        yield from (Path(p) for p in sorted(glob.glob(pattern)) if Path(p).is_file() and _export_name(p))
        return
    root = Path(pattern.split("**")[0] or ".")
    while any(ch in str(root) for ch in "*?[") and root != root.parent:
        root = root.parent
    regex = re.compile(_glob_regex(pattern) + r"\Z", re.S)
    for path in _walk(root):
        if regex.match(str(path)):
            yield path


def _glob_regex(pattern: str) -> str:
    """A glob as a regular expression: ``**/`` any folders, ``*`` and ``?`` within a name, ``[...]`` a set."""
    import re
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[" and "]" in pattern[i + 2:]:
            j = pattern.index("]", i + 2)
            inside = pattern[i + 1:j]
            out += "[" + ("^" + re.escape(inside[1:]) if inside.startswith("!") else re.escape(inside)) + "]"
            i = j + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return out


def _walk(folder: Path):
    """A folder's exports, its sub-folders followed (a month linked in is a month of the bill) and each real folder
    entered once (a link back up is not a loop); names beginning with . or _ (_SUCCESS, .staging) left out."""
    import os
    seen = set()
    for root, dirs, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(names):
            if _export_name(name) and not name.startswith((".", "_")) and Path(root, name).is_file():
                yield Path(root) / name


def _once(paths) -> list[Path]:
    """Each file once, whatever the links and patterns that reach it, sorted by name."""
    import os
    out = {}
    for p in paths:
        out.setdefault(os.path.realpath(p), p)
    return sorted(out.values())


def _export_name(name) -> bool:
    return str(name).lower().endswith(EXPORT_SUFFIXES)


def checked_encoding(encoding) -> str:
    import codecs
    try:
        name = codecs.lookup(str(encoding)).name
    except LookupError:
        name = None
    if name is None or not codecs.lookup(name)._is_text_encoding:
        raise ActualsError(f"encoding {encoding!r} is not a text encoding; allowed: a Python codec name such as "
                           "utf-8 (FOCUS's), latin-1 or cp1252")
    return "utf-8-sig" if name == "utf-8" else name  # a byte-order mark before the header is not part of its name


def not_text(path: Path, error: UnicodeDecodeError, encoding: str) -> ActualsError:
    return ActualsError(f"{path}: is not {encoding.replace('-sig', '').upper()} text (byte 0x{error.object[error.start]:02X} "
                        f"at offset {error.start:,} of a block); allowed: UTF-8, as FOCUS asks, or name the file's "
                        "encoding (read_focus(..., encoding='latin-1'); workbench actuals --encoding latin-1)")


def first_bad_text(path: Path, encoding: str) -> ActualsError:
    """The message for a file that is not ``encoding`` text: the first byte that is not, with its offset in the file
    and its line, found by decoding the file again (only such a file pays for it)."""
    import codecs
    import gzip
    decoder = codecs.getincrementaldecoder(encoding)()
    offset = lines = 0
    try:
        with (gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")) as f:
            while chunk := f.read(1 << 20):
                pending = decoder.getstate()[0]
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as error:
                    at = offset - len(pending) + error.start
                    line = lines + (pending + chunk)[:error.start].count(b"\n") - pending.count(b"\n") + 1
                    return ActualsError(
                        f"{path}: line {line:,}: is not {encoding.replace('-sig', '').upper()} text (byte "
                        f"0x{error.object[error.start]:02X} at offset {at:,}); allowed: UTF-8, as FOCUS asks, or name "
                        "the file's encoding (read_focus(..., encoding='latin-1'); workbench actuals --encoding latin-1)")
                offset += len(chunk)
                lines += chunk.count(b"\n")
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:  # cut inside a character at the end
        return ActualsError(f"{path}: is not {encoding.replace('-sig', '').upper()} text (byte "
                            f"0x{error.object[error.start]:02X} at its end); allowed: UTF-8, as FOCUS asks, or name the "
                            "file's encoding (workbench actuals --encoding latin-1)")
    except (OSError, EOFError, zlib.error) as error:
        return ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): {error}")
    return ActualsError(f"{path}: is not {encoding.replace('-sig', '').upper()} text; allowed: UTF-8, as FOCUS asks, "
                        "or name the file's encoding (workbench actuals --encoding latin-1)")


def header(path: Path, encoding: str = "utf-8-sig") -> list[str]:
    """A CSV export's column names, read without its rows (a Parquet file's are read by the engine)."""
    try:
        with open_text(path, encoding) as f:
            row = next(csv.reader(f), None)
    except UnicodeDecodeError:
        raise first_bad_text(path, encoding) from None
    except UnicodeError as error:  # a codec that refuses the start of the file (UTF-16 without its mark)
        raise ActualsError(f"{path}: is not {encoding} text ({error}); allowed: UTF-8, as FOCUS asks, or the "
                           "file's own encoding") from None
    except (OSError, EOFError, csv.Error, zlib.error) as error:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): "
                           f"{str(error).splitlines()[0][:200]}") from None
    if row is None:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): the file is empty")
    if not row:
        raise ActualsError(f"{path}: the first line is blank; allowed: the header (the column names) on line 1")
    return row


def open_text(path: Path, encoding: str = "utf-8-sig"):
    import gzip
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding=encoding, newline="")
    return open(path, encoding=encoding, newline="")


def expanded_size(path: Path, limit: float) -> int:
    """The bytes a gzip file expands to, counted as it is decompressed and stopped once past ``limit`` (a small
    file that expands to gigabytes is refused before anything reads it). A file cut short is refused."""
    import gzip
    total = 0
    try:
        with gzip.open(path, "rb") as f:
            while chunk := f.read(1 << 22):
                total += len(chunk)
                if total > limit:
                    break
    except (OSError, EOFError, zlib.error) as error:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): "
                           f"{str(error).splitlines()[0][:200] or type(error).__name__}") from None
    return total


def transcoded(path: Path, encoding: str, target: Path, limit: float) -> Path:
    """A copy of a CSV in another text encoding as plain UTF-8 at ``target`` (the engine reads UTF-8, UTF-16 and
    Latin-1 itself), at most ``limit`` bytes."""
    written = 0
    try:
        with open_text(path, encoding) as f, open(target, "w", encoding="utf-8", newline="") as out:
            while text := f.read(1 << 20):
                written += out.write(text)
                if written > limit:
                    raise ActualsError(f"{path}: expands past {limit / 1e9:,.1f} GB; allowed: at most that much text")
    except UnicodeDecodeError:
        raise first_bad_text(path, encoding) from None
    except (OSError, EOFError, zlib.error) as error:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): {error}") from None
    return target


def newline_count(path: Path) -> tuple[int, bool]:
    """(the number of line feeds in a CSV, whether its last byte is one), read as bytes."""
    import gzip
    count, last = 0, b""
    try:
        with (gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")) as f:
            while chunk := f.read(1 << 22):
                count += chunk.count(b"\n")
                last = chunk[-1:]
    except (OSError, EOFError, zlib.error) as error:  # gone or changed while read
        raise ActualsError(f"{path}: could not be read again to place its rejected rows: {error}") from None
    return count, last == b"\n"


def lone_carriage_return(path: Path) -> int | None:
    """The line of the first carriage return not followed by a line feed (a file whose lines end in ``\\r`` alone
    throughout has none to find: every ``\\r`` there is a line's end, and the engine reads it)."""
    import gzip
    try:
        with (gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")) as f:
            data_lines, previous = 0, b""
            while chunk := f.read(1 << 22):
                block = previous + chunk
                at = block.find(b"\r")
                while at != -1 and at + 1 < len(block) and block[at + 1:at + 2] == b"\n":
                    at = block.find(b"\r", at + 1)
                if at != -1 and at + 1 < len(block) and b"\n" in block:
                    return data_lines + block.count(b"\n", 0, at) + 1
                data_lines += block[:-1].count(b"\n")
                previous = block[-1:]
    except (OSError, EOFError, zlib.error):
        return None
    return None


@dataclass
class Survey:
    """What one pass of Python's CSV reader says of a file's records: the line each record starts on (a quoted
    field may span lines) and which records are blank lines. Records are numbered from the header, 0."""

    starts: np.ndarray  # the line each record starts on
    blank: np.ndarray   # whether the record is a blank line


#: The longest cell read [characters]: Python's own CSV limit, far past any FOCUS value.
MAX_FIELD_CHARS = 131_072


def survey(path: Path, encoding: str) -> Survey:
    """One pass over a CSV's records (see :class:`Survey`), for the line numbers of a file whose records do not sit
    one a line: a quoted field spanning lines, or blank lines. A quoted field left open to the end of the file refuses
    the file, naming the line where it opens."""
    from array import array
    starts, blank = array("q", [1]), array("b", [0])  # compact: a file of millions of records
    with _FIELD_LIMIT:
        return _survey(path, encoding, starts, blank)


#: Python's CSV field limit is one for the process: changed under this lock only, so that two reads in threads do
#: not see each other's.
_FIELD_LIMIT = threading.RLock()


def _survey(path, encoding, starts, blank) -> Survey:
    line_end, last_start = 1, 1
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(2**31 - 1)
        with open_text(path, encoding) as f:
            reader = csv.reader(f)  # not strict: a stray quote is text
            next(reader, None)  # the header
            line_end = reader.line_num
            for row in reader:
                start = line_end + 1
                line_end = reader.line_num
                starts.append(start)
                blank.append(0 if row else 1)
                last_start = start
    except UnicodeDecodeError as error:
        raise not_text(path, error, encoding) from None
    except (OSError, EOFError, zlib.error, csv.Error) as error:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): "
                           f"{str(error).splitlines()[0][:200] or type(error).__name__}") from None
    finally:
        csv.field_size_limit(limit)
    if line_end > last_start:  # the last record spans lines: is its quote closed, or did the file end inside it?
        _closed(path, encoding, last_start)
    return Survey(np.frombuffer(starts, dtype=np.int64).copy(), np.frombuffer(blank, dtype=np.int8).astype(bool))


def _closed(path: Path, encoding: str, start: int) -> None:
    """Refuse a file whose last record, from line ``start``, ends inside a quoted field."""
    import itertools
    with _FIELD_LIMIT:
        _closed_locked(path, encoding, start, itertools)


def _closed_locked(path, encoding, start, itertools):
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(2**31 - 1)
        with open_text(path, encoding) as f:
            for _ in itertools.islice(f, start - 1):
                pass
            next(csv.reader(f, strict=True), None)
    except csv.Error as error:
        if "unexpected end of data" in str(error):
            raise never_closed(path, start) from None
    finally:
        csv.field_size_limit(limit)


def never_closed(path: Path, line: int) -> ActualsError:
    return ActualsError(f"{path}: line {line}: a quoted field opened on this record is never closed, so the rest of "
                        "the file cannot be read; allowed: every \" that opens a field closed by another (a \" inside a "
                        "field written twice)")
