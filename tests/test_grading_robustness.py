"""Calificar una clase con entregas hostiles o rotas, en un solo lote.

Cada entrega hostil recibe un estado y un motivo que dicen qué pasó, ninguna
gana puntos que no merezca ni toca nada fuera de su carpeta, y las demás sacan
exactamente la nota que sacarían solas.
"""

from __future__ import annotations

import copy

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.sandbox import Sandbox
from tests.banks import bank, wholly_wrong
from tests.notebooks import (
    REPO,
    course_path,
    exercises,
    fill_solutions,
    grade_batch,
    honest_answers,
    nbgrader,
    read,
    solution_path,
)

MODULE = "01_bandidos"
SECRET = "SECRETO-DE-ANA-7f3a"

pytestmark = [
    pytest.mark.grading,
    pytest.mark.skipif(
        Sandbox.unavailable_reason() is not None,
        reason=f"sin sandbox: {Sandbox.unavailable_reason()}",
    ),
]


def _with_cell(nb, source, after_setup=True):
    nb = copy.deepcopy(nb)
    cell = new_code_cell(source)
    nb.cells.insert(2 if after_setup else len(nb.cells), cell)
    return nb


OUTSIDE = REPO / "fuera_de_su_carpeta.txt"


def class_submissions(subs, out, port):
    """Las entregas de este archivo en la clase común (tests/graded_class.py);
    ``port`` es el del servidor que anota las conexiones."""
    source = read(solution_path(MODULE))
    released = read(course_path(MODULE))
    module_exercises = exercises(source)
    solutions = honest_answers(MODULE)
    wrong = bank(MODULE).WRONG
    first = module_exercises[0]
    outside = OUTSIDE

    solved = fill_solutions(released, solutions)
    mixed_answers = dict(solutions)
    for ex in module_exercises[1::2]:
        mixed_answers[ex.grade_id] = wholly_wrong(wrong[ex.grade_id]).source
    mixed = fill_solutions(released, mixed_answers)
    ana = copy.deepcopy(solved)
    ana.cells.insert(1, new_markdown_cell(SECRET))

    loop = fill_solutions(
        released,
        {
            **solutions,
            first.grade_id: solutions[first.grade_id].replace(
                "):\n", "):\n    while True:\n        pass\n", 1
            ),
        },
    )
    # Las trampas de abajo se insertan tras la primera línea «def ...):».
    assert all("):\n" in answer for answer in solutions.values())
    duplicated = copy.deepcopy(solved)
    test_index = next(
        i for i, c in enumerate(duplicated.cells) if nbgrader(c).get("grade")
    )
    copied = copy.deepcopy(duplicated.cells[test_index])
    copied.id = f"copia-{copied.id}"  # mismo grade_id, otra celda
    duplicated.cells.insert(test_index, copied)
    # Sin ninguna celda de pruebas: se restauran todas desde la fuente.
    deleted = copy.deepcopy(solved)
    deleted.cells = [c for c in deleted.cells if not nbgrader(c).get("grade")]
    edited = fill_solutions(
        released,
        {
            ex.grade_id: wholly_wrong(wrong[ex.grade_id]).source
            for ex in module_exercises
        },
    )
    for cell in edited.cells:
        if nbgrader(cell).get("grade"):
            cell.source = "pass"
    to_markdown = copy.deepcopy(solved)
    for cell in to_markdown.cells:
        if nbgrader(cell).get("grade_id") == first.grade_id:
            cell.cell_type = "markdown"
            del cell["outputs"], cell["execution_count"]
    other_module = copy.deepcopy(solved)
    for cell in other_module.cells:
        if nbgrader(cell):
            cell.metadata.nbgrader["grade_id"] = (
                "otro_" + cell.metadata.nbgrader["grade_id"]
            )
    noisy_answers = {
        key: "import sys, warnings\nimport torch\n"
        + value.replace(
            "):\n",
            '):\n    print("ruido", file=sys.stderr)\n'
            '    warnings.warn("¡cuidado!")\n'
            "    torch.nn.functional.softmax(torch.ones(3))\n",
            1,
        )
        for key, value in solutions.items()
    }
    noisy = _with_cell(
        fill_solutions(released, noisy_answers),
        'import sys\nprint("más ruido", file=sys.stderr)',
    )
    import_error = fill_solutions(
        released,
        {
            **solutions,
            first.grade_id: "import paquete_que_no_existe\n"
            + solutions[first.grade_id],
        },
    )

    notebooks = {
        "ana": ana,
        "solved": solved,
        "mixed": mixed,
        "untouched": released,
        "loop": loop,
        "memory": _with_cell(
            solved,
            "blocks = []\nwhile True:\n    blocks.append(bytearray(256 * 1024**2))",
        ),
        "forkbomb": _with_cell(
            solved,
            "import os, time\nfor _ in range(100_000):\n    if os.fork() == 0:\n"
            "        time.sleep(30)\n        os._exit(0)",
        ),
        "network": _with_cell(
            solved,
            "import socket\n"
            f"s = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "s.sendall(b'robado')",
        ),
        "writer": _with_cell(
            solved,
            f"open({str(out / '_work' / 'gradebook.db')!r}, 'ab').write(b'PWNED')\n",
        ),
        "outside": _with_cell(solved, f"open({str(outside)!r}, 'w').write('x')"),
        "reader": _with_cell(
            solved, f"print(open({str(subs / 'ana.ipynb')!r}).read())"
        ),
        "killer": _with_cell(solved, "import os, signal\nos.kill(os.getpid(), 9)"),
        "duplicated": duplicated,
        "deleted": deleted,
        "edited": edited,
        "to_markdown": to_markdown,
        "other_module": other_module,
        "noisy": noisy,
        "import_error": import_error,
    }
    assert not outside.exists()
    # Dos archivos rotos: texto tal cual, no cuadernos.
    return {**notebooks, "corrupt": '{"cells": [', "empty": ""}


