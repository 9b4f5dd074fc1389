"""Comprobaciones del módulo 06 · PPO."""

from __future__ import annotations

import copy
import functools
import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch

from helpers import ppo
from helpers.checks import (
    CheckError,
    Mistake,
    _differs,
    as_array,
    call,
    check_cases,
    check_procedure,
    close,
    compare_parameters,
    describe_difference,
    exercise,
    fail,
)
from helpers.checks.quiz import STATEMENT_KEYS as STATEMENT_KEYS
from helpers.checks.quiz import numbered_quiz
from helpers.formatting import significant

MODULE = "06_ppo"


def _t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _scalar(out: Any, call: str) -> torch.Tensor:
    """El resultado como tensor escalar, o un diagnóstico si no lo es."""
    if not isinstance(out, torch.Tensor):
        fail(
            f"{call} debe devolver un tensor de PyTorch (para poder llamar a "
            f"loss.backward()); devolvió {type(out).__name__}. No uses .item(), "
            "float() ni NumPy.",
            "not_a_tensor",
        )
    if out.numel() != 1:
        fail(
            f"{call} debe devolver un escalar y devolvió algo de forma "
            f"{tuple(out.shape)}. ¿Promediaste sobre un solo eje (p. ej. "
            ".mean(dim=0))? Promedia sobre todos los elementos con .mean().",
            "not_a_scalar",
        )
    return out.reshape(())


def _no_gradient_to_old(
    function: Callable[..., Any], args: tuple[Any, ...], old_index: int, name: str
) -> torch.Tensor:
    """Llama a ``function`` con ``log_probs`` y ``old_log_probs`` con gradiente.

    Comprueba que el gradiente no llega a los log π viejos y devuelve el
    gradiente respecto a ``log_probs`` (el argumento 0).
    """
    args = list(args)
    args[0] = args[0].clone().requires_grad_(True)
    args[old_index] = args[old_index].clone().requires_grad_(True)
    out = function(*args)
    if not isinstance(out, torch.Tensor) or not out.requires_grad:
        fail(
            f"El resultado de {name} no tiene gradiente respecto a log_probs (¿usaste "
            ".detach(), .item(), NumPy o un tensor nuevo?). PPO necesita derivarlo.",
            "no_gradient",
        )
    out.sum().backward()
    grad_old = args[old_index].grad
    if grad_old is not None and grad_old.abs().max() > 0:
        fail(
            "El gradiente llega a old_log_probs: la política vieja es un punto de "
            "referencia fijo, usa old_log_probs.detach(). (Si los log π viejos "
            "arrastran gradiente, el paso mueve también la referencia; y si salen "
            "del θ actual, el cociente vale 1 con derivada nula y el recorte no "
            "hace nada.)",
            "gradient_to_old_log_probs",
        )
    return args[0].grad


# ---------------------------------------------------------------------------
# Ejercicio 1 · la pérdida recortada (el valor, y aparte el gradiente)
# ---------------------------------------------------------------------------

# Cocientes dentro y fuera de [1 − ε, 1 + ε] con ventajas de los dos signos. El
# último caso es el de respuestas largas: log π ≈ −1000 (500 tokens a −2 cada
# uno). En float64, exp(−1000) da exactamente 0: solo la resta en escala
# logarítmica da los cocientes (1/2, 1 y 2).
_LOG_R = [math.log(x) for x in (0.5, 0.9, 1.0, 1.1, 1.5, 0.7, 1.3, 0.95)]
CLIP_CASES = [
    (
        _t(_LOG_R),
        _t([0.0] * 8),
        _t([1.0, 2.0, -1.0, 0.5, 2.0, -1.5, -0.5, -2.0]),
        0.2,
    ),
    (
        _t([-0.2, -1.6, -0.7, -0.1]),
        _t([-0.7, -1.0, -0.6, -0.9]),
        _t([-1.0, 0.8, 1.2, -0.3]),
        0.1,
    ),
    (
        _t([[-0.3, -1.0, -2.0], [-0.4, -0.05, -1.3]]),
        _t([[-0.6, -0.7, -2.1], [-0.3, -0.9, -1.0]]),
        _t([[0.5, -1.0, 2.0], [-0.7, 1.5, -2.5]]),
        0.2,
    ),
    (
        _t([-1000.0, -1000.0, -1000.0]),
        _t([-1000.0 + math.log(2), -1000.0, -1000.0 - math.log(2)]),
        _t([1.0, -0.5, -1.0]),
        0.2,
    ),
]


def _surrogate(combine: Callable, reduce: str = "mean", sign: float = -1.0):
    def loss(lp, old, adv, eps):
        ratio = torch.exp(lp - old.detach())
        terms = combine(ratio, adv, eps)
        return sign * (terms.mean() if reduce == "mean" else terms.sum())

    return loss


def _clip(r, eps):
    return torch.clamp(r, 1 - eps, 1 + eps)


