"""The programme view: presets, knobs, its frames and charts, and the widget in the kernel (the browser test is in
tests/test_app_browser.py)."""
import datetime
import io
import json
from dataclasses import replace

import numpy as np
import openpyxl
import pytest

import workbench
from workbench.programmes import programme, programme_presets as pp, timeline
from workbench.report import programme_charts as pc, programme_views as pv
from workbench.programmes.programme import ProgrammeError
from workbench.app.programme_app import LOADED, ProgrammeView
from workbench.app.ui import Planner, parse_app_query
from workbench.reference.i18n import month_text


@pytest.fixture(scope="module")
def example_timeline():
    return timeline.evaluate(programme.example())


def test_presets_are_programmes_and_the_7b_one_is_the_cli_example():
    table = pp.presets()
    assert list(table.index) == ["assistant-7b", "base-70b", "finetune-serve-70b", "serve-8b"]
    assert pp.preset("assistant-7b") == programme.example()
    seventy = pp.preset("base-70b")
    assert seventy.horizon_months == 24 and pp.knobs(seventy) == {"horizon": 24, "every": 3, "cycles": 7,
                                                                  "versions": 2, "growth": 5.0}
    for preset_id in table.index:
        assert timeline.evaluate(pp.preset(preset_id)).total_cost_usd > 0
    with pytest.raises(ProgrammeError, match="programme='nope': is not a preset; allowed: assistant-7b, base-70b, finetune-serve-70b, serve-8b"):
        pp.preset("nope")


def test_knobs_change_the_release_workstreams_only():
    p = programme.example()
    q = pp.with_knobs(p, every=2, cycles=5, versions=2, growth=5)
    assert pp.knobs(q) == {"horizon": 12, "every": 2, "cycles": 5, "versions": 2, "growth": 5.0}
    pre, fine = q.workstreams
    assert pre == p.workstreams[0]  # the one-off pre-training run is left as it is
    assert (fine.every_months, fine.cycles, fine.serve_months, fine.traffic_growth_per_month) == (2, 5, 4.0, 0.05)
    assert pp.with_knobs(q, **pp.knobs(p)) == p  # and back


def test_doubling_the_cycles_by_the_knob_costs_less_than_double():
    base = pp.with_knobs(pp.preset("base-70b"), cycles=3)
    doubled = pp.with_knobs(base, cycles=6)
    one, two = timeline.evaluate(base).total_cost_usd, timeline.evaluate(doubled).total_cost_usd
    assert one < two < 2 * one


@pytest.mark.parametrize("knob, value, message", [
    ("every", 0, "programme · every=0: is out of range; allowed: a whole number from 1 to 24 [months]"),
    ("growth", "x", "programme · growth='x': is not a number; allowed: a number from -50 to 100 [% a month]"),
    ("cycles", 2.5, "programme · cycles=2.5: is not a whole number"),
    ("versions", float("nan"), "programme · versions=nan: is not a finite number"),
    ("colour", 1, "programme · colour=1: is not a programme setting; allowed: horizon, every"),
])
def test_a_bad_knob_is_named_with_its_range(knob, value, message):
    with pytest.raises(ProgrammeError) as error:
        pp.with_knobs(programme.example(), **{knob: value})
    assert str(error.value).startswith(message)


def test_a_horizon_shorter_than_a_workstream_names_the_workstream():
    with pytest.raises(ProgrammeError, match="programme · horizon=1: ends before workstream 'monthly fine-tune' starts "
                                             r"\(month 2\); allowed: a whole number from 2 to 120") as error:
        pp.with_knobs(programme.example(), horizon=1)
    assert pp.message(error.value, "zh").endswith("早于工作流 'monthly fine-tune' 的开始（第 2 个月）；允许：2 到 120 之间的整数"
                                                 "（工作流 'monthly fine-tune' 从第 2 个月开始）")


