"""Shared fixtures: a Voilà server on a free loopback port and a Chromium page that may reach only loopback."""
import os
import socket
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "screenshots"
CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium")
#: Offline at the browser's resolver: every host but loopback fails to resolve. Tests that must see what a page
#: tries to fetch also route requests (the ``page`` fixture); tests of closing pages must not, because
#: Playwright's request interception drops the beacon a page sends as it unloads (Voila's kernel shutdown):
#: kernels then look leaked when they are not.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_voila(extra_args=(), cwd=ROOT, notebook=None, log_path=None):
    port = free_port()
    (ROOT / ".pytest_cache").mkdir(exist_ok=True)
    log = open(log_path or ROOT / ".pytest_cache" / f"voila-{port}.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench.app.serve", str(notebook or ROOT / "notebooks" / "planner.ipynb"), "--no-browser",
         f"--port={port}", "--Voila.ip=127.0.0.1", "--ServerApp.port_retries=0", *extra_args],
        cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
        # Ctrl-C must reach the server as at a terminal, even when the tests run as a background job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 90
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"voila exited with {process.returncode}")
        try:
            urllib.request.urlopen(url + "voila/static/voila.js", timeout=2)
            return process, url
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("voila did not start in 90 s")


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture(scope="session")
def voila_url():
    (ROOT / ".pytest_cache").mkdir(exist_ok=True)
    process, url = start_voila()
    yield url
    stop(process)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium (bash .ci/run does)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    page.external_requests = []

    def route(r):
        url = r.request.url
        if url.startswith(("http://127.0.0.1", "http://localhost", "data:", "blob:")):
            r.continue_()
        else:
            page.external_requests.append(url)
            r.abort()

    page.route("**/*", route)
    page.documents = []  # responses for pages (not their assets): their headers are what the server sent
    page.on("response", lambda r: page.documents.append(r) if r.request.resource_type == "document" else None)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    SCREENSHOTS.mkdir(exist_ok=True)
    try:
        page.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
    finally:
        page.goto("about:blank")  # lets Voilà shut the kernel down
        context.close()
