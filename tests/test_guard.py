"""La vigilancia de las celdas de pruebas (``autograder.guard``), sin kernel.

Las celdas se simulan compilando su código con el nombre de archivo que les
da ipykernel; la referencia es una función de este archivo.
"""

from __future__ import annotations

import json
import sys

import pytest

from autograder.guard import Guard

STUDENT_FILE = "/tmp/ipykernel_1/111.py"
TEST_FILE = "/tmp/ipykernel_1/222.py"


def softmax(values):
    """La «referencia» de estas pruebas."""
    return [v / sum(values) for v in values]


def _code_key(function) -> list:
    code = function.__code__
    return [code.co_filename, code.co_firstlineno, code.co_name]


def _config() -> str:
    """La configuración de la vigilancia: el ejercicio ``answer``, cuya
    referencia es ``softmax``."""
    return json.dumps(
        {
            "nonce": "n0",
            "names": ["answer"],
            "codes": [_code_key(softmax)],
            "classes": [],
        }
    )


def _cell(source: str, filename: str, namespace: dict) -> None:
    exec(compile(source, filename, "exec"), namespace)


def _graded(student_source: str, test_source: str, capsys) -> dict:
    """Define la respuesta en una «celda» y ejecuta la de pruebas vigilada."""
    config = _config()
    namespace = {"reference": softmax, "Guard": Guard, "config": config}
    _cell(student_source, STUDENT_FILE, namespace)
    _cell(
        "guard = Guard(config); guard.start()\n"
        + test_source
        + "\nguard.finish(globals())\n",
        TEST_FILE,
        namespace,
    )
    mark = capsys.readouterr().out.strip().splitlines()[-1]
    assert mark.startswith("«AG:n0:") and mark.endswith("»")
    return json.loads(mark[len("«AG:n0:") : -1])


@pytest.mark.parametrize(
    "student",
    [
        "def answer(values):\n    return reference(values)",
        # A través de una función de C (map): quien llama sigue siendo la celda.
        "def answer(values):\n    return list(map(reference, [values]))[0]",
        "def answer(values):\n"
        "    helper = lambda v: reference(v)\n"
        "    return helper(values)",
    ],
)
def test_a_cell_that_calls_the_reference_is_named(student, capsys):
    found = _graded(student, "answer([1.0, 3.0])", capsys)
    assert "llama a la referencia «softmax»" in found["delegated"]


def test_the_test_cell_may_call_the_reference(capsys):
    student = (
        "def answer(values):\n"
        "    total = sum(values)\n"
        "    return [v / total for v in values]"
    )
    found = _graded(
        student, "assert answer([1.0, 3.0]) == reference([1.0, 3.0])", capsys
    )
    assert found == {"delegated": ""}


def test_an_answer_that_is_the_reference_is_named(capsys):
    found = _graded("answer = reference", "answer([1.0])", capsys)
    assert found["delegated"] == "«answer» es la implementación de referencia"


def test_the_previous_profiler_comes_back(capsys):
    def previous(frame, event, arg):
        return None

    sys.setprofile(previous)
    try:
        _graded("def answer(values):\n    return values", "answer([1.0])", capsys)
        assert sys.getprofile() is previous
    finally:
        sys.setprofile(None)


def test_a_test_cell_that_raised_does_not_break_the_next_one(capsys):
    """Una celda de pruebas que falla no llega a ``finish()``: su perfilador
    sigue puesto, y la celda siguiente debe vigilar igual."""
    config = _config()
    namespace = {"reference": softmax, "Guard": Guard, "config": config}
    _cell("def answer(values):\n    return reference(values)", STUDENT_FILE, namespace)
    with pytest.raises(AssertionError):
        _cell(
            "guard = Guard(config); guard.start()\nassert False\n", TEST_FILE, namespace
        )
    try:
        found = _graded(
            "def answer(values):\n    return reference(values)", "answer([1.0])", capsys
        )
        left = sys.getprofile()
    finally:
        sys.setprofile(None)
    assert "llama a la referencia" in found["delegated"]
    assert left is None, "el perfilador de la celda que falló sigue puesto"
