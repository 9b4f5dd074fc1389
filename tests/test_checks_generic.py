"""Las protecciones comunes de ``helpers.checks``, que valen para todos los
ejercicios: entradas modificadas, un ejercicio calificado sin depender de
otro, mensajes que dicen dónde difiere el resultado, síntomas, mensajes
cortos y sin Markdown, la traza escondida en Jupyter, la demo que sigue con la
referencia y el aviso de cambios sin guardar.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from helpers import selfcheck
from helpers.checks import (
    MAX_MESSAGE,
    CheckError,
    Mistake,
    call,
    check_cases,
    demo_functions,
    describe_difference,
    exercise,
    fail,
    plain_text,
    python_number,
)

# ---------------------------------------------------------------------------
# Entradas modificadas
# ---------------------------------------------------------------------------


def _add_in_place(values, amount):
    values += amount
    return values


@pytest.mark.parametrize(
    "values",
    [np.array([1.0, 2.0]), torch.tensor([1.0, 2.0])],
    ids=["numpy", "torch"],
)
def test_call_names_the_argument_that_was_modified(values):
    with pytest.raises(CheckError, match="modificó su argumento «values»"):
        call(_add_in_place, "add", values, 1.0)
    assert values.tolist() == [1.0, 2.0], "el original no debe cambiar"


def test_call_catches_lists_and_dicts():
    def append(items):
        items.append(3)
        return len(items)

    def pop(table):
        table.pop("a")
        return 0

    with pytest.raises(CheckError, match="«items»"):
        call(append, "append", [1, 2])
    with pytest.raises(CheckError, match="«table»"):
        call(pop, "pop", {"a": 1})


def test_call_allows_what_the_statement_allows():
    assert call(_add_in_place, "add", np.zeros(2), 1.0, may_modify=(0,)).tolist() == [
        1.0,
        1.0,
    ]


def test_call_shares_random_generators():
    rng = np.random.default_rng(0)
    first = call(lambda r: r.random(), "draw", rng)
    second = call(lambda r: r.random(), "draw", rng)
    assert first != second, "el generador del que llama debe avanzar"


def test_check_cases_gives_everyone_the_same_random_state():
    def draw(x, rng):
        return x + rng.random()

    check_cases(
        lambda x, rng: x + rng.random(),
        "draw",
        [(1.0, np.random.default_rng(3)), (2.0, np.random.default_rng(4))],
        draw,
    )


def test_check_cases_fails_on_in_place_answers_with_the_right_value():
    def double(x):
        x *= 2
        return x

    with pytest.raises(CheckError, match="«x»"):
        check_cases(double, "double", [(np.array([1.0, 2.0]),)], lambda x: 2 * x)


# ---------------------------------------------------------------------------
# Sin doble penalización
# ---------------------------------------------------------------------------


def _reference_square(x):
    return x * x


@exercise(
    "test_generic",
    "sum_squares",
    "Suma de cuadrados",
    uses={"square": _reference_square},
)
def _check_sum_squares(function):
    check_cases(
        function, "sum_squares", [(np.array([1.0, 2.0]),)], lambda v: (v * v).sum()
    )


def test_exercise_grades_with_the_reference_of_the_other_exercise():
    namespace: dict = {}
    exec(  # noqa: S102 - un «cuaderno» con un square mal hecho
        "def square(x):\n    return 2 * x\n"
        "def sum_squares(v):\n    return square(v).sum()\n",
        namespace,
    )
    _check_sum_squares(namespace["sum_squares"], quiet=True)
    assert namespace["square"](3) == 6, "al terminar vuelve la función del estudiante"


def test_injected_names_are_removed_if_they_did_not_exist():
    namespace: dict = {}
    exec("def sum_squares(v):\n    return square(v).sum()\n", namespace)  # noqa: S102
    _check_sum_squares(namespace["sum_squares"], quiet=True)
    assert "square" not in namespace


def _reference_add_one_in_place(table):
    """Una referencia que modifica su entrada y además la devuelve."""
    table += 1.0
    return table


@exercise(
    "test_generic",
    "add_twice",
    "Sumar dos veces",
    uses={"add_one": _reference_add_one_in_place},
)
def _check_add_twice(function):
    check_cases(function, "add_twice", [(np.zeros(3),)], lambda t: t + 2.0)


def test_a_substituted_reference_does_not_hide_an_ignored_result():
    # Con la referencia que modifica en su sitio, quien no guarda lo que
    # devuelve pasaría; con la referencia sobre copias, no.
    namespace: dict = {}
    exec(  # noqa: S102 - un «cuaderno» que no guarda lo que devuelve add_one
        "def add_twice(t):\n    add_one(t)\n    add_one(t)\n    return t\n",
        namespace,
    )
    with pytest.raises(CheckError):
        _check_add_twice(namespace["add_twice"], quiet=True)
    exec(  # noqa: S102 - el mismo, guardándolo
        "def add_twice(t):\n    t = add_one(t)\n    return add_one(t)\n",
        namespace,
    )
    _check_add_twice(namespace["add_twice"], quiet=True)


@pytest.mark.parametrize(
    ("value", "kind", "ok"),
    [
        (1.5, "float", True),
        (np.float32(1.5), "float", True),
        (2, "float", True),
        (torch.tensor(1.5), "float", False),
        (np.array(1.5), "float", False),
        (True, "float", False),
        (3, "int", True),
        (np.int64(3), "int", True),
        (torch.tensor(3), "int", False),
        (3.0, "int", False),
    ],
)
def test_python_number_rejects_0d_tensors_and_arrays(value, kind, ok):
    if ok:
        python_number(value, "El resultado", kind)
    else:
        with pytest.raises(CheckError, match="de Python"):
            python_number(value, "El resultado", kind)


def test_returns_is_checked_once_the_values_match():
    with pytest.raises(CheckError, match="0 dimensiones"):
        check_cases(
            lambda x: torch.tensor(2.0 * x),
            "double",
            [(1.0,)],
            lambda x: 2.0 * x,
            returns="float",
        )
    # Con un valor equivocado, el mensaje habla del valor
    with pytest.raises(CheckError, match="debía ser 2"):
        check_cases(
            lambda x: torch.tensor(3.0 * x),
            "double",
            [(1.0,)],
            lambda x: 2.0 * x,
            returns="float",
        )


# ---------------------------------------------------------------------------
# Mensajes: dónde difiere, síntomas, longitud, Markdown y traza
# ---------------------------------------------------------------------------


def test_difference_names_the_first_position_and_the_largest_gap():
    want = np.zeros((4, 5))
    got = want.copy()
    got[1, 2] = 0.5
    got[3, 4] = -2.0
    text = describe_difference(got, want)
    assert "difiere en 2 de 20 posiciones" in text
    assert "[1, 2]" in text and "0,5" in text
    assert "mayor diferencia está en [3, 4]" in text
    assert "\n" not in text, "sin volcar las matrices"


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (lambda x: -2 * x, "signo cambiado"),
        (lambda x: np.round(2 * x, 2), "redondeado a 2 decimales"),
        (lambda x: (2 * x).astype(int), "es de enteros"),
        (lambda x: 6 * x, "proporcional"),
        (lambda x: np.stack([2 * x, 2 * x]).T, "traspuesta"),
    ],
    ids=["signo", "redondeo", "enteros", "factor", "forma"],
)
def test_unknown_mistakes_are_diagnosed_by_their_symptom(answer, phrase):
    cases = [(np.array([[0.123, 1.457], [2.0, 3.3333]]),)]
    if phrase == "traspuesta":
        cases = [(np.array([0.123, 1.457, 2.0]),)]

    def reference(x):
        return np.stack([2 * x, 2 * x]) if phrase == "traspuesta" else 2 * x

    with pytest.raises(CheckError, match=phrase):
        check_cases(answer, "f", cases, reference)


def test_symptoms_of_tensors_that_carry_gradient():
    def reference(x):
        return 2 * x

    x = torch.tensor([0.5, 1.25, 3.0], requires_grad=True)
    with pytest.raises(CheckError, match="signo cambiado"):
        check_cases(lambda t: -2 * t, "f", [(x,)], reference)
    with pytest.raises(CheckError, match="es de enteros"):
        check_cases(lambda t: (2 * t).long(), "f", [(x,)], reference)


def test_a_mistake_written_another_way_still_gets_its_hint():
    # La huella guardada lanza un error en el último caso; la respuesta del
    # estudiante no, pero da lo mismo en los casos que fallan.
    def stored(x):
        if x == 0:
            raise ZeroDivisionError
        return x + 1

    cases = [(1.0,), (2.0,), (3.0,), (0.0,)]
    with pytest.raises(CheckError, match="¿Sumaste 1?"):
        check_cases(
            lambda x: x + 1 if x else 0.0,
            "f",
            cases,
            lambda x: x,
            [Mistake("plus_one", stored, "¿Sumaste 1?")],
        )


def test_messages_are_capped_and_plain():
    with pytest.raises(CheckError) as caught:
        fail("**Cuidado:** usa *siempre* 2 * x. " + "muy largo " * 500)
    message = str(caught.value)
    assert len(message) <= MAX_MESSAGE
    assert "recortado" in message
    assert message.startswith("Cuidado: usa siempre 2 * x.")
    assert plain_text("a * b y c * d") == "a * b y c * d"


def test_jupyter_shows_only_the_message(capsys):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_cell(
        "from helpers.checks import fail\n"
        "def check():\n    fail('tu resultado no coincide')\n"
        "check()\n"
    )
    shown = capsys.readouterr().out
    assert "tu resultado no coincide" in shown
    assert "Traceback" not in shown and "fail(" not in shown
    # Un error del código del estudiante conserva su traza.
    shell.run_cell("def mine():\n    return 1 / 0\nmine()\n")
    shown = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert "ZeroDivisionError" in shown and "return 1 / 0" in shown


# ---------------------------------------------------------------------------
# Demos que siguen con la referencia y cambios sin guardar
# ---------------------------------------------------------------------------


def test_demo_falls_back_to_the_reference_with_one_note(capsys):
    namespace: dict = {}
    exec("def f(x):\n    raise NotImplementedError\n", namespace)  # noqa: S102
    demo = demo_functions(namespace, f=lambda x: x + 1)
    assert demo.f(1) == 2 and demo.f(2) == 3
    assert capsys.readouterr().out.count("aún no está escrita") == 1


def test_demo_has_no_fallback_when_grading(monkeypatch):
    # Al calificar, una demo sin la función del estudiante falla enseguida.
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    namespace: dict = {}
    exec("def f(x):\n    raise NotImplementedError\n", namespace)  # noqa: S102
    demo = demo_functions(namespace, f=lambda x: x + 1, g=lambda x: x)
    with pytest.raises(NotImplementedError):
        demo.f(1)
    with pytest.raises(NotImplementedError):
        demo.g(1)


def test_demo_uses_the_current_student_function_and_shows_its_errors():
    namespace: dict = {}
    demo = demo_functions(namespace, f=lambda x: x)
    exec("def f(x):\n    return 2 * x\n", namespace)  # noqa: S102
    assert demo.f(3) == 6
    exec("def f(x):\n    return 1 / 0\n", namespace)  # noqa: S102
    with pytest.raises(ZeroDivisionError):
        demo.f(3)
    assert namespace["f"].__name__ == "f", "el nombre del cuaderno no se toca"


def test_self_check_notices_exercises_run_but_not_saved(tmp_path):
    saved = "def f(x):\n    return x + 1\n"
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {"nbgrader": {"solution": True, "grade_id": "f"}},
                "source": saved,
            }
        ]
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert selfcheck.unsaved_exercises(path, ["import numpy", saved + "\n"]) == []
    edited = "def f(x):\n    return x + 2\n"
    assert selfcheck.unsaved_exercises(path, [saved, edited]) == ["f"]
    assert selfcheck.unsaved_exercises(path, [edited, saved]) == []


def test_compare_parameters_names_the_parameter_that_differs():
    from helpers.checks import CheckError, compare_parameters

    want = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": np.array([0.5])}
    compare_parameters({"w": want["w"] + 1e-7, "b": want["b"]}, want, what="la red")
    with pytest.raises(CheckError, match="«w»") as caught:
        compare_parameters({"w": want["w"] * 1.01, "b": want["b"]}, want, what="la red")
    assert "la red" in str(caught.value) and "[0, 0]" in str(caught.value)
    with pytest.raises(CheckError, match="faltan parámetros: b"):
        compare_parameters({"w": want["w"]}, want, what="la red")
    with pytest.raises(CheckError, match="forma"):
        compare_parameters({"w": want["w"], "b": np.zeros(2)}, want, what="la red")


def test_progress_counts_every_graded_cell_of_an_exercise(capsys):
    from helpers.checks import CheckError, exercise, fail, progress_summary

    module = "99_aspectos"

    @exercise(module, "update", "el valor")
    def check_update_value(function):
        if function() != 1:
            fail("el valor no es 1")

    @exercise(module, "update", "el gradiente")
    def check_update_gradient(function):
        if function() != 1:
            fail("el gradiente no llega")

    assert progress_summary(module) == {"update": None}
    check_update_value(lambda: 1)
    assert progress_summary(module) == {"update": None}
    assert "pasan 1 de 2 comprobaciones" in capsys.readouterr().out
    with pytest.raises(CheckError):
        check_update_gradient(lambda: 2)
    check_update_value(lambda: 1)  # la última en ejecutarse pasa...
    assert progress_summary(module) == {"update": False}  # ...pero falta un aspecto
    check_update_gradient(lambda: 1)
    capsys.readouterr()
    assert progress_summary(module) == {"update": True}
    # El resumen nombra el ejercicio (aquí, sin cuaderno, su clave), no el
    # aspecto de su primera comprobación
    out = capsys.readouterr().out
    assert "✔  update\n" in out and "el valor" not in out


def test_check_procedure_runs_reference_student_and_rows_from_the_same_state():
    from helpers.checks import CheckError, Mistake, check_procedure

    def run(step):  # una «actualización» con estado: parte siempre de 1.0
        state = [1.0]
        step(state)
        return state[0]

    def double(state):
        state[0] *= 2

    def add_two(state):
        state[0] += 2

    rows = [
        Mistake("adds_one", lambda s: s.__setitem__(0, s[0] + 1), "Sumaste 1."),
        Mistake("adds_two", add_two, "Sumaste 2 en vez de doblar."),
    ]
    same = float.__eq__
    common = dict(run=run, same=same)

    def describe(got, want):
        return f"Quedó {got} y debía quedar {want}."

    # Bien: devuelve el resultado del estudiante
    assert check_procedure(double, double, rows, describe=describe, **common) == 2.0
    # Add_two da 3 == 1 + 2: la fila que coincide, con su id y tras la descripción
    with pytest.raises(CheckError) as caught:
        check_procedure(
            add_two, lambda s: s.__setitem__(0, 5.0), rows, describe=describe, **common
        )
    assert caught.value.mistake == "adds_two"
    assert (
        str(caught.value)
        == "Quedó 3.0 y debía quedar 5.0.\nSumaste 2 en vez de doblar."
    )
    # Una descripción vacía deja el mensaje de la fila solo
    with pytest.raises(CheckError) as caught:
        check_procedure(add_two, double, rows, describe=lambda g, w: "", **common)
    assert str(caught.value) == "Sumaste 2 en vez de doblar."

    # Ninguna fila: el diagnóstico propio del ejercicio, o «wrong_result»
    def negate(state):
        state[0] = -state[0]

    def unexplained(got, want):
        if got == -want / 2:
            fail("Cambiaste el signo.", "negated")

    with pytest.raises(CheckError) as caught:
        check_procedure(
            negate, double, rows, describe=describe, unexplained=unexplained, **common
        )
    assert caught.value.mistake == "negated"
    with pytest.raises(CheckError) as caught:
        check_procedure(
            negate, add_two, rows, describe=describe, unexplained=unexplained, **common
        )
    assert caught.value.mistake == "wrong_result"
    assert str(caught.value) == "Quedó -1.0 y debía quedar 3.0."
    # Si el diagnóstico propio lo da por bueno (su tolerancia), se acepta
    accepted = check_procedure(
        negate, double, rows, describe=describe, unexplained=lambda g, w: True, **common
    )
    assert accepted == -1.0
