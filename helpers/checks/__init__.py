"""Comprobaciones visibles de los ejercicios, con diagnósticos en español.

Cada módulo del curso tiene aquí su submódulo (``helpers.checks.bandits``...).
Una comprobación recibe la función del estudiante, la prueba con casos fijos y,
si algo falla, lanza :class:`CheckError` (un ``AssertionError``) con un mensaje
que nombra el error típico que explica el resultado («¿olvidaste dividir por
n?»). Así nbgrader la cuenta como fallo y el estudiante sabe qué mirar.

Lo que vale para todos los ejercicios vive aquí, una sola vez:

- las entradas se pasan siempre como copias, y si la función del estudiante
  modifica una, el mensaje dice cuál (:func:`call`);
- un ejercicio que usa la función de otro se califica con la referencia de ese
  otro en su lugar, para no cobrar dos veces el mismo error
  (``exercise(..., uses=...)``);
- un resultado que no coincide se describe por dónde difiere (primera posición,
  esperado y obtenido, mayor diferencia) y por su síntoma (signo cambiado,
  redondeado, proporcional, otra forma), además de por el error típico;
- en Jupyter, un fallo se ve como el mensaje solo, sin la traza por dentro de
  ``helpers.checks`` (:meth:`CheckError._render_traceback_`).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import importlib
import inspect
import io
import json
import os
import pkgutil
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NoReturn, TypeVar

import numpy as np

from helpers.formatting import significant

F = TypeVar("F", bound=Callable[..., None])


#: Longitud máxima de un mensaje de comprobación, en caracteres.
MAX_MESSAGE = 1200


def plain_text(message: str) -> str:
    """Quita el Markdown que se imprimiría tal cual: ``**negrita**`` y ``*cursiva*``.

    Las fórmulas escritas con ``*`` entre espacios (``2 * x``) no se tocan.
    """
    message = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"\1", message)
    return re.sub(r"(?<![\w*])\*(\S(?:[^*\n]*?\S)?)\*(?![\w*])", r"\1", message)


def _cap(message: str, limit: int = MAX_MESSAGE) -> str:
    """Recorta un mensaje demasiado largo, y lo dice."""
    if len(message) <= limit:
        return message
    suffix = " … (mensaje recortado)"
    return message[: limit - len(suffix)].rstrip() + suffix


class CheckError(AssertionError):
    """Una comprobación falló; el mensaje explica por qué, en español.

    El mensaje se limpia de Markdown y se recorta a :data:`MAX_MESSAGE`
    caracteres. En Jupyter (IPython) se muestra solo el mensaje, sin la traza
    por dentro de ``helpers.checks``: es lo único que el estudiante necesita
    leer. Los errores de su propio código no pasan por aquí y conservan su
    traza completa.
    """

    def __init__(self, message: str = "", mistake: str | None = None) -> None:
        super().__init__(_cap(plain_text(str(message))))
        #: El id del error típico diagnosticado (una fila :class:`Mistake` o
        #: uno de los diagnósticos comunes, como ``"modified_input"``); los
        #: bancos de respuestas lo esperan. ``None``: un fallo sin diagnóstico
        #: con nombre.
        self.mistake = mistake

    def _render_traceback_(self) -> list[str]:
        """Lo que IPython muestra en lugar de la traza: el mensaje, en rojo."""
        lines = str(self).splitlines() or [""]
        red, bold, reset = "\x1b[31m", "\x1b[1m", "\x1b[0m"
        return [f"{red}{bold}✘ {lines[0]}{reset}"] + [
            f"{red}{line}{reset}" for line in lines[1:]
        ]


def fail(message: str, mistake: str | None = None) -> NoReturn:
    """Lanza :class:`CheckError` con ``message``: la única forma de fallar.

    ``mistake`` es el id del diagnóstico (ver :attr:`CheckError.mistake`).
    """
    raise CheckError(message, mistake)


@dataclass(frozen=True)
class Mistake:
    """Un error típico, como una fila de datos.

    - ``id``: su nombre estable (inglés, ``snake_case``, único en su
      ejercicio). Lo lleva el :class:`CheckError` que lo diagnostica, y es lo
      que esperan los bancos de respuestas (``tests/banks``): reescribir el
      mensaje no cambia qué se diagnostica.
    - ``variant``: lo que lo reproduce. Casi siempre, la implementación
      errónea (una función con la firma del ejercicio); en los ejercicios con
      estado, lo que entienda su ``run`` (ver :func:`check_procedure`).
    - ``message``: lo que se le dice al estudiante, en español.
    """

    id: str
    variant: Any
    message: str


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
    """Mientras dura el bloque, ``function`` ve las referencias de ``uses``.

    Un ejercicio cuya función llama a la de otro ejercicio (``softmax`` dentro
    de ``gradient_bandit_update``) se califica así por sí solo: un error en
    ``softmax`` no le cuesta puntos. Las referencias se ponen en el espacio de
    nombres donde la función busca sus globales (el del cuaderno) y al salir
    se devuelve lo que había.
    """
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
    """``reference``, trabajando sobre copias de los arrays de NumPy que recibe.

    Una referencia que modifica su entrada y además la devuelve (como
    ``q_learning_update``, que el enunciado deja hacer las dos cosas) taparía a
    quien llama y no guarda lo que devuelve: su tabla cambiaría igual. Con las
    copias, solo cuenta lo que devuelve, como con una respuesta del estudiante
    que no modifique su entrada. Los tensores y los generadores se pasan tal
    cual (un tensor con gradiente no debe cortarse del grafo).
    """

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
TITLES = Path(__file__).resolve().parent.parent / "data" / "exercise_titles.json"


@functools.cache
def _titles() -> dict[str, dict[str, str]]:
    """Módulo → (clave del ejercicio → su título en el cuaderno), en orden."""
    return json.loads(TITLES.read_text(encoding="utf-8"))


def exercise_title(module: str, key: str) -> str:
    """El título del ejercicio ``key`` en el cuaderno de ``module``
    («Ejercicio 3 · GAE(γ, λ) hacia atrás sobre un bloque»); la clave, si el
    cuaderno no lo tiene."""
    return _titles().get(module, {}).get(key, key)


def exercise(
    module: str,
    key: str,
    aspect: str | None = None,
    *,
    uses: Mapping[str, Callable[..., Any]] | None = None,
) -> Callable[[F], F]:
    """Registra una comprobación y anota si pasa, para el resumen de progreso.

    La comprobación decorada imprime «✔ <título>: ¡correcto!» si todo va
    bien; el título es el del ejercicio en el cuaderno
    (:func:`exercise_title`). Los avisos (``RuntimeWarning`` de NumPy, etc.) y
    lo que el código del estudiante escriba en stderr se silencian: nbgrader
    contaría cualquier texto en stderr como un fallo de la celda de pruebas.

    Args:
        module, key: el módulo y la clave del ejercicio (el ``grade_id`` de su
            celda de solución).
        aspect: lo que mira esta comprobación, si el ejercicio tiene una por
            celda calificada («el valor», «los gradientes»); sale entre
            paréntesis tras el título.
        uses: las funciones de otros ejercicios que la del estudiante puede
            llamar, con su referencia (``{"softmax": bandits.softmax}``).
            Durante la comprobación, la función del estudiante (el primer
            argumento) usa esas referencias: cada ejercicio se califica solo.
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
            try:
                with (
                    warnings.catch_warnings(),
                    redirect_stderr(io.StringIO()),
                    references_in_place_of(student, references),
                ):
                    warnings.simplefilter("ignore")
                    check(*args, **kwargs)
            except CheckError as error:
                _RESULTS[result] = str(error)
                raise
            except NotImplementedError:
                message = (
                    f"Todavía no hay solución para «{title}»: la función lanza "
                    "NotImplementedError. Escribe tu código y borra la línea "
                    "`raise NotImplementedError(...)`."
                )
                _RESULTS[result] = message
                raise CheckError(message) from None
            except Exception as error:
                # Un error dentro del código del estudiante: se deja subir con su
                # traza completa (es lo que más ayuda), pero queda anotado.
                _RESULTS[result] = f"tu código lanzó {type(error).__name__}: {error}"
                raise
            _RESULTS[result] = None
            if not quiet:
                print(f"✔ {title}: ¡correcto!")

        return wrapper  # type: ignore[return-value]

    return decorate


