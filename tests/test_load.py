"""Load: 20 concurrent app sessions against one Voilà server on loopback; closed pages free their kernels."""
import os
import re
import subprocess

import pytest
import time
from pathlib import Path

from conftest import ROOT, start_voila, stop

SESSIONS = 20
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


@pytest.mark.skipif(os.environ.get("CI") == "true", reason="takes 6-10 min on 2 cores, beyond CI's 10-minute budget; "
                    "on 2026-12-03 all 20 sessions rendered (371 s) but closed pages had not freed their kernels "
                    "after 180 s; issue 14")
def test_twenty_concurrent_sessions_render_and_idle_kernels_are_culled(browser, tmp_path):
    log_path = tmp_path / "voila.log"
    # A kernel handed to a page that has not connected yet counts as idle: under load a browser can take minutes
    # to connect, so a short cull timeout loses sessions (it did at 60 s). Closed pages free their kernels at
    # once (Voila's shutdown beacon), so the culler is only a backstop here.
    process, url = start_voila(["--MappingKernelManager.cull_idle_timeout=900",
                                "--MappingKernelManager.cull_interval=5"], log_path=log_path)
    contexts = []
    try:
        started = time.time()
        pages = []
        for i in range(SESSIONS):
            context = browser.new_context(viewport={"width": 1200, "height": 900})
            page = context.new_page()
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("http://127.0.0.1") else r.abort())
            page.goto(f"{url}?params={i + 1}B", wait_until="commit")
            contexts.append(context)
            pages.append(page)
            time.sleep(ARRIVAL_SECONDS)  # users arrive one after another, then all stay
        for i, page in enumerate(pages):
            page.wait_for_selector(".wb-total .wb-card-value", timeout=600_000)
            page.wait_for_selector(".wb-charts svg text", timeout=600_000)
            assert page.locator(".wb-field-params input[type=text]").input_value() == f"{i + 1}B"
            print(f"session {i + 1} rendered after {time.time() - started:.0f} s", flush=True)
        all_rendered = time.time() - started
        kernels = kernel_pids(process.pid)
        memory = [rss_mb(pid) for pid in kernels]
        print(f"{SESSIONS} sessions rendered in {all_rendered:.1f} s; {len(kernels)} kernels, "
              f"RSS median {sorted(memory)[len(memory) // 2]:.0f} MB, total {sum(memory):,.0f} MB")
        assert len(kernels) >= SESSIONS
        for page in pages:
            page.goto("about:blank")
        for context in contexts:
            context.close()
        contexts = []
        deadline = time.time() + 180
        while time.time() < deadline and len(kernel_pids(process.pid)) > 2:  # the preheated pool stays
            time.sleep(2)
        remaining = len(kernel_pids(process.pid))
        assert remaining <= 2, f"{remaining} kernels still alive after closing every page"
        log = log_path.read_text(errors="replace")  # before shutdown, which makes pooled kernels complain
    finally:
        for context in contexts:
            context.close()
        stop(process)
    assert not re.search(r"\b50\d\b.*(GET|POST)|(GET|POST).*\b50\d\b", log), "server errors in the Voilà log"
    assert "Traceback" not in log
