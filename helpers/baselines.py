"""Módulo 04 · Varianza y líneas base: implementaciones de referencia.

Lo que el cuaderno 04_lineas_base pide escribir, ya resuelto, y lo que los
módulos siguientes importan en lugar de depender de tu solución:

* ``score_gradients``: una estimación de ``∇J`` **por muestra**,
  ``(R_i − b_i)·∇log π(a_i)``, para una política ``softmax(θ)`` de un paso;
* ``total_variance``: la varianza de esas estimaciones (traza de la covarianza);
* ``estimator_variances``: la varianza del estimador con el retorno entero y la
  del que usa solo la recompensa futura (la causalidad), en episodios de
  varios pasos;
* ``normalize_returns``: ``(G − media)/desviación``, sin NaN si todos son iguales;
* ``leave_one_out_baseline``: la recompensa esperada de cada pregunta, estimada
  con las **otras** muestras de la misma pregunta;
* ``optimal_constant_baseline``: la constante ``b`` que minimiza la varianza;
* ``baseline_losses``: la pérdida de la política con la ventaja ``G − V(s)``
  separada del grafo y la pérdida del valor (regresión a ``G``);
* ``value_network`` y ``baseline_update``: una red ``V(s)`` pequeña y una
  actualización completa de REINFORCE con ella (ventajas con la ``V`` de antes,
  un paso de la política y, después, ``value_epochs`` pasos de ``V``);
* ``train_questions_adam``: REINFORCE con Adam en las cuatro preguntas de
  ``SUCCESS``, con los pesos que se le den, muchas ejecuciones a la vez;
* ``BatchMeanBaseline``, ``ValueBaseline`` y ``train_reinforce_with_baseline``:
  líneas base enchufables en :func:`helpers.reinforce.train_reinforce` y
  REINFORCE con una ``V(s)`` aprendida en CartPole;
* ``ContextualCoin``, ``fitted_values`` y ``fit_order_gradients``: por qué ``V``
  se ajusta **después** de calcular la ventaja (ajustada antes, al mismo lote,
  la ventaja encoge y el gradiente se sesga);
* ``state_baselines`` y ``state_baseline_variances``: en ``ContextualCoin``, la
  línea base de menor varianza de cada estado, ``b*(s)``, frente a ``V(s)``.

Referencias: Williams (1992); Greensmith, Bartlett y Baxter (2004), *Variance
reduction techniques for gradient estimates in reinforcement learning*; Sutton y
Barto (2018), sec. 13.4; Kool, van Hoof y Welling (2019), la línea base de las
otras muestras (RLOO).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import torch
from torch import nn

from helpers.reinforce import ReinforceConfig, train_reinforce
from helpers.training import Episodes, History

# ---------------------------------------------------------------------------
# Estimaciones por muestra y su varianza
# ---------------------------------------------------------------------------


def softmax_policy(theta: np.ndarray) -> np.ndarray:
    """``π = softmax(θ)``, estable (se resta el máximo antes de ``exp``)."""
    theta = np.asarray(theta, dtype=float)
    z = np.exp(theta - theta.max())
    return z / z.sum()


def score_gradients(
    theta: np.ndarray,
    actions: Sequence[int] | np.ndarray,
    rewards: Sequence[float] | np.ndarray,
    baselines: float | Sequence[float] | np.ndarray = 0.0,
) -> np.ndarray:
    """Una estimación de ``∇J`` por muestra: ``g_i = (R_i − b_i)·∇_θ log π(a_i)``.

    La política es ``π = softmax(θ)`` (un bandido, episodios de un paso), así que
    ``∇_θ log π(a) = one_hot(a) − π``. La media de las filas es la estimación de
    REINFORCE con ``N`` muestras.

    Args:
        theta: ``(A,)``, los logits.
        actions: ``(N,)``, la acción de cada muestra.
        rewards: ``(N,)``, su recompensa (el retorno de un episodio de un paso).
        ``baselines``: la línea base, un número o una por muestra ``(N,)``.

    Returns:
        ``(N, A)``: una fila por muestra.
    """
    pi = softmax_policy(theta)
    actions = np.asarray(actions, dtype=int).reshape(-1)
    rewards = np.asarray(rewards, dtype=float).reshape(-1)
    weights = rewards - np.asarray(baselines, dtype=float)
    return weights[:, None] * (np.eye(len(pi))[actions] - pi)


def total_variance(gradients: np.ndarray) -> float:
    """La varianza total de ``N`` estimaciones ``(N, A)``: ``(1/N) Σ_i ‖g_i − ḡ‖²``.

    Es la traza de la matriz de covarianza (la suma de las varianzas de cada
    componente, dividiendo por ``N``). La varianza de la media de ``N``
    estimaciones independientes es esta dividida por ``N``.
    """
    gradients = np.asarray(gradients, dtype=float)
    centered = gradients - gradients.mean(axis=0)
    return float((centered**2).sum(axis=1).mean())


def causal_estimates(
    episode_rewards: Sequence[np.ndarray], episode_scores: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Las dos estimaciones de ``∇J`` de cada episodio, ``(N, P)`` cada una.

    Con ``s_t = ∇_θ log π(a_t|s_t)`` y las recompensas ``r_t`` del episodio:

    * **retorno entero**: ``(Σ_k r_k)·Σ_t s_t``, cada paso pesado con todo el
      episodio, también con lo que pasó antes de él;
    * **recompensa futura** (*reward-to-go*): ``Σ_t (Σ_{k≥t} r_k)·s_t``, cada
      paso pesado solo con lo que viene desde él (la causalidad: una acción no
      cambia las recompensas que ya se cobraron).

    Las dos tienen la misma esperanza; la segunda quita los términos
    ``r_k·s_t`` con ``k < t``, que valen 0 de media y solo añaden ruido.

    Args:
        episode_rewards: ``N`` arrays ``(T_i,)``, las recompensas de cada episodio.
        episode_scores: ``N`` arrays ``(T_i, P)``, ``∇log π`` de cada paso.
    """
    full, to_go = [], []
    for rewards, scores in zip(episode_rewards, episode_scores, strict=True):
        rewards = np.asarray(rewards, dtype=float).reshape(-1)
        scores = np.asarray(scores, dtype=float).reshape(len(rewards), -1)
        future = np.cumsum(rewards[::-1])[::-1]
        full.append(rewards.sum() * scores.sum(axis=0))
        to_go.append(future @ scores)
    return np.array(full), np.array(to_go)


