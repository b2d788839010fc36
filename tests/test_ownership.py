"""Owned hardware (issue 28): the purchase, its depreciation and resale, the power and operations an owned fleet
costs while idle, the cash view, and when owning beats renting. Figures checked by hand."""
import numpy as np
import pytest

import workbench
from workbench.formulas import ownership
from workbench.programmes import programme as pg, timeline
from workbench.report import programme_views as pv
from workbench.programmes.levers import programme_levers

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
    # space: 0.7 kW x 1.82 = 1.274 kW of server per GPU at 184.06 USD per kW-month (CBRE H2 2024)
    space = lines.loc[("pretrain", "idle committed capacity: data-centre space")]
    assert space["cost_usd"] == pytest.approx(idle / HOURS_PER_MONTH * 0.7 * 1.82 * 184.06)
    busy = lines.loc[("pretrain", "data-centre space")]
    assert busy["quantity"] == pytest.approx(e.n_gpus * 1.274 * float(e.details["pretrain_days_with_overheads"])
                                             / (365.25 / 12))
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
    tl = timeline.evaluate(_owned(mfu=0.4))  # a measured MFU: the fleet is busy 72 % of its hours
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
    space = 0.7 * 1.82 * 184.06 / HOURS_PER_MONTH  # per GPU-hour: 1.274 kW of server at CBRE's 184.06 USD/kW-month
    running = month * u * busy + month * (1 - u) * idle + month * (3 / 1000 / HOURS_PER_MONTH * 25_000 + space)
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


def test_rent_on_demand_lever_and_rented_plans_without_it():
    table = programme_levers(_owned()).set_index("lever")
    row = table.loc["rent_on_demand"]
    # here owning is cheaper over the work in and after the horizon: renting is offered with what it adds
    assert "months of use" in row["risk"]
    assert row["applicable"] or row["why_not"].startswith("adds ")
    rented = timeline.evaluate(_owned(pricing="on_demand").replace(fleets=()))
    assert row["total_usd"] == pytest.approx(rented.total_cost_usd)
    assert not programme_levers(pg.example()).set_index("lever").loc["rent_on_demand", "applicable"]
    assert pv.own_or_rent(timeline.evaluate(pg.example())).empty


# -- fleets in files, fuzzed -------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from workbench.programmes.programme import ProgrammeError  # noqa: E402

_value = st.one_of(st.integers(-5, 100_000), st.floats(allow_nan=True, allow_infinity=True), st.none(),
                   st.text(max_size=8), st.booleans())
_good_fleet = st.fixed_dictionaries({
    "name": st.sampled_from(["a", "b", "own", "rack"]),
    "gpu": st.sampled_from(["H100-SXM", "A100-SXM4-80GB", "H800", "B200"]),
    "count": st.integers(1, 3000),
    "pricing": st.sampled_from(["reserved_1y", "reserved_3y", "self_hosted"])},
    optional={"start_month": st.integers(1, 18), "term_months": st.integers(1, 120),
              "tags": st.dictionaries(st.sampled_from(["team", "site"]), st.sampled_from(["x", "y"]), max_size=2)})
_junk = st.tuples(_good_fleet, st.sampled_from(["name", "gpu", "count", "pricing", "start_month", "term_months", "tags",
                                                "extra"]), _value).map(lambda t: {**t[0], t[1]: t[2]})
# mostly plans a user would write, some with one field broken
_fleet = st.one_of(_good_fleet, _good_fleet, _good_fleet, _junk)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_fleet, max_size=3, unique_by=lambda f: str(f.get("name"))), st.sampled_from(["on_demand", "reserved_1y", "reserved_3y", "self_hosted", "spot"]),
       st.sampled_from([0.0, 0.3, 1.0]), st.sampled_from([0.0, 0.5]))
def test_fleets_in_a_file_are_planned_or_refused_by_name(fleets, pricing, other_use, residual):
    import json
    data = json.loads(json.dumps(OWNED))
    data["base"].update(pricing=pricing, commitment_other_use_share=other_use, residual_value_share=residual)
    data["horizon_months"] = 18
    data["fleets"] = fleets
    try:
        text = json.dumps(data, allow_nan=True)
        p = pg.loads(text)
        tl = timeline.evaluate(p)
    except ProgrammeError as error:
        message = str(error)
        assert message and "Traceback" not in message and ("fleet" in message or "workstream" in message
                                                           or "base" in message or "programme" in message), message
        return
    total = tl.total_cost_usd
    assert np.isfinite(total) and total >= 0 and np.isfinite(tl.beyond_horizon_usd) and tl.beyond_horizon_usd >= 0
    for fleet in tl.fleets:
        assert fleet["committed_usd"] >= 0 and fleet["idle_usd"] >= -1e-6
        assert fleet["utilisation"] is None or -1e-9 <= fleet["utilisation"] <= 1 + 1e-9
        assert fleet["in_horizon_usd"] + fleet["after_horizon_usd"] <= fleet["committed_usd"] * (1 + 1e-9) + 1e-6
    cash = tl.cash()
    assert np.isfinite(cash.to_numpy()).all()
    assert json.loads(json.dumps(tl.to_dict(), allow_nan=False))
    frame = pv.own_or_rent(tl)
    assert frame.empty or np.isfinite(frame["cost"]).all()


