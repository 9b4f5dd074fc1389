"""``python -m autograder``: publicar el curso, calificar entregas y autocomprobarse.

El banco de pruebas (medir tiempos, memoria, pasos) está aparte: ``python -m
benchmarks``.

Ejemplos::

    python -m autograder release                 # regenera course/ entero
    python -m autograder release 01_bandidos     # solo un módulo
    python -m autograder grade 01_bandidos entregas/ --out notas/ --jobs 2
    python -m autograder grade 07_grpo descarga_moodle.zip
    python -m autograder manual 07_grpo notas_manuales.csv   # puntos a mano
    python -m autograder export 07_grpo --format moodle      # para importar
    python -m autograder check course/01_bandidos/01_bandidos.ipynb
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from autograder.course import GRADING


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
        "--feedback-show-hidden",
        action="store_true",
        help="la retroalimentación incluye el código de las pruebas ocultas "
        "(por defecto no, para poder usarlas otro año)",
    )
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

    manual_parser = commands.add_parser(
        "manual",
        help="pone puntos a mano (respuestas escritas) y reescribe grades.csv",
        description=(
            "Guarda en el gradebook del módulo los puntos de un CSV con las "
            "columnas student_id, grade_id, points y, si quieres, comment "
            "(points vacío borra la nota manual). Sin CSV, solo reescribe "
            "grades.csv con las notas manuales que ya tenga el gradebook (por "
            "ejemplo, las puestas en Formgrader)."
        ),
    )
    manual_parser.add_argument("module", help="p. ej. 07_grpo")
    manual_parser.add_argument(
        "marks", type=Path, nargs="?", default=None, help="CSV de notas manuales"
    )
    manual_parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="carpeta de la calificación (por defecto .grading/<módulo>/)",
    )

    export_parser = commands.add_parser(
        "export",
        help="escribe el archivo para importar las notas en Moodle o Canvas",
    )
    export_parser.add_argument("module", help="p. ej. 01_bandidos")
    export_parser.add_argument(
        "--format",
        required=True,
        choices=["moodle", "canvas", "csv"],
        help="moodle (hoja de calificaciones de la tarea), canvas (importar en "
        "el Gradebook) o csv (una fila por entrega, una columna por celda)",
    )
    export_parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="carpeta de la calificación (por defecto .grading/<módulo>/)",
    )
    export_parser.add_argument(
        "--dest", type=Path, default=None, help="archivo que escribir"
    )
    export_parser.add_argument(
        "--lang",
        choices=["es", "en"],
        default="es",
        help="idioma de la interfaz de Moodle al importar (por defecto es)",
    )
    export_parser.add_argument(
        "--max-grade",
        type=float,
        default=None,
        help="nota máxima de la tarea en el LMS (reescala los puntos del módulo)",
    )
    export_parser.add_argument(
        "--assignment",
        default=None,
        help='columna de la tarea en Canvas, p. ej. "GRPO (4321)"',
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
    if args.command == "manual":
        from autograder.gradebook import enter_marks

        results = enter_marks(args.module, args.marks, args.out)
        out = (args.out or GRADING / args.module).resolve()
        pending = [r.student_id for r in results if r.pending]
        print(f"Notas reescritas con los puntos manuales: {out / 'grades.csv'}")
        if pending:
            print(f"Siguen pendientes de corrección manual: {', '.join(pending)}")
        return 0
    if args.command == "export":
        from autograder.export import export

        dest, notes = export(
            args.module,
            args.format,
            args.out,
            args.dest,
            lang=args.lang,
            max_grade=args.max_grade,
            assignment=args.assignment,
        )
        for note in notes:
            print(f"⚠ {note}", file=sys.stderr)
        print(f"Archivo para importar: {dest}")
        return 0

    from autograder.collect import describe_skipped, read_manifest
    from autograder.grade import grade
    from autograder.results import Status

    results = grade(
        args.module,
        args.submissions,
        args.out,
        jobs=args.jobs,
        use_sandbox=False if args.no_sandbox else None,
        cell_timeout=args.cell_timeout,
        notebook_timeout=args.notebook_timeout,
        feedback_show_hidden=args.feedback_show_hidden,
    )
    out = (args.out or GRADING / args.module).resolve()
    for r in results:
        line = f"{r.student_id}: {r.score:g}/{r.max_score:g}"
        if r.status is not Status.OK or r.reason:
            line += f"  [{r.status}] {r.reason}"
        if r.pending:
            line += f"  (pendiente de corrección a mano: {', '.join(r.pending)})"
        print(line)
    for line in describe_skipped(read_manifest(out)[1]):
        print(line)
    print(f"{len(results)} entregas. Notas: {out / 'grades.csv'}")
    print(f"Informe de la clase: {out / 'report.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
