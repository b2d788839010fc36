"""Chinchilla scaling laws: loss L(N, D), compute-optimal model size and tokens for a FLOP budget.

L(N, D) = E + A / N^alpha + B / D^beta (Hoffmann et al. 2022, arXiv:2203.15556, eq. 2). The named fits
live in ``data/scaling_laws.csv``; the default is Besiroglu et al. 2024's refit (arXiv:2404.10102).
"""
from __future__ import annotations


import numpy as np

from ..reference.data import cached, read_table
from ..reference.messages import Message

DEFAULT_LAW = "besiroglu2024"
#: A plan whose parameter count is more than this factor away from the compute-optimal one for the same
#: FLOPs gets a warning: at 4x, tokens per parameter differ ~16x from the optimum (about 20 -> 320 or 1.3).
FAR_FROM_OPTIMAL_FACTOR = 4.0


@cached
def scaling_laws() -> dict[str, dict[str, float]]:
    """Named fits: {name: {E, A, B, alpha, beta, source}}."""
    table = read_table("scaling_laws.csv", numeric=("E", "A", "B", "alpha", "beta"),
                       required=("name", "E", "A", "B", "alpha", "beta", "source"), key="name",
                       bounds={"E": (0, 10), "A": (1, 1e6), "B": (1, 1e6), "alpha": (0.05, 1), "beta": (0.05, 1)})
    return {row["name"]: row for row in table.to_dict("records")}


def loss(params, tokens, law=DEFAULT_LAW):
    """Predicted pre-training cross-entropy loss of N parameters trained on D tokens [nat/token]."""
    p = scaling_laws()[law]
    params, tokens = np.asarray(params, dtype=float), np.asarray(tokens, dtype=float)
    return p["E"] + p["A"] / params ** p["alpha"] + p["B"] / tokens ** p["beta"]


def compute_optimal(flops, law=DEFAULT_LAW):
    """(N_opt [parameters], D_opt [tokens]) minimising L under C = 6 N D.

    N_opt = G (C/6)^(beta/(alpha+beta)), G = (alpha A / (beta B))^(1/(alpha+beta)), D_opt = C / (6 N_opt).
    Hoffmann et al. 2022, App. D.2. With the default fit, Chinchilla's C = 5.76e23 gives 72B parameters and 1.33T tokens.
    """
    p = scaling_laws()[law]
    a, b = p["alpha"], p["beta"]
    g = (a * p["A"] / (b * p["B"])) ** (1.0 / (a + b))
    flops = np.asarray(flops, dtype=float)
    n_opt = g * (flops / 6.0) ** (b / (a + b))
    return n_opt, flops / (6.0 * n_opt)


def compute_optimal_tokens(params, law=DEFAULT_LAW):
    """Tokens D for which ``params`` is the compute-optimal size [token]: invert N_opt(C), D = C / (6 N)."""
    p = scaling_laws()[law]
    a, b = p["alpha"], p["beta"]
    g = (a * p["A"] / (b * p["B"])) ** (1.0 / (a + b))
    params = np.asarray(params, dtype=float)
    flops_over_6 = (params / g) ** ((a + b) / b)
    return flops_over_6 / params


def tokens_per_param(params, tokens):
    """Training tokens per parameter [token/parameter]; compute-optimal is about 20 (Hoffmann et al.)."""
    return np.asarray(tokens, dtype=float) / np.asarray(params, dtype=float)


def optimality_warning(params, tokens, law=DEFAULT_LAW):
    """A warning (:class:`~workbench.reference.messages.Message`) when (N, D) is far from compute-optimal for its own
    6 N D budget, else None (scalars)."""
    n_opt, d_opt = compute_optimal(6.0 * params * tokens, law)
    ratio = float(params / n_opt)
    if 1.0 / FAR_FROM_OPTIMAL_FACTOR <= ratio <= FAR_FROM_OPTIMAL_FACTOR:
        return None
    return Message("ew_smaller_than_optimal" if ratio < 1 else "ew_larger_than_optimal", params=params, tokens=tokens,
                   per_param=tokens / params, factor=1.0 / ratio if ratio < 1 else ratio, params_optimal=float(n_opt),
                   tokens_optimal=float(d_opt), law=law)
