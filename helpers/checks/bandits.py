"""Comprobaciones del módulo 01 · Bandidos."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from helpers import bandits
from helpers.checks import (
    as_array,
    as_int,
    as_tuple,
    call,
    check_procedure,
    close,
    describe_difference,
    diagnoses,
    exercise,
    fail,
    on_output,
    patched,
    python_number,
    values_check,
    variant_of,
    with_args,
    with_messages,
)
from helpers.formatting import number, numbers, percent

MODULE = "01_bandidos"
_values = functools.partial(values_check, MODULE)

#: Los diagnósticos sin variante; {f}: las frecuencias de cada brazo.
_SAID = diagnoses(
    """
not_an_arm: epsilon_greedy devolvió {action}, que no es un brazo válido (0 a {last}).
    ¿Devolviste el valor Q en lugar del índice del brazo?
global_random: Con el mismo rng (misma semilla) tu función eligió brazos distintos.
    ¿Usaste np.random o random en lugar del rng que recibes como argumento?
explores_when_greedy: Con ε = 0 no debías explorar nunca, pero elegiste brazos al azar
    (frecuencias: {f}). ¿Comparas al revés? Explora solo cuando rng.random() < ε.
argmin: Con ε = 0 y Q = [1, 5, 2] debías elegir siempre el brazo 1 y elegiste otro.
    ¿Usaste argmin en vez de argmax? Frecuencias: {f}.
greedy_wrong_arm: Con ε = 0 y Q = [1, 5, 2] debías elegir siempre el brazo 1;
    frecuencias: {f}. ¿Exploras aunque ε valga 0? Usa el ε que recibes como argumento,
    no uno escrito a mano.
ties_first_max: Con ε = 0 y Q = [3, 1, 3, 3] elegiste siempre el brazo 0. np.argmax
    devuelve siempre el primer máximo: desempata al azar entre los brazos empatados
    (por ejemplo con np.flatnonzero(q == q.max()) y rng.choice).
ties_not_uniform: Con ε = 0 y Q = [3, 1, 3, 3] los brazos 0, 2 y 3 deberían salir cada
    uno ≈ 1/3 de las veces y el 1 nunca. Frecuencias: {f}.
ties_noise_too_large: Con ε = 0 y Q = [0,50; 0,52; 0,10] debías elegir siempre el brazo
    1, el único máximo; frecuencias: {f}. ¿Desempatas sumando ruido a Q? Un ruido que no
    es diminuto cambia el orden de dos brazos que no estaban empatados: reúne los
    empatados (np.flatnonzero(q == q.max())) y deja que rng elija uno.
epsilon_inverted: Con ε = 1 debías explorar siempre, pero casi siempre elegiste el mejor
    brazo. ¿La rama que explora se queda sin efecto (falta un else o un return), o al
    explorar das más peso a los brazos de Q alto? Explora cuando rng.random() < ε, con
    un brazo uniforme entre los k.
explore_excludes_best: Con ε = 1 nunca elegiste el mejor brazo. Al explorar, elige
    uniforme entre todos los brazos, también el mejor.
explore_not_uniform: Con ε = 1 y 5 brazos cada brazo debería salir ≈ 20 % de las veces.
    Frecuencias: {f}.
wrong_best_frequency: Con ε = 0,2 y 4 brazos, el mejor debería salir 1 − ε + ε/4 = 85 %
    de las veces; salió {f}.
step_not_four: testbed_step debe devolver cuatro cosas, en este orden: (actions,
    rewards, new_q, new_counts)
actions_shape: actions tiene forma {shape} y debía tener forma ({n},): una acción por
    ejecución. ¿Elegiste con argmax sin axis=1, o se mezclaron por broadcasting un (n,)
    y un (n, 1)?
actions_not_indices: actions debe tener índices de brazo enteros, de 0 a {last};
    devolviste {got}. ¿Devolviste valores (de Q o recompensas) en vez de índices, o
    cambiaste el orden? Es (actions, rewards, new_q, new_counts).
step_greedy_not_max: Con ε = 0 nadie explora, y la ejecución {row} eligió el brazo
    {arm}, que no es de valor máximo en su fila.
step_random_order: Revisa el orden de los números aleatorios: la moneda rng.random(n),
    los brazos al azar rng.integers(k, size=n), el ruido de desempate rng.random((n, k))
    y, al final, el de las recompensas; cada uno para todas las ejecuciones a la vez.
rewards_matrix: En el caso {case}, rewards tiene forma {shape} y debía tener forma
    ({n},): una recompensa por ejecución. ¿Indexaste con q_star[:, actions]? Eso da una
    matriz; cada ejecución i cobra solo su casilla (i, A_i).
reward_noise: El ruido de las recompensas es rng.standard_normal(n), sacado después de
    los otros tres: R_i = q*(i, A_i) + ruido_i.
