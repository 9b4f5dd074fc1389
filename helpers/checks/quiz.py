"""Las preguntas de cuestionario: un número o cuatro afirmaciones.

Estas comprobaciones miran solo la **forma** de la respuesta: un número
finito, o las cuatro afirmaciones marcadas con ``True`` o ``False``. No saben
cuál es la buena y por eso no pueden revelarla: la clave y su explicación
viven solo en las pruebas ocultas del cuaderno de soluciones, que no se
publican. Probar respuestas contra ellas no enseña nada; la explicación llega
con la retroalimentación de la calificación.

- :func:`numbered_quiz`: un cuestionario de preguntas numeradas (06).
- :func:`statements_check`: una pregunta suelta de afirmaciones sobre un
  experimento (08, 10).
- :func:`number_key` y :func:`statements_key`: la calificación con la clave,
  que llaman las pruebas ocultas (la clave la ponen ellas).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from helpers.checks import Mistake, exercise, fail
from helpers.checks.core.registry import exercise_title

STATEMENT_KEYS = ("a", "b", "c", "d")
"""Las claves del diccionario de una pregunta de afirmaciones."""

FORM_ONLY_MARK = "✎"
"""Empieza la línea de una comprobación que solo mira la forma (no un ✔, que
diría «correcto»): la autocomprobación (``autograder/check.py``) no cuenta sus
puntos como cubiertos."""

_FORM_ONLY = (
    "Esta comprobación no dice si aciertas: la pregunta se califica al "
    "corregir, y la retroalimentación trae la explicación, aciertes o no."
)


def _listed(words: list[str]) -> str:
    """``["a"]`` → «a»; ``["a", "b", "c"]`` → «a, b y c»."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " y " + words[-1]


def number_answer(answer: Any, name: str, question: str) -> float:
    """La respuesta numérica ``answer`` (un número, o un tensor o array de un
    elemento) como ``float``; falla si falta, es un texto, un booleano, varios
    números o no es finita. ``name`` es su variable en el cuaderno
    (``"answer_1"``) y ``question``, la pregunta en una frase («la pregunta
    1»). No dice si es correcta."""
    if answer is None or answer is Ellipsis:
        fail(
            f"Todavía no has respondido {question}: asigna un número a "
            f"{name}, por ejemplo {name} = -1.25.",
            "quiz_unanswered",
        )
    if isinstance(answer, str):
        fail(
            f"La respuesta de {question} es un número, no un texto: "
            "escríbelo sin comillas y con punto decimal, como en Python (-1.25, "
            f'no "−1,25"). Recibí {answer!r}.',
            "number_as_text",
        )
    if hasattr(answer, "numel") or isinstance(answer, np.ndarray):
        size = answer.numel() if hasattr(answer, "numel") else answer.size
        if size != 1:
            fail(
                f"La respuesta de {question} es un solo número, y "
                f"{name} tiene {size} elementos.",
                "several_numbers",
            )
        answer = answer.item()
    if isinstance(answer, np.generic):
        answer = answer.item()
    if isinstance(answer, bool):
        fail(
            f"{question.capitalize()} pide un número, no True o False. "
            f"Recibí {answer!r}.",
            "boolean_for_number",
        )
    if not isinstance(answer, numbers.Real):
        fail(
            f"La respuesta de {question} debe ser un número (int o float); "
            f"{name} es {type(answer).__name__}: {answer!r}.",
            "not_a_real_number",
        )
    value = float(answer)
    if not math.isfinite(value):
        fail(
            f"La respuesta de {question} debe ser un número finito; "
            f"recibí {value}. ¿Dividiste por cero en algún paso?",
            "number_not_finite",
        )
    return value