RATIO_OF_EXPONENTIALS = Mistake(
    "ratio_of_exponentials",
    lambda lp, old, adv, eps: (
        -torch.min(
            torch.exp(lp) / torch.exp(old) * adv,
            _clip(torch.exp(lp) / torch.exp(old), eps) * adv,
        ).mean()
    ),
    "Calculaste el cociente como exp(log_probs) / exp(old_log_probs): es el "
    "correcto en teoría, pero con log-probabilidades muy negativas (una "
    "respuesta entera, log π ≈ −1000) las dos exponenciales dan 0 y el "
    "resultado es 0/0 = nan. Resta primero en escala logarítmica y "
    "exponencia una sola vez.",
)

CLIP_MISTAKES: list[Mistake] = [
    Mistake(
        "max_instead_of_min",
        _surrogate(lambda r, a, e: torch.max(r * a, _clip(r, e) * a)),
        "Usaste max en lugar de min: el objetivo de PPO es la cota pesimista, "
        "min(r·A, clip(r)·A). Con max, el cociente nunca deja de empujar.",
    ),
    Mistake(
        "clip_without_min",
        _surrogate(lambda r, a, e: _clip(r, e) * a),
        "Recortaste sin el min: solo clip(r)·A. Fuera del intervalo el gradiente "
        "se anula también cuando el paso estaba «deshaciendo» un error (p. ej. "
        "A > 0 y r < 1 − ε). Toma min(r·A, clip(r)·A).",
    ),
    Mistake(
        "clip_upper_only",
        _surrogate(lambda r, a, e: torch.clamp(r, max=1 + e) * a),
        "Solo recortaste por arriba (min(r, 1 + ε)·A): con ventajas negativas el "
        "min queda del lado equivocado. Usa min(r·A, clip(r, 1 − ε, 1 + ε)·A), "
        "que funciona para los dos signos de A.",
    ),
    Mistake(
        "no_clip",
        _surrogate(lambda r, a, e: r * a),
        "No hay recorte: −mean(r·A) es el gradiente de política sin freno. Falta "
        "el término clip(r, 1 − ε, 1 + ε)·A y el min.",
    ),
    Mistake(
        "missing_minus_sign",
        _surrogate(lambda r, a, e: torch.min(r * a, _clip(r, e) * a), sign=1.0),
        "Falta el signo menos: L^CLIP se maximiza y el optimizador minimiza; la "
        "pérdida es −mean(min(...)).",
    ),
    Mistake(
        "sum_instead_of_mean",
        _surrogate(lambda r, a, e: torch.min(r * a, _clip(r, e) * a), reduce="sum"),
        "Sumaste en lugar de promediar: la pérdida es una media sobre las "
        "muestras (si no, su escala depende del tamaño del lote).",
    ),
    Mistake(
        "inverted_ratio",
        lambda lp, old, adv, eps: (
            -torch.min(
                torch.exp(old - lp) * adv, _clip(torch.exp(old - lp), eps) * adv
            ).mean()
        ),
        "El cociente está invertido: r = π_θ / π_θold = exp(log_probs − "
        "old_log_probs), la política nueva en el numerador.",
    ),
    RATIO_OF_EXPONENTIALS,
    Mistake(
        "missing_exp",
        lambda lp, old, adv, eps: (
            -torch.min((lp - old) * adv, _clip(lp - old, eps) * adv).mean()
        ),
        "Falta la exponencial: log_probs − old_log_probs es log r_t; el cociente "
        "es r_t = exp(log_probs − old_log_probs).",
    ),
]


@exercise(
    MODULE,
    "clipped_surrogate_loss",
    "La pérdida recortada de PPO: el valor",
)
def check_clipped_surrogate_loss(
    clipped_surrogate_loss: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = CLIP_CASES,
) -> None:
    """Comprueba el valor de ``clipped_surrogate_loss(log_probs, old, A, ε)``."""
    cases = list(cases)
    for case in cases:
        _scalar(clipped_surrogate_loss(*case), "clipped_surrogate_loss(...)")
    check_cases(
        clipped_surrogate_loss,
        "clipped_surrogate_loss",
        cases,
        ppo.clipped_surrogate_loss,
        CLIP_MISTAKES,
    )


@exercise(
    MODULE,
    "clipped_surrogate_loss",
    "La pérdida recortada de PPO: el gradiente",
)
def check_clipped_surrogate_loss_grad(
    clipped_surrogate_loss: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = CLIP_CASES,
) -> None:
    """Comprueba el gradiente de la pérdida recortada respecto a ``log_probs``."""
    for case in cases:
        case = copy.deepcopy(tuple(case))
        out = call(clipped_surrogate_loss, "clipped_surrogate_loss", *case)
        _scalar(out, "clipped_surrogate_loss(...)")
        grad = _no_gradient_to_old(
            clipped_surrogate_loss, case, 1, "clipped_surrogate_loss"
        )
        log_probs = case[0].clone().requires_grad_(True)
        ppo.clipped_surrogate_loss(log_probs, *case[1:]).backward()
        if grad is None or not close(grad, log_probs.grad, atol=1e-6):
            if grad is not None and not torch.isfinite(grad).all():
                # El mismo error que en la celda del valor, con su mensaje.
                fail(
                    "El gradiente sale nan. " + RATIO_OF_EXPONENTIALS.message,
                    RATIO_OF_EXPONENTIALS.id,
                )
            fail(
                "El gradiente respecto a log_probs no es el de "
                "−mean(min(r·A, clip(r, 1 − ε, 1 + ε)·A)): "
                + describe_difference(grad, log_probs.grad)
                + " Dentro del intervalo vale −r·A/B; fuera, en el lado que "
                "recorta, exactamente cero.",
                "clip_wrong_gradient",
            )


