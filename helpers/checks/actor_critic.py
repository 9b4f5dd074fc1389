"""Comprobaciones del módulo 05 · Actor-crítico y GAE."""

from __future__ import annotations

import functools

import numpy as np
import torch

from helpers import actor_critic
from helpers.checks import (
    Diagnosis,
    Flow,
    Mistake,
    check_cases,
    check_gradients,
    check_procedure,
    exercise,
    fail,
    tensor,
    variant_of,
)
from helpers.formatting import number

MODULE = "05_actor_critico"


def make_batch(
    seed: int,
    shape: tuple[int, int],
    terminated_at: tuple[tuple[int, int], ...] = (),
    truncated_at: tuple[tuple[int, int], ...] = (),
) -> dict[str, torch.Tensor]:
    """Un bloque ``(T, N)`` de juguete con finales de episodio donde se pida.

    ``next_values[t]`` es ``values[t+1]`` salvo donde el episodio acaba: allí es
    el valor de la observación final (distinto del primer estado del episodio
    siguiente, como en un entorno vectorizado de verdad). Números de un decimal,
    para que se lean bien en los mensajes.
    """
    rng = np.random.default_rng(seed)
    rewards = np.round(rng.uniform(-1.0, 1.5, shape), 1)
    values = np.round(rng.uniform(-1.0, 2.0, shape), 1)
    next_values = np.vstack([values[1:], np.round(rng.uniform(-1.0, 2.0, shape[1]), 1)])
    terminated, truncated = np.zeros(shape), np.zeros(shape)
    for (t, i), flags in [(p, terminated) for p in terminated_at] + [
        (p, truncated) for p in truncated_at
    ]:
        flags[t, i] = 1.0
        next_values[t, i] = np.round(rng.uniform(0.5, 2.0), 1)
    named = dict(rewards=rewards, values=values, next_values=next_values)
    named |= dict(terminated=terminated, truncated=truncated)
    return {key: tensor(value) for key, value in named.items()}


# Bloques con los tres casos: episodio que sigue, terminal y truncado.
BATCHES = [
    make_batch(0, (5, 3), terminated_at=((1, 1),), truncated_at=((2, 2),)),
    make_batch(1, (6, 2), terminated_at=((3, 0), (5, 1)), truncated_at=((1, 1),)),
    make_batch(2, (4, 1)),
]
HIDDEN_BATCHES = [
    make_batch(7, (7, 4), terminated_at=((0, 0), (4, 2)), truncated_at=((3, 1),)),
    make_batch(8, (3, 2), terminated_at=((2, 0),), truncated_at=((0, 1), (2, 1))),
]

#: Bloques de cada aspecto, para las celdas de crédito parcial: sin finales de
#: episodio, solo con estados terminales y solo con truncamientos.
PLAIN = [make_batch(2, (4, 1)), make_batch(3, (6, 2)), make_batch(4, (5, 3))]
TERMINATED = [
    make_batch(0, (5, 3), terminated_at=((1, 1), (3, 2))),
    make_batch(1, (6, 2), terminated_at=((3, 0), (5, 1), (0, 1))),
]
TRUNCATED = [
    make_batch(5, (5, 3), truncated_at=((1, 0), (2, 2))),
    make_batch(6, (6, 2), truncated_at=((1, 1), (2, 0), (4, 0))),
]


def _cases(batches, keys: str, *rest) -> list[tuple]:
    """Los casos: de cada bloque, las entradas ``keys``, y después ``rest``."""
    return [
        (*(b[k] for k in keys.split()), *extra)
        for b, *extra in zip(batches, *rest, strict=True)
    ]


def _differing(mistakes: list[Mistake], cases: list, reference) -> list[Mistake]:
    """Las filas que dan otra cosa que la referencia en ``cases``: una que da lo
    mismo (en una celda que mira un solo aspecto) se parecería a cualquier
    respuesta casi correcta."""
    want = [np.asarray(reference(*c), dtype=float) for c in cases]
    return [
        m
        for m in mistakes
        if not all(
            np.allclose(np.asarray(m.variant(*c), dtype=float), w, atol=1e-6)
            for c, w in zip(cases, want, strict=True)
        )
    ]


# ---------------------------------------------------------------------------
# Ejercicio 1 · errores TD
# ---------------------------------------------------------------------------

