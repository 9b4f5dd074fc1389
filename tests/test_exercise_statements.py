"""Los enunciados de los ejercicios prometen lo que se califica.

Cada ejercicio empieza con un encabezado «### Ejercicio N · Título (P puntos)»
y, justo debajo, su nivel y una estimación de tiempo. P es la suma de los
puntos de sus celdas calificadas (una por aspecto: el crédito parcial), los
puntos siguen al nivel, los números van seguidos y ninguna pista regala una
línea de la solución.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from tests.notebooks import (
    SOLUTION_REGION,
    exercises,
    module_ids,
    nbgrader,
    read,
    solution_path,
)

HEADING = re.compile(
    r"^### Ejercicio (?P<number>\d+) · (?P<title>.+) "
    r"\((?P<points>\d+(?:,\d+)?) puntos?\)\s*$"
)
LEVEL = re.compile(
    r"^\*\*Nivel:\*\* (?P<level>calentamiento|intermedio|reto) · "
    r"\*\*Tiempo:\*\* unos \d+ minutos$"
)
#: Los puntos que corresponden a cada nivel (incluidos los extremos).
POINTS_BY_LEVEL = {"calentamiento": (1, 2), "intermedio": (2, 4), "reto": (4, 8)}
#: Una línea de solución más corta que esto puede coincidir sin regalar nada.
MIN_GIVEN_LINE = 24


@dataclass
class Statement:
    number: int
    title: str
    points: float
    level_line: str
    text: list[str] = field(default_factory=list)
    graded: float = 0.0
    solutions: list[str] = field(default_factory=list)


def statements(module_id: str) -> list[Statement]:
    found: list[Statement] = []
    current: Statement | None = None
    for cell in read(solution_path(module_id)).cells:
        if cell.cell_type == "markdown":
            first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
            match = HEADING.match(first)
            if match:
                body = [line for line in cell.source.splitlines()[1:] if line.strip()]
                current = Statement(
                    number=int(match["number"]),
                    title=match["title"],
                    points=float(match["points"].replace(",", ".")),
                    level_line=body[0] if body else "",
                )
                found.append(current)
            elif first.startswith(("## ", "### ")):
                current = None
        if current is None:
            continue
        meta = nbgrader(cell)
        if meta.get("grade"):
            current.graded += meta.get("points", 0)
        if cell.cell_type == "markdown" and not meta:
            current.text.append(cell.source)
        if cell.cell_type == "code" and meta.get("solution") and not meta.get("grade"):
            current.solutions.append(cell.source)
    return found


@pytest.mark.parametrize("module_id", module_ids())
def test_each_statement_shows_level_time_and_its_real_points(module_id):
    found = statements(module_id)
    assert found, f"{module_id} no tiene ejercicios con encabezado"
    assert [s.number for s in found] == list(range(1, len(found) + 1)), (
        "los ejercicios deben ir numerados 1, 2, 3… sin saltos"
    )
    for s in found:
        level = LEVEL.match(s.level_line)
        assert level, (
            f"Ejercicio {s.number}: la primera línea debe ser "
            f"«**Nivel:** … · **Tiempo:** unos N minutos» y es {s.level_line!r}"
        )
        assert s.graded == s.points, (
            f"Ejercicio {s.number} dice {s.points:g} puntos y sus celdas "
            f"calificadas suman {s.graded:g}"
        )
        low, high = POINTS_BY_LEVEL[level["level"]]
        assert low <= s.points <= high, (
            f"Ejercicio {s.number} ({level['level']}) vale {s.points:g}; "
            f"ese nivel va de {low} a {high} puntos"
        )


def _normalized(line: str) -> str:
    return re.sub(r"\s+", "", line.strip().strip("`"))


@pytest.mark.parametrize("module_id", module_ids())
def test_no_statement_gives_away_a_solution_line(module_id):
    for s in statements(module_id):
        prose = _normalized("\n".join(s.text))
        for source in s.solutions:
            region = SOLUTION_REGION.search(source)
            if not region:
                continue
            for line in region.group(0).splitlines():
                code = _normalized(line.split("#")[0])
                if len(code) < MIN_GIVEN_LINE or code.startswith("###"):
                    continue
                assert code not in prose, (
                    f"Ejercicio {s.number}: el enunciado trae la línea de la "
                    f"solución «{line.strip()}»; la pista debe apuntar a la idea"
                )


@pytest.mark.parametrize("module_id", module_ids())
def test_progress_has_one_line_per_exercise_in_notebook_order(module_id):
    # Las comprobaciones de las celdas de un mismo ejercicio (una por aspecto)
    # comparten su clave: el resumen de progreso dice «ejercicio 3», no
    # «comprobación 7», y un ejercicio pasa solo si pasan todas.
    from helpers.checks import exercises as registered

    keys = [ex.key for ex in registered(module_id)]
    wanted = [ex.grade_id for ex in exercises(read(solution_path(module_id)))]
    assert keys == wanted


#: «cualquier valor», «cualquier cosa»: lo que un enunciado dice que puede haber
#: en el relleno.
ANY_PADDING = re.compile(r"cualquier (?:valor|cosa)")


@pytest.mark.parametrize("module_id", module_ids())
def test_padding_promises_say_finite(module_id):
    # Las comprobaciones ponen en el relleno valores finitos, y multiplicar por
    # la máscara es una respuesta correcta (la de TRL). Un enunciado que dijera
    # «cualquier valor» prometería también ±∞ o NaN, donde 0 · ∞ = NaN: el
    # enunciado y las pruebas dirían cosas distintas.
    for s in statements(module_id):
        prose = re.sub(r"\s+", " ", "\n".join(s.text))
        for match in ANY_PADDING.finditer(prose):
            around = prose[max(0, match.start() - 240) : match.end() + 60]
            if "relleno" not in around:
                continue
            after = prose[match.end() : match.end() + 40]
            # «cualquier cosa, también nan o inf»: las pruebas sí lo usan
            if re.search(r"\bnan\b|\binf\b", after):
                continue
            assert "finit" in after, (
                f"Ejercicio {s.number}: «…{prose[match.start() : match.end() + 40]}…»"
                " promete cualquier valor en el relleno; las pruebas usan valores "
                "finitos: di «cualquier valor finito»"
            )


def test_exercise_titles_for_the_checks_are_current():
    # Las comprobaciones nombran cada ejercicio con su encabezado del
    # cuaderno, leído de helpers/data/exercise_titles.json: al día con
    # solutions/ (make notebooks lo reescribe).
    from helpers.checks import TITLES
    from tools import exercise_titles

    assert TITLES.read_text(encoding="utf-8") == exercise_titles.render(), (
        "helpers/data/exercise_titles.json no está al día: make notebooks"
    )


@pytest.mark.parametrize("module_id", module_ids())
def test_every_check_names_an_exercise_of_its_notebook(module_id):
    from helpers import checks

    titles = checks._titles()[module_id]
    registered = checks.exercises(module_id)
    assert registered, f"{module_id} no registra comprobaciones"
    unknown = [ex.key for ex in registered if ex.key not in titles]
    assert not unknown, f"claves sin ejercicio en el cuaderno: {unknown}"
    assert [ex.title for ex in registered] == [titles[ex.key] for ex in registered]
    assert [ex.key for ex in registered] == [
        k for k in titles if k in {ex.key for ex in registered}
    ]
