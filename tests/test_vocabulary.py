"""Un término por concepto: glosarios desde el vocabulario, sin variantes prohibidas,
y números impresos con coma decimal."""

from __future__ import annotations

import re

import pytest

from tests.notebooks import exercises, module_ids, read, solution_path
from tools import glossary


def test_vocabulary_is_consistent():
    terms, glossaries = glossary.load()
    spanish = [t.es for t in terms.values()]
    assert len(set(spanish)) == len(spanish), "dos términos con el mismo español"
    assert sorted(glossaries) == module_ids(), "cada módulo necesita su glosario"
    for module_id, keys in glossaries.items():
        unknown = [k for k in keys if k not in terms]
        assert not unknown, f"{module_id}: claves sin término: {unknown}"
        assert len(set(keys)) == len(keys), f"{module_id}: términos repetidos"
    used = {k for keys in glossaries.values() for k in keys}
    assert used == set(terms), f"términos en ningún glosario: {set(terms) - used}"
    for term in terms.values():
        for pattern in term.avoid:
            assert not pattern.search(glossary.prose(term.es)), (
                f"{term.key}: «{pattern.pattern}» prohíbe el propio término"
            )


@pytest.mark.parametrize("module_id", module_ids())
def test_glossary_comes_from_the_vocabulary(module_id):
    path = glossary.SOLUTIONS / module_id / f"{module_id}.md"
    text = path.read_text(encoding="utf-8")
    assert glossary.with_glossary(text, module_id) == text, (
        f"{module_id}: el glosario no es el de helpers/vocabulary.toml; "
        "ejecuta `make notebooks`"
    )


def test_no_banned_variant_anywhere():
    found = glossary.violations()
    assert not found, "variantes que el vocabulario prohíbe:\n" + "\n".join(found)


def test_banned_variants_are_found_where_they_hide(tmp_path):
    """La búsqueda mira prosa y comentarios, pero no código ni glosas en inglés."""
    text = glossary.prose(
        "El `replay_buffer` (*replay buffer*) y $x_{buffer}$ no cuentan; "
        "este buffer sí."
    )
    assert [m.group() for m in re.finditer(r"buffer", text)] == ["buffer"]
    source = 'buffer = []  # el buffer\nprint("un palo")\n'
    found = [line for _, line in glossary._python_text(source)]
    assert any("el buffer" in line for line in found)
    assert any("un palo" in line for line in found)
    assert not any(line.startswith("buffer =") for line in found)


# Un número impreso para una persona se escribe como en la prosa: con
# helpers.number / helpers.percent («0,727», «75,6 %»), no con «:.3f».
FLOAT_FORMAT = re.compile(r"\{[^{}\n]*:[^{}\n]*(?:\.\d+[fe%]|[,_]\d*[fd]?)\}")


@pytest.mark.parametrize("module_id", module_ids())
def test_printed_numbers_use_the_decimal_comma(module_id):
    nb = read(solution_path(module_id))
    graded = {e.grade_id for e in exercises(nb)}
    offending = [
        f"[{cell.id}] {line.strip()}"
        for cell in nb.cells
        if cell.cell_type == "code"
        and cell.metadata.get("nbgrader", {}).get("grade_id") not in graded
        for line in cell.source.splitlines()
        if FLOAT_FORMAT.search(line)
    ]
    assert not offending, (
        f"{module_id}: usa helpers.number o helpers.percent para imprimir "
        "números:\n" + "\n".join(offending)
    )
