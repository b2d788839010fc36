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
from typing import Callable

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


_CACHES: list = []


def cached(func: Callable) -> Callable:
    """``lru_cache`` for a function that reads or derives from the data tables; :func:`reload` clears them all."""
    wrapped = lru_cache(maxsize=None)(func)
    _CACHES.append(wrapped)
    return wrapped


def reload() -> None:
    """Forget every table read so far, so that the next look-up reads the (possibly changed) data folder."""
    for wrapped in _CACHES:
        wrapped.cache_clear()


def data_dir() -> Path:
    """The folder holding the data tables.

    An installed wheel carries them inside the package (``workbench/data``); a source checkout keeps them at
    the repository's top level (``data/``). ``$WORKBENCH_DATA`` overrides both.
    """
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    here = Path(__file__).resolve().parents[1]  # the package: workbench/reference/data.py
    for candidate in (here / "data", here.parent / "data"):
        if (candidate / "accelerators.csv").is_file():
            return candidate
    raise DataFileError(here / "data", "data folder not found (set $WORKBENCH_DATA)")


def _to_float(text, path, row, column, required, bounds=None):
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
    if bounds is not None:
        low, high = bounds
        # a lower bound of 0 means "above zero": a zero peak, memory or price is as impossible as a negative one
        if not (value > low if low == 0 else value >= low) or value > high:
            lower = f"above {low:g}" if low == 0 else f"from {low:g}"
            raise DataFileError(path, f"{text} is out of range (allowed: {lower} to {high:g})", row, column)
    return value


def read_table(name: str, *, numeric=(), required=(), key=None, bounds=None, choices=None, normalised=(),
               reserved=None) -> pd.DataFrame:
    """Read ``data/<name>`` into a DataFrame of strings and floats.

    numeric: columns parsed as floats (empty cells become NaN unless also in ``required``).
    required: columns that must be present and non-empty in every row.
    key: a column, or a tuple of columns, whose values must be unique.
    bounds: {column: (low, high)} for numeric columns; a low of 0 means strictly positive.
    choices: {column: allowed values} for text columns (an empty optional cell is allowed).
    normalised: text columns that must be lower case without surrounding spaces (names users type).
    reserved: {column: values} a row may not use (names the workbench gives a meaning of its own).
    """
    path = data_dir() / name
    bounds, choices = bounds or {}, choices or {}
    try:
        # utf-8-sig: a spreadsheet's byte-order mark is not part of the first column's name
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            for column in (*numeric, *required, *((key,) if isinstance(key, str) else key or ()), *choices):
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
                    record[column] = _to_float(record[column], path, row_number, column, column in required,
                                               bounds.get(column))
                for column, allowed in choices.items():
                    value = record[column].strip()
                    if (value or column in required) and value not in allowed:
                        shown = ", ".join(sorted(allowed)[:12]) + (", ..." if len(allowed) > 12 else "")
                        raise DataFileError(path, f"{value!r} is not one of the allowed values ({shown})",
                                            row_number, column)
                    # kept as checked: 'monthly ' passed the check and then matched no lookup of 'monthly'
                    record[column] = value
                for column in normalised:
                    if record[column] != record[column].strip().lower():
                        raise DataFileError(path, f"{record[column]!r} must be lower case without surrounding "
                                                  "spaces", row_number, column)
                for column, names in (reserved or {}).items():
                    if record[column] in names:
                        raise DataFileError(path, f"{record[column]!r} is a reserved name", row_number, column)
                if key is not None:
                    k = record[key] if isinstance(key, str) else tuple(record[c] for c in key)
                    if k in seen:
                        column = key if isinstance(key, str) else "+".join(key)
                        raise DataFileError(path, f"duplicate id {k!r} (first at row {seen[k]})", row_number, column)
                    seen[k] = row_number
                records.append(record)
    except FileNotFoundError:
        raise DataFileError(path, "file not found") from None
    except UnicodeDecodeError as error:
        raise DataFileError(path, f"is not UTF-8 text (byte {error.start}: {error.reason}); save it as UTF-8") from None
    except csv.Error as error:
        raise DataFileError(path, f"is not a readable CSV file ({error})") from None
    except OSError as error:
        raise DataFileError(path, f"cannot be read ({error.strerror or error})") from None
    return pd.DataFrame.from_records(records, columns=header)


@cached
def published_runs() -> pd.DataFrame:
    """Publicly reported training runs with their sources: the calibration and test set."""
    return read_table(
        "published_runs.csv",
        numeric=("params", "active_params", "tokens", "seq_len", "n_gpus", "gpu_hours", "wall_days",
                 "reported_flops", "reported_cost_usd", "implied_mfu_6nd", "tensor_parallel", "pipeline_parallel",
                 "zero_stage", "global_batch_tokens", "network_gbps_per_node", "d_model", "n_layers", "micro_batch_size"),
        required=("name", "params", "tokens", "gpu"),
        # hours_scope: wall-clock (downtime, restarts and checkpoints inside the hours, the default) or steady
        # (hours from an iteration time or a measured rate: compute only); recompute: the run's activation recompute;
        # divergence_allowance none: the run reports no divergence or rollback
        choices={"precision": ("", "bf16", "fp16", "fp8"), "recompute": ("", "none", "selective", "full"),
                 "hours_scope": ("", "wall-clock", "steady"), "divergence_allowance": ("", "expected", "none")},
        key="name",
        bounds={"params": (1e6, 1e13), "active_params": (1e6, 1e13), "tokens": (1e6, 1e15), "seq_len": (128, 1048576),
                "n_gpus": (1, 1e7), "gpu_hours": (0, 1e10), "wall_days": (0, 1e4), "reported_flops": (0, 1e30),
                "reported_cost_usd": (0, 1e12), "implied_mfu_6nd": (0, 1), "tensor_parallel": (1, 4096),
                "pipeline_parallel": (1, 4096), "zero_stage": (-1e-9, 3), "global_batch_tokens": (1, 1e12),
                "network_gbps_per_node": (0, 1e6), "d_model": (1, 1e6), "n_layers": (1, 1e4),
                "micro_batch_size": (1, 1e4)},
    )
