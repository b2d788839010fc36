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
from urllib.parse import parse_qsl, urlencode

import numpy as np
import pandas as pd

from . import catalog, compute, ownership, prices
from .data import DataFileError, cached, data_dir, read_table
from .i18n import problem_zh, t

#: Bumped whenever a field is renamed, removed or changes meaning; stored in JSON (``schema_version``)
#: and URLs (``v``). Older versions are read as long as their fields still exist.
SCHEMA_VERSION = 1
#: Longest scenario JSON read (a batch of 100,000 scenarios fits; a runaway file does not).
MAX_JSON_CHARS = 64_000_000


#: Longest echo of a user's value in a message: a 10 MB name is reported, not repeated.
EXCERPT_CHARS = 60


def excerpt(value, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)``, cut to ``limit`` characters with the full length said when it is longer."""
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    if len(text) <= limit:
        return text
    if isinstance(value, (list, tuple, dict, np.ndarray)):
        size, unit = len(value), "items"
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        size, unit = len(text.lstrip("-")), "digits"
    else:
        size, unit = len(value) if isinstance(value, (str, bytes)) else len(text), "characters"
    return f"{text[:limit]}... ({size:,} {unit})"


class ScenarioError(ValueError):
    """A scenario input is invalid. ``field``, ``value`` and ``allowed`` say which, what and what is allowed;
    :meth:`message` gives the text in English or Chinese. The value is echoed as a short excerpt."""

    def __init__(self, field: str, value, problem: str, allowed: str = "", allowed_zh: str = ""):
        self.field, self.value, self.problem, self.allowed = field, value, problem, allowed
        self.allowed_zh = allowed_zh
        super().__init__(self.message("en"))

    def message(self, lang: str = "en") -> str:
        """The message in ``lang`` (``en`` or ``zh``); problems without a translation stay English."""
        shown = excerpt(self.value)
        field = self.field if len(self.field) <= EXCERPT_CHARS else f"{self.field[:EXCERPT_CHARS]}..."
        if lang != "zh":
            text = f"{field}={shown}: {self.problem}"
            return f"{text}; allowed: {self.allowed}" if self.allowed else text
        units = {"characters": "个字符", "items": "项", "digits": "位数字"}
        shown = "（空）" if self.value is None else re.sub(r"\.\.\. \(([\d,]+) (characters|items|digits)\)$",
                                                       lambda m: f"...（共 {m[1]} {units[m[2]]}）", shown)
        spec = fields_or_none()
        base = self.field.split("[")[0]
        label = f"{spec[base].label_zh}（{field}）" if spec and base in spec else field
        text = f"{label} = {shown}：{problem_zh(self.problem)}"
        allowed = self.allowed_zh or (problem_zh(self.allowed) if self.allowed else "")
        return f"{text}；允许：{allowed}" if allowed else text


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

    def allowed(self, lang: str = "en") -> str:
        """The allowed values, for messages (``lang`` ``en`` or ``zh``)."""
        zh = lang == "zh"
        if self.numeric:
            unit = f" [{self.unit}]" if self.unit else ""
            if zh:
                kind = "整数" if self.type == "int" else "数字"
                unit = f" [{t(self.unit, 'zh')}]" if self.unit else ""
                return f"{self.min:g} 到 {self.max:g} 之间的{kind}{unit}" + ("，或留空取默认值" if self.nullable else "")
            kind = "a whole number" if self.type == "int" else "a number"
            empty = ", or empty for the default" if self.nullable else ""
            return f"{kind} from {self.min:g} to {self.max:g}{unit}{empty}"
        if self.type == "gpu":
            return "`workbench gpus` 中的 GPU 型号或别名" if zh else "a GPU id or alias from `workbench gpus`"
        if self.type == "provider":
            return ", ".join(prices.providers())
        if self.type == "text":
            return f"最多 {self.max:g} 个可打印字符" if zh else f"text of up to {self.max:g} printable characters"
        if self.type == "percents":
            return ("1 到 10 个逗号分隔的百分比，大于 0、不超过 100" if zh
                    else "1 to 10 comma-separated percentages above 0, at most 100")
        return ", ".join(self.choices)

    def error(self, value, problem: str, label: str | None = None) -> ScenarioError:
        """A :class:`ScenarioError` for this field, with its allowed values in both languages."""
        return ScenarioError(label or self.name, value, problem, self.allowed(), self.allowed("zh"))


FIELD_TYPES = ("float", "int", "choice", "gpu", "provider", "text", "percents")
#: The fields the engine is written against (schema version 1). ``data/scenario_fields.csv`` describes them
#: (type, range, default, help); a table that renames, drops or adds one is refused when read, since the
#: formulas would otherwise meet a missing input half-way through an estimate.
#: The values the engine knows for each choice field: a table may offer fewer, never others.
ENGINE_CHOICES = {"precision": ("bf16", "fp16", "fp8"),
                  "pricing": ("on_demand", "reserved_1y", "reserved_3y", "spot", "self_hosted"),
                  "recompute": ("none", "selective", "full"), "gradient_precision": ("bf16", "fp32"),
                  "attention_kernel": ("flash", "standard"),
                  "weight_precision": ("bf16", "fp16", "fp8", "int8", "int4"),
                  "kv_cache_precision": ("bf16", "fp16", "fp8", "int8", "int4"),
                  "serving_prefill": ("interleaved", "disaggregated"), "serving_provisioning": ("fixed", "autoscaling")}
#: Largest value the formulas give a meaning to (a ZeRO stage 4 or an MFU above 1 does not exist).
ENGINE_MAX = {"zero_stage": 3, "mfu": 1, "rollout_mfu": 1, "serving_mfu": 1, "usable_memory_fraction": 1,
              "power_utilisation": 1, "sft_trainable_fraction": 1, "log_sampling_ratio": 1, "annotation_qa_share": 1,
              "serving_mbu": 1, "prefix_cache_hit_rate": 1, "request_log_sampling": 1}
#: Fields the formulas divide by or take logarithms of: their minimum must stay above zero.
POSITIVE_FIELDS = frozenset((
    "active_params", "budget_usd", "bytes_per_token", "checkpoint_bytes_per_param", "checkpoint_interval_hours",
    "checkpoint_write_gb_per_s_per_gpu", "cny_per_usd", "d_model", "gpu_purchase_usd", "gpus_per_node", "mfu",
    "micro_batch_size", "min_replicas", "n_gpus", "n_kv_heads", "n_layers", "params", "peak_to_average", "pipeline_parallel",
    "power_utilisation", "preference_tokens_per_pair", "pue", "redundancy_factor", "reward_model_params",
    "rl_samples_per_prompt", "rl_tokens_per_sample", "rollout_mfu", "seq_len", "server_power_factor", "serving_mfu",
    "serving_mbu", "serving_max_batch", "serving_tensor_parallel", "tpot_target_ms", "ttft_target_s",
    "serving_tokens_per_second_per_gpu", "sft_tokens_per_example", "sft_trainable_fraction", "target_days",
    "tensor_parallel", "tokens", "usable_memory_fraction", "useful_life_years"))
FIELD_NAMES = (
    "name", "params", "active_params", "tokens", "seq_len", "d_model", "n_layers", "n_kv_heads", "gpu", "precision", "n_gpus",
    "target_days", "gpus_per_node", "mfu", "pricing", "provider", "price_per_gpu_hour", "recompute",
    "zero_stage", "tensor_parallel", "pipeline_parallel", "gradient_precision", "attention_kernel", "micro_batch_size", "usable_memory_fraction", "scaling_law",
    "host_overhead_fraction", "sft_examples", "sft_tokens_per_example", "sft_epochs", "sft_trainable_fraction",
    "preference_pairs", "preference_tokens_per_pair", "reward_model_params", "reward_model_epochs",
    "rl_prompts", "rl_samples_per_prompt", "rl_tokens_per_sample", "rollout_mfu", "eval_checkpoints",
    "eval_tokens_per_checkpoint", "serving_months", "requests_per_day", "input_tokens_per_request",
    "output_tokens_per_request", "peak_to_average", "min_replicas", "serving_tokens_per_second_per_gpu",
    "serving_mfu", "weight_precision", "kv_cache_precision", "serving_mbu", "tpot_target_ms", "ttft_target_s",
    "serving_max_batch", "serving_tensor_parallel", "serving_prefill", "prefix_cache_hit_rate", "serving_provisioning",
    "egress_bytes_per_output_token", "request_log_sampling", "bytes_per_token", "dataset_copies", "checkpoint_bytes_per_param", "checkpoints_kept_hot",
    "checkpoints_kept_object", "retention_months", "archive_months", "hot_storage_usd_per_gb_month",
    "object_storage_usd_per_gb_month", "archive_storage_usd_per_gb_month", "ingest_usd_per_gb",
    "cross_region_usd_per_gb", "cross_region_copies", "egress_usd_per_gb", "model_downloads",
    "sft_usd_per_example", "preference_usd_per_pair", "annotation_rework_rate", "annotation_qa_share",
    "log_gb_per_gpu_day", "log_retention_days", "log_sampling_ratio", "log_usd_per_gb_month", "staff_fte",
    "staff_months", "staff_usd_per_month", "ops_fte_per_1000_gpus", "gpu_failure_rate_per_day",
    "checkpoint_interval_hours", "checkpoint_write_gb_per_s_per_gpu", "restart_minutes",
    "spot_interruptions_per_node_month", "experiment_fraction", "ablation_runs", "ablation_run_fraction",
    "redundancy_factor", "budget_usd", "alert_percents", "cny_per_usd", "gpu_purchase_usd", "useful_life_years",
    "server_share", "interconnect_share", "server_power_factor", "power_utilisation", "pue", "usd_per_kwh",
)


@cached
def fields() -> dict[str, Field]:
    """The scenario fields in table order, each default checked against its own rule."""
    table = read_table("scenario_fields.csv", numeric=("min", "max"),
                       required=("field", "type", "group", "label", "help", "label_zh", "help_zh"), key="field",
                       choices={"type": FIELD_TYPES, "scale": ("log", "linear")})
    path = data_dir() / "scenario_fields.csv"
    out = {}
    for row_number, row in enumerate(table.to_dict("records"), start=2):
        kind = row["type"]
        default = row["default"].strip() or (None if kind != "text" else "")
        if kind in ("float", "int"):
            if np.isnan(row["min"]) or np.isnan(row["max"]) or row["min"] > row["max"]:
                raise DataFileError(path, "a numeric field needs min <= max", row_number, "min")
            if default is not None:
                try:
                    default = float(default)
                except ValueError:
                    raise DataFileError(path, f"default {default!r} is not a number", row_number, "default") from None
                if kind == "int" and default == round(default):
                    default = int(default)
        out[row["field"]] = Field(row["field"], kind, tuple(filter(None, row["choices"].split("|"))),
                                  row["unit"], default, row["min"], row["max"], row["scale"], row["group"],
                                  row["label"], row["help"], row["label_zh"], row["help_zh"], row["source"])
    if tuple(out) != FIELD_NAMES:
        names = list(out)
        missing = [n for n in FIELD_NAMES if n not in out]
        extra = [n for n in names if n not in FIELD_NAMES]
        detail = (f"missing {', '.join(missing)}" if missing else "") + ("; " if missing and extra else "") + (
            f"unknown {', '.join(extra)}" if extra else "") or "fields out of order"
        row = names.index(extra[0]) + 2 if extra else None
        raise DataFileError(path, f"the fields differ from the workbench's schema ({detail})", row, "field")
    from .scaling import scaling_laws
    for row_number, f in enumerate(out.values(), start=2):
        if f.type == "choice" and not f.choices:
            raise DataFileError(path, "a choice field needs its choices (a|b|c)", row_number, "choices")
        if f.name in ENGINE_CHOICES and not set(f.choices) <= set(ENGINE_CHOICES[f.name]):
            unknown = ", ".join(sorted(set(f.choices) - set(ENGINE_CHOICES[f.name])))
            raise DataFileError(path, f"choice(s) {unknown} unknown to the engine (knows: "
                                      f"{', '.join(ENGINE_CHOICES[f.name])})", row_number, "choices")
        if f.name in POSITIVE_FIELDS and not f.min > 0:
            raise DataFileError(path, f"min {f.min:g} must be above 0 for {f.name}", row_number, "min")
        if f.name in ENGINE_MAX and f.max > ENGINE_MAX[f.name]:
            raise DataFileError(path, f"max {f.max:g} is above {ENGINE_MAX[f.name]:g}, the largest {f.name} "
                                      "the engine knows", row_number, "max")
        if f.numeric and f.min < 0 and f.name not in POSITIVE_FIELDS:
            raise DataFileError(path, f"min {f.min:g} must not be negative", row_number, "min")
        if f.type in ("percents", "gpu", "provider", "choice") and f.default is None:
            raise DataFileError(path, "this field needs a default", row_number, "default")
        if f.name == "scaling_law" and not set(f.choices) <= set(scaling_laws()):
            missing = ", ".join(sorted(set(f.choices) - set(scaling_laws())))
            raise DataFileError(path, f"scaling law(s) {missing} not in scaling_laws.csv", row_number, "choices")
        if f.default is not None:
            try:
                _check(f, f.default)
            except ScenarioError as error:
                raise DataFileError(path, f"default {excerpt(f.default)} is invalid: {error.problem}; "
                                          f"allowed: {error.allowed}", row_number, "default") from None
    return out


def fields_or_none() -> dict[str, Field] | None:
    """The fields, or None when the table itself cannot be read (messages must not fail on that)."""
    try:
        return fields()
    except (DataFileError, RecursionError):
        return None


_SUFFIXES = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
# ASCII digits only (Python's \d also takes Arabic-Indic and other digits); an exponent or a suffix, not both
_QUANTITY = re.compile(r"^\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:(e[-+]?[0-9]+)|\s*([kmbgtp]?))\s*$", re.IGNORECASE)
#: Why a comma is refused: "1,5T" is 1.5T in much of Europe and 15T with the comma read as a separator.
COMMA_HINT = "write decimals with a point and no thousands separators (1.5T, 7500000 or 7.5M)"


def parse_quantity(text: str) -> float:
    """``'70B'`` -> 7e10, ``'2T'`` -> 2e12, ``'7e9'``, ``'4k'`` -> 4000 (k, M, B/G, T, P; any case).

    A comma is refused (:data:`COMMA_HINT`): it is a decimal mark in some locales and a thousands separator
    in others, and guessing wrong is a factor of ten or a thousand. Underscores group digits (``1_000``).
    """
    text = str(text)
    if "," in text:
        raise ValueError(f"{text!r} contains a comma; {COMMA_HINT}")
    match = _QUANTITY.match(text.replace("_", ""))
    if not match:
        raise ValueError(f"{text!r} is not a number")
    if match.group(2):
        return float(match.group(1) + match.group(2))
    return float(match.group(1)) * _SUFFIXES[(match.group(3) or "").lower()]


_SCALAR_TYPES = (str, int, float, bool, np.number, np.bool_, np.str_)


def _check_number(f: Field, value, label: str):
    if isinstance(value, (bool, np.bool_, complex, np.complexfloating)):  # float() would drop an imaginary part
        raise f.error(value, "is not a number", label)
    if isinstance(value, str):
        if "," in value:
            raise f.error(value, f"contains a comma; {COMMA_HINT}", label)
        try:
            parsed = parse_quantity(value)
        except ValueError:
            raise f.error(value, "is not a number", label) from None
        if not math.isfinite(parsed):  # digits such as 1e400: a number, only too large for a float
            raise f.error(value, "is out of range", label)
        value = parsed
    try:
        number = float(value)
    except OverflowError:
        raise f.error(value, "is too large", label) from None
    except (TypeError, ValueError):
        raise f.error(value, "is not a number", label) from None
    if not math.isfinite(number):
        raise f.error(value, "is not a finite number", label)
    if f.type == "int" and number != round(number):
        raise f.error(value, "is not a whole number", label)
    if not f.min <= number <= f.max:
        raise f.error(value, "is out of range", label)
    return int(round(number)) if f.type == "int" else number


def _check_text(f: Field, value, label: str) -> str:
    if not isinstance(value, (str, np.str_)):
        raise f.error(value, "is not text", label)
    if f.type == "text":
        # a pasted name may hold no-break or other typographic spaces: they are spaces, not errors
        text = re.sub(r"[^\S\r\n\t\f\v]", " ", str(value)).strip()
        if len(text) > f.max:
            raise f.error(value, f"is {len(text):,} characters long", label)
        if not text.isprintable():
            raise f.error(value, "contains control or unassigned characters", label)
        return text
    if f.type == "gpu":
        try:
            return catalog.resolve_gpu(value)
        except catalog.UnknownGpuError as error:
            raise f.error(value, str(error), label) from None
    options = prices.providers() if f.type == "provider" else f.choices
    normal = str(value).strip().lower()
    if normal not in options:
        raise f.error(value, "is not one of the allowed values", label)
    return normal


def _check_percents(f: Field, value, label: str) -> str:
    """A comma-separated list of percentages in (0, 100], normalised to ascending order."""
    if not isinstance(value, (str, np.str_)):
        raise f.error(value, "is not text", label)
    try:
        levels = sorted({float(part) for part in str(value).split(",") if part.strip()})
    except ValueError:
        raise f.error(value, "is not a list of numbers", label) from None
    if not levels or len(levels) > 10 or not all(0 < x <= 100 for x in levels):
        raise f.error(value, "is out of range", label)
    return ",".join(f"{x:g}" for x in levels)


def _check(f: Field, value):
    """The validated (and normalised) value of field ``f``: a scalar, None or a numpy array."""
    if value is None or (isinstance(value, str) and value.strip() == "" and f.nullable):
        if f.nullable:
            return None
        raise f.error(value, "is required")
    check = _check_number if f.numeric else _check_percents if f.type == "percents" else _check_text
    # exactly ndarray: a masked array's masked elements would slip past the range checks
    if f.numeric and type(value) is np.ndarray and value.dtype.kind in "fiu" and value.ndim == 1 and value.size:
        # a numeric array (Monte Carlo draws, batches) cannot hold text or booleans: no element-wise look
        fast = _check_numeric_array(f, value, plain_numbers=True)
        if fast is not None:
            return fast
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        try:
            array = np.asarray(value, dtype=object)
        except (ValueError, RecursionError):  # ragged or absurdly deep nesting
            raise f.error(value, "must be a scalar or a non-empty 1-d array") from None
        if array.ndim != 1 or array.size == 0:
            raise f.error(value, "must be a scalar or a non-empty 1-d array")
        fast = _check_numeric_array(f, array) if f.numeric else None
        if fast is not None:
            return fast
        # element by element: finds and names the first bad element; text values are checked once each
        checked, unique = [], {}
        for i, v in enumerate(array):
            if not isinstance(v, _SCALAR_TYPES) and v is not None:
                raise f.error(v, "is not a number" if f.numeric else "is not text", f"{f.name}[{i}]")
            key = (type(v), v) if not isinstance(v, float) or v == v else (float, "nan")
            if key not in unique:
                unique[key] = check(f, v, f"{f.name}[{i}]") if v is not None else f.error(v, "is empty", f"{f.name}[{i}]")
            if isinstance(unique[key], ScenarioError):
                raise unique[key]
            checked.append(unique[key])
        return np.asarray(checked, dtype=float if f.numeric else object)
    if not isinstance(value, _SCALAR_TYPES):
        raise f.error(value, "is not a number" if f.numeric else "is not text")
    return check(f, value, f.name)


#: Elements a numeric array's cast would take silently: booleans as 0/1, text, complex numbers without their
#: imaginary part. The element-by-element path names them.
_NOT_PLAIN = (bool, np.bool_, str, complex, np.complexfloating)


def _check_numeric_array(f: Field, array: np.ndarray, plain_numbers: bool = False):
    """A whole numeric array checked at once (a batch of 100,000 scenarios); None if any element is not
    a plain finite number in range, so that the element-by-element path can name it.
    ``plain_numbers``: the array's dtype is already numeric (not bool, not object)."""
    if not plain_numbers and (array.dtype == bool or any(isinstance(v, _NOT_PLAIN) for v in array)):
        return None
    try:
        numbers = array.astype(float)
    except (TypeError, ValueError, OverflowError):
        return None
    if not np.isfinite(numbers).all() or (numbers < f.min).any() or (numbers > f.max).any():
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


