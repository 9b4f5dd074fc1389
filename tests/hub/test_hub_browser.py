"""El hub en un navegador de verdad (Chromium): estudiante y docente.

Una estudiante entra con su contraseña, abre la lista de tareas de nbgrader
(«Assignments»), trae 01_bandidos, ejecuta la autocomprobación del cuaderno y
entrega, todo con clics. Después la docente entra, abre Formgrader, recoge y ve
esa entrega. Las capturas quedan en ``.artifacts/hub/``.
"""

from __future__ import annotations

import re
import time

import pytest

from hub import settings
from tests.hub.conftest import ARTIFACTS, COURSE_ID, MODULE

playwright = pytest.importorskip("playwright.sync_api")
from tests.browser.test_jupyterlab import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

NOTEBOOK = f"{MODULE}.ipynb"
LAB_TIMEOUT = 240_000  # ms: el primer arranque de JupyterLab en una máquina ocupada


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _login(browser, hub, user: str):
    """Entra en el hub como ``user`` y espera a su JupyterLab."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{hub.base}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.passwords[user])
    page.click("#login_submit")
    page.wait_for_url(re.compile(rf"/user/{user}/lab"), timeout=LAB_TIMEOUT)
    page.locator("#jp-main-dock-panel").wait_for(timeout=LAB_TIMEOUT)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(
        timeout=LAB_TIMEOUT
    )
    return context, page


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _menu(page, top: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=top).click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


def _run_cell(page, cell, timeout: float = 300) -> str:
    """Ejecuta una celda (clic y Mayús+Intro) y devuelve su salida al terminar."""
    cell.scroll_into_view_if_needed()
    cell.locator(".jp-InputPrompt").click()
    page.keyboard.press("Shift+Enter")
    prompt = cell.locator(".jp-InputPrompt")
    deadline = time.time() + timeout
    while time.time() < deadline:
        if re.search(r"\[\d+\]", prompt.inner_text()):
            return cell.locator(".jp-OutputArea").inner_text()
        time.sleep(1)
    pytest.fail(f"la celda no terminó en {timeout:.0f} s")


def test_student_fetches_checks_and_submits_then_formgrader_shows_it(browser, hub):
    student = hub.students[3]
    doc = hub.instructor
    # Si la prueba del ciclo ya publicó la tarea, esto no cambia nada.
    hub.run_as(doc, "nbgrader", "release_assignment", MODULE, check=False)
    assert (settings.exchange_dir() / COURSE_ID / "outbound" / MODULE).is_dir()

    # --- La estudiante -------------------------------------------------
    context, page = _login(browser, hub, student)
    menu_labels = page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader")
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    assert menu_labels.count() == 1
    # Su vista: la lista de tareas sí; Formgrader y Create Assignment, no.
    assert any("Assignment List" in t for t in items), items
    assert not any("Formgrader" in t for t in items), items
    assert not any("Create Assignment" in t for t in items), items

    _menu(page, "Nbgrader", "Assignment List")
    released = page.locator("#released_assignments_list")
    released.get_by_text(MODULE).wait_for()
    _shot(page, "1-estudiante-tareas")
    released.get_by_role("button", name="Fetch").click()
    fetched = page.locator("#fetched_assignments_list")
    fetched.locator("a.assignment-notebooks-link").wait_for()
    assert (hub.home(student) / MODULE / NOTEBOOK).exists()

    # Abre el cuaderno, ejecuta la preparación y la autocomprobación.
    fetched.locator("a.assignment-notebooks-link").click()
    notebooks = page.locator(f"#nbgrader-{COURSE_ID}-{MODULE}")
    notebooks.get_by_text(MODULE, exact=True).click()
    notebook = page.locator(".jp-NotebookPanel:visible")
    notebook.locator(".jp-CodeCell").first.wait_for(timeout=LAB_TIMEOUT)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=LAB_TIMEOUT)
    setup = _run_cell(page, notebook.locator(".jp-CodeCell").first)
    assert "Error" not in setup, setup
    check_cell = notebook.locator(".jp-CodeCell", has_text="helpers.self_check(")
    text = _run_cell(page, check_cell)
    _shot(page, "2-estudiante-autocomprobacion")
    assert "Las comprobaciones visibles que pasan cubren 0 de 22 puntos" in text, text
    assert "✘" in text

    # Vuelve a la lista de tareas y entrega.
    _menu(page, "Nbgrader", "Assignment List")
    fetched = page.locator("#fetched_assignments_list")
    fetched.get_by_role("button", name="Submit").first.click()
    submitted = page.locator("#submitted_assignments_list")
    submitted.get_by_text(MODULE).wait_for()
    _shot(page, "3-estudiante-entregada")
    inbound = settings.exchange_dir() / COURSE_ID / "inbound"
    assert any(p.name.startswith(f"{student}+{MODULE}+") for p in inbound.iterdir())
    context.close()

    # --- La docente ----------------------------------------------------
    context, page = _login(browser, hub, doc)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    assert any("Formgrader" in t for t in items), items
    page.goto(f"{hub.base}/user/{doc}/formgrader")
    row = page.locator("tr", has_text=MODULE).first
    row.wait_for()
    _shot(page, "4-docente-formgrader")
    # Recoge desde Formgrader (el botón «Collect» llama a nbgrader collect).
    row.locator("td.collect a").click()
    page.get_by_text("Successfully collected").first.wait_for(timeout=120_000)
    page.goto(f"{hub.base}/user/{doc}/formgrader/manage_submissions/{MODULE}")
    page.locator("td", has_text=student).first.wait_for()
    _shot(page, "5-docente-entregas")
    context.close()
