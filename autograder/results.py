"""Las notas de una calificación: el registro :class:`Result` y sus archivos.

Cada entrega calificada es un :class:`Result`. Se guarda de dos formas en la
carpeta de la calificación:

* ``grades.csv``, para la docente: columnas fijas (:data:`FIXED_COLUMNS`) y una
  por celda calificada. ``pending`` lista las celdas que esperan una nota
  manual (separadas por `` | ``, como ``incidents``).
* ``resultados.json``, completo, para volver a cargarlo (notas manuales,
  exportar al LMS).

Lo que una celda pendiente significa se guarda en ``pending``, nunca en el
texto de ``reason``: reescribir una frase no cambia lo que hace el programa.
Por lo mismo, el estado es un :class:`Status` y los hallazgos de integridad
son :class:`~autograder.integrity.Finding`: el programa decide por el tipo,
nunca por la frase.

La ejecución de una entrega (en el proceso de nbgrader) deja a la
calificación un :class:`ExecutionStatus` en ``_estado.json``
(:data:`STATUS_FILE`).
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from pathlib import Path

from autograder.course import grade_cells
from autograder.integrity import Finding, FindingKind

GRADES = "grades.csv"
RESULTS = "resultados.json"
FIXED_COLUMNS = [
    "student_id",
    "module",
    "score",
    "max_score",
    "status",
    "reason",
    "incidents",
    "pending",
]
SEPARATOR = " | "
STATUS_FILE = "_estado.json"


class Status(StrEnum):
    """El estado de una entrega calificada.

    El valor es la palabra que se guarda en ``grades.csv`` y en
    ``resultados.json``: no cambia, así las calificaciones anteriores se leen
    igual. Lo que la estudiante lee de cada estado está en
    :data:`autograder.feedback.STATUS_WORDS`.
    """

    OK = "ok"
    """Se ejecutó entera y no hay nada que mirar."""
    REVIEW = "revisar"
    """Se ejecutó, pero la integridad encontró algo que la docente debe mirar."""
    KILLED = "killed"
    """El kernel murió a mitad (memoria o procesos agotados)."""
    TIMEOUT = "timeout"
    """El cuaderno entero superó su límite de tiempo."""
    ERROR = "error"
    """No se pudo ejecutar o calificar entera."""
    INVALID = "invalid"
    """El archivo no es un cuaderno que se pueda leer."""
    WRONG_MODULE = "wrong_module"
    """El cuaderno no tiene ninguna celda del módulo."""

    @property
    def was_run(self) -> bool:
        """¿Se llegó a ejecutar la entrega? (Si no, no entra en las estadísticas.)"""
        return self not in (Status.INVALID, Status.WRONG_MODULE)


def finding_to_dict(finding: Finding) -> dict:
    """Un hallazgo como se guarda en ``_estado.json`` y ``resultados.json``."""
    return {
        "kind": str(finding.kind),
        "cell": finding.cell,
        "message": finding.message,
        "grade_ids": list(finding.grade_ids),
    }


def finding_from_dict(row: dict) -> Finding:
    """El hallazgo que guardó :func:`finding_to_dict`."""
    return Finding(
        kind=FindingKind(row["kind"]),
        cell=row["cell"],
        message=row["message"],
        grade_ids=list(row.get("grade_ids", [])),
    )


@dataclass
class ExecutionStatus:
    """Lo que la ejecución de una entrega deja a la calificación.

    Lo escribe :class:`autograder.preprocessors.SandboxedExecute` en la carpeta
    de trabajo de la entrega (:data:`STATUS_FILE`), dentro del proceso de
    nbgrader, y lo lee :func:`autograder.grade.grade_one` después.

    Attributes:
        status: :attr:`Status.OK`, :attr:`Status.KILLED`, :attr:`Status.TIMEOUT`
            o :attr:`Status.ERROR` (el estado «revisar» lo decide la
            calificación, a partir de los hallazgos).
        reason: por qué el estado no es ``OK``, en español.
        incidents: las incidencias de la ejecución que no cambian el estado.
        attempts: los intentos que anotó el registro, con su celda (los
            diccionarios de :func:`autograder.audit.locate`).
        findings: los hallazgos de integridad.
    """

    status: Status = Status.OK
    reason: str = ""
    incidents: list[str] = field(default_factory=list)
    attempts: list[dict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.status = Status(self.status)

    def to_dict(self) -> dict:
        """El diccionario de ``_estado.json``."""
        return {
            "status": str(self.status),
            "reason": self.reason,
            "incidents": list(self.incidents),
            "attempts": list(self.attempts),
            "findings": [finding_to_dict(f) for f in self.findings],
        }

    @classmethod
    def from_dict(cls, data: dict) -> ExecutionStatus:
        """El estado que guardó :meth:`to_dict` (las claves que falten, vacías)."""
        return cls(
            status=Status(data["status"]),
            reason=data.get("reason", ""),
            incidents=list(data.get("incidents", [])),
            attempts=list(data.get("attempts", [])),
            findings=[finding_from_dict(f) for f in data.get("findings", [])],
        )

    def write(self, folder: Path) -> None:
        """Escribe ``folder/_estado.json``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / STATUS_FILE).write_text(json.dumps(self.to_dict()), encoding="utf-8")

    @classmethod
    def read(cls, folder: Path) -> ExecutionStatus | None:
        """El estado de ``folder/_estado.json``, o ``None`` si no se escribió."""
        path = Path(folder) / STATUS_FILE
        if not path.exists():
            return None
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))


