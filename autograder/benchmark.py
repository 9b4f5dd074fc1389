"""Medir lo que promete el curso: ``python -m autograder benchmark ...``.

* ``grading MODULO``: fabrica ``--students`` entregas a partir del cuaderno
  publicado (un tercio resueltas, un tercio a medias y un tercio sin tocar), las
  califica con la orden de verdad (aislamiento incluido) e imprime el tiempo
  total y por entrega. Presupuesto: 100 entregas en ≤ 10 minutos en 2 núcleos.
* ``notebooks [MODULO...]``: ejecuta cada cuaderno de solución de principio a
  fin, como un estudiante, e imprime su tiempo y la memoria máxima de su kernel.
  Presupuesto: ≤ 90 s y ≤ 1,5 GB cada uno, ≤ 8 minutos los siete.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder.config import COURSE, SOLUTIONS, modules
from autograder.grade import grade
from autograder.sources import student_version

BUDGET_SECONDS = 600
BUDGET_STUDENTS = 100
NOTEBOOK_SECONDS = 90
NOTEBOOK_MEGABYTES = 1536
ALL_NOTEBOOKS_SECONDS = 8 * 60

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


def make_class(module_id: str, students: int, folder: Path) -> None:
    """Escribe ``students`` entregas variadas de ``module_id`` en ``folder``."""
    source = nbformat.read(SOLUTIONS / module_id / f"{module_id}.ipynb", as_version=4)
    solutions = {
        cell.metadata["nbgrader"]["grade_id"]: student_version(cell.source)
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
        and cell.cell_type == "code"
    }
    half = dict(list(solutions.items())[: len(solutions) // 2])
    released = COURSE / module_id / f"{module_id}.ipynb"
    for index in range(students):
        nb = nbformat.read(released, as_version=4)
        answers = (solutions, half, {})[index % 3]
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in answers:
                cell.source = answers[grade_id]
        nbformat.write(nb, folder / f"estudiante{index:03d}.ipynb")


def notebook_figures(module_id: str, path: Path | None = None) -> dict[str, float]:
    """Tiempo (s) y memoria máxima del kernel (MB) del cuaderno de solución.

    ``path`` sustituye al cuaderno de ``solutions/`` (lo usa ``--quick``).
    """
    path = path or SOLUTIONS / module_id / f"{module_id}.ipynb"
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
        f"(≤ {NOTEBOOK_SECONDS} s, ≤ {NOTEBOOK_MEGABYTES} MB)"
    )
    total = 0.0
    for module_id in module_ids or modules():
        figures = notebook_figures(module_id)
        total += figures["seconds"]
        ok = (
            figures["seconds"] <= NOTEBOOK_SECONDS
            and figures["peak_mb"] <= NOTEBOOK_MEGABYTES
        )
        print(
            f"{module_id:<18}{figures['seconds']:>8.1f}s{figures['peak_mb']:>8.0f} MB"
            f"   {'dentro' if ok else 'FUERA'}"
        )
    print(f"{'total':<18}{total:>8.1f}s   (≤ {ALL_NOTEBOOKS_SECONDS} s los siete)")
    return 0


def grading_figures(module_id: str, students: int, jobs: int) -> dict[str, object]:
    """Califica una clase fabricada; segundos totales y entregas con incidencias."""
    with tempfile.TemporaryDirectory(prefix="banco-") as scratch:
        folder = Path(scratch) / "entregas"
        folder.mkdir()
        make_class(module_id, students, folder)
        start = time.perf_counter()
        results = grade(module_id, folder, Path(scratch) / "notas", jobs=jobs)
        seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "problems": sorted({r.status for r in results if r.status != "ok"}),
        "n_problems": sum(r.status != "ok" for r in results),
    }


def main(module_id: str, students: int, jobs: int) -> int:
    """Mide e imprime el rendimiento de la calificación."""
    figures = grading_figures(module_id, students, jobs)
    seconds = float(figures["seconds"])  # type: ignore[arg-type]
    per_student = seconds / max(1, students)
    projected = per_student * BUDGET_STUDENTS
    print(
        f"Módulo {module_id}: {students} entregas, {jobs} trabajos a la vez, "
        f"{os.cpu_count()} núcleos"
    )
    print(f"Tiempo total: {seconds:.1f} s · {per_student:.2f} s por entrega")
    print(
        f"Proyección a {BUDGET_STUDENTS} entregas: {projected:.0f} s "
        f"(presupuesto {BUDGET_SECONDS} s: "
        f"{'dentro' if projected <= BUDGET_SECONDS else 'FUERA'})"
    )
    if figures["n_problems"]:
        print(
            f"⚠ {figures['n_problems']} entregas con incidencias: {figures['problems']}"
        )
    return 0