def exercises(module: str) -> list[Exercise]:
    """Los ejercicios registrados de un módulo, en el orden del cuaderno.

    Cada submódulo de ``helpers.checks`` registra los suyos al importarse. Solo
    se importan los que nombran el módulo en su código: así el resumen de los
    bandidos no carga PyTorch (lo cargan las comprobaciones de otros módulos).
    """
    for info in pkgutil.iter_modules(__path__):
        path = Path(__path__[0]) / f"{info.name}.py"
        if path.exists() and f'"{module}"' not in path.read_text(encoding="utf-8"):
            continue
        importlib.import_module(f"{__name__}.{info.name}")
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
            f"{type(value).__name__}: {value!r}.",
            "not_a_number",
        )
    return array


def python_number(value: Any, what: str, kind: str = "float") -> None:
    """Falla si ``value`` no es el número de Python que promete el enunciado.

    ``kind`` es ``"float"`` (vale cualquier número real: ``float``, ``int`` o
    un escalar de NumPy) o ``"int"`` (un entero de Python o de NumPy). Un
    tensor o un array, aunque tengan un solo elemento (0 dimensiones), no
    valen: quien usa el resultado como número (``f"{x:.2f}"``, ``json``,
    ``math.isclose``, una lista de floats) se encuentra otra cosa.
    """
    import numbers

    if kind == "int":
        if isinstance(value, numbers.Integral | np.bool_):
            return  # True y False también son 1 y 0 para Python
    elif isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
        return
    shown = "un `int`" if kind == "int" else "un `float`"
    if hasattr(value, "detach") or isinstance(value, np.ndarray):
        dims = getattr(value, "ndim", None)
        what_it_is = (
            f"un {'tensor' if hasattr(value, 'detach') else 'array'} de "
            f"{dims} dimensiones"
        )
        fix = " Conviértelo con .item()" + (
            " o int(...)." if kind == "int" else " o float(...)."
        )
    else:
        what_it_is = f"{type(value).__name__} ({value!r})"
        fix = ""
    fail(
        f"{what} es {what_it_is}, y el enunciado pide {shown} de Python.{fix}",
        "not_python_number",
    )


