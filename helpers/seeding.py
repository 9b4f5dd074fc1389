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
#: que la misma cuenta termina en otro último decimal. Es lo bastante ancha
#: para ese redondeo: con los núcleos genéricos, la entropía de las curvas de
#: 08 (semilla 0 de los tres métodos) cambia como mucho 1,5·10⁻⁶ en relativo,
#: unos 10⁻⁷ en absoluto. Y es cien veces más estrecha que una respuesta
#: distinta en una precisión (1/1024 en ``method_curves.json``): para eso
#: está ``SAMPLED_ANSWERS_MARGIN``. Para comprobar un cambio con los núcleos
#: genéricos (lo repite ``tests/test_cpu_kernels.py`` en cada ``make test``):
#: ``ATEN_CPU_CAPABILITY=default .venv/bin/python -m pytest -m stored_figures tests``
FLOAT_TOLERANCE = 1e-5


#: Cuántas respuestas muestreadas pueden salir distintas en otra CPU cuando
#: se compara una fracción de respuestas guardada (una precisión, una
#: P(correcta)) con la recalculada. Una respuesta cambia si el número al azar
#: cae justo en la frontera entre dos tokens y el redondeo de la CPU mueve esa
#: frontera: es raro, pero pasa. Con los núcleos genéricos, la precisión final
#: de la curva de GRPO de 08 (semilla 0) sale con 1 respuesta distinta de
#: 1024; las de los demás puntos, y las de RLOO y PPO, salen iguales. El
#: margen es cuatro veces lo medido: 0,4 puntos en esa precisión.
SAMPLED_ANSWERS_MARGIN = 4

#: El margen, en fracción (3 puntos), de una cifra que sale de **entrenar**
#: con la cifra guardada: una precisión por pares de un modelo entrenado
#: varias épocas, o lo que mide un entrenamiento unos pasos después del
#: primero. El redondeo de otra CPU cambia un poco cada paso de gradiente, y
#: los pasos lo acumulan: con los núcleos genéricos, el modelo de recompensa
#: del módulo 10 (semilla 0, 4 épocas) acierta 1,2 puntos más en sus pares de
#: entrenamiento (51 de 4096), y en los 5 primeros pasos de GRPO contra él la
#: utilidad media se separa hasta 1,3 puntos de su máximo (0,0195 de 1,5). El
#: margen es algo más del doble de lo medido. Solo para estas cifras: las que
#: salen de muestrear un mismo modelo usan ``SAMPLED_ANSWERS_MARGIN``.
TRAINED_FRACTION_MARGIN = 0.03


#: El margen, en fracción (10 puntos), de una precisión por pares que sale
#: de entrenar y queda **cerca del azar**: la del modelo de recompensa del
#: módulo 10 en enunciados nuevos, donde acierta poco más que la mitad (lo que
#: sostiene el texto: no generaliza). Sus pares están casi empatados, así que
#: un cambio mínimo del entrenamiento voltea decenas de ellos: con los núcleos
#: genéricos en un Intel Xeon, 53,3 → 59,8 % (33 de 512 pares) frente a lo
#: guardado en un AMD EPYC. Donde el modelo acierta de verdad (un 80 %, en los
#: pares de entrenamiento y de prueba) basta ``TRAINED_FRACTION_MARGIN``.
NEAR_CHANCE_MARGIN = 0.1


def same_near_chance_fraction(stored: float, fresh: float) -> bool:
    """¿Es ``fresh`` la fracción guardada ``stored`` de un modelo entrenado
    que acierta poco más que al azar?

    Admite ``NEAR_CHANCE_MARGIN``: ahí, el redondeo de otra CPU voltea muchos
    pares casi empatados.
    """
    return abs(stored - fresh) <= NEAR_CHANCE_MARGIN


def same_trained_fraction(stored: float, fresh: float) -> bool:
    """¿Es ``fresh`` la fracción guardada ``stored`` de un modelo entrenado?

    Admite ``TRAINED_FRACTION_MARGIN``: lo que el redondeo de otra CPU mueve
    una cifra al acumularse durante el entrenamiento.
    """
    return abs(stored - fresh) <= TRAINED_FRACTION_MARGIN + FLOAT_TOLERANCE


def same_figure(stored: float, fresh: float) -> bool:
    """¿Es ``fresh`` la cifra guardada ``stored``, salvo el redondeo de la CPU?

    Compara con ``FLOAT_TOLERANCE``: relativa para cifras mayores que 1 y
    absoluta para las menores.
    """
    scale = max(1.0, abs(stored), abs(fresh))
    return abs(stored - fresh) <= FLOAT_TOLERANCE * scale


def same_sampled_fraction(stored: float, fresh: float, answers: int) -> bool:
    """¿Es ``fresh`` la fracción guardada ``stored`` de ``answers`` respuestas?

    Admite ``SAMPLED_ANSWERS_MARGIN`` respuestas distintas (las que puede
    cambiar el redondeo de otra CPU al muestrear), y nada más.
    """
    margin = SAMPLED_ANSWERS_MARGIN / answers
    return abs(stored - fresh) <= margin + FLOAT_TOLERANCE


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
