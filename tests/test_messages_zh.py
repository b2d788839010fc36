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
