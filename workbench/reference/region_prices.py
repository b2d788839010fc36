"""Storage and transfer prices by provider and region (``data/region_prices.csv``), in the currency billed.

``data/regions.csv`` names every region on record (in English and Chinese) and its country, for readers and for
the cheapest-region lever, which stays within the country the data is in.

Items: ``hot_storage`` (a parallel file system, per GB-month), ``object_storage`` and ``archive_storage`` (per
GB-month), ``egress`` (to the internet, per GB) and ``cross_region`` (from the row's region to ``to_region``, or to
any other region for ``*``, per GB: a cloud bills transfer where the bytes leave).

A plan finds its price in this order: the row of its provider and region; the provider's row without a region (a
price the provider charges everywhere); the reference row, Amazon us-east-1, which is also what a plan without a
provider or region pays. The quote's source says which it was.
"""
from __future__ import annotations

import re

import pandas as pd

from .data import DataFileError, cached, data_dir, read_table
from .prices import CONFIDENCE, CURRENCIES, Quote

ITEMS = {"hot_storage": "GB-month", "object_storage": "GB-month", "archive_storage": "GB-month", "egress": "GB",
         "cross_region": "GB"}
#: The row a plan pays where its provider and region have none (and a plan without a provider).
REFERENCE = ("aws", "us-east-1")
_REGION = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")


@cached
def region_prices() -> pd.DataFrame:
    """Every row of ``data/region_prices.csv`` (``region`` and ``to_region`` empty where they do not apply)."""
    path = data_dir() / "region_prices.csv"
    table = read_table("region_prices.csv", numeric=("price",),
                       required=("provider", "item", "price", "currency", "unit", "as_of", "confidence", "source"),
                       key=("provider", "region", "item", "to_region"),
                       choices={"item": set(ITEMS), "currency": set(CURRENCIES), "confidence": set(CONFIDENCE)},
                       normalised=("provider", "region", "to_region"), reserved={"provider": ("median",)})
    for row_number, row in enumerate(table.itertuples(index=False), start=2):
        for column in ("region", "to_region"):
            value = getattr(row, column)
            if value and value != "*" * (column == "to_region") and not _REGION.fullmatch(value):
                raise DataFileError(path, f"{value[:40]!r} is not a region id (lower-case letters, digits and dashes, "
                                    "at most 40; or empty" + (", or * for any other region" if column == "to_region"
                                                               else "") + ")", row_number, column)
        # no cloud charges more than a few USD (tens of CNY) a GB: a higher figure is a typo or another unit
        highest = 10.0 * (100.0 if row.currency == "CNY" else 1.0)
        if not 0 <= row.price <= highest:
            raise DataFileError(path, f"{row.price:g} {row.currency} is out of range (allowed: 0 to {highest:g} "
                                f"{row.currency} per {ITEMS.get(row.item, 'GB')})", row_number, "price")
        if (row.provider, row.region) == REFERENCE and row.currency != "USD":
            raise DataFileError(path, "the reference rows are in USD (the fields' help gives them in USD)",
                                row_number, "currency")
        if row.unit != ITEMS[row.item]:
            raise DataFileError(path, f"{row.unit!r}: {row.item} is priced per {ITEMS[row.item]}", row_number, "unit")
        if (row.item == "cross_region") != bool(row.to_region):
            raise DataFileError(path, "to_region is given for cross_region rows only (a region id, or * for any "
                                "other region)", row_number, "to_region")
    for item in ITEMS:
        if not ((table["provider"] == REFERENCE[0]) & (table["region"] == REFERENCE[1]) & (table["item"] == item)).any():
            raise DataFileError(path, f"missing the reference row {REFERENCE[0]} {REFERENCE[1]} {item}: a plan "
                                "without a provider pays it", column="item")
    return table


@cached
def regions() -> list[str]:
    """Every region id with a storage or transfer price."""
    table = region_prices()
    return sorted({r for r in (*table["region"], *table["to_region"]) if r and r != "*"})


def _row_quote(row, why: str = "") -> Quote:
    at = f" {row['region']}" if row["region"] else ""
    to = (f" to {'any other region' if row['to_region'] == '*' else row['to_region']}"
          if row["item"] == "cross_region" else "")
    return Quote(float(row["price"]), row["currency"],
                 f"{why}{row['provider']}{at} {row['item'].replace('_', ' ')}{to}, {row['as_of']} "
                 f"({row['confidence']}; {row['source']})")


