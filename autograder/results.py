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
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from autograder.course import grade_cells

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


@dataclass
class Result:
    """La nota de una entrega y, si algo falló, por qué.

    Attributes:
        student_id: el id de la entrega (ver :mod:`autograder.collect`).
        score: los puntos, contando las notas manuales ya puestas.
        max_score: los puntos del módulo.
        status: ``"ok"``, ``"revisar"``, ``"killed"``, ``"timeout"``,
            ``"error"``, ``"invalid"`` o ``"wrong_module"``.
        reason: por qué el estado no es ``"ok"`` (o lo que hay que mirar), en
            español, para la docente.
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
    status: str = "ok"
    reason: str = ""
    cells: dict[str, float | None] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    diagnostics: dict[str, str] = field(default_factory=dict)
    incidents: list[str] = field(default_factory=list)
    findings: list[dict] = field(default_factory=list)

    @classmethod
    def from_dict(cls, row: dict) -> Result:
        """Un ``Result`` de una fila de ``resultados.json`` (también antiguo)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in row.items() if k in known})


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
                    r.status,
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
                    status=row["status"],
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
    (out / RESULTS).write_text(
        json.dumps([asdict(r) for r in results], ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
