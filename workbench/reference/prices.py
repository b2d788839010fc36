"""GPU rental prices (``data/prices.csv``): the price of a GPU-hour by SKU, provider, region and pricing mode,
in the currency the provider bills (USD, or CNY for the Chinese clouds).

Each row carries its date (``as_of``), its basis (``listed``, or ``derived: ...`` when a commitment price is an
on-demand price less a documented discount, or a monthly rent of a whole server divided into GPU-hours), its confidence (``verified`` on the provider's page, ``transcribed``
from a dated copy of it, ``undated`` when the copy's date is unknown, ``assumed`` when it is not an offer) and
its source. A price in CNY stays in CNY: it is converted only where a plan adds it to amounts in another currency,
at the plan's own rate, and the conversion is stated.

A named provider without a region pays its cheapest region's price for the GPU (the region a team would pick). The
pseudo-provider ``median`` is what a planner gets without choosing a provider: the typical on-demand price of the
SKU, times the median ratio of the pricing mode's price to on-demand over every provider and SKU that lists both.
A mode no provider lists beside an on-demand price (``monthly``, so far) has no such ratio and no typical price:
a plan renting by the month names a provider that rents so.

The typical price is not the plain median of the SKU's offers: which providers list a card differs from card
to card (the A100 PCIe is offered by marketplaces, the SXM module by the large clouds too), and a plain median
would then compare marketplaces with hyperscalers, making the slower card look cheaper per unit of work. The
on-demand offers in USD are instead split into a SKU term and a provider term by Tukey's median polish over their
logarithms (Tukey 1977, *Exploratory Data Analysis*, ch. 11), and the typical price is the SKU term: the
price of the card at a typical provider of the table. It may lie outside the card's own offers (a card listed only
by dear providers is priced as a typical one would sell it), and it borrows from the other cards' offers: a new
quote for one card can move another card's typical price. A card offered only in CNY gets the median of its
providers' prices, in CNY.
"""
from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
import pandas as pd

from .data import DataFileError, cached, data_dir, read_table

PRICING_MODES = ("on_demand", "reserved_1y", "reserved_3y", "monthly", "spot")
#: Hours in the average month a monthly rental (包月) is billed for: 8766 / 12 [h]. A monthly rent per server is
#: kept in the table as its price per GPU-hour over such a month (the row's basis shows the division).
HOURS_PER_MONTH = 8766.0 / 12
MEDIAN = "median"
#: Currencies a price may be billed in, and the most a GPU-hour costs in each (a higher figure is a typo: a
#: node's price, a missing decimal point).
CURRENCIES = {"USD": 1000.0, "CNY": 10000.0}
CONFIDENCE = ("verified", "transcribed", "undated", "assumed")


class PriceNotFoundError(ValueError):
    """No price on record for a SKU, provider, region and pricing mode."""


class Quote(NamedTuple):
    """A ``price`` in its ``currency`` [currency per GPU-hour, GB-month or GB], a one-line ``source``, and the
    ``region`` it is charged in (empty where the row names none)."""
    price: float
    currency: str
    source: str
    region: str = ""
    as_of: str = ""  # a single row's date and confidence; empty for a price drawn from several
    confidence: str = ""
    gpus_per_instance: float = float("nan")  # the row's instance or server (a monthly rent is quoted per server)


def instance_month(price_per_gpu_hour, gpus_per_instance) -> tuple[float, int]:
    """A monthly rent as quoted: (the price of a month of 730.5 h for the instance, its GPUs) [currency/month];
    an instance of unknown size (NaN or 0) is one GPU."""
    gpus = int(gpus_per_instance) if gpus_per_instance == gpus_per_instance and gpus_per_instance > 0 else 1
    return float(price_per_gpu_hour) * HOURS_PER_MONTH * gpus, gpus


