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
- ``critic_audit``: el crítico de PPO de 08 (``ValueModel`` entrenado
  brevemente, ``train_critic``, y el exacto, ``exact_values``) con las
  ventajas GAE de 08 (``critic_advantages``). Su estimación por respuesta,
  Σ_t ∇log q(y_t | y_<t) A_t(y), también vive en la base
  (``critic_vectors``), y su media y su varianza salen exactas, sin
  muestrear (``exact_audit``).

La auditoría muestrea del modelo **restringido** a lo enumerado,
q(y) = p(y) / Z con Z la masa cubierta: así «insesgado» se comprueba sin
la masa que falta (∇J_q es exacto, y su ángulo con el ∇J de
``oracle.exact_gradient`` se imprime en el cuaderno).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from typing import NamedTuple

import torch

from .grpo import group_advantages
from .methods import ValueModel, token_gae
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


def _draw(basis: ScoreBasis, group_size: int, runs: int, seed: int) -> torch.Tensor:
    """``(runs, P, group_size)`` índices de respuestas enumeradas: en cada lote,
    ``group_size`` de cada enunciado, muestreadas de q con semilla."""
    generator = torch.Generator().manual_seed(seed)
    picked = []
    for i in range(int(basis.prompt.max()) + 1):
        rows = torch.nonzero(basis.prompt == i).squeeze(1)
        draws = torch.multinomial(
            basis.probs[rows], runs * group_size, replacement=True, generator=generator
        )
        picked.append(rows[draws].view(runs, 1, group_size))
    return torch.cat(picked, dim=1)


def sample_estimates(
    basis: ScoreBasis,
    group_size: int,
    runs: int,
    seed: int,
    per_answer: Mapping[Hashable, torch.Tensor] | None = None,
) -> dict[Hashable, torch.Tensor]:
    """``runs`` lotes, cada uno con ``group_size`` respuestas de cada
    enunciado muestreadas de q (con semilla), y la estimación de ∇J de cada
    estimador en cada lote: ``{nombre: (runs, k)}``. Los dos estimadores
    normalizados por longitud se multiplican por la longitud media (con q):
    la escala no cambia el ángulo y así su norma se compara con las demás.

    ``per_answer``: ``{clave: (N, k)}``, estimadores que dan un vector por
    respuesta (el del crítico, ``critic_vectors``); su estimación en un lote es
    la media de los vectores de sus respuestas, y se añade a lo que devuelve.
    Con la misma semilla, los lotes son los mismos para todos."""
    picked = _draw(basis, group_size, runs, seed)  # (R, P, G)
    rewards, lengths = basis.rewards[picked], basis.lengths[picked]
    mean_length = float(basis.probs @ basis.lengths) / picked.shape[1]
    estimates = {}
    for estimator in ESTIMATORS:
        weights = estimator_weights(rewards, lengths, estimator)
        if estimator in ("per_sequence", "per_token"):
            weights = weights * mean_length
        estimates[estimator] = _per_row(picked, weights, basis) @ basis.scores
    uniform = torch.full(picked.shape, 1 / picked[0].numel(), dtype=torch.float64)
    for name, vectors in (per_answer or {}).items():
        estimates[name] = _per_row(picked, uniform, basis) @ vectors
    return estimates


def _per_row(
    picked: torch.Tensor, weights: torch.Tensor, basis: ScoreBasis
) -> torch.Tensor:
    """``(R, N)``: los pesos de cada respuesta enumerada en cada lote, sumados
    (una respuesta que sale dos veces suma sus dos pesos)."""
    runs = picked.shape[0]
    per_row = torch.zeros(runs, len(basis.probs), dtype=weights.dtype)
    return per_row.scatter_add_(1, picked.reshape(runs, -1), weights.reshape(runs, -1))


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


# --- El crítico de PPO (módulo 08) -------------------------------------------
#
# El crítico de 08 da una ventaja por token, A_t(y), y su estimación es
# Σ_t ∇log π(y_t | y_<t) A_t(y): no es una combinación de los ∇log p(y) de
# las respuestas. Pero en el mundo de la auditoría la política es q, y su
# reparto del carácter siguiente es q(y_t | y_<t) = M(y_≤t) / M(y_<t), con
# M(s) la masa de las respuestas enumeradas que empiezan por s. Su puntuación,
#   ∇log q(y_t | y_<t) = m(y_≤t) − m(y_<t),
# con m(s) la media (con q) de los ∇log p(y) de esas respuestas, sí vive en la
# base: el crítico se audita como los demás, y sus sumas sobre t dan
# m(y) − m(raíz) = ∇log q(y), la puntuación de toda la respuesta.

