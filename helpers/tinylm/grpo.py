"""GRPO de referencia: ventajas de grupo, pérdida con máscaras y bucle.

Son las piezas que el cuaderno 07_grpo pide escribir, ya resueltas, para que
el resto del curso (y las demostraciones) no dependan de tu solución.

Un paso de GRPO, en cuatro etapas::

    Etapa 1: G respuestas por enunciado, muestreadas del modelo
    Etapa 2: el verificador puntúa cada respuesta con 1 o 0
    Etapa 3: ventaja = recompensa − media de su grupo (y, opcional, / desviación)
    Etapa 4: pérdida = −media_i [ A_i · Σ_t log π(token_t) ], y un paso de Adam

Por defecto (``GRPOConfig()``) es la versión más corta: un solo paso por lote
(μ = 1), sin recorte, sin penalización KL (β = 0) y con la normalización de
Dr. GRPO. El entrenador (``grpo_step``, ``train_grpo``) minimiza siempre el
objetivo completo de DeepSeekMath, término a término, ``grpo_objective_loss``;
con la configuración por defecto su gradiente es, bit a bit, el de la pérdida
de la etapa 4 (``grpo_loss``, la del ejercicio), aunque su valor no:

    J = 1/G Σ_i 1/|o_i| Σ_t { min(r_it A_i, clip(r_it, 1 − ε, 1 + ε) A_i)
                               − β · k3(π_θ ‖ π_ref)_it }

con ``r_it = π_θ / π_old`` (módulo 06), ``k3 = ρ − log ρ − 1`` y
``ρ = π_ref / π_θ`` (el estimador del módulo 06), y ``GRPOConfig`` tiene sus
parámetros: ``epochs`` (μ), ``clip_eps`` (ε), ``kl_coef`` (β, contra una copia
congelada del modelo inicial) y ``loss_normalization`` (``"grpo"``,
``"dr_grpo"`` o ``"token"``; ver ``normalize_loss``).

Referencias: Shao et al. (2024), *DeepSeekMath* (GRPO, ventajas divididas
por la desviación típica del grupo, 1/|o_i| y penalización k3); Liu et al.
(2025), *Understanding R1-Zero-Like Training* (Dr. GRPO: sin dividir por la
desviación ni por la longitud); Yu et al. (2025), *DAPO* (media por token,
recorte asimétrico y muestreo dinámico); Yao et al. (2025), *Your Efficient
RL Framework Secretly Brings You Off-Policy RL Training* (muestreo por
importancia truncado entre muestreador y entrenador).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn
from tqdm.auto import tqdm

from ..ppo import clip_fraction, clipped_surrogate, minibatch_indices
from .checkpoint import load_pretrained
from .evaluate import correct_counts, heldout_accuracy, p_correct
from .model import TinyLM
from .sampling import (
    Samples,
    copy_model,
    sample,
    token_log_probs,
    token_log_probs_and_entropy,
)
from .task import (
    TARGET,
    Problem,
    encode_prompts,
    heldout_problems,
    rewards_for,
    rl_problems,
)

#: Una función de recompensa: ``(B, T)`` respuestas y B problemas -> ``(B,)``.
RewardFn = Callable[[torch.Tensor, list[Problem]], torch.Tensor]


def group_advantages(
    rewards: torch.Tensor, std_normalize: bool = False, eps: float = 1e-6
) -> torch.Tensor:
    """Ventajas de GRPO: cada recompensa menos la media de su grupo.

    - ``rewards``: ``(n_groups, G)``, las G recompensas de cada enunciado.
    - ``std_normalize``: si es ``True`` divide además por la desviación típica
      (poblacional) del grupo, como DeepSeekMath; si es ``False`` no, como
      Dr. GRPO.
    - ``eps``: evita la trampa 0/0 de un grupo todo aciertos o todo fallos
      (desviación 0): sus ventajas salen 0 y no aportan nada.

    Devuelve ``(n_groups, G)``. Ejemplo del curso: ``[[0, 1, 1, 0]]`` ->
    ``[[-0.5, 0.5, 0.5, -0.5]]`` (o ``[[-1, 1, 1, -1]]`` dividiendo).
    """
    advantages = rewards - rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        std = rewards.std(dim=-1, unbiased=False, keepdim=True)
        advantages = advantages / (std + eps)
    return advantages


def grpo_loss(
    log_probs: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    sampler_log_probs: torch.Tensor | None = None,
    is_cap: float | None = None,
) -> torch.Tensor:
    """Pérdida de GRPO: −media_i [ A_i · Σ_t w_it · m_it · log π_θ(y_it) ].

    - ``log_probs``: ``(B, T)`` log-probabilidades de los tokens bajo el
      modelo que se entrena (con gradiente).
    - ``mask``: ``(B, T)``, 1 en los tokens de la respuesta y 0 en el relleno.
    - ``advantages``: ``(B,)``, la ventaja de cada respuesta; todos sus tokens
      reciben la misma.
    - ``sampler_log_probs``: ``(B, T)`` opcional, las log-probabilidades con
      las que el muestreador (otra precisión, pesos antiguos) generó los
      tokens. Si se dan, cada token se pondera por
      ``w = π_θ / π_muestreador`` (sin gradiente): muestreo por importancia.
    - ``is_cap``: si se da, ``w`` se trunca a ``min(w, is_cap)`` para que
      ningún token domine la pérdida (muestreo por importancia truncado).

    Devuelve un escalar. Sin ``sampler_log_probs``, ``w = 1``.
    """
    weights = torch.ones_like(log_probs)
    if sampler_log_probs is not None:
        # El peso corrige *qué* se muestreó; no es algo que haya que derivar
        weights = torch.exp(log_probs.detach() - sampler_log_probs)
        if is_cap is not None:
            weights = weights.clamp(max=is_cap)
    per_sequence = (weights * mask * log_probs).sum(dim=-1)  # (B,)
    # La ventaja es un peso fijo: nunca se deriva (aunque venga de una red)
    return -(advantages.detach() * per_sequence).mean()


LossNormalization = Literal["grpo", "dr_grpo", "token"]
LOSS_NORMALIZATIONS: tuple[str, ...] = ("grpo", "dr_grpo", "token")


def k3_kl(
    log_probs: torch.Tensor, ref_log_probs: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Penalización KL de GRPO por token: el estimador k3 de KL(π_θ ‖ π_ref).

    Con ``log ρ = log π_ref − log π_θ`` (las muestras salen de π_θ, como en el
    módulo 06), ``k3 = ρ − log ρ − 1``: nunca es negativo y vale 0 donde las
    dos políticas coinciden.

    - ``log_probs``: ``(B, T)``, log π_θ de cada token, **con gradiente**;
    - ``ref_log_probs``: ``(B, T)``, log π_ref del modelo de referencia
      congelado (no se deriva);
    - ``mask``: ``(B, T)``, 1 en la respuesta y 0 en el relleno.

    Devuelve ``(B, T)`` con 0 en el relleno (haya lo que haya en él).
    """
    log_rho = ref_log_probs.detach() - log_probs
    k3 = torch.exp(log_rho) - log_rho - 1
    return torch.where(mask.bool(), k3, torch.zeros_like(k3))


