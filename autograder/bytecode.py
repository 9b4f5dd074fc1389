"""El código del curso, ya compilado, antes de calificar un lote.

Cada entrega se ejecuta en su propio kernel, y cada celda de pruebas vuelve a
importar ``helpers`` desde cero (:func:`autograder.integrity.guard_test_cells`).
Dentro del sandbox el repositorio es de solo lectura y el kernel corre con
``PYTHONDONTWRITEBYTECODE``: si el curso no tiene sus ``__pycache__`` (un clon
recién hecho, o una máquina con esa variable puesta), cada importación vuelve a
compilar miles de líneas de Python, en cada celda de pruebas de cada entrega.

:func:`compile_course` los escribe una vez, desde el proceso que califica (que
sí puede escribir), con la invalidación por fecha de siempre: si un archivo
cambia, Python lo vuelve a compilar. El sandbox los ve en solo lectura, así que
una entrega no puede cambiarlos. Si no se puede escribir (un curso instalado en
una carpeta ajena), no pasa nada: solo se califica más despacio.
"""

from __future__ import annotations

import compileall
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Los paquetes que importan los kernels que califican.
PACKAGES = ("helpers", "autograder")


def compile_course(root: Path = ROOT) -> bool:
    """Compila los paquetes del curso en sus ``__pycache__``.

    Returns:
        ``True`` si todo quedó compilado.
    """
    ok = True
    for name in PACKAGES:
        folder = root / name
        if folder.is_dir():
            ok &= bool(compileall.compile_dir(folder, quiet=2, workers=1))
    return ok
