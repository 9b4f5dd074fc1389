"""Los intentos cuentan aunque el código se trague el error.

Dentro del kernel que califica, un gancho de auditoría (``autograder/audit.py``)
anota cada intento de salir a la red, de escribir fuera de la carpeta de la
entrega, de lanzar un programa y de tocar el propio registro, con su celda. Se
prueba de dos formas: el gancho solo, en un proceso aparte (rápido, sin
sandbox), y una clase de 01_bandidos calificada de verdad, con entregas que se
tragan sus errores de todas las formas que probaría quien hace trampa. Las
honestas (con figuras, archivos temporales y ``torch.save`` en su carpeta) no
tienen ninguna incidencia, y la retroalimentación nunca enseña los intentos.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from autograder import audit
from autograder.preprocessors import RemoveGradingNotes
from autograder.sandbox import Sandbox, provide_font_cache
from tests.notebooks import (
    REPO,
    course_path,
    exercises,
    fill_solutions,
    honest_answers,
    read,
    solution_path,
)

MODULE = "01_bandidos"

# ---------------------------------------------------------------------------
# El gancho solo, en un proceso aparte (sin sandbox: las rutas «de fuera» son
# de una carpeta que no existe, así que nada se escribe de verdad)
# ---------------------------------------------------------------------------

HOOKED = """\
import os, sys
read_fd, write_fd = os.pipe()
from autograder import audit
audit.install(f"{{write_fd}}|{allowed}:/tmp|{hidden}|{readonly}")
{code}
os.close(write_fd)
sys.stdout.write(os.read(read_fd, 1 << 20).decode())
"""


def _hooked(code: str, allowed, hidden="", readonly="") -> list[tuple[str, str]]:
    """Los registros ``(tipo, detalle)`` que deja ``code`` con el gancho puesto."""
    # Como al calificar (autograder.sandbox.execute_notebook): $HOME es /tmp y
    # matplotlib recibe hecha la caché de fuentes. Sin ella, la construiría
    # llamando a fc-list (si la máquina tiene fontconfig), y eso es un proceso.
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": "/tmp"}
    fonts = provide_font_cache(Path(allowed))
    if fonts is not None:
        env["MPLCONFIGDIR"] = str(fonts)
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            HOOKED.format(
                allowed=allowed,
                hidden=hidden,
                readonly=readonly,
                code=textwrap.dedent(code),
            ),
        ],
        cwd=allowed,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr
    records = []
    for line in completed.stdout.splitlines():
        kind, _, detail = line.partition("\t")
        if kind != audit.READY:
            records.append((kind, eval(detail)))  # noqa: S307  (repr de un str)
    return records


MISSING = "/no_existe_ag_audit"


@pytest.mark.parametrize(
    "code, kind, fragment",
    [
        # Cada forma de abrir para escribir, aunque se trague el error.
        (f"try: open('{MISSING}/a', 'w')\nexcept OSError: pass", "escritura", "/a"),
        (
            f"try: os.open('{MISSING}/b', os.O_WRONLY | os.O_CREAT)\n"
            "except OSError: pass",
            "escritura",
            "/b",
        ),
        (
            "import pathlib\n"
            f"try: pathlib.Path('{MISSING}/c').write_text('x')\nexcept OSError: pass",
            "escritura",
            "/c",
        ),
        (
            "import numpy as np\n"
            f"try: np.save('{MISSING}/d.npy', np.zeros(2))\nexcept OSError: pass",
            "escritura",
            "/d.npy",
        ),
        (
            f"try: os.remove('{MISSING}/e')\nexcept OSError: pass",
            "escritura",
            "/e",
        ),
        (
            f"try: os.rename('dentro.txt', '{MISSING}/f')\nexcept OSError: pass",
            "escritura",
            "/f",
        ),
        (
            f"try: os.mkdir('{MISSING}/g')\nexcept OSError: pass",
            "escritura",
            "/g",
        ),
        # Una ruta relativa que sale de la carpeta, y un enlace que apunta fuera.
        (
            "try: open('../../../../../../../no_existe_ag_audit/h', 'a')\n"
            "except OSError: pass",
            "escritura",
            "/h",
        ),
        (
            f"os.symlink('{MISSING}', 'enlace')\n"
            "try: open('enlace/i', 'w')\nexcept OSError: pass",
            "escritura",
            "/i",
        ),
        # Un dir_fd de una carpeta de fuera.
        (
            "d = os.open('/', os.O_RDONLY)\n"
            "try: os.mkdir('no_existe_ag_audit/j', dir_fd=d)\nexcept OSError: pass",
            "escritura",
            "/j",
        ),
        # La red: también 127.0.0.1, connect_ex y UDP; y resolver un nombre.
        (
            "import socket\ntry: socket.create_connection(('127.0.0.1', 9), 1)\n"
            "except OSError: pass",
            "red",
            "127.0.0.1:9",
        ),
        (
            "import socket\nsocket.socket().connect_ex(('127.0.0.1', 9))",
            "red",
            "127.0.0.1:9",
        ),
        (
            "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "s.sendto(b'x', ('127.0.0.1', 9))",
            "red",
            "enviar a 127.0.0.1:9",
        ),
        (
            "import socket\ntry: socket.getaddrinfo('ejemplo.invalid', 80)\n"
            "except OSError: pass",
            "red",
            "ejemplo.invalid",
        ),
        # Un programa: ya no lleva el gancho, así que se anota su orden.
        (
            "import subprocess\nsubprocess.run(['true', 'curl', 'http://x'])",
            "proceso",
            "true curl http://x",
        ),
        ("os.system('true > /dev/null')", "proceso", "true > /dev/null"),
        # Tapar los módulos que califican.
        (
            "os.mkdir('autograder')\nopen('autograder/guard.py', 'w').close()",
            "manipulación",
            "guard.py",
        ),
        ("open('sitecustomize.py', 'w').close()", "manipulación", "sitecustomize"),
        ("sys.addaudithook(lambda *a: None)", "manipulación", "gancho"),
    ],
)
def test_the_hook_records_each_attempt(tmp_path, code, kind, fragment):
    (tmp_path / "dentro.txt").write_text("x")
    records = _hooked(code, tmp_path)
    assert any(k == kind and fragment in d for k, d in records), records


def test_the_hook_cannot_be_changed(tmp_path):
    code = """
    import gc
    hooks = [o for o in gc.get_objects() if getattr(o, "__name__", "") == "hook"
             and o.__module__ == "autograder.audit"]
    assert hooks
    for attribute, value in [("__code__", (lambda e, a: None).__code__),
                             ("__defaults__", None), ("__kwdefaults__", {})]:
        try:
            setattr(hooks[0], attribute, value)
        except PermissionError:
            pass
        else:
            raise SystemExit("se pudo cambiar " + attribute)
    try:
        open("/no_existe_ag_audit/despues", "w")
    except OSError:
        pass
    """
    records = _hooked(code, tmp_path)
    assert ("escritura", "/no_existe_ag_audit/despues") in records
    assert records.count(("manipulación", "cambiar el gancho del registro")) == 3


@pytest.mark.slow
def test_legitimate_code_leaves_no_record(tmp_path):
    code = """
    import tempfile, pathlib, shutil
    import numpy as np, torch
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.plot([1, 2]); plt.savefig("figura.png"); plt.close("all")
    np.save("datos.npy", np.arange(3)); np.load("datos.npy")
    torch.save({"w": torch.ones(2)}, "modelo.pt"); torch.load("modelo.pt")
    with tempfile.NamedTemporaryFile("w") as handle:
        handle.write("x")
    folder = pathlib.Path(tempfile.mkdtemp())
    (folder / "a.txt").write_text("a"); shutil.rmtree(folder)
    os.makedirs("sub/carpeta", exist_ok=True)
    os.replace("datos.npy", "sub/datos.npy"); os.remove("sub/datos.npy")
    open(os.devnull, "w").write("nada")
    import socket
    socket.getaddrinfo("localhost", 80)
    socket.socketpair()
    """
    assert _hooked(code, tmp_path) == []


def test_what_the_sandbox_hides_counts_for_reading_too(tmp_path):
    # El gradebook, las otras entregas... que el sandbox tapa: leerlos es un
    # intento, y escribir ahí también aunque estén dentro de /tmp.
    hidden = tmp_path / "notas"
    hidden.mkdir()
    (hidden / "gradebook.db").write_text("x")
    (tmp_path / "mio.txt").write_text("x")
    code = f"""
    open("mio.txt").read()
    open("/etc/hostname").read()
    try: open({str(hidden / "gradebook.db")!r}).read()
    except OSError: pass
    os.symlink({str(hidden)!r}, "atajo")
    open("atajo/otra.ipynb", "w").close()
    """
    records = _hooked(code, tmp_path, hidden=hidden)
    assert records == [
        ("lectura", str(hidden / "gradebook.db")),
        ("escritura", str(hidden / "otra.ipynb")),
    ]


def test_what_the_sandbox_mounts_read_only_is_outside_even_under_tmp(tmp_path):
    # Un clon del curso en /tmp (como el de CI) se monta en solo lectura dentro
    # de /tmp: escribir ahí es escribir fuera de su carpeta, aunque /tmp valga.
    course = tmp_path / "clon"
    course.mkdir()
    code = f"""
    open("mio.txt", "w").close()
    try: open({str(course / "fuera.txt")!r}, "w")
    except OSError: pass
    """
    records = _hooked(code, tmp_path, readonly=course)
    assert records == [("escritura", str(course / "fuera.txt"))]
    assert str(REPO.resolve()) in audit.read_only_roots()


def test_locate_and_phrases_name_the_cell():
    nb = nbformat.v4.new_notebook(
        cells=[
            new_code_cell("x = 1", id="a", execution_count=1),
            new_code_cell(
                "import socket\ns = socket.socket()", id="b", execution_count=2
            ),
        ]
    )
    nb.cells[0].metadata["nbgrader"] = {"grade_id": "test_softmax", "grade": True}
    located = audit.locate(
        [
            {
                "cell": "b",
                "kind": "red",
                "detail": "conectarse a 1.2.3.4:80",
                "count": 3,
            },
            {"cell": "a", "kind": "escritura", "detail": "/etc/x", "count": 1},
            {"cell": "a", "kind": "lectura", "detail": "/notas/g.db", "count": 1},
        ],
        nb,
    )
    phrases = [audit.incident_phrase(a) for a in located]
    assert phrases == [
        "registrado en la celda [2] «import socket»: intentó usar la red "
        "(conectarse a 1.2.3.4:80, 3 veces)",
        "registrado en la celda [1] (test_softmax): intentó escribir fuera de su "
        "carpeta («/etc/x»)",
        "registrado en la celda [1] (test_softmax): intentó leer lo que se tapa "
        "al calificar («/notas/g.db»)",
    ]
    # En Formgrader, el texto del estudiante no puede ser HTML ni un enlace.
    cell = audit.notes_cell(
        [{"where": "en la celda [3]", "kind": "proceso", "detail": "<script>"}]
    )
    assert "<script>" not in cell.source and "&#60;script&#62;" in cell.source
    # Un fallo de la instalación no se atribuye a ninguna celda.
    assert audit.incident_phrase(
        audit.locate([{"cell": "", "kind": "sin registro", "detail": "x"}], nb)[0]
    ) == (
        "registrado fuera de las celdas (al arrancar el kernel o en otro hilo): "
        "no se pudieron registrar sus intentos (x)"
    )
    # nbgrader generate_feedback la quita (y así lo configura el curso).
    nb.cells.insert(0, cell)
    cleaned, _ = RemoveGradingNotes().preprocess(copy.deepcopy(nb), {})
    assert [c.id for c in cleaned.cells] == ["a", "b"]
    config = (REPO / "autograder" / "nbgrader_config.py").read_text(encoding="utf-8")
    assert "c.GenerateFeedback.preprocessors = [\n    RemoveGradingNotes," in config


# ---------------------------------------------------------------------------
# Una clase calificada de verdad
# ---------------------------------------------------------------------------

needs_sandbox = pytest.mark.skipif(
    Sandbox.unavailable_reason() is not None,
    reason=f"sin sandbox: {Sandbox.unavailable_reason()}",
)

LEGITIMATE = """\
import os, tempfile, pathlib
import numpy as np, torch
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2]); plt.savefig("figura.png"); plt.close("all")
np.save("datos.npy", np.arange(3))
torch.save({"w": torch.ones(2)}, "modelo.pt"); torch.load("modelo.pt")
with tempfile.TemporaryDirectory() as folder:
    pathlib.Path(folder, "a.txt").write_text("a")