TD_MISTAKES = [
    Mistake(
        "td_bootstraps_terminal",
        lambda r, v, nv, term, g: r + g * nv - v,
        "Haces bootstrap también tras un estado terminal: si terminated_t = 1 no "
        "hay nada que cobrar después, el término γ·V(s_{t+1}) debe multiplicarse "
        "por (1 − terminated_t).",
    ),
    Mistake(
        "td_mask_reversed",
        lambda r, v, nv, term, g: r + g * term * nv - v,
        "Multiplicas por terminated en lugar de por (1 − terminated): así solo "
        "haces bootstrap justo donde no debes.",
    ),
    Mistake(
        "td_sign",
        lambda r, v, nv, term, g: v - (r + g * (1 - term) * nv),
        "El signo está al revés: δ_t = r_t + γ·V(s_{t+1}) − V(s_t) (lo obtenido "
        "menos lo esperado), no al contrario.",
    ),
    Mistake(
        "td_no_gamma",
        lambda r, v, nv, term, g: r + (1 - term) * nv - v,
        "Falta el descuento γ delante de V(s_{t+1}).",
    ),
    Mistake(
        "td_values_not_next",
        lambda r, v, nv, term, g: r + g * (1 - term) * v - v,
        "Usas V(s_t) donde va V(s_{t+1}): el bootstrap es con el valor del estado "
        "siguiente, next_values.",
    ),
    Mistake(
        "td_target_not_error",
        lambda r, v, nv, term, g: r + g * (1 - term) * nv,
        "Falta restar V(s_t): eso es el objetivo TD r + γ·V(s_{t+1}), no el error.",
    ),
]


@exercise(MODULE, "td_errors")
def check_td_errors(td_errors, cases=None) -> None:
    """Comprueba ``td_errors(rewards, values, next_values, terminated, gamma)``."""
    cases = cases or _cases(
        BATCHES, "rewards values next_values terminated", [0.9, 0.5, 0.99]
    )
    check_cases(
        td_errors, "td_errors", cases, actor_critic.td_errors, TD_MISTAKES, atol=1e-5
    )


# ---------------------------------------------------------------------------
# Ejercicio 2 · retornos de n pasos
# ---------------------------------------------------------------------------


def _n_step(
    rewards,
    next_values,
    terminated,
    truncated,
    n,
    gamma,
    *,
    leak=False,
    boot_terminal=False,
    cut_truncated=False,
    tail_power=0,
    ignore_n=False,
):
    """Los retornos de n pasos, con la opción de cada error típico."""
    r, nv = np.asarray(rewards, float), np.asarray(next_values, float)
    term, trunc = np.asarray(terminated, float), np.asarray(truncated, float)
    term = np.maximum(term, trunc) if cut_truncated else term
    done = 0 * term if leak else np.maximum(term, trunc)
    keep = np.ones_like(term) if boot_terminal else 1 - term
    horizon = len(r)
    out = np.zeros_like(r)
    for t in range(horizon):
        alive = np.ones_like(r[0])
        end = min(t + (horizon if ignore_n else n), horizon)
        for k in range(t, end):
            out[t] += alive * gamma ** (k - t) * r[k]
            stop = np.ones_like(r[0]) if k == end - 1 else done[k]
            out[t] += alive * stop * gamma ** (k - t + 1 + tail_power) * keep[k] * nv[k]
            alive = alive * (1 - stop)
    return out


#: Para ``tests/test_actor_critic.py``: la implementación con unas opciones.
_n_step_variant = functools.partial(variant_of, _n_step)

N_STEP_MISTAKES = [
    Mistake(
        "n_step_leaks",
        _n_step_variant(leak=True),
        "La suma sigue después de un final de episodio: las recompensas del "
        "episodio siguiente (la misma columna, tras terminated o truncated) no son "
        "tuyas. Corta la suma en el primer paso con terminated o truncated.",
    ),
    Mistake(
        "n_step_bootstraps_terminal",
        _n_step_variant(boot_terminal=True),
        "Haces bootstrap tras un estado terminal: si el episodio termina "
        "(terminated = 1) el valor de cola es 0, no next_values.",
    ),
    Mistake(
        "n_step_truncated_as_terminal",
        _n_step_variant(cut_truncated=True),
        "Tratas truncated como terminated: si el episodio se cortó por tiempo, el "
        "estado final valía algo y hay que sumar γ^m·next_values de ese paso.",
    ),
    Mistake(
        "n_step_tail_power",
        _n_step_variant(tail_power=-1),
        "El valor de cola va descontado con γ^m (m = número de recompensas "
        "sumadas), no con γ^(m−1).",
    ),
    Mistake(
        "n_step_ignores_n",
        _n_step_variant(ignore_n=True),
        "No paras a los n pasos: eso es el retorno hasta el final del bloque. Tras "
        "n recompensas, suma γ^n·V(s_{t+n}) y para.",
    ),
]

