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

import _lsprof
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
        self._profiler: _lsprof.Profiler | None = None

    def _scan(self, profiler: _lsprof.Profiler) -> None:
        """Busca, en lo que anotó el perfilador, una llamada a la referencia
        hecha desde el código de una celda que no es la de pruebas."""
        for entry in profiler.getstats():
            caller = entry.code
            if isinstance(caller, str) or not entry.calls:
                continue  # una función de C, o una que no llamó a nadie
            # La propia celda de pruebas puede llamar a la referencia (para
            # calcular lo esperado); el código de las demás celdas, no.
            filename = caller.co_filename
            if filename == self.test_file or not _is_student_code(filename):
                continue
            for call in entry.calls:
                code = call.code
                if isinstance(code, str):
                    continue
                if (code.co_filename, code.co_firstlineno, code.co_name) in self.codes:
                    self.delegated = (
                        f"el código de una celda llama a la referencia «{code.co_name}»"
                    )
                    return

    def start(self) -> None:
        """Empieza a anotar las llamadas a la referencia."""
        # Quien llama a start() es el código de la celda de pruebas.
        self.test_file = sys._getframe(1).f_code.co_filename
        if self.codes:
            previous = sys.getprofile()
            if isinstance(previous, _lsprof.Profiler):
                # El de una celda de pruebas anterior que lanzó un error antes
                # de llegar a finish(): se apaga, no se restaura.
                previous.disable()
                previous = None
            self._previous = previous
            # El perfilador de cProfile, escrito en C, sin las funciones de C:
            # anota quién llama a quién con mucho menos coste que una función
            # de Python en sys.setprofile, que se llamaría en cada llamada (y
            # multiplicaba el tiempo de las celdas de pruebas de 09 y 10).
            self._profiler = _lsprof.Profiler(builtins=False)
            self._profiler.enable()

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
            self._profiler.disable()
            sys.setprofile(self._previous)
            self._scan(self._profiler)
        for name in self.names:
            if not self.delegated and self._is_reference(namespace.get(name)):
                self.delegated = f"«{name}» es la implementación de referencia"
        found = json.dumps({"delegated": self.delegated}, ensure_ascii=False)
        sys.stdout.write(f"«AG:{self.nonce}:{found}»\n")
        sys.stdout.flush()
