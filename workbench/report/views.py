"""Tidy frames for the app's charts and tables: an Estimate (and friends) in, a labelled frame out.

Costs are converted to the display currency (``USD``, or ``CNY`` at the scenario's ``cny_per_usd``) and
labels translated (``lang`` ``en`` or ``zh``); the chart builders in :mod:`workbench.report.charts` take these
frames as they are.
"""
from __future__ import annotations

import datetime
import re

import numpy as np
import pandas as pd

from ..formulas import budget, scaling
from ..plan.estimate import CATEGORIES, STAGES, Estimate, estimate, stage_groups, totals
from ..reference import prices
from ..reference.i18n import choice_label, item_label, t, unit_label
from ..reference.region_prices import region_label
from ..reference.messages import Message, Refusal
from ..reference.numbers import compact, money, plain
from .csv_export import headed, significant, to_cents, to_csv
from ..plan.scenario import Scenario, ScenarioError, fields


def rate(est: Estimate, currency: str) -> float:
    """Multiplier from USD to ``currency``."""
    return float(est.scenario.cny_per_usd) if currency == "CNY" else 1.0


def stage_category(est: Estimate, currency="USD", lang="en") -> pd.DataFrame:
    """Cost per stage and category: ``stage``, ``category``, ``cost``, ``stage_order``, ``category_order``."""
    table = est.lines.groupby(["stage", "category"], as_index=False)["cost_usd"].sum()
    table = table[table["cost_usd"] > 0]
    return pd.DataFrame({
        "stage": [t(s, lang) for s in table["stage"]], "category": [t(c, lang) for c in table["category"]],
        "cost": table["cost_usd"].to_numpy() * rate(est, currency),
        "stage_order": [STAGES.index(s) for s in table["stage"]],
        "category_order": [CATEGORIES.index(c) for c in table["category"]],
    })


def split(est: Estimate, currency="USD", lang="en") -> pd.DataFrame:
    """Pre-training vs fine-tuning vs inference: ``group``, ``cost``, ``share``."""
    totals = est.totals("group")
    totals = totals[totals > 0] if (totals > 0).any() else totals  # no pre-training slice in a plan without it
    total = totals.sum()
    share = totals.to_numpy() / total if total > 0 else np.zeros(len(totals))
    return pd.DataFrame({"group": [t(g, lang) for g in totals.index], "cost": totals.to_numpy() * rate(est, currency),
                         "share": share,
                         # the share on its arc; none on a sliver too thin to carry it
                         "label": [f"{s:.0%}" if s >= 0.03 else "" for s in share]})


def in_display_currency(value, unit: str, currency: str, rate: float, lang: str = "en") -> tuple:
    """(value, unit label) of a field's value for a reader of ``lang``: an amount in USD (``USD/GPU-h``...) in the
    display currency (``元/GPU 小时`` on a renminbi page), anything else as it is."""
    label = t(unit, lang) if unit else ""
    if currency == "CNY" and str(unit).startswith("USD") and isinstance(value, (int, float)):
        return value * rate, label.replace("USD", "元" if lang == "zh" else "CNY")
    return value, label


def tornado(sensitivity_table: pd.DataFrame, est: Estimate, currency="USD", lang="en", top: int = 10) -> pd.DataFrame:
    """Long frame for a tornado chart: one row per input and side (``low``/``high``), ``delta`` from the base
    total, the input's value and unit, ordered by swing."""
    # an input that moves nothing (the tokens of a plan that only serves) has no bar: it does not take a place
    moves = (sensitivity_table["low_total_usd"] != sensitivity_table["base_total_usd"]) | (
        sensitivity_table["high_total_usd"] != sensitivity_table["base_total_usd"])
    table = sensitivity_table[moves].head(top)
    r = rate(est, currency)
    spec = fields()
    rows = []
    for order, row in enumerate(table.itertuples()):
        f = spec[row.input]
        label = f.label_zh if lang == "zh" else f.label
        for side, value, total in (("low", row.low_value, row.low_total_usd), ("high", row.high_value, row.high_total_usd)):
            value, unit = in_display_currency(value, f.unit, currency, r, lang)
            shown_unit = unit if f.unit not in ("fraction", "factor") else ""
            rows.append({"input": label, "side": t(side, lang), "side_code": side, "value": value, "unit": unit,
                         "delta": (total - row.base_total_usd) * r, "total": total * r, "order": order,
                         "value_text": f"{plain(value, 'zh', 3) if lang == 'zh' else format_quantity(value, 3)} "
                                       f"{shown_unit}".strip()})
    return pd.DataFrame(rows, columns=["input", "side", "side_code", "value", "unit", "delta", "total", "order",
                                       "value_text"])


