"""Pruebas de las referencias del módulo 07 (``helpers.tinylm.reference``,
``helpers.tinylm.offpolicy``) y del acuerdo entre el cuaderno y ``helpers``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import helpers.tinylm
from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.grpo import (
    GRPOConfig,
    group_advantages,
    grpo_loss,
    grpo_step,
    k3_kl,
    normalize_loss,
    train_grpo,
)
from helpers.tinylm.model import TinyLM, TinyLMConfig
from helpers.tinylm.offpolicy import token_log_ratio, truncated_importance_weights
from helpers.tinylm.reference import (
    grpo_update,
    log10_num_responses,
    logit_push,
    path_log_probability,
    path_probability,
)
from helpers.tinylm.sampling import copy_model, sample
from helpers.tinylm.task import TARGET, encode_prompts, verify
from tests.notebooks import solution_functions

# --- números del ejemplo de 17 × 24 -----------------------------------------


def test_seed_path_probability():
    assert path_probability([0.6, 0.9, 0.7]) == pytest.approx(0.378, abs=1e-12)
    assert path_probability(torch.tensor([0.82])) == pytest.approx(0.82, abs=1e-7)


def test_path_log_probability_survives_where_the_product_underflows():
    assert path_log_probability([0.6, 0.9, 0.7]) == pytest.approx(math.log(0.378))
    long_path = [0.5] * 2000
    assert math.prod(long_path) == 0.0
    assert path_log_probability(long_path) == pytest.approx(2000 * math.log(0.5))
    # Un tensor en float32 da lo mismo, con la tolerancia del float32
    steps = torch.full((26,), 0.93)
    assert path_log_probability(steps) == pytest.approx(26 * math.log(0.93), rel=1e-6)


def test_more_than_ten_to_the_500_responses():
    exponent = log10_num_responses(150_000, 100)
    assert exponent > 500
    # Contra el entero exacto de Python (que sí cabe: no es un float)
    assert exponent == pytest.approx(math.log10(150_000**100), abs=1e-9)


def test_seed_verifier_numbers():
    assert verify("17×24=17×20+17×4=340+68=408.", 17, 24) == 1
    assert verify("17×24=17×20+17×4=340+58=398.", 17, 24) == 0


def test_seed_advantages_pencil_table():
    rewards = torch.tensor([[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0]])
    advantages = group_advantages(rewards)
    assert advantages.tolist() == [[-0.5, 0.5, 0.5, -0.5], [0.25, 0.25, -0.75, 0.25]]


# --- el empujón 1 − p ---------------------------------------------------------


@pytest.mark.parametrize(("token", "advantage"), [(0, 1.0), (2, -0.75), (3, 0.5)])
def test_logit_push_matches_autograd(token, advantage):
    logits = torch.tensor([2.0, 0.5, -1.0, 0.0], dtype=torch.float64)
    z = logits.clone().requires_grad_(True)
    (-advantage * torch.log_softmax(z, -1)[token]).backward()
    push = logit_push(logits, token, advantage)
    assert torch.allclose(push, -z.grad, atol=1e-12)
    p = torch.softmax(logits, -1)[token]
    assert push[token].item() == pytest.approx(advantage * (1 - p.item()))
    assert push.sum().item() == pytest.approx(0.0, abs=1e-12)


# --- un paso de GRPO -----------------------------------------------------------


def _parameters(model) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_grpo_update_is_grpo_step_without_clipping():
    problems = [TARGET, (12, 11), (47, 38)]
    cfg = GRPOConfig(group_size=4, max_grad_norm=float("inf"))
    results = []
    for step in (grpo_update, grpo_step):
        model = load_pretrained()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        generator = torch.Generator().manual_seed(0)
        for _ in range(2):
            if step is grpo_update:
                reward = step(model, optimizer, problems, 4, generator)
            else:
                reward = step(model, optimizer, problems, cfg, generator)["reward"]
            assert 0 <= reward <= 1
        results.append(_parameters(model))
    assert torch.allclose(results[0], results[1], atol=1e-7)
    assert not torch.equal(results[0], _parameters(load_pretrained()))


def test_grpo_update_reaches_every_parameter():
    # La pérdida sale de token_log_probs con gradiente: llega a todos los pesos
    model = load_pretrained()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    grpo_update(model, optimizer, [TARGET, (12, 11)], 4, torch.Generator())
    assert all(p.grad is not None for p in model.parameters())


# --- muestreo por importancia truncado ----------------------------------------


def test_truncated_weights_by_hand():
    trainer = torch.log(torch.tensor([[0.5, 0.9, 0.2, 1.0]]))
    sampler = torch.log(torch.tensor([[0.5, 0.3, 0.4, 1.0]]))
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
    weights = truncated_importance_weights(trainer, sampler, mask, cap=2.0)
    assert torch.allclose(weights, torch.tensor([[1.0, 2.0, 0.5, 0.0]]))


def test_truncated_weights_have_no_gradient_and_agree_with_the_loss():
    generator = torch.Generator().manual_seed(0)
    sampler = -torch.rand(3, 5, generator=generator)
    trainer = (sampler + 0.5 * torch.randn(3, 5, generator=generator)).requires_grad_()
    mask = torch.ones(3, 5)
    advantages = torch.tensor([1.0, -0.5, -0.5])
    weights = truncated_importance_weights(trainer, sampler, mask, cap=1.5)
    assert not weights.requires_grad
    by_hand = -(advantages * (weights * mask * trainer).sum(-1)).mean()
    reference = grpo_loss(trainer, mask, advantages, sampler, is_cap=1.5)
    assert by_hand.item() == pytest.approx(reference.item(), rel=1e-6)


def test_token_log_ratio_is_zero_for_the_same_model_and_not_for_bfloat16():
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(d_model=32, n_heads=4, n_layers=1, d_mlp=64)).eval()
    prompts = encode_prompts([TARGET] * 4)
    same = sample(model, prompts, generator=torch.Generator().manual_seed(0))
    assert token_log_ratio(model, same).abs().max() < 1e-5
    bf16 = copy_model(model, torch.bfloat16)
    other = sample(bf16, prompts, generator=torch.Generator().manual_seed(0))
    ratio = token_log_ratio(model, other)
    assert ratio.abs().max() > 1e-4
    assert ratio[other.mask == 0].eq(0).all()


def test_ignoring_the_mismatch_is_an_option_and_changes_the_update():
    # correct_off_policy=False: pesos 1 aunque el muestreador sea otro
    results = []
    for correct in (True, False):
        model = load_pretrained()
        cfg = GRPOConfig(
            steps=3, prompts_per_step=4, group_size=4, sampler_lag=2, lr=1e-3
        )
        cfg.correct_off_policy = correct
        train_grpo(model, cfg, progress=False, evaluate=False)
        results.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert not torch.equal(results[0], results[1])


def test_advantages_never_carry_gradient_in_the_reference_loss():
    log_probs = torch.full((2, 3), -0.5, requires_grad=True)
    advantages = torch.tensor([1.0, -1.0], requires_grad=True)
    grpo_loss(log_probs, torch.ones(2, 3), advantages).backward()
    assert advantages.grad is None


# --- el cuaderno y helpers dicen lo mismo -------------------------------------


def _notebook_functions() -> dict:
    return solution_functions(
        "07_grpo", {"math": math, "np": np, "torch": torch, "tl": helpers.tinylm}
    )


def test_notebook_solutions_agree_with_the_references():
    fns = _notebook_functions()
    generator = torch.Generator().manual_seed(3)
    rewards = (torch.rand(5, 6, generator=generator) > 0.5).float()
    rewards[0] = 1.0  # un grupo unánime: la trampa 0/0
    for std_normalize in (False, True):
        assert torch.allclose(
            fns["group_advantages"](rewards, std_normalize),
            group_advantages(rewards, std_normalize),
        )
    log_probs = -torch.rand(5, 6, generator=generator)
    mask = (torch.rand(5, 6, generator=generator) > 0.3).float()
    advantages = torch.randn(5, generator=generator)
    assert fns["grpo_loss"](log_probs, mask, advantages).item() == pytest.approx(
        grpo_loss(log_probs, mask, advantages).item(), abs=1e-6
    )
    sampler = log_probs + 0.3 * torch.randn(5, 6, generator=generator)
    assert torch.equal(
        fns["truncated_importance_weights"](log_probs, sampler, mask, 2.0),
        truncated_importance_weights(log_probs, sampler, mask, 2.0),
    )
    for steps in ([0.6, 0.9, 0.7], [0.5] * 2000, torch.full((26,), 0.93)):
        assert fns["path_log_probability"](steps) == pytest.approx(
            path_log_probability(steps)
        )
    assert fns["log10_num_responses"](150_000, 100) == pytest.approx(
        log10_num_responses(150_000, 100)
    )
    logits = torch.randn(7, generator=generator)
    assert torch.allclose(
        fns["logit_push"](logits, 3, -0.5), logit_push(logits, 3, -0.5)
    )
    for text in ["17×24=17×20+17×4=340+68=408.", "17×20+17×4=340+58=398.", "408", ""]:
        assert fns["verify"](text, 17, 24) == verify(text, 17, 24)
    ref_log_probs = log_probs + 0.4 * torch.randn(5, 6, generator=generator)
    assert torch.allclose(
        fns["kl_penalty"](log_probs, ref_log_probs, mask),
        k3_kl(log_probs, ref_log_probs, mask),
    )
    states = []
    for update in (fns["grpo_update"], grpo_update):
        model = load_pretrained()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        update(
            model, optimizer, [TARGET, (12, 11)], 4, torch.Generator().manual_seed(1)
        )
        states.append(_parameters(model))
    assert torch.allclose(states[0], states[1], atol=1e-7)
    per_token = torch.randn(5, 6, generator=generator)
    mask[:, 0] = 1.0  # ninguna respuesta vacía
    for normalization in ("grpo", "dr_grpo", "token"):
        assert fns["normalize_loss"](per_token, mask, normalization).item() == (
            pytest.approx(normalize_loss(per_token, mask, normalization).item())
        )


# --- la comprobación acepta las dos desviaciones típicas ----------------------


def _advantages_with(std_of):
    def group_advantages_(rewards, std_normalize=False, eps=1e-6):
        advantages = rewards - rewards.mean(dim=-1, keepdim=True)
        if std_normalize:
            advantages = advantages / (std_of(rewards) + eps)
        return advantages

    return group_advantages_


def test_group_advantages_check_accepts_population_and_unbiased_std():
    from helpers.checks.grpo import check_group_advantages

    population = _advantages_with(lambda r: r.std(dim=-1, unbiased=False, keepdim=True))
    unbiased = _advantages_with(lambda r: r.std(dim=-1, keepdim=True))  # como TRL
    check_group_advantages(population, quiet=True)
    check_group_advantages(unbiased, quiet=True)

    # Mezclar convenciones según el tamaño del grupo no es ninguna de las dos
    def mixed_std(r):
        return r.std(dim=-1, unbiased=r.shape[-1] > 3, keepdim=True)

    with pytest.raises(AssertionError):
        check_group_advantages(_advantages_with(mixed_std), quiet=True)
