"""Las protecciones comunes de ``helpers.checks``, que valen para todos los
ejercicios: entradas modificadas, un ejercicio calificado sin depender de
otro, mensajes que dicen dónde difiere el resultado, síntomas, mensajes
cortos y sin Markdown, la traza escondida en Jupyter, la demo que sigue con la
referencia y el aviso de cambios sin guardar.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import checks, selfcheck
from helpers.checks import (
    MAX_MESSAGE,
    MUST,
    MUST_NOT,
    CheckError,
    Diagnosis,
    Flow,
    Masked,
    Microbatches,
    Mistake,
    Procedure,
    Recorder,
    Setup,
    call,
    check_cases,
    check_gradients,
    demo_functions,
    describe_difference,
    diagnoses,
    exercise,
    fail,
    plain_text,
    python_number,
    variant_of,
)
from helpers.formatting import number, significant
from helpers.topics import TOPICS, module_of
from helpers.topics import topic as topic_of

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


# ---------------------------------------------------------------------------
# El núcleo: capas, diagnósticos comunes y la tabla de temas
# ---------------------------------------------------------------------------

CORE = Path(checks.__file__).parent / "core"


def _constants(node: ast.expr) -> set[str]:
    """Las cadenas fijas que puede valer una expresión (``a or "x"``,
    ``"x" if c else "y"``); las f-strings no son fijas."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.BoolOp):
        return set().union(*(_constants(v) for v in node.values))
    if isinstance(node, ast.IfExp):
        return _constants(node.body) | _constants(node.orelse)
    return set()


def _core_ids() -> set[str]:
    """Los ids que el código de ``core/`` escribe: el segundo argumento de
    cada ``fail``, el primero de cada ``return ("id", mensaje)`` y el valor
    por defecto de un argumento ``mistake``."""
    found: set[str] = set()
    for path in CORE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "") == "fail"
                and len(node.args) > 1
            ):
                found |= _constants(node.args[1])
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
                first = node.value.elts[0] if node.value.elts else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    found.add(first.value)
            if isinstance(node, ast.arguments):
                names = [a.arg for a in node.args + node.kwonlyargs]
                defaults = [None] * (len(node.args) - len(node.defaults))
                for name, default in zip(
                    names,
                    defaults + list(node.defaults) + list(node.kw_defaults),
                    strict=True,
                ):
                    if name == "mistake" and isinstance(default, ast.Constant):
                        if isinstance(default.value, str):
                            found.add(default.value)
    return found


def test_common_mistakes_are_the_ids_the_core_writes():
    # En los dos sentidos: un id nuevo del núcleo entra en el catálogo (que
    # leen las pruebas de los bancos), y el catálogo no guarda ids muertos.
    # «raised» con un mensaje propio y los ids derivados de un prefijo
    # (f"{prefix}_...") no son constantes: no cuentan aquí.
    catalogue = {common.id for common in checks.COMMON_MISTAKES}
    assert len(catalogue) == len(checks.COMMON_MISTAKES), "ids repetidos"
    assert _core_ids() == catalogue