rounded: Parece redondeado a {d} decimales: no redondees antes de devolver; la
    comprobación compara con todas las cifras.
update_shape: {where}, {name} tiene forma {shape} y debía tener la de la entrada,
    {want}.
counts_wrong: Solo cambia N(i, A_i), y en 1, en cada fila i.
q_other_arms_changed: Cambiaste Q de brazos que no se eligieron: en cada fila solo se
    actualiza el brazo elegido.
q_wrong: Es la media incremental del brazo elegido: Q + (R − Q) / N, con la N nueva.
train_not_a_pair: gradient_bandit_train debe devolver dos cosas, (preferences,
    actions): las preferencias finales y la lista de brazos elegidos
train_wrong_number_of_actions: {where}: devolviste {sizes[0]} acciones y debían ser
    {sizes[1]}, una por paso.
train_wrong: Sigue las etapas en orden y usa el generador solo en dos sitios:
    rng.choice(k, p=π) para elegir y pull(A, rng) para cobrar. Si algo cambia de paso
    en paso, revisa qué línea base usas en el paso t.
"""
)


def _fail(intro: str, mistake: str, **values: Any) -> NoReturn:
    """Falla con ``intro`` y, en otra línea, el diagnóstico ``mistake``."""
    fail(f"{intro}\n" + _SAID[mistake].message.format(**values), mistake)


def _rounded(got: np.ndarray, want: np.ndarray, intro: str) -> None:
    """Falla si ``got`` es ``want`` redondeado a 0–3 decimales."""
    for d in range(4):
        if close(got, np.round(want, d), atol=1e-9):
            _fail(intro, "rounded", d=d)


def _runs(student, cases, unpack) -> Callable[[Any], list[Any]]:
    """El ``run`` de check_procedure: las salidas del estudiante o las de ``f``."""
    mine, rng = [unpack(student, case) for case in cases], np.random.default_rng
    return lambda f: mine if f is student else [f(*c[:-1], rng(c[-1])) for c in cases]


# --- Ejercicio 1 · media incremental

_mean = bandits.incremental_mean
MEAN_MISTAKES = with_messages(
    """
mean_not_divided: ¿Olvidaste dividir por count? Así la estimación es solo la última
    recompensa.
mean_count_minus_one: ¿Dividiste entre count − 1? count ya cuenta la recompensa nueva.
mean_count_plus_one: ¿Dividiste entre count + 1? count ya cuenta la recompensa nueva.
mean_sign: ¿El signo? La estimación debe moverse hacia la recompensa: Q + (R − Q)/n.
mean_of_two: Eso es la media entre la estimación y la recompensa: la recompensa nueva
    pesa 1/count, no 1/2.