@cached
def lookup(provider: str, region: str, item: str, to_region: str = "") -> Quote:
    """The price of ``item`` in ``provider``'s ``region`` [currency per GB-month or per GB], with its source;
    ``to_region`` for ``cross_region`` (empty: any other region)."""
    if item not in ITEMS:
        raise ValueError(f"unknown item {str(item)[:40]!r}; allowed: {', '.join(ITEMS)}")
    table = region_prices()
    rows = table[table["item"] == item]
    if item == "cross_region":
        wanted = (to_region or "*", "*")
    else:
        wanted = ("",)
    for where in ((provider, region), (provider, "")) if region else ((provider, ""),):
        for to in wanted:
            hit = rows[(rows["provider"] == where[0]) & (rows["region"] == where[1]) & (rows["to_region"] == to)]
            if len(hit):
                return _row_quote(hit.iloc[0])
    hit = rows[(rows["provider"] == REFERENCE[0]) & (rows["region"] == REFERENCE[1])].iloc[0]
    asked = f"{provider} {region}".strip() if provider not in ("", "median") else ""
    why = (f"no {item.replace('_', ' ')} price on record for {asked}: the reference row, " if asked
           else "no provider or region chosen: the reference row, ")
    return _row_quote(hit, why)


@cached
def regions_table() -> pd.DataFrame:
    """``data/regions.csv``: provider, region id, its name in English and Chinese, its country (ISO 3166 alpha-2)
    and the page that names it; every region of ``data/prices.csv`` and ``data/region_prices.csv`` has a row."""
    from .prices import prices
    path = data_dir() / "regions.csv"
    table = read_table("regions.csv", required=("provider", "region", "name", "name_zh", "country", "source"),
                       key=("provider", "region"), normalised=("provider", "region"))
    for row_number, row in enumerate(table.itertuples(index=False), start=2):
        if not _REGION.fullmatch(row.region):
            raise DataFileError(path, f"{row.region[:40]!r} is not a region id (lower-case letters, digits and dashes, "
                                "at most 40)", row_number, "region")
        if not re.fullmatch(r"[A-Z]{2}", row.country):
            raise DataFileError(path, f"{row.country[:10]!r} is not a country code (two capital letters, ISO 3166)",
                                row_number, "country")
    named = set(zip(table["provider"], table["region"]))
    transfers = region_prices()
    to = transfers[~transfers["to_region"].isin(("", "*"))]
    for name, rows in (("prices.csv", prices()), ("region_prices.csv", transfers),
                       ("region_prices.csv", pd.DataFrame({"provider": to["provider"], "region": to["to_region"]}))):
        for provider, region in sorted(set(zip(rows["provider"], rows["region"]))):
            if region and (provider, region) not in named:
                raise DataFileError(path, f"no row for {provider} {region}, a region of data/{name}: add its name "
                                    "and country", column="region")
    return table


def region_label(region: str, lang: str = "en", provider: str | None = None) -> str:
    """A region as a reader knows it: ``华北2（北京） cn-beijing`` / ``China (Beijing), cn-beijing``; the id alone when
    ``data/regions.csv`` does not name it (or names it for several providers and none is given)."""
    table = regions_table()
    rows = table[(table["region"] == region) & ((table["provider"] == provider) if provider else True)]
    if len(rows) != 1:
        return region
    name = rows.iloc[0]["name_zh" if lang == "zh" else "name"]
    return f"{name} {region}" if lang == "zh" else f"{name}, {region}"


def country(provider: str, region: str) -> str:
    """The country a provider's region is in (ISO 3166 alpha-2), empty where not on record."""
    table = regions_table()
    rows = table[(table["provider"] == provider) & (table["region"] == region)]
    return str(rows.iloc[0]["country"]) if len(rows) else ""


@cached
def provider_regions(provider: str) -> list[str]:
    """The regions of ``provider`` named in ``data/regions.csv``."""
    table = regions_table()
    return sorted(table.loc[table["provider"] == provider, "region"])