def normalize_loss(
    per_token_loss: torch.Tensor,
    mask: torch.Tensor,
    normalization: LossNormalization = "dr_grpo",
) -> torch.Tensor:
    """De una pérdida por token ``(B, T)`` a un escalar, con la máscara.

    - ``"grpo"`` (DeepSeekMath): la media de los tokens de cada respuesta
      (entre su longitud |o_i|) y después la media sobre las B respuestas.
      Cada token de una respuesta larga pesa menos: sesgo de longitud.
    - ``"dr_grpo"`` (Liu et al., 2025): la suma de los tokens de cada
      respuesta entre una constante que no depende de la longitud. El
      artículo usa el presupuesto de generación; aquí, el número B de
      respuestas, así que es la pérdida del ejercicio 5: Σ_i Σ_t / B.
    - ``"token"`` (DAPO, Yu et al., 2025): la media de todos los tokens del
      lote, Σ_i Σ_t / Σ_i |o_i|. Todos los tokens pesan igual.
    """
    masked = torch.where(mask.bool(), per_token_loss, torch.zeros_like(per_token_loss))
    if normalization == "grpo":
        return (masked.sum(dim=-1) / mask.sum(dim=-1).clamp(min=1)).mean()
    if normalization == "dr_grpo":
        return masked.sum(dim=-1).mean()
    if normalization == "token":
        return masked.sum() / mask.sum().clamp(min=1)
    raise ValueError(
        f"loss_normalization debe ser uno de {LOSS_NORMALIZATIONS}; "
        f"es {normalization!r}."
    )


