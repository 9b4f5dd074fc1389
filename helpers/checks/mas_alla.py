"""Comprobaciones del módulo 08 · Más allá de GRPO: una por celda calificada."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from operator import eq
from typing import Any

import torch

from helpers.checks import (
    Masked,
    as_array,
    call,
    check_procedure,
    diagnoses,
    exercise,
    fail,
    negated,
    patched,
    tensor,
    values_check,
    with_args,
    with_messages,
)
from helpers.checks.quiz import statements_check
from helpers.tinylm.evaluate import estimate_pass_at_k as ref_pass
from helpers.tinylm.methods import buggy_verify
from helpers.tinylm.methods import exploit_flags as ref_flags
from helpers.tinylm.methods import rloo_advantages as ref_rloo
from helpers.tinylm.methods import token_gae as ref_gae
from helpers.tinylm.methods import token_level_rewards as ref_rewards
from helpers.tinylm.task import verify

MODULE = "08_mas_alla"
_values = functools.partial(values_check, MODULE, aspect="los valores", atol=1e-5)

# Ejercicio 1 · las ventajas de RLOO

_RLOO_CASES = [(tensor([[0, 1, 1, 0]]),), (tensor([[1, 1, 1, 1], [0, 0, 0, 0]]),)]
_RLOO_CASES += [(tensor([[1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0]]),)]
_RLOO_CASES += [(tensor([[0.5, 2.0, -1.0], [3.0, 3.0, 3.0], [0.0, 1.0, 0.25]]),)]
_RLOO_CASES += [(tensor([[1, 0], [0, 1], [1, 1]]),)]
_RLOO_1D_CASES = [(tensor([0, 1, 1, 0]),), (tensor([1, 0, 0, 0, 0, 0]),)]
_RLOO_1D_CASES += [(tensor([1, 0, 0, 1], torch.long),)]
_RLOO_1D_CASES += [(tensor([[1, 0, 0], [1, 1, 0]], torch.long),)]


def _rloo_dim0(rewards):
    r = torch.as_tensor(rewards).float()
    return r - (r.sum(dim=0) - r) / (len(r) - 1)


def _baseline_times(factor: Callable[[int], float]) -> Callable[..., Any]:
    """RLOO con su línea base (r − A, la media de las otras G − 1) × ``factor(G)``."""
    return lambda r: r - (r - ref_rloo(r)) * factor(r.shape[-1])


_RLOO_MISTAKES = with_messages(
    """
rloo_group_mean: Restaste la media del grupo entero, con la propia respuesta dentro: eso
    es la línea base de GRPO. La de RLOO deja fuera a la respuesta i: la media de las
    otras G − 1.
rloo_divide_by_g: Sumaste las otras G − 1 recompensas pero dividiste entre G: su media
    se divide entre G − 1, las que has sumado.
rloo_sum_of_others: Restaste la suma de las demás recompensas: la línea base es su media
    (divide entre G − 1).
rloo_sign: El signo está al revés: ventaja = recompensa − media de las demás (un acierto
    en un grupo con fallos debe salir positivo).
rloo_wrong_axis: Sumaste sobre el eje equivocado (dim=0, entre enunciados): cada grupo
    es una fila, y las «demás» son las de su fila (dim=-1).
rloo_dim1: Fijaste dim=1: con un solo grupo de forma (G,) ese eje no existe. Usa dim=-1
    y rewards.shape[-1], que valen para (G,) y para (P, G).
rloo_integer: Con recompensas enteras (0 y 1 de tipo long) tu resultado sale en enteros
    y pierde los decimales (¿torch.zeros_like de la entrada?). Pasa las recompensas a
    float antes de calcular.
