"""Referencias de los ejercicios pequeños del cuaderno 07_grpo.

Las piezas grandes (ventajas de grupo, pérdida, bucle) están en ``grpo.py`` y
el verificador en ``task.py``; aquí quedan las cuentas de lápiz del ejemplo
de 17 × 24:

- ``path_probability``: la probabilidad de un camino del árbol de
  continuaciones es el producto de las de sus pasos (0,6 × 0,9 × 0,7, en la
  ilustración del tutorial).
- ``path_log_probability``: lo mismo en escala logarítmica, la suma de los
  logaritmos de los pasos; no se queda en 0 donde el producto sí (ejercicio 1).
- ``log10_num_responses``: cuántas respuestas distintas hay, en potencias de
  10 (más de 10^500 con 150 000 tokens y 100 de longitud).
- ``logit_push``: el empujón de un paso de gradiente sobre los logits de un
  token muestreado con ventaja ``A``: ``A · (one_hot − p)``; sobre su propio
  logit, ``A · (1 − p)``.
- ``grpo_update``: un paso de GRPO en cuatro etapas (muestrear, puntuar,
  ventajas de grupo, un paso del optimizador), el del ejercicio 6; es
  ``grpo.grpo_step`` sin opciones ni recorte de la norma del gradiente.
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


def path_log_probability(step_probs: Sequence[float] | torch.Tensor) -> float:
    """``Σ_t log p_t``: la log-probabilidad de un camino, sin salir de la escala log.

    ``path_log_probability([0.6, 0.9, 0.7]) == log(0,378) ≈ −0,973``. Donde el
    producto se queda en 0 (2000 pasos de 0,5: 0,5^2000 ≈ 10^−602), la suma de
    logaritmos es un número normal (≈ −1386,3). Se calcula en float64.
    """
    return float(torch.as_tensor(step_probs, dtype=torch.float64).log().sum())


def grpo_update(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    problems: list[tuple[int, int]],
    group_size: int,
    generator: torch.Generator,
) -> float:
    """Un paso de GRPO, en cuatro etapas, sin recorte del gradiente.

    1. Muestrear: una sola llamada a ``sample`` con los ``len(problems) · G``
       enunciados en orden (G copias del primero, luego G del segundo...), con
       ``generator`` y temperatura 1.
    2. Puntuar: ``rewards_for`` con la lista de problemas en ese mismo orden.
    3. Ventajas: ``group_advantages`` de las recompensas en forma
       ``(len(problems), G)``, sin dividir por la desviación.
    4. Actualizar: ``grpo_loss`` con las log-probabilidades que da
       ``token_log_probs`` (con gradiente), ``optimizer.zero_grad()``,
       ``backward()`` y ``optimizer.step()``.

    Devuelve la recompensa media del lote (un float). Es ``grpo_step`` sin sus
    opciones (μ, recorte, KL, muestreador aparte) ni el recorte de la norma.
    """
    from .grpo import group_advantages, grpo_loss
    from .sampling import sample, token_log_probs
    from .task import encode_prompts, rewards_for

    # Etapa 1: G respuestas por enunciado, en bloques contiguos
    prompts = encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = sample(model, prompts, generator=generator)
    # Etapa 2: el verificador puntúa cada respuesta
    repeated = [problem for problem in problems for _ in range(group_size)]
    rewards = rewards_for(samples.completions, repeated)
    # Etapa 3: ventaja = recompensa − media de su grupo
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    # Etapa 4: la pérdida con máscara y un paso del optimizador
    log_probs = token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()
