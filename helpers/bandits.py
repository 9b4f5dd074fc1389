"""Módulo 01 · Bandidos: implementaciones de referencia.

Dos niveles, como en el cuaderno:

* funciones para **un** bandido (las de los ejercicios): ``incremental_mean``,
  ``epsilon_greedy``, ``ucb_action``, ``softmax``, ``gradient_bandit_update``;
* versiones **vectorizadas** que juegan miles de bandidos a la vez con NumPy,
  para reproducir las figuras del banco de pruebas de 10 brazos en segundos
  (``testbed_step``, el paso de ε-greedy en todas las ejecuciones, es también
  un ejercicio).

Y el bandido de las estrategias para resolver 17 × 24, con su verificador.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# ---------------------------------------------------------------------------
# Un solo bandido
# ---------------------------------------------------------------------------


def incremental_mean(estimate: float, reward: float, count: int) -> float:
    """Actualiza una media con una recompensa nueva, sin guardar el historial.

    ``Q_{n+1} = Q_n + (R_n - Q_n) / n``.

    Args:
        estimate: la media de las ``count - 1`` recompensas anteriores (``Q_n``).
        reward: la recompensa nueva (``R_n``).
        count: cuántas recompensas hay contando la nueva (``n ≥ 1``).

    Returns:
        La media de las ``count`` recompensas (``Q_{n+1}``).
    """
    return estimate + (reward - estimate) / count


def argmax_random_tie(values: np.ndarray, rng: np.random.Generator) -> int:
    """Índice de un máximo de ``values``, elegido al azar si hay empates."""
    values = np.asarray(values)
    best = np.flatnonzero(values == values.max())
    return int(rng.choice(best))


def epsilon_greedy(
    q_values: np.ndarray, epsilon: float, rng: np.random.Generator
) -> int:
    """Elige un brazo con la regla ε-greedy.

    Con probabilidad ``epsilon`` explora: un brazo cualquiera, uniforme entre
    todos (el mejor incluido). Si no, explota: un brazo de valor máximo, al
    azar entre los empatados.

    Args:
        q_values: estimaciones ``Q(a)``, forma ``(k,)``.
        epsilon: probabilidad de explorar, en ``[0, 1]``.
        rng: el generador de números aleatorios que hay que usar.

    Returns:
        El índice del brazo elegido.
    """
    q_values = np.asarray(q_values, dtype=float)
    if rng.random() < epsilon:
        return int(rng.integers(len(q_values)))
    return argmax_random_tie(q_values, rng)


def ucb_action(q_values: np.ndarray, counts: np.ndarray, t: int, c: float) -> int:
    """Elige un brazo con UCB: ``argmax_a Q(a) + c·sqrt(ln t / N(a))``.

    Un brazo que nunca se ha probado (``N(a) = 0``) se considera maximizador:
    si hay varios, se devuelve el de menor índice.

    Args:
        q_values: estimaciones ``Q(a)``, forma ``(k,)``.
        counts: veces que se ha tirado de cada brazo ``N(a)``, forma ``(k,)``.
        t: el paso actual, empezando en 1.
        c: cuánto pesa la incertidumbre (``c > 0``).

    Returns:
        El índice del brazo elegido.
    """
    q_values = np.asarray(q_values, dtype=float)
    counts = np.asarray(counts, dtype=float)
    untried = np.flatnonzero(counts == 0)
    if untried.size:
        return int(untried[0])
    bonus = c * np.sqrt(np.log(t) / counts)
    return int(np.argmax(q_values + bonus))


def softmax(preferences: np.ndarray) -> np.ndarray:
    """Probabilidades ``π(a) = exp(H(a)) / Σ_b exp(H(b))``, sin desbordar.

    Restar el máximo no cambia el resultado (se cancela arriba y abajo) y evita
    que ``exp`` dé ``inf`` con preferencias grandes.
    """
    preferences = np.asarray(preferences, dtype=float)
    z = np.exp(preferences - preferences.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def gradient_bandit_update(
    preferences: np.ndarray,
    action: int,
    reward: float,
    baseline: float,
    alpha: float,
) -> np.ndarray:
    """Un paso del bandido de gradiente: ascenso por el gradiente de E[R].

    ``H(a) ← H(a) + α (R − b) (1{a = A} − π(a))`` para todos los brazos ``a``.

    Args:
        preferences: preferencias ``H``, forma ``(k,)``. No se modifican.
        action: el brazo que se tiró, ``A``.
        reward: la recompensa obtenida, ``R``.
        ``baseline``: ``b``, la línea base (p. ej. la media de las recompensas
            pasadas).
        alpha: ``α``, la tasa de aprendizaje.

    Returns:
        Las preferencias nuevas, forma ``(k,)``.
    """
    preferences = np.asarray(preferences, dtype=float)
    one_hot = np.zeros_like(preferences)
    one_hot[action] = 1.0
    return preferences + alpha * (reward - baseline) * (one_hot - softmax(preferences))


def gradient_bandit_train(
    pull: Callable[[int, np.random.Generator], float],
    k: int,
    n_steps: int,
    alpha: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[int]]:
    """El bucle del bandido de gradiente en **un** bandido, paso a paso.

    Empieza con ``H = 0`` y, en cada paso ``t = 1, …, n_steps``:

    1. ``π = softmax(H)``;
    2. ``A = rng.choice(k, p=π)`` (el único número aleatorio de la elección);
    3. ``R = pull(A, rng)``;
    4. la línea base es la media de las recompensas **anteriores**,
       ``R̄_t``; en el primer paso no hay ninguna y se usa ``R̄_1 = R_1``;
    5. ``H ← gradient_bandit_update(H, A, R, R̄_t, α)``;
    6. la media incorpora ``R``: ``R̄_{t+1} = incremental_mean(R̄_t, R, t)``.

    Args:
        pull: la recompensa de tirar de un brazo, ``pull(arm, rng)``.
        k: número de brazos.
        n_steps: pasos.
        alpha: la tasa de aprendizaje.
        rng: el generador (lo usan la elección y ``pull``).

    Returns:
        ``(H, actions)``: las preferencias finales ``(k,)`` y la lista de brazos
        elegidos.
    """
    preferences = np.zeros(k)
    mean_reward = 0.0
    actions: list[int] = []
    for t in range(1, n_steps + 1):
        pi = softmax(preferences)
        action = int(rng.choice(k, p=pi))
        reward = pull(action, rng)
        baseline = reward if t == 1 else mean_reward
        preferences = gradient_bandit_update(
            preferences, action, reward, baseline, alpha
        )
        mean_reward = incremental_mean(mean_reward, reward, t)
        actions.append(action)
    return preferences, actions


# ---------------------------------------------------------------------------
# El banco de pruebas de 10 brazos, vectorizado
# ---------------------------------------------------------------------------


@dataclass
class BanditRuns:
    """Lo que pasó en ``n_runs`` bandidos jugados a la vez durante ``n_steps``.

    Attributes:
        rewards: recompensa de cada paso y ejecución, forma ``(n_steps, n_runs)``.
        optimal: si la acción era la óptima, misma forma, booleano.
        gaps: lo que se perdió en cada paso frente al mejor brazo,
            ``max_a q*(a) − q*(A_t)`` (0 si la acción era la óptima), misma forma.
        policy: en los métodos que aprenden una política, la de cada ejecución
            al terminar, forma ``(n_runs, k)``; ``None`` en los demás.
    """

    rewards: np.ndarray
    optimal: np.ndarray
    gaps: np.ndarray
    policy: np.ndarray | None = None

    def mean_reward(self) -> np.ndarray:
        """Recompensa media por paso (promedio sobre ejecuciones), ``(n_steps,)``."""
        return self.rewards.mean(axis=1)

    def optimal_fraction(self) -> np.ndarray:
        """Fracción de ejecuciones que eligieron el brazo óptimo, ``(n_steps,)``."""
        return self.optimal.mean(axis=1)

    def cumulative_regret(self) -> np.ndarray:
        """Arrepentimiento acumulado medio, ``(n_steps,)``: en el paso ``T``,
        ``Σ_{t ≤ T} (max_a q*(a) − q*(A_t))`` promediado sobre las ejecuciones.

        Usa los valores verdaderos ``q*``, no las recompensas con ruido: es lo
        que se pierde en esperanza (el *pseudo-regret* de la literatura).
        """
        return self.gaps.cumsum(axis=0).mean(axis=1)

    def final_reward(self, last: int = 100) -> float:
        """Recompensa media de los últimos ``last`` pasos (p. ej. 901–1000)."""
        return float(self.rewards[-last:].mean())

    def final_optimal(self, last: int = 100) -> float:
        """Fracción de acciones óptimas en los últimos ``last`` pasos."""
        return float(self.optimal[-last:].mean())


def make_testbed(
    n_runs: int, k: int = 10, mean: float = 0.0, *, rng: np.random.Generator
) -> np.ndarray:
    """Valores verdaderos ``q*(a) ~ N(mean, 1)`` de ``n_runs`` bandidos.

    Returns:
        Un array de forma ``(n_runs, k)``.
    """
    return rng.normal(mean, 1.0, size=(n_runs, k))


def expected_best_arm(k: int = 10, n_samples: int = 1_000_000, seed: int = 0) -> float:
    """``E[max_a q*(a)]`` con ``q* ~ N(0, 1)``: el techo de recompensa media.

    Se calcula por Monte Carlo con ``n_samples`` bandidos (≈ 1,54 con k = 10).
    """
    rng = np.random.default_rng(seed)
    return float(rng.standard_normal((n_samples, k)).max(axis=1).mean())


def _pull(
    q_star: np.ndarray, actions: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Recompensas ``R ~ N(q*(A), 1)`` de cada ejecución, forma ``(n_runs,)``."""
    rows = np.arange(q_star.shape[0])
    return q_star[rows, actions] + rng.standard_normal(q_star.shape[0])