N_STEP_KEYS = "rewards next_values terminated truncated"


def _check_n_step(n_step_returns, cases) -> None:
    reference = actor_critic.n_step_returns
    rows = _differing(N_STEP_MISTAKES, cases, reference)
    check_cases(n_step_returns, "n_step_returns", cases, reference, rows, atol=1e-5)


@exercise(MODULE, "n_step_returns", "sin finales de episodio")
def check_n_step_returns(n_step_returns, cases=None) -> None:
    """Comprueba ``n_step_returns(rewards, next_values, terminated, truncated, n,
    gamma)`` en bloques sin finales: n y el final del bloque."""
    ns, gammas = [3, 1, 2, 9, 4], [0.9, 0.8, 0.5, 0.7, 0.99]
    cases = cases or _cases(PLAIN + PLAIN[1:], N_STEP_KEYS, ns, gammas)
    _check_n_step(n_step_returns, cases)


@exercise(MODULE, "n_step_returns", "episodios que terminan")
def check_n_step_returns_terminated(n_step_returns, cases=None) -> None:
    """Comprueba ``n_step_returns`` en bloques con estados terminales."""
    ns, gammas = [3, 2, 6, 1], [0.9, 0.8, 0.7, 0.5]
    cases = cases or _cases(TERMINATED * 2, N_STEP_KEYS, ns, gammas)
    _check_n_step(n_step_returns, cases)


@exercise(MODULE, "n_step_returns", "episodios truncados")
def check_n_step_returns_truncated(n_step_returns, cases=None) -> None:
    """Comprueba ``n_step_returns`` en bloques con truncamientos."""
    ns, gammas = [3, 2, 6, 1], [0.9, 0.8, 0.7, 0.5]
    cases = cases or _cases(TRUNCATED * 2, N_STEP_KEYS, ns, gammas)
    _check_n_step(n_step_returns, cases)


# ---------------------------------------------------------------------------
# Ejercicio 3 · GAE
# ---------------------------------------------------------------------------


def _gae(
    rewards,
    values,
    next_values,
    terminated,
    truncated,
    gamma,
    lam,
    *,
    leak=False,
    boot_terminal=False,
    cut_truncated=False,
    swap=False,
    forward=False,
    no_lam=False,
    no_gamma=False,
    trunc_leaks=False,
):
    """GAE, con la opción de cada error típico."""
    r, v = np.asarray(rewards, float), np.asarray(values, float)
    nv = np.asarray(next_values, float)
    term, trunc = np.asarray(terminated, float), np.asarray(truncated, float)
    gamma, lam = (lam, gamma) if swap else (gamma, lam)
    stop_boot = np.maximum(term, trunc) if cut_truncated else term
    deltas = r + gamma * (1.0 if boot_terminal else 1 - stop_boot) * nv - v
    done = term if trunc_leaks else np.maximum(term, trunc)
    not_done = np.ones_like(done) if leak else 1 - done
    decay = (1.0 if no_gamma else gamma) * (1.0 if no_lam else lam)
    out, running = np.zeros_like(deltas), np.zeros_like(deltas[0])
    for t in range(len(r)) if forward else reversed(range(len(r))):
        if forward:
            running = deltas[t] + decay * (1 - done[t - 1] if t else 1) * running
        else:
            running = deltas[t] + decay * not_done[t] * running
        out[t] = running
    return out


#: Para ``tests/test_actor_critic.py``: la implementación con unas opciones.
_gae_variant = functools.partial(variant_of, _gae)

