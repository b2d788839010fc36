"""The planning scenario: every input of an estimate, validated, with lossless JSON and URL forms.

The fields, their types, units, allowed ranges, defaults, help texts and the sources of the defaults are
one table, ``data/scenario_fields.csv``; the CLI options, the URL parameters and the app's controls are
all made from it. ``Scenario()`` is the embedded default (a 7B model on 2T tokens on H100s).

Numeric fields also take arrays (or a frame of scenarios via :meth:`Scenario.from_frame`): the scenario
then stands for a batch, and :func:`workbench.estimate` evaluates it in one numpy pass.
"""
from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode

import numpy as np
import pandas as pd

from . import catalog, ownership, prices
from .data import read_table

#: Bumped whenever a field is renamed, removed or changes meaning; stored in JSON (``schema_version``)
#: and URLs (``v``). Older versions are read as long as their fields still exist.
SCHEMA_VERSION = 1


class ScenarioError(ValueError):
    """A scenario input is invalid. ``field``, ``value`` and ``allowed`` say which, what and what is allowed."""

    def __init__(self, field: str, value, problem: str, allowed: str = ""):
        self.field, self.value, self.allowed = field, value, allowed
        message = f"{field}={value!r}: {problem}"
        super().__init__(f"{message}; allowed: {allowed}" if allowed else message)


@dataclass(frozen=True)
class Field:
    """One scenario input, as described in ``data/scenario_fields.csv``."""

    name: str
    type: str  # float | int | choice | gpu | provider
    choices: tuple[str, ...]
    unit: str
    default: object
    min: float
    max: float
    scale: str  # log | linear | ""
    group: str
    label: str
    help: str
    label_zh: str
    help_zh: str
    source: str

    @property
    def numeric(self) -> bool:
        return self.type in ("float", "int")

    @property
    def nullable(self) -> bool:
        return self.default is None

    def allowed(self) -> str:
        """The allowed values, for messages."""
        if self.numeric:
            unit = f" [{self.unit}]" if self.unit else ""
            kind = "a whole number" if self.type == "int" else "a number"
            empty = ", or empty for the default" if self.nullable else ""
            return f"{kind} from {self.min:g} to {self.max:g}{unit}{empty}"
        if self.type == "gpu":
            return "a GPU id or alias from `workbench gpus`"
        if self.type == "provider":
            return ", ".join(prices.providers())
        if self.type == "text":
            return f"text of up to {self.max:g} printable characters"
        if self.type == "percents":
            return "1 to 10 comma-separated percentages above 0, at most 100"
        return ", ".join(self.choices)


@lru_cache(maxsize=None)
def fields() -> dict[str, Field]:
    """The scenario fields in table order."""
    table = read_table("scenario_fields.csv", numeric=("min", "max"),
                       required=("field", "type", "group", "label", "help", "label_zh", "help_zh"), key="field")
    out = {}
    for row in table.to_dict("records"):
        default = row["default"].strip() or (None if row["type"] != "text" else "")
        if default is not None and row["type"] in ("float", "int"):
            default = float(default) if row["type"] == "float" else int(float(default))
        out[row["field"]] = Field(row["field"], row["type"], tuple(filter(None, row["choices"].split("|"))),
                                  row["unit"], default, row["min"], row["max"], row["scale"], row["group"],
                                  row["label"], row["help"], row["label_zh"], row["help_zh"], row["source"])
    return out


_SUFFIXES = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*([kmbgtp]?)\s*$", re.IGNORECASE)


def parse_quantity(text: str) -> float:
    """``'70B'`` -> 7e10, ``'2T'`` -> 2e12, ``'7e9'``, ``'4k'`` -> 4000 (k, M, B/G, T, P; any case)."""
    match = _QUANTITY.match(str(text).replace("_", "").replace(",", ""))
    if not match:
        raise ValueError(f"{text!r} is not a number")
    return float(match.group(1)) * _SUFFIXES[match.group(2).lower()]


def _check_number(f: Field, value, label: str):
    if isinstance(value, (bool, np.bool_)):
        raise ScenarioError(label, value, "is not a number", f.allowed())
    if isinstance(value, str):
        try:
            value = parse_quantity(value)
        except ValueError:
            raise ScenarioError(label, value, "is not a number", f.allowed()) from None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ScenarioError(label, value, "is not a number", f.allowed()) from None
    if not math.isfinite(number):
        raise ScenarioError(label, value, "is not a finite number", f.allowed())
    if f.type == "int" and number != round(number):
        raise ScenarioError(label, value, "is not a whole number", f.allowed())
    if not f.min <= number <= f.max:
        raise ScenarioError(label, value, "is out of range", f.allowed())
    return int(round(number)) if f.type == "int" else number


