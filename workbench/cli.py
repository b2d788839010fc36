"""``workbench``: the command line.

    workbench estimate [--params 70B --tokens 2T --gpu A100-SXM4-80GB ...] [--json]
    workbench sensitivity [same options as estimate] [--json]
    workbench link [same options as estimate] [--lang zh] [--repo OWNER/NAME]
    workbench gpus [--json]
    workbench serve [scenario options] [--json]
    workbench validate [--json]
    workbench plan --example | workbench plan FILE [--json] [--csv]

Every scenario field is an option (``seq_len`` -> ``--seq-len``); options left out take the default
scenario's values. A command typed wrong exits with status 2, bad input or data with status 1, each with one
line on stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .bill import actuals, review
from .plan import calibration, explore
from .reference import catalog, prices
from .report import links, programme_views, views
from .formulas import mfu
from .programmes import programme, programme_presets, timeline
from .reference.data import DataFileError
from .reference.numbers import compact, plain, power_of_ten
from .plan.estimate import estimate
from .plan.scenario import Scenario, ScenarioError, close_fields, fields, parse_quantity
from .plan.sensitivity import sensitivity


class UsageError(Exception):
    """Bad command-line usage (reported in one line, exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        # no prefixes: --gpus must not quietly become --gpus-per-node
        super().__init__(*args, allow_abbrev=False, **kwargs)

    def error(self, message):
        unknown = re.findall(r"(?<![\w-])--([A-Za-z0-9][\w-]*)", message) if "unrecognized" in message else []
        hints = []
        for flag in unknown:
            close = close_fields(flag.replace("-", "_"))
            if close:
                hints.append(f"--{flag}: did you mean {' or '.join(_option(c) for c in close)}?")
        raise UsageError("; ".join([message, *hints]))


def _shown_default(value) -> str:
    """A default as one would type it: 7B, 1048576, 0.4, 0.0004736, 'empty' for none or empty text."""
    if value is None or value == "":
        return "empty"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e6:
            return str(int(value))
        for digits in range(1, 18):  # the shortest form that reads back as the same number, with no exponent
            text = compact(value, digits)
            try:
                if parse_quantity(text) == value:
                    return text
            except (ValueError, ScenarioError):
                continue
    return str(value)


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add_scenario_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """One option per scenario field (``seq_len`` -> ``--seq-len``), documented from the field table."""
    for f in fields().values():
        unit = f" [{f.unit}]" if f.unit else ""
        text = f"{f.help}{unit} Allowed: {f.allowed()}. Default: {_shown_default(f.default)}."
        parser.add_argument(_option(f.name), dest=f.name, metavar="VALUE", help=text.replace("%", "%%"))
    return parser


def _add_workbook_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--xlsx", metavar="FILE", help="also write a workbook with live formulas (cost = quantity x "
                                                      "unit cost, sums by stage, category and month)")
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="the workbook's language (default en)")
    parser.add_argument("--currency", choices=("USD", "CNY"), default="USD",
                        help="the workbook's display currency (default USD; CNY at the plan's cny_per_usd)")


def _write_workbook(path: str, data: bytes) -> None:
    try:
        Path(path).write_bytes(data)
    except OSError as error:
        raise ValueError(f"--xlsx {path}: cannot write it ({error.strerror or error})") from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="workbench", description="LLM Cost Workbench: what a training run costs, and why. "
                                                   "Exit status: 0 done, 1 bad input or data, 2 usage error.")
    from . import __version__
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    est = _add_scenario_options(commands.add_parser("estimate", help="estimate a scenario (options default to Scenario())"))
    est.add_argument("--json", action="store_true", help="print one JSON object")
    _add_workbook_options(est)
    gpus = commands.add_parser("gpus", help="the accelerator catalog")
    gpus.add_argument("--json", action="store_true", help="print JSON")
    offers = commands.add_parser("prices", help="where a GPU can be had: every price on record, cheapest first, "
                                               "and the typical price a plan gets without a provider")
    offers.add_argument("--gpu", required=True, help="a catalog id or alias (workbench gpus)")
    offers.add_argument("--pricing", choices=prices.PRICING_MODES, help="one pricing mode (default: all)")
    offers.add_argument("--currency", choices=("USD", "CNY"), default="USD", help="the display currency")
    offers.add_argument("--cny-per-usd", type=float, help="the exchange rate for CNY (default: the scenario's)")
    offers.add_argument("--json", action="store_true", help="print JSON")
    lev = _add_scenario_options(commands.add_parser(
        "levers", help="what to change to spend less: each lever's saving, its risk and the risk-adjusted saving, "
                       "ranked (same options as estimate)"))
    lev.add_argument("--programme", metavar="FILE", help="a programme file (.json or .toml) or preset id: its levers "
                                                         "over its horizon, instead of a single scenario's")
    lev.add_argument("--json", action="store_true", help="print JSON")
    sens = _add_scenario_options(commands.add_parser("sensitivity", help="what moves the total most (same options as estimate)"))
    sens.add_argument("--json", action="store_true", help="print JSON")
    link = _add_scenario_options(commands.add_parser("link", help="print links that open the app on a scenario (same options as estimate)"))
    link.add_argument("--lang", choices=("en", "zh"), default="en", help="app language")
    link.add_argument("--currency", choices=("USD", "CNY"), default="USD", help="display currency")
    link.add_argument("--repo", help="GitHub owner/name for Binder (default: the package's Repository URL)")
    link.add_argument("--ref", default="main", help="branch, tag or commit for Binder (default: main)")
    link.add_argument("--base", default=links.LOCAL_APP, help=f"local app URL (default: {links.LOCAL_APP})")
    serve = _add_scenario_options(commands.add_parser(
        "serve", help="serving alone: tokens/s per GPU, batch, GPUs, USD per million input/output tokens "
                      "(same options as estimate)"))
    serve.add_argument("--json", action="store_true", help="print one JSON object")
    app = commands.add_parser("app", help="serve the planner app (Voila) at http://localhost:PORT")
    app.add_argument("--port", type=int, default=8866, help="the port to serve on (default 8866)")
    lay = _add_scenario_options(commands.add_parser(
        "layouts", help="the tensor x pipeline x ZeRO x micro-batch layouts that fit the training cluster, with "
                        "memory per GPU, predicted MFU and GPU-hours, best first (same options as estimate)"))
    lay.add_argument("--all", action="store_true", help="list the layouts that do not fit in memory too")
    lay.add_argument("--top", type=int, default=20, metavar="N", help="list the best N (default 20; 0: all)")
    lay.add_argument("--json", action="store_true", help="print JSON")
    val = commands.add_parser("validate", help="compare with published training runs")
    val.add_argument("--json", action="store_true", help="print JSON")
    plan = commands.add_parser("plan", help="a programme month by month: workstreams, release cycles, serving, staff, "
                                            "budgets and KPIs (workbench plan --example > plan.json)")
    plan.add_argument("file", nargs="?", help="a programme file (.json, or .toml); - reads standard input")
    plan.add_argument("--example", action="store_true", help="print a sample programme file and stop")
    plan.add_argument("--preset", metavar="ID", help="a named programme instead of a file (workbench plan --list-presets)")
    plan.add_argument("--list-presets", action="store_true", help="list the named programmes and stop")
    form = plan.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print one JSON object")
    form.add_argument("--csv", action="store_true", help="print the monthly cost lines as CSV")
    _add_workbook_options(plan)
    act = commands.add_parser("actuals", help="a FOCUS billing export (CSV, CSV.gz or Parquet): totals by category, "
                                              "month and tag, unattributed spend, rejected rows")
    act.add_argument("export", help="the export: a CSV, CSV.gz or Parquet file, a folder of them (monthly files, "
                     "Hive-partitioned folders included) or a quoted glob ('bills/2025-*.parquet'); - reads standard input")
    act.add_argument("--cost-column", default="EffectiveCost", choices=list(actuals.COST_COLUMNS),
                     help="the FOCUS cost column to total (default EffectiveCost: amortised, after discounts)")
    act.add_argument("--rate", action="append", default=[], metavar="CUR=UNITS",
                     help="units of a currency per USD for rows billed in it, e.g. --rate CNY=7.1 (repeatable)")
    act.add_argument("--plan", metavar="PLAN", help="a programme file (.json or .toml), a single scenario's JSON "
                                                    "(the app's scenario download) or a programme preset's id "
                                                    "(assistant-7b), to compare the bill with")
    act.add_argument("--encoding", default="utf-8", help="the CSV's text encoding (default utf-8, as FOCUS asks; "
                                                         "e.g. latin-1 or cp1252 for an older tool's export)")
    act.add_argument("--start", metavar="YYYY-MM", help="the calendar month of the plan's month 1 (default: the "
                                                        "bill's first month)")
    act.add_argument("--budget", metavar="USD", type=_positive_usd, help="a budget for the cloud bill: the day "
                                                                         "each alert line (30/50/80/100 %%) was crossed")
    act.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _print_top(table: pd.DataFrame, by: str, rows: int = 20) -> None:
    """The largest ``rows`` values of a tag table, the unattributed spend always among them, and what is left."""
    from .bill.actuals import UNATTRIBUTED
    order = table.assign(_size=table[by].abs()).sort_values("_size", ascending=False).drop(columns="_size")
    shown = order.head(rows)
    missing = order[(order["value"] == UNATTRIBUTED) & ~order.index.isin(shown.index)]
    shown = pd.concat([shown, missing])
    print(shown.to_string(index=False, float_format=_usd))
    left = order[~order.index.isin(shown.index)]
    if len(left):
        print(f"... and {len(left):,} more values ({_usd(left[by].sum())} USD; --json lists them all)")


