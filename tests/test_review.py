"""The bill against the plan (workbench.bill.review): a bill made from the plan's own billed lines, with known factors,
compared back; alert days, forecast, flags and attribution by hand; the CLI's --plan and --budget."""
import csv
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from workbench.bill import actuals, review
from workbench.programmes import programme, timeline
from workbench.bill.review import ReviewError

SERVICES = {"compute": ("Compute", "Amazon Elastic Compute Cloud"), "storage": ("Storage", "Amazon Simple Storage Service"),
            "network": ("Networking", "AWS Data Transfer"), "logging": ("Management and Governance", "AmazonCloudWatch"),
            "security": ("Security", "AWS Security Hub")}


@pytest.fixture(scope="module")
def plan():
    return timeline.evaluate(programme.example())


def bill_from_plan(plan, path, months=3, factors=None, extra=()):
    """One row per (month, billed category, team) on the 10th, at the plan's cost x factor[category]."""
    lines = plan.lines.assign(billed=plan.lines["category"].map(review.BILLED_AS)).dropna(subset=["billed"])
    if "team" not in lines:  # a single scenario's plan has no tags
        lines = lines.assign(team="(untagged)")
    rows = []
    for (month, category, team), usd in lines.groupby(["month", "billed", "team"])["cost_usd"].sum().items():
        if month > months:
            continue
        # a charge from the 10th to the month's end: the bill covers the whole month
        end = pd.Period(f"2025-{month:02d}", "M").end_time.normalize() + pd.Timedelta(days=1)
        rows.append({"ChargePeriodStart": f"2025-{month:02d}-10T00:00:00Z", "ChargePeriodEnd": f"{end:%Y-%m-%dT%H:%M:%SZ}",
                     "BillingCurrency": "USD", "ServiceCategory": SERVICES[category][0], "ServiceName": SERVICES[category][1],
                     "ChargeCategory": "Usage", "EffectiveCost": f"{usd * (factors or {}).get(category, 1.0):.9f}",
                     "Tags": json.dumps({"team": team}) if team != "(untagged)" else "NULL", "ConsumedQuantity": "",
                     "ConsumedUnit": "", "ResourceId": ""})
    rows += list(extra)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return actuals.read_focus(path)


def billed_total(plan, months=None):
    lines = plan.lines[plan.lines["category"].map(review.BILLED_AS).notna()]
    return lines[lines["month"] <= (months or 10**6)]["cost_usd"].sum()


def test_a_bill_that_follows_the_plan_forecasts_the_plan(plan, tmp_path):
    result = review.compare(bill_from_plan(plan, tmp_path / "b.csv"), plan)
    assert np.allclose(result.by_category["ratio"].dropna(), 1.0) and not result.by_category["over_plan"].any()
    assert result.by_category["planned_usd"].sum() == pytest.approx(billed_total(plan, 3), rel=1e-9)
    assert result.forecast_usd == pytest.approx(billed_total(plan), rel=1e-9)
    assert result.forecast_total_usd == pytest.approx(plan.total_cost_usd, rel=1e-9)
    assert not [f for f in result.flags if f["kind"] == "over_plan"]
    team = result.tags["team"].set_index("value")
    assert np.allclose(team["planned_usd"], team["actual_usd"], rtol=1e-9)  # untagged plan = unattributed bill
    assert list(result.monthly["month"][:5]) == ["2025-01"] * 5 and result.monthly["plan_month"].max() == 12


