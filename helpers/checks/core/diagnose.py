"""Diagnosticar: comparar con la referencia y buscar el error típico que
explica la diferencia.

- :func:`check_cases`, para una función pura: valores en casos, con
  alternativas aceptadas (``reference=(a, b)``) y entradas con máscara
  (``masked=Masked(...)``);
- :func:`check_procedure`, para lo que tiene estado (una actualización, un
  episodio, un bucle): ejecutar, comparar y buscar la fila que coincide.

Con ``view=``, se califica una parte de lo que se devuelve (:func:`viewed`).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from helpers.checks.core.calls import _call, _outputs
from helpers.checks.core.compare import (
    _same,
    as_array,
    describe_difference,
    python_number,
)
from helpers.checks.core.masked import Masked
from helpers.checks.core.mistakes import CheckError, Mistake, fail
from helpers.checks.core.symptoms import BROADCAST_HINT, _symptom

#: Lo que mira una celda de lo que devuelve la función: ``view(salida, *args)``.
View = Callable[..., Any]


class _ViewMismatchError(Exception):
    """La salida de una variante no tiene la forma que pide la vista: la
    variante no explica nada (no rompe la búsqueda de la fila)."""


def viewed(
    function: Callable[..., Any], view: View, *, variant: bool = False
) -> Callable[..., Any]:
    """``function`` con ``view(salida, *args)`` aplicada a lo que devuelve.

    La vista elige lo que califica una celda (la acción del par ``(acción,
    log_prob)``) y puede fallar con su propio id si la salida no tiene la forma
    prometida (:func:`~helpers.checks.core.compare.as_tuple`). En una variante
    (``variant=True``) ese fallo es un error más de su huella, no un fallo.
    """

    @functools.wraps(function)
    def seen(*args: Any) -> Any:
        out = function(*args)
        try:
            return view(out, *args)
        except CheckError as error:
            if not variant:
                raise
            raise _ViewMismatchError(str(error)) from error

    return seen


def check_cases(
    function: Callable[..., Any],
    name: str,
    cases: Iterable[tuple[Any, ...]],
    reference: Callable[..., Any] | Sequence[Callable[..., Any]],
    mistakes: Iterable[Mistake] = (),
    *,
    atol: float = 1e-6,
    may_modify: Iterable[int] = (),
    returns: str | None = None,
    masked: Masked | None = None,
    view: View | None = None,
) -> None:
    """Compara ``function`` con ``reference`` en ``cases`` (tuplas de
    argumentos posicionales) y diagnostica el fallo.

    La función recibe copias de cada caso y falla si modifica alguna (salvo
    las posiciones de ``may_modify``). Si no coincide, el mensaje dice dónde
    difiere y qué lo explica:

    1. la fila de ``mistakes`` cuya «huella» (sus salidas en todos los casos)
       es la del estudiante;
    2. si no, la que da lo mismo en el caso que falla y en la mayoría de los
       que fallan (el mismo error escrito de otra manera suele diferir solo
       en algún caso límite);
    3. si no, un síntoma general: signo, redondeo, enteros, un factor, forma.

    ``reference`` puede ser varias implementaciones igual de correctas
    (``(poblacional, muestral)``): vale la primera con la que coinciden
    **todos** los casos; si ninguna, el diagnóstico usa la más cercana, para
    no culpar a la convención elegida. ``returns`` (``"float"``/``"int"``)
    mira, con los valores ya bien, que sea un número de Python
    (:func:`python_number`). ``masked`` (:class:`Masked`) prueba cada caso
    también con cada eje y forma de lote que acepta el enunciado y con el
    relleno que permite. ``view(salida, *args)`` elige lo que se califica,
    igual en la respuesta, la referencia y cada variante (:func:`viewed`).
    """
    cases = list(cases)
    references = tuple(reference) if isinstance(reference, Sequence) else (reference,)
    rows = list(mistakes)
    if view is not None:
        references = tuple(viewed(ref, view) for ref in references)
        rows = [
            dataclasses.replace(m, variant=viewed(m.variant, view, variant=True))
            for m in rows
        ]
    checked = functools.partial(
        _check_values,
        function,
        name,
        references=references,
        rows=rows,
        atol=atol,
        may_modify=tuple(may_modify),
        view=view,
    )
    if masked is None:
        checked(cases, returns=returns)
        return
    shaped = masked.shapes(cases, references[0])
    checked(shaped, returns=returns)
    filled = masked.filled(shaped, references[0])
    if filled:
        checked(
            [case for case, _ in filled],
            returns=None,
            labels=[label for _, label in filled],
            unexplained=lambda got, want: (masked.diagnose(got, want), masked.mistake),
        )


def _check_values(
    function: Callable[..., Any],
    name: str,
    cases: list[tuple[Any, ...]],
    *,
    references: tuple[Callable[..., Any], ...],
    rows: list[Mistake],
    atol: float,
    may_modify: tuple[int, ...],
    returns: str | None,
    view: View | None = None,
    labels: list[str] | None = None,
    unexplained: Callable[[Any, Any], tuple[str, str]] | None = None,
) -> None:
    """El procedimiento de :func:`check_cases` sobre una lista de casos.

    ``labels`` dice, caso a caso, qué tiene de especial (va tras la llamada en
    el mensaje); ``unexplained(got, want)``, si se da, es el
    diagnóstico ``(mensaje, id)`` cuando ningún error típico lo explica, antes
    de los síntomas generales.
    """
    outputs = _outputs(function, cases, name, may_modify)
    if view is not None:
        outputs = [
            _view(view, out, args) for out, args in zip(outputs, cases, strict=True)
        ]
    raw_outputs = list(outputs)
    for index, got in enumerate(outputs):
        if not isinstance(got, BaseException):
            outputs[index] = as_array(
                got, f"El resultado de {_call(name, cases[index])}"
            )
    expected_by_reference = [
        [as_array(ref(*copy.deepcopy(a)), "La referencia") for a in cases]
        for ref in references
    ]
    failing_by_reference = [
        [
            i
            for i, (got, want) in enumerate(zip(outputs, expected, strict=True))
            if isinstance(got, BaseException) or not _agrees(got, want, atol)
        ]
        for expected in expected_by_reference
    ]
    for failing in failing_by_reference:
        if not failing:
            # Los valores están bien; el tipo, solo si el enunciado lo promete
            # (un valor equivocado se diagnostica antes, por su error típico).
            for args, got in zip(cases, raw_outputs, strict=True):
                if returns is not None:
                    python_number(got, f"El resultado de {_call(name, args)}", returns)
            return
    chosen = _closest(outputs, expected_by_reference, atol)
    expected, failing = expected_by_reference[chosen], failing_by_reference[chosen]
    index = failing[0]
    got, want = outputs[index], expected[index]
    call_text = _call(name, cases[index])
    label = labels[index] if labels else ""
    if label:
        call_text = f"{call_text}, con {label},"
    if isinstance(got, BaseException):
        intro = f"{call_text} lanzó {type(got).__name__}: {got}"
    elif got.shape != want.shape:
        intro = (
            f"{call_text} devolvió algo de forma {got.shape}, pero debía tener "
            f"forma {want.shape}."
        )
    else:
        intro = f"{call_text} {describe_difference(got, want, atol=atol)}"
    mistake = _matching_mistake(outputs, rows, cases, failing, atol)
    if mistake is not None:
        fail(f"{intro}\n{mistake.message}", mistake.id)
    if unexplained is not None and not isinstance(got, BaseException):
        message, ident = unexplained(got, want)
        fail(f"{intro}\n{message}", ident)
    # Un síntoma general.
    if isinstance(got, RuntimeError) and "must match the size" in str(got):
        fail(f"{intro}\n{BROADCAST_HINT}", "broadcast")
    if isinstance(got, BaseException):
        fail(intro, "raised")
    if np.isnan(got).any() and not np.isnan(want).any():
        fail(
            f"{intro}\nAparece NaN: busca una división por cero o un exp que desborda.",
            "nan",
        )
    symptom = _symptom(raw_outputs[index], got, want)
    if symptom is not None:
        fail(f"{intro}\n{symptom[1]}", symptom[0])
    fail(intro, "wrong_value")


def _view(view: View, out: Any, args: tuple[Any, ...]) -> Any:
    """La vista de una salida del estudiante (que ya pasó por :func:`call`): su
    fallo es el diagnóstico; un error al mirarla cuenta como salida."""
    if isinstance(out, BaseException):
        return out
    try:
        return view(out, *args)
    except CheckError:
        raise
    except Exception as error:
        return error


def _agrees(got: np.ndarray, want: np.ndarray, atol: float) -> bool:
    """¿Coinciden una salida y la esperada? Como :func:`close`, y un NaN de la
    referencia (una fila sin ninguna casilla válida, 0/0) pide un NaN."""
    return got.shape == want.shape and bool(
        np.allclose(got, want, atol=atol, rtol=1e-5, equal_nan=True)
    )


def _closest(outputs: list[Any], expected: list[list[np.ndarray]], atol: float) -> int:
    """La referencia más cercana a las salidas del estudiante: la que coincide
    en más casos sin contar los NaN de la respuesta y, a igualdad, en más
    casos del todo; a igualdad, la primera."""
    if len(expected) == 1:
        return 0

    def score(want: list[np.ndarray]) -> tuple[int, int]:
        loose = exact = 0
        for got, w in zip(outputs, want, strict=True):
            if isinstance(got, BaseException) or got.shape != w.shape:
                continue
            exact += _agrees(got, w, atol)
            kept = ~np.isnan(got)
            loose += bool(np.allclose(got[kept], w[kept], atol=atol, rtol=1e-5))
        return loose, exact

    scores = [score(want) for want in expected]
    return scores.index(max(scores))


def _matching_mistake(
    outputs: list[Any],
    mistakes: list[Mistake],
    cases: list[tuple[Any, ...]],
    failing: list[int],
    atol: float,
) -> Mistake | None:
    """El error típico que explica ``outputs`` (las salidas del estudiante en
    ``cases``; ``failing``: los casos que no coinciden con la referencia).

    1. El que da lo mismo en todos los casos.
    2. Si no, el que da lo mismo en el primer caso que falla y en la mayoría
       de los que fallan (con una tolerancia algo más ancha).
    """
    fingerprints = [_outputs(mistake.variant, cases) for mistake in mistakes]
    for mistake, fingerprint in zip(mistakes, fingerprints, strict=True):
        if all(_same(o, f, atol) for o, f in zip(outputs, fingerprint, strict=True)):
            return mistake
    if isinstance(outputs[failing[0]], BaseException):
        return None
    best, best_score = None, 0
    for mistake, fingerprint in zip(mistakes, fingerprints, strict=True):
        agree = [_same(outputs[i], fingerprint[i], 1e-4, 1e-3) for i in failing]
        score = sum(agree)
        if agree[0] and 2 * score > len(failing) and score > best_score:
            best, best_score = mistake, score
    return best


def check_procedure(
    student: Callable[..., Any],
    reference: Callable[..., Any],
    mistakes: Iterable[Mistake],
    *,
    run: Callable[[Any], Any],
    same: Callable[[Any, Any], bool],
    describe: Callable[[Any, Any], str],
    same_as_mistake: Callable[[Any, Any], bool] | None = None,
    unexplained: Callable[[Any, Any], bool | None] | None = None,
) -> Any:
    """El procedimiento de los ejercicios con estado (una actualización, un
    episodio, un bucle): ejecutar, comparar y, si no coincide, fallar con el
    primer error típico que da lo mismo que el estudiante.

    - ``run(implementation)`` ejecuta una implementación (la del estudiante,
      la referencia o el ``variant`` de una fila) desde el mismo estado, y
      devuelve lo que se compara;
    - ``same(got, want)``: si dos resultados son iguales; ``same_as_mistake``
      (por defecto ``same``): si el del estudiante es el de una fila (puede
      mirar más, como la norma del gradiente que queda);
    - ``describe(got, want)``: qué salió distinto, delante del mensaje
      (``""``: el mensaje solo);
    - ``unexplained(got, want)``: si ninguna fila coincide, falla con un
      diagnóstico propio; si devuelve ``True``, el resultado se da por bueno
      (su tolerancia no ve diferencia); si no, ``"wrong_result"``.

    Devuelve el resultado del estudiante si coincide. Para contar forwards,
    ``backward()`` y pasos, o el orden de los micro-lotes: :class:`Procedure`.
    """
    got, want = run(student), run(reference)
    if same(got, want):
        return got
    matches = same_as_mistake or same
    for mistake in mistakes:
        if matches(got, run(mistake.variant)):
            header = describe(got, want)
            message = f"{header}\n{mistake.message}" if header else mistake.message
            fail(message, mistake.id)
    if unexplained is not None and unexplained(got, want):
        return got
    fail(
        describe(got, want) or "El resultado no es el de la referencia.", "wrong_result"
    )
