"""Utilidades del curso «RL para LLMs: de los bandidos a GRPO».

Cada cuaderno empieza con ``import helpers``. Aquí viven la semilla, el informe
del entorno, el estilo de las figuras, los números escritos en español
(``helpers.number``, ``helpers.percent``), el resumen de progreso y las
implementaciones de referencia de cada módulo (``helpers.bandits``...).

``helpers.progress_summary`` se carga al usarse: importar ``helpers`` (o
``helpers.formatting``, como hace el calificador) no ejecuta las
comprobaciones de ``helpers.checks``, que están por encima en las capas.
"""

from typing import Any

from helpers.environment import check_environment, report_environment
from helpers.formatting import number, numbers, percent, scientific
from helpers.plotting import use_course_style
from helpers.seeding import set_seed
from helpers.selfcheck import self_check

__all__ = [
    "check_environment",
    "number",
    "numbers",
    "percent",
    "scientific",
    "progress_summary",
    "report_environment",
    "self_check",
    "set_seed",
    "use_course_style",
]


def __getattr__(name: str) -> Any:
    """``helpers.progress_summary``, importado la primera vez que se pide."""
    if name == "progress_summary":
        from helpers.checks import progress_summary

        return progress_summary
    raise AttributeError(f"module 'helpers' has no attribute {name!r}")
