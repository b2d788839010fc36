"""Levers: what to change to spend less, what each change saves, and the risk it adds.

Every lever the planning guides name that the model can price is a row of ``data/levers.csv``: its changes to a
scenario (``field=value``, or ``field=x1.15`` for a multiple of the value in use, ``checkpoint_interval_hours=optimum``
for the Young/Daly interval), when it applies, the risk in words and its source. :func:`levers` applies each to
the scenario and prices them all in one batched :func:`~workbench.plan.estimate.estimate`:

Each row is the lever applied alone: rows do not add up (fp8 and spot together save less than their two rows).
A lever that buys the cluster another way (``pricing``) keeps the stages that followed it as they were bought.

``total_usd`` is the engine's total of ``scenario.replace(**applied)``, a reservation's idle term included (the
engine pays a commitment whole, busy or idle; ``risk_off`` of the reservation levers is other work filling it).

* ``risk_adjusted_saving_usd``: the change in the total with the lever applied, its risks priced as the engine
  prices them; the table is ranked by it;
* ``saving_usd``: the plain saving, the same change with the lever's risk switched off (``risk_off`` in the table:
  no divergence allowance for a lower precision, no extra diagnosis time for sampled logs, no reclaims for spot),
  that is, if nothing goes wrong;
* ``risk_usd`` = ``saving_usd`` - ``risk_adjusted_saving_usd``: the expected cost of the risk, including what it
  does to the rest of the plan (a longer run pays staff longer). A reservation's risk is the hours of its one-year
  commitment the plan leaves idle. Risks the model does not price are stated in ``risk`` with a source
  (``risk_priced`` False: their ``risk_usd`` of 0 is "not priced", not "no risk").

The scenario is evaluated with ``divergence_allowance=expected``, so that a lower precision carries its risk.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..plan.boundaries import field_of
from ..reference.data import DataFileError, cached, data_dir, read_table
from ..reference.messages import Message, Refusal
from ..reference.numbers import compact
from ..plan.scenario import Scenario, ScenarioError, fields

COLUMNS = ("lever", "name", "name_zh", "changes", "applicable", "saving_usd", "risk_usd", "risk_adjusted_saving_usd",
           "days_saved", "value_of_days_usd", "total_usd", "risk", "risk_zh", "risk_priced", "source", "crosses",
           "why_not", "applied", "lowers_service")


#: The conditions ``applies_when`` may name (see :func:`_conditions`).
CONDITIONS = ("pretrains", "cloud", "not_spot", "on_demand", "not_reserved", "has_fp8", "not_fp8", "serving", "fixed", "serving_bf16",
              "no_prefix_cache", "checkpoint_interval_hours", "catalogue_price", "experiments", "experiments_not_spot",
              "logs_above_sampled", "above_average", "checkpoints_above", "preference_labels", "full_sft", "committed",
              "dearer_region", "spills_a_term")


@cached
def lever_table() -> pd.DataFrame:
    """``data/levers.csv``: lever, name (and name_zh), changes, risk_off, applies_when, risk (and risk_zh), source;
    every change names a
    scenario field and a value (``x`` and a factor, ``optimum``, ``average``, ``cheapest``, ``kept``,
    ``fewer_terms`` or a value the field allows), every
    condition is one of :data:`CONDITIONS`."""
    frame = read_table("levers.csv", required=("lever", "name", "name_zh", "changes", "risk", "risk_zh", "source"),
                       key="lever")
    path, spec = str(data_dir() / "levers.csv"), fields()
    for number, row in enumerate(frame.itertuples(), start=2):
        for column in ("changes", "risk_off"):
            for item in filter(None, (part.strip() for part in str(getattr(row, column) or "").split(";"))):
                name, _, value = item.partition("=")
                if name not in spec:
                    raise DataFileError(path, f"{name!r} is not a scenario field", number, column)
                try:
                    if value.startswith("x"):
                        float(value[1:])
                    elif value not in ("optimum", "average", "cheapest", "kept", "fewer_terms"):
                        Scenario(**{name: _typed(spec[name], value)})
                except (ValueError, ScenarioError) as error:
                    raise DataFileError(path, f"{item!r}: {error}", number, column) from None
        for condition in filter(None, str(row.applies_when or "").split(";")):
            if condition not in CONDITIONS:
                raise DataFileError(path, f"{condition!r} is not a condition (allowed: {', '.join(CONDITIONS)})",
                                    number, "applies_when")
    return frame


def _conditions(scenario: Scenario, details: dict | None = None) -> dict:
    """The conditions ``applies_when`` may name -> (holds, the reason it does not); ``details``: the scenario's
    estimate's, for the conditions on its figures (a programme has none: its terms are its fleets')."""
    from ..reference import catalog
    serving = scenario.serving_months > 0
    # the mode a stage is bought in: its own field, or the cluster's where it is "same"
    serving_mode = scenario.pricing if scenario.serving_pricing == "same" else scenario.serving_pricing
    experiment_mode = scenario.pricing if scenario.experiment_pricing == "same" else scenario.experiment_pricing
    has_fp8 = np.isfinite(float(catalog.peak_flops_per_s(scenario.gpu, "fp8")))
    return {
        "pretrains": (scenario.plan_kind == "pretrain", Message("wn_no_pretraining")),
        "cloud": (scenario.pricing != "self_hosted", Message("wn_self_hosted")),
        "not_spot": (scenario.pricing != "spot", Message("wn_spot_already")),
        "on_demand": (scenario.pricing == "on_demand", Message("wn_not_on_demand", mode=scenario.pricing)),
        "not_reserved": (serving_mode not in ("reserved_1y", "reserved_3y"), Message("wn_serving_reserved")),
        "has_fp8": (has_fp8, Message("wn_no_fp8_peak", gpu=scenario.gpu)),
        "not_fp8": (scenario.precision != "fp8", Message("wn_fp8_already")),
        "serving": (serving, Message("wn_no_serving")),
        "fixed": (scenario.serving_provisioning == "fixed", Message("wn_autoscales")),
        "serving_bf16": (scenario.weight_precision in ("bf16", "fp16") and has_fp8,
                         Message("wn_weights_low") if has_fp8 else Message("wn_no_fp8", gpu=scenario.gpu)),
        "no_prefix_cache": (scenario.prefix_cache_hit_rate < 0.3, Message("wn_prefix_cache")),
        "checkpoint_interval_hours": (scenario.checkpoint_interval_hours is not None,
                                      Message("wn_interval_optimum")),
        "catalogue_price": (scenario.price_per_gpu_hour is None,
                            Message("wn_price_typed")),
        "experiments": (scenario.experiment_fraction + scenario.ablation_runs * scenario.ablation_run_fraction > 0,
                        Message("wn_no_experiments")),
        "experiments_not_spot": (experiment_mode != "spot", Message("wn_experiments_spot")),
        "logs_above_sampled": (scenario.log_sampling_ratio > 0.1 or scenario.log_retention_days > 30,
                               Message("wn_logs_sampled")),
        "above_average": (scenario.serving_headroom > 1.0 / scenario.peak_to_average + 1e-9,
                          Message("wn_at_mean")),
        "preference_labels": (scenario.preference_pairs > 0, Message("wn_no_preference")),
        "committed": (scenario.pricing in _COMMITTED,
                      Message("wn_not_committed", mode=scenario.pricing)),
        "full_sft": (scenario.sft_examples > 0 and scenario.sft_trainable_fraction > 0.01,
                     Message("wn_no_full_sft")),
        "checkpoints_above": (scenario.checkpoints_kept_hot > 1 or scenario.checkpoints_kept_object > 3,
                              Message("wn_few_checkpoints")),
        "dearer_region": _dearer_region(scenario),
        "spills_a_term": _spills_a_term(scenario, details),
    }


def _spills_a_term(scenario: Scenario, details: dict | None) -> tuple:
    """Whether the cluster, rented for whole terms (months, years), holds one term more than a larger cluster
    would: two terms or more, the last one partly idle."""
    if details is None:
        return False, Message("wn_programme_terms")
    if scenario.pricing not in ("monthly", "reserved_1y", "reserved_3y"):
        return False, Message("wn_not_rented_term", mode=scenario.pricing)
    terms = float(np.ravel(details["cluster_terms"])[0])
    if not terms >= 2:
        return False, Message("wn_one_term", mode=scenario.pricing)
    return True, None


class _NotApplicable(Exception):
    """A lever whose change this scenario cannot take, with the reason (a :class:`Message`)."""

    def __init__(self, message):
        super().__init__(str(message))
        self.message = message


def _fewer_terms(scenario: Scenario, details: dict, n_gpus: float) -> int:
    """The smallest cluster, in whole servers (``gpus_per_node``), that runs the plan in one whole term fewer than
    it holds now: the GPU-hours it uses over (terms - 1) terms, then a server more while a larger cluster's lower
    efficiency still spills (at most 16 tries)."""
    from ..plan.estimate import estimate
    terms, term = float(np.ravel(details["cluster_terms"])[0]), float(np.ravel(details["cluster_term_hours"])[0])
    used = float(np.ravel(details["cluster_used_hours"])[0]) * n_gpus
    per = int(scenario.gpus_per_node)
    n = int(math.ceil(used / ((terms - 1) * term) / per - 1e-9)) * per
    for _ in range(16):
        try:
            if float(np.ravel(estimate(scenario.replace(n_gpus=n)).details["cluster_terms"])[0]) <= terms - 1:
                return n
        except ScenarioError as error:  # a cluster past the field's range, or one the layout cannot hold
            raise _NotApplicable(Refusal(error)) from None
        n += per
    # a larger cluster is less efficient: past some size it no longer finishes sooner
    raise _NotApplicable(Message("wn_no_fewer_terms", gpus=n))


def cheapest_region(scenario: Scenario) -> str:
    """The region where the plan's provider sells its GPU cheapest in its pricing mode, in the country of the plan's
    region (the data stays in its jurisdiction: a border is the lever's risk boundary, not a saving to take);
    empty: none on record."""
    from ..reference import prices, region_prices
    if scenario.provider == prices.MEDIAN or scenario.pricing == "self_hosted":
        return ""
    offers = prices.offers(scenario.gpu, scenario.pricing, scenario.cny_per_usd)
    offers = offers[(offers["provider"] == scenario.provider) & (offers["region"] != "")]
    home = region_prices.country(scenario.provider, scenario.region or "")
    if home:
        offers = offers[[region_prices.country(scenario.provider, r) == home for r in offers["region"]]]
    return str(offers["region"].iloc[0]) if len(offers) else ""


def _dearer_region(scenario: Scenario) -> tuple:
    """The condition of the cheapest-region lever: a region is chosen, and the provider sells the GPU for less in
    another."""
    if not scenario.region:
        return False, Message("wn_no_region")
    from ..reference import prices
    cheapest = cheapest_region(scenario)
    dearer = bool(cheapest) and cheapest != scenario.region and (
        prices.lookup(scenario.gpu, scenario.pricing, scenario.provider, cheapest).price
        < prices.lookup(scenario.gpu, scenario.pricing, scenario.provider, scenario.region).price)
    return (dearer,
            Message("wn_cheapest_region", region=scenario.region, provider=scenario.provider, gpu=scenario.gpu))


def _changes(text: str, scenario: Scenario, details: dict, headline: dict) -> dict:
    """``field=value;field=x1.5;...`` -> field values for ``scenario`` (multiples of the value in use)."""
    out = {}
    spec = fields()
    for item in filter(None, (part.strip() for part in text.split(";"))):
        name, _, value = item.partition("=")
        if name not in spec:
            raise ValueError(f"data/levers.csv: {name!r} is not a scenario field")
        if value == "optimum":
            out[name] = float(details["young_daly_interval_hours"])
        elif value == "cheapest":  # the provider's cheapest region for the GPU
            out[name] = cheapest_region(scenario)
        elif value == "kept":  # where it is now: the data stays in the region the plan has it in
            out[name] = getattr(scenario, name) or scenario.region
        elif value == "fewer_terms":  # a cluster that finishes within one whole rented term fewer
            out[name] = _fewer_terms(scenario, details, float(headline["n_gpus"]))
        elif value == "average":  # capacity for the mean traffic: 1 / peak_to_average of the peak's
            out[name] = max(spec[name].min, 1.0 / float(scenario.peak_to_average))
        elif value.startswith("x"):
            current = getattr(scenario, name)
            if current is None:  # an empty field: the value the engine used
                current = headline.get(name, details.get(name))
            new = float(current) * float(value[1:])
            out[name] = min(new, spec[name].max) if spec[name].max is not None and math.isfinite(spec[name].max) else new
        else:
            out[name] = _typed(spec[name], value)
    return out


def _typed(field, text):
    if field.type == "int":
        return int(float(text))
    if field.type == "float":
        return float(text)
    return text


def levers(plan=None) -> pd.DataFrame:
    """The lever table of a scenario (default ``Scenario()``), ranked by risk-adjusted saving (columns
    :data:`COLUMNS`; levers that do not apply are listed last with ``why_not``; ``crosses``: the boundary warnings
    the lever's scenario gives that the scenario did not (:mod:`workbench.plan.boundaries`); ``applied``: the field values that
    give the row's figures, ``scenario.replace(**applied)``, the cluster size kept). For a
    :class:`~workbench.programmes.programme.Programme`, see :func:`programme_levers`."""
    from ..plan.estimate import estimate
    from .programme import Programme
    if isinstance(plan, Programme):
        return programme_levers(plan)
    scenario = Scenario() if plan is None else plan
    if not isinstance(scenario, Scenario) or scenario.batch_size is not None:
        raise ScenarioError("scenario", scenario, "is not a single Scenario", "workbench.Scenario(...) or a Programme")
    base = scenario.replace(divergence_allowance="expected")
    # the table prices the divergence risk: a scenario without the allowance gets it with any lever applied
    carried = {} if scenario.divergence_allowance == "expected" else {"divergence_allowance": "expected"}
    first = estimate(base)
    headline = {"mfu": first.mfu, "n_gpus": first.n_gpus}
    # the cluster is the plan's: a lever changes how it is used, not how many GPUs are bought (an empty n_gpus
    # would otherwise be re-sized to target_days by a faster lever)
    pinned = {}
    if base.n_gpus is None:
        pinned = {"n_gpus": int(round(float(first.n_gpus)))}
        base = base.replace(**pinned)
    conditions = _conditions(base, first.details)
    rows, variants, twins = [], [], []
    for lever in lever_table().itertuples():
        wanted = [c for c in str(lever.applies_when or "").split(";") if c]
        unknown = [c for c in wanted if c not in conditions]
        if unknown:
            raise ValueError(f"data/levers.csv, lever {lever.lever}: unknown condition {unknown[0]!r}")
        failing = [conditions[c][1] for c in wanted if not conditions[c][0]]
        # a risk the model prices is stated as "Modelled: ..." in the table; others are words and a source only
        row = {"lever": lever.lever, "name": lever.name, "name_zh": lever.name_zh, "risk": lever.risk,
               "risk_zh": lever.risk_zh, "source": lever.source, "why_not": "",
               "risk_priced": str(lever.risk).startswith("Modelled"),
               # requests dropped or queued beyond the latency target: a lower service, never a plain saving
               "lowers_service": str(getattr(lever, "lowers_service", "") or "").strip().lower() == "true"}
        if failing:
            rows.append({**row, "changes": lever.changes, "applicable": False, "why_not": failing[0], "applied": {},
                         "crosses": []})
            continue
        try:
            changes = _changes(lever.changes, base, first.details, headline)
        except _NotApplicable as reason:
            rows.append({**row, "changes": lever.changes, "applicable": False, "why_not": reason.message,
                         "applied": {}, "crosses": []})
            continue
        if "pricing" in changes:  # the lever buys the cluster another way: stages bought as it was stay so
            changes.update({name: base.pricing for name in ("experiment_pricing", "post_training_pricing",
                                                             "serving_pricing")
                            if getattr(base, name) == "same" and name not in changes})
        try:
            variant = base.replace(**changes)
        except ScenarioError as error:  # a lever this scenario cannot take (a bound, a missing price)
            rows.append({**row, "changes": lever.changes, "applicable": False, "why_not": Refusal(error), "applied": {},
                         "crosses": []})
            continue
        rows.append({**row, "changes": "; ".join(f"{k}={_shown(v)}" for k, v in changes.items()), "applicable": True,
                     # what to apply to the scenario for the figures shown (its cluster kept)
                     "applied": {**carried, **pinned, **changes}})
        off = _changes(str(lever.risk_off or ""), base, first.details, headline)
        variants.append((len(rows) - 1, variant))
        twins.append(variant.replace(**off) if off else None)
    varying = _varying([base, *(v for _, v in variants), *(t for t in twins if t is not None)])
    # a batch holds a value in every element: an empty field some lever sets is, in each element, the value the
    # engine uses for that element (fp8's MFU prior is not bf16's)
    nullable = [name for name in varying if fields()[name].nullable]

    # each variant's own estimate, once: its empty fields' values, and the boundaries it crosses
    own = [estimate(v) for _, v in variants]

    def fill(s, its=None):
        empty = [name for name in nullable if getattr(s, name) is None]
        if not empty:
            return s
        empty = [name for name in empty if fields()[name].numeric]  # a region left empty stays so
        if not empty:
            return s
        its = its if its is not None else estimate(s)
        return s.replace(**{name: float(np.ravel(getattr(its, name, its.details.get(name)))[0]) for name in empty})

    base = fill(base, first)  # the pinned cluster is the one first was sized to: the same figures
    variants = [(i, fill(v, its)) for (i, v), its in zip(variants, own)]
    twins = [None if t is None else fill(t) for t in twins]
    batch = [base, *(v for _, v in variants), *(t for t in twins if t is not None)]
    est = estimate(Scenario(**{name: [_element(s, name) for s in batch] for name in _varying(batch)},
                            **{name: getattr(base, name) for name in fields() if name not in _varying(batch)}))
    lines = est.lines
    totals = lines.groupby("scenario")["cost_usd"].sum()
    days = np.ravel(est.details["training_days_total"])
    # a boundary the lever crosses is one the scenario had not crossed (its numbers may move, its field not)
    before = {field_of(w) for w in first.warnings} - {None}
    twin_index = len(variants) + 1
    for k, (index, variant) in enumerate(variants, start=1):
        adjusted = float(totals[0] - totals[k])
        plain = adjusted
        if twins[k - 1] is not None:
            plain, twin_index = float(totals[0] - totals[twin_index]), twin_index + 1
        saved_days = float(days[0] - days[k])
        rows[index].update(saving_usd=plain, risk_usd=plain - adjusted, risk_adjusted_saving_usd=adjusted,
                           days_saved=saved_days, value_of_days_usd=saved_days * float(base.delay_cost_usd_per_day),
                           total_usd=float(totals[k]),
                           crosses=[w for w in own[k - 1].warnings if field_of(w) and field_of(w) not in before])
    return _ranked(rows)


def _element(scenario: Scenario, name: str):
    """A field's value as a batch element: a region left empty is "" there (no region)."""
    value = getattr(scenario, name)
    return "" if value is None and fields()[name].type == "region" else value


def _ranked(rows: list) -> pd.DataFrame:
    """The table, ranked by risk-adjusted saving plus the value of the days a lever saves (``delay_cost_usd_per_day``
    x days; 0 unless a day has a price); a lever that saves nothing here (its plain saving and the value of its
    days at most a cent) is listed with why."""
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    # why a lever does not apply keeps its message code (a pyarrow string column would make it plain English text)
    table["why_not"] = pd.Series([row.get("why_not", "") for row in rows], index=table.index, dtype=object)
    table["value_of_days_usd"] = table["value_of_days_usd"].astype(float).fillna(0.0)
    nothing = table["applicable"].astype(bool) & ~(table["saving_usd"] + table["value_of_days_usd"] > 0.01)
    table.loc[nothing, "why_not"] = [
        Message("wn_delay", hours=-d * 24, cost_usd=-v) if v < -0.01
        else Message("wn_adds", cost_usd=-s) if s < -0.01 else Message("wn_nothing_saved")
        for s, d, v in zip(table.loc[nothing, "saving_usd"], table.loc[nothing, "days_saved"],
                           table.loc[nothing, "value_of_days_usd"])]
    # column by column: pandas before 3 reads a list of [flag, list] rows as a 2-D array and refuses it
    table["applicable"] = table["applicable"].astype(bool) & ~nothing
    table["crosses"] = pd.Series([[] if none else crossed for none, crossed in zip(nothing, table["crosses"])],
                                 index=table.index, dtype=object)
    table["lowers_service"] = table["lowers_service"].astype(object).fillna(False).astype(bool)
    table["_rank"] = table["risk_adjusted_saving_usd"] + table["value_of_days_usd"]
    # a lever that lowers the service level comes after every plain saving, whatever it saves
    return table.sort_values(["applicable", "lowers_service", "_rank"], ascending=[False, True, False],
                             na_position="last", kind="stable").drop(columns="_rank").reset_index(drop=True)


def _varying(batch: list) -> list:
    return [name for name in fields() if len({repr(getattr(s, name)) for s in batch}) > 1]


def _shown(value) -> str:
    return compact(value, 4) if isinstance(value, float) else str(value)



def chart_frame(table: pd.DataFrame, rate: float = 1.0) -> pd.DataFrame:
    """The applicable levers of :func:`levers` as the tidy frame of :func:`workbench.report.charts.levers` (amounts x
    ``rate``, for a display currency)."""
    usable = table[table["applicable"]].reset_index(drop=True)
    parts = [pd.DataFrame({"lever": usable["name"], "order": usable.index, "kind": kind, "usd": usable[column] * rate})
             for kind, column in (("saving", "saving_usd"), ("risk-adjusted", "risk_adjusted_saving_usd"))]
    return pd.concat(parts, ignore_index=True)


#: Scenario levers a programme takes on its base (changes to fixed values; a lever relative to one run's figures,
#: its MFU or its Young/Daly interval, or to one traffic curve, is not the programme's).
PROGRAMME_LEVERS = ("async_checkpoint", "checkpoint_cleanup", "spot_experiments", "ablations_first", "deduplication",
                    "fp8", "log_sampling", "spot_pretrain", "quantised_serving", "prefix_caching", "autoscaling")


def _work_usd(timeline) -> float:
    """A programme's cost but its serving, in the horizon and after it [USD]: what a risk to the work can add to."""
    lines = timeline.lines
    return float(lines.loc[lines["stage"] != "inference", "cost_usd"].sum()) + timeline.beyond_horizon_usd


def _like_for_like_usd(timeline, served_tokens: float) -> float:
    """A programme's cost for comparing levers [USD]: its work in the horizon and after it (:func:`_work_usd`),
    and its serving at the plan's served tokens (the serving in the horizon scaled by the plan's tokens over its
    own). A lever that makes the work faster or slower moves releases, and so serving, across the horizon: that is
    not a saving nor a cost of the lever; what it does to the cost of serving a token is."""
    lines = timeline.lines
    serving = float(lines.loc[lines["stage"] == "inference", "cost_usd"].sum())
    own = float(timeline.months_tokens["served_tokens"].sum())
    return _work_usd(timeline) + (serving * served_tokens / own if own > 0 and served_tokens > 0 else serving)


def programme_levers(programme) -> pd.DataFrame:
    """The levers of a programme over its horizon, each priced by evaluating the programme with it applied
    (:func:`workbench.programmes.timeline.evaluate`, which prices the workstreams in batches): the scenario levers of
    :data:`PROGRAMME_LEVERS` applied to the programme's ``base`` (workstreams that set the field themselves keep
    theirs), and the programme's own: idle debug environments released after 15 minutes. Columns as
    :func:`levers`, but saving and risk are compared like with like (:func:`_like_for_like_usd`: the work in the
    horizon and after it, serving at the plan's served tokens), while ``total_usd`` is the horizon's total with the
    lever; ``days_saved`` is not given (a programme's months are its own); ``applied`` holds the ``base``
    changes (``programme.replace(base={**programme.base, **applied})``), or ``workstreams`` for the debug lever.
    A reservation is not offered: a programme's later work may fill its term, which one plan cannot tell."""
    from .programme import ProgrammeError
    from .timeline import evaluate
    scenario = programme.base_scenario
    conditions = _conditions(scenario)
    # a programme serves by workstream (serve_months), not by its base's serving_months
    conditions["serving"] = (any(w.serve_months > 0 for w in programme.workstreams), "no workstream serves a release")
    rows = []

    base_timeline = evaluate(programme)
    base_total = base_timeline.total_cost_usd
    served = float(base_timeline.months_tokens["served_tokens"].sum())

    def priced(variant, twin):
        timeline = evaluate(variant)
        safe = evaluate(twin) if twin is not None else timeline  # the lever with its risk switched off
        # like with like (:func:`_like_for_like_usd`): a lever that moves work in time neither gains nor loses the
        # serving it moves across the horizon, nor the work it moves after it
        plain = _like_for_like_usd(base_timeline, served) - _like_for_like_usd(safe, served)
        # the risk is what it adds to the work, in the horizon or after it
        risk = _work_usd(timeline) - _work_usd(safe)
        return {"saving_usd": plain, "risk_usd": risk, "risk_adjusted_saving_usd": plain - risk,
                "total_usd": timeline.total_cost_usd, "days_saved": float("nan")}

    for lever in lever_table().itertuples():
        if lever.lever not in PROGRAMME_LEVERS:
            continue
        row = {"lever": lever.lever, "name": lever.name, "name_zh": lever.name_zh, "risk": lever.risk,
               "risk_zh": lever.risk_zh, "source": lever.source, "risk_priced": str(lever.risk).startswith("Modelled"),
               "crosses": [], "why_not": "", "applied": {}, "changes": lever.changes}
        failing = [conditions[c][1] for c in filter(None, str(lever.applies_when or "").split(";"))
                   if not conditions[c][0]]
        if failing:
            rows.append({**row, "applicable": False, "why_not": failing[0]})
            continue
        changes = _changes(lever.changes, scenario, {}, {})
        if "pricing" in changes:
            changes.update({name: scenario.pricing for name in ("experiment_pricing", "post_training_pricing",
                                                                 "serving_pricing")
                            if getattr(scenario, name) == "same" and name not in changes})
        off = _changes(str(lever.risk_off or ""), scenario, {}, {})
        try:
            variant = programme.replace(base={**programme.base, **changes})
            twin = programme.replace(base={**programme.base, **changes, **off}) if off else None
            figures = priced(variant, twin)
        except (ProgrammeError, ScenarioError) as error:  # a workstream that cannot take it
            rows.append({**row, "applicable": False, "why_not": Refusal(error)})
            continue
        rows.append({**row, **figures, "applicable": True, "applied": changes,
                     "changes": "; ".join(f"{k}={_shown(v)}" for k, v in changes.items())})
    # the programme's own lever: development environments released after 15 minutes idle
    held = [w for w in programme.workstreams if w.debug_never_released or w.hidden("debug_auto_release_hours") > 0.25]
    row = _own_row("debug_release", ("Release idle debug environments after 15 minutes", "调试环境空闲 15 分钟后释放"),
                   "debug_auto_release_hours=0.25 on every workstream",
                   ("A developer away longer than the timeout loses the session's state and waits for a new one",
                    "离开超过超时时间的开发者会丢失会话状态并等待新环境"),
                   "Planning guides: auto-release idle development environments; a notebook culler's timeout")
    if held:
        from dataclasses import replace
        released = programme.replace(workstreams=tuple(
            replace(w, debug_auto_release_hours=0.25, debug_never_released=False) if w in held else w
            for w in programme.workstreams))
        rows.append({**row, **priced(released, None), "applicable": True,
                     "applied": {"workstreams": [w.name for w in held]}})
    else:
        rows.append({**row, "applicable": False, "why_not": Message("wn_releases_fast")})
    rows.append(_rent_on_demand(programme, base_timeline, priced))
    return _ranked(rows)


def _own_row(lever, names, changes, risks, source) -> dict:
    """A programme's own lever (not in data/levers.csv: it changes workstreams or fleets, not the base)."""
    return {"lever": lever, "name": names[0], "name_zh": names[1], "changes": changes, "risk": risks[0],
            "risk_zh": risks[1], "risk_priced": False, "source": source, "crosses": [], "why_not": "", "applied": {}}


_COMMITTED = ("reserved_1y", "reserved_3y", "monthly", "self_hosted")
_PRICING_FIELDS = ("pricing", "experiment_pricing", "post_training_pricing", "serving_pricing", "serving_peak_pricing")


def _rent_on_demand(programme, timeline, priced) -> dict:
    """The programme's own lever on committed GPUs: rent them on demand instead (every fleet dropped, and every
    way of buying that commits, in the base and in the workstreams, made on demand). A negative saving says the
    commitment pays for itself; owned fleets' break-even months say after how long."""
    from dataclasses import replace
    row = _own_row("rent_on_demand", ("Rent the GPUs on demand instead of reserving or owning them",
                                      "按需租用 GPU，而非预留或自建"),
                   "pricing=on_demand wherever it commits; fleets dropped",
                   ("Capacity for a large cluster may not be free on demand when needed; the rented price can move",
                    "大规模集群在需要时未必能按需获得；租用价格可能变动"),
                   "Planning guides: self-built clusters against cloud; Cottier et al. 2024 (amortised hardware)")
    if not timeline.fleets:
        return {**row, "applicable": False, "why_not": Message("wn_no_fleets")}
    rented = lambda changes: {k: "on_demand" for k in _PRICING_FIELDS if changes.get(k) in _COMMITTED}  # noqa: E731
    changes = rented(programme.base)
    variant = programme.replace(base={**programme.base, **changes}, fleets=(), workstreams=tuple(
        replace(w, changes={**w.changes, **rented(w.changes)}) for w in programme.workstreams))
    owned = [f for f in timeline.fleets if f.get("purchase_usd") is not None]
    if owned:
        months = [f["break_even_months"] for f in owned if f.get("break_even_months") is not None]
        row["risk"] += (f"; owning pays for itself after {min(months):.0f} months of use at the fleets' "
                        "utilisation" if months else "; at the fleets' utilisation, owning does not pay for itself "
                        "within the hardware's useful life")
        row["risk_zh"] += (f"；按集群当前利用率，自建在使用 {min(months):.0f} 个月后优于租用" if months
                           else "；按集群当前利用率，自建在使用年限内不会优于租用")
    try:
        figures = priced(variant, None)
    except Exception as error:  # noqa: BLE001 - a workstream that cannot take it (reported, not raised)
        return {**row, "applicable": False, "why_not": Refusal(error)}
    moved = [w.name for w in programme.workstreams if rented(w.changes)]
    return {**row, **figures, "applicable": True,
            "applied": {**changes, "fleets": "dropped", **({"workstreams": moved} if moved else {})}}


def apply_programme_lever(programme, row) -> object:
    """``programme`` with the lever of a :func:`programme_levers` row applied, as that row priced it: its ``base``
    changes, idle debug environments released after 15 minutes on the workstreams it names, or on-demand renting
    (fleets dropped, committing pricing made on demand in the base and the workstreams)."""
    from dataclasses import replace
    applied = dict(row["applied"])
    if not row["applicable"]:
        raise ValueError(f"lever {row['lever']} does not apply here: {row['why_not']}")
    if row["lever"] == "debug_release":
        names = set(applied["workstreams"])
        return programme.replace(workstreams=tuple(
            replace(w, debug_auto_release_hours=0.25, debug_never_released=False) if w.name in names else w
            for w in programme.workstreams))
    if row["lever"] == "rent_on_demand":
        rented = lambda changes: {k: "on_demand" for k in _PRICING_FIELDS if changes.get(k) in _COMMITTED}  # noqa: E731
        return programme.replace(base={**programme.base, **rented(programme.base)}, fleets=(), workstreams=tuple(
            replace(w, changes={**w.changes, **rented(w.changes)}) for w in programme.workstreams))
    return programme.replace(base={**programme.base, **applied})
