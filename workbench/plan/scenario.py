"""The planning scenario: every input of an estimate, validated, with lossless JSON and URL forms.

The fields, their types, units, allowed ranges, defaults, help texts and the sources of the defaults are
one table, ``data/scenario_fields.csv``; the CLI options, the URL parameters and the app's controls are
all made from it. ``Scenario()`` is the embedded default (a 7B model on 2T tokens on H100s).

Numeric fields also take arrays (or a frame of scenarios via :meth:`Scenario.from_frame`): the scenario
then stands for a batch, and :func:`workbench.estimate` evaluates it in one numpy pass.
"""
from __future__ import annotations

import json
import math
from urllib.parse import parse_qsl, urlencode

import numpy as np
import pandas as pd


#: Bumped whenever a field is renamed, removed or changes meaning; stored in JSON (``schema_version``)
#: and URLs (``v``). Older versions are read as long as their fields still exist.
SCHEMA_VERSION = 1
#: Longest scenario JSON read (a batch of 100,000 scenarios fits; a runaway file does not).
MAX_JSON_CHARS = 64_000_000

from .scenario_fields import (COMMA_HINT, EXCERPT_CHARS, Field, ScenarioError, _check, _check_numeric_array, _unknown_field, check_field, close_fields, excerpt, fields, fields_or_none, parse_quantity)  # noqa: F401 (re-exported)
from .money import HOW_TO_WRITE, HOW_TO_WRITE_ZH, MoneyError, parse_money
from .scenario_rules import _check_combination, bounded_by_shape, model_shape, no_bandwidth_error  # noqa: F401


def _money_in_usd(spec, values: dict) -> dict:
    """Money fields (unit USD...) typed as people write money (``$3M``, ``3 million``, ``300万``, ``¥2,000万``) read
    as USD; an amount in renminbi at the scenario's own ``cny_per_usd`` (its default when that is not a number)."""
    typed = [name for name, v in values.items()
             if isinstance(v, str) and name in spec and str(spec[name].unit).startswith("USD")]
    if not typed:
        return values
    rate = values.get("cny_per_usd", spec["cny_per_usd"].default)
    try:
        rate = np.asarray(rate, dtype=float)  # a batch: each scenario's own rate
    except (TypeError, ValueError):
        rate = np.asarray(spec["cny_per_usd"].default, dtype=float)
    if not (rate.ndim <= 1 and rate.size and np.all(np.isfinite(rate)) and np.all(rate > 0)):
        rate = np.asarray(spec["cny_per_usd"].default, dtype=float)  # refused as its own field, by name
    out = dict(values)
    for name in typed:
        try:
            money = parse_money(values[name], "USD", 1.0)
            out[name] = money.amount / (rate if rate.ndim else float(rate)) if money.currency == "CNY" else money.usd
        except MoneyError as error:
            raise ScenarioError(name, values[name], error.problem, f"an amount such as {HOW_TO_WRITE}",
                                f"金额，例如 {HOW_TO_WRITE_ZH}") from None
    return out