mean_times_count: ¿Multiplicaste por count en vez de dividir?
""",
    ("mean_not_divided", with_args(_mean, count=1)),
    ("mean_count_minus_one", lambda q, r, n: _mean(q, r, n - 1)),
    ("mean_count_plus_one", lambda q, r, n: _mean(q, r, n + 1)),
    ("mean_sign", lambda q, r, n: _mean(q, 2 * q - r, n)),
    ("mean_of_two", with_args(_mean, count=2)),
    ("mean_times_count", with_args(_mean, count=lambda a: 1 / a.count)),
)
# El último, con decimales que no acaban: un redondeo no pasa desapercibido.
_MEAN = [(2.0, 5.0, 4), (0.0, 1.0, 1), (3.0, -1.0, 2), (1.5, 1.5, 7), (1.0, 2.0, 3)]
check_incremental_mean = _values("incremental_mean", _mean, MEAN_MISTAKES, _MEAN)

# --- Ejercicio 2 · ε-greedy con desempate al azar


def _action(value: Any) -> int:
    if hasattr(value, "ndim") and not isinstance(value, np.generic):
        python_number(value, "La acción que devuelve epsilon_greedy", "int")
    return as_int(value, "La acción")


def _actions(epsilon_greedy, q_values, epsilon, n, seed) -> list[int]:
    rng, q = np.random.default_rng(seed), np.array(q_values, dtype=float)
    # La entrada se vigila (¿la modifica?) solo al principio: miles de copias, lento.
    watched = [call] * 60 + [lambda f, _, *args: f(*args)] * n
    args = (epsilon_greedy, "epsilon_greedy", q, epsilon, rng)
    return [_action(watch(*args)) for watch in watched[:n]]


def _expect(ok: bool, mistake: str, f: str = "") -> None:
    if not ok:
        _SAID[mistake].fail(f=f)


@exercise(MODULE, "epsilon_greedy")
def check_epsilon_greedy(epsilon_greedy: Callable[..., Any], seed: int = 0) -> None:
    """Comprueba ``epsilon_greedy(q_values, epsilon, rng)`` con frecuencias."""

    def frequencies(q_values, epsilon, n, offset) -> np.ndarray:
        actions = _actions(epsilon_greedy, q_values, epsilon, n, seed + offset)
        for action in actions:
            if not 0 <= action < len(q_values):
                _SAID["not_an_arm"].fail(action=action, last=len(q_values) - 1)
        return np.bincount(actions, minlength=len(q_values)) / n

    # 1. Usa el rng que recibe: mismas semillas, mismas elecciones.
    runs = [_actions(epsilon_greedy, [1, 1, 1, 0], 0.5, 60, seed) for _ in "ab"]
    _expect(runs[0] == runs[1], "global_random")
    # 2. Sin exploración elige el mejor brazo, no el peor.
    greedy = frequencies([1.0, 5.0, 2.0], 0.0, 200, 0)
    shown = numbers(greedy, 2)
    _expect(greedy.max() >= 0.6, "explores_when_greedy", shown)
    _expect(greedy[0] < 1 and greedy[2] < 1, "argmin", shown)
    _expect(greedy[1] == 1, "greedy_wrong_arm", shown)
    # 3. Los empates se deshacen al azar. Tamaños con ≥ 4 errores típicos de margen
    # en cada tolerancia, y baratos: se ejecuta en cada entrega al calificar.
    ties = frequencies([3.0, 1.0, 3.0, 3.0], 0.0, 2000, 1)
    _expect(ties[0] < 1, "ties_first_max")
    uniform = ties[1] == 0 and np.abs(ties[[0, 2, 3]] - 1 / 3).max() <= 0.05
    _expect(uniform, "ties_not_uniform", numbers(ties, 3))
    # Un ruido de desempate que no es diminuto reordena valores cercanos sin empate.
    near = frequencies([0.5, 0.52, 0.1], 0.0, 200, 4)
    _expect(near[1] == 1, "ties_noise_too_large", numbers(near, 2))
    # 4. Con ε = 1 explora siempre, entre TODOS los brazos.
    explore = frequencies([0.0, 10.0, 0.0, 0.0, 0.0], 1.0, 3000, 2)
    _expect(explore[1] <= 0.9, "epsilon_inverted")
    _expect(explore[1] >= 0.05, "explore_excludes_best")
    uniform = np.abs(explore - 0.2).max() <= 0.03
    _expect(uniform, "explore_not_uniform", numbers(explore, 3))
    # 5. Con ε = 0,2 y 4 brazos: P(mejor) = 1 − ε + ε/k = 0,85. (Explorar con
    # probabilidad 1 − ε no llega aquí: lo dice el paso 2.)
    best = frequencies([0.0, 0.0, 1.0, 0.0], 0.2, 5000, 3)[2]
    _expect(abs(best - 0.85) <= 0.02, "wrong_best_frequency", percent(best))


# --- Ejercicio 3 · un paso del banco de pruebas, en todas las ejecuciones a la vez
# (dos celdas calificadas: elegir y cobrar; actualizar)


def testbed_cases(seed: int) -> list[tuple[Any, ...]]:
    """Casos ``(q, counts, q_star, epsilon, seed_del_rng)`` para ``testbed_step``:
    empates (también de toda la fila), brazos sin probar y ε = 0, intermedio y 1."""
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


def _student_step(testbed_step, case, watch_inputs=False) -> tuple[np.ndarray, ...]:
    """Las cuatro salidas, de forma y tipo comprobados (q y counts: al actualizar)."""
    rng, free = np.random.default_rng(case[4]), () if watch_inputs else (0, 1)
    out = call(testbed_step, "testbed_step", *case[:4], rng, may_modify=free)
    out = as_tuple(out, 4, _SAID["step_not_four"].message, mistake="step_not_four")
    (n, k), actions = case[0].shape, as_array(out[0], "actions")
    if actions.shape != (n,):
        _SAID["actions_shape"].fail(shape=actions.shape, n=n)
    if np.any(actions != np.round(actions)) or np.any((actions < 0) | (actions >= k)):
        _SAID["actions_not_indices"].fail(last=k - 1, got=numbers(actions, 2))
    names = ("rewards", "new_q", "new_counts")
    return actions.astype(int), *map(as_array, out[1:], names)


_testbed = bandits.testbed_step


def _choose(q, epsilon, rng, *, below=True, order="arms", ties=None):
    """``_epsilon_greedy_rows`` con un error: explorar si u ≥ ε (``below=False``),
    el ruido de desempate antes que los brazos (``order="noise"``), brazos solo
    para las que exploran (``order="explorers"``) u otro desempate (``ties``)."""
    n, k = q.shape
    ties = ties or bandits._argmax_random_tie_rows
    explore = (rng.random(n) < epsilon) == below
    greedy = ties(q, rng) if order == "noise" else None
    who = explore if order == "explorers" else np.full(n, True)
    arms = np.zeros(n, dtype=int)
    arms[who] = rng.integers(k, size=int(who.sum()))
    return np.where(explore, arms, ties(q, rng) if greedy is None else greedy)


def _choosing(**wrong: Any) -> Callable[..., Any]:
    return patched(_testbed, _epsilon_greedy_rows=variant_of(_choose, **wrong))


def _matrix_ties(q, rng):
    """El desempate con los brazos que alcanzan el máximo de toda la matriz."""
    return np.argmax(rng.random(q.shape) * (q == q.max()), axis=1)


ACTION_MISTAKES = with_messages(
    """