""",
    ("rloo_group_mean", lambda r: ref_rloo(r) * (1 - 1 / r.shape[-1])),
    ("rloo_divide_by_g", _baseline_times(lambda g: (g - 1) / g)),
    ("rloo_sum_of_others", _baseline_times(lambda g: g - 1)),
    ("rloo_sign", negated(ref_rloo)),
    ("rloo_wrong_axis", _rloo_dim0),
    ("rloo_dim1", lambda r: ref_rloo(r) if r.dim() == 2 else r.sum(dim=1)),
    ("rloo_integer", lambda r: ref_rloo(r).to(r.dtype)),
)

_rloo = functools.partial(_values, "rloo_advantages", ref_rloo, _RLOO_MISTAKES)
check_rloo_advantages = _rloo(_RLOO_CASES)
# Con un solo grupo (G,) y con enteros: las ventajas no son enteras.
check_rloo_advantages_1d = _rloo(
    _RLOO_1D_CASES, check_name="check_rloo_advantages_1d", aspect="(G,) y enteros"
)

# Ejercicio 2 · la recompensa por token de PPO


def _token_case(seed: int, lengths: list[int], length: int, kl_coef: float):
    generator, batch = torch.Generator().manual_seed(seed), len(lengths)
    log_probs = -torch.rand(batch, length, generator=generator) * 2
    ref_log_probs = log_probs + 0.5 * torch.randn(batch, length, generator=generator)
    mask = torch.arange(length) < torch.tensor(lengths)[:, None]
    scores = (torch.rand(batch, generator=generator) > 0.4).float()
    scores[0] = 1.0
    return scores, log_probs, ref_log_probs, mask, kl_coef


_TOKEN = [(0, [5, 2, 4], 5, 0.1), (1, [1, 4, 3, 4], 4, 0.05), (2, [6, 3], 6, 0.5)]
_TOKEN += [(3, [4, 2, 3], 4, 0.2), (4, [2], 3, 0.3)]
_TOKEN_CASES = [_token_case(*a) for a in _TOKEN]

# La referencia sin nota: solo la KL de los tokens de la máscara (o del relleno).
_kl_only = with_args(ref_rewards, scores=lambda a: torch.zeros(len(a.scores)))
_kl_padding = with_args(_kl_only, mask=lambda a: ~a.mask.bool())


def _score_at(column: Callable[[torch.Tensor], Any]):
    """La KL bien y la nota en la columna ``column(mask)`` de cada fila."""

    def rewards(s, lp, ref, m, c):
        out = torch.cat([_kl_only(s, lp, ref, m, c), torch.zeros(len(s), 1)], dim=-1)
        out[torch.arange(len(s)), column(m.long())] += s.float()
        return out[:, :-1]

    return rewards


_TOKEN_MISTAKES = with_messages(
    """
token_last_column: Pusiste la nota en la última columna del tensor: en las respuestas
    cortas esa casilla es relleno. Va en el último token válido de cada fila (el de la
    máscara), que cambia de una fila a otra.
token_first_token: Pusiste la nota en el primer token: el verificador puntúa al final,
    cuando la respuesta termina; va en el último token válido de cada fila.
token_every_token: Sumaste la nota a todos los tokens: es una sola recompensa por
    respuesta, en su último token. El crítico y GAE se encargan de repartir el mérito
    hacia atrás.
token_kl_sign: El signo de la KL: la penalización resta, −kl_coef · (log π − log π_ref).
    Un token que la política hace más probable que la referencia cuesta.
token_kl_unmasked: El relleno no es parte de la respuesta: su recompensa debe ser 0,
    haya lo que haya en log_probs y ref_log_probs en esas casillas.
token_no_kl: Falta la penalización KL por token, −kl_coef · (log π − log π_ref), en cada
    token válido.
token_score_after_last: La nota cae una casilla tarde: el último token válido de una
    fila con n tokens está en la posición n − 1, no en n.
