"""Every CSV the workbench writes (the cost lines, a programme's months, the bill review's tables) goes through
:func:`to_csv`: text a spreadsheet would run as a formula is defused, and numbers are written exactly (the
shortest text that reads back as the same float), so that a CSV sums to its JSON total to the last cent."""
from __future__ import annotations

import pandas as pd

#: A spreadsheet runs a cell starting with one of these as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell that a spreadsheet would run as a formula prefixed by ``'``."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = [f"'{v}" if isinstance(v, str) and v.startswith(FORMULA_STARTS) else v for v in out[column]]
    return out


def to_csv(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text: formula-safe, every number exact, no index."""
    return spreadsheet_safe(frame).to_csv(index=False)
