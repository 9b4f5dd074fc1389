"""Tests del widget del desplazamiento (``helpers.widgets.puente``)."""

import ipywidgets as widgets
import matplotlib
import torch

from helpers.checks.puente import log_probs_case
from helpers.puente import response_log_probs
from helpers.widgets.puente import ShiftExplorer

# Sin pantalla: ninguna figura debe intentar abrir una ventana.
matplotlib.use("Agg")

ALPHABET = [chr(ord("a") + i) for i in range(15)]


def _explorer():
    logits, input_ids, prompt_len, mask = log_probs_case(0, 3, [5, 2, 4], 5)
    explorer = ShiftExplorer(logits[0], input_ids[0], prompt_len, 5, ALPHABET)
    return explorer, logits, input_ids, prompt_len, mask


def test_each_token_reads_the_reference_log_prob():
    explorer, logits, input_ids, prompt_len, mask = _explorer()
    want = response_log_probs(logits, input_ids, prompt_len, mask)[0]
    # Sin desplazamiento: el token de la posición t, en los logits de t
    unshifted = torch.log_softmax(logits[0, prompt_len:], dim=-1)
    wrong = unshifted.gather(-1, input_ids[0, prompt_len:, None]).squeeze(-1)
    for j in range(5):
        explorer.position = j
        explorer.set_shifted(True)
        assert explorer.row() == prompt_len + j - 1
        assert abs(explorer.log_prob() - want[j].item()) < 1e-5
        explorer.set_shifted(False)
        assert explorer.row() == prompt_len + j
        assert abs(explorer.log_prob() - wrong[j].item()) < 1e-5
    assert "sin desplazamiento" in explorer.summary()


def test_moving_wraps_around_the_answer():
    explorer, *_ = _explorer()
    explorer.move(-1)
    assert explorer.position == 4
    explorer.move(2)
    assert explorer.position == 1
    assert explorer.token() == ALPHABET[int(_explorer()[2][0, 3 + 1])]


def test_the_view_responds_to_its_buttons():
    explorer, *_ = _explorer()
    view = explorer.widget
    assert isinstance(view, widgets.VBox)
    back, forward, toggle = view.children[0].children
    before = explorer._info.value
    forward.click()
    assert explorer.position == 1 and explorer._info.value != before
    toggle.value = True
    assert not explorer.shifted and "el error" in explorer._info.value
    assert explorer._plot.outputs and "image/png" in explorer._plot.outputs[0]["data"]
    assert torch.is_tensor(torch.as_tensor(explorer.log_probs()))
