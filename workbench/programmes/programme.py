"""A programme: a horizon of months and the workstreams that spend in it (runs, release cycles, serving, staff).

A :class:`Workstream` is a :class:`~workbench.plan.scenario.Scenario` (the programme's ``base`` with the
workstream's ``changes``) that runs once or every N months for K cycles, pays for some of the training
stages, and may serve each cycle's release as a model version for M months. :class:`Staff` are paid every
month they are on the programme. ``workbench.programmes.timeline.evaluate`` turns a programme into monthly cost lines.

The file form (JSON, or TOML for reading) round-trips losslessly through :meth:`Programme.to_json` and
:func:`load`; every value is checked, and a bad one raises :class:`ProgrammeError` naming the workstream
(or staff entry) and the field with its allowed range.
"""
from __future__ import annotations

import datetime
import difflib

import json
import math
import numbers
import re
import tomllib
import weakref
from dataclasses import dataclass, field, fields as dataclass_fields, replace
from pathlib import Path

from ..formulas import hidden
from ..plan.money import HOW_TO_WRITE, HOW_TO_WRITE_ZH, MoneyError, parse_money
from ..plan.scenario import MAX_JSON_CHARS, Scenario, ScenarioError, check_field, excerpt, fields
from ..reference.i18n import calendar_month

SCHEMA_VERSION = 1
TRAINING_STAGES = ("pretrain", "sft", "preference", "evaluation")
# a resource's budget covers these cost categories: GPU time lost to failures or spent on experiments is compute
RESOURCE_CATEGORIES = {"compute": ("compute", "failures", "experiments", "debug"), "storage": ("storage",),
                       "network": ("network",), "annotation": ("annotation",), "logging": ("logging",),
                       "staff": ("staff",), "power": ("power",), "redundancy": ("redundancy",),
                       "data_processing": ("data_processing",), "security": ("security",)}
BUDGET_RESOURCES = ("total", *RESOURCE_CATEGORIES)
MAX_MONTHS = 120
MAX_WORKSTREAMS = 200
MAX_STAFF = 100
MAX_FLEETS = 20
#: The most (release, month) pairs a programme may serve: 20 workstreams releasing monthly for 5 years, each release
#: served 8 months, is 9,600; each pair is priced, and a plan far beyond it would take minutes and gigabytes.
MAX_VERSION_MONTHS = 10_000
MAX_TAGS = 20
_TAG_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_START = re.compile(r"20[0-9]{2}-(0[1-9]|1[0-2])")
#: The name under which a timeline attributes the programme's own lines (security and compliance).
PROGRAMME_LINES = "programme"
#: The columns of a timeline's lines (:mod:`workbench.programmes.placement`); a tag becomes a column beside them.
FRAME_COLUMNS = ("month", "workstream", "cycle", "stage", "category", "item", "cost_type", "cost_usd", "gpu_hours",
                 "gpu_hour_class")
#: Tag keys that would overwrite a column of the timeline or of its monthly tokens and KPIs.
RESERVED_TAGS = (*FRAME_COLUMNS, "tags", "trained_tokens", "served_tokens", "served_input_tokens", "served_output_tokens",
                 "calendar_month")


class ProgrammeError(ValueError):
    """A programme input is invalid: ``where`` (``workstream 'sft'``, ``staff 'core team'`` or ``programme``),
    ``field``, the value and what is allowed."""

    def __init__(self, where: str, field: str, value, problem: str, allowed: str = "", allowed_zh: str = ""):
        self.where, self.field, self.value, self.problem, self.allowed = where, field, value, problem, allowed
        self.allowed_zh = allowed_zh  # the same in Chinese, where no translation table covers it
        text = f"{where} · {field}={excerpt(value)}: {problem}"
        super().__init__(f"{text}; allowed: {allowed}" if allowed else text)


