"""Entradas con máscara: el relleno que permite el enunciado y cada eje.

:class:`Masked` (``check_cases(..., masked=Masked(...))``) prueba una función
que recibe una máscara (1: cuenta; 0: relleno) en dos etapas: cada caso con
cada valor de su argumento de eje, con un lote de una fila y, si el enunciado
lo admite, traspuesto (así ``dim=0`` y ``dim=-1`` no coinciden por
casualidad); y esos casos con el relleno lleno de lo que permite el
enunciado: finitos enormes (``"finite"``) o también ``nan`` y ``±inf``
(``"any"``). Con ``"any"`` multiplicar por la máscara no basta (0 · inf =
nan) y el diagnóstico no lo recomienda; con ``"finite"`` es correcto.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from helpers.checks.core.compare import _torch
from helpers.formatting import number

#: Qué puede valer el relleno según el enunciado.
Padding = Literal["finite", "any"]

#: Los rellenos con que se prueba cada caso, según el enunciado.
FILLS: dict[str, tuple[float, ...]] = {
    "finite": (1e4, -1e4),
    "any": (math.nan, math.inf, -math.inf),
}


def _fill_name(value: float) -> str:
    """Cómo se nombra un relleno en un mensaje: «nan», «inf», «−inf» (como los
    escribe PyTorch) o la cifra en español («−10 000»)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "−inf"
    return number(value, 0)


