"""Las comprobaciones contra el banco de respuestas de cada ejercicio.

Cada respuesta errónea debe fallar en todas las celdas de prueba de su
ejercicio (visibles y ocultas) con el diagnóstico pensado para ese error; cada
respuesta correcta escrita de otra manera, y la propia solución, deben pasar
sin escribir nada en stderr.
"""

from __future__ import annotations

import pytest

from tests.banks import bank
from tests.notebooks import exercises, module_ids, read, run_exercise, solution_path


def _cases(kind: str) -> list:
    cases = []
    for module_id in module_ids():
        nb = read(solution_path(module_id))
        module_bank = bank(module_id)
        answers = getattr(module_bank, kind) if module_bank else {}
        for exercise in exercises(nb):
            for answer in answers.get(exercise.grade_id, []):
                cases.append(
                    pytest.param(
                        nb,
                        exercise,
                        answer,
                        id=f"{module_id}:{exercise.grade_id}:{answer.name}",
                    )
                )
    return cases


# Los módulos cuyos ejercicios ya tienen un banco con las clases de error de
# todos (entradas modificadas, variantes de la fórmula, gradientes, dtype):
# al menos cuatro respuestas erróneas por ejercicio.
FULL_BANKS = {
    "01_bandidos",
    "02_dqn",
    "03_reinforce",
    "04_lineas_base",
    "05_actor_critico",
    "06_ppo",
    "07_grpo",
    "08_mas_alla",
    "09_puente",
    "10_preferencias",
    "11_practica",
    "12_oraculo",
}


@pytest.mark.parametrize("module_id", module_ids())
def test_every_exercise_has_a_bank(module_id):
    module_bank = bank(module_id)
    assert module_bank, f"{module_id} no tiene banco en tests/banks/"
    minimum = 4 if module_id in FULL_BANKS else 2
    for exercise in exercises(read(solution_path(module_id))):
        assert len(module_bank.WRONG.get(exercise.grade_id, [])) >= minimum, (
            f"{exercise.grade_id}: hacen falta al menos {minimum} errores típicos"
        )
        assert len(module_bank.RIGHT.get(exercise.grade_id, [])) >= 2, (
            f"{exercise.grade_id}: hacen falta al menos dos aciertos alternativos"
        )


@pytest.mark.parametrize("module_id", module_ids())
def test_solutions_pass_quietly(module_id):
    nb = read(solution_path(module_id))
    for exercise in exercises(nb):
        for outcome in run_exercise(nb, exercise, exercise.solution):
            assert outcome.error is None, (exercise.grade_id, outcome.error)
            assert outcome.stderr == "", (exercise.grade_id, outcome.stderr)


@pytest.mark.parametrize(("nb", "exercise", "answer"), _cases("WRONG"))
def test_wrong_answer_is_diagnosed(nb, exercise, answer):
    # Cada celda de pruebas del ejercicio (la visible con sus pruebas ocultas)
    # debe fallar: así los casos elegidos separan cada respuesta del banco de
    # la correcta, también las variantes que coinciden en algunos puntos. En
    # un ejercicio con una celda por aspecto, la respuesta dice cuáles fallan
    # (``fails``) y las demás deben pasar: el crédito parcial es el que toca.
    outcomes = run_exercise(nb, exercise, answer.source)
    test_ids = [outcome.grade_id for outcome in outcomes]
    must_fail = set(answer.fails) if answer.fails is not None else set(test_ids)
    unknown = must_fail - set(test_ids)
    assert not unknown, f"celdas de pruebas que no existen: {sorted(unknown)}"
    for outcome in outcomes:
        assert outcome.stderr == "", outcome.stderr
        if outcome.grade_id in must_fail:
            assert isinstance(outcome.error, AssertionError), (
                f"{outcome.grade_id} debía fallar con un diagnóstico y dio "
                f"{outcome.error!r}"
            )
            # Una prueba oculta dice en castellano qué comprobó: nunca un
            # AssertionError sin mensaje.
            assert str(outcome.error).strip(), (
                f"{outcome.grade_id} falla con un {type(outcome.error).__name__} "
                "sin mensaje"
            )
        else:
            assert outcome.error is None, (
                f"{outcome.grade_id} debía pasar (crédito parcial) y dio "
                f"{outcome.error!r}"
            )
    first_failure = next(o for o in outcomes if o.grade_id in must_fail)
    visible = str(first_failure.error)
    diagnosed = getattr(first_failure.error, "mistake", None)
    assert diagnosed == answer.mistake, (
        f"se esperaba el error típico {answer.mistake!r} y se diagnosticó "
        f"{diagnosed!r}: {visible}"
    )


@pytest.mark.parametrize(("nb", "exercise", "answer"), _cases("RIGHT"))
def test_right_answer_passes(nb, exercise, answer):
    for outcome in run_exercise(nb, exercise, answer.source):
        assert outcome.error is None, f"{outcome.grade_id}: {outcome.error}"
        assert outcome.stderr == "", outcome.stderr


# Errores que antes solo cazaban las pruebas ocultas (el estudiante no recibía
# ningún aviso) o que se escapaban: la comprobación visible del cuaderno debe
# fallar ya, con su diagnóstico.
VISIBLE_WARNINGS = [
    ("02_dqn", "q_learning_episode", "no guarda lo que devuelve q_learning_update"),
    (
        "03_reinforce",
        "sample_action",
        "«<» en lugar de «≤»: la acción cuya acumulada vale justo u",
    ),
    (
        "03_reinforce",
        "sample_action",
        "sin la última acción de respaldo (float32 por debajo de u)",
    ),
    ("03_reinforce", "sample_action", "log(softmax) en lugar de log_softmax"),
    ("06_ppo", "ppo_update", "la KL con los argumentos cambiados"),
    ("07_grpo", "verify", "corta en text.find('.') sin mirar si hay punto"),
    ("07_grpo", "verify", "isdigit() acepta «²» y int() lanza"),
    ("07_grpo", "verify", "exige que el texto acabe en punto (lo de detrás sí cuenta)"),
    ("07_grpo", "grpo_update", "devuelve un tensor de 0 dimensiones, no un float"),
    ("08_mas_alla", "estimate_pass_at_k", "atajo pass@k = 1 también con n − c = k"),
    ("01_bandidos", "gradient_bandit_train", "devuelve π en lugar de las preferencias"),
]


@pytest.mark.parametrize(("module_id", "grade_id", "name"), VISIBLE_WARNINGS)
def test_visible_check_warns(module_id, grade_id, name):
    nb = read(solution_path(module_id))
    exercise = next(ex for ex in exercises(nb) if ex.grade_id == grade_id)
    answer = next(a for a in bank(module_id).WRONG[grade_id] if a.name == name)
    outcomes = run_exercise(nb, exercise, answer.source, visible_only=True)
    failed = [o for o in outcomes if isinstance(o.error, AssertionError)]
    assert failed, f"{name}: la comprobación visible no avisa"
    diagnosed = getattr(failed[0].error, "mistake", None)
    assert diagnosed == answer.mistake, str(failed[0].error)