def grpo_objective_loss(
    log_probs: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    old_log_probs: torch.Tensor | None = None,
    clip_eps: float | None = None,
    clip_eps_high: float | None = None,
    ref_log_probs: torch.Tensor | None = None,
    kl_coef: float = 0.0,
    normalization: LossNormalization = "grpo",
    weights: torch.Tensor | None = None,
) -> torch.Tensor:
    """El objetivo de DeepSeekMath (cambiado de signo), término a término.

    - ``log_probs``: ``(B, T)``, log π_θ con gradiente; ``mask``: ``(B, T)``;
      ``advantages``: ``(B,)``, constantes, la misma en cada token de una
      respuesta (GRPO, RLOO), o ``(B, T)``, una por token (PPO con GAE).
    - ``old_log_probs``: ``(B, T)``, log π_old de la política que muestreó
      (sin gradiente). Por defecto, ``log_probs.detach()``: el cociente vale
      1 y su gradiente es el de log π (un solo paso por lote, μ = 1).
    - ``clip_eps``: ε del recorte de PPO (módulo 06), o ``None`` para no
      recortar. ``clip_eps_high``: el tope de arriba si es distinto (el
      recorte asimétrico de DAPO); por defecto, ``clip_eps``.
    - ``ref_log_probs`` y ``kl_coef``: log π_ref del modelo de referencia y
      β de la penalización ``k3_kl``.
    - ``normalization``: cómo se promedian los tokens (``normalize_loss``).
    - ``weights``: ``(B, T)`` opcional, pesos de muestreo por importancia
      entre muestreador y entrenador (sin gradiente); multiplican el término
      de la política, no la penalización.

    Devuelve un escalar: −J.
    """
    advantage = advantages.detach()
    if advantage.dim() == 1:
        advantage = advantage[:, None]  # (B, 1): la misma en cada token
    old = log_probs.detach() if old_log_probs is None else old_log_probs.detach()
    ratio = torch.exp(log_probs - old)  # r_it = π_θ / π_old
    if clip_eps is None:
        # r · w · A en este orden: con r = 1, el gradiente es, bit a bit, el de
        # grpo_loss (−A/B · w en cada token)
        weighted = ratio if weights is None else ratio * weights.detach()
        surrogate = weighted * advantage
    else:  # la cota pesimista de PPO (helpers.ppo, módulo 06)
        surrogate = clipped_surrogate(ratio, advantage, clip_eps, clip_eps_high)
        if weights is not None:
            surrogate = surrogate * weights.detach()
    per_token = -surrogate
    if kl_coef:
        if ref_log_probs is None:
            raise ValueError("Con kl_coef > 0 hace falta ref_log_probs.")
        per_token = per_token + kl_coef * k3_kl(log_probs, ref_log_probs, mask)
    return normalize_loss(per_token, mask, normalization)


@dataclass
class GRPOConfig:
    """Hiperparámetros de ``train_grpo`` (y, en 08, ``methods.MethodConfig.grpo``)."""

    seed: int = 0  # semilla de los enunciados y del muestreo
    steps: int = 100  # pasos de GRPO (~25-40 s con un hilo)
    prompts_per_step: int = 32  # enunciados (grupos) por paso
    group_size: int = 8  # G: respuestas por enunciado
    lr: float = 3e-4  # tasa de aprendizaje de Adam
    temperature: float = 1.0  # temperatura del muestreo
    std_normalize: bool = False  # dividir las ventajas por la desviación del grupo
    loss_normalization: LossNormalization = "dr_grpo"  # "grpo", "dr_grpo", "token"
    epochs: int = 1  # μ: pasadas por cada lote de respuestas
    minibatches: int = 1  # minilotes por pasada (un paso de gradiente cada uno)
    clip_eps: float | None = None  # ε del recorte de PPO (None: sin recorte)
    clip_eps_high: float | None = None  # tope de arriba de DAPO (None: = clip_eps)
    kl_coef: float = 0.0  # β: penalización k3 contra una copia congelada inicial
    entropy_coef: float = 0.0  # premio a la entropía de la política
    include_target: bool = True  # 17 × 24 es uno de los enunciados de cada paso
    max_grad_norm: float = 1.0  # recorte de la norma del gradiente
    eval_every: int = 0  # evaluar cada tantos pasos (0: solo al principio y al final)
    eval_samples: int = 8  # respuestas por problema al medir la precisión
    sampler_dtype: torch.dtype | None = None  # p. ej. torch.bfloat16
    sampler_lag: int = 0  # k: el muestreador usa los pesos de hace k pasos
    is_cap: float | None = None  # truncado del muestreo por importancia
    correct_off_policy: bool = True  # False: ignorar el desfase (pesos w = 1)
    max_seconds: float | None = None  # parar antes si se pasa de este tiempo
    num_threads: int | None = 1  # hilos de PyTorch al entrenar (None: no tocar)


