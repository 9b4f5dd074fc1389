"""Utilidades del curso «RL para LLMs: de los bandidos a GRPO».

Cada cuaderno empieza con ``import helpers``. Aquí viven la semilla, el informe
del entorno, el estilo de las figuras, los números escritos en español
(``helpers.number``, ``helpers.percent``), el resumen de progreso y las
implementaciones de referencia de cada módulo (``helpers.bandits``...).
"""

from helpers.checks import progress_summary
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
