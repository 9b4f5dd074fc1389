"""El registro de intentos: lo que el código intenta aunque se trague el error.

El sandbox (:mod:`autograder.sandbox`) ya impide salir a la red o escribir
fuera de la carpeta de la entrega, pero un ``try/except`` deja el intento sin
rastro en las salidas. Aquí se anota *dentro* del kernel que califica, con un
gancho de auditoría de Python (:func:`sys.addaudithook`, que no se puede
quitar), sin tocar el aislamiento ni el comportamiento del código legítimo:

* **red**: ``socket.connect`` (también ``connect_ex`` y
  ``create_connection``), ``sendto`` y ``sendmsg`` con dirección, a cualquier
  sitio (también 127.0.0.1 y sockets Unix: al calificar nada necesita hablar
  con nadie), y resolver un nombre que no es local (``getaddrinfo``,
  ``gethostbyname``...). No se anota ``bind``: abrir un puerto dentro del
  espacio de red propio del sandbox no llega a ninguna parte, y quien quiera
  usarlo tiene que conectarse, que sí se anota. Tampoco resolver
  ``localhost``.
* **escritura**: abrir para escribir (``open``, ``os.open``, ``pathlib``,
  ``io.FileIO``, también a través de numpy o torch, que usan ``open``),
  borrar, renombrar, crear carpetas o enlaces, cambiar permisos o fechas...
  fuera de la carpeta de la entrega y de ``/tmp`` (y de ``/dev/null``,
  ``/dev/shm`` y los terminales). La ruta se resuelve como la vería el
  sistema: relativa a la carpeta actual o a ``dir_fd`` y siguiendo enlaces.
* **lectura** (y escritura): abrir algo de lo que el sandbox tapa (el espacio
  de calificación, las otras entregas, las notas, las soluciones), aunque
  esté dentro de ``/tmp``. Leer lo demás es normal y no se anota.
* **proceso**: lanzar un programa (``subprocess``, ``os.system``,
  ``os.exec*``, ``os.posix_spawn``, ``os.spawn*``, ``pty.spawn``). Un proceso
  nuevo ya no lleva el gancho, así que se anota la orden entera: ahí se ve un
  ``curl`` o un ``> /fuera``. ``os.fork`` no: el hijo lleva el gancho.
* **manipulación**: tocar el propio gancho (``__code__``, ``__defaults__``...),
  añadir otro gancho de auditoría, escribir un módulo que tape ``autograder``
  o ``helpers`` (o un ``sitecustomize``/``.pth``), y cerrar, cambiar o
  ensuciar el canal del registro.

**El canal.** Cada intento se escribe en el momento, una línea por intento, en
un pipe cuyo otro extremo solo tiene el ejecutor (:mod:`autograder.execute`),
fuera del kernel: lo que ya se escribió no se puede borrar. El ejecutor sabe
qué celda se está ejecutando (no lo dice el kernel) y se declara no volcable
(``PR_SET_DUMPABLE``), así que el kernel no puede abrir sus descriptores por
``/proc``. El gancho solo usa valores inmutables y funciones de C guardados
al instalarlo (ni globales de este módulo ni funciones de la biblioteca
estándar que se puedan parchear); cambiarle atributos se impide y se anota.
Lo que el ejecutor no espera en el canal (líneas rotas, otro «listo»), y que
el canal deje de ser el pipe entre dos celdas, también se anota.

**Lo que no ve.** El código de C (``ctypes``, extensiones) no pasa por los
ganchos: ``ctypes`` en el código del estudiante ya deja la entrega en
«revisar» (:mod:`autograder.integrity`). ``os.open(..., dir_fd=...)`` no dice
su ``dir_fd`` al gancho. Y un proceso lanzado no lleva el gancho (se anota su
orden). Nada de esto debilita el sandbox, que sigue impidiéndolo todo.

Los intentos van a ``grades.csv`` (columna ``incidents``), al informe y al
cuaderno calificado que ve la docente en Formgrader; nunca a la
retroalimentación del estudiante.
"""

from __future__ import annotations

import ast
import os
import select
import sys
import threading

