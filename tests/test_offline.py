"""The offline chart bundle: cached on disk, rebuilt when missing or damaged, never fetched."""
import sys

import altair as alt
import pytest

from workbench.app import serve
from workbench.report import offline


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


FAKE = "x" * offline._MIN_BYTES + "const __default={render};export{__default as default};"


def test_the_cached_bundle_is_what_altair_builds(cache):
    bundle = offline.chart_bundle()
    assert offline.bundle_path().read_text() == bundle
    assert bundle == alt.JupyterChart._esm  # the build went through JupyterChart.enable_offline()
    assert "cdn.jsdelivr" not in bundle[:2000] and offline._COMPLETE_END in bundle[-2000:]


def test_a_cached_bundle_is_read_not_built(cache, monkeypatch):
    monkeypatch.setattr(offline, "_build", lambda: FAKE)
    assert offline.chart_bundle() == FAKE
    monkeypatch.setattr(offline, "_build", lambda: pytest.fail("built although cached"))
    assert offline.chart_bundle() == FAKE
    assert oct(offline.bundle_path().stat().st_mode & 0o777) == "0o644"


@pytest.mark.parametrize("damage", [b"", b"half a bundle", FAKE[:-20].encode(), b"\xff\xfe" * 60_000])
def test_a_damaged_cache_file_is_rebuilt(cache, monkeypatch, damage):
    offline.bundle_path().parent.mkdir(parents=True)
    offline.bundle_path().write_bytes(damage)
    monkeypatch.setattr(offline, "_build", lambda: FAKE)
    assert offline.chart_bundle() == FAKE and offline.bundle_path().read_text() == FAKE


def test_an_unwritable_cache_still_gives_a_bundle(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("WORKBENCH_CACHE", str(blocker / "cache"))
    monkeypatch.setattr(offline, "_build", lambda: FAKE)
    assert offline.chart_bundle() == FAKE


def test_format_checkers_skipped_only_before_jsonschema(monkeypatch):
    assert "jsonschema" in sys.modules  # imported by Altair in this process
    monkeypatch.delitem(sys.modules, "rfc3987_syntax", raising=False)
    offline.skip_unused_format_checkers()
    assert "rfc3987_syntax" not in sys.modules  # too late to matter: left alone


def test_a_planner_starts_without_the_javascript_runtime_or_the_iri_grammar(cache):
    import os
    import subprocess
    serve.build_all()  # the caches a previous kernel (or `make app`) left
    code = ("import sys, workbench.app.ui; workbench.app.ui.Planner(); "
            "print('vl_convert' in sys.modules, sys.modules.get('rfc3987_syntax', 'absent'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ), check=True)
    assert out.stdout.split() == ["False", "None"]


def test_the_app_chart_widget_is_bundled_with_vega_and_cached(cache):
    from workbench.app.livechart import LiveChart, _FRONT_END
    paths = serve.build_all()
    assert paths == [str(offline.bundle_path()), str(LiveChart.bundle_path())]
    bundle = LiveChart.bundle_path().read_text()
    assert "view.changeset()" in bundle and "vega-lite" in bundle.lower()  # our front end, with Vega-Lite inside
    assert "esm.sh" not in bundle and "cdn.jsdelivr" not in bundle and offline._COMPLETE_END in bundle[-2000:]
    # a new front end gets a new file: a kernel never runs a stale one from the cache
    assert offline.bundle_path("livechart", _FRONT_END + "//") != LiveChart.bundle_path()