def test_link_keys_are_read_and_bad_ones_reported_in_the_links_language():
    preset, knobs, errors = pp.parse_query("view=programme&programme=base-70b&every=6&growth=abc&cycles=2&cycles=3")
    assert (preset, knobs) == ("base-70b", {"every": 6, "cycles": 2})
    assert errors == ["programme · cycles='3': is given twice in the URL; allowed: one value; the first ('2') is used",
                      "programme · growth='abc': is not a number; allowed: a number from -50 to 100 [% a month]"]
    _, _, chinese = pp.parse_query("programme=nope&every=0", "zh")
    assert chinese == ["项目计划 · programme = 'nope'：不是预设的名称；允许：assistant-7b, base-70b, finetune-serve-70b, serve-8b",
                       "项目计划 · 发布间隔（every） = '0'：超出允许范围；允许：1 到 24 之间的整数（个月）"]
    values, options, errors = parse_app_query("view=programme&programme=base-70b&every=6&params=13B&view=single")
    assert values == {"params": 13e9} and options["view"] == "programme" and options["programme_knobs"] == {"every": 6}
    assert errors == ["programme · view='single': is given twice in the URL; allowed: one value; the first "
                      "('programme') is used"]
    assert parse_app_query("view=bogus")[2] == ["view='bogus': is not a view of the app; allowed: single or programme "
                                                "(single is used)"]


def test_frames_add_up_to_the_total(example_timeline):
    tl = example_timeline
    assert pv.monthly(tl)["cost"].sum() == pytest.approx(tl.total_cost_usd, rel=1e-12)
    for key in pv.tag_keys(tl):
        assert pv.attribution(tl, key)["cost"].sum() == pytest.approx(tl.total_cost_usd, rel=1e-12)
    rate = tl.programme.base_scenario.cny_per_usd
    assert pv.monthly(tl, "CNY")["cost"].sum() == pytest.approx(tl.total_cost_usd * rate, rel=1e-12)
    spend, lines = pv.cumulative(tl)
    total = spend[spend["resource"] == "Total"]
    assert total["spent"].iloc[-1] == pytest.approx(tl.total_cost_usd) and np.all(np.diff(total["spent"]) >= 0)
    # the 7B example's total budget is 6 MUSD: 30 % is 1.8 MUSD, first reached in the month spend passes it
    row = lines[(lines["resource"] == "Total") & (lines["percent"] == 30)].iloc[0]
    assert row["threshold"] == 1.8e6
    assert total["spent"].to_numpy()[int(row["month"]) - 1] >= 1.8e6 > total["spent"].to_numpy()[int(row["month"]) - 2]


def test_kpis_are_the_timelines_in_display_units(example_timeline):
    tl = example_timeline
    frame = pv.kpis(tl, "USD")
    kpis = tl.kpis()
    label = pv.kpi_label("usd_per_million_served_tokens")
    served = frame[frame["kpi"] == label].set_index("month")["value"]
    month = served.index[0]
    assert served[month] == pytest.approx(kpis.loc[month, "usd_per_million_served_tokens"])
    shares = frame[frame["kpi"] == pv.kpi_label("fixed_share")]["value"]
    assert shares.between(0, 100).all() and len(shares) == tl.programme.horizon_months
    assert np.isfinite(frame["value"]).all()


def test_the_first_run_is_the_pretraining_runs_own_cost():
    # a horizon long enough for every retention tail: the first run is what estimate() says of the pre-training
    # run (its staff paid by the programme instead), plus the programme's lines of that run: the cleaning of its
    # corpus and its debug environments while it runs
    p = programme.example().replace(horizon_months=60)
    tl = timeline.evaluate(p)
    first, after = pv.first_run_split(tl)
    run = p.workstreams[0].scenario(p.base_scenario).replace(staff_fte=0.0, serving_months=0.0)
    lines = workbench.estimate(run).lines
    engine = lines[(lines["stage"] == "pretrain") & (lines["category"] != "staff")]["cost_usd"].sum()
    mine = tl.lines[(tl.lines["workstream"] == "pre-training") & (tl.lines["cycle"] == 1)]
    hidden_lines = mine[mine["category"].isin(["data_processing", "debug"])]["cost_usd"].sum()
    assert first == pytest.approx(engine + hidden_lines, rel=1e-9) and hidden_lines > 0
    # the CLI's JSON says the same
    assert tl.to_dict()["first_run_usd"] == pytest.approx(first)
    assert first + after == pytest.approx(tl.total_cost_usd, rel=1e-12)


