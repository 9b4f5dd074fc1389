"""Bancos de respuestas por ejercicio: errores típicos y aciertos escritos de
otra manera. Cada respuesta errónea dice qué frase debe aparecer en el
diagnóstico; cada acierto debe pasar todas las pruebas, visibles y ocultas.
"""

from __future__ import annotations

import importlib
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


# Módulo del curso → submódulo de tests.banks con WRONG y RIGHT.
BANKS = {
    "01_bandidos": "tests.banks.bandidos",
}


def bank(module_id: str):
    """El submódulo con los diccionarios ``WRONG`` y ``RIGHT`` del módulo."""
    return importlib.import_module(BANKS[module_id])
