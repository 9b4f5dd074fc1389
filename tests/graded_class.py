"""Una clase de 01_bandidos calificada una sola vez para las pruebas de calificación.

``tests/test_grading_audit.py``, ``test_grading_integrity.py`` y
``test_grading_robustness.py`` califican entregas del mismo módulo. Cada una
escribe sus entregas (su función ``class_submissions``) y aquí se juntan en
una sola clase, que se califica una vez con ``python -m autograder grade`` (el
fixture ``graded_class`` de ``tests/conftest.py``). Calificar tiene un coste
fijo grande (crear el gradebook, importar helpers y PyTorch, el informe):
pagarlo una vez en vez de tres ahorra más de un minuto.

Los nombres de las entregas son únicos entre los tres archivos; si dos usan
el mismo nombre (``honesta``), tienen que ser el mismo cuaderno.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tests.notebooks import grade_batch

MODULE = "01_bandidos"
# El bucle infinito de la robustez se corta antes: 15 s por celda bastan de
# sobra a las demás entregas (sus celdas de pruebas tardan décimas).
OPTIONS = ("--jobs", "2", "--cell-timeout", "15")
DONE = "clase.json"


class Listener:
    """Un servidor TCP en 127.0.0.1 que anota si alguien se conecta."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.5)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self.running = False
        self.thread.join()
        self.server.close()


@dataclass
class GradedClass:
    """La clase calificada.

    Attributes:
        rows: las filas de ``grades.csv``, por estudiante.
        out: la carpeta de la calificación (``--out``).
        subs: la carpeta de las entregas.
        connections: las conexiones que recibió el servidor de la prueba de
            red (0: la red está cortada).
    """

    rows: dict[str, dict[str, str]]
    out: Path
    subs: Path
    connections: int


def _submissions(subs: Path, out: Path, port: int) -> dict[str, object]:
    from tests import (
        test_grading_audit,
        test_grading_integrity,
        test_grading_robustness,
    )

    merged: dict[str, object] = {}
    for found in (
        test_grading_audit.class_submissions(subs, out),
        test_grading_integrity.class_submissions(subs, out),
        test_grading_robustness.class_submissions(subs, out, port),
    ):
        for name, item in found.items():
            if name in merged:
                assert _text(merged[name]) == _text(item), f"«{name}» repetido"
            merged[name] = item
    return merged


def _text(item: object) -> str:
    return item if isinstance(item, str) else nbformat.writes(item)


def grade_class(root: Path) -> GradedClass:
    """Escribe las entregas de los tres archivos en ``root`` y las califica."""
    subs = root / "entregas"
    out = root / "notas"
    subs.mkdir(parents=True, exist_ok=True)
    listener = Listener()
    try:
        for name, item in _submissions(subs, out, listener.port).items():
            (subs / f"{name}.ipynb").write_text(_text(item), encoding="utf-8")
        rows = grade_batch(MODULE, subs, out, *OPTIONS, timeout=1500)
    finally:
        listener.close()
    graded = GradedClass(rows, out, subs, listener.connections)
    (root / DONE).write_text(
        json.dumps({"connections": graded.connections}), encoding="utf-8"
    )
    return graded


def load_class(root: Path) -> GradedClass:
    """La clase que ya calificó otro proceso de pytest-xdist en ``root``."""
    import csv

    done = json.loads((root / DONE).read_text(encoding="utf-8"))
    out = root / "notas"
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    return GradedClass(rows, out, root / "entregas", done["connections"])
