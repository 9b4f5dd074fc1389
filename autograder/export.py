"""Exportar las notas de una calificación al LMS: Moodle, Canvas o un CSV.

Las notas son las de la última calificación (``resultados.json``, ver
:mod:`autograder.results`) con las notas manuales ya aplicadas, y los números
del LMS salen de ``entregas.json`` (ver :mod:`autograder.collect`).
"""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path
from typing import Any

from autograder.audit import ATTEMPT_PREFIX
from autograder.collect import Origin, count, read_manifest
from autograder.course import GRADING, grade_cells
from autograder.gradebook import manual_comments
from autograder.results import SEPARATOR, Result, Status, load_results

# ---------------------------------------------------------------------------
# Exportar las notas para el LMS
# ---------------------------------------------------------------------------
#
# Moodle: la «hoja de calificaciones para trabajar sin conexión» de una tarea
# (Calificación → «Subir hoja de calificaciones», plugin assignfeedback_offline,
# mod/assign/feedback/offline/importgradeslib.php). El importador busca las
# columnas por su nombre, en el idioma de quien importa: «Identifier»
# (get_string('recordid', 'assign')), «Grade» (get_string('gradenoun')) y
# «Last modified (grade)» (get_string('lastmodifiedgrade', 'assign')) son
# obligatorias, y cada comentario de retroalimentación va en la columna con el
# nombre de su plugin («Feedback comments»). El identificador es
# get_string('hiddenuser', 'assign') seguido del número de participante:
# «Participant 12345» en inglés, «Participante12345» en español (el importador
# quita tantos caracteres como tenga esa palabra). Moodle se salta, sin error,
# una nota mayor que la máxima de la tarea, una vacía y una que ya se cambió en
# Moodle después de la fecha de «Last modified (grade)».
#
# Canvas: el CSV de «Import» del Gradebook (app/models/gradebook_importer.rb):
# cabecera «Student, ID, SIS User ID, SIS Login ID, Section» y una columna por
# tarea, «Nombre (id de la tarea)» o solo el nombre (si no existe, Canvas crea
# una tarea nueva). La fila opcional «Points Possible» da los puntos máximos.
# Canvas busca a cada estudiante por su id de usuario (columna ID), después por
# los ids del SIS y por último por el nombre.

FORMATS = ("moodle", "canvas", "csv")
MOODLE_WORDS = {
    "en": {
        "id": "Identifier",
        "name": "Full name",
        "grade": "Grade",
        "max": "Maximum Grade",
        "modified": "Last modified (grade)",
        "comments": "Feedback comments",
        "participant": "Participant ",
    },
    "es": {
        "id": "Identificador",
        "name": "Nombre completo",
        "grade": "Calificación",
        "max": "Calificación máxima",
        "modified": "Última modificación (calificación)",
        "comments": "Comentarios de retroalimentación",
        "participant": "Participante",
    },
}
CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CSV_COLUMNS = ["student_id", "lms", "lms_id", "name", "path"]


def _points(value: float) -> str:
    """Puntos para un archivo de importación: punto decimal, sin ceros de más."""
    return f"{round(value, 2):g}"


def _spanish(value: float) -> str:
    """Puntos para leer: coma decimal."""
    return _points(value).replace(".", ",")


def _scaled(value: float, max_score: float, max_grade: float | None) -> float:
    if max_grade is None or not max_score:
        return value
    return value * max_grade / max_score


def by_participant(
    results: list[Result], origins: dict[str, Origin], lms: str
) -> tuple[dict[str, tuple[Origin, Any]], list[str]]:
    """Una fila por participante del LMS: ``lms_id → (origen, Result)``.

    Si una persona tiene varias entregas, va la de más nota. Devuelve también
    los avisos: entregas sin número del LMS (no van) y personas con varias.
    """
    chosen: dict[str, tuple[Origin, Any]] = {}
    several: dict[str, list[str]] = {}
    missing: list[str] = []
    for result in results:
        origin = origins.get(result.student_id)
        if origin is None or origin.lms != lms or not origin.lms_id:
            missing.append(result.student_id)
            continue
        several.setdefault(origin.lms_id, []).append(result.student_id)
        best = chosen.get(origin.lms_id)
        if best is None or result.score > best[1].score:
            chosen[origin.lms_id] = (origin, result)
    label = {"moodle": "número de participante de Moodle", "canvas": "id de Canvas"}
    warnings = []
    if missing:
        warnings.append(
            f"Sin {label[lms]}, no van en el archivo; ponlas a mano en el LMS "
            f"({count(len(missing), 'entrega')}): {', '.join(missing)}."
        )
    for number, ids in several.items():
        if len(ids) > 1:
            kept = chosen[number][1].student_id
            warnings.append(
                f"{number} tiene {len(ids)} entregas ({', '.join(ids)}): va la de "
                f"más nota, {kept}."
            )
    return chosen, warnings


def _feedback(result, comments: dict[str, str]) -> str:
    """El comentario para la estudiante: su nota y los comentarios manuales."""
    text = f"{_spanish(result.score)} de {_spanish(result.max_score)} puntos."
    for cell, comment in comments.items():
        text += f" {cell}: {comment}"
    return text


def moodle_rows(
    results: list[Result],
    origins: dict[str, Origin],
    comments: dict[str, dict[str, str]],
    *,
    lang: str = "es",
    max_grade: float | None = None,
    modified: str,
) -> tuple[list[list[str]], list[str]]:
    """Filas (con cabecera) de la hoja de calificaciones de Moodle, y avisos."""
    words = MOODLE_WORDS[lang]
    chosen, warnings = by_participant(results, origins, "moodle")
    header = ("id", "name", "grade", "max", "modified", "comments")
    rows = [[words[key] for key in header]]
    for number in sorted(chosen, key=int):
        origin, result = chosen[number]
        top = result.max_score
        rows.append(
            [
                f"{words['participant']}{number}",
                origin.name,
                _points(_scaled(result.score, top, max_grade)),
                _points(max_grade if max_grade is not None else top),
                modified,
                _feedback(result, comments.get(result.student_id, {})),
            ]
        )
    return rows, warnings


