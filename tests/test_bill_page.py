"""The bill page of the app (issue 31): plan against actual by category and by calendar month, spend against the
alert lines, tags without empty rows, rejected records with their money, and the review downloaded as CSV and as a
workbook whose totals LibreOffice recalculates to the review's."""
from __future__ import annotations

import io
import re
from html import escape
import sys
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from workbench.app.actuals_app import BillPanel, amount
from workbench.programmes import programme_presets, timeline
from workbench.report import bill_views as bv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from focus_generator import write_export  # noqa: E402
from test_workbook import recalculated  # noqa: E402


@pytest.fixture(scope="module")
def panel(tmp_path_factory):
    path = tmp_path_factory.mktemp("bill") / "bill.csv"
    expected = write_export(path, 2_000, seed=5)  # March 2025: plan month 1
    text = path.read_text().splitlines()
    text[7] = text[7].replace("2025-", "20x5-", 1)  # one record with an unreadable date: rejected with its money
    path.write_text("\n".join(text) + "\n")
    page = BillPanel()
    page.set_plan(timeline.evaluate(programme_presets.preset("assistant-7b")))
    page._upload_changed({"new": [{"name": "bill.csv", "content": memoryview(path.read_bytes())}]})
    page.expected = expected
    return page


def rows(html: str, title: str) -> list[list[str]]:
    """The cells of the table that follows ``title`` in ``html``."""
    part = html.split(escape(title), 1)[1].split("</table>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", part) if "<td" in row]


def test_plan_against_actual_by_category_and_by_month(panel):
    review = panel.review
    by_category = rows(panel.tables.value, "Plan against actual to date, by category")
    assert [r[0] for r in by_category] == ["Compute", "Storage", "Network", "Logging", "Security and compliance"]
    compute = review.by_category.set_index("category").loc["compute"]
    assert by_category[0][1:3] == [amount(compute["planned_usd"]), amount(compute["actual_usd"])]
    months = rows(panel.tables.value, "Plan against actual, by calendar month the bill covers")
    assert [m[0] for m in months] == ["2025-03"]
    billed = bv.billed_months(review)
    assert float(months[0][2].replace(",", "")) == pytest.approx(billed["actual_usd"].sum(), abs=0.5)
    # spend against each budget's alert lines, and the forecast month or "not reached"
    alerts = rows(panel.tables.value, "Actual spend against each budget's alert lines")
    assert len(alerts) == len(review.alerts) and {a[2] for a in alerts} == {"30 %", "50 %", "80 %", "100 %"}


def test_tags_list_only_values_with_spend_and_rejected_rows_carry_their_money(panel):
    details = panel.details.value
    assert "Planned and actual to date by team" in details
    for title in re.findall(r"<b>(Planned and actual to date by [^<]+)</b>", details):
        for cells in rows(details, title):
            assert any(float(c.replace(",", "")) != 0 for c in cells[1:3]), cells  # no 0 / 0 rows
    rejected = rows(details, "Rejected rows")
    assert len(rejected) == 1 and rejected[0][0] == "8" and rejected[0][-1] == "370"  # line 8 of the file, its money
    assert panel.bill.rejected_usd > 0


def test_the_review_downloads_as_csv_and_as_a_workbook_with_the_review_totals(panel, tmp_path):
    assert [f["name"] for f in panel.downloads.files] == ["bill_review.csv", "bill_review.xlsx"]
    frame = pd.read_csv(io.BytesIO(panel.downloads.payload("bill_review.csv")))
    categories = frame[frame["table"] == "Category"]
    assert round(categories["actual_usd"].sum(), 2) == round(panel.review.by_category["actual_usd"].sum(), 2)  # to the cent
    path = tmp_path / "bill_review.xlsx"
    path.write_bytes(panel.downloads.payload("bill_review.xlsx"))
    book = recalculated(path, tmp_path)
    assert book["Summary"]["B2"].value == pytest.approx(panel.review.by_category["actual_usd"].sum(), rel=1e-9)
    assert book["Summary"]["B7"].value == pytest.approx(panel.bill.rejected_usd, rel=1e-9)
    by_month = list(book["By month"].iter_rows(min_row=2, values_only=True))
    assert by_month[-1][2] == pytest.approx(bv.billed_months(panel.review)["actual_usd"].sum(), rel=1e-9)
    assert book["Rejected rows"]["B2"].value == 8


def test_in_chinese_and_renminbi(panel):
    panel.set_language("zh", "CNY")
    try:
        assert "截至目前计划与实际对比（按类别）" in panel.tables.value and "算力" in panel.tables.value
        # amounts as a Chinese budget writes them: ¥ and 万, no "[CNY]" heading over bare digits
        assert "[CNY]" not in panel.tables.value and re.search(r"¥[\d,.]+ 万", panel.tables.value)
        assert [f["name"] for f in panel.downloads.files] == ["bill_review.csv", "bill_review.xlsx"]
        book = openpyxl.load_workbook(io.BytesIO(panel.downloads.payload("bill_review.xlsx")))
        assert book.sheetnames[:3] == ["摘要", "按类别", "按月汇总"]
    finally:
        panel.set_language("en", "USD")


def test_versus_reads_as_words():
    assert bv.versus(100.0, 112.0) == "+12 %" and bv.versus(100.0, 60.0) == "−40 %"
    assert bv.versus(100.0, 127_900.0) == "× 1,279 the plan" and bv.versus(100.0, 127_900.0, "zh") == "计划的 1,279 倍"
    assert bv.versus(0.0, 5.0) == "not in the plan" and bv.versus(0.0, 0.0) == ""
