"""Locate and read the project's data tables (``data/*.csv``).

Every table is checked as it is read: a missing column, a value that is not a number where one is needed,
or a duplicate id raises :class:`DataFileError` naming the file, the row (the line number in the file,
the header being line 1) and the column, so that a hand-edited price list fails loudly and precisely.
"""
from __future__ import annotations

import csv
import math
import os
from functools import lru_cache
from pathlib import Path

import pandas as pd

#: Set this environment variable to read the tables from another folder (e.g. an updated price list).
DATA_DIR_ENV = "WORKBENCH_DATA"


class DataFileError(ValueError):
    """A data table is missing, malformed or inconsistent."""

    def __init__(self, path, message, row=None, column=None):
        self.path, self.row, self.column = Path(path), row, column
        where = str(self.path)
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")


def data_dir() -> Path:
    """The folder holding the data tables.

    An installed wheel carries them inside the package (``workbench/data``); a source checkout keeps them at
    the repository's top level (``data/``). ``$WORKBENCH_DATA`` overrides both.
    """
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    here = Path(__file__).resolve().parent
    for candidate in (here / "data", here.parent / "data"):
        if (candidate / "accelerators.csv").is_file():
            return candidate
    raise DataFileError(here / "data", "data folder not found (set $WORKBENCH_DATA)")


def _to_float(text, path, row, column, required):
    text = text.strip()
    if text == "":
        if required:
            raise DataFileError(path, "value is empty but required", row, column)
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise DataFileError(path, f"{text!r} is not a number", row, column) from None
    if not math.isfinite(value):
        raise DataFileError(path, f"{text!r} is not a finite number", row, column)
    return value


def read_table(name: str, *, numeric=(), required=(), key=None) -> pd.DataFrame:
    """Read ``data/<name>`` into a DataFrame of strings and floats.

    numeric: columns parsed as floats (empty cells become NaN unless also in ``required``).
    required: columns that must be present and non-empty in every row.
    key: a column, or a tuple of columns, whose values must be unique.
    """
    path = data_dir() / name
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            for column in (*numeric, *required, *((key,) if isinstance(key, str) else key or ())):
                if column not in header:
                    raise DataFileError(path, f"missing column (has: {', '.join(header)})", column=column)
            records, seen = [], {}
            for row_number, record in enumerate(reader, start=2):
                if None in record or any(v is None for v in record.values()):
                    raise DataFileError(path, f"expected {len(header)} fields", row_number)
                for column in required:
                    if record[column].strip() == "":
                        raise DataFileError(path, "value is empty but required", row_number, column)
                for column in numeric:
                    record[column] = _to_float(record[column], path, row_number, column, column in required)
                if key is not None:
                    k = record[key] if isinstance(key, str) else tuple(record[c] for c in key)
                    if k in seen:
                        column = key if isinstance(key, str) else "+".join(key)
                        raise DataFileError(path, f"duplicate id {k!r} (first at row {seen[k]})", row_number, column)
                    seen[k] = row_number
                records.append(record)
    except FileNotFoundError:
        raise DataFileError(path, "file not found") from None
    return pd.DataFrame.from_records(records, columns=header)


@lru_cache(maxsize=None)
def published_runs() -> pd.DataFrame:
    """Publicly reported training runs with their sources: the calibration and test set."""
    return read_table(
        "published_runs.csv",
        numeric=("params", "active_params", "tokens", "seq_len", "n_gpus", "gpu_hours", "wall_days",
                 "reported_flops", "reported_cost_usd", "implied_mfu_6nd"),
        required=("name", "params", "tokens", "gpu"),
        key="name",
    )