def check_config(cfg: GRPOConfig) -> None:
    """Lanza ``ValueError`` si ``cfg`` no tiene sentido (antes de entrenar)."""
    epochs, parts = cfg.epochs, cfg.minibatches
    if epochs < 1 or parts < 1:
        raise ValueError(
            "epochs (μ) y el número de minilotes deben ser al menos 1; son "
            f"{epochs} y {parts}."
        )
    if cfg.loss_normalization not in LOSS_NORMALIZATIONS:
        raise ValueError(
            f"loss_normalization debe ser uno de {LOSS_NORMALIZATIONS}; "
            f"es {cfg.loss_normalization!r}."
        )


# --- Un paso: muestrear y puntuar (etapas 1 y 2), actualizar (etapa 4) -------


@dataclass
class Rollout:
    """Un lote de respuestas ya puntuadas, con lo que la actualización necesita.

    - ``problems``: B enunciados, el de cada respuesta (G seguidas por grupo).
    - ``samples``: secuencias, máscara y log-probabilidades del muestreador.
    - ``rewards``: ``(B,)``, la recompensa de cada respuesta.
    - ``old_log_probs``: ``(B, T)``, log π_old del modelo que se entrena,
      antes de actualizarlo (sin gradiente).
    - ``weights``: ``(B, T)``, pesos de muestreo por importancia
      ``min(π_old / π_muestreador, is_cap)``, o ``None`` (w = 1).
    - ``ref_log_probs``: ``(B, T)``, log π_ref del modelo de referencia, o
      ``None`` si no hay.
    - ``fresh``: las log-probabilidades y entropías de π_θ **con gradiente**
      del lote entero, o ``None``. Con un solo minilote, el primer paso de
      gradiente las reutiliza en vez de repetir la pasada hacia delante.
    """

    problems: list[Problem]
    samples: Samples
    rewards: torch.Tensor
    old_log_probs: torch.Tensor
    weights: torch.Tensor | None
    ref_log_probs: torch.Tensor | None
    fresh: tuple[torch.Tensor, torch.Tensor] | None


def collect_rollout(
    model: TinyLM,
    problems: list[Problem],
    cfg: GRPOConfig,
    generator: torch.Generator,
    sampler: TinyLM | None = None,
    reference: TinyLM | None = None,
    reward_fn: RewardFn | None = None,
) -> Rollout:
    """Etapas 1 y 2: G respuestas por enunciado, puntuadas, y sus log π.

    ``sampler`` genera las respuestas (por defecto, el propio ``model``);
    ``reward_fn`` las puntúa (por defecto, el verificador: ``rewards_for``);
    ``reference`` da log π_ref (hace falta si ``cfg.kl_coef > 0``).
    """
    if cfg.kl_coef and reference is None:
        raise ValueError("Con kl_coef > 0, grpo_step necesita reference.")
    G = cfg.group_size
    prompts = encode_prompts(problems).repeat_interleave(G, dim=0)  # (B, P)
    repeated = [p for p in problems for _ in range(G)]
    sampler = model if sampler is None else sampler
    samples = sample(sampler, prompts, temperature=cfg.temperature, generator=generator)
    rewards = (reward_fn or rewards_for)(samples.completions, repeated)  # (B,)
    P = samples.prompt_len
    fresh = None
    if cfg.minibatches == 1:
        fresh = token_log_probs_and_entropy(
            model, samples.sequences, P, cfg.temperature
        )
        old_log_probs = fresh[0].detach()
    else:
        with torch.no_grad():
            old_log_probs, _ = token_log_probs_and_entropy(
                model, samples.sequences, P, cfg.temperature
            )
    # Con ``cfg.correct_off_policy=False`` se ignora el desfase (w = 1), como
    # si muestreador y entrenador fueran el mismo: el error que se corrige
    weights = None
    if sampler is not model and cfg.correct_off_policy:
        # El peso corrige *qué* se muestreó; no es algo que haya que derivar
        weights = torch.exp(old_log_probs - samples.log_probs)
        if cfg.is_cap is not None:
            weights = weights.clamp(max=cfg.is_cap)
    ref_log_probs = None
    if reference is not None:  # con β = 0 solo se mide la KL, no se penaliza
        with torch.no_grad():
            ref_log_probs = token_log_probs(
                reference, samples.sequences, P, cfg.temperature
            )
    return Rollout(
        repeated, samples, rewards, old_log_probs, weights, ref_log_probs, fresh
    )


@dataclass
class AuxiliaryLoss:
    """Un término más de la pérdida, con su propio modelo y optimizador.

    ``loss(idx)`` da el término (ya multiplicado por su peso) para las
    respuestas ``idx`` del minilote; ``module`` y ``optimizer`` se actualizan
    con él. Es el crítico de PPO (``methods.method_step``).
    """

    loss: Callable[[torch.Tensor], torch.Tensor]
    module: nn.Module
    optimizer: torch.optim.Optimizer