def _is_tensor(value: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def _padding_positions(mask: Any) -> Any:
    """``True`` donde la máscara vale 0 (el relleno)."""
    if _is_tensor(mask):
        return ~mask.bool()
    return ~np.asarray(mask).astype(bool)


def _fill(value: Any, positions: Any, fill: float) -> Any:
    """``value`` con ``fill`` en ``positions`` (un tensor o un array nuevo)."""
    if _is_tensor(value):
        torch = _torch()
        if not value.is_floating_point():
            raise ValueError("Masked: un argumento con relleno debe ser de floats")
        return torch.where(positions, torch.full_like(value, fill), value.detach())
    array = np.asarray(value)
    if array.dtype.kind != "f":
        raise ValueError("Masked: un argumento con relleno debe ser de floats")
    return np.where(positions, fill, array)


def _expand(positions: Any, shape: tuple[int, ...]) -> Any:
    """Las posiciones de relleno de la máscara, llevadas a un argumento que
    tiene la forma de la máscara y quizá más ejes al final (``(B, T, V)``)."""
    extra = len(shape) - positions.ndim
    if tuple(shape[: positions.ndim]) != tuple(positions.shape) or extra < 0:
        raise ValueError(
            f"Masked: un argumento de forma {tuple(shape)} no empieza por la forma "
            f"de la máscara {tuple(positions.shape)}; di sus posiciones con where="
        )
    index = (...,) + (None,) * extra
    if _is_tensor(positions):
        return positions[index].expand(*shape)
    return np.broadcast_to(positions[index], shape)


def _square(mask: Any) -> bool:
    """¿Mide lo mismo el primer eje que el último? Entonces ``dim=0`` y
    ``dim=-1`` dan resultados de la misma forma y pueden coincidir."""
    return np.ndim(mask) >= 2 and mask.shape[0] == mask.shape[-1]


def _take_first(value: Any) -> Any:
    """El primer elemento del lote, conservando el eje: ``value[:1]``."""
    return value[:1]


def _swap(value: Any) -> Any:
    """``value`` con los dos primeros ejes intercambiados."""
    if _is_tensor(value):
        return value.transpose(0, 1).contiguous()
    return np.ascontiguousarray(np.swapaxes(np.asarray(value), 0, 1))


@dataclass(frozen=True)
class Masked:
    """Cómo lleva máscara un ejercicio: qué se prueba solo, caso a caso.

    - ``mask``: el argumento máscara; ``padded``: los que tienen relleno donde
      vale 0 (con su forma, o esa forma y más ejes al final, como logits
      ``(B, T, V)``; si no, ``where[nombre]`` da sus posiciones de relleno a
      partir de los argumentos del caso, por nombre).
    - ``padding``: lo que el enunciado permite en el relleno, ``"finite"`` o
      ``"any"``; tiene que decirlo el enunciado. ``mistake``: el id cuando el
      relleno cambia el resultado.
    - ``axis`` y ``axes``: el argumento de eje (``"dim"``) y los valores que
      acepta (por defecto, todos los ejes de la máscara, y ``None`` si es el
      valor por defecto de la referencia).
    - ``batched``: otros argumentos con el lote en su primer eje;
      ``batch_of_one``: probar con un lote de una fila; ``transposed``: con
      los dos primeros ejes intercambiados (si el enunciado admite cualquier
      tamaño en los dos).
    """

    mask: str
    padded: tuple[str, ...]
    padding: Padding
    mistake: str
    axis: str | None = None
    axes: tuple[int | None, ...] | None = None
    batched: tuple[str, ...] = ()
    batch_of_one: bool = True
    transposed: bool = False
    where: Mapping[str, Callable[[Mapping[str, Any]], Any]] = field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        if self.padding not in FILLS:
            raise ValueError(f"Masked: padding debe ser uno de {tuple(FILLS)}")

    # -- los casos ---------------------------------------------------------

    def _names(self, reference: Callable[..., Any]) -> list[inspect.Parameter]:
        return [
            p
            for p in inspect.signature(reference).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]

    def _named(
        self, case: tuple[Any, ...], parameters: list[inspect.Parameter]
    ) -> dict[str, Any]:
        return {p.name: value for p, value in zip(parameters, case, strict=False)}

    def shapes(
        self, cases: list[tuple[Any, ...]], reference: Callable[..., Any]
    ) -> list[tuple[Any, ...]]:
        """Los casos con cada eje que acepta el enunciado y cada forma de lote
        (el caso tal cual, una fila, traspuesto): la primera etapa."""
        parameters = self._names(reference)
        names = [p.name for p in parameters]
        for name in (self.mask, *self.padded, *self.batched):
            if name not in names:
                raise ValueError(f"Masked: la referencia no tiene argumento {name!r}")
        found: list[tuple[Any, ...]] = []
        for case in cases:
            for shaped in self._batch_variants(case, parameters):
                found += self._axis_variants(shaped, parameters)
        masks = [self._named(case, parameters)[self.mask] for case in found]
        if self.axis is not None and all(_square(mask) for mask in masks):
            raise ValueError(
                "Masked: todas las máscaras son cuadradas; con el primer eje "
                "igual al último, dim=0 y dim=-1 podrían coincidir"
            )
        return found

    def _batch_variants(
        self, case: tuple[Any, ...], parameters: list[inspect.Parameter]
    ) -> list[tuple[Any, ...]]:
        names = [p.name for p in parameters]
        batched = {self.mask, *self.padded, *self.batched}

        def rebuilt(change: Callable[[Any], Any]) -> tuple[Any, ...]:
            return tuple(
                change(value) if i < len(names) and names[i] in batched else value
                for i, value in enumerate(case)
            )

        variants = [case]
        mask = self._named(case, parameters)[self.mask]
        if self.batch_of_one and mask.shape[0] > 1:
            variants.append(rebuilt(_take_first))
        if self.transposed:
            if any(np.ndim(self._named(case, parameters)[n]) < 2 for n in batched):
                raise ValueError("Masked: transposed pide argumentos de dos ejes o más")
            if mask.shape[0] != mask.shape[1]:
                variants.append(rebuilt(_swap))
        return variants

    def _axis_variants(
        self, case: tuple[Any, ...], parameters: list[inspect.Parameter]
    ) -> list[tuple[Any, ...]]:
        if self.axis is None:
            return [case]
        index = next(i for i, p in enumerate(parameters) if p.name == self.axis)
        full = list(case)
        for p in parameters[len(full) : index + 1]:
            if p.default is inspect.Parameter.empty:
                raise ValueError(f"Masked: falta el argumento {p.name!r} en un caso")
            full.append(p.default)
        ndim = np.ndim(self._named(case, parameters)[self.mask])
        axes = self.axes
        if axes is None:
            default = parameters[index].default
            axes = (
                *((None,) if default is None else ()),
                *range(ndim),
                *range(-ndim, 0),
            )
        return [
            tuple(full[:index]) + (axis,) + tuple(full[index + 1 :]) for axis in axes
        ]

    def filled(
        self, cases: list[tuple[Any, ...]], reference: Callable[..., Any]
    ) -> list[tuple[tuple[Any, ...], str]]:
        """Cada caso con su relleno lleno de cada valor que permite el
        enunciado, y cómo se dice («nan en el relleno»): la segunda etapa."""
        parameters = self._names(reference)
        names = [p.name for p in parameters]
        found: list[tuple[tuple[Any, ...], str]] = []
        for case in cases:
            named = self._named(case, parameters)
            pad = _padding_positions(named[self.mask])
            if not bool(pad.any()):
                continue  # sin relleno, no hay nada que llenar
            positions = {
                name: (
                    self.where[name](named)
                    if name in self.where
                    else _expand(pad, tuple(named[name].shape))
                )
                for name in self.padded
            }
            for value in FILLS[self.padding]:
                new = list(case)
                for name, where in positions.items():
                    index = names.index(name)
                    new[index] = _fill(case[index], where, value)
                label = f"{_fill_name(value)} en el relleno (donde {self.mask} vale 0)"
                found.append((tuple(new), label))
        return found

    # -- el diagnóstico ----------------------------------------------------

    def diagnose(self, got: Any, want: Any) -> str:
        """Lo que se dice cuando el resultado cambia con lo que hay en el
        relleno y ningún error típico lo explica (la llamada y el relleno ya
        los dice el principio del mensaje). Nunca recomienda multiplicar por
        la máscara: con ``nan`` o ``inf`` no basta."""
        got = np.asarray(got, dtype=float)
        want = np.asarray(want, dtype=float)
        select = (
            f"Elige los valores que cuentan con torch.where({self.mask}.bool(), x, "
            f"0) o x.masked_fill(~{self.mask}.bool(), 0) antes de operar con "
            "ellos, y cuenta solo las posiciones válidas."
        )
        if self.padding == "any" and got.shape == want.shape:
            leaked = ~np.isfinite(got) & np.isfinite(want)
            if leaked.any():
                return (
                    "Tu resultado sale nan o inf. El enunciado permite cualquier "
                    "valor en el relleno, también nan e inf, y no deben llegar "
                    "al resultado. Multiplicar por la máscara no los quita: "
                    "0 · inf y 0 · nan dan nan. " + select
                )
        return (
            "Lo que hay en el relleno cambia tu resultado: las posiciones donde "
            f"{self.mask} vale 0 no deben contar, valgan lo que valgan. " + select
        )
