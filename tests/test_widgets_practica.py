"""Pruebas del widget del módulo 11 (``helpers.widgets.practica``)."""

from __future__ import annotations

import re

import ipywidgets as widgets
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from helpers.practica import runs
from helpers.widgets.practica import (
    DEFAULT_KEYS,
    KEYS,
    LogExplorer,
    key_meanings,
    meaning_of,
)

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def stored():
    return runs.load_runs()


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    children = getattr(widget, "children", ())
    return [widget] + [w for child in children for w in _walk(child)]


def _figure_texts(figure) -> list[str]:
    texts = [t.get_text() for t in figure.findobj(matplotlib.text.Text)]
    for axis in figure.axes:
        texts += [line.get_label() for line in axis.lines]
    return texts


def _widget_texts(explorer: LogExplorer) -> list[str]:
    texts = []
    for w in _walk(explorer.widget):
        for name in ("value", "description", "tooltip"):
            value = getattr(w, name, None)
            if isinstance(value, str):
                texts.append(value)
        texts += [str(o) for o in getattr(w, "options", ())]
    return texts


def test_every_key_has_its_meaning_from_runs():
    meanings = key_meanings()
    for key in KEYS:
        assert meaning_of(key, meanings), key
    assert "verdadera" in meaning_of("rewards/accuracy/mean", meanings)
    assert "1 − mixed_groups" in meaning_of("frac_reward_zero_std", meanings)
    assert "por arriba" in meaning_of("clip_ratio/high_mean", meanings)
    assert "por abajo" in meaning_of("clip_ratio/low_mean", meanings)
    with pytest.raises(KeyError, match="num_tokens"):
        meaning_of("num_tokens", meanings)


def test_template_keys_match_any_function_name():
    table = {"r/<f>/m": "una plantilla"}
    assert meaning_of("r/x/m", table) == "una plantilla"
    with pytest.raises(KeyError):
        meaning_of("r/x/y/m", table)


def test_select_cycle_keys_and_compare(stored):
    explorer = LogExplorer(stored)
    assert explorer.run_id == "A" and explorer.keys == DEFAULT_KEYS
    explorer.next_run()
    assert explorer.run_id == "B"
    explorer.select(explorer.ids[-1])
    explorer.next_run()  # en círculo
    assert explorer.run_id == explorer.ids[0]
    with pytest.raises(ValueError, match="«Z»"):
        explorer.select("Z")
    explorer.set_keys(["kl", "reward"])
    assert explorer.keys == ("reward", "kl")  # en el orden de KEYS
    explorer.toggle_key("loss", True)
    explorer.toggle_key("reward", False)
    assert explorer.keys == ("kl", "loss")
    with pytest.raises(ValueError, match="'step_time'"):
        explorer.set_keys(["step_time"])
    healthy = runs.healthy_run_id()
    assert explorer.healthy_id == healthy
    explorer.set_compare(True)
    explorer.select(next(i for i in explorer.ids if i != healthy))
    assert explorer.overlaid
    explorer.select(healthy)  # la sana no se pone encima de sí misma
    assert not explorer.overlaid and "es la sana" in explorer.summary()
    with pytest.raises(ValueError, match="sana «Q»"):
        LogExplorer(stored, healthy_id="Q")
    with pytest.raises(ValueError, match="ejecuciones"):
        LogExplorer({})


def test_reading_says_the_meaning_and_the_ends_of_each_key(stored):
    explorer = LogExplorer(stored, run_id="C", keys=["kl", "grad_norm"])
    reading = explorer.reading()
    assert [key for key, _, _ in reading] == ["kl", "grad_norm"]
    key, meaning, values = reading[0]
    assert meaning == meaning_of("kl")
    assert values.startswith("Ejecución C: ") and "sana" not in values
    assert "en el paso 1" in values and f"en el {stored['C'].steps[-1]}" in values
    text = explorer.reading_html()
    assert "<code>kl</code>" in text and "``" not in text and "**" not in text
    explorer.set_compare(True)
    assert "la sana: " in explorer.reading()[0][2]
    explorer.set_keys([])
    assert explorer.reading() == [] and "al menos una clave" in explorer.summary()
    with pytest.raises(ValueError, match="al menos una clave"):
        explorer.figure()


