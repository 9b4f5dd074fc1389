"""Comprobaciones del módulo 05 · Actor-crítico y GAE."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from helpers import actor_critic
from helpers.checks import (
    Mistake,
    check_cases,
    check_procedure,
    close,
    exercise,
    fail,
    tensor,
)
from helpers.formatting import number

MODULE = "05_actor_critico"

Case = tuple[Any, ...]


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
    horizon, n_envs = shape
    rewards = np.round(rng.uniform(-1.0, 1.5, shape), 1)
    values = np.round(rng.uniform(-1.0, 2.0, shape), 1)
    next_values = np.vstack([values[1:], np.round(rng.uniform(-1.0, 2.0, n_envs), 1)])
    terminated, truncated = np.zeros(shape), np.zeros(shape)
    for (t, i), flags in [(p, terminated) for p in terminated_at] + [
        (p, truncated) for p in truncated_at
    ]:
        flags[t, i] = 1.0
        next_values[t, i] = np.round(rng.uniform(0.5, 2.0), 1)
    return {
        "rewards": tensor(rewards),
        "values": tensor(values),
        "next_values": tensor(next_values),
        "terminated": tensor(terminated),
        "truncated": tensor(truncated),
    }


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
PLAIN_BATCHES = [make_batch(2, (4, 1)), make_batch(3, (6, 2)), make_batch(4, (5, 3))]
TERMINATED_BATCHES = [
    make_batch(0, (5, 3), terminated_at=((1, 1), (3, 2))),
    make_batch(1, (6, 2), terminated_at=((3, 0), (5, 1), (0, 1))),
]
TRUNCATED_BATCHES = [
    make_batch(5, (5, 3), truncated_at=((1, 0), (2, 2))),
    make_batch(6, (6, 2), truncated_at=((1, 1), (2, 0), (4, 0))),
]


def relevant_mistakes(
    mistakes: list[Mistake], cases: list, reference: Callable[..., Any]
) -> list[Mistake]:
    """Los errores típicos que dan otra cosa que la referencia en ``cases``.

    Una celda que mira un solo aspecto (p. ej. los bloques sin finales de
    episodio) no debe explicar un fallo con un error que allí da lo mismo que
    la respuesta correcta.
    """
    want = [np.asarray(reference(*c), dtype=float) for c in cases]
    kept = []
    for mistake in mistakes:
        got = [np.asarray(mistake.variant(*c), dtype=float) for c in cases]
        if not all(close(g, w, atol=1e-6) for g, w in zip(got, want, strict=True)):
            kept.append(mistake)
    return kept


# ---------------------------------------------------------------------------
# Ejercicio 1 · errores TD
# ---------------------------------------------------------------------------


def _td_cases(batches: list[dict[str, torch.Tensor]], gammas: list[float]) -> list:
    return [
        (b["rewards"], b["values"], b["next_values"], b["terminated"], g)
        for b, g in zip(batches, gammas, strict=True)
    ]


TD_MISTAKES: list[Mistake] = [
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
def check_td_errors(td_errors: Callable[..., Any], cases: list | None = None) -> None:
    """Comprueba ``td_errors(rewards, values, next_values, terminated, gamma)``."""
    cases = cases or _td_cases(BATCHES, [0.9, 0.5, 0.99])
    check_cases(
        td_errors, "td_errors", cases, actor_critic.td_errors, TD_MISTAKES, atol=1e-5
    )


# ---------------------------------------------------------------------------
# Ejercicio 2 · retornos de n pasos
# ---------------------------------------------------------------------------


def _n_step_variant(
    *,
    leak: bool = False,
    boot_terminal: bool = False,
    cut_truncated: bool = False,
    tail_power: int = 0,
    ignore_n: bool = False,
) -> Callable[..., Any]:
    """Una versión (correcta o con un error típico) de los retornos de n pasos."""

    def returns_fn(rewards, next_values, terminated, truncated, n, gamma):
        r, nv = np.asarray(rewards, float), np.asarray(next_values, float)
        term, trunc = np.asarray(terminated, float), np.asarray(truncated, float)
        if cut_truncated:
            term = np.maximum(term, trunc)
        done = np.maximum(term, trunc)
        horizon = r.shape[0]
        steps = horizon if ignore_n else n
        out = np.zeros_like(r)
        for t in range(horizon):
            total = np.zeros_like(r[0])
            alive = np.ones_like(r[0])
            for k in range(t, min(t + steps, horizon)):
                j = k - t
                total += alive * gamma**j * r[k]
                last = k == min(t + steps, horizon) - 1
                stop = (
                    np.ones_like(r[0]) if last else (0 * done[k] if leak else done[k])
                )
                keep = np.ones_like(r[0]) if boot_terminal else 1 - term[k]
                power = j + 1 + tail_power
                total += alive * stop * gamma**power * keep * nv[k]
                alive = alive * (1 - stop)
            out[t] = total
        return out

    return returns_fn


N_STEP_MISTAKES: list[Mistake] = [
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


def _n_step_cases(batches, ns, gammas) -> list:
    return [
        (b["rewards"], b["next_values"], b["terminated"], b["truncated"], n, g)
        for b, n, g in zip(batches, ns, gammas, strict=True)
    ]


def _check_n_step(n_step_returns: Callable[..., Any], cases: list) -> None:
    reference = actor_critic.n_step_returns
    check_cases(
        n_step_returns,
        "n_step_returns",
        cases,
        reference,
        relevant_mistakes(N_STEP_MISTAKES, cases, reference),
        atol=1e-5,
    )


@exercise(MODULE, "n_step_returns", "sin finales de episodio")
def check_n_step_returns(
    n_step_returns: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba ``n_step_returns(rewards, next_values, terminated, truncated, n,
    gamma)`` en bloques sin finales: n y el final del bloque."""
    cases = cases or _n_step_cases(
        PLAIN_BATCHES + PLAIN_BATCHES[1:], [3, 1, 2, 9, 4], [0.9, 0.8, 0.5, 0.7, 0.99]
    )
    _check_n_step(n_step_returns, cases)


