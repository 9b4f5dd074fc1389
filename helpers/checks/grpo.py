"""Comprobaciones del módulo 07 · GRPO en 17 × 24.

Las variantes de los errores típicos son las referencias de ``helpers.tinylm``
con otra entrada o la salida cambiada; las del paso de GRPO, la referencia con
una pieza cambiada. Los mensajes van en un bloque de texto por tabla, por id.
"""

from __future__ import annotations

import contextlib
import math
from unittest import mock

import numpy as np
import torch
from torch.nn import functional as F

from helpers.checks import (
    MUST,
    Diagnosis,
    Flow,
    Masked,
    Mistake,
    check_cases,
    check_gradients,
    check_procedure,
    compare_parameters,
    exercise,
    fail,
    gradients_check,
    negated,
    on_output,
    python_number,
    same_parameters,
    scaled,
    tensor,
    values_check,
    with_messages,
)
from helpers.formatting import numbers
from helpers.tinylm import grpo as tl_grpo
from helpers.tinylm import reference as ref
from helpers.tinylm import sampling as tl_sampling
from helpers.tinylm import task as tl_task
from helpers.tinylm.grpo import group_advantages as ref_group_advantages
from helpers.tinylm.grpo import grpo_loss as ref_grpo_loss
from helpers.tinylm.grpo import k3_kl as ref_k3_kl
from helpers.tinylm.grpo import normalize_loss as ref_normalize
from helpers.tinylm.offpolicy import truncated_importance_weights as ref_tis

MODULE = "07_grpo"

#: Lo que falta cuando una pérdida sale sin gradiente.
_BACKWARD = (
    "(¿.item(), float() o detach?): devuelve un tensor de PyTorch para poder hacer "
    "loss.backward()."
)


#: El id de un error lanzado con entradas que llevan gradiente (el banco lo espera).
_RAISED = Diagnosis(id="raises_with_gradient")


def _mask(lengths: list[int], length: int) -> torch.Tensor:
    return (torch.arange(length)[None, :] < torch.tensor(lengths)[:, None]).float()


# -- Ejercicio 1 · el camino en escala logarítmica y cuántas respuestas hay --


def _half(dtype):
    """El camino en media precisión: cada paso, su logaritmo y la suma."""
    return lambda p: float(torch.as_tensor(p, dtype=dtype).log().sum())


_PATH_MISTAKES = with_messages(
    """
path_log_of_product, path_log_of_product_numpy: Multiplicaste y después tomaste el
    logaritmo: donde el producto se queda en 0 (un camino largo), log(0) no existe
    (math.log lanza un error; np.log da −∞). Toma el logaritmo de cada paso y súmalos:
    así nunca se calcula el número diminuto.
path_probability: Devolviste la probabilidad (el producto): el ejercicio pide su
    logaritmo, la log-probabilidad del camino.
path_log10: Usaste log10: la log-probabilidad de los modelos (y la de la pérdida) usa el
    logaritmo natural.
path_mean_of_logs: Promediaste los logaritmos: el de un producto es la **suma** de los
    logaritmos de sus factores.
path_float16, path_bfloat16: Calculaste en media precisión (float16 o bfloat16): con 8
    bits de mantisa el logaritmo de cada paso ya sale con un error de milésimas, y en un
    camino largo se acumula. Usa float32 o float64.
""",
    Mistake(
        "path_log_of_product", on_output(ref.path_probability, math.log, "log"), ...
    ),
    Mistake(
        "path_log_of_product_numpy", on_output(ref.path_probability, np.log, "np"), ...
    ),
    Mistake("path_probability", ref.path_probability, ...),
    Mistake("path_log10", scaled(ref.path_log_probability, 1 / math.log(10)), ...),
    Mistake("path_mean_of_logs", lambda p: ref.path_log_probability(p) / len(p), ...),
    Mistake("path_float16", _half(torch.float16), ...),
    Mistake("path_bfloat16", _half(torch.bfloat16), ...),
)
#: Un camino corto, uno de 26 pasos en float32 (como los del modelo) y uno tan
#: largo que su producto se queda en 0.
_PATHS = [([0.6, 0.9, 0.7],), (np.array([0.95, 0.9, 0.5, 0.99]),)]
_PATHS += [(torch.full((26,), 0.93),), ([0.5] * 2000,)]
check_path_log_probability = values_check(
    MODULE, "path_log_probability", ref.path_log_probability, _PATH_MISTAKES, _PATHS
)

_LOG10_MISTAKES = with_messages(
    """
count_natural_log: Usaste el logaritmo natural (math.log): el exponente de 10 pide el
    logaritmo en base 10.
count_reversed: Lo calculaste al revés: hay vocab_size opciones en cada una de las
    length posiciones, vocab_size ** length, no length ** vocab_size.
count_product: Multiplicaste vocab_size × length: las opciones de cada posición se
    multiplican entre sí (una potencia), no por la longitud.
count_float_overflow: float(vocab_size) ** length desborda (OverflowError): el número
    tiene cientos de cifras. El logaritmo de una potencia se puede calcular sin calcular
    la potencia.
count_digits: Contaste las cifras de la potencia: eso es el exponente redondeado hacia
    abajo (solo coincide cuando vocab_size es 10, 100...). El ejercicio pide el
    exponente real, con sus decimales.
""",
    Mistake("count_natural_log", scaled(ref.log10_num_responses, math.log(10)), ...),
    Mistake("count_reversed", lambda v, n: ref.log10_num_responses(n, v), ...),
    Mistake("count_product", lambda v, n: ref.log10_num_responses(v * n, 1), ...),
    Mistake("count_float_overflow", lambda v, n: math.log10(float(v) ** n), ...),
    Mistake("count_digits", lambda v, n: len(str(v**n)) - 1, ...),
)
check_log10_num_responses = values_check(
    MODULE,
    "path_log_probability",
    ref.log10_num_responses,
    _LOG10_MISTAKES,
    [(150_000, 100), (10, 3), (15, 26), (50_257, 20)],
    name="log10_num_responses",
    check_name="check_log10_num_responses",
)


