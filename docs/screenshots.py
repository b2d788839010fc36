"""Make the documentation's screenshots from the running app, so that they show what the app shows today.

    .venv/bin/python docs/screenshots.py            # serves the app on a free port, writes docs/img/*.png

Serves ``notebooks/planner.ipynb`` with ``workbench.app.serve``, opens it in Debian's Chromium (Playwright,
``/usr/bin/chromium`` or ``$WORKBENCH_CHROMIUM``) and saves the planner and the programme view, in English and in
Chinese with renminbi. Nothing is edited by hand afterwards.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"
CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = 120_000
#: (file, query, what to wait for, height of the page kept [px])
SHOTS = (
    ("planner.png", "?v=1&params=70B&tokens=2T&gpu=H100&budget_usd=8M", ".wb-charts svg text", 1500),
    ("programme.png", "?view=programme&programme=assistant-7b", ".wb-programme-total .wb-card-value", 1500),
    ("planner-zh.png", "?v=1&params=70B&tokens=2T&gpu=H100&budget_usd=8M&lang=zh&currency=CNY", ".wb-charts svg text",
     1500),
    ("programme-zh.png", "?view=programme&programme=assistant-7b&lang=zh&currency=CNY",
     ".wb-programme-total .wb-card-value", 1500),
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(port: int) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-m", "workbench.app.serve", str(ROOT / "notebooks" / "planner.ipynb"),
                               "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).close()
            return server
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit("the app did not start within 120 s")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    server = _serve(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            for name, query, ready, height in SHOTS:
                page = browser.new_page(viewport={"width": 1400, "height": height})
                page.goto(f"http://127.0.0.1:{port}/{query}", wait_until="commit")
                page.wait_for_selector(ready, timeout=TIMEOUT_MS)
                page.wait_for_timeout(2500)  # charts drawn, fonts settled
                page.screenshot(path=str(OUT / name), clip={"x": 0, "y": 0, "width": 1400, "height": height})
                page.close()
                print(f"wrote docs/img/{name}")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