#: Los críticos de la auditoría: (qué V, λ de GAE) y su nombre en las tablas.
#: «trained», el de 08 entrenado brevemente (``train_critic``); «exact», el
#: perfecto, V(y_<t) = E_q[R | y_<t] (``exact_values``). λ = 0,95 es la de 08.
CRITICS: dict[tuple[str, float], str] = {
    ("trained", 1.0): "crítico de 08, λ = 1",
    ("trained", 0.95): "crítico de 08, λ = 0,95",
    ("exact", 1.0): "crítico exacto, λ = 1",
    ("exact", 0.95): "crítico exacto, λ = 0,95",
}
#: El entrenamiento breve del crítico (``train_critic``): pasos de Adam y
#: respuestas por enunciado en cada paso.
CRITIC_STEPS = 40
CRITIC_SAMPLES = 16


def _prefix_groups(
    basis: ScoreBasis, enumerations: list[Enumeration]
) -> list[torch.Tensor]:
    """Para cada t = 0…T, ``(N,)``: el grupo de cada respuesta según su
    enunciado y sus t primeros caracteres (mismo grupo, mismo prefijo)."""
    completions = torch.cat([e.completions for e in enumerations])  # (N, T)
    groups = []
    for t in range(completions.shape[1] + 1):
        key = torch.cat([basis.prompt[:, None], completions[:, :t]], dim=1)
        groups.append(torch.unique(key, dim=0, return_inverse=True)[1])
    return groups


def _subtree_means(
    group: torch.Tensor, probs: torch.Tensor, values: torch.Tensor
) -> torch.Tensor:
    """Para cada respuesta, la media con ``probs`` de ``values`` ``(N, ...)``
    sobre las respuestas de su grupo (las que comparten su prefijo)."""
    n, shape = int(group.max()) + 1, (-1,) + (1,) * (values.dim() - 1)
    mass = torch.zeros(n, dtype=probs.dtype).index_add_(0, group, probs)
    total = torch.zeros(n, *values.shape[1:], dtype=values.dtype)
    total.index_add_(0, group, probs.view(shape) * values)
    return (total / mass.view(shape))[group]


def exact_values(basis: ScoreBasis, enumerations: list[Enumeration]) -> torch.Tensor:
    """``(N, T)`` el crítico perfecto: V(y_<t) = E_q[R | y_<t], la recompensa
    media (con q) de las respuestas enumeradas que empiezan por y_<t."""
    groups = _prefix_groups(basis, enumerations)[:-1]
    return torch.stack(
        [_subtree_means(g, basis.probs, basis.rewards) for g in groups], dim=1
    )


@torch.no_grad()
def critic_values(
    critic: ValueModel, enumerations: list[Enumeration], batch_size: int = 256
) -> torch.Tensor:
    """``(N, T)`` float64: V(y_<t) del crítico ``critic`` antes de cada token
    de cada respuesta enumerada (en lotes de ``batch_size``)."""
    values = [
        critic(e.sequences[rows], e.prompt_len)
        for e in enumerations
        for rows in (
            slice(i, i + batch_size) for i in range(0, len(e.log_probs), batch_size)
        )
    ]
    return torch.cat(values).double()


def critic_advantages(
    basis: ScoreBasis,
    enumerations: list[Enumeration],
    values: torch.Tensor,
    lam: float,
) -> torch.Tensor:
    """``(N, T)`` las ventajas GAE de 08 (``methods.token_gae``, γ = 1) de cada
    respuesta enumerada, con la recompensa R(y) en su último token y los
    valores ``values`` ``(N, T)``; 0 en el relleno. Con λ = 1,
    A_t = R − V(y_<t)."""
    mask = torch.cat([e.mask for e in enumerations])
    last = basis.lengths.long()[:, None] - 1
    rewards = torch.zeros_like(mask).scatter_(1, last, basis.rewards[:, None].float())
    return token_gae(rewards, values, mask, gamma=1.0, lam=lam).double()


def critic_vectors(
    basis: ScoreBasis, enumerations: list[Enumeration], advantages: torch.Tensor
) -> torch.Tensor:
    """``(N, k)`` la estimación del crítico con una sola respuesta,
    g_y = Σ_t ∇log q(y_t | y_<t) A_t(y), de cada respuesta enumerada, en la
    base. La de un lote de G respuestas por enunciado es la media de sus g_y
    (``sample_estimates`` con ``per_answer``)."""
    groups = _prefix_groups(basis, enumerations)
    vectors = torch.zeros_like(basis.scores)
    before = _subtree_means(groups[0], basis.probs, basis.scores)  # m(y_<t)
    for t in range(advantages.shape[1]):
        after = _subtree_means(groups[t + 1], basis.probs, basis.scores)  # m(y_≤t)
        vectors += advantages[:, t, None] * (after - before)
        before = after
    return vectors


