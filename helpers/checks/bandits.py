"""Comprobaciones del módulo 01 · Bandidos."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import numpy as np

from helpers import bandits
from helpers.checks import (
    Mistake,
    as_array,
    as_int,
    call,
    check_cases,
    check_procedure,
    close,
    describe_difference,
    exercise,
    fail,
    python_number,
)
from helpers.formatting import number, numbers, percent

MODULE = "01_bandidos"


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


INCREMENTAL_MEAN_MISTAKES: list[Mistake] = [
    Mistake(
        "mean_not_divided",
        lambda q, r, n: r,
        "¿Olvidaste dividir por count? Así la estimación es solo la última recompensa.",
    ),
    Mistake(
        "mean_count_minus_one",
        lambda q, r, n: q + (r - q) / (n - 1),
        "¿Dividiste entre count − 1? count ya cuenta la recompensa nueva.",
    ),
    Mistake(
        "mean_count_plus_one",
        lambda q, r, n: q + (r - q) / (n + 1),
        "¿Dividiste entre count + 1? count ya cuenta la recompensa nueva.",
    ),
    Mistake(
        "mean_sign",
        lambda q, r, n: q - (r - q) / n,
        "¿El signo? La estimación debe moverse hacia la recompensa: Q + (R − Q)/n.",
    ),
    Mistake(
        "mean_of_two",
        lambda q, r, n: (q + r) / 2,
        "Eso es la media entre la estimación y "
        "la recompensa: la recompensa nueva pesa 1/count, no 1/2.",
    ),
    Mistake(
        "mean_times_count",
        lambda q, r, n: q + (r - q) * n,
        "¿Multiplicaste por count en vez de dividir?",
    ),
]


@exercise(MODULE, "incremental_mean")
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
        INCREMENTAL_MEAN_MISTAKES,
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
                f"{k - 1}). ¿Devolviste el valor Q en lugar del índice del brazo?",
                "not_an_arm",
            )
        counts[action] += 1
    return counts / n


def _action(value: Any) -> int:
    """La acción que devolvió epsilon_greedy: un ``int`` (o un entero de NumPy).

    Un array o un tensor, aunque tenga un solo elemento, no vale; un float se
    deja a la comprobación, que sabe decir si es el valor Q y no el índice.
    """
    if hasattr(value, "ndim") and not isinstance(value, np.generic):
        python_number(value, "La acción que devuelve epsilon_greedy", "int")
    return as_int(value, "La acción")


@exercise(MODULE, "epsilon_greedy")
def check_epsilon_greedy(epsilon_greedy: Callable[..., Any], seed: int = 0) -> None:
    """Comprueba ``epsilon_greedy(q_values, epsilon, rng)`` con frecuencias."""
    # 1. Usa el rng que recibe: mismas semillas, mismas elecciones.
    q = np.array([1.0, 1.0, 1.0, 0.0])
    runs = []
    for _ in range(2):
        rng = np.random.default_rng(seed)
        runs.append(
            [
                _action(call(epsilon_greedy, "epsilon_greedy", q, 0.5, rng))
                for _ in range(60)
            ]
        )
    if runs[0] != runs[1]:
        fail(
            "Con el mismo rng (misma semilla) tu función eligió brazos distintos. "
            "¿Usaste np.random o random en lugar del rng que recibes como argumento?",
            "global_random",
        )
    # 2. Sin exploración elige el mejor brazo, no el peor.
    greedy = _frequencies(epsilon_greedy, [1.0, 5.0, 2.0], 0.0, 200, seed)
    if greedy.max() < 0.6:
        fail(
            "Con ε = 0 no debías explorar nunca, pero elegiste brazos al azar "
            f"(frecuencias: {numbers(greedy, 2)}). ¿Comparas al revés? Explora "
            "solo cuando rng.random() < ε.",
            "explores_when_greedy",
        )
    if greedy[0] == 1.0 or greedy[2] == 1.0:
        fail(
            "Con ε = 0 y Q = [1, 5, 2] debías elegir siempre el brazo 1 y elegiste "
            f"otro. ¿Usaste argmin en vez de argmax? Frecuencias: "
            f"{numbers(greedy, 2)}.",
            "argmin",
        )
    if greedy[1] != 1.0:
        fail(
            f"Con ε = 0 y Q = [1, 5, 2] debías elegir siempre el brazo 1; "
            f"frecuencias: {numbers(greedy, 2)}. ¿Exploras aunque ε valga 0? Usa "
            "el ε que recibes como argumento, no uno escrito a mano.",
            "greedy_wrong_arm",
        )
    # 3. Los empates se deshacen al azar.
    # Tamaños elegidos para ≥ 4 errores típicos de margen en cada tolerancia (y
    # una comprobación barata: se ejecuta en cada entrega al calificar).
    ties = _frequencies(epsilon_greedy, [3.0, 1.0, 3.0, 3.0], 0.0, 2000, seed + 1)
    if ties[0] == 1.0:
        fail(
            "Con ε = 0 y Q = [3, 1, 3, 3] elegiste siempre el brazo 0. np.argmax "
            "devuelve siempre el primer máximo: desempata al azar entre los brazos "
            "empatados (por ejemplo con np.flatnonzero(q == q.max()) y rng.choice).",
            "ties_first_max",
        )
    if ties[1] > 0 or np.abs(ties[[0, 2, 3]] - 1 / 3).max() > 0.05:
        fail(
            "Con ε = 0 y Q = [3, 1, 3, 3] los brazos 0, 2 y 3 deberían salir cada uno "
            f"≈ 1/3 de las veces y el 1 nunca. Frecuencias: {numbers(ties, 3)}.",
            "ties_not_uniform",
        )
    # El desempate no puede tocar a los que no empatan: un ruido sumado a Q que
    # no es diminuto cambia el orden de dos valores cercanos.
    near = [0.5, 0.52, 0.1]
    close_values = _frequencies(epsilon_greedy, near, 0.0, 200, seed + 4)
    if close_values[1] != 1.0:
        fail(
            f"Con ε = 0 y Q = {numbers(near, 2)} debías elegir siempre el brazo 1, "
            f"el único máximo; frecuencias: {numbers(close_values, 2)}. ¿Desempatas "
            "sumando ruido a Q? Un ruido que no es diminuto cambia el orden de dos "
            "brazos que no estaban empatados: reúne los empatados "
            "(np.flatnonzero(q == q.max())) y deja que rng elija uno.",
            "ties_noise_too_large",
        )
    # 4. Con ε = 1 explora siempre, entre TODOS los brazos.
    explore = _frequencies(
        epsilon_greedy, [0.0, 10.0, 0.0, 0.0, 0.0], 1.0, 3000, seed + 2
    )
    if explore[1] > 0.9:
        fail(
            "Con ε = 1 debías explorar siempre, pero casi siempre elegiste el mejor "
            "brazo. ¿La rama que explora se queda sin efecto (falta un else o un "
            "return), o al explorar das más peso a los brazos de Q alto? Explora "
            "cuando rng.random() < ε, con un brazo uniforme entre los k.",
            "epsilon_inverted",
        )
    if explore[1] < 0.05:
        fail(
            "Con ε = 1 nunca elegiste el mejor brazo. Al explorar, elige uniforme "
            "entre todos los brazos, también el mejor.",
            "explore_excludes_best",
        )
    if np.abs(explore - 0.2).max() > 0.03:
        fail(
            "Con ε = 1 y 5 brazos cada brazo debería salir ≈ 20 % de las veces. "
            f"Frecuencias: {numbers(explore, 3)}.",
            "explore_not_uniform",
        )
    # 5. Con ε = 0,2 y 4 brazos: P(mejor) = 1 − ε + ε/k = 0,85.
    # (Explorar con probabilidad 1 − ε no llega aquí: con ε = 0 exploraría
    # siempre, y eso lo dice el paso 2.)
    mixed = _frequencies(epsilon_greedy, [0.0, 0.0, 1.0, 0.0], 0.2, 5000, seed + 3)
    if abs(mixed[2] - 0.85) > 0.02:
        fail(
            "Con ε = 0,2 y 4 brazos, el mejor debería salir 1 − ε + ε/4 = 85 % de "
            f"las veces; salió {percent(mixed[2], 1)}.",
            "wrong_best_frequency",
        )


# ---------------------------------------------------------------------------
# Ejercicio 3 · un paso del banco de pruebas, en todas las ejecuciones a la vez
# ---------------------------------------------------------------------------


def testbed_cases(seed: int) -> list[tuple[Any, ...]]:
    """Casos pequeños ``(q, counts, q_star, epsilon, seed_del_rng)`` para
    ``testbed_step``: filas con empates (también de toda la fila), máximos
    distintos en cada fila, brazos sin probar y ε = 0, intermedio y 1."""
    rng = np.random.default_rng(seed)
    cases = []
    for n, k, epsilon in ((7, 4, 0.4), (5, 3, 0.0), (4, 5, 1.0), (6, 3, 0.7)):
        # Enteros pequeños: muchos empates dentro de una fila.
        q = np.round(rng.normal(0.0, 1.2, size=(n, k))).astype(float)
        q[0] = 0.0  # una fila entera empatada, como al empezar
        q[1, : k - 1] = q[1].max() + 1.0  # k − 1 brazos empatados arriba
        counts = rng.integers(1, 5, size=(n, k))
        counts[0] = 0
        counts[2, 0] = 0  # un brazo sin probar (su Q es 0)
        q[2, 0] = 0.0
        q_star = rng.normal(size=(n, k))
        cases.append((q, counts, q_star, epsilon, int(rng.integers(10_000))))
    return cases


TESTBED_CASES = testbed_cases(0)
# Las dos celdas calificadas (elegir y cobrar; actualizar) son un solo ejercicio.


def _unpack_step(result: Any, n: int, k: int) -> tuple[np.ndarray, ...]:
    """Las cuatro salidas de ``testbed_step``, comprobadas de forma y tipo."""
    if not isinstance(result, tuple | list) or len(result) != 4:
        fail(
            "testbed_step debe devolver cuatro cosas, en este orden: "
            "(actions, rewards, new_q, new_counts). Devolvió "
            f"{type(result).__name__}"
            + (f" de longitud {len(result)}." if hasattr(result, "__len__") else "."),
            "step_not_four",
        )
    actions = as_array(result[0], "actions")
    if actions.shape != (n,):
        fail(
            f"actions tiene forma {actions.shape} y debía tener forma ({n},): "
            "una acción por ejecución. ¿Elegiste con argmax sin axis=1, o se "
            "mezclaron por broadcasting un (n,) y un (n, 1)?",
            "actions_shape",
        )
    if not np.all(actions == np.round(actions)) or (
        actions.size and (actions.min() < 0 or actions.max() >= k)
    ):
        fail(
            f"actions debe tener índices de brazo enteros, de 0 a {k - 1}; "
            f"devolviste {numbers(actions, 2)}. ¿Devolviste valores (de Q o "
            "recompensas) en vez de índices, o cambiaste el orden? Es (actions, "
            "rewards, new_q, new_counts).",
            "actions_not_indices",
        )
    rewards, new_q, new_counts = (
        as_array(result[i], name)
        for i, name in ((1, "rewards"), (2, "new_q"), (3, "new_counts"))
    )
    return actions.astype(int), rewards, new_q, new_counts


def _rows_actions(
    q: np.ndarray,
    rng: np.random.Generator,
    epsilon: float,
    *,
    ties_of: Callable[[np.ndarray], np.ndarray] | None = None,
    explore_if: Callable[[np.ndarray, float], np.ndarray] | None = None,
    order: str = "coin-arms-noise",
) -> np.ndarray:
    """Las acciones de la referencia, o de una variante con un error típico."""
    n, k = q.shape
    ties_of = ties_of or (lambda v: v == v.max(axis=1, keepdims=True))
    explore_if = explore_if or (lambda u, e: u < e)
    explore = explore_if(rng.random(n), epsilon)
    if order == "coin-arms-noise":
        arms = rng.integers(k, size=n)
        noise = rng.random((n, k))
    elif order == "coin-noise-arms":
        noise = rng.random((n, k))
        arms = rng.integers(k, size=n)
    elif order == "arms-only-explorers":
        arms = np.zeros(n, dtype=int)
        arms[explore] = rng.integers(k, size=int(explore.sum()))
        noise = rng.random((n, k))
    else:  # "no-noise": np.argmax, que se queda con el primer máximo
        arms = rng.integers(k, size=n)
        return np.where(explore, arms, np.argmax(q, axis=1))
    return np.where(explore, arms, np.argmax(noise * ties_of(q), axis=1))


#: Los errores típicos al elegir: cada variante son los parámetros con que
#: :func:`_rows_actions` la reproduce.
ACTION_MISTAKES: list[Mistake] = [
    Mistake(
        "step_ties_first_max",
        {"order": "no-noise"},
        "Cuando una fila tiene varios brazos empatados en el máximo, np.argmax se "
        "queda siempre con el primero. Desempata con el ruido del paso 3: entre "
        "los empatados, el de mayor ruido.",
    ),
    Mistake(
        "step_ties_whole_matrix",
        {"ties_of": lambda v: v == v.max()},
        "Los empatados son los que alcanzan el máximo de su propia fila, no el "
        "máximo de toda la matriz: cada ejecución es un bandido distinto (piensa "
        "en axis=1 y keepdims=True).",
    ),
    Mistake(
        "step_epsilon_inverted",
        {"explore_if": lambda u, e: u >= e},
        "¿Comparas al revés? La ejecución i explora cuando su número es < ε.",
    ),
    Mistake(
        "step_arms_only_explorers",
        {"order": "arms-only-explorers"},
        "Saca los brazos al azar para todas las ejecuciones (size=n), también "
        "para las que no exploran: así los números aleatorios salen en el orden "
        "del enunciado y tu resultado se puede comparar.",
    ),
    Mistake(
        "step_noise_before_arms",
        {"order": "coin-noise-arms"},
        "Sacaste el ruido de desempate antes que los brazos al azar. El orden del "
        "enunciado es: la moneda, los brazos al azar, el ruido de desempate y el "
        "ruido de las recompensas.",
    ),
]

#: Los errores típicos al cobrar, por su nombre (lo que entiende
#: :func:`_check_rewards`): la recompensa sin ruido, o de las estimaciones q.
REWARD_MISTAKES: list[Mistake] = [
    Mistake(
        "reward_without_noise",
        "without_noise",
        "Falta el ruido: R_i = q*(i, A_i) + un número normal estándar (el paso 4).",
    ),
    Mistake(
        "reward_from_estimates",
        "from_estimates",
        "La recompensa sale de los valores verdaderos q_star, no de tus "
        "estimaciones q.",
    ),
]


def _reference_step(case: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    q, counts, q_star, epsilon, seed = case
    return bandits.testbed_step(q, counts, q_star, epsilon, np.random.default_rng(seed))


def _student_step(
    testbed_step: Callable[..., Any], case: tuple[Any, ...], *, watch_inputs: bool
) -> tuple[np.ndarray, ...]:
    q, counts, q_star, epsilon, seed = case
    args = (q, counts, q_star, epsilon, np.random.default_rng(seed))
    # La elección no depende de si modificas q o counts: eso se califica en la
    # celda de la actualización.
    result = call(
        testbed_step, "testbed_step", *args, may_modify=() if watch_inputs else (0, 1)
    )
    return _unpack_step(result, *q.shape)


def _first_difference(got: list[Any], want: list[Any]) -> int:
    """El primer caso en que ``got`` y ``want`` no son iguales."""
    return next(
        i
        for i, (g, w) in enumerate(zip(got, want, strict=True))
        if not np.array_equal(g, w)
    )


@exercise(MODULE, "testbed_step")
def check_testbed_step(
    testbed_step: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = TESTBED_CASES,
) -> None:
    """Comprueba las acciones y las recompensas de ``testbed_step``."""
    cases = list(cases)
    results = [_student_step(testbed_step, case, watch_inputs=False) for case in cases]

    # 1. Las acciones, en todos los casos.
    def run(variant: Any) -> list[np.ndarray]:
        """Las acciones de cada caso: las tuyas (``"yours"``), las de la
        referencia (``"reference"``) o las de una variante de ACTION_MISTAKES."""
        if variant == "yours":
            return [result[0] for result in results]
        if variant == "reference":
            return [_reference_step(case)[0] for case in cases]
        return [
            _rows_actions(c[0], np.random.default_rng(c[4]), c[3], **variant)
            for c in cases
        ]

    def describe(
        got: list[np.ndarray], want: list[np.ndarray], index: int | None = None
    ) -> str:
        index = _first_difference(got, want) if index is None else index
        q, epsilon = cases[index][0], cases[index][3]
        return (
            f"En el caso {index + 1} (n = {q.shape[0]}, k = {q.shape[1]}, ε = "
            f"{number(epsilon, 2)}) tus acciones son {numbers(got[index], 0)} y "
            f"debían ser {numbers(want[index], 0)}."
        )

    def unexplained(got: list[np.ndarray], want: list[np.ndarray]) -> NoReturn:
        # Con ε = 0 nadie explora: un brazo que no es máximo en su fila no es
        # cuestión del orden de los números aleatorios (se mira en todos los
        # casos con ε = 0, no solo en el primero que difiere).
        for index, (case, actions) in enumerate(zip(cases, got, strict=True)):
            q = case[0]
            best = q == q.max(axis=1, keepdims=True)
            wrong = [i for i, a in enumerate(actions) if not best[i, a]]
            if case[3] == 0.0 and wrong:
                fail(
                    f"{describe(got, want, index)}\nCon ε = 0 nadie explora, y "
                    f"la ejecución {wrong[0]} eligió el brazo {actions[wrong[0]]}, "
                    "que no es de valor máximo en su fila.",
                    "step_greedy_not_max",
                )
        intro = describe(got, want)
        fail(
            f"{intro}\nRevisa el orden de los números aleatorios: la moneda "
            "rng.random(n), los brazos al azar rng.integers(k, size=n), el ruido "
            "de desempate rng.random((n, k)) y, al final, el de las recompensas; "
            "cada uno para todas las ejecuciones a la vez.",
            "step_random_order",
        )

    check_procedure(
        "yours",
        "reference",
        ACTION_MISTAKES,
        run=run,
        same=lambda got, want: all(map(np.array_equal, got, want)),
        describe=describe,
        unexplained=unexplained,
    )
    # 2. Las recompensas.
    for index, (case, result) in enumerate(zip(cases, results, strict=True)):
        _check_rewards(index, case, result)


def _check_rewards(
    index: int, case: tuple[Any, ...], result: tuple[np.ndarray, ...]
) -> None:
    """Las recompensas del caso ``index`` (con las acciones del estudiante)."""
    q, _, q_star, _, _ = case
    rows = np.arange(q.shape[0])
    actions, rewards = result[0], result[1]
    want = _reference_step(case)[1]
    _check_rewards_shape(index, rewards, q.shape[0])

    def run(variant: str) -> np.ndarray:
        """Las recompensas tuyas, de la referencia o de un error típico."""
        return {
            "yours": rewards,
            "reference": want,
            "without_noise": q_star[rows, actions],
            "from_estimates": want + q[rows, actions] - q_star[rows, actions],
        }[variant]

    def describe(got: np.ndarray, want: np.ndarray) -> str:
        return f"En el caso {index + 1}, rewards " + describe_difference(got, want)

    def unexplained(got: np.ndarray, want: np.ndarray) -> NoReturn:
        intro = describe(got, want)
        _rounded(got, want, intro)
        fail(
            f"{intro}\nEl ruido de las recompensas es rng.standard_normal(n), "
            "sacado después de los otros tres: R_i = q*(i, A_i) + ruido_i.",
            "reward_noise",
        )

    check_procedure(
        "yours",
        "reference",
        REWARD_MISTAKES,
        run=run,
        same=close,
        describe=describe,
        unexplained=unexplained,
    )


def _check_rewards_shape(index: int, rewards: np.ndarray, n: int) -> None:
    """Falla si ``rewards`` no tiene una recompensa por ejecución (las dos
    celdas lo miran: la actualización usa tus recompensas)."""
    if rewards.shape != (n,):
        fail(
            f"En el caso {index + 1}, rewards tiene forma {rewards.shape} y "
            f"debía tener forma ({n},): una recompensa por ejecución. "
            "¿Indexaste con q_star[:, actions]? Eso da una matriz; cada "
            "ejecución i cobra solo su casilla (i, A_i).",
            "rewards_matrix",
        )


def _rounded(got: np.ndarray, want: np.ndarray, intro: str) -> None:
    """Falla si ``got`` es ``want`` redondeado a 0–3 decimales."""
    for decimals in range(4):
        if close(got, np.round(want, decimals), atol=1e-9):
            fail(
                f"{intro}\nParece redondeado a {decimals} decimales: no redondees "
                "antes de devolver; la comprobación compara con todas las cifras.",
                "rounded",
            )


def _update(q, counts, actions, rewards, *, rows_of=None, divide_by="new"):
    """La actualización de la referencia (o una variante) con las acciones y
    recompensas del estudiante."""
    q = np.asarray(q, dtype=float)
    n = q.shape[0]
    index = (np.arange(n), actions) if rows_of is None else (slice(None), actions)
    new_counts = np.array(counts, dtype=float)
    old = new_counts[index].copy()
    new_counts[index] += 1
    new_q = q.copy()
    with np.errstate(all="ignore"):
        step = {"new": 1.0 / new_counts[index], "old": 1.0 / old, "none": 1.0}[
            divide_by
        ]
        new_q[index] += (rewards - q[index]) * step
    return new_q, new_counts


#: Los errores típicos al actualizar N: cada variante son los parámetros de
#: :func:`_update` que lo reproducen, o ``"unchanged"`` (devolver la entrada).
COUNTS_MISTAKES: list[Mistake] = [
    Mistake(
        "counts_unchanged",
        "unchanged",
        "N no cambió: suma 1 al brazo elegido de cada fila.",
    ),
    Mistake(
        "counts_whole_columns",
        {"rows_of": 1},
        "Con [:, actions] sumas en columnas enteras, en todas las filas. Cada "
        "ejecución i solo toca su casilla (i, A_i): indexa con un array de filas "
        "y otro de columnas.",
    ),
]

#: Los errores típicos al actualizar Q, como :data:`COUNTS_MISTAKES`.
Q_MISTAKES: list[Mistake] = [
    Mistake(
        "q_divides_by_old_count",
        {"divide_by": "old"},
        "Divide entre N contando ya la recompensa nueva (después de sumarle 1): "
        "con la N de antes, un brazo sin probar da una división por cero.",
    ),
    Mistake(
        "q_not_divided",
        {"divide_by": "none"},
        "¿Olvidaste dividir entre N? Así Q pasa a ser la última recompensa.",
    ),
    Mistake(
        "q_whole_columns",
        {"rows_of": 1},
        "Con [:, actions] actualizas columnas enteras, en todas las filas. Cada "
        "ejecución i solo toca su casilla (i, A_i).",
    ),
    Mistake(
        "q_unchanged",
        "unchanged",
        "new_q es la Q de entrada: falta la actualización.",
    ),
]


@exercise(MODULE, "testbed_step")
def check_testbed_step_update(
    testbed_step: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = TESTBED_CASES,
) -> None:
    """Comprueba ``new_q`` y ``new_counts`` de ``testbed_step`` con sus propias
    acciones y recompensas (así un error al elegir no cuenta aquí otra vez)."""
    for index, case in enumerate(cases):
        _check_update(index, case, _student_step(testbed_step, case, watch_inputs=True))


def _check_update(
    index: int, case: tuple[Any, ...], result: tuple[np.ndarray, ...]
) -> None:
    """``new_counts`` y ``new_q`` del caso ``index``, con las acciones y las
    recompensas del propio estudiante."""
    q, counts = case[0], case[1]
    n, k = q.shape
    rows = np.arange(n)
    actions, rewards, new_q, new_counts = result
    _check_rewards_shape(index, rewards, n)
    want_q, want_counts = _update(q, counts, actions, rewards)
    where = f"En el caso {index + 1} (n = {n}, k = {k})"
    for name, got, want in (
        ("new_counts", new_counts, want_counts),
        ("new_q", new_q, want_q),
    ):
        if got.shape != want.shape:
            fail(
                f"{where}, {name} tiene forma {got.shape} y debía tener la de "
                f"la entrada, {want.shape}.",
                "update_shape",
            )

    def run(variant: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(new_q, new_counts)``: los tuyos (``"yours"``), la entrada sin
        actualizar (``"unchanged"``) o los de :func:`_update` con los
        parámetros de la variante (``{}``: la referencia)."""
        if variant == "yours":
            return new_q, new_counts
        if variant == "unchanged":
            return q, counts
        return _update(q, counts, actions, rewards, **variant)

    # 1. N, que no depende de Q.
    def describe_counts(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...]):
        return f"{where}, new_counts " + describe_difference(got[1], want[1])

    def unexplained_counts(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...]):
        fail(
            f"{describe_counts(got, want)}\nSolo cambia N(i, A_i), y en 1, en "
            "cada fila i.",
            "counts_wrong",
        )

    check_procedure(
        "yours",
        {},
        COUNTS_MISTAKES,
        run=run,
        same=lambda got, want: close(got[1], want[1]),
        describe=describe_counts,
        unexplained=unexplained_counts,
    )

    # 2. Q.
    def describe_q(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...]):
        return f"{where}, new_q " + describe_difference(got[0], want[0])

    def unexplained_q(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...]):
        intro = describe_q(got, want)
        untouched = np.ones((n, k), dtype=bool)
        untouched[rows, actions] = False
        if not close(got[0][untouched], q[untouched]):
            fail(
                f"{intro}\nCambiaste Q de brazos que no se eligieron: en cada fila "
                "solo se actualiza el brazo elegido.",
                "q_other_arms_changed",
            )
        _rounded(got[0], want[0], intro)
        fail(
            f"{intro}\nEs la media incremental del brazo elegido: "
            "Q + (R − Q) / N, con la N nueva.",
            "q_wrong",
        )

    check_procedure(
        "yours",
        {},
        Q_MISTAKES,
        run=run,
        same=lambda got, want: close(got[0], want[0]),
        describe=describe_q,
        unexplained=unexplained_q,
    )


