"""Comprobaciones del módulo 06 · PPO."""

from __future__ import annotations

import copy
import functools
import inspect
import math
import numbers
from types import SimpleNamespace

import numpy as np
import torch

from helpers import ppo
from helpers.checks import (
    CheckError,
    Flow,
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
    fail,
    negated,
    on_output,
    patched,
    values_check,
    with_args,
    with_messages,
)
from helpers.checks.quiz import STATEMENT_KEYS as STATEMENT_KEYS
from helpers.checks.quiz import numbered_quiz
from helpers.formatting import significant

MODULE = "06_ppo"


_t = functools.partial(torch.tensor, dtype=torch.float64)


#: Lo que dicen las reglas de este tema que no son una fila (``fail`` a mano).
SAYS = diagnoses(
    """
not_a_tensor: {name}(...) debe devolver un tensor de PyTorch (para poder llamar a
    loss.backward()); devolvió {kind}. No uses .item(), float() ni NumPy.
not_a_scalar: {name}(...) debe devolver un escalar y devolvió algo de forma {shape}:
    ¿promediaste sobre un solo eje (.mean(dim=0))? Promedia todo con .mean().
no_gradient: El resultado no tiene gradiente respecto a log_probs (¿usaste .detach(),
    .item(), NumPy, torch.round o un tensor nuevo?). PPO necesita derivarlo.
gradient_to_old_log_probs: El gradiente llega a old_log_probs: la política vieja es una
    referencia fija, usa old_log_probs.detach(). (Si arrastra gradiente, el paso la
    mueve; si sale del θ actual, r = 1 con derivada nula y el recorte no hace nada.)
kl_not_scalar: {name} debe ser un escalar (la media sobre todas las muestras), pero
    tiene forma {shape}. ¿Olvidaste el .mean() o promediaste sobre un solo eje?
loss_without_gradient: La pérdida no tiene gradiente respecto a la red (¿usaste
    .detach(), .item(), NumPy o torch.no_grad()?): el optimizador no podría moverla.
critic_without_gradient: Los parámetros del crítico no reciben gradiente: ¿calculaste
    V(s) con .detach() o bajo torch.no_grad()? El crítico tiene que aprender.
actor_without_gradient: Los parámetros del actor no reciben gradiente: ¿calculaste
    log π(a|s) con .detach() o bajo torch.no_grad()?
modified_batch: ppo_update modificó el lote (batch): ¿normalizaste las ventajas en su
    sitio (-=, /= o batch.advantages = ...)? Calcula sobre copias: el lote se reutiliza.
epochs_not_an_integer: ppo_update debe devolver cuántas épocas hizo, un entero; devolvió
    {epochs}.
wrong_loss: En ppo.tiny_ppo_problem({seed}), con el minilote [{shown}] ({n} muestras),
    ε = {e}, c_V = {v} y c_H = {h}, la pérdida vale {g} y debía valer {w}. Repasa log
    π_θ de cada acción tomada, la entropía de π_θ(·|s), las ventajas normalizadas con la
    media y la desviación típica del minilote (en coma flotante) y los pesos c_V y c_H.
wrong_epoch_count: ppo_update hizo {got} épocas y debían ser {want} de {n}: al acabar
    cada época se mide k3 entre los log π_θold del lote y la política actual, sobre todo
    el lote y sin gradiente, y si pasa de target_kl no se hacen más épocas. (Si la
    primera celda tampoco pasa, arregla eso antes: con otra red, la KL es otra.)
"""
)


def _scalars(function, cases, name):
    """Las salidas (llamada con copias); falla si alguna no es un tensor escalar."""
    outputs = [call(function, name, *case) for case in cases]
    for out in outputs:
        if not isinstance(out, torch.Tensor):
            SAYS["not_a_tensor"].fail(name=name, kind=type(out).__name__)
        if out.numel() != 1:
            SAYS["not_a_scalar"].fail(name=name, shape=tuple(out.shape))
    return outputs


