"""Tests del widget de GAE con deslizadores (``helpers.widgets.actor_critic``)."""

import ipywidgets as widgets
import matplotlib
import numpy as np
import pytest

from helpers import actor_critic
from helpers.widgets.actor_critic import REWARDS, VALUES, GaeExplorer

# Sin pantalla: ninguna figura debe intentar abrir una ventana.
matplotlib.use("Agg")


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    children = getattr(widget, "children", ())
    return [widget] + [w for child in children for w in _walk(child)]


def _slider(explorer: GaeExplorer, description: str) -> widgets.Widget:
    found = [
        w
        for w in _walk(explorer.widget)
        if getattr(w, "description", None) == description
    ]
    assert len(found) == 1, description
    return found[0]


@pytest.mark.parametrize(("gamma", "lam"), [(0.9, 0.8), (1.0, 1.0), (0.5, 0.0)])
def test_advantages_are_the_reference_gae(gamma, lam):
    explorer = GaeExplorer(gamma=gamma, lam=lam)
    terminated = np.zeros(len(REWARDS))
    terminated[-1] = 1
    expected = actor_critic.gae(
        REWARDS, VALUES[:-1], VALUES[1:], terminated, np.zeros(10), gamma, lam
    )
    np.testing.assert_allclose(explorer.advantages(), expected.numpy(), atol=1e-6)
    deltas = actor_critic.td_errors(REWARDS, VALUES[:-1], VALUES[1:], terminated, gamma)
    np.testing.assert_allclose(explorer.td_errors(), deltas.numpy(), atol=1e-6)


@pytest.mark.parametrize(("gamma", "lam"), [(0.9, 0.8), (0.99, 0.95), (0.3, 0.0)])
def test_weights_average_the_k_step_estimates_into_gae(gamma, lam):
    explorer = GaeExplorer(gamma=gamma, lam=lam)
    for t in range(explorer.horizon):
        weights = explorer.k_step_weights(t)
        assert weights.sum() == pytest.approx(1.0)
        assert len(weights) == explorer.horizon - t
        k_adv = explorer.k_step_advantages(t)
        assert weights @ k_adv == pytest.approx(explorer.advantages()[t], abs=1e-5)


def test_k_step_estimates_are_n_step_returns_minus_v():
    explorer = GaeExplorer(gamma=0.8)
    terminated = np.zeros((10, 1))
    terminated[-1] = 1
    for k in range(1, 11):
        returns = actor_critic.n_step_returns(
            REWARDS[:, None], VALUES[1:, None], terminated, np.zeros((10, 1)), k, 0.8
        )
        assert explorer.k_step_advantages(0)[k - 1] == pytest.approx(
            float(returns[0, 0]) - VALUES[0], abs=1e-5
        )


def test_extremes_of_lambda():
    explorer = GaeExplorer(gamma=0.9, lam=0.0, step=3)
    np.testing.assert_allclose(explorer.k_step_weights(), [1] + [0] * 6)
    np.testing.assert_allclose(explorer.advantages(), explorer.td_errors(), atol=1e-6)
    explorer.set_lam(1.0)
    np.testing.assert_allclose(explorer.k_step_weights(), [0] * 6 + [1])
    assert explorer.effective_horizon() == pytest.approx(10.0)
    explorer.set_gamma(1.0)
    assert explorer.effective_horizon() == float("inf")
    assert "todo el episodio" in explorer.explanation()


def test_invalid_values_are_rejected():
    explorer = GaeExplorer()
    with pytest.raises(ValueError):
        explorer.set_gamma(1.5)
    with pytest.raises(ValueError):
        explorer.set_lam(-0.1)
    with pytest.raises(ValueError):
        explorer.set_step(10)
    with pytest.raises(ValueError):
        GaeExplorer(rewards=np.ones(3), values=np.ones(3))


def test_sliders_drive_the_logic_and_redraw():
    explorer = GaeExplorer()
    _slider(explorer, "γ (descuento)").value = 0.5
    _slider(explorer, "λ (GAE)").value = 0.25
    _slider(explorer, "paso t").value = 4
    assert (explorer.gamma, explorer.lam, explorer.step) == (0.5, 0.25, 4)
    info = "".join(
        w.value for w in _walk(explorer.widget) if isinstance(w, widgets.HTML)
    )
    assert "γ = 0,50" in info and "λ = 0,25" in info and "Â_4" in info
    plot = next(w for w in _walk(explorer.widget) if isinstance(w, widgets.Output))
    assert plot.outputs[0]["data"]["image/png"]
    explorer.set_lam(0.9)
    assert _slider(explorer, "λ (GAE)").value == 0.9


def test_last_step_has_a_single_estimate():
    explorer = GaeExplorer(step=9)
    np.testing.assert_allclose(explorer.k_step_weights(), [1.0])
    assert "solo hay una estimación" in explorer.explanation()
