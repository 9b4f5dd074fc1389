"""Las implementaciones de referencia del módulo 01, contra cálculos independientes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from helpers import bandits
from tests.notebooks import exercises, read, solution_path, student_version


def test_incremental_mean_equals_the_mean():
    rewards = np.random.default_rng(0).normal(size=50)
    estimate = 0.0
    for n, reward in enumerate(rewards, start=1):
        estimate = bandits.incremental_mean(estimate, reward, n)
    assert estimate == pytest.approx(rewards.mean())


def test_epsilon_greedy_frequencies():
    rng = np.random.default_rng(0)
    picks = np.array(
        [bandits.epsilon_greedy([0, 1, 1, 0], 0.2, rng) for _ in range(20_000)]
    )
    freq = np.bincount(picks, minlength=4) / len(picks)
    # P(brazo 1) = P(brazo 2) = 0,8/2 + 0,2/4 = 0,45; P(0) = P(3) = 0,05.
    assert freq == pytest.approx([0.05, 0.45, 0.45, 0.05], abs=0.01)


def test_ucb_by_brute_force():
    q, counts, t, c = np.array([0.3, 0.5, 0.1]), np.array([4, 9, 1]), 15, 1.5
    scores = [q[a] + c * np.sqrt(np.log(t) / counts[a]) for a in range(3)]
    assert bandits.ucb_action(q, counts, t, c) == int(np.argmax(scores))
    assert bandits.ucb_action(q, np.array([4, 0, 0]), t, c) == 1


def test_softmax_matches_torch():
    h = np.array([3.0, -1.0, 0.5, 800.0])
    expected = torch.softmax(torch.tensor(h), dim=0).numpy()
    assert np.allclose(bandits.softmax(h), expected)


def test_gradient_bandit_update_is_the_gradient_of_expected_reward():
    # E[(R − b)(1{a=A} − π(a))] con R ~ q*(A) es ∂E[R]/∂H: sumamos sobre A.
    h = np.array([0.2, -0.4, 0.9])
    q_star = np.array([1.0, 2.0, -0.5])
    pi = bandits.softmax(h)
    expected_update = sum(
        pi[a] * (bandits.gradient_bandit_update(h, a, q_star[a], 0.7, 1.0) - h)
        for a in range(3)
    )
    h_t = torch.tensor(h, requires_grad=True)
    (torch.softmax(h_t, 0) * torch.tensor(q_star)).sum().backward()
    assert np.allclose(expected_update, h_t.grad.numpy())


def test_vectorized_epsilon_greedy_matches_scalar_rules():
    rng = np.random.default_rng(1)
    q_star = bandits.make_testbed(500, rng=rng)
    runs = bandits.run_epsilon_greedy(q_star, 200, 0.1, rng=rng)
    assert runs.rewards.shape == runs.optimal.shape == (200, 500)
    # Con ε = 0,1 y 10 brazos, al menos ~1 % de las veces se elige el óptimo
    # al azar, y el voraz no puede estar por encima del techo.
    assert 0.3 < runs.optimal_fraction()[-50:].mean() < 0.95
    assert runs.mean_reward()[-50:].mean() < bandits.expected_best_arm(
        n_samples=200_000
    )


def test_gradient_bandit_train_step_by_step():
    # Tres pasos a mano en un bandido de Bernoulli, con el orden del enunciado:
    # rng.choice(k, p=π) y después pull(A, rng), que gasta un rng.random().
    q_star = [0.3, 0.9]

    def pull(arm, rng):
        return float(rng.random() < q_star[arm])

    h, actions = bandits.gradient_bandit_train(
        pull, 2, 3, 0.5, np.random.default_rng(11)
    )
    rng = np.random.default_rng(11)
    want_h, mean, want_actions = np.zeros(2), 0.0, []
    for t in (1, 2, 3):
        pi = np.exp(want_h) / np.exp(want_h).sum()
        a = int(rng.choice(2, p=pi))
        r = float(rng.random() < q_star[a])
        b = r if t == 1 else mean
        want_h = want_h + 0.5 * (r - b) * (np.eye(2)[a] - pi)
        mean += (r - mean) / t
        want_actions.append(a)
    assert actions == want_actions
    assert np.allclose(h, want_h)


def test_gradient_bandit_train_learns_the_better_arm():
    def pull(arm, rng):
        return float(rng.random() < (0.2, 0.8)[arm])

    h, actions = bandits.gradient_bandit_train(
        pull, 2, 500, 0.2, np.random.default_rng(0)
    )
    assert bandits.softmax(h)[1] > 0.9 and np.mean(actions[-100:]) > 0.85


def test_testbed_step_by_hand():
    # Dos ejecuciones, ε = 0: la 0 tiene un solo máximo (el brazo 2) y la 1 está
    # toda empatada. Los números aleatorios, sacados a mano en el orden del
    # enunciado: moneda, brazos al azar, desempate y ruido de las recompensas.
    q = np.array([[0.0, 1.0, 2.0], [0.5, 0.5, 0.5]])
    counts = np.array([[1, 1, 3], [2, 2, 2]])
    q_star = np.array([[0.0, 0.0, 1.0], [0.0, 2.0, 0.0]])
    draws = np.random.default_rng(3)
    draws.random(2)
    draws.integers(3, size=2)
    noise = draws.random((2, 3))
    reward_noise = draws.standard_normal(2)
    actions, rewards, new_q, new_counts = bandits.testbed_step(
        q, counts, q_star, 0.0, np.random.default_rng(3)
    )
    assert actions.tolist() == [2, int(np.argmax(noise[1]))]
    assert np.allclose(rewards, q_star[[0, 1], actions] + reward_noise)
    want_counts = counts.astype(float)
    want_counts[0, 2], want_counts[1, actions[1]] = 4, 3
    assert np.array_equal(new_counts, want_counts)
    want_q = q.copy()
    want_q[0, 2] = (3 * 2.0 + rewards[0]) / 4
    want_q[1, actions[1]] = (2 * 0.5 + rewards[1]) / 3
    assert np.allclose(new_q, want_q)
    # Las entradas no cambian.
    assert q[0, 2] == 2.0 and counts[0, 2] == 3


def test_testbed_step_explores_uniformly():
    rng = np.random.default_rng(0)
    q = np.tile([0.0, 0.0, 5.0, 0.0], (20_000, 1))
    actions = bandits.testbed_step(q, np.ones_like(q), q, 0.2, rng)[0]
    freq = np.bincount(actions, minlength=4) / len(actions)
    # 1 − ε + ε/k = 0,85 para el mejor; ε/k = 0,05 para cada uno de los otros.
    assert freq == pytest.approx([0.05, 0.05, 0.85, 0.05], abs=0.01)


def _naive_epsilon_greedy(q_star, n_steps, epsilon, alpha, initial, rng):
    """ε-greedy ejecución a ejecución, con los números aleatorios en el orden
    que documenta testbed_step (sacados de golpe para todas las filas)."""
    n_runs, k = q_star.shape
    q = np.full((n_runs, k), initial)
    counts = np.zeros((n_runs, k))
    rewards = np.empty((n_steps, n_runs))
    for t in range(n_steps):
        coins, arms = rng.random(n_runs), rng.integers(k, size=n_runs)
        tie_noise, noise = rng.random((n_runs, k)), rng.standard_normal(n_runs)
        for i in range(n_runs):
            if coins[i] < epsilon:
                action = arms[i]
            else:
                tied = [a for a in range(k) if q[i, a] == q[i].max()]
                action = max(tied, key=lambda a: tie_noise[i, a])
            reward = q_star[i, action] + noise[i]
            counts[i, action] += 1
            step = 1 / counts[i, action] if alpha is None else alpha
            q[i, action] += step * (reward - q[i, action])
            rewards[t, i] = reward
    return rewards


@pytest.mark.parametrize(
    ("epsilon", "alpha", "initial"),
    [(0.0, None, 0.0), (0.1, None, 0.0), (0.0, 0.1, 5.0)],
)
def test_run_epsilon_greedy_matches_a_plain_loop(epsilon, alpha, initial):
    q_star = bandits.make_testbed(20, rng=np.random.default_rng(1))
    run = bandits.run_epsilon_greedy(
        q_star, 60, epsilon, alpha=alpha, initial=initial, rng=np.random.default_rng(5)
    )
    expected = _naive_epsilon_greedy(
        q_star, 60, epsilon, alpha, initial, np.random.default_rng(5)
    )
    np.testing.assert_allclose(run.rewards, expected, atol=1e-12)


def test_regret_is_the_expected_loss_of_each_action():
    # Las pérdidas de cada paso, frente a las recompensas: en esperanza,
    # max q* − R es max q* − q*(A); cero exactamente cuando A es la óptima.
    rng = np.random.default_rng(3)
    q_star = bandits.make_testbed(400, rng=rng)
    best_value = q_star.max(axis=1)
    for run in (
        bandits.run_epsilon_greedy(q_star, 200, 0.3, rng=rng),
        bandits.run_ucb(q_star, 200, 2.0, rng=rng),
        bandits.run_gradient_bandit(q_star, 200, 0.1, rng=rng),
    ):
        assert np.all(run.gaps >= 0)
        assert np.array_equal(run.gaps == 0, run.optimal)
        # El ruido de las recompensas es N(0, 1) en 80 000 pasos: ±0,02 es más
        # de cinco desviaciones típicas de la media.
        noisy = (best_value - run.rewards).mean()
        assert noisy == pytest.approx(run.gaps.mean(), abs=0.02)
        np.testing.assert_allclose(
            run.cumulative_regret(), np.cumsum(run.gaps.mean(axis=1))
        )
    assert run.policy.shape == q_star.shape
    np.testing.assert_allclose(run.policy.sum(axis=1), 1.0)


def test_regret_grows_linearly_for_epsilon_greedy_and_slowly_for_ucb():
    # Lo que afirma el cuaderno (sección 6), con otras semillas: al doblar los
    # pasos, ε-greedy suma el doble y UCB casi lo mismo.
    rng = np.random.default_rng(11)
    q_star = bandits.make_testbed(200, rng=rng)
    for run, low, high in (
        (bandits.run_epsilon_greedy(q_star, 2000, 0.1, rng=rng), 1.6, 2.4),
        (bandits.run_ucb(q_star, 2000, 2.0, rng=rng), 0.7, 1.35),
    ):
        regret = run.cumulative_regret()
        growth = (regret[1999] - regret[999]) / (regret[999] - regret[499])
        assert low < growth < high


def test_run_bernoulli_counts_what_the_rule_sees():
    success = np.array([0.2, 0.9, 0.5])
    seen = []

    def round_robin(wins, pulls, t, rng):
        seen.append((wins.copy(), pulls.copy(), t))
        return np.full(wins.shape[0], (t - 1) % 3)

    run = bandits.run_bernoulli(
        success, 4000, 30, round_robin, rng=np.random.default_rng(0)
    )
    # La regla ve lo que pasó antes de su paso: t empieza en 1, y los aciertos
    # de cada brazo son las recompensas de sus tiradas.
    wins, pulls, t = seen[-1]
    assert t == 30 and np.all(pulls == [10, 10, 9])
    np.testing.assert_array_equal(wins[:, 0], run.rewards[0:29:3].sum(axis=0))
    # Cada brazo paga con su probabilidad, y lo perdido es max − la suya.
    for arm in range(3):
        assert run.rewards[arm::3].mean() == pytest.approx(success[arm], abs=0.01)
        assert np.all(run.gaps[arm::3] == success.max() - success[arm])
    assert np.array_equal(run.optimal, run.gaps == 0)


def test_testbed_reproduces_the_book():
    # Sutton y Barto (2018, §2.3): el voraz se queda en una recompensa de «about
    # 1» y encuentra el brazo óptimo en «approximately one-third» de los
    # bandidos; ε = 0,1 le gana, y UCB (§2.7, figura 2.4) gana a ε-greedy.
    rng = np.random.default_rng(2018)
    q_star = bandits.make_testbed(2000, rng=rng)
    greedy = bandits.run_epsilon_greedy(q_star, 1000, 0.0, rng=rng)
    eps = bandits.run_epsilon_greedy(q_star, 1000, 0.1, rng=rng).final_reward()
    ucb = bandits.run_ucb(q_star, 1000, 2.0, rng=rng).final_reward()
    assert greedy.final_reward() == pytest.approx(1.0, abs=0.1)
    assert greedy.final_optimal() == pytest.approx(1 / 3, abs=0.1)
    assert greedy.final_reward() + 0.2 < eps < ucb < bandits.expected_best_arm()
    # Y las cifras de referencia del curso, con esta semilla.
    assert greedy.final_reward() == pytest.approx(1.04, abs=0.06)
    assert eps == pytest.approx(1.36, abs=0.06)
    assert ucb == pytest.approx(1.49, abs=0.06)


def test_gradient_bandit_baseline_reference():
    # Sutton y Barto (2018, figura 2.5): con q* ~ N(4, 1), la línea base marca
    # mucha diferencia en el porcentaje de acciones óptimas.
    rng = np.random.default_rng(4)
    q_star = bandits.make_testbed(2000, mean=4.0, rng=rng)
    with_b = bandits.run_gradient_bandit(q_star, 1000, 0.1, baseline=True, rng=rng)
    without = bandits.run_gradient_bandit(q_star, 1000, 0.1, baseline=False, rng=rng)
    assert with_b.final_optimal() > without.final_optimal() + 0.2
    assert with_b.final_optimal() == pytest.approx(0.83, abs=0.05)
    assert without.final_optimal() == pytest.approx(0.50, abs=0.06)


def test_expected_best_arm():
    assert bandits.expected_best_arm() == pytest.approx(1.5388, abs=0.005)


def test_nonstationary_without_walk_is_the_stationary_update():
    # Sin paseo, los q* se quedan en 0: todas las acciones son óptimas y lo
    # perdido es 0; con la media muestral, Q es la media de las recompensas.
    sample, constant = bandits.run_nonstationary(
        5, 50, 0.5, walk=0.0, rng=np.random.default_rng(0)
    )
    assert sample.optimal.all() and constant.optimal.all()
    assert not sample.gaps.any()
    assert sample.rewards.shape == constant.rewards.shape == (50, 5)


def test_nonstationary_constant_step_tracks_the_walk():
    # Ejercicio 2.5 de Sutton y Barto: al final, α = 0,1 acierta más que 1/n.
    sample, constant = bandits.run_nonstationary(
        200, 3000, 0.1, alphas=(None, 0.1), rng=np.random.default_rng(1)
    )
    assert constant.final_optimal(500) > sample.final_optimal(500) + 0.1
    assert constant.cumulative_regret()[-1] < sample.cumulative_regret()[-1]


@pytest.mark.parametrize("arm", range(5))
def test_strategy_success_probability_matches_simulation(arm):
    bandit = bandits.StrategyBandit()
    rng = np.random.default_rng(arm)
    hits = np.mean([bandit.pull(arm, rng)[0] for _ in range(20_000)])
    assert hits == pytest.approx(bandit.q_star[arm], abs=0.015)


def test_verifier():
    assert bandits.verify("17 × 20 + 17 × 4 = 340 + 68 = 408") == 1
    assert bandits.verify("340 + 58 = 398") == 0
    assert bandits.verify("") == 0
    assert bandits.verify("no sé") == 0
    assert bandits.final_answer("1 2 3") == 3


def test_the_fork_of_the_seed():
    # Tras «340 +», «68» con 0,82 y «58» con 0,07: 408 → 1 y 398 → 0.
    rng = np.random.default_rng(0)
    texts = [bandits.STRATEGIES["descomponer"][1](rng) for _ in range(40_000)]
    after_340 = [t.split("340 + ")[1].split(" ")[0] for t in texts if "340 + " in t]
    assert np.mean([x == "68" for x in after_340]) == pytest.approx(0.82, abs=0.01)
    assert np.mean([x == "58" for x in after_340]) == pytest.approx(0.07, abs=0.01)
    assert all(bandits.verify(t) == (t.endswith("= 408")) for t in texts)


def test_notebook_solutions_agree_with_the_references():
    nb = read(solution_path("01_bandidos"))
    namespace: dict = {"np": np}
    for exercise in exercises(nb):
        exec(student_version(exercise.solution), namespace)
    rng = np.random.default_rng(7)
    for _ in range(200):
        k = int(rng.integers(2, 8))
        q = rng.normal(size=k)
        counts = rng.integers(0, 5, size=k)
        t = int(counts.sum()) + 1
        h = rng.normal(size=k) * 3
        a, r, b, alpha = int(rng.integers(k)), rng.normal(), rng.normal(), rng.random()
        assert namespace["incremental_mean"](q[0], r, t) == pytest.approx(
            bandits.incremental_mean(q[0], r, t)
        )
        assert namespace["ucb_action"](q, counts, t, 1.3) == bandits.ucb_action(
            q, counts, t, 1.3
        )
        assert np.allclose(namespace["softmax"](h), bandits.softmax(h))
        assert np.allclose(
            namespace["gradient_bandit_update"](h, a, r, b, alpha),
            bandits.gradient_bandit_update(h, a, r, b, alpha),
        )
    q_star = bandits.make_testbed(40, k=6, rng=rng)
    q = np.round(rng.normal(size=(40, 6)))
    counts = rng.integers(0, 4, size=(40, 6))
    for seed, eps in itertools.product(range(3), (0.0, 0.3, 1.0)):
        mine = namespace["testbed_step"](
            q, counts, q_star, eps, np.random.default_rng(seed)
        )
        ref = bandits.testbed_step(q, counts, q_star, eps, np.random.default_rng(seed))
        for got, want in zip(mine, ref, strict=True):
            assert np.allclose(got, want)

    def pull(arm, rng):
        return float(rng.random() < (0.2, 0.7, 0.5)[arm])

    for seed in range(3):
        mine = namespace["gradient_bandit_train"](
            pull, 3, 20, 0.3, np.random.default_rng(seed)
        )
        ref = bandits.gradient_bandit_train(
            pull, 3, 20, 0.3, np.random.default_rng(seed)
        )
        assert mine[1] == ref[1] and np.allclose(mine[0], ref[0])
    for seed, eps in itertools.product(range(5), (0.0, 0.3, 1.0)):
        q = np.array([1.0, 3.0, 3.0, 0.0])
        mine = [namespace["epsilon_greedy"](q, eps, np.random.default_rng(seed))]
        ref = [bandits.epsilon_greedy(q, eps, np.random.default_rng(seed))]
        assert mine == ref
