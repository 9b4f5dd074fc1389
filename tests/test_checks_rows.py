"""Las comprobaciones declaradas como filas (``helpers.checks.core.rows``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.checks import (
    MUST,
    MUST_NOT,
    CheckError,
    Mistake,
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
        Mistake("three", _mean, ...),
        Mistake("own", _mean, "El suyo."),
    )
    assert [row.message for row in rows] == [
        "Lo mismo para las dos filas.",
        "Lo mismo para las dos filas.",
        "Otra cosa.",
        "El suyo.",
    ]
    with pytest.raises(ValueError, match="three"):
        with_messages(text, Mistake("one", _mean, ...), Mistake("two", _mean, ...))


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
