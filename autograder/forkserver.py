"""Un servidor de kernels ya cargados: calificar sin importar PyTorch cien veces.

Lanzar un kernel nuevo por entrega e importar en él PyTorch, transformers y
el curso cuesta más CPU que calificar la entrega (ver BENCHMARKS.md). Este
servidor los importa **una vez** y bifurca (``fork``) un proceso por entrega,
que ya los tiene cargados. El aislamiento no se comparte:

* El servidor vive en un sandbox de bubblewrap como el de siempre (sin red,
  todo en solo lectura, las carpetas de calificación tapadas, un usuario sin
  privilegios) y nunca ejecuta código de un estudiante. Solo carga módulos
  que importa el cuaderno fuente (``solutions/``), no la entrega.
* Cada entrega recibe, dentro de él, su propio sandbox: espacios de nombres
  nuevos de usuario, de montajes, de procesos, de IPC y de nombre de máquina;
  un ``/tmp`` y un ``/dev/shm`` nuevos y vacíos (ahí está su carpeta,
  ``/tmp/entrega``); lo demás que fuera escribible, en solo lectura; ninguna
  capacidad; sus límites de memoria, procesos y archivos. Al terminar su
  ejecutor (el proceso 1 de su espacio de procesos), el núcleo del sistema
  mata todo lo que quede dentro: nada pasa de una entrega a la siguiente.
* Cada entrega tiene su kernel (IPython), bifurcado de su ejecutor.
* El servidor nunca tiene en su memoria nada de una entrega: bifurca primero
  y es el hijo quien lee la petición (el cuaderno entregado) y escribe la
  respuesta (el cuaderno ejecutado). Así lo que bifurca para la entrega
  siguiente es el servidor tal como quedó tras cargar los módulos, y ningún
  kernel puede encontrar en su propia memoria el código de otra entrega.
* Los procesos que un estudiante no debe tocar (el servidor, el ejecutor) no
  se dejan leer ni escribir por ``/proc`` (``PR_SET_DUMPABLE``), y desde su
  espacio de procesos no puede nombrarlos para mandarles señales.

Si el sistema no deja crear esos espacios dentro del sandbox (se prueba al
arrancar), el servidor lo dice (:class:`UnavailableError`) y se califica como
antes: un sandbox de bubblewrap y un kernel nuevo por entrega.

Del lado del calificador: ``autograder.sandbox.execute_notebook(...,
preload=preload_for(fuente))``, que usa :func:`server_for` y :class:`Server`.
Dentro del sandbox: ``python -m autograder.forkserver MODULO ...``.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import importlib
import json
import os
import re
import select
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import nbformat

from autograder import audit, execute

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME = 16384, 1 << 18, 1 << 21
# Lo que ``statvfs`` dice de un montaje y la opción de ``mount`` que lo pide.
_KEPT_FLAGS = {
    os.ST_NOSUID: MS_NOSUID,
    os.ST_NODEV: MS_NODEV,
    os.ST_NOEXEC: MS_NOEXEC,
    os.ST_NOATIME: MS_NOATIME,
    os.ST_NODIRATIME: MS_NODIRATIME,
    os.ST_RELATIME: MS_RELATIME,
}
_PR_SET_DUMPABLE = 4
_CAPABILITY_VERSION_3 = 0x20080522

#: Lo que todo ejecutor y todo kernel importan.
ALWAYS = (
    "nbformat",
    "nbclient",
    "jupyter_client.manager",
    "jupyter_client.connect",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "matplotlib_inline.backend_inline",
    "autograder.audit",
    "autograder.execute",
)
#: Se cargan si el cuaderno importa ``torch``. ``torch._dynamo`` lo importa
#: PyTorch la primera vez que se crea un optimizador (más de un segundo).
WITH_TORCH = ("torch._dynamo", "torch.optim")
_HEADER = struct.Struct("!Q")
#: El tamaño máximo de un cuaderno ejecutado. Una entrega que imprime sin fin
#: se corta aquí: su ejecutor no guarda en memoria más que esto.
MAX_NOTEBOOK_BYTES = 64 * 1024**2
#: El código de salida del hijo que encontró cerrada la entrada: no hay más
#: entregas y el servidor termina.
_NO_MORE = 3
_libc = ctypes.CDLL(None, use_errno=True)


class UnavailableError(Exception):
    """No se puede usar el servidor aquí (el mensaje dice por qué)."""


# ---------------------------------------------------------------------------
# Qué cargar
# ---------------------------------------------------------------------------


def preload_for(source_nb) -> tuple[str, ...]:
    """Los módulos que importa el cuaderno fuente, más los del ejecutor.

    Se leen con ``ast`` de las celdas de código (las líneas mágicas fuera);
    ``from a.b import c`` carga ``a.b`` y, si existe, el submódulo ``a.b.c``.
    Un atributo de un módulo importado que el cuaderno usa (``trl.GRPOTrainer``)
    va como ``"trl:GRPOTrainer"``: las bibliotecas que cargan sus piezas al
    pedirlas (TRL, transformers) las cargan así una vez, en el servidor, y no
    en cada entrega.
    """
    from autograder.sources import parse_code

    names: list[str] = []
    aliases: dict[str, str] = {}
    trees = [parse_code(c.source) for c in source_nb.cells if c.cell_type == "code"]
    trees = [tree for tree in trees if tree is not None]
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
                aliases.update(
                    {a.asname: a.name for a in node.names if a.asname}
                    | {a.name: a.name for a in node.names if "." not in a.name}
                )
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
                names += [f"{node.module}.{alias.name}" for alias in node.names]
    attributes = [
        f"{aliases[node.value.id]}:{node.attr}"
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in aliases
    ]
    if any(name.split(".")[0] == "torch" for name in names):
        names += WITH_TORCH
    return tuple(dict.fromkeys([*ALWAYS, *names, *attributes]))


def _load(names: list[str]) -> list[str]:
    """Importa lo que se pueda; lo que falle fallará igual en el kernel. Un
    ``"módulo:atributo"`` pide además ese atributo del módulo ya cargado."""
    loaded = []
    for name in names:
        if ":" in name:
            module, _, attribute = name.partition(":")
            if module in sys.modules:
                try:
                    getattr(sys.modules[module], attribute)
                except Exception:  # noqa: BLE001  (lo mismo fallará en el kernel)
                    continue
                loaded.append(name)
            continue
        parent = name.rpartition(".")[0]
        if parent and parent in sys.modules:
            try:
                if importlib.util.find_spec(name) is None:
                    continue  # ``from a import función``: no es un módulo
            except (ImportError, ValueError):
                continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001  (también SystemExit de un módulo raro)
            continue
        loaded.append(name)
    return loaded


# ---------------------------------------------------------------------------
# Llamadas al sistema
# ---------------------------------------------------------------------------


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _dumpable(value: bool) -> None:
    _check(_libc.prctl(_PR_SET_DUMPABLE, int(value), 0, 0, 0), "prctl")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data=None):
    def encode(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    result = _libc.mount(
        encode(source), encode(target), encode(kind), flags, encode(data)
    )
    _check(result, f"mount {target}")


def _drop_capabilities() -> None:
    """Sin ninguna capacidad (las que da crear un espacio de usuario)."""

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint32) for name in ("eff", "perm", "inh")]

    header, data = Header(_CAPABILITY_VERSION_3, 0), (Data * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _enter_namespaces() -> None:
    """Espacios nuevos de usuario (el mismo uid), montajes, procesos, IPC y
    nombre. El que llama sigue en el espacio de procesos de antes: el
    primer hijo que cree será el proceso 1 del nuevo."""
    uid, gid = os.getuid(), os.getgid()
    _dumpable(True)  # para poder escribir su propio /proc/self/uid_map
    try:
        _check(_libc.unshare(NAMESPACES), "unshare")
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    finally:
        _dumpable(False)


def _read_only(path: str) -> None:
    """Vuelve a montar ``path`` en solo lectura, con las demás opciones."""
    flags = os.statvfs(path).f_flag
    kept = sum(flag for st, flag in _KEPT_FLAGS.items() if flags & st)
    _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept)


#: Lo que se monta nuevo y vacío para cada entrega.
FRESH = ("/tmp", "/dev/shm")
#: Montajes que no guardan archivos: no hace falta cerrarlos.
_NOT_STORAGE = ("/proc", "/dev/pts", "/sys")


def _unescape(text: str) -> str:
    """Los nombres de /proc/self/mountinfo escriben «\\040» por un espacio."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _mount_points() -> list[tuple[str, list[str]]]:
    """Cada montaje de /proc/self/mountinfo: su punto y sus opciones."""
    rows = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        rows.append((_unescape(fields[4]), fields[5].split(",")))
    return rows


