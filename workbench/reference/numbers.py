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


def _number(value) -> float | str | None:
    """``value`` as a float; an integer beyond floats as its power of ten (text); None when it is no number."""
    try:
        x = float(value)
    except OverflowError:  # an int of 400 digits
        digits = str(abs(int(value)))
        return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:3]} × 10^{len(digits) - 1}"
    except (TypeError, ValueError, ArithmeticError):
        return None
    return x if math.isfinite(x) else None


def money(value: float, currency: str = "USD", lang: str = "en") -> str:
    """An amount in ``currency`` for a reader of ``lang`` (see the module docstring); NaN as an em dash."""
    x = _number(value)
    if x is None:
        return "—"
    if isinstance(x, str):
        return f"{x} {currency}"
    if lang != "zh":
        return f"{_decimal(x if round(x) != 0 else 0.0, 0, lang)} {currency}"  # no "-0"
    mark = _SIGNS.get(currency, "")
    suffix = "" if mark else f" {currency}"
    size = abs(x)
    # the unit is chosen on the amount as it will be shown: 99,999,999.999 is ¥1 亿, not ¥10,000 万
    if size >= 1e8 or round(size / 1e4, 2) >= 1e4:
        number, unit = _decimal(size / 1e8, 2, lang), " 亿"
    elif size >= 1e4 or round(size, 0 if size >= 100 else 2) >= 1e4:
        number, unit = _decimal(size / 1e4, 2, lang), " 万"
    else:
        number, unit = _decimal(size, 0 if size >= 100 else 2, lang), ""
    sign = "−" if x < 0 and any(c in "123456789" for c in number) else ""  # no "−¥0"
    return f"{sign}{mark}{number}{unit}{suffix}"


def plain(value: float, lang: str = "en", digits: int = 4) -> str:
    """A quantity with ``digits`` significant digits and no exponent: whole numbers grouped up to the large units
    (``97,259``; ``2.41 M`` / ``9.73 万``), small ones in fixed notation (``0.000067``)."""
    x = _number(value)
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
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


def compact(value, digits: int = 6) -> str:
    """A compact rendering a scenario field reads back: 7e9 -> ``7B``, 1418091 -> ``1.41809M``, 2810 at 3 digits
    -> ``2.81k``, 6.705e-05 -> ``0.00006705``; never an exponent (``digits``: significant digits)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    x = _number(value)
    if not isinstance(x, float):
        return x or ""  # nothing a box reads back: empty (auto)
    if x != 0:  # rounded first, so that 999.6 at 3 digits is 1k, not 1e+03 (unless rounding overflows)
        rounded = float(f"{x:.{digits}g}")
        x = rounded if math.isfinite(rounded) else x
    for size, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(x) >= size:
            if abs(x) >= 1e18:  # beyond a planning figure: the power of ten
                return _decimal(x, 0, "en").replace(" ", "")
            return f"{_general(x / size, digits)}{suffix}"
    text = f"{x:.{digits}g}"
    if "e+" in text and abs(x) >= 1e3:  # 2810 at 3 digits: 2.81k, not 2.81e+03
        return f"{_general(x / 1e3, digits)}k"
    return _general(x, digits)


def _general(x: float, digits: int) -> str:
    """``format(x, '.{digits}g')`` without its exponent: 6.705e-05 -> 0.00006705, 7e+02 at 1 digit -> 700."""
    text = f"{x:.{digits}g}"
    return _significant(x, digits) if "e" in text else text


def _significant(x: float, digits: int) -> str:
    """``x`` rounded to ``digits`` significant digits, in fixed notation, trailing zeros dropped."""
    if x == 0:
        return "0"
    decimals = digits - 1 - math.floor(math.log10(abs(x)))
    rounded = round(x, decimals)
    text = f"{rounded:.{min(max(decimals, 0), 340)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def power_of_ten(value: float, digits: int = 3) -> str:
    """A very large count as ``8.72 × 10^23``: FLOPs, which no unit of thousands makes readable."""
    x = _number(value)
    if not isinstance(x, float):
        return x or "—"
    mantissa, _, exponent = f"{x:.{max(digits, 1) - 1}e}".partition("e")
    return f"{float(mantissa):g} × 10^{int(exponent)}"

