"""Leer los cuadernos fuente: regiones de solución y de pruebas ocultas."""

from __future__ import annotations

import ast
import re

SOLUTION_REGION = re.compile(
    r"^[ \t]*### BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*### END SOLUTION[^\n]*\n?",
    re.M | re.S,
)
HIDDEN_REGION = re.compile(
    r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n(.*?)^[ \t]*### END HIDDEN TESTS[^\n]*\n?",
    re.M | re.S,
)


def student_version(source: str) -> str:
    """El código de una celda de solución tal como lo escribiría un estudiante:
    la solución sin los marcadores."""
    return SOLUTION_REGION.sub(lambda m: m.group(1), source)


# La etiqueta de las celdas de entrenamiento o demo larga: no se ejecutan al
# calificar (ver autograder/preprocessors.py).
SLOW_TAG = "slow"


def without_magics(source: str) -> str:
    """El código de una celda sin sus líneas de IPython (``%``, ``!``), para ``ast``."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line
        for line in source.splitlines()
    )


def parse_code(source: str) -> ast.Module | None:
    """El código de una celda, sin sus líneas mágicas (:func:`without_magics`),
    leído con ``ast``; ``None`` si no compila."""
    try:
        return ast.parse(without_magics(source))
    except SyntaxError:
        return None