# Cómo le llega al kernel el canal: «fd|permitida:...|tapada:...|solo_lectura:...»
# (las rutas permitidas para escribir, las que el sandbox tapa y las que monta
# en solo lectura, aunque queden dentro de una permitida).
ENV = "AUTOGRADER_AUDIT"
# La extensión de IPython que instala el gancho al arrancar el kernel, antes
# de los archivos de arranque de IPython y de cualquier celda.
KERNEL_ARGUMENTS = ["--IPKernelApp.extensions=autograder.audit"]
# Las carpetas que el sandbox tapa, del calificador al ejecutor.
HIDDEN_ENV = "AUTOGRADER_HIDDEN"
READY = "listo"
KINDS = ("red", "escritura", "lectura", "proceso", "manipulación")
MAX_DETAIL = 300
# Intentos distintos que se guardan por entrega (los repetidos se cuentan).
MAX_RECORDS = 200

# Eventos de auditoría con rutas en las que se escribe: evento -> posiciones
# de (ruta, dir_fd) en sus argumentos.
_PATH_EVENTS = {
    "os.remove": ((0, 1),),
    "os.rmdir": ((0, 1),),
    "os.mkdir": ((0, 2),),
    "os.rename": ((0, 2), (1, 3)),
    "os.link": ((1, 3),),
    "os.symlink": ((1, 2),),
    "os.truncate": ((0, None),),
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.utime": ((0, 3),),
    "os.chflags": ((0, None),),
    "os.lchflags": ((0, None),),
    "os.setxattr": ((0, None),),
    "os.removexattr": ((0, None),),
    "os.mkfifo": ((0, None),),
    "os.mknod": ((0, None),),
    "shutil.rmtree": ((0, 1),),
}
_PROCESS_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "pty.spawn",
)
_NETWORK_EVENTS = ("socket.connect", "socket.sendto", "socket.sendmsg")
_NAME_EVENTS = (
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
)
_PATH_EVENTS_ITEMS = tuple(_PATH_EVENTS.items())
_TAMPER_EVENTS = ("object.__setattr__", "object.__delattr__", "sys.addaudithook")
EVENTS = frozenset(
    ("open", *_PATH_EVENTS, *_PROCESS_EVENTS, *_NETWORK_EVENTS, *_NAME_EVENTS)
    + _TAMPER_EVENTS
)
LOCAL_NAMES = frozenset(
    ("", "localhost", "localhost.localdomain", "127.0.0.1", "::1", "0.0.0.0", "::")
)
# Escribir aquí es normal (además de la carpeta de la entrega y /tmp).
ALWAYS_ALLOWED = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
ALLOWED_PREFIXES = ("/dev/shm/", "/dev/pts/", "/dev/fd/", "/proc/self/fd/", "/dev/std")
# Nombres de archivo que tapan el código que califica o que Python ejecuta solo.
SHADOWING = ("autograder", "helpers", "sitecustomize", "usercustomize")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


# ---------------------------------------------------------------------------
# Dentro del kernel
# ---------------------------------------------------------------------------