# ---------------------------------------------------------------------------
# Ejercicio 2 · los estimadores de la KL
# ---------------------------------------------------------------------------

KL_CASES = [
    (_t([-0.5, -1.2, -0.1, -2.0]), _t([-0.7, -1.0, -0.1, -1.5])),
    (_t([-0.69, -0.69, -0.2]), _t([-0.1, -2.3, -0.9])),
    (_t([[-1.0, -0.4], [-0.3, -2.2]]), _t([[-0.8, -0.5], [-0.9, -1.6]])),
]


def _kl(k1: Callable, k3: Callable) -> Callable:
    def estimators(log_q, log_p):
        log_rho = log_p - log_q
        return k1(log_rho).mean(), k3(log_rho).mean()

    return estimators


def _as_pair(function: Callable) -> Callable:
    """``function`` devolviendo un array ``[k1, k3]`` (para comparar huellas)."""

    @functools.wraps(function)
    def pair(*args):
        out = function(*args)
        if not isinstance(out, tuple | list) or len(out) != 2:
            raise TypeError("debe devolver dos cosas")
        return np.array([float(as_array(x, "k").reshape(-1)[0]) for x in out])

    return pair


KL_MISTAKES: list[Mistake] = [
    Mistake(
        "k1_sign",
        _kl(lambda lr: lr, lambda lr: torch.exp(lr) - 1 - lr),
        "k1 tiene el signo cambiado: con log ρ = log p − log q, k1 = −log ρ = "
        "log q − log p (log_probs − other_log_probs).",
    ),
    Mistake(
        "inverted_rho",
        _kl(lambda lr: lr, lambda lr: torch.exp(-lr) - 1 + lr),
        "Invertiste ρ: es ρ = p(x)/q(x), log ρ = other_log_probs − log_probs (las "
        "muestras vienen de q, la primera distribución).",
    ),
    Mistake(
        "k3_missing_minus_one",
        _kl(lambda lr: -lr, lambda lr: torch.exp(lr) - lr),
        "A k3 le falta el −1: k3 = (ρ − 1) − log ρ. Sin él no es insesgado (y no "
        "vale 0 cuando las dos distribuciones coinciden).",
    ),
    Mistake(
        "k2_instead_of_k3",
        _kl(lambda lr: -lr, lambda lr: 0.5 * lr**2),
        "Eso es k2 = ½·(log ρ)², no k3: k3 = (ρ − 1) − log ρ, con ρ = exp(log ρ).",
    ),
    Mistake(
        "k3_last_term_sign",
        _kl(lambda lr: -lr, lambda lr: (torch.exp(lr) - 1) + lr),
        "El signo del último término de k3: es (ρ − 1) − log ρ, que nunca es "
        "negativo porque log ρ ≤ ρ − 1.",
    ),
]


@exercise(MODULE, "kl_estimators", "Los estimadores k1 y k3 de la KL")
def check_kl_estimators(
    kl_estimators: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = KL_CASES,
) -> None:
    """Comprueba ``kl_estimators(log_probs, other_log_probs) → (k1, k3)``."""
    cases = list(cases)
    for case in cases:
        out = kl_estimators(*case)
        if not isinstance(out, tuple | list) or len(out) != 2:
            fail(
                "kl_estimators debe devolver dos cosas, (k1, k3); devolvió "
                f"{type(out).__name__}.",
                "kl_not_a_pair",
            )
        for name, value in zip(("k1", "k3"), out, strict=True):
            shape = as_array(value, name).shape
            if shape not in ((), (1,)):
                fail(
                    f"{name} debe ser un escalar (la media sobre todas las "
                    f"muestras), pero tiene forma {shape}. ¿Olvidaste el .mean() o "
                    "promediaste sobre un solo eje?",
                    "kl_not_scalar",
                )
    check_cases(
        _as_pair(kl_estimators),
        "kl_estimators",
        cases,
        _as_pair(ppo.kl_estimators),
        [Mistake(m.id, _as_pair(m.variant), m.message) for m in KL_MISTAKES],
    )


# ---------------------------------------------------------------------------
# Ejercicio 3 · la pérdida de un minilote (el valor, y aparte el gradiente)
# ---------------------------------------------------------------------------


def _moved_problem(seed: int) -> tuple[torch.nn.Module, ppo.PPOBatch]:
    """El problema diminuto con la red ya alejada de la que muestreó.

    Recién inicializada, la red da cocientes de 1 en todas las muestras y el
    recorte no se nota: unas épocas de la referencia con una tasa alta dejan
    una parte de los cocientes fuera de ``[1 − ε, 1 + ε]`` y otra dentro.
    """
    agent, batch = ppo.tiny_ppo_problem(seed)
    optimizer = torch.optim.Adam(agent.parameters(), lr=0.03, eps=1e-5)
    ppo.ppo_update(
        agent,
        optimizer,
        batch,
        torch.Generator().manual_seed(seed),
        n_epochs=3,
        minibatch_size=16,
        max_grad_norm=100.0,
    )
    agent.zero_grad(set_to_none=True)
    return agent, batch


