"""Levers for a whole programme in the app: what each saves over the horizon, its risk, and an Apply button.

The levers are priced on request (:func:`workbench.programmes.levers.programme_levers` evaluates the programme once
per lever, about a second for the presets), not on every edit; Apply hands the programme with the lever applied
(:func:`~workbench.programmes.levers.apply_programme_lever`) to the view, which then shows it as the user's plan.
"""
from __future__ import annotations

import html
import logging

import ipywidgets as w

from ..programmes.levers import apply_programme_lever, programme_levers
from ..reference.numbers import money
from ..reference.i18n import t

log = logging.getLogger(__name__)


class ProgrammeLevers:
    """``ProgrammeLevers(on_apply).widget``; ``on_apply(programme)`` receives the programme with a lever applied."""

    def __init__(self, on_apply, lang="en", currency="USD", on_undo=None):
        self.on_apply, self.lang, self.currency = on_apply, lang, currency
        self.on_undo = on_undo or (lambda programme: None)
        self.programme = self.timeline = self.table = None
        self.find = w.Button(layout=w.Layout(width="220px"))
        self.find.add_class("wb-plevers-find")
        self.find.on_click(self._find)
        self.rows = w.VBox()
        self.rows.add_class("wb-plevers-rows")
        self.title = w.HTML()
        self.history: list = []  # (lever name, the programme before it), newest last
        self.done = w.HTML()
        self.done.add_class("wb-plevers-applied")
        self.undo = w.Button(layout=w.Layout(width="90px", display="none"))
        self.undo.add_class("wb-plevers-undo")
        self.undo.on_click(self._undo)
        self.widget = w.VBox([self.title, w.HBox([self.find, self.undo]), self.done, self.rows])
        self.widget.add_class("wb-plevers")
        self._label()

    def _label(self):
        self.title.value = f"<b>{html.escape(t('plevers_title', self.lang))}</b>"
        self.find.description = t("plevers_find", self.lang)
        self.undo.description = t("plevers_undo", self.lang)
        self.done.value = "<br>".join(html.escape(t("plevers_applied", self.lang).format(name=name))
                                      for name, _ in self.history)

    def applied(self, name, before):
        """Record a lever the view applied: said under the button, and undone by Undo."""
        self.history.append((name, before))
        self.undo.layout.display = None
        self._label()

    def _undo(self, _button=None):
        if not self.history:
            return
        name, before = self.history.pop()
        self.undo.layout.display = None if self.history else "none"
        self._label()
        self.on_undo(before)

    def set_language(self, lang, currency):
        self.lang, self.currency = lang, currency
        self._label()
        self._draw()

    def set_programme(self, programme, timeline):
        """A new programme: the levers of the old one no longer hold."""
        if programme is not self.programme:
            self.programme, self.timeline, self.table = programme, timeline, None
            self._draw()

    def _find(self, _button=None):
        self.find.disabled = True
        try:
            self.table = programme_levers(self.programme)
        except Exception:  # noqa: BLE001 - a lever the checks did not foresee: a message, never a broken page
            log.exception("programme levers failed")
            self.table = None
            self.rows.children = [w.HTML(f"<div class='wb-error'>{html.escape(t('internal_error', self.lang))}</div>")]
            return
        finally:
            self.find.disabled = False
        self._draw()

    def _money(self, usd) -> str:
        rate = self.programme.base_scenario.cny_per_usd if self.currency == "CNY" else 1.0
        return money(usd * rate, self.currency, self.lang)

    def _draw(self):
        if self.table is None:
            self.rows.children = []
            return
        lang, zh = self.lang, self.lang == "zh"
        usable = self.table[self.table["applicable"] & (self.table["saving_usd"] > 0.5)]
        rows = []
        for row in usable.to_dict("records"):
            name = row["name_zh"] if zh else row["name"]
            risk = row["risk_zh"] if zh else row["risk"]
            after = row["risk_adjusted_saving_usd"]
            colon = "：" if zh else ": "
            text = (f"<div class='wb-plever'><b>{html.escape(name)}</b>{colon}"
                    f"{html.escape(t('plevers_saves', lang).format(saving=self._money(row['saving_usd'])))}"
                    + (f"{'；' if zh else '; '}{html.escape(t('plevers_after_risk', lang).format(amount=self._money(after)))}"
                       if abs(row["risk_usd"]) >= 0.5 else "")
                    + f"<br><span class='wb-help'>{html.escape(t('plevers_risk', lang))}{colon}{html.escape(str(risk))}"
                    + ("" if row["risk_priced"] else
                       f"{'（' if zh else ' ('}{html.escape(t('plevers_not_priced', lang))}{'）' if zh else ')'}")
                    + "</span></div>")
            apply = w.Button(description=t("plevers_apply", lang), layout=w.Layout(width="90px"))
            apply.add_class(f"wb-plever-apply-{row['lever']}".replace("_", "-"))
            apply.on_click(lambda _b, row=row: self._apply(row))
            rows.append(w.HBox([w.HTML(text, layout=w.Layout(flex="1 1 auto")), apply]))
        if not rows:
            rows = [w.HTML(html.escape(t("plevers_none", lang)))]
        self.rows.children = rows

    def _apply(self, row):
        self.on_apply(apply_programme_lever(self.programme, row), row["name_zh"] if self.lang == "zh" else row["name"])
