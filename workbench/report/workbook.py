"""A workbook a finance lead opens: an estimate or a programme as an ``.xlsx`` with live formulas.

Every cost a sheet shows is a formula over the cells it comes from: a cost line is quantity x unit cost, the sums
by stage and category are ``SUMIFS`` over the lines, a programme's months ``SUMIFS`` over its monthly lines, and the
headline refers to those sums; the exchange rate is one cell that every figure in the display currency multiplies.
So a reader who changes a unit cost or the rate sees every total follow, and a spreadsheet engine recalculating the
file (LibreOffice in ``tests/test_workbook.py``) gives the totals of the JSON.

Text that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``) is stored as text, never as a formula.
Written with openpyxl; headings in English or Chinese.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from ..plan.estimate import CATEGORIES, STAGES
from ..plan.scenario import fields
from ..programmes.timeline import warning_text
from ..reference.i18n import NAMES_ZH, choice_label, item_label, name_label, t, unit_label
from . import bill_views
from ..bill.actuals import UNATTRIBUTED
from ..bill.review import flag_text
from .csv_export import FORMULA_STARTS

#: Headings and labels, English and Chinese.
WORDS = {
    "summary": ("Summary", "摘要"), "lines": ("Cost lines", "成本明细"), "by_stage": ("By stage", "按阶段汇总"),
    "monthly": ("By month", "按月汇总"), "monthly_lines": ("Monthly lines", "月度明细"),
    "crossings": ("Budget alerts", "预算预警"), "levers": ("Cost levers", "降本措施"), "warnings": ("Warnings", "提示"),
    "assumptions": ("Assumptions", "假设"), "kpis": ("Unit costs", "单位成本"),
    "plan": ("Plan", "方案"), "programme": ("Programme", "项目计划"), "total": ("Total cost", "总成本"),
    "range": ("Likely range (P10 to P90)", "成本区间（P10 至 P90）"),
    "range_note": ("from the app's Monte Carlo at these inputs; not recomputed when a cell is changed",
                   "按当前输入的蒙特卡洛模拟得出；修改单元格时不会重算"),
    "lowers_service": ("lowers the service level", "降低服务水平"), "p10": ("low (P10)", "低（P10）"),
    "p90": ("high (P90)", "高（P90）"), "gpu_hours": ("Pre-training GPU-hours", "预训练 GPU 小时"),
    "finetune_gpu_hours": ("Fine-tuning GPU-hours", "微调 GPU 小时"),
    "n_gpus": ("GPUs", "GPU 数量"), "wall_days": ("Wall-clock days", "工期（天）"),
    "mfu": ("Share of peak the GPUs reach (MFU)", "GPU 峰值利用率（MFU）"),
    "budget": ("Budget", "预算"), "left": ("Budget left (negative: over)", "预算余额（负数为超支）"),
    "rate": ("Exchange rate, {cur} per USD", "汇率（人民币元/美元）"),
    "rate_note": ("change it here: every amount in {cur} follows", "在此修改，所有 {cur} 金额随之更新"),
    "horizon": ("Months", "月数"), "beyond": ("Cost after the horizon (not in the total)", "计划期之后的成本（不计入总额）"),
    "first_run": ("First training run", "首次训练"), "after": ("Everything after it", "其后全部"),
    "stage": ("Stage", "阶段"), "category": ("Category", "类别"), "item": ("Item", "项目"),
    "quantity": ("Quantity", "数量"), "unit": ("Unit", "单位"), "unit_cost": ("Unit cost [USD]", "单价 [USD]"),
    "cost_usd": ("Cost [USD]", "成本 [USD]"), "cost_cur": ("Cost [{cur}]", "成本 [{cur}]"),
    "cost_type": ("Fixed or elastic", "固定或弹性"), "formula": ("Formula", "公式"), "source": ("Source", "出处"),
    "input": ("Input", "输入"), "value": ("Value", "取值"), "from": ("Where it comes from", "来源"),
    "typed": ("as entered", "用户输入"), "default": ("default", "默认值"), "auto": ("auto", "自动"),
    "rate_usd": ("Currency: USD (rate 1)", "币种：美元（汇率 1）"),
    "month": ("Month", "月份"), "workstream": ("Workstream", "工作流"), "gpu_hours_col": ("GPU-hours", "GPU 小时"),
    "alert": ("Alert line", "预警线"), "threshold": ("Threshold [{cur}]", "阈值 [{cur}]"),
    "crossed_on": ("Crossed on", "触线时间"), "not_crossed": ("not crossed", "未触线"), "day": ("day {d:.1f}", "第 {d:.1f} 天"),
    "resource": ("Budget of", "预算对象"), "lever": ("Lever", "措施"), "saving": ("Saving [{cur}]", "节省 [{cur}]"),
    "risk_cost": ("Risk, priced [{cur}]", "风险成本 [{cur}]"), "net": ("Saving after risk [{cur}]", "扣除风险后节省 [{cur}]"),
    "risk": ("Risk", "风险"), "sum": ("Total", "合计"), "warning": ("Warning", "提示"), "none": ("none", "无"),
    "cost_per_m": ("Cost per million served tokens [{cur}]", "每百万服务 token 成本 [{cur}]"),
    "cost_month": ("Cost [{cur}]", "成本 [{cur}]"), "trained_tokens": ("Tokens trained", "训练 token 数"),
    "served_tokens": ("Tokens served", "服务 token 数"),
    "review": ("Bill against plan", "账单与计划对比"), "by_category": ("By category", "按类别"),
    "by_tag": ("By tag", "按标签"), "rejected": ("Rejected rows", "被拒绝的行"), "tag": ("Tag", "标签"),
    "planned": ("Planned [{cur}]", "计划 [{cur}]"), "actual": ("Actual [{cur}]", "实际 [{cur}]"),
    "difference": ("Actual − planned [{cur}]", "实际 − 计划 [{cur}]"), "versus": ("Against plan", "相对计划"),
    "rows_read": ("Bill records read", "读取的账单记录"), "rejected_rows": ("Records rejected", "被拒绝的记录"),
    "rejected_money": ("Money in rejected records [{cur}]", "被拒绝记录所含金额 [{cur}]"),
    "actual_to_date": ("Actual to date [{cur}]", "截至目前实际 [{cur}]"),
    "planned_to_date": ("Planned to date [{cur}]", "截至目前计划 [{cur}]"),
    "forecast": ("Forecast at completion, billed categories [{cur}]", "完工预测（账单类别） [{cur}]"),
    "planned_billed": ("Plan, billed categories, whole horizon [{cur}]", "计划（账单类别，整个计划期） [{cur}]"),
    "spent": ("Spent to date [{cur}]", "截至目前支出 [{cur}]"), "reached": ("Reached", "触线"),
    "file": ("File", "文件"), "line": ("Line", "行号"), "column": ("Column", "列"), "reason": ("Reason", "原因"),
}

_BOLD = Font(bold=True)
_HEAD = PatternFill("solid", fgColor="DDE4EE")
_MONEY = "#,##0.00"
_WHOLE = "#,##0"


def word(key: str, lang: str = "en", **params) -> str:
    """A heading of :data:`WORDS` in ``lang``, with ``params`` filled in."""
    en, zh = WORDS[key]
    return (zh if lang == "zh" else en).format(**params)


def _money_format(currency: str) -> str:
    return '"¥"#,##0.00' if currency == "CNY" else _MONEY


def _put(sheet, row: int, column: int, value, number_format: str | None = None, bold: bool = False):
    """One cell; text that would run as a formula is stored as text, NaN and None as an empty cell."""
    cell = sheet.cell(row=row, column=column)
    if isinstance(value, (float, np.floating)) and not np.isfinite(value):
        value = None
    elif isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str):
        cell.value = value
        if value.startswith(FORMULA_STARTS):
            cell.data_type = "s"  # text, never a formula
    else:
        cell.value = value
    if number_format:
        cell.number_format = number_format
    if bold:
        cell.font = _BOLD
    return cell


def _formula(sheet, row: int, column: int, formula: str, number_format: str | None = None, bold: bool = False):
    cell = sheet.cell(row=row, column=column)
    cell.value = formula
    if number_format:
        cell.number_format = number_format
    if bold:
        cell.font = _BOLD
    return cell


def _header(sheet, row: int, names: list[str], widths: list[int] | None = None) -> None:
    for column, name in enumerate(names, start=1):
        cell = _put(sheet, row, column, name, bold=True)
        cell.fill = _HEAD
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    for column, width in enumerate(widths or [], start=1):
        sheet.column_dimensions[get_column_letter(column)].width = width
    sheet.freeze_panes = sheet.cell(row=row + 1, column=1)


def _sheet_ref(name: str, cell: str) -> str:
    return f"'{name}'!{cell}"


def _to_bytes(book: Workbook) -> bytes:
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


#: The summary's rate cell: every amount in the display currency is its USD value times it.
RATE_REF = "'{summary}'!$B$3"


def _new_book(lang: str, *sheets: str):
    """A workbook whose first sheet is the summary, then ``sheets`` (WORDS keys); the sheets and the absolute
    reference of the summary's rate cell."""
    book = Workbook()
    summary = book.active
    summary.title = word("summary", lang)
    return book, summary, [book.create_sheet(word(key, lang)) for key in sheets], RATE_REF.format(summary=summary.title)


