"""Números escritos como en la prosa del curso: coma decimal y miles con espacio.

Todo lo que un cuaderno imprime para que lo lea una persona usa estas
funciones, así una cifra impresa se escribe igual que en el texto que la
comenta: «0,727», «16 384», «75,6 %». (El código Python sigue escribiendo
``0.727``: esto es solo para leer.) Se sigue la norma de la RAE: coma decimal,
grupos de tres cifras separados por un espacio fino que no se parte, solo en
números de más de cuatro cifras, y un espacio antes de «%».
"""

from __future__ import annotations

import math

import numpy as np

# Espacio fino que no se parte (U+202F): separa los miles sin cortar la cifra.
THIN_SPACE = "\u202f"


def _float(x: float) -> float:
    """``x`` como float de Python; un tensor que aún guarda su gradiente se lee
    sin él (sin aviso de PyTorch)."""
    return float(x.detach() if hasattr(x, "detach") else x)


def _not_finite(x: float) -> str:
    """Cómo se escribe un número que no es finito: «NaN», «∞» o «−∞»."""
    if math.isnan(x):
        return "NaN"
    return "∞" if x > 0 else "−∞"


def number(x: float, decimals: int = 2, *, sign: bool = False) -> str:
    """``x`` con ``decimals`` decimales, coma decimal y miles separados.

    Args:
        x: el número (int, float, NumPy o un tensor de un elemento).
        decimals: cifras decimales (0: entero redondeado).
        sign: escribir ``+`` delante de los positivos (para diferencias).

    Examples:
        >>> number(0.7271, 3)
        '0,727'
        >>> number(16384, 0)
        '16\u202f384'
        >>> number(1234.5, 1)
        '1234,5'
        >>> number(25.9, 1, sign=True)
        '+25,9'
    """
    x = _float(x)
    if not math.isfinite(x):
        return _not_finite(x)
    text = f"{abs(x):.{decimals}f}"
    whole, _, fraction = text.partition(".")
    if len(whole) > 4:
        groups = []
        while whole:
            groups.insert(0, whole[-3:])
            whole = whole[:-3]
        whole = THIN_SPACE.join(groups)
    body = whole + ("," + fraction if fraction else "")
    negative = x < 0 and float(text) != 0.0
    if negative:
        return "−" + body
    return ("+" if sign and float(text) != 0.0 else "") + body


def percent(fraction: float, decimals: int = 1, *, sign: bool = False) -> str:
    """Una fracción (0,756) como porcentaje: «75,6 %».

    Con ``sign=True`` sirve para diferencias en puntos: ``percent(0.259,
    sign=True)`` da «+25,9 %».
    """
    return number(100 * float(fraction), decimals, sign=sign) + "\u00a0%"


def numbers(values: object, decimals: int = 2, *, sign: bool = False) -> str:
    """Varias cifras (una lista, un array o un tensor) entre corchetes y
    separadas por «;», cada una con :func:`number`: «[0,33; 0,00; −0,67]».

    Un array de dos o más dimensiones se escribe fila a fila, cada fila entre
    sus corchetes: «[[1; 2]; [3; 4]]». Un escalar, sin corchetes.

    Examples:
        >>> numbers([1 / 3, 0, -2 / 3])
        '[0,33; 0,00; −0,67]'
        >>> numbers([[1, 2], [3, 4]], 0)
        '[[1; 2]; [3; 4]]'
    """
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    array = np.asarray(values, dtype=float)
    if array.ndim == 0:
        return number(array, decimals, sign=sign)
    return "[" + "; ".join(numbers(row, decimals, sign=sign) for row in array) + "]"


def significant(x: float, digits: int = 6) -> str:
    """``x`` con ``digits`` cifras significativas y coma decimal: para los
    mensajes que comparan un valor con el esperado sin saber su escala.

    Examples:
        >>> significant(2 / 3)
        '0,666667'
        >>> significant(-1.5e-07)
        '−1,5e−07'
        >>> significant(float("inf"))
        '∞'
    """
    x = _float(x)
    if not math.isfinite(x):
        return _not_finite(x)
    return f"{x:.{digits}g}".replace(".", ",").replace("-", "−")


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(x: float, decimals: int = 1) -> str:
    """Un número pequeño (o grande) en notación científica: «1,4·10⁻⁵».

    Para diferencias de redondeo y tolerancias, donde ``number`` daría
    «0,00». El cero exacto se escribe «0».

    Examples:
        >>> scientific(1.4e-05)
        '1,4·10⁻⁵'
        >>> scientific(-2.5e3, 2)
        '−2,50·10³'
        >>> scientific(0.0)
        '0'
    """
    x = _float(x)
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return _not_finite(x)
    mantissa, _, exponent = f"{x:.{decimals}e}".partition("e")
    power = str(int(exponent)).translate(_SUPERSCRIPT)
    return f"{number(float(mantissa), decimals)}·10{power}"
