"""Módulo 05 · Actor-crítico y GAE: implementaciones de referencia.

Lo que el cuaderno 05_actor_critico pide escribir, ya resuelto, y lo que los
módulos siguientes (PPO, GRPO) importan en lugar de depender de tu solución:

* ``td_errors``: los errores TD ``δ_t = r_t + γ·(1 − terminated_t)·V(s_{t+1}) −
  V(s_t)`` de un bloque ``(T, N)``;
* ``n_step_returns``: los retornos de ``n`` pasos, que cortan en los finales de
  episodio y ponen ``V`` donde falta;
* ``gae``: las ventajas GAE(γ, λ) (la de :mod:`helpers.rollouts`, reexportada);
* ``actor_critic_loss``: la pérdida del actor (ventaja **separada** del grafo),
  la del crítico (regresión a los retornos) y el premio a la entropía;
* ``A2CConfig`` y ``train_a2c``: A2C completo sobre ``n_envs`` copias de un
  entorno de gymnasium en un ``SyncVectorEnv``;
* ``RandomWalk``: la cadena de 19 casillas de Sutton y Barto, con valores
  verdaderos conocidos, para medir el sesgo y la varianza de cada λ;
* ``Corridor`` y ``gae_gradient_experiment``: un pasillo con acciones donde el
  gradiente de política es exacto, para medir el sesgo de cada λ **en el
  gradiente** (el que importa al actor) con un crítico imperfecto.

Convención de los bloques (la de :mod:`helpers.rollouts`): todo tensor es
``(T, N)``, tiempo primero; ``terminated_t`` dice que ``s_{t+1}`` es terminal
(no se cobra nada después: sin *bootstrap*); ``truncated_t`` dice que el episodio
se cortó por tiempo en ``t`` (``next_values_t`` es el valor de la observación
final: se hace *bootstrap*). Los dos cortan la recursión: nada pasa de un
episodio al siguiente.

Referencias: Mnih et al. (2016), *Asynchronous methods for deep reinforcement
learning* (A3C/A2C); Schulman et al. (2016), *High-dimensional continuous control
using generalized advantage estimation*; Sutton y Barto (2018), caps. 7 y 12.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from helpers.rollouts import (
    ActorCritic,
    ArrayLike,
    RolloutCollector,
    gae,
    make_vector_env,
)
from helpers.training import History, record_evaluation

__all__ = [
    "A2CConfig",
    "Corridor",
    "PopArt",
    "RandomWalk",
    "actor_critic_loss",
    "gae",
    "gae_gradient_experiment",
    "lambda_returns_experiment",
    "n_step_returns",
    "td_errors",
    "train_a2c",
]


def _as_tensor(x: ArrayLike) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.float32).detach()


# ---------------------------------------------------------------------------
# Errores TD, retornos de n pasos y GAE
# ---------------------------------------------------------------------------


def td_errors(
    rewards: ArrayLike,
    values: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    gamma: float = 0.99,
) -> torch.Tensor:
    """Errores TD de un paso: ``δ_t = r_t + γ·(1 − terminated_t)·V(s_{t+1}) − V(s_t)``.

    ``δ_t`` es la ventaja de un paso: lo que se cobró más lo que promete el
    estado siguiente, menos lo que se esperaba. Si ``s_{t+1}`` es terminal no
    promete nada. Un truncamiento no cambia ``δ_t``: ``next_values`` ya es el
    valor de la observación final.

    Args:
        rewards: ``(T,)`` o ``(T, N)``.
        values: igual forma, ``V(s_t)``.
        next_values: igual forma, ``V(s_{t+1})`` del estado siguiente de verdad.
        terminated: igual forma, 1 si ``s_{t+1}`` es terminal.
        gamma: el descuento γ.

    Returns:
        ``δ`` con la forma de ``rewards``, ``float32``, sin gradiente.
    """
    rewards, values, next_values = map(_as_tensor, (rewards, values, next_values))
    not_terminal = 1.0 - _as_tensor(terminated)
    return rewards + gamma * not_terminal * next_values - values


def n_step_returns(
    rewards: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    n: int,
    gamma: float = 0.99,
) -> torch.Tensor:
    """Retornos de ``n`` pasos de un bloque ``(T, N)``.

    ``G^{(n)}_t = r_t + γ r_{t+1} + … + γ^{m−1} r_{t+m−1} + γ^m·V(s_{t+m})``,
    con ``m ≤ n`` porque la suma se corta antes si el episodio acaba (en el
    paso ``t+m−1``) o si se acaba el bloque. Al cortar, el último término es
    ``next_values[t+m−1]`` multiplicado por ``1 − terminated[t+m−1]``: tras un
    estado terminal no hay nada; tras un truncamiento o el final del bloque, el
    crítico pone lo que falta.

    Args:
        rewards: ``(T,)`` o ``(T, N)``.
        next_values: igual forma, ``V(s_{t+1})`` del estado siguiente de verdad.
        terminated: igual forma, 1 si ``s_{t+1}`` es terminal.
        truncated: igual forma, 1 si el episodio se cortó por tiempo en ``t``.
        n: cuántas recompensas como mucho (``n ≥ 1``).
        gamma: el descuento γ.

    Returns:
        ``G^{(n)}`` con la forma de ``rewards``, ``float32``, sin gradiente.
    """
    if n < 1:
        raise ValueError(f"n debe ser al menos 1, no {n}.")
    rewards, next_values = _as_tensor(rewards), _as_tensor(next_values)
    terminated, truncated = _as_tensor(terminated), _as_tensor(truncated)
    done = torch.clamp(terminated + truncated, max=1.0)
    horizon = rewards.shape[0]
    returns = torch.zeros_like(rewards)
    for t in range(horizon):
        total = torch.zeros_like(rewards[0])
        discount = torch.ones_like(rewards[0])
        alive = torch.ones_like(rewards[0])  # 1 mientras el episodio de t sigue
        for k in range(t, min(t + n, horizon)):
            total = total + alive * discount * rewards[k]
            discount = discount * gamma
            last = (k == t + n - 1) or (k == horizon - 1)
            # El valor de cola se cobra al cortar: fin de episodio, n o bloque.
            stop = done[k] if not last else torch.ones_like(done[k])
            tail = (1.0 - terminated[k]) * next_values[k]
            total = total + alive * stop * discount * tail
            alive = alive * (1.0 - stop)
        returns[t] = total
    return returns


# ---------------------------------------------------------------------------
# La pérdida del actor-crítico
# ---------------------------------------------------------------------------


def actor_critic_loss(
    log_probs: torch.Tensor,
    values: torch.Tensor,
    advantages: torch.Tensor,
    returns: torch.Tensor,
    entropy: torch.Tensor,
    value_coef: float = 0.5,
    entropy_coef: float = 0.01,
) -> torch.Tensor:
    """La pérdida de A2C en un escalar: actor + ``c_V``·crítico − ``c_H``·entropía.

    ``L = −mean(log π(a_t|s_t)·Â_t) + c_V·mean((V(s_t) − R_t)²) − c_H·mean(H_t)``.

    La ventaja ``Â_t`` y el objetivo ``R_t`` son **constantes** (``detach``): el
    actor no debe empujar al crítico a través de la ventaja, y el crítico
    persigue los retornos, no al revés. La entropía se **resta**: minimizar la
    pérdida la sube (premio a explorar).

    Args:
        log_probs: ``(B,)``, ``log π_θ(a_t|s_t)`` con gradiente.
        values: ``(B,)``, ``V(s_t)`` del crítico con gradiente.
        advantages: ``(B,)``, ``Â_t``.
        returns: ``(B,)``, los objetivos del crítico ``R_t`` (p. ej. ``Â_t + V``).
        entropy: ``(B,)``, la entropía de ``π(·|s_t)`` con gradiente.
        value_coef: ``c_V``, el peso del crítico.
        entropy_coef: ``c_H``, el peso del premio a la entropía.

    Returns:
        La pérdida total, un escalar con gradiente.
    """
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    return policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()


# ---------------------------------------------------------------------------
# A2C completo
# ---------------------------------------------------------------------------


@dataclass
class A2CConfig:
    """Hiperparámetros de :func:`train_a2c` (valores por defecto: CartPole-v1).

    ``n_envs``, ``n_steps``, ``gamma``, ``lam`` y ``learning_rate`` se eligieron
    con ``python -m benchmarks cartpole`` en las semillas 1000-1039, que el
    informe de ``make bench`` (0-19) no usa: bloques pequeños (64 pasos) dan
    muchas actualizaciones por paso de entorno; λ = 1, como en el A2C de
    rl-baselines3-zoo, γ = 0,98 y una tasa de 2e-3, la dispersión más baja entre
    semillas (con 4e-3 y γ = 0,99, unas semillas llegaban pronto y otras muy
    tarde).
    """

    env_id: str = "CartPole-v1"  # entorno de gymnasium (acciones discretas)
    seed: int = 0  # semilla de la red, los entornos y el muestreo
    n_envs: int = 8  # copias del entorno en el SyncVectorEnv (N)
    n_steps: int = 8  # pasos por copia en cada bloque (T)
    gamma: float = 0.98  # descuento
    lam: float = 1.0  # λ de GAE (1: retornos de n pasos dentro del bloque)
    learning_rate: float = 2e-3  # paso de Adam
    value_coef: float = 0.5  # peso de la pérdida del crítico
    entropy_coef: float = 0.01  # peso del premio a la entropía
    max_grad_norm: float = 0.5  # recorte de la norma del gradiente
    normalize_advantages: bool = True  # Â a media 0 y desviación 1 en el bloque
    hidden: int = 64  # neuronas por capa oculta
    shared: bool = False  # tronco compartido entre actor y crítico
    max_env_steps: int = 200_000  # tope de pasos de entorno
    eval_every: int = 2_048  # evaluar la política voraz cada tantos pasos (0: nunca)
    eval_episodes: int = 20  # episodios por evaluación
    target_return: float | None = 475.0  # parar al alcanzarlo (None: no parar)
    confirm_episodes: int = 0  # confirmar al llegar, en tantos episodios nuevos
    popart_rate: float = 0.0  # PopArt: tasa de la media móvil de R (0: sin él)


class PopArt(torch.nn.Module):
    """La última capa del crítico con sus objetivos normalizados (PopArt).

    van Hasselt et al. (2016), *Learning values across many orders of
    magnitude*. La capa ``head`` aprende ``n(s) ≈ (R − μ)/σ``, de escala 1 con
    cualquier recompensa, y el módulo devuelve el valor en la escala de la
    recompensa, ``V(s) = σ·n(s) + μ``. ``μ`` y ``σ`` son una media y una
    desviación móviles de los objetivos ``R`` (medias exponenciales con tasa
    ``rate``, sin el sesgo del arranque, como Adam: la parte «ART» del
    artículo); cada vez que cambian, :meth:`update` reescala ``head`` para que
    ``V`` siga dando lo mismo (la parte «POP»: ``W ← W·σ/σ'``,
    ``b ← (σ·b + μ − μ')/σ'``). La regresión del crítico se mide entonces en
    unidades de ``σ``: ``((V − R)/σ)² = (n(s) − (R − μ)/σ)²``.
    """

    def __init__(self, head: torch.nn.Linear, rate: float) -> None:
        super().__init__()
        self.head, self.rate = head, rate
        self.mean, self.std = 0.0, 1.0
        self._first = self._second = 0.0
        self._updates = 0

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.head(features) * self.std + self.mean

    @torch.no_grad()
    def update(self, targets: torch.Tensor) -> None:
        """Mueve ``μ`` y ``σ`` hacia el lote ``targets`` y corrige la capa."""
        self._updates += 1
        keep = 1.0 - self.rate
        self._first = keep * self._first + self.rate * float(targets.mean())
        self._second = keep * self._second + self.rate * float((targets**2).mean())
        unbias = 1.0 - keep**self._updates
        mean = self._first / unbias
        std = max(self._second / unbias - mean**2, 1e-4) ** 0.5
        self.head.weight.mul_(self.std / std)
        self.head.bias.mul_(self.std).add_(self.mean - mean).div_(std)
        self.mean, self.std = mean, std


def train_a2c(
    config: A2CConfig,
    progress: bool = True,
    *,
    advantages_fn: Callable[..., Any] = gae,
    loss_fn: Callable[..., torch.Tensor] | None = None,
    on_update: Callable[..., None] | None = None,
) -> History:
    """A2C (actor-crítico síncrono, Mnih et al., 2016) con ventajas GAE.

    Cada actualización:

    1. rollout: ``n_steps`` pasos en cada una de las ``n_envs`` copias
       (:class:`helpers.rollouts.RolloutCollector`), un bloque ``(T, N)``;
    2. ventajas ``Â`` con :func:`gae` y objetivos del crítico ``R = Â + V``
       (con ``popart_rate > 0``, :class:`PopArt` mueve su media y su
       desviación y corrige su capa, y la regresión del crítico se mide en
       unidades de ``σ``);
    3. una pasada de la red sobre el bloque: ``log π``, ``V`` y la entropía;
    4. :func:`actor_critic_loss`, recorte de la norma del gradiente y un paso
       de Adam;
    5. cada ``eval_every`` pasos de entorno, ``eval_episodes`` episodios con la
       política voraz; se para al alcanzar ``target_return``.

    Args:
        config: los hiperparámetros.
        progress: mostrar una barra de progreso.
        advantages_fn: ``(rewards, values, next_values, terminated, truncated,
            gamma, lam) → Â`` (tu ``gae`` sirve).
        loss_fn: ``(log_probs, values, advantages, returns, entropy, value_coef,
            entropy_coef) → pérdida`` (tu ``actor_critic_loss`` sirve; ``None``:
            :func:`actor_critic_loss`).
        on_update: si se da, se llama en cada actualización, antes del paso,
            como ``on_update(agent, log_probs, values, advantages, returns,
            entropy, env_steps)`` (tensores planos, con el grafo vivo: puede
            derivar con ``torch.autograd.grad(..., retain_graph=True)``). Sirve
            para medir, como :func:`trunk_gradients`; no debe tocar la red.

    Returns:
        La :class:`helpers.training.History` del entrenamiento (``losses`` son
        las pérdidas totales; ``baseline_losses``, las del crítico), con la red
        en ``policy``.
    """
    from tqdm.auto import tqdm

    torch.manual_seed(config.seed)
    envs = make_vector_env(config.env_id, config.n_envs)
    obs_dim = envs.single_observation_space.shape[0]
    n_actions = int(envs.single_action_space.n)
    agent = ActorCritic(obs_dim, n_actions, config.hidden, shared=config.shared)
    popart = None
    if config.popart_rate:
        # La última capa del crítico pasa a dar V = σ·n(s) + μ (PopArt).
        popart = PopArt(agent.critic[-1], config.popart_rate)
        agent.critic[-1] = popart
    optimizer = torch.optim.Adam(agent.parameters(), lr=config.learning_rate)
    collector = RolloutCollector(envs, seed=config.seed)
    history = History(policy=agent, target_return=config.target_return)
    start, env_steps, next_eval = time.perf_counter(), 0, config.eval_every
    bar = tqdm(total=config.max_env_steps, desc="A2C", disable=not progress)
    while env_steps < config.max_env_steps:
        # Etapa 1: el bloque (T, N) con la política actual (sin gradiente).
        rollout = collector.collect(agent, config.n_steps)
        # Etapa 2: ventajas GAE y objetivos del crítico.
        advantages = torch.as_tensor(
            advantages_fn(
                rollout.rewards,
                rollout.values,
                rollout.next_values,
                rollout.terminated,
                rollout.truncated,
                config.gamma,
                config.lam,
            ),
            dtype=torch.float32,
        )
        returns = advantages + rollout.values
        if popart is not None:
            popart.update(returns)
        # Con PopArt, la regresión del crítico se mide en unidades de σ:
        # ((V − R)/σ)² = (n(s) − (R − μ)/σ)² (σ = 1 sin PopArt).
        scale = popart.std if popart is not None else 1.0
        if config.normalize_advantages:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        # Etapa 3: el bloque entero por la red, ahora con gradiente.
        logits, values = agent(rollout.obs)
        distribution = torch.distributions.Categorical(logits=logits)
        log_probs = distribution.log_prob(rollout.actions)
        entropy = distribution.entropy()
        # Etapa 4: pérdida, recorte del gradiente y paso de Adam.
        pieces = (
            log_probs.flatten(),
            values.flatten() / scale,
            advantages.flatten(),
            returns.flatten() / scale,
            entropy.flatten(),
        )
        loss = (loss_fn or actor_critic_loss)(
            *pieces, config.value_coef, config.entropy_coef
        )
        if on_update is not None:
            on_update(agent, *pieces, env_steps)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(agent.parameters(), config.max_grad_norm)
        optimizer.step()

        env_steps += rollout.n_steps
        history.env_steps.append(env_steps)
        history.seconds.append(time.perf_counter() - start)
        history.episode_returns.extend(rollout.episode_returns)
        recent = history.episode_returns[-config.n_envs :]
        history.mean_returns.append(float(np.mean(recent)) if recent else 0.0)
        history.losses.append(loss.item())
        history.entropies.append(entropy.mean().item())
        with torch.no_grad():
            critic_loss = ((values - returns) ** 2).mean().item()
        history.baseline_losses.append(critic_loss)
        bar.update(rollout.n_steps)
        # Etapa 5: evaluación voraz cada eval_every pasos de entorno.
        if config.eval_every and env_steps >= next_eval:
            next_eval += config.eval_every
            solved = record_evaluation(agent, config, history, env_steps, start)
            bar.set_postfix(voraz=f"{history.evaluations[-1].mean_return:.0f}")
            if solved:
                break
    bar.close()
    envs.close()
    return history


# ---------------------------------------------------------------------------
# Sesgo y varianza de cada λ: el paseo aleatorio de 19 casillas
# ---------------------------------------------------------------------------


class RandomWalk:
    """El paseo aleatorio de 19 casillas (Sutton y Barto, 2018, ejemplo 7.1).

    Casillas ``0 … 18`` en fila; se empieza en el centro (la 9) y en cada paso
    se va a izquierda o derecha con probabilidad ½. Salir por la izquierda da
    ``−1``, por la derecha ``+1``; los demás pasos, 0. Con ``γ = 1`` los valores
    verdaderos son una recta: ``V(s) = (s + 1)/10 − 1``, de ``−0,9`` a ``0,9``.
    """

    n_states = 19
    start = 9

    def true_values(self, gamma: float = 1.0) -> np.ndarray:
        """``V(s)`` exacto de las 19 casillas, resolviendo ``v = r + γ P v``."""
        n = self.n_states
        transitions = np.zeros((n, n))
        rewards = np.zeros(n)
        for s in range(n):
            for step in (-1, 1):
                nxt = s + step
                if 0 <= nxt < n:
                    transitions[s, nxt] += 0.5
                else:
                    rewards[s] += 0.5 * step
        return np.linalg.solve(np.eye(n) - gamma * transitions, rewards)

    def sample(
        self, n_episodes: int, rng: np.random.Generator, max_steps: int = 2_000
    ) -> dict[str, np.ndarray]:
        """``n_episodes`` episodios a la vez, en un bloque ``(T, N)``.

        Returns:
            ``states`` y ``next_states`` (enteros, ``−1`` y ``19`` son las
            salidas), ``rewards``, ``terminated`` (1 en el último paso de cada
            episodio y en el relleno posterior), ``mask`` (1 en los pasos de
            verdad). ``T`` es la longitud del episodio más largo.
        """
        states = np.full(n_episodes, self.start)
        rows: dict[str, list[np.ndarray]] = {
            k: [] for k in ("states", "next_states", "rewards", "terminated", "mask")
        }
        alive = np.ones(n_episodes, dtype=bool)
        for _ in range(max_steps):
            if not alive.any():
                break
            steps = np.where(rng.random(n_episodes) < 0.5, -1, 1)
            nxt = np.where(alive, states + steps, states)
            ended = alive & ((nxt < 0) | (nxt >= self.n_states))
            reward = np.where(ended, np.sign(nxt - self.start), 0.0)
            rows["states"].append(states.copy())
            rows["next_states"].append(nxt.copy())
            rows["rewards"].append(reward.astype(float))
            rows["terminated"].append((ended | ~alive).astype(float))
            rows["mask"].append(alive.astype(float))
            alive = alive & ~ended
            states = np.where(alive, nxt, states)
        return {k: np.stack(v) for k, v in rows.items()}


def lambda_returns_experiment(
    lams: list[float] | np.ndarray,
    critic: np.ndarray,
    n_episodes: int = 2_000,
    seed: int = 0,
    gamma: float = 1.0,
) -> dict[str, np.ndarray]:
    """Sesgo² y varianza de ``Â_t + V̂(s_t)`` como estimación de ``V(s_t)``.

    Se juegan ``n_episodes`` episodios del :class:`RandomWalk` (los mismos para
    todas las λ), se calculan las ventajas con :func:`gae` usando el crítico
    imperfecto ``critic`` (un valor por casilla) y, casilla a casilla, se
    compara el objetivo ``Â_t + V̂(s_t)`` con el valor verdadero. Solo cuenta
    la primera visita de cada casilla en cada episodio.

    Returns:
        ``bias2``, ``variance`` y ``mse`` (una entrada por λ, media sobre las
        casillas ponderada por visitas) y ``true_values``.
    """
    walk = RandomWalk()
    rng = np.random.default_rng(seed)
    batch = walk.sample(n_episodes, rng)
    critic = np.asarray(critic, dtype=float)
    padded = np.concatenate([[0.0], critic, [0.0]])  # las salidas valen 0
    values = padded[batch["states"] + 1]
    next_values = padded[batch["next_states"] + 1]
    zeros = np.zeros_like(batch["rewards"])
    truth = walk.true_values(gamma)
    # Primera visita de cada casilla en cada episodio.
    first = np.zeros_like(batch["mask"], dtype=bool)
    seen = np.zeros((walk.n_states, n_episodes), dtype=bool)
    for t in range(batch["states"].shape[0]):
        s = batch["states"][t]
        live = batch["mask"][t] > 0
        cols = np.flatnonzero(live & ~seen[s, np.arange(n_episodes)])
        first[t, cols] = True
        seen[s[cols], cols] = True
    visited_states = batch["states"][first]
    counts = np.bincount(visited_states, minlength=walk.n_states)
    out = {"bias2": [], "variance": [], "mse": []}
    for lam in lams:
        advantages = gae(
            batch["rewards"],
            values,
            next_values,
            batch["terminated"],
            zeros,
            gamma,
            float(lam),
        ).numpy()
        estimates = (advantages + values)[first]
        mean = np.bincount(visited_states, estimates, walk.n_states) / counts
        second = np.bincount(visited_states, estimates**2, walk.n_states) / counts
        weights = counts / counts.sum()
        bias2 = float(((mean - truth) ** 2 * weights).sum())
        variance = float(((second - mean**2) * weights).sum())
        out["bias2"].append(bias2)
        out["variance"].append(variance)
        out["mse"].append(bias2 + variance)
    result = {k: np.array(v) for k, v in out.items()}
    result["true_values"] = truth
    return result


# El sesgo que importa al gradiente de política: un pasillo con acciones
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Corridor:
    """Un pasillo de ``n_cells`` casillas con dos acciones (0 izquierda, 1 derecha).

    Las casillas de los extremos son terminales; llegar a la de la derecha da
    ``+1`` y cualquier otro paso, 0. Cada paso resbala al lado contrario con
    probabilidad ``slip``. La política es la misma en todas las casillas, una
    softmax tabular con ``π(derecha) = p_right``, y sus parámetros son los logits
    ``θ[s, a]``: por eso ``∇_θ log π(a | s)`` es ``e_a − π`` en la fila ``s`` y 0
    en las demás. Todo lo exacto sale de resolver sistemas lineales.
    """

    n_cells: int = 9
    slip: float = 0.2
    gamma: float = 0.9
    p_right: float = 0.5

    @property
    def start(self) -> int:
        return self.n_cells // 2

    @property
    def policy(self) -> np.ndarray:
        return np.array([1.0 - self.p_right, self.p_right])

    def _alive(self) -> np.ndarray:
        alive = np.ones(self.n_cells)
        alive[[0, -1]] = 0.0
        return alive

    def _flow(self) -> np.ndarray:
        """``P(s → s')`` bajo la política, sin las llegadas a las terminales."""
        flow = np.einsum("a,sak->sk", self.policy, self.transitions())
        return flow * self._alive()[None, :]

    def transitions(self) -> np.ndarray:
        """``P[s, a, s']``; las filas de las terminales son 0."""
        n = self.n_cells
        p = np.zeros((n, 2, n))
        for s in range(1, n - 1):
            for a, step in ((0, -1), (1, 1)):
                p[s, a, s + step] += 1.0 - self.slip
                p[s, a, s - step] += self.slip
        return p

    def exact(self) -> dict[str, np.ndarray]:
        """``values`` (V^π), ``advantages`` (A^π por casilla y acción) y
        ``visits`` (visitas esperadas a cada casilla en un episodio, sin
        descontar: lo que suma un lote de episodios)."""
        p, alive = self.transitions(), self._alive()
        rewards = p[:, :, -1]  # la única recompensa: llegar a la derecha
        flow = self._flow()
        values = np.linalg.solve(
            np.eye(self.n_cells) - self.gamma * flow, rewards @ self.policy
        )
        q = rewards + self.gamma * p @ (values * alive)
        visits = np.linalg.solve(
            (np.eye(self.n_cells) - flow).T, np.eye(self.n_cells)[self.start]
        )
        return {
            "values": values * alive,
            "advantages": (q - values[:, None]) * alive[:, None],
            "visits": visits * alive,
        }

    def policy_gradient(self, advantages: np.ndarray) -> np.ndarray:
        """``E[Σ_t ∇log π(a_t|s_t) · Â_t]`` si ``Â_t`` vale en media
        ``advantages[s_t, a_t]``: en cada casilla, sus visitas por
        ``Σ_a π(a)·Â(s, a)·(e_a − π)``. Con ``A^π`` es el gradiente que
        persiguen A2C y PPO (sin el factor γᵗ del módulo 03)."""
        weighted = self.policy * advantages
        per_state = weighted - np.outer(weighted.sum(axis=1), self.policy)
        return self.exact()["visits"][:, None] * per_state

    def expected_gradient(self, critic_error: np.ndarray, lam: float) -> np.ndarray:
        """La media exacta de la estimación con ventajas GAE(γ, λ) y el crítico
        ``V^π + critic_error``.

        ``E[Â_t | s, a] = A^π(s, a) − ε(s)
        + γ(1 − λ)·Σ_{l≥1} (γλ)^{l−1} E[ε(s_{t+l})]``:
        el ``−ε(s)`` es una línea base (no sesga); el último término depende de
        la acción a través de las casillas que vienen, y solo se anula con
        ``λ = 1`` o un crítico exacto.
        """
        exact, p, alive = self.exact(), self.transitions(), self._alive()
        error = np.asarray(critic_error, dtype=float) * alive
        flow = self._flow()
        ahead = np.linalg.solve(np.eye(self.n_cells) - self.gamma * lam * flow, error)
        mean = exact["advantages"] - error[:, None]
        mean = mean + self.gamma * (1.0 - lam) * p @ (ahead * alive)
        return self.policy_gradient(mean * alive[:, None])

    def sample_gradients(
        self,
        critic_error: np.ndarray,
        lams: list[float] | np.ndarray,
        n_episodes: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """La estimación de cada episodio, ``Σ_t ∇log π(a_t|s_t) · Â_t`` con
        ventajas de :func:`gae`: forma ``(λ, episodio, casilla, acción)``. Los
        mismos episodios para todas las λ."""
        alive = self._alive()
        critic = (self.exact()["values"] + np.asarray(critic_error, float)) * alive
        states = np.full(n_episodes, self.start)
        live = np.ones(n_episodes, dtype=bool)
        rows: dict[str, list[np.ndarray]] = {k: [] for k in ("s", "a", "r", "d", "m")}
        while live.any():
            actions = (rng.random(n_episodes) < self.p_right).astype(int)
            step = np.where(actions == 1, 1, -1)
            step = np.where(rng.random(n_episodes) < self.slip, -step, step)
            nxt = np.where(live, states + step, states)
            done = live & (alive[nxt] == 0)
            rows["s"].append(states)
            rows["a"].append(actions)
            rows["r"].append((done & (nxt == self.n_cells - 1)).astype(float))
            rows["d"].append((done | ~live).astype(float))  # sin bootstrap al final
            rows["m"].append(live.astype(float))
            live = live & ~done
            states = np.where(live, nxt, states)
        rows["s"].append(states)  # la casilla siguiente del último paso
        s_all = np.stack(rows["s"])
        s, next_s = s_all[:-1], s_all[1:]
        r, d, m = (np.stack(rows[k]) for k in ("r", "d", "m"))
        scores = (np.eye(2)[np.stack(rows["a"])] - self.policy) * m[..., None]
        episode = np.broadcast_to(np.arange(n_episodes), s.shape)
        out = np.zeros((len(lams), n_episodes, self.n_cells, 2))
        for i, lam in enumerate(lams):
            advantages = gae(
                r, critic[s], critic[next_s], d, np.zeros_like(r), self.gamma, lam
            ).numpy()
            np.add.at(out[i], (episode, s), scores * advantages[..., None])
        return out


def gae_gradient_experiment(
    lams: list[float] | np.ndarray,
    critic_error: np.ndarray,
    n_episodes: int = 2_000,
    seed: int = 0,
    corridor: Corridor | None = None,
) -> dict[str, np.ndarray]:
    """Sesgo² y varianza de la estimación del gradiente de política con
    ventajas GAE(γ, λ) y un crítico con error ``critic_error``, en el
    :class:`Corridor`.

    El sesgo² es exacto: ``‖E[ĝ_λ] − g‖²`` frente a la estimación con las
    ventajas verdaderas ``A^π`` (la que A2C y PPO persiguen). La varianza
    (la traza de la covarianza, por episodio) se mide con ``n_episodes``.

    Returns:
        ``bias2``, ``variance`` y ``expected`` (la media exacta, por λ),
        ``sampled_mean`` y ``standard_error`` (la media de las muestras y su
        error típico, para contrastar la cuenta exacta), y ``truth``.
    """
    corridor = corridor or Corridor()
    truth = corridor.policy_gradient(corridor.exact()["advantages"])
    expected = np.stack([corridor.expected_gradient(critic_error, lam) for lam in lams])
    samples = corridor.sample_gradients(
        critic_error, lams, n_episodes, np.random.default_rng(seed)
    )
    flat = samples.reshape(len(lams), n_episodes, -1)
    return {
        "bias2": ((expected - truth) ** 2).sum(axis=(1, 2)),
        "variance": flat.var(axis=1).sum(axis=1),
        "expected": expected,
        "sampled_mean": samples.mean(axis=1),
        "standard_error": samples.std(axis=1) / np.sqrt(n_episodes),
        "truth": truth,
    }
