"""Las tuberías de un entrenador de RL para LLM, en tensores de Hugging Face.

Las referencias de los ejercicios del módulo 09_puente (y de sus demos):

- ``masked_mean``: la media de los valores donde la máscara vale 1, con el
  relleno ignorado aunque valga ``nan`` o ``inf``;
- ``trl_normalize``: las tres normalizaciones de la pérdida por token con
  los nombres de TRL (``grpo``, ``bnpo``, ``dr_grpo``) sobre un lote
  rellenado a la derecha;
- ``accumulate_gradients``: el gradiente de un lote grande calculado en k
  micro-lotes, igual al de una sola pasada;
- ``informative_groups``: qué respuestas pertenecen a un grupo con
  recompensas distintas (las únicas con ventaja distinta de 0).

``response_log_probs`` (los logits desplazados y la máscara) vive en
``helpers.puente.losses``, junto a la pérdida de TRL.
"""

from __future__ import annotations

import torch

from .losses import response_log_probs

PLUMBING_LOSS_TYPES: tuple[str, ...] = ("grpo", "bnpo", "dr_grpo")


def masked_mean(
    values: torch.Tensor, mask: torch.Tensor, dim: int | None = None
) -> torch.Tensor:
    """Media de ``values`` donde ``mask`` vale 1.

    - ``values``, ``mask``: la misma forma; en el relleno (``mask`` 0)
      ``values`` puede valer cualquier cosa, también ``nan`` o ``inf``.
    - ``dim``: ``None`` para la media de todas las casillas válidas (un
      escalar); un eje para la media a lo largo de él (p. ej. ``dim=-1``: la
      de cada fila).

    Una fila sin ninguna casilla válida da ``nan`` (0/0), como ``mean`` de un
    tensor vacío.
    """
    keep = mask.bool()
    kept = torch.where(keep, values, torch.zeros_like(values))
    if dim is None:
        return kept.sum() / keep.sum()
    return kept.sum(dim=dim) / keep.sum(dim=dim)


def trl_normalize(
    per_token: torch.Tensor,
    mask: torch.Tensor,
    loss_type: str,
    max_completion_length: int,
) -> torch.Tensor:
    """La pérdida por token ``(B, T)`` reducida a un escalar como en TRL.

    - ``"grpo"``: la media de los tokens de cada respuesta y después la media
      sobre las B respuestas;
    - ``"bnpo"``: la media de todos los tokens válidos del lote;
    - ``"dr_grpo"``: la suma de todos los tokens válidos entre
      B · ``max_completion_length`` (una constante: no depende de cuánto
      escribió cada respuesta).

    El relleno (``mask`` 0) puede valer cualquier cosa y nunca cuenta.
    """
    if loss_type == "grpo":
        return masked_mean(per_token, mask, dim=-1).mean()
    if loss_type == "bnpo":
        return masked_mean(per_token, mask)
    if loss_type == "dr_grpo":
        kept = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))
        return kept.sum() / (per_token.shape[0] * max_completion_length)
    raise ValueError(f"loss_type debe ser uno de {PLUMBING_LOSS_TYPES}: {loss_type!r}")


def accumulate_gradients(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    prompt_len: int,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    num_microbatches: int,
) -> float:
    """Acumula en ``.grad`` el gradiente de la pérdida de política del lote.

    La pérdida es la de GRPO con μ = 1 y β = 0, normalizada por token en el
    lote **entero** (como ``loss_type="dapo"`` de TRL)::

        L = −Σ_i Σ_t m_it · A_i · log π_θ(y_it) / Σ_i Σ_t m_it

    - ``model``: un modelo causal de Hugging Face (su salida tiene ``.logits``);
    - ``input_ids``: ``(B, P + T)``, enunciado y respuesta rellenada a la
      derecha; ``prompt_len``: P; ``mask``: ``(B, T)``, 1 en la respuesta;
    - ``advantages``: ``(B,)``, sin gradiente;
    - ``num_microbatches``: k, que divide a B. Los micro-lotes son filas
      seguidas: el j-ésimo, las filas ``j·B/k`` a ``(j+1)·B/k − 1``.

    Hace un ``forward`` y un ``backward`` por micro-lote (nunca el lote
    entero a la vez) y no pone los gradientes a 0: los suma a lo que hubiera,
    como ``loss.backward()``. Devuelve el valor de L como ``float``.
    """
    batch = input_ids.shape[0]
    if batch % num_microbatches:
        raise ValueError(f"k = {num_microbatches} no divide a B = {batch}.")
    size = batch // num_microbatches
    total_tokens = mask.sum()  # el normalizador del lote entero, no del trozo
    total = 0.0
    for start in range(0, batch, size):
        rows = slice(start, start + size)
        logits = model(input_ids[rows]).logits
        log_probs = response_log_probs(logits, input_ids[rows], prompt_len, mask[rows])
        weighted = advantages[rows].detach()[:, None] * log_probs * mask[rows]
        loss = -weighted.sum() / total_tokens
        loss.backward()
        total += loss.item()
    return total


def informative_groups(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """¿Qué respuestas están en un grupo con recompensas distintas?

    - ``rewards``: ``(B,)``, las recompensas de B = n · G respuestas, en
      grupos de ``group_size`` = G seguidos (las G de un enunciado juntas).

    Devuelve un tensor booleano ``(B,)``: ``True`` en las respuestas de los
    grupos donde no todas las recompensas son iguales. En un grupo de
    recompensas iguales todas las ventajas son 0 (con o sin dividir por σ) y
    sus respuestas no aportan gradiente: TRL cuenta esos grupos en
    ``frac_reward_zero_std``.
    """
    groups = rewards.reshape(-1, group_size)
    varied = (groups != groups[:, :1]).any(dim=-1)  # (n,)
    return varied.repeat_interleave(group_size)