def tensor(values: Any, dtype: Any = None) -> Any:
    """``torch.tensor(values)`` en float32 (o ``dtype``): para escribir los
    casos de las comprobaciones con listas. Importa PyTorch solo al usarse."""
    import torch

    return torch.tensor(values, dtype=torch.float32 if dtype is None else dtype)


def as_int(value: Any, what: str) -> int:
    """Convierte a entero una acción (int, np.int64, tensor de un elemento)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, bool) or not float(value).is_integer():
        fail(
            f"{what} debería ser un entero (el índice de un brazo); es {value!r}.",
            "not_an_integer",
        )
    return int(value)


def close(
    actual: Any, expected: Any, *, atol: float = 1e-6, rtol: float = 1e-5
) -> bool:
    """¿Son ``actual`` y ``expected`` iguales (con tolerancia) y de igual forma?"""
    a = np.asarray(actual, dtype=float)
    b = np.asarray(expected, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=rtol))


def _show(value: np.ndarray) -> str:
    """Un valor corto entero; uno largo, por su forma (el detalle va en ``_where``)."""
    value = np.asarray(value, dtype=float)
    if value.ndim == 0:
        return significant(value)
    if value.size <= 8:
        flat = "; ".join(significant(v) for v in value.reshape(-1))
        return f"[{flat}]" if value.ndim == 1 else f"[{flat}] (forma {value.shape})"
    return f"un array de forma {value.shape}"


def _index(position: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(i)) for i in position) + "]"


def describe_difference(got: Any, want: Any, *, atol: float = 1e-6) -> str:
    """Dónde difieren dos arrays de la misma forma, en una o dos frases.

    Dice cuántas posiciones difieren, la primera (con lo esperado y lo
    obtenido) y la mayor diferencia, en vez de volcar las dos matrices.
    """
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    if got.ndim == 0:
        return f"devolvió {significant(got)}, pero debía ser {significant(want)}."
    with np.errstate(all="ignore"):
        bad = ~np.isclose(got, want, atol=atol, rtol=1e-5, equal_nan=True)
        gap = np.where(np.isnan(got) != np.isnan(want), np.inf, np.abs(got - want))
        gap = np.where(bad, np.nan_to_num(gap, nan=np.inf), 0.0)
    positions = np.argwhere(bad)
    first = tuple(positions[0])
    worst = np.unravel_index(int(np.argmax(gap)), gap.shape)
    text = (
        f"difiere en {len(positions)} de {got.size} posiciones. "
        f"La primera es {_index(first)}: debía ser {significant(want[first])} y es "
        f"{significant(got[first])}."
    )
    if tuple(worst) != first:
        text += (
            f" La mayor diferencia está en {_index(worst)}: debía ser "
            f"{significant(want[worst])} y es {significant(got[worst])}."
        )
    if got.size <= 8:
        text = f"devolvió {_show(got)}, pero debía ser {_show(want)}: " + text
    else:
        text = "devuelve un array que " + text
    return text


def compare_parameters(
    got: Mapping[str, Any],
    want: Mapping[str, Any],
    *,
    what: str,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    mistake: str = "wrong_parameters",
) -> None:
    """Falla si dos juegos de parámetros (``state_dict`` o diccionarios de
    arrays) no coinciden, diciendo cuál difiere primero y dónde.

    Sirve para calificar un bucle de entrenamiento escrito por el estudiante:
    se ejecutan unas actualizaciones con la misma semilla que la referencia y
    se comparan los parámetros que quedan, de forma exacta (con la tolerancia
    del float32), no «¿ha aprendido?». ``what`` dice qué se comparó («la red
    tras 3 actualizaciones»); ``mistake``, el id del fallo
    (:attr:`CheckError.mistake`).
    """
    missing = sorted(set(want) - set(got))
    if missing:
        fail(f"A {what} le faltan parámetros: {', '.join(missing)}.", mistake)
    for name, reference in want.items():
        value = as_array(got[name], name)
        expected = as_array(reference, name)
        if value.shape != expected.shape:
            fail(
                f"En {what}, «{name}» tiene forma {value.shape} y debía tener "
                f"{expected.shape}.",
                mistake,
            )
        if not np.allclose(value, expected, atol=atol, rtol=rtol, equal_nan=True):
            # «El parámetro devuelve un array que difiere» no se lee bien: un
            # parámetro no devuelve nada, vale algo.
            difference = describe_difference(value, expected, atol=atol)
            difference = difference.replace(
                "devuelve un array que difiere", "difiere", 1
            ).replace("devolvió ", "vale ", 1)
            fail(f"En {what}, el parámetro «{name}» {difference}", mistake)


def same_parameters(
    got: Mapping[str, Any],
    want: Mapping[str, Any],
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> bool:
    """¿Los mismos pesos (dos ``state_dict``) con la tolerancia de
    :func:`compare_parameters`? Sirve para reconocer un error típico sin fallar."""
    return all(
        _torch().allclose(got[name].float(), want[name].float(), atol=atol, rtol=rtol)
        for name in want
    )


def _same(a: Any, b: Any, atol: float, rtol: float = 1e-5) -> bool:
    """¿Coinciden dos salidas? NaN coincide con NaN y un error con otro del mismo
    tipo (para comparar huellas)."""
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        return type(a) is type(b)
    try:
        a = as_array(a, "")
        b = as_array(b, "")
    except CheckError:
        return False
    return a.shape == b.shape and bool(
        np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True)
    )


# ---------------------------------------------------------------------------
# Llamar a la función del estudiante sin que toque sus entradas
# ---------------------------------------------------------------------------


def _torch() -> Any:
    """PyTorch si ya está cargado, o ``None``: sin él no puede haber tensores, y
    así las comprobaciones de un cuaderno sin redes (01) no lo cargan."""
    return sys.modules.get("torch")


def _differs(before: Any, after: Any) -> bool:
    """¿Cambió ``after`` respecto a su copia ``before``? (arrays, tensores,
    listas, tuplas, diccionarios, redes y dataclasses; lo demás no cuenta)."""
    torch = _torch()
    if torch is not None and isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor) or before.shape != after.shape:
            return True
        if before.dtype != after.dtype:
            return True
        b, a = before.detach(), after.detach()
        if b.is_floating_point() or b.is_complex():
            return not bool(torch.equal(b.isnan(), a.isnan())) or not bool(
                torch.equal(b.nan_to_num(), a.nan_to_num())
            )
        return not bool(torch.equal(b, a))
    if torch is not None and isinstance(before, torch.nn.Module):
        return _differs(before.state_dict(), after.state_dict())
    if isinstance(before, np.ndarray):
        if not isinstance(after, np.ndarray) or before.shape != after.shape:
            return True
        try:
            return not np.array_equal(before, after, equal_nan=True)
        except TypeError:
            return not np.array_equal(before, after)
    if isinstance(before, list | tuple):
        return len(before) != len(after) or any(
            _differs(b, a) for b, a in zip(before, after, strict=False)
        )
    if isinstance(before, dict):
        return before.keys() != after.keys() or any(
            _differs(before[k], after[k]) for k in before
        )
    if dataclasses.is_dataclass(before) and not isinstance(before, type):
        return _differs(vars(before), vars(after))
    return False


def _parameter(function: Callable[..., Any], index: int) -> str:
    """El nombre del argumento ``index`` de ``function`` («el argumento n.º 2»)."""
    try:
        names = [
            p.name
            for p in inspect.signature(function).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        names = []
    if index < len(names):
        return f"«{names[index]}»"
    return f"n.º {index + 1}"


def _is_generator(value: Any) -> bool:
    """¿Es un generador de números aleatorios? Esos se comparten, no se copian:
    la función tiene que avanzar el del que llama."""
    torch = _torch()
    return isinstance(value, np.random.Generator | np.random.RandomState) or (
        torch is not None and isinstance(value, torch.Generator)
    )


def _copies(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Copias profundas de los argumentos, salvo los generadores aleatorios."""
    memo = {id(a): a for a in args if _is_generator(a)}
    return tuple(copy.deepcopy(a, memo) for a in args)