@cached
def prices() -> pd.DataFrame:
    """Every price row, as in the file (``region`` empty where the offer names none)."""
    from .catalog import gpu_ids
    path = data_dir() / "prices.csv"
    table = read_table("prices.csv", numeric=("price_per_gpu_hour", "gpus_per_instance"),
                      required=("sku", "provider", "mode", "price_per_gpu_hour", "currency", "as_of", "confidence",
                                "source"),
                      key=("sku", "provider", "region", "mode"), bounds={"price_per_gpu_hour": (0, 10000),
                                                                        "gpus_per_instance": (0, 72)},
                      choices={"mode": PRICING_MODES, "sku": set(gpu_ids()), "currency": set(CURRENCIES),
                               "confidence": set(CONFIDENCE)},
                      normalised=("provider",), reserved={"provider": (MEDIAN,)})
    for row_number, (region, price, currency) in enumerate(
            zip(table["region"].fillna(""), table["price_per_gpu_hour"], table["currency"]), start=2):
        # a cloud's region id as its console writes it (us-east-1, cn-beijing, eastus), or empty where unknown
        if region and not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,39}", str(region)):
            raise DataFileError(path, f"{str(region)[:40]!r} is not a region id (lower-case letters, digits and "
                                "dashes, at most 40, as the cloud writes it; or empty)", row_number, "region")
        if price > CURRENCIES[currency]:
            raise DataFileError(path, f"{price:g} {currency} is out of range: no cloud lists a GPU-hour above "
                                f"{CURRENCIES[currency]:,.0f} {currency} (a node's price?)", row_number,
                                "price_per_gpu_hour")
    for row_number, (mode, basis, price, currency, gpus) in enumerate(zip(
            table["mode"], table["basis"].fillna(""), table["price_per_gpu_hour"], table["currency"],
            table["gpus_per_instance"]), start=2):
        if mode != "monthly":
            continue
        # a monthly rent is quoted per server and month: the row keeps it in its basis and its price per GPU-hour
        # must give it back (a month's rent typed as the hourly price would multiply the bill by 730)
        quoted = re.match(r"listed: ([0-9]{1,3}(?:,[0-9]{3})*(?:\.[0-9]+)?|[0-9]{1,9}(?:\.[0-9]+)?) (CNY|USD) per "
                          r"([1-9][0-9]?)-GPU server-month\b", str(basis))
        if not quoted or not 0 < float(quoted[1].replace(",", "")) < 1e9:
            raise DataFileError(path, f"{str(basis)[:60]!r} does not quote the monthly rent (allowed: 'listed: 70,000 "
                                "CNY per 8-GPU server-month (...) / 8 GPUs / 730.5 h', a rent above 0 and a server "
                                "of 1 to 99 GPUs)", row_number, "basis")
        rent, gpus_quoted = float(quoted[1].replace(",", "")), int(quoted[3])
        if quoted[2] != currency:
            raise DataFileError(path, f"the basis quotes {quoted[2]}; the row says {currency}", row_number, "currency")
        if not np.isfinite(gpus) or int(gpus) != gpus_quoted:
            raise DataFileError(path, f"the basis quotes a {gpus_quoted}-GPU server; the row says {gpus:g} GPUs per "
                                "instance", row_number, "gpus_per_instance")
        if abs(price * HOURS_PER_MONTH * gpus_quoted / rent - 1) > 1e-5:
            raise DataFileError(path, f"{price:g} {currency}/GPU-h is not the quoted rent {rent:,.0f} {currency} / "
                                f"{gpus_quoted} GPUs / {HOURS_PER_MONTH:g} h = {rent / gpus_quoted / HOURS_PER_MONTH:.8g}",
                                row_number, "price_per_gpu_hour")
    for row_number, count in enumerate(table["gpus_per_instance"], start=2):
        if np.isfinite(count) and count != int(count):
            raise DataFileError(path, f"{count:g} is not a whole number of GPUs", row_number, "gpus_per_instance")
    for (provider, sku), rows in table.groupby(["provider", "sku"]):
        if rows["currency"].nunique() > 1:
            raise DataFileError(path, f"{provider} bills {sku} in {' and '.join(sorted(rows['currency'].unique()))}: "
                                "one provider bills one currency", column="currency")
    for (provider, sku, mode), rows in table.fillna({"region": ""}).groupby(["provider", "sku", "mode"]):
        if len(rows) > 1 and (rows["region"] == "").any():
            # a plan naming no region would pay the row without one, a plan naming one its own: two prices at once
            raise DataFileError(path, f"{provider} lists {sku} {mode} both with and without a region: give every "
                                "row its region, or keep one row without", int(rows.index[0]) + 2, "region")
    return table.fillna({"region": ""})


def _check_mode(mode) -> str:
    if not isinstance(mode, str) or mode not in PRICING_MODES:
        raise ValueError(f"unknown pricing mode {str(mode)[:40]!r}; allowed: {', '.join(PRICING_MODES)}")
    return mode