# ---------------------------------------------------------------------------
# Ejercicio 4 · UCB, con los brazos sin probar primero
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
    # Un brazo sin probar muy por debajo de otro: con N(a) + 1 en el bono no
    # sale primero (separa ese error de los del logaritmo).
    (np.array([5.0, 0.0]), np.array([1, 0]), 2, 1.0),
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


UCB_MISTAKES: list[Mistake] = [
    Mistake(
        "ucb_plus_one",
        _ucb_plus_one,
        "Los brazos sin probar (N(a) = 0) van primero. "
        "¿Sumaste 1 a N(a) para no dividir por cero? Eso cambia la fórmula.",
    ),
    Mistake(
        "ucb_last_untried",
        _ucb_last_untried,
        "Si hay varios brazos sin probar, devuelve el de menor índice.",
    ),
    Mistake(
        "ucb_no_bonus",
        _ucb_formula(lambda n, t, c: 0.0 * n),
        "Falta el bono de incertidumbre "
        "c·sqrt(ln t / N(a)): así es una elección voraz.",
    ),
    Mistake(
        "ucb_no_sqrt",
        _ucb_formula(lambda n, t, c: c * np.log(t) / n),
        "¿Olvidaste la raíz cuadrada? El bono es c·sqrt(ln t / N(a)).",
    ),
    Mistake(
        "ucb_c_inside_sqrt",
        _ucb_formula(lambda n, t, c: np.sqrt(c * np.log(t) / n)),
        "c multiplica a la raíz, no va dentro: c·sqrt(ln t / N(a)).",
    ),
    Mistake(
        "ucb_no_log",
        _ucb_formula(lambda n, t, c: c * np.sqrt(t / n)),
        "¿Olvidaste el logaritmo? El bono es c·sqrt(ln t / N(a)).",
    ),
    Mistake(
        "ucb_log2",
        _ucb_formula(lambda n, t, c: c * np.sqrt(np.log2(t) / n)),
        "El logaritmo del bono es el natural, ln t (np.log), no log2.",
    ),
    Mistake(
        "ucb_log10",
        _ucb_formula(lambda n, t, c: c * np.sqrt(np.log10(t) / n)),
        "El logaritmo del bono es el natural, ln t (np.log), no log10.",
    ),
    Mistake(
        "ucb_log_t_plus_one",
        _ucb_formula(lambda n, t, c: c * np.sqrt(np.log(t + 1) / n)),
        "El bono usa ln t, no ln(t + 1): t ya empieza en 1, así que no "
        "hay logaritmo de cero que evitar.",
    ),
    Mistake(
        "ucb_sum_of_counts",
        _ucb_formula(lambda n, t, c: c * np.sqrt(np.log(n.sum()) / n)),
        "En el bono va t, el paso que recibes como argumento, no la suma "
        "de counts: usa el argumento t.",
    ),
    Mistake(
        "ucb_bonus_subtracted",
        _ucb_formula(lambda n, t, c: -c * np.sqrt(np.log(t) / n)),
        "¿El signo? El bono de incertidumbre se suma: favorece a los "
        "brazos poco probados.",
    ),
]