""",
    ("token_last_column", _score_at(lambda m: m.shape[1] - 1)),
    ("token_first_token", _score_at(lambda m: 0)),
    # la KL y la nota (a[0]) en cada token de la máscara (a[3])
    ("token_every_token", lambda *a: _kl_only(*a) + a[0][:, None] * a[3]),
    ("token_kl_sign", with_args(ref_rewards, kl_coef=lambda a: -a.kl_coef)),
    ("token_kl_unmasked", lambda *a: ref_rewards(*a) + _kl_padding(*a)),
    ("token_no_kl", with_args(ref_rewards, kl_coef=0.0)),
    ("token_score_after_last", _score_at(lambda m: m.sum(dim=-1))),
)

# El enunciado: en el relleno, cualquier valor finito.
_PADDED = ("log_probs", "ref_log_probs")
_MASKED = Masked("mask", _PADDED, "finite", "token_kl_unmasked", batched=("scores",))
check_token_level_rewards = _values(
    "token_level_rewards", ref_rewards, _TOKEN_MISTAKES, _TOKEN_CASES, masked=_MASKED
)


# candidato al núcleo: una salida que es un dato fijo, sin gradiente
def _no_gradient_check(key, cases, what, in_place, message, *, mistake) -> Callable:
    """Un dato fijo: el resultado no lleva gradiente al argumento 1 ni lo modifica."""

    def check(f: Callable[..., Any], cases=cases) -> None:
        for case in cases:
            try:
                out = call(f, key, case[0], case[1].clone().requires_grad_(), *case[2:])
            except RuntimeError as error:
                if "in-place" not in str(error):
                    raise
                fail(in_place, "modified_input")
            if isinstance(out, torch.Tensor) and out.requires_grad:
                fail(message, mistake)
            as_array(out, what)

    check.__name__ = check.__qualname__ = f"check_{key}_grad"
    return exercise(MODULE, key, "sin gradiente")(check)


check_token_level_rewards_grad = _no_gradient_check(
    "token_level_rewards",
    _TOKEN_CASES[:2],
    "La recompensa por token",
    "token_level_rewards modificó log_probs en su sitio (un -=, *= o .sub_()): es "
    "el tensor del que sale el gradiente de la política. Calcula sobre un "
    "resultado nuevo.",
    "La recompensa lleva gradiente hacia log_probs: para PPO es un dato fijo "
    "(como la nota del verificador), no algo que optimizar. Calcula la KL con "
    "log_probs.detach() o dentro de torch.no_grad().",
    mistake="token_rewards_with_grad",
)

# Ejercicio 3 · GAE por token sobre una respuesta


def _gae_case(seed: int, lengths: list[int], length: int, gamma: float, lam: float):
    generator, batch = torch.Generator().manual_seed(seed), len(lengths)
    mask = torch.arange(length) < torch.tensor(lengths)[:, None]
    rewards = 0.1 * torch.randn(batch, length, generator=generator)
    rewards[torch.arange(batch), torch.tensor(lengths) - 1] += 1.0
    values = torch.rand(batch, length, generator=generator)
    return rewards, values, mask, gamma, lam


_GAE = [(0, [5, 3, 1], 5, 1.0, 0.95), (1, [4, 4, 2, 3], 4, 0.9, 0.8)]
_GAE += [(2, [6, 2], 6, 1.0, 0.0), (3, [3, 5, 4], 5, 1.0, 1.0), (4, [2], 3, 0.9, 0.9)]
_GAE_CASES = [_gae_case(*a) for a in _GAE]


def _next(x: torch.Tensor, last: float = 0.0) -> torch.Tensor:
    """``x`` desplazado una columna a la izquierda: el valor en ``t + 1``."""
    return torch.cat([x[:, 1:], torch.full_like(x[:, :1], last)], dim=1)


def _gae_bootstrap_pad(r, v, m, g, lam):
    # la referencia con γ · V(relleno) sumado al último token válido
    last = m.bool() & ~_next(m.float(), 1.0).bool()
    return ref_gae(r + g * _next(v) * last, v, m, g, lam)


def _gae_forward(r, v, m, g, lam):
    # los δ_t de la referencia, dados la vuelta y acumulados sin valores ni máscara
    deltas = ref_gae(r, v, m, g, 0.0).flip(1)
    ones = torch.ones_like(deltas)
    return ref_gae(deltas, 0 * ones, ones, g, lam).flip(1) * m


_GAE_MISTAKES = with_messages(
    """
gae_bootstrap_pad: Tras el último token usaste el valor de la casilla de relleno como
    V(s_{t+1}): la respuesta terminó (el punto final), así que ese valor es 0, sin
    bootstrap.
gae_no_mask: Recorriste también el relleno: GAE debe empezar en el último token válido
    de cada fila (con A y V siguientes a 0) y dejar 0 en el relleno.
gae_forward: Recorriste la respuesta hacia delante: GAE se acumula desde el final, A_t =
    δ_t + γλ·A_{t+1}, así que el bucle va de t = T − 1 a 0.
gae_lambda_only: El factor de la recursión es γ·λ, no solo λ: A_t = δ_t + γλ·A_{t+1}.
gae_returns: Devolviste los retornos (A + V), lo que persigue el crítico: el ejercicio
    pide las ventajas A.
gae_td: Devolviste solo δ_t (TD de un paso, λ = 0): falta acumular γλ·A_{t+1} hacia
    atrás.
