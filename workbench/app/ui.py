"""The planner app (ipywidgets): controls made from the scenario field table, headline figures, charts,
cost lines, exports, links and an A/B comparison. ``notebooks/planner.ipynb`` only calls
:meth:`Planner.from_environment` and displays it.

Design rules: the planner keeps the last *valid* scenario and estimate; a bad typed value is shown next
to its control and changes nothing else; no callback lets an exception reach the page.
"""
from __future__ import annotations

from . import app_kernel  # noqa: F401 - first: this kernel loads pandas without pyarrow (see the module)

import base64
import functools
import html
import logging
import os
import time
from urllib.parse import urlencode

import ipywidgets as w
from ipywidgets.widgets.widget_string import HTMLStyle

from ..report import charts, views
from ..plan.estimate import estimate
from ..reference.data import DataFileError
from ..reference.i18n import choice_label, t
from .downloads import Downloads
from .levers_app import LeverPanel
from .livechart import LiveChart
from ..plan.presets import presets
from ..reference import prices
from ..reference.catalog import UnknownGpuError, resolve_gpu
from ..reference.region_prices import provider_regions
from ..plan.scenario import Scenario, ScenarioError, fields
from ..plan.sensitivity import sensitivity
from ..plan.uncertainty import monte_carlo
from .app_controls import GROUP_LABELS, FieldControl, SharedModels  # noqa: F401 (re-exported)
from .app_links import (APP_PARAMS, CURRENCIES, PROGRAMME_KEYS, LinkBar, _request, hub_links, parse_app_query)  # noqa: F401
from .app_style import CSS
from .planner_render import PlannerRendering
from ..report.views import format_quantity  # noqa: F401 (re-exported)

log = logging.getLogger(__name__)

#: Controls shown first, in this order; every other field sits in the "Advanced" section by group.
MAIN_FIELDS = ("name", "plan_kind", "params", "active_params", "tokens", "seq_len", "gpu", "mfu", "n_gpus", "target_days", "pricing",
               "provider", "region",
               "price_per_gpu_hour", "sft_examples", "sft_usd_per_example", "preference_pairs",
               "preference_usd_per_pair", "redundancy_factor", "budget_usd")
#: Monte Carlo draws per recompute: enough for a stable P10-P90 band on screen, cheap enough (~8 ms).
APP_MONTE_CARLO_DRAWS = 1000
#: Largest scenario file *Load scenario* reads: a saved scenario is ~4 kB; anything far larger is not one.
MAX_UPLOAD_BYTES = 1_000_000


