"""Cada cuaderno de ``solutions/`` y su texto MyST dicen lo mismo.

El texto (``NN_x.md``) es lo que se edita y se revisa; ``make notebooks``
regenera el ``.ipynb``. Estas pruebas fallan si alguien cambió un lado sin el
otro, y comprueban que el texto sirve para revisar: una palabra cambiada en la
prosa es una línea cambiada.
"""

from __future__ import annotations

import copy
import difflib

import nbformat
import pytest

from tests.notebooks import COURSE, module_ids, read, solution_path
from tools import notebook_text


@pytest.mark.parametrize("module_id", module_ids())
def test_notebook_and_text_agree(module_id):
    assert notebook_text.text_path(module_id).exists(), (
        f"falta solutions/{module_id}/{module_id}.md: ejecuta `make notebooks`"
    )
    assert notebook_text.in_sync(module_id), (
        f"solutions/{module_id}: el .ipynb y el .md no coinciden; edita el .md, "
        "ejecuta `make notebooks` y confirma los dos"
    )


@pytest.mark.parametrize("module_id", module_ids())
def test_text_carries_ids_and_nbgrader_metadata(module_id):
    nb = notebook_text.from_text(notebook_text.text_path(module_id).read_text("utf-8"))
    stored = read(solution_path(module_id))
    assert [c.id for c in nb.cells] == [c.id for c in stored.cells]
    assert [c.metadata for c in nb.cells] == [c.metadata for c in stored.cells]


def _changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(
            before.splitlines(), after.splitlines(), lineterm="", n=0
        )
        if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))
    ]


@pytest.mark.parametrize("cell_type", ["markdown", "code"])
def test_one_word_is_one_line_of_diff(cell_type):
    nb = read(solution_path(module_ids()[0]))
    edited = copy.deepcopy(nb)
    cell = next(
        c for c in edited.cells if c.cell_type == cell_type and len(c.source) > 200
    )
    word = cell.source.split()[3]
    cell.source = cell.source.replace(word, word + "X", 1)
    changed = _changed_lines(notebook_text.to_text(nb), notebook_text.to_text(edited))
    assert len(changed) == 2, changed  # una línea quitada y una puesta


def test_new_cells_written_without_id_get_a_readable_one():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Título", id="title"),
        nbformat.v4.new_code_cell("x = 1", id="setup"),
    ]
    text = notebook_text.to_text(nb)
    text = text.replace('+++ {"id": "title"}', "+++", 1) + (
        "\n+++\n\nUna celda nueva escrita a mano.\n"
    )
    parsed = notebook_text.jupytext.reads(text, fmt=notebook_text.FORMAT)
    assert notebook_text.fill_missing_ids(parsed) == ["celda-2", "setup-2"]
    with pytest.raises(ValueError, match="sin id"):
        notebook_text.from_text(text)


def test_the_text_never_reaches_students():
    leaked = sorted(p.relative_to(COURSE) for p in COURSE.rglob("*.md"))
    assert not leaked, f"course/ no debe tener los textos con soluciones: {leaked}"
