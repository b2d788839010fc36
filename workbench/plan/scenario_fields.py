"""The scenario's fields, from ``data/scenario_fields.csv`` (type, unit, range, default, help and source each),
and the checks of one field's value: numbers and quantities (``70B``, ``2T``), choices, texts, arrays for a
batch; :class:`ScenarioError`, naming the field, the value and what is allowed, in English or Chinese.
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..reference import catalog, prices, region_prices
from ..reference.data import DataFileError, cached, data_dir, read_table
from ..reference.i18n import problem_zh, t


#: Longest echo of a user's value in a message: a 10 MB name is reported, not repeated.
EXCERPT_CHARS = 60


def excerpt(value, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)``, cut to ``limit`` characters with the full length said when it is longer."""
    try:
        text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    except ValueError:  # an integer past Python's digit limit for text: said by its size
        digits = int(abs(value).bit_length() * 0.30103) + 1
        return f"an integer of about {digits:,} digits"
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

    def message(self, lang: str = "en", reader: bool = False) -> str:
        """The message in ``lang`` (``en`` or ``zh``); problems without a translation stay English. ``reader``: for
        the app's reader, the field named by its label (not its id) and numbers without exponents (``1e+13`` ->
        ``10 T``); the command line keeps the ids its options are made of."""
        if reader:
            return _labelled(_plain_numbers(self._message(lang, reader=True), lang), lang)
        return self._message(lang)

    def _message(self, lang: str, reader: bool = False) -> str:
        shown = excerpt(self.value)
        if reader and isinstance(self.value, (int, float)) and not isinstance(self.value, bool) \
                and abs(self.value) < 1e300:  # an integer of 400 digits stays the excerpt it is
            from ..reference.numbers import plain
            shown = plain(self.value, lang)  # 80 B, not 80000000000
        field = self.field if len(self.field) <= EXCERPT_CHARS else f"{self.field[:EXCERPT_CHARS]}..."
        spec = fields_or_none()
        base = self.field.split("[")[0]
        if reader and spec and base in spec and spec[base].type in ("choice", "provider") \
                and isinstance(self.value, str) and len(self.value) <= EXCERPT_CHARS:
            from ..reference.i18n import choice_label
            label = choice_label(base, self.value, lang)  # 按量付费, not 'on_demand', for the app's reader
            shown = f"“{label}”" if lang == "zh" and label != self.value else shown if label == self.value else label
        if lang != "zh":
            if reader and spec and base in spec:
                text = f"{spec[base].label} {shown}: {self.problem}"
            else:
                text = f"{field}={shown}: {self.problem}"
            return f"{text}; allowed: {self.allowed}" if self.allowed else text
        units = {"characters": "个字符", "items": "项", "digits": "位数字"}
        shown = "（空）" if self.value is None else re.sub(r"\.\.\. \(([\d,]+) (characters|items|digits)\)$",
                                                       lambda m: f"...（共 {m[1]} {units[m[2]]}）", shown)
        label = (spec[base].label_zh if reader else f"{spec[base].label_zh}（{field}）") if spec and base in spec \
            else field
        text = f"{label} = {shown}：{problem_zh(self.problem)}"
        allowed = self.allowed_zh or (problem_zh(self.allowed) if self.allowed else "")
        return f"{text}；允许：{allowed}" if allowed else text


_EXPONENT = re.compile(r"(?<![\w.'+-])[-+]?\d+(?:\.\d+)?e[-+]?\d+(?![\w.])")


def _typed(bound: float, lang: str = "en") -> str:
    """A field's bound as one types it: 1e+06 -> 1M, 0.01, 3650 (no exponent); in Chinese 100 万."""
    from ..reference.numbers import compact, plain
    return plain(bound, "zh", 6) if lang == "zh" else compact(bound, 6)


_IDENTIFIER = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def _labelled(text: str, lang: str) -> str:
    """Field ids in ``text`` (``n_layers``) replaced by their labels, quoted."""
    spec = fields_or_none() or {}
    name = (lambda n: spec[n].label_zh if lang == "zh" else spec[n].label)
    text = re.sub(r"\b([a-z][a-z0-9_]*)=(?=\S)", lambda m: f"{name(m.group(1))} " if m.group(1) in spec
                  else m.group(0), text)
    return _IDENTIFIER.sub(lambda m: f"“{spec[m.group(0)].label_zh if lang == 'zh' else spec[m.group(0)].label}”"
                           if m.group(0) in spec else m.group(0), text)


