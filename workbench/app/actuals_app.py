"""The programme view's bill panel: a FOCUS billing export uploaded, read (:mod:`workbench.bill.actuals`) and compared
with the programme shown (:mod:`workbench.bill.review`): a summary, plan against actual billed spend with the budgets'
alert lines, flags, attribution to date and the rejected rows. A file that cannot be read is named with the reason;
the programme's figures are never touched.
"""
from __future__ import annotations

import html
import logging
import tempfile
from pathlib import Path

import ipywidgets as w
import pandas as pd

from ..report import bill_views as bv, programme_charts as pc, programme_views as pv
from ..bill.actuals import APP_LIMITS, UNATTRIBUTED, ActualsError, read_focus
from ..report.charts import ChartStack
from ..reference.i18n import day_text, t
from ..reference.numbers import money
from .app_style import label_upload
from .downloads import XLSX_MIME, Downloads
from .livechart import LiveChart
from ..bill.review import ReviewError, compare, flag_text

log = logging.getLogger(__name__)
#: Largest export the page uploads (the widget connection carries it whole); larger ones belong to the CLI.
MAX_BILL_BYTES = 50_000_000
_SUFFIXES = (".csv", ".csv.gz", ".gz", ".parquet")


class BillPanel:
    """``BillPanel().widget``; :meth:`set_plan` with each new timeline, :meth:`set_language` on a switch."""

    def __init__(self, lang="en", currency="USD"):
        self.lang, self.currency = lang, currency
        self.timeline = self.bill = self.review = None
        self.name = ""
        self.stack = ChartStack()
        # several files at once: a year of monthly exports is one bill
        self.upload = w.FileUpload(accept=",".join(_SUFFIXES), multiple=True, layout=w.Layout(width="auto"))
        self.upload.observe(self._upload_changed, "value")
        self.upload.add_class("wb-bill-upload")
        self.start = w.Text(placeholder="YYYY-MM", continuous_update=False, layout=w.Layout(width="260px"),
                            style={"description_width": "120px"})
        self.start.observe(lambda change: self._compare(), "value")
        self.message = w.HTML()
        self.message.add_class("wb-bill-message")
        self.chart = LiveChart()
        self.chart.add_class("wb-bill-chart")
        self.tables = w.HTML()
        self.tables.add_class("wb-bill-tables")
        self.details = w.HTML()
        self.details.add_class("wb-bill-details")
        self.downloads = Downloads(self._download)
        self.downloads.add_class("wb-bill-downloads")
        self.widget = w.VBox([w.HBox([self.upload, self.start]), self.message, self.downloads, self.tables, self.chart,
                              self.details])
        self.widget.add_class("wb-bill")
        self.set_language(lang, currency)

    def set_language(self, lang, currency):
        self.lang, self.currency = lang, currency
        label_upload(self.upload, t("load_bill", lang))
        self.start.description = t("bill_start", lang)
        self.downloads.files = [] if self.review is None else [
            {"name": "bill_review.csv", "mime": "text/csv", "label": t("download_review_csv", lang)},
            {"name": "bill_review.xlsx", "mime": XLSX_MIME, "label": t("download_review_xlsx", lang)}]
        self._render()

    def set_plan(self, timeline):
        self.timeline = timeline
        self._compare()

    # -- events ---------------------------------------------------------------------------------------
    def _upload_changed(self, change):
        files = change["new"]
        if not files:
            return
        items = list(files)
        names = [str(item.get("name", "export.csv"))[:80] for item in items]
        name = names[0] if len(names) == 1 else t("bill_files", self.lang).format(count=len(names), first=names[0])
        renames = {}  # temporary path -> the name as uploaded, in messages and the rejected rows
        try:
            sizes = [len(bytes(item["content"])) for item in items]
            if sum(sizes) > MAX_BILL_BYTES:
                raise ActualsError(f"{name}: {sum(sizes) / 1e6:,.0f} MB; allowed: at most {MAX_BILL_BYTES / 1e6:g} MB "
                                   "in the app (workbench actuals reads larger exports)")
            with tempfile.TemporaryDirectory() as folder:
                for k, (item, original) in enumerate(zip(items, names)):
                    suffix = next((s for s in _SUFFIXES if original.lower().endswith(s)), ".csv")
                    suffix = ".csv.gz" if suffix == ".gz" else suffix
                    # numbered in the order uploaded: two months may both be called part-0.csv.gz
                    path = Path(folder) / f"{k:03d}{suffix}"
                    path.write_bytes(bytes(item["content"]))
                    renames[str(path)] = original
                rates = {"CNY": float(self.timeline.programme.base_scenario.cny_per_usd)} if self.timeline else None
                target = next(iter(renames)) if len(renames) == 1 else folder
                renames.setdefault(str(folder), name)
                bill = read_focus(target, rates=rates, limits=APP_LIMITS)  # renminbi rows at the programme's rate
                bill.rejected["file"] = bill.rejected["file"].map(lambda p: renames.get(p, p))
        except (ActualsError, ValueError) as error:
            text = str(error)
            for path, original in sorted(renames.items(), key=lambda kv: -len(kv[0])):
                text = text.replace(path, original)
            self._error(text)
            return
        except Exception:  # noqa: BLE001 - an export the checks did not foresee: a message, never a silent page
            log.exception("bill upload failed")
            self._error(t("internal_error", self.lang))
            return
        finally:
            self.upload.unobserve(self._upload_changed, "value")
            try:
                self.upload.value = ()
            finally:
                self.upload.observe(self._upload_changed, "value")
        self.bill, self.name = bill, name
        self._compare()

    def _compare(self):
        if self.bill is None or self.timeline is None:
            return
        try:
            self.review = compare(self.bill, self.timeline, self.start.value.strip() or None)
            first = self.review.monthly.loc[self.review.monthly["plan_month"] == 1, "month"].iloc[0]
            self.start.placeholder = f"YYYY-MM ({first})"  # the month used, when none is typed
        except ReviewError as error:
            self._error(error.message(self.lang), t("bill_not_compared", self.lang))
            return
        self.set_language(self.lang, self.currency)  # the review's downloads, then the page

    def _error(self, text, heading=None):
        """The reason, and nothing of an earlier bill left on screen as if it were this one's."""
        self.review = None
        self.chart.layout.display = "none"
        self.details.value = self.tables.value = ""
        self.downloads.files = []
        self.message.value = (f"<div class='wb-error'><b>{html.escape(heading or t('bill_not_read', self.lang))}</b><br>"
                              f"{html.escape(text)}</div>")

    # -- drawing ----------------------------------------------------------------------------------------
    def _money(self, usd) -> str:
        value = usd * pv.rate(self.timeline, self.currency)
        return money(value, self.currency, "zh") if self.lang == "zh" else f"{amount(value)} {self.currency}"

    def _compared(self, frame, key: str, key_label: str) -> str:
        """An HTML table of a :mod:`workbench.report.bill_views` comparison (amounts already in the currency)."""
        lang, cur = self.lang, self.currency
        head = [key_label, pv.amount_header(cur, lang, t("planned", lang).capitalize()),
                pv.amount_header(cur, lang, t("actual", lang).capitalize()), pv.amount_header(cur, lang, t("bill_gap", lang)),
                t("bill_versus", lang)]
        rows = "".join(
            "<tr>" + f"<td>{html.escape(t(str(r[key]), lang) if r[key] == UNATTRIBUTED else str(r[key]))}</td>"
            + "".join(f"<td class='wb-num'>{amount(r[c], cur, lang)}</td>" for c in ("planned", "actual", "difference"))
            + f"<td>{html.escape(r['versus'])}</td></tr>" for r in frame.to_dict("records"))
        return ("<table class='wb-lines'><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
                + rows + "</table>")

    def _comparison_tables(self, rate: float) -> str:
        """Plan against actual by category and by calendar month, and spend against the alert lines."""
        lang, review = self.lang, self.review
        parts = [f"<b>{html.escape(t('bill_by_category', lang))}</b>"
                 + self._compared(bv.by_category(review, lang, rate), "category", t("category", lang)),
                 f"<b>{html.escape(t('bill_by_month', lang))}</b>"
                 + self._compared(bv.by_month(review, lang, rate), "month", t("month", lang))]
        alerts = bv.alert_table(review, lang, rate)
        if not alerts.empty:
            cur = self.currency
            head = [t("budget", lang), pv.amount_header(cur, lang, t("amount", lang)), t("bill_alert_line", lang),
                    pv.amount_header(cur, lang, t("bill_threshold", lang)), pv.amount_header(cur, lang, t("bill_spent_to_date", lang)),
                    t("bill_reached", lang)]
            rows = "".join("<tr>" + "".join(
                f"<td>{html.escape(amount(r[c], cur, lang) if c in ('amount', 'threshold', 'spent') else str(r[c]))}</td>"
                for c in ("budget", "amount", "alert", "threshold", "spent", "reached")) + "</tr>"
                for r in alerts.to_dict("records"))
            parts.append(f"<b>{html.escape(t('bill_alert_table', lang))}</b><table class='wb-lines'><tr>"
                         + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>" + rows + "</table>")
        return "".join(parts)

    def _download(self, name: str) -> bytes:
        rate = pv.rate(self.timeline, self.currency)
        if name == "bill_review.csv":
            return bv.review_csv(self.review, self.lang, self.currency, rate).encode("utf-8-sig")  # Excel reads the BOM
        from ..report import workbook  # openpyxl loads on the first workbook, not when the app starts
        return workbook.review_workbook(self.review, self.bill, self.currency, self.lang, rate)

    def _render(self):
        review, bill, lang = self.review, self.bill, self.lang
        if review is None or bill is None:
            return
        rate = pv.rate(self.timeline, self.currency)
        self.chart.layout.display = None
        to_date = review.by_category
        rejected_rows = bill.rejected_count
        notes = [t("bill_summary", lang).format(
            rows=bill.rows_read, name=self.name, rejected=rejected_rows, rejected_money=self._money(bill.rejected_usd),
            actual=self._money(to_date["actual_usd"].sum()), planned=self._money(to_date["planned_usd"].sum()),
            forecast=self._money(review.forecast_usd)),
            t("bill_forecast_like", lang).format(forecast=self._money(review.forecast_usd),
                                                 planned=self._money(review.planned_billed_usd))]
        charges = bill.by_charge_category()
        apart = charges.drop(["Usage", "Purchase"], errors="ignore")
        if (apart.abs() > 0.005).any():
            notes.append(t("bill_credits", lang).format(items="; ".join(
                f"{t(name, lang)} {self._money(usd)}" for name, usd in apart.items() if abs(usd) > 0.005)))
        for column, values in bill.unrecognised().items():
            notes.append(t("bill_unrecognised", lang).format(column=column, values=", ".join(
                f"{name} ({self._money(usd)})" for name, usd in list(values.items())[:6])))
        full = review.alerts[review.alerts["percent"] == 100.0]
        for alert in full.itertuples():
            if alert.day is pd.NaT or pd.isna(alert.day):
                key = "bill_projected" if isinstance(alert.projected_month, str) else "bill_projected_never"
                notes.append(t(key, lang).format(resource=t(alert.resource, lang), budget=self._money(alert.budget_usd),
                                                 month=alert.projected_month))
            else:
                notes.append(t("bill_spent", lang).format(resource=t(alert.resource, lang),
                                                          budget=self._money(alert.budget_usd), day=day_text(alert.day.date(), lang)))
        self.message.value = "<div class='wb-notes'>" + "<br>".join(html.escape(n) for n in notes) + "</div>"
        self.tables.value = self._comparison_tables(rate)
        spend, lines = pv.plan_vs_actual(review, lang, rate)
        spec, datasets = self.stack.update({"bill": (pc.plan_vs_actual, {"spend": spend, "lines": lines},
                                                     {"title": t("chart_plan_vs_actual", lang),
                                                      "month_title": t("month", lang), "cost_title": t("cost", lang),
                                                      "currency": self.currency, "lang": lang})})
        self.chart.show(spec, datasets)
        parts = []
        if review.flags:
            parts.append(f"<b>{html.escape(t('bill_flags', lang))}</b><ul>" + "".join(
                f"<li>{html.escape(flag_text(f, lang, self.currency, rate))}</li>" for f in review.flags[:20]) + "</ul>")
        for key, table in review.tags.items():
            shown, more = bv.tag_table(table, rate, lang)
            if shown.empty:
                continue
            parts.append(f"<b>{html.escape(t('bill_by_tag', lang).format(key=t(key, lang)))}</b>"
                         + self._compared(shown, "value", t(key, lang))
                         + (f"<div class='wb-notes'>{html.escape(t('bill_more_values', lang).format(count=more))}</div>"
                            if more > 0 else ""))
        if len(bill.rejected):
            shown = bill.rejected.head(20).assign(reason=bill.reasons(lang).head(20))
            more = len(bill.rejected) - len(shown)
            parts.append(f"<b>{html.escape(t('bill_rejected', lang))}</b>"
                         + _table(shown, ("file", "row", "column", "reason", "value", "cost_usd") if len(bill.files) > 1
                                  else ("row", "column", "reason", "value", "cost_usd"), rate, self.currency, lang)
                         + (f"<div class='wb-notes'>{html.escape(t('bill_more_rejected', lang).format(count=more))}</div>"
                            if more > 0 else ""))
        self.details.value = "".join(parts)


def amount(value: float, currency: str = "USD", lang: str = "en") -> str:
    """Money in a table as a reader writes it: whole units, cents below 100 (a test bill of 15 USD is not '0' and
    '15') under a heading that names the currency; in Chinese with its sign and 万 / 亿 (¥630.29 万)."""
    if lang == "zh":
        return money(value, currency, lang)
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}"


def _table(frame, columns, rate, currency, lang="en", key=None) -> str:
    names = {"value": t(key, lang) if key else t("bill_value", lang), "planned_usd": pv.amount_header(currency, lang, t("planned", lang)),
             "actual_usd": pv.amount_header(currency, lang, t("actual", lang)), "row": t("bill_row", lang),
             "column": t("bill_column", lang), "reason": t("bill_reason", lang), "file": t("bill_file", lang),
             "cost_usd": pv.amount_header(currency, lang, t("bill_money", lang))}
    head = "".join(f"<th>{html.escape(names.get(c, c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(
        f"<td>{html.escape(amount(row[c] * rate, currency, lang) if c.endswith('_usd') and pd.notna(row[c]) else '' if c.endswith('_usd') else t(str(row[c]), lang) if row[c] == UNATTRIBUTED else str(row[c]))}</td>"
        for c in columns)
        + "</tr>" for _, row in frame.iterrows())
    return f"<table class='wb-lines'><tr>{head}</tr>{body}</table>"
