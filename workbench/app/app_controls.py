"""One control per scenario field, made from the field table: a slider (log-scale where a quantity spans
decades) with a text box for typed values, or a menu; a unit, a one-line help and an "auto" button for fields
that may be left empty. Widgets share their layout and style models (:class:`SharedModels`).
"""

import html
import math

import ipywidgets as w
from ipywidgets.widgets.widget_description import DescriptionStyle
from ipywidgets.widgets.widget_string import HTMLStyle, TextStyle
import numpy as np

from ..reference import catalog, prices
from ..reference.region_prices import region_label
from ..report.views import format_quantity
from ..report import views
from ..reference.i18n import CHOICE_LABELS, CHOICES_OF, choice_label, t
from ..plan.money import HOW_TO_WRITE, HOW_TO_WRITE_ZH, MoneyError, parse_money
from ..plan.scenario import ScenarioError, check_field
from ..plan.scenario_fields import all_regions


#: The Advanced section's groups, in order, with their English and Chinese titles.
GROUP_LABELS = {
    "model": ("Model", "模型"), "hardware": ("Hardware", "硬件"), "cost": ("Pricing", "计价"),
    "memory": ("Memory and parallelism", "显存与并行"), "sft": ("Supervised fine-tuning", "监督微调"),
    "preference": ("Preference tuning", "偏好对齐"), "evaluation": ("Evaluation", "评测"),
    "inference": ("Serving", "推理服务"), "storage": ("Storage", "存储"), "network": ("Network", "网络"),
    "annotation": ("Annotation", "标注"), "operations": ("Logging and staff", "日志与人员"),
    "failures": ("Failures and checkpoints", "故障与检查点"), "experiments": ("Experiments", "实验"),
    "budget": ("Budget and currency", "预算与货币"), "self_hosted": ("Self-hosted", "自建机房"),
}


class SharedModels:
    """One Layout (or Style) model per distinct setting, shared by every widget that uses it.

    Each ipywidget otherwise brings a Layout and a Style model of its own: the planner had 449 models,
    whose states the kernel builds and sends (1.3 MB, ~0.7 s) before a page can draw anything. Only for
    layouts and styles that are never changed after they are made: a change would reach every sharer."""

    def __init__(self):
        self._made = {}

    def layout(self, **settings) -> w.Layout:
        return self._get(w.Layout, settings)

    def style(self, cls, **settings):
        return self._get(cls, settings)

    def _get(self, cls, settings):
        key = (cls, tuple(sorted(settings.items())))
        if key not in self._made:
            self._made[key] = cls(**settings)
        return self._made[key]


