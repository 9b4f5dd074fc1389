"""Tests del widget «mueve la línea base» (``helpers.widgets.baselines``)."""

import warnings

import ipywidgets as widgets
import matplotlib
import numpy as np
import pytest

from helpers import baselines
from helpers.widgets.baselines import COMPONENT, BaselineExplorer

# Sin pantalla: ninguna figura debe intentar abrir una ventana.
matplotlib.use("Agg")


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    children = getattr(widget, "children", ())
    return [widget] + [w for child in children for w in _walk(child)]


def _find(explorer: BaselineExplorer, cls: type, description: str) -> widgets.Widget:
    found = [
        w
        for w in _walk(explorer.widget)
        if isinstance(w, cls) and getattr(w, "description", None) == description
    ]
    assert len(found) == 1, f"no hay un único {cls.__name__} «{description}»"
    return found[0]


def test_estimates_are_the_score_function_component():
    explorer = BaselineExplorer(seed=1, n_samples=50, baseline=300.0, offset=-100.0)
    full = baselines.score_gradients(
        explorer.theta, explorer.actions, explorer.rewards, 300.0
    )
    np.testing.assert_allclose(explorer.estimates(), full[:, COMPONENT])
    assert explorer.variance() == pytest.approx(np.var(full[:, COMPONENT]))
    np.testing.assert_allclose(
        explorer.rewards,
        baselines.PEDESTAL_MEANS[explorer.actions] - 100.0 + explorer.noise,
    )


def test_exact_gradient_ignores_b_and_follows_the_offset():
    explorer = BaselineExplorer(seed=0)
    exact = explorer.exact
    explorer.set_baseline(700.0)
    assert explorer.exact == pytest.approx(exact)
    # Con π uniforme, sumar c a todos los retornos no cambia ∇J (E[∇log π] = 0).
    explorer.set_offset(400.0)
    assert explorer.exact == pytest.approx(exact)
    assert exact == pytest.approx(
        baselines.exact_bandit_gradient(np.zeros(3), baselines.PEDESTAL_MEANS)[2]
    )


def test_baseline_near_the_pedestal_cuts_the_variance():
    explorer = BaselineExplorer(seed=2, n_samples=400)
    assert explorer.variance(0.0) / explorer.variance(500.0) > 10
    best = explorer.best_baseline()
    grid = np.linspace(0, 1000, 2001)
    assert grid[np.argmin([explorer.variance(b) for b in grid])] == pytest.approx(
        best, abs=0.5
    )
    explorer.set_offset(-500.0)
    assert explorer.best_baseline() == pytest.approx(best - 500.0)


def test_controls_are_clipped_and_validated():
    explorer = BaselineExplorer(seed=0)
    explorer.set_baseline(5000.0)
    assert explorer.baseline == 1000.0
    explorer.set_offset(-900.0)
    assert explorer.offset == -500.0
    with pytest.raises(ValueError, match="al menos 2 muestras"):
        BaselineExplorer(n_samples=1)


def test_same_seed_same_samples():
    a, b, c = BaselineExplorer(seed=4), BaselineExplorer(seed=4), BaselineExplorer(5)
    np.testing.assert_allclose(a.estimates(), b.estimates())
    assert not np.allclose(a.estimates(), c.estimates())


def test_summary_and_figure_are_in_spanish():
    explorer = BaselineExplorer(seed=0, baseline=500.0)
    text = explorer.summary()
    assert "b = 500" in text and "veces menos que con b = 0" in text
    fig = explorer.figure()
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["Estimaciones por muestra de ∂J/∂θ₂", "Varianza según b"]
    assert fig.axes[1].get_xlabel() == "línea base b"


def test_widget_controls_drive_the_logic():
    explorer = BaselineExplorer(seed=3)
    assert isinstance(explorer.widget, widgets.VBox)
    slider_b = _find(explorer, widgets.FloatSlider, "línea base b")
    slider_c = _find(explorer, widgets.FloatSlider, "desplazamiento c de los retornos")
    slider_b.value = 480.0
    assert explorer.baseline == 480.0
    slider_c.value = -200.0
    assert explorer.offset == -200.0
    html = "".join(
        w.value for w in _walk(explorer.widget) if isinstance(w, widgets.HTML)
    )
    assert "b = 480" in html
    plot = next(w for w in _walk(explorer.widget) if isinstance(w, widgets.Output))
    assert plot.outputs[0]["data"]["image/png"]
    _find(explorer, widgets.Button, "b que minimiza la varianza").click()
    assert explorer.baseline == pytest.approx(explorer.best_baseline())
    assert slider_b.value == pytest.approx(explorer.baseline)
    explorer.set_offset(100.0)
    assert slider_c.value == 100.0


def test_nothing_goes_to_stderr(capfd):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explorer = BaselineExplorer(seed=6)
        assert explorer.widget is not None
        explorer.set_baseline(250.0)
        explorer.set_offset(-300.0)
        explorer.figure()
    assert capfd.readouterr().err == ""
