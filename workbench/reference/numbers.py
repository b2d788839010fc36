"""Numbers as a reader writes them, in English or Chinese: never scientific notation, money with its currency.

* :func:`money`: ``12,345,679 USD`` in English; in Chinese ``¥1,234.57 万``, ``¥1.23 亿``, ``¥8,065`` (renminbi) or
  ``$1,234.57 万`` (dollars): a Chinese budget counts in 万 and 亿, not in thousands and millions.
* :func:`plain`: a quantity with a few significant digits and no exponent: ``97,259``, ``2.41 M``, ``0.00067``;
  in Chinese ``9.73 万``, ``1.8 万亿``.

Grouping and the Chinese units come from Babel's CLDR data (``babel.numbers``), as the issue asks.
"""
from __future__ import annotations

import math

from babel.numbers import format_decimal

#: Currency signs written before an amount in Chinese.
_SIGNS = {"CNY": "¥", "USD": "$"}
#: Large units, biggest first: English short scale, Chinese myriads.
_UNITS = {"en": ((1e12, "T"), (1e9, "B"), (1e6, "M")), "zh": ((1e12, "万亿"), (1e8, "亿"), (1e4, "万"))}
_LOCALES = {"en": "en_US", "zh": "zh_Hans_CN"}


#: Beyond these a number is no quantity anyone plans with: written as a power of ten (1.2 × 10^40).
_HUGE, _TINY = 1e18, 1e-12


def _decimal(value: float, digits: int, lang: str) -> str:
    """``value`` with grouping and at most ``digits`` decimals (trailing zeros dropped), never an exponent."""
    if abs(value) >= _HUGE or 0 < abs(value) < _TINY:
        mantissa, _, exponent = f"{value:.2e}".partition("e")  # from the text: 3e-324 has no float 10^-324
        return f"{float(mantissa):g} × 10^{int(exponent)}"
    pattern = "#,##0" + ("." + "#" * min(digits, 15) if digits > 0 else "")
    return format_decimal(value, format=pattern, locale=_LOCALES.get(lang, "en_US"))


def money(value: float, currency: str = "USD", lang: str = "en") -> str:
    """An amount in ``currency`` for a reader of ``lang`` (see the module docstring); NaN as an em dash."""
    if value is None or not math.isfinite(float(value)):
        return "—"
    x = float(value)
    if lang != "zh":
        return f"{_decimal(x, 0, lang)} {currency}"
    sign = "−" if x < 0 else ""
    x = abs(x)
    mark = _SIGNS.get(currency, "")
    suffix = "" if mark else f" {currency}"
    if x >= 1e8:
        return f"{sign}{mark}{_decimal(x / 1e8, 2, lang)} 亿{suffix}"
    if x >= 1e4:
        return f"{sign}{mark}{_decimal(x / 1e4, 2, lang)} 万{suffix}"
    return f"{sign}{mark}{_decimal(x, 0 if x >= 100 else 2, lang)}{suffix}"


def plain(value: float, lang: str = "en", digits: int = 4) -> str:
    """A quantity with ``digits`` significant digits and no exponent: whole numbers grouped up to the large units
    (``97,259``; ``2.41 M`` / ``9.73 万``), small ones in fixed notation (``0.000067``)."""
    if value is None or not math.isfinite(float(value)):
        return "—"
    x = float(value)
    if x == 0:
        return "0"
    size = abs(x)
    if size >= _HUGE or size < _TINY:
        return _decimal(x, 0, lang)
    for unit, name in _UNITS.get(lang, _UNITS["en"]):
        if size >= unit:
            return f"{_decimal(x / unit, _decimals(size / unit, digits), lang)} {name}"
    return _decimal(x, _decimals(size, digits), lang)


def _decimals(size: float, digits: int) -> int:
    """Decimals that keep ``digits`` significant digits of a number of magnitude ``size`` (none above them)."""
    if size == 0:
        return 0
    return max(0, digits - 1 - math.floor(math.log10(size)))
