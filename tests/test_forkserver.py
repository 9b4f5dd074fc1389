"""El servidor de kernels ya cargados (autograder/forkserver.py).

Lo que importa: que bifurcar los kernels no comparta nada entre entregas. Una
entrega deja archivos, un proceso vivo y memoria escrita; la siguiente, del
mismo servidor, no ve nada de eso ni puede tocar al servidor.
"""

from __future__ import annotations

import inspect
import json
import mmap
import os
import re
import secrets
import threading
from dataclasses import asdict

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder import forkserver, preprocessors
from autograder.course import module_ids, release_path
from autograder.grade import autograded_path, grade
from autograder.sandbox import ExecutionError, Limits, Sandbox, execute_notebook
from tests.notebooks import grade_batch

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


def test_attributes_of_imported_modules_are_requested_once_in_the_server():
    nb = new_notebook(
        cells=[
            new_code_cell("import trl\nimport helpers.puente as hp\nimport os.path"),
            new_code_cell("config = trl.GRPOConfig(output_dir='x')\nhp.to_gpt2"),
            new_code_cell("x = config.beta  # un objeto, no un módulo"),
        ]
    )
    names = forkserver.preload_for(nb)
    assert "trl:GRPOConfig" in names and "helpers.puente:to_gpt2" in names
    assert not any(name.startswith("config:") for name in names)
    loaded = forkserver._load(["json", "json:dumps", "json:no_existe", "nada:x"])
    assert loaded == ["json", "json:dumps"]


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
from autograder.course import release_path
from tests.notebooks import grade_batch
from autograder.grade import autograded_path, grade
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
    preprocessors._read_source.cache_clear()  # lo que carga se guarda por proceso
    cold = grade(module_id, submissions, tmp_path / "sin", jobs=2)
    assert not (tmp_path / "sin" / "_work" / "_servidores").exists()
    assert [r.score for r in warm] == [r.score for r in cold]
    assert [asdict(r) for r in warm] == [asdict(r) for r in cold]
    assert warm[0].score > warm[1].score > warm[2].score == 0


# ---------------------------------------------------------------------------
# Lo que una entrega encuentra en su propia memoria
# ---------------------------------------------------------------------------

MARKER = re.compile(rb"MARCA-[0-9a-f]{40}")
MARKER_UTF16 = re.compile(rb"M\0A\0R\0C\0A\0-\0(?:[0-9a-f]\0){40}")


def scan_own_memory() -> list[str]:
    """Las marcas que hay en la memoria escribible de este proceso.

    Lee ``/proc/self/mem`` a trozos en páginas anónimas nuevas (un ``mmap``),
    no en el montón: así leer no escribe en lo que se está leyendo. Busca la
    marca en UTF-8 y en UTF-16 (como guarda Python algunas cadenas).
    """
    chunk = 1 << 16
    buffer = mmap.mmap(-1, chunk)
    with open("/proc/self/maps") as maps:
        regions = [line.split()[:2] for line in maps]
    found: set[str] = set()
    with open("/proc/self/mem", "rb", buffering=0) as memory:
        for span, permissions in regions:
            if not permissions.startswith("rw"):
                continue
            low, high = (int(x, 16) for x in span.split("-"))
            position = low
            while position < high:
                size = min(chunk, high - position)
                try:
                    memory.seek(position)
                    got = memory.readinto(memoryview(buffer)[:size])
                except OSError:
                    break
                for pattern, encoding in (
                    (MARKER, "utf-8"),
                    (MARKER_UTF16, "utf-16-le"),
                ):
                    for match in pattern.finditer(buffer, 0, got):
                        found.add(match.group().decode(encoding))
                # Los trozos se solapan: una marca partida entre dos se ve entera.
                position += size - 200 if size == chunk else size
    return sorted(found)


def _fake_isolate(tmp_bytes: int) -> int:  # noqa: ARG001
    return os.fork()  # sin sandbox: solo importa la memoria, que es la misma


def _fake_run(request: dict, out: int, fonts: dict) -> None:  # noqa: ARG001
    """El «ejecutor» de una entrega: devuelve su cuaderno tal cual (como uno
    ejecutado, que lo contiene), o, si se llama «scan», las marcas que halla en
    su propia memoria."""
    try:
        if request["name"] == "scan":
            text = json.dumps(scan_own_memory())
        else:
            text = request["notebook"]
        view = memoryview(text.encode())
        while view:
            view = view[os.write(out, view) :]
    finally:
        os._exit(0)


