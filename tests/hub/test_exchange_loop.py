"""El ciclo entero de una tarea en el hub, sin nada simulado en medio.

La docente publica 01_bandidos por el intercambio de nbgrader (con la
configuración del curso); tres estudiantes la traen desde su JupyterLab (la
misma API que usa la pestaña «Assignments»), la rellenan (una bien, otra a
medias, otra en blanco) y la entregan; la docente recoge, califica con
``python -m autograder grade`` (aislado) y devuelve la retroalimentación; cada
estudiante trae la suya y no puede leer la de otra. En cada paso se comprueban
notas y permisos.
"""

from __future__ import annotations

import csv
import json
import os
import stat
from pathlib import Path

import nbformat

from hub import settings
from hub.capacity import SERVER_MB
from tests.hub.conftest import ARTIFACTS, COURSE_ID, MODULE, REPO
from tests.notebooks import honest_answers

NOTEBOOK = f"{MODULE}.ipynb"
MAX_SCORE = 22.0


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _owner(path: Path) -> int:
    return path.stat().st_uid


def _answers() -> dict[str, dict[str, str]]:
    """Las respuestas de cada tipo de estudiante (como benchmarks/grading.py)."""
    right = honest_answers(MODULE)
    half = dict(list(right.items())[: len(right) // 2])
    return {"right": right, "half": half, "blank": {}}


def _points_of(grade_ids: set[str]) -> float:
    source = nbformat.read(REPO / "solutions" / MODULE / NOTEBOOK, as_version=4)
    total = 0.0
    for cell in source.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            if any(meta["grade_id"].startswith(f"{g}_test") for g in grade_ids):
                total += float(meta["points"])
    return total


def test_release_fetch_submit_collect_grade_feedback(hub):
    answers = _answers()
    kinds = dict(zip(hub.students[:3], ["right", "half", "blank"], strict=True))
    expected = {s: _points_of(set(answers[k])) for s, k in kinds.items()}
    assert expected[hub.students[0]] == MAX_SCORE
    assert 0 < expected[hub.students[1]] < MAX_SCORE
    assert expected[hub.students[2]] == 0
    doc = hub.instructor
    doc_uid = int(os.popen(f"id -u {doc}").read())
    exchange = settings.exchange_dir() / COURSE_ID
    course = hub.home(doc) / settings.INSTRUCTOR_COURSE

    # 1. La docente publica con nbgrader y la configuración del curso.
    hub.run_as(doc, "nbgrader", "release_assignment", MODULE)
    released = exchange / "outbound" / MODULE / NOTEBOOK
    assert released.read_bytes() == (REPO / "course" / MODULE / NOTEBOOK).read_bytes()
    assert _owner(released) == doc_uid
    assert _mode(exchange / "outbound" / MODULE) == 0o755
    assert _mode(released) == 0o644
    # inbound: se puede entregar, pero no listar lo entregado por otros.
    assert _mode(exchange / "inbound") == 0o2733
    assert _mode(settings.exchange_dir()) == 0o1777

    # 2. Cada estudiante ve la tarea, la trae, la rellena y la entrega desde su
    #    JupyterLab, por la API de la pestaña «Assignments».
    server_mb = {}
    for student, kind in kinds.items():
        hub.start_server(student)
        server_mb[student] = _rss_mb(pwd_uid(student))
        listed = hub.user_api(
            student, "GET", "/assignments", params={"course_id": COURSE_ID}
        )
        assert listed.status_code == 200, listed.text
        assert listed.json()["success"], listed.json()
        assert [a["assignment_id"] for a in listed.json()["value"]] == [MODULE]
        assert listed.json()["value"][0]["status"] == "released"

        fetched = hub.user_api(
            student,
            "POST",
            "/assignments/fetch",
            data={"course_id": COURSE_ID, "assignment_id": MODULE},
        )
        assert fetched.status_code == 200 and fetched.json()["success"], fetched.text
        home = hub.home(student)
        copy = home / MODULE / NOTEBOOK
        assert _owner(copy) == pwd_uid(student)
        assert _mode(home) == 0o700

        # Rellena el cuaderno como lo haría JupyterLab: por la API de contenidos.
        path = f"/api/contents/{MODULE}/{NOTEBOOK}"
        model = hub.user_api(student, "GET", path).json()
        nb = nbformat.from_dict(model["content"])
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in answers[kind]:
                cell.source = answers[kind][grade_id]
        saved = hub.user_api(
            student, "PUT", path, json={"type": "notebook", "content": nb}
        )
        assert saved.status_code == 200, saved.text

        submitted = hub.user_api(
            student,
            "POST",
            "/assignments/submit",
            data={"course_id": COURSE_ID, "assignment_id": MODULE},
        )
        assert submitted.status_code == 200 and submitted.json()["success"], (
            submitted.text
        )

    # Lo que ocupa un JupyterLab sin kernel (hub/capacity.py usa SERVER_MB).
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "memoria.json").write_text(json.dumps({"server_mb": server_mb}))
    assert max(server_mb.values()) <= SERVER_MB, server_mb

    # Lo entregado es de cada estudiante, y nadie lista el buzón de entrada.
    inbound = {p.name.split("+")[0]: p for p in (exchange / "inbound").iterdir()}
    for student in kinds:
        entry = inbound[student]
        assert _owner(entry / NOTEBOOK) == pwd_uid(student)
        assert _mode(entry / NOTEBOOK) == 0o644
        assert not hub.can_read(student, exchange / "inbound")
    # Ni se lee el trabajo de otra en su $HOME.
    assert not hub.can_read(
        hub.students[1], hub.home(hub.students[0]) / MODULE / NOTEBOOK
    )

    # 3. La docente recoge.
    hub.run_as(doc, "nbgrader", "collect", MODULE)
    submitted_dir = course / ".grading" / "submitted"
    for student in kinds:
        copy = submitted_dir / student / MODULE / NOTEBOOK
        assert _owner(copy) == doc_uid
        assert (copy.parent / "submission_secret.txt").exists()
    assert _mode(course) == 0o700
    for student in kinds:
        assert not hub.can_read(student, submitted_dir)

    # 4. Califica la carpeta recogida con la orden del curso, aislada.
    grades_dir = course / ".grading" / MODULE
    graded = hub.run_as(
        doc,
        "python",
        "-m",
        "autograder",
        "grade",
        MODULE,
        str(submitted_dir),
        "--out",
        str(grades_dir),
    )
    # Sin root, el servidor de kernels crea el sandbox de cada entrega dentro
    # del espacio de usuario de bubblewrap (autograder/forkserver.py).
    assert "sin servidor de kernels" not in graded.stderr, graded.stderr[-2000:]
    with (grades_dir / "grades.csv").open(encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    for student in kinds:
        row = rows[student]
        assert row["status"] == "ok", row
        assert "SIN aislamiento" not in row["reason"], row
        assert float(row["max_score"]) == MAX_SCORE
        assert float(row["score"]) == expected[student], row

    # 5. Devuelve la retroalimentación por el intercambio.
    hub.run_as(doc, "python", str(settings.HUB / "feedback.py"), MODULE)
    outbound_feedback = exchange / "feedback"
    assert _mode(outbound_feedback) == 0o711
    assert len(list(outbound_feedback.glob("*.html"))) >= len(kinds)
    for student in kinds:
        assert not hub.can_read(student, outbound_feedback)

    # 6. Cada estudiante trae la suya, con su nota, y no puede leer la de otra.
    feedback_files = {}
    for student in kinds:
        answer = hub.user_api(
            student,
            "POST",
            "/assignments/fetch_feedback",
            data={"course_id": COURSE_ID, "assignment_id": MODULE},
        )
        assert answer.status_code == 200 and answer.json()["success"], answer.text
        found = list((hub.home(student) / MODULE / "feedback").glob(f"*/{MODULE}.html"))
        assert len(found) == 1, found
        html = found[0].read_text(encoding="utf-8")
        assert f"<b>{expected[student]:g}</b> de {MAX_SCORE:g} puntos" in html
        assert _owner(found[0]) == pwd_uid(student)
        feedback_files[student] = found[0]
    first, second, third = kinds
    assert not hub.can_read(second, feedback_files[first])
    assert not hub.can_read(third, feedback_files[first])
    assert not hub.can_read(first, feedback_files[second])
    assert hub.can_read(first, feedback_files[first])


def _rss_mb(uid: int) -> float:
    """Memoria residente (MB) de todos los procesos de ``uid``."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / 1024


def pwd_uid(user: str) -> int:
    import pwd

    return pwd.getpwnam(user).pw_uid
