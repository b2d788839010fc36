"""Operations: logs and monitoring data, staff time."""
from __future__ import annotations

import numpy as np

DAYS_PER_MONTH = 365.25 / 12


def log_gb_ingested(gpu_days, gb_per_gpu_day, sampling_ratio):
    """Log volume sent to the observability platform [GB]: GPU-days x GB per GPU-day x the kept share (what
    CloudWatch-class services bill per GB ingested and indexed)."""
    return np.asarray(gpu_days, dtype=float) * np.asarray(gb_per_gpu_day) * np.asarray(sampling_ratio)


def log_gb_months(gpu_days, gb_per_gpu_day, retention_days, sampling_ratio):
    """Log storage [GB-month]: volume written (GPU-days x GB per GPU-day x kept share), each GB kept for
    ``retention_days``."""
    volume = np.asarray(gpu_days, dtype=float) * np.asarray(gb_per_gpu_day) * np.asarray(sampling_ratio)
    return volume * np.asarray(retention_days, dtype=float) / DAYS_PER_MONTH


def fte_months(fte, months):
    """Staff time [FTE-month]."""
    return np.asarray(fte, dtype=float) * np.asarray(months, dtype=float)
