"""The served app in a real browser (Debian's Chromium), with every non-loopback request blocked."""
import sys
from pathlib import Path
import re

import pytest


TIMEOUT = 90_000
CHART_TITLES = ("Cost by stage and category", "Pre-training vs fine-tuning vs inference",
                "Sensitivity: total cost at low / high input", "Planned spend over time, with budget alert lines",
                "Cost against model size at compute-optimal tokens",
                "Range of total cost (Monte Carlo over uncertain inputs)")


def open_app(page, url):
    page.goto(url, wait_until="commit")
    page.wait_for_selector(".wb-total .wb-card-value", timeout=TIMEOUT)
    page.wait_for_selector(".wb-charts svg text", timeout=TIMEOUT)
    return page


def total(page) -> str:
    return page.inner_text(".wb-total .wb-card-value")


def chart_text(page) -> str:
    return page.evaluate("[...document.querySelectorAll('.wb-charts svg text')].map(t => t.textContent).join(' ')")


def field(page, name):
    return page.locator(f".wb-field-{name}")


def type_into(page, name, text):
    box = field(page, name).locator("input[type=text]").first
    box.fill(text)
    box.press("Enter")


def test_headline_and_every_chart_render_offline(page, voila_url):
    open_app(page, voila_url)
    assert re.fullmatch(r"[\d,]+ USD", total(page))
    for label in ("Pre-training GPU-hours", "Wall-clock", "GPUs", "Pre-training cost per million tokens",
                  "Likely range (P10–P90)"):
        assert label in page.inner_text(".wb-headline")
    page.wait_for_function(
        "titles => titles.every(t => document.querySelector('.wb-charts').textContent.includes(t))",
        arg=list(CHART_TITLES), timeout=TIMEOUT)
    assert "Budget alerts" in page.inner_text(".wb-headline")
    assert page.locator("table.wb-lines tbody tr").count() >= 40
    # none attempted: the server's content security policy stops Voilà's CDN links in the browser, and the
    # icons come from Voilà's own bundle
    assert page.external_requests == [] and not page.errors
    assert page.documents[0].headers["content-security-policy"].startswith("default-src 'self'")
    icon = page.evaluate("() => { const i = document.querySelector('.wb-planner .fa'); "
                         "return i && [getComputedStyle(i, '::before').fontFamily, i.getBoundingClientRect().width]; }")
    assert icon and "Font Awesome" in icon[0] and icon[1] > 0


def test_slider_changes_the_total(page, voila_url):
    open_app(page, voila_url)
    before = total(page)
    handle = field(page, "params").locator(".noUi-handle")
    handle.focus()
    for _ in range(10):
        handle.press("ArrowRight")
    page.wait_for_function(f"document.querySelector('.wb-total .wb-card-value').textContent !== {before!r}",
                           timeout=TIMEOUT)
    assert total(page) != before
    assert field(page, "params").locator("input[type=text]").input_value() != "7B"


def test_url_restores_the_scenario(page, voila_url):
    open_app(page, voila_url + "?v=1&params=70B&tokens=1.5T&gpu=A100-SXM4-80GB&pricing=spot&currency=CNY")
    assert field(page, "params").locator("input[type=text]").input_value() == "70B"
    assert field(page, "tokens").locator("input[type=text]").input_value() == "1.5T"
    assert field(page, "gpu").locator("select").input_value() == "A100-SXM4-80GB"
    assert field(page, "pricing").locator("select").input_value() == "spot (interruptible)"  # the label of spot
    assert total(page).endswith("CNY")
    # the address bar and the share link carry the scenario
    page.wait_for_function("location.search.includes('params=70B')", timeout=TIMEOUT)
    assert "gpu=A100-SXM4-80GB" in page.inner_text(".wb-share-link")


def test_bad_url_parameter_is_reported_and_the_rest_kept(page, voila_url):
    open_app(page, voila_url + "?params=abc&tokens=1T&mfu=3")
    banner = page.inner_text(".wb-banner")
    assert "Parameters 'abc': is not a number" in banner and "MFU 3: is out of range" in banner
    assert field(page, "tokens").locator("input[type=text]").input_value() == "1T"
    assert "Traceback" not in page.content()


def test_chinese_ui_shows_chinese_validation_messages(page, voila_url):
    open_app(page, voila_url + "?lang=zh")
    type_into(page, "params", "-5")
    message = field(page, "params").locator(".wb-error")
    message.wait_for(timeout=TIMEOUT)
    assert "参数量 = -5：超出允许范围；允许：100 万 到 10 万亿 之间的数字 [参数]" in message.inner_text()
    type_into(page, "params", "abc")
    field(page, "params").get_by_text("不是数字").wait_for(timeout=TIMEOUT)
    assert "Traceback" not in page.content() and not page.errors