def _usd(x: float) -> str:
    """An amount: cents, or three significant digits below one dollar (a sample bill's charges are cents)."""
    return f"{x + 0.0:,.2f}" if abs(x) >= 1 or x == 0 else f"{x:.3g}"


def _positive_usd(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive amount in USD, e.g. 250000")
    return value


def _cmd_actuals(args) -> None:
    rates = {}
    for item in args.rate:
        currency, _, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not re.fullmatch(r"[A-Za-z]{3}", currency.strip()) or not (number > 0 and np.isfinite(number)):
            raise UsageError(f"--rate {item!r}: expected a three-letter currency code and a positive number of its "
                             "units per USD, e.g. --rate CNY=7.1")
        if currency.strip().upper() in rates:
            raise UsageError(f"--rate {item!r}: {currency.strip().upper()} is given twice; give each currency once")
        rates[currency.strip().upper()] = number
    if args.start and not args.plan:
        raise UsageError("--start places a plan's months: give --plan PLAN too")
    plan = review.load_plan(args.plan) if args.plan else None
    if plan is not None and not any(code.strip().upper() == "CNY" for code in rates):
        rates["CNY"] = float(plan.programme.base_scenario.cny_per_usd)  # the plan's own rate unless one is given
    with _stdin_as_file(args.export) as export:
        try:
            result = actuals.read_focus(export, args.cost_column, rates, encoding=args.encoding)
        except ValueError as error:
            if export == args.export:
                raise
            raise type(error)(str(error).replace(str(export), "-")) from None
        if export != args.export:  # read from standard input: named as typed
            result = dataclasses.replace(result, path="-")
    compared = None
    if plan is not None:
        compared = review.compare(result, plan, args.start, args.budget)
    elif args.budget:
        compared = review.bill_alerts(result, args.budget)
    if args.json:
        out = result.to_dict()
        if isinstance(compared, review.Review):
            out.update(compared.to_dict())
        elif compared is not None:
            out["alerts"] = review.records(compared)
        print(json.dumps(out, indent=2, allow_nan=False, default=_json_default))
        return
    total = result.total_usd
    print(f"{result.path}: {result.rows_read:,} charges read, {result.rejected_count:,} rows rejected; "
          f"{result.cost_column} total {total:,.2f} USD")
    print("\nBy category [USD]:")
    print(result.by_category().to_string(float_format=lambda x: f"{x:,.2f}"))
    print("\nBy charge category [USD] (credits and adjustments apart from usage; all in the total):")
    print(result.by_charge_category().to_string(float_format=lambda x: f"{x:,.2f}"))
    for column, values in result.unrecognised().items():
        listed = ", ".join(f"{k!r} ({v:,.2f} USD)" for k, v in list(values.items())[:10])
        print(f"\n{column}: values FOCUS does not define, counted{' as other' if column == 'service_category' else ''}: "
              f"{listed}{' ...' if len(values) > 10 else ''}")
    print("\nBy month and category [USD]:")
    print(result.by_month().to_string(float_format=lambda x: f"{x:,.2f}"))
    for key in result.attribution_keys:
        print(f"\nBy {key} [USD]:")
        _print_top(result.by_tag(key).rename("cost_usd").rename_axis("value").reset_index(), "cost_usd")
    share = f" ({result.unattributed_usd / total:.0%} of the total)" if total else ""
    credits = " (credits without tags make it negative)" if result.unattributed_usd < 0 else ""
    print(f"\nUnattributed (no tag for any of {', '.join(result.attribution_keys)}): "
          f"{result.unattributed_usd:,.2f} USD{share}{credits}")
    if isinstance(compared, review.Review):
        print("\nAgainst the plan, over the months billed [USD] (ratio -: nothing planned):")
        shown = compared.by_category.assign(ratio=compared.by_category["ratio"].map(
            lambda r: "-" if not np.isfinite(r) else f"{r:.3f}"))
        print(shown.to_string(index=False, float_format=lambda x: f"{x + 0.0:,.2f}"))
        months = compared.monthly.groupby(["month", "plan_month"], sort=False)[
            ["planned_usd", "actual_usd", "forecast_usd"]].sum().reset_index()
        print("\nBy month, all billed categories [USD] (forecast: as billed, then fixed lines at plan and elastic "
              "ones at the run-rate):")
        print(months.to_string(index=False, float_format=lambda x: f"{x:,.0f}"))
        print(f"Forecast at the plan's end: {compared.forecast_usd:,.0f} USD on the bill against "
              f"{compared.planned_billed_usd:,.0f} USD the plan puts on it; {compared.forecast_total_usd:,.0f} USD "
              f"with what the bill does not show (staff, annotation at plan) against {compared.planned_total_usd:,.0f} "
              "USD planned in all")
        for flag in compared.flags:
            print(f"  ! {flag['message']}")
        for key, table in compared.tags.items():
            print(f"\nAgainst the plan by {key}, over the months billed [USD]:")
            _print_top(table, "actual_usd")
    if compared is not None:
        table = compared.alerts if isinstance(compared, review.Review) else compared
        if len(table):
            table = table.assign(day=table["day"].map(lambda d: "-" if pd.isna(d) else str(d.date())))
            if "projected_month" in table:
                table["projected_month"] = table["projected_month"].map(lambda m: "-" if pd.isna(m) else m)
            print("\nBudget alert lines on actual spend (day: the first day cumulative spend reached it; -: not yet"
                  + ("; projected_month: when the forecast reaches it" if "projected_month" in table else "") + "):")
            print(table.to_string(index=False, float_format=lambda x: f"{x:,.2f}"))
    if len(result.rejected):
        beyond = [f"{amount:,.2f} {currency} on rows with no exchange rate (--rate {currency}=units per USD)"
                  for currency, amount in result.rejected_no_rate.items()]
        if result.rejected_unreadable:
            beyond.append(f"{result.rejected_unreadable:,} row(s) whose cost could not be read")
        print(f"\nRejected rows: {result.rejected_count:,}, left out of the totals; {result.rejected_usd:,.2f} USD on "
              f"those whose cost could be read{''.join('; ' + b for b in beyond)}:")
        shown = result.rejected.drop(columns=["code"] + ([] if len(result.files) > 1 else ["file"]))
        shown = shown.rename(columns={"row": "line", "cost_usd": "USD"}).assign(
            value=shown["value"].map(lambda v: v if len(v) <= 40 else v[:39] + "…"))
        print(shown.head(50).to_string(
            index=False, na_rep="-", formatters={"USD": lambda x: "-" if not np.isfinite(x) else f"{x:,.2f}"}))
        if len(result.rejected) > 50:
            print(f"... and {len(result.rejected) - 50:,} more problems (--json lists "
                  f"{'them all' if len(result.rejected) < result.listed_limit else f'the first {result.listed_limit:,}'})")


def _cmd_app(args) -> None:
    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: allowed: 1 to 65535")
    from .app import serve
    serve.app(args.port)


@contextlib.contextmanager
def _stdin_as_file(name: str):
    """``-``: standard input spooled to a temporary file the reader can read more than once (its kind told by its
    first bytes: gzip, Parquet or CSV); any other name as it is."""
    if name != "-":
        yield name
        return
    head = sys.stdin.buffer.read(4)
    suffix = ".csv.gz" if head[:2] == b"\x1f\x8b" else ".parquet" if head == b"PAR1" else ".csv"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"stdin{suffix}"
        with path.open("wb") as file:
            file.write(head)
            shutil.copyfileobj(sys.stdin.buffer, file, 1 << 20)
        yield path


def _cmd_plan(args) -> None:
    if args.example or args.list_presets:
        flag = "--example" if args.example else "--list-presets"
        if args.file or args.json or args.csv or args.preset or (args.example and args.list_presets):
            raise UsageError(f"{flag} prints alone; leave out FILE, --preset, --json and --csv")
        if args.example:
            print(programme.example().to_json())
        else:
            table = programme_presets.presets()
            width = max(map(len, table["id"]))
            for row in table.to_dict("records"):
                print(f"{row['id']:<{width}}  {row['label']}\n{'':<{width}}  source: {row['source']}")
        return
    if args.preset is not None:
        if args.file:
            raise UsageError("give a programme FILE or --preset ID, not both")
        ids = list(programme_presets.presets()["id"])
        if args.preset not in ids:
            raise UsageError(f"--preset {args.preset!r} is not a named programme; allowed: {', '.join(ids)}")
        tl = timeline.evaluate(programme_presets.preset(args.preset))
    elif not args.file:
        raise UsageError("plan needs a programme FILE or --preset ID (workbench plan --list-presets lists them; "
                         "workbench plan --example > plan.json writes a file)")
    elif args.file == "-":  # standard input: workbench plan --example | workbench plan -
        raw = sys.stdin.buffer.read(programme.MAX_JSON_CHARS * 4 + 4)
        fmt = "json" if raw.lstrip()[:1] in (b"{", b"[") or not raw.strip() else "toml"
        tl = timeline.evaluate(programme.loads(raw, fmt))
    else:
        tl = timeline.evaluate(programme.load(args.file))
    if args.xlsx:
        from .report import workbook
        _write_workbook(args.xlsx, workbook.plan_workbook(tl, args.currency, args.lang))
    if args.json:
        print(json.dumps(tl.to_dict(), indent=2, allow_nan=False, default=_json_default))
    elif args.csv:
        print(programme_views.monthly_csv(tl), end="")
    else:
        _print_plan(tl)


def _print_plan(tl) -> None:
    p = tl.programme
    print(f"Programme: {p.name}, {p.horizon_months} months ({p.month_label(1)} to {p.month_label(p.horizon_months)}"
          f"{'' if p.start else ', starting next month'}), {len(p.workstreams)} workstream{'s' * (len(p.workstreams) != 1)}, "
          f"{len(p.staff)} staff entr{'ies' if len(p.staff) != 1 else 'y'}")
    print(f"Total: {tl.total_cost_usd:,.0f} USD"
          + (f" (and {tl.beyond_horizon_usd:,.0f} USD after month {p.horizon_months})" if tl.beyond_horizon_usd >= 0.5 else ""))
    first, after = tl.first_run_split()
    if not tl.first_run_workstreams():
        print("No training run: the programme only serves")
    elif tl.total_cost_usd > 0:
        what = ("First training run" if any("pretrain" in w.stages for w in p.workstreams)
                else "First training run (the first fine-tune: no pre-training)")
        print(f"{what}: {first:,.0f} USD ({first / tl.total_cost_usd:.0%}); everything after it: "
              f"{after:,.0f} USD ({after / tl.total_cost_usd:.0%})")
    api = programme_views.paid_api_text(tl)
    if api:
        print(api)
    monthly = tl.monthly()
    monthly["total"] = monthly.sum(axis=1)
    monthly.index = pd.Index(p.month_labels(monthly.index), name="month")
    print("\nCost by month and category [USD]:")
    print(monthly.to_string(float_format=lambda x: f"{x:,.0f}"))
    for key in ("workstream", *tl.tag_keys):
        print(f"\nBy {key} [USD]:")
        print(tl.by_tag(key).to_string(float_format=lambda x: f"{x:,.0f}"))
    if p.budgets:
        alerts = tl.alerts()
        alerts["month"] = alerts["calendar_month"].map(lambda m: "not reached" if m is None else m)
        alerts = alerts.drop(columns="calendar_month").rename(columns={"month": "crossed in"})
        print("\nBudget alert lines (crossed in: the month cumulative spend first reaches the line):")
        print(alerts.to_string(index=False, float_format=lambda x: f"{x:,.0f}"))
    if tl.fleets:
        print("\nFleets (committed GPUs, paid every month of their term; implicit: from the workstreams' pricing):")
        fleets = pd.DataFrame(tl.fleets)[["name", "gpu", "count", "pricing", "start_month", "term_months",
                                          "committed_usd", "in_horizon_usd", "idle_usd", "utilisation"]]
        print(fleets.to_string(index=False, formatters={
            "committed_usd": "{:,.0f}".format, "in_horizon_usd": "{:,.0f}".format, "idle_usd": "{:,.0f}".format,
            "utilisation": lambda x: "-" if x is None or pd.isna(x) else f"{x:.0%}"}))
        owned = [f for f in tl.fleets if f.get("purchase_usd") is not None]
        for f in owned:
            months = f.get("break_even_months")
            bought = ", ".join(f"month {m}" for m, _ in f["purchases"])
            print(f"  {f['name']}: bought for {f['purchase_usd']:,.0f} USD in {bought} (cash), each depreciated over "
                  f"{f['life_months']} months; owning beats renting on demand "
                  + (f"after {months:.0f} months of use at its utilisation" if months is not None
                     else f"not within its {f['life_months']}-month useful life at its utilisation"))
        if owned:
            cash = tl.cash()
            print(f"  Cash paid in the horizon: {cash['cash_cumulative_usd'].iloc[-1]:,.0f} USD "
                  f"(accounting view: {cash['accounting_cumulative_usd'].iloc[-1]:,.0f} USD)")
    kpis = tl.kpis()[["usd_per_trained_token", "usd_per_million_served_tokens", "productive_gpu_hour_share",
                      "fixed_share"]]
    kpis = kpis.assign(usd_per_trained_token=kpis["usd_per_trained_token"] * 1e6).rename(
        columns={"usd_per_trained_token": "usd_per_million_trained_tokens"})  # the app's unit
    kpis.index = pd.Index(p.month_labels(kpis.index), name="month")
    print("\nUnit costs by month (-: nothing to divide by that month):")
    print(kpis.to_string(na_rep="-", formatters={
        "usd_per_million_trained_tokens": lambda x: "-" if pd.isna(x) else f"{x:,.3f}",
        "usd_per_million_served_tokens": lambda x: "-" if pd.isna(x) else f"{x:,.3f}",
        "productive_gpu_hour_share": lambda x: "-" if pd.isna(x) else f"{x:.1%}",
        "fixed_share": lambda x: "-" if pd.isna(x) else f"{x:.1%}"}))
    for warning in tl.warnings:
        print(f"\nWarning: {warning}")


def _print_estimate(est) -> None:
    s, d = est.scenario, est.details
    params, tokens = compact(s.params, 4), compact(s.tokens, 4)
    what = {"pretrain": f"{params} parameters on {tokens} tokens",
            "open_weights": f"open weights of {params} parameters, fine-tuned and served (no pre-training)",
            "serve_only": f"open weights of {params} parameters, served (no training)"}[s.plan_kind]
    print(f"Scenario: {what}, seq_len {s.seq_len}, {s.gpu}, {s.pricing} pricing")
    usd, cny = f"{est.total_cost_usd:,.0f} USD", f"{est.total_cost_usd * d['cny_per_usd']:,.0f} CNY"
    first, second = (cny, usd) if d.get("price_currency") == "CNY" else (usd, cny)  # the currency the GPUs bill in
    rows = [("Total cost", f"{first} = {second} (at {d['cny_per_usd']:g} CNY/USD)")]
    if s.region or s.provider != "median":
        charged = d.get("price_region") or ""
        where = (f", region {s.region}" if s.region else
                 f", region {charged} (its cheapest for the GPU; no region chosen)" if charged else ", no region")
        rows.append(("Priced at", f"{s.provider}{where}" + (f"; data in {s.data_region}" if s.data_region else "")))
    commitment = views.commitment_line(est, first.split()[-1])
    if commitment:  # a cluster rented for a term, as its bill reads
        rows.append(("Rented for a term", commitment.split(": ", 1)[1]))
    if s.plan_kind == "pretrain":
        rows += [("Pre-training compute", f"{power_of_ten(est.training_flops, 4)} FLOP"),
                 ("Pre-training GPU-hours", f"{est.gpu_hours:,.0f} GPU-h at MFU {est.mfu:.3f}"),
                 ("GPUs", f"{est.n_gpus:,.0f}"),
                 ("Wall-clock", f"{est.wall_days:,.1f} days of pre-training compute; {d['training_days_total']:,.1f} "
                                "days for all training stages with failures and checkpoints")]
    elif s.plan_kind == "open_weights":
        rows += [("Fine-tuning GPU-hours", f"{est.gpu_hours:,.0f} GPU-h (fine-tuning, preference tuning, evaluation) "
                                           f"at MFU {est.mfu:.3f}"),
                 ("GPUs", f"{est.n_gpus:,.0f}"),
                 ("Wall-clock", f"{est.wall_days:,.1f} days of training compute; {d['training_days_total']:,.1f} "
                                "days with failures and checkpoints")]
    if s.plan_kind != "serve_only":
        rows += [("Memory per GPU", f"{d['memory_bytes_per_gpu'] / 2**30:,.1f} GiB of {d['gpu_memory_bytes'] / 2**30:,.0f} "
                                    "GiB " + _known(d["min_gpus_to_fit"], "(fits from {:,.0f} GPUs)",
                                                    "(does not fit at any GPU count: see the warning)"))]
    if s.plan_kind == "pretrain":
        rows += [("Failures", f"{d['pretrain_interruptions']:,.1f} interruptions expected in pre-training "
                              + _known(d["cluster_mtbf_hours"], "(one every {:,.1f} h)", "(failure rate 0)") + "; "
                              + _known(d["checkpoint_interval_hours"] * 60, "checkpoint every {:,.0f} min",
                                       "no periodic checkpoint needed"))]
    rows += [("Serving", _known(d["serving_gpus"], "{:,.1f} GPUs", "does not fit (see the warning)") + ", "
                        + _known(d["serving_cost_per_month_usd"], "{:,.0f} USD/month", "-") + ", "
                        + _known(d["serving_cost_per_million_input_tokens_usd"], "{:,.3f} USD per million input", "-")
                        + " / " + _known(d["serving_cost_per_million_output_tokens_usd"], "{:,.3f} output tokens", "-")
                        + f" (included for {s.serving_months:g} months; details: workbench serve)")]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    kept = lambda table: {k: v for k, v in table.items() if v != 0 or s.plan_kind == "pretrain"}  # noqa: E731
    print("\nBy stage (USD):  " + "   ".join(f"{k} {v:,.0f}" for k, v in kept(est.totals("stage")).items()))
    print("Split (USD):     " + "   ".join(f"{k} {v:,.0f}" for k, v in kept(est.totals("group")).items()))
    print("Fixed / elastic: " + "   ".join(f"{k} {v:,.0f}" for k, v in est.totals("cost_type").items()))
    lines = est.lines
    shown = lines[lines["cost_usd"] != 0]
    print("\nCost lines:")
    table = shown[["stage", "category", "item", "quantity", "unit", "unit_cost_usd", "cost_usd"]].copy()
    table["quantity"] = table["quantity"].map(lambda q: f"{q:,.1f}")
    table["unit_cost_usd"] = table["unit_cost_usd"].map(lambda q: plain(q))
    table["cost_usd"] = table["cost_usd"].map(lambda q: f"{q:,.0f}")
    print(table.to_string(index=False))
    zero = lines[lines["cost_usd"] == 0]
    if len(zero):
        print("\nZero lines, and why:")
        for line in zero.itertuples():
            print(f"  {line.stage}/{line.category}/{line.item}: {line.source}")
    print("\nFormulas and sources:")
    for line in shown.itertuples():
        print(f"  {line.stage}/{line.category}/{line.item}: {line.formula}; {line.source}")
    from .formulas import budget
    alerts = budget.crossings(est)
    basis = "budget_usd" if s.budget_usd is not None else "the plan's total (no budget_usd given)"
    print(f"\nBudget alerts against {basis}:")
    for row in alerts.itertuples():
        when = views.when_crossed(row.day, row.date, row.crossed)
        print(f"  {row.alert_percent:g} % = {row.threshold_usd:,.0f} USD: {when}")
    if est.defaults_used:
        print("\nDefaults resolved for this scenario:")
        for name, text in est.defaults_used.items():
            print(f"  {name}: {text}")
    print("\nSources of the defaults used (fields not given):")
    changed = s.changes()
    for f in fields().values():
        if f.name not in changed and f.default is not None and f.source:
            unit = f" {f.unit}" if f.unit else ""
            print(f"  {f.name} = {f.default}{unit}: {f.source}")
    for warning in est.warnings:
        print(f"\nWarning: {warning}")


def _known(value, template: str, missing: str) -> str:
    """``template`` filled with ``value``, or ``missing`` where the figure does not exist (NaN or infinite)."""
    return template.format(value) if np.isfinite(value) else missing


def _scenario(args) -> Scenario:
    given = {name: getattr(args, name) for name in fields() if getattr(args, name, None) is not None}
    if "provider" in given and "pricing" not in given and "price_per_gpu_hour" not in given:
        # a provider renting the GPU only another way (by the month) is priced so, as the app does, and said so
        try:
            gpu = catalog.resolve_gpu(str(given.get("gpu") or fields()["gpu"].default))
            usual = prices.usual_mode(gpu, str(given["provider"]).strip().lower(), fields()["pricing"].default)
        except (catalog.UnknownGpuError, DataFileError):
            usual = None  # the scenario's own checks name the problem
        if usual and usual != fields()["pricing"].default:
            given["pricing"] = usual
            print(f"workbench: note: {str(given['provider']).strip().lower()} rents {gpu} only {usual.replace('_', ' ')} on record: priced "
                  f"so (--pricing to choose)", file=sys.stderr)
    return Scenario(**given)


def _cmd_sensitivity(args) -> None:
    table = sensitivity(_scenario(args))
    if args.json:
        print(table.to_json(orient="records", indent=2))
        return
    shown = table[["input", "unit", "base_value", "low_value", "high_value", "low_total_usd", "high_total_usd",
                   "swing_usd"]]
    print(shown.to_string(index=False, float_format=lambda x: plain(x)))


def _cmd_levers(args) -> None:
    from .programmes.levers import levers
    if args.programme:
        from .programmes.programme_presets import presets, preset
        given = [name for name in fields() if getattr(args, name) is not None]
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} is a scenario option; with --programme the programme "
                             "file holds its scenarios: leave the scenario options out")
        table = levers(preset(args.programme) if args.programme in presets().index else programme.load(args.programme))
    else:
        table = levers(_scenario(args))
    if args.json:
        print(json.dumps([{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
                          for row in table.to_dict("records")], indent=2, allow_nan=False, default=_json_default))
        return
    usable = table[table["applicable"]]
    print("Levers, ranked by risk-adjusted saving [USD] (saving: if nothing goes wrong; risk: the expected cost of "
          + ("what may; work in the horizon and after it, serving at the plan's served tokens)\n" if args.programme
             else "what may; days: training days saved)\n"))
    columns = ["lever", "saving_usd", "risk_usd", "risk_adjusted_saving_usd", "days_saved", "changes"]
    if (usable["value_of_days_usd"] != 0).any():  # a day has a price (delay_cost_usd_per_day): ranked with it
        columns.insert(5, "value_of_days_usd")
        print("(ranked by risk-adjusted saving plus the value of the days saved, at delay_cost_usd_per_day)")
    shown = usable[columns].astype({"risk_usd": object})
    shown.loc[~usable["risk_priced"], "risk_usd"] = "not priced"  # stated below, with its source
    if shown["days_saved"].isna().all():  # a programme's months are its own
        shown = shown.drop(columns="days_saved")
    print(shown.to_string(index=False, float_format=lambda x: f"{x:,.0f}" if abs(x) >= 10 else f"{x:,.2f}"))
    print("\nRisks:")
    for row in usable.itertuples():
        print(f"  {row.lever}: {row.risk} ({row.source})")
        for warning in row.crosses:
            print(f"    ! crosses a boundary: {warning}")
    skipped = table[~table["applicable"]]
    if len(skipped):
        print("\nNot applicable here: " + "; ".join(f"{r.lever} ({r.why_not})" for r in skipped.itertuples()))


def _cmd_link(args) -> None:
    scenario = _scenario(args)
    options = {"lang": args.lang, "currency": args.currency}
    print(f"Binder:  {links.binder_app_url(scenario, args.repo, args.ref, **options)}")
    print(f"Local:   {links.local_url(scenario, args.base, **options)}")


def _cmd_serve(args) -> None:
    est = estimate(_scenario(args))
    summary = est.serving_summary()
    if args.json:
        print(json.dumps(summary, indent=2, allow_nan=False, default=_json_default))
        return
    s, d = est.scenario, est.details

    def usd(name, template="{:,.4f} USD"):
        return _known(d[name], template, "-")

    rows = [
        ("Model", f"{compact(s.params, 4)} parameters ({s.weight_precision} weights, {s.kv_cache_precision} KV cache) on {s.gpu}"),
        ("Requests", f"{s.requests_per_day:,.0f}/day, {s.input_tokens_per_request:,.0f} input + "
                     f"{s.output_tokens_per_request:,.0f} output tokens, peak {s.peak_to_average:g}x average, "
                     f"{s.serving_provisioning} provisioning"),
        ("Replica", _known(d["serving_replica_gpus"], "{:,.0f} GPUs", "-") + ", batch "
                    + views.format_batch(d["serving_batch"]) + f" (limited by {d['serving_batch_limit']})"),
        ("Latency", _known(d["serving_tpot_ms"], "{:,.1f} ms per output token", "-") + ", "
                    + _known(d["serving_ttft_s"], "{:,.3f} s prefill of a prompt", "-")),
        ("Throughput", _known(d["serving_tokens_per_second_per_gpu"], "{:,.0f} tokens/s per GPU", "-") + " ("
                       + _known(d["serving_output_tokens_per_second_per_gpu"], "{:,.0f} output", "-") + ") at full load"),
        ("GPUs", _known(d["serving_gpus"], "{:,.1f} on average", "-") + ", "
                 + _known(d["serving_gpus_peak"], "{:,.0f} at the peak", "-")
                 + f", at {d['price_per_gpu_hour']:,.3f} USD/GPU-h"),
        ("Utilisation", _known(d["serving_utilisation"], "{:.0%}", "-") + " of the provisioned capacity used over the day"
                        + (" (the rest is the traffic's peak and min_replicas)" if np.isfinite(d["serving_utilisation"])
                           and d["serving_utilisation"] < 0.8 else "")),
        ("Input tokens", usd("serving_cost_per_million_input_tokens_usd", "{:,.4f} USD per million")),
        ("Output tokens", usd("serving_cost_per_million_output_tokens_usd", "{:,.4f} USD per million")),
        ("Blended", usd("serving_cost_per_million_tokens_usd", "{:,.4f} USD per million tokens")),
        ("Per request", usd("serving_cost_per_request_usd", "{:,.6f} USD")),
        ("Per month", usd("serving_cost_per_month_usd", "{:,.0f} USD of GPU time")),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    print(f"\nGPU cost only, before the engineering redundancy factor ({s.redundancy_factor:g}x in `workbench "
          "estimate`); egress, request logs, power and operations are lines of `workbench estimate --serving-months N`.")
    for warning in summary["warnings"]:
        print(f"\nWarning: {warning}")


def _cmd_estimate(args) -> None:
    est = estimate(_scenario(args))
    if args.xlsx:
        from .plan.uncertainty import monte_carlo
        from .programmes.levers import levers
        from .report import workbook
        _write_workbook(args.xlsx, workbook.estimate_workbook(
            est, args.currency, args.lang, mc=monte_carlo(est.scenario, n=20_000), lever_table=levers(est.scenario)))
    if args.json:
        print(json.dumps(est.to_dict(), indent=2, allow_nan=False, default=_json_default))
    else:
        _print_estimate(est)


def _json_default(x):
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    raise TypeError(type(x).__name__)


def _cmd_prices(args) -> None:
    try:
        gpu = catalog.resolve_gpu(args.gpu)
    except catalog.UnknownGpuError as error:
        raise ValueError(f"--gpu: {error}") from None
    field = fields()["cny_per_usd"]
    rate = args.cny_per_usd if args.cny_per_usd is not None else float(field.default)
    if not (np.isfinite(rate) and field.min <= rate <= field.max):  # the range a scenario's rate has
        raise ValueError(f"--cny-per-usd {args.cny_per_usd}: is out of range; allowed: a number from {field.min:g} "
                         f"to {field.max:g}")
    table = prices.offers(gpu, args.pricing, rate)
    # in the display currency: a price billed in it as it is, another converted at the rate
    table.insert(7, "display_per_gpu_hour", prices.convert(table["price_per_gpu_hour"].to_numpy(),
                                                           table["currency"].to_numpy(), args.currency, rate)
                 if len(table) else [])
    mode = args.pricing or "on_demand"
    try:  # what the engine itself charges a plan without a provider, and why
        quote = prices.lookup(gpu, mode)
        typical = prices.convert(quote.price, quote.currency, args.currency, rate)
    except prices.PriceNotFoundError:
        quote = typical = None
    if args.json:
        print(json.dumps({"gpu": gpu, "currency": args.currency, "cny_per_usd": rate,
                          "typical_per_gpu_hour": typical, "typical_source": quote.source if quote else None,
                          "offers": json.loads(table.to_json(orient="records"))}, indent=2))
        return
    if table.empty:
        print(f"No {args.pricing + ' ' if args.pricing else ''}offer on record for {gpu}"
              + (f"; a plan without a provider pays {typical:,.2f} {args.currency} an hour ({mode}): {quote.source}."
                 if quote is not None else ": give --price-per-gpu-hour to estimate with it (data/prices.csv lists the "
                 "offers on record)."))
        return
    billed = [f"{p:,.2f} {c}" for p, c in zip(table["price_per_gpu_hour"], table["currency"])]
    shown = pd.DataFrame({"provider": table["provider"], "region": table["region"].replace("", "-"),
                          "pricing": table["mode"], "billed/GPU-h": billed,
                          f"{args.currency}/GPU-h": table["display_per_gpu_hour"].map(lambda v: f"{v:,.2f}"),
                          **({"as quoted": ["{0:,.0f} {2}/{1}-GPU month".format(*prices.instance_month(p, n), c)
                                            if m == "monthly" else ""
                                            for p, c, n, m in zip(table["price_per_gpu_hour"], table["currency"],
                                                                  table["gpus_per_instance"], table["mode"])]}
                             if (table["mode"] == "monthly").any() else {}),
                          "as of": table["as_of"], "confidence": table["confidence"],
                          "source": table["source"].str.slice(0, 50)})
    print(f"Offers on record for {gpu}, cheapest first ({args.currency}"
          + (f"; other currencies at {rate:g} CNY/USD" if (table["currency"] != args.currency).any() else "") + "):")
    print(shown.to_string(index=False))
    if quote is not None:
        print(f"\nA plan without a provider pays {typical:,.2f} {args.currency} an hour ({mode}): {quote.source}. "
              "Choose one with --provider and --region. Region: where the offer's source names one; confidence: "
              "verified (the provider's page), transcribed (a dated copy of it), undated (a copy whose date is "
              "unknown), assumed (not an offer). Sources in full: data/prices.csv.")

def _cmd_gpus(args) -> None:
    table = catalog.accelerators()[["id", "vendor", "generation", "memory_gb", "peak_bf16_dense_tflops",
                                    "peak_fp16_dense_tflops", "peak_fp8_dense_tflops", "tdp_w", "nvlink_gb_per_s",
                                    "network_gbps_per_node"]].copy()
    table["kernel_efficiency"] = np.round(mfu.kernel_efficiency(table["id"].to_numpy()), 3)
    table["kernel_basis"] = [b.split(":")[0] for b in mfu.basis(table["id"].to_numpy())]
    # the price a plan gets without a provider (provider=median): each card's offers against the same providers'
    quotes = {}
    for gpu in table["id"]:
        try:
            quotes[gpu] = prices.lookup(gpu)
        except prices.PriceNotFoundError:
            pass
    # in the currency its offers are billed in (a card sold only by Chinese clouds: CNY)
    table["typical_on_demand"] = table["id"].map({g: q.price for g, q in quotes.items()})
    table["currency"] = table["id"].map({g: q.currency for g, q in quotes.items()})
    table["offers"] = table["id"].map(prices.prices().query("mode == 'on_demand'").groupby("sku").size()).fillna(0)
    if args.json:
        print(table.to_json(orient="records", indent=2))
        return
    print(table.to_string(index=False, na_rep="-", float_format=lambda x: f"{x:g}"))
    print("\nPeaks are dense TFLOPS; links and sources: data/accelerators.csv. Prices: data/prices.csv; the typical "
          "on-demand price is what a plan gets without a provider (median polish over GPUs and providers).")
    print("kernel_efficiency: the share of peak a wide model's matmuls reach before the layout's communication and "
          "bubbles (data/mfu_model.csv; workbench validate); extrapolated: no published run of that generation.")


def _network_words(scenario) -> str:
    """The inter-node network a layout is evaluated on: the plan's, else the SKU's reference server's."""
    if scenario.network_gbps_per_node is not None:
        return f"{scenario.network_gbps_per_node:,.0f} Gb/s per node"
    gbps = float(catalog.spec(scenario.gpu, "network_gbps_per_node"))
    return f"{gbps:,.0f} Gb/s per node ({catalog.spec(scenario.gpu, 'network_reference')})"


def _cmd_layouts(args) -> None:
    scenario = _scenario(args)
    if args.top < 0:
        raise ScenarioError("top", args.top, "is negative", "0 (all) or a whole number of layouts")
    table = explore.layouts(scenario, include_unfit=args.all)
    table = table.head(args.top) if args.top else table
    if args.json:
        print(table.to_json(orient="records", indent=2))
        return
    est = estimate(scenario)
    print(f"Layouts of {est.n_gpus:,.0f} {scenario.gpu} for {compact(scenario.params, 4)} parameters, "
          f"{compact(scenario.tokens, 4)} tokens in sequences of {scenario.seq_len:,.0f}, global batch "
          f"{compact(est.details['global_batch_tokens_used'], 3)} tokens, "
          f"{_network_words(scenario)} (the plan uses TP {est.details['tensor_parallel_used']:.0f} x PP {est.details['pipeline_parallel_used']:.0f} "
          f"x DP {est.details['data_parallel']:,.0f}, ZeRO-{est.details['zero_stage_used']:.0f}):")
    if table.empty:
        print("  none fits in memory; workbench layouts --all lists them with the memory each needs.")
        return
    shown = pd.DataFrame({
        "TP": table["tensor_parallel"], "PP": table["pipeline_parallel"], "DP": table["data_parallel"],
        "ZeRO": table["zero_stage"], "micro-batch": table["micro_batch_size"],
        "memory/GPU": [f"{m:,.1f} of {c:,.0f} GiB" for m, c in zip(table["memory_gib_per_gpu"], table["capacity_gib"])],
        "fits": np.where(table["fits"], "yes", "no"), "MFU": table["mfu"].map(lambda v: f"{v:.3f}"),
        "GPU-hours": table["gpu_hours"].map(lambda v: f"{v:,.0f}"), "days": table["wall_days"].map(lambda v: f"{v:,.1f}"),
        "bubble": table["pipeline_bubble"].map(lambda v: f"{v:.1%}"),
        "TP traffic": table["tensor_parallel_overhead"].map(lambda v: f"{v:.1%}"),
        "PP traffic": table["pipeline_traffic_overhead"].map(lambda v: f"{v:.1%}"),
        "gradient sync": table["data_parallel_overhead"].map(lambda v: f"{v:.1%}")})
    print(shown.to_string(index=False))
    print("\nMFU: kernel efficiency x engineering scale (x experts' share for a mixture of experts) x per-layer fixed "
          "time x cluster size x (1 - bubble) / (1 + each "
          "traffic share); the traffic columns are time added per unit of compute (workbench.formulas.parallelism, "
          "workbench.formulas.mfu). Layouts whose smallest step exceeds the planned global batch come last.")


def _cmd_validate(args) -> None:
    table = calibration.comparison()
    summary = calibration.summary(table)
    if args.json:
        print(json.dumps({"runs": json.loads(table.to_json(orient="records")), "summary": summary,
                          "parameters": json.loads(mfu.model_table().to_json(orient="records"))}, indent=2))
        return
    shown = table[["name", "gpu", "n_gpus", "layout", "reported_gpu_hours", "estimated_gpu_hours", "mfu_prior",
                   "implied_mfu", "error", "error_leave_one_out", "error_epoch_0375"]].copy()
    shown["n_gpus"] = [f"{n:,.0f}" + ("" if published else " (sized)")
                       for n, published in zip(table["n_gpus"], table["n_gpus_published"])]
    shown["layout"] = [layout + ("" if fits else " *") for layout, fits in zip(table["layout"], table["layout_fits"])]
    for column in ("error", "error_leave_one_out", "error_epoch_0375"):
        shown[column] = shown[column].map(lambda e: "-" if pd.isna(e) else f"{e:+.1%}")
    for column in ("reported_gpu_hours", "estimated_gpu_hours"):
        shown[column] = shown[column].map(lambda h: "-" if pd.isna(h) else f"{h:,.0f}")
    print(shown.to_string(index=False, float_format=lambda x: f"{x:.3f}", na_rep="-"))
    print(f"\nOver {summary['runs']} runs with reported GPU-hours:      median |error|   within +-30 %")
    for label, column in (("workbench, parameters as shipped", "error"),
                          ("workbench, refitted leaving each out", "error_leave_one_out"),
                          ("6ND at constant MFU 0.375 (Epoch)", "error_epoch_0375")):
        print(f"  {label:<38} {summary['median_abs_' + column]:>12.1%} {summary['within_30_' + column]:>14.0%}")
    print(f"  frontier runs (>= 10^24 FLOP, GPU count published): worst leave-one-out error "
          f"{summary['frontier_max_abs_error_leave_one_out']:.1%} over {summary['frontier_runs']} runs")
    if not table["layout_fits"].all():
        print("\n*: the layout does not fit in memory as this workbench models it (no expert parallelism, the run's "
              "own memory savings unknown); its estimate assumes it fits: "
              + ", ".join(table.loc[~table["layout_fits"], "name"]) + ".")
    print("\n(sized): no GPU count published; the cluster is sized to the wall-clock of published runs of that "
          "compute, as for any plan. GPU-hours include the interruptions and checkpoints the estimate adds, except for "
          "runs whose published hours are compute only (hours_scope steady in data/published_runs.csv).")
    print("MFU: kernel efficiency (per generation) x engineering scale (the run's compute) x per-layer fixed time x "
          "cluster size x (1 - pipeline bubble) / (1 + tensor-parallel, pipeline and gradient traffic) on the run's "
          "layout (workbench.formulas.mfu), x the experts' share for a mixture of experts. The engineering scale holds "
          "each left-out run within the others' compute; a left-out mixture-of-experts run takes the others' share.")
    print("Fitted parameters (data/mfu_model.csv; low and high: quartiles or leave-one-out range):")
    params = mfu.model_table()[["parameter", "generation", "value", "low", "high", "n_runs", "unit"]]
    print(params.to_string(index=False, na_rep="-", float_format=lambda x: compact(x, 4)))


def _on_the_command_line(error: Exception) -> str:
    """The error as a command-line user reads it: a scenario field named by its option (``--price-per-gpu-hour``)."""
    text = str(error)
    if not isinstance(error, ScenarioError):
        return text
    spec = fields()
    flag = error.field.split("[")[0]
    if flag in spec:
        text = f"{text} (option --{flag.replace('_', '-')})"
    # "set price_per_gpu_hour", "or provider=median": the options to type instead
    return re.sub(r"\b(set|or) ([a-z0-9_]+)\b(=?)",
                  lambda m: f"{m[1]} --{m[2].replace('_', '-')}{' ' if m[3] else ''}" if m[2] in spec else m[0], text)


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)  # --help and --version first: they need no data checked
        from .app.tables import check_all
        check_all()  # a bad data folder is refused before any command, with its file, row and column
        {"estimate": _cmd_estimate, "sensitivity": _cmd_sensitivity, "levers": _cmd_levers, "link": _cmd_link, "gpus": _cmd_gpus, "prices": _cmd_prices,
         "validate": _cmd_validate, "layouts": _cmd_layouts, "serve": _cmd_serve, "plan": _cmd_plan,
         "actuals": _cmd_actuals, "app": _cmd_app}[args.command](args)
    except (UsageError, ScenarioError, DataFileError, ValueError) as error:  # ActualsError, ReviewError too
        # one line whatever the user typed: control characters are shown escaped
        message = "".join(c if c.isprintable() else repr(c)[1:-1] for c in _on_the_command_line(error))
        print(f"workbench: error: {message}", file=sys.stderr)
        return 2 if isinstance(error, UsageError) else 1  # 2: how it was typed; 1: what it was given
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