# -- Ejercicio 1 · la pérdida recortada (el valor, y aparte el gradiente) ------
# Cocientes dentro y fuera de [1 − ε, 1 + ε] con ventajas de los dos signos. El
# último, respuestas largas: log π ≈ −1000, y exp(−1000) da 0 en float64; solo la
# resta en escala logarítmica da los cocientes (1/2, 1 y 2).
CLIP_CASES = [
    (_t([math.log(x) for x in (0.5, 0.9, 1.0, 1.1, 1.5, 0.7, 1.3, 0.95)]),
     _t([0.0] * 8), _t([1.0, 2.0, -1.0, 0.5, 2.0, -1.5, -0.5, -2.0]), 0.2),
    (_t([-0.2, -1.6, -0.7, -0.1, -0.5]), _t([-0.7, -1.0, -0.6, -0.9, -0.5]),
     _t([-1.0, 0.8, 1.2, -0.3, 0.7]), 0.1),
    (_t([[-0.3, -1.0, -2.0], [-0.4, -0.05, -1.3]]),
     _t([[-0.6, -0.7, -2.1], [-0.3, -0.9, -1.0]]),
     _t([[0.5, -1.0, 2.0], [-0.7, 1.5, -2.5]]), 0.2),
    (_t([-1000.0] * 3), _t([-1000.0 + math.log(2), -1000.0, -1000.0 - math.log(2)]),
     _t([1.0, -0.5, -1.0]), 0.2),
]  # fmt: skip

_clip, _surrogate = ppo.clipped_surrogate_loss, ppo.clipped_surrogate
_CLIP = "clipped_surrogate_loss"


def _terms(terms):  # otro objetivo por elemento, terms(r, A, ε)
    return patched(_clip, clipped_surrogate=terms)


def _ratio(ratio):  # otro cociente, ratio(lp, old), con old sin gradiente
    return patched(_clip, probability_ratio=lambda lp, old: ratio(lp, old.detach()))


CLIP_MISTAKES = with_messages(
    """
max_instead_of_min: Usaste max en lugar de min: el objetivo de PPO es la cota pesimista,
    min(r·A, clip(r)·A). Con max, el cociente nunca deja de empujar.
clip_without_min: Falta el min: con solo clip(r)·A, fuera del intervalo el gradiente se
    anula aunque el paso deshaga un error (A > 0, r < 1 − ε). Usa min(r·A, clip(r)·A).
clip_upper_only: Solo recortaste por arriba (min(r, 1 + ε)·A): con A < 0 el min queda
    del lado equivocado. Usa min(r·A, clip(r, 1 − ε, 1 + ε)·A): vale con los dos signos.
no_clip: No hay recorte: −mean(r·A) es el gradiente de política sin freno. Falta el
    término clip(r, 1 − ε, 1 + ε)·A y el min.
missing_minus_sign: Falta el signo menos: L^CLIP se maximiza y el optimizador minimiza;
    la pérdida es −mean(min(...)).
sum_instead_of_mean: Sumaste en lugar de promediar: la pérdida es una media sobre las
    muestras (si no, su escala depende del tamaño del lote).
inverted_ratio: El cociente está invertido: r = π_θ / π_θold = exp(log_probs −
    old_log_probs), la política nueva en el numerador.
ratio_of_exponentials: exp(log_probs) / exp(old_log_probs) es el cociente en teoría,
    pero con log π ≈ −1000 (una respuesta entera) las dos exponenciales dan 0 y sale
    0/0 = nan. Resta en escala logarítmica y exponencia una sola vez.
missing_exp: Falta la exponencial: log_probs − old_log_probs es log r_t; el cociente es
    r_t = exp(log_probs − old_log_probs).
""",
    # max(x, y) = −min(−x, −y): el objetivo de referencia con −A, negado.
    ("max_instead_of_min", _terms(lambda r, a, e: -_surrogate(r, -a, e))),
    ("clip_without_min", _terms(lambda r, a, e: r.clamp(1 - e, 1 + e) * a)),
    ("clip_upper_only", _terms(lambda r, a, e: r.clamp(max=1 + e) * a)),
    ("no_clip", lambda lp, old, a, *e: _clip(lp, old, a, math.inf)),
    ("missing_minus_sign", negated(_clip)),
    ("sum_instead_of_mean", lambda lp, *r: _clip(lp, *r) * lp.numel()),
    ("inverted_ratio", _ratio(lambda lp, old: torch.exp(old - lp))),
    ("ratio_of_exponentials", _ratio(lambda lp, old: lp.exp() / old.exp())),
    ("missing_exp", _ratio(lambda lp, old: lp - old)),
)