#: ``(semilla del problema, índices del minilote, ε, c_V, c_H)``.
MINIBATCH_LOSS_CASES = [
    (0, list(range(0, 40, 3)), 0.2, 0.5, 0.01),
    (1, [5, 0, 17, 33, 8, 21, 39, 12], 0.1, 1.0, 0.05),
]


def _minibatch_loss(
    normalize: str = "each",
    unbiased: bool = True,
    log_probs_from: str = "log_softmax",
    ent_sign: float = -1.0,
    use_vf_coef: bool = True,
    value_term: str = "mse",
) -> Callable[..., torch.Tensor]:
    """Una variante de la pérdida del minilote: las de los errores típicos."""

    def loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
        logits, values = agent(batch.obs[indices])
        log_pi = torch.log_softmax(logits, dim=-1)
        source = log_pi if log_probs_from == "log_softmax" else logits
        log_probs = source.gather(-1, batch.actions[indices][:, None]).squeeze(-1)
        entropy = -(log_pi.exp() * log_pi).sum(-1)
        advantages = batch.advantages[indices]
        if normalize == "each":
            advantages = (advantages - advantages.mean()) / (
                advantages.std(unbiased=unbiased) + 1e-8
            )
        elif normalize == "batch":
            whole = batch.advantages
            advantages = (advantages - whole.mean()) / (whole.std() + 1e-8)
        policy = ppo.clipped_surrogate_loss(
            log_probs, batch.log_probs[indices], advantages, clip_eps
        )
        errors = values - batch.returns[indices]
        value = (errors**2).mean() if value_term == "mse" else errors.abs().mean()
        if value_term == "half":
            value = 0.5 * (errors**2).mean()
        c_v = vf_coef if use_vf_coef else 1.0
        return policy + c_v * value + ent_sign * ent_coef * entropy.mean()

    return loss


MINIBATCH_LOSS_MISTAKES: list[Mistake] = [
    Mistake(
        "advantages_not_normalized",
        _minibatch_loss(normalize="none"),
        "Falta normalizar las ventajas del minilote: (Â − media) / (desviación "
        "típica + 1e-8), con la media y la desviación de ese minilote.",
    ),
    Mistake(
        "biased_std",
        _minibatch_loss(unbiased=False),
        "Normalizaste con la desviación típica sesgada (unbiased=False o "
        "correction=0): el enunciado fija la de torch.std por defecto, la "
        "insesgada, que divide por n − 1.",
    ),
    Mistake(
        "normalized_with_whole_batch",
        _minibatch_loss(normalize="batch"),
        "Normalizaste con la media y la desviación de todo el lote: aquí se "
        "normaliza cada minilote con las suyas.",
    ),
    Mistake(
        "logits_as_log_probs",
        _minibatch_loss(log_probs_from="logits"),
        "Tomaste los logits de la acción como si fueran log π(a|s): antes hay "
        "que pasarlos por log_softmax (si no, no son log-probabilidades).",
    ),
    Mistake(
        "entropy_sign",
        _minibatch_loss(ent_sign=1.0),
        "El premio a la entropía va con signo menos: queremos subir la entropía "
        "(explorar) y el optimizador minimiza. loss = … − c_H·mean(entropía).",
    ),
    Mistake(
        "missing_vf_coef",
        _minibatch_loss(use_vf_coef=False),
        "Falta multiplicar la pérdida del crítico por vf_coef (c_V).",
    ),
    Mistake(
        "absolute_value_error",
        _minibatch_loss(value_term="abs"),
        "La pérdida del crítico es el error cuadrático medio, mean((V − R)²), no "
        "el valor absoluto.",
    ),
    Mistake(
        "half_value_error",
        _minibatch_loss(value_term="half"),
        "Sobra el ½ en la pérdida del crítico: aquí es mean((V − R)²) y el peso "
        "lo pone solo vf_coef.",
    ),
]

_MINIBATCH_USES = {
    "clipped_surrogate_loss": ppo.clipped_surrogate_loss,
    "kl_estimators": ppo.kl_estimators,
}


def _minibatch_args(case: tuple[Any, ...]) -> tuple[Any, ...]:
    seed, indices, *coefs = case
    agent, batch = _moved_problem(seed)
    return (agent, batch, torch.tensor(indices), *coefs)


