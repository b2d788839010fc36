"""Fuzzing of every public entry point with random *valid* scenarios across the whole catalog and every
pricing mode, and with corrupted data folders.

For a valid scenario, every entry point (estimate, totals, sensitivity, monte_carlo, the views behind the
charts, the CLI with and without --json, the planner built from the scenario's URL and from its file)
must give a finite, non-negative, JSON-clean answer; the only ScenarioErrors allowed are the catalog's own
gaps (no price, peak or TDP on record for that accelerator), which name their field. A corrupted data
folder must give a DataFileError naming the file, or work.
"""
import contextlib
import datetime
import csv
import io
import json
import math
import re
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench
from workbench import Scenario, ScenarioError, cli, estimate, monte_carlo, sensitivity
from workbench.reference import catalog, data
from workbench.report import views
from workbench.plan.estimate import totals
from workbench.plan.scenario import fields
from workbench.plan.scenario_fields import all_regions
from workbench.app.tables import check_all
from workbench.app.ui import Planner, parse_app_query
from workbench.programmes import programme_presets, timeline
from workbench.report import programme_views
from workbench.programmes.programme import ProgrammeError
from workbench.app.programme_app import ProgrammeView

SPEC = fields()
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                       HealthCheck.function_scoped_fixture])
#: Rules of the catalog, not of the user's input: an accelerator without a price, a peak or a TDP.
CATALOG_GAPS = ("gpu", "precision", "provider", "pricing", "gpu_purchase_usd", "region", "data_region",
                # a stage bought another way: a price on record for its mode, and a cloud cluster (not self-hosted)
                "experiment_pricing", "post_training_pricing", "serving_pricing", "serving_peak_pricing")


def _number(f):
    if f.scale == "log" and f.min > 0:
        value = st.floats(math.log10(f.min), math.log10(f.max)).map(lambda e: min(max(10 ** e, f.min), f.max))
    else:
        value = st.floats(f.min, f.max)
    return value.map(lambda v: int(round(v))) if f.type == "int" else value


def _valid(f):
    if f.numeric:
        return st.one_of(st.none(), _number(f)) if f.nullable else _number(f)
    if f.type == "gpu":
        return st.sampled_from(catalog.gpu_ids())
    if f.type == "provider":
        return st.sampled_from(workbench.reference.prices.providers())
    if f.type == "region":  # a region on record, or none; one the plan's provider does not sell in is a gap
        return st.one_of(st.none(), st.sampled_from(all_regions()))
    if f.name == "start_date":  # text with a rule of its own: a calendar day, or empty
        return st.one_of(st.just(""), st.dates(datetime.date(2000, 1, 1), datetime.date(2099, 12, 31)).map(str))
    if f.type == "text":
        return st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Cn", "Co", "Zl", "Zp")), max_size=40)
    if f.type == "percents":
        return st.lists(st.floats(0.5, 100), min_size=1, max_size=4).map(lambda xs: ",".join(f"{x:g}" for x in xs))
    return st.sampled_from(list(f.choices))


# most fields at their defaults, a random handful changed: far more realistic mixes than all-random
changed = st.dictionaries(st.sampled_from(sorted(SPEC)), st.none(), max_size=8).flatmap(
    lambda keys: st.fixed_dictionaries({k: _valid(SPEC[k]) for k in keys}))
core = st.fixed_dictionaries({"gpu": st.sampled_from(catalog.gpu_ids()),
                              "pricing": st.sampled_from(list(SPEC["pricing"].choices)),
                              "price_per_gpu_hour": st.one_of(st.none(), _number(SPEC["price_per_gpu_hour"]))})


def valid_scenario(kw):
    """The scenario, made consistent with the cross-field rules; None for a catalog gap."""
    kw = dict(kw)
    if kw.get("active_params") is not None:
        kw["active_params"] = min(kw["active_params"], kw.get("params", SPEC["params"].default))
    from workbench.plan.scenario_rules import MIN_TOKENS_PER_REQUEST
    for name in ("input_tokens_per_request", "output_tokens_per_request"):  # 0, or a millionth of a token and up
        if kw.get(name) is not None and 0 < kw[name] < MIN_TOKENS_PER_REQUEST:
            kw[name] = 0.0
    if kw.get("n_gpus") is not None:
        kw["n_gpus"] = max(kw["n_gpus"], (kw.get("tensor_parallel") or 1) * (kw.get("pipeline_parallel") or 1))
    try:
        return Scenario(**kw)
    except ScenarioError as error:
        # catalog gaps, and fields bounded by the model's shape (pipeline stages, KV heads)
        assert error.field in CATALOG_GAPS + ("pipeline_parallel", "n_kv_heads"), error
        return None


def finite(x):
    return bool(np.isfinite(np.asarray(x, dtype=float)).all())


