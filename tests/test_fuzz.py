"""Property-based fuzzing of every input path: Scenario construction, CLI arguments, URL query strings.

Every case either succeeds, with finite non-negative costs, or raises the documented ScenarioError
(exit status 2 with one line on the command line); never another exception. 11,000 cases in all.
"""
import contextlib
import io
import json
import math
from urllib.parse import urlencode

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench import Scenario, ScenarioError, cli, estimate
from workbench.plan.scenario import fields
from workbench.app.ui import parse_app_query

SPEC = fields()
NAMES = sorted(SPEC)
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _good_value(f):
    if f.type in ("float", "int"):
        lo, hi = f.min, f.max
        if f.scale == "log" and lo > 0:
            value = st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10 ** e)
        else:
            value = st.floats(lo, hi)
        return value.map(round) if f.type == "int" else value
    if f.type == "gpu":
        return st.sampled_from(["H100", "A100", "a100-40gb", "H200", "B200", "H800", "TPUv4", "MI300X", "V100", "A10G"])
    if f.type == "provider":
        return st.sampled_from(["median", "aws", "gcp", "azure", "lambda", "runpod-secure", "nope"])
    if f.type == "region":
        return st.sampled_from(["", "us-east-1", "cn-beijing", "eastus", "mars-1", "US-EAST-1 "])
    if f.type == "text":
        return st.text(max_size=120)
    if f.type == "percents":
        return st.lists(st.floats(-10, 150), min_size=0, max_size=12).map(lambda xs: ",".join(f"{x:g}" for x in xs))
    return st.sampled_from(list(f.choices))


junk = st.one_of(st.none(), st.booleans(), st.just(float("nan")), st.just(float("inf")), st.just(-float("inf")),
                 st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**20, 10**20),
                 st.text(max_size=12), st.sampled_from(["70B", "2T", "4k", "1e400", "-1", "0", "", " ", "1,5", "nan"]),
                 st.lists(st.floats(0, 10), max_size=3))
values = {name: st.one_of(_good_value(f), junk) if f.type != "percents" else _good_value(f) for name, f in SPEC.items()}
scenario_kwargs = st.fixed_dictionaries({}, optional={**{n: values[n] for n in NAMES},
                                                       "unknown_field": st.integers(), "Params": st.floats()})


def check_estimate(scenario):
    est = estimate(scenario)
    costs = est.lines["cost_usd"].to_numpy()
    assert np.isfinite(costs).all() and (costs >= 0).all(), est.lines[~(np.isfinite(costs) & (costs >= 0))]
    total = np.asarray(est.total_cost_usd)  # a list-valued field makes a batch
    assert np.isfinite(total).all() and (total >= 0).all()
    for key in ("training_flops", "gpu_hours", "wall_days", "n_gpus", "mfu"):
        assert np.isfinite(np.asarray(getattr(est, key))).all(), key


@settings(max_examples=4000, **SETTINGS)
@given(scenario_kwargs)
def test_scenario_construction(kwargs):
    try:
        scenario = Scenario(**kwargs)
    except ScenarioError as error:
        assert str(error).startswith(error.field.split("[")[0]) or error.field in ("scenario", "schema_version")
        return
    check_estimate(scenario)


options = [f"--{n.replace('_', '-')}" for n in NAMES]
tokens = st.one_of(st.sampled_from(options + ["--json", "--help", "--lang", "--repo", "--bogus", "-x"]),
                   st.sampled_from(["70B", "2T", "abc", "-1", "nan", "inf", "0.5", "H100", "spot", "zh", "1e400", ""]),
                   st.text(max_size=8))
argv = st.tuples(st.sampled_from(["estimate", "link", "sensitivity", "gpus", "layouts", "frobnicate"]),
                 st.lists(tokens, max_size=8)).map(lambda t: [t[0], *t[1]])


@settings(max_examples=2000, **SETTINGS)
@given(argv)
def test_cli_arguments(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(args)
        except SystemExit as exit:  # --help
            code = exit.code
    assert code in (0, 1, 2)  # 1: bad input or data; 2: usage
    assert "format character" not in err.getvalue()  # help texts are valid argparse templates
    if code == 0 and "--help" in args:
        assert "usage: workbench" in out.getvalue()
        return
    if code in (1, 2):
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("workbench: error:"), err.getvalue()
    elif args[0] == "estimate" and "--json" in args and "--help" not in args:
        result = json.loads(out.getvalue())
        assert result["total_cost_usd"] >= 0 and all(line["cost_usd"] >= 0 for line in result["lines"])


query_value = st.one_of(st.text(max_size=10), st.sampled_from(["70B", "2T", "1e9", "-5", "nan", "H100", "spot", "zh"]),
                        st.floats(allow_nan=True).map(repr))
query_pairs = st.lists(st.tuples(st.sampled_from(NAMES + ["v", "lang", "currency", "foo", "voila-template"]), query_value),
                       max_size=8)


@settings(max_examples=4000, **SETTINGS)
@given(query_pairs, st.booleans())
def test_url_query_strings(pairs, raw):
    query = "&".join(f"{k}={v}" for k, v in pairs) if raw else urlencode(pairs)
    try:
        scenario = Scenario.from_query(query, ignore=("lang", "currency"))
    except ScenarioError:
        scenario = None
    # the app's reader never fails: it keeps what is valid and reports the rest
    values, options, errors = parse_app_query(query)
    kept = Scenario(**values)
    assert options["lang"] in ("en", "zh") and options["currency"] in ("USD", "CNY")
    if scenario is not None:
        check_estimate(scenario)
    else:
        check_estimate(kept)