GAE_MISTAKES = [
    # Primero: sin estados terminales, no reiniciar nunca y reiniciar solo con
    # terminated dan lo mismo, y este es el diagnóstico más preciso.
    Mistake(
        "gae_truncation_leaks",
        _gae_variant(trunc_leaks=True),
        "Solo cortas la recursión con terminated: un truncamiento también cierra "
        "el episodio, y la ventaja del siguiente no debe sumarse a la de este.",
    ),
    Mistake(
        "gae_leaks",
        _gae_variant(leak=True),
        "La ventaja se filtra entre episodios: al recorrer hacia atrás, la suma "
        "debe reiniciarse tras cada final (multiplica el término γλ·Â_{t+1} por "
        "1 − done_t, con done_t = terminated_t o truncated_t).",
    ),
    Mistake(
        "gae_bootstraps_terminal",
        _gae_variant(boot_terminal=True),
        "Haces bootstrap tras un estado terminal: en δ_t, γ·V(s_{t+1}) va "
        "multiplicado por (1 − terminated_t).",
    ),
    Mistake(
        "gae_no_bootstrap_truncated",
        _gae_variant(cut_truncated=True),
        "No haces bootstrap tras un truncamiento: si el episodio se cortó por "
        "tiempo, δ_t = r_t + γ·V(s_{t+1}) − V(s_t) con el valor de la observación "
        "final (next_values). Solo terminated anula ese término.",
    ),
    Mistake(
        "gae_swapped",
        _gae_variant(swap=True),
        "Has cambiado γ por λ: el error TD se descuenta con γ, "
        "δ_t = r_t + γ·V(s_{t+1}) − V(s_t), y la suma con γ·λ.",
    ),
    Mistake(
        "gae_forward",
        _gae_variant(forward=True),
        "Recorres el tiempo en la dirección equivocada: Â_t depende de los pasos "
        "futuros, Â_t = δ_t + γλ·Â_{t+1}; empieza por el último paso "
        "(reversed(range(T))).",
    ),
    Mistake(
        "gae_no_lambda",
        _gae_variant(no_lam=True),
        "Falta λ en la recursión: Â_t = δ_t + γ·λ·Â_{t+1}. Sin λ calculas "
        "siempre el caso λ = 1.",
    ),
    Mistake(
        "gae_no_gamma",
        _gae_variant(no_gamma=True),
        "Falta γ en la recursión: Â_t = δ_t + γ·λ·Â_{t+1}, no δ_t + λ·Â_{t+1}.",
    ),
]

GAE_KEYS = "rewards values next_values terminated truncated"
# Si tu gae llama a tu td_errors, se comprueba con la de referencia en su lugar:
# un error del ejercicio 1 no cuesta puntos aquí.
USES_TD = {"td_errors": actor_critic.td_errors}


def _check_gae(gae, cases) -> None:
    rows = _differing(GAE_MISTAKES, cases, actor_critic.gae)
    check_cases(gae, "gae", cases, actor_critic.gae, rows, atol=1e-4)


@exercise(MODULE, "gae", "sin finales de episodio", uses=USES_TD)
def check_gae(gae, cases=None) -> None:
    """Comprueba ``gae(rewards, values, next_values, terminated, truncated, gamma,
    lam)`` en bloques sin finales de episodio."""
    gammas, lams = [0.9, 0.8, 0.99, 0.9, 0.6], [0.7, 0.5, 0.95, 0.0, 1.0]
    _check_gae(gae, cases or _cases(PLAIN + PLAIN[:2], GAE_KEYS, gammas, lams))


@exercise(MODULE, "gae", "episodios que terminan", uses=USES_TD)
def check_gae_terminated(gae, cases=None) -> None:
    """Comprueba ``gae`` en bloques con estados terminales."""
    gammas, lams = [0.9, 0.8, 0.6, 0.99], [0.7, 0.5, 1.0, 0.9]
    _check_gae(gae, cases or _cases(TERMINATED * 2, GAE_KEYS, gammas, lams))


@exercise(MODULE, "gae", "episodios truncados", uses=USES_TD)
def check_gae_truncated(gae, cases=None) -> None:
    """Comprueba ``gae`` en bloques con truncamientos."""
    gammas, lams = [0.9, 0.8, 0.6, 0.99], [0.7, 0.5, 1.0, 0.9]
    _check_gae(gae, cases or _cases(TRUNCATED * 2, GAE_KEYS, gammas, lams))


