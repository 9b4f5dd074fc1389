"""Calificar una clase entera: ``python -m benchmarks grading [MODULO ...]``.

Fabrica ``--students`` entregas de cada módulo (todos si no se nombra ninguno)
a partir del cuaderno publicado (un tercio resueltas, un tercio a medias y un
tercio sin tocar), las califica con la orden de verdad (aislamiento incluido)
e imprime el tiempo total y por entrega. Presupuesto, para cada módulo: 100
entregas en ≤ 3 minutos en 2 núcleos (`--jobs 2`).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import nbformat

from autograder.course import release_path
from autograder.grade import grade

BUDGET_SECONDS = 180
BUDGET_STUDENTS = 100


def projected(seconds: float, students: int) -> float:
    """Segundos para :data:`BUDGET_STUDENTS` entregas al mismo ritmo."""
    return seconds / max(1, students) * BUDGET_STUDENTS


def make_class(module_id: str, students: int, folder: Path) -> None:
    """Escribe ``students`` entregas variadas de ``module_id`` en ``folder``."""
    # Las correctas del banco de respuestas, no la solución publicada: copiarla
    # en un ejercicio largo puntúa 0 (ver autograder/integrity.py).
    from tests.notebooks import honest_answers

    solutions = honest_answers(module_id)
    half = dict(list(solutions.items())[: len(solutions) // 2])
    released = release_path(module_id)
    for index in range(students):
        nb = nbformat.read(released, as_version=4)
        answers = (solutions, half, {})[index % 3]
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in answers:
                cell.source = answers[grade_id]
        nbformat.write(nb, folder / f"estudiante{index:03d}.ipynb")


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


def main(module_ids: list[str], students: int, jobs: int) -> int:
    """Mide e imprime el rendimiento de la calificación de cada módulo."""
    from autograder.course import module_ids as modules

    print(
        f"{students} entregas por módulo, {jobs} trabajos a la vez, "
        f"{os.cpu_count()} núcleos"
    )
    outside = []
    for module_id in module_ids or modules():
        figures = grading_figures(module_id, students, jobs)
        seconds = float(figures["seconds"])  # type: ignore[arg-type]
        per_100 = projected(seconds, students)
        within = per_100 <= BUDGET_SECONDS
        outside += [] if within else [module_id]
        print(
            f"{module_id}: {seconds:.1f} s · {seconds / max(1, students):.2f} s "
            f"por entrega · para {BUDGET_STUDENTS}: {per_100:.0f} s "
            f"(presupuesto {BUDGET_SECONDS} s: {'dentro' if within else 'FUERA'})",
            flush=True,
        )
        if figures["n_problems"]:
            print(
                f"  ⚠ {figures['n_problems']} entregas con incidencias: "
                f"{figures['problems']}"
            )
    if outside:
        print(f"Fuera del presupuesto: {', '.join(outside)}")
    return 0
