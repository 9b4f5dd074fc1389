"""Semillas, hilos y la tolerancia de las cifras guardadas.

Con semilla y un hilo, cada cuaderno da los mismos números de una ejecución a
otra en la misma máquina. En otra CPU, las cifras de coma flotante pueden
cambiar en el último decimal: las pruebas que comparan una cifra guardada con
la recalculada usan ``FLOAT_TOLERANCE`` (ver ``same_figure``).
"""

from __future__ import annotations

import os
import random
import sys

import numpy as np

#: La tolerancia, relativa (absoluta por debajo de 1), con la que toda prueba
#: compara una cifra de coma flotante guardada (en ``helpers/data``, en el
#: punto de control o escrita en una prueba) con la que se recalcula ahora.
#: No se compara bit a bit porque el resultado depende de la CPU: PyTorch
#: elige sus núcleos de float32 según lo que sepa hacer el procesador (AVX-512,
#: AVX2 o los genéricos), la BLAS también, y cada uno suma en otro orden, así
#: que la misma cuenta termina en otro último decimal. Lo bastante ancha para
#: ese redondeo, y cien veces más estrecha que lo que mueve una sola respuesta
#: distinta en una precisión (1/1024 en la de ``method_curves.json``).
#: Para comprobar un cambio con los núcleos genéricos:
#: ``ATEN_CPU_CAPABILITY=default .venv/bin/python -m pytest -m stored_figures tests``
#: (lo repite ``tests/test_cpu_kernels.py`` en cada ``make test``).
FLOAT_TOLERANCE = 1e-5


def same_figure(stored: float, fresh: float) -> bool:
    """¿Es ``fresh`` la cifra guardada ``stored``, salvo el redondeo de la CPU?

    Compara con ``FLOAT_TOLERANCE``: relativa para cifras mayores que 1 y
    absoluta para las menores.
    """
    scale = max(1.0, abs(stored), abs(fresh))
    return abs(stored - fresh) <= FLOAT_TOLERANCE * scale


def set_seed(seed: int, *, torch_threads: int | None = 1) -> np.random.Generator:
    """Fija la semilla de ``random``, NumPy y PyTorch, y los hilos de PyTorch.

    PyTorch solo se siembra si ya está importado: importa ``torch`` antes de
    llamar a ``set_seed``, como hacen los cuadernos que lo usan. Así un
    cuaderno sin redes (el de los bandidos) no paga el segundo que tarda en
    cargarse PyTorch, ni al abrirlo ni al calificar cada entrega.

    Args:
        seed: la semilla (un entero ≥ 0).
        torch_threads: cuántos hilos usa PyTorch en la CPU. Con redes pequeñas
            un solo hilo suele ser tan rápido como varios y, sobre todo, da
            resultados idénticos de una ejecución a otra. ``None`` lo deja
            como esté.

    Returns:
        Un ``np.random.Generator`` nuevo con la misma semilla, para quien
        prefiera pasar el generador de forma explícita.
    """
    if seed < 0:
        raise ValueError(f"La semilla debe ser un entero no negativo; recibí {seed}.")
    random.seed(seed)
    np.random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
        if torch_threads is not None:
            torch.set_num_threads(torch_threads)
    return np.random.default_rng(seed)
