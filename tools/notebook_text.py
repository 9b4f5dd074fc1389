"""Los cuadernos de ``solutions/`` como texto: MyST Markdown emparejado con jupytext.

Cada ``solutions/NN_x/NN_x.ipynb`` tiene al lado ``NN_x.md``, el mismo cuaderno
en MyST Markdown (el formato ``md:myst`` de jupytext). El texto es lo que se
edita y se revisa: la prosa es Markdown normal, el código va en bloques
``{code-cell}`` y cada celda lleva delante sus metadatos (el ``id`` de la celda,
los de nbgrader, las etiquetas). Cambiar una palabra de la prosa cambia una
línea del texto.

jupytext no guarda los ids de celda (nbformat 4.5) en sus formatos de texto;
aquí viajan como un metadato ``id`` más, y al construir el ``.ipynb`` vuelven
a ser el id de la celda. Una celda nueva escrita a mano sin ``id`` recibe uno
derivado del de la celda anterior (``setup-2``), que se escribe también en el
texto.

Uso (desde la raíz del repositorio; ``make notebooks`` hace lo mismo)::

    python -m tools.notebook_text              # sincroniza todos los pares
    python -m tools.notebook_text 02_dqn       # solo uno
    python -m tools.notebook_text --check      # falla si algún par no coincide
    python -m tools.notebook_text --from ipynb # el .ipynb manda (editado en Jupyter)

Sin ``--from``, el lado que se editó lo dice git: si solo cambió el ``.ipynb``
(respecto a HEAD), se reescribe el texto; si solo cambió el texto, o ninguno,
manda el texto; si cambiaron los dos, manda el que se guardó el último.
"""

from __future__ import annotations

import argparse
import copy
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
from nbformat.notebooknode import NotebookNode

from autograder.course import REPO, source_path, text_path
from autograder.course import module_ids as all_modules

FORMAT = "md:myst"
# La cabecera del texto: formato y metadatos del cuaderno, sin la versión de
# jupytext (cambiaría todos los archivos en cada actualización).
NOTEBOOK_METADATA_FILTER = (
    "kernelspec,language_info,-jupytext.text_representation.jupytext_version"
)


def module_ids() -> list[str]:
    """Los módulos de ``solutions/`` que tienen cuaderno o texto."""
    return sorted(set(all_modules()) | set(all_modules(text=True)))