@exercise(MODULE, "ucb_action")
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
        UCB_MISTAKES,
        returns="int",
    )


# ---------------------------------------------------------------------------
# Ejercicio 5 · softmax estable
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


SOFTMAX_MISTAKES: list[Mistake] = [
    Mistake(
        "softmax_overflow",
        _softmax_naive,
        "Con preferencias grandes exp(H) desborda (inf/inf = NaN) o se "
        "anula (0/0). Resta el máximo de H antes de exp: el resultado no "
        "cambia y no desborda.",
    ),
    Mistake(
        "softmax_minus_min",
        lambda h: _softmax_naive(np.asarray(h) - np.min(h)),
        "Resta el máximo, no el mínimo: con H − min(H) los exponentes "
        "pueden ser enormes y exp desborda.",
    ),
    Mistake(
        "softmax_not_normalized",
        lambda h: np.exp(h - np.max(h)),
        "¿Olvidaste dividir por la suma? Las probabilidades deben sumar 1.",
    ),
    Mistake(
        "softmax_no_exp",
        lambda h: np.asarray(h) / np.sum(h),
        "Softmax usa exponenciales: exp(H(a)) / Σ exp(H(b)), no H(a) / Σ H(b).",
    ),
    Mistake(
        "softmax_sign",
        lambda h: bandits.softmax(-np.asarray(h, dtype=float)),
        "¿El signo? Una preferencia mayor debe dar una probabilidad mayor.",
    ),
]