def test_the_core_is_layered_and_the_package_only_reexports():
    # __init__ no define funciones: solo reúne; core/ no importa los temas.
    tree = ast.parse(Path(checks.__file__).read_text(encoding="utf-8"))
    assert not [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    topics = set(TOPICS.values())
    for path in CORE.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for topic in topics:
            assert f"helpers.checks.{topic}" not in text, (path.name, topic)


def test_every_module_has_a_topic_with_checks_and_a_bank():
    from autograder.course import module_ids
    from tests.banks import bank

    assert list(TOPICS) == module_ids(), "helpers.topics.TOPICS no está al día"
    for module_id, topic in TOPICS.items():
        module = importlib.import_module(f"helpers.checks.{topic}")
        assert module.MODULE == module_id
        assert bank(module_id) is not None, module_id
    assert topic_of("06_ppo") == "ppo" and module_of("ppo") == "06_ppo"
    assert topic_of("test_module") is None


def test_diagnoses_reads_a_block_and_fills_the_gaps_when_failing():
    says = diagnoses(
        """
batch_not_tensor: batch['{key}'] es {kind}; debe ser
    un tensor de PyTorch.
one, two: Lo mismo {para} las dos.
"""
    )
    assert list(says) == ["batch_not_tensor", "one", "two"]
    assert says["one"] == Diagnosis(id="one", message="Lo mismo {para} las dos.")
    with pytest.raises(CheckError) as caught:
        says["batch_not_tensor"].fail(key="actions", kind="list")
    assert caught.value.mistake == "batch_not_tensor"
    assert str(caught.value) == (
        "batch['actions'] es list; debe ser un tensor de PyTorch."
    )
    with pytest.raises(CheckError, match=r"^Lo mismo \{para\} las dos\.$"):
        says["two"].fail()


def test_variant_of_fixes_options_and_says_which():
    def update(q, reward, *, step="new"):
        return q + (reward - q) / (2 if step == "new" else 1)

    variant = variant_of(update, step="old")
    assert variant(1.0, 3.0) == 3.0
    assert variant.__name__ == "update(step='old')"


# ---------------------------------------------------------------------------
# Tipo 1 · valores en casos, con alternativas aceptadas
# ---------------------------------------------------------------------------


def _population_std(x):
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / (x.std(axis=-1, keepdims=True) + 1e-6)


def _sample_std(x):
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / (x.std(axis=-1, ddof=1, keepdims=True) + 1e-6)


def _sample_std_no_eps(x):
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / x.std(axis=-1, ddof=1, keepdims=True)


_STD_CASES = [
    (np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]),),
    (np.array([[1.0, 1.0, 1.0, 1.0], [0.5, 0.0, 2.0, 1.0]]),),
]


def test_either_accepted_reference_passes_but_not_a_mix():
    both = (_population_std, _sample_std)
    check_cases(_population_std, "normalize", _STD_CASES, both)
    check_cases(_sample_std, "normalize", _STD_CASES, both)

    def mixed(x):  # una convención en cada caso: ninguna en todos
        return (_sample_std if x[0, 0] == 1 and x[0, 1] == 0 else _population_std)(x)

    with pytest.raises(CheckError):
        check_cases(mixed, "normalize", _STD_CASES, both)


def test_diagnosis_uses_the_closest_accepted_reference():
    # Sin eps y con la muestral: 0/0 en el grupo constante. La fila lo
    # explica, y los números del mensaje son los de la muestral, la que eligió.
    rows = [Mistake("no_eps", _sample_std_no_eps, "Suma eps a la desviación.")]
    with pytest.raises(CheckError) as caught:
        check_cases(
            _sample_std_no_eps,
            "normalize",
            _STD_CASES,
            (_population_std, _sample_std),
            rows,
        )
    assert caught.value.mistake == "no_eps"
    population_value = significant(_population_std(_STD_CASES[1][0])[1, 0])
    sample_value = significant(_sample_std(_STD_CASES[1][0])[1, 0])
    assert population_value not in str(caught.value)
    assert sample_value in str(caught.value)


# ---------------------------------------------------------------------------
# Tipo 2 · entradas con máscara: el relleno que permite el enunciado y cada eje
# ---------------------------------------------------------------------------


def _masked_mean(values, mask, dim=None):
    keep = mask.bool()
    kept = torch.where(keep, values, torch.zeros_like(values))
    if dim is None:
        return kept.sum() / keep.sum()
    return kept.sum(dim=dim) / keep.sum(dim=dim)


def _times_mask(values, mask, dim=None):
    if dim is None:
        return (values * mask).sum() / mask.sum()
    return (values * mask).sum(dim=dim) / mask.sum(dim=dim)


def _last_axis_always(values, mask, dim=None):
    if dim is None:
        return _masked_mean(values, mask)
    return _masked_mean(values, mask, -1)


def _squeezed(values, mask, dim=None):
    return _masked_mean(values, mask, dim).squeeze()


_MASK = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
#: Los casos de un enunciado escrito a mano: dim=None y dim=-1, relleno finito.
_MEAN_CASES = [
    (torch.linspace(-1, 2, 12).reshape(3, 4), _MASK, None),
    (torch.linspace(-1, 2, 12).reshape(3, 4), _MASK, -1),
]


def _masked(padding):
    return Masked(
        mask="mask",
        padded=("values",),
        padding=padding,
        mistake="mean_padding",
        axis="dim",
    )


