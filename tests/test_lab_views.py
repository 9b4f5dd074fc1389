"""``make lab`` y ``make lab-docente``: dos vistas de JupyterLab, cada una la suya.

Se arranca cada orden del Makefile de verdad (sin navegador) y se le pregunta
al servidor: la vista de estudiante apaga en la página las herramientas de
docente de nbgrader y no sirve Formgrader; la de docente las tiene y su
Formgrader ve los módulos del curso.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from tests.notebooks import REPO, module_ids

TOKEN = "vista-de-prueba"
INSTRUCTOR_PLUGINS = {
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:assignment-list",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, ""


@pytest.fixture(params=["lab", "lab-docente"])
def lab(request, tmp_path):
    port = _free_port()
    flags = (
        f"--no-browser --port={port} --ServerApp.token={TOKEN} "
        "--ServerApp.open_browser=False"
    )
    # Configuración personal y de ejecución aparte: solo cuenta la del curso.
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
    )
    server = subprocess.Popen(
        ["make", "--no-print-directory", request.param, f"LAB_FLAGS={flags}"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if _get(f"{base}/api")[0] == 200:
                    break
            except OSError:
                pass
            assert server.poll() is None, f"`make {request.param}` terminó antes"
            time.sleep(0.5)
        else:
            pytest.fail(f"`make {request.param}` no respondió en 60 s")
        yield request.param, base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def _disabled_plugins(html: str) -> set[str]:
    match = re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', html, re.S)
    assert match, "la página de JupyterLab no trae su configuración"
    disabled = json.loads(match.group(1))["disabledExtensions"]
    if isinstance(disabled, dict):
        return {name for name, off in disabled.items() if off}
    return set(disabled)


def test_each_view_shows_its_own_tools(lab):
    view, base = lab
    status, html = _get(f"{base}/lab")
    assert status == 200
    disabled = _disabled_plugins(html)
    formgrader, listing = _get(f"{base}/formgrader/api/assignments")
    if view == "lab":
        assert INSTRUCTOR_PLUGINS <= disabled, INSTRUCTOR_PLUGINS - disabled
        assert "@jupyter/nbgrader:validate-assignment" not in disabled
        assert formgrader == 404
        status, _ = _get(f"{base}/api/contents/01_bandidos")
        assert status == 200, "la vista de estudiante abre course/"
    else:
        assert not disabled & INSTRUCTOR_PLUGINS
        assert formgrader == 200
        names = [a["name"] for a in json.loads(listing)]
        assert names == module_ids()
