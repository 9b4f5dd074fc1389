"""Comprobaciones del módulo 07 · GRPO en 17 × 24."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from helpers.checks import (
    Mistake,
    check_cases,
    check_procedure,
    close,
    compare_parameters,
    describe_difference,
    exercise,
    fail,
    python_number,
    same_parameters,
    tensor,
)
from helpers.formatting import numbers
from helpers.tinylm.grpo import group_advantages as ref_group_advantages
from helpers.tinylm.grpo import grpo_loss as ref_grpo_loss
from helpers.tinylm.grpo import k3_kl as ref_k3_kl
from helpers.tinylm.grpo import normalize_loss as ref_normalize_loss
from helpers.tinylm.offpolicy import truncated_importance_weights as ref_tis
from helpers.tinylm.reference import (
    grpo_update as ref_grpo_update,
)
from helpers.tinylm.reference import (
    log10_num_responses as ref_log10,
)
from helpers.tinylm.reference import (
    logit_push as ref_logit_push,
)
from helpers.tinylm.reference import (
    path_log_probability as ref_path_log_probability,
)
from helpers.tinylm.task import verify as ref_verify

MODULE = "07_grpo"


def matches_everywhere(
    function: Callable[..., Any],
    cases: list[tuple[Any, ...]],
    reference: Callable[..., Any],
    atol: float,
    nan_ok: bool = False,
) -> bool:
    """¿Da ``function`` lo mismo que ``reference`` en todos los casos?

    Sirve para aceptar una segunda convención igual de correcta que la de la
    referencia principal. Un error, un NaN o una forma distinta cuentan como
    «no»: entonces la comprobación de siempre da el diagnóstico. Con
    ``nan_ok``, los NaN de ``function`` no cuentan (sirve para saber qué
    convención sigue una respuesta que además divide 0/0).
    """
    for args in cases:
        try:
            with np.errstate(all="ignore"):
                got = function(*copy.deepcopy(args))
            got = np.asarray(
                got.detach().cpu().numpy() if hasattr(got, "detach") else got,
                dtype=float,
            )
        except Exception:
            return False
        want = np.asarray(reference(*copy.deepcopy(args)), dtype=float)
        if nan_ok and got.shape == want.shape:
            finite = ~np.isnan(got)
            got, want = got[finite], want[finite]
        if np.isnan(got).any() or not close(got, want, atol=atol):
            return False
    return True


# ---------------------------------------------------------------------------
# Ejercicio 1 · el camino en escala logarítmica y cuántas respuestas hay
# ---------------------------------------------------------------------------

#: El título del ejercicio 1, para sus dos celdas calificadas.


def _log_of_product_math(p):
    return math.log(math.prod(float(x) for x in p))


def _log_of_product_numpy(p):
    return float(np.log(np.prod(np.asarray(p, dtype=float))))


def _in_half_precision(dtype):
    def wrapped(p):
        return float(
            torch.as_tensor(np.asarray(p, dtype=float), dtype=dtype).log().sum()
        )

    return wrapped


_HALF_MESSAGE = (
    "Calculaste en media precisión (float16 o bfloat16): con 8 bits de mantisa "
    "el logaritmo de cada paso ya sale con un error de milésimas, y en un camino "
    "largo se acumula. Usa float32 o float64."
)

_PATH_MISTAKES: list[Mistake] = [
    Mistake(
        "path_log_of_product",
        _log_of_product_math,
        "Multiplicaste y después tomaste el logaritmo: donde el producto se queda "
        "en 0 (un camino largo), log(0) no existe. Toma el logaritmo de cada paso "
        "y súmalos: así nunca se calcula el número diminuto.",
    ),
    Mistake(
        "path_log_of_product_numpy",
        _log_of_product_numpy,
        "Multiplicaste y después tomaste el logaritmo: donde el producto se queda "
        "en 0 (un camino largo), log(0) = −∞. Toma el logaritmo de cada paso y "
        "súmalos: así nunca se calcula el número diminuto.",
    ),
    Mistake(
        "path_probability",
        lambda p: float(np.prod(np.asarray(p, dtype=float))),
        "Devolviste la probabilidad (el producto): el ejercicio pide su "
        "logaritmo, la log-probabilidad del camino.",
    ),
    Mistake(
        "path_log10",
        lambda p: float(np.sum(np.log10(np.asarray(p, dtype=float)))),
        "Usaste log10: la log-probabilidad de los modelos (y la de la pérdida) "
        "usa el logaritmo natural.",
    ),
    Mistake(
        "path_mean_of_logs",
        lambda p: float(np.mean(np.log(np.asarray(p, dtype=float)))),
        "Promediaste los logaritmos: el de un producto es la **suma** de los "
        "logaritmos de sus factores.",
    ),
    Mistake("path_float16", _in_half_precision(torch.float16), _HALF_MESSAGE),
    Mistake("path_bfloat16", _in_half_precision(torch.bfloat16), _HALF_MESSAGE),
]

#: Casos visibles: un camino corto, uno de 26 pasos en float32 (como los del
#: modelo) y uno tan largo que su producto se queda en 0.
PATH_CASES = [
    ([0.6, 0.9, 0.7],),
    (np.array([0.95, 0.9, 0.5, 0.99]),),
    (torch.full((26,), 0.93),),
    ([0.5] * 2000,),
]


@exercise(MODULE, "path_log_probability")
def check_path_log_probability(
    path_log_probability: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba ``path_log_probability(step_probs)`` (Σ log p, sin salir del log).

    La tolerancia es la del float32 (relativa, 10⁻⁵): el enunciado permite
    calcular en float32 o en float64; la media precisión no pasa.
    """
    check_cases(
        path_log_probability,
        "path_log_probability",
        cases or PATH_CASES,
        ref_path_log_probability,
        _PATH_MISTAKES,
        atol=1e-6,
    )


_LOG10_MISTAKES: list[Mistake] = [
    Mistake(
        "count_natural_log",
        lambda v, n: n * math.log(v),
        "Usaste el logaritmo natural (math.log): el exponente de 10 pide el "
        "logaritmo en base 10.",
    ),
    Mistake(
        "count_reversed",
        lambda v, n: v * math.log10(n),
        "Lo calculaste al revés: hay vocab_size opciones en cada una de las "
        "length posiciones, vocab_size ** length, no length ** vocab_size.",
    ),
    Mistake(
        "count_product",
        lambda v, n: math.log10(v * n),
        "Multiplicaste vocab_size × length: las opciones de cada posición se "
        "multiplican entre sí (una potencia), no por la longitud.",
    ),
    Mistake(
        "count_float_overflow",
        lambda v, n: math.log10(float(v) ** n),
        "float(vocab_size) ** length desborda (OverflowError): el número tiene "
        "cientos de cifras. El logaritmo de una potencia se puede calcular sin "
        "calcular la potencia.",
    ),
    Mistake(
        "count_digits",
        lambda v, n: len(str(v**n)) - 1,
        "Contaste las cifras de la potencia: eso es el exponente redondeado hacia "
        "abajo (solo coincide cuando vocab_size es 10, 100...). El ejercicio pide "
        "el exponente real, con sus decimales.",
    ),
]