def call(
    function: Callable[..., Any],
    name: str,
    *args: Any,
    may_modify: Iterable[int] = (),
) -> Any:
    """Llama a ``function(*args)`` con copias y comprueba que no las modificó.

    Quien llama a una función espera seguir teniendo sus datos como estaban: un
    ``+=`` sobre el array que recibiste cambia también el del que llama, y ese
    error no se ve en el valor devuelto. Aquí se ve: si una entrada cambió, se
    falla con un mensaje que nombra el argumento.

    Args:
        function: la función del estudiante.
        name: su nombre, para el mensaje.
        *args: los argumentos; ``function`` recibe copias profundas (salvo
            los generadores aleatorios, que comparte con quien llama).
        may_modify: posiciones de argumentos que el enunciado deja modificar.

    Returns:
        Lo que devuelva ``function``.
    """
    allowed = set(may_modify)
    torch = _torch()
    originals = _copies(args)
    given = _copies(args)
    result = function(*given)
    for index, (before, after) in enumerate(zip(originals, given, strict=True)):
        if index in allowed or not _differs(before, after):
            continue
        is_tensor = torch is not None and isinstance(before, torch.Tensor)
        fix = "x = x.clone()" if is_tensor else "x = x.copy()"
        fail(
            f"{name} modificó su argumento {_parameter(function, index)}: al "
            "volver, la entrada ya no era la que le pasamos (¿un +=, -=, *= o "
            "una asignación a una posición, como x[i] = ...?). Quien llama a tu "
            "función sigue usando ese dato. Calcula sobre una copia "
            f"({fix}, o x = x + ... en vez de x += ...) y devuelve el resultado.",
            "modified_input",
        )
    return result