@pytest.fixture(scope="module")
def batch(graded_class):
    module_exercises = exercises(read(solution_path(MODULE)))
    return {
        "rows": graded_class.rows,
        "out": graded_class.out,
        "max": sum(ex.points for ex in module_exercises),
        "first": module_exercises[0],
        "exercises": module_exercises,
        "connections": graded_class.connections,
        "outside": OUTSIDE,
    }


def score(batch, student):
    return float(batch["rows"][student]["score"])


def test_honest_submissions_get_their_solo_scores(batch):
    assert score(batch, "solved") == batch["max"]
    assert score(batch, "ana") == batch["max"]
    assert score(batch, "untouched") == 0
    wrong_points = sum(ex.points for ex in batch["exercises"][1::2])
    assert score(batch, "mixed") == batch["max"] - wrong_points
    for student in ("solved", "mixed", "untouched"):
        assert batch["rows"][student]["status"] == "ok"
        assert batch["rows"][student]["reason"] == ""


def test_infinite_loop_is_cut_and_named(batch):
    row = batch["rows"]["loop"]
    assert score(batch, "loop") == batch["max"] - batch["first"].points
    assert "límite de tiempo" in row["reason"]
    # Aunque sacó puntos, la incidencia queda en su columna y en el informe.
    assert "límite de tiempo" in row["incidents"]
    report = (batch["out"] / "report.html").read_text(encoding="utf-8")
    assert "<td>loop</td>" in report


def test_memory_bomb(batch):
    # Acapara la memoria del kernel: lo que venga después falla o el kernel muere.
    assert score(batch, "memory") <= batch["max"]
    assert "memoria" in batch["rows"]["memory"]["reason"]
    assert "memoria" in batch["rows"]["memory"]["incidents"]


def test_fork_bomb(batch):
    assert score(batch, "forkbomb") <= batch["max"]
    assert "procesos" in batch["rows"]["forkbomb"]["reason"]


def test_no_network(batch):
    assert batch["connections"] == 0
    assert "red" in batch["rows"]["network"]["reason"]
    assert score(batch, "network") == batch["max"]


def test_no_writes_outside_its_folder(batch):
    assert not batch["outside"].exists()
    for student in ("outside", "writer"):
        assert "fuera de su carpeta" in batch["rows"][student]["reason"]
        assert score(batch, student) == batch["max"]
    # Ningún gradebook (el de la clase ni las copias) recibió lo que escribió.
    gradebooks = list(batch["out"].rglob("*.db"))
    assert gradebooks
    for gradebook in gradebooks:
        assert b"PWNED" not in gradebook.read_bytes(), gradebook


def test_cannot_read_other_submissions(batch):
    feedback = (batch["out"] / "feedback" / "reader.html").read_text(encoding="utf-8")
    assert SECRET not in feedback
    assert "fuera de su carpeta" in batch["rows"]["reader"]["reason"]


def test_a_dead_kernel_scores_nothing_it_did_not_run(batch):
    assert score(batch, "killer") == 0
    assert batch["rows"]["killer"]["status"] == "killed"
    assert "murió" in batch["rows"]["killer"]["reason"]


def test_broken_files_get_a_reason(batch):
    for student in ("corrupt", "empty"):
        row = batch["rows"][student]
        assert row["status"] == "invalid" and score(batch, student) == 0
        assert row["reason"]
    other = batch["rows"]["other_module"]
    assert other["status"] == "wrong_module" and "otro módulo" in other["reason"]


def test_test_cells_cannot_be_dodged(batch):
    assert score(batch, "duplicated") == batch["max"]
    assert score(batch, "deleted") == batch["max"]
    assert score(batch, "edited") == 0
    # nbgrader devuelve la celda de solución a su tipo: su código cuenta.
    assert score(batch, "to_markdown") == batch["max"]


def test_noise_on_stderr_and_import_errors(batch):
    assert score(batch, "noisy") == batch["max"]
    assert "stderr" in batch["rows"]["noisy"]["reason"]
    assert "stderr" in batch["rows"]["noisy"]["incidents"]
    assert score(batch, "import_error") == batch["max"] - batch["first"].points
    assert "módulo que no existe" in batch["rows"]["import_error"]["reason"]


def test_class_report(batch):
    report = (batch["out"] / "report.html").read_text(encoding="utf-8")
    assert "Reparto de notas" in report and "data:image/png;base64" in report
    assert "diagnósticos más frecuentes" in report
    # El error típico de la entrega mixta aparece como diagnóstico de la clase.
    assert "Comparas al revés" in report or "argmax" in report or "np.random" in report


def test_regrading_is_idempotent(tmp_path):
    subs = tmp_path / "entregas"
    subs.mkdir()
    nbformat.write(read(course_path(MODULE)), subs / "bea.ipynb")
    (subs / "roto.ipynb").write_text("{", encoding="utf-8")
    outputs = []
    for _ in range(2):
        grade_batch(MODULE, subs, tmp_path / "notas", "--jobs", "1", timeout=300)
        outputs.append((tmp_path / "notas" / "grades.csv").read_text(encoding="utf-8"))
        feedback = sorted(p.name for p in (tmp_path / "notas" / "feedback").iterdir())
        # También la entrega rota recibe su retroalimentación: el motivo.
        assert feedback == ["bea.html", "roto.html"]
    assert outputs[0] == outputs[1]