@exercise(MODULE, "softmax")
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
        SOFTMAX_MISTAKES,
    )


# ---------------------------------------------------------------------------
# Ejercicio 6 · la actualización del bandido de gradiente
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


GRADIENT_MISTAKES: list[Mistake] = [
    Mistake(
        "gradient_no_baseline",
        _gradient_rule(lambda r, b: r),
        "¿Olvidaste restar la línea base? La señal es (R − b), no R.",
    ),
    Mistake(
        "gradient_baseline_added",
        _gradient_rule(lambda r, b: r + b),
        "La línea base se resta: (R − b).",
    ),
    Mistake(
        "gradient_sign",
        # (b − R)(1{a=A} − π) y (R − b)(π − 1{a=A}) son el mismo error.
        _gradient_rule(lambda r, b: b - r),
        "¿Un signo al revés? Es (R − b)(1{a = A} − π(a)): si la recompensa "
        "supera la línea base, el brazo elegido debe subir.",
    ),
    Mistake(
        "gradient_chosen_only",
        _gradient_rule(lambda r, b: r - b, chosen_only=True),
        "También se mueven los brazos no elegidos: bajan en α(R − b)π(a).",
    ),
    Mistake("gradient_no_alpha", _without_alpha, "¿Olvidaste multiplicar por α?"),
]


