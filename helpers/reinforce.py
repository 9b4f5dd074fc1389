"""Módulo 03 · REINFORCE: implementaciones de referencia.

Lo que el cuaderno 03_reinforce pide escribir, ya resuelto, y lo que los módulos
siguientes importan en lugar de depender de tu solución:

* ``discounted_returns``: los retornos ``G_t``, calculados hacia atrás;
* ``sample_action`` y ``gaussian_log_prob``: muestrear de una política (por la
  inversa de la distribución acumulada) y evaluar la log-probabilidad, discreta
  (categórica) o continua (gaussiana);
* ``CategoricalPolicy`` y ``GaussianPolicy``: dos políticas pequeñas de PyTorch;
* ``reinforce_loss``: ``−(1/N) Σ log π(a_t|s_t)·G_t``, con ``G_t`` constante;
* ``ShortCorridor`` y ``score_function_gradient``: un problema tan pequeño que
  ``∇J`` se calcula exacto, y la estimación de Monte Carlo que lo aproxima;
* ``reinforce_updates``: el bucle de REINFORCE escrito etapa por etapa, con
  todo el azar fijado (el ejercicio 6 del cuaderno);
* ``gradient_estimators``: el gradiente de ``E[f(x)]`` con ``x ~ N(μ, σ²)``
  estimado de dos maneras con las mismas muestras, por función de puntuación
  y por reparametrización (el ejercicio 7);
* ``train_reinforce`` (hiperparámetros en ``ReinforceConfig``): REINFORCE
  completo sobre un entorno de gymnasium, con un hueco para enchufar una línea
  base (módulo 04). Los episodios, la evaluación voraz y el historial, comunes
  a todos los agentes, están en :mod:`helpers.training`.

Referencia: Williams (1992), *Simple statistical gradient-following algorithms
for connectionist reinforcement learning*; Sutton y Barto (2018), cap. 13.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical, Normal

from helpers.formatting import number
from helpers.training import (
    Episodes,
    History,
    collect_episodes,
    evaluation_seed,
    make_envs,
    record_evaluation,
)

# ---------------------------------------------------------------------------
# Retornos
# ---------------------------------------------------------------------------


def discounted_returns(
    rewards: Sequence[float] | np.ndarray, gamma: float
) -> np.ndarray:
    """Retornos descontados de un episodio: ``G_t = r_t + γ·G_{t+1}``.

    Se recorre el episodio **hacia atrás**: cada ``G_t`` reutiliza el ``G_{t+1}``
    ya calculado, así que cuesta ``O(T)`` en lugar de ``O(T²)``. Tras el último
    paso no hay nada: ``G_T = 0``.

    Args:
        rewards: recompensas ``r_0, …, r_{T−1}`` de un episodio, forma ``(T,)``
            (lista, array o tensor).
        gamma: factor de descuento ``γ ∈ [0, 1]``.

    Returns:
        ``G_0, …, G_{T−1}``, un array de forma ``(T,)``.
    """
    if isinstance(rewards, torch.Tensor):
        rewards = rewards.detach().cpu().numpy()
    rewards = np.asarray(rewards, dtype=float)
    returns = np.zeros_like(rewards)
    future = 0.0
    for t in reversed(range(len(rewards))):
        future = rewards[t] + gamma * future
        returns[t] = future
    return returns


# ---------------------------------------------------------------------------
# Políticas: categórica (acciones discretas) y gaussiana (continuas)
# ---------------------------------------------------------------------------


def sample_action(
    logits: torch.Tensor, u: torch.Tensor | float | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Muestrea una acción de ``softmax(logits)`` y devuelve su log-probabilidad.

    El muestreo es por la **inversa de la distribución acumulada**: con un
    número uniforme ``u ∈ [0, 1)``, la acción es la primera ``a`` cuya
    probabilidad acumulada ``π(0) + … + π(a)`` supera ``u`` (la última, si el
    redondeo deja la suma por debajo de ``u``). Así, con el mismo ``u``, la
    misma acción: el resultado no depende de cómo se escriba el muestreo.

    Args:
        logits: ``(..., A)``, las preferencias sin normalizar de la política.
        u: ``(...)``, un uniforme en ``[0, 1)`` por estado; ``None``: se sacan
            con ``torch.rand``.

    Returns:
        ``(actions, log_probs)``, ambos de forma ``(...)``; ``log_probs`` lleva
        gradiente hacia ``logits`` (lo único que REINFORCE necesita derivar).
    """
    if u is None:
        u = torch.rand(logits.shape[:-1])
    u = torch.as_tensor(u, dtype=logits.dtype)
    log_pi = torch.log_softmax(logits, dim=-1)
    cumulative = log_pi.detach().exp().cumsum(dim=-1)
    below = (cumulative <= u.unsqueeze(-1)).sum(dim=-1)
    actions = below.clamp(max=logits.shape[-1] - 1)
    log_probs = log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    return actions, log_probs


