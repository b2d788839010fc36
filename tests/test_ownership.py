"""Owned hardware (issue 28): the purchase, its depreciation and resale, the power and operations an owned fleet
costs while idle, the cash view, and when owning beats renting. Figures checked by hand."""
import numpy as np
import pytest

import workbench
from workbench import ownership, programme as pg, programme_views as pv, timeline
from workbench.levers import programme_levers

HOURS_PER_MONTH = 8766.0 / 12
OWNED = {"schema_version": 1, "name": "owned", "horizon_months": 24,
         "base": {"params": 7e9, "n_gpus": 64, "requests_per_day": 1e6, "staff_fte": 0, "pricing": "self_hosted"},
         "fleets": [{"name": "own", "gpu": "H100-SXM", "count": 64, "pricing": "self_hosted"}],
         "workstreams": [{"name": "ft", "stages": ["pretrain", "sft"], "start_month": 1, "every_months": 3,
                          "cycles": 8, "serve_months": 3}]}


def _owned(**base):
    import json
    data = json.loads(json.dumps(OWNED))
    data["base"].update(base)
    return pg.loads(json.dumps(data))


def test_owned_idle_hours_pay_power_and_operations_by_hand():
    e = workbench.estimate(pricing="self_hosted")
    lines = e.lines.set_index(["stage", "item"])
    idle = lines.loc[("pretrain", "idle committed capacity"), "quantity"]
    # H100 SXM: 700 W x 1.82 server factor x 0.25 idle share x 1.2 PUE = 0.3822 kWh per idle GPU-hour, 0.08 USD/kWh
    assert lines.loc[("pretrain", "idle committed capacity: electricity"), "quantity"] == pytest.approx(idle * 0.3822)
    assert lines.loc[("pretrain", "idle committed capacity: electricity"), "cost_usd"] == pytest.approx(
        idle * 0.3822 * 0.08)
    # 3 operations FTE per 1000 GPUs at 25,000 USD a month
    ops = lines.loc[("pretrain", "idle committed capacity: data-centre operations")]
    assert ops["quantity"] == pytest.approx(idle / HOURS_PER_MONTH / 1000 * 3)
    assert ops["cost_usd"] == pytest.approx(idle / HOURS_PER_MONTH / 1000 * 3 * 25_000)
    # known to the dollar: no contingency on them; rented, they are zero
    assert ops["cost_type"] == "fixed"
    rented = workbench.estimate(pricing="reserved_1y").lines.set_index(["stage", "item"])
    assert rented.loc[("pretrain", "idle committed capacity: electricity"), "cost_usd"] == 0
    assert rented.loc[("pretrain", "idle committed capacity"), "cost_usd"] > 0


def test_resale_value_lowers_the_amortised_price():
    plain = ownership.amortised_usd_per_gpu_hour(30_000, 0.5, 0.19, 4)
    assert plain == pytest.approx(30_000 * 1.69 / (4 * 8766))
    assert ownership.amortised_usd_per_gpu_hour(30_000, 0.5, 0.19, 4, 0.2) == pytest.approx(plain * 0.8)
    a = workbench.estimate(pricing="self_hosted").details["price_per_gpu_hour"]
    b = workbench.estimate(pricing="self_hosted", residual_value_share=0.2).details["price_per_gpu_hour"]
    assert float(np.ravel(b)[0]) == pytest.approx(float(np.ravel(a)[0]) * 0.8)


def test_break_even_months_by_hand():
    # 1 M USD up front, 10 % resold; renting 100k a month against 20k of running: 900k / 80k = 11.25 months
    assert ownership.break_even_months(1e6, 0.1, 100_000, 20_000) == pytest.approx(11.25)
    assert np.isinf(ownership.break_even_months(1e6, 0.0, 20_000, 20_000))