def marked_statements(answer: Any, name: str, question: str) -> dict[str, bool]:
    """Las cuatro afirmaciones de una pregunta, ``{"a": bool, …, "d": bool}``;
    falla si falta o sobra una clave o alguna no es ``True``/``False``.
    ``name`` y ``question`` como en :func:`number_answer`. No dice si las
    marcas son correctas: la clave vive solo en las pruebas ocultas."""
    example = '{"a": True, "b": False, ...}'
    if answer is None or answer is Ellipsis:
        fail(
            f"Todavía no has respondido {question}: {name} es un "
            f"diccionario con las cuatro afirmaciones, como {example}.",
            "quiz_unanswered",
        )
    if not isinstance(answer, dict):
        fail(
            f"La respuesta de {question} es un diccionario con las "
            f"claves a, b, c y d, como {example}; {name} es "
            f"{type(answer).__name__}.",
            "statements_not_a_dict",
        )
    missing = [key for key in STATEMENT_KEYS if key not in answer]
    extra = [repr(key) for key in answer if key not in STATEMENT_KEYS]
    if missing or extra:
        parts = []
        if missing:
            verb = "falta " if len(missing) == 1 else "faltan "
            parts.append(verb + _listed(missing))
        if extra:
            verb = "sobra " if len(extra) == 1 else "sobran "
            parts.append(verb + _listed(extra))
        fail(
            f"{name} debe tener exactamente las claves a, b, c y d (en minúscula): "
            + " y ".join(parts)
            + ".",
            "statements_wrong_keys",
        )
    marks = {}
    for key in STATEMENT_KEYS:
        value = answer[key]
        if value is None or value is Ellipsis:
            fail(
                f"Todavía no has marcado la afirmación {key}) de {question}: "
                "pon True si es verdadera o False si es falsa.",
                "statement_unmarked",
            )
        if not isinstance(value, bool | np.bool_):
            how = (
                f"sin comillas; recibí el texto {value!r}"
                if isinstance(value, str)
                else f"y recibí {value!r} ({type(value).__name__})"
            )
            fail(
                f"La afirmación {key}) se marca con True o False, {how}.",
                "statement_not_bool",
            )
        marks[key] = bool(value)
    return marks


def statements_check(
    module: str, key: str, name: str, question: str
) -> Callable[..., None]:
    """Registra la pregunta de afirmaciones ``key`` de ``module`` (el
    ``grade_id`` de la celda de la respuesta) y devuelve ``check(answer,
    quiet=False)``, que solo mira la **forma** (:func:`marked_statements`):
    toda respuesta bien escrita pasa, con el mismo mensaje. ``name`` y
    ``question`` como en :func:`number_answer`."""

    @exercise(module, key)
    def check_form(answer: Any) -> None:
        marked_statements(answer, name, question)

    def check(answer: Any, quiet: bool = False) -> None:
        check_form(answer, quiet=True)
        if not quiet:
            print(
                f"{FORM_ONLY_MARK} {exercise_title(module, key)}: respuesta bien "
                f"escrita (las cuatro afirmaciones marcadas). {_FORM_ONLY}"
            )

    check.__name__ = check.__qualname__ = f"check_{key}"
    check.__doc__ = (
        f"Comprueba que ``{name}`` está bien escrita: un diccionario con las "
        'claves ``"a"`` a ``"d"``, cada una ``True`` o ``False``. No dice '
        "si acierta."
    )
    return check


def numbered_quiz(module: str, kinds: dict[int, str]) -> Callable[..., None]:
    """El cuestionario de ``module``: devuelve ``check_quiz_answer(number,
    answer, quiet=False)``.

    ``kinds`` dice de qué tipo es cada pregunta: ``"number"`` (un número
    finito, :func:`number_answer`) o ``"statements"`` (cuatro afirmaciones,
    :func:`marked_statements`). Cada pregunta se registra como el ejercicio
    ``quiz_<n>`` de ``module``.
    """

    def form(number: int) -> Callable[..., None]:
        @exercise(module, f"quiz_{number}", f"Cuestionario, pregunta {number}")
        def check(answer: Any) -> None:
            name, question = f"answer_{number}", f"la pregunta {number}"
            if kinds[number] == "number":
                number_answer(answer, name, question)
            else:
                marked_statements(answer, name, question)

        return check

    checks = {number: form(number) for number in kinds}

    def check_quiz_answer(number: int, answer: Any, quiet: bool = False) -> None:
        """Comprueba que la respuesta a la pregunta ``number`` está bien
        escrita (solo la forma: se califica al corregir)."""
        if number not in kinds:
            raise ValueError(f"Solo hay preguntas de la 1 a la {len(kinds)}.")
        checks[number](answer, quiet=True)
        if not quiet:
            what = (
                "un número finito"
                if kinds[number] == "number"
                else "las cuatro afirmaciones marcadas"
            )
            print(
                f"{FORM_ONLY_MARK} Pregunta {number}: respuesta bien escrita "
                f"({what}). {_FORM_ONLY}"
            )

    return check_quiz_answer


