"""Comprobaciones del módulo 01 · Bandidos."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from helpers import bandits
from helpers.checks import (
    Mistake,
    as_array,
    as_int,
    call,
    check_procedure,
    close,
    describe_difference,
    exercise,
    fail,
    on_output,
    python_number,
    values_check,
    variant_of,
)
from helpers.formatting import number, numbers, percent

MODULE = "01_bandidos"

# ---------------------------------------------------------------------------
# Ejercicio 1 · media incremental
# ---------------------------------------------------------------------------

_mean = bandits.incremental_mean

check_incremental_mean = values_check(
    MODULE,
    "incremental_mean",
    _mean,
    [
        Mistake(
            "mean_not_divided",
            lambda q, r, n: _mean(q, r, 1),
            "¿Olvidaste dividir por count? Así la estimación es solo la última "
            "recompensa.",
        ),
        Mistake(
            "mean_count_minus_one",
            lambda q, r, n: _mean(q, r, n - 1),
            "¿Dividiste entre count − 1? count ya cuenta la recompensa nueva.",
        ),
        Mistake(
            "mean_count_plus_one",
            lambda q, r, n: _mean(q, r, n + 1),
            "¿Dividiste entre count + 1? count ya cuenta la recompensa nueva.",
        ),
        Mistake(
            "mean_sign",
            lambda q, r, n: _mean(q, 2 * q - r, n),  # Q − (R − Q)/n
            "¿El signo? La estimación debe moverse hacia la recompensa: Q + (R − Q)/n.",
        ),
        Mistake(
            "mean_of_two",
            lambda q, r, n: _mean(q, r, 2),
            "Eso es la media entre la estimación y "
            "la recompensa: la recompensa nueva pesa 1/count, no 1/2.",
        ),
        Mistake(
            "mean_times_count",
            lambda q, r, n: _mean(q, r, 1 / n),
            "¿Multiplicaste por count en vez de dividir?",
        ),
    ],
    # El último, con decimales que no acaban: un redondeo no pasa desapercibido.
    [(2.0, 5.0, 4), (0.0, 1.0, 1), (3.0, -1.0, 2), (1.5, 1.5, 7), (1.0, 2.0, 3)],
)

# ---------------------------------------------------------------------------
# Ejercicio 2 · ε-greedy con desempate al azar
# ---------------------------------------------------------------------------


def _frequencies(epsilon_greedy, q_values, epsilon, n, seed) -> np.ndarray:
    rng, q = np.random.default_rng(seed), np.array(q_values, dtype=float)
    counts = np.zeros(len(q))
    for step in range(n):
        # La entrada se vigila (¿la modifica?) en las primeras llamadas; después,
        # miles de copias solo harían lenta la comprobación.
        watch = call if step < 20 else lambda f, _, *args: f(*args)
        action = as_int(
            watch(epsilon_greedy, "epsilon_greedy", q, epsilon, rng),
            "La acción elegida",
        )
        if not 0 <= action < len(q):
            fail(
                f"epsilon_greedy devolvió {action}, que no es un brazo válido (0 a "
                f"{len(q) - 1}). ¿Devolviste el valor Q en lugar del índice del brazo?",
                "not_an_arm",
            )
        counts[action] += 1
    return counts / n


def _action(value: Any) -> int:
    """La acción: un entero (de Python o de NumPy), no un array ni un tensor."""
    if hasattr(value, "ndim") and not isinstance(value, np.generic):
        python_number(value, "La acción que devuelve epsilon_greedy", "int")
    return as_int(value, "La acción")


@exercise(MODULE, "epsilon_greedy")
def check_epsilon_greedy(epsilon_greedy: Callable[..., Any], seed: int = 0) -> None:
    """Comprueba ``epsilon_greedy(q_values, epsilon, rng)`` con frecuencias."""
    # 1. Usa el rng que recibe: mismas semillas, mismas elecciones.
    q, runs = np.array([1.0, 1.0, 1.0, 0.0]), []
    for rng in (np.random.default_rng(seed), np.random.default_rng(seed)):
        choose = functools.partial(call, epsilon_greedy, "epsilon_greedy", q, 0.5, rng)
        runs.append([_action(choose()) for _ in range(60)])
    if runs[0] != runs[1]:
        fail(
            "Con el mismo rng (misma semilla) tu función eligió brazos distintos. "
            "¿Usaste np.random o random en lugar del rng que recibes como argumento?",
            "global_random",
        )
    # 2. Sin exploración elige el mejor brazo, no el peor.
    greedy = _frequencies(epsilon_greedy, [1.0, 5.0, 2.0], 0.0, 200, seed)
    shown = numbers(greedy, 2)
    if greedy.max() < 0.6:
        fail(
            "Con ε = 0 no debías explorar nunca, pero elegiste brazos al azar "
            f"(frecuencias: {shown}). ¿Comparas al revés? Explora "
            "solo cuando rng.random() < ε.",
            "explores_when_greedy",
        )
    if greedy[0] == 1.0 or greedy[2] == 1.0:
        fail(
            "Con ε = 0 y Q = [1, 5, 2] debías elegir siempre el brazo 1 y elegiste "
            f"otro. ¿Usaste argmin en vez de argmax? Frecuencias: {shown}.",
            "argmin",
        )
    if greedy[1] != 1.0:
        fail(
            f"Con ε = 0 y Q = [1, 5, 2] debías elegir siempre el brazo 1; "
            f"frecuencias: {shown}. ¿Exploras aunque ε valga 0? Usa "
            "el ε que recibes como argumento, no uno escrito a mano.",
            "greedy_wrong_arm",
        )
    # 3. Los empates se deshacen al azar. Tamaños elegidos para ≥ 4 errores
    # típicos de margen en cada tolerancia (y una comprobación barata: se
    # ejecuta en cada entrega al calificar).
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
    near_q = [0.5, 0.52, 0.1]
    near = _frequencies(epsilon_greedy, near_q, 0.0, 200, seed + 4)
    if near[1] != 1.0:
        fail(
            f"Con ε = 0 y Q = {numbers(near_q, 2)} debías elegir siempre el brazo 1, "
            f"el único máximo; frecuencias: {numbers(near, 2)}. ¿Desempatas "
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
    # 5. Con ε = 0,2 y 4 brazos: P(mejor) = 1 − ε + ε/k = 0,85. (Explorar con
    # probabilidad 1 − ε no llega aquí: lo dice el paso 2.)
    mixed = _frequencies(epsilon_greedy, [0.0, 0.0, 1.0, 0.0], 0.2, 5000, seed + 3)
    if abs(mixed[2] - 0.85) > 0.02:
        fail(
            "Con ε = 0,2 y 4 brazos, el mejor debería salir 1 − ε + ε/4 = 85 % de "
            f"las veces; salió {percent(mixed[2], 1)}.",
            "wrong_best_frequency",
        )


# ---------------------------------------------------------------------------
# Ejercicio 3 · un paso del banco de pruebas, en todas las ejecuciones a la vez
# (dos celdas calificadas: elegir y cobrar; actualizar)
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
        counts[2, 0] = q[2, 0] = 0  # un brazo sin probar (su Q es 0)
        q_star = rng.normal(size=(n, k))
        cases.append((q, counts, q_star, epsilon, int(rng.integers(10_000))))
    return cases


TESTBED_CASES = testbed_cases(0)


def _unpack_step(result: Any, n: int, k: int) -> tuple[np.ndarray, ...]:
    """Las cuatro salidas de ``testbed_step``, comprobadas de forma y tipo."""
    if not isinstance(result, tuple | list) or len(result) != 4:
        length = f" de longitud {len(result)}" if hasattr(result, "__len__") else ""
        fail(
            "testbed_step debe devolver cuatro cosas, en este orden: "
            "(actions, rewards, new_q, new_counts). Devolvió "
            f"{type(result).__name__}{length}.",
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
    if np.any(actions != np.round(actions)) or np.any((actions < 0) | (actions >= k)):
        fail(
            f"actions debe tener índices de brazo enteros, de 0 a {k - 1}; "
            f"devolviste {numbers(actions, 2)}. ¿Devolviste valores (de Q o "
            "recompensas) en vez de índices, o cambiaste el orden? Es (actions, "
            "rewards, new_q, new_counts).",
            "actions_not_indices",
        )
    names = ("rewards", "new_q", "new_counts")
    return (
        actions.astype(int),
        *(as_array(result[i], m) for i, m in enumerate(names, 1)),
    )


def _actions(q, counts, q_star, epsilon, seed, *, ties="row", below=True, order=""):
    """Las acciones de ``testbed_step`` con un error típico que vive dentro del
    algoritmo: ``ties`` (los empatados de la fila o de toda la matriz),
    ``below`` (explorar si u < ε) y ``order`` de los números aleatorios."""
    rng = np.random.default_rng(seed)
    n, k = q.shape
    explore = (rng.random(n) < epsilon) == below
    if order == "noise-first":
        noise, arms = rng.random((n, k)), rng.integers(k, size=n)
    elif order == "arms-only-explorers":
        arms = np.zeros(n, dtype=int)
        arms[explore] = rng.integers(k, size=int(explore.sum()))
        noise = rng.random((n, k))
    else:
        arms, noise = rng.integers(k, size=n), rng.random((n, k))
    if order == "argmax":
        return np.where(explore, arms, np.argmax(q, axis=1))
    best = q.max(axis=1, keepdims=True) if ties == "row" else q.max()
    return np.where(explore, arms, np.argmax(noise * (q == best), axis=1))


ACTION_MISTAKES: list[Mistake] = [
    Mistake(
        "step_ties_first_max",
        variant_of(_actions, order="argmax"),
        "Cuando una fila tiene varios brazos empatados en el máximo, np.argmax se "
        "queda siempre con el primero. Desempata con el ruido del paso 3: entre "
        "los empatados, el de mayor ruido.",
    ),
    Mistake(
        "step_ties_whole_matrix",
        variant_of(_actions, ties="matrix"),
        "Los empatados son los que alcanzan el máximo de su propia fila, no el "
        "máximo de toda la matriz: cada ejecución es un bandido distinto (piensa "
        "en axis=1 y keepdims=True).",
    ),
    Mistake(
        "step_epsilon_inverted",
        variant_of(_actions, below=False),
        "¿Comparas al revés? La ejecución i explora cuando su número es < ε.",
    ),
    Mistake(
        "step_arms_only_explorers",
        variant_of(_actions, order="arms-only-explorers"),
        "Saca los brazos al azar para todas las ejecuciones (size=n), también "
        "para las que no exploran: así los números aleatorios salen en el orden "
        "del enunciado y tu resultado se puede comparar.",
    ),
    Mistake(
        "step_noise_before_arms",
        variant_of(_actions, order="noise-first"),
        "Sacaste el ruido de desempate antes que los brazos al azar. El orden del "
        "enunciado es: la moneda, los brazos al azar, el ruido de desempate y el "
        "ruido de las recompensas.",
    ),
]

#: Al cobrar: ``(q, q_star, acciones, recompensas de la referencia) → recompensas``.
REWARD_MISTAKES: list[Mistake] = [
    Mistake(
        "reward_without_noise",
        lambda q, q_star, a, want: q_star[np.arange(len(a)), a],
        "Falta el ruido: R_i = q*(i, A_i) + un número normal estándar (el paso 4).",
    ),
    Mistake(
        "reward_from_estimates",
        lambda q, q_star, a, want: want + (q - q_star)[np.arange(len(a)), a],
        "La recompensa sale de los valores verdaderos q_star, no de tus "
        "estimaciones q.",
    ),
]


def _reference_step(q, counts, q_star, epsilon, seed):
    return bandits.testbed_step(q, counts, q_star, epsilon, np.random.default_rng(seed))


def _student_step(testbed_step, case, *, watch_inputs):
    # La elección no depende de si modificas q o counts: eso se califica en la
    # celda de la actualización.
    q, counts, q_star, epsilon, seed = case
    rng, free = np.random.default_rng(seed), () if watch_inputs else (0, 1)
    result = call(
        testbed_step, "testbed_step", q, counts, q_star, epsilon, rng, may_modify=free
    )
    return _unpack_step(result, *q.shape)


def _rewards_shape(index: int, rewards: np.ndarray, n: int) -> None:
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


# candidato al núcleo: check_procedure con el resultado del estudiante ya calculado.
def _given(arguments):
    """``run`` de :func:`check_procedure` con el resultado del estudiante ya
    calculado: las implementaciones se llaman con ``arguments``."""
    return lambda f: f(*arguments) if callable(f) else f


@exercise(MODULE, "testbed_step")
def check_testbed_step(testbed_step: Callable[..., Any], cases=TESTBED_CASES) -> None:
    """Comprueba las acciones y las recompensas de ``testbed_step``."""
    cases = list(cases)
    results = [_student_step(testbed_step, case, watch_inputs=False) for case in cases]

    def describe(got, want, index=None) -> str:
        if index is None:
            index = next(i for i, g in enumerate(got) if not np.array_equal(g, want[i]))
        (n, k), epsilon = cases[index][0].shape, cases[index][3]
        return (
            f"En el caso {index + 1} (n = {n}, k = {k}, ε = {number(epsilon, 2)}) "
            f"tus acciones son {numbers(got[index], 0)} y debían ser "
            f"{numbers(want[index], 0)}."
        )

    def unexplained(got, want) -> NoReturn:
        # Con ε = 0 nadie explora: un brazo que no es máximo en su fila no es
        # cuestión del orden de los números aleatorios.
        for index, ((q, *_, epsilon, _), actions) in enumerate(
            zip(cases, got, strict=True)
        ):
            best = q == q.max(axis=1, keepdims=True)
            wrong = [i for i, a in enumerate(actions) if not best[i, a]]
            if epsilon == 0.0 and wrong:
                fail(
                    f"{describe(got, want, index)}\nCon ε = 0 nadie explora, y "
                    f"la ejecución {wrong[0]} eligió el brazo {actions[wrong[0]]}, "
                    "que no es de valor máximo en su fila.",
                    "step_greedy_not_max",
                )
        fail(
            f"{describe(got, want)}\nRevisa el orden de los números aleatorios: la "
            "moneda rng.random(n), los brazos al azar rng.integers(k, size=n), el "
            "ruido de desempate rng.random((n, k)) y, al final, el de las "
            "recompensas; cada uno para todas las ejecuciones a la vez.",
            "step_random_order",
        )

    # 1. Las acciones, en todos los casos (las tuyas ya están calculadas).
    check_procedure(
        [result[0] for result in results],
        lambda *case: _reference_step(*case)[0],
        ACTION_MISTAKES,
        run=lambda f: f if isinstance(f, list) else [f(*case) for case in cases],
        same=lambda got, want: all(map(np.array_equal, got, want)),
        describe=describe,
        unexplained=unexplained,
    )
    # 2. Las recompensas, con tus acciones.
    for index, (case, (actions, rewards, _, _)) in enumerate(
        zip(cases, results, strict=True)
    ):
        q, _, q_star, _, _ = case
        _rewards_shape(index, rewards, q.shape[0])

        def describe_rewards(got, want, index=index) -> str:
            return f"En el caso {index + 1}, rewards " + describe_difference(got, want)

        def unexplained_rewards(got, want, describe=describe_rewards) -> NoReturn:
            _rounded(got, want, describe(got, want))
            fail(
                f"{describe(got, want)}\nEl ruido de las recompensas es "
                "rng.standard_normal(n), sacado después de los otros tres: "
                "R_i = q*(i, A_i) + ruido_i.",
                "reward_noise",
            )

        check_procedure(
            rewards,
            lambda *args: args[3],
            REWARD_MISTAKES,
            run=_given((q, q_star, actions, _reference_step(*case)[1])),
            same=close,
            describe=describe_rewards,
            unexplained=unexplained_rewards,
        )


def _update(q, counts, actions, rewards, *, columns=False, divide_by="new"):
    """``(new_q, new_counts)`` con las acciones y recompensas del estudiante: la
    media incremental (ejercicio 1) de la casilla elegida de cada fila, o de
    las columnas enteras (``columns``), dividiendo entre la N nueva, la vieja o
    nada (``divide_by``)."""
    new_q, new_counts = np.array(q, dtype=float), np.array(counts, dtype=float)
    index = (slice(None) if columns else np.arange(len(new_q)), actions)
    old = new_counts[index]
    new_counts[index] += 1
    count = {"new": old + 1, "old": old, "none": 1.0}[divide_by]
    with np.errstate(all="ignore"):
        new_q[index] = bandits.incremental_mean(new_q[index], rewards, count)
    return new_q, new_counts


def _unchanged(q, counts, actions, rewards):
    return q, counts


COUNTS_MISTAKES: list[Mistake] = [
    Mistake(
        "counts_unchanged",
        _unchanged,
        "N no cambió: suma 1 al brazo elegido de cada fila.",
    ),
    Mistake(
        "counts_whole_columns",
        variant_of(_update, columns=True),
        "Con [:, actions] sumas en columnas enteras, en todas las filas. Cada "
        "ejecución i solo toca su casilla (i, A_i): indexa con un array de filas "
        "y otro de columnas.",
    ),
]

Q_MISTAKES: list[Mistake] = [
    Mistake(
        "q_divides_by_old_count",
        variant_of(_update, divide_by="old"),
        "Divide entre N contando ya la recompensa nueva (después de sumarle 1): "
        "con la N de antes, un brazo sin probar da una división por cero.",
    ),
    Mistake(
        "q_not_divided",
        variant_of(_update, divide_by="none"),
        "¿Olvidaste dividir entre N? Así Q pasa a ser la última recompensa.",
    ),
    Mistake(
        "q_whole_columns",
        variant_of(_update, columns=True),
        "Con [:, actions] actualizas columnas enteras, en todas las filas. Cada "
        "ejecución i solo toca su casilla (i, A_i).",
    ),
    Mistake(
        "q_unchanged", _unchanged, "new_q es la Q de entrada: falta la actualización."
    ),
]


@exercise(MODULE, "testbed_step")
def check_testbed_step_update(
    testbed_step: Callable[..., Any], cases=TESTBED_CASES
) -> None:
    """Comprueba ``new_q`` y ``new_counts`` con las acciones y recompensas del
    propio estudiante (así un error al elegir no cuenta aquí otra vez)."""
    for index, case in enumerate(cases):
        _check_update(index, case, _student_step(testbed_step, case, watch_inputs=True))


def _check_update(index: int, case: tuple[Any, ...], result: tuple[Any, ...]) -> None:
    """``new_counts`` y luego ``new_q`` del caso ``index``."""
    (q, counts, *_), (n, k) = case, case[0].shape
    actions, rewards, new_q, new_counts = result
    _rewards_shape(index, rewards, n)
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

    def unexplained_counts(got, want) -> NoReturn:
        fail(
            f"{where}, new_counts {describe_difference(got[1], want[1])}\nSolo "
            "cambia N(i, A_i), y en 1, en cada fila i.",
            "counts_wrong",
        )

    def unexplained_q(got, want) -> NoReturn:
        intro = f"{where}, new_q " + describe_difference(got[0], want[0])
        untouched = np.ones((n, k), dtype=bool)
        untouched[np.arange(n), actions] = False
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

    for position, name, rows, unexplained in (
        (1, "new_counts", COUNTS_MISTAKES, unexplained_counts),
        (0, "new_q", Q_MISTAKES, unexplained_q),
    ):
        check_procedure(
            (new_q, new_counts),
            _update,
            rows,
            run=_given((q, counts, actions, rewards)),
            same=lambda got, want, p=position: close(got[p], want[p]),
            describe=lambda got, want, p=position, m=name: (
                f"{where}, {m} " + describe_difference(got[p], want[p])
            ),
            unexplained=unexplained,
        )


# ---------------------------------------------------------------------------
# Ejercicio 4 · UCB, con los brazos sin probar primero
# ---------------------------------------------------------------------------

_ucb = bandits.ucb_action


def _a(*values: float) -> np.ndarray:
    return np.array(values)


UCB_CASES = [
    (_a(0.9, 0.5, 0.1), _a(3, 2, 0), 6, 2.0),
    (_a(0.2, 0.8, 0.4, 0.1), _a(5, 0, 0, 4), 10, 1.0),
    (_a(1.0, 0.8, 0.0), _a(40, 2, 30), 73, 1.0),
    (_a(1.0, 0.7, 0.2), _a(10, 10, 2), 23, 0.5),
    (_a(0.5, 0.6, 0.45), _a(20, 30, 3), 54, 0.3),
    (_a(2.0, 1.2, 1.0), _a(5, 6, 9), 21, 2.0),
    (_a(1.0, 0.95), _a(2, 50), 53, 1.0),
    (_a(0.2, 0.9, 0.5), _a(3, 9, 14), 27, 1.0),
    (_a(0.7, 0.5, 0.5), _a(20, 23, 7), 51, 0.5),
    (_a(0.0, 0.0, 0.0), _a(0, 0, 0), 1, 2.0),
    # Estos tres separan las variantes del bono que coinciden en los demás: otra
    # base del logaritmo, ln(t + 1) y la suma de counts en lugar de t.
    (_a(0.0, 0.4, 0.6), _a(2, 3, 4), 10, 2.0),
    (_a(0.4, 0.8, 0.1), _a(4, 7, 3), 15, 2.0),
    (_a(0.2, 0.8, 0.4), _a(1, 11, 7), 20, 0.5),
    # Un brazo sin probar muy por debajo de otro: con N(a) + 1 en el bono no
    # sale primero (separa ese error de los del logaritmo).
    (_a(5.0, 0.0), _a(1, 0), 2, 1.0),
]


def _log_base(base: float) -> Callable[..., int]:
    """UCB con el logaritmo en base ``base``: el de referencia con un t cuyo ln
    es log_base(t)."""
    return lambda q, n, t, c: _ucb(q, n, np.exp(np.log(t) / np.log(base)), c)


def _last_untried(q, n, t, c):
    untried = np.flatnonzero(np.asarray(n) == 0)
    return int(untried[-1]) if untried.size else _ucb(q, n, t, c)


_LOG = "El logaritmo del bono es el natural, ln t (np.log), no"
check_ucb_action = values_check(
    MODULE,
    "ucb_action",
    _ucb,
    [
        Mistake(
            "ucb_plus_one",
            lambda q, n, t, c: _ucb(q, n + 1, t, c),
            "Los brazos sin probar (N(a) = 0) van primero. "
            "¿Sumaste 1 a N(a) para no dividir por cero? Eso cambia la fórmula.",
        ),
        Mistake(
            "ucb_last_untried",
            _last_untried,
            "Si hay varios brazos sin probar, devuelve el de menor índice.",
        ),
        Mistake(
            "ucb_no_bonus",
            lambda q, n, t, c: _ucb(q, n, t, 0.0),
            "Falta el bono de incertidumbre "
            "c·sqrt(ln t / N(a)): así es una elección voraz.",
        ),
        Mistake(
            "ucb_no_sqrt",
            # c·sqrt(ln²t / N²) = c·ln t / N
            lambda q, n, t, c: _ucb(q, n**2, np.exp(np.log(t) ** 2), c),
            "¿Olvidaste la raíz cuadrada? El bono es c·sqrt(ln t / N(a)).",
        ),
        Mistake(
            "ucb_c_inside_sqrt",
            lambda q, n, t, c: _ucb(q, n, t, np.sqrt(c)),
            "c multiplica a la raíz, no va dentro: c·sqrt(ln t / N(a)).",
        ),
        Mistake(
            "ucb_no_log",
            lambda q, n, t, c: _ucb(q, n, np.exp(t), c),
            "¿Olvidaste el logaritmo? El bono es c·sqrt(ln t / N(a)).",
        ),
        Mistake("ucb_log2", _log_base(2), f"{_LOG} log2."),
        Mistake("ucb_log10", _log_base(10), f"{_LOG} log10."),
        Mistake(
            "ucb_log_t_plus_one",
            lambda q, n, t, c: _ucb(q, n, t + 1, c),
            "El bono usa ln t, no ln(t + 1): t ya empieza en 1, así que no "
            "hay logaritmo de cero que evitar.",
        ),
        Mistake(
            "ucb_sum_of_counts",
            lambda q, n, t, c: _ucb(q, n, n.sum(), c),
            "En el bono va t, el paso que recibes como argumento, no la suma "
            "de counts: usa el argumento t.",
        ),
        Mistake(
            "ucb_bonus_subtracted",
            lambda q, n, t, c: _ucb(q, n, t, -c),
            "¿El signo? El bono de incertidumbre se suma: favorece a los "
            "brazos poco probados.",
        ),
    ],
    UCB_CASES,
    returns="int",
)

# ---------------------------------------------------------------------------
# Ejercicio 5 · softmax estable
# ---------------------------------------------------------------------------


def _softmax_naive(h):
    z = np.exp(np.asarray(h, dtype=float))
    return z / z.sum()


check_softmax = values_check(
    MODULE,
    "softmax",
    bandits.softmax,
    [
        Mistake(
            "softmax_overflow",
            _softmax_naive,
            "Con preferencias grandes exp(H) desborda (inf/inf = NaN) o se "
            "anula (0/0). Resta el máximo de H antes de exp: el resultado no "
            "cambia y no desborda.",
        ),
        Mistake(
            "softmax_minus_min",
            lambda h: _softmax_naive(h - np.min(h)),
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
            lambda h: h / np.sum(h),
            "Softmax usa exponenciales: exp(H(a)) / Σ exp(H(b)), no H(a) / Σ H(b).",
        ),
        Mistake(
            "softmax_sign",
            lambda h: bandits.softmax(-h),
            "¿El signo? Una preferencia mayor debe dar una probabilidad mayor.",
        ),
    ],
    [
        (_a(0.0, 0.0, 0.0),),
        (_a(1.0, 2.0, 3.0),),
        (_a(-1.0, 0.5, 0.0, 2.0),),
        (_a(1000.0, 1000.0, 999.0),),
        (_a(-1000.0, -1001.0),),
        (_a(50.0, -700.0, 0.0),),
    ],
)

# ---------------------------------------------------------------------------
# Ejercicio 6 · la actualización del bandido de gradiente
# ---------------------------------------------------------------------------

_step = bandits.gradient_bandit_update

check_gradient_bandit_update = values_check(
    MODULE,
    "gradient_bandit_update",
    _step,
    [
        Mistake(
            "gradient_no_baseline",
            lambda h, a, r, b, alpha: _step(h, a, r, 0.0, alpha),
            "¿Olvidaste restar la línea base? La señal es (R − b), no R.",
        ),
        Mistake(
            "gradient_baseline_added",
            lambda h, a, r, b, alpha: _step(h, a, r, -b, alpha),
            "La línea base se resta: (R − b).",
        ),
        Mistake(
            "gradient_sign",
            # (b − R)(1{a=A} − π) y (R − b)(π − 1{a=A}) son el mismo error.
            lambda h, a, r, b, alpha: _step(h, a, b, r, alpha),
            "¿Un signo al revés? Es (R − b)(1{a = A} − π(a)): si la recompensa "
            "supera la línea base, el brazo elegido debe subir.",
        ),
        Mistake(
            "gradient_chosen_only",
            lambda h, a, r, b, alpha: (
                h + np.eye(len(h))[a] * (_step(h, a, r, b, alpha) - h)
            ),
            "También se mueven los brazos no elegidos: bajan en α(R − b)π(a).",
        ),
        Mistake(
            "gradient_no_alpha",
            lambda h, a, r, b, alpha: _step(h, a, r, b, 1.0),
            "¿Olvidaste multiplicar por α?",
        ),
    ],
    [
        (_a(0.0, 0.0, 0.0), 1, 1.0, 0.0, 0.1),
        (_a(0.5, -0.2, 0.1), 0, 2.0, 1.5, 0.5),
        (_a(1.0, 0.0, -1.0, 0.5), 2, 0.0, 1.0, 0.2),
        (_a(0.3, 0.3), 1, 4.0, 4.5, 1.0),
    ],
    # Con la softmax de referencia: un error en tu softmax ya cuenta en su
    # ejercicio y no debe costar puntos también aquí.
    uses={"softmax": bandits.softmax},
)

# ---------------------------------------------------------------------------
# Ejercicio 7 · el bucle del bandido de gradiente
# ---------------------------------------------------------------------------


def bernoulli_pull(q_star: list[float]) -> Callable[[int, np.random.Generator], float]:
    """Un bandido de Bernoulli diminuto: ``pull(arm, rng)`` da 1 con prob. q*."""
    return lambda arm, rng: float(rng.random() < q_star[arm])


def gaussian_pull(q_star: list[float]) -> Callable[[int, np.random.Generator], float]:
    """Un bandido gaussiano diminuto: ``pull(arm, rng) = q*(arm) + N(0, 1)``."""
    return lambda arm, rng: float(q_star[arm] + rng.standard_normal())


# (pull, k, n_steps, alpha, semilla): problemas pequeños y fijos.
TRAIN_CASES = [
    (bernoulli_pull([0.2, 0.8, 0.5]), 3, 8, 0.4, 0),
    (gaussian_pull([4.0, 4.5]), 2, 12, 0.3, 1),
    (bernoulli_pull([0.1, 0.3, 0.9, 0.5]), 4, 40, 0.25, 2),
]


def _train(
    pull, k, n_steps, alpha, rng, *, baseline="previous", mean_first=False, greedy=False
):
    """El bucle con un error típico en el orden de sus etapas (con las
    referencias de los ejercicios 1, 5 y 6)."""
    preferences, mean, actions = np.zeros(k), 0.0, []
    for t in range(1, n_steps + 1):
        pi = bandits.softmax(preferences)
        action = int(np.argmax(pi)) if greedy else int(rng.choice(k, p=pi))
        reward = pull(action, rng)
        new_mean = _mean(mean, reward, t)
        mean = new_mean if mean_first else mean
        base = {"previous": reward if t == 1 else mean, "mean": mean}.get(baseline, 0.0)
        preferences = _step(preferences, action, reward, base, alpha)
        mean = new_mean
        actions.append(action)
    return preferences, actions


TRAIN_MISTAKES: list[Mistake] = [
    Mistake(
        "train_returns_pi",
        on_output(
            bandits.gradient_bandit_train,
            lambda out: (bandits.softmax(out[0]), out[1]),
            "π",
        ),
        "Devolviste π = softmax(H), las probabilidades de la política: el "
        "ejercicio pide las preferencias H, lo que se actualiza en cada paso "
        "(π sale de ellas).",
    ),
    Mistake(
        "train_mean_first",
        variant_of(_train, mean_first=True),
        "La línea base del paso t es la media de las recompensas anteriores: "
        "actualiza la media después de usarla (etapa 6), no antes. Con R_t dentro, "
        "la señal R − R̄ se encoge y el método aprende más despacio.",
    ),
    Mistake(
        "train_no_baseline",
        variant_of(_train, baseline="none"),
        "Falta la línea base: la señal es R − R̄, no R.",
    ),
    Mistake(
        "train_first_baseline_zero",
        variant_of(_train, baseline="mean"),
        "En el primer paso todavía no hay recompensas anteriores: el enunciado "
        "usa R̄_1 = R_1 (la primera actualización no mueve nada), no una media "
        "de 0.",
    ),
    Mistake(
        "train_greedy",
        variant_of(_train, greedy=True),
        "La acción se muestrea de π con rng.choice(k, p=π); el argmax de π es "
        "una política voraz y deja de explorar.",
    ),
]


@exercise(
    MODULE,
    "gradient_bandit_train",
    # Con las referencias de los ejercicios 1, 5 y 6: un error en ellos ya
    # cuenta en su ejercicio.
    uses={
        "softmax": bandits.softmax,
        "gradient_bandit_update": _step,
        "incremental_mean": _mean,
    },
)
def check_gradient_bandit_train(
    gradient_bandit_train: Callable[..., Any], cases=TRAIN_CASES
) -> None:
    """Comprueba ``gradient_bandit_train(pull, k, n_steps, alpha, rng)``: con la
    misma semilla, los mismos brazos y las mismas preferencias finales."""
    cases = list(cases)
    results = []
    for pull, k, n_steps, alpha, seed in cases:
        rng = np.random.default_rng(seed)
        result = call(
            gradient_bandit_train, "gradient_bandit_train", pull, k, n_steps, alpha, rng
        )
        if not isinstance(result, tuple | list) or len(result) != 2:
            fail(
                "gradient_bandit_train debe devolver dos cosas: (preferences, "
                "actions), las preferencias finales y la lista de brazos elegidos.",
                "train_not_a_pair",
            )
        actions = [as_int(a, "Cada acción") for a in result[1]]
        results.append((as_array(result[0], "preferences"), actions))

    def run(implementation: Any) -> list[tuple[Any, ...]]:
        if implementation is gradient_bandit_train:
            return results
        return [
            implementation(pull, k, n_steps, alpha, np.random.default_rng(seed))
            for pull, k, n_steps, alpha, seed in cases
        ]

    def same(got, want) -> bool:
        return all(
            list(got_a) == list(want_a) and close(got_h, want_h)
            for (got_h, got_a), (want_h, want_a) in zip(got, want, strict=True)
        )

    def first(got, want) -> tuple[str, tuple[Any, ...], tuple[Any, ...]]:
        index = next(i for i in range(len(cases)) if not same([got[i]], [want[i]]))
        _, k, n_steps, alpha, _ = cases[index]
        return (
            f"Con k = {k}, {n_steps} pasos, α = {number(alpha, 2)}",
            got[index],
            want[index],
        )

    def describe(got, want) -> str:
        where, (got_h, got_a), (want_h, want_a) = first(got, want)
        if len(got_a) != len(want_a):
            fail(
                f"{where}: devolviste {len(got_a)} acciones y debían ser "
                f"{len(want_a)}, una por paso.",
                "train_wrong_number_of_actions",
            )
        if list(got_a) != list(want_a):
            step = next(
                i for i, (g, w) in enumerate(zip(got_a, want_a, strict=True)) if g != w
            )
            return (
                f"{where}: en el paso {step + 1} elegiste el brazo {got_a[step]} y "
                f"la referencia, con la misma semilla, el {want_a[step]}."
            )
        return (
            f"{where}: eliges los mismos brazos, pero tus preferencias "
            "finales no son las de la referencia: tu función "
            + describe_difference(got_h, want_h)
        )

    def unexplained(got, want) -> NoReturn:
        intro = describe(got, want)
        _, (got_h, got_a), (want_h, want_a) = first(got, want)
        if list(got_a) == list(want_a):
            _rounded(got_h, want_h, intro)
        fail(
            f"{intro}\nSigue las etapas en orden y usa el generador solo en dos "
            "sitios: rng.choice(k, p=π) para elegir y pull(A, rng) para cobrar. "
            "Si algo cambia de paso en paso, revisa qué línea base usas en el "
            "paso t.",
            "train_wrong",
        )

    check_procedure(
        gradient_bandit_train,
        bandits.gradient_bandit_train,
        TRAIN_MISTAKES,
        run=run,
        same=same,
        describe=describe,
        unexplained=unexplained,
    )
