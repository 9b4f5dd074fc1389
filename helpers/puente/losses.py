"""La pérdida del curso con los nombres y las convenciones de TRL.

TRL (``GRPOTrainer``) llama ``loss_type`` a lo que el curso llama
``loss_normalization`` (``helpers.tinylm.grpo.normalize_loss``):

- ``grpo``: la media de los tokens de cada respuesta y después la media
  sobre las B respuestas. En el curso, ``"grpo"``.
- ``bnpo``: la media de todos los tokens del micro-lote, dividida después
  entre el número de micro-lotes acumulados: con acumulación es la media de
  las medias de los micro-lotes (``trl_equality.accumulation_table``). Sin
  acumular, en el curso, ``"token"``.
- ``dapo``: la suma de los tokens entre el número de tokens de todo el lote
  acumulado (todos los procesos y micro-lotes). Con un proceso y sin
  acumulación es el mismo lote: en el curso, ``"token"``.
- ``dr_grpo``: la suma de los tokens entre B · L_max. En el curso,
  ``"dr_grpo"`` (la suma entre B) dividido por L_max,

con L_max = ``max_completion_length`` (26 en este modelo). El curso divide
Dr. GRPO por B y no por B · L_max: el gradiente apunta igual y es L_max veces
más grande.

La otra diferencia está antes de la pérdida, en las log-probabilidades: el
curso pone el logit del relleno a −∞ (nunca se puede muestrear) y TRL no, así
que su log-softmax reparte un poco de probabilidad al relleno. En el modelo
del curso la diferencia es de milésimas por token (la mide el cuaderno 09,
§2.1, y la acota ``tests/test_puente_trl_loss.py`` en el repositorio).
``response_log_probs`` sigue la convención de TRL para que la comparación
sea exacta.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch.nn import functional as F

from helpers.tinylm.grpo import grpo_objective_loss, k3_kl, normalize_loss

TRLLossType = Literal["grpo", "dr_grpo", "dapo", "bnpo"]
TRL_LOSS_TYPES: tuple[str, ...] = ("grpo", "dr_grpo", "dapo", "bnpo")
# loss_type de TRL -> loss_normalization del curso (ver la tabla de arriba)
COURSE_NORMALIZATION: dict[str, str] = {
    "grpo": "grpo",
    "dr_grpo": "dr_grpo",
    "dapo": "token",
    "bnpo": "token",
}


def response_log_probs(
    logits: torch.Tensor,
    input_ids: torch.Tensor,
    prompt_len: int,
    mask: torch.Tensor | None = None,
    temperature: float = 1.0,
) -> torch.Tensor:
    """Log-probabilidad de cada token de la respuesta a partir de logits de HF.

    - ``logits``: ``(B, P + T, V)``, la salida ``.logits`` de un modelo causal
      sobre ``input_ids`` (enunciado + respuesta).
    - ``input_ids``: ``(B, P + T)``; ``prompt_len``: P.
    - ``mask``: ``(B, T)``, 1 en la respuesta y 0 en el relleno (por defecto,
      todo 1).

    **El desplazamiento**: los logits de la posición t predicen el token
    t + 1, así que el token de la respuesta en la posición P + j se lee en los
    logits de P + j − 1. El log-softmax es sobre todo el vocabulario, relleno
    incluido (la convención de TRL). Devuelve ``(B, T)`` con 0 donde
    ``mask`` es 0.
    """
    completions = input_ids[:, prompt_len:]  # (B, T)
    shifted = logits[:, prompt_len - 1 : -1]  # (B, T, V): predicen esos tokens
    shifted = shifted.to(torch.promote_types(shifted.dtype, torch.float32))
    log_p = F.log_softmax(shifted / temperature, dim=-1)
    chosen = log_p.gather(-1, completions.unsqueeze(-1)).squeeze(-1)
    if mask is None:
        return chosen
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))


def course_loss_as_trl(
    log_probs: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    loss_type: TRLLossType,
    old_log_probs: torch.Tensor | None = None,
    ref_log_probs: torch.Tensor | None = None,
    beta: float = 0.0,
    epsilon: float = 0.2,
    epsilon_high: float | None = None,
    max_completion_length: int | None = None,
    use_bias_correction_kl: bool = False,
) -> torch.Tensor:
    """La pérdida del curso (``grpo_objective_loss``) con los nombres de TRL.

    Los argumentos son los de ``GRPOConfig`` de TRL: ``epsilon`` y
    ``epsilon_high`` son el recorte (ε del curso y el tope de DAPO), ``beta``
    la penalización k3 contra ``ref_log_probs``. Con ``loss_type="dr_grpo"``
    hace falta ``max_completion_length``: TRL divide por B · L_max y el curso
    por B, así que aquí se divide además por L_max.

    ``use_bias_correction_kl=True`` multiplica la penalización k3 de cada
    token por el cociente r = π_θ / π_old, como hace TRL por defecto
    (DeepSeek-V3.2): con μ = 1 el cociente vale 1, pero su gradiente no es 0,
    así que cambia el gradiente de la penalización. El objetivo de
    DeepSeekMath que escribe el curso es ``False``.
    """
    if loss_type not in COURSE_NORMALIZATION:
        raise ValueError(
            f"loss_type debe ser uno de {TRL_LOSS_TYPES}; es {loss_type!r}."
        )
    normalization = COURSE_NORMALIZATION[loss_type]
    corrected = bool(beta) and use_bias_correction_kl
    loss = grpo_objective_loss(
        log_probs,
        mask,
        advantages,
        old_log_probs=old_log_probs,
        clip_eps=epsilon,
        clip_eps_high=epsilon_high,
        ref_log_probs=ref_log_probs,
        kl_coef=0.0 if corrected else beta,
        normalization=normalization,
    )
    if corrected:
        if ref_log_probs is None:
            raise ValueError("Con beta > 0 hace falta ref_log_probs.")
        old = log_probs.detach() if old_log_probs is None else old_log_probs
        ratio = torch.exp(log_probs - old.detach())  # 1 en valor con μ = 1
        kl = ratio * k3_kl(log_probs, ref_log_probs, mask)
        # Las tres normalizaciones son lineales: normalizar la suma de los dos
        # términos es sumar los dos normalizados
        loss = loss + beta * normalize_loss(kl, mask, normalization)
    if loss_type == "dr_grpo":
        if max_completion_length is None:
            raise ValueError(
                "Con loss_type='dr_grpo' hace falta max_completion_length: TRL "
                "divide por B · max_completion_length."
            )
        loss = loss / max_completion_length
    return loss