def _usd(sheet, row: int, column: int, usd, money: str, rate_ref: str, bold: bool = False):
    """An amount in the display currency as ``=<usd>*<rate cell>``: it follows the rate; empty when not finite."""
    if usd is None or not np.isfinite(float(usd)):
        return _put(sheet, row, column, None)
    return _formula(sheet, row, column, f"={float(usd)!r}*{rate_ref}", money, bold)


def _rate_cell(sheet, row: int, currency: str, rate: float, lang: str) -> str:
    """Writes the exchange rate at ``row`` of the summary; returns its absolute reference."""
    _put(sheet, row, 1, word("rate", lang, cur=currency) if currency != "USD" else word("rate_usd", lang))
    _put(sheet, row, 2, float(rate), "0.0000")
    _put(sheet, row, 3, word("rate_note", lang, cur=currency) if currency != "USD" else "")
    return _sheet_ref(sheet.title, f"$B${row}")


def _sumifs_grid(sheet, corner: str, row_names: list[str], column_names: list[str], lines_title: str,
                 columns: tuple[str, str, str], first: int, last: int, money: str, lang: str) -> int:
    """A table of ``SUMIFS`` over the lines sheet: one row per ``row_names``, one column per ``column_names``,
    each cell the sum of the lines' cost column whose row-key and column-key columns hold those names
    (``columns``: cost, row key, column key as letters); a total column and row. Returns the total row."""
    cost, row_key, column_key = (_sheet_ref(lines_title, f"${c}${first}:${c}${last}") for c in columns)
    _header(sheet, 1, [corner, *column_names, word("sum", lang)], [18] + [16] * (len(column_names) + 1))
    end = get_column_letter(1 + len(column_names))
    for i, name in enumerate(row_names):
        r = 2 + i
        _put(sheet, r, 1, name)
        for j in range(len(column_names)):
            column = get_column_letter(2 + j)
            _formula(sheet, r, 2 + j, f"=SUMIFS({cost},{row_key},$A{r},{column_key},{column}$1)", money)
        _formula(sheet, r, 2 + len(column_names), f"=SUM(B{r}:{end}{r})", money, bold=True)
    sum_row = 2 + len(row_names)
    _put(sheet, sum_row, 1, word("sum", lang), bold=True)
    for j in range(len(column_names) + 1):
        column = get_column_letter(2 + j)
        _formula(sheet, sum_row, 2 + j, f"=SUM({column}2:{column}{sum_row - 1})", money, bold=True)
    return sum_row


