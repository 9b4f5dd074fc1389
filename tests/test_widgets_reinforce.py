"""Tests del widget «un paso de REINFORCE a mano» (``helpers.widgets.reinforce``)."""

import warnings

import ipywidgets as widgets
import matplotlib
import numpy as np
import pytest

from helpers.bandits import gradient_bandit_update, softmax, verify
from helpers.widgets.reinforce import ARMS, ReinforceStepper

# Sin pantalla: ninguna figura debe intentar abrir una ventana.
matplotlib.use("Agg")


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    children = getattr(widget, "children", ())
    return [widget] + [w for child in children for w in _walk(child)]


def _find(stepper: ReinforceStepper, cls: type, description: str) -> widgets.Widget:
    found = [
        w
        for w in _walk(stepper.widget)
        if isinstance(w, cls) and getattr(w, "description", None) == description
    ]
    assert len(found) == 1, f"no hay un único {cls.__name__} «{description}»"
    return found[0]


def _html(stepper: ReinforceStepper) -> str:
    return "".join(
        w.value for w in _walk(stepper.widget) if isinstance(w, widgets.HTML)
    )


def test_one_update_is_the_gradient_bandit_update():
    stepper = ReinforceStepper(seed=2, learning_rate=0.7)
    for _ in range(6):
        theta = stepper.theta.copy()
        sample = stepper.sample()
        assert sample.reward == verify(sample.text)
        np.testing.assert_allclose(sample.probabilities, softmax(theta))
        stepper.apply()
        expected = gradient_bandit_update(theta, sample.action, sample.reward, 0.0, 0.7)
        np.testing.assert_allclose(stepper.theta, expected)


def test_baseline_is_the_mean_of_previous_rewards():
    stepper = ReinforceStepper(seed=5, learning_rate=0.3, baseline=True)
    rewards = []
    for _ in range(8):
        theta = stepper.theta.copy()
        sample = stepper.sample()
        # R̄₁ = R₁: en la primera tirada la línea base es la propia recompensa.
        b = float(np.mean(rewards)) if rewards else sample.reward
        assert sample.baseline == pytest.approx(b)
        stepper.apply()
        expected = gradient_bandit_update(theta, sample.action, sample.reward, b, 0.3)
        np.testing.assert_allclose(stepper.theta, expected)
        rewards.append(sample.reward)
    assert stepper.mean_reward == pytest.approx(np.mean(rewards))


@pytest.mark.parametrize("seed", range(6))
def test_first_step_with_baseline_uses_its_own_reward(seed):
    # Como el algoritmo del cuaderno (``b = rewards if t == 0``) y el bandido de
    # gradiente del módulo 01: R̄₁ = R₁, así que la primera actualización no
    # mueve θ, salga R = 0 o R = 1.
    stepper = ReinforceStepper(seed=seed, baseline=True)
    sample = stepper.sample()
    assert sample.baseline == sample.reward
    assert "primera tirada" in stepper.explanation()
    np.testing.assert_allclose(stepper.gradient(), np.zeros(3))
    stepper.apply()
    np.testing.assert_allclose(stepper.theta, np.zeros(3))
    # La segunda ya resta la media de las anteriores (aquí, la primera R).
    assert stepper.sample().baseline == sample.reward


def test_switching_the_baseline_on_before_the_first_update():
    stepper = ReinforceStepper(seed=0)
    sample = stepper.sample()
    assert sample.baseline == 0.0
    stepper.set_baseline(True)
    assert stepper.pending.baseline == sample.reward
    assert "b = " in _html(stepper)
    stepper.set_baseline(False)
    assert stepper.pending.baseline == 0.0


def test_zero_weight_moves_nothing():
    stepper = ReinforceStepper(seed=0)
    while True:
        sample = stepper.sample()
        if sample.reward == 0:
            break
        stepper.apply()
    before = stepper.theta.copy()
    assert "nada se moverá" in stepper.explanation()
    stepper.apply()
    np.testing.assert_allclose(stepper.theta, before)


