"""The programme editor: every assumption of a programme a finance or programme lead changes, on the page.

The plan (start month, what it does, model size, GPU, pricing), the budgets and their alert lines, the staff and
the workstreams (stages, start, cadence, cycles, serving and traffic, annotation volumes) are controls with their
unit. An edit gives a new programme file (the dict of :meth:`Programme.to_dict`), which the view validates and
evaluates: a value the programme refuses is named in the banner and the figures stay those of the last valid plan.
Money is typed as people write it (``3M``, ``$3M``, ``300万``) in the display currency; counts as ``70B``, ``200k``.
"""
from __future__ import annotations

import copy
import re

import ipywidgets as w

from ..plan.money import MoneyError, parse_money
from ..plan.scenario import fields, parse_quantity
from ..plan.scenario_fields import COMMA_HINT
from ..programmes.programme import BUDGET_RESOURCES, TRAINING_STAGES
from ..reference import catalog
from ..report.charts import currency_label
from .app_controls import zh_quantity
from ..reference.i18n import choice_label, problem_zh, t
from ..report.views import format_quantity

#: The workstream's traffic and annotation fields set through its ``changes`` (scenario fields).
WORKSTREAM_CHANGES = ("requests_per_day", "input_tokens_per_request", "output_tokens_per_request", "sft_examples",
                      "preference_pairs", "n_gpus")
_WIDE = "470px"
#: The plan-wide drivers of a fine-tune's cost, editable beside the model.
BASE_DRIVERS = ("sft_examples", "sft_usd_per_example", "preference_pairs", "preference_usd_per_pair")


class EditError(ValueError):
    """A typed value the editor cannot read: ``field`` (the control's label) and ``problem``."""

    def __init__(self, field: str, value, problem: str):
        self.field, self.value, self.problem = field, value, problem
        super().__init__(f"{field} = {value!r}: {problem}")


