"""Money as people type it (issue 30): the parser, scenario money fields, programme budgets in files."""
import json

import pytest

from workbench import Scenario
from workbench.plan.money import MoneyError, parse_money
from workbench.programmes import programme, programme_presets as pp, timeline
from workbench.programmes.programme import ProgrammeError


@pytest.mark.parametrize("text, usd", [
    ("3M", 3e6), ("3,000,000", 3e6), ("$3M", 3e6), ("3 million", 3e6), ("USD 3m", 3e6), ("US$ 1.5M", 1.5e6),
    ("3 million USD", 3e6), ("1.5k", 1500), ("3000000", 3e6), ("3e6", 3e6), ("1,234.5", 1234.5), ("3.5 bn", 3.5e9),
    ("300万", 3e6), ("3亿", 3e8), ("2.5 千万", 2.5e7), (3e6, 3e6), (0, 0.0), ("  $ 2,500,000  ", 2.5e6)])
def test_amounts_read_as_written(text, usd):
    assert parse_money(text).usd == pytest.approx(usd, rel=1e-12)


@pytest.mark.parametrize("text, usd, note", [
    ("¥2,000万", 2e7 / 7.1, "¥20,000,000 at 7.1 CNY/USD = 2,816,901 USD"),
    ("2000万元", 2e7 / 7.1, "¥20,000,000 at 7.1 CNY/USD = 2,816,901 USD"),
    ("人民币 300万", 3e6 / 7.1, "¥3,000,000 at 7.1 CNY/USD = 422,535 USD"),
    ("RMB 7.1M", 1e6, "¥7,100,000 at 7.1 CNY/USD = 1,000,000 USD")])
def test_renminbi_is_converted_at_the_plans_rate_and_said(text, usd, note):
    money = parse_money(text, cny_per_usd=7.1)
    assert money.currency == "CNY" and money.usd == pytest.approx(usd) and money.note == note
    assert parse_money(text, cny_per_usd=7.0).usd == pytest.approx(usd * 7.1 / 7.0)


def test_a_bare_amount_takes_the_given_currency():
    assert parse_money("300万", "CNY", 7.1).usd == pytest.approx(3e6 / 7.1)
    assert parse_money("300万", "USD", 7.1).usd == pytest.approx(3e6)


@pytest.mark.parametrize("text, why", [
    ("1,5M", "comma that is not a thousands separator"), ("3,00", "comma that is not a thousands separator"),
    ("3,0000", "comma that is not a thousands separator"), ("1.500.000", "points to group thousands"),
    ("-3M", "negative"), ("$3M CNY", "two currencies"), ("abc", "not an amount"), ("", "empty"),
    ("3 MM M", "not an amount"), (True, "not an amount"), (float("inf"), "finite"), ("1e400", "finite")])
def test_what_reads_two_ways_is_refused_with_how_to_write_it(text, why):
    with pytest.raises(MoneyError, match=why) as error:
        parse_money(text)
    assert "3,000,000, 3M, $3M, 3 million, 300万, 3亿 or ¥2,000万" in str(error.value)


def test_scenario_money_fields_take_typed_money():
    assert Scenario(budget_usd="$3M").budget_usd == 3e6
    assert Scenario(budget_usd="3 million").budget_usd == 3e6
    assert Scenario(budget_usd="¥2,000万", cny_per_usd=8).budget_usd == pytest.approx(2.5e6)
    assert Scenario(price_per_gpu_hour="$2.49").price_per_gpu_hour == pytest.approx(2.49)
    with pytest.raises(ValueError) as error:
        Scenario(budget_usd="1,5M")
    assert error.value.field == "budget_usd"
    assert error.value.message("zh").startswith("预算（budget_usd） = '1,5M'：含有不是千位分隔符（每组三位）的逗号")
    # a non-money field keeps its own rules: a comma in tokens is refused as before
    with pytest.raises(ValueError, match="contains a comma"):
        Scenario(tokens="1,5T")


def test_programme_budgets_as_people_write_them():
    """The issue's done-when: a file with {"total": "$3M", "team:post-training": "1.5 million"} loads with those
    budgets and alert months per budget."""
    data = json.loads(pp.preset("finetune-serve-70b").to_json())
    data["budgets"] = {"total": "$3M", "team:post-training": "1.5 million"}
    p = programme.loads(json.dumps(data)).replace(start="2027-01")
    assert p.budgets == {"total": 3e6, "team:post-training": 1.5e6}
    tl = timeline.evaluate(p)
    alerts = tl.alerts().set_index(["resource", "percent"])
    team = tl.lines[tl.lines["team"] == "post-training"].groupby("month")["cost_usd"].sum().cumsum()
    for percent in (50.0, 80.0, 100.0):
        month = alerts.loc[("team:post-training", percent), "month"]
        assert month == int((team >= 1.5e6 * percent / 100).idxmax())
        assert alerts.loc[("team:post-training", percent), "calendar_month"] == f"2027-{int(month):02d}"
    assert tl.cumulative("team:post-training").iloc[-1] == pytest.approx(team.iloc[-1])
    # the file written back holds the amounts, and loads to the same programme
    assert programme.loads(p.to_json()) == p


@pytest.mark.parametrize("budgets, message", [
    ({"total": "1,5M"}, "budgets.total='1,5M': has a comma that is not a thousands separator"),
    ({"team:post-trainng": "1M"}, "names no team of this programme; allowed: team:post-training"),
    ({"colour:red": "1M"}, "is not a tag of this programme with a value"),
    ({"gpus": "1M"}, "is not a resource with a budget"),
    ({"total": "0"}, "budgets.total=0.0: is out of range")])
def test_bad_budgets_are_refused_naming_them(budgets, message):
    data = json.loads(pp.preset("finetune-serve-70b").to_json())
    data["budgets"] = budgets
    with pytest.raises(ProgrammeError, match=message.replace("(", r"\(").replace("$", r"\$")):
        programme.loads(json.dumps(data))


def test_what_the_attack_found():
    """Issue 30's attack: full-width input, a batch of rates, a huge integer, budget keys that collapse."""
    assert parse_money("３００万").usd == 3e6 and parse_money("＄3M").usd == 3e6  # as a Chinese input method types
    rates = Scenario(budget_usd="¥1亿", cny_per_usd=[7.0, 8.0]).budget_usd  # each scenario at its own rate
    assert list(rates) == pytest.approx([1e8 / 7.0, 1e8 / 8.0])
    with pytest.raises(MoneyError, match=r"^1000000000000000000000000000000000000\.\.\. is not a finite"):
        parse_money(10**400)
    assert parse_money("1.500").usd == 1.5  # a point is the decimal mark, always (prices have three decimals)
    data = json.loads(pp.preset("finetune-serve-70b").to_json())
    data["budgets"] = {"team:post-training": "$1M", "team: post-training": "$2M"}
    with pytest.raises(ProgrammeError, match="budgets.team:post-training=.*is given twice"):
        programme.loads(json.dumps(data))