def close_fields(name: str, value=None, names=None, n: int = 2) -> list[str]:
    """Fields a mistyped ``name`` most likely meant: same letters in another case, fields it is a part of
    (``gpus`` -> ``n_gpus``, ``price`` -> ``price_per_gpu_hour``), then near spellings; among them, those that
    accept ``value`` first (``gpus=8`` means a count, not the accelerator ``gpu``)."""
    names = list(fields()) if names is None else list(names)
    key = str(name)[:100].lower().strip()
    parts = {candidate: candidate.split("_") for candidate in names}
    found = [c for c in names if c.lower() == key]
    if found:  # the same name in another case: nothing else is meant
        return found[:1]
    found += [c for c in names if key and len(key) >= 3 and (key in parts[c] or c.startswith(key + "_"))]
    found += difflib.get_close_matches(key, names, n=5, cutoff=0.6)
    if not found:  # a word in common (gpu_count -> n_gpus), singular or plural alike
        words = {w.rstrip("s") for w in key.replace("-", "_").split("_") if len(w) >= 3}
        found += [c for c in names if words & {p.rstrip("s") for p in parts[c] if len(p) >= 3}]
    unique = list(dict.fromkeys(found))
    if value is not None and value != "":
        spec = fields()

        def accepts(candidate):
            try:
                _check(spec[candidate], value)
                return True
            except (ScenarioError, KeyError):
                return False
        unique.sort(key=lambda candidate: not accepts(candidate))  # stable: the order above within each group
    return unique[:n]