@exercise(MODULE, "path_log_probability")
def check_log10_num_responses(
    log10_num_responses: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba ``log10_num_responses(vocab_size, length)``."""
    cases = cases or [(150_000, 100), (10, 3), (15, 26), (50_257, 20)]
    check_cases(
        log10_num_responses,
        "log10_num_responses",
        cases,
        ref_log10,
        _LOG10_MISTAKES,
        atol=1e-6,
    )


# ---------------------------------------------------------------------------
# Ejercicio 2 · el verificador
# ---------------------------------------------------------------------------


def _substring_verify(text: str, a: int, b: int) -> int:
    return int(str(a * b) in text)


def _no_end_verify(text: str, a: int, b: int) -> int:
    final = text.replace(".", "").rsplit("=", 1)[-1]
    return int(final.isascii() and final.isdigit() and int(final) == a * b)


def _strip_end_verify(text: str, a: int, b: int) -> int:
    final = text.rsplit("=", 1)[-1].rstrip(".")
    return int(final.isascii() and final.isdigit() and int(final) == a * b)


def _raising_verify(text: str, a: int, b: int) -> int:
    body = text.split(".")[0]
    return int(int(body.rsplit("=", 1)[1]) == a * b)


def _first_equals_verify(text: str, a: int, b: int) -> int:
    if "." not in text or "=" not in text:
        return 0
    first = text.split(".")[0].split("=")[1].split("+")[0]
    return int(first.isdigit() and int(first) == a * b)


def _keeps_dot_verify(text: str, a: int, b: int) -> int:
    final = text.rsplit("=", 1)[-1]
    return int(final.isdigit() and int(final) == a * b)


def _find_without_check_verify(text: str, a: int, b: int) -> int:
    body = text[: text.find(".")]
    final = body.rsplit("=", 1)[-1] if "=" in body else ""
    return int(final.isdigit() and int(final) == a * b)


def _ends_with_dot_verify(text: str, a: int, b: int) -> int:
    if not text.endswith("."):
        return 0
    body = text[:-1]
    final = body.rsplit("=", 1)[-1] if "=" in body else ""
    return int(final.isascii() and final.isdigit() and int(final) == a * b)


def _isdigit_verify(text: str, a: int, b: int) -> int:
    end = text.find(".")
    body = text[:end] if end >= 0 else ""
    final = body.rsplit("=", 1)[-1] if "=" in body else ""
    return int(final.isdigit() and int(final) == a * b)


_VERIFY_MISTAKES: list[Mistake] = [
    Mistake(
        "verify_keeps_dot",
        _keeps_dot_verify,
        "Te quedaste con el punto final pegado al número («408.»), y eso ya no es "
        "un número: la respuesta final va entre el último «=» y el punto.",
    ),
    Mistake(
        "verify_first_equals",
        _first_equals_verify,
        "Miras el número tras el primer «=»; la respuesta final es la que "
        "sigue al último.",
    ),
    Mistake(
        "verify_find_without_check",
        _find_without_check_verify,
        'Cortaste en text.find(".") sin mirar si había punto: sin punto, find '
        "devuelve −1 y text[:−1] se come el último carácter («…=4080» pasa a "
        "«…=408»). Una respuesta sin punto final está cortada y vale 0.",
    ),
    Mistake(
        "verify_requires_final_dot",
        _ends_with_dot_verify,
        "La respuesta acaba en el **primer** punto (el token de fin) y lo que "
        "venga detrás no cuenta: «…=408.+7» vale 1, aunque el texto no acabe en "
        "«.». Corta el texto en ese punto y busca el último «=» antes de él.",
    ),
    Mistake(
        "verify_isdigit",
        _isdigit_verify,
        "isdigit() también dice que sí a cifras como «²», que int() no sabe "
        "leer: «…=408².» lanza ValueError. Comprueba que son las cifras 0–9 "
        "(isascii() y isdigit(), o una expresión regular), o convierte dentro "
        "de un try/except ValueError.",
    ),
    Mistake(
        "verify_no_end_check",
        _no_end_verify,
        "Quitaste todos los puntos antes de leer el número, y con ellos se va "
        "el final de la respuesta: acaba en el **primer** «.» (el token de fin) "
        "y lo de detrás no cuenta («…=408.+7» vale 1, «…=40.8.» vale 0). Una "
        "respuesta sin punto quedó cortada (el modelo no terminó): vale 0 "
        "aunque los dígitos coincidan.",
    ),
    Mistake(
        "verify_strips_end",
        _strip_end_verify,
        "Quitaste el punto del final (rstrip) sin comprobar que estaba: una "
        "respuesta sin punto quedó cortada (el modelo no terminó) y vale 0 "
        "aunque los dígitos coincidan. Además, la respuesta acaba en el "
        "**primer** «.»: lo de detrás no cuenta («…=408.+7» vale 1).",
    ),
    Mistake(
        "verify_substring",
        _substring_verify,
        "Buscas el producto en cualquier parte del texto: una respuesta que "
        "escribe 408 por el camino y acaba en 398 no es correcta. Mira solo el "
        "número tras el último «=».",
    ),
    Mistake(
        "verify_raises",
        _raising_verify,
        "El verificador nunca debe lanzar una excepción: una respuesta mal "
        "formada (sin «=», o con algo que no es un número al final) vale 0.",
    ),
]

#: Respuestas bien formadas (con «=» y punto final): ¿acierta el número final?
#: Lo que sigue al primer «.» no cuenta: el modelo ya había terminado.
VERIFY_CASES = [
    ("17×24=17×20+17×4=340+68=408.", 17, 24),
    ("17×24=17×20+17×4=340+58=398.", 17, 24),
    ("17×20+17×4=340+68=408.", 17, 24),
    ("17×20+17×4=408+0=398.", 17, 24),
    ("17×24=408=398.", 17, 24),
    ("17×24=408.", 17, 24),
    ("17×20+17×4=340+68=408.+7", 17, 24),
    ("12×11=12×10+12×1=120+12=132.", 12, 11),
    ("17×20+17×4=340+68=408..", 17, 24),
    ("17×20+17×4=340+68=40.8.", 17, 24),
]

#: Respuestas mal formadas: cortadas, sin «=», sin número al final, vacías.
VERIFY_MALFORMED_CASES = [
    ("17×20+17×4=340+68=408", 17, 24),
    ("17×20+17×4=340+68=4080", 17, 24),
    ("408.", 17, 24),
    ("17×20+17×4=340+68=.", 17, 24),
    ("17×20+17×4=340+68=408².", 17, 24),
    ("17×20+17×4=340+68=4", 17, 24),
    ("", 17, 24),
    # Acaba en el primer «.», sin «=» antes: quitar todos los puntos lo arregla
    ("17×20.+17×4=340+68=40.8", 17, 24),
]


@exercise(MODULE, "verify")
def check_verify(verify: Callable[..., Any], cases: list | None = None) -> None:
    """Comprueba ``verify(text, a, b)`` en respuestas bien formadas."""
    check_cases(
        verify,
        "verify",
        cases or VERIFY_CASES,
        ref_verify,
        _VERIFY_MISTAKES,
        returns="int",
    )


@exercise(MODULE, "verify")
def check_verify_malformed(
    verify: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba que ``verify`` da 0, sin lanzar, a las respuestas mal formadas."""
    check_cases(
        verify,
        "verify",
        cases or VERIFY_MALFORMED_CASES,
        ref_verify,
        _VERIFY_MISTAKES,
        returns="int",
    )


# ---------------------------------------------------------------------------
# Ejercicio 3 · el empujón 1 − p sobre el logit propio
# ---------------------------------------------------------------------------


def _push_sign(logits, token, advantage=1.0):
    return -ref_logit_push(logits, token, advantage)


def _push_own_only(logits, token, advantage=1.0):
    push = ref_logit_push(logits, token, advantage)
    keep = torch.zeros_like(push)
    keep[token] = push[token]
    return keep


def _push_no_advantage(logits, token, advantage=1.0):
    return ref_logit_push(logits, token, 1.0)


def _push_prob_grad(logits, token, advantage=1.0):
    probs = torch.as_tensor(logits, dtype=torch.float64).softmax(-1)
    return probs[token] * ref_logit_push(logits, token, advantage)


def _push_p_not_one_minus_p(logits, token, advantage=1.0):
    probs = torch.as_tensor(logits, dtype=torch.float64).softmax(-1)
    push = -advantage * probs
    push[token] = advantage * probs[token]
    return push


_PUSH_CASES = [
    (torch.tensor([2.0, 0.5, -1.0, 0.0]), 0, 1.0),
    (torch.tensor([2.0, 0.5, -1.0, 0.0]), 2, 1.0),
    (torch.tensor([0.3, 0.1, 3.0]), 1, -0.75),
    (torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0]), 4, 0.5),
]

