"""Comprobaciones del módulo 04 · Varianza y líneas base. Cada error típico es la
referencia con otra entrada, pieza o salida, salvo el que vive dentro de la cuenta."""

from __future__ import annotations

import functools
from collections import namedtuple
from types import SimpleNamespace

import numpy as np
import torch

from helpers import baselines, reinforce, training
from helpers.checks import (
    Flow,
    Mistake,
    Recorder,
    _differs,
    as_array,
    as_tuple,
    call,
    check_cases,
    check_gradients,
    check_procedure,
    close,
    compare_parameters,
    diagnoses,
    exercise,
    negated,
    on_output,
    patched,
    python_number,
    same_parameters,
    tensor,
    values_check,
    variant_of,
    with_args,
    with_messages,
)

MODULE = "04_lineas_base"


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
    (np.r_[750.0, 0.0], np.r_[1, 0], np.r_[4.0, 2.0], 1.5),
    (np.r_[800.0, 799, -5], np.arange(3), np.r_[1.0, 3, -2], np.r_[0.5, 0.5, 1]),
]

SCORE_MISTAKES = with_messages(
    """
score_sign: El signo está al revés: el peso es R − b (no b − R) y ∇log π(a) = one_hot(a)
    − π. Así, lo que sale mejor que la línea base se vuelve menos probable.
score_baseline_added: Sumaste la línea base: el peso es R − b.
score_no_baseline: No restaste la línea base: el peso de cada muestra es R_i − b_i.
score_no_minus_pi: Falta restar π: ∇_θ log softmax(θ)[a] = one_hot(a) − π.
score_grad_pi: Eso es ∇π(a), no ∇log π(a) = one_hot(a) − π: no multipliques por π(a).
score_mean_weight: Cada muestra lleva su propio peso, R_i − b_i, no la media de todos.
score_returns_mean: Parece la media de las estimaciones. Queremos una fila por muestra,
    forma (N, A), para poder medir su varianza.
score_overflow: Con logits grandes, exp(θ) desborda (exp(710) = inf) e inf/inf da NaN.
    Restar a θ una constante no cambia la softmax: réstale su máximo antes de exp.
""",
    ("score_sign", negated(_score)),
    ("score_baseline_added", lambda t, a, r, b: _score(t, a, r, -b)),
    ("score_no_baseline", lambda t, a, r, b: _score(t, a, r)),
    ("score_no_minus_pi", patched(_score, softmax_policy=np.zeros_like)),
    ("score_grad_pi", lambda t, a, r, b: _score(t, a, (r - b) * _pi(t)[a])),
    ("score_mean_weight", lambda t, a, r, b: _score(t, a, np.mean(r - b))),
    ("score_returns_mean", on_output(_score, lambda g: g.mean(0), "media")),
    (
        "score_overflow",
        patched(_score, softmax_policy=lambda t: np.exp(t) / np.exp(t).sum()),
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
    return tuple([np.array(x, float) for x in p] for p in zip(*pairs, strict=True))


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

CAUSAL_SAYS = diagnoses(
    """
variances_not_a_pair: estimator_variances debe devolver dos números, (varianza con el
    retorno entero, varianza con la recompensa futura)
variance_not_a_number: {name} varianza tiene forma {shape}: debe ser un solo número, la
    suma de las varianzas de las P componentes (sobre los N episodios).
"""
)


def _changed(index, rewards=lambda r: r, scores=lambda s: s):
    """La referencia con la varianza ``index`` de otros episodios (``rewards(r)``…)."""

    def estimator_variances(rs, ss):
        out = list(_variances(rs, ss))
        out[index] = _variances(map(rewards, rs), map(scores, ss))[index]
        return tuple(out)

    return estimator_variances


def _spread(variance):
    """Las estimaciones de la referencia, con otra medida de su dispersión."""
    return lambda r, s: tuple(variance(g) for g in baselines.causal_estimates(r, s))


CAUSAL_MISTAKES = with_messages(
    """
to_go_past: En el segundo estimador sumaste las recompensas hasta t (el pasado,
    np.cumsum hacia delante). La recompensa futura, Σ_{k≥t} r_k, se suma desde el final.
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
variance_ddof1: Dividiste por N − 1; el enunciado pide dividir por N.
variance_not_centered: No restaste la media ḡ de las estimaciones: eso es E[‖g‖²]. La
    varianza mide la dispersión alrededor de la media: (1/N) Σ_i ‖g_i − ḡ‖².
variance_flattened: np.var sin axis aplana las estimaciones y usa una sola media para
    todas las componentes; suma la varianza de cada una (sobre los episodios).
variance_mean_of_components: Promediaste las varianzas de las componentes; se suman (la
    traza de la covarianza).
""",
    # Σ_t (Σ_{k≤t} r_k)·s_t es la recompensa futura de los episodios al revés.
    ("to_go_past", _changed(1, lambda r: r[::-1], lambda s: s[::-1])),
    # Con r_{t+1} en el paso t, la recompensa futura de t deja fuera r_t.
    ("to_go_without_own_reward", _changed(1, lambda r: np.r_[r[1:], 0])),
    ("to_go_reversed", _changed(1, scores=lambda s: s[::-1])),
    ("full_uses_to_go", lambda r, s: (_variances(r, s)[1],) * 2),
    # np.eye(T, 1) · s: solo la fila del primer paso.
    ("full_first_step_only", _changed(0, scores=lambda s: np.eye(len(s), 1) * s)),
    ("full_mean_reward", _changed(0, lambda r: r / len(r))),
    ("variance_ddof1", _spread(lambda g: np.var(g, 0, ddof=1).sum())),
    ("variance_not_centered", _spread(lambda g: (g**2).sum(1).mean())),
    ("variance_flattened", _spread(np.var)),
    ("variance_mean_of_components", _spread(lambda g: np.var(g, 0).mean())),
)


def _check_causal(estimator_variances, cases, index: int) -> None:
    cases = list(cases)
    call(estimator_variances, "estimator_variances", *cases[0])

    # Solo las filas que cambian esta varianza: una que da lo de la referencia
    # se parecería a cualquier respuesta casi correcta (redondeada, por ejemplo).
    def at(f):
        return [f(*case)[index] for case in cases]

    want = at(_variances)
    rows = [m for m in CAUSAL_MISTAKES if not np.allclose(at(m.variant), want)]
    shown = f"estimator_variances(...)[{index}]"

    def view(out, *args):  # la varianza index, o un fallo que dice qué se esperaba
        promised = CAUSAL_SAYS["variances_not_a_pair"].message
        pair = as_tuple(out, 2, promised, mistake="variances_not_a_pair")
        for name, value in zip(("La primera", "La segunda"), pair, strict=True):
            # La forma antes que el tipo: a P varianzas no les vale float().
            if (array := as_array(value, "El resultado")).size != 1:
                CAUSAL_SAYS["variance_not_a_number"].fail(name=name, shape=array.shape)
            python_number(value, f"{name} varianza")
        return pair[index]

    check_cases(estimator_variances, shown, cases, _variances, rows, view=view)


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
#: Lotes con todos los retornos iguales (σ = 0), junto a uno normal: devolver ceros
#: siempre no basta. Tres retornos de 0,1 (no exacto en binario) dan una σ minúscula
#: pero no 0, que ``std == 0`` no ve.
NORMALIZE_CONSTANT_CASES = [
    (np.array(r, float),) for r in ([1] * 4, [8, 2], [5, 5], [-3] * 3, [0.1] * 3)
]

_normalize = baselines.normalize_returns


def _ddof1(returns, eps=1e-8):
    """La otra convención que vale: la desviación con N − 1 (σ₁ = σ₀·√(N/(N−1)))."""
    return _normalize(returns, eps) * np.sqrt((len(returns) - 1) / len(returns))


NORMALIZE_MISTAKES = with_messages(
    """
zero_std_nan, zero_std_nan_unbiased: Con todos los retornos iguales la desviación es 0 y
    0/0 da NaN, que contagia la pérdida y los pesos de la red. Si la desviación es
    (casi) cero, devuelve ceros (o suma un ε pequeño, 1e-8, a la desviación).
zero_std_exact: Comparaste la desviación con == 0: en coma flotante, unos retornos
    iguales pueden dar una desviación minúscula pero no nula (pasa con tres retornos de
    0,1), y al dividir sale ±1 en vez de 0. Usa un umbral: si σ < 1e-8, devuelve ceros.
normalize_only_centered: Solo centraste: falta dividir por la desviación típica.
normalize_only_scaled: Solo dividiste: falta restar la media (lo que borra el pedestal).
normalize_by_variance: Divide por la desviación típica, no por la varianza (σ, no σ²).
""",
    ("zero_std_nan", variant_of(_normalize, eps=0.0)),
    ("zero_std_nan_unbiased", variant_of(_ddof1, eps=0.0)),
    ("zero_std_exact", variant_of(_normalize, eps=np.finfo(float).tiny)),
    ("normalize_only_centered", lambda r: r - r.mean()),
    ("normalize_only_scaled", lambda r: r / (r.std() + 1e-8)),
    ("normalize_by_variance", lambda r: (r - r.mean()) / (r.var() + 1e-8)),
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
loo_includes_own: Incluiste la propia R_i en la media de su pregunta: b_i depende de a_i
    y el gradiente se sesga (se encoge por (n − 1)/n). Usa solo las otras muestras.
loo_batch_mean: Usaste la media de todo el lote: mezcla preguntas fáciles y difíciles.
    La línea base de cada muestra es la media de las otras muestras de su pregunta.
loo_batch_leave_one_out: Dejaste fuera la propia muestra, bien, pero promediaste el lote
    entero: solo cuentan las muestras de la misma pregunta.
loo_single_nan: Una pregunta con una sola muestra no tiene «otras»: 0/0 = NaN. En ese
    caso la línea base es 0.
""",
    ("loo_includes_own", lambda q, r: np.array([r[q == k].mean() for k in q])),
    ("loo_batch_mean", lambda q, r: np.full(len(r), np.mean(r))),
    ("loo_batch_leave_one_out", lambda q, r: _loo(np.zeros_like(q), r)),
    (
        "loo_single_nan",
        lambda q, r: np.where(np.bincount(q)[q] > 1, _loo(q, r), np.nan),
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
_by_step = with_args(_losses, n_episodes=lambda a: len(a.log_probs))  # / M, no / N


def _loss(fn, index: int):
    """Solo una de las dos pérdidas de ``fn``."""
    promised = LOSSES_SAYS["losses_not_a_pair"].message
    return functools.wraps(fn)(
        lambda *a: as_tuple(fn(*a), 2, promised, mistake="losses_not_a_pair")[index]
    )


#: Los diagnósticos de las dos pérdidas; el último es también el de una fila (la suma).
LOSSES_SAYS = diagnoses(
    """
losses_not_a_pair: baseline_losses debe devolver dos cosas, (policy_loss, value_loss)
loss_not_scalar: Cada pérdida debe ser un escalar (un solo número): ¿falta sumar sobre
    los pasos?
loss_not_connected: policy_loss debe ser un tensor de PyTorch conectado al grafo (para
    poder llamar a backward()); no uses .item(), float() ni NumPy.
log_probs_detached: policy_loss no llega a log_probs: la pérdida de la política es la
    que mueve la política. No separes log_probs del grafo.
advantage_not_detached: La ventaja no está separada del grafo: policy_loss.backward()
    llega hasta V(s). Entonces la política «entrena» al crítico para hacer grande su
    pérdida en vez de ajustarlo a G. Usa la ventaja como un peso fijo, sin gradiente.
values_detached: value_loss no llega a V(s): ¿separaste values con detach()? La red de
    valor solo aprende por esta pérdida.
value_loss_reaches_log_probs: value_loss llega a log_probs: ¿devolviste como segunda
    pérdida la suma de las dos? La pérdida del valor es solo (1/M) Σ (V(s_t) − G_t)², y
    solo debe mover la red de valor.
"""
)


POLICY_MISTAKES = with_messages(
    """
policy_sign: La ventaja es A = G − V(s): restaste al revés (o falta el signo menos de la
    pérdida). Así, lo que sale mejor de lo esperado se vuelve menos probable.
policy_no_baseline: No restaste la línea base: el peso es A = G − V(s), no G.
policy_value_added: Sumaste V(s): la ventaja es G − V(s).
policy_mean_over_steps: Promediaste sobre los pasos; la pérdida de la política divide
    por N, el número de episodios (como en el módulo 03).
policy_not_divided: ¿Olvidaste dividir por n_episodes?
""",
    ("policy_sign", lambda lp, v, g, n: -_losses(lp, v, g, n)[0]),
    ("policy_no_baseline", lambda lp, v, g, n: _losses(lp, 0 * v, g, n)[0]),
    ("policy_value_added", lambda lp, v, g, n: _losses(lp, -v, g, n)[0]),
    ("policy_mean_over_steps", lambda *args: _by_step(*args)[0]),
    ("policy_not_divided", lambda lp, v, g, n: _losses(lp, v, g, 1)[0]),
)

VALUE_MISTAKES = with_messages(
    """
value_sum: La pérdida del valor es la media de (V − G)² sobre los pasos, no la suma.
value_divided_by_episodes: La pérdida del valor es la media sobre los M pasos, no sobre
    los N episodios: (1/M) Σ (V(s_t) − G_t)².
value_absolute: Eso es el error absoluto medio; se pide el cuadrático, (V − G)².
value_square_of_mean: Elevaste al cuadrado la media de los errores; es la media de los
    cuadrados: errores de signo opuesto no se cancelan.
""",
    ("value_sum", lambda lp, v, g, n: len(v) * _losses(lp, v, g, n)[1]),
    (
        "value_divided_by_episodes",
        lambda lp, v, g, n: len(v) / n * _losses(lp, v, g, n)[1],
    ),
    ("value_absolute", lambda lp, v, g, n: (v - g).abs().mean()),
    ("value_square_of_mean", lambda lp, v, g, n: (v - g).mean() ** 2),
    Mistake(
        "value_loss_reaches_log_probs",
        lambda lp, v, g, n: sum(_losses(lp, v, g, n)),
        LOSSES_SAYS["value_loss_reaches_log_probs"].message,
    ),
)


@exercise(MODULE, "baseline_losses")
def check_baseline_losses(baseline_losses, cases=LOSSES_CASES) -> None:
    """Comprueba los valores de las dos pérdidas de ``baseline_losses``."""

    # La pérdida sumada: esta celda no mira la forma (la mira la de los gradientes).
    def summed(out, *args):
        return torch.as_tensor(out).sum()

    for index, rows in enumerate((POLICY_MISTAKES, VALUE_MISTAKES)):
        student, reference = _loss(baseline_losses, index), _loss(_losses, index)
        shown = f"baseline_losses(...)[{index}]"
        check_cases(student, shown, cases, reference, rows, view=summed)


_POLICY_FLOWS = dict(
    prefix="policy_loss",
    without_gradient=LOSSES_SAYS["loss_not_connected"],
    wrt={
        "log_probs": Flow(True, LOSSES_SAYS["log_probs_detached"]),
        "values": Flow(False, LOSSES_SAYS["advantage_not_detached"]),
    },
)
_VALUE_FLOWS = dict(
    prefix="value_loss",
    without_gradient=LOSSES_SAYS["values_detached"],
    wrt={
        "values": Flow(True, LOSSES_SAYS["values_detached"]),
        "log_probs": Flow(False, LOSSES_SAYS["value_loss_reaches_log_probs"]),
    },
)


@exercise(MODULE, "baseline_losses", "por dónde pasa el gradiente")
def check_baseline_losses_grad(baseline_losses, cases=LOSSES_CASES) -> None:
    """Comprueba que la pérdida de la política solo llega a ``log_probs``, y la del
    valor, solo a ``values``."""
    parts = (POLICY_MISTAKES, _POLICY_FLOWS), (VALUE_MISTAKES, _VALUE_FLOWS)
    for index, (rows, options) in enumerate(parts):
        student, reference = _loss(baseline_losses, index), _loss(_losses, index)
        shown = f"baseline_losses(...)[{index}]"
        options = {**options, "wrong_shape": LOSSES_SAYS["loss_not_scalar"]}
        check_gradients(student, shown, cases, reference, rows, **options)


# Ejercicio 6 · una actualización de REINFORCE con V(s): ventajas, política, V

_update = baselines.baseline_update

#: (semilla, pasos de cada episodio, value_epochs, optimizador de V).
UPDATE_CASES = [(0, (5, 3, 4), 3, "sgd")]
_UPDATE_USES = {"baseline_losses": _losses}


def _update_state(seed: int, lengths, value_epochs: int, value_kind: str) -> tuple:
    """Los argumentos, fijos por semilla; las redes traen gradientes de antes."""
    steps, adam = sum(lengths), value_kind == "adam"
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        policy = reinforce.CategoricalPolicy(4, 2, hidden=8)
        value_net = baselines.value_network(4, hidden=8)
        for net in (policy, value_net):
            net(torch.randn(3, 4)).pow(2).sum().backward()
        obs, actions = torch.randn(steps, 4), torch.randint(2, (steps,))
        returns = 1 + 4 * torch.rand(steps)
    episodes = training.Episodes(obs, actions, torch.ones(steps), list(lengths))
    optimizer, lr = (torch.optim.Adam, 0.02) if adam else (torch.optim.SGD, 0.05)
    value_opt = optimizer(value_net.parameters(), lr=lr)
    policy_opt = torch.optim.SGD(policy.parameters(), lr=0.1)
    return policy, value_net, policy_opt, value_opt, episodes, returns, value_epochs


UPDATE_SAYS = diagnoses(
    """
modified_input: baseline_update modificó el lote (episodes.obs, episodes.actions o
    returns): ¿un -= o /= sobre returns? Calcula las ventajas en un tensor nuevo.
update_advantages_attached: Las ventajas que devuelves llevan gradiente: devuélvelas
    separadas del grafo (.detach()), son un peso fijo.
update_advantages_shape: baseline_update debe devolver las ventajas de los {steps} pasos
    del lote, forma ({steps},); devolvió {got}.
update_wrong_advantages: La política queda bien, pero las ventajas que devuelves no son
    las que usó: G_t − V(s_t) con la V de antes de ajustarla (¿las recalculaste después
    de los pasos de V?).
update_step_count: Con value_epochs = {epochs}, la política dio {got.steps[0]} pasos y V
    dio {got.steps[1]}, con {got.backwards} backward() que le llegaron: deben ser 1 paso
    de la política y {epochs} de V, cada uno tras un backward() de la pérdida del valor
    (ninguno de la de la política).
"""
)

#: Lo que deja una llamada: ``steps``, de la política y de V; ``backwards``, a V.
_Updated = namedtuple("_Updated", "policy value advantages steps backwards case")


def _run_update(function, case) -> _Updated:
    """Una llamada desde el estado de ``case``, con lo que hizo cada red."""
    state = _update_state(*case)
    policy, value_net, policy_opt, value_opt, episodes, returns, _ = state
    batch = (episodes.obs, episodes.actions, returns)
    kept = [x.clone() for x in batch]
    with Recorder(policy, policy_opt) as mine, Recorder(value_net, value_opt) as vs:
        returned = function(*state)
    if any(map(_differs, kept, batch)):
        UPDATE_SAYS["modified_input"].fail()
    steps = (mine.count("step"), vs.count("step"))
    nets = (policy.state_dict(), value_net.state_dict())
    return _Updated(*nets, returned, steps, vs.count("backward"), case)


def _muted(net: str, method: str, first: int = 0):
    """La referencia con ``<net>_optimizer.<method>`` solo las ``first`` veces."""

    def stand_in(call):
        real, left = getattr(call, f"{net}_optimizer"), iter(range(first))
        kept = {"zero_grad": real.zero_grad, "step": real.step}

        def limited():
            return next(left, None) is not None and kept[method]()

        return SimpleNamespace(**{**kept, method: limited})

    return with_args(_update, **{f"{net}_optimizer": stand_in})


def _fit_first(*args):
    """Primero los pasos de V (la política quieta); después, la actualización."""
    *state, epochs = args
    _muted("policy", "step")(*state, epochs)
    return _update(*state, 0)


def _attached(lp, v, g, n):
    """Las dos pérdidas, con la ventaja sin separar en la de la política."""
    return -(lp * (g - v)).sum() / n, _losses(lp, v, g, n)[1]


def _both_each_step(*args):
    """Las dos pérdidas sumadas en cada paso de V: la política da los mismos."""
    *state, epochs = args
    return [_update(*state, 1) for _ in range(epochs)][-1]


UPDATE_POLICY_MISTAKES = with_messages(
    """
update_fit_before_advantages: Ajustaste V antes de calcular las ventajas: así V(s_t) ya
    ha visto G_t, que depende de la acción a_t, y la ventaja de cada paso encoge (la
    sección «Primero la ventaja, después el ajuste de V»). Calcula las ventajas con la V
    de antes, da el paso de la política y solo después ajusta V.
update_divided_by_steps: Dividiste la pérdida de la política por los M pasos; se divide
    por los N episodios del lote (episodes.n_episodes), como en el módulo 03.
update_policy_no_zero_grad: ¿Borras los gradientes viejos de la política? La red llega
    con los de la actualización anterior, y backward() los suma a los nuevos:
    policy_optimizer.zero_grad() va antes de policy_loss.backward().
update_losses_summed: La política dio un paso en cada paso de V: ¿sumaste las dos
    pérdidas en el bucle de value_epochs? Solo V repite; la política da un solo paso.
""",
    ("update_fit_before_advantages", _fit_first),
    ("update_divided_by_steps", patched(_update, baseline_losses=_by_step)),
    ("update_policy_no_zero_grad", _muted("policy", "zero_grad")),
    ("update_losses_summed", _both_each_step),
)
UPDATE_VALUE_MISTAKES = with_messages(
    """
update_value_single_step: V dio un solo paso: deben ser value_epochs, cada uno con la
    pérdida del valor recalculada con la V del momento (¿un paso con las dos sumadas?).
update_value_not_trained: La red de valor no se movió: ¿diste los pasos con
    policy_optimizer? Cada optimizador mueve solo los parámetros que recibió: la pérdida
    del valor va con value_optimizer.
update_value_no_zero_grad: ¿Borras los gradientes de V en cada paso? backward() los
    suma a los que ya había (los de la actualización anterior y los del paso anterior):
    value_optimizer.zero_grad() antes de cada value_loss.backward().
update_advantage_not_detached: La pérdida de la política llega a la red de valor (V
    recibió un backward() de más): la ventaja no está separada del grafo. La política no
    debe mover V: usa la pérdida de baseline_losses, que separa la ventaja.
""",
    ("update_value_single_step", with_args(_update, value_epochs=1)),
    ("update_value_not_trained", with_args(_update, value_epochs=0)),
    ("update_value_no_zero_grad", _muted("value", "zero_grad")),
    # zero_grad una sola vez, antes del bucle de V
    ("update_value_no_zero_grad", _muted("value", "zero_grad", 1)),
    ("update_advantage_not_detached", patched(_update, baseline_losses=_attached)),
    # La misma fila que en la tabla de la política: también da pasos de más.
    UPDATE_POLICY_MISTAKES[-1],
)


def _check_update(student, cases, rows, same, explain) -> None:
    """Una fila coincide si deja lo que ``same`` mira, sin contar los backward(): la
    suma de las pérdidas con un optimizador hace uno, y value_epochs = 0, ninguno."""
    for case in cases:
        check_procedure(
            student,
            _update,
            rows,
            run=lambda f, case=case: _run_update(f, case),
            same=same,
            same_as_mistake=lambda g, b: same(g, b._replace(backwards=g.backwards)),
            describe=lambda got, want: "",
            unexplained=explain,
        )


@exercise(MODULE, "baseline_update", "la política y las ventajas", uses=_UPDATE_USES)
def check_baseline_update(baseline_update, cases=UPDATE_CASES) -> None:
    """Comprueba la política tras ``baseline_update`` y las ventajas devueltas."""

    def same(got, want) -> bool:  # antes, que sean M ventajas sin gradiente
        returned, steps = got.advantages, len(want.advantages)
        if isinstance(returned, torch.Tensor) and returned.requires_grad:
            UPDATE_SAYS["update_advantages_attached"].fail()
        if returned is None or np.shape(returned) != (steps,):
            shape = f"algo de forma {np.shape(returned)}"
            shown = "None (¿falta el return?)" if returned is None else shape
            UPDATE_SAYS["update_advantages_shape"].fail(steps=steps, got=shown)
        mine = as_array(returned, "Las ventajas")
        ok = close(mine, want.advantages, atol=1e-5, rtol=1e-4)
        return ok and same_parameters(got.policy, want.policy)

    def explain(got, want) -> None:
        what = f"la política tras una actualización (semilla {got.case[0]})"
        compare_parameters(got.policy, want.policy, what=what)
        UPDATE_SAYS["update_wrong_advantages"].fail()

    _check_update(baseline_update, cases, UPDATE_POLICY_MISTAKES, same, explain)


@exercise(MODULE, "baseline_update", "la red de valor y los pasos", uses=_UPDATE_USES)
def check_baseline_update_value(baseline_update, cases=UPDATE_CASES) -> None:
    """Comprueba la red de valor, los pasos de cada red y los backward() a ``V``."""

    def same(got, want) -> bool:
        counted = (got.steps, got.backwards) == (want.steps, want.backwards)
        return counted and same_parameters(got.value, want.value)

    def explain(got, want) -> bool:
        if (got.steps, got.backwards) != (want.steps, want.backwards):
            UPDATE_SAYS["update_step_count"].fail(got=got, epochs=got.case[2])
        what = f"la red de valor tras una actualización (semilla {got.case[0]})"
        compare_parameters(got.value, want.value, what=what)
        return True  # iguales con la tolerancia de compare_parameters

    _check_update(baseline_update, cases, UPDATE_VALUE_MISTAKES, same, explain)
