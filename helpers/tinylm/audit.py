"""La auditoría de los estimadores frente al oráculo (módulo 12_oraculo).

El oráculo (``oracle.py``) da ∇J y la KL de secuencias exactos. Aquí está lo
que se compara con ellos:

- ``estimator_weights``: cada estimador del gradiente que enseñó el curso
  (REINFORCE sin línea base, la media del grupo con y sin ÷σ, RLOO y las
  normalizaciones por longitud del 09) como pesos w_i de las puntuaciones
  ∇log p(y_i) de un lote: la estimación es Σ_i w_i ∇log p(y_i).
- ``sequence_scores``: esas puntuaciones, una fila por respuesta (con
  ``torch.func``), solo para las respuestas distintas del lote.
- ``gradient_estimates``: muchas estimaciones independientes de cada
  estimador, con muestras nuevas de ``sample``.
- ``gradient_audit``: el ángulo y la norma de la estimación media frente a
  ∇J, y la varianza (la traza de la covarianza).
- ``kl_estimates``: k1, k2 y k3 por token (sumados sobre la respuesta) o
  sobre la log-probabilidad de la secuencia entera.
- ``tempered_copy``: una copia del modelo a otra temperatura, para tener una
  política cerca y otra lejos de la referencia.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import torch
from torch.func import functional_call, grad, vmap

from .model import TinyLM
from .sampling import sample, token_log_probs
from .task import Problem, encode_prompts, rewards_for

#: Los estimadores del gradiente que se auditan, en el orden de las tablas.
ESTIMATORS: tuple[str, ...] = (
    "reinforce",
    "group_mean",
    "rloo",
    "group_std",
    "length_grpo",
    "length_token",
)

#: Su nombre en las tablas y figuras.
ESTIMATOR_LABELS: dict[str, str] = {
    "reinforce": "REINFORCE sin línea base",
    "group_mean": "media del grupo",
    "rloo": "RLOO",
    "group_std": "media del grupo ÷ σ",
    "length_grpo": "÷ |o| (GRPO)",
    "length_token": "÷ Σ|o| (por token)",
}

#: Los estimadores de la KL: k1, k2 y k3.
KL_ESTIMATORS: tuple[str, ...] = ("k1", "k2", "k3")


def estimator_weights(
    rewards: torch.Tensor, lengths: torch.Tensor, estimator: str, eps: float = 1e-6
) -> torch.Tensor:
    """Los pesos w ``(n, G)`` de un estimador: la estimación de ∇J es
    Σ_i w_i ∇log p(y_i), el gradiente cambiado de signo de su pérdida.

    - ``rewards``, ``lengths``: ``(n, G)``, la recompensa y los tokens de las
      G respuestas de cada uno de los n enunciados.
    - ``estimator``: uno de ``ESTIMATORS``. Las ventajas son las de 07 y 08
      (la media del grupo, ÷σ poblacional con ``eps``, RLOO = G/(G−1) por la
      media); las dos normalizaciones por longitud usan la ventaja de la media
      del grupo y dividen como ``normalize_loss`` («grpo»: cada respuesta
      entre su longitud; «token»: entre todos los tokens del lote).
    """
    n, G = rewards.shape
    batch = n * G
    rewards, lengths = rewards.double(), lengths.double()
    centered = rewards - rewards.mean(dim=-1, keepdim=True)
    if estimator == "reinforce":
        return rewards / batch
    if estimator == "group_mean":
        return centered / batch
    if estimator == "rloo":
        return centered * G / (G - 1) / batch
    if estimator == "group_std":
        std = rewards.std(dim=-1, unbiased=False, keepdim=True)
        return centered / (std + eps) / batch
    if estimator == "length_grpo":
        return centered / lengths / batch
    if estimator == "length_token":
        return centered / lengths.sum()
    raise ValueError(f"estimator debe ser uno de {ESTIMATORS}; es {estimator!r}.")


def sequence_scores(
    model: TinyLM, sequences: torch.Tensor, prompt_len: int, batch_size: int = 128
) -> torch.Tensor:
    """``(B, D)`` float32: ∇_θ log p(y) de cada fila de ``sequences``, con los
    parámetros en el orden de ``named_parameters()`` (el de ``flat_gradient``)."""
    params = {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}

    def log_p(theta: dict[str, torch.Tensor], row: torch.Tensor) -> torch.Tensor:
        def forward(tokens: torch.Tensor) -> torch.Tensor:
            return functional_call(model, theta, (tokens,))

        return token_log_probs(forward, row[None], prompt_len).sum()  # type: ignore[arg-type]

    per_row = vmap(grad(log_p), in_dims=(None, 0))
    rows = []
    for start in range(0, len(sequences), batch_size):
        grads = per_row(params, sequences[start : start + batch_size])
        rows.append(torch.cat([g.reshape(g.shape[0], -1) for g in grads.values()], 1))
    return torch.cat(rows)


def gradient_estimates(
    model: TinyLM,
    problems: Sequence[Problem],
    group_size: int,
    draws: int,
    generator: torch.Generator,
    estimators: Sequence[str] = ESTIMATORS,
) -> dict[str, torch.Tensor]:
    """``draws`` estimaciones independientes de ∇J por estimador.

    Cada estimación sortea con ``sample`` (temperatura 1, ``generator``) un
    grupo de ``group_size`` respuestas nuevas por enunciado, como un paso de
    GRPO. Devuelve ``{estimador: (draws, D)}`` en float64. Las puntuaciones
    se calculan una vez por respuesta distinta: la mayoría se repiten.
    """
    n, G = len(problems), group_size
    prompts = encode_prompts(list(problems)).repeat_interleave(G, dim=0)
    prompts = prompts.repeat(draws, 1)  # (draws · n · G, P): estimación a estimación
    samples = sample(model, prompts, generator=generator)
    batch_problems = [p for p in problems for _ in range(G)] * draws
    rewards = rewards_for(samples.completions, batch_problems).double()
    rewards = rewards.view(draws, n, G)
    lengths = samples.mask.sum(dim=-1).view(draws, n, G)
    unique, inverse = torch.unique(samples.sequences, dim=0, return_inverse=True)
    scores = sequence_scores(model, unique, samples.prompt_len).double()
    rows = torch.arange(draws).repeat_interleave(n * G)
    estimates = {}
    for estimator in estimators:
        w = torch.stack(
            [
                estimator_weights(r, ell, estimator)
                for r, ell in zip(rewards, lengths, strict=True)
            ]
        ).reshape(-1)
        weights = torch.zeros(draws, len(unique), dtype=torch.float64)
        weights.index_put_((rows, inverse), w, accumulate=True)
        estimates[estimator] = weights @ scores
    return estimates


def gradient_audit(
    estimates: torch.Tensor, true_gradient: torch.Tensor, ddof: int = 0
) -> tuple[float, float, float]:
    """Sesgo y varianza de K estimaciones ``(K, D)`` de un gradiente ``(D,)``.

    Devuelve tres ``float``:

    - el ángulo, en grados, entre la estimación media ḡ y ``true_gradient``;
    - ‖ḡ‖ / ‖∇J‖;
    - la varianza: la traza de la covarianza, la media de ‖g_k − ḡ‖²
      (dividiendo por K − ``ddof``).
    """
    estimates, truth = estimates.double(), true_gradient.double().reshape(-1)
    mean = estimates.mean(dim=0)
    cosine = float(mean @ truth) / float(mean.norm() * truth.norm())
    angle = math.degrees(math.acos(min(1.0, max(-1.0, cosine))))
    spread = ((estimates - mean) ** 2).sum() / (len(estimates) - ddof)
    return angle, float(mean.norm() / truth.norm()), float(spread)


def bias_ratio(
    estimates: torch.Tensor, true_gradient: torch.Tensor, direction_only: bool = False
) -> float:
    """‖ḡ − ∇J‖² / (varianza / K): cuánto se aleja la media de ∇J frente a lo
    que explicaría el ruido solo. Sin sesgo, vale alrededor de 1.

    Con ``direction_only``, ∇J se reescala antes para acercarse lo más posible
    a ḡ: solo cuenta la desviación en dirección (un estimador que apunta bien
    con otra longitud da alrededor de 1)."""
    estimates, truth = estimates.double(), true_gradient.double()
    mean = estimates.mean(dim=0)
    if direction_only:
        truth = truth * (mean @ truth) / (truth @ truth)
    noise = ((estimates - mean) ** 2).sum() / (len(estimates) - 1) / len(estimates)
    return float(((mean - truth) ** 2).sum() / noise)


def kl_estimates(
    log_probs: torch.Tensor,
    ref_log_probs: torch.Tensor,
    mask: torch.Tensor,
    estimator: str = "k3",
    per_token: bool = True,
) -> torch.Tensor:
    """Una estimación de KL(π ‖ π_ref) de secuencias por respuesta, ``(B,)``.

    Las respuestas salen de π; ``log_probs`` y ``ref_log_probs`` son ``(B, T)``
    por token bajo π y π_ref, y ``mask`` ``(B, T)`` marca la respuesta (en el
    relleno puede haber cualquier cosa). Con log ρ = log π_ref − log π:
    k1 = −log ρ, k2 = (log ρ)²/2, k3 = ρ − 1 − log ρ.

    - ``per_token=True``: el estimador en cada token, sumado sobre la
      respuesta (lo que hace GRPO con k3).
    - ``per_token=False``: el estimador sobre la secuencia entera, con
      log ρ = Σ_t log ρ_t.
    """
    valid = mask.bool()
    log_rho = torch.where(valid, ref_log_probs - log_probs, torch.zeros_like(log_probs))
    if not per_token:
        log_rho = log_rho.sum(dim=-1)
    if estimator == "k1":
        values = -log_rho
    elif estimator == "k2":
        values = log_rho**2 / 2
    elif estimator == "k3":
        values = torch.expm1(log_rho) - log_rho
    else:
        raise ValueError(
            f"estimator debe ser uno de {KL_ESTIMATORS}; es {estimator!r}."
        )
    return values.sum(dim=-1) if per_token else values


@torch.no_grad()
def tempered_copy(model: TinyLM, inverse_temperature: float) -> TinyLM:
    """Una copia de ``model`` cuyos logits son los suyos por
    ``inverse_temperature``: el mismo modelo muestreado a temperatura
    1/``inverse_temperature``. Como la matriz de salida es la de los
    embeddings (atada), se escala la última normalización."""
    tempered = copy.deepcopy(model)
    tempered.ln_final.weight.mul_(inverse_temperature)
    tempered.ln_final.bias.mul_(inverse_temperature)
    return tempered
