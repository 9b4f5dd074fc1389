"""Ni la respuesta de referencia ni las comprobaciones trucadas dan puntos.

Una clase de 01_bandidos con entregas honestas y tramposas se califica de
verdad (``python -m autograder grade``): las que responden con la
implementación de referencia de ``helpers`` pierden ese ejercicio y quedan en
«revisar» con un motivo que nombra la celda y la construcción; las que tocan
las comprobaciones, ``builtins`` o IPython no ganan ni un punto más que sus
respuestas; las honestas sacan exactamente su nota. Además, la lectura del
código no acusa a nadie de los bancos de respuestas ni de las demos del curso.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from autograder.course import cell_titles, exercise_cells
from autograder.integrity import (
    COPY_MIN_TOKENS,
    inspect_submission,
)
from autograder.similarity import normalize, size
from autograder.sources import HIDDEN_REGION
from tests.banks import bank, wholly_wrong
from tests.notebooks import (
    course_path,
    exercises,
    fill_solutions,
    honest_answers,
    module_ids,
    nbgrader,
    read,
    solution_path,
    student_version,
)

MODULE = "01_bandidos"


# ---------------------------------------------------------------------------
# La lectura del código, sin ejecutar nada
# ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("module_id", module_ids())
def test_no_honest_answer_or_course_demo_is_flagged(module_id):
    source = read(solution_path(module_id))
    released = read(course_path(module_id))
    module_exercises = exercise_cells(source)
    # Las demos del curso (celdas libres) y las respuestas honestas juntas.
    assert (
        inspect_submission(
            fill_solutions(released, honest_answers(module_id)), module_exercises
        )
        == []
    )
    answers = bank(module_id)
    for grade_id, group in [*answers.RIGHT.items(), *answers.WRONG.items()]:
        for answer in group:
            nb = fill_solutions(released, {grade_id: answer.source})
            findings = inspect_submission(nb, module_exercises)
            assert findings == [], (grade_id, answer.name, findings)


def _findings(answers: dict[str, str], extra: str | None = None):
    source = read(solution_path(MODULE))
    nb = fill_solutions(read(course_path(MODULE)), answers)
    if extra is not None:
        nb.cells.insert(3, new_code_cell(extra))
    return inspect_submission(nb, exercise_cells(source))


DELEGATIONS = {
    "import": "from helpers.bandits import softmax",
    "import con alias": "from helpers.bandits import softmax as s\nsoftmax = s",
    "módulo con alias": "import helpers.bandits as hb\nsoftmax = hb.softmax",
    "atributo": "def softmax(h):\n    return helpers.bandits.softmax(h)",
    "nombre de la preparación": "def softmax(h):\n    return bandits.softmax(h)",
    "getattr": "softmax = getattr(bandits, 'softmax')",
    "import *": "from helpers.bandits import *",
    "lambda": "softmax = lambda h: helpers.bandits.softmax(h)",
}


@pytest.mark.parametrize("construct", DELEGATIONS)
def test_delegation_is_read_in_the_exercise_cell(construct):
    findings = _findings({**honest_answers(MODULE), "softmax": DELEGATIONS[construct]})
    kinds = {f.kind for f in findings}
    assert "referencia" in kinds, findings
    flagged = [f for f in findings if f.kind == "referencia"]
    assert flagged[0].grade_ids == ["softmax_test"]
    assert "Ejercicio 5" in flagged[0].message and "softmax" in flagged[0].message


def test_a_long_copy_of_the_published_solution_is_a_delegation():
    source = read(solution_path(MODULE))
    long_ones = [
        ex
        for ex in exercises(source)
        if size(normalize(student_version(ex.solution))) >= COPY_MIN_TOKENS
    ]
    assert long_ones, "01 debería tener algún ejercicio largo"
    copied = student_version(long_ones[0].solution)
    # Con otros nombres y sin comentarios sigue siendo la misma.
    copied = re.sub(r"#[^\n]*", "", copied).replace("counts", "n_pulls")
    findings = _findings({**honest_answers(MODULE), long_ones[0].grade_id: copied})
    assert [f.kind for f in findings] == ["referencia"], findings
    assert "idéntico a la solución publicada" in findings[0].message


TAMPERING = {
    "setattr en las comprobaciones": (
        "import helpers.checks.bandits as cb\n"
        "setattr(cb, 'check_softmax', lambda *a, **k: None)"
    ),
    "asignación en builtins": "import builtins\nbuiltins.abs = lambda x: 0",
    "__builtins__": "__builtins__.abs = lambda x: 0",
    "sys.modules": "import sys\nsys.modules['helpers.checks.bandits'] = None",
    "meta_path": "import sys\nsys.meta_path.insert(0, object())",
    "numpy": "np.allclose = lambda *a, **k: True",
    "IPython": "get_ipython().set_custom_exc((Exception,), lambda *a, **k: None)",
    "vars de un módulo": "import helpers.checks\nvars(helpers.checks)['fail'] = print",
    "__dict__": "helpers.checks.__dict__.update(fail=print)",
}


@pytest.mark.parametrize("construct", TAMPERING)
def test_tampering_is_read_in_any_cell(construct):
    findings = _findings(honest_answers(MODULE), extra=TAMPERING[construct])
    assert any(f.kind == "manipulación" for f in findings), findings


def test_titles_name_exercises_not_cells():
    titles = cell_titles(read(solution_path(MODULE)))
    assert titles["softmax_test"] == "Ejercicio 5 · Softmax estable"
    grpo = cell_titles(read(solution_path("07_grpo")))
    tests = [t for g, t in grpo.items() if g.startswith("group_advantages_")]
    assert all("Ejercicio 4" in t and "prueba" in t for t in tests), tests


# ---------------------------------------------------------------------------
# Una clase calificada de verdad
# ---------------------------------------------------------------------------

PATCH_CHECKS = (
    "import helpers.checks.bandits as cb\n"
    "for name in dir(cb):\n"
    "    if name.startswith('check_'):\n"
    "        setattr(cb, name, lambda *a, **k: None)"
)
# La misma trampa, escrita para que la lectura del código no la vea: solo la
# protección en ejecución (comprobaciones recién importadas) la detiene.
PATCH_CHECKS_HIDDEN = (
    "m = [v for k, v in list(__import__('sy' + 's').modules.items())\n"
    "     if k == 'helpers.checks.bandits'][0]\n"
    "for name in [n for n in m.__dir__() if n.startswith('check_')]:\n"
    "    m.__setattr__(name, lambda *a, **k: None)"
)
SWALLOW = "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)"
BLANK_TESTS = (
    "get_ipython().input_transformers_cleanup.append("
    "lambda lines: [l for l in lines if 'check' not in l and 'assert' not in l])"
)


def class_submissions(subs, out):
    """Las entregas de este archivo en la clase común (tests/graded_class.py)."""
    source = read(solution_path(MODULE))
    released = read(course_path(MODULE))
    module_exercises = exercises(source)
    honest = honest_answers(MODULE)
    wrong = {
        ex.grade_id: wholly_wrong(bank(MODULE).WRONG[ex.grade_id]).source
        for ex in module_exercises
    }
    reference = {ex.grade_id: student_version(ex.solution) for ex in module_exercises}
    before_tests = next(
        i for i, c in enumerate(released.cells) if nbgrader(c).get("grade")
    )

    def with_cell(nb, code, index=3):
        nb = nbformat.from_dict(nb)
        nb.cells.insert(index, new_code_cell(code))
        return nb

    last_solution = max(
        i for i, c in enumerate(released.cells) if nbgrader(c).get("solution")
    )
    star = fill_solutions(released, honest)
    star.cells.insert(last_solution + 1, new_code_cell("from helpers.bandits import *"))
    notebooks = {
        "honesta": fill_solutions(released, honest),
        "copia": fill_solutions(released, reference),
        "importa": fill_solutions(
            released, {**honest, "softmax": "from helpers.bandits import softmax"}
        ),
        "envuelve": fill_solutions(
            released,
            {**honest, "softmax": "def softmax(h):\n    return bandits.softmax(h)"},
        ),
        "oculta": fill_solutions(
            released,
            {
                **honest,
                "softmax": "softmax = vars(__import__('helpers.bandits').bandits)"
                "['soft' + 'max']",
            },
        ),
        "estrella": star,
        "parchea": with_cell(fill_solutions(released, wrong), PATCH_CHECKS),
        "parchea_oculto": with_cell(
            fill_solutions(released, wrong), PATCH_CHECKS_HIDDEN
        ),
        "builtins": with_cell(
            fill_solutions(released, wrong),
            "import builtins\nbuiltins.abs = lambda x: 0",
        ),
        "traga": with_cell(fill_solutions(released, wrong), SWALLOW),
        "borra_pruebas": with_cell(fill_solutions(released, wrong), BLANK_TESTS),
        "equivocada": fill_solutions(released, wrong),
    }
    assert before_tests > 3
    return notebooks


@pytest.fixture(scope="module")
def graded(graded_class):
    module_exercises = exercises(read(solution_path(MODULE)))
    points = {g: p for ex in module_exercises for g, _, p in ex.tests}
    return {
        "rows": graded_class.rows,
        "out": graded_class.out,
        "points": points,
        "max": sum(points.values()),
    }


def _score(graded, student):
    return float(graded["rows"][student]["score"])


@pytest.mark.grading
def test_honest_submission_scores_everything(graded):
    row = graded["rows"]["honesta"]
    assert _score(graded, "honesta") == graded["max"]
    assert row["status"] == "ok" and row["reason"] == "" and row["incidents"] == ""


@pytest.mark.grading
def test_wrong_answers_score_nothing_with_or_without_tricks(graded):
    assert _score(graded, "equivocada") == 0
    for student in ("parchea", "parchea_oculto", "builtins", "traga", "borra_pruebas"):
        assert _score(graded, student) == 0, student
    for student in ("parchea", "builtins", "traga", "borra_pruebas"):
        assert graded["rows"][student]["status"] == "revisar", student
    assert "setattr" in graded["rows"]["parchea"]["reason"]
    assert "get_ipython" in graded["rows"]["traga"]["reason"]


@pytest.mark.grading
@pytest.mark.parametrize("student", ["importa", "envuelve", "oculta"])
def test_delegated_exercise_scores_zero_and_is_named(graded, student):
    row = graded["rows"][student]
    assert row["softmax_test"] == "0"
    assert _score(graded, student) == graded["max"] - graded["points"]["softmax_test"]
    assert row["status"] == "revisar"
    assert "Softmax" in row["reason"] or "softmax" in row["reason"]


@pytest.mark.grading
def test_a_star_import_after_the_answers_is_caught_when_the_tests_run(graded):
    # Pisa las respuestas con las referencias justo antes de la última prueba:
    # la lectura del código no lo ve (no es una celda de ejercicio), la
    # ejecución sí.
    row = graded["rows"]["estrella"]
    last = "gradient_bandit_train_test"
    assert row[last] == "0"
    assert _score(graded, "estrella") == graded["max"] - graded["points"][last]
    assert row["status"] == "revisar"
    assert "referencia" in row["reason"]


@pytest.mark.grading
def test_copying_the_published_solution_loses_the_long_exercises(graded):
    row = graded["rows"]["copia"]
    assert row["status"] == "revisar"
    assert "idéntico a la solución publicada" in row["reason"]
    assert 0 < _score(graded, "copia") < graded["max"]


@pytest.mark.grading
def test_feedback_keeps_hidden_tests_private(graded):
    feedback = (graded["out"] / "feedback" / "honesta.html").read_text(encoding="utf-8")
    source = read(solution_path(MODULE))
    hidden = [
        line.strip()
        for cell in source.cells
        if nbgrader(cell).get("grade")
        for region in HIDDEN_REGION.findall(cell.source)
        for line in region.splitlines()
        if len(line.strip()) > 20
        and line.strip() not in HIDDEN_REGION.sub("", cell.source)
    ]
    assert hidden
    for line in hidden:
        assert line not in feedback, line
    assert "Ejercicio 5 · Softmax estable" in feedback
    assert "Celda de pruebas" not in feedback
    # Las fórmulas van en MathML: nada que descargar.
    assert "<math" in feedback and "mathjax" not in feedback.lower()
    assert not re.search(r"""(src|href)=["']https?://""", feedback)


@pytest.mark.grading
def test_report_lists_revisions_and_similarity(graded):
    report = (graded["out"] / "report.html").read_text(encoding="utf-8")
    for student in ("importa", "parchea", "traga"):
        assert f"<td>{student}</td><td>revisar</td>" in report
    assert "Parecidos entre entregas" in report
    assert "Ejercicio 5 · Softmax estable" in report