def test_the_three_masked_escapes_pass_hand_written_cases():
    # Sin Masked, los tres pasan los casos de siempre: por eso hace falta.
    for answer in (_times_mask, _last_axis_always, _squeezed):
        check_cases(answer, "masked_mean", _MEAN_CASES, _masked_mean)


def test_multiplying_by_the_mask_fails_when_padding_may_be_anything():
    with pytest.raises(CheckError) as caught:
        check_cases(
            _times_mask, "masked_mean", _MEAN_CASES, _masked_mean, masked=_masked("any")
        )
    message = str(caught.value)
    assert caught.value.mistake == "mean_padding"
    assert "en el relleno (donde mask vale 0)" in message
    assert "torch.where(mask.bool(), x, 0)" in message and "masked_fill" in message
    # Nombra la multiplicación solo para decir que no basta.
    assert "Multiplicar por la máscara no los quita" in message
    assert "multiplica por la máscara" not in message.lower()


def test_multiplying_by_the_mask_is_right_when_padding_is_finite():
    check_cases(
        _times_mask, "masked_mean", _MEAN_CASES, _masked_mean, masked=_masked("finite")
    )


def test_ignoring_the_padding_fails_with_finite_padding_too():
    def counts_padding(values, mask, dim=None):
        return values.mean() if dim is None else values.mean(dim=dim)

    cases = [(torch.zeros(3, 4), _MASK)]  # el relleno escrito vale 0
    check_cases(counts_padding, "masked_mean", cases, _masked_mean)
    finite = Masked(
        mask="mask", padded=("values",), padding="finite", mistake="mean_padding"
    )
    with pytest.raises(CheckError) as caught:
        check_cases(counts_padding, "masked_mean", cases, _masked_mean, masked=finite)
    assert caught.value.mistake == "mean_padding"
    assert f"{number(1e4, 0)} en el relleno" in str(caught.value)


def test_every_axis_the_statement_accepts_is_tried():
    with pytest.raises(CheckError, match=r"masked_mean\(.*, 0\)"):
        check_cases(
            _last_axis_always,
            "masked_mean",
            _MEAN_CASES,
            _masked_mean,
            masked=_masked("any"),
        )
    # Los ejes que acepta el enunciado, si no son todos
    only_last = dataclasses.replace(_masked("any"), axes=(None, -1))
    check_cases(
        _last_axis_always, "masked_mean", _MEAN_CASES, _masked_mean, masked=only_last
    )


def test_a_batch_of_one_is_tried():
    with pytest.raises(CheckError, match=r"forma \(\), pero debía tener forma \(1,\)"):
        check_cases(
            _squeezed, "masked_mean", _MEAN_CASES, _masked_mean, masked=_masked("any")
        )
    single = dataclasses.replace(_masked("any"), batch_of_one=False)
    check_cases(_squeezed, "masked_mean", _MEAN_CASES, _masked_mean, masked=single)


def test_square_masks_alone_cannot_tell_the_axes_apart():
    square = [(torch.ones(3, 3), torch.ones(3, 3), -1)]
    no_single = dataclasses.replace(_masked("any"), batch_of_one=False)
    with pytest.raises(ValueError, match="cuadradas"):
        check_cases(_masked_mean, "masked_mean", square, _masked_mean, masked=no_single)
    # Con el lote traspuesto de un caso no cuadrado, sí
    transposed = dataclasses.replace(no_single, transposed=True)
    check_cases(
        _masked_mean, "masked_mean", _MEAN_CASES, _masked_mean, masked=transposed
    )


