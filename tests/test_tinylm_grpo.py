"""Pruebas de las piezas de GRPO de referencia."""

import math

import pytest
import torch

from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.evaluate import kl_to_reference
from helpers.tinylm.grpo import (
    GRPOConfig,
    group_advantages,
    grpo_loss,
    grpo_objective_loss,
    grpo_step,
    k3_kl,
    normalize_loss,
    train_grpo,
    train_grpo_runs,
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


# --- el objetivo completo: k3, normalización, recorte -------------------------


def test_k3_against_a_hand_computation_and_its_gradient():
    log_probs = torch.log(torch.tensor([[0.5, 0.2, 0.9]])).requires_grad_(True)
    ref = torch.log(torch.tensor([[0.25, 0.2, 0.3]]))
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    kl = k3_kl(log_probs, ref, mask)
    # ρ = π_ref / π_θ: 0,5 en el primer token, 1 en el segundo; relleno 0
    expected = [0.5 - math.log(0.5) - 1, 0.0, 0.0]
    assert kl[0].tolist() == pytest.approx(expected, abs=1e-6)
    kl.sum().backward()
    # d k3 / d log π_θ = 1 − ρ en la respuesta y 0 en el relleno
    assert log_probs.grad[0].tolist() == pytest.approx([0.5, 0.0, 0.0], abs=1e-6)


def test_k3_is_never_negative_and_ignores_whatever_is_in_the_padding():
    generator = torch.Generator().manual_seed(0)
    log_probs = -3 * torch.rand(6, 5, generator=generator)
    ref = -3 * torch.rand(6, 5, generator=generator)
    mask = (
        torch.arange(5)[None] < torch.tensor([[5], [1], [3], [2], [4], [5]])
    ).float()
    kl = k3_kl(log_probs, ref, mask)
    assert (kl >= 0).all() and kl[mask == 0].eq(0).all()
    garbage = torch.where(mask.bool(), ref, torch.full_like(ref, 50.0))
    assert torch.equal(k3_kl(log_probs, garbage, mask), kl)
    assert k3_kl(log_probs, log_probs, mask).abs().max() < 1e-7


def test_the_three_length_normalizations_against_loops():
    generator = torch.Generator().manual_seed(1)
    per_token = torch.randn(3, 6, generator=generator)
    lengths = [6, 2, 4]
    mask = (torch.arange(6)[None] < torch.tensor(lengths)[:, None]).float()
    rows = [per_token[i, :n].tolist() for i, n in enumerate(lengths)]
    by_response = sum(sum(r) / len(r) for r in rows) / 3
    by_sum = sum(sum(r) for r in rows) / 3
    by_token = sum(sum(r) for r in rows) / sum(lengths)
    assert normalize_loss(per_token, mask, "grpo").item() == pytest.approx(by_response)
    assert normalize_loss(per_token, mask, "dr_grpo").item() == pytest.approx(by_sum)
    assert normalize_loss(per_token, mask, "token").item() == pytest.approx(by_token)
    with pytest.raises(ValueError, match="loss_normalization"):
        normalize_loss(per_token, mask, "sequence")


def test_with_grpo_normalization_a_long_wrong_answer_costs_less_per_token():
    log_probs = torch.full((2, 20), -0.5, requires_grad=True)
    mask = torch.zeros(2, 20)
    mask[0, :5], mask[1, :20] = 1, 1  # una respuesta corta y una larga
    advantages = torch.tensor([-1.0, -1.0])  # las dos fallan
    push = {}
    for normalization in ("grpo", "dr_grpo", "token"):
        loss = grpo_objective_loss(
            log_probs, mask, advantages, normalization=normalization
        )
        (grad,) = torch.autograd.grad(loss, log_probs)
        push[normalization] = grad[0, 0].item(), grad[1, 0].item()
    short, long_ = push["grpo"]
    assert short == pytest.approx(4 * long_)  # 1/5 frente a 1/20
    assert push["dr_grpo"][0] == pytest.approx(push["dr_grpo"][1])
    assert push["token"][0] == pytest.approx(push["token"][1])


def test_on_policy_objective_has_the_gradient_of_the_short_loss():
    generator = torch.Generator().manual_seed(2)
    log_probs = (-torch.rand(4, 5, generator=generator)).requires_grad_(True)
    mask = (torch.arange(5)[None] < torch.tensor([[5], [2], [3], [4]])).float()
    advantages = torch.tensor([0.5, -0.5, 0.25, -0.25])
    short = grpo_loss(log_probs, mask, advantages)
    for clip_eps in (None, 0.2):
        full = grpo_objective_loss(
            log_probs, mask, advantages, clip_eps=clip_eps, normalization="dr_grpo"
        )
        (g_short,) = torch.autograd.grad(short, log_probs, retain_graph=True)
        (g_full,) = torch.autograd.grad(full, log_probs)
        # μ = 1: r = 1 en todos los tokens, el recorte no actúa
        assert torch.allclose(g_short, g_full, atol=1e-7)


def test_without_clip_the_objective_has_the_exact_gradient_of_the_short_loss():
    # El entrenador solo usa grpo_objective_loss: con μ = 1 y sin recorte, su
    # gradiente es el de grpo_loss bit a bit, también con pesos de importancia
    # (B = 3 y 5 respuestas, no potencias de 2: nada se redondea igual por azar)
    generator = torch.Generator().manual_seed(3)
    for B in (3, 5):
        log_probs = (-torch.rand(B, 6, generator=generator)).requires_grad_(True)
        sampler = log_probs.detach() - 0.3 * torch.rand(B, 6, generator=generator)
        lengths = torch.randint(1, 7, (B, 1), generator=generator)
        mask = (torch.arange(6)[None] < lengths).float()
        advantages = torch.randn(B, generator=generator)
        for cap in (None, 1.2):
            log_probs_zeroed = torch.where(mask.bool(), log_probs, 0.0)
            short = grpo_loss(log_probs_zeroed, mask, advantages, sampler, cap)
            weights = torch.exp(log_probs.detach() - sampler)
            if cap is not None:
                weights = weights.clamp(max=cap)
            full = grpo_objective_loss(
                log_probs_zeroed,
                mask,
                advantages,
                normalization="dr_grpo",
                weights=weights,
            )
            (g_short,) = torch.autograd.grad(short, log_probs, retain_graph=True)
            (g_full,) = torch.autograd.grad(full, log_probs)
            assert torch.equal(g_short, g_full)


def test_clip_stops_the_push_outside_the_interval():
    old = torch.log(torch.tensor([[0.5, 0.5, 0.5, 0.5]]))
    # r = 1,5 y 0,6 con ventaja +1 y con ventaja −1
    new = torch.log(torch.tensor([[0.75, 0.3, 0.75, 0.3]])).requires_grad_(True)
    mask = torch.ones(1, 4)
    grads = []
    for advantage in (1.0, -1.0):
        loss = grpo_objective_loss(
            new,
            mask,
            torch.tensor([advantage]),
            old_log_probs=old,
            clip_eps=0.2,
            normalization="token",
        )
        (grad,) = torch.autograd.grad(loss, new)
        grads.append(grad[0])
    # A > 0: r = 1,5 ya pasó de 1,2 (sin empuje); r = 0,6 sigue empujando
    assert grads[0][0] == 0 and grads[0][1] < 0
    # A < 0: r = 0,6 ya bajó de 0,8 (sin empuje); r = 1,5 sigue empujando
    assert grads[1][1] == 0 and grads[1][0] > 0
    # El recorte asimétrico de DAPO (ε_alto = 0,6) deja subir hasta 1,6
    loss = grpo_objective_loss(
        new,
        mask,
        torch.tensor([1.0]),
        old_log_probs=old,
        clip_eps=0.2,
        clip_eps_high=0.6,
        normalization="token",
    )
    (grad,) = torch.autograd.grad(loss, new)
    assert grad[0, 0] < 0


def test_kl_term_adds_beta_times_k3():
    generator = torch.Generator().manual_seed(3)
    log_probs = -torch.rand(3, 4, generator=generator)
    ref = -torch.rand(3, 4, generator=generator)
    mask = torch.ones(3, 4)
    advantages = torch.tensor([1.0, 0.0, -1.0])
    plain = grpo_objective_loss(log_probs, mask, advantages)
    with_kl = grpo_objective_loss(
        log_probs, mask, advantages, ref_log_probs=ref, kl_coef=0.1
    )
    kl = normalize_loss(k3_kl(log_probs, ref, mask), mask, "grpo")
    assert with_kl.item() == pytest.approx(plain.item() + 0.1 * kl.item(), abs=1e-6)
    with pytest.raises(ValueError, match="ref_log_probs"):
        grpo_objective_loss(log_probs, mask, advantages, kl_coef=0.1)


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
    assert set(metrics) == {
        "reward",
        "loss",
        "mixed_groups",
        "logprob_gap",
        "length",
        "wrong_length",
        "clip_fraction",
        "old_kl",
        "entropy",
    }
    assert all(torch.isfinite(torch.tensor(v)) for v in metrics.values())
    # μ = 1: el cociente vale 1, nada se recorta y π_θ no se separa de π_old
    assert metrics["clip_fraction"] == 0 and metrics["old_kl"] == 0
    assert 0 < metrics["length"] <= 26 and metrics["wrong_length"] > 0
    assert 0 < metrics["reward"] < 1
    # la entropía por token de un vocabulario de V caracteres está entre 0 y log V
    assert 0 < metrics["entropy"] < math.log(pretrained.cfg.vocab_size), metrics
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


@pytest.mark.slow
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


def test_epochs_with_clip_and_kl_penalty_in_a_short_run(pretrained):
    cfg = GRPOConfig(
        steps=2, prompts_per_step=8, epochs=3, clip_eps=0.2, kl_coef=0.1, lr=1e-3
    )
    history = train_grpo(pretrained, cfg, progress=False, evaluate=False)
    # En el paso 1 el modelo es la referencia: KL 0 exacta; luego se separa
    assert history["kl_ref"][0] == 0 and history["kl_ref"][1] > 0
    # Con μ = 3 la segunda y la tercera época ya no son la política vieja
    assert all(k > 0 for k in history["old_kl"])
    assert all(0 <= f < 1 for f in history["clip_fraction"])


def test_kl_coef_needs_a_reference_and_bad_settings_are_refused(pretrained):
    optimizer = torch.optim.Adam(pretrained.parameters(), lr=1e-4)
    generator = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="reference"):
        grpo_step(pretrained, optimizer, [TARGET], GRPOConfig(kl_coef=0.1), generator)
    for bad in (GRPOConfig(epochs=0), GRPOConfig(loss_normalization="mean")):
        with pytest.raises(ValueError):
            train_grpo(pretrained, bad, progress=False, evaluate=False)


