"""El widget «Q-learning paso a paso» (``helpers.widgets.dqn``)."""

from __future__ import annotations

import warnings

import ipywidgets as widgets
import matplotlib
import numpy as np
import pytest

from helpers.bandits import epsilon_greedy
from helpers.gridworld import GridWorld
from helpers.widgets.dqn import QLearningExplorer

matplotlib.use("Agg")


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    children = getattr(widget, "children", ())
    return [widget] + [w for child in children for w in _walk(child)]


def _find(explorer: QLearningExplorer, cls: type, description: str) -> widgets.Widget:
    found = [
        w
        for w in _walk(explorer.widget)
        if isinstance(w, cls) and getattr(w, "description", None) == description
    ]
    assert len(found) == 1, f"no hay un único {cls.__name__} «{description}»"
    return found[0]


def _html(explorer: QLearningExplorer) -> str:
    return "".join(
        w.value for w in _walk(explorer.widget) if isinstance(w, widgets.HTML)
    )


def _reference_run(seed: int, steps: int, alpha=0.5, gamma=0.9, epsilon=0.2):
    """Q-learning escrito aparte, con la misma secuencia de números al azar."""
    env, rng = GridWorld(), np.random.default_rng(seed)
    q = np.zeros((env.n_states, env.n_actions))
    state, _ = env.reset()
    for _ in range(steps):
        if rng.random() < epsilon:
            action = int(rng.integers(env.n_actions))
        else:
            action = epsilon_greedy(q[state], 0.0, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        target = reward if terminated else reward + gamma * q[next_state].max()
        q[state, action] += alpha * (target - q[state, action])
        state = env.reset()[0] if terminated or truncated else next_state
    return q, state


def test_steps_match_an_independent_q_learning_loop():
    explorer = QLearningExplorer(seed=3)
    for _ in range(250):
        explorer.step()
    q, state = _reference_run(3, 250)
    np.testing.assert_allclose(explorer.q_table, q)
    assert explorer.state == state
    assert explorer.total_steps == 250
    assert sum(explorer.episode_lengths) <= 250


def test_last_transition_describes_the_update():
    explorer = QLearningExplorer(seed=0, alpha=1.0, epsilon=0.0)
    explorer.q_table[explorer.env.start - explorer.env.n_cols] = [0.0, 0.5, 0.0, 0.0]
    before = explorer.q_table.copy()
    t = explorer.step()
    # Objetivo: r + γ · max Q(s') con la tabla de antes del paso; con α = 1,
    # Q(s, a) salta justo al objetivo.
    assert t.target == pytest.approx(t.reward + 0.9 * before[t.next_state].max())
    assert t.q_after == pytest.approx(t.target)
    assert "Objetivo y = r +" in explorer.describe()


def test_episode_ends_reset_the_agent_and_are_recorded():
    explorer = QLearningExplorer(seed=1)
    steps = explorer.run_episode()
    assert explorer.episode == 2
    assert explorer.episode_lengths == [steps]
    assert explorer.state == explorer.env.start
    assert explorer.episode_returns[0] in (-1.0, 0.0, 1.0)


def test_terminal_step_has_no_future():
    explorer = QLearningExplorer(seed=0, epsilon=0.0)
    explorer.q_table[:] = 5.0  # un futuro enorme, que no debe contar
    env = explorer.env
    env.state = explorer.state = 3  # junto a la meta: (0, 3)
    explorer.q_table[3] = [0.0, 1.0, 0.0, 0.0]
    t = explorer.step()
    assert t.terminated and t.target == 1.0
    assert "terminal" in explorer.describe()


def test_reset_and_same_seed_same_run():
    a, b = QLearningExplorer(seed=7), QLearningExplorer(seed=7)
    for _ in range(3):
        a.run_episode()
        b.run_episode()
    np.testing.assert_allclose(a.q_table, b.q_table)
    a.reset()
    assert a.total_steps == 0 and a.episode == 1 and not a.q_table.any()
    assert a.last is None
    c = QLearningExplorer(seed=8)
    for _ in range(3):
        c.run_episode()
    assert not np.allclose(b.q_table, c.q_table)


def test_invalid_parameters_raise_in_spanish():
    with pytest.raises(ValueError, match="ε debe estar"):
        QLearningExplorer(epsilon=1.5)
    with pytest.raises(ValueError, match="α debe estar"):
        QLearningExplorer(alpha=0.0)


def test_figure_has_both_panels_in_spanish():
    explorer = QLearningExplorer(seed=0)
    explorer.run_episode()
    fig = explorer.figure()
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[:2] == ["Tabla Q: un triángulo por acción", "V(s) y política"]


def test_buttons_and_player_drive_the_explorer():
    explorer = QLearningExplorer(seed=2)
    assert isinstance(explorer.widget, widgets.VBox)
    _find(explorer, widgets.Button, "Paso").click()
    assert explorer.total_steps == 1
    assert "Paso 1" in _html(explorer)
    plot = next(w for w in _walk(explorer.widget) if isinstance(w, widgets.Output))
    assert plot.outputs[0]["data"]["image/png"]

    player = _find(explorer, widgets.Play, "Reproducir")
    player.value = 1
    player.value = 2
    assert explorer.total_steps == 3
    player.value = 0  # rebobinar no da pasos
    assert explorer.total_steps == 3

    _find(explorer, widgets.Button, "Episodio entero").click()
    assert explorer.episode == 2
    _find(explorer, widgets.Button, "Reiniciar").click()
    assert explorer.total_steps == 0
    assert "Episodio 1" in _html(explorer)


def test_nothing_goes_to_stderr(capfd):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explorer = QLearningExplorer(seed=4)
        assert explorer.widget is not None
        for _ in range(3):
            _find(explorer, widgets.Button, "Paso").click()
        _find(explorer, widgets.Button, "Episodio entero").click()
        explorer.reset()
    assert capfd.readouterr().err == ""