def test_charts_are_valid_vega_lite(example_timeline):
    tl = example_timeline
    spend, lines = pv.cumulative(tl, "CNY", "zh")
    for chart in (pc.monthly_costs(pv.monthly(tl)), pc.budget_lines(spend, lines),
                  pc.attribution(pv.attribution(tl, "team")), pc.kpi_lines(pv.kpis(tl))):
        chart.to_dict()  # validates against the Vega-Lite schema


def test_the_view_follows_its_knobs_and_keeps_the_last_valid_programme():
    links = []
    view = ProgrammeView(on_link=links.append)
    before = view.timeline.total_cost_usd
    view.knob_widgets["every"].value = 2  # releases every 2 months over the same window: 6 instead of 11
    assert links[-1] == "view=programme&programme=assistant-7b&every=2&cycles=6"
    assert view.knob_widgets["cycles"].value == 6
    assert view.timeline.total_cost_usd < before and "wb-stale" not in view.figures._dom_classes
    shown = view.timeline.total_cost_usd
    view.knob_widgets["horizon"].value = 1  # the fine-tunes start in month 2: refused
    assert "wb-stale" in view.figures._dom_classes and "horizon=1: ends before workstream" in view.banner.value
    assert view.knob_widgets["horizon"].value == 12 and view.timeline.total_cost_usd == shown
    view.knob_widgets["cycles"].value = 4
    assert "wb-stale" not in view.figures._dom_classes and view.banner.value.count("wb-error") == 0
    view.attribute_menu.value = "team"
    assert view.stack.datasets["attribution_frame"][0]["value"] in {"post-training", "pretraining", "platform",
                                                                    "(untagged)"}


def test_the_programme_file_downloads_and_loads_back_unchanged():
    view = ProgrammeView("base-70b", {"every": 6})
    text = view.downloads.payload("programme.json")
    fresh = ProgrammeView()
    fresh._upload_changed({"new": [{"name": "mine.json", "content": memoryview(text)}]})
    assert fresh.preset.value == LOADED and fresh.programme == view.programme
    assert fresh.downloads.payload("programme.json") == text
    # the loaded file is in the link, whole: the link opens the same programme
    query = fresh.link_query()
    assert query.startswith("view=programme&plan=") and len(query) < 2000
    _, values, problems = pp.parse_query(query)
    assert problems == [] and values["plan"] == view.programme
    assert ProgrammeView(None, values).programme == view.programme
    assert "Loaded mine.json" in fresh.banner.value
    fresh._upload_changed({"new": [{"name": "bad.json", "content": memoryview(b'{"schema_version": 1}')}]})
    assert "bad.json: programme · name=None" in fresh.banner.value and fresh.programme == view.programme
    csv = fresh.downloads.payload("programme_monthly.csv").decode("utf-8-sig")  # with a BOM, for Excel
    assert csv.startswith("calendar_month,workstream,cycle,stage,category,item,cost_type,cost_usd")
    book = openpyxl.load_workbook(io.BytesIO(fresh.downloads.payload("programme.xlsx")))
    assert book.sheetnames[:3] == ["Summary", "By month", "Monthly lines"]
    assert book["Summary"]["A1"].value == view.programme.name


