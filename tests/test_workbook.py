"""Workbooks (issue 31): written by `workbench estimate|plan --xlsx`, recalculated by a real spreadsheet engine
(LibreOffice headless, installed by .ci/run), their totals are the JSON's; their costs are live formulas; text
that a spreadsheet would run stays text."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from workbench import Scenario, estimate
from workbench.programmes import programme as pg, timeline
from workbench.report import workbook

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")


def recalculated(path: Path, tmp_path: Path) -> openpyxl.Workbook:
    """``path`` opened, recalculated and saved by LibreOffice, read back with the values it computed."""
    if SOFFICE is None:
        pytest.fail("LibreOffice (soffice) not found: install Debian's libreoffice-calc-nogui (bash .ci/run does)")
    out = tmp_path / "recalculated"
    profile = tmp_path / "lo-profile"  # its own profile: tests running at once do not share LibreOffice's lock
    subprocess.run([SOFFICE, f"-env:UserInstallation=file://{profile}", "--headless", "--calc", "--convert-to", "xlsx",
                    "--outdir", str(out), str(path)], check=True, capture_output=True, timeout=180)
    return openpyxl.load_workbook(out / path.name, data_only=True)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, check=True)


def test_a_programme_workbook_recalculated_by_libreoffice_gives_the_json_totals(tmp_path):
    path = tmp_path / "plan.xlsx"
    out = json.loads(cli("plan", "--preset", "assistant-7b", "--xlsx", str(path), "--json").stdout)
    book = recalculated(path, tmp_path)
    summary, monthly = book["Summary"], book["By month"]
    assert summary["B2"].value == pytest.approx(out["total_cost_usd"], rel=1e-9)
    assert summary["B7"].value == pytest.approx(out["beyond_horizon_usd"], rel=1e-9)
    # each calendar month's SUMIFS over the monthly lines is the JSON's month, to the cent
    rows = {row[0]: row for row in monthly.iter_rows(min_row=2, values_only=True)}
    months = {}
    for record in out["monthly"]:
        months[record["calendar_month"]] = months.get(record["calendar_month"], 0.0) + record["cost_usd"]
    assert len(months) == 12
    for label, total in months.items():
        assert rows[label][-1] == pytest.approx(total, abs=0.01), label
    assert rows["Total"][-1] == pytest.approx(out["total_cost_usd"], rel=1e-9)
    # the budget alerts cross in the calendar months the JSON gives
    alerts = [row for row in book["Budget alerts"].iter_rows(min_row=2, values_only=True)]
    crossed = [a for a in out["alerts"] if a.get("calendar_month")]
    assert [a[4] for a in alerts if a[4] != "not crossed"] == [a["calendar_month"] for a in crossed]


def test_an_estimate_workbook_in_chinese_and_renminbi_gives_the_json_totals(tmp_path):
    path = tmp_path / "estimate.xlsx"
    out = json.loads(cli("estimate", "--params", "70B", "--budget-usd", "3M", "--xlsx", str(path), "--lang", "zh",
                         "--currency", "CNY", "--json").stdout)
    book = recalculated(path, tmp_path)
    assert book.sheetnames[:3] == ["摘要", "成本明细", "按阶段汇总"]
    summary = book["摘要"]
    rate = out["scenario"]["cny_per_usd"]
    assert summary["B3"].value == rate
    assert summary["B2"].value == pytest.approx(out["total_cost_usd"] * rate, rel=1e-9)
    assert "¥" in summary["B2"].number_format  # LibreOffice rewrites "¥" as \¥
    lines = book["成本明细"]
    total_row = lines.max_row
    assert lines.cell(total_row, 7).value == pytest.approx(out["total_cost_usd"], rel=1e-9)
    by_stage = book["按阶段汇总"]
    assert by_stage.cell(by_stage.max_row, by_stage.max_column).value == pytest.approx(out["total_cost_usd"] * rate,
                                                                                       rel=1e-9)
    # the P10-P90 range brackets the total, the budget line is the typed 3M in renminbi
    low, high = summary["B4"].value, summary["C4"].value
    assert low < summary["B2"].value < high
    cells = {row[0]: row[1] for row in summary.iter_rows(min_row=1, max_row=20, values_only=True) if row[0]}
    assert cells["预算 [CNY]"] == pytest.approx(3e6 * rate)
    assert cells["预算余额（负数为超支） [CNY]"] == pytest.approx((3e6 - out["total_cost_usd"]) * rate, rel=1e-9)
    # alert lines in days, written the Chinese way
    alerts = list(book["预算预警"].iter_rows(min_row=2, values_only=True))
    assert alerts[0][0] == "30 %" and alerts[0][2].startswith("第 ") and alerts[0][2].endswith(" 天")


def test_costs_are_live_formulas_that_follow_a_changed_unit_cost_and_rate(tmp_path):
    est = estimate(Scenario())
    path = tmp_path / "live.xlsx"
    path.write_bytes(workbook.estimate_workbook(est))
    formulas = openpyxl.load_workbook(path)
    lines = formulas["Cost lines"]
    assert lines["G2"].value == "=D2*F2" and lines["H2"].value == "=G2*'Summary'!$B$3"
    assert formulas["Summary"]["B2"].value.startswith("='Cost lines'!H")
    assert formulas["By stage"]["B2"].value.startswith("=SUMIFS(")
    # the reader doubles the first line's unit cost and sets a rate of 2: every total follows
    quantity, unit_cost = lines["D2"].value, lines["F2"].value
    lines["F2"].value = 2 * unit_cost
    formulas["Summary"]["B3"].value = 2.0
    formulas.save(path)
    book = recalculated(path, tmp_path)
    assert book["Summary"]["B2"].value == pytest.approx(2 * (est.total_cost_usd + quantity * unit_cost), rel=1e-9)


def test_text_a_spreadsheet_would_run_stays_text(tmp_path):
    hostile = '=HYPERLINK("http://example.com","x")'
    est = estimate(Scenario(name=hostile))
    path = tmp_path / "hostile.xlsx"
    path.write_bytes(workbook.estimate_workbook(est))
    raw = openpyxl.load_workbook(path)
    assert raw["Summary"]["A1"].value == hostile and raw["Summary"]["A1"].data_type == "s"
    # a programme whose workstream is named like a formula
    programme = pg.example()
    renamed = programme.replace(workstreams=[w.__class__(**{**w.__dict__, "name": "+cmd|' /C calc'!A0"})
                                             if i == 0 else w for i, w in enumerate(programme.workstreams)])
    path = tmp_path / "hostile-plan.xlsx"
    path.write_bytes(workbook.plan_workbook(timeline.evaluate(renamed)))
    book = recalculated(path, tmp_path)
    names = {row[1] for row in book["Monthly lines"].iter_rows(min_row=2, values_only=True)}
    assert "+cmd|' /C calc'!A0" in names
    assert book["Summary"]["B2"].value == pytest.approx(timeline.evaluate(renamed).total_cost_usd, rel=1e-9)


def test_an_unwritable_workbook_path_is_named(tmp_path):
    run = subprocess.run([sys.executable, "-m", "workbench.cli", "estimate", "--xlsx", str(tmp_path / "no" / "x.xlsx")],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "--xlsx" in run.stderr and "cannot write it" in run.stderr


def test_every_preset_programme_makes_a_workbook():
    from workbench.programmes import programme_presets
    for preset in programme_presets.presets()["id"]:
        tl = timeline.evaluate(programme_presets.preset(preset))
        for lang, currency in (("en", "USD"), ("zh", "CNY")):
            data = workbook.plan_workbook(tl, currency, lang)
            book = openpyxl.load_workbook(io.BytesIO(data))
            assert len(book.sheetnames) == 6


def test_the_rate_cell_drives_every_amount_in_the_display_currency(tmp_path):
    """The summary says: change the rate here and every amount in CNY follows. Doubling it doubles the total, the
    range, the alert thresholds and the levers' savings (found by the finance lead's session: they were numbers)."""
    est = estimate(Scenario(params="70B", budget_usd="8M"))
    from workbench import levers, monte_carlo
    path = tmp_path / "rate.xlsx"
    path.write_bytes(workbook.estimate_workbook(est, "CNY", "zh", mc=monte_carlo(est.scenario, n=2_000),
                                                lever_table=levers(est.scenario)))
    before = recalculated(path, tmp_path / "a")
    book = openpyxl.load_workbook(path)
    book["摘要"]["B3"].value = 2 * est.scenario.cny_per_usd
    book.save(path)
    after = recalculated(path, tmp_path / "b")
    cells = [("摘要", "B2"), ("摘要", "B4"), ("摘要", "C4"), ("预算预警", "B2"), ("降本措施", "B2"), ("降本措施", "D2"),
             ("成本明细", "H2")]
    for sheet, cell in cells:
        assert after[sheet][cell].value == pytest.approx(2 * before[sheet][cell].value, rel=1e-9), (sheet, cell)
