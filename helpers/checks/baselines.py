"""Comprobaciones del módulo 04 · Varianza y líneas base."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from helpers import baselines
from helpers.checks import (
    Diagnosis,
    Flow,
    Mistake,
    as_array,
    call,
    check_cases,
    check_gradients,
    exercise,
    fail,
    python_number,
    tensor,
)

MODULE = "04_lineas_base"


# ---------------------------------------------------------------------------
# Ejercicio 1 · estimaciones del gradiente por muestra
# ---------------------------------------------------------------------------

SCORE_CASES = [
    (np.zeros(3), np.array([0, 2, 1, 2]), np.array([1.0, 0.0, 1.0, 1.0]), 0.5),
    (np.array([0.3, -0.2]), np.array([1, 0, 0]), np.array([500.0, 520, 480]), 500.0),
    (np.array([1.0, 0, -1]), np.array([2, 0]), np.array([8.0, 2]), np.array([5.0, 3])),
    (np.array([0.5, 0.5, 0.0, -0.5]), np.array([3]), np.array([2.0]), 0.0),
]

#: Logits grandes: la softmax ingenua desborda (``exp(710) = inf``).
SCORE_STABLE_CASES = [
    (np.array([750.0, 0.0]), np.array([1, 0]), np.array([4.0, 2.0]), 1.5),
    (
        np.array([800.0, 799, -5]),
        np.arange(3),
        np.array([1.0, 3, -2]),
        np.array([0.5, 0.5, 1]),
    ),
]


def _naive_softmax(theta):
    return np.exp(theta) / np.exp(theta).sum()


def _score(weight, direction=lambda e, pi, a: e - pi, softmax=None):
    """Una estimación a medias: peso ``weight(R, b)`` por ``direction(e_a, π, a)``."""

    def score_gradients(theta, actions, rewards, baseline):
        pi = (softmax or baselines.softmax_policy)(np.asarray(theta, dtype=float))
        actions = np.asarray(actions, dtype=int)
        w = weight(np.asarray(rewards, dtype=float), np.asarray(baseline, dtype=float))
        return w[:, None] * direction(np.eye(len(pi))[actions], pi, actions)

    return score_gradients


SCORE_MISTAKES = [
    Mistake(
        "score_sign",
        _score(lambda r, b: b - r),
        "El signo está al revés: el peso es (R − b), no (b − R), y "
        "∇log π(a) = one_hot(a) − π. Con el signo cambiado, lo que sale mejor "
        "que la línea base se vuelve menos probable.",
    ),
    Mistake(
        "score_baseline_added",
        _score(lambda r, b: r + b),
        "Sumaste la línea base: el peso es R − b.",
    ),
    Mistake(
        "score_no_baseline",
        _score(lambda r, b: r + 0 * b),
        "No restaste la línea base: el peso de cada muestra es R_i − b_i.",
    ),
    Mistake(
        "score_no_minus_pi",
        _score(lambda r, b: r - b, lambda e, pi, a: e),
        "Falta restar π: ∇_θ log softmax(θ)[a] = one_hot(a) − π.",
    ),
    Mistake(
        "score_grad_pi",
        _score(lambda r, b: r - b, lambda e, pi, a: pi[a][:, None] * (e - pi)),
        "Eso es ∇π(a), no ∇log π(a) = one_hot(a) − π: no multipliques por π(a).",
    ),
    Mistake(
        "score_mean_weight",
        _score(lambda r, b: np.full_like(r, np.mean(r - b))),
        "Cada muestra lleva su propio peso R_i − b_i, no la media de los pesos.",
    ),
    Mistake(
        "score_returns_mean",
        lambda *args: baselines.score_gradients(*args).mean(axis=0),
        "Parece la media de las estimaciones. Queremos una fila por muestra, "
        "forma (N, A), para poder medir su varianza.",
    ),
    Mistake(
        "score_overflow",
        _score(lambda r, b: r - b, softmax=_naive_softmax),
        "Con logits grandes, exp(θ) desborda (exp(710) ya es inf) y inf/inf da "
        "NaN. Restar a θ una misma constante no cambia la softmax: réstale su "
        "máximo antes de exp.",
    ),
]


@exercise(MODULE, "score_gradients")
def check_score_gradients(score_gradients, cases=SCORE_CASES) -> None:
    """Comprueba ``score_gradients(theta, actions, rewards, baseline)``."""
    check_cases(
        score_gradients,
        "score_gradients",
        cases,
        baselines.score_gradients,
        SCORE_MISTAKES,
    )


@exercise(MODULE, "score_gradients", "logits grandes")
def check_score_gradients_stable(score_gradients, cases=SCORE_STABLE_CASES) -> None:
    """Comprueba ``score_gradients`` con logits de cientos (sin desbordar)."""
    check_score_gradients.__wrapped__(score_gradients, cases)


# ---------------------------------------------------------------------------
# Ejercicio 2 · la causalidad, medida: retorno entero frente a recompensa futura
# ---------------------------------------------------------------------------


def _episodes(*pairs: tuple[list[float], list[list[float]]]) -> tuple[list, list]:
    """``(rewards, scores)`` de episodios escritos a mano: listas de arrays."""
    return [np.array(r, dtype=float) for r, _ in pairs], [
        np.array(g, dtype=float) for _, g in pairs
    ]


CAUSAL_CASES = [
    _episodes(
        ([1.0, 2.0], [[0.5, -0.5], [-0.5, 0.5]]),
        ([3.0, 0.0, 1.0], [[1.0, 0.0], [0.0, 1.0], [-1.0, 1.0]]),
        ([2.0], [[0.25, -0.25]]),
    ),
    _episodes(
        ([5.0, 4.5, 5.5], [[0.6, -0.3, -0.3], [-0.4, 0.7, -0.3], [-0.4, -0.3, 0.7]]),
        ([4.8, 5.2, 5.0], [[-0.4, -0.3, 0.7], [-0.4, -0.3, 0.7], [0.6, -0.3, -0.3]]),
        ([5.1, 4.9, 5.3], [[-0.4, 0.7, -0.3], [0.6, -0.3, -0.3], [0.6, -0.3, -0.3]]),
        ([4.7, 5.0, 5.4], [[0.6, -0.3, -0.3], [-0.4, 0.7, -0.3], [-0.4, -0.3, 0.7]]),
    ),
    _episodes(
        ([-1.0, 0.0, 2.0, 0.5], [[1.0], [-2.0], [0.5], [1.5]]),
        ([1.0], [[-1.0]]),
        ([0.0, 3.0], [[2.0], [-1.0]]),
    ),
]


def _pair_of_numbers(out: Any) -> tuple[float, float]:
    """Las dos varianzas del estudiante, o un fallo que dice qué se esperaba."""
    if not isinstance(out, tuple | list) or len(out) != 2:
        fail(
            "estimator_variances debe devolver dos números, (varianza con el "
            "retorno entero, varianza con la recompensa futura); devolvió "
            f"{type(out).__name__}.",
            "variances_not_a_pair",
        )
    values = []
    for name, value in zip(("La primera", "La segunda"), out, strict=True):
        # La forma antes que el tipo: a un array de P varianzas no le sirve
        # float(...), le falta sumarlas.
        array = as_array(value, "El resultado")
        if array.size != 1:
            fail(
                f"{name} varianza tiene forma {array.shape}: cada varianza es un "
                "solo número, la suma de las varianzas de las P componentes de "
                "las N estimaciones (una por episodio).",
                "variance_not_a_number",
            )
        python_number(value, f"{name} varianza")
        values.append(float(array.reshape(())))
    return values[0], values[1]


def _part(fn: Callable[..., Any], index: int) -> Callable[..., Any]:
    """Solo una de las dos varianzas (cada celda mira una)."""
    return functools.wraps(fn)(lambda r, s: _pair_of_numbers(fn(r, s))[index])


def _variances(weigh, variance=baselines.total_variance):
    """Un estimador a medias: ``weigh(r)`` da los pesos de los dos estimadores."""

    def estimator_variances(episode_rewards, episode_scores):
        pairs = zip(episode_rewards, episode_scores, strict=True)
        weights = [(weigh(np.asarray(r, dtype=float)), np.asarray(s)) for r, s in pairs]
        full = np.array([w_full @ s for (w_full, _), s in weights])
        to_go = np.array([w_to_go @ s for (_, w_to_go), s in weights])
        return variance(full), variance(to_go)

    return estimator_variances


def _future(r):
    return np.cumsum(r[::-1])[::-1]


def _right(r):
    return np.full(len(r), r.sum()), _future(r)


def _ddof1(g):
    return float(np.var(g, axis=0, ddof=1).sum()) if len(g) > 1 else np.nan


CAUSAL_MISTAKES = [
    Mistake(
        "to_go_past",
        _variances(lambda r: (np.full(len(r), r.sum()), np.cumsum(r))),
        "En el segundo estimador sumaste las recompensas hasta t (el pasado, "
        "np.cumsum hacia delante). La recompensa futura es Σ_{k≥t} r_k: suma "
        "desde el final del episodio hacia atrás.",
    ),
    Mistake(
        "to_go_without_own_reward",
        _variances(lambda r: (np.full(len(r), r.sum()), _future(r) - r)),
        "Dejaste fuera la recompensa del propio paso: la acción a_t sí causa r_t, "
        "así que la recompensa futura de t es Σ_{k≥t} r_k, con r_t incluida.",
    ),
    Mistake(
        "to_go_reversed",
        _variances(lambda r: (np.full(len(r), r.sum()), _future(r)[::-1])),
        "Las sumas de la recompensa futura están en el orden al revés: tras sumar "
        "desde el final, vuelve a darles la vuelta para que la de t vaya con el "
        "paso t.",
    ),
    Mistake(
        "full_uses_to_go",
        _variances(lambda r: (_future(r), _future(r))),
        "El primer estimador es el de REINFORCE sin más: cada ∇log π del episodio "
        "pesado con el retorno entero Σ_k r_k, el mismo para todos los pasos.",
    ),
    Mistake(
        "full_first_step_only",
        _variances(lambda r: (np.eye(len(r))[0] * r.sum(), _future(r))),
        "En el primer estimador solo pesaste el primer paso: el retorno entero "
        "multiplica a la suma de los ∇log π de todos los pasos del episodio.",
    ),
    Mistake(
        "full_mean_reward",
        _variances(lambda r: (np.full(len(r), r.mean()), _future(r))),
        "En el primer estimador usaste la recompensa media del episodio; el peso "
        "es el retorno entero, la suma Σ_k r_k.",
    ),
    Mistake(
        "variance_ddof1",
        _variances(_right, _ddof1),
        "Dividiste por N − 1; el enunciado pide la varianza total dividiendo por "
        "N, (1/N) Σ_i ‖g_i − ḡ‖².",
    ),
    Mistake(
        "variance_not_centered",
        _variances(_right, lambda g: float((g**2).sum(axis=1).mean())),
        "No restaste la media ḡ de las estimaciones: eso es E[‖g‖²]. La varianza "
        "mide la dispersión alrededor de la media: (1/N) Σ_i ‖g_i − ḡ‖².",
    ),
    Mistake(
        "variance_flattened",
        _variances(_right, lambda g: float(np.var(g))),
        "np.var sin axis aplana las estimaciones y usa una sola media para todas "
        "las componentes. Es la varianza de cada componente (sobre los "
        "episodios), sumada.",
    ),
    Mistake(
        "variance_mean_of_components",
        _variances(_right, lambda g: float(np.var(g, axis=0).mean())),
        "Promediaste las varianzas de las componentes; se suman (la traza de la "
        "covarianza).",
    ),
]


def _check_causal(estimator_variances, cases, index: int) -> None:
    cases = list(cases)
    _pair_of_numbers(call(estimator_variances, "estimator_variances", *cases[0]))
    reference = _part(baselines.estimator_variances, index)
    want = [reference(*case) for case in cases]
    # Solo las filas que cambian esta varianza: una que da lo de la referencia
    # se parecería a cualquier respuesta casi correcta (redondeada, por ejemplo).
    rows = [Mistake(m.id, _part(m.variant, index), m.message) for m in CAUSAL_MISTAKES]
    rows = [m for m in rows if not np.allclose([m.variant(*c) for c in cases], want)]
    check_cases(
        _part(estimator_variances, index),
        f"estimator_variances(...)[{index}]",
        cases,
        reference,
        rows,
    )


@exercise(MODULE, "estimator_variances", "el estimador con el retorno entero")
def check_estimator_variances(estimator_variances, cases=CAUSAL_CASES) -> None:
    """Comprueba la primera varianza de ``estimator_variances(rewards, scores)``."""
    _check_causal(estimator_variances, cases, 0)


@exercise(MODULE, "estimator_variances", "el estimador con la recompensa futura")
def check_estimator_variances_to_go(estimator_variances, cases=CAUSAL_CASES) -> None:
    """Comprueba la segunda varianza de ``estimator_variances(rewards, scores)``."""
    _check_causal(estimator_variances, cases, 1)


# ---------------------------------------------------------------------------
# Ejercicio 3 · normalizar los retornos, sin NaN
# ---------------------------------------------------------------------------

NORMALIZE_CASES = [
    (np.array([500.0, 520.0, 480.0, 540.0]),),
    (np.array([8.0, 2.0]),),
    (np.array([-3.0, 0.0, 12.0, 1.5, 0.5]),),
    (np.array([0.0, 0.0, 1.0]),),
]

#: Lotes en que todos los retornos son iguales (σ = 0), junto a uno normal:
#: devolver ceros siempre no basta. El 0,1 no es exacto en binario: la
#: desviación de tres retornos de 0,1 sale minúscula, pero no 0, y ``std == 0``
#: no la ve.
NORMALIZE_CONSTANT_CASES = [
    (np.array([1.0, 1.0, 1.0, 1.0]),),
    (np.array([8.0, 2.0]),),
    (np.array([5.0, 5.0]),),
    (np.array([-3.0, -3.0, -3.0]),),
    (np.array([0.1, 0.1, 0.1]),),
]


def _normalize_ddof1(returns):
    """La otra convención que vale: la desviación con N − 1 (σ₁ = σ₀·√(N/(N−1)))."""
    n = len(returns)
    return baselines.normalize_returns(returns) * np.sqrt((n - 1) / n)


def _unsafe(ddof=0, exact_zero=False):
    def normalize_returns(returns):
        returns = np.asarray(returns, dtype=float)
        if exact_zero and returns.std() == 0:
            return np.zeros_like(returns)
        return (returns - returns.mean()) / returns.std(ddof=ddof)

    return normalize_returns


NORMALIZE_MISTAKES = [
    Mistake(
        "zero_std_nan",
        _unsafe(),
        "Con todos los retornos iguales la desviación es 0 y 0/0 da NaN, que "
        "contagia la pérdida, los pesos de la red y todo lo demás. Si la "
        "desviación es (casi) cero, devuelve ceros (o suma un ε pequeño, 1e-8, "
        "a la desviación).",
    ),
    Mistake(
        "zero_std_nan_unbiased",
        _unsafe(ddof=1),
        "Con todos los retornos iguales la desviación es 0 y 0/0 da NaN. Si la "
        "desviación es (casi) cero, devuelve ceros (o suma un ε pequeño, 1e-8, "
        "a la desviación).",
    ),
    Mistake(
        "zero_std_exact",
        _unsafe(exact_zero=True),
        "Comparaste la desviación con == 0: en coma flotante, unos retornos "
        "iguales pueden dar una desviación minúscula pero no nula (con tres "
        "retornos de 0,1 pasa), y al dividir sale ±1 en lugar de 0. Usa un "
        "umbral: si σ < 1e-8, devuelve ceros.",
    ),
    Mistake(
        "normalize_only_centered",
        lambda r: r - np.mean(r),
        "Solo centraste: falta dividir por la desviación típica.",
    ),
    Mistake(
        "normalize_only_scaled",
        lambda r: r / (np.std(r) + 1e-8),
        "Solo dividiste: falta restar la media (lo que borra el pedestal).",
    ),
    Mistake(
        "normalize_by_variance",
        lambda r: (r - np.mean(r)) / (np.var(r) + 1e-8),
        "Dividiste por la varianza; se divide por la desviación típica (su raíz).",
    ),
]


@exercise(MODULE, "normalize_returns")
def check_normalize_returns(normalize_returns, cases=NORMALIZE_CASES) -> None:
    """Comprueba ``normalize_returns(returns)`` (vale la desviación con N o N − 1)."""
    check_cases(
        normalize_returns,
        "normalize_returns",
        cases,
        (baselines.normalize_returns, _normalize_ddof1),
        NORMALIZE_MISTAKES,
        atol=1e-5,
    )


@exercise(MODULE, "normalize_returns", "todos iguales, sin NaN")
def check_normalize_returns_constant(
    normalize_returns, cases=NORMALIZE_CONSTANT_CASES
) -> None:
    """Comprueba ``normalize_returns`` cuando la desviación del lote es 0."""
    check_normalize_returns.__wrapped__(normalize_returns, cases)


# ---------------------------------------------------------------------------
# Ejercicio 4 · la recompensa esperada de cada pregunta, sin mirarse a sí misma
# ---------------------------------------------------------------------------

LOO_CASES = [
    (np.array([0, 0, 0, 0]), np.array([1.0, 1.0, 0.0, 1.0])),
    (np.array([0, 0, 1, 1, 1]), np.array([1.0, 0.0, 0.0, 0.0, 1.0])),
    (np.array([2, 0, 2, 1, 1, 0, 2]), np.array([8.0, 2.0, 5.0, 3.0, 6.0, 4.0, 2.0])),
]

#: Preguntas con una sola muestra, junto a otras con varias.
LOO_SINGLE_CASES = [
    (np.array([0, 1, 1]), np.array([1.0, 0.0, 1.0])),
    (np.array([4, 2, 4, 7]), np.array([3.0, 5.0, 1.0, -2.0])),
]


def _group_mean(ids, rewards, *, own=True):
    """La media de la pregunta de cada muestra (``own=False``: sin ella, 0/0 = NaN)."""
    rewards = np.asarray(rewards, dtype=float)
    out = np.zeros_like(rewards)
    for i, q in enumerate(ids):
        others = (ids == q) & ((np.arange(len(ids)) != i) | own)
        with np.errstate(all="ignore"):
            out[i] = rewards[others].sum() / others.sum()
    return out


LOO_MISTAKES = [
    Mistake(
        "loo_includes_own",
        _group_mean,
        "Incluiste la propia recompensa R_i en la media de su pregunta: entonces "
        "b_i depende de la acción a_i y el gradiente ya no es insesgado (se "
        "encoge por (n − 1)/n). Usa solo las otras muestras de la pregunta.",
    ),
    Mistake(
        "loo_batch_mean",
        lambda ids, r: np.full(len(r), np.mean(r)),
        "Usaste la media de todo el lote: mezcla preguntas fáciles y difíciles. "
        "La línea base de cada muestra es la media de las otras muestras de su "
        "misma pregunta.",
    ),
    Mistake(
        "loo_batch_leave_one_out",
        lambda ids, r: (r.sum() - r) / (len(r) - 1),
        "Dejaste fuera la propia muestra, bien, pero promediaste el lote entero: "
        "solo cuentan las muestras de la misma pregunta.",
    ),
    Mistake(
        "loo_single_nan",
        functools.partial(_group_mean, own=False),
        "Una pregunta con una sola muestra no tiene «otras»: 0/0 = NaN. En ese "
        "caso la línea base es 0.",
    ),
]


@exercise(MODULE, "leave_one_out_baseline")
def check_leave_one_out_baseline(leave_one_out_baseline, cases=LOO_CASES) -> None:
    """Comprueba ``leave_one_out_baseline(question_ids, rewards)``."""
    check_cases(
        leave_one_out_baseline,
        "leave_one_out_baseline",
        cases,
        baselines.leave_one_out_baseline,
        LOO_MISTAKES,
    )


@exercise(MODULE, "leave_one_out_baseline", "preguntas con una sola muestra")
def check_leave_one_out_baseline_single(
    leave_one_out_baseline, cases=LOO_SINGLE_CASES
) -> None:
    """Comprueba ``leave_one_out_baseline`` con preguntas de una sola muestra."""
    check_leave_one_out_baseline.__wrapped__(leave_one_out_baseline, cases)


# ---------------------------------------------------------------------------
# Ejercicio 5 · las pérdidas de REINFORCE con una V(s) aprendida
# ---------------------------------------------------------------------------

LOSSES_CASES = [
    (tensor([-0.5, -1.0, -0.2]), tensor([2.0, 1.5, 0.5]), tensor([3.0, 2.0, 1.0]), 1),
    (
        tensor([-0.7, -0.1, -2.0, -0.3]),
        tensor([0.5, 0, 1, -1]),
        tensor([1, -1, 0.5, 2]),
        2,
    ),
    (
        tensor([-1.2, -0.4, -0.9, -0.05, -3.0]),
        tensor([4.5, 3.0, 3.5, 1.0, 0.0]),
        tensor([5.0, 4.0, 3.0, 2.0, 1.0]),
        4,
    ),
]


def _summed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """La pérdida sumada: la celda del valor no mira la forma (la mira la otra)."""
    return functools.wraps(fn)(lambda *args: torch.as_tensor(fn(*args)).sum())


def _loss(fn: Callable[..., Any], index: int) -> Callable[..., Any]:
    """Solo una de las dos pérdidas de ``fn``."""

    def part(log_probs, values, returns, n_episodes):
        out = fn(log_probs, values, returns, n_episodes)
        if not isinstance(out, tuple | list) or len(out) != 2:
            fail(
                "baseline_losses debe devolver dos cosas, (policy_loss, "
                f"value_loss); devolvió {type(out).__name__}.",
                "losses_not_a_pair",
            )
        return out[index]

    return functools.wraps(fn)(part)


def _policy(advantage):
    return lambda lp, v, g, n: -(lp * advantage(g, v).detach()).sum() / n


POLICY_MISTAKES = [
    Mistake(
        "policy_sign",
        _policy(lambda g, v: v - g),
        "La ventaja es A = G − V(s): restaste al revés (o falta el signo menos de "
        "la pérdida). Con el signo cambiado, lo que sale mejor de lo esperado se "
        "vuelve menos probable.",
    ),
    Mistake(
        "policy_no_baseline",
        _policy(lambda g, v: g),
        "No restaste la línea base: la pérdida de la política usa A = G − V(s), no G.",
    ),
    Mistake(
        "policy_value_added",
        _policy(lambda g, v: g + v),
        "Sumaste V(s): la ventaja es G − V(s).",
    ),
    Mistake(
        "policy_mean_over_steps",
        lambda lp, v, g, n: -(lp * (g - v).detach()).mean(),
        "Promediaste sobre los pasos; la pérdida de la política divide por N, el "
        "número de episodios (como en el módulo 03).",
    ),
    Mistake(
        "policy_not_divided",
        lambda lp, v, g, n: -(lp * (g - v).detach()).sum(),
        "¿Olvidaste dividir por n_episodes?",
    ),
]

#: La pérdida del valor que arrastra la de la política: se ve en su valor (la
#: suma de las dos) y en su gradiente (llega a ``log_probs``).
VALUE_REACHES_LOG_PROBS = (
    "value_loss llega a log_probs: ¿devolviste como segunda pérdida la suma de "
    "las dos? La pérdida del valor es solo (1/M) Σ (V(s_t) − G_t)², y solo debe "
    "mover la red de valor."
)
VALUES_DETACHED = (
    "value_loss no llega a V(s): ¿separaste values con detach()? La red de valor "
    "solo aprende por esta pérdida."
)

VALUE_MISTAKES = [
    Mistake(
        "value_sum",
        lambda lp, v, g, n: ((v - g) ** 2).sum(),
        "La pérdida del valor es la media de (V(s_t) − G_t)² sobre los pasos, no "
        "la suma.",
    ),
    Mistake(
        "value_divided_by_episodes",
        lambda lp, v, g, n: ((v - g) ** 2).sum() / n,
        "La pérdida del valor es la media sobre los M pasos, no sobre los N "
        "episodios: (1/M) Σ (V(s_t) − G_t)².",
    ),
    Mistake(
        "value_absolute",
        lambda lp, v, g, n: (v - g).abs().mean(),
        "Eso es el error absoluto medio; se pide el cuadrático, (V − G)².",
    ),
    Mistake(
        "value_square_of_mean",
        lambda lp, v, g, n: (v - g).mean() ** 2,
        "Elevaste al cuadrado la media de los errores; es la media de los "
        "cuadrados: errores de signo opuesto no se cancelan.",
    ),
    Mistake(
        "value_loss_reaches_log_probs",
        lambda lp, v, g, n: -(lp * (g - v).detach()).sum() / n + ((v - g) ** 2).mean(),
        VALUE_REACHES_LOG_PROBS,
    ),
]


@exercise(MODULE, "baseline_losses")
def check_baseline_losses(baseline_losses, cases=LOSSES_CASES) -> None:
    """Comprueba los valores de ``baseline_losses(log_probs, values, returns,
    n_episodes)``."""
    for index, rows in enumerate((POLICY_MISTAKES, VALUE_MISTAKES)):
        check_cases(
            _summed(_loss(baseline_losses, index)),
            f"baseline_losses(...)[{index}]",
            cases,
            _summed(_loss(baselines.baseline_losses, index)),
            [Mistake(m.id, _summed(m.variant), m.message) for m in rows],
        )


@exercise(MODULE, "baseline_losses", "por dónde pasa el gradiente")
def check_baseline_losses_grad(baseline_losses, cases=LOSSES_CASES) -> None:
    """Comprueba los gradientes de las dos pérdidas: la de la política llega
    solo a ``log_probs`` y la del valor solo a ``values``."""
    not_scalar = Diagnosis(
        id="loss_not_scalar",
        message="Cada pérdida debe ser un escalar (un solo número): ¿falta sumar "
        "sobre los pasos?",
    )
    check_gradients(
        _loss(baseline_losses, 0),
        "baseline_losses(...)[0]",
        cases,
        _loss(baselines.baseline_losses, 0),
        POLICY_MISTAKES,
        prefix="policy_loss",
        wrong_shape=not_scalar,
        without_gradient=Diagnosis(
            id="loss_not_connected",
            message="policy_loss debe ser un tensor de PyTorch conectado al "
            "grafo (para poder llamar a backward()); no uses .item(), float() ni "
            "NumPy.",
        ),
        wrt={
            "log_probs": Flow(
                True,
                id="log_probs_detached",
                message="policy_loss no llega a log_probs: la pérdida de la "
                "política es la que mueve la política. No separes log_probs del "
                "grafo.",
            ),
            "values": Flow(
                False,
                id="advantage_not_detached",
                message="La ventaja no está separada del grafo: "
                "policy_loss.backward() llega hasta V(s). Entonces la política "
                "«entrena» al crítico para hacer grande su pérdida en vez de "
                "ajustarlo a G. Usa la ventaja como un peso fijo, sin gradiente.",
            ),
        },
    )
    check_gradients(
        _loss(baseline_losses, 1),
        "baseline_losses(...)[1]",
        cases,
        _loss(baselines.baseline_losses, 1),
        VALUE_MISTAKES,
        prefix="value_loss",
        wrong_shape=not_scalar,
        without_gradient=Diagnosis(id="values_detached", message=VALUES_DETACHED),
        wrt={
            "values": Flow(True, id="values_detached", message=VALUES_DETACHED),
            "log_probs": Flow(
                False,
                id="value_loss_reaches_log_probs",
                message=VALUE_REACHES_LOG_PROBS,
            ),
        },
    )
