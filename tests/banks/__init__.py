"""Bancos de respuestas por ejercicio: errores típicos y aciertos escritos de
otra manera. Cada respuesta errónea dice qué error típico (su id) debe
diagnosticarse; cada acierto debe pasar todas las pruebas, visibles y ocultas.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    """Una respuesta de estudiante para un ejercicio.

    Attributes:
        name: qué representa («sin dividir por n», «con un bucle»...).
        source: el código de la celda de solución.
        mistake: en las erróneas, el id del error típico que debe
            diagnosticarse en la primera celda de pruebas que falla
            (``CheckError.mistake``; ver ``helpers.checks.Mistake``);
            ``None`` en las correctas.
        fails: en las erróneas de un ejercicio con una celda calificada por
            aspecto (valor, forma, gradiente...), los ``grade_id`` de las
            celdas de pruebas que deben fallar; las demás deben pasar, y así
            se comprueba el crédito parcial. ``None``: deben fallar todas.
    """

    name: str
    source: str
    mistake: str | None = None
    fails: tuple[str, ...] | None = None


def bank(module_id: str):
    """El submódulo de ``tests.banks`` cuyo ``MODULE`` es ``module_id``.

    Tiene los diccionarios ``WRONG`` y ``RIGHT`` (``grade_id`` de la celda de
    solución → respuestas). ``None`` si el módulo aún no tiene banco.
    """
    for info in pkgutil.iter_modules(__path__):
        candidate = importlib.import_module(f"{__name__}.{info.name}")
        if getattr(candidate, "MODULE", None) == module_id:
            return candidate
    return None


def wholly_wrong(answers: list[Answer]) -> Answer:
    """La primera errónea que falla en todas las celdas de su ejercicio (sin
    crédito parcial): la que usan las pruebas que esperan 0 puntos."""
    return next(answer for answer in answers if answer.fails is None)


def statements_right(module_id: str, grade_id: str, name: str) -> list[Answer]:
    """La clave de una pregunta de cuatro afirmaciones, escrita de otras dos
    maneras (en otro orden y con ``dict()``), leída del cuaderno de soluciones
    de ``module_id`` (vacía si el cuaderno aún no tiene la pregunta).

    - ``grade_id``: el de la celda de la respuesta.
    - ``name``: la variable de la respuesta (``"answer_experiment"``).
    """
    from tests.notebooks import exercises, read, solution_path

    path = solution_path(module_id)
    if not path.exists():
        return []
    found = [ex for ex in exercises(read(path)) if ex.grade_id == grade_id]
    if not found:
        return []
    namespace: dict = {}
    exec(found[0].solution, namespace)  # la solución entera: la clave
    key = namespace[name]
    reordered = ", ".join(f'"{k}": {key[k]!r}' for k in reversed(sorted(key)))
    keywords = ", ".join(f"{k}={key[k]!r}" for k in sorted(key))
    return [
        Answer("en otro orden", f"{name} = {{{reordered}}}"),
        Answer("con dict()", f"{name} = dict({keywords})"),
    ]