# -- one scenario -------------------------------------------------------------------------------------------------

def estimate_workbook(est, currency: str = "USD", lang: str = "en", mc=None, lever_table: pd.DataFrame | None = None) -> bytes:
    """``est`` (an :class:`workbench.plan.estimate.Estimate`) as an ``.xlsx``: summary with headline, range and
    assumptions; cost lines (cost = quantity x unit cost); sums by stage and category; budget alerts; levers;
    warnings. ``mc``: a Monte Carlo of the same scenario for the range; ``lever_table``: :func:`workbench.levers`."""
    rate = float(est.scenario.cny_per_usd) if currency == "CNY" else 1.0
    money = _money_format(currency)
    book, summary, (lines_sheet, stage_sheet), rate_ref = _new_book(lang, "lines", "by_stage")

    # cost lines: quantity x unit cost in USD, and in the display currency through the rate cell
    lines = est.lines
    heads = [word(k, lang) for k in ("stage", "category", "item", "quantity", "unit", "unit_cost", "cost_usd")]
    heads += [word("cost_cur", lang, cur=currency), word("cost_type", lang), word("formula", lang), word("source", lang)]
    _header(lines_sheet, 1, heads, [16, 14, 44, 16, 12, 14, 16, 16, 12, 40, 60])
    first = 2
    for offset, line in enumerate(lines.itertuples(index=False)):
        r = first + offset
        _put(lines_sheet, r, 1, t(line.stage, lang))
        _put(lines_sheet, r, 2, t(line.category, lang))
        _put(lines_sheet, r, 3, item_label(line.item, lang))
        _put(lines_sheet, r, 4, float(line.quantity), "#,##0.00")
        _put(lines_sheet, r, 5, unit_label(line.unit, lang))
        _put(lines_sheet, r, 6, float(line.unit_cost_usd), "#,##0.0000")
        _formula(lines_sheet, r, 7, f"=D{r}*F{r}", _MONEY)
        _formula(lines_sheet, r, 8, f"=G{r}*{rate_ref}", money)
        _put(lines_sheet, r, 9, t(line.cost_type, lang))
        _put(lines_sheet, r, 10, line.formula)
        _put(lines_sheet, r, 11, line.source)
    last = first + len(lines) - 1
    total_row = last + 1
    _put(lines_sheet, total_row, 1, word("sum", lang), bold=True)
    _formula(lines_sheet, total_row, 7, f"=SUM(G{first}:G{last})", _MONEY, bold=True)
    _formula(lines_sheet, total_row, 8, f"=SUM(H{first}:H{last})", money, bold=True)

    # sums by stage (columns) and category (rows): SUMIFS over the lines
    stages = [s for s in STAGES if (lines["stage"] == s).any()]
    categories = [c for c in CATEGORIES if (lines["category"] == c).any()]
    _sumifs_grid(stage_sheet, word("category", lang), [t(c, lang) for c in categories], [t(s, lang) for s in stages],
                 lines_sheet.title, ("H", "B", "A"), first, last, money, lang)

    # summary: headline, range, the rate, figures, budget, assumptions
    name = est.scenario.name or word("plan", lang)
    _put(summary, 1, 1, name, bold=True)
    summary["A1"].font = Font(bold=True, size=14)
    _put(summary, 2, 1, word("total", lang) + f" [{currency}]", bold=True)
    _formula(summary, 2, 2, f"={_sheet_ref(lines_sheet.title, f'H{total_row}')}", money, bold=True)
    _rate_cell(summary, 3, currency, rate, lang)
    row = 4
    if mc is not None:
        _put(summary, row, 1, word("range", lang) + f" [{currency}]")
        _usd(summary, row, 2, mc.percentile("total_cost_usd", 10), money, "$B$3")
        _usd(summary, row, 3, mc.percentile("total_cost_usd", 90), money, "$B$3")
        _put(summary, row, 4, f"{word('p10', lang)} / {word('p90', lang)}: {word('range_note', lang)}")
        row += 1
    hours = "gpu_hours" if est.scenario.plan_kind == "pretrain" else "finetune_gpu_hours"
    for key, value, number_format in ((hours, est.gpu_hours, _WHOLE), ("n_gpus", est.n_gpus, _WHOLE),
                                      ("wall_days", est.wall_days, "#,##0.0"), ("mfu", est.mfu, "0.0%")):
        _put(summary, row, 1, word(key, lang))
        _put(summary, row, 2, float(value), number_format)
        row += 1
    budget_usd = est.scenario.budget_usd
    if budget_usd:
        _put(summary, row, 1, word("budget", lang) + f" [{currency}]")
        _formula(summary, row, 2, f"={float(budget_usd)!r}*$B$3", money)
        _put(summary, row + 1, 1, word("left", lang) + f" [{currency}]")
        _formula(summary, row + 1, 2, f"=B{row}-B2", money)
        row += 2
    row += 1
    _assumptions(summary, row, est, lang)
    summary.column_dimensions["A"].width = 44
    summary.column_dimensions["B"].width = 20
    summary.column_dimensions["C"].width = 20
    summary.column_dimensions["D"].width = 80

    _estimate_crossings(book, est, currency, rate, lang)
    if lever_table is not None:
        _levers(book, lever_table, currency, rate, lang)
    from .views import warning_text  # the app's words for the engine's warnings
    _warnings(book, [warning_text(w, lang, currency, rate) for w in est.warnings], lang)
    return _to_bytes(book)


