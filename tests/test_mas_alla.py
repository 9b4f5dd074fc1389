"""Pruebas del módulo 08 · Más allá de GRPO: el cuaderno y las referencias de
``helpers.tinylm.methods`` dicen lo mismo.

Las pruebas de las referencias mismas están en ``tests/test_tinylm_methods.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import helpers.tinylm as tl
from helpers.tinylm.evaluate import estimate_pass_at_k
from helpers.tinylm.methods import (
    buggy_verify,
    exploit_flags,
    rloo_advantages,
    token_gae,
    token_level_rewards,
)
from tests.notebooks import solution_functions


def _notebook_functions() -> dict:
    names = {"np": np, "torch": torch, "tl": tl, "buggy_verify": buggy_verify}
    return solution_functions("08_mas_alla", {"math": math, **names})


def _batch(seed: int, lengths: list[int], length: int):
    generator = torch.Generator().manual_seed(seed)
    mask = torch.zeros(len(lengths), length, dtype=torch.bool)
    for row, n in enumerate(lengths):
        mask[row, :n] = True
    log_probs = -torch.rand(len(lengths), length, generator=generator)
    ref_log_probs = log_probs + 0.3 * torch.randn(
        len(lengths), length, generator=generator
    )
    scores = (torch.rand(len(lengths), generator=generator) > 0.5).float()
    values = torch.rand(len(lengths), length, generator=generator)
    return scores, log_probs, ref_log_probs, mask, values


def test_notebook_solutions_agree_with_the_references():
    fns = _notebook_functions()
    generator = torch.Generator().manual_seed(0)
    rewards = (torch.rand(6, 5, generator=generator) > 0.5).float()
    assert torch.allclose(fns["rloo_advantages"](rewards), rloo_advantages(rewards))
    single = torch.tensor([1, 0, 0, 1])
    assert torch.allclose(fns["rloo_advantages"](single), rloo_advantages(single))

    scores, log_probs, ref_log_probs, mask, values = _batch(1, [6, 2, 4, 1], 6)
    by_token = fns["token_level_rewards"](scores, log_probs, ref_log_probs, mask, 0.1)
    want = token_level_rewards(scores, log_probs, ref_log_probs, mask, 0.1)
    assert torch.allclose(by_token, want, atol=1e-6)
    for gamma, lam in [(1.0, 0.95), (0.9, 0.5), (1.0, 1.0)]:
        assert torch.allclose(
            fns["token_gae"](want, values, mask, gamma, lam),
            token_gae(want, values, mask, gamma, lam),
            atol=1e-5,
        )

    for n, c, k in [(10, 3, 2), (64, 5, 16), (2000, 3, 1000), (50, 48, 10)]:
        assert fns["estimate_pass_at_k"](n, c, k) == pytest.approx(
            estimate_pass_at_k(n, c, k), abs=1e-9
        )

    texts = [
        "17×20+17×4=340+68=408.",
        "17×20+17×4=340+68=418.",
        "17×20+17×4=340+58=398.",
        "23×40+23×5=920+115=1035.",
    ]
    problems = [(17, 24), (17, 24), (17, 24), (23, 45)]
    assert fns["exploit_flags"](texts, problems) == exploit_flags(texts, problems)


def test_token_gae_with_gamma_and_lambda_one_gives_reward_to_go_minus_value():
    # Con γ = λ = 1, Â_t = Σ_{u ≥ t} r_u − V_t dentro de cada respuesta
    scores, log_probs, ref_log_probs, mask, values = _batch(2, [5, 3], 5)
    rewards = token_level_rewards(scores, log_probs, ref_log_probs, mask, 0.2)
    advantages = token_gae(rewards, values, mask, 1.0, 1.0)
    to_go = rewards.flip(-1).cumsum(-1).flip(-1)
    assert torch.allclose(advantages, (to_go - values) * mask, atol=1e-5)
