"""Tests del widget de ``L^CLIP`` (``helpers.widgets.ppo``)."""

import matplotlib
import numpy as np
import pytest

from helpers.widgets.ppo import ClipExplorer

matplotlib.use("Agg")


@pytest.mark.parametrize(
    ("advantage", "r", "gradient"),
    [
        (1.5, 1.1, 1.5),  # A > 0, dentro
        (1.5, 1.5, 0.0),  # A > 0, por encima: recortado
        (1.5, 0.5, 1.5),  # A > 0, por debajo: se corrige
        (-0.5, 1.1, -0.5),  # A < 0, dentro
        (-0.5, 0.5, 0.0),  # A < 0, por debajo: recortado
        (-0.5, 1.5, -0.5),  # A < 0, por encima: se corrige
    ],
)
def test_gradient_in_the_four_cases(advantage, r, gradient):
    explorer = ClipExplorer(clip_eps=0.2, advantage=advantage)
    assert explorer.gradient(r)[0] == pytest.approx(gradient)


def test_objective_is_the_pessimistic_bound():
    explorer = ClipExplorer(clip_eps=0.3, advantage=-2.0)
    r = np.linspace(0.0, 2.0, 81)
    values = explorer.objective(r)
    clipped = np.clip(r, 0.7, 1.3) * -2.0
    np.testing.assert_allclose(values, np.minimum(r * -2.0, clipped))
    assert np.all(values <= r * -2.0 + 1e-12)


def test_regions_and_explanations():
    explorer = ClipExplorer(clip_eps=0.2, advantage=1.0)
    assert "recortada" in explorer.region(1.4)
    assert "dentro" in explorer.region(1.0)
    assert "sin recortar" in explorer.region(0.5)
    assert "1,20" in explorer.explanation()
    explorer.set_advantage(-1.0)
    assert "recortada" in explorer.region(0.5)
    assert "< 0" in explorer.explanation()
    explorer.set_advantage(0.0)
    assert "A = 0" in explorer.region(1.0)
    assert not explorer.gradient(np.array([0.5, 1.0, 1.5])).any()
    with pytest.raises(ValueError):
        explorer.set_clip_eps(0.0)


def test_the_view_follows_the_sliders():
    explorer = ClipExplorer()
    widget = explorer.widget
    assert widget is not None
    assert len(explorer._plot.outputs) == 1
    explorer._adv_slider.value = -1.0
    assert explorer.advantage == -1.0 and "peor" in explorer._info.value
    explorer._eps_slider.value = 0.1
    assert explorer.clip_eps == pytest.approx(0.1)
    assert explorer.bounds == pytest.approx((0.9, 1.1))
    explorer.set_clip_eps(0.3)
    assert explorer._eps_slider.value == pytest.approx(0.3)
    fig = explorer.figure()
    assert len(fig.axes) == 2