def _assumptions(sheet, row: int, est, lang: str) -> None:
    """The inputs a finance lead would change, each with its value, unit and where it comes from."""
    _put(sheet, row, 1, word("assumptions", lang), bold=True)
    row += 1
    for column, key in enumerate(("input", "value", "unit", "from"), start=1):
        cell = _put(sheet, row, column, word(key, lang), bold=True)
        cell.fill = _HEAD
    spec = fields()
    values = est.scenario.to_dict()
    used = est.to_dict().get("defaults_used", {})
    for name, f in spec.items():
        value = values.get(name)
        if name == "name" or f.group in ("internal",):
            continue
        row += 1
        _put(sheet, row, 1, f.label_zh if lang == "zh" else f.label)
        if value is None:  # left to the model: the value it took, and how
            shown, _, how = used.get(name, "").partition(": ")
            _put(sheet, row, 2, shown or word("auto", lang))
            _put(sheet, row, 4, how or word("default", lang))
        else:
            if isinstance(value, str) and f.choices:
                value = choice_label(name, value, lang)
            _put(sheet, row, 2, value, _WHOLE if isinstance(value, float) and abs(value) >= 1000 else None)
            typed = value != f.default  # a typed value's source is the reader, not the default's
            _put(sheet, row, 4, word("typed", lang) if typed else (f.source or word("default", lang)))
        _put(sheet, row, 3, t(f.unit, lang))