# ---------------------------------------------------------------------------
# Ejercicio 4 · la pérdida del actor-crítico
# ---------------------------------------------------------------------------


def loss_case(
    seed: int, batch: int = 6, value_coef: float = 0.5, entropy_coef: float = 0.05
) -> tuple:
    """Un caso de la pérdida: ``(log_probs, values, advantages, returns, entropy,
    value_coef, entropy_coef)`` de una política y un crítico al azar."""
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(batch, 3, generator=generator)
    actions = torch.randint(0, 3, (batch,), generator=generator)
    values = torch.randn(batch, generator=generator)
    returns = 2 * torch.randn(batch, generator=generator)
    policy = torch.distributions.Categorical(logits=logits)
    log_probs, entropy = policy.log_prob(actions), policy.entropy()
    return (
        log_probs,
        values,
        returns - values,
        returns,
        entropy,
        value_coef,
        entropy_coef,
    )


#: Bloques de más de 8 pasos: los mensajes los nombran por su forma.
LOSS_CASES = [
    loss_case(0, batch=10),
    loss_case(1, 9, value_coef=0.25, entropy_coef=0.1),
]


def _loss(
    log_probs,
    values,
    advantages,
    returns,
    entropy,
    value_coef,
    entropy_coef,
    *,
    actor=-1.0,
    bonus=-1.0,
    critic=None,
    reduce=torch.mean,
    error=torch.square,
    detach=True,
):
    """La pérdida, con la opción de cada error típico (``detach``: la ventaja)."""
    advantages = advantages.detach() if detach else advantages
    returns = returns.detach()
    value_coef = value_coef if critic is None else critic
    return (
        actor * reduce(log_probs * advantages)
        + value_coef * reduce(error(values - returns))
        + bonus * entropy_coef * reduce(entropy)
    )


LOSS_MISTAKES = [
    Mistake(
        "loss_advantage_attached",
        variant_of(_loss, detach=False),
        "La ventaja no está separada del grafo: Â = R − V(s) depende del crítico, "
        "y sin .detach() el término del actor empuja también a V (el gradiente de "
        "values no es solo el de la regresión). Usa advantages.detach().",
    ),
    Mistake(
        "loss_policy_sign",
        variant_of(_loss, actor=1.0),
        "El signo del término del actor: la pérdida es −mean(log π·Â) (el "
        "optimizador minimiza; queremos subir log π donde Â > 0).",
    ),
    Mistake(
        "loss_entropy_sign",
        variant_of(_loss, bonus=1.0),
        "El premio a la entropía va con signo menos en la pérdida (− c_H·H): al "
        "minimizar, la entropía debe subir, no bajar.",
    ),
    Mistake(
        "loss_no_value_coef",
        variant_of(_loss, critic=1.0),
        "Falta el coeficiente value_coef delante de la pérdida del crítico.",
    ),
    Mistake(
        "loss_sum",
        variant_of(_loss, reduce=torch.sum),
        "Sumas en lugar de promediar: usa .mean() en los tres términos, para que "
        "la escala no dependa del tamaño del bloque.",
    ),
    Mistake(
        "loss_value_abs",
        variant_of(_loss, error=torch.abs),
        "La pérdida del crítico es el error cuadrático medio, mean((V − R)²), no "
        "el error absoluto.",
    ),
    Mistake(
        "loss_no_entropy",
        variant_of(_loss, bonus=0.0),
        "Falta el premio a la entropía: − entropy_coef · mean(entropy).",
    ),
]


def _loss_mistake(kind: str):
    """La variante de la fila cuyo id contiene ``kind`` (para las pruebas)."""
    return next(m.variant for m in LOSS_MISTAKES if kind in m.id)


#: Sin un error típico que lo explique, lo que se le recuerda al estudiante.
LOSS_REMINDER = (
    "Recuerda: −mean(log π·Â) + value_coef·mean((V − R)²) − entropy_coef·mean(H)."
)