class Scenario:
    """Validated inputs of one planning scenario (or of a batch, when fields hold arrays).

    Keyword arguments are the fields of ``data/scenario_fields.csv`` (``help(workbench.Scenario)`` and
    ``workbench.plan.scenario.describe()`` list them with units and ranges). Any bad value raises
    :class:`ScenarioError`, a ``ValueError`` naming the field, the value and the allowed range.
    Instances are immutable; use :meth:`replace` for a changed copy.
    """

    __slots__ = ("_values",)

    def __init__(self, **values):
        spec = fields()
        for name in values:
            if name not in spec:
                raise _unknown_field(name, values[name])
        values = _money_in_usd(spec, values)
        checked = {name: _check(f, values.get(name, f.default)) for name, f in spec.items()}
        _check_combination(checked)
        object.__setattr__(self, "_values", checked)

    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "_values")[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        raise AttributeError("Scenario is immutable; use scenario.replace(...)")

    def __dir__(self):
        return [*super().__dir__(), *fields()]

    def __eq__(self, other):
        if not isinstance(other, Scenario):
            return NotImplemented
        return self.to_json() == other.to_json()

    def __reduce__(self):
        return (_restore, (self.to_dict(),))

    def __hash__(self):
        return hash(self.to_json())

    def __repr__(self):
        changed = ", ".join(f"{k}={v!r}" for k, v in self.changes().items())
        return f"Scenario({changed})"

    @property
    def batch_size(self) -> int | None:
        """Number of scenarios in a batch; None for a single scenario."""
        sizes = {np.size(v) for v in self._values.values() if isinstance(v, np.ndarray)}
        return max(sizes) if sizes else None

    def to_dict(self) -> dict:
        """Every field's value (arrays as lists)."""
        return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in self._values.items()}

    def changes(self) -> dict:
        """The fields that differ from the defaults."""
        spec = fields()
        return {k: v for k, v in self.to_dict().items() if v != spec[k].default}

    def replace(self, **changes) -> Scenario:
        """A copy with some fields changed (validated like the constructor)."""
        return Scenario(**{**self._values, **changes})

    def resized(self, **changes) -> Scenario:
        """Like :meth:`replace`, for a change of model size: pipeline stages and KV heads that the new size
        cannot have are brought down to its layers and heads (:func:`bounded_by_shape`)."""
        return Scenario(**{**self._values, **bounded_by_shape(self._values, changes)})

    # -- JSON -----------------------------------------------------------------------------------------
    def to_json(self, **dumps_kwargs) -> str:
        """All fields plus ``schema_version``, as JSON; :meth:`from_json` restores an equal scenario."""
        return json.dumps({"schema_version": SCHEMA_VERSION, **self.to_dict()}, **dumps_kwargs)

    @classmethod
    def from_dict(cls, data: dict, single: bool = False) -> Scenario:
        """A scenario from :meth:`to_dict` output (plus an optional ``schema_version``).

        ``single``: refuse batches (a list as a field's value), as a form or an app showing one scenario must.
        """
        if not isinstance(data, dict):
            raise ScenarioError("scenario", data, "is not a JSON object", "an object of field: value")
        data = dict(data)
        version = data.pop("schema_version", SCHEMA_VERSION)
        _check_version(version)
        if single:
            for name, value in data.items():
                if isinstance(value, (list, tuple, dict, np.ndarray)):
                    raise ScenarioError(name, value, "holds several values; this loads one scenario",
                                        "one value per field (a batch is for the Python API)",
                                        "每个字段一个取值（批量方案请用 Python 接口）")
        return cls(**data)

    @classmethod
    def from_json(cls, text: str | bytes, single: bool = False) -> Scenario:
        """A scenario from :meth:`to_json` text (``single``: refuse batches, see :meth:`from_dict`)."""
        if isinstance(text, (bytes, bytearray)):
            try:
                text = bytes(text).decode("utf-8-sig")
            except UnicodeDecodeError as error:
                raise ScenarioError("scenario", bytes(text[:40]), f"is not UTF-8 text (byte {error.start})",
                                    "a JSON object saved as UTF-8") from None
        if not isinstance(text, str):
            raise ScenarioError("scenario", text, "is not text", "a JSON object")
        if len(text) > MAX_JSON_CHARS:
            raise ScenarioError("scenario", text, f"is {len(text):,} characters long",
                                f"a JSON object of at most {MAX_JSON_CHARS:,} characters")
        try:
            data = json.loads(text, object_pairs_hook=_refuse_duplicate_keys)
        except RecursionError:
            raise ScenarioError("scenario", text, "is nested too deeply", "a JSON object of field: value") from None
        except ScenarioError:
            raise
        except ValueError as error:
            raise ScenarioError("scenario", text, f"is not valid JSON ({error})", "a JSON object") from None
        return cls.from_dict(data, single=single)

    # -- URL query strings ----------------------------------------------------------------------------
    def to_query(self) -> str:
        """``v=1&params=70B&...``: the schema version and the fields that differ from the defaults, each in
        the shortest form that parses back to exactly the same value."""
        if self.batch_size is not None:
            raise ScenarioError("scenario", "batch", "a batch of scenarios has no URL form", "a single scenario")
        items = [("v", str(SCHEMA_VERSION))]
        items += [(k, _compact(v) if isinstance(v, float) else str(v)) for k, v in self.changes().items()]
        return urlencode(items)

    @classmethod
    def from_query(cls, query: str, ignore=()) -> Scenario:
        """A scenario from a URL query string (a leading ``?`` is allowed); keys in ``ignore`` are skipped.

        Values may use quantity suffixes (``params=70B``). An unknown key or a key given twice is an error.
        """
        values, errors = query_fields(query, ignore)
        if errors:
            raise errors[0]
        return cls(**values)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> Scenario:
        """A batch scenario from a DataFrame with one row per scenario and columns named as fields."""
        for column in frame.columns:
            if column not in fields():
                raise _unknown_field(str(column))
        return cls(**{column: frame[column].to_numpy() for column in frame.columns})


