"""Traer una función que el estudiante escribió en otro cuaderno del curso.

El módulo 09 usa la ``grpo_loss`` que escribiste en el 07, sin tocarla, sobre
tensores de transformers. ``function_from_notebook`` la busca en tu copia del
cuaderno 07 (la celda de solución con su ``grade_id``), ejecuta esa celda y
devuelve la función. Si el cuaderno no está, la celda sigue sin resolver o
su código falla, devuelve la referencia y lo dice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

import helpers
import helpers.tinylm as tl


def _candidates(notebook: str) -> list[Path]:
    name = Path(notebook).name
    stem = Path(notebook).stem
    return [
        Path(notebook),
        Path("..") / stem / name,  # course/09_puente -> course/07_grpo
        Path.cwd().parent / stem / name,
    ]


def _cell_source(path: Path, grade_id: str) -> str | None:
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade_id") == grade_id and meta.get("solution"):
            source = cell.get("source", "")
            return "".join(source) if isinstance(source, list) else source
    return None


def function_from_notebook(
    notebook: str,
    grade_id: str,
    name: str,
    fallback: Callable[..., Any],
    probe: Sequence[Any] | None = None,
) -> tuple[Callable[..., Any], str]:
    """La función ``name`` de la celda ``grade_id`` de ``notebook``, o ``fallback``.

    - ``notebook``: p. ej. ``"07_grpo.ipynb"``; se busca en la carpeta actual
      y en la del módulo hermano (``../07_grpo/``).
    - ``probe``: argumentos con que se llama una vez a la función para saber
      si ya está escrita (una celda sin resolver lanza ``NotImplementedError``).

    Devuelve la función y una frase que dice de dónde salió.
    """
    for path in _candidates(notebook):
        if not path.is_file():
            continue
        source = _cell_source(path, grade_id)
        if source is None:
            return (
                fallback,
                f"{path} no tiene la celda «{grade_id}»: uso la referencia.",
            )
        namespace: dict[str, Any] = {
            "torch": torch,
            "np": np,
            "math": math,
            "helpers": helpers,
            "tl": tl,
        }
        try:
            exec(compile(source, str(path), "exec"), namespace)  # noqa: S102
            function = namespace[name]
            if probe is not None:
                function(*probe)
        except NotImplementedError:
            return fallback, (
                f"«{name}» sigue sin resolver en {path}: uso la referencia. "
                "Resuélvela en el 07 y vuelve a ejecutar esta celda."
            )
        except Exception as error:  # noqa: BLE001 — el código es del estudiante
            return fallback, (
                f"Tu «{name}» de {path} lanzó {type(error).__name__}: {error}. "
                "Uso la referencia."
            )
        return function, f"Uso tu «{name}» de {path}."
    stem = Path(notebook).stem
    return fallback, (
        f"No encuentro {Path(notebook).name} ni en esta carpeta ni en la de al "
        f"lado (../{stem}/): uso la referencia de «{name}»."
    )
