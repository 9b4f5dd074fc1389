"""Pruebas de los widgets del módulo 07 (``helpers.widgets.grpo``)."""

from __future__ import annotations

import math
import warnings

import ipywidgets as widgets
import matplotlib
import numpy as np
import pytest
import torch

from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.sampling import path_probs
from helpers.widgets.grpo import AdvantageTable, ContinuationTree

matplotlib.use("Agg")


def _walk(widget: widgets.Widget) -> list[widgets.Widget]:
    children = getattr(widget, "children", ())
    return [widget] + [w for child in children for w in _walk(child)]


def _html(view) -> str:
    return "".join(w.value for w in _walk(view.widget) if isinstance(w, widgets.HTML))


@pytest.fixture(scope="module")
def model():
    return load_pretrained()


# --- el árbol de continuaciones ---------------------------------------------


def test_path_probability_is_the_product_of_the_model_steps(model):
    tree = ContinuationTree(model)
    text = "17×20+17×4=340+68=408."
    probability = tree.follow(text)
    steps = path_probs(model, "17×24=", text)
    assert probability == pytest.approx(math.prod(p for _, p in steps), rel=1e-5)
    assert tree.finished and tree.reward == 1
    assert tree.options() == []
    with pytest.raises(ValueError):
        tree.extend("1")


def test_wrong_branch_gets_reward_zero_and_back_undoes(model):
    tree = ContinuationTree(model)
    tree.follow("17×20+17×4=340+")
    options = dict(tree.options())
    assert max(options, key=options.get) == "6"  # el modelo prefiere «68»
    assert "5" in options  # y el despiste «58» se puede elegir con un clic
    before = tree.probability
    tree.extend("5")
    assert tree.probability < before * 0.05
    tree.back()
    assert tree.probability == pytest.approx(before)
    tree.follow("58=398.")
    assert tree.reward == 0
    tree.reset()
    assert tree.path == [] and tree.probability == 1.0


def test_greedy_completion_reaches_the_end(model):
    tree = ContinuationTree(model)
    tree.greedy()
    assert tree.finished
    assert tree.text == "17×20+17×4=340+68=408."


def test_clicking_an_option_button_extends_the_path(model):
    tree = ContinuationTree(model, top_k=3)
    view = tree.widget
    buttons = [
        w
        for w in _walk(view)
        if isinstance(w, widgets.Button) and w.description.startswith("«")
    ]
    assert len(buttons) == 3
    buttons[0].click()
    assert tree.text == "1"
    assert "P(«1»" in _html(tree)
    undo = next(
        w
        for w in _walk(view)
        if isinstance(w, widgets.Button) and w.description == "Deshacer"
    )
    undo.click()
    assert tree.text == ""


def test_unknown_character_is_rejected(model):
    tree = ContinuationTree(model)
    with pytest.raises(ValueError):
        tree.extend("x")


# --- la tabla de ventajas ---------------------------------------------------


def test_seed_table_and_toggles():
    table = AdvantageTable()
    assert table.rewards == [0, 1, 1, 0]
    np.testing.assert_allclose(table.advantages(), [-0.5, 0.5, 0.5, -0.5])
    table.toggle(0)  # A pasa a correcta: tres aciertos y un fallo
    np.testing.assert_allclose(table.advantages(), [0.25, 0.25, 0.25, -0.75])
    assert "−0,75" in table.explanation()
    table.set_rewards([1, 1, 1, 1])
    np.testing.assert_allclose(table.advantages(), 0.0)
    assert "no enseña nada" in table.explanation()


def test_std_normalization_matches_the_reference():
    from helpers.tinylm.grpo import group_advantages

    table = AdvantageTable(std_normalize=True)
    table.set_rewards([1, 1, 0, 1])
    expected = group_advantages(torch.tensor([[1.0, 1.0, 0.0, 1.0]]), True)[0]
    np.testing.assert_allclose(table.advantages(), expected.numpy(), atol=1e-6)
    table.set_rewards([0, 0, 0, 0])
    assert np.isfinite(table.advantages()).all()


def test_toggle_buttons_drive_the_logic():
    table = AdvantageTable()
    toggles = [w for w in _walk(table.widget) if isinstance(w, widgets.ToggleButton)]
    assert [t.value for t in toggles] == [False, True, True, False]
    toggles[3].value = True
    assert table.rewards == [0, 1, 1, 1]
    assert "0,25" in _html(table)
    box = next(w for w in _walk(table.widget) if isinstance(w, widgets.Checkbox))
    box.value = True
    assert table.std_normalize


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError):
        AdvantageTable(rewards=(0, 1))
    with pytest.raises(ValueError):
        AdvantageTable().set_rewards([0, 2, 1, 0])


def test_views_do_not_warn(model):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = AdvantageTable()
        assert table.widget is not None
        table.toggle(1)
        tree = ContinuationTree(model)
        assert tree.widget is not None
        tree.extend("1")
