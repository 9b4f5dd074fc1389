"""Muestrear del modelo y medir probabilidades de respuestas.

Lo que necesita GRPO, y lo que enseña el cuaderno:

- ``sample``: genera respuestas en lote (con KV cache) y devuelve los ids,
  la log-probabilidad de cada token muestreado y una máscara. Con
  ``temperature=0`` (o ``None``) decodifica de forma voraz: en cada paso, el
  carácter más probable.
- ``token_log_probs``: recalcula esas log-probabilidades para secuencias
  dadas, de una sola pasada y con gradiente (es lo que usa la pérdida).
- ``next_token_probs`` y ``path_probs``: el árbol de continuaciones de
  17 × 24, carácter a carácter.
- ``copy_model``: una copia congelada (en otra precisión, o con pesos
  antiguos) para imitar un motor de inferencia que no es el entrenador.

En todo el módulo, el relleno nunca se puede muestrear: su logit se pone a
−∞ antes del softmax, tanto al generar como al recalcular, para que las dos
cuentas coincidan.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import torch
from torch.nn import functional as F

from .model import KVCache, TinyLM
from .task import MAX_NEW_TOKENS
from .tokenizer import tokenizer


class Samples(NamedTuple):
    """Un lote de respuestas generadas.

    - ``sequences``: ``(B, P + T)`` ids: enunciado y respuesta, con relleno
      tras el punto final.
    - ``log_probs``: ``(B, T)`` log-probabilidad (con la temperatura usada)
      de cada token de la respuesta; 0 en el relleno.
    - ``mask``: ``(B, T)`` float, 1 en los tokens de la respuesta (punto
      final incluido) y 0 en el relleno.
    """

    sequences: torch.Tensor
    log_probs: torch.Tensor
    mask: torch.Tensor

    @property
    def prompt_len(self) -> int:
        """Longitud P del enunciado."""
        return self.sequences.shape[1] - self.log_probs.shape[1]

    @property
    def completions(self) -> torch.Tensor:
        """``(B, T)`` ids de las respuestas (sin el enunciado)."""
        return self.sequences[:, self.prompt_len :]


def is_greedy(temperature: float | None) -> bool:
    """¿Pide ``temperature`` decodificación voraz? Sí con ``0`` o ``None``."""
    return temperature is None or temperature == 0


def next_token_log_probs(
    logits: torch.Tensor, temperature: float | None = 1.0
) -> torch.Tensor:
    """Logits ``(..., V)`` -> log-probabilidades ``(..., V)``, en float32 como
    mínimo (un modelo en bf16 sube a float32; uno en float64 se queda así).

    Divide por la temperatura y prohíbe el relleno (log-probabilidad −∞). La
    decodificación voraz (``temperature`` 0 o ``None``) no tiene reparto
    propio: se dan las log-probabilidades del modelo a temperatura 1.
    """
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
    logits = logits / (1.0 if is_greedy(temperature) else temperature)
    logits[..., tokenizer.pad_id] = float("-inf")
    return F.log_softmax(logits, dim=-1)


@torch.no_grad()
def sample(
    model: TinyLM,
    prompts: torch.Tensor,
    max_new_tokens: int = MAX_NEW_TOKENS,
    temperature: float | None = 1.0,
    generator: torch.Generator | None = None,
) -> Samples:
    """Genera una respuesta por fila de ``prompts``.

    - ``prompts``: ``(B, P)`` ids, todos de la misma longitud P (sin relleno).
      Para un grupo de G respuestas por enunciado, repite cada fila G veces
      (``prompts.repeat_interleave(G, dim=0)``).
    - ``temperature``: la del muestreo; ``0`` o ``None`` es la decodificación
      **voraz**: en cada paso se escribe el carácter más probable, sin sortear
      (no usa ``generator``, y ``log_probs`` guarda entonces la
      log-probabilidad de cada carácter elegido a temperatura 1).
    - ``generator``: un ``torch.Generator`` sembrado hace el muestreo
      reproducible.

    Devuelve ``Samples`` con T = ``max_new_tokens``. Una respuesta que no
    llega a escribir el punto final en ese espacio queda cortada (y el
    verificador le dará 0).
    """
    B = prompts.shape[0]
    cache = KVCache(model.cfg.n_layers)
    logits = model(prompts, cache)[:, -1]  # (B, V): el primer token de la respuesta
    tokens = torch.full((B, max_new_tokens), tokenizer.pad_id, dtype=torch.long)
    log_probs = torch.zeros(B, max_new_tokens)
    mask = torch.zeros(B, max_new_tokens)
    done = torch.zeros(B, dtype=torch.bool)
    for t in range(max_new_tokens):
        lp = next_token_log_probs(logits, temperature)  # (B, V)
        if is_greedy(temperature):
            next_token = lp.argmax(dim=-1, keepdim=True)  # (B, 1): el más probable
        else:
            next_token = torch.multinomial(lp.exp(), 1, generator=generator)
        alive = ~done
        tokens[alive, t] = next_token[alive, 0]
        log_probs[alive, t] = lp.gather(1, next_token)[alive, 0].float()
        mask[alive, t] = 1.0
        done = done | (next_token[:, 0] == tokenizer.end_id)
        if done.all() or t == max_new_tokens - 1:
            break
        # Solo procesamos el token nuevo: lo anterior ya está en la caché
        logits = model(next_token, cache)[:, -1]
    return Samples(torch.cat([prompts, tokens], dim=1), log_probs, mask)


def completion_mask(completions: torch.Tensor) -> torch.Tensor:
    """``(B, T)`` ids -> máscara float ``(B, T)``: 1 donde no hay relleno."""
    return (completions != tokenizer.pad_id).float()


def token_log_probs(
    model: TinyLM,
    sequences: torch.Tensor,
    prompt_len: int,
    temperature: float | None = 1.0,
) -> torch.Tensor:
    """Log-probabilidad de cada token de la respuesta bajo ``model``.

    - ``sequences``: ``(B, P + T)`` ids (enunciado + respuesta, con relleno
      a la derecha), por ejemplo ``Samples.sequences``.
    - ``prompt_len``: P.

    Devuelve ``(B, T)`` float32, con 0 en el relleno. Conserva el gradiente:
    es la pieza que se deriva en la pérdida de GRPO. El relleno va al final,
    y como la atención es causal no afecta a los tokens anteriores.
    """
    logits = model(sequences[:, :-1])  # la posición t predice el token t + 1
    logits = logits[:, prompt_len - 1 :]  # (B, T, V): solo la respuesta
    completions = sequences[:, prompt_len:]  # (B, T)
    lp = next_token_log_probs(logits, temperature)
    chosen = lp.gather(-1, completions.unsqueeze(-1)).squeeze(-1)  # (B, T)
    mask = completion_mask(completions)
    # where y no multiplicación: el relleno tiene log-prob −∞ y −∞ · 0 = nan
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))


def token_log_probs_and_entropy(
    model: TinyLM, sequences: torch.Tensor, prompt_len: int, temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Como ``token_log_probs``, y además la entropía de cada paso.

    Devuelve dos ``(B, T)`` con 0 en el relleno, los dos con gradiente: la
    log-probabilidad de cada token de la respuesta y la entropía (en nats)
    del reparto del que salió.
    """
    logits = model(sequences[:, :-1])[:, prompt_len - 1 :]
    log_p = next_token_log_probs(logits, temperature)  # (B, T, V)
    completions = sequences[:, prompt_len:]
    chosen = log_p.gather(-1, completions.unsqueeze(-1)).squeeze(-1)
    # El relleno tiene log p = −∞: se cambia por 0 antes de multiplicar, para
    # que ni el valor ni el gradiente den nan (0 · −∞)
    finite = torch.where(torch.isinf(log_p), torch.zeros_like(log_p), log_p)
    entropy = -(log_p.exp() * finite).sum(dim=-1)
    valid = completions != tokenizer.pad_id
    zeros = torch.zeros_like(chosen)
    return torch.where(valid, chosen, zeros), torch.where(valid, entropy, zeros)