def _estimate_crossings(book, est, currency: str, rate: float, lang: str) -> None:
    rows = est.to_dict().get("budget_alerts") or []
    sheet = book.create_sheet(word("crossings", lang))
    _header(sheet, 1, [word("alert", lang), word("threshold", lang, cur=currency), word("crossed_on", lang)], [14, 20, 24])
    rate_ref = RATE_REF.format(summary=word("summary", lang))
    for i, alert in enumerate(rows, start=2):
        _put(sheet, i, 1, f"{alert['alert_percent']:g} %")
        _usd(sheet, i, 2, alert["threshold_usd"], _money_format(currency), rate_ref)
        when = alert.get("date") or (word("day", lang, d=alert["day"]) if alert.get("crossed") else word("not_crossed", lang))
        _put(sheet, i, 3, str(when))
    if not rows:
        _put(sheet, 2, 1, word("none", lang))


def _levers(book, table: pd.DataFrame, currency: str, rate: float, lang: str) -> None:
    """The levers that help (applicable, saving after risk above zero), plain savings first and those that lower
    the service level after them, marked; risks in words with field labels."""
    from .views import readable  # the report layer's words for field ids
    sheet = book.create_sheet(word("levers", lang))
    money = _money_format(currency)
    rate_ref = RATE_REF.format(summary=word("summary", lang))
    _header(sheet, 1, [word("lever", lang), word("saving", lang, cur=currency), word("risk_cost", lang, cur=currency),
                       word("net", lang, cur=currency), word("risk", lang), word("source", lang)], [50, 16, 16, 18, 70, 60])
    lowers = table["lowers_service"] if "lowers_service" in table else pd.Series(False, index=table.index)
    useful = table[table["applicable"] & (table["risk_adjusted_saving_usd"] > 0)].assign(_lowers=lowers)
    ordered = useful.sort_values(["_lowers", "risk_adjusted_saving_usd"], ascending=[True, False])
    for i, lever in enumerate(ordered.to_dict("records"), start=2):
        name = lever["name_zh"] if lang == "zh" else lever["name"]
        _put(sheet, i, 1, f"{name} ({word('lowers_service', lang)})" if lever["_lowers"] else name)
        _usd(sheet, i, 2, lever["saving_usd"], money, rate_ref)
        _usd(sheet, i, 3, lever["risk_usd"], money, rate_ref)
        _formula(sheet, i, 4, f"=B{i}-C{i}", money)
        _put(sheet, i, 5, readable(lever["risk_zh"] if lang == "zh" else lever["risk"], lang))
        _put(sheet, i, 6, lever["source"])