def _check_text(f: Field, value, label: str) -> str:
    if not isinstance(value, (str, np.str_)):
        raise ScenarioError(label, value, "is not text", f.allowed())
    if f.type == "text":
        text = str(value).strip()
        if len(text) > f.max:
            raise ScenarioError(label, value, f"is {len(text)} characters long", f.allowed())
        if not text.isprintable():
            raise ScenarioError(label, value, "contains control characters", f.allowed())
        return text
    if f.type == "gpu":
        try:
            return catalog.resolve_gpu(value)
        except catalog.UnknownGpuError as error:
            raise ScenarioError(label, value, str(error), f.allowed()) from None
    options = prices.providers() if f.type == "provider" else f.choices
    normal = str(value).strip().lower()
    if normal not in options:
        raise ScenarioError(label, value, "is not one of the allowed values", f.allowed())
    return normal


def _check_percents(f: Field, value, label: str) -> str:
    """A comma-separated list of percentages in (0, 100], normalised to ascending order."""
    if not isinstance(value, (str, np.str_)):
        raise ScenarioError(label, value, "is not text", "comma-separated percentages from 0 to 100")
    try:
        levels = sorted({float(part) for part in str(value).split(",") if part.strip()})
    except ValueError:
        raise ScenarioError(label, value, "is not a list of numbers", "comma-separated percentages from 0 to 100") from None
    if not levels or len(levels) > 10 or not all(0 < x <= 100 for x in levels):
        raise ScenarioError(label, value, "is out of range", "1 to 10 comma-separated percentages above 0, at most 100")
    return ",".join(f"{x:g}" for x in levels)


def _check(f: Field, value):
    """The validated (and normalised) value of field ``f``: a scalar, None or a numpy array."""
    if value is None or (isinstance(value, str) and value.strip() == "" and f.nullable):
        if f.nullable:
            return None
        raise ScenarioError(f.name, value, "is required", f.allowed())
    check = _check_number if f.numeric else _check_percents if f.type == "percents" else _check_text
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        array = np.asarray(value, dtype=object)
        if array.ndim != 1 or array.size == 0:
            raise ScenarioError(f.name, value, "must be a scalar or a non-empty 1-d array", f.allowed())
        fast = _check_numeric_array(f, array) if f.numeric else None
        if fast is not None:
            return fast
        # element by element: finds and names the first bad element; text values are checked once each
        unique = {}
        for i, v in enumerate(array):
            key = (type(v), v) if not isinstance(v, float) or v == v else (float, "nan")
            if key not in unique:
                unique[key] = check(f, v, f"{f.name}[{i}]")
        checked = [unique[(type(v), v) if not isinstance(v, float) or v == v else (float, "nan")] for v in array]
        return np.asarray(checked, dtype=float if f.numeric else object)
    return check(f, value, f.name)


def _check_numeric_array(f: Field, array: np.ndarray):
    """A whole numeric array checked at once (a batch of 100,000 scenarios); None if any element is not
    a plain finite number in range, so that the element-by-element path can name it."""
    if any(isinstance(v, (bool, np.bool_, str)) for v in array[:1]) or array.dtype == bool:
        return None
    try:
        numbers = array.astype(float)
    except (TypeError, ValueError):
        return None
    if not np.isfinite(numbers).all() or (numbers < f.min).any() or (numbers > f.max).any():
        return None
    if any(isinstance(v, (bool, np.bool_, str)) for v in array):
        return None
    if f.type == "int":
        if (numbers != np.round(numbers)).any():
            return None
        return np.round(numbers)
    return numbers


def check_field(name: str, value):
    """The validated value of one field on its own (cross-field rules are checked by :class:`Scenario`)."""
    spec = fields()
    if name not in spec:
        raise _unknown_field(name)
    return _check(spec[name], value)