def writable_mounts() -> list[str]:
    """Los puntos de montaje (carpetas) montados con escritura."""
    points = []
    for point, options in _mount_points():
        if "rw" in options and os.path.isdir(point) and point not in points:
            points.append(point)
    return points


def _under(point: str, root: str) -> bool:
    return point == root or point.startswith(root + "/")


def carried_over(root: str, skip: str) -> list[str]:
    """Los montajes que cuelgan de ``root`` (salvo ``skip`` y lo suyo), sin
    los que cuelgan de otro de la lista.

    Son los de solo lectura que el sandbox de fuera puso en /tmp (Python o el
    curso, si viven ahí, como un clon en /tmp): el /tmp nuevo de cada entrega
    los vuelve a tener, con lo que tapan dentro (``solutions/``...).
    """
    points = sorted(
        {p for p, _ in _mount_points() if p.startswith(root + "/")}
        - {p for p, _ in _mount_points() if _under(p, skip)}
    )
    top: list[str] = []
    for point in points:
        if not any(_under(point, t) for t in top):
            top.append(point)
    return top


def unsealed_mounts() -> list[str]:
    """Los montajes con escritura que no son los nuevos de cada entrega
    (:data:`FRESH`) ni de los que no guardan archivos: dentro del sandbox de
    una entrega, ninguno."""
    roots = FRESH + _NOT_STORAGE
    return [
        point
        for point in writable_mounts()
        if not any(_under(point, root) for root in roots)
    ]


