"""Comprobaciones del módulo 06 · PPO."""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch

from helpers import ppo
from helpers.checks import as_array, check_cases, close, exercise, fail

MODULE = "06_ppo"


def _t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _scalar(out: Any, call: str) -> torch.Tensor:
    """El resultado como tensor escalar, o un diagnóstico si no lo es."""
    if not isinstance(out, torch.Tensor):
        fail(
            f"{call} debe devolver un tensor de PyTorch (para poder llamar a "
            f"loss.backward()); devolvió {type(out).__name__}. No uses .item(), "
            "float() ni NumPy."
        )
    if out.numel() != 1:
        fail(
            f"{call} debe devolver un escalar y devolvió algo de forma "
            f"{tuple(out.shape)}. ¿Promediaste sobre un solo eje (p. ej. "
            ".mean(dim=0))? Promedia sobre todos los elementos con .mean()."
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
            ".detach(), .item(), NumPy o un tensor nuevo?). PPO necesita derivarlo."
        )
    out.sum().backward()
    grad_old = args[old_index].grad
    if grad_old is not None and grad_old.abs().max() > 0:
        fail(
            "El gradiente llega a old_log_probs: la política vieja es un punto de "
            "referencia fijo, usa old_log_probs.detach(). (Si los log π viejos "
            "arrastran gradiente, el cociente vale 1 con derivada nula respecto a θ "
            "y el recorte no hace nada.)"
        )
    return args[0].grad


# ---------------------------------------------------------------------------
# Ejercicio 1 · el cociente de probabilidades
# ---------------------------------------------------------------------------

# El último caso es el de una respuesta larga: log π ≈ −1000 (500 tokens a −2 cada
# uno). En float64, exp(−1000) da exactamente 0: solo la resta en escala
# logarítmica da el cociente (2, 1 y 1/2).
RATIO_CASES = [
    (_t([-0.5, -1.0, -2.0]), _t([-0.5, -0.7, -2.5])),
    (_t([-0.1, -3.0, -0.6931]), _t([-0.2231, -2.0, -0.6931])),
    (_t([[-1.0, -0.3], [-0.05, -4.0]]), _t([[-1.2, -0.3], [-0.6, -3.5]])),
    (
        _t([-1000.0, -1000.0, -1000.0]),
        _t([-1000.0 - math.log(2), -1000.0, -1000.0 + math.log(2)]),
    ),
]

RATIO_MISTAKES = [
    (
        lambda lp, old: torch.exp(old - lp),
        "El cociente está invertido: es π_θ / π_θold = exp(log_probs − "
        "old_log_probs), la política nueva en el numerador.",
    ),
    (
        lambda lp, old: torch.exp(lp) / torch.exp(old),
        "Calculaste exp(log_probs) / exp(old_log_probs): es el cociente correcto "
        "en teoría, pero con log-probabilidades muy negativas (una respuesta "
        "entera, log π ≈ −1000) las dos exponenciales dan 0 y el resultado es "
        "0/0 = nan. Resta primero en escala logarítmica y exponencia una sola "
        "vez: exp(log_probs − old_log_probs).",
    ),
    (
        lambda lp, old: lp - old,
        "Falta la exponencial: log_probs − old_log_probs es log r_t; el cociente "
        "es r_t = exp(log_probs − old_log_probs).",
    ),
    (
        lambda lp, old: lp / old,
        "Dividiste las log-probabilidades: log a / log b no es log(a/b). Resta en "
        "escala logarítmica y luego exponencia: exp(log_probs − old_log_probs).",
    ),
    (
        lambda lp, old: torch.exp(lp) - torch.exp(old),
        "Restaste probabilidades: r_t es un cociente, π_θ / π_θold.",
    ),
]


@exercise(MODULE, "probability_ratio", "El cociente de probabilidades r_t")
def check_probability_ratio(
    probability_ratio: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = RATIO_CASES,
) -> None:
    """Comprueba ``probability_ratio(log_probs, old_log_probs)`` y su gradiente."""
    cases = list(cases)
    check_cases(
        probability_ratio,
        "probability_ratio",
        cases,
        ppo.probability_ratio,
        RATIO_MISTAKES,
    )
    for case in cases:
        grad = _no_gradient_to_old(probability_ratio, case, 1, "probability_ratio")
        want = torch.exp(case[0] - case[1])
        if grad is None or not close(grad, want, atol=1e-6):
            fail(
                "El gradiente del cociente respecto a log_probs debería ser el "
                "propio cociente (d exp(x)/dx = exp(x))."
            )


