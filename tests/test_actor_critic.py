"""Tests de las referencias del módulo 05 (``helpers.actor_critic``) y sus
comprobaciones, contra cálculos independientes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers import actor_critic
from helpers.checks import actor_critic as checks
from helpers.rollouts import gae
from helpers.training import History
from tests.notebooks import exercises, read, solution_path, student_version


def random_batch(rng: np.random.Generator, horizon: int, n_envs: int) -> dict:
    """Un bloque ``(T, N)`` al azar con finales de episodio de los dos tipos.

    Como en un rollout de verdad, ``next_values[t] = values[t+1]`` mientras el
    episodio sigue; en los finales es el valor de la observación final.
    """
    shape = (horizon, n_envs)
    ends = rng.random(shape)
    terminated, truncated = ends < 0.15, (ends >= 0.15) & (ends < 0.25)
    values = rng.normal(size=shape)
    next_values = np.vstack([values[1:], rng.normal(size=(1, n_envs))])
    done = terminated | truncated
    next_values[done] = rng.normal(size=int(done.sum()))

    def tensor(x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x, dtype=torch.float32)

    return {
        "rewards": tensor(rng.normal(size=shape)),
        "values": tensor(values),
        "next_values": tensor(next_values),
        "terminated": tensor(terminated),
        "truncated": tensor(truncated),
    }


def brute_force_n_step(batch: dict, n: int, gamma: float) -> np.ndarray:
    """Columna a columna y con floats de Python: suma hasta n, el final o el bloque."""
    r = batch["rewards"].double().numpy()
    nv = batch["next_values"].double().numpy()
    term = batch["terminated"].numpy() > 0
    trunc = batch["truncated"].numpy() > 0
    horizon, n_envs = r.shape
    out = np.zeros_like(r)
    for i in range(n_envs):
        for t in range(horizon):
            total = 0.0
            for m, k in enumerate(range(t, horizon), start=1):
                total += gamma ** (m - 1) * r[k, i]
                if term[k, i]:
                    break
                if trunc[k, i] or m == n or k == horizon - 1:
                    total += gamma**m * nv[k, i]
                    break
            out[t, i] = total
    return out


def steps_to_cut(batch: dict) -> np.ndarray:
    """``K[t, i]``: cuántos pasos quedan hasta el final del episodio o del bloque."""
    done = (batch["terminated"] + batch["truncated"]).numpy() > 0
    horizon, n_envs = done.shape
    remaining = np.zeros(done.shape, dtype=int)
    for i in range(n_envs):
        for t in range(horizon):
            k = t
            while k < horizon - 1 and not done[k, i]:
                k += 1
            remaining[t, i] = k - t + 1
    return remaining


# ---------------------------------------------------------------------------
# Errores TD, retornos de n pasos y GAE
# ---------------------------------------------------------------------------


def test_td_errors_hand_worked():
    rewards = torch.tensor([[1.0], [1.0], [1.0]])
    values = torch.tensor([[2.0], [1.5], [1.0]])
    next_values = torch.tensor([[1.5], [1.0], [3.0]])
    terminated = torch.tensor([[0.0], [0.0], [1.0]])
    deltas = actor_critic.td_errors(rewards, values, next_values, terminated, 0.9)
    torch.testing.assert_close(deltas[:, 0], torch.tensor([0.35, 0.4, 0.0]))


@pytest.mark.parametrize("seed", range(6))
def test_n_step_returns_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    batch = random_batch(rng, int(rng.integers(1, 12)), int(rng.integers(1, 5)))
    args = (batch["rewards"], batch["next_values"], batch["terminated"])
    for n in (1, 2, 3, 20):
        for gamma in (0.0, 0.7, 1.0):
            got = actor_critic.n_step_returns(*args, batch["truncated"], n, gamma)
            np.testing.assert_allclose(
                got.numpy(), brute_force_n_step(batch, n, gamma), atol=1e-5
            )


def test_n_step_returns_ends():
    """Los dos extremos: n = 1 es el objetivo TD, n ≥ T es GAE con λ = 1."""
    rng = np.random.default_rng(3)
    batch = random_batch(rng, 9, 4)
    args = (batch["rewards"], batch["next_values"], batch["terminated"])
    one = actor_critic.n_step_returns(*args, batch["truncated"], 1, 0.9)
    deltas = actor_critic.td_errors(
        batch["rewards"], batch["values"], *args[1:], gamma=0.9
    )
    torch.testing.assert_close(one, deltas + batch["values"])
    full = actor_critic.n_step_returns(*args, batch["truncated"], 9, 0.9)
    advantages = gae(**batch, gamma=0.9, lam=1.0)
    torch.testing.assert_close(full, advantages + batch["values"])
    with pytest.raises(ValueError):
        actor_critic.n_step_returns(*args, batch["truncated"], 0, 0.9)


@pytest.mark.parametrize("seed", range(5))
def test_gae_is_the_lambda_weighted_average_of_k_step_advantages(seed):
    """``Â_t = Σ_k (1−λ)λ^{k−1} Â_t^{(k)}``, con la cola ``λ^{K−1}`` en el corte."""
    rng = np.random.default_rng(10 + seed)
    batch = random_batch(rng, int(rng.integers(2, 10)), 3)
    gamma, lam = 0.9, float(rng.choice([0.0, 0.5, 0.95, 1.0]))
    horizon = batch["rewards"].shape[0]
    k_step = [
        brute_force_n_step(batch, k, gamma) - batch["values"].double().numpy()
        for k in range(1, horizon + 1)
    ]
    cut = steps_to_cut(batch)
    expected = np.zeros_like(k_step[0])
    for (t, i), big_k in np.ndenumerate(cut):
        weights = [(1 - lam) * lam ** (k - 1) for k in range(1, big_k)]
        weights.append(lam ** (big_k - 1))
        expected[t, i] = sum(w * k_step[k][t, i] for k, w in enumerate(weights))
    got = actor_critic.gae(**batch, gamma=gamma, lam=lam)
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-5)


def test_gae_is_the_rollouts_reference():
    assert actor_critic.gae is gae


# ---------------------------------------------------------------------------
# La pérdida
# ---------------------------------------------------------------------------


def test_actor_critic_loss_value_and_gradients():
    torch.manual_seed(0)
    logits = torch.randn(7, 3, requires_grad=True)
    values = torch.randn(7, requires_grad=True)
    returns = 3 * torch.randn(7)
    distribution = torch.distributions.Categorical(logits=logits)
    actions = distribution.sample()
    log_probs, entropy = distribution.log_prob(actions), distribution.entropy()
    advantages = returns - values  # con gradiente a propósito
    loss = actor_critic.actor_critic_loss(
        log_probs, values, advantages, returns, entropy, 0.5, 0.02
    )
    a = (returns - values).detach()
    expected = (
        -(log_probs * a).mean()
        + 0.5 * ((values - returns) ** 2).mean()
        - 0.02 * entropy.mean()
    )
    torch.testing.assert_close(loss, expected)
    grad_values, grad_logits = torch.autograd.grad(loss, (values, logits))
    # El crítico solo recibe la regresión: c_V · 2 (V − R) / B.
    torch.testing.assert_close(grad_values, 0.5 * 2 * (values - returns).detach() / 7)
    # El actor: −(one_hot − π)·Â/B − c_H ∇H/B, calculado a mano.
    pi = torch.softmax(logits, -1).detach()
    one_hot = torch.nn.functional.one_hot(actions, 3).float()
    log_pi = torch.log(pi)
    entropy_grad = -pi * (log_pi - (pi * log_pi).sum(-1, keepdim=True))
    manual = -(one_hot - pi) * a[:, None] / 7 - 0.02 * entropy_grad / 7
    torch.testing.assert_close(grad_logits, manual, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------------
# El paseo aleatorio y el experimento de λ
# ---------------------------------------------------------------------------


def test_random_walk_true_values():
    walk = actor_critic.RandomWalk()
    np.testing.assert_allclose(
        walk.true_values(), (np.arange(19) + 1) / 10 - 1, atol=1e-12
    )
    # Con γ < 1, la ecuación de Bellman a mano en cada casilla.
    v = walk.true_values(0.9)
    padded = np.concatenate([[0.0], v, [0.0]])
    for s in range(19):
        reward = 0.5 * (-1.0 if s == 0 else 0.0) + 0.5 * (1.0 if s == 18 else 0.0)
        bellman = reward + 0.9 * 0.5 * (padded[s] + padded[s + 2])
        assert v[s] == pytest.approx(bellman)


def test_random_walk_monte_carlo_agrees_with_true_values():
    walk = actor_critic.RandomWalk()
    batch = walk.sample(4000, np.random.default_rng(0))
    returns = batch["rewards"].sum(axis=0)  # γ = 1: el retorno desde el centro
    assert returns.mean() == pytest.approx(walk.true_values()[walk.start], abs=0.05)
    assert set(np.unique(returns)) == {-1.0, 1.0}
    # Tras el final solo hay relleno: terminated = 1 y máscara 0.
    ended = np.cumsum(batch["terminated"] * batch["mask"], axis=0) > 0
    assert np.all(batch["terminated"][1:][ended[:-1]] == 1)
    assert np.all(batch["mask"][1:][ended[:-1]] == 0)


def test_lambda_experiment_trades_bias_for_variance():
    walk = actor_critic.RandomWalk()
    truth = walk.true_values()
    perfect = actor_critic.lambda_returns_experiment([0.0, 0.5, 1.0], truth, 300)
    # Con el crítico perfecto ningún λ tiene sesgo (salvo ruido de muestreo).
    assert np.all(perfect["bias2"] < 0.01)
    noisy = truth + np.random.default_rng(3).normal(0, 0.3, 19)
    result = actor_critic.lambda_returns_experiment([0.0, 0.5, 1.0], noisy, 300)
    assert result["bias2"][0] > result["bias2"][1] > result["bias2"][2]
    assert result["variance"][2] > result["variance"][1]
    np.testing.assert_allclose(result["mse"], result["bias2"] + result["variance"])


# ---------------------------------------------------------------------------
# El pasillo con acciones: el sesgo de λ en el gradiente de política
# ---------------------------------------------------------------------------


def test_corridor_exact_values_satisfy_bellman_and_advantages_average_zero():
    corridor = actor_critic.Corridor(p_right=0.6)
    exact = corridor.exact()
    p = corridor.transitions()
    v = exact["values"]
    for s in range(1, corridor.n_cells - 1):
        q = [p[s, a, -1] + corridor.gamma * p[s, a, 1:-1] @ v[1:-1] for a in (0, 1)]
        assert v[s] == pytest.approx(corridor.policy @ q)
        assert exact["advantages"][s] == pytest.approx(np.array(q) - v[s])
    np.testing.assert_allclose(exact["advantages"] @ corridor.policy, 0, atol=1e-12)


def test_corridor_policy_gradient_is_the_derivative_when_gamma_is_one():
    # Con γ = 1 no falta ningún γᵗ: la estimación con A^π es el gradiente de
    # V(inicio). Mover el logit de «derecha» en todas las casillas a la vez es
    # la suma sobre casillas de la columna de «derecha».
    def value(logit):
        p_right = 1 / (1 + np.exp(-logit))
        corridor = actor_critic.Corridor(gamma=1.0, p_right=p_right)
        return corridor.exact()["values"][corridor.start]

    corridor = actor_critic.Corridor(gamma=1.0, p_right=0.6)
    gradient = corridor.policy_gradient(corridor.exact()["advantages"])
    logit, h = np.log(0.6 / 0.4), 1e-6
    numeric = (value(logit + h) - value(logit - h)) / (2 * h)
    assert gradient[:, 1].sum() == pytest.approx(numeric, rel=1e-6)
    np.testing.assert_allclose(gradient.sum(axis=1), 0, atol=1e-12)


def test_gae_gradient_bias_needs_a_wrong_critic_and_vanishes_at_lambda_one():
    corridor = actor_critic.Corridor()
    truth = corridor.policy_gradient(corridor.exact()["advantages"])
    error = np.random.default_rng(0).normal(0, 0.1, corridor.n_cells)
    for lam in (0.0, 0.5, 0.9):
        exact_critic = corridor.expected_gradient(np.zeros(corridor.n_cells), lam)
        np.testing.assert_allclose(exact_critic, truth, atol=1e-12)
        assert np.abs(corridor.expected_gradient(error, lam) - truth).max() > 1e-4
    np.testing.assert_allclose(
        corridor.expected_gradient(error, 1.0), truth, atol=1e-12
    )
    # Un error constante en todas las casillas también sesga con λ < 1: no es
    # una línea base, porque llega a través de las casillas siguientes.
    constant = np.full(corridor.n_cells, 0.1)
    assert np.abs(corridor.expected_gradient(constant, 0.0) - truth).max() > 1e-3


def test_gae_gradient_experiment_samples_agree_with_the_exact_mean():
    error = np.random.default_rng(1).normal(0, 0.1, 9)
    lams = [0.0, 0.6, 1.0]
    result = actor_critic.gae_gradient_experiment(lams, error, 3000, seed=5)
    gap = np.abs(result["sampled_mean"] - result["expected"])
    assert np.all(gap <= 4.5 * result["standard_error"] + 1e-12)
    assert result["bias2"][0] > result["bias2"][1] > 1e-6
    assert result["bias2"][2] < 1e-20  # λ = 1: sin sesgo (redondeo aparte)
    assert np.all(result["variance"] > 0)


# ---------------------------------------------------------------------------
# PopArt
# ---------------------------------------------------------------------------


def test_popart_keeps_the_values_while_the_statistics_move():
    torch.manual_seed(0)
    head = torch.nn.Linear(8, 1)
    popart = actor_critic.PopArt(head, rate=0.1)
    features = torch.randn(32, 8)
    before = popart(features).detach()
    torch.testing.assert_close(before, head(features).detach())  # μ = 0, σ = 1
    targets = 40 + 5 * torch.randn(64)
    popart.update(targets)
    # La primera actualización, sin el sesgo del arranque: las del lote
    assert popart.mean == pytest.approx(float(targets.mean()), rel=1e-6)
    assert popart.std == pytest.approx(float(targets.std(unbiased=False)), rel=1e-5)
    # V = σ·n + μ no cambia; la capa aprende ahora (R − μ)/σ, de escala 1
    torch.testing.assert_close(popart(features).detach(), before, atol=1e-4, rtol=1e-5)
    normalized = (targets - popart.mean) / popart.std
    assert float(normalized.std(unbiased=False)) == pytest.approx(1.0, rel=1e-5)
    popart.update(100 * targets)
    torch.testing.assert_close(popart(features).detach(), before, atol=1e-3, rtol=1e-5)
    # La regresión en unidades de σ es la del artículo: (n − (R − μ)/σ)²
    values = popart(features).squeeze(-1)
    paper = head(features).squeeze(-1) - (targets[:32] - popart.mean) / popart.std
    torch.testing.assert_close((values - targets[:32]) / popart.std, paper)


def test_train_a2c_with_popart_reads_values_in_the_reward_scale():
    config = actor_critic.A2CConfig(
        seed=0, n_envs=2, n_steps=8, max_env_steps=256, eval_every=0, popart_rate=0.1
    )
    agent = actor_critic.train_a2c(config, progress=False).policy
    popart = agent.critic[-1]
    assert isinstance(popart, actor_critic.PopArt)
    assert popart.mean > 1 and popart.std > 0.1  # CartPole: retornos de varios pasos
    obs = torch.randn(5, 4)
    torch.testing.assert_close(
        agent.value(obs),
        popart.head(agent.critic[:-1](obs)).squeeze(-1) * popart.std + popart.mean,
    )


# ---------------------------------------------------------------------------
# A2C
# ---------------------------------------------------------------------------


def test_train_a2c_runs_and_records_history():
    config = actor_critic.A2CConfig(
        seed=0, n_envs=2, n_steps=8, max_env_steps=64, eval_every=32, eval_episodes=2
    )
    calls = []

    def spy_gae(*args):
        calls.append(args[0].shape)
        return gae(*args)

    history = actor_critic.train_a2c(config, progress=False, advantages_fn=spy_gae)
    assert isinstance(history, History)
    assert history.env_steps == [16, 32, 48, 64]
    assert [e.env_steps for e in history.evaluations] == [32, 64]
    assert calls == [torch.Size([8, 2])] * 4
    assert len(history.losses) == len(history.baseline_losses) == 4
    assert history.policy is not None and history.solved is None


def test_train_a2c_is_deterministic():
    config = actor_critic.A2CConfig(seed=3, n_envs=2, n_steps=4, max_env_steps=48)
    config.eval_every = 0
    first = actor_critic.train_a2c(config, progress=False)
    second = actor_critic.train_a2c(config, progress=False)
    assert first.losses == second.losses


# ---------------------------------------------------------------------------
# Las comprobaciones y el cuaderno
# ---------------------------------------------------------------------------


def test_references_pass_their_checks():
    checks.check_td_errors(actor_critic.td_errors, quiet=True)
    checks.check_n_step_returns(actor_critic.n_step_returns, quiet=True)
    checks.check_gae(actor_critic.gae, quiet=True)
    checks.check_actor_critic_loss(actor_critic.actor_critic_loss, quiet=True)


def _diagnoses(check, answer) -> AssertionError | None:
    try:
        check(answer, quiet=True)
    except AssertionError as error:
        return error
    return None


def test_every_mistake_is_told_apart_by_the_visible_cases():
    """Cada error típico falla alguna comprobación visible de su ejercicio (una
    por aspecto) con su propio mensaje, y la primera que falla lo nombra (con
    su id)."""
    groups = [
        ([checks.check_td_errors], checks.TD_MISTAKES),
        (
            [
                checks.check_n_step_returns,
                checks.check_n_step_returns_terminated,
                checks.check_n_step_returns_truncated,
            ],
            checks.N_STEP_MISTAKES,
        ),
        (
            [checks.check_gae, checks.check_gae_terminated, checks.check_gae_truncated],
            checks.GAE_MISTAKES,
        ),
        (
            [checks.check_actor_critic_loss, checks.check_actor_critic_loss_grad],
            checks.LOSS_MISTAKES,
        ),
    ]
    for group, mistakes in groups:
        for mistake in mistakes:
            outcomes = [_diagnoses(check, mistake.variant) for check in group]
            failed = [error for error in outcomes if error is not None]
            assert failed, mistake.id
            assert mistake.message in str(failed[0]), (mistake.message, failed[0])
            assert failed[0].mistake == mistake.id, (mistake.id, failed[0].mistake)


def _variant(rows, ident):
    return next(m.variant for m in rows if m.id == ident)


def test_each_aspect_check_passes_what_it_does_not_look_at():
    """Crédito parcial: un error de truncamiento pasa las celdas sin truncados."""
    truncation = _variant(checks.GAE_MISTAKES, "gae_no_bootstrap_truncated")
    checks.check_gae(truncation, quiet=True)
    checks.check_gae_terminated(truncation, quiet=True)
    with pytest.raises(AssertionError):
        checks.check_gae_truncated(truncation, quiet=True)
    terminal = _variant(checks.N_STEP_MISTAKES, "n_step_bootstraps_terminal")
    checks.check_n_step_returns(terminal, quiet=True)
    checks.check_n_step_returns_truncated(terminal, quiet=True)
    with pytest.raises(AssertionError):
        checks.check_n_step_returns_terminated(terminal, quiet=True)
    attached = _variant(checks.LOSS_MISTAKES, "loss_advantage_attached")
    checks.check_actor_critic_loss(attached, quiet=True)
    with pytest.raises(AssertionError):
        checks.check_actor_critic_loss_grad(attached, quiet=True)


def test_notebook_solutions_agree_with_the_references():
    nb = read(solution_path("05_actor_critico"))
    namespace: dict = {"np": np, "torch": torch}
    for exercise in exercises(nb):
        exec(student_version(exercise.solution), namespace)
    rng = np.random.default_rng(5)
    for _ in range(20):
        batch = random_batch(rng, int(rng.integers(1, 10)), int(rng.integers(1, 4)))
        gamma = float(rng.choice([0.0, 0.5, 0.99, 1.0]))
        lam = float(rng.choice([0.0, 0.5, 0.95, 1.0]))
        n = int(rng.integers(1, 6))
        torch.testing.assert_close(
            torch.as_tensor(
                namespace["td_errors"](
                    batch["rewards"],
                    batch["values"],
                    batch["next_values"],
                    batch["terminated"],
                    gamma,
                )
            ),
            actor_critic.td_errors(
                batch["rewards"],
                batch["values"],
                batch["next_values"],
                batch["terminated"],
                gamma,
            ),
        )
        step_args = (
            batch["rewards"],
            batch["next_values"],
            batch["terminated"],
            batch["truncated"],
            n,
            gamma,
        )
        torch.testing.assert_close(
            namespace["n_step_returns"](*step_args),
            actor_critic.n_step_returns(*step_args),
        )
        torch.testing.assert_close(
            namespace["gae"](**batch, gamma=gamma, lam=lam),
            gae(**batch, gamma=gamma, lam=lam),
        )
    torch.manual_seed(1)
    log_probs, values, entropy = (torch.randn(6, requires_grad=True) for _ in "abc")
    returns = torch.randn(6)
    args = (log_probs, values, returns - values, returns, entropy, 0.5, 0.01)
    torch.testing.assert_close(
        namespace["actor_critic_loss"](*args), actor_critic.actor_critic_loss(*args)
    )
