"""Cómo falla una comprobación y qué es un error típico.

- :func:`fail` es la única forma de fallar: lanza :class:`CheckError` con un
  mensaje en español y el id del diagnóstico.
- :class:`Mistake` es un error típico como una fila de datos: id, la
  implementación errónea que lo reproduce y el mensaje.
- :class:`Diagnosis` es un diagnóstico sin implementación errónea: lo que
  dice una regla (un gradiente que no debía pasar, un relleno que cuenta, un
  micro-lote desordenado) cuando se incumple.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

#: Longitud máxima de un mensaje de comprobación, en caracteres.
MAX_MESSAGE = 1200


def plain_text(message: str) -> str:
    """Quita el Markdown que se imprimiría tal cual: ``**negrita**`` y ``*cursiva*``.

    Las fórmulas escritas con ``*`` entre espacios (``2 * x``) no se tocan.
    """
    message = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"\1", message)
    return re.sub(r"(?<![\w*])\*(\S(?:[^*\n]*?\S)?)\*(?![\w*])", r"\1", message)


def _cap(message: str, limit: int = MAX_MESSAGE) -> str:
    """Recorta un mensaje demasiado largo, y lo dice."""
    if len(message) <= limit:
        return message
    suffix = " … (mensaje recortado)"
    return message[: limit - len(suffix)].rstrip() + suffix


class CheckError(AssertionError):
    """Una comprobación falló; el mensaje explica por qué, en español.

    El mensaje se limpia de Markdown y se recorta a :data:`MAX_MESSAGE`
    caracteres. IPython muestra solo el mensaje, sin la traza por dentro de
    ``helpers.checks``; los errores del código del estudiante no pasan por
    aquí y conservan su traza.
    """

    def __init__(self, message: str = "", mistake: str | None = None) -> None:
        super().__init__(_cap(plain_text(str(message))))
        #: El id del error típico diagnosticado (una fila :class:`Mistake` o
        #: uno de los diagnósticos comunes, como ``"modified_input"``); los
        #: bancos de respuestas lo esperan. ``None``: un fallo sin diagnóstico
        #: con nombre.
        self.mistake = mistake

    def _render_traceback_(self) -> list[str]:
        """Lo que IPython muestra en lugar de la traza: el mensaje, en rojo."""
        lines = str(self).splitlines() or [""]
        red, bold, reset = "\x1b[31m", "\x1b[1m", "\x1b[0m"
        return [f"{red}{bold}✘ {lines[0]}{reset}"] + [
            f"{red}{line}{reset}" for line in lines[1:]
        ]


def fail(message: str, mistake: str | None = None) -> NoReturn:
    """Lanza :class:`CheckError` con ``message``: la única forma de fallar.

    ``mistake`` es el id del diagnóstico (ver :attr:`CheckError.mistake`).
    """
    raise CheckError(message, mistake)


@dataclass(frozen=True)
class Mistake:
    """Un error típico, como una fila de datos.

    - ``id``: su nombre estable (inglés, ``snake_case``, único en su
      ejercicio), el que esperan los bancos (``tests/banks``).
    - ``variant``: **la implementación errónea, con la firma del ejercicio**.
      Se ejecuta como la del estudiante, con los mismos casos y el mismo
      estado, y la fila explica el fallo si las dos dan lo mismo.
    - ``message``: lo que se le dice al estudiante, en español (en una tabla,
      en un bloque aparte: :func:`with_messages`).
    """

    id: str
    variant: Callable[..., Any]
    message: str


@dataclass(frozen=True)
class Diagnosis:
    """Lo que se dice cuando se incumple una regla: un id y un mensaje.

    Las reglas de los tipos de comprobación (qué entrada debe recibir
    gradiente, qué relleno no debe contar, en qué orden van los micro-lotes)
    traen un diagnóstico por defecto; el ejercicio lo cambia por el suyo con
    ``Diagnosis(id="...", message="...")``. ``message`` vacío: el del tipo de
    comprobación, con este id.
    """

    id: str
    message: str = ""

    def fail(self, **values: Any) -> NoReturn:
        """Falla con este diagnóstico; ``values`` llenan los huecos
        ``{nombre}`` de su mensaje (``Diagnosis.fail(key="actions")``)."""
        fail(self.message.format(**values) if values else self.message, self.id)


def variant_of(
    implementation: Callable[..., Any], **options: Any
) -> Callable[..., Any]:
    """``implementation`` con unas opciones fijas, por nombre: una variante con
    la firma del ejercicio, cuyo nombre dice qué opciones lleva
    (``variant_of(_update, divide_by="none")``)."""
    variant = functools.partial(implementation, **options)
    shown = ", ".join(f"{name}={value!r}" for name, value in options.items())
    name = getattr(implementation, "__name__", "variante")
    variant.__name__ = f"{name}({shown})"  # type: ignore[attr-defined]
    variant.__doc__ = getattr(implementation, "__doc__", None)
    return variant


def _said(text: str) -> dict[str, str]:
    """Los mensajes de un bloque «id: …» (ver :func:`with_messages`), por id."""
    said: dict[str, str] = {}
    for keys, body in re.findall(
        r"^(\w[\w, ]*): (.*?)(?=^\w[\w, ]*: |\Z)", text, re.M | re.S
    ):
        said |= dict.fromkeys(keys.split(", "), " ".join(body.split()))
    return said


def diagnoses(text: str) -> dict[str, Diagnosis]:
    """Los diagnósticos de un bloque de texto, por id: cada uno empieza en una
    línea «id: …» (o «id_1, id_2: …») y sigue en las sangradas, como en
    :func:`with_messages`. Para los ``fail`` de reglas sin variante (un lote
    sin una clave, una copia fuera de tiempo): el mensaje puede llevar huecos
    ``{nombre}``, que llena :meth:`Diagnosis.fail`::

        SAYS = diagnoses(\"""
        batch_not_tensor: batch['{key}'] es {kind}; debe ser un tensor.
        \""")
        SAYS["batch_not_tensor"].fail(key=key, kind=type(value).__name__)
    """
    return {key: Diagnosis(key, message) for key, message in _said(text).items()}


def with_messages(
    text: str, *rows: Mistake | tuple[str, Callable[..., Any]]
) -> list[Mistake]:
    """Las filas ``rows``, escritas ``("id", variante)`` (o ``Mistake("id",
    variante, ...)``), con su mensaje tomado de ``text``: cada uno empieza en
    una línea «id: …» (o «id_1, id_2: …», el mismo para varios) y sigue en las
    líneas sangradas, que se juntan con un espacio. Cada fila tiene su mensaje
    y cada mensaje, su fila (una ``Mistake`` que ya trae el suyo, escrito, se
    queda con él)."""
    rows = tuple(r if isinstance(r, Mistake) else Mistake(*r, ...) for r in rows)
    said = _said(text)
    wanted = {row.id for row in rows if row.message is ...}
    if wanted != said.keys():
        raise ValueError(f"filas y mensajes no casan: {sorted(said.keys() ^ wanted)}")
    return [
        row
        if row.message is not ...
        else dataclasses.replace(row, message=said[row.id])
        for row in rows
    ]


@dataclass(frozen=True)
class CommonMistake:
    """Un diagnóstico que el núcleo da por sí solo, en cualquier ejercicio:
    su id y, para quien mantiene el curso, qué significa (el mensaje al
    estudiante lo escribe el núcleo en cada caso)."""

    id: str
    about: str
