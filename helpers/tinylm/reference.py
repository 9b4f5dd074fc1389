"""Referencias de los ejercicios pequeños del cuaderno 07_grpo.

Las piezas grandes (ventajas de grupo, pérdida, bucle) están en ``grpo.py`` y
el verificador en ``task.py``; aquí quedan las cuentas de lápiz del ejemplo
de 17 × 24:

- ``path_probability``: la probabilidad de un camino del árbol de
  continuaciones es el producto de las de sus pasos (0,6 × 0,9 × 0,7, en la
  ilustración del tutorial).
- ``log10_num_responses``: cuántas respuestas distintas hay, en potencias de
  10 (más de 10^500 con 150 000 tokens y 100 de longitud).
- ``logit_push``: el empujón de un paso de gradiente sobre los logits de un
  token muestreado con ventaja ``A``: ``A · (one_hot − p)``; sobre su propio
  logit, ``A · (1 − p)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch


def path_probability(step_probs: Sequence[float] | torch.Tensor) -> float:
    """Producto de las probabilidades de cada paso: la del camino entero.

    ``path_probability([0.6, 0.9, 0.7]) == 0.378`` (con redondeo de coma
    flotante).

    Con caminos larguísimos de pasos pequeños el producto se queda en 0 (por
    debajo del menor float64, unos 10^−324). Sumar logaritmos y volver con
    ``exp`` no lo evita: ``exp(Σ log p)`` es el mismo número diminuto. Lo
    robusto es no salir de la escala logarítmica y trabajar con ``Σ log p``,
    como hacen ``token_log_probs`` y la pérdida de GRPO. Esta función devuelve
    la probabilidad, así que basta el producto.
    """
    return float(torch.as_tensor(step_probs, dtype=torch.float64).prod())


def log10_num_responses(vocab_size: int, length: int) -> float:
    """``log10(vocab_size ** length)``: el exponente del número de respuestas.

    ``log10_num_responses(150_000, 100) ≈ 517,6``: más de 10^500 respuestas.
    Se calcula como ``length · log10(vocab_size)``; la potencia entera tiene
    más de 500 cifras y no cabe en un float.
    """
    return length * math.log10(vocab_size)


def logit_push(
    logits: torch.Tensor, token: int, advantage: float = 1.0
) -> torch.Tensor:
    """Cuánto sube cada logit en un paso de descenso de gradiente (con tasa 1).

    La pérdida de un token muestreado es ``−A · log softmax(logits)[token]``;
    su gradiente respecto a los logits es ``−A · (one_hot(token) − p)``, así
    que el descenso suma ``A · (one_hot(token) − p)``: el logit propio sube
    ``A · (1 − p_token)`` y cada uno de los demás baja ``A · p_otro``.

    - ``logits``: ``(V,)``; devuelve ``(V,)``.
    """
    logits = torch.as_tensor(logits, dtype=torch.float64)
    probs = logits.softmax(dim=-1)
    one_hot = torch.zeros_like(probs)
    one_hot[token] = 1.0
    return advantage * (one_hot - probs)