@exercise(
    MODULE,
    "gradient_bandit_update",
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
        GRADIENT_MISTAKES,
    )


# ---------------------------------------------------------------------------
# Ejercicio 7 · el bucle del bandido de gradiente
# ---------------------------------------------------------------------------


def bernoulli_pull(q_star: list[float]) -> Callable[[int, np.random.Generator], float]:
    """Un bandido de Bernoulli diminuto: ``pull(arm, rng)`` da 1 con prob. q*."""

    def pull(arm: int, rng: np.random.Generator) -> float:
        return float(rng.random() < q_star[arm])

    return pull


def gaussian_pull(q_star: list[float]) -> Callable[[int, np.random.Generator], float]:
    """Un bandido gaussiano diminuto: ``pull(arm, rng) = q*(arm) + N(0, 1)``."""

    def pull(arm: int, rng: np.random.Generator) -> float:
        return float(q_star[arm] + rng.standard_normal())

    return pull


# (pull, k, n_steps, alpha, semilla): problemas pequeños y fijos.
TRAIN_CASES = [
    (bernoulli_pull([0.2, 0.8, 0.5]), 3, 8, 0.4, 0),
    (gaussian_pull([4.0, 4.5]), 2, 12, 0.3, 1),
    (bernoulli_pull([0.1, 0.3, 0.9, 0.5]), 4, 40, 0.25, 2),
]