def test_same_seed_same_run_and_step_equals_sample_apply():
    a, b = ReinforceStepper(seed=9), ReinforceStepper(seed=9)
    a.step(15)
    for _ in range(15):
        b.sample()
        b.apply()
    np.testing.assert_allclose(a.theta, b.theta)
    assert a.rewards == b.rewards
    assert len(a.history) == 16
    c = ReinforceStepper(seed=10)
    c.step(15)
    assert not np.allclose(a.theta, c.theta)


def test_learning_converges_to_the_best_strategy():
    stepper = ReinforceStepper(seed=1, learning_rate=0.5, baseline=True)
    stepper.step(400)
    assert stepper.names[int(np.argmax(stepper.probabilities))] == "descomponer"
    assert stepper.names == ["descomponer", "estimar", "adivinar"]
    assert len(ARMS) == 3


def test_reset_and_invalid_arguments():
    stepper = ReinforceStepper(seed=3)
    stepper.step(5)
    stepper.reset()
    np.testing.assert_allclose(stepper.probabilities, [1 / 3] * 3)
    assert stepper.pending is None and stepper.previous is None
    assert stepper.rewards == [] and len(stepper.history) == 1
    with pytest.raises(ValueError, match="Primero muestrea"):
        stepper.apply()
    with pytest.raises(ValueError, match="α debe ser positivo"):
        stepper.set_learning_rate(0.0)


def test_figure_has_spanish_titles_and_labels():
    stepper = ReinforceStepper(seed=0)
    stepper.step(3)
    stepper.sample()
    fig = stepper.figure()
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["La política π(a)", "π a lo largo de las actualizaciones"]
    assert fig.axes[1].get_xlabel() == "actualización"


def test_widget_buttons_and_controls_drive_the_logic():
    stepper = ReinforceStepper(seed=4)
    assert isinstance(stepper.widget, widgets.VBox)
    sample_button = _find(stepper, widgets.Button, "1 · Muestrear")
    apply_button = _find(stepper, widgets.Button, "2 · Actualizar θ")
    assert apply_button.disabled

    sample_button.click()
    assert stepper.pending is not None and not apply_button.disabled
    assert "Muestreaste" in _html(stepper) and "one_hot(a) − π" in _html(stepper)
    plot = next(w for w in _walk(stepper.widget) if isinstance(w, widgets.Output))
    assert plot.outputs[0]["data"]["image/png"]

    apply_button.click()
    assert stepper.pending is None and len(stepper.rewards) == 1
    assert apply_button.disabled and "Actualizado" in _html(stepper)

    _find(stepper, widgets.Button, "Paso completo").click()
    _find(stepper, widgets.Button, "10 pasos").click()
    assert len(stepper.rewards) == 12

    _find(stepper, widgets.FloatSlider, "tasa de aprendizaje α").value = 2.0
    assert stepper.learning_rate == 2.0
    _find(stepper, widgets.Checkbox, "línea base b = media de R").value = True
    assert stepper.baseline

    _find(stepper, widgets.Button, "Reiniciar").click()
    assert stepper.rewards == [] and "uniforme" in _html(stepper)


def test_programmatic_changes_reach_the_view():
    stepper = ReinforceStepper(seed=0)
    slider = _find(stepper, widgets.FloatSlider, "tasa de aprendizaje α")
    stepper.set_learning_rate(1.25)
    assert slider.value == 1.25
    stepper.set_baseline(True)
    assert _find(stepper, widgets.Checkbox, "línea base b = media de R").value


def test_nothing_goes_to_stderr(capfd):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stepper = ReinforceStepper(seed=6)
        assert stepper.widget is not None
        stepper.sample()
        stepper.set_baseline(True)
        stepper.apply()
        stepper.step(3)
        stepper.reset()
    assert capfd.readouterr().err == ""
