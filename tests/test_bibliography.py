"""Cada módulo termina con su bibliografía, escrita desde helpers/references.toml:
cada cita de la prosa está en ella, y cada obra de ella se cita en la prosa."""

from __future__ import annotations

import re

import pytest

from autograder.course import text_path
from tests.notebooks import module_ids
from tools import bibliography

# Enlaces estables: arXiv (la página abs), DOI, actas, el libro, OpenReview y
# las entradas de blog de sus autores.
STABLE = re.compile(
    r"https?://(arxiv\.org/abs/\d{4}\.\d{4,5}|doi\.org/10\.|dl\.acm\.org/doi/10\.|"
    r"papers\.nips\.cc/|"
    r"openreview\.net/forum\?id=|incompleteideas\.net/book/|www\.cs\.rhul\.ac\.uk/|"
    r"iclr-blog-track\.github\.io/|andyljones\.com/|joschu\.net/|"
    r"fengyao\.notion\.site/|aclanthology\.org/|"
    r"www\.jmlr\.org/papers/v\d+/|"
    # La nota de cDPO solo está en la web de su autor (la cita TRL)
    r"ericmitchell\.ai/cdpo\.pdf$|"
    # Bibliotecas y libros con código: su repositorio oficial y su blog
    r"github\.com/(huggingface|rasbt|DLR-RM)/|huggingface\.co/blog/)"
)


def _text(module_id: str) -> str:
    return text_path(module_id).read_text(encoding="utf-8")


def test_references_are_complete_and_used():
    refs, bibliographies = bibliography.load()
    assert sorted(bibliographies) == module_ids(), "cada módulo necesita su lista"
    used = {k for keys in bibliographies.values() for k in keys}
    assert used == set(refs), f"obras en ninguna bibliografía: {set(refs) - used}"
    for module_id, keys in bibliographies.items():
        unknown = [k for k in keys if k not in refs]
        assert not unknown, f"{module_id}: claves sin obra: {unknown}"
        assert len(set(keys)) == len(keys), f"{module_id}: obras repetidas"
    for ref in refs.values():
        assert STABLE.match(ref.url), f"{ref.key}: enlace no estable {ref.url}"
        assert ref.title or ref.note, f"{ref.key}: sin título ni nota"
        assert 1900 <= ref.year <= 2026, ref.key


@pytest.mark.parametrize("module_id", module_ids())
def test_bibliography_comes_from_the_references(module_id):
    text = _text(module_id)
    assert bibliography.with_bibliography(text, module_id) == text, (
        f"{module_id}: la bibliografía no es la de helpers/references.toml; "
        "ejecuta `make notebooks`"
    )


@pytest.mark.parametrize("module_id", module_ids())
def test_every_citation_is_listed_and_every_entry_cited(module_id):
    text = _text(module_id)
    assert not bibliography.unlisted_citations(text, module_id), (
        f"{module_id}: citas que no están en su bibliografía "
        "(añádelas en helpers/references.toml)"
    )
    assert not bibliography.uncited(text, module_id), (
        f"{module_id}: obras de su bibliografía que la prosa no cita"
    )


def test_citations_are_found_where_they_hide():
    """Las formas de citar del curso, y lo que no es una cita."""
    text = (
        "(Mnih et al., 2015); Mnih et al. (2016); (Sutton y\nBarto, 2018, §2.3); "
        "Kool, van Hoof y Welling, 2019; (Watkins, 1989). Jugar 2000 veces; "
        "Cada 2048 pasos."
    )
    found = bibliography.citations(text)
    assert [year for _, year in found] == [2015, 2016, 2018, 2019, 1989]
    assert bibliography.unlisted_citations(text, "01_bandidos") == [
        "«Mnih, 2015»",
        "«Mnih, 2016»",
        "«Kool, van Hoof y Welling, 2019»",
        "«Watkins, 1989»",
    ]
    _, bibliographies = bibliography.load()
    assert (
        bibliography.uncited("Nada que citar.", "01_bandidos")
        == bibliographies["01_bandidos"]
    )