def query_fields(query: str, ignore=()) -> tuple[dict[str, object], list[ScenarioError]]:
    """(validated values of the fields that are valid on their own, errors) of a URL query string.

    The one reading of a query for :meth:`Scenario.from_query` (which raises the first error) and the app
    (which reports every error and keeps the rest): unknown keys, a key given twice (neither value is used),
    a bad ``v`` and each bad value are errors. Keys in ``ignore``, or starting with ``voila``, are skipped.
    """
    values: dict[str, object] = {}
    errors: list[ScenarioError] = []
    seen: set[str] = set()
    spec = fields()
    for key, value in parse_qsl(str(query or "").lstrip("?"), keep_blank_values=True):
        if key in ignore or key.startswith("voila"):
            continue
        if key in seen:
            values.pop(key, None)
            errors.append(ScenarioError(key, value, "is given twice in the URL", "one value per field",
                                        "每个字段只给一次"))
            continue
        seen.add(key)
        try:
            if key == "v":
                _check_version(value)
            elif key not in spec:
                raise _unknown_field(key, value, extra=ignore)
            else:
                values[key] = _check(spec[key], value)
        except ScenarioError as error:
            errors.append(error)
    return values, errors


def _refuse_duplicate_keys(pairs):
    """A JSON object as a dict; a key given twice is refused, as in a URL (the last would win silently)."""
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ScenarioError(key, value, "is given twice in the file", "one value per field", "每个字段只给一次")
        seen[key] = value
    return seen


def _compact(x: float) -> str:
    """The shortest text that parses back to exactly ``x``: '70B' for 7e10, '1.5T', else repr (lossless)."""
    for size, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= size:
            text = repr(x / size).removesuffix(".0") + suffix
            if parse_quantity(text) == x:
                return text
            break
    text = repr(x).removesuffix(".0")
    return text if float(text) == x else repr(x)


def _restore(values: dict) -> Scenario:
    return Scenario(**values)


def _check_version(version):
    try:
        number = int(version)
    except (TypeError, ValueError, OverflowError):
        number = None
    versions = (f"{SCHEMA_VERSION} (the only version so far)", f"{SCHEMA_VERSION}（目前唯一的版本）") if SCHEMA_VERSION == 1 \
        else (f"1 to {SCHEMA_VERSION}", f"1 到 {SCHEMA_VERSION}")
    if number is None or isinstance(version, bool) or str(version).strip() != str(number):
        raise ScenarioError("schema_version", version, "is not a whole number", *versions)
    if not 1 <= number <= SCHEMA_VERSION:
        raise ScenarioError("schema_version", version, "is not supported by this version of the workbench", *versions)


def describe() -> pd.DataFrame:
    """The fields as a table: type, unit, default, range, help and source of the default."""
    return pd.DataFrame([{"field": f.name, "type": f.type, "unit": f.unit, "default": f.default,
                          "allowed": f.allowed(), "help": f.help, "source": f.source} for f in fields().values()])