def check_entry_points(scenario):
    est = estimate(scenario)
    costs = est.lines["cost_usd"].to_numpy()
    assert np.isfinite(costs).all() and (costs >= 0).all(), est.lines[~np.isfinite(costs) | (costs < 0)]
    assert finite([est.total_cost_usd, est.gpu_hours, est.wall_days, est.n_gpus, est.mfu])
    assert SPEC["n_gpus"].min <= est.n_gpus <= SPEC["n_gpus"].max
    json.dumps(est.to_dict(), allow_nan=False)
    total, _ = totals(scenario)
    assert total == pytest.approx(est.total_cost_usd, rel=1e-9)
    table = sensitivity(scenario, base=est)
    assert finite(table[["low_total_usd", "high_total_usd", "swing_usd"]].to_numpy())
    mc = monte_carlo(scenario, n=64, seed=1, base=est)
    assert finite(mc.samples["total_cost_usd"]) and finite(mc.samples["duration_days"])
    for currency, lang in (("USD", "en"), ("CNY", "zh")):
        frames = [views.stage_category(est, currency, lang), views.split(est, currency, lang),
                  views.tornado(table, est, currency, lang), *views.burn(est, currency, lang),
                  views.lines_table(est, currency, lang), *views.cost_histogram(mc, est, currency),
                  views.compare(est, est, currency, lang)]
        for frame in frames:
            numeric = frame.select_dtypes("number").to_numpy(dtype=float)
            burn_days = "crossed" in frame  # an alert line not crossed has no day
            assert burn_days or np.isfinite(numeric).all(), frame
    curve = views.size_curve(scenario)
    assert finite(curve["cost_usd"]) and (curve["cost_usd"] >= 0).all()
    views.lines_csv(est)
    return est


def cli_args(scenario):
    return [f"--{k.replace('_', '-')}={v!r}" if isinstance(v, float) else f"--{k.replace('_', '-')}={v}"
            for k, v in scenario.changes().items()]


def run(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=300, **SETTINGS)
@given(core, changed)
def test_valid_scenarios_through_the_engine_and_the_views(kw_core, kw_changed):
    scenario = valid_scenario({**kw_core, **kw_changed})
    if scenario is not None:
        check_entry_points(scenario)


@settings(max_examples=60, **SETTINGS)
@given(core, changed)
def test_valid_scenarios_through_the_command_line(kw_core, kw_changed):
    scenario = valid_scenario({**kw_core, **kw_changed})
    if scenario is None:
        return
    args = cli_args(scenario)
    for command in (["estimate"], ["estimate", "--json"], ["sensitivity"], ["sensitivity", "--json"], ["link"]):
        code, out, err = run([command[0], *args, *command[1:]])
        assert code == 0, (command, args, err)
        if "--json" in command:
            result = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
            if command[0] == "estimate":
                assert result["total_cost_usd"] == pytest.approx(estimate(scenario).total_cost_usd)
        else:
            assert not re.search(r"\bnan\b", out.lower()), out


PLANNER = {}


def shared_planner():
    if "p" not in PLANNER:
        PLANNER["p"] = Planner()
    return PLANNER["p"]


@settings(max_examples=40, **SETTINGS)
@given(core, changed)
def test_valid_scenarios_through_the_app(kw_core, kw_changed):
    scenario = valid_scenario({**kw_core, **kw_changed})
    if scenario is None:
        return
    # from its URL: every parameter applied, no message
    values, options, errors = parse_app_query(scenario.to_query())
    assert not errors and Scenario(**values) == scenario
    # from its file, loaded into a planner that has seen other scenarios
    p = shared_planner()
    p._upload_changed({"new": [{"name": "s.json", "content": memoryview(scenario.to_json().encode())}]})
    assert p.upload_message.value == "" and p.banner.value == "", (p.upload_message.value, p.banner.value)
    assert p.scenario == scenario and "nan" not in p.headline.value.lower()
    assert p.est.total_cost_usd == pytest.approx(estimate(scenario).total_cost_usd)


@settings(max_examples=8, **SETTINGS)
@given(core, changed)
def test_a_planner_built_from_a_link(kw_core, kw_changed):
    scenario = valid_scenario({**kw_core, **kw_changed})
    if scenario is None:
        return
    values, options, notices = parse_app_query(scenario.to_query() + "&lang=zh")
    p = Planner(values, options["lang"], options["currency"], notices)
    assert p.scenario == scenario and p.banner.value == "" and np.isfinite(p.est.total_cost_usd)


# -- the programme view: knobs, links and files --------------------------------------------------------------
# mostly values a knob can take (a short horizon can still cut a workstream off), some junk
knob_value = st.one_of(st.integers(12, 24), st.integers(1, 12), st.integers(1, 12), st.integers(1, 12),
                       st.integers(-5, 200), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6))


@settings(max_examples=40, **SETTINGS)
@given(st.sampled_from(list(programme_presets.presets().index)),
       st.dictionaries(st.sampled_from([*programme_presets.KNOBS] * 4 + ["colour"]), knob_value, max_size=3))