def _unknown_field(name: str, value=None, extra=()) -> ScenarioError:
    # extra: other names the caller accepts (the app's lang and currency), so LANG=zh points at lang
    close = close_fields(name, value, list(fields()) + [n for n in extra if n not in fields()])
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    return ScenarioError(name, "" if value is None else value, f"unknown field; {hint}see data/scenario_fields.csv",
                         "the fields listed by workbench.scenario.describe()", "workbench.scenario.describe() 列出的字段")


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
                raise _unknown_field(name, values[name])
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


def model_shape(v: dict) -> tuple[np.ndarray, np.ndarray]:
    """(layers, attention heads) of the model the values describe: given, or derived from the parameter count
    as estimate() derives them [-]."""
    active = np.asarray(v["params"] if v.get("active_params") is None else v["active_params"], dtype=float)
    d_model = compute.derived_d_model(active) if v.get("d_model") is None else np.asarray(v["d_model"], dtype=float)
    layers = compute.derived_n_layers(d_model) if v.get("n_layers") is None else np.asarray(v["n_layers"], dtype=float)
    return layers, np.maximum(1.0, np.round(d_model / compute.HEAD_DIM))


def bounded_by_shape(values: dict, changes: dict) -> dict:
    """``changes`` plus the pipeline stages and KV heads of ``values`` brought within the new model's shape:
    for sweeps over model size, where a layout that fits one size cannot hold for a much smaller one."""
    merged = {**values, **changes}
    layers, heads = model_shape(merged)
    out = dict(changes)
    stages = np.asarray(merged["pipeline_parallel"], dtype=float)
    if np.any(stages > layers):
        out["pipeline_parallel"] = np.minimum(stages, layers)
    if merged.get("n_kv_heads") is not None and np.any(np.asarray(merged["n_kv_heads"], dtype=float) > heads):
        out["n_kv_heads"] = np.minimum(np.asarray(merged["n_kv_heads"], dtype=float), heads)
    return out


