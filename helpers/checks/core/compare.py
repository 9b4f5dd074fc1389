"""Comparar resultados y describir en qué difieren.

- :func:`as_array`, :func:`as_int`, :func:`as_tuple`, :func:`python_number`:
  lo que devolvió el estudiante, como lo que se compara (o un fallo que dice
  por qué no lo es).
- :func:`close` y :func:`describe_difference`: ¿coinciden?, y si no, dónde
  difieren (cuántas posiciones, la primera y la mayor diferencia).
- :func:`compare_parameters` y :func:`same_parameters`: dos juegos de pesos.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from helpers.checks.core.mistakes import CheckError, fail
from helpers.formatting import significant


def _torch() -> Any:
    """PyTorch si ya está cargado, o ``None``: sin él no puede haber tensores, y
    así las comprobaciones de un cuaderno sin redes (01) no lo cargan."""
    return sys.modules.get("torch")


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


def as_tuple(value: Any, n: int, promised: str, *, mistake: str) -> tuple[Any, ...]:
    """``value`` si es una tupla (o lista) de ``n`` cosas; si no, falla con el id
    ``mistake`` (con nombre: así lo ven las pruebas de los bancos): ``promised``
    («f debe devolver dos cosas, (a, b)») y qué devolvió."""
    if isinstance(value, tuple | list):
        if len(value) == n:
            return tuple(value)
        kind = "una tupla" if isinstance(value, tuple) else "una lista"
        what = f"{kind} de {len(value)} elemento{'' if len(value) == 1 else 's'}"
    else:
        what = "None (¿falta el return?)" if value is None else type(value).__name__
    fail(f"{promised}; devolvió {what}.", mistake)


def python_number(value: Any, what: str, kind: str = "float") -> None:
    """Falla si ``value`` no es el número de Python que promete el enunciado:
    ``kind="float"`` (un real de Python o un escalar de NumPy) o ``"int"`` (un
    entero). Un tensor o array de un elemento no vale: quien usa el resultado
    como número (``f"{x:.2f}"``, ``json``) se encuentra otra cosa."""
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
    """Dónde difieren dos arrays de la misma forma, en una o dos frases:
    cuántas posiciones, la primera y la mayor diferencia (no las matrices)."""
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
        text = "devuelve un resultado que " + text
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
    """Falla con el id ``mistake`` si dos juegos de parámetros (``state_dict``
    o diccionarios de arrays) no coinciden, diciendo cuál difiere y dónde.
    Califica un bucle de entrenamiento por los pesos que deja con la semilla
    de la referencia (con la tolerancia del float32), no por «¿ha aprendido?».
    ``what`` dice qué se comparó («la red tras 3 actualizaciones»)."""
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
            # «El parámetro devuelve un resultado que difiere» no se lee bien: un
            # parámetro no devuelve nada, vale algo.
            difference = describe_difference(value, expected, atol=atol)
            difference = difference.replace(
                "devuelve un resultado que difiere", "difiere", 1
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
