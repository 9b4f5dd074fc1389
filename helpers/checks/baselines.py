"""Comprobaciones del módulo 04 · Varianza y líneas base."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch

from helpers import baselines
from helpers.checks import (
    CheckError,
    Mistake,
    as_array,
    call,
    check_cases,
    close,
    exercise,
    fail,
    python_number,
)

MODULE = "04_lineas_base"


# ---------------------------------------------------------------------------
# Ejercicio 1 · estimaciones del gradiente por muestra
# ---------------------------------------------------------------------------

SCORE_CASES = [
    (
        np.array([0.0, 0.0, 0.0]),
        np.array([0, 2, 1, 2]),
        np.array([1.0, 0.0, 1.0, 1.0]),
        0.5,
    ),
    (
        np.array([0.3, -0.2]),
        np.array([1, 0, 0]),
        np.array([500.0, 520.0, 480.0]),
        500.0,
    ),
    (
        np.array([1.0, 0.0, -1.0]),
        np.array([2, 0]),
        np.array([8.0, 2.0]),
        np.array([5.0, 3.0]),
    ),
    (np.array([0.5, 0.5, 0.0, -0.5]), np.array([3]), np.array([2.0]), 0.0),
]


def _score(weight: Callable[..., Any], direction: Callable[..., Any]):
    def estimate(theta, actions, rewards, baseline):
        pi = baselines.softmax_policy(theta)
        actions = np.asarray(actions, dtype=int)
        one_hot = np.eye(len(pi))[actions]
        w = weight(np.asarray(rewards, dtype=float), np.asarray(baseline, dtype=float))
        return w[:, None] * direction(one_hot, pi, actions)

    return estimate


def _grad_log(one_hot, pi, actions):
    return one_hot - pi


def _unstable_score(theta, actions, rewards, baseline):
    theta = np.asarray(theta, dtype=float)
    with np.errstate(all="ignore"):
        pi = np.exp(theta) / np.exp(theta).sum()
    w = np.asarray(rewards, dtype=float) - np.asarray(baseline, dtype=float)
    return w[:, None] * (np.eye(len(theta))[np.asarray(actions, dtype=int)] - pi)


SCORE_MISTAKES: list[Mistake] = [
    Mistake(
        "score_sign",
        _score(lambda r, b: b - r, _grad_log),
        "El signo está al revés: el peso es (R − b), no (b − R), y "
        "∇log π(a) = one_hot(a) − π. Con el signo cambiado, lo que sale mejor "
        "que la línea base se vuelve menos probable.",
    ),
    Mistake(
        "score_baseline_added",
        _score(lambda r, b: r + b, _grad_log),
        "Sumaste la línea base: el peso es R − b.",
    ),
    Mistake(
        "score_no_baseline",
        _score(lambda r, b: r + 0 * b, _grad_log),
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
        _score(lambda r, b: np.full_like(r, np.mean(r - b)), _grad_log),
        "Cada muestra lleva su propio peso R_i − b_i, no la media de los pesos.",
    ),
    Mistake(
        "score_overflow",
        _unstable_score,
        "Con logits grandes, exp(θ) desborda (exp(710) ya es inf) y inf/inf da "
        "NaN. Restar a θ una misma constante no cambia la softmax: réstale su "
        "máximo antes de exp.",
    ),
]


#: Logits grandes: la softmax ingenua desborda (``exp(710) = inf``).
SCORE_STABLE_CASES = [
    (np.array([750.0, 0.0]), np.array([1, 0]), np.array([4.0, 2.0]), 1.5),
    (
        np.array([800.0, 799.0, -5.0]),
        np.array([0, 1, 2]),
        np.array([1.0, 3.0, -2.0]),
        np.array([0.5, 0.5, 1.0]),
    ),
]


def _check_score_gradients(score_gradients, cases) -> None:
    cases = list(cases)
    theta, actions, rewards, baseline = cases[0]
    out = as_array(score_gradients(theta, actions, rewards, baseline), "El resultado")
    if out.shape == (len(theta),):
        fail(
            f"Devolviste un vector de forma {out.shape}: parece la media de las "
            "estimaciones. Queremos una fila por muestra, forma (N, A), para poder "
            "medir su varianza.",
            "score_returns_mean",
        )
    check_cases(
        score_gradients,
        "score_gradients",
        cases,
        baselines.score_gradients,
        SCORE_MISTAKES,
    )


@exercise(MODULE, "score_gradients")
def check_score_gradients(
    score_gradients: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = SCORE_CASES,
) -> None:
    """Comprueba ``score_gradients(theta, actions, rewards, baseline)``."""
    _check_score_gradients(score_gradients, cases)


@exercise(
    MODULE,
    "score_gradients",
    "logits grandes",
)
def check_score_gradients_stable(
    score_gradients: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = SCORE_STABLE_CASES,
) -> None:
    """Comprueba ``score_gradients`` con logits de cientos (sin desbordar)."""
    _check_score_gradients(score_gradients, cases)


# ---------------------------------------------------------------------------
# Ejercicio 2 · la causalidad, medida: retorno entero frente a recompensa futura
# ---------------------------------------------------------------------------


def _episodes(*pairs: tuple[list[float], list[list[float]]]) -> tuple[list, list]:
    """``(rewards, scores)`` de episodios escritos a mano: listas de arrays."""
    rewards = [np.array(r, dtype=float) for r, _ in pairs]
    scores = [np.array(g, dtype=float) for _, g in pairs]
    return rewards, scores


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
    """Las dos varianzas que devuelve el estudiante, o un fallo que explica qué
    se esperaba."""
    if not isinstance(out, tuple | list) or len(out) != 2:
        fail(
            "estimator_variances debe devolver dos números, (varianza con el "
            "retorno entero, varianza con la recompensa futura); devolvió "
            f"{type(out).__name__}.",
            "variances_not_a_pair",
        )
    values = []
    for name, value in zip(("la primera", "la segunda"), out, strict=True):
        # La forma antes que el tipo: a un array de P varianzas no le sirve
        # float(...), le falta sumarlas.
        array = as_array(value, "El resultado")
        if array.size != 1:
            fail(
                f"{name.capitalize()} varianza tiene forma {array.shape}: cada "
                "varianza es un solo número, la suma de las varianzas de las P "
                "componentes de las N estimaciones (una por episodio).",
                "variance_not_a_number",
            )
        python_number(value, f"{name.capitalize()} varianza")
        values.append(float(array.reshape(())))
    return values[0], values[1]


def _part(fn: Callable[..., Any], index: int) -> Callable[..., Any]:
    """Solo una de las dos varianzas (la comprobación de cada celda mira una)."""
    return functools.wraps(fn)(lambda r, s: _pair_of_numbers(fn(r, s))[index])


def _variances(weigh: Callable[..., Any], variance: Callable[..., Any] | None = None):
    """Un estimador a medias: ``weigh(rewards)`` da el par de pesos por paso."""
    variance = variance or baselines.total_variance

    def estimate(episode_rewards, episode_scores):
        full, to_go = [], []
        for r, s in zip(episode_rewards, episode_scores, strict=True):
            r, s = np.asarray(r, dtype=float), np.asarray(s, dtype=float)
            w_full, w_to_go = weigh(r)
            full.append(w_full @ s)
            to_go.append(w_to_go @ s)
        return variance(np.array(full)), variance(np.array(to_go))

    return estimate


def _future(r):
    return np.cumsum(r[::-1])[::-1]


def _right_weights(r):
    return np.full(len(r), r.sum()), _future(r)


def _ddof1(g):
    g = np.asarray(g, dtype=float)
    if len(g) < 2:
        return np.nan
    return float(np.var(g, axis=0, ddof=1).sum())


CAUSAL_MISTAKES: list[Mistake] = [
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
        _variances(
            lambda r: (np.eye(len(r))[0] * r.sum(), _future(r)),
        ),
        "En el primer estimador solo pesaste el primer paso: el retorno entero "
        "multiplica a la suma de los ∇log π de todos los pasos del episodio.",
    ),
    Mistake(
        "full_mean_reward",
        _variances(lambda r: (np.full(len(r), r.sum() / len(r)), _future(r))),
        "En el primer estimador usaste la recompensa media del episodio; el peso "
        "es el retorno entero, la suma Σ_k r_k.",
    ),
    Mistake(
        "variance_ddof1",
        _variances(_right_weights, _ddof1),
        "Dividiste por N − 1; el enunciado pide la varianza total dividiendo por "
        "N, (1/N) Σ_i ‖g_i − ḡ‖².",
    ),
    Mistake(
        "variance_not_centered",
        _variances(
            _right_weights, lambda g: float((np.asarray(g) ** 2).sum(axis=1).mean())
        ),
        "No restaste la media ḡ de las estimaciones: eso es E[‖g‖²]. La varianza "
        "mide la dispersión alrededor de la media: (1/N) Σ_i ‖g_i − ḡ‖².",
    ),
    Mistake(
        "variance_flattened",
        _variances(_right_weights, lambda g: float(np.var(np.asarray(g)))),
        "np.var sin axis aplana las estimaciones y usa una sola media para todas "
        "las componentes. Es la varianza de cada componente (sobre los "
        "episodios), sumada.",
    ),
    Mistake(
        "variance_mean_of_components",
        _variances(_right_weights, lambda g: float(np.var(g, axis=0).mean())),
        "Promediaste las varianzas de las componentes; se suman (la traza de la "
        "covarianza).",
    ),
]


def _check_causal(estimator_variances, cases, index: int, name: str) -> None:
    cases = list(cases)
    rewards, scores = cases[0]
    _pair_of_numbers(call(estimator_variances, "estimator_variances", rewards, scores))
    reference = _part(baselines.estimator_variances, index)
    want = [reference(r, s) for r, s in cases]
    # Solo los errores típicos que tocan esta varianza: uno que solo cambia la
    # otra da aquí lo mismo que la referencia y no explica ningún fallo.
    mistakes = [
        dataclasses.replace(m, variant=_part(m.variant, index))
        for m in CAUSAL_MISTAKES
        if not all(
            np.isclose(_part(m.variant, index)(r, s), w, atol=1e-9)
            for (r, s), w in zip(cases, want, strict=True)
        )
    ]
    check_cases(_part(estimator_variances, index), name, cases, reference, mistakes)


@exercise(
    MODULE,
    "estimator_variances",
    "el estimador con el retorno entero",
)
def check_estimator_variances(
    estimator_variances: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = CAUSAL_CASES,
) -> None:
    """Comprueba la primera varianza de ``estimator_variances(rewards, scores)``."""
    _check_causal(estimator_variances, cases, 0, "estimator_variances(...)[0]")


@exercise(
    MODULE,
    "estimator_variances",
    "el estimador con la recompensa futura",
)
def check_estimator_variances_to_go(
    estimator_variances: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = CAUSAL_CASES,
) -> None:
    """Comprueba la segunda varianza de ``estimator_variances(rewards, scores)``."""
    _check_causal(estimator_variances, cases, 1, "estimator_variances(...)[1]")


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
    returns = np.asarray(returns, dtype=float)
    std = returns.std(ddof=1) if len(returns) > 1 else 0.0
    if std < 1e-8:
        return np.zeros_like(returns)
    return (returns - returns.mean()) / std


def _unsafe(ddof):
    def normalize(returns):
        returns = np.asarray(returns, dtype=float)
        return (returns - returns.mean()) / returns.std(ddof=ddof)

    return normalize


def _exact_zero(returns):
    returns = np.asarray(returns, dtype=float)
    if returns.std() == 0:
        return np.zeros_like(returns)
    return (returns - returns.mean()) / returns.std()


NORMALIZE_MISTAKES: list[Mistake] = [
    Mistake(
        "zero_std_nan",
        _unsafe(0),
        "Con todos los retornos iguales la desviación es 0 y 0/0 da NaN, que "
        "contagia la pérdida, los pesos de la red y todo lo demás. Si la "
        "desviación es (casi) cero, devuelve ceros (o suma un ε pequeño, 1e-8, "
        "a la desviación).",
    ),
    Mistake(
        "zero_std_nan_unbiased",
        _unsafe(1),
        "Con todos los retornos iguales la desviación es 0 y 0/0 da NaN. Si la "
        "desviación es (casi) cero, devuelve ceros (o suma un ε pequeño, 1e-8, "
        "a la desviación).",
    ),
    Mistake(
        "zero_std_exact",
        _exact_zero,
        "Comparaste la desviación con == 0: en coma flotante, unos retornos "
        "iguales pueden dar una desviación minúscula pero no nula (con tres "
        "retornos de 0,1 pasa), y al dividir sale ±1 en lugar de 0. Usa un "
        "umbral: si σ < 1e-8, devuelve ceros.",
    ),
    Mistake(
        "normalize_only_centered",
        lambda r: np.asarray(r, dtype=float) - np.mean(r),
        "Solo centraste: falta dividir por la desviación típica.",
    ),
    Mistake(
        "normalize_only_scaled",
        lambda r: np.asarray(r, dtype=float) / (np.std(r) + 1e-8),
        "Solo dividiste: falta restar la media (lo que borra el pedestal).",
    ),
    Mistake(
        "normalize_by_variance",
        lambda r: (np.asarray(r, dtype=float) - np.mean(r)) / (np.var(r) + 1e-8),
        "Dividiste por la varianza; se divide por la desviación típica (su raíz).",
    ),
]


@exercise(MODULE, "normalize_returns")
def check_normalize_returns(
    normalize_returns: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = NORMALIZE_CASES,
) -> None:
    """Comprueba ``normalize_returns(returns)`` (vale la desviación con N o N − 1)."""
    _check_normalize(normalize_returns, cases)


@exercise(
    MODULE,
    "normalize_returns",
    "todos iguales, sin NaN",
)
def check_normalize_returns_constant(
    normalize_returns: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = NORMALIZE_CONSTANT_CASES,
) -> None:
    """Comprueba ``normalize_returns`` cuando la desviación del lote es 0."""
    _check_normalize(normalize_returns, cases)


def _check_normalize(normalize_returns: Callable[..., Any], cases) -> None:
    cases = list(cases)
    outputs = []
    for (returns,) in cases:
        try:
            with np.errstate(all="ignore"):
                out = call(normalize_returns, "normalize_returns", returns)
                outputs.append(as_array(out, "x"))
        except CheckError:
            raise
        except Exception:  # noqa: BLE001 - lo diagnostica check_cases
            outputs = None
            break
    if outputs is not None:
        for reference in (baselines.normalize_returns, _normalize_ddof1):
            if all(
                close(out, reference(r), atol=1e-5)
                for out, (r,) in zip(outputs, cases, strict=True)
            ):
                return
    check_cases(
        normalize_returns,
        "normalize_returns",
        cases,
        baselines.normalize_returns,
        NORMALIZE_MISTAKES,
        atol=1e-5,
    )


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


def _group_mean(ids, rewards):
    ids, rewards = np.asarray(ids), np.asarray(rewards, dtype=float)
    return np.array([rewards[ids == q].mean() for q in ids])


def _batch_leave_one_out(ids, rewards):
    rewards = np.asarray(rewards, dtype=float)
    return (rewards.sum() - rewards) / (len(rewards) - 1)


def _loo_nan(ids, rewards):
    ids, rewards = np.asarray(ids), np.asarray(rewards, dtype=float)
    out = np.zeros_like(rewards)
    for i, q in enumerate(ids):
        others = (ids == q) & (np.arange(len(ids)) != i)
        with np.errstate(all="ignore"):
            out[i] = rewards[others].sum() / others.sum()
    return out


LOO_MISTAKES: list[Mistake] = [
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
        _batch_leave_one_out,
        "Dejaste fuera la propia muestra, bien, pero promediaste el lote entero: "
        "solo cuentan las muestras de la misma pregunta.",
    ),
    Mistake(
        "loo_single_nan",
        _loo_nan,
        "Una pregunta con una sola muestra no tiene «otras»: 0/0 = NaN. En ese "
        "caso la línea base es 0.",
    ),
]


@exercise(MODULE, "leave_one_out_baseline")
def check_leave_one_out_baseline(
    leave_one_out_baseline: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = LOO_CASES,
) -> None:
    """Comprueba ``leave_one_out_baseline(question_ids, rewards)``."""
    _check_loo(leave_one_out_baseline, cases)


@exercise(
    MODULE,
    "leave_one_out_baseline",
    "preguntas con una sola muestra",
)
def check_leave_one_out_baseline_single(
    leave_one_out_baseline: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = LOO_SINGLE_CASES,
) -> None:
    """Comprueba ``leave_one_out_baseline`` con preguntas de una sola muestra."""
    _check_loo(leave_one_out_baseline, cases)


def _check_loo(leave_one_out_baseline: Callable[..., Any], cases) -> None:
    check_cases(
        leave_one_out_baseline,
        "leave_one_out_baseline",
        cases,
        baselines.leave_one_out_baseline,
        LOO_MISTAKES,
    )


# ---------------------------------------------------------------------------
# Ejercicio 5 · las pérdidas de REINFORCE con una V(s) aprendida
# ---------------------------------------------------------------------------

LOSSES_CASES = [
    (
        torch.tensor([-0.5, -1.0, -0.2]),
        torch.tensor([2.0, 1.5, 0.5]),
        torch.tensor([3.0, 2.0, 1.0]),
        1,
    ),
    (
        torch.tensor([-0.7, -0.1, -2.0, -0.3]),
        torch.tensor([0.5, 0.0, 1.0, -1.0]),
        torch.tensor([1.0, -1.0, 0.5, 2.0]),
        2,
    ),
    (
        torch.tensor([-1.2, -0.4, -0.9, -0.05, -3.0]),
        torch.tensor([4.5, 3.0, 3.5, 1.0, 0.0]),
        torch.tensor([5.0, 4.0, 3.0, 2.0, 1.0]),
        4,
    ),
]


def _pair(out: Any) -> tuple[Any, Any]:
    if not isinstance(out, tuple | list) or len(out) != 2:
        fail(
            "baseline_losses debe devolver dos cosas, (policy_loss, value_loss); "
            f"devolvió {type(out).__name__}.",
            "losses_not_a_pair",
        )
    return out[0], out[1]


def _policy_part(fn: Callable[..., Any]) -> Callable[..., Any]:
    # functools.wraps: los mensajes nombran los argumentos de la función original.
    return functools.wraps(fn)(
        lambda lp, v, g, n: float(as_array(_pair(fn(lp, v, g, n))[0], "x").sum())
    )


def _value_part(fn: Callable[..., Any]) -> Callable[..., Any]:
    return functools.wraps(fn)(
        lambda lp, v, g, n: float(as_array(_pair(fn(lp, v, g, n))[1], "x").sum())
    )


POLICY_MISTAKES: list[Mistake] = [
    Mistake(
        "policy_sign",
        lambda lp, v, g, n: float(-(lp * (v - g)).sum() / n),
        "La ventaja es A = G − V(s): restaste al revés (o falta el signo menos de "
        "la pérdida). Con el signo cambiado, lo que sale mejor de lo esperado se "
        "vuelve menos probable.",
    ),
    Mistake(
        "policy_no_baseline",
        lambda lp, v, g, n: float(-(lp * g).sum() / n),
        "No restaste la línea base: la pérdida de la política usa A = G − V(s), no G.",
    ),
    Mistake(
        "policy_value_added",
        lambda lp, v, g, n: float(-(lp * (g + v)).sum() / n),
        "Sumaste V(s): la ventaja es G − V(s).",
    ),
    Mistake(
        "policy_mean_over_steps",
        lambda lp, v, g, n: float(-(lp * (g - v)).mean()),
        "Promediaste sobre los pasos; la pérdida de la política divide por N, el "
        "número de episodios (como en el módulo 03).",
    ),
    Mistake(
        "policy_not_divided",
        lambda lp, v, g, n: float(-(lp * (g - v)).sum()),
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

VALUE_MISTAKES: list[Mistake] = [
    Mistake(
        "value_sum",
        lambda lp, v, g, n: float(((v - g) ** 2).sum()),
        "La pérdida del valor es la media de (V(s_t) − G_t)² sobre los pasos, no "
        "la suma.",
    ),
    Mistake(
        "value_divided_by_episodes",
        lambda lp, v, g, n: float(((v - g) ** 2).sum() / n),
        "La pérdida del valor es la media sobre los M pasos, no sobre los N "
        "episodios: (1/M) Σ (V(s_t) − G_t)².",
    ),
    Mistake(
        "value_absolute",
        lambda lp, v, g, n: float((v - g).abs().mean()),
        "Eso es el error absoluto medio; se pide el cuadrático, (V − G)².",
    ),
    Mistake(
        "value_square_of_mean",
        lambda lp, v, g, n: float((v - g).mean() ** 2),
        "Elevaste al cuadrado la media de los errores; es la media de los "
        "cuadrados: errores de signo opuesto no se cancelan.",
    ),
    Mistake(
        "value_loss_reaches_log_probs",
        lambda lp, v, g, n: float(-(lp * (g - v)).sum() / n + ((v - g) ** 2).mean()),
        VALUE_REACHES_LOG_PROBS,
    ),
]


@exercise(MODULE, "baseline_losses")
def check_baseline_losses(
    baseline_losses: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = LOSSES_CASES,
) -> None:
    """Comprueba ``baseline_losses(log_probs, values, returns, n_episodes)``."""
    cases = list(cases)
    check_cases(
        _policy_part(baseline_losses),
        "baseline_losses(...)[0]",
        cases,
        _policy_part(baselines.baseline_losses),
        POLICY_MISTAKES,
    )
    check_cases(
        _value_part(baseline_losses),
        "baseline_losses(...)[1]",
        cases,
        _value_part(baselines.baseline_losses),
        VALUE_MISTAKES,
    )


@exercise(
    MODULE,
    "baseline_losses",
    "por dónde pasa el gradiente",
)
def check_baseline_losses_grad(
    baseline_losses: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = LOSSES_CASES,
) -> None:
    """Comprueba qué mueve cada pérdida: la política, ``log_probs``; el valor, ``V``.

    Solo mira el camino del gradiente (tensores conectados, escalares, la
    ventaja separada, ``values`` sin separar en la pérdida del valor); los
    valores los mira :func:`check_baseline_losses`.
    """
    for log_probs, values, returns, n in cases:
        lp = log_probs.clone().requires_grad_(True)
        v = values.clone().requires_grad_(True)
        policy_loss, value_loss = _pair(baseline_losses(lp, v, returns.clone(), n))
        for name, loss in (("policy_loss", policy_loss), ("value_loss", value_loss)):
            if (
                name == "value_loss"
                and isinstance(loss, torch.Tensor)
                and loss.grad_fn is None
            ):
                fail(
                    "value_loss no llega a V(s): ¿separaste values con detach()? La "
                    "red de valor solo aprende por esta pérdida.",
                    "values_detached",
                )
            if not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
                fail(
                    f"{name} debe ser un tensor de PyTorch conectado al grafo (para "
                    "poder llamar a backward()); no uses .item(), float() ni NumPy.",
                    "loss_not_connected",
                )
            if loss.numel() != 1:
                fail(
                    f"{name} debe ser un escalar; tiene forma {tuple(loss.shape)}.",
                    "loss_not_scalar",
                )
        policy_loss.reshape(()).backward(retain_graph=True)
        if v.grad is not None and v.grad.abs().max() > 0:
            fail(
                "La ventaja no está separada del grafo: policy_loss.backward() llega "
                "hasta V(s). Entonces la política «entrena» al crítico para hacer "
                "grande su pérdida en vez de ajustarlo a G. Usa la ventaja como un "
                "peso fijo, sin gradiente.",
                "advantage_not_detached",
            )
        if lp.grad is None or lp.grad.abs().max() == 0:
            fail(
                "policy_loss no llega a log_probs: la pérdida de la política es la "
                "que mueve la política. No separes log_probs del grafo.",
                "log_probs_detached",
            )
        lp.grad = None
        value_loss.reshape(()).backward()
        if v.grad is None or v.grad.abs().max() == 0:
            fail(
                "value_loss no llega a V(s): ¿separaste values con detach()? La red "
                "de valor solo aprende por esta pérdida.",
                "values_detached",
            )
        if lp.grad is not None and lp.grad.abs().max() > 0:
            fail(VALUE_REACHES_LOG_PROBS, "value_loss_reaches_log_probs")