@pytest.mark.parametrize("pricing", ["reserved_1y", "self_hosted"])
def test_the_guard_model_runs_on_the_fleets_idle_hours_not_beside_them(pricing):
    """The architect's finding: a guard model on a reserved fleet was paid on top of the fleet's idle hours. With a
    fleet far larger than the work, serving it costs no more than its idle hours did."""
    import json
    data = json.loads(json.dumps(OWNED))
    data["base"]["pricing"] = pricing
    data["fleets"] = [{"name": "big", "gpu": "H100-SXM", "count": 256, "pricing": pricing,
                       **({"term_months": 24} if pricing == "reserved_1y" else {})}]
    with_guard = timeline.evaluate(pg.loads(json.dumps({**data, "content_filtering": "self_hosted"})))
    without = timeline.evaluate(pg.loads(json.dumps({**data, "content_filtering": "none"})))
    guard = with_guard.lines[with_guard.lines["item"] == "content safety: guard model on own GPUs"]
    assert guard["gpu_hours"].sum() > 1000
    price = with_guard.fleets[0]["price_usd_per_gpu_hour"]
    assert guard["cost_usd"].sum() == pytest.approx(guard["gpu_hours"].sum() * price, rel=1e-9)
    # owned GPUs busy draw more power than idle ones (and the busy ones' staff are the guard's own line): the
    # only difference
    running = with_guard.lines[with_guard.lines["item"].isin(["content safety: guard model electricity",
                                                               "content safety: guard model operations"])]
    idle_saved = guard["gpu_hours"].sum() * (0.7 * 1.82 * 1.2 * 0.08 * 0.25 + 3 / 1000 / HOURS_PER_MONTH * 25_000)
    extra = 0.0 if pricing == "reserved_1y" else running["cost_usd"].sum() - idle_saved
    assert with_guard.total_cost_usd + with_guard.beyond_horizon_usd == pytest.approx(
        without.total_cost_usd + without.beyond_horizon_usd + extra, rel=1e-6)


# -- the attacking helper's reproducers (issue 28 review) ----------------------------------------------------
def _example(**changes):
    import json
    data = json.loads(pg.example().to_json())
    data.update(changes)
    return data


def _load(data):
    import json
    return pg.loads(json.dumps(data))


@pytest.mark.parametrize("pricing", ["on_demand", "reserved_1y", "reserved_3y", "self_hosted"])
def test_the_whole_does_not_depend_on_the_horizon(pricing):
    """A run starting in month 12 on a committed cluster: its hours after the horizon ran on the fleet and were
    counted again as the fleet's idle months (reserved 8.8 M at a 12-month horizon, 6.1 M at 60)."""
    totals = []
    for horizon in (12, 14, 60):
        data = _example(horizon_months=horizon, budgets={}, staff=[], security_usd_per_month=0)
        data["base"] = {"params": 7e9, "tokens": 2e13, "n_gpus": 256, "pricing": pricing}
        data["workstreams"] = [{"name": "pre", "stages": ["pretrain"], "start_month": 12}]
        tl = timeline.evaluate(_load(data))
        totals.append(tl.total_cost_usd + tl.beyond_horizon_usd)
    assert totals == pytest.approx([totals[0]] * 3, rel=1e-9)


def test_committed_workstreams_of_a_gpu_no_fleet_lists_commit_as_they_say():
    """A fleet of another GPU made a reserved plan cheaper than on demand (its H100 hours at the reserved price,
    with no commitment)."""
    on_demand = timeline.evaluate(pg.example()).total_cost_usd
    data = _example(fleets=[{"name": "a100", "gpu": "A100-SXM4-80GB", "count": 1, "pricing": "reserved_1y"}])
    data["base"] = {**data["base"], "pricing": "reserved_1y"}
    tl = timeline.evaluate(_load(data))
    assert tl.total_cost_usd >= on_demand
    assert any(f["implicit"] and f["gpu"].startswith("H100") for f in tl.fleets)


