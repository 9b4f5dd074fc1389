"""Ida y vuelta por nbgrader de verdad, con ``python -m autograder grade``.

Por módulo se califican juntas varias entregas construidas a partir de
``course/`` (lo que recibe el estudiante):

* ``untouched``: tal cual se publicó → 0 puntos;
* ``solved``: con las soluciones escritas → todos los puntos;
* ``mixed``: la mitad de los ejercicios bien y la otra mitad con un error
  típico del banco → exactamente los puntos de los buenos;
* ``deleted``: resuelto, pero sin una celda de pruebas → se restaura y puntúa;
* ``tampered``: con errores y las celdas de prueba vaciadas → no gana nada.
"""

from __future__ import annotations

import nbformat
import pytest

from tests.banks import bank, wholly_wrong
from tests.notebooks import (
    course_path,
    exercises,
    fill_solutions,
    grade_batch,
    honest_answers,
    module_ids,
    nbgrader,
    read,
    solution_path,
)

pytestmark = pytest.mark.grading


def mixed_wrong_answer(wrong_bank: dict, grade_id: str):
    """La errónea de la entrega mixta: una con crédito parcial si el banco la
    tiene (así nbgrader comprueba de verdad los puntos a medias), si no la
    primera."""
    answers = wrong_bank[grade_id]
    return next((a for a in answers if a.fails is not None), answers[0])


@pytest.fixture(scope="module", params=module_ids())
def graded(request, tmp_path_factory):
    module_id = request.param
    source = read(solution_path(module_id))
    released = read(course_path(module_id))
    module_exercises = exercises(source)
    solutions = honest_answers(module_id)
    wrong_bank = bank(module_id).WRONG
    right_ids = {ex.grade_id for ex in module_exercises[::2]}
    mixed = {
        ex.grade_id: (
            solutions[ex.grade_id]
            if ex.grade_id in right_ids
            else mixed_wrong_answer(wrong_bank, ex.grade_id).source
        )
        for ex in module_exercises
    }
    first_test = module_exercises[0].tests[0][0]

    deleted = fill_solutions(released, solutions)
    deleted.cells = [
        c for c in deleted.cells if nbgrader(c).get("grade_id") != first_test
    ]
    tampered = fill_solutions(
        released,
        {
            ex.grade_id: wholly_wrong(wrong_bank[ex.grade_id]).source
            for ex in module_exercises
        },
    )
    for cell in tampered.cells:
        if nbgrader(cell).get("grade"):
            cell.source = "pass"

    submissions = tmp_path_factory.mktemp("entregas")
    notebooks = {
        "untouched": released,
        "solved": fill_solutions(released, solutions),
        "mixed": fill_solutions(released, mixed),
        "deleted": deleted,
        "tampered": tampered,
    }
    for student_id, nb in notebooks.items():
        nbformat.write(nb, submissions / f"{student_id}.ipynb")
    out = tmp_path_factory.mktemp("notas")
    rows = grade_batch(module_id, submissions, out, timeout=600)
    return module_id, module_exercises, right_ids, rows, out


def _max_score(module_exercises) -> float:
    return sum(ex.points for ex in module_exercises)


def _manual_points(module_id: str) -> float:
    """Puntos de las respuestas escritas (celdas markdown de corrección manual).

    Cuentan en ``max_score``, pero ninguna entrega de esta prueba las contesta:
    quedan tal como se publicaron y nbgrader les da 0 sin pedir corrección.
    """
    return sum(
        nbgrader(cell)["points"]
        for cell in read(solution_path(module_id)).cells
        if cell.cell_type == "markdown" and nbgrader(cell).get("grade")
    )


def test_untouched_scores_zero(graded):
    module_id, module_exercises, _, rows, _ = graded
    assert float(rows["untouched"]["score"]) == 0
    assert float(rows["untouched"]["max_score"]) == _max_score(
        module_exercises
    ) + _manual_points(module_id)


def test_solution_scores_full(graded):
    _, module_exercises, _, rows, out = graded
    assert rows["solved"]["status"] == "ok"
    assert float(rows["solved"]["score"]) == _max_score(module_exercises)
    assert (out / "feedback" / "solved.html").exists()
    # El registro de intentos (autograder/audit.py) no anota nada de lo que
    # hacen las entregas honestas del módulo, ni de sus demos.
    for student in ("solved", "mixed", "untouched"):
        assert "registrado en" not in rows[student]["incidents"], rows[student]


def test_mixed_scores_exactly_the_right_exercises(graded):
    module_id, module_exercises, right_ids, rows, _ = graded
    wrong_bank = bank(module_id).WRONG
    expected = 0.0
    for ex in module_exercises:
        fails = (
            None
            if ex.grade_id in right_ids
            else mixed_wrong_answer(wrong_bank, ex.grade_id).fails
        )
        for grade_id, _, points in ex.tests:
            got = float(rows["mixed"][grade_id])
            # La errónea pierde las celdas que su banco dice que falla (todas
            # si no lo dice): el crédito parcial, de verdad, con nbgrader.
            passes = ex.grade_id in right_ids or (
                fails is not None and grade_id not in fails
            )
            want = points if passes else 0.0
            assert got == want, (grade_id, got, want)
            expected += want
    assert float(rows["mixed"]["score"]) == expected


def test_deleted_test_cell_is_restored(graded):
    _, module_exercises, _, rows, _ = graded
    assert float(rows["deleted"]["score"]) == _max_score(module_exercises)


def test_edited_test_cells_gain_nothing(graded):
    _, _, _, rows, _ = graded
    assert float(rows["tampered"]["score"]) == 0