def _number(where, name, value, low, high, whole=False, allowed=None):
    allowed = allowed or (f"a whole number from {low:g} to {high:g}" if whole else f"a number from {low:g} to {high:g}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ProgrammeError(where, name, value, "is not a number", allowed)
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer of hundreds of digits: no float holds it
        raise ProgrammeError(where, name, value, "is too large", allowed) from None
    if not finite:
        raise ProgrammeError(where, name, value, "is not a finite number", allowed)
    if whole and value != int(value):
        raise ProgrammeError(where, name, value, "is not a whole number", allowed)
    if not low <= value <= high:
        raise ProgrammeError(where, name, value, "is out of range", allowed)
    return int(value) if whole else float(value)


def _text(where, name, value, max_chars):
    if not isinstance(value, str) or not value.strip():
        raise ProgrammeError(where, name, value, "is not a non-empty text", f"a name of 1 to {max_chars} characters")
    value = re.sub(r"[^\S\r\n\t\f\v]", " ", value)  # no-break and other typographic spaces are spaces
    if len(value) > max_chars or not value.isprintable():  # control, format (bidi), surrogate, unassigned
        raise ProgrammeError(where, name, value, "is too long or holds control characters",
                             f"a name of 1 to {max_chars} printable characters on one line")
    return value.strip()


def _tags(where, value) -> dict:
    if not isinstance(value, dict):
        raise ProgrammeError(where, "tags", value, "is not an object", "an object of key: text, e.g. {\"team\": \"core\"}")
    if len(value) > MAX_TAGS:
        raise ProgrammeError(where, "tags", value, f"has {len(value)} keys", f"at most {MAX_TAGS} keys")
    out = {}
    for key, text in value.items():
        if not isinstance(key, str) or not _TAG_KEY.match(key) or key in RESERVED_TAGS:
            raise ProgrammeError(where, f"tags.{key}", text, "is not a usable tag key",
                                 "lower-case letters, digits and _ (starting with a letter, up to 40), not one of "
                                 + ", ".join(RESERVED_TAGS))
        out[key] = _text(where, f"tags.{key}", text, 100)
        placeholders = set(re.findall(r"\{[^{}]*\}", out[key])) - {"{cycle}"}
        if placeholders or out[key].count("{") != out[key].count("}"):
            raise ProgrammeError(where, f"tags.{key}", text, f"has a placeholder other than {{cycle}} "
                                 f"({', '.join(sorted(placeholders)) or 'an unmatched brace'})",
                                 "plain text, with {cycle} where the cycle's number goes (v{cycle} -> v1, v2, ...)")
    return out


def _scenario(where, base: Scenario, changes, label: str = "changes") -> Scenario:
    """``base`` with ``changes``; a bad one is named ``label.field`` (``changes.`` of a workstream, ``base.`` of the
    programme)."""
    if not isinstance(changes, dict):
        raise ProgrammeError(where, label, changes, "is not an object", "an object of scenario field: value")
    for name, value in changes.items():
        if isinstance(value, (list, tuple, dict)):
            raise ProgrammeError(where, f"{label}.{name}", value, "holds several values", "one value per field")
    try:
        return base.replace(**changes)
    except ScenarioError as error:
        raise ProgrammeError(where, f"{label}.{error.field}", error.value, error.problem, error.allowed,
                             error.allowed_zh) from None


@dataclass(frozen=True)
class Workstream:
    """One line of work: a scenario run once, or every ``every_months`` months for ``cycles`` cycles.

    stages: the training stages it pays for (a pre-training workstream: ``("pretrain",)``; a fine-tuning one:
        ``("sft", "preference", "evaluation")``; none for one that only serves, with ``serve_months``).
    start_month: the month its first cycle starts [1 = the programme's first month].
    reannotation_share: the share of each annotation batch bought again in cycles after the first [fraction].
    serve_months: each cycle's release is served for this many months, then retired [month]; 0: not served.
    traffic_growth_per_month: growth of the scenario's ``requests_per_day`` from the first release [fraction/month].
    legacy_traffic_share: the share of traffic that stays on older live versions [fraction].
    tags: attribution keys (``team``, ``project``, ``model_version``, ``environment``, ...); ``{cycle}`` in a value
        becomes the cycle's number (``"v{cycle}"`` -> ``v1``, ``v2``, ...).

    Hidden costs (None: the default of ``data/programme_defaults.csv``, with its source):
    cleaning_survive_share, cleaning_core_hours_per_tb: raw text cleaned per pre-training cycle is the corpus over
        the share that survives filtering and deduplication, at this CPU time per TB.
    debug_gpus, debug_sessions_per_month, debug_session_hours, debug_auto_release_hours: development environments
        held every month the workstream is active; ``debug_never_released``: held all month instead.
    data_in_other_region: the corpus is read across regions once per pre-training cycle.
    """

    name: str
    changes: dict = field(default_factory=dict)
    stages: tuple = TRAINING_STAGES
    start_month: int = 1
    every_months: int | None = None
    cycles: int = 1
    reannotation_share: float = 1.0
    serve_months: float = 0.0
    traffic_growth_per_month: float = 0.0
    legacy_traffic_share: float = 0.1
    tags: dict = field(default_factory=dict)
    cleaning_survive_share: float | None = None
    cleaning_core_hours_per_tb: float | None = None
    debug_gpus: float | None = None
    debug_sessions_per_month: float | None = None
    debug_session_hours: float | None = None
    debug_auto_release_hours: float | None = None
    debug_never_released: bool = False
    data_in_other_region: bool = False

    def hidden(self, name: str) -> float:
        """A hidden-cost setting: this workstream's, or the default of ``data/programme_defaults.csv``."""
        value = getattr(self, name)
        return hidden.defaults()[name] if value is None else value

    def scenario(self, base: Scenario) -> Scenario:
        return _scenario(f"workstream {self.name!r}", base, self.changes)

    def cycle_starts(self) -> list[float]:
        """Start of each cycle [months from the programme's start]."""
        every = self.every_months or 0
        return [self.start_month - 1 + k * every for k in range(self.cycles)]

    def tags_for(self, cycle: int) -> dict:
        return {k: v.replace("{cycle}", str(cycle)) for k, v in self.tags.items()}


@dataclass(frozen=True)
class Staff:
    """People paid every month from ``start_month`` to ``end_month`` (inclusive; empty: the horizon's end).
    ``redundancy_factor``: an engineering contingency on their cost, a line of its own (1: none); a single
    scenario's plan (:func:`of_scenario`) carries the scenario's, as its estimate puts it on every stage's staff."""

    name: str
    fte: float
    usd_per_month: float
    start_month: int = 1
    end_month: int | None = None
    tags: dict = field(default_factory=dict)
    redundancy_factor: float = 1.0


#: How served content is checked: a guard model on the programme's GPUs (``self_hosted``, sized by the serving
#: roofline, data/programme_defaults.csv guard_params), a paid safety API per text record (``api``), or ``none``.
CONTENT_SAFETY = ("self_hosted", "api", "none")
#: How a fleet is bought: it commits to a term, paid every month busy or idle.
FLEET_PRICING = ("reserved_1y", "reserved_3y", "monthly", "self_hosted")
#: The term each rented way of committing is priced for [months]; owned hardware's is its useful life.
FLEET_TERM_MONTHS = {"reserved_1y": 12, "reserved_3y": 36, "monthly": 1}


@dataclass(frozen=True)
class Fleet:
    """GPUs committed for a term: reserved for 1 or 3 years, rented by the month, or owned (``self_hosted``, depreciated straight-line
    over ``useful_life_years`` of the programme's base). Paid every month of the term, busy or idle. Workstreams
    whose GPU matches run their training on it first, month by month (what is bought their main way: pre-training,
    and post-training and experiments when bought the same way); what does not fit is bought as each workstream
    buys it. ``term_months`` empty: 12, 36, 1 (monthly), or the useful life. ``provider`` and ``region`` (empty: the base's) name
    where a reserved fleet is rented (data/prices.csv)."""

    name: str
    gpu: str
    count: int
    pricing: str = "reserved_1y"
    start_month: int = 1
    term_months: int | None = None
    tags: dict = field(default_factory=dict)
    provider: str | None = None
    region: str | None = None

    def term(self, useful_life_years: float) -> int:
        if self.term_months is not None:
            return self.term_months
        return FLEET_TERM_MONTHS.get(self.pricing) or int(round(useful_life_years * 12))


@dataclass(frozen=True)
class Programme:
    """Workstreams and staff over ``horizon_months``, with budgets per resource and alert lines."""

    name: str
    horizon_months: int
    workstreams: tuple
    base: dict = field(default_factory=dict)
    staff: tuple = ()
    budgets: dict = field(default_factory=dict)
    alert_percents: tuple = (30.0, 50.0, 80.0)
    security_usd_per_month: float | None = None  # None: data/programme_defaults.csv
    content_filtering: str = "self_hosted"  # self_hosted | api | none (true: api, false: none, as files had it)
    fleets: tuple = ()
    start: str | None = None  # the first calendar month, "YYYY-MM"; None: the month after the one it is read in

    def __post_init__(self):
        checked = _checked(self)
        for f in dataclass_fields(self):
            object.__setattr__(self, f.name, getattr(checked, f.name))

    @property
    def base_scenario(self) -> Scenario:
        return _scenario("programme", Scenario(), self.base, "base")

    def replace(self, **changes) -> Programme:
        return replace(self, **changes)

    def first_month(self, today: datetime.date | None = None) -> tuple[int, int]:
        """(year, month) of the programme's month 1: ``start``, or the month after ``today`` (default: now)."""
        if self.start is not None:
            year, month = map(int, self.start.split("-"))
            return year, month
        today = today or datetime.date.today()
        return (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)

    def month_label(self, month, today: datetime.date | None = None) -> str:
        """The calendar month ``YYYY-MM`` of programme month ``month`` (1 = the first)."""
        year, first = self.first_month(today)
        index = year * 12 + first - 1 + int(month) - 1
        return f"{index // 12:04d}-{index % 12 + 1:02d}"

    def month_labels(self, months=None, today: datetime.date | None = None) -> list[str]:
        """:meth:`month_label` of each of ``months`` (default: 1 to the horizon)."""
        months = range(1, self.horizon_months + 1) if months is None else months
        return [self.month_label(m, today) for m in months]

    # -- file form ------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "name": self.name, "horizon_months": self.horizon_months,
                "base": dict(self.base), "budgets": dict(self.budgets), "alert_percents": list(self.alert_percents),
                "security_usd_per_month": self.security_usd_per_month, "content_filtering": self.content_filtering,
                "staff": [{**_plain(s), "tags": dict(s.tags)} for s in self.staff],
                "workstreams": [{**_plain(w), "stages": list(w.stages), "changes": dict(w.changes), "tags": dict(w.tags)}
                                for w in self.workstreams],
                **({"fleets": [{**{k: v for k, v in _plain(f).items() if not (k in ("provider", "region") and v is None)},
                                "tags": dict(f.tags)} for f in self.fleets]} if self.fleets else {}),
                **({"start": self.start} if self.start is not None else {})}

    def to_json(self, indent: int | None = 2) -> str:
        # numpy numbers given through the Python API are plain numbers in the file
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False,
                          default=lambda o: o.item() if hasattr(o, "item") else str(o))

    @classmethod
    def from_dict(cls, data) -> Programme:
        if not isinstance(data, dict):
            raise ProgrammeError("programme", "file", data, "is not an object", "a JSON or TOML object (workbench plan --example)")
        data = dict(data)
        version = data.pop("schema_version", None)
        if version != SCHEMA_VERSION or isinstance(version, bool):
            raise ProgrammeError("programme", "schema_version", version, "is missing or not supported",
                                 f"{SCHEMA_VERSION}")
        known = {f.name for f in dataclass_fields(cls)}
        for key in data:
            if key not in known:
                raise ProgrammeError("programme", key, data[key], "is not a programme field" + _did_you_mean(key, known),
                                     ", ".join(sorted(known)))
        for key in ("name", "horizon_months", "workstreams"):
            if key not in data:
                raise ProgrammeError("programme", key, None, "is missing", "see workbench plan --example")
        workstreams = data["workstreams"]
        if not isinstance(workstreams, list):
            raise ProgrammeError("programme", "workstreams", workstreams, "is not a list", "a list of workstream objects")
        staff = data.get("staff", [])
        if not isinstance(staff, list):
            raise ProgrammeError("programme", "staff", staff, "is not a list", "a list of staff objects")
        data["workstreams"] = tuple(_build(Workstream, w, i, "workstream") for i, w in enumerate(workstreams))
        data["staff"] = tuple(_build(Staff, s, i, "staff") for i, s in enumerate(staff))
        fleets = data.get("fleets", [])
        if not isinstance(fleets, list):
            raise ProgrammeError("programme", "fleets", fleets, "is not a list", "a list of fleet objects")
        data["fleets"] = tuple(_build(Fleet, f, i, "fleet") for i, f in enumerate(fleets))
        if "alert_percents" in data and isinstance(data["alert_percents"], list):
            data["alert_percents"] = tuple(data["alert_percents"])
        return cls(**data)


