"""The planner's widgets driven from Python (fast); the browser tests check the same in Chromium."""
import base64
import io
import json

import openpyxl
import pytest

from workbench import Scenario, ScenarioError, estimate
from workbench.app.ui import Planner, format_quantity, parse_app_query


@pytest.fixture(scope="module")
def planner():
    return Planner()


@pytest.mark.parametrize("value,text", [(7e9, "7B"), (2e12, "2T"), (1418091, "1.41809M"), (0.346, "0.346"),
                                        (4096, "4096"), (None, ""), (1.5e15, "1.5P")])
def test_format_quantity_round_trips(value, text):
    from workbench.plan.scenario import parse_quantity
    assert format_quantity(value) == text
    if value is not None:
        assert parse_quantity(text) == pytest.approx(value, rel=1e-5)


def test_parse_app_query_keeps_good_values_and_reports_bad_ones():
    values, options, errors = parse_app_query("?v=1&params=70B&mfu=2&lang=zh&currency=CNY&foo=1&active_params=80B")
    assert values == {"params": 7e10}
    assert options == {"lang": "zh", "currency": "CNY"}
    # messages come in the link's language
    # for the app's reader: the field's label, not its id, and no exponents
    assert any(e.startswith("MFU = 2：超出允许范围；允许：0.01 到 0.95 之间的数字") for e in errors), errors
    assert any(e.startswith("foo = '1'：未知字段") for e in errors), errors
    assert any(e.startswith("激活参数量 = 800 亿：超过总参数量 700 亿") for e in errors), errors
    _, _, english = parse_app_query("?params=70B&mfu=2&foo=1&active_params=80B")
    assert any(e.startswith("MFU 2: is out of range") for e in english), english
    assert any(e.startswith("foo='1': unknown field") for e in english)
    assert any(e.startswith("Active parameters 80 B: exceeds Parameters 70 B") for e in english), english


def test_repeated_url_key_follows_the_same_rule_as_from_query():
    # issue 9 (10): ?params=70B&params=7B took the last value silently; from_query rejects it
    with pytest.raises(ScenarioError, match="^params='7B': is given twice in the URL"):
        Scenario.from_query("params=70B&params=7B")
    values, _, errors = parse_app_query("params=70B&params=7B&tokens=1T")
    assert values == {"tokens": 1e12} and errors == ["Parameters '7B': is given twice in the URL; allowed: one value per field"]


def test_planner_matches_estimate(planner):
    assert planner.est.total_cost_usd == pytest.approx(estimate().total_cost_usd)
    assert "1,667," in planner.headline.value and "USD" in planner.headline.value


def test_typed_value_validates_next_to_its_control():
    p = Planner()
    before = p.est.total_cost_usd
    p.controls["params"].text.value = "abc"
    assert "Parameters &#x27;abc&#x27;: is not a number; allowed: a number from 1M to 10T" in p.controls["params"].message.value
    assert p.est.total_cost_usd == before and p.values["params"] == 7e9
    p.controls["params"].text.value = "70B"
    assert p.controls["params"].message.value == ""
    assert p.est.scenario.params == 7e10 and p.est.total_cost_usd > before


def test_rejected_value_keeps_its_message_while_other_fields_change():
    p = Planner()
    p.controls["seq_len"].text.value = "4096.5"
    p.controls["params"].text.value = "13B"
    assert p.scenario.params == 1.3e10 and p.scenario.seq_len == 4096
    assert "not a whole number" in p.controls["seq_len"].message.value
    p.controls["seq_len"].text.value = "8192"
    assert p.controls["seq_len"].message.value == "" and p.scenario.seq_len == 8192


def test_cross_field_error_keeps_last_valid_state():
    p = Planner()
    before = p.est.total_cost_usd
    p.controls["active_params"].text.value = "8B"  # above 7B total parameters
    assert "exceeds Parameters" in p.controls["active_params"].message.value
    assert "exceeds Parameters" in p.banner.value
    assert p.est.total_cost_usd == before
    p.controls["params"].text.value = "70B"  # now valid again
    assert p.est.scenario.active_params == 8e9 and p.banner.value == ""


def test_auto_button_restores_the_prior():
    p = Planner()
    p.controls["mfu"].text.value = "0.5"
    assert p.est.mfu == 0.5
    p.controls["mfu"]._auto_clicked(None)
    assert p.scenario.mfu is None and p.est.mfu == pytest.approx(p.est.details["mfu_prior"])
    assert p.controls["mfu"].text.placeholder == "auto: 0.266"


