"""Comprobaciones del módulo 05 · Actor-crítico y GAE. Cada error típico es la
referencia con otras entradas: ninguna fila repite sus cuentas."""

from __future__ import annotations

import numpy as np
import torch

from helpers import actor_critic
from helpers.checks import (
    Diagnosis,
    Flow,
    check_cases,
    check_gradients,
    check_procedure,
    diagnoses,
    exercise,
    fail,
    negated,
    tensor,
    values_check,
    with_args,
    with_messages,
)
from helpers.formatting import number

MODULE = "05_actor_critico"
_TD, _N_STEP = actor_critic.td_errors, actor_critic.n_step_returns
_GAE, _LOSS = actor_critic.gae, actor_critic.actor_critic_loss


def make_batch(seed: int, shape, terminated_at=(), truncated_at=()) -> dict:
    """Un bloque ``(T, N)`` de juguete, con números de un decimal. Donde el
    episodio acaba, ``next_values`` es el valor de la observación final, no el
    del estado siguiente (otro episodio), como en un entorno vectorizado."""
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
#: Para las celdas de crédito parcial: sin finales, solo terminales, solo truncados.
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
    """De cada bloque, las entradas ``keys`` y después las de ``rest``."""
    return [
        (*(b[k] for k in keys.split()), *extra)
        for b, *extra in zip(batches, *rest, strict=True)
    ]


# candidato al núcleo: values_check con una celda por aspecto y sus filas.
def _aspect_checks(key, rows, atol, *defaults, uses=None):
    """``check_<key>``, ``…_terminated`` y ``…_truncated``, sin las filas que en sus
    casos dan lo de la referencia (se parecerían a toda respuesta casi correcta)."""
    ref = getattr(actor_critic, key)

    def differs(m, cases) -> bool:
        return not all(np.allclose(m.variant(*c), ref(*c), atol=1e-6) for c in cases)

    def make(suffix, aspect, default):
        def check(student, cases=None) -> None:
            cases = list(cases or default)
            here = [m for m in rows if differs(m, cases)]
            check_cases(student, key, cases, ref, here, atol=atol)

        check.__name__ = check.__qualname__ = f"check_{key}{suffix}"
        check.__doc__ = f"Comprueba ``{key}``: {aspect}."
        return exercise(MODULE, key, aspect, uses=uses)(check)

    names = "", "_terminated", "_truncated"
    aspects = "sin finales de episodio", "episodios que terminan", "episodios truncados"
    return [make(*a) for a in zip(names, aspects, defaults, strict=True)]


# --- Ejercicio 1 · errores TD