def _did_you_mean(key, known) -> str:
    close = difflib.get_close_matches(str(key), sorted(known), n=2, cutoff=0.7)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _plain(item) -> dict:
    return {f.name: getattr(item, f.name) for f in dataclass_fields(item)}


def _build(kind, data, index, label):
    if not isinstance(data, dict):
        raise ProgrammeError(f"{label} {index + 1}", label, data, "is not an object", f"an object of {label} fields")
    name = data.get("name")
    where = f"{label} {name!r}" if isinstance(name, str) else f"{label} {index + 1}"
    known = {f.name for f in dataclass_fields(kind)}
    for key in data:
        if key not in known:
            raise ProgrammeError(where, key, data[key], f"is not a {label} field" + _did_you_mean(key, known),
                                 ", ".join(sorted(known)))
    if "name" not in data:
        raise ProgrammeError(where, "name", None, "is missing", "a name of 1 to 60 characters")
    if kind is Fleet:
        for key in ("gpu", "count"):
            if key not in data:
                raise ProgrammeError(where, key, None, "is missing", "a GPU of the catalog" if key == "gpu" else
                                     "a whole number of GPUs")
    if kind is Staff:
        for key in ("fte", "usd_per_month"):
            if key not in data:
                raise ProgrammeError(where, key, None, "is missing", "a number")
    data = dict(data)
    if "stages" in data and isinstance(data["stages"], list):
        data["stages"] = tuple(data["stages"])
    try:
        return kind(**data)
    except TypeError as error:  # a dataclass refusing a shape we did not foresee: still a message, not a crash
        raise ProgrammeError(where, label, data, f"cannot be read ({error})") from None