def serve_in_a_child(loop) -> tuple[int, int, int]:
    """``loop(requests, replies, fonts)`` en un proceso hijo, con el sandbox de
    cada entrega sustituido por un ``fork`` sin más: devuelve su pid y los
    extremos para pedir y para leer respuestas."""
    requests_read, requests_write = os.pipe()
    replies_read, replies_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(requests_write)
            os.close(replies_read)
            forkserver._isolate = _fake_isolate
            forkserver._run_submission = _fake_run
            code = loop(requests_read, replies_write, {})
        finally:
            os._exit(code)
    os.close(requests_read)
    os.close(replies_write)
    return pid, requests_write, replies_read


def classmates_seen_by_the_next_submission(loop, submissions: int) -> list[int]:
    """Califica ``submissions`` entregas, cada una con su marca secreta en el
    código, y después una que busca marcas en su propia memoria: devuelve qué
    entregas anteriores encontró."""
    base = release_path("07_grpo").read_text(encoding="utf-8")
    pid, requests, replies = serve_in_a_child(loop)
    # Las marcas nacen después de bifurcar el servidor: solo pueden llegarle
    # por las peticiones.
    secrets_sent = []
    for index in range(submissions):
        secret = "MARCA-" + secrets.token_hex(20)
        secrets_sent.append(secret)
        notebook = base.replace("# TU CÓDIGO AQUÍ", f"x = '{secret}'  # TU CÓDIGO AQUÍ")
        request = {"name": f"e{index}.ipynb", "notebook": notebook, "tmp_bytes": 1}
        request["folder"] = "/tmp/entrega"
        forkserver._send(requests, request)
        reply = forkserver._receive(replies)
        assert secret in reply["notebook"]
    forkserver._send(requests, {"name": "scan", "notebook": base, "tmp_bytes": 1})
    found = json.loads(forkserver._receive(replies)["notebook"])
    os.close(requests)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    os.close(replies)
    return [index for index, secret in enumerate(secrets_sent) if secret in found]


def test_scan_own_memory_finds_a_marker_in_this_process():
    # La búsqueda funciona: una marca que este proceso tiene, la encuentra.
    secret = "MARCA-" + secrets.token_hex(20)
    kept = [secret.encode(), secret]  # noqa: F841  (vivas durante la búsqueda)
    assert secret in scan_own_memory()


def test_the_server_never_holds_a_submission():
    """El servidor bifurca antes de leer: la entrega siguiente no puede
    encontrar en su memoria (heredada del servidor) ninguna anterior.

    Con el servidor de antes (leía cada petición y cada respuesta él mismo y
    luego bifurcaba), la entrega 11 encontraba en su propia memoria el código
    de una o dos de las anteriores; ``test_the_old_loop_leaked`` lo muestra."""
    assert classmates_seen_by_the_next_submission(forkserver.serve_requests, 10) == []


def _old_loop(requests: int, replies: int, fonts: dict) -> int:
    """El bucle del servidor hasta 4ea92b0: leía él la petición."""
    while (request := forkserver._receive(requests)) is not None:
        forkserver._send(replies, forkserver._handle(request, fonts))
    return 0


def test_the_old_loop_leaked():
    # La prueba de arriba distingue: con el bucle de antes, la entrega 11 sí
    # encuentra marcas de otras (lo que quede depende del asignador de
    # memoria; con diez entregas siempre queda alguna).
    assert classmates_seen_by_the_next_submission(_old_loop, 10) != []


# Lo que ejecuta cada entrega de la clase de abajo: busca marcas de otras en
# todo lo que puede leer (su memoria, /proc, los archivos de las carpetas con
# escritura y las de calificación, tapadas) e imprime las que encuentra.
SEARCH_EVERYWHERE = (
    "import json as _json, mmap, os as _os, re\n"
    + "MARKER = re.compile(rb'MARCA-[0-9a-f]{40}')\n"
    + "MARKER_UTF16 = re.compile(rb'M\\0A\\0R\\0C\\0A\\0-\\0(?:[0-9a-f]\\0){40}')\n"
    + inspect.getsource(scan_own_memory)
    + """
def _in_files(roots):
    found = set()
    for root in roots:
        for folder, _, names in _os.walk(root):
            for name in names:
                try:
                    with open(_os.path.join(folder, name), "rb") as handle:
                        data = handle.read(1 << 24)
                except OSError:
                    continue
                found |= {m.group().decode() for m in MARKER.finditer(data)}
    return found

def _in_proc():
    found = set()
    for entry in _os.listdir("/proc"):
        if not entry.isdigit():
            continue
        for name in ("cmdline", "environ", "mem"):
            try:
                with open(f"/proc/{entry}/{name}", "rb") as handle:
                    data = handle.read(1 << 20)
            except OSError:
                continue
            found |= {m.group().decode() for m in MARKER.finditer(data)}
    return found

# Controles: su propia marca está en su memoria y, escrita en /tmp, en un archivo.
with open(f"/tmp/{ME}", "w") as _handle:
    _handle.write(ME)
_memory, _files = set(scan_own_memory()), _in_files(ROOTS)
_seen = _memory | _files | _in_proc()
print("BUSQUEDA " + _json.dumps({
    "me": ME, "controls": [ME in _memory, ME in _files], "others": sorted(_seen - {ME})
}))
"""
)


