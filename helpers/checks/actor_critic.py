"""Comprobaciones del módulo 05 · Actor-crítico y GAE.

Cada error típico es la referencia con otras entradas (sin ``terminated``,
``n`` = T, γ por λ, el bloque al revés…): ninguna fila repite sus cuentas.
"""

from __future__ import annotations

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
    negated,
    tensor,
    values_check,
    with_messages,
)
from helpers.formatting import number

MODULE = "05_actor_critico"
_TD, _N_STEP = actor_critic.td_errors, actor_critic.n_step_returns
_GAE, _LOSS = actor_critic.gae, actor_critic.actor_critic_loss


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
    named = dict(rewards=rewards, values=values, next_values=next_values)
    for name, ends in (("terminated", terminated_at), ("truncated", truncated_at)):
        named[name] = np.zeros(shape)
        for t, i in ends:
            named[name][t, i] = 1.0
            next_values[t, i] = np.round(rng.uniform(0.5, 2.0), 1)
    return {key: tensor(value) for key, value in named.items()}


# Bloques con los tres casos: episodio que sigue, terminal y truncado.
BATCHES = [
    make_batch(0, (5, 3), terminated_at=((1, 1),), truncated_at=((2, 2),)),
    make_batch(1, (6, 2), terminated_at=((3, 0), (5, 1)), truncated_at=((1, 1),)),
    make_batch(2, (4, 1)),
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

    def outputs(f):
        return np.concatenate([np.asarray(f(*c), dtype=float).ravel() for c in cases])

    want = outputs(reference)
    return [m for m in mistakes if not np.allclose(outputs(m.variant), want, atol=1e-6)]


# candidato al núcleo: values_check con una celda por aspecto, cada una con las
# filas que se distinguen en sus casos.
def _aspect_checks(key, rows, atol, *defaults, uses=None):
    """``check_<key>`` en bloques sin finales, ``…_terminated`` y
    ``…_truncated``: ``check(student, cases=None)`` con los casos de ``defaults``
    (o los dados) y las filas que dan otra cosa que la referencia."""
    reference = getattr(actor_critic, key)

    def make(suffix, aspect, default):
        def check(student, cases=None) -> None:
            chosen = list(cases or default)
            rows_here = _differing(rows, chosen, reference)
            check_cases(student, key, chosen, reference, rows_here, atol=atol)

        check.__name__ = check.__qualname__ = f"check_{key}{suffix}"
        check.__doc__ = f"Comprueba ``{key}``: {aspect}."
        return exercise(MODULE, key, aspect, uses=uses)(check)

    return [make(*a, d) for a, d in zip(_ASPECTS, defaults, strict=True)]


_ASPECTS = [
    ("", "sin finales de episodio"),
    ("_terminated", "episodios que terminan"),
    ("_truncated", "episodios truncados"),
]


# --- Ejercicio 1 · errores TD

TD_MISTAKES = with_messages(
    """
td_bootstraps_terminal: Haces bootstrap también tras un estado terminal: si terminated_t
    = 1 no hay nada que cobrar después, el término γ·V(s_{t+1}) debe multiplicarse por
    (1 − terminated_t).
td_mask_reversed: Multiplicas por terminated en lugar de por (1 − terminated): así solo
    haces bootstrap justo donde no debes.
td_sign: El signo está al revés: δ_t = r_t + γ·V(s_{t+1}) − V(s_t) (lo obtenido menos lo
    esperado), no al contrario.
td_no_gamma: Falta el descuento γ delante de V(s_{t+1}).
td_values_not_next: Usas V(s_t) donde va V(s_{t+1}): el bootstrap es con el valor del
    estado siguiente, next_values.
td_target_not_error: Falta restar V(s_t): eso es el objetivo TD r + γ·V(s_{t+1}), no el
    error.
""",
    Mistake(
        "td_bootstraps_terminal", lambda r, v, nv, te, g: _TD(r, v, nv, 0 * te, g), ...
    ),
    Mistake("td_mask_reversed", lambda r, v, nv, te, g: _TD(r, v, nv, 1 - te, g), ...),
    Mistake("td_sign", negated(_TD), ...),
    Mistake("td_no_gamma", lambda r, v, nv, te, g: _TD(r, v, nv, te, 1.0), ...),
    Mistake("td_values_not_next", lambda r, v, nv, te, g: _TD(r, v, v, te, g), ...),
    Mistake(
        "td_target_not_error", lambda r, v, nv, te, g: _TD(r, 0 * v, nv, te, g), ...
    ),
)

check_td_errors = values_check(
    MODULE,
    "td_errors",
    _TD,
    TD_MISTAKES,
    _cases(BATCHES, "rewards values next_values terminated", [0.9, 0.5, 0.99]),
    atol=1e-5,
)


# --- Ejercicio 2 · retornos de n pasos

N_STEP_MISTAKES = with_messages(
    """
n_step_leaks: La suma sigue después de un final de episodio: las recompensas del
    episodio siguiente (la misma columna, tras terminated o truncated) no son tuyas.
    Corta la suma en el primer paso con terminated o truncated.
n_step_bootstraps_terminal: Haces bootstrap tras un estado terminal: si el episodio
    termina (terminated = 1) el valor de cola es 0, no next_values.
n_step_truncated_as_terminal: Tratas truncated como terminated: si el episodio se cortó
    por tiempo, el estado final valía algo y hay que sumar γ^m·next_values de ese paso.
n_step_tail_power: El valor de cola va descontado con γ^m (m = número de recompensas
    sumadas), no con γ^(m−1).
n_step_ignores_n: No paras a los n pasos: eso es el retorno hasta el final del bloque.
    Tras n recompensas, suma γ^n·V(s_{t+n}) y para.
""",
    Mistake(
        "n_step_leaks",
        # Sin cortar nunca; solo la cola del último paso mira terminated.
        lambda r, nv, te, tr, n, g: _N_STEP(r, (1 - te) * nv, 0 * te, 0 * tr, n, g),
        ...,
    ),
    Mistake(
        "n_step_bootstraps_terminal",
        lambda r, nv, te, tr, n, g: _N_STEP(r, nv, 0 * te, te + tr, n, g),
        ...,
    ),
    Mistake(
        "n_step_truncated_as_terminal",
        lambda r, nv, te, tr, n, g: _N_STEP(r, nv, torch.maximum(te, tr), tr, n, g),
        ...,
    ),
    Mistake(
        "n_step_tail_power",
        lambda r, nv, te, tr, n, g: _N_STEP(r, nv / g, te, tr, n, g),
        ...,
    ),
    Mistake(
        "n_step_ignores_n",
        lambda r, nv, te, tr, n, g: _N_STEP(r, nv, te, tr, len(r), g),
        ...,
    ),
)

N_STEP_KEYS = "rewards next_values terminated truncated"
_NS, _GAMMAS = [3, 2, 6, 1], [0.9, 0.8, 0.7, 0.5]
(
    check_n_step_returns,
    check_n_step_returns_terminated,
    check_n_step_returns_truncated,
) = _aspect_checks(
    "n_step_returns",
    N_STEP_MISTAKES,
    1e-5,
    _cases(PLAIN + PLAIN[1:], N_STEP_KEYS, [3, 1, 2, 9, 4], [0.9, 0.8, 0.5, 0.7, 0.99]),
    _cases(TERMINATED * 2, N_STEP_KEYS, _NS, _GAMMAS),
    _cases(TRUNCATED * 2, N_STEP_KEYS, _NS, _GAMMAS),
)


# --- Ejercicio 3 · GAE


def _recursion(deltas, done, gamma, lam):
    """La GAE de referencia sobre unos δ ya calculados: Â_t = δ_t +
    γλ·(1 − done_t)·Â_{t+1} (con V = 0 y sin terminated, δ' = r' = δ)."""
    zero = torch.zeros_like(deltas)
    return _GAE(deltas, zero, zero, zero, done, gamma, lam)


def _gae_forward(r, v, nv, term, trunc, g, lam):
    """Hacia delante, Â_t = δ_t + γλ·(1 − done_{t−1})·Â_{t−1}: la recursión de
    referencia sobre el bloque al revés."""
    done = torch.maximum(term, trunc)
    before = torch.cat([0 * done[:1], done[:-1]])  # done_{t−1}
    return _recursion(_TD(r, v, nv, term, g).flip(0), before.flip(0), g, lam).flip(0)


GAE_MISTAKES = with_messages(
    """
gae_truncation_leaks: Solo cortas la recursión con terminated: un truncamiento también
    cierra el episodio, y la ventaja del siguiente no debe sumarse a la de este.
gae_leaks: La ventaja se filtra entre episodios: al recorrer hacia atrás, la suma debe
    reiniciarse tras cada final (multiplica el término γλ·Â_{t+1} por 1 − done_t, con
    done_t = terminated_t o truncated_t).
gae_bootstraps_terminal: Haces bootstrap tras un estado terminal: en δ_t, γ·V(s_{t+1})
    va multiplicado por (1 − terminated_t).
gae_no_bootstrap_truncated: No haces bootstrap tras un truncamiento: si el episodio se
    cortó por tiempo, δ_t = r_t + γ·V(s_{t+1}) − V(s_t) con el valor de la observación
    final (next_values). Solo terminated anula ese término.
gae_swapped: Has cambiado γ por λ: el error TD se descuenta con γ, δ_t = r_t +
    γ·V(s_{t+1}) − V(s_t), y la suma con γ·λ.
gae_forward: Recorres el tiempo en la dirección equivocada: Â_t depende de los pasos
    futuros, Â_t = δ_t + γλ·Â_{t+1}; empieza por el último paso (reversed(range(T))).
gae_no_lambda: Falta λ en la recursión: Â_t = δ_t + γ·λ·Â_{t+1}. Sin λ calculas siempre
    el caso λ = 1.
gae_no_gamma: Falta γ en la recursión: Â_t = δ_t + γ·λ·Â_{t+1}, no δ_t + λ·Â_{t+1}.
""",
    # Primero: sin estados terminales, no reiniciar nunca y reiniciar solo con
    # terminated dan lo mismo, y este es el diagnóstico más preciso.
    Mistake(
        "gae_truncation_leaks",
        lambda r, v, nv, te, tr, g, lm: _GAE(r, v, nv, te, 0 * tr, g, lm),
        ...,
    ),
    Mistake(
        "gae_leaks",
        lambda r, v, nv, te, tr, g, lm: _recursion(_TD(r, v, nv, te, g), 0 * r, g, lm),
        ...,
    ),
    Mistake(
        "gae_bootstraps_terminal",
        lambda r, v, nv, te, tr, g, lm: _GAE(r, v, nv, 0 * te, te + tr, g, lm),
        ...,
    ),
    Mistake(
        "gae_no_bootstrap_truncated",
        lambda r, v, nv, te, tr, g, lm: _GAE(
            r, v, nv, torch.maximum(te, tr), tr, g, lm
        ),
        ...,
    ),
    Mistake(
        "gae_swapped",
        lambda r, v, nv, te, tr, g, lm: _GAE(r, v, nv, te, tr, lm, g),
        ...,
    ),
    Mistake("gae_forward", _gae_forward, ...),
    Mistake(
        "gae_no_lambda",
        lambda r, v, nv, te, tr, g, lm: _GAE(r, v, nv, te, tr, g, 1.0),
        ...,
    ),
    Mistake(
        "gae_no_gamma",
        lambda r, v, nv, te, tr, g, lm: _recursion(
            _TD(r, v, nv, te, g), torch.maximum(te, tr), 1.0, lm
        ),
        ...,
    ),
)

GAE_KEYS = "rewards values next_values terminated truncated"
# Si tu gae llama a tu td_errors, se comprueba con la de referencia en su lugar:
# un error del ejercicio 1 no cuesta puntos aquí.
USES_TD = {"td_errors": actor_critic.td_errors}
_GAE_GAMMAS, _LAMS = [0.9, 0.8, 0.6, 0.99], [0.7, 0.5, 1.0, 0.9]
check_gae, check_gae_terminated, check_gae_truncated = _aspect_checks(
    "gae",
    GAE_MISTAKES,
    1e-4,
    _cases(
        PLAIN + PLAIN[:2],
        GAE_KEYS,
        [0.9, 0.8, 0.99, 0.9, 0.6],
        [0.7, 0.5, 0.95, 0.0, 1.0],
    ),
    _cases(TERMINATED * 2, GAE_KEYS, _GAE_GAMMAS, _LAMS),
    _cases(TRUNCATED * 2, GAE_KEYS, _GAE_GAMMAS, _LAMS),
    uses=USES_TD,
)


# --- Ejercicio 4 · la pérdida del actor-crítico


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
    advantages = returns - values
    return log_probs, values, advantages, returns, entropy, value_coef, entropy_coef


#: Bloques de más de 8 pasos: los mensajes los nombran por su forma.
LOSS_CASES = [
    loss_case(0, batch=10),
    loss_case(1, 9, value_coef=0.25, entropy_coef=0.1),
]

LOSS_MISTAKES = with_messages(
    """
loss_advantage_attached: La ventaja no está separada del grafo: Â = R − V(s) depende del
    crítico, y sin .detach() el término del actor empuja también a V (el gradiente de
    values no es solo el de la regresión). Usa advantages.detach().
loss_policy_sign: El signo del término del actor: la pérdida es −mean(log π·Â) (el
    optimizador minimiza; queremos subir log π donde Â > 0).
loss_entropy_sign: El premio a la entropía va con signo menos en la pérdida (− c_H·H):
    al minimizar, la entropía debe subir, no bajar.
loss_no_value_coef: Falta el coeficiente value_coef delante de la pérdida del crítico.
loss_sum: Sumas en lugar de promediar: usa .mean() en los tres términos, para que la
    escala no dependa del tamaño del bloque.
loss_value_abs: La pérdida del crítico es el error cuadrático medio, mean((V − R)²), no
    el error absoluto.
loss_no_entropy: Falta el premio a la entropía: − entropy_coef · mean(entropy).
""",
    Mistake(
        "loss_advantage_attached",
        # El mismo valor; el gradiente de −mean(log π·Â) llega también a Â.
        lambda lp, v, a, *rest: _LOSS(lp, v, a, *rest) - (lp * (a - a.detach())).mean(),
        ...,
    ),
    Mistake("loss_policy_sign", lambda lp, *rest: _LOSS(-lp, *rest), ...),
    Mistake("loss_entropy_sign", lambda *args: _LOSS(*args[:6], -args[6]), ...),
    Mistake("loss_no_value_coef", lambda *args: _LOSS(*args[:5], 1.0, args[6]), ...),
    Mistake("loss_sum", lambda *args: len(args[0]) * _LOSS(*args), ...),
    Mistake(
        "loss_value_abs",
        lambda lp, v, a, r, h, c_v, c_h: (
            _LOSS(lp, v, a, r, h, 0.0, c_h) + c_v * (v - r.detach()).abs().mean()
        ),
        ...,
    ),
    Mistake("loss_no_entropy", lambda *args: _LOSS(*args[:6], 0.0), ...),
)

#: Sin un error típico que lo explique, lo que se le recuerda al estudiante.
LOSS_REMINDER = (
    "Recuerda: −mean(log π·Â) + value_coef·mean((V − R)²) − entropy_coef·mean(H)."
)
NOT_SCALAR = "La pérdida debe ser un escalar (un solo número){}. ¿Falta un promedio?"


def _copies(case: tuple) -> list:
    return [x.clone() if torch.is_tensor(x) else x for x in case]


def _loss_value(loss_fn, case) -> float:
    """El valor de la pérdida en un caso, o un fallo si no es un número."""
    loss = loss_fn(*_copies(case))
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
        fail(NOT_SCALAR.format(f"; tiene forma {shape}"), "loss_not_scalar")
    return float(torch.as_tensor(loss).detach().reshape(()))


@exercise(MODULE, "actor_critic_loss", "su valor")
def check_actor_critic_loss(actor_critic_loss, cases=None) -> None:
    """Comprueba el valor de ``actor_critic_loss(log_probs, values, advantages,
    returns, entropy, value_coef, entropy_coef)``."""
    cases = cases or LOSS_CASES

    def describe(got: list[float], want: list[float]) -> str:
        i = int(np.argmax(np.abs(np.subtract(got, want)) > 1e-5))
        mine, right = number(got[i], 5), number(want[i], 5)
        return f"En un bloque de prueba la pérdida vale {right} y la tuya {mine}."

    def unexplained(got: list[float], want: list[float]) -> None:
        fail(f"{describe(got, want)}\n{LOSS_REMINDER}", "loss_wrong_value")

    check_procedure(
        actor_critic_loss,
        _LOSS,
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
    loss = actor_critic_loss(*_copies(cases[0]))
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
        _LOSS,
        LOSS_MISTAKES,
        prefix="loss",
        mistake="loss_wrong_value",
        hint=LOSS_REMINDER,
        # La ventaja llega calculada con el crítico, Â = R − V, como en un bucle.
        attach=lambda args: {"advantages": args["returns"].detach() - args["values"]},
        wrong_shape=Diagnosis(id="loss_not_scalar", message=NOT_SCALAR.format("")),
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
