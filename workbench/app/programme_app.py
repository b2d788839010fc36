"""The app's programme view: a year (or more) of model work month by month, beside the single-run planner.

Built the first time a user opens it (or a link asks for ``view=programme``), so the planner's first page stays
light. A preset or a loaded file gives the programme; the knobs of :mod:`workbench.programmes.programme_presets` change it;
every change is evaluated by :func:`workbench.programmes.timeline.evaluate` and drawn by the builders of
:mod:`workbench.report.programme_charts` in one :class:`~workbench.app.livechart.LiveChart` whose data change in place.
A refused value (a knob the programme cannot take, a bad file) is named in the banner, and the figures stay those
of the last valid programme, greyed.
"""
from __future__ import annotations

import html
import json
import logging

import ipywidgets as w

from ..report import programme_charts as pc, programme_views as pv
from ..programmes import programme_presets as pp
from .actuals_app import BillPanel
from ..report.charts import ChartStack
from .app_style import label_upload
from .downloads import XLSX_MIME, Downloads
from ..reference.numbers import money
from ..reference.i18n import t
from .livechart import LiveChart
from .programme_editor import ProgrammeEditor
from .programme_levers import ProgrammeLevers
from ..programmes.programme import Programme, ProgrammeError, loads
from ..programmes.timeline import evaluate, warning_text

log = logging.getLogger(__name__)
_KNOB_WIDGETS = {"horizon": w.IntSlider, "every": w.IntSlider, "cycles": w.IntSlider, "versions": w.IntSlider,
                 "growth": w.FloatSlider}
LOADED = "__loaded__"
EDITED = "__edited__"