def _fresh_filesystem(tmp_bytes: int) -> None:
    """``/tmp`` y ``/dev/shm``, nuevos y vacíos; todo lo demás que el sandbox
    de fuera montara con escritura (sin root: ``/dev`` y el tmpfs que tapa
    $HOME), en solo lectura. Así nada escrito por una entrega lo lee otra."""
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    for point in unsealed_mounts():
        _read_only(point)
    # Lo que el sandbox de fuera montó en /tmp, salvo su carpeta (la de
    # trabajo del servidor, donde está ahora): se guarda antes de taparlo.
    carried = {p: os.open(p, os.O_PATH) for p in carried_over("/tmp", os.getcwd())}
    for path in FRESH:
        if os.path.isdir(path):
            options = f"size={tmp_bytes},mode=1777"
            _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, options)
    for point, fd in carried.items():
        os.makedirs(point, mode=0o755, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", point, None, MS_BIND | MS_REC)
        os.close(fd)
    if left := unsealed_mounts():
        raise OSError(f"siguen con escritura: {', '.join(left)}")


def _isolate(tmp_bytes: int) -> int:
    """Crea el sandbox de una entrega: devuelve 0 en el proceso de dentro (el
    1 de su espacio) y el pid de ese proceso en el de fuera."""
    _enter_namespaces()
    pid = os.fork()
    if pid:
        return pid
    _fresh_filesystem(tmp_bytes)
    _drop_capabilities()
    return 0


# ---------------------------------------------------------------------------
# El kernel, bifurcado del ejecutor
# ---------------------------------------------------------------------------


class _ForkedProcess:
    """Lo poco de ``subprocess.Popen`` que necesita jupyter_client."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, 9)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        self.returncode = self.returncode if self.returncode is not None else -9


class _Provisioner:
    """Lo que jupyter_client le pide a un «provisioner» sobre su proceso."""

    def __init__(self, process: _ForkedProcess, proc_pid: int) -> None:
        self.process = process
        self.pid = process.pid
        #: El mismo proceso visto en /proc (el sandbox de fuera numera otro).
        self.proc_pid = proc_pid

    @property
    def has_process(self) -> bool:
        return self.process.poll() is None

    async def poll(self) -> int | None:
        return self.process.poll()

    async def wait(self) -> int | None:
        self.process.kill()
        return self.process.returncode

    async def send_signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signum)

    async def kill(self, restart: bool = False) -> None:  # noqa: ARG002
        self.process.kill()

    async def terminate(self, restart: bool = False) -> None:  # noqa: ARG002
        self.process.kill()

    async def cleanup(self, restart: bool = False) -> None:  # noqa: ARG002
        return None


def _kernel_main(connection_file: str, arguments: list[str], channel, report: int):
    """El kernel: IPython con el gancho del registro, sin más descriptores
    que los suyos. Nunca vuelve."""
    try:
        os.setpgid(0, 0)
        # Su ejecutor mira por /proc que no cierre el canal del registro.
        _dumpable(True)
        os.write(report, os.readlink("/proc/self").encode())
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        keep = channel.kernel_fd
        os.closerange(3, keep)
        os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))
        os.environ.update(channel.environment())
        sys.argv = ["ipykernel_launcher", "-f", connection_file, *arguments]
        from ipykernel.kernelapp import IPKernelApp

        app = IPKernelApp.instance()
        app.initialize(sys.argv[1:])
        app.start()
    finally:
        os._exit(0)


def _fork_kernel(channel, arguments: list[str]):
    """Bifurca el kernel de este proceso y devuelve su gestor (jupyter_client)."""
    from jupyter_client.connect import write_connection_file
    from jupyter_client.manager import AsyncKernelManager

    class ForkedKernelManager(AsyncKernelManager):
        """Un kernel que ya corre (bifurcado); este gestor solo lo vigila."""

        provisioner: _Provisioner

        @property
        def has_kernel(self) -> bool:
            return self.provisioner.process.poll() is None

        async def _async_is_alive(self) -> bool:
            return self.provisioner.process.poll() is None

        async def _async_interrupt_kernel(self) -> None:
            await self.provisioner.send_signal(2)  # SIGINT, como jupyter_client

        is_alive = _async_is_alive
        interrupt_kernel = _async_interrupt_kernel

        def kill_forked(self) -> None:
            self.provisioner.process.kill()

    runtime = Path(os.environ.get("JUPYTER_RUNTIME_DIR", "/tmp/jupyter"))
    runtime.mkdir(parents=True, exist_ok=True)
    connection_file, _ = write_connection_file(
        str(runtime / f"kernel-{os.getpid()}-{time.monotonic_ns()}.json"),
        ip="127.0.0.1",
        key=os.urandom(16).hex().encode(),
    )
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _kernel_main(connection_file, arguments, channel, write_end)
    os.close(write_end)
    seen = os.read(read_end, 64).decode() or "0"
    os.close(read_end)
    km = ForkedKernelManager(connection_file=connection_file, kernel_name="python3")
    km.load_connection_file()
    km.provisioner = _Provisioner(_ForkedProcess(pid), int(seen))
    return km


# ---------------------------------------------------------------------------
# Dentro del sandbox: el servidor
# ---------------------------------------------------------------------------


def _send(fd: int, message: dict) -> None:
    data = json.dumps(message).encode()
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int, deadline: float | None = None) -> dict | None:
    """Un mensaje; ``None`` si el otro extremo cerró. ``TimeoutError`` si
    pasa ``deadline`` (de ``time.monotonic``) sin que llegue entero."""

    def read(size: int) -> bytes | None:
        data = b""
        while len(data) < size:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    raise TimeoutError
            chunk = os.read(fd, min(size - len(data), 1 << 20))
            if not chunk:
                return None
            data += chunk
        return data

    header = read(_HEADER.size)
    body = read(_HEADER.unpack(header)[0]) if header is not None else None
    return json.loads(body) if body is not None else None


def _run_submission(request: dict, out: int, fonts: dict[str, bytes]) -> None:
    """En el proceso 1 del sandbox de una entrega: la ejecuta y escribe el
    cuaderno en ``out``. Nunca vuelve."""
    try:
        folder = Path(request["folder"])  # /tmp/entrega, como en autograder/sandbox
        folder.mkdir(mode=0o700, parents=True)
        for name, data in fonts.items():
            (folder / ".matplotlib").mkdir(exist_ok=True)
            (folder / ".matplotlib" / name).write_bytes(data)
        (folder / request["name"]).write_text(request["notebook"], encoding="utf-8")
        os.chdir(folder)
        execute.set_limits(
            request["memory"], request["processes"], request["file_size"]
        )
        nb = nbformat.reads(request["notebook"], as_version=4)
        nb = execute.run(
            nb, str(folder), request["cell_timeout"], request["hidden"], _fork_kernel
        )
        data = nbformat.writes(nb).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]
    finally:
        os._exit(0)


def _handle(request: dict, fonts: dict[str, bytes]) -> dict:
    """Una entrega, en un proceso bifurcado con su propio sandbox."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.closerange(3, write_end)
            os.closerange(write_end + 1, os.sysconf("SC_OPEN_MAX"))
            inner = _isolate(request["tmp_bytes"])
            if inner == 0:
                _run_submission(request, write_end, fonts)
            os.close(write_end)
            os.waitpid(inner, 0)
        finally:
            os._exit(0)
    os.close(write_end)
    data = bytearray()
    while chunk := os.read(read_end, 1 << 20):
        data += chunk
        if len(data) > MAX_NOTEBOOK_BYTES:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)  # el proceso 1 del sandbox: muere todo dentro
            break
    os.close(read_end)
    os.waitpid(pid, 0)
    if len(data) > MAX_NOTEBOOK_BYTES:
        return {"error": too_large()}
    if not data:
        return {"error": "el ejecutor de la entrega terminó sin devolver nada"}
    return {"notebook": data.decode("utf-8", "replace")}


