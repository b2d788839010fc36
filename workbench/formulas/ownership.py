"""Self-hosted clusters: hardware amortised over its useful life, and electricity.

Cottier et al. 2024 (Epoch AI), "The rising costs of training frontier AI models", arXiv:2405.21015:
amortised hardware = purchase price over the useful life, plus cluster interconnect (~19 % of hardware
cost) and the rest of the server; energy = TDP x server factor x average utilisation (~0.75) x PUE
(1.1-1.25) x chip-hours x price per kWh.
"""
from __future__ import annotations


import numpy as np

from ..reference.data import DataFileError, cached, data_dir, read_table

HOURS_PER_YEAR = 8766.0  # 365.25 x 24


@cached
def hardware_prices() -> dict[str, tuple[float, str]]:
    """Purchase price per accelerator from ``data/hardware_prices.csv``: (price, currency billed) [currency/GPU]."""
    from ..reference.catalog import gpu_ids
    from ..reference.prices import CURRENCIES
    table = read_table("hardware_prices.csv", numeric=("price_per_gpu",),
                       required=("sku", "price_per_gpu", "currency", "as_of", "source"), key="sku",
                       bounds={"price_per_gpu": (0, 1e8)}, choices={"sku": set(gpu_ids()), "currency": set(CURRENCIES)})
    # an accelerator costs from a few hundred to a few hundred thousand dollars: outside, a typo or another unit
    bounds = {"USD": (100.0, 1e6), "CNY": (700.0, 7e6)}
    for row_number, (price, currency) in enumerate(zip(table["price_per_gpu"], table["currency"]), start=2):
        low, high = bounds[currency]
        if not low <= price <= high:
            raise DataFileError(data_dir() / "hardware_prices.csv", f"{price:g} {currency} is out of range (allowed: "
                                f"{low:,.0f} to {high:,.0f} {currency} per accelerator)", row_number, "price_per_gpu")
    return {sku: (price, currency) for sku, price, currency in zip(table["sku"], table["price_per_gpu"],
                                                                   table["currency"])}


def capex_usd_per_gpu(purchase_usd, server_share, interconnect_share):
    """Cash paid for one GPU's share of the cluster [USD/GPU]: purchase x (1 + server + interconnect)."""
    return np.asarray(purchase_usd, dtype=float) * (1.0 + np.asarray(server_share) + np.asarray(interconnect_share))


def life_hours(useful_life_years):
    """Hours owned hardware is held [h]: its useful life in whole months (a plan pays by the month; 2.55 years is
    31 months), each 8766 / 12 hours."""
    return np.maximum(1.0, np.round(np.asarray(useful_life_years, dtype=float) * 12.0)) * HOURS_PER_YEAR / 12.0


def amortised_usd_per_gpu_hour(purchase_usd, server_share, interconnect_share, useful_life_years,
                               residual_value_share=0.0):
    """Hardware cost of one GPU-hour [USD/GPU-h]: straight-line depreciation of purchase x (1 + server +
    interconnect) less its resale value at the end of the life, over the life's hours (whole months)."""
    capex = capex_usd_per_gpu(purchase_usd, server_share, interconnect_share)
    return capex * (1.0 - np.asarray(residual_value_share, dtype=float)) / life_hours(useful_life_years)


def break_even_months(capex_usd, residual_value_share, rent_usd_per_month, running_usd_per_month):
    """Months of use after which owning costs less than renting the same hours [month]: the purchase less its
    resale value, over what a month of renting costs beyond a month of running the owned hardware (power,
    operations). Infinite where renting a month costs no more than running one."""
    saving = np.asarray(rent_usd_per_month, dtype=float) - np.asarray(running_usd_per_month, dtype=float)
    net = np.asarray(capex_usd, dtype=float) * (1.0 - np.asarray(residual_value_share, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(saving > 0, net / np.where(saving > 0, saving, 1.0), np.inf)


def energy_kwh(gpu_hours, tdp_w, server_power_factor, power_utilisation, pue):
    """Electricity drawn from the grid for ``gpu_hours`` [kWh]: TDP x server factor x utilisation x PUE x h."""
    return (np.asarray(gpu_hours, dtype=float) * np.asarray(tdp_w, dtype=float) / 1000.0
            * np.asarray(server_power_factor) * np.asarray(power_utilisation) * np.asarray(pue))
