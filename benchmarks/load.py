"""Twenty users open the planner 2 s apart on one Voilà server (this machine's 2 cores): when each page renders,
kernel memory, and how fast closed pages free their kernels. CI runs the same check with 6 users
(tests/test_load.py); this prints the larger figures for the README.

    .venv/bin/python benchmarks/load.py [--sessions 20]
"""
import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from test_load import ARRIVAL_SECONDS, run_sessions  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        figures = run_sessions(browser, Path(tempfile.mkdtemp()) / "voila.log", args.sessions)
        browser.close()
    rendered = figures["rendered_after_s"]
    print(f"{args.sessions} sessions arriving {ARRIVAL_SECONDS:g} s apart: all rendered, each this long after it "
          f"arrived: median {statistics.median(rendered):.1f} s, slowest {max(rendered):.1f} s; kernel RSS median "
          f"{figures['rss_median_mb']:.0f} MB, "
          f"{figures['rss_total_mb']:,.0f} MB in all; {figures['kernels_left']} kernels left "
          f"{figures['freed_after_s']:.0f} s after every page closed (the preheated pool keeps 2)")


if __name__ == "__main__":
    main()
