"""Las comprobaciones declaradas como filas (``helpers.checks.core.rows``)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from helpers.checks import (
    MUST,
    MUST_NOT,
    CheckError,
    Mistake,
    as_tuple,
    gradients_check,
    negated,
    on_output,
    scaled,
    values_check,
    with_args,
)
from helpers.checks.core.registry import _CHECKS


def _mean(values):
    return float(np.mean(values))


def _weighted(log_probs, weights):
    return -(log_probs * weights.detach()).sum()


CASES = [(np.array([1.0, 2.0, 6.0]),), (np.array([-1.0, 0.5]),)]
MISTAKES = [
    Mistake("mean_sign", negated(_mean), "¿El signo?"),
    Mistake("mean_sum", on_output(_mean, lambda out: out * 3, "suma"), "¿Sumaste?"),
]


def test_values_check_registers_and_diagnoses():
    check = values_check("99_prueba", "mean", _mean, MISTAKES, CASES)
    assert check.__name__ == "check_mean"
    assert "check_mean" in _CHECKS[("99_prueba", "mean")]
    check(_mean, quiet=True)
    with pytest.raises(CheckError) as error:
        check(lambda values: -float(np.mean(values)), quiet=True)
    assert error.value.mistake == "mean_sign"
    # Los casos de la llamada sustituyen a los del ejercicio.
    with pytest.raises(CheckError) as error:
        check(lambda values: float(np.sum(values)), [(np.ones(3),)], quiet=True)
    assert error.value.mistake == "mean_sum"


def test_transforms_change_only_the_output():
    assert negated(_mean)(np.array([1.0, 3.0])) == -2.0
    assert scaled(_mean, 0.5)(np.array([1.0, 3.0])) == 1.0
    assert "signo cambiado" in negated(_mean).__name__


def test_gradients_check_uses_autograd_of_the_reference():
    cases = [(torch.tensor([-0.5, -1.0]), torch.tensor([2.0, 1.0]))]
    check = gradients_check(
        "99_prueba",
        "weighted",
        _weighted,
        [],
        cases,
        wrt={"log_probs": MUST, "weights": MUST_NOT},
        prefix="weighted",
    )
    check(_weighted, quiet=True)
    with pytest.raises(CheckError) as error:
        check(lambda log_probs, weights: -(log_probs * weights).sum(), quiet=True)
    assert error.value.mistake == "weighted_gradient_leaks"


def test_with_messages_fills_each_row_and_rejects_a_mismatch():
    from helpers.checks import with_messages

    text = """
one, two: Lo mismo para
    las dos filas.