def test_the_planner_opens_the_view_from_a_link_and_in_chinese():
    values, options, _ = parse_app_query("view=programme&programme=base-70b&versions=3&lang=zh&currency=CNY")
    planner = Planner(values, options["lang"], options["currency"], view=options["view"],
                      programme_preset=options["programme_preset"], programme_knobs=options["programme_knobs"])
    view = planner.programme_view
    assert planner.body.children == (view.widget,)
    assert planner.link.query == "view=programme&programme=base-70b&versions=3&lang=zh&currency=CNY"
    assert "项目计划总成本" in view.headline.value and "¥" in view.headline.value and "金额" in view.headline.value
    assert json.dumps(view.stack.full_spec(), ensure_ascii=False).count("各月各类别成本") == 1
    planner.language.value = "en"
    assert planner.view_toggle.value == "programme" and "Programme total" in view.headline.value
    planner.view_toggle.value = "single"
    assert planner.body.children == (planner.single_view,) and planner.link.query.startswith("v=1")


def test_first_run_by_category_adds_up_to_the_split(example_timeline):
    frame = pv.first_run_by_category(example_timeline)
    first, after = pv.first_run_split(example_timeline)
    parts = frame.groupby("value")["cost"].sum()
    assert parts["First training run"] == pytest.approx(first) and parts["Everything after it"] == pytest.approx(after)
    # annotation and staff only come after the first run; experiments (ablations before it) only with it
    by = frame.set_index(["value", "category"])["cost"]
    assert ("First training run", "Annotation") not in by and ("First training run", "Staff") not in by
    assert ("Everything after it", "Experiments") not in by


def test_a_faster_cadence_costs_more_and_the_first_run_is_paid_once():
    p = pp.preset("assistant-7b")  # fine-tunes from month 2 to the horizon, month 12
    sweep = pv.cadence_sweep(p, (1, 2, 3, 6))
    assert sweep["releases"].tolist() == [11, 6, 4, 2]  # (12 - 2) // every + 1
    assert sweep["first_run_usd"].nunique() == 1 and np.all(np.diff(sweep["total_cost_usd"]) < 0)
    assert sweep.loc[0, "total_cost_usd"] == pytest.approx(timeline.evaluate(p).total_cost_usd)  # the preset's own
    assert round(sweep.loc[2, "total_cost_usd"]) == 4_671_429  # the README's figure for a release every 3 months
    assert (sweep["staff_usd"] == 8 * 20000 * 12).all()  # the team is paid every month whatever the cadence
    assert np.allclose(sweep["first_run_usd"] + sweep["after_first_run_usd"], sweep["total_cost_usd"])
    with pytest.raises(ValueError, match="no release workstream"):
        pv.cadence_sweep(p.replace(workstreams=p.workstreams[:1]))


def test_versions_times_cadence_beyond_the_longest_service_names_the_knob_turned():
    p = programme.example()
    with pytest.raises(ProgrammeError, match=r"programme · versions=12: is out of range; allowed: a whole number from "
                                             r"1 to 10 with every=12 \(each release is served versions x every months"):
        pp.with_knobs(p, every=12, versions=12)
    with pytest.raises(ProgrammeError, match="programme · every=12: is out of range; allowed: a whole number from 1 to 10 "
                                             "with versions=12") as error:
        pp.with_knobs(pp.with_knobs(p, versions=12), every=12)
    assert pp.message(error.value, "zh").endswith("允许：versions=12 时为 1 到 10 之间的整数（每个版本在线 versions x every "
                                                 "个月，至多 120 个月）")
    assert pp.knobs(pp.with_knobs(p, every=10, versions=12))["versions"] == 12  # 120 months: allowed