def _train_variant(
    pull: Callable[..., float],
    k: int,
    n_steps: int,
    alpha: float,
    rng: np.random.Generator,
    *,
    baseline_of: Callable[[float, float, int], float] | None = None,
    mean_first: bool = False,
    greedy: bool = False,
    return_pi: bool = False,
) -> tuple[np.ndarray, list[int]]:
    """El bucle de la referencia, o una variante con un error típico."""
    baseline_of = baseline_of or (lambda reward, mean, t: reward if t == 1 else mean)
    preferences, mean_reward, actions = np.zeros(k), 0.0, []
    for t in range(1, n_steps + 1):
        pi = bandits.softmax(preferences)
        action = int(np.argmax(pi)) if greedy else int(rng.choice(k, p=pi))
        reward = pull(action, rng)
        if mean_first:
            mean_reward = bandits.incremental_mean(mean_reward, reward, t)
        baseline = baseline_of(reward, mean_reward, t)
        preferences = bandits.gradient_bandit_update(
            preferences, action, reward, baseline, alpha
        )
        if not mean_first:
            mean_reward = bandits.incremental_mean(mean_reward, reward, t)
        actions.append(action)
    if return_pi:
        return bandits.softmax(preferences), actions
    return preferences, actions


#: Los errores típicos del bucle: cada variante son los parámetros con que
#: :func:`_train_variant` lo reproduce.
TRAIN_MISTAKES: list[Mistake] = [
    Mistake(
        "train_returns_pi",
        {"return_pi": True},
        "Devolviste π = softmax(H), las probabilidades de la política: el "
        "ejercicio pide las preferencias H, lo que se actualiza en cada paso "
        "(π sale de ellas).",
    ),
    Mistake(
        "train_mean_first",
        {"mean_first": True},
        "La línea base del paso t es la media de las recompensas anteriores: "
        "actualiza la media después de usarla (etapa 6), no antes. Con R_t dentro, "
        "la señal R − R̄ se encoge y el método aprende más despacio.",
    ),
    Mistake(
        "train_no_baseline",
        {"baseline_of": lambda reward, mean, t: 0.0},
        "Falta la línea base: la señal es R − R̄, no R.",
    ),
    Mistake(
        "train_first_baseline_zero",
        {"baseline_of": lambda reward, mean, t: mean},
        "En el primer paso todavía no hay recompensas anteriores: el enunciado "
        "usa R̄_1 = R_1 (la primera actualización no mueve nada), no una media "
        "de 0.",
    ),
    Mistake(
        "train_greedy",
        {"greedy": True},
        "La acción se muestrea de π con rng.choice(k, p=π); el argmax de π es "
        "una política voraz y deja de explorar.",
    ),
]


