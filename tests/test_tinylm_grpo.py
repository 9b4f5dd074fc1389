"""Pruebas de las piezas de GRPO de referencia."""

import pytest
import torch

from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.grpo import (
    GRPOConfig,
    group_advantages,
    grpo_loss,
    grpo_step,
    train_grpo,
)
from helpers.tinylm.model import TinyLM, TinyLMConfig
from helpers.tinylm.sampling import copy_model
from helpers.tinylm.task import TARGET, rl_problems

# --- ventajas de grupo ------------------------------------------------------


def test_seed_group_mean_advantages():
    rewards = torch.tensor([[0.0, 1.0, 1.0, 0.0]])  # A, B, C, D del ejemplo
    advantages = group_advantages(rewards)
    assert advantages.tolist() == [[-0.5, 0.5, 0.5, -0.5]]
    assert advantages.sum() == 0


def test_all_right_or_all_wrong_groups_teach_nothing():
    rewards = torch.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    for std_normalize in (False, True):
        advantages = group_advantages(rewards, std_normalize=std_normalize)
        assert torch.isfinite(advantages).all()  # sin la trampa 0/0
        assert advantages.eq(0).all()


def test_three_right_one_wrong():
    advantages = group_advantages(torch.tensor([[1.0, 1.0, 0.0, 1.0]]))
    assert advantages.tolist() == [[0.25, 0.25, -0.75, 0.25]]


def test_std_normalized_advantages_against_a_loop():
    rewards = torch.tensor([[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0]])
    advantages = group_advantages(rewards, std_normalize=True, eps=1e-6)
    for group, row in zip(rewards.tolist(), advantages.tolist(), strict=True):
        mean = sum(group) / len(group)
        std = (sum((r - mean) ** 2 for r in group) / len(group)) ** 0.5
        expected = [(r - mean) / (std + 1e-6) for r in group]
        assert row == pytest.approx(expected, abs=1e-6)
    assert advantages[0].tolist() == pytest.approx([-1, 1, 1, -1], abs=1e-5)


# --- pérdida ------------------------------------------------------------------


def test_loss_against_a_hand_computation():
    torch.manual_seed(0)
    log_probs = -torch.rand(4, 5)
    mask = torch.tensor(
        [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0]]
    )
    advantages = torch.tensor([-0.5, 0.5, 0.5, -0.5])
    expected = 0.0
    for i in range(4):
        total = sum(log_probs[i, t].item() for t in range(5) if mask[i, t])
        expected += advantages[i].item() * total
    expected = -expected / 4
    loss = grpo_loss(log_probs, mask.float(), advantages)
    assert loss.item() == pytest.approx(expected, abs=1e-6)


