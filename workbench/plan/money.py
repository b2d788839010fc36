"""Money as people type it: ``3M``, ``3,000,000``, ``$3M``, ``3 million``, ``USD 3m``, ``300万``, ``3亿``, ``¥2,000万``.

:func:`parse_money` reads one amount and its currency; an amount in renminbi (``¥``, ``CNY``, ``RMB``, ``元``) is
converted to USD at the plan's rate, and the conversion is stated. What could be read two ways is refused with how
to write it: ``1,5M`` (a decimal comma, or a thousands separator in the wrong place), ``3,00``, ``1.500.000``.
A comma groups thousands only in groups of exactly three digits (``3,000,000``, ``2,000万``); a point is always the
decimal mark (``1.500`` is one and a half: prices per hour have three decimals). Full-width characters (``３００万``)
read as their ASCII forms.
"""
from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

#: Multipliers a person writes after an amount, lower-cased (``m`` is a million in money, never a milli).
WORDS = {"": 1.0, "k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "mm": 1e6, "million": 1e6, "millions": 1e6,
         "b": 1e9, "bn": 1e9, "billion": 1e9, "billions": 1e9,
         "千": 1e3, "万": 1e4, "十万": 1e5, "百万": 1e6, "千万": 1e7, "亿": 1e8, "万亿": 1e12}
#: Currency marks and the currency they mean.
CURRENCIES = {"$": "USD", "us$": "USD", "usd": "USD", "dollars": "USD", "dollar": "USD", "美元": "USD",
              "¥": "CNY", "￥": "CNY", "cny": "CNY", "rmb": "CNY", "元": "CNY", "人民币": "CNY"}
HOW_TO_WRITE = "3000000, 3,000,000, 3M, $3M, 3 million, 300万, 3亿 or ¥2,000万 (a point for decimals: 1.5M)"
HOW_TO_WRITE_ZH = "3000000、3,000,000、3M、$3M、3 million、300万、3亿 或 ¥2,000万（小数用点：1.5M）"

_MARK = r"(us\$|\$|¥|￥|usd|cny|rmb|人民币|美元)"
_NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?|\.[0-9]+)"
_WORD = r"(thousand|millions?|billions?|mn|mm|bn|k|m|b|万亿|千万|百万|十万|千|万|亿)?"
_TAIL = r"(usd|dollars?|cny|rmb|元|美元|人民币)?"
_MONEY = re.compile(rf"^{_MARK}?\s*{_NUMBER}\s*{_WORD}\s*{_TAIL}$", re.IGNORECASE)
_GROUPED = re.compile(r"^[0-9]{1,3}(,[0-9]{3})+(\.[0-9]+)?$")


class MoneyError(ValueError):
    """A typed amount that cannot be read as one amount of money: ``problem`` says why (its Chinese:
    ``workbench.reference.i18n.problem_zh``)."""

    def __init__(self, text, problem: str):
        self.text, self.problem = text, problem
        shown = repr(text) if len(repr(text)) <= 40 else f"{repr(text)[:37]}..."
        super().__init__(f"{shown} {problem}; write it as {HOW_TO_WRITE}")


@dataclass(frozen=True)
class Money:
    """An amount read from text: ``amount`` in ``currency``, and ``usd`` at ``cny_per_usd`` when in CNY."""
    amount: float
    currency: str
    usd: float
    cny_per_usd: float

    @property
    def note(self) -> str:
        """The conversion, when there was one (``¥20,000,000 at 7.1 CNY/USD = 2,816,901 USD``), else empty."""
        if self.currency == "USD":
            return ""
        return f"¥{self.amount:,.0f} at {self.cny_per_usd:g} CNY/USD = {self.usd:,.0f} USD"


def parse_money(text, currency: str = "USD", cny_per_usd: float = 7.1) -> Money:
    """Read ``text`` as an amount of money [USD after conversion].

    A number passes as it is, in ``currency`` (the plan's or display currency: ``USD`` or ``CNY``); text may carry
    its own currency mark, a multiplier word (k, M, million, bn, 万, 亿 ...) and thousands grouped by commas in
    threes. Refused, with how to write it: an empty text, a negative amount, a decimal comma or a misplaced
    separator (``1,5M``, ``3,00``, ``1.500.000``), two currencies, anything else.
    """
    if currency not in ("USD", "CNY"):
        raise ValueError(f"currency {currency!r}: allowed USD or CNY")
    if isinstance(text, bool):
        raise MoneyError(text, "is not an amount of money")
    if isinstance(text, (int, float)):
        try:
            amount, found = float(text), None
        except OverflowError:  # an integer of hundreds of digits
            raise MoneyError(text, "is not a finite amount of 0 or more") from None
    else:
        # full-width digits and marks as a Chinese input method types them (３００万, ＄3M) read as their ASCII
        raw = unicodedata.normalize("NFKC", str(text)).strip().replace("\u00a0", " ").replace("_", "")
        if not raw:
            raise MoneyError(text, "is empty")
        if raw.startswith(("-", "−")) or re.search(r"[\s$¥￥]-", raw):
            raise MoneyError(text, "is negative: an amount of money here is 0 or more")
        match = _MONEY.match(raw)
        if not match:
            if re.fullmatch(r"[0-9]{1,3}(\.[0-9]{3}){2,}", raw):
                raise MoneyError(text, "uses points to group thousands: a point is the decimal mark here")
            raise MoneyError(text, "is not an amount of money")
        mark, digits, word, tail = match.groups()
        if "," in digits and not _GROUPED.match(digits):
            raise MoneyError(text, "has a comma that is not a thousands separator (groups of three digits): "
                                   "a decimal comma is ambiguous")
        marks = {CURRENCIES[m.lower()] for m in (mark, tail) if m}
        if len(marks) > 1:
            raise MoneyError(text, "names two currencies")
        found = marks.pop() if marks else None
        amount = float(digits.replace(",", "")) * WORDS[(word or "").lower()]
    if not math.isfinite(amount) or amount < 0:
        raise MoneyError(text, "is not a finite amount of 0 or more")
    unit = found or currency
    if unit == "CNY":
        if not (isinstance(cny_per_usd, (int, float)) and math.isfinite(cny_per_usd) and cny_per_usd > 0):
            raise ValueError(f"cny_per_usd {cny_per_usd!r}: allowed a positive rate")
        return Money(amount, "CNY", amount / cny_per_usd, float(cny_per_usd))
    return Money(amount, "USD", amount, float(cny_per_usd))
