"""Named programmes and the few knobs a programme lead turns: ``data/programme_presets.csv`` lists presets,
each a programme file in ``data/programmes/``; :func:`with_knobs` changes a programme's horizon and the cadence,
cycles, versions kept live and traffic growth of its release workstreams, which is what the app's programme view
and its links (``view=programme&programme=assistant-7b&every=2``) carry.

A *release workstream* is one that repeats (``every_months`` set) or serves its releases (``serve_months`` > 0);
a one-off pre-training run is left as it is. ``versions`` is the number of releases live at once: each release is
served for ``versions x every_months`` months, so a new one replaces the oldest.
"""
from __future__ import annotations

import base64
import json
import math
import re
import zlib
from dataclasses import replace
from urllib.parse import parse_qsl

import pandas as pd

from ..reference.data import DataFileError, cached, data_dir, read_table
from ..reference.i18n import problem_zh
from .programme import MAX_MONTHS, Programme, ProgrammeError, Workstream, load, loads
from ..plan.scenario import excerpt

#: knob -> (label, label_zh, low, high, whole, unit, unit_zh)
KNOBS = {
    "horizon": ("Horizon", "规划期", 1, MAX_MONTHS, True, "months", "个月"),
    "every": ("Release every", "发布间隔", 1, 24, True, "months", "个月"),
    "cycles": ("Release cycles", "发布轮数", 1, MAX_MONTHS, True, "cycles", "轮"),
    "versions": ("Versions kept live", "同时在线版本数", 1, 12, True, "versions", "个"),
    "growth": ("Traffic growth", "流量月增长", -50, 100, False, "% a month", "% / 月"),
}
_ASCII_NUMBER = re.compile(r"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$")
#: the link keys of the programme view (the app's single-run planner ignores them); ``plan``: a whole programme
QUERY_KEYS = ("view", "programme", "plan", *KNOBS)
#: The longest ``plan`` a link may carry, and the most its file may inflate to (a link is not a way to ship a bomb).
MAX_LINK_PLAN_CHARS, MAX_LINK_PLAN_BYTES = 24_000, 400_000
_CADENCE = {1: ("monthly releases", "每月发布"), 3: ("quarterly releases", "每季度发布"),
            6: ("half-yearly releases", "每半年发布"), 12: ("yearly releases", "每年发布")}
_KIND = {"pretrain": ("pre-trained", "从头预训练"), "open_weights": ("open weights", "开源权重"),
         "serve_only": ("open model served", "开源模型上线")}


def describe(p: Programme, lang: str = "en") -> str:
    """A name that says what the programme is, from its values: ``70B open weights, 12 months, monthly releases``."""
    base = p.base_scenario
    zh = lang == "zh"
    size = f"{base.params / 1e9:g}B"
    releases = [w for w in p.workstreams if w.every_months or w.serve_months]
    if releases and releases[0].every_months and releases[0].cycles > 1:
        every = releases[0].every_months
        cadence = _CADENCE[every][zh] if every in _CADENCE else (f"每 {every} 个月发布" if zh else f"releases every {every} months")
    elif releases and not releases[0].stages:
        cadence = ""  # served all along: the horizon says it
    else:
        cadence = "单次训练" if zh else "one run"
    months = f"{p.horizon_months} 个月" if zh else f"{p.horizon_months} months"
    return ("，" if zh else ", ").join(filter(None, [f"{size} {_KIND[base.plan_kind][zh]}", months, cadence]))