def update_policy(
    model: TinyLM,
    optimizer: torch.optim.Optimizer,
    rollout: Rollout,
    advantages: torch.Tensor,
    cfg: GRPOConfig,
    generator: torch.Generator,
    auxiliary: AuxiliaryLoss | None = None,
) -> dict[str, list[float]]:
    """Etapa 4: ``cfg.epochs`` pasadas de ``cfg.minibatches`` pasos de gradiente.

    Cada paso minimiza ``grpo_objective_loss`` en su minilote: el cociente
    r = π_θ / π_old (recortado si ``cfg.clip_eps``), los pesos de importancia
    del lote, la penalización k3 con ``cfg.kl_coef`` y los tokens agregados
    según ``cfg.loss_normalization``; menos ``cfg.entropy_coef`` por la
    entropía media, más el término ``auxiliary`` si lo hay.

    - ``advantages``: ``(B,)``, una por respuesta (GRPO, RLOO), o ``(B, T)``,
      una por token (PPO con GAE). Es lo único que cambia entre métodos.

    Devuelve una lista por métrica, un valor por paso de gradiente, medidos
    antes de darlo: ``loss``, ``entropy`` (media por token), ``clip_fraction``
    (tokens con r fuera de [1 − ε, 1 + ε]; 0 sin recorte) y ``old_kl`` (k3 de
    KL(π_old ‖ π_θ)). En el primer paso, π_θ = π_old: r = 1 y KL 0.
    """
    B = len(rollout.problems)
    if cfg.minibatches > 1:
        size = math.ceil(B / cfg.minibatches)
        batches = minibatch_indices(B, size, cfg.epochs, generator=generator)
    else:
        batches = [torch.arange(B)] * cfg.epochs
    samples, weights, ref = rollout.samples, rollout.weights, rollout.ref_log_probs
    stats: dict[str, list[float]] = defaultdict(list)
    for i, idx in enumerate(batches):
        if i == 0 and rollout.fresh is not None:
            log_probs, entropy = rollout.fresh
        else:
            log_probs, entropy = token_log_probs_and_entropy(
                model, samples.sequences[idx], samples.prompt_len, cfg.temperature
            )
        mask, old = samples.mask[idx], rollout.old_log_probs[idx]
        valid = mask.bool()
        log_ratio = (log_probs.detach() - old)[valid]
        stats["old_kl"].append((torch.exp(log_ratio) - 1 - log_ratio).mean().item())
        fraction = 0.0
        if cfg.clip_eps is not None:
            ratio = torch.exp(log_ratio)
            fraction = clip_fraction(ratio, cfg.clip_eps, cfg.clip_eps_high).item()
        stats["clip_fraction"].append(fraction)
        loss = grpo_objective_loss(
            log_probs,
            mask,
            advantages[idx],
            old_log_probs=old,
            clip_eps=cfg.clip_eps,
            clip_eps_high=cfg.clip_eps_high,
            ref_log_probs=None if ref is None else ref[idx],
            kl_coef=cfg.kl_coef,
            normalization=cfg.loss_normalization,
            weights=None if weights is None else weights[idx],
        )
        if auxiliary is not None:
            loss = loss + auxiliary.loss(idx)
        mean_entropy = entropy[valid].mean()
        if cfg.entropy_coef:
            loss = loss - cfg.entropy_coef * mean_entropy
        trained = [(model, optimizer)]
        if auxiliary is not None:
            trained.append((auxiliary.module, auxiliary.optimizer))
        for _, opt in trained:
            opt.zero_grad()
        loss.backward()
        for module, opt in trained:
            torch.nn.utils.clip_grad_norm_(module.parameters(), cfg.max_grad_norm)
            opt.step()
        stats["loss"].append(loss.item())
        stats["entropy"].append(mean_entropy.item())
    return stats


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def grpo_step(
    model: TinyLM,
    optimizer: torch.optim.Optimizer,
    problems: list[Problem],
    cfg: GRPOConfig,
    generator: torch.Generator,
    sampler: TinyLM | None = None,
    reference: TinyLM | None = None,
    reward_fn: RewardFn | None = None,
    watch: dict[str, RewardFn] | None = None,
) -> dict[str, float]:
    """Un paso de GRPO sobre ``problems`` (un grupo de G respuestas por cada uno).

    Es ``collect_rollout`` (etapas 1 y 2), ``group_advantages`` (etapa 3) y
    ``update_policy`` (etapa 4): el mismo paso que da
    ``methods.method_step`` con RLOO o PPO, salvo las ventajas.

    ``sampler`` es el modelo que genera las respuestas; si es ``None`` las
    genera el propio ``model``. Con un muestreador distinto, la pérdida usa
    sus log-probabilidades para la corrección por importancia. ``reference``
    es el modelo de referencia congelado de la penalización KL (hace falta si
    ``cfg.kl_coef > 0``). Con ``cfg.epochs = μ``, el mismo lote da μ pasadas,
    con el cociente r = π_θ / π_old (recortado si ``cfg.clip_eps``).

    Devuelve métricas del paso: recompensa media, pérdida (el valor de
    ``grpo_objective_loss``, media de los pasos de gradiente; con μ = 1 y sin
    KL, −Σ_i A_i · Σ_t w_it / B con Dr. GRPO: no es la de ``grpo_loss``,
    aunque el gradiente sea el mismo), fracción de grupos mixtos (ni todo
    aciertos ni todo fallos), diferencia media de log-probabilidad entre
    entrenador y muestreador, longitud media de las respuestas y de las
    incorrectas (``nan`` si no hay ninguna), fracción de tokens recortados y
    KL(π_old ‖ π_θ) con k3 (medias sobre los pasos de gradiente, medidas
    antes de cada uno: 0 con μ = 1), ``entropy``: la entropía media por token
    (en nats) de la política antes del paso, sobre sus propias respuestas, y,
    si hay ``reference``, ``kl_ref``: la KL k3 por token a la referencia.

    ``reward_fn(completions, problems) -> (B,)`` puntúa las respuestas en vez
    del verificador (por ejemplo, un modelo de recompensa, módulo 10); cada
    función de ``watch`` puntúa las mismas respuestas sin entrenar con ellas, y
    su media sale en las métricas con su nombre (la utilidad verdadera que el
    modelo de recompensa solo aproxima, por ejemplo).
    """
    G = cfg.group_size
    rollout = collect_rollout(
        model, problems, cfg, generator, sampler, reference, reward_fn
    )
    rewards = rollout.rewards
    advantages = group_advantages(
        rewards.view(-1, G), std_normalize=cfg.std_normalize
    ).view(-1)
    stats = update_policy(model, optimizer, rollout, advantages, cfg, generator)

    samples, old_log_probs = rollout.samples, rollout.old_log_probs
    mask = samples.mask
    group_means = rewards.view(-1, G).mean(dim=-1)
    mixed = ((group_means > 0) & (group_means < 1)).float().mean()
    gap = (old_log_probs - samples.log_probs).abs() * mask
    lengths = mask.sum(dim=-1)
    wrong = rewards == 0
    metrics = {
        "reward": rewards.mean().item(),
        "loss": _mean(stats["loss"]),
        "mixed_groups": mixed.item(),
        "logprob_gap": (gap.sum() / mask.sum()).item(),
        "length": lengths.mean().item(),
        "wrong_length": lengths[wrong].mean().item() if wrong.any() else math.nan,
        "clip_fraction": _mean(stats["clip_fraction"]),
        "old_kl": _mean(stats["old_kl"]),
        "entropy": stats["entropy"][0],  # la de la política que muestreó
    }
    if rollout.ref_log_probs is not None:
        kl = k3_kl(old_log_probs, rollout.ref_log_probs, mask)
        metrics["kl_ref"] = (kl.sum() / mask.sum()).item()
    for name, score in (watch or {}).items():
        metrics[name] = score(samples.completions, rollout.problems).mean().item()
    return metrics


