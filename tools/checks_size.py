"""Cuánto mide ``helpers/checks/``: líneas por tema y por ejercicio calificado.

Las comprobaciones visibles deben ser filas de los tipos del núcleo, no código
escrito a mano por ejercicio (issue #48). Esta orden imprime, tema a tema, las
líneas de su archivo, sus ejercicios calificados y la media; el núcleo
(``core/``, ``__init__.py`` y ``quiz.py``) se cuenta aparte y entra en los dos
totales, que no pueden pasar de ``LINE_CEILINGS`` y deben bajar hasta
``LINE_BUDGETS``.

Uso::

    python -m tools.checks_size
"""

from __future__ import annotations

from pathlib import Path

from autograder.course import exercise_cells, module_ids, read_source
from helpers.formatting import number
from helpers.topics import TOPICS

CHECKS = Path(__file__).resolve().parents[1] / "helpers" / "checks"
#: Lo que no es de ningún tema: el núcleo y el cuestionario.
SHARED = ("__init__.py", "quiz.py", "core")
#: Los módulos cuyo tamaño fija el primer presupuesto.
FIRST_MODULES = tuple(f"{n:02d}_" for n in range(1, 11))
#: Los presupuestos de la issue #48 (basta uno): líneas de 01–10 con el
#: núcleo, y media por ejercicio calificado. La media se cumple desde el 6 de
#: diciembre de 2026; las líneas de 01–10, no (las imprime :func:`main`).
LINE_BUDGETS = {"modules_01_10": 9_500, "per_exercise": 140}
#: Los techos: lo medido el 6 de diciembre de 2026, tras la cuarta ronda de
#: recortes. ``tests/test_checks_size.py`` no deja pasarlos: se bajan cuando
#: un tema se acorta, nunca se suben para que quepa más.
LINE_CEILINGS = {"modules_01_10": 9_817, "per_exercise": 140}


def lines(path: Path) -> int:
    """Las líneas de un archivo, o de todos los ``.py`` de una carpeta."""
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)


def measure() -> dict[str, object]:
    """Las cifras: ``topics`` (tema → líneas y ejercicios), ``shared``,
    ``modules_01_10``, ``total``, ``exercises`` y ``per_exercise``."""
    topics = {}
    for module_id in module_ids():
        topic = TOPICS[module_id]
        count = len(exercise_cells(read_source(module_id)))
        topics[module_id] = (topic, lines(CHECKS / f"{topic}.py"), count)
    shared = sum(lines(CHECKS / name) for name in SHARED)
    first = shared + sum(
        n for m, (_, n, _) in topics.items() if m.startswith(FIRST_MODULES)
    )
    total = shared + sum(n for _, n, _ in topics.values())
    exercises = sum(c for _, _, c in topics.values())
    return {
        "topics": topics,
        "shared": shared,
        "modules_01_10": first,
        "total": total,
        "exercises": exercises,
        "per_exercise": total / exercises,
    }


def main() -> None:
    figures = measure()
    print(f"{'módulo':<18}{'tema':<14}{'líneas':>7}{'ejerc.':>7}{'por ej.':>9}")
    for module_id, (topic, n, count) in figures["topics"].items():
        print(f"{module_id:<18}{topic:<14}{n:>7}{count:>7}{n / count:>9.0f}")
    print(f"{'núcleo':<32}{figures['shared']:>7}")
    print(
        f"01–10 con el núcleo: {figures['modules_01_10']} líneas "
        f"(techo {LINE_CEILINGS['modules_01_10']}, "
        f"presupuesto {LINE_BUDGETS['modules_01_10']})"
    )
    print(
        f"todo: {figures['total']} líneas, {figures['exercises']} ejercicios, "
        f"{number(figures['per_exercise'], 1)} por ejercicio "
        f"(techo {LINE_CEILINGS['per_exercise']}, "
        f"presupuesto {LINE_BUDGETS['per_exercise']})"
    )


if __name__ == "__main__":
    main()