def test_owned_fleet_summary_cash_view_and_chart_frame():
    tl = timeline.evaluate(_owned())
    fleet = tl.fleets[0]
    price = fleet["price_usd_per_gpu_hour"]
    assert fleet["purchase_usd"] == pytest.approx(64 * price * 4 * 8766)  # the 4-year write-off, paid up front
    assert fleet["committed_usd"] == pytest.approx(fleet["purchase_usd"])
    # the idle months of an owned fleet pay electricity and operations as well
    own = tl.lines[tl.lines["workstream"] == "own"].groupby("item")["cost_usd"].sum()
    idle_hours = tl.lines.loc[(tl.lines["workstream"] == "own") & (tl.lines["item"] == "idle committed capacity"),
                              "gpu_hours"].sum()
    assert own["idle committed capacity: electricity"] == pytest.approx(idle_hours * 0.3822 * 0.08)
    assert own["idle committed capacity: data-centre operations"] == pytest.approx(
        idle_hours / HOURS_PER_MONTH / 1000 * 3 * 25_000)
    # cash: the purchase in month 1 in place of the depreciation booked over the 24 months
    cash = tl.cash()
    depreciation = tl.fleet_months["depreciation_usd"].sum()
    assert depreciation == pytest.approx(64 * HOURS_PER_MONTH * 24 * price)
    assert cash["cash_cumulative_usd"].iloc[-1] == pytest.approx(
        tl.total_cost_usd - depreciation + fleet["purchase_usd"])
    assert cash["accounting_cumulative_usd"].iloc[-1] == pytest.approx(tl.total_cost_usd)
    assert cash.loc[1, "cash_usd"] > fleet["purchase_usd"]
    # break-even at the fleet's utilisation, by hand from the fleet's own figures
    u, month = fleet["utilisation"], 64 * HOURS_PER_MONTH
    busy, idle = 0.7 * 1.82 * 1.2 * 0.08 * 0.75, 0.7 * 1.82 * 1.2 * 0.08 * 0.25
    running = month * u * busy + month * (1 - u) * idle + month * 3 / 1000 / HOURS_PER_MONTH * 25_000
    rent = month * u * fleet["rent_usd_per_gpu_hour"]
    assert fleet["break_even_months"] == pytest.approx(fleet["purchase_usd"] / (rent - running))
    frame = pv.own_or_rent(tl)
    assert set(frame["option"]) == {"Own (purchase up front, then power and operations)",
                                    "Rent the same hours on demand"}
    owned_line = frame[frame["option"].str.startswith("Own")]
    assert owned_line["cost"].iloc[0] >= fleet["purchase_usd"]
    table = pv.fleets_table(tl, lang="zh", currency="CNY")
    assert "自有优于租用的时点" in table.columns and table.iloc[0, 2] == "自建"


def test_resale_in_the_horizon_comes_back_as_cash():
    tl = timeline.evaluate(_owned(residual_value_share=0.3, useful_life_years=1.5))
    fleet = tl.fleets[0]
    assert fleet["resale_month"] == 19 and fleet["resale_usd"] == pytest.approx(0.3 * fleet["purchase_usd"])
    cash = tl.cash()
    assert cash.loc[19, "cash_usd"] < cash.loc[19, "accounting_usd"] - 0.29 * fleet["purchase_usd"]


def test_rent_not_own_lever_and_rented_plans_without_it():
    table = programme_levers(_owned()).set_index("lever")
    row = table.loc["rent_not_own"]
    # here owning is cheaper over the work in and after the horizon: renting is offered with what it adds
    assert "months of use" in row["risk"]
    assert row["applicable"] or row["why_not"].startswith("adds ")
    rented = timeline.evaluate(_owned(pricing="on_demand").replace(fleets=()))
    assert row["total_usd"] == pytest.approx(rented.total_cost_usd)
    assert not programme_levers(pg.example()).set_index("lever").loc["rent_not_own", "applicable"]
    assert pv.own_or_rent(timeline.evaluate(pg.example())).empty