# ---------------------------------------------------------------------------
# La calificación con la clave: solo en las pruebas ocultas
# ---------------------------------------------------------------------------
#
# Estas funciones no saben la clave: la reciben de la prueba oculta que las
# llama (en el cuaderno de soluciones, que no se publica), junto con la
# explicación. Así el mismo procedimiento califica todas las preguntas, y cada
# fallo lleva el id de lo que se diagnosticó.


def number_key(
    answer: Any,
    key: float,
    mistakes: Iterable[Mistake],
    *,
    explanation: str,
    otherwise: str,
    tolerance: float = 1e-3,
) -> None:
    """Califica una respuesta numérica con su clave ``key`` (a menos de
    ``tolerance``). Si falla, el mensaje es ``explanation`` más el porqué: el
    del error típico (``Mistake(id, valor que da, por qué)``) cuyo valor da la
    respuesta, o ``otherwise`` (id ``"quiz_wrong_number"``). Si acierta,
    imprime «Correcto.» y la explicación: llega con la nota, acierte o no."""
    got = float(answer)
    if abs(got - key) < tolerance:
        print(f"Correcto. {explanation.rstrip('; ')}.")
        return
    mistake = next((m for m in mistakes if abs(got - m.variant) < tolerance), None)
    if mistake is None:
        fail(f"{explanation}{otherwise}.", "quiz_wrong_number")
    fail(f"{explanation}{mistake.message}.", mistake.id)


def statements_key(
    answer: Mapping[str, Any],
    key: Mapping[str, tuple[bool, str]],
    *,
    question: str | None = None,
) -> None:
    """Califica cuatro afirmaciones marcadas con su clave: puntúan solo si las
    cuatro están bien. Falla con el id ``statement_<letra>`` de la primera
    afirmación mal marcada; si están todas bien, imprime el porqué de cada una
    (la explicación llega con la nota, acierte o no).

    Args:
        answer: las marcas del estudiante (``{"a": True, ...}``).
        key: para cada afirmación, si es verdadera y por qué
            (``{"a": (True, "porque...")}``).
        question: cómo se nombra la pregunta al principio de la última línea
            («Pregunta 2»). Con ella, el mensaje explica las cuatro
            afirmaciones y acaba diciendo cuáles están mal marcadas; sin ella
            (las preguntas de un experimento), explica solo las mal marcadas,
            tras un «Revisa:».
    """
    wrong = [k for k, (true, _) in key.items() if bool(answer[k]) != true]

    def truth(value: bool) -> str:
        return "verdadera" if value else "falsa"

    if not wrong:
        reasons = [f"{k}) {truth(value)}: {why}" for k, (value, why) in key.items()]
        print("Correcto: las cuatro afirmaciones están bien marcadas.")
        print("\n".join(reasons))
        return

    if question is None:
        message = "Revisa: " + " ".join(
            f"{k}) es {truth(key[k][0])}: {key[k][1]}" for k in wrong
        )
    else:
        message = "\n".join(
            [f"{k}) {truth(value)}: {why}" for k, (value, why) in key.items()]
            + [
                f"{question}: mal marcadas {', '.join(wrong)}; solo puntúa con "
                "las cuatro bien."
            ]
        )
    fail(message, f"statement_{wrong[0]}")
