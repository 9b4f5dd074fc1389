"""La autocomprobación desde el propio cuaderno (una línea al final)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

_DEF = re.compile(r"^\s*def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


def _normalized(source: str) -> str:
    """El código sin espacios al final de cada línea ni líneas vacías en los bordes."""
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _executed_sources() -> list[str]:
    """Lo que ha ejecutado este kernel, en orden (vacío fuera de IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - el curso siempre tiene IPython
        return []
    shell = get_ipython()
    if shell is None:
        return []
    history = shell.user_ns.get("In", [])
    return [source for source in history if isinstance(source, str)]


def unsaved_exercises(notebook: str | Path, executed: list[str]) -> list[str]:
    """Las funciones de ejercicio que el kernel ejecutó con otro código del guardado.

    Para cada celda de solución del archivo guardado se busca la última celda
    ejecutada que define la misma función (``def nombre(``). Si su código no es
    el del archivo, lo que se va a comprobar no es lo que tienes en pantalla:
    falta guardar (o volver a ejecutar la celda).

    Args:
        notebook: la ruta del cuaderno guardado.
        executed: el código de las celdas ejecutadas, en orden (``In``).

    Returns:
        Los nombres de esas funciones, en el orden del cuaderno.
    """
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    changed: list[str] = []
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not meta.get("solution"):
            continue
        source = cell["source"]
        source = "".join(source) if isinstance(source, list) else source
        for name in _DEF.findall(source):
            pattern = re.compile(rf"^\s*def\s+{re.escape(name)}\s*\(", re.MULTILINE)
            runs = [code for code in executed if pattern.search(code)]
            if runs and _normalized(runs[-1]) != _normalized(source):
                changed.append(name)
    return list(dict.fromkeys(changed))


def _ago(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return "hace menos de un minuto"
    if minutes < 120:
        return f"hace {minutes} min"
    return f"hace {minutes // 60} h"


def self_check(notebook: str) -> None:
    """Comprueba el cuaderno guardado como lo haría el calificador.

    Ejecuta ``python -m autograder check notebook`` en un kernel nuevo, con los
    mismos límites que al calificar, e imprime qué ejercicios pasan sus
    comprobaciones visibles. Se comprueba el archivo guardado, no lo que hay en
    pantalla: antes avisa si alguna función de ejercicio que ejecutaste no
    coincide con la guardada (guarda con Ctrl+S y vuelve a ejecutar esta celda).

    Args:
        notebook: el nombre del cuaderno, p. ej. ``"01_bandidos.ipynb"``.
    """
    path = Path(notebook)
    if path.exists():
        age = _ago(time.time() - path.stat().st_mtime)
        print(f"Se comprueba {path.name} tal como está guardado ({age}).")
        try:
            changed = unsaved_exercises(path, _executed_sources())
        except (OSError, ValueError, KeyError):
            changed = []
        if changed:
            names = ", ".join(changed)
            print(
                f"Atención: lo que ejecutaste de {names} no es lo que hay guardado. "
                "Guarda el cuaderno (Ctrl+S o Archivo → Guardar) y vuelve a "
                "ejecutar esta celda; si no, se comprueba la versión anterior."
            )
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "check", notebook],
        capture_output=True,
        text=True,
    )
    print(completed.stdout, end="")
    if completed.returncode not in (0, 1) and completed.stderr:
        print(completed.stderr.strip().splitlines()[-1])
