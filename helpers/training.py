"""Lo que comparten los agentes de CartPole: episodios, evaluación e historial.

REINFORCE (módulo 03), REINFORCE con línea base (04), A2C (05) y PPO (06) se
entrenan distinto, pero se miden igual. Aquí está esa parte común:

* ``make_envs`` y ``collect_episodes``: copias de un entorno de gymnasium y un
  episodio completo en cada una, como lote :class:`Episodes`;
* ``evaluate``: el retorno de la política voraz en episodios nuevos;
* ``evaluation_seed`` y ``record_evaluation``: la regla de evaluación común
  (mismas semillas para todos los agentes, también en ``make bench``), con la
  confirmación opcional en episodios nuevos (``confirmation_seed``);
* :class:`History` y :class:`Evaluation`: lo que queda de un entrenamiento.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
import torch
from torch import nn


@dataclass
class Episodes:
    """Un lote de episodios completos, paso tras paso y episodio tras episodio.

    Attributes:
        obs: ``(M, obs_dim)``, el estado de cada paso.
        actions: ``(M,)`` (o ``(M, d)`` si son continuas), la acción tomada.
        rewards: ``(M,)``, la recompensa recibida.
        lengths: cuántos pasos tiene cada episodio (suman ``M``).
    """

    obs: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    lengths: list[int]

    @property
    def n_episodes(self) -> int:
        return len(self.lengths)

    @property
    def n_steps(self) -> int:
        return sum(self.lengths)

    def split(self, values: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Parte un tensor ``(M, ...)`` en uno por episodio."""
        return torch.split(values, self.lengths)

    def total_rewards(self) -> np.ndarray:
        """La suma de recompensas de cada episodio, ``(N,)``."""
        return np.array([float(r.sum()) for r in self.split(self.rewards)])


class Policy(Protocol):
    """Lo que :func:`collect_episodes` necesita de una política."""

    def act(self, obs: torch.Tensor, greedy: bool = False) -> torch.Tensor: ...


def make_envs(
    env_id: str, n_envs: int, vectorization: str = "sync"
) -> gym.vector.VectorEnv:
    """``n_envs`` copias del entorno ``env_id`` que avanzan a la vez.

    ``vectorization="sync"`` es un ``SyncVectorEnv`` (copias de
    ``gym.make(env_id)`` una tras otra); ``"vector_entry_point"`` usa la versión
    vectorizada con NumPy que algunos entornos traen (CartPole-v1: mismas
    ecuaciones, varias veces más rápida).
    """
    return gym.make_vec(env_id, num_envs=n_envs, vectorization_mode=vectorization)


def collect_episodes(
    envs: gym.vector.VectorEnv,
    policy: Policy,
    *,
    greedy: bool = False,
    seed: int | None = None,
) -> Episodes:
    """Juega **un episodio completo en cada copia** de ``envs`` con ``policy``.

    Las copias que terminan antes esperan (sus pasos de más no se guardan). Un
    episodio acaba si ``terminated`` (la pértiga cayó) o ``truncated`` (se llegó
    al límite de tiempo, 500 pasos en CartPole-v1). El lote no distingue los dos
    casos, y eso tiene un precio: en un episodio truncado, el retorno ``G_t`` que
    se calcule con estas recompensas solo suma lo cobrado hasta el límite y se
    queda corto (tanto más cuanto más cerca del límite está ``t``), aunque el
    juego podría seguir. Es un sesgo que REINFORCE acepta porque no tiene valores
    con que completarlo; A2C y PPO (módulos 05 y 06) guardan ``truncated`` y
    completan el retorno con el valor estimado del último estado.

    Args:
        envs: un entorno vectorizado con reinicio automático «next step» (el de
            gymnasium por defecto).
        policy: cualquier objeto con ``act(obs, greedy)``.
        greedy: elegir la acción más probable en lugar de muestrear.
        seed: semilla para ``envs.reset``; ``None`` sigue la secuencia.

    Returns:
        Los ``envs.num_envs`` episodios, como :class:`Episodes`.
    """
    obs, _ = envs.reset(seed=seed)
    alive = np.ones(envs.num_envs, dtype=bool)
    steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    while alive.any():
        actions = policy.act(torch.as_tensor(obs, dtype=torch.float32), greedy=greedy)
        actions_np = actions.numpy()
        next_obs, rewards, terminated, truncated, _ = envs.step(actions_np)
        steps.append((obs, actions_np, np.asarray(rewards, dtype=np.float32), alive))
        alive = alive & ~(terminated | truncated)
        obs = next_obs
    obs_b, actions_b, rewards_b, alive_b = (
        np.stack(x, axis=1) for x in zip(*steps, strict=True)
    )
    # (n_envs, T, ...) → solo los pasos vivos, episodio tras episodio.
    return Episodes(
        obs=torch.as_tensor(obs_b[alive_b], dtype=torch.float32),
        actions=torch.as_tensor(actions_b[alive_b]),
        rewards=torch.as_tensor(rewards_b[alive_b], dtype=torch.float32),
        lengths=alive_b.sum(axis=1).tolist(),
    )


