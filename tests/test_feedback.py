"""La retroalimentación que recibe la estudiante y los títulos que la nombran.

Sin calificar de verdad: un ``Result`` como el que deja la calificación de 07
con la respuesta escrita sin corregir, y el HTML que sale de él. La
calificación de verdad de 07 (con nbgrader) está en tests/test_roundtrip.py.
"""

from __future__ import annotations

import re

import pytest

from autograder.course import NotebookModel, module_ids, read_module
from autograder.feedback import STATUS_WORDS, render_feedback
from autograder.results import Result, Status
from tests.notebooks import course_path, fill_solutions, read, solution_path

WRITTEN = "07_grpo"
WRITTEN_ID = "why_lone_failure"
WRITTEN_TITLE = "Pregunta escrita · ¿Por qué −0,75 frente a +0,25?"
ANSWER = "La media del grupo es 0,75: el fallo queda muy por debajo de ella."


def _rows(page: str) -> dict[str, str]:
    """``título → fila`` de la tabla «Resumen por ejercicio»."""
    rows = re.findall(r"<tr><td>(.*?)</td>(.*?)</tr>", page, re.S)
    return dict(rows)


def _page(**changes) -> str:
    model = read_module(WRITTEN)
    cells = {cell.grade_id: cell.points for cell in model.graded}
    cells[WRITTEN_ID] = 0.0  # lo que deja nbgrader: la celda sin nota vale 0
    result = Result(
        "ana",
        score=model.max_score - 2,
        max_score=model.max_score,
        cells=cells,
        pending=[WRITTEN_ID],
    )
    for name, value in changes.items():
        setattr(result, name, value)
    submitted = fill_solutions(read(course_path(WRITTEN)), {WRITTEN_ID: ANSWER})
    return render_feedback(WRITTEN, result, submitted, read(solution_path(WRITTEN)))


def test_a_written_answer_awaiting_its_mark_is_pending_not_wrong():
    page = _page()
    rows = _rows(page)
    row = rows[WRITTEN_TITLE]
    assert "pendiente / 2" in row and "✎" in row and "✘" not in row
    total = read_module(WRITTEN).max_score
    assert (
        f"<b>{total - 2:g}</b> de {total - 2:g} puntos + 2 pendientes de "
        f"corrección a mano ({total:g} en total)."
    ) in page
    assert "Tu respuesta (pendiente de corrección a mano)" in page
    assert ANSWER in page
    # Ni las marcas de nbgrader ni los ids de celda llegan a la estudiante.
    assert "BEGIN SOLUTION" not in page and WRITTEN_ID not in page


def test_once_marked_by_hand_the_answer_counts_like_any_other():
    page = _page(pending=[], score=26.5)
    row = _rows(page)[WRITTEN_TITLE]
    assert "pendiente" not in page
    assert "0 / 2" in row and "✘" in row
    total = read_module(WRITTEN).max_score
    assert f"<b>26.5</b> de {total:g} puntos.</p>" in page


def test_exercise_rows_carry_their_own_heading_and_reasons_their_titles():
    # En 07, la celda del ejercicio 9 empieza con el encabezado de la sección
    # anterior («La normalización por longitud…»): el título es el último.
    page = _page(
        status="timeout",
        reason="Una celda superó el límite de tiempo (celda normalize_loss_test)",
    )
    titles = list(_rows(page))
    nine = [t for t in titles if "normalize" in t.lower() or "Ejercicio 9" in t]
    assert nine and all(t.startswith("Ejercicio 9 · ") for t in nine), nine
    assert not any("La normalización por longitud" in t for t in titles)
    assert "normalize_loss_test" not in page
    assert "(celda «Ejercicio 9 · Las normalizaciones por longitud" in page


@pytest.mark.parametrize("status", list(Status))
def test_every_status_is_told_to_the_student_in_words(status):
    assert set(STATUS_WORDS) == set(Status)
    if status is not Status.OK:
        page = _page(status=status, reason="Motivo.")
        assert f"<b>Estado:</b> {STATUS_WORDS[status]}. Motivo.</p>" in page
        assert f"> {status.value}." not in page


@pytest.mark.parametrize("module_id", module_ids())
def test_titles_come_from_the_notebook_headings(module_id):
    source = read(solution_path(module_id))
    model = NotebookModel.of(source)
    for cell in model.graded:
        assert cell.title != cell.grade_id, cell
        assert not re.search(r"BEGIN|END|\(\d+ puntos?", cell.title), cell
        if not cell.manual:
            assert re.match(r"Ejercicio \d+ · ", cell.title), cell
    # El cuaderno publicado (el de la estudiante) da los mismos títulos.
    released = NotebookModel.of(read(course_path(module_id)))
    assert released.titles == model.titles


def test_a_decimal_comma_in_a_formula_is_one_number():
    """``$\\beta = 0{,}2$`` se lee «β = 0,2», no «β = 0, 2» (dos valores); la
    coma que separa argumentos sigue siendo un operador."""
    from autograder.feedback import math_to_mathml

    assert "<mn>0,2</mn>" in math_to_mathml(r"\beta = 0{,}2", False)
    assert "<mn>−1,25</mn>" not in math_to_mathml(r"-1{,}25", False)
    assert "<mn>1,25</mn>" in math_to_mathml(r"-1{,}25", False)
    arguments = math_to_mathml(r"f(a, b)", False)
    assert "<mo>&#x0002C;</mo>" in arguments