def test_preset_language_currency_compare_and_link():
    p = Planner()
    p.preset.value = "llama2-70b"
    assert p.scenario.params == 7e10 and p.controls["params"].text.value == "70B"
    p.language.value = "zh"
    assert "参数量" in p.controls["params"].label.value and p.preset.value == "llama2-70b"
    assert p.scenario.params == 7e10  # relabelling does not re-apply the preset
    p.currency_toggle.value = "CNY"
    assert "¥" in p.headline.value and "万" in p.headline.value  # renminbi as a Chinese budget writes it
    assert p.link.query.endswith("lang=zh&currency=CNY")
    assert Scenario.from_query(p.link.query, ignore=("lang", "currency")) == p.scenario
    p._pin(None)
    p.controls["tokens"].text.value = "3T"
    assert "B - A" in p.compare_table.value and "+" in p.compare_table.value


def test_downloads_and_upload_round_trip():
    p = Planner(values={"params": 1.3e10})
    assert [f["name"] for f in p.downloads.files] == ["cost_lines.csv", "scenario.json", "plan.xlsx"]
    scenario_json = p.downloads.payload("scenario.json").decode()
    assert Scenario.from_json(scenario_json).params == 1.3e10
    payload = p.downloads.payload("cost_lines.csv")
    assert payload.startswith(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark: Excel on Chinese Windows reads it as UTF-8
    csv_text = payload.decode("utf-8-sig")
    assert csv_text.splitlines()[0].startswith("scenario_name,stage,category,item,quantity,unit,unit_cost_usd,cost_usd")
    # made from the plan as it is when asked for, in the page's currency
    p.controls["params"].text.value = "20B"
    p.currency_toggle.value = "CNY"
    assert Scenario.from_json(p.downloads.payload("scenario.json").decode()).params == 2e10
    assert "cost_cny" in p.downloads.payload("cost_lines.csv").decode().splitlines()[0]
    # the workbook of the plan as it is, in the page's language and currency (issue 31)
    p.language.value = "zh"
    book = openpyxl.load_workbook(io.BytesIO(p.downloads.payload("plan.xlsx")))
    assert book.sheetnames[:2] == ["摘要", "成本明细"] and book["摘要"]["B3"].value == p.scenario.cny_per_usd
    assert book["摘要"]["C4"].value > book["摘要"]["B4"].value  # the P10-P90 range of the page's Monte Carlo
    # a click's message is answered with the file; anything else is ignored
    sent = []
    p.downloads.send = sent.append
    p.downloads._requested(p.downloads, {"request": "scenario.json"}, [])
    p.downloads._requested(p.downloads, {"request": "/etc/passwd"}, [])
    p.downloads._requested(p.downloads, "garbage", [])
    p.downloads._requested(p.downloads, {"request": ["cost_lines.csv"]}, [])  # unhashable: ignored, no raise
    assert len(sent) == 1 and sent[0]["name"] == "scenario.json" and sent[0]["mime"] == "application/json"
    assert Scenario.from_json(base64.b64decode(sent[0]["data"]).decode()).params == 2e10
    fresh = Planner()
    fresh._upload_changed({"new": [{"name": "s.json", "content": memoryview(scenario_json.encode())}]})
    assert fresh.scenario.params == 1.3e10
    fresh._upload_changed({"new": [{"name": "bad.json", "content": memoryview(b'{"params": -1}')}]})
    assert "Parameters -1: is out of range" in fresh.upload_message.value and fresh.scenario.params == 1.3e10


def test_advanced_controls_are_built_on_first_opening():
    p = Planner()
    assert "restart_minutes" not in p.controls
    index = p.advanced_groups.index("failures")
    p.advanced.selected_index = index
    assert "restart_minutes" in p.controls and len(p.advanced.children[index].children) > 3
    p.controls["restart_minutes"].text.value = "60"
    assert p.scenario.restart_minutes == 60


def test_errors_never_escape_a_callback(monkeypatch):
    p = Planner()
    before = p.est.total_cost_usd
    monkeypatch.setattr("workbench.app.ui.estimate", lambda s: 1 / 0)
    p.controls["tokens"].text.value = "3T"  # recompute raises inside the callback
    assert "could not be computed" in p.banner.value and "ZeroDivisionError" not in p.banner.value
    # the page goes back to the last valid scenario: the control and the figures agree
    assert p.values["tokens"] == 2e12 and p.controls["tokens"].text.value == "2T" and p.est.total_cost_usd == before


def test_html_is_escaped():
    p = Planner()
    p._show_banner(["<script>alert(1)</script>"])
    assert "<script>" not in p.banner.value and "&lt;script&gt;" in p.banner.value


def test_recompute_time_is_measured(planner):
    assert 0 < planner.last_recompute_ms < 5000


def test_notebooks_have_no_outputs():
    from pathlib import Path
    for path in (Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"):
        nb = json.loads(path.read_text())
        assert all(not cell.get("outputs") for cell in nb["cells"]), path
        assert all(cell.get("execution_count") is None for cell in nb["cells"] if cell["cell_type"] == "code"), path


def test_hub_links_come_from_the_single_user_environment():
    from workbench.app.ui import hub_links
    assert hub_links({}) == {}
    assert hub_links({"JUPYTERHUB_SERVICE_PREFIX": "/user/alice/"}) == {}  # no user: not a hub's kernel
    assert hub_links({"JUPYTERHUB_USER": "alice", "JUPYTERHUB_SERVICE_PREFIX": "/user/alice/",
                      "JUPYTERHUB_BASE_URL": "/"}) == {"hub_service_prefix": "/user/alice/",
                                                       "hub_user_redirect": "/hub/user-redirect/"}
    assert hub_links({"JUPYTERHUB_USER": "bo b", "JUPYTERHUB_SERVICE_PREFIX": "/jh/user/bo%20b",
                      "JUPYTERHUB_BASE_URL": "/jh/"}) == {"hub_service_prefix": "/jh/user/bo%20b/",
                                                          "hub_user_redirect": "/jh/hub/user-redirect/"}


def test_shared_layout_and_style_models_never_change_after_they_are_made():
    # widgets share Layout/Style models (first paint); a change to one would reach every widget that shares it
    p = Planner()
    shared = list(p.shared._made.values())
    before = [m.get_state() for m in shared]
    for i in range(len(p.advanced_groups)):  # every group's controls built
        p.advanced.selected_index = i
    p.language.value = "zh"
    p.currency_toggle.value = "CNY"
    p.controls["params"].text.value = "-5"  # a message shown
    p.controls["params"].text.value = "13B"
    p.preset.value = next(v for _, v in p.preset.options if v)
    p.controls["mfu"].auto.click() if p.controls["mfu"].auto else None
    p._pin(None)
    p.language.value = "en"
    assert len(p.controls) > 40  # every advanced control was built, sharing the same models
    assert [m.get_state() for m in shared] == before  # and nothing changed a shared one
    for (cls, settings), model in p.shared._made.items():
        assert model.get_state() == cls(**dict(settings)).get_state()
    assert len({id(c.label.layout) for c in p.controls.values()}) == 1


def test_menu_choices_read_as_words_in_each_language_and_keep_their_ids():
    p = Planner(lang="zh")
    menu = p.controls["pricing"].menu
    assert dict(menu.options)["抢占式（竞价，可能被回收）"] == "spot"
    menu.value = "reserved_3y"
    assert p.est.scenario.pricing == "reserved_3y" and "pricing=reserved_3y" in p.link.query
    p.language.value = "en"
    assert menu.label == "reserved, 3 years" and menu.value == "reserved_3y"
    assert p.est.scenario.pricing == "reserved_3y"
    assert "H100-SXM5-80GB" in p.controls["gpu"].menu.options  # ids everyone reads stay as they are


def test_figures_of_the_last_valid_inputs_are_marked_while_a_value_is_refused():
    p = Planner()
    p.controls["params"].text.value = "abc"
    assert "wb-stale" in p.chart._dom_classes and "wb-stale" in p.headline._dom_classes
    assert "correct Parameters to update them" in p.banner.value
    p.controls["params"].text.value = "13B"
    assert "wb-stale" not in p.chart._dom_classes and p.banner.value == ""
    p.controls["active_params"].text.value = "20B"  # valid alone, above params: a cross-field rule
    assert "wb-stale" in p.chart._dom_classes and "exceeds Parameters" in p.banner.value
    p.controls["active_params"].text.value = ""
    assert "wb-stale" not in p.chart._dom_classes and p.est.scenario.params == 13e9


def test_a_refused_value_stays_named_after_other_changes_and_in_another_language():
    p = Planner()
    p.controls["params"].text.value = "abc"
    p.controls["tokens"].text.value = "3T"  # a valid change elsewhere is applied ...
    assert p.est.scenario.tokens == 3e12
    assert "wb-stale" in p.figures._dom_classes  # ... but the refused value still holds the figures back
    assert "correct Parameters to update them" in p.banner.value
    p.png_links.value = "<a>old.png</a>"
    p.controls["tokens"].text.value = "4T"
    assert p.png_links.value == ""  # PNGs exported before a change are not offered as the new figures
    p.language.value = "zh"
    assert "请更正“参数量”以更新" in p.banner.value and "Parameters" not in p.banner.value
    assert "abc" in p.controls["params"].message.value and "allowed" not in p.controls["params"].message.value
    p.controls["params"].text.value = "13B"
    assert p.banner.value == "" and "wb-stale" not in p.figures._dom_classes


def test_a_comparison_says_what_a_and_b_are_and_what_changed():
    p = Planner()
    p._pin(None)
    assert "A: the pinned scenario; B: the current inputs. Changed: nothing yet" in p.compare_table.value
    p.controls["params"].text.value = "13B"
    p.controls["pricing"].menu.value = "spot"
    assert "Changed: Parameters 7B → 13B; Pricing mode on-demand → spot (interruptible)" in p.compare_table.value
    p.language.value = "zh"
    assert "改动：参数量 70 亿 → 130 亿；计费方式 按量付费 → 抢占式（竞价，可能被回收）" in p.compare_table.value


def test_ab_differences_show_enough_digits_to_differ_and_an_empty_name_as_none():
    from workbench.report.views import scenario_differences
    assert scenario_differences(Scenario(tokens=2e12), Scenario(tokens=2.0004e12)) == [
        ("Training tokens", "2T", "2.0004T")]
    assert scenario_differences(Scenario(mfu=0.4), Scenario(mfu=0.40000001)) == [("MFU", "0.4", "0.40000001")]
    assert scenario_differences(Scenario(name="a"), Scenario()) == [("Scenario name", "a", "—")]
    assert scenario_differences(Scenario(), Scenario(mfu=0.3)) == [("MFU", "auto", "0.3")]


def test_chinese_boxes_write_quantities_as_a_chinese_reader_types_them():
    """In Chinese a box shows 700亿 and 2万亿 (no M/B, no thousands comma a field would refuse), and reads them back."""
    p = Planner(lang="zh", currency="CNY")
    assert p.controls["params"].text.value == "70亿" and p.controls["tokens"].text.value == "2万亿"
    p.controls["params"].text.value = "700亿"
    assert p.values["params"] == 7e10 and p.controls["params"].message.value == ""
    p.language.value = "en"
    assert p.controls["params"].text.value == "70B"


def test_a_provider_renting_the_gpu_only_by_the_month_takes_the_plan_there():
    """A finance lead picks 天翼云 for an H800: the plan is rented by the month (the only way that provider rents it),
    not refused for the default on demand; the price line shows the rent as quoted."""
    p = Planner(lang="zh", currency="CNY")
    p.controls["gpu"].menu.value = "H800-SXM5-80GB"
    p.controls["provider"].menu.value = "ctyun"
    assert p.scenario.provider == "ctyun" and p.scenario.pricing == "monthly"
    assert p.controls["pricing"].menu.value == "monthly" and not p.controls["pricing"].rejected
    assert "¥7 万/8 卡服务器·月" in p.headline.value
    assert "计费方式已改为“包月（按整月计费）”" in p.banner.value  # said, not done silently
    p.controls["provider"].menu.value = "median"  # back to the typical price: and to the default way of buying
    assert p.scenario.provider == "median" and p.scenario.pricing == "on_demand"
    p.controls["pricing"].menu.value = "monthly"  # the reader's own choice: no typical monthly price, said in Chinese
    assert p.scenario.pricing == "on_demand"
    assert "没有包月的典型价格" in p.banner.value and "云擎天下（算力租赁商）" in p.banner.value


def test_the_pricing_the_page_chose_for_a_provider_goes_back_with_it():
    """From the attack: after 天翼云 (monthly only), choosing another provider kept the monthly mode the page had
    chosen, and that provider was refused."""
    p = Planner()
    p.controls["gpu"].menu.value = "H800-SXM5-80GB"
    p.controls["provider"].menu.value = "ctyun"
    assert p.scenario.pricing == "monthly" and "rents H800-SXM5-80GB only that way" in p.banner_text
    p.controls["provider"].menu.value = "deepseek-v3-report"
    assert p.scenario.provider == "deepseek-v3-report" and p.scenario.pricing == "on_demand"
    # a mode the reader chose stays
    p.controls["pricing"].menu.value = "spot"
    p.controls["provider"].menu.value = "median"
    assert p.scenario.pricing == "spot"


def test_the_readers_own_pricing_comes_back_and_a_typed_price_is_not_switched():
    """From the second attack: reserved for a year on AWS, then 天翼云 (monthly), then AWS again came back on demand;
    and a typed price, valid in any mode, was switched to monthly."""
    p = Planner()
    p.controls["pricing"].menu.value = "reserved_1y"
    p.controls["provider"].menu.value = "aws"
    p.controls["gpu"].menu.value = "H800-SXM5-80GB"
    p.controls["provider"].menu.value = "ctyun"
    assert p.scenario.pricing == "monthly"
    p.controls["provider"].menu.value = "aws"
    p.controls["gpu"].menu.value = "H100-SXM5-80GB"
    assert (p.scenario.provider, p.scenario.pricing) == ("aws", "reserved_1y")
    typed = Planner(values={"gpu": "H800-SXM5-80GB", "price_per_gpu_hour": 2.0})
    typed.controls["provider"].menu.value = "ctyun"
    assert typed.scenario.pricing == "on_demand" and typed.scenario.price_per_gpu_hour == 2.0
