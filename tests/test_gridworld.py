"""El mundo de rejilla y Q-learning tabular (``helpers.gridworld``)."""

from __future__ import annotations

from collections import deque

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

from helpers import gridworld
from helpers.bandits import epsilon_greedy
from helpers.gridworld import GridWorld

matplotlib.use("Agg")


def _shortest_distances(env: GridWorld) -> dict[int, int]:
    """Pasos mínimos hasta la meta sin pisar paredes ni trampas (BFS hacia atrás)."""
    distances = {env.goal: 0}
    queue = deque([env.goal])
    while queue:
        s = queue.popleft()
        for prev in range(env.n_states):
            if prev in distances or prev in env.walls or env.is_terminal(prev):
                continue
            if any(env.transition(prev, a)[0] == s for a in range(env.n_actions)):
                distances[prev] = distances[s] + 1
                queue.append(prev)
    return distances


def test_moves_walls_and_borders():
    env = GridWorld()
    start = env.start
    assert env.position(start) == (3, 0)
    assert env.transition(start, 3) == (start, 0.0, False)  # borde: se queda
    assert env.transition(start, 2) == (start, 0.0, False)
    assert env.transition(start, 0)[0] == start - env.n_cols
    right = start + 1
    assert env.transition(right, 1) == (right, 0.0, False)  # pared en (3, 2)


def test_goal_and_trap_terminate_with_their_rewards():
    env = GridWorld()
    below_trap = env.position(next(iter(env.traps)))
    assert below_trap == (1, 4)
    assert env.transition(2 * env.n_cols + 4, 0) == (1 * env.n_cols + 4, -1.0, True)
    assert env.transition(3, 1) == (env.goal, 1.0, True)


def test_time_limit_truncates_but_does_not_terminate():
    env = GridWorld(max_steps=3)
    env.reset()
    outcomes = [env.step(3) for _ in range(3)]
    assert [o[2] for o in outcomes] == [False, False, False]
    assert [o[3] for o in outcomes] == [False, False, True]


def test_episode_reaching_the_goal_is_terminated_not_truncated():
    env = GridWorld(max_steps=7)
    env.reset()
    path = [0, 0, 0, 1, 1, 1, 1]  # arriba ×3, derecha ×4: llega justo en el paso 7
    for action in path:
        state, reward, terminated, truncated, _ = env.step(action)
    assert (state, reward, terminated, truncated) == (env.goal, 1.0, True, False)


def test_invalid_layouts_and_actions():
    with pytest.raises(ValueError, match="mismo largo"):
        GridWorld(("S..", "G."))
    with pytest.raises(ValueError, match="exactamente una"):
        GridWorld(("S..", "..."))
    with pytest.raises(ValueError, match="Símbolos"):
        GridWorld(("S.X", "..M"))
    env = GridWorld()
    env.reset()
    with pytest.raises(ValueError, match="acción"):
        env.step(4)


def test_value_iteration_is_gamma_to_the_distance():
    env = GridWorld()
    gamma = 0.9
    q_star = gridworld.value_iteration(env, gamma)
    for s, d in _shortest_distances(env).items():
        if s == env.goal:
            continue
        assert q_star[s].max() == pytest.approx(gamma ** (d - 1))
    # Junto a la trampa, subir vale −1 y la política voraz rodea.
    beside_trap = 2 * env.n_cols + 4
    assert q_star[beside_trap, 0] == pytest.approx(-1.0)
    assert gridworld.greedy_policy(q_star)[beside_trap] == 3


def test_shortest_distances_and_paths_of_the_course_board():
    env = GridWorld()
    assert gridworld.shortest_distances(env) == _shortest_distances(env)
    paths = gridworld.shortest_paths(env)
    # Tres caminos de 7 pasos: ↑↑↑→→→→, ↑→→→↑↑→ y →↑→→↑↑→ (dos primeros pasos).
    assert sorted(paths) == sorted(
        [(0, 0, 0, 1, 1, 1, 1), (0, 1, 1, 1, 0, 0, 1), (1, 0, 1, 1, 0, 0, 1)]
    )
    for path in paths:
        env.reset()
        for action in path:
            state, reward, terminated, _, _ = env.step(action)
        assert (state, reward, terminated) == (env.goal, 1.0, True)
    # Las primeras acciones de esos caminos son las que empatan en Q*(S, ·).
    q_star = gridworld.value_iteration(env, 0.9)
    best = np.flatnonzero(np.isclose(q_star[env.start], q_star[env.start].max()))
    assert set(best) == {path[0] for path in paths}