@exercise(
    MODULE,
    "ppo_minibatch_loss",
    "La pérdida de un minilote: el valor",
    # Con la pérdida recortada de referencia: cada ejercicio se califica solo.
    uses=_MINIBATCH_USES,
)
def check_ppo_minibatch_loss(
    ppo_minibatch_loss: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = MINIBATCH_LOSS_CASES,
) -> None:
    """Comprueba el valor de ``ppo_minibatch_loss(agent, batch, indices, ...)``."""
    cases = list(cases)
    prepared = [_minibatch_args(case) for case in cases]

    def run(function: Callable[..., Any]) -> list[float]:
        """La pérdida de ``function`` en cada caso (la del estudiante, con
        :func:`call`: falla si modifica sus entradas)."""
        if function is not ppo_minibatch_loss:
            return [float(function(*copy.deepcopy(a)).detach()) for a in prepared]
        losses = []
        for args in prepared:
            out = call(function, "ppo_minibatch_loss", *args)
            losses.append(float(_scalar(out, "ppo_minibatch_loss(...)").detach()))
        return losses

    def unexplained(got: list[float], want: list[float]) -> None:
        index = next(
            i for i, (g, w) in enumerate(zip(got, want, strict=True)) if not close(g, w)
        )
        seed, indices, clip_eps, vf_coef, ent_coef = cases[index]
        shown = ", ".join(str(i) for i in indices[:6])
        shown += ", …" if len(indices) > 6 else ""
        fail(
            f"En ppo.tiny_ppo_problem({seed}), con el minilote [{shown}] "
            f"({len(indices)} muestras), ε = {significant(clip_eps)}, "
            f"c_V = {significant(vf_coef)} y c_H = {significant(ent_coef)}, la "
            f"pérdida vale {significant(got[index])} y debía "
            f"valer {significant(want[index])}. Repasa cada pieza: log π_θ de las "
            "acciones que se tomaron, la entropía de π_θ(·|s), las ventajas "
            "normalizadas con la media y la desviación típica del minilote (en "
            "coma flotante), y los pesos c_V y c_H.",
            "wrong_loss",
        )

    # Un error típico reconocido se dice con su mensaje solo: ya dice todo lo
    # que hay que mirar.
    check_procedure(
        ppo_minibatch_loss,
        ppo.ppo_minibatch_loss,
        MINIBATCH_LOSS_MISTAKES,
        run=run,
        same=close,
        same_as_mistake=lambda got, output: close(output, got),
        describe=lambda got, want: "",
        unexplained=unexplained,
    )


def _gradients(function: Callable[..., Any], args: tuple[Any, ...]) -> dict:
    """Los gradientes de ``function(*args)`` respecto a la red (una copia)."""
    agent = copy.deepcopy(args[0])
    out = function(agent, *copy.deepcopy(args[1:]))
    out = _scalar(out, "ppo_minibatch_loss(...)")
    if not out.requires_grad:
        fail(
            "La pérdida no tiene gradiente respecto a la red (¿usaste .detach(), "
            ".item(), NumPy o torch.no_grad()?): el optimizador no podría moverla.",
            "loss_without_gradient",
        )
    out.backward()
    return {
        name: (p.grad if p.grad is not None else torch.zeros_like(p))
        for name, p in agent.named_parameters()
    }


def _without_gradient(gradients: dict, part: str) -> bool:
    """¿Ningún parámetro de ``part`` (``"actor"`` o ``"critic"``) recibe gradiente?"""
    return all(g.abs().max() == 0 for n, g in gradients.items() if n.startswith(part))


#: Los errores típicos que solo se ven en el gradiente (el valor es el bueno).
MINIBATCH_GRAD_MISTAKES: list[Mistake] = [
    Mistake(
        "entropy_detached",
        _minibatch_loss(ent_sign=0.0),  # la pérdida sin el premio a la entropía
        "El gradiente es el de la pérdida sin el premio a la entropía: "
        "¿calculaste la entropía con .detach() o bajo torch.no_grad()? "
        "También tiene que llegar al actor.",
    ),
]


@exercise(
    MODULE,
    "ppo_minibatch_loss",
    "La pérdida de un minilote: el gradiente",
    uses=_MINIBATCH_USES,
)
def check_ppo_minibatch_loss_grad(
    ppo_minibatch_loss: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = MINIBATCH_LOSS_CASES,
) -> None:
    """Comprueba los gradientes de la pérdida respecto al actor y al crítico."""
    for case in cases:
        args = _minibatch_args(case)
        got = _gradients(ppo_minibatch_loss, args)
        want = _gradients(ppo.ppo_minibatch_loss, args)

        if _without_gradient(got, "critic"):
            fail(
                "Los parámetros del crítico no reciben gradiente: ¿calculaste "
                "V(s) con .detach() o bajo torch.no_grad()? El crítico tiene que "
                "aprender.",
                "critic_without_gradient",
            )
        if _without_gradient(got, "actor"):
            fail(
                "Los parámetros del actor no reciben gradiente: ¿calculaste "
                "log π(a|s) con .detach() o bajo torch.no_grad()?",
                "actor_without_gradient",
            )
        for mistake in MINIBATCH_GRAD_MISTAKES:
            wrong = _gradients(mistake.variant, args)
            # Con c_H = 0 (case[-1]), la entropía no cambia el gradiente.
            if all(close(got[n], wrong[n], atol=1e-6) for n in want) and case[-1]:
                fail(mistake.message, mistake.id)
        compare_parameters(
            got,
            want,
            what="el gradiente de la pérdida",
            mistake="minibatch_wrong_gradient",
        )