def test_programme_knobs_plan_or_name_the_setting(preset_id, knobs):
    try:
        p = programme_presets.with_knobs(programme_presets.preset(preset_id), **knobs)
        tl = timeline.evaluate(p)
    except ProgrammeError as error:
        assert error.field in (*knobs, "start_month", "end_month", "cycles", "every_months") and "allowed" in str(error)
        return
    assert finite(tl.lines["cost_usd"]) and tl.total_cost_usd > 0
    json.dumps(tl.to_dict(), allow_nan=False)
    for frame in (programme_views.monthly(tl), programme_views.kpis(tl), programme_views.attribution(tl, "workstream")):
        assert frame.notna().all().all()


@settings(max_examples=25, **SETTINGS)
@given(st.lists(st.tuples(st.sampled_from([*programme_presets.QUERY_KEYS, "lang"]),
                          st.one_of(st.sampled_from(["programme", "single", "assistant-7b", "base-70b", "zh", "0",
                                                     "3", "1e9", "-1", "nan"]), st.text(max_size=8))), max_size=6))
def test_a_programme_link_opens_or_says_what_it_left_out(pairs):
    from urllib.parse import urlencode
    values, options, errors = parse_app_query(urlencode([("view", "programme"), *pairs]))
    assert all(isinstance(e, str) and e for e in errors)
    if options.get("view") != "programme":
        return
    view = ProgrammeView(options["programme_preset"], options["programme_knobs"], options["lang"])
    assert view.timeline is not None and "nan" not in view.headline.value.lower()
    assert view.link_query().startswith("view=programme&programme=")


@settings(max_examples=30, **SETTINGS)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode),
                 st.sampled_from([b"{}", b'{"schema_version": 1}', b"[]", b"null", b'{"schema_version": 1, "name": "x", '
                                  b'"horizon_months": 3, "workstreams": [{"name": "w", "stages": ["sft"]}]}'])))
def test_any_uploaded_file_is_planned_or_refused_with_a_message(content):
    view = shared_programme_view()
    shown = view.programme
    view._upload_changed({"new": [{"name": "f.json", "content": memoryview(content)}]})
    if view.programme is shown:
        assert "f.json: " in view.banner.value and "wb-stale" in view.figures._dom_classes
    else:
        assert view.timeline.total_cost_usd >= 0 and "wb-stale" not in view.figures._dom_classes


_VIEW = []


def shared_programme_view():
    if not _VIEW:
        _VIEW.append(ProgrammeView())
    return _VIEW[0]


# -- corrupted data folders -------------------------------------------------------------------------------
TABLES = sorted(path.name for path in data.data_dir().glob("*.csv"))
junk_cell = st.one_of(st.sampled_from(["", "0", "-1", "1e308", "nan", "inf", "-inf", "abc", "1,5", "\ufeff",
                                       "H100-SXM5-80GB", "on_demand", "weekly", "1e-300", "999999999"]),
                      st.text(max_size=6), st.floats(allow_nan=False).map(repr))


PRISTINE = {name: (data.data_dir() / name).read_bytes() for name in TABLES}


@settings(max_examples=200, **SETTINGS)
@given(st.sampled_from(TABLES), st.integers(0, 10_000), st.integers(0, 100), junk_cell)
def test_corrupted_data_folder_is_refused_or_works(tmp_path_factory, table, row, column, value):
    pristine = PRISTINE
    folder = tmp_path_factory.mktemp("data")
    for name, content in pristine.items():
        (folder / name).write_bytes(content)
    shutil.copytree(data.data_dir() / "programmes", folder / "programmes")
    rows = list(csv.reader(io.StringIO(pristine[table].decode("utf-8"))))
    r = 1 + row % (len(rows) - 1)
    rows[r][column % len(rows[r])] = value
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    (folder / table).write_text(buffer.getvalue(), encoding="utf-8")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(data.DATA_DIR_ENV, str(folder))
            data.reload()
            _check_folder(folder, table)
    finally:
        data.reload()  # back to the project's own tables


def _check_folder(folder, table):
    try:
        check_all()
    except data.DataFileError as error:
        # the corrupted file, or a table whose references it broke (a renamed GPU id in prices.csv)
        assert str(error).startswith(str(folder)) and ".csv" in str(error), error
        code, _, err = run(["estimate"])
        assert code == 1 and str(folder) in err and err.count("\n") == 1
        return
    try:
        est = estimate(Scenario())
    except ScenarioError as error:  # e.g. the default GPU's price rows now belong to another SKU
        assert error.field in CATALOG_GAPS, error
        return
    assert finite(est.lines["cost_usd"]) and est.total_cost_usd >= 0
    json.dumps(est.to_dict(), allow_nan=False)
    sensitivity(Scenario(), base=est)
    monte_carlo(Scenario(), n=32, base=est)