three: Otra cosa.
"""
    rows = with_messages(
        text,
        Mistake("one", _mean, ...),
        Mistake("two", _mean, ...),
        ("three", _mean),
        Mistake("own", _mean, "El suyo."),
    )
    assert rows[2] == Mistake("three", _mean, "Otra cosa.")
    assert [row.message for row in rows] == [
        "Lo mismo para las dos filas.",
        "Lo mismo para las dos filas.",
        "Otra cosa.",
        "El suyo.",
    ]
    with pytest.raises(ValueError, match="three"):
        with_messages(text, Mistake("one", _mean, ...), Mistake("two", _mean, ...))


def test_flow_takes_id_and_message_from_a_diagnosis():
    from helpers.checks import Flow, diagnoses

    says = diagnoses("lp_detached: Calcula con log_probs.\n")
    assert Flow(True, says["lp_detached"]) == Flow(
        True, id="lp_detached", message="Calcula con log_probs."
    )
    assert Flow(False, says["lp_detached"], "Otro.").message == "Otro."


def _piece(x):
    return x


def _whole(x):
    return _piece(x) + 1


def test_patched_swaps_a_piece_of_the_reference_only_while_it_runs():
    from helpers.checks import patched

    variant = patched(_whole, _piece=lambda x: 10 * x)
    assert variant(1) == 11
    assert _whole(1) == 2
    assert "_piece" in variant.__name__


def _discounted(rewards, gamma, start=0.0):
    return start + sum(r * gamma**t for t, r in enumerate(rewards))


def test_with_args_changes_arguments_by_name_and_keeps_the_signature():
    no_discount = with_args(_discounted, gamma=1.0)
    assert no_discount([1.0, 1.0], 0.5) == 2.0
    assert no_discount([1.0, 1.0], gamma=0.5, start=1.0) == 3.0
    # Un cambio que depende de la llamada recibe sus argumentos por nombre
    squared = with_args(_discounted, gamma=lambda a: a.gamma**2)
    assert squared([1.0, 1.0], 0.5) == 1.25
    assert "gamma" in squared.__name__
    assert squared.__wrapped__ is _discounted


def _mean_and_count(values):
    return float(np.mean(values)), len(values)


#: La celda de la media: lo primero del par, tras mirar que es un par.
def _first(out, values):
    return as_tuple(
        out, 2, "mean_and_count debe devolver (media, n)", mistake="not_pair"
    )[0]


def test_view_grades_one_part_and_fails_with_its_own_id():
    rows = [
        # Una variante sin la forma prometida no rompe la búsqueda de la fila.
        Mistake("only_mean", lambda values: float(np.mean(values)), "¿Y n?"),
        Mistake("mean_sign", negated(lambda v: np.mean(v)), "¿El signo?"),
        Mistake("mean_sum", lambda v: (float(np.sum(v)), len(v)), "¿Sumaste?"),
    ]
    check = values_check(
        "99_prueba", "mean_and_count", _mean_and_count, rows, CASES, view=_first
    )
    check(_mean_and_count, quiet=True)
    check(lambda values: (float(np.mean(values)), 0), quiet=True)  # solo la media
    with pytest.raises(CheckError) as error:
        check(lambda values: (float(np.sum(values)), 1), quiet=True)
    assert error.value.mistake == "mean_sum"
    with pytest.raises(CheckError) as error:
        check(lambda values: float(np.mean(values)), quiet=True)
    assert error.value.mistake == "not_pair"
    assert "(media, n); devolvió float." in str(error.value)

    def modifies(values):
        values += 1
        return None

    # Lo que hace la función, antes que la forma de lo que devuelve.
    with pytest.raises(CheckError) as error:
        check(modifies, quiet=True)
    assert error.value.mistake == "modified_input"


def _loss_and_size(log_probs, weights):
    return _weighted(log_probs, weights), len(weights)


def test_gradients_check_with_a_view():
    def loss(out, *args):
        return as_tuple(
            out, 2, "loss_and_size debe devolver (pérdida, n)", mistake="nope"
        )[0]

    check = gradients_check(
        "99_prueba",
        "loss_and_size",
        _loss_and_size,
        [
            Mistake("scalar", lambda lp, w: _weighted(lp, w), "¿Y n?"),
            Mistake("sign", lambda lp, w: (-_weighted(lp, w), 2), "¿El signo?"),
        ],
        [(torch.tensor([-0.5, -1.0]), torch.tensor([2.0, 1.0]))],
        wrt={"log_probs": MUST, "weights": MUST_NOT},
        prefix="weighted",
        view=loss,
    )
    check(_loss_and_size, quiet=True)
    with pytest.raises(CheckError) as error:
        check(lambda lp, w: ((lp * w.detach()).sum(), 2), quiet=True)
    assert error.value.mistake == "sign"
    with pytest.raises(CheckError) as error:
        check(lambda lp, w: [_weighted(lp, w)], quiet=True)
    assert error.value.mistake == "nope"
    assert "devolvió una lista de 1 elemento." in str(error.value)


def test_as_tuple_says_what_came_back():
    assert as_tuple([1, 2], 2, "f debe devolver (a, b)", mistake="x") == (1, 2)
    for value, said in [
        ((1, 2, 3), "una tupla de 3 elementos"),
        (None, "None (¿falta el return?)"),
        (np.zeros(2), "ndarray"),
    ]:
        with pytest.raises(CheckError, match=re.escape(said)) as error:
            as_tuple(value, 2, "f debe devolver (a, b)", mistake="f_not_pair")
        assert error.value.mistake == "f_not_pair"