def test_the_figure_draws_the_run_and_the_healthy_one_below(stored):
    before = plt.get_fignums()
    healthy = runs.healthy_run_id()
    run_id = next(i for i in sorted(stored) if i != healthy)
    keys = ["reward", "kl", "completions/mean_length", "entropy", "grad_norm"]
    explorer = LogExplorer(stored, run_id=run_id, keys=keys)
    figure = explorer.figure()
    shown = [ax for ax in figure.axes if ax.get_visible()]
    assert len(shown) == len(keys)
    for axis, key in zip(shown, explorer.keys, strict=True):
        assert len(axis.lines) == 1
        assert np.allclose(axis.lines[0].get_ydata(), stored[run_id].logs[key])
        assert axis.get_title() == runs.TITLES.get(key, key)
    explorer.set_compare(True)
    figure = explorer.figure()
    for axis, key in zip(figure.axes, explorer.keys, strict=False):
        grey, mine = axis.lines
        assert np.allclose(grey.get_ydata(), stored[healthy].logs[key], equal_nan=True)
        assert np.allclose(mine.get_ydata(), stored[run_id].logs[key])
        assert grey.get_linestyle() == "--"
    assert f"sana (ejecución {healthy})" in _figure_texts(figure)
    assert plt.get_fignums() == before  # sin pyplot: nada queda abierto


def test_nothing_shown_names_a_failure_or_the_repaired_twin(stored):
    descriptions = list(runs.FAILURES.values())
    names = [re.compile(rf"\b{re.escape(f)}\b") for f in runs.BROKEN]
    twin = re.compile(r"arreglad|gemela|\brota\b", re.IGNORECASE)

    def assert_clean(texts: list[str]) -> None:
        for text in texts:
            assert not any(d in text for d in descriptions), text
            assert not any(n.search(text) for n in names), text
            assert not twin.search(text), text

    # El texto, con todas las claves; las figuras, con unas pocas (cada dibujo
    # cuesta, y los títulos y leyendas no dependen de la clave)
    reader = LogExplorer(stored, keys=KEYS)
    explorer = LogExplorer(stored, keys=["reward", "rewards/accuracy/mean", "kl"])
    healthy = stored[explorer.healthy_id]
    for compare in (False, True):
        reader.set_compare(compare)
        explorer.set_compare(compare)
        for run_id in explorer.ids:
            reader.select(run_id)
            explorer.select(run_id)
            figure = explorer.figure()
            assert_clean([reader.summary(), reader.reading_html()])
            assert_clean(_figure_texts(figure))
            if not explorer.overlaid and run_id != explorer.healthy_id:
                assert not any("sana" in t for t in _figure_texts(figure))
            repaired = stored[run_id].repaired
            if repaired is None:
                continue
            for axis, key in zip(figure.axes, explorer.keys, strict=True):
                mine = stored[run_id].logs[key]
                assert np.allclose(axis.lines[-1].get_ydata(), mine)
                if np.allclose(mine, repaired[key]):
                    continue  # la clave no cambia con el arreglo
                for line in axis.lines:
                    if np.allclose(line.get_ydata(), repaired[key]):
                        # Solo si es la sana encima, igual a la gemela
                        assert explorer.overlaid and line is axis.lines[0]
                        assert np.allclose(line.get_ydata(), healthy.logs[key])
    assert_clean(_widget_texts(explorer))  # la vista entera, una vez


def test_the_view_responds_to_its_button_and_boxes(stored):
    explorer = LogExplorer(stored)
    box = explorer.widget
    buttons = [w for w in _walk(box) if isinstance(w, widgets.Button)]
    (run_box,) = [w for w in _walk(box) if isinstance(w, widgets.Dropdown)]
    checks = {w.description: w for w in _walk(box) if isinstance(w, widgets.Checkbox)}
    before = (explorer._info.value, explorer._plot.outputs)
    buttons[0].click()  # el primero que pulsa la prueba del navegador
    assert explorer.run_id == "B" and run_box.value == "B"
    assert (explorer._info.value, explorer._plot.outputs) != before
    run_box.value = "E"
    assert explorer.run_id == "E" and "Ejecución E" in explorer._info.value
    reading = explorer._reading.value
    checks["kl"].value = True
    assert "kl" in explorer.keys and explorer._reading.value != reading
    assert "<code>kl</code>" in explorer._reading.value
    compare = next(c for d, c in checks.items() if "sana" in d)
    compare.value = True
    assert explorer.compare and "encima" in explorer._info.value
    explorer.set_keys([])  # la lógica mueve las casillas
    assert not any(checks[k].value for k in KEYS)
    assert explorer._plot.outputs == () and "al menos" in explorer._info.value
    checks["loss"].value = True
    assert explorer.keys == ("loss",)
    assert "image/png" in explorer._plot.outputs[0]["data"]
