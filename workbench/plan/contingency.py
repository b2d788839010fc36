"""Contingency where the model is blind: an engineering redundancy on each cost line, weighted by its category
(``data/contingency.csv``), and none on the lines that already price a risk (failures, restarts and divergence;
experiments; the rework and QA review of labels) or that are known to the dollar (a commitment's idle hours).

A line's contingency is ``(redundancy_factor - 1) x weight x cost``: at the default factor of 1.3, compute 1.15,
storage, network and logging 1.3, annotation 1.1 (the volume only), staff and power 1.15. Each stage has two
contingency lines, one on its fixed costs and one on its elastic costs, so that its type follows the lines it
covers.
"""
from __future__ import annotations

import numpy as np

from ..reference.data import cached, read_table

#: Lines that price their own risk, or are known to the dollar: no contingency whatever their category.
MODELLED_ITEMS = (": rework of noisy labels", ": QA review", "idle committed capacity")


@cached
def weights() -> dict[str, float]:
    """Category -> weight of the redundancy factor on it [fraction], from ``data/contingency.csv``."""
    from .lines import CATEGORIES
    table = read_table("contingency.csv", numeric=("weight",), required=("category", "weight", "why", "source"),
                       key="category", choices={"category": set(CATEGORIES)})
    out = dict(zip(table["category"], table["weight"].astype(float)))
    for category, weight in out.items():
        if not 0.0 <= weight <= 1.0:
            from ..reference.data import DataFileError, data_dir
            raise DataFileError(data_dir() / "contingency.csv", f"weight {weight:g} of {category} is out of range "
                                "(allowed: 0 to 1)", list(out).index(category) + 2, "weight")
    missing = set(CATEGORIES) - set(out)
    if missing:
        from ..reference.data import DataFileError, data_dir
        raise DataFileError(data_dir() / "contingency.csv", f"no weight for {', '.join(sorted(missing))} "
                            "(allowed: a row for each cost category)")
    return out


def line_weight(category, item) -> np.ndarray:
    """The contingency weight of each line (0 for a modelled risk or a known amount) [fraction]."""
    w = weights()
    category, item = np.asarray(category, dtype=object), np.asarray(item, dtype=object)
    modelled = np.array([any(m in str(i) for m in MODELLED_ITEMS) for i in item.ravel()], dtype=bool).reshape(item.shape)
    return np.where(modelled, 0.0, np.array([w.get(str(c), 0.0) for c in category.ravel()]).reshape(category.shape))
