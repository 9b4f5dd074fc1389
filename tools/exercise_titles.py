"""Los títulos de los ejercicios, leídos de los cuadernos: una sola fuente.

El título de un ejercicio es su encabezado en el cuaderno («### Ejercicio 3 ·
GAE hacia atrás sobre un bloque (4 puntos)»). De ahí lo leen, sin puntos,
``autograder.course`` (la retroalimentación, el libro de notas) y esta
herramienta, que lo escribe en ``helpers/data/exercise_titles.json`` para las
comprobaciones: ``helpers.checks`` no lee cuadernos (el del estudiante puede
llamarse de cualquier manera, o no estar), y su resumen de progreso y su «✔
…: ¡correcto!» nombran el ejercicio como el cuaderno.

El archivo va de cada módulo a sus ejercicios de código, en el orden del
cuaderno: el ``grade_id`` de cada celda de solución → su título.

Uso (``make notebooks`` lo hace tras sincronizar los ``.ipynb``)::

    python -m tools.exercise_titles           # reescribe el archivo
    python -m tools.exercise_titles --check   # falla si no está al día
"""

from __future__ import annotations

import argparse
import json
import sys

import nbformat

from autograder.course import REPO, exercise_cells, module_ids, source_path

#: Lo que se escribe en texto plano en lugar de la notación de los títulos.
PLAIN = {
    "\\gamma": "γ",
    "\\lambda": "λ",
    "\\beta": "β",
    "\\varepsilon": "ε",
    "\\epsilon": "ε",
    "_1": "₁",
    "_2": "₂",
    "_3": "₃",
    "$": "",
}
TITLES = REPO / "helpers" / "data" / "exercise_titles.json"


def plain(title: str) -> str:
    """El título sin notación de LaTeX («$k_1$» → «k₁»): se imprime como texto
    en la salida de una celda, donde nadie lo compone."""
    for notation, text in PLAIN.items():
        title = title.replace(notation, text)
    if "\\" in title:
        raise ValueError(f"Falta cómo escribir en texto plano: {title}")
    return title


def titles() -> dict[str, dict[str, str]]:
    """Módulo → (``grade_id`` de solución → título del ejercicio), en orden."""
    found: dict[str, dict[str, str]] = {}
    for module_id in module_ids():
        nb = nbformat.read(source_path(module_id), as_version=4)
        found[module_id] = {
            grade_id: plain(ex.title)
            for ex in exercise_cells(nb)
            for grade_id in ex.solution_ids
        }
    return found


def render() -> str:
    """El contenido del archivo, tal como se escribe."""
    return json.dumps(titles(), ensure_ascii=False, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="solo comprobar")
    args = parser.parse_args(argv)
    text = render()
    current = TITLES.read_text(encoding="utf-8") if TITLES.exists() else ""
    if text == current:
        return 0
    if args.check:
        print(
            f"{TITLES.relative_to(REPO)} no está al día: ejecuta make notebooks",
            file=sys.stderr,
        )
        return 1
    TITLES.write_text(text, encoding="utf-8")
    print(f"{TITLES.relative_to(REPO)}: títulos reescritos")
    return 0


if __name__ == "__main__":
    sys.exit(main())