os.makedirs("resultados", exist_ok=True)
"""


OUTSIDE = REPO / "fuera_de_su_carpeta_audit.txt"


def class_submissions(subs, out):
    """Las entregas de este archivo en la clase común (tests/graded_class.py)."""
    source = read(solution_path(MODULE))
    released = read(course_path(MODULE))
    solutions = honest_answers(MODULE)
    first = exercises(source)[0]
    assert "):\n" in solutions[first.grade_id]
    solved = fill_solutions(released, solutions)
    outside = OUTSIDE

    def with_cell(code):
        nb = copy.deepcopy(solved)
        nb.cells.insert(2, new_code_cell(code))
        return nb

    swallowed_in_exercise = fill_solutions(
        released,
        {
            **solutions,
            first.grade_id: solutions[first.grade_id].replace(
                "):\n",
                "):\n    import pathlib\n    try:\n"
                f"        pathlib.Path({str(outside)!r}).write_text('x')\n"
                "    except OSError:\n        pass\n",
                1,
            ),
        },
    )
    child = f"open({str(outside)!r}, 'w')"  # lo que intenta el programa lanzado
    return {
        "honesta": solved,
        "legitima": with_cell(LEGITIMATE),
        "red": with_cell(
            "import socket\ntry:\n"
            "    socket.create_connection(('127.0.0.1', 8765), timeout=2)\n"
            "except OSError:\n    pass"
        ),
        "escribe": with_cell(
            f"try:\n    open({str(outside)!r}, 'w').write('x')\n"
            "except OSError:\n    pass"
        ),
        "bajo_nivel": with_cell(
            "import os\ntry:\n"
            f"    os.open({str(outside)!r}, os.O_WRONLY | os.O_CREAT)\n"
            "except OSError:\n    pass"
        ),
        "en_la_prueba": swallowed_in_exercise,
        "lee": with_cell(
            f"try:\n    print(open({str(subs / 'honesta.ipynb')!r}).read())\n"
            "except OSError:\n    pass"
        ),
        "proceso": with_cell(
            "import subprocess, sys\n"
            f"code = {child!r}\n"
            "subprocess.run([sys.executable, '-c', code], capture_output=True)"
        ),
        "manipula": with_cell(
            "import os\n"
            "for fd in range(3, 256):\n"
            "    try:\n"
            "        if os.readlink(f'/proc/self/fd/{fd}').startswith('pipe:'):\n"
            "            os.close(fd)\n"
            "    except OSError:\n"
            "        pass\n"
            "try:\n"
            f"    open({str(outside)!r}, 'w')\n"
            "except OSError:\n    pass"
        ),
    }


@pytest.fixture(scope="module")
def graded(graded_class):
    assert not OUTSIDE.exists()
    source = read(solution_path(MODULE))
    return {
        "rows": graded_class.rows,
        "out": graded_class.out,
        "max": sum(ex.points for ex in exercises(source)),
        "first": exercises(source)[0],
        "outside": str(OUTSIDE),
    }


HOSTILE = ["red", "escribe", "bajo_nivel", "en_la_prueba", "lee", "proceso", "manipula"]


@pytest.mark.grading
@needs_sandbox
def test_honest_and_legitimate_submissions_have_no_incident(graded):
    for student in ("honesta", "legitima"):
        row = graded["rows"][student]
        assert float(row["score"]) == graded["max"], row
        assert row["status"] == "ok" and row["reason"] == "" and row["incidents"] == ""


@pytest.mark.grading
@needs_sandbox
def test_swallowed_attempts_are_incidents_with_their_cell(graded):
    rows = graded["rows"]
    expected = {
        "red": "intentó usar la red (conectarse a 127.0.0.1:8765)",
        "escribe": f"intentó escribir fuera de su carpeta («{graded['outside']}»)",
        "bajo_nivel": f"intentó escribir fuera de su carpeta («{graded['outside']}»)",
        "en_la_prueba": f"fuera de su carpeta («{graded['outside']}»",
        "proceso": "lanzó un programa",
        "lee": "intentó leer lo que se tapa al calificar («",
        "manipula": "manipular el registro de intentos (cerrar o cambiar el canal",
    }
    # El canal cerrado se anota una vez, en la celda que lo cerró.
    assert rows["manipula"]["incidents"].count("cerrar o cambiar el canal") == 1
    for student, phrase in expected.items():
        row = rows[student]
        assert phrase in row["incidents"], (student, row["incidents"])
        # Con su celda: la que insertó (su primera línea) o la de pruebas.
        assert "registrado en la celda [" in row["incidents"], row["incidents"]
        # El error se lo tragó: la nota y el motivo son los de una honesta.
        assert float(row["score"]) == graded["max"], (student, row)
        assert row["status"] == "ok" and row["reason"] == "", (student, row)
    assert "«import socket»" in rows["red"]["incidents"]
    # El intento dentro del ejercicio ocurre al ejecutarse su celda de pruebas.
    test_ids = [g for g, _, _ in graded["first"].tests]
    assert any(f"({g})" in rows["en_la_prueba"]["incidents"] for g in test_ids)
    # El programa lanzado se anota con su orden.
    assert graded["outside"] in rows["proceso"]["incidents"]


@pytest.mark.grading
@needs_sandbox
def test_report_and_formgrader_show_them_feedback_does_not(graded):
    out = graded["out"]
    report = (out / "report.html").read_text(encoding="utf-8")
    results = {
        r["student_id"]: r
        for r in json.loads((out / "resultados.json").read_text(encoding="utf-8"))
    }
    for student in HOSTILE:
        incidents = results[student]["incidents"]
        assert incidents and all(i in report for i in incidents if "«" not in i)
        assert f"<td>{student}</td>" in report
        feedback = (out / "feedback" / f"{student}.html").read_text(encoding="utf-8")
        for word in ("registrado", "Intentos registrados", "intentó", "manipular"):
            assert word not in feedback, (student, word)
        autograded = nbformat.read(
            out / "_work" / "autograded" / student / MODULE / f"{MODULE}.ipynb", 4
        )
        notes = autograded.cells[0]
        assert notes.get("id") == audit.NOTES_CELL_ID
        assert "Intentos registrados" in notes.source
    autograded = nbformat.read(
        out / "_work" / "autograded" / "honesta" / MODULE / f"{MODULE}.ipynb", 4
    )
    assert all(c.get("id") != audit.NOTES_CELL_ID for c in autograded.cells)