# --- El bucle: el mismo para train_grpo y methods.train_method ---------------

#: Un paso de entrenamiento: ``(optimizador, enunciados, generador,
#: muestreador o None) -> métricas``.
StepFn = Callable[
    [torch.optim.Optimizer, list[Problem], torch.Generator, TinyLM | None],
    dict[str, float],
]


class _StaleSampler:
    """El muestreador de cada paso: ``None`` (el propio modelo) o una copia en
    ``dtype`` y/o con los pesos de hace ``lag`` pasos."""

    def __init__(self, dtype: torch.dtype | None, lag: int) -> None:
        self.dtype, self.lag = dtype, lag
        self.copies: list[TinyLM] = []

    def __call__(self, model: TinyLM) -> TinyLM | None:
        if self.dtype is None and self.lag == 0:
            return None
        self.copies.append(copy_model(model, self.dtype))
        if len(self.copies) > self.lag + 1:
            self.copies.pop(0)
        return self.copies[0]


def run_training(
    model: TinyLM,
    cfg: GRPOConfig,
    step_fn: StepFn,
    record_step: Callable[[int, float, dict[str, float]], dict[str, float]],
    evaluate: Callable[[int, float], dict[str, float]],
    pool: list[Problem],
    desc: str = "GRPO",
    progress: bool = True,
) -> dict[str, list[float]]:
    """El bucle de entrenamiento de ``train_grpo`` y de ``methods.train_method``.

    Comprueba ``cfg`` (``check_config``), fija ``cfg.num_threads`` hilos (y
    deja los de antes al terminar, también si algo falla) y da ``cfg.steps``
    pasos (o hasta ``cfg.max_seconds`` de entrenamiento). En cada paso saca
    ``cfg.prompts_per_step`` enunciados de ``pool`` (uno es 17 × 24 si
    ``cfg.include_target``), elige el muestreador (``cfg.sampler_dtype``,
    ``cfg.sampler_lag``) y llama a ``step_fn`` con el optimizador (Adam con
    ``cfg.lr``) y el generador de la semilla ``cfg.seed``.

    La historia la escriben los dos ganchos: ``record_step(paso, segundos,
    métricas)`` da lo que se anota de cada paso, y ``evaluate(paso,
    segundos)`` lo que se anota al evaluar: al principio (paso 0), cada
    ``cfg.eval_every`` pasos (si no es 0) y al final. ``segundos`` es el
    tiempo de entrenamiento acumulado, sin las evaluaciones.
    """
    check_config(cfg)
    history: dict[str, list[float]] = defaultdict(list)

    def log(values: dict[str, float]) -> None:
        for name, value in values.items():
            history[name].append(value)

    # Con matrices tan pequeñas, un solo hilo es lo más rápido (ver train_grpo)
    previous_threads = torch.get_num_threads()
    if cfg.num_threads is not None:
        torch.set_num_threads(cfg.num_threads)
    try:
        rng = random.Random(cfg.seed)
        generator = torch.Generator().manual_seed(cfg.seed)
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        next_sampler = _StaleSampler(cfg.sampler_dtype, cfg.sampler_lag)
        log(evaluate(0, 0.0))
        train_seconds = 0.0
        bar = tqdm(range(1, cfg.steps + 1), desc=desc, disable=not progress)
        for step in bar:
            start = time.perf_counter()
            problems = rng.sample(pool, cfg.prompts_per_step - int(cfg.include_target))
            if cfg.include_target:
                problems.append(TARGET)
            sampler = next_sampler(model)
            metrics = step_fn(optimizer, problems, generator, sampler)
            train_seconds += time.perf_counter() - start
            log(record_step(step, train_seconds, metrics))
            out_of_time = (
                cfg.max_seconds is not None and train_seconds >= cfg.max_seconds
            )
            last = step == cfg.steps or out_of_time
            if last or (cfg.eval_every and step % cfg.eval_every == 0):
                log(evaluate(step, train_seconds))
            bar.set_postfix(recompensa=f"{metrics['reward']:.2f}")
            if out_of_time:
                break
        bar.close()
    finally:
        torch.set_num_threads(previous_threads)
    return dict(history)