def _check_shape(v: dict):
    """Fields bounded by the model's shape (given, or derived from the parameter count as estimate() does)."""
    layers, heads = model_shape(v)
    if np.any(np.asarray(v["pipeline_parallel"]) > layers):
        bad = _first(np.asarray(v["pipeline_parallel"]) > layers, v["pipeline_parallel"], layers)
        raise ScenarioError("pipeline_parallel", bad[0], f"is more pipeline stages than the model's {bad[1]:,.0f} layers",
                            "1 to the number of layers (n_layers)", "1 到模型层数（n_layers）")
    if v["n_kv_heads"] is not None and np.any(np.asarray(v["n_kv_heads"]) > heads):
        bad = _first(np.asarray(v["n_kv_heads"]) > heads, v["n_kv_heads"], heads)
        raise ScenarioError("n_kv_heads", bad[0], f"is more than the model's {bad[1]:,.0f} attention heads "
                            f"(d_model / {compute.HEAD_DIM})", "1 to the number of attention heads", "1 到注意力头数")


def no_bandwidth_error(gpu: str) -> ScenarioError:
    """Serving priced on an accelerator whose bandwidth the roofline needs and the catalog lacks."""
    return ScenarioError("serving_tokens_per_second_per_gpu", None,
                         f"{gpu} has no memory bandwidth in the catalog for the serving roofline",
                         "a throughput per GPU for this accelerator, or a GPU with a published bandwidth",
                         "为该加速器填写单卡吞吐，或选择有公开带宽数据的 GPU")