def _warnings(book, warnings: list[str], lang: str) -> None:
    sheet = book.create_sheet(word("warnings", lang))
    _header(sheet, 1, [word("warning", lang)], [140])
    for i, text in enumerate(warnings or [word("none", lang)], start=2):
        cell = _put(sheet, i, 1, text)
        cell.alignment = Alignment(wrap_text=True, vertical="top")


# -- a programme over months --------------------------------------------------------------------------------------

def plan_workbook(timeline, currency: str = "USD", lang: str = "en", rate: float | None = None) -> bytes:
    """A programme's :class:`workbench.programmes.timeline.Timeline` as an ``.xlsx``: summary (total, first run and
    after, cost after the horizon, the rate), monthly lines, the months by category (``SUMIFS`` over the lines, by
    calendar month), budget alerts and unit costs per month."""
    programme = timeline.programme
    if rate is None:
        rate = float(programme.base.get("cny_per_usd", fields()["cny_per_usd"].default)) if currency == "CNY" else 1.0
    money = _money_format(currency)
    book, summary, (monthly_sheet, lines_sheet), rate_ref = _new_book(lang, "monthly", "monthly_lines")

    lines = timeline.lines
    heads = [word(k, lang) for k in ("month", "workstream", "stage", "category", "item", "gpu_hours_col", "cost_usd")]
    heads += [word("cost_cur", lang, cur=currency), word("cost_type", lang)]
    _header(lines_sheet, 1, heads, [10, 22, 14, 14, 44, 14, 16, 16, 12])
    labels = {m: programme.month_label(int(m)) for m in np.unique(lines["month"])}
    first = 2
    for offset, line in enumerate(lines.itertuples(index=False)):
        r = first + offset
        _put(lines_sheet, r, 1, labels[line.month])
        _put(lines_sheet, r, 2, name_label(line.workstream, lang))
        _put(lines_sheet, r, 3, name_label(line.stage, lang) if line.stage in NAMES_ZH else t(line.stage, lang))
        _put(lines_sheet, r, 4, t(line.category, lang))
        _put(lines_sheet, r, 5, item_label(line.item, lang))
        _put(lines_sheet, r, 6, float(line.gpu_hours), "#,##0.0")
        _put(lines_sheet, r, 7, float(line.cost_usd), _MONEY)
        _formula(lines_sheet, r, 8, f"=G{r}*{rate_ref}", money)
        _put(lines_sheet, r, 9, t(line.cost_type, lang))
    last = max(first + len(lines) - 1, first)

    months = sorted(labels)
    categories = [c for c in [*CATEGORIES, *sorted(set(lines["category"]) - set(CATEGORIES))] if (lines["category"] == c).any()]
    sum_row = _sumifs_grid(monthly_sheet, word("month", lang), [labels[m] for m in months],
                           [t(c, lang) for c in categories], lines_sheet.title, ("H", "A", "D"), first, last, money, lang)
    total_ref = _sheet_ref(monthly_sheet.title, f"{get_column_letter(2 + len(categories))}{sum_row}")

    first_usd, after_usd = timeline.first_run_split()
    _put(summary, 1, 1, _programme_name(programme.name, lang) or word("programme", lang), bold=True)
    summary["A1"].font = Font(bold=True, size=14)
    _put(summary, 2, 1, word("total", lang) + f" [{currency}]", bold=True)
    _formula(summary, 2, 2, f"={total_ref}", money, bold=True)
    _rate_cell(summary, 3, currency, rate, lang)
    _put(summary, 4, 1, word("horizon", lang))
    _put(summary, 4, 2, f"{programme.month_label(1)} – {programme.month_label(programme.horizon_months)}")
    _put(summary, 5, 1, word("first_run", lang) + f" [{currency}]")
    _formula(summary, 5, 2, f"={float(first_usd)!r}*$B$3", money)
    _put(summary, 6, 1, word("after", lang) + f" [{currency}]")
    _formula(summary, 6, 2, "=B2-B5", money)
    _put(summary, 7, 1, word("beyond", lang) + f" [{currency}]")
    _formula(summary, 7, 2, f"={float(timeline.beyond_horizon_usd)!r}*$B$3", money)
    summary.column_dimensions["A"].width = 48
    summary.column_dimensions["B"].width = 22
    summary.column_dimensions["C"].width = 40

    _plan_alerts(book, timeline, currency, rate, lang)
    _plan_kpis(book, timeline, currency, rate, lang)
    _warnings(book, [warning_text(key, params, lang, currency, rate) for key, params in timeline.warning_items], lang)
    return _to_bytes(book)


