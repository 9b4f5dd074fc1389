"""Comprobaciones del módulo 04 · Varianza y líneas base.

Las variantes de los errores típicos son las referencias de
``helpers.baselines`` con otra entrada, con una pieza cambiada o con la salida
cambiada; solo se escribe a mano el error que vive dentro de la cuenta.
"""

from __future__ import annotations

import functools

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
    negated,
    on_output,
    patched,
    python_number,
    tensor,
    values_check,
    variant_of,
    with_messages,
)

MODULE = "04_lineas_base"


def _pair(out, promised: str, mistake: str):
    """``out``, si es un par; si no, un fallo que dice qué se esperaba."""
    if not isinstance(out, tuple | list) or len(out) != 2:
        fail(f"{promised}; devolvió {type(out).__name__}.", mistake)
    return out


def _part(fn, index: int, valid):
    """La salida ``index`` de ``fn`` (cada celda mira una), tras ``valid``."""
    return functools.wraps(fn)(lambda *args: valid(fn(*args))[index])


# Ejercicio 1 · estimaciones del gradiente por muestra

_score, _pi = baselines.score_gradients, baselines.softmax_policy

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

SCORE_MISTAKES = with_messages(
    """
score_sign: El signo está al revés: el peso es (R − b), no (b − R), y ∇log π(a) =
    one_hot(a) − π. Con el signo cambiado, lo que sale mejor que la línea base se vuelve
    menos probable.
score_baseline_added: Sumaste la línea base: el peso es R − b.
score_no_baseline: No restaste la línea base: el peso de cada muestra es R_i − b_i.
score_no_minus_pi: Falta restar π: ∇_θ log softmax(θ)[a] = one_hot(a) − π.
score_grad_pi: Eso es ∇π(a), no ∇log π(a) = one_hot(a) − π: no multipliques por π(a).
score_mean_weight: Cada muestra lleva su propio peso R_i − b_i, no la media de los
    pesos.
score_returns_mean: Parece la media de las estimaciones. Queremos una fila por muestra,
    forma (N, A), para poder medir su varianza.
score_overflow: Con logits grandes, exp(θ) desborda (exp(710) ya es inf) y inf/inf da
    NaN. Restar a θ una misma constante no cambia la softmax: réstale su máximo antes de
    exp.
""",
    Mistake("score_sign", negated(_score), ...),
    Mistake("score_baseline_added", lambda t, a, r, b: _score(t, a, r, -b), ...),
    Mistake("score_no_baseline", lambda t, a, r, b: _score(t, a, r), ...),
    Mistake("score_no_minus_pi", patched(_score, softmax_policy=np.zeros_like), ...),
    Mistake("score_grad_pi", lambda t, a, r, b: _score(t, a, (r - b) * _pi(t)[a]), ...),
    Mistake(
        "score_mean_weight",
        lambda t, a, r, b: _score(t, a, 0 * r + np.mean(r - b)),
        ...,
    ),
    Mistake("score_returns_mean", on_output(_score, lambda g: g.mean(0), "media"), ...),
    Mistake(
        "score_overflow",
        patched(_score, softmax_policy=lambda t: np.exp(t) / np.exp(t).sum()),
        ...,
    ),
)

_SCORE = (MODULE, "score_gradients", _score, SCORE_MISTAKES)
check_score_gradients = values_check(*_SCORE, SCORE_CASES)
check_score_gradients_stable = values_check(
    *_SCORE,
    SCORE_STABLE_CASES,
    check_name="check_score_gradients_stable",
    aspect="logits grandes",
)

# Ejercicio 2 · la causalidad, medida: retorno entero frente a recompensa futura


def _episodes(*pairs):
    """``(rewards, scores)`` de episodios escritos a mano: listas de arrays."""
    return tuple(
        [np.array(x, float) for x in part] for part in zip(*pairs, strict=True)
    )


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

_variances = baselines.estimator_variances


def _numbers(out):
    """Las dos varianzas del estudiante, o un fallo que dice qué se esperaba."""
    promised = (
        "estimator_variances debe devolver dos números, (varianza con el retorno "
        "entero, varianza con la recompensa futura)"
    )
    pair = _pair(out, promised, mistake="variances_not_a_pair")
    for name, value in zip(("La primera", "La segunda"), pair, strict=True):
        # La forma antes que el tipo: a un array de P varianzas no le sirve
        # float(...), le falta sumarlas.
        array = as_array(value, "El resultado")
        if array.size != 1:
            fail(
                f"{name} varianza tiene forma {array.shape}: cada varianza es un solo "
                "número, la suma de las varianzas de las P componentes de las N "
                "estimaciones (una por episodio).",
                "variance_not_a_number",
            )
        python_number(value, f"{name} varianza")
    return pair


