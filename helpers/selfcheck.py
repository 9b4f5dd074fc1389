"""La autocomprobación desde el propio cuaderno (una línea al final)."""

from __future__ import annotations

import subprocess
import sys


def self_check(notebook: str) -> None:
    """Comprueba el cuaderno guardado como lo haría el calificador.

    Ejecuta ``python -m autograder check notebook`` en un kernel nuevo, con los
    mismos límites que al calificar, e imprime qué ejercicios pasan sus
    comprobaciones visibles. Guarda antes (Ctrl+S): se comprueba lo guardado.

    Args:
        notebook: el nombre del cuaderno, p. ej. ``"01_bandidos.ipynb"``.
    """
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", "check", notebook],
        capture_output=True,
        text=True,
    )
    print(completed.stdout, end="")
    if completed.returncode not in (0, 1) and completed.stderr:
        print(completed.stderr.strip().splitlines()[-1])