def test_out_of_range_value_shows_message_and_keeps_state(page, voila_url):
    open_app(page, voila_url)
    before = total(page)
    type_into(page, "params", "-5")
    message = field(page, "params").locator(".wb-error")
    message.wait_for(timeout=TIMEOUT)
    assert "Parameters -5: is out of range; allowed: a number from 1M to 10T [parameters]" in message.inner_text()
    assert total(page) == before
    # the figures of the last valid inputs are greyed where the user sees them, the charts included
    page.wait_for_function("getComputedStyle(document.querySelector('.wb-charts').closest('.wb-stale')"
                           " || document.body).opacity < 0.6", timeout=TIMEOUT)
    assert "correct Parameters to update them" in page.inner_text(".wb-planner")
    type_into(page, "seq_len", "4096.5")
    field(page, "seq_len").locator(".wb-error").wait_for(timeout=TIMEOUT)
    assert "not a whole number" in field(page, "seq_len").inner_text()
    # a valid value clears the message and recomputes
    type_into(page, "params", "13B")
    page.wait_for_function(f"document.querySelector('.wb-total .wb-card-value').textContent !== {before!r}",
                           timeout=TIMEOUT)
    assert field(page, "params").locator(".wb-error").count() == 0
    assert "not a whole number" in field(page, "seq_len").inner_text()  # still shown: the box still holds it
    assert "correct Sequence length to update them" in page.inner_text(".wb-planner")
    type_into(page, "seq_len", "8192")
    page.wait_for_function("!document.querySelector('.wb-charts').closest('.wb-stale')", timeout=TIMEOUT)
    assert "Traceback" not in page.content()


def test_language_toggle_changes_labels(page, voila_url):
    open_app(page, voila_url)
    assert "Parameters" in field(page, "params").inner_text()
    page.get_by_role("button", name="简体中文").click()
    page.wait_for_function("document.querySelector('.wb-field-params').textContent.includes('参数量')", timeout=TIMEOUT)
    assert "大模型成本工作台" in page.inner_text(".wb-planner")
    page.wait_for_function("document.querySelector('.wb-charts').textContent.includes('各阶段、各类别成本')",
                           timeout=TIMEOUT)


def test_lang_parameter_opens_in_chinese(page, voila_url):
    open_app(page, voila_url + "?lang=zh")
    assert "总成本" in page.inner_text(".wb-headline")


def test_compare_pins_a_and_shows_the_difference(page, voila_url):
    open_app(page, voila_url)
    before = total(page)
    page.get_by_role("button", name="Pin as A").click()
    page.wait_for_selector("table.wb-compare", timeout=TIMEOUT)
    type_into(page, "tokens", "4T")
    page.wait_for_function(f"document.querySelector('.wb-total .wb-card-value').textContent !== {before!r}",
                           timeout=TIMEOUT)
    page.wait_for_function("document.querySelector('table.wb-compare').textContent.match(/Compute\\s+[\\d,]+\\s+[\\d,]+\\s+\\+[1-9]/)",
                           timeout=TIMEOUT)
    text = page.inner_text("table.wb-compare")
    assert "Total" in text
    page.wait_for_function("document.querySelector('.wb-charts').textContent.includes('Scenario A against B')",
                           timeout=TIMEOUT)


def test_exports_are_offline_data_links(page, voila_url):
    open_app(page, voila_url)
    before = total(page)
    field(page, "params").locator("input[type=text]").fill("13B")
    field(page, "params").locator("input[type=text]").press("Enter")
    page.wait_for_function(f"document.querySelector('.wb-total .wb-card-value').textContent !== {before!r}",
                           timeout=TIMEOUT)
    # the files are made when asked for, from the plan as it is then
    for name, check in (("cost_lines.csv", lambda text: text.startswith("scenario_name,stage,category")),
                        ("scenario.json", lambda text: '"params": 13000000000' in text)):
        with page.expect_download(timeout=TIMEOUT) as download:
            page.locator(f"a.wb-download[download='{name}']").click()
        assert download.value.suggested_filename == name
        assert check(open(download.value.path(), encoding="utf-8-sig").read())  # the CSV carries a BOM, for Excel
    # the workbook, made by the kernel when clicked (issue 31)
    with page.expect_download(timeout=TIMEOUT) as download:
        page.locator("a.wb-download[download='plan.xlsx']").click()
    import io
    import openpyxl
    book = openpyxl.load_workbook(io.BytesIO(Path(download.value.path()).read_bytes()))  # the path has no suffix
    assert book.sheetnames[:3] == ["Summary", "Cost lines", "By stage"]
    assert book["Cost lines"]["G2"].value == "=D2*F2"
    page.get_by_role("button", name="Export charts (PNG)").click()
    page.wait_for_selector("a.wb-download[download='stage.png']", timeout=TIMEOUT)
    assert page.locator("a.wb-download[download$='.png']").count() == 6  # one per chart