# ---------------------------------------------------------------------------
# Ejercicio 4 · la fase de actualización
# ---------------------------------------------------------------------------

#: Los hiperparámetros de ``ppo_update`` en las comprobaciones (salvo lo que cada
#: caso cambie): sin recorte del gradiente que actúe y sin parada temprana.
UPDATE_SETTINGS: dict[str, Any] = dict(
    n_epochs=4,
    minibatch_size=16,
    clip_eps=0.2,
    vf_coef=0.5,
    ent_coef=0.01,
    max_grad_norm=100.0,
    target_kl=None,
)
#: Cada caso: ``(semilla del problema, semilla del barajado, tasa, cambios)``.
UPDATE_CASES = [(0, 0, 0.01, {})]
UPDATE_CLIP_CASES = [(0, 0, 0.01, {"max_grad_norm": 0.5})]
UPDATE_KL_CASES = [
    (0, 0, 0.01, {"n_epochs": 6, "target_kl": 0.004}),
    # Aquí la KL con los argumentos cambiados, KL(π_θ ‖ π_θold), pasa de 0,02
    # una época antes que la buena (4 épocas y no 5), y k1 no llega nunca: los
    # dos errores se ven sin las pruebas ocultas, cada uno con su mensaje.
    (3, 0, 0.01, {"n_epochs": 8, "target_kl": 0.02}),
]


def _update_variant(
    shuffle: str = "each",
    drop_last: bool = False,
    strided: bool = False,
    step_each: bool = True,
    zero_grad: bool = True,
    clip: str = "all",
    kl: str = "batch",
    count: str = "done",
) -> Callable[..., int]:
    """Una variante de la fase de actualización: las de los errores típicos."""

    def update(agent, optimizer, batch, generator, **settings):
        size = settings["minibatch_size"]
        n = len(batch)
        epochs, fixed = 0, torch.randperm(n, generator=generator)
        for epoch in range(settings["n_epochs"]):
            if shuffle == "each":
                order = fixed if epoch == 0 else torch.randperm(n, generator=generator)
            else:
                order = fixed if shuffle == "once" else torch.arange(n)
            chunks = list(torch.split(order, size))
            if drop_last and len(chunks[-1]) < size:
                chunks = chunks[:-1]
            if strided:
                chunks = [order[k :: len(chunks)] for k in range(len(chunks))]
            if not step_each:
                optimizer.zero_grad()
            stop = False
            for indices in chunks:
                loss = ppo.ppo_minibatch_loss(
                    agent,
                    batch,
                    indices,
                    settings["clip_eps"],
                    settings["vf_coef"],
                    settings["ent_coef"],
                )
                if zero_grad and step_each:
                    optimizer.zero_grad()
                loss.backward()
                if not step_each:
                    continue
                if clip == "all":
                    torch.nn.utils.clip_grad_norm_(
                        agent.parameters(), settings["max_grad_norm"]
                    )
                elif clip == "actor":
                    torch.nn.utils.clip_grad_norm_(
                        agent.actor.parameters(), settings["max_grad_norm"]
                    )
                optimizer.step()
                if kl == "midway" and settings["target_kl"] is not None:
                    stop = ppo.batch_kl(agent, batch) > settings["target_kl"]
                    if stop:
                        break
            if not step_each:
                torch.nn.utils.clip_grad_norm_(
                    agent.parameters(), settings["max_grad_norm"]
                )
                optimizer.step()
            epochs += 1
            target = settings["target_kl"]
            if target is None:
                continue
            if kl in ("batch", "midway"):
                stop = stop or ppo.batch_kl(agent, batch) > target
            elif kl == "k1":
                with torch.no_grad():
                    logits, _ = agent(batch.obs)
                    log_pi = torch.log_softmax(logits, dim=-1)
                    new = log_pi.gather(-1, batch.actions[:, None]).squeeze(-1)
                    stop = float(ppo.kl_estimators(batch.log_probs, new)[0]) > target
            elif kl == "reversed":
                with torch.no_grad():
                    logits, _ = agent(batch.obs)
                    log_pi = torch.log_softmax(logits, dim=-1)
                    new = log_pi.gather(-1, batch.actions[:, None]).squeeze(-1)
                    stop = float(ppo.kl_estimators(new, batch.log_probs)[1]) > target
            if stop:
                if count == "before":
                    epochs -= 1
                break
        return settings["n_epochs"] if count == "all" else epochs

    return update


