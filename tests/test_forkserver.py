"""El servidor de kernels ya cargados (autograder/forkserver.py).

Lo que importa: que bifurcar los kernels no comparta nada entre entregas. Una
entrega deja archivos, un proceso vivo y memoria escrita; la siguiente, del
mismo servidor, no ve nada de eso ni puede tocar al servidor.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder import forkserver
from autograder.grade import grade
from autograder.sandbox import ExecutionError, Limits, Sandbox, execute_notebook

needs_sandbox = pytest.mark.skipif(
    Sandbox.unavailable_reason() is not None,
    reason=f"sin sandbox: {Sandbox.unavailable_reason()}",
)
PRELOAD = forkserver.ALWAYS + ("numpy",)


def test_preload_reads_the_source_imports():
    nb = new_notebook(
        cells=[
            new_code_cell("%matplotlib inline\nimport torch\nimport numpy as np"),
            new_code_cell("from helpers.puente import trl_equality, numbers"),
            new_code_cell("x = 1  # sin import"),
            new_code_cell("def f(:"),  # una celda rota no impide leer las demás
        ]
    )
    names = forkserver.preload_for(nb)
    assert names[: len(forkserver.ALWAYS)] == forkserver.ALWAYS
    for name in ("torch", "numpy", "helpers.puente", "helpers.puente.trl_equality"):
        assert name in names
    # PyTorch carga torch._dynamo al crear el primer optimizador: va precargado.
    assert "torch._dynamo" in names
    no_torch = new_notebook(cells=[new_code_cell("import numpy")])
    assert "torch._dynamo" not in forkserver.preload_for(no_torch)


def test_load_skips_names_that_are_not_modules_and_broken_imports():
    loaded = forkserver._load(["json", "json.dumps", "modulo_que_no_existe"])
    assert loaded == ["json"]


def test_carried_over_keeps_the_outer_mounts_under_tmp(monkeypatch):
    # Un /proc/self/mountinfo inventado, desordenado y con un punto repetido.
    mounts = [
        "/",
        "/home/ana/.venv",  # fuera de /tmp: no se toca
        "/tmp",  # el propio /tmp no: se monta nuevo
        "/tmp/clon/.venv",  # dentro de /tmp/clon: viaja con él (MS_REC)
        "/tmp/clon",
        "/tmp/clon",
        "/tmp/clon-2",  # empieza igual que /tmp/clon, pero no cuelga de él
        "/tmp/entrega",  # la carpeta del servidor
        "/tmp/entrega/datos",  # y lo que cuelga de ella
        "/tmp/entrega2",  # empieza igual que la del servidor, pero es otra
        "/tmpx/otro",  # no está bajo /tmp
    ]
    monkeypatch.setattr(
        forkserver, "_mount_points", lambda: [(p, ["ro"]) for p in mounts]
    )
    assert forkserver.carried_over("/tmp", "/tmp/entrega") == [
        "/tmp/clon",
        "/tmp/clon-2",
        "/tmp/entrega2",
    ]
    # Sin nada montado bajo /tmp, no hay nada que volver a montar.
    monkeypatch.setattr(forkserver, "_mount_points", lambda: [("/", ["rw"])])
    assert forkserver.carried_over("/tmp", "/tmp/entrega") == []


def _run(cells: list[str], tmp_path, limits: Limits | None = None):
    nb = new_notebook(cells=[new_code_cell(source) for source in cells])
    return execute_notebook(
        nb,
        tmp_path / "trabajo",
        limits or Limits(cell_timeout=20),
        Sandbox(hide=[]),
        PRELOAD,
        tmp_path,
    )


def _printed(nb) -> dict:
    """Lo que imprimió la última celda, como JSON."""
    outputs = nb.cells[-1].outputs
    assert outputs and outputs[0].get("name") == "stdout", outputs
    return json.loads(outputs[0]["text"])


LEAVE_TRACES = """\
import json, os, subprocess
for path in ("/tmp/rastro", "/dev/shm/rastro", "/tmp/entrega/rastro"):
    open(path, "w").write("de la entrega anterior")
sleeper = subprocess.Popen(["sleep", "300"], start_new_session=True)
print(json.dumps({"pid": os.getpid(), "sleeper": sleeper.pid}))
"""

LOOK_FOR_TRACES = """\
import json, os, re
found = [p for p in ("/tmp/rastro", "/dev/shm/rastro", "/tmp/entrega/rastro")
         if os.path.exists(p)]
sleepers = []
for entry in os.listdir("/proc"):
    try:
        cmdline = open(f"/proc/{entry}/cmdline").read()
        if entry.isdigit() and cmdline.startswith("sleep"):
            sleepers.append(entry)
    except OSError:
        pass
