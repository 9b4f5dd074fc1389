"""Comprobaciones visibles de los ejercicios, con diagnósticos en español.

Cada módulo del curso tiene aquí el submódulo de su tema (la tabla es
``helpers.topics.TOPICS``). Una comprobación prueba la función del estudiante
en casos fijos y, si falla, lanza :class:`CheckError` (un ``AssertionError``,
que nbgrader cuenta como fallo) con un mensaje que nombra el error típico.

Este archivo reúne lo que importan temas y cuadernos. Lo común vive en
``helpers/checks/core/``, un módulo por asunto, de abajo arriba: ``mistakes``
(:func:`fail`, las filas :class:`Mistake` y :class:`Diagnosis`,
:func:`with_messages`, :func:`diagnoses`), ``registry`` (:func:`exercise` y el
resumen de progreso), ``compare``, ``calls`` (:func:`call`, con copias),
``symptoms`` (signo, redondeo, forma…), ``rows`` (:func:`values_check`,
:func:`gradients_check` y las variantes :func:`on_output`, :func:`negated`,
:func:`scaled`, :func:`patched`, :func:`with_args`) y los tipos:
``diagnose`` (valores en casos, :func:`check_cases`), ``masked``
(:class:`Masked`), ``gradients`` (:func:`check_gradients`) y ``procedures``
(:class:`Procedure`, :class:`Microbatches`). Los cuestionarios están en
``helpers.checks.quiz``; las demos se reexportan de ``helpers.demo``.

``core/`` no tiene ``__init__.py`` a propósito: así ``pkgutil.iter_modules``
sobre este paquete solo ve temas (y ``quiz``).
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
