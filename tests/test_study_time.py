"""El tiempo de estudio: cada ejercicio dice el suyo, y el «Tiempo estimado» de
cada módulo es el que calcula tools/study_time.py (la suma de los ejercicios
más la lectura y las celdas del cuaderno)."""

from __future__ import annotations

import re

import jupytext
import pytest

from autograder.course import text_path
from tests.notebooks import module_ids
from tools import study_time


def _text(module_id: str) -> str:
    return text_path(module_id).read_text(encoding="utf-8")


@pytest.mark.parametrize("module_id", module_ids())
def test_every_exercise_states_its_time(module_id):
    study = study_time.compute(_text(module_id), module_id)
    assert study.exercises, f"{module_id}: ningún ejercicio"
    for ex in study.exercises:
        assert ex.minutes, (
            f"{module_id}, «{ex.title}»: falta, bajo el título, una sola línea "
            "«**Nivel:** … · **Tiempo:** unos N minutos»"
        )
        assert ex.minutes % 5 == 0 and 5 <= ex.minutes <= 90, (module_id, ex)


@pytest.mark.parametrize("module_id", module_ids())
def test_every_graded_cell_belongs_to_a_timed_exercise(module_id):
    """Nada calificado queda fuera de un ejercicio con título (y, por lo tanto,
    sin tiempo), y ningún ejercicio se queda sin celdas calificadas."""
    cells = jupytext.reads(_text(module_id), fmt="md:myst").cells
    spans = study_time.exercise_spans(cells)
    inside = {i for start, end in spans for i in range(start, end + 1)}
    for i, cell in enumerate(cells):
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") or meta.get("solution"):
            assert i in inside, (
                f"{module_id}: la celda calificada «{meta.get('grade_id')}» no está "
                "bajo un «### Ejercicio N · …» (o «### Pregunta escrita · …») "
                "con su tiempo"
            )
    assert all(end > start for start, end in spans), f"{module_id}: ejercicio vacío"


@pytest.mark.parametrize("module_id", module_ids())
def test_stated_total_is_the_computed_one(module_id):
    text = _text(module_id)
    study = study_time.compute(text, module_id)
    lines = re.findall(r"^\*\*Tiempo estimado:\*\*.*$", text, re.M)
    assert len(lines) == 1, f"{module_id}: una sola línea «Tiempo estimado»"
    stated = re.fullmatch(
        r"\*\*Tiempo estimado:\*\* (?:unas (?P<hours>[\d,]+) horas|una hora): "
        r"(?P<exercises>\d+) minutos de ejercicios y unos (?P<reading>\d+) "
        r"de lectura y celdas\.",
        lines[0],
    )
    assert stated, f"{module_id}: «{lines[0]}» no tiene la forma de tools/study_time"
    hint = "ejecuta `make notebooks` (tools/study_time.py escribe esta línea)"
    # Los minutos de ejercicios son la suma exacta de los de cada ejercicio.
    assert int(stated["exercises"]) == sum(ex.minutes for ex in study.exercises), (
        f"{module_id}: los minutos de ejercicios no suman los de sus ejercicios; "
        + hint
    )
    assert int(stated["reading"]) == study.reading_minutes, f"{module_id}: {hint}"
    hours = float((stated["hours"] or "1").replace(",", "."))
    assert hours * 60 == study.total_minutes, f"{module_id}: {hint}"
    # El total redondeado está a menos de un cuarto de hora de la suma.
    assert abs(hours * 60 - int(stated["exercises"]) - int(stated["reading"])) <= 15
    assert study_time.with_estimate(text, module_id) == text, f"{module_id}: {hint}"


def test_editing_one_exercise_time_is_caught():
    """Cambiar un solo tiempo sin `make notebooks` deja la línea desfasada."""
    module_id = module_ids()[0]
    text = _text(module_id)
    edited = study_time.TIME_LINE.sub(
        lambda m: m.group(0).replace(m["minutes"], str(int(m["minutes"]) + 5)),
        text,
        count=1,
    )
    assert edited != text
    assert study_time.with_estimate(edited, module_id) != edited


def test_rounding_and_wording():
    assert study_time.hours(60) == "1 hora"
    assert study_time.hours(150) == "2,5 horas"


def test_one_hour_reads_una_hora():
    exercise = study_time.Exercise("e", "fácil", 50)
    study = study_time.StudyTime("11_x", (exercise,), 0, 0, 0.0)
    assert study.total_minutes == 60
    assert study.line().startswith("**Tiempo estimado:** una hora: 50 minutos")