def test_padded_arguments_with_extra_axes_and_their_own_positions():
    # Unos logits (B, T, V) con la máscara (B, T): el relleno se lleva a V.
    def token_log_probs(logits, tokens, mask):
        log_p = torch.log_softmax(logits, dim=-1)
        chosen = log_p.gather(-1, tokens[..., None]).squeeze(-1)
        return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))

    def times_mask(logits, tokens, mask):
        log_p = torch.log_softmax(logits, dim=-1)
        return log_p.gather(-1, tokens[..., None]).squeeze(-1) * mask

    logits = torch.linspace(-2, 2, 3 * 4 * 5).reshape(3, 4, 5)
    tokens = torch.tensor([[0, 1, 2, 3], [4, 0, 1, 2], [3, 4, 0, 1]])
    cases = [(logits, tokens, _MASK)]
    masked = Masked(
        mask="mask",
        padded=("logits",),
        padding="any",
        mistake="lp_padding",
        batched=("tokens",),
    )
    check_cases(token_log_probs, "f", cases, token_log_probs, masked=masked)
    with pytest.raises(CheckError) as caught:
        check_cases(times_mask, "f", cases, token_log_probs, masked=masked)
    assert caught.value.mistake == "lp_padding"
    # Unos logits desplazados (la posición t predice el token t + 1): el
    # relleno de los logits lo dice where.
    shifted = Masked(
        mask="mask",
        padded=("logits",),
        padding="any",
        mistake="lp_padding",
        batched=("tokens",),
        where={"logits": lambda a: ~a["mask"].bool()[..., None].expand(3, 4, 5)},
        batch_of_one=False,
    )
    with pytest.raises(CheckError):
        check_cases(times_mask, "f", cases, token_log_probs, masked=shifted)


# ---------------------------------------------------------------------------
# Tipo 3 · gradientes: autograd de la referencia y una tabla de qué recibe
# ---------------------------------------------------------------------------


def _policy_loss(log_probs, mask, advantages):
    """La referencia: −Σ A_i · m_it · log π_it / B, con A constante."""
    weighted = advantages.detach()[:, None] * log_probs * mask
    return -weighted.sum() / mask.shape[0]


def _advantage_leaks(log_probs, mask, advantages):
    return -(advantages[:, None] * log_probs * mask).sum() / mask.shape[0]


def _per_token_mean(log_probs, mask, advantages):
    return -(advantages.detach()[:, None] * log_probs * mask).sum() / mask.sum()


def _as_float(log_probs, mask, advantages):
    return _policy_loss(log_probs, mask, advantages).item()


_LOSS_CASES = [
    (
        torch.linspace(-3, -0.1, 12).reshape(3, 4),
        _MASK,
        torch.tensor([0.5, -1.0, 2.0]),
    ),
]
_LOSS_ROWS = [
    # Una fila sin gradiente no explica ningún gradiente (y no estorba)
    Mistake("as_float", _as_float, "Devuelve un tensor."),
    Mistake("per_token_mean", _per_token_mean, "¿Dividiste entre tokens?"),
]
_WRT = {"log_probs": MUST, "advantages": MUST_NOT}


def _check_loss_gradient(answer, **extra):
    check_gradients(
        answer,
        "policy_loss",
        _LOSS_CASES,
        _policy_loss,
        _LOSS_ROWS,
        wrt=extra.pop("wrt", _WRT),
        prefix="loss",
        **extra,
    )


def test_the_expected_gradient_is_autograd_of_the_reference():
    _check_loss_gradient(_policy_loss)
    # Cualquier forma de escribir la misma función pasa
    _check_loss_gradient(
        lambda lp, m, a: -(lp * m * a.detach()[:, None]).sum(dim=1).mean().reshape(1)
    )


def test_a_gradient_that_must_not_flow_is_caught_with_its_id():
    # El valor es el mismo: solo el gradiente lo delata.
    check_cases(_advantage_leaks, "policy_loss", _LOSS_CASES, _policy_loss)
    with pytest.raises(CheckError) as caught:
        _check_loss_gradient(_advantage_leaks)
    assert caught.value.mistake == "loss_gradient_leaks"
    assert "«advantages»" in str(caught.value) and ".detach()" in str(caught.value)
    # El ejercicio puede dar su propio id y mensaje
    own = {
        "log_probs": MUST,
        "advantages": Flow(False, id="advantage_grad", message="A es fija."),
    }
    with pytest.raises(CheckError) as caught:
        _check_loss_gradient(_advantage_leaks, wrt=own)
    assert (caught.value.mistake, str(caught.value)) == ("advantage_grad", "A es fija.")


