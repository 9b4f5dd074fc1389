"""Devuelve la retroalimentación de ``python -m autograder grade`` por el intercambio.

Lo ejecuta la docente en el hub, después de recoger y calificar::

    nbgrader collect 01_bandidos
    python -m autograder grade 01_bandidos ~/rl-para-llms/.grading/submitted \\
        --out ~/rl-para-llms/.grading/01_bandidos
    python hub/feedback.py 01_bandidos

``autograder grade`` deja ``<out>/feedback/<id>.html``. nbgrader devuelve la
retroalimentación desde ``.grading/feedback/<id>/<módulo>/<módulo>.html``, junto
a la marca de tiempo y el secreto de esa entrega (así cada estudiante solo
encuentra la suya). Esto copia cada archivo a su sitio y ejecuta
``nbgrader release_feedback``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hub import settings  # noqa: E402


def place_feedback(module_id: str, grades: Path, course: Path) -> list[str]:
    """Copia la retroalimentación de cada estudiante donde la busca nbgrader.

    Returns:
        Los ids de estudiante con retroalimentación colocada.
    """
    placed = []
    for html in sorted((grades / "feedback").glob("*.html")):
        student_id = html.stem
        submitted = course / ".grading" / "submitted" / student_id / module_id
        if not (submitted / "submission_secret.txt").exists():
            print(f"⚠ {student_id}: no hay entrega recogida por nbgrader; se omite.")
            continue
        target = course / ".grading" / "feedback" / student_id / module_id
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(html, target / f"{module_id}.html")
        for name in ("timestamp.txt", "submission_secret.txt"):
            shutil.copyfile(submitted / name, target / name)
        placed.append(student_id)
    return placed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python hub/feedback.py",
        description="Devuelve la retroalimentación de un módulo por el intercambio.",
    )
    parser.add_argument("module", help="p. ej. 01_bandidos")
    parser.add_argument(
        "--grades",
        type=Path,
        default=None,
        help="la carpeta --out de autograder grade "
        "(por defecto ~/rl-para-llms/.grading/<módulo>)",
    )
    args = parser.parse_args(argv)
    course = Path.home() / settings.INSTRUCTOR_COURSE
    grades = args.grades or course / ".grading" / args.module
    placed = place_feedback(args.module, grades, course)
    if not placed:
        print(f"No hay retroalimentación en {grades / 'feedback'}.")
        return 1
    print(f"Retroalimentación colocada: {', '.join(placed)}")
    nbgrader = Path(sys.executable).parent / "nbgrader"
    return subprocess.run(
        [str(nbgrader), "release_feedback", args.module], cwd=Path.home()
    ).returncode


if __name__ == "__main__":
    raise SystemExit(main())
