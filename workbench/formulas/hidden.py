"""The costs a run's estimate leaves out and a programme pays: data cleaning, debug environments, security and
content filtering, cross-region reads. Plain functions over scalars or arrays; defaults with their sources in
``data/programme_defaults.csv`` (:func:`defaults`)."""
from __future__ import annotations

import numpy as np

from ..reference import data

HOURS_PER_MONTH = 365.25 * 24 / 12
TB = 1e12


@data.cached
def table():
    """``data/programme_defaults.csv``: each hidden-cost setting's default, unit, allowed range and source."""
    rows = data.read_table("programme_defaults.csv", numeric=("value", "min", "max"),
                           required=("name", "value", "unit", "min", "max", "source"), key="name")
    for row in rows.itertuples():
        if not row.min <= row.value <= row.max:
            raise data.DataFileError(data.data_dir() / "programme_defaults.csv",
                                     f"{row.name} = {row.value:g} is outside its own range {row.min:g} to {row.max:g}")
    return rows.set_index("name")


def defaults() -> dict[str, float]:
    """{name: default value}."""
    return table()["value"].to_dict()


def ranges() -> dict[str, tuple[float, float]]:
    """{name: (lowest, highest) allowed value}."""
    return {name: (row["min"], row["max"]) for name, row in table().iterrows()}


def raw_bytes(clean_bytes, survive_share):
    """Raw text to collect and clean for ``clean_bytes`` of training corpus [byte]: ``clean / survive_share``."""
    return np.asarray(clean_bytes, float) / np.asarray(survive_share, float)


def cleaning_core_hours(raw, core_hours_per_tb):
    """CPU time to extract, filter and deduplicate ``raw`` bytes of text [core-h]."""
    return np.asarray(raw, float) / TB * np.asarray(core_hours_per_tb, float)


def debug_gpu_hours(gpus, sessions_per_month, session_hours, auto_release_hours=None):
    """GPU-hours a month of development environments hold [GPU-h/month], and the idle share of them.

    Each session holds ``gpus`` for its working hours plus the idle time before it is released; an environment
    never released (``auto_release_hours`` None) is held the whole month. Capped at the month's hours.
    """
    gpus, sessions, hours = (np.asarray(v, float) for v in (gpus, sessions_per_month, session_hours))
    busy = np.minimum(sessions * hours, HOURS_PER_MONTH)
    held = (np.full_like(busy, HOURS_PER_MONTH) if auto_release_hours is None
            else np.minimum(sessions * (hours + np.asarray(auto_release_hours, float)), HOURS_PER_MONTH))
    with np.errstate(invalid="ignore", divide="ignore"):
        idle = np.where(held > 0, 1.0 - busy / np.where(held > 0, held, 1.0), 0.0)
    return gpus * held, idle


def content_filter_usd(requests, tokens_per_request, usd_per_1000_records, chars_per_record, chars_per_token):
    """Content filtering of prompts and responses [USD]: each request's text is billed in whole records."""
    chars = np.asarray(tokens_per_request, float) * np.asarray(chars_per_token, float)
    records = np.maximum(1.0, np.ceil(chars / np.asarray(chars_per_record, float)))
    return np.asarray(requests, float) * records * np.asarray(usd_per_1000_records, float) / 1000.0


def cross_region_read_usd(read_bytes, usd_per_gb):
    """Reading a corpus from another region once [USD] (inter-region transfer is billed per GB)."""
    return np.asarray(read_bytes, float) / 1e9 * np.asarray(usd_per_gb, float)


def guard_input_tokens(prompt_tokens, response_tokens):
    """Tokens a guard model reads per request [token]: the prompt, checked alone, and the conversation with the
    response (Llama Guard classifies a prompt, and a response in its conversation)."""
    return 2.0 * np.asarray(prompt_tokens, float) + np.asarray(response_tokens, float)