def encode_plan(p: Programme) -> str:
    """The programme as a link value: its file, compact, deflated and base64url-encoded (a few hundred characters)."""
    raw = json.dumps(p.to_dict(), separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def decode_plan(text: str) -> Programme:
    """The programme of a link's ``plan`` value, checked as a file is (a :class:`ProgrammeError` when it is not)."""
    text = str(text or "").strip()
    if not text or len(text) > MAX_LINK_PLAN_CHARS or not re.fullmatch(r"[A-Za-z0-9_-]+", text):
        raise ProgrammeError("programme", "plan", text, "is not a plan this app wrote",
                             f"the plan=... of a link copied from the programme view (at most {MAX_LINK_PLAN_CHARS:,} "
                             "characters)", f"从项目计划页面复制的链接中的 plan=...（至多 {MAX_LINK_PLAN_CHARS:,} 个字符）")
    try:
        whole = len(text) - (len(text) % 4 == 1)  # a cut link may end inside a base64 quantum: read what is whole
        packed = base64.urlsafe_b64decode(text[:whole] + "=" * (-whole % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_LINK_PLAN_BYTES)
        if inflater.unconsumed_tail:
            raise ValueError("too large")
    except (ValueError, zlib.error):
        raise ProgrammeError("programme", "plan", text, "is not a plan this app wrote",
                             "the plan=... of a link copied from the programme view",
                             "从项目计划页面复制的链接中的 plan=...") from None
    if not inflater.eof:
        raise ProgrammeError("programme", "plan", text, "is incomplete: the link was cut short",
                             "the whole link, as Copy link gives it", "完整的链接（用“复制链接”获得）")
    return loads(raw, "json")


@cached
def presets() -> pd.DataFrame:
    """The presets, indexed by id: label, label_zh, file (in data/programmes/), source."""
    table = read_table("programme_presets.csv", required=("id", "label", "label_zh", "file", "source"), key="id")
    for row_number, name in enumerate(table["file"], 2):
        if not (data_dir() / "programmes" / name).is_file():
            raise DataFileError(data_dir() / "programme_presets.csv", f"no file data/programmes/{name}", row_number, "file")
    return table.set_index("id", drop=False)


@cached
def preset(preset_id: str) -> Programme:
    """The programme of a preset (a :class:`ProgrammeError` lists the ids for an unknown one); read once, as the view
    asks for it on every edit (its name, its knobs)."""
    table = presets()
    if preset_id not in table.index:
        raise ProgrammeError("programme", "programme", preset_id, "is not a preset", ", ".join(table.index))
    return load(data_dir() / "programmes" / table.at[preset_id, "file"])


def _releases(p: Programme) -> list[int]:
    return [i for i, w in enumerate(p.workstreams) if w.every_months or w.serve_months]


def knobs(p: Programme) -> dict[str, float]:
    """The knobs as they stand in ``p`` (those of its first release workstream; horizon alone without one)."""
    out = {"horizon": p.horizon_months}
    releases = _releases(p)
    if releases:
        w = p.workstreams[releases[0]]
        every = w.every_months or 1
        out.update(every=every, cycles=w.cycles, versions=max(1, math.ceil(w.serve_months / every - 1e-9)),
                   growth=round(w.traffic_growth_per_month * 100, 6))
    return out


def check_knob(name: str, value) -> float:
    """A knob's value checked against its range: :class:`ProgrammeError` naming the knob otherwise."""
    if name not in KNOBS:
        raise ProgrammeError("programme", name, value, "is not a programme setting", ", ".join(KNOBS))
    label, _, low, high, whole, unit, _ = KNOBS[name]
    allowed = f"{'a whole number' if whole else 'a number'} from {low:g} to {high:g} [{unit}]"
    if isinstance(value, bool) or (isinstance(value, str) and not _ASCII_NUMBER.match(value)):
        raise ProgrammeError("programme", name, value, "is not a number", allowed)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ProgrammeError("programme", name, value, "is not a number", allowed) from None
    if not math.isfinite(number):
        raise ProgrammeError("programme", name, value, "is not a finite number", allowed)
    if whole and number != int(number):
        raise ProgrammeError("programme", name, value, "is not a whole number", allowed)
    if not low <= number <= high:
        raise ProgrammeError("programme", name, value, "is out of range", allowed)
    return int(number) if whole else number


def with_knobs(p: Programme, **changes) -> Programme:
    """``p`` with knobs changed (see the module docstring); every value checked, the result validated whole.

    Only what a turned knob sets changes, and only on the release workstreams it applies to: ``every`` sets their
    cadence and, unless ``cycles`` is given too, as many releases as fit between their start and the horizon
    (the presets' own count), with each release served as many cadences as before (``versions``); ``cycles``,
    ``versions`` and ``growth`` set what they name. A setting refused by the programme is named by its knob."""
    values = {name: check_knob(name, value) for name, value in changes.items()}
    current = knobs(p)
    if set(values) - {"horizon"} and len(current) == 1:
        raise ProgrammeError("programme", next(iter(set(values) - {"horizon"})), "",
                             "has nothing to change: the programme has no release workstream",
                             "horizon only, or a workstream with every_months or serve_months")
    horizon = values.get("horizon", p.horizon_months)
    latest = max(p.workstreams, key=lambda w: w.start_month)
    if horizon < latest.start_month:
        raise ProgrammeError("programme", "horizon", horizon, f"ends before workstream {latest.name!r} starts "
                             f"(month {latest.start_month})", f"a whole number from {latest.start_month} to {MAX_MONTHS}",
                             f"{latest.start_month} 到 {MAX_MONTHS} 之间的整数（工作流 {latest.name!r} 从第 "
                             f"{latest.start_month} 个月开始）")
    workstreams = list(p.workstreams)
    for i in _releases(p):
        w: Workstream = workstreams[i]
        every_before = w.every_months or 1
        every = values.get("every", every_before)
        cycles = values.get("cycles", w.cycles)
        if "every" in values and "cycles" not in values and w.every_months:
            cycles = max(1, (horizon - w.start_month) // every + 1)
        versions = values.get("versions", w.serve_months / every_before)
        serve = float(versions * every) if w.serve_months else 0.0
        if serve > MAX_MONTHS:  # each release is served versions x every months: name the knob turned, with what fits
            name = "versions" if "versions" in values or "every" not in values else "every"
            other_name = "every" if name == "versions" else "versions"
            other = every if name == "versions" else versions
            raise ProgrammeError("programme", name, values.get(name, versions), "is out of range",
                                 f"a whole number from 1 to {int(MAX_MONTHS // other)} with {other_name}={other:g} (each "
                                 f"release is served versions x every months, at most {MAX_MONTHS})",
                                 f"{other_name}={other:g} 时为 1 到 {int(MAX_MONTHS // other)} 之间的整数（每个版本在线 "
                                 f"versions x every 个月，至多 {MAX_MONTHS} 个月）")
        workstreams[i] = replace(w, every_months=every if cycles > 1 or w.every_months else None, cycles=cycles,
                                 serve_months=serve,
                                 traffic_growth_per_month=values["growth"] / 100 if "growth" in values
                                 else w.traffic_growth_per_month)
    try:
        return Programme(**{**{f: getattr(p, f) for f in p.__dataclass_fields__}, "horizon_months": horizon,
                            "workstreams": tuple(workstreams)})
    except ProgrammeError as error:  # a workstream field a knob set: named by the knob
        knob = _KNOB_OF_FIELD.get(error.field)
        if knob is None or knob not in values:
            raise
        allowed, allowed_zh = error.allowed, error.allowed_zh
        if knob == "growth" and hasattr(error, "highest"):
            highest = math.floor(error.highest * 1000) / 10
            allowed = f"a number from -50 to {highest:g} [% a month] for this traffic and horizon"
            allowed_zh = f"此流量与规划期下为 -50 到 {highest:g} 之间的数字（% / 月）"
        raise ProgrammeError("programme", knob, changes[knob], f"{error.problem} ({error.where})", allowed,
                             allowed_zh) from None


#: The workstream field each knob sets.
_KNOB_OF_FIELD = {"every_months": "every", "cycles": "cycles", "serve_months": "versions",
                  "traffic_growth_per_month": "growth", "start_month": "horizon"}


def parse_query(query: str, lang: str = "en") -> tuple[str | None, dict, list[str]]:
    """(preset id or None, knob values, messages) from a link; a bad value is reported and left out. A whole
    programme (``plan``) comes as the value ``plan`` of the knob values."""
    pairs = parse_qsl(str(query or "").lstrip("?"), keep_blank_values=True)
    given: dict[str, list[str]] = {}
    for key, value in pairs:
        if key in QUERY_KEYS:
            given.setdefault(key, []).append(value)
    errors, chosen, values = [], None, {}
    for key, items in given.items():
        if len(items) > 1:
            errors.append(message(ProgrammeError("programme", key, items[1], "is given twice in the URL",
                                                 f"one value; the first ({excerpt(items[0])}) is used"), lang))
    if "programme" in given:
        try:
            preset(given["programme"][0])
            chosen = given["programme"][0]
        except ProgrammeError as error:
            errors.append(message(error, lang))
    if "plan" in given:  # a whole programme: the preset it started from (if any) names it in the menu
        try:
            values["plan"] = decode_plan(given["plan"][0])
        except ProgrammeError as error:
            errors.append(message(error, lang))
    for key in KNOBS:
        if key in given:
            try:
                values[key] = check_knob(key, given[key][0])
            except ProgrammeError as error:
                errors.append(message(error, lang))
    return chosen, values, errors


_WHERE_ZH = {"programme": "项目计划", "workstream": "工作流", "staff": "人员"}


def message(error: ProgrammeError, lang: str = "en") -> str:
    """The error in ``lang``: Chinese names the setting's Chinese label and translates the problem where it can."""
    if lang != "zh":
        return str(error)
    kind, _, name = error.where.partition(" ")
    where = _WHERE_ZH.get(kind, kind) + (f" {name}" if name else "")
    label = f"{KNOBS[error.field][1]}（{error.field}）" if error.field in KNOBS else error.field
    text = f"{where} · {label} = {excerpt(error.value)}：{problem_zh(error.problem)}"
    if not error.allowed:
        return text
    allowed = error.allowed
    if error.allowed_zh:
        allowed = error.allowed_zh
    elif error.field in KNOBS:
        _, _, low, high, whole, _, unit_zh = KNOBS[error.field]
        allowed = f"{low:g} 到 {high:g} 之间的{'整数' if whole else '数字'}（{unit_zh}）"
    return f"{text}；允许：{problem_zh(allowed)}"