def make_hook(
    fd: int,
    allowed: tuple[str, ...],
    identity: tuple[int, int],
    hidden: tuple[str, ...] = (),
    readonly: tuple[str, ...] = (),
):
    """El gancho de auditoría que escribe cada intento en ``fd``.

    Todo lo que usa va en sus valores por defecto: funciones de C y valores
    inmutables. No tiene clausuras ni lee globales, así que no depende de nada
    que el código del estudiante pueda cambiar, y cambiar sus atributos
    (``__code__``, ``__defaults__``...) pasa por el propio gancho, que lo
    impide. Son dos funciones: ``hook`` descarta deprisa los eventos que no
    interesan y ``check`` mira los demás; las dos se reconocen por ``_me``, un
    objeto que solo ellas tienen.
    """
    me = object()

    def check(  # noqa: C901, PLR0912, PLR0913, PLR0915  (ver el docstring)
        event,
        args,
        _fd=fd,
        _identity=identity,
        _allowed=allowed,
        _hidden=hidden,
        _readonly=readonly,
        _always=ALWAYS_ALLOWED,
        _prefixes=ALLOWED_PREFIXES,
        _shadowing=SHADOWING,
        _path_events=_PATH_EVENTS_ITEMS,
        _process=_PROCESS_EVENTS,
        _network=_NETWORK_EVENTS,
        _names=_NAME_EVENTS,
        _local=LOCAL_NAMES,
        _write_flags=_WRITE_FLAGS,
        _max=MAX_DETAIL,
        _write=os.write,
        _fstat=os.fstat,
        _lstat=os.lstat,
        _readlink=os.readlink,
        _getcwd=os.getcwd,
        _fsdecode=os.fsdecode,
        _repr=repr,
        _str=str,
        _int=int,
        _len=len,
        _isinstance=isinstance,
        _getattr=getattr,
        _sequences=(list, tuple),
        _tuple=tuple,
        _bytes=bytes,
        _OSError=OSError,
        _PermissionError=PermissionError,
        _Exception=Exception,
        _me=me,
    ):
        reading = False
        if event == "open":
            if _isinstance(args[0], _int) or not _isinstance(args[2], _int):
                return
            if not (args[2] & _write_flags):
                if not _hidden:
                    return
                reading = True  # leer solo se mira en lo que el sandbox tapa
        records = []
        paths = []
        try:
            if event == "open":
                paths.append((args[0], None))
            elif event in _network:
                address = args[1]
                if _isinstance(address, _tuple) and _len(address) >= 2:
                    where = _str(address[0]) + ":" + _str(address[1])
                else:
                    where = _str(address)
                verb = "conectarse a " if event == "socket.connect" else "enviar a "
                records.append(("red", verb + where))
            elif event in _names:
                host = args[0]
                if _isinstance(host, _tuple):
                    host = host[0] if host else ""
                if host is None or _str(host) in _local:
                    return
                records.append(("red", "resolver el nombre «" + _str(host) + "»"))
            elif event in _process:
                if event == "subprocess.Popen":
                    command = args[1]
                elif event == "os.system" or event == "pty.spawn":
                    command = args[0]
                elif event == "os.spawn":
                    command = args[2]
                else:
                    command = args[1]
                if _isinstance(command, _bytes):
                    command = _fsdecode(command)
                if _isinstance(command, _sequences):
                    command = " ".join(
                        [
                            _fsdecode(c) if _isinstance(c, _bytes) else _str(c)
                            for c in command
                        ]
                    )
                records.append(("proceso", _str(command)))
            elif event == "object.__setattr__" or event == "object.__delattr__":
                defaults = _getattr(args[0], "__defaults__", None)
                if not (_isinstance(defaults, _tuple) and defaults[-1:] == (_me,)):
                    return
                records.append(("manipulación", "cambiar el gancho del registro"))
            elif event == "sys.addaudithook":
                records.append(("manipulación", "añadir otro gancho de auditoría"))
            else:
                for name, positions in _path_events:
                    if name == event:
                        for index, fd_index in positions:
                            dir_fd = (
                                args[fd_index]
                                if fd_index is not None and fd_index < _len(args)
                                else None
                            )
                            paths.append((args[index], dir_fd))
            for path, dir_fd in paths:
                # La ruta absoluta como la ve el sistema: relativa a la carpeta
                # actual (o a dir_fd), sin «..» y siguiendo los enlaces.
                if _isinstance(path, _bytes):
                    path = _fsdecode(path)
                if not _isinstance(path, _str):
                    continue
                if not path.startswith("/"):
                    base = _getcwd()
                    if dir_fd is not None and dir_fd != -1:
                        base = _readlink("/proc/self/fd/" + _str(dir_fd))
                    path = base + "/" + path
                parts = [p for p in path.split("/") if p and p != "."]
                done = []
                hops = 0
                while parts:
                    part = parts.pop(0)
                    if part == "..":
                        if done:
                            done.pop()
                        continue
                    candidate = "/" + "/".join([*done, part])
                    try:
                        is_link = _lstat(candidate).st_mode & 0o170000 == 0o120000
                    except _OSError:
                        is_link = False
                    if is_link and hops < 40:
                        hops += 1
                        target = _readlink(candidate)
                        if target.startswith("/"):
                            done = []
                        parts = [p for p in target.split("/") if p and p != "."] + parts
                        continue
                    done.append(part)
                full = "/" + "/".join(done)
                covered = False
                for root in _hidden:
                    if full == root or full.startswith(root + "/"):
                        covered = True
                if covered:  # lo que el sandbox tapa: gradebook, otras entregas...
                    records.append(("lectura" if reading else "escritura", full))
                    continue
                if reading:
                    continue
                name = done[-1] if done else ""
                stem = name[:-3] if name.endswith(".py") else name
                shadows = stem in _shadowing or name.endswith(".pth")
                for part in done:
                    if part in _shadowing:
                        shadows = True
                if shadows:
                    records.append(
                        ("manipulación", "escribir «" + full + "», que tapa un módulo")
                    )
                elif not (full in _always or full.startswith(_prefixes)):
                    inside = False
                    for root in _allowed:
                        if full == root or full.startswith(root + "/"):
                            inside = True
                    # Lo que el sandbox vuelve a montar en solo lectura (el
                    # curso, Python) puede quedar dentro de /tmp (un clon en
                    # /tmp): escribir ahí también es escribir fuera.
                    for root in _readonly:
                        if full == root or full.startswith(root + "/"):
                            inside = False
                    if not inside:
                        records.append(("escritura", full))
        except _Exception:  # un argumento raro: nunca rompe el código legítimo
            pass
        broken = False
        for kind, detail in records:
            line = kind + "\t" + _repr(detail[:_max]) + "\n"
            try:
                stat = _fstat(_fd)
                if (stat.st_dev, stat.st_ino) != _identity:
                    raise _OSError
                _write(_fd, line.encode("utf-8", "backslashreplace"))
            except _OSError:
                broken = True
        if broken:
            # El canal ya no es el pipe: alguien lo cerró o lo cambió. La
            # operación no sigue (y el ejecutor lo anota entre celdas).
            raise _PermissionError(
                "El registro de la calificación está cerrado: no se permite."
            )
        if records and (event == "object.__setattr__" or event == "object.__delattr__"):
            raise _PermissionError(
                "El gancho de auditoría de la calificación no se puede cambiar."
            )

    def hook(event, args, _events=EVENTS, _check=check, _me=me):
        # Se llama en cada evento de auditoría (también en cada id()): lo
        # mínimo antes de descartar los que no interesan.
        if event in _events:
            _check(event, args)

    return hook