def test_link_command_opens_the_app_on_its_scenario(page, voila_url):
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-m", "workbench.cli", "link", "--params", "34B", "--tokens", "3T",
                             "--pricing", "reserved_1y", "--lang", "zh", "--base", voila_url],
                            capture_output=True, text=True, timeout=120, check=True)
    local = next(line.split(":", 1)[1].strip() for line in result.stdout.splitlines() if line.startswith("Local:"))
    assert local.startswith(voila_url)
    open_app(page, local)
    # in Chinese the boxes write 340亿 and 3万亿, as a Chinese reader types them
    assert field(page, "params").locator("input[type=text]").input_value() == "340亿"
    assert field(page, "tokens").locator("input[type=text]").input_value() == "3万亿"
    assert field(page, "pricing").locator("select").input_value() == "包年（1 年期）"  # reserved_1y, labelled in Chinese
    assert "总成本" in page.inner_text(".wb-headline")


@pytest.mark.parametrize("query", ["gpu=TPUv4&price_per_gpu_hour=2.5", "active_params=10M", "n_gpus=8",
                                   "params=1T&tokens=20T&target_days=1", "params=1B&tokens=20B"])
def test_valid_plans_that_used_to_give_a_blank_page_render(page, voila_url, query):
    # issue 9 (1, 2): each of these links was a blank page
    open_app(page, voila_url + "?" + query)
    assert re.fullmatch(r"[\d,]+ USD", total(page)) and page.inner_text(".wb-banner").strip() == ""
    assert "nan" not in page.inner_text(".wb-headline").lower()


def test_link_errors_are_in_the_links_language(page, voila_url):
    open_app(page, voila_url + "?lang=zh&mfu=2&params=7,5B")
    banner = page.inner_text(".wb-banner")
    assert "部分链接参数未被应用" in banner and "超出允许范围" in banner and "含有逗号" in banner, banner


def test_serving_figures_shown_and_follow_the_link(page, voila_url):
    """The roofline's prices per million input and output tokens, in the headline, for the link's model."""
    open_app(page, voila_url + "?v=1&params=70B&gpu=H100-SXM5-80GB")
    text = page.inner_text(".wb-serving")
    est = __import__("workbench").estimate(params=70e9, gpu="H100-SXM5-80GB").details
    assert f"{est['serving_cost_per_million_input_tokens_usd']:,.3f} USD per million input tokens" in text
    assert f"{est['serving_cost_per_million_output_tokens_usd']:,.3f} USD per million output tokens" in text
    assert f"GPUs per replica {est['serving_replica_gpus']:.0f}" in text
    assert f"{est['serving_utilisation']:.0%} of capacity used" in text and "not in the total: the plan serves for 0 months" in text
    open_app(page, voila_url + "?v=1&params=70B&gpu=H100-SXM5-80GB&lang=zh&weight_precision=fp8")
    assert "每百万输入 token" in page.inner_text(".wb-serving")


def test_a_change_updates_the_charts_in_place(page, voila_url):
    """A typed value reaches the charts as new data for the view already shown, not as a new chart."""
    open_app(page, voila_url)
    page.wait_for_function("document.querySelector('.wb-charts').dataset.wbDraws === '1'", timeout=TIMEOUT)
    page.evaluate("document.querySelector('.wb-charts svg').dataset.wbFirst = 'yes'")
    before = chart_text(page)
    type_into(page, "tokens", "4T")
    page.wait_for_function("document.querySelector('.wb-charts').dataset.wbDraws === '2'", timeout=TIMEOUT)
    assert page.evaluate("document.querySelector('.wb-charts svg').dataset.wbFirst") == "yes"  # the same view
    assert chart_text(page) != before  # its axes and labels follow the new data
    # the link is a widget message of its own: wait for it rather than race the chart's draw
    page.wait_for_function("/tokens=4T/.test(document.querySelector('.wb-share-link').textContent)", timeout=TIMEOUT)
    timing = page.inner_text(".wb-timing")
    assert re.search(r"recomputed in \d+ ms · figures and chart data sent in \d+ ms", timing), timing
    # a new language is a new specification (translated titles): a full redraw, still correct
    page.get_by_role("button", name="简体中文").click()
    page.wait_for_function("document.querySelector('.wb-charts').textContent.includes('各阶段、各类别成本')",
                           timeout=TIMEOUT)
    assert page.evaluate("document.querySelector('.wb-charts svg').dataset.wbFirst") is None and not page.errors


