"""Opening a FOCUS export for :mod:`workbench.bill.actuals`: its header, its text encoding, and its records a chunk at
a time, every cell as text (CSV, plain or gzip, or Parquet). Nothing is converted here: the checks are the reader's.
"""
from __future__ import annotations

import csv
import json
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd



class ActualsError(ValueError):
    """An export that cannot be read at all: a missing file or column, an unknown format."""


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


def pyarrow_parquet():
    """``pyarrow.parquet``, loaded now in an app kernel that started pandas without it (:mod:`workbench.app.app_kernel`)."""
    import sys
    if "pyarrow" in sys.modules and sys.modules["pyarrow"] is None:
        del sys.modules["pyarrow"]
    import pyarrow.parquet as pq
    return pq


def header(path: Path, encoding: str = "utf-8-sig") -> list[str]:
    """The export's column names, read without its rows."""
    if not path.is_file():
        raise ActualsError(f"{path}: no such file")
    if path.name.lower().endswith(".parquet"):
        try:
            pq = pyarrow_parquet()
            return list(pq.read_schema(path).names)
        except ImportError as error:
            raise ActualsError(f"{path}: reading Parquet needs pyarrow ({error})") from None
        except Exception as error:  # noqa: BLE001 - pyarrow's errors for a file that is not Parquet
            raise ActualsError(f"{path}: not a readable Parquet file: {str(error).splitlines()[0][:200]}") from None
    try:
        with open_text(path, encoding) as f:
            row = next(csv.reader(f), None)
    except UnicodeDecodeError as error:
        raise not_text(path, error, encoding) from None
    except UnicodeError as error:  # a codec that refuses the start of the file (UTF-16 without its mark)
        raise ActualsError(f"{path}: is not {encoding} text ({error}); allowed: UTF-8, as FOCUS asks, or the "
                           "file's own encoding") from None
    except (OSError, EOFError, csv.Error, zlib.error) as error:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): "
                           f"{str(error).splitlines()[0][:200]}") from None
    if not row:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): the file is empty")
    return row


def open_text(path: Path, encoding: str = "utf-8-sig"):
    import gzip
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding=encoding, newline="")
    return open(path, encoding=encoding, newline="")


@dataclass
class Survey:
    """What one pass of Python's CSV reader says of a file's records, before pandas reads them: the records
    pandas must skip (blank lines, records with more or fewer fields than the header) and the line each record
    starts on (a quoted field may span lines).

    ``skip``: record numbers (the header is record 0) that are not read; ``miscounted``: (line, reason code) of
    each record not read for its shape (``record_extra``, ``record_short``, ``record_long_field``); ``shift_records`` / ``shift_lines``: from record
    ``shift_records[k]`` on, a record starts ``shift_lines[k]`` lines after its number."""

    skip: set
    miscounted: list
    shift_records: np.ndarray
    shift_lines: np.ndarray

    def lines(self, records: np.ndarray) -> np.ndarray:
        """The line each record (numbered as in ``skip``) starts on."""
        if not len(self.shift_records):
            return records + 1
        k = np.searchsorted(self.shift_records, records, side="right") - 1
        return records + 1 + np.where(k >= 0, self.shift_lines[np.maximum(k, 0)], 0)


#: The longest cell read [characters]: Python's own CSV limit, far past any FOCUS value.
MAX_FIELD_CHARS = 131_072


def survey(path: Path, encoding: str, header_fields: int) -> Survey:
    """One pass over a CSV's records counting their fields (see :class:`Survey`), tokenised as pandas does (a
    quote in the middle of a field is read as text). One rule for every record, the first as the rest: a record
    with more fields than the header (an unquoted comma shifts every value after it) or fewer (a cut line), or
    with a field longer than :data:`MAX_FIELD_CHARS`, is not read, and is listed with its line. A quoted field left
    open to the end of the file refuses the file, naming the line where it opens."""
    try:
        try:
            return _survey(path, encoding, header_fields, long_fields=False)
        except _LongField:  # a cell past Python's limit: counted again, every cell measured (slower, and rare)
            return _survey(path, encoding, header_fields, long_fields=True)
    except UnicodeDecodeError as error:
        raise not_text(path, error, encoding) from None
    except (OSError, EOFError, zlib.error, csv.Error) as error:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): "
                           f"{str(error).splitlines()[0][:200] or type(error).__name__}") from None


class _LongField(Exception):
    pass