# -- Ejercicio 2 · el verificador --------------------------------------------


def _reading(cut, ascii_only: bool = True):
    """El verificador que lee como respuesta final ``cut(texto)``: vale 1 si son
    cifras y son a · b (con ``ascii_only=False``, cifras como las de isdigit)."""

    def verify(text, a, b):
        final = cut(text)
        digits = final.isdigit() and (final.isascii() or not ascii_only)
        return int(digits and int(final) == a * b)

    return verify


def _last(body: str) -> str:
    """Lo que sigue al último «=» (nada, si no hay)."""
    return body.rsplit("=", 1)[-1] if "=" in body else ""


def _first(text: str) -> str:
    """Lo que sigue al primer «=», hasta un «+» o el primer «.»."""
    if "." not in text or "=" not in text:
        return ""
    return text.split(".")[0].split("=")[1].split("+")[0]


_VERIFY_MISTAKES = with_messages(
    """
verify_keeps_dot: Te quedaste con el punto final pegado al número («408.»), y eso ya no
    es un número: la respuesta final va entre el último «=» y el punto.
verify_first_equals: Miras el número tras el primer «=»; la respuesta final es la que
    sigue al último.
verify_find_without_check: Cortaste en text.find(".") sin mirar si había punto: sin
    punto, find devuelve −1 y text[:−1] se come el último carácter («…=4080» pasa a
    «…=408»). Una respuesta sin punto final está cortada y vale 0.
verify_requires_final_dot: La respuesta acaba en el **primer** punto (el token de fin) y
    lo que venga detrás no cuenta: «…=408.+7» vale 1, aunque el texto no acabe en «.».
    Corta el texto en ese punto y busca el último «=» antes de él.
verify_isdigit: isdigit() también dice que sí a cifras como «²», que int() no sabe leer:
    «…=408².» lanza ValueError. Comprueba que son las cifras 0–9 (isascii() y isdigit(),
    o una expresión regular), o convierte dentro de un try/except ValueError.
verify_no_end_check: Quitaste todos los puntos antes de leer el número, y con ellos se
    va el final de la respuesta: acaba en el **primer** «.» (el token de fin) y lo de
    detrás no cuenta («…=408.+7» vale 1, «…=40.8.» vale 0). Una respuesta sin punto
    quedó cortada (el modelo no terminó): vale 0 aunque los dígitos coincidan.
verify_strips_end: Quitaste el punto del final (rstrip) sin comprobar que estaba: una
    respuesta sin punto quedó cortada (el modelo no terminó) y vale 0 aunque los dígitos
    coincidan. Además, la respuesta acaba en el **primer** «.»: lo de detrás no cuenta
    («…=408.+7» vale 1).
verify_substring: Buscas el producto en cualquier parte del texto: una respuesta que
    escribe 408 por el camino y acaba en 398 no es correcta. Mira solo el número tras el
    último «=».
verify_raises: El verificador nunca debe lanzar una excepción: una respuesta mal formada
    (sin «=», o con algo que no es un número al final) vale 0.
""",
    Mistake("verify_keeps_dot", _reading(lambda t: t.rsplit("=", 1)[-1]), ...),
    Mistake("verify_first_equals", _reading(_first), ...),
    Mistake(
        "verify_find_without_check",
        _reading(lambda t: _last(t[: t.find(".")]), ascii_only=False),
        ...,
    ),
    Mistake(
        "verify_requires_final_dot",
        _reading(lambda t: _last(t[:-1]) if t.endswith(".") else ""),
        ...,
    ),
    Mistake(
        "verify_isdigit",
        _reading(lambda t: _last(t.split(".")[0]) if "." in t else "", False),
        ...,
    ),
    Mistake(
        "verify_no_end_check",
        _reading(lambda t: t.replace(".", "").rsplit("=", 1)[-1]),
        ...,
    ),
    Mistake(
        "verify_strips_end", _reading(lambda t: t.rsplit("=", 1)[-1].rstrip(".")), ...
    ),
    Mistake("verify_substring", lambda t, a, b: int(str(a * b) in t), ...),
    Mistake(
        "verify_raises",
        lambda t, a, b: int(int(t.split(".")[0].rsplit("=", 1)[1]) == a * b),
        ...,
    ),
)

#: Respuestas bien formadas (con «=» y punto final): ¿acierta el número final?
#: Lo que sigue al primer «.» no cuenta: el modelo ya había terminado.
check_verify = values_check(
    MODULE,
    "verify",
    tl_task.verify,
    _VERIFY_MISTAKES,
    [
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
    ],
    returns="int",
)
#: Respuestas mal formadas: cortadas, sin «=», sin número al final, vacías; la
#: última acaba en el primer «.», sin «=» antes (quitar los puntos la arregla).
check_verify_malformed = values_check(
    MODULE,
    "verify",
    tl_task.verify,
    _VERIFY_MISTAKES,
    [
        ("17×20+17×4=340+68=408", 17, 24),
        ("17×20+17×4=340+68=4080", 17, 24),
        ("408.", 17, 24),
        ("17×20+17×4=340+68=.", 17, 24),
        ("17×20+17×4=340+68=408².", 17, 24),
        ("17×20+17×4=340+68=4", 17, 24),
        ("", 17, 24),
        ("17×20.+17×4=340+68=40.8", 17, 24),
    ],
    check_name="check_verify_malformed",
    doc="``verify`` da 0, sin lanzar, a las respuestas mal formadas.",
    returns="int",
)


