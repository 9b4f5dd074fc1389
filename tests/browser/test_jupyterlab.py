"""El curso en un navegador de verdad: JupyterLab + Chromium (Playwright).

Por cada módulo se abre su cuaderno de solución, se ejecutan todas las celdas,
se comprueba que ninguna muestra un error, que los widgets se ven como widgets
(no como su texto de repuesto) y que responden a un clic, y se guarda una
captura en ``.artifacts/browser/``. Se ejecutan con ``make test-browser``.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.notebooks import REPO, module_ids

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = REPO / ".artifacts" / "browser"
# Sin esto, Chromium intenta conectarse a servicios de Google al arrancar.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDGET_FALLBACK = re.compile(r"^(VBox|HBox|Button|IntSlider|FloatSlider|Output)\(")

playwright = pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    # Una copia de los cuadernos: JupyterLab autoguarda y no debe escribir
    # salidas en solutions/.
    root = tmp_path_factory.mktemp("curso")
    shutil.copytree(REPO / "solutions", root / "solutions")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(
        os.environ, PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"
    )
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path_factory.mktemp("runtime"))
    # Ajustes limpios: sin espacio de trabajo recordado y con todas las celdas
    # en el DOM (JupyterLab 4 solo pinta las visibles por defecto).
    settings = tmp_path_factory.mktemp("settings")
    tracker = settings / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    log = (tmp_path_factory.mktemp("lab") / "lab.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={REPO}",
            "--allow-root",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        server.terminate()
        pytest.fail("JupyterLab no arrancó")
    yield base, token
    server.terminate()
    server.wait(timeout=30)
    log.close()


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _wait_until_idle(page, timeout: float) -> None:
    """Espera a que no quede ninguna celda en ejecución ni en cola («[*]»)."""
    deadline = time.time() + timeout
    time.sleep(2)
    while time.time() < deadline:
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
        busy = any("*" in p for p in prompts)
        if prompts and not busy and any(re.search(r"\[\d+\]", p) for p in prompts):
            return
        time.sleep(1)
    pytest.fail(f"las celdas no terminaron en {timeout} s")


@pytest.mark.parametrize("module_id", module_ids())
def test_module_runs_and_its_widgets_work(lab, browser, module_id):
    base, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{base}/lab/tree/solutions/{module_id}/{module_id}.ipynb?token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_selector(
        ".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000
    )
    page.locator(".jp-Notebook").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    _wait_until_idle(page, timeout=900)

    errors = page.locator('[data-mime-type="application/vnd.jupyter.error"]')
    assert errors.count() == 0, errors.first.inner_text()[:500]

    widgets = page.locator(".jp-OutputArea-output .jupyter-widgets")
    assert widgets.count() > 0, "ningún widget se ve como widget"
    for text in page.locator(".jp-OutputArea-output pre").all_inner_texts():
        assert not WIDGET_FALLBACK.match(text.strip()), (
            f"widget como texto: {text[:80]}"
        )

    # Un clic en el primer botón de un widget cambia lo que muestra.
    button = page.locator(".jp-OutputArea-output .jupyter-widgets button").first
    button.scroll_into_view_if_needed()
    area = button.locator(
        "xpath=ancestor::div[contains(@class,'jp-OutputArea-output')]"
    )
    before = area.inner_html()
    button.click()
    for _ in range(30):
        if area.inner_html() != before:
            break
        time.sleep(0.5)
    assert area.inner_html() != before, "el widget no respondió al clic"

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{module_id}.png"))
    page.close()