def test_shortest_paths_when_the_goal_is_unreachable():
    env = GridWorld(layout=("S#M",))
    assert gridworld.shortest_paths(env) == []
    assert gridworld.shortest_distances(env) == {env.goal: 0}


def test_q_learning_update_by_hand():
    q = np.zeros((3, 2))
    q[1] = [0.5, 2.0]
    out = gridworld.q_learning_update(q, 0, 1, 1.0, 1, False, 0.5, 0.9)
    assert out[0, 1] == pytest.approx(0.5 * (1.0 + 0.9 * 2.0))
    out = gridworld.q_learning_update(q, 2, 0, -1.0, 1, True, 0.5, 0.9)
    assert out[2, 0] == pytest.approx(-0.5)
    assert out[1].tolist() == [0.5, 2.0]


def test_q_learning_episode_leaves_q_star_unchanged_and_follows_it():
    # Q* es un punto fijo de la actualización: con ε = 0 el episodio sigue un
    # camino óptimo (7 pasos hasta la meta) y la tabla no cambia.
    env = GridWorld()
    q_star = gridworld.value_iteration(env, 0.9)
    q, episode_return, length = gridworld.q_learning_episode(
        env, q_star.copy(), 0.5, 0.9, 0.0, np.random.default_rng(0)
    )
    assert (episode_return, length) == (1.0, 7)
    assert np.allclose(q, q_star, atol=1e-12)


def test_q_learning_episode_bootstraps_through_a_time_limit():
    # Truncado a los 2 pasos: el último paso se apoya en Q*(s'), así que con
    # α = 1 la tabla sigue siendo Q*. Si el truncado se tomara como un final,
    # Q(s, a) de ese paso pasaría a valer 0.
    env = GridWorld(max_steps=2)
    q_star = gridworld.value_iteration(env, 0.9)
    q, episode_return, length = gridworld.q_learning_episode(
        env, q_star.copy(), 1.0, 0.9, 0.0, np.random.default_rng(0)
    )
    assert (episode_return, length) == (0.0, 2)
    assert np.allclose(q, q_star, atol=1e-12)


def test_q_learning_episode_draws_only_through_epsilon_greedy():
    # El mismo episodio, escrito paso a paso con la ε-greedy del módulo 01.
    env = GridWorld()
    rng, mirror = np.random.default_rng(3), np.random.default_rng(3)
    q, _, length = gridworld.q_learning_episode(
        env, np.zeros((20, 4)), 0.5, 0.9, 0.3, rng
    )
    expected = np.zeros((20, 4))
    state, _ = env.reset()
    for _ in range(length):
        action = epsilon_greedy(expected[state], 0.3, mirror)
        next_state, reward, terminated, truncated, _ = env.step(action)
        target = reward + (0.0 if terminated else 0.9 * expected[next_state].max())
        expected[state, action] += 0.5 * (target - expected[state, action])
        state = next_state
    assert terminated or truncated
    assert np.array_equal(q, expected)
    assert rng.random() == mirror.random()


def test_q_learning_finds_the_shortest_path():
    env = GridWorld()
    run = gridworld.run_q_learning(env, 400, 0.5, 0.9, 0.2, np.random.default_rng(0))
    assert run.returns.shape == run.lengths.shape == (400,)
    policy = gridworld.greedy_policy(run.q_table)
    env.reset()
    terminated = False
    while not terminated and env.steps < 20:
        state, reward, terminated, _, _ = env.step(int(policy[env.state]))
    assert (state, reward, env.steps) == (env.goal, 1.0, 7)
    q_star = gridworld.value_iteration(env, 0.9)
    assert run.q_table[env.start].max() == pytest.approx(q_star[env.start].max(), 0.05)


def test_plots_have_spanish_titles():
    env = GridWorld()
    q_star = gridworld.value_iteration(env, 0.9)
    fig = Figure()
    ax_q, ax_v = fig.subplots(1, 2)
    gridworld.plot_q_table(env, q_star, ax_q)
    gridworld.plot_values_and_policy(env, q_star, ax_v, agent=env.start)
    assert ax_q.get_title().startswith("Tabla Q")
    assert ax_v.get_title().startswith("V(s)")
    assert ax_v.get_xlabel() == "columna" and ax_v.get_ylabel() == "fila"
