"""Comprobaciones visibles de los ejercicios, con diagnósticos en español.

Cada módulo del curso tiene aquí su submódulo (``helpers.checks.bandits``...).
Una comprobación recibe la función del estudiante, la prueba con casos fijos y,
si algo falla, lanza :class:`CheckError` (un ``AssertionError``) con un mensaje
que nombra el error típico que explica el resultado («¿olvidaste dividir por
n?»). Así nbgrader la cuenta como fallo y el estudiante sabe qué mirar.
"""

from __future__ import annotations

import copy
import functools
import importlib
import io
import pkgutil
import warnings
from collections.abc import Callable, Iterable
from contextlib import redirect_stderr
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., None])


class CheckError(AssertionError):
    """Una comprobación falló; el mensaje explica por qué, en español."""


def fail(message: str) -> NoReturn:
    """Lanza :class:`CheckError` con ``message``: la única forma de fallar."""
    raise CheckError(message)


@dataclass(frozen=True)
class Exercise:
    """Un ejercicio con comprobación visible."""

    module: str
    key: str
    title: str


_EXERCISES: dict[str, dict[str, Exercise]] = {}
_RESULTS: dict[tuple[str, str], str | None] = {}


def exercise(module: str, key: str, title: str) -> Callable[[F], F]:
    """Registra una comprobación y anota si pasa, para el resumen de progreso.

    La comprobación decorada imprime «✔ ...» si todo va bien. Los avisos
    (``RuntimeWarning`` de NumPy, etc.) y lo que el código del estudiante
    escriba en stderr se silencian: nbgrader contaría cualquier texto en
    stderr como un fallo de la celda de pruebas.
    """
    info = Exercise(module, key, title)
    _EXERCISES.setdefault(module, {})[key] = info

    def decorate(check: F) -> F:
        @functools.wraps(check)
        def wrapper(*args: Any, quiet: bool = False, **kwargs: Any) -> None:
            try:
                with warnings.catch_warnings(), redirect_stderr(io.StringIO()):
                    warnings.simplefilter("ignore")
                    check(*args, **kwargs)
            except CheckError as error:
                _RESULTS[(module, key)] = str(error)
                raise
            except NotImplementedError:
                message = (
                    f"Todavía no hay solución para «{title}»: la función lanza "
                    "NotImplementedError. Escribe tu código y borra la línea "
                    "`raise NotImplementedError(...)`."
                )
                _RESULTS[(module, key)] = message
                raise CheckError(message) from None
            except Exception as error:
                # Un error dentro del código del estudiante: se deja subir con su
                # traza completa (es lo que más ayuda), pero queda anotado.
                _RESULTS[(module, key)] = (
                    f"tu código lanzó {type(error).__name__}: {error}"
                )
                raise
            _RESULTS[(module, key)] = None
            if not quiet:
                print(f"✔ {title}: ¡correcto!")

        return wrapper  # type: ignore[return-value]

    return decorate


def exercises(module: str) -> list[Exercise]:
    """Los ejercicios registrados de un módulo, en el orden del cuaderno.

    Cada submódulo de ``helpers.checks`` registra los suyos al importarse.
    """
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return list(_EXERCISES.get(module, {}).values())


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
    for number, ex in enumerate(exercises(module), start=1):
        if (module, ex.key) not in _RESULTS:
            summary[ex.key] = None
            print(f"  ·  {number}. {ex.title}: sin comprobar todavía")
            continue
        error = _RESULTS[(module, ex.key)]
        summary[ex.key] = error is None
        if error is None:
            print(f"  ✔  {number}. {ex.title}")
        else:
            first_line = error.splitlines()[0]
            print(f"  ✘  {number}. {ex.title}: {first_line}")
    passed = sum(1 for ok in summary.values() if ok)
    print(f"{passed} de {len(summary)} ejercicios pasan su comprobación visible.")
    if passed == len(summary):
        print("¡Enhorabuena! Has completado el módulo.")
    return summary


# ---------------------------------------------------------------------------
# Herramientas comunes para escribir comprobaciones
# ---------------------------------------------------------------------------


