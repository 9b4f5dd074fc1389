"""El gradebook persistente de cada módulo y las notas que se ponen a mano.

Cada entrega se califica con un gradebook de nbgrader de usar y tirar. Este
módulo guarda lo que importa en uno que dura: ``<out>/gradebook.db`` (por
defecto ``.grading/<módulo>/gradebook.db``), con las estudiantes, su entrega y
los puntos automáticos de cada celda. Ahí viven también los puntos que se ponen
a mano (``Grade.manual_score`` de nbgrader, lo mismo que escribe Formgrader):
volver a calificar actualiza los puntos automáticos y respeta los manuales.

Las notas manuales se ponen con ``python -m autograder manual MÓDULO notas.csv``.
El CSV (UTF-8, separado por comas o por punto y coma) tiene estas columnas:

* ``student_id``: el id de ``grades.csv``.
* ``grade_id``: la celda calificada, p. ej. ``why_lone_failure``.
* ``points``: los puntos, entre 0 y los de la celda (vale ``1,5`` o ``1.5``).
  Vacío borra la nota manual: la celda vuelve a su nota automática.
* ``comment`` (opcional): un comentario para la estudiante. Solo en las celdas
  de respuesta (las de solución); vacío lo borra.

Después se reescriben ``grades.csv`` y ``resultados.json`` con esas notas. Sin
archivo (``python -m autograder manual MÓDULO``) solo se reescriben, con las
notas manuales que ya tenga el gradebook (por ejemplo, las de Formgrader).
"""

from __future__ import annotations

import csv
import difflib
import json
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import (
    Comment,
    Grade,
    Gradebook,
    MissingEntry,
    Student,
    SubmittedAssignment,
    SubmittedNotebook,
)
from sqlalchemy.exc import SAWarning

from autograder.collect import Collected, write_manifest
from autograder.config import load_config
from autograder.course import GRADING, SOLUTIONS, read_module
from autograder.results import Result, load_results, write_results

GRADEBOOK = "gradebook.db"
MARK_COLUMNS = ("student_id", "grade_id", "points")


def gradebook_url(out: Path) -> str:
    """La URL de SQLAlchemy del gradebook persistente de ``out``."""
    return f"sqlite:///{Path(out) / GRADEBOOK}"


def _course_id() -> str:
    return str(load_config().CourseDirectory.course_id)


def open_gradebook(out: Path) -> Gradebook:
    """El gradebook persistente de ``out`` (se crea si no existe)."""
    return Gradebook(gradebook_url(out), _course_id())


# ---------------------------------------------------------------------------
# La estructura del módulo y las notas automáticas
# ---------------------------------------------------------------------------


def _source_cells(module_id: str) -> tuple[dict[str, tuple[float, str]], list[str]]:
    """Celdas calificadas (``grade_id → (puntos, tipo)``) y de solución del módulo."""
    model = read_module(module_id)
    graded = {cell.grade_id: (cell.points, cell.cell_type) for cell in model.graded}
    return graded, list(model.solution_ids)


def sync_structure(gb: Gradebook, module_id: str) -> None:
    """Pone en el gradebook el módulo con sus celdas, como en ``solutions/``.

    Si el módulo cambió de celdas desde la última vez, las entregas ya
    guardadas reciben las celdas nuevas y pierden las que ya no existen.
    """
    graded, solutions = _source_cells(module_id)
    gb.update_or_create_assignment(module_id)
    try:
        notebook = gb.find_notebook(module_id, module_id)
    except MissingEntry:
        notebook = gb.add_notebook(module_id, module_id)
    for cell in list(notebook.grade_cells):
        if cell.name not in graded:
            for grade in list(cell.grades):
                gb.db.delete(grade)
            gb.db.delete(cell)
    for cell in list(notebook.solution_cells):
        if cell.name not in solutions:
            for comment in list(cell.comments):
                gb.db.delete(comment)
            gb.db.delete(cell)
    gb.db.commit()
    for name, (points, cell_type) in graded.items():
        gb.update_or_create_grade_cell(
            name, module_id, module_id, max_score=points, cell_type=cell_type
        )
    for name in solutions:
        gb.update_or_create_solution_cell(name, module_id, module_id)
    notebook = gb.find_notebook(module_id, module_id)
    for submitted in notebook.submissions:
        with_grade = {grade.cell_id for grade in submitted.grades}
        for cell in notebook.grade_cells:
            if cell.id not in with_grade:
                gb.db.add(Grade(cell_id=cell.id, notebook=submitted))
        with_comment = {comment.cell_id for comment in submitted.comments}
        for cell in notebook.solution_cells:
            if cell.id not in with_comment:
                gb.db.add(Comment(cell_id=cell.id, notebook=submitted))
    gb.db.commit()


