"""Comprobaciones del módulo 08 · Más allá de GRPO: una por celda calificada."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import torch

from helpers.checks import (
    Masked,
    Mistake,
    as_array,
    call,
    check_cases,
    check_procedure,
    exercise,
    fail,
    tensor,
    variant_of,
)
from helpers.checks.quiz import statements_check
from helpers.tinylm.evaluate import estimate_pass_at_k as ref_pass_at_k
from helpers.tinylm.methods import buggy_verify
from helpers.tinylm.methods import exploit_flags as ref_exploit_flags
from helpers.tinylm.methods import rloo_advantages as ref_rloo
from helpers.tinylm.methods import token_gae as ref_token_gae
from helpers.tinylm.methods import token_level_rewards as ref_token_rewards
from helpers.tinylm.task import verify

MODULE = "08_mas_alla"


# Ejercicio 1 · las ventajas de RLOO


_RLOO_CASES = [
    (tensor([[0, 1, 1, 0]]),),
    (tensor([[1, 1, 1, 1], [0, 0, 0, 0]]),),
    (tensor([[1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0]]),),
    (tensor([[0.5, 2.0, -1.0], [3.0, 3.0, 3.0], [0.0, 1.0, 0.25]]),),
    (tensor([[1, 0], [0, 1], [1, 1]]),),
]

_RLOO_1D_CASES = [
    (tensor([0, 1, 1, 0]),),
    (tensor([1, 0, 0, 0, 0, 0]),),
    (tensor([1, 0, 0, 1], torch.long),),
    (tensor([[1, 0, 0], [1, 1, 0]], torch.long),),
]


def _rloo(rewards, *, dim=-1, keep_self=False, divide="others"):
    """RLOO con una opción por error típico (eje, incluirse, entre qué dividir)."""
    rewards = torch.as_tensor(rewards)
    rewards = rewards if rewards.is_floating_point() else rewards.float()
    others = rewards.sum(dim=dim, keepdim=True) - (0 if keep_self else rewards)
    size = rewards.shape[dim]
    return rewards - others / {"others": size - 1, "all": size, "none": 1}[divide]


def _rloo_integer(rewards):
    rewards = torch.as_tensor(rewards)
    out = torch.zeros_like(rewards)
    out[...] = ref_rloo(rewards).to(out.dtype)
    return out


_RLOO_MISTAKES: list[Mistake] = [
    Mistake(
        "rloo_group_mean",
        variant_of(_rloo, keep_self=True, divide="all"),
        "Restaste la media del grupo entero, con la propia respuesta dentro: eso "
        "es la línea base de GRPO. La de RLOO deja fuera a la respuesta i: la "
        "media de las otras G − 1.",
    ),
    Mistake(
        "rloo_divide_by_g",
        variant_of(_rloo, divide="all"),
        "Sumaste las otras G − 1 recompensas pero dividiste entre G: su media se "
        "divide entre G − 1, las que has sumado.",
    ),
    Mistake(
        "rloo_sum_of_others",
        variant_of(_rloo, divide="none"),
        "Restaste la suma de las demás recompensas: la línea base es su media "
        "(divide entre G − 1).",
    ),
    Mistake(
        "rloo_sign",
        lambda rewards: -ref_rloo(rewards),
        "El signo está al revés: ventaja = recompensa − media de las demás (un "
        "acierto en un grupo con fallos debe salir positivo).",
    ),
    Mistake(
        "rloo_wrong_axis",
        variant_of(_rloo, dim=0),
        "Sumaste sobre el eje equivocado (dim=0, entre enunciados): cada grupo es "
        "una fila, y las «demás» son las de su fila (dim=-1).",
    ),
    Mistake(
        "rloo_dim1",
        variant_of(_rloo, dim=1),
        "Fijaste dim=1: con un solo grupo de forma (G,) ese eje no existe. Usa "
        "dim=-1 y rewards.shape[-1], que valen para (G,) y para (P, G).",
    ),
    Mistake(
        "rloo_integer",
        _rloo_integer,
        "Con recompensas enteras (0 y 1 de tipo long) tu resultado sale en "
        "enteros y pierde los decimales (¿torch.zeros_like de la entrada?). "
        "Pasa las recompensas a float antes de calcular.",
    ),
]


def _check_rloo(rloo_advantages: Callable[..., Any], cases: list) -> None:
    check_cases(
        rloo_advantages, "rloo_advantages", cases, ref_rloo, _RLOO_MISTAKES, atol=1e-5
    )


@exercise(MODULE, "rloo_advantages", "los valores")
def check_rloo_advantages(rloo_advantages: Callable[..., Any], cases=None) -> None:
    """``rloo_advantages(rewards)`` en lotes ``(P, G)`` de floats."""
    _check_rloo(rloo_advantages, cases or _RLOO_CASES)


@exercise(MODULE, "rloo_advantages", "(G,) y enteros")
def check_rloo_advantages_1d(rloo_advantages: Callable[..., Any], cases=None) -> None:
    """``rloo_advantages`` con un solo grupo ``(G,)`` y con enteros (ventajas
    no enteras: un resultado en enteros falla en los valores)."""
    _check_rloo(rloo_advantages, cases or _RLOO_1D_CASES)


# Ejercicio 2 · la recompensa por token de PPO


def _token_case(seed: int, lengths: list[int], length: int, kl_coef: float):
    generator = torch.Generator().manual_seed(seed)
    batch = len(lengths)
    log_probs = -torch.rand(batch, length, generator=generator) * 2
    ref_log_probs = log_probs + 0.5 * torch.randn(batch, length, generator=generator)
    mask = torch.arange(length) < torch.tensor(lengths)[:, None]
    scores = (torch.rand(batch, generator=generator) > 0.4).float()
    scores[0] = 1.0
    return scores, log_probs, ref_log_probs, mask, kl_coef


_TOKEN_CASES = [
    _token_case(0, [5, 2, 4], 5, 0.1),
    _token_case(1, [1, 4, 3, 4], 4, 0.05),
    _token_case(2, [6, 3], 6, 0.5),
    _token_case(3, [4, 2, 3], 4, 0.2),
    _token_case(4, [2], 3, 0.3),
]

#: El enunciado: en el relleno, cualquier valor finito.
_TOKEN_MASKED = Masked(
    mask="mask",
    padded=("log_probs", "ref_log_probs"),
    padding="finite",
    batched=("scores",),
    mistake="token_kl_unmasked",
)


def _kl_part(lp, ref, m, c):
    return torch.where(m.bool(), -c * (lp - ref), torch.zeros_like(lp))


def _score_at(column: Callable[[torch.Tensor], torch.Tensor]):
    """La KL bien y la nota en la columna ``column(mask)`` de cada fila."""

    def rewards(s, lp, ref, m, c):
        out = torch.cat([_kl_part(lp, ref, m, c), torch.zeros(len(s), 1)], dim=-1)
        out[torch.arange(len(s)), column(m.long())] += s.float()
        return out[:, :-1]

    return rewards


def _every_token(s, lp, ref, m, c):
    return _kl_part(lp, ref, m, c) + s.float()[:, None] * m


def _kl_unmasked(s, lp, ref, m, c):
    out = -c * (lp - ref)
    out[torch.arange(len(s)), m.long().sum(dim=-1) - 1] += s.float()
    return out


_TOKEN_MISTAKES: list[Mistake] = [
    Mistake(
        "token_last_column",
        _score_at(lambda m: torch.full((len(m),), m.shape[1] - 1)),
        "Pusiste la nota en la última columna del tensor: en las respuestas "
        "cortas esa casilla es relleno. Va en el último token válido de cada "
        "fila (el de la máscara), que cambia de una fila a otra.",
    ),
    Mistake(
        "token_first_token",
        _score_at(lambda m: torch.zeros(len(m), dtype=torch.long)),
        "Pusiste la nota en el primer token: el verificador puntúa al final, "
        "cuando la respuesta termina; va en el último token válido de cada fila.",
    ),
    Mistake(
        "token_every_token",
        _every_token,
        "Sumaste la nota a todos los tokens: es una sola recompensa por "
        "respuesta, en su último token. El crítico y GAE se encargan de "
        "repartir el mérito hacia atrás.",
    ),
    Mistake(
        "token_kl_sign",
        lambda s, lp, ref, m, c: ref_token_rewards(s, lp, ref, m, -c),
        "El signo de la KL: la penalización resta, −kl_coef · (log π − log π_ref). "
        "Un token que la política hace más probable que la referencia cuesta.",
    ),
    Mistake(
        "token_kl_unmasked",
        _kl_unmasked,
        "El relleno no es parte de la respuesta: su recompensa debe ser 0, haya "
        "lo que haya en log_probs y ref_log_probs en esas casillas.",
    ),
    Mistake(
        "token_no_kl",
        lambda s, lp, ref, m, c: ref_token_rewards(s, lp, ref, m, 0.0),
        "Falta la penalización KL por token, −kl_coef · (log π − log π_ref), en "
        "cada token válido.",
    ),
    Mistake(
        "token_score_after_last",
        _score_at(lambda m: m.sum(dim=-1)),
        "La nota cae una casilla tarde: el último token válido de una fila con n "
        "tokens está en la posición n − 1, no en n.",
    ),
]


@exercise(MODULE, "token_level_rewards", "los valores")
def check_token_level_rewards(token_level_rewards: Callable[..., Any], cases=None):
    """La KL por token en cada token válido y la nota en el último."""
    check_cases(
        token_level_rewards,
        "token_level_rewards",
        cases or _TOKEN_CASES,
        ref_token_rewards,
        _TOKEN_MISTAKES,
        atol=1e-5,
        masked=_TOKEN_MASKED,
    )


def _check_no_gradient(
    function: Callable[..., Any],
    name: str,
    cases: list,
    position: int,
    what: str,
    in_place: str,
    message: str,
    *,
    mistake: str,
) -> None:
    """Falla si el resultado lleva gradiente hacia el argumento ``position``
    (o si lo modifica en su sitio): es un dato fijo, no algo que optimizar."""
    for case in cases:
        args = list(copy.deepcopy(case))
        args[position].requires_grad_(True)
        try:
            out = call(function, name, *args)
        except RuntimeError as error:
            if "in-place" not in str(error):
                raise
            fail(in_place, "modified_input")
        if isinstance(out, torch.Tensor) and out.requires_grad:
            fail(message, mistake)
        as_array(out, what)


@exercise(MODULE, "token_level_rewards", "sin gradiente")
def check_token_level_rewards_grad(token_level_rewards: Callable[..., Any], cases=None):
    """La recompensa por token no lleva gradiente hacia π_θ."""
    _check_no_gradient(
        token_level_rewards,
        "token_level_rewards",
        cases or _TOKEN_CASES[:2],
        1,
        "La recompensa por token",
        "token_level_rewards modificó log_probs en su sitio (un -=, *= o "
        ".sub_()): es el tensor del que sale el gradiente de la política. "
        "Calcula sobre un resultado nuevo.",
        "La recompensa lleva gradiente hacia log_probs: para PPO es un dato "
        "fijo (como la nota del verificador), no algo que optimizar. Calcula "
        "la KL con log_probs.detach() o dentro de torch.no_grad().",
        mistake="token_rewards_with_grad",
    )


# Ejercicio 3 · GAE por token sobre una respuesta


def _gae_case(seed: int, lengths: list[int], length: int, gamma: float, lam: float):
    generator = torch.Generator().manual_seed(seed)
    batch = len(lengths)
    mask = torch.arange(length) < torch.tensor(lengths)[:, None]
    rewards = 0.1 * torch.randn(batch, length, generator=generator)
    rewards[torch.arange(batch), torch.tensor(lengths) - 1] += 1.0
    values = torch.rand(batch, length, generator=generator)
    return rewards, values, mask, gamma, lam


_GAE_CASES = [
    _gae_case(0, [5, 3, 1], 5, 1.0, 0.95),
    _gae_case(1, [4, 4, 2, 3], 4, 0.9, 0.8),
    _gae_case(2, [6, 2], 6, 1.0, 0.0),
    _gae_case(3, [3, 5, 4], 5, 1.0, 1.0),
    _gae_case(4, [2], 3, 0.9, 0.9),
]

#: El enunciado: en el relleno, cualquier valor finito.
_GAE_MASKED = Masked(
    mask="mask", padded=("rewards", "values"), padding="finite", mistake="gae_no_mask"
)


def _gae_loop(
    rewards,
    values,
    mask,
    gamma,
    lam,
    *,
    bootstrap_pad=False,
    reset_pad=True,
    lam_gamma=True,
    mask_out=True,
):
    """GAE fila a fila, hacia atrás, con una opción por error típico."""
    batch, length = rewards.shape
    advantages = torch.zeros(batch, length)
    for row in range(batch):
        running, next_value = 0.0, 0.0
        for t in reversed(range(length)):
            if not mask[row, t] and reset_pad:
                running = 0.0
                next_value = float(values[row, t]) if bootstrap_pad else 0.0
                continue
            delta = float(rewards[row, t]) + gamma * next_value - float(values[row, t])
            running = delta + (gamma * lam if lam_gamma else lam) * running
            advantages[row, t] = running
            next_value = float(values[row, t])
    return advantages * mask if mask_out else advantages


def _gae_forward(r, v, m, g, lam):
    # Los δ_t bien calculados, pero acumulados de t = 0 en adelante
    deltas = ref_token_gae(r, v, m, g, 0.0)
    advantages, running = torch.zeros_like(deltas), torch.zeros(len(deltas))
    for t in range(deltas.shape[1]):
        running = deltas[:, t] + g * lam * running
        advantages[:, t] = running
    return advantages * m


_GAE_MISTAKES: list[Mistake] = [
    Mistake(
        "gae_bootstrap_pad",
        variant_of(_gae_loop, bootstrap_pad=True),
        "Tras el último token usaste el valor de la casilla de relleno como "
        "V(s_{t+1}): la respuesta terminó (el punto final), así que ese valor "
        "es 0, sin bootstrap.",
    ),
    Mistake(
        "gae_no_mask",
        variant_of(_gae_loop, reset_pad=False, mask_out=False),
        "Recorriste también el relleno: GAE debe empezar en el último token "
        "válido de cada fila (con A y V siguientes a 0) y dejar 0 en el relleno.",
    ),
    Mistake(
        "gae_forward",
        _gae_forward,
        "Recorriste la respuesta hacia delante: GAE se acumula desde el final, "
        "A_t = δ_t + γλ·A_{t+1}, así que el bucle va de t = T − 1 a 0.",
    ),
    Mistake(
        "gae_lambda_only",
        variant_of(_gae_loop, lam_gamma=False),
        "El factor de la recursión es γ·λ, no solo λ: A_t = δ_t + γλ·A_{t+1}.",
    ),
    Mistake(
        "gae_returns",
        lambda r, v, m, g, lam: ref_token_gae(r, v, m, g, lam) + v * m,
        "Devolviste los retornos (A + V), lo que persigue el crítico: el "
        "ejercicio pide las ventajas A.",
    ),
    Mistake(
        "gae_td",
        lambda r, v, m, g, lam: ref_token_gae(r, v, m, g, 0.0),
        "Devolviste solo δ_t (TD de un paso, λ = 0): falta acumular "
        "γλ·A_{t+1} hacia atrás.",
    ),
]


@exercise(MODULE, "token_gae", "los valores")
def check_token_gae(token_gae: Callable[..., Any], cases=None) -> None:
    """``token_gae(rewards, values, mask, gamma, lam)``, relleno incluido."""
    check_cases(
        token_gae,
        "token_gae",
        cases or _GAE_CASES,
        ref_token_gae,
        _GAE_MISTAKES,
        atol=1e-5,
        masked=_GAE_MASKED,
    )


@exercise(MODULE, "token_gae", "sin gradiente")
def check_token_gae_grad(token_gae: Callable[..., Any], cases=None) -> None:
    """Las ventajas no llevan gradiente hacia el crítico."""
    _check_no_gradient(
        token_gae,
        "token_gae",
        cases or _GAE_CASES[:2],
        1,
        "Las ventajas",
        "token_gae modificó values en su sitio: son las predicciones del "
        "crítico. Escribe las ventajas en un tensor nuevo.",
        "Las ventajas llevan gradiente hacia values: son un peso fijo para la "
        "pérdida de la política, y el crítico aprende con su propia pérdida. "
        "Usa values.detach() (o torch.no_grad()).",
        mistake="gae_with_grad",
    )


# Ejercicio 4 · un experimento: solo la forma (la clave, en las pruebas ocultas)

EXPERIMENT_KEY = "clip_experiment_answer"

check_clip_experiment_answer = statements_check(
    MODULE,
    EXPERIMENT_KEY,
    "answer_experiment",
    "la pregunta del experimento",
)


# Ejercicio 5 · pass@k insesgado

_PASS_CASES = [
    (10, 3, 1),
    (10, 3, 2),
    (16, 4, 5),
    (64, 5, 10),
    (20, 0, 5),
    (8, 8, 3),
    (32, 1, 16),
    # n − c = k: las k elegidas aún pueden ser justo los n − c fallos
    (10, 3, 7),
]

_PASS_EDGE_CASES = [
    (2000, 3, 1000),
    (1500, 700, 750),
    (200, 190, 50),
    (64, 60, 8),
    (1000, 1, 1),
]


def _pass_early_return_at_equal(n, c, k):
    return 1.0 if n - c <= k else ref_pass_at_k(n, c, k)


_PASS_MISTAKES: list[Mistake] = [
    Mistake(
        "pass_biased",
        lambda n, c, k: 1.0 - (1.0 - c / n) ** k,
        "Eso es 1 − (1 − c/n)^k: sacar k respuestas con reemplazo, como si la "
        "precisión fuera exactamente c/n. El estimador insesgado elige k de las n "
        "sin reemplazo: 1 − C(n − c, k) / C(n, k).",
    ),
    Mistake(
        "pass_no_complement",
        lambda n, c, k: 1.0 - ref_pass_at_k(n, c, k),
        "C(n − c, k) / C(n, k) es la probabilidad de que las k elegidas fallen "
        "todas; pass@k es lo contrario: 1 menos eso.",
    ),
    Mistake(
        "pass_rate",
        lambda n, c, k: c / n,
        "Devolviste c/n, la precisión de una sola respuesta (pass@1): con k > 1 "
        "basta con que acierte una de las k.",
    ),
    Mistake(
        "pass_off_by_one",
        lambda n, c, k: 1.0 - math.prod(1.0 - k / i for i in range(n - c, n)),
        "El producto va desde i = n − c + 1 hasta n (c factores): empezaste uno antes.",
    ),
    Mistake(
        "pass_early_return_at_equal",
        _pass_early_return_at_equal,
        "Con n − c = k, pass@k aún no es 1: las k elegidas pueden ser justo los "
        "n − c fallos (una de las C(n, k) maneras de elegir). El atajo «vale 1» "
        "es solo para n − c < k, cuando no hay fallos suficientes para llenar "
        "las k.",
    ),
    Mistake(
        "pass_k_over_n",
        lambda n, c, k: min(1.0, c * k / n),
        "Multiplicaste la precisión por k: las k respuestas no suman sus "
        "aciertos, y un problema cuenta una vez si acierta alguna.",
    ),
    Mistake(
        "pass_float_comb",
        lambda n, c, k: 1.0 - float(math.comb(n - c, k)) / float(math.comb(n, k)),
        "Con n grande, C(n, k) tiene cientos de cifras y float() desborda "
        "(OverflowError). Deja que Python divida los enteros (la división de "
        "dos int grandes sí sale bien) o usa el producto Π (1 − k/i).",
    ),
]


def _check_pass(estimate_pass_at_k: Callable[..., Any], cases: list) -> None:
    check_cases(
        estimate_pass_at_k,
        "estimate_pass_at_k",
        cases,
        ref_pass_at_k,
        _PASS_MISTAKES,
        atol=1e-9,
        returns="float",
    )


@exercise(MODULE, "estimate_pass_at_k", "los valores")
def check_estimate_pass_at_k(estimate_pass_at_k: Callable[..., Any], cases=None):
    """``estimate_pass_at_k(n, c, k)`` con n pequeños."""
    _check_pass(estimate_pass_at_k, cases or _PASS_CASES)


@exercise(MODULE, "estimate_pass_at_k", "n grandes")
def check_estimate_pass_at_k_edges(estimate_pass_at_k: Callable[..., Any], cases=None):
    """``estimate_pass_at_k`` con n de miles y con n − c < k."""
    _check_pass(estimate_pass_at_k, cases or _PASS_EDGE_CASES)


# Ejercicio 6 · cazar el exploit en un lote

#: Respuestas de todas las clases: correctas, con un despiste, cortadas, y las
#: que engañan a verificadores con errores típicos (el número bueno en medio, la
#: última cifra, el primer «=»...). La del curso es una de ellas.
_EXPLOIT_TEXTS = [
    ("17×20+17×4=340+68=408.", (17, 24)),
    ("17×20+17×4=340+58=398.", (17, 24)),
    ("17×20+17×4=340+68=408", (17, 24)),
    ("17×20+17×4=408+0=398.", (17, 24)),
    ("17×20+17×4=340+68=418.", (17, 24)),
    ("17×20+17×4=340+68=4088.", (17, 24)),
    ("408=17×20+17×4=340+58=398.", (17, 24)),
    ("23×40+23×5=920+115=1035.", (23, 45)),
    ("23×40+23×5=920+115=1025.", (23, 45)),
    ("23×40+23×5=920+115=1035+1.", (23, 45)),
    ("23×40+23×5=920+1035=1955.", (23, 45)),
    ("23×40+23×5=920+115=1035=5.", (23, 45)),
    ("99×90+99×9=8910+891=9801.", (99, 99)),
    ("99×90+99×9=8910+891=9811.", (99, 99)),
    ("99×90+99×9=8910+891=1.", (99, 99)),
    ("99×90+99×9=9801+0=9800.", (99, 99)),
    ("12×10+12×1=120+12=132.", (12, 11)),
    ("12×10+12×1=120+12=2.", (12, 11)),
    ("12×10+12×1=120+12=1132.", (12, 11)),
    ("132.", (12, 11)),
    ("", (12, 11)),
]


def _exploit_case(indices: list[int]) -> tuple[list[str], list[tuple[int, int]]]:
    chosen = [_EXPLOIT_TEXTS[i] for i in indices]
    return [t for t, _ in chosen], [p for _, p in chosen]


_EXPLOIT_CASES = [
    _exploit_case(list(range(len(_EXPLOIT_TEXTS)))),
    _exploit_case([0, 1, 5, 6, 3]),
    _exploit_case([12, 13, 14, 15, 7, 8, 9, 10, 11]),
]


def _flags(rule: Callable[[str, int, int], bool]):
    def flags(texts, problems):
        return [bool(rule(t, a, b)) for t, (a, b) in zip(texts, problems, strict=True)]

    return flags


_EXPLOIT_MISTAKES: list[Mistake] = [
    Mistake(
        "exploit_buggy_rewarded",
        _flags(lambda t, a, b: buggy_verify(t, a, b) == 1),
        "Marcaste todo lo que premia el verificador con el error, también las "
        "respuestas correctas. Un exploit es lo que premia y el verificador "
        "correcto (tl.verify) no.",
    ),
    Mistake(
        "exploit_all_incorrect",
        _flags(lambda t, a, b: verify(t, a, b) == 0),
        "Marcaste todas las respuestas incorrectas: la mayoría son fallos "
        "normales, que el verificador con el error también suspende. Un exploit "
        "es un fallo que además cobra recompensa.",
    ),
    Mistake(
        "exploit_verifiers_swapped",
        _flags(lambda t, a, b: verify(t, a, b) == 1 and buggy_verify(t, a, b) == 0),
        "Tienes los dos verificadores al revés: el exploit es 1 para el que tiene "
        "el error y 0 para el correcto.",
    ),
    Mistake(
        "exploit_first_problem",
        lambda texts, problems: [
            bool(buggy_verify(t, *problems[0])) and not verify(t, *problems[0])
            for t in texts
        ],
        "Usaste el mismo problema para todas las respuestas: cada respuesta se "
        "corrige con su propio (a, b), el de la misma posición en problems.",
    ),
]


def _as_flags(value: Any, size: int) -> list[bool]:
    """Una lista de ``size`` booleanos (vale 0/1, o un tensor), o falla."""
    try:
        items = list(value)
    except TypeError:
        forgot = " (¿falta el return?)" if value is None else ""
        fail(
            f"exploit_flags debe devolver una lista de booleanos, una por "
            f"respuesta; devolvió {type(value).__name__}{forgot}.",
            "exploit_not_a_list",
        )
    if len(items) != size:
        fail(
            f"exploit_flags devolvió {len(items)} marcas para {size} respuestas: "
            "va una por respuesta, en el mismo orden.",
            "exploit_wrong_length",
        )
    flags = []
    for item in items:
        item = item.item() if hasattr(item, "item") else item
        if item not in (0, 1, True, False):
            fail(
                f"Cada marca debe ser True o False; hay una que vale {item!r}.",
                "exploit_not_bool",
            )
        flags.append(bool(item))
    return flags


@exercise(MODULE, "exploit_flags")
def check_exploit_flags(exploit_flags: Callable[..., Any], cases=None) -> None:
    """``exploit_flags(texts, problems)`` contra la referencia."""
    for texts, problems in cases or _EXPLOIT_CASES:

        def run(flags, texts=texts, problems=problems) -> list[bool]:
            out = call(flags, "exploit_flags", list(texts), list(problems))
            return _as_flags(out, len(texts))

        def describe(got, want, texts=texts, problems=problems) -> str:
            first = next(
                i for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w
            )
            text, (a, b) = texts[first], problems[first]
            return (
                f"En la respuesta «{text}» a {a} × {b}, tu marca es {got[first]} y "
                f"debía ser {want[first]} (verificador con el error: "
                f"{buggy_verify(text, a, b)}; correcto: {verify(text, a, b)})."
            )

        check_procedure(
            exploit_flags,
            ref_exploit_flags,
            _EXPLOIT_MISTAKES,
            run=run,
            same=lambda got, want: got == want,
            describe=describe,
        )
