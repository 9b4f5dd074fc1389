"""Califica las entregas de un módulo: CSV de notas, retroalimentación e informe.

Cada entrega se califica en su propio proceso de trabajo, con su copia del
gradebook y su carpeta, y su código se ejecuta aislado (ver
:mod:`autograder.sandbox`). El espacio de trabajo se rehace en cada ejecución:
repetir la orden da el mismo resultado.

Este módulo orquesta y nadie lo importa: el modelo del curso está en
:mod:`autograder.course`, las notas en :mod:`autograder.results`, encontrar
las entregas en :mod:`autograder.collect` y el gradebook en
:mod:`autograder.gradebook`.
"""

from __future__ import annotations

import logging
import multiprocessing
import shutil
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import Autograde, GenerateAssignment
from nbgrader.coursedir import CourseDirectory

from autograder.audit import incident_phrase, notes_cell
from autograder.bytecode import compile_course
from autograder.collect import collect
from autograder.config import load_config
from autograder.course import (
    GRADING,
    SOLUTIONS,
    NotebookModel,
    grade_id_of,
    is_graded,
    notebook_name,
    read_source,
    release_path,
    source_path,
)
from autograder.feedback import write_feedback
from autograder.gradebook import record
from autograder.integrity import preload_references
from autograder.preprocessors import warm_source_cache
from autograder.report import write_report
from autograder.results import (
    GRADES,
    ExecutionStatus,
    Result,
    Status,
    diagnostic,
    write_csv,
    write_json,
)
from autograder.sandbox import Sandbox
from autograder.similarity import class_similarity, render_html

# Errores en las salidas que merecen una frase en la columna «reason»:
# (nombre del error, trozo del mensaje o "", frase).
NOTABLE_ERRORS = [
    ("CellTimeoutError", "", "una celda superó el límite de tiempo"),
    ("MemoryError", "", "se quedó sin memoria (límite del kernel)"),
    ("BlockingIOError", "", "intentó lanzar demasiados procesos"),
    ("PermissionError", "", "intentó leer o escribir fuera de su carpeta"),
    ("OSError", "Read-only file system", "intentó leer o escribir fuera de su carpeta"),
    ("FileNotFoundError", "", "intentó leer o escribir fuera de su carpeta"),
    ("ConnectionRefusedError", "", "intentó usar la red (desactivada al calificar)"),
    (
        "OSError",
        "Network is unreachable",
        "intentó usar la red (desactivada al calificar)",
    ),
    ("gaierror", "", "intentó usar la red (desactivada al calificar)"),
    ("ModuleNotFoundError", "", "importa un módulo que no existe"),
    ("ExecutionError", "", "no se pudo ejecutar el cuaderno"),
]


def notable_phrase(output) -> str | None:
    """La frase de :data:`NOTABLE_ERRORS` que describe un error, si la hay."""
    for ename, fragment, phrase in NOTABLE_ERRORS:
        if output.get("ename") == ename and fragment in str(output.get("evalue", "")):
            return phrase
    return None


def autograded_path(work: Path, module_id: str, student_id: str) -> Path:
    """El cuaderno calificado de una entrega, dentro de la carpeta de trabajo."""
    return Path(work) / "autograded" / student_id / module_id / notebook_name(module_id)


# ---------------------------------------------------------------------------
# Comprobar las entregas (encontrarlas es cosa de autograder.collect)
# ---------------------------------------------------------------------------


def precheck(module_id: str, path: Path) -> tuple[Status, str] | None:
    """``(estado, motivo)`` si la entrega no se puede calificar, o ``None``."""
    if path.stat().st_size == 0:
        return Status.INVALID, "El archivo está vacío."
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:  # JSON corrupto, formato raro...
        first_line = (str(error).strip().splitlines() or [""])[0]
        return (
            Status.INVALID,
            f"El archivo no es un cuaderno de Jupyter válido ({first_line[:120]}).",
        )
    expected = {grade_id_of(cell) for cell in read_source(module_id).cells}
    expected.discard(None)
    present = {grade_id_of(cell) for cell in nb.cells}
    if not expected & present:
        return (
            Status.WRONG_MODULE,
            f"El cuaderno no tiene ninguna celda de {module_id}: "
            "¿es el de otro módulo?",
        )
    return None


