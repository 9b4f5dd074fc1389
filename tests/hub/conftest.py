"""Un JupyterHub de verdad para las pruebas del hub (``make test-hub``).

El hub se arranca una vez por sesión con ``hub/jupyterhub_config.py``: cuentas
Unix nuevas (prefijo ``rlhub_`` y un sufijo aleatorio), intercambio en una
carpeta temporal, puertos libres en 127.0.0.1. Al terminar, aunque una prueba
falle, se para el hub (que para el proxy y los servidores de los usuarios), se
termina por pid cualquier proceso que quede de esas cuentas, se borran las
cuentas (``userdel -r``) y se deshacen los permisos que se cambiaron.

Estas pruebas necesitan root (crean cuentas) y solo se recogen con
``RLHUB_TESTS=1`` (lo pone ``make test-hub``), salvo la de Zero to JupyterHub,
que es rápida y corre también en ``make test``.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from hub import prepare, settings  # noqa: E402

if not os.environ.get("RLHUB_TESTS"):
    collect_ignore_glob = ["test_exchange_loop.py", "test_hub_browser.py"]

ARTIFACTS = REPO / ".artifacts" / "hub"
COURSE_ID = settings.COURSE_ID
MODULE = "01_bandidos"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Hub:
    """Un hub en marcha y lo necesario para hablar con él."""

    base: str
    service_token: str
    instructor: str
    students: list[str]
    passwords: dict[str, str]
    state: Path
    env: dict[str, str]
    _tokens: dict[str, str] = field(default_factory=dict)

    # --- La API del hub -------------------------------------------------
    def hub_api(self, method: str, path: str, **kwargs):
        import requests

        headers = {"Authorization": f"token {self.service_token}"}
        response = requests.request(
            method, f"{self.base}/hub/api{path}", headers=headers, timeout=60, **kwargs
        )
        response.raise_for_status()
        return response.json() if response.content else None

    def token(self, user: str) -> str:
        """Un token de ``user`` (como el que usa su navegador)."""
        if user not in self._tokens:
            answer = self.hub_api(
                "POST",
                f"/users/{user}/tokens",
                json={"note": "pruebas del hub", "expires_in": 7200},
            )
            self._tokens[user] = answer["token"]
        return self._tokens[user]

    def start_server(self, user: str, timeout: float = 300) -> None:
        """Arranca el JupyterLab de ``user`` y espera a que responda."""
        import requests

        model = self.hub_api("GET", f"/users/{user}")
        if not model.get("servers", {}).get("", {}).get("ready"):
            requests.post(
                f"{self.base}/hub/api/users/{user}/server",
                headers={"Authorization": f"token {self.service_token}"},
                timeout=60,
            )
        deadline = time.time() + timeout
        while time.time() < deadline:
            model = self.hub_api("GET", f"/users/{user}")
            if model.get("servers", {}).get("", {}).get("ready"):
                return
            time.sleep(1)
        pytest.fail(f"el servidor de {user} no arrancó en {timeout:.0f} s")

    def user_api(self, user: str, method: str, path: str, **kwargs):
        """Una petición al JupyterLab de ``user``, con su token."""
        import requests

        headers = {"Authorization": f"token {self.token(user)}"}
        return requests.request(
            method,
            f"{self.base}/user/{user}{path}",
            headers=headers,
            timeout=300,
            **kwargs,
        )

    # --- Órdenes como un usuario del sistema -----------------------------
    def home(self, user: str) -> Path:
        return Path(pwd.getpwnam(user).pw_dir)

    def user_env(self, user: str) -> dict[str, str]:
        """El entorno con el que el hub lanza el servidor de ``user``."""
        role = "docente" if user == self.instructor else "estudiante"
        return {
            "HOME": str(self.home(user)),
            "USER": user,
            "LOGNAME": user,
            "PATH": f"{settings.VENV_BIN}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "JUPYTER_CONFIG_PATH": str(settings.VIEWS / role),
            "RLHUB_EXCHANGE": str(settings.exchange_dir()),
        }

    def run_as(self, user: str, *cmd: str, check: bool = True, timeout: float = 900):
        """Ejecuta ``cmd`` como ``user`` (su uid, sus grupos, su $HOME)."""
        result = subprocess.run(
            ["runuser", "-u", user, "--", "env", "-i"]
            + [f"{k}={v}" for k, v in self.user_env(user).items()]
            + list(cmd),
            cwd=self.home(user),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            pytest.fail(
                f"«{' '.join(cmd)}» como {user} falló ({result.returncode}):\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    def can_read(self, user: str, path: Path) -> bool:
        """¿Puede ``user`` leer ``path`` (archivo) o listarlo (carpeta)?"""
        code = (
            "import os, sys; p = sys.argv[1]\n"
            "os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read()"
        )
        result = self.run_as(
            user, str(settings.VENV_BIN / "python"), "-c", code, str(path), check=False
        )
        return result.returncode == 0


STALE = re.compile(r"^rlhub_[0-9a-f]{4}_(docente|ana|beto|carla|dani)$")


def _remove_stale_accounts() -> None:
    """Borra las cuentas de una sesión anterior que murió sin limpiar (kill -9)."""
    for entry in pwd.getpwall():
        if STALE.match(entry.pw_name) and not _processes_of({entry.pw_uid}):
            prepare.remove_user(entry.pw_name)


def _processes_of(uids: set[int]) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    pids.append(int(entry.name))
            except FileNotFoundError:
                continue
    return pids


@pytest.fixture(scope="session")
def hub():
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        pytest.skip("el hub crea cuentas del sistema: hace falta root en Linux")
    for needed in (settings.VENV_BIN / "jupyterhub", settings.PROXY):
        if not Path(needed).exists():
            pytest.fail(f"falta {needed}: instala con `make hub-install`")
    _remove_stale_accounts()
    suffix = secrets.token_hex(2)
    instructor = f"rlhub_{suffix}_docente"
    students = [f"rlhub_{suffix}_{name}" for name in ("ana", "beto", "carla", "dani")]
    # Una carpeta nueva y atravesable por todas las cuentas (las de pytest son 0700).
    state = Path(tempfile.mkdtemp(prefix="rlhub-"))
    state.chmod(0o755)
    ports = {k: free_port() for k in ("port", "hub", "api")}
    env = dict(
        os.environ,
        RLHUB_DIR=str(state),
        RLHUB_IP="127.0.0.1",
        RLHUB_PORT=str(ports["port"]),
        RLHUB_HUB_PORT=str(ports["hub"]),
        RLHUB_PROXY_API_PORT=str(ports["api"]),
        RLHUB_INSTRUCTOR=instructor,
        RLHUB_STUDENTS=",".join(students),
        RLHUB_SERVICE_TOKEN=secrets.token_hex(32),
        PATH=f"{settings.VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    )
    env.pop("RLHUB_EXCHANGE", None)
    env.pop("RLHUB_PASSWORD", None)
    passwords = {name: secrets.token_urlsafe(12) for name in [instructor, *students]}
    saved = {k: os.environ.get(k) for k in env if k.startswith("RLHUB_")}
    os.environ.update({k: v for k, v in env.items() if k.startswith("RLHUB_")})
    changed: list[tuple[Path, int]] = []
    process = None
    log_path = state / "jupyterhub.log"
    try:
        # Primero los permisos de paso, para poder deshacerlos al terminar.
        changed = prepare.make_traversable(prepare.needed_paths())
        prepare.prepare(passwords)
        with log_path.open("w") as log:
            process = subprocess.Popen(
                [
                    str(settings.VENV_BIN / "jupyterhub"),
                    "-f",
                    str(settings.HUB / "jupyterhub_config.py"),
                ],
                cwd=state,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        base = f"http://127.0.0.1:{ports['port']}"
        _wait_for_hub(base, process, log_path)
        yield Hub(
            base=base,
            service_token=env["RLHUB_SERVICE_TOKEN"],
            instructor=instructor,
            students=students,
            passwords=passwords,
            state=state,
            env=env,
        )
    finally:
        if process is not None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        accounts = [instructor, *students]
        uids = set()
        for name in accounts:
            try:
                uids.add(pwd.getpwnam(name).pw_uid)
            except KeyError:
                pass
        for pid in _processes_of(uids):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for name in accounts:
            prepare.remove_user(name)
        for folder, mode in reversed(changed):
            folder.chmod(mode)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        if log_path.exists():
            shutil.copyfile(log_path, ARTIFACTS / "jupyterhub.log")
        shutil.rmtree(state, ignore_errors=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _wait_for_hub(base: str, process: subprocess.Popen, log_path: Path) -> None:
    import requests

    deadline = time.time() + 180
    while time.time() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"JupyterHub terminó al arrancar:\n{log_path.read_text()[-4000:]}"
            )
        try:
            if requests.get(f"{base}/hub/api/", timeout=5).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(1)
    pytest.fail(f"JupyterHub no respondió en 180 s:\n{log_path.read_text()[-4000:]}")