@pytest.mark.grading
@pytest.mark.slow
@needs_sandbox
def test_no_submission_finds_a_classmate(tmp_path):
    """Treinta entregas de 01, cada una con su marca: ninguna encuentra la de
    otra en nada de lo que puede leer, calificadas por ``python -m
    autograder grade`` (con su servidor de kernels, dos trabajos a la vez)."""
    from tests.notebooks import fill_solutions, honest_answers, read

    module_id, students = "01_bandidos", 30
    submissions = tmp_path / "entregas"
    submissions.mkdir()
    out = tmp_path / "notas"
    answers = honest_answers(module_id)
    first = next(iter(answers))
    released = read(release_path(module_id))
    roots = ["/tmp", "/dev/shm", "/var/tmp", "/run", str(tmp_path)]
    marks = {}
    for index in range(students):
        me = "MARCA-" + secrets.token_hex(20)
        student = f"estudiante{index:03d}"
        marks[student] = me
        search = f"ME = {me!r}\nROOTS = {roots!r}\n" + SEARCH_EVERYWHERE
        nb = fill_solutions(
            released, {**answers, first: answers[first] + "\n" + search}
        )
        nbformat.write(nb, submissions / f"{student}.ipynb")
    rows = grade_batch(module_id, submissions, out, "--jobs", "2", timeout=900)
    assert len(rows) == students
    assert list((out / "_work" / "_servidores").glob("servidor-*")), "sin servidor"
    reports = {}
    for student, me in marks.items():
        graded = autograded_path(out / "_work", module_id, student)
        printed = "".join(
            output.get("text", "")
            for cell in nbformat.read(graded, as_version=4).cells
            for output in cell.get("outputs", [])
        )
        line = next(
            (x for x in printed.splitlines() if x.startswith("BUSQUEDA ")), None
        )
        assert line is not None, f"{student}: la búsqueda no llegó a ejecutarse"
        reports[student] = json.loads(line.removeprefix("BUSQUEDA "))
        assert reports[student]["me"] == me
        # La búsqueda ve lo que debe: su marca, en su memoria y en su archivo.
        assert reports[student]["controls"] == [True, True], student
    leaks = {s: r["others"] for s, r in reports.items() if r["others"]}
    assert leaks == {}, f"entregas que vieron la marca de otra: {leaks}"


def test_a_huge_executed_notebook_does_not_come_back(monkeypatch):
    # Una entrega que imprime sin fin no llena la memoria de quien lee su
    # cuaderno: pasado MAX_NOTEBOOK_BYTES se corta y se dice por qué.
    monkeypatch.setattr(forkserver, "MAX_NOTEBOOK_BYTES", 1 << 20)
    monkeypatch.setattr(forkserver, "_isolate", _fake_isolate)
    monkeypatch.setattr(forkserver, "_run_submission", _fake_run)
    request = {"name": "grande.ipynb", "notebook": "a" * (3 << 20), "tmp_bytes": 1}
    assert forkserver._handle(request, {}) == {"error": forkserver.too_large()}
    request["notebook"] = "a" * 1000
    assert forkserver._handle(request, {}) == {"notebook": "a" * 1000}


_PRELOAD_THREADS = """
import sys, nbformat
from autograder import forkserver
from autograder.course import source_path
nb = nbformat.read(source_path(sys.argv[1]), as_version=4)
forkserver._load(list(forkserver.preload_for(nb)))
print(forkserver._single_threaded() or "un hilo")
"""


@pytest.mark.grading
@pytest.mark.parametrize("module_id", module_ids())
def test_every_module_can_use_the_server(module_id):
    """Lo que carga el servidor para cada cuaderno no deja hilos vivos, con el
    entorno del sandbox: si no, se califica con un kernel nuevo por entrega
    (09 pasó de 177 s a 414 s por 100 cuando datasets trajo el hilo de fondo de
    jemalloc)."""
    import subprocess
    import sys

    from autograder.sandbox import _environment

    done = subprocess.run(
        [sys.executable, "-c", _PRELOAD_THREADS, module_id],
        env=_environment(),
        capture_output=True,
        text=True,
        cwd=forkserver.__file__.rsplit("/autograder/", 1)[0],
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "un hilo", done.stdout