_PUSH_MISTAKES: list[Mistake] = [
    Mistake(
        "push_sign",
        _push_sign,
        "El signo: con ventaja positiva el logit del token elegido **sube** "
        "(A · (1 − p)) y los demás bajan (−A · p).",
    ),
    Mistake(
        "push_own_only",
        _push_own_only,
        "Solo moviste el logit del token elegido: los demás también se mueven, "
        "cada uno baja A · p_otro (el gradiente de la softmax los toca a todos).",
    ),
    Mistake(
        "push_no_advantage",
        _push_no_advantage,
        "Olvidaste la ventaja: todo el empujón se multiplica por A (con A < 0 el "
        "token baja).",
    ),
    Mistake(
        "push_probability_gradient",
        _push_prob_grad,
        "Derivaste la probabilidad p y no su logaritmo: la pérdida usa log π, "
        "y el gradiente de log softmax es one_hot − p, sin el factor p delante.",
    ),
    Mistake(
        "push_p_not_one_minus_p",
        _push_p_not_one_minus_p,
        "El logit propio sube A · (1 − p), lo que le faltaba al modelo para estar "
        "seguro, no A · p.",
    ),
]


def _push_by_autograd(logits, token, advantage=1.0):
    """El empujón calculado por autograd: −gradiente de −A · log softmax."""
    z = torch.as_tensor(logits, dtype=torch.float64).clone().requires_grad_(True)
    (-advantage * torch.log_softmax(z, -1)[token]).backward()
    return -z.grad


@exercise(MODULE, "logit_push")
def check_logit_push(logit_push: Callable[..., Any], cases: list | None = None) -> None:
    """Comprueba ``logit_push(logits, token, advantage)`` contra autograd."""
    check_cases(
        logit_push,
        "logit_push",
        cases or _PUSH_CASES,
        _push_by_autograd,
        _PUSH_MISTAKES,
        atol=1e-5,
    )


# ---------------------------------------------------------------------------
# Ejercicio 4 · ventajas de grupo
# ---------------------------------------------------------------------------


_GROUP_CASES = [
    (tensor([[0, 1, 1, 0]]), False),
    (tensor([[1, 1, 1, 1], [0, 0, 0, 0]]), False),
    (tensor([[1, 1, 0, 1]]), False),
    (tensor([[0, 1, 1], [1, 0, 0]]), False),
    (tensor([[0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 1, 0]]), False),
    (tensor([[0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 1, 0]]), True),
    (tensor([[1, 1, 1, 1], [0, 0, 0, 0], [0, 1, 0, 0]]), True),
    (tensor([[0.5, 2.0, -1.0], [3.0, 3.0, 3.0]]), True),
    # Recompensas que no son exactas en binario: 0,1 + 0,2 y 0,3 son la misma
    # nota, pero no el mismo float: el grupo unánime tiene σ ~ 10⁻¹⁷, no 0
    (
        tensor([[0.1 + 0.2, 0.3, 0.3, 0.1 + 0.2], [0.1, 0.3, 0.2, 0.1]], torch.float64),
        True,
    ),
]


def _batch_mean(rewards: torch.Tensor, std_normalize: bool = False, eps=1e-6):
    advantages = rewards - rewards.mean()
    if std_normalize:
        advantages = advantages / (rewards.std(unbiased=False) + eps)
    return advantages


def _no_eps(rewards: torch.Tensor, std_normalize: bool = False, eps=1e-6):
    advantages = rewards - rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        advantages = advantages / rewards.std(dim=-1, unbiased=False, keepdim=True)
    return advantages


def _sign(rewards: torch.Tensor, std_normalize: bool = False, eps=1e-6):
    return -ref_group_advantages(rewards, std_normalize, eps)


def _unbiased_std_advantages(
    rewards: torch.Tensor, std_normalize: bool = False, eps: float = 1e-6
) -> torch.Tensor:
    """La otra convención válida: la desviación típica muestral (entre G − 1).

    Es la de ``torch.std`` por defecto y la que usa TRL; la del curso (y la de
    ``helpers.tinylm.grpo``) es la poblacional. Las dos son correctas.
    """
    rewards = torch.as_tensor(rewards, dtype=torch.float64)
    advantages = rewards - rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        advantages = advantages / (rewards.std(dim=-1, keepdim=True) + eps)
    return advantages


def _no_eps_unbiased(rewards: torch.Tensor, std_normalize: bool = False, eps=1e-6):
    advantages = rewards - rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        advantages = advantages / rewards.std(dim=-1, keepdim=True)
    return advantages


def _zero_std_test(unbiased: bool):
    """Dividir por σ solo si no es exactamente 0, en vez de sumar eps."""

    def wrapped(rewards: torch.Tensor, std_normalize: bool = False, eps=1e-6):
        advantages = rewards - rewards.mean(dim=-1, keepdim=True)
        if std_normalize:
            std = rewards.std(dim=-1, unbiased=unbiased, keepdim=True)
            advantages = advantages / torch.where(std == 0, torch.ones_like(std), std)
        return advantages

    return wrapped


def _informative(cases: list) -> list:
    """Los casos sin sus grupos unánimes: la convención de σ solo se ve en un
    grupo con σ > 0 (en uno unánime, aunque el redondeo separe sus notas en el
    último bit, las dos dan lo mismo: 0, el NaN de 0/0 o el mismo cociente de
    dos números diminutos)."""
    kept = []
    for rewards, std_normalize in cases:
        rewards = torch.as_tensor(rewards)
        spread = rewards.amax(dim=-1) - rewards.amin(dim=-1)
        mixed = rewards[spread > 1e-9]
        if len(mixed):
            kept.append((mixed, std_normalize))
    return kept


def _wrong_axis(rewards: torch.Tensor, std_normalize: bool = False, eps=1e-6):
    advantages = rewards - rewards.mean(dim=0, keepdim=True)
    if std_normalize:
        advantages = advantages / (
            rewards.std(dim=0, unbiased=False, keepdim=True) + eps
        )
    return advantages


def _never_std(rewards: torch.Tensor, std_normalize: bool = False, eps=1e-6):
    return ref_group_advantages(rewards, False, eps)


def _always_std(rewards: torch.Tensor, std_normalize: bool = False, eps=1e-6):
    return ref_group_advantages(rewards, True, eps)


