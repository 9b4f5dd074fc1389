"""El tiempo de estudio de cada módulo, calculado desde su cuaderno.

La línea «**Tiempo estimado:**» de la presentación de cada cuaderno no se
escribe a mano: ``python -m tools.study_time`` la escribe (``make notebooks`` lo
hace antes de sincronizar los ``.ipynb``) como la suma de dos partes:

* **los ejercicios**: la suma exacta de los «**Tiempo:** unos N minutos» que
  hay bajo el título de cada ejercicio (y de la pregunta escrita). Esos tiempos
  sí se escriben a mano, para el público que declara el README (programa en
  Python y sabe lo básico de NumPy y de probabilidad, no necesariamente
  PyTorch). CONTRIBUTING.md (sección 4) explica cómo se eligen;
* **la lectura y las celdas**: todo lo que no es un ejercicio. Sale del propio
  cuaderno con las constantes de abajo: las palabras de la prosa a una
  velocidad de lectura de texto técnico denso, un tiempo fijo por celda de
  código para leerla, ejecutarla y mirar lo que imprime o dibuja, y lo que
  tarda el cuaderno entero en ejecutarse según ``helpers/data/benchmarks.json``
  (si el banco lo midió).

El total se redondea a medias horas; la lectura, a múltiplos de 5 minutos.
``tests/test_study_time.py`` comprueba que la línea escrita es la que sale de
aquí y que cada ejercicio dice su tiempo.

Uso::

    python -m tools.study_time            # reescribe las líneas de solutions/
    python -m tools.study_time --check    # solo comprueba
    python -m tools.study_time --report   # la cuenta de cada módulo
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass

import jupytext

from autograder.course import REPO, text_path
from autograder.course import module_ids as all_modules
from tools import generated

BENCHMARKS = REPO / "helpers" / "data" / "benchmarks.json"

# Las constantes, y por qué. Están calibradas para que los totales caigan en
# lo que estimaron los revisores de la issue #38 (01 y 02, 2,5–3 h; 03, unas
# 3 h; 04, 2–2,5 h; 06, 2,5–3 h; 07, 3,5–4 h) y en lo que midió un estudiante
# capaz que hizo 03 y 07 solo con los enunciados (03, unas 3 h; 07, 4–5 h,
# «sobre todo por leer» sus celdas densas). Con los tiempos de ejercicio que
# midió ese estudiante, a la lectura de 03 le queda casi una hora y a la de 07
# entre una y dos. En 05 y 08 los revisores daban por buenas 1,5–2 h y 2 h con
# los tiempos de ejercicio de antes; con los de ahora (la regla de
# CONTRIBUTING.md, calibrada con lo que midió el estudiante) salen media hora
# más.
#
# Lectura: un texto técnico con fórmulas se estudia, no se lee de corrido, así
# que va bastante más despacio que una lectura corriente. 150 palabras por
# minuto es la velocidad que, con las celdas de abajo, reproduce los totales de
# arriba (una calibración, no una cifra de la literatura). Se cuenta cada ficha
# separada por espacios, fórmulas incluidas: una fórmula densa pesa varias
# palabras.
WORDS_PER_MINUTE = 150
# Cada celda de código que no es de un ejercicio: leerla, ejecutarla y mirar
# lo que imprime o dibuja. Las hay de una línea y de cuarenta; medio minuto es
# la media que, con la lectura, da los totales de arriba.
MINUTES_PER_CODE_CELL = 0.5
# La lectura se redondea a 5 minutos y el total a medias horas: más precisión
# sería inventada.
READING_ROUND = 5
TOTAL_ROUND = 30

# El título de un ejercicio calificado y su línea de nivel y tiempo.
EXERCISE_HEADING = re.compile(r"^### (?:Ejercicio \d+|Pregunta escrita) · ", re.M)
TIME_LINE = re.compile(
    r"^\*\*Nivel:\*\* (?P<level>calentamiento|intermedio|reto) · "
    r"\*\*Tiempo:\*\* unos (?P<minutes>\d+) minutos$",
    re.M,
)
# El párrafo de la presentación que escribe esta herramienta, hasta la línea
# en blanco.
ESTIMATE_LINE = re.compile(r"^\*\*Tiempo estimado:\*\*.*?(?=\n\n)", re.M | re.S)
# Secciones que no se estudian: la bibliografía y la tabla del glosario se
# consultan, y «Antes de entregar» es una lista de pasos.
SKIMMED = re.compile(
    r"^## (?:\d+\. )?(?:Bibliografía|Glosario|Antes de entregar)", re.M
)


@dataclass(frozen=True)
class Exercise:
    title: str
    level: str | None
    minutes: int | None


@dataclass(frozen=True)
class StudyTime:
    module_id: str
    exercises: tuple[Exercise, ...]
    words: int
    code_cells: int
    run_seconds: float

    @property
    def exercise_minutes(self) -> int:
        return sum(ex.minutes or 0 for ex in self.exercises)

    @property
    def raw_reading_minutes(self) -> float:
        return (
            self.words / WORDS_PER_MINUTE
            + self.code_cells * MINUTES_PER_CODE_CELL
            + self.run_seconds / 60
        )

    @property
    def reading_minutes(self) -> int:
        """La lectura y las celdas, redondeada a ``READING_ROUND`` minutos."""
        return READING_ROUND * _round_half_up(self.raw_reading_minutes / READING_ROUND)

    @property
    def total_minutes(self) -> int:
        """El total redondeado a medias horas (nunca por debajo de media hora)."""
        raw = self.exercise_minutes + self.reading_minutes
        return max(TOTAL_ROUND, TOTAL_ROUND * _round_half_up(raw / TOTAL_ROUND))

    def line(self) -> str:
        """La línea «**Tiempo estimado:**» de la presentación."""
        total = hours(self.total_minutes)
        about = "una hora" if total == "1 hora" else f"unas {total}"
        return (
            f"**Tiempo estimado:** {about}: "
            f"{self.exercise_minutes} minutos de ejercicios y unos "
            f"{self.reading_minutes} de lectura y celdas."
        )


def _round_half_up(value: float) -> int:
    """Redondeo escolar (3,5 → 4), no el del banquero de ``round`` (2,5 → 2)."""
    return math.floor(value + 0.5)


def hours(minutes: int) -> str:
    """«2 horas», «2,5 horas», «1,5 horas» (coma decimal)."""
    value = minutes / 60
    text = f"{value:g}".replace(".", ",")
    return f"{text} hora" if value == 1 else f"{text} horas"


def _words(markdown: str) -> int:
    return len(markdown.split())


def run_seconds(module_id: str) -> float:
    """Lo que tardó el cuaderno en ejecutarse en el banco, o 0 si no se midió."""
    if not BENCHMARKS.exists():
        return 0.0
    data = json.loads(BENCHMARKS.read_text(encoding="utf-8"))
    for row in data.get("notebooks", []):
        if row.get("module") == module_id:
            return float(row["seconds"])
    return 0.0


def _is_graded(cell) -> bool:
    return bool(cell.metadata.get("nbgrader", {}))


def exercise_spans(cells) -> list[tuple[int, int]]:
    """Dónde está cada ejercicio: de la celda de su título a su última celda
    calificada (o de solución) antes del título siguiente, sea de ejercicio o de
    sección. La prosa entre sus celdas (cómo probarlo, una cuenta a mano) es
    suya; la demostración que viene después de la última celda calificada, no.
    """
    starts = [
        i
        for i, cell in enumerate(cells)
        if cell.cell_type == "markdown"
        and not _is_graded(cell)
        and EXERCISE_HEADING.search(cell.source)
    ]
    spans = []
    for start in starts:
        end = start
        for i in range(start + 1, len(cells)):
            cell = cells[i]
            if i in starts or (
                cell.cell_type == "markdown"
                and not _is_graded(cell)
                and re.match(r"^##? ", cell.source)
            ):
                break
            if _is_graded(cell):
                end = i
        spans.append((start, end))
    return spans


def compute(text: str, module_id: str) -> StudyTime:
    """La cuenta del módulo a partir de su texto MyST."""
    cells = jupytext.reads(text, fmt="md:myst").cells
    spans = exercise_spans(cells)
    in_exercise = {i for start, end in spans for i in range(start, end + 1)}
    exercises = []
    for start, _ in spans:
        source = cells[start].source
        title = EXERCISE_HEADING.split(source, 1)[1].split("\n", 1)[0].strip()
        times = TIME_LINE.findall(source)
        level, minutes = times[0] if len(times) == 1 else (None, None)
        exercises.append(Exercise(title, level, int(minutes) if minutes else None))
    words = code_cells = 0
    skimmed = False
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown" and re.match(r"^## ", cell.source):
            skimmed = bool(SKIMMED.match(cell.source))
        if i in in_exercise or skimmed:
            continue
        if cell.cell_type == "markdown":
            # Sin la propia línea del tiempo: no se cuenta a sí misma.
            words += _words(ESTIMATE_LINE.sub("", cell.source))
        elif cell.cell_type == "code":
            code_cells += 1
    return StudyTime(
        module_id, tuple(exercises), words, code_cells, run_seconds(module_id)
    )


def with_estimate(text: str, module_id: str) -> str:
    """El texto con su línea «**Tiempo estimado:**» calculada."""
    matches = list(ESTIMATE_LINE.finditer(text))
    if len(matches) != 1:
        raise ValueError(f"{module_id}: hace falta una sola línea «Tiempo estimado»")
    study = compute(text, module_id)
    missing = [ex.title for ex in study.exercises if ex.minutes is None]
    if missing:
        raise ValueError(
            f"{module_id}: ejercicios sin su línea «**Nivel:** … · **Tiempo:** "
            f"unos N minutos»: {missing}"
        )
    match = matches[0]
    return text[: match.start()] + study.line() + text[match.end() :]


def module_ids() -> list[str]:
    """Los módulos con texto MyST: los que llevan «Tiempo estimado»."""
    return all_modules(text=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.study_time",
        description="Escribe el «Tiempo estimado» de cada cuaderno.",
    )
    parser.add_argument("--check", action="store_true", help="solo comprobar")
    parser.add_argument("--report", action="store_true", help="la cuenta por módulo")
    parser.add_argument(
        "modules",
        nargs="*",
        metavar="MODULO",
        help="solo estos módulos (p. ej. 09_puente); por defecto, todos",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.modules) - set(module_ids()))
    if unknown:
        parser.error(f"no hay módulos {', '.join(unknown)}")
    chosen = [m for m in module_ids() if m in args.modules] if args.modules else None
    if args.report:
        for module_id in chosen or module_ids():
            s = compute(text_path(module_id).read_text(encoding="utf-8"), module_id)
            print(
                f"{module_id}: ejercicios {s.exercise_minutes} min "
                f"({', '.join(str(e.minutes) for e in s.exercises)}); "
                f"{s.words} palabras, {s.code_cells} celdas, "
                f"{s.run_seconds:.0f} s → lectura {s.raw_reading_minutes:.0f} "
                f"≈ {s.reading_minutes} min; total {s.total_minutes / 60:g} h"
            )
        return 0
    failed = generated.rewrite(
        chosen or module_ids(),
        with_estimate,
        check=args.check,
        stale="el «Tiempo estimado» no es el calculado",
        rewritten="«Tiempo estimado» reescrito",
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