step_ties_first_max: Cuando una fila tiene varios brazos empatados en el máximo,
    np.argmax se queda siempre con el primero. Desempata con el ruido del paso 3: entre
    los empatados, el de mayor ruido.
step_ties_whole_matrix: Los empatados son los que alcanzan el máximo de su propia fila,
    no el máximo de toda la matriz: cada ejecución es un bandido distinto (piensa en
    axis=1 y keepdims=True).
step_epsilon_inverted: ¿Comparas al revés? La ejecución i explora cuando su número
    es < ε.
step_arms_only_explorers: Saca los brazos al azar para todas las ejecuciones (size=n),
    también para las que no exploran: así los números aleatorios salen en el orden del
    enunciado y tu resultado se puede comparar.
step_noise_before_arms: Sacaste el ruido de desempate antes que los brazos al azar. El
    orden del enunciado es: la moneda, los brazos al azar, el ruido de desempate y el
    ruido de las recompensas.
""",
    ("step_ties_first_max", _choosing(ties=lambda q, _: q.argmax(axis=1))),
    ("step_ties_whole_matrix", _choosing(ties=_matrix_ties)),
    ("step_epsilon_inverted", _choosing(below=False)),
    ("step_arms_only_explorers", _choosing(order="explorers")),
    ("step_noise_before_arms", _choosing(order="noise")),
)

_without_noise = patched(_testbed, _pull=lambda q_star, a, _: q_star[range(len(a)), a])
REWARD_MISTAKES = with_messages(
    """
reward_without_noise: Falta el ruido: R_i = q*(i, A_i) + un número normal estándar (el
    paso 4).
reward_from_estimates: La recompensa sale de los valores verdaderos q_star, no de tus
    estimaciones q.
""",
    ("reward_without_noise", _without_noise),
    ("reward_from_estimates", with_args(_testbed, q_star=lambda a: a.q)),
)


def _rewards_shape(index: int, rewards: np.ndarray, n: int) -> None:
    if rewards.shape != (n,):
        _SAID["rewards_matrix"].fail(case=index + 1, shape=rewards.shape, n=n)


@exercise(MODULE, "testbed_step")
def check_testbed_step(testbed_step: Callable[..., Any], cases=TESTBED_CASES) -> None:
    """Comprueba las acciones de ``testbed_step`` y, después, sus recompensas."""
    cases = list(cases)
    run = _runs(testbed_step, cases, _student_step)

    def first(got, want, part: int) -> int:
        return next(i for i, g in enumerate(got) if not close(g[part], want[i][part]))

    def describe(got, want, i=None) -> str:
        i = first(got, want, 0) if i is None else i
        (n, k), epsilon = cases[i][0].shape, number(cases[i][3], 2)
        return (
            f"En el caso {i + 1} (n = {n}, k = {k}, ε = {epsilon}) tus acciones son "
            f"{numbers(got[i][0], 0)} y debían ser {numbers(want[i][0], 0)}."
        )

    def unexplained(got, want) -> NoReturn:
        # Con ε = 0 nadie explora: un brazo que no es máximo en su fila no es
        # cuestión del orden de los números aleatorios.
        for c, (q, *_, epsilon, _) in enumerate(cases):
            wrong = [(i, a) for i, a in enumerate(got[c][0]) if q[i, a] < q[i].max()]
            if epsilon == 0.0 and wrong:
                row, arm = wrong[0]
                _fail(describe(got, want, c), "step_greedy_not_max", row=row, arm=arm)
        _fail(describe(got, want), "step_random_order")

    def describe_rewards(got, want) -> str:
        i = first(got, want, 1)
        g, w = got[i][1], want[i][1]
        return f"En el caso {i + 1}, rewards {describe_difference(g, w)}"

    def unexplained_rewards(got, want) -> NoReturn:
        i = first(got, want, 1)
        _rewards_shape(i, got[i][1], len(got[i][0]))
        _rounded(got[i][1], want[i][1], describe_rewards(got, want))
        _fail(describe_rewards(got, want), "reward_noise")

    # Primero las acciones; después, con ellas ya bien, las recompensas.
    for p, rows, d, u in (
        (0, ACTION_MISTAKES, describe, unexplained),
        (1, REWARD_MISTAKES, describe_rewards, unexplained_rewards),
    ):

        def same(got, want, p=p) -> bool:
            return all(close(g[p], w[p]) for g, w in zip(got, want, strict=True))

        check_procedure(
            testbed_step, _testbed, rows, run=run, same=same, describe=d, unexplained=u
        )


def _update(q, counts, a, r):
    """``(new_q, new_counts)`` de la referencia con las acciones a y recompensas r."""
    given = patched(_testbed, _epsilon_greedy_rows=lambda *_: a, _pull=lambda *_: r)
    with np.errstate(all="ignore"):
        return given(q, counts, q, 0.0, None)[2:]


def _columns(q, counts, actions, rewards):
    """La actualización con [:, actions]: columnas enteras, en todas las filas."""
    new_q, new_counts = np.array(q, dtype=float), np.array(counts, dtype=float)
    new_counts[:, actions] += 1
    new_q[:, actions] += (rewards - q[:, actions]) / new_counts[:, actions]
    return new_q, new_counts


_COLUMNS = "Con [:, actions] {} columnas enteras, en todas las filas. Cada ejecución"
COUNTS_MISTAKES = with_messages(
    f"""