def too_large() -> str:
    """Por qué no vuelve un cuaderno que supera :data:`MAX_NOTEBOOK_BYTES`."""
    return (
        f"el cuaderno ejecutado ocupa más de {MAX_NOTEBOOK_BYTES // 1024**2} MiB "
        "(¿una celda que imprime sin parar?)"
    )


def _probe(tmp_bytes: int) -> str:
    """``""`` si este sistema deja crear el sandbox de una entrega; si no, por qué."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_end)
            inner = _isolate(tmp_bytes)
            if inner == 0:
                Path("/tmp/prueba").write_text("ok")
                # Python y el curso se siguen viendo (también si viven en /tmp).
                seen = os.path.exists(sys.executable) and os.path.exists(__file__)
                os._exit(0 if os.getpid() == 1 and seen else 3)
            code = os.waitstatus_to_exitcode(os.waitpid(inner, 0)[1])
            if code != 0:
                os.write(write_end, "el sandbox de la entrega falló".encode())
        except OSError as error:
            os.write(write_end, str(error).encode()[:300])
        finally:
            os._exit(code)
    os.close(write_end)
    message = os.read(read_end, 400).decode("utf-8", "replace")
    os.close(read_end)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return "" if code == 0 and not message else message or f"código {code}"


def serve(names: list[str]) -> int:
    """El bucle del servidor: una petición (cuaderno y límites) por entrega."""
    sys.modules.setdefault("rfc3987_syntax", None)  # ver autograder/execute.py
    replies = os.dup(1)
    os.dup2(2, 1)  # lo que imprima un import no se mezcla con las respuestas
    fonts: dict[str, bytes] = {}
    config = Path(os.environ.get("MPLCONFIGDIR", "/nonexistent"))
    if config.is_dir():
        fonts = {p.name: p.read_bytes() for p in config.glob("fontlist-*.json")}
    _load(names)
    audit.protect_process()
    problem = _single_threaded() or _probe(1024**2)
    _send(replies, {"ready": not problem, "problem": problem})
    if problem:
        return 1
    return serve_requests(0, replies, fonts)


def _single_threaded() -> str:
    """``""`` si este proceso tiene un solo hilo; si no, cuáles hay.

    ``fork`` copia solo el hilo que lo llama: un cerrojo que otro hilo tuviera
    tomado quedaría tomado para siempre en el hijo. Lo que se carga no debe
    dejar hilos vivos (el entorno del servidor fija ``OMP_NUM_THREADS=1`` y
    ``OPENBLAS_NUM_THREADS=1``).
    """
    import threading

    tasks = (
        len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    )
    if threading.active_count() == 1 and tasks == 1:
        return ""
    names = [t.name for t in threading.enumerate()]
    with contextlib.suppress(OSError):  # los del sistema, con el nombre que tienen
        names = [
            Path(f"/proc/self/task/{task}/comm").read_text().strip()
            for task in sorted(os.listdir("/proc/self/task"))
        ]
    return f"tras cargar los módulos quedan {tasks} hilos vivos ({', '.join(names)})"


def serve_requests(requests: int, replies: int, fonts: dict[str, bytes]) -> int:
    """Una entrega por petición que llega por ``requests``, hasta que se cierre.

    El servidor no lee la petición: espera a que haya algo que leer, se
    bifurca, y el hijo lee la petición, la ejecuta (:func:`_handle`) y
    escribe la respuesta en ``replies``. Nada de una entrega pasa nunca por la
    memoria del servidor, de la que se bifurca la siguiente.

    Devuelve 0 cuando se cierra la entrada, y 1 si un hijo muere sin
    terminar su petición (lo que quedara de ella en el canal ya no se puede
    separar de la siguiente: el calificador ve que el servidor terminó y
    arranca otro).
    """
    while select.select([requests], [], [])[0]:
        child = os.fork()
        if child == 0:
            code = 1
            try:
                request = _receive(requests)
                if request is None:
                    code = _NO_MORE
                else:
                    _send(replies, _handle(request, fonts))
                    code = 0
            finally:
                os._exit(code)
        code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        if code == _NO_MORE:
            return 0
        if code != 0:
            return 1
    return 0


# ---------------------------------------------------------------------------
# Del lado del calificador
# ---------------------------------------------------------------------------


class Server:
    """Un servidor en su sandbox, para las entregas de un proceso de trabajo.

    Args:
        command: la orden que lo lanza aislado (``bwrap ... python -m
            autograder.forkserver MODULO ...``).
        env: su entorno.
        workdir: su carpeta (se ve dentro como ``/tmp/entrega``); ahí queda su
            registro, ``_servidor.log``.
    """

    def __init__(self, command: list[str], env: dict[str, str], workdir: Path):
        self.log = open(workdir / "_servidor.log", "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            command,
            cwd=workdir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            start_new_session=True,
        )
        try:
            hello = _receive(self.process.stdout.fileno(), time.monotonic() + 300)
        except TimeoutError:
            hello = None
        if not hello or not hello.get("ready"):
            self.close()
            reason = (hello or {}).get("problem") or "el servidor no arrancó"
            raise UnavailableError(reason)

    def run(self, request: dict, timeout: float) -> dict | None:
        """La respuesta del servidor, o ``None`` si superó ``timeout``."""
        _send(self.process.stdin.fileno(), request)
        try:
            reply = _receive(self.process.stdout.fileno(), time.monotonic() + timeout)
        except TimeoutError:
            self.close()
            return None
        if reply is None:
            self.close()
            return {"error": "el servidor de kernels terminó de repente"}
        return reply

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 9)
        self.process.wait()
        self.log.close()


_servers: dict[tuple, Server] = {}
_unavailable: dict[tuple, str] = {}


def server_for(key: tuple, start: Callable[[], Server]) -> Server:
    """El servidor de este proceso para ``key`` (lo crea ``start()`` la primera
    vez, o si murió). Lanza :class:`UnavailableError` si aquí no se puede, y
    ya no lo vuelve a intentar con esa clave."""
    key = (os.getpid(), *key)
    if key in _unavailable:
        raise UnavailableError(_unavailable[key])
    server = _servers.get(key)
    if server is None or not server.alive():
        try:
            server = _servers[key] = start()
        except UnavailableError as error:
            _unavailable[key] = str(error)
            raise
    return server


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1:]))