PROGRAMME_TITLES = ("Cost per month by category", "Cumulative spend against each budget, with alert lines",
                    "Cost by workstream and category", "Unit costs per month")


def programme_total(page) -> str:
    return page.inner_text(".wb-programme-total .wb-card-value")


def test_programme_view_charts_cadence_and_file_round_trip(page, voila_url, tmp_path):
    page.goto(voila_url + "?view=programme&programme=assistant-7b", wait_until="commit")
    page.wait_for_selector(".wb-programme-total .wb-card-value", timeout=TIMEOUT)
    page.wait_for_function("titles => titles.every(t => (document.querySelector('.wb-programme-charts') || "
                           "{textContent: ''}).textContent.includes(t))", arg=list(PROGRAMME_TITLES), timeout=TIMEOUT)
    assert programme_total(page) == "6,721,187 USD"  # workbench plan --example, to the dollar
    from workbench.programmes import programme as pg
    crossings = page.inner_text(".wb-crossings")
    assert "100 %" in crossings and pg.example().month_label(11) in crossings  # crossed in month 11, a calendar month
    draws = page.evaluate("document.querySelector('.wb-programme-charts').dataset.wbDraws")
    # a release every 2 months instead of every month: typed into the slider's readout
    readout = page.locator(".wb-knob-every .widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('.wb-programme-total .wb-card-value').textContent !== "
                           "'6,721,187 USD'", timeout=TIMEOUT)
    changed = programme_total(page)
    page.wait_for_function("document.querySelector('.wb-programme-charts').dataset.wbDraws !== " + repr(draws),
                           timeout=TIMEOUT)
    page.wait_for_function("/every=2/.test(document.querySelector('.wb-share-link').textContent)", timeout=TIMEOUT)
    # the programme file, downloaded and loaded back: the same programme, the same figures
    with page.expect_download(timeout=TIMEOUT) as download:
        page.locator("a.wb-download[download='programme.json']").click()
    saved = tmp_path / "programme.json"
    download.value.save_as(saved)
    assert '"every_months": 2' in saved.read_text()
    with page.expect_file_chooser(timeout=TIMEOUT) as chooser:
        page.locator(".wb-programme-upload").click()
    chooser.value.set_files(str(saved))
    page.wait_for_function("[...document.querySelectorAll('.wb-programme select option:checked')]"
                           ".some(o => o.textContent.replace(/\\u00a0/g, ' ').startsWith('Loaded file: programme.json'))", timeout=TIMEOUT)
    assert programme_total(page) == changed
    with page.expect_download(timeout=TIMEOUT) as again:
        page.locator("a.wb-download[download='programme.json']").click()
    assert open(again.value.path(), encoding="utf-8").read() == saved.read_text()
    assert page.external_requests == [] and not page.errors and "Traceback" not in page.content()


def _edit(page, css, text):
    """Type ``text`` into the editor's control ``wb-ed-{css}`` and wait for the page to take it."""
    box = page.locator(f".wb-ed-{css} input").first
    box.fill(text)
    box.press("Enter")


def _open_section(page, index):
    header = page.locator(".wb-editor .jupyter-widget-Collapse-header").nth(index)
    header.click()
    page.wait_for_timeout(300)


def _settled(page, before):
    """Wait until the programme total differs from ``before`` and the figures are not greyed; the new total."""
    page.wait_for_function("b => { const v = document.querySelector('.wb-programme-total .wb-card-value'); "
                           "return v && v.textContent !== b && !document.querySelector('.wb-programme .wb-stale'); }",
                           arg=before, timeout=TIMEOUT)
    return programme_total(page)


