"""Módulo 02 · DQN: implementaciones de referencia.

Las piezas de los ejercicios (``linear_epsilon``, ``td_targets``,
``sample_batch``, ``dqn_loss``, ``dqn_update``), el búfer de repetición, la
red Q y un bucle de entrenamiento completo, ``train_dqn``, que los módulos
siguientes (y la comparación con Stable-Baselines3) pueden llamar sin depender
de las soluciones de un estudiante.

El bucle sigue a Mnih et al. (2015), «Human-level control through deep
reinforcement learning»: búfer de repetición, red objetivo, ε decreciente y
pérdida de Huber; y distingue ``terminated`` (el episodio acabó: el objetivo no
se apoya en ``Q(s')``) de ``truncated`` (truncado por límite de tiempo: sí se
apoya, porque ``s'`` tiene futuro).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from helpers.training import Evaluation, confirmation_seed

# ---------------------------------------------------------------------------
# Las piezas de los ejercicios
# ---------------------------------------------------------------------------


def linear_epsilon(step: int, start: float, end: float, duration: int) -> float:
    """ε en el paso ``step`` de un calendario lineal.

    Baja en línea recta de ``start`` (en el paso 0) a ``end`` (en el paso
    ``duration``) y desde ahí se queda en ``end``.
    """
    fraction = min(step / duration, 1.0)
    return start + fraction * (end - start)


def td_targets(
    rewards: torch.Tensor,
    next_q_values: torch.Tensor,
    terminated: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """Objetivos TD ``y = r + γ · (1 − terminated) · max_a' Q(s', a')``.

    Args:
        rewards: recompensas, forma ``(B,)``.
        next_q_values: ``Q(s', ·)`` de la red objetivo, forma ``(B, n_actions)``.
        terminated: 1.0 si ``s'`` es terminal y 0.0 si no, forma ``(B,)``.
        gamma: el descuento.

    Returns:
        Los objetivos, forma ``(B,)``. Un estado terminal no vale nada más
        allá de su recompensa: el objetivo no se apoya en su ``Q``.
    """
    next_values = next_q_values.max(dim=1).values
    return rewards + gamma * (1.0 - terminated) * next_values


def double_dqn_targets(
    rewards: torch.Tensor,
    next_q_online: torch.Tensor,
    next_q_target: torch.Tensor,
    terminated: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """Objetivos de Double DQN (van Hasselt et al., 2016).

    ``y = r + γ · (1 − terminated) · Q_objetivo(s', argmax_a' Q_red(s', a'))``:
    la red que se entrena **elige** la acción siguiente y la red objetivo la
    **valora**. Con :func:`td_targets` la misma estimación hace las dos cosas,
    y el máximo de estimaciones con ruido sale, en media, por encima del
    máximo verdadero (el sesgo de maximización); separar quien elige de quien
    valora lo reduce.

    Args:
        rewards: ``(B,)``.
        next_q_online: ``Q(s', ·)`` de la red que se entrena, ``(B, n_actions)``.
        next_q_target: ``Q(s', ·)`` de la red objetivo, ``(B, n_actions)``.
        terminated: ``(B,)``, 1.0 si ``s'`` es terminal.
        gamma: el descuento.

    Returns:
        Los objetivos, forma ``(B,)``.
    """
    choice = next_q_online.argmax(dim=1, keepdim=True)
    next_values = next_q_target.gather(1, choice).squeeze(1)
    return rewards + gamma * (1.0 - terminated) * next_values


class ReplayBuffer:
    """Búfer de repetición circular en NumPy: guarda las últimas ``capacity``
    transiciones ``(s, a, r, s', terminated)``.

    Attributes:
        observations, next_observations: ``float32``, forma ``(capacity, obs_dim)``.
        actions: ``int64``, forma ``(capacity,)``.
        rewards, terminated: ``float32``, forma ``(capacity,)``.
        size: cuántas casillas están llenas (nunca más que ``capacity``).
        position: la casilla donde se escribirá la próxima transición.
    """

    def __init__(self, capacity: int, obs_dim: int) -> None:
        self.capacity = int(capacity)
        self.observations = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.next_observations = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.terminated = np.zeros(capacity, dtype=np.float32)
        self.size = 0
        self.position = 0

    def add(
        self,
        observation: np.ndarray,
        action: int,
        reward: float,
        next_observation: np.ndarray,
        terminated: bool,
    ) -> None:
        """Guarda una transición; si está lleno, pisa la más antigua."""
        i = self.position
        self.observations[i] = observation
        self.actions[i] = action
        self.rewards[i] = reward
        self.next_observations[i] = next_observation
        self.terminated[i] = float(terminated)
        self.position = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def __len__(self) -> int:
        return self.size


def sample_batch(
    buffer: ReplayBuffer, batch_size: int, rng: np.random.Generator
) -> dict[str, torch.Tensor]:
    """Un lote de ``batch_size`` transiciones al azar (con reemplazo) del búfer.

    Solo se muestrea entre las ``buffer.size`` casillas llenas, con los mismos
    índices para todos los campos, y con el generador ``rng``.

    Returns:
        ``observations`` y ``next_observations`` (``float32``, ``(B, obs_dim)``),
        ``actions`` (``int64``, ``(B,)``), ``rewards`` y ``terminated``
        (``float32``, ``(B,)``), como tensores de PyTorch.
    """
    indices = rng.integers(0, buffer.size, size=batch_size)
    return {
        "observations": torch.from_numpy(buffer.observations[indices]),
        "actions": torch.from_numpy(buffer.actions[indices]),
        "rewards": torch.from_numpy(buffer.rewards[indices]),
        "next_observations": torch.from_numpy(buffer.next_observations[indices]),
        "terminated": torch.from_numpy(buffer.terminated[indices]),
    }


def dqn_loss(
    q_network: nn.Module,
    target_network: nn.Module,
    batch: dict[str, torch.Tensor],
    gamma: float,
    *,
    double: bool = False,
) -> torch.Tensor:
    """La pérdida de DQN: Huber entre ``Q(s, a)`` y el objetivo TD.

    El objetivo se calcula con la red objetivo y **sin gradiente**: es una
    etiqueta fija, no algo que optimizar. Con ``double=True``, el de Double
    DQN (:func:`double_dqn_targets`): elige la red, valora la red objetivo.

    Returns:
        Un tensor escalar (con gradiente hacia ``q_network`` solamente).
    """
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        if double:
            targets = double_dqn_targets(
                batch["rewards"],
                q_network(batch["next_observations"]),
                next_q_values,
                batch["terminated"],
                gamma,
            )
        else:
            targets = td_targets(
                batch["rewards"], next_q_values, batch["terminated"], gamma
            )
    return F.smooth_l1_loss(q_taken, targets)


class _UpdateConfig(Protocol):
    """Lo que :func:`dqn_update` lee de la configuración (``DQNConfig`` lo tiene)."""

    batch_size: int
    gamma: float
    max_grad_norm: float
    target_every: int


def dqn_update(
    q_network: nn.Module,
    target_network: nn.Module,
    optimizer: torch.optim.Optimizer,
    buffer: ReplayBuffer,
    rng: np.random.Generator,
    step: int,
    config: _UpdateConfig,
) -> float:
    """Una actualización de DQN, en cuatro etapas y en este orden.

    1. Un lote: ``sample_batch(buffer, config.batch_size, rng)`` (lo único que
       toma números de ``rng``).
    2. La pérdida: ``dqn_loss`` con la red objetivo y ``config.gamma``.
    3. Un paso de gradiente: borrar los gradientes viejos, ``backward``,
       recortar la norma del gradiente de ``q_network`` a
       ``config.max_grad_norm`` y ``optimizer.step()``.
    4. Si ``step`` es múltiplo de ``config.target_every``, copiar los pesos
       (ya actualizados) de ``q_network`` en ``target_network``.

    Args:
        q_network, target_network: la red Q y la red objetivo.
        optimizer: el optimizador de los parámetros de ``q_network``.
        ``buffer``: el búfer de repetición.
        rng: el generador del muestreo del lote.
        step: el paso de entorno en que se hace la actualización.
        config: ``batch_size``, ``gamma``, ``max_grad_norm`` y ``target_every``.

    Returns:
        El valor de la pérdida antes del paso, como ``float``.
    """
    batch = sample_batch(buffer, config.batch_size, rng)
    double = getattr(config, "double", False)  # Double DQN, si la pide
    loss = dqn_loss(q_network, target_network, batch, config.gamma, double=double)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(q_network.parameters(), config.max_grad_norm)
    optimizer.step()
    if step % config.target_every == 0:
        target_network.load_state_dict(q_network.state_dict())
    return loss.item()


# ---------------------------------------------------------------------------
# Red, evaluación y bucle de entrenamiento
# ---------------------------------------------------------------------------


def make_q_network(obs_dim: int, n_actions: int, hidden: int = 64) -> nn.Sequential:
    """Un MLP ``obs_dim → hidden → hidden → n_actions`` con ReLU."""
    return nn.Sequential(
        nn.Linear(obs_dim, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, n_actions),
    )


def evaluate_greedy(
    q_network: nn.Module,
    make_env: Callable[[], gym.Env],
    n_episodes: int = 20,
    seed: int = 0,
) -> np.ndarray:
    """Retorno de ``n_episodes`` episodios con la política voraz (ε = 0).

    Los episodios se juegan a la vez, uno por entorno, con una sola pasada de
    la red por paso para todos los que siguen vivos.

    Returns:
        Los retornos, forma ``(n_episodes,)``.
    """
    envs = [make_env() for _ in range(n_episodes)]
    observations = np.stack(
        [env.reset(seed=seed + i)[0] for i, env in enumerate(envs)]
    ).astype(np.float32)
    returns = np.zeros(n_episodes)
    alive = np.ones(n_episodes, dtype=bool)
    while alive.any():
        playing = np.flatnonzero(alive)
        with torch.no_grad():
            actions = q_network(torch.from_numpy(observations[playing])).argmax(dim=1)
        for i, action in zip(playing, actions.tolist(), strict=True):
            observation, reward, terminated, truncated, _ = envs[i].step(action)
            observations[i] = observation
            returns[i] += reward
            alive[i] = not (terminated or truncated)
    for env in envs:
        env.close()
    return returns


@dataclass
class DQNConfig:
    """Hiperparámetros de DQN; los valores por defecto resuelven CartPole-v1.

    ``target_every = 100`` es rápido, pero no siempre basta: en ``make bench``
    alguna semilla no llega nunca (cuántas, lo imprime el cuaderno 02, que
    comprueba que la 10 es una de ellas). Sus valores Q divergen:
    ``helpers.dqn_runs`` repite la semilla 10 midiendo ``Q``, que pasa de
    ``1 / (1 − γ) = 100`` (el mayor retorno descontado posible) y sigue
    creciendo sin freno. Al ajustar,
    con 250 ninguna de las semillas 1000-1039 se hundía, pero la mediana de
    pasos hasta llegar subía en más de la mitad; con 100 no se hundió ninguna
    de las 80 semillas 1000-1079, y se quedó en 100. Esas semillas de ajuste no
    se han vuelto a medir con la regla del banco (que confirma con 100
    episodios nuevos y deja entrenar hasta 200 000 pasos). Que ninguna de 80 se
    hundiera y alguna del banco sí dice que el hundimiento es raro, no que no
    exista.
    """

    env_id: str = "CartPole-v1"  # entorno de gymnasium
    seed: int = 0  # semilla de todo: red, ε-greedy, búfer y entorno
    max_env_steps: int = 50_000  # pasos de entorno como máximo
    buffer_size: int = 50_000  # transiciones que guarda el búfer
    learning_starts: int = 1_000  # primer paso con gradiente (antes, solo llenar)
    batch_size: int = 64  # transiciones por paso de gradiente
    train_every: int = 1  # un paso de gradiente cada tantos pasos de entorno
    gamma: float = 0.99  # descuento
    learning_rate: float = 1e-3  # de Adam
    target_every: int = 100  # copiar la red en la red objetivo cada tantos pasos
    epsilon_start: float = 1.0  # ε inicial (todo exploración)
    epsilon_end: float = 0.01  # ε final
    epsilon_duration: int = 5_000  # pasos en los que ε baja linealmente
    hidden: int = 64  # neuronas de cada capa oculta
    max_grad_norm: float = 10.0  # recorte de la norma del gradiente
    eval_every: int = 1_000  # evaluar la política voraz cada tantos pasos (0: nunca)
    eval_episodes: int = 20  # episodios de cada evaluación
    target_return: float | None = 475.0  # parar cuando la evaluación llegue aquí
    confirm_episodes: int = 0  # confirmar al llegar, en tantos episodios nuevos
    double: bool = False  # objetivos de Double DQN (elige la red, valora la objetivo)
    trace_q: bool = False  # en cada evaluación, medir Q en los estados del búfer


@dataclass
class DQNHistory:
    """Lo que deja :func:`train_dqn`.

    Attributes:
        steps: pasos de entorno dados.
        seconds: segundos de reloj del entrenamiento (evaluaciones incluidas).
        episode_returns: retorno de cada episodio de entrenamiento (con ε).
        episode_ends: el paso en que acabó cada uno de esos episodios.
        evaluations: cada evaluación voraz, una
            :class:`helpers.training.Evaluation` como las de los demás agentes:
            paso de entorno, segundos, retorno medio, la media de la
            confirmación (con ``confirm_episodes``, solo tras las que llegaron)
            y los pasos de gradiente dados antes (el del mismo paso, incluido).
        losses: ``(paso, pérdida)`` cada 100 pasos de gradiente.
        updates: pasos de gradiente dados (llamadas a :func:`dqn_update`).
        q_traces: con ``trace_q``, en cada evaluación ``(paso, media, máximo)``
            de ``max_a Q(s, a)`` sobre los estados guardados en el búfer
            (:func:`buffer_q_values`).
        solved_at: el paso de la primera evaluación que alcanzó
            ``target_return`` (``None`` si ninguna).
        q_network: la red Q al terminar.
    """

    steps: int = 0
    seconds: float = 0.0
    episode_returns: list[float] = field(default_factory=list)
    episode_ends: list[int] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    losses: list[tuple[int, float]] = field(default_factory=list)
    updates: int = 0
    q_traces: list[tuple[int, float, float]] = field(default_factory=list)
    solved_at: int | None = None
    q_network: nn.Module | None = None


def buffer_q_values(q_network: nn.Module, buffer: ReplayBuffer) -> tuple[float, float]:
    """``(media, máximo)`` de ``max_a Q(s, a)`` sobre los estados del búfer.

    En CartPole la recompensa es 1 por paso, así que ningún retorno descontado
    pasa de ``1 / (1 − γ)``: un ``Q`` por encima no es una estimación con ruido
    sino una que se ha ido (divergencia).
    """
    with torch.no_grad():
        states = torch.as_tensor(buffer.observations[: buffer.size])
        values = q_network(states).max(dim=1).values
    return float(values.mean()), float(values.max())


def train_dqn(
    config: DQNConfig | None = None,
    make_env: Callable[[], gym.Env] | None = None,
    progress: bool = False,
) -> DQNHistory:
    """Entrena DQN y devuelve su historia.

    Args:
        config: los hiperparámetros (por defecto, los de CartPole-v1).
        make_env: crea un entorno; por defecto ``gym.make(config.env_id)``.
            Sirve para entrenar en las sondas de ``helpers.probes``.
        progress: mostrar una barra de progreso de ``tqdm``.

    Returns:
        La :class:`DQNHistory`. Con la misma configuración y el mismo
        ``make_env`` el resultado es idéntico en cada ejecución (en CPU).
    """
    config = config or DQNConfig()
    if make_env is None:
        env_id = config.env_id

        def make_env() -> gym.Env:
            return gym.make(env_id)

    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    env = make_env()
    obs_dim = int(np.prod(env.observation_space.shape))
    n_actions = int(env.action_space.n)
    q_network = make_q_network(obs_dim, n_actions, config.hidden)
    target_network = make_q_network(obs_dim, n_actions, config.hidden)
    target_network.load_state_dict(q_network.state_dict())
    optimizer = torch.optim.Adam(q_network.parameters(), lr=config.learning_rate)
    buffer = ReplayBuffer(config.buffer_size, obs_dim)
    history = DQNHistory(q_network=q_network)

    start = time.perf_counter()
    observation, _ = env.reset(seed=config.seed)
    episode_return = 0.0
    steps = range(1, config.max_env_steps + 1)
    for step in tqdm(steps, desc="DQN", disable=not progress, mininterval=1.0):
        # Actuar: ε-greedy sobre Q(s, ·).
        epsilon = linear_epsilon(
            step, config.epsilon_start, config.epsilon_end, config.epsilon_duration
        )
        if rng.random() < epsilon:
            action = int(rng.integers(n_actions))
        else:
            with torch.no_grad():
                action = int(q_network(torch.as_tensor(observation)).argmax())
        next_observation, reward, terminated, truncated, _ = env.step(action)
        # Guardar terminated (no truncated): si se truncó, s' tiene futuro.
        buffer.add(observation, action, reward, next_observation, terminated)
        observation = next_observation
        episode_return += float(reward)
        if terminated or truncated:
            history.episode_returns.append(episode_return)
            history.episode_ends.append(step)
            observation, _ = env.reset()
            episode_return = 0.0

        # Aprender: un paso de gradiente sobre un lote del búfer y, cada
        # target_every pasos, la red objetivo al día. Antes de learning_starts
        # la red Q no cambia, así que la red objetivo tampoco necesita copiarla.
        if step >= config.learning_starts and step % config.train_every == 0:
            loss = dqn_update(
                q_network, target_network, optimizer, buffer, rng, step, config
            )
            history.updates += 1
            if step % 100 == 0:
                history.losses.append((step, loss))

        # Evaluar la política voraz (ya aprendió de este paso) y parar si ya
        # llega al objetivo.
        if config.eval_every and step % config.eval_every == 0:
            returns = evaluate_greedy(
                q_network, make_env, config.eval_episodes, seed=10_000 + step
            )
            target = config.target_return
            reached = target is not None and returns.mean() >= target
            confirmed = None
            if reached and config.confirm_episodes:
                # Confirmar en episodios nuevos antes de dar por bueno el paso
                confirmed = float(
                    evaluate_greedy(
                        q_network,
                        make_env,
                        config.confirm_episodes,
                        seed=confirmation_seed(config.seed, len(history.evaluations)),
                    ).mean()
                )
                reached = confirmed >= target
            if config.trace_q:
                history.q_traces.append((step, *buffer_q_values(q_network, buffer)))
            history.evaluations.append(
                Evaluation(
                    env_steps=step,
                    seconds=time.perf_counter() - start,
                    mean_return=float(returns.mean()),
                    confirmed_return=confirmed,
                    updates=history.updates,
                )
            )
            if reached:
                history.solved_at = step
                break
    env.close()
    history.steps = step
    history.seconds = time.perf_counter() - start
    return history
