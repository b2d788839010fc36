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
