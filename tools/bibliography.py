"""La bibliografía del curso (``helpers/references.toml``): una lista por módulo.

Cada módulo termina con la lista de las obras que cita, escrita desde el archivo
de referencias (``python -m tools.bibliography``; ``make notebooks`` lo hace
antes de sincronizar los ``.ipynb``). ``tests/test_bibliography.py`` comprueba
que la lista del cuaderno es la del archivo, que cada cita de la prosa
(«Mnih et al., 2015», «Sutton y Barto (2018)») está en la lista de su módulo y
que cada obra de la lista se cita en él.

Uso::

    python -m tools.bibliography            # reescribe las listas de solutions/
    python -m tools.bibliography --check    # solo comprueba
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from dataclasses import dataclass
from functools import cache

from autograder.course import REPO
from tools import generated

REFERENCES = REPO / "helpers" / "references.toml"
# La celda de la bibliografía: su cabecera («## 15. Bibliografía») y lo que la
# sigue hasta la celda siguiente (``+++``) o el final.
SECTION = re.compile(r"^(## \d+\. Bibliografía\n)(.*?)(?=^\+\+\+|\Z)", re.M | re.S)
INTRO = "Las obras que cita este módulo, por orden alfabético:"
# Una cita en la prosa: uno o varios apellidos y el año, con «et al.», una coma
# o un paréntesis entre medias: «Mnih et al., 2015», «Mnih et al. (2016)»,
# «Kool, van Hoof y Welling, 2019», «(Watkins, 1989)».
_NAME = r"(?:(?:van|de|von) )?[A-ZÁÉÍÓÚÜ][\w\-]+"
CITATION = re.compile(
    rf"(?P<names>{_NAME}(?:(?:,\s+|\s+y\s+){_NAME})*)"
    r"(?:\s+et\s+al\.,?\s+\(?|,\s+|\s+\()"
    r"(?P<year>19\d\d|20[0-2]\d)\b"
)


@dataclass(frozen=True)
class Reference:
    key: str
    authors: str
    cite: str
    year: int
    title: str
    venue: str
    url: str
    undated: bool = False
    note: str = ""

    @property
    def surname(self) -> str:
        """El apellido que identifica la cita: «Hasselt» en «van Hasselt»,
        «Sutton» en «Sutton y Barto», «Face» en «Hugging Face» (la última
        palabra del primer nombre, que es lo que lee ``CITATION``)."""
        first = re.sub(r"^(?:van|de|von) ", "", self.cite).split(" y ")[0]
        return first.split()[-1]

    def entry(self) -> str:
        """La línea de la lista: autores (año). *Título*. Dónde. Enlace."""
        parts = [f"- {self.authors} ({self.year})."]
        if self.title:
            parts.append(f"*{self.title}*.")
        parts.append("Entrada de blog." if self.venue == "blog" else f"{self.venue}.")
        if self.note:
            parts.append(f"{self.note}.")
        return " ".join([*parts, f"<{self.url}>"])


@cache
def load() -> tuple[dict[str, Reference], dict[str, list[str]]]:
    """Las referencias (por clave) y las bibliografías (módulo → claves)."""
    with REFERENCES.open("rb") as f:
        data = tomllib.load(f)
    refs = {key: Reference(key, **entry) for key, entry in data["refs"].items()}
    return refs, data["bibliographies"]


def section(module_id: str) -> str:
    """El cuerpo de la sección «Bibliografía» de ``module_id``, tras su cabecera."""
    refs, bibliographies = load()
    chosen = sorted(
        (refs[k] for k in bibliographies[module_id]),
        key=lambda r: (r.authors.casefold(), r.year),
    )
    return "\n" + INTRO + "\n\n" + "\n".join(r.entry() for r in chosen) + "\n\n"


def with_bibliography(text: str, module_id: str) -> str:
    """El texto MyST de un cuaderno con su bibliografía escrita desde el archivo."""
    matches = list(SECTION.finditer(text))
    if len(matches) != 1:
        raise ValueError(f"{module_id}: hace falta una sola sección Bibliografía")
    match = matches[0]
    return text[: match.start(2)] + section(module_id) + text[match.end(2) :]


def _prose_without_bibliography(text: str) -> str:
    """La prosa del cuaderno sin su propia lista (que cita todo por definición)."""
    return SECTION.sub("", text)


def citations(text: str) -> list[tuple[str, int]]:
    """(apellidos, año) de cada cita de ``text`` con año."""
    return [
        (m.group("names"), int(m.group("year")))
        for m in CITATION.finditer(_prose_without_bibliography(text))
    ]


def unlisted_citations(text: str, module_id: str) -> list[str]:
    """Las citas de la prosa que no están en la bibliografía del módulo."""
    refs, bibliographies = load()
    listed = [refs[k] for k in bibliographies[module_id]]
    missing = []
    for names, year in citations(text):
        words = set(re.findall(r"[\w\-]+", names))
        if not any(r.year == year and r.surname in words for r in listed):
            missing.append(f"«{names}, {year}»")
    return missing


def uncited(text: str, module_id: str) -> list[str]:
    """Las obras de la bibliografía del módulo que su prosa no cita."""
    refs, bibliographies = load()
    prose = _prose_without_bibliography(text)
    missing = []
    for key in bibliographies[module_id]:
        ref = refs[key]
        name = re.escape(ref.cite).replace(r"\ ", r"\s+")
        pattern = name if ref.undated else rf"{name}[\s\S]{{0,80}}?\b{ref.year}\b"
        if not re.search(pattern, prose):
            missing.append(key)
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bibliography",
        description="Escribe las bibliografías desde helpers/references.toml.",
    )
    parser.add_argument("--check", action="store_true", help="solo comprobar")
    args = parser.parse_args(argv)
    _, bibliographies = load()
    failed = generated.rewrite(
        bibliographies,
        with_bibliography,
        check=args.check,
        stale="la bibliografía no sale de helpers/references.toml",
        rewritten="bibliografía reescrita",
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