UPDATE_MISTAKES: list[Mistake] = [
    Mistake(
        "shuffled_once",
        _update_variant(shuffle="once"),
        "Barajaste una sola vez y repetiste ese orden en todas las épocas: cada "
        "época empieza con una permutación nueva del lote (y así el generador "
        "se usa una vez por época).",
    ),
    Mistake(
        "not_shuffled",
        _update_variant(shuffle="none"),
        "Recorriste el lote en orden, sin barajar: cada época empieza con una "
        "permutación nueva del lote, con el generador que recibes.",
    ),
    Mistake(
        "dropped_last_minibatch",
        _update_variant(drop_last=True),
        "Te saltaste el último minilote de cada época, el más corto: cada "
        "muestra se usa una vez por época, aunque el lote no sea múltiplo del "
        "tamaño del minilote.",
    ),
    Mistake(
        "strided_minibatches",
        _update_variant(strided=True),
        "Tus minilotes salen de la permutación a saltos (order[k::n]): cada "
        "minilote es un trozo seguido de la permutación, order[0:m], "
        "order[m:2m]…, con m = minibatch_size, y en ese orden.",
    ),
    Mistake(
        "one_step_per_epoch",
        _update_variant(step_each=False),
        "Diste un solo paso del optimizador por época, con los gradientes de "
        "todos los minilotes sumados: PPO da un paso por minilote (zero_grad, "
        "backward, recorte y step dentro del bucle de los minilotes).",
    ),
    Mistake(
        "missing_zero_grad",
        _update_variant(zero_grad=False),
        "Falta poner los gradientes a cero antes de cada backward: sin "
        "optimizer.zero_grad(), PyTorch los suma a los del minilote anterior.",
    ),
]

UPDATE_CLIP_MISTAKES: list[Mistake] = [
    Mistake(
        "gradient_not_clipped",
        _update_variant(clip="none"),
        "Los gradientes no se recortan: antes de cada paso del optimizador, la "
        "norma del gradiente de todos los parámetros (actor y crítico juntos) "
        "se limita a max_grad_norm. Si recortas después de optimizer.step(), ya "
        "no sirve de nada.",
    ),
    Mistake(
        "clipped_actor_only",
        _update_variant(clip="actor"),
        "Recortaste solo el gradiente del actor: la norma que se limita es la de "
        "todos los parámetros juntos, agent.parameters().",
    ),
]

UPDATE_KL_MISTAKES: list[Mistake] = [
    Mistake(
        "kl_with_k1",
        _update_variant(kl="k1"),
        "Mediste la KL con k1: la parada temprana usa k3, que nunca es negativo.",
    ),
    Mistake(
        "kl_reversed",
        _update_variant(kl="reversed"),
        "Mediste la KL con los argumentos cambiados: las muestras vienen de la "
        "política vieja, así que es KL(π_θold ‖ π_θ), "
        "kl_estimators(batch.log_probs, log π_θ).",
    ),
    Mistake(
        "stopped_midway",
        _update_variant(kl="midway"),
        "Cortaste a mitad de una época: la KL se mide al acabar cada época, y "
        "las épocas se hacen enteras.",
    ),
    Mistake(
        "epoch_not_counted",
        _update_variant(count="before"),
        "Paraste bien, pero contaste mal: la época tras la que la KL pasó de "
        "target_kl se hizo entera y cuenta.",
    ),
    Mistake(
        "returned_n_epochs",
        _update_variant(count="all"),
        "Devuelves n_epochs aunque la KL haya cortado: devuelve cuántas épocas "
        "se hicieron de verdad.",
    ),
]


def _run_update(
    function: Callable[..., Any], case: tuple[Any, ...], name: str | None = None
) -> tuple[dict[str, torch.Tensor], Any]:
    """Ejecuta una fase de actualización en el problema diminuto del caso.

    Devuelve los parámetros que quedan y lo que devolvió la función. Con
    ``name`` (la función del estudiante), falla si modificó el lote.
    """
    problem_seed, shuffle_seed, lr, changes = case
    agent, batch = ppo.tiny_ppo_problem(problem_seed)
    optimizer = torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)
    generator = torch.Generator().manual_seed(shuffle_seed)
    settings = {**UPDATE_SETTINGS, **changes}
    before = copy.deepcopy(batch)
    with torch.random.fork_rng():
        torch.manual_seed(1234)
        result = function(agent, optimizer, batch, generator, **settings)
    if name is not None and _differs(before, batch):
        fail(
            f"{name} modificó el lote (batch): al volver, sus tensores ya no eran "
            "los que le pasamos (¿normalizaste las ventajas en su sitio, con -=, "
            "/= o batch.advantages = ...?). El lote se reutiliza en cada época y "
            "en cada minilote: calcula sobre copias.",
            "modified_batch",
        )
    params = {k: v.detach().clone() for k, v in agent.state_dict().items()}
    return params, result


def _same_parameters(a: dict, b: dict) -> bool:
    return all(
        a[k].shape == b[k].shape and torch.allclose(a[k], b[k], atol=1e-5, rtol=1e-4)
        for k in b
    )


def _which_net(got: dict, want: dict) -> str:
    """Qué red difiere, como pista de qué etapa mirar."""
    differs = {
        part
        for k in want
        if not torch.allclose(got[k], want[k], atol=1e-5, rtol=1e-4)
        for part in ("actor", "critic")
        if k.startswith(part)
    }
    if differs == {"critic"}:
        return (
            " Solo difiere el crítico: mira su pérdida (y su peso c_V) en cada "
            "minilote."
        )
    if differs == {"actor"}:
        return (
            " Solo difiere el actor: mira la parte de la política (cociente, "
            "recorte, ventajas normalizadas) y la entropía."
        )
    return (
        " Difieren el actor y el crítico: mira primero el orden de los minilotes "
        "(una permutación nueva por época, con el generador que recibes) y los "
        "pasos del optimizador (zero_grad, backward, recorte, step)."
    )


