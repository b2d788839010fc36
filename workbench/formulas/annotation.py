"""Human annotation: labels bought, labels redone, labels reviewed.

Each paid label costs its unit price once; a share ``rework_rate`` is redone because it was noisy or
wrong (AlpacaEval measures 65.7 % agreement between human annotators, so disagreement is common), and a
share ``qa_share`` is reviewed a second time for quality assurance, each at the unit price.
"""
from __future__ import annotations

import numpy as np


def annotation_units(count, rework_rate, qa_share):
    """(labels bought, labels redone, labels reviewed) [label] for ``count`` labels."""
    count = np.asarray(count, dtype=float)
    return count, count * np.asarray(rework_rate, dtype=float), count * np.asarray(qa_share, dtype=float)


#: Above this residual share a binary label carries no signal (at 0.5 it is a coin); the factor is capped here.
MAX_RESIDUAL_NOISE = 0.45


def residual_noise_share(label_noise_share, rework_rate):
    """Share of labels still wrong after rework [fraction]: each label redone replaces one that QA found wrong,
    until none are left (planning assumption: rework targets the labels QA flags)."""
    residual = np.asarray(label_noise_share, dtype=float) - np.asarray(rework_rate, dtype=float)
    return np.clip(residual, 0.0, MAX_RESIDUAL_NOISE)


def noisy_label_factor(residual_noise):
    """Training passes needed over noisy labels for the signal of clean ones [ratio]: 1 / (1 - 2 eta)^2 for a
    share eta of binary labels flipped at random (Angluin and Laird 1988, "Learning from noisy examples", Machine
    Learning 2: the sample complexity grows by this factor; a preference comparison is such a label)."""
    eta = np.clip(np.asarray(residual_noise, dtype=float), 0.0, MAX_RESIDUAL_NOISE)
    return 1.0 / (1.0 - 2.0 * eta) ** 2