@exercise(MODULE, _CLIP, "el valor")
def check_clipped_surrogate_loss(clipped_surrogate_loss, cases=CLIP_CASES):
    """El valor de ``clipped_surrogate_loss(log_probs, old, A, ε)``."""
    _scalars(clipped_surrogate_loss, cases, _CLIP)
    check_cases(clipped_surrogate_loss, _CLIP, cases, _clip, CLIP_MISTAKES)


@exercise(MODULE, _CLIP, "el gradiente")
def check_clipped_surrogate_loss_grad(clipped_surrogate_loss, cases=CLIP_CASES):
    """El gradiente respecto a ``log_probs``, y que no llega a ``old_log_probs``."""
    _scalars(clipped_surrogate_loss, cases, _CLIP)
    check_gradients(
        clipped_surrogate_loss,
        _CLIP,
        cases,
        _clip,
        CLIP_MISTAKES,
        prefix="clip",
        hint="Debe ser el de −mean(min(r·A, clip(r, 1 − ε, 1 + ε)·A)): dentro del "
        "intervalo vale −r·A/B; fuera, en el lado que recorta, exactamente cero.",
        without_gradient=SAYS["no_gradient"],
        wrt={
            "log_probs": Flow(True, SAYS["no_gradient"]),
            "old_log_probs": Flow(False, SAYS["gradient_to_old_log_probs"]),
        },
    )


# -- Ejercicio 2 · los estimadores de la KL ------------------------------------
KL_CASES = [
    (_t([-0.5, -1.2, -0.1, -2.0]), _t([-0.7, -1.0, -0.1, -1.5])),
    (_t([-0.69, -0.69, -0.2]), _t([-0.1, -2.3, -0.9])),
    (_t([[-1.0, -0.4], [-0.3, -2.2]]), _t([[-0.8, -0.5], [-0.9, -1.6]])),
]

_kl = ppo.kl_estimators


def _k3(change, what):  # k3 cambiado por change(k1, k3)
    return on_output(_kl, lambda k: (k[0], change(*k)), what)


def _k1_k3(out, *args):
    """``[k1, k3]`` como array; falla si ``out`` no son dos escalares."""
    said = "kl_estimators debe devolver dos cosas, (k1, k3)"
    pair = as_tuple(out, 2, said, mistake="kl_not_a_pair")
    for name, value in zip(("k1", "k3"), pair, strict=True):
        if (shape := as_array(value, name).shape) not in ((), (1,)):
            SAYS["kl_not_scalar"].fail(name=name, shape=shape)
    return np.array([float(as_array(x, "k").reshape(-1)[0]) for x in pair])


KL_MISTAKES = with_messages(
    """
k1_sign: k1 tiene el signo cambiado: con log ρ = log p − log q, k1 = −log ρ = log q −
    log p (log_probs − other_log_probs).
inverted_rho: Invertiste ρ: es ρ = p(x)/q(x), log ρ = other_log_probs − log_probs (las
    muestras vienen de q, la primera distribución).
k3_missing_minus_one: A k3 le falta el −1: k3 = (ρ − 1) − log ρ. Sin él no es insesgado
    (y no vale 0 cuando las dos distribuciones coinciden).
k2_instead_of_k3: Eso es k2 = ½·(log ρ)², no k3 = (ρ − 1) − log ρ, con ρ = exp(log ρ).
k3_last_term_sign: El signo del último término de k3: es (ρ − 1) − log ρ, que nunca es
    negativo porque log ρ ≤ ρ − 1.
""",
    ("k1_sign", on_output(_kl, lambda k: (-k[0], k[1]), "−k1")),
    ("inverted_rho", lambda log_probs, other: _kl(other, log_probs)),
    ("k3_missing_minus_one", _k3(lambda k1, k3: k3 + 1, "k3 + 1")),
    ("k2_instead_of_k3", lambda p, q: (_kl(p, q)[0], ((q - p) ** 2).mean() / 2)),
    # (ρ − 1) + log ρ = k3 + 2·log ρ, y la media de log ρ es −k1.
    ("k3_last_term_sign", _k3(lambda k1, k3: k3 - 2 * k1, "k3 + 2·log ρ")),
)