def install(spec: str) -> None:
    """Instala el gancho en este proceso a partir de ``spec`` (ver :data:`ENV`)."""
    fd_text, allowed_text, hidden_text, readonly_text = spec.split("|")
    fd = int(fd_text)
    os.set_inheritable(fd, False)  # los programas que se lancen no lo heredan
    stat = os.fstat(fd)
    roots = tuple(os.path.realpath(p) for p in allowed_text.split(":") if p)
    hidden = tuple(os.path.realpath(p) for p in hidden_text.split(":") if p)
    readonly = tuple(os.path.realpath(p) for p in readonly_text.split(":") if p)
    hook = make_hook(fd, roots, (stat.st_dev, stat.st_ino), hidden, readonly)
    sys.addaudithook(hook)
    os.write(fd, f"{READY}\t''\n".encode())


def load_ipython_extension(ipython) -> None:  # noqa: ARG001
    """Al arrancar el kernel (``--IPKernelApp.extensions=autograder.audit``)."""
    spec = os.environ.pop(ENV, "")
    if spec:
        install(spec)


# ---------------------------------------------------------------------------
# En el ejecutor (fuera del kernel)
# ---------------------------------------------------------------------------


def read_only_roots() -> list[str]:
    """Lo que el sandbox monta en solo lectura (:func:`autograder.sandbox`):
    Python, el entorno virtual y el curso. Puede quedar dentro de /tmp."""
    course = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, course)]