def _plain_numbers(text: str, lang: str, typed: bool = False) -> str:
    """Numbers written with an exponent in ``text`` as a reader writes them (``1e+13`` -> ``10 T``), or as one types
    them on the command line (``typed``: ``10T``)."""
    from ..reference.numbers import compact, plain
    if typed:
        return _EXPONENT.sub(lambda m: compact(float(m.group(0)), 6), text)
    return _EXPONENT.sub(lambda m: plain(float(m.group(0)), lang), text)


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
                return f"{_typed(self.min, 'zh')} 到 {_typed(self.max, 'zh')} 之间的{kind}{unit}" + ("，或留空取默认值" if self.nullable else "")
            kind = "a whole number" if self.type == "int" else "a number"
            empty = ", or empty for the default" if self.nullable else ""
            return f"{kind} from {_typed(self.min)} to {_typed(self.max)}{unit}{empty}"
        if self.type == "gpu":
            return "`workbench gpus` 中的 GPU 型号或别名" if zh else "a GPU id or alias from `workbench gpus`"
        if self.type == "provider":
            return ", ".join(prices.providers())
        if self.type == "region":
            return (f"供应商的地域编号（如 {', '.join(all_regions()[:3])}；`workbench prices --gpu` 列出各地域），或留空" if zh
                    else f"a region id of the provider (such as {', '.join(all_regions()[:3])}; `workbench prices --gpu` "
                         "lists them), or empty")
        if self.type == "text":
            return f"最多 {self.max:g} 个可打印字符" if zh else f"text of up to {self.max:g} printable characters"
        if self.type == "percents":
            return ("1 到 10 个逗号分隔的百分比，大于 0、不超过 100" if zh
                    else "1 to 10 comma-separated percentages above 0, at most 100")
        return ", ".join(self.choices)

    def error(self, value, problem: str, label: str | None = None) -> ScenarioError:
        """A :class:`ScenarioError` for this field, with its allowed values in both languages."""
        return ScenarioError(label or self.name, value, problem, self.allowed(), self.allowed("zh"))


FIELD_TYPES = ("float", "int", "choice", "gpu", "provider", "region", "text", "percents")
#: The fields the engine is written against (schema version 1). ``data/scenario_fields.csv`` describes them
#: (type, range, default, help); a table that renames, drops or adds one is refused when read, since the
#: formulas would otherwise meet a missing input half-way through an estimate.
#: The values the engine knows for each choice field: a table may offer fewer, never others.
ENGINE_CHOICES = {"precision": ("bf16", "fp16", "fp8"),
                  "pricing": ("on_demand", "reserved_1y", "reserved_3y", "monthly", "spot", "self_hosted"),
                  "recompute": ("none", "selective", "full"), "gradient_precision": ("bf16", "fp32"),
                  "attention_kernel": ("flash", "standard"),
                  "weight_precision": ("bf16", "fp16", "fp8", "int8", "int4"),
                  "kv_cache_precision": ("bf16", "fp16", "fp8", "int8", "int4"),
                  "serving_prefill": ("interleaved", "disaggregated"), "serving_provisioning": ("fixed", "autoscaling"),
                  **{name: ("same", "on_demand", "reserved_1y", "reserved_3y", "monthly", "spot") for name in
                     ("experiment_pricing", "post_training_pricing", "serving_pricing")},
                  "serving_peak_pricing": ("same", "on_demand", "spot"),
                  "divergence_allowance": ("expected", "none")}
#: The fields the engine gives an empty value a meaning (worked out from the rest, or: none given); any other number
#: field left empty in the table would reach the formulas as nothing (a plan of no parameters) and is refused.
ENGINE_NULLABLE = frozenset((
    "active_params", "archive_storage_usd_per_gb_month", "budget_usd", "checkpoint_interval_hours",
    "cross_region_usd_per_gb", "d_model", "data_region", "egress_usd_per_gb", "global_batch_tokens", "gpu_purchase_usd",
    "hot_storage_usd_per_gb_month", "mfu", "micro_batch_size", "n_gpus", "n_kv_heads", "n_layers",
    "network_gbps_per_node", "object_storage_usd_per_gb_month", "pfs_throughput_gb_per_s", "pipeline_parallel",
    "price_per_gpu_hour", "region", "reward_model_params", "serving_tensor_parallel",
    "serving_tokens_per_second_per_gpu", "staff_months", "target_days", "tensor_parallel", "ttft_target_s",
    "zero_stage"))
