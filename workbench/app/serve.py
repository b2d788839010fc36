"""Serve the planner with Voilà (``make app``): ``python -m workbench.app.serve notebooks/planner.ipynb [voila options]``.

Voilà as it is, with a content security policy that keeps every request on this server, and one change at
the door: a URL longer than :data:`MAX_URL_CHARS` is answered with a
page that says so (HTTP 414). Left alone, Tornado drops a request whose headers pass 64 KiB without any
response, and the user sees an empty page. A planner link is a few hundred characters (every field
changed: ~3,000), so the limit refuses nothing a planning document holds.
"""
from __future__ import annotations

import html
import os
import shutil
import signal
import sys
from pathlib import Path

if __name__ == "__main__":  # a Ctrl-C while Voilà is still being imported ends quietly, not in an import traceback
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))

from jupyter_core.utils import run_sync
from tornado.routing import Matcher, Rule
from tornado.web import RequestHandler
from voila.app import Voila

MAX_URL_CHARS = 16_384
#: Everything from this server, nothing from anywhere else: the page cannot ask a CDN for anything, so it works
#: offline and tells no third party who opened which plan. Voilà's lab template links Font Awesome from a CDN;
#: its own bundle already holds the fonts, so the icons still show. Inline styles and scripts, eval (widget
#: code), data: and blob: URLs (chart exports, the chart bundle) are what the page itself uses.
CONTENT_SECURITY_POLICY = ("default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:; "
                           "connect-src 'self' ws: wss:; frame-ancestors 'self'")
#: Headers Tornado reads before giving up; above the URL limit, so that a long URL is answered, not cut off.
MAX_HEADER_BYTES = 1 << 20


class _LongUrl(Matcher):
    def match(self, request):
        return {} if len(request.uri or "") > MAX_URL_CHARS else None


class LongUrlHandler(RequestHandler):
    """A plain page for a URL too long to be a planner link."""

    def prepare(self):
        self.set_status(414)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        length = len(self.request.uri or "")
        self.finish("<!doctype html><meta charset='utf-8'><title>Link too long</title>"
                    "<body style='font-family: sans-serif; max-width: 40em; margin: 3em auto'>"
                    "<h2>This link is too long</h2>"
                    f"<p>It has {length:,} characters; the LLM Cost Workbench reads links of up to "
                    f"{MAX_URL_CHARS:,}. A planner link is short: open <a href='{html.escape(self.request.path)}'>"
                    "the app</a>, set the scenario and use <i>Copy link</i>.</p></body>")


class PlannerServer(Voila):
    """Voilà with over-long URLs answered by :class:`LongUrlHandler` and a same-origin-only content security
    policy (:data:`CONTENT_SECURITY_POLICY`, unless ``tornado_settings`` gives one; configuration: ``voila.json``
    as usual)."""

    def initialize(self, argv=None):
        super().initialize(argv)
        headers = dict(self.tornado_settings.get("headers", {}))
        headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        self.tornado_settings = {**self.tornado_settings, "headers": headers}

    def listen(self):
        self.app.default_router.rules.insert(0, Rule(_LongUrl(), LongUrlHandler))
        listen = self.app.listen
        self.app.listen = lambda port, address="", **kwargs: listen(port, address, max_header_size=MAX_HEADER_BYTES,
                                                                     **kwargs)
        super().listen()

    def stop(self):
        # the kernels hold nothing to save (a scenario lives in its link): stop them at once. A polite
        # shutdown request reaches a kernel still running a page's notebook, which then prints a ZMQ
        # traceback on the console of whoever pressed Ctrl-C.
        shutil.rmtree(self.connection_dir, ignore_errors=True)
        try:
            run_sync(self.kernel_manager.shutdown_all)(now=True)
        except Exception as error:  # noqa: BLE001 - a pooled kernel still starting is unknown to it yet (404)
            self.log.info("stopping the kernels one by one (%s)", error)
            for kernel_id in list(self.kernel_manager.list_kernel_ids()):
                try:
                    run_sync(self.kernel_manager.shutdown_kernel)(kernel_id, now=True)
                except Exception:  # noqa: BLE001 - gone already; a kernel left over stops with its parent
                    pass


def build_all() -> list[str]:
    """Build every bundle a kernel may need (notebooks' JupyterChart, the app's chart widget); what was cached.
    ``python -m workbench.app.serve --build`` runs it ahead of the first kernel (an image's build step)."""
    from ..report import offline
    from .livechart import LiveChart
    return offline.build(((offline.bundle_path(), offline.chart_bundle), (LiveChart.bundle_path(), LiveChart.bundle)))


def app_files() -> tuple[Path, Path]:
    """(the planner notebook, the folder holding its ``voila.json``): shipped inside the package
    (``workbench/app_files``, from an installed wheel) or, in a checkout, the repository's own."""
    packaged = Path(__file__).resolve().parents[1] / "app_files"  # workbench/app_files beside the sub-packages
    if (packaged / "planner.ipynb").is_file():
        return packaged / "planner.ipynb", packaged
    root = Path(__file__).resolve().parents[2]
    return root / "notebooks" / "planner.ipynb", root


def app(port: int = 8866, extra=()) -> None:
    """Serve the planner app (``workbench app``), from wherever the package is installed."""
    build_all()  # the chart bundles the pages load from this server (cached per machine)
    notebook, config_dir = app_files()
    os.chdir(config_dir)  # Voila reads voila.json from the folder it starts in
    main([str(notebook), f"--port={port}", "--no-browser", *extra])


def main(argv=None):
    """Serve until Ctrl-C; a Ctrl-C while the server is still starting ends it as quietly (exit status 130)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)  # from here on, Voilà's own Ctrl-C handling
    try:
        PlannerServer.launch_instance(argv)
    except KeyboardInterrupt:
        print("\nstopped", file=sys.stderr)
        raise SystemExit(130) from None

if __name__ == "__main__":
    if sys.argv[1:] == ["--build"]:  # an image's build step: the bundles, cached ahead of the first kernel
        print("\n".join(build_all()))
    else:
        main()
