"""Validation messages in the Chinese UI are Chinese: what is left in Latin letters is a name (a field, a GPU,
a provider, a file, a precision), never an English sentence."""
import re

import pytest

from workbench import Scenario, ScenarioError, estimate
from workbench.reference import catalog, prices
from workbench.plan.scenario import fields

BAD = [dict(n_gpus=0), dict(params="abc"), dict(mfu=2), dict(gpu="H900"), dict(pricing="cheap"), dict(tokens="1,5T"),
       dict(active_params=8e9, params=7e9), dict(name="a" * 200), dict(name="a\x00b"), dict(gpu="L40S"),
       dict(gpu="V100-SXM2-32GB"), dict(provider="aws", gpu="MI300X"), dict(pricing="self_hosted", gpu="L4"),
       dict(serving_months=1, gpu="Ascend-910B", precision="fp16", price_per_gpu_hour=1),
       dict(pipeline_parallel=64), dict(params=70e9, n_kv_heads=1000), dict(n_gpus=4, tensor_parallel=8),
       dict(peak_to_average=0.5), dict(weight_precision="fp4"), dict(target_days=-1), dict(seq_len=1.5)]


def names():
    words = set(fields()) | set(catalog.gpu_ids()) | set(prices.providers())
    for f in fields().values():
        words |= {str(c) for c in (f.choices or ())}
    return words


def english_left(message: str) -> list[str]:
    text = re.sub(r"`[^`]*`|'[^']*?(?:'|\.\.\.)|data/\S+", " ", message)  # quoted values and paths are names
    known = names()
    tokens = re.findall(r"[A-Za-z][A-Za-z0-9_.+-]*", text)
    return [w for w in tokens if w not in known and not re.fullmatch(r"[A-Z0-9-]+|[a-z]+\d+\w*|e\+?\d+", w)
            and len(w) > 2 and w not in {"token", "provider", "median", "roofline"}]


@pytest.mark.parametrize("kw", BAD, ids=lambda kw: ",".join(kw))
def test_chinese_messages_have_no_english_sentences(kw):
    with pytest.raises(ScenarioError) as err:
        Scenario(**kw)
    message = err.value.message("zh")
    assert english_left(message) == [], message


def test_the_serving_replica_error_in_chinese():
    with pytest.raises(ScenarioError) as err:
        estimate(params=70e9, gpu="H100", serving_tensor_parallel=1, serving_months=1)
    assert "需要 2 块 GPU 的 H100-SXM5-80GB 显存" in err.value.message("zh")
    assert english_left(err.value.message("zh")) == []


def test_every_cost_line_and_unit_has_a_chinese_name():
    """Issue 31: a cost line's name and unit read in Chinese in the Chinese UI, workbook and CSV; a new line without
    a row in data/line_items_zh.csv (or a new unit) fails here."""
    from workbench import Scenario, estimate
    from workbench.programmes import programme_presets, timeline
    from workbench.reference.i18n import item_label, unit_label
    items, units = set(), set()
    for values in ({}, {"pricing": "self_hosted"}, {"pricing": "reserved_1y"}, {"pricing": "spot"},
                   {"plan_kind": "open_weights", "serving_months": 12}, {"plan_kind": "serve_only", "serving_months": 12},
                   {"serving_months": 12, "serving_provisioning": "autoscaling"}, {"precision": "fp8"},
                   {"serving_months": 6, "serving_pricing": "reserved_1y", "serving_peak_pricing": "on_demand"}):
        lines = estimate(Scenario(**values)).lines
        items |= set(lines["item"])
        units |= set(lines["unit"])
    for preset in programme_presets.presets()["id"]:
        items |= set(timeline.evaluate(programme_presets.preset(preset)).lines["item"])
    assert len(items) > 55
    untranslated = sorted(i for i in items if item_label(i, "zh") == i or re.search(r"[a-z]{3,}", item_label(i, "zh"))
                          and not re.search(r"^(SFT|GPU|CPU|API|GB)", item_label(i, "zh")))
    assert untranslated == []
    assert sorted(u for u in units if unit_label(u, "zh") == u and u not in ("GB",)) == []


def test_every_problem_written_in_the_code_has_chinese():
    """Issue 31: every refusal the code writes as a literal (ScenarioError's and ProgrammeError's problem) reads in
    Chinese; a new one without a translation in workbench.reference.i18n fails here, naming its file and line."""
    import ast
    from pathlib import Path
    from workbench.reference.i18n import problem_zh
    root = Path(__file__).resolve().parents[1] / "workbench"
    found, missing = 0, []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            index = {"ScenarioError": 2, "ProgrammeError": 3}.get(name)
            if index is None or len(node.args) <= index:
                continue
            problem = node.args[index]
            if isinstance(problem, ast.Constant) and isinstance(problem.value, str):
                found += 1
                if problem_zh(problem.value) == problem.value:
                    missing.append(f"{path.relative_to(root)}:{node.lineno}: {problem.value}")
    assert found > 90 and missing == []


@pytest.mark.parametrize("values", [
    {"budget_usd": 1e6}, {"params": 70e9, "tokens": 20e12}, {"params": 1e9, "tokens": 1e14}, {"gpu": "B200"},
    {"redundancy_factor": 1.0}, {"checkpoint_interval_hours": 24}, {"checkpoint_interval_hours": 0.05},
    {"pricing": "reserved_1y"}, {"plan_kind": "serve_only"}, {"n_gpus": 100, "tensor_parallel": 8, "pipeline_parallel": 3},
    {"params": 70e9, "log_sampling_ratio": 0.1}, {"precision": "fp8", "divergence_allowance": "none"},
])
def test_the_estimates_warnings_read_in_chinese(values):
    """Issue 31: each warning the estimate gives (raised here one by one) reads in Chinese in the app: no run of
    three English words is left once it is translated and its field ids are labels."""
    from workbench.report.views import warning_text
    warnings = estimate(Scenario(**values)).warnings
    assert warnings, values
    for warning in warnings:
        text = warning_text(warning, "zh", "CNY", 7.1)
        english = re.findall(r"[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}", text)
        assert english == [] or all("Young" in e or "Daly" in e for e in english), (warning, text)
