"""Binder set-up and scenario links."""
import json
import re
import subprocess
import sys
import pytest
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from workbench import Scenario
from workbench.report import links

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_binder_pins_every_dependency_within_pyproject_bounds():
    """Issue 27: Binder's guidance is a pinned environment (a rebuild months later gets the same one). Every line
    pins one exact version (pip-compile from pyproject.toml, the command in the file's header); each runtime
    dependency of pyproject.toml is among them, within its bounds."""
    from packaging.requirements import Requirement
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / "binder" / "requirements.txt").read_text()
    assert "pip-compile" in text.split("\n", 3)[1]
    pins = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        (version,) = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        pins[_name(requirement.name)] = version
    for dependency in project["dependencies"]:
        wanted = Requirement(dependency.split("#")[0])
        assert _name(wanted.name) in pins, dependency
        assert wanted.specifier.contains(pins[_name(wanted.name)]), (dependency, pins[_name(wanted.name)])


def test_post_build_installs_the_package_and_the_voila_config():
    post_build = (ROOT / "binder" / "postBuild").read_text().splitlines()
    assert post_build[0].startswith("#!") and "set -e" in post_build[:3]
    assert any("pip install" in line and line.rstrip().endswith(" .") for line in post_build)
    config = json.loads((ROOT / "binder" / "jupyter_config.json").read_text())
    assert config["VoilaConfiguration"]["show_tracebacks"] is False
    assert config["MappingKernelManager"]["cull_idle_timeout"] > 0


def test_binder_app_link_carries_the_scenario():
    scenario = Scenario(params=7e10, tokens=1.4e12, gpu="A100")
    url = links.binder_app_url(scenario, repo="owner/name", lang="zh")
    parsed = urlparse(url)
    assert parsed.netloc == "mybinder.org" and parsed.path == "/v2/gh/owner/name/main"
    urlpath = parse_qs(parsed.query)["urlpath"][0]
    assert urlpath.startswith("voila/render/notebooks/planner.ipynb?")  # no leading slash (Binder's rule)
    assert "%3F" in url and "%26" in url
    query = urlpath.split("?", 1)[1]
    assert Scenario.from_query(query, ignore=("lang", "currency")) == scenario
    assert "lang=zh" in query


def test_lab_link_and_default_repository():
    assert links.repository() == "llm-cost-workbench/workbench"
    assert unquote(links.binder_lab_url("scaling")).endswith("urlpath=lab/tree/notebooks/scaling.ipynb")


def test_link_command_prints_binder_and_local_links():
    result = subprocess.run([sys.executable, "-m", "workbench.cli", "link", "--params", "70B", "--gpu", "a100"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(":", 1) for line in result.stdout.strip().splitlines())
    local = lines["Local"].strip()
    assert local == "http://localhost:8866/?v=1&params=70B&gpu=A100-SXM4-80GB"
    assert "mybinder.org" in lines["Binder"]
    bad = subprocess.run([sys.executable, "-m", "workbench.cli", "link", "--params", "-1"], capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 1 and bad.stderr.startswith("workbench: error: params=-1.0")


def test_the_single_user_image_agrees_with_the_z2jh_values_and_binders_build():
    """Issue 27: binder/jupyterhub/Dockerfile builds the image z2jh-values.yaml runs (no Docker engine here to build
    it): the paths and variables the values name are the ones the image makes, and it builds what Binder's
    postBuild builds (the pinned environment, the package, the offline bundle)."""
    import re
    import yaml
    hub = ROOT / "binder" / "jupyterhub"
    docker = (hub / "Dockerfile").read_text()
    values = yaml.safe_load((hub / "z2jh-values.yaml").read_text())
    steps = [line for line in docker.splitlines() if line and not line.startswith("#")]
    assert steps[0].startswith("FROM quay.io/jupyter/base-notebook:python-3.11")  # Jupyter Docker Stacks, our floor
    single = values["singleuser"]
    env = dict(re.findall(r"(?m)^ENV (\w+)=(\S+)$", docker))
    assert env["WORKBENCH_CACHE"] == single["extraEnv"]["WORKBENCH_CACHE"]
    assert f"mkdir -p {env['WORKBENCH_CACHE']}" in docker
    home = values["hub"]["config"]["Spawner"]["notebook_dir"]
    assert f"COPY --chown=${{NB_UID}}:${{NB_GID}} . {home}" in docker and f"WORKDIR {home}" in docker
    config = single["extraEnv"]["JUPYTER_CONFIG_PATH"]
    assert config.startswith(home + "/") and (ROOT / config.removeprefix(home + "/") / "jupyter_config.json").is_file()
    notebook = single["defaultUrl"].removeprefix("/voila/render/")
    assert (ROOT / notebook).is_file()
    assert f"-r {home}/binder/requirements.txt" in docker and f"--no-deps {home}" in docker
    assert "python -m workbench.app.serve --build" in docker
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "--no-deps ." in post_build and "python -m workbench.app.serve --build" in post_build
    ignored = (hub / "Dockerfile.dockerignore").read_text().split()
    assert {".venv", ".git", "binder/jupyterhub/node_modules"} <= set(ignored)
    assert "docker build -f binder/jupyterhub/Dockerfile" in docker and single["image"]["name"]