def convert(amount, currency, to: str, cny_per_usd):
    """``amount`` in ``currency`` expressed in ``to`` (USD or CNY) at ``cny_per_usd`` [CNY/USD]; arrays broadcast,
    and an amount already in ``to`` is returned as it is (no round trip)."""
    amount, currency, rate = np.broadcast_arrays(np.asarray(amount, dtype=float), np.asarray(currency, dtype=object),
                                                 np.asarray(cny_per_usd, dtype=float))
    if to == "USD":
        out = np.where(currency == "CNY", amount / rate, amount)
    elif to == "CNY":
        out = np.where(currency == "USD", amount * rate, amount)
    else:
        raise ValueError(f"currency {str(to)[:10]!r}: allowed USD or CNY")
    return out.item() if out.ndim == 0 else out


@cached
def providers() -> list[str]:
    """Provider names in the price table, plus ``median``."""
    return [MEDIAN, *sorted(prices()["provider"].unique())]


def providers_for(sku: str, mode: str = "on_demand") -> list[str]:
    """The providers with a ``mode`` price for ``sku`` (``median`` first when any provider lists it on demand)."""
    _check_mode(mode)
    rows = prices()[prices()["sku"] == sku]
    listed = sorted(rows.loc[rows["mode"] == mode, "provider"].unique())
    typical = (rows["mode"] == "on_demand").any() and np.isfinite(mode_ratios()[mode])
    return [MEDIAN, *listed] if typical else listed


def modes_for(sku: str, provider: str) -> list[str]:
    """The pricing modes in which a named ``provider`` lists ``sku`` (any region), in :data:`PRICING_MODES` order."""
    table = prices()
    listed = set(table.loc[(table["sku"] == sku) & (table["provider"] == provider), "mode"])
    return [mode for mode in PRICING_MODES if mode in listed]


def usual_mode(sku: str, provider: str, mode: str) -> str:
    """The pricing mode a plan naming ``provider`` for ``sku`` is priced in: ``mode``, unless the provider rents the
    GPU neither so nor by the hour (a Chinese reseller renting whole servers by the month): then its first mode on
    record. The app and the command line take a provider so when the mode was not chosen."""
    if provider == MEDIAN or mode == "self_hosted":
        return mode
    modes = modes_for(sku, provider)
    return modes[0] if modes and mode not in modes and "on_demand" not in modes else mode


@cached
def regions() -> list[str]:
    """Every region id on record, sorted."""
    return sorted(r for r in prices()["region"].unique() if r)


def regions_for(sku: str, mode: str, provider: str) -> list[str]:
    """The regions where ``provider`` lists a ``mode`` price for ``sku`` (empty: it lists one without a region)."""
    table = prices()
    rows = table[(table["sku"] == sku) & (table["mode"] == mode) & (table["provider"] == provider)]
    return sorted(r for r in rows["region"].unique() if r)


@cached
def mode_ratios() -> dict[str, float]:
    """Median price of each pricing mode relative to on-demand, over (provider, region, SKU) offers listing both."""
    table = prices().pivot(index=["sku", "provider", "region"], columns="mode", values="price_per_gpu_hour")
    table = table.reindex(columns=list(PRICING_MODES))
    # NaN for a mode no offer lists beside an on-demand price: no typical price in that mode
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


def _provider_prices(mode: str, currency: str) -> pd.DataFrame:
    """One price per (SKU, provider) of a mode and currency: the provider's cheapest region, as a plan naming the
    provider without a region pays."""
    table = prices()
    rows = table[(table["mode"] == mode) & (table["currency"] == currency)]
    return rows.groupby(["sku", "provider"], as_index=False)["price_per_gpu_hour"].min()


@cached
def typical_on_demand() -> dict[str, float]:
    """Typical on-demand price of each SKU with an on-demand offer in USD: its term in a median polish of the
    offers over SKUs and providers (see the module docstring) [USD/GPU-h]."""
    offers = _provider_prices("on_demand", "USD")
    table = offers.pivot(index="sku", columns="provider", values="price_per_gpu_hour")
    overall, row, _ = median_polish(np.log(table.to_numpy(dtype=float)))
    # to six significant digits: the polish converges to 1e-12 in logs, not to a listed price's digits (and a
    # fixed number of decimals would round a tiny price to nought)
    return {sku: float(f"{np.exp(overall + effect):.6g}") for sku, effect in zip(table.index, row)}


def _when(dates) -> str:
    dated = sorted(d for d in dates if d[:1].isdigit())
    undated = len(dates) - len(dated)
    when = f"as of {dated[0]} to {dated[-1]}" if dated else "undated"
    return when + (f", {undated} undated" if dated and undated else "")