class ProgrammeEditor:
    """``ProgrammeEditor(on_change).widget``; :meth:`show` fills it from a programme, ``on_change(data)`` receives
    the edited programme as a file dict, ``on_error(message)`` a value it could not read."""

    def __init__(self, on_change, on_error, lang="en", currency="USD"):
        self.on_change, self.on_error = on_change, on_error
        self.lang, self.currency = lang, currency
        self.data: dict | None = None
        self.rate = 7.1
        self._quiet = False
        self._shape = None
        self.widget = w.Accordion(layout=w.Layout(width="500px"))
        self.widget.add_class("wb-editor")

    # -- filling ----------------------------------------------------------------------------------------
    def show(self, programme, lang=None, currency=None, rate=None):
        """Fill the controls from ``programme`` (rebuilt when its shape or the language changed)."""
        relabel = (lang or self.lang, currency or self.currency) != (self.lang, self.currency)
        self.lang, self.currency = lang or self.lang, currency or self.currency
        self.rate = rate if rate is not None else self.rate
        self.programme = programme
        self.data = programme.to_dict()
        self.defaults = programme.base_scenario
        shape = (len(self.data["workstreams"]), len(self.data["staff"]), tuple(self.data["budgets"]))
        if shape != self._shape or relabel:
            self._shape = shape
            self._build()
        self._fill()

    def _build(self):
        self.controls = {}  # path -> (widget, kind)
        lang = self.lang
        sections = [(t("ed_plan", lang), self._plan_box()), (t("ed_budgets", lang), self._budget_box()),
                    (t("ed_staff", lang), self._staff_box()), (t("ed_workstreams", lang), self._workstream_box())]
        selected = self.widget.selected_index
        self.widget.children = [box for _, box in sections]
        for i, (title, _) in enumerate(sections):
            self.widget.set_title(i, title)
        self.widget.selected_index = selected

    def _control(self, path, kind, label, unit="", options=None, width=_WIDE, css=""):
        """A labelled control for ``path`` in the programme dict, read as ``kind``."""
        lang = self.lang
        unit = unit_words(unit, lang) if unit else unit
        text = f"{label} [{unit}]" if unit and lang != "zh" else f"{label}（{unit}）" if unit else label
        style = {"description_width": "250px"}
        if kind == "choice":
            widget = w.Dropdown(options=options, description=text, style=style, layout=w.Layout(width=width))
        elif kind == "flag":
            widget = w.Checkbox(description=text, indent=False, layout=w.Layout(width=width))
        else:
            widget = w.Text(description=text, continuous_update=False, style=style, layout=w.Layout(width=width))
        widget.tooltip = self._help(path)
        widget.add_class(f"wb-ed-{css or '-'.join(str(p) for p in path)}".replace("_", "-").replace(" ", "-"))
        widget.observe(lambda change, path=path, kind=kind, label=text: self._edited(path, kind, label, change["new"]),
                       "value")
        self.controls[path] = (widget, kind)
        return widget

    def _help(self, path) -> str:
        """The one-line help shown on hover: a scenario field's own, else the editor's."""
        name, spec = path[-1], fields()
        if (path[0] == "base" or (len(path) > 2 and path[-2] == "changes")) and name in spec:
            return spec[name].help_zh if self.lang == "zh" else spec[name].help
        if path[0] == "budgets":
            name = "budget"
        if len(path) > 3 and path[2] == "stages":
            name = "stages"
        key = f"edh_{name}"
        text = t(key, self.lang)
        return "" if text == key else text

    def _plan_box(self):
        lang, spec = self.lang, fields()
        kinds = [(choice_label("plan_kind", k, lang), k) for k in spec["plan_kind"].choices]
        gpus = [(g, g) for g in catalog.gpu_ids()]
        pricing = [(choice_label("pricing", p, lang), p) for p in spec["pricing"].choices]
        return w.VBox([
            self._control(("name",), "text", t("ed_name", lang), css="name"),
            self._control(("start",), "month", t("ed_start", lang), "YYYY-MM", css="start"),
            self._control(("horizon_months",), "int", t("ed_horizon", lang), t("months_unit", lang), css="horizon"),
            self._control(("base", "plan_kind"), "choice", spec["plan_kind"].label_zh if lang == "zh" else
                          spec["plan_kind"].label, options=kinds, css="plan-kind"),
            self._control(("base", "params"), "quantity", spec["params"].label_zh if lang == "zh" else
                          spec["params"].label, css="params"),
            self._control(("base", "gpu"), "choice", "GPU", options=gpus, css="gpu"),
            self._control(("base", "pricing"), "choice", spec["pricing"].label_zh if lang == "zh" else
                          spec["pricing"].label, options=pricing, css="pricing"),
            # what each fine-tune buys, for every workstream that does not set its own: the largest lines of a plan
            # that fine-tunes, on the page rather than behind a placeholder
            *[self._control(("base", name), "money" if spec[name].unit.startswith("USD") else "quantity",
                            spec[name].label_zh if lang == "zh" else spec[name].label,
                            self.currency + spec[name].unit[3:] if spec[name].unit.startswith("USD") else spec[name].unit,
                            css=name.replace("_", "-")) for name in BASE_DRIVERS],
        ])

    def _budget_box(self):
        lang = self.lang
        rows = [self._control(("budgets", "total"), "money", t("ed_budget_total", lang), self.currency,
                              css="budget-total"),
                self._control(("alert_percents",), "percents", t("ed_alert_lines", lang), "%", css="alert-lines")]
        for key in self.data["budgets"]:
            if key == "total":
                continue
            label = t(key, lang) if ":" not in key else f"{t(key.split(':')[0], lang)} {key.split(':', 1)[1]}"
            remove = w.Button(description="×", tooltip=t("ed_remove", lang), layout=w.Layout(width="32px"))
            remove.add_class("wb-ed-remove-budget")
            remove.on_click(lambda _, key=key: self._remove(("budgets", key)))
            rows.append(w.HBox([self._control(("budgets", key), "money", f"{t('budget', lang)}: {label}", self.currency,
                                              width="430px", css=f"budget-{key}"), remove]))
        tags = sorted({f"{k}:{v}" for entry in (*self.data["workstreams"], *self.data["staff"])
                       for k, v in entry.get("tags", {}).items() if "{" not in v})
        choices = [r for r in BUDGET_RESOURCES if r not in self.data["budgets"]] + \
            [tag for tag in tags if tag not in self.data["budgets"]]
        self.new_budget = w.Dropdown(options=[(t(c, lang) if ":" not in c else c, c) for c in choices],
                                     layout=w.Layout(width="300px"))
        self.new_budget.add_class("wb-ed-new-budget")
        add = w.Button(description=t("ed_add_budget", lang), layout=w.Layout(width="170px"))
        add.add_class("wb-ed-add-budget")
        add.on_click(lambda _: self._add_budget())
        return w.VBox([*rows, w.HBox([self.new_budget, add])])

    def _staff_box(self):
        lang = self.lang
        rows = []
        for i, _ in enumerate(self.data["staff"]):
            remove = w.Button(description=t("ed_remove", lang), layout=w.Layout(width="120px"))
            remove.add_class(f"wb-ed-remove-staff-{i}")
            remove.on_click(lambda _, i=i: self._remove(("staff", i)))
            rows.append(w.VBox([
                self._control(("staff", i, "name"), "text", t("ed_staff_name", lang), css=f"staff-{i}-name"),
                self._control(("staff", i, "fte"), "float", t("ed_fte", lang), "FTE", css=f"staff-{i}-fte"),
                self._control(("staff", i, "usd_per_month"), "money", t("ed_monthly_cost", lang),
                              f"{self.currency}/FTE-month", css=f"staff-{i}-cost"),
                self._control(("staff", i, "start_month"), "month_index", t("ed_from_month", lang), "YYYY-MM",
                              css=f"staff-{i}-start"),
                self._control(("staff", i, "end_month"), "month_index_or_none", t("ed_to_month", lang), "YYYY-MM",
                              css=f"staff-{i}-end"),
                remove], layout=w.Layout(border="1px solid #ddd", padding="4px", margin="2px 0")))
        add = w.Button(description=t("ed_add_staff", lang), layout=w.Layout(width="170px"))
        add.add_class("wb-ed-add-staff")
        add.on_click(lambda _: self._add(("staff",), {"name": f"staff {len(self.data['staff']) + 1}", "fte": 1.0,
                                                       "usd_per_month": 20000.0, "start_month": 1}))
        return w.VBox([*rows, add])

    def _workstream_box(self):
        lang, spec = self.lang, fields()
        rows = []
        label = lambda name: spec[name].label_zh if lang == "zh" else spec[name].label  # noqa: E731
        unit = lambda name: spec[name].unit  # noqa: E731
        for i, _ in enumerate(self.data["workstreams"]):
            stages = [self._control(("workstreams", i, "stages", stage), "flag", t(stage, lang),
                                    width="110px", css=f"ws-{i}-stage-{stage}") for stage in TRAINING_STAGES]
            remove = w.Button(description=t("ed_remove", lang), layout=w.Layout(width="120px"))
            remove.add_class(f"wb-ed-remove-ws-{i}")
            remove.on_click(lambda _, i=i: self._remove(("workstreams", i)))
            rows.append(w.VBox([
                self._control(("workstreams", i, "name"), "text", t("ed_ws_name", lang), css=f"ws-{i}-name"),
                w.HTML(f"<span class='wb-ed-label'>{t('ed_stages', lang)}</span>"), w.HBox(stages[:2]),
                w.HBox(stages[2:]),
                self._control(("workstreams", i, "start_month"), "month_index", t("ed_from_month", lang), "YYYY-MM",
                              css=f"ws-{i}-start"),
                self._control(("workstreams", i, "every_months"), "int_or_none", t("ed_every", lang),
                              t("months_unit", lang), css=f"ws-{i}-every"),
                self._control(("workstreams", i, "cycles"), "int", t("ed_cycles", lang), css=f"ws-{i}-cycles"),
                self._control(("workstreams", i, "serve_months"), "float", t("ed_serve_months", lang),
                              t("months_unit", lang), css=f"ws-{i}-serve"),
                self._control(("workstreams", i, "traffic_growth_per_month"), "percent", t("ed_growth", lang),
                              t("ed_percent_month", lang), css=f"ws-{i}-growth"),
                *[self._control(("workstreams", i, "changes", name), "quantity_or_none", label(name), unit(name),
                                css=f"ws-{i}-{name}") for name in WORKSTREAM_CHANGES],
                remove], layout=w.Layout(border="1px solid #ddd", padding="4px", margin="2px 0")))
        add = w.Button(description=t("ed_add_workstream", lang), layout=w.Layout(width="170px"))
        add.add_class("wb-ed-add-ws")
        add.on_click(lambda _: self._add(("workstreams",), {
            "name": f"workstream {len(self.data['workstreams']) + 1}", "stages": ["sft", "preference", "evaluation"],
            "start_month": 1, "cycles": 1, "tags": {}, "changes": {}}))
        return w.VBox([*rows, add])

    def _fill(self):
        self._quiet = True
        try:
            for path, (widget, kind) in self.controls.items():
                value = self._get(path)
                if value is None and path[0] == "base":  # not set in the file: the scenario's default
                    value = getattr(self.defaults, path[1])
                widget.value = self._format(path, kind, value)
                if path[-1] in (*WORKSTREAM_CHANGES, "end_month", "every_months", "start"):
                    widget.placeholder = self._placeholder(path)
        finally:
            self._quiet = False

    def _placeholder(self, path) -> str:
        if path[-1] == "end_month":
            return t("ed_until_end", self.lang)
        if path[-1] == "every_months":
            return t("ed_once", self.lang)
        if path[-1] == "start":
            return t("ed_next_month", self.lang).format(month=self.programme.month_label(1))
        value = getattr(self.defaults, path[-1])
        return t("ed_as_base", self.lang).format(value=format_quantity(value, 4) if value is not None else "auto")

    def _get(self, path):
        node = self.data
        if path[0] == "workstreams" and path[2] == "stages":
            return path[3] in self.data["workstreams"][path[1]]["stages"]
        for key in path:
            if isinstance(node, dict):
                node = node.get(key)
            else:
                node = node[key]
            if node is None:
                return None
        return node

    def _format(self, path, kind, value):
        if kind in ("choice", "flag"):
            return value if kind == "choice" else bool(value)
        if value is None:
            return ""
        if kind == "money":  # whole units for budgets and salaries, the cents of a price per label
            amount = value * (self.rate if self.currency == 'CNY' else 1.0)
            if self.lang == "zh":  # 3000万, as a Chinese reader writes an amount (and parse_money reads it back)
                return zh_quantity(amount, 9)
            return f"{amount:,.0f}" if abs(amount) >= 100 else f"{amount:.4g}"
        if kind == "percents":
            return ", ".join(f"{v:g}" for v in value)
        if kind == "percent":
            return f"{value * 100:g}"
        if kind in ("quantity", "quantity_or_none"):
            return format_quantity(value, 4)
        if kind in ("float",):
            return f"{value:g}"
        if kind in ("month_index", "month_index_or_none"):
            return self.programme.month_label(value)
        return str(value)

    # -- editing ----------------------------------------------------------------------------------------
    def _parse(self, kind, label, text):
        text = text if isinstance(text, (bool, str)) else str(text)
        if kind in ("choice", "flag", "text"):
            return text
        if kind == "month":
            return text.strip() or None
        stripped = text.strip()
        if not stripped and kind in ("int_or_none", "quantity_or_none", "money", "month_index_or_none"):
            return None
        if kind in ("month_index", "month_index_or_none"):  # a calendar month (2027-03), or the programme's month 3
            match = re.fullmatch(r"([0-9]{4})-([0-9]{1,2})", stripped)
            if match and 1 <= int(match[2]) <= 12:
                year, month = self.programme.first_month()
                return (int(match[1]) - year) * 12 + int(match[2]) - month + 1
            kind = "int"
        try:
            if kind == "money":
                return parse_money(stripped, self.currency, self.rate).usd
            if kind in ("quantity", "quantity_or_none"):
                return parse_quantity(stripped)
            if kind in ("int", "int_or_none"):
                value = float(stripped)
                if value != int(value):
                    raise ValueError
                return int(value)
            if kind == "percents":
                return [float(v) for v in stripped.replace("%", "").replace("，", ",").split(",") if v.strip()]
            if kind == "percent":
                return float(stripped.rstrip("%").strip()) / 100.0
            return float(stripped)
        except MoneyError as error:
            raise EditError(label, text, error.problem) from None
        except (ValueError, OverflowError) as error:
            problem = COMMA_HINT if "," in stripped and kind != "percents" else t("ed_not_a_number", self.lang)
            raise EditError(label, text, str(error) if "comma" in str(error) else problem) from None

    def _edited(self, path, kind, label, text):
        if self._quiet or self.data is None:
            return
        try:
            value = self._parse(kind, label, text)
        except EditError as error:
            problem = problem_zh(error.problem) if self.lang == "zh" else error.problem
            colon = "：" if self.lang == "zh" else ": "
            self.on_error(f"{error.field} = '{str(error.value)[:40]}'{colon}{problem}")
            return
        data = copy.deepcopy(self.data)
        if path[0] == "workstreams" and path[2] == "stages":
            stages = [s for s in data["workstreams"][path[1]]["stages"] if s != path[3]]
            data["workstreams"][path[1]]["stages"] = [s for s in TRAINING_STAGES if s in stages
                                                      or (s == path[3] and value)]
        else:
            node = data
            for key in path[:-1]:
                node = node[key]
            if value is None and (path[0] == "budgets" or (len(path) > 1 and path[-2] == "changes")):
                node.pop(path[-1], None)  # an empty budget or change: none, or the base's value
            else:
                node[path[-1]] = value
        if path == ("base", "plan_kind") and value != "pretrain":
            _without_training(data, value)
        self._rename(data, path)
        self.on_change(data)

    def _rename(self, data, path):
        """A plan still named by a preset or by its former values takes a name from its new values."""
        from ..programmes.programme import Programme, ProgrammeError
        from ..programmes.programme_presets import describe, presets
        if path == ("name",):
            return
        automatic = {*presets()["label"], describe(self.programme)}
        if data["name"] in automatic:
            try:
                data["name"] = describe(Programme.from_dict(data))
            except (ProgrammeError, ValueError):  # the view names what is wrong
                pass

    def _remove(self, path):
        data = copy.deepcopy(self.data)
        container = data[path[0]]
        if isinstance(container, dict):
            container.pop(path[1], None)
        else:
            del container[path[1]]
        self.on_change(data)

    def _add(self, path, entry):
        data = copy.deepcopy(self.data)
        data[path[0]].append(entry)
        self.on_change(data)

    def _add_budget(self):
        key = self.new_budget.value
        if key is None:
            return
        data = copy.deepcopy(self.data)
        data["budgets"][key] = float(data["budgets"].get("total", 1e6))
        self.on_change(data)


