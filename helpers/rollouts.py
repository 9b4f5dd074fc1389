"""Rollouts de longitud fija y GAE: la base común de actor-crítico (05) y PPO (06).

REINFORCE (módulos 03 y 04) juega episodios completos. Actor-crítico y PPO, en
cambio, avanzan ``n_steps`` pasos en ``n_envs`` copias del entorno a la vez y
aprenden de ese bloque ``(T, N)`` aunque los episodios queden a medias: el
crítico pone el valor de lo que falta. Aquí está lo que los dos comparten:

* ``make_vector_env``: copias de un entorno de gymnasium con reinicio automático
  «en el mismo paso», de modo que la observación final de cada episodio llega en
  ``infos["final_obs"]`` y se puede evaluar con el crítico;
* ``ActorCritic``: una red con una cabeza de política (logits) y una de valor,
  con tronco compartido o separado;
* ``collect_rollout``: el bloque ``(T, N)`` de transiciones, con ``terminated``
  y ``truncated`` por separado y el valor del estado siguiente ya calculado;
* ``gae``: las ventajas generalizadas (Schulman et al., 2016) hacia atrás.

Convención de ``gae`` (la que usan los cuadernos 05, 06 y 07):

    δ_t = r_t + γ·(1 − terminated_t)·V(s_{t+1}) − V(s_t)
    Â_t = δ_t + γ·λ·(1 − done_t)·Â_{t+1},    done_t = terminated_t o truncated_t

``terminated`` corta el *bootstrap* (tras un estado terminal no hay nada que
cobrar); ``truncated`` no lo corta (el episodio se interrumpió por tiempo, el
estado siguiente valía ``V(s_{t+1})``), pero los dos cortan la recursión: la
ventaja de un episodio no se mezcla con la del siguiente.
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

ArrayLike = np.ndarray | torch.Tensor


def make_vector_env(
    env_id: str = "CartPole-v1", n_envs: int = 8
) -> gym.vector.VectorEnv:
    """``n_envs`` copias de ``env_id`` en un ``SyncVectorEnv`` con reinicio «same step».

    Cuando una copia termina, ``step`` devuelve ya la observación inicial del
    episodio siguiente y deja la final en ``infos["final_obs"]`` (con la máscara
    ``infos["_final_obs"]``).
    """
    return gym.make_vec(
        env_id,
        num_envs=n_envs,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
    )


def _mlp(sizes: list[int], out_std: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        linear = nn.Linear(n_in, n_out)
        last = i == len(sizes) - 2
        nn.init.orthogonal_(linear.weight, out_std if last else np.sqrt(2))
        nn.init.zeros_(linear.bias)
        layers.append(linear)
        if not last:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Actor (logits de ``π(·|s)``) y crítico (``V(s)``) para acciones discretas.

    Con ``shared=True`` las dos cabezas comparten la capa oculta (menos
    parámetros, pero los gradientes del crítico mueven también al actor); con
    ``shared=False`` son dos redes independientes. Inicialización ortogonal con
    la última capa del actor casi a cero: al empezar, ``π`` es casi uniforme.
    """

    def __init__(
        self, obs_dim: int, n_actions: int, hidden: int = 64, shared: bool = False
    ) -> None:
        super().__init__()
        self.shared = shared
        if shared:
            self.trunk = _mlp([obs_dim, hidden, hidden], np.sqrt(2))
            self.trunk.append(nn.Tanh())
            self.actor = _mlp([hidden, n_actions], 0.01)
            self.critic = _mlp([hidden, 1], 1.0)
        else:
            self.trunk = nn.Identity()
            self.actor = _mlp([obs_dim, hidden, hidden, n_actions], 0.01)
            self.critic = _mlp([obs_dim, hidden, hidden, 1], 1.0)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits (..., n_actions), valores (...,))`` de un lote de estados."""
        features = self.trunk(obs)
        return self.actor(features), self.critic(features).squeeze(-1)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """``V(s)`` de un lote de estados, forma ``(...,)``."""
        return self.critic(self.trunk(obs)).squeeze(-1)

    def distribution(self, obs: torch.Tensor) -> Categorical:
        """La distribución ``π(·|s)`` de un lote de estados."""
        return Categorical(logits=self.actor(self.trunk(obs)))

    @torch.no_grad()
    def act(self, obs: torch.Tensor, greedy: bool = False) -> torch.Tensor:
        """Una acción por estado: muestreada o, si ``greedy``, la más probable."""
        logits = self.actor(self.trunk(obs))
        if greedy:
            return logits.argmax(dim=-1)
        return Categorical(logits=logits).sample()


@dataclass
class Rollout:
    """Un bloque de ``T`` pasos en ``N`` entornos; todos los tensores son ``(T, N)``.

    Attributes:
        obs: ``(T, N, obs_dim)``, el estado en el que se actuó.
        actions: la acción tomada.
        log_probs: ``log π_θ(a_t|s_t)`` al muestrear (sin gradiente).
        values: ``V(s_t)`` al muestrear (sin gradiente).
        rewards: la recompensa cobrada.
        terminated: 1.0 si el episodio acabó en un estado terminal.
        truncated: 1.0 si se cortó por el límite de tiempo.
        next_values: ``V(s_{t+1})`` del estado siguiente *de verdad* (la
            observación final si el episodio acabó), sin gradiente.
        episode_returns: retornos de los episodios que acabaron en el bloque.
    """

    obs: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor
    rewards: torch.Tensor
    terminated: torch.Tensor
    truncated: torch.Tensor
    next_values: torch.Tensor
    episode_returns: list[float]

    @property
    def n_steps(self) -> int:
        """Pasos de entorno del bloque, ``T·N``."""
        return int(self.rewards.numel())


class RolloutCollector:
    """Juega ``n_steps`` pasos seguidos en ``envs`` y recuerda dónde se quedó.

    El estado de los entornos (observación actual y retorno acumulado de cada
    episodio en curso) pasa de un bloque al siguiente: los episodios no se
    cortan al final del bloque.
    """

    def __init__(self, envs: gym.vector.VectorEnv, seed: int | None = None) -> None:
        self.envs = envs
        obs, _ = envs.reset(seed=seed)
        self.obs = torch.as_tensor(obs, dtype=torch.float32)
        self.running_returns = np.zeros(envs.num_envs)

    @torch.no_grad()
    def collect(self, agent: ActorCritic, n_steps: int) -> Rollout:
        """El siguiente bloque ``(n_steps, num_envs)`` con la política de ``agent``."""
        fields: dict[str, list[torch.Tensor]] = {
            k: []
            for k in (
                "obs",
                "actions",
                "log_probs",
                "values",
                "rewards",
                "terminated",
                "truncated",
                "next_values",
            )
        }
        finished: list[float] = []
        for _ in range(n_steps):
            logits, values = agent(self.obs)
            distribution = Categorical(logits=logits)
            actions = distribution.sample()
            next_obs, rewards, terminated, truncated, infos = self.envs.step(
                actions.numpy()
            )
            next_obs_t = torch.as_tensor(next_obs, dtype=torch.float32)
            done = terminated | truncated
            # El estado siguiente de verdad: la observación final si acabó.
            real_next = next_obs_t.clone()
            if done.any():
                final = infos["final_obs"]
                for i in np.flatnonzero(done):
                    real_next[i] = torch.as_tensor(final[i], dtype=torch.float32)
            self.running_returns += rewards
            finished.extend(self.running_returns[done].tolist())
            self.running_returns[done] = 0.0
            for key, value in (
                ("obs", self.obs),
                ("actions", actions),
                ("log_probs", distribution.log_prob(actions)),
                ("values", values),
                ("rewards", torch.as_tensor(rewards, dtype=torch.float32)),
                ("terminated", torch.as_tensor(terminated, dtype=torch.float32)),
                ("truncated", torch.as_tensor(truncated, dtype=torch.float32)),
                ("next_values", agent.value(real_next)),
            ):
                fields[key].append(value)
            self.obs = next_obs_t
        return Rollout(
            **{k: torch.stack(v) for k, v in fields.items()}, episode_returns=finished
        )


def gae(
    rewards: ArrayLike,
    values: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: float = 0.99,
    lam: float = 0.95,
) -> torch.Tensor:
    """Ventajas GAE(γ, λ) de un bloque, calculadas hacia atrás.

    Args:
        rewards: ``(T,)`` o ``(T, N)``, la recompensa ``r_t``.
        values: igual forma, ``V(s_t)``.
        next_values: igual forma, ``V(s_{t+1})`` del estado siguiente de verdad.
        terminated: igual forma, 1 si ``s_{t+1}`` es terminal (sin bootstrap).
        truncated: igual forma, 1 si el episodio se cortó por tiempo en ``t``.
        gamma: el descuento γ.
        lam: el λ de GAE (0: TD de un paso; 1: Monte Carlo menos ``V(s_t)``).

    Returns:
        ``Â_t`` con la forma de ``rewards``, en ``float32`` y sin gradiente. Los
        retornos que persigue el crítico son ``Â_t + V(s_t)``.
    """

    def as_tensor(x: ArrayLike) -> torch.Tensor:
        return torch.as_tensor(x, dtype=torch.float32).detach()

    rewards, values, next_values = map(as_tensor, (rewards, values, next_values))
    terminated, truncated = as_tensor(terminated), as_tensor(truncated)
    not_terminal = 1.0 - terminated
    not_done = 1.0 - torch.clamp(terminated + truncated, max=1.0)
    deltas = rewards + gamma * not_terminal * next_values - values
    advantages = torch.zeros_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in reversed(range(deltas.shape[0])):
        running = deltas[t] + gamma * lam * not_done[t] * running
        advantages[t] = running
    return advantages
