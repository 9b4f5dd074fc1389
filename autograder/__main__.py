"""``python -m autograder``: publicar el curso, calificar entregas y autocomprobarse.

El banco de pruebas (medir tiempos, memoria, pasos) está aparte: ``python -m
benchmarks``.

Ejemplos::

    python -m autograder release                 # regenera course/ entero
    python -m autograder release 01_bandidos     # solo un módulo
    python -m autograder grade 01_bandidos entregas/ --out notas/ --jobs 2
    python -m autograder check course/01_bandidos/01_bandidos.ipynb
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder",
        description="Publica el curso y califica entregas con nbgrader.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    release_parser = commands.add_parser(
        "release", help="regenera course/ a partir de solutions/"
    )
    release_parser.add_argument("modules", nargs="*", help="módulos (todos si nada)")

    grade_parser = commands.add_parser(
        "grade", help="califica una carpeta (o zip) de entregas de un módulo"
    )
    grade_parser.add_argument("module", help="p. ej. 01_bandidos")
    grade_parser.add_argument("submissions", type=Path, help="carpeta o .zip")
    grade_parser.add_argument(
        "--jobs", type=int, default=2, help="entregas a la vez (por defecto 2)"
    )
    grade_parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="no aislar las entregas (solo para depurar; nunca con entregas ajenas)",
    )
    grade_parser.add_argument(
        "--cell-timeout", type=int, default=None, help="segundos por celda (60)"
    )
    grade_parser.add_argument(
        "--notebook-timeout",
        type=int,
        default=None,
        help="segundos por cuaderno entero (600)",
    )
    grade_parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="carpeta de salida (por defecto .grading/<módulo>/)",
    )

    check_parser = commands.add_parser(
        "check",
        help="autocomprobación: ejecuta tu cuaderno y dice qué ejercicios pasan",
    )
    check_parser.add_argument("notebook", type=Path, help="tu cuaderno .ipynb")

    args = parser.parse_args(argv)
    # Los avisos y errores de nbgrader, visibles pero sin el ruido informativo.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    if args.command == "check":
        from autograder.check import main as check_main

        return check_main(args.notebook)
    if args.command == "release":
        from autograder.release import release

        for path in release(args.modules or None):
            print(f"Publicado: {path}")
        return 0

    from autograder.grade import GRADING, grade

    results = grade(
        args.module,
        args.submissions,
        args.out,
        jobs=args.jobs,
        use_sandbox=False if args.no_sandbox else None,
        cell_timeout=args.cell_timeout,
        notebook_timeout=args.notebook_timeout,
    )
    out = (args.out or GRADING / args.module).resolve()
    for r in results:
        line = f"{r.student_id}: {r.score:g}/{r.max_score:g}"
        if r.status != "ok" or r.reason:
            line += f"  [{r.status}] {r.reason}"
        print(line)
    print(f"{len(results)} entregas. Notas: {out / 'grades.csv'}")
    print(f"Informe de la clase: {out / 'report.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