def estimator_variances(
    episode_rewards: Sequence[np.ndarray], episode_scores: Sequence[np.ndarray]
) -> tuple[float, float]:
    """La varianza total de cada estimador de :func:`causal_estimates`.

    Returns:
        ``(varianza con el retorno entero, varianza con la recompensa futura)``,
        cada una ``(1/N) Σ_i ‖g_i − ḡ‖²`` (ver :func:`total_variance`).
    """
    full, to_go = causal_estimates(episode_rewards, episode_scores)
    return total_variance(full), total_variance(to_go)


def samples_for_precision(variance: float, tolerance: float) -> int:
    """Cuántas muestras hacen falta para que la media tenga error típico ``tolerance``.

    El error típico de la media de ``N`` muestras es ``sqrt(varianza / N)``; se
    pide ``≤ tolerance``, así que ``N = ⌈varianza / tolerance²⌉``.
    """
    return max(1, int(np.ceil(variance / tolerance**2)))


def optimal_constant_baseline(
    theta: np.ndarray,
    actions: Sequence[int] | np.ndarray,
    rewards: Sequence[float] | np.ndarray,
) -> float:
    """La constante ``b*`` que minimiza la varianza total de ``(R − b)·∇log π``.

    Derivando ``E[‖(R − b)·s‖²]`` respecto a ``b`` (con ``s = ∇log π(a)``):
    ``b* = E[‖s‖²·R] / E[‖s‖²]``, una media de las recompensas ponderada por lo
    grande que es el empujón de cada muestra. Se estima con las muestras dadas.
    """
    scores = score_gradients(theta, actions, np.ones(len(np.atleast_1d(actions))))
    weights = (scores**2).sum(axis=1)
    rewards = np.asarray(rewards, dtype=float).reshape(-1)
    return float((weights * rewards).sum() / weights.sum())


# ---------------------------------------------------------------------------
# Líneas base sencillas
# ---------------------------------------------------------------------------


def normalize_returns(returns, eps: float = 1e-8):
    """``(G − media) / desviación`` del lote, seguro cuando todos son iguales.

    Usa la desviación típica poblacional (``ddof = 0``). Si es menor que
    ``eps`` (todos los retornos iguales: no hay nada que distinguir) devuelve
    ceros en lugar de dividir ``0 / 0 = NaN``.

    Args:
        returns: ``(N,)``, array de NumPy o tensor de PyTorch.
        eps: por debajo de esta desviación se considera cero.

    Returns:
        Del mismo tipo y forma que ``returns``.
    """
    if isinstance(returns, torch.Tensor):
        centered = returns - returns.mean()
        std = returns.std(unbiased=False)
        if std < eps:
            return torch.zeros_like(returns)
        return centered / std
    returns = np.asarray(returns, dtype=float)
    std = returns.std()
    if std < eps:
        return np.zeros_like(returns)
    return (returns - returns.mean()) / std


