"""GRPO de referencia: ventajas de grupo, pérdida con máscaras y bucle.

Son las piezas que el cuaderno 07_grpo pide escribir, ya resueltas, para que
el resto del curso (y las demostraciones) no dependan de tu solución.

Un paso de GRPO, en cuatro etapas::

    Etapa 1: G respuestas por enunciado, muestreadas del modelo
    Etapa 2: el verificador puntúa cada respuesta con 1 o 0
    Etapa 3: ventaja = recompensa − media de su grupo (y, opcional, / desviación)
    Etapa 4: pérdida = −media_i [ A_i · Σ_t log π(token_t) ], y un paso de Adam

Referencias: Shao et al. (2024), *DeepSeekMath* (GRPO, ventajas divididas
por la desviación típica del grupo); Liu et al. (2025), *Understanding
R1-Zero-Like Training* (Dr. GRPO: sin dividir por la desviación); Yao et al.
(2025), *Your Efficient RL Framework Secretly Brings You Off-Policy RL
Training* (muestreo por importancia truncado entre muestreador y entrenador).
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from .evaluate import correct_counts, heldout_accuracy, p_correct
from .model import TinyLM
from .sampling import copy_model, sample, token_log_probs
from .task import (
    TARGET,
    Problem,
    encode_prompts,
    heldout_problems,
    rewards_for,
    rl_problems,
)


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


@dataclass
class GRPOConfig:
    """Hiperparámetros de ``train_grpo``."""

    seed: int = 0  # semilla de los enunciados y del muestreo
    steps: int = 100  # pasos de GRPO (~25-40 s con un hilo)
    prompts_per_step: int = 32  # enunciados (grupos) por paso
    group_size: int = 8  # G: respuestas por enunciado
    lr: float = 3e-4  # tasa de aprendizaje de Adam
    temperature: float = 1.0  # temperatura del muestreo
    std_normalize: bool = False  # dividir las ventajas por la desviación del grupo
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


def grpo_step(
    model: TinyLM,
    optimizer: torch.optim.Optimizer,
    problems: list[Problem],
    cfg: GRPOConfig,
    generator: torch.Generator,
    sampler: TinyLM | None = None,
) -> dict[str, float]:
    """Un paso de GRPO sobre ``problems`` (un grupo de G respuestas por cada uno).

    ``sampler`` es el modelo que genera las respuestas; si es ``None`` las
    genera el propio ``model``. Con un muestreador distinto, la pérdida usa
    sus log-probabilidades para la corrección por importancia.

    Devuelve métricas del paso: recompensa media, pérdida, fracción de grupos
    mixtos (ni todo aciertos ni todo fallos) y diferencia media de
    log-probabilidad entre entrenador y muestreador.
    """
    G = cfg.group_size
    # Etapa 1: G respuestas por enunciado
    prompts = encode_prompts(problems).repeat_interleave(G, dim=0)  # (B, P)
    repeated = [p for p in problems for _ in range(G)]
    sampler = model if sampler is None else sampler
    samples = sample(sampler, prompts, temperature=cfg.temperature, generator=generator)
    # Etapa 2: el verificador puntúa
    rewards = rewards_for(samples.completions, repeated)  # (B,)
    # Etapa 3: ventajas de grupo
    advantages = group_advantages(
        rewards.view(-1, G), std_normalize=cfg.std_normalize
    ).view(-1)
    # Etapa 4: pérdida y paso de gradiente
    log_probs = token_log_probs(
        model, samples.sequences, samples.prompt_len, cfg.temperature
    )
    # Con ``cfg.correct_off_policy=False`` se ignora el desfase (w = 1), como
    # si muestreador y entrenador fueran el mismo: el error que se corrige
    off_policy = sampler is not model and cfg.correct_off_policy
    loss = grpo_loss(
        log_probs,
        samples.mask,
        advantages,
        sampler_log_probs=samples.log_probs if off_policy else None,
        is_cap=cfg.is_cap,
    )
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
    optimizer.step()

    group_means = rewards.view(-1, G).mean(dim=-1)
    mixed = ((group_means > 0) & (group_means < 1)).float().mean()
    gap = (log_probs.detach() - samples.log_probs).abs() * samples.mask
    return {
        "reward": rewards.mean().item(),
        "loss": loss.item(),
        "mixed_groups": mixed.item(),
        "logprob_gap": (gap.sum() / samples.mask.sum()).item(),
    }


def train_grpo(
    model: TinyLM,
    cfg: GRPOConfig | None = None,
    progress: bool = True,
    evaluate: bool = True,
) -> dict[str, list[float]]:
    """Entrena ``model`` con GRPO, en su sitio, y devuelve la historia.

    Los enunciados salen de ``rl_problems()`` (nunca de los de evaluación);
    con ``cfg.include_target`` uno de cada paso es 17 × 24.

    La historia es un diccionario de listas, listo para dibujar:

    - por paso: ``step``, ``reward``, ``loss``, ``mixed_groups``,
      ``logprob_gap`` y ``train_seconds`` (tiempo acumulado sin evaluar);
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
    """
    cfg = cfg or GRPOConfig()
    rng = random.Random(cfg.seed)
    generator = torch.Generator().manual_seed(cfg.seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    pool = rl_problems()
    stale: list[TinyLM] = []  # pesos antiguos para el muestreador con retraso
    history: dict[str, list[float]] = defaultdict(list)

    def run_evaluation(step: int) -> None:
        if not evaluate:
            return
        history["eval_step"].append(step)
        # Las mismas respuestas que heldout_accuracy(model, cfg.eval_samples):
        # la precisión a T = 1 y, gratis, pass@k con k = cfg.eval_samples
        counts = correct_counts(model, heldout_problems(), cfg.eval_samples)
        history["heldout_accuracy"].append(
            counts.sum().item() / (cfg.eval_samples * len(counts))
        )
        history["heldout_pass_at_k"].append((counts > 0).float().mean().item())
        history["heldout_greedy_accuracy"].append(
            heldout_accuracy(model, temperature=0)
        )
        history["p_correct"].append(p_correct(model))
        history["p_correct_greedy"].append(p_correct(model, temperature=0))

    previous_threads = torch.get_num_threads()
    if cfg.num_threads is not None:
        torch.set_num_threads(cfg.num_threads)
    run_evaluation(0)
    train_seconds = 0.0
    bar = tqdm(range(1, cfg.steps + 1), desc="GRPO", disable=not progress)
    for step in bar:
        start = time.perf_counter()
        n_random = cfg.prompts_per_step - int(cfg.include_target)
        problems = rng.sample(pool, n_random)
        if cfg.include_target:
            problems.append(TARGET)
        # El muestreador: el propio modelo, o una copia en otra precisión y/o
        # con los pesos de hace ``sampler_lag`` pasos
        sampler = None
        if cfg.sampler_dtype is not None or cfg.sampler_lag > 0:
            stale.append(copy_model(model, cfg.sampler_dtype))
            if len(stale) > cfg.sampler_lag + 1:
                stale.pop(0)
            sampler = stale[0]
        metrics = grpo_step(model, optimizer, problems, cfg, generator, sampler)
        train_seconds += time.perf_counter() - start

        history["step"].append(step)
        history["train_seconds"].append(train_seconds)
        for name, value in metrics.items():
            history[name].append(value)
        out_of_time = cfg.max_seconds is not None and train_seconds >= cfg.max_seconds
        last = step == cfg.steps or out_of_time
        if last or (cfg.eval_every and step % cfg.eval_every == 0):
            run_evaluation(step)
        bar.set_postfix(recompensa=f"{metrics['reward']:.2f}")
        if out_of_time:
            break
    bar.close()
    torch.set_num_threads(previous_threads)
    return dict(history)