counts_unchanged: N no cambió: suma 1 al brazo elegido de cada fila.
counts_whole_columns: {_COLUMNS.format("sumas en")} i solo toca su casilla (i, A_i):
    indexa con un array de filas y otro de columnas.
""",
    ("counts_unchanged", lambda q, n, a, r: (q, n)),
    ("counts_whole_columns", _columns),
)
Q_MISTAKES = with_messages(
    f"""
q_divides_by_old_count: Divide entre N contando ya la recompensa nueva (después de
    sumarle 1): con la N de antes, un brazo sin probar da una división por cero.
q_not_divided: ¿Olvidaste dividir entre N? Así Q pasa a ser la última recompensa.
q_whole_columns: {_COLUMNS.format("actualizas")} i solo toca su casilla (i, A_i).
q_unchanged: new_q es la Q de entrada: falta la actualización.
""",
    # Con la N de antes (counts − 1 al entrar) o sin dividir (N = 0 al entrar).
    ("q_divides_by_old_count", lambda q, n, a, r: _update(q, n - 1, a, r)),
    ("q_not_divided", lambda q, n, a, r: _update(q, 0 * n, a, r)),
    ("q_whole_columns", _columns),
    ("q_unchanged", lambda q, n, a, r: (q, n)),
)


@exercise(MODULE, "testbed_step")
def check_testbed_step_update(testbed_step: Callable, cases=TESTBED_CASES) -> None:
    """Comprueba ``new_q`` y ``new_counts`` con las acciones y recompensas del
    propio estudiante (así un error al elegir no cuenta aquí otra vez)."""
    for index, case in enumerate(cases):
        _check_update(index, case, _student_step(testbed_step, case, watch_inputs=True))


def _check_update(index: int, case: tuple[Any, ...], result: tuple[Any, ...]) -> None:
    (q, counts, *_), (n, k) = case, case[0].shape
    actions, rewards, new_q, new_counts = result
    _rewards_shape(index, rewards, n)
    where = f"En el caso {index + 1} (n = {n}, k = {k})"
    for name, got in (("new_counts", new_counts), ("new_q", new_q)):
        if got.shape != q.shape:
            _SAID["update_shape"].fail(
                where=where, name=name, shape=got.shape, want=q.shape
            )

    def describe(p: int, got, want) -> str:
        name = ("new_q", "new_counts")[p]
        return f"{where}, {name} " + describe_difference(got[p], want[p])

    def unexplained(p: int, got, want) -> NoReturn:
        intro = describe(p, got, want)
        if p == 1:
            _fail(intro, "counts_wrong")
        untouched = np.ones((n, k), dtype=bool)
        untouched[np.arange(n), actions] = False
        if not close(got[0][untouched], q[untouched]):
            _fail(intro, "q_other_arms_changed")
        _rounded(got[0], want[0], intro)
        _fail(intro, "q_wrong")

    def run(f):
        return f(q, counts, actions, rewards) if callable(f) else f

    for p, rows in ((1, COUNTS_MISTAKES), (0, Q_MISTAKES)):
        check_procedure(
            result[2:],
            _update,
            rows,
            run=run,
            same=lambda got, want, p=p: close(got[p], want[p]),
            describe=functools.partial(describe, p),
            unexplained=functools.partial(unexplained, p),
        )


# --- Ejercicio 4 · UCB, con los brazos sin probar primero

_ucb = bandits.ucb_action

_UCB = [([0.9, 0.5, 0.1], [3, 2, 0], 6, 2), ([0.2, 0.8, 0.4, 0.1], [5, 0, 0, 4], 10, 1)]
_UCB += [([1.0, 0.8, 0.0], [40, 2, 30], 73, 1), ([1, 0.7, 0.2], [10, 10, 2], 23, 0.5)]
_UCB += [([0.5, 0.6, 0.45], [20, 30, 3], 54, 0.3), ([2, 1.2, 1], [5, 6, 9], 21, 2)]
_UCB += [([1.0, 0.95], [2, 50], 53, 1), ([0.2, 0.9, 0.5], [3, 9, 14], 27, 1)]
_UCB += [([0.7, 0.5, 0.5], [20, 23, 7], 51, 0.5), ([0, 0, 0], [0, 0, 0], 1, 2)]
# Estos tres separan las variantes del bono que coinciden en los demás: otra
# base del logaritmo, ln(t + 1) y la suma de counts en lugar de t.
_UCB += [([0, 0.4, 0.6], [2, 3, 4], 10, 2), ([0.4, 0.8, 0.1], [4, 7, 3], 15, 2)]
_UCB += [([0.2, 0.8, 0.4], [1, 11, 7], 20, 0.5)]
# Un brazo sin probar muy por debajo de otro: con N(a) + 1 en el bono no
# sale primero (separa ese error de los del logaritmo).
_UCB += [([5.0, 0.0], [1, 0], 2, 1)]
UCB_CASES = [(np.array(q, float), np.array(n), t, float(c)) for q, n, t, c in _UCB]


def _last_untried(q, n, t, c):
    untried = np.flatnonzero(np.asarray(n) == 0)
    return int(untried[-1]) if untried.size else _ucb(q, n, t, c)


_BONUS = "El bono es c·sqrt(ln t / N(a))."
_LOG = "El logaritmo del bono es el natural, ln t (np.log), no"
UCB_MISTAKES = with_messages(
    f"""
