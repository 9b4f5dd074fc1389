"""La letra pequeña: el modelo que muestrea no es el que aprende.

En un montaje real las respuestas las genera un motor de inferencia aparte
(vLLM, SGLang) y no el programa que entrena. Aunque los dos cargan «el mismo»
modelo, pueden diferir:

- en la **precisión numérica** (aquí: un muestreador en bfloat16 frente al
  entrenador en float32);
- en los **pesos**, si el montaje es asíncrono: el motor sirve los pesos de
  hace k actualizaciones (aquí: una copia guardada k pasos).

Este módulo mide esa diferencia token a token (``token_log_ratio``) y da el
peso de la corrección (``truncated_importance_weights``): muestreo por
importancia truncado (Yao et al., 2025). El bucle de ``grpo.train_grpo`` ya
sabe imitar los dos muestreadores (``GRPOConfig.sampler_dtype``,
``sampler_lag``) y aplicar la corrección (``is_cap``).
"""

from __future__ import annotations

import torch

from .model import TinyLM
from .sampling import Samples, token_log_probs


def truncated_importance_weights(
    trainer_log_probs: torch.Tensor,
    sampler_log_probs: torch.Tensor,
    mask: torch.Tensor,
    cap: float = 2.0,
) -> torch.Tensor:
    """Peso de cada token: ``min(π_entrenador / π_muestreador, cap)``, sin gradiente.

    - ``trainer_log_probs``, ``sampler_log_probs``, ``mask``: ``(B, T)``.
    - Devuelve ``(B, T)``, 0 en el relleno. El peso corrige *qué* se muestreó:
      es una constante para la pérdida (``detach``). Solo se trunca por
      arriba: un token que el muestreador sobrevaloró pesa menos de 1 y eso
      es justo la corrección.
    """
    log_ratio = trainer_log_probs.detach() - sampler_log_probs.detach()
    return torch.exp(log_ratio).clamp(max=cap) * mask


@torch.no_grad()
def token_log_ratio(trainer: TinyLM, samples: Samples) -> torch.Tensor:
    """``log π_entrenador − log π_muestreador`` de cada token de ``samples``.

    ``samples`` las generó el muestreador (sus log-probabilidades van en
    ``samples.log_probs``); el entrenador las recalcula en float32. Devuelve
    ``(B, T)`` con 0 en el relleno.
    """
    trainer_lp = token_log_probs(trainer, samples.sequences, samples.prompt_len)
    return (trainer_lp - samples.log_probs) * samples.mask