def test_threads_are_restored_even_if_training_fails(pretrained):
    def broken(completions, problems):
        raise RuntimeError("recompensa rota")

    torch.set_num_threads(2)
    try:
        cfg = GRPOConfig(steps=1, prompts_per_step=2, num_threads=1)
        with pytest.raises(RuntimeError, match="recompensa rota"):
            train_grpo(
                pretrained, cfg, progress=False, evaluate=False, reward_fn=broken
            )
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(1)


def test_minibatches_and_entropy_bonus_in_a_short_run(pretrained):
    cfg = GRPOConfig(
        steps=2,
        prompts_per_step=4,
        group_size=4,
        epochs=2,
        minibatches=2,
        clip_eps=0.2,
        entropy_coef=0.01,
        lr=1e-3,
    )
    history = train_grpo(pretrained, cfg, progress=False, evaluate=False)
    assert history["step"] == [1, 2]
    # Cuatro pasos de gradiente por lote: desde el segundo, π_θ ≠ π_old
    assert all(k > 0 for k in history["old_kl"])
    with pytest.raises(ValueError, match="minilotes"):
        train_grpo(
            pretrained, GRPOConfig(minibatches=0), progress=False, evaluate=False
        )


def test_kl_to_reference_is_zero_for_the_same_model_and_grows_after_training(
    pretrained,
):
    reference = copy_model(pretrained)
    problems = rl_problems()[:16]
    assert kl_to_reference(pretrained, reference, problems) == 0
    cfg = GRPOConfig(steps=3, prompts_per_step=8, lr=3e-3)
    train_grpo(pretrained, cfg, progress=False, evaluate=False)
    assert kl_to_reference(pretrained, reference, problems) > 1e-4


def test_a_given_reference_is_measured_even_without_penalty(pretrained):
    reference = copy_model(pretrained)
    cfg = GRPOConfig(steps=2, prompts_per_step=4, lr=1e-3)
    history = train_grpo(
        pretrained, cfg, progress=False, evaluate=False, reference=reference
    )
    assert history["kl_ref"][0] == 0 and history["kl_ref"][1] > 0


def test_runs_in_parallel_give_the_same_as_one_after_another():
    reference = load_pretrained()
    configs = [
        GRPOConfig(steps=2, prompts_per_step=4, seed=1, sampler_lag=1, is_cap=2.0),
        GRPOConfig(steps=2, prompts_per_step=4, seed=2, kl_coef=0.5),
    ]
    runs = train_grpo_runs(configs, reference=reference, jobs=2)
    assert len(runs) == len(configs)
    for cfg, (history, model) in zip(configs, runs, strict=True):
        alone = load_pretrained()
        expected = train_grpo(
            alone, cfg, progress=False, evaluate=False, reference=reference
        )
        for name, values in expected.items():
            if name != "train_seconds":  # lo único que depende de la máquina
                assert history[name] == values, name
        for a, b in zip(alone.parameters(), model.parameters(), strict=True):
            assert torch.equal(a, b)