""",
    ("gae_bootstrap_pad", _gae_bootstrap_pad),
    ("gae_no_mask", with_args(ref_gae, mask=lambda a: a.mask >= 0)),
    ("gae_forward", _gae_forward),
    ("gae_lambda_only", with_args(ref_gae, lam=lambda a: a.lam / a.gamma)),
    ("gae_returns", lambda r, v, m, *gl: ref_gae(r, v, m, *gl) + v * m),
    ("gae_td", with_args(ref_gae, lam=0.0)),
)

# El enunciado: en el relleno, cualquier valor finito.
_GAE_MASK = Masked("mask", ("rewards", "values"), "finite", "gae_no_mask")
check_token_gae = _values(
    "token_gae", ref_gae, _GAE_MISTAKES, _GAE_CASES, masked=_GAE_MASK
)
check_token_gae_grad = _no_gradient_check(
    "token_gae",
    _GAE_CASES[:2],
    "Las ventajas",
    "token_gae modificó values en su sitio: son las predicciones del crítico. "
    "Escribe las ventajas en un tensor nuevo.",
    "Las ventajas llevan gradiente hacia values: son un peso fijo para la "
    "pérdida de la política, y el crítico aprende con su propia pérdida. Usa "
    "values.detach() (o torch.no_grad()).",
    mistake="gae_with_grad",
)

# Ejercicio 4 · un experimento: solo la forma (la clave, en las pruebas ocultas)

check_clip_experiment_answer = statements_check(
    MODULE, "clip_experiment_answer", "answer_experiment", "la pregunta del experimento"
)

# Ejercicio 5 · pass@k insesgado

_PASS_CASES = [(10, 3, 1), (10, 3, 2), (16, 4, 5), (64, 5, 10), (20, 0, 5), (8, 8, 3)]
# (10, 3, 7): n − c = k, y las k elegidas aún pueden ser justo los n − c fallos
_PASS_CASES += [(32, 1, 16), (10, 3, 7)]
_PASS_EDGE_CASES = [(2000, 3, 1000), (1500, 700, 750), (200, 190, 50), (64, 60, 8)]
_PASS_EDGE_CASES += [(1000, 1, 1)]

_PASS_MISTAKES = with_messages(
    """
pass_biased: Eso es 1 − (1 − c/n)^k: sacar k respuestas con reemplazo, como si la
    precisión fuera exactamente c/n. El estimador insesgado elige k de las n sin
    reemplazo: 1 − C(n − c, k) / C(n, k).
pass_no_complement: C(n − c, k) / C(n, k) es la probabilidad de que las k elegidas
    fallen todas; pass@k es lo contrario: 1 menos eso.
pass_rate: Devolviste c/n, la precisión de una sola respuesta (pass@1): con k > 1 basta
    con que acierte una de las k.
pass_off_by_one: El producto va desde i = n − c + 1 hasta n (c factores): empezaste uno
    antes.
pass_early_return_at_equal: Con n − c = k, pass@k aún no es 1: las k elegidas pueden ser
    justo los n − c fallos (una de las C(n, k) maneras de elegir). El atajo «vale 1» es
    solo para n − c < k, cuando no hay fallos suficientes para llenar las k.
pass_k_over_n: Multiplicaste la precisión por k: las k respuestas no suman sus aciertos,
    y un problema cuenta una vez si acierta alguna.
pass_float_comb: Con n grande, C(n, k) tiene cientos de cifras y float() desborda
    (OverflowError). Deja que Python divida los enteros (la división de dos int grandes
    sí sale bien) o usa el producto Π (1 − k/i).
""",
    ("pass_biased", lambda n, c, k: 1.0 - (1.0 - c / n) ** k),
    ("pass_no_complement", lambda n, c, k: 1.0 - ref_pass(n, c, k)),
    ("pass_rate", lambda n, c, k: c / n),
    (
        "pass_off_by_one",
        lambda n, c, k: 1.0 - math.prod(1.0 - k / i for i in range(n - c, n)),
    ),
    (
        "pass_early_return_at_equal",
        lambda n, c, k: 1.0 if n - c <= k else ref_pass(n, c, k),
    ),
    ("pass_k_over_n", lambda n, c, k: min(1.0, c * k / n)),
    (
        "pass_float_comb",
        lambda n, c, k: 1.0 - float(math.comb(n - c, k)) / float(math.comb(n, k)),
    ),
)

_pass = functools.partial(
    _values, "estimate_pass_at_k", ref_pass, _PASS_MISTAKES, atol=1e-9, returns="float"
)
check_estimate_pass_at_k = _pass(_PASS_CASES)
# n de miles, y n − c < k
check_estimate_pass_at_k_edges = _pass(
    _PASS_EDGE_CASES, check_name="check_estimate_pass_at_k_edges", aspect="n grandes"
)

# Ejercicio 6 · cazar el exploit en un lote

#: Respuestas de todas las clases, separadas por un espacio: correctas, con un
#: despiste, cortadas, y las que engañan a verificadores con errores típicos (el
#: número bueno en medio, la última cifra, el primer «=»...). La del curso es una
#: de ellas. La última de 12 × 11 es la respuesta vacía.
_EXPLOIT_TEXTS = {
    (17, 24): "17×20+17×4=340+68=408. 17×20+17×4=340+58=398. 17×20+17×4=340+68=408 "
    "17×20+17×4=408+0=398. 17×20+17×4=340+68=418. 17×20+17×4=340+68=4088. "
    "408=17×20+17×4=340+58=398.",
    (23, 45): "23×40+23×5=920+115=1035. 23×40+23×5=920+115=1025. "
    "23×40+23×5=920+115=1035+1. 23×40+23×5=920+1035=1955. 23×40+23×5=920+115=1035=5.",
    (99, 99): "99×90+99×9=8910+891=9801. 99×90+99×9=8910+891=9811. "
    "99×90+99×9=8910+891=1. 99×90+99×9=9801+0=9800.",
    (12, 11): "12×10+12×1=120+12=132. 12×10+12×1=120+12=2. 12×10+12×1=120+12=1132. "
    "132. ",
}
_EXPLOITS = [(t, p) for p, texts in _EXPLOIT_TEXTS.items() for t in texts.split(" ")]
_EXPLOIT_CASES = [
    ([_EXPLOITS[i][0] for i in chosen], [_EXPLOITS[i][1] for i in chosen])
    for chosen in (range(21), [0, 1, 5, 6, 3], [12, 13, 14, 15, 7, 8, 9, 10, 11])
]
# La referencia con otros verificadores.
_exploit = functools.partial(patched, ref_flags)
_swapped = _exploit(verify=buggy_verify, buggy_verify=verify)
_EXPLOIT_MISTAKES = with_messages(
    """