def canvas_rows(
    results: list[Result],
    origins: dict[str, Origin],
    *,
    assignment: str,
    max_grade: float | None = None,
) -> tuple[list[list[str]], list[str]]:
    """Filas (con cabecera y «Points Possible») del CSV de Canvas, y avisos."""
    chosen, warnings = by_participant(results, origins, "canvas")
    top = results[0].max_score if results else 0.0
    possible = max_grade if max_grade is not None else top
    rows = [
        [*CANVAS_STUDENT_COLUMNS, assignment],
        ["Points Possible", "", "", "", "", _points(possible)],
    ]
    for number in sorted(chosen, key=int):
        origin, result = chosen[number]
        score = _scaled(result.score, result.max_score, max_grade)
        name = origin.name or result.student_id
        rows.append([name, number, "", "", "", _points(score)])
    return rows, warnings


def csv_rows(
    results: list[Result], origins: dict[str, Origin], grade_ids: list[str]
) -> list[list[str]]:
    """Filas (con cabecera) del CSV genérico: una por entrega, una columna por celda."""
    rows = [
        [*CSV_COLUMNS, "score", "max_score", "status", "reason", "pending"] + grade_ids,
    ]
    for result in results:
        origin = origins.get(result.student_id, Origin(""))
        cells = [
            "" if result.cells.get(g) is None else _points(result.cells[g])
            for g in grade_ids
        ]
        rows.append(
            [
                result.student_id,
                origin.lms,
                origin.lms_id,
                origin.name,
                origin.path,
                _points(result.score),
                _points(result.max_score),
                str(result.status),
                result.reason,
                SEPARATOR.join(result.pending),
                *cells,
            ]
        )
    return rows


def export(
    module_id: str,
    fmt: str,
    out: Path | None = None,
    dest: Path | None = None,
    *,
    lang: str = "es",
    max_grade: float | None = None,
    assignment: str | None = None,
) -> tuple[Path, list[str]]:
    """Escribe el archivo de importación de notas de un LMS.

    Las notas son las de la última calificación de ``out`` (``resultados.json``)
    con las notas manuales ya aplicadas, y los números del LMS salen de
    ``entregas.json``.

    Args:
        module_id: el módulo, p. ej. ``"07_grpo"``.
        fmt: ``"moodle"``, ``"canvas"`` o ``"csv"``.
        out: la carpeta de la calificación; por defecto ``.grading/<módulo>/``.
        dest: el archivo que escribir; por defecto ``<out>/<formato>.csv``
            (``notas.csv`` para ``csv``).
        lang: idioma de Moodle al importar (``"es"`` o ``"en"``): los nombres
            de las columnas son los de la interfaz de quien importa.
        max_grade: la nota máxima de la tarea en el LMS; si se da, las notas se
            reescalan de los puntos del módulo a esa escala.
        assignment: la columna de la tarea en Canvas, mejor con su id, p. ej.
            ``"GRPO (4321)"``; por defecto, el id del módulo.

    Returns:
        ``(archivo escrito, avisos)``.
    """
    if fmt not in FORMATS:
        raise SystemExit(f"Formato «{fmt}» desconocido: elige {', '.join(FORMATS)}.")
    if lang not in MOODLE_WORDS:
        raise SystemExit(f"Idioma «{lang}» desconocido: elige es o en.")
    if max_grade is not None and max_grade <= 0:
        raise SystemExit("La nota máxima (--max-grade) tiene que ser positiva.")
    out = Path(out or GRADING / module_id).resolve()
    results = load_results(out)
    origins, _ = read_manifest(out)
    warnings: list[str] = []
    if fmt == "moodle":
        rows, warnings = moodle_rows(
            results,
            origins,
            manual_comments(out, module_id),
            lang=lang,
            max_grade=max_grade,
            modified=datetime.now().astimezone().isoformat(timespec="seconds"),
        )
    elif fmt == "canvas":
        rows, warnings = canvas_rows(
            results, origins, assignment=assignment or module_id, max_grade=max_grade
        )
    else:
        rows = csv_rows(results, origins, [g for g, _ in grade_cells(module_id)])
    pending = [r.student_id for r in results if r.pending]
    if pending:
        warnings.append(
            f"Con celdas sin corregir a mano, que su nota aún no cuenta "
            f"({count(len(pending), 'entrega')}): {', '.join(pending)}."
        )
    problems = [r.student_id for r in results if r.status is not Status.OK]
    if problems:
        warnings.append(
            f"Con incidencias, mira grades.csv antes de importar "
            f"({count(len(problems), 'entrega')}): {', '.join(problems)}."
        )
    # Los intentos que anotó el registro (autograder/audit.py) no cambian la
    # nota ni el estado, pero conviene mirarlos antes de cerrar el módulo.
    attempted = [
        r.student_id
        for r in results
        if any(i.startswith(ATTEMPT_PREFIX) for i in r.incidents)
    ]
    if attempted:
        warnings.append(
            "Con intentos registrados al calificar (red, escrituras fuera de su "
            "carpeta...; no cambian la nota), mira incidents en grades.csv "
            f"({count(len(attempted), 'entrega')}): {', '.join(attempted)}."
        )
    dest = Path(dest or out / ("notas.csv" if fmt == "csv" else f"{fmt}.csv"))
    dest.parent.mkdir(parents=True, exist_ok=True)
    with dest.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return dest, warnings
