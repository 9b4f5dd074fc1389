"""La vigilancia de una celda de pruebas, dentro del kernel que califica.

:func:`autograder.integrity.guard_test_cells` pone al principio de cada celda
de pruebas ``Guard(config).start()`` y al final ``finish(globals())``. Mientras
la celda corre, un perfilador anota si el código de una celda del cuaderno
llama a la implementación de referencia del ejercicio; al terminar se mira si
lo que define el ejercicio *es* la referencia (un alias, un ``partial``, una
subclase). La última línea imprime una marca con el número secreto de esta
calificación y lo encontrado: el calificador la lee y la quita. Si una
prueba falla, la marca no sale, y eso ya puntúa 0; si la prueba «pasa» sin
marca, es que alguien se tragó su error, y también puntúa 0.

Este módulo se importa de nuevo en cada celda de pruebas (el prólogo descarta
antes los módulos ``autograder``), así que no se puede cambiar desde el
cuaderno antes de tiempo. No importa nada pesado.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys


def _is_student_code(filename: str) -> bool:
    """¿Es código escrito en una celda (o generado con exec/eval)?"""
    return "ipykernel_" in filename or filename.startswith("<")


def unwrap(obj: object) -> object:
    """La función de verdad detrás de ``partial``, métodos y decoradores."""
    for _ in range(20):
        if isinstance(obj, functools.partial):
            obj = obj.func
        elif isinstance(obj, staticmethod | classmethod) or inspect.ismethod(obj):
            obj = obj.__func__
        elif getattr(obj, "__wrapped__", None) is not None:
            obj = obj.__wrapped__
        else:
            return obj
    return obj


class Guard:
    """Vigila una celda de pruebas (ver el docstring del módulo)."""

    def __init__(self, config: str) -> None:
        data = json.loads(config)
        self.nonce: str = data["nonce"]
        self.names: list[str] = data["names"]
        self.codes = {(f, line, name) for f, line, name in data["codes"]}
        self.classes = set(data["classes"])
        self.delegated: str = ""
        self.test_file = ""
        self._previous = None

    def _profile(self, frame, event, arg) -> None:
        if event != "call" or self.delegated:
            return
        code = frame.f_code
        if (code.co_filename, code.co_firstlineno, code.co_name) not in self.codes:
            return
        caller = frame.f_back
        if caller is None:
            return
        filename = caller.f_code.co_filename
        # La propia celda de pruebas puede llamar a la referencia (para calcular
        # lo esperado); el código de las demás celdas, no.
        if filename != self.test_file and _is_student_code(filename):
            self.delegated = (
                f"el código de una celda llama a la referencia «{code.co_name}»"
            )

    def start(self) -> None:
        """Empieza a anotar las llamadas a la referencia."""
        # Quien llama a start() es el código de la celda de pruebas.
        self.test_file = sys._getframe(1).f_code.co_filename
        if self.codes:
            self._previous = sys.getprofile()
            sys.setprofile(self._profile)

    def _is_reference(self, obj: object) -> bool:
        obj = unwrap(obj)
        code = getattr(obj, "__code__", None)
        if code is not None:
            key = (code.co_filename, code.co_firstlineno, code.co_name)
            if key in self.codes:
                return True
        if inspect.isclass(obj):
            return any(
                f"{base.__module__}.{base.__qualname__}" in self.classes
                for base in obj.__mro__
            )
        return False

    def finish(self, namespace: dict) -> None:
        """Deja de anotar e imprime la marca con lo encontrado."""
        if self.codes:
            sys.setprofile(self._previous)
        for name in self.names:
            if not self.delegated and self._is_reference(namespace.get(name)):
                self.delegated = f"«{name}» es la implementación de referencia"
        found = json.dumps({"delegated": self.delegated}, ensure_ascii=False)
        sys.stdout.write(f"«AG:{self.nonce}:{found}»\n")
        sys.stdout.flush()