ucb_plus_one: Los brazos sin probar (N(a) = 0) van primero. ¿Sumaste 1 a N(a) para no
    dividir por cero? Eso cambia la fórmula.
ucb_last_untried: Si hay varios brazos sin probar, devuelve el de menor índice.
ucb_no_bonus: Falta el bono de incertidumbre c·sqrt(ln t / N(a)): así es una elección
    voraz.
ucb_no_sqrt: ¿Olvidaste la raíz cuadrada? {_BONUS}
ucb_c_inside_sqrt: c multiplica a la raíz, no va dentro: c·sqrt(ln t / N(a)).
ucb_no_log: ¿Olvidaste el logaritmo? {_BONUS}
ucb_log2: {_LOG} log2.
ucb_log10: {_LOG} log10.
ucb_log_t_plus_one: El bono usa ln t, no ln(t + 1): t ya empieza en 1, así que no hay
    logaritmo de cero que evitar.
ucb_sum_of_counts: En el bono va t, el paso que recibes como argumento, no la suma de
    counts: usa el argumento t.
ucb_bonus_subtracted: ¿El signo? El bono de incertidumbre se suma: favorece a los brazos
    poco probados.
""",
    ("ucb_plus_one", with_args(_ucb, counts=lambda a: a.counts + 1)),
    ("ucb_last_untried", _last_untried),
    ("ucb_no_bonus", with_args(_ucb, c=0.0)),
    # c·sqrt(ln²t / N²) = c·ln t / N, y t^(ln t) = exp(ln²t)
    ("ucb_no_sqrt", lambda q, n, t, c: _ucb(q, n * n, t ** np.log(t), c)),
    ("ucb_c_inside_sqrt", with_args(_ucb, c=lambda a: np.sqrt(a.c))),
    ("ucb_no_log", with_args(_ucb, t=lambda a: np.exp(a.t))),
    # ln(t^(1/ln b)) = log_b(t)
    ("ucb_log2", with_args(_ucb, t=lambda a: a.t ** (1 / np.log(2)))),
    ("ucb_log10", with_args(_ucb, t=lambda a: a.t ** (1 / np.log(10)))),
    ("ucb_log_t_plus_one", with_args(_ucb, t=lambda a: a.t + 1)),
    ("ucb_sum_of_counts", with_args(_ucb, t=lambda a: a.counts.sum())),
    ("ucb_bonus_subtracted", with_args(_ucb, c=lambda a: -a.c)),
)
check_ucb_action = _values("ucb_action", _ucb, UCB_MISTAKES, UCB_CASES, returns="int")

# --- Ejercicio 5 · softmax estable


_pi = bandits.softmax


def _softmax_naive(h):
    z = np.exp(np.asarray(h, dtype=float))
    return z / z.sum()


SOFTMAX_MISTAKES = with_messages(
    """