# ---------------------------------------------------------------------------
# Ejercicio 2 · la pérdida recortada
# ---------------------------------------------------------------------------

# Cocientes dentro y fuera de [1 − ε, 1 + ε] con ventajas de los dos signos.
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
]


def _surrogate(combine: Callable, reduce: str = "mean", sign: float = -1.0):
    def loss(lp, old, adv, eps):
        ratio = torch.exp(lp - old.detach())
        terms = combine(ratio, adv, eps)
        return sign * (terms.mean() if reduce == "mean" else terms.sum())

    return loss


def _clip(r, eps):
    return torch.clamp(r, 1 - eps, 1 + eps)


CLIP_MISTAKES = [
    (
        _surrogate(lambda r, a, e: torch.max(r * a, _clip(r, e) * a)),
        "Usaste max en lugar de min: el objetivo de PPO es la cota pesimista, "
        "min(r·A, clip(r)·A). Con max, el cociente nunca deja de empujar.",
    ),
    (
        _surrogate(lambda r, a, e: _clip(r, e) * a),
        "Recortaste sin el min: solo clip(r)·A. Fuera del intervalo el gradiente "
        "se anula también cuando el paso estaba «deshaciendo» un error (p. ej. "
        "A > 0 y r < 1 − ε). Toma min(r·A, clip(r)·A).",
    ),
    (
        _surrogate(lambda r, a, e: torch.clamp(r, max=1 + e) * a),
        "Solo recortaste por arriba (min(r, 1 + ε)·A): con ventajas negativas el "
        "min queda del lado equivocado. Usa min(r·A, clip(r, 1 − ε, 1 + ε)·A), "
        "que funciona para los dos signos de A.",
    ),
    (
        _surrogate(lambda r, a, e: r * a),
        "No hay recorte: −mean(r·A) es el gradiente de política sin freno. Falta "
        "el término clip(r, 1 − ε, 1 + ε)·A y el min.",
    ),
    (
        _surrogate(lambda r, a, e: torch.min(r * a, _clip(r, e) * a), sign=1.0),
        "Falta el signo menos: L^CLIP se maximiza y el optimizador minimiza; la "
        "pérdida es −mean(min(...)).",
    ),
    (
        _surrogate(lambda r, a, e: torch.min(r * a, _clip(r, e) * a), reduce="sum"),
        "Sumaste en lugar de promediar: la pérdida es una media sobre las "
        "muestras (si no, su escala depende del tamaño del lote).",
    ),
    (
        lambda lp, old, adv, eps: (
            -torch.min(
                torch.exp(old - lp) * adv, _clip(torch.exp(old - lp), eps) * adv
            ).mean()
        ),
        "El cociente está invertido: r = exp(log_probs − old_log_probs).",
    ),
]


@exercise(
    MODULE,
    "clipped_surrogate_loss",
    "La pérdida recortada de PPO",
    # Con el cociente de referencia: cada ejercicio se califica por sí solo.
    uses={"probability_ratio": ppo.probability_ratio},
)
def check_clipped_surrogate_loss(
    clipped_surrogate_loss: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = CLIP_CASES,
) -> None:
    """Comprueba ``clipped_surrogate_loss(log_probs, old_log_probs, advantages, ε)``."""
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
    for case in cases:
        grad = _no_gradient_to_old(
            clipped_surrogate_loss, case, 1, "clipped_surrogate_loss"
        )
        log_probs = case[0].clone().requires_grad_(True)
        ppo.clipped_surrogate_loss(log_probs, *case[1:]).backward()
        if grad is None or not close(grad, log_probs.grad, atol=1e-6):
            fail(
                "El valor es correcto pero el gradiente no: fuera de [1 − ε, 1 + ε], "
                "en el lado que recorta, la derivada debe ser exactamente cero."
            )


# ---------------------------------------------------------------------------
# Ejercicio 3 · los estimadores de la KL
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