def evaluate(
    policy: Policy,
    env_id: str = "CartPole-v1",
    n_episodes: int = 20,
    *,
    seed: int = 0,
    greedy: bool = True,
) -> np.ndarray:
    """Retorno de ``n_episodes`` episodios de la política (voraz por defecto).

    Usa ``gym.make(env_id)`` de verdad (en un ``SyncVectorEnv``), no la versión
    vectorizada con NumPy del entrenamiento.

    Returns:
        ``(n_episodes,)``, el retorno sin descontar de cada episodio.
    """
    envs = make_envs(env_id, n_episodes, "sync")
    try:
        return collect_episodes(envs, policy, greedy=greedy, seed=seed).total_rewards()
    finally:
        envs.close()


# ---------------------------------------------------------------------------
# Evaluación voraz e historial de un entrenamiento
# ---------------------------------------------------------------------------


@dataclass
class Evaluation:
    """Una evaluación voraz durante el entrenamiento."""

    env_steps: int
    seconds: float
    mean_return: float
    #: media de la confirmación en episodios nuevos (``None``: no se confirmó)
    confirmed_return: float | None = None
    #: actualizaciones hechas antes de evaluar (``len(history.env_steps)``)
    updates: int | None = None

    def reaches(self, target: float) -> bool:
        """¿Llega al objetivo (y, si se confirmó, también en la confirmación)?"""
        return self.mean_return >= target and (
            self.confirmed_return is None or self.confirmed_return >= target
        )


@dataclass
class History:
    """Lo que pasó en un entrenamiento, actualización a actualización.

    Attributes:
        env_steps: pasos de entorno acumulados tras cada actualización.
        seconds: segundos transcurridos tras cada actualización.
        mean_returns: retorno medio de los episodios de cada lote.
        episode_returns: el retorno de cada episodio de entrenamiento, en orden.
        losses: el valor de la pérdida en cada actualización.
        entropies: la entropía media de ``π(·|s)`` en los estados del lote.
        baseline_losses: lo que devolvió ``baseline.update`` (si es un número).
        evaluations: las evaluaciones voraces periódicas.
        policy: la política entrenada.
    """

    env_steps: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    mean_returns: list[float] = field(default_factory=list)
    episode_returns: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    entropies: list[float] = field(default_factory=list)
    baseline_losses: list[float] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    policy: nn.Module | None = None
    target_return: float | None = None

    @property
    def solved(self) -> Evaluation | None:
        """La primera evaluación que alcanzó el objetivo (y lo confirmó, si se
        pidió confirmación), o ``None``."""
        if self.target_return is None:
            return None
        for evaluation in self.evaluations:
            if evaluation.reaches(self.target_return):
                return evaluation
        return None


def evaluation_seed(seed: int, index: int) -> int:
    """La semilla de la evaluación número ``index`` de un entrenamiento con ``seed``.

    La misma regla para A2C, PPO y, en ``make bench``, Stable-Baselines3: con la
    misma semilla, todos se evalúan en los mismos episodios.
    """
    return 10_000 + 1000 * seed + index


def confirmation_seed(seed: int, index: int) -> int:
    """La primera semilla de la confirmación tras la evaluación ``index``.

    Cada confirmación usa un bloque propio de 100 semillas consecutivas, lejos
    de las de :func:`evaluation_seed`: episodios que la evaluación no vio.
    """
    return 1_000_000_000 + 100_000 * seed + 100 * index


def record_evaluation(
    policy: Policy,
    config: Any,
    history: History,
    env_steps: int,
    start: float,
    seed: int | None = None,
) -> bool:
    """Evalúa la política voraz, lo anota en ``history`` y dice si llegó al objetivo.

    ``config`` aporta ``env_id``, ``eval_episodes``, ``target_return`` y ``seed``
    (la de la evaluación sale de :func:`evaluation_seed`, salvo que se dé otra).
    Si ``config.confirm_episodes`` es mayor que 0, una evaluación que llega al
    objetivo se confirma con tantos episodios nuevos (:func:`confirmation_seed`)
    y solo se para si la confirmación también llega: una media buena por
    suerte en 20 episodios no basta. Los segundos cuentan la confirmación.

    Se llama después de la actualización que usó los pasos hasta
    ``env_steps`` (y de anotarla en ``history``): la evaluación guarda cuántas
    actualizaciones lleva el agente (``updates``), para comprobar en
    ``make bench`` que ninguna espera todavía.
    """
    index = len(history.evaluations)
    if seed is None:
        seed = evaluation_seed(config.seed, index)
    score = float(
        evaluate(policy, config.env_id, config.eval_episodes, seed=seed).mean()
    )
    target = config.target_return
    confirmed = None
    episodes = getattr(config, "confirm_episodes", 0)
    if target is not None and score >= target and episodes:
        confirmed = float(
            evaluate(
                policy,
                config.env_id,
                episodes,
                seed=confirmation_seed(config.seed, index),
            ).mean()
        )
    evaluation = Evaluation(
        env_steps,
        time.perf_counter() - start,
        score,
        confirmed,
        updates=len(history.env_steps),
    )
    history.evaluations.append(evaluation)
    return target is not None and evaluation.reaches(target)
