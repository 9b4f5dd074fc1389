"""Las implementaciones de referencia del módulo 03, contra cálculos independientes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.distributions import Categorical, Normal

from helpers import bandits, reinforce
from tests.notebooks import exercises, read, solution_path, student_version

# ---------------------------------------------------------------------------
# Retornos, muestreo, densidades y pérdida
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.9, 0.99, 1.0])
def test_discounted_returns_by_brute_force(gamma):
    rewards = np.random.default_rng(0).normal(size=30)
    brute = [
        sum(gamma ** (k - t) * rewards[k] for k in range(t, len(rewards)))
        for t in range(len(rewards))
    ]
    np.testing.assert_allclose(reinforce.discounted_returns(rewards, gamma), brute)


def test_discounted_returns_accepts_lists_and_tensors():
    expected = [2.71, 1.9, 1.0]
    np.testing.assert_allclose(reinforce.discounted_returns([1, 1, 1], 0.9), expected)
    tensor = torch.ones(3, requires_grad=True)
    np.testing.assert_allclose(reinforce.discounted_returns(tensor, 0.9), expected)
    assert reinforce.discounted_returns([], 0.9).shape == (0,)


def test_sample_action_frequencies_and_log_probs():
    torch.manual_seed(0)
    logits = torch.tensor([1.0, -0.5, 0.3]).repeat(30_000, 1).requires_grad_(True)
    actions, log_probs = reinforce.sample_action(logits)
    assert actions.shape == log_probs.shape == (30_000,)
    freq = np.bincount(actions.numpy(), minlength=3) / len(actions)
    np.testing.assert_allclose(freq, torch.softmax(logits[0], -1).detach(), atol=0.01)
    manual = torch.log_softmax(logits.detach(), -1)[torch.arange(30_000), actions]
    torch.testing.assert_close(log_probs.detach(), manual)
    assert log_probs.requires_grad


def test_sample_action_is_the_inverse_of_the_cumulative_distribution():
    logits = torch.log(torch.tensor([0.2, 0.5, 0.3]))
    # Tramos: [0; 0,2) → 0, [0,2; 0,7) → 1, [0,7; 1) → 2.
    for u, want in [(0.0, 0), (0.19, 0), (0.21, 1), (0.69, 1), (0.71, 2), (0.99, 2)]:
        action, log_prob = reinforce.sample_action(logits, torch.tensor(u))
        assert int(action) == want, u
        assert float(log_prob) == pytest.approx(math.log([0.2, 0.5, 0.3][want]))
    # Si el redondeo deja la suma por debajo de u, la última acción.
    action, _ = reinforce.sample_action(torch.tensor([0.0, -1e9]), torch.tensor(1.0))
    assert int(action) == 1
    # Logits enormes: nada de exp que desborde.
    action, log_prob = reinforce.sample_action(
        torch.tensor([1000.0, 1000.5, 999.0]), torch.tensor(0.5)
    )
    assert int(action) == 1 and math.isfinite(float(log_prob))
    # Agrupado: un u por fila, y lo mismo que fila a fila.
    rows = torch.randn(6, 4, generator=torch.Generator().manual_seed(2))
    uniforms = torch.rand(6, generator=torch.Generator().manual_seed(3))
    batch, _ = reinforce.sample_action(rows, uniforms)
    single = [
        int(reinforce.sample_action(r, x)[0])
        for r, x in zip(rows, uniforms, strict=True)
    ]
    assert batch.tolist() == single


def test_gaussian_log_prob_matches_torch_and_its_gradient():
    gen = torch.Generator().manual_seed(3)
    actions = 3 * torch.randn(8, 3, generator=gen, dtype=torch.float64)
    mean = torch.randn(8, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    for log_std in (
        torch.randn(3, generator=gen, dtype=torch.float64),
        torch.randn(8, 3, generator=gen, dtype=torch.float64),
    ):
        log_std.requires_grad_(True)
        mine = reinforce.gaussian_log_prob(actions, mean, log_std)
        theirs = Normal(mean, log_std.exp()).log_prob(actions).sum(-1)
        torch.testing.assert_close(mine, theirs)
        g_mine = torch.autograd.grad(mine.sum(), (mean, log_std))
        g_theirs = torch.autograd.grad(theirs.sum(), (mean, log_std))
        for a, b in zip(g_mine, g_theirs, strict=True):
            torch.testing.assert_close(a, b)


def test_gaussian_log_prob_is_finite_far_away():
    value = reinforce.gaussian_log_prob(
        torch.tensor([[100.0]]), torch.zeros(1, 1), torch.zeros(1)
    )
    assert value.item() == pytest.approx(-5000 - 0.5 * math.log(2 * math.pi))


def test_reinforce_loss_value_and_gradient():
    log_probs = torch.tensor([-0.5, -1.0, -0.2, -2.0], requires_grad=True)
    returns = torch.tensor([3.0, 2.0, 1.0, -1.0], requires_grad=True)
    loss = reinforce.reinforce_loss(log_probs, returns, 2)
    assert loss.item() == pytest.approx(-(-1.5 - 2.0 - 0.2 + 2.0) / 2)
    loss.backward()
    torch.testing.assert_close(log_probs.grad, -returns.detach() / 2)
    assert returns.grad is None


def test_reinforce_loss_gradient_is_the_score_function_estimate():
    """Con autograd, −∇L coincide con la estimación de score_function_gradient."""
    theta = np.array([0.4, -0.3, 0.1])
    actions = [np.array([0, 2, 2]), np.array([1]), np.array([2, 0])]
    returns = [np.array([1.0, -2.0, 0.5]), np.array([3.0]), np.array([-1.0, 2.0])]
    theta_t = torch.tensor(theta, requires_grad=True)
    log_pi = torch.log_softmax(theta_t, 0)[torch.as_tensor(np.concatenate(actions))]
    g = torch.as_tensor(np.concatenate(returns))
    reinforce.reinforce_loss(log_pi, g, len(actions)).backward()
    np.testing.assert_allclose(
        -theta_t.grad.numpy(),
        reinforce.score_function_gradient(theta, actions, returns),
    )


def test_per_episode_gradients_match_a_loop():
    theta = np.array([0.2, -0.7])
    rng = np.random.default_rng(5)
    episodes = reinforce.ShortCorridor().sample_episodes(theta, 50, rng)
    actions = [a for a, _ in episodes]
    returns = [reinforce.discounted_returns(r, 1.0) for _, r in episodes]
    pi = bandits.softmax(theta)
    loop = [
        sum(g * (np.eye(2)[a] - pi) for a, g in zip(acts, rets, strict=True))
        for acts, rets in zip(actions, returns, strict=True)
    ]
    got = reinforce.per_episode_score_gradients(theta, actions, returns)
    np.testing.assert_allclose(got, loop)
    # Un episodio vacío aporta un gradiente nulo.
    empty = reinforce.per_episode_score_gradients(
        theta, [np.array([], dtype=int), np.array([1])], [np.array([]), np.array([2.0])]
    )
    np.testing.assert_allclose(empty, [[0.0, 0.0], [-2 * pi[0], 2 * pi[0]]])


# ---------------------------------------------------------------------------
# El pasillo corto (Sutton y Barto, 2018, ejemplo 13.1)
# ---------------------------------------------------------------------------


def _objective(p: float) -> float:
    theta = torch.tensor([0.0, math.log(p / (1 - p))], dtype=torch.float64)
    return reinforce.ShortCorridor().objective(theta).item()


def test_corridor_numbers_of_the_book():
    # Óptimo en p = 2 − √2 ≈ 0,59 con J = −(6 + 4√2) ≈ −11,66.
    grid = np.linspace(0.5, 0.7, 2001)
    values = [_objective(p) for p in grid]
    assert grid[int(np.argmax(values))] == pytest.approx(2 - math.sqrt(2), abs=1e-3)
    assert max(values) == pytest.approx(-(6 + 4 * math.sqrt(2)), abs=1e-6)
    # Los ε-greedy con ε = 0,1: −82 (izquierda) y −44 (derecha).
    assert _objective(0.05) == pytest.approx(-82.1, abs=0.05)
    assert _objective(0.95) == pytest.approx(-44.2, abs=0.05)
    assert _objective(0.5) == pytest.approx(-12.0)


def test_corridor_objective_matches_monte_carlo():
    corridor = reinforce.ShortCorridor()
    theta = np.array([0.3, -0.2])
    episodes = corridor.sample_episodes(theta, 40_000, np.random.default_rng(0))
    returns = np.array([r.sum() for _, r in episodes])
    exact = corridor.objective(torch.tensor(theta)).item()
    assert returns.mean() == pytest.approx(exact, abs=4 * returns.std() / 200)


def test_corridor_dynamics_by_hand():
    corridor = reinforce.ShortCorridor()
    # En 1, «derecha» vuelve a 0 e «izquierda» avanza a 2; en 0, «izquierda» choca.
    assert corridor.next_state[0].tolist() == [0, 1]
    assert corridor.next_state[1].tolist() == [2, 0]
    assert corridor.next_state[2].tolist() == [1, corridor.goal]
    # Siempre a la derecha: se rebota entre 0 y 1 hasta el tope de pasos.
    ((actions, rewards),) = corridor.sample_episodes(
        np.array([-50.0, 50.0]), 1, np.random.default_rng(0), max_steps=40
    )
    assert len(actions) == 40 and rewards.sum() == -40


def test_exact_gradient_matches_finite_differences():
    corridor = reinforce.ShortCorridor()
    theta, h = np.array([0.4, -0.1]), 1e-6
    finite = [
        (_j(corridor, theta + h * e) - _j(corridor, theta - h * e)) / (2 * h)
        for e in np.eye(2)
    ]
    np.testing.assert_allclose(corridor.exact_gradient(theta), finite, atol=1e-6)


def _j(corridor, theta):
    return corridor.objective(torch.tensor(theta, dtype=torch.float64)).item()


def test_score_function_estimate_is_unbiased():
    corridor = reinforce.ShortCorridor()
    theta = np.array([0.0, 0.5])
    episodes = corridor.sample_episodes(theta, 50_000, np.random.default_rng(1))
    # Con γ = 1, G_t es la suma de lo que queda del episodio.
    returns = [np.cumsum(r[::-1])[::-1] for _, r in episodes]
    per_episode = reinforce.per_episode_score_gradients(
        theta, [a for a, _ in episodes], returns
    )
    error = per_episode.mean(0) - corridor.exact_gradient(theta)
    standard_error = per_episode.std(0) / math.sqrt(len(per_episode))
    assert np.all(np.abs(error) < 4 * standard_error)


# ---------------------------------------------------------------------------
# Políticas, episodios y entrenamiento en gymnasium
# ---------------------------------------------------------------------------


def test_policies_act_and_log_prob():
    torch.manual_seed(0)
    obs = torch.randn(5, 4)
    policy = reinforce.CategoricalPolicy(4, 3)
    assert torch.equal(policy.act(obs, greedy=True), policy(obs).argmax(-1))
    assert policy.act(obs).shape == (5,)
    assert isinstance(policy.distribution(obs), Categorical)
    gaussian = reinforce.GaussianPolicy(4, 2, log_std=-1.0)
    actions = gaussian.act(obs)
    torch.testing.assert_close(
        gaussian.log_prob(obs, actions),
        gaussian.distribution(obs).log_prob(actions).sum(-1),
    )
    assert torch.equal(gaussian.act(obs, greedy=True), gaussian(obs))


class _CountingBaseline:
    """Una línea base de prueba: b = 1 en todos los pasos."""

    def __init__(self):
        self.calls = {"advantages": 0, "update": 0}

    def advantages(self, episodes, returns):
        self.calls["advantages"] += 1
        assert len(returns) == episodes.n_steps
        return returns - 1.0

    def update(self, episodes, returns):
        self.calls["update"] += 1
        return 0.5


def test_train_reinforce_history_and_hooks():
    calls = {"returns": 0, "loss": 0}

    def returns_fn(rewards, gamma):
        calls["returns"] += 1
        return reinforce.discounted_returns(rewards, gamma)

    def loss_fn(log_probs, returns, n):
        calls["loss"] += 1
        return reinforce.reinforce_loss(log_probs, returns, n)

    baseline = _CountingBaseline()
    config = reinforce.ReinforceConfig(
        seed=3, n_envs=4, max_updates=4, eval_every_updates=2
    )
    history = reinforce.train_reinforce(
        config,
        baseline=baseline,
        returns_fn=returns_fn,
        loss_fn=loss_fn,
        progress=False,
    )
    assert calls == {"returns": 16, "loss": 4}
    assert baseline.calls == {"advantages": 4, "update": 4}
    assert history.baseline_losses == [0.5] * 4
    assert len(history.env_steps) == len(history.losses) == 4
    assert np.all(np.diff(history.env_steps) > 0)
    assert len(history.episode_returns) == 16
    assert sum(history.episode_returns) == history.env_steps[-1]
    assert [e.env_steps for e in history.evaluations] == history.env_steps[1::2]
    assert all(0 < h <= math.log(2) + 1e-6 for h in history.entropies)
    assert isinstance(history.policy, reinforce.CategoricalPolicy)


def test_train_reinforce_is_deterministic():
    config = reinforce.ReinforceConfig(
        seed=7, n_envs=4, max_updates=3, eval_every_updates=0
    )
    runs = [reinforce.train_reinforce(config, progress=False) for _ in range(2)]
    assert runs[0].mean_returns == runs[1].mean_returns
    assert runs[0].losses == runs[1].losses
    assert runs[0].evaluations == [] and runs[0].solved is None


# ---------------------------------------------------------------------------
# El cuaderno y las referencias dicen lo mismo
# ---------------------------------------------------------------------------


def test_gradient_estimators_by_hand():
    # La función de puntuación a mano: f(x)·((x − μ)/σ², z² − 1); la
    # reparametrización: f'(x)·(1, σε). Y las dos, cerca del valor exacto con
    # muchas muestras: E[−(x − 2)²] = −(μ − 2)² − σ², gradiente (−2(μ − 2), −2σ²).
    gen = torch.Generator().manual_seed(0)
    noise = torch.randn(50, generator=gen, dtype=torch.float64)
    mu, log_sigma = 0.3, -0.2
    sigma = math.exp(log_sigma)
    x = mu + sigma * noise
    score, pathwise = reinforce.gradient_estimators(torch.sin, mu, log_sigma, noise)
    z = (x - mu) / sigma
    want_score = torch.stack(
        [(torch.sin(x) * z / sigma).mean(), (torch.sin(x) * (z**2 - 1)).mean()]
    )
    want_path = torch.stack(
        [torch.cos(x).mean(), (torch.cos(x) * sigma * noise).mean()]
    )
    torch.testing.assert_close(score, want_score)
    torch.testing.assert_close(pathwise, want_path)
    assert not score.requires_grad and not pathwise.requires_grad
    many = torch.randn(400_000, generator=gen, dtype=torch.float64)
    exact = torch.tensor([-2 * (mu - 2), -2 * sigma**2], dtype=torch.float64)
    for estimate in reinforce.gradient_estimators(
        lambda v: -((v - 2) ** 2), mu, log_sigma, many
    ):
        torch.testing.assert_close(estimate, exact, atol=0.05, rtol=0)


def test_notebook_solutions_agree_with_the_references():
    nb = read(solution_path("03_reinforce"))
    namespace: dict = {
        "np": np,
        "torch": torch,
        "math": math,
        "Categorical": Categorical,
        "Normal": torch.distributions.Normal,
        "bandits": bandits,
    }
    for exercise in exercises(nb):
        exec(student_version(exercise.solution), namespace)
    rng = np.random.default_rng(11)
    for _ in range(50):
        rewards = rng.normal(size=int(rng.integers(1, 30)))
        gamma = float(rng.choice([0.0, 0.5, 0.99, 1.0]))
        np.testing.assert_allclose(
            namespace["discounted_returns"](rewards, gamma),
            reinforce.discounted_returns(rewards, gamma),
        )

        n, d = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        a, m = (torch.as_tensor(rng.normal(size=(n, d))) for _ in range(2))
        s = torch.as_tensor(rng.normal(size=d))
        torch.testing.assert_close(
            namespace["gaussian_log_prob"](a, m, s),
            reinforce.gaussian_log_prob(a, m, s),
        )

        noise = torch.as_tensor(rng.normal(size=int(rng.integers(1, 20))))
        mu, log_sigma = float(rng.normal()), float(rng.normal(scale=0.5))
        for f in (torch.sin, lambda x: -((x - 1.0) ** 2), lambda x: torch.exp(-x)):
            for mine, ref in zip(
                namespace["gradient_estimators"](f, mu, log_sigma, noise),
                reinforce.gradient_estimators(f, mu, log_sigma, noise),
                strict=True,
            ):
                torch.testing.assert_close(mine, ref)

        theta = rng.normal(size=int(rng.integers(2, 5)))
        episodes = int(rng.integers(1, 5))
        lengths = rng.integers(1, 6, size=episodes)
        actions = [rng.integers(len(theta), size=k) for k in lengths]
        returns = [rng.normal(size=k) for k in lengths]
        np.testing.assert_allclose(
            namespace["score_function_gradient"](theta, actions, returns),
            reinforce.score_function_gradient(theta, actions, returns),
        )

        log_probs = torch.as_tensor(-rng.random(7))
        weights = torch.as_tensor(rng.normal(size=7))
        torch.testing.assert_close(
            namespace["reinforce_loss"](log_probs, weights, 3),
            reinforce.reinforce_loss(log_probs, weights, 3),
        )

        logits = torch.as_tensor(rng.normal(size=(4, 3)))
        uniforms = torch.as_tensor(rng.random(4))
        mine = namespace["sample_action"](logits, uniforms)
        ref = reinforce.sample_action(logits, uniforms)
        for x, y in zip(mine, ref, strict=True):
            torch.testing.assert_close(x, y)

    # El bucle del ejercicio 6 deja los mismos parámetros que la referencia.
    for name in ("sample_action", "discounted_returns", "reinforce_loss"):
        namespace[name] = getattr(reinforce, name)
    runs = [
        _run_updates(namespace["reinforce_updates"]),
        _run_updates(reinforce.reinforce_updates),
    ]
    assert runs[0][0] == runs[1][0]
    for key, value in runs[1][1].items():
        torch.testing.assert_close(runs[0][1][key], value)


def _run_updates(function, seed=4, n_updates=3, lr=0.05):
    import gymnasium as gym

    torch.manual_seed(seed)
    policy = reinforce.CategoricalPolicy(4, 2, hidden=8)
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    env = gym.make("CartPole-v1", max_episode_steps=25)
    generator = torch.Generator().manual_seed(seed)
    curve = function(policy, optimizer, env, n_updates, 3, 0.95, seed, generator)
    return curve, policy.state_dict()


def test_reinforce_updates_by_hand():
    """El bucle, contra una cuenta independiente: una actualización con SGD en la
    sonda de un paso es θ ← θ − α ∇L con L = −(1/N) Σ log π(a_i|s_i)·r_i."""
    from helpers.probes import ObservationActionReward

    torch.manual_seed(0)
    policy = reinforce.CategoricalPolicy(1, 2, hidden=4)
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.3)
    env = ObservationActionReward()
    generator = torch.Generator().manual_seed(1)
    curve = reinforce.reinforce_updates(
        policy, optimizer, env, 1, 4, 0.9, 10, generator
    )
    # La misma cuenta a mano: semillas 10..13, un uniforme por episodio.
    twin = reinforce.CategoricalPolicy(1, 2, hidden=4)
    twin.load_state_dict(before)
    uniforms = torch.rand(4, generator=torch.Generator().manual_seed(1))
    terms, rewards = [], []
    for i in range(4):
        obs, _ = env.reset(seed=10 + i)
        log_pi = torch.log_softmax(twin(torch.as_tensor(obs)), -1)
        action = int((log_pi.detach().exp().cumsum(-1) <= uniforms[i]).sum())
        _, reward, *_ = env.step(action)
        rewards.append(reward)
        terms.append(log_pi[action] * reward)
    (-torch.stack(terms).sum() / 4).backward()
    for (name, value), p in zip(
        twin.state_dict().items(), twin.parameters(), strict=True
    ):
        torch.testing.assert_close(policy.state_dict()[name], value - 0.3 * p.grad)
    assert curve == [pytest.approx(np.mean(rewards))]


def test_evaluations_every_so_many_env_steps():
    # La regla de make bench: la primera actualización tras cada 1000 pasos.
    config = reinforce.ReinforceConfig(
        seed=0,
        n_envs=4,
        max_env_steps=3000,
        eval_every=1000,
        eval_episodes=2,
        target_return=None,
    )
    history = reinforce.train_reinforce(config, progress=False)
    steps = [e.env_steps for e in history.evaluations]
    marks = [s // 1000 for s in steps]
    assert steps and marks == sorted(set(marks)), steps
    # ninguna evaluación se salta una marca: cada una es la primera tras la suya
    for step in steps:
        previous = [s for s in history.env_steps if s < step]
        assert not previous or previous[-1] < (step // 1000) * 1000


def test_corridor_state_form_is_the_gradient_of_the_discounted_objective():
    """La forma con estados (d_γ, Q_γ) es ∇J_γ de autograd; con d_1 no."""
    corridor = reinforce.ShortCorridor()
    for gamma in (1.0, 0.9, 0.5):
        for theta in (np.zeros(2), np.array([0.3, -0.4])):
            exact = corridor.exact_gradient(theta, gamma)
            form = corridor.state_form_gradient(torch.tensor(theta), gamma).numpy()
            assert np.allclose(form, exact, atol=1e-10), (gamma, theta)
    theta = torch.zeros(2, dtype=torch.float64)
    usual = corridor.state_form_gradient(theta, 0.7, visits_gamma=1.0)
    assert not torch.allclose(usual, corridor.state_form_gradient(theta, 0.7))
    # Con γ = 1 y θ = 0 se visitan 6, 4 y 2 veces las casillas (J = −12).
    assert np.allclose(corridor.visits(theta).numpy(), [6.0, 4.0, 2.0])


def test_corridor_usual_estimator_without_gamma_t_matches_its_state_form():
    """Monte Carlo sin γ^t da, en media, la forma con visitas sin descontar."""
    corridor = reinforce.ShortCorridor()
    gamma, theta = 0.7, np.zeros(2)
    episodes = corridor.sample_episodes(theta, 40_000, np.random.default_rng(3))
    actions = [a for a, _ in episodes]
    returns = [reinforce.discounted_returns(r, gamma) for _, r in episodes]
    weighted = [gamma ** np.arange(len(g)) * g for g in returns]
    theta_t = torch.tensor(theta)
    for weights, visits_gamma in ((returns, 1.0), (weighted, gamma)):
        g = reinforce.per_episode_score_gradients(theta, actions, weights)[:, 1]
        want = corridor.state_form_gradient(theta_t, gamma, visits_gamma)[1].item()
        assert abs(g.mean() - want) < 4 * g.std() / np.sqrt(len(g))


def test_corridor_field_without_gamma_t_is_not_a_gradient():
    """Con logits por casilla, el jacobiano del campo sin γ^t no es simétrico."""
    corridor = reinforce.ShortCorridor()
    theta = torch.tensor([0.3, -0.2, 0.1, 0.4, -0.5, 0.2], dtype=torch.float64)
    for visits_gamma, symmetric in ((0.7, True), (1.0, False)):
        jac = torch.autograd.functional.jacobian(
            lambda x, v=visits_gamma: corridor.state_form_gradient(
                x.view(3, 2), 0.7, visits_gamma=v
            ).flatten(),
            theta,
        )
        assert torch.allclose(jac, jac.T, atol=1e-10) == symmetric