KL_MISTAKES = [
    (
        _kl(lambda lr: lr, lambda lr: torch.exp(lr) - 1 - lr),
        "k1 tiene el signo cambiado: con log ρ = log p − log q, k1 = −log ρ = "
        "log q − log p (log_probs − other_log_probs).",
    ),
    (
        _kl(lambda lr: lr, lambda lr: torch.exp(-lr) - 1 + lr),
        "Invertiste ρ: es ρ = p(x)/q(x), log ρ = other_log_probs − log_probs (las "
        "muestras vienen de q, la primera distribución).",
    ),
    (
        _kl(lambda lr: -lr, lambda lr: torch.exp(lr) - lr),
        "A k3 le falta el −1: k3 = (ρ − 1) − log ρ. Sin él no es insesgado (y no "
        "vale 0 cuando las dos distribuciones coinciden).",
    ),
    (
        _kl(lambda lr: -lr, lambda lr: 0.5 * lr**2),
        "Eso es k2 = ½·(log ρ)², no k3: k3 = (ρ − 1) − log ρ, con ρ = exp(log ρ).",
    ),
    (
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
                f"{type(out).__name__}."
            )
        for name, value in zip(("k1", "k3"), out, strict=True):
            shape = as_array(value, name).shape
            if shape not in ((), (1,)):
                fail(
                    f"{name} debe ser un escalar (la media sobre todas las "
                    f"muestras), pero tiene forma {shape}. ¿Olvidaste el .mean() o "
                    "promediaste sobre un solo eje?"
                )
    check_cases(
        _as_pair(kl_estimators),
        "kl_estimators",
        cases,
        _as_pair(ppo.kl_estimators),
        [(_as_pair(m), message) for m, message in KL_MISTAKES],
    )


# ---------------------------------------------------------------------------
# Ejercicio 4 · minilotes barajados durante varias épocas
# ---------------------------------------------------------------------------

MINIBATCH_CASES = [(10, 4, 3), (8, 4, 2), (6, 8, 2)]


def _as_lists(out: Any, call: str) -> list[list[int]]:
    try:
        batches = [as_array(mb, "Un minilote").reshape(-1) for mb in out]
    except TypeError:
        fail(f"{call} debe devolver una lista de minilotes (tensores de índices).")
    for mb in batches:
        if mb.size and not np.all(mb == np.round(mb)):
            fail(f"{call}: los minilotes deben contener índices enteros.")
    return [mb.astype(int).tolist() for mb in batches]


@exercise(MODULE, "minibatch_indices", "Minilotes barajados durante varias épocas")
def check_minibatch_indices(
    minibatch_indices: Callable[..., Any],
    cases: Iterable[tuple[int, int, int]] = MINIBATCH_CASES,
    seed: int = 0,
) -> None:
    """Comprueba ``minibatch_indices(batch_size, minibatch_size, n_epochs, g)``."""
    for batch_size, minibatch_size, n_epochs in cases:
        call = f"minibatch_indices({batch_size}, {minibatch_size}, {n_epochs}, g)"
        generator = torch.Generator().manual_seed(seed)
        batches = _as_lists(
            minibatch_indices(batch_size, minibatch_size, n_epochs, generator), call
        )
        per_epoch = math.ceil(batch_size / minibatch_size)
        if len(batches) != n_epochs * per_epoch:
            if len(batches) == per_epoch:
                fail(
                    f"{call} devolvió {len(batches)} minilotes: los de una sola "
                    f"época. Hacen falta {n_epochs} épocas × {per_epoch} minilotes."
                )
            if len(batches) == n_epochs * (batch_size // minibatch_size):
                fail(
                    f"{call} devolvió {len(batches)} minilotes: ¿perdiste el último "
                    "minilote de cada época, el más corto? Cada muestra se usa una "
                    "vez por época."
                )
            fail(
                f"{call} devolvió {len(batches)} minilotes y debían ser "
                f"{n_epochs} × ceil({batch_size}/{minibatch_size}) = "
                f"{n_epochs * per_epoch}."
            )
        epochs = [
            sum(batches[e * per_epoch : (e + 1) * per_epoch], [])
            for e in range(n_epochs)
        ]
        sizes = [len(mb) for mb in batches[:per_epoch]]
        expected_sizes = [minibatch_size] * (per_epoch - 1)
        expected_sizes.append(batch_size - minibatch_size * (per_epoch - 1))
        for epoch in epochs:
            if sorted(epoch) != list(range(batch_size)):
                if len(set(epoch)) < len(epoch):
                    fail(
                        f"{call}: en una época hay índices repetidos y otros que "
                        "faltan. ¿Muestreaste con reemplazo (torch.randint)? Usa una "
                        "permutación (torch.randperm): cada muestra una vez por época."
                    )
                fail(
                    f"{call}: cada época debe recorrer todos los índices 0 … "
                    f"{batch_size - 1} una vez; una época tiene {sorted(epoch)}."
                )
        if sizes != expected_sizes:
            fail(
                f"{call}: los minilotes de una época deberían medir {expected_sizes} "
                f"y miden {sizes}."
            )
        if batch_size > 2 and all(e == list(range(batch_size)) for e in epochs):
            fail(
                f"{call}: los índices salen en orden, sin barajar. Baraja cada época "
                "con torch.randperm(batch_size, generator=generator)."
            )
        if n_epochs > 1 and batch_size > 3 and all(e == epochs[0] for e in epochs):
            fail(
                f"{call}: todas las épocas usan el mismo orden. Barajaste una sola "
                "vez: haz una permutación nueva en cada época."
            )
        again = _as_lists(
            minibatch_indices(
                batch_size,
                minibatch_size,
                n_epochs,
                torch.Generator().manual_seed(seed),
            ),
            call,
        )
        if again != batches:
            fail(
                f"{call}: con el mismo generador (misma semilla) el resultado cambió. "
                "Usa el generator que recibes para barajar (randperm(..., "
                "generator=generator)), no la semilla global."
            )


# ---------------------------------------------------------------------------
# Ejercicio 5 · la pérdida total
# ---------------------------------------------------------------------------

_LP = _t([-0.3, -1.1, -0.7, -2.0, -0.05])
_OLD = _t([-0.5, -0.8, -0.7, -2.4, -0.3])
PPO_LOSS_CASES = [
    (
        _LP,
        _OLD,
        _t([1.0, -0.5, 0.3, 2.0, -1.2]),
        _t([10.0, 8.0, 12.0, 3.0, 5.0]),
        _t([11.0, 7.5, 12.5, 5.0, 4.0]),
        _t([0.69, 0.5, 0.6, 0.2, 0.1]),
        0.2,
        0.5,
        0.01,
    ),
    (
        _LP,
        _OLD,
        _t([-1.0, 0.5, 1.3, -2.0, 0.4]),
        _t([0.5, -0.3, 0.0, 1.0, 2.0]),
        _t([0.0, 0.2, -0.4, 1.5, 1.0]),
        _t([0.3, 0.65, 0.1, 0.4, 0.69]),
        0.1,
        1.0,
        0.05,
    ),
    (
        _t([-0.2, -0.9, -1.5]),
        _t([-0.2, -0.5, -1.9]),
        _t([0.7, -0.8, 1.1]),
        _t([2.0, 2.5, 1.0]),
        _t([3.0, 2.0, 1.0]),
        _t([0.6, 0.6, 0.2]),
        0.2,
        0.25,
        0.1,
    ),
]


def _total(
    value_term: Callable = lambda v, r: ((v - r) ** 2).mean(),
    ent_sign: float = -1.0,
    use_vf_coef: bool = True,
    policy_sign: float = 1.0,
) -> Callable:
    def loss(lp, old, adv, values, returns, entropy, eps, vf_coef, ent_coef):
        policy = ppo.clipped_surrogate_loss(lp, old, adv, eps)
        value = value_term(values, returns)
        c_v = vf_coef if use_vf_coef else 1.0
        return policy_sign * policy + c_v * value + ent_sign * ent_coef * entropy.mean()

    return loss


PPO_LOSS_MISTAKES = [
    (
        _total(ent_sign=1.0),
        "El premio a la entropía va con signo menos: queremos **subir** la entropía "
        "(explorar), y el optimizador minimiza. loss = … − c_e·mean(entropy).",
    ),
    (
        _total(use_vf_coef=False),
        "Falta multiplicar la pérdida del crítico por vf_coef (c_v).",
    ),
    (
        _total(value_term=lambda v, r: (v - r).abs().mean()),
        "La pérdida del crítico es el error cuadrático medio, mean((V − R)²), no "
        "el valor absoluto.",
    ),
    (
        _total(value_term=lambda v, r: (v - r).mean() ** 2),
        "Elevaste al cuadrado la media de los errores: es la media de los "
        "cuadrados, mean((V − R)²). Con errores de signos distintos, la tuya casi "
        "se anula.",
    ),
    (
        _total(policy_sign=-1.0),
        "El término de la política tiene el signo cambiado: la pérdida recortada "
        "ya es −L^CLIP; súmala tal cual.",
    ),
    (
        _total(value_term=lambda v, r: 0.5 * ((v - r) ** 2).mean()),
        "Sobra el ½ en la pérdida del crítico: aquí es mean((V − R)²) y el peso "
        "lo pone solo vf_coef.",
    ),
]


@exercise(
    MODULE,
    "ppo_loss",
    "La pérdida total de PPO",
    # Con las piezas de referencia: cada ejercicio se califica por sí solo.
    uses={
        "probability_ratio": ppo.probability_ratio,
        "clipped_surrogate_loss": ppo.clipped_surrogate_loss,
        "kl_estimators": ppo.kl_estimators,
    },
)
def check_ppo_loss(
    ppo_loss: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = PPO_LOSS_CASES,
) -> None:
    """Comprueba ``ppo_loss(...)`` (valor y gradientes)."""
    cases = list(cases)
    for case in cases:
        _scalar(ppo_loss(*case), "ppo_loss(...)")
    check_cases(ppo_loss, "ppo_loss", cases, ppo.ppo_loss, PPO_LOSS_MISTAKES)
    for case in cases:
        values = case[3].clone().requires_grad_(True)
        returns = case[4].clone().requires_grad_(True)
        args = list(case)
        args[3], args[4] = values, returns
        _no_gradient_to_old(ppo_loss, tuple(args), 1, "ppo_loss")
        if returns.grad is not None and returns.grad.abs().max() > 0:
            fail(
                "El gradiente llega a returns: los objetivos del crítico son "
                "constantes (usa returns.detach()); si no, el crítico «mueve la "
                "diana» en lugar de acercarse a ella."
            )
        want = 2 * case[7] * (case[3] - case[4]) / case[3].numel()
        if values.grad is None or not close(values.grad, want, atol=1e-6):
            fail(
                "El gradiente respecto a values no es el de vf_coef·mean((V − R)²): "
                "¿V lleva .detach()? El crítico tiene que aprender."
            )


# ---------------------------------------------------------------------------
# Ejercicios 6–9 · el cuestionario
# ---------------------------------------------------------------------------
#
# Estas comprobaciones miran solo la FORMA de la respuesta: un número finito, o
# las cuatro afirmaciones marcadas con True o False. No saben cuál es la buena, y
# por eso no pueden revelarla: la clave y su explicación están solo en las pruebas
# ocultas del cuaderno de soluciones, que no se publican. Así, probar respuestas
# contra esta comprobación no enseña nada; la explicación llega con la
# retroalimentación de la calificación.

QUIZ_KINDS: dict[int, str] = {
    1: "number",
    2: "statements",
    3: "number",
    4: "statements",
}
"""El tipo de respuesta de cada pregunta: un número o cuatro afirmaciones."""

STATEMENT_KEYS = ("a", "b", "c", "d")
"""Las claves del diccionario de una pregunta de afirmaciones."""


def quiz_number(answer: Any, number: int) -> float:
    """La respuesta numérica ``answer`` de la pregunta ``number`` como ``float``.

    Acepta un número de Python o de NumPy, o un tensor o array de un solo
    elemento. Falla (con :func:`fail`) si no hay respuesta, si es un texto, un
    booleano o varios números, o si no es finito. No dice nada de si es correcto.
    """
    name = f"answer_{number}"
    if answer is None or answer is Ellipsis:
        fail(
            f"Todavía no has respondido la pregunta {number}: asigna un número a "
            f"{name}, por ejemplo {name} = -1.25."
        )
    if isinstance(answer, str):
        fail(
            f"La respuesta de la pregunta {number} es un número, no un texto: "
            "escríbelo sin comillas y con punto decimal, como en Python (-1.25, "
            f'no "−1,25"). Recibí {answer!r}.'
        )
    if isinstance(answer, torch.Tensor | np.ndarray):
        size = answer.numel() if isinstance(answer, torch.Tensor) else answer.size
        if size != 1:
            fail(
                f"La respuesta de la pregunta {number} es un solo número, y "
                f"{name} tiene {size} elementos."
            )
        answer = answer.item()
    if isinstance(answer, np.generic):
        answer = answer.item()
    if isinstance(answer, bool):
        fail(
            f"La pregunta {number} pide un número, no True o False. Recibí {answer!r}."
        )
    if not isinstance(answer, numbers.Real):
        fail(
            f"La respuesta de la pregunta {number} debe ser un número (int o float); "
            f"{name} es {type(answer).__name__}: {answer!r}."
        )
    value = float(answer)
    if not math.isfinite(value):
        fail(
            f"La respuesta de la pregunta {number} debe ser un número finito; "
            f"recibí {value}. ¿Dividiste por cero en algún paso?"
        )
    return value


def quiz_statements(answer: Any, number: int) -> dict[str, bool]:
    """Las cuatro afirmaciones marcadas de la pregunta ``number``, como ``bool``.

    La respuesta es un diccionario con las claves ``"a"`` a ``"d"`` y un
    ``True`` (verdadera) o ``False`` (falsa) en cada una. Falla (con
    :func:`fail`) si falta alguna clave, sobra alguna o una afirmación está sin
    marcar. No dice nada de si las marcas son correctas.
    """
    name = f"answer_{number}"
    example = '{"a": True, "b": False, ...}'
    if answer is None or answer is Ellipsis:
        fail(
            f"Todavía no has respondido la pregunta {number}: {name} es un "
            f"diccionario con las cuatro afirmaciones, como {example}."
        )
    if not isinstance(answer, dict):
        fail(
            f"La respuesta de la pregunta {number} es un diccionario con las "
            f"claves a, b, c y d, como {example}; {name} es "
            f"{type(answer).__name__}."
        )
    missing = [key for key in STATEMENT_KEYS if key not in answer]
    extra = [repr(key) for key in answer if key not in STATEMENT_KEYS]
    if missing or extra:
        parts = []
        if missing:
            parts.append("faltan " + ", ".join(missing))
        if extra:
            parts.append("sobran " + ", ".join(extra))
        fail(
            f"{name} debe tener exactamente las claves a, b, c y d (en minúscula): "
            + " y ".join(parts)
            + "."
        )
    marks = {}
    for key in STATEMENT_KEYS:
        value = answer[key]
        if value is None or value is Ellipsis:
            fail(
                f"Todavía no has marcado la afirmación {key}) de la pregunta "
                f"{number}: pon True si es verdadera o False si es falsa."
            )
        if not isinstance(value, bool | np.bool_):
            fail(
                f"La afirmación {key}) se marca con True o False, sin comillas; "
                f"recibí {value!r}."
            )
        marks[key] = bool(value)
    return marks


def _quiz_check(number: int) -> Callable[..., None]:
    @exercise(MODULE, f"quiz_{number}", f"Cuestionario, pregunta {number}")
    def check(answer: Any) -> None:
        if QUIZ_KINDS[number] == "number":
            quiz_number(answer, number)
        else:
            quiz_statements(answer, number)

    return check


_QUIZ_CHECKS = {number: _quiz_check(number) for number in QUIZ_KINDS}


def check_quiz_answer(number: int, answer: Any, quiet: bool = False) -> None:
    """Comprueba que la respuesta a la pregunta ``number`` (1–4) está bien escrita.

    Solo mira la forma (un número finito, o las cuatro afirmaciones marcadas con
    ``True``/``False``): cualquier respuesta bien escrita pasa, acierte o no, y
    el mensaje es el mismo para todas. Se califica al corregir, con las pruebas
    ocultas, que traen la explicación de la respuesta.
    """
    if number not in QUIZ_KINDS:
        raise ValueError(f"Solo hay preguntas de la 1 a la {len(QUIZ_KINDS)}.")
    _QUIZ_CHECKS[number](answer, quiet=True)
    if not quiet:
        what = (
            "un número finito"
            if QUIZ_KINDS[number] == "number"
            else "las cuatro afirmaciones marcadas"
        )
        print(
            f"✔ Pregunta {number}: respuesta bien escrita ({what}). Esta "
            "comprobación no dice si aciertas: la pregunta se califica al corregir, "
            "y entonces recibirás la explicación."
        )
