"""Opening a FOCUS export for :mod:`workbench.actuals`: its header, its text encoding, and its records a chunk at
a time, every cell as text (CSV, plain or gzip, or Parquet). Nothing is converted here: the checks are the reader's.
"""
from __future__ import annotations

import csv
import json
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

#: Spare columns read after the header's: a record with more fields than the header fills them.
EXTRA, SPARE = "\0extra", 16


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
    """``pyarrow.parquet``, loaded now in an app kernel that started pandas without it (:mod:`workbench.app_kernel`)."""
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


def chunks(path: Path, header, columns, encoding: str, chunk_rows: int):
    """The ``columns`` needed, ``chunk_rows`` records at a time, every cell as text (nothing converted behind the
    checks' back). A CSV is read with spare columns after the header's, so that a record with too many fields is
    seen rather than read shifted (pandas' column selection would silently drop the extra fields)."""
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
                frame.index = pd.RangeIndex(offset, offset + len(frame))
                offset += len(frame)
                yield frame
            return
        names = [*(f"{c}\0{i}" if header.count(c) > 1 else c for i, c in enumerate(header)),
                 *(f"{EXTRA}{i}" for i in range(SPARE))]
        reader = pd.read_csv(path, header=None, skiprows=1, names=names, dtype=object, keep_default_na=False,
                             na_values=[], skip_blank_lines=False, compression="infer", encoding=encoding, engine="c",
                             chunksize=chunk_rows, index_col=False)
        with reader, warnings.catch_warnings():
            # a first record longer than the spare columns: its surplus is dropped, the spare ones still say so
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            for frame in reader:
                frame = frame[[*columns, *names[len(header):]]]
                # a blank line: not a record (a record has its FOCUS columns); only rows whose first cell is
                # empty are looked at whole
                maybe = frame.iloc[:, 0].eq("").to_numpy()
                if maybe.any():
                    blank = np.zeros(len(frame), dtype=bool)
                    blank[maybe] = frame[maybe].eq("").all(axis=1).to_numpy()
                    frame = frame[~blank]
                yield frame
    except ImportError as error:
        raise ActualsError(f"{path}: reading Parquet needs pyarrow ({error})") from None
    except UnicodeDecodeError as error:
        raise not_text(path, error, encoding) from None
    except pd.errors.ParserError as error:
        raise ActualsError(f"{path}: not a readable FOCUS export: {str(error).splitlines()[0][:200]}; allowed: "
                           f"records of at most the header's {len(header)} fields plus {SPARE} (a record with a few "
                           "more is rejected on its own)") from None
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