def _checked(p: Programme) -> Programme:
    where = "programme"
    name = _text(where, "name", p.name, 100)
    horizon = _number(where, "horizon_months", p.horizon_months, 1, MAX_MONTHS, whole=True)
    if not isinstance(p.base, dict):
        raise ProgrammeError(where, "base", p.base, "is not an object", "an object of scenario field: value")
    base = _scenario(where, Scenario(), {k: v for k, v in p.base.items()}, "base")
    if base.serving_months:  # each release is served by its workstream, for serve_months
        raise ProgrammeError(where, "base.serving_months", base.serving_months,
                             "is set; in a programme each release is served for serve_months",
                             "serving_months = 0 and serve_months on the workstream")
    workstreams = tuple(p.workstreams) if isinstance(p.workstreams, (list, tuple)) else p.workstreams
    if not isinstance(workstreams, tuple) or not 1 <= len(workstreams) <= MAX_WORKSTREAMS:
        raise ProgrammeError(where, "workstreams", p.workstreams, "is not a list of 1 or more workstreams",
                             f"1 to {MAX_WORKSTREAMS} workstreams")
    checked_ws, names = [], set()
    for i, w in enumerate(workstreams):
        if not isinstance(w, Workstream):
            raise ProgrammeError(f"workstream {i + 1}", "workstream", w, "is not a Workstream", "workbench.programmes.programme.Workstream(...)")
        w = _checked_workstream(w, horizon, p.base)
        if w.name in names:
            raise ProgrammeError(f"workstream {w.name!r}", "name", w.name, "is used twice", "a name of its own per workstream")
        if w.name == PROGRAMME_LINES:
            raise ProgrammeError(f"workstream {w.name!r}", "name", w.name, "names the programme's own lines (security)",
                                 "another name", "另一个名称")
        names.add(w.name)
        checked_ws.append(w)
    workstream_names = set(names)

    def named(item, kind):
        """Staff and fleets are attributed by name beside the workstreams: a name of their own."""
        if item.name in names and item.name not in workstream_names:
            raise ProgrammeError(f"{kind} {item.name!r}", "name", item.name, "is used twice", "a name of its own per entry")
        if item.name in names or item.name == PROGRAMME_LINES:
            raise ProgrammeError(f"{kind} {item.name!r}", "name", item.name, "is the name of a workstream (attribution "
                                 "by workstream would merge them)", "a name no workstream has", "与任何工作流都不同的名称")
        names.add(item.name)
        return item

    checked_staff = _entries(where, p.staff, Staff, "staff", MAX_STAFF,
                             lambda s: named(_checked_staff(s, horizon), "staff"))
    checked_fleets = _entries(where, p.fleets, Fleet, "fleets", MAX_FLEETS,
                              lambda f: named(_checked_fleet(f, horizon), "fleet"))
    life = max(1, int(round(base.useful_life_years * 12)))
    for f in checked_fleets:  # owned hardware is bought for whole useful lives (a purchase at the start of each)
        if f.pricing == "self_hosted" and f.term_months is not None and f.term_months % life:
            raise ProgrammeError(f"fleet {f.name!r}", "term_months", f.term_months,
                                 "is not a whole number of the hardware's useful lives",
                                 f"null, or {life}, {2 * life}, ... months (base.useful_life_years x 12 = {life})",
                                 f"null，或 {life}、{2 * life}……个月（base.useful_life_years × 12 = {life}）")
    if not isinstance(p.budgets, dict):
        raise ProgrammeError(where, "budgets", p.budgets, "is not an object", "an object of resource: USD")
    budgets = {}
    tag_values = {"workstream": {entry.name for entry in (*checked_ws, *checked_staff)}}
    for entry in checked_ws:
        for cycle in range(1, entry.cycles + 1):
            for k, v in entry.tags_for(cycle).items():
                tag_values.setdefault(k, set()).add(v)
    for entry in checked_staff:
        for k, v in entry.tags.items():
            tag_values.setdefault(k, set()).add(v)
    tag_keys = set(tag_values)
    rate = base.cny_per_usd
    for resource, usd in p.budgets.items():
        key = resource.split(":", 1)[0] if isinstance(resource, str) and ":" in resource else None
        if key is not None:  # a tag's budget: "team:post-training"
            value = resource.split(":", 1)[1].strip()
            if key not in tag_keys or not value:
                raise ProgrammeError(where, f"budgets.{resource}", usd, "is not a tag of this programme with a value",
                                     "tag:value with a tag of the workstreams or staff ("
                                     + ", ".join(sorted(tag_keys)) + "), e.g. team:post-training",
                                     "标签:取值，标签须为工作流或人员的标签（" + "、".join(sorted(tag_keys))
                                     + "），例如 team:post-training")
            if value not in tag_values[key]:
                close = difflib.get_close_matches(value, sorted(tag_values[key]), n=3)
                raise ProgrammeError(where, f"budgets.{resource}", usd, f"names no {key} of this programme",
                                     ", ".join(f"{key}:{v}" for v in (close or sorted(tag_values[key])[:10])))
            resource = f"{key}:{value}"
        elif resource not in BUDGET_RESOURCES:
            raise ProgrammeError(where, f"budgets.{resource}", usd, "is not a resource with a budget",
                                 ", ".join(BUDGET_RESOURCES) + ", or tag:value (e.g. team:post-training)")
        if resource in budgets:  # "team:x" and "team: x" are one budget
            raise ProgrammeError(where, f"budgets.{resource}", usd, "is given twice in the file", "each budget once")
        if isinstance(usd, str):  # money as people write it: "$3M", "1.5 million", "300万", "¥2,000万"
            try:
                usd = parse_money(usd, "USD", rate).usd
            except MoneyError as error:
                raise ProgrammeError(where, f"budgets.{resource}", usd, error.problem,
                                     f"an amount such as {HOW_TO_WRITE}", f"金额，例如 {HOW_TO_WRITE_ZH}") from None
        budgets[resource] = _number(where, f"budgets.{resource}", usd, 1, 1e13, allowed="1 to 1e13 USD")
    percents = p.alert_percents
    if not isinstance(percents, (list, tuple)) or not 1 <= len(percents) <= 10:
        raise ProgrammeError(where, "alert_percents", percents, "is not a list of 1 to 10 percentages", "e.g. [30, 50, 80]")
    percents = tuple(_number(where, "alert_percents", v, 1, 1000, allowed="percentages from 1 to 1000") for v in percents)
    if list(percents) != sorted(set(percents)):
        raise ProgrammeError(where, "alert_percents", list(percents), "is not in increasing order without repeats",
                             "e.g. [30, 50, 80]")
    live = sum(w.cycles * min(w.serve_months, horizon) for w in checked_ws)
    if live > MAX_VERSION_MONTHS:  # each (version, month) served is priced: bounded so that a plan stays computable
        raise ProgrammeError(where, "workstreams", f"{live:,.0f} version-months",
                             f"serve more than {MAX_VERSION_MONTHS:,} version-months (cycles x months each release is "
                             "served, over the workstreams)", "fewer cycles, or each release served fewer months",
                             f"轮数 × 每个版本在线月数（所有工作流合计）至多 {MAX_VERSION_MONTHS:,}")
    start = calendar_month(p.start)  # 2027年3月 and 2027.3 read as 2027-03
    if start is not None:
        if not (isinstance(start, str) and _START.fullmatch(start.strip())):
            raise ProgrammeError(where, "start", start, "is not a calendar month",
                                 "YYYY-MM from 2000-01 to 2099-12 (e.g. 2027-01), or null for next month",
                                 "YYYY-MM，2000-01 到 2099-12（如 2027-01），或 null 表示下个月")
        start = start.strip()
    security = _optional(where, "security_usd_per_month", p.security_usd_per_month)
    filtering = {True: "api", False: "none"}.get(p.content_filtering, p.content_filtering) \
        if isinstance(p.content_filtering, bool) else p.content_filtering
    if filtering not in CONTENT_SAFETY:
        raise ProgrammeError(where, "content_filtering", p.content_filtering, "is not a way of checking content",
                             ", ".join(CONTENT_SAFETY) + " (true: api, false: none)")
    out = object.__new__(Programme)
    for key, value in dict(name=name, horizon_months=horizon, workstreams=tuple(checked_ws), base=dict(p.base),
                           staff=tuple(checked_staff), budgets=budgets, alert_percents=percents,
                           security_usd_per_month=security, content_filtering=filtering,
                           fleets=checked_fleets, start=start).items():
        object.__setattr__(out, key, value)
    return out


