"""El vocabulario del curso (``helpers/vocabulary.toml``): glosarios y variantes.

Un término en español por concepto. De ese archivo salen:

* **los glosarios**: la tabla «español | inglés» del final de cada cuaderno se
  escribe desde ``[glossaries]`` (``python -m tools.glossary``; ``make
  notebooks`` lo hace antes de sincronizar los ``.ipynb``);
* **las variantes prohibidas**: ``avoid`` de cada término. :func:`violations`
  las busca en la prosa de los cuadernos (sin código entre comillas invertidas,
  fórmulas ni direcciones), en los comentarios y textos de su código y en los
  de ``helpers/``. ``tests/test_vocabulary.py`` falla si encuentra alguna.

Una glosa en inglés entre paréntesis y en cursiva, como «búfer de repetición
(*replay buffer*)», está permitida: es el término inglés, no una variante.

Uso::

    python -m tools.glossary            # reescribe los glosarios de solutions/
    python -m tools.glossary --check    # solo comprueba (glosarios y variantes)
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tokenize
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jupytext

from autograder.course import REPO, SOLUTIONS
from tools import generated

VOCABULARY = REPO / "helpers" / "vocabulary.toml"
HEADER = "| español | inglés |\n| --- | --- |"
# La tabla del glosario: la cabecera y sus filas, hasta la primera línea que no
# empieza por «|».
TABLE = re.compile(r"^\| español \| inglés \|\n\| --- \| --- \|\n(?:\|.*\n?)*", re.M)


@dataclass(frozen=True)
class Term:
    key: str
    es: str
    en: str
    avoid: tuple[re.Pattern[str], ...]


@cache
def load() -> tuple[dict[str, Term], dict[str, list[str]]]:
    """Los términos (por clave) y los glosarios (módulo → claves en orden)."""
    with VOCABULARY.open("rb") as f:
        data = tomllib.load(f)
    terms = {
        key: Term(
            key,
            entry["es"],
            entry["en"],
            tuple(re.compile(p, re.IGNORECASE) for p in entry.get("avoid", [])),
        )
        for key, entry in data["terms"].items()
    }
    return terms, data["glossaries"]


def table(module_id: str) -> str:
    """La tabla Markdown del glosario de ``module_id``."""
    terms, glossaries = load()
    rows = [f"| {terms[k].es} | {terms[k].en} |" for k in glossaries[module_id]]
    return HEADER + "\n" + "\n".join(rows) + "\n"


def with_glossary(text: str, module_id: str) -> str:
    """El texto MyST de un cuaderno con su glosario escrito desde el vocabulario."""
    matches = list(TABLE.finditer(text))
    if len(matches) != 1:
        raise ValueError(f"{module_id}: hace falta exactamente una tabla de glosario")
    match = matches[0]
    return text[: match.start()] + table(module_id) + text[match.end() :]


# ---------------------------------------------------------------------------
# Dónde buscar variantes: prosa, comentarios y textos
# ---------------------------------------------------------------------------

_NOT_PROSE = [
    re.compile(r"\$\$.*?\$\$", re.S),  # fórmulas en bloque
    re.compile(r"\$[^$\n]+\$"),  # fórmulas en línea
    re.compile(r"``.*?``", re.S),  # código en docstrings (RST)
    re.compile(r"`[^`\n]*`"),  # código en línea
    re.compile(r"https?://\S+"),  # direcciones
    re.compile(r"\(\*[^*\n]+\*\)"),  # glosas en inglés: (*replay buffer*)
    re.compile(r"\(_[^_\n]+_\)"),
]


def prose(text: str) -> str:
    """``text`` sin código, fórmulas, direcciones ni glosas en inglés.

    Lo quitado se cambia por espacios del mismo largo de líneas, para que los
    números de línea sigan valiendo.
    """
    for pattern in _NOT_PROSE:
        text = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    return text


# Una cadena que es un solo identificador no es prosa: es una clave de un
# diccionario o un nombre que impone una biblioteca (la columna "prompt" de TRL).
_IDENTIFIER = re.compile(r"""^[rbuf]*(['"])[A-Za-z_]\w*\1$""")


def _python_text(source: str) -> Iterator[tuple[int, str]]:
    """(línea, texto) de cada comentario y cada cadena de un código Python."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return
    kinds = {tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)}
    for token in tokens:
        if token.type == tokenize.STRING and _IDENTIFIER.match(token.string):
            continue  # una clave o un nombre de una API («prompt», "loss_type")
        if token.type in kinds:
            for offset, line in enumerate(prose(token.string).splitlines()):
                yield token.start[0] + offset, line


def notebook_text(path: Path) -> Iterator[tuple[str, str]]:
    """(dónde, texto) de la prosa y del texto del código de un cuaderno MyST."""
    nb = jupytext.read(path)
    for cell in nb.cells:
        where = f"{path.relative_to(REPO)} [{cell.metadata.get('id', '?')}]"
        if cell.metadata.get("id") == "bibliography":
            # Títulos en su idioma original, escritos desde helpers/references.toml.
            continue
        if cell.cell_type == "markdown":
            text = prose(cell.source)
            # En la tabla del glosario, la columna inglesa es inglés a propósito.
            text = re.sub(r"^(\|[^|\n]*\|)[^\n]*$", r"\1", text, flags=re.M)
            for number, line in enumerate(text.splitlines(), 1):
                yield f"{where}:{number}", line
        elif cell.cell_type == "code":
            for number, line in _python_text(cell.source):
                yield f"{where}:{number}", line


def python_text(path: Path) -> Iterator[tuple[str, str]]:
    """(dónde, texto) de los comentarios y las cadenas de un módulo Python."""
    for number, text in _python_text(path.read_text(encoding="utf-8")):
        yield f"{path.relative_to(REPO)}:{number}", text


def sources() -> Iterator[tuple[str, str]]:
    """Todo el texto que el vocabulario gobierna: cuadernos fuente y helpers."""
    for path in sorted(SOLUTIONS.glob("*/*.md")):
        yield from notebook_text(path)
    for path in sorted((REPO / "helpers").rglob("*.py")):
        yield from python_text(path)


def violations() -> list[str]:
    """Cada aparición de una variante prohibida, con dónde y qué usar en su lugar."""
    terms, _ = load()
    found = []
    for where, text in sources():
        for term in terms.values():
            for pattern in term.avoid:
                for match in pattern.finditer(text):
                    found.append(f"{where}: «{match.group()}» → usa «{term.es}»")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.glossary",
        description="Escribe los glosarios desde helpers/vocabulary.toml.",
    )
    parser.add_argument("--check", action="store_true", help="solo comprobar")
    args = parser.parse_args(argv)
    _, glossaries = load()
    failed = generated.rewrite(
        glossaries,
        with_glossary,
        check=args.check,
        stale="el glosario no sale del vocabulario",
        rewritten="glosario reescrito",
    )
    if args.check:
        for line in violations():
            print(line, file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