_GROUP_MISTAKES: list[Mistake] = [
    Mistake(
        "advantages_batch_mean",
        _batch_mean,
        "Restaste la media de **todo el lote**: la línea base de GRPO es la "
        "media de cada grupo (cada fila, un enunciado), rewards.mean(dim=-1, "
        "keepdim=True).",
    ),
    Mistake(
        "advantages_no_eps",
        _no_eps,
        "Dividiste por una desviación típica que vale 0 en los grupos todo "
        "aciertos o todo fallos: 0/0 = NaN. Suma eps a la desviación.",
    ),
    Mistake(
        "advantages_no_eps_unbiased",
        _no_eps_unbiased,
        "Dividiste por una desviación típica que vale 0 en los grupos todo "
        "aciertos o todo fallos: 0/0 = NaN. Suma eps a la desviación.",
    ),
    *(
        Mistake(
            "advantages_zero_std_test",
            _zero_std_test(unbiased),
            "Comprobaste si la desviación es exactamente 0 (σ == 0) en lugar de "
            "sumar eps. Con recompensas que no son exactas en binario, un grupo "
            "unánime no tiene σ = 0: 0,1 + 0,2 y 0,3 son la misma nota, pero no "
            "el mismo float, y σ sale del orden de 10⁻¹⁷. Entonces (R − media)/σ, "
            "el cociente de dos restos del redondeo, sale del orden de 1 en lugar "
            "de 0. Divide siempre entre σ + eps.",
        )
        for unbiased in (False, True)
    ),
    Mistake(
        "advantages_sign",
        _sign,
        "El signo está al revés: ventaja = recompensa − media (los aciertos "
        "deben salir positivos).",
    ),
    Mistake(
        "advantages_wrong_axis",
        _wrong_axis,
        "Promediaste sobre el eje equivocado (dim=0, entre grupos): cada "
        "grupo es una fila, la media va por filas (dim=-1).",
    ),
    Mistake(
        "advantages_never_std",
        _never_std,
        "Con std_normalize=True hay que dividir además por la desviación "
        "típica del grupo (más eps).",
    ),
    Mistake(
        "advantages_always_std",
        _always_std,
        "Con std_normalize=False no se divide por la desviación (Dr. GRPO): "
        "solo se resta la media.",
    ),
]


@exercise(MODULE, "group_advantages")
def check_group_advantages(
    group_advantages: Callable[..., Any],
    std_normalize: bool | None = None,
    cases: list | None = None,
) -> None:
    """Comprueba ``group_advantages(rewards, std_normalize)``.

    ``std_normalize`` elige qué casos se miran (``None``: todos): la celda de
    la tabla a lápiz mira los de ``False`` y la de la desviación los de
    ``True``, así cada parte da sus puntos.

    Con ``std_normalize=True`` vale cualquiera de las dos desviaciones típicas:
    la poblacional (entre G, la del curso) o la muestral (entre G − 1, la de
    ``torch.std`` por defecto y la de TRL), siempre que la misma en todos los
    casos.
    """
    cases = list(cases or _GROUP_CASES)
    if std_normalize is not None:
        cases = [case for case in cases if case[1] == std_normalize]
    if matches_everywhere(group_advantages, cases, _unbiased_std_advantages, 1e-4):
        # La otra convención: también se comprueba que no toca su entrada
        check_cases(
            group_advantages,
            "group_advantages",
            cases,
            _unbiased_std_advantages,
            atol=1e-4,
        )
        return
    informative = _informative(cases)
    sample_sigma = matches_everywhere(
        group_advantages, informative, _unbiased_std_advantages, 1e-4, nan_ok=True
    ) and not matches_everywhere(
        group_advantages, informative, ref_group_advantages, 1e-4, nan_ok=True
    )
    if sample_sigma:
        # La desviación muestral, con otro error en los grupos unánimes (0/0
        # sin eps, o σ == 0 en vez de eps): los números del mensaje son los de
        # su convención, para que no parezca que es ella la que está mal.
        check_cases(
            group_advantages,
            "group_advantages",
            cases,
            _unbiased_std_advantages,
            _GROUP_MISTAKES,
            atol=1e-4,
        )
        return
    check_cases(
        group_advantages,
        "group_advantages",
        cases,
        ref_group_advantages,
        _GROUP_MISTAKES,
        atol=1e-4,
    )


# ---------------------------------------------------------------------------
# Ejercicio 5 · la pérdida de GRPO con máscara
# ---------------------------------------------------------------------------


def _loss_case(seed: int, batch: int, length: int, lengths: list[int]):
    generator = torch.Generator().manual_seed(seed)
    log_probs = -torch.rand(batch, length, generator=generator) * 3
    mask = torch.zeros(batch, length)
    for row, n in enumerate(lengths):
        mask[row, :n] = 1.0
    # En el relleno puede haber cualquier cosa: solo la máscara dice qué cuenta
    log_probs = torch.where(mask.bool(), log_probs, torch.full_like(log_probs, -7.0))
    advantages = torch.randn(batch, generator=generator)
    return log_probs, mask, advantages


_LOSS_CASES = [
    _loss_case(0, 4, 6, [6, 3, 1, 5]),
    _loss_case(1, 3, 5, [2, 5, 4]),
    _loss_case(2, 6, 4, [4, 4, 1, 2, 3, 4]),
    _loss_case(3, 1, 5, [3]),  # un lote de una sola respuesta
]


def _ref_loss(log_probs, mask, advantages):
    return ref_grpo_loss(log_probs, mask, advantages)


_LOSS_MISTAKES: list[Mistake] = [
    Mistake(
        "loss_no_mask",
        lambda lp, m, a: -(a * lp.sum(dim=-1)).mean(),
        "Contaste los tokens de relleno: multiplica las log-probabilidades por "
        "la máscara antes de sumar (el relleno no es parte de la respuesta).",
    ),
    Mistake(
        "loss_sign",
        lambda lp, m, a: (a * (lp * m).sum(dim=-1)).mean(),
        "El signo: el optimizador minimiza, así que la pérdida es "
        "−media(A · Σ log π). Sin el menos, los aciertos bajarían.",
    ),
    Mistake(
        "loss_wrong_axis",
        lambda lp, m, a: -(a * (lp * m).sum(dim=0)).mean(),
        "Sumaste las log-probabilidades sobre el eje equivocado (dim=0, entre "
        "respuestas): cada respuesta es una fila; suma sobre sus tokens, dim=-1.",
    ),
    Mistake(
        "loss_per_token_mean",
        lambda lp, m, a: -(a * (lp * m).sum(dim=-1) / m.sum(dim=-1)).mean(),
        "Promediaste por token dentro de cada respuesta: el ejercicio pide la "
        "suma de sus log-probabilidades (la log-probabilidad de la respuesta).",
    ),
    Mistake(
        "loss_mean_over_cells",
        lambda lp, m, a: -(a[:, None] * lp * m).mean(),
        "Dividiste por B · T (todas las casillas, relleno incluido): suma "
        "sobre los tokens de cada respuesta y promedia sobre las B respuestas.",
    ),
    Mistake(
        "loss_sum_not_mean",
        lambda lp, m, a: -(a * (lp * m).sum(dim=-1)).sum(),
        "Sumaste sobre las respuestas en lugar de promediar: divide por B.",
    ),
    Mistake(
        "loss_not_scalar",
        lambda lp, m, a: -(a * (lp * m).sum(dim=-1)),
        "Devolviste un término por respuesta, de forma (B,): la pérdida es un "
        "escalar, la media de esos B términos.",
    ),
]


