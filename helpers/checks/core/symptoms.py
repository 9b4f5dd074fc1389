"""Diagnosticar por síntoma: lo que delata un resultado equivocado en
cualquier ejercicio, cuando ningún error típico del ejercicio lo explica.

Un signo cambiado, un redondeo o una acumulación en enteros, un factor de más
o de menos, otra forma, dos tensores que no se difunden. Cada síntoma es un
``(id, mensaje)``: el id es uno de los diagnósticos comunes del núcleo
(``helpers.checks.COMMON_MISTAKES``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.checks.core.compare import _torch
from helpers.formatting import significant


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