class FieldControl:
    """One scenario field: label with unit, slider or menu, a text box for typed values, an 'auto' button
    for fields whose empty value is resolved by the estimate, a message line and a help line."""

    def __init__(self, field, value, on_change, lang="en", shared: SharedModels | None = None, on_reject=None,
                 cny_per_usd=lambda: 7.1, currency=lambda: "USD"):
        self.field, self.on_change, self.on_reject, self.lang = field, on_change, on_reject, lang
        self.cny_per_usd = cny_per_usd  # the plan's rate, for an amount typed in renminbi (¥2,000万)
        # the display currency: a money field (unit USD...) shows and reads its amounts in it, a bare 3000万 on a
        # renminbi page being yuan; the field itself stays in USD
        self.currency = currency
        self.money = str(field.unit).startswith("USD")
        self.value = value  # the last valid value [field unit]
        self._syncing = False
        self.rejected = False  # the text box holds a value that failed validation (its message stays)
        self.error = None  # ...and the ScenarioError that refused it, to say again in another language
        shared = shared or SharedModels()
        html_style = shared.style(HTMLStyle)
        self.label = w.HTML(layout=shared.layout(width="165px"), style=html_style)
        self.message = w.HTML(layout=shared.layout(margin="0 0 0 165px"), style=html_style)
        self.message.add_class("wb-message")
        self.help = w.HTML(layout=shared.layout(), style=html_style)
        self.help.add_class("wb-help")
        self.slider = self.menu = self.text = self.auto = None
        parts = [self.label]
        f = field
        if f.type in ("choice", "gpu", "provider", "region"):
            # a region menu: "" (none chosen) first, then every region on record
            options = {"gpu": catalog.gpu_ids, "provider": prices.providers,
                       "region": lambda: ["", *all_regions()]}.get(f.type, lambda: list(f.choices))()
            self.menu = w.Dropdown(options=self._labelled(options, lang), value=self._menu_value(value),
                                   layout=shared.layout(width="250px"), style=shared.style(DescriptionStyle))
            self.menu.observe(self._menu_changed, "value")
            parts.append(self.menu)
        else:
            if f.numeric:
                self.slider = self._make_slider(f, shared)
                self.slider.observe(self._slider_changed, "value")
                parts.append(self.slider)
            self.text = w.Text(value=format_quantity(value), continuous_update=False,
                               layout=shared.layout(width="100px" if f.numeric else "250px"),
                               style=shared.style(TextStyle))
            self.text.observe(self._text_changed, "value")
            parts.append(self.text)
            if f.nullable:
                self.auto = w.Button(layout=shared.layout(width="52px"), style=shared.style(w.ButtonStyle))
                self.auto.on_click(self._auto_clicked)
                parts.append(self.auto)
        self.widget = w.VBox([w.HBox(parts, layout=shared.layout()), self.message, self.help],
                             layout=shared.layout(margin="0 0 4px 0"))
        self.widget.add_class("wb-control")
        self.widget.add_class(f"wb-field-{f.name}")
        self.set_value(value)
        self.relabel(lang)

    @staticmethod
    def _make_slider(f, shared):
        common = dict(continuous_update=False, readout=False, layout=shared.layout(width="150px"),
                      style=shared.style(w.SliderStyle))
        if f.scale == "log":
            lo = f.min if f.min > 0 else (f.default / 1000 if isinstance(f.default, (int, float)) and f.default > 0
                                          else f.max / 1e9)
            return w.FloatLogSlider(min=math.log10(lo), max=math.log10(f.max), step=0.01, base=10, **common)
        if f.type == "int":
            return w.IntSlider(min=int(f.min), max=int(f.max), step=1, **common)
        return w.FloatSlider(min=f.min, max=f.max, step=(f.max - f.min) / 200, **common)

    # -- display --------------------------------------------------------------------------------------
    def relabel(self, lang):
        f = self.field
        self.lang = lang
        label = f.label_zh if lang == "zh" else f.label
        unit = t(f.unit, lang) if f.unit else ""
        if self.money and self._in_yuan():
            unit = unit.replace("USD", "元" if lang == "zh" else "CNY")
        self.label.value = f"<b>{html.escape(label)}</b>" + (f" <span class='wb-unit'>[{html.escape(unit)}]</span>" if unit else "")
        self.help.value = html.escape(views.readable(f.help_zh if lang == "zh" else f.help, lang))
        if self.rejected and self.error is not None:
            self.set_error(self.error.message(lang, reader=True))
        if self.auto is not None:
            self.auto.description = t("auto", lang)
            self.auto.tooltip = t("auto_hint", lang)
        if self.menu is not None and CHOICES_OF.get(f.name, f.name) in CHOICE_LABELS:
            self._syncing = True
            try:
                value = self.menu.value
                self.menu.options = self._labelled([choice for _, choice in self.menu.options], lang)
                self.menu.value = value
            finally:
                self._syncing = False

    def _labelled(self, choices, lang):
        """(label, id) pairs where the field's choices have labels, else the ids as they are."""
        if self.field.type == "region":  # a region's name, then its id: 华北2（北京） cn-beijing
            return [(choice_label(self.field.name, c, lang) if c == "" else region_label(c, lang), c) for c in choices]
        if CHOICES_OF.get(self.field.name, self.field.name) not in CHOICE_LABELS:
            return list(choices)
        return [(choice_label(self.field.name, choice, lang), choice) for choice in choices]

    def _in_yuan(self) -> bool:
        return self.currency() == "CNY"

    def _shown(self, value, digits=None):
        """A value of the field as its text box shows it: an amount in the display currency."""
        if self.money and self._in_yuan() and isinstance(value, (int, float)):
            value = value * float(self.cny_per_usd())
        if self.lang == "zh" and self.field.numeric and isinstance(value, (int, float)) and math.isfinite(value):
            # 2130万, as a Chinese reader types it; an amount with more digits, so that re-entering it keeps it
            return zh_quantity(value, (9 if self.money else 6) if digits is None else digits)
        return format_quantity(value) if digits is None else format_quantity(value, digits=digits)

    def refresh_currency(self):
        """The language or the display currency changed: the unit and the value shown follow (700亿 / 70B; an
        amount in yuan or dollars); a refused text stays as typed."""
        self.relabel(self.lang)
        self.refresh_value()

    def refresh_value(self):
        """Show the last valid value again, as the language and currency now write it (a refused text stays)."""
        if self.text is not None and not self.rejected:
            self.set_value(self.value)

    def set_value(self, value):
        """Show ``value`` without calling back."""
        self.value = value
        self._syncing = True
        try:
            if self.menu is not None:
                shown = self._menu_value(value)
                if self.field.type == "region" and shown not in [c for _, c in self.menu.options]:
                    # a link's region before the menu holds its provider's: offered, then the render narrows it
                    self.menu.options = self._labelled([*(c for _, c in self.menu.options), shown], self.lang)
                self.menu.value = shown
            if self.text is not None:
                self.text.value = self._shown(value)
            if self.slider is not None and value is not None:
                self._move_slider(value)
        finally:
            self._syncing = False

    def show_resolved(self, value):
        """For an empty (auto) field: the value the estimate used, as placeholder and slider position."""
        if self.text is None or not self.field.nullable:
            return
        known = value is not None and np.isfinite(value)
        shown = self._shown(value, digits=3) if known else t("none_on_record", self.lang)
        self.text.placeholder = f"{t('auto', self.lang)}: {shown}"
        if self.text.value == "" and value is not None and np.isfinite(value) and self.slider is not None:
            self._syncing = True
            try:
                self._move_slider(value)
            finally:
                self._syncing = False

    def _move_slider(self, value):
        s = self.slider
        lo, hi = (10 ** s.min, 10 ** s.max) if isinstance(s, w.FloatLogSlider) else (s.min, s.max)
        s.value = min(max(value, lo), hi)

    def set_error(self, message):
        self.message.value = f"<span class='wb-error'>{html.escape(message)}</span>" if message else ""

    def set_note(self, message):
        """A boundary the value crosses (not an error: the value is used), beside the control."""
        if not self.rejected:
            self.message.value = f"<span class='wb-boundary'>{html.escape(message)}</span>" if message else ""

    # -- events ---------------------------------------------------------------------------------------
    def _emit(self, value):
        self.value = value
        self.rejected, self.error = False, None
        self.set_error("")
        self.on_change(self.field.name, value)

    def set_choices(self, choices):
        """A menu's choices, as ids (a region menu: the regions of the plan's provider); the value shown stays one."""
        if self.menu is None:
            return
        current = self.menu.value
        choices = list(choices) + ([current] if current not in choices else [])
        if [c for _, c in self.menu.options] == choices:
            return
        self._syncing = True
        try:
            self.menu.options = self._labelled(choices, self.lang)
            self.menu.value = current
        finally:
            self._syncing = False

    def _menu_value(self, value):
        """The menu's value for a field value: a region left empty is the menu's "" (none chosen)."""
        return "" if value is None and self.field.type == "region" else value

    def _menu_changed(self, change):
        if not self._syncing:
            self._emit(None if change["new"] == "" and self.field.type == "region" else change["new"])

    def _slider_changed(self, change):
        if self._syncing:
            return
        value = change["new"]
        if self.field.type == "int":
            value = int(round(value))
        elif isinstance(self.slider, w.FloatLogSlider):
            value = float(f"{value:.3g}")
        self._syncing = True
        try:
            self.text.value = self._shown(value)
        finally:
            self._syncing = False
        self._emit(value)

    def _text_changed(self, change):
        if self._syncing:
            return
        note = ""
        try:
            value, note = self._money(change["new"])
            value = check_field(self.field.name, value)
        except ScenarioError as error:
            self.rejected, self.error = True, error
            self.set_error(error.message(self.lang, reader=True))
            if self.on_reject is not None:
                self.on_reject(self.field.name)
            return
        if self.slider is not None and value is not None:
            self._syncing = True
            try:
                self._move_slider(value)
            finally:
                self._syncing = False
        self._emit(value)
        if note:  # an amount typed in renminbi: the dollars it became, said beside the box
            self.set_note(note)

    def _money(self, text):
        """A money field's text as people type money (``$3M``, ``3 million``, ``¥2,000万``, ``2000万元``), in USD,
        and the conversion when it was in renminbi (a bare amount is in the display currency); other fields' text
        as it is."""
        if not (isinstance(text, str) and text.strip() and self.money):
            return text, ""
        try:
            money = parse_money(text, self.currency(), float(self.cny_per_usd()))
        except MoneyError as error:
            raise ScenarioError(self.field.name, text, error.problem, f"an amount such as {HOW_TO_WRITE}",
                                f"金额，例如 {HOW_TO_WRITE_ZH}") from None
        if money.currency == "USD":
            return money.usd, ""
        return money.usd, (f"¥{money.amount:,.0f} 按 {money.cny_per_usd:g} 元/美元 = {money.usd:,.0f} 美元"
                           if self.lang == "zh" else money.note)

    def _auto_clicked(self, _button):
        self.set_value(None)
        self._emit(None)


def zh_quantity(value: float, digits: int = 6) -> str:
    """A quantity as a Chinese reader types it, which the fields read back: ``2130万``, ``700亿``, ``2万亿``,
    ``4096``, ``0.00001`` (no thousands separator: a field refuses commas; no exponent)."""
    rounded = float(f"{value:.{digits}g}")
    size = abs(rounded)
    for unit, scale in (("万亿", 1e12), ("亿", 1e8), ("万", 1e4)):
        if size >= scale:
            return np.format_float_positional(float(f"{rounded / scale:.{digits}g}"), trim="-") + unit
    return np.format_float_positional(rounded, trim="-")
