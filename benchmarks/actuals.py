"""Reading FOCUS exports of any size and comparing them with a plan: time and peak memory of
workbench.bill.actuals.read_focus + workbench.bill.review.compare, each in a process of its own, against two
baselines measured in the same run on the same files:

- the floor: a bare DuckDB ``count(*)`` and sum of the cost column of the same files (what reading them at all
  costs);
- the reader before DuckDB (commit 73a31f5, taken from git into a temporary folder), where it can finish
  (``--old-max-rows``: it holds the rows in memory, about 0.4 KB each).

    .venv/bin/python benchmarks/actuals.py                      # 1 M and 20 M CSV rows, 100 M typed Parquet rows
    .venv/bin/python benchmarks/actuals.py --sizes csv:1000000  # one size

The exports are made by tests/focus_generator.py (a million-row base, its months shifted to make each copy a month of
its own) into a temporary folder, with their totals known from the generated values. Prints figures; asserts only
that every total agrees (the targets are in the README).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
OLD_COMMIT = "73a31f5"  # the last reader before DuckDB

PEAK = 'next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024'
OURS = """
import sys, time
from workbench.programmes import programme, timeline
from workbench.bill import review
from workbench.bill.actuals import read_focus
plan = timeline.evaluate(programme.example())
started = time.perf_counter()  # the plan is not part of reading the bill
result = read_focus({path!r})
read_s = time.perf_counter() - started
assert abs(result.total_usd - {total!r}) < 1e-6 * abs({total!r}), (result.total_usd, {total!r})
review.compare(result, plan, start=min(result.rows["month"]), budget_usd=1e9)
print(result.rows_read, read_s, time.perf_counter() - started, {peak})
"""
FLOOR = """
import time, duckdb
started = time.perf_counter()
con = duckdb.connect(config={{"memory_limit": "512MB"}})
con.execute("SET enable_progress_bar = false")
n = con.execute("SELECT count(*), sum(TRY_CAST(EffectiveCost AS DOUBLE)) FROM {scan}").fetchone()[0]
print(n, time.perf_counter() - started, time.perf_counter() - started, {peak})
"""


def run(code: str, env_path: str | None = None) -> tuple[int, float, float, float]:
    import os
    env = dict(os.environ)
    if env_path:
        env["PYTHONPATH"] = env_path
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=env_path or ROOT)
    if done.returncode:
        raise SystemExit(f"a measured run failed:\n{done.stderr[-3000:]}")
    out = done.stdout.strip().splitlines()[-1].split()
    return int(out[0]), float(out[1]), float(out[2]), float(out[3])


def make_base(folder: Path, rows: int) -> tuple[Path, float]:
    """A typed Parquet base of ``rows`` generated rows (one month, 2025-03) and its total."""
    from focus_generator import export_frame
    frame, expected = export_frame(rows, seed=1)
    base = folder / "base.csv"
    frame.to_csv(base, index=False)
    return base, expected["total"]


def shifted(base: Path, k: int) -> str:
    """The base moved ``k`` months later (each end kept its distance from its start: a month later than 28 March is
    28 February, and 29 March's would come before it), typed as providers export Parquet (numbers, timestamps, a map
    of tags)."""
    return (f"SELECT CAST(BilledCost AS DOUBLE) AS BilledCost, CAST(EffectiveCost AS DOUBLE) AS EffectiveCost, "
            f"BillingCurrency, ChargeCategory, "
            f"CAST(ChargePeriodStart AS TIMESTAMP) + INTERVAL {k} MONTH AS ChargePeriodStart, "
            f"CAST(ChargePeriodStart AS TIMESTAMP) + INTERVAL {k} MONTH "
            f"+ (CAST(ChargePeriodEnd AS TIMESTAMP) - CAST(ChargePeriodStart AS TIMESTAMP)) AS ChargePeriodEnd, ProviderName, "
            f"ServiceCategory, ServiceName, ResourceType, CAST(ConsumedQuantity AS DOUBLE) AS ConsumedQuantity, "
            f"CASE WHEN Tags = 'NULL' THEN NULL ELSE CAST(CAST(Tags AS JSON) AS MAP(VARCHAR, VARCHAR)) END AS Tags "
            f"FROM read_csv('{base}', all_varchar=true)")


def make_csv(folder: Path, base: Path, copies: int) -> Path:
    import duckdb
    path = folder / f"export-{copies}.csv"
    months = " UNION ALL ".join(
        f"SELECT * REPLACE (strftime(ChargePeriodStart, '%Y-%m-%dT%H:%M:%SZ') AS ChargePeriodStart, "
        f"strftime(ChargePeriodEnd, '%Y-%m-%dT%H:%M:%SZ') AS ChargePeriodEnd, "
        f"CASE WHEN Tags IS NULL THEN 'NULL' ELSE CAST(to_json(Tags) AS VARCHAR) END AS Tags) FROM ({shifted(base, k)})"
        for k in range(copies))
    duckdb.connect().execute(f"COPY ({months}) TO '{path}' (HEADER, QUOTE '\"')")
    return path


def make_parquet(folder: Path, base: Path, copies: int, per_file: int) -> Path:
    """``copies`` monthly files of ``per_file`` copies of the base each, in Hive-partitioned folders."""
    import duckdb
    con = duckdb.connect()
    out = folder / "parquet"
    for k in range(copies):
        part = out / f"billing_period={k:03d}"
        part.mkdir(parents=True)
        rows = " UNION ALL ".join(shifted(base, k) for _ in range(per_file))
        con.execute(f"COPY ({rows}) TO '{part / 'part-0.parquet'}' (FORMAT parquet)")
    return out


def old_reader(folder: Path) -> str:
    target = folder / "old"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", OLD_COMMIT, "workbench", "data"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return str(target)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="csv:1000000,csv:20000000,parquet:100000000",
                        help="kind:rows, comma-separated (kind csv or parquet; rows a multiple of the base)")
    parser.add_argument("--base-rows", type=int, default=1_000_000)
    parser.add_argument("--old-max-rows", type=int, default=2_000_000)
    args = parser.parse_args()
    print(f"benchmarks/actuals.py, {time.strftime('%Y-%m-%d')}: read_focus + compare; floor: DuckDB count(*) and sum of the cost; "
          f"old: the reader of {OLD_COMMIT}")
    with tempfile.TemporaryDirectory(prefix="bench-actuals-") as name:
        folder = Path(name)
        base, base_total = make_base(folder, args.base_rows)
        old = old_reader(folder)
        for item in args.sizes.split(","):
            kind, rows = item.split(":")
            copies = max(1, int(rows) // args.base_rows)
            started = time.perf_counter()
            if kind == "csv":
                path = make_csv(folder, base, copies)
                scan = f"read_csv('{path}', all_varchar=true)"
                size = path.stat().st_size
            else:
                files = 50 if copies >= 50 else copies
                path = make_parquet(folder, base, files, copies // files)
                scan = f"read_parquet('{path}/*/*.parquet')"
                size = sum(p.stat().st_size for p in path.rglob("*.parquet"))
            made = time.perf_counter() - started
            total = base_total * copies
            n, read_s, ours_s, ours_mb = run(OURS.format(path=str(path), total=total, peak=PEAK))
            _, _, floor_s, floor_mb = run(FLOOR.format(scan=scan, peak=PEAK))
            line = (f"{kind} {n:,} rows, {size / 1e9:,.2f} GB (made in {made:.0f} s): read {read_s:.1f} s, with the "
                    f"comparison {ours_s:.1f} s, peak {ours_mb:,.0f} MB; floor {floor_s:.1f} s, {floor_mb:,.0f} MB "
                    f"(ratio {ours_s / floor_s:.1f})")
            if n <= args.old_max_rows and kind == "csv":
                _, _, old_s, old_mb = run(OURS.replace("result.rows_read", "len(result.rows)").format(
                    path=str(path), total=total, peak=PEAK), env_path=old)
                line += f"; old reader {old_s:.1f} s, {old_mb:,.0f} MB ({old_s / ours_s:.1f}x the time)"
            print(line, flush=True)
            if kind == "csv":
                path.unlink()
            else:
                import shutil
                shutil.rmtree(path)


if __name__ == "__main__":
    main()