def _safe(method):
    """Run a callback; show any error in the banner instead of letting it reach the page."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except ScenarioError as error:
            self._show_banner([error.message(self.lang, reader=True)])
        except Exception:  # noqa: BLE001 - the page must never see a traceback
            log.exception("planner callback failed")
            self._show_banner([t("internal_error", self.lang)])
    return wrapper


def _data_link(payload: bytes, filename: str, mime: str, text: str) -> str:
    data = base64.b64encode(payload).decode("ascii")
    return (f"<a class='wb-download' download='{html.escape(filename)}' href='data:{mime};base64,{data}'>"
            f"{html.escape(text)}</a>")


class DataErrorPage:
    """What the app shows instead of the planner when a data table is bad: the file, row and column."""

    def __init__(self, error: Exception):
        log.error("data folder refused: %s", error)
        self.error = error
        self.widget = w.HTML(f"<div class='wb-error' style='font-size:14px'><b>{html.escape(t('data_error'))} / "
                             f"{html.escape(t('data_error', 'zh'))}</b><br>{html.escape(str(error))}</div>")
        self.widget.add_class("wb-data-error")


class Planner(PlannerRendering):
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
        self._infos: list[str] = []  # what the page changed for the reader (a provider's only way of renting)
        self._auto_pricing = None  # (the mode the page chose for a provider, the reader's before it), until the reader picks
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
        self.lever_panel = LeverPanel(self._apply_lever, self.lang, self.currency)

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
        self.figures = right = box(w.VBox, [self.chart, self.timing, self.compare_box, self.lever_panel.widget,
                                            self.lines_title, self.downloads,
                             box(w.HBox, [self.png_button, self.upload]), self.png_links, self.upload_message,
                             self.lines_table], flex="1 1 0", min_width="640px")
        style = html_widget("<style>" + CSS + "</style>")
        self.single_view = box(w.VBox, [self.headline, self.notes,
                                        box(w.HBox, [left, right], flex_flow="row wrap", width="100%")])
        self.body = box(w.VBox, [self.single_view])
        self.widget = box(w.VBox, [style, header, self.body])
        self.widget.add_class("wb-planner")
        self._relabel()

    def _rate_for_typing(self) -> float:
        """The rate an amount typed in renminbi is converted at: the plan's, or the field's default."""
        rate = self.values.get("cny_per_usd")
        return float(rate) if isinstance(rate, (int, float)) and rate > 0 else float(fields()["cny_per_usd"].default)

    def _control(self, name) -> FieldControl:
        if name not in self.controls:
            self.controls[name] = FieldControl(fields()[name], self.values[name], self._field_changed, self.lang,
                                               self.shared, on_reject=self._field_rejected,
                                               cny_per_usd=lambda: self._rate_for_typing(),
                                               currency=lambda: self.currency)
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
            self._show_boundaries()

    # -- events ---------------------------------------------------------------------------------------
    @_safe
    def _field_rejected(self, name):
        """A typed value was refused: the figures still show the last valid inputs, and say so (the words first: the
        page greys the figures once they are there)."""
        self._show_banner(self._stale_messages())
        self._mark_stale(True)

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
        if name == "provider":  # another provider's regions are not this one's: back to none chosen
            for other in ("region", "data_region"):
                if self.values.get(other) is not None and self.values[other] not in provider_regions(value):
                    self.values[other] = None
                    if other in self.controls:
                        self.controls[other].set_value(None)
        if name == "pricing":
            self._auto_pricing = None  # the reader's own choice
        if name in ("provider", "gpu"):
            self._follow_provider_modes()
        if name == "cny_per_usd" and self.currency == "CNY":  # amounts shown in yuan follow the new rate
            for control in self.controls.values():
                if control.money:
                    control.refresh_currency()
        self.recompute(changed=name)

    def _follow_provider_modes(self):
        """A provider that rents the GPU only another way (a Chinese reseller renting by the month) takes the plan
        there: the pricing mode becomes the provider's first, rather than a refusal of the default on demand; and
        back to the default when another provider or GPU no longer needs it (the page chose it, not the reader)."""
        spec = fields()
        provider = self.values.get("provider") or spec["provider"].default
        shown = self.values.get("pricing") or spec["pricing"].default
        # the way of buying the reader chose: the one before the page's own switch, if it made one
        wanted = self._auto_pricing[1] if self._auto_pricing and self._auto_pricing[0] == shown else shown
        self._auto_pricing = None
        if self.values.get("price_per_gpu_hour") is not None:
            wanted = shown  # a typed price stands for every way of buying: nothing to follow
        try:
            gpu = resolve_gpu(str(self.values.get("gpu") or spec["gpu"].default))
        except UnknownGpuError:
            return
        usual = prices.usual_mode(gpu, provider, wanted) if self.values.get("price_per_gpu_hour") is None else wanted
        if usual != wanted:
            self._auto_pricing = (usual, wanted)
            self._infos.append(t("pricing_followed", self.lang).format(
                mode=choice_label("pricing", usual, self.lang), provider=choice_label("provider", provider, self.lang),
                gpu=gpu))
        if usual != shown:
            self.values["pricing"] = usual
            if "pricing" in self.controls:
                self.controls["pricing"].set_value(usual)

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
        for control in self.controls.values():  # money fields show and read amounts in the display currency
            control.refresh_currency()
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
            self._upload_failed(error.message(self.lang, reader=True))
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
                                             "a single scenario").message(self.lang, reader=True)])
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
                control.set_error(error.message(self.lang, reader=True))
            self._show_banner([f"{t('invalid', self.lang)}: {error.message(self.lang, reader=True)}"])
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
            self._show_banner([f"{t('invalid', self.lang)}: {error.message(self.lang, reader=True)}"])
        except Exception:  # noqa: BLE001 - a defect; the user keeps a consistent page and a plain message
            log.exception("estimating a scenario failed: %s", scenario.to_json())
            self._show_banner([t("internal_error", self.lang)])
        return None

    def _apply_lever(self, scenario):
        self.set_scenario(scenario)

    def _accept(self, scenario, results, started):
        self.last_recompute_ms = (time.perf_counter() - started) * 1000.0
        self.scenario = scenario
        self.est, self.sens, self.curve, self.mc = results
        for control in self.controls.values():
            if not control.rejected:  # a rejected typed value keeps its message until it is corrected
                control.set_error("")
        if not any(control.rejected for control in self.controls.values()):
            self._mark_stale(False)
        self._show_banner(self._notices + self._stale_messages(), self._infos)
        self._notices, self._infos = [], []
        self._render()

    def _sync_controls(self):
        for name, control in self.controls.items():
            control.set_value(self.values[name])
            control.rejected, control.error = False, None
            control.set_error("")

    # -- rendering ------------------------------------------------------------------------------------
    def _show_banner(self, messages, infos=()):
        """Refusals and notices (red), then what the page did on the reader's behalf (blue)."""
        self.banner_text = " ".join([*messages, *infos])
        self.banner.value = "".join([*(f"<div class='wb-error'>{html.escape(m)}</div>" for m in messages),
                                     *(f"<div class='wb-info'>{html.escape(m)}</div>" for m in infos)])