def protect_process() -> None:
    """Que otros procesos del mismo usuario (el kernel) no puedan abrir los
    descriptores de este por ``/proc`` (``prctl(PR_SET_DUMPABLE, 0)``)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass


class AuditChannel:
    """El extremo del ejecutor: lee los intentos y los pone en su celda.

    Uso (ver :mod:`autograder.execute`): crear el canal antes de arrancar el
    kernel, poner :meth:`environment` en el entorno y
    ``--IPKernelApp.extensions=autograder.audit`` (:data:`KERNEL_ARGUMENTS`) en
    sus argumentos, engancharlo al cliente con :meth:`attach`, arrancar con
    ``pass_fds=(channel.kernel_fd,)`` y llamar a :meth:`finish` al final.
    """

    def __init__(
        self, allowed: list[str], hidden: list[str] = (), readonly: list[str] = ()
    ) -> None:
        self.read_fd, self.kernel_fd = os.pipe()
        # El mismo número dentro del kernel (lo hereda con pass_fds).
        self.kernel_number = self.kernel_fd
        os.set_blocking(self.read_fd, False)
        self.inode = os.fstat(self.read_fd).st_ino
        self.allowed = [str(path) for path in allowed]
        self.hidden = [str(path) for path in hidden if path]
        self.readonly = [str(path) for path in readonly if path]
        self.cell = ""
        self.kernel_pid: int | None = None
        self.ready = False
        self.closed = False
        self.broken = False
        self.records: dict[tuple[str, str, str], int] = {}
        self._buffer = b""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # El hilo lector arranca en :meth:`attach`: así un kernel bifurcado de
        # este proceso (autograder/forkserver.py) nace de un proceso sin hilos.
        self._thread = threading.Thread(target=self._run, daemon=True)

    def environment(self) -> dict[str, str]:
        """La variable que le dice al kernel dónde escribir y qué se permite."""
        allowed, hidden = ":".join(self.allowed), ":".join(self.hidden)
        readonly = ":".join(self.readonly)
        return {ENV: f"{self.kernel_fd}|{allowed}|{hidden}|{readonly}"}

    def attach(self, client) -> None:
        """Engancha el canal a un ``NotebookClient`` de nbclient."""
        client.on_notebook_start = lambda notebook: self.kernel_started(client.km)
        client.on_cell_execute = self.cell_starts
        self._thread.start()

    def kernel_started(self, kernel_manager) -> None:
        """El kernel ya tiene su extremo: este proceso cierra el suyo."""
        provisioner = getattr(kernel_manager, "provisioner", None)
        # En /proc: un kernel bifurcado en su propio espacio de procesos se ve
        # ahí con otro número (``proc_pid``).
        self.kernel_pid = getattr(provisioner, "proc_pid", None) or getattr(
            provisioner, "pid", None
        )
        if self.kernel_fd >= 0:
            os.close(self.kernel_fd)
            self.kernel_fd = -1

    def _add(self, kind: str, detail: str) -> None:
        key = (self.cell, kind, detail)
        if key in self.records or len(self.records) < MAX_RECORDS:
            self.records[key] = self.records.get(key, 0) + 1

    def _drain(self) -> None:
        """Lee lo que haya en el pipe (con el candado tomado)."""
        while not self.closed:
            try:
                chunk = os.read(self.read_fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                if self._buffer:
                    self._add("manipulación", "una línea rota en el canal del registro")
                return
            self._buffer += chunk
            *lines, self._buffer = self._buffer.split(b"\n")
            for line in lines:
                self._parse(line)
            if len(self._buffer) > 65536:  # el gancho nunca escribe tanto seguido
                self._buffer = b""
                self._add("manipulación", "escribir en el canal del registro")

    def _parse(self, line: bytes) -> None:
        kind, _, detail = line.decode("utf-8", "replace").partition("\t")
        try:
            text = ast.literal_eval(detail)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            text = None
        if kind == READY and not self.ready and text == "":
            self.ready = True
        elif kind in KINDS and isinstance(text, str) and self.ready:
            self._add(kind, text)
        else:
            self._add("manipulación", "escribir en el canal del registro")

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                readable, _, _ = select.select([self.read_fd], [], [], 0.05)
            except (OSError, ValueError):
                return
            if readable:
                with self._lock:
                    self._drain()
                if self.closed:
                    return

    def _channel_intact(self) -> bool:
        """¿Sigue el kernel teniendo el pipe en el descriptor que usa el gancho?"""
        if self.kernel_pid is None or not self.ready:
            return True
        try:
            target = os.readlink(f"/proc/{self.kernel_pid}/fd/{self.kernel_number}")
        except OSError:
            # Sin ese descriptor: o lo cerró, o el kernel murió (eso se informa
            # aparte; un kernel muerto no tiene ningún descriptor).
            try:
                return not os.listdir(f"/proc/{self.kernel_pid}/fd")
            except OSError:
                return True
        return target == f"pipe:[{self.inode}]"

    def cell_starts(self, cell, cell_index: int) -> None:  # noqa: ARG002
        """Antes de cada celda: lo leído hasta aquí es de la celda anterior."""
        with self._lock:
            self._drain()
            if self.cell and not self.broken and not self._channel_intact():
                # Se anota una vez, en la celda que lo hizo.
                self.broken = True
                self._add("manipulación", "cerrar o cambiar el canal del registro")
            self.cell = cell.get("id", "") or f"#{cell_index}"

    def finish(self, kernel_alive_to_the_end: bool) -> list[dict]:
        """Deja de leer y devuelve los intentos: ``cell`` (id), ``kind``,
        ``detail`` y ``count``."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        with self._lock:
            self._drain()
            if kernel_alive_to_the_end and self.kernel_pid is not None:
                if not self.ready:
                    # Ninguna celda puede impedirlo (arranca antes que todas):
                    # es un fallo de la instalación, no de la entrega.
                    self.cell = ""
                    self._add("sin registro", "el gancho no arrancó en el kernel")
            os.close(self.read_fd)
            if self.kernel_fd >= 0:
                os.close(self.kernel_fd)
        return [
            {"cell": cell, "kind": kind, "detail": detail, "count": count}
            for (cell, kind, detail), count in self.records.items()
        ]