servers, touched = [], []
me = os.readlink("/proc/self")  # el kernel, bifurcado también del servidor
for entry in os.listdir("/proc"):
    if entry == me or not entry.isdigit():
        continue
    try:
        cmdline = open(f"/proc/{entry}/cmdline").read()
    except OSError:
        continue
    if "autograder.forkserver" in cmdline:
        servers.append(entry)
        try:
            open(f"/proc/{entry}/mem", "rb").close()
            touched.append(entry)
        except OSError:
            pass
from autograder import forkserver
from autograder.grade import grade
unsealed = forkserver.unsealed_mounts()
status = open("/proc/self/status").read()
capabilities = re.search(r"CapEff:\\s*(\\w+)", status).group(1)
print(json.dumps({"found": found, "sleepers": sleepers, "servers": servers,
                  "touched": touched, "capabilities": capabilities,
                  "unsealed": unsealed,
                  "uid": os.getuid(), "pid": os.getpid()}))
"""


@pytest.mark.grading
@needs_sandbox
def test_one_submission_leaves_nothing_for_the_next(tmp_path):
    first = _printed(_run([LEAVE_TRACES], tmp_path))
    servers = {key: server.process.pid for key, server in forkserver._servers.items()}
    second = _printed(_run([LOOK_FOR_TRACES], tmp_path))
    # El mismo servidor sirvió las dos (si no, la prueba no probaría nada).
    assert servers and servers == {
        key: server.process.pid for key, server in forkserver._servers.items()
    }
    assert second["servers"], "la entrega debería ver al servidor en /proc"
    assert second["found"] == [], "archivos de la entrega anterior"
    assert second["sleepers"] == [], "un proceso de la entrega anterior sigue vivo"
    assert second["touched"] == [], "la entrega pudo abrir la memoria del servidor"
    # Sin root, bubblewrap deja con escritura /dev y el tmpfs que tapa $HOME:
    # aquí ya no (y como root, igual: se vuelven a montar en solo lectura).
    assert second["unsealed"] == []
    assert int(second["capabilities"], 16) == 0
    assert second["uid"] != 0
    # Cada entrega, en su propio espacio de procesos: su kernel es el 2.
    assert first["pid"] == second["pid"] == 2


@pytest.mark.grading
@needs_sandbox
def test_cell_and_notebook_timeouts(tmp_path):
    nb = _run(
        ["x = 1", "while True:\n    pass", "print(x + 1)"],
        tmp_path,
        Limits(cell_timeout=3),
    )
    assert [o.get("ename") for o in nb.cells[1].outputs] == [
        "KeyboardInterrupt",
        "CellTimeoutError",
    ]
    assert nb.cells[2].outputs[0]["text"] == "2\n"
    with pytest.raises(ExecutionError) as error:
        _run(["import time\ntime.sleep(60)"], tmp_path, Limits(notebook_timeout=5))
    assert error.value.status == "timeout"
    # El servidor que se mató por el tiempo se vuelve a crear.
    nb = _run(["print(3)"], tmp_path)
    assert nb.cells[0].outputs[0]["text"] == "3\n"


def test_server_messages_roundtrip():
    read_end, write_end = os.pipe()
    message = {"notebook": nbformat.writes(new_notebook()), "ñ": "á" * 100_000}
    # Un mensaje grande no cabe en el pipe: se escribe desde otro hilo.
    writer = threading.Thread(target=forkserver._send, args=(write_end, message))
    writer.start()
    assert forkserver._receive(read_end) == message
    writer.join()
    os.close(write_end)
    assert forkserver._receive(read_end) is None
    os.close(read_end)


@pytest.mark.grading
@needs_sandbox
def test_grading_gives_the_same_results_with_and_without_the_server(
    tmp_path, monkeypatch
):
    """Una clase de 07 (PyTorch, torch._dynamo precargado), calificada con el
    servidor y con un kernel nuevo por entrega: los mismos resultados, campo a
    campo (notas, celdas, diagnósticos, incidencias, estado y motivo)."""
    from benchmarks.grading import make_class

    module_id = "07_grpo"
    submissions = tmp_path / "entregas"
    submissions.mkdir()
    make_class(module_id, 3, submissions)  # resuelta, a medias, sin tocar
    warm = grade(module_id, submissions, tmp_path / "con", jobs=2)
    assert list((tmp_path / "con" / "_work" / "_servidores").glob("servidor-*"))
    monkeypatch.setattr(forkserver, "preload_for", lambda source: ())
    cold = grade(module_id, submissions, tmp_path / "sin", jobs=2)
    assert not (tmp_path / "sin" / "_work" / "_servidores").exists()
    assert [r.score for r in warm] == [r.score for r in cold]
    assert [asdict(r) for r in warm] == [asdict(r) for r in cold]
    assert warm[0].score > warm[1].score > warm[2].score == 0