def _changed(index, rewards=lambda r: r, scores=lambda s: s):
    """La referencia con la varianza ``index`` de otros episodios (cada
    ``rewards(r)`` y ``scores(s)``), y la otra intacta."""

    def estimator_variances(all_rewards, all_scores):
        out = list(_variances(all_rewards, all_scores))
        out[index] = _variances(map(rewards, all_rewards), map(scores, all_scores))[
            index
        ]
        return tuple(out)

    return estimator_variances


def _spread(variance):
    """Las estimaciones de la referencia, con otra medida de su dispersión."""
    return lambda r, s: tuple(variance(g) for g in baselines.causal_estimates(r, s))


CAUSAL_MISTAKES = with_messages(
    """
to_go_past: En el segundo estimador sumaste las recompensas hasta t (el pasado,
    np.cumsum hacia delante). La recompensa futura es Σ_{k≥t} r_k: suma desde el final
    del episodio hacia atrás.
to_go_without_own_reward: Dejaste fuera la recompensa del propio paso: la acción a_t sí
    causa r_t, así que la recompensa futura de t es Σ_{k≥t} r_k, con r_t incluida.
to_go_reversed: Las sumas de la recompensa futura están en el orden al revés: tras sumar
    desde el final, vuelve a darles la vuelta para que la de t vaya con el paso t.
full_uses_to_go: El primer estimador es el de REINFORCE sin más: cada ∇log π del
    episodio pesado con el retorno entero Σ_k r_k, el mismo para todos los pasos.
full_first_step_only: En el primer estimador solo pesaste el primer paso: el retorno
    entero multiplica a la suma de los ∇log π de todos los pasos del episodio.
full_mean_reward: En el primer estimador usaste la recompensa media del episodio; el
    peso es el retorno entero, la suma Σ_k r_k.
variance_ddof1: Dividiste por N − 1; el enunciado pide la varianza total dividiendo por
    N, (1/N) Σ_i ‖g_i − ḡ‖².
variance_not_centered: No restaste la media ḡ de las estimaciones: eso es E[‖g‖²]. La
    varianza mide la dispersión alrededor de la media: (1/N) Σ_i ‖g_i − ḡ‖².
variance_flattened: np.var sin axis aplana las estimaciones y usa una sola media para
    todas las componentes. Es la varianza de cada componente (sobre los episodios),
    sumada.
variance_mean_of_components: Promediaste las varianzas de las componentes; se suman (la
    traza de la covarianza).
""",
    # Σ_t (Σ_{k≤t} r_k)·s_t es la recompensa futura de los episodios al revés.
    Mistake("to_go_past", _changed(1, lambda r: r[::-1], lambda s: s[::-1]), ...),
    # Con r_{t+1} en el paso t, la recompensa futura de t deja fuera r_t.
    Mistake(
        "to_go_without_own_reward", _changed(1, lambda r: np.append(r[1:], 0.0)), ...
    ),
    Mistake("to_go_reversed", _changed(1, scores=lambda s: s[::-1]), ...),
    Mistake("full_uses_to_go", lambda r, s: (_variances(r, s)[1],) * 2, ...),
    Mistake(
        "full_first_step_only",
        _changed(0, scores=lambda s: s * (np.arange(len(s)) == 0)[:, None]),
        ...,
    ),
    Mistake("full_mean_reward", _changed(0, lambda r: r / len(r)), ...),
    Mistake("variance_ddof1", _spread(lambda g: np.var(g, 0, ddof=1).sum()), ...),
    Mistake("variance_not_centered", _spread(lambda g: (g**2).sum(1).mean()), ...),
    Mistake("variance_flattened", _spread(np.var), ...),
    Mistake("variance_mean_of_components", _spread(lambda g: np.var(g, 0).mean()), ...),
)