def _call_with_gradient(function: Callable[..., Any], *args: Any) -> Any:
    """Llama con entradas que piden gradiente; un RuntimeError pasa a diagnóstico."""
    try:
        return function(*args)
    except RuntimeError as error:
        hint = ""
        if "in-place" in str(error):
            hint = (
                " Modificas una entrada en su sitio (+=, *=, x[...] = ...): "
                "calcula sobre valores nuevos."
            )
        elif "numpy" in str(error):
            hint = (
                " Un tensor con gradiente no pasa a NumPy: haz la cuenta con "
                "operaciones de PyTorch (torch.exp, .clamp, torch.where…) y "
                "corta con .detach() solo lo que el enunciado dice que no se "
                "deriva."
            )
        fail(
            "Con entradas que llevan gradiente, tu función lanzó RuntimeError: "
            f"{error}.{hint}",
            "raises_with_gradient",
        )


def _student_loss_with_gradient(grpo_loss, case, what="Tu pérdida"):
    """Llama a la pérdida con ``log_probs`` y ``advantages`` que piden gradiente."""
    log_probs, mask, advantages = (x.clone() for x in case)
    log_probs.requires_grad_(True)
    advantages.requires_grad_(True)  # como si viniera de una red: no debe derivarse
    loss = _call_with_gradient(grpo_loss, log_probs, mask, advantages)
    if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
        fail(
            f"{what} no tiene gradiente respecto a log_probs (¿.item(), float() "
            "o detach?): devuelve un tensor de PyTorch para poder hacer "
            "loss.backward().",
            "loss_without_gradient",
        )
    if loss.numel() != 1:
        fail(
            f"La pérdida debe ser un escalar; tiene forma {tuple(loss.shape)}: "
            "la media de los B términos, uno por respuesta.",
            "loss_not_scalar",
        )
    return loss, log_probs, mask, advantages


@exercise(MODULE, "grpo_loss")
def check_grpo_loss(grpo_loss: Callable[..., Any], cases: list | None = None) -> None:
    """Comprueba el **valor** de ``grpo_loss(log_probs, mask, advantages)``."""
    check_cases(
        grpo_loss,
        "grpo_loss",
        cases or _LOSS_CASES,
        _ref_loss,
        _LOSS_MISTAKES,
        atol=1e-5,
    )