def test_padding_does_not_change_the_loss_or_receive_gradient():
    log_probs = torch.full((2, 4), -0.3, requires_grad=True)
    mask = torch.tensor([[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    advantages = torch.tensor([1.0, -1.0])
    loss = grpo_loss(log_probs, mask, advantages)
    loss.backward()
    assert log_probs.grad[0, 2:].eq(0).all()
    # d pérdida / d log π = −A · m / B
    expected = -advantages[:, None] * mask / 2
    assert torch.allclose(log_probs.grad, expected)


def test_push_on_own_logit_is_one_minus_p():
    # Un solo token elegido con ventaja 1: el descenso de gradiente sube su
    # logit en 1 − p y baja cada uno de los demás en su probabilidad.
    logits = torch.tensor([[2.0, 0.5, -1.0, 0.0]], requires_grad=True)
    log_probs = logits.log_softmax(dim=-1)[:, :1]  # (1, 1): elegimos el token 0
    grpo_loss(log_probs, torch.ones(1, 1), torch.tensor([1.0])).backward()
    p = logits.detach().softmax(dim=-1)[0]
    push = -logits.grad[0]
    assert push[0].item() == pytest.approx(1 - p[0].item(), abs=1e-6)
    assert torch.allclose(push[1:], -p[1:], atol=1e-6)


def test_importance_weights():
    torch.manual_seed(1)
    log_probs = -torch.rand(3, 4, requires_grad=True)
    mask = torch.ones(3, 4)
    advantages = torch.tensor([1.0, -0.5, -0.5])
    plain = grpo_loss(log_probs, mask, advantages)
    # Si el muestreador coincide con el entrenador, los pesos valen 1
    same = grpo_loss(log_probs, mask, advantages, log_probs.detach().clone())
    assert same.item() == pytest.approx(plain.item(), abs=1e-6)
    # Un muestreador que daba la mitad de probabilidad: peso 2, truncado a 1,5
    sampler = log_probs.detach() - torch.log(torch.tensor(2.0))
    doubled = grpo_loss(log_probs, mask, advantages, sampler)
    capped = grpo_loss(log_probs, mask, advantages, sampler, is_cap=1.5)
    assert doubled.item() == pytest.approx(2 * plain.item(), rel=1e-5)
    assert capped.item() == pytest.approx(1.5 * plain.item(), rel=1e-5)
    # El peso no se deriva: el gradiente es w · (el de la pérdida sin pesos)
    (grad_plain,) = torch.autograd.grad(plain, log_probs)
    (grad_doubled,) = torch.autograd.grad(doubled, log_probs)
    assert torch.allclose(grad_doubled, 2 * grad_plain, atol=1e-6)


# --- un paso y el bucle -------------------------------------------------------


@pytest.fixture
def pretrained():
    return load_pretrained()


@pytest.fixture
def tiny_model():
    torch.manual_seed(0)
    return TinyLM(TinyLMConfig(d_model=32, n_heads=4, n_layers=1, d_mlp=64)).eval()


def test_grpo_step_updates_the_model_and_reports_metrics(pretrained):
    before = [p.detach().clone() for p in pretrained.parameters()]
    optimizer = torch.optim.Adam(pretrained.parameters(), lr=1e-4)
    cfg = GRPOConfig(prompts_per_step=8, group_size=8)
    generator = torch.Generator().manual_seed(0)
    problems = rl_problems()[:7] + [TARGET]
    metrics = grpo_step(pretrained, optimizer, problems, cfg, generator)
    assert set(metrics) == {"reward", "loss", "mixed_groups", "logprob_gap"}
    assert all(torch.isfinite(torch.tensor(v)) for v in metrics.values())
    assert 0 < metrics["reward"] < 1
    assert metrics["logprob_gap"] < 1e-4  # el muestreador es el propio modelo
    after = list(pretrained.parameters())
    assert any(not torch.equal(x, y) for x, y in zip(before, after, strict=True))


def test_groups_without_signal_do_not_move_the_model(tiny_model):
    # Un modelo sin entrenar nunca acierta: todas las ventajas valen 0, el
    # gradiente es 0 y Adam deja los pesos como estaban
    before = [p.detach().clone() for p in tiny_model.parameters()]
    optimizer = torch.optim.Adam(tiny_model.parameters(), lr=1e-3)
    cfg = GRPOConfig(prompts_per_step=4, group_size=4)
    generator = torch.Generator().manual_seed(0)
    metrics = grpo_step(tiny_model, optimizer, rl_problems()[:4], cfg, generator)
    assert metrics["reward"] == 0.0 and metrics["mixed_groups"] == 0.0
    after = list(tiny_model.parameters())
    assert all(torch.equal(x, y) for x, y in zip(before, after, strict=True))


def test_bfloat16_sampler_shows_a_mismatch(tiny_model):
    optimizer = torch.optim.Adam(tiny_model.parameters(), lr=1e-3)
    cfg = GRPOConfig(prompts_per_step=4, group_size=4, is_cap=2.0)
    sampler = copy_model(tiny_model, dtype=torch.bfloat16)
    generator = torch.Generator().manual_seed(0)
    metrics = grpo_step(
        tiny_model, optimizer, rl_problems()[:4], cfg, generator, sampler
    )
    assert metrics["logprob_gap"] > 1e-4


def test_stale_sampler_lags_behind(pretrained):
    cfg = GRPOConfig(steps=3, prompts_per_step=8, sampler_lag=2, lr=1e-3)
    history = train_grpo(pretrained, cfg, progress=False, evaluate=False)
    assert "heldout_accuracy" not in history
    assert history["step"] == [1, 2, 3]
    gaps = history["logprob_gap"]
    assert gaps[0] < 1e-4  # en el paso 1 aún no hay pesos antiguos
    assert gaps[2] > 10 * max(gaps[0], 1e-6)  # en el paso 3, dos pasos de retraso


def test_short_grpo_run_raises_heldout_accuracy(pretrained):
    cfg = GRPOConfig(steps=30, eval_samples=4)
    history = train_grpo(pretrained, cfg, progress=False)
    before, after = history["heldout_accuracy"][0], history["heldout_accuracy"][-1]
    assert history["eval_step"] == [0, 30]
    assert len(history["reward"]) == 30
    assert after > before + 0.05, f"precisión {before:.3f} -> {after:.3f}"
    assert history["p_correct"][-1] > history["p_correct"][0]


def test_training_uses_the_chosen_threads_and_restores_them(pretrained):
    torch.set_num_threads(2)
    try:
        cfg = GRPOConfig(steps=1, prompts_per_step=2, num_threads=1)
        train_grpo(pretrained, cfg, progress=False, evaluate=False)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(1)