def test_the_first_page_does_not_load_the_programme_modules_and_knows_their_link_keys():
    from workbench.app.app_links import PROGRAMME_KEYS
    assert PROGRAMME_KEYS == pp.QUERY_KEYS
    code = ("import sys, workbench.app.ui as ui; ui.parse_app_query('params=13B'); "
            "print(sorted(m for m in sys.modules if m.startswith('workbench.programmes.programme') or m == 'workbench.programmes.timeline'))")
    import subprocess, sys
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_new_cadence_fills_the_horizon_and_faster_releases_cost_more():
    seventy = pp.preset("base-70b")  # releases from month 4, every 3 months: 7 up to month 22, as many as fit
    faster = pp.with_knobs(seventy, every=2)
    assert pp.knobs(faster)["cycles"] == 11 and faster.workstreams[1].cycle_starts()[-1] == 23  # months 4, 6, ..., 24
    assert pp.knobs(pp.with_knobs(seventy, every=2, cycles=3))["cycles"] == 3  # cycles given: kept
    totals = [timeline.evaluate(pp.with_knobs(seventy, every=e)).total_cost_usd for e in (6, 3, 2, 1)]
    assert np.all(np.diff(totals) > 0)


def test_warnings_say_when_releases_stop_serving_or_fall_after_the_horizon():
    p = programme.example().replace(start="2027-01")  # months are said as calendar months from the start
    short = timeline.evaluate(pp.with_knobs(p, versions=1, every=1, cycles=5))  # last release month 6, retired in 7
    assert any("its last release is retired on day 1 of 2027-07; nothing is served from then to the end of 2027-12"
               in w
               for w in short.warnings)
    late = timeline.evaluate(pp.with_knobs(p, every=3, cycles=11))
    assert any("'monthly fine-tune': 7 of its 11 cycles start after 2027-12" in w for w in late.warnings)
    assert any("fall after 2027-12 (storage retention and archive tails, work of cycles" in w for w in late.warnings)
    example = timeline.evaluate(p)
    assert any("served until 2028-03; serving after 2027-12 is not priced" in w for w in example.warnings)
    # with no start, month 1 is the month after the one the programme is read in
    assert programme.example().month_label(1, today=datetime.date(2026, 12, 5)) == "2027-01"
    assert programme.example().month_label(11, today=datetime.date(2027, 3, 31)) == "2028-02"


def test_tags_take_only_the_cycle_placeholder_and_fields_suggest_their_names():
    text = programme.example().to_json()
    with pytest.raises(ProgrammeError, match=r"tags.model_version='v\{cyc\}': has a placeholder other than \{cycle\}"):
        programme.loads(text.replace("v{cycle}", "v{cyc}"))
    with pytest.raises(ProgrammeError, match="is not a workstream field; did you mean 'every_months'"):
        programme.loads(text.replace('"every_months"', '"every_month"'))
    with pytest.raises(ProgrammeError, match="is not a programme field; did you mean 'horizon_months'"):
        programme.loads(text.replace('"horizon_months"', '"horizon_month"'))


def test_alert_lines_are_listed_in_order_with_the_100_percent_line():
    p = programme.example().replace(alert_percents=(30.0, 150.0))
    alerts = timeline.evaluate(p).alerts()
    assert alerts[alerts["resource"] == "total"]["percent"].tolist() == [30.0, 100.0, 150.0]


def two_release_workstreams():
    p = programme.example().replace(horizon_months=24)
    quarterly = replace(p.workstreams[1], name="quarterly", start_month=3, every_months=3, cycles=4, serve_months=5.0,
                        traffic_growth_per_month=0.02)
    return p.replace(workstreams=(*p.workstreams, quarterly))


def test_a_knob_changes_only_what_it_sets():
    p = two_release_workstreams()
    assert pp.with_knobs(p, horizon=24) == p and pp.with_knobs(pp.with_knobs(p, horizon=23), horizon=24) == p
    grown = pp.with_knobs(p, growth=5)
    assert [w.traffic_growth_per_month for w in grown.workstreams[1:]] == [0.05, 0.05]
    assert [(w.every_months, w.cycles, w.serve_months) for w in grown.workstreams[1:]] == [(1, 11, 3.0), (3, 4, 5.0)]
    # a new cadence: each release workstream fills the horizon from its own start, served as many cadences as before
    faster = pp.with_knobs(p, every=2)
    assert [(w.every_months, w.cycles, w.serve_months) for w in faster.workstreams[1:]] == [(2, 12, 6.0), (2, 11, 5 / 3 * 2)]