def test_compute_above_plan_is_flagged_and_the_forecast_follows_its_run_rate(plan, tmp_path):
    result = review.compare(bill_from_plan(plan, tmp_path / "b.csv", factors={"compute": 1.3}), plan)
    compute = result.by_category.set_index("category").loc["compute"]
    assert compute["ratio"] == pytest.approx(1.3) and compute["over_plan"]
    flag = next(f for f in result.flags if f["kind"] == "over_plan")
    assert flag["category"] == "compute" and "(+30 %;" in flag["message"]
    # by hand, category by category: fixed lines stay at plan, elastic ones go at the category's
    # (actual - fixed to date) / elastic to date; the categories on plan keep their plan
    lines = plan.lines.assign(billed=plan.lines["category"].map(review.BILLED_AS)).dropna(subset=["billed"])
    expected = 0.0
    for category, mine in lines.groupby("billed"):
        to_date, rest = mine[mine["month"] <= 3], mine[mine["month"] > 3]
        fixed = to_date[to_date["cost_type"] != "elastic"]["cost_usd"].sum()
        elastic = to_date[to_date["cost_type"] == "elastic"]["cost_usd"].sum()
        actual = result.by_category.set_index("category").loc[category, "actual_usd"]
        rate = max(0.0, actual - fixed) / elastic if elastic > 0 else 1.0
        assert rate == pytest.approx(1.3 if category == "compute" and elastic > 0 else 1.0, rel=0.3)
        expected += actual + rest[rest["cost_type"] != "elastic"]["cost_usd"].sum() + rate * rest[
            rest["cost_type"] == "elastic"]["cost_usd"].sum()
    assert result.forecast_usd == pytest.approx(expected, rel=1e-9) and result.forecast_usd > billed_total(plan)
    months = result.monthly.set_index(["plan_month", "category"])
    storage = lines[(lines["billed"] == "storage") & (lines["month"] == 6)]["cost_usd"].sum()
    assert months.loc[(6, "storage"), "forecast_usd"] == pytest.approx(storage, rel=1e-9)  # on plan: kept at plan


def test_alert_days_on_actual_spend(plan, tmp_path):
    bill = bill_from_plan(plan, tmp_path / "b.csv")
    spent = bill.rows.groupby("month")["cost_usd"].sum().cumsum()  # all on the 10th of each month
    budget = float(spent.iloc[1] / 0.8)  # 80 % reached exactly on the 10th of February
    table = review.compare(bill, plan, budget_usd=budget).alerts.set_index("percent")
    assert table.loc[80.0, "day"] == pd.Timestamp("2025-02-10")
    assert table.loc[30.0, "day"] == (pd.Timestamp("2025-01-10") if spent.iloc[0] >= 0.3 * budget else pd.Timestamp("2025-02-10"))
    assert pd.isna(table.loc[100.0, "day"]) == (spent.iloc[-1] < budget)
    # without --budget: the programme's billed budgets (compute 3 MUSD, storage 0.1 MUSD), not reached in 3 months
    own = review.compare(bill, plan).alerts
    assert set(own["resource"]) == {"compute", "storage"} and own["day"].isna().all()
    assert list(review.bill_alerts(bill, budget).set_index("percent")["day"]) == list(table["day"])


def test_idle_resources_and_rising_unit_costs_are_flagged(plan, tmp_path):
    def row(month, cost, quantity, resource):
        return {"ChargePeriodStart": f"2025-{month:02d}-02T00:00:00Z", "ChargePeriodEnd": f"2025-{month:02d}-02T01:00:00Z",
                "BillingCurrency": "USD", "ServiceCategory": "Storage", "ServiceName": "Amazon Elastic Block Store",
                "ChargeCategory": "Usage", "EffectiveCost": str(cost), "Tags": "NULL", "ConsumedQuantity": str(quantity),
                "ConsumedUnit": "GB-Mo", "ResourceId": resource}
    extra = [row(1, 10.0, 100, "vol-1"), row(2, 13.0, 100, "vol-1"), row(3, 5.0, 0, "vol-idle"), row(2, 4.0, 0, "vol-idle")]
    flags = review.compare(bill_from_plan(plan, tmp_path / "b.csv", extra=extra), plan).flags
    rising = [f for f in flags if f["kind"] == "unit_cost_rising"]
    assert rising == [{"kind": "unit_cost_rising", "service": "Amazon Elastic Block Store", "unit": "GB-Mo",
                       "from_month": "2025-01", "to_month": "2025-02", "from_usd": 0.1, "to_usd": 0.13,
                       "message": "Amazon Elastic Block Store: cost per GB-Mo rose +30% from 2025-01 to 2025-02 "
                                  "(0.1 -> 0.13 USD)"}]
    idle = [f for f in flags if f["kind"] == "billing_without_usage"]
    assert [(f["resource"], f["cost_usd"], f["rows"]) for f in idle] == [("vol-idle", 9.0, 2)]


