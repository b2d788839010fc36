"""Numbers as a reader writes them (workbench.reference.numbers): never an exponent, never 'nan' or 'inf', whatever
the value (issue 31); Chinese money in 万 and 亿 with its sign."""
from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings, strategies as st

from workbench.reference.numbers import compact, money, plain, power_of_ten


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**500, 10**500)), st.integers(1, 8))
def test_no_exponent_nan_or_inf_for_any_number(value, digits):
    for text in (compact(value, digits), plain(value), money(value, "CNY", "zh"), money(value), power_of_ten(value)):
        assert "e+" not in text and "e-" not in text and "nan" not in text.lower() and "inf" not in text


def test_hand_checked_values():
    assert money(12_345_679, "CNY", "zh") == "¥1,234.57 万" and money(1.2e8, "CNY", "zh") == "¥1.2 亿"
    assert money(8065, "CNY", "zh") == "¥8,065" and money(-2693.4, "USD", "zh") == "−$2,693"
    assert money(12_345_679) == "12,345,679 USD"
    assert plain(97_258.7) == "97,259" and plain(2.41e6) == "2.41 M" and plain(6.705e-05) == "0.00006705"
    assert plain(97_258.7, "zh") == "9.726 万" and plain(1.8e12, "zh") == "1.8 万亿"
    # re-parseable in a text box: 7B, 2.81k; a rounding boundary moves to the next unit instead of 1e+03
    assert compact(7e9) == "7B" and compact(2810, 3) == "2.81k" and compact(999.6, 3) == "1k" and compact(700, 1) == "700"
    assert power_of_ten(8.717e23, 4) == "8.717 × 10^23" and power_of_ten(10**400) == "1.00 × 10^400"
    assert money(Decimal("sNaN")) == "—" and compact(float("nan")) == ""
