"""Pruebas del widget del módulo 10 (``helpers.widgets.preferencias``)."""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib
import numpy as np
import pytest

from helpers.formatting import number
from helpers.tinylm.preference_runs import peak, smooth
from helpers.widgets.preferencias import ProxyExplorer

matplotlib.use("Agg")

STEPS = 40


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    children = getattr(widget, "children", ())
    return [widget] + [w for child in children for w in _walk(child)]


def _run(top_step: int, kl_rate: float, truth: bool = False) -> dict:
    """Una ejecución sintética: la utilidad sube hasta ``top_step`` y luego
    baja; el sustituto no deja de subir (salvo en «verdad», que es la utilidad)."""
    steps = np.arange(1, STEPS + 1)
    true = 0.4 + 0.5 * np.exp(-(((steps - top_step) / 10.0) ** 2))
    proxy = true if truth else 0.05 * steps - 0.5
    return {
        "proxy": [float(x) for x in proxy],
        "true": [float(x) for x in true],
        "kl": [float(kl_rate * s) for s in steps],
        "seconds": 12.5,
        "utility": float(true[-1]),
    }


def _seed(shift: int) -> dict:
    return {
        "reward_model": {"test_accuracy": 0.7},
        "grpo": {
            "β = 0": _run(12 + shift, 0.004),
            "β = 0,05": _run(20 + shift, 0.002),
            "verdad": _run(35, 0.003, truth=True),
        },
        "dpo": {},
    }


DATA = {"config": {"steps": STEPS}, "seeds": {"0": _seed(0), "1": _seed(3)}}


def test_select_and_cycle_runs_and_seeds():
    view = ProxyExplorer(DATA)
    assert (view.run, view.seed) == ("β = 0", "0")
    view.next_run()
    assert view.run == "β = 0,05"
    view.next_run()
    view.next_run()  # en círculo: vuelve a la primera
    assert view.run == "β = 0"
    view.select("verdad", 1)
    assert view.seed == "1" and view.selected is DATA["seeds"]["1"]["grpo"]["verdad"]
    view.next_seed()
    assert (view.run, view.seed) == ("verdad", "0")
    with pytest.raises(ValueError, match="β = 1"):
        view.select("β = 1")
    with pytest.raises(ValueError, match="semilla 7"):
        view.select("β = 0", 7)


def test_peak_and_summary_use_the_smoothed_curves():
    view = ProxyExplorer(DATA, run="β = 0,05", seed=1)
    run = DATA["seeds"]["1"]["grpo"]["β = 0,05"]
    top = view.peak()
    assert top == peak(run)
    true = smooth(run["true"])
    assert top["step"] == int(np.argmax(true)) + 1
    text = view.summary()
    assert "β = 0,05, semilla 1" in text
    assert f"paso {top['step']} de {STEPS}" in text
    for key in ("true_peak", "kl_at_peak", "true_final", "proxy_final"):
        assert number(top[key], 3) in text, key
    # El sustituto sigue subiendo después del máximo de la utilidad
    assert top["proxy_final"] > top["proxy_at_peak"]
    truth = ProxyExplorer(DATA, run="verdad").summary()
    assert "el techo" in truth and "recompensa aprendida" not in truth


def test_figure_draws_both_panels_against_the_kl_with_the_peak_marked():
    view = ProxyExplorer(DATA)
    figure = view.figure()
    ax_proxy, ax_true = figure.axes
    # Las demás ejecuciones en gris (en el sustituto, sin «verdad»), la elegida
    # y la vertical del máximo; en la utilidad, también la estrella
    assert len(ax_proxy.lines) == 1 + 1 + 1
    assert len(ax_true.lines) == 2 + 1 + 1 + 1
    mine = view.curves()
    assert np.allclose(ax_proxy.lines[1].get_ydata(), mine["proxy"])
    chosen = ax_true.lines[2]
    assert np.allclose(chosen.get_xdata(), mine["kl"])
    assert np.allclose(chosen.get_ydata(), mine["true"])
    star = ax_true.lines[-1]
    top = view.peak()
    assert star.get_xdata()[0] == top["kl_at_peak"]
    assert star.get_ydata()[0] == top["true_peak"]
    assert "KL" in ax_true.get_xlabel() and "Utilidad verdadera" in ax_true.get_title()
    assert "sustituto" in ax_proxy.get_title()
    view.select("verdad")
    assert "la propia utilidad" in view.figure().axes[0].get_title()


def test_the_view_responds_to_its_buttons_and_dropdowns():
    view = ProxyExplorer(DATA)
    box = view.widget
    buttons = [w for w in _walk(box) if isinstance(w, widgets.Button)]
    run_box, seed_box = [w for w in _walk(box) if isinstance(w, widgets.Dropdown)]
    before = view._info.value
    buttons[0].click()  # el primero que pulsa la prueba del navegador
    assert view.run == "β = 0,05" and run_box.value == "β = 0,05"
    assert view._info.value != before
    buttons[1].click()
    assert view.seed == "1" and seed_box.value == "1"
    run_box.value = "verdad"
    assert view.run == "verdad" and "techo" in view._info.value
    seed_box.value = "0"
    assert (view.run, view.seed) == ("verdad", "0")
    assert view._plot.outputs and "image/png" in view._plot.outputs[0]["data"]