check_kl_estimators = values_check(
    MODULE, "kl_estimators", _kl, KL_MISTAKES, KL_CASES, view=_k1_k3
)


# -- Ejercicio 3 · la pérdida de un minilote (el valor, y aparte el gradiente) -
#: ``(semilla del problema, índices del minilote, ε, c_V, c_H)``.
MINIBATCH_LOSS_CASES = [
    (0, list(range(0, 40, 3)), 0.2, 0.5, 0.01),
    (1, [5, 0, 17, 33, 8, 21, 39, 12], 0.1, 1.0, 0.05),
]


def _named(value, text):  # value con text como repr: así lo nombran los mensajes
    kind = type(value)
    value.__class__ = type(kind.__name__, (kind,), {"__repr__": lambda _: text})
    return value


def _minibatch_args(case):
    """La red del problema diminuto ya alejada de la que muestreó (recién
    iniciada, los cocientes valen 1 y el recorte no se nota), su lote y el caso."""
    seed, indices, *coefs = case
    agent, batch = ppo.tiny_ppo_problem(seed)
    optimizer = torch.optim.Adam(agent.parameters(), lr=0.03, eps=1e-5)
    shuffle = torch.Generator().manual_seed(seed)
    ppo.ppo_update(
        agent, optimizer, batch, shuffle, **UPDATE_SETTINGS | {"n_epochs": 3}
    )
    agent.zero_grad(set_to_none=True)
    return _named(agent, "agent"), _named(batch, "batch"), torch.tensor(indices), *coefs


_minibatch, _MB = ppo.ppo_minibatch_loss, "ppo_minibatch_loss"
_mb_with = functools.partial(with_args, _minibatch)  # con otros pesos
_LOSS_ARGS = list(inspect.signature(ppo.ppo_loss).parameters)


def _changed(change):
    """La referencia con ``change(a)`` en los argumentos de ``ppo.ppo_loss``."""

    def loss(agent, batch, indices, *coefs):
        def total(*args):
            named = dict(zip(_LOSS_ARGS, args, strict=True))
            a = SimpleNamespace(agent=agent, batch=batch, indices=indices, **named)
            return ppo.ppo_loss(**named | change(a))

        return ppo._minibatch_loss(agent, batch, indices, *coefs, loss_fn=total)[0]

    return loss


def _normalized(x, unbiased=True):
    return (x - x.mean()) / (x.std(unbiased=unbiased) + 1e-8)


def _advantages(change):  # otras ventajas, change(Â del lote, índices)
    return _changed(lambda a: {"advantages": change(a.batch.advantages, a.indices)})


def _chosen(a):  # los logits de las acciones tomadas
    logits = a.agent(a.batch.obs[a.indices])[0]
    return logits.gather(-1, a.batch.actions[a.indices][:, None])[:, 0]


def _absolute_value_error(agent, batch, i, e, v, h):
    critic = (agent(batch.obs[i])[1] - batch.returns[i]).abs().mean()
    return _minibatch(agent, batch, i, e, 0.0, h) + v * critic


