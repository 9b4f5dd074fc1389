"""Comprobaciones del módulo 04 · Varianza y líneas base."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch

from helpers import baselines
from helpers.checks import (
    CheckError,
    as_array,
    call,
    check_cases,
    close,
    exercise,
    fail,
)
from helpers.formatting import number

MODULE = "04_lineas_base"


def _numbers(values: Any, decimals: int) -> str:
    """Varias cifras con coma decimal, separadas por «;»: «[0,33; 0; 0,67]»."""
    if isinstance(values, torch.Tensor):
        values = values.detach().numpy()
    return "[" + "; ".join(number(v, decimals) for v in np.ravel(values)) + "]"


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


SCORE_MISTAKES = [
    (
        _score(lambda r, b: b - r, _grad_log),
        "El signo está al revés: el peso es (R − b), no (b − R), y "
        "∇log π(a) = one_hot(a) − π. Con el signo cambiado, lo que sale mejor "
        "que la línea base se vuelve menos probable.",
    ),
    (
        _score(lambda r, b: r + b, _grad_log),
        "Sumaste la línea base: el peso es R − b.",
    ),
    (
        _score(lambda r, b: r + 0 * b, _grad_log),
        "No restaste la línea base: el peso de cada muestra es R_i − b_i.",
    ),
    (
        _score(lambda r, b: r - b, lambda e, pi, a: e),
        "Falta restar π: ∇_θ log softmax(θ)[a] = one_hot(a) − π.",
    ),
    (
        _score(lambda r, b: r - b, lambda e, pi, a: pi[a][:, None] * (e - pi)),
        "Eso es ∇π(a), no ∇log π(a) = one_hot(a) − π: no multipliques por π(a).",
    ),
    (
        _score(lambda r, b: np.full_like(r, np.mean(r - b)), _grad_log),
        "Cada muestra lleva su propio peso R_i − b_i, no la media de los pesos.",
    ),
]


@exercise(MODULE, "score_gradients", "Estimaciones del gradiente por muestra")
def check_score_gradients(
    score_gradients: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = SCORE_CASES,
) -> None:
    """Comprueba ``score_gradients(theta, actions, rewards, baseline)``."""
    cases = list(cases)
    theta, actions, rewards, baseline = cases[0]
    out = as_array(score_gradients(theta, actions, rewards, baseline), "El resultado")
    if out.shape == (len(theta),):
        fail(
            f"Devolviste un vector de forma {out.shape}: parece la media de las "
            "estimaciones. Queremos una fila por muestra, forma (N, A), para poder "
            "medir su varianza."
        )
    check_cases(
        score_gradients,
        "score_gradients",
        cases,
        baselines.score_gradients,
        SCORE_MISTAKES,
    )


# ---------------------------------------------------------------------------
# Ejercicio 2 · la varianza total de las estimaciones
# ---------------------------------------------------------------------------

VARIANCE_CASES = [
    (np.array([[1.0, -1.0], [3.0, 1.0], [2.0, 3.0]]),),
    (
        np.array(
            [[0.5, -0.25, -0.25], [-0.5, 0.5, 0.0], [1.0, -0.5, -0.5], [0.0, 0.0, 0.0]]
        ),
    ),
    (np.array([[10.0, -10.0], [10.0, -10.0]]),),
    (np.array([[2.0, 0.0, -1.0, 4.0]]),),
]


def _var_ddof1(g):
    g = np.asarray(g, dtype=float)
    if len(g) < 2:
        return np.nan
    return float(np.var(g, axis=0, ddof=1).sum())


VARIANCE_MISTAKES = [
    (
        lambda g: float((np.asarray(g) ** 2).sum(axis=1).mean()),
        "No restaste la media ḡ: eso es E[‖g‖²], el segundo momento. La varianza "
        "mide la dispersión alrededor de la media: (1/N) Σ_i ‖g_i − ḡ‖².",
    ),
    (
        lambda g: float(np.var(np.asarray(g, dtype=float))),
        "np.var(g) sin axis aplana el array y usa una sola media para todas las "
        "componentes. Es la varianza de cada componente (axis=0), sumada.",
    ),
    (
        lambda g: float(np.var(np.asarray(g, dtype=float), axis=0).mean()),
        "Promediaste las varianzas de las componentes; se suman (la traza de la "
        "covarianza, (1/N) Σ_i ‖g_i − ḡ‖²).",
    ),
    (
        _var_ddof1,
        "Dividiste por N − 1; el enunciado pide dividir por N (np.var por defecto, "
        "o torch.var(..., unbiased=False)).",
    ),
    (
        lambda g: float(np.std(np.asarray(g, dtype=float), axis=0).sum()),
        "Sumaste desviaciones típicas: la varianza es su cuadrado.",
    ),
    (
        lambda g: float(np.var(np.asarray(g, dtype=float).mean(axis=0))),
        "Esa es la dispersión entre las componentes de la media ḡ, no entre las "
        "muestras. Resta ḡ a cada fila g_i y promedia ‖g_i − ḡ‖².",
    ),
]


@exercise(MODULE, "total_variance", "La varianza total de las estimaciones")
def check_total_variance(
    total_variance: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = VARIANCE_CASES,
) -> None:
    """Comprueba ``total_variance(gradients)``."""
    cases = list(cases)
    out = as_array(total_variance(cases[0][0]), "El resultado")
    if out.size != 1:
        fail(
            f"total_variance debe devolver un solo número y devolvió forma "
            f"{out.shape}: suma las varianzas de las componentes."
        )
    check_cases(
        lambda g: float(as_array(total_variance(g), "El resultado").reshape(())),
        "total_variance",
        cases,
        baselines.total_variance,
        VARIANCE_MISTAKES,
    )


# ---------------------------------------------------------------------------
# Ejercicio 3 · normalizar los retornos, sin NaN
# ---------------------------------------------------------------------------

NORMALIZE_CASES = [
    (np.array([500.0, 520.0, 480.0, 540.0]),),
    (np.array([8.0, 2.0]),),
    (np.array([1.0, 1.0, 1.0, 1.0]),),
    (np.array([-3.0, 0.0, 12.0, 1.5, 0.5]),),
    (np.array([0.0, 0.0, 1.0]),),
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


NORMALIZE_MISTAKES = [
    (
        _unsafe(0),
        "Con todos los retornos iguales la desviación es 0 y 0/0 da NaN, que "
        "contagia la pérdida, los pesos de la red y todo lo demás. Si la "
        "desviación es (casi) cero, devuelve ceros (o suma un ε pequeño, 1e-8, "
        "a la desviación).",
    ),
    (
        _unsafe(1),
        "Con todos los retornos iguales la desviación es 0 y 0/0 da NaN. Si la "
        "desviación es (casi) cero, devuelve ceros (o suma un ε pequeño, 1e-8, "
        "a la desviación).",
    ),
    (
        lambda r: np.asarray(r, dtype=float) - np.mean(r),
        "Solo centraste: falta dividir por la desviación típica.",
    ),
    (
        lambda r: np.asarray(r, dtype=float) / (np.std(r) + 1e-8),
        "Solo dividiste: falta restar la media (lo que borra el pedestal).",
    ),
    (
        lambda r: (np.asarray(r, dtype=float) - np.mean(r)) / (np.var(r) + 1e-8),
        "Dividiste por la varianza; se divide por la desviación típica (su raíz).",
    ),
]


@exercise(MODULE, "normalize_returns", "Normalizar los retornos sin NaN")
def check_normalize_returns(
    normalize_returns: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = NORMALIZE_CASES,
) -> None:
    """Comprueba ``normalize_returns(returns)`` (vale la desviación con N o N − 1)."""
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
    (np.array([2, 0, 2, 1, 0, 2]), np.array([8.0, 2.0, 5.0, 3.0, 4.0, 2.0])),
    (np.array([0, 1, 1]), np.array([1.0, 0.0, 1.0])),
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


LOO_MISTAKES = [
    (
        _group_mean,
        "Incluiste la propia recompensa R_i en la media de su pregunta: entonces "
        "b_i depende de la acción a_i y el gradiente ya no es insesgado (se "
        "encoge por (n − 1)/n). Usa solo las otras muestras de la pregunta.",
    ),
    (
        lambda ids, r: np.full(len(r), np.mean(r)),
        "Usaste la media de todo el lote: mezcla preguntas fáciles y difíciles. "
        "La línea base de cada muestra es la media de las otras muestras de su "
        "misma pregunta.",
    ),
    (
        _batch_leave_one_out,
        "Dejaste fuera la propia muestra, bien, pero promediaste el lote entero: "
        "solo cuentan las muestras de la misma pregunta.",
    ),
    (
        _loo_nan,
        "Una pregunta con una sola muestra no tiene «otras»: 0/0 = NaN. En ese "
        "caso la línea base es 0.",
    ),
]


@exercise(MODULE, "leave_one_out_baseline", "La línea base de cada pregunta")
def check_leave_one_out_baseline(
    leave_one_out_baseline: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = LOO_CASES,
) -> None:
    """Comprueba ``leave_one_out_baseline(question_ids, rewards)``."""
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
            f"devolvió {type(out).__name__}."
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


POLICY_MISTAKES = [
    (
        lambda lp, v, g, n: float(-(lp * (v - g)).sum() / n),
        "La ventaja es A = G − V(s): restaste al revés (o falta el signo menos de "
        "la pérdida). Con el signo cambiado, lo que sale mejor de lo esperado se "
        "vuelve menos probable.",
    ),
    (
        lambda lp, v, g, n: float(-(lp * g).sum() / n),
        "No restaste la línea base: la pérdida de la política usa A = G − V(s), no G.",
    ),
    (
        lambda lp, v, g, n: float(-(lp * (g + v)).sum() / n),
        "Sumaste V(s): la ventaja es G − V(s).",
    ),
    (
        lambda lp, v, g, n: float(-(lp * (g - v)).mean()),
        "Promediaste sobre los pasos; la pérdida de la política divide por N, el "
        "número de episodios (como en el módulo 03).",
    ),
    (
        lambda lp, v, g, n: float(-(lp * (g - v)).sum()),
        "¿Olvidaste dividir por n_episodes?",
    ),
]

VALUE_MISTAKES = [
    (
        lambda lp, v, g, n: float(((v - g) ** 2).sum()),
        "La pérdida del valor es la media de (V(s_t) − G_t)² sobre los pasos, no "
        "la suma.",
    ),
    (
        lambda lp, v, g, n: float(((v - g) ** 2).sum() / n),
        "La pérdida del valor es la media sobre los M pasos, no sobre los N "
        "episodios: (1/M) Σ (V(s_t) − G_t)².",
    ),
    (
        lambda lp, v, g, n: float((v - g).abs().mean()),
        "Eso es el error absoluto medio; se pide el cuadrático, (V − G)².",
    ),
    (
        lambda lp, v, g, n: float((v - g).mean() ** 2),
        "Elevaste al cuadrado la media de los errores; es la media de los "
        "cuadrados: errores de signo opuesto no se cancelan.",
    ),
]


@exercise(MODULE, "baseline_losses", "Las pérdidas de REINFORCE con V(s)")
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
                    "red de valor solo aprende por esta pérdida."
                )
            if not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
                fail(
                    f"{name} debe ser un tensor de PyTorch conectado al grafo (para "
                    "poder llamar a backward()); no uses .item(), float() ni NumPy."
                )
            if loss.numel() != 1:
                fail(f"{name} debe ser un escalar; tiene forma {tuple(loss.shape)}.")
        policy_loss.reshape(()).backward(retain_graph=True)
        if v.grad is not None and v.grad.abs().max() > 0:
            fail(
                "La ventaja no está separada del grafo: policy_loss.backward() llega "
                "hasta V(s). Entonces la política «entrena» al crítico para hacer "
                "grande su pérdida en vez de ajustarlo a G. Usa "
                "(returns − values).detach()."
            )
        expected = -(returns - values) / n
        if lp.grad is None or not close(lp.grad, expected, atol=1e-6):
            fail(
                "El gradiente de policy_loss respecto a log_probs debería ser "
                f"−(G − V)/N = {_numbers(expected, 4)}."
            )
        v.grad = None
        value_loss.reshape(()).backward()
        expected_v = 2 * (values - returns) / len(values)
        if v.grad is None or v.grad.abs().max() == 0:
            fail(
                "value_loss no llega a V(s): ¿separaste values con detach()? La red "
                "de valor solo aprende por esta pérdida."
            )
        if not close(v.grad, expected_v, atol=1e-6):
            fail(
                "El gradiente de value_loss respecto a values debería ser "
                f"2(V − G)/M = {_numbers(expected_v, 4)}."
            )
