"""Monthly rental (包月): whole months paid, priced from the monthly rents of whole servers that Chinese clouds and
resellers quote (issue 33)."""
import csv
import math
import re

import pytest

import workbench
from workbench import Scenario, estimate
from workbench.plan.scenario import ScenarioError
from workbench.programmes import programme as pg
from workbench.programmes import timeline
from workbench.reference import data, prices
from workbench.report import views

HOURS_PER_MONTH = 8766 / 12
SMALL = dict(params=1e9, tokens=2e10, n_gpus=8, experiment_fraction=0, ablation_runs=0, sft_examples=0,
             preference_pairs=0, eval_checkpoints=0)


def line(est, item, stage="pretrain"):
    rows = est.lines[(est.lines["item"] == item) & (est.lines["stage"] == stage)]
    assert len(rows) == 1, item
    return rows.iloc[0]


def test_every_monthly_row_is_the_rent_it_quotes_divided_into_gpu_hours():
    """The basis of a monthly row states the rent as quoted; the price per GPU-hour must give it back."""
    with open(data.data_dir() / "prices.csv", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["mode"] == "monthly"]
    assert len(rows) >= 10
    for row in rows:
        match = re.match(r"listed: ([\d,]+) (CNY|USD) per (\d+)-GPU server-month \(.+\) / \3 GPUs / 730\.5 h$",
                         row["basis"])
        assert match, row["basis"]
        rent, currency, gpus = float(match[1].replace(",", "")), match[2], int(match[3])
        assert currency == row["currency"] and gpus == int(row["gpus_per_instance"])
        assert float(row["price_per_gpu_hour"]) * HOURS_PER_MONTH * gpus == pytest.approx(rent, rel=1e-6)
        assert row["as_of"][:4].isdigit() and row["source"] and row["confidence"] == "transcribed"


def test_an_h800_on_a_chinese_cloud_is_priced_in_cny_from_the_bulletin_row():
    """China Telecom's bulletin: 70,000 CNY per 8-GPU H800 server a month = 11.978 CNY per GPU-hour."""
    est = estimate(Scenario(provider="ctyun", gpu="H800", pricing="monthly"))
    out = est.to_dict()
    assert out["currency"] == "CNY"
    gpu = line(est, "accelerator time")
    assert gpu["unit_cost_usd"] * 7.1 == pytest.approx(70000 / 8 / HOURS_PER_MONTH, rel=1e-6)
    assert "ctyun monthly, 2025-03-31" in est.details["price_source"]
    assert "70,000 CNY per 8-GPU server-month" in est.details["price_source"]
    # the GPU time is committed cost, not elastic
    assert gpu["cost_type"] == "fixed"


def test_whole_months_are_paid_hand_checked():
    """8 GPUs for 0.94 days of a month: the rest of the month is paid idle, at the same price."""
    est = estimate(Scenario(provider="ctyun", gpu="H800", pricing="monthly", **SMALL))
    used_hours = float(est.details["training_days_total"]) * 24
    idle = line(est, "idle committed capacity")
    assert idle["quantity"] == pytest.approx(8 * (HOURS_PER_MONTH - used_hours), rel=1e-9)
    assert idle["unit_cost_usd"] == line(est, "accelerator time")["unit_cost_usd"]
    # the same plan on a 1-year reservation leaves a year idle: far more hours
    reserved = estimate(Scenario(provider="aws", gpu="H100", pricing="reserved_1y", **SMALL))
    assert line(reserved, "idle committed capacity")["quantity"] > 11 * idle["quantity"]
    # and it is flagged, with the month as the term
    flagged = [w for w in est.warnings if str(w).startswith("pricing=monthly")]
    assert flagged and "of the commitment's 30" in str(flagged[0])


@pytest.mark.parametrize("months", [1, 2, 5])
def test_serving_whole_months_leaves_nothing_idle_and_a_part_month_pays_the_month(months):
    s = Scenario(plan_kind="serve_only", params=13e9, gpu="H800", provider="ctyun", pricing="monthly",
                 serving_months=months)
    assert line(estimate(s), "idle committed capacity", "inference")["quantity"] == pytest.approx(0, abs=1e-6)
    part = estimate(s.replace(serving_months=months - 0.5))
    base = line(part, "serving replicas (base)", "inference")
    gpus = base["quantity"] / ((months - 0.5) * HOURS_PER_MONTH)
    assert line(part, "idle committed capacity", "inference")["quantity"] == pytest.approx(
        gpus * 0.5 * HOURS_PER_MONTH, rel=1e-9)


