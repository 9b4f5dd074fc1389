"""Preprocesadores propios del curso para la cadena de calificación de nbgrader."""

from __future__ import annotations

import copy
import functools
import tempfile
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import DeduplicateIds, NbGraderPreprocessor
from traitlets import Bool, Integer, List, Unicode

from autograder import forkserver
from autograder.audit import NOTES_CELL_ID, locate
from autograder.course import (
    exercise_cells,
    grade_id_of,
    is_graded,
    is_nbgrader_cell,
    notebook_name,
)
from autograder.demos import demo_cell_ids
from autograder.execute import SKIP_TAG
from autograder.integrity import (
    Finding,
    delegated_test_finding,
    guard_test_cells,
    inspect_submission,
    read_guard_marks,
    unfinished_test_finding,
    zero_cell,
)
from autograder.results import ExecutionStatus, Status
from autograder.sandbox import ExecutionError, Limits, Sandbox, execute_notebook
from autograder.sources import SLOW_TAG

SKIPPED_SOURCE = (
    "# Celda de entrenamiento o demostración larga: no se ejecuta al calificar."
)
SKIPPED_DEMO = "# Demo: al calificar no hace falta (ver autograder/demos.py)."


def clear_skip_tags(nb: NotebookNode) -> None:
    """Quita :data:`SKIP_TAG` de todas las celdas: una entrega no elige qué
    celdas no se ejecutan."""
    for cell in nb.cells:
        tags = cell.metadata.get("tags")
        if tags and SKIP_TAG in tags:
            cell.metadata["tags"] = [tag for tag in tags if tag != SKIP_TAG]


def skip_cell(cell: NotebookNode, note: str) -> None:
    """Deja en ``cell`` solo la nota ``note`` y la marca para no ejecutarla:
    una celda de comentario también costaría un viaje al kernel (unas 60 en un
    cuaderno largo, en cada una de cien entregas)."""
    cell.source = note
    cell.metadata["tags"] = [*cell.metadata.get("tags", []), SKIP_TAG]


def slow_cell_ids(nb: NotebookNode) -> set[str]:
    """Los ids de las celdas de código con la etiqueta «slow»."""
    return {
        cell.get("id", "")
        for cell in nb.cells
        if cell.cell_type == "code" and SLOW_TAG in cell.metadata.get("tags", [])
    }


def _source_path(source_root: str, resources: dict) -> Path | None:
    info = resources.get("nbgrader", {})
    if not source_root or "assignment" not in info:
        return None
    path = Path(source_root) / info["assignment"] / notebook_name(info["notebook"])
    return path if path.exists() else None


@functools.lru_cache(maxsize=4)
def _read_source(
    path: Path, mtime_ns: int
) -> tuple[NotebookNode, frozenset[str], tuple[str, ...]]:
    """El cuaderno fuente, los ids de sus demos y los módulos que importa,
    leídos y analizados una vez por proceso (y por versión del archivo): en un
    lote de cien entregas del mismo módulo, el análisis de las demos (``ast`` y
    ``symtable`` de todo el cuaderno) costaba casi un segundo por entrega."""
    source = nbformat.read(path, as_version=4)
    return source, frozenset(demo_cell_ids(source)), forkserver.preload_for(source)


def _cached_source(source_root: str, resources: dict):
    path = _source_path(source_root, resources)
    return _read_source(path, path.stat().st_mtime_ns) if path else None


def warm_source_cache(source_root: str, module_id: str) -> None:
    """Lee y analiza el cuaderno fuente en el proceso que luego se bifurca en
    los de trabajo: lo heredan hecho."""
    resources = {"nbgrader": {"assignment": module_id, "notebook": module_id}}
    _cached_source(source_root, resources)


class SkipSlowCells(NbGraderPreprocessor):
    """Vacía las celdas lentas y las demos antes de ejecutar una entrega.

    Una celda se salta si lleva la etiqueta «slow» en la entrega o si su id es
    el de una celda «slow» del cuaderno fuente (así borrar la etiqueta no hace
    que se entrene al calificar). También se salta una demo que calificar no
    necesita (ver :mod:`autograder.demos`), pero solo si la entrega la trae
    igual que la fuente. Las celdas de nbgrader nunca se saltan: una etiqueta
    no puede esquivar una prueba.
    """

    source_root = Unicode("", help="Carpeta de los cuadernos fuente (solutions/).").tag(
        config=True
    )

    def preprocess(self, nb: NotebookNode, resources: dict):
        cached = _cached_source(self.source_root, resources)
        source, demos, _ = cached if cached else (None, frozenset(), ())
        slow = slow_cell_ids(source) if source is not None else set()
        original = {c.get("id"): c.source for c in source.cells} if source else {}
        clear_skip_tags(nb)
        for cell in nb.cells:
            if cell.cell_type != "code" or is_nbgrader_cell(cell):
                continue
            tagged = SLOW_TAG in cell.metadata.get("tags", [])
            untouched_demo = cell.get("id") in demos and cell.source == original.get(
                cell.get("id")
            )
            if tagged or cell.get("id") in slow:
                skip_cell(cell, SKIPPED_SOURCE)
            elif untouched_demo:
                skip_cell(cell, SKIPPED_DEMO)
        return nb, resources


