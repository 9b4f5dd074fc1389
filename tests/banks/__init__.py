"""Bancos de respuestas por ejercicio: errores típicos y aciertos escritos de
otra manera. Cada respuesta errónea dice qué frase debe aparecer en el
diagnóstico; cada acierto debe pasar todas las pruebas, visibles y ocultas.
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
        expect: en las erróneas, un trozo del diagnóstico esperado; ``None``
            en las correctas.
    """

    name: str
    source: str
    expect: str | None = None


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