def train_grpo(
    model: TinyLM,
    cfg: GRPOConfig | None = None,
    progress: bool = True,
    evaluate: bool = True,
    reference: TinyLM | None = None,
    reward_fn: RewardFn | None = None,
    watch: dict[str, RewardFn] | None = None,
    problems: list[Problem] | None = None,
) -> dict[str, list[float]]:
    """Entrena ``model`` con GRPO, en su sitio, y devuelve la historia.

    Es ``run_training`` con ``grpo_step`` (el bucle y el paso que usa también
    ``methods.train_method``), más la evaluación de este módulo.

    Los enunciados salen de ``rl_problems()`` (nunca de los de evaluación);
    con ``cfg.include_target`` uno de cada paso es 17 × 24.

    La historia es un diccionario de listas, listo para dibujar:

    - por paso: ``step``, ``reward``, ``loss``, ``mixed_groups``,
      ``logprob_gap``, ``length``, ``wrong_length``, ``clip_fraction``,
      ``old_kl`` (ver ``grpo_step``), ``kl_ref`` si hay modelo de referencia y
      ``train_seconds`` (tiempo acumulado sin evaluar);
    - en cada evaluación (si ``evaluate``): ``eval_step``,
      ``heldout_accuracy`` y ``p_correct`` (muestreando a T = 1),
      ``heldout_pass_at_k`` (pass@k con k = ``cfg.eval_samples``, de las mismas
      respuestas que ``heldout_accuracy``), ``heldout_greedy_accuracy`` y
      ``p_correct_greedy`` (decodificación voraz: 1 si la respuesta voraz a
      17 × 24 es correcta, 0 si no). Ver ``evaluate.py`` para cómo se miden.
      Las evaluaciones no cuentan en ``train_seconds``.

    Con matrices tan pequeñas, un solo hilo es lo más rápido, sobre todo si
    la máquina está ocupada (con 2 hilos y el otro núcleo ocupado, cada paso
    tarda varias veces más). Por eso, salvo ``cfg.num_threads=None``, el
    entrenamiento usa ``cfg.num_threads`` hilos y al final deja los de antes.

    ``reference`` es el modelo de referencia de la penalización KL. Si no se
    da y ``cfg.kl_coef > 0``, es una copia congelada de ``model`` tal como
    llega (el punto de partida, como el modelo SFT en DeepSeekMath). Si se da
    con ``cfg.kl_coef = 0``, la KL a él se mide en cada paso (``kl_ref``) pero
    no se penaliza. ``reward_fn`` y ``watch``: ver ``grpo_step`` (por defecto,
    el verificador). ``problems``: de dónde salen los enunciados (por defecto,
    ``rl_problems()``).
    """
    cfg = cfg or GRPOConfig()
    if reference is None and cfg.kl_coef:
        reference = copy_model(model)

    def step_fn(
        optimizer: torch.optim.Optimizer,
        batch: list[Problem],
        generator: torch.Generator,
        sampler: TinyLM | None,
    ) -> dict[str, float]:
        return grpo_step(
            model,
            optimizer,
            batch,
            cfg,
            generator,
            sampler,
            reference,
            reward_fn,
            watch,
        )

    def record_step(
        step: int, seconds: float, metrics: dict[str, float]
    ) -> dict[str, float]:
        return {"step": step, "train_seconds": seconds, **metrics}

    def run_evaluation(step: int, seconds: float) -> dict[str, float]:
        if not evaluate:
            return {}
        # Las mismas respuestas que heldout_accuracy(model, cfg.eval_samples):
        # la precisión a T = 1 y, gratis, pass@k con k = cfg.eval_samples
        counts = correct_counts(model, heldout_problems(), cfg.eval_samples)
        return {
            "eval_step": step,
            "heldout_accuracy": counts.sum().item() / (cfg.eval_samples * len(counts)),
            "heldout_pass_at_k": (counts > 0).float().mean().item(),
            "heldout_greedy_accuracy": heldout_accuracy(model, temperature=0),
            "p_correct": p_correct(model),
            "p_correct_greedy": p_correct(model, temperature=0),
        }

    pool = rl_problems() if problems is None else problems
    return run_training(
        model, cfg, step_fn, record_step, run_evaluation, pool, "GRPO", progress
    )