# -- Ejercicio 3 · el empujón 1 − p sobre el logit propio ----------------------


def _probs(logits):
    return torch.as_tensor(logits, dtype=torch.float64).softmax(-1)


def _own(logits, token):
    """1 en el logit del token elegido, 0 en los demás."""
    return F.one_hot(torch.tensor(token), len(logits)).double()


_PUSH_MISTAKES = with_messages(
    """
push_sign: El signo: con ventaja positiva el logit del token elegido **sube** (A · (1 −
    p)) y los demás bajan (−A · p).
push_own_only: Solo moviste el logit del token elegido: los demás también se mueven,
    cada uno baja A · p_otro (el gradiente de la softmax los toca a todos).
push_no_advantage: Olvidaste la ventaja: todo el empujón se multiplica por A (con A < 0
    el token baja).
push_probability_gradient: Derivaste la probabilidad p y no su logaritmo: la pérdida usa
    log π, y el gradiente de log softmax es one_hot − p, sin el factor p delante.
push_p_not_one_minus_p: El logit propio sube A · (1 − p), lo que le faltaba al modelo
    para estar seguro, no A · p.
""",
    Mistake("push_sign", negated(ref.logit_push), ...),
    Mistake("push_own_only", lambda z, t, a: ref.logit_push(z, t, a) * _own(z, t), ...),
    Mistake("push_no_advantage", lambda z, t, a: ref.logit_push(z, t, 1.0), ...),
    Mistake(
        "push_probability_gradient",
        lambda z, t, a: ref.logit_push(z, t, a) * _probs(z)[t],
        ...,
    ),
    Mistake(
        "push_p_not_one_minus_p",
        lambda z, t, a: a * _probs(z) * (2 * _own(z, t) - 1),
        ...,
    ),
)
_LOGITS = torch.tensor([2.0, 0.5, -1.0, 0.0])
check_logit_push = values_check(
    MODULE,
    "logit_push",
    ref.logit_push,
    _PUSH_MISTAKES,
    [(_LOGITS, 0, 1.0), (_LOGITS, 2, 1.0), (torch.tensor([0.3, 0.1, 3.0]), 1, -0.75)]
    + [(torch.ones(5), 4, 0.5)],
    atol=1e-5,
)


# -- Ejercicio 4 · ventajas de grupo ---------------------------------------------

_GROUP_CASES = [
    (tensor(rows, dtype), std_normalize)
    for rows, std_normalize, dtype in [
        ([[0, 1, 1, 0]], False, None),
        ([[1, 1, 1, 1], [0, 0, 0, 0]], False, None),
        ([[1, 1, 0, 1]], False, None),
        ([[0, 1, 1], [1, 0, 0]], False, None),
        ([[0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 1, 0]], False, None),
        ([[0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 1, 0]], True, None),
        ([[1, 1, 1, 1], [0, 0, 0, 0], [0, 1, 0, 0]], True, None),
        ([[0.5, 2.0, -1.0], [3.0, 3.0, 3.0]], True, None),
        # Recompensas que no son exactas en binario: 0,1 + 0,2 y 0,3 son la misma
        # nota, pero no el mismo float: el grupo unánime tiene σ ~ 10⁻¹⁷, no 0
        ([[0.1 + 0.2, 0.3, 0.3, 0.1 + 0.2], [0.1, 0.3, 0.2, 0.1]], True, torch.float64),
    ]
]


def _sample_std(variant):
    """``variant`` con la desviación muestral (entre G − 1): σ_s = c · σ con
    c = √(G / (G − 1)), así que (R − media) / (σ_s + eps) es la variante con
    eps / c, dividida entre c."""

    def wrapped(rewards, std_normalize=False, eps=1e-6):
        if not std_normalize:
            return variant(rewards, False, eps)
        c = (rewards.shape[-1] / (rewards.shape[-1] - 1)) ** 0.5
        return variant(rewards, True, eps / c) / c

    return wrapped


def _no_eps(rewards, std_normalize=False, eps=1e-6):
    return ref_group_advantages(rewards, std_normalize, 0.0)


#: Preguntar σ == 0 en lugar de sumar eps: donde σ es 0 exacto sale 0/0 = NaN,
#: y el grupo unánime lo cambia por 0; donde no, lo mismo que sin eps.
_zero_std_test = on_output(_no_eps, torch.nan_to_num, "σ == 0")
_GROUP_MISTAKES = with_messages(
    """
advantages_batch_mean: Restaste la media de **todo el lote**: la línea base de GRPO es
    la media de cada grupo (cada fila, un enunciado), rewards.mean(dim=-1,
    keepdim=True).
advantages_no_eps, advantages_no_eps_unbiased: Dividiste por una desviación típica que
    vale 0 en los grupos todo aciertos o todo fallos: 0/0 = NaN. Suma eps a la
    desviación.
advantages_zero_std_test: Comprobaste si la desviación es exactamente 0 (σ == 0) en
    lugar de sumar eps. Con recompensas que no son exactas en binario, un grupo unánime
    no tiene σ = 0: 0,1 + 0,2 y 0,3 son la misma nota, pero no el mismo float, y σ sale
    del orden de 10⁻¹⁷. Entonces (R − media)/σ, el cociente de dos restos del redondeo,
    sale del orden de 1 en lugar de 0. Divide siempre entre σ + eps.
advantages_sign: El signo está al revés: ventaja = recompensa − media (los aciertos
    deben salir positivos).
advantages_wrong_axis: Promediaste sobre el eje equivocado (dim=0, entre grupos): cada
    grupo es una fila, la media va por filas (dim=-1).
advantages_never_std: Con std_normalize=True hay que dividir además por la desviación
    típica del grupo (más eps).
advantages_always_std: Con std_normalize=False no se divide por la desviación (Dr.
    GRPO): solo se resta la media.
""",
    Mistake(
        "advantages_batch_mean",
        lambda r, s: ref_group_advantages(r.reshape(1, -1), s).reshape(r.shape),
        ...,
    ),
    Mistake("advantages_no_eps", _no_eps, ...),
    Mistake("advantages_no_eps_unbiased", _sample_std(_no_eps), ...),
    Mistake("advantages_zero_std_test", _zero_std_test, ...),
    Mistake("advantages_zero_std_test", _sample_std(_zero_std_test), ...),
    Mistake("advantages_sign", negated(ref_group_advantages), ...),
    Mistake("advantages_wrong_axis", lambda r, s: ref_group_advantages(r.T, s).T, ...),
    Mistake("advantages_never_std", lambda r, s: ref_group_advantages(r, False), ...),
    Mistake("advantages_always_std", lambda r, s: ref_group_advantages(r, True), ...),
)