def _argmax_random_tie_rows(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``argmax`` por filas, con desempate al azar entre los máximos.

    Saca un ruido uniforme ``rng.random(values.shape)`` y, en cada fila, elige
    entre los brazos empatados en el máximo el de mayor ruido.
    """
    ties = values == values.max(axis=1, keepdims=True)
    return np.argmax(rng.random(values.shape) * ties, axis=1)


def _epsilon_greedy_rows(
    q: np.ndarray, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """Las acciones ε-greedy de todas las filas de ``q``, forma ``(n_runs,)``.

    Los números aleatorios salen en el orden de :func:`testbed_step`: la moneda
    ``rng.random(n)``, los brazos al azar ``rng.integers(k, size=n)`` y el ruido
    de desempate ``rng.random((n, k))``, todos para todas las filas.
    """
    n_runs, k = q.shape
    explore = rng.random(n_runs) < epsilon
    random_arms = rng.integers(k, size=n_runs)
    greedy_arms = _argmax_random_tie_rows(q, rng)
    return np.where(explore, random_arms, greedy_arms)


def testbed_step(
    q: np.ndarray,
    counts: np.ndarray,
    q_star: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Un paso de ε-greedy con medias muestrales en ``n`` bandidos a la vez.

    Los números aleatorios salen en este orden, cada vez para todas las
    ejecuciones juntas:

    1. ``rng.random(n)``: la ejecución ``i`` explora si su número es ``< epsilon``;
    2. ``rng.integers(k, size=n)``: el brazo de cada ejecución que explora;
    3. ``rng.random((n, k))``: el desempate de las que explotan, que eligen, entre
       los brazos de valor máximo de su fila, el de mayor número;
    4. ``rng.standard_normal(n)``: el ruido de las recompensas,
       ``R_i = q*(i, A_i) + ruido_i``.

    Después, cada ejecución actualiza solo su brazo elegido:
    ``N(i, A_i) += 1`` y ``Q(i, A_i) += (R_i − Q(i, A_i)) / N(i, A_i)``.

    Args:
        q: estimaciones ``Q``, forma ``(n, k)``. No se modifican.
        counts: veces que se eligió cada brazo ``N``, forma ``(n, k)``. No se
            modifican.
        q_star: valores verdaderos ``q*``, forma ``(n, k)``.
        epsilon: probabilidad de explorar.
        rng: el generador de números aleatorios.

    Returns:
        ``(actions, rewards, new_q, new_counts)``: las acciones ``(n,)``
        (enteros), las recompensas ``(n,)`` y las ``Q`` y ``N`` nuevas ``(n, k)``.
    """
    q = np.asarray(q, dtype=float)
    n_runs = q.shape[0]
    rows = np.arange(n_runs)
    actions = _epsilon_greedy_rows(q, epsilon, rng)
    rewards = _pull(np.asarray(q_star, dtype=float), actions, rng)
    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1
    new_q = q.copy()
    new_q[rows, actions] += (rewards - q[rows, actions]) / new_counts[rows, actions]
    return actions, rewards, new_q, new_counts


def play_testbed(
    step: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    q_star: np.ndarray,
    n_steps: int,
    epsilon: float,
    *,
    initial: float = 0.0,
    rng: np.random.Generator,
) -> BanditRuns:
    """Juega ``n_steps`` pasos de ``step`` (como :func:`testbed_step`) en el banco.

    Empieza con ``Q = initial`` y ``N = 0`` en todas las ejecuciones. Con
    ``step=testbed_step`` es :func:`run_epsilon_greedy` con medias muestrales.
    """
    n_runs, k = q_star.shape
    best = q_star.argmax(axis=1)
    q = np.full((n_runs, k), initial, dtype=float)
    counts = np.zeros((n_runs, k))
    rows = np.arange(n_runs)
    rewards = np.empty((n_steps, n_runs))
    optimal = np.empty((n_steps, n_runs), dtype=bool)
    gaps = np.empty((n_steps, n_runs))
    for t in range(n_steps):
        actions, r, q, counts = step(q, counts, q_star, epsilon, rng)
        actions = np.asarray(actions)
        rewards[t], optimal[t] = r, actions == best
        gaps[t] = q_star[rows, best] - q_star[rows, actions]
    return BanditRuns(rewards, optimal, gaps)


def run_epsilon_greedy(
    q_star: np.ndarray,
    n_steps: int,
    epsilon: float,
    *,
    initial: float = 0.0,
    alpha: float | None = None,
    rng: np.random.Generator,
) -> BanditRuns:
    """ε-greedy en todos los bandidos de ``q_star`` a la vez.

    Es :func:`play_testbed` con :func:`testbed_step`, salvo que ``alpha`` pida
    un paso constante en lugar de la media muestral.

    Args:
        q_star: valores verdaderos, forma ``(n_runs, k)``.
        n_steps: pasos por ejecución.
        epsilon: probabilidad de explorar (0 = voraz).
        initial: valor inicial de las estimaciones ``Q_1`` (5 = optimista).
        alpha: tasa de aprendizaje constante; ``None`` usa la media muestral
            (``1/n``).
        rng: generador de números aleatorios.
    """
    if alpha is None:
        return play_testbed(
            testbed_step, q_star, n_steps, epsilon, initial=initial, rng=rng
        )

    def constant_step(q, counts, q_star, epsilon, rng):
        # testbed_step, con Q += α (R − Q) en lugar de la media muestral
        rows = np.arange(q.shape[0])
        actions = _epsilon_greedy_rows(q, epsilon, rng)
        rewards = _pull(q_star, actions, rng)
        counts = counts.copy()
        counts[rows, actions] += 1
        q = q.copy()
        q[rows, actions] += alpha * (rewards - q[rows, actions])
        return actions, rewards, q, counts

    return play_testbed(
        constant_step, q_star, n_steps, epsilon, initial=initial, rng=rng
    )


def run_ucb(
    q_star: np.ndarray, n_steps: int, c: float, *, rng: np.random.Generator
) -> BanditRuns:
    """UCB (con medias muestrales) en todos los bandidos de ``q_star`` a la vez."""
    n_runs, k = q_star.shape
    rows = np.arange(n_runs)
    best = q_star.argmax(axis=1)
    q = np.zeros((n_runs, k))
    counts = np.zeros((n_runs, k))
    rewards = np.empty((n_steps, n_runs))
    optimal = np.empty((n_steps, n_runs), dtype=bool)
    gaps = np.empty((n_steps, n_runs))
    for t in range(n_steps):
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = q + c * np.sqrt(np.log(t + 1) / counts)
        # Brazos sin probar primero (el de menor índice), como en ucb_action.
        scores[counts == 0] = np.inf
        actions = np.argmax(scores, axis=1)
        r = _pull(q_star, actions, rng)
        counts[rows, actions] += 1
        q[rows, actions] += (r - q[rows, actions]) / counts[rows, actions]
        rewards[t], optimal[t] = r, actions == best
        gaps[t] = q_star[rows, best] - q_star[rows, actions]
    return BanditRuns(rewards, optimal, gaps)


def run_gradient_bandit(
    q_star: np.ndarray,
    n_steps: int,
    alpha: float,
    *,
    baseline: bool = True,
    rng: np.random.Generator,
) -> BanditRuns:
    """El bandido de gradiente (softmax de preferencias) en todos a la vez.

    La línea base es la media de las recompensas anteriores al paso ``t``
    (``R̄_1 = R_1``), como en Sutton y Barto (2018, §2.8). Con
    ``baseline=False`` se usa ``b = 0``.
    """
    n_runs, k = q_star.shape
    rows = np.arange(n_runs)
    best = q_star.argmax(axis=1)
    preferences = np.zeros((n_runs, k))
    mean_reward = np.zeros(n_runs)
    rewards = np.empty((n_steps, n_runs))
    optimal = np.empty((n_steps, n_runs), dtype=bool)
    gaps = np.empty((n_steps, n_runs))
    for t in range(n_steps):
        pi = softmax(preferences)
        # Muestrear de π por filas: primera posición donde la acumulada supera u.
        u = rng.random((n_runs, 1))
        actions = np.minimum((u > pi.cumsum(axis=1)).sum(axis=1), k - 1)
        r = _pull(q_star, actions, rng)
        if baseline:
            b = r if t == 0 else mean_reward
        else:
            b = np.zeros(n_runs)
        one_hot = np.zeros((n_runs, k))
        one_hot[rows, actions] = 1.0
        preferences += alpha * (r - b)[:, None] * (one_hot - pi)
        mean_reward += (r - mean_reward) / (t + 1)
        rewards[t], optimal[t] = r, actions == best
        gaps[t] = q_star[rows, best] - q_star[rows, actions]
    return BanditRuns(rewards, optimal, gaps, softmax(preferences))


def run_bernoulli(
    success: np.ndarray,
    n_runs: int,
    n_steps: int,
    choose: Callable[[np.ndarray, np.ndarray, int, np.random.Generator], np.ndarray],
    *,
    rng: np.random.Generator,
) -> BanditRuns:
    """Un bandido de recompensas 0/1 (un verificador), ``n_runs`` partidas a la vez.

    El brazo ``a`` paga 1 con probabilidad ``success[a]``. En cada paso
    ``t = 1, 2, …``, ``choose(wins, pulls, t, rng)`` recibe los aciertos y las
    tiradas de cada brazo en cada partida, forma ``(n_runs, k)``, y devuelve el
    brazo de cada partida, ``(n_runs,)``.
    """
    success = np.asarray(success, dtype=float)
    k = success.size
    rows = np.arange(n_runs)
    best = int(success.argmax())
    wins, pulls = np.zeros((n_runs, k)), np.zeros((n_runs, k))
    rewards = np.empty((n_steps, n_runs))
    optimal = np.empty((n_steps, n_runs), dtype=bool)
    gaps = np.empty((n_steps, n_runs))
    for t in range(n_steps):
        arms = np.asarray(choose(wins, pulls, t + 1, rng))
        r = (rng.random(n_runs) < success[arms]).astype(float)
        wins[rows, arms] += r
        pulls[rows, arms] += 1
        rewards[t], optimal[t] = r, arms == best
        gaps[t] = success[best] - success[arms]
    return BanditRuns(rewards, optimal, gaps)


def run_nonstationary(
    n_runs: int,
    n_steps: int,
    epsilon: float = 0.1,
    *,
    alphas: Sequence[float | None] = (None, 0.1),
    walk: float = 0.01,
    k: int = 10,
    rng: np.random.Generator,
) -> list[BanditRuns]:
    """ε-greedy en ``n_runs`` bandidos cuyos ``q*`` se mueven (ejercicio 2.5 de
    Sutton y Barto, 2018), con cada tasa de aprendizaje de ``alphas``.

    Todos los ``q*(a)`` empiezan en 0 y, **después** de cada paso, cada uno da
    un paso de paseo aleatorio ``N(0, walk²)``. Los métodos juegan los mismos
    bandidos (los mismos ``q*`` en cada paso, con su propio ruido y sus propias
    acciones). Las estimaciones empiezan en ``Q = 0`` y se actualizan con la
    media muestral (``None``) o con un paso constante ``α``. La acción óptima y
    lo perdido (``gaps``) se miden con los ``q*`` del momento.

    Returns:
        Un :class:`BanditRuns` por elemento de ``alphas``, en el mismo orden.
    """
    n_methods = len(alphas)
    constant = np.array([a is not None for a in alphas])[:, None]
    alpha = np.array([0.0 if a is None else a for a in alphas])[:, None]
    q_star = np.zeros((n_runs, k))
    q = np.zeros((n_methods * n_runs, k))
    counts = np.zeros((n_methods * n_runs, k))
    rows = np.arange(n_methods * n_runs)
    run_rows = np.tile(np.arange(n_runs), n_methods)
    rewards = np.empty((n_steps, n_methods * n_runs))
    optimal = np.empty((n_steps, n_methods * n_runs), dtype=bool)
    gaps = np.empty((n_steps, n_methods * n_runs))
    for t in range(n_steps):
        actions = _epsilon_greedy_rows(q, epsilon, rng)
        true_values = q_star[run_rows, actions]
        r = true_values + rng.standard_normal(rows.size)
        counts[rows, actions] += 1
        sample_step = 1.0 / counts[rows, actions].reshape(n_methods, -1)
        step = np.where(constant, alpha, sample_step).ravel()
        q[rows, actions] += step * (r - q[rows, actions])
        best = q_star.max(axis=1)[run_rows]
        rewards[t], optimal[t], gaps[t] = r, true_values == best, best - true_values
        q_star += walk * rng.standard_normal(q_star.shape)
    return [
        BanditRuns(rewards[:, m], optimal[:, m], gaps[:, m])
        for m in np.split(np.arange(n_methods * n_runs), n_methods)
    ]


# ---------------------------------------------------------------------------
# El bandido de las estrategias: ¿cómo calculo 17 × 24?
# ---------------------------------------------------------------------------

QUESTION = "¿Cuánto es 17 × 24?"
ANSWER = 17 * 24


@dataclass(frozen=True)
class Step:
    """Un paso de una estrategia: lo que sale bien, con qué probabilidad, y el fallo.

    Attributes:
        right: el resultado correcto del paso (un número).
        p_right: la probabilidad de acertarlo.
        slips: fallos posibles ``(valor, probabilidad)``; las probabilidades de
            ``right`` y de ``slips`` suman 1.
    """

    right: int
    p_right: float
    slips: tuple[tuple[int, float], ...]

    def sample(self, rng: np.random.Generator) -> int:
        """Un resultado al azar de este paso."""
        u = rng.random()
        if u < self.p_right:
            return self.right
        u -= self.p_right
        for value, p in self.slips:
            if u < p:
                return value
            u -= p
        return self.slips[-1][0]  # por redondeo de las probabilidades


def _working_decompose(rng: np.random.Generator) -> str:
    # La bifurcación del texto del curso: tras «340 +», «68» con 0,82 y «58»
    # con 0,07 (el resto, otros despistes).
    tens = Step(340, 0.95, ((320, 0.05),)).sample(rng)
    units = Step(68, 0.82, ((58, 0.07), (78, 0.06), (64, 0.05))).sample(rng)
    # Un fallo de acarreo al sumar: cien de más.
    total = Step(tens + units, 0.98, ((tens + units + 100, 0.02),)).sample(rng)
    return f"17 × 24 = 17 × 20 + 17 × 4 = {tens} + {units} = {total}"


def _working_columns(rng: np.random.Generator) -> str:
    units = Step(68, 0.9, ((58, 0.1),)).sample(rng)
    tens = Step(34, 0.95, ((24, 0.05),)).sample(rng)
    # El fallo típico al sumar en columnas: olvidar desplazar las decenas.
    shifted = Step(tens * 10, 0.85, ((tens, 0.15),)).sample(rng)
    return (
        f"17 × 4 = {units}; 17 × 2 = {tens} → {shifted}; {units} + {shifted} = "
        f"{units + shifted}"
    )


def _working_estimate(rng: np.random.Generator) -> str:
    if rng.random() < 0.4:  # se queda en la estimación
        return "17 × 24 ≈ 17 × 25 ≈ 400"
    product = Step(425, 0.9, ((435, 0.1),)).sample(rng)
    result = Step(product - 17, 0.8, ((product - 7, 0.2),)).sample(rng)
    return f"17 × 24 = 17 × 25 − 17 = {product} − 17 = {result}"


def _working_repeated_sum(rng: np.random.Generator) -> str:
    total = 17
    for _ in range(23):  # 23 sumas, cada una con un 3 % de despiste
        total += Step(17, 0.97, ((27, 0.03),)).sample(rng)
    return f"17 + 17 + … + 17 (24 veces) = {total}"


def _working_guess(rng: np.random.Generator) -> str:
    return f"17 × 24 ≈ {int(rng.choice(np.arange(380, 422, 2)))}"


STRATEGIES: dict[str, tuple[str, object]] = {
    "descomponer": ("17 × 20 + 17 × 4", _working_decompose),
    "columnas": ("el algoritmo escolar, cifra a cifra", _working_columns),
    "estimar": ("17 × 25 y corregir", _working_estimate),
    "sumar": ("sumar 17 veinticuatro veces", _working_repeated_sum),
    "adivinar": ("decir un número par cercano, al tuntún", _working_guess),
}

# Probabilidad exacta de acertar con cada estrategia (producto de sus pasos).
SUCCESS_PROBABILITY: dict[str, float] = {
    "descomponer": 0.95 * 0.82 * 0.98,
    "columnas": 0.9 * 0.95 * 0.85,
    "estimar": 0.6 * 0.9 * 0.8,
    "sumar": 0.97**23,
    "adivinar": 1 / 21,
}


def final_answer(text: str) -> int | None:
    """El último número entero que aparece en ``text`` (o ``None``)."""
    numbers = re.findall(r"\d+", text)
    return int(numbers[-1]) if numbers else None


def verify(text: str, answer: int = ANSWER) -> int:
    """El verificador: 1 si la respuesta final es ``answer`` (408), si no 0."""
    return int(final_answer(text) == answer)


class StrategyBandit:
    """Un bandido de Bernoulli cuyos brazos son estrategias para 17 × 24.

    Tirar de un brazo es resolver la cuenta con esa estrategia: se obtiene el
    desarrollo (texto) y el verificador pone un 1 o un 0.
    """

    def __init__(self) -> None:
        self.names: list[str] = list(STRATEGIES)
        self.q_star = np.array([SUCCESS_PROBABILITY[n] for n in self.names])

    @property
    def k(self) -> int:
        """Número de brazos."""
        return len(self.names)

    def solve(self, arm: int, rng: np.random.Generator) -> str:
        """El desarrollo que escribe la estrategia ``arm``."""
        _, working = STRATEGIES[self.names[arm]]
        return working(rng)  # type: ignore[operator]

    def pull(self, arm: int, rng: np.random.Generator) -> tuple[int, str]:
        """Tira del brazo ``arm``: devuelve ``(recompensa, desarrollo)``."""
        text = self.solve(arm, rng)
        return verify(text), text