def burn(est: Estimate, currency="USD", lang="en") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(burn frame ``day``, ``spent``; alert frame ``label``, ``threshold``, ``day``, ``crossed``)."""
    r = rate(est, currency)
    spent = budget.burn(est)
    alerts = budget.crossings(est, table=spent)
    burn_frame = pd.DataFrame({"day": spent["day"], "spent": spent["spent_usd"] * r})
    alert_frame = pd.DataFrame({
        "label": [f"{p:g} % {t('budget_line', lang)}" for p in alerts["alert_percent"]],
        "threshold": alerts["threshold_usd"] * r, "day": alerts["day"], "crossed": alerts["crossed"],
        "when": [when_crossed(day, date, crossed, lang) for day, date, crossed in
                 zip(alerts["day"], alerts["date"], alerts["crossed"])],
    })
    return burn_frame, alert_frame


def when_crossed(day: float, date, crossed: bool, lang="en") -> str:
    """When an alert line is crossed, as a reader says it: its date (with a start date), else the day from the
    start (``day 4.9``, ``第 4.9 天``), or "not reached"."""
    if not crossed:
        return t("not_reached", lang)
    if date:
        return str(date)
    return f"第 {day:,.1f} 天" if lang == "zh" else f"day {day:,.1f}"


def size_curve(scenario: Scenario, points: int = 25, span: float = 30.0) -> pd.DataFrame:
    """Total cost [USD] of the scenario resized to other parameter counts, each trained on its
    compute-optimal tokens, evaluated as one batch: ``params``, ``tokens``, ``cost_usd``.

    Sizes run from params/span to params*span within the field's range; a mixture-of-experts keeps its
    ratio of active to total parameters, so its smallest size keeps active parameters in their range too.
    """
    if scenario.batch_size is not None:
        raise ScenarioError("scenario", "batch", "the size curve takes a single scenario", "a single scenario")
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or not 2 <= points <= 10_000:
        raise ScenarioError("points", points, "is not a number of points", "a whole number from 2 to 10,000")
    if not isinstance(span, (int, float)) or isinstance(span, bool) or not 1 < span <= 1e6:
        raise ScenarioError("span", span, "is not a size span", "a factor above 1, at most 1e6")
    spec = fields()
    active_ratio = 1.0 if scenario.active_params is None else scenario.active_params / scenario.params
    lo = max(spec["params"].min, spec["active_params"].min / active_ratio, scenario.params / span)
    hi = min(spec["params"].max, scenario.params * span)
    params = np.logspace(np.log10(lo), np.log10(max(hi, lo)), points)
    active = np.clip(params * active_ratio, spec["active_params"].min, params)
    tokens = np.clip(scaling.compute_optimal_tokens(active, scenario.scaling_law), fields()["tokens"].min,
                     fields()["tokens"].max)
    changes = {"params": params, "tokens": tokens, "d_model": None, "n_layers": None,
               "active_params": None if scenario.active_params is None else active,
               "reward_model_params": None,
               # a given replica size belongs to the given model: each size on the curve gets its own
               "serving_tensor_parallel": None}
    total, _ = totals(scenario.resized(**changes))  # the totals only: no lines table
    return pd.DataFrame({"params": params, "tokens": tokens, "cost_usd": total})


def format_batch(sequences) -> str:
    """Sequences in flight, for display: whole above 10, two significant digits below (a replica limited by its
    prompts' compute averages less than one), "-" when unknown."""
    if sequences is None or not np.isfinite(sequences):
        return "-"
    return f"{sequences:,.0f}" if sequences >= 10 else f"{sequences:.2g}"


def compare(a: Estimate, b: Estimate, currency="USD", lang="en") -> pd.DataFrame:
    """Per category: cost in A, in B and B - A, plus a total row (in the display currency of B's rate)."""
    r = rate(b, currency)
    ta, tb = a.totals("category") * r, b.totals("category") * r
    table = pd.DataFrame({"category": [t(c, lang) for c in CATEGORIES], "A": ta.to_numpy(), "B": tb.to_numpy()})
    table.loc[len(table)] = [t("total", lang), ta.sum(), tb.sum()]
    table["difference"] = table["B"] - table["A"]
    return table


def format_quantity(value, digits: int = 6) -> str:
    """A compact, re-parseable rendering: 7e9 -> '7B', 1418091 -> '1.41809M', 0.346 -> '0.346'
    (:func:`workbench.reference.numbers.compact`)."""
    return compact(value, digits)


def scenario_differences(a: Scenario, b: Scenario, lang="en") -> list[tuple[str, str, str]]:
    """(field label, value in A, value in B) for every input that differs, in the field table's order:
    what a reader of an A/B comparison needs to know was changed."""
    va, vb = a.to_dict(), b.to_dict()
    shown = []
    for name, field in fields().items():
        if va[name] != vb[name]:
            label = field.label_zh if lang == "zh" else field.label
            for digits in (4, 6, 9, 12, 17):  # as many digits as it takes to tell 2T from 2.0004T
                pair = tuple(_shown(name, value, lang, digits) for value in (va[name], vb[name]))
                if pair[0] != pair[1]:
                    break
            shown.append((label, *pair))
    return shown


def _shown(name, value, lang, digits=4) -> str:
    if value is None or value == "":
        # an empty name is no name; an empty number is the value worked out from the rest
        return "—" if fields()[name].type == "text" else t("auto", lang)
    if isinstance(value, float):
        # a Chinese reader reads 99.27 万, not 992.7k
        return plain(value, lang, digits) if lang == "zh" else format_quantity(value, digits=digits)
    if name in fields() and fields()[name].type == "region":
        return region_label(str(value), lang)
    return choice_label(name, str(value), lang)


_ASSIGNMENT = re.compile(r"\b([a-z][a-z0-9_]*)\s?=\s?([^\s;:,)：，；（）]+)")
_IDENTIFIER = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_COLON = (": ", "：")
_EXPONENT = re.compile(r"(?<![\w.])\d+(?:\.\d+)?e[-+]?\d+(?![\w.])")
_DATA_FILE = re.compile(r"\s*[(（]?\bdata/[a-z_]+\.csv[)）]?")


def field_label(name: str, lang: str = "en") -> str:
    """The label of scenario field ``name`` in ``lang`` (``name`` itself when it is no field)."""
    field = fields().get(name)
    return name if field is None else field.label_zh if lang == "zh" else field.label


def readable(text: str, lang: str = "en") -> str:
    """``text`` with the model's field ids in the reader's words: ``pricing=reserved_1y`` -> ``Pricing mode: reserved,
    1 year``, ``label_noise_share`` -> its label; data file names (``(data/x.csv)``) dropped, their place being the
    source shown on hover. Ids that are no field are left as they are."""
    spec = fields()

    def assignment(match):
        name, value = match.group(1), match.group(2)
        if name not in spec:
            return match.group(0)
        try:
            shown = _shown(name, float(value), lang) if spec[name].type != "text" and not spec[name].choices else \
                choice_label(name, value, lang)
        except ValueError:
            shown = choice_label(name, value, lang)
        return f"{field_label(name, lang)}{_COLON[lang == 'zh']}{shown}"

    out = _ASSIGNMENT.sub(assignment, _DATA_FILE.sub("", str(text)))
    out = _EXPONENT.sub(lambda m: plain(float(m.group(0)), lang), out)  # 7e+10 -> 70 B (700 亿)
    return _IDENTIFIER.sub(lambda m: f"“{field_label(m.group(0), lang)}”" if m.group(0) in spec else m.group(0), out)


_USD_AMOUNT = re.compile(r"(-?[\d,]+(?:\.\d+)?) USD\b(?!/)")


def warning_text(text: str, lang: str = "en", currency: str = "USD", rate: float = 1.0) -> str:
    """An estimate's warning (a :class:`~workbench.reference.messages.Message`, or any sentence of the engine's with
    amounts ``N USD``) for the app's reader: in ``lang``, field ids as labels, no exponents, amounts in the display
    currency (¥ and 万 in Chinese)."""
    if isinstance(text, (Message, Refusal)):
        return readable(text.text(lang, currency, rate), lang)
    out = readable(text, lang)
    if currency == "USD" and lang != "zh":
        return out
    return _USD_AMOUNT.sub(lambda m: money(float(m.group(1).replace(",", "")) * rate, currency, lang), out)


def describe_changes(changes: str, applied: dict, lang: str = "en", currency: str = "USD", rate: float = 1.0) -> str:
    """What a lever changes, in the reader's words: each field it names (``changes``: ``a=x; b=y``) with the value
    it takes (``applied``): ``Pricing mode: spot (interruptible); Experiment pricing: on-demand``; amounts in the
    display ``currency`` at ``rate``."""
    names = [part.split("=", 1)[0].strip() for part in str(changes).split(";") if "=" in part]
    spec = fields()

    def value(name):
        unit = spec[name].unit if name in spec and isinstance(applied[name], (int, float)) else ""
        amount, label = in_display_currency(applied[name], unit, currency, rate, lang)
        shown = _shown(name, amount, lang)
        return f"{shown} {label}" if unit and unit not in ("fraction", "factor") else shown

    return ("；" if lang == "zh" else "; ").join(
        f"{field_label(name, lang)}{_COLON[lang == 'zh']}{value(name)}" for name in names if name in applied)


def compare_long(table: pd.DataFrame, lang="en") -> pd.DataFrame:
    """The compare table without its total row, long form for a grouped bar chart."""
    body = table.iloc[:-1]
    return body.melt(id_vars="category", value_vars=["A", "B"], var_name="scenario", value_name="cost")


def lines_table(est: Estimate, currency="USD", lang="en") -> pd.DataFrame:
    """The cost lines for display and CSV export, with translated stage and category names."""
    r = rate(est, currency)
    lines = est.lines
    # a contingency line's quantity is an amount (USD) and its unit cost a rate (0.3): the amount is converted
    amount = (lines["unit"] == "USD").to_numpy()
    return pd.DataFrame({
        "stage": [t(s, lang) for s in lines["stage"]], "category": [t(c, lang) for c in lines["category"]],
        "item": [item_label(i, lang) for i in lines["item"]],
        "quantity": np.where(amount, lines["quantity"] * r, lines["quantity"]),
        "unit": [(("元" if lang == "zh" else currency) if a else unit_label(u, lang)) for u, a in zip(lines["unit"], amount)],
        f"unit_cost_{currency.lower()}": np.where(amount, lines["unit_cost_usd"], lines["unit_cost_usd"] * r),
        f"cost_{currency.lower()}": lines["cost_usd"] * r,
        "cost_type": [t(c, lang) for c in lines["cost_type"]], "group": [t(g, lang) for g in stage_groups(lines["stage"], est.line_kinds())],
        "formula": lines["formula"], "source": lines["source"],
    })


def lines_csv(est: Estimate, currency="USD", lang="en", table: pd.DataFrame | None = None) -> str:
    """The cost lines as CSV for download, each row carrying the scenario's name (``Plan`` when it has none), safe to
    open in a spreadsheet; costs in cents that add up to the total's, quantities and unit costs with six significant
    digits. ``table``: :func:`lines_table` of the same arguments, if already made."""
    table = (lines_table(est, currency, lang) if table is None else table).copy()
    table.insert(0, "scenario_name", est.scenario.name or t("plan_unnamed", lang))
    code = currency.lower()
    table["quantity"] = significant(table["quantity"])
    table[f"unit_cost_{code}"] = significant(table[f"unit_cost_{code}"])
    table[f"cost_{code}"] = to_cents(table[f"cost_{code}"])
    return to_csv(headed(table, lang))


def cost_histogram(mc, est: Estimate, currency="USD", bins: int = 40) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(bins: ``low``, ``high``, ``count``, ``share``; markers: ``label``, ``cost``) of a Monte Carlo's total
    cost in the display currency, with the P10 / P50 / P90 lines."""
    r = rate(est, currency)
    costs = mc.samples["total_cost_usd"].to_numpy() * r
    counts, edges = np.histogram(costs, bins=bins)
    frame = pd.DataFrame({"low": edges[:-1], "high": edges[1:], "count": counts, "share": counts / counts.sum()})
    markers = pd.DataFrame({"label": [f"P{q}" for q in (10, 50, 90)],
                            "cost": np.percentile(costs, [10, 50, 90])})
    return frame, markers


#: The confidence of a price row (data/prices.csv), for a reader.
CONFIDENCE_LABELS = {"verified": ("checked on the provider's own page", "已在供应商官网核实"),
                     "transcribed": ("copied by a third party, dated", "第三方转录，有日期"),
                     "undated": ("copied by a third party, date unknown", "第三方抓取，日期不详"),
                     "assumed": ("an assumption, not an offer", "假设值，并非报价")}


def hourly(value: float, currency: str, lang: str = "en") -> str:
    """A price per GPU-hour in ``currency``: ``¥34.65`` for a Chinese reader, ``34.65 CNY`` otherwise."""
    if lang == "zh":
        return f"{'¥' if currency == 'CNY' else '$' if currency == 'USD' else ''}{value:,.2f}"
    return f"{value:,.2f} {currency}"


def age_months(as_of: str, today: datetime.date | None = None) -> int | None:
    """Whole months from a date written ``YYYY-MM-DD`` or ``YYYY-MM`` to ``today``; None for another form."""
    match = re.fullmatch(r"(\d{4})-(\d{2})(?:-(\d{2}))?", str(as_of))
    if not match:
        return None
    today = today or datetime.date.today()
    months = (today.year - int(match[1])) * 12 + today.month - int(match[2])
    if match[3] and today.day < int(match[3]):
        months -= 1
    return max(months, 0)


def server_month(price_per_gpu_hour: float, currency: str, gpus, lang: str = "en") -> str:
    """A monthly rent as its provider quotes it: per server (``gpus`` GPUs, else per GPU) and month of 730.5 h."""
    rent, gpus = prices.instance_month(price_per_gpu_hour, gpus)
    amount = money(rent, currency, lang)
    if lang == "zh":
        return f"{amount}/{str(gpus) + ' 卡服务器' if gpus > 1 else '卡'}·月"
    return f"{amount} per {f'{gpus}-GPU server' if gpus > 1 else 'GPU'}-month"


#: Rented ways of buying a cluster for a term, and the words for their term.
_TERMS = {"monthly": (("month",), "个月"), "reserved_1y": (("year",), "年"), "reserved_3y": (("3-year term",), "个 3 年期")}


def commitment_line(est: Estimate, currency: str = "USD", lang: str = "en") -> str:
    """What a cluster rented for a term is paid, as a bill reads (empty for one bought by the hour or owned):
    ``168 GPUs (21 servers of 8) x 2 months = 2,940,000 CNY, of which 1,197,210 CNY idle``: its GPUs, whole terms
    and price, and the hours of those terms the plan does not use (the cluster's alone: a stage bought another way
    is its own commitment); the share other work takes of them is said; GPUs that are not whole servers too."""
    s, d = est.scenario, est.details
    if s.pricing not in _TERMS:
        return ""
    terms, term_hours = float(d["cluster_terms"]), float(d["cluster_term_hours"])
    if not (np.isfinite(terms) and terms > 0):
        return ""
    zh, n, to = lang == "zh", float(est.n_gpus), rate(est, currency)
    price = float(d["price_per_gpu_hour"]) * to
    paid_hours = n * terms * term_hours
    idle_hours = max(paid_hours - n * float(d["cluster_used_hours"]), 0.0)
    share = float(s.commitment_other_use_share)
    rent, idle = paid_hours * price, idle_hours * price
    per = 0
    if s.pricing == "monthly" and s.price_per_gpu_hour is None:  # the rent is quoted per server of this size
        size = prices.lookup(s.gpu, "monthly", s.provider, s.region or "").gpus_per_instance
        per = int(size) if size == size and size > 0 else 0
    servers = n / per if per else 0.0
    whole = not per or servers == int(servers)
    if zh:
        head = {"monthly": "包月租用", "reserved_1y": "包年（1 年期）", "reserved_3y": "包年（3 年期）"}[s.pricing]
        text = (f"{head}：{n:,.0f} 块 GPU" + (f"（{servers:,.4g} 台 {per} 卡服务器）" if per else "")
                + f" × {terms:,.0f} {_TERMS[s.pricing][1]} = {money(rent, currency, lang)}，其中闲置 "
                f"{money(idle, currency, lang)}（{idle_hours:,.0f} GPU 小时，整期付费中未用完的部分）")
        if share > 0:
            text += f"；其他工作预计使用其中 {share:.0%}，本方案承担 {money(idle * (1 - share), currency, lang)}"
        if not whole:
            text += f"；{n:,.0f} 块 GPU 不是整台服务器：按台计租，请取 {per} 的倍数"
        return text
    plural = lambda count, word: f"{count:,.4g} {word}" + ("" if count == 1 else "s")  # noqa: E731
    head = {"monthly": "Rented by the month", "reserved_1y": "Reserved for a year", "reserved_3y": "Reserved for 3 years"}
    text = (f"{head[s.pricing]}: {plural(n, 'GPU')}" + (f" ({plural(servers, 'server')} of {per})" if per else "")
            + f" x {plural(terms, _TERMS[s.pricing][0][0])} = {money(rent, currency, lang)}, of which "
            f"{money(idle, currency, lang)} idle ({idle_hours:,.0f} GPU-h of the terms paid and not used)")
    if share > 0:
        text += (f"; other work is to use {share:.0%} of them (commitment_other_use_share): the plan carries "
                 f"{money(idle * (1 - share), currency, lang)}")
    if not whole:
        text += (f"; {plural(n, 'GPU')} {'is' if n == 1 else 'are'} not whole servers: the rent is per server, "
                 f"take a multiple of {per}")
    return text


def gpu_offers(est: Estimate, currency: str = "USD", lang: str = "en", limit: int = 12) -> pd.DataFrame:
    """Where the plan's GPU can be had in its pricing mode, cheapest first (``data/prices.csv``): provider,
    region, the price as billed (its own currency) and in the display ``currency`` at the plan's rate, date,
    confidence and source; the plan's own provider's offers first when it names one, at most ``limit`` rows."""
    s = est.scenario
    mode = s.pricing if s.pricing != "self_hosted" else "on_demand"
    table = prices.offers(s.gpu, mode, s.cny_per_usd)
    if s.provider != prices.MEDIAN:
        table = pd.concat([table[table["provider"] == s.provider], table[table["provider"] != s.provider]])
    table = table.head(limit)
    zh = lang == "zh"
    shown = prices.convert(table["price_per_gpu_hour"].to_numpy(), table["currency"].to_numpy(), currency,
                           s.cny_per_usd) if len(table) else []
    return pd.DataFrame({
        t("provider_col", lang): [choice_label("provider", p, lang) for p in table["provider"]],
        t("region_col", lang): [region_label(r, lang, p) if r else "—" for r, p in zip(table["region"],
                                                                                    table["provider"])],
        t("billed_col", lang): [hourly(p, c, lang) + ((f"（{server_month(p, c, n, lang)}）" if zh else
                                                        f" ({server_month(p, c, n, lang)})") if m == "monthly" else "")
                                for p, c, n, m in zip(table["price_per_gpu_hour"], table["currency"],
                                                      table["gpus_per_instance"], table["mode"])],
        t("shown_col", lang).format(currency={"CNY": "元", "USD": "美元"}.get(currency, currency) if zh else currency):
            [hourly(v, currency, lang) for v in shown],
        t("as_of_col", lang): table["as_of"].replace("undated", "无日期" if zh else "undated").to_numpy(),
        t("confidence_col", lang): [CONFIDENCE_LABELS.get(c, (c, c))[1 if zh else 0] for c in table["confidence"]],
        t("source_col", lang): table["source"].to_numpy()})


def price_line(est: Estimate, currency: str = "USD", lang: str = "en") -> tuple[str, str]:
    """The plan's GPU price as billed (in the display currency too when that is another), with whose it is, its
    date and confidence; and its full source."""
    s, d = est.scenario, est.details
    zh = lang == "zh"
    billed = d["price_currency"]
    usd = float(d["price_per_gpu_hour"])
    own = usd * float(s.cny_per_usd) if billed == "CNY" else usd
    text = hourly(own, billed, lang) + ("/GPU 小时" if zh else "/GPU-h")
    if billed != currency:
        other = usd * float(s.cny_per_usd) if currency == "CNY" else usd
        text += (f"（约 {hourly(other, currency, lang)}，按 {float(s.cny_per_usd):g} 元/美元）" if zh
                 else f" (about {hourly(other, currency, lang)} at {float(s.cny_per_usd):g} CNY/USD)")
    if s.price_per_gpu_hour is not None:
        whose = t("price_typed", lang)
    elif s.pricing == "self_hosted":
        whose = t("price_owned", lang)
    else:
        quote = prices.lookup(s.gpu, s.pricing, s.provider, s.region or "")
        whose = choice_label("provider", s.provider, lang) + (
            f" {region_label(quote.region, lang, s.provider)}" if quote.region else "")
        if s.pricing == "monthly":  # rented by the month: the rent as quoted, per server
            text = f"{server_month(quote.price, quote.currency, quote.gpus_per_instance, lang)} = {text}"
        if quote.as_of:
            date = ("无日期" if zh else "undated") if quote.as_of == "undated" else quote.as_of
            months = age_months(quote.as_of)
            if months is not None and months >= 1:  # a price's age, which its date alone leaves to arithmetic
                date += f"（{months} 个月前）" if zh else f" ({months} months old)"
            whose += f" · {date} · {CONFIDENCE_LABELS.get(quote.confidence, (quote.confidence,) * 2)[1 if zh else 0]}"
    return f"{text} · {whose}", str(d["price_source"])