# ---------------------------------------------------------------------------
# En el calificador: cada intento con su celda, en español
# ---------------------------------------------------------------------------

WHAT = {
    "red": "intentó usar la red",
    "escritura": "intentó escribir fuera de su carpeta",
    "lectura": "intentó leer lo que se tapa al calificar",
    "proceso": "lanzó un programa (fuera del registro)",
    "manipulación": "intentó manipular el registro de intentos",
    "sin registro": "no se pudieron registrar sus intentos",
}
# Cómo empieza cada incidencia de un intento (ver :func:`incident_phrase`).
ATTEMPT_PREFIX = "registrado "
# La celda de Formgrader con los intentos (la retroalimentación no la lleva).
NOTES_CELL_ID = "autograder-intentos"


def locate(attempts: list[dict], nb) -> list[dict]:
    """Añade a cada intento su celda en el cuaderno calificado: ``where``
    (p. ej. «en la celda [7] «import socket»» o «en la celda [9]
    (test_softmax)»). El número es el de ejecución, el que Formgrader enseña."""
    cells = {cell.get("id"): cell for cell in nb.cells}
    located = []
    for attempt in attempts:
        cell = cells.get(attempt.get("cell"))
        if cell is None:
            where = "fuera de las celdas (al arrancar el kernel o en otro hilo)"
        else:
            count = cell.get("execution_count")
            where = f"en la celda [{count}]" if count is not None else "en una celda"
            # audit.py corre también dentro del kernel del estudiante y solo
            # importa la biblioteca estándar: lee el metadato aquí mismo, sin
            # autograder.course (que trae nbformat).
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            first = next(
                (line.strip() for line in cell.source.splitlines() if line.strip()),
                "",
            )
            if grade_id:
                where += f" ({grade_id})"
            elif first:
                where += f" «{first[:60]}»"
        located.append({**attempt, "where": where})
    return located


def incident_phrase(attempt: dict) -> str:
    """La incidencia de un intento, para ``grades.csv`` y el informe."""
    kind = attempt.get("kind", "")
    detail = attempt.get("detail", "")
    if kind in ("escritura", "lectura"):
        detail = f"«{detail}»"
    times = attempt.get("count", 1)
    repeated = f", {times} veces" if times > 1 else ""
    return (
        f"{ATTEMPT_PREFIX}{attempt.get('where', 'en una celda')}: "
        f"{WHAT.get(kind, kind)} ({detail}{repeated})"
    )


def _inert(text: str) -> str:
    """Texto del estudiante que el Markdown de Formgrader enseña tal cual: cada
    signo que no sea letra, número o espacio va como entidad (ni HTML, ni
    enlaces, ni formato)."""
    return "".join(c if c.isalnum() or c == " " else f"&#{ord(c)};" for c in text)


def notes_cell(attempts: list[dict]):
    """La celda Markdown que encabeza el cuaderno calificado en Formgrader."""
    import nbformat

    lines = [
        "**⚠ Intentos registrados al calificar** (solo para la docente: la "
        "retroalimentación del estudiante no los muestra). El sandbox los "
        "impidió todos; el código pudo tragarse el error.",
        "",
        *(f"- {_inert(incident_phrase(a))}" for a in attempts),
    ]
    return nbformat.v4.new_markdown_cell(
        "\n".join(lines),
        id=NOTES_CELL_ID,
        metadata={"autograder": {"notes": True}},
    )


def without_notes(nb):
    """El cuaderno sin la celda de intentos (para la retroalimentación)."""
    nb.cells = [cell for cell in nb.cells if cell.get("id") != NOTES_CELL_ID]
    return nb