# La primera fila solo se ve en el gradiente (el valor es el bueno).
ENTROPY_DETACHED, *MINIBATCH_LOSS_MISTAKES = with_messages(
    """
entropy_detached: El gradiente es el de la pérdida sin el premio a la entropía:
    ¿la calculaste con .detach() o bajo torch.no_grad()? También debe llegar al actor.
advantages_not_normalized: Falta normalizar las ventajas del minilote: (Â − media) /
    (desviación típica + 1e-8), con la media y la desviación de ese minilote.
biased_std: Normalizaste con la desviación típica sesgada (unbiased=False o
    correction=0): el enunciado fija la insesgada de torch.std, que divide por n − 1.
normalized_with_whole_batch: Normalizaste con la media y la desviación de todo el lote:
    aquí se normaliza cada minilote con las suyas.
logits_as_log_probs: Tomaste los logits de la acción como si fueran log π(a|s): antes
    hay que pasarlos por log_softmax (si no, no son log-probabilidades).
entropy_sign: El premio a la entropía va con signo menos: queremos subir la entropía
    (explorar) y el optimizador minimiza. loss = … − c_H·mean(entropía).
missing_vf_coef: Falta multiplicar la pérdida del crítico por vf_coef (c_V).
absolute_value_error: La pérdida del crítico es el error cuadrático medio, mean((V −
    R)²), no el valor absoluto.
half_value_error: Sobra el ½ en la pérdida del crítico: aquí es mean((V − R)²) y el peso
    lo pone solo vf_coef.
""",
    ("entropy_detached", _changed(lambda a: {"entropy": a.entropy.detach()})),
    ("advantages_not_normalized", _advantages(lambda adv, i: adv[i])),
    ("biased_std", _advantages(lambda adv, i: _normalized(adv[i], False))),
    ("normalized_with_whole_batch", _advantages(lambda x, i: _normalized(x)[i])),
    ("logits_as_log_probs", _changed(lambda a: {"log_probs": _chosen(a)})),
    ("entropy_sign", _mb_with(ent_coef=lambda a: -a.ent_coef)),
    ("missing_vf_coef", _mb_with(vf_coef=1.0)),
    ("absolute_value_error", _absolute_value_error),
    ("half_value_error", _mb_with(vf_coef=lambda a: a.vf_coef / 2)),
)

# Con la pérdida recortada de referencia: cada ejercicio se califica solo.
_MINIBATCH_USES = {"clipped_surrogate_loss": _clip, "kl_estimators": _kl}


@exercise(MODULE, "ppo_minibatch_loss", "el valor", uses=_MINIBATCH_USES)
def check_ppo_minibatch_loss(ppo_minibatch_loss, cases=MINIBATCH_LOSS_CASES):
    """El valor de ``ppo_minibatch_loss(agent, batch, indices, ε, c_V, c_H)``."""
    prepared = [_minibatch_args(case) for case in cases]

    def unexplained(got, want):
        i = next(i for i, g in enumerate(got) if not close(g, want[i]))
        seed, indices, *coefs = cases[i]
        shown = ", ".join(map(str, indices[:6])) + (", …" if len(indices) > 6 else "")
        shown_values = map(significant, (*coefs, got[i], want[i]))
        values = dict(zip("evhgw", shown_values, strict=True))
        SAYS["wrong_loss"].fail(seed=seed, shown=shown, n=len(indices), **values)

    check_procedure(
        ppo_minibatch_loss,
        _minibatch,
        MINIBATCH_LOSS_MISTAKES,
        run=lambda f: [float(out.detach()) for out in _scalars(f, prepared, _MB)],
        same=close,
        describe=lambda got, want: "",
        unexplained=unexplained,
    )


@exercise(MODULE, "ppo_minibatch_loss", "el gradiente", uses=_MINIBATCH_USES)
def check_ppo_minibatch_loss_grad(ppo_minibatch_loss, cases=MINIBATCH_LOSS_CASES):
    """Los gradientes de la pérdida respecto al actor y al crítico."""
    check_gradients(
        ppo_minibatch_loss,
        _MB,
        [_minibatch_args(case) for case in cases],
        _minibatch,
        [ENTROPY_DETACHED, *MINIBATCH_LOSS_MISTAKES],
        prefix="minibatch",
        atol=1e-5,
        rtol=1e-4,
        hint="Repasa cada pieza: log π_θ, la entropía y V_θ vienen de la red, con "
        "gradiente; las ventajas normalizadas, los log π_θold y los objetivos R "
        "son constantes. (Si la celda del valor tampoco pasa, arregla antes eso.)",
        without_gradient=SAYS["loss_without_gradient"],
        wrt={
            "agent.critic": Flow(True, SAYS["critic_without_gradient"]),
            "agent.actor": Flow(True, SAYS["actor_without_gradient"]),
        },
    )


