"""Comprobaciones del módulo 01 · Bandidos."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from helpers import bandits
from helpers.checks import as_int, call, check_cases, exercise, fail
from helpers.formatting import number, percent

MODULE = "01_bandidos"


def _numbers(values: Iterable[float], decimals: int) -> str:
    """Varias cifras con coma decimal, separadas por «;»: «[0,33; 0; 0,67]»."""
    return "[" + "; ".join(number(v, decimals) for v in values) + "]"


# ---------------------------------------------------------------------------
# Ejercicio 1 · media incremental
# ---------------------------------------------------------------------------

INCREMENTAL_MEAN_CASES = [
    (2.0, 5.0, 4),
    (0.0, 1.0, 1),
    (3.0, -1.0, 2),
    (1.5, 1.5, 7),
    # Con decimales que no acaban: un redondeo no pasa desapercibido.
    (1.0, 2.0, 3),
]


@exercise(MODULE, "incremental_mean", "Media incremental")
def check_incremental_mean(
    incremental_mean: Callable[..., Any],
    cases: Iterable[tuple[float, float, int]] = INCREMENTAL_MEAN_CASES,
) -> None:
    """Comprueba ``incremental_mean(estimate, reward, count)``."""
    check_cases(
        incremental_mean,
        "incremental_mean",
        cases,
        bandits.incremental_mean,
        [
            (
                lambda q, r, n: r,
                "¿Olvidaste dividir por count? Así la estimación "
                "es solo la última recompensa.",
            ),
            (
                lambda q, r, n: q + (r - q) / (n - 1),
                "¿Dividiste entre count − 1? count ya cuenta la recompensa nueva.",
            ),
            (
                lambda q, r, n: q + (r - q) / (n + 1),
                "¿Dividiste entre count + 1? count ya cuenta la recompensa nueva.",
            ),
            (
                lambda q, r, n: q - (r - q) / n,
                "¿El signo? La estimación debe "
                "moverse hacia la recompensa: Q + (R − Q)/n.",
            ),
            (
                lambda q, r, n: (q + r) / 2,
                "Eso es la media entre la estimación y "
                "la recompensa: la recompensa nueva pesa 1/count, no 1/2.",
            ),
            (
                lambda q, r, n: q + (r - q) * n,
                "¿Multiplicaste por count en vez de dividir?",
            ),
        ],
    )
    # Aplicada una y otra vez tiene que dar la media de todas las recompensas.
    rewards = [1.0, 3.0, 5.0, 7.0, -2.0]
    estimate = 0.0
    for n, reward in enumerate(rewards, start=1):
        estimate = float(np.asarray(incremental_mean(estimate, reward, n)))
    if not np.isclose(estimate, np.mean(rewards)):
        fail(
            f"Al encadenar incremental_mean sobre {_numbers(rewards, 0)} sale "
            f"{number(estimate, 4)}, pero la media es {number(np.mean(rewards), 4)}."
        )


# ---------------------------------------------------------------------------
# Ejercicio 2 · ε-greedy con desempate al azar
# ---------------------------------------------------------------------------


def _frequencies(
    epsilon_greedy: Callable[..., Any],
    q_values: list[float],
    epsilon: float,
    n: int,
    seed: int,
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    k = len(q_values)
    counts = np.zeros(k)
    q = np.array(q_values, dtype=float)
    for step in range(n):
        # La entrada se vigila (¿la modifica?) en las primeras llamadas; después,
        # miles de copias solo harían lenta la comprobación.
        choose = (
            call(epsilon_greedy, "epsilon_greedy", q, epsilon, rng)
            if step < 20
            else epsilon_greedy(q, epsilon, rng)
        )
        action = as_int(choose, "La acción elegida")
        if not 0 <= action < k:
            fail(
                f"epsilon_greedy devolvió {action}, que no es un brazo válido (0 a "
                f"{k - 1}). ¿Devolviste el valor Q en lugar del índice del brazo?"
            )
        counts[action] += 1
    return counts / n


@exercise(MODULE, "epsilon_greedy", "ε-greedy con desempate al azar")
def check_epsilon_greedy(epsilon_greedy: Callable[..., Any], seed: int = 0) -> None:
    """Comprueba ``epsilon_greedy(q_values, epsilon, rng)`` con frecuencias."""
    # 1. Usa el rng que recibe: mismas semillas, mismas elecciones.
    q = np.array([1.0, 1.0, 1.0, 0.0])
    runs = []
    for _ in range(2):
        rng = np.random.default_rng(seed)
        runs.append(
            [
                as_int(call(epsilon_greedy, "epsilon_greedy", q, 0.5, rng), "La acción")
                for _ in range(60)
            ]
        )
    if runs[0] != runs[1]:
        fail(
            "Con el mismo rng (misma semilla) tu función eligió brazos distintos. "
            "¿Usaste np.random o random en lugar del rng que recibes como argumento?"
        )
    # 2. Sin exploración elige el mejor brazo, no el peor.
    greedy = _frequencies(epsilon_greedy, [1.0, 5.0, 2.0], 0.0, 200, seed)
    if greedy.max() < 0.6:
        fail(
            "Con ε = 0 no debías explorar nunca, pero elegiste brazos al azar "
            f"(frecuencias: {_numbers(greedy, 2)}). ¿Comparas al revés? Explora "
            "solo cuando rng.random() < ε."
        )
    if greedy[0] == 1.0 or greedy[2] == 1.0:
        fail(
            "Con ε = 0 y Q = [1, 5, 2] debías elegir siempre el brazo 1 y elegiste "
            f"otro. ¿Usaste argmin en vez de argmax? Frecuencias: "
            f"{_numbers(greedy, 2)}."
        )
    if greedy[1] != 1.0:
        fail(
            f"Con ε = 0 y Q = [1, 5, 2] debías elegir siempre el brazo 1; "
            f"frecuencias: {_numbers(greedy, 2)}."
        )
    # 3. Los empates se deshacen al azar.
    ties = _frequencies(epsilon_greedy, [3.0, 1.0, 3.0, 3.0], 0.0, 3000, seed + 1)
    if ties[0] == 1.0:
        fail(
            "Con ε = 0 y Q = [3, 1, 3, 3] elegiste siempre el brazo 0. np.argmax "
            "devuelve siempre el primer máximo: desempata al azar entre los brazos "
            "empatados (por ejemplo con np.flatnonzero(q == q.max()) y rng.choice)."
        )
    if ties[1] > 0 or np.abs(ties[[0, 2, 3]] - 1 / 3).max() > 0.05:
        fail(
            "Con ε = 0 y Q = [3, 1, 3, 3] los brazos 0, 2 y 3 deberían salir cada uno "
            f"≈ 1/3 de las veces y el 1 nunca. Frecuencias: {_numbers(ties, 3)}."
        )
    # 4. Con ε = 1 explora siempre, entre TODOS los brazos.
    explore = _frequencies(
        epsilon_greedy, [0.0, 10.0, 0.0, 0.0, 0.0], 1.0, 5000, seed + 2
    )
    if explore[1] > 0.9:
        fail(
            "Con ε = 1 debías explorar siempre, pero casi siempre elegiste el mejor "
            "brazo. ¿Comparas al revés? Explora cuando rng.random() < ε."
        )
    if explore[1] < 0.05:
        fail(
            "Con ε = 1 nunca elegiste el mejor brazo. Al explorar, elige uniforme "
            "entre todos los brazos, también el mejor."
        )
    if np.abs(explore - 0.2).max() > 0.03:
        fail(
            "Con ε = 1 y 5 brazos cada brazo debería salir ≈ 20 % de las veces. "
            f"Frecuencias: {_numbers(explore, 3)}."
        )
    # 5. Con ε = 0,2 y 4 brazos: P(mejor) = 1 − ε + ε/k = 0,85.
    mixed = _frequencies(epsilon_greedy, [0.0, 0.0, 1.0, 0.0], 0.2, 10_000, seed + 3)
    if abs(mixed[2] - 0.4) < 0.03:
        fail(
            "Con ε = 0,2 elegiste el mejor brazo ≈ 40 % de las veces: exploras con "
            "probabilidad 1 − ε. Explora cuando rng.random() < ε."
        )
    if abs(mixed[2] - 0.85) > 0.02:
        fail(
            "Con ε = 0,2 y 4 brazos, el mejor debería salir 1 − ε + ε/4 = 85 % de "
            f"las veces; salió {percent(mixed[2], 1)}."
        )


# ---------------------------------------------------------------------------
# Ejercicio 3 · UCB, con los brazos sin probar primero
# ---------------------------------------------------------------------------

UCB_CASES = [
    (np.array([0.9, 0.5, 0.1]), np.array([3, 2, 0]), 6, 2.0),
    (np.array([0.2, 0.8, 0.4, 0.1]), np.array([5, 0, 0, 4]), 10, 1.0),
    (np.array([1.0, 0.8, 0.0]), np.array([40, 2, 30]), 73, 1.0),
    (np.array([1.0, 0.7, 0.2]), np.array([10, 10, 2]), 23, 0.5),
    (np.array([0.5, 0.6, 0.45]), np.array([20, 30, 3]), 54, 0.3),
    (np.array([2.0, 1.2, 1.0]), np.array([5, 6, 9]), 21, 2.0),
    (np.array([1.0, 0.95]), np.array([2, 50]), 53, 1.0),
    (np.array([0.2, 0.9, 0.5]), np.array([3, 9, 14]), 27, 1.0),
    (np.array([0.7, 0.5, 0.5]), np.array([20, 23, 7]), 51, 0.5),
    (np.array([0.0, 0.0, 0.0]), np.array([0, 0, 0]), 1, 2.0),
    # Estos tres separan las variantes del bono que coinciden en los demás: otra
    # base del logaritmo, ln(t + 1) y la suma de counts en lugar de t.
    (np.array([0.0, 0.4, 0.6]), np.array([2, 3, 4]), 10, 2.0),
    (np.array([0.4, 0.8, 0.1]), np.array([4, 7, 3]), 15, 2.0),
    (np.array([0.2, 0.8, 0.4]), np.array([1, 11, 7]), 20, 0.5),
]


def _ucb_formula(bonus: Callable[[np.ndarray, int, float], np.ndarray]) -> Callable:
    """Un UCB que prueba primero los brazos nuevos pero usa otro bono."""

    def choose(q: np.ndarray, counts: np.ndarray, t: int, c: float) -> int:
        counts = np.asarray(counts, dtype=float)
        untried = np.flatnonzero(counts == 0)
        if untried.size:
            return int(untried[0])
        return int(np.argmax(np.asarray(q, dtype=float) + bonus(counts, t, c)))

    return choose


def _ucb_plus_one(q, counts, t, c):
    counts = np.asarray(counts, dtype=float)
    return int(np.argmax(q + c * np.sqrt(np.log(t) / (counts + 1))))


def _ucb_last_untried(q, counts, t, c):
    untried = np.flatnonzero(np.asarray(counts) == 0)
    if untried.size:
        return int(untried[-1])
    return bandits.ucb_action(q, counts, t, c)


@exercise(MODULE, "ucb_action", "UCB con los brazos sin probar primero")
def check_ucb_action(
    ucb_action: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = UCB_CASES,
) -> None:
    """Comprueba ``ucb_action(q_values, counts, t, c)``."""
    check_cases(
        ucb_action,
        "ucb_action",
        cases,
        bandits.ucb_action,
        [
            (
                _ucb_plus_one,
                "Los brazos sin probar (N(a) = 0) van primero. "
                "¿Sumaste 1 a N(a) para no dividir por cero? Eso cambia la fórmula.",
            ),
            (
                _ucb_last_untried,
                "Si hay varios brazos sin probar, devuelve el de menor índice.",
            ),
            (
                _ucb_formula(lambda n, t, c: 0.0 * n),
                "Falta el bono de incertidumbre "
                "c·sqrt(ln t / N(a)): así es una elección voraz.",
            ),
            (
                _ucb_formula(lambda n, t, c: c * np.log(t) / n),
                "¿Olvidaste la raíz cuadrada? El bono es c·sqrt(ln t / N(a)).",
            ),
            (
                _ucb_formula(lambda n, t, c: np.sqrt(c * np.log(t) / n)),
                "c multiplica a la raíz, no va dentro: c·sqrt(ln t / N(a)).",
            ),
            (
                _ucb_formula(lambda n, t, c: c * np.sqrt(t / n)),
                "¿Olvidaste el logaritmo? El bono es c·sqrt(ln t / N(a)).",
            ),
            (
                _ucb_formula(lambda n, t, c: c * np.sqrt(np.log2(t) / n)),
                "El logaritmo del bono es el natural, ln t (np.log), no log2.",
            ),
            (
                _ucb_formula(lambda n, t, c: c * np.sqrt(np.log10(t) / n)),
                "El logaritmo del bono es el natural, ln t (np.log), no log10.",
            ),
            (
                _ucb_formula(lambda n, t, c: c * np.sqrt(np.log(t + 1) / n)),
                "El bono usa ln t, no ln(t + 1): t ya empieza en 1, así que no "
                "hay logaritmo de cero que evitar.",
            ),
            (
                _ucb_formula(lambda n, t, c: c * np.sqrt(np.log(n.sum()) / n)),
                "En el bono va t, el paso que recibes como argumento, no la suma "
                "de counts: usa el argumento t.",
            ),
            (
                _ucb_formula(lambda n, t, c: -c * np.sqrt(np.log(t) / n)),
                "¿El signo? El bono de incertidumbre se suma: favorece a los "
                "brazos poco probados.",
            ),
        ],
    )


# ---------------------------------------------------------------------------
# Ejercicio 4 · softmax estable
# ---------------------------------------------------------------------------

SOFTMAX_CASES = [
    (np.array([0.0, 0.0, 0.0]),),
    (np.array([1.0, 2.0, 3.0]),),
    (np.array([-1.0, 0.5, 0.0, 2.0]),),
    (np.array([1000.0, 1000.0, 999.0]),),
    (np.array([-1000.0, -1001.0]),),
    (np.array([50.0, -700.0, 0.0]),),
]


def _softmax_naive(h):
    z = np.exp(np.asarray(h, dtype=float))
    return z / z.sum()


@exercise(MODULE, "softmax", "Softmax estable")
def check_softmax(
    softmax: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = SOFTMAX_CASES,
) -> None:
    """Comprueba ``softmax(preferences)``."""
    check_cases(
        softmax,
        "softmax",
        cases,
        bandits.softmax,
        [
            (
                _softmax_naive,
                "Con preferencias grandes exp(H) desborda (inf/inf = NaN) o se "
                "anula (0/0). Resta el máximo de H antes de exp: el resultado no "
                "cambia y no desborda.",
            ),
            (
                lambda h: _softmax_naive(np.asarray(h) - np.min(h)),
                "Resta el máximo, no el mínimo: con H − min(H) los exponentes "
                "pueden ser enormes y exp desborda.",
            ),
            (
                lambda h: np.exp(h - np.max(h)),
                "¿Olvidaste dividir por la suma? Las probabilidades deben sumar 1.",
            ),
            (
                lambda h: np.asarray(h) / np.sum(h),
                "Softmax usa exponenciales: exp(H(a)) / Σ exp(H(b)), no H(a) / Σ H(b).",
            ),
            (
                lambda h: bandits.softmax(-np.asarray(h, dtype=float)),
                "¿El signo? Una preferencia mayor debe dar una probabilidad mayor.",
            ),
        ],
    )


# ---------------------------------------------------------------------------
# Ejercicio 5 · la actualización del bandido de gradiente
# ---------------------------------------------------------------------------

GRADIENT_CASES = [
    (np.array([0.0, 0.0, 0.0]), 1, 1.0, 0.0, 0.1),
    (np.array([0.5, -0.2, 0.1]), 0, 2.0, 1.5, 0.5),
    (np.array([1.0, 0.0, -1.0, 0.5]), 2, 0.0, 1.0, 0.2),
    (np.array([0.3, 0.3]), 1, 4.0, 4.5, 1.0),
]


def _gradient_rule(signal, chosen_only: bool = False):
    """Una actualización del bandido de gradiente con algún error."""

    def update(h, a, r, b, alpha):
        h = np.asarray(h, dtype=float)
        pi = bandits.softmax(h)
        one_hot = np.eye(len(h))[a]
        step = alpha * signal(r, b) * (one_hot - pi)
        if chosen_only:
            step = step * one_hot
        return h + step

    return update


def _without_alpha(h, a, r, b, alpha):
    return _gradient_rule(lambda r, b: r - b)(h, a, r, b, 1.0)


@exercise(
    MODULE,
    "gradient_bandit_update",
    "Actualización del bandido de gradiente",
    # Se califica con la softmax de referencia: un error en tu softmax ya
    # cuenta en su ejercicio y no debe costar puntos también aquí.
    uses={"softmax": bandits.softmax},
)
def check_gradient_bandit_update(
    gradient_bandit_update: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = GRADIENT_CASES,
) -> None:
    """Comprueba ``gradient_bandit_update(preferences, action, reward, baseline,
    alpha)``; si la función llama a ``softmax``, usa la de referencia."""
    check_cases(
        gradient_bandit_update,
        "gradient_bandit_update",
        cases,
        bandits.gradient_bandit_update,
        [
            (
                _gradient_rule(lambda r, b: r),
                "¿Olvidaste restar la línea base? La señal es (R − b), no R.",
            ),
            (_gradient_rule(lambda r, b: r + b), "La línea base se resta: (R − b)."),
            (
                # (b − R)(1{a=A} − π) y (R − b)(π − 1{a=A}) son el mismo error.
                _gradient_rule(lambda r, b: b - r),
                "¿Un signo al revés? Es (R − b)(1{a = A} − π(a)): si la recompensa "
                "supera la línea base, el brazo elegido debe subir.",
            ),
            (
                _gradient_rule(lambda r, b: r - b, chosen_only=True),
                "También se mueven los brazos no elegidos: bajan en α(R − b)π(a).",
            ),
            (_without_alpha, "¿Olvidaste multiplicar por α?"),
        ],
    )