def test_a_provider_renting_only_by_the_month_names_the_pricing_to_choose():
    with pytest.raises(ScenarioError) as error:
        Scenario(provider="ctyun", gpu="H800")  # on demand by default
    assert error.value.field == "pricing" and error.value.allowed == "monthly"
    assert "包月" in error.value.allowed_zh
    with pytest.raises(ScenarioError) as error:  # no typical monthly price: none listed beside an hourly one
        Scenario(gpu="H800", pricing="monthly")
    assert error.value.field == "provider" and error.value.allowed == "ctyun, omniyq"
    assert "no typical monthly price" in str(error.value)


def test_autoscaling_replicas_need_an_hourly_price():
    """Replicas added at the peak above a monthly base are rented by the hour: a provider renting only by the
    month cannot, and autoscaling would silently price whole months by the hour."""
    with pytest.raises(ScenarioError) as error:
        Scenario(provider="ctyun", gpu="H800", pricing="monthly", serving_months=6, serving_provisioning="autoscaling")
    assert error.value.field == "serving_provisioning" and error.value.allowed.startswith("fixed")
    # fixed provisioning runs the peak's replicas all month: priced, nothing autoscaled
    est = estimate(Scenario(provider="ctyun", gpu="H800", pricing="monthly", serving_months=6))
    assert line(est, "serving replicas (autoscaled)", "inference")["quantity"] == 0


def test_the_price_line_and_the_offers_table_show_the_rent_as_quoted():
    est = estimate(Scenario(provider="ctyun", gpu="H800", pricing="monthly"))
    text, _ = views.price_line(est, "CNY", "zh")
    assert text.startswith("¥7 万/8 卡服务器·月 = ¥11.98/GPU 小时 · 天翼云")
    text, _ = views.price_line(est, "USD", "en")
    assert text.startswith("70,000 CNY per 8-GPU server-month = 11.98 CNY/GPU-h (about 1.69 USD")
    table = views.gpu_offers(est, "CNY", "zh")
    billed = table.iloc[:, 2].tolist()
    assert billed[0] == "¥11.98（¥7 万/8 卡服务器·月）" and "¥11.81（¥6.9 万/8 卡服务器·月）" in billed


def test_a_monthly_programme_holds_its_cluster_every_month_it_is_used():
    """A pre-training run then a fine-tune every month: the rented cluster is paid for every month from the first
    use to the last (not one month, with the rest priced by the hour as if nothing were committed)."""
    p = pg.example()
    p = p.replace(base={**p.base, "provider": "ctyun", "gpu": "H100", "pricing": "monthly"})
    tl = timeline.evaluate(p)
    cluster = [f for f in tl.fleets if "cluster" in f["name"]][0]
    used_months = tl.lines.loc[(tl.lines["gpu_hours"] > 0) & (tl.lines["stage"] != "inference"), "month"]
    assert cluster["term_months"] == used_months.max() - used_months.min() + 1
    capacity = tl.fleet_months.loc[tl.fleet_months["fleet"] == cluster["name"], "capacity_gpu_hours"]
    assert capacity.sum() == pytest.approx(cluster["count"] * HOURS_PER_MONTH * cluster["term_months"], rel=1e-9)


def test_rates_convert_only_where_added_to_usd():
    """The CNY line is GPU-hours x the CNY price at any exchange rate (no round trip through USD)."""
    for rate in (6.5, 7.1, 7.3):
        est = estimate(Scenario(provider="omniyq", gpu="Ascend-910B", precision="fp16", pricing="monthly",
                                cny_per_usd=rate, **SMALL))
        gpu = line(est, "accelerator time")
        billed = prices.lookup("Ascend-910B", "monthly", "omniyq").price
        assert billed == pytest.approx(15000 / 8 / HOURS_PER_MONTH, rel=1e-7)
        assert gpu["cost_usd"] * rate == pytest.approx(gpu["quantity"] * billed, rel=1e-12)