# ---------------------------------------------------------------------------
# Calificar una entrega (en un proceso de trabajo)
# ---------------------------------------------------------------------------


@dataclass
class Job:
    """Todo lo que necesita un proceso de trabajo para calificar una entrega."""

    module_id: str
    student_id: str
    work: str
    template_db: str
    hide: list[str]
    use_sandbox: bool
    max_score: float
    cell_timeout: int | None = None
    notebook_timeout: int | None = None


def _init_worker() -> None:
    """Los procesos de trabajo no escriben el registro de nbgrader ni avisos."""
    logging.getLogger().setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore")


def _config(job: Job, db_path: Path):
    config = load_config()
    config.CourseDirectory.root = job.work
    config.CourseDirectory.source_directory = str(SOLUTIONS)
    config.CourseDirectory.release_directory = "release"
    config.CourseDirectory.submitted_directory = "submitted"
    config.CourseDirectory.autograded_directory = "autograded"
    config.CourseDirectory.feedback_directory = "feedback"
    config.CourseDirectory.db_url = f"sqlite:///{db_path}"
    for converter in ("GenerateAssignment", "Autograde"):
        config[converter].force = True
    return config


def _coursedir(config, module_id: str, student_id: str) -> CourseDirectory:
    directory = CourseDirectory(config=config)
    directory.assignment_id = module_id
    directory.student_id = student_id
    return directory


def grade_one(job: Job) -> Result:
    """Califica la entrega ya copiada en ``work/submitted/<id>/<módulo>/``."""
    result = Result(job.student_id, max_score=job.max_score)
    own = Path(job.work) / "students" / job.student_id
    own.mkdir(parents=True, exist_ok=True)
    db_path = own / "gradebook.db"
    shutil.copyfile(job.template_db, db_path)
    config = _config(job, db_path)
    config.SandboxedExecute.workdir = str(own)
    config.SandboxedExecute.use_sandbox = job.use_sandbox
    config.SandboxedExecute.hide = job.hide
    # Un servidor de kernels ya cargados por proceso de trabajo, que muere con él.
    config.SandboxedExecute.warm_kernels = True
    config.SandboxedExecute.server_root = str(Path(job.work) / "_servidores")
    if job.cell_timeout:
        config.SandboxedExecute.cell_timeout = job.cell_timeout
    if job.notebook_timeout:
        config.SandboxedExecute.notebook_timeout = job.notebook_timeout
    try:
        converter = Autograde(
            coursedir=_coursedir(config, job.module_id, job.student_id),
            config=config,
        )
        converter.log.setLevel(logging.CRITICAL)
        converter.start()
    except Exception as error:  # nbgrader avisa con NbGraderException
        result.status = Status.ERROR
        result.reason = f"nbgrader no pudo calificar la entrega: {error}"[:300]
        return result
    _read_scores(result, job.module_id, db_path)
    # Las frases del motivo, cada una una vez; se juntan al final.
    reasons = [result.reason] if result.reason else []
    execution = ExecutionStatus.read(own)
    attempts: list[dict] = []
    if execution is not None:
        if execution.status is not Status.OK:
            result.status = execution.status
            reasons = [execution.reason]
            result.incidents.append(execution.reason)
        for incident in execution.incidents:
            _add_incident(result, reasons, incident)
        # Los intentos que anotó el registro (red, escrituras fuera de su
        # carpeta...), aunque el código se tragara el error: en incidents, no
        # en el motivo, que la retroalimentación enseña.
        attempts = execution.attempts
        result.incidents += [incident_phrase(a) for a in attempts]
        result.findings = execution.findings
        if result.findings:
            # Lo que hay que mirar va primero en el motivo; el estado «revisar»
            # no tapa uno peor (el kernel murió, el tiempo se agotó...).
            if result.status is Status.OK:
                result.status = Status.REVIEW
            summary = "; ".join(f.message for f in result.findings[:3])
            more = len(result.findings) - 3
            summary += f" (y {more} más)" if more > 0 else ""
            reasons.insert(0, f"Revisar: {summary}")
    autograded = autograded_path(Path(job.work), job.module_id, job.student_id)
    if autograded.exists():
        nb = nbformat.read(autograded, as_version=4)
        for phrase in _diagnose(result, nb):
            _add_incident(result, reasons, phrase)
        if attempts:
            # La docente los ve también en Formgrader, arriba del cuaderno.
            nb.cells.insert(0, notes_cell(attempts))
            nbformat.write(nb, autograded)
    result.reason = join_reasons(reasons)
    return result


