"""An installed wheel finds its data outside the repository."""
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_carries_data_and_works_outside_the_repo(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path / "dist"), str(ROOT)], check=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("workbench-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for table in ("accelerators.csv", "prices.csv", "published_runs.csv", "scenario_fields.csv", "scaling_laws.csv"):
        assert f"workbench/data/{table}" in names
    # issue 27: the metadata of a package of its ecosystem (one version, its licence, typed)
    import workbench
    assert wheel.name.startswith(f"workbench-{workbench.__version__}-") and "workbench/py.typed" in names
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: MIT" in meta and "Requires-Python: >=3.11" in meta and "Classifier: " in meta
    assert any(n.endswith("licenses/LICENSE") for n in names)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("import workbench, workbench.reference.data as d; print(d.data_dir()); "
            "print(round(workbench.estimate().gpu_hours))")
    # PYTHONPATH puts the unpacked wheel ahead of the editable install; the assertion below checks that
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": str(site), "PATH": ""}, timeout=120)
    assert result.returncode == 0, result.stderr
    data_dir, hours = result.stdout.split()
    assert Path(data_dir) == site / "workbench" / "data"
    assert int(hours) > 0


def test_an_installed_wheel_serves_the_planner_from_another_directory(tmp_path):
    """Issue 27: the wheel ships the planner notebook and its Voila settings; `workbench app --port N` serves them
    from any directory, with the content security policy."""
    import socket
    import time
    import urllib.request
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path / "dist"), str(ROOT)], check=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("workbench-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "workbench/app_files/planner.ipynb" in names and "workbench/app_files/voila.json" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    import os
    env = {**os.environ, "PYTHONPATH": str(site)}
    process = subprocess.Popen([sys.executable, "-m", "workbench.cli", "app", "--port", str(port)], cwd=elsewhere,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, page, headers = time.time() + 120, None, None
        while time.time() < deadline and page is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as response:
                    headers = response.headers
                    page = response.read(200_000).decode("utf-8", "replace")
            except OSError:
                if process.poll() is not None:
                    break
                time.sleep(0.5)
        assert page is not None, process.stdout.read() if process.poll() is not None else "no answer"
        assert "voila" in page.lower() and "default-src 'self'" in headers["Content-Security-Policy"]
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
    where = subprocess.run([sys.executable, "-c", "from workbench.app.serve import app_files; print(app_files()[0])"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert Path(where.stdout.strip()) == site / "workbench" / "app_files" / "planner.ipynb", where.stderr


def test_every_deployment_configures_the_content_security_policy():
    """The standalone server, Binder and the hub's single-user servers serve the same policy (issue 27)."""
    import json
    from workbench.app.serve import CONTENT_SECURITY_POLICY
    root = Path(__file__).resolve().parents[1]
    hub_and_binder = json.loads((root / "binder" / "jupyter_config.json").read_text())
    assert hub_and_binder["ServerApp"]["tornado_settings"]["headers"]["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    standalone = json.loads((root / "voila.json").read_text())
    assert standalone["Voila"]["tornado_settings"]["headers"]["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_a_wheel_builds_from_the_source_package(tmp_path):
    """The sdist carries what the wheel force-includes (the planner notebook, voila.json): pip install from it works."""
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path / "sdist")],
                   cwd=ROOT, check=True, timeout=300, capture_output=True)
    sdist = next((tmp_path / "sdist").glob("workbench-*.tar.gz"))
    import tarfile
    names = tarfile.open(sdist).getnames()
    assert any(n.endswith("/notebooks/planner.ipynb") for n in names) and any(n.endswith("/voila.json") for n in names)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(tmp_path / "dist"), str(sdist)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("workbench-*.whl"))
    assert "workbench/app_files/planner.ipynb" in zipfile.ZipFile(wheel).namelist()


def test_the_minimum_versions_are_the_declared_floors():
    """`make test-minimum` runs the suite on .ci/minimum.txt: each runtime dependency pinned to the minor release of
    its floor in pyproject.toml, so that the floors stay what the suite has passed on (issue 27)."""
    import re
    import tomllib
    declared = {}
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        name, floor = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement.split(";")[0].strip()).groups()
        declared[name.lower()] = floor
    pinned = dict(re.findall(r"(?m)^([A-Za-z0-9_.-]+)==([0-9.]+)\.\*$", (ROOT / ".ci" / "minimum.txt").read_text()))
    assert {k.lower(): v for k, v in pinned.items()} == {k: ".".join(v.split(".")[:2]) for k, v in declared.items()}
    assert "test-minimum:" in (ROOT / "Makefile").read_text()
