"""The planner app (ipywidgets): controls made from the scenario field table, headline figures, charts,
cost lines, exports, links and an A/B comparison. ``notebooks/planner.ipynb`` only calls
:meth:`Planner.from_environment` and displays it.

Design rules: the planner keeps the last *valid* scenario and estimate; a bad typed value is shown next
to its control and changes nothing else; no callback lets an exception reach the page.
"""
from __future__ import annotations

import base64
import functools
import html
import json
import logging
import math
import os
import re
import time
from urllib.parse import parse_qsl, urlencode

import anywidget
import ipywidgets as w
from ipywidgets.widgets.widget_description import DescriptionStyle
from ipywidgets.widgets.widget_string import HTMLStyle, TextStyle
import numpy as np
import pandas as pd
import traitlets

from . import catalog, charts, prices, views
from .views import format_quantity
from .estimate import estimate
from .data import DataFileError
from .i18n import CHOICE_LABELS, choice_label, problem_zh, t
from .downloads import Downloads
from .livechart import LiveChart
from .presets import presets
from .scenario import Scenario, ScenarioError, check_field, excerpt, fields, query_fields
from .sensitivity import sensitivity
from .uncertainty import monte_carlo

log = logging.getLogger(__name__)

#: Controls shown first, in this order; every other field sits in the "Advanced" section by group.
MAIN_FIELDS = ("name", "params", "active_params", "tokens", "seq_len", "gpu", "mfu", "n_gpus", "target_days", "pricing",
               "price_per_gpu_hour", "sft_examples", "sft_usd_per_example", "preference_pairs",
               "preference_usd_per_pair", "redundancy_factor", "budget_usd")
#: Monte Carlo draws per recompute: enough for a stable P10-P90 band on screen, cheap enough (~8 ms).
APP_MONTE_CARLO_DRAWS = 1000
#: URL parameters that belong to the app, not to the scenario.
APP_PARAMS = ("lang", "currency")
#: the programme view's link keys (see :mod:`workbench.programme_presets`), left out of the scenario
PROGRAMME_KEYS = ("view", "programme", "horizon", "every", "cycles", "versions", "growth")
#: Largest scenario file *Load scenario* reads: a saved scenario is ~4 kB; anything far larger is not one.
MAX_UPLOAD_BYTES = 1_000_000
CURRENCIES = ("USD", "CNY")
GROUP_LABELS = {
    "model": ("Model", "模型"), "hardware": ("Hardware", "硬件"), "cost": ("Pricing", "计价"),
    "memory": ("Memory and parallelism", "显存与并行"), "sft": ("Supervised fine-tuning", "监督微调"),
    "preference": ("Preference tuning", "偏好对齐"), "evaluation": ("Evaluation", "评测"),
    "inference": ("Serving", "推理服务"), "storage": ("Storage", "存储"), "network": ("Network", "网络"),
    "annotation": ("Annotation", "标注"), "operations": ("Logging and staff", "日志与人员"),
    "failures": ("Failures and checkpoints", "故障与检查点"), "experiments": ("Experiments", "实验"),
    "budget": ("Budget and currency", "预算与货币"), "self_hosted": ("Self-hosted", "自建机房"),
}