def _typical(sku: str, rows: pd.DataFrame) -> Quote:
    """The ``median`` provider's on-demand quote for ``sku`` (see the module docstring)."""
    table = prices()
    offers = rows[rows["mode"] == "on_demand"]
    in_usd = offers[offers["currency"] == "USD"]
    if in_usd.empty:  # offered only in another currency: the median of its providers, in that currency
        currency = offers["currency"].iloc[0]
        per_provider = offers.groupby("provider")["price_per_gpu_hour"].min()
        price = float(f"{per_provider.median():.6g}")
        return Quote(price, currency, f"{sku}: median of {len(per_provider)} provider(s) offering it only in "
                                      f"{currency} ({', '.join(per_provider.index)}; {_when(list(offers['as_of']))}; "
                                      "data/prices.csv)")
    median = typical_on_demand()[sku]
    own = _provider_prices("on_demand", "USD")
    own = own[own["sku"] == sku]  # each provider's cheapest region, as the polish takes them
    if len(own) == 1:
        only = in_usd.sort_values("price_per_gpu_hour").iloc[0]
        if abs(median / float(only["price_per_gpu_hour"]) - 1) < 1e-5:
            # one offer from a provider that sells nothing else: say whose, and on what basis
            return Quote(median, "USD", f"the only on-demand offer on record for {sku}: {only['provider']}, "
                                        f"{only['as_of']} ({only['basis']}; {only['source']})")
    low, high = own["price_per_gpu_hour"].min(), own["price_per_gpu_hour"].max()
    first = own.iloc[0]
    mine = (f"its on-demand offer ({first['provider']}, {low:g} USD)" if len(own) == 1
            else f"the on-demand offers of its {len(own)} providers ({low:g} to {high:g} USD, each at its cheapest "
                 "region)")
    polished = len(_provider_prices("on_demand", "USD"))
    return Quote(median, "USD", f"{sku} at a typical provider of the table: {mine} set against the same providers' "
                                f"offers for other GPUs (median polish over {polished} offers in USD; "
                                f"{_when(list(in_usd['as_of']))}; data/prices.csv)")


@cached
def lookup(sku: str, mode: str = "on_demand", provider: str = MEDIAN, region: str = "") -> Quote:
    """The price of a GPU-hour of one SKU id, pricing mode, provider and region (empty: the median of the
    provider's cheapest region), in the currency the provider bills [currency/GPU-h], with a one-line source."""
    from .catalog import gpu_ids
    _check_mode(mode)
    if sku not in gpu_ids():
        raise PriceNotFoundError(f"no price on record for {str(sku)[:40]!r}: not a catalog id (see `workbench gpus`)")
    table = prices()
    rows = table[table["sku"] == sku]
    if provider == MEDIAN:
        if region:
            raise PriceNotFoundError(f"region {str(region)[:40]!r} needs a provider: the typical price is no "
                                     "region's (choose a provider that sells in it)")
        if not (rows["mode"] == "on_demand").any():
            raise PriceNotFoundError(f"no price on record for {sku}; set price_per_gpu_hour")
        quote = _typical(sku, rows)
        if mode == "on_demand":
            return quote
        ratio = mode_ratios()[mode]
        if not np.isfinite(ratio):
            renting = sorted(rows.loc[rows["mode"] == mode, "provider"].unique())
            raise PriceNotFoundError(f"no typical {mode} price: no provider lists one beside its on-demand price; "
                                     f"choose a provider that rents {sku} {mode} (on record: "
                                     f"{', '.join(renting) or 'none'}) or set price_per_gpu_hour")
        return Quote(quote.price * ratio, quote.currency,
                     quote.source + f" x {ratio:.3f} (median {mode}/on_demand ratio across providers)")
    offered = rows[(rows["provider"] == provider) & (rows["mode"] == mode)]
    if offered.empty:
        have = ", ".join(sorted({f"{p}/{m}" for p, m in zip(rows["provider"], rows["mode"])})) or "none"
        typical = (rows["mode"] == "on_demand").any() and np.isfinite(mode_ratios()[mode])
        raise PriceNotFoundError(f"no {mode} price from {str(provider)[:40]!r} for {sku} (on record: {have}); "
                                 + ("set price_per_gpu_hour or provider=median" if typical else
                                    "set price_per_gpu_hour"))
    if region:
        row = offered[offered["region"] == region]
        if row.empty:
            where = ", ".join(sorted(offered["region"].replace("", "(no region)"))) or "none"
            raise PriceNotFoundError(f"no {mode} price from {provider} for {sku} in region {str(region)[:40]!r} "
                                     f"(its regions on record: {where})")
        offered = row
    # no region chosen: the provider's cheapest region for the GPU, the one a team would pick (ties: by name)
    ordered = offered.sort_values(["price_per_gpu_hour", "region"], kind="stable")
    row = ordered.iloc[0]
    at = f" in {row['region']}" if row["region"] else ""
    if not region and len(offered) > 1:
        at += f" (its cheapest of {len(offered)} regions on record; choose one with region)"
    instance = f"; {row['instance_type']}" if row.get("instance_type") else ""
    return Quote(float(row["price_per_gpu_hour"]), row["currency"],
                 f"{provider} {mode}{at}, {row['as_of']} ({row['basis']}; {row['confidence']}; {row['source']}{instance})",
                 row["region"], row["as_of"], row["confidence"], float(row["gpus_per_instance"]))