class ProgrammeView:
    """``ProgrammeView(...).widget``; ``on_link(query)`` is called with the view's link query after each change."""

    def __init__(self, preset_id=None, knob_values=None, lang="en", currency="USD", notices=(), on_link=None):
        self.lang, self.currency, self.on_link = lang, currency, on_link
        self.preset_id = preset_id or pp.presets().index[0]
        self.loaded: Programme | None = None
        self.loaded_name = ""
        self.edited: Programme | None = None  # the user's own plan, once anything but the knobs is changed
        self.programme = self.timeline = None
        self.attribute = "workstream"
        self.stack = ChartStack()
        self._quiet = False
        self._build()
        self.notices = list(notices)
        knob_values = dict(knob_values or {})
        plan = knob_values.pop("plan", None)
        self._apply_preset(self.preset_id, knob_values)
        if plan is not None:  # a whole programme from the link: the user's own plan
            self._edited(plan.to_dict())

    # -- construction ---------------------------------------------------------------------------------
    def _build(self):
        self.preset = w.Dropdown(layout=w.Layout(width="490px"))
        self.preset.observe(self._preset_changed, "value")
        self.knob_widgets = {}
        for name, (_, _, low, high, whole, _, _) in pp.KNOBS.items():
            cls = _KNOB_WIDGETS[name]
            kwargs = {"step": 1} if whole else {"step": 0.5, "readout_format": ".1f"}
            widget = cls(min=low, max=high, value=low, continuous_update=False, style={"description_width": "200px"},
                         layout=w.Layout(width="490px"), **kwargs)
            widget.add_class(f"wb-knob-{name}")
            widget.observe(lambda change, name=name: self._knob_changed(name, change), "value")
            self.knob_widgets[name] = widget
        self.attribute_menu = w.Dropdown(layout=w.Layout(width="260px"), style={"description_width": "100px"})
        self.attribute_menu.observe(self._attribute_changed, "value")
        self.banner = w.HTML()
        self.banner.add_class("wb-banner")
        self.headline = w.HTML()
        self.headline.add_class("wb-programme-headline")
        self.chart = LiveChart()
        self.chart.add_class("wb-programme-charts")
        self.downloads = Downloads(self._download)
        self.upload = w.FileUpload(accept=".json,.toml,application/json", multiple=False, layout=w.Layout(width="auto"))
        self.upload.observe(self._upload_changed, "value")
        self.upload.add_class("wb-programme-upload")
        self.editor = ProgrammeEditor(self._edited, self._edit_refused, self.lang, self.currency)
        self.levers = ProgrammeLevers(self._lever_applied, self.lang, self.currency,
                                      on_undo=lambda before: self._edited(before.to_dict()))
        controls = w.VBox([self.preset, *self.knob_widgets.values(), self.editor.widget, self.attribute_menu,
                           self.downloads, self.upload], layout=w.Layout(width="500px", min_width="500px"))
        self.bill = BillPanel(self.lang, self.currency)
        self.figures = w.VBox([self.headline, self.chart, self.levers.widget, self.bill.widget],
                              layout=w.Layout(flex="1 1 0", min_width="640px"))
        self.widget = w.VBox([self.banner, w.HBox([controls, self.figures], layout=w.Layout(flex_flow="row wrap"))])
        self.widget.add_class("wb-programme")
        self._relabel()

    def _relabel(self):
        lang = self.lang
        self._quiet = True
        try:
            table = pp.presets()
            options = [(table.at[i, "label_zh"] if lang == "zh" else table.at[i, "label"], i) for i in table.index]
            turned = (self.programme is not None and self.preset_id in table.index and self.preset.value not in
                      (LOADED, EDITED) and pp.knobs(self.programme) != pp.knobs(pp.preset(self.preset_id)))
            if turned:  # the preset as its knobs left it: named by its values
                options = [(f"{label} → {pp.describe(self.programme, lang)}" if i == self.preset_id else label, i)
                           for label, i in options]
            if self.loaded is not None:
                options.append((f"{t('loaded_file', lang)}: {self.loaded_name}", LOADED))
            if self.edited is not None:  # named by its values, so that a changed cadence renames it
                options.append((f"{t('your_plan', lang)}{'：' if lang == 'zh' else ': '}{pp.describe(self.edited, lang)}",
                                EDITED))
            current = self.preset.value if self.preset.value is not None else self.preset_id
            self.preset.options = options
            self.preset.value = current if current in dict((v, k) for k, v in options) else options[0][1]
            self.preset.description = t("programme_preset", lang)
            for name, widget in self.knob_widgets.items():
                label, label_zh, *_, unit, unit_zh = pp.KNOBS[name]
                widget.description = f"{label_zh}（{unit_zh}）" if lang == "zh" else f"{label} [{unit}]"
                widget.tooltip = t(f"knob_help_{name}", lang)  # never left empty: the browser would say "null"
            self.attribute_menu.description = t("attribute_by", lang)
        finally:
            self._quiet = False
        label_upload(self.upload, t("load_programme", lang))
        self.downloads.files = [{"name": "programme.json", "mime": "application/json", "label": t("download_programme", lang)},
                                {"name": "programme_monthly.csv", "mime": "text/csv", "label": t("download_monthly", lang)},
                                {"name": "programme.xlsx", "mime": XLSX_MIME, "label": t("download_xlsx", lang)}]

    def set_language(self, lang, currency):
        self.lang, self.currency = lang, currency
        self._relabel()
        self._sync_knobs()  # the attribution menu's words
        self._render()
        self.bill.set_language(lang, currency)
        self.levers.set_language(lang, currency)
        if self.programme is not None:
            self.editor.show(self.programme, lang, currency)

    # -- events ---------------------------------------------------------------------------------------
    def _preset_changed(self, change):
        if self._quiet or change["new"] is None:
            return
        if change["new"] == LOADED:
            self._set_programme(self.loaded)
        elif change["new"] == EDITED:
            self._set_programme(self.edited)
        else:
            self._apply_preset(change["new"], {})

    def _apply_preset(self, preset_id, knob_values):
        self.preset_id = preset_id
        base = pp.preset(preset_id)
        try:
            programme = self._named(pp.with_knobs(base, **knob_values)) if knob_values else base
            evaluate(programme)
        except ProgrammeError as error:  # knobs a preset cannot take: the preset as it is, and the reason
            self.notices.append(pp.message(error, self.lang))
            programme = base
        self._set_programme(programme)
        self._relabel()

    def _named(self, programme):
        """A preset turned by its knobs is named by its values, not by the preset's words ("quarterly releases"
        once it releases every month); a plan the user named keeps its name."""
        base = pp.preset(self.preset_id)
        named_for_us = {base.name, *([pp.describe(self.programme)] if self.programme is not None else [])}
        if self.preset.value in (LOADED, EDITED) or programme.name not in named_for_us:
            return programme
        return programme.replace(name=base.name if pp.knobs(programme) == pp.knobs(base) else pp.describe(programme))

    def _edited(self, data: dict):
        """A change made in the editor (or a link's whole plan): the user's own plan from now on."""
        try:
            programme = Programme.from_dict(data)
            timeline = evaluate(programme)
        except ProgrammeError as error:
            self._refuse(pp.message(error, self.lang))
            return
        self.edited = programme
        self._relabel()
        self._select(EDITED)
        self._set_programme(programme, timeline)

    def _select(self, value):
        """Show ``value`` in the programme menu without acting on it."""
        self._quiet = True
        try:
            self.preset.value = value
        finally:
            self._quiet = False

    def _edit_refused(self, message: str):
        self._refuse(message)

    def _lever_applied(self, programme, name):
        before = self.programme
        self._edited(programme.to_dict())
        if self.programme is programme or self.programme == programme:
            self.levers.applied(name, before)

    def _knob_changed(self, name, change):
        if self._quiet:
            return
        try:
            programme = self._named(pp.with_knobs(self.programme, **{name: change["new"]}))
        except ProgrammeError as error:
            self._refuse(pp.message(error, self.lang))
            return
        self._set_programme(programme)
        self._relabel()  # the menu names the preset as its knobs left it

    def _attribute_changed(self, change):
        if self._quiet or change["new"] is None:
            return
        self.attribute = change["new"]
        self._render()

    def _upload_changed(self, change):
        files = change["new"]
        if not files:
            return
        item = files[0]
        name = str(item.get("name", "programme.json"))
        try:
            programme = loads(bytes(item["content"]), "toml" if name.lower().endswith(".toml") else "json")
            evaluate(programme)
        except ProgrammeError as error:
            self._refuse(f"{name[:60]}: {pp.message(error, self.lang)}")
            return
        except Exception:  # noqa: BLE001 - a file the checks did not foresee: a message, never a silent page
            log.exception("programme upload failed")
            self._refuse(f"{name[:60]}: {t('internal_error', self.lang)}")
            return
        finally:
            self._quiet = True
            try:
                self.upload.value = ()
            finally:
                self._quiet = False
        self.loaded, self.loaded_name = programme, name[:60]
        self._relabel()
        self._select(LOADED)
        self.notices.append(t("programme_loaded", self.lang).format(name=self.loaded_name))
        self._set_programme(programme)

    # -- state ------------------------------------------------------------------------------------------
    def _refuse(self, message):
        self.figures.add_class("wb-stale")
        self.banner.value = (f"<div class='wb-error'><b>{html.escape(t('programme_not_applied', self.lang))}</b><br>"
                             f"{html.escape(message)}</div>")
        self._sync_knobs()  # the controls show the programme the figures are of

    def _set_programme(self, programme: Programme, timeline=None):
        try:
            timeline = evaluate(programme) if timeline is None else timeline
        except ProgrammeError as error:
            self._refuse(pp.message(error, self.lang))
            return
        self.programme, self.timeline = programme, timeline
        self.figures.remove_class("wb-stale")
        self.bill.set_plan(timeline)
        self._sync_knobs()
        self.editor.show(programme, self.lang, self.currency, pv.rate(timeline, "CNY"))
        self.levers.set_programme(programme, timeline)
        self._render()

    def _sync_knobs(self):
        if self.programme is None:
            return
        values = pp.knobs(self.programme)
        self._quiet = True
        try:
            for name, widget in self.knob_widgets.items():
                widget.disabled = name not in values
                if name in values:
                    widget.value = values[name]
            keys = pv.tag_keys(self.timeline)
            self.attribute_menu.options = [(t(k, self.lang), k) for k in keys]
            self.attribute = self.attribute if self.attribute in keys else keys[0]
            self.attribute_menu.value = self.attribute
        finally:
            self._quiet = False

    def link_query(self) -> str:
        """The link of what is shown: the preset and the knobs that differ from it; the user's own plan (edited,
        or loaded from a file) whole, in ``plan``."""
        if self.programme is None:
            return "view=programme"
        if self.preset.value in (LOADED, EDITED):
            plan = pp.encode_plan(self.programme)
            return f"view=programme&plan={plan}" if len(plan) <= pp.MAX_LINK_PLAN_CHARS else "view=programme"
        base, now = pp.knobs(pp.preset(self.preset_id)), pp.knobs(self.programme)
        changed = [f"{k}={now[k]:g}" for k in pp.KNOBS if k in now and now[k] != base.get(k)]
        return "&".join(["view=programme", f"programme={self.preset_id}", *changed])

    # -- drawing ----------------------------------------------------------------------------------------
    def _render(self):
        if self.timeline is None:
            return
        lang, cur, tl = self.lang, self.currency, self.timeline
        spend, lines = pv.cumulative(tl, cur, lang)
        titles = {"month_title": t("month", lang), "currency": cur, "lang": lang}
        key_label = t(self.attribute, lang)
        parts = {
            "months": (pc.monthly_costs, {"frame": pv.monthly(tl, cur, lang)},
                       {**titles, "title": t("chart_months", lang), "category_title": t("category", lang),
                        "cost_title": t("cost", lang)}),
            "budget": (pc.budget_lines, {"spend": spend, "lines": lines},
                       {**titles, "title": t("chart_budget", lang), "spent_title": t("spent", lang),
                        "line_title": t("alert_line", lang), "crossed_title": t("crossed_in", lang)}),
            "attribution": (pc.attribution, {"frame": pv.attribution(tl, self.attribute, cur, lang)},
                            {"title": t("chart_attribution", lang).format(key=key_label), "value_title": key_label,
                             "category_title": t("category", lang), "cost_title": t("cost", lang), "currency": cur,
                             "lang": lang}),
            "kpis": (pc.kpi_lines, {"frame": pv.kpis(tl, cur, lang)},
                     {"title": t("chart_kpis", lang), "month_title": t("month", lang), "lang": lang}),
        }
        owned = pv.own_or_rent(tl, cur, lang)
        if len(owned):  # an owned fleet: when owning it pays for itself against renting its hours
            parts["own_or_rent"] = (pc.own_or_rent, {"frame": owned},
                                    {"title": t("chart_own_or_rent", lang), "month_title": t("month", lang),
                                     "cost_title": t("cost", lang), "currency": cur, "lang": lang})
        spec, datasets = self.stack.update(parts)
        self.chart.show(spec, datasets)
        self._render_headline()
        messages = list(self.notices) + [warning_text(key, values, lang, cur, pv.rate(tl, cur))
                                         for key, values in tl.warning_items]
        if self.preset.value == LOADED and self.link_query() == "view=programme":  # too large for a link
            messages.append(t("file_not_in_link", lang))
        self.banner.value = "" if not messages else "<div class='wb-notes'>" + "<br>".join(
            html.escape(m) for m in messages) + "</div>"
        self.notices = []
        if self.on_link is not None:
            self.on_link(self.link_query())

    def _money(self, usd) -> str:
        return money(usd * pv.rate(self.timeline, self.currency), self.currency, self.lang)

    def _render_headline(self):
        lang, tl = self.lang, self.timeline
        first, after = pv.first_run_split(tl)
        total = tl.total_cost_usd
        opening, closing = ("（", "）") if lang == "zh" else (" (", ")")
        share = (lambda x: f"{opening}{x / total:.0%}{closing}") if total > 0 else (lambda x: "")
        pretrains = any("pretrain" in w.stages for w in self.programme.workstreams)
        first_label = t("first_run" if pretrains else "first_finetune" if tl.first_run_workstreams() else "no_training_run",
                        lang)
        cards = [(t("programme_total", lang), self._money(total), "wb-programme-total")]
        if tl.first_run_workstreams():  # a plan that only serves has no first run to set apart
            cards += [(first_label, f"{self._money(first)}{share(first)}", "wb-first-run"),
                      (t("after_first_run", lang), f"{self._money(after)}{share(after)}", "wb-after-first-run")]
        else:
            cards.append((first_label, t("serving_only_note", lang), "wb-first-run"))
        crossings = pv.crossings(tl, self.currency, lang)
        money = pv.where_the_money_goes(tl, self.currency, lang)
        beyond = f"<div>{self._money(tl.beyond_horizon_usd)} {html.escape(t('beyond_horizon', lang))}</div>" \
            if tl.beyond_horizon_usd > 0.5 else ""
        api = pv.paid_api_text(tl, self.currency, lang)
        beyond += f"<div class='wb-paid-api'>{html.escape(api)}</div>" if api else ""
        self.headline.value = (
            "<div class='wb-cards'>" + "".join(
                f"<div class='wb-card {cls}'><div class='wb-card-label'>{html.escape(label)}</div>"
                f"<div class='wb-card-value'>{html.escape(value)}</div></div>" for label, value, cls in cards)
            + "</div>" + (f"<div class='wb-programme-alerts'><b>{html.escape(t('alerts', lang))}</b>"
                          + _table_html(crossings, "wb-crossings") + "</div>" if len(crossings) else "")
            + (f"<div class='wb-money'><b>{html.escape(t('where_money_goes', lang))}</b>"
               + _table_html(money, "wb-where") + "</div>" if len(money) else "") + beyond
            + self._fleets_html())

    def _fleets_html(self) -> str:
        """The committed GPUs, what they cost idle and how much they are used (nothing when all is rented)."""
        table = pv.fleets_table(self.timeline, self.currency, self.lang)
        if not len(table):
            return ""
        head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
                       for row in table.itertuples(index=False))
        return (f"<div class='wb-fleets'><b>{html.escape(t('fleets', self.lang))}</b>"
                f"<table class='wb-lines'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")

    def _download(self, name: str) -> bytes:
        if name == "programme.json":
            return (self.programme.to_json() + "\n").encode()
        if name == "programme_monthly.csv":
            return pv.monthly_csv(self.timeline, self.currency, self.lang).encode("utf-8-sig")  # Excel reads the BOM as UTF-8
        if name == "programme.xlsx":
            from ..report import workbook  # openpyxl loads on the first workbook, not when the app starts
            return workbook.plan_workbook(self.timeline, self.currency, self.lang, pv.rate(self.timeline, self.currency))
        raise KeyError(name)

    def to_json(self) -> str:
        return json.dumps(self.programme.to_dict())


def _table_html(table, css: str) -> str:
    """A small HTML table of ``table`` (header and cells escaped)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
                   for row in table.itertuples(index=False))
    return f"<table class='wb-lines {css}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