def test_no_gradient_where_it_must_reach():
    with pytest.raises(CheckError) as caught:
        _check_loss_gradient(_as_float)
    assert caught.value.mistake == "loss_no_gradient"
    with pytest.raises(CheckError) as caught:
        _check_loss_gradient(lambda lp, m, a: _policy_loss(lp.detach(), m, a))
    assert caught.value.mistake == "loss_no_gradient"
    assert "tensor sin gradiente" in str(caught.value)

    def disconnected(log_probs, mask, advantages):
        copy = log_probs.detach().requires_grad_(True)  # otra hoja, sin modelo
        return _policy_loss(copy, mask, advantages)

    with pytest.raises(CheckError, match="no llega gradiente a «log_probs»") as caught:
        _check_loss_gradient(disconnected)
    assert caught.value.mistake == "loss_no_gradient"
    # Cada caso con el id y el mensaje del ejercicio
    own = {
        "log_probs": Flow(True, id="lp_disconnected", message="Calcula con log_probs."),
        "advantages": MUST_NOT,
    }
    floats = Diagnosis(id="loss_without_gradient")
    with pytest.raises(CheckError) as caught:
        _check_loss_gradient(disconnected, wrt=own, without_gradient=floats)
    assert (caught.value.mistake, str(caught.value)) == (
        "lp_disconnected",
        "Calcula con log_probs.",
    )
    with pytest.raises(CheckError, match="float, no un tensor") as caught:
        _check_loss_gradient(_as_float, wrt=own, without_gradient=floats)
    assert caught.value.mistake == "loss_without_gradient"


def test_a_gradient_that_is_zero_in_one_case_is_named_by_its_row():
    # Una fórmula con una esquina (aquí relu de la ventaja, un error típico)
    # da gradiente exactamente 0 a log_probs en un caso de ventajas negativas:
    # el gradiente llega (el grafo está conectado), pero vale 0. Si una fila
    # explica los gradientes en todos los casos, el diagnóstico es esa fila, no
    # «no llega gradiente».
    def relu_advantages(log_probs, mask, advantages):
        weights = torch.relu(advantages.detach())[:, None]
        return -(weights * log_probs * mask).sum() / mask.shape[0]

    cases = [*_LOSS_CASES, (_LOSS_CASES[0][0], _MASK, torch.tensor([-0.5, -1.0, -2.0]))]
    rows = [*_LOSS_ROWS, Mistake("relu", relu_advantages, "¿Un relu de la ventaja?")]
    args = ("policy_loss", cases, _policy_loss, rows)
    with pytest.raises(CheckError, match="relu de la ventaja") as caught:
        check_gradients(relu_advantages, *args, wrt=_WRT, prefix="loss")
    assert caught.value.mistake == "relu"
    # Sin una fila que lo explique, sigue siendo «no llega gradiente» en ese caso.
    with pytest.raises(CheckError) as caught:
        check_gradients(relu_advantages, *args[:3], _LOSS_ROWS, wrt=_WRT, prefix="loss")
    assert caught.value.mistake == "loss_no_gradient"


def test_an_output_of_another_shape_is_named():
    def per_row(log_probs, mask, advantages):
        weighted = advantages.detach()[:, None] * log_probs * mask
        return -weighted.sum(dim=1) / mask.shape[0]

    with pytest.raises(CheckError, match=r"forma \(3,\), pero debía tener forma \(\)"):
        _check_loss_gradient(per_row)
    scalar = Diagnosis(id="loss_not_scalar", message="La pérdida es un escalar.")
    with pytest.raises(CheckError, match="es un escalar") as caught:
        _check_loss_gradient(per_row, wrong_shape=scalar)
    assert caught.value.mistake == "loss_not_scalar"


def test_a_wrong_gradient_is_explained_by_the_row_whose_gradient_matches():
    with pytest.raises(CheckError) as caught:
        _check_loss_gradient(lambda lp, m, a: _per_token_mean(lp, m, a) * 1.0)
    assert caught.value.mistake == "per_token_mean"
    assert "el gradiente respecto a «log_probs» difiere" in str(caught.value)
    with pytest.raises(CheckError) as caught:
        _check_loss_gradient(lambda lp, m, a: _policy_loss(lp, m, a) * 3)
    assert caught.value.mistake == "loss_wrong_gradient"
    with pytest.raises(CheckError, match="Debería ser −A_i · m_it / B$") as caught:
        _check_loss_gradient(
            lambda lp, m, a: _policy_loss(lp, m, a) * 3,
            mistake="loss_wrong_grad",
            hint="Debería ser −A_i · m_it / B",
        )
    assert caught.value.mistake == "loss_wrong_grad"