def _entries(where, items, kind, label, limit, check) -> tuple:
    """A list of ``kind`` (staff, fleets), each checked."""
    items = tuple(items) if isinstance(items, (list, tuple)) else items
    if not isinstance(items, tuple) or len(items) > limit:
        raise ProgrammeError(where, label, items, f"is not a list of {label}", f"0 to {limit} entries")
    singular = "staff" if label == "staff" else label.rstrip("s")
    for i, item in enumerate(items):
        if not isinstance(item, kind):
            raise ProgrammeError(f"{singular} {i + 1}", singular, item, f"is not a {kind.__name__}",
                                 f"workbench.programmes.programme.{kind.__name__}(...)")
    return tuple(check(item) for item in items)


def _optional(where, name, value):
    """A hidden-cost setting: None (the default), or a number within the range data/programme_defaults.csv gives."""
    if value is None:
        return None
    low, high = hidden.ranges()[name]
    return _number(where, name, value, low, high, allowed=f"{low:g} to {high:g}, or null for the default "
                                                         f"({hidden.defaults()[name]:g})")


def _flag(where, name, value) -> bool:
    if not isinstance(value, bool):
        raise ProgrammeError(where, name, value, "is not true or false", "true or false")
    return value


def _checked_workstream(w: Workstream, horizon: int, base_changes: dict) -> Workstream:
    where = f"workstream {w.name!r}" if isinstance(w.name, str) else "workstream"
    name = _text(where, "name", w.name, 60)
    where = f"workstream {name!r}"
    stages = w.stages
    if isinstance(stages, str) or not isinstance(stages, (list, tuple)):
        raise ProgrammeError(where, "stages", stages, "is not a list of stages",
                             ", ".join(TRAINING_STAGES) + " (none for a workstream that only serves)")
    for stage in stages:
        if stage not in TRAINING_STAGES:
            raise ProgrammeError(where, "stages", stage, "is not a training stage", ", ".join(TRAINING_STAGES))
    if len(set(stages)) != len(stages):
        raise ProgrammeError(where, "stages", list(stages), "names a stage twice", "each stage once")
    stages = tuple(s for s in TRAINING_STAGES if s in stages)
    start = _number(where, "start_month", w.start_month, 1, horizon, whole=True,
                    allowed=f"a month from 1 to the horizon ({horizon})")
    cycles = _number(where, "cycles", w.cycles, 1, MAX_MONTHS, whole=True)
    every = None
    if w.every_months is not None:
        every = _number(where, "every_months", w.every_months, 1, MAX_MONTHS, whole=True,
                        allowed=f"a whole number of months from 1 to {MAX_MONTHS}, or null for once")
    if cycles > 1 and every is None:
        raise ProgrammeError(where, "cycles", cycles, "needs every_months (how often a cycle starts)",
                             "every_months from 1 to 120, or cycles = 1")
    share = _number(where, "reannotation_share", w.reannotation_share, 0, 1)
    serve = _number(where, "serve_months", w.serve_months, 0, MAX_MONTHS, allowed=f"0 to {MAX_MONTHS} months")
    growth = _number(where, "traffic_growth_per_month", w.traffic_growth_per_month, -0.5, 1.0,
                     allowed="-0.5 to 1.0 (a fraction per month: 0.1 = 10 % a month)")
    legacy = _number(where, "legacy_traffic_share", w.legacy_traffic_share, 0, 0.9)
    tags = _tags(where, w.tags)
    hidden_settings = {name: _optional(where, name, getattr(w, name))
                       for name in ("cleaning_survive_share", "cleaning_core_hours_per_tb", "debug_gpus",
                                    "debug_sessions_per_month", "debug_session_hours", "debug_auto_release_hours")}
    checked = Workstream(name=name, changes=dict(w.changes) if isinstance(w.changes, dict) else w.changes,
                         stages=stages, start_month=start, every_months=every, cycles=cycles,
                         reannotation_share=share, serve_months=serve, traffic_growth_per_month=growth,
                         legacy_traffic_share=legacy, tags=tags, **hidden_settings,
                         debug_never_released=_flag(where, "debug_never_released", w.debug_never_released),
                         data_in_other_region=_flag(where, "data_in_other_region", w.data_in_other_region))
    base = _scenario("programme", Scenario(), base_changes, "base")
    scenario = checked.scenario(base)
    kind = scenario.plan_kind
    if not stages and not serve:
        raise ProgrammeError(where, "stages", [], "is empty and serve_months is 0: the workstream does nothing",
                             ", ".join(TRAINING_STAGES) + " (one or more), or serve_months above 0")
    if "pretrain" in stages and kind != "pretrain":
        raise ProgrammeError(where, "stages", list(stages), f"pre-trains a model whose plan_kind is {kind}",
                             "stages without pretrain, or plan_kind = pretrain",
                             "去掉 pretrain 阶段，或将 plan_kind 设为 pretrain")
    if stages and kind == "serve_only":
        raise ProgrammeError(where, "stages", list(stages), "trains a model whose plan_kind is serve_only",
                             "no stages (the workstream serves the open model), or plan_kind = open_weights",
                             "不设训练阶段（只上线开源模型），或将 plan_kind 设为 open_weights")
    if scenario.serving_months:
        raise ProgrammeError(where, "changes.serving_months", scenario.serving_months,
                             "is set; in a programme each release is served for serve_months",
                             "serving_months = 0 and serve_months on the workstream")
    if serve and not scenario.requests_per_day:
        raise ProgrammeError(where, "changes.requests_per_day", scenario.requests_per_day,
                             "is 0 while serve_months is set", "the traffic at the first release, in requests per day")
    if serve and growth > 0:  # the traffic of the last month served must stay a traffic the engine can price
        limit, months = fields()["requests_per_day"].max, max(1, horizon - start + 1)
        if scenario.requests_per_day * (1 + growth) ** months > limit:
            most = (limit / scenario.requests_per_day) ** (1 / months) - 1
            error = ProgrammeError(where, "traffic_growth_per_month", growth,
                                 f"takes {scenario.requests_per_day:,.0f} requests a day past {limit:.0e} within the "
                                 f"{months} months from its start to the horizon",
                                 f"-0.5 to {math.floor(most * 1000) / 1000:g} for this traffic and horizon",
                                 f"此流量与规划期下为 -0.5 到 {math.floor(most * 1000) / 1000:g}")
            error.highest = most  # for a message in other units (the app's growth in % a month)
            raise error
    return checked