def _check_update(
    ppo_update: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]],
    mistakes: list[Mistake],
    what: str,
    check_epochs: bool = False,
) -> None:
    """Ejecuta ``ppo_update`` en cada caso y compara con la referencia: los
    parámetros que quedan y, con ``check_epochs``, las épocas que devuelve."""
    for case in cases:
        _check_update_case(ppo_update, case, mistakes, what, check_epochs)


def _check_update_case(
    ppo_update: Callable[..., Any],
    case: tuple[Any, ...],
    mistakes: list[Mistake],
    what: str,
    check_epochs: bool,
) -> None:
    """Un caso de :func:`_check_update`."""

    def run(function: Callable[..., Any]) -> tuple[dict[str, torch.Tensor], Any]:
        if function is not ppo_update:
            return _run_update(function, case)
        params, epochs = _run_update(function, case, "ppo_update")
        if check_epochs:
            if isinstance(epochs, torch.Tensor) and epochs.numel() == 1:
                epochs = epochs.item()
            if isinstance(epochs, bool) or not isinstance(epochs, numbers.Integral):
                fail(
                    "ppo_update debe devolver cuántas épocas hizo, un entero; "
                    f"devolvió {epochs!r}.",
                    "epochs_not_an_integer",
                )
        return params, epochs

    def same(got: tuple[dict, Any], want: tuple[dict, Any]) -> bool:
        epochs_match = not check_epochs or got[1] == want[1]
        return epochs_match and _same_parameters(got[0], want[0])

    def unexplained(got: tuple[dict, Any], want: tuple[dict, Any]) -> bool:
        if check_epochs and got[1] != want[1]:
            fail(
                f"ppo_update hizo {got[1]} épocas y debían ser {want[1]} de "
                f"{case[3].get('n_epochs')}: al acabar cada época se mide k3 "
                "entre los log π_θold del lote y la política actual, sobre "
                "todo el lote y sin gradiente, y si pasa de target_kl no se "
                "hacen más épocas. (Si la primera celda de prueba tampoco "
                "pasa, arregla antes eso: con otras actualizaciones, la KL "
                "también es otra.)",
                "wrong_epoch_count",
            )
        try:
            compare_parameters(got[0], want[0], what=what)
        except CheckError as error:
            fail(str(error) + _which_net(got[0], want[0]), "wrong_parameters")
        return True  # iguales con la tolerancia de compare_parameters

    # Un error típico reconocido se dice con su mensaje solo: ya dice todo lo
    # que hay que mirar.
    check_procedure(
        ppo_update,
        ppo.ppo_update,
        mistakes,
        run=run,
        same=same,
        describe=lambda got, want: "",
        unexplained=unexplained,
    )


_UPDATE_USES = {
    "ppo_minibatch_loss": ppo.ppo_minibatch_loss,
    "clipped_surrogate_loss": ppo.clipped_surrogate_loss,
    "kl_estimators": ppo.kl_estimators,
}


@exercise(
    MODULE,
    "ppo_update",
    "La fase de actualización: los parámetros",
    # Con las piezas de referencia: cada ejercicio se califica por sí solo.
    uses=_UPDATE_USES,
)
def check_ppo_update(
    ppo_update: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = UPDATE_CASES,
) -> None:
    """Los parámetros tras ``ppo_update``, sin recorte que actúe ni parada."""
    _check_update(
        ppo_update, cases, UPDATE_MISTAKES, "la red tras la fase de actualización"
    )


@exercise(
    MODULE,
    "ppo_update",
    "La fase de actualización: el recorte del gradiente",
    uses=_UPDATE_USES,
)
def check_ppo_update_clip(
    ppo_update: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = UPDATE_CLIP_CASES,
) -> None:
    """Los parámetros tras ``ppo_update`` con un recorte del gradiente que actúa."""
    _check_update(
        ppo_update,
        cases,
        UPDATE_CLIP_MISTAKES + UPDATE_MISTAKES,
        "la red tras la fase de actualización, con el gradiente recortado",
    )


@exercise(
    MODULE,
    "ppo_update",
    "La fase de actualización: la parada temprana por la KL",
    uses=_UPDATE_USES,
)
def check_ppo_update_kl(
    ppo_update: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = UPDATE_KL_CASES,
) -> None:
    """Las épocas que hace ``ppo_update`` con ``target_kl`` y los parámetros."""
    _check_update(
        ppo_update,
        cases,
        UPDATE_KL_MISTAKES + UPDATE_MISTAKES,
        "la red tras la fase de actualización, con parada temprana",
        check_epochs=True,
    )


# ---------------------------------------------------------------------------
# Ejercicios 5–8 · el cuestionario (helpers/checks/quiz.py)
# ---------------------------------------------------------------------------

QUIZ_KINDS: dict[int, str] = {
    1: "number",
    2: "statements",
    3: "number",
    4: "statements",
}
"""El tipo de respuesta de cada pregunta: un número o cuatro afirmaciones."""

check_quiz_answer = numbered_quiz(MODULE, QUIZ_KINDS)