#: Largest value the formulas give a meaning to (a ZeRO stage 4 or an MFU above 1 does not exist).
ENGINE_MAX = {"zero_stage": 3, "mfu": 1, "rollout_mfu": 1, "serving_mfu": 1, "usable_memory_fraction": 1,
              "power_utilisation": 1, "sft_trainable_fraction": 1, "log_sampling_ratio": 1, "annotation_qa_share": 1,
              "serving_mbu": 1, "prefix_cache_hit_rate": 1, "request_log_sampling": 1}
#: Fields the formulas divide by or take logarithms of: their minimum must stay above zero.
POSITIVE_FIELDS = frozenset((
    "active_params", "budget_usd", "bytes_per_token", "checkpoint_bytes_per_param", "checkpoint_interval_hours",
    "checkpoint_write_gb_per_s_per_gpu", "pfs_throughput_gb_per_s", "checkpoint_stall_share", "pfs_gb_per_s_per_tib",
    "cny_per_usd", "d_model", "gpu_purchase_usd", "gpus_per_node", "mfu",
    "micro_batch_size", "min_replicas", "n_gpus", "n_kv_heads", "n_layers", "params", "peak_to_average", "pipeline_parallel",
    "power_utilisation", "preference_tokens_per_pair", "pue", "redundancy_factor", "reward_model_params",
    "rl_samples_per_prompt", "rl_tokens_per_sample", "rollout_mfu", "seq_len", "server_power_factor", "serving_mfu",
    "serving_mbu", "serving_max_batch", "serving_tensor_parallel", "serving_headroom", "tpot_target_ms", "ttft_target_s",
    "serving_tokens_per_second_per_gpu", "sft_tokens_per_example", "sft_trainable_fraction", "target_days",
    "tensor_parallel", "tokens", "usable_memory_fraction", "useful_life_years", "global_batch_tokens",
    "network_gbps_per_node"))