def _check_causal(estimator_variances, cases, index: int) -> None:
    cases = list(cases)
    _numbers(call(estimator_variances, "estimator_variances", *cases[0]))
    part = functools.partial(_part, index=index, valid=_numbers)
    want = [part(_variances)(*case) for case in cases]
    # Solo las filas que cambian esta varianza: una que da lo de la referencia
    # se parecería a cualquier respuesta casi correcta (redondeada, por ejemplo).
    rows = [Mistake(m.id, part(m.variant), m.message) for m in CAUSAL_MISTAKES]
    rows = [m for m in rows if not np.allclose([m.variant(*c) for c in cases], want)]
    shown = f"estimator_variances(...)[{index}]"
    check_cases(part(estimator_variances), shown, cases, part(_variances), rows)


@exercise(MODULE, "estimator_variances", "el estimador con el retorno entero")
def check_estimator_variances(estimator_variances, cases=CAUSAL_CASES) -> None:
    """Comprueba la primera varianza de ``estimator_variances(rewards, scores)``."""
    _check_causal(estimator_variances, cases, 0)


@exercise(MODULE, "estimator_variances", "el estimador con la recompensa futura")
def check_estimator_variances_to_go(estimator_variances, cases=CAUSAL_CASES) -> None:
    """Comprueba la segunda varianza de ``estimator_variances(rewards, scores)``."""
    _check_causal(estimator_variances, cases, 1)


# Ejercicio 3 · normalizar los retornos, sin NaN

NORMALIZE_CASES = [
    (np.array(r, float),)
    for r in ([500, 520, 480, 540], [8, 2], [-3, 0, 12, 1.5, 0.5], [0, 0, 1])
]
#: Lotes en que todos los retornos son iguales (σ = 0), junto a uno normal:
#: devolver ceros siempre no basta. El 0,1 no es exacto en binario: la
#: desviación de tres retornos de 0,1 sale minúscula, pero no 0, y ``std == 0``
#: no la ve.
NORMALIZE_CONSTANT_CASES = [
    (np.array(r, float),) for r in ([1] * 4, [8, 2], [5, 5], [-3] * 3, [0.1] * 3)
]

_normalize = baselines.normalize_returns


def _ddof1(returns, eps=1e-8):
    """La otra convención que vale: la desviación con N − 1 (σ₁ = σ₀·√(N/(N−1)))."""
    return _normalize(returns, eps) * np.sqrt((len(returns) - 1) / len(returns))


_NAN = (
    "Con todos los retornos iguales la desviación es 0 y 0/0 da NaN{}. Si la "
    "desviación es (casi) cero, devuelve ceros (o suma un ε pequeño, 1e-8, "
    "a la desviación)."
)

NORMALIZE_MISTAKES = with_messages(
    """
zero_std_exact: Comparaste la desviación con == 0: en coma flotante, unos retornos
    iguales pueden dar una desviación minúscula pero no nula (con tres retornos de 0,1
    pasa), y al dividir sale ±1 en lugar de 0. Usa un umbral: si σ < 1e-8, devuelve
    ceros.
normalize_only_centered: Solo centraste: falta dividir por la desviación típica.
normalize_only_scaled: Solo dividiste: falta restar la media (lo que borra el pedestal).
normalize_by_variance: Dividiste por la varianza; se divide por la desviación típica (su
    raíz).
""",
    Mistake(
        "zero_std_nan",
        variant_of(_normalize, eps=0.0),
        _NAN.format(", que contagia la pérdida, los pesos de la red y todo lo demás"),
    ),
    Mistake("zero_std_nan_unbiased", variant_of(_ddof1, eps=0.0), _NAN.format("")),
    Mistake("zero_std_exact", variant_of(_normalize, eps=np.finfo(float).tiny), ...),
    Mistake("normalize_only_centered", lambda r: r - np.mean(r), ...),
    Mistake("normalize_only_scaled", lambda r: r / (np.std(r) + 1e-8), ...),
    Mistake(
        "normalize_by_variance", lambda r: (r - np.mean(r)) / (np.var(r) + 1e-8), ...
    ),
)

_NORMALIZE = (MODULE, "normalize_returns", (_normalize, _ddof1), NORMALIZE_MISTAKES)
check_normalize_returns = values_check(*_NORMALIZE, NORMALIZE_CASES, atol=1e-5)
check_normalize_returns_constant = values_check(
    *_NORMALIZE,
    NORMALIZE_CONSTANT_CASES,
    check_name="check_normalize_returns_constant",
    aspect="todos iguales, sin NaN",
    atol=1e-5,
)