TD_MISTAKES = with_messages(
    """
td_bootstraps_terminal: Haces bootstrap también tras un estado terminal: si terminated_t
    = 1 no hay nada que cobrar después; multiplica γ·V(s_{t+1}) por (1 − terminated_t).
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
    ("td_bootstraps_terminal", with_args(_TD, terminated=0.0)),
    ("td_mask_reversed", with_args(_TD, terminated=lambda a: 1 - a.terminated)),
    ("td_sign", negated(_TD)),
    ("td_no_gamma", with_args(_TD, gamma=1.0)),
    ("td_values_not_next", with_args(_TD, next_values=lambda a: a.values)),
    ("td_target_not_error", with_args(_TD, values=0.0)),
)

TD_CASES = _cases(BATCHES, "rewards values next_values terminated", [0.9, 0.5, 0.99])
check_td_errors = values_check(
    MODULE, "td_errors", _TD, TD_MISTAKES, TD_CASES, atol=1e-5
)


# --- Ejercicio 2 · retornos de n pasos


def _ended(a):  # el episodio acaba, por fin o por tiempo
    return torch.maximum(a.terminated, a.truncated)


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
    # Sin cortar nunca; solo la cola del último paso mira terminated.
    (
        "n_step_leaks",
        lambda r, nv, te, tr, n, g: _N_STEP(r, (1 - te) * nv, 0 * te, 0 * tr, n, g),
    ),
    (
        "n_step_bootstraps_terminal",
        with_args(_N_STEP, terminated=lambda a: 0 * a.terminated, truncated=_ended),
    ),
    ("n_step_truncated_as_terminal", with_args(_N_STEP, terminated=_ended)),
    (
        "n_step_tail_power",
        with_args(_N_STEP, next_values=lambda a: a.next_values / a.gamma),
    ),
    ("n_step_ignores_n", with_args(_N_STEP, n=lambda a: len(a.rewards))),
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
    """La GAE de referencia sobre unos δ ya calculados (V = 0, sin terminated)."""
    zero = torch.zeros_like(deltas)
    return _GAE(deltas, zero, zero, zero, done, gamma, lam)


def _gae_forward(r, v, nv, term, trunc, g, lam):
    """Hacia delante: la recursión de referencia sobre el bloque al revés."""
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
    ("gae_truncation_leaks", with_args(_GAE, truncated=0.0)),
    (
        "gae_leaks",
        lambda r, v, nv, te, tr, g, lm: _recursion(_TD(r, v, nv, te, g), 0 * r, g, lm),
    ),
    ("gae_bootstraps_terminal", with_args(_GAE, terminated=0.0, truncated=_ended)),
    ("gae_no_bootstrap_truncated", with_args(_GAE, terminated=_ended)),
    ("gae_swapped", with_args(_GAE, gamma=lambda a: a.lam, lam=lambda a: a.gamma)),
    ("gae_forward", _gae_forward),
    ("gae_no_lambda", with_args(_GAE, lam=1.0)),
    # δ_t con γ (dentro de next_values); la suma, sin γ.
    (
        "gae_no_gamma",
        with_args(_GAE, next_values=lambda a: a.gamma * a.next_values, gamma=1.0),
    ),
)

GAE_KEYS = "rewards values next_values terminated truncated"
_GAE_GAMMAS, _LAMS = [0.9, 0.8, 0.6, 0.99], [0.7, 0.5, 1.0, 0.9]
_PLAIN_GAMMAS, _PLAIN_LAMS = [0.9, 0.8, 0.99, 0.9, 0.6], [0.7, 0.5, 0.95, 0.0, 1.0]
check_gae, check_gae_terminated, check_gae_truncated = _aspect_checks(
    "gae",
    GAE_MISTAKES,
    1e-4,
    _cases(PLAIN + PLAIN[:2], GAE_KEYS, _PLAIN_GAMMAS, _PLAIN_LAMS),
    _cases(TERMINATED * 2, GAE_KEYS, _GAE_GAMMAS, _LAMS),
    _cases(TRUNCATED * 2, GAE_KEYS, _GAE_GAMMAS, _LAMS),
    # Tu gae con la td_errors de referencia: un error del ejercicio 1 no cuenta aquí.
    uses={"td_errors": actor_critic.td_errors},
)


# --- Ejercicio 4 · la pérdida del actor-crítico


def loss_case(seed: int, batch=6, value_coef=0.5, entropy_coef=0.05) -> tuple:
    """Los argumentos de la pérdida con una política y un crítico al azar."""
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
LOSS_CASES = [loss_case(0, batch=10), loss_case(1, 9, 0.25, 0.1)]

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
    # El mismo valor; el gradiente de −mean(log π·Â) llega también a Â.
    (
        "loss_advantage_attached",
        lambda lp, v, a, *rest: _LOSS(lp, v, a, *rest) - (lp * (a - a.detach())).mean(),
    ),
    ("loss_policy_sign", lambda lp, *rest: _LOSS(-lp, *rest)),
    ("loss_entropy_sign", lambda *args: _LOSS(*args[:6], -args[6])),
    ("loss_no_value_coef", with_args(_LOSS, value_coef=1.0)),
    ("loss_sum", lambda *args: len(args[0]) * _LOSS(*args)),
    (
        "loss_value_abs",
        lambda lp, v, a, r, h, c_v, c_h: (
            _LOSS(lp, v, a, r, h, 0.0, c_h) + c_v * (v - r.detach()).abs().mean()
        ),
    ),
    ("loss_no_entropy", with_args(_LOSS, entropy_coef=0.0)),
)

LOSS_REMINDER = (
    "Recuerda: −mean(log π·Â) + value_coef·mean((V − R)²) − entropy_coef·mean(H)."
)
NOT_SCALAR = "La pérdida debe ser un escalar (un solo número){}. ¿Falta un promedio?"
LOSS_SAYS = diagnoses(
    """
loss_not_number: La pérdida debe ser un número (un tensor escalar); es {kind}.{forgot}
loss_not_tensor: La pérdida debe ser un tensor de PyTorch con gradiente (es {kind}): no
    uses .item(), float() ni NumPy.
loss_no_grad: Tu pérdida no tiene gradiente: ¿separaste log_probs, values o entropy del
    grafo? Solo la ventaja y los retornos son constantes.
loss_policy_detached: La pérdida no llega a la política: ¿separaste log_probs del grafo?
    El término del actor es el que la mueve.
loss_critic_detached: La pérdida no llega al crítico: ¿separaste values del grafo? El
    crítico solo aprende por la regresión a los objetivos.
loss_entropy_detached: El premio a la entropía no tiene gradiente: ¿separaste entropy
    del grafo, o falta el término?
loss_returns_attached: Los objetivos del crítico no están separados del grafo: cuando
    llegan calculados con el crítico (R = Â + V), la regresión persigue un blanco que se
    mueve con V. Trátalos como constantes.
"""
)


def _copies(case: tuple) -> list:
    return [x.clone() if torch.is_tensor(x) else x for x in case]


def _loss_value(loss_fn, case) -> float:
    """El valor de la pérdida en un caso, o un fallo si no es un número."""
    loss = loss_fn(*_copies(case))
    try:
        shape = tuple(torch.as_tensor(loss).shape)
    except (TypeError, ValueError, RuntimeError):
        forgot = " ¿Falta el return?" if loss is None else ""
        LOSS_SAYS["loss_not_number"].fail(kind=type(loss).__name__, forgot=forgot)
    if np.prod(shape) != 1:
        fail(NOT_SCALAR.format(f"; tiene forma {shape}"), "loss_not_scalar")
    return float(torch.as_tensor(loss).detach().reshape(()))


@exercise(MODULE, "actor_critic_loss", "su valor")
def check_actor_critic_loss(actor_critic_loss, cases=None) -> None:
    """Comprueba el valor de ``actor_critic_loss``."""

    def describe(got: list[float], want: list[float]) -> str:
        i = int(np.argmax(np.abs(np.subtract(got, want)) > 1e-5))
        mine, right = number(got[i], 5), number(want[i], 5)
        return f"En un bloque de prueba la pérdida vale {right} y la tuya {mine}."

    check_procedure(
        actor_critic_loss,
        _LOSS,
        LOSS_MISTAKES,
        run=lambda f: [_loss_value(f, case) for case in cases or LOSS_CASES],
        same=lambda got, want: np.allclose(got, want, atol=1e-5, rtol=0),
        describe=describe,
        unexplained=lambda got, want: fail(
            f"{describe(got, want)}\n{LOSS_REMINDER}", "loss_wrong_value"
        ),
    )


_FLOWS = {
    "log_probs": (True, "loss_policy_detached"),
    "values": (True, "loss_critic_detached"),
    "entropy": (True, "loss_entropy_detached"),
    "returns": (False, "loss_returns_attached"),
}


@exercise(MODULE, "actor_critic_loss", "por dónde pasa el gradiente")
def check_actor_critic_loss_grad(actor_critic_loss, cases=None) -> None:
    """Comprueba por dónde pasa el gradiente de ``actor_critic_loss``."""
    cases = cases or LOSS_CASES
    loss = actor_critic_loss(*_copies(cases[0]))
    if not isinstance(loss, torch.Tensor):
        LOSS_SAYS["loss_not_tensor"].fail(kind=type(loss).__name__)
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
        without_gradient=LOSS_SAYS["loss_no_grad"],
        wrt={k: Flow(must, LOSS_SAYS[i]) for k, (must, i) in _FLOWS.items()},
    )