@torch.no_grad()
def next_token_probs(model: TinyLM, prefix_text: str) -> dict[str, float]:
    """Distribución del siguiente carácter tras ``prefix_text``.

    ``next_token_probs(model, "17×24=17×20+17×4=340+")`` -> ``{"6": 0.8, ...}``,
    ordenado de más a menos probable. El punto final («.») es el token de fin.
    """
    ids = torch.tensor([tokenizer.encode(prefix_text)])
    probs = next_token_log_probs(model(ids)[0, -1]).exp()
    ranked = sorted(
        ((tokenizer.itos[i], p) for i, p in enumerate(probs.tolist())),
        key=lambda pair: -pair[1],
    )
    return {ch: p for ch, p in ranked if ch != tokenizer.itos[tokenizer.pad_id]}


@torch.no_grad()
def path_probs(model: TinyLM, prompt: str, completion: str) -> list[tuple[str, float]]:
    """Probabilidad de cada carácter de ``completion`` tras ``prompt``.

    Devuelve una lista de pares (carácter, probabilidad). El producto de las
    probabilidades es la probabilidad del camino entero en el árbol.
    """
    ids = torch.tensor([tokenizer.encode(prompt + completion)])
    lp = token_log_probs(model, ids, prompt_len=len(prompt))[0]
    return list(zip(completion, lp.exp().tolist(), strict=True))


def copy_model(model: TinyLM, dtype: torch.dtype | None = None) -> TinyLM:
    """Copia congelada de ``model`` para usarla como «motor de inferencia».

    - Con ``dtype=torch.bfloat16`` imita a un muestreador de menor precisión.
    - Guardada durante k pasos de entrenamiento, imita a un muestreador con
      pesos de hace k actualizaciones (entrenamiento asíncrono).

    La copia no tiene gradientes y está en modo evaluación.
    """
    frozen = copy.deepcopy(model).eval()
    if dtype is not None:
        frozen = frozen.to(dtype)
    for p in frozen.parameters():
        p.requires_grad_(False)
    return frozen
