"""La autocomprobación del estudiante: ``python -m autograder check CUADERNO``.

Ejecuta el cuaderno guardado en un kernel nuevo, con los mismos límites (y el
mismo aislamiento) que al calificar, sin las celdas de entrenamiento ni las
demos que ninguna comprobación necesita (como al calificar), y dice
qué ejercicios pasan sus comprobaciones visibles y cuántos puntos cubren. Solo
ejecuta lo que hay en el cuaderno: nunca ve ni revela pruebas ocultas.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.course import (
    GRADING,
    NotebookModel,
    cell_titles,
    is_graded,
    is_nbgrader_cell,
    nbgrader_meta,
)
from autograder.demos import demo_cell_ids
from autograder.preprocessors import (
    SKIPPED_DEMO,
    SKIPPED_SOURCE,
    SLOW_TAG,
    clear_skip_tags,
    skip_cell,
)
from autograder.results import diagnostic
from autograder.sandbox import ExecutionError, Limits, Sandbox, execute_notebook


@dataclass
class CheckResult:
    """El resultado de una celda de comprobación visible. ``form_only``: pasó
    una comprobación que solo mira la forma de la respuesta (un cuestionario),
    no si acierta."""

    grade_id: str
    title: str
    points: float
    passed: bool
    message: str
    form_only: bool = False


def _form_only(cell: nbformat.NotebookNode) -> bool:
    """Si la celda imprimió la línea de una comprobación que solo mira la forma
    (``helpers.checks.quiz.FORM_ONLY_MARK``)."""
    from helpers.checks.quiz import FORM_ONLY_MARK

    text = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
    return any(line.startswith(FORM_ONLY_MARK) for line in text.splitlines())


def skip_unneeded_cells(nb: nbformat.NotebookNode) -> None:
    """Vacía las celdas «slow» y las demos que ninguna comprobación necesita.

    Las demos se buscan en el propio cuaderno (no en la fuente, que el
    estudiante no tiene): una demo que cambió para definir algo que usa su
    solución ya no es prescindible y se ejecuta. Las celdas de nbgrader nunca
    se vacían.
    """
    demos = demo_cell_ids(nb)
    clear_skip_tags(nb)
    for cell in nb.cells:
        if cell.cell_type != "code" or is_nbgrader_cell(cell):
            continue
        if SLOW_TAG in cell.metadata.get("tags", []):
            skip_cell(cell, SKIPPED_SOURCE)
        elif cell.get("id") in demos:
            skip_cell(cell, SKIPPED_DEMO)


def run_checks(path: Path, limits: Limits | None = None) -> list[CheckResult]:
    """Ejecuta el cuaderno y devuelve el resultado de cada celda de comprobación."""
    nb = nbformat.read(path, as_version=4)
    # El título del ejercicio, sin numerar sus celdas de pruebas: main() junta
    # en una línea las de un mismo ejercicio.
    titles = cell_titles(nb, numbered=False)
    skip_unneeded_cells(nb)
    sandbox = None if Sandbox.unavailable_reason() else Sandbox(hide=[GRADING])
    with tempfile.TemporaryDirectory(prefix="autocomprobacion-") as scratch:
        executed = execute_notebook(nb, Path(scratch), limits or Limits(), sandbox)
    results = []
    for cell in executed.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type != "code" or not is_graded(cell):
            continue
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        form_only = not errors and _form_only(cell)
        message = diagnostic(errors[0]) if errors else "correcto"
        results.append(
            CheckResult(
                meta["grade_id"],
                titles.get(meta["grade_id"], meta["grade_id"]),
                float(meta.get("points", 0)),
                not errors,
                "bien escrita; se califica al corregir" if form_only else message,
                form_only,
            )
        )
    return results


def _points(points: float) -> str:
    return f"{points:g} punto" + ("" if points == 1 else "s")


def _written_points(notebook: Path) -> float:
    """Puntos de las celdas de texto que se corrigen a mano."""
    model = NotebookModel.of(nbformat.read(notebook, as_version=4))
    return sum(cell.points for cell in model.graded if cell.manual)


def main(notebook: Path) -> int:
    """Imprime, en español, el resultado de la autocomprobación."""
    if not notebook.exists():
        print(f"No encuentro «{notebook}».")
        return 2
    print(
        f"Comprobando {notebook.name} tal como está guardado (Ctrl+S para guardar), "
        "en un kernel nuevo y, como al calificar, sin las celdas de entrenamiento ni "
        "las demos que ninguna comprobación necesita..."
    )
    try:
        results = run_checks(notebook)
    except ExecutionError as error:
        print(f"✘ {error.reason}")
        return 1
    if not results:
        print("Este cuaderno no tiene celdas de comprobación.")
        return 0
    # Un ejercicio puede tener varias celdas de comprobación: una línea por
    # ejercicio, con la suma de sus puntos.
    exercises: dict[str, list[CheckResult]] = {}
    for r in results:
        exercises.setdefault(r.title, []).append(r)
    for title, cells in exercises.items():
        failed = [r for r in cells if not r.passed]
        points = sum(r.points for r in cells)
        shown = failed[0] if failed else next((r for r in cells if r.form_only), None)
        mark = "✘" if failed else "✎" if shown else "✔"
        detail = f": {shown.message}" if shown else ""
        print(f"  {mark} {title} ({_points(points)}){detail}")
    covered = sum(r.points for r in results if r.passed and not r.form_only)
    form_only = sum(r.points for r in results if r.form_only)
    total = sum(r.points for r in results)
    print(
        f"Las comprobaciones visibles que pasan cubren {covered:g} de "
        f"{_points(total)}. Al calificar se añaden pruebas ocultas con otros casos, "
        "así que la nota puede ser menor."
    )
    if form_only:
        print(
            f"Las preguntas bien escritas (✎, {_points(form_only)}) no cuentan "
            "ahí: su comprobación visible solo mira la forma, y se califican al "
            "corregir."
        )
    written = _written_points(notebook)
    if written:
        print(
            f"Además, las respuestas escritas valen {_points(written)}: las "
            "corrige tu profesor."
        )
    return 0