softmax_overflow: Con preferencias grandes exp(H) desborda (inf/inf = NaN) o se anula
    (0/0). Resta el máximo de H antes de exp: el resultado no cambia y no desborda.
softmax_minus_min: Resta el máximo, no el mínimo: con H − min(H) los exponentes pueden
    ser enormes y exp desborda.
softmax_not_normalized: ¿Olvidaste dividir por la suma? Las probabilidades deben
    sumar 1.
softmax_no_exp: Softmax usa exponenciales: exp(H(a)) / Σ exp(H(b)), no H(a) / Σ H(b).
softmax_sign: ¿El signo? Una preferencia mayor debe dar una probabilidad mayor.
""",
    ("softmax_overflow", _softmax_naive),
    ("softmax_minus_min", lambda h: _softmax_naive(h - np.min(h))),
    ("softmax_not_normalized", lambda h: np.exp(h - np.max(h))),
    ("softmax_no_exp", lambda h: h / np.sum(h)),
    ("softmax_sign", lambda h: _pi(-h)),
)
_H = [(0, 0, 0), (1, 2, 3), (-1, 0.5, 0, 2), (1000, 1000, 999), (-1000, -1001)]
SOFTMAX_CASES = [(np.array(h, float),) for h in [*_H, (50, -700, 0)]]
check_softmax = _values("softmax", _pi, SOFTMAX_MISTAKES, SOFTMAX_CASES)

# --- Ejercicio 6 · la actualización del bandido de gradiente

_step = bandits.gradient_bandit_update
GRAD_MISTAKES = with_messages(
    """
gradient_no_baseline: ¿Olvidaste restar la línea base? La señal es (R − b), no R.
gradient_baseline_added: La línea base se resta: (R − b).
gradient_sign: ¿Un signo al revés? Es (R − b)(1{a = A} − π(a)): si la recompensa supera
    la línea base, el brazo elegido debe subir.
gradient_chosen_only: También se mueven los brazos no elegidos: bajan en α(R − b)π(a).
gradient_no_alpha: ¿Olvidaste multiplicar por α?
""",
    ("gradient_no_baseline", with_args(_step, baseline=0.0)),
    ("gradient_baseline_added", lambda h, a, r, b, lr: _step(h, a, r, -b, lr)),
    # (b − R)(1{a=A} − π) y (R − b)(π − 1{a=A}) son el mismo error.
    ("gradient_sign", lambda h, a, r, b, lr: _step(h, a, b, r, lr)),
    (
        "gradient_chosen_only",
        lambda h, a, r, b, lr: h + np.eye(len(h))[a] * (_step(h, a, r, b, lr) - h),
    ),
    ("gradient_no_alpha", with_args(_step, alpha=1.0)),
)
_GRAD = [([0, 0, 0], 1, 1.0, 0.0, 0.1), ([0.5, -0.2, 0.1], 0, 2.0, 1.5, 0.5)]
_GRAD += [([1, 0, -1, 0.5], 2, 0.0, 1.0, 0.2), ([0.3, 0.3], 1, 4.0, 4.5, 1.0)]
GRAD_CASES = [(np.array(h, float), *rest) for h, *rest in _GRAD]
# Con la softmax de referencia: un error en ella ya cuenta en su ejercicio.
check_gradient_bandit_update = _values(
    "gradient_bandit_update", _step, GRAD_MISTAKES, GRAD_CASES, uses={"softmax": _pi}
)

# --- Ejercicio 7 · el bucle del bandido de gradiente


def bernoulli_pull(q_star: list[float]) -> Callable[[int, np.random.Generator], float]:
    """Un bandido de Bernoulli diminuto: ``pull(arm, rng)`` da 1 con prob. q*."""
    return lambda arm, rng: float(rng.random() < q_star[arm])


def gaussian_pull(q_star: list[float]) -> Callable[[int, np.random.Generator], float]:
    """Un bandido gaussiano diminuto: ``pull(arm, rng) = q*(arm) + N(0, 1)``."""
    return lambda arm, rng: float(q_star[arm] + rng.standard_normal())


# (pull, k, n_steps, alpha, semilla): problemas pequeños y fijos.
TRAIN_CASES = [(bernoulli_pull([0.2, 0.8, 0.5]), 3, 8, 0.4, 0)]
TRAIN_CASES += [(gaussian_pull([4.0, 4.5]), 2, 12, 0.3, 1)]
TRAIN_CASES += [(bernoulli_pull([0.1, 0.3, 0.9, 0.5]), 4, 40, 0.25, 2)]
_trained = bandits.gradient_bandit_train
# Con las referencias de 1, 5 y 6: un error en ellos ya cuenta en su ejercicio.
_TRAIN_USES = dict(softmax=_pi, gradient_bandit_update=_step, incremental_mean=_mean)


def _train(pull, k, n_steps, alpha, rng, *, wrong=""):
    """El bucle con un error típico (``wrong``) en el orden de sus etapas."""
    preferences, mean, actions = np.zeros(k), 0.0, []
    for t in range(1, n_steps + 1):
        pi = _pi(preferences)
        action = int(np.argmax(pi)) if wrong == "greedy" else int(rng.choice(k, p=pi))
        reward = pull(action, rng)
        new_mean = _mean(mean, reward, t)
        mean = new_mean if wrong == "mean_first" else mean
        base = {"none": 0.0, "mean": mean}.get(wrong, reward if t == 1 else mean)
        preferences = _step(preferences, action, reward, base, alpha)
        mean = new_mean
        actions.append(action)
    return preferences, actions


_returns_pi = on_output(_trained, lambda out: (_pi(out[0]), out[1]), "π")
TRAIN_MISTAKES = with_messages(
    """