def test_in_place_on_an_input_with_gradient_is_explained():
    def in_place(log_probs, mask, advantages):
        log_probs *= mask
        return _policy_loss(log_probs, mask, advantages)

    with pytest.raises(CheckError, match="en su sitio") as caught:
        _check_loss_gradient(in_place)
    assert caught.value.mistake == "raised"


def test_an_error_with_gradient_takes_the_exercise_id_and_the_numpy_hint():
    def with_numpy(log_probs, mask, advantages):
        return torch.as_tensor(np.asarray(log_probs) * 0.0).sum()

    raised = Diagnosis(id="raises_with_gradient", message="Y esto, del ejercicio.")
    with pytest.raises(CheckError) as caught:
        _check_loss_gradient(with_numpy, raised=raised)
    assert caught.value.mistake == "raises_with_gradient"
    text = str(caught.value)
    assert text.startswith("Con entradas que llevan gradiente, policy_loss(")
    assert "no pasa a NumPy: haz la cuenta con operaciones de PyTorch" in text
    assert text.endswith("Y esto, del ejercicio.")
    with pytest.raises(CheckError, match="no pasa a NumPy") as caught:
        _check_loss_gradient(with_numpy)
    assert caught.value.mistake == "raised"


def test_a_reference_that_returns_a_constant_only_asks_for_no_gradient():
    # Un peso fijo (el de muestreo truncado): todas las entradas MUST_NOT, y
    # basta con que la salida no lleve gradiente; el valor lo mira otra celda.
    def weights(log_probs, mask, advantages):
        return (log_probs.detach().exp() * mask).clamp(max=2.0)

    leak = Flow(False, id="weights_have_gradient", message="Llevan gradiente.")

    def check_weights(answer):
        check_gradients(
            answer, "weights", _LOSS_CASES, weights, wrt={"log_probs": leak}, prefix="w"
        )

    check_weights(weights)
    check_weights(lambda lp, m, a: torch.zeros_like(lp))
    with pytest.raises(CheckError, match="Llevan gradiente.") as caught:
        check_weights(lambda lp, m, a: (lp.exp() * m).clamp(max=2.0))
    assert caught.value.mistake == "weights_have_gradient"


def test_the_table_must_hold_for_the_reference():
    with pytest.raises(ValueError, match="advantages"):
        check_gradients(
            _policy_loss,
            "policy_loss",
            _LOSS_CASES,
            _advantage_leaks,  # una «referencia» que sí deriva respecto a A
            wrt=_WRT,
            prefix="loss",
        )


def test_gradients_of_outputs_that_are_not_scalars():
    def per_token(log_probs, mask):
        return torch.where(mask.bool(), 2 * log_probs, torch.zeros_like(log_probs))

    def doubled(log_probs, mask):
        return per_token(log_probs, mask) * 2

    cases = [(_LOSS_CASES[0][0], _MASK)]
    check_gradients(
        per_token, "f", cases, per_token, wrt={"log_probs": MUST}, prefix="f"
    )
    with pytest.raises(CheckError, match="suma ponderada fija") as caught:
        check_gradients(
            doubled, "f", cases, per_token, wrt={"log_probs": MUST}, prefix="f"
        )
    assert caught.value.mistake == "f_wrong_gradient"


