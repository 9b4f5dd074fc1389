"""Higiene de los cuadernos: formato, ids, salidas, metadatos de nbgrader."""

from __future__ import annotations

import re

import nbformat
import pytest

from tests.notebooks import (
    SOLUTION_REGION,
    course_path,
    exercises,
    module_ids,
    nbgrader,
    read,
    solution_path,
)

# «slow»: no se ejecuta al calificar; «nbval-skip»: tampoco en nbval;
# «raises-exception»: una celda de «pruébalo» o de comprobación que falla
# mientras el ejercicio está sin hacer no detiene «Run All» en JupyterLab.
ALLOWED_TAGS = {"slow", "nbval-skip", "raises-exception"}
NOTEBOOKS = [
    pytest.param(path(m), id=f"{kind}:{m}")
    for m in module_ids()
    for kind, path in (("solutions", solution_path), ("course", course_path))
]


@pytest.mark.parametrize("path", NOTEBOOKS)
def test_valid_nbformat_45_with_ids_and_no_outputs(path):
    nb = read(path)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    ids = [cell.get("id") for cell in nb.cells]
    assert all(ids), "todas las celdas necesitan id"
    assert len(set(ids)) == len(ids), "ids de celda repetidos"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"la celda {cell.id} tiene salidas guardadas"
            assert cell.execution_count is None, f"la celda {cell.id} tiene contador"
        assert set(cell.metadata.get("tags", [])) <= ALLOWED_TAGS, cell.id


@pytest.mark.parametrize("path", NOTEBOOKS)
def test_grade_ids_unique_and_points_everywhere(path):
    nb = read(path)
    grade_ids = [nbgrader(c)["grade_id"] for c in nb.cells if nbgrader(c)]
    assert len(set(grade_ids)) == len(grade_ids), "grade_id repetidos"
    for cell in nb.cells:
        meta = nbgrader(cell)
        assert re.fullmatch(r"[a-z0-9_]+", meta.get("grade_id", "ok")), meta
        if meta.get("grade"):
            assert meta.get("points", 0) > 0, f"{meta['grade_id']} no tiene puntos"


@pytest.mark.parametrize("module_id", module_ids())
def test_anatomy_of_a_module(module_id):
    nb = read(solution_path(module_id))
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for heading in (
        "Qué vas a aprender",
        "Errores comunes",
        "Resumen",
        "Glosario",
        "Qué viene",
        "Bibliografía",
    ):
        assert heading in text, f"falta la sección «{heading}»"
    setup = next(c for c in nb.cells if c.cell_type == "code")
    assert "helpers.set_seed(" in setup.source
    assert "helpers.report_environment()" in setup.source
    assert f'helpers.progress_summary("{module_id}")' in nb.cells[-1].source
    assert f'helpers.self_check("{module_id}.ipynb")' in nb.cells[-2].source
    for exercise in exercises(nb):
        assert SOLUTION_REGION.search(exercise.solution), exercise.grade_id
        visible = exercise.tests[0][1].split("### BEGIN HIDDEN TESTS")[0]
        assert "helpers.checks" in visible, (
            f"{exercise.grade_id}: la prueba visible debe llamar a helpers.checks"
        )
        assert any("### BEGIN HIDDEN TESTS" in src for _, src, _ in exercise.tests), (
            f"{exercise.grade_id}: faltan pruebas ocultas"
        )
