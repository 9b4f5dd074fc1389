"""Una respuesta errónea cuesta puntos solo en su propio ejercicio.

Para cada respuesta errónea del banco (``tests/banks``), se prepara el
cuaderno de un estudiante que solo se ha equivocado en ese ejercicio: la
preparación, las soluciones de los demás y la errónea en su sitio, en el orden
del cuaderno. Las celdas de pruebas (visibles y ocultas) de los ejercicios que
vienen después deben pasar todas: sus pruebas ocultas usan la referencia de
los ejercicios anteriores, como dicen los enunciados, y no las funciones del
estudiante.

Solo se ejecutan las pruebas de los ejercicios que pueden depender del
erróneo: los que nombran, en su solución o en sus pruebas, algo que define el
erróneo (o algo que define una solución que ya depende de él). Los demás no
pueden notar la diferencia, y ejecutarlos todos con cada una de las
quinientas respuestas costaría minutos.

Que una celda que falla lo diga con un mensaje (nunca un ``AssertionError``
vacío) lo comprueba ``tests/test_checks_bank.py`` con cada respuesta errónea.
"""

from __future__ import annotations

import ast
import contextlib
import io

import pytest

from tests.banks import bank
from tests.notebooks import (
    exercises,
    module_ids,
    read,
    setup_source,
    solution_path,
    student_version,
)


def _defined(source: str) -> set[str]:
    """Los nombres que define el código de una celda en lo más alto."""
    tree = ast.parse(source)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _used(source: str) -> set[str]:
    """Los nombres que lee el código de una celda."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _dependents(all_exercises, index: int) -> list[int]:
    """Los ejercicios posteriores a ``index`` que pueden notar una respuesta
    errónea en él."""
    tainted = _defined(student_version(all_exercises[index].solution))
    found = []
    for later in range(index + 1, len(all_exercises)):
        exercise = all_exercises[later]
        solution = student_version(exercise.solution)
        reads = _used(solution).union(*(_used(s) for _, s, _ in exercise.tests))
        if reads & tainted:
            found.append(later)
            tainted |= _defined(solution)
    return found


def _cases() -> list:
    cases = []
    for module_id in module_ids():
        nb = read(solution_path(module_id))
        all_exercises = exercises(nb)
        wrong = bank(module_id).WRONG
        for index, exercise in enumerate(all_exercises):
            later = _dependents(all_exercises, index)
            if not later:
                continue
            for answer in wrong.get(exercise.grade_id, []):
                cases.append(
                    pytest.param(
                        nb,
                        index,
                        later,
                        answer,
                        id=f"{module_id}:{exercise.grade_id}:{answer.name}",
                    )
                )
    return cases


def _run(source: str, name: str, namespace: dict) -> BaseException | None:
    with (
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        try:
            exec(compile(source, name, "exec"), namespace)
        except BaseException as caught:  # noqa: BLE001 - se informa
            return caught
    return None


@pytest.mark.slow
@pytest.mark.parametrize(("nb", "index", "later", "answer"), _cases())
def test_a_wrong_answer_costs_points_only_in_its_exercise(nb, index, later, answer):
    all_exercises = exercises(nb)
    namespace: dict = {"__name__": "__main__"}
    assert _run(setup_source(nb), "<setup>", namespace) is None
    for position, exercise in enumerate(all_exercises):
        source = answer.source if position == index else exercise.solution
        # Una respuesta errónea puede lanzar al definirse: la celda falla y el
        # cuaderno sigue, como en Jupyter.
        _run(student_version(source), f"<{exercise.grade_id}>", namespace)
    lost = []
    for position in later:
        for grade_id, source, _ in all_exercises[position].tests:
            error = _run(source, f"<{grade_id}>", namespace)
            if error is not None:
                lost.append(f"{grade_id}: {type(error).__name__}: {error}"[:400])
    assert not lost, (
        f"la respuesta errónea de {all_exercises[index].grade_id} cuesta puntos "
        f"en otros ejercicios: {lost}"
    )
