"""``course/`` es exactamente lo que publica ``make release`` y no filtra nada."""

from __future__ import annotations

import ast
import json
import re

import pytest

from autograder.release import release
from tests.notebooks import (
    COURSE,
    HIDDEN_REGION,
    SOLUTION_REGION,
    course_path,
    module_ids,
    read,
    solution_path,
)

MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


@pytest.fixture(scope="module")
def fresh_release(tmp_path_factory):
    target = tmp_path_factory.mktemp("course")
    release(target=target)
    return target


def test_course_has_exactly_the_released_modules(fresh_release):
    published = sorted(p.name for p in COURSE.iterdir() if p.is_dir())
    assert published == module_ids(), (
        "course/ y solutions/ no tienen los mismos módulos"
    )
    for module_id in module_ids():
        files = sorted(p.name for p in (COURSE / module_id).iterdir())
        expected = sorted(p.name for p in (fresh_release / module_id).iterdir())
        assert files == expected


@pytest.mark.parametrize("module_id", module_ids())
def test_course_is_not_stale(fresh_release, module_id):
    committed = json.loads(course_path(module_id).read_text(encoding="utf-8"))
    regenerated = json.loads(
        (fresh_release / module_id / f"{module_id}.ipynb").read_text(encoding="utf-8")
    )
    assert committed == regenerated, (
        f"course/{module_id} está desactualizado: ejecuta `make release` y "
        "confirma el resultado"
    )


def _private_lines(source: str, public_text: set[str]) -> set[str]:
    """Líneas de soluciones y pruebas ocultas que no aparecen en otro sitio."""
    private = set()
    for region in (SOLUTION_REGION, HIDDEN_REGION):
        for match in region.finditer(source):
            for line in match.group(1).splitlines():
                line = line.strip()
                if line and not line.startswith("#") and line not in public_text:
                    private.add(line)
    return private


@pytest.mark.parametrize("module_id", module_ids())
def test_nothing_private_reaches_course(module_id):
    released = course_path(module_id).read_text(encoding="utf-8")
    for marker in MARKERS:
        assert marker not in released, f"course/{module_id} contiene «{marker}»"

    source_nb = read(solution_path(module_id))
    public = set()
    for cell in source_nb.cells:
        outside = HIDDEN_REGION.sub("", SOLUTION_REGION.sub("", cell.source))
        public.update(line.strip() for line in outside.splitlines())
    course_lines = {
        line.strip()
        for cell in read(course_path(module_id)).cells
        for line in cell.source.splitlines()
    }
    private = set()
    for cell in source_nb.cells:
        private |= _private_lines(cell.source, public)
    assert private, "el cuaderno fuente no tiene soluciones: ¿se leyó bien?"
    leaked = sorted(private & course_lines)
    assert not leaked, f"líneas de solución o pruebas ocultas en course/: {leaked}"


#: Lo que delata la clave de un cuestionario en una celda: la calificación con
#: la clave (que solo llaman las pruebas ocultas), una afirmación declarada
#: verdadera o falsa, o un assert cuyo mensaje nombra una afirmación («a) …»).
_KEY_CALLS = re.compile(
    r"\b(statements_key|number_key|failure_of|RUN_IDS)\b|\bq\d+_key\b"
)
_VERDICT = re.compile(r"(?<![\w(])[a-d]\)\s*(?:es|son)\s+(?:verdadera|falsa)", re.I)
_NAMED_STATEMENT = re.compile(r"^\s*[a-d]\)\s")


def quiz_key_leaks(nb) -> list[str]:
    """Las celdas de ``nb`` que dejan ver la clave de un cuestionario."""
    leaks = []
    for cell in nb.cells:
        where = f"celda {cell.get('id', '?')}"
        if _VERDICT.search(cell.source):
            leaks.append(f"{where}: dice qué afirmación es verdadera o falsa")
        if cell.cell_type != "code":
            continue
        if _KEY_CALLS.search(cell.source):
            leaks.append(f"{where}: califica con la clave")
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            message = node.msg if isinstance(node, ast.Assert) else None
            if (
                isinstance(message, ast.Constant)
                and isinstance(message.value, str)
                and _NAMED_STATEMENT.match(message.value)
            ):
                leaks.append(
                    f"{where}: un assert comprueba la afirmación {message.value}"
                )
    return leaks


def test_the_quiz_key_detector_sees_the_leaks_it_looks_for():
    import nbformat

    leaky = [
        "assert kl[0] < kl[1]  # c) es falsa",
        'assert proxy[-1] > proxy[0], "a) con β = 0, la nota no subió"',
        "statements_key(answer_experiment, key)",
    ]
    for source in leaky:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
        assert quiz_key_leaks(nb), source
    fine = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell('answer = {"a": None, "b": None}  # f(x)')]
    )
    assert not quiz_key_leaks(fine)


@pytest.mark.parametrize("module_id", module_ids())
def test_no_quiz_key_in_sight(module_id):
    """Ninguna celda que ve el estudiante deja ver la clave de una pregunta."""
    leaks = quiz_key_leaks(read(course_path(module_id)))
    assert not leaks, f"course/{module_id}: {leaks}"
