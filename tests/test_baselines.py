"""Las implementaciones de referencia del módulo 04, contra cálculos independientes."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from helpers import baselines, reinforce, training
from tests.notebooks import exercises, read, solution_path, student_version


def _autograd_score(theta: np.ndarray, action: int) -> np.ndarray:
    th = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
    torch.log_softmax(th, dim=0)[action].backward()
    return th.grad.numpy()


def test_score_gradients_match_autograd_sample_by_sample():
    rng = np.random.default_rng(0)
    for _ in range(20):
        k, n = int(rng.integers(2, 5)), int(rng.integers(1, 8))
        theta = rng.normal(size=k) * 2
        actions = rng.integers(k, size=n)
        rewards = rng.normal(size=n) * 10
        b = rng.normal(size=n) if rng.random() < 0.5 else float(rng.normal())
        got = baselines.score_gradients(theta, actions, rewards, b)
        bs = np.broadcast_to(b, (n,))
        want = np.array(
            [
                (r - bi) * _autograd_score(theta, int(a))
                for a, r, bi in zip(actions, rewards, bs, strict=True)
            ]
        )
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_exact_bandit_gradient_matches_autograd():
    theta = np.array([1.0, 0.0, -1.0])
    th = torch.tensor(theta, requires_grad=True)
    means = torch.as_tensor(baselines.PEDESTAL_MEANS)
    (torch.softmax(th, 0) * means).sum().backward()
    np.testing.assert_allclose(
        baselines.exact_bandit_gradient(theta, baselines.PEDESTAL_MEANS),
        th.grad.numpy(),
        atol=1e-10,
    )


def test_constant_baseline_has_zero_expectation_exactly():
    theta = np.array([0.3, -1.2, 2.0, 0.0])
    pi = baselines.softmax_policy(theta)
    for b in [1.0, 500.0, -7.0]:
        expectation = sum(
            pi[a] * baselines.score_gradients(theta, [a], [b], 0.0)[0] for a in range(4)
        )
        np.testing.assert_allclose(expectation, 0.0, atol=1e-12)


def test_estimates_are_unbiased_with_and_without_baseline():
    theta = np.array([1.0, 0.0, -1.0])
    exact = baselines.exact_bandit_gradient(theta, baselines.PEDESTAL_MEANS)
    actions, rewards = baselines.pedestal_samples(
        theta, 400_000, np.random.default_rng(1)
    )
    for b in [0.0, 500.0]:
        g = baselines.score_gradients(theta, actions, rewards, b)
        stderr = np.sqrt(g.var(axis=0) / len(g))
        assert np.all(np.abs(g.mean(axis=0) - exact) < 5 * stderr)


def test_total_variance_is_the_trace_of_the_covariance():
    g = np.random.default_rng(2).normal(size=(50, 4)) * [1, 2, 3, 4]
    expected = np.trace(np.cov(g.T, bias=True))
    assert baselines.total_variance(g) == pytest.approx(expected)
    assert baselines.total_variance(np.ones((5, 3))) == pytest.approx(0.0)


def test_causal_estimates_by_brute_force():
    rng = np.random.default_rng(3)
    rewards = [rng.normal(size=int(t)) for t in rng.integers(1, 7, size=6)]
    scores = [rng.normal(size=(len(r), 3)) for r in rewards]
    full, to_go = baselines.causal_estimates(rewards, scores)
    for i, (r, s) in enumerate(zip(rewards, scores, strict=True)):
        want_full = sum(r[k] * s[t] for k in range(len(r)) for t in range(len(r)))
        want_to_go = sum(
            r[k] * s[t] for t in range(len(r)) for k in range(len(r)) if k >= t
        )
        np.testing.assert_allclose(full[i], want_full, atol=1e-12)
        np.testing.assert_allclose(to_go[i], want_to_go, atol=1e-12)
    # Un episodio de un paso: los dos estimadores coinciden.
    one = baselines.causal_estimates([np.array([2.0])], [np.array([[1.0, -1.0]])])
    np.testing.assert_allclose(one[0], one[1])
    variances = baselines.estimator_variances(rewards, scores)
    assert variances == pytest.approx(
        (baselines.total_variance(full), baselines.total_variance(to_go))
    )


def test_pedestal_episodes_and_causality():
    theta = np.array([1.0, 0.0, -1.0])
    rewards, scores = baselines.pedestal_episodes(
        theta, 20_000, np.random.default_rng(4)
    )
    lengths = np.array([len(r) for r in rewards])
    assert lengths.min() == 5 and lengths.max() == 30
    pi = baselines.softmax_policy(theta)
    assert all(np.allclose(s.sum(axis=1), 0.0) for s in scores[:50])
    assert np.allclose(scores[0] + pi, np.round(scores[0] + pi))  # one_hot − π
    # Las dos estimaciones son insesgadas: ∇J = E[T]·(el gradiente de un paso).
    centered = [r - baselines.STEP_MEANS[1] for r in rewards]
    exact = np.mean(np.arange(5, 31)) * baselines.exact_bandit_gradient(
        theta, baselines.STEP_MEANS
    )
    for g in baselines.causal_estimates(centered, scores):
        stderr = np.sqrt(g.var(axis=0) / len(g))
        assert np.all(np.abs(g.mean(axis=0) - exact) < 5 * stderr)
    # La causalidad quita varianza: cerca de E[T³]/E[Σ k²] con un pedestal.
    full, to_go = baselines.estimator_variances(rewards, scores)
    predicted = np.mean(lengths.astype(float) ** 3) / np.mean(
        [np.sum(np.arange(1, t + 1) ** 2) for t in lengths]
    )
    assert full / to_go == pytest.approx(predicted, rel=0.1)


def test_samples_for_precision_by_hand():
    assert baselines.samples_for_precision(100.0, 1.0) == 100
    assert baselines.samples_for_precision(100.0, 3.0) == 12  # ⌈11,1⌉
    assert baselines.samples_for_precision(0.0, 1.0) == 1


def test_pedestal_variance_reduction_is_large():
    theta = np.array([1.0, 0.0, -1.0])
    actions, rewards = baselines.pedestal_samples(theta, 4000, np.random.default_rng(1))
    plain = baselines.total_variance(
        baselines.score_gradients(theta, actions, rewards, 0.0)
    )
    based = baselines.total_variance(
        baselines.score_gradients(theta, actions, rewards, 500.0)
    )
    assert plain / based > 10


def test_optimal_constant_baseline_minimizes_the_variance():
    theta = np.array([1.0, 0.0, -1.0])
    actions, rewards = baselines.pedestal_samples(theta, 3000, np.random.default_rng(3))
    b_star = baselines.optimal_constant_baseline(theta, actions, rewards)

    # La varianza que se minimiza es el segundo momento E‖(R − b)s‖²: con la
    # media de las muestras, la «varianza total» difiere en ‖ḡ‖², que no
    # depende apenas de b; se comprueba el segundo momento, exacto.
    def second_moment(b):
        g = baselines.score_gradients(theta, actions, rewards, b)
        return (g**2).sum(axis=1).mean()

    grid = np.linspace(b_star - 20, b_star + 20, 401)
    assert grid[np.argmin([second_moment(b) for b in grid])] == pytest.approx(
        b_star, abs=0.1
    )
    uniform = np.zeros(3)
    assert baselines.optimal_constant_baseline(
        uniform, actions, rewards
    ) == pytest.approx(rewards.mean())


def test_normalize_returns_numpy_torch_and_equal_returns():
    g = np.array([500.0, 520.0, 480.0, 540.0])
    out = baselines.normalize_returns(g)
    assert out.mean() == pytest.approx(0.0, abs=1e-12)
    assert out.std() == pytest.approx(1.0)
    t = baselines.normalize_returns(torch.tensor(g))
    assert isinstance(t, torch.Tensor)
    np.testing.assert_allclose(t.numpy(), out)
    for equal in (np.ones(4), torch.ones(3), np.array([7.0])):
        same = baselines.normalize_returns(equal)
        assert not np.isnan(np.asarray(same)).any()
        assert np.all(np.asarray(same) == 0)


def test_leave_one_out_baseline_by_brute_force():
    rng = np.random.default_rng(4)
    for _ in range(20):
        n = int(rng.integers(1, 10))
        ids, rewards = rng.integers(3, size=n), rng.normal(size=n)
        expected = []
        for i in range(n):
            others = [rewards[j] for j in range(n) if ids[j] == ids[i] and j != i]
            expected.append(np.mean(others) if others else 0.0)
        np.testing.assert_allclose(
            baselines.leave_one_out_baseline(ids, rewards), expected, atol=1e-12
        )


def test_leave_one_out_is_unbiased_and_the_group_mean_shrinks():
    """Esperanza exacta sobre todos los grupos de 3 acciones posibles."""
    theta, means = np.array([0.4, -0.3]), np.array([2.0, 8.0])
    pi = baselines.softmax_policy(theta)
    exact = baselines.exact_bandit_gradient(theta, means)
    n = 3
    loo_total, own_total = np.zeros(2), np.zeros(2)
    for group in itertools.product(range(2), repeat=n):
        p = np.prod(pi[list(group)])
        r = means[list(group)]
        loo = baselines.leave_one_out_baseline(np.zeros(n, dtype=int), r)
        own = np.full(n, r.mean())
        loo_total += p * baselines.score_gradients(theta, group, r, loo).mean(axis=0)
        own_total += p * baselines.score_gradients(theta, group, r, own).mean(axis=0)
    np.testing.assert_allclose(loo_total, exact, atol=1e-12)
    np.testing.assert_allclose(own_total, (n - 1) / n * exact, atol=1e-12)


def test_baseline_losses_values_and_gradients():
    log_probs = torch.tensor([-1.0, -2.0, -0.5], requires_grad=True)
    values = torch.tensor([1.0, 3.0, 0.0], requires_grad=True)
    returns = torch.tensor([2.0, 1.0, 1.0])
    policy_loss, value_loss = baselines.baseline_losses(log_probs, values, returns, 2)
    # A = (1, −2, 1): −(−1·1 − 2·(−2) − 0,5·1)/2 = −1,25; MSE = (1 + 4 + 1)/3 = 2.
    assert policy_loss.item() == pytest.approx(-1.25)
    assert value_loss.item() == pytest.approx(2.0)
    policy_loss.backward()
    assert values.grad is None or torch.all(values.grad == 0)
    torch.testing.assert_close(log_probs.grad, torch.tensor([-0.5, 1.0, -0.5]))
    value_loss.backward()
    torch.testing.assert_close(values.grad, 2 * (values - returns).detach() / 3)


def test_per_step_scores_and_episode_gradients_match_autograd():
    torch.manual_seed(0)
    policy = reinforce.CategoricalPolicy(4, 2, hidden=8)
    obs = torch.randn(7, 4)
    actions = torch.tensor([0, 1, 1, 0, 1, 0, 0])
    scores = baselines.per_step_scores(policy, obs, actions)
    assert scores.shape == (7, sum(p.numel() for p in policy.parameters()))
    for t in range(7):
        policy.zero_grad()
        policy.distribution(obs[t]).log_prob(actions[t]).backward()
        flat = torch.cat([p.grad.reshape(-1) for p in policy.parameters()])
        torch.testing.assert_close(scores[t], flat, atol=1e-6, rtol=1e-5)
    weights, lengths = torch.arange(7.0), [3, 4]
    per_episode = baselines.per_episode_gradients(scores, weights, lengths)
    policy.zero_grad()
    log_probs = policy.distribution(obs).log_prob(actions)
    (log_probs[:3] * weights[:3]).sum().backward()
    first = torch.cat([p.grad.reshape(-1) for p in policy.parameters()])
    np.testing.assert_allclose(per_episode[0], first.numpy(), atol=1e-5)
    np.testing.assert_allclose(
        per_episode.sum(axis=0),
        (weights[:, None] * scores).sum(0).detach().numpy(),
        atol=1e-5,
    )


def _fake_episodes(n_steps: int = 40) -> training.Episodes:
    generator = torch.Generator().manual_seed(0)
    obs = torch.randn(n_steps, 4, generator=generator)
    return training.Episodes(
        obs=obs,
        actions=torch.zeros(n_steps, dtype=torch.long),
        rewards=torch.ones(n_steps),
        lengths=[n_steps // 2, n_steps - n_steps // 2],
    )


def test_value_baseline_learns_and_detaches():
    episodes = _fake_episodes()
    returns = 50 + 10 * episodes.obs[:, 0]
    value = baselines.ValueBaseline(4, hidden=16, epochs=1, seed=0)
    advantages = value.advantages(episodes, returns)
    assert not advantages.requires_grad
    with torch.no_grad():
        torch.testing.assert_close(advantages, returns - value.values(episodes.obs))
    first = value.update(episodes, returns)
    for _ in range(300):
        last = value.update(episodes, returns)
    assert last < 0.05 * first


def test_value_baseline_does_not_touch_the_global_generator():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    baselines.ValueBaseline(4, seed=123)
    torch.testing.assert_close(torch.rand(3), expected)


def test_batch_mean_baseline():
    episodes = _fake_episodes(6)
    returns = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    out = baselines.BatchMeanBaseline().advantages(episodes, returns)
    torch.testing.assert_close(out, returns - 3.5)
    assert baselines.BatchMeanBaseline().update(episodes, returns) is None


def test_train_reinforce_with_baseline_runs_and_is_deterministic():
    config = reinforce.ReinforceConfig(
        seed=3, n_envs=4, max_updates=3, eval_every_updates=0, target_return=None
    )
    a = baselines.train_reinforce_with_baseline(config, progress=False)
    b = baselines.train_reinforce_with_baseline(config, progress=False)
    assert len(a.baseline_losses) == 3
    assert all(math.isfinite(x) for x in a.baseline_losses)
    assert a.episode_returns == b.episode_returns
    assert isinstance(a.baseline, baselines.ValueBaseline)
    plain = baselines.plain_config(config)
    assert plain.normalize_returns is False and plain.seed == 3


def test_question_table_is_consistent():
    assert baselines.SUCCESS.shape == (len(baselines.QUESTIONS), 3)
    assert np.all((baselines.SUCCESS >= 0) & (baselines.SUCCESS <= 1))
    assert np.all(baselines.SUCCESS[baselines.QUESTIONS.index("2 + 2")] == 1)


def test_train_questions_adam_learns_and_is_deterministic():
    exact = baselines.train_questions_adam(
        lambda R, v: R - v[..., None], n_runs=20, n_updates=60, seed=1
    )
    start = baselines.SUCCESS.mean()  # política uniforme
    assert exact.shape == (60,) and exact[0] == pytest.approx(start)
    assert exact[-1] > start + 0.1
    assert exact[-1] <= baselines.SUCCESS.max(axis=1).mean()
    again = baselines.train_questions_adam(
        lambda R, v: R - v[..., None], n_runs=20, n_updates=60, seed=1
    )
    np.testing.assert_array_equal(exact, again)
    # Sin pesos no hay gradiente: la política no se mueve.
    still = baselines.train_questions_adam(
        lambda R, v: np.zeros_like(R), n_runs=5, n_updates=10
    )
    np.testing.assert_allclose(still, start)


def test_notebook_solutions_agree_with_the_references():
    nb = read(solution_path("04_lineas_base"))
    namespace: dict = {"np": np, "torch": torch, "reinforce": reinforce}
    for exercise in exercises(nb):
        exec(student_version(exercise.solution), namespace)
    rng = np.random.default_rng(12)
    for _ in range(40):
        k, n = int(rng.integers(2, 5)), int(rng.integers(1, 9))
        theta = rng.normal(size=k)
        actions, rewards = rng.integers(k, size=n), rng.normal(size=n) * 5
        b = rng.normal(size=n)
        np.testing.assert_allclose(
            namespace["score_gradients"](theta, actions, rewards, b),
            baselines.score_gradients(theta, actions, rewards, b),
        )
        episode_rewards = [rng.normal(size=int(t)) for t in rng.integers(1, 6, size=n)]
        episode_scores = [rng.normal(size=(len(r), k)) for r in episode_rewards]
        assert namespace["estimator_variances"](
            episode_rewards, episode_scores
        ) == pytest.approx(
            baselines.estimator_variances(episode_rewards, episode_scores)
        )
        returns = rng.normal(size=n) if rng.random() < 0.8 else np.full(n, 2.0)
        np.testing.assert_allclose(
            namespace["normalize_returns"](returns),
            baselines.normalize_returns(returns),
            atol=1e-9,
        )
        ids = rng.integers(3, size=n)
        np.testing.assert_allclose(
            namespace["leave_one_out_baseline"](ids, rewards),
            baselines.leave_one_out_baseline(ids, rewards),
        )
        lp, v, ret = (torch.as_tensor(rng.normal(size=n)) for _ in range(3))
        for got, want in zip(
            namespace["baseline_losses"](lp, v, ret, 2),
            baselines.baseline_losses(lp, v, ret, 2),
            strict=True,
        ):
            torch.testing.assert_close(got, want)


def test_contextual_coin_gradient_matches_autograd_on_samples():
    """El gradiente exacto por cuadratura es la media de Σ_a ∇π(a|s)·r̄(s, a)."""
    coin = baselines.ContextualCoin(theta=(0.2, 0.7))
    u = (np.arange(4000) + 0.5) / 4000
    s = torch.tensor(coin.states(u))
    theta = torch.tensor(coin.theta, requires_grad=True)
    p = torch.sigmoid(theta[0] + theta[1] * s)
    objective = (p * (2 + s) + (1 - p) * (2 - s)).mean()  # r̄(s, 1), r̄(s, 0)
    objective.backward()
    np.testing.assert_allclose(coin.exact_gradient(), theta.grad.numpy(), atol=1e-5)


def test_fitted_values_are_the_mean_of_each_bin():
    states = np.array([[-0.9, -0.8, 0.1, 0.6]])
    returns = np.array([[1.0, 3.0, 5.0, 7.0]])
    values = baselines.fitted_values(states, returns, states, 2)
    np.testing.assert_allclose(values, [[2.0, 2.0, 6.0, 6.0]])
    # Un tramo sin muestras en el ajuste vale 0.
    np.testing.assert_allclose(
        baselines.fitted_values(states[:, :2], returns[:, :2], states, 2),
        [[2.0, 2.0, 0.0, 0.0]],
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fitting_v_first_shrinks_the_gradient_as_predicted(seed):
    """V del lote anterior: sin sesgo. V ajustada al mismo lote: lo que predice."""
    coin = baselines.ContextualCoin()
    exact = coin.exact_gradient()
    rng = np.random.default_rng(seed)
    for k in (1, 8):
        runs = baselines.fit_order_gradients(coin, k, 32, 3000, rng)
        for label, want in (
            ("V del lote anterior", exact),
            ("V ajustada a este lote", coin.fit_first_expected_gradient(k, 32)),
        ):
            g = runs[label]
            error = g.std(axis=0) / np.sqrt(len(g))
            assert np.all(np.abs(g.mean(axis=0) - want) < 4 * error + 1e-4), (k, label)
    # Con un solo tramo, V es la media del lote: el factor es (N − 1)/N.
    np.testing.assert_allclose(
        coin.fit_first_expected_gradient(1, 32), 31 / 32 * exact, rtol=1e-9
    )


def test_state_optimal_baseline_is_the_score_weighted_mean():
    # b*(s) = E[‖∇log π‖² R | s] / E[‖∇log π‖² | s], a partir de la definición.
    coin = baselines.ContextualCoin(theta=(1.0, -2.0))
    s = np.linspace(-1, 1, 7)
    p = coin.prob_one(s)
    weight = {a: (a - p) ** 2 * (1 + s**2) * np.where(a == 1, p, 1 - p) for a in (0, 1)}
    mean_reward = {a: 2 + s * (2 * a - 1) for a in (0, 1)}
    want = sum(weight[a] * mean_reward[a] for a in (0, 1)) / sum(weight.values())
    got = baselines.state_baselines(coin, s)
    np.testing.assert_allclose(got["b*(s)"], want)
    want_v = p * mean_reward[1] + (1 - p) * mean_reward[0]
    np.testing.assert_allclose(got["V(s)"], want_v)


def test_state_baseline_variances_match_sampling_and_b_star_is_the_floor():
    coin = baselines.ContextualCoin()
    exact = baselines.state_baseline_variances(coin)
    states, _, rewards, scores = coin.batches(1, 200_000, np.random.default_rng(5))
    state_b = baselines.state_baselines(coin, states)
    for label, b in {"sin línea base": 0 * states, **state_b}.items():
        measured = baselines.total_variance(((rewards - b)[..., None] * scores)[0])
        assert measured == pytest.approx(exact[label], rel=0.03)
    assert exact["b*(s)"] < exact["V(s)"] < exact["sin línea base"]
    # Moverse de b*(s) en cualquier sentido sube la varianza.
    for shift in (-0.2, 0.2):
        b = state_b["b*(s)"] + shift
        shifted = baselines.total_variance(((rewards - b)[..., None] * scores)[0])
        assert shifted > exact["b*(s)"] * 1.01


def _update_problem(seed: int):
    torch.manual_seed(seed)
    policy = reinforce.CategoricalPolicy(4, 2, hidden=8)
    value_net = baselines.value_network(4, hidden=8)
    episodes = training.Episodes(
        torch.randn(9, 4), torch.randint(2, (9,)), torch.ones(9), [4, 2, 3]
    )
    return policy, value_net, episodes, 1 + 4 * torch.rand(9)


def _sgd_update(update, seed: int, epochs: int = 3):
    policy, value_net, episodes, returns = _update_problem(seed)
    optimizers = [
        torch.optim.SGD(net.parameters(), lr=0.1) for net in (policy, value_net)
    ]
    advantages = update(policy, value_net, *optimizers, episodes, returns, epochs)
    return policy, value_net, advantages


def test_baseline_update_is_advantages_then_one_policy_step_then_value_steps():
    policy, value_net, episodes, returns = _update_problem(0)
    with torch.no_grad():
        old_values = value_net(episodes.obs)
    # A mano: el gradiente de −Σ log π·A / N con A de la V de antes, un paso de
    # SGD; después, 3 pasos de SGD sobre la media de (V − G)².
    log_probs = policy.distribution(episodes.obs).log_prob(episodes.actions)
    grads = torch.autograd.grad(
        -(log_probs * (returns - old_values)).sum() / 3, list(policy.parameters())
    )
    want_policy = [
        p.detach() - 0.1 * g for p, g in zip(policy.parameters(), grads, strict=True)
    ]
    fitted = baselines.value_network(4, hidden=8)
    fitted.load_state_dict(value_net.state_dict())
    for _ in range(3):
        loss = ((fitted(episodes.obs) - returns) ** 2).mean()
        grads = torch.autograd.grad(loss, list(fitted.parameters()))
        with torch.no_grad():
            for p, g in zip(fitted.parameters(), grads, strict=True):
                p -= 0.1 * g
    got_policy, got_value, advantages = _sgd_update(baselines.baseline_update, 0)
    torch.testing.assert_close(advantages, returns - old_values)
    assert not advantages.requires_grad
    for got, want in zip(got_policy.parameters(), want_policy, strict=True):
        torch.testing.assert_close(got.detach(), want)
    for got, want in zip(got_value.parameters(), fitted.parameters(), strict=True):
        torch.testing.assert_close(got.detach(), want.detach())


def test_notebook_baseline_update_agrees_with_the_reference():
    nb = read(solution_path("04_lineas_base"))
    namespace: dict = {"np": np, "torch": torch, "reinforce": reinforce}
    for exercise in exercises(nb):
        exec(student_version(exercise.solution), namespace)
    for seed in range(3):
        mine = _sgd_update(namespace["baseline_update"], seed)
        theirs = _sgd_update(baselines.baseline_update, seed)
        for got, want in zip(mine[:2], theirs[:2], strict=True):
            for key, value in want.state_dict().items():
                torch.testing.assert_close(got.state_dict()[key], value)
        torch.testing.assert_close(mine[2], theirs[2])