def offers(sku: str, mode: str | None = None, cny_per_usd: float = 7.1) -> pd.DataFrame:
    """Every offer on record for one SKU id (of one pricing ``mode``, or all), cheapest first at ``cny_per_usd``:
    provider, region (where the offer's source names it), instance type, mode, price and its currency, USD per
    GPU-hour at that rate, date, basis, confidence and source."""
    if mode is not None:
        _check_mode(mode)
    table = prices()
    rows = table[(table["sku"] == sku) & ((table["mode"] == mode) if mode is not None else True)]
    columns = ["provider", "region", "instance_type", "gpus_per_instance", "mode", "price_per_gpu_hour", "currency",
               "as_of", "basis", "confidence", "source", "notes"]
    rows = rows.reindex(columns=columns).fillna({"instance_type": "", "notes": ""})
    rows.insert(7, "usd_per_gpu_hour", convert(rows["price_per_gpu_hour"].to_numpy(), rows["currency"].to_numpy(),
                                               "USD", cny_per_usd) if len(rows) else [])
    return rows.sort_values(["usd_per_gpu_hour", "provider", "region", "mode"], kind="stable").reset_index(drop=True)


def price_per_gpu_hour(sku, mode="on_demand", provider=MEDIAN, region="", cny_per_usd=7.1):
    """Vectorised :func:`lookup`, in USD at the plan's ``cny_per_usd`` [CNY/USD]: arrays of prices [USD/GPU-h],
    sources (a converted price says so), the currency each price is billed in and the region it is charged in."""
    sku, mode, provider, region = np.broadcast_arrays(
        *(np.asarray(x, dtype=object) for x in (sku, mode, provider, region)))
    rate = np.broadcast_to(np.asarray(cny_per_usd, dtype=float), sku.shape)
    usd = np.empty(sku.shape, dtype=float)
    source = np.empty(sku.shape, dtype=object)
    currency = np.empty(sku.shape, dtype=object)
    charged_in = np.empty(sku.shape, dtype=object)
    keys = np.stack([sku.ravel(), mode.ravel(), provider.ravel(), region.ravel()], axis=1) if sku.size \
        else np.empty((0, 4))
    for key in {tuple(k) for k in keys}:
        where = (sku == key[0]) & (mode == key[1]) & (provider == key[2]) & (region == key[3])
        quote = lookup(*key)
        currency[where], charged_in[where] = quote.currency, quote.region
        if quote.currency == "USD":
            usd[where], source[where] = quote.price, quote.source
        else:  # billed in CNY: added to the plan's USD amounts at the plan's rate, and said so
            usd[where] = quote.price / rate[where]
            texts = {r: f"billed {quote.price:,.4g} {quote.currency}/GPU-h (added to USD amounts at the plan's {r:g} "
                        f"{quote.currency}/USD): {quote.source}" for r in np.unique(rate[where])}
            source[where] = [texts[r] for r in rate[where]]  # one text per distinct rate, not per element
    return usd, source, currency, charged_in


@cached
def api_prices() -> pd.DataFrame:
    """``data/api_prices.csv``: public per-token prices of open-weight models [USD per million tokens], with the
    date and source of each, for comparing serving estimates with the market (``benchmarks/serving.py``)."""
    return read_table("api_prices.csv", numeric=("input_usd_per_million", "output_usd_per_million"),
                      required=("model", "provider", "weights", "input_usd_per_million", "output_usd_per_million",
                                "date", "source"),
                      bounds={"input_usd_per_million": (0, 1000), "output_usd_per_million": (0, 1000)},
                      choices={"weights": {"bf16", "fp16", "fp8", "int8", "int4", "unknown"}})