# -- Ejercicio 4 · la fase de actualización ------------------------------------
#: Los hiperparámetros de ``ppo_update`` en las comprobaciones (salvo lo que cada
#: caso cambie): sin recorte del gradiente que actúe y sin parada temprana.
UPDATE_SETTINGS = dict(
    n_epochs=4, minibatch_size=16, clip_eps=0.2, vf_coef=0.5, ent_coef=0.01,
    max_grad_norm=100.0, target_kl=None,
)  # fmt: skip
#: Cada caso: ``(semilla del problema, semilla del barajado, tasa, cambios)``.
UPDATE_CASES = [(0, 0, 0.01, {})]
UPDATE_CLIP_CASES = [(0, 0, 0.01, {"max_grad_norm": 0.5})]
UPDATE_KL_CASES = [
    (0, 0, 0.01, {"n_epochs": 6, "target_kl": 0.004}),
    # Aquí KL(π_θ ‖ π_θold) pasa de 0,02 una época antes que la buena (4 y no 5),
    # y k1 no llega nunca: los dos errores se ven sin las pruebas ocultas.
    (3, 0, 0.01, {"n_epochs": 8, "target_kl": 0.02}),
]

#: ``ppo.ppo_update`` con unos argumentos cambiados, o con una pieza cambiada.
_update = functools.partial(with_args, ppo.ppo_update)
_patched = functools.partial(patched, ppo.ppo_update)


def _minibatches(minibatch_fn):
    return _update(minibatch_fn=lambda a: minibatch_fn)


def _shuffled_once(a):  # la misma llamada (el mismo generador), los mismos minilotes
    return functools.cache(ppo.minibatch_indices)


def _strided(n, size, epochs, generator):
    order, count = torch.randperm(n, generator=generator), math.ceil(n / size)
    return [order[k::count] for k in range(count)]


def _per_epoch(a):
    """Un paso por época: a cero al empezarla; al acabarla, recorte y paso."""
    per_epoch, done = math.ceil(len(a.batch) / a.minibatch_size), [0]

    def step():
        done[0] += 1
        if done[0] % per_epoch == 0:
            torch.nn.utils.clip_grad_norm_(a.agent.parameters(), a.max_grad_norm)
            a.optimizer.step()

    def zero_grad():
        return done[0] % per_epoch or a.optimizer.zero_grad()

    return SimpleNamespace(zero_grad=zero_grad, step=step)


def _actor_only(a):  # el agente, con parameters() solo del actor (lo que se recorta)
    proxy = functools.partial(a.agent)
    proxy.parameters = a.agent.actor.parameters
    return proxy


def _stopping(a):  # minilotes que se acaban en cuanto la KL pasa de target_kl
    def minibatches(*args):
        for indices in ppo.minibatch_indices(*args):
            yield indices
            if ppo.batch_kl(a.agent, a.batch) > a.target_kl:
                return

    return minibatches


def _epoch_not_counted(agent, optimizer, batch, generator, **settings):  # una menos
    epochs = ppo.ppo_update(agent, optimizer, batch, generator, **settings)
    return epochs - (ppo.batch_kl(agent, batch) > settings["target_kl"])


def _without_last(*args):
    return [i for i in ppo.minibatch_indices(*args) if len(i) == args[1]]


def _no_zero_grad(a):
    return SimpleNamespace(zero_grad=lambda: None, step=a.optimizer.step)


def _returned_n_epochs(*args, **settings):
    ppo.ppo_update(*args, **settings)
    return settings["n_epochs"]


