"""Comprobaciones visibles de los ejercicios, con diagnósticos en español.

Cada módulo del curso tiene aquí su submódulo, con el nombre de su tema
(``helpers.checks.bandits``…; la tabla módulo → tema es
``helpers.topics.TOPICS``). Una comprobación recibe la función del
estudiante, la prueba con casos fijos y, si algo falla, lanza
:class:`CheckError` (un ``AssertionError``) con un mensaje que nombra el error
típico que explica el resultado («¿olvidaste dividir por n?»). Así nbgrader la
cuenta como fallo y el estudiante sabe qué mirar.

Este archivo solo reúne lo que importan los temas y los cuadernos. Lo común
vive en ``helpers/checks/core/``, un módulo por asunto, de abajo arriba:

- ``mistakes``: fallar (:func:`fail`, :class:`CheckError`) y las filas
  (:class:`Mistake`, :class:`Diagnosis`, :func:`variant_of`, y
  :func:`with_messages` y :func:`diagnoses` para escribir los mensajes de una
  tabla, o los de unos ``fail``, en un bloque);
- ``registry``: el registro de ejercicios (:func:`exercise`) y el resumen de
  progreso;
- ``compare``: comparar resultados y decir dónde difieren;
- ``calls``: llamar a la función del estudiante con copias (:func:`call`);
- ``symptoms``: los síntomas generales (signo, redondeo, forma…);
- ``rows``: una comprobación en una llamada (:func:`values_check`,
  :func:`gradients_check`) y las variantes que solo cambian la salida de la
  referencia (:func:`on_output`, :func:`negated`, :func:`scaled`) o una pieza
  que ella llama (:func:`patched`);
- ``masked``, ``diagnose``, ``gradients`` y ``procedures``: los tipos de
  comprobación. Valores en casos, con alternativas y con máscara
  (:func:`check_cases`, :class:`Masked`); gradientes por autograd de la
  referencia (:func:`check_gradients`); procedimientos con estado
  (:func:`check_procedure`, :class:`Procedure`, :class:`Microbatches`).
  Los cuestionarios están en ``helpers.checks.quiz``.

``core/`` no tiene ``__init__.py`` a propósito: así ``pkgutil.iter_modules``
sobre este paquete solo ve temas (y ``quiz``).

Las demos (``demo_functions``) viven en ``helpers.demo``; se reexportan aquí
porque los cuadernos las importan de ``helpers.checks``.
"""

from __future__ import annotations

from helpers.checks.core.calls import _differs, call
from helpers.checks.core.compare import (
    as_array,
    as_int,
    as_tuple,
    close,
    compare_parameters,
    describe_difference,
    python_number,
    same_parameters,
    tensor,
)
from helpers.checks.core.diagnose import check_cases, check_procedure
from helpers.checks.core.gradients import MUST, MUST_NOT, Flow, check_gradients
from helpers.checks.core.masked import Masked
from helpers.checks.core.mistakes import (
    MAX_MESSAGE,
    CheckError,
    CommonMistake,
    Diagnosis,
    Mistake,
    diagnoses,
    fail,
    plain_text,
    variant_of,
    with_messages,
)
from helpers.checks.core.procedures import (
    Microbatches,
    Procedure,
    Recorder,
    Setup,
    Trace,
)
from helpers.checks.core.registry import (
    TITLES,
    Exercise,
    _titles,
    exercise,
    exercise_title,
    exercises,
    progress_summary,
    references_in_place_of,
)
from helpers.checks.core.rows import (
    gradients_check,
    negated,
    on_output,
    patched,
    scaled,
    values_check,
    with_args,
)
from helpers.checks.core.symptoms import BROADCAST_HINT
from helpers.demo import demo_functions

#: Los diagnósticos que el núcleo da por sí solo, en cualquier ejercicio: los
#: ids que un banco puede esperar sin que el tema los declare. Es la lista de
#: los ``fail(..., "id")`` de ``core/`` (``tests/test_checks_generic.py`` la
#: compara con el código en los dos sentidos).
COMMON_MISTAKES: tuple[CommonMistake, ...] = (
    CommonMistake(id="modified_input", about="la función modificó una entrada"),
    CommonMistake(id="not_a_number", about="devolvió algo que no es un número"),
    CommonMistake(id="not_an_integer", about="una acción que no es un entero"),
    CommonMistake(id="not_python_number", about="un tensor o array, no un número"),
    CommonMistake(id="raised", about="lanzó un error con un caso"),
    CommonMistake(id="broadcast", about="dos formas que no se difunden"),
    CommonMistake(id="nan", about="aparece NaN donde no lo hay"),
    CommonMistake(id="transposed", about="la forma traspuesta"),
    CommonMistake(id="extra_dimensions", about="más dimensiones de las debidas"),
    CommonMistake(id="scalar", about="un número donde tocaba un array"),
    CommonMistake(id="reshaped", about="los valores con otra forma"),
    CommonMistake(id="integer_dtype", about="un resultado de enteros"),
    CommonMistake(id="sign", about="el signo cambiado"),
    CommonMistake(id="rounded", about="redondeado antes de devolver"),
    CommonMistake(id="proportional", about="proporcional: sobra o falta un factor"),
    CommonMistake(id="wrong_value", about="otro valor, sin síntoma reconocible"),
    CommonMistake(id="wrong_result", about="un procedimiento con otro resultado"),
    CommonMistake(id="wrong_parameters", about="otros pesos tras entrenar"),
)

__all__ = [
    "BROADCAST_HINT",
    "COMMON_MISTAKES",
    "MAX_MESSAGE",
    "MUST",
    "MUST_NOT",
    "TITLES",
    "CheckError",
    "CommonMistake",
    "Diagnosis",
    "Exercise",
    "Flow",
    "Masked",
    "Microbatches",
    "Mistake",
    "Procedure",
    "Recorder",
    "Setup",
    "Trace",
    "_differs",
    "_titles",
    "as_array",
    "as_int",
    "as_tuple",
    "call",
    "check_cases",
    "check_gradients",
    "check_procedure",
    "close",
    "compare_parameters",
    "demo_functions",
    "diagnoses",
    "describe_difference",
    "exercise",
    "exercise_title",
    "exercises",
    "negated",
    "on_output",
    "patched",
    "fail",
    "gradients_check",
    "plain_text",
    "progress_summary",
    "python_number",
    "references_in_place_of",
    "same_parameters",
    "scaled",
    "tensor",
    "values_check",
    "variant_of",
    "with_args",
    "with_messages",
]