train_returns_pi: Devolviste π = softmax(H), las probabilidades de la política: el
    ejercicio pide las preferencias H, lo que se actualiza en cada paso (π sale de
    ellas).
train_mean_first: La línea base del paso t es la media de las recompensas anteriores:
    actualiza la media después de usarla (etapa 6), no antes. Con R_t dentro, la señal
    R − R̄ se encoge y el método aprende más despacio.
train_no_baseline: Falta la línea base: la señal es R − R̄, no R.
train_first_baseline_zero: En el primer paso todavía no hay recompensas anteriores:
    el enunciado usa R̄_1 = R_1 (la primera actualización no mueve nada), no una media
    de 0.
train_greedy: La acción se muestrea de π con rng.choice(k, p=π); el argmax de π es una
    política voraz y deja de explorar.
""",
    ("train_returns_pi", _returns_pi),
    ("train_mean_first", variant_of(_train, wrong="mean_first")),
    ("train_no_baseline", variant_of(_train, wrong="none")),
    ("train_first_baseline_zero", variant_of(_train, wrong="mean")),
    ("train_greedy", variant_of(_train, wrong="greedy")),
)


def _student_train(train, case) -> tuple[np.ndarray, list[int]]:
    rng, promised = np.random.default_rng(case[4]), _SAID["train_not_a_pair"].message
    out = call(train, "gradient_bandit_train", *case[:4], rng)
    out = as_tuple(out, 2, promised, mistake="train_not_a_pair")
    return as_array(out[0], "preferences"), [as_int(a, "Cada acción") for a in out[1]]


def _same_run(got, want) -> bool:
    return list(got[1]) == list(want[1]) and close(got[0], want[0])


@exercise(MODULE, "gradient_bandit_train", uses=_TRAIN_USES)
def check_gradient_bandit_train(
    gradient_bandit_train: Callable[..., Any], cases=TRAIN_CASES
) -> None:
    """Comprueba ``gradient_bandit_train(pull, k, n_steps, alpha, rng)``: con la
    misma semilla, los mismos brazos y las mismas preferencias finales."""
    cases = list(cases)

    def first(got, want) -> tuple[str, tuple[Any, ...], tuple[Any, ...]]:
        i = list(map(_same_run, got, want)).index(False)
        _, k, n_steps, alpha, _ = cases[i]
        return f"Con k = {k}, {n_steps} pasos, α = {number(alpha, 2)}", got[i], want[i]

    def describe(got, want) -> str:
        where, (got_h, got_a), (want_h, want_a) = first(got, want)
        sizes = len(got_a), len(want_a)
        if sizes[0] != sizes[1]:
            _SAID["train_wrong_number_of_actions"].fail(where=where, sizes=sizes)
        for step, (g, w) in enumerate(zip(got_a, want_a, strict=True)):
            if g != w:
                return (
                    f"{where}: en el paso {step + 1} elegiste el brazo {g} y la "
                    f"referencia, con la misma semilla, el {w}."
                )
        return (
            f"{where}: eliges los mismos brazos, pero tus preferencias finales no son "
            f"las de la referencia: tu función {describe_difference(got_h, want_h)}"
        )

    def unexplained(got, want) -> NoReturn:
        intro = describe(got, want)
        _, (got_h, got_a), (want_h, want_a) = first(got, want)
        if list(got_a) == list(want_a):
            _rounded(got_h, want_h, intro)
        _fail(intro, "train_wrong")

    check_procedure(
        gradient_bandit_train,
        _trained,
        TRAIN_MISTAKES,
        run=_runs(gradient_bandit_train, cases, _student_train),
        same=lambda got, want: all(map(_same_run, got, want)),
        describe=describe,
        unexplained=unexplained,
    )