def test_the_cadence_knob_does_not_depend_on_the_path_taken():
    for preset_id in ("assistant-7b", "base-70b"):
        p = pp.preset(preset_id)
        q = p
        for every in (3, 1, 24, 5, 2):
            q = pp.with_knobs(q, every=every)
        assert pp.with_knobs(q, every=pp.knobs(p)["every"]) == p  # back at the preset's cadence: the preset


def test_knob_combinations_the_engine_cannot_price_are_named_and_the_view_falls_back_to_the_preset():
    with pytest.raises(ProgrammeError, match="programme · growth=100: takes 200,000 requests a day past 1e\\+12 .* "
                                             r"allowed: a number from -50 to 13.8 \[% a month\]"):
        pp.with_knobs(pp.preset("assistant-7b"), horizon=120, cycles=120, growth=100)
    view = ProgrammeView("assistant-7b", {"horizon": 120, "cycles": 120, "growth": 100}, lang="zh")
    assert view.programme == pp.preset("assistant-7b") and "wb-stale" not in view.figures._dom_classes
    assert "流量月增长（growth） = 100" in view.banner.value and view.link_query() == "view=programme&programme=assistant-7b"
    # negative growth down to nothing: no unit cost of a million tokens from a handful
    kpis = timeline.evaluate(pp.with_knobs(pp.preset("assistant-7b"), horizon=120, cycles=120, growth=-50)).kpis()
    served = kpis["usd_per_million_served_tokens"]  # the replicas' cost over a dwindling traffic, not 1e36
    assert np.isfinite(served.dropna()).all() and served.max() < 1e5


@pytest.mark.parametrize("text, message", [
    ("1" * 400, "horizon_months=.*: is too large"),
    ('"\\ud800 x"', "name=.*: is too long or holds control characters"),
    ('"a\\u202eb"', "name=.*: is too long or holds control characters"),
])
def test_extreme_values_in_a_file_are_refused_with_a_message(text, message):
    p = programme.example().to_dict()
    key = "horizon_months" if "horizon" in message else "name"
    raw = json.dumps(p).replace(json.dumps({key: p[key]})[1:-1], f'"{key}": {text}')
    with pytest.raises(ProgrammeError, match=message):
        programme.loads(raw)


def test_odd_inputs_through_the_python_api():
    p = programme.example()
    assert json.loads(p.replace(horizon_months=np.int64(12)).to_json())["horizon_months"] == 12
    with pytest.raises(ProgrammeError, match="every=0: is out of range"):
        pv.cadence_sweep(p, (0,))
    for bad in ("１２", "٣", True):
        with pytest.raises(ProgrammeError, match="is not a number"):
            pp.check_knob("every", bad)
    assert pp.check_knob("every", " 3 ") == 3


def test_a_file_that_crashes_an_unforeseen_way_still_gets_a_message(monkeypatch):
    view = ProgrammeView()
    shown = view.programme
    monkeypatch.setattr("workbench.app.programme_app.loads", lambda *a: 1 / 0)
    view._upload_changed({"new": [{"name": "odd.json", "content": memoryview(b"{}")}]})
    assert view.programme is shown and "odd.json: " in view.banner.value and "wb-stale" in view.figures._dom_classes