def test_finance_lead_states_her_plan_on_the_page_alone(page, voila_url, tmp_path):
    """Issue 30's done-when: with no file edited, she turns the example into her plan (open-weights 70B, monthly
    fine-tunes, a year of serving, a budget typed as 3M, 5 FTE), reads the total, the first run and the calendar
    months 50 % and 80 % are crossed, applies a programme lever, and downloads a file that loads back to the same
    total. Every figure is checked against the engine on the downloaded file."""
    import json
    import re

    from workbench.programmes import programme as pg, timeline
    page.goto(voila_url + "?view=programme", wait_until="commit")
    page.wait_for_selector(".wb-programme-total .wb-card-value", timeout=TIMEOUT)
    total = programme_total(page)
    _open_section(page, 0)  # the plan: what it does, the model
    page.locator(".wb-ed-plan-kind select").select_option(label="fine-tune open weights and serve")
    total = _settled(page, total)
    _edit(page, "params", "70B")
    total = _settled(page, total)
    _open_section(page, 3)  # the workstreams: the pre-training one is gone; the fine-tune every month from month 1
    assert page.locator(".wb-ed-ws-1-name").count() == 0 and "pre-training" not in page.locator(".wb-ed-ws-0-name input").input_value()
    _edit(page, "ws-0-start", "1")
    total = _settled(page, total)
    _edit(page, "ws-0-cycles", "12")
    total = _settled(page, total)
    _open_section(page, 1)  # the budget, as she writes it
    _edit(page, "budget-total", "3M")
    page.wait_for_function("document.querySelector('.wb-crossings') && "
                           "document.querySelector('.wb-crossings').textContent.includes('3,000,000')", timeout=TIMEOUT)
    _open_section(page, 2)  # staff: 5 people
    _edit(page, "staff-0-fte", "5")
    total = _settled(page, total)
    first = page.inner_text(".wb-first-run .wb-card-value")
    assert "First fine-tune" in page.inner_text(".wb-first-run") and not first.startswith("0 USD")
    crossings = page.inner_text(".wb-crossings")
    assert re.search(r"50 %.*80 %", crossings, re.S)
    # the file she downloads is the plan on the page: the engine gives the same total, first run and crossings
    with page.expect_download(timeout=TIMEOUT) as download:
        page.locator("a.wb-download[download='programme.json']").click()
    saved = tmp_path / "mine.json"
    download.value.save_as(saved)
    plan = pg.load(saved)
    assert plan.base["plan_kind"] == "open_weights" and plan.base["params"] == 70e9
    assert plan.budgets["total"] == 3e6 and plan.staff[0].fte == 5
    assert [w.stages for w in plan.workstreams] == [("sft", "preference", "evaluation")]
    assert plan.workstreams[0].every_months == 1 and plan.workstreams[0].cycles == 12
    tl = timeline.evaluate(plan)
    assert total == f"{tl.total_cost_usd:,.0f} USD"
    assert first.startswith(f"{tl.first_run_split()[0]:,.0f} USD")
    alerts = tl.alerts().query("resource == 'total'").set_index("percent")
    for percent in (50.0, 80.0):
        month = alerts.loc[percent, "calendar_month"]
        assert (month or "not reached") in crossings
    assert alerts.loc[50.0, "calendar_month"] is not None  # her plan crosses half its budget within the year
    # a lever for the whole plan, applied on the page
    page.locator(".wb-plevers-find").click()
    page.wait_for_selector(".wb-plevers-rows button", timeout=TIMEOUT)
    page.locator(".wb-plevers-rows button").first.click()
    cheaper = _settled(page, total)
    assert int(cheaper.split()[0].replace(",", "")) < int(total.split()[0].replace(",", ""))
    # downloaded and loaded back: the same total
    with page.expect_download(timeout=TIMEOUT) as again:
        page.locator("a.wb-download[download='programme.json']").click()
    after = tmp_path / "after.json"
    again.value.save_as(after)
    assert f"{timeline.evaluate(pg.load(after)).total_cost_usd:,.0f} USD" == cheaper
    page.goto(voila_url + "?view=programme", wait_until="commit")
    page.wait_for_selector(".wb-programme-total .wb-card-value", timeout=TIMEOUT)
    with page.expect_file_chooser(timeout=TIMEOUT) as chooser:
        page.locator(".wb-programme-upload").click()
    chooser.value.set_files(str(after))
    page.wait_for_function("v => document.querySelector('.wb-programme-total .wb-card-value').textContent === v",
                           arg=cheaper, timeout=TIMEOUT)
    # and the link of her plan opens it: the whole plan is in the link
    link = page.inner_text(".wb-share-link")
    assert "plan=" in link and json.loads(after.read_text())["budgets"]["total"] == 3e6
    page.goto(link, wait_until="commit")
    page.wait_for_function("v => { const e = document.querySelector('.wb-programme-total .wb-card-value'); "
                           "return e && e.textContent === v; }", arg=cheaper, timeout=TIMEOUT)
    assert page.external_requests == [] and not page.errors and "Traceback" not in page.content()


