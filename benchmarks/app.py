"""Planner app figures: server-side recompute time, page time until interactive (cold and with preheated
kernels, against a one-slider baseline notebook served the same way), kernel memory, and in Chromium the time
from a slider's key press to the changed chart, with the kernel's part of it.

    .venv/bin/python benchmarks/app.py [--loads 5]

Prints figures; asserts nothing (targets are in the README's performance section).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS, start_voila, stop  # noqa: E402


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def recompute_times(n=60):
    from workbench.app.ui import Planner
    planner = Planner()
    times = []
    for i in range(n):
        planner.values["tokens"] = 2e12 if i % 2 else 2.1e12  # alternate so that every call recomputes
        planner.recompute()
        times.append(planner.last_recompute_ms)
    render = []
    for i in range(20):
        planner.values["tokens"] = 2e12 if i % 2 else 2.1e12
        started = time.perf_counter()
        planner.recompute()
        render.append((time.perf_counter() - started) * 1000)
    return times, render


def kernel_rss_mb(server_pid):
    """RSS of each kernel process started by the Voilà server [MB]."""
    children = subprocess.run(["pgrep", "-P", str(server_pid)], capture_output=True, text=True).stdout.split()
    out = []
    for pid in children:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_text()
        except OSError:
            continue
        if "ipykernel" in cmdline:
            out.append(int(next(l for l in status.splitlines() if l.startswith("VmRSS")).split()[1]) / 1024)
    return out


def time_to_interactive(url, selector, loads, browser, pause_seconds=1.5):
    """Seconds from navigation to ``selector`` on each of ``loads`` page loads, ``pause_seconds`` apart."""
    times = []
    for _ in range(loads):
        context = browser.new_context()
        page = context.new_page()
        started = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.wait_for_selector(selector, timeout=120_000)
        times.append(time.perf_counter() - started)
        page.goto("about:blank")
        context.close()
        time.sleep(pause_seconds)
    return times


def slider_to_chart(url, browser, moves=20):
    """[(ms from the key press on the Parameters slider to the chart drawn with the new data, kernel ms)]."""
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    page.goto(url, wait_until="commit")
    page.wait_for_selector(".wb-charts svg text", timeout=120_000)
    page.wait_for_selector(".wb-compute-ms", timeout=120_000)
    # the input event's time, taken in the page's own clock as the key goes down
    page.evaluate("document.addEventListener('keydown', () => { window.wbInputAt = performance.now(); }, true)")
    handle = page.locator(".wb-field-params .noUi-handle")
    handle.focus()
    out = []
    for i in range(moves):
        draws = page.evaluate("document.querySelector('.wb-charts').dataset.wbDraws")
        renders = page.get_attribute("span.wb-timing", "data-renders")
        handle.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        page.wait_for_function(f"document.querySelector('.wb-charts').dataset.wbDraws !== {draws!r}", timeout=60_000)
        page.wait_for_function(f"document.querySelector('span.wb-timing').dataset.renders !== {renders!r}", timeout=60_000)
        browser_ms = page.evaluate("Number(document.querySelector('.wb-charts').dataset.wbDrawnAt) - window.wbInputAt")
        kernel_ms = float(page.inner_text(".wb-compute-ms")) + float(page.inner_text(".wb-render-ms"))
        out.append((browser_ms, kernel_ms))
        time.sleep(0.3)
    context.close()
    return out


def programme_edit_to_chart(url, browser, preset, edits=10):
    """[ms from the Enter key on an editor box (staff FTE, alternating) to the programme charts drawn anew] for a
    programme preset."""
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    page.goto(f"{url}?view=programme&programme={preset}", wait_until="commit")
    page.wait_for_selector(".wb-programme-charts svg text", timeout=120_000)
    page.locator(".wb-editor .jupyter-widget-Collapse-header").nth(2).click()  # the staff section
    page.evaluate("document.addEventListener('keydown', () => { window.wbInputAt = performance.now(); }, true)")
    box = page.locator(".wb-ed-staff-0-fte input").first
    out = []
    for i in range(edits):
        draws = page.evaluate("document.querySelector('.wb-programme-charts').dataset.wbDraws")
        box.fill(str(6 + i % 2))
        box.press("Enter")
        page.wait_for_function("d => document.querySelector('.wb-programme-charts').dataset.wbDraws !== d", arg=draws,
                               timeout=60_000)
        out.append(page.evaluate("Number(document.querySelector('.wb-programme-charts').dataset.wbDrawnAt) "
                                 "- window.wbInputAt"))
        time.sleep(0.3)
    context.close()
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args()

    from workbench import estimate
    started = time.perf_counter(); [estimate() for _ in range(50)]
    estimate_ms = (time.perf_counter() - started) / 50 * 1000
    recompute, render = recompute_times()
    print(f"estimate() default scenario: {estimate_ms:.1f} ms mean")
    print(f"planner recompute (estimate + sensitivity + size curve + 1,000-draw Monte Carlo): p50 {percentile(recompute, 50):.1f} ms, "
          f"p95 {percentile(recompute, 95):.1f} ms (target < 30 ms)")
    print(f"planner recompute + redraw of every widget: p50 {percentile(render, 50):.0f} ms, p95 {percentile(render, 95):.0f} ms")

    from playwright.sync_api import sync_playwright
    baseline = Path(tempfile.mkdtemp()) / "baseline.ipynb"
    baseline.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                               "source": "import ipywidgets as w\nw.IntSlider(description='x')"}],
                                    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                                    "nbformat": 4, "nbformat_minor": 5}))
    results = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)  # offline: loopback only
        for label, notebook, selector, extra in (
                ("baseline (one slider), cold", baseline, ".widget-slider", ["--preheat_kernel=False"]),
                ("planner, cold", None, ".wb-charts svg text", ["--preheat_kernel=False"]),
                ("planner, preheated pool of 2", None, ".wb-charts svg text", ["--preheat_kernel=True", "--pool_size=2"])):
            process, url = start_voila(extra, notebook=notebook)
            if "preheated" in label:
                time.sleep(15)  # let the pool fill
            # preheated: each user finds a full pool (a kernel takes ~4 s to refill on 2 cores, and a refill
            # running while the next page loads slows both; that case is printed separately below)
            pause = 10.0 if "preheated" in label else 1.5
            times = time_to_interactive(url, selector, args.loads, browser, pause)
            if "preheated" in label:
                busy = time_to_interactive(url, selector, args.loads, browser, 1.5)
                print(f"{label}, arrivals 1.5 s apart (the pool refilling meanwhile): median "
                      f"{statistics.median(busy):.2f} s (min {min(busy):.2f}, max {max(busy):.2f})")
            if label == "planner, cold":
                from workbench.programmes.programme_presets import presets
                edits = [ms for preset in presets().index for ms in programme_edit_to_chart(url, browser, preset)]
                print(f"programme view, editor edit (Enter) to changed charts, in Chromium, the {len(presets())} "
                      f"presets: p50 {percentile(edits, 50):.0f} ms, p95 {percentile(edits, 95):.0f} ms "
                      f"(target <= 250 ms); {len(edits)} edits")
                moves = slider_to_chart(url, browser)
                chart_ms, kernel_ms = [m[0] for m in moves], [m[1] for m in moves]
                print(f"slider key press to changed chart, in Chromium: p50 {percentile(chart_ms, 50):.0f} ms, "
                      f"p95 {percentile(chart_ms, 95):.0f} ms (target <= 250 ms); kernel's part p50 "
                      f"{percentile(kernel_ms, 50):.0f} ms, p95 {percentile(kernel_ms, 95):.0f} ms (target <= 60 ms); "
                      f"{len(moves)} moves")
            rss = kernel_rss_mb(process.pid)
            # closed pages free their kernels (Voila's shutdown beacon); a pool keeps its own
            pool = 2 if "preheated" in label else 0
            deadline = time.time() + 30
            while len(kernel_rss_mb(process.pid)) > pool and time.time() < deadline:
                time.sleep(1)
            left = len(kernel_rss_mb(process.pid))
            stop(process)
            results[label] = statistics.median(times)
            print(f"{label}: time until interactive median {statistics.median(times):.2f} s "
                  f"(min {min(times):.2f}, max {max(times):.2f}, {args.loads} loads); "
                  f"kernels alive {len(rss)}, RSS {', '.join(f'{r:.0f}' for r in rss)} MB; "
                  f"{left} alive once the pages had closed (pool {pool})")
        browser.close()
    base = results["baseline (one slider), cold"]
    for label, value in results.items():
        print(f"  {label}: {value / base:.2f}x the baseline")


if __name__ == "__main__":
    main()
