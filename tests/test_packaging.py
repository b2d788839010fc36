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
    code = ("import workbench, workbench.data as d; print(d.data_dir()); "
            "print(round(workbench.estimate().gpu_hours))")
    # PYTHONPATH puts the unpacked wheel ahead of the editable install; the assertion below checks that
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": str(site), "PATH": ""}, timeout=120)
    assert result.returncode == 0, result.stderr
    data_dir, hours = result.stdout.split()
    assert Path(data_dir) == site / "workbench" / "data"
    assert int(hours) > 0