def test_an_owned_fleet_shows_its_table_and_when_owning_beats_renting(page, voila_url, tmp_path):
    """Issue 28: a programme file with an owned fleet, loaded in Chinese and CNY: the fleets table (bought, months,
    committed, paid idle, used, break-even) and the own-or-rent chart, with the engine's figures."""
    import json

    from workbench.programmes import programme as pg, timeline
    from workbench.report import programme_views as pv
    plan = {"schema_version": 1, "name": "owned", "horizon_months": 24,
            "base": {"params": 7e9, "n_gpus": 64, "requests_per_day": 1e6, "staff_fte": 0, "pricing": "self_hosted"},
            "fleets": [{"name": "rack", "gpu": "H100-SXM", "count": 64, "pricing": "self_hosted"}],
            "workstreams": [{"name": "ft", "stages": ["pretrain", "sft"], "every_months": 3, "cycles": 8,
                             "serve_months": 3}]}
    (tmp_path / "owned.json").write_text(json.dumps(plan))
    expected = pv.fleets_table(timeline.evaluate(pg.loads(json.dumps(plan))), "CNY", "zh").iloc[0].tolist()
    page.goto(voila_url + "?view=programme&programme=assistant-7b&lang=zh&currency=CNY", wait_until="commit")
    page.wait_for_selector(".wb-programme-total .wb-card-value", timeout=TIMEOUT)
    with page.expect_file_chooser(timeout=TIMEOUT) as chooser:
        page.locator(".wb-programme-upload").click()
    chooser.value.set_files(str(tmp_path / "owned.json"))
    page.wait_for_selector(".wb-fleets td", timeout=TIMEOUT)
    cells = [c.strip() for c in page.locator(".wb-fleets td").all_inner_texts()]
    assert cells == [str(v) for v in expected] and "自建" in cells and cells[-1].startswith("使用 ")
    page.wait_for_function("(document.querySelector('.wb-programme-charts') || {textContent: ''}).textContent"
                           ".includes('自有集群与按小时租用：累计成本')", timeout=TIMEOUT)
    assert page.external_requests == [] and not page.errors and "Traceback" not in page.content()


