"""The planner's drawing: labels in the chosen language, headline cards, serving figures, charts (their
specification rebuilt only when their shape changes), cost lines, the A/B comparison and downloads. A mixin
of :class:`workbench.app.ui.Planner`, which holds the widgets and the state.
"""

import html
import time
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from ..plan import boundaries
from ..reference import catalog
from ..reference.region_prices import provider_regions
from ..report import charts, views
from ..formulas import mfu
from ..plan.scenario import fields
from ..reference.i18n import choice_label, t, with_glossary
from ..reference.numbers import money, plain
from .app_controls import GROUP_LABELS
from .app_style import label_upload
from ..report.charts import currency_label
from .downloads import XLSX_MIME
from ..plan.presets import presets



class PlannerRendering:
    """The drawing half of :class:`~workbench.app.ui.Planner`."""

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
            control.refresh_value()
        for i, group in enumerate(self.advanced_groups):
            self.advanced.set_title(i, GROUP_LABELS[group][1 if lang == "zh" else 0])
        self.advanced_title.value = f"<h4>{html.escape(t('advanced', lang))}</h4>"
        self.link.button_text, self.link.copied_text = t("copy_link", lang), t("copied", lang)
        self.pin_button.description, self.unpin_button.description = t("pin", lang), t("unpin", lang)
        self.compare_hint.value = f"<i>{html.escape(t('compare_hint', lang))}</i>"
        self.lines_title.value = f"<h4>{html.escape(t('lines', lang))}</h4>"
        self.png_button.description = t("export_png", lang)
        self.downloads.files = [{"name": "cost_lines.csv", "mime": "text/csv", "label": t("download_csv", lang)},
                                {"name": "scenario.json", "mime": "application/json", "label": t("download_json", lang)},
                                {"name": "plan.xlsx", "mime": XLSX_MIME, "label": t("download_xlsx", lang)}]
        label_upload(self.upload, t("load_json", lang))

    def _show_resolved(self):
        d, est = self.est.details, self.est
        resolved = {"mfu": est.mfu, "n_gpus": est.n_gpus, "price_per_gpu_hour": d["price_per_gpu_hour"],
                    "active_params": d["active_params"], "d_model": d["d_model"], "n_layers": d["n_layers"],
                    "staff_months": d["staff_months"], "checkpoint_interval_hours": d["checkpoint_interval_hours"],
                    "reward_model_params": d["reward_model_params"], "gpu_purchase_usd": d["gpu_purchase_usd"],
                    "serving_tokens_per_second_per_gpu": d["serving_tokens_per_second_per_gpu"],
                    "budget_usd": est.total_cost_usd, "tensor_parallel": d["tensor_parallel_used"],
                    "pipeline_parallel": d["pipeline_parallel_used"], "zero_stage": d["zero_stage_used"],
                    "micro_batch_size": d["micro_batch_size_used"], "global_batch_tokens": d["global_batch_tokens"],
                    "target_days": d["target_days_used"],
                    "network_gbps_per_node": float(catalog.spec(self.scenario.gpu, "network_gbps_per_node"))}
        for name, value in resolved.items():
            if name in self.controls and self.values[name] is None:
                self.controls[name].show_resolved(float(value) if value is not None else None)
        for name in ("region", "data_region"):  # the regions of the plan's provider (none for the typical price)
            if name in self.controls:
                self.controls[name].set_choices(["", *provider_regions(self.scenario.provider)])

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
                           lang=lang, **common)),
            "split": (charts.split, {"frame": views.split(est, cur, lang)},
                      dict(title=t("chart_split", lang), group_title=t("stage", lang), share_title=t("share", lang), **common)),
            "range": (charts.cost_range, {"bins": bins, "markers": markers},
                      dict(title=t("chart_range", lang), cost_title=t("total_cost", lang), share_title=t("share", lang),
                           currency=cur, lang=lang)),
            "tornado": (charts.tornado, {"frame": views.tornado(self.sens, est, cur, lang)},
                        dict(title=t("chart_tornado", lang), input_title=t("input", lang), change_title=t("change", lang),
                             value_title=t("value", lang), currency=cur, lang=lang)),
            "burn": (charts.burn_down, {"burn": burn, "alerts": alerts},
                     dict(title=t("chart_burn", lang), day_title=t("day", lang), spent_title=t("spent", lang), currency=cur,
                          lang=lang)),
            "size": (charts.cost_vs_size, {"curve": curve, "current": current},
                     dict(title=t("chart_size", lang), params_title=t("model_size", lang), plan_title=t("this_plan", lang),
                          lang=lang, **common)),
        }
        if self.pinned is not None:
            table = compare_table if compare_table is not None else views.compare(self.pinned[1], est, cur, lang)
            parts["compare"] = (charts.compare, {"frame": views.compare_long(table, lang)},
                                dict(title=t("chart_compare", lang), category_title=t("category", lang),
                                     scenario_title=t("scenario", lang), lang=lang, **common))
        return parts

    def _charts(self) -> dict:
        """{chart: Altair chart}, each built on its own (PNG export, notebooks)."""
        return {name: builder(**frames, **kwargs) for name, (builder, frames, kwargs) in self._chart_parts().items()}

    def _render(self):
        if self.est is None:
            return
        started = time.perf_counter()
        self.lever_panel.set_scenario(self.scenario)  # a new scenario clears the lever table: it was another's
        self.lever_panel.set_language(self.lang, self.currency, views.rate(self.est, self.currency))
        # the link first: a page that shows the new charts already carries their link
        query = self.scenario.to_query()
        extra = {k: v for k, v in (("lang", self.lang), ("currency", self.currency)) if v not in ("en", "USD")}
        if self.view_toggle.value == "single":
            self.link.query = query + ("&" + urlencode(extra) if extra else "")
        self._burn = views.burn(self.est, self.currency, self.lang)  # shared by the chart and the headline
        # what only a pre-training run (or any training) uses is not shown for a plan that has none
        kind = self.scenario.plan_kind
        for name in ("tokens", "target_days", "mfu", "n_gpus", "sft_examples", "sft_usd_per_example",
                     "preference_pairs", "preference_usd_per_pair"):
            if name in self.controls:
                hidden = kind == "serve_only" or (kind == "open_weights" and name in ("tokens", "target_days"))
                widget = self.controls[name].widget  # its layout is shared: hidden by a class of its own
                (widget.add_class if hidden else widget.remove_class)("wb-hidden")
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
        ms = html.escape(t("ms", self.lang))
        self.timing.value = (f"<span class='wb-timing' data-renders='{self.renders}'>{html.escape(t('recompute_ms', self.lang))} "
                             f"<span class='wb-compute-ms'>{self.last_recompute_ms:.0f}</span> {ms} · "
                             f"{html.escape(t('redraw_ms', self.lang))} "
                             f"<span class='wb-render-ms'>{self.last_render_ms:.0f}</span> {ms}</span>")

    def _money(self, usd) -> str:
        return money(usd * views.rate(self.est, self.currency), self.currency, self.lang)

    def _render_headline(self):
        est, d, lang, s = self.est, self.est.details, self.lang, self.scenario
        pretrain = est.totals("stage")["pretrain"]
        per_million = pretrain / (s.tokens / 1e6)
        zh = lang == "zh"
        colon = "：" if zh else ": "
        mfu_note = (f"（{t('mfu_prior', lang)}）" if zh else f" ({t('mfu_prior', lang)})") if s.mfu is None else ""
        band = (f"{self._money(self.mc.percentile('total_cost_usd', 10))} – "
                f"{self._money(self.mc.percentile('total_cost_usd', 90))}")
        days = (f"{self.mc.percentile('duration_days', 10):,.1f} – "
                f"{self.mc.percentile('duration_days', 90):,.1f} {t('days', lang)}")
        kind = s.plan_kind
        cards = [
            (t("total_cost", lang), self._money(est.total_cost_usd), "wb-total"),
            (t("range", lang), band, "wb-range"),  # money only: the days' range is the wall-clock card's
        ]
        if kind != "serve_only":  # a plan that fine-tunes: its training figures; pre-training's only when it pre-trains
            cards += [
                (t("gpu_hours" if kind == "pretrain" else "finetune_gpu_hours", lang),
                 f"{est.gpu_hours:,.0f} {'GPU 小时' if zh else 'GPU-h'} · MFU {est.mfu:.3f}{mfu_note}", "wb-gpu-hours"),
                (t("wall_days", lang), f"{est.wall_days:,.1f} {t('days', lang)} · {d['training_days_total']:,.1f} "
                                       f"{t('days_total', lang)} · P10–P90 {days}", "wb-wall-days"),
                (t("n_gpus", lang), f"{est.n_gpus:,.0f} × {s.gpu}", "wb-n-gpus")]
        if kind == "pretrain":
            per_million_shown = per_million * views.rate(est, self.currency)
            cards.append((t("per_million", lang), money(per_million_shown, self.currency, lang) if lang == "zh"
                          else f"{per_million_shown:,.4f} {self.currency}", "wb-per-million"))
        title = f"<div class='wb-name'>{html.escape(s.name)}</div>" if s.name else ""
        serving_text = self._serving_text()
        g = lambda text: with_glossary(html.escape(text), lang)  # noqa: E731 - jargon explained on hover
        html_cards = "".join(f"<div class='wb-card {cls}'><div class='wb-card-label'>{g(label)}</div>"
                             f"<div class='wb-card-value'>{g(value)}</div></div>" for label, value, cls in cards)
        alerts = self._burn[1]
        basis = t("budget_basis_given" if s.budget_usd is not None else "budget_basis_plan", lang)
        alert_text = " · ".join(f"{html.escape(label)}: {html.escape(when)}"
                                for label, when in zip(alerts["label"], alerts["when"]))
        unfit = not bool(d["layout_fits"]) and kind != "serve_only"  # nothing is trained on a plan that only serves
        commitment = views.commitment_line(est, self.currency, lang)  # a rented term, as its bill reads
        self.headline.value = (f"{title}{self._unfit_message() if unfit else ''}"
                               f"<div class='wb-cards{' wb-unfit' if unfit else ''}'>{html_cards}</div>"
                               f"<div class='wb-main-costs'><b>{html.escape(t('main_costs', lang))}</b>{colon}"
                               f"{html.escape(self._main_costs())}</div>"
                               f"<div class='wb-price'><b>{html.escape(t('gpu_price', lang))}</b>{colon}"
                               f"{self._price_html()}{self._offers_html()}</div>"
                               + (f"<div class='wb-commitment'>{html.escape(commitment)}</div>" if commitment else "")
                               + (f"<div class='wb-memory'><b>{html.escape(t('memory_per_gpu', lang))}</b>{colon}"
                                  f"{g(self._memory_text())}</div>" if kind != "serve_only" else "") +
                               f"<div class='wb-serving'><b>{html.escape(t('serving', lang))}</b>{colon}"
                               f"{html.escape(serving_text)}</div>"
                               f"<div class='wb-alerts'><b>{html.escape(t('alerts', lang))}</b>"
                               + (f"（{html.escape(basis)}）：" if zh else f" ({html.escape(basis)}): ") +
                               f"{alert_text}{self._budget_verdict()}</div>")
        notes = est.warnings
        self._show_boundaries()
        self.notes.value = ("<div class='wb-notes'><b>" + html.escape(t("warnings", lang)) + ("：</b>" if zh else ":</b> ")
                            + "<br>".join(html.escape(views.warning_text(n, lang, self.currency, views.rate(est, self.currency)))
                                          for n in notes) + "</div>") if notes else ""  # one warning a line

    def _price_html(self) -> str:
        """The price line, its full source on hover."""
        text, source = views.price_line(self.est, self.currency, self.lang)
        return (f"{html.escape(text)} <span class='wb-source' title=\"{html.escape(source, quote=True)}\">ⓘ "
                f"{html.escape(t('source_col', self.lang))}</span>")

    def _offers_html(self) -> str:
        """Where the plan's GPU can be had, cheapest first, folded under the price line."""
        s, lang, e = self.scenario, self.lang, html.escape
        table = views.gpu_offers(self.est, self.currency, lang)
        if table.empty:
            return ""
        mode = choice_label("pricing", s.pricing if s.pricing != "self_hosted" else "on_demand", lang)
        head = "".join(f"<th>{e(c)}</th>" for c in table.columns)
        def cell(value, last):  # a source is long: its start, the whole on hover
            text = str(value)
            if last and len(text) > 60:
                return f"<td title=\"{e(text, quote=True)}\">{e(text[:57])}…</td>"
            return f"<td>{e(text)}</td>"
        body = "".join("<tr>" + "".join(cell(v, k == len(row) - 1) for k, v in enumerate(row)) + "</tr>"
                       for row in table.itertuples(index=False))
        return (f"<details class='wb-offers'><summary>{e(t('offers_title', lang).format(gpu=s.gpu, mode=mode))}"
                f"</summary><table class='wb-lines'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
                "</details>")

    def _main_costs(self) -> str:
        """The three largest categories with their share of the total: what a finance reader asks first."""
        by = self.est.totals("category").sort_values(ascending=False)
        total = float(by.sum())
        opening, closing = ("（", "）") if self.lang == "zh" else (" (", ")")
        return ("、" if self.lang == "zh" else " · ").join(
            f"{t(c, self.lang)} {self._money(v)}{opening}{v / total:.0%}{closing}"
            for c, v in by.head(3).items() if v > 0 and total > 0)

    def _budget_verdict(self) -> str:
        """Within the budget or over it, and by how much, with the likely range's top against it."""
        s, est, lang = self.scenario, self.est, self.lang
        if s.budget_usd is None:
            return ""
        left = s.budget_usd - est.total_cost_usd
        high = self.mc.percentile("total_cost_usd", 90) if self.mc is not None else est.total_cost_usd
        key = "budget_over" if left < 0 else "budget_within_high" if high <= s.budget_usd else "budget_within"
        text = t(key, lang).format(amount=self._money(abs(left)), high=self._money(high))
        return f" · <b class='wb-budget-verdict'>{html.escape(text)}</b>"

    def _memory_text(self) -> str:
        """Memory per GPU against the usable capacity, the layout, and where the MFU comes from."""
        d, lang, s = self.est.details, self.lang, self.scenario
        capacity = d["gpu_memory_bytes"] / 2**30
        parts = [t("memory_of_usable", lang).format(used=f"{d['memory_bytes_per_gpu'] / 2**30:,.1f}",
                                                    usable=f"{capacity * s.usable_memory_fraction:,.1f}",
                                                    capacity=f"{capacity:,.0f}", share=f"{s.usable_memory_fraction:g}"),
                 t("layout_line", lang).format(tp=f"{d['tensor_parallel_used']:.0f}", pp=f"{d['pipeline_parallel_used']:.0f}",
                                               dp=f"{d['data_parallel']:,.0f}", zero=f"{d['zero_stage_used']:.0f}",
                                               mb=f"{d['micro_batch_size_used']:.0f}")]
        if s.mfu is None:
            kernel, basis = mfu.kernel_for(s.gpu, mfu.parameters())
            known = mfu.extrapolation(s.gpu)
            text = (t("basis_fitted", lang) if basis == "fitted" else t("basis_all", lang) if known is None
                    else t("basis_extrapolated", lang).format(ref=known["reference_gpu"], benchmark=known["benchmark"],
                                                             speedup=f"{known['speedup_per_gpu']:.2f}"))
            scale = float(mfu.engineering_scale(self.est.training_flops))
            parts.append(t("mfu_parts", lang).format(mfu=f"{self.est.mfu:.3f}", kernel=f"{kernel * scale:.3f}",
                                                     generation=catalog.spec(s.gpu, "generation"), basis=text,
                                                     layout=f"{self.est.mfu / (kernel * scale):.3f}"))
        return " · ".join(parts)

    def _unfit_message(self) -> str:
        """The plan does not fit in memory: what it needs, the field to change, and that the totals assume it fits."""
        d, lang, s = self.est.details, self.lang, self.scenario
        spec = fields()
        label = (lambda name: spec[name].label_zh if lang == "zh" else spec[name].label)
        usable = d["gpu_memory_bytes"] / 2**30 * s.usable_memory_fraction
        parts = [t("unfit_need", lang).format(used=f"{d['memory_bytes_per_gpu'] / 2**30:,.1f}", usable=f"{usable:,.1f}")]
        if np.isfinite(d["fit_tensor_parallel"]):
            parts.append(t("unfit_layout", lang).format(
                tp_label=label("tensor_parallel"), tp=f"{d['fit_tensor_parallel']:.0f}",
                pp_label=label("pipeline_parallel"), pp=f"{d['fit_pipeline_parallel']:.0f}",
                zero_label=label("zero_stage"), zero=f"{d['fit_zero_stage']:.0f}",
                mb_label=label("micro_batch_size"), mb=f"{d['fit_micro_batch_size']:.0f}", n=f"{self.est.n_gpus:,.0f}"))
        if np.isfinite(d["fit_min_gpus"]) and d["fit_min_gpus"] > self.est.n_gpus:
            key = "unfit_gpus" if len(parts) > 1 else "unfit_gpus_only"
            parts.append(t(key, lang).format(n_label=label("n_gpus"), n=f"{d['fit_min_gpus']:,.0f}"))
        if len(parts) == 1:
            parts.append(t("unfit_none", lang))
        parts.append(t("unfit_totals", lang))
        return (f"<div class='wb-unfit-message'>{html.escape(t('unfit_title', lang))}: "
                + " ".join(html.escape(p) for p in parts) + "</div>")

    def _show_boundaries(self):
        """A boundary the scenario crosses is said beside its control too (controls built so far)."""
        for note in self.est.warnings if self.est is not None else ():
            control = self.controls.get(boundaries.field_of(note) or "")
            if control is not None:
                control.set_note(views.warning_text(note, self.lang, self.currency, views.rate(self.est, self.currency)))

    def _serving_text(self) -> str:
        """USD (or CNY) per million input / output / blended tokens, GPUs, replica, batch and latency; a price with
        no tokens to divide by (no output tokens, say) is left out."""
        d, lang, r, cur = self.est.details, self.lang, views.rate(self.est, self.currency), self.currency
        s = self.est.scenario
        if not (np.isfinite(d["serving_gpus"]) and np.isfinite(d["serving_replica_gpus"])):
            return t("not_served", lang)
        prices = [(d["serving_cost_per_million_input_tokens_usd"], t("per_million_in", lang)),
                  (d["serving_cost_per_million_output_tokens_usd"], t("per_million_out", lang))]
        price = (lambda usd: money(usd * r, cur, lang)) if lang == "zh" else (lambda usd: f"{usd * r:,.3f} {cur}")  # noqa: E731
        parts = [f"{price(usd)} {label}" for usd, label in prices if np.isfinite(usd)]
        if np.isfinite(d["serving_cost_per_million_tokens_usd"]):
            parts.append(f"{price(d['serving_cost_per_million_tokens_usd'])} {t('per_million_blended', lang)}")
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
                f"{t('unit_cost', lang)} [{currency_label(self.currency, lang)}]",
                f"{t('cost', lang)} [{currency_label(self.currency, lang)}]", t("type", lang),
                t("formula_source", lang)]
        rows = []
        for r in table.to_dict("records"):
            # the formula and its source on hover (and in the CSV and workbook): they name the model's inputs
            how = e(f"{r['formula']}\n{r['source']}", quote=True)
            rows.append(
                f"<tr><td class='wb-tag'>{e(r['stage'])}</td><td class='wb-tag'>{e(r['category'])}</td><td>{e(r['item'])}</td>"
                f"<td class='wb-num'>{e(plain(r['quantity'], lang))} {e(r['unit'])}</td>"
                f"<td class='wb-num'>{e(plain(r[f'unit_cost_{code}'], lang))}</td>"
                f"<td class='wb-num'><b>{r[f'cost_{code}']:,.0f}</b></td>"
                f"<td class='wb-tag'>{e(r['cost_type'])}</td><td class='wb-source' title=\"{how}\">ⓘ {e(t('how_computed', lang))}</td></tr>")
        self.lines_table.value = ("<table class='wb-lines'><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head)
                                  + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")

    def _download(self, name: str) -> bytes:
        """A file of the plan as it is now, made when the user asks for it (:class:`Downloads`)."""
        if name == "cost_lines.csv":
            return views.lines_csv(self.est, self.currency, self.lang).encode("utf-8-sig")  # Excel reads the BOM as UTF-8
        if name == "plan.xlsx":
            from ..programmes.levers import levers
            from ..report import workbook  # openpyxl loads on the first workbook, not when the app starts
            return workbook.estimate_workbook(self.est, self.currency, self.lang, mc=self.mc,
                                              lever_table=levers(self.scenario))
        return self.scenario.to_json(indent=2).encode("utf-8")

    def _render_compare(self, table):
        if table is None:
            self.compare_table.value = ""
            return
        shown = table.rename(columns={"category": t("category", self.lang), "difference": t("difference", self.lang)})
        difference = t("difference", self.lang)
        zh = self.lang == "zh"
        # in Chinese each amount carries its ¥ and 万 (the heading then names no currency)
        amount = (lambda c: money(c, self.currency, "zh")) if zh else (lambda c: f"{c:,.0f}")  # noqa: E731
        for column in ("A", "B"):
            shown[column] = shown[column].map(amount)
        shown[difference] = shown[difference].map(lambda c: ("+" if c > 0 and zh else "") + amount(c) if zh
                                                  else f"{c:+,.0f}")
        changed = views.scenario_differences(self.pinned[0], self.scenario, self.lang)
        e = html.escape
        what = (e(t('compare_what', self.lang)) + ("" if zh else " ") + (("；" if zh else "; ").join(
            f"{e(label)} {e(a)} → {e(b)}" for label, a, b in changed)
                                                         if changed else e(t("compare_same", self.lang))))
        self.compare_table.value = (f"<b>{e(t('chart_compare', self.lang))}{'' if zh else f' [{self.currency}]'}</b>"
                                    f"<div class='wb-compare-what'>{what}</div>"
                                    + shown.to_html(index=False, escape=True, classes="wb-compare", border=0))