class RemoveGradingNotes(NbGraderPreprocessor):
    """Quita la celda de intentos registrados (solo para la docente) antes de
    que ``nbgrader generate_feedback`` haga la retroalimentación."""

    def preprocess(self, nb: NotebookNode, resources: dict):
        nb.cells = [cell for cell in nb.cells if cell.get("id") != NOTES_CELL_ID]
        return nb, resources


class DeduplicateGradeIds(DeduplicateIds):
    """``DeduplicateIds`` de nbgrader, sin dejar metadatos vacíos.

    Si un estudiante duplica una celda de pruebas, nbgrader deja la copia con
    ``metadata.nbgrader = {}`` y más adelante falla al buscar su ``grade_id``.
    Aquí la copia pasa a ser una celda normal, sin metadatos de nbgrader.
    """

    def preprocess(self, nb: NotebookNode, resources: dict):
        nb, resources = super().preprocess(nb, resources)
        for cell in nb.cells:
            if "nbgrader" in cell.metadata and not cell.metadata.nbgrader:
                del cell.metadata["nbgrader"]
        return nb, resources


def move_stderr_to_stdout(nb: NotebookNode) -> bool:
    """Pasa a stdout lo que las celdas de pruebas escribieron en stderr.

    nbgrader puntúa 0 una celda de pruebas con cualquier texto en stderr. Las
    pruebas del curso fallan lanzando excepciones, nunca escribiendo en stderr,
    así que un aviso o un ``print`` a stderr del código del estudiante no debe
    costarle los puntos: se conserva, marcado, en la salida normal.

    Returns:
        ``True`` si había algo en stderr.
    """
    moved = False
    for cell in nb.cells:
        if cell.cell_type != "code" or not is_graded(cell):
            continue
        for output in cell.outputs:
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                output["name"] = "stdout"
                output["text"] = "[stderr] " + output["text"]
                moved = True
    return moved