def _new_submission(gb: Gradebook, notebook, student) -> SubmittedNotebook:
    """Una entrega nueva, como ``Gradebook.add_submission`` pero sin commit."""
    with warnings.catch_warnings():
        # Como en nbgrader, la entrega se arma antes de entrar en la sesión y
        # SQLAlchemy avisa; se guarda entera al añadirla.
        warnings.simplefilter("ignore", SAWarning)
        submission = SubmittedAssignment(
            assignment=notebook.assignment, student=student
        )
        submitted = SubmittedNotebook(notebook=notebook, assignment=submission)
        for cell in notebook.grade_cells:
            Grade(cell=cell, notebook=submitted)
        for cell in notebook.solution_cells:
            Comment(cell=cell, notebook=submitted)
        gb.db.add(submission)
    return submitted


def record(
    out: Path, module_id: str, results: list[Result], collected: Collected
) -> None:
    """Guarda una calificación en el gradebook persistente y aplica las notas
    manuales.

    Escribe los puntos automáticos de cada celda de cada entrega (las notas
    manuales se quedan como estaban) y, después, cambia los ``Result`` para
    que lleven las notas manuales: la nota de la celda, la nota total y
    ``pending``, las celdas que aún esperan su nota manual. También escribe
    ``entregas.json`` (de dónde sale cada entrega y qué archivos no se
    calificaron).

    Args:
        out: la carpeta de salida de la calificación.
        module_id: el módulo calificado.
        results: los ``Result`` de la calificación (se modifican).
        collected: lo que encontró :func:`autograder.collect.collect`.
    """
    out = Path(out)
    template = out / "_work" / GRADEBOOK
    if not (out / GRADEBOOK).exists() and template.exists():
        # El gradebook de usar y tirar de esta calificación ya tiene el módulo;
        # copiarlo ahorra crear uno (nbgrader lanza alembic, unos segundos).
        shutil.copyfile(template, out / GRADEBOOK)
    with open_gradebook(out) as gb:
        sync_structure(gb, module_id)
        # Todo en una transacción: con cien entregas, un commit por estudiante
        # (lo que hace la API de nbgrader) tarda segundos.
        notebook = gb.find_notebook(module_id, module_id)
        students = {student.id: student for student in gb.db.query(Student)}
        submitted_by_id = {
            submitted.student.id: submitted for submitted in notebook.submissions
        }
        for result in results:
            student = students.get(result.student_id)
            if student is None:
                student = Student(id=result.student_id)
                gb.db.add(student)
            origin = collected.origins.get(result.student_id)
            if origin is not None:
                student.lms_user_id = origin.lms_id or None
                student.last_name = origin.name or None
            submitted = submitted_by_id.get(result.student_id)
            if submitted is None:
                submitted = _new_submission(gb, notebook, student)
            # Las celdas que nbgrader no pudo calificar (las respuestas
            # escritas) llegan en ``pending``: sin nota automática.
            pending = set(result.pending)
            for grade in submitted.grades:
                if grade.name in pending:
                    grade.auto_score = None
                else:
                    # Sin celdas (archivo roto, otro módulo): cero, como hace
                    # nbgrader cuando falta el cuaderno.
                    grade.auto_score = result.cells.get(grade.name, 0.0)
                grade.needs_manual_grade = (
                    grade.manual_score is None and grade.auto_score is None
                )
        gb.db.commit()
        apply_marks(gb, module_id, results)
    write_manifest(out, module_id, collected)
    write_formgrader_config(out)


FORMGRADER_CONFIG = """\
# Lo escribe `python -m autograder grade`: Formgrader abierto en esta carpeta
# (ver CONTRIBUTING.md) muestra las entregas de la última calificación con el
# gradebook persistente, y lo que pongas allí a mano es una nota manual más.
from pathlib import Path

c = get_config()  # noqa: F821
HERE = Path(__file__).resolve().parent
c.CourseDirectory.root = str(HERE / "_work")
c.CourseDirectory.db_url = f"sqlite:///{{HERE / 'gradebook.db'}}"
c.CourseDirectory.source_directory = {source}
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
"""


