"""El aislamiento de cada entrega al calificar.

El código de un estudiante se ejecuta con bubblewrap (``bwrap``):

* sin red (un espacio de nombres de red propio, solo con ``lo``);
* con todo el sistema de archivos en solo lectura, salvo su carpeta de trabajo
  y un ``/tmp`` pequeño y efímero; las carpetas de calificación (gradebook,
  otras entregas, notas) y ``$HOME`` quedan tapadas;
* con su propio espacio de procesos: al terminar no queda nada vivo;
* como un usuario sin privilegios, con límites de memoria, de procesos y de
  tamaño de archivo, y con un límite de tiempo por celda y por cuaderno.

Para un lote, ``execute_notebook`` puede bifurcar cada entrega de un servidor
que ya cargó PyTorch y el curso, con un sandbox propio por entrega dentro del
de bubblewrap (:mod:`autograder.forkserver`).

Si no hay bubblewrap (otro sistema operativo, un contenedor sin espacios de
nombres), se avisa bien alto y se aplican los límites que se puedan.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode

from autograder import forkserver
from autograder.audit import HIDDEN_ENV

# Usuarios sin privilegios para las entregas. El límite de procesos cuenta por
# usuario en todo el sistema, así que cada ejecución aislada usa el suyo: el de
# este número más el pid del proceso que la lanza (único mientras viva). Así un
# lote (o una entrega con una bomba de procesos) no agota el de otro.
FIRST_UID = 61000
# Dónde ve la entrega su carpeta de trabajo dentro del sandbox.
INSIDE = "/tmp/entrega"


@dataclass(frozen=True)
class Limits:
    """Límites de una entrega."""

    cell_timeout: int = 60  # segundos por celda
    notebook_timeout: int = 600  # segundos por cuaderno entero
    memory_bytes: int = 3 * 1024**3  # espacio de direcciones del kernel
    processes: int = 256  # procesos e hilos del usuario del sandbox
    file_bytes: int = 256 * 1024**2  # tamaño máximo de un archivo escrito
    tmp_bytes: int = 256 * 1024**2  # tamaño del /tmp del sandbox


@dataclass
class Sandbox:
    """Cómo se aísla la ejecución y qué se tapa.

    Attributes:
        hide: carpetas que el código del estudiante no debe ver (se tapan con
            un tmpfs vacío): el espacio de calificación, las entregas...
    """

    hide: list[Path] = field(default_factory=list)

    @staticmethod
    def uid() -> int:
        """El usuario sin privilegios de la ejecución que lanza este proceso."""
        return FIRST_UID + os.getpid()

    @staticmethod
    def unavailable_reason() -> str | None:
        """Por qué no se puede aislar aquí, o ``None`` si se puede."""
        if not sys.platform.startswith("linux"):
            return "bubblewrap solo existe en Linux"
        if shutil.which("bwrap") is None:
            return "no está instalado bubblewrap (apt-get install bubblewrap)"
        if os.geteuid() == 0 and shutil.which("setpriv") is None:
            return "falta setpriv (paquete util-linux)"
        probe = subprocess.run(
            [
                "bwrap",
                "--ro-bind",
                "/",
                "/",
                "--unshare-net",
                "--unshare-pid",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "true",
            ],
            capture_output=True,
            text=True,
        )
        if probe.returncode != 0:
            return f"bubblewrap no funciona aquí: {probe.stderr.strip()[:200]}"
        return None

    def command(self, inner: list[str], workdir: Path, limits: Limits) -> list[str]:
        """La orden ``bwrap ... inner`` que ejecuta ``inner`` aislado."""
        cmd = [
            "bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--size",
            str(limits.tmp_bytes),
            "--perms",
            "1777",
            "--tmpfs",
            "/tmp",
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
        ]
        # $HOME se tapa (claves, configuración...) y /tmp es uno nuevo. Si
        # Python o el curso viven debajo (pyenv en ~, un clon en /tmp), se
        # vuelven a montar, en solo lectura, solo esas carpetas.
        home = Path.home().resolve()
        cmd += ["--perms", "0755", "--tmpfs", str(home)]
        covered = [home, Path("/tmp")]
        for path in sorted(_needed_paths()):
            base = next((c for c in covered if path.is_relative_to(c)), None)
            if base is None:
                continue
            # bwrap crearía las carpetas intermedias con permisos 0700.
            for parent in reversed(path.relative_to(base).parents[:-1]):
                cmd += ["--perms", "0755", "--dir", str(base / parent)]
            cmd += ["--ro-bind", str(path), str(path)]
        # Lo que nunca debe ver: otras entregas, gradebook, notas, soluciones.
        for path in self.hide:
            if Path(path).exists():
                hidden = str(Path(path).resolve())
                cmd += ["--tmpfs", hidden, "--remount-ro", hidden]
        # Su carpeta, la única con escritura, se ve como /tmp/entrega.
        cmd += ["--bind", str(workdir), INSIDE, "--chdir", INSIDE]
        if os.geteuid() == 0:
            # Como root, bwrap monta todo y luego se pasa a un usuario sin
            # privilegios: así el límite de procesos se cumple de verdad.
            uid = str(self.uid())
            cmd += [
                "--",
                "setpriv",
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--inh-caps=-all",
            ]
        else:
            cmd += ["--unshare-user", "--"]
        return cmd + inner


def _needed_paths() -> set[Path]:
    """Lo que el kernel necesita leer: Python, el entorno virtual y el curso."""
    return {
        Path(sys.base_prefix).resolve(),
        Path(sys.prefix).resolve(),
        Path(__file__).resolve().parent.parent,
    }


def _font_cache() -> Path | None:
    """El archivo de la caché de fuentes de matplotlib de este proceso, si hay."""
    try:
        import matplotlib
        from matplotlib import font_manager

        font_manager.fontManager  # noqa: B018  (la crea si no existe)
        version = font_manager.FontManager.__version__
        path = Path(matplotlib.get_cachedir()) / f"fontlist-v{version}.json"
    except Exception:  # sin matplotlib o sin caché: cada entrega hará la suya
        return None
    return path if path.exists() else None


def provide_font_cache(workdir: Path) -> Path | None:
    """Copia la caché de fuentes de matplotlib de este proceso a
    ``workdir/.matplotlib`` y devuelve esa carpeta (``None`` si no hay caché).

    Con ella, matplotlib no recorre las fuentes del sistema al importarse en
    cada entrega, ni llama para eso a ``fc-list`` (un proceso, que el registro
    de intentos anotaría).
    """
    fonts = _font_cache()
    if fonts is None:
        return None
    config = workdir / ".matplotlib"
    config.mkdir(exist_ok=True)
    shutil.copyfile(fonts, config / fonts.name)
    return config


def _environment() -> dict[str, str]:
    """Variables de entorno limpias para la ejecución (sin secretos heredados)."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "IPYTHONDIR": "/tmp/ipython",
        "JUPYTER_RUNTIME_DIR": "/tmp/jupyter",
        "JUPYTER_DATA_DIR": str(Path(sys.prefix) / "share" / "jupyter"),
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        # El jemalloc de pyarrow (que importa datasets, en 09) arranca un hilo
        # de fondo: con él vivo, el servidor de kernels no puede bifurcar sin
        # riesgo y se califica con un kernel nuevo por entrega (el triple de
        # lento). Sin ese hilo, jemalloc libera memoria al asignar.
        "JE_ARROW_MALLOC_CONF": "background_thread:false",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NBGRADER_EXECUTION": "autograde",
    }


