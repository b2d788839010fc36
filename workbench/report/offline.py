"""The JavaScript bundle charts render from with no CDN, built once per machine and kept on disk.

Altair's ``JupyterChart`` renders offline from a bundle of Vega, Vega-Lite and vega-embed that vl-convert
builds in an embedded JavaScript runtime, on every kernel start: 2.5 s and ~110 MB of the kernel's memory
(``benchmarks/app.py``; measured 2026-12-03). The bundle depends only on the Altair and vl-convert versions, so
it is built once and read from a cache file afterwards: kernels then never start the runtime at all.

The cache lives in ``$WORKBENCH_CACHE`` if set, else ``$XDG_CACHE_HOME/llm-cost-workbench`` (``~/.cache/...``).
A missing, truncated or unreadable cache file is rebuilt; where nothing can be written, each kernel builds the
bundle in memory as Altair does.
"""
from __future__ import annotations

import hashlib
import logging
import os
import sys
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

#: A complete bundle ends with its module exports; a truncated file does not.
_COMPLETE_END = "export{__default as default}"
#: Bundles are ~0.9 MB; anything much smaller is not one.
_MIN_BYTES = 100_000


def skip_unused_format_checkers() -> None:
    """Keep jsonschema from compiling its IRI grammar at import (rfc3987-syntax builds a Lark parser: 0.6-1.4 s).

    Altair imports jsonschema for validation; the Vega-Lite schema has no ``iri`` format, so the checker is
    never used by a chart. Without the module, jsonschema leaves the ``iri`` format unchecked (its documented
    behaviour when the optional dependency is absent). Done only when jsonschema is not yet imported.
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


def cache_dir() -> Path:
    """Where the bundle is kept (not created here)."""
    if os.environ.get("WORKBENCH_CACHE"):
        return Path(os.environ["WORKBENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "llm-cost-workbench"


def bundle_path(name: str = "jupyterchart", snippet: str | None = None) -> Path:
    """The cache file for the installed Altair and vl-convert (and ``snippet``): a new version gets a new file."""
    from importlib.metadata import version  # not vl_convert itself: its native library is what we avoid loading
    digest = f"-{hashlib.sha256(snippet.encode()).hexdigest()[:12]}" if snippet is not None else ""
    return cache_dir() / f"{name}{digest}-altair{version('altair')}-vlc{version('vl-convert-python')}.js"


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) >= _MIN_BYTES and _COMPLETE_END in text[-2000:] else None


def _build() -> str:
    """What ``JupyterChart.enable_offline()`` builds, in this process (slow: starts vl-convert's runtime)."""
    import altair as alt
    alt.JupyterChart.enable_offline()
    return alt.JupyterChart._esm


def _build_snippet(snippet: str) -> str:
    """``snippet`` (an ES module that uses ``vegaEmbed``) bundled with Vega, Vega-Lite and vega-embed."""
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert
    return vlc.javascript_bundle(snippet, vl_version=vl_version_for_vl_convert())


def chart_bundle() -> str:
    """The offline JupyterChart bundle: read from the cache, or built and cached."""
    return _cached(bundle_path(), _build)


def widget_bundle(name: str, snippet: str) -> str:
    """A widget's front end (``snippet``) bundled with Vega for offline use: read from the cache, or built."""
    return _cached(bundle_path(name, snippet), lambda: _build_snippet(snippet))


def _cached(path: Path, build) -> str:
    cached = _read(path)
    if cached is not None:
        return cached
    bundle = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # written whole and renamed into place: a kernel reading at the same time never sees half a file
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as tmp:
            tmp.write(bundle)
        os.chmod(tmp.name, 0o644)  # readable by every user of a shared cache, like any installed file
        os.replace(tmp.name, path)
    except OSError as error:
        log.warning("chart bundle not cached (%s): each kernel will build it", error)
    return bundle


def enable_offline_charts() -> None:
    """Make every ``JupyterChart`` (and Altair's ``jupyter`` renderer) render from the cached bundle."""
    import altair as alt
    if alt.JupyterChart._is_offline:
        return
    # the same two class attributes JupyterChart.enable_offline() sets; anywidget reads _esm per instance
    alt.JupyterChart._esm = chart_bundle()
    alt.JupyterChart._is_offline = True


def build(bundles) -> list[str]:
    """Build ``bundles`` ((path, build function) pairs); what was cached. The app adds its chart widget's
    (:func:`workbench.app.serve.build_all`)."""
    done = []
    for path, bundle in bundles:
        done.append(str(path) if bundle() and _read(path) else f"{path.name}: built, not cached")
    return done


def build_all() -> list[str]:
    """The bundles of this layer: notebooks' JupyterChart."""
    return build(((bundle_path(), chart_bundle),))
