"""Las demos de los cuadernos, que siguen aunque falten ejercicios.

``demo = demo_functions(globals(), softmax=bandits.softmax)`` (en la
preparación de un cuaderno) da ``demo.softmax``: la función del estudiante, o
la referencia mientras aún lanza ``NotImplementedError``. Al calificar
(:func:`grading`) no hay respaldo: las demos no cuentan, y una que falta
falla enseguida.

No es una comprobación y no importa ``helpers.checks``; por compatibilidad,
``from helpers.checks import demo_functions`` sigue valiendo.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any


def grading() -> bool:
    """¿Se está calificando (nbgrader ejecuta con ``NBGRADER_EXECUTION=autograde``)?"""
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


class _StudentOrReference:
    """Llama a la función del cuaderno que se llama ``name`` en ese momento; si
    lanza ``NotImplementedError``, a la referencia (con una nota por celda)."""

    def __init__(
        self, namespace: Mapping[str, Any], name: str, reference: Callable[..., Any]
    ) -> None:
        self.namespace = namespace
        self.name = name
        self.reference = reference
        self._noted: set[Any] = set()
        self.__name__ = name
        self.__doc__ = getattr(reference, "__doc__", None)

    def _note(self) -> None:
        # Una nota por ejecución de celda (en Jupyter) o una sola (fuera).
        shell = sys.modules.get("IPython")
        ipython = shell.get_ipython() if shell is not None else None
        cell = getattr(ipython, "execution_count", None)
        if cell in self._noted:
            return
        self._noted.add(cell)
        print(
            f"Nota: {self.name} aún no está escrita; esta demo usa la "
            "implementación de referencia. Cuando la escribas, vuelve a ejecutar "
            "esta celda para ver la tuya."
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        function = self.namespace.get(self.name)
        # Al calificar, las demos no cuentan: sin respaldo, falla enseguida (y
        # no se gasta tiempo ejecutando la referencia en cada entrega).
        grading_now = grading()
        if callable(function) and function is not self:
            try:
                return function(*args, **kwargs)
            except NotImplementedError:
                if grading_now:
                    raise
        elif grading_now:
            raise NotImplementedError(f"{self.name} aún no está escrita.")
        self._note()
        return self.reference(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.name} del cuaderno, o la de referencia si aún no está>"


def demo_functions(
    namespace: Mapping[str, Any], **references: Callable[..., Any]
) -> SimpleNamespace:
    """Las funciones del estudiante para las demos, con la referencia de respaldo.

    Con ``demo = demo_functions(globals(), softmax=bandits.softmax)`` (en la
    preparación), ``demo.softmax(...)`` llama a la ``softmax`` que el cuaderno
    tenga definida en ese momento; si aún lanza ``NotImplementedError`` (el
    ejercicio está sin hacer), usa la de referencia e imprime una nota. Así
    «Run All» llega al final del cuaderno aunque falten ejercicios. Cualquier
    otro error de la función del estudiante sí se ve: es una pista. Los
    nombres del cuaderno no se tocan: la comprobación de cada ejercicio sigue
    viendo solo la función del estudiante.

    Args:
        namespace: el espacio de nombres del cuaderno (``globals()``).
        **references: nombre del ejercicio → su implementación de referencia.
    """
    return SimpleNamespace(
        **{
            name: _StudentOrReference(namespace, name, reference)
            for name, reference in references.items()
        }
    )
