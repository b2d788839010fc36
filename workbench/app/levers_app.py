"""The single-run view's lever panel: *Find levers* prices every lever of the scenario shown
(:func:`workbench.programmes.levers.levers`, one batched estimate, on demand so that moving a slider stays fast) and lists
them ranked by risk-adjusted saving, each with its saving, risk, days saved, the risk in words and an *Apply*
button that puts the lever into the scenario.
"""
from __future__ import annotations

import html
import logging

import ipywidgets as w

from ..reference.i18n import problem_zh, t
from ..reference.numbers import money
from ..report import views

log = logging.getLogger(__name__)


class LeverPanel:
    """``LeverPanel(on_apply).widget``; :meth:`set_scenario` with each scenario shown (the table is then stale
    and cleared), :meth:`set_language` on a switch. ``on_apply(scenario)`` shows a scenario."""

    def __init__(self, on_apply, lang="en", currency="USD", rate=1.0):
        self.on_apply, self.lang, self.currency, self.rate = on_apply, lang, currency, rate
        self.scenario = self.table = None
        self.applied = ("", {})  # the last lever applied (its name and changes), said until levers are found again
        self.title = w.HTML()
        self.find = w.Button(layout=w.Layout(width="auto"))
        self.find.add_class("wb-levers-find")
        self.find.on_click(self._find)
        self.message = w.HTML()
        self.rows = w.VBox()
        self.rows.add_class("wb-levers-table")
        # levers that lose money once their risk is priced, or cannot help here: behind "show all"
        self.show_all = w.ToggleButton(value=False, layout=w.Layout(width="auto"))
        self.show_all.add_class("wb-levers-show-all")
        self.show_all.observe(lambda _change: self._render(), "value")
        self.widget = w.VBox([self.title, self.find, self.message, self.rows])
        self.widget.add_class("wb-levers")
        self.set_language(lang, currency, rate)

    def set_language(self, lang, currency, rate):
        if (lang, currency, rate) == (self.lang, self.currency, self.rate) and self.find.description:
            return  # called on every redraw: nothing to relabel
        self.lang, self.currency, self.rate = lang, currency, rate
        self.title.value = f"<h4>{html.escape(t('levers_title', lang))}</h4>"
        self.find.description = t("levers_find", lang)
        self._render()

    def set_scenario(self, scenario):
        if scenario is not self.scenario:
            self.scenario, self.table = scenario, None  # the table was another scenario's
            self._render()

    def _find(self, _button=None):
        from ..programmes.levers import levers
        from ..plan.scenario import ScenarioError
        self.applied = ("", {})
        try:
            self.table = levers(self.scenario)
        except ScenarioError as error:
            self.table = None
            self.message.value = f"<div class='wb-error'>{html.escape(error.message(self.lang, reader=True))}</div>"
            return
        except Exception:  # noqa: BLE001 - a defect: a message, never a silent panel
            log.exception("levers failed: %s", self.scenario.to_json() if self.scenario is not None else None)
            self.table = None
            self.message.value = f"<div class='wb-error'>{html.escape(t('internal_error', self.lang))}</div>"
            return
        self._render()

    def _apply(self, applied, name=""):
        before = self.scenario
        self.on_apply(before.replace(**applied))
        if self.scenario is not before:  # shown: say what changed, the table being the previous scenario's
            self.applied = (name, applied)
            self._render()

    def _money(self, usd) -> str:
        return money(usd * self.rate, self.currency, self.lang)

    def _row(self, lever, lowers: bool = False):
        """One lever: Apply, what it saves and risks, what it changes in words; its source on hover."""
        lang = self.lang
        button = w.Button(description=t("levers_apply", lang), layout=w.Layout(width="80px", min_width="80px",
                                                                              flex="0 0 auto"))
        button.add_class("wb-lever-apply")
        button.add_class(f"wb-lever-{lever.lever}")
        label = lever.name_zh if lang == "zh" else lever.name
        button.on_click(lambda _b, applied=lever.applied, label=label: self._apply(applied, label))
        days = t("levers_sooner" if lever.days_saved >= 0.05 else "levers_later" if lever.days_saved <= -0.05
                 else "levers_same_days", lang).format(days=abs(lever.days_saved))
        text = t("levers_row", lang).format(
            name=label, saving=self._money(lever.saving_usd),
            risk=self._money(lever.risk_usd) if lever.risk_priced else t("levers_risk_not_priced", lang),
            adjusted=self._money(lever.risk_adjusted_saving_usd), days=days,
            changes=views.describe_changes(lever.changes, lever.applied, lang, self.currency, self.rate))
        crosses = "".join(f"<br><span class='wb-boundary'>⚠ {html.escape(t('levers_crosses', lang))} "
                          f"{html.escape(views.warning_text(warning, lang, self.currency, self.rate))}</span>" for warning in lever.crosses)
        mark = (f"<span class='wb-boundary'>{html.escape(t('levers_lowers_service', lang))}</span><br>"
                if lowers else "")
        risk = views.readable(lever.risk_zh if lang == "zh" else lever.risk, lang)
        detail = w.HTML(f"<div class='wb-lever'>{mark}<b>{html.escape(text)}</b><br><span class='wb-lever-risk' "
                        f"title=\"{html.escape(lever.source, quote=True)}\">{html.escape(risk)} ⓘ</span>{crosses}</div>")
        return w.HBox([button, detail], layout=w.Layout(align_items="flex-start", margin="0 0 6px 0"))

    def _render(self):
        lang = self.lang
        if self.table is None:
            name, applied = self.applied
            changes = views.describe_changes("; ".join(f"{k}=" for k in applied), applied, lang, self.currency, self.rate)
            text = t("levers_applied", lang).format(name=name, changes=changes) if name else t("levers_hint", lang)
            self.message.value = f"<div class='wb-lever-risk'>{html.escape(text)}</div>"
            self.rows.children = ()
            return
        table = self.table
        helps = table["applicable"] & ~table["lowers_service"] & (table["risk_adjusted_saving_usd"] > 0.005)
        service = table["applicable"] & table["lowers_service"]
        rest = table["applicable"] & ~helps & ~service  # they lose money once their risk is priced
        self.message.value = f"<div class='wb-lever-risk'>{html.escape(t('levers_explained', lang))}</div>"
        rows = [self._row(lever) for lever in table[helps].itertuples()]
        if service.any():
            rows.append(w.HTML(f"<div class='wb-lever-risk'><b>{html.escape(t('levers_service', lang))}</b></div>"))
            rows += [self._row(lever, lowers=True) for lever in table[service].itertuples()]
        hidden = table[rest | ~table["applicable"]]
        if len(hidden):
            self.show_all.description = t("levers_show_all", lang).format(count=len(hidden))
            rows.append(self.show_all)
        if self.show_all.value:
            rows += [self._row(lever) for lever in table[rest].itertuples()]
            skipped = table[~table["applicable"]]
            if len(skipped):
                rows.append(w.HTML("<div class='wb-lever-risk'>" + html.escape(t("levers_not_applicable", lang)) + " "
                                   + "; ".join(html.escape(f"{r.name_zh if lang == 'zh' else r.name} "
                                                           f"({views.warning_text(_why_not(r.why_not, lang), lang, self.currency, self.rate)})")
                                               for r in skipped.itertuples()) + "</div>"))
        self.rows.children = rows


def _why_not(why, lang: str):
    """Why a lever does not apply: a message code is written in the reader's language by warning_text; a refusal
    of the variant (a validation error's text) is translated here."""
    return problem_zh(str(why)) if lang == "zh" and not callable(getattr(why, "text", None)) else why