def test_timeline_warnings_in_chinese_and_the_display_currency():
    tl = timeline.evaluate(programme.example())
    rate = tl.programme.base_scenario.cny_per_usd
    texts = [timeline.warning_text(k, v, "zh", "CNY", rate) for k, v in tl.warning_items]
    eleventh, last = tl.programme.month_label(11), tl.programme.month_label(12)
    # renminbi in 万 with its sign, as a Chinese budget writes it (issue 31): 6,000,000 USD at 7.1 is ¥4,260 万
    # months the way a Chinese reader writes them: 2027 年 11 月
    assert texts[0] == (f"合计预算（¥{6e6 * rate / 1e4:,.0f} 万）在 {month_text(eleventh, 'zh')} 用完（规划期至 "
                        f"{month_text(last, 'zh')}）；到规划期末达到预算的 112%。")
    assert "工作流 '每月微调'" in texts[1]  # the named programme's workstream in Chinese
    assert tl.warnings[0].startswith(f"The total budget (6,000,000 USD) is spent by {eleventh} (the horizon ends {last})")
    view = ProgrammeView(lang="zh", currency="CNY")
    assert texts[0] in view.banner.value.replace("&#x27;", "'")


def test_a_turned_preset_is_named_by_its_values():
    """Issue 30: after 'Release every 1' the 70B preset no longer says 'quarterly releases'; turned back, it does."""
    view = ProgrammeView("base-70b")
    view.knob_widgets["every"].value = 1
    assert view.programme.name == "70B pre-trained, 24 months, monthly releases"
    label = dict((v, k) for k, v in view.preset.options)["base-70b"]
    assert label.endswith("→ 70B pre-trained, 24 months, monthly releases")
    assert json.loads(view.downloads.payload("programme.json"))["name"] == view.programme.name
    view.knob_widgets["every"].value = 3
    assert view.programme.name == "70B base model, 24 months, quarterly releases"
    assert view.link_query() == "view=programme&programme=base-70b"
    chinese = ProgrammeView("base-70b", {"every": 6}, lang="zh")
    assert dict((v, k) for k, v in chinese.preset.options)["base-70b"].endswith("70B 从头预训练，24 个月，每半年发布")


def test_a_lever_applied_is_said_and_undone():
    view = ProgrammeView("finetune-serve-70b")
    total = view.timeline.total_cost_usd
    view.levers._find()
    row = view.levers.table[view.levers.table["applicable"]].iloc[0].to_dict()
    view.levers._apply(row)
    assert view.timeline.total_cost_usd == pytest.approx(row["total_usd"])
    assert view.levers.done.value == f"Applied: {row['name']}" and view.levers.undo.layout.display is None
    view.levers._undo()
    assert view.timeline.total_cost_usd == pytest.approx(total) and view.levers.done.value == ""
    assert view.levers.undo.layout.display == "none"


def test_an_edited_plan_is_named_by_its_values_unless_the_user_named_it():
    view = ProgrammeView("finetune-serve-70b")
    controls = view.editor.controls
    controls[("base", "params")][0].value = "8B"
    assert view.programme.name == "8B open weights, 12 months, monthly releases"
    controls[("name",)][0].value = "Our assistant"
    controls[("base", "params")][0].value = "13B"
    assert view.programme.name == "Our assistant"
    zh = ProgrammeView("finetune-serve-70b", lang="zh")
    zh.editor.controls[("budgets", "total")][0].value = "abc"
    assert "总预算（美元） = 'abc'：不是可识别的金额" in zh.banner.value.replace("&#x27;", "'")


def test_the_plan_section_shows_what_each_fine_tune_buys():
    """The finance lead's session: a 7B preset edited to a 70B plan kept Llama 2's annotation volumes behind grey
    placeholders; they are controls of the plan, with prices shown to the cent."""
    view = ProgrammeView("assistant-7b")
    controls = view.editor.controls
    assert controls[("base", "sft_examples")][0].value == "27.54k"
    assert controls[("base", "preference_usd_per_pair")][0].value == "0.3"
    before = view.timeline.total_cost_usd
    controls[("base", "sft_examples")][0].value = "5k"
    assert view.programme.base["sft_examples"] == 5000 and view.timeline.total_cost_usd < before
    controls[("base", "preference_usd_per_pair")][0].value = "$0.5"
    assert view.programme.base["preference_usd_per_pair"] == 0.5
