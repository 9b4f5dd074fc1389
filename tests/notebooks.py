"""Herramientas de las pruebas para leer los cuadernos de ``solutions/``.

Un cuaderno se parte en ejercicios: cada celda de solución de código con las
celdas de prueba (calificadas) que la siguen hasta la próxima solución.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode

# Las rutas y los módulos son los de autograder.course; se reexportan para las
# pruebas, con sus nombres de siempre.
from autograder.course import (  # noqa: F401
    COURSE,
    REPO,
    SOLUTIONS,
    module_ids,
    nbgrader_meta,
)
from autograder.course import release_path as course_path  # noqa: F401
from autograder.course import source_path as solution_path  # noqa: F401
from autograder.sources import (  # noqa: F401
    HIDDEN_REGION,
    SOLUTION_REGION,
    student_version,
)


def grade_batch(
    module_id: str, submissions: Path, out: Path, *options: str, timeout: int = 900
) -> dict[str, dict[str, str]]:
    """Califica una carpeta de entregas como la docente, en un proceso aparte
    (``python -m autograder grade``), y devuelve las filas de ``grades.csv``
    por estudiante. Falla, con lo que dijo la orden, si no acabó bien."""
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            module_id,
            str(submissions),
            "--out",
            str(out),
            *options,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert completed.returncode == 0, completed.stderr
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def read(path: Path) -> NotebookNode:
    return nbformat.read(path, as_version=nbformat.NO_CONVERT)


def nbgrader(cell: NotebookNode) -> dict:
    return nbgrader_meta(cell)


@dataclass
class Exercise:
    """Una celda de solución y sus celdas de prueba."""

    grade_id: str
    solution: str
    tests: list[tuple[str, str, float]] = field(default_factory=list)

    @property
    def points(self) -> float:
        return sum(points for _, _, points in self.tests)


def exercises(nb: NotebookNode) -> list[Exercise]:
    """Los ejercicios de código del cuaderno, en orden."""
    found: list[Exercise] = []
    for cell in nb.cells:
        meta = nbgrader(cell)
        if cell.cell_type != "code":
            continue
        if meta.get("solution") and not meta.get("grade"):
            found.append(Exercise(meta["grade_id"], cell.source))
        elif meta.get("grade") and found:
            found[-1].tests.append((meta["grade_id"], cell.source, meta["points"]))
    return [ex for ex in found if ex.tests]


def solution_functions(module_id: str, namespace: dict) -> dict:
    """Ejecuta las soluciones (versión del estudiante) de ``module_id`` en
    ``namespace`` (los nombres que da la preparación del cuaderno) y lo
    devuelve, con las funciones definidas: para comparar el cuaderno con las
    referencias de ``helpers``."""
    namespace = {"__name__": "__main__", **namespace}
    for exercise in exercises(read(solution_path(module_id))):
        exec(
            compile(student_version(exercise.solution), exercise.grade_id, "exec"),
            namespace,
        )
    return namespace


def honest_answers(module_id: str) -> dict[str, str]:
    """Respuestas correctas escritas por «otra persona»: la primera correcta del
    banco de cada ejercicio (``tests/banks``), no la solución publicada.

    Una entrega que copia la solución publicada de un ejercicio largo puntúa 0
    en ese ejercicio (ver :mod:`autograder.integrity`), así que las pruebas y
    el banco de calificación usan estas para las entregas honestas.

    Se prefiere, de las correctas, la primera que no importa nada que el
    cuaderno no importe ya (quien hace los bandidos no ha visto PyTorch): así
    la clase del banco de calificación se parece a una de verdad.
    """
    from tests.banks import bank

    right = bank(module_id).RIGHT
    source = read(solution_path(module_id))
    setup = setup_source(source)

    def plain(answer) -> bool:
        imports = [
            line.split()[1].split(".")[0]
            for line in answer.source.splitlines()
            if line.startswith(("import ", "from "))
        ]
        return all(name in setup for name in imports)

    answers = {}
    for ex in exercises(source):
        options = right.get(ex.grade_id) or []
        chosen = next((a for a in options if plain(a)), options[0] if options else None)
        answers[ex.grade_id] = chosen.source if chosen else student_version(ex.solution)
    return answers


def fill_solutions(nb: NotebookNode, answers: dict[str, str]) -> NotebookNode:
    """Copia de ``nb`` con las celdas indicadas (por ``grade_id``) rellenadas."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        grade_id = nbgrader(cell).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id].strip("\n")
    return nb


def setup_source(nb: NotebookNode) -> str:
    """La celda de preparación: la primera celda de código."""
    return next(cell.source for cell in nb.cells if cell.cell_type == "code")


@dataclass
class Outcome:
    """Lo que pasó al ejecutar una celda de pruebas."""

    grade_id: str
    error: BaseException | None
    stderr: str


def run_exercise(
    nb: NotebookNode, exercise: Exercise, answer: str, visible_only: bool = False
) -> list[Outcome]:
    """Ejecuta las pruebas (visibles y ocultas) de ``exercise`` contra ``answer``.

    El espacio de nombres tiene la celda de preparación y las soluciones
    correctas de los demás ejercicios, como el cuaderno de un estudiante que
    solo se ha equivocado en este. Con ``visible_only``, sin las pruebas
    ocultas: lo que ve el estudiante en su cuaderno.
    """
    namespace: dict = {"__name__": "__main__"}
    exec(compile(setup_source(nb), "<setup>", "exec"), namespace)
    for other in exercises(nb):
        source = answer if other.grade_id == exercise.grade_id else other.solution
        exec(compile(student_version(source), f"<{other.grade_id}>", "exec"), namespace)
    outcomes = []
    for grade_id, source, _ in exercise.tests:
        if visible_only:
            source = HIDDEN_REGION.sub("", source)
        stderr = io.StringIO()
        error = None
        with (
            contextlib.redirect_stderr(stderr),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            try:
                exec(compile(source, f"<{grade_id}>", "exec"), namespace)
            except BaseException as caught:  # noqa: BLE001 - lo informamos
                error = caught
        outcomes.append(Outcome(grade_id, error, stderr.getvalue()))
    return outcomes
