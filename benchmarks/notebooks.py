"""Cada cuaderno de solución de principio a fin: tiempo y memoria de su kernel.

``python -m benchmarks notebooks [MODULO...]`` ejecuta cada cuaderno como lo
haría un estudiante, en un kernel nuevo, e imprime su tiempo y la memoria
máxima del kernel frente al presupuesto: ≤ 90 s (08_mas_alla, que entrena
tres métodos, 10_preferencias y 12_oraculo, ≤ 120 s; 09_puente, que importa
transformers y TRL y entrena con los dos, y 11_practica, ≤ 150 s) y ≤ 1,5 GB
cada uno (09_puente y 11_practica, ≤ 2 GB), ≤ 15 minutos todos.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from autograder.course import module_ids as modules
from autograder.course import source_path

NOTEBOOK_SECONDS = 90
#: Los módulos con un presupuesto de tiempo propio.
NOTEBOOK_SECONDS_BY_MODULE = {
    "08_mas_alla": 120,
    "09_puente": 150,
    "10_preferencias": 120,
    "11_practica": 150,
    "12_oraculo": 120,
}
NOTEBOOK_MEGABYTES = 1536
#: Los módulos con un presupuesto de memoria propio.
NOTEBOOK_MEGABYTES_BY_MODULE = {"09_puente": 2048, "11_practica": 2048}
ALL_NOTEBOOKS_SECONDS = 15 * 60  # COURSE.md: «all of them ≤ 15 min»


def notebook_seconds(module_id: str) -> int:
    """El presupuesto de tiempo del cuaderno de solución de ``module_id``."""
    return NOTEBOOK_SECONDS_BY_MODULE.get(module_id, NOTEBOOK_SECONDS)


def notebook_megabytes(module_id: str) -> int:
    """El presupuesto de memoria del cuaderno de solución de ``module_id``."""
    return NOTEBOOK_MEGABYTES_BY_MODULE.get(module_id, NOTEBOOK_MEGABYTES)


# Se ejecuta en un proceso aparte: así el kernel es su único hijo y
# RUSAGE_CHILDREN da la memoria máxima de ese kernel.
_RUN_ONE = """
import json, resource, sys, time
import nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
start = time.perf_counter()
NotebookClient(nb, timeout=600, kernel_name="python3",
               resources={"metadata": {"path": sys.argv[2]}}).execute()
seconds = time.perf_counter() - start
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024}))
"""


def notebook_figures(module_id: str, path: Path | None = None) -> dict[str, float]:
    """Tiempo (s) y memoria máxima del kernel (MB) del cuaderno de solución.

    ``path`` sustituye al cuaderno de ``solutions/`` (lo usa ``--quick``).
    """
    path = path or source_path(module_id)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    completed = subprocess.run(
        [sys.executable, "-c", _RUN_ONE, str(path), str(path.parent)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def notebooks_main(module_ids: list[str]) -> int:
    """Imprime tiempo y memoria de cada cuaderno de solución frente al presupuesto."""
    print(
        f"{'cuaderno':<18}{'tiempo':>9}{'memoria':>11}   presupuesto "
        f"(≤ {NOTEBOOK_SECONDS} s y ≤ {NOTEBOOK_MEGABYTES} MB, o los suyos)"
    )
    total = 0.0
    for module_id in module_ids or modules():
        figures = notebook_figures(module_id)
        total += figures["seconds"]
        seconds_ok = figures["seconds"] <= notebook_seconds(module_id)
        ok = seconds_ok and figures["peak_mb"] <= notebook_megabytes(module_id)
        print(
            f"{module_id:<18}{figures['seconds']:>8.1f}s{figures['peak_mb']:>8.0f} MB"
            f"   {'dentro' if ok else 'FUERA'}"
        )
    print(f"{'total':<18}{total:>8.1f}s   (≤ {ALL_NOTEBOOKS_SECONDS} s todos)")
    return 0