FIELD_NAMES = (
    "name", "plan_kind", "params", "active_params", "tokens", "seq_len", "d_model", "n_layers", "n_kv_heads", "gpu", "precision", "n_gpus",
    "target_days", "gpus_per_node", "network_gbps_per_node", "mfu", "mfu_uncertainty", "pricing", "experiment_pricing", "post_training_pricing", "serving_pricing",
    "serving_peak_pricing", "commitment_other_use_share", "provider", "region", "price_per_gpu_hour", "recompute",
    "zero_stage", "tensor_parallel", "pipeline_parallel", "gradient_precision", "attention_kernel", "micro_batch_size", "global_batch_tokens", "usable_memory_fraction", "scaling_law",
    "host_overhead_fraction", "sft_examples", "sft_tokens_per_example", "sft_epochs", "sft_trainable_fraction",
    "preference_pairs", "preference_tokens_per_pair", "reward_model_params", "reward_model_epochs",
    "rl_prompts", "rl_samples_per_prompt", "rl_tokens_per_sample", "rollout_mfu", "eval_checkpoints",
    "eval_tokens_per_checkpoint", "human_eval_ratings", "human_eval_usd_per_rating",
    "judge_eval_prompts", "judge_tokens_per_prompt", "judge_usd_per_million_tokens", "red_team_hours",
    "red_team_usd_per_hour", "serving_months", "requests_per_day", "input_tokens_per_request",
    "output_tokens_per_request", "peak_to_average", "min_replicas", "serving_tokens_per_second_per_gpu",
    "serving_mfu", "weight_precision", "kv_cache_precision", "serving_mbu", "tpot_target_ms", "ttft_target_s",
    "serving_max_batch", "serving_tensor_parallel", "serving_prefill", "prefix_cache_hit_rate", "serving_provisioning", "serving_headroom",
    "egress_bytes_per_output_token", "request_log_sampling", "bytes_per_token", "dataset_copies", "checkpoint_bytes_per_param", "checkpoints_kept_hot",
    "checkpoints_kept_object", "retention_months", "archive_months", "hot_storage_usd_per_gb_month",
    "object_storage_usd_per_gb_month", "archive_storage_usd_per_gb_month", "ingest_usd_per_gb",
    "cross_region_usd_per_gb", "cross_region_copies", "data_region", "egress_usd_per_gb", "model_downloads",
    "sft_usd_per_example", "preference_usd_per_pair", "annotation_rework_rate", "annotation_qa_share", "label_noise_share",
    "log_gb_per_gpu_day", "log_retention_days", "log_sampling_ratio", "log_usd_per_gb_month", "log_ingest_usd_per_gb", "staff_fte",
    "staff_months", "staff_usd_per_month", "ops_fte_per_1000_gpus", "serving_staff_fte", "gpu_failure_rate_per_day",
    "checkpoint_interval_hours", "checkpoint_write_gb_per_s_per_gpu", "checkpoint_writes", "pfs_throughput_gb_per_s",
    "checkpoint_stall_share", "pfs_gb_per_s_per_tib", "restart_minutes",
    "spot_interruptions_per_node_month", "spot_capacity_wait_days", "unlogged_diagnosis_minutes", "divergence_allowance", "experiment_fraction", "ablation_runs", "ablation_run_fraction",
    "redundancy_factor", "budget_usd", "alert_percents", "start_date", "delay_cost_usd_per_day", "cny_per_usd", "gpu_purchase_usd", "useful_life_years",
    "server_share", "interconnect_share", "residual_value_share", "server_power_factor", "power_utilisation",
    "idle_power_share", "pue", "usd_per_kwh", "colocation_usd_per_kw_month",
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
    from ..formulas.scaling import scaling_laws
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
        if f.default is None and f.type != "text" and (f.type in ("percents", "gpu", "provider", "choice")
                                                      or f.name not in ENGINE_NULLABLE):
            raise DataFileError(path, "this field needs a default (the engine gives an empty one no meaning)",
                                row_number, "default")
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


# k, M, B/G, T, P, and the Chinese 万 (10^4), 亿 (10^8) and 万亿 (10^12) a Chinese reader writes
_SUFFIXES = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15, "万": 1e4, "亿": 1e8, "万亿": 1e12}
# ASCII digits only (Python's \d also takes Arabic-Indic and other digits); an exponent or a suffix, not both
_QUANTITY = re.compile(r"^\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:(e[-+]?[0-9]+)|\s*(万亿|[kmbgtp万亿]?))\s*$",
                       re.IGNORECASE)
#: Why a comma is refused: "1,5T" is 1.5T in much of Europe and 15T with the comma read as a separator.
COMMA_HINT = "write decimals with a point and no thousands separators (1.5T, 7500000 or 7.5M)"


def parse_quantity(text: str) -> float:
    """``'70B'`` -> 7e10, ``'2T'`` -> 2e12, ``'7e9'``, ``'4k'`` -> 4000 (k, M, B/G, T, P; any case), ``'700亿'`` -> 7e10
    (万, 亿, 万亿).

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
        # a whole number typed with a unit: 1.001万 is 10010, not 1.001 x 10^4's 10009.999999999998 (other
        # fields keep every digit, so that a link's value reads back exactly)
        value = float(f"{parsed:.12g}") if f.type == "int" else parsed
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


def region_key(region) -> np.ndarray:
    """A region field as the price tables key it: empty text where none is given (arrays element-wise)."""
    region = np.asarray(region, dtype=object)
    return np.where(region == None, "", region)  # noqa: E711 (element-wise)


@cached
def all_regions() -> list[str]:
    """Every region id with a GPU, storage or transfer price on record."""
    return sorted(set(prices.regions()) | set(region_prices.regions()))


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
    if f.type == "region":
        normal = str(value).strip().lower()
        if normal and normal not in all_regions():  # "" in a batch's element: no region there
            raise f.error(value, "is not a region on record (data/prices.csv, data/region_prices.csv)", label)
        return normal
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
                         "the fields listed by workbench.plan.scenario.describe()", "workbench.plan.scenario.describe() 列出的字段")