def _programme_name(name: str, lang: str) -> str:
    """A named programme's title in ``lang`` (data/programme_presets.csv); a user's own as typed."""
    if lang != "zh":
        return name
    from ..programmes import programme_presets
    table = programme_presets.presets()
    match = table[table["label"] == name]
    return str(match["label_zh"].iloc[0]) if len(match) else name


def _plan_alerts(book, timeline, currency: str, rate: float, lang: str) -> None:
    sheet = book.create_sheet(word("crossings", lang))
    alerts = timeline.alerts()
    _header(sheet, 1, [word("resource", lang), word("budget", lang) + f" [{currency}]", word("alert", lang),
                       word("threshold", lang, cur=currency), word("crossed_on", lang)], [16, 18, 12, 18, 16])
    money = _money_format(currency)
    rate_ref = RATE_REF.format(summary=word("summary", lang))
    for i, alert in enumerate(alerts.to_dict("records"), start=2):
        _put(sheet, i, 1, t(alert["resource"], lang) if alert["resource"] != "total" else word("total", lang))
        _usd(sheet, i, 2, alert["budget_usd"], money, rate_ref)
        _put(sheet, i, 3, f"{alert['percent']:g} %")
        _formula(sheet, i, 4, f"=B{i}*{float(alert['percent']) / 100!r}", money)
        month = alert.get("calendar_month")
        _put(sheet, i, 5, month if isinstance(month, str) and month else word("not_crossed", lang))
    if alerts.empty:
        _put(sheet, 2, 1, word("none", lang))


def _plan_kpis(book, timeline, currency: str, rate: float, lang: str) -> None:
    sheet = book.create_sheet(word("kpis", lang))
    kpis = timeline.kpis()
    money = _money_format(currency)
    rate_ref = RATE_REF.format(summary=word("summary", lang))
    _header(sheet, 1, [word("month", lang), word("cost_month", lang, cur=currency), word("trained_tokens", lang),
                       word("served_tokens", lang), word("cost_per_m", lang, cur=currency)], [10, 18, 20, 20, 22])
    for i, (month, row) in enumerate(kpis.iterrows(), start=2):
        _put(sheet, i, 1, timeline.programme.month_label(int(month)))
        _usd(sheet, i, 2, row["cost_usd"], money, rate_ref)
        _put(sheet, i, 3, row["trained_tokens"], _WHOLE)
        _put(sheet, i, 4, row["served_tokens"], _WHOLE)
        _usd(sheet, i, 5, row["usd_per_million_served_tokens"], "#,##0.0000", rate_ref)


# -- a bill against its plan --------------------------------------------------------------------------------------