_ALL_UPDATE_MISTAKES = with_messages(
    """
shuffled_once: Barajaste una vez y repetiste ese orden en todas las épocas: cada época
    empieza con una permutación nueva del lote (el generador se usa una vez por época).
not_shuffled: Recorriste el lote en orden, sin barajar: cada época empieza con una
    permutación nueva del lote, con el generador que recibes.
dropped_last_minibatch: Te saltaste el último minilote de cada época, el más corto: cada
    muestra se usa una vez por época, aunque el lote no sea múltiplo del minilote.
strided_minibatches: Tus minilotes salen de la permutación a saltos (order[k::n]): cada
    uno es un trozo seguido, order[0:m], order[m:2m]…, con m = minibatch_size, en orden.
one_step_per_epoch: Diste un solo paso por época, con los gradientes de todos los
    minilotes sumados: PPO da un paso por minilote (zero_grad, backward, recorte, step).
missing_zero_grad: Falta poner los gradientes a cero antes de cada backward: sin
    optimizer.zero_grad(), PyTorch los suma a los del minilote anterior.
gradient_not_clipped: No recortas el gradiente: antes de cada optimizer.step() (después
    ya no sirve), la norma del gradiente de todos los parámetros (actor y crítico
    juntos) se limita a max_grad_norm.
clipped_actor_only: Recortaste solo el gradiente del actor: la norma que se limita es la
    de todos los parámetros juntos, agent.parameters().
kl_with_k1: Mediste la KL con k1: la parada temprana usa k3, que nunca es negativo.
kl_reversed: Mediste la KL con los argumentos cambiados: las muestras son de la política
    vieja, así que es KL(π_θold ‖ π_θ): kl_estimators(batch.log_probs, log π_θ).
stopped_midway: Cortaste a mitad de una época: la KL se mide al acabar cada época, y las
    épocas se hacen enteras.
epoch_not_counted: Paraste bien, pero contaste mal: la época tras la que la KL pasó de
    target_kl se hizo entera y cuenta.
returned_n_epochs: Devuelves n_epochs aunque la KL haya cortado: devuelve cuántas épocas
    se hicieron de verdad.
""",
    ("shuffled_once", _update(minibatch_fn=_shuffled_once)),
    ("not_shuffled", _minibatches(lambda n, m, *_: torch.arange(n).split(m))),
    ("dropped_last_minibatch", _minibatches(_without_last)),
    ("strided_minibatches", _minibatches(_strided)),
    ("one_step_per_epoch", _update(optimizer=_per_epoch, max_grad_norm=math.inf)),
    ("missing_zero_grad", _update(optimizer=_no_zero_grad)),
    ("gradient_not_clipped", _update(max_grad_norm=math.inf)),
    ("clipped_actor_only", _update(agent=_actor_only)),
    # ppo.batch_kl toma el segundo: k1 en vez de k3, o KL(π_θ ‖ π_θold).
    ("kl_with_k1", _patched(kl_estimators=lambda p, q: _kl(p, q)[::-1])),
    ("kl_reversed", _patched(kl_estimators=lambda p, q: _kl(q, p))),
    ("stopped_midway", _update(minibatch_fn=_stopping)),
    ("epoch_not_counted", _epoch_not_counted),
    ("returned_n_epochs", _returned_n_epochs),
)
UPDATE_MISTAKES = _ALL_UPDATE_MISTAKES[:6]  # en las tres celdas
UPDATE_CLIP_MISTAKES = _ALL_UPDATE_MISTAKES[6:8]  # con un recorte que actúa
UPDATE_KL_MISTAKES = _ALL_UPDATE_MISTAKES[8:]  # con la parada temprana

#: Qué etapa mirar, según qué red difiere tras la fase de actualización.
WHICH_NET = {
    ("critic",): " Solo difiere el crítico: mira su pérdida y su peso c_V.",
    ("actor",): " Solo difiere el actor: mira la parte de la política (cociente, "
    "recorte, ventajas normalizadas) y la entropía.",
    ("actor", "critic"): " Difieren el actor y el crítico: mira primero el orden de "
    "los minilotes (una permutación nueva por época, con el generador que recibes) "
    "y los pasos del optimizador (zero_grad, backward, recorte, step).",
}