@exercise(MODULE, "group_advantages")
def check_group_advantages(group_advantages, std_normalize=None, cases=None):
    """``group_advantages(rewards, std_normalize)`` en los casos con ese
    ``std_normalize`` (``None``: todos); vale la desviación poblacional o la
    muestral (la de ``torch.std`` y TRL), la misma en todos los casos."""
    check_cases(
        group_advantages,
        "group_advantages",
        [c for c in cases or _GROUP_CASES if std_normalize in (None, c[1])],
        (ref_group_advantages, _sample_std(ref_group_advantages)),
        _GROUP_MISTAKES,
        atol=1e-4,
    )


# -- Ejercicio 5 · la pérdida de GRPO con máscara ------------------------------


def _loss_case(seed: int, length: int, lengths: list[int]):
    generator = torch.Generator().manual_seed(seed)
    log_probs = -torch.rand(len(lengths), length, generator=generator) * 3
    advantages = torch.randn(len(lengths), generator=generator)
    return log_probs, _mask(lengths, length), advantages


_LOSS_CASES = [_loss_case(0, 6, [6, 3, 1, 5]), _loss_case(1, 5, [2, 5, 4])]
_LOSS_CASES.append(_loss_case(2, 4, [4, 4, 1, 2, 3, 4]))
_LOSS_MISTAKES = with_messages(
    """
loss_no_mask: Contaste los tokens de relleno: multiplica las log-probabilidades por la
    máscara antes de sumar (el relleno no es parte de la respuesta).
loss_sign: El signo: el optimizador minimiza, así que la pérdida es −media(A · Σ log π).
    Sin el menos, los aciertos bajarían.
loss_wrong_axis: Sumaste las log-probabilidades sobre el eje equivocado (dim=0, entre
    respuestas): cada respuesta es una fila; suma sobre sus tokens, dim=-1.
loss_per_token_mean: Promediaste por token dentro de cada respuesta: el ejercicio pide
    la suma de sus log-probabilidades (la log-probabilidad de la respuesta).
loss_mean_over_cells: Dividiste por B · T (todas las casillas, relleno incluido): suma
    sobre los tokens de cada respuesta y promedia sobre las B respuestas.
loss_sum_not_mean: Sumaste sobre las respuestas en lugar de promediar: divide por B.
loss_not_scalar: Devolviste un término por respuesta, de forma (B,): la pérdida es un
    escalar, la media de esos B términos.
""",
    Mistake(
        "loss_no_mask", lambda x, m, a: ref_grpo_loss(x, torch.ones_like(m), a), ...
    ),
    Mistake("loss_sign", negated(ref_grpo_loss), ...),
    Mistake(
        "loss_wrong_axis", lambda x, m, a: -(a.detach() * (x * m).sum(0)).mean(), ...
    ),
    Mistake(
        "loss_per_token_mean",
        lambda x, m, a: ref_grpo_loss(x, m / m.sum(dim=-1, keepdim=True), a),
        ...,
    ),
    Mistake(
        "loss_mean_over_cells",
        lambda x, m, a: ref_grpo_loss(x, m, a) / m.shape[-1],
        ...,
    ),
    Mistake("loss_sum_not_mean", lambda x, m, a: ref_grpo_loss(x, m, a) * len(a), ...),
    Mistake("loss_not_scalar", lambda x, m, a: -(a.detach() * (x * m).sum(-1)), ...),
)
check_grpo_loss = values_check(
    MODULE,
    "grpo_loss",
    ref_grpo_loss,
    _LOSS_MISTAKES,
    _LOSS_CASES,
    atol=1e-5,
    # El enunciado: en el relleno de log_probs, cualquier valor finito
    masked=Masked(
        "mask", ("log_probs",), "finite", "loss_no_mask", batched=("advantages",)
    ),
)