class _StudentOrReference:
    """Llama a la función del cuaderno que se llama ``name`` en ese momento; si
    lanza ``NotImplementedError``, a la referencia (con una nota por celda)."""

    def __init__(
        self, namespace: Mapping[str, Any], name: str, reference: Callable[..., Any]
    ) -> None:
        self.namespace = namespace
        self.name = name
        self.reference = reference
        self._noted: set[Any] = set()
        self.__name__ = name
        self.__doc__ = getattr(reference, "__doc__", None)

    def _note(self) -> None:
        # Una nota por ejecución de celda (en Jupyter) o una sola (fuera).
        shell = sys.modules.get("IPython")
        ipython = shell.get_ipython() if shell is not None else None
        cell = getattr(ipython, "execution_count", None)
        if cell in self._noted:
            return
        self._noted.add(cell)
        print(
            f"Nota: {self.name} aún no está escrita; esta demo usa la "
            "implementación de referencia. Cuando la escribas, vuelve a ejecutar "
            "esta celda para ver la tuya."
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        function = self.namespace.get(self.name)
        # Al calificar, las demos no cuentan: sin respaldo, falla enseguida (y
        # no se gasta tiempo ejecutando la referencia en cada entrega).
        grading = os.environ.get("NBGRADER_EXECUTION") == "autograde"
        if callable(function) and function is not self:
            try:
                return function(*args, **kwargs)
            except NotImplementedError:
                if grading:
                    raise
        elif grading:
            raise NotImplementedError(f"{self.name} aún no está escrita.")
        self._note()
        return self.reference(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.name} del cuaderno, o la de referencia si aún no está>"


def demo_functions(
    namespace: Mapping[str, Any], **references: Callable[..., Any]
) -> SimpleNamespace:
    """Las funciones del estudiante para las demos, con la referencia de respaldo.

    Con ``demo = demo_functions(globals(), softmax=bandits.softmax)`` (en la
    preparación), ``demo.softmax(...)`` llama a la ``softmax`` que el cuaderno
    tenga definida en ese momento; si aún lanza ``NotImplementedError`` (el
    ejercicio está sin hacer), usa la de referencia e imprime una nota. Así
    «Run All» llega al final del cuaderno aunque falten ejercicios. Cualquier
    otro error de la función del estudiante sí se ve: es una pista. Los
    nombres del cuaderno no se tocan: la comprobación de cada ejercicio sigue
    viendo solo la función del estudiante.

    Args:
        namespace: el espacio de nombres del cuaderno (``globals()``).
        **references: nombre del ejercicio → su implementación de referencia.
    """
    return SimpleNamespace(
        **{
            name: _StudentOrReference(namespace, name, reference)
            for name, reference in references.items()
        }
    )


def _outputs(
    function: Callable[..., Any],
    cases: list[tuple[Any, ...]],
    name: str | None = None,
    may_modify: Iterable[int] = (),
) -> list[Any]:
    """Las salidas de ``function`` en cada caso; un error cuenta como salida.

    Con ``name`` (la función del estudiante), cada llamada pasa por
    :func:`call`, que falla si la función modifica sus entradas.
    """
    outputs: list[Any] = []
    for args in cases:
        try:
            with np.errstate(all="ignore"):
                if name is None:
                    result = function(*copy.deepcopy(args))
                else:
                    # Una copia propia del caso (también de sus generadores):
                    # la referencia y cada error típico lo ven igual.
                    fresh = copy.deepcopy(args)
                    result = call(function, name, *fresh, may_modify=may_modify)
        except (NotImplementedError, CheckError):
            raise
        except Exception as error:
            outputs.append(error)
            continue
        outputs.append(result)
    return outputs


# ---------------------------------------------------------------------------
# Diagnosticar por síntoma
# ---------------------------------------------------------------------------


def _symptom(raw: Any, got: np.ndarray, want: np.ndarray) -> tuple[str, str] | None:
    """Un síntoma reconocible en un resultado que no coincide, como
    ``(id, mensaje)``, o ``None``.

    Son errores de cualquier ejercicio: un signo cambiado, un redondeo o una
    acumulación en enteros, un factor de más o de menos, otra forma.
    """
    if got.shape != want.shape:
        if got.shape == want.shape[::-1] and got.ndim > 1:
            return "transposed", "Tiene la forma traspuesta: ¿intercambiaste dos ejes?"
        if got.ndim > want.ndim and got.shape[-want.ndim or None :] == want.shape:
            return (
                "extra_dimensions",
                "Tiene más dimensiones de las debidas: ¿se mezclaron por "
                "broadcasting un (n,) y un (n, 1)?",
            )
        if got.ndim == 0 and want.ndim > 0:
            return "scalar", "Devolviste un solo número: ¿sumaste o promediaste de más?"
        if got.size == want.size:
            return (
                "reshaped",
                "Tiene los valores que tocan pero otra forma: revisa el reshape.",
            )
        return None
    torch = _torch()
    if want.size == 0 or not np.isfinite(want).all() or not np.isfinite(got).all():
        return None
    if torch is not None and isinstance(raw, torch.Tensor):
        integer_output = not (raw.is_floating_point() or raw.is_complex())
    else:
        try:
            integer_output = np.asarray(raw).dtype.kind in "iub"
        except (TypeError, ValueError, RuntimeError):
            integer_output = False
    if integer_output and not np.allclose(want, np.round(want)):
        return (
            "integer_dtype",
            "Tu resultado es de enteros, y los decimales se pierden: ¿un array "
            "creado con np.zeros_like de una entrada entera, dtype=int o int()? "
            "Acumula en floats.",
        )
    scale = float(np.abs(want).max())
    if scale > 0 and np.allclose(got, -want, atol=1e-6, rtol=1e-5):
        return "sign", "Sale justo con el signo cambiado: ¿un signo al revés?"
    for decimals in (0, 1, 2, 3):
        scaled = got * 10.0**decimals
        on_grid = np.allclose(scaled, np.round(scaled), atol=1e-6)
        near = np.all(np.abs(got - want) <= 0.5 * 10.0**-decimals + 1e-9)
        if on_grid and near and not np.allclose(got, want, atol=1e-9):
            return (
                "rounded",
                f"Parece redondeado a {decimals} decimales: no redondees (round, "
                "np.round, int) antes de devolver; la comprobación compara con "
                "todas las cifras.",
            )
    nonzero = np.abs(want) > 1e-9
    if nonzero.sum() >= 2 and np.allclose(got[~nonzero], 0.0, atol=1e-9):
        ratios = got[nonzero] / want[nonzero]
        ratio = float(np.median(ratios))
        if (
            abs(ratio - 1) > 1e-3
            and abs(ratio) > 1e-6
            and np.allclose(ratios, ratio, rtol=1e-4)
        ):
            return (
                "proportional",
                f"Sale proporcional al correcto (× {significant(ratio)} en todas las "
                "posiciones): ¿falta o sobra un factor, o una media en vez de una "
                "suma?",
            )
    return None


#: Lo que se le dice a quien combina dos tensores cuyas formas no se difunden.
BROADCAST_HINT = (
    "Dos tensores de formas que no encajan: PyTorch no puede difundir uno sobre "
    "el otro (broadcasting). Si restas o divides por un resumen de cada fila "
    "(una media, una desviación, un máximo), pide que conserve su eje con "
    "keepdim=True: x.mean(dim=-1, keepdim=True) tiene forma (P, 1) y se "
    "difunde sobre las columnas de cada fila."
)


def check_cases(
    function: Callable[..., Any],
    name: str,
    cases: Iterable[tuple[Any, ...]],
    reference: Callable[..., Any],
    mistakes: Iterable[Mistake] = (),
    *,
    atol: float = 1e-6,
    may_modify: Iterable[int] = (),
    returns: str | None = None,
) -> None:
    """Compara ``function`` con ``reference`` en ``cases`` y diagnostica el fallo.

    La función del estudiante recibe copias de cada caso y falla si modifica
    alguna (salvo las posiciones de ``may_modify``). Si la respuesta no
    coincide, el mensaje dice dónde difiere y busca qué la explica:

    1. el error típico cuya «huella» (sus salidas en todos los casos) es la del
       estudiante;
    2. si ninguno coincide del todo, el que da lo mismo que el estudiante en el
       caso que falla y en la mayoría de los demás casos que fallan (el mismo
       error escrito de otra manera suele diferir solo en algún caso límite);
    3. si no, un síntoma general: signo cambiado, redondeo, enteros, un factor,
       otra forma.

    Args:
        function: la función del estudiante.
        name: su nombre, para los mensajes.
        cases: tuplas de argumentos posicionales (no se modifican).
        reference: la implementación correcta.
        mistakes: los errores típicos (:class:`Mistake`), cada uno con la
            implementación errónea como ``variant``.
        atol: tolerancia absoluta de la comparación.
        may_modify: posiciones de argumentos que el enunciado deja modificar.
        returns: ``"float"`` o ``"int"`` si el enunciado promete un número de
            Python (ver :func:`python_number`); ``None``: no se mira el tipo.
            Se mira cuando los valores ya coinciden.
    """
    cases = list(cases)
    may_modify = tuple(may_modify)
    outputs = _outputs(function, cases, name, may_modify)
    raw_outputs = list(outputs)
    expected = [as_array(reference(*copy.deepcopy(a)), "La referencia") for a in cases]
    failing: list[int] = []
    for index, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        if not isinstance(got, BaseException):
            got = as_array(got, f"El resultado de {_call(name, cases[index])}")
            outputs[index] = got
            if close(got, want, atol=atol):
                continue
        failing.append(index)
    if not failing:
        # Los valores están bien; el tipo, solo si el enunciado lo promete (un
        # valor equivocado se diagnostica antes, por su error típico).
        for args, got in zip(cases, raw_outputs, strict=True):
            if returns is not None:
                python_number(got, f"El resultado de {_call(name, args)}", returns)
        return
    index = failing[0]
    got, want = outputs[index], expected[index]
    call_text = _call(name, cases[index])
    if isinstance(got, BaseException):
        intro = f"{call_text} lanzó {type(got).__name__}: {got}"
    elif got.shape != want.shape:
        intro = (
            f"{call_text} devolvió algo de forma {got.shape}, pero debía tener "
            f"forma {want.shape}."
        )
    else:
        intro = f"{call_text} {describe_difference(got, want, atol=atol)}"
    rows = list(mistakes)
    mistake = _matching_mistake(outputs, rows, cases, failing, atol)
    if mistake is not None:
        fail(f"{intro}\n{mistake.message}", mistake.id)
    # Un síntoma general.
    if isinstance(got, RuntimeError) and "must match the size" in str(got):
        fail(f"{intro}\n{BROADCAST_HINT}", "broadcast")
    if isinstance(got, BaseException):
        fail(intro, "raised")
    if np.isnan(got).any() and not np.isnan(want).any():
        fail(
            f"{intro}\nAparece NaN: busca una división por cero o un exp que desborda.",
            "nan",
        )
    symptom = _symptom(raw_outputs[index], got, want)
    if symptom is not None:
        fail(f"{intro}\n{symptom[1]}", symptom[0])
    fail(intro, "wrong_value")


def _matching_mistake(
    outputs: list[Any],
    mistakes: list[Mistake],
    cases: list[tuple[Any, ...]],
    failing: list[int],
    atol: float,
) -> Mistake | None:
    """El error típico que explica ``outputs`` (las salidas del estudiante en
    ``cases``; ``failing``: los casos que no coinciden con la referencia).

    1. El que da lo mismo en todos los casos.
    2. Si no, el que da lo mismo en el primer caso que falla y en la mayoría
       de los que fallan (con una tolerancia algo más ancha).
    """
    fingerprints = [_outputs(mistake.variant, cases) for mistake in mistakes]
    for mistake, fingerprint in zip(mistakes, fingerprints, strict=True):
        if all(_same(o, f, atol) for o, f in zip(outputs, fingerprint, strict=True)):
            return mistake
    if isinstance(outputs[failing[0]], BaseException):
        return None
    best, best_score = None, 0
    for mistake, fingerprint in zip(mistakes, fingerprints, strict=True):
        agree = [_same(outputs[i], fingerprint[i], 1e-4, 1e-3) for i in failing]
        score = sum(agree)
        if agree[0] and 2 * score > len(failing) and score > best_score:
            best, best_score = mistake, score
    return best


def check_procedure(
    student: Callable[..., Any],
    reference: Callable[..., Any],
    mistakes: Iterable[Mistake],
    *,
    run: Callable[[Any], Any],
    same: Callable[[Any, Any], bool],
    describe: Callable[[Any, Any], str],
    same_as_mistake: Callable[[Any, Any], bool] | None = None,
    unexplained: Callable[[Any, Any], bool | None] | None = None,
) -> Any:
    """El procedimiento común de los ejercicios con estado (una actualización,
    un episodio, un bucle de entrenamiento): ejecutar, comparar, y si no
    coincide, buscar el error típico que lo explica.

    - ``run(implementation)`` ejecuta una implementación (la del estudiante,
      la de referencia o el ``variant`` de un :class:`Mistake`) sobre el
      mismo caso, desde el mismo estado, y devuelve lo que se compara.
    - ``same(got, want)`` dice si dos resultados son iguales;
      ``same_as_mistake`` (por defecto, ``same``) si el del estudiante es el
      de un error típico (puede mirar más cosas: la norma del gradiente que
      queda, por ejemplo).
    - ``describe(got, want)`` dice en español qué salió distinto; va delante
      del mensaje del error típico (``""``: el mensaje solo).
    - ``unexplained(got, want)``, si se da, falla cuando ningún error típico
      coincide, con un diagnóstico propio del ejercicio (dónde difieren los
      parámetros, un síntoma que solo se ve en este caso…). Si devuelve
      ``True``, el resultado se da por bueno: su comparación, con su propia
      tolerancia, no ve diferencia. Si vuelve sin más, o no se da, se falla
      con ``describe`` y el id ``"wrong_result"``.

    Si coincide, devuelve el resultado del estudiante (para comprobaciones
    extra, como el tipo de lo que devuelve). Si no, falla con el mensaje del
    primer error típico que da lo mismo que el estudiante, y con su id.
    """
    got, want = run(student), run(reference)
    if same(got, want):
        return got
    matches = same_as_mistake or same
    for mistake in mistakes:
        if matches(got, run(mistake.variant)):
            header = describe(got, want)
            message = f"{header}\n{mistake.message}" if header else mistake.message
            fail(message, mistake.id)
    if unexplained is not None and unexplained(got, want):
        return got
    fail(
        describe(got, want) or "El resultado no es el de la referencia.", "wrong_result"
    )


def _call(name: str, args: tuple[Any, ...]) -> str:
    """``name(args...)`` tal como lo escribiría el estudiante (abreviado si es
    largo: los arrays grandes se nombran por su forma)."""

    torch = _torch()

    def show(value: Any) -> str:
        if torch is not None and isinstance(value, torch.Tensor):
            if value.numel() > 8:
                return f"<tensor de forma {tuple(value.shape)}>"
            return "torch.tensor(" + repr(value.detach().tolist()) + ")"
        if isinstance(value, np.ndarray):
            if value.size > 12:
                return f"<array de forma {value.shape}>"
            return "np.array(" + np.array2string(value, separator=", ") + ")"
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "…"

    return f"{name}({', '.join(show(a) for a in args)})"
