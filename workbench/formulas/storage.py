"""Storage: corpus and checkpoint sizes and their cost on each tier.

Tiers and prices (USD per GB-month) come from the scenario; defaults from shared/reference/prices.md:
a parallel file system (Amazon FSx for Lustre, ~0.145) is ~6x an object store (S3 Standard, 0.023),
which is ~6x an archive tier (Glacier Flexible Retrieval, 0.0036). GB are 1e9 bytes, as billed.
"""
from __future__ import annotations

import numpy as np


def dataset_bytes(tokens, bytes_per_token):
    """Raw text behind ``tokens`` training tokens [byte] (~4 bytes per English BPE token)."""
    return np.asarray(tokens, dtype=float) * np.asarray(bytes_per_token, dtype=float)


def checkpoint_bytes(params, bytes_per_param=14.0):
    """One checkpoint [byte]: 14 bytes/param with optimizer state (bf16 weights, fp32 master, Adam m and v),
    2 for weights only. BLOOM 176B: 2.3 TB per full checkpoint (2.3e12 / 1.76e11 = 13 bytes/param)."""
    return np.asarray(params, dtype=float) * np.asarray(bytes_per_param, dtype=float)


def gb_months(n_bytes, months):
    """Storage volume over time [GB-month]."""
    return np.asarray(n_bytes, dtype=float) / 1e9 * np.asarray(months, dtype=float)