def _read_scores(result: Result, module_id: str, db_path: Path) -> None:
    with Gradebook(f"sqlite:///{db_path}") as gradebook:
        try:
            notebook = gradebook.find_submission_notebook(
                module_id, module_id, result.student_id
            )
        except MissingEntry:
            result.status = Status.ERROR
            result.reason = "No quedó nota en el gradebook."
            return
        for grade_entry in notebook.grades:
            result.cells[grade_entry.name] = grade_entry.score
        result.score = float(notebook.score)
        # Las respuestas escritas: nbgrader no las puede calificar.
        result.pending = [g.name for g in notebook.grades if g.needs_manual_grade]


def _diagnose(result: Result, nb) -> list[str]:
    """Anota los diagnósticos de cada celda de prueba; devuelve las frases de
    los errores notables (:data:`NOTABLE_ERRORS`), cada una una vez."""
    notable: list[str] = []
    for cell in nb.cells:
        grade_id = grade_id_of(cell)
        for output in cell.get("outputs", []):
            if output.get("output_type") != "error":
                continue
            phrase = notable_phrase(output)
            if phrase:
                phrase = f"{phrase} (celda {grade_id or cell.get('id', '?')})"
            if phrase and phrase not in notable:
                notable.append(phrase)
            if grade_id and is_graded(cell):
                result.diagnostics.setdefault(grade_id, diagnostic(output))
    return notable


def _add_incident(result: Result, reasons: list[str], phrase: str) -> None:
    """Anota una incidencia en su lista y en las frases del motivo, sin repetirla.

    Una frase se repite si es la misma frase, no si aparece dentro de otra: el
    motivo puede citar código del estudiante o el mensaje de un error.
    """
    if phrase not in result.incidents:
        result.incidents.append(phrase)
    if phrase not in reasons:
        reasons.append(phrase)


def join_reasons(reasons: list[str]) -> str:
    """El motivo de una entrega: sus frases separadas por «; », con mayúscula
    inicial (las frases de en medio quedan como se escribieron)."""
    reason = "; ".join(phrase for phrase in reasons if phrase)
    return reason[:1].upper() + reason[1:]


# ---------------------------------------------------------------------------
# La orden completa
# ---------------------------------------------------------------------------