class _ActorCritic(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.actor = torch.nn.Linear(2, 3)
        self.critic = torch.nn.Linear(2, 1)


def test_gradients_to_parts_of_a_network_and_to_derived_inputs():
    torch.manual_seed(0)
    net = _ActorCritic()
    states = torch.tensor([[0.5, -1.0], [1.5, 0.25]])
    returns = torch.tensor([1.0, -0.5])

    def loss(net, states, returns, advantages):
        values = net.critic(states).squeeze(-1)
        log_pi = torch.log_softmax(net.actor(states), -1)[:, 0]
        return -(advantages.detach() * log_pi).mean() + ((returns - values) ** 2).mean()

    def critic_in_actor(net, states, returns, advantages):
        values = net.critic(states).squeeze(-1)
        log_pi = torch.log_softmax(net.actor(states), -1)[:, 0]
        return -(advantages * log_pi).mean() + ((returns - values) ** 2).mean()

    # La ventaja llega calculada con el crítico, como en un bucle de verdad.
    def attach(args):
        values = args["net"].critic(args["states"]).squeeze(-1)
        return {"advantages": args["returns"] - values}

    cases = [(net, states, returns, torch.zeros(2))]
    wrt = {"net.actor": MUST, "net.critic": MUST}
    check_gradients(loss, "loss", cases, loss, wrt=wrt, prefix="ac", attach=attach)
    with pytest.raises(CheckError) as caught:
        check_gradients(
            critic_in_actor, "loss", cases, loss, wrt=wrt, prefix="ac", attach=attach
        )
    assert caught.value.mistake == "ac_wrong_gradient"
    assert "«net.critic." in str(caught.value)

    # Una tabla que pide gradiente donde la referencia no lo da es un error
    # de quien escribe la comprobación
    def actor_only(net, states, returns, advantages):
        return -(torch.log_softmax(net.actor(states), -1)[:, 0]).mean()

    frozen = {"net.actor": MUST, "net.critic": MUST}
    with pytest.raises(ValueError):
        check_gradients(
            loss,
            "loss",
            cases,
            actor_only,
            wrt=frozen,
            prefix="ac",
        )


# ---------------------------------------------------------------------------
# Tipo 4 · procedimientos: forwards, backward() y pasos contados, micro-lotes
# ---------------------------------------------------------------------------

_ROWS = 8


def _accumulation_start():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    x = torch.arange(_ROWS * 3, dtype=torch.float32).reshape(_ROWS, 3) / 10
    y = torch.linspace(-1, 1, _ROWS)[:, None]
    return Setup(args=(model, x, y, 4), model=model, batch=x)


def _accumulate(model, x, y, k):
    size = len(x) // k
    for start in range(0, len(x), size):
        rows = slice(start, start + size)
        loss = ((model(x[rows]) - y[rows]) ** 2).sum() / len(x)
        loss.backward()


def _one_backward_at_the_end(model, x, y, k):
    size = len(x) // k
    total = 0.0
    for start in range(0, len(x), size):
        rows = slice(start, start + size)
        total = total + ((model(x[rows]) - y[rows]) ** 2).sum() / len(x)
    total.backward()


def _strided(model, x, y, k):
    for j in range(k):
        loss = ((model(x[j::k]) - y[j::k]) ** 2).sum() / len(x)
        loss.backward()


def _whole_batch(model, x, y, k):
    (((model(x) - y) ** 2).sum() / len(x)).backward()


def _zero_inside(model, x, y, k):
    size = len(x) // k
    for start in range(0, len(x), size):
        model.zero_grad()
        rows = slice(start, start + size)
        (((model(x[rows]) - y[rows]) ** 2).sum() / len(x)).backward()


def _gradients_left(setup, returned):
    return {name: p.grad.clone() for name, p in setup.model.named_parameters()}


_ACCUMULATION = Procedure(
    name="accumulate",
    setup=_accumulation_start,
    observe=_gradients_left,
    same=lambda got, want: all(torch.allclose(got[n], want[n]) for n in want),
    describe=lambda got, want: "Los gradientes no son los del lote entero.",
    schedule=Microbatches(count=4, rows=_ROWS, prefix="acc"),
)


def test_the_recorder_counts_forwards_backwards_and_steps():
    setup = _accumulation_start()
    optimizer = torch.optim.SGD(setup.model.parameters(), lr=0.1)
    with Recorder(setup.model, optimizer, batch=setup.batch) as trace:
        _one_backward_at_the_end(*setup.args)
        optimizer.step()
        optimizer.zero_grad()
    assert trace.forwards == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert trace.count("backward") == 1, "un backward con cuatro forwards es uno"
    assert (trace.count("step"), trace.count("zero_grad")) == (1, 1)
    assert "zero_grad" not in vars(optimizer), "al salir, el optimizador como estaba"


def test_one_backward_per_microbatch_consecutive_in_order_is_one_declaration():
    rows = [Mistake("acc_zero_inside", _zero_inside, "No pongas a 0 en el bucle.")]
    _ACCUMULATION.check(_accumulate, _accumulate, rows)
    # Las tres escapadas dejan los mismos gradientes: solo las ve la regla.
    for answer, mistake, phrase in [
        (_one_backward_at_the_end, "acc_backward_per_microbatch", "un solo backward"),
        (_strided, "acc_microbatch_rows", "salteadas, de 4 en 4"),
        (_whole_batch, "acc_forward_count", "lote entero de una vez"),
    ]:
        assert _ACCUMULATION.same(
            _ACCUMULATION.run(answer)[0], _ACCUMULATION.run(_accumulate)[0]
        ), answer.__name__
        with pytest.raises(CheckError, match=phrase) as caught:
            _ACCUMULATION.check(answer, _accumulate, rows)
        assert caught.value.mistake == mistake
        with pytest.raises(CheckError):
            _ACCUMULATION.check_schedule(answer)
    # Un gradiente equivocado se diagnostica por su fila, antes que la regla
    with pytest.raises(CheckError) as caught:
        _ACCUMULATION.check(_zero_inside, _accumulate, rows)
    assert caught.value.mistake == "acc_zero_inside"


def test_optimizer_steps_are_counted_and_inputs_watched():
    def start():
        setup = _accumulation_start()
        optimizer = torch.optim.SGD(setup.model.parameters(), lr=0.1)
        return Setup(
            (setup.model, optimizer, *setup.args[1:]),
            setup.model,
            optimizer,
            setup.batch,
        )

    def train(model, optimizer, x, y, k):
        _accumulate(model, x, y, k)
        optimizer.step()

    def step_each(model, optimizer, x, y, k):
        size = len(x) // k
        for start_row in range(0, len(x), size):
            rows = slice(start_row, start_row + size)
            (((model(x[rows]) - y[rows]) ** 2).sum() / len(x)).backward()
            optimizer.step()

    def scales_targets(model, optimizer, x, y, k):
        y += 1.0  # modifica una entrada que no es el modelo
        train(model, optimizer, x, y, k)

    procedure = dataclasses.replace(
        _ACCUMULATION,
        setup=start,
        observe=lambda s, r: dict(s.model.state_dict()),
        schedule=Microbatches(count=4, rows=_ROWS, prefix="acc", steps=1),
    )
    procedure.check(train, train)
    with pytest.raises(CheckError) as caught:
        procedure.check_schedule(step_each)
    assert caught.value.mistake == "acc_step_count"
    with pytest.raises(CheckError, match="modificó su argumento «y»"):
        procedure.check(scales_targets, train)


# ---------------------------------------------------------------------------
# La plantilla sin resolver: la comprobación no prepara sus casos
# ---------------------------------------------------------------------------

_STUBS = '''
def stub(x):
    """La plantilla, como la deja nbgrader."""
    # YOUR CODE HERE
    raise NotImplementedError()


def bare(x):
    raise NotImplementedError


def started(x):
    y = x + 1
    raise NotImplementedError()


def solved(x):
    return x + 1
'''


def test_an_unsolved_template_fails_before_the_check_prepares_anything(
    tmp_path, monkeypatch
):
    from helpers.checks import CheckError
    from helpers.checks.core.registry import exercise, is_unsolved

    (tmp_path / "plantillas.py").write_text(_STUBS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    stubs = importlib.import_module("plantillas")
    assert is_unsolved(stubs.stub) and is_unsolved(stubs.bare)
    assert not is_unsolved(stubs.started) and not is_unsolved(stubs.solved)
    assert not is_unsolved(len) and not is_unsolved({"a": 1})
    prepared = []

    @exercise("99_plantillas", "plus_one")
    def check(f):
        prepared.append(True)  # un caso caro: un modelo, un punto de control
        assert f(1) == 2

    with pytest.raises(CheckError, match="NotImplementedError"):
        check(stubs.stub)
    assert prepared == []
    # Una función empezada sí llega a la comprobación (y lanza en ella)
    with pytest.raises(CheckError, match="NotImplementedError"):
        check(stubs.started)
    assert prepared == [True]
    check(stubs.solved, quiet=True)