@exercise(
    MODULE,
    "n_step_returns",
    "episodios que terminan",
)
def check_n_step_returns_terminated(
    n_step_returns: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba ``n_step_returns`` en bloques con estados terminales."""
    cases = cases or _n_step_cases(
        TERMINATED_BATCHES + TERMINATED_BATCHES, [3, 2, 6, 1], [0.9, 0.8, 0.7, 0.5]
    )
    _check_n_step(n_step_returns, cases)


@exercise(
    MODULE,
    "n_step_returns",
    "episodios truncados",
)
def check_n_step_returns_truncated(
    n_step_returns: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba ``n_step_returns`` en bloques con truncamientos."""
    cases = cases or _n_step_cases(
        TRUNCATED_BATCHES + TRUNCATED_BATCHES, [3, 2, 6, 1], [0.9, 0.8, 0.7, 0.5]
    )
    _check_n_step(n_step_returns, cases)


# ---------------------------------------------------------------------------
# Ejercicio 3 · GAE
# ---------------------------------------------------------------------------


def _gae_variant(
    *,
    leak: bool = False,
    boot_terminal: bool = False,
    cut_truncated: bool = False,
    swap: bool = False,
    forward: bool = False,
    no_lam: bool = False,
    no_gamma: bool = False,
    trunc_leaks: bool = False,
) -> Callable[..., Any]:
    """Una versión (correcta o con un error típico) de GAE."""

    def gae_fn(rewards, values, next_values, terminated, truncated, gamma, lam):
        r, v = np.asarray(rewards, float), np.asarray(values, float)
        nv = np.asarray(next_values, float)
        term, trunc = np.asarray(terminated, float), np.asarray(truncated, float)
        if swap:
            gamma, lam = lam, gamma
        stop_boot = np.maximum(term, trunc) if cut_truncated else term
        keep = 1.0 if boot_terminal else 1 - stop_boot
        deltas = r + gamma * keep * nv - v
        done = term if trunc_leaks else np.maximum(term, trunc)
        not_done = np.ones_like(done) if leak else 1 - done
        decay = (1.0 if no_gamma else gamma) * (1.0 if no_lam else lam)
        out = np.zeros_like(deltas)
        running = np.zeros_like(deltas[0])
        order = range(len(r)) if forward else reversed(range(len(r)))
        for t in order:
            if forward:
                running = deltas[t] + decay * (1 - done[t - 1] if t else 1) * running
            else:
                running = deltas[t] + decay * not_done[t] * running
            out[t] = running
        return out

    return gae_fn


GAE_MISTAKES: list[Mistake] = [
    Mistake(
        "gae_leaks",
        _gae_variant(leak=True),
        "La ventaja se filtra entre episodios: al recorrer hacia atrás, la suma "
        "debe reiniciarse tras cada final (multiplica el término γλ·Â_{t+1} por "
        "1 − done_t, con done_t = terminated_t o truncated_t).",
    ),
    Mistake(
        "gae_truncation_leaks",
        _gae_variant(trunc_leaks=True),
        "Solo cortas la recursión con terminated: un truncamiento también cierra "
        "el episodio, y la ventaja del siguiente no debe sumarse a la de este.",
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


def _gae_cases(batches, gammas, lams) -> list:
    return [
        (
            b["rewards"],
            b["values"],
            b["next_values"],
            b["terminated"],
            b["truncated"],
            g,
            lam,
        )
        for b, g, lam in zip(batches, gammas, lams, strict=True)
    ]


def _check_gae(
    gae: Callable[..., Any], cases: list, mistakes: list[Mistake] = GAE_MISTAKES
) -> None:
    reference = actor_critic.gae
    mistakes = relevant_mistakes(mistakes, cases, reference)
    check_cases(gae, "gae", cases, reference, mistakes, atol=1e-4)


# Si tu gae llama a tu td_errors, se comprueba con la de referencia en su lugar:
# un error del ejercicio 1 no cuesta puntos aquí.
USES_TD = {"td_errors": actor_critic.td_errors}


@exercise(MODULE, "gae", "sin finales de episodio", uses=USES_TD)
def check_gae(gae: Callable[..., Any], cases: list | None = None) -> None:
    """Comprueba ``gae(rewards, values, next_values, terminated, truncated, gamma,
    lam)`` en bloques sin finales de episodio."""
    cases = cases or _gae_cases(
        PLAIN_BATCHES + PLAIN_BATCHES[:2],
        [0.9, 0.8, 0.99, 0.9, 0.6],
        [0.7, 0.5, 0.95, 0.0, 1.0],
    )
    _check_gae(gae, cases)


@exercise(MODULE, "gae", "episodios que terminan", uses=USES_TD)
def check_gae_terminated(gae: Callable[..., Any], cases: list | None = None) -> None:
    """Comprueba ``gae`` en bloques con estados terminales."""
    cases = cases or _gae_cases(
        TERMINATED_BATCHES + TERMINATED_BATCHES,
        [0.9, 0.8, 0.6, 0.99],
        [0.7, 0.5, 1.0, 0.9],
    )
    _check_gae(gae, cases)


@exercise(MODULE, "gae", "episodios truncados", uses=USES_TD)
def check_gae_truncated(gae: Callable[..., Any], cases: list | None = None) -> None:
    """Comprueba ``gae`` en bloques con truncamientos."""
    cases = cases or _gae_cases(
        TRUNCATED_BATCHES + TRUNCATED_BATCHES,
        [0.9, 0.8, 0.6, 0.99],
        [0.7, 0.5, 1.0, 0.9],
    )
    # Sin estados terminales, no reiniciar nunca y reiniciar solo con terminated
    # dan lo mismo: aquí el segundo es el diagnóstico más preciso.
    _check_gae(gae, cases, [GAE_MISTAKES[1], GAE_MISTAKES[0], *GAE_MISTAKES[2:]])


# ---------------------------------------------------------------------------
# Ejercicio 4 · la pérdida del actor-crítico
# ---------------------------------------------------------------------------


def _loss_mistake(kind: str) -> Callable[..., torch.Tensor]:
    def loss_fn(log_probs, values, advantages, returns, entropy, c_v, c_h):
        adv = advantages if kind == "attached" else advantages.detach()
        policy = -(log_probs * adv).mean()
        value = ((values - returns.detach()) ** 2).mean()
        bonus = entropy.mean()
        if kind == "policy_sign":
            policy = -policy
        if kind == "entropy_sign":
            bonus = -bonus
        if kind == "no_value_coef":
            c_v = 1.0
        if kind == "sum":
            policy = -(log_probs * adv).sum()
            value = ((values - returns.detach()) ** 2).sum()
            bonus = entropy.sum()
        if kind == "value_abs":
            value = (values - returns.detach()).abs().mean()
        if kind == "no_entropy":
            c_h = 0.0
        return policy + c_v * value - c_h * bonus

    return loss_fn


LOSS_MISTAKES: list[Mistake] = [
    Mistake(
        "loss_advantage_attached",
        _loss_mistake("attached"),
        "La ventaja no está separada del grafo: Â = R − V(s) depende del crítico, "
        "y sin .detach() el término del actor empuja también a V (el gradiente de "
        "values no es solo el de la regresión). Usa advantages.detach().",
    ),
    Mistake(
        "loss_policy_sign",
        _loss_mistake("policy_sign"),
        "El signo del término del actor: la pérdida es −mean(log π·Â) (el "
        "optimizador minimiza; queremos subir log π donde Â > 0).",
    ),
    Mistake(
        "loss_entropy_sign",
        _loss_mistake("entropy_sign"),
        "El premio a la entropía va con signo menos en la pérdida (− c_H·H): al "
        "minimizar, la entropía debe subir, no bajar.",
    ),
    Mistake(
        "loss_no_value_coef",
        _loss_mistake("no_value_coef"),
        "Falta el coeficiente value_coef delante de la pérdida del crítico.",
    ),
    Mistake(
        "loss_sum",
        _loss_mistake("sum"),
        "Sumas en lugar de promediar: usa .mean() en los tres términos, para que "
        "la escala no dependa del tamaño del bloque.",
    ),
    Mistake(
        "loss_value_abs",
        _loss_mistake("value_abs"),
        "La pérdida del crítico es el error cuadrático medio, mean((V − R)²), no "
        "el error absoluto.",
    ),
    Mistake(
        "loss_no_entropy",
        _loss_mistake("no_entropy"),
        "Falta el premio a la entropía: − entropy_coef · mean(entropy).",
    ),
]
#: Sin un error típico que lo explique, lo que se le recuerda al estudiante
#: (con el id ``"loss_wrong_value"``).
LOSS_REMINDER = (
    "Recuerda: −mean(log π·Â) + value_coef·mean((V − R)²) − entropy_coef·mean(H)."
)


def _loss_probe(loss_fn: Callable[..., Any], case: dict[str, Any]) -> tuple:
    """Ejecuta ``loss_fn`` en un caso: ``(logits, valores, pérdida)``."""
    logits = case["logits"].clone().requires_grad_(True)
    critic = case["values"].clone().requires_grad_(True)
    distribution = torch.distributions.Categorical(logits=logits)
    log_probs = distribution.log_prob(case["actions"])
    entropy = distribution.entropy()
    # La ventaja se calcula con los valores del crítico: depende de ellos.
    advantages = case["returns"] - critic
    loss = loss_fn(
        log_probs,
        critic,
        advantages,
        case["returns"].clone(),
        entropy,
        case["value_coef"],
        case["entropy_coef"],
    )
    return logits, critic, loss


def loss_case(
    seed: int, batch: int = 6, value_coef: float = 0.5, entropy_coef: float = 0.05
) -> dict[str, Any]:
    """Un caso de prueba de la pérdida: logits, acciones, valores y retornos."""
    generator = torch.Generator().manual_seed(seed)
    return {
        "logits": torch.randn(batch, 3, generator=generator),
        "actions": torch.randint(0, 3, (batch,), generator=generator),
        "values": torch.randn(batch, generator=generator),
        "returns": 2 * torch.randn(batch, generator=generator),
        "value_coef": value_coef,
        "entropy_coef": entropy_coef,
    }


LOSS_CASES = [loss_case(0), loss_case(1, batch=9, value_coef=0.25, entropy_coef=0.1)]


def _loss_value(loss_fn: Callable[..., Any], case: dict[str, Any]) -> float:
    _, _, loss = _loss_probe(loss_fn, case)
    return float(torch.as_tensor(loss).detach().reshape(-1)[0])


@exercise(MODULE, "actor_critic_loss", "su valor")
def check_actor_critic_loss(
    actor_critic_loss: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba el valor de ``actor_critic_loss(log_probs, values, advantages,
    returns, entropy, value_coef, entropy_coef)``; el gradiente lo mira
    :func:`check_actor_critic_loss_grad`."""
    cases = cases or LOSS_CASES
    for case in cases:
        _, _, loss = _loss_probe(actor_critic_loss, case)
        size = torch.as_tensor(loss).numel() if _is_number(loss) else None
        if size is None:
            forgot = " ¿Falta el return?" if loss is None else ""
            fail(
                "La pérdida debe ser un número (un tensor escalar); es "
                f"{type(loss).__name__}.{forgot}",
                "loss_not_number",
            )
        if size != 1:
            fail(
                "La pérdida debe ser un escalar (un solo número); tiene forma "
                f"{tuple(torch.as_tensor(loss).shape)}. ¿Falta un promedio?",
                "loss_not_scalar",
            )

    def run(loss_fn: Callable[..., Any]) -> list[float]:
        return [_loss_value(loss_fn, c) for c in cases]

    def same(got: list[float], want: list[float]) -> bool:
        return all(abs(g - w) <= 1e-5 for g, w in zip(got, want, strict=True))

    def same_as_mistake(got: list[float], mistaken: list[float]) -> bool:
        # Un error que no cambia el valor no explica un valor equivocado.
        return mistaken != want and same(got, mistaken)

    def describe(got: list[float], want: list[float]) -> str:
        first = next(
            i for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w
        )
        return (
            f"En un bloque de prueba la pérdida vale {number(want[first], 5)} y la "
            f"tuya {number(got[first], 5)}."
        )

    def unexplained(got: list[float], want: list[float]) -> None:
        fail(f"{describe(got, want)}\n{LOSS_REMINDER}", "loss_wrong_value")

    want = run(actor_critic.actor_critic_loss)
    check_procedure(
        actor_critic_loss,
        actor_critic.actor_critic_loss,
        LOSS_MISTAKES,
        run=run,
        same=same,
        same_as_mistake=same_as_mistake,
        describe=describe,
        unexplained=unexplained,
    )


def _is_number(value: Any) -> bool:
    try:
        torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        return False
    return True


def _loss_gradients(
    loss_fn: Callable[..., Any], case: dict[str, Any], *, attached: str = ""
) -> tuple[torch.Tensor, ...]:
    """La pérdida y sus gradientes respecto a logits, valores, entropía y
    ``log_probs`` (este, aparte: los logits también reciben el de la entropía).

    Con ``attached="advantages"`` la ventaja llega como en un bucle de verdad,
    calculada con el crítico (``Â = R − V``, con gradiente hacia V); con
    ``attached="returns"``, los objetivos (``R = Â + V``). Sin él llegan ya
    separados. Si la pérdida los trata como constantes, los gradientes coinciden.
    """
    logits = case["logits"].clone().requires_grad_(True)
    critic = case["values"].clone().requires_grad_(True)
    distribution = torch.distributions.Categorical(logits=logits)
    log_probs = distribution.log_prob(case["actions"])
    entropy = distribution.entropy()
    weight = (case["returns"] - critic.detach()).clone()
    advantages, returns = weight, case["returns"].clone()
    if attached == "advantages":
        advantages = case["returns"] - critic
    if attached == "returns":
        returns = weight + critic
    loss = loss_fn(
        log_probs,
        critic,
        advantages,
        returns,
        entropy,
        case["value_coef"],
        case["entropy_coef"],
    )
    if not isinstance(loss, torch.Tensor):
        fail(
            "La pérdida debe ser un tensor de PyTorch con gradiente (es "
            f"{type(loss).__name__}): no uses .item(), float() ni NumPy.",
            "loss_not_tensor",
        )
    if loss.numel() != 1:
        fail(
            "La pérdida debe ser un escalar (un solo número); tiene forma "
            f"{tuple(loss.shape)}. ¿Falta un promedio?",
            "loss_not_scalar",
        )
    if not loss.requires_grad:
        fail(
            "Tu pérdida no tiene gradiente: ¿separaste log_probs, values o entropy "
            "del grafo? Solo la ventaja y los retornos son constantes.",
            "loss_no_grad",
        )
    inputs = (logits, critic, entropy, log_probs)
    grads = torch.autograd.grad(loss.reshape(()), inputs, allow_unused=True)
    filled = tuple(
        torch.zeros_like(x) if g is None else g
        for g, x in zip(grads, inputs, strict=True)
    )
    return loss, *filled


#: Lo que la pérdida no debe derivar: si llega calculado con el crítico
#: (``variant``: qué llega así, ver :func:`_loss_gradients`), los gradientes
#: deben ser los mismos que si llega separado.
ATTACHED_MISTAKES: list[Mistake] = [
    Mistake(
        "loss_advantage_attached",
        "advantages",
        next(m.message for m in LOSS_MISTAKES if m.id == "loss_advantage_attached"),
    ),
    Mistake(
        "loss_returns_attached",
        "returns",
        "Los objetivos del crítico no están separados del grafo: cuando "
        "llegan calculados con el crítico (R = Â + V), la regresión "
        "persigue un blanco que se mueve con V. Trátalos como constantes.",
    ),
]


@exercise(
    MODULE,
    "actor_critic_loss",
    "por dónde pasa el gradiente",
)
def check_actor_critic_loss_grad(
    actor_critic_loss: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba qué mueve la pérdida: llega a la política, al crítico y a la
    entropía, y trata la ventaja y los objetivos como constantes. No mira el
    valor (lo mira :func:`check_actor_critic_loss`)."""
    cases = cases or LOSS_CASES
    for case in cases:
        _, g_logits, g_values, g_entropy, g_log_probs = _loss_gradients(
            actor_critic_loss, case
        )
        # log_probs, no los logits: a estos les llega también la entropía.
        if g_log_probs.abs().max() == 0:
            fail(
                "La pérdida no llega a la política: ¿separaste log_probs del grafo? "
                "El término del actor es el que la mueve.",
                "loss_policy_detached",
            )
        if g_values.abs().max() == 0:
            fail(
                "La pérdida no llega al crítico: ¿separaste values del grafo? El "
                "crítico solo aprende por la regresión a los objetivos.",
                "loss_critic_detached",
            )
        if case["entropy_coef"] and g_entropy.abs().max() == 0:
            fail(
                "El premio a la entropía no tiene gradiente: ¿separaste entropy del "
                "grafo, o falta el término?",
                "loss_entropy_detached",
            )
        for mistake in ATTACHED_MISTAKES:
            _, a_logits, a_values, _, _ = _loss_gradients(
                actor_critic_loss, case, attached=mistake.variant
            )
            if not close(a_logits, g_logits, atol=1e-6) or not close(
                a_values, g_values, atol=1e-6
            ):
                fail(mistake.message, mistake.id)