# Ejercicio 4 · la recompensa esperada de cada pregunta, sin mirarse a sí misma

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

_loo = baselines.leave_one_out_baseline

LOO_MISTAKES = with_messages(
    """
loo_includes_own: Incluiste la propia recompensa R_i en la media de su pregunta:
    entonces b_i depende de la acción a_i y el gradiente ya no es insesgado (se encoge
    por (n − 1)/n). Usa solo las otras muestras de la pregunta.
loo_batch_mean: Usaste la media de todo el lote: mezcla preguntas fáciles y difíciles.
    La línea base de cada muestra es la media de las otras muestras de su misma
    pregunta.
loo_batch_leave_one_out: Dejaste fuera la propia muestra, bien, pero promediaste el lote
    entero: solo cuentan las muestras de la misma pregunta.
loo_single_nan: Una pregunta con una sola muestra no tiene «otras»: 0/0 = NaN. En ese
    caso la línea base es 0.
""",
    Mistake(
        "loo_includes_own",
        lambda ids, r: np.array([r[ids == q].mean() for q in ids]),
        ...,
    ),
    Mistake("loo_batch_mean", lambda ids, r: np.full(len(r), np.mean(r)), ...),
    Mistake("loo_batch_leave_one_out", lambda ids, r: _loo(np.zeros_like(ids), r), ...),
    Mistake(
        "loo_single_nan",
        lambda ids, r: np.where(np.bincount(ids)[ids] > 1, _loo(ids, r), np.nan),
        ...,
    ),
)

_LOO = (MODULE, "leave_one_out_baseline", _loo, LOO_MISTAKES)
check_leave_one_out_baseline = values_check(*_LOO, LOO_CASES)
check_leave_one_out_baseline_single = values_check(
    *_LOO,
    LOO_SINGLE_CASES,
    check_name="check_leave_one_out_baseline_single",
    aspect="preguntas con una sola muestra",
)

# Ejercicio 5 · las pérdidas de REINFORCE con una V(s) aprendida

LOSSES_CASES = [
    (tensor(log_probs), tensor(values), tensor(returns), n_episodes)
    for log_probs, values, returns, n_episodes in (
        ([-0.5, -1.0, -0.2], [2.0, 1.5, 0.5], [3.0, 2.0, 1.0], 1),
        ([-0.7, -0.1, -2.0, -0.3], [0.5, 0, 1, -1], [1, -1, 0.5, 2], 2),
        ([-1.2, -0.4, -0.9, -0.05, -3.0], [4.5, 3, 3.5, 1, 0], [5, 4, 3, 2, 1], 4),
    )
]

_losses = baselines.baseline_losses


def _loss(fn, index: int):
    """Solo una de las dos pérdidas de ``fn``."""
    promised = "baseline_losses debe devolver dos cosas, (policy_loss, value_loss)"
    return _part(
        fn, index, lambda out: _pair(out, promised, mistake="losses_not_a_pair")
    )


def _summed(fn):
    """La pérdida sumada: la celda del valor no mira la forma (la mira la otra)."""
    return functools.wraps(fn)(lambda *args: torch.as_tensor(fn(*args)).sum())


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

POLICY_MISTAKES = with_messages(
    """
policy_sign: La ventaja es A = G − V(s): restaste al revés (o falta el signo menos de la
    pérdida). Con el signo cambiado, lo que sale mejor de lo esperado se vuelve menos
    probable.
policy_no_baseline: No restaste la línea base: la pérdida de la política usa A = G −
    V(s), no G.
policy_value_added: Sumaste V(s): la ventaja es G − V(s).
policy_mean_over_steps: Promediaste sobre los pasos; la pérdida de la política divide
    por N, el número de episodios (como en el módulo 03).
policy_not_divided: ¿Olvidaste dividir por n_episodes?
""",
    Mistake("policy_sign", lambda lp, v, g, n: -_losses(lp, v, g, n)[0], ...),
    Mistake("policy_no_baseline", lambda lp, v, g, n: _losses(lp, 0 * v, g, n)[0], ...),
    Mistake("policy_value_added", lambda lp, v, g, n: _losses(lp, -v, g, n)[0], ...),
    Mistake(
        "policy_mean_over_steps", lambda lp, v, g, n: _losses(lp, v, g, len(lp))[0], ...
    ),
    Mistake("policy_not_divided", lambda lp, v, g, n: _losses(lp, v, g, 1)[0], ...),
)

