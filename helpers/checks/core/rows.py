"""Comprobaciones declaradas como filas: un ejercicio en una llamada.

:func:`values_check` y :func:`gradients_check` escriben una vez la envoltura
de casi todas las comprobaciones (un ejercicio registrado que llama a
:func:`check_cases` o :func:`check_gradients` con sus casos, su referencia y
sus errores típicos)::

    check_discounted_returns = values_check(
        MODULE, "discounted_returns", reinforce.discounted_returns,
        RETURNS_MISTAKES, RETURNS_CASES,
    )

Las variantes que son la referencia transformada no copian sus cuentas: con
la salida cambiada (:func:`on_output`, :func:`negated`, :func:`scaled`), con
una pieza que ella llama cambiada (:func:`patched`) o con otros argumentos
(:func:`with_args`). ``view=`` elige la parte de la salida que califica una
celda (el primer elemento de un par), igual en la respuesta, la referencia y
cada variante.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from types import SimpleNamespace
from typing import Any
from unittest import mock

from helpers.checks.core.diagnose import View, check_cases, viewed
from helpers.checks.core.gradients import check_gradients
from helpers.checks.core.mistakes import Mistake
from helpers.checks.core.registry import exercise
from helpers.topics import TOPICS


def _declared(
    kind: Callable[..., None],
    module: str,
    key: str,
    reference: Any,
    mistakes: Iterable[Mistake],
    cases: Iterable[tuple[Any, ...]],
    *,
    shown: str,
    check_name: str,
    doc: str,
    aspect: str | None,
    uses: Mapping[str, Callable[..., Any]] | None,
    options: dict[str, Any],
    view: View | None = None,
) -> Callable[..., None]:
    """La comprobación registrada que llama a ``kind`` (:func:`check_cases` o
    :func:`check_gradients`) con los casos del ejercicio o los de la llamada;
    con ``view``, sobre la respuesta vista (la referencia y las filas ya lo
    están)."""
    rows, default_cases = list(mistakes), list(cases)

    def check(
        student: Callable[..., Any], cases: Iterable[tuple[Any, ...]] | None = None
    ) -> None:
        chosen = default_cases if cases is None else list(cases)
        seen = student if view is None else viewed(student, view)
        kind(seen, shown, chosen, reference, rows, **options)

    check.__name__ = check.__qualname__ = check_name
    check.__doc__ = doc
    check.__module__ = f"helpers.checks.{TOPICS.get(module, 'core')}"
    return exercise(module, key, aspect, uses=uses)(check)


def values_check(
    module: str,
    key: str,
    reference: Callable[..., Any] | tuple[Callable[..., Any], ...],
    mistakes: Iterable[Mistake],
    cases: Iterable[tuple[Any, ...]],
    *,
    name: str | None = None,
    check_name: str | None = None,
    aspect: str | None = None,
    uses: Mapping[str, Callable[..., Any]] | None = None,
    doc: str | None = None,
    **options: Any,
) -> Callable[..., None]:
    """La comprobación de valores del ejercicio ``key``, lista para el cuaderno.

    Devuelve ``check_<key>(student, cases=None)``, registrada con
    :func:`exercise`, que llama a :func:`check_cases` con ``reference``,
    ``mistakes`` y ``cases`` (los de la llamada, si se dan). ``name`` es el
    nombre de la función en los mensajes (por defecto, ``key``);
    ``options`` pasan tal cual a :func:`check_cases` (``atol``, ``returns``,
    ``masked``, ``view``…).
    """
    shown = name or key
    return _declared(
        check_cases,
        module,
        key,
        reference,
        mistakes,
        cases,
        shown=shown,
        check_name=check_name or f"check_{key}",
        doc=doc or f"Comprueba ``{shown}``: sus valores en los casos del ejercicio.",
        aspect=aspect,
        uses=uses,
        options=options,
    )


def gradients_check(
    module: str,
    key: str,
    reference: Callable[..., Any],
    mistakes: Iterable[Mistake],
    cases: Iterable[tuple[Any, ...]],
    *,
    name: str | None = None,
    check_name: str | None = None,
    aspect: str | None = "los gradientes",
    uses: Mapping[str, Callable[..., Any]] | None = None,
    doc: str | None = None,
    view: View | None = None,
    **options: Any,
) -> Callable[..., None]:
    """La comprobación de gradientes del ejercicio ``key``: como
    :func:`values_check`, con :func:`check_gradients` (``options`` lleva
    ``wrt``, ``prefix`` y el resto de sus argumentos con nombre). ``view``
    elige lo que se deriva de cada salida (ver :func:`viewed`)."""
    shown = name or key
    if view is not None:
        reference = viewed(reference, view)
        mistakes = [
            dataclasses.replace(m, variant=viewed(m.variant, view, variant=True))
            for m in mistakes
        ]
    return _declared(
        check_gradients,
        module,
        key,
        reference,
        mistakes,
        cases,
        shown=shown,
        check_name=check_name or f"check_{key}_grad",
        doc=doc or f"Comprueba ``{shown}``: los gradientes que llegan a cada entrada.",
        aspect=aspect,
        uses=uses,
        options=options,
        view=view,
    )


def on_output(
    reference: Callable[..., Any], change: Callable[[Any], Any], what: str
) -> Callable[..., Any]:
    """``reference`` con la salida cambiada por ``change`` (el signo, un
    factor, un redondeo, un ``.item()``); ``what`` nombra el cambio."""

    @functools.wraps(reference)
    def variant(*args: Any, **kwargs: Any) -> Any:
        return change(reference(*args, **kwargs))

    variant.__name__ = f"{getattr(reference, '__name__', 'referencia')}[{what}]"
    return variant


def negated(reference: Callable[..., Any]) -> Callable[..., Any]:
    """``reference`` con el signo cambiado."""
    return on_output(reference, lambda out: -out, "signo cambiado")


def scaled(reference: Callable[..., Any], factor: float) -> Callable[..., Any]:
    """``reference`` multiplicada por ``factor`` (un factor que sobra o falta)."""
    return on_output(reference, lambda out: out * factor, f"× {factor}")


def patched(reference: Callable[..., Any], **pieces: Any) -> Callable[..., Any]:
    """``reference`` con unas piezas de su módulo cambiadas mientras corre:
    el error que vive en una función que la referencia llama
    (``sequence_log_probs`` que promedia en vez de sumar)."""
    module = inspect.getmodule(reference)

    @functools.wraps(reference)
    def variant(*args: Any, **kwargs: Any) -> Any:
        with contextlib.ExitStack() as stack:
            for name, piece in pieces.items():
                stack.enter_context(mock.patch.object(module, name, piece))
            return reference(*args, **kwargs)

    variant.__name__ = f"{reference.__name__}[{', '.join(pieces)}]"
    return variant


def with_args(reference: Callable[..., Any], **changes: Any) -> Callable[..., Any]:
    """``reference`` llamada con unos argumentos cambiados, por nombre (el γ
    que falta, dos argumentos cambiados de sitio): cada cambio es un valor
    fijo o una función de los argumentos de la llamada, con sus nombres
    (``with_args(ref, gamma=1.0)``, ``with_args(ref, alpha=lambda a:
    -a.alpha)``). Una función que deba pasar tal cual: ``lambda a: función``.
    """
    names = list(inspect.signature(reference).parameters)

    @functools.wraps(reference)
    def variant(*args: Any, **kwargs: Any) -> Any:
        given = dict(zip(names, args, strict=False)) | kwargs
        call = SimpleNamespace(**given)
        new = {k: v(call) if callable(v) else v for k, v in changes.items()}
        return reference(**given | new)

    shown = ", ".join(changes)
    variant.__name__ = (
        f"{getattr(reference, '__name__', 'referencia')}({shown} cambiados)"
    )
    return variant