check_grpo_loss_gradient = gradients_check(
    MODULE,
    "grpo_loss",
    ref_grpo_loss,
    _LOSS_MISTAKES,
    _LOSS_CASES[:2],
    check_name="check_grpo_loss_gradient",
    aspect=None,
    doc="Los **gradientes** de ``grpo_loss``: a log_probs sí, a la ventaja no.",
    prefix="loss",
    wrt={
        "log_probs": Flow(
            True,
            id="loss_wrong_gradient",
            message="A log_probs no le llega ningún gradiente: tu pérdida sale de "
            "otro tensor. ¿Cortaste el grafo (detach, .data, torch.tensor(...)) y "
            "después pediste requires_grad_() a la copia? Eso crea un tensor "
            "nuevo, desconectado del modelo: calcula directamente con log_probs.",
        ),
        "advantages": Flow(
            False,
            id="loss_advantage_has_gradient",
            message="La ventaja lleva gradiente: es un peso fijo, no algo que "
            "optimizar. Que la pérdida la use como una constante.",
        ),
    },
    mistake="loss_wrong_gradient",
    hint="El gradiente respecto a log_probs debería ser −A_i · m_it / B (cero en "
    "el relleno).",
    without_gradient=Diagnosis(
        id="loss_without_gradient",
        message=f"Tu pérdida no tiene gradiente respecto a log_probs {_BACKWARD}",
    ),
    wrong_shape=Diagnosis(
        id="loss_not_scalar",
        message="La pérdida es un escalar: la media de los B términos, uno por "
        "respuesta.",
    ),
    raised=_RAISED,
)


# -- Ejercicio 6 · un paso de GRPO ---------------------------------------------

#: El problema fijo: tres enunciados distintos (si fueran iguales, mezclar los
#: grupos no se notaría), G = 4 (con tantos enunciados como respuestas por
#: grupo, view(G, -1) daría los mismos grupos que view(-1, G)), SGD con 0,05.
UPDATE_PROBLEMS, UPDATE_GROUP_SIZE, UPDATE_LR = [(17, 24), (12, 11), (47, 38)], 4, 0.05
_G = UPDATE_GROUP_SIZE
_sample, _rewards_for = tl_sampling.sample, tl_task.rewards_for
#: Dónde busca ``grpo_update`` cada función de ``helpers.tinylm`` que usa.
_WHERE = {"sample": tl_sampling, "rewards_for": tl_task, "group_advantages": tl_grpo}


def _update_with(**pieces):
    """``grpo_update`` de referencia con unas piezas cambiadas mientras corre
    (como ``patched``): funciones de ``helpers.tinylm`` o, si no, métodos del
    optimizador, dados como ``f(optimizer)``."""

    def variant(model, optimizer, *args):
        with contextlib.ExitStack() as stack:
            for name, piece in pieces.items():
                owner = _WHERE.get(name, optimizer)
                new = piece if name in _WHERE else piece(optimizer)
                stack.enter_context(mock.patch.object(owner, name, new))
            return ref.grpo_update(model, optimizer, *args)

    return variant


def _tiled(model, prompts, **options):
    """``sample`` con los enunciados en mosaico (1, 2, 3, 1, 2, 3...)."""
    tiled = prompts.reshape(-1, _G, prompts.shape[-1]).transpose(0, 1)
    return _sample(model, tiled.flatten(0, 1), **options)


def _per_problem(model, prompts, **options):
    """``sample`` llamada enunciado a enunciado, G filas cada vez."""
    parts = [_sample(model, rows, **options) for rows in prompts.split(_G)]
    return tl_sampling.Samples(*map(torch.cat, zip(*parts, strict=True)))


def _clipped(optimizer):
    """``optimizer.step`` tras recortar la norma del gradiente a 1."""
    step, groups = optimizer.step, optimizer.param_groups
    clip = torch.nn.utils.clip_grad_norm_
    return lambda: (clip([p for g in groups for p in g["params"]], 1.0), step())


_UPDATE_MISTAKES = with_messages(
    """
update_tiled_groups: Tus grupos mezclan enunciados: repetiste los enunciados en mosaico
    (1, 2, 3, 4, 1, 2...). Las G respuestas de cada enunciado deben ir seguidas, para
    que cada fila de rewards.view(-1, G) sea un grupo.
update_tiled_prompts: Tus recompensas corrigen cada respuesta con otro problema:
    repetiste los enunciados en mosaico (.repeat: 1, 2, 3, 4, 1, 2...) pero la lista de
    problemas va por bloques (1, 1, 1, 1, 2...). Las filas de `prompts` deben ir por
    bloques, como la lista: repeat_interleave(G, dim=0), o construye la lista de
    enunciados repitiendo cada problema G veces.
update_transposed_groups: Agrupaste las recompensas con view(G, -1): así cada fila junta
    len(problems) recompensas seguidas, que no son un grupo. Las G respuestas de cada
    enunciado van seguidas, así que cada grupo es una fila de rewards.view(-1, G), o
    view(len(problems), G).
update_clipped_gradient: Recortaste la norma del gradiente: en este ejercicio el paso va
    sin recortar (el enunciado lo fija, para que una respuesta correcta deje exactamente
    los mismos pesos). Quita el clip_grad_norm_.
update_no_zero_grad: Los gradientes se acumulan de un paso a otro: PyTorch los suma en
    .grad hasta que alguien los pone a cero. Ponlos a cero antes de cada backward.
update_batch_mean: Restaste la media de todo el lote: la línea base de GRPO es la media
    de cada grupo (las G respuestas del mismo enunciado).
update_sampled_per_problem: Muestreaste enunciado a enunciado: el enunciado pide una
    sola llamada a tl.sample con todo el lote. Con otro orden, el generador reparte sus
    números aleatorios de otra manera y salen otras respuestas.
""",
    Mistake(
        "update_tiled_groups",
        _update_with(
            sample=_tiled, rewards_for=lambda c, p: _rewards_for(c, p[::_G] * _G)
        ),
        ...,
    ),
    Mistake("update_tiled_prompts", _update_with(sample=_tiled), ...),
    Mistake(
        "update_transposed_groups",
        _update_with(
            group_advantages=lambda r: ref_group_advantages(r.view(_G, -1)).view(-1)
        ),
        ...,
    ),
    Mistake("update_clipped_gradient", _update_with(step=_clipped), ...),
    Mistake("update_no_zero_grad", _update_with(zero_grad=lambda o: lambda: None), ...),
    Mistake(
        "update_batch_mean", _update_with(group_advantages=lambda r: r - r.mean()), ...
    ),
    Mistake("update_sampled_per_problem", _update_with(sample=_per_problem), ...),
)