def _without_training(data: dict, kind: str):
    """A plan that now starts from open weights (or only serves): its workstreams stop pre-training (or training),
    and a workstream left with nothing to do is dropped, as the user who chose it expects."""
    serving = [ws for ws in data["workstreams"] if ws.get("serve_months")]
    if kind == "serve_only" and not serving and data["workstreams"]:
        # nothing served yet: the first workstream serves, for the horizon, at the traffic it states
        first = data["workstreams"][0]
        first["serve_months"] = float(data["horizon_months"])
        first["every_months"], first["cycles"] = None, 1
        serving = [first]
    for ws in data["workstreams"]:
        ws["stages"] = [] if kind == "serve_only" else [s for s in ws["stages"] if s != "pretrain"]
    # a workstream left with nothing to do is dropped; serving only, the workstreams that served stay, as they were
    kept = serving if kind == "serve_only" else [ws for ws in data["workstreams"] if ws["stages"] or ws.get("serve_months")]
    data["workstreams"] = kept or data["workstreams"]  # none left: the programme names what is missing


def unit_words(unit: str, lang: str) -> str:
    """A field's unit as the editor's reader reads it: ``CNY/example`` -> ``元/条``, ``GPUs`` -> ``块 GPU`` in Chinese
    (a unit starting with a currency code is that currency per the field's own unit)."""
    if lang != "zh":
        return unit
    currency = next((c for c in ("CNY", "USD") if unit.startswith(c)), "")
    if not currency:
        return t(unit, lang)
    rest = unit[len(currency):]
    per = t("USD" + rest, lang)  # the table's words for the field's own unit (USD/条)
    if per != "USD" + rest:
        return per.replace("USD", currency_label(currency, lang))
    return currency_label(currency, lang) + ("/" + t(rest.lstrip("/"), lang) if rest else "")