def exact_audit(basis: ScoreBasis, vectors: torch.Tensor) -> tuple[float, float, float]:
    """Sesgo y varianza exactos, sin muestrear, del estimador que da el vector
    ``vectors[y]`` ``(N, k)`` por respuesta (la media sobre las respuestas del
    lote; sobre los enunciados, la media de sus medias).

    Devuelve el ángulo en grados de E_q[ĝ] con ∇J_q, ‖E_q[ĝ]‖ / ‖∇J_q‖ y la
    varianza total con **una** respuesta por enunciado,
    Σ_enunciados (E_q‖g_y‖² − ‖E_q g_y‖²) / P²; con G respuestas
    independientes, se divide por G."""
    P = int(basis.prompt.max()) + 1
    weighted = basis.probs[:, None] * vectors
    means = torch.zeros(P, vectors.shape[1], dtype=vectors.dtype)
    means.index_add_(0, basis.prompt, weighted)
    second = torch.zeros(P, dtype=vectors.dtype)
    second.index_add_(0, basis.prompt, (weighted * vectors).sum(dim=1))
    mean, truth = means.sum(dim=0) / P, basis.true_gradient
    variance = float((second - (means**2).sum(dim=1)).sum()) / P**2
    return angle_degrees(mean, truth), float(mean.norm() / truth.norm()), variance


def train_critic(
    model: TinyLM,
    basis: ScoreBasis,
    enumerations: list[Enumeration],
    seed: int,
    steps: int = CRITIC_STEPS,
    samples: int = CRITIC_SAMPLES,
    lr: float = 1e-3,
) -> ValueModel:
    """El crítico de 08 (``methods.ValueModel``: una copia de ``model`` con
    una cabeza de valor que empieza en 0), entrenado brevemente con Adam (la
    tasa de ``CriticConfig``) para predecir la recompensa final desde cada
    prefijo. En cada paso, ``samples`` respuestas de cada enunciado
    muestreadas de q (la política de la auditoría, con semilla) y el error
    cuadrático medio de V(y_<t) frente a R(y) en sus tokens: el objetivo de 08
    con λ = 1 y sin KL. Devuelve el crítico en modo evaluación."""
    torch.manual_seed(seed)  # ValueModel no sortea nada; por si cambia
    critic = ValueModel(model).to(next(model.parameters()).dtype)
    optimizer = torch.optim.Adam(critic.parameters(), lr=lr)
    sequences = torch.cat([e.sequences for e in enumerations])
    mask = torch.cat([e.mask for e in enumerations]).bool()
    prompt_len = enumerations[0].prompt_len
    for rows in _draw(basis, samples, steps, seed).view(steps, -1):
        values = critic(sequences[rows], prompt_len)
        targets = basis.rewards[rows].to(values.dtype)[:, None].expand_as(values)
        loss = ((values - targets) ** 2)[mask[rows]].mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return critic.eval()


class CriticRow(NamedTuple):
    """Un crítico en la auditoría (``critic_audit``).

    - ``vectors``: ``(N, k)`` g_y de cada respuesta (``critic_vectors``), para
      muestrear lotes con ``sample_estimates``;
    - ``angle``, ``relative_norm``, ``variance``: los de ``exact_audit``
      (la varianza, con una respuesta por enunciado: con G, ÷ G);
    - ``explained``: la fracción de la varianza de R(y) que explica V(y_<t),
      con cada token pesado por q(y): 1 − E_q[Σ_t (R − V)²] / E_q[Σ_t (R − R̄)²],
      con R̄ la media de su enunciado. El crítico exacto da el techo: ni él
      adivina una recompensa que aún no se ha sorteado.
    """

    vectors: torch.Tensor
    angle: float
    relative_norm: float
    variance: float
    explained: float


def critic_audit(
    model: TinyLM, basis: ScoreBasis, enumerations: list[Enumeration], seed: int
) -> dict[tuple[str, float], CriticRow]:
    """Cada crítico de :data:`CRITICS`, auditado exactamente: entrena el de 08
    con ``seed`` (``train_critic``), calcula el exacto y, con cada λ, sus
    ventajas GAE, sus g_y y su sesgo y su varianza sin muestrear."""
    values = {
        "trained": critic_values(
            train_critic(model, basis, enumerations, seed), enumerations
        ),
        "exact": exact_values(basis, enumerations),
    }
    mask = torch.cat([e.mask for e in enumerations]).double()
    weights = basis.probs[:, None] * mask  # q(y) en cada token de y
    P = int(basis.prompt.max()) + 1
    means = torch.zeros(P, dtype=torch.float64).index_add_(
        0, basis.prompt, basis.probs * basis.rewards
    )
    spread = (weights * (basis.rewards - means[basis.prompt])[:, None] ** 2).sum()
    rows = {}
    for kind, lam in CRITICS:
        error = (weights * (basis.rewards[:, None] - values[kind]) ** 2).sum()
        advantages = critic_advantages(basis, enumerations, values[kind], lam)
        vectors = critic_vectors(basis, enumerations, advantages)
        rows[kind, lam] = CriticRow(
            vectors, *exact_audit(basis, vectors), float(1 - error / spread)
        )
    return rows