def _run_updates(update, steps: int, seed: int):
    """``steps`` pasos de ``update`` desde el modelo supervisado, con semilla:
    los pesos que quedan y las recompensas devueltas."""
    from helpers.tinylm import load_pretrained

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = load_pretrained()
        optimizer = torch.optim.SGD(model.parameters(), lr=UPDATE_LR)
        generator = torch.Generator().manual_seed(seed)
        rewards = []
        for _ in range(steps):
            problems = list(UPDATE_PROBLEMS)
            rewards.append(update(model, optimizer, problems, _G, generator))
            if problems != UPDATE_PROBLEMS:
                fail(
                    "grpo_update modificó su argumento problems: al volver, la lista "
                    "ya no era la que le pasamos. Quien llama la sigue usando; "
                    "construye listas nuevas en vez de cambiarla.",
                    "update_modifies_problems",
                )
    except RuntimeError as error:
        if "does not require grad" in str(error):
            fail(
                "Tu pérdida no tiene gradiente: las log-probabilidades que trae "
                "tl.sample se calculan sin gradiente (son las del muestreo). Vuelve a "
                "calcularlas con el modelo que entrenas (tl.token_log_probs).",
                "update_log_probs_without_gradient",
            )
        if "dtype" in str(error):
            fail(
                f"Tu paso lanzó RuntimeError: {error}. ¿Recompensas de enteros? La "
                "media de un grupo necesita floats.",
                "update_integer_rewards",
            )
        raise
    finally:
        torch.set_num_threads(threads)
    return model.state_dict(), rewards


_UPDATE_USES = {"group_advantages": ref_group_advantages, "grpo_loss": ref_grpo_loss}


@exercise(MODULE, "grpo_update", uses=_UPDATE_USES)
def check_grpo_update(grpo_update, seed=0, steps=1):
    """``steps`` actualizaciones de ``grpo_update`` frente a la referencia (los
    pesos y la recompensa devuelta), con las referencias de ``group_advantages`` y
    ``grpo_loss``."""
    what = "la red tras " + (
        f"{steps} actualizaciones" if steps > 1 else "una actualización"
    )
    runs = {}
    _, rewards = check_procedure(
        grpo_update,
        ref.grpo_update,
        _UPDATE_MISTAKES,
        run=lambda update: runs.setdefault(update, _run_updates(update, steps, seed)),
        same=lambda got, want: same_parameters(got[0], want[0]),
        describe=lambda got, want: (
            f"Los parámetros de {what} no son los que da el paso correcto."
        ),
        same_as_mistake=lambda got, variant: same_parameters(variant[0], got[0]),
        unexplained=lambda got, want: compare_parameters(
            got[0], want[0], what=what, mistake="update_wrong_parameters"
        ),
    )
    for reward in rewards:
        python_number(reward, "Lo que devuelve grpo_update (la recompensa media)")
    got, want = np.array([float(r) for r in rewards]), runs[ref.grpo_update][1]
    if not np.allclose(got, want, atol=1e-6):
        fail(
            "Los parámetros coinciden, pero lo que devuelves no es la recompensa media "
            f"del lote: devolviste {numbers(got, 4)} y era {numbers(want, 4)}.",
            "update_wrong_reward",
        )


@exercise(MODULE, "grpo_update", uses=_UPDATE_USES)
def check_grpo_update_steps(grpo_update, steps=3, seed=0):
    """Varias actualizaciones seguidas (con el mismo optimizador y generador)."""
    check_grpo_update.__wrapped__(grpo_update, seed=seed, steps=steps)


# -- Ejercicio 7 · el peso de importancia truncado ----------------------------

#: Los lotes de los ejercicios 7 y 8: la longitud T y la de cada respuesta.
_SHAPES = [(5, [5, 2, 4]), (4, [1, 4, 3, 2]), (6, [6, 3])]


def _log_probs_pairs(spread: float):
    """En cada lote de ``_SHAPES``, dos log-probabilidades por token (la segunda,
    la primera más ruido de escala ``spread``) y la máscara."""
    pairs = []
    for seed, (length, lengths) in enumerate(_SHAPES):
        generator = torch.Generator().manual_seed(seed)
        first = -torch.rand(len(lengths), length, generator=generator) * 2
        second = first + spread * torch.randn(len(lengths), length, generator=generator)
        pairs.append((first, second, _mask(lengths, length)))
    return pairs