def as_array(value: Any, what: str) -> np.ndarray:
    """Convierte listas, arrays o tensores a ``np.ndarray`` de floats."""
    if hasattr(value, "detach"):  # tensor de PyTorch
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        fail(
            f"{what} debería ser un número o un array de números, pero es "
            f"{type(value).__name__}: {value!r}."
        )
    return array


def as_int(value: Any, what: str) -> int:
    """Convierte a entero una acción (int, np.int64, tensor de un elemento)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, bool) or not float(value).is_integer():
        fail(f"{what} debería ser un entero (el índice de un brazo); es {value!r}.")
    return int(value)


def close(
    actual: Any, expected: Any, *, atol: float = 1e-6, rtol: float = 1e-5
) -> bool:
    """¿Son ``actual`` y ``expected`` iguales (con tolerancia) y de igual forma?"""
    a = np.asarray(actual, dtype=float)
    b = np.asarray(expected, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=rtol))


def _show(value: np.ndarray) -> str:
    if value.ndim == 0:
        return f"{float(value):.6g}"
    return np.array2string(value, precision=4, separator=", ", max_line_width=88)


def _same(a: Any, b: Any, atol: float) -> bool:
    """¿Coinciden dos salidas? NaN coincide con NaN y un error con otro del mismo
    tipo (para comparar huellas)."""
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        return type(a) is type(b)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, equal_nan=True))


def _outputs(function: Callable[..., Any], cases: list[tuple[Any, ...]]) -> list[Any]:
    """Las salidas de ``function`` en cada caso; un error cuenta como salida."""
    outputs: list[Any] = []
    for args in cases:
        try:
            with np.errstate(all="ignore"):
                result = function(*copy.deepcopy(args))
        except NotImplementedError:
            raise
        except Exception as error:
            outputs.append(error)
            continue
        outputs.append(result)
    return outputs


def check_cases(
    function: Callable[..., Any],
    name: str,
    cases: Iterable[tuple[Any, ...]],
    reference: Callable[..., Any],
    mistakes: Iterable[tuple[Callable[..., Any], str]] = (),
    *,
    atol: float = 1e-6,
) -> None:
    """Compara ``function`` con ``reference`` en ``cases`` y diagnostica el fallo.

    Si la respuesta no coincide, se busca el error típico cuya «huella» (sus
    salidas en todos los casos) coincide con la del estudiante, y su mensaje
    se muestra junto al primer caso que falla.

    Args:
        function: la función del estudiante.
        name: su nombre, para los mensajes.
        cases: tuplas de argumentos posicionales (no se modifican).
        reference: la implementación correcta.
        mistakes: pares ``(implementación_errónea, mensaje)``.
    """
    cases = list(cases)
    outputs = _outputs(function, cases)
    expected = [np.asarray(reference(*copy.deepcopy(a)), dtype=float) for a in cases]
    for index, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        if isinstance(got, BaseException):
            break
        got = as_array(got, f"El resultado de {_call(name, cases[index])}")
        outputs[index] = got
        if not close(got, want, atol=atol):
            break
    else:
        return
    call = _call(name, cases[index])
    if isinstance(got, BaseException):
        intro = f"{call} lanzó {type(got).__name__}: {got}"
    elif got.shape != want.shape:
        fail(
            f"{call} devolvió algo de forma {got.shape}, pero debía tener forma "
            f"{want.shape}."
        )
    else:
        intro = f"{call} devolvió {_show(got)}, pero debía ser {_show(want)}."
    for mistake, message in mistakes:
        fingerprint = _outputs(mistake, cases)
        if all(_same(o, f, atol) for o, f in zip(outputs, fingerprint, strict=True)):
            fail(f"{intro}\n{message}")
    if not isinstance(got, BaseException) and np.isnan(got).any():
        fail(
            f"{intro}\nAparece NaN: busca una división por cero o un exp que desborda."
        )
    fail(intro)


def _call(name: str, args: tuple[Any, ...]) -> str:
    """``name(args...)`` tal como lo escribiría el estudiante."""

    def show(value: Any) -> str:
        if isinstance(value, np.ndarray):
            return "np.array(" + np.array2string(value, separator=", ") + ")"
        return repr(value)

    return f"{name}({', '.join(show(a) for a in args)})"
