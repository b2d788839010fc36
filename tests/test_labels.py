"""Label noise to compute, and the annotation levers (issue 28). Figures checked by hand."""
import numpy as np
import pytest

import workbench
from workbench.formulas import annotation
from workbench.programmes.levers import levers


def test_noisy_label_factor_by_hand():
    # Angluin and Laird 1988: 1 / (1 - 2 eta)^2; 20 % of binary labels flipped: 1 / 0.36
    assert annotation.noisy_label_factor(0.2) == pytest.approx(1 / 0.36)
    assert annotation.noisy_label_factor(0.0) == 1.0
    assert annotation.noisy_label_factor(0.9) == pytest.approx(1 / 0.1 ** 2)  # capped at 0.45
    # rework replaces wrong labels one for one, down to none
    assert annotation.residual_noise_share(0.3, 0.1) == pytest.approx(0.2)
    assert annotation.residual_noise_share(0.05, 0.1) == 0.0


def _post_training_hours(e):
    lines = e.lines
    return lines.loc[(lines["item"] == "accelerator time") & lines["stage"].isin(["sft"]), "quantity"].sum()


def _reward_model_hours(e):
    lines = e.lines
    return lines.loc[(lines["stage"] == "preference") & (lines["item"] == "reward model training"), "quantity"].sum()


def test_label_noise_adds_fine_tuning_compute():
    clean = workbench.estimate(label_noise_share=0.0)
    noisy = workbench.estimate(label_noise_share=0.3)  # 0.3 - 0.1 rework = 0.2 left: x 2.78 on reward-model tokens
    assert float(noisy.details["noisy_label_factor"]) == pytest.approx(1 / 0.36)
    assert _reward_model_hours(noisy) == pytest.approx(_reward_model_hours(clean) / 0.36)
    # SFT examples are not binary labels: their passes do not move
    assert float(noisy.details["sft_gpu_hours"]) == pytest.approx(float(clean.details["sft_gpu_hours"]))
    assert float(noisy.details["preference_gpu_hours"]) > float(clean.details["preference_gpu_hours"])
    assert noisy.total_cost_usd > clean.total_cost_usd
    # the labels bought are the same: annotation does not move
    ann = lambda e: e.lines.loc[e.lines["category"] == "annotation", "cost_usd"].sum()  # noqa: E731
    assert ann(noisy) == pytest.approx(ann(clean))
    # more rework lowers what is left, and with it the compute
    reworked = workbench.estimate(label_noise_share=0.3, annotation_rework_rate=0.3)
    assert _reward_model_hours(reworked) == pytest.approx(_reward_model_hours(clean))
    # the engine's batch agrees with one scenario at a time
    batch = workbench.estimate(label_noise_share=np.array([0.0, 0.3]))
    assert np.ravel(batch.total_cost_usd)[1] == pytest.approx(noisy.total_cost_usd)


def test_annotation_levers():
    table = levers(workbench.Scenario(label_noise_share=0.3)).set_index("lever")
    for lever in ("better_qa", "ai_feedback", "lora_sft"):
        assert table.loc[lever, "applicable"], lever
    assert table.loc["ai_feedback", "saving_usd"] > 0
    none = levers(workbench.Scenario(preference_pairs=0, sft_trainable_fraction=0.01)).set_index("lever")
    assert not none.loc["better_qa", "applicable"] and not none.loc["lora_sft", "applicable"]