_TIS_CASES = [
    (t * m, s * m, m, cap)  # entrenador y muestreador, con 0 en el relleno
    for (s, t, m), cap in zip(_log_probs_pairs(0.8), (2.0, 1.5, 3.0), strict=True)
]
_TIS_MISTAKES = with_messages(
    """
tis_ratio_inverted: El cociente está al revés: el peso es π_entrenador / π_muestreador,
    exp(trainer_log_probs − sampler_log_probs).
tis_not_truncated: No truncaste: el peso debe ser min(cociente, cap), para que un token
    raro del muestreador no domine la pérdida.
tis_clamped_below: Solo se trunca por arriba (min con cap): los pesos pequeños son la
    corrección de los tokens que el muestreador sobrevaloró.
tis_no_mask: El relleno no es parte de la respuesta: multiplica por la máscara (su peso
    debe ser 0).
tis_integer_cap: El tope es un número real (1,5; 2,5...): al convertirlo a entero lo
    truncaste. Úsalo tal como llega.
tis_log_ratio: Eso es el log-cociente: el peso es su exponencial, exp(t − s).
""",
    Mistake("tis_ratio_inverted", lambda t, s, m, c: ref_tis(s, t, m, c), ...),
    Mistake("tis_not_truncated", lambda t, s, m, c: ref_tis(t, s, m, math.inf), ...),
    Mistake(
        "tis_clamped_below",
        lambda t, s, m, c: ref_tis(t, s, m, c).clamp(min=1 / c) * m,
        ...,
    ),
    Mistake(
        "tis_no_mask", lambda t, s, m, c: ref_tis(t, s, torch.ones_like(m), c), ...
    ),
    Mistake("tis_integer_cap", lambda t, s, m, c: ref_tis(t, s, m, int(c)), ...),
    Mistake("tis_log_ratio", lambda t, s, m, c: (t - s).clamp(max=c) * m, ...),
)
check_truncated_importance_weights = values_check(
    MODULE,
    "truncated_importance_weights",
    ref_tis,
    _TIS_MISTAKES,
    _TIS_CASES,
    atol=1e-5,
)


#: Los pesos no llevan gradiente hacia ninguna de las dos log-probabilidades.
_TIS_CONSTANT = Flow(
    False,
    id="tis_weights_have_gradient",
    message="Los pesos llevan gradiente: son una corrección de *qué* se muestreó, "
    "una constante para la pérdida. Córtales el gradiente a las dos "
    "log-probabilidades.",
)


@exercise(MODULE, "truncated_importance_weights")
def check_truncated_importance_weights_gradient(
    truncated_importance_weights, cases=None
):
    """Los pesos salen **sin gradiente** (son una constante). La máscara va
    copiada: si se modifica, lo dice la comprobación de los valores."""
    check_gradients(
        lambda t, s, m, c: truncated_importance_weights(t, s, m.clone(), c),
        "truncated_importance_weights",
        cases or _TIS_CASES[:2],
        ref_tis,
        prefix="tis",
        wrt={"trainer_log_probs": _TIS_CONSTANT, "sampler_log_probs": _TIS_CONSTANT},
        raised=_RAISED,
    )


# -- Ejercicio 8 · la penalización KL k3 por token ----------------------------

_KL_CASES = _log_probs_pairs(0.6)


def _kl_of_log_rho(estimator, flip: bool = False):
    """Otro estimador de la KL por token, ``estimator(log ρ)``, con la
    referencia congelada y 0 en el relleno, como en la buena; con ``flip``,
    ``log ρ`` al revés."""

    def wrapped(log_probs, ref_log_probs, mask):
        log_rho = ref_log_probs.detach() - log_probs
        value = estimator(-log_rho if flip else log_rho)
        return torch.where(mask.bool(), value, torch.zeros_like(value))

    return wrapped


_KL_MISTAKES = with_messages(
    """
kl_wrong_gradient: Derivas como si ρ fuera una constante (o como con k1 = log π_θ −
    log π_ref): así a cada token le llega 1. El gradiente de k3 es 1 − ρ en la respuesta
    y 0 en el relleno: ρ depende de π_θ; lo único constante es ref_log_probs.
kl_ratio_inverted: El cociente va al revés: las respuestas salen de π_θ, así que ρ =
    π_ref / π_θ, log ρ = ref_log_probs − log_probs.
kl_k1: Eso es k1 = log π_θ − log π_ref: también estima la KL, pero cada token puede ser
    negativo y es muy ruidoso. GRPO usa k3 = ρ − log ρ − 1.
kl_missing_minus_one: Te falta el −1: k3 = ρ − log ρ − 1 vale 0 cuando las dos políticas
    coinciden (ρ = 1).
kl_log_added: El logaritmo se resta: k3 = ρ − log ρ − 1, que nunca es negativo porque
    log ρ ≤ ρ − 1.
kl_no_mask: El relleno no es parte de la respuesta: su penalización debe ser 0, haya lo
    que haya en esas casillas: multiplica por la máscara (o elige con torch.where).
kl_k2: Eso es k2 = ½ (log ρ)²: el estimador que usa GRPO es k3 = ρ − log ρ − 1.
""",
    # Solo cambia el gradiente: en los valores es la referencia, y no explica nada
    Mistake(
        "kl_wrong_gradient", _kl_of_log_rho(lambda x: x.exp().detach() - x - 1), ...
    ),
    Mistake(
        "kl_ratio_inverted", _kl_of_log_rho(lambda x: x.exp() - x - 1, flip=True), ...
    ),
    Mistake("kl_k1", _kl_of_log_rho(lambda x: -x), ...),
    Mistake("kl_missing_minus_one", lambda lp, r, m: ref_k3_kl(lp, r, m) + m, ...),
    Mistake("kl_log_added", _kl_of_log_rho(lambda x: x.exp() + x - 1), ...),
    Mistake("kl_no_mask", lambda lp, r, m: ref_k3_kl(lp, r, torch.ones_like(m)), ...),
    Mistake("kl_k2", _kl_of_log_rho(lambda x: 0.5 * x**2), ...),
)
check_kl_penalty = values_check(
    MODULE, "kl_penalty", ref_k3_kl, _KL_MISTAKES, _KL_CASES, atol=1e-5
)