@dataclass
class Result:
    """La nota de una entrega y, si algo falló, por qué.

    Attributes:
        student_id: el id de la entrega (ver :mod:`autograder.collect`).
        score: los puntos, contando las notas manuales ya puestas.
        max_score: los puntos del módulo.
        status: un :class:`Status` (al crearlo vale también su palabra,
            ``"revisar"``).
        reason: por qué el estado no es ``OK`` (o lo que hay que mirar), en
            español, para la docente: sus frases separadas por ``; ``.
        cells: ``grade_id → puntos`` de cada celda calificada.
        pending: las celdas que esperan una nota manual (las respuestas
            escritas sin corregir); mientras tanto valen 0 en ``score``.
        diagnostics: ``grade_id → diagnóstico`` de las celdas que fallaron.
        incidents: las incidencias al ejecutar (tiempo, memoria, red...).
        findings: los hallazgos de integridad (:mod:`autograder.integrity`).
    """

    student_id: str
    score: float = 0.0
    max_score: float = 0.0
    status: Status = Status.OK
    reason: str = ""
    cells: dict[str, float | None] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    diagnostics: dict[str, str] = field(default_factory=dict)
    incidents: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.status = Status(self.status)

    def to_dict(self) -> dict:
        """La fila de ``resultados.json``: solo tipos de JSON."""
        row = asdict(self)
        row["status"] = str(self.status)
        row["findings"] = [finding_to_dict(f) for f in self.findings]
        return row

    @classmethod
    def from_dict(cls, row: dict) -> Result:
        """Un ``Result`` de una fila de ``resultados.json`` (también antiguo)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in row.items() if k in known}
        values["findings"] = [finding_from_dict(f) for f in row.get("findings", [])]
        return cls(**values)


def diagnostic(output) -> str:
    """La frase que resume un error: el diagnóstico de la comprobación si lo hay."""
    lines = [
        line for line in str(output.get("evalue", "")).splitlines() if line.strip()
    ]
    if output.get("ename") in ("AssertionError", "CheckError") and lines:
        # Las comprobaciones del curso ponen el caso y, en la última línea, el
        # error típico que lo explica.
        return lines[-1].strip()[:200]
    return f"{output.get('ename', 'Error')}: {lines[0][:150] if lines else ''}".strip()


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(SEPARATOR.strip()) if part.strip()]


def write_csv(
    path: Path, module_id: str, results: list[Result], grade_ids: list[str]
) -> None:
    """``grades.csv``: columnas fijas y luego una por celda calificada."""
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
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
                    str(r.status),
                    r.reason,
                    SEPARATOR.join(r.incidents),
                    SEPARATOR.join(r.pending),
                    *per_cell,
                ]
            )


def read_csv(path: Path) -> list[Result]:
    """Los ``Result`` de un ``grades.csv`` (sin diagnósticos ni hallazgos).

    Un ``grades.csv`` anterior a la columna ``pending`` se lee igual, con
    ``pending`` vacío: esa información solo estaba en la frase de ``reason``
    y no se deduce de la prosa. El gradebook la conserva:
    ``python -m autograder manual MÓDULO`` reescribe los archivos con ella.
    """
    with Path(path).open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        columns = list(reader.fieldnames or [])
        grade_ids = [c for c in columns if c not in FIXED_COLUMNS]
        results = []
        for row in reader:
            results.append(
                Result(
                    student_id=row["student_id"],
                    score=float(row["score"] or 0),
                    max_score=float(row["max_score"] or 0),
                    status=Status(row["status"]),
                    reason=row["reason"],
                    cells={
                        g: (float(row[g]) if row[g] not in ("", None) else None)
                        for g in grade_ids
                    },
                    pending=_split(row.get("pending") or ""),
                    incidents=_split(row.get("incidents") or ""),
                )
            )
    return results


def load_results(out: Path) -> list[Result]:
    """Los ``Result`` de la última calificación (``resultados.json``)."""
    path = Path(out) / RESULTS
    if not path.exists():
        raise SystemExit(
            f"No hay calificación en «{out}»: primero califica con "
            "python -m autograder grade MÓDULO ENTREGAS (con la misma --out)."
        )
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [Result.from_dict(row) for row in rows]


def write_results(out: Path, module_id: str, results: list[Result]) -> None:
    """Escribe ``grades.csv`` y ``resultados.json`` con ``results``."""
    out = Path(out)
    write_csv(out / GRADES, module_id, results, [g for g, _ in grade_cells(module_id)])
    write_json(out, results)


def write_json(out: Path, results: list[Result]) -> None:
    """Escribe ``resultados.json`` con ``results``."""
    (Path(out) / RESULTS).write_text(
        json.dumps([r.to_dict() for r in results], ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
