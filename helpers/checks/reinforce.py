"""Comprobaciones del módulo 03 · REINFORCE."""

from __future__ import annotations

import copy
import functools
import math
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from helpers import reinforce
from helpers.checks import (
    Diagnosis,
    Flow,
    as_array,
    as_tuple,
    check_cases,
    check_gradients,
    check_procedure,
    close,
    compare_parameters,
    diagnoses,
    exercise,
    fail,
    gradients_check,
    negated,
    on_output,
    patched,
    values_check,
    with_args,
    with_messages,
)
from helpers.checks import call as guarded_call
from helpers.formatting import number, numbers

MODULE = "03_reinforce"


# --- Ejercicio 1 · muestrear una acción y su log-probabilidad (una celda cada una)
_PAIR = "sample_action(logits, u) debe devolver dos cosas, (acción, log-probabilidad)"
SAMPLE_SAYS = diagnoses(
    """
action_not_single: Con logits de forma ({A},), un solo estado, hace falta una sola
    acción y la tuya tiene forma {shape}. ¿Te falta contar los tramos por debajo de u
    (.sum(-1))?
actions_wrong_count: Con logits de forma ({n}, {A}) hacían falta {n} acciones (una por
    fila) y devolviste algo de forma {shape}. ¿Contaste sobre dim=0? Cada fila es un
    estado: cuenta sobre la última dimensión (dim=-1).
action_not_index: Las acciones deben ser índices enteros 0, 1, …, A − 1: ¿devolviste
    probabilidades o logits, o el par al revés? Es (actions, log_probs).
sample_no_clamp: Hay acciones ≥ {A}: solo existen los índices 0 a {last} (si el redondeo
    deja la suma de probabilidades por debajo de u, toca la última acción).
log_prob_not_tensor: La log-probabilidad debe ser un tensor con gradiente (es {kind}):
    REINFORCE necesita derivarla. No uses .item(), float() ni NumPy.
log_prob_wrong_count: Con logits de forma {shape} hacen falta {n} log-probabilidades,
    una por estado; tiene forma {got}.
log_prob_no_grad: Tu log-probabilidad no tiene gradiente respecto a los logits (¿detach,
    .item() o torch.tensor(...)?): sin él, loss.backward() no mueve la política.
"""
)


def _sampled(out: Any, logits: torch.Tensor, u: Any) -> tuple:
    """``(acciones como array de enteros, log π)`` de lo que devolvió sample_action."""
    action, log_prob = as_tuple(out, 2, _PAIR, mistake="returns_not_pair")
    n, n_actions = (1 if logits.dim() == 1 else logits.shape[0]), logits.shape[-1]
    values = as_array(action, "La acción")
    if values.size != n:
        which = "action_not_single" if n == 1 else "actions_wrong_count"
        SAMPLE_SAYS[which].fail(n=n, A=n_actions, shape=values.shape)
    values = values.reshape(-1)
    if not np.all(values == np.round(values)) or values.min() < 0:
        SAMPLE_SAYS["action_not_index"].fail()
    if values.max() >= n_actions:
        # La fila «sample_no_clamp», cuando el índice de más no rompe log π.
        SAMPLE_SAYS["sample_no_clamp"].fail(A=n_actions, last=n_actions - 1)
    return values.astype(int).reshape(logits.shape[:-1]), log_prob


def _log_pi(logits: torch.Tensor, action: int) -> float:
    return float(torch.log_softmax(logits.double(), -1)[action])


#: Cada variante: ``(logits de un estado, acción) → log π con ese error``.
LOG_PROB_MISTAKES = with_messages(
    """
log_prob_overflow: Con logits grandes, exp desborda (inf / inf = nan): resta el máximo
    antes de exponenciar, o usa torch.log_softmax.
log_prob_log_of_softmax: Calculaste log(softmax(logits)): una probabilidad diminuta
    (e^−100) ya sale imprecisa o 0 de la softmax, y el logaritmo no lo arregla.
    Normaliza en escala logarítmica, con torch.log_softmax.
log_prob_is_prob: Eso es π(a), la probabilidad: falta el logaritmo.
log_prob_unnormalized: Eso es el logit sin normalizar: log π(a) = logit(a) − log Σ_b
    exp(logit(b)).
log_prob_of_argmax: Es la log-probabilidad de la acción más probable: debe ser la de la
    acción que elegiste.
log_prob_sign: ¿El signo? log π(a) = log_softmax(logits)[a], que nunca es positivo: ni
    −log π(a) (lo que suma la entropía cruzada) ni la softmax de −logits.
log_prob_rounded: Está redondeado: no redondees la log-probabilidad.
""",
    ("log_prob_overflow", lambda z, a: float((z.exp() / z.exp().sum()).log()[a])),
    (
        "log_prob_log_of_softmax",
        lambda logits, a: float(torch.log(torch.softmax(logits.float(), -1))[a]),
    ),
    ("log_prob_is_prob", lambda logits, a: math.exp(_log_pi(logits, a))),
    ("log_prob_unnormalized", lambda logits, a: float(logits[a])),
    ("log_prob_of_argmax", lambda z, a: float(z.double().log_softmax(-1).max())),
    ("log_prob_sign", lambda logits, a: -_log_pi(logits, a)),
    ("log_prob_sign", lambda logits, a: _log_pi(-logits, a)),
    ("log_prob_rounded", lambda logits, a: round(_log_pi(logits, a), 2)),
)


_F32 = torch.float32
_t = functools.partial(torch.tensor, dtype=torch.float64)
SAMPLE_CASES = [
    *[(_t([0.3, -1.2, 1.7]), _t(u)) for u in (0.05, 0.21, 0.6)],
    (_t([0.5, 0.5, -2.0, 1.0, 0.0]), _t(0.47)),
    (
        _t([[2.0, 0.0, 0.0, -1.0], [0.0, 0.0, 0.0, 0.0], [-1.0, 3.0, 0.0, 0.5]] * 2),
        _t([0.8, 0.6, 0.9, 0.1, 0.1, 0.99]),
    ),
    # Logits enormes: exp(1000) desborda si no se resta el máximo.
    (_t([1000.0, 1000.5, 999.0]), _t(0.5)),
    # u = 0,5, justo en el borde de un tramo (0,25 + 0,25): la acumulada de la
    # acción 1 no *supera* u, la de la 2 sí.
    *[(_t([0.0] * 4), _t(u)) for u in (0.0, 0.5)],
    # En float32 estas probabilidades suman 0,99999988 < u = 0,99999994:
    # ningún tramo supera u y toca la última acción.
    (_t([0.4, -3.7, 0.7, -1.3, 0.3, -3.7], dtype=_F32), _t(1 - 2**-24, dtype=_F32)),
    # π(0) = e^−100 es subnormal en float32: softmax la guarda con un 2 % de
    # error, y log(softmax) lo arrastra; log_softmax da −100.
    (_t([0.0, 100.0], dtype=_F32), _t(0.0, dtype=_F32)),
]