def gaussian_log_prob(
    actions: torch.Tensor, mean: torch.Tensor, log_std: torch.Tensor
) -> torch.Tensor:
    """``log N(a; μ, σ²)`` de acciones de ``d`` dimensiones independientes.

    ``log p(a) = Σ_i [ −(a_i − μ_i)² / (2σ_i²) − log σ_i − ½ log(2π) ]``,
    escrita directamente en escala logarítmica (nunca ``log(exp(...))``, que se
    anula para acciones lejanas).

    Args:
        actions: ``(N, d)``.
        mean: ``(N, d)``, la media ``μ`` de la política en cada estado.
        log_std: ``(d,)`` o ``(N, d)``, el logaritmo de la desviación típica.

    Returns:
        ``(N,)``: la log-densidad de cada acción (suma sobre las ``d``
        dimensiones).
    """
    z = (actions - mean) * torch.exp(-log_std)
    per_dim = -0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)
    return per_dim.sum(dim=-1)


class CategoricalPolicy(nn.Module):
    """``π_θ(a|s)`` categórica: una red pequeña que da un logit por acción."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 64) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(obs_dim, hidden),
            nn.Tanh(),
            nn.Linear(hidden, n_actions),
        )

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Los logits, ``(..., n_actions)``."""
        return self.net(obs)

    def distribution(self, obs: torch.Tensor) -> Categorical:
        """La distribución ``π_θ(·|s)`` de cada estado de ``obs``."""
        return Categorical(logits=self(obs))

    @torch.no_grad()
    def act(self, obs: torch.Tensor, greedy: bool = False) -> torch.Tensor:
        """Una acción por estado: muestreada, o la más probable si ``greedy``."""
        logits = self(obs)
        if greedy:
            return logits.argmax(dim=-1)
        return Categorical(logits=logits).sample()