@exercise(MODULE, "grpo_loss")
def check_grpo_loss_gradient(
    grpo_loss: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba los **gradientes** de ``grpo_loss``: a log_probs sí, a A no.

    El valor no se mira aquí (lo mira ``check_grpo_loss``): una pérdida con el
    valor mal pero el gradiente bien repartido saca los puntos de esta celda.
    """
    for case in cases or _LOSS_CASES[:2]:
        loss, log_probs, mask, advantages = _student_loss_with_gradient(grpo_loss, case)
        loss.reshape(()).backward()
        if advantages.grad is not None and advantages.grad.abs().max() > 0:
            fail(
                "La ventaja lleva gradiente: es un peso fijo, no algo que "
                "optimizar. Que la pérdida la use como una constante.",
                "loss_advantage_has_gradient",
            )
        if log_probs.grad is None:
            fail(
                "A log_probs no le llega ningún gradiente: tu pérdida sale de "
                "otro tensor. ¿Cortaste el grafo (detach, .data, torch.tensor(...)) "
                "y después pediste requires_grad_() a la copia? Eso crea un tensor "
                "nuevo, desconectado del modelo: calcula directamente con "
                "log_probs.",
                "loss_wrong_gradient",
            )
        reference = log_probs.detach().clone().requires_grad_(True)
        (expected,) = torch.autograd.grad(
            ref_grpo_loss(reference, mask, advantages.detach()), reference
        )
        if not close(log_probs.grad, expected, atol=1e-6):
            fail(
                "El gradiente respecto a log_probs debería ser −A_i · m_it / B "
                "(cero en el relleno). "
                + describe_difference(log_probs.grad, expected, atol=1e-6),
                "loss_wrong_gradient",
            )


# ---------------------------------------------------------------------------
# Ejercicio 6 · un paso de GRPO
# ---------------------------------------------------------------------------


#: El problema fijo de la comprobación: tres enunciados distintos (si fueran
#: iguales, mezclar los grupos no se notaría), G = 4 (con tantos enunciados
#: como respuestas por grupo, rewards.view(G, -1) daría los mismos grupos que
#: view(-1, G)), SGD con tasa 0,05.
UPDATE_PROBLEMS = [(17, 24), (12, 11), (47, 38)]
UPDATE_GROUP_SIZE = 4
UPDATE_LR = 0.05


def _update_variant(
    *,
    zero_grad=True,
    batch_mean=False,
    per_problem=False,
    clip_norm=None,
    tiled_prompts=False,
    tiled_problems=False,
    transposed_groups=False,
):
    """La referencia con un error típico. ``tiled_prompts``: los enunciados en
    mosaico (``.repeat``: 1, 2, 3, 1, 2, 3...), y ``tiled_problems``, la lista
    de problemas también (si no, va por bloques); ``clip_norm``: recortar la
    norma del gradiente (a 1, como el bucle de §11); ``transposed_groups``:
    los grupos de ``rewards.view(G, -1)``."""

    def update(model, optimizer, problems, group_size, generator):
        from helpers.tinylm import encode_prompts, rewards_for, sample, token_log_probs

        if tiled_prompts:
            prompts = encode_prompts(problems).repeat(group_size, 1)
        else:
            prompts = encode_prompts(problems).repeat_interleave(group_size, dim=0)
        if per_problem:
            parts = [
                sample(model, prompts[i : i + group_size], generator=generator)
                for i in range(0, len(prompts), group_size)
            ]
            sequences = torch.cat([part.sequences for part in parts])
            completions = torch.cat([part.completions for part in parts])
            mask = torch.cat([part.mask for part in parts])
            prompt_len = parts[0].prompt_len
        else:
            samples = sample(model, prompts, generator=generator)
            sequences, completions = samples.sequences, samples.completions
            mask, prompt_len = samples.mask, samples.prompt_len
        if tiled_problems:
            repeated = list(problems) * group_size
        else:
            repeated = [p for p in problems for _ in range(group_size)]
        rewards = rewards_for(completions, repeated)
        if batch_mean:
            advantages = rewards - rewards.mean()
        elif transposed_groups:
            advantages = ref_group_advantages(rewards.view(group_size, -1)).view(-1)
        else:
            advantages = ref_group_advantages(rewards.view(-1, group_size)).view(-1)
        log_probs = token_log_probs(model, sequences, prompt_len)
        loss = ref_grpo_loss(log_probs, mask, advantages)
        if zero_grad:
            optimizer.zero_grad()
        loss.backward()
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        optimizer.step()
        return rewards.mean().item()

    return update


_UPDATE_MISTAKES: list[Mistake] = [
    Mistake(
        "update_tiled_groups",
        _update_variant(tiled_prompts=True, tiled_problems=True),
        "Tus grupos mezclan enunciados: repetiste los enunciados en mosaico "
        "(1, 2, 3, 4, 1, 2...). Las G respuestas de cada enunciado deben ir "
        "seguidas, para que cada fila de rewards.view(-1, G) sea un grupo.",
    ),
    Mistake(
        "update_tiled_prompts",
        _update_variant(tiled_prompts=True),
        "Tus recompensas corrigen cada respuesta con otro problema: repetiste "
        "los enunciados en mosaico (.repeat: 1, 2, 3, 4, 1, 2...) pero la lista "
        "de problemas va por bloques (1, 1, 1, 1, 2...). Las filas de `prompts` "
        "deben ir por bloques, como la lista: repeat_interleave(G, dim=0), o "
        "construye la lista de enunciados repitiendo cada problema G veces.",
    ),
    Mistake(
        "update_transposed_groups",
        _update_variant(transposed_groups=True),
        "Agrupaste las recompensas con view(G, -1): así cada fila junta "
        "len(problems) recompensas seguidas, que no son un grupo. Las G "
        "respuestas de cada enunciado van seguidas, así que cada grupo es una "
        "fila de rewards.view(-1, G), o view(len(problems), G).",
    ),
    Mistake(
        "update_clipped_gradient",
        _update_variant(clip_norm=1.0),
        "Recortaste la norma del gradiente: en este ejercicio el paso va sin "
        "recortar (el enunciado lo fija, para que una respuesta correcta deje "
        "exactamente los mismos pesos). Quita el clip_grad_norm_.",
    ),
    Mistake(
        "update_no_zero_grad",
        _update_variant(zero_grad=False),
        "Los gradientes se acumulan de un paso a otro: PyTorch los suma en .grad "
        "hasta que alguien los pone a cero. Ponlos a cero antes de cada backward.",
    ),
    Mistake(
        "update_batch_mean",
        _update_variant(batch_mean=True),
        "Restaste la media de todo el lote: la línea base de GRPO es la media de "
        "cada grupo (las G respuestas del mismo enunciado).",
    ),
    Mistake(
        "update_sampled_per_problem",
        _update_variant(per_problem=True),
        "Muestreaste enunciado a enunciado: el enunciado pide una sola llamada a "
        "tl.sample con todo el lote. Con otro orden, el generador reparte sus "
        "números aleatorios de otra manera y salen otras respuestas.",
    ),
]


def _run_updates(update, steps: int, seed: int):
    """``steps`` pasos de ``update`` desde el modelo supervisado, con semilla."""
    from helpers.tinylm import load_pretrained

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = load_pretrained()
        optimizer = torch.optim.SGD(model.parameters(), lr=UPDATE_LR)
        generator = torch.Generator().manual_seed(seed)
        rewards = []
        for _ in range(steps):
            problems = list(UPDATE_PROBLEMS)
            rewards.append(
                update(model, optimizer, problems, UPDATE_GROUP_SIZE, generator)
            )
            if problems != UPDATE_PROBLEMS:
                fail(
                    "grpo_update modificó su argumento problems: al volver, la "
                    "lista ya no era la que le pasamos. Quien llama la sigue "
                    "usando; construye listas nuevas en vez de cambiarla.",
                    "update_modifies_problems",
                )
    finally:
        torch.set_num_threads(previous_threads)
    return model.state_dict(), rewards


def _run_diagnosed(update, steps: int, seed: int):
    """:func:`_run_updates`, con los RuntimeError de un paso mal montado
    convertidos en diagnóstico."""
    try:
        return _run_updates(update, steps, seed)
    except RuntimeError as error:
        text = str(error)
        if "does not require grad" in text:
            fail(
                "Tu pérdida no tiene gradiente: las log-probabilidades que trae "
                "tl.sample se calculan sin gradiente (son las del muestreo). "
                "Vuelve a calcularlas con el modelo que entrenas "
                "(tl.token_log_probs).",
                "update_log_probs_without_gradient",
            )
        if "dtype" in text:
            fail(
                f"Tu paso lanzó RuntimeError: {text}. ¿Recompensas de enteros? "
                "La media de un grupo necesita floats.",
                "update_integer_rewards",
            )
        raise


def _check_update(grpo_update, steps: int, seed: int) -> None:
    """``steps`` pasos del estudiante frente a la referencia, con el
    procedimiento común (:func:`check_procedure`): los parámetros que quedan,
    el error típico que los explica y, si coinciden, la recompensa devuelta."""
    what = (
        f"la red tras {steps} actualizaciones"
        if steps > 1
        else ("la red tras una actualización")
    )
    reference_rewards: list[Any] = []

    def run(update):
        state, rewards = _run_diagnosed(update, steps, seed)
        if update is ref_grpo_update:
            reference_rewards[:] = rewards
        return state, rewards

    def unexplained(got, want):
        # Sin error típico que lo explique, se dice qué parámetro difiere
        # primero y dónde.
        compare_parameters(
            got[0], want[0], what=what, mistake="update_wrong_parameters"
        )

    _, rewards = check_procedure(
        grpo_update,
        ref_grpo_update,
        _UPDATE_MISTAKES,
        run=run,
        same=lambda got, want: same_parameters(got[0], want[0]),
        describe=lambda got, want: (
            f"Los parámetros de {what} no son los de la referencia."
        ),
        same_as_mistake=lambda got, variant: same_parameters(variant[0], got[0]),
        unexplained=unexplained,
    )
    for reward in rewards:
        python_number(reward, "Lo que devuelve grpo_update (la recompensa media)")
    got_rewards = np.array([float(r) for r in rewards])
    if not close(got_rewards, np.array(reference_rewards), atol=1e-6):
        fail(
            "Los parámetros coinciden, pero lo que devuelves no es la recompensa "
            f"media del lote: devolviste {numbers(got_rewards, 4)} y era "
            f"{numbers(reference_rewards, 4)}.",
            "update_wrong_reward",
        )


@exercise(
    MODULE,
    "grpo_update",
    uses={"group_advantages": ref_group_advantages, "grpo_loss": ref_grpo_loss},
)
def check_grpo_update(grpo_update: Callable[..., Any], seed: int = 0) -> None:
    """Una actualización de ``grpo_update`` frente a la referencia (parámetros).

    Usa las referencias de ``group_advantages`` y ``grpo_loss`` mientras
    comprueba: un error en esos ejercicios no cuesta puntos aquí.
    """
    _check_update(grpo_update, steps=1, seed=seed)


@exercise(
    MODULE,
    "grpo_update",
    uses={"group_advantages": ref_group_advantages, "grpo_loss": ref_grpo_loss},
)
def check_grpo_update_steps(
    grpo_update: Callable[..., Any], steps: int = 3, seed: int = 0
) -> None:
    """Varias actualizaciones seguidas (con el mismo optimizador y generador)."""
    _check_update(grpo_update, steps=steps, seed=seed)


# ---------------------------------------------------------------------------
# Ejercicio 7 · el peso de importancia truncado
# ---------------------------------------------------------------------------


def _tis_case(seed: int, batch: int, length: int, lengths: list[int], cap: float):
    generator = torch.Generator().manual_seed(seed)
    sampler = -torch.rand(batch, length, generator=generator) * 2
    trainer = sampler + 0.8 * torch.randn(batch, length, generator=generator)
    mask = torch.zeros(batch, length)
    for row, n in enumerate(lengths):
        mask[row, :n] = 1.0
    sampler = sampler * mask
    trainer = trainer * mask  # como token_log_probs: 0 en el relleno
    return trainer, sampler, mask, cap


_TIS_CASES = [
    _tis_case(0, 3, 5, [5, 2, 4], 2.0),
    _tis_case(1, 4, 4, [1, 4, 3, 2], 1.5),
    _tis_case(2, 2, 6, [6, 3], 3.0),
]


def _tis_mistake(fn):
    def wrapped(trainer, sampler, mask, cap=2.0):
        return fn(trainer.detach(), sampler.detach(), mask, cap)

    return wrapped


_TIS_MISTAKES: list[Mistake] = [
    Mistake(
        "tis_ratio_inverted",
        _tis_mistake(lambda t, s, m, c: torch.exp(s - t).clamp(max=c) * m),
        "El cociente está al revés: el peso es π_entrenador / π_muestreador, "
        "exp(trainer_log_probs − sampler_log_probs).",
    ),
    Mistake(
        "tis_not_truncated",
        _tis_mistake(lambda t, s, m, c: torch.exp(t - s) * m),
        "No truncaste: el peso debe ser min(cociente, cap), para que un token "
        "raro del muestreador no domine la pérdida.",
    ),
    Mistake(
        "tis_clamped_below",
        _tis_mistake(lambda t, s, m, c: torch.exp(t - s).clamp(1 / c, c) * m),
        "Solo se trunca por arriba (min con cap): los pesos pequeños son la "
        "corrección de los tokens que el muestreador sobrevaloró.",
    ),
    Mistake(
        "tis_no_mask",
        _tis_mistake(lambda t, s, m, c: torch.exp(t - s).clamp(max=c)),
        "El relleno no es parte de la respuesta: multiplica por la máscara (su "
        "peso debe ser 0).",
    ),
    Mistake(
        "tis_integer_cap",
        _tis_mistake(lambda t, s, m, c: torch.exp(t - s).clamp(max=int(c)) * m),
        "El tope es un número real (1,5; 2,5...): al convertirlo a entero lo "
        "truncaste. Úsalo tal como llega.",
    ),
    Mistake(
        "tis_log_ratio",
        _tis_mistake(lambda t, s, m, c: (t - s).clamp(max=c) * m),
        "Eso es el log-cociente: el peso es su exponencial, exp(t − s).",
    ),
]


@exercise(MODULE, "truncated_importance_weights")
def check_truncated_importance_weights(
    truncated_importance_weights: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba el **valor** de ``truncated_importance_weights(...)``."""
    check_cases(
        truncated_importance_weights,
        "truncated_importance_weights",
        cases or _TIS_CASES,
        ref_tis,
        _TIS_MISTAKES,
        atol=1e-5,
    )


@exercise(MODULE, "truncated_importance_weights")
def check_truncated_importance_weights_gradient(
    truncated_importance_weights: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba que los pesos salen **sin gradiente** (son una constante)."""
    for case in cases or _TIS_CASES[:2]:
        trainer, sampler, mask, cap = (
            x.clone() if isinstance(x, torch.Tensor) else x for x in case
        )
        trainer.requires_grad_(True)
        sampler.requires_grad_(True)
        weights = _call_with_gradient(
            truncated_importance_weights, trainer, sampler, mask, cap
        )
        if isinstance(weights, torch.Tensor) and weights.requires_grad:
            fail(
                "Los pesos llevan gradiente: son una corrección de *qué* se "
                "muestreó, una constante para la pérdida. Córtales el gradiente "
                "a las dos log-probabilidades.",
                "tis_weights_have_gradient",
            )


# ---------------------------------------------------------------------------
# Ejercicio 8 · la penalización KL k3 por token
# ---------------------------------------------------------------------------


def _kl_case(
    seed: int,
    batch: int,
    length: int,
    lengths: list[int],
    padding: tuple[float, float] = (-0.5, -2.5),
):
    generator = torch.Generator().manual_seed(seed)
    log_probs = -torch.rand(batch, length, generator=generator) * 2
    ref_log_probs = log_probs + 0.6 * torch.randn(batch, length, generator=generator)
    mask = torch.zeros(batch, length)
    for row, n in enumerate(lengths):
        mask[row, :n] = 1.0
    # En el relleno puede haber cualquier valor finito: solo la máscara dice
    # qué cuenta
    log_probs = torch.where(
        mask.bool(), log_probs, torch.full_like(log_probs, padding[0])
    )
    ref_log_probs = torch.where(
        mask.bool(), ref_log_probs, torch.full_like(ref_log_probs, padding[1])
    )
    return log_probs, ref_log_probs, mask


_KL_CASES = [
    _kl_case(0, 3, 5, [5, 2, 4]),
    _kl_case(1, 4, 4, [1, 4, 3, 2]),
    _kl_case(2, 2, 6, [6, 3]),
]


def _kl_mistake(k3_of_log_rho, masked: bool = True, flip: bool = False):
    """Una versión errónea de la penalización: otra fórmula de log ρ."""

    def wrapped(log_probs, ref_log_probs, mask):
        log_rho = ref_log_probs.detach() - log_probs.detach()
        if flip:
            log_rho = -log_rho
        value = k3_of_log_rho(log_rho)
        if masked:
            return torch.where(mask.bool(), value, torch.zeros_like(value))
        return value

    return wrapped


_KL_MISTAKES: list[Mistake] = [
    Mistake(
        "kl_ratio_inverted",
        _kl_mistake(lambda x: torch.exp(x) - x - 1, flip=True),
        "El cociente va al revés: las respuestas salen de π_θ, así que "
        "ρ = π_ref / π_θ, log ρ = ref_log_probs − log_probs.",
    ),
    Mistake(
        "kl_k1",
        _kl_mistake(lambda x: -x),
        "Eso es k1 = log π_θ − log π_ref: también estima la KL, pero cada token "
        "puede ser negativo y es muy ruidoso. GRPO usa k3 = ρ − log ρ − 1.",
    ),
    Mistake(
        "kl_missing_minus_one",
        _kl_mistake(lambda x: torch.exp(x) - x),
        "Te falta el −1: k3 = ρ − log ρ − 1 vale 0 cuando las dos políticas "
        "coinciden (ρ = 1).",
    ),
    Mistake(
        "kl_log_added",
        _kl_mistake(lambda x: torch.exp(x) + x - 1),
        "El logaritmo se resta: k3 = ρ − log ρ − 1, que nunca es negativo "
        "porque log ρ ≤ ρ − 1.",
    ),
    Mistake(
        "kl_no_mask",
        _kl_mistake(lambda x: torch.exp(x) - x - 1, masked=False),
        "El relleno no es parte de la respuesta: su penalización debe ser 0, "
        "haya lo que haya en esas casillas: multiplica por la máscara (o elige "
        "con torch.where).",
    ),
    Mistake(
        "kl_k2",
        _kl_mistake(lambda x: 0.5 * x**2),
        "Eso es k2 = ½ (log ρ)²: el estimador que usa GRPO es k3 = ρ − log ρ − 1.",
    ),
]


@exercise(MODULE, "kl_penalty")
def check_kl_penalty(kl_penalty: Callable[..., Any], cases: list | None = None) -> None:
    """Comprueba el **valor** de ``kl_penalty(log_probs, ref_log_probs, mask)``."""
    check_cases(
        kl_penalty, "kl_penalty", cases or _KL_CASES, ref_k3_kl, _KL_MISTAKES, atol=1e-5
    )


@exercise(MODULE, "kl_penalty")
def check_kl_penalty_gradient(
    kl_penalty: Callable[..., Any], cases: list | None = None
) -> None:
    """Comprueba los **gradientes**: a log π_θ sí, (1 − ρ); a la referencia, no."""
    for case in cases or _KL_CASES[:2]:
        log_probs, ref_log_probs, mask = (x.clone() for x in case)
        log_probs.requires_grad_(True)
        ref_log_probs.requires_grad_(True)  # como si viniera de una red: congelada
        penalty = _call_with_gradient(kl_penalty, log_probs, ref_log_probs, mask)
        if not isinstance(penalty, torch.Tensor) or not penalty.requires_grad:
            fail(
                "Tu penalización no tiene gradiente respecto a log_probs "
                "(¿.item(), float() o detach?): es un término de la pérdida, así "
                "que debe poder hacer backward hasta π_θ.",
                "kl_without_gradient",
            )
        penalty.sum().backward()
        if ref_log_probs.grad is not None and ref_log_probs.grad.abs().max() > 0:
            fail(
                "Llega gradiente a ref_log_probs: el modelo de referencia está "
                "congelado, es el ancla. Que la penalización lo use como una "
                "constante.",
                "kl_gradient_to_reference",
            )
        reference = log_probs.detach().clone().requires_grad_(True)
        (expected,) = torch.autograd.grad(
            ref_k3_kl(reference, ref_log_probs.detach(), mask).sum(), reference
        )
        if log_probs.grad is None or not close(log_probs.grad, expected, atol=1e-5):
            hint = ""
            right_value = close(penalty.detach(), ref_k3_kl(*case), atol=1e-5)
            if (
                right_value
                and log_probs.grad is not None
                and close(log_probs.grad, mask, atol=1e-5)
            ):
                # El valor de k3 con el gradiente de −log ρ solo: ρ, cortado
                hint = (
                    " Te llega 1 en cada token: cortaste el gradiente de ρ. ρ "
                    "depende de π_θ; lo único constante es ref_log_probs."
                )
            fail(
                "El gradiente respecto a log_probs debería ser (1 − ρ) en la "
                "respuesta y 0 en el relleno." + hint,
                "kl_wrong_gradient",
            )


# ---------------------------------------------------------------------------
# Ejercicio 9 · las normalizaciones por longitud
# ---------------------------------------------------------------------------


def _norm_case(
    seed: int,
    lengths: list[int],
    length: int,
    normalization: str,
    padding: float = 9.0,
):
    generator = torch.Generator().manual_seed(seed)
    per_token = torch.randn(len(lengths), length, generator=generator)
    mask = torch.zeros(len(lengths), length)
    for row, n in enumerate(lengths):
        mask[row, :n] = 1.0
    # En el relleno puede haber cualquier valor finito
    per_token = torch.where(mask.bool(), per_token, torch.full_like(per_token, padding))
    return per_token, mask, normalization


_NORM_CASES = [
    _norm_case(seed, lengths, length, normalization, padding)
    for seed, (lengths, length, padding) in enumerate(
        # el último, un lote de una sola respuesta
        [([6, 2, 4], 6, 9.0), ([1, 5, 5, 3], 5, -40.0), ([3], 5, 2.0)]
    )
    for normalization in ("grpo", "dr_grpo", "token")
]


def _masked(x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """``x`` con 0 en el relleno, sin mirar qué había (también NaN)."""
    return torch.where(m.bool(), x, torch.zeros_like(x))


def _norm_with(branch: str, wrong: Callable[..., Any]):
    """La referencia, con la rama ``branch`` cambiada por ``wrong``."""

    def wrapped(per_token, mask, normalization):
        if normalization == branch:
            return wrong(per_token, mask)
        return ref_normalize_loss(per_token, mask, normalization)

    return wrapped


def _per_response_mean(x, m):
    return (_masked(x, m).sum(-1) / m.sum(-1)).mean()


def _swap(per_token, mask, normalization):
    swapped = {"grpo": "dr_grpo", "dr_grpo": "grpo"}.get(normalization, normalization)
    return ref_normalize_loss(per_token, mask, swapped)


_NORM_MISTAKES: list[Mistake] = [
    Mistake(
        "norm_grpo_padded_length",
        _norm_with("grpo", lambda x, m: (_masked(x, m).sum(-1) / m.shape[-1]).mean()),
        "Con «grpo» dividiste entre T, la longitud con relleno: cada respuesta "
        "se divide entre **su** longitud, |o_i| = mask.sum(dim=-1).",
    ),
    Mistake(
        "norm_grpo_counts_padding",
        _norm_with("grpo", lambda x, m: x.mean(dim=-1).mean()),
        "Con «grpo» contaste el relleno (x.mean(dim=-1)): multiplica por la "
        "máscara y divide entre |o_i| = mask.sum(dim=-1).",
    ),
    Mistake(
        "norm_dr_grpo_divides_by_length",
        _norm_with("dr_grpo", _per_response_mean),
        "Con «dr_grpo» no se divide entre la longitud de cada respuesta: ese es "
        "justo el sesgo que quita Dr. GRPO. Suma los tokens de cada respuesta y "
        "promedia sobre las B respuestas.",
    ),
    Mistake(
        "norm_dr_grpo_sum",
        _norm_with("dr_grpo", lambda x, m: _masked(x, m).sum()),
        "Con «dr_grpo» sumaste todo sin dividir: el normalizador es una "
        "constante, aquí el número B de respuestas (la media sobre ellas).",
    ),
    Mistake(
        "norm_token_per_response",
        _norm_with("token", _per_response_mean),
        "Con «token» (DAPO) todos los tokens del lote pesan igual: divide la "
        "suma total entre el total de tokens, no respuesta a respuesta.",
    ),
    Mistake(
        "norm_token_floor_division",
        _norm_with("token", lambda x, m: _masked(x, m).sum() // m.sum()),
        "Con «token» usaste la división entera (//): redondea hacia abajo. La "
        "pérdida es un número real; divide con /.",
    ),
    Mistake(
        "norm_token_counts_padding",
        _norm_with("token", lambda x, m: x.mean()),
        "Con «token» contaste el relleno (x.mean()): divide la suma con máscara "
        "entre mask.sum(), el número de tokens de verdad.",
    ),
    # El último: en una celda de una sola normalización, el error concreto de
    # esa rama dice más que «cambiados»
    Mistake(
        "norm_swapped",
        _swap,
        "Tienes «grpo» y «dr_grpo» cambiados: «grpo» divide la suma de cada "
        "respuesta entre su longitud |o_i|; «dr_grpo» no divide entre la "
        "longitud (suma los tokens de cada respuesta y promedia sobre las B).",
    ),
]


@exercise(MODULE, "normalize_loss")
def check_normalize_loss(
    normalize_loss: Callable[..., Any],
    normalization: str = "grpo",
    cases: list | None = None,
) -> None:
    """Comprueba ``normalize_loss(per_token_loss, mask, normalization)`` en una
    normalización (una celda calificada por cada una: crédito parcial)."""
    cases = cases or [c for c in _NORM_CASES if c[2] == normalization]
    check_cases(
        normalize_loss,
        "normalize_loss",
        cases,
        ref_normalize_loss,
        _NORM_MISTAKES,
        atol=1e-5,
    )
    per_token, mask, normalization = cases[0]
    per_token = per_token.clone().requires_grad_(True)
    loss = normalize_loss(per_token, mask, normalization)
    if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
        fail(
            "Tu pérdida no tiene gradiente (¿.item(), float() o detach?): "
            "devuelve un tensor de PyTorch para poder hacer loss.backward().",
            "normalize_without_gradient",
        )