def review_workbook(review, bill, currency: str = "USD", lang: str = "en", rate: float = 1.0) -> bytes:
    """A bill review (:class:`workbench.bill.review.Review` of ``bill``) as an ``.xlsx``: summary; plan against actual
    by category, by calendar month and by tag (difference and ratio as formulas, totals as sums); spend against the
    alert lines; rejected records with their money. Every amount is its USD value times the rate cell."""
    money = _money_format(currency)
    book, summary, _, rate_ref = _new_book(lang)

    def usd(sheet, row, column, value):  # an amount in the display currency that follows the rate cell
        return _usd(sheet, row, column, value, money, rate_ref)

    def compared(title: str, key_heading: str, frame: pd.DataFrame, key: str) -> None:
        sheet = book.create_sheet(title)
        _header(sheet, 1, [key_heading, word("planned", lang, cur=currency), word("actual", lang, cur=currency),
                           word("difference", lang, cur=currency), word("versus", lang)], [28, 18, 18, 20, 14])
        for i, record in enumerate(frame.to_dict("records"), start=2):
            _put(sheet, i, 1, t(str(record[key]), lang) if key in ("category",) else str(record[key]))
            usd(sheet, i, 2, record["planned_usd"])
            usd(sheet, i, 3, record["actual_usd"])
            _formula(sheet, i, 4, f"=C{i}-B{i}", money)
            _formula(sheet, i, 5, f'=IF(ABS(B{i})<0.005,"",C{i}/B{i}-1)', "+0%;-0%;0%")
        end = 1 + len(frame)
        _put(sheet, end + 1, 1, word("sum", lang), bold=True)
        for column in "BCD":
            _formula(sheet, end + 1, " BCD".index(column) + 1, f"=SUM({column}2:{column}{max(end, 2)})", money, bold=True)

    compared(word("by_category", lang), word("category", lang), review.by_category, "category")
    compared(word("monthly", lang), word("month", lang), bill_views.billed_months(review), "month")
    for key, table in review.tags.items():  # one sheet per tag key: each sums to the bill on its own
        frame = table[table[["planned_usd", "actual_usd"]].abs().max(axis=1) >= bill_views.NOTHING_USD]
        frame = frame.assign(value=[t(v, lang) if v == UNATTRIBUTED else v for v in frame["value"]])
        compared(f"{word('by_tag', lang)} {t(key, lang)}"[:31], t(key, lang), frame, "value")

    alerts = book.create_sheet(word("crossings", lang))
    table = bill_views.alert_table(review, lang, 1.0)
    _header(alerts, 1, [word("resource", lang), word("budget", lang) + f" [{currency}]", word("alert", lang),
                        word("threshold", lang, cur=currency), word("spent", lang, cur=currency), word("reached", lang)],
            [16, 18, 12, 18, 18, 18])
    for i, record in enumerate(table.to_dict("records"), start=2):
        _put(alerts, i, 1, record["budget"])
        usd(alerts, i, 2, record["amount"])
        _put(alerts, i, 3, record["alert"])
        usd(alerts, i, 4, record["threshold"])
        usd(alerts, i, 5, record["spent"])
        _put(alerts, i, 6, record["reached"])

    rejected = book.create_sheet(word("rejected", lang))
    _header(rejected, 1, [word(k, lang) for k in ("file", "line", "column", "reason")]
            + [word("value", lang), word("rejected_money", lang, cur=currency)], [24, 10, 18, 60, 30, 18])
    reasons = bill.reasons(lang)
    for i, (record, reason) in enumerate(zip(bill.rejected.to_dict("records"), reasons), start=2):
        _put(rejected, i, 1, record.get("file"))
        _put(rejected, i, 2, record.get("row"))
        _put(rejected, i, 3, record.get("column"))
        _put(rejected, i, 4, reason)
        _put(rejected, i, 5, None if record.get("value") is None else str(record.get("value")))
        usd(rejected, i, 6, record.get("cost_usd"))

    by_category = review.by_category
    _put(summary, 1, 1, word("review", lang), bold=True)
    summary["A1"].font = Font(bold=True, size=14)
    _put(summary, 2, 1, word("actual_to_date", lang, cur=currency), bold=True)
    _formula(summary, 2, 2, f"={_sheet_ref(word('by_category', lang), f'C{len(by_category) + 2}')}", money, bold=True)
    _rate_cell(summary, 3, currency, rate, lang)
    for row, (key, value) in enumerate((("planned_to_date", by_category["planned_usd"].sum()),
                                        ("forecast", review.forecast_usd),
                                        ("planned_billed", review.planned_billed_usd),
                                        ("rejected_money", bill.rejected_usd)), start=4):
        _put(summary, row, 1, word(key, lang, cur=currency))
        usd(summary, row, 2, value)
    _put(summary, 8, 1, word("rows_read", lang))
    _put(summary, 8, 2, int(bill.rows_read), _WHOLE)
    _put(summary, 9, 1, word("rejected_rows", lang))
    _put(summary, 9, 2, int(bill.rejected_count), _WHOLE)
    summary.column_dimensions["A"].width = 52
    summary.column_dimensions["B"].width = 22
    summary.column_dimensions["C"].width = 40
    _warnings(book, [flag_text(flag, lang, currency, rate) for flag in review.flags], lang)
    return _to_bytes(book)
