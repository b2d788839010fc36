"""GPU rental prices (``data/prices.csv``): USD per GPU-hour by SKU, provider and pricing mode.

Each row carries its date (``as_of``), its basis (``listed``, or ``derived: ...`` when a commitment price
is an on-demand price less a documented discount) and its source. The pseudo-provider ``median`` is what
a planner gets without choosing a provider: the median on-demand offer for the SKU, times the median ratio
of the pricing mode's price to on-demand over every provider and SKU that lists both.
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from .data import cached, read_table

PRICING_MODES = ("on_demand", "reserved_1y", "reserved_3y", "spot")
MEDIAN = "median"


class PriceNotFoundError(ValueError):
    """No price on record for a SKU, provider and pricing mode."""


@cached
def prices() -> pd.DataFrame:
    """Every price row, as in the file."""
    from .catalog import gpu_ids
    # no cloud lists a GPU-hour above 1,000 USD: such a row is a typo (a node price, a missing decimal point)
    return read_table("prices.csv", numeric=("usd_per_gpu_hour",),
                      required=("sku", "provider", "mode", "usd_per_gpu_hour", "as_of", "source"),
                      key=("sku", "provider", "mode"), bounds={"usd_per_gpu_hour": (0, 1000)},
                      choices={"mode": PRICING_MODES, "sku": set(gpu_ids())}, normalised=("provider",),
                      reserved={"provider": (MEDIAN,)})


def _check_mode(mode) -> str:
    if not isinstance(mode, str) or mode not in PRICING_MODES:
        raise ValueError(f"unknown pricing mode {str(mode)[:40]!r}; allowed: {', '.join(PRICING_MODES)}")
    return mode


def providers() -> list[str]:
    """Provider names in the price table, plus ``median``."""
    return [MEDIAN, *sorted(prices()["provider"].unique())]


def providers_for(sku: str, mode: str = "on_demand") -> list[str]:
    """The providers with a ``mode`` price for ``sku`` (``median`` first when any provider lists it on demand)."""
    _check_mode(mode)
    rows = prices()[prices()["sku"] == sku]
    listed = sorted(rows.loc[rows["mode"] == mode, "provider"].unique())
    return [MEDIAN, *listed] if (rows["mode"] == "on_demand").any() else listed


@cached
def mode_ratios() -> dict[str, float]:
    """Median price of each pricing mode relative to on-demand, over (provider, SKU) pairs listing both."""
    table = prices().pivot(index=["sku", "provider"], columns="mode", values="usd_per_gpu_hour")
    return {mode: 1.0 if mode == "on_demand" else float((table[mode] / table["on_demand"]).median())
            for mode in PRICING_MODES}


@cached
def lookup(sku: str, mode: str = "on_demand", provider: str = MEDIAN) -> tuple[float, str]:
    """(USD per GPU-hour, a one-line source) for one SKU id, pricing mode and provider [USD/GPU-h]."""
    from .catalog import gpu_ids
    _check_mode(mode)
    if sku not in gpu_ids():
        raise PriceNotFoundError(f"no price on record for {str(sku)[:40]!r}: not a catalog id (see `workbench gpus`)")
    table = prices()
    rows = table[table["sku"] == sku]
    if provider == MEDIAN:
        offers = rows[rows["mode"] == "on_demand"]
        if offers.empty:
            raise PriceNotFoundError(f"no price on record for {sku}; set price_per_gpu_hour")
        median = float(offers["usd_per_gpu_hour"].median())
        dated = sorted(d for d in offers["as_of"] if d[:1].isdigit())
        undated = len(offers) - len(dated)
        when = f"as of {dated[0]} to {dated[-1]}" if dated else "undated"
        when += f", {undated} undated" if dated and undated else ""
        source = f"median of {len(offers)} on-demand offers for {sku} ({when}; data/prices.csv)"
        if mode != "on_demand":
            ratio = mode_ratios()[mode]
            source += f" x {ratio:.3f} (median {mode}/on_demand ratio across providers)"
            median *= ratio
        return median, source
    row = rows[(rows["provider"] == provider) & (rows["mode"] == mode)]
    if row.empty:
        have = ", ".join(f"{p}/{m}" for p, m in zip(rows["provider"], rows["mode"])) or "none"
        raise PriceNotFoundError(f"no {mode} price from {provider!r} for {sku} (on record: {have}); "
                                 "set price_per_gpu_hour or provider=median")
    row = row.iloc[0]
    return float(row["usd_per_gpu_hour"]), f"{provider} {mode}, {row['as_of']} ({row['basis']}; {row['source']})"


def price_per_gpu_hour(sku, mode="on_demand", provider=MEDIAN):
    """Vectorised :func:`lookup`: arrays of prices [USD/GPU-h] and sources, one per element."""
    sku, mode, provider = np.broadcast_arrays(*(np.asarray(x, dtype=object) for x in (sku, mode, provider)))
    usd = np.empty(sku.shape, dtype=float)
    source = np.empty(sku.shape, dtype=object)
    keys = np.stack([sku.ravel(), mode.ravel(), provider.ravel()], axis=1) if sku.size else np.empty((0, 3))
    for key in {tuple(k) for k in keys}:
        where = (sku == key[0]) & (mode == key[1]) & (provider == key[2])
        usd[where], source[where] = lookup(*key)
    return usd, source


@cached
def api_prices() -> pd.DataFrame:
    """``data/api_prices.csv``: public per-token prices of open-weight models [USD per million tokens], with the
    date and source of each, for comparing serving estimates with the market (``benchmarks/serving.py``)."""
    return read_table("api_prices.csv", numeric=("input_usd_per_million", "output_usd_per_million"),
                      required=("model", "provider", "weights", "input_usd_per_million", "output_usd_per_million",
                                "date", "source"),
                      bounds={"input_usd_per_million": (0, 1000), "output_usd_per_million": (0, 1000)},
                      choices={"weights": {"bf16", "fp16", "fp8", "int8", "int4", "unknown"}})
