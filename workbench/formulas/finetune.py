"""Post-training compute: supervised fine-tuning, reward models, policy optimisation, evaluation.

Model-FLOP conventions as in :mod:`workbench.formulas.compute`. The backward pass costs 2x the forward: half for
the gradients with respect to activations (always needed), half for the weight gradients (only for
trainable weights). A fine-tune updating a fraction f of the weights therefore costs (4 + 2 f) N D plus
attention; f = 1 gives 6 N D (Hu et al. 2021, LoRA, arXiv:2106.09685, Sec. 4.2 on the saved compute).
"""
from __future__ import annotations

import numpy as np

from .compute import attention_training_flops


def sft_flops(active_params, tokens, trainable_fraction, seq_len, d_model, n_layers):
    """Supervised fine-tuning [FLOP]: (4 + 2 f) N D + causal attention 6 D L s h."""
    n, d = np.asarray(active_params, dtype=float), np.asarray(tokens, dtype=float)
    return (4.0 + 2.0 * np.asarray(trainable_fraction)) * n * d + attention_training_flops(d, seq_len, d_model, n_layers)


def forward_flops(active_params, tokens):
    """Forward passes only (evaluation, generation, scoring) [FLOP]: 2 N per token (Kaplan et al. 2020)."""
    return 2.0 * np.asarray(active_params, dtype=float) * np.asarray(tokens, dtype=float)


def policy_update_flops(policy_params, reward_model_params, rollout_tokens):
    """Policy optimisation on generated tokens, excluding generation itself [FLOP].

    Per rollout token: a training step of the policy (6 N), log-probabilities of the frozen reference
    policy (2 N) and scoring by the reward model (2 N_rm). No separate value model (GRPO-style; Shao et
    al. 2024, arXiv:2402.03300); PPO's critic would add 8 N_critic.
    """
    t = np.asarray(rollout_tokens, dtype=float)
    return (8.0 * np.asarray(policy_params, dtype=float) + 2.0 * np.asarray(reward_model_params, dtype=float)) * t