def _loss_value(loss_fn, case) -> float:
    """El valor de la pérdida en un caso, o un fallo si no es un número."""
    loss = loss_fn(*(x.clone() if torch.is_tensor(x) else x for x in case))
    try:
        shape = tuple(torch.as_tensor(loss).shape)
    except (TypeError, ValueError, RuntimeError):
        forgot = " ¿Falta el return?" if loss is None else ""
        fail(
            "La pérdida debe ser un número (un tensor escalar); es "
            f"{type(loss).__name__}.{forgot}",
            "loss_not_number",
        )
    if np.prod(shape) != 1:
        fail(
            "La pérdida debe ser un escalar (un solo número); tiene forma "
            f"{shape}. ¿Falta un promedio?",
            "loss_not_scalar",
        )
    return float(torch.as_tensor(loss).detach().reshape(()))


@exercise(MODULE, "actor_critic_loss", "su valor")
def check_actor_critic_loss(actor_critic_loss, cases=None) -> None:
    """Comprueba el valor de ``actor_critic_loss(log_probs, values, advantages,
    returns, entropy, value_coef, entropy_coef)``."""
    cases = cases or LOSS_CASES

    def describe(got: list[float], want: list[float]) -> str:
        i = next(
            i
            for i, (g, w) in enumerate(zip(got, want, strict=True))
            if abs(g - w) > 1e-5
        )
        return (
            f"En un bloque de prueba la pérdida vale {number(want[i], 5)} y la "
            f"tuya {number(got[i], 5)}."
        )

    def unexplained(got: list[float], want: list[float]) -> None:
        fail(f"{describe(got, want)}\n{LOSS_REMINDER}", "loss_wrong_value")

    check_procedure(
        actor_critic_loss,
        actor_critic.actor_critic_loss,
        LOSS_MISTAKES,
        run=lambda loss_fn: [_loss_value(loss_fn, case) for case in cases],
        same=lambda got, want: np.allclose(got, want, atol=1e-5, rtol=0),
        describe=describe,
        unexplained=unexplained,
    )


@exercise(MODULE, "actor_critic_loss", "por dónde pasa el gradiente")
def check_actor_critic_loss_grad(actor_critic_loss, cases=None) -> None:
    """Comprueba los gradientes de ``actor_critic_loss``: llegan a la política,
    al crítico y a la entropía; la ventaja y los objetivos son constantes."""
    cases = cases or LOSS_CASES
    loss = actor_critic_loss(
        *(x.clone() if torch.is_tensor(x) else x for x in cases[0])
    )
    if not isinstance(loss, torch.Tensor):
        fail(
            "La pérdida debe ser un tensor de PyTorch con gradiente (es "
            f"{type(loss).__name__}): no uses .item(), float() ni NumPy.",
            "loss_not_tensor",
        )

    check_gradients(
        actor_critic_loss,
        "actor_critic_loss",
        cases,
        actor_critic.actor_critic_loss,
        LOSS_MISTAKES,
        prefix="loss",
        mistake="loss_wrong_value",
        hint=LOSS_REMINDER,
        # La ventaja llega calculada con el crítico, Â = R − V, como en un bucle.
        attach=lambda args: {"advantages": args["returns"].detach() - args["values"]},
        wrong_shape=Diagnosis(
            id="loss_not_scalar",
            message="La pérdida debe ser un escalar (un solo número). ¿Falta un "
            "promedio?",
        ),
        without_gradient=Diagnosis(
            id="loss_no_grad",
            message="Tu pérdida no tiene gradiente: ¿separaste log_probs, values o "
            "entropy del grafo? Solo la ventaja y los retornos son constantes.",
        ),
        wrt={
            "log_probs": Flow(
                True,
                id="loss_policy_detached",
                message="La pérdida no llega a la política: ¿separaste log_probs "
                "del grafo? El término del actor es el que la mueve.",
            ),
            "values": Flow(
                True,
                id="loss_critic_detached",
                message="La pérdida no llega al crítico: ¿separaste values del "
                "grafo? El crítico solo aprende por la regresión a los objetivos.",
            ),
            "entropy": Flow(
                True,
                id="loss_entropy_detached",
                message="El premio a la entropía no tiene gradiente: ¿separaste "
                "entropy del grafo, o falta el término?",
            ),
            "returns": Flow(
                False,
                id="loss_returns_attached",
                message="Los objetivos del crítico no están separados del grafo: "
                "cuando llegan calculados con el crítico (R = Â + V), la regresión "
                "persigue un blanco que se mueve con V. Trátalos como constantes.",
            ),
        },
    )