def test_a_billing_export_uploaded_in_the_programme_view_shows_plan_against_actual(page, voila_url, tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from focus_generator import write_export
    expected = write_export(tmp_path / "bill.csv", 2_000, seed=5)  # March 2025: plan month 1
    page.goto(voila_url + "?view=programme&programme=assistant-7b", wait_until="commit")
    page.wait_for_selector(".wb-programme-total .wb-card-value", timeout=TIMEOUT)
    with page.expect_file_chooser(timeout=TIMEOUT) as chooser:
        page.locator(".wb-bill-upload").click()
    chooser.value.set_files(str(tmp_path / "bill.csv"))
    page.wait_for_function("(document.querySelector('.wb-bill-chart') || {textContent: ''}).textContent"
                           ".includes('Cumulative billed spend: plan (dashed) against actual (solid)')", timeout=TIMEOUT)
    message = page.inner_text(".wb-bill-message")
    assert "2,000 charges read from bill.csv; 0 rows rejected" in message
    assert f"actual to date {expected['total']:,.0f} USD" in message
    assert "Compute" in page.inner_text(".wb-bill-chart") and "Planned and actual to date by team" in page.inner_text(
        ".wb-bill-details")
    assert "Compute budget 3,000,000 USD: 100 % not reached" in message  # the budget's forecast, beside the bill
    tables = page.inner_text(".wb-bill-tables")
    for title in ("Plan against actual to date, by category", "Plan against actual, by calendar month the bill covers",
                  "Actual spend against each budget's alert lines"):
        assert title in tables
    with page.expect_download(timeout=TIMEOUT) as download:
        page.locator("a.wb-download[download='bill_review.xlsx']").click()
    assert download.value.suggested_filename == "bill_review.xlsx"
    assert page.external_requests == [] and not page.errors and "Traceback" not in page.content()


def test_a_lever_applied_from_the_table_changes_the_scenario_and_its_total(page, voila_url):
    from workbench.programmes.levers import levers
    expected = levers().set_index("lever").loc["fp8", "total_usd"]
    open_app(page, voila_url + "?checkpoint_interval_hours=24")
    # the boundary crossed is said beside its control and in the notes
    assert "Checkpoint interval: 24 is" in page.inner_text(".wb-notes")
    page.locator("button.wb-levers-find").click()
    page.wait_for_selector("button.wb-lever-checkpoint_interval", timeout=TIMEOUT)
    assert "Checkpoint at the Young/Daly interval" in page.inner_text(".wb-levers")
    open_app(page, voila_url)
    before = total(page)
    page.locator("button.wb-levers-find").click()
    page.wait_for_selector("button.wb-lever-fp8", timeout=TIMEOUT)
    assert "FP8 training: saves" in page.inner_text(".wb-levers")
    page.locator("button.wb-lever-fp8").click()
    page.wait_for_function(f"document.querySelector('.wb-total .wb-card-value').textContent !== {before!r}",
                           timeout=TIMEOUT)
    assert f"{expected:,.0f}" in total(page).replace("\u00a0", " ") or f"{expected / 1e6:.2f}" in total(page)
    assert "fp8" in page.url and "n_gpus=" in page.url  # the link carries the lever, its cluster kept
    assert not page.locator("button.wb-lever-fp8").count()  # the table was the old scenario's: cleared
    assert page.external_requests == [] and not page.errors and "Traceback" not in page.content()


def test_memory_per_gpu_is_shown_and_a_layout_that_does_not_fit_greys_the_totals(page, voila_url):
    open_app(page, voila_url)
    memory = page.inner_text(".wb-memory")
    assert re.search(r"Memory per GPU: [\d.]+ GiB of 72\.0 GiB usable \(80 GiB x 0\.9\)", memory)
    assert "layout TP" in memory and "fitted on published runs" in memory
    assert page.locator(".wb-unfit").count() == 0
    # 405B on 16 H100 fits with no layout: the totals are struck through and the message names the field to change
    before = total(page)
    type_into(page, "params", "405B")
    page.wait_for_function(f"document.querySelector('.wb-total .wb-card-value').textContent !== {before!r}",
                           timeout=TIMEOUT)  # the 405B plan drawn before the next box is typed, as a reader would
    type_into(page, "n_gpus", "16")
    page.wait_for_selector(".wb-cards.wb-unfit", timeout=TIMEOUT)
    message = page.inner_text(".wb-unfit-message")
    assert message.startswith("Does not fit in memory: needs") and "Set GPU count to at least" in message
    assert "The totals below assume it fits." in message
    style = page.evaluate("getComputedStyle(document.querySelector('.wb-unfit .wb-total .wb-card-value')).textDecorationLine")
    assert style == "line-through"
    # the fix: a count that fits clears it
    type_into(page, "n_gpus", "256")
    page.wait_for_function("document.querySelector('.wb-cards.wb-unfit') === null", timeout=TIMEOUT)


def test_memory_line_and_extrapolated_prior_in_chinese(page, voila_url):
    open_app(page, voila_url + "?v=1&gpu=B200&lang=zh")
    memory = page.inner_text(".wb-memory")
    assert "每卡显存" in memory and "外推：该代际没有公开训练记录" in memory and "MLPerf" in memory


# -- issue 31: what a reader sees, in English and in Chinese ---------------------------------------------------
SNAKE_CASE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")
EXPONENT = re.compile(r"\b\d+(?:\.\d+)?e[+-]?\d+\b")
#: English a Chinese page may show: units, formats, ids and names (GPU and model names, the language toggle).
ALLOWED_IN_CHINESE = set(
    "GPU GPUs token SFT FOCUS USD CNY MFU P10 P50 P90 TP PP DP ZeRO FP fp bf kW GB GiB TB TiB Gb MB FLOP CPU AI QA "
    "CSV JSON TOML PNG Excel Parquet gz csv API KV LoRA Young Daly YYYY MM English Llama DeepSeek Hopper Chinchilla "
    "Besiroglu Hoffmann Lee".split()) | {"USDCNY"}  # the currency toggle's two buttons read as one word


def reader_pages(page, voila_url, tmp_path, query):
    """The visible text of the planner (a refused value from its link, a budget warning, the lever panel shown)
    and of the programme view with a bill loaded, without the share links (addresses) and the uploaded file's name."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from focus_generator import write_export
    write_export(tmp_path / "bill.csv", 2_000, seed=5)
    open_app(page, voila_url + "?v=1&budget_usd=1M&params=abc" + query)
    page.locator("button.wb-levers-find").click()
    page.wait_for_selector(".wb-levers button.wb-lever-apply", timeout=TIMEOUT)
    page.locator(".wb-levers-show-all").click()
    page.wait_for_function("document.querySelector('.wb-levers').textContent.includes("
                           "document.documentElement.lang === 'zh' ? '此处不适用' : 'Not applicable') || "
                           "/此处不适用|Not applicable/.test(document.querySelector('.wb-levers').textContent)",
                           timeout=TIMEOUT)
    texts = {"planner": page.inner_text("body")}
    page.goto(voila_url + "?view=programme&programme=assistant-7b" + query, wait_until="commit")
    page.wait_for_selector(".wb-programme-total .wb-card-value", timeout=TIMEOUT)
    with page.expect_file_chooser(timeout=TIMEOUT) as chooser:
        page.locator(".wb-bill-upload").click()
    chooser.value.set_files(str(tmp_path / "bill.csv"))
    page.wait_for_selector(".wb-bill-tables table", timeout=TIMEOUT)
    page.wait_for_selector(".wb-bill-details table", timeout=TIMEOUT)
    page.wait_for_function("(document.querySelector('.wb-bill-chart') || {textContent: ''}).textContent.length > 0",
                           timeout=TIMEOUT)
    texts["programme and bill"] = page.inner_text("body")
    # what the upload buttons show once a file is loaded: their words, not ipywidgets' file counter ("(1)")
    shown = page.evaluate("""() => [...document.querySelectorAll('.widget-upload')].map(b => {
        const after = getComputedStyle(b, '::after').content.replace(/^"|"$/g, '');
        return getComputedStyle(b).fontSize === '0px' ? after : b.textContent; })""")
    texts["upload buttons"] = " | ".join(shown)
    assert page.external_requests == [] and not page.errors
    return {name: re.sub(r"https?://\S+|bill\.csv", " ", text) for name, text in texts.items()}


def test_the_english_pages_show_no_field_id_and_no_exponent(page, voila_url, tmp_path):
    texts = reader_pages(page, voila_url, tmp_path, "")
    for name, text in texts.items():
        assert SNAKE_CASE.findall(text) == [], name
        assert EXPONENT.findall(text) == [], name
    assert "Parameters 'abc': is not a number; allowed: a number from 1M to 10T" in texts["planner"]
    assert "over the budget" in texts["planner"] and "Show all levers" in texts["planner"]
    assert "Plan against actual to date, by category" in texts["programme and bill"]
    assert texts["upload buttons"].count("|") >= 1 and not re.search(r"\(\d+\)", texts["upload buttons"])
    assert "bill" in texts["upload buttons"].lower(), texts["upload buttons"]


def test_the_chinese_pages_read_in_chinese_with_renminbi_in_yuan(page, voila_url, tmp_path):
    from workbench.reference import catalog
    from workbench.programmes import programme_presets, timeline
    from workbench.reference.prices import api_prices
    names = set()  # ids a Chinese page shows as they are: GPUs, providers, the plan's own tag values
    for row in catalog.accelerators().to_dict("records"):
        names |= set(re.findall(r"[A-Za-z]{2,}", f"{row['id']} {row['name']} {row['aliases']}"))
    names |= set(re.findall(r"[A-Za-z]{2,}", " ".join(map(str, api_prices()["provider"]))))
    # the clouds' own names and region ids (cn-beijing), as their consoles write them
    from workbench.reference.i18n import choice_label
    from workbench.reference.prices import providers
    from workbench.plan.scenario_fields import all_regions
    names |= set(re.findall(r"[A-Za-z]{2,}", " ".join(choice_label("provider", p, "zh") for p in providers())))
    names |= set(re.findall(r"[A-Za-z]{2,}", " ".join(all_regions())))
    lines = timeline.evaluate(programme_presets.preset("assistant-7b")).lines
    for key in ("team", "project", "model_version"):
        names |= set(re.findall(r"[A-Za-z]{2,}", " ".join(map(str, lines[key].unique()))))
    texts = reader_pages(page, voila_url, tmp_path, "&lang=zh&currency=CNY")
    from workbench.bill import actuals, review  # the bill's own tag values (teams, projects) are its data
    tags = review.compare(actuals.read_focus(tmp_path / "bill.csv"),
                          timeline.evaluate(programme_presets.preset("assistant-7b"))).tags
    for table in tags.values():
        names |= set(re.findall(r"[A-Za-z]{2,}", " ".join(map(str, table["value"]))))
    for name, text in texts.items():
        text = text.replace("'abc'", "")  # the value typed in the link, echoed in its refusal
        if name == "upload buttons":  # their words only (no money): in Chinese, without the file counter
            assert "载入账单" in text and not re.search(r"\(\d+\)", text), text
            continue
        english = sorted(set(re.findall(r"[A-Za-z]{2,}", text)) - ALLOWED_IN_CHINESE - names)
        assert english == [], (name, english)
        assert re.findall(r"\d CNY", text) == [], name  # money is written ¥1,234.57 万, not 12,345,679 CNY
        assert "¥" in text and ("万" in text or "亿" in text), name
    assert "参数量 = 'abc'：不是数字" in texts["planner"]
