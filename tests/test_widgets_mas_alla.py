"""Pruebas del widget del módulo 08 (``helpers.widgets.mas_alla``)."""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib
import pytest

from helpers.formatting import percent
from helpers.widgets.mas_alla import MethodCurves, final_accuracies

matplotlib.use("Agg")


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    children = getattr(widget, "children", ())
    return [widget] + [w for child in children for w in _walk(child)]


def _run(start: float, end: float, entropy_end: float) -> dict:
    return {
        "samples": [0, 1024, 2048],
        "train_seconds": [0.0, 3.5, 7.25],
        "heldout_accuracy": [start, (start + end) / 2, end],
        "entropy": [0.08, 0.06, entropy_end],
    }


CURVES = {
    "config": {"command": "python -m helpers.tinylm.compare --write"},
    "curves": {
        "grpo": {"0": _run(0.5, 0.7, 0.03), "1": _run(0.5, 0.72, 0.031)},
        "rloo": {"0": _run(0.5, 0.69, 0.035)},
        "ppo": {"0": _run(0.5, 0.6, 0.05), "3": _run(0.5, 0.62, 0.05)},
    },
}


def test_select_changes_method_and_seed_and_rejects_unknown_methods():
    view = MethodCurves(CURVES)
    assert (view.method, view.seed) == ("grpo", "0")
    view.select("ppo", 3)
    assert view.selected["heldout_accuracy"][-1] == 0.62
    assert len(view.others()) == 4
    view.select("rloo", "7")  # una semilla que ese método no tiene: la primera
    assert view.seed == "0"
    with pytest.raises(ValueError):
        view.select("dqn")


def test_summary_speaks_spanish_numbers():
    view = MethodCurves(CURVES, method="grpo", seed=1)
    text = view.summary()
    assert "GRPO con ÷σ, semilla 1" in text
    assert percent(0.72) in text and "7,2 s" in text and "0,031" in text


def test_view_follows_the_dropdowns_and_draws_two_panels():
    view = MethodCurves(CURVES)
    boxes = [w for w in _walk(view.widget) if isinstance(w, widgets.Dropdown)]
    method_box, seed_box = boxes
    method_box.value = "ppo"
    assert view.method == "ppo" and list(seed_box.options) == ["0", "3"]
    seed_box.value = "3"
    assert view.seed == "3"
    button = next(w for w in _walk(view.widget) if isinstance(w, widgets.Button))
    button.click()  # siguiente semilla: vuelve a la primera
    assert view.seed == "0" and seed_box.value == "0"
    button.click()
    html = "".join(w.value for w in _walk(view.widget) if isinstance(w, widgets.HTML))
    assert "PPO con crítico, semilla 3" in html
    figure = view.figure()
    assert len(figure.axes) == 2
    # Las demás ejecuciones en gris y la elegida encima: 4 + 1 líneas por panel
    assert all(len(ax.lines) == 5 for ax in figure.axes)


def test_final_accuracies_by_method():
    finals = final_accuracies(CURVES)
    assert list(finals["grpo"]) == [0.7, 0.72]
    assert list(finals["ppo"]) == [0.6, 0.62]