def write_formgrader_config(out: Path) -> None:
    """Escribe ``<out>/nbgrader_config.py``, para abrir Formgrader en ``out``."""
    text = FORMGRADER_CONFIG.format(source=json.dumps(str(SOLUTIONS)))
    (Path(out) / "nbgrader_config.py").write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------------
# Aplicar las notas manuales a los resultados
# ---------------------------------------------------------------------------


def apply_scores(result: Result, scores: dict[str, float], pending: list[str]) -> None:
    """Pone en ``result`` las notas de celda de ``scores`` y recalcula el resto.

    La nota total cambia lo mismo que cambian las celdas (así se respeta
    cualquier ajuste que la calificación hiciera a la nota total) y nunca baja
    de cero. ``result.pending`` pasa a ser ``pending``: las celdas que siguen
    sin corregir a mano.
    """
    offset = result.score - sum(v or 0.0 for v in result.cells.values())
    result.cells.update(scores)
    result.score = max(0.0, offset + sum(v or 0.0 for v in result.cells.values()))
    result.pending = list(pending)


def apply_marks(gb: Gradebook, module_id: str, results: list[Result]) -> None:
    """Aplica a los ``Result`` las notas (automáticas y manuales) del gradebook."""
    for result in results:
        try:
            submitted = gb.find_submission_notebook(
                module_id, module_id, result.student_id
            )
        except MissingEntry:
            continue
        scores: dict[str, float] = {}
        pending: list[str] = []
        for grade in submitted.grades:
            if grade.manual_score is not None:
                scores[grade.name] = grade.manual_score + (grade.extra_credit or 0.0)
            elif grade.name in result.cells:
                # Sin nota (pendiente), la celda vale 0, como en nbgrader.
                scores[grade.name] = grade.auto_score or 0.0
            if grade.manual_score is None and grade.auto_score is None:
                pending.append(grade.name)
        apply_scores(result, scores, pending)


def manual_comments(out: Path, module_id: str) -> dict[str, dict[str, str]]:
    """``student_id → {grade_id: comentario}`` de los comentarios puestos a mano."""
    found: dict[str, dict[str, str]] = {}
    if not (Path(out) / GRADEBOOK).exists():
        return found
    with open_gradebook(out) as gb:
        for submission in gb.find_assignment(module_id).submissions:
            for notebook in submission.notebooks:
                for comment in notebook.comments:
                    if comment.manual_comment:
                        found.setdefault(submission.student.id, {})[comment.name] = (
                            comment.manual_comment
                        )
    return found


# ---------------------------------------------------------------------------
# La orden «manual»
# ---------------------------------------------------------------------------


@dataclass
class Mark:
    """Una fila del CSV de notas manuales."""

    line: int
    student_id: str
    grade_id: str
    points: float | None
    comment: str


def _delimiter(header: str) -> str:
    return ";" if header.count(";") > header.count(",") else ","


def read_marks(path: Path) -> list[Mark]:
    """Lee el CSV de notas manuales; un error en español si su forma no vale."""
    path = Path(path)
    if not path.is_file():
        raise SystemExit(f"No encuentro el archivo de notas «{path}».")
    text = path.read_text(encoding="utf-8-sig")
    lines = text.splitlines()
    if not lines:
        raise SystemExit(f"El archivo de notas «{path}» está vacío.")
    reader = csv.DictReader(lines, delimiter=_delimiter(lines[0]))
    columns = [c.strip() for c in reader.fieldnames or []]
    missing = [c for c in MARK_COLUMNS if c not in columns]
    if missing:
        raise SystemExit(
            f"Al archivo de notas «{path}» le faltan columnas: {', '.join(missing)}. "
            "La primera fila debe ser: student_id,grade_id,points,comment "
            "(comment es opcional)."
        )
    marks: list[Mark] = []
    errors: list[str] = []
    for line, row in enumerate(reader, start=2):
        if None in row:
            errors.append(
                f"Fila {line}: tiene más columnas que la cabecera. ¿Un comentario "
                "con comas o punto y coma sin comillas?"
            )
            continue
        row = {k.strip(): (v or "").strip() for k, v in row.items()}
        if not any(row.values()):
            continue
        raw = row["points"]
        points = None
        if raw:
            try:
                points = float(raw.replace(",", "."))
            except ValueError:
                errors.append(f"Fila {line}: «{raw}» no es un número de puntos.")
                continue
        marks.append(
            Mark(
                line, row["student_id"], row["grade_id"], points, row.get("comment", "")
            )
        )
    if errors:
        raise SystemExit("\n".join(errors))
    return marks


