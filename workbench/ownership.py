"""Self-hosted clusters: hardware amortised over its useful life, and electricity.

Cottier et al. 2024 (Epoch AI), "The rising costs of training frontier AI models", arXiv:2405.21015:
amortised hardware = purchase price over the useful life, plus cluster interconnect (~19 % of hardware
cost) and the rest of the server; energy = TDP x server factor x average utilisation (~0.75) x PUE
(1.1-1.25) x chip-hours x price per kWh.
"""
from __future__ import annotations


import numpy as np

from .data import cached, read_table

HOURS_PER_YEAR = 8766.0  # 365.25 x 24


@cached
def hardware_prices() -> dict[str, float]:
    """Purchase price per accelerator from ``data/hardware_prices.csv`` [USD/GPU]."""
    from .catalog import gpu_ids
    table = read_table("hardware_prices.csv", numeric=("usd_per_gpu",),
                       required=("sku", "usd_per_gpu", "as_of", "source"), key="sku",
                       bounds={"usd_per_gpu": (0, 1e7)}, choices={"sku": set(gpu_ids())})
    return dict(zip(table["sku"], table["usd_per_gpu"]))


def amortised_usd_per_gpu_hour(purchase_usd, server_share, interconnect_share, useful_life_years):
    """Hardware cost of one GPU-hour [USD/GPU-h]: purchase x (1 + server + interconnect) / life hours."""
    capex = np.asarray(purchase_usd, dtype=float) * (1.0 + np.asarray(server_share) + np.asarray(interconnect_share))
    return capex / (np.asarray(useful_life_years, dtype=float) * HOURS_PER_YEAR)


def energy_kwh(gpu_hours, tdp_w, server_power_factor, power_utilisation, pue):
    """Electricity drawn from the grid for ``gpu_hours`` [kWh]: TDP x server factor x utilisation x PUE x h."""
    return (np.asarray(gpu_hours, dtype=float) * np.asarray(tdp_w, dtype=float) / 1000.0
            * np.asarray(server_power_factor) * np.asarray(power_utilisation) * np.asarray(pue))