def to_text(nb: NotebookNode) -> str:
    """El cuaderno en MyST Markdown, con el id de cada celda en sus metadatos."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        cell.metadata = {"id": cell.id, **cell.metadata}
    nb.metadata["jupytext"] = {"notebook_metadata_filter": NOTEBOOK_METADATA_FILTER}
    return jupytext.writes(nb, fmt=FORMAT)


def fill_missing_ids(nb: NotebookNode) -> list[str]:
    """Da un id a las celdas del texto que no lo traen; devuelve los nuevos.

    El id nuevo es el de la celda anterior con un sufijo (``setup-2``), así que
    se lee bien en el texto y en las pruebas.
    """
    taken = {c.metadata["id"] for c in nb.cells if "id" in c.metadata}
    added = []
    previous = "celda"
    for cell in nb.cells:
        if "id" not in cell.metadata:
            n = 2
            while f"{previous}-{n}" in taken:
                n += 1
            cell.metadata["id"] = f"{previous}-{n}"
            taken.add(cell.metadata["id"])
            added.append(cell.metadata["id"])
        previous = cell.metadata["id"]
    return added


def from_text(text: str) -> NotebookNode:
    """El cuaderno (nbformat 4.5) que describe el texto; todas las celdas con id."""
    nb = jupytext.reads(text, fmt=FORMAT)
    missing = [i for i, c in enumerate(nb.cells) if "id" not in c.metadata]
    if missing:
        raise ValueError(f"celdas sin id en el texto: {missing}")
    nb.metadata.pop("jupytext", None)
    nb.nbformat, nb.nbformat_minor = 4, 5
    for cell in nb.cells:
        cell.id = cell.metadata.pop("id")
    nbformat.validate(nb)
    return nb


def notebook_bytes(nb: NotebookNode) -> str:
    """El cuaderno tal como se guarda en el repositorio (como ``nbformat.write``)."""
    return nbformat.writes(nb) + "\n"


def in_sync(module_id: str) -> bool:
    """¿Dicen lo mismo, byte a byte y en los dos sentidos, el .ipynb y el .md?"""
    raw = source_path(module_id).read_text(encoding="utf-8")
    text = text_path(module_id).read_text(encoding="utf-8")
    if to_text(nbformat.reads(raw, as_version=4)) != text:
        return False
    try:
        return notebook_bytes(from_text(text)) == raw
    except ValueError:
        return False


def _edited(path: Path) -> bool:
    """¿Tiene ``path`` cambios respecto a HEAD (o no está en git)?"""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--", str(path)],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return False
    return bool(out.strip())


def sync(module_id: str, source: str | None = None, check: bool = False) -> str:
    """Pone de acuerdo el ``.ipynb`` y el ``.md`` de un módulo.

    Args:
        module_id: p. ej. ``"01_bandidos"``.
        source: ``"md"`` o ``"ipynb"`` para decir qué lado manda; ``None``: lo
            dice git (ver el docstring del módulo).
        check: solo comprobar; no escribe nada.

    Returns:
        Una línea en español que dice qué pasó (o qué pasaría, con ``check``).

    Raises:
        ValueError: con ``check``, si no coinciden.
    """
    ipynb, md = source_path(module_id), text_path(module_id)
    if not md.exists():
        source = "ipynb"
    elif not ipynb.exists():
        source = "md"
    else:
        if in_sync(module_id):
            return f"{module_id}: de acuerdo"
        if source is None:
            ipynb_edited, md_edited = _edited(ipynb), _edited(md)
            if ipynb_edited and md_edited:
                # Los dos cambiaron (p. ej. se editó el texto otra vez tras
                # sincronizar): manda el último que se guardó.
                newer = ipynb.stat().st_mtime > md.stat().st_mtime
                source = "ipynb" if newer else "md"
            else:
                source = "ipynb" if ipynb_edited else "md"
    if check:
        raise ValueError(
            f"{module_id}: el .ipynb y el .md no coinciden "
            "(ejecuta `make notebooks` y confirma los dos)"
        )
    if source == "ipynb":
        nb = nbformat.reads(ipynb.read_text(encoding="utf-8"), as_version=4)
        md.write_text(to_text(nb), encoding="utf-8")
        return f"{module_id}: .md ← .ipynb"
    nb = jupytext.reads(md.read_text(encoding="utf-8"), fmt=FORMAT)
    added = fill_missing_ids(nb)
    if added:
        nb.metadata.pop("jupytext", None)
        for cell in nb.cells:
            cell.id = cell.metadata.pop("id")
        md.write_text(to_text(nb), encoding="utf-8")
    nb = from_text(md.read_text(encoding="utf-8"))
    ipynb.write_text(notebook_bytes(nb), encoding="utf-8")
    note = f" (ids nuevos: {', '.join(added)})" if added else ""
    return f"{module_id}: .ipynb ← .md{note}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.notebook_text",
        description="Sincroniza cada cuaderno de solutions/ con su texto MyST.",
    )
    parser.add_argument("modules", nargs="*", help="módulos (todos si nada)")
    parser.add_argument(
        "--from", dest="source", choices=["md", "ipynb"], help="qué lado manda"
    )
    parser.add_argument(
        "--check", action="store_true", help="solo comprobar (sale con 1 si difieren)"
    )
    args = parser.parse_args(argv)
    failed = False
    for module_id in args.modules or module_ids():
        try:
            print(sync(module_id, args.source, args.check))
        except ValueError as error:
            print(error, file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