def _survey(path: Path, encoding: str, header_fields: int, long_fields: bool) -> Survey:
    skip, miscounted, shift_records, shift_lines = set(), [], [], []
    line_end, shift, record, last_start = 1, 0, 0, 1
    limit = csv.field_size_limit()
    try:
        if long_fields:
            csv.field_size_limit(2**31 - 1)
        with open_text(path, encoding) as f:
            reader = csv.reader(f)  # not strict: a stray quote is text, as pandas reads it
            next(reader, None)  # the header
            line_end = reader.line_num
            for row in _rows(reader):
                record += 1
                start = line_end + 1
                line_end = reader.line_num
                if start - (record + 1) != shift:
                    shift = start - (record + 1)
                    shift_records.append(record)
                    shift_lines.append(shift)
                last_start = start
                if not row:
                    skip.add(record)  # a blank line: not a record
                elif len(row) != header_fields:
                    skip.add(record)
                    miscounted.append((start, "record_extra" if len(row) > header_fields else "record_short"))
                elif long_fields and max(map(len, row)) > MAX_FIELD_CHARS:
                    skip.add(record)
                    miscounted.append((start, "record_long_field"))
    finally:
        csv.field_size_limit(limit)
    if line_end > last_start:  # the last record spans lines: is its quote closed, or did the file end inside it?
        _closed(path, encoding, last_start)
    return Survey(skip, miscounted, np.array(shift_records, dtype=np.int64), np.array(shift_lines, dtype=np.int64))


def _rows(reader):
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            if "field limit" in str(error):
                raise _LongField() from None
            raise


def _closed(path: Path, encoding: str, start: int) -> None:
    """Refuse a file whose last record, from line ``start``, ends inside a quoted field."""
    import itertools
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(2**31 - 1)
        with open_text(path, encoding) as f:
            for _ in itertools.islice(f, start - 1):
                pass
            next(csv.reader(f, strict=True), None)
    except csv.Error as error:
        if "unexpected end of data" in str(error):
            raise ActualsError(f"{path}: line {start}: a quoted field opened on this record is never closed, so "
                               "the rest of the file cannot be read; allowed: every \" that opens a field closed by "
                               "another (a \" inside a field written twice)") from None
    finally:
        csv.field_size_limit(limit)


def chunks(path: Path, header, columns, encoding: str, chunk_rows: int, surveyed: Survey | None = None):
    """The ``columns`` needed, ``chunk_rows`` records at a time, every cell as text (nothing converted behind the
    checks' back), each frame indexed by the line its records start on (the header is line 1). A CSV's records
    are first counted (:func:`survey`): pandas reads only those with the header's number of fields."""
    name = path.name.lower()
    try:
        if name.endswith(".parquet"):
            pq = pyarrow_parquet()
            offset = 0
            for batch in pq.ParquetFile(path).iter_batches(batch_size=chunk_rows, columns=columns):
                frame = batch.to_pandas()
                if "Tags" in frame:  # FOCUS in Parquet may hold tags as a map (key-value pairs), not JSON text
                    frame["Tags"] = frame["Tags"].map(tags_text)
                frame = frame.astype(object).where(frame.notna(), "").astype(str).astype(object)
                frame.index = pd.RangeIndex(offset + 2, offset + 2 + len(frame))  # row 1 is the schema
                offset += len(frame)
                yield frame
            return
        surveyed = surveyed or survey(path, encoding, len(header))
        skip = surveyed.skip | {0}
        names = [f"{c}\0{i}" if header.count(c) > 1 else c for i, c in enumerate(header)]
        reader = pd.read_csv(path, header=None, skiprows=(lambda i: i in skip) if len(skip) > 1 else 1, names=names,
                             dtype=object, keep_default_na=False, na_values=[], skip_blank_lines=False,
                             compression="infer", encoding=encoding, engine="c", chunksize=chunk_rows, index_col=False)
        done = 0
        skipped = np.array(sorted(surveyed.skip), dtype=np.int64)
        below = skipped - np.arange(len(skipped)) - 1  # records read before each skipped one
        with reader:
            for frame in reader:
                frame = frame[list(columns)]
                # the record numbers of this chunk: the n-th record read is n plus the skipped ones before it
                n = np.arange(done + 1, done + 1 + len(frame), dtype=np.int64)
                kept = n + np.searchsorted(below, n, side="left")
                done += len(frame)
                frame.index = pd.Index(surveyed.lines(kept))
                yield frame
    except ImportError as error:
        raise ActualsError(f"{path}: reading Parquet needs pyarrow ({error})") from None
    except UnicodeDecodeError as error:
        raise not_text(path, error, encoding) from None
    except pd.errors.ParserError as error:
        raise ActualsError(f"{path}: not a readable FOCUS export: {str(error).splitlines()[0][:200]}") from None
    except (pd.errors.EmptyDataError, OSError, EOFError, ValueError, zlib.error) as error:
        raise ActualsError(f"{path}: not a readable FOCUS export (CSV, CSV.gz or Parquet): "
                           f"{str(error).splitlines()[0][:200] or type(error).__name__}") from None


def tags_text(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(dict(value), default=str)
    except (TypeError, ValueError):
        return str(value)