def test_months_that_cannot_be_compared_are_said(plan, tmp_path):
    bill = bill_from_plan(plan, tmp_path / "b.csv")
    with pytest.raises(ReviewError, match="start='March': is not a month the plan can start in; allowed: YYYY-MM"):
        review.compare(bill, plan, start="March")
    with pytest.raises(ReviewError, match=r"the bill's months \(2025-01 to 2025-03\) fall outside the plan's 2030-01"):
        review.compare(bill, plan, start="2030-01")
    late = review.compare(bill, plan, start="2025-02")  # January is before plan month 1
    assert any(f["kind"] == "outside_plan" and f["months"] == ["2025-01"] for f in late.flags)


def test_the_cli_compares_with_a_plan_file(plan, tmp_path):
    bill_from_plan(plan, tmp_path / "b.csv")
    (tmp_path / "p.json").write_text(programme.example().to_json())
    run = subprocess.run([sys.executable, "-m", "workbench.cli", "actuals", str(tmp_path / "b.csv"), "--plan",
                          str(tmp_path / "p.json"), "--budget", "500000", "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert {"total_actual_usd", "by_category", "by_tag", "unattributed_usd", "rejected_rows", "alerts", "forecast_usd",
            "flags", "monthly_vs_plan", "by_category_vs_plan"} <= set(out)
    assert isinstance(out["by_category"], dict)  # the bill's own, not replaced by the comparison
    assert out["alerts"][0]["resource"] == "bill" and out["forecast_usd"] == pytest.approx(billed_total(plan), rel=1e-9)
    text = subprocess.run([sys.executable, "-m", "workbench.cli", "actuals", str(tmp_path / "b.csv"), "--plan",
                           str(tmp_path / "p.json")], capture_output=True, text=True, check=True).stdout
    assert "Against the plan, over the months billed [USD]" in text and "Forecast at the plan's end:" in text
    for args, message in ((["--budget", "-5"], "expected a positive amount in USD"),
                          (["--start", "2025-01"], "--start places a plan's months: give --plan PLAN too")):
        bad = subprocess.run([sys.executable, "-m", "workbench.cli", "actuals", str(tmp_path / "b.csv"), *args],
                             capture_output=True, text=True)
        assert bad.returncode in (1, 2) and message in bad.stderr


def test_the_demo_export_is_the_plan_as_a_bill_would_show_it(plan, tmp_path):
    on_plan = review.compare(actuals.read_focus(review.demo_export(plan, tmp_path / "a.csv", months=2)), plan)
    assert np.allclose(on_plan.by_category["ratio"].dropna(), 1.0, rtol=1e-6) and not on_plan.flags
    assert on_plan.forecast_usd == pytest.approx(billed_total(plan), rel=1e-6)
    drifted = review.compare(actuals.read_focus(review.demo_export(plan, tmp_path / "b.csv", months=2,
                                                                  factors={"compute": 1.15}, idle_usd=4.0)), plan)
    assert drifted.by_category.set_index("category").loc["compute", "ratio"] == pytest.approx(1.15, rel=1e-6)
    idle = [f for f in drifted.flags if f["kind"] == "billing_without_usage"]
    assert [(f["resource"], f["rows"], round(f["cost_usd"], 6)) for f in idle] == [("vol-debug-scratch", 59, 236.0)]


def test_a_bill_of_one_month_is_compared_with_that_months_plan(plan, tmp_path):
    full = pd.read_csv(review.demo_export(plan, tmp_path / "three.csv", months=3), dtype=str, keep_default_na=False)
    march = full[full["ChargePeriodStart"].str.startswith("2025-03")]
    march.to_csv(tmp_path / "march.csv", index=False)
    result = review.compare(actuals.read_focus(tmp_path / "march.csv"), plan, start="2025-01")
    lines = plan.lines[plan.lines["category"].map(review.BILLED_AS).notna()]
    assert result.by_category["planned_usd"].sum() == pytest.approx(lines[lines["month"] == 3]["cost_usd"].sum(), rel=1e-9)
    assert np.allclose(result.by_category["ratio"].dropna(), 1.0, rtol=1e-4) and not result.flags  # daily rows at 1e-6 USD
    assert result.forecast_usd == pytest.approx(billed_total(plan), rel=1e-6)  # months 1-2 at plan


def test_bills_that_cannot_be_compared_are_refused_with_a_reason(plan, tmp_path):
    bill = bill_from_plan(plan, tmp_path / "b.csv")
    for budget in (0, -5, float("nan"), float("inf"), "1e6"):
        with pytest.raises(ReviewError, match="allowed: a positive amount in USD"):
            review.compare(bill, plan, budget_usd=budget)
    header = (tmp_path / "b.csv").read_text().splitlines()[0]
    (tmp_path / "empty.csv").write_text(header + "\n")
    with pytest.raises(ReviewError, match="the bill has no accepted row to compare"):
        review.compare(actuals.read_focus(tmp_path / "empty.csv"), plan)
    total_only = timeline.evaluate(programme.example().replace(budgets={"total": 6e6}))
    flags = review.compare(bill, total_only).flags
    assert any(f["kind"] == "no_billed_budget" for f in flags)


def test_the_bill_panel_clears_an_earlier_bill_on_an_error_and_reads_renminbi_at_the_programmes_rate(plan, tmp_path):
    from workbench.app.programme_app import ProgrammeView
    view = ProgrammeView()
    panel = view.bill
    good = review.demo_export(view.timeline, tmp_path / "good.csv", months=2).read_bytes()
    panel._upload_changed({"new": [{"name": "good.csv", "content": memoryview(good)}]})
    assert panel.review is not None and "charges read from good.csv" in panel.message.value and panel.details.value
    panel.start.value = "2025-13"
    assert panel.review is None and panel.details.value == "" and panel.chart.layout.display == "none"
    assert "The bill was read but not compared" in panel.message.value
    panel.start.value = ""
    assert panel.review is not None and panel.chart.layout.display is None
    renminbi = good.decode().replace(",USD,", ",CNY,").encode()
    panel._upload_changed({"new": [{"name": "cny.csv", "content": memoryview(renminbi)}]})
    rate = view.programme.base_scenario.cny_per_usd
    assert panel.bill.total_usd == pytest.approx(actuals.read_focus(tmp_path / "good.csv").total_usd / rate, rel=1e-9)
    panel._upload_changed({"new": [{"name": "bad.csv", "content": memoryview(b"a,b\n1,2\n")}]})
    assert "bad.csv: missing FOCUS columns" in panel.message.value and panel.details.value == ""
    # two months at once, both named part-0.csv as cloud exports name them: one bill, rejected rows named as uploaded
    two = review.demo_export(view.timeline, tmp_path / "two.csv", months=2).read_text().splitlines()
    header_line, rows = two[0], two[1:]
    half = len(rows) // 2
    first = "\n".join([header_line, *rows[:half]]) + "\n"
    second = "\n".join([header_line, rows[half].replace(",USD,", ",EUR,"), *rows[half + 1:]]) + "\n"
    panel._upload_changed({"new": [{"name": "part-0.csv", "content": memoryview(first.encode())},
                                   {"name": "part-0.csv", "content": memoryview(second.encode())}]})
    assert panel.bill.rows_read == len(rows) - 1 and panel.bill.rejected["file"].tolist() == ["part-0.csv"]
    assert "2 files (part-0.csv, ...)" in panel.message.value and "<th>file</th>" in panel.details.value
    # a 1 MB gzip that expands to 320 MB: refused by what it expands to, named as uploaded
    import gzip
    header, line = good.decode().splitlines()[:2]
    bomb = gzip.compress((header + "\n").encode()) + gzip.compress((line + "\n").encode() * (320_000_000 // len(line)))
    assert len(bomb) < 1.5e6
    panel._upload_changed({"new": [{"name": "bomb.csv.gz", "content": memoryview(bomb)}]})
    assert "bomb.csv.gz: " in panel.message.value and "expands past" in panel.message.value
    assert panel.review is None and panel.details.value == ""


def test_the_forecast_path_sums_to_the_forecast_and_projects_the_budget_month(plan, tmp_path):
    bill = bill_from_plan(plan, tmp_path / "b.csv", factors={"compute": 1.5})
    result = review.compare(bill, plan)
    assert result.monthly["forecast_usd"].sum() == pytest.approx(result.forecast_usd, rel=1e-12)
    months = result.monthly.groupby("plan_month")[["actual_usd", "forecast_usd"]].sum()
    assert np.allclose(months.loc[1:3, "forecast_usd"], months.loc[1:3, "actual_usd"])  # the billed months as billed
    budget = 0.9 * result.forecast_usd  # reached within the plan, after the bill's last month
    path = months["forecast_usd"].cumsum()
    expected = int(path.index[path.to_numpy() >= budget][0])
    assert expected > 3
    alerts = review.compare(bill, plan, budget_usd=budget).alerts.set_index("percent")
    assert pd.isna(alerts.loc[100.0, "day"]) and alerts.loc[100.0, "projected_month"] == f"2025-{expected:02d}"
    assert path[expected - 1] < budget <= path[expected]
    never = review.compare(bill, plan, budget_usd=2 * result.forecast_usd).alerts.set_index("percent")
    assert pd.isna(never.loc[100.0, "projected_month"])
    out = review.records(never.reset_index())
    assert out[-1]["projected_month"] is None and json.dumps(out, allow_nan=False)


def test_a_single_scenario_is_a_plan_too(tmp_path):
    from workbench import Scenario, estimate
    scenario = Scenario(params=1e9, tokens=2e10, n_gpus=8)
    run = timeline.evaluate(programme.of_scenario(scenario))
    # the run's GPU time is the scenario's, placed in month 1 (a 1B run on 8 GPUs takes under a day)
    lines = estimate(scenario).lines
    gpu = lines[(lines["category"] == "compute") & (lines["stage"] == "pretrain")]["cost_usd"].sum()
    placed = run.lines[(run.lines["category"] == "compute") & (run.lines["stage"] == "pretrain")]
    assert placed["cost_usd"].sum() == pytest.approx(gpu, rel=1e-9) and set(placed["month"]) == {1}
    assert run.programme.horizon_months == 1 + 12  # the run, then the 12 months of retention
    bill = bill_from_plan(run, tmp_path / "s.csv", months=2)
    direct = review.compare(bill, scenario)
    assert direct.forecast_usd == pytest.approx(review.compare(bill, run).forecast_usd, rel=1e-12)
    assert np.allclose(direct.by_category["ratio"].dropna(), 1.0)
    with pytest.raises(ReviewError, match="allowed: a Programme, its Timeline or a single Scenario"):
        review.compare(bill, "plan.json")
    with pytest.raises(programme.ProgrammeError, match="is not a single Scenario"):
        programme.of_scenario(Scenario(params=[1e9, 7e9]))


def test_the_cli_compares_with_a_scenario_file_and_prints_the_months(tmp_path):
    from workbench import Scenario
    scenario = Scenario(params=1e9, tokens=2e10, n_gpus=8)
    (tmp_path / "s.json").write_text(scenario.to_json(), encoding="utf-8")
    run = timeline.evaluate(programme.of_scenario(scenario))
    bill_from_plan(run, tmp_path / "b.csv", months=2)
    cli = [sys.executable, "-m", "workbench.cli", "actuals", str(tmp_path / "b.csv"), "--plan", str(tmp_path / "s.json")]
    text = subprocess.run([*cli, "--budget", "1000"], capture_output=True, text=True, check=True).stdout
    assert "By month, all billed categories" in text and "projected_month" in text and "By charge category" in text
    out = json.loads(subprocess.run([*cli, "--json"], capture_output=True, text=True, check=True).stdout)
    assert out["planned_total_usd"] == pytest.approx(run.total_cost_usd, rel=1e-9)
    assert {"forecast_usd"} <= set(out["monthly_vs_plan"][0])
    estimated = subprocess.run([sys.executable, "-m", "workbench.cli", "estimate", "--params", "1e9", "--tokens", "2e10",
                                "--n-gpus", "8", "--json"], capture_output=True, text=True, check=True).stdout
    (tmp_path / "est.json").write_text(estimated, encoding="utf-8")  # workbench estimate --json is a plan too
    again = json.loads(subprocess.run([*cli[:-1], str(tmp_path / "est.json"), "--json"], capture_output=True, text=True,
                                      check=True).stdout)
    assert again["planned_total_usd"] == pytest.approx(out["planned_total_usd"], rel=1e-9)
    (tmp_path / "bad.json").write_text('{"params": -1}', encoding="utf-8")
    bad = subprocess.run([*cli[:-1], str(tmp_path / "bad.json")], capture_output=True, text=True)
    assert bad.returncode == 1 and "params" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_json_gaps_budgets_and_projections_hold_at_the_edges(plan, tmp_path):
    from workbench import Scenario
    security = {"ChargePeriodStart": "2025-01-03T00:00:00Z", "ChargePeriodEnd": "2025-01-04T00:00:00Z",
                "BillingCurrency": "USD", "ServiceCategory": "Security", "ServiceName": "Hub", "ChargeCategory": "Usage",
                "EffectiveCost": "100", "Tags": "NULL", "ConsumedQuantity": "", "ConsumedUnit": "", "ResourceId": ""}
    run = timeline.evaluate(programme.of_scenario(Scenario()))
    bill = bill_from_plan(run, tmp_path / "s.csv", months=1, extra=[security])
    out = review.compare(bill, run).to_dict()  # security planned at 0: its ratio has no plan to divide by
    assert json.dumps(out, allow_nan=False) and [f["ratio"] for f in out["flags"] if f.get("category") == "security"] == [None]
    march = dict(security, ChargePeriodStart="2025-03-03T00:00:00Z", ChargePeriodEnd="2025-03-04T00:00:00Z")
    gap = bill_from_plan(plan, tmp_path / "g.csv", months=1, extra=[march])
    assert [f["months"] for f in review.compare(gap, plan).flags if f["kind"] == "months_missing"] == [["2025-02"]]
    processing = review.compare(bill_from_plan(plan, tmp_path / "b.csv"), plan.programme.replace(
        budgets={"data_processing": 6e4, "storage": 1e5}))
    assert set(processing.alerts["resource"]) == {"storage"}  # data processing is inside the bill's compute
    early = review.compare(bill_from_plan(plan, tmp_path / "b.csv"), plan, start="2024-12", budget_usd=4e5).alerts
    assert all(m is None or m >= "2025-01" for m in early["projected_month"].where(early["projected_month"].notna(), None))
    for budget in (True, "1e6", 0, 1e16):
        with pytest.raises(ReviewError, match="allowed: a positive amount in USD") as error:
            review.compare(gap, plan, budget_usd=budget)
        assert "应为正的美元金额" in error.value.message("zh")
    assert review.compare(gap, plan, budget_usd=np.int64(500_000)).alerts["budget_usd"].iloc[0] == 500_000


def test_a_bill_that_stops_mid_month_is_compared_with_that_part_of_the_plan(plan, tmp_path):
    path = review.demo_export(plan, tmp_path / "d.csv", months=3)
    text = path.read_text(encoding="utf-8").splitlines()
    kept = [text[0]] + [line for line in text[1:] if line[:10] < "2025-03-16"]  # up to 15 March
    (tmp_path / "mid.csv").write_text("\n".join(kept) + "\n", encoding="utf-8")
    result = review.compare(actuals.read_focus(tmp_path / "mid.csv"), plan)
    partial = [f for f in result.flags if f["kind"] == "partial_month"]
    assert partial and partial[0]["month"] == "2025-03" and partial[0]["share"] == pytest.approx(15 / 31)
    assert np.allclose(result.by_category["ratio"].dropna(), 1.0, rtol=1e-6)  # on plan, to date
    assert result.forecast_usd == pytest.approx(billed_total(plan), rel=1e-6)  # the rest of March at plan
    assert "2025 年 3 月" in review.flag_text(partial[0], "zh")  # as a Chinese reader writes a month