def test_monthly_is_a_way_of_committing_for_fleets_and_levers():
    fleet = pg.Fleet("rented", "H800", 64, "monthly")
    assert fleet.term(4) == 1
    from workbench.programmes.levers import levers
    table = levers(Scenario(provider="ctyun", gpu="H800", pricing="monthly"))
    row = table[table["lever"] == "on_demand"].iloc[0]
    assert not row["applicable"] and "ctyun rents H800-SXM5-80GB only monthly, not on_demand" in str(row["why_not"])
    assert math.isfinite(prices.HOURS_PER_MONTH) and prices.HOURS_PER_MONTH == HOURS_PER_MONTH
    assert "monthly" in workbench.plan.scenario.fields()["pricing"].choices


def test_the_command_line_prices_a_monthly_only_provider_so_and_says_it():
    """The issue's own command: an H800 on a Chinese cloud, priced in CNY from a sourced row."""
    import json
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "workbench.cli", "estimate", "--provider", "ctyun", "--gpu", "H800",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["currency"] == "CNY" and out["scenario"]["pricing"] == "monthly"
    assert out["total_cost"] == pytest.approx(out["total_cost_usd"] * 7.1)
    assert "70,000 CNY per 8-GPU server-month" in out["details"]["price_source"]
    assert done.stderr.strip() == ("workbench: note: ctyun rents H800-SXM5-80GB only monthly on record: priced so "
                                   "(--pricing to choose)")
    # a mode chosen is kept, and refused where the provider does not rent so
    refused = subprocess.run([sys.executable, "-m", "workbench.cli", "estimate", "--provider", "ctyun", "--gpu", "H800",
                              "--pricing", "on_demand"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and "allowed: monthly (option --pricing)" in refused.stderr
    assert prices.usual_mode("H800-SXM5-80GB", "ctyun", "on_demand") == "monthly"
    assert prices.usual_mode("H100-SXM5-80GB", "aws", "spot") == "spot"  # rents by the hour: its own refusal
    assert prices.usual_mode("H800-SXM5-80GB", "ctyun", "self_hosted") == "self_hosted"


def test_the_idle_warning_counts_the_hours_the_idle_line_counts():
    """From the attack: experiments on the monthly cluster were left out of the warning, which then claimed 28,709
    idle GPU-h (the line: 19,923) and fired below its 50 % line."""
    est = estimate(Scenario(provider="ctyun", gpu="H800", pricing="monthly", params=7e9, tokens=3e11, n_gpus=64))
    idle = line(est, "idle committed capacity")["quantity"]
    assert idle == pytest.approx(19_923, rel=1e-3)
    assert not [w for w in est.warnings if str(w).startswith("pricing=monthly")]  # 42.6 % idle: below the line
    short = estimate(Scenario(provider="ctyun", gpu="H800", pricing="monthly", **SMALL))
    flagged = [str(w) for w in short.warnings if str(w).startswith("pricing=monthly")]
    assert flagged and f"{line(short, 'idle committed capacity')['quantity']:,.0f} GPU-h" in flagged[0]


def test_autoscaling_is_refused_on_a_monthly_only_provider_even_without_a_serving_horizon():
    """`workbench serve` prices the serving alone: it priced autoscaled replicas by the hour on ctyun."""
    with pytest.raises(ScenarioError, match="serving_provisioning='autoscaling'"):
        Scenario(provider="ctyun", gpu="H800", pricing="monthly", serving_provisioning="autoscaling")


def test_the_command_line_takes_the_provider_as_typed_in_any_case():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "workbench.cli", "estimate", "--provider", "CTYUN", "--gpu", "H800"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "monthly pricing" in done.stdout, done.stderr


def test_the_commitment_line_adds_up_the_rent_and_its_idle_part():
    """The finance lead's question: how much rent, for how long, and how much of it idle. 168 GPUs are 21 servers,
    held 2 months at 70,000 CNY a server: 2,940,000 CNY, of which the idle line's amount."""
    est = estimate(Scenario(provider="ctyun", gpu="H800", pricing="monthly"))
    text = views.commitment_line(est, "CNY", "en")
    assert text.startswith("Rented by the month: 168 GPUs (21 servers of 8) x 2 months = 2,940,000 CNY, of which ")
    idle = line(est, "idle committed capacity")
    assert f"{idle['cost_usd'] * 7.1:,.0f} CNY idle ({idle['quantity']:,.0f} GPU-h" in text
    zh = views.commitment_line(est, "CNY", "zh")
    assert zh.startswith("包月租用：168 块 GPU（21 台 8 卡服务器） × 2 个月 = ¥294 万，其中闲置 ¥119.72 万")
    # GPUs that are not whole servers are said; a plan bought by the hour has no such line
    odd = views.commitment_line(estimate(Scenario(provider="ctyun", gpu="H800", pricing="monthly", n_gpus=210)))
    assert "26.25 servers of 8" in odd and "take a multiple of 8" in odd
    assert views.commitment_line(estimate(Scenario())) == ""


def test_the_fewer_terms_lever_finds_the_cluster_that_pays_one_month_less():
    """The finance lead found 210 GPUs cheaper than the 168 chosen; the lever finds 200 (25 whole servers), the
    smallest that finishes in one month, and its saving is the estimates' difference."""
    from workbench.programmes.levers import levers
    s = Scenario(provider="ctyun", gpu="H800", pricing="monthly")
    row = levers(s).set_index("lever").loc["fewer_terms"]
    assert row["applicable"] and row["changes"] == "n_gpus=200"
    with_200 = estimate(s.replace(n_gpus=200))
    assert with_200.details["cluster_terms"] == 1
    assert estimate(s.replace(n_gpus=192)).details["cluster_terms"] == 2  # one server fewer spills
    assert row["saving_usd"] == pytest.approx(estimate(s).total_cost_usd - with_200.total_cost_usd, rel=1e-9)
    assert row["saving_usd"] > 150_000
    one_year = levers(Scenario(pricing="reserved_1y")).set_index("lever").loc["fewer_terms"]
    assert not one_year["applicable"] and "already fits in one term" in str(one_year["why_not"])


def test_a_monthly_cluster_is_handed_back_between_two_runs():
    """From the attack: a monthly cluster was paid through every month between two runs (737k USD idle for a gap
    of eight months); a monthly rental can be ended and taken again."""
    from workbench.programmes.programme import Programme, Workstream
    base = dict(provider="ctyun", gpu="H800", pricing="monthly", params=7e9, tokens=3e11, n_gpus=64)
    def plan(second_start):
        return Programme(name="two runs", base=base, horizon_months=24, workstreams=(
            Workstream("a", stages=("pretrain",)), Workstream("b", stages=("pretrain",), start_month=second_start,
                                                              changes={"params": 13e9})))
    near, far = timeline.evaluate(plan(2)), timeline.evaluate(plan(10))
    assert [f["term_months"] for f in far.fleets if "cluster" in f["name"]] == [1, 2]
    # the gap costs nothing: the far plan pays what the near one pays, give or take the month boundaries
    assert far.total_cost_usd + far.beyond_horizon_usd == pytest.approx(
        near.total_cost_usd + near.beyond_horizon_usd, rel=0.02)


def test_work_beyond_a_listed_monthly_fleet_still_pays_whole_months():
    """From the attack: a listed monthly fleet the run did not use made the programme 34k USD cheaper, the run
    outside it being priced by the hour on a provider that rents only by the month. Now the unused fleet's month is
    paid on top of the run's own whole month."""
    from workbench.programmes.programme import Fleet, Programme, Workstream
    base = dict(provider="ctyun", gpu="H800", pricing="monthly", params=7e9, tokens=3e11, n_gpus=64)

    def total(fleets):
        tl = timeline.evaluate(Programme(name="x", base=base, horizon_months=12, fleets=fleets,
                                         workstreams=(Workstream("a", stages=("pretrain",)),)))
        return tl.total_cost_usd + tl.beyond_horizon_usd
    alone = total(())
    unused = total((Fleet("rent", "H800", 64, "monthly", start_month=3, term_months=1),))
    month = 64 * HOURS_PER_MONTH * prices.lookup("H800-SXM5-80GB", "monthly", "ctyun").price / 7.1
    assert unused == pytest.approx(alone + month, rel=1e-6)


def test_a_mode_with_a_trailing_space_is_read_as_the_mode(tmp_path, monkeypatch):
    """From the attack: 'monthly ' passed the file's check but matched no lookup, and the error blamed presets.csv."""
    import shutil
    copy = tmp_path / "data"
    shutil.copytree(data.data_dir(), copy)
    path = copy / "prices.csv"
    path.write_text(path.read_text(encoding="utf-8").replace(",ctyun,,\"2x Intel 8468, 8x H800 80G\",8,monthly,",
                                                              ",ctyun,,\"2x Intel 8468, 8x H800 80G\",8,monthly ,"),
                    encoding="utf-8")
    monkeypatch.setenv("WORKBENCH_DATA", str(copy))
    data.reload()
    try:
        assert "monthly " in path.read_text(encoding="utf-8")
        assert prices.lookup("H800-SXM5-80GB", "monthly", "ctyun").price == pytest.approx(11.978097)
    finally:
        monkeypatch.undo()
        data.reload()


def test_debug_environments_beyond_a_monthly_fleet_rent_their_own_few_gpus_not_the_cluster_again():
    """From the second attack: the debug environments' 1,280 GPU-h a month spilled past the implicit monthly fleet
    and rented the whole 64-GPU cluster a second time (76,714 USD a month for 2,200 USD of work)."""
    from workbench.programmes.programme import Fleet, Programme, Workstream
    base = dict(pricing="monthly", provider="ctyun", gpu="H800-SXM5-80GB", n_gpus=64)
    tl = timeline.evaluate(Programme(name="a", horizon_months=6, base=base,
                                     workstreams=(Workstream(name="pt", stages=("pretrain",)),)))
    beyond = tl.lines[tl.lines["workstream"].str.contains("beyond the fleets")]
    debug = tl.lines[tl.lines["gpu_hour_class"] == "debug"]
    assert beyond["cost_usd"].sum() < debug["cost_usd"].sum()  # a couple of GPUs' idle month, not a cluster's
    # a listed fleet holding part of a larger cluster: the rest is rented for the month, not the whole cluster again
    tl = timeline.evaluate(Programme(name="b", horizon_months=6, base={**base, "n_gpus": 168},
                                     workstreams=(Workstream(name="pt", stages=("pretrain",)),),
                                     fleets=(Fleet("F", "H800-SXM5-80GB", 64, "monthly", term_months=2),)))
    rows = tl.lines[tl.lines["workstream"].str.contains("beyond the fleets")]
    assert rows["gpu_hours"].sum() < 730.5  # less than one GPU-month idle, not a cluster rented again


def test_the_commitment_line_is_the_clusters_own_and_says_what_other_work_takes():
    """From the second attack: a post-training reservation of its own was added to the cluster's idle part (idle
    above the rent), and the share other work takes was not said."""
    est = estimate(Scenario(pricing="reserved_1y", post_training_pricing="reserved_3y", provider="aws", gpu="H100"))
    text = views.commitment_line(est)
    rent, idle = (float(x.replace(",", "")) for x in re.findall(r"= ([\d,]+) USD, of which ([\d,]+) USD idle", text)[0])
    assert 0 < idle < rent
    shared = views.commitment_line(estimate(Scenario(provider="ctyun", gpu="H800", pricing="monthly",
                                                     commitment_other_use_share=0.5)), "CNY")
    assert "= 2,940,000 CNY, of which 1,197,210 CNY idle" in shared and "the plan carries 598,605 CNY" in shared
    typed = views.commitment_line(estimate(Scenario(pricing="reserved_1y", price_per_gpu_hour=2)))
    assert typed.startswith("Reserved for a year: 160 GPUs x 1 year = 2,805,120 USD")  # 160 x 8,766 h x 2


def test_the_fewer_terms_lever_says_why_when_no_larger_cluster_helps():
    from workbench.programmes.levers import levers
    huge = Scenario(params=1e12, tokens=1e14, n_gpus=200000, pricing="monthly", provider="ctyun", gpu="H800")
    row = levers(huge).set_index("lever").loc["fewer_terms"]
    assert not row["applicable"] and "finishes in fewer terms" in str(row["why_not"])
    edge = Scenario(params=1e13, tokens=1e15, n_gpus=1000000, pricing="monthly", provider="ctyun", gpu="H800")
    row = levers(edge).set_index("lever").loc["fewer_terms"]  # the table, not a crash
    assert not row["applicable"] and "n_gpus" in str(row["why_not"])