def _safe(method):
    """Run a callback; show any error in the banner instead of letting it reach the page."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except ScenarioError as error:
            self._show_banner([error.message(self.lang)])
        except Exception:  # noqa: BLE001 - the page must never see a traceback
            log.exception("planner callback failed")
            self._show_banner([t("internal_error", self.lang)])
    return wrapper


def hub_links(environ=None) -> dict:
    """LinkBar settings for a kernel started by a JupyterHub single-user server, else none."""
    environ = os.environ if environ is None else environ
    prefix = environ.get("JUPYTERHUB_SERVICE_PREFIX", "")
    if not prefix.startswith("/") or not environ.get("JUPYTERHUB_USER"):
        return {}
    base = environ.get("JUPYTERHUB_BASE_URL", "/") or "/"
    return {"hub_service_prefix": prefix.rstrip("/") + "/", "hub_user_redirect": base.rstrip("/") + "/hub/user-redirect/"}


class LinkBar(anywidget.AnyWidget):
    """Keeps the address bar on the current scenario's URL and copies it on request (inline JS, offline)."""

    _esm = """
    // Voila shuts a closed page's kernel down with a POST that must carry the _xsrf cookie (tornado's
    // double-submit check). A page served by a standalone Voila never receives that cookie, so every
    // shutdown was refused (403) and kernels stayed alive until the culler. Any random token is valid in
    // a double-submit scheme: another site can neither read nor set this origin's cookies.
    // Under JupyterHub the server signs its own token and refuses any other: an invented cookie there made
    // every later page's API calls unauthenticated (403), so it is left to the hub.
    function ensureXsrfCookie() {
      if (model_hub || /\b_xsrf=/.test(document.cookie)) { return; }
      const bytes = new Uint8Array(16);
      crypto.getRandomValues(bytes);
      const token = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      let path = "/";
      try { path = JSON.parse(document.getElementById("jupyter-config-data").textContent).baseUrl || "/"; }
      catch (e) { /* not in Voila: the site root */ }
      document.cookie = "_xsrf=" + token + "; path=" + path + "; SameSite=Strict";
    }
    let model_hub = false;
    function render({ model, el }) {
      model_hub = Boolean(model.get("hub_service_prefix"));
      ensureXsrfCookie();
      const button = document.createElement("button");
      button.className = "jupyter-button wb-copy-link";
      const status = document.createElement("span");
      status.className = "wb-copy-status";
      const link = document.createElement("a");
      link.className = "wb-share-link";
      link.target = "_blank";
      function update() {
        const q = model.get("query");
        const url = location.origin + location.pathname + (q ? "?" + q : "");
        if (model.get("update_address_bar")) { history.replaceState(null, "", url); }
        // On a hub the page lives under /user/NAME/: a colleague opening that would be refused, so the link
        // shared goes through the hub's user-redirect, which opens the same path on the reader's own server.
        let shared = url;
        const prefix = model.get("hub_service_prefix");
        if (prefix && location.pathname.startsWith(prefix)) {
          shared = location.origin + model.get("hub_user_redirect") + location.pathname.slice(prefix.length)
                   + (q ? "?" + q : "");
        }
        link.href = shared;
        link.textContent = shared;
        button.textContent = model.get("button_text");
      }
      button.onclick = async () => {
        try { await navigator.clipboard.writeText(link.href); status.textContent = " " + model.get("copied_text"); }
        catch (e) { const r = document.createRange(); r.selectNodeContents(link);
                    const s = getSelection(); s.removeAllRanges(); s.addRange(r); status.textContent = ""; }
      };
      model.on("change:query", update);
      model.on("change:button_text", update);
      update();
      el.append(button, status, document.createElement("br"), link);
    }
    export default { render };
    """
    _css = """
    .wb-share-link { font-size: 11px; word-break: break-all; color: #555; }
    .wb-copy-status { color: #2a7d2a; font-size: 12px; }
    """
    query = traitlets.Unicode("").tag(sync=True)
    button_text = traitlets.Unicode("Copy link").tag(sync=True)
    copied_text = traitlets.Unicode("Link copied").tag(sync=True)
    update_address_bar = traitlets.Bool(False).tag(sync=True)
    # set when the kernel runs under JupyterHub (from its JUPYTERHUB_* environment): /user/NAME/, /hub/user-redirect/
    hub_service_prefix = traitlets.Unicode("").tag(sync=True)
    hub_user_redirect = traitlets.Unicode("").tag(sync=True)


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

    def __init__(self, field, value, on_change, lang="en", shared: SharedModels | None = None, on_reject=None):
        self.field, self.on_change, self.on_reject, self.lang = field, on_change, on_reject, lang
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
        if f.type in ("choice", "gpu", "provider"):
            options = {"gpu": catalog.gpu_ids, "provider": prices.providers}.get(f.type, lambda: list(f.choices))()
            self.menu = w.Dropdown(options=self._labelled(options, lang), value=value,
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
        self.label.value = f"<b>{html.escape(label)}</b>" + (f" <span class='wb-unit'>[{html.escape(unit)}]</span>" if unit else "")
        self.help.value = html.escape(f.help_zh if lang == "zh" else f.help)
        if self.rejected and self.error is not None:
            self.set_error(self.error.message(lang))
        if self.auto is not None:
            self.auto.description = t("auto", lang)
            self.auto.tooltip = t("auto_hint", lang)
        if self.menu is not None and f.name in CHOICE_LABELS:
            self._syncing = True
            try:
                value = self.menu.value
                self.menu.options = self._labelled([choice for _, choice in self.menu.options], lang)
                self.menu.value = value
            finally:
                self._syncing = False

    def _labelled(self, choices, lang):
        """(label, id) pairs where the field's choices have labels, else the ids as they are."""
        if self.field.name not in CHOICE_LABELS:
            return list(choices)
        return [(choice_label(self.field.name, choice, lang), choice) for choice in choices]

    def set_value(self, value):
        """Show ``value`` without calling back."""
        self._syncing = True
        try:
            if self.menu is not None:
                self.menu.value = value
            if self.text is not None:
                self.text.value = format_quantity(value)
            if self.slider is not None and value is not None:
                self._move_slider(value)
        finally:
            self._syncing = False

    def show_resolved(self, value):
        """For an empty (auto) field: the value the estimate used, as placeholder and slider position."""
        if self.text is None or not self.field.nullable:
            return
        known = value is not None and np.isfinite(value)
        shown = format_quantity(value, digits=3) if known else t("none_on_record", self.lang)
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

    # -- events ---------------------------------------------------------------------------------------
    def _emit(self, value):
        self.rejected, self.error = False, None
        self.set_error("")
        self.on_change(self.field.name, value)

    def _menu_changed(self, change):
        if not self._syncing:
            self._emit(change["new"])

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
            self.text.value = format_quantity(value)
        finally:
            self._syncing = False
        self._emit(value)

    def _text_changed(self, change):
        if self._syncing:
            return
        try:
            value = check_field(self.field.name, change["new"])
        except ScenarioError as error:
            self.rejected, self.error = True, error
            self.set_error(error.message(self.lang))
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

    def _auto_clicked(self, _button):
        self.set_value(None)
        self._emit(None)


def _data_link(payload: bytes, filename: str, mime: str, text: str) -> str:
    data = base64.b64encode(payload).decode("ascii")
    return (f"<a class='wb-download' download='{html.escape(filename)}' href='data:{mime};base64,{data}'>"
            f"{html.escape(text)}</a>")


def parse_app_query(query: str):
    """(scenario values that are valid on their own, app options, error messages) from a URL query.

    The same reading as :meth:`Scenario.from_query` (:func:`workbench.scenario.query_fields`: unknown keys,
    keys given twice and bad values are errors), except that an error does not discard the rest: it is
    reported, in the link's language, and its field left at its default, so a link with one typo still
    opens the rest of its scenario.
    """
    options, errors = {"lang": "en", "currency": "USD"}, []
    pairs = parse_qsl(str(query or "").lstrip("?"), keep_blank_values=True)
    given = {key: [value for k, value in pairs if k == key] for key in APP_PARAMS}
    if given["lang"]:  # the language first: every message below is in it, wherever `lang` stands
        options["lang"] = "zh" if given["lang"][0].strip().lower().startswith("zh") else "en"
    lang = options["lang"]
    for key in APP_PARAMS:
        if len(given[key]) > 1:  # as for scenario fields: say so rather than let one of them win unseen
            errors.append(ScenarioError(key, given[key][1], "is given twice in the URL", f"one value; the first "
                                        f"({excerpt(given[key][0])}) is used",
                                        f"只给一次；使用第一个值（{excerpt(given[key][0])}）").message(lang))
    if given["lang"] and not re.fullmatch(r"(en|zh)([-_].*)?", given["lang"][0].strip().lower()):
        errors.append(ScenarioError("lang", given["lang"][0], "is not a language of the app",
                                    "en or zh (English is used)", "en 或 zh（使用英文）").message(lang))
    if given["currency"]:
        value = given["currency"][0]
        if value.strip().upper() in CURRENCIES:
            options["currency"] = value.strip().upper()
        else:
            errors.append(ScenarioError("currency", value, "is not a currency of the app",
                                        f"{', '.join(CURRENCIES)} (USD is used)",
                                        f"{', '.join(CURRENCIES)}（使用 USD）").message(lang))
    if any(k in PROGRAMME_KEYS for k, _ in pairs):  # the programme view's own keys: read there, reported here
        errors += _programme_options(pairs, query, options, lang)
    values, problems = query_fields(query, ignore=APP_PARAMS + PROGRAMME_KEYS)
    errors += [problem.message(lang) for problem in problems]
    linked_precision, fallback_note = values.get("precision"), None
    while True:  # drop fields that break a rule involving several fields, one at a time
        try:
            Scenario(**values)
            break
        except ScenarioError as error:
            if error.field == "precision" and "gpu" in values and error.allowed and fallback_note is None:
                # the link names a GPU without the (default or given) precision: keep the GPU, at a precision it has
                values["precision"] = error.allowed.split(", ")[0]
                fallback_note = (f"{error.message(lang)}（{t('used_instead', lang)}：{values['precision']}）" if lang == "zh"
                                 else f"{error.message(lang)} ({t('used_instead', lang)}: {values['precision']})")
                errors.append(fallback_note)
                continue
            # a catalog gap (no price or TDP for the GPU) is reported under a field the link may not hold:
            # drop the link's own key that brought it in, and keep the rest of the scenario
            culprit = error.field if error.field in values else next(
                (k for k in ("gpu", "pricing", "provider", "precision") if k in values), None)
            if culprit == "gpu" and error.field != "gpu":
                # say it of the GPU the link named, and undo what was done only to fit that GPU
                errors.append(t("gpu_left_default", lang).format(
                    gpu=values["gpu"], reason=problem_zh(error.problem) if lang == "zh" else error.problem,
                    default=fields()["gpu"].default))
                if fallback_note is not None:
                    errors.remove(fallback_note)
                    values.pop("precision")
                    if linked_precision is not None:
                        values["precision"] = linked_precision
                    fallback_note = None
            else:
                errors.append(error.message(lang))
            if culprit is None:
                values = {}
                break
            values.pop(culprit)
    return values, options, errors


def _programme_options(pairs, query, options, lang) -> list[str]:
    """``view``, ``programme_preset`` and ``programme_knobs`` into ``options``; the messages of bad ones."""
    from . import programme_presets
    errors = []
    views = [value for key, value in pairs if key == "view"]
    if views and views[0] not in ("programme", "single"):
        errors.append(ScenarioError("view", views[0], "is not a view of the app",
                                    "single or programme (single is used)", "single 或 programme（使用 single）").message(lang))
    options["view"] = "programme" if views and views[0] == "programme" else "single"
    preset, knobs, problems = programme_presets.parse_query(query, lang)
    options["programme_preset"], options["programme_knobs"] = preset, knobs
    return errors + problems


def _request():
    """(scenario values, app options, notices, served by Voilà) from the current request's environment."""
    in_voila = os.environ.get("SERVER_SOFTWARE", "").startswith("voila") or "VOILA_PREHEAT" in os.environ
    values, options, errors = parse_app_query(os.environ.get("QUERY_STRING", ""))
    colon, separator = ("：", "；") if options["lang"] == "zh" else (": ", "; ")
    notices = [f"{t('url_error', options['lang'])}{colon}" + separator.join(errors)] if errors else []
    return values, options, notices, in_voila


class DataErrorPage:
    """What the app shows instead of the planner when a data table is bad: the file, row and column."""

    def __init__(self, error: Exception):
        log.error("data folder refused: %s", error)
        self.error = error
        self.widget = w.HTML(f"<div class='wb-error' style='font-size:14px'><b>{html.escape(t('data_error'))} / "
                             f"{html.escape(t('data_error', 'zh'))}</b><br>{html.escape(str(error))}</div>")
        self.widget.add_class("wb-data-error")


class Planner:
    """The planner app. ``Planner().widget`` is the whole page."""

    def __init__(self, values=None, lang="en", currency="USD", notices=(), in_voila=False, view="single",
                 programme_preset=None, programme_knobs=None):
        self.lang, self.currency = lang, currency
        self.programme_view = None  # built when first opened
        self._programme_request = (programme_preset, dict(programme_knobs or {}))
        self.values = Scenario(**(values or {})).to_dict()
        self.controls: dict[str, FieldControl] = {}
        self.scenario = self.est = self.sens = self.curve = self.mc = None
        self.banner_text = ""
        self.pinned = None
        self._relabelling = False
        self.last_recompute_ms = self.last_render_ms = float("nan")
        self.last_chart_rebuilt = False
        self.renders = 0
        self.shared = SharedModels()
        self._build(in_voila)
        self._notices = list(notices)
        self.recompute()
        if view == "programme":
            self.view_toggle.value = "programme"

    # -- construction ---------------------------------------------------------------------------------
    @classmethod
    def from_environment(cls) -> Planner:
        """A planner for the current request: the URL query restores a scenario, ``lang`` and ``currency``.

        A preheated Voilà kernel builds the widgets first, so that the slow part (imports, the offline chart
        bundle, the first estimate) is done before a user arrives; the query reaches it only with the request,
        and is applied then. Any other kernel reads the query at once and builds the page once.
        """
        from .tables import check_all
        try:
            check_all()
        except DataFileError as error:  # a page that says which file is bad, not a blank one
            return DataErrorPage(error)
        if os.environ.get("VOILA_PREHEAT") != "True":
            values, options, notices, in_voila = _request()
            return cls(values, options["lang"], options["currency"], notices, in_voila=in_voila,
                       view=options.get("view", "single"), programme_preset=options.get("programme_preset"),
                       programme_knobs=options.get("programme_knobs"))
        planner = cls()
        try:
            from voila.utils import wait_for_request
            wait_for_request()
        except Exception:  # noqa: BLE001 - an older Voilà: use the environment as it is
            pass
        values, options, notices, in_voila = _request()
        planner.apply_request(values, options, notices, in_voila)
        return planner

    def apply_request(self, values, options, notices=(), in_voila=False):
        """Show a scenario, language and currency that arrived with a URL, and report what was not applied."""
        self.link.update_address_bar = in_voila
        self._notices = list(notices)
        self.lang, self.currency = options["lang"], options["currency"]
        self._relabelling = True
        try:
            self.language.value, self.currency_toggle.value = self.lang, self.currency
        finally:
            self._relabelling = False
        self._relabel()
        self.set_scenario(Scenario(**values))
        self._programme_request = (options.get("programme_preset"), dict(options.get("programme_knobs") or {}))
        if options.get("view") == "programme":
            self.view_toggle.value = "programme"

    def _build(self, in_voila):
        spec = fields()
        sh = self.shared

        def html_widget(value=""):
            return w.HTML(value, layout=sh.layout(), style=sh.style(HTMLStyle))

        def box(cls, children=(), **layout):
            return cls(list(children), layout=sh.layout(**layout))

        self.title = html_widget()
        self.preset = w.Dropdown(layout=w.Layout(width="260px"))
        self.preset.observe(self._preset_changed, "value")
        self.language = w.ToggleButtons(options=[("English", "en"), ("简体中文", "zh")], value=self.lang)
        self.language.add_class("wb-language")
        self.language.observe(self._language_changed, "value")
        self.currency_toggle = w.ToggleButtons(options=list(CURRENCIES), value=self.currency)
        self.currency_toggle.add_class("wb-currency")
        self.currency_toggle.observe(self._currency_changed, "value")
        self.view_toggle = w.ToggleButtons(options=[("Single run", "single"), ("Programme", "programme")],
                                           value="single")
        self.view_toggle.add_class("wb-view")
        self.view_toggle.observe(self._view_changed, "value")
        self.link = LinkBar(update_address_bar=in_voila, **hub_links())
        self.banner = html_widget()
        self.banner.add_class("wb-banner")

        for name in MAIN_FIELDS:
            self._control(name)
        self.main_box = box(w.VBox, [self.controls[name].widget for name in MAIN_FIELDS])
        self.advanced_groups = [g for g in GROUP_LABELS if any(f.group == g and f.name not in MAIN_FIELDS
                                                               for f in spec.values())]
        self.advanced = w.Accordion(children=[box(w.VBox) for _ in self.advanced_groups], selected_index=None)
        self.advanced.observe(self._advanced_opened, "selected_index")
        self.advanced_title = html_widget()

        self.headline = html_widget()
        self.headline.add_class("wb-headline")
        self.notes = html_widget()
        self.stack = charts.ChartStack()
        self.chart = LiveChart()
        self.chart.add_class("wb-charts")
        self.timing = html_widget()
        self.timing.add_class("wb-timing")

        self.pin_button = w.Button(icon="thumb-tack")
        self.pin_button.on_click(self._pin)
        self.unpin_button = w.Button(disabled=True)
        self.unpin_button.on_click(self._unpin)
        self.compare_hint = html_widget()
        self.compare_table = html_widget()
        self.compare_box = box(w.VBox, [box(w.HBox, [self.pin_button, self.unpin_button]), self.compare_hint,
                                        self.compare_table])

        self.lines_title = html_widget()
        self.lines_table = w.HTML(layout=w.Layout(max_height="420px", overflow="auto"))
        self.downloads = Downloads(self._download)
        self.png_button = w.Button(layout=self.shared.layout(width="auto"))  # fits "导出图表" and "Export charts (PNG)"
        self.png_button.on_click(self._export_png)
        self.png_links = html_widget()
        self.upload = w.FileUpload(accept=".json,application/json", multiple=False,
                                   layout=self.shared.layout(width="auto"))
        self.upload.observe(self._upload_changed, "value")
        self.upload_message = html_widget()

        header = box(w.VBox, [self.title, box(w.HBox, [self.view_toggle, self.preset, self.language,
                                                       self.currency_toggle]), self.link, self.banner])
        left = box(w.VBox, [self.main_box, self.advanced_title, self.advanced], width="500px", min_width="500px")
        self.figures = right = box(w.VBox, [self.chart, self.timing, self.compare_box, self.lines_title, self.downloads,
                             box(w.HBox, [self.png_button, self.upload]), self.png_links, self.upload_message,
                             self.lines_table], flex="1 1 0", min_width="640px")
        style = html_widget("<style>" + _CSS + "</style>")
        self.single_view = box(w.VBox, [self.headline, self.notes,
                                        box(w.HBox, [left, right], flex_flow="row wrap", width="100%")])
        self.body = box(w.VBox, [self.single_view])
        self.widget = box(w.VBox, [style, header, self.body])
        self.widget.add_class("wb-planner")
        self._relabel()

    def _control(self, name) -> FieldControl:
        if name not in self.controls:
            self.controls[name] = FieldControl(fields()[name], self.values[name], self._field_changed, self.lang,
                                               self.shared, on_reject=self._field_rejected)
        return self.controls[name]

    @_safe
    def _advanced_opened(self, change):
        index = change["new"]
        if index is None:
            return
        group = self.advanced_groups[index]
        box = self.advanced.children[index]
        if not box.children:  # built on first opening: keeps the first page load light
            names = [f.name for f in fields().values() if f.group == group and f.name not in MAIN_FIELDS]
            box.children = [self._control(name).widget for name in names]
            self._show_resolved()

    # -- events ---------------------------------------------------------------------------------------
    @_safe
    def _field_rejected(self, name):
        """A typed value was refused: the figures still show the last valid inputs, and say so."""
        self._mark_stale(True)
        self._show_banner(self._stale_messages())

    def _stale_messages(self) -> list:
        """One line per field whose typed value is refused: the figures are of the last valid inputs."""
        return [t("stale", self.lang).format(field=control.field.label_zh if self.lang == "zh" else control.field.label)
                for control in self.controls.values() if control.rejected]

    def _mark_stale(self, stale: bool):
        # the box around the figures, not the chart itself: an anywidget's classes do not reach its DOM node
        for widget in (self.chart, self.figures, self.headline):
            (widget.add_class if stale else widget.remove_class)("wb-stale")

    def _field_changed(self, name, value):
        self.values[name] = value
        self.recompute(changed=name)

    @_safe
    def _preset_changed(self, change):
        if not change["new"] or self._relabelling:
            return
        scenario = Scenario.from_query(presets()[change["new"]]["query"])
        self.set_scenario(scenario)

    @_safe
    def _language_changed(self, change):
        if self._relabelling:
            return
        self.lang = change["new"]
        self._relabel()
        self._render()
        if self.programme_view is not None:
            self.programme_view.set_language(self.lang, self.currency)
        if any(control.rejected for control in self.controls.values()):
            self._show_banner(self._stale_messages())

    @_safe
    def _currency_changed(self, change):
        if self._relabelling:
            return
        self.currency = change["new"]
        self._render()
        if self.programme_view is not None:
            self.programme_view.set_language(self.lang, self.currency)

    @_safe
    def _view_changed(self, change):
        """The single-run planner or the programme view (built on first opening: the first page stays light)."""
        if self._relabelling:
            return
        programme = change["new"] == "programme"
        if programme and self.programme_view is None:
            from .programme_app import ProgrammeView
            preset, knobs = self._programme_request
            self.programme_view = ProgrammeView(preset, knobs, self.lang, self.currency, on_link=self._programme_link)
        self.body.children = [self.programme_view.widget if programme else self.single_view]
        self.preset.layout.display = "none" if programme else None
        if programme:
            self._programme_link(self.programme_view.link_query())
        else:
            self._render()

    def _programme_link(self, query):
        if self.view_toggle.value != "programme":
            return
        extra = {k: v for k, v in (("lang", self.lang), ("currency", self.currency)) if v not in ("en", "USD")}
        self.link.query = query + ("&" + urlencode(extra) if extra else "")

    @_safe
    def _pin(self, _button):
        self.pinned = (self.scenario, self.est)
        self.unpin_button.disabled = False
        self._render()

    @_safe
    def _unpin(self, _button):
        self.pinned = None
        self.unpin_button.disabled = True
        self._render()

    @_safe
    def _upload_changed(self, change):
        files = change["new"]
        if not files:
            return
        content = files[0]["content"] if isinstance(files, (list, tuple)) else next(iter(files.values()))["content"]
        content = bytes(content)
        try:
            if len(content) > MAX_UPLOAD_BYTES:
                raise ScenarioError("scenario", f"{len(content) / 1e6:,.1f} MB", "is too large for a scenario file",
                                    f"a JSON file of at most {MAX_UPLOAD_BYTES / 1e6:g} MB",
                                    f"不超过 {MAX_UPLOAD_BYTES / 1e6:g} MB 的 JSON 文件")
            scenario = Scenario.from_json(content, single=True)
        except ScenarioError as error:
            self._upload_failed(error.message(self.lang))
            return
        if self.set_scenario(scenario):
            self.upload_message.value = ""
        else:
            self._upload_failed(self.banner_text)

    def _upload_failed(self, message):
        self.upload_message.value = (f"<span class='wb-error'>{html.escape(t('load_error', self.lang))}: "
                                     f"{html.escape(message)}</span>")

    @_safe
    def _export_png(self, _button):
        import vl_convert as vlc
        links = []
        for key, chart in self._charts().items():
            png = vlc.vegalite_to_png(chart.to_json(), scale=2)
            links.append(_data_link(png, f"{key}.png", "image/png", f"{t('chart_' + key, self.lang)} (PNG)"))
        self.png_links.value = " · ".join(links)

    # -- state ----------------------------------------------------------------------------------------
    def set_scenario(self, scenario: Scenario) -> bool:
        """Show ``scenario`` in every control and recompute; all or nothing: a scenario that cannot be shown
        (a batch, or one that fails to compute) leaves the page on the last valid one, with a message."""
        started = time.perf_counter()
        if scenario.batch_size is not None:
            self._show_banner([ScenarioError("scenario", "batch", "a batch of scenarios cannot be shown",
                                             "a single scenario").message(self.lang)])
            return False
        results = self._evaluate(scenario)
        if results is None:
            return False
        self.values = scenario.to_dict()
        self._sync_controls()
        self._accept(scenario, results, started)
        return True

    def recompute(self, changed=None) -> bool:
        """Estimate the current values; on an invalid combination keep the last valid state."""
        started = time.perf_counter()
        try:
            scenario = Scenario(**self.values)
        except ScenarioError as error:
            control = self.controls.get(error.field.split("[")[0]) or self.controls.get(changed)
            if control is not None:
                control.set_error(error.message(self.lang))
            self._show_banner([f"{t('invalid', self.lang)}: {error.message(self.lang)}"])
            self._mark_stale(True)  # the figures are of the last valid scenario
            return False
        results = self._evaluate(scenario)
        if results is None:  # the page goes back to the last valid scenario: controls and figures agree
            if self.scenario is not None:
                self.values = self.scenario.to_dict()
                self._sync_controls()
            return False
        self._accept(scenario, results, started)
        return True

    def _evaluate(self, scenario: Scenario):
        """(estimate, sensitivity, size curve, Monte Carlo) of ``scenario``, or None with the reason in the banner."""
        try:
            est = estimate(scenario)
            return (est, sensitivity(scenario, base=est), views.size_curve(scenario),
                    monte_carlo(scenario, n=APP_MONTE_CARLO_DRAWS, seed=0, base=est))
        except ScenarioError as error:
            self._show_banner([f"{t('invalid', self.lang)}: {error.message(self.lang)}"])
        except Exception:  # noqa: BLE001 - a defect; the user keeps a consistent page and a plain message
            log.exception("estimating a scenario failed: %s", scenario.to_json())
            self._show_banner([t("internal_error", self.lang)])
        return None

    def _accept(self, scenario, results, started):
        self.last_recompute_ms = (time.perf_counter() - started) * 1000.0
        self.scenario = scenario
        self.est, self.sens, self.curve, self.mc = results
        for control in self.controls.values():
            if not control.rejected:  # a rejected typed value keeps its message until it is corrected
                control.set_error("")
        if not any(control.rejected for control in self.controls.values()):
            self._mark_stale(False)
        self._show_banner(self._notices + self._stale_messages())
        self._notices = []
        self._render()

    def _sync_controls(self):
        for name, control in self.controls.items():
            control.set_value(self.values[name])
            control.rejected, control.error = False, None
            control.set_error("")

    # -- rendering ------------------------------------------------------------------------------------
    def _show_banner(self, messages):
        self.banner_text = " ".join(messages)
        self.banner.value = "".join(f"<div class='wb-error'>{html.escape(m)}</div>" for m in messages)

    def _relabel(self):
        self._relabelling = True
        try:
            self._relabel_all()
        finally:
            self._relabelling = False

    def _relabel_all(self):
        lang = self.lang
        view = self.view_toggle.value  # new options reset the value: put it back (unobserved while relabelling)
        self.view_toggle.options = [(t("view_single", lang), "single"), (t("view_programme", lang), "programme")]
        self.view_toggle.value = view
        self.title.value = (f"<h2 class='wb-title'>{html.escape(t('title', lang))}</h2>"
                            f"<div class='wb-subtitle'>{html.escape(t('subtitle', lang))}</div>")
        options = [(p["label_zh"] if lang == "zh" else p["label"], key) for key, p in presets().items()]
        current = self.preset.value
        self.preset.options = [(t("preset", lang) + "…", ""), *options]
        self.preset.value = current if current in dict(options).values() else ""
        for control in self.controls.values():
            control.relabel(lang)
        for i, group in enumerate(self.advanced_groups):
            self.advanced.set_title(i, GROUP_LABELS[group][1 if lang == "zh" else 0])
        self.advanced_title.value = f"<h4>{html.escape(t('advanced', lang))}</h4>"
        self.link.button_text, self.link.copied_text = t("copy_link", lang), t("copied", lang)
        self.pin_button.description, self.unpin_button.description = t("pin", lang), t("unpin", lang)
        self.compare_hint.value = f"<i>{html.escape(t('compare_hint', lang))}</i>"
        self.lines_title.value = f"<h4>{html.escape(t('lines', lang))}</h4>"
        self.png_button.description = t("export_png", lang)
        self.downloads.files = [{"name": "cost_lines.csv", "mime": "text/csv", "label": t("download_csv", lang)},
                                {"name": "scenario.json", "mime": "application/json", "label": t("download_json", lang)}]
        self.upload.description = t("load_json", lang)

    def _show_resolved(self):
        d, est = self.est.details, self.est
        resolved = {"mfu": est.mfu, "n_gpus": est.n_gpus, "price_per_gpu_hour": d["price_per_gpu_hour"],
                    "active_params": d["active_params"], "d_model": d["d_model"], "n_layers": d["n_layers"],
                    "staff_months": d["staff_months"], "checkpoint_interval_hours": d["checkpoint_interval_hours"],
                    "reward_model_params": d["reward_model_params"], "gpu_purchase_usd": d["gpu_purchase_usd"],
                    "serving_tokens_per_second_per_gpu": d["serving_tokens_per_second_per_gpu"],
                    "budget_usd": est.total_cost_usd}
        for name, value in resolved.items():
            if name in self.controls and self.values[name] is None:
                self.controls[name].show_resolved(float(value) if value is not None else None)

    def _chart_parts(self, compare_table=None) -> dict:
        """{chart: (builder, {parameter: frame}, {keyword: value})}, in the order they are stacked
        (``compare_table``: :func:`views.compare` of the pinned scenario, if already made)."""
        est, lang, cur = self.est, self.lang, self.currency
        r = views.rate(est, cur)
        burn, alerts = self._burn
        curve = self.curve.assign(cost=self.curve["cost_usd"] * r)
        current = pd.DataFrame({"params": [self.scenario.params], "tokens": [self.scenario.tokens],
                                "cost": [est.total_cost_usd * r], "label": [t("this_plan", lang)]})
        common = dict(currency=cur, cost_title=t("cost", lang))
        bins, markers = views.cost_histogram(self.mc, est, cur)
        parts = {
            "stage": (charts.cost_by_stage, {"frame": views.stage_category(est, cur, lang)},
                      dict(title=t("chart_stage", lang), stage_title=t("stage", lang), category_title=t("category", lang),
                           **common)),
            "split": (charts.split, {"frame": views.split(est, cur, lang)},
                      dict(title=t("chart_split", lang), group_title=t("stage", lang), share_title=t("share", lang), **common)),
            "range": (charts.cost_range, {"bins": bins, "markers": markers},
                      dict(title=t("chart_range", lang), cost_title=t("total_cost", lang), share_title=t("share", lang),
                           currency=cur)),
            "tornado": (charts.tornado, {"frame": views.tornado(self.sens, est, cur, lang)},
                        dict(title=t("chart_tornado", lang), input_title=t("input", lang), change_title=t("change", lang),
                             value_title=t("value", lang), currency=cur)),
            "burn": (charts.burn_down, {"burn": burn, "alerts": alerts},
                     dict(title=t("chart_burn", lang), day_title=t("day", lang), spent_title=t("spent", lang), currency=cur)),
            "size": (charts.cost_vs_size, {"curve": curve, "current": current},
                     dict(title=t("chart_size", lang), params_title=t("model_size", lang), plan_title=t("this_plan", lang),
                          **common)),
        }
        if self.pinned is not None:
            table = compare_table if compare_table is not None else views.compare(self.pinned[1], est, cur, lang)
            parts["compare"] = (charts.compare, {"frame": views.compare_long(table, lang)},
                                dict(title=t("chart_compare", lang), category_title=t("category", lang),
                                     scenario_title=t("scenario", lang), **common))
        return parts

    def _charts(self) -> dict:
        """{chart: Altair chart}, each built on its own (PNG export, notebooks)."""
        return {name: builder(**frames, **kwargs) for name, (builder, frames, kwargs) in self._chart_parts().items()}

    def _render(self):
        if self.est is None:
            return
        started = time.perf_counter()
        # the link first: a page that shows the new charts already carries their link
        query = self.scenario.to_query()
        extra = {k: v for k, v in (("lang", self.lang), ("currency", self.currency)) if v not in ("en", "USD")}
        if self.view_toggle.value == "single":
            self.link.query = query + ("&" + urlencode(extra) if extra else "")
        self._burn = views.burn(self.est, self.currency, self.lang)  # shared by the chart and the headline
        # the specification only when the charts' shape changed; otherwise their data, swapped in place
        compared = views.compare(self.pinned[1], self.est, self.currency, self.lang) if self.pinned is not None else None
        spec, datasets = self.stack.update(self._chart_parts(compared))
        self.chart.show(spec, datasets)
        self.last_chart_rebuilt = spec is not None
        self.png_links.value = ""  # PNGs of the figures before this change would be of another plan
        self._render_headline()
        self._render_lines()
        self._render_compare(compared)
        self._show_resolved()
        self.last_render_ms = (time.perf_counter() - started) * 1000
        # the kernel's whole part of a change (the widget messages are sent as each value is set above)
        self.renders += 1
        self.timing.value = (f"<span class='wb-timing' data-renders='{self.renders}'>{html.escape(t('recompute_ms', self.lang))} "
                             f"<span class='wb-compute-ms'>{self.last_recompute_ms:.0f}</span> ms · "
                             f"{html.escape(t('redraw_ms', self.lang))} "
                             f"<span class='wb-render-ms'>{self.last_render_ms:.0f}</span> ms</span>")

    def _money(self, usd) -> str:
        return f"{usd * views.rate(self.est, self.currency):,.0f} {self.currency}"

    def _render_headline(self):
        est, d, lang, s = self.est, self.est.details, self.lang, self.scenario
        pretrain = est.totals("stage")["pretrain"]
        per_million = pretrain / (s.tokens / 1e6)
        mfu_note = f" ({t('mfu_prior', lang)})" if s.mfu is None else ""
        band = (f"{self._money(self.mc.percentile('total_cost_usd', 10))} – "
                f"{self._money(self.mc.percentile('total_cost_usd', 90))}")
        days = (f"{self.mc.percentile('duration_days', 10):,.1f} – "
                f"{self.mc.percentile('duration_days', 90):,.1f} {t('days', lang)}")
        cards = [
            (t("total_cost", lang), self._money(est.total_cost_usd), "wb-total"),
            (t("range", lang), f"{band} · {days}", "wb-range"),
            (t("gpu_hours", lang), f"{est.gpu_hours:,.0f} GPU-h · MFU {est.mfu:.3f}{mfu_note}", "wb-gpu-hours"),
            (t("wall_days", lang), f"{est.wall_days:,.1f} {t('days', lang)} · {d['training_days_total']:,.1f} "
                                   f"{t('days_total', lang)}", "wb-wall-days"),
            (t("n_gpus", lang), f"{est.n_gpus:,.0f} × {s.gpu}", "wb-n-gpus"),
            (t("per_million", lang), f"{per_million * views.rate(est, self.currency):,.4f} {self.currency}", "wb-per-million"),
        ]
        title = f"<div class='wb-name'>{html.escape(s.name)}</div>" if s.name else ""
        serving_text = self._serving_text()
        html_cards = "".join(f"<div class='wb-card {cls}'><div class='wb-card-label'>{html.escape(label)}</div>"
                             f"<div class='wb-card-value'>{html.escape(value)}</div></div>" for label, value, cls in cards)
        alerts = self._burn[1]
        basis = t("budget_basis_given" if s.budget_usd is not None else "budget_basis_plan", lang)
        alert_text = " · ".join(
            f"{html.escape(label)}: " + (f"{t('day', lang)} {day:,.1f}" if crossed else t("not_reached", lang))
            for label, day, crossed in zip(alerts["label"], alerts["day"], alerts["crossed"]))
        self.headline.value = (f"{title}<div class='wb-cards'>{html_cards}</div>"
                               f"<div class='wb-serving'><b>{html.escape(t('serving', lang))}</b>: "
                               f"{html.escape(serving_text)}</div>"
                               f"<div class='wb-alerts'><b>{html.escape(t('alerts', lang))}</b> ({html.escape(basis)}): "
                               f"{alert_text}</div>")
        notes = est.warnings
        self.notes.value = ("<div class='wb-notes'><b>" + html.escape(t("warnings", lang)) + ":</b> "
                            + " ".join(html.escape(n) for n in notes) + "</div>") if notes else ""

    def _serving_text(self) -> str:
        """USD (or CNY) per million input / output / blended tokens, GPUs, replica, batch and latency; a price with
        no tokens to divide by (no output tokens, say) is left out."""
        d, lang, r, cur = self.est.details, self.lang, views.rate(self.est, self.currency), self.currency
        s = self.est.scenario
        if not (np.isfinite(d["serving_gpus"]) and np.isfinite(d["serving_replica_gpus"])):
            return t("not_served", lang)
        prices = [(d["serving_cost_per_million_input_tokens_usd"], t("per_million_in", lang)),
                  (d["serving_cost_per_million_output_tokens_usd"], t("per_million_out", lang))]
        parts = [f"{usd * r:,.3f} {cur} {label}" for usd, label in prices if np.isfinite(usd)]
        if np.isfinite(d["serving_cost_per_million_tokens_usd"]):
            parts.append(f"{t('blended', lang)} {d['serving_cost_per_million_tokens_usd'] * r:,.3f}")
        tpot = (f", {d['serving_tpot_ms']:,.1f} {t('tpot', lang)}" if np.isfinite(d["serving_tpot_ms"])
                and s.output_tokens_per_request > 0 else "")
        parts.append(f"{d['serving_gpus']:,.1f} {t('serving_gpus', lang)} ({t('replica', lang)} "
                     f"{d['serving_replica_gpus']:,.0f}, {t('batch', lang)} {views.format_batch(d['serving_batch'])}{tpot})")
        parts.append(t("serving_traffic", lang).format(requests=s.requests_per_day, peak=s.peak_to_average,
                                                       utilisation=d["serving_utilisation"]))
        parts.append(t("serving_in_total", lang).format(months=s.serving_months) if s.serving_months > 0
                     else t("serving_not_in_total", lang))
        return " · ".join(parts)

    def _render_lines(self):
        table = views.lines_table(self.est, self.currency, self.lang)
        code = self.currency.lower()
        e = html.escape
        lang = self.lang
        head = [t("stage", lang), t("category", lang), t("item", lang), t("quantity", lang),
                f"{t('unit_cost', lang)} [{self.currency}]", f"{t('cost', lang)} [{self.currency}]", t("type", lang),
                t("formula_source", lang)]
        rows = []
        for r in table.to_dict("records"):
            rows.append(
                f"<tr><td class='wb-tag'>{e(r['stage'])}</td><td class='wb-tag'>{e(r['category'])}</td><td>{e(r['item'])}</td>"
                f"<td class='wb-num'>{r['quantity']:,.4g} {e(r['unit'])}</td>"
                f"<td class='wb-num'>{r[f'unit_cost_{code}']:,.4g}</td><td class='wb-num'><b>{r[f'cost_{code}']:,.0f}</b></td>"
                f"<td class='wb-tag'>{e(r['cost_type'])}</td><td class='wb-source'>{e(r['formula'])}<br>{e(r['source'])}</td></tr>")
        self.lines_table.value = ("<table class='wb-lines'><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head)
                                  + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")

    def _download(self, name: str) -> bytes:
        """A file of the plan as it is now, made when the user asks for it (:class:`Downloads`)."""
        if name == "cost_lines.csv":
            return views.lines_csv(self.est, self.currency, self.lang).encode("utf-8")
        return self.scenario.to_json(indent=2).encode("utf-8")

    def _render_compare(self, table):
        if table is None:
            self.compare_table.value = ""
            return
        shown = table.rename(columns={"category": t("category", self.lang), "difference": t("difference", self.lang)})
        difference = t("difference", self.lang)
        for column in ("A", "B"):
            shown[column] = shown[column].map(lambda c: f"{c:,.0f}")
        shown[difference] = shown[difference].map(lambda c: f"{c:+,.0f}")
        changed = views.scenario_differences(self.pinned[0], self.scenario, self.lang)
        e = html.escape
        what = (f"{e(t('compare_what', self.lang))} " + ("; ".join(f"{e(label)} {e(a)} → {e(b)}" for label, a, b in changed)
                                                         if changed else e(t("compare_same", self.lang))))
        self.compare_table.value = (f"<b>{e(t('chart_compare', self.lang))} [{self.currency}]</b>"
                                    f"<div class='wb-compare-what'>{what}</div>"
                                    + shown.to_html(index=False, escape=True, classes="wb-compare", border=0))


_CSS = """
.wb-planner { font-family: system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', sans-serif; }
.wb-title { margin: 4px 0 0 0; }
.wb-name { font-size: 18px; font-weight: 600; margin-top: 6px; }
.wb-subtitle { color: #555; margin-bottom: 6px; }
.wb-help { color: #777; margin: -6px 0 0 165px; }
.wb-help .widget-html-content { font-size: 11px; line-height: 1.25; }
.wb-control .widget-html-content { line-height: 1.3; }
.wb-message .widget-html-content { line-height: 1.3; }
.wb-unit { color: #777; font-weight: normal; }
.wb-error { color: #b00020; font-size: 12px; }
.wb-cards { display: flex; flex-wrap: wrap; gap: 8px; margin: 6px 0; }
.wb-card { border: 1px solid #ddd; border-radius: 6px; padding: 6px 10px; min-width: 150px; }
.wb-card-label { color: #666; font-size: 11px; }
.wb-card-value { font-size: 16px; font-weight: 600; }
.wb-total .wb-card-value { font-size: 22px; color: #1d4e89; }
.wb-alerts, .wb-notes, .wb-serving { font-size: 12px; margin: 4px 0; }
.wb-notes { color: #8a5a00; }
.wb-timing { color: #999; font-size: 11px; }
table.wb-lines, table.wb-compare { border-collapse: collapse; font-size: 11px; }
table.wb-lines td, table.wb-lines th, table.wb-compare td, table.wb-compare th { padding: 2px 6px; border-bottom: 1px solid #eee; text-align: left; }
.wb-download { margin-right: 8px; }
.wb-lines td.wb-num { text-align: right; white-space: nowrap; }
.wb-stale { opacity: 0.45; }  /* figures of the last valid inputs while a typed value is refused */
.wb-lines td.wb-tag, .wb-lines th { white-space: nowrap; }  /* short words: CJK text would otherwise break per character */
.wb-lines td.wb-source { color: #777; font-size: 10px; max-width: 360px; }
.wb-lines td, .wb-lines th { vertical-align: top; line-height: 1.25; }
"""
