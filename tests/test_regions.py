"""Prices per provider and region in the currency billed, the region of a plan and of its data, the transfer
between them, and the cheapest-region lever (issue 33)."""
import csv
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from workbench import Scenario, estimate
from workbench.plan.scenario import ScenarioError
from workbench.programmes.levers import levers
from workbench.formulas import ownership
from workbench.reference import data, prices, region_prices

WORKBENCH = shutil.which("workbench") or ""


def run(*args):
    command = [WORKBENCH] if WORKBENCH else [sys.executable, "-m", "workbench.cli"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=120)


def line(est, item, stage="pretrain"):
    rows = est.lines[(est.lines["item"] == item) & (est.lines["stage"] == stage)]
    assert len(rows) == 1, item
    return rows.iloc[0]


ALIYUN_H20 = dict(gpu="H20", provider="aliyun", params=7e9, tokens=2e11)


def test_a_plan_on_a_chinese_cloud_is_priced_in_cny_from_its_row_and_stays_in_cny():
    """36.47 CNY an instance-hour of ecs.gn8v.4xlarge (1 GPU) in cn-beijing: the GPU line in CNY is the GPU-hours
    times that price, whatever the exchange rate (no round trip through USD changes it)."""
    row = prices.prices().query("sku == 'H20-96GB' and provider == 'aliyun' and region == 'cn-beijing' "
                                "and mode == 'on_demand'").iloc[0]
    assert row["currency"] == "CNY" and row["price_per_gpu_hour"] == pytest.approx(5.0327496 / 0.138, rel=1e-5)
    for rate in (7.1, 6.5, 7.3):
        est = estimate(Scenario(**ALIYUN_H20, region="cn-beijing", cny_per_usd=rate))
        compute = line(est, "accelerator time")
        assert est.details["price_currency"] == "CNY" and est.details["price_region"] == "cn-beijing"
        assert compute["cost_usd"] * rate == pytest.approx(compute["quantity"] * row["price_per_gpu_hour"], rel=1e-12)
        assert f"billed 36.47 CNY/GPU-h (added to USD amounts at the plan's {rate:g} CNY/USD)" in compute["source"]
    out = est.to_dict()
    assert out["currency"] == "CNY" and out["total_cost"] == out["total_cost_cny"] == pytest.approx(
        est.total_cost_usd * 7.3)
    # a plan on an American cloud is in USD
    assert estimate(Scenario(provider="aws")).to_dict()["currency"] == "USD"


