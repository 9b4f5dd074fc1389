"""Auditar estimadores contra el oráculo (módulo 12): sus referencias y la
maquinaria de la auditoría.

- ``audit_estimates``: sesgo (ángulo y norma relativa de la estimación media
  frente a ∇J) y varianza (traza de la covarianza) de muchas estimaciones
  del gradiente.
- ``kl_estimate``: los estimadores k1, k2 y k3 de KL(π ‖ π_ref) de una
  respuesta entera, por token (sumados) o sobre la log-probabilidad sumada.
- ``estimator_weights``: cada estimador del curso como pesos de las
  puntuaciones ∇log p(y) de un lote; ``tempered_copy``: el modelo a otra
  temperatura (la política «cerca» o «lejos» de la referencia).
- ``score_basis`` y ``sample_estimates``: el gradiente de cada estimador
  sin un ``backward`` por muestra. Toda estimación de la familia de
  REINFORCE es Σ_i w_i ∇log p(y_i), una combinación de los ∇log p(y) de las
  respuestas enumeradas; así que vive en el subespacio que generan (de
  dimensión ≤ N). ``score_basis`` calcula esos N gradientes una vez y los
  escribe en una base ortonormal de ese subespacio: mismos productos
  escalares, mismos ángulos y normas, con N coordenadas en vez de 10⁵.

La auditoría muestrea del modelo **restringido** a lo enumerado,
q(y) = p(y) / Z con Z la masa cubierta: así «insesgado» se comprueba sin
la masa que falta (∇J_q es exacto, y su ángulo con el ∇J de
``oracle.exact_gradient`` se imprime en el cuaderno).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import torch

from .grpo import group_advantages
from .model import TinyLM
from .oracle import Enumeration, angle_degrees, sequence_log_probs
from .sampling import copy_model

#: Los estimadores de la auditoría, con su nombre en las figuras.
ESTIMATORS: dict[str, str] = {
    "reinforce": "REINFORCE sin línea base",
    "group_mean": "media del grupo",
    "rloo": "RLOO (media × G/(G−1))",
    "group_std": "media del grupo ÷ σ",
    "per_sequence": "RLOO, 1/|y| (GRPO)",
    "per_token": "RLOO, 1/Σ|y| (DAPO)",
}

#: La auditoría del cuaderno y de ``make bench``: los enunciados, el umbral de
#: la enumeración, los tamaños de grupo, los lotes por G y las semillas.
AUDIT_PROBLEMS: tuple[tuple[int, int], ...] = ((17, 24), (10, 15), (10, 22))
AUDIT_MIN_PROB = 1e-4
AUDIT_GROUPS: tuple[int, ...] = (2, 4, 8, 16)
AUDIT_RUNS = 3000
AUDIT_SEEDS: tuple[int, ...] = (0, 1, 2)


def audit_estimates(
    estimates: torch.Tensor, true_gradient: torch.Tensor
) -> tuple[float, float, float]:
    """Sesgo y varianza de ``estimates`` ``(R, D)`` (R estimaciones del
    gradiente) frente a ``true_gradient`` ``(D,)``.

    Devuelve tres floats: el ángulo en grados entre la estimación media y
    ∇J, la norma de la media entre la de ∇J, y la varianza total (la traza de
    la covarianza: la media de ‖ĝ_r − ḡ‖², dividiendo por R).
    """
    estimates, true_gradient = estimates.double(), true_gradient.double()
    mean = estimates.mean(dim=0)
    variance = ((estimates - mean) ** 2).sum(dim=1).mean()
    relative_norm = mean.norm() / true_gradient.norm()
    return angle_degrees(mean, true_gradient), float(relative_norm), float(variance)


def kl_estimate(
    log_probs: torch.Tensor,
    ref_log_probs: torch.Tensor,
    mask: torch.Tensor,
    kind: str,
    per_token: bool,
) -> torch.Tensor:
    """Estimación de KL(π ‖ π_ref) de cada respuesta, muestreada de π.

    - ``log_probs``, ``ref_log_probs``: ``(B, T)`` log-probabilidades por
      token bajo π y π_ref; ``mask``: ``(B, T)``, 1 en la respuesta (el
      relleno puede traer cualquier cosa).
    - ``kind``: ``"k1"`` (−log ρ), ``"k2"`` (½ (log ρ)²) o ``"k3"``
      (ρ − 1 − log ρ), con log ρ = log π_ref − log π.
    - ``per_token``: ``True``, el estimador en cada token y la suma sobre la
      respuesta; ``False``, el estimador de la log-probabilidad sumada.

    Devuelve ``(B,)``.
    """
    log_ratio = torch.where(mask.bool(), ref_log_probs - log_probs, 0.0)
    if not per_token:
        log_ratio = log_ratio.sum(dim=-1)
    if kind == "k1":
        estimate = -log_ratio
    elif kind == "k2":
        estimate = log_ratio**2 / 2
    else:
        estimate = torch.expm1(log_ratio) - log_ratio
    return estimate.sum(dim=-1) if per_token else estimate


class ScoreBasis(NamedTuple):
    """Los ∇log q(y) de las respuestas enumeradas de varios enunciados, en una
    base ortonormal (N respuestas en total, k ≤ N coordenadas).

    - ``scores``: ``(N, k)``, ∇log q(y) en coordenadas; q es el reparto de
      su enunciado restringido a lo enumerado, p(y) / Z.
    - ``probs``: ``(N,)`` q(y); ``rewards``, ``lengths``: ``(N,)`` R(y) y
      tokens de cada respuesta; ``prompt``: ``(N,)`` el índice de su
      enunciado.
    - ``true_gradient``: ``(k,)`` ∇J_q, la media sobre los enunciados de
      Σ q(y) R(y) ∇log q(y).
    - ``library_gradient``: ``(k,)`` el ∇J de ``oracle.exact_gradient`` (con
      p, sin renormalizar) en la misma base.
    """

    scores: torch.Tensor
    probs: torch.Tensor
    rewards: torch.Tensor
    lengths: torch.Tensor
    prompt: torch.Tensor
    true_gradient: torch.Tensor
    library_gradient: torch.Tensor


def _score_rows(model: TinyLM, enumeration: Enumeration) -> torch.Tensor:
    """``(N, D)`` ∇log p(y) de cada respuesta: un ``backward`` por respuesta."""
    params = [p for p in model.parameters() if p.requires_grad]
    rows = []
    for i in range(len(enumeration.log_probs)):
        log_p = sequence_log_probs(model, enumeration, slice(i, i + 1)).sum()
        grads = torch.autograd.grad(log_p, params, allow_unused=True)
        parts = [
            (torch.zeros_like(p) if g is None else g).reshape(-1)
            for p, g in zip(params, grads, strict=True)
        ]
        rows.append(torch.cat(parts).double())
    return torch.stack(rows)


def score_basis(
    model: TinyLM,
    enumerations: list[Enumeration],
    rewards: list[torch.Tensor],
) -> ScoreBasis:
    """∇log p(y) de cada respuesta enumerada y su Gram, que da las
    coordenadas en una base ortonormal del subespacio que generan."""
    jacobian = torch.cat([_score_rows(model, e) for e in enumerations])  # (N, D)
    eigenvalues, vectors = torch.linalg.eigh(jacobian @ jacobian.T)
    del jacobian
    keep = eigenvalues > 1e-12 * eigenvalues.max()
    coords = vectors[:, keep] * eigenvalues[keep].sqrt()  # e_i · e_j = K_ij
    prompt = torch.cat(
        [torch.full((len(e.log_probs),), i) for i, e in enumerate(enumerations)]
    )
    p = torch.cat([e.probs for e in enumerations])
    q = (
        p
        / torch.zeros(len(enumerations), dtype=p.dtype).index_add(0, prompt, p)[prompt]
    )
    rewards_all = torch.cat([r.double() for r in rewards])
    mean_scores = torch.zeros(len(enumerations), coords.shape[1], dtype=coords.dtype)
    mean_scores.index_add_(0, prompt, q[:, None] * coords)
    scores = coords - mean_scores[prompt]  # ∇log q = ∇log p − Σ q ∇log p
    n = len(enumerations)
    return ScoreBasis(
        scores,
        q,
        rewards_all,
        torch.cat([e.lengths for e in enumerations]).double(),
        prompt,
        (q * rewards_all) @ scores / n,
        (p * rewards_all) @ coords / n,
    )


def estimator_weights(
    rewards: torch.Tensor, lengths: torch.Tensor, estimator: str
) -> torch.Tensor:
    """Los pesos w de Σ w ∇log p(y) de un lote ``(..., P, G)``: P enunciados
    con G respuestas cada uno, con sus recompensas y longitudes (en tokens).

    ``estimator`` es una clave de :data:`ESTIMATORS`; las dos normalizaciones
    por longitud llevan la ventaja de RLOO (así solo cambia la longitud).
    """
    if estimator not in ESTIMATORS:
        raise ValueError(
            f"Estimador desconocido: {estimator!r}; hay {list(ESTIMATORS)}."
        )
    P, G = rewards.shape[-2:]
    if estimator == "reinforce":
        return rewards / (P * G)
    if estimator == "group_std":
        return group_advantages(rewards, std_normalize=True) / (P * G)
    centred = group_advantages(rewards)
    if estimator == "group_mean":
        return centred / (P * G)
    rloo = centred * G / (G - 1)
    if estimator == "per_sequence":
        return rloo / (P * G * lengths)
    if estimator == "per_token":
        return rloo / lengths.sum(dim=(-2, -1), keepdim=True)
    return rloo / (P * G)


def sample_estimates(
    basis: ScoreBasis, group_size: int, runs: int, seed: int
) -> dict[str, torch.Tensor]:
    """``runs`` lotes, cada uno con ``group_size`` respuestas de cada
    enunciado muestreadas de q (con semilla), y la estimación de ∇J de cada
    estimador en cada lote: ``{nombre: (runs, k)}``. Los dos estimadores
    normalizados por longitud se multiplican por la longitud media (con q):
    la escala no cambia el ángulo y así su norma se compara con las demás."""
    generator = torch.Generator().manual_seed(seed)
    picked = []
    for i in range(int(basis.prompt.max()) + 1):
        rows = torch.nonzero(basis.prompt == i).squeeze(1)
        draws = torch.multinomial(
            basis.probs[rows], runs * group_size, replacement=True, generator=generator
        )
        picked.append(rows[draws].view(runs, 1, group_size))
    picked = torch.cat(picked, dim=1)  # (R, P, G)
    rewards, lengths = basis.rewards[picked], basis.lengths[picked]
    mean_length = float(basis.probs @ basis.lengths) / picked.shape[1]
    estimates = {}
    for estimator in ESTIMATORS:
        weights = estimator_weights(rewards, lengths, estimator)
        if estimator in ("per_sequence", "per_token"):
            weights = weights * mean_length
        # Los pesos de cada respuesta enumerada, sumados: (R, N) @ (N, k)
        per_row = torch.zeros(runs, len(basis.probs), dtype=weights.dtype)
        per_row.scatter_add_(1, picked.reshape(runs, -1), weights.reshape(runs, -1))
        estimates[estimator] = per_row @ basis.scores
    return estimates


def audit_row(
    estimates: torch.Tensor,
    basis: ScoreBasis,
    summarize: Callable[..., tuple[float, float, float]] = audit_estimates,
) -> tuple[float, float, float, float, float]:
    """Lo que la auditoría mira de las estimaciones ``(R, k)`` de un estimador:
    el ángulo, la norma relativa y la varianza que da ``summarize`` (la
    referencia, o la función del estudiante), y los cocientes
    z = ‖ḡ − ∇J‖² / (varianza/R) y z⊥, con solo la parte de ḡ perpendicular a
    ∇J. Sin sesgo, z vale 1 en promedio; z⊥ grande: el estimador inclina el
    gradiente, no solo lo alarga."""
    truth = basis.true_gradient
    angle, norm, variance = summarize(estimates, truth)
    mean, unit = estimates.mean(dim=0), truth / truth.norm()
    perpendicular = mean - (mean @ unit) * unit
    noise = variance / len(estimates)
    return (
        angle,
        norm,
        variance,
        ((mean - truth) ** 2).sum().item() / noise,
        (perpendicular**2).sum().item() / noise,
    )


def standard_error(values: torch.Tensor) -> float:
    """El error típico de la media de ``values`` ``(B,)``."""
    return float(values.double().std() / math.sqrt(len(values)))


@torch.no_grad()
def tempered_copy(model: TinyLM, inverse_temperature: float) -> TinyLM:
    """Una copia de ``model`` cuyos logits son los suyos por
    ``inverse_temperature``: el mismo modelo muestreado a temperatura
    1/``inverse_temperature``. Como la matriz de salida es la de los
    embeddings (atada, sin sesgo), basta escalar la última normalización. Como
    ``copy_model``, la copia está congelada: sirve para muestrear y medir."""
    tempered = copy_model(model)
    tempered.ln_final.weight.mul_(inverse_temperature)
    tempered.ln_final.bias.mul_(inverse_temperature)
    return tempered