def _train_from_checkpoint(
    job: tuple[GRPOConfig, TinyLM | None],
) -> tuple[dict[str, list[float]], TinyLM]:
    """Un trabajo de :func:`train_grpo_runs`, en su propio proceso."""
    cfg, reference = job
    model = load_pretrained()
    history = train_grpo(
        model, cfg, progress=False, evaluate=False, reference=reference
    )
    return history, model


def train_grpo_runs(
    configs: list[GRPOConfig],
    reference: TinyLM | None = None,
    jobs: int | None = None,
) -> list[tuple[dict[str, list[float]], TinyLM]]:
    """Varios entrenamientos de GRPO desde el punto de partida, ``jobs`` a la vez.

    Para cada ``cfg`` hace lo mismo que::

        model = load_pretrained()
        history = train_grpo(model, cfg, progress=False, evaluate=False,
                             reference=reference)

    pero cada entrenamiento va en un proceso nuevo, y hasta ``jobs`` a la vez
    (por defecto, uno por núcleo, como mucho 2). Cada uno usa
    ``cfg.num_threads`` hilos y saca sus números aleatorios de generadores con
    su semilla, así que el resultado es idéntico al de hacerlos uno tras otro;
    con dos núcleos tarda menos (fuera de Linux, cada proceso nuevo paga además
    unos segundos de arranque: importar torch).

    Returns:
        Una pareja ``(history, model)`` por configuración, en el mismo orden:
        la historia de :func:`train_grpo` y el modelo ya entrenado.
    """
    jobs = jobs or min(2, os.cpu_count() or 1)
    # En Linux, cada proceso nace como copia de este (fork), con torch ya
    # importado; en macOS fork no es seguro y en Windows no existe: allí cada
    # proceso empieza de cero
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    work = [(cfg, reference) for cfg in configs]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_train_from_checkpoint, work))
