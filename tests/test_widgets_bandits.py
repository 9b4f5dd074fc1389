"""Tests del widget «juega tú al bandido» (``helpers.widgets.bandits``)."""

import warnings

import ipywidgets as widgets
import matplotlib
import numpy as np
import pytest

from helpers.bandits import (
    StrategyBandit,
    epsilon_greedy,
    incremental_mean,
    ucb_action,
    verify,
)
from helpers.widgets.bandits import BanditGame

# Sin pantalla: ninguna figura debe intentar abrir una ventana.
matplotlib.use("Agg")


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    """Todos los widgets del árbol, en orden."""
    children = getattr(widget, "children", ())
    return [widget] + [w for child in children for w in _walk(child)]


def _find(game: BanditGame, cls: type, description: str) -> widgets.Widget:
    """El control de tipo ``cls`` con esa descripción."""
    found = [
        w
        for w in _walk(game.widget)
        if isinstance(w, cls) and getattr(w, "description", None) == description
    ]
    assert len(found) == 1, f"no hay un único {cls.__name__} «{description}»"
    return found[0]


def _reference_agent(rule: str, param: float, seed: list[int], steps: int) -> tuple:
    """Un agente escrito aparte, con las funciones de referencia: (N, aciertos)."""
    bandit, rng = StrategyBandit(), np.random.default_rng(seed)
    counts, q, total = np.zeros(bandit.k, dtype=int), np.zeros(bandit.k), 0
    for t in range(1, steps + 1):
        if rule == "UCB":
            arm = ucb_action(q, counts, t, param)
        else:
            arm = epsilon_greedy(q, param, rng)
        reward, _ = bandit.pull(arm, rng)
        counts[arm] += 1
        q[arm] = incremental_mean(q[arm], reward, counts[arm])
        total += reward
    return counts, total


def test_pull_updates_your_counts_estimates_and_both_agents():
    game = BanditGame(seed=3)
    arms = [0, 1, 1, 2, 0, 0, 4, 1, 3, 0]
    rewards: dict[int, list[int]] = {a: [] for a in range(game.bandit.k)}
    for arm in arms:
        reward, text = game.pull(arm)
        assert reward == verify(text)
        rewards[arm].append(reward)
    assert game.steps == len(arms)
    assert game.player_counts.tolist() == [len(rewards[a]) for a in rewards]
    means = [np.mean(r) if r else 0.0 for r in rewards.values()]
    np.testing.assert_allclose(game.player_estimates, means)
    assert game.scores["tú"] == sum(sum(r) for r in rewards.values())
    assert set(game.scores) == {"tú", "ε-greedy", "UCB"}
    for name in ("ε-greedy", "UCB"):
        assert game.counts[name].sum() == len(arms)


def test_agents_match_an_independent_loop():
    game = BanditGame(seed=5, epsilon=0.2, c=1.0)
    for i in range(30):
        game.pull(i % game.bandit.k)
    for name, param, stream in (("ε-greedy", 0.2, 1), ("UCB", 1.0, 2)):
        counts, total = _reference_agent(name, param, [5, stream], 30)
        assert game.counts[name].tolist() == counts.tolist()
        assert game.scores[name] == total


def test_same_seed_same_game():
    def play(seed: int) -> tuple:
        game = BanditGame(seed=seed)
        for i in range(50):
            game.pull(i % 3)
        return game.scores, {n: c.tolist() for n, c in game.counts.items()}

    assert play(7) == play(7)
    assert play(7) != play(8)


def test_sliders_resimulate_deterministically():
    game = BanditGame(seed=0)
    for i in range(50):
        game.pull(i % 2)
    mine = (game.scores["tú"], game.player_counts.tolist())

    game.set_epsilon(0.0)
    greedy = game.counts["ε-greedy"].tolist(), game.scores["ε-greedy"]
    game.set_epsilon(0.5)
    explorer = game.counts["ε-greedy"].tolist(), game.scores["ε-greedy"]
    assert greedy != explorer
    assert sum(explorer[0]) == 50
    game.set_epsilon(0.0)
    assert (game.counts["ε-greedy"].tolist(), game.scores["ε-greedy"]) == greedy

    game.set_c(0.0)
    low = game.counts["UCB"].tolist()
    game.set_c(3.0)
    assert game.counts["UCB"].tolist() != low
    game.set_c(0.0)
    assert game.counts["UCB"].tolist() == low
    # Mover un deslizador no toca tu partida.
    assert (game.scores["tú"], game.player_counts.tolist()) == mine