def _checked_fleet(f: Fleet, horizon: int) -> Fleet:
    where = f"fleet {f.name!r}" if isinstance(f.name, str) else "fleet"
    name = _text(where, "name", f.name, 60)
    where = f"fleet {name!r}"
    from ..reference.catalog import UnknownGpuError, resolve_gpu
    try:
        gpu = resolve_gpu(str(f.gpu)) if isinstance(f.gpu, str) else None
    except UnknownGpuError as error:
        raise ProgrammeError(where, "gpu", f.gpu, str(error), "a GPU of the catalog (workbench gpus)") from None
    if gpu is None:
        raise ProgrammeError(where, "gpu", f.gpu, "is not text", "a GPU of the catalog (workbench gpus)")
    count = _number(where, "count", f.count, 1, 1_000_000, whole=True)
    if f.pricing not in FLEET_PRICING:
        raise ProgrammeError(where, "pricing", f.pricing, "is not a way of committing to GPUs", ", ".join(FLEET_PRICING))
    start = _number(where, "start_month", f.start_month, 1, horizon, whole=True,
                    allowed=f"a month from 1 to the horizon ({horizon})")
    shortest = FLEET_TERM_MONTHS.get(f.pricing, 1)  # a reservation's price needs its term
    term = None if f.term_months is None else _number(
        where, "term_months", f.term_months, shortest, 180, whole=True,
        allowed=f"{shortest} to 180 months for {f.pricing} (its price is for its whole term), or null")
    where_bought = {}
    for key in ("provider", "region"):
        value = getattr(f, key)
        if value is None or value == "":
            continue
        try:
            where_bought[key] = check_field(key, value)
        except ScenarioError as error:
            raise ProgrammeError(where, key, value, error.problem, error.allowed,
                                 error.allowed_zh) from None
    return Fleet(name=name, gpu=gpu, count=count, pricing=f.pricing, start_month=start, term_months=term,
                 tags=_tags(where, f.tags), **where_bought)


