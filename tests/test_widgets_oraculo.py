"""Tests del widget de los umbrales (``helpers.widgets.oraculo``)."""

import math

import ipywidgets as widgets
import matplotlib

from helpers.widgets.oraculo import ThresholdExplorer

# Sin pantalla: ninguna figura debe intentar abrir una ventana.
matplotlib.use("Agg")

LOG_PROBS = [math.log(p) for p in (0.5, 0.3, 0.15, 0.04, 0.009, 0.0009)]
TEXTS = ["a", "b", "c", "d", "e", "f"]


def test_each_threshold_keeps_the_answers_above_it():
    explorer = ThresholdExplorer(LOG_PROBS[::-1], TEXTS[::-1], 1e-4)
    assert explorer.texts[0] == "a"  # de la más probable a la menos
    assert explorer.exponent == -2
    assert len(explorer.kept()) == 4
    explorer.change(1)
    assert len(explorer.kept()) == 3
    assert abs(explorer.covered_mass() - 0.95) < 1e-12
    explorer.change(-5)  # no baja del umbral de la enumeración
    assert explorer.exponent == -4 and len(explorer.kept()) == 6
    assert "sin cubrir" in explorer.summary()


def test_the_view_changes_with_a_click():
    explorer = ThresholdExplorer(LOG_PROBS, TEXTS, 1e-4)
    view = explorer.widget
    assert isinstance(view, widgets.VBox)
    before = explorer._info.value
    view.children[0].children[0].click()  # umbral × 10
    assert explorer._info.value != before
    assert explorer._plot.outputs
