"""Califica una carpeta de entregas de un módulo: CSV de notas y retroalimentación.

Es el camino sencillo: cada entrega se califica con la cadena de nbgrader
configurada en ``autograder/nbgrader_config.py``, una tras otra, en un espacio
de trabajo propio (se rehace en cada ejecución, así que repetir da lo mismo).
"""

from __future__ import annotations

import csv
import logging
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
from nbgrader.coursedir import CourseDirectory

from autograder.config import GRADING, SOLUTIONS, load_config

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
FIXED_COLUMNS = ["student_id", "module", "score", "max_score", "status", "reason"]


@dataclass
class Result:
    """La nota de una entrega y, si algo falló, por qué."""

    student_id: str
    score: float = 0.0
    max_score: float = 0.0
    status: str = "ok"
    reason: str = ""
    cells: dict[str, float | None] = field(default_factory=dict)


def grade_cells(module_id: str) -> list[tuple[str, float]]:
    """``(grade_id, puntos)`` de cada celda calificada del módulo, en orden."""
    nb = nbformat.read(SOLUTIONS / module_id / f"{module_id}.ipynb", as_version=4)
    return [
        (meta["grade_id"], float(meta["points"]))
        for meta in (cell.metadata.get("nbgrader", {}) for cell in nb.cells)
        if meta.get("grade")
    ]


def collect(module_id: str, submissions: Path, scratch: Path) -> dict[str, Path]:
    """Encuentra las entregas: ``<id>.ipynb`` o ``<id>/<módulo>.ipynb`` (o un zip)."""
    if submissions.is_file() and zipfile.is_zipfile(submissions):
        unpacked = scratch / "unzipped"
        with zipfile.ZipFile(submissions) as archive:
            archive.extractall(unpacked)
        roots = [p for p in unpacked.iterdir() if not p.name.startswith(("_", "."))]
        # Un zip que envuelve todo en una sola carpeta: entrar en ella.
        if (
            len(roots) == 1
            and roots[0].is_dir()
            and not (roots[0] / f"{module_id}.ipynb").exists()
        ):
            unpacked = roots[0]
        submissions = unpacked
    if not submissions.is_dir():
        raise SystemExit(
            f"No encuentro la carpeta de entregas «{submissions}». Pasa una carpeta "
            "con un <id>.ipynb por estudiante, o <id>/<módulo>.ipynb, o un .zip."
        )
    found: dict[str, Path] = {}
    for path in sorted(submissions.iterdir()):
        if path.is_file() and path.suffix == ".ipynb":
            found[path.stem] = path
        elif path.is_dir() and (path / f"{module_id}.ipynb").is_file():
            found[path.name] = path / f"{module_id}.ipynb"
    return found


def _precheck(module_id: str, path: Path) -> str:
    """Motivo por el que una entrega no se puede calificar, o ``""`` si se puede."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:  # JSON corrupto, archivo vacío, formato raro...
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return f"El archivo no es un cuaderno de Jupyter válido ({first_line[:120]})."
    expected = {grade_id for grade_id, _ in grade_cells(module_id)}
    present = {cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells}
    if not expected & present:
        return (
            f"El cuaderno no tiene ninguna celda de {module_id}: ¿es el de otro módulo?"
        )
    return ""


def _quiet(converter) -> None:
    converter.log.setLevel(logging.ERROR)


def grade(module_id: str, submissions: Path, out: Path | None = None) -> list[Result]:
    """Califica las entregas de ``module_id`` y escribe notas y retroalimentación.

    Args:
        module_id: el módulo, p. ej. ``"01_bandidos"``.
        submissions: carpeta (o zip) de entregas.
        out: carpeta de salida; por defecto ``.grading/<módulo>/``. Se escriben
            ``grades.csv`` y ``feedback/<id>.html``.

    Returns:
        Un :class:`Result` por entrega, en orden de id.
    """
    if not (SOLUTIONS / module_id / f"{module_id}.ipynb").exists():
        raise SystemExit(f"No existe el módulo «{module_id}» en solutions/.")
    out = (out or GRADING / module_id).resolve()
    work = out / "_work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    feedback_dir = out / "feedback"
    if feedback_dir.exists():
        shutil.rmtree(feedback_dir)
    feedback_dir.mkdir(parents=True)

    config = load_config()
    config.CourseDirectory.root = str(work)
    config.CourseDirectory.source_directory = str(SOLUTIONS)
    config.CourseDirectory.release_directory = "release"
    config.CourseDirectory.submitted_directory = "submitted"
    config.CourseDirectory.autograded_directory = "autograded"
    config.CourseDirectory.feedback_directory = "feedback"
    config.CourseDirectory.db_url = f"sqlite:///{work / 'gradebook.db'}"
    config.GenerateAssignment.force = True
    config.Autograde.force = True
    config.GenerateFeedback.force = True

    def coursedir(student_id: str = ".") -> CourseDirectory:
        directory = CourseDirectory(config=config)
        directory.assignment_id = module_id
        directory.student_id = student_id
        return directory

    generator = GenerateAssignment(coursedir=coursedir(), config=config)
    _quiet(generator)
    generator.start()

    cells = grade_cells(module_id)
    max_score = sum(points for _, points in cells)
    results: list[Result] = []
    for student_id, path in collect(module_id, Path(submissions), work).items():
        result = Result(student_id, max_score=max_score)
        results.append(result)
        if not STUDENT_ID.match(student_id):
            result.status, result.reason = "error", "Id de estudiante no válido."
            continue
        reason = _precheck(module_id, path)
        if reason:
            result.status, result.reason = "error", reason
            continue
        target = work / "submitted" / student_id / module_id / f"{module_id}.ipynb"
        target.parent.mkdir(parents=True)
        shutil.copyfile(path, target)
        try:
            for step in (Autograde, GenerateFeedback):
                converter = step(coursedir=coursedir(student_id), config=config)
                _quiet(converter)
                converter.start()
        except Exception as error:  # nbgrader avisa con NbGraderException
            result.status = "error"
            result.reason = f"nbgrader no pudo calificar la entrega: {error}"[:300]
            continue
        _read_scores(result, module_id, config.CourseDirectory.db_url)
        feedback = work / "feedback" / student_id / module_id / f"{module_id}.html"
        if feedback.exists():
            shutil.copyfile(feedback, feedback_dir / f"{student_id}.html")

    _write_csv(out / "grades.csv", module_id, results, [g for g, _ in cells])
    return results


def _read_scores(result: Result, module_id: str, db_url: str) -> None:
    with Gradebook(db_url) as gradebook:
        try:
            notebook = gradebook.find_submission_notebook(
                module_id, module_id, result.student_id
            )
        except MissingEntry:
            result.status, result.reason = "error", "No quedó nota en el gradebook."
            return
        for grade_entry in notebook.grades:
            result.cells[grade_entry.name] = grade_entry.score
        result.score = float(notebook.score)
        pending = [g.name for g in notebook.grades if g.needs_manual_grade]
        if pending:
            result.reason = "Pendiente de corrección manual: " + ", ".join(pending)


def _write_csv(
    path: Path, module_id: str, results: list[Result], grade_ids: list[str]
) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(FIXED_COLUMNS + grade_ids)
        for r in results:
            per_cell = [
                "" if r.cells.get(g) is None else f"{r.cells[g]:g}" for g in grade_ids
            ]
            writer.writerow(
                [
                    r.student_id,
                    module_id,
                    f"{r.score:g}",
                    f"{r.max_score:g}",
                    r.status,
                    r.reason,
                    *per_cell,
                ]
            )
