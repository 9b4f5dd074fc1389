"""El registro de los ejercicios y el resumen de progreso.

- :func:`exercise` decora cada comprobación: la registra (módulo, ejercicio,
  aspecto), silencia avisos y stderr, convierte un ``NotImplementedError`` en
  un mensaje amable, pone las referencias de ``uses`` en lugar de las
  funciones de otros ejercicios y anota si pasó.
- :func:`exercises` y :func:`progress_summary` leen ese registro. El tema de
  cada módulo sale de ``helpers.topics.TOPICS``: el resumen importa solo las
  comprobaciones de ese tema (el de los bandidos no carga PyTorch).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
import io
import json
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from helpers.checks.core.mistakes import CheckError
from helpers.topics import topic

F = TypeVar("F", bound=Callable[..., None])


@dataclass(frozen=True)
class Exercise:
    """Un ejercicio con comprobación visible."""

    module: str
    key: str
    title: str


_EXERCISES: dict[str, dict[str, Exercise]] = {}
#: Las comprobaciones de cada ejercicio: una por celda calificada (un aspecto).
_CHECKS: dict[tuple[str, str], list[str]] = {}
#: El resultado de la última ejecución de cada comprobación: ``None`` si pasó,
#: o el mensaje del fallo.
_RESULTS: dict[tuple[str, str, str], str | None] = {}


@contextlib.contextmanager
def references_in_place_of(
    function: Callable[..., Any], uses: Mapping[str, Callable[..., Any]]
) -> Iterator[None]:
    """Mientras dura el bloque, ``function`` ve las referencias de ``uses`` en
    sus globales (el cuaderno): un error en ``softmax`` no le cuesta puntos a
    ``gradient_bandit_update``, que la llama. Al salir, vuelve lo que había."""
    namespace = getattr(inspect.unwrap(function), "__globals__", None)
    if not uses or not isinstance(namespace, dict):
        yield
        return
    missing = object()
    saved = {name: namespace.get(name, missing) for name in uses}
    namespace.update({name: _on_copies(ref) for name, ref in uses.items()})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value


def _on_copies(reference: Callable[..., Any]) -> Callable[..., Any]:
    """``reference`` sobre copias de los arrays de NumPy que recibe: una
    referencia que modifica su entrada y la devuelve (``q_learning_update``)
    taparía a quien llama y no guarda lo devuelto. Los tensores pasan tal cual
    (uno con gradiente no debe cortarse del grafo)."""

    def copied(value: Any) -> Any:
        return value.copy() if isinstance(value, np.ndarray) else value

    @functools.wraps(reference)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        args = tuple(copied(a) for a in args)
        kwargs = {name: copied(value) for name, value in kwargs.items()}
        return reference(*args, **kwargs)

    return wrapped


#: Los títulos de los ejercicios, leídos de los cuadernos de ``solutions/``
#: por ``tools.exercise_titles`` (con ``make notebooks``).
TITLES = Path(__file__).resolve().parents[2] / "data" / "exercise_titles.json"


@functools.cache
def _titles() -> dict[str, dict[str, str]]:
    """Módulo → (clave del ejercicio → su título en el cuaderno), en orden."""
    return json.loads(TITLES.read_text(encoding="utf-8"))


def exercise_title(module: str, key: str) -> str:
    """El título del ejercicio ``key`` en el cuaderno de ``module``
    («Ejercicio 3 · GAE(γ, λ) hacia atrás sobre un bloque»); la clave, si el
    cuaderno no lo tiene."""
    return _titles().get(module, {}).get(key, key)


def _is_the_answer(student: Any, key: str) -> bool:
    """Si ``student`` es la respuesta del cuaderno al ejercicio ``key``: una
    función que no es la que el cuaderno llama ``key`` (otra versión que el
    estudiante prueba) no lo es. Una respuesta que no es una función (un
    número, un diccionario) o un ejercicio sin función de ese nombre, sí."""
    try:  # una respuesta rara (un __wrapped__ sin fin, un __getattr__ que lanza)
        namespace = getattr(inspect.unwrap(student), "__globals__", None)
        if not isinstance(namespace, dict) or key not in namespace:
            return True
        return namespace.get(key) is student
    except Exception:  # noqa: BLE001
        return True


def is_unsolved(function: Any) -> bool:
    """Si ``function`` es aún la plantilla del cuaderno (su cuerpo, sin la
    docstring, es solo ``raise NotImplementedError(...)``): así no se preparan
    casos caros para una función que va a lanzar. Ante la duda, no."""
    if not inspect.isfunction(function):
        return False
    try:
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return False
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = definition.body
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        body = body[1:]  # la docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return False
    raised = body[0].exc
    if isinstance(raised, ast.Call):
        raised = raised.func
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def exercise(
    module: str,
    key: str,
    aspect: str | None = None,
    *,
    uses: Mapping[str, Callable[..., Any]] | None = None,
) -> Callable[[F], F]:
    """Registra la comprobación del ejercicio ``key`` de ``module`` (el
    ``grade_id`` de su celda de solución) y anota si pasa, para el resumen.

    Imprime «✔ <título>: ¡correcto!» (:func:`exercise_title`, y ``aspect``
    entre paréntesis si el ejercicio tiene una celda calificada por aspecto).
    Silencia avisos y stderr: nbgrader contaría cualquier texto en stderr
    como un fallo. ``uses`` (``{"softmax": bandits.softmax}``): las funciones
    de otros ejercicios que la del estudiante llama, que durante la
    comprobación son la referencia: cada ejercicio se califica solo.
    """
    exercise_name = exercise_title(module, key)
    title = f"{exercise_name} ({aspect})" if aspect else exercise_name
    _EXERCISES.setdefault(module, {}).setdefault(
        key, Exercise(module, key, exercise_name)
    )
    references = dict(uses or {})

    def decorate(check: F) -> F:
        checks = _CHECKS.setdefault((module, key), [])
        if check.__name__ not in checks:
            checks.append(check.__name__)
        result = (module, key, check.__name__)

        @functools.wraps(check)
        def wrapper(*args: Any, quiet: bool = False, **kwargs: Any) -> None:
            student = args[0] if args else None
            # El resumen de progreso anota solo la respuesta del cuaderno: si
            # el estudiante prueba otra función suya con la comprobación, eso
            # no cambia lo que dice de su ejercicio.
            own = _is_the_answer(student, key)

            def record(outcome: str | None) -> None:
                if own:
                    _RESULTS[result] = outcome

            try:
                if is_unsolved(student):
                    raise NotImplementedError  # sin preparar los casos
                with (
                    warnings.catch_warnings(),
                    redirect_stderr(io.StringIO()),
                    references_in_place_of(student, references),
                ):
                    warnings.simplefilter("ignore")
                    check(*args, **kwargs)
            except CheckError as error:
                record(str(error))
                raise
            except NotImplementedError:
                message = (
                    f"Todavía no hay solución para «{title}»: la función lanza "
                    "NotImplementedError. Escribe tu código y borra la línea "
                    "`raise NotImplementedError(...)`."
                )
                record(message)
                raise CheckError(message) from None
            except Exception as error:
                # Un error dentro del código del estudiante: se deja subir con su
                # traza completa (es lo que más ayuda), pero queda anotado.
                record(f"tu código lanzó {type(error).__name__}: {error}")
                raise
            record(None)
            if not quiet:
                print(f"✔ {title}: ¡correcto!")

        return wrapper  # type: ignore[return-value]

    return decorate


def exercises(module: str) -> list[Exercise]:
    """Los ejercicios registrados de un módulo, en el orden del cuaderno. Se
    importa solo el tema del módulo: el resumen de los bandidos no carga
    PyTorch."""
    topic_name = topic(module)
    if topic_name is not None:
        importlib.import_module(f"helpers.checks.{topic_name}")
    registered = _EXERCISES.get(module, {})
    order = list(_titles().get(module, {}))
    return sorted(
        registered.values(),
        key=lambda ex: order.index(ex.key) if ex.key in order else len(order),
    )


class Progress(dict):
    """El resumen de progreso: un ``dict`` que el cuaderno no repite al mostrarlo.

    ``progress_summary`` ya lo ha impreso en prosa; sin esto, Jupyter añadiría
    debajo el ``{'clave': True, ...}`` de la última expresión de la celda.
    """

    def _ipython_display_(self) -> None:
        pass


def progress_summary(module: str) -> dict[str, bool | None]:
    """Imprime qué ejercicios del módulo pasan su comprobación visible.

    Solo cuenta lo ejecutado en esta sesión del kernel: si reinicias, vuelve a
    ejecutar las celdas de comprobación. Las pruebas ocultas no se ven aquí.

    Returns:
        Para cada ejercicio: ``True`` (pasa), ``False`` (falla) o ``None`` (sin
        ejecutar todavía).
    """
    summary: dict[str, bool | None] = Progress()
    if not exercises(module):
        print(f"{module} no tiene ejercicios con comprobación visible.")
        return summary
    print(f"Tu progreso en {module} (comprobaciones visibles de esta sesión):")
    for ex in exercises(module):
        # Un ejercicio con una celda calificada por aspecto pasa solo si pasan
        # todas sus comprobaciones, no la última que se ejecutó.
        names = _CHECKS.get((module, ex.key), [])
        ran = [
            (module, ex.key, name)
            for name in names
            if (module, ex.key, name) in _RESULTS
        ]
        errors = [_RESULTS[r] for r in ran if _RESULTS[r] is not None]
        if errors:
            summary[ex.key] = False
            first_line = errors[0].splitlines()[0]
            print(f"  ✘  {ex.title}: {first_line}")
        elif not ran:
            summary[ex.key] = None
            print(f"  ·  {ex.title}: sin comprobar todavía")
        elif len(ran) < len(names):
            summary[ex.key] = None
            print(
                f"  ·  {ex.title}: pasan {len(ran)} de {len(names)} "
                "comprobaciones; ejecuta las demás celdas de comprobación"
            )
        else:
            summary[ex.key] = True
            print(f"  ✔  {ex.title}")
    passed = sum(1 for ok in summary.values() if ok)
    print(f"{passed} de {len(summary)} ejercicios pasan su comprobación visible.")
    if passed == len(summary):
        print("¡Enhorabuena! Has completado el módulo.")
    return summary