check_kl_penalty_gradient = gradients_check(
    MODULE,
    "kl_penalty",
    ref_k3_kl,
    _KL_MISTAKES,
    _KL_CASES[:2],
    check_name="check_kl_penalty_gradient",
    aspect=None,
    doc="Los **gradientes**: a log π_θ sí, (1 − ρ); a la referencia, no.",
    prefix="kl",
    wrt={
        "log_probs": MUST,
        "ref_log_probs": Flow(
            False,
            id="kl_gradient_to_reference",
            message="Llega gradiente a ref_log_probs: el modelo de referencia "
            "está congelado, es el ancla. Que la penalización lo use como una "
            "constante.",
        ),
    },
    mistake="kl_wrong_gradient",
    hint="El gradiente respecto a log_probs debería ser (1 − ρ) en la respuesta y "
    "0 en el relleno.",
    without_gradient=Diagnosis(
        id="kl_without_gradient",
        message="Tu penalización no tiene gradiente respecto a log_probs "
        "(¿.item(), float() o detach?): es un término de la pérdida, así que "
        "debe poder hacer backward hasta π_θ.",
    ),
    raised=_RAISED,
    atol=1e-5,
)


# -- Ejercicio 9 · las normalizaciones por longitud ----------------------------

_NORM_CASES = [
    (torch.randn(m.shape, generator=torch.Generator().manual_seed(seed)), m, norm)
    for seed, m in enumerate([_mask([6, 2, 4], 6), _mask([1, 5, 5, 3], 5)])
    for norm in ("grpo", "dr_grpo", "token")
]


def _norm_with(branch: str, wrong, *, ones: bool = False):
    """La referencia con la rama ``branch`` cambiada: por ``wrong(x, mask)`` o, si
    es un nombre, por la referencia con esa normalización (con ``ones``, sin
    máscara)."""

    def wrapped(per_token, mask, normalization):
        if normalization != branch:
            return ref_normalize(per_token, mask, normalization)
        if callable(wrong):
            return wrong(per_token, mask)
        return ref_normalize(per_token, torch.ones_like(mask) if ones else mask, wrong)

    return wrapped


_SWAP = {"grpo": "dr_grpo", "dr_grpo": "grpo"}
_NORM_MISTAKES = with_messages(
    """
norm_grpo_padded_length: Con «grpo» dividiste entre T, la longitud con relleno: cada
    respuesta se divide entre **su** longitud, |o_i| = mask.sum(dim=-1).
norm_grpo_counts_padding: Con «grpo» contaste el relleno (x.mean(dim=-1)): multiplica
    por la máscara y divide entre |o_i| = mask.sum(dim=-1).
norm_dr_grpo_divides_by_length: Con «dr_grpo» no se divide entre la longitud de cada
    respuesta: ese es justo el sesgo que quita Dr. GRPO. Suma los tokens de cada
    respuesta y promedia sobre las B respuestas.
norm_dr_grpo_sum: Con «dr_grpo» sumaste todo sin dividir: el normalizador es una
    constante, aquí el número B de respuestas (la media sobre ellas).
norm_token_per_response: Con «token» (DAPO) todos los tokens del lote pesan igual:
    divide la suma total entre el total de tokens, no respuesta a respuesta.
norm_token_floor_division: Con «token» usaste la división entera (//): redondea hacia
    abajo. La pérdida es un número real; divide con /.
norm_token_counts_padding: Con «token» contaste el relleno (x.mean()): divide la suma
    con máscara entre mask.sum(), el número de tokens de verdad.
norm_swapped: Tienes «grpo» y «dr_grpo» cambiados: «grpo» divide la suma de cada
    respuesta entre su longitud |o_i|; «dr_grpo» no divide entre la longitud (suma los
    tokens de cada respuesta y promedia sobre las B).
""",
    Mistake(
        "norm_grpo_padded_length",
        _norm_with("grpo", lambda x, m: ref_normalize(x, m, "dr_grpo") / m.shape[-1]),
        ...,
    ),
    Mistake("norm_grpo_counts_padding", _norm_with("grpo", "grpo", ones=True), ...),
    Mistake("norm_dr_grpo_divides_by_length", _norm_with("dr_grpo", "grpo"), ...),
    Mistake(
        "norm_dr_grpo_sum",
        _norm_with("dr_grpo", lambda x, m: ref_normalize(x, m, "dr_grpo") * len(m)),
        ...,
    ),
    Mistake("norm_token_per_response", _norm_with("token", "grpo"), ...),
    Mistake(
        "norm_token_floor_division",
        _norm_with("token", lambda x, m: torch.where(m.bool(), x, 0).sum() // m.sum()),
        ...,
    ),
    Mistake("norm_token_counts_padding", _norm_with("token", "token", ones=True), ...),
    # El último: en una celda de una sola normalización, el error concreto de
    # esa rama dice más que «cambiados»
    Mistake("norm_swapped", lambda x, m, n: ref_normalize(x, m, _SWAP.get(n, n)), ...),
)


@exercise(MODULE, "normalize_loss")
def check_normalize_loss(normalize_loss, normalization="grpo", cases=None):
    """``normalize_loss(per_token_loss, mask, normalization)`` en una
    normalización (una celda calificada por cada una): el valor y el gradiente."""
    cases = cases or [c for c in _NORM_CASES if c[2] == normalization]
    check_cases(
        normalize_loss,
        "normalize_loss",
        cases,
        ref_normalize,
        _NORM_MISTAKES,
        atol=1e-5,
        masked=Masked(
            "mask",
            ("per_token_loss",),
            "finite",
            mistake=f"norm_{normalization}_counts_padding",
        ),
    )
    check_gradients(
        normalize_loss,
        "normalize_loss",
        cases,
        ref_normalize,
        _NORM_MISTAKES,
        prefix="normalize",
        wrt={"per_token_loss": MUST},
        without_gradient=Diagnosis(
            id="normalize_without_gradient",
            message=f"Tu pérdida no tiene gradiente {_BACKWARD}",
        ),
        atol=1e-5,
    )