def grade(
    module_id: str,
    submissions: Path,
    out: Path | None = None,
    jobs: int = 2,
    use_sandbox: bool | None = None,
    cell_timeout: int | None = None,
    notebook_timeout: int | None = None,
    feedback_show_hidden: bool = False,
) -> list[Result]:
    """Califica las entregas de ``module_id`` y escribe notas, retroalimentación
    e informe de la clase.

    Args:
        module_id: el módulo, p. ej. ``"01_bandidos"``.
        submissions: carpeta (o zip) de entregas.
        out: carpeta de salida; por defecto ``.grading/<módulo>/``. Se escriben
            ``grades.csv``, ``feedback/<id>.html`` e ``report.html``.
        jobs: entregas que se califican a la vez.
        use_sandbox: ``None`` aísla si se puede (y avisa si no); ``False`` no
            aísla (solo para depurar).
        cell_timeout, notebook_timeout: límites de tiempo en segundos; por
            defecto, los de ``nbgrader_config.py``.
        feedback_show_hidden: la retroalimentación muestra también el código
            de las pruebas ocultas (por defecto no: así sirven otro año).

    Returns:
        Un :class:`Result` por entrega, en orden de id.
    """
    if not source_path(module_id).exists():
        raise SystemExit(f"No existe el módulo «{module_id}» en solutions/.")
    submissions = Path(submissions).resolve()
    out = (out or GRADING / module_id).resolve()
    work = out / "_work"
    for stale in (work, out / "feedback"):
        if stale.exists():
            shutil.rmtree(stale)
    work.mkdir(parents=True)
    (out / "feedback").mkdir()

    if use_sandbox is None:
        reason = Sandbox.unavailable_reason()
        use_sandbox = reason is None
        if reason:
            print(
                "⚠ ⚠ ⚠  ATENCIÓN: las entregas se ejecutarán SIN AISLAR: "
                f"{reason}. Solo se aplican límites de tiempo, memoria y procesos. "
                "No califiques así entregas en las que no confíes.",
                file=sys.stderr,
            )

    template_db = work / "gradebook.db"
    config = _config(
        Job(module_id, "", str(work), "", [], use_sandbox, 0.0), template_db
    )
    generator = GenerateAssignment(
        coursedir=_coursedir(config, module_id, "."), config=config
    )
    generator.log.setLevel(logging.ERROR)
    generator.start()

    source_nb = read_source(module_id)
    model = NotebookModel.of(source_nb)
    cells = [(cell.grade_id, cell.points) for cell in model.graded]
    max_score = model.max_score
    results: dict[str, Result] = {}
    pending: list[Job] = []
    hide = [str(work), str(out), str(submissions), str(SOLUTIONS), str(GRADING)]
    collected = collect(module_id, submissions, work)
    for student_id, path in collected.found.items():
        refused = precheck(module_id, path)
        if refused is not None:
            status, reason = refused
            results[student_id] = Result(
                student_id, max_score=max_score, status=status, reason=reason
            )
            continue
        target = work / "submitted" / student_id / module_id / notebook_name(module_id)
        target.parent.mkdir(parents=True)
        shutil.copyfile(path, target)
        pending.append(
            Job(
                module_id,
                student_id,
                str(work),
                str(template_db),
                hide,
                use_sandbox,
                max_score,
            )
        )

    # Los módulos de helpers (y PyTorch) se cargan una vez aquí, antes de crear
    # los procesos de trabajo: los heredan ya cargados al bifurcarse. Y el
    # código del curso queda compilado para los kernels (autograder/bytecode.py).
    compile_course()
    preload_references()
    warm_source_cache(str(SOLUTIONS), module_id)
    with ProcessPoolExecutor(
        max_workers=max(1, jobs),
        mp_context=multiprocessing.get_context("fork"),
        initializer=_init_worker,
    ) as pool:
        for result in pool.map(grade_one, pending):
            results[result.student_id] = result
            if not use_sandbox:
                result.reason = (result.reason + "; " if result.reason else "") + (
                    "calificado SIN aislamiento"
                )

    ordered = [results[s] for s in sorted(results)]
    # Gradebook persistente: puntos automáticos guardados y notas manuales aplicadas.
    record(out, module_id, ordered, collected)
    write_csv(out / GRADES, module_id, ordered, model.grade_ids)
    for result in ordered:
        autograded = autograded_path(work, module_id, result.student_id)
        write_feedback(
            out / "feedback" / f"{result.student_id}.html",
            module_id,
            result,
            nbformat.read(autograded, 4) if autograded.exists() else None,
            source_nb,
            show_hidden=feedback_show_hidden,
        )
    write_json(out, ordered)
    titles = model.titles
    write_report(
        out / "report.html",
        module_id,
        ordered,
        cells,
        use_sandbox,
        skipped=collected.skipped,
        titles=titles,
        similarity_html=_similarity_section(
            module_id, work, ordered, source_nb, titles
        ),
    )
    return ordered


def _similarity_section(
    module_id: str, work: Path, results: list[Result], source_nb, titles
) -> str:
    """El apartado «Parecidos entre entregas» del informe."""
    notebooks = {}
    for result in results:
        path = autograded_path(work, module_id, result.student_id)
        if path.exists():
            notebooks[result.student_id] = nbformat.read(path, 4)
    release_nb = nbformat.read(release_path(module_id), 4)
    found = class_similarity(module_id, notebooks, source_nb, release_nb)
    return render_html(found, titles)