@exercise(
    MODULE,
    "gradient_bandit_train",
    # Se califica con las referencias de los ejercicios 1, 5 y 6: un error en
    # ellos ya cuenta en su ejercicio y no debe costar puntos también aquí.
    uses={
        "softmax": bandits.softmax,
        "gradient_bandit_update": bandits.gradient_bandit_update,
        "incremental_mean": bandits.incremental_mean,
    },
)
def check_gradient_bandit_train(
    gradient_bandit_train: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = TRAIN_CASES,
) -> None:
    """Comprueba ``gradient_bandit_train(pull, k, n_steps, alpha, rng)``: con la
    misma semilla, los mismos brazos y las mismas preferencias finales que la
    referencia."""
    cases = list(cases)
    results = []
    for pull, k, n_steps, alpha, seed in cases:
        result = call(
            gradient_bandit_train,
            "gradient_bandit_train",
            pull,
            k,
            n_steps,
            alpha,
            np.random.default_rng(seed),
        )
        if not isinstance(result, tuple | list) or len(result) != 2:
            fail(
                "gradient_bandit_train debe devolver dos cosas: (preferences, "
                "actions), las preferencias finales y la lista de brazos elegidos.",
                "train_not_a_pair",
            )
        preferences = as_array(result[0], "preferences")
        actions = [as_int(a, "Cada acción") for a in list(result[1])]
        results.append((preferences, actions))

    def run(variant: Any) -> list[tuple[np.ndarray, list[int]]]:
        """``(preferencias, acciones)`` de cada caso: las tuyas (``"yours"``)
        o las de :func:`_train_variant` con los parámetros de la variante
        (``{}``: la referencia)."""
        if variant == "yours":
            return results
        return [
            _train_variant(
                pull, k, n_steps, alpha, np.random.default_rng(seed), **variant
            )
            for pull, k, n_steps, alpha, seed in cases
        ]

    def same(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> bool:
        return all(
            got_a == want_a and close(got_h, want_h)
            for (got_h, got_a), (want_h, want_a) in zip(got, want, strict=True)
        )

    def first_difference(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]):
        """El primer caso que no coincide, con su descripción."""
        index = next(i for i in range(len(cases)) if not same([got[i]], [want[i]]))
        _, k, n_steps, alpha, _ = cases[index]
        return index, f"Con k = {k}, {n_steps} pasos, α = {number(alpha, 2)}"

    def describe(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> str:
        index, where = first_difference(got, want)
        (got_h, got_a), (want_h, want_a) = got[index], want[index]
        if len(got_a) != len(want_a):
            fail(
                f"{where}: devolviste {len(got_a)} acciones y debían ser "
                f"{len(want_a)}, una por paso.",
                "train_wrong_number_of_actions",
            )
        if got_a != want_a:
            pairs = enumerate(zip(got_a, want_a, strict=True))
            step = next(i for i, (g, w) in pairs if g != w)
            return (
                f"{where}: en el paso {step + 1} elegiste el brazo {got_a[step]} y "
                f"la referencia, con la misma semilla, el {want_a[step]}."
            )
        return (
            f"{where}: eliges los mismos brazos, pero tus preferencias "
            "finales no son las de la referencia: tu función "
            + describe_difference(got_h, want_h)
        )

    def unexplained(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]):
        index, _ = first_difference(got, want)
        intro = describe(got, want)
        (got_h, got_a), (want_h, want_a) = got[index], want[index]
        if got_a == want_a:
            _rounded(got_h, want_h, intro)
        fail(
            f"{intro}\nSigue las etapas en orden y usa el generador solo en dos "
            "sitios: rng.choice(k, p=π) para elegir y pull(A, rng) para cobrar. "
            "Si algo cambia de paso en paso, revisa qué línea base usas en el "
            "paso t.",
            "train_wrong",
        )

    check_procedure(
        "yours",
        {},
        TRAIN_MISTAKES,
        run=run,
        same=same,
        describe=describe,
        unexplained=unexplained,
    )
