"""«Run All» en un cuaderno publicado sin resolver llega hasta el final.

Quien abre el cuaderno por primera vez y pulsa «Run All» debe ver todas las
figuras y widgets, no un error en el primer ejercicio. JupyterLab sigue tras
una celda que falla solo si lleva la etiqueta ``raises-exception``. Sin
ejecutar nada (sería lento), se comprueba la clase entera de fallos:

- una celda de solución cuyo código está a nivel de módulo (una respuesta de
  cuestionario) lanza ``NotImplementedError`` al publicarse: necesita la
  etiqueta;
- cualquier otra celda que nombre algo que define una solución (una función
  del estudiante, una respuesta) falla mientras no esté escrito: o lleva la
  etiqueta (las de «pruébalo» y las de comprobación) o usa ``demo.<función>``,
  que cae en la referencia.
"""

from __future__ import annotations

import ast
import re

import pytest

from autograder.sources import without_magics
from tests.notebooks import course_path, module_ids, nbgrader, read

TAG = "raises-exception"
TOP_LEVEL_SOLUTION = re.compile(r"^### BEGIN SOLUTION", re.M)


def _defined(source: str) -> set[str]:
    tree = ast.parse(without_magics(source))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _used(source: str) -> set[str]:
    tree = ast.parse(without_magics(source))
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


@pytest.mark.parametrize("module_id", module_ids())
def test_run_all_on_the_unsolved_notebook_reaches_the_end(module_id):
    from autograder.course import exercise_cells
    from tests.notebooks import solution_path

    source_nb = read(solution_path(module_id))
    student: set[str] = set()
    problems = []
    for cell in source_nb.cells:
        meta = nbgrader(cell)
        if cell.cell_type != "code":
            continue
        tagged = TAG in cell.metadata.get("tags", [])
        if meta.get("solution") and not meta.get("grade"):
            student |= _defined(cell.source)
            if TOP_LEVEL_SOLUTION.search(cell.source) and not tagged:
                problems.append(
                    f"{cell.id}: su solución va a nivel de módulo y, publicada, "
                    f"lanza NotImplementedError: necesita la etiqueta {TAG}"
                )
            continue
        named = _used(cell.source) & student
        if named and not tagged:
            problems.append(
                f"{cell.id}: usa {sorted(named)} del estudiante sin la etiqueta "
                f"{TAG}; usa demo.<función> o etiqueta la celda"
            )
    assert exercise_cells(source_nb), "el módulo no tiene ejercicios"
    assert not problems, "\n".join(problems)
    # Lo publicado conserva las etiquetas de la fuente.
    released = {
        c.id: c.metadata.get("tags", []) for c in read(course_path(module_id)).cells
    }
    for cell in source_nb.cells:
        if TAG in cell.metadata.get("tags", []):
            assert TAG in released.get(cell.id, []), cell.id
