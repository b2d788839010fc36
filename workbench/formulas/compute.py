"""Training compute and time: FLOPs, GPU-hours, wall-clock days, cluster size.

Convention used everywhere in the workbench: **model FLOPs** of a decoder-only transformer, counting the
matrix multiplications of the forward (x1) and backward (x2) passes, with the causal mask exploited in
attention (half of the s x s score and weighted-sum matmuls), as Megatron-LM's
``num_floating_point_operations`` does. Recomputed activations are *hardware* FLOPs: they are reported by
:func:`recompute_flops` but do not count towards MFU (Chowdhery et al. 2022, PaLM, App. B).
All functions take scalars or numpy arrays and broadcast.
"""
from __future__ import annotations

import numpy as np

#: Width-to-depth ratio used when only the parameter count is known. Llama 2 7B: 4096/32 = 128;
#: Llama 3 405B: 16384/126 = 130; Kaplan et al. 2020 (Fig. 5) find loss flat over 50-200.
ASPECT_RATIO = 128
#: Head size used to derive the number of attention heads (Llama 1-3, GPT-3 all use 128).
HEAD_DIM = 128


def derived_d_model(active_params):
    """Hidden size implied by ``active_params`` with N = 12 L h^2 and h = 128 L [-].

    Kaplan et al. 2020, arXiv:2001.08361, Sec. 2.1 (N ~= 12 n_layer d_model^2, embeddings excluded).
    Gives 4211 for 7e9 (Llama 2 7B: 4096) and 9072 for 7e10 (Llama 2 70B: 8192).
    """
    return np.cbrt(np.asarray(active_params, dtype=float) * ASPECT_RATIO / 12.0)


def derived_n_layers(d_model):
    """Number of layers for a hidden size at :data:`ASPECT_RATIO`, at least 1 [-]."""
    return np.maximum(1.0, np.round(np.asarray(d_model, dtype=float) / ASPECT_RATIO))


def dense_training_flops(active_params, tokens):
    """6 N D: forward 2ND plus backward 4ND over the weights [FLOP].

    Kaplan et al. 2020, arXiv:2001.08361, Sec. 2.1; EleutherAI, "Transformer Math 101" (2023).
    For mixture-of-experts pass the *active* parameters per token.
    """
    return 6.0 * np.asarray(active_params, dtype=float) * np.asarray(tokens, dtype=float)


def attention_training_flops(tokens, seq_len, d_model, n_layers):
    """Causal attention score and weighted-sum matmuls, forward and backward: 6 D L s h [FLOP].

    Per token and layer QK^T and AV cost 4 s h FLOP forward without a mask, x3 for forward + backward,
    halved by the causal mask. Relative to 6 N = 72 L h^2 this is s / (12 h): 8 % at s = 4096, h = 4096.
    Korthikanti et al. 2022, arXiv:2205.05198, Sec. 6; Narayanan et al. 2021, arXiv:2104.04473, App.
    """
    tokens, seq_len, d_model, n_layers = (np.asarray(x, dtype=float) for x in (tokens, seq_len, d_model, n_layers))
    return 6.0 * tokens * n_layers * seq_len * d_model


def training_flops(active_params, tokens, seq_len, d_model, n_layers):
    """Model FLOPs of a training run: :func:`dense_training_flops` + :func:`attention_training_flops` [FLOP]."""
    return dense_training_flops(active_params, tokens) + attention_training_flops(tokens, seq_len, d_model, n_layers)


def recompute_flops(active_params, tokens, seq_len, d_model, n_layers, recompute):
    """Extra hardware FLOPs spent recomputing activations [FLOP].

    ``full``: one more forward pass, 2 N D + 2 D L s h; ``selective``: the attention forward only,
    2 D L s h (Korthikanti et al. 2022, Sec. 5); ``none``: 0. Broadcasts over ``recompute`` too.
    """
    attention_forward = attention_training_flops(tokens, seq_len, d_model, n_layers) / 3.0
    dense_forward = dense_training_flops(active_params, tokens) / 3.0
    recompute = np.asarray(recompute, dtype=object)
    return np.where(recompute == "full", dense_forward + attention_forward,
                    np.where(recompute == "selective", attention_forward, 0.0))


def gpu_hours(flops, peak_flops_per_s, mfu):
    """GPU-hours to execute ``flops`` at ``mfu`` of the dense peak [GPU-h].

    GPU-h = C / (peak x MFU x 3600). Chowdhery et al. 2022 (PaLM), App. B.
    """
    return np.asarray(flops, dtype=float) / (np.asarray(peak_flops_per_s, dtype=float) * np.asarray(mfu) * 3600.0)


def wall_days(gpu_hours, n_gpus):
    """Wall-clock days for ``gpu_hours`` spread over ``n_gpus`` running in parallel [day]."""
    return np.asarray(gpu_hours, dtype=float) / np.asarray(n_gpus, dtype=float) / 24.0


def gpus_for_duration(gpu_hours, days, gpus_per_node=1):
    """Smallest whole number of nodes' GPUs that finishes ``gpu_hours`` within ``days`` [GPU]."""
    per_node = np.asarray(gpus_per_node, dtype=float)
    needed = np.asarray(gpu_hours, dtype=float) / (np.asarray(days, dtype=float) * 24.0)
    return np.maximum(per_node, np.ceil(needed / per_node - 1e-9) * per_node)