VALUE_MISTAKES = with_messages(
    """
value_sum: La pérdida del valor es la media de (V(s_t) − G_t)² sobre los pasos, no la
    suma.
value_divided_by_episodes: La pérdida del valor es la media sobre los M pasos, no sobre
    los N episodios: (1/M) Σ (V(s_t) − G_t)².
value_absolute: Eso es el error absoluto medio; se pide el cuadrático, (V − G)².
value_square_of_mean: Elevaste al cuadrado la media de los errores; es la media de los
    cuadrados: errores de signo opuesto no se cancelan.
""",
    Mistake("value_sum", lambda lp, v, g, n: len(v) * _losses(lp, v, g, n)[1], ...),
    Mistake(
        "value_divided_by_episodes",
        lambda lp, v, g, n: len(v) / n * _losses(lp, v, g, n)[1],
        ...,
    ),
    Mistake("value_absolute", lambda lp, v, g, n: (v - g).abs().mean(), ...),
    Mistake("value_square_of_mean", lambda lp, v, g, n: (v - g).mean() ** 2, ...),
    Mistake(
        "value_loss_reaches_log_probs",
        lambda lp, v, g, n: sum(_losses(lp, v, g, n)),
        VALUE_REACHES_LOG_PROBS,
    ),
)


@exercise(MODULE, "baseline_losses")
def check_baseline_losses(baseline_losses, cases=LOSSES_CASES) -> None:
    """Comprueba los valores de ``baseline_losses(log_probs, values, returns,
    n_episodes)``."""
    for index, rows in enumerate((POLICY_MISTAKES, VALUE_MISTAKES)):
        student, reference = (
            _summed(_loss(f, index)) for f in (baseline_losses, _losses)
        )
        rows = [Mistake(m.id, _summed(m.variant), m.message) for m in rows]
        check_cases(student, f"baseline_losses(...)[{index}]", cases, reference, rows)


_NOT_SCALAR = Diagnosis(
    id="loss_not_scalar",
    message="Cada pérdida debe ser un escalar (un solo número): ¿falta sumar sobre los "
    "pasos?",
)
_POLICY_FLOWS = dict(
    prefix="policy_loss",
    without_gradient=Diagnosis(
        id="loss_not_connected",
        message="policy_loss debe ser un tensor de PyTorch conectado al grafo "
        "(para poder llamar a backward()); no uses .item(), float() ni NumPy.",
    ),
    wrt={
        "log_probs": Flow(
            True,
            id="log_probs_detached",
            message="policy_loss no llega a log_probs: la pérdida de la política "
            "es la que mueve la política. No separes log_probs del grafo.",
        ),
        "values": Flow(
            False,
            id="advantage_not_detached",
            message="La ventaja no está separada del grafo: policy_loss.backward() "
            "llega hasta V(s). Entonces la política «entrena» al crítico para "
            "hacer grande su pérdida en vez de ajustarlo a G. Usa la ventaja como "
            "un peso fijo, sin gradiente.",
        ),
    },
)
_VALUE_FLOWS = dict(
    prefix="value_loss",
    without_gradient=Diagnosis(id="values_detached", message=VALUES_DETACHED),
    wrt={
        "values": Flow(True, id="values_detached", message=VALUES_DETACHED),
        "log_probs": Flow(
            False, id="value_loss_reaches_log_probs", message=VALUE_REACHES_LOG_PROBS
        ),
    },
)


@exercise(MODULE, "baseline_losses", "por dónde pasa el gradiente")
def check_baseline_losses_grad(baseline_losses, cases=LOSSES_CASES) -> None:
    """Comprueba los gradientes de las dos pérdidas: la de la política llega
    solo a ``log_probs`` y la del valor solo a ``values``."""
    parts = (POLICY_MISTAKES, _POLICY_FLOWS), (VALUE_MISTAKES, _VALUE_FLOWS)
    for index, (rows, options) in enumerate(parts):
        student, reference = _loss(baseline_losses, index), _loss(_losses, index)
        shown = f"baseline_losses(...)[{index}]"
        check_gradients(
            student, shown, cases, reference, rows, wrong_shape=_NOT_SCALAR, **options
        )