def _unknown_field(name: str) -> ScenarioError:
    close = difflib.get_close_matches(name, list(fields()), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return ScenarioError(name, "", f"unknown field; {hint}see data/scenario_fields.csv",
                         ", ".join(fields()))


class Scenario:
    """Validated inputs of one planning scenario (or of a batch, when fields hold arrays).

    Keyword arguments are the fields of ``data/scenario_fields.csv`` (``help(workbench.Scenario)`` and
    ``workbench.scenario.describe()`` list them with units and ranges). Any bad value raises
    :class:`ScenarioError`, a ``ValueError`` naming the field, the value and the allowed range.
    Instances are immutable; use :meth:`replace` for a changed copy.
    """

    __slots__ = ("_values",)

    def __init__(self, **values):
        spec = fields()
        for name in values:
            if name not in spec:
                raise _unknown_field(name)
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

    # -- JSON -----------------------------------------------------------------------------------------
    def to_json(self, **dumps_kwargs) -> str:
        """All fields plus ``schema_version``, as JSON; :meth:`from_json` restores an equal scenario."""
        return json.dumps({"schema_version": SCHEMA_VERSION, **self.to_dict()}, **dumps_kwargs)

    @classmethod
    def from_dict(cls, data: dict) -> Scenario:
        """A scenario from :meth:`to_dict` output (plus an optional ``schema_version``)."""
        if not isinstance(data, dict):
            raise ScenarioError("scenario", data, "is not a JSON object", "an object of field: value")
        data = dict(data)
        version = data.pop("schema_version", SCHEMA_VERSION)
        _check_version(version)
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> Scenario:
        """A scenario from :meth:`to_json` text."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as error:
            raise ScenarioError("scenario", str(text)[:40], f"is not valid JSON ({error})", "JSON object") from None
        return cls.from_dict(data)

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
        values: dict[str, str] = {}
        version = SCHEMA_VERSION
        for key, value in parse_qsl(str(query).lstrip("?"), keep_blank_values=True):
            if key in ignore:
                continue
            if key == "v":
                version = value
                continue
            if key not in fields():
                raise _unknown_field(key)
            if key in values:
                raise ScenarioError(key, value, "is given twice in the URL", "one value per field")
            values[key] = value
        _check_version(version)
        return cls(**values)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> Scenario:
        """A batch scenario from a DataFrame with one row per scenario and columns named as fields."""
        for column in frame.columns:
            if column not in fields():
                raise _unknown_field(str(column))
        return cls(**{column: frame[column].to_numpy() for column in frame.columns})


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
    except (TypeError, ValueError):
        number = None
    if number is None or isinstance(version, bool) or str(version).strip() != str(number):
        raise ScenarioError("schema_version", version, "is not a whole number", f"1 to {SCHEMA_VERSION}")
    if not 1 <= number <= SCHEMA_VERSION:
        raise ScenarioError("schema_version", version, "is not supported by this version of the workbench",
                            f"1 to {SCHEMA_VERSION}")


def _check_combination(v: dict):
    """Rules that involve more than one field."""
    lengths = {name: value.size for name, value in v.items() if isinstance(value, np.ndarray)}
    if len(set(lengths.values())) > 1:
        first = next(iter(lengths))
        odd = next(name for name, size in lengths.items() if size != lengths[first])
        raise ScenarioError(odd, v[odd].tolist()[:5], f"has {lengths[odd]} values but {first} has {lengths[first]}",
                            "arrays of one length in a batch")
    if v["active_params"] is not None and np.any(np.asarray(v["active_params"]) > np.asarray(v["params"])):
        raise ScenarioError("active_params", v["active_params"], f"exceeds params={v['params']!r}",
                            "at most the total parameter count")
    if v["n_gpus"] is not None and np.any(np.asarray(v["n_gpus"]) < np.asarray(v["tensor_parallel"])):
        raise ScenarioError("n_gpus", v["n_gpus"], f"is below tensor_parallel={v['tensor_parallel']!r}",
                            "at least the tensor-parallel size")
    gpu, precision = np.broadcast_arrays(np.asarray(v["gpu"], dtype=object), np.asarray(v["precision"], dtype=object))
    for g, p in {(g, p) for g, p in zip(gpu.ravel(), precision.ravel())}:
        if math.isnan(catalog.peak_flops_per_s(g, p)):
            have = [q for q in catalog.PRECISIONS if not math.isnan(catalog.peak_flops_per_s(g, q))]
            if not have:
                raise ScenarioError("gpu", g, "the catalog has no FLOPS figure for this accelerator",
                                    "a GPU with a published peak (see `workbench gpus`)")
            raise ScenarioError("precision", p, f"{g} has no {p} peak in the catalog", ", ".join(have))
    gpu, mode, provider = np.broadcast_arrays(gpu, np.asarray(v["pricing"], dtype=object),
                                              np.asarray(v["provider"], dtype=object))
    for key in {tuple(k) for k in zip(gpu.ravel(), mode.ravel(), provider.ravel())}:
        if key[1] == "self_hosted":
            if v["gpu_purchase_usd"] is None and key[0] not in ownership.hardware_prices():
                raise ScenarioError("gpu_purchase_usd", None, f"no purchase price on record for {key[0]} "
                                    "(data/hardware_prices.csv); give one for self_hosted pricing",
                                    fields()["gpu_purchase_usd"].allowed())
            if math.isnan(catalog.spec(key[0], "tdp_w")):
                raise ScenarioError("pricing", "self_hosted", f"{key[0]} has no published TDP for the power cost",
                                    "on_demand, reserved_1y, reserved_3y, spot for this GPU")
        elif v["price_per_gpu_hour"] is None:
            try:
                prices.lookup(*key)
            except prices.PriceNotFoundError as error:
                raise ScenarioError("provider", key[2], str(error), ", ".join(prices.providers())) from None


def describe() -> pd.DataFrame:
    """The fields as a table: type, unit, default, range, help and source of the default."""
    return pd.DataFrame([{"field": f.name, "type": f.type, "unit": f.unit, "default": f.default,
                          "allowed": f.allowed(), "help": f.help, "source": f.source} for f in fields().values()])