exploit_buggy_rewarded: Marcaste todo lo que premia el verificador con el error, también
    las respuestas correctas. Un exploit es lo que premia y el verificador correcto
    (tl.verify) no.
exploit_all_incorrect: Marcaste todas las respuestas incorrectas: la mayoría son fallos
    normales, que el verificador con el error también suspende. Un exploit es un fallo
    que además cobra recompensa.
exploit_verifiers_swapped: Tienes los dos verificadores al revés: el exploit es 1 para
    el que tiene el error y 0 para el correcto.
exploit_first_problem: Usaste el mismo problema para todas las respuestas: cada
    respuesta se corrige con su propio (a, b), el de la misma posición en problems.
""",
    ("exploit_buggy_rewarded", _exploit(verify=lambda *_: 0)),
    ("exploit_all_incorrect", _exploit(buggy_verify=lambda *_: 1)),
    ("exploit_verifiers_swapped", _swapped),
    ("exploit_first_problem", lambda t, p: ref_flags(t, p[:1] * len(t))),
)

_FLAGS_SAID = diagnoses(
    """
exploit_not_a_list: exploit_flags debe devolver una lista de booleanos, una por
    respuesta; devolvió {kind}.
exploit_wrong_length: exploit_flags devolvió {got} marcas para {size} respuestas: va una
    por respuesta, en el mismo orden.
exploit_not_bool: Cada marca debe ser True o False; hay una que vale {item}.
"""
)


def _as_flags(value: Any, size: int) -> list[bool]:
    """Una lista de ``size`` booleanos (vale 0/1, o un tensor), o falla."""
    try:
        items = list(value)
    except TypeError:
        forgot = " (¿falta el return?)" if value is None else ""
        _FLAGS_SAID["exploit_not_a_list"].fail(kind=type(value).__name__ + forgot)
    if len(items) != size:
        _FLAGS_SAID["exploit_wrong_length"].fail(got=len(items), size=size)
    items = [item.item() if hasattr(item, "item") else item for item in items]
    for item in items:
        if item not in (0, 1):  # True y False también: valen 1 y 0
            _FLAGS_SAID["exploit_not_bool"].fail(item=repr(item))
    return [bool(item) for item in items]


@exercise(MODULE, "exploit_flags")
def check_exploit_flags(exploit_flags: Callable[..., Any], cases=None) -> None:
    """``exploit_flags(texts, problems)`` contra la referencia."""
    for texts, problems in cases or _EXPLOIT_CASES:

        def run(f, t=texts, p=problems) -> list[bool]:
            return _as_flags(call(f, "exploit_flags", list(t), list(p)), len(t))

        def describe(got, want, texts=texts, problems=problems) -> str:
            i = [g != w for g, w in zip(got, want, strict=True)].index(True)
            text, (a, b) = texts[i], problems[i]
            return (
                f"En la respuesta «{text}» a {a} × {b}, tu marca es {got[i]} y "
                f"debía ser {want[i]} (verificador con el error: "
                f"{buggy_verify(text, a, b)}; correcto: {verify(text, a, b)})."
            )

        check_procedure(
            exploit_flags,
            ref_flags,
            _EXPLOIT_MISTAKES,
            run=run,
            same=eq,
            describe=describe,
        )