def test_replay_equals_playing_step_by_step():
    stepped = BanditGame(seed=2, epsilon=0.3)
    replayed = BanditGame(seed=2, epsilon=0.1)
    for _ in range(20):
        stepped.pull(0)
        replayed.pull(0)
    replayed.set_epsilon(0.3)
    assert replayed.scores == stepped.scores


def test_reset_clears_the_game():
    game = BanditGame(seed=1)
    for arm in range(5):
        game.pull(arm)
    game.reveal()
    game.reset()
    assert game.steps == 0
    assert game.scores == {"tú": 0, "ε-greedy": 0, "UCB": 0}
    assert not game.player_counts.any() and not game.player_estimates.any()
    assert not game.revealed
    assert game.best_expected == 0.0


def test_after_the_horizon_pulls_are_refused():
    game = BanditGame(seed=0, horizon=3)
    assert "quedan 3" in game.verdict()
    for _ in range(3):
        game.pull(0)
    assert game.finished
    scores = game.scores
    reward, message = game.pull(1)
    assert reward == 0 and "terminado" in message
    assert game.steps == 3 and game.scores == scores
    assert any(word in game.verdict() for word in ("Gana", "Empate"))
    assert "explorar" in game.verdict()


def test_invalid_arguments_raise_in_spanish():
    game = BanditGame()
    with pytest.raises(ValueError, match="ε debe estar"):
        game.set_epsilon(1.5)
    with pytest.raises(ValueError, match="c debe ser"):
        game.set_c(-1.0)
    with pytest.raises(ValueError, match="arm debe estar"):
        game.pull(game.bandit.k)


def test_figure_has_spanish_titles_and_labels():
    game = BanditGame(seed=0)
    game.pull(0)
    game.reveal()
    fig = game.figure()
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["Tus estimaciones", "Tiradas por estrategia"]
    assert all(ax.get_xlabel() == "estrategia" for ax in fig.axes)


def test_widget_buttons_and_sliders_drive_the_game():
    game = BanditGame(seed=0, horizon=3)
    assert isinstance(game.widget, widgets.VBox)
    buttons = [_find(game, widgets.Button, n) for n in game.bandit.names]

    buttons[0].click()
    assert game.steps == 1 and game.player_counts[0] == 1
    html = "".join(w.value for w in _walk(game.widget) if isinstance(w, widgets.HTML))
    assert "descomponer" in html and ("✔ 1" in html or "✘ 0" in html)
    plot = next(w for w in _walk(game.widget) if isinstance(w, widgets.Output))
    assert plot.outputs[0]["data"]["image/png"]

    _find(game, widgets.FloatSlider, "ε de ε-greedy").value = 0.4
    _find(game, widgets.FloatSlider, "c de UCB").value = 2.0
    assert (game.epsilon, game.c) == (0.4, 2.0)
    _find(game, widgets.ToggleButton, "Revelar q*").value = True
    assert game.revealed

    buttons[1].click()
    buttons[2].click()
    assert game.finished and all(b.disabled for b in buttons)
    buttons[3].click()  # desactivado en el navegador; aquí, rechazado sin error
    assert game.steps == 3

    _find(game, widgets.Button, "Reiniciar").click()
    assert game.steps == 0 and not any(b.disabled for b in buttons)
    assert _find(game, widgets.ToggleButton, "Revelar q*").value is False


def test_programmatic_changes_reach_the_view():
    game = BanditGame(seed=0)
    slider = _find(game, widgets.FloatSlider, "ε de ε-greedy")
    game.set_epsilon(0.8)
    assert slider.value == 0.8
    game.pull(4)
    assert "Tirada 1 de 50" in "".join(
        w.value for w in _walk(game.widget) if isinstance(w, widgets.HTML)
    )


def test_nothing_goes_to_stderr(capfd):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        game = BanditGame(seed=4, horizon=2)
        assert game.widget is not None
        game.reveal()
        for arm in (0, 1, 2):
            _find(game, widgets.Button, game.bandit.names[arm]).click()
        game.set_c(0.0)
        game.reset()
    assert capfd.readouterr().err == ""