def test_power_and_operations_are_paid_by_whoever_owns_the_gpus():
    # an owned fleet carrying rented workstreams: their busy hours gain electricity and operations
    tl = timeline.evaluate(_load(_example(fleets=[{"name": "own", "gpu": "H100-SXM5-80GB", "count": 64,
                                                   "pricing": "self_hosted"}])))
    fleet = tl.fleet_months[tl.fleet_months["fleet"] == "own"]
    busy = tl.lines[tl.lines["item"] == "owned fleet: electricity"]["cost_usd"].sum()
    assert busy == pytest.approx(fleet["used_gpu_hours"].sum() * 0.7 * 1.82 * 0.75 * 1.2 * 0.08, rel=1e-9)
    ops = tl.lines[tl.lines["item"] == "owned fleet: data-centre operations"]["cost_usd"].sum()
    assert ops == pytest.approx(fleet["used_gpu_hours"].sum() / HOURS_PER_MONTH * 3 / 1000 * 25_000, rel=1e-9)
    # self-hosted workstreams on a reserved fleet pay the cloud's price, not electricity and operations
    data = _example(fleets=[{"name": "res", "gpu": "H100-SXM5-80GB", "count": 320, "pricing": "reserved_1y"}])
    data["base"] = {**data["base"], "pricing": "self_hosted"}
    tl = timeline.evaluate(_load(data))
    running = tl.lines[tl.lines["item"].isin(["electricity", "data-centre operations"])
                       & (tl.lines["stage"] != "inference")]
    assert running["cost_usd"].sum() == pytest.approx(0.0, abs=1e-6)


def test_a_fleet_held_for_two_lives_is_bought_twice_in_cash():
    data = {"schema_version": 1, "name": "two lives", "horizon_months": 100,
            "base": {"params": 1e9, "tokens": 1e10, "n_gpus": 8, "pricing": "self_hosted", "staff_fte": 0},
            "fleets": [{"name": "rack", "gpu": "H100-SXM", "count": 8, "pricing": "self_hosted", "term_months": 96}],
            "workstreams": [{"name": "w", "stages": ["pretrain"], "every_months": 1, "cycles": 90}]}
    tl = timeline.evaluate(_load(data))
    fleet = tl.fleets[0]
    assert [m for m, _ in fleet["purchases"]] == [1, 49] and [m for m, _ in fleet["resales"]] == [49, 97]
    cash = tl.cash()
    depreciation = tl.fleet_months["depreciation_usd"].sum()
    assert cash["cash_cumulative_usd"].iloc[-1] == pytest.approx(tl.total_cost_usd - depreciation
                                                                  + 2 * fleet["purchase_usd"])
    with pytest.raises(ProgrammeError, match="useful lives"):
        _load({**data, "fleets": [{**data["fleets"][0], "term_months": 60}]})


def test_a_spot_serving_base_stays_spot_when_a_fleet_overflows():
    data = _example(fleets=[{"name": "one", "gpu": "H100-SXM5-80GB", "count": 1, "pricing": "reserved_1y"}])
    data["base"] = {**data["base"], "pricing": "reserved_1y", "serving_pricing": "spot"}
    spot = timeline.evaluate(_load(data))
    data["base"]["serving_pricing"] = "on_demand"
    on_demand = timeline.evaluate(_load(data))
    replicas = lambda tl: tl.lines[tl.lines["item"].str.startswith("serving replicas")]["cost_usd"].sum()  # noqa: E731
    assert replicas(spot) < 0.8 * replicas(on_demand)


def test_a_fleet_the_base_cannot_buy_names_the_base_field():
    data = _example(fleets=[{"name": "npu", "gpu": "Ascend-910B", "count": 8, "pricing": "reserved_1y"}])
    with pytest.raises(ProgrammeError) as error:
        timeline.evaluate(_load(data))
    assert "base." in str(error.value) and "fleet 'npu'" in str(error.value)


def test_a_committed_single_scenario_with_experiments_first_is_its_estimate():
    s = workbench.Scenario(params=7e10, tokens=2e11, pricing="self_hosted", n_gpus=8, gpu="A100-SXM4-80GB",
                           serving_months=3, commitment_other_use_share=0.3, residual_value_share=0.2,
                           requests_per_day=1e6)
    tl = timeline.evaluate(pg.of_scenario(s))
    cleaning = tl.lines.loc[tl.lines["category"] == "data_processing", "cost_usd"].sum()
    assert tl.total_cost_usd + tl.beyond_horizon_usd - cleaning == pytest.approx(
        workbench.estimate(s).total_cost_usd, rel=1e-9)


def test_rent_on_demand_drops_a_reservation_and_workstreams_own_commitments():
    """The architect's findings: no lever offered dropping a programme's reservation (4.3 M idle), and a plan whose
    workstreams set their own committed pricing was told the lever saves nothing."""
    data = _example(fleets=[{"name": "res", "gpu": "H100-SXM5-80GB", "count": 256, "pricing": "reserved_1y"}])
    row = programme_levers(_load(data)).set_index("lever").loc["rent_on_demand"]
    assert row["applicable"] and row["saving_usd"] > 1e6
    assert row["total_usd"] == pytest.approx(timeline.evaluate(pg.example()).total_cost_usd)
    data = _example()
    data["workstreams"] = [{**w, "changes": {**w.get("changes", {}), "pricing": "self_hosted"}}
                           for w in data["workstreams"]]
    row = programme_levers(_load(data)).set_index("lever").loc["rent_on_demand"]
    assert row["applicable"] and row["total_usd"] == pytest.approx(timeline.evaluate(pg.example()).total_cost_usd)


