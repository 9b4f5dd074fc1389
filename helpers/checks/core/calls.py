"""Llamar a la función del estudiante sin que toque sus entradas.

- :func:`call` le pasa copias y falla, nombrando el argumento, si modificó
  alguna (salvo las que el enunciado deja modificar).
- :func:`_outputs` reúne sus salidas en una lista de casos (un error cuenta
  como salida: así se comparan las «huellas» de los errores típicos).
- :func:`_call` escribe la llamada como la escribiría el estudiante, para
  los mensajes.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from helpers.checks.core.compare import _torch
from helpers.checks.core.mistakes import CheckError, fail


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
    """Lo que devuelve ``function(*args)``, llamada con copias profundas (salvo
    los generadores aleatorios, que se comparten). Un ``+=`` sobre el array
    recibido cambia también el del que llama y no se ve en el valor devuelto:
    si una entrada cambió (salvo las posiciones de ``may_modify``), falla
    nombrando el argumento; ``name`` es el de la función en el mensaje."""
    originals = _copies(args)
    given = _copies(args)
    result = function(*given)
    _unmodified(function, name, originals, given, may_modify)
    return result


def _unmodified(
    function: Callable[..., Any],
    name: str,
    originals: tuple[Any, ...],
    given: tuple[Any, ...],
    may_modify: Iterable[int] = (),
) -> None:
    """Falla si ``function`` modificó alguno de los argumentos ``given`` que
    recibió (``originals``: sus copias de antes), salvo los de ``may_modify``."""
    allowed = set(may_modify)
    torch = _torch()
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
