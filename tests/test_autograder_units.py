"""Piezas del calificador que se prueban sin ejecutar cuadernos enteros."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from autograder.check import main as self_check_main
from autograder.check import skip_unneeded_cells
from autograder.collect import collect, safe_id
from autograder.execute import SKIP_TAG, run
from autograder.grade import _add_incident, join_reasons, precheck
from autograder.integrity import Finding, FindingKind
from autograder.preprocessors import SKIPPED_DEMO, SKIPPED_SOURCE, SkipSlowCells
from autograder.results import (
    STATUS_FILE,
    ExecutionStatus,
    Result,
    Status,
    diagnostic,
)
from autograder.sandbox import INSIDE, ExecutionError, Limits, Sandbox
from tests.notebooks import course_path

MODULE = "01_bandidos"


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}", encoding="utf-8")
    return path


def test_collect_folder_layouts(tmp_path):
    subs = tmp_path / "entregas"
    _touch(subs / "ana.ipynb")
    _touch(subs / "bea" / f"{MODULE}.ipynb")
    _touch(subs / "carla" / MODULE / f"{MODULE}.ipynb")
    _touch(subs / "dani" / "otro.ipynb")  # otro nombre: se califica igual
    _touch(subs / ".ipynb_checkpoints" / "ana-checkpoint.ipynb")
    found = collect(MODULE, subs, tmp_path / "scratch")
    assert list(found.found) == ["ana", "bea", "carla", "dani"]
    assert [path for path, _ in found.skipped] == [
        ".ipynb_checkpoints/ana-checkpoint.ipynb"
    ]


def test_collect_lms_zip(tmp_path):
    archive = tmp_path / "descarga.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("perezana_late_1234_5678_01_bandidos.ipynb", "{}")
        zf.writestr("José Gómez_998_assignsubmission_file_/cuaderno.ipynb", "{}")
        zf.writestr("../../fuera.ipynb", "{}")
    found = collect(MODULE, archive, tmp_path / "scratch")
    # Los ids conservan el número del LMS (ver tests/test_lms.py).
    assert list(found.found) == ["Jose_Gomez_998", "perezana_1234"]
    assert not (tmp_path / "fuera.ipynb").exists()


def test_collect_zip_with_a_wrapping_folder(tmp_path):
    archive = tmp_path / "clase.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("clase/ana.ipynb", "{}")
        zf.writestr(f"clase/bea/{MODULE}.ipynb", "{}")
    assert list(collect(MODULE, archive, tmp_path / "scratch").found) == ["ana", "bea"]


def test_safe_id():
    assert safe_id("María José/../x") == "Maria_Jose_.._x"
    assert safe_id("...") == "sin_id"


def test_precheck(tmp_path):
    empty = tmp_path / "vacio.ipynb"
    empty.write_text("", encoding="utf-8")
    assert precheck(MODULE, empty)[0] is Status.INVALID
    corrupt = tmp_path / "roto.ipynb"
    corrupt.write_text('{"cells": [', encoding="utf-8")
    assert precheck(MODULE, corrupt)[0] is Status.INVALID
    other = tmp_path / "otro.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("1")]), other)
    assert precheck(MODULE, other)[0] is Status.WRONG_MODULE
    assert precheck(MODULE, course_path(MODULE)) is None


def test_status_keeps_the_words_that_gradings_already_stored():
    # grades.csv y resultados.json guardan la palabra del estado: si cambiara,
    # las calificaciones ya hechas dejarían de leerse.
    stored = ["ok", "revisar", "killed", "timeout", "error", "invalid", "wrong_module"]
    assert [str(status) for status in Status] == stored
    assert Result("ana", status="revisar").status is Status.REVIEW
    assert [s for s in Status if not s.was_run] == [
        Status.INVALID,
        Status.WRONG_MODULE,
    ]


def test_every_execution_error_has_a_status():
    for error in (ExecutionError.timeout(Limits()), ExecutionError.no_notebook("x")):
        assert Status(error.status) is not Status.OK, error


def test_execution_status_writes_the_json_it_always_wrote(tmp_path):
    finding = Finding(
        FindingKind.TAMPERING, "celda-3", "Celda celda-3, línea 1: usa «exec()».", []
    )
    attempt = {"kind": "red", "detail": "socket", "count": 2, "where": "en la celda"}
    status = ExecutionStatus(
        Status.KILLED, "El kernel murió.", ["escribió en stderr"], [attempt], [finding]
    )
    status.write(tmp_path)
    # El diccionario que escribía preprocessors.py antes de ExecutionStatus.
    before = {
        "status": "killed",
        "reason": "El kernel murió.",
        "incidents": ["escribió en stderr"],
        "attempts": [attempt],
        "findings": [vars(finding)],
    }
    assert (tmp_path / STATUS_FILE).read_text(encoding="utf-8") == json.dumps(before)
    back = ExecutionStatus.read(tmp_path)
    assert back == status and back.findings[0].kind is FindingKind.TAMPERING
    assert ExecutionStatus.read(tmp_path / "sin_estado") is None


def test_the_reason_repeats_no_phrase_but_keeps_one_that_is_only_quoted():
    result = Result("ana")
    # Un hallazgo cita el código del estudiante, que contiene la frase de un
    # error notable: la frase se añade igual, porque no es la misma frase.
    quoted = "una celda superó el límite de tiempo (celda f_test)"
    reasons = [f"Revisar: «Ejercicio 1» (celda f): usa «exec()»: `exec('{quoted}')`."]
    _add_incident(result, reasons, quoted)
    _add_incident(result, reasons, quoted)
    _add_incident(result, reasons, "escribió en stderr")
    assert reasons[1:] == [quoted, "escribió en stderr"]
    assert result.incidents == [quoted, "escribió en stderr"]
    assert join_reasons(reasons[1:]) == f"U{quoted[1:]}; escribió en stderr"
    assert join_reasons([]) == ""


def test_diagnostic_keeps_the_typical_mistake():
    output = new_output(
        "error",
        ename="CheckError",
        evalue="f(1) devolvió 2, pero debía ser 3.\n¿Olvidaste dividir por count?",
        traceback=[],
    )
    assert diagnostic(output) == "¿Olvidaste dividir por count?"
    name_error = new_output(
        "error", ename="NameError", evalue="name 'f' is not defined"
    )
    assert diagnostic(name_error) == "NameError: name 'f' is not defined"


def test_skip_slow_cells_never_skips_graded_cells():
    nb = new_notebook(
        cells=[
            new_code_cell("entrenar()", metadata={"tags": ["slow"]}),
            new_code_cell(
                "check()",
                metadata={
                    "tags": ["slow"],
                    "nbgrader": {"grade": True, "grade_id": "t"},
                },
            ),
            new_code_cell("rapido()"),
        ]
    )
    nb, _ = SkipSlowCells().preprocess(nb, {})
    assert nb.cells[0].source == SKIPPED_SOURCE
    assert nb.cells[1].source == "check()"
    assert nb.cells[2].source == "rapido()"


def test_only_skipped_cells_are_not_sent_to_the_kernel(tmp_path):
    """Las celdas saltadas llevan la etiqueta que el ejecutor no manda al
    kernel; la que traiga una entrega (en una celda de pruebas, para no
    ejecutarla) se borra antes. Y se ejecuta de verdad: la celda con la
    etiqueta falsa corre y la saltada no."""
    graded = {"tags": [SKIP_TAG], "nbgrader": {"grade": True, "grade_id": "t"}}
    nb = new_notebook(
        cells=[
            new_code_cell("print('entreno')", metadata={"tags": ["slow"]}),
            new_code_cell("print('compruebo')", metadata=graded),
            new_code_cell("print('mio')", metadata={"tags": [SKIP_TAG]}),
        ]
    )
    nb, _ = SkipSlowCells().preprocess(nb, {})
    assert SKIP_TAG in nb.cells[0].metadata.tags
    assert SKIP_TAG not in nb.cells[1].metadata.tags
    assert SKIP_TAG not in nb.cells[2].metadata.tags
    executed = run(nb, str(tmp_path), cell_timeout=60, hidden=[])
    outputs = ["".join(o.get("text", "") for o in c.outputs) for c in executed.cells]
    assert outputs == ["", "compruebo\n", "mio\n"]
    assert executed.cells[0].execution_count is None
    # Aunque un cuaderno llegara al ejecutor sin pasar por SkipSlowCells, una
    # celda de pruebas con la etiqueta se ejecuta igual.
    test_cell = {"tags": [SKIP_TAG], "nbgrader": {"grade": True, "grade_id": "t"}}
    tagged = new_notebook(
        cells=[new_code_cell("print('compruebo')", metadata=test_cell)]
    )
    assert SKIP_TAG in tagged.cells[0].metadata.tags
    executed = run(tagged, str(tmp_path), cell_timeout=60, hidden=[])
    assert executed.cells[0].outputs[0]["text"] == "compruebo\n"


def test_sandbox_command_hides_and_isolates(tmp_path):
    hidden = tmp_path / "gradebook"
    hidden.mkdir()
    cmd = Sandbox(hide=[hidden]).command(["python"], tmp_path, Limits())
    joined = " ".join(cmd)
    assert "--unshare-net" in cmd and "--unshare-pid" in cmd
    assert f"--tmpfs {hidden} --remount-ro {hidden}" in joined
    assert f"--bind {tmp_path} {INSIDE}" in joined
    assert "--ro-bind / /" in joined
    assert cmd[-1] == "python"


@pytest.mark.skipif(
    not os.environ.get("AUTOGRADER_REQUIRE_SANDBOX"),
    reason="solo donde se exige el sandbox (CI)",
)
def test_sandbox_is_available_where_required():
    # En CI las pruebas de robustez no pueden saltarse por falta de bubblewrap.
    assert Sandbox.unavailable_reason() is None


def test_sandbox_remounts_python_and_course_under_tmp_or_home(tmp_path, monkeypatch):
    # CI clona el curso en cualquier carpeta (también bajo /tmp, que en el
    # sandbox es uno nuevo): lo imprescindible se vuelve a montar.
    from autograder import sandbox

    venv = tmp_path / "clon" / ".venv"
    monkeypatch.setattr(sandbox, "_needed_paths", lambda: {venv})
    cmd = Sandbox().command(["python"], tmp_path, Limits())
    joined = " ".join(cmd)
    assert f"--ro-bind {venv} {venv}" in joined
    assert f"--perms 0755 --dir {tmp_path / 'clon'}" in joined
    assert joined.index("--tmpfs /tmp") < joined.index(f"--ro-bind {venv}")


def test_demos_that_grading_does_not_need_are_found():
    from autograder.demos import demo_cell_ids

    solution = {"nbgrader": {"solution": True, "grade": False, "grade_id": "f"}}
    test = {"nbgrader": {"grade": True, "grade_id": "f_test", "points": 1}}
    cells = [
        new_code_cell(
            "import numpy as np\nimport matplotlib.pyplot as plt", id="setup"
        ),
        new_code_cell("scale = 2.0", id="constant"),
        new_code_cell(
            "fig, ax = plt.subplots()\nax.plot([1, 2])\nplt.show()", id="plot"
        ),
        new_code_cell("history = []", id="history"),
        new_code_cell("history.append(np.ones(3))", id="grows"),
        new_code_cell("print(history[0].tolist(), scale.item())", id="reads"),
        new_code_cell(
            "def f(x):\n    return scale * x + len(history)", id="f", metadata=solution
        ),
        new_code_cell("assert f(1) == 3", id="f_test", metadata=test),
        new_code_cell("print(f(3))", id="try"),
        new_code_cell("big = np.zeros(10**6)", id="slow", metadata={"tags": ["slow"]}),
        new_code_cell("demo = demo_functions(globals(), f=f)", id="demo"),
        new_code_cell("print(demo.f(2))", id="try_demo"),
        new_code_cell(
            "from helpers.widgets.bandits import BanditGame\nBanditGame(seed=0)",
            id="widget",
        ),
        new_code_cell("from tqdm.auto import tqdm\nprint(1)", id="other_import"),
        new_code_cell("rng, offset = 1, 2", id="locals_only"),
        new_code_cell(
            "def g(x, rng):\n    total = [x * rng for _ in range(2)]\n"
            "    return sum(total) + offset",
            id="g",
            metadata={"nbgrader": {**solution["nbgrader"], "grade_id": "g"}},
        ),
        new_code_cell("print(demo.f(3))", id="try_demo_again"),
    ]
    demos = demo_cell_ids(new_notebook(cells=cells))
    # La figura y los «pruébalo» sobran (llamar a «demo.f» no modifica «demo»),
    # y también «demo», que solo leen ellos. Lo que la solución lee, no (ni la
    # celda que modifica «history» con un método; sí la que solo lee con
    # .tolist() e .item(), métodos que no modifican). Un import de fuera del curso
    # siempre se ejecuta; uno de los submódulos de helpers, no. La celda que
    # asigna «rng» y «offset» hace falta por «offset»: «rng» y «total» son
    # locales de g.
    assert demos == {
        "plot",
        "reads",
        "try",
        "demo",
        "try_demo",
        "widget",
        "try_demo_again",
    }
    del cells[-2]  # sin g, nadie lee «offset»
    assert "locals_only" in demo_cell_ids(new_notebook(cells=cells))


def test_loop_variables_do_not_make_a_demo_needed():
    from autograder.demos import demo_cell_ids

    solution = {"nbgrader": {"solution": True, "grade": False, "grade_id": "f"}}
    test = {"nbgrader": {"grade": True, "grade_id": "f_test", "points": 1}}
    cells = [
        new_code_cell("import numpy as np", id="setup"),
        # Una demo que deja «a», «name» y «fh» como globales...
        new_code_cell(
            "for a, (name, _) in enumerate([('x', 1)]):\n    print(a, name)\n"
            "with open('/dev/null') as fh:\n    pass",
            id="loop_demo",
        ),
        new_code_cell("from IPython.display import display\ndisplay(1)", id="show"),
        new_code_cell("def f(x):\n    return 2 * x", id="f", metadata=solution),
        # ...y unas pruebas que usan esos nombres solo como variables de su
        # propio for o with: no los leen de la demo.
        new_code_cell(
            "for a in range(3):\n    assert f(a) == 2 * a\n"
            "for name in ['x']:\n    assert name\n"
            "with open('/dev/null') as fh:\n    fh.read()",
            id="f_test",
            metadata=test,
        ),
    ]
    assert demo_cell_ids(new_notebook(cells=cells)) == {"loop_demo", "show"}
    # Pero si una prueba lee la variable de un for que puede no dar ninguna
    # vuelta, o la lee antes de su propio for, la demo que la asigna hace falta.
    for source in (
        "for a in []:\n    pass\nelse:\n    assert a == 0",
        "assert f(a) == 0\nfor a in range(3):\n    pass",
        "for i in range(a):\n    pass",
    ):
        cells[-1] = new_code_cell(source, id="f_test", metadata=test)
        assert "loop_demo" not in demo_cell_ids(new_notebook(cells=cells)), source


def test_skip_slow_cells_skips_only_untouched_demos(tmp_path):
    cells = [
        new_code_cell("import matplotlib.pyplot as plt", id="setup"),
        new_code_cell("plt.plot([1, 2]); plt.show()", id="plot"),
        new_code_cell("plt.plot([3, 4]); plt.show()", id="plot2"),
    ]
    source = new_notebook(cells=cells)
    (tmp_path / "m").mkdir()
    nbformat.write(source, tmp_path / "m" / "m.ipynb")
    submission = copy.deepcopy(source)
    submission.cells[2].source = "def helper():\n    return 1"  # editada: se ejecuta
    resources = {"nbgrader": {"assignment": "m", "notebook": "m"}}
    skip = SkipSlowCells(source_root=str(tmp_path))
    out, _ = skip.preprocess(submission, resources)
    assert out.cells[1].source.startswith("# Demo")
    assert out.cells[2].source == "def helper():\n    return 1"
    assert out.cells[0].source == "import matplotlib.pyplot as plt"


def test_self_check_does_not_count_questions_it_cannot_grade(tmp_path, capsys):
    """Una pregunta cuya comprobación visible solo mira la forma (✎) no cuenta
    como cubierta: la autocomprobación no sabe si acierta."""
    from helpers.checks.quiz import FORM_ONLY_MARK

    def graded(grade_id: str, points: int) -> dict:
        return {"nbgrader": {"grade": True, "grade_id": grade_id, "points": points}}

    nb = new_notebook(
        cells=[
            new_code_cell("print('✔ bien')", id="t1", metadata=graded("t1", 3)),
            new_code_cell(
                f"print('{FORM_ONLY_MARK} bien escrita')",
                id="t2",
                metadata=graded("t2", 2),
            ),
        ]
    )
    path = tmp_path / "cuaderno.ipynb"
    nbformat.write(nb, path)
    assert self_check_main(path) == 0
    out = capsys.readouterr().out
    assert "cubren 3 de 5 puntos" in out, out
    assert "(✎, 2 puntos) no cuentan" in out, out


def test_self_check_skips_demos_but_runs_what_the_solution_reads():
    """La autocomprobación salta lo mismo que la calificación: las celdas «slow»
    y las demos, pero no una demo que el estudiante usa en su solución."""
    graded = {"nbgrader": {"grade": True, "grade_id": "t", "points": 1}}
    solution = {"nbgrader": {"solution": True, "grade_id": "f"}}
    nb = new_notebook(
        cells=[
            new_code_cell("import matplotlib.pyplot as plt", id="setup"),
            new_code_cell("plt.plot([1, 2]); plt.show()", id="plot"),
            new_code_cell("scale = 2", id="used"),
            new_code_cell(
                "model = entrenar()", id="train", metadata={"tags": ["slow"]}
            ),
            new_code_cell("def f(x):\n    return scale * x", id="f", metadata=solution),
            new_code_cell("assert f(1) == 2", id="t", metadata=graded),
            new_code_cell("print(f(3))", id="try"),
        ]
    )
    skip_unneeded_cells(nb)
    sources = {cell.id: cell.source for cell in nb.cells}
    assert sources["plot"] == sources["try"] == SKIPPED_DEMO
    assert sources["train"] == SKIPPED_SOURCE
    assert sources["used"] == "scale = 2"
    assert sources["setup"] == "import matplotlib.pyplot as plt"
    assert sources["t"] == "assert f(1) == 2"


STATE = """
import random, numpy as np, torch
def state():
    return (str(torch.get_default_dtype()), torch.get_num_threads(),
            torch.is_grad_enabled(), torch.are_deterministic_algorithms_enabled(),
            torch.get_rng_state().tolist(), np.random.get_state()[1].tolist(),
            random.getstate(), torch.get_float32_matmul_precision())
before = state()
import importlib
for name in NAMES:
    importlib.import_module(name)
assert state() == before, "importar cambió el estado global"
"""


def test_harmless_imports_leave_the_global_state_alone():
    """Saltar una demo que solo importa estos módulos no cambia lo que califica:
    importarlos deja igual el estado global de PyTorch, NumPy y Python."""
    from autograder.demos import HARMLESS_IMPORTS

    code = f"NAMES = {list(HARMLESS_IMPORTS)!r}\n{STATE}"
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr[-2000:]