def test_a_single_committed_run_is_offered_on_demand():
    from workbench.programmes.levers import levers
    table = levers(workbench.Scenario(params=7e10, tokens=2e12, n_gpus=1024, pricing="reserved_1y"))
    row = table.set_index("lever").loc["on_demand"]
    on_demand = workbench.estimate(params=7e10, tokens=2e12, n_gpus=1024).total_cost_usd
    assert row["applicable"] and row["total_usd"] == pytest.approx(on_demand)
    # post-training and experiments bought the same other way share one commitment (not one each)
    spot = table.set_index("lever").loc["spot_pretrain"]
    assert spot["saving_usd"] > -5e6



# -- the second attacking review -------------------------------------------------------------------------
def test_the_guard_models_running_costs_follow_the_owner_too():
    data = {"schema_version": 1, "name": "guard", "horizon_months": 12, "content_filtering": "self_hosted",
            "base": {"params": 7e9, "gpu": "H100-SXM", "pricing": "self_hosted", "staff_fte": 0},
            "fleets": [{"name": "res", "gpu": "H100-SXM", "count": 64, "pricing": "reserved_1y"}],
            "workstreams": [{"name": "ft", "stages": ["sft"], "serve_months": 6,
                             "changes": {"n_gpus": 16, "requests_per_day": 2e6}}]}
    tl = timeline.evaluate(_load(data))
    guard = tl.lines[tl.lines["item"].str.startswith("content safety: guard model")]
    assert guard["gpu_hours"].sum() > 0
    running = guard[~guard["item"].str.endswith("on own GPUs")]
    assert running["cost_usd"].sum() == pytest.approx(0.0, abs=1e-6)  # a reserved fleet's price includes them


def test_owned_experiments_draw_power_are_operated_and_take_space_by_hand():
    e = workbench.estimate(pricing="self_hosted")
    lines = e.lines.set_index(["stage", "item"])
    hours = lines.loc[("pretrain", "trial-and-error and ablation runs"), "quantity"]
    assert lines.loc[("pretrain", "electricity (experiments)"), "quantity"] == pytest.approx(
        hours * 0.7 * 1.82 * 0.75 * 1.2)
    assert lines.loc[("pretrain", "data-centre space (experiments)"), "cost_usd"] == pytest.approx(
        hours / HOURS_PER_MONTH * 0.7 * 1.82 * 184.06)
    assert lines.loc[("pretrain", "data-centre operations (experiments)"), "cost_usd"] == pytest.approx(
        hours / HOURS_PER_MONTH / 1000 * 3 * 25_000)
    rented = workbench.estimate().lines.set_index(["stage", "item"])
    assert rented.loc[("pretrain", "electricity (experiments)"), "cost_usd"] == 0


def test_owned_hardware_is_held_whole_months():
    """A life of 2.55 years is 31 months: what a fleet books over it is its purchase, and the programme of one
    scenario is its estimate (they differed by 0.4 month of running costs)."""
    assert ownership.life_hours(2.55) == pytest.approx(31 * HOURS_PER_MONTH)
    assert ownership.life_hours(4) == pytest.approx(4 * 8766)
    data = {"schema_version": 1, "name": "x", "horizon_months": 40,
            "base": {"params": 7e9, "n_gpus": 64, "staff_fte": 0, "pricing": "self_hosted", "useful_life_years": 2.55},
            "fleets": [{"name": "own", "gpu": "H100-SXM", "count": 64, "pricing": "self_hosted"}],
            "workstreams": [{"name": "ft", "stages": ["pretrain"], "every_months": 3, "cycles": 10}]}
    tl = timeline.evaluate(_load(data))
    fleet = tl.fleets[0]
    assert fleet["term_months"] == 31 and fleet["purchase_usd"] == pytest.approx(64 * 30_000 * 1.69)
    assert tl.fleet_months["depreciation_usd"].sum() == pytest.approx(fleet["purchase_usd"])
    s = workbench.Scenario(pricing="self_hosted", useful_life_years=2.55)
    plan = timeline.evaluate(pg.of_scenario(s))
    cleaning = plan.lines.loc[plan.lines["category"] == "data_processing", "cost_usd"].sum()
    assert plan.total_cost_usd + plan.beyond_horizon_usd - cleaning == pytest.approx(
        workbench.estimate(s).total_cost_usd, rel=1e-9)