def _close(word: str, options: list[str]) -> str:
    near = difflib.get_close_matches(word, options, n=3, cutoff=0.6)
    return f" ¿Quizá {' o '.join(f'«{n}»' for n in near)}?" if near else ""


def _check_marks(gb: Gradebook, module_id: str, marks: list[Mark]) -> list[str]:
    """Los errores de ``marks`` frente al gradebook (lista vacía si todo vale)."""
    assignment = gb.find_assignment(module_id)
    students = sorted(s.student.id for s in assignment.submissions)
    notebook = gb.find_notebook(module_id, module_id)
    cells = {cell.name: cell.max_score for cell in notebook.grade_cells}
    commented = {cell.name for cell in notebook.solution_cells}
    errors: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for mark in marks:
        where = f"Fila {mark.line}"
        if mark.student_id not in students:
            errors.append(
                f"{where}: no hay ninguna entrega de «{mark.student_id}» en el "
                f"gradebook de {module_id}.{_close(mark.student_id, students)}"
            )
        if mark.grade_id not in cells:
            errors.append(
                f"{where}: «{mark.grade_id}» no es una celda calificada de "
                f"{module_id}.{_close(mark.grade_id, list(cells))} Las celdas "
                f"calificadas son: {', '.join(cells)}."
            )
            continue
        top = cells[mark.grade_id]
        if mark.points is not None and not 0 <= mark.points <= top:
            errors.append(
                f"{where}: los puntos de «{mark.grade_id}» van de 0 a {top:g}, "
                f"y pone {mark.points:g}."
            )
        if mark.comment and mark.grade_id not in commented:
            errors.append(
                f"{where}: «{mark.grade_id}» es una celda de pruebas y nbgrader "
                "solo guarda comentarios en las celdas de respuesta: deja el "
                "comentario vacío."
            )
        key = (mark.student_id, mark.grade_id)
        if key in seen:
            errors.append(
                f"{where}: «{mark.student_id}» y «{mark.grade_id}» ya aparecen "
                f"en la fila {seen[key]}."
            )
        seen[key] = mark.line
    return errors


def enter_marks(
    module_id: str, marks_path: Path | None = None, out: Path | None = None
) -> list[Result]:
    """Guarda las notas manuales de ``marks_path`` y reescribe las notas.

    Args:
        module_id: el módulo, p. ej. ``"07_grpo"``.
        marks_path: el CSV de notas manuales (ver el docstring del módulo);
            ``None`` solo vuelve a aplicar las que ya tiene el gradebook.
        out: la carpeta de la calificación; por defecto ``.grading/<módulo>/``.

    Returns:
        Los ``Result`` con las notas manuales aplicadas, en orden de id.
    """
    out = Path(out or GRADING / module_id).resolve()
    if not (out / GRADEBOOK).exists():
        raise SystemExit(
            f"No hay gradebook en «{out}»: primero califica con "
            f"python -m autograder grade {module_id} ENTREGAS (con la misma --out)."
        )
    marks = read_marks(marks_path) if marks_path else []
    results = load_results(out)
    with open_gradebook(out) as gb:
        errors = _check_marks(gb, module_id, marks)
        if errors:
            raise SystemExit(
                f"No se guardó ninguna nota: el archivo «{marks_path}» tiene "
                f"{len(errors)} error(es).\n" + "\n".join(errors)
            )
        for mark in marks:
            grade = gb.find_grade(mark.grade_id, module_id, module_id, mark.student_id)
            grade.manual_score = mark.points
            grade.needs_manual_grade = mark.points is None and grade.auto_score is None
            try:
                comment = gb.find_comment(
                    mark.grade_id, module_id, module_id, mark.student_id
                )
            except MissingEntry:
                continue
            comment.manual_comment = mark.comment or None
        gb.db.commit()
        apply_marks(gb, module_id, results)
    write_results(out, module_id, results)
    return results
