"""Load: concurrent app sessions against one Voilà server on loopback (6 in CI; benchmarks/load.py runs 20);
every page renders its own scenario and closed pages free their kernels."""
import os
import re
import subprocess
import time
from pathlib import Path

from conftest import ROOT, start_voila, stop

ARRIVAL_SECONDS = 2.0


def kernel_pids(server_pid):
    children = subprocess.run(["pgrep", "-P", str(server_pid)], capture_output=True, text=True).stdout.split()
    pids = []
    for pid in children:
        try:
            if "ipykernel" in Path(f"/proc/{pid}/cmdline").read_text():
                pids.append(pid)
        except OSError:
            pass
    return pids


def rss_mb(pid):
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(l for l in status.splitlines() if l.startswith("VmRSS")).split()[1]) / 1024


#: Each page notes when its charts first drew (ms since its own navigation began).
_MARK_RENDERED = """
new MutationObserver((_, observer) => {
  if (document.querySelector('.wb-charts svg text')) { window.wbRenderedAt = performance.now(); observer.disconnect(); }
}).observe(document, {subtree: true, childList: true});
"""


def _without_culler_start_race(log):
    """The log less jupyter_server's culler tripping over a kernel still starting: the culler reads
    ``last_activity`` before the start sets it, logs the traceback, skips that kernel for one pass and carries
    on (caught in ``cull_kernels``; the same race as jupyter/notebook#5345). No page is affected by it."""
    block = re.compile(r"^\[[^\]\n]*\] (?:[A-Z]+ \| )?The following exception was encountered while checking the idle duration"
                       r" of kernel \S+: The 'last_activity' trait[^\n]*\n"
                       r"(?:.*?\n)*?traitlets\.traitlets\.TraitError: The 'last_activity' trait[^\n]*\n", re.M)
    return block.sub("", log)


def run_sessions(browser, log_path, sessions, arrival_seconds=ARRIVAL_SECONDS, render_timeout_s=600):
    """``sessions`` users open the planner ``arrival_seconds`` apart and stay; every page must render its own
    scenario, then all close and their kernels must be freed. Returns the figures (seconds, MB)."""
    # A kernel handed to a page that has not connected yet counts as idle: under load a browser can take minutes
    # to connect, so a short cull timeout loses sessions (it did at 60 s). Closed pages free their kernels at
    # once (Voila's shutdown beacon), so the culler is only a backstop here.
    process, url = start_voila(["--MappingKernelManager.cull_idle_timeout=900",
                                "--MappingKernelManager.cull_interval=5"], log_path=log_path)
    contexts, figures = [], {"rendered_after_s": []}
    try:
        pages = []
        for i in range(sessions):
            context = browser.new_context(viewport={"width": 1200, "height": 900})
            page = context.new_page()  # no request routing: it would swallow the closing page's beacon
            page.add_init_script(_MARK_RENDERED)
            page.goto(f"{url}?params={i + 1}B", wait_until="commit")
            contexts.append(context)
            pages.append(page)
            time.sleep(arrival_seconds)  # users arrive one after another, then all stay
        for i, page in enumerate(pages):
            page.wait_for_selector(".wb-total .wb-card-value", timeout=render_timeout_s * 1000)
            page.wait_for_selector(".wb-charts svg text", timeout=render_timeout_s * 1000)
            assert page.locator(".wb-field-params input[type=text]").input_value() == f"{i + 1}B"
            figures["rendered_after_s"].append(page.evaluate("window.wbRenderedAt") / 1000)
            print(f"session {i + 1} rendered {figures['rendered_after_s'][-1]:.1f} s after it arrived", flush=True)
        kernels = kernel_pids(process.pid)
        memory = [rss_mb(pid) for pid in kernels]
        figures.update(kernels=len(kernels), rss_median_mb=sorted(memory)[len(memory) // 2], rss_total_mb=sum(memory))
        print(f"{sessions} sessions rendered, the slowest {max(figures['rendered_after_s']):.1f} s after it arrived; "
              f"{len(kernels)} kernels, "
              f"RSS median {figures['rss_median_mb']:.0f} MB, total {figures['rss_total_mb']:,.0f} MB")
        assert len(kernels) >= sessions
        closed = time.time()
        for page in pages:
            page.goto("about:blank")
        for context in contexts:
            context.close()
        contexts = []
        deadline = time.time() + 120
        while time.time() < deadline and len(kernel_pids(process.pid)) > 2:  # the preheated pool stays
            time.sleep(1)
        remaining = len(kernel_pids(process.pid))
        figures.update(kernels_left=remaining, freed_after_s=time.time() - closed)
        print(f"{remaining} kernels left {figures['freed_after_s']:.0f} s after every page closed")
        assert remaining <= 2, f"{remaining} kernels still alive after closing every page"
        log = log_path.read_text(errors="replace")  # before shutdown, which makes pooled kernels complain
    finally:
        for context in contexts:
            context.close()
        stop(process)
    assert not re.search(r"\b50\d\b.*(GET|POST)|(GET|POST).*\b50\d\b", log), "server errors in the Voilà log"
    assert "Traceback" not in _without_culler_start_race(log)
    return figures


def test_concurrent_sessions_render_and_closed_pages_free_their_kernels(browser, tmp_path):
    # CI's size: 6 users 2 s apart; `benchmarks/load.py` runs the 20-user version and prints its figures
    run_sessions(browser, tmp_path / "voila.log", sessions=int(os.environ.get("WORKBENCH_LOAD_SESSIONS", "6")))