def _differing(got, want):  # las redes ("actor", "critic") cuyos parámetros difieren
    def close_to(k):
        return torch.allclose(got[k], want[k], atol=1e-5, rtol=1e-4)

    return tuple(sorted({k.split(".")[0] for k in want if not close_to(k)}))


def _check_update(ppo_update, case, mistakes, what="", check_epochs=False):
    """Un caso, desde el estado de la referencia (y, si se pide, las épocas)."""
    problem_seed, shuffle_seed, lr, changes = case
    settings = {**UPDATE_SETTINGS, **changes}

    def run(function):
        agent, batch = ppo.tiny_ppo_problem(problem_seed)
        optimizer = torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)
        generator = torch.Generator().manual_seed(shuffle_seed)
        before = copy.deepcopy(batch)
        with torch.random.fork_rng():
            torch.manual_seed(1234)
            epochs = function(agent, optimizer, batch, generator, **settings)
        if function is ppo_update and _differs(before, batch):
            SAYS["modified_batch"].fail()
        if function is ppo_update and check_epochs:
            if isinstance(epochs, torch.Tensor) and epochs.numel() == 1:
                epochs = epochs.item()
            if isinstance(epochs, bool) or not isinstance(epochs, numbers.Integral):
                SAYS["epochs_not_an_integer"].fail(epochs=repr(epochs))
        params = {k: v.detach().clone() for k, v in agent.state_dict().items()}
        return params, (epochs if check_epochs else None)

    def unexplained(got, want):
        if got[1] != want[1]:
            n = settings["n_epochs"]
            SAYS["wrong_epoch_count"].fail(got=got[1], want=want[1], n=n)
        what_net = f"la red tras la fase de actualización{what}"
        try:
            compare_parameters(got[0], want[0], what=what_net)
        except CheckError as error:
            hint = WHICH_NET.get(_differing(got[0], want[0]), "")
            fail(str(error) + hint, "wrong_parameters")
        return True  # iguales con la tolerancia de compare_parameters

    check_procedure(
        ppo_update,
        ppo.ppo_update,
        mistakes,
        run=run,
        same=lambda got, want: got[1] == want[1] and not _differing(got[0], want[0]),
        describe=lambda got, want: "",
        unexplained=unexplained,
    )


_UPDATE_USES = {"ppo_minibatch_loss": _minibatch, **_MINIBATCH_USES}


@exercise(MODULE, "ppo_update", "los parámetros", uses=_UPDATE_USES)
def check_ppo_update(ppo_update, cases=UPDATE_CASES):
    """Los parámetros tras ``ppo_update``, sin recorte que actúe ni parada."""
    for case in cases:
        _check_update(ppo_update, case, UPDATE_MISTAKES)


@exercise(MODULE, "ppo_update", "el recorte del gradiente", uses=_UPDATE_USES)
def check_ppo_update_clip(ppo_update, cases=UPDATE_CLIP_CASES):
    """Los parámetros tras ``ppo_update`` con un recorte del gradiente que actúa."""
    mistakes = UPDATE_CLIP_MISTAKES + UPDATE_MISTAKES
    for case in cases:
        _check_update(ppo_update, case, mistakes, ", con el gradiente recortado")


@exercise(MODULE, "ppo_update", "la parada temprana por la KL", uses=_UPDATE_USES)
def check_ppo_update_kl(ppo_update, cases=UPDATE_KL_CASES):
    """Las épocas que hace ``ppo_update`` con ``target_kl`` y los parámetros."""
    mistakes = UPDATE_KL_MISTAKES + UPDATE_MISTAKES
    for case in cases:
        _check_update(ppo_update, case, mistakes, ", con parada temprana", True)


# -- Ejercicios 5–8 · el cuestionario (helpers/checks/quiz.py) -----------------
#: El tipo de respuesta de cada pregunta: un número o cuatro afirmaciones.
QUIZ_KINDS = {1: "number", 2: "statements", 3: "number", 4: "statements"}

check_quiz_answer = numbered_quiz(MODULE, QUIZ_KINDS)
