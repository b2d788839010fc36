"""Reading a FOCUS export of one million rows and comparing it with a plan: time and peak memory of
workbench.bill.actuals.read_focus and workbench.bill.review.compare, against a baseline measured in the same run (pandas reading the whole file as text, all columns, no checks).

    .venv/bin/python benchmarks/actuals.py [--rows 1000000]

Prints figures; asserts nothing (the target, under 10 s with bounded memory, is in the README).
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

CHILD = """
import sys, time
sys.path.insert(0, {tests!r})
import pandas as pd
started = time.perf_counter()
if {baseline}:
    frame = pd.read_csv({path!r}, dtype=object, keep_default_na=False)
    n = len(frame)
else:
    from workbench.programmes import programme, timeline
    from workbench.bill import review
    from workbench.bill.actuals import read_focus
    plan = timeline.evaluate(programme.example())
    started = time.perf_counter()  # the plan is not part of reading the bill
    result = read_focus({path!r})
    n = len(result.rows)
    assert abs(result.total_usd - {total!r}) < 1e-6 * max(1.0, abs({total!r})), (result.total_usd, {total!r})
    read_s = time.perf_counter() - started
    review.compare(result, plan, start=min(result.rows["month"]), budget_usd=1e6)
seconds = time.perf_counter() - started
if not {baseline}:
    print("read", read_s)
# VmHWM: this process's own peak (ru_maxrss would carry the parent's peak across exec)
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
print(n, seconds, peak)
"""


def run(path, total, baseline):
    code = CHILD.format(tests=str(ROOT / "tests"), path=str(path), total=total, baseline=baseline)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    read = float(out[1]) if out[0] == "read" else None
    out = out[2:] if read is not None else out
    return int(out[0]), float(out[1]), float(out[2]), read


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    from focus_generator import write_export
    with tempfile.TemporaryDirectory() as folder:
        for name in ("export.csv", "export.csv.gz"):
            path = Path(folder) / name
            started = time.perf_counter()
            expected = write_export(path, args.rows, seed=1)
            made = time.perf_counter() - started
            size = path.stat().st_size / 1e6
            n, base_s, base_mb, _ = run(path, expected["total"], True)
            n, ours_s, ours_mb, read_s = run(path, expected["total"], False)
            print(f"{name}: {n:,} rows, {size:,.0f} MB (generated in {made:.1f} s); read_focus and compare {ours_s:.2f} s "
                  f"(of which reading {read_s:.2f} s), peak RSS {ours_mb:,.0f} MB; baseline pandas read of every column as text {base_s:.2f} s, {base_mb:,.0f} MB "
                  f"(ratio {ours_s / base_s:.2f} in time, {ours_mb / base_mb:.2f} in memory); total agrees")


if __name__ == "__main__":
    main()