class SandboxedExecute(NbGraderPreprocessor):
    """Ejecuta la entrega aislada (ver :mod:`autograder.sandbox`) y vigilada.

    Sustituye al ``Execute`` de nbgrader en la cadena de calificación. Antes de
    ejecutar, lee el código de la entrega (:mod:`autograder.integrity`): un
    ejercicio respondido con la implementación de referencia puntúa 0, y el
    código que escribe en módulos o en el intérprete deja la entrega en
    «revisar». Cada celda de pruebas se ejecuta con comprobaciones recién
    importadas y debe terminar con su marca.

    Si el cuaderno entero no se puede ejecutar (tiempo total agotado, el
    ejecutor muere), todas sus celdas de código reciben un error con el motivo,
    así que puntúan 0 y la retroalimentación lo explica. El estado, las
    incidencias, los intentos y los hallazgos quedan en ``workdir/_estado.json``
    (un :class:`autograder.results.ExecutionStatus`).
    """

    workdir = Unicode("", help="Carpeta de trabajo de esta entrega.").tag(config=True)
    source_root = Unicode("", help="Carpeta de los cuadernos fuente (solutions/).").tag(
        config=True
    )
    use_sandbox = Bool(True, help="Aislar con bubblewrap.").tag(config=True)
    hide = List(Unicode(), help="Carpetas que la entrega no debe ver.").tag(config=True)
    cell_timeout = Integer(60, help="Segundos por celda.").tag(config=True)
    notebook_timeout = Integer(600, help="Segundos por cuaderno.").tag(config=True)
    memory_bytes = Integer(3 * 1024**3, help="Memoria del kernel.").tag(config=True)
    processes = Integer(256, help="Procesos e hilos.").tag(config=True)
    warm_kernels = Bool(
        False,
        help="Bifurcar cada kernel de un servidor que ya cargó los módulos del "
        "cuaderno (autograder/forkserver.py), con un sandbox propio por entrega. "
        "Lo enciende `python -m autograder grade` para el lote; apagado (un "
        "autograde suelto desde Formgrader) no queda ningún servidor vivo.",
    ).tag(config=True)
    server_root = Unicode("", help="Carpeta de los servidores de kernels.").tag(
        config=True
    )

    def preprocess(self, nb: NotebookNode, resources: dict):
        workdir = Path(self.workdir or tempfile.mkdtemp(prefix="entrega-"))
        limits = Limits(
            cell_timeout=self.cell_timeout,
            notebook_timeout=self.notebook_timeout,
            memory_bytes=self.memory_bytes,
            processes=self.processes,
        )
        sandbox = (
            Sandbox(hide=[Path(p) for p in self.hide]) if self.use_sandbox else None
        )
        cached = _cached_source(self.source_root, resources)
        source = copy.deepcopy(cached[0]) if cached else None
        exercises = exercise_cells(source) if source is not None else []
        findings = inspect_submission(nb, exercises) if exercises else []
        plan = guard_test_cells(nb, source, exercises) if source is not None else None

        status = ExecutionStatus()
        attempts: list[dict] = []
        try:
            preload = cached[2] if self.warm_kernels and cached else ()
            executed = execute_notebook(
                nb,
                workdir / "sandbox",
                limits,
                sandbox,
                preload,
                Path(self.server_root) if self.server_root else None,
            )
            nb.cells = executed.cells
            attempts = executed.metadata.get("autograder_audit", [])
            state = executed.metadata.get("autograder_execution", "ok")
            if state == "dead_kernel":
                status.status = Status.KILLED
                status.reason = (
                    "El kernel murió durante la ejecución (¿memoria o procesos "
                    "agotados?); lo que faltaba no se ejecutó."
                )
            elif state != "ok":
                status.status = Status.ERROR
                status.reason = (
                    "La comunicación con el kernel se rompió a mitad "
                    f"(¿procesos creados con fork?): {state}"[:300]
                )
        except ExecutionError as error:
            status.status, status.reason = Status(error.status), error.reason
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs = []
                    cell.execution_count = None
        if plan is not None:
            _apply_guard(nb, plan, findings)
        _zero_delegated(nb, findings)
        # Lo que el registro de intentos anotó (autograder/audit.py), con su
        # celda: para la docente, nunca para la retroalimentación.
        status.attempts = locate(attempts, nb)
        if move_stderr_to_stdout(nb):
            status.incidents.append(
                "escribió en stderr o lanzó avisos en una celda de pruebas (no "
                "cuenta como fallo)"
            )
        # nbgrader da todos los puntos a una celda de pruebas sin salidas: una
        # que no llegó a ejecutarse (el kernel murió antes) debe puntuar 0.
        for cell in nb.cells:
            if (
                cell.cell_type == "code"
                and is_graded(cell)
                and (cell.get("execution_count") is None)
            ):
                reason = status.reason or "La celda no llegó a ejecutarse."
                cell.outputs = [
                    nbformat.v4.new_output(
                        "error",
                        ename="ExecutionError",
                        evalue=f"No se ejecutó: {reason}",
                        traceback=[f"No se ejecutó: {reason}"],
                    )
                ]
        status.findings = findings
        status.write(workdir)
        return nb, resources


def _apply_guard(nb: NotebookNode, plan, findings: list[Finding]) -> None:
    """Lee las marcas de las celdas de pruebas y anota lo que no cuadra."""
    guard = read_guard_marks(nb, plan)
    cells = {grade_id_of(c): c for c in nb.cells}
    for grade_id in guard.unfinished:
        finding = unfinished_test_finding(grade_id)
        zero_cell(cells[grade_id], finding.message)
        findings.append(finding)
    for grade_id, what in guard.delegated.items():
        findings.append(delegated_test_finding(grade_id, what))


def _zero_delegated(nb: NotebookNode, findings: list[Finding]) -> None:
    """Las celdas de pruebas de un ejercicio respondido con la referencia: 0."""
    reasons: dict[str, str] = {}
    for finding in findings:
        if finding.kind.zeroes_exercise:
            for grade_id in finding.grade_ids:
                reasons.setdefault(grade_id, finding.message)
    for cell in nb.cells:
        grade_id = grade_id_of(cell)
        if grade_id in reasons and is_graded(cell):
            zero_cell(
                cell,
                "Este ejercicio se respondió con la implementación de referencia "
                f"de helpers, así que no puntúa. {reasons[grade_id]}",
            )