def test_the_cli_prices_a_plan_on_aliyun_in_cny():
    result = run("estimate", "--provider", "aliyun", "--gpu", "H20", "--params", "7B", "--tokens", "200B", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["currency"] == "CNY" and out["details"]["price_region"] == "cn-wulanchabu"  # its cheapest region
    compute = next(l for l in out["lines"] if l["item"] == "accelerator time" and l["stage"] == "pretrain")
    assert "billed 34.65 CNY/GPU-h" in compute["source"] and "undated" in compute["source"]
    text = run("estimate", "--provider", "aliyun", "--gpu", "H20", "--params", "7B", "--tokens", "200B").stdout
    assert text.splitlines()[1].split()[:2] == ["Total", "cost"] and " CNY = " in text.splitlines()[1]


def test_without_a_region_a_provider_charges_its_cheapest_and_a_region_charges_its_own():
    base = Scenario(provider="aws", params=7e9, tokens=2e11)
    assert estimate(base).details["price_per_gpu_hour"] == pytest.approx(6.88)
    assert estimate(base, region="ap-northeast-1").details["price_per_gpu_hour"] == pytest.approx(68.80 / 8)
    assert estimate(base, region="sa-east-1").details["price_per_gpu_hour"] == pytest.approx(92.4672 / 8)
    quote = prices.lookup("H100-SXM5-80GB", "on_demand", "aws")
    assert quote.region == "us-east-1" and "its cheapest of" in quote.source
    # a batch of regions prices each element from its own row
    batch = estimate(Scenario(provider="azure", params=7e9, tokens=2e11, n_gpus=64,
                              region=["eastus", "westeurope", "japaneast"]))
    assert np.allclose(batch.details["price_per_gpu_hour"], np.array([98.32, 127.816, 142.564]) / 8)


def test_the_default_plan_is_unchanged_by_the_regions():
    """No provider, no region: the typical price and the reference storage and transfer prices, as before."""
    est = estimate()
    assert round(est.total_cost_usd) == 1_667_524
    assert est.details["object_storage_usd_per_gb_month"] == 0.023 and est.details["egress_usd_per_gb"] == 0.09
    assert "no provider or region chosen" in line(est, "corpus copies in object storage")["source"]


def test_storage_and_transfer_come_from_the_plans_region_in_its_currency():
    est = estimate(Scenario(**ALIYUN_H20, region="cn-beijing", cny_per_usd=7.0))
    assert est.details["object_storage_usd_per_gb_month"] == pytest.approx(0.12 / 7.0)  # Alibaba OSS, CNY
    assert est.details["egress_usd_per_gb"] == pytest.approx(0.5 / 7.0)
    # no parallel file system price for aliyun on record: the reference row, said so
    assert est.details["hot_storage_usd_per_gb_month"] == 0.145
    assert "no hot storage price on record for aliyun cn-beijing" in line(est, "corpus on parallel file system")["source"]
    gcp = estimate(Scenario(provider="gcp", region="europe-west4", params=7e9, tokens=2e11))
    assert gcp.details["object_storage_usd_per_gb_month"] == pytest.approx(0.02 / 1.073741824, rel=1e-5)
    # a typed price wins over the region's
    typed = estimate(Scenario(**ALIYUN_H20, region="cn-beijing", object_storage_usd_per_gb_month=0.05))
    assert typed.details["object_storage_usd_per_gb_month"] == 0.05
    assert "given by the user" in line(typed, "corpus copies in object storage")["source"]


def test_the_data_in_another_region_is_read_across_at_the_pairs_price():
    """Training in cn-hangzhou on a corpus kept in cn-beijing: the corpus is read once at the price of leaving
    cn-beijing, and the checkpoints are copied back to it; in one region, nothing crosses."""
    apart = estimate(Scenario(**ALIYUN_H20, region="cn-hangzhou", data_region="cn-beijing", cny_per_usd=7.1))
    read = line(apart, "corpus read across regions")
    corpus_gb = apart.details["dataset_bytes"] / 1e9
    assert read["quantity"] == pytest.approx(corpus_gb) and read["unit_cost_usd"] == pytest.approx(0.5 / 7.1)
    assert read["cost_usd"] == pytest.approx(corpus_gb * 0.5 / 7.1)
    assert "aliyun cross region" in read["source"]
    together = estimate(Scenario(**ALIYUN_H20, region="cn-hangzhou", data_region="cn-hangzhou"))
    assert line(together, "corpus read across regions")["cost_usd"] == 0.0
    # the difference between the two plans is the corpus read across, nothing else
    assert apart.total_cost_usd - together.total_cost_usd == pytest.approx(read["cost_usd"] * 1.0, rel=0.35)


def test_a_pair_of_regions_takes_its_own_row_before_any_other_region(tmp_path, monkeypatch):
    copy = tmp_path / "data"
    shutil.copytree(data.data_dir(), copy)
    with open(copy / "region_prices.csv", "a", encoding="utf-8") as f:
        f.write("aws,ap-northeast-1,cross_region,us-east-1,0.09,USD,GB,2026-09-16,listed,transcribed,test row,\n")
        f.write("aws,ap-northeast-1,cross_region,*,0.05,USD,GB,2026-09-16,listed,transcribed,test row any,\n")
    monkeypatch.setenv("WORKBENCH_DATA", str(copy))
    data.reload()
    try:
        est = estimate(Scenario(provider="aws", region="us-east-1", data_region="ap-northeast-1", params=7e9,
                                tokens=2e11))
        assert line(est, "corpus read across regions")["unit_cost_usd"] == 0.09  # Tokyo -> us-east-1's own row
        other = estimate(Scenario(provider="aws", region="us-west-2", data_region="ap-northeast-1", params=7e9,
                                  tokens=2e11))
        assert line(other, "corpus read across regions")["unit_cost_usd"] == 0.05  # Tokyo -> any other region
        # the checkpoints leave the cluster's region for the data's: us-east-1's rate to any other region
        assert line(est, "cross-region checkpoint sync")["unit_cost_usd"] == 0.02
    finally:
        monkeypatch.undo()
        data.reload()


@pytest.mark.parametrize("changes, field, words", [
    (dict(region="mars-central-1"), "region", "is not a region on record"),
    (dict(provider="aws", region="ap-northeast-1", pricing="reserved_1y"), "region", "its regions on record: us-east-1"),
    (dict(region="us-east-1"), "region", "needs a provider"),
    (dict(data_region="us-east-1"), "data_region", "needs a provider"),
    (dict(provider="aliyun", gpu="H100"), "provider", "no on_demand price from 'aliyun'"),
    # a region, or the data's, is one of the plan's provider, whatever the price: another cloud's is another bill
    (dict(provider="aws", region="us-east-1", data_region="eastus"), "data_region", "is not a region of aws on record"),
    (dict(provider="aws", region="cn-beijing", pricing="self_hosted"), "region", "is not a region of aws"),
    (dict(region="eastus", price_per_gpu_hour=2.0), "region", "needs a provider"),
    (dict(provider="lambda", region="us-east-1"), "region", "is not a region of lambda"),
    # one cluster, one region: experiments on spot where the cluster is billed (H20 spot only in cn-beijing)
    (dict(provider="aliyun", gpu="H20", experiment_pricing="spot"), "experiment_pricing", "in cn-wulanchabu"),
])
def test_a_region_the_plan_cannot_have_is_refused_naming_the_field_in_both_languages(changes, field, words):
    with pytest.raises(ScenarioError) as caught:
        Scenario(**changes)
    error = caught.value
    assert error.field == field and words in str(error)
    zh = error.message("zh")
    assert not any(w in zh for w in ("is not a region", "needs a provider", "regions on record"))


def test_the_cheapest_region_lever_saves_the_price_difference_less_the_transfer_it_causes():
    """Azure Central US (120.934 USD an ND96isr H100 v5 hour) to East US (98.32), the corpus left in Central US."""
    plan = Scenario(provider="azure", region="centralus", data_region="centralus", params=7e9, tokens=2e11)
    row = levers(plan).set_index("lever").loc["cheapest_region"]
    assert row["applicable"] and "region=eastus" in row["changes"] and "data_region=centralus" in row["changes"]
    moved = estimate(plan.replace(**row["applied"]))
    kept = estimate(plan.replace(**{k: v for k, v in row["applied"].items() if k != "data_region"}, data_region=None))
    assert row["risk_adjusted_saving_usd"] == pytest.approx(estimate(plan).total_cost_usd - moved.total_cost_usd,
                                                            rel=1e-9)
    compute = line(estimate(plan.replace(n_gpus=row["applied"]["n_gpus"])), "accelerator time")
    assert row["saving_usd"] > compute["quantity"] * (120.934 - 98.32) / 8 * 0.99  # the GPU-hours, cheaper
    # the risk priced is the corpus read across from Central US (and the contingency on it): what keeping the data
    # where it is costs against moving it with the cluster
    assert row["risk_usd"] == pytest.approx(moved.total_cost_usd - kept.total_cost_usd, rel=1e-9)
    read = line(moved, "corpus read across regions")["cost_usd"]
    assert read == pytest.approx(moved.details["dataset_bytes"] / 1e9 * 0.02) and row["risk_usd"] >= read > 0
    assert "residency" in row["risk"]
    # its boundary: it does not cross a border (Tokyo is AWS's only Japanese region on record)
    tokyo = levers(Scenario(provider="aws", region="ap-northeast-1")).set_index("lever").loc["cheapest_region"]
    assert not tokyo["applicable"] and "across a border" in str(tokyo["why_not"])
    assert levers(Scenario(provider="aws")).set_index("lever").loc["cheapest_region", "why_not"].startswith(
        "no region is chosen")
    for region in ("us-east-1", "us-east-2"):  # the cheapest, or as cheap
        assert "already" in str(levers(Scenario(provider="aws", region=region)).set_index("lever").loc[
            "cheapest_region", "why_not"])
    chinese = levers(Scenario(gpu="H20", provider="aliyun", region="cn-beijing")).set_index("lever").loc[
        "cheapest_region"]
    assert chinese["applicable"] and "region=cn-wulanchabu" in chinese["changes"]


def test_every_region_has_a_name_and_a_country():
    table = region_prices.regions_table()
    assert region_prices.region_label("cn-wulanchabu", "zh") == "华北6（乌兰察布） cn-wulanchabu"
    assert region_prices.region_label("us-east-1") == "US East (N. Virginia), us-east-1"
    assert region_prices.country("aliyun", "cn-beijing") == "CN" and set(table["country"]) >= {"US", "CN", "JP"}


def corrupt(tmp_path, name, edit):
    copy = tmp_path / "data"
    shutil.copytree(data.data_dir(), copy)
    path = copy / name
    rows = list(csv.reader(open(path, encoding="utf-8")))
    edit(rows)
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return copy


def _ctyun_h800(rows):
    return next(row for row in rows if row[:2] == ["H800-SXM5-80GB", "ctyun"])


@pytest.mark.parametrize("name, edit, message", [
    ("region_prices.csv", lambda r: r[2].__setitem__(1, "US East"), r"row 3, column 'region': 'US East' must be lower case"),
    ("region_prices.csv", lambda r: r[2].__setitem__(6, "GB"), r"row 3, column 'unit': 'GB': object_storage is priced per GB-month"),
    ("region_prices.csv", lambda r: r[2].__setitem__(3, "*"), r"row 3, column 'to_region': to_region is given for cross_region rows only"),
    ("region_prices.csv", lambda r: r[2].__setitem__(5, "EUR"), r"row 3, column 'currency': 'EUR' is not one of the allowed"),
    ("region_prices.csv", lambda r: r.pop(2), r"missing the reference row aws us-east-1 object_storage"),
    ("prices.csv", lambda r: r[1].__setitem__(7, "CNY"), r"column 'currency': azure bills A100-PCIe-80GB in CNY and USD"),
    ("prices.csv", lambda r: r[1].__setitem__(6, "2000"), r"row 2, column 'price_per_gpu_hour': 2000 USD is out of range"),
    ("prices.csv", lambda r: r[1].__setitem__(10, "probably"), r"row 2, column 'confidence': 'probably' is not one of"),
    ("regions.csv", lambda r: r.pop(1), r"regions.csv, column 'region': no row for aws us-east-1, a region of data/prices"),
    ("region_prices.csv", lambda r: r.append(["median", "", "object_storage", "", "0.5", "USD", "GB-month", "2026",
                                              "listed", "transcribed", "x", ""]), r"'median' is a reserved name"),
    ("region_prices.csv", lambda r: r[2].__setitem__(4, "5000"), r"row 3, column 'price': 5000 USD is out of range \(allowed: 0 to 10 USD"),
    ("region_prices.csv", lambda r: r[2].__setitem__(5, "CNY"), r"row 3, column 'currency': the reference rows are in USD"),
    ("region_prices.csv", lambda r: r.append(["aws", "us-east-1", "cross_region", "mars-9", "0.02", "USD", "GB", "2026",
                                              "listed", "transcribed", "x", ""]), r"no row for aws mars-9"),
    ("prices.csv", lambda r: r.append(["H20-96GB", "aliyun", "", "", "", "on_demand", "1.0", "CNY", "2026-01-01", "listed",
                                       "transcribed", "test", ""]), r"aliyun lists H20-96GB on_demand both with and without a region"),
    ("prices.csv", lambda r: r[1].__setitem__(4, "1.5"), r"row 2, column 'gpus_per_instance': 1.5 is not a whole number"),
    ("hardware_prices.csv", lambda r: r[1].__setitem__(1, "9000000"), r"row 2, column 'price_per_gpu': 9e\+06 USD is out of range"),
    ("hardware_prices.csv", lambda r: r[-1].__setitem__(1, "20"), r"column 'price_per_gpu': 20 CNY is out of range"),
    ("regions.csv", lambda r: r[1].__setitem__(4, "usa"), r"regions.csv, row 2, column 'country': 'usa' is not a country"),
    # a monthly rent is checked against the rent its basis quotes (found by the attack: a month's rent typed as the
    # hourly price multiplied the bill by 730; a USD currency on a CNY quote by 7)
    ("prices.csv", lambda r: _ctyun_h800(r).__setitem__(6, "8750"),
     r"column 'price_per_gpu_hour': 8750 CNY/GPU-h is not the quoted rent 70,000 CNY / 8 GPUs / 730.5 h"),
    ("prices.csv", lambda r: _ctyun_h800(r).__setitem__(7, "USD"), r"column 'currency': the basis quotes CNY; the row says USD"),
    ("prices.csv", lambda r: _ctyun_h800(r).__setitem__(9, "listed"), r"column 'basis': 'listed' does not quote the monthly"),
    ("prices.csv", lambda r: _ctyun_h800(r).__setitem__(4, ""), r"column 'gpus_per_instance': the basis quotes a 8-GPU server; the row says nan"),
    # from the second attack: a rent of 0 divided by zero; full-width digits and '7,0,0,0,0' passed
    ("prices.csv", lambda r: _ctyun_h800(r).__setitem__(9, "listed: 0 CNY per 8-GPU server-month / 8 GPUs / 730.5 h"),
     r"column 'basis': .* does not quote the monthly rent"),
    ("prices.csv", lambda r: _ctyun_h800(r).__setitem__(9, "listed: ７0,000 CNY per 8-GPU server-month"),
     r"column 'basis': .* does not quote the monthly rent"),
    ("prices.csv", lambda r: _ctyun_h800(r).__setitem__(9, "listed: 7,0,0,0,0 CNY per 8-GPU server-month"),
     r"column 'basis': .* does not quote the monthly rent"),
    ("prices.csv", lambda r: _ctyun_h800(r).__setitem__(9, "listed: 70,000 CNY per 0-GPU server-month"),
     r"column 'basis': .* does not quote the monthly rent"),
])
def test_a_bad_price_row_is_refused_naming_its_file_row_and_column(tmp_path, monkeypatch, name, edit, message):
    monkeypatch.setenv("WORKBENCH_DATA", str(corrupt(tmp_path, name, edit)))
    data.reload()
    try:
        with pytest.raises(data.DataFileError, match=message):
            {"region_prices.csv": region_prices.regions_table, "regions.csv": region_prices.regions_table,
             "prices.csv": region_prices.regions_table, "hardware_prices.csv": ownership.hardware_prices}[name]()
    finally:
        monkeypatch.undo()
        data.reload()


def test_a_purchase_price_in_cny_is_converted_at_the_plans_rate():
    """An H20 card at about 110,000 yuan (Reuters, early 2024): self-hosted, its purchase in USD is 110,000 / rate,
    and the note says so."""
    for rate in (7.1, 6.8):
        est = estimate(Scenario(gpu="H20", pricing="self_hosted", params=7e9, tokens=2e11, cny_per_usd=rate))
        assert est.details["gpu_purchase_usd"] == pytest.approx(110_000 / rate)
        assert f"110,000 CNY at {rate:g} CNY/USD" in est.defaults_used["gpu_purchase_usd"]
    ascend = estimate(Scenario(gpu="Ascend-910B", precision="fp16", pricing="self_hosted", params=7e9, tokens=2e11))
    assert ascend.details["gpu_purchase_usd"] == pytest.approx(120_000 / 7.1)
    assert estimate(Scenario(pricing="self_hosted")).details["gpu_purchase_usd"] == 30_000  # a USD row as it is


def test_an_h800_server_bought_in_china_costs_its_bulletin_price_with_the_servers_share_added_back():
    """China Telecom's bulletin: an 8x H800 server at 2.3 million CNY. The table keeps the GPU's part (the plan adds
    server_share on top), so the default shares give back the server's price per GPU, plus the cluster network."""
    est = estimate(Scenario(gpu="H800", pricing="self_hosted", params=7e9, tokens=2e11))
    purchase = est.details["gpu_purchase_usd"] * 7.1
    assert purchase == pytest.approx(2_300_000 / 8 / 1.5, rel=1e-5)
    assert ownership.capex_usd_per_gpu(purchase, 0.5, 0.19) == pytest.approx(2_300_000 / 8 * 1.69 / 1.5, rel=1e-5)


def test_a_fleet_is_rented_where_it_names_else_where_the_base_is():
    from workbench.programmes import programme_presets, timeline
    from workbench.programmes.programme import Programme, ProgrammeError
    plan = programme_presets.preset("assistant-7b").to_dict()
    prices_seen = {}
    for provider, region in (("aws", "us-east-1"), ("gcp", None)):
        plan["fleets"] = [{"name": "f", "gpu": "H100", "count": 64, "pricing": "reserved_1y", "provider": provider,
                           "region": region}]
        programme = Programme.from_dict(plan)
        assert Programme.from_dict(json.loads(programme.to_json())) == programme  # a round trip keeps them
        fleet = timeline.evaluate(programme).fleets[0]
        prices_seen[provider] = fleet["price_usd_per_gpu_hour"]
    assert prices_seen["aws"] == pytest.approx(prices.lookup("H100-SXM5-80GB", "reserved_1y", "aws").price)
    assert prices_seen["gcp"] == pytest.approx(prices.lookup("H100-SXM5-80GB", "reserved_1y", "gcp").price)
    plan["fleets"][0].update(provider="aws", region="ap-northeast-1")  # no reservation on record there
    with pytest.raises(ProgrammeError) as caught:
        timeline.evaluate(Programme.from_dict(plan))
    assert caught.value.field == "region" and "its regions on record: us-east-1" in str(caught.value)
    plan["fleets"][0].update(region="mars-1")
    with pytest.raises(ProgrammeError, match="is not a region on record"):
        Programme.from_dict(plan)


def test_the_planner_shows_the_gpu_price_as_billed_with_its_date_and_the_offers():
    from workbench.app.ui import Planner
    planner = Planner({"gpu": "H20", "provider": "aliyun", "region": "cn-beijing"}, "zh", "CNY")
    page = planner.headline.value
    assert "GPU 价格" in page and "¥36.47/GPU 小时" in page and "华北2（北京） cn-beijing" in page and "日期不详" in page
    assert "wb-offers" in page and "cn-wulanchabu" in page and "¥34.65" in page
    english = Planner({"provider": "aws", "region": "ap-northeast-1"}, "en", "CNY").headline.value
    assert ("8.60 USD/GPU-h (about 61.06 CNY at 7.1 CNY/USD) · AWS Asia Pacific (Tokyo), ap-northeast-1 · 2026-10-10"
            in english)


def test_a_programme_message_about_a_region_is_chinese_in_chinese():
    from workbench.programmes import programme_presets
    from workbench.programmes.programme import Programme, ProgrammeError
    plan = programme_presets.preset("assistant-7b").to_dict()
    plan["fleets"] = [{"name": "f", "gpu": "H100", "count": 8, "provider": "aws", "region": "mars"}]
    with pytest.raises(ProgrammeError) as caught:
        Programme.from_dict(plan)
    zh = programme_presets.message(caught.value, "zh")
    assert "a region id" not in zh and "or empty" not in zh and "留空" in zh


def test_the_region_menu_offers_the_providers_regions_and_a_new_provider_clears_it():
    from workbench.app.ui import Planner
    planner = Planner({}, "en", "USD")
    planner.controls["provider"].menu.value = "aws"
    regions = [value for _, value in planner.controls["region"].menu.options]
    assert regions[0] == "" and set(regions[1:]) == set(region_prices.provider_regions("aws"))
    planner.controls["region"].menu.value = "ap-northeast-1"
    assert planner.scenario.region == "ap-northeast-1" and planner.est.details["price_per_gpu_hour"] == 8.6
    planner.controls["provider"].menu.value = "azure"  # Tokyo is not one of Azure's ids: none chosen again
    assert planner.scenario.provider == "azure" and planner.scenario.region is None
    assert "eastus" in [value for _, value in planner.controls["region"].menu.options]


def test_the_list_price_tip_suggests_a_reservation_only_where_one_is_on_record():
    codes = lambda est: [w.code for w in est.warnings if str(getattr(w, "code", "")).startswith("ew_list")]  # noqa: E731
    assert codes(estimate(Scenario(params=70e9))) == ["ew_list_price_cluster"]  # H100: reservations on record
    assert codes(estimate(Scenario(gpu="H20", provider="aliyun"))) == ["ew_list_price_cluster_quote"]


def test_the_fleets_table_says_where_a_fleet_is_rented():
    from workbench.programmes import programme_presets, timeline
    from workbench.programmes.programme import Programme
    from workbench.report import programme_views
    plan = programme_presets.preset("assistant-7b").to_dict()
    plan["fleets"] = [{"name": "f", "gpu": "H100", "count": 64, "pricing": "reserved_1y", "provider": "aws",
                       "region": "us-east-1"}]
    table = programme_views.fleets_table(timeline.evaluate(Programme.from_dict(plan)), "CNY", "zh")
    assert table.iloc[0, 2] == "包年（1 年期） · 亚马逊云科技 AWS · 美国东部（弗吉尼亚北部） us-east-1"
