"""GPU rental prices (``data/prices.csv``): USD per GPU-hour by SKU, provider and pricing mode.

Each row carries its date (``as_of``), its basis (``listed``, or ``derived: ...`` when a commitment price
is an on-demand price less a documented discount) and its source. The pseudo-provider ``median`` is what
a planner gets without choosing a provider: the typical on-demand price of the SKU, times the median ratio
of the pricing mode's price to on-demand over every provider and SKU that lists both.

The typical price is not the plain median of the SKU's offers: which providers list a card differs from card
to card (the A100 PCIe is offered by marketplaces, the SXM module by the large clouds too), and a plain median
would then compare marketplaces with hyperscalers, making the slower card look cheaper per unit of work. The
on-demand offers are instead split into a SKU term and a provider term by Tukey's median polish over their
logarithms (Tukey 1977, *Exploratory Data Analysis*, ch. 11), and the typical price is the SKU term: the
price of the card at a typical provider of the table. It may lie outside the card's own offers (a card listed only
by dear providers is priced as a typical one would sell it), and it borrows from the other cards' offers: a new
quote for one card can move another card's typical price.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .data import DataFileError, cached, data_dir, read_table

PRICING_MODES = ("on_demand", "reserved_1y", "reserved_3y", "spot")
MEDIAN = "median"


class PriceNotFoundError(ValueError):
    """No price on record for a SKU, provider and pricing mode."""


@cached
def prices() -> pd.DataFrame:
    """Every price row, as in the file."""
    from .catalog import gpu_ids
    # no cloud lists a GPU-hour above 1,000 USD: such a row is a typo (a node price, a missing decimal point)
    table = read_table("prices.csv", numeric=("usd_per_gpu_hour",),
                      required=("sku", "provider", "mode", "usd_per_gpu_hour", "as_of", "source"),
                      key=("sku", "provider", "mode"), bounds={"usd_per_gpu_hour": (0, 1000)},
                      choices={"mode": PRICING_MODES, "sku": set(gpu_ids())}, normalised=("provider",),
                      reserved={"provider": (MEDIAN,)})
    if "region" not in table.columns:
        raise DataFileError(data_dir() / "prices.csv", "missing column (a region, or empty)", column="region")
    for row_number, region in enumerate(table["region"].fillna(""), start=2):
        # a cloud's region id as its console writes it (us-east-1, cn-beijing, eastus), or empty where unknown
        if region and not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,39}", str(region)):
            raise DataFileError(data_dir() / "prices.csv", f"{str(region)[:40]!r} is not a region id (lower-case "
                                "letters, digits and dashes, at most 40, as the cloud writes it; or empty)",
                                row_number, "region")
    return table


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


def median_polish(log_prices: np.ndarray, sweeps: int = 50) -> tuple[float, np.ndarray, np.ndarray]:
    """Tukey's median polish of a SKU x provider table of log prices with gaps (NaN): (overall, SKU effects,
    provider effects), each effect's median zero, such that log price ~ overall + SKU + provider."""
    residual = np.array(log_prices, dtype=float)
    row, column, overall = np.zeros(residual.shape[0]), np.zeros(residual.shape[1]), 0.0
    for _ in range(sweeps):
        before = residual.copy()
        for axis, effect in ((1, row), (0, column)):
            median = np.nanmedian(residual, axis=axis)
            effect += median
            residual -= median[:, None] if axis == 1 else median[None, :]
            shift = float(np.median(effect))
            effect -= shift
            overall += shift
        if np.allclose(np.nan_to_num(residual), np.nan_to_num(before), rtol=0, atol=1e-12):
            break
    return overall, row, column


@cached
def typical_on_demand() -> dict[str, float]:
    """Typical on-demand price of each SKU with an on-demand offer: its term in a median polish of the offers
    over SKUs and providers (see the module docstring) [USD/GPU-h]."""
    offers = prices()[prices()["mode"] == "on_demand"]
    table = offers.pivot(index="sku", columns="provider", values="usd_per_gpu_hour")
    overall, row, _ = median_polish(np.log(table.to_numpy(dtype=float)))
    # to six significant digits: the polish converges to 1e-12 in logs, not to a listed price's digits (and a
    # fixed number of decimals would round a tiny price to nought)
    return {sku: float(f"{np.exp(overall + effect):.6g}") for sku, effect in zip(table.index, row)}


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
        median = typical_on_demand()[sku]
        dated = sorted(d for d in offers["as_of"] if d[:1].isdigit())
        undated = len(offers) - len(dated)
        when = f"as of {dated[0]} to {dated[-1]}" if dated else "undated"
        when += f", {undated} undated" if dated and undated else ""
        only = offers.iloc[0]
        if len(offers) == 1 and abs(median / float(only["usd_per_gpu_hour"]) - 1) < 1e-5:
            # one offer from a provider that sells nothing else: say whose, and on what basis
            source = (f"the only on-demand offer on record for {sku}: {only['provider']}, {only['as_of']} "
                      f"({only['basis']}; {only['source']})")
        else:
            low, high = offers["usd_per_gpu_hour"].min(), offers["usd_per_gpu_hour"].max()
            own = (f"its on-demand offer ({only['provider']}, {low:g} USD)" if len(offers) == 1
                   else f"its {len(offers)} on-demand offers ({low:g} to {high:g} USD)")
            source = (f"{sku} at a typical provider of the table: {own} set against the same providers' offers for "
                      f"other GPUs (median polish over "
                      f"{int((table['mode'] == 'on_demand').sum())} offers; {when}; data/prices.csv)")
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


def offers(sku: str, mode: str | None = None) -> pd.DataFrame:
    """Every offer on record for one SKU id (of one pricing ``mode``, or all), cheapest first: provider, region
    (where the offer's source names it), mode, USD per GPU-hour, date, basis and source."""
    if mode is not None:
        _check_mode(mode)
    table = prices()
    rows = table[(table["sku"] == sku) & ((table["mode"] == mode) if mode is not None else True)]
    columns = ["provider", "region", "mode", "usd_per_gpu_hour", "as_of", "basis", "source", "notes"]
    rows = rows.reindex(columns=columns).fillna({"region": "", "notes": ""})
    return rows.sort_values(["usd_per_gpu_hour", "provider", "mode"], kind="stable").reset_index(drop=True)


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