class ExecutionError(Exception):
    """El cuaderno no se pudo ejecutar entero; el mensaje dice por qué."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason

    @classmethod
    def timeout(cls, limits: Limits) -> ExecutionError:
        """El cuaderno entero superó ``limits.notebook_timeout``."""
        return cls(
            "timeout",
            f"El cuaderno superó el límite total de {limits.notebook_timeout} s "
            "y se detuvo.",
        )

    @classmethod
    def no_notebook(cls, why: str) -> ExecutionError:
        """El ejecutor terminó sin devolver el cuaderno (``why``: su último aviso)."""
        return cls("error", f"La ejecución terminó sin devolver el cuaderno ({why}).")


def execute_notebook(
    nb: NotebookNode,
    workdir: Path,
    limits: Limits,
    sandbox: Sandbox | None,
    preload: tuple[str, ...] = (),
    server_root: Path | None = None,
) -> NotebookNode:
    """Ejecuta ``nb`` con los límites y, si se da, dentro del sandbox.

    Args:
        nb: el cuaderno ya saneado por nbgrader.
        workdir: su carpeta de trabajo (la única en la que puede escribir).
        limits: tiempos, memoria y procesos.
        sandbox: el aislamiento; ``None`` ejecuta sin aislar (solo límites).
        preload: con sandbox, los módulos que un servidor de kernels carga una
            vez para todas las entregas de este proceso (ver
            :mod:`autograder.forkserver`); vacío, un kernel nuevo por entrega.
            Si el sistema no deja usar el servidor, se hace lo segundo.
        server_root: dónde guarda el servidor su registro (por defecto, una
            carpeta temporal).

    Returns:
        El cuaderno con las salidas de cada celda.

    Raises:
        ExecutionError: si el cuaderno entero superó su tiempo o el ejecutor
            murió sin devolver nada.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    if sandbox is not None and preload:
        try:
            return _execute_in_server(nb, limits, sandbox, preload, server_root)
        except forkserver.UnavailableError as error:
            _warn_once(str(error))
    source = workdir / "_a_ejecutar.ipynb"
    nbformat.write(nb, source)
    read_end, write_end = os.pipe()
    notebook_path = f"{INSIDE}/{source.name}" if sandbox is not None else str(source)
    options = {
        "--fd": write_end,
        "--cell-timeout": limits.cell_timeout,
        "--memory": limits.memory_bytes,
        "--processes": limits.processes,
        "--file-size": limits.file_bytes,
    }
    inner = [sys.executable, "-m", "autograder.execute", notebook_path]
    for flag, value in options.items():
        inner += [flag, str(value)]
    if sandbox is not None:
        if os.geteuid() == 0:
            uid = sandbox.uid()
            os.chown(workdir, uid, uid)
            os.chown(source, uid, uid)
        cmd = sandbox.command(inner, workdir, limits)
    else:
        cmd = inner
    env = _environment()
    # La caché de fuentes de matplotlib, ya hecha (provide_font_cache).
    fonts = provide_font_cache(workdir)
    if fonts is not None:
        inside = INSIDE if sandbox is not None else str(workdir)
        env["MPLCONFIGDIR"] = f"{inside}/{fonts.name}"
        if sandbox is not None and os.geteuid() == 0:
            os.chown(fonts, sandbox.uid(), sandbox.uid())
    if sandbox is not None:
        # Leer o escribir ahí es un intento, aunque se trague el error.
        env[HIDDEN_ENV] = ":".join(
            str(Path(p).resolve()) for p in sandbox.hide if Path(p).exists()
        )
    # El proyecto tiene que ser importable dentro (instalación editable o no).
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    process = subprocess.Popen(
        cmd,
        cwd=workdir,
        env=env,
        pass_fds=(write_end,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    os.close(write_end)
    output = bytearray()

    def collect(reader) -> None:
        # Como el servidor de kernels: no más de MAX_NOTEBOOK_BYTES en memoria.
        while chunk := reader.read(1 << 20):
            output.extend(chunk)
            if len(output) > forkserver.MAX_NOTEBOOK_BYTES:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, 9)  # communicate() lo espera
                return

    with os.fdopen(read_end, "rb") as reader:
        # El resultado llega por el pipe; se lee en otro hilo mientras se espera.
        collector = threading.Thread(target=collect, args=(reader,))
        collector.start()
        try:
            _, stderr = process.communicate(timeout=limits.notebook_timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            raise ExecutionError.timeout(limits) from None
        finally:
            collector.join(timeout=30)
    if len(output) > forkserver.MAX_NOTEBOOK_BYTES:
        raise ExecutionError.no_notebook(forkserver.too_large())
    if not output:
        last = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise ExecutionError.no_notebook(last[0][:200])
    return nbformat.reads(output.decode("utf-8", "replace"), as_version=4)


_warned: set[str] = set()


def _warn_once(problem: str) -> None:
    if problem not in _warned:
        _warned.add(problem)
        print(
            "Aviso: sin servidor de kernels ya cargados (se lanza un kernel nuevo "
            f"por entrega, más lento, igual de aislado): {problem}",
            file=sys.stderr,
        )


def _start_server(
    sandbox: Sandbox, limits: Limits, preload: tuple[str, ...], workdir: Path
) -> forkserver.Server:
    """Lanza, en el sandbox de siempre, un servidor que carga ``preload``."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = _environment()
    fonts = provide_font_cache(workdir)
    if fonts is not None:
        env["MPLCONFIGDIR"] = f"{INSIDE}/{fonts.name}"
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    if os.geteuid() == 0:
        uid = sandbox.uid()
        for path in [workdir, *workdir.rglob("*")]:
            os.chown(path, uid, uid)
    inner = [sys.executable, "-m", "autograder.forkserver", *preload]
    return forkserver.Server(sandbox.command(inner, workdir, limits), env, workdir)


def _execute_in_server(
    nb: NotebookNode,
    limits: Limits,
    sandbox: Sandbox,
    preload: tuple[str, ...],
    server_root: Path | None,
) -> NotebookNode:
    """Ejecuta ``nb`` en un sandbox propio bifurcado del servidor de kernels."""
    root = server_root or Path(tempfile.gettempdir()) / "autograder-servidores"
    workdir = root / f"servidor-{os.getpid()}"
    key = (preload, tuple(map(str, sandbox.hide)), limits.tmp_bytes)
    server = forkserver.server_for(
        key, lambda: _start_server(sandbox, limits, preload, workdir)
    )
    request = {
        "folder": INSIDE,
        "name": "_a_ejecutar.ipynb",
        "notebook": nbformat.writes(nb),
        "cell_timeout": limits.cell_timeout,
        "memory": limits.memory_bytes,
        "processes": limits.processes,
        "file_size": limits.file_bytes,
        "tmp_bytes": limits.tmp_bytes,
        "hidden": [str(Path(p).resolve()) for p in sandbox.hide if Path(p).exists()],
    }
    reply = server.run(request, timeout=limits.notebook_timeout)
    if reply is None:
        raise ExecutionError.timeout(limits)
    if "notebook" not in reply:
        raise ExecutionError.no_notebook(reply["error"])
    return nbformat.reads(reply["notebook"], as_version=4)


def _kill(process: subprocess.Popen) -> None:
    """Mata el grupo de procesos entero (bwrap y lo que haya dentro)."""
    try:
        os.killpg(process.pid, 9)
    except ProcessLookupError:
        pass
    process.wait()