def _check_combination(v: dict):
    """Rules that involve more than one field."""
    lengths = {name: value.size for name, value in v.items() if isinstance(value, np.ndarray)}
    if len(set(lengths.values())) > 1:
        first = next(iter(lengths))
        odd = next(name for name, size in lengths.items() if size != lengths[first])
        raise ScenarioError(odd, v[odd].tolist()[:5], f"has {lengths[odd]} values but {first} has {lengths[first]}",
                            "arrays of one length in a batch")
    if v["active_params"] is not None and np.any(np.asarray(v["active_params"]) > np.asarray(v["params"])):
        bad = _first(np.asarray(v["active_params"]) > np.asarray(v["params"]), v["active_params"], v["params"])
        raise ScenarioError("active_params", bad[0], f"exceeds params={bad[1]:g}", "at most the total parameter count",
                            "不超过总参数量")
    _check_shape(v)
    group = np.asarray(v["tensor_parallel"]) * np.asarray(v["pipeline_parallel"])
    if v["n_gpus"] is not None and np.any(np.asarray(v["n_gpus"]) < group):
        bad = _first(np.asarray(v["n_gpus"]) < group, v["n_gpus"], group)
        raise ScenarioError("n_gpus", bad[0], f"is below tensor_parallel x pipeline_parallel={bad[1]:g}",
                            "at least tensor_parallel x pipeline_parallel GPUs", "不少于张量并行 × 流水线并行")
    gpu, precision = np.broadcast_arrays(np.asarray(v["gpu"], dtype=object), np.asarray(v["precision"], dtype=object))
    for g, p in {(g, p) for g, p in zip(gpu.ravel(), precision.ravel())}:
        if math.isnan(catalog.peak_flops_per_s(g, p)):
            have = [q for q in catalog.PRECISIONS if not math.isnan(catalog.peak_flops_per_s(g, q))]
            if not have:
                raise ScenarioError("gpu", g, "the catalog has no FLOPS figure for this accelerator",
                                    "a GPU with a published peak (see `workbench gpus`)")
            raise ScenarioError("precision", p, f"{g} has no {p} peak in the catalog", ", ".join(have))
    if v["serving_tokens_per_second_per_gpu"] is None:
        served, months = np.broadcast_arrays(gpu, np.asarray(v["serving_months"], dtype=float))
        serving_gpus = set(np.ravel(served[months > 0]))
        for g in serving_gpus:
            if math.isnan(catalog.spec(g, "mem_bandwidth_tbs")):
                raise no_bandwidth_error(g)
    gpu, mode, provider = np.broadcast_arrays(gpu, np.asarray(v["pricing"], dtype=object),
                                              np.asarray(v["provider"], dtype=object))
    for key in {tuple(k) for k in zip(gpu.ravel(), mode.ravel(), provider.ravel())}:
        if key[1] == "self_hosted":
            # a given GPU-hour price replaces the amortised purchase price, which is then not needed
            if (v["gpu_purchase_usd"] is None and v["price_per_gpu_hour"] is None
                    and key[0] not in ownership.hardware_prices()):
                raise ScenarioError("gpu_purchase_usd", None, f"no purchase price on record for {key[0]} "
                                    "(data/hardware_prices.csv); give one for self_hosted pricing",
                                    fields()["gpu_purchase_usd"].allowed(), fields()["gpu_purchase_usd"].allowed("zh"))
            if math.isnan(catalog.spec(key[0], "tdp_w")):
                raise ScenarioError("pricing", "self_hosted", f"{key[0]} has no published TDP for the power cost",
                                    "on_demand, reserved_1y, reserved_3y, spot for this GPU",
                                    "该 GPU 可用 on_demand、reserved_1y、reserved_3y、spot")
        elif v["price_per_gpu_hour"] is None:
            try:
                prices.lookup(*key)
            except prices.PriceNotFoundError as error:
                offered = prices.providers_for(key[0], key[1])
                raise ScenarioError("provider", key[2], str(error),
                                    ", ".join(offered) if offered else "price_per_gpu_hour (no provider on record)",
                                    "、".join(offered) if offered else "填写每 GPU 小时价格（没有供应商记录）") from None


def _first(mask, values, limits) -> tuple[float, float]:
    """(value, limit) at the first element where ``mask`` holds: messages name a number, not an array."""
    mask, values, limits = np.broadcast_arrays(mask, np.asarray(values, dtype=float), np.asarray(limits, dtype=float))
    i = int(np.argmax(mask)) if mask.ndim else 0
    value, limit = float(np.ravel(values)[i]), float(np.ravel(limits)[i])
    return (int(value) if value.is_integer() else value), limit


def describe() -> pd.DataFrame:
    """The fields as a table: type, unit, default, range, help and source of the default."""
    return pd.DataFrame([{"field": f.name, "type": f.type, "unit": f.unit, "default": f.default,
                          "allowed": f.allowed(), "help": f.help, "source": f.source} for f in fields().values()])
