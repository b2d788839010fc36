"""Links that open the planner on a scenario: locally (``make app``) and on Binder (mybinder.org).

Binder builds the repository from ``binder/`` and runs Voilà as a Jupyter server extension, so the app is
at ``voila/render/notebooks/planner.ipynb`` and the scenario's query travels URL-encoded inside the
``urlpath`` parameter (``%3F``, ``%26``).
"""
from __future__ import annotations

from importlib import metadata
from urllib.parse import quote, urlencode, urlparse

from ..plan.scenario import Scenario

LOCAL_APP = "http://localhost:8866/"
BINDER = "https://mybinder.org/v2/gh"
APP_PATH = "voila/render/notebooks/planner.ipynb"
#: Used when the installed package's metadata has no Repository URL (see ``[project.urls]``).
FALLBACK_REPOSITORY = "https://github.com/llm-cost-workbench/workbench"


def repository() -> str:
    """``owner/name`` of the GitHub repository, from the package's ``Repository`` project URL."""
    try:
        urls = metadata.metadata("workbench").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        urls = []
    found = next((u.split(",", 1)[1].strip() for u in urls if u.lower().startswith("repository,")), FALLBACK_REPOSITORY)
    return urlparse(found).path.strip("/").removesuffix(".git")


def app_query(scenario: Scenario, lang: str = "en", currency: str = "USD") -> str:
    """The app's query string for a scenario (plus ``lang``/``currency`` when not the defaults)."""
    extra = {k: v for k, v in (("lang", lang), ("currency", currency)) if v not in ("en", "USD")}
    return scenario.to_query() + ("&" + urlencode(extra) if extra else "")


def local_url(scenario: Scenario, base: str = LOCAL_APP, **options) -> str:
    """The app served by ``make app`` (or any Voilà base URL) opened on ``scenario``."""
    return f"{base.rstrip('/')}/?{app_query(scenario, **options)}"


def binder_app_url(scenario: Scenario, repo: str | None = None, ref: str = "main", **options) -> str:
    """The app on mybinder.org opened on ``scenario``."""
    urlpath = f"{APP_PATH}?{app_query(scenario, **options)}"
    return f"{BINDER}/{repo or repository()}/{ref}?urlpath={quote(urlpath, safe='')}"


def binder_lab_url(notebook: str = "scaling", repo: str | None = None, ref: str = "main") -> str:
    """JupyterLab on mybinder.org with ``notebooks/<notebook>.ipynb`` open."""
    return f"{BINDER}/{repo or repository()}/{ref}?urlpath={quote(f'lab/tree/notebooks/{notebook}.ipynb', safe='')}"