class GaussianPolicy(nn.Module):
    """``π_θ(a|s) = N(μ_θ(s), σ²)`` para acciones continuas de ``action_dim``.

    La red da la media; ``log σ`` es un parámetro aparte (uno por dimensión) que
    también se aprende. Se guarda el logaritmo para que ``σ = exp(log σ)`` sea
    siempre positiva.
    """

    def __init__(
        self, obs_dim: int, action_dim: int, hidden: int = 32, log_std: float = 0.0
    ) -> None:
        super().__init__()
        self.mean_net = nn.Sequential(
            nn.Linear(obs_dim, hidden),
            nn.Tanh(),
            nn.Linear(hidden, action_dim),
        )
        self.log_std = nn.Parameter(torch.full((action_dim,), float(log_std)))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """La media ``μ_θ(s)``, ``(..., action_dim)``."""
        return self.mean_net(obs)

    def distribution(self, obs: torch.Tensor) -> Normal:
        """``N(μ_θ(s), σ²)`` por dimensión (suma ``log_prob`` sobre la última)."""
        return Normal(self(obs), torch.exp(self.log_std))

    def log_prob(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """``log π_θ(a|s)``, ``(N,)``."""
        return gaussian_log_prob(actions, self(obs), self.log_std)

    @torch.no_grad()
    def act(self, obs: torch.Tensor, greedy: bool = False) -> torch.Tensor:
        """Una acción por estado: muestreada, o la media si ``greedy``."""
        mean = self(obs)
        if greedy:
            return mean
        return mean + torch.exp(self.log_std) * torch.randn_like(mean)


# ---------------------------------------------------------------------------
# La pérdida de REINFORCE
# ---------------------------------------------------------------------------


def gradient_estimators(
    f: Callable[[torch.Tensor], torch.Tensor],
    mean: float,
    log_std: float,
    noise: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Dos estimaciones de ``∇_(μ, log σ) E[f(x)]``, ``x ~ N(μ, σ²)``.

    Con las mismas muestras: ``x_i = μ + σ·ε_i``, con ``ε_i = noise[i]``.

    * **Función de puntuación** (REINFORCE): ``mean_i f(x_i)·∇ log N(x_i; μ, σ²)``,
      con cada ``x_i`` fijo (separado del grafo) y ``f(x_i)`` como un peso
      constante. Solo pide evaluar ``f``.
    * **Reparametrización** (el gradiente «a través» de la muestra):
      ``mean_i ∇ f(μ + σ·ε_i)``, que pide derivar ``f``.

    Returns:
        ``(score, pathwise)``, dos tensores ``(2,)`` sin gradiente: la derivada
        respecto a ``μ`` y respecto a ``log σ``.
    """
    noise = torch.as_tensor(noise)
    params = torch.tensor(
        [float(mean), float(log_std)], dtype=noise.dtype, requires_grad=True
    )
    mu, std = params[0], params[1].exp()
    x = mu + std * noise
    (pathwise,) = torch.autograd.grad(f(x).mean(), params, retain_graph=True)
    fixed = x.detach()
    log_prob = Normal(mu, std).log_prob(fixed)
    weights = f(fixed).detach()
    (score,) = torch.autograd.grad((weights * log_prob).mean(), params)
    return score, pathwise


def reinforce_loss(
    log_probs: torch.Tensor, returns: torch.Tensor, n_episodes: int
) -> torch.Tensor:
    """La pérdida de REINFORCE: ``−(1/N) Σ_i Σ_t log π(a_t|s_t) · G_t``.

    Su gradiente es menos la estimación de ``∇J`` con ``N`` episodios: bajar
    por ella es subir por ``J``. Los retornos son **constantes** (se separan
    del grafo con ``detach``): el gradiente fluye solo por ``log π``.

    Args:
        log_probs: ``(M,)``, ``log π_θ(a_t|s_t)`` de todos los pasos de los
            ``N`` episodios, con gradiente.
        returns: ``(M,)``, el peso de cada paso (``G_t``, o ``G_t − b``).
        n_episodes: ``N``, cuántos episodios hay en el lote.

    Returns:
        Un escalar.
    """
    return -(log_probs * returns.detach()).sum() / n_episodes


# ---------------------------------------------------------------------------
# Un problema pequeño con ∇J exacto: el pasillo corto
# ---------------------------------------------------------------------------

LEFT, RIGHT = 0, 1


class ShortCorridor:
    """El pasillo corto con acciones cambiadas (Sutton y Barto, 2018, ejemplo 13.1).

    Tres casillas y la meta: ``0 1 2 | meta``. Se empieza en 0 y cada paso cuesta
    ``−1``. En las casillas 0 y 2 las acciones hacen lo esperado (en 0, ir a la
    izquierda choca con la pared y no se mueve); en la 1 están **cambiadas**:
    «derecha» lleva a la 0 e «izquierda» a la 2. Las tres casillas se ven igual,
    así que la política no puede distinguirlas: es la misma ``π = softmax(θ)``
    en todas, con ``θ ∈ R²`` (izquierda, derecha).

    Ninguna política determinista llega nunca a la meta; la mejor es
    estocástica: ``π(derecha) = 2 − √2 ≈ 0,586``, con ``J = −(6 + 4√2) ≈ −11,66``
    (Sutton y Barto dan 0,59 y −11,6). ``tests/test_reinforce.py`` lo comprueba.
    """

    n_states = 3
    n_actions = 2
    start = 0
    goal = 3
    # next_state[s, a]: a dónde lleva la acción a desde la casilla s.
    next_state = np.array([[0, 1], [2, 0], [1, 3]])

    def policy(self, theta: torch.Tensor) -> torch.Tensor:
        """``π(a|s)`` de cada casilla, ``(3, 2)``.

        ``theta`` es ``(2,)`` (la política del ejemplo, la misma en las tres
        casillas) o ``(3, 2)`` (una fila de logits por casilla, como si el agente
        viera dónde está).
        """
        return torch.softmax(theta, dim=-1).expand(self.n_states, self.n_actions)

    def _transitions(self, pi: torch.Tensor) -> torch.Tensor:
        """``P_π[s, s']`` entre las tres casillas (la meta no cuenta: termina)."""
        transitions = torch.zeros(3, 3, dtype=pi.dtype)
        for s in range(3):
            for a in range(2):
                s_next = int(self.next_state[s, a])
                if s_next != self.goal:
                    transitions[s, s_next] = transitions[s, s_next] + pi[s, a]
        return transitions

    def state_values(self, theta: torch.Tensor, gamma: float = 1.0) -> torch.Tensor:
        """``V_γ(s)`` de las tres casillas: ``v = (I − γ P_π)^{-1} r``, derivable."""
        transitions = self._transitions(self.policy(theta))
        rewards = -torch.ones(3, dtype=theta.dtype)
        return torch.linalg.solve(
            torch.eye(3, dtype=theta.dtype) - gamma * transitions, rewards
        )

    def objective(self, theta: torch.Tensor, gamma: float = 1.0) -> torch.Tensor:
        """``J(θ) = V_γ(0)``, exacto y derivable (recompensa −1 en cada paso).

        Resuelve las ecuaciones de Bellman ``v = r + γ P_π v`` sobre las tres
        casillas: ``v = (I − γ P_π)^{-1} r``. Por defecto ``γ = 1``, el del libro.
        """
        return self.state_values(theta, gamma)[self.start]

    def action_values(self, theta: torch.Tensor, gamma: float = 1.0) -> torch.Tensor:
        """``Q_γ(s, a) = −1 + γ V_γ(s')`` (``V`` de la meta, 0), ``(3, 2)``."""
        values = torch.cat([self.state_values(theta, gamma), theta.new_zeros(1)])
        return -1.0 + gamma * values[torch.as_tensor(self.next_state)]

    def visits(self, theta: torch.Tensor, gamma: float = 1.0) -> torch.Tensor:
        """``d_γ(s) = Σ_t γ^t · Pr(s_t = s)`` desde la casilla de salida, ``(3,)``.

        Con ``γ = 1`` es el número medio de visitas a cada casilla por episodio;
        con ``γ < 1``, cada visita cuenta ``γ^t``. Es la fila de salida de
        ``(I − γ P_π)^{-1}``.
        """
        transitions = self._transitions(self.policy(theta))
        start = torch.zeros(3, dtype=theta.dtype)
        start[self.start] = 1.0
        return torch.linalg.solve(
            (torch.eye(3, dtype=theta.dtype) - gamma * transitions).T, start
        )

    def state_form_gradient(
        self, theta: torch.Tensor, gamma: float = 1.0, visits_gamma: float | None = None
    ) -> torch.Tensor:
        """``Σ_s d(s) Σ_a ∇_θ π(a|s) Q_γ(s, a)``: la forma del teorema con estados.

        Con ``visits_gamma = gamma`` (por defecto) es ``∇J_γ`` (Sutton et al.,
        2000). Con ``visits_gamma = 1`` es lo que estima en media REINFORCE sin
        el factor ``γ^t``: las visitas sin descontar, con los ``Q_γ`` descontados.
        Para una softmax, ``Σ_a ∇_{θ_s} π(a|s) Q(s, a) = π_s ⊙ (Q_s − π_s·Q_s)``;
        el resultado es derivable respecto a ``theta`` y tiene su forma.
        """
        visits_gamma = gamma if visits_gamma is None else visits_gamma
        pi = self.policy(theta)
        q = self.action_values(theta, gamma)
        d = self.visits(theta, visits_gamma)
        per_state = d[:, None] * pi * (q - (pi * q).sum(dim=-1, keepdim=True))
        return per_state if theta.dim() == 2 else per_state.sum(dim=0)

    def exact_gradient(self, theta: np.ndarray, gamma: float = 1.0) -> np.ndarray:
        """``∇J(θ)`` exacto, con autograd sobre :meth:`objective`."""
        theta_t = torch.tensor(np.asarray(theta, dtype=float), requires_grad=True)
        self.objective(theta_t, gamma).backward()
        return theta_t.grad.numpy()

    def sample_episodes(
        self,
        theta: np.ndarray,
        n_episodes: int,
        rng: np.random.Generator,
        max_steps: int = 10_000,
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """``n_episodes`` episodios con ``π = softmax(θ)``, todos a la vez.

        Returns:
            Una lista ``[(actions, rewards), ...]``, un par de arrays ``(T_i,)``
            por episodio.
        """
        p_right = float(
            torch.softmax(torch.as_tensor(theta, dtype=torch.float64), 0)[1]
        )
        states = np.full(n_episodes, self.start)
        lengths = np.zeros(n_episodes, dtype=int)
        actions = np.zeros((max_steps, n_episodes), dtype=int)
        for t in range(max_steps):
            running = states != self.goal
            if not running.any():
                break
            chosen = (rng.random(n_episodes) < p_right).astype(int)
            actions[t] = chosen
            lengths += running
            states = np.where(
                running, self.next_state[np.minimum(states, 2), chosen], states
            )
        return [
            (actions[: lengths[i], i].copy(), -np.ones(lengths[i]))
            for i in range(n_episodes)
        ]


def per_episode_score_gradients(
    theta: np.ndarray,
    actions: Sequence[np.ndarray],
    returns: Sequence[np.ndarray],
) -> np.ndarray:
    """``Σ_t G_t · ∇_θ log π(a_t)`` de cada episodio, para ``π = softmax(θ)``.

    La política es la misma en todos los estados (como en :class:`ShortCorridor`),
    así que ``∇_θ log π(a) = one_hot(a) − π``.

    Returns:
        ``(N, A)``: una estimación de ``∇J`` por episodio. Su media es
        :func:`score_function_gradient`.
    """
    theta = np.asarray(theta, dtype=float)
    pi = np.exp(theta - theta.max())
    pi /= pi.sum()
    lengths = np.array([len(a) for a in actions])
    flat_actions = np.concatenate([np.asarray(a, dtype=int) for a in actions])
    flat_returns = np.concatenate([np.asarray(g, dtype=float) for g in returns])
    terms = flat_returns[:, None] * (np.eye(len(theta))[flat_actions] - pi)
    gradients = np.zeros((len(lengths), len(theta)))
    nonempty = lengths > 0
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[nonempty]
    if nonempty.any():
        gradients[nonempty] = np.add.reduceat(terms, starts, axis=0)
    return gradients


def score_function_gradient(
    theta: np.ndarray,
    actions: Sequence[np.ndarray],
    returns: Sequence[np.ndarray],
) -> np.ndarray:
    """Estimación de Monte Carlo de ``∇J`` para una política ``softmax(θ)``.

    ``(1/N) Σ_i Σ_t G_{i,t} · ∇_θ log π(a_{i,t})``, con
    ``∇_θ log π(a) = one_hot(a) − π`` (la política es la misma en todos los
    estados, como en :class:`ShortCorridor`).

    Args:
        theta: ``(A,)``, los logits de la política.
        actions: ``N`` arrays de enteros, las acciones de cada episodio.
        returns: ``N`` arrays, los retornos ``G_t`` de cada episodio.

    Returns:
        ``(A,)``, la estimación del gradiente.
    """
    return per_episode_score_gradients(theta, actions, returns).mean(axis=0)


# ---------------------------------------------------------------------------
# REINFORCE completo
# ---------------------------------------------------------------------------


def reinforce_updates(
    policy: nn.Module,
    optimizer: torch.optim.Optimizer,
    env: Any,
    n_updates: int,
    n_episodes: int,
    gamma: float,
    seed: int,
    generator: torch.Generator,
) -> list[float]:
    """El bucle de REINFORCE, paso a paso y sin atajos (el ejercicio 6).

    Cada actualización:

    1. rollout: ``n_episodes`` episodios completos, uno tras otro, en ``env``.
       El episodio número ``i`` (contando desde 0 a lo largo de todas las
       actualizaciones) empieza con ``env.reset(seed=seed + i)``. En cada paso,
       un uniforme ``u = torch.rand((), generator=generator)`` y la acción
       ``sample_action(policy(obs), u)``; el episodio acaba con ``terminated``
       o ``truncated``;
    2. retornos ``G_t`` de cada episodio, hacia atrás, con ``gamma``;
    3. la pérdida de REINFORCE de todos los pasos, dividida por ``n_episodes``;
    4. **un** paso del optimizador: ``zero_grad``, ``backward``, ``step``.

    Así el resultado queda fijado por ``seed``, ``generator`` y los parámetros
    iniciales: dos implementaciones correctas dejan los mismos parámetros.

    Args:
        policy: la red, de observaciones ``(obs_dim,)`` a logits ``(A,)``.
        optimizer: el optimizador de sus parámetros.
        env: un entorno de gymnasium con acciones discretas.
        n_updates: cuántas actualizaciones.
        n_episodes: ``N``, episodios por actualización.
        gamma: el factor de descuento.
        seed: la semilla del primer episodio.
        generator: de donde salen los uniformes del muestreo.

    Returns:
        El retorno medio (sin descontar) de los ``N`` episodios de cada
        actualización.
    """
    mean_returns: list[float] = []
    episode = 0
    for _ in range(n_updates):
        # Etapa 1: rollout de N episodios con la política actual.
        log_probs: list[torch.Tensor] = []
        returns: list[torch.Tensor] = []
        totals: list[float] = []
        for _ in range(n_episodes):
            obs, _ = env.reset(seed=seed + episode)
            episode += 1
            rewards: list[float] = []
            done = False
            while not done:
                u = torch.rand((), generator=generator)
                logits = policy(torch.as_tensor(obs, dtype=torch.float32))
                action, log_prob = sample_action(logits, u)
                obs, reward, terminated, truncated, _ = env.step(int(action))
                rewards.append(float(reward))
                log_probs.append(log_prob)
                done = bool(terminated or truncated)
            # Etapa 2: los retornos de este episodio, hacia atrás.
            episode_returns = discounted_returns(rewards, gamma)
            returns.append(torch.as_tensor(episode_returns, dtype=torch.float32))
            totals.append(sum(rewards))
        # Etapa 3: la pérdida de todos los pasos del lote.
        loss = reinforce_loss(torch.stack(log_probs), torch.cat(returns), n_episodes)
        # Etapa 4: un paso del optimizador por actualización.
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        mean_returns.append(float(np.mean(totals)))
    return mean_returns


@dataclass
class ReinforceConfig:
    """Hiperparámetros de :func:`train_reinforce` (valores por defecto: CartPole)."""

    env_id: str = "CartPole-v1"  # entorno de gymnasium (acciones discretas)
    seed: int = 0  # semilla de la red, los entornos y el muestreo
    n_envs: int = 16  # episodios por actualización (uno por copia del entorno)
    gamma: float = 0.99  # factor de descuento de los retornos G_t
    learning_rate: float = 0.01  # paso de Adam
    hidden: int = 64  # neuronas de la capa oculta de la política
    normalize_returns: bool = True  # pesos (G_t − media) / desviación del lote
    max_env_steps: int = 400_000  # tope de pasos de entorno del entrenamiento
    max_updates: int | None = None  # tope de actualizaciones (None: sin tope)
    eval_every_updates: int = 5  # evaluar la política voraz cada tantas act.
    # o bien, si es > 0, en la primera actualización tras cada tantos pasos de
    # entorno (como los demás agentes; la regla de ``make bench``). Con los dos
    # a 0, nunca.
    eval_every: int = 0
    eval_episodes: int = 20  # episodios por evaluación
    target_return: float | None = 475.0  # parar al alcanzarlo (None: no parar)
    confirm_episodes: int = 0  # confirmar al llegar, en tantos episodios nuevos
    vectorization: str = "vector_entry_point"  # "sync" para otros entornos


class Baseline(Protocol):
    """Una línea base enchufable en :func:`train_reinforce` (módulo 04).

    ``advantages`` devuelve los pesos ``G_t − b(s_t)`` de cada paso; ``update``
    la entrena con el lote (p. ej. una red de valor por regresión) después del
    paso de la política.
    """

    def advantages(self, episodes: Episodes, returns: torch.Tensor) -> torch.Tensor: ...

    def update(self, episodes: Episodes, returns: torch.Tensor) -> Any: ...


def train_reinforce(
    config: ReinforceConfig,
    *,
    baseline: Baseline | None = None,
    returns_fn: Callable[..., Any] = discounted_returns,
    loss_fn: Callable[..., torch.Tensor] = reinforce_loss,
    progress: bool = True,
) -> History:
    """REINFORCE (Williams, 1992) con lotes de episodios completos.

    Cada actualización:

    1. rollout: un episodio completo en cada una de las ``n_envs`` copias;
    2. retornos: ``G_t`` de cada episodio, hacia atrás (``returns_fn``);
    3. pesos: ``G_t`` (menos la línea base, si hay) y, si se pide, normalizados
       a media 0 y desviación 1 en el lote;
    4. pérdida ``loss_fn(log_probs, pesos, N)`` y un paso de Adam;
    5. cada ``eval_every_updates`` actualizaciones (o tras cada
       ``eval_every`` pasos de entorno), 20 episodios con la política voraz;
       se para al alcanzar ``target_return``.

    Args:
        config: los hiperparámetros.
        ``baseline``: una línea base (ver :class:`Baseline`); ``None`` = ninguna.
        returns_fn: ``(rewards, gamma) → G`` de un episodio (tu función sirve).
        loss_fn: ``(log_probs, returns, n_episodes) → pérdida`` (ídem).
        progress: mostrar una barra de progreso.

    Returns:
        La :class:`History` del entrenamiento, con la política entrenada.
    """
    from tqdm.auto import tqdm

    torch.manual_seed(config.seed)
    envs = make_envs(config.env_id, config.n_envs, config.vectorization)
    obs_dim = envs.single_observation_space.shape[0]
    policy = CategoricalPolicy(obs_dim, int(envs.single_action_space.n), config.hidden)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate)
    history = History(policy=policy, target_return=config.target_return)
    start, env_steps, update = time.perf_counter(), 0, 0
    bar = tqdm(total=config.max_env_steps, desc="REINFORCE", disable=not progress)
    seed: int | None = config.seed
    next_eval = config.eval_every
    while env_steps < config.max_env_steps and (
        config.max_updates is None or update < config.max_updates
    ):
        # Etapa 1: rollout con la política actual (sin gradiente).
        episodes = collect_episodes(envs, policy, seed=seed)
        seed = None
        # Etapa 2: retornos G_t de cada episodio, hacia atrás.
        returns = torch.cat(
            [
                torch.as_tensor(
                    np.asarray(returns_fn(r.numpy(), config.gamma)),
                    dtype=torch.float32,
                )
                for r in episodes.split(episodes.rewards)
            ]
        )
        # Etapa 3: los pesos de cada paso.
        weights = (
            returns if baseline is None else baseline.advantages(episodes, returns)
        )
        if config.normalize_returns:
            weights = (weights - weights.mean()) / (weights.std() + 1e-8)
        # Etapa 4: log π(a_t|s_t) de todo el lote en una pasada (mismo θ que al
        # muestrear: mismo número y mismo gradiente), pérdida y paso de Adam.
        distribution = policy.distribution(episodes.obs)
        log_probs = distribution.log_prob(episodes.actions)
        loss = loss_fn(log_probs, weights.detach(), episodes.n_episodes)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if baseline is not None:
            baseline_loss = baseline.update(episodes, returns)
            if isinstance(baseline_loss, int | float):
                history.baseline_losses.append(float(baseline_loss))

        update += 1
        env_steps += episodes.n_steps
        totals = episodes.total_rewards()
        history.env_steps.append(env_steps)
        history.seconds.append(time.perf_counter() - start)
        history.mean_returns.append(float(totals.mean()))
        history.episode_returns.extend(totals.tolist())
        history.losses.append(loss.item())
        history.entropies.append(distribution.entropy().mean().item())
        bar.update(episodes.n_steps)
        # Etapa 5: evaluación voraz periódica.
        if config.eval_every:
            due = env_steps >= next_eval
            while next_eval <= env_steps:
                next_eval += config.eval_every
        else:
            every = config.eval_every_updates
            due = bool(every) and update % every == 0
        if due:
            solved = record_evaluation(
                policy,
                config,
                history,
                env_steps,
                start,
                seed=evaluation_seed(config.seed, update),
            )
            bar.set_postfix(voraz=number(history.evaluations[-1].mean_return, 0))
            if solved:
                break
    bar.close()
    envs.close()
    return history