_SAMPLE = reinforce.sample_action
_action = on_output(_SAMPLE, lambda out: out[0], "solo la acción")


def _clamped(weights: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Cuántos tramos de ``weights`` acumulados quedan en u o debajo, hasta A − 1."""
    below = (weights.cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    return below.clamp(max=weights.shape[-1] - 1)


def _count(logits: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """La acción sin el tope A − 1 de la referencia."""
    return (logits.softmax(-1).cumsum(-1) <= u.unsqueeze(-1)).sum(-1)


#: Cada variante da solo la acción elegida (la log-probabilidad es otra celda).
SAMPLE_MISTAKES = with_messages(
    """
sample_strictly_below: Con «<» te quedas con la acción cuya acumulada vale justo u: la
    acción es la primera cuya acumulada **supera** u, así que los tramos que cuentan son
    los de acumulada ≤ u.
sample_argmax: No usas u: eliges siempre la acción más probable (argmax), y así la
    política no explora. La acción es la primera cuya probabilidad acumulada supera u.
sample_uniform_bins: Repartiste u en A tramos iguales: todas las acciones salen igual de
    probables. Los tramos deben medir π(0), π(1), …: acumula softmax(logits).
sample_cumsum_logits: Acumulaste los logits; lo que se acumula son las probabilidades
    softmax(logits), que suman 1.
sample_one_before: Te quedas una acción antes: tomaste la última cuya probabilidad
    acumulada no llega a u. Es la primera que la supera.
sample_sign: ¿El signo? Las probabilidades son softmax(logits), no softmax(−logits).
sample_reversed_cumsum: Acumulaste las probabilidades desde la última acción: se
    acumulan en orden, π(0), π(0) + π(1), …
sample_softmax_overflow: Con logits enormes, exp(1000) desborda (inf / inf = nan) y la
    acción sale mal. Resta el máximo antes de exponenciar, o usa torch.softmax.
sample_no_last_fallback, sample_no_clamp: En float32 la suma de todas las probabilidades
    puede quedarse un pelín por debajo de u (0,99999988 < 0,99999994): entonces ninguna
    acumulada supera u, y el enunciado pide la última acción. Limita el índice a A − 1.
""",
    # «acumulada < u» es «acumulada ≤ el float anterior a u».
    ("sample_strictly_below", lambda z, u: _action(z, u.nextafter(u - 1))),
    # Sin ningún tramo por encima de u, la primera acción (argmax de nada).
    ("sample_no_last_fallback", lambda z, u: _count(z, u) % z.shape[-1]),
    ("sample_no_clamp", _count),
    ("sample_argmax", lambda z, u: z.argmax(-1)),
    ("sample_uniform_bins", lambda z, u: _action(torch.zeros_like(z), u)),
    ("sample_cumsum_logits", lambda z, u: _clamped(z, u)),
    ("sample_one_before", lambda z, u: (_count(z, u) - 1).clamp(min=0)),
    ("sample_sign", lambda z, u: _action(-z, u)),
    ("sample_reversed_cumsum", lambda z, u: z.shape[-1] - 1 - _action(z.flip(-1), u)),
    (
        "sample_softmax_overflow",
        lambda z, u: _clamped(z.exp() / z.exp().sum(-1, keepdim=True), u),
    ),
)


_FALLBACK = next(m.message for m in SAMPLE_MISTAKES if m.id == "sample_no_clamp")


def _with_log(actions_of: Callable[..., Any]) -> Callable[..., Any]:
    """``(acción, log π)`` de una función de la acción: un índice de más lanza."""

    def sample(logits: torch.Tensor, u: torch.Tensor) -> tuple:
        actions = torch.as_tensor(actions_of(logits, u)).reshape(logits.shape[:-1])
        log_pi = torch.log_softmax(logits, -1)
        return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)

    return sample


def _sample(sample_action: Callable[..., Any], logits: Any, u: Any) -> tuple:
    return _sampled(guarded_call(sample_action, "sample_action", logits, u), logits, u)


check_sample_action = values_check(
    MODULE,
    "sample_action",
    _SAMPLE,
    [replace(m, variant=_with_log(m.variant)) for m in SAMPLE_MISTAKES],
    SAMPLE_CASES,
    aspect="la acción",
    doc="La acción de ``sample_action(logits, u)`` (inversa de la acumulada).",
    view=lambda out, *args: _sampled(out, *args)[0],
)


def _summed(function: Callable[..., Any]) -> Callable[..., Any]:
    """La salida sumada, sobre copias (forma y entradas las mira la celda del valor)."""

    def summed(*args: Any) -> torch.Tensor:
        copies = (a.clone() if isinstance(a, torch.Tensor) else a for a in args)
        return torch.as_tensor(function(*copies)).sum()

    return functools.wraps(function)(summed)


_LOG_PI_IS = "Es el logaritmo natural de π(a): log_softmax(logits)[a]."
LOG_PROB_GRADIENT_CASES = [(_t([[0.3, -1.2, 1.7], [1.0, 0.0, -1.0]]), _t([0.1, 0.8]))]


@exercise(MODULE, "sample_action", "su log-probabilidad")
def check_sample_action_log_prob(sample_action, cases=SAMPLE_CASES) -> None:
    """La log-probabilidad de la acción elegida: valor, forma y gradiente."""
    for logits, u in cases:
        try:
            actions, log_prob = _sample(sample_action, logits, u)
        except (RuntimeError, IndexError) as error:
            if not any(s in str(error) for s in ("out of bounds", "out of range")):
                raise
            fail(
                f"sample_action({numbers(logits, 1)}, u = {numbers(u, 8)}) lanzó "
                f"{type(error).__name__}: {error}. {_FALLBACK}",
                "sample_no_clamp",
            )
        if not isinstance(log_prob, torch.Tensor):
            SAMPLE_SAYS["log_prob_not_tensor"].fail(kind=type(log_prob).__name__)
        if log_prob.numel() != actions.size:
            shapes = {"shape": tuple(logits.shape), "got": tuple(log_prob.shape)}
            SAMPLE_SAYS["log_prob_wrong_count"].fail(n=actions.size, **shapes)
        got = log_prob.detach().double().reshape(-1).numpy()
        rows = logits.reshape(-1, logits.shape[-1])
        want = [_log_pi(row, a) for row, a in zip(rows, actions.flat, strict=True)]
        if not close(got, np.array(want), atol=1e-4):
            # La fila cuya variante da lo mismo; dos no finitos (nan, −inf) coinciden.
            i = int(np.argmax(np.nan_to_num(np.abs(got - want), nan=np.inf)))
            row, a, value = rows[i].detach(), int(actions.flat[i]), float(got[i])
            intro = (
                f"Para logits {numbers(row.double(), 3)} y la acción elegida {a}, "
                f"log π(a) = {number(want[i], 4)}, pero devolviste {number(value, 4)}."
            )
            for mistake in LOG_PROB_MISTAKES:
                pair = np.array([value, mistake.variant(row, a)])
                if not np.isfinite(pair).any() or np.isclose(*pair, 1e-6, 1e-5):
                    fail(f"{intro} {mistake.message}", mistake.id)
            fail(f"{intro} {_LOG_PI_IS}", "log_prob_wrong_value")
    # log π de las acciones que eligió (una mala elección ya cuesta en la otra celda).
    chosen = _with_log(lambda z, u: _sample(sample_action, z.detach(), u)[0])
    check_gradients(
        _summed(lambda z, u: sample_action(z, u)[1]),
        "sample_action",
        LOG_PROB_GRADIENT_CASES,
        _summed(lambda logits, u: chosen(logits, u)[1]),
        prefix="log_prob",
        wrt={"logits": Flow(True, SAMPLE_SAYS["log_prob_no_grad"])},
        without_gradient=SAMPLE_SAYS["log_prob_no_grad"],
        mistake="log_prob_wrong_grad",
        hint="Debe ser el de log_softmax(logits)[a], one_hot(a) − π fila a fila. "
        "¿Separaste del grafo algún trozo, como el normalizador log Σ exp(logits)?",
    )


# --- Ejercicio 2 · la log-densidad gaussiana
GAUSSIAN_CASES = [
    (_t([[0.5], [-1.0], [2.0]]), _t([[0.0], [0.0], [1.0]]), _t([0.0])),
    (_t([[1.0, -2.0, 0.3]]), _t([[0.5, -1.0, 0.0]]), _t([-0.5, 0.2, 1.0])),
    (_t([[0.1, 0.2], [3, -1]]), _t([[0, 0], [1, 1]]), _t([[0.3, -0.7], [-1.2, 0.4]])),
    (_t([[60.0], [0.0]]), _t([[0.0], [0.0]]), _t([0.0])),
    (_t([[1.5, 1.5]]), _t([[1.5, 1.0]]), _t([-2.0, -2.0])),
]

_GAUSSIAN = reinforce.gaussian_log_prob


def _stretched(factor: Callable[[torch.Tensor], Any]) -> Callable[..., Any]:
    """La referencia con a − μ por ``factor(log_std)``: −z²/2 → −z²·factor²/2."""
    return lambda a, m, s: _GAUSSIAN(m + (a - m) * factor(s), m, s)


GAUSSIAN_MISTAKES = with_messages(
    """
gaussian_log_std_as_std: ¿Usaste log_std como σ? Es su logaritmo: σ = exp(log_std).
gaussian_log_std_as_log_var: ¿Tomaste log_std como log σ²? Es log σ: la varianza es
    exp(2·log_std).
gaussian_no_log_std: Falta el término −log σ (normaliza la densidad por su anchura).
gaussian_no_constant: Falta la constante −½·log(2π) en cada dimensión.
gaussian_divide_by_std: Se divide por σ², no por σ: −(a − μ)² / (2σ²).
gaussian_no_half: Falta el ½ del término cuadrático: −(a − μ)² / (2σ²).
gaussian_mean_dims: Promediaste las dimensiones: las d dimensiones son independientes,
    así que sus log-densidades se suman.
gaussian_density_then_log: Calculaste la densidad y luego su logaritmo: para una acción
    lejana exp(−z²/2) se redondea a 0 y log(0) = −inf. Escribe la fórmula directamente
    en escala logarítmica.
""",
    # A mano: con log_std < 0 el valor es NaN, pero el gradiente no.
    (
        "gaussian_log_std_as_std",
        lambda a, m, s: (
            -0.5 * ((a - m) / s) ** 2 - torch.log(s) - math.log(2 * math.pi) / 2
        ).sum(-1),
    ),
    ("gaussian_log_std_as_log_var", lambda a, m, s: _GAUSSIAN(a, m, s / 2)),
    (
        "gaussian_no_log_std",
        lambda a, m, s: _GAUSSIAN(a, m, s) + s.expand_as(a).sum(-1),
    ),
    (
        "gaussian_no_constant",
        lambda a, m, s: _GAUSSIAN(a, m, s) + a.shape[-1] * math.log(2 * math.pi) / 2,
    ),
    ("gaussian_divide_by_std", _stretched(lambda s: torch.exp(s / 2))),
    ("gaussian_no_half", _stretched(lambda s: math.sqrt(2))),
    ("gaussian_mean_dims", lambda a, m, s: _GAUSSIAN(a, m, s) / a.shape[-1]),
    # La densidad y luego su logaritmo: lejos de μ, exp redondea a 0.
    (
        "gaussian_density_then_log",
        on_output(_GAUSSIAN, lambda out: out.exp().log(), "exp y luego log"),
    ),
)


@exercise(MODULE, "gaussian_log_prob", "el valor")
def check_gaussian_log_prob(gaussian_log_prob, cases=GAUSSIAN_CASES) -> None:
    """Comprueba ``gaussian_log_prob(actions, mean, log_std)`` contra la fórmula."""
    cases = [tuple(torch.as_tensor(x) for x in case) for case in cases]
    # Una acción de varias dimensiones: ¿devuelve una log-densidad por acción?
    wide = next((c for c in cases if c[0].shape[-1] > 1), cases[0])
    out = guarded_call(gaussian_log_prob, "gaussian_log_prob", *wide)
    if as_array(out, "El resultado").shape == wide[0].shape:
        fail(
            "Devolviste una log-densidad por dimensión, forma "
            f"{tuple(wide[0].shape)}: suma sobre la última dimensión para tener "
            "una por acción, forma (N,).",
            "gaussian_per_dimension",
        )
    check_cases(
        gaussian_log_prob, "gaussian_log_prob", cases, _GAUSSIAN, GAUSSIAN_MISTAKES
    )


@exercise(MODULE, "gaussian_log_prob", "el gradiente")
def check_gaussian_log_prob_grad(
    gaussian_log_prob,
    # Sin la acción lejana: que la densidad se redondee a 0 lo califica el valor.
    cases=GAUSSIAN_CASES[:3] + GAUSSIAN_CASES[4:],
) -> None:
    """El gradiente de la log-densidad (sumada) respecto a ``mean`` y ``log_std``."""
    check_gradients(
        _summed(gaussian_log_prob),
        "gaussian_log_prob",
        [tuple(torch.as_tensor(x) for x in case) for case in cases],
        _summed(_GAUSSIAN),
        [replace(m, variant=_summed(m.variant)) for m in GAUSSIAN_MISTAKES],
        prefix="gaussian",
        wrt=dict.fromkeys(["mean", "log_std"], Flow(True, id="gaussian_no_grad")),
        without_gradient=Diagnosis(
            id="gaussian_no_grad",
            message="Tu log-densidad no tiene gradiente respecto a mean y log_std: "
            "usa operaciones de torch (torch.exp, **, .sum), no NumPy ni math, "
            "para que REINFORCE pueda mover μ y σ.",
        ),
        mistake="gaussian_wrong_grad",
        hint="Si tu valor (la otra celda) ya está bien, ¿separaste del grafo algún "
        "trozo (.detach(), σ como número)? El gradiente de log_std llega por "
        "−log σ y también por σ = exp(log_std) en el término cuadrático. Si no, "
        "corrige el valor y el gradiente vendrá con él.",
    )


# --- Ejercicio 3 · retornos descontados
RETURNS_CASES = [
    ([1.0, 1.0, 1.0], 0.9),
    ([0.0, 0.0, 1.0], 0.5),
    ([1.0, 2.0, 3.0, 4.0], 1.0),
    ([5.0], 0.99),
    (np.array([1.0, -1.0, 2.0, 0.0, 3.0]), 0.8),
    (np.array([2.0, 0.0, 0.0, 0.0]), 0.0),
    # Recompensas enteras: los retornos con γ < 1 tienen decimales.
    ([1, 0, 2, 1], 0.5),
]

_RETURNS = reinforce.discounted_returns


def _floats(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=float)


RETURNS_MISTAKES = with_messages(
    """
returns_forward: Acumulaste hacia delante (lo cobrado hasta t). G_t mira al futuro:
    recorre el episodio hacia atrás, G_t = r_t + γ·G_{t+1}.
returns_gamma_outside: γ multiplica en el paso equivocado: r_t no se descuenta, solo el
    futuro. Es G_t = r_t + γ·G_{t+1}, no γ·(r_t + G_{t+1}).
returns_absolute_discount: El descuento cuenta desde t, no desde el inicio del episodio:
    G_t = Σ_k γ^(k−t)·r_k.
returns_total: Diste a todos los pasos el retorno del episodio entero (G_0). Cada paso
    recibe lo que viene desde él: G_t = r_t + γ·G_{t+1}.
returns_immediate: Son las recompensas inmediatas: falta sumar el futuro descontado.
returns_not_reversed: Los valores están bien pero al revés: si los calculas hacia atrás,
    dale la vuelta a la lista al final (o escribe en returns[t]).
""",
    # Los de referencia del episodio al revés: lo cobrado hasta t.
    ("returns_forward", lambda r, g: _RETURNS(_floats(r)[::-1], g)[::-1]),
    ("returns_gamma_outside", lambda r, g: _RETURNS(g * _floats(r), g)),
    (
        "returns_absolute_discount",
        lambda r, g: _RETURNS(g ** np.arange(len(r)) * _floats(r), 1.0),
    ),
    (
        "returns_total",
        on_output(_RETURNS, lambda out: np.full(len(out), out[0]), "G_0 en cada paso"),
    ),
    ("returns_immediate", lambda r, g: _RETURNS(r, 0.0)),
    ("returns_not_reversed", on_output(_RETURNS, lambda o: o[::-1], "al revés")),
)

_RETURN_VARIANTS = {row.id: row.variant for row in RETURNS_MISTAKES}

check_discounted_returns = values_check(
    MODULE, "discounted_returns", _RETURNS, RETURNS_MISTAKES, RETURNS_CASES
)


# --- Ejercicio 4 · la estimación del gradiente por función de puntuación
SCORE_CASES = [
    (np.array(theta), [*map(np.array, actions)], [*map(np.array, returns)])
    for theta, actions, returns in [
        ([0.0, 0.0], [[1, 1, 0], [1]], [[-3.0, -2.0, -1.0], [-1.0]]),
        (
            [0.5, -0.5],
            [[0, 1], [1, 0, 1, 1], [1]],
            [[-2.0, -1.0], [-4.0, -3.0, -2.0, -1.0], [-1.0]],
        ),
        ([1.0, 0.0, -1.0], [[2, 0], [1, 1, 2]], [[0.5, 2.0], [1.0, -1.0, 3.0]]),
    ]
]

_SCORE = reinforce.score_function_gradient


def _without_pi(theta, actions, returns):
    """Sin el −π: la referencia con una acción de más que se lleva toda la π."""
    return _SCORE(np.append(theta, 1e3), actions, returns)[:-1]


def _reweighted(weight, estimate=_SCORE):
    """``estimate`` con cada G_t cambiado por ``weight(G_t, π(a_t))``."""

    def variant(theta, actions, returns):
        pi = np.exp(theta - np.max(theta)) / np.exp(theta - np.max(theta)).sum()
        new = [weight(_floats(g), pi[a]) for a, g in zip(actions, returns, strict=True)]
        return estimate(theta, actions, new)

    return variant


SCORE_MISTAKES = with_messages(
    """
score_no_divide: ¿Olvidaste dividir por N, el número de episodios? Es una media sobre
    episodios: (1/N) Σ_i Σ_t …
score_divide_by_steps: Dividiste por el número total de pasos; se divide por N, el
    número de episodios (dentro de cada episodio los pasos se suman).
score_grad_of_prob: Eso es ∇π(a), el gradiente de la probabilidad. El truco usa ∇log
    π(a) = ∇π(a) / π(a) = one_hot(a) − π: no multipliques por π(a).
score_sign: ¿El signo? ∇log π(a) = one_hot(a) − π: la acción tomada sube y las demás
    bajan.
score_chosen_only: También cambian los logits de las acciones no tomadas: ∇log π(a)
    tiene −π(b) en cada componente b ≠ a.
score_no_minus_pi: Falta restar π: ∇_θ log softmax(θ)[a] = one_hot(a) − π.
score_no_return: Falta multiplicar cada término por su retorno G_t: así solo sube lo que
    se eligió, sin importar si salió bien o mal.
""",
    ("score_no_divide", lambda th, a, g: len(a) * _SCORE(th, a, g)),
    (
        "score_divide_by_steps",
        lambda th, a, g: len(a) / sum(map(len, a)) * _SCORE(th, a, g),
    ),
    ("score_grad_of_prob", _reweighted(lambda g, p: g * p)),
    ("score_sign", negated(_SCORE)),
    # Solo la componente a de G·(one_hot(a) − π): G·(1 − π(a))·one_hot(a).
    ("score_chosen_only", _reweighted(lambda g, p: g * (1 - p), _without_pi)),
    ("score_no_minus_pi", _without_pi),
    ("score_no_return", _reweighted(lambda g, p: np.ones_like(g))),
)

check_score_function_gradient = values_check(
    MODULE, "score_function_gradient", _SCORE, SCORE_MISTAKES, SCORE_CASES
)


# --- Ejercicio 5 · la pérdida de REINFORCE
LOSS_CASES = [
    (_t([-0.5, -1.0, -0.2]), _t([3.0, 2.0, 1.0]), 1),
    (_t([-0.7, -0.1, -2.0, -0.3]), _t([1.0, -1.0, 0.5, 2.0]), 2),
    (_t([-1.2, -0.4, -0.9, -0.05, -3.0]), _t([5.0, 4.0, 3.0, 2.0, 1.0]), 4),
]

_LOSS = reinforce.reinforce_loss

LOSS_MISTAKES = with_messages(
    """
loss_no_minus: Falta el signo menos: el optimizador minimiza, y sin él subes la
    probabilidad de lo que salió peor. Es −(1/N) Σ log π · G.
loss_mean_over_steps: Promediaste sobre los pasos; el enunciado divide por N, el número
    de episodios. Con la media por pasos los episodios largos pesan menos y la escala
    del gradiente cambia.
loss_no_divide: ¿Olvidaste dividir por n_episodes? Es una media sobre los N episodios.
loss_prob: La pérdida usa log π(a_t|s_t), no la probabilidad π = exp(log π).
loss_sum_times_sum: Cada log π(a_t|s_t) se multiplica por su propio G_t (producto
    elemento a elemento), no la suma de unos por la suma de otros.
""",
    ("loss_no_minus", negated(_LOSS)),
    ("loss_mean_over_steps", lambda lp, g, n: _LOSS(lp, g, len(lp))),
    ("loss_no_divide", lambda lp, g, n: _LOSS(lp, g, 1)),
    ("loss_prob", lambda lp, g, n: _LOSS(lp.exp(), g, n)),
    ("loss_sum_times_sum", lambda lp, g, n: _LOSS(lp.sum(), g.sum(), n)),
)

LOSS_SAYS = diagnoses(
    """
loss_not_scalar: La pérdida debe ser un escalar (un solo número): suma log π(a_t|s_t) ·
    G_t sobre todos los pasos y divide por N.
loss_wrong_grad: No llega gradiente a log_probs: ¿la cambiaste por un tensor nuevo (con
    torch.tensor(...) o .detach())? Usa log_probs tal cual.
loss_returns_grad: El retorno arrastra gradiente: loss.backward() llegó hasta returns.
    G_t es un peso constante, no algo que optimizar: usa returns.detach().
loss_not_tensor: La pérdida debe ser un tensor de PyTorch conectado a log_probs (para
    poder llamar a loss.backward()); no uses .item(), float() ni NumPy.
"""
)


def _scalar(loss: Any, *args: Any) -> Any:
    if math.prod(shape := tuple(getattr(loss, "shape", ()))) != 1:
        said = LOSS_SAYS["loss_not_scalar"]
        fail(f"{said.message} Tiene forma {shape}.", said.id)
    return loss


check_reinforce_loss = values_check(
    MODULE,
    "reinforce_loss",
    _LOSS,
    LOSS_MISTAKES,
    LOSS_CASES,
    aspect="el valor",
    view=_scalar,
)


check_reinforce_loss_grad = gradients_check(
    MODULE,
    "reinforce_loss",
    _LOSS,
    (),  # sin filas: el error típico ya lo dice la celda del valor
    LOSS_CASES,
    aspect="el gradiente",
    doc="Comprueba el gradiente: llega a ``log_probs`` (−G_t / N) y no a ``returns``.",
    prefix="loss",
    wrt={
        "log_probs": Flow(True, LOSS_SAYS["loss_wrong_grad"]),
        "returns": Flow(False, LOSS_SAYS["loss_returns_grad"]),
    },
    without_gradient=LOSS_SAYS["loss_not_tensor"],
    wrong_shape=LOSS_SAYS["loss_not_scalar"],
    mistake="loss_wrong_grad",
    hint="Respecto a log_probs debe ser −G_t / N.",
)


# --- Ejercicio 6 · el bucle de REINFORCE (rollout, gradiente y parámetros)
@dataclass(frozen=True)
class LoopCase:
    """CartPole cortado a ``horizon`` pasos, o la sonda; ``seed``: red y episodios."""

    env_id: str = "cartpole"
    seed: int = 3
    n_episodes: int = 3
    gamma: float = 0.9
    horizon: int = 12

    def make_env(self) -> Any:
        import gymnasium as gym

        if self.env_id == "sonda":
            from helpers.probes import ObservationActionReward

            return ObservationActionReward()
        return gym.make("CartPole-v1", max_episode_steps=self.horizon)


LOOP_CASES = {
    "cartpole": LoopCase(),
    "cartpole_largo": LoopCase(seed=11, n_episodes=4, gamma=0.99, horizon=30),
    "sonda": LoopCase(env_id="sonda", seed=5, n_episodes=5, gamma=0.5),
}


class _RecordingEnv:
    """Un entorno que anota las semillas de ``reset`` y las acciones de cada paso."""

    def __init__(self, env: Any) -> None:
        self.env, self.after_end, self._done = env, False, True
        self.seeds, self.actions = [], []

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        self.seeds.append(kwargs.get("seed", args[0] if args else None))
        self.actions.append([])
        self._done = False
        return self.env.reset(*args, **kwargs)

    def step(self, action: Any) -> Any:
        self.after_end |= self._done
        self.actions[-1].append(int(action))
        out = self.env.step(action)
        self._done = bool(out[2] or out[3])
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)


_Run = namedtuple("_Run", "returned env steps policy generator_draws")


def _run_loop(function, case: LoopCase, n_updates: int, lr: float) -> _Run:
    env = _RecordingEnv(case.make_env())
    torch.manual_seed(case.seed)
    policy = reinforce.CategoricalPolicy(env.observation_space.shape[0], 2, hidden=8)
    params = list(policy.parameters())
    optimizer = torch.optim.SGD(params, lr=lr)
    steps: list[list[torch.Tensor | None]] = []  # los gradientes al dar cada paso
    optimizer.register_step_pre_hook(
        lambda *_: steps.append([copy.deepcopy(p.grad) for p in params])
    )
    generator = torch.Generator().manual_seed(case.seed)
    probe = torch.Generator().manual_seed(case.seed)
    episodes = (case.n_episodes, case.gamma, case.seed)
    returned = function(policy, optimizer, env, n_updates, *episodes, generator)
    # ¿Cuántos uniformes se sacaron? Se cuenta reproduciendo la secuencia.
    draws = 0
    while not torch.equal(probe.get_state(), generator.get_state()) and draws < 1e5:
        torch.rand((), generator=probe)
        draws += 1
    return _Run(returned, env, steps, policy, draws)


_USED = ("sample_action", "discounted_returns", "reinforce_loss")
_LOOP_USES = {name: getattr(reinforce, name) for name in _USED}
LOOP_SAYS = diagnoses(
    """
loop_wrong_episode_count: Con {updates} actualizaciones de {n} episodios hacían falta
    {total} episodios (un env.reset por episodio) y jugaste {played}.
loop_wrong_seeds: El episodio {first} empezó con reset(seed={got}) y debía empezar con
    seed={want}: {hint}el episodio i (contando todos) empieza con reset(seed=seed + i).
loop_step_after_end: Seguiste llamando a env.step después de que el episodio acabara:
    acaba en cuanto terminated o truncated valen True.
loop_no_generator_draws: No sacaste ningún número de generator: en cada paso, u =
    torch.rand((), generator=generator), y la acción es sample_action(logits, u).
loop_wrong_episode_length: El episodio {episode} duró {got} pasos y debía durar {want}:
    un episodio acaba cuando terminated o truncated vale True, ni antes ni después.
loop_wrong_action: En el paso {step} del episodio {episode} tu acción fue {got} y debía
    ser {want}{draws}. En cada paso, justo antes de elegir: u = torch.rand((),
    generator=generator), y sample_action(policy(obs), u), con obs como tensor float32.
loop_returned_wrong_shape: reinforce_updates debe devolver una lista con el retorno
    medio de cada actualización ({n} números) y devolvió forma {shape}.
loop_returned_wrong_value: Lo que devuelves no es el retorno medio (la suma de
    recompensas, sin descontar, de cada episodio, promediada) de cada actualización:
    devolviste {got} y debía ser {want}.{hint}
loop_steps_per_update: En una actualización diste {steps} pasos del optimizador; es uno
    por actualización, con la pérdida de los N episodios juntos.
loop_no_backward: Cuando llamaste a optimizer.step() los parámetros no tenían gradiente
    (o era cero): hace falta loss.backward() antes del paso, y optimizer.zero_grad() va
    antes de backward, no entre backward y step.
loop_grad_sign: Tu gradiente es el de referencia cambiado de signo: la pérdida ya lleva
    su menos; el optimizador la minimiza.
loop_grad_scale: Tu gradiente es el de referencia por {ratio}: la pérdida se divide por
    N, el número de episodios de la actualización.
loop_wrong_step_count: En {updates} actualizaciones diste {steps} pasos del optimizador;
    es uno por actualización.
loop_no_zero_grad: En la actualización {k} el gradiente arrastra el de la anterior:
    falta optimizer.zero_grad() en cada actualización (PyTorch suma los gradientes de
    cada backward).
"""
)


@exercise(MODULE, "reinforce_updates", "el rollout", uses=_LOOP_USES)
def check_reinforce_updates(reinforce_updates, case="cartpole") -> None:
    """La etapa 1 y lo que devuelve, con lr = 0: la política no cambia."""
    setup, n_updates = LOOP_CASES[case], 2
    got = _run_loop(reinforce_updates, setup, n_updates, lr=0.0)
    want = _run_loop(reinforce.reinforce_updates, setup, n_updates, lr=0.0)
    seeds, n_total = got.env.seeds, n_updates * setup.n_episodes
    if len(seeds) != n_total:
        LOOP_SAYS["loop_wrong_episode_count"].fail(
            updates=n_updates, n=setup.n_episodes, total=n_total, played=len(seeds)
        )
    if seeds != want.env.seeds:
        first = next(i for i, s in enumerate(seeds) if s != want.env.seeds[i])
        hint = ""
        if len(set(seeds)) == 1:
            hint = "todos tus episodios empiezan igual; "
        elif seeds[setup.n_episodes] == setup.seed:
            hint = "las semillas vuelven a empezar en cada actualización; "
        LOOP_SAYS["loop_wrong_seeds"].fail(
            first=first, got=seeds[first], want=want.env.seeds[first], hint=hint
        )
    if got.env.after_end:
        LOOP_SAYS["loop_step_after_end"].fail()
    if got.generator_draws == 0:
        LOOP_SAYS["loop_no_generator_draws"].fail()
    pairs = zip(got.env.actions, want.env.actions, strict=True)
    for episode, (mine, theirs) in enumerate(pairs):
        shared = min(len(mine), len(theirs))
        step = next((t for t in range(shared) if mine[t] != theirs[t]), shared)
        if step == shared and len(mine) != len(theirs):
            LOOP_SAYS["loop_wrong_episode_length"].fail(
                episode=episode, got=len(mine), want=len(theirs)
            )
        if step < shared:
            drawn, due = got.generator_draws, want.generator_draws
            draws = f" (sacaste {drawn} uniformes y hacían falta {due}, uno por paso)"
            said = dict(step=step, episode=episode, got=mine[step], want=theirs[step])
            LOOP_SAYS["loop_wrong_action"].fail(**said, draws=draws * (drawn != due))
    returned = as_array(got.returned, "Lo que devuelve reinforce_updates")
    expected = _floats(want.returned)
    if returned.shape != expected.shape:
        LOOP_SAYS["loop_returned_wrong_shape"].fail(n=n_updates, shape=returned.shape)
    if not close(returned, expected, atol=1e-5):
        sums = _floats([len(a) for a in want.env.actions]).reshape(n_updates, -1)
        hint, mistake = "", "loop_returned_wrong_value"
        if close(returned, sums.sum(1), atol=1e-5):
            hint = " Sumaste los episodios: es la media sobre los N de cada una."
            mistake = "loop_returned_sum"
        shown = dict(got=numbers(returned, 2), want=numbers(expected, 2), hint=hint)
        fail(LOOP_SAYS["loop_returned_wrong_value"].message.format(**shown), mistake)


def _across_batch(*args: Any) -> Any:
    """La referencia con los retornos de todo el lote seguido (los da la pérdida)."""

    def loss(log_probs: torch.Tensor, rewards: torch.Tensor, n: int) -> torch.Tensor:
        returns = torch.as_tensor(_RETURNS(rewards, args[5]), dtype=torch.float32)
        return _LOSS(log_probs, returns, n)

    pieces = {"discounted_returns": lambda r, gamma: r, "reinforce_loss": loss}
    return patched(reinforce.reinforce_updates, **pieces)(*args)


def _each(returns: Callable[[list[float], float], Any]) -> Callable[..., Any]:
    return patched(reinforce.reinforce_updates, discounted_returns=returns)


#: Los errores típicos del bucle que se reconocen por su gradiente.
LOOP_GRADIENT_MISTAKES = with_messages(
    """
loop_returns_across_batch: Calculaste los retornos sobre todo el lote seguido: el final
    de un episodio cobra lo que pasó en el siguiente. Se calculan episodio a episodio.
loop_returns_no_gamma: Tus retornos no usan gamma: G_t = r_t + γ·G_{t+1}, con el gamma
    que recibe la función.
loop_returns_total: Diste a cada paso el retorno del episodio entero (G_0): cada paso
    pesa con lo que vino después de él, G_t.
loop_returns_immediate: Pesaste cada paso con su recompensa inmediata r_t: el peso es el
    retorno G_t.
""",
    ("loop_returns_across_batch", _across_batch),
    ("loop_returns_no_gamma", _each(with_args(_RETURNS, gamma=1.0))),
    ("loop_returns_total", _each(_RETURN_VARIANTS["returns_total"])),
    ("loop_returns_immediate", _each(with_args(_RETURNS, gamma=0.0))),
)


def _flat(gradients: list[torch.Tensor | None]) -> np.ndarray:
    kept = [g.detach().double().reshape(-1).numpy() for g in gradients if g is not None]
    return np.concatenate([np.zeros(0), *kept])


@exercise(MODULE, "reinforce_updates", "retornos y pérdida", uses=_LOOP_USES)
def check_reinforce_updates_grad(reinforce_updates, case="cartpole") -> None:
    """Etapas 2 y 3: el gradiente al dar el único paso (vaya donde vaya zero_grad)."""
    setup = LOOP_CASES[case]
    got = _run_loop(reinforce_updates, setup, 1, lr=0.0)
    want = _run_loop(reinforce.reinforce_updates, setup, 1, lr=0.0)
    if len(got.steps) != 1:
        LOOP_SAYS["loop_steps_per_update"].fail(steps=len(got.steps))
    mine, theirs = got.steps[0], want.steps[0]
    if any(g is None for g in mine) or not np.any(_flat(mine)):
        LOOP_SAYS["loop_no_backward"].fail()

    def run(implementation: Callable[..., Any]) -> np.ndarray:
        return _flat(_run_loop(implementation, setup, 1, lr=0.0).steps[0])

    def unexplained(got_flat: np.ndarray, want_flat: np.ndarray) -> bool:
        ratio = got_flat @ want_flat / max(want_flat @ want_flat, 1e-12)
        if close(got_flat, ratio * want_flat, atol=1e-5, rtol=1e-4):
            if abs(ratio + 1) < 1e-3:
                LOOP_SAYS["loop_grad_sign"].fail()
            LOOP_SAYS["loop_grad_scale"].fail(ratio=number(ratio, 3))
        names = [name for name, _ in got.policy.named_parameters()]
        compare_parameters(
            dict(zip(names, mine, strict=True)),
            dict(zip(names, theirs, strict=True)),
            what="el gradiente del primer paso",
            mistake="loop_wrong_gradient",
        )
        return True  # iguales con la tolerancia de compare_parameters

    # El mensaje de un error típico va solo, sin describir antes la diferencia.
    check_procedure(
        reinforce_updates,
        reinforce.reinforce_updates,
        LOOP_GRADIENT_MISTAKES,
        run=run,
        same=lambda got, want: close(got, want, atol=1e-5, rtol=1e-4),
        describe=lambda got, want: "",
        unexplained=unexplained,
    )


@exercise(MODULE, "reinforce_updates", "varias actualizaciones", uses=_LOOP_USES)
def check_reinforce_updates_params(reinforce_updates, case="cartpole") -> None:
    """Etapa 4: tres actualizaciones dejan los parámetros de la referencia."""
    setup, n_updates = LOOP_CASES[case], 3
    got = _run_loop(reinforce_updates, setup, n_updates, lr=0.5)
    want = _run_loop(reinforce.reinforce_updates, setup, n_updates, lr=0.5)
    mine, theirs = got.steps, want.steps
    if len(mine) != n_updates:
        LOOP_SAYS["loop_wrong_step_count"].fail(updates=n_updates, steps=len(mine))
    for k in range(1, n_updates if len(got.env.seeds) == len(want.env.seeds) else 1):
        now, then = _flat(mine[k]), _flat(theirs[k])
        if not close(now, then, atol=1e-5, rtol=1e-4) and close(
            now, then + _flat(theirs[k - 1]), atol=1e-4, rtol=1e-3
        ):
            LOOP_SAYS["loop_no_zero_grad"].fail(k=k + 1)
    compare_parameters(
        got.policy.state_dict(),
        want.policy.state_dict(),
        what=f"la red tras {n_updates} actualizaciones",
        mistake="loop_wrong_parameters",
    )


# --- Ejercicio 7 · función de puntuación y reparametrización (una celda cada una)
class _Reward:
    """Una recompensa ``f(x)`` de los casos, que se muestra como su fórmula."""

    def __init__(self, formula: str, function: Callable[[Any], Any]) -> None:
        self.formula, self.function = formula, function

    def __call__(self, x: Any) -> Any:
        return self.function(x)

    def __repr__(self) -> str:
        return f"lambda x: {self.formula}"


def _noise(n: int, seed: int) -> torch.Tensor:
    return torch.randn(n, generator=torch.Generator().manual_seed(seed))


GRADIENT_ESTIMATOR_CASES = [
    (_Reward("-(x - 2) ** 2", lambda x: -((x - 2) ** 2)), 0.0, 0.4, _noise(8, 0)),
    (_Reward("torch.sin(x)", torch.sin), 0.5, -0.3, _noise(5, 1)),
    (
        _Reward(
            "torch.tanh(2 * x) + 0.3 * x ** 3", lambda x: torch.tanh(2 * x) + 0.3 * x**3
        ),
        -1.0,
        0.4,
        _noise(12, 2),
    ),
]

_ESTIMATORS = reinforce.gradient_estimators
_ON_LOG_STD = torch.tensor([0.0, 1.0])  # solo en la componente de log σ


def _samples(mean: float, log_std: float, noise: Any) -> torch.Tensor:
    return mean + math.exp(log_std) * torch.as_tensor(noise)


def _weight_with_grad(f, mean, log_std, noise):
    """El peso f(x) sin separar: a la función de puntuación se le suma el
    gradiente por reparametrización de f(x)·log N(x), con log N(x) fijo."""
    x = _samples(mean, log_std, noise)
    fixed = torch.distributions.Normal(mean, math.exp(log_std)).log_prob(x).to(x)
    score, pathwise = _ESTIMATORS(f, mean, log_std, noise)
    weighted = _ESTIMATORS(lambda y: f(y) * fixed, mean, log_std, noise)[1]
    return score + weighted, pathwise


def _score_plus(change: Callable[..., torch.Tensor]) -> Callable[..., Any]:
    return lambda *args: (change(*args), _ESTIMATORS(*args)[1])


#: Filas score_…: solo en la celda de la puntuación; pathwise_…: solo en la otra.
ESTIMATOR_MISTAKES = with_messages(
    """
estimators_swapped: Devolviste las dos estimaciones en el orden cambiado: primero va la
    de función de puntuación (score) y después la de reparametrización (pathwise).
score_estimate_x_attached: En la función de puntuación las muestras x son fijas: evalúa
    log N(x; μ, σ²) con x.detach(). Si no, la derivada pasa también por x = μ + σ·ε, y
    eso ya no es la función de puntuación.
score_estimate_weight_grad: En la función de puntuación el peso f(x) es una constante,
    como el retorno en REINFORCE: evalúa f en las muestras separadas del grafo (o haz
    .detach()). Si no, se cuela la derivada de f.
score_estimate_no_minus_one: La derivada de log N(x; μ, σ²) respecto a log σ es z² − 1,
    con z = (x − μ)/σ: te falta el −1, que viene del término −log σ.
pathwise_estimate_detached: En la reparametrización el gradiente pasa por la muestra: x
    = μ + σ·ε con μ y log σ en el grafo; deriva la media de f(x) sin separar x.
estimators_summed: Cada estimación es una media sobre las N muestras, no una suma: con
    una suma, el gradiente crece con N.
estimators_wrt_std: La segunda componente es la derivada respecto a log σ, no a σ: pon
    log σ en el tensor que derivas y calcula σ = exp(log σ) dentro (la regla de la
    cadena multiplica por σ).
""",
    ("estimators_swapped", on_output(_ESTIMATORS, lambda o: o[::-1], "al revés")),
    # Con x = μ + σ·ε en el grafo, log N(x) = −ε²/2 − log σ − ½ log 2π.
    (
        "score_estimate_x_attached",
        _score_plus(lambda f, *a: -f(_samples(*a)).mean() * _ON_LOG_STD),
    ),
    ("score_estimate_weight_grad", _weight_with_grad),
    # Sin el −1 de −log σ: se suma la media de los pesos a la de log σ.
    (
        "score_estimate_no_minus_one",
        _score_plus(
            lambda f, *a: _ESTIMATORS(f, *a)[0] + f(_samples(*a)).mean() * _ON_LOG_STD
        ),
    ),
    (
        "pathwise_estimate_detached",
        lambda *args: (_ESTIMATORS(*args)[0], torch.zeros(2)),
    ),
    # Las dos estimaciones son lineales en f: sumar es promediar N·f.
    (
        "estimators_summed",
        with_args(_ESTIMATORS, f=lambda a: lambda x: len(a.noise) * a.f(x)),
    ),
    # d/dσ = d/dlog σ · 1/σ.
    (
        "estimators_wrt_std",
        lambda f, m, s, n: tuple(
            e / torch.tensor([1.0, math.exp(s)]).to(e) for e in _ESTIMATORS(f, m, s, n)
        ),
    ),
)


_ESTIMATES = (
    "gradient_estimators debe devolver dos cosas, (score, pathwise), la estimación "
    "por función de puntuación y la de reparametrización"
)


def _estimator_check(index: int) -> Callable[..., None]:
    """La celda de la estimación ``index``, sin los errores típicos de la otra."""
    which, other = ("score", "pathwise")[index], ("pathwise", "score")[index]

    def estimate(out: Any, *args: Any) -> torch.Tensor:
        value = as_tuple(out, 2, _ESTIMATES, mistake="estimators_not_pair")[index]
        if isinstance(value, torch.Tensor) and value.requires_grad:
            fail(
                f"La estimación {which} todavía lleva gradiente: es un número, "
                "no algo que derivar. Devuélvela sin él (torch.autograd.grad ya "
                "lo da así; si usaste .backward(), toma .grad o haz .detach()).",
                "estimate_with_grad",
            )
        return torch.as_tensor(value, dtype=torch.float64).reshape(-1)

    return values_check(
        MODULE,
        "gradient_estimators",
        _ESTIMATORS,
        [m for m in ESTIMATOR_MISTAKES if not m.id.startswith(other)],
        GRADIENT_ESTIMATOR_CASES,
        check_name=f"check_gradient_estimators_{which}",
        uses={"gaussian_log_prob": reinforce.gaussian_log_prob},
        doc=f"La estimación {which} (la {index + 1}.ª que se devuelve).",
        atol=1e-5,
        view=estimate,
    )


check_gradient_estimators_score = _estimator_check(0)
check_gradient_estimators_pathwise = _estimator_check(1)