def _checked_staff(s: Staff, horizon: int) -> Staff:
    where = f"staff {s.name!r}" if isinstance(s.name, str) else "staff"
    name = _text(where, "name", s.name, 60)
    where = f"staff {name!r}"
    fte = _number(where, "fte", s.fte, 0, 100000)
    usd = _number(where, "usd_per_month", s.usd_per_month, 0, 1e6, allowed="0 to 1e6 USD per FTE-month")
    start = _number(where, "start_month", s.start_month, 1, horizon, whole=True,
                    allowed=f"a month from 1 to the horizon ({horizon})")
    end = horizon if s.end_month is None else _number(where, "end_month", s.end_month, start, horizon, whole=True,
                                                        allowed=f"a month from start_month ({start}) to {horizon}")
    redundancy = _number(where, "redundancy_factor", s.redundancy_factor, 1, 3)
    return Staff(name=name, fte=fte, usd_per_month=usd, start_month=start,
                 end_month=None if s.end_month is None else end, tags=_tags(where, s.tags),
                 redundancy_factor=redundancy)


def loads(text: str | bytes, fmt: str = "json") -> Programme:
    """A programme from the text of a file (``fmt``: ``json`` or ``toml``)."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise ProgrammeError("programme", "file", bytes(text[:40]), f"is not UTF-8 text (byte {error.start})",
                                 "a JSON or TOML file saved as UTF-8") from None
    if len(text) > MAX_JSON_CHARS:
        raise ProgrammeError("programme", "file", text, f"is {len(text):,} characters long",
                             f"at most {MAX_JSON_CHARS:,} characters")
    try:
        data = tomllib.loads(text) if fmt == "toml" else json.loads(text, object_pairs_hook=_no_duplicates)
        _refuse_repeats(data)
    except RecursionError:
        raise ProgrammeError("programme", "file", text, "is nested too deeply", "a programme file") from None
    except ProgrammeError:
        raise
    except ValueError as error:  # json.JSONDecodeError and tomllib.TOMLDecodeError
        raise ProgrammeError("programme", "file", text, f"is not valid {fmt.upper()} ({error})",
                             "a programme file (workbench plan --example)") from None
    return Programme.from_dict(data)


def load(path: str | Path) -> Programme:
    """A programme from a ``.json`` or ``.toml`` file."""
    path = Path(path)
    try:
        with path.open("rb") as file:  # no further than a programme can be: /dev/zero is not read to the end
            raw = file.read(MAX_JSON_CHARS * 4 + 4)
    except OSError as error:
        raise ProgrammeError("programme", "file", str(path), f"cannot be read ({error.strerror or error})",
                             "a readable .json or .toml file") from None
    return loads(raw, "toml" if path.suffix.lower() == ".toml" else "json")


class _Keys(dict):
    """A JSON object that remembers the first key it was given twice (JSON's parser knows no path to name)."""

    repeated: tuple | None = None


def _no_duplicates(pairs):
    seen = _Keys()
    for key, value in pairs:
        if key in seen and seen.repeated is None:
            seen.repeated = (key, value)
        seen[key] = value
    return seen


def _refuse_repeats(value, where: str = "programme", prefix: str = "") -> None:
    """A key given twice anywhere in the file, named where it stands (``workstream 'ft' · changes.params``)."""
    if isinstance(value, _Keys) and value.repeated is not None:
        key, repeated = value.repeated
        raise ProgrammeError(where, f"{prefix}{key}", repeated, "is given twice in the same object", "each key once")
    if isinstance(value, dict):
        for key, item in value.items():
            if where == "programme" and not prefix and key in ("workstreams", "staff") and isinstance(item, list):
                label = "workstream" if key == "workstreams" else "staff"
                for i, entry in enumerate(item):
                    name = entry.get("name") if isinstance(entry, dict) else None
                    _refuse_repeats(entry, f"{label} {name!r}" if isinstance(name, str) else f"{label} {i + 1}")
            else:
                _refuse_repeats(item, where, f"{prefix}{key}.")
    elif isinstance(value, list):
        for item in value:
            _refuse_repeats(item, where, prefix)


def example() -> Programme:
    """A 7B assistant over 12 months: one pre-training run, monthly fine-tunes, each release served 3 months
    (the preset ``assistant-7b``, ``data/programmes/assistant-7b.json``)."""
    from ..reference.data import data_dir
    return load(data_dir() / "programmes" / "assistant-7b.json")


def of_scenario(scenario: Scenario, name: str = "scenario") -> Programme:
    """One scenario as a programme: a single workstream running its training stages once (then serving for the
    scenario's ``serving_months``), its staff's FTE-months (``staff_months``, or the run's; the serving team's over
    the serving months) spread over whole months with the scenario's redundancy on them, over the months the run, the storage retention, the serving and the
    staff take (at most :data:`MAX_MONTHS`). This is the scenario's planned burn month by month, for a review of
    the bill against a single run (:func:`workbench.bill.review.compare`): its total plus what falls after the horizon
    (storage tails) is the estimate's total. A programme's own additions are left out: no debug environments,
    security line or content filtering (a scenario prices none); the data cleaning of the corpus stays, as it does
    for any pre-training workstream."""
    from ..plan.contingency import weights
    from ..plan.estimate import estimate
    if not isinstance(scenario, Scenario) or scenario.batch_size is not None:
        raise ProgrammeError("programme", "scenario", scenario, "is not a single Scenario", "workbench.Scenario(...)")
    result = estimate(scenario)
    # on a committed cluster the experiments hold it before the run (timeline), so the plan's months hold them too
    days = float(result.details["training_days_total"]) + float(result.details["cluster_experiment_days"])
    run_months = max(1, math.ceil(days / (365.25 / 12)))
    staff_months = float(result.details["staff_months"])  # the scenario's, or the training's months when empty
    after = max(float(scenario.retention_months), float(scenario.serving_months))
    # long enough to hold the whole estimate: the run and what follows it, and the staff however long they stay
    horizon = int(min(MAX_MONTHS, max(run_months + math.ceil(after), math.ceil(staff_months))))
    staff = ()
    if scenario.staff_fte > 0 and staff_months > 0 and scenario.plan_kind != "serve_only":  # a plan that serves only pays no project team
        # the estimate's FTE-months over whole months: a fraction of a month is paid as that share of the team
        months = int(min(horizon, max(1, math.ceil(staff_months))))
        staff = (Staff(name="team", fte=float(scenario.staff_fte) * float(staff_months) / months,
                       usd_per_month=float(scenario.staff_usd_per_month), end_month=months,
                       redundancy_factor=1.0 + (float(scenario.redundancy_factor) - 1.0) * weights()["staff"]),)
    serving_months = float(scenario.serving_months)
    # the serving team from the release (the run's end, after the experiments a committed cluster runs first) for
    # the serving months, over whole months as the team; none when the release falls past the longest horizon
    first = int(math.floor(days / (365.25 / 12))) + 1
    if scenario.serving_staff_fte > 0 and serving_months > 0 and first <= horizon:
        months = int(min(horizon - first + 1, max(1, math.ceil(serving_months))))
        staff += (Staff(name="serving team", fte=float(scenario.serving_staff_fte) * serving_months / months,
                        usd_per_month=float(scenario.staff_usd_per_month), start_month=first,
                        end_month=first + months - 1,
                        redundancy_factor=1.0 + (float(scenario.redundancy_factor) - 1.0) * weights()["staff"]),)
    stages = {"pretrain": TRAINING_STAGES, "open_weights": TRAINING_STAGES[1:], "serve_only": ()}[scenario.plan_kind]
    workstream = Workstream(name=name, stages=stages, serve_months=float(scenario.serving_months), debug_gpus=0.0)
    base = {k: v for k, v in scenario.changes().items() if k != "serving_months"}  # served by the workstream
    plan = Programme(name=name, horizon_months=horizon, workstreams=(workstream,), base=base,
                     staff=staff, security_usd_per_month=0.0, content_filtering="none")
    SINGLE_SCENARIO_PLANS[id(plan)] = plan
    return plan


#: The programmes :func:`of_scenario` made, by ``id``: each should hold its whole estimate, and a review says when
#: it cannot (:func:`is_single_scenario_plan`).
SINGLE_SCENARIO_PLANS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def is_single_scenario_plan(plan: Programme) -> bool:
    return SINGLE_SCENARIO_PLANS.get(id(plan)) is plan