def leave_one_out_baseline(
    question_ids: Sequence[int] | np.ndarray, rewards: Sequence[float] | np.ndarray
) -> np.ndarray:
    """La recompensa esperada de cada pregunta, sin mirar la propia muestra.

    ``b_i`` es la media de las recompensas de las **otras** muestras de la misma
    pregunta (*leave-one-out*, como RLOO). No depende de la acción ``a_i``, así
    que no sesga el gradiente; si la pregunta solo tiene esa muestra, ``b_i = 0``.

    Args:
        question_ids: ``(N,)``, a qué pregunta pertenece cada muestra.
        rewards: ``(N,)``, su recompensa.

    Returns:
        ``(N,)``, la línea base de cada muestra.
    """
    ids = np.asarray(question_ids).reshape(-1)
    rewards = np.asarray(rewards, dtype=float).reshape(-1)
    baselines = np.zeros_like(rewards)
    for q in np.unique(ids):
        members = ids == q
        n = members.sum()
        if n > 1:
            baselines[members] = (rewards[members].sum() - rewards[members]) / (n - 1)
    return baselines


# ---------------------------------------------------------------------------
# REINFORCE con una V(s) aprendida
# ---------------------------------------------------------------------------


def baseline_losses(
    log_probs: torch.Tensor,
    values: torch.Tensor,
    returns: torch.Tensor,
    n_episodes: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Las dos pérdidas de REINFORCE con una línea base aprendida ``V(s)``.

    * política: ``−(1/N) Σ log π(a_t|s_t) · A_t`` con ``A_t = G_t − V(s_t)``
      **separada del grafo**: la ventaja es un peso, no algo que optimizar;
    * valor: ``(1/M) Σ (V(s_t) − G_t)²``, la regresión de ``V`` a los retornos
      (media sobre los ``M`` pasos).

    Args:
        log_probs: ``(M,)``, ``log π_θ(a_t|s_t)`` con gradiente.
        values: ``(M,)``, ``V(s_t)`` con gradiente hacia la red de valor.
        returns: ``(M,)``, los retornos ``G_t``.
        n_episodes: ``N``.

    Returns:
        ``(policy_loss, value_loss)``, dos escalares.
    """
    returns = returns.detach()
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    value_loss = ((values - returns) ** 2).mean()
    return policy_loss, value_loss


def value_network(obs_dim: int, hidden: int = 64) -> nn.Sequential:
    """Una red de valor pequeña (``obs_dim → hidden → 1``, con ``tanh``).

    De un lote de estados ``(M, obs_dim)`` da ``V(s_t)`` de cada uno, ``(M,)``:
    la última capa, ``nn.Flatten(0)``, quita el eje de tamaño 1.
    """
    return nn.Sequential(
        nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1), nn.Flatten(0)
    )


def baseline_update(
    policy: nn.Module,
    value_net: nn.Module,
    policy_optimizer: torch.optim.Optimizer,
    value_optimizer: torch.optim.Optimizer,
    episodes: Episodes,
    returns: torch.Tensor,
    value_epochs: int,
) -> torch.Tensor:
    """Una actualización de REINFORCE con una línea base aprendida ``V(s)``.

    En este orden:

    1. las ventajas ``A_t = G_t − V(s_t)`` con la ``V`` **de antes** (la que
       dejaron los lotes anteriores), separadas del grafo;
    2. un paso de ``policy_optimizer`` con la pérdida de la política de
       :func:`baseline_losses` (dividida por los ``N`` episodios del lote);
    3. después, ``value_epochs`` pasos de ``value_optimizer``, cada uno con la
       pérdida del valor ``(1/M) Σ (V(s_t) − G_t)²`` recalculada con la ``V``
       del momento.

    Ajustar ``V`` antes de calcular las ventajas haría que ``V(s_t)`` ya
    hubiera visto ``G_t``, que depende de ``a_t``: una línea base que depende de
    la acción (ver :func:`fit_order_gradients`).

    Args:
        policy: la política; ``policy.distribution(obs)`` da ``π(·|s)`` de cada
            estado (como :class:`helpers.reinforce.CategoricalPolicy`).
        value_net: de ``(M, obs_dim)`` estados da ``V(s)``, ``(M,)``
            (:func:`value_network`).
        policy_optimizer, value_optimizer: los optimizadores de cada red.
        episodes: el lote (``obs``, ``actions`` y ``n_episodes``).
        returns: ``(M,)``, los ``G_t`` de cada paso.
        value_epochs: cuántos pasos da el optimizador de ``V``.

    Returns:
        ``(M,)``, las ventajas que usó la política, sin gradiente.
    """
    obs, n_episodes = episodes.obs, episodes.n_episodes
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    values = value_net(obs)
    policy_loss, _ = baseline_losses(log_probs, values, returns, n_episodes)
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    for _ in range(value_epochs):
        _, value_loss = baseline_losses(
            log_probs.detach(), value_net(obs), returns, n_episodes
        )
        value_optimizer.zero_grad()
        value_loss.backward()
        value_optimizer.step()
    return (returns - values).detach()


class BatchMeanBaseline:
    """``b`` = la media de los ``G_t`` del lote (nada que entrenar)."""

    def advantages(self, episodes: Episodes, returns: torch.Tensor) -> torch.Tensor:
        return returns - returns.mean()

    def update(self, episodes: Episodes, returns: torch.Tensor) -> None:
        return None


class ValueBaseline:
    """Una red ``V(s)`` que aprende el retorno esperado de cada estado.

    Enchufable en :func:`helpers.reinforce.train_reinforce` (protocolo
    ``Baseline``): ``advantages`` devuelve ``A_t = G_t − V(s_t)`` (sin gradiente)
    y ``update`` hace ``epochs`` pasos de Adam sobre ``(V(s_t) − G_t)²`` con el
    lote, **después** del paso de la política (así la ventaja de un estado no usa
    su propio ``G_t``).

    Los retornos se escalan por ``scale`` dentro de la red (en CartPole llegan a
    ~100 con γ = 0,99): la red aprende números de orden 1.
    """

    def __init__(
        self,
        obs_dim: int,
        hidden: int = 64,
        learning_rate: float = 0.01,
        epochs: int = 5,
        scale: float = 100.0,
        seed: int = 0,
    ) -> None:
        generator_state = torch.random.get_rng_state()
        torch.manual_seed(seed)
        self.net = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1)
        )
        torch.random.set_rng_state(generator_state)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=learning_rate)
        self.epochs = epochs
        self.scale = scale

    def values(self, obs: torch.Tensor) -> torch.Tensor:
        """``V(s)`` de cada estado, ``(M,)``, en unidades de retorno."""
        return self.net(obs).squeeze(-1) * self.scale

    def advantages(self, episodes: Episodes, returns: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return returns - self.values(episodes.obs)

    def update(self, episodes: Episodes, returns: torch.Tensor) -> float:
        target = returns.detach() / self.scale
        for _ in range(self.epochs):
            loss = ((self.net(episodes.obs).squeeze(-1) - target) ** 2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return float(loss.item()) * self.scale**2


def train_reinforce_with_baseline(
    config: ReinforceConfig, progress: bool = True, **value_kwargs
) -> History:
    """REINFORCE con una línea base aprendida ``V(s)`` (:class:`ValueBaseline`).

    Es :func:`helpers.reinforce.train_reinforce` con ``baseline=ValueBaseline``:
    los pesos son las ventajas ``G_t − V(s_t)`` (normalizadas en el lote si
    ``config.normalize_returns``). ``value_kwargs`` va a :class:`ValueBaseline`.
    """
    envs_obs_dim = _obs_dim(config.env_id)
    value_kwargs.setdefault("hidden", config.hidden)
    value_kwargs.setdefault("seed", config.seed + 1)
    baseline = ValueBaseline(envs_obs_dim, **value_kwargs)
    history = train_reinforce(config, baseline=baseline, progress=progress)
    history.baseline = baseline  # type: ignore[attr-defined]
    return history


def _obs_dim(env_id: str) -> int:
    import gymnasium as gym

    env = gym.make(env_id)
    try:
        return int(env.observation_space.shape[0])
    finally:
        env.close()


def plain_config(config: ReinforceConfig) -> ReinforceConfig:
    """La misma configuración sin normalizar los retornos: REINFORCE «puro»."""
    return replace(config, normalize_returns=False)


# ---------------------------------------------------------------------------
# Problemas pequeños del cuaderno
# ---------------------------------------------------------------------------

#: Las recompensas medias del problema del pedestal: tres acciones cuyo retorno
#: ronda 500 (480, 500 y 520), con ±50 de ruido según la suerte.
PEDESTAL_MEANS = np.array([480.0, 500.0, 520.0])
PEDESTAL_NOISE = 50.0


def pedestal_samples(
    theta: np.ndarray,
    n: int,
    rng: np.random.Generator,
    offset: float = 0.0,
    noise: float = PEDESTAL_NOISE,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` episodios de un paso del problema del pedestal con ``π = softmax(θ)``.

    La acción ``a`` da ``PEDESTAL_MEANS[a] + offset + ruido`` (normal de
    desviación ``noise``).

    Returns:
        ``(actions, rewards)``, dos arrays ``(n,)``.
    """
    pi = softmax_policy(theta)
    actions = rng.choice(len(pi), size=n, p=pi)
    rewards = PEDESTAL_MEANS[actions] + offset + noise * rng.standard_normal(n)
    return actions, rewards


def exact_bandit_gradient(theta: np.ndarray, mean_rewards: np.ndarray) -> np.ndarray:
    """``∇J`` exacto de ``J(θ) = Σ_a π(a)·r̄(a)`` con ``π = softmax(θ)``.

    ``∇J = Σ_a π(a)·r̄(a)·(one_hot(a) − π)``: la esperanza de la estimación.
    """
    pi = softmax_policy(theta)
    mean_rewards = np.asarray(mean_rewards, dtype=float)
    return ((pi * mean_rewards)[:, None] * (np.eye(len(pi)) - pi)).sum(axis=0)


#: El pedestal a escala de un paso: cada paso de un episodio largo da la
#: centésima parte (4,8, 5 o 5,2 de media, con ±0,5 de ruido).
STEP_MEANS = PEDESTAL_MEANS / 100
STEP_NOISE = PEDESTAL_NOISE / 100


def pedestal_episodes(
    theta: np.ndarray,
    n_episodes: int,
    rng: np.random.Generator,
    lengths: tuple[int, int] = (5, 30),
    offset: float = 0.0,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Episodios de varios pasos: en cada paso se juega el pedestal (a escala).

    La duración de cada episodio se sortea entre ``lengths[0]`` y ``lengths[1]``
    (ambos incluidos) y no depende de las acciones. En cada paso, ``π =
    softmax(θ)`` elige una acción ``a_t``, que da ``STEP_MEANS[a_t] + offset +
    ruido``, y ``∇_θ log π(a_t) = one_hot(a_t) − π``.

    Returns:
        ``(rewards, scores)``: dos listas de ``n_episodes`` arrays, ``(T_i,)`` y
        ``(T_i, A)``.
    """
    pi = softmax_policy(theta)
    rewards, scores = [], []
    for _ in range(n_episodes):
        steps = int(rng.integers(lengths[0], lengths[1] + 1))
        actions = rng.choice(len(pi), size=steps, p=pi)
        noise = STEP_NOISE * rng.standard_normal(steps)
        rewards.append(STEP_MEANS[actions] + offset + noise)
        scores.append(np.eye(len(pi))[actions] - pi)
    return rewards, scores


#: Cuatro preguntas de dificultad muy distinta y tres estrategias para cada una.
QUESTIONS = ("2 + 2", "7 × 8", "17 × 24", "123 × 457")
STRATEGIES = ("descomponer", "estimar", "adivinar")
#: Probabilidad de acertar de cada estrategia (columnas) en cada pregunta (filas).
#: La fila de 17 × 24 es la del bandido de estrategias del módulo 01.
SUCCESS = np.array(
    [
        [1.0, 1.0, 1.0],
        [0.95, 0.85, 0.2],
        [0.76, 0.43, 0.05],
        [0.3, 0.05, 0.0],
    ]
)


def train_questions_adam(
    weigh: Callable[[np.ndarray, np.ndarray], np.ndarray],
    *,
    n_runs: int = 200,
    n_updates: int = 200,
    group_size: int = 4,
    learning_rate: float = 0.05,
    seed: int = 0,
) -> np.ndarray:
    """REINFORCE con Adam en las preguntas de ``SUCCESS``, ``n_runs`` veces a la vez.

    La política es una softmax por pregunta, ``π(·|q) = softmax(θ_q)``, y empieza
    uniforme. En cada actualización, cada ejecución responde ``group_size`` veces
    a cada pregunta (recompensa 1 si acierta, 0 si no); el gradiente del lote es
    la media de ``w_i·(one_hot(a_i) − π(·|q_i))`` sobre sus muestras, con los
    pesos ``w = weigh(R, v)``, y se da un paso de Adam (ascenso).

    Args:
        weigh: ``(R, v) → w``. ``R``: las recompensas, ``(n_runs, Q,
            group_size)``; ``v``: la recompensa esperada exacta de cada pregunta
            con la política actual, ``(n_runs, Q)``. Devuelve los pesos, con la
            forma de ``R`` (``R`` sin línea base, ``R − media``...).
        n_runs: ejecuciones independientes, vectorizadas.
        n_updates: actualizaciones.
        group_size: respuestas por pregunta en cada lote.
        learning_rate: la tasa de aprendizaje de Adam.
        seed: semilla del muestreo.

    Returns:
        ``(n_updates,)``: el acierto medio, ``(1/Q) Σ_q Σ_a π(a|q)·p(q, a)``,
        promediado sobre las ejecuciones, antes de cada actualización.
    """
    rng = np.random.default_rng(seed)
    n_questions, n_answers = SUCCESS.shape
    theta = np.zeros((n_runs, n_questions, n_answers))
    first, second = np.zeros_like(theta), np.zeros_like(theta)
    accuracy = np.empty(n_updates)
    question = np.arange(n_questions)[None, :, None]
    for t in range(n_updates):
        pi = np.exp(theta - theta.max(axis=2, keepdims=True))
        pi /= pi.sum(axis=2, keepdims=True)
        expected = (pi * SUCCESS).sum(axis=2)
        accuracy[t] = expected.mean()
        # Etapa 1: group_size respuestas a cada pregunta, en cada ejecución.
        draws = rng.random((n_runs, n_questions, group_size, 1))
        picks = (draws > pi[:, :, None].cumsum(axis=3)).sum(axis=3)
        picks = picks.clip(max=n_answers - 1)
        rewards = (rng.random(picks.shape) < SUCCESS[question, picks]).astype(float)
        # Etapa 2: pesos y gradiente del lote.
        weights = weigh(rewards, expected)
        scores = np.eye(n_answers)[picks] - pi[:, :, None]
        gradient = (weights[..., None] * scores).sum(axis=2) / (
            n_questions * group_size
        )
        # Etapa 3: un paso de Adam (ascenso).
        first = 0.9 * first + 0.1 * gradient
        second = 0.999 * second + 0.001 * gradient**2
        theta += (
            learning_rate
            * (first / (1 - 0.9 ** (t + 1)))
            / (np.sqrt(second / (1 - 0.999 ** (t + 1))) + 1e-8)
        )
    return accuracy


# ---------------------------------------------------------------------------
# Estimaciones por episodio en CartPole
# ---------------------------------------------------------------------------


def per_step_scores(
    policy: nn.Module, obs: torch.Tensor, actions: torch.Tensor
) -> torch.Tensor:
    """``∇_θ log π_θ(a_t|s_t)`` de cada paso, aplanado: ``(M, P)``.

    ``P`` es el número de parámetros de ``policy`` (en el orden de
    ``named_parameters``). Se calcula con ``torch.func`` (``vmap`` de ``grad``):
    un gradiente por paso sin un bucle de Python.
    """
    from torch.func import functional_call, grad, vmap

    params = {k: v.detach() for k, v in policy.named_parameters()}
    logits = policy(obs[:1])
    one_hot = nn.functional.one_hot(actions.long(), logits.shape[-1]).to(obs.dtype)

    def log_prob(p: dict, s: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
        return (torch.log_softmax(functional_call(policy, p, (s,)), -1) * chosen).sum()

    scores = vmap(grad(log_prob), in_dims=(None, 0, 0))(params, obs, one_hot)
    return torch.cat([g.reshape(len(obs), -1) for g in scores.values()], dim=1)


def per_episode_gradients(
    scores: torch.Tensor, weights: torch.Tensor, lengths: Sequence[int]
) -> np.ndarray:
    """``Σ_t w_t·∇log π(a_t|s_t)`` de cada episodio: ``(N, P)``.

    Args:
        scores: ``(M, P)``, de :func:`per_step_scores`.
        weights: ``(M,)``, el peso de cada paso (``G_t``, ``G_t − b``...).
        lengths: los pasos de cada episodio (suman ``M``).
    """
    episode = torch.repeat_interleave(
        torch.arange(len(lengths)), torch.as_tensor(list(lengths))
    )
    weighted = weights.detach().to(scores.dtype)[:, None] * scores
    out = torch.zeros(len(lengths), scores.shape[1], dtype=scores.dtype)
    return out.index_add_(0, episode, weighted).numpy()


# ---------------------------------------------------------------------------
# El orden: primero la ventaja, después el ajuste de V
# ---------------------------------------------------------------------------


class ContextualCoin:
    """Un problema de un paso con estado continuo, para ajustar ``V(s)`` a mano.

    El estado es ``s = 2u² − 1`` con ``u ~ U(0, 1)``: está en ``[−1, 1]``, más
    a menudo cerca de −1 que de 1. La política elige ``a ∈ {0, 1}`` con
    ``π(1|s) = σ(θ₀ + θ₁·s)``; la recompensa es ``2 + s·(2a − 1)`` más un ruido
    normal de desviación ``noise`` (el 2 es un pedestal). El gradiente exacto se
    calcula por cuadratura. ``V(s)`` se ajusta por mínimos cuadrados con ``k``
    tramos (:func:`bin_features`; ``k`` mide lo flexible que es).
    """

    def __init__(self, theta=(0.3, -0.5), noise: float = 0.5):
        self.theta = np.asarray(theta, dtype=float)
        self.noise = noise

    def prob_one(self, states: np.ndarray) -> np.ndarray:
        """``π(1|s)``."""
        return 1.0 / (1.0 + np.exp(-(self.theta[0] + self.theta[1] * states)))

    def states(self, u: np.ndarray) -> np.ndarray:
        """El estado que corresponde a cada uniforme ``u``."""
        return 2 * u**2 - 1

    def _gradient_terms(self, n_points: int = 200_000):
        """Estados de la cuadratura y su término ``π₁(1 − π₁)·2s·(1, s)``."""
        s = self.states((np.arange(n_points) + 0.5) / n_points)
        p = self.prob_one(s)
        weight = p * (1 - p) * 2 * s  # r̄(s, 1) − r̄(s, 0) = 2s
        return s, weight[:, None] * np.stack([np.ones_like(s), s], -1)

    def exact_gradient(self) -> np.ndarray:
        """``∇J = E_s[Σ_a ∇π(a|s)·r̄(s, a)]``, por cuadratura, ``(2,)``."""
        return self._gradient_terms()[1].mean(axis=0)

    def fit_first_expected_gradient(self, n_features: int, batch_size: int):
        """Lo que estima en media la ventaja con ``V`` ajustada al mismo lote.

        Con tramos, ``V(s_i)`` es la media de los ``n`` retornos del tramo de
        ``i``, el suyo incluido: su ventaja es ``(n − 1)/n`` la de la media de
        los demás (la identidad de GRPO y RLOO), y ``n − 1 ~ Bin(N − 1, p_b)``.
        En media, el tramo ``b`` aporta su parte de ``∇J`` por
        ``1 − (1 − (1 − p_b)^N)/(N·p_b)``.
        """
        s, terms = self._gradient_terms()
        bins = bin_features(s, n_features).argmax(axis=-1)
        total = np.zeros(2)
        for b in range(n_features):
            inside = bins == b
            p_b = inside.mean()
            if p_b == 0:
                continue
            shrink = 1 - (1 - (1 - p_b) ** batch_size) / (batch_size * p_b)
            total += shrink * terms[inside].sum(axis=0) / len(s)
        return total

    def batches(self, n_batches: int, batch_size: int, rng: np.random.Generator):
        """``(states, actions, rewards, scores)`` de ``n_batches`` lotes.

        ``scores`` es ``∇_θ log π(a|s) = (a − π₁)·(1, s)``, de forma
        ``(n_batches, batch_size, 2)``; lo demás, ``(n_batches, batch_size)``.
        """
        states = self.states(rng.random((n_batches, batch_size)))
        p = self.prob_one(states)
        actions = (rng.random(states.shape) < p).astype(float)
        noise = self.noise * rng.standard_normal(states.shape)
        rewards = 2 + states * (2 * actions - 1) + noise
        scores = (actions - p)[..., None] * np.stack([np.ones_like(states), states], -1)
        return states, actions, rewards, scores


def state_baselines(
    problem: ContextualCoin, states: np.ndarray
) -> dict[str, np.ndarray]:
    """``V(s)`` y la línea base de menor varianza ``b*(s)`` de ``problem``, exactas.

    Con ``p = π(1|s)`` y ``r̄(s, a) = 2 + s·(2a − 1)``:

    * ``V(s) = p·r̄(s, 1) + (1 − p)·r̄(s, 0)``, la recompensa esperada en ``s``;
    * ``b*(s) = E[‖∇log π‖²·R | s] / E[‖∇log π‖² | s]``. Como
      ``∇log π(a|s) = (a − p)·(1, s)``, el factor ``1 + s²`` se va y quedan los
      pesos ``p·(1 − p)²`` (``a = 1``) y ``(1 − p)·p²`` (``a = 0``):
      ``b*(s) = (1 − p)·r̄(s, 1) + p·r̄(s, 0)``. Es ``V(s)`` con los pesos de
      las acciones **cambiados**: pesa más la acción menos probable, la que
      empuja más. Coinciden solo donde ``p = 1/2`` o donde ``s = 0`` (las dos
      acciones pagan lo mismo).
    """
    p = problem.prob_one(states)
    r1, r0 = 2 + states, 2 - states
    return {"V(s)": p * r1 + (1 - p) * r0, "b*(s)": (1 - p) * r1 + p * r0}


def state_baseline_variances(
    problem: ContextualCoin, n_points: int = 200_000
) -> dict[str, float]:
    """Varianza total exacta de la estimación por muestra ``(R − b(s))·∇log π``.

    Para ``b = 0``, ``V(s)`` y ``b*(s)`` (:func:`state_baselines`), por
    cuadratura en ``s``: ``E‖ĝ‖² − ‖∇J‖²``, con
    ``E‖ĝ‖² = E_s[(1 + s²)·Σ_a π(a|s)·(a − p)²·((r̄(s, a) − b(s))² + ruido²)]``.
    """
    s = problem.states((np.arange(n_points) + 0.5) / n_points)
    p = problem.prob_one(s)
    r1, r0 = 2 + s, 2 - s
    gradient = problem.exact_gradient()
    noise = problem.noise**2
    out = {}
    for label, b in {"sin línea base": 0 * s, **state_baselines(problem, s)}.items():
        second = (1 + s**2) * (
            p * (1 - p) ** 2 * ((r1 - b) ** 2 + noise)
            + (1 - p) * p**2 * ((r0 - b) ** 2 + noise)
        )
        out[label] = float(second.mean() - gradient @ gradient)
    return out


def bin_features(states: np.ndarray, n_features: int) -> np.ndarray:
    """Un indicador por tramo: ``[−1, 1]`` en ``n_features`` tramos iguales.

    Con estos rasgos, el ajuste por mínimos cuadrados da a cada estado la media
    de los retornos de su tramo (0 si el tramo no tiene ninguno).
    """
    bins = np.clip(((states + 1) / 2 * n_features).astype(int), 0, n_features - 1)
    return np.eye(n_features)[bins]


def fitted_values(
    fit_states: np.ndarray,
    fit_returns: np.ndarray,
    states: np.ndarray,
    n_features: int,
) -> np.ndarray:
    """``V(s)`` ajustada por mínimos cuadrados en cada lote y evaluada en ``states``.

    ``fit_*`` y ``states`` son ``(lotes, N)``: cada lote tiene su propio ajuste.
    """
    x_fit = bin_features(fit_states, n_features)
    coefficients = np.linalg.pinv(x_fit) @ fit_returns[..., None]
    return (bin_features(states, n_features) @ coefficients)[..., 0]


def fit_order_gradients(
    problem: ContextualCoin,
    n_features: int,
    batch_size: int,
    n_batches: int,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """La estimación de ``∇J`` de cada lote con ``V`` ajustada antes o después.

    * ``"V del lote anterior"``: ``V`` ajustada a otro lote independiente (lo
      que hay cuando la ventaja se calcula **antes** de ajustar ``V`` con el lote
      nuevo): una línea base de verdad, sin sesgo.
    * ``"V ajustada a este lote"``: ``V`` ajustada primero a los mismos
      retornos con que después se calcula la ventaja. ``V(s_i)`` depende de
      ``R_i`` y por tanto de ``a_i``: la ventaja de cada muestra encoge un
      factor ``1 − h_ii`` (su influencia en el ajuste), en media ``1 − k/N``.

    Returns:
        ``{nombre: (n_batches, 2)}``, una estimación por lote.
    """
    states, _, rewards, scores = problem.batches(n_batches, batch_size, rng)
    other_states, _, other_rewards, _ = problem.batches(n_batches, batch_size, rng)
    baselines_by_order = {
        "V del lote anterior": fitted_values(
            other_states, other_rewards, states, n_features
        ),
        "V ajustada a este lote": fitted_values(states, rewards, states, n_features),
    }
    return {
        label: ((rewards - values)[..., None] * scores).mean(axis=1)
        for label, values in baselines_by_order.items()
    }
