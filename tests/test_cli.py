"""The command line, run as a user would (a subprocess of the installed entry point)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKBENCH = shutil.which("workbench") or ""


def run(*args):
    command = [WORKBENCH] if WORKBENCH else [sys.executable, "-m", "workbench.cli"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=120)


def test_llama2_70b_json_within_50_percent():
    result = run("estimate", "--params", "70e9", "--tokens", "2e12", "--seq-len", "4096", "--gpu", "A100-SXM4-80GB",
                 "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    for key in ("training_flops", "gpu_hours", "wall_days", "n_gpus", "mfu", "total_cost_usd", "lines"):
        assert key in out
    assert all({"stage", "category", "cost_usd"} <= set(line) for line in out["lines"])
    # no GPU count published: sized for 14 days (7,584 GPUs), where the MFU prior is lower than Meta reached
    assert abs(out["gpu_hours"] / 1_720_320 - 1) < 0.5


def test_quantity_suffixes_and_all_options():
    result = run("estimate", "--params", "70B", "--tokens", "2T", "--seq-len", "4k", "--gpu", "a100-80gb",
                 "--active-params", "70B", "--n-gpus", "2048", "--mfu", "0.4", "--pricing", "on_demand",
                 "--price-per-gpu-hour", "2.0", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["n_gpus"] == 2048 and out["mfu"] == 0.4 and out["scenario"]["seq_len"] == 4000
    compute = [l for l in out["lines"] if (l["stage"], l["category"], l["item"]) == ("pretrain", "compute", "accelerator time")]
    assert compute[0]["cost_usd"] == pytest.approx(out["gpu_hours"] * 2.0)
    assert out["total_cost_usd"] == pytest.approx(sum(l["cost_usd"] for l in out["lines"]))


def test_no_options_answers_for_default_scenario():
    from workbench import Scenario, estimate
    result = run("estimate", "--json")
    out = json.loads(result.stdout)
    assert out["scenario"] == Scenario().to_dict()
    assert out["total_cost_usd"] == pytest.approx(estimate().total_cost_usd)


def test_readable_table_names_defaults_and_sources():
    result = run("estimate")
    assert result.returncode == 0
    for text in ("Total cost", "GPU-hours", "Defaults resolved for this scenario:", "mfu: ", "published runs",
                 "data/prices.csv", "Sources of the defaults used", "gpu_failure_rate_per_day = 0.0004736",
                 "Budget alerts", "Zero lines, and why:", "By stage (USD):"):
        assert text in result.stdout


@pytest.mark.parametrize("args,expected", [
    (["estimate", "--params", "abc"], "params='abc': is not a number"),
    (["estimate", "--params", "-1"], "params=-1.0: is out of range"),
    (["estimate", "--mfu", "nan"], "mfu='nan'"),
    (["estimate", "--gpu", "H1000"], "closest: H100-SXM5-80GB"),
    (["estimate", "--pricing", "free"], "pricing='free'"),
    (["estimate", "--bogus", "1"], "unrecognized arguments: --bogus"),
    (["estimate", "--seq-len", "1.5"], "seq_len=1.5: is not a whole number"),
    (["estimate", "--mfu", "3"], "mfu=3.0: is out of range; allowed: a number from 0.01 to 0.95 [fraction], or "
                                 "empty for the default (option --mfu)"),
    (["estimate", "--gpu", "TPU-v4"], "no price on record for TPUv4; set --price-per-gpu-hour; "),
    (["estimate", "--gpu", "V100"], "allowed: fp16 (option --precision)"),
    (["estimate", "--provider", "akash", "--pricing", "reserved_3y"], "or --provider median; allowed: median, aws"),
    # a prefix of an option is not that option (--gpus quietly became --gpus-per-node)
    (["estimate", "--gpus", "16"], "unrecognized arguments: --gpus 16; --gpus: did you mean --n-gpus or "
                                   "--gpus-per-node?"),
    (["estimate", "--seqlen", "8192", "--tok", "1e12"], "--seqlen: did you mean --seq-len?"),
    (["sensitivity", "--target-day", "30"], "--target-day: did you mean --target-days or"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    ([], "required"),
])
def test_bad_input_exits_1_or_2_with_one_line(args, expected):
    """Exit 1: what it was given is wrong; exit 2: how it was typed (an unknown option, a missing argument)."""
    result = run(*args)
    usage = any(word in expected for word in ("unrecognized", "did you mean", "invalid choice", "required"))
    assert result.returncode == (2 if usage else 1)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert expected in lines[0] and lines[0].startswith("workbench: error:")


def test_gpus_lists_the_catalog():
    result = run("gpus", "--json")
    table = json.loads(result.stdout)
    ids = {row["id"] for row in table}
    assert {"H100-SXM5-80GB", "TPUv3", "MI300X"} <= ids
    assert "H100-SXM5-80GB" in run("gpus").stdout


def test_validate_prints_the_comparison():
    result = run("validate")
    assert result.returncode == 0
    assert "Llama-2-70B" in result.stdout and "median |error|" in result.stdout and "within +-30 %" in result.stdout
    assert "frontier runs" in result.stdout and "kernel_efficiency" in result.stdout
    out = json.loads(run("validate", "--json").stdout)
    assert out["summary"]["runs"] == 37 and {p["parameter"] for p in out["parameters"]} >= {"kernel_efficiency"}
    assert "(sized)" in result.stdout and "engineering scale" in result.stdout


def test_help_shows_defaults_as_one_would_type_them():
    text = " ".join(run("estimate", "--help").stdout.split())
    assert "experts). [parameters] Allowed: a number from 1M to 10T [parameters]. Default: 7B." in text
    assert "Default: 2T." in text and "characters. Default: empty." in text
    assert "Default: ." not in text and ".0." not in text.replace("1.0.", "")


@pytest.mark.parametrize("command", ["estimate", "sensitivity", "link", "gpus", "validate", "serve", "plan"])
def test_help_works_for_every_command(command):
    result = run(command, "--help")
    assert result.returncode == 0 and "usage: workbench" in result.stdout and not result.stderr


def test_version_and_standard_input():
    """Issue 27: CLI habits. --version prints the one version string; - reads standard input for a programme file
    and for a bill (its kind told by its first bytes), named - in what is printed."""
    import workbench
    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"workbench {workbench.__version__}"
    example = run("plan", "--example").stdout
    piped = subprocess.run([sys.executable, "-m", "workbench.cli", "plan", "-", "--json"], input=example,
                           capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["total_cost_usd"] == pytest.approx(
        json.loads(run("plan", "--json", *_example_file(example)).stdout)["total_cost_usd"])
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from focus_generator import write_export
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        write_export(Path(folder) / "bill.csv", 200)
        data = (Path(folder) / "bill.csv").read_bytes()
    bill = subprocess.run([sys.executable, "-m", "workbench.cli", "actuals", "-", "--json"], input=data,
                          capture_output=True, timeout=120)
    assert bill.returncode == 0, bill.stderr
    assert json.loads(bill.stdout)["file"] == "-" and json.loads(bill.stdout)["rows_read"] == 200
    broken = subprocess.run([sys.executable, "-m", "workbench.cli", "actuals", "-"], input=b"a,b\n1,2\n",
                            capture_output=True, text=False, timeout=120)
    assert broken.returncode == 1 and broken.stderr.decode().startswith("workbench: error: -: missing FOCUS")


def _example_file(text):
    import tempfile
    path = Path(tempfile.mkdtemp()) / "plan.json"
    path.write_text(text)
    return [str(path)]


def test_app_refuses_a_port_out_of_range():
    result = run("app", "--port", "70000")
    assert result.returncode == 2 and "--port 70000: allowed: 1 to 65535" in result.stderr


def test_prices_lists_where_a_gpu_can_be_had_cheapest_first_in_the_display_currency():
    out = json.loads(run("prices", "--gpu", "H100", "--pricing", "on_demand", "--json").stdout)
    offers = out["offers"]
    assert out["gpu"] == "H100-SXM5-80GB" and len(offers) == 42  # the on-demand offers of data/prices.csv
    assert [o["usd_per_gpu_hour"] for o in offers] == sorted(o["usd_per_gpu_hour"] for o in offers)
    assert all(o["as_of"] and o["source"] and o["confidence"] for o in offers)
    # at least six provider-region offers, each dated: the question "where can a team have it, and for what"
    dated = {(o["provider"], o["region"]) for o in offers if o["region"] and o["as_of"][:4].isdigit()}
    assert len(dated) >= 6 and {p for p, _ in dated} >= {"aws", "azure", "gcp"}
    assert {"eastus", "westeurope", "japaneast"} <= {o["region"] for o in offers if o["provider"] == "azure"}
    assert out["typical_per_gpu_hour"] == 3.99
    cny = json.loads(run("prices", "--gpu", "H100", "--currency", "CNY", "--cny-per-usd", "7.2", "--json").stdout)
    assert all(o["display_per_gpu_hour"] == pytest.approx(o["usd_per_gpu_hour"] * 7.2) for o in cny["offers"])
    text = run("prices", "--gpu", "H800").stdout
    assert "deepseek-v3-report" in text and "the only on-demand offer on record" in text
    # no spot offer: the engine's own price for a plan, the on-demand offer times the spot ratio, with its source
    spot = run("prices", "--gpu", "H800", "--pricing", "spot").stdout
    assert spot.startswith("No spot offer on record for H800-SXM5-80GB; a plan without a provider pays 1.19 USD")
    none = run("prices", "--gpu", "L40S")
    assert none.returncode == 0 and "No offer on record for L40S" in none.stdout
    # rented by the month: the rent as quoted, per server and month, beside the price per GPU-hour
    monthly = run("prices", "--gpu", "A800", "--pricing", "monthly").stdout
    assert "35,000 CNY/8-GPU month" in monthly and "5.99 CNY" in monthly and "ctyun" in monthly
    for args, message in ((("--gpu", "H1000"), "--gpu: unknown GPU 'H1000'"),
                          (("--gpu", "x" * 500), "--gpu: unknown GPU '" + "x" * 40 + "...'"),
                          (("--gpu", "H100", "--cny-per-usd", "1e-300"), "is out of range; allowed: a number from 0.1 to 100"),
                          (("--gpu", "H100", "--cny-per-usd", "0"), "--cny-per-usd 0.0: is out of range")):
        bad = run("prices", *args)
        assert bad.returncode == 1 and message in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
