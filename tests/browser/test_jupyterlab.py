"""El curso en un navegador de verdad: JupyterLab + Chromium (Playwright).

Por cada módulo se abre su cuaderno de solución, se ejecutan todas las celdas,
se comprueba que ninguna muestra un error, que los widgets se ven como widgets
(no como su texto de repuesto) y que responden a un clic, y se guarda una
captura en ``.artifacts/browser/``. Se ejecutan con ``make test-browser``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

from tests.notebooks import REPO, module_ids

# CHROMIUM elige otro ejecutable (p. ej. el de Homebrew en macOS, fuera del PATH).
CHROMIUM = (
    os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
)
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
    # Sin las celdas «nbval-skip» (la autocomprobación, que vuelve a ejecutar el
    # cuaderno entero en otro kernel): lo mismo que se salta nbval.
    for path in (root / "solutions").glob("*/*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        nb.cells = [
            c for c in nb.cells if "nbval-skip" not in c.metadata.get("tags", [])
        ]
        nbformat.write(nb, path)
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
    notices = settings / "@jupyterlab" / "apputils-extension"
    notices.mkdir(parents=True)
    (notices / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    # Sin autoguardado: solo guarda la prueba, cuando lo pide (ver _saved_errors).
    documents = settings / "@jupyterlab" / "docmanager-extension"
    documents.mkdir(parents=True)
    (documents / "plugin.jupyterlab-settings").write_text('{"autosave": false}')
    env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp_path_factory.mktemp("workspaces"))
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
            f"--ServerApp.root_dir={root}",
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


def _run_all_cells(page, attempts: int = 2) -> None:
    """«Run > Run All Cells» hasta que alguna celda empiece.

    Se repite la orden si en 60 s no empezó ninguna, y si tampoco, la prueba
    falla diciéndolo. (Una vez, en CI, 08 se guardó sin ninguna salida y se
    achacó a que la orden no había puesto nada en cola; la causa que se ha
    visto después es otra, la lectura a mitad del guardado que evita
    :func:`_saved_errors`.)
    """
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt")
    for _ in range(attempts):
        page.locator(".jp-Notebook").first.click()
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        deadline = time.time() + 60
        while time.time() < deadline:
            if any(re.search(r"\*|\[\d+\]", t) for t in prompts.all_inner_texts()):
                return
            time.sleep(1)
    pytest.fail(f"«Run All Cells» no empezó ninguna celda en {attempts} intentos")


def _wait_until_done(page, timeout: float) -> None:
    """Espera a que «Run All Cells» termine o se pare.

    Ejecuta en orden: cuando ninguna celda está en cola o en marcha («[*]») y
    la última tiene número («[12]»), han terminado todas. Si una celda da error,
    JupyterLab no ejecuta las siguientes: ninguna queda en cola y la última se
    queda sin número; entonces se vuelve enseguida, y los errores los busca
    :func:`_saved_errors` en el cuaderno guardado. Antes, :func:`_run_all_cells`
    se ha asegurado de que alguna celda empezó.
    """
    deadline = time.time() + timeout
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt")
    idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    stopped = 0
    while time.time() < deadline:
        texts = prompts.all_inner_texts()
        running = any("*" in text for text in texts)
        if texts and re.search(r"\[\d+\]", texts[-1]) and not running:
            return
        # Parado a mitad (un error): nada en cola y el kernel libre un rato.
        stopped = stopped + 1 if texts and not running and idle.count() else 0
        if stopped >= 5:
            return
        time.sleep(1)
    done = sum(bool(re.search(r"\[\d+\]", t)) for t in prompts.all_inner_texts())
    total = prompts.count()
    pytest.fail(f"en {timeout:.0f} s solo terminaron {done} celdas de {total}")


@pytest.mark.parametrize("module_id", module_ids())
def test_module_runs_and_its_widgets_work(lab, browser, module_id):
    base, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _run_and_check(page, base, token, module_id)
    except BaseException:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{module_id}-fallo.png"))
        raise
    finally:
        page.close()
        _shut_down_kernels(base, token)


def _saved_errors(page, base: str, token: str, module_id: str) -> list[str]:
    """Guarda el cuaderno desde JupyterLab y lista sus salidas de error.

    Se mira el archivo guardado (por la API de contenidos), no el HTML: un
    error y un texto en stderr se pintan igual en JupyterLab 4. Se lee cuando
    el servidor ha respondido al guardado, no antes: si una lectura llega
    mientras escribe, jupyter_server ve el archivo a medias, lo aparta como
    ``.invalid`` y restaura la copia anterior (sin salidas).
    """
    path = f"/api/contents/solutions/{module_id}/{module_id}.ipynb"

    def is_save(response) -> bool:
        return response.request.method == "PUT" and path in response.url

    page.locator(".jp-Notebook").first.click()
    with page.expect_response(is_save, timeout=60_000) as response:
        page.keyboard.press("Control+s")
    status = response.value.status
    assert response.value.ok, f"JupyterLab no guardó el cuaderno (HTTP {status})"
    url = f"{base}{path}?content=1&token={token}"
    with urllib.request.urlopen(url, timeout=30) as reply:
        saved = json.load(reply)
    cells = saved["content"]["cells"]
    assert any(c.get("outputs") for c in cells), "el cuaderno guardado no tiene salidas"
    return [
        f"celda {c.get('id')}: {o.get('ename')}: {str(o.get('evalue'))[:300]}"
        for c in cells
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]


def _shut_down_kernels(base: str, token: str) -> None:
    """Apaga los kernels que quedan (cada cuaderno deja el suyo ocupando memoria)."""
    headers = {"Authorization": f"token {token}"}
    listing = urllib.request.Request(f"{base}/api/kernels", headers=headers)
    with urllib.request.urlopen(listing, timeout=10) as response:
        kernels = json.load(response)
    for kernel in kernels:
        request = urllib.request.Request(
            f"{base}/api/kernels/{kernel['id']}", headers=headers, method="DELETE"
        )
        urllib.request.urlopen(request, timeout=30).close()


def _run_and_check(page, base: str, token: str, module_id: str) -> None:
    # Un espacio de trabajo propio por módulo: solo su cuaderno abierto.
    page.goto(
        f"{base}/lab/workspaces/{module_id}/tree/solutions/{module_id}/"
        f"{module_id}.ipynb?token={token}"
    )
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_selector(
        ".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000
    )
    _run_all_cells(page)
    _wait_until_done(page, timeout=900)
    errors = _saved_errors(page, base, token, module_id)
    assert not errors, "celdas con error:\n" + "\n".join(errors)

    widgets = page.locator(".jp-OutputArea-output .jupyter-widgets")
    assert widgets.count() > 0, "ningún widget se ve como widget"
    for text in page.locator(".jp-OutputArea-output pre").all_inner_texts():
        assert not WIDGET_FALLBACK.match(text.strip()), (
            f"widget como texto: {text[:80]}"
        )

    # Cada módulo: un clic en un botón y, si hay, un deslizador movido con el
    # teclado; lo que muestra el widget tiene que cambiar.
    outputs = page.locator(".jp-OutputArea-output .jupyter-widgets")
    controls = [
        (outputs.locator("button:not([disabled])"), lambda c: c.click()),
        (outputs.locator(".noUi-handle"), lambda c: (c.focus(), c.press("PageUp"))),
    ]
    touched = 0
    for locator, interact in controls:
        if not locator.count():
            continue
        control = locator.first
        control.scroll_into_view_if_needed()
        area = control.locator(
            "xpath=ancestor::div[contains(@class,'jp-OutputArea-output')]"
        )
        before = area.inner_html()
        interact(control)
        for _ in range(60):
            if area.inner_html() != before:
                break
            time.sleep(0.5)
        assert area.inner_html() != before, "el widget no respondió"
        touched += 1
    assert touched, "ningún botón ni deslizador con el que interactuar"

    page.wait_for_selector(
        ".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000
    )
    time.sleep(1)  # que el navegador pinte la última figura
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{module_id}.png"))
