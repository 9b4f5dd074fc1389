"""Comprobaciones del módulo 07 · GRPO en 17 × 24. Las variantes de los errores son las
referencias de ``helpers.tinylm`` con otra entrada, la salida o una pieza cambiada."""

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
    check_cases,
    check_gradients,
    check_procedure,
    compare_parameters,
    diagnoses,
    exercise,
    gradients_check,
    negated,
    on_output,
    python_number,
    same_parameters,
    scaled,
    tensor,
    values_check,
    with_args,
    with_messages,
)
from helpers.formatting import numbers
from helpers.tinylm import grpo as tl_grpo
from helpers.tinylm import load_pretrained
from helpers.tinylm import reference as ref
from helpers.tinylm import sampling as tl_sampling
from helpers.tinylm import task as tl_task
from helpers.tinylm.grpo import group_advantages as ref_adv
from helpers.tinylm.grpo import grpo_loss as ref_loss
from helpers.tinylm.grpo import k3_kl as ref_kl
from helpers.tinylm.grpo import normalize_loss as ref_norm
from helpers.tinylm.offpolicy import truncated_importance_weights as ref_tis

MODULE = "07_grpo"


#: Lo que dicen las reglas sin variante (gradientes, el paso de GRPO), por id.
_SAYS = diagnoses(
    """
loss_without_gradient, normalize_without_gradient: Tu pérdida no tiene gradiente
    (¿.item(), float() o detach?): devuelve un tensor para poder hacer loss.backward().
loss_wrong_gradient: A log_probs no le llega ningún gradiente: ¿cortaste el grafo
    (detach, .data, torch.tensor(...)) y después pediste requires_grad_() a la copia?
    Esa copia está desconectada del modelo: calcula directamente con log_probs.
loss_advantage_has_gradient: La ventaja lleva gradiente: es un peso fijo, no algo que
    optimizar. Que la pérdida la use como una constante.
loss_not_scalar: La pérdida es un escalar: la media de B términos, uno por respuesta.
update_modifies_problems: grpo_update modificó la lista problems, y quien llama la sigue
    usando: construye listas nuevas en vez de cambiarla.
update_log_probs_without_gradient: Tu pérdida no tiene gradiente: las
    log-probabilidades que trae tl.sample se calculan sin gradiente (son las del
    muestreo). Vuelve a calcularlas con el modelo que entrenas (tl.token_log_probs).
update_integer_rewards: Tu paso lanzó RuntimeError: {error}. ¿Recompensas de enteros?
    La media de un grupo necesita floats.
update_wrong_reward: Los parámetros coinciden, pero lo que devuelves no es la
    recompensa media del lote: devolviste {got} y era {want}.
tis_weights_have_gradient: Los pesos llevan gradiente: corrigen *qué* se muestreó, son
    una constante para la pérdida. Córtales el gradiente a las dos log-probabilidades.
kl_gradient_to_reference: Llega gradiente a ref_log_probs: el modelo de referencia está
    congelado, es el ancla. Que la penalización lo use como una constante.
kl_without_gradient: Tu penalización no tiene gradiente respecto a log_probs (¿.item(),
    float() o detach?): es un término de la pérdida y el backward debe llegar a π_θ.
"""
)


def _mask(lengths: list[int], length: int) -> torch.Tensor:
    return (torch.arange(length)[None, :] < torch.tensor(lengths)[:, None]).float()


# -- Ejercicio 1 · el camino en escala logarítmica y cuántas respuestas hay --
def _half(dtype):  # el camino en media precisión
    return lambda p: float(torch.as_tensor(p, dtype=dtype).log().sum())


_prob, _logp = ref.path_probability, ref.path_log_probability
_PATH_MISTAKES = with_messages(
    """
path_log_of_product, path_log_of_product_numpy: Multiplicaste y después tomaste el
    logaritmo: en un camino largo el producto se queda en 0, y log(0) no existe
    (math.log lanza un error; np.log da −∞). Suma los logaritmos de cada paso.
path_probability: Devolviste la probabilidad (el producto); se pide su logaritmo.
path_log10: Usaste log10: los modelos (y la pérdida) usan el logaritmo natural.
path_mean_of_logs: Promediaste los logaritmos: el de un producto es la **suma** de los
    logaritmos de sus factores.
path_float16, path_bfloat16: Calculaste en float16 o bfloat16: cada logaritmo sale
    con un error de milésimas, que un camino largo acumula. Usa float32 o float64.
""",
    ("path_log_of_product", on_output(_prob, math.log, "log")),
    ("path_log_of_product_numpy", on_output(_prob, np.log, "np")),
    ("path_probability", _prob),
    ("path_log10", scaled(_logp, 1 / math.log(10))),
    ("path_mean_of_logs", lambda p: _logp(p) / len(p)),
    ("path_float16", _half(torch.float16)),
    ("path_bfloat16", _half(torch.bfloat16)),
)
#: Uno corto, uno de 26 pasos en float32 (como el modelo) y uno cuyo producto es 0.
_PATHS = [([0.6, 0.9, 0.7],), (np.array([0.95, 0.9, 0.5, 0.99]),)]
_PATHS += [(torch.full((26,), 0.93),), ([0.5] * 2000,)]
check_path_log_probability = values_check(
    MODULE, "path_log_probability", _logp, _PATH_MISTAKES, _PATHS
)
_LOG10_MISTAKES = with_messages(
    """
count_natural_log: Usaste el logaritmo natural: el exponente de 10 es el de base 10.
count_reversed: Lo calculaste al revés: hay vocab_size opciones en cada una de las
    length posiciones, vocab_size ** length, no length ** vocab_size.
count_product: Multiplicaste vocab_size × length: las opciones de cada posición se
    multiplican entre sí (una potencia), no por la longitud.
count_float_overflow: float(vocab_size) ** length desborda (OverflowError): el número
    tiene cientos de cifras. Calcula su logaritmo sin calcular la potencia.
count_digits: Contaste las cifras de la potencia: es el exponente redondeado hacia
    abajo (coincide solo si vocab_size es 10, 100...); se pide con sus decimales.
""",
    ("count_natural_log", scaled(ref.log10_num_responses, math.log(10))),
    ("count_reversed", lambda v, n: ref.log10_num_responses(n, v)),
    ("count_product", lambda v, n: ref.log10_num_responses(v * n, 1)),
    ("count_float_overflow", lambda v, n: math.log10(float(v) ** n)),
    ("count_digits", lambda v, n: len(str(v**n)) - 1),
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
    """El verificador que lee como respuesta final ``cut(texto)``: 1 si son cifras
    (con ``ascii_only=False``, las de isdigit) y valen a · b."""

    def verify(text, a, b):
        final = cut(text)
        digits = final.isdigit() and (final.isascii() or not ascii_only)
        return int(digits and int(final) == a * b)

    return verify


def _last(body: str) -> str:  # lo que sigue al último «=» (nada, si no hay)
    return body.rsplit("=", 1)[-1] if "=" in body else ""


def _first(text: str) -> str:  # lo que sigue al primer «=», hasta un «+» o un «.»
    if "." not in text or "=" not in text:
        return ""
    return text.split(".")[0].split("=")[1].split("+")[0]


_END = (
    "La respuesta acaba en el **primer** «.» (el token de fin) y lo de detrás no "
    "cuenta («…=408.+7» vale 1)"
)
_CUT = "Sin punto final la respuesta quedó cortada: vale 0 aunque acierte las cifras."
_VERIFY_MISTAKES = with_messages(
    f"""
verify_keeps_dot: Te quedaste con el punto final pegado al número («408.»), que ya no
    es un número: la respuesta final va entre el último «=» y el punto.
verify_first_equals: Lees el número tras el primer «=»; la respuesta va tras el último.
verify_find_without_check: Cortaste en text.find(".") sin mirar si había punto: find da
    −1 y text[:−1] se come el último carácter («…=4080» pasa a «…=408»). {_CUT}
verify_requires_final_dot: Exiges que el texto acabe en «.». {_END}. Corta el texto en
    ese punto y busca el último «=» antes de él.
verify_isdigit: isdigit() también dice que sí a cifras como «²», que int() no sabe leer:
    «…=408².» lanza ValueError. Comprueba que son las cifras 0–9 (isascii() y isdigit(),
    o una expresión regular), o convierte dentro de un try/except ValueError.
verify_no_end_check: Quitaste todos los puntos antes de leer el número, y con ellos el
    final de la respuesta («…=40.8.» vale 0). {_END}. {_CUT}
verify_strips_end: Quitaste con rstrip el punto sin comprobar que estaba. {_CUT} {_END}.
verify_substring: Buscas el producto en todo el texto: una respuesta que pasa por 408 y
    acaba en 398 no es correcta. Mira solo el número tras el último «=».
verify_raises: El verificador nunca debe lanzar una excepción: una respuesta mal formada
    (sin «=», o con algo que no es un número al final) vale 0.
""",
    ("verify_keeps_dot", _reading(lambda t: t.rsplit("=", 1)[-1])),
    ("verify_first_equals", _reading(_first)),
    ("verify_find_without_check", _reading(lambda t: _last(t[: t.find(".")]), False)),
    (
        "verify_requires_final_dot",
        _reading(lambda t: _last(t[:-1]) if t.endswith(".") else ""),
    ),
    (
        "verify_isdigit",
        _reading(lambda t: _last(t.split(".")[0]) if "." in t else "", False),
    ),
    ("verify_no_end_check", _reading(lambda t: t.replace(".", "").rsplit("=", 1)[-1])),
    ("verify_strips_end", _reading(lambda t: t.split("=")[-1].rstrip("."))),
    ("verify_substring", lambda t, a, b: int(str(a * b) in t)),
    (
        "verify_raises",
        lambda t, a, b: int(int(t.split(".")[0].rsplit("=", 1)[1]) == a * b),
    ),
)
#: Respuestas bien formadas (con «=» y punto final): ¿acierta el número final?
#: Lo que sigue al primer «.» no cuenta: el modelo ya había terminado.
_S = "17×20+17×4=340+68="  # lo que escribe el modelo antes del último «=»
_WELL = [f"17×24={_S}408.", "17×24=17×20+17×4=340+58=398.", f"{_S}408."]
_WELL += ["17×20+17×4=408+0=398.", "17×24=408=398.", "17×24=408.", f"{_S}408.+7"]
_WELL_CASES = [(t, 17, 24) for t in [*_WELL, f"{_S}408..", f"{_S}40.8."]]
_WELL_CASES.insert(7, ("12×11=12×10+12×1=120+12=132.", 12, 11))
check_verify = values_check(
    MODULE, "verify", tl_task.verify, _VERIFY_MISTAKES, _WELL_CASES, returns="int"
)
#: Respuestas mal formadas: cortadas, sin «=», sin número al final, vacías; la
#: última acaba en el primer «.», sin «=» antes (quitar los puntos la arregla).
_BAD = [f"{_S}408", f"{_S}4080", "408.", f"{_S}.", f"{_S}408².", f"{_S}4", ""]
check_verify_malformed = values_check(
    MODULE,
    "verify",
    tl_task.verify,
    _VERIFY_MISTAKES,
    [(t, 17, 24) for t in [*_BAD, "17×20.+17×4=340+68=40.8"]],
    check_name="check_verify_malformed",
    doc="``verify`` da 0, sin lanzar, a las respuestas mal formadas.",
    returns="int",
)


# -- Ejercicio 3 · el empujón 1 − p sobre el logit propio ----------------------
def _probs(logits):
    return torch.as_tensor(logits, dtype=torch.float64).softmax(-1)


def _own(logits, token):  # 1 en el logit del token elegido, 0 en los demás
    return F.one_hot(torch.tensor(token), len(logits)).double()


_push = ref.logit_push
_PUSH_MISTAKES = with_messages(
    """
push_sign: El signo: con ventaja positiva el logit del token elegido **sube** (A · (1 −
    p)) y los demás bajan (−A · p).
push_own_only: Solo moviste el logit del token elegido: los demás también se mueven,
    cada uno baja A · p_otro (el gradiente de la softmax los toca a todos).
push_no_advantage: Falta multiplicar por la ventaja A (con A < 0, el token baja).
push_probability_gradient: Derivaste la probabilidad p y no su logaritmo: la pérdida usa
    log π, y el gradiente de log softmax es one_hot − p, sin el factor p delante.
push_p_not_one_minus_p: El logit propio sube A · (1 − p), lo que le faltaba al modelo
    para estar seguro, no A · p.
""",
    ("push_sign", negated(_push)),
    ("push_own_only", lambda z, t, a: _push(z, t, a) * _own(z, t)),
    ("push_no_advantage", with_args(_push, advantage=1.0)),
    ("push_probability_gradient", lambda z, t, a: _push(z, t, a) * _probs(z)[t]),
    ("push_p_not_one_minus_p", lambda z, t, a: a * _probs(z) * (2 * _own(z, t) - 1)),
)
_Z = torch.tensor([2.0, 0.5, -1.0, 0.0])
_PUSHES = [(_Z, 0, 1.0), (_Z, 2, 1.0), (torch.tensor([0.3, 0.1, 3.0]), 1, -0.75)]
_PUSHES.append((torch.ones(5), 4, 0.5))
check_logit_push = values_check(
    MODULE, "logit_push", _push, _PUSH_MISTAKES, _PUSHES, atol=1e-5
)


# -- Ejercicio 4 · ventajas de grupo ---------------------------------------------
_T3 = [[0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 1, 0]]
_PLAIN = [[[0, 1, 1, 0]], [[1, 1, 1, 1], [0, 0, 0, 0]], [[1, 1, 0, 1]]]
_PLAIN += [[[0, 1, 1], [1, 0, 0]], _T3]
_STD = [_T3, [[1, 1, 1, 1], [0, 0, 0, 0], [0, 1, 0, 0]], [[0.5, 2, -1], [3, 3, 3]]]
_GROUP_CASES = [(tensor(r), False) for r in _PLAIN] + [(tensor(r), True) for r in _STD]
# Recompensas que no son exactas en binario: 0,1 + 0,2 y 0,3 son la misma nota,
# pero no el mismo float: el grupo unánime tiene σ ~ 10⁻¹⁷, no 0
_R = [[0.1 + 0.2, 0.3, 0.3, 0.1 + 0.2], [0.1, 0.3, 0.2, 0.1]]
_GROUP_CASES.append((tensor(_R, torch.float64), True))


def _sample_std(variant):
    """``variant`` con la desviación muestral: σ_s = c · σ con c = √(G / (G − 1)),
    así que (R − media) / (σ_s + eps) es la variante con eps / c, entre c."""

    def wrapped(rewards, std_normalize=False, eps=1e-6):
        c = (rewards.shape[-1] / (rewards.shape[-1] - 1)) ** 0.5 if std_normalize else 1
        return variant(rewards, std_normalize, eps / c) / c

    return wrapped


_no_eps = with_args(ref_adv, eps=0.0)
#: Preguntar σ == 0 en lugar de sumar eps: donde σ es 0 exacto sale 0/0 = NaN,
#: y el grupo unánime lo cambia por 0; donde no, lo mismo que sin eps.
_zero_std_test = on_output(_no_eps, torch.nan_to_num, "σ == 0")
_GROUP_MISTAKES = with_messages(
    """
advantages_batch_mean: Restaste la media de **todo el lote**: la línea base de GRPO es
    la media de cada grupo (cada fila), rewards.mean(dim=-1, keepdim=True).
advantages_no_eps, advantages_no_eps_unbiased: Dividiste por una σ que vale 0 en los
    grupos unánimes (todo aciertos o todo fallos): 0/0 = NaN. Divide entre σ + eps.
advantages_zero_std_test: Preguntaste si σ == 0 en lugar de sumar eps. Con recompensas
    no exactas en binario (0,1 + 0,2 y 0,3: la misma nota, otro float), un grupo unánime
    tiene σ ~ 10⁻¹⁷, no 0, y (R − media)/σ, cociente de dos restos del redondeo, sale
    del orden de 1 en lugar de 0. Divide siempre entre σ + eps.
advantages_sign: El signo: ventaja = recompensa − media (los aciertos salen positivos).
advantages_wrong_axis: Promediaste sobre el eje equivocado (dim=0, entre grupos): cada
    grupo es una fila, la media va por filas (dim=-1).
advantages_never_std: Con std_normalize=True divide además entre la σ del grupo + eps.
advantages_always_std: Con std_normalize=False (Dr. GRPO) solo se resta la media.
""",
    ("advantages_batch_mean", lambda r, s: ref_adv(r.view(1, -1), s).view(r.shape)),
    ("advantages_no_eps", _no_eps),
    ("advantages_no_eps_unbiased", _sample_std(_no_eps)),
    ("advantages_zero_std_test", _zero_std_test),
    ("advantages_zero_std_test", _sample_std(_zero_std_test)),
    ("advantages_sign", negated(ref_adv)),
    ("advantages_wrong_axis", lambda r, s: ref_adv(r.T, s).T),
    ("advantages_never_std", with_args(ref_adv, std_normalize=False)),
    ("advantages_always_std", with_args(ref_adv, std_normalize=True)),
)


@exercise(MODULE, "group_advantages")
def check_group_advantages(group_advantages, std_normalize=None, cases=None):
    """Los casos con ese ``std_normalize`` (``None``: todos); vale la desviación
    poblacional o la muestral (la de ``torch.std`` y TRL), la misma en todos."""
    check_cases(
        group_advantages,
        "group_advantages",
        [c for c in cases or _GROUP_CASES if std_normalize in (None, c[1])],
        (ref_adv, _sample_std(ref_adv)),
        _GROUP_MISTAKES,
        atol=1e-4,
    )


# -- Ejercicio 5 · la pérdida de GRPO con máscara ------------------------------
def _loss_case(seed: int, length: int, lengths: list[int]):
    g = torch.Generator().manual_seed(seed)
    log_probs = -torch.rand(len(lengths), length, generator=g) * 3
    return log_probs, _mask(lengths, length), torch.randn(len(lengths), generator=g)


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
    ("loss_no_mask", lambda x, m, a: ref_loss(x, torch.ones_like(m), a)),
    ("loss_sign", negated(ref_loss)),
    ("loss_wrong_axis", lambda x, m, a: -(a.detach() * (x * m).sum(0)).mean()),
    ("loss_per_token_mean", lambda x, m, a: ref_loss(x, m / m.sum(-1, True), a)),
    ("loss_mean_over_cells", lambda x, m, a: ref_loss(x, m, a) / m.shape[-1]),
    ("loss_sum_not_mean", lambda x, m, a: ref_loss(x, m, a) * len(a)),
    ("loss_not_scalar", lambda x, m, a: -(a.detach() * (x * m).sum(-1))),
)
# El enunciado: en el relleno de log_probs, cualquier valor finito
_PAD = Masked("mask", ("log_probs",), "finite", "loss_no_mask", batched=("advantages",))
check_grpo_loss = values_check(
    MODULE, "grpo_loss", ref_loss, _LOSS_MISTAKES, _LOSS_CASES, atol=1e-5, masked=_PAD
)
check_grpo_loss_gradient = gradients_check(
    MODULE,
    "grpo_loss",
    ref_loss,
    _LOSS_MISTAKES,
    _LOSS_CASES[:2],
    check_name="check_grpo_loss_gradient",
    aspect=None,
    doc="Los **gradientes** de ``grpo_loss``: a log_probs sí, a la ventaja no.",
    prefix="loss",
    wrt={
        "log_probs": Flow(True, _SAYS["loss_wrong_gradient"]),
        "advantages": Flow(False, _SAYS["loss_advantage_has_gradient"]),
    },
    hint="Respecto a log_probs debería ser −A_i · m_it / B (cero en el relleno).",
    without_gradient=_SAYS["loss_without_gradient"],
    wrong_shape=_SAYS["loss_not_scalar"],
    raised=Diagnosis(id="raises_with_gradient"),
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
    """``grpo_update`` de referencia con unas piezas cambiadas mientras corre: las
    funciones de ``_WHERE`` o métodos del optimizador, dados como ``f(optimizer)``."""

    def variant(model, optimizer, *args):
        with contextlib.ExitStack() as stack:
            for name, piece in pieces.items():
                owner = _WHERE.get(name, optimizer)
                new = piece if name in _WHERE else piece(optimizer)
                stack.enter_context(mock.patch.object(owner, name, new))
            return ref.grpo_update(model, optimizer, *args)

    return variant


def _tiled(model, prompts, **options):  # los enunciados en mosaico (1, 2, 3, 1...)
    tiled = prompts.reshape(-1, _G, prompts.shape[-1]).transpose(0, 1)
    return _sample(model, tiled.flatten(0, 1), **options)


def _per_problem(model, prompts, **options):  # enunciado a enunciado, G filas cada vez
    parts = [_sample(model, rows, **options) for rows in prompts.split(_G)]
    return tl_sampling.Samples(*map(torch.cat, zip(*parts, strict=True)))


def _clipped(optimizer):  # optimizer.step tras recortar la norma del gradiente a 1
    step, params = optimizer.step, optimizer.param_groups[0]["params"]
    return lambda: (torch.nn.utils.clip_grad_norm_(params, 1.0), step())


_UPDATE_MISTAKES = with_messages(
    """
update_tiled_groups: Tus grupos mezclan enunciados: repetiste los enunciados en mosaico
    (1, 2, 3, 4, 1, 2...). Las G respuestas de cada enunciado deben ir seguidas, para
    que cada fila de rewards.view(-1, G) sea un grupo.
update_tiled_prompts: Tus recompensas corrigen cada respuesta con otro problema:
    enunciados en mosaico (.repeat: 1, 2, 3, 4, 1, 2...) y problemas por bloques (1, 1,
    1, 1, 2...). Pon `prompts` por bloques, como la lista: repeat_interleave(G, dim=0).
update_transposed_groups: Agrupaste las recompensas con view(G, -1): así cada fila junta
    len(problems) recompensas seguidas, que no son un grupo. Las G respuestas de cada
    enunciado van seguidas: cada grupo es una fila de rewards.view(-1, G).
update_clipped_gradient: Recortaste la norma del gradiente: el paso va sin recortar (así
    una respuesta correcta deja los mismos pesos). Quita el clip_grad_norm_.
update_no_zero_grad: Los gradientes se acumulan de un paso a otro: PyTorch los suma en
    .grad hasta que alguien los pone a cero. Ponlos a cero antes de cada backward.
update_batch_mean: Restaste la media de todo el lote: la línea base de GRPO es la media
    de cada grupo (las G respuestas del mismo enunciado).
update_sampled_per_problem: Muestreaste enunciado a enunciado: el enunciado pide una
    sola llamada a tl.sample con todo el lote. Con otro orden, el generador reparte sus
    números aleatorios de otra manera y salen otras respuestas.
""",
    (
        "update_tiled_groups",
        _update_with(
            sample=_tiled, rewards_for=lambda c, p: _rewards_for(c, p[::_G] * _G)
        ),
    ),
    ("update_tiled_prompts", _update_with(sample=_tiled)),
    (
        "update_transposed_groups",
        _update_with(group_advantages=lambda r: ref_adv(r.view(_G, -1)).view(-1)),
    ),
    ("update_clipped_gradient", _update_with(step=_clipped)),
    ("update_no_zero_grad", _update_with(zero_grad=lambda o: lambda: None)),
    ("update_batch_mean", _update_with(group_advantages=lambda r: r - r.mean())),
    ("update_sampled_per_problem", _update_with(sample=_per_problem)),
)


def _run_updates(update, steps: int, seed: int):
    """Los pesos y las recompensas tras ``steps`` pasos de ``update``, con semilla."""
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
                _SAYS["update_modifies_problems"].fail()
    except RuntimeError as error:
        if "does not require grad" in str(error):
            _SAYS["update_log_probs_without_gradient"].fail()
        if "dtype" in str(error):
            _SAYS["update_integer_rewards"].fail(error=error)
        raise
    finally:
        torch.set_num_threads(threads)
    return model.state_dict(), rewards


_UPDATE_USES = {"group_advantages": ref_adv, "grpo_loss": ref_loss}


@exercise(MODULE, "grpo_update", uses=_UPDATE_USES)
def check_grpo_update(grpo_update, seed=0, steps=1):
    """``steps`` pasos frente a la referencia: los pesos y la recompensa devuelta."""
    what = f"{steps} actualizaciones" if steps > 1 else "una actualización"
    what = f"la red tras {what}"
    said = f"Los parámetros de {what} no son los que da el paso correcto."
    runs = {}
    _, rewards = check_procedure(
        grpo_update,
        ref.grpo_update,
        _UPDATE_MISTAKES,
        run=lambda update: runs.setdefault(update, _run_updates(update, steps, seed)),
        same=lambda got, want: same_parameters(got[0], want[0]),
        describe=lambda *_: said,
        same_as_mistake=lambda got, variant: same_parameters(variant[0], got[0]),
        unexplained=lambda got, want: compare_parameters(
            got[0], want[0], what=what, mistake="update_wrong_parameters"
        ),
    )
    for reward in rewards:
        python_number(reward, "Lo que devuelve grpo_update (la recompensa media)")
    got, want = np.array([float(r) for r in rewards]), runs[ref.grpo_update][1]
    if not np.allclose(got, want, atol=1e-6):
        _SAYS["update_wrong_reward"].fail(got=numbers(got, 4), want=numbers(want, 4))


@exercise(MODULE, "grpo_update", uses=_UPDATE_USES)
def check_grpo_update_steps(grpo_update, steps=3, seed=0):
    """Varias actualizaciones seguidas (con el mismo optimizador y generador)."""
    check_grpo_update.__wrapped__(grpo_update, seed=seed, steps=steps)


# -- Ejercicio 7 · el peso de importancia truncado ----------------------------
_WEIGHTS = "truncated_importance_weights"


def _log_probs_pairs(spread: float):
    """Los lotes de los ejercicios 7 y 8: dos log-probabilidades por token (la
    segunda, la primera más ruido de escala ``spread``) y la máscara."""
    pairs = []
    for seed, (T, lens) in enumerate([(5, [5, 2, 4]), (4, [1, 4, 3, 2]), (6, [6, 3])]):
        generator = torch.Generator().manual_seed(seed)
        first = -torch.rand(len(lens), T, generator=generator) * 2
        second = first + spread * torch.randn(len(lens), T, generator=generator)
        pairs.append((first, second, _mask(lens, T)))
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
tis_no_mask: El relleno no es respuesta: su peso debe ser 0; multiplica por la máscara.
tis_integer_cap: El tope es real (1,5; 2,5...) y lo pasaste a entero: úsalo tal cual.
tis_log_ratio: Eso es el log-cociente: el peso es su exponencial, exp(t − s).
""",
    ("tis_ratio_inverted", lambda t, s, m, c: ref_tis(s, t, m, c)),
    ("tis_not_truncated", with_args(ref_tis, cap=math.inf)),
    ("tis_clamped_below", lambda t, s, m, c: ref_tis(t, s, m, c).clamp(min=1 / c) * m),
    ("tis_no_mask", with_args(ref_tis, mask=lambda a: torch.ones_like(a.mask))),
    ("tis_integer_cap", with_args(ref_tis, cap=lambda a: int(a.cap))),
    ("tis_log_ratio", lambda t, s, m, c: (t - s).clamp(max=c) * m),
)
check_truncated_importance_weights = values_check(
    MODULE, _WEIGHTS, ref_tis, _TIS_MISTAKES, _TIS_CASES, atol=1e-5
)
_TIS_CONSTANT = Flow(False, _SAYS["tis_weights_have_gradient"])


@exercise(MODULE, _WEIGHTS)
def check_truncated_importance_weights_gradient(
    truncated_importance_weights, cases=None
):
    """Los pesos salen **sin gradiente** (son una constante). La máscara va
    copiada: si se modifica, lo dice la comprobación de los valores."""
    check_gradients(
        lambda t, s, m, c: truncated_importance_weights(t, s, m.clone(), c),
        _WEIGHTS,
        cases or _TIS_CASES[:2],
        ref_tis,
        prefix="tis",
        wrt={"trainer_log_probs": _TIS_CONSTANT, "sampler_log_probs": _TIS_CONSTANT},
        raised=Diagnosis(id="raises_with_gradient"),
    )


# -- Ejercicio 8 · la penalización KL k3 por token ----------------------------
_KL_CASES = _log_probs_pairs(0.6)


def _kl_from(estimator, flip: bool = False):
    """Otro estimador de la KL por token, ``estimator(log ρ)``, con la referencia
    congelada y 0 en el relleno; con ``flip``, ``log ρ`` al revés."""

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
kl_missing_minus_one: Falta el −1: k3 = ρ − log ρ − 1 vale 0 cuando π_θ = π_ref (ρ = 1).
kl_log_added: El logaritmo se resta: k3 = ρ − log ρ − 1 (≥ 0, porque log ρ ≤ ρ − 1).
kl_no_mask: El relleno no es parte de la respuesta: su penalización debe ser 0, haya lo
    que haya en esas casillas: multiplica por la máscara (o elige con torch.where).
kl_k2: Eso es k2 = ½ (log ρ)²: el estimador que usa GRPO es k3 = ρ − log ρ − 1.
""",
    # Solo cambia el gradiente: en los valores es la referencia, y no explica nada
    ("kl_wrong_gradient", _kl_from(lambda x: x.exp().detach() - x - 1)),
    ("kl_ratio_inverted", _kl_from(lambda x: x.exp() - x - 1, flip=True)),
    ("kl_k1", _kl_from(lambda x: -x)),
    ("kl_missing_minus_one", lambda lp, r, m: ref_kl(lp, r, m) + m),
    ("kl_log_added", _kl_from(lambda x: x.exp() + x - 1)),
    ("kl_no_mask", with_args(ref_kl, mask=lambda a: torch.ones_like(a.mask))),
    ("kl_k2", _kl_from(lambda x: 0.5 * x**2)),
)
check_kl_penalty = values_check(
    MODULE, "kl_penalty", ref_kl, _KL_MISTAKES, _KL_CASES, atol=1e-5
)
check_kl_penalty_gradient = gradients_check(
    MODULE,
    "kl_penalty",
    ref_kl,
    _KL_MISTAKES,
    _KL_CASES[:2],
    check_name="check_kl_penalty_gradient",
    aspect=None,
    doc="Los **gradientes**: a log π_θ sí, (1 − ρ); a la referencia, no.",
    prefix="kl",
    wrt={
        "log_probs": MUST,
        "ref_log_probs": Flow(False, _SAYS["kl_gradient_to_reference"]),
    },
    hint="Respecto a log_probs debería ser 1 − ρ en la respuesta y 0 en el relleno.",
    without_gradient=_SAYS["kl_without_gradient"],
    raised=Diagnosis(id="raises_with_gradient"),
    atol=1e-5,
)


# -- Ejercicio 9 · las normalizaciones por longitud ----------------------------
_NORM_CASES = [
    (torch.randn(m.shape, generator=torch.Generator().manual_seed(seed)), m, norm)
    for seed, m in enumerate([_mask([6, 2, 4], 6), _mask([1, 5, 5, 3], 5)])
    for norm in ("grpo", "dr_grpo", "token")
]


def _norm_with(branch: str, wrong, *, ones: bool = False):
    """La referencia con la rama ``branch`` cambiada: por ``wrong(x, mask)`` o por la
    normalización ``wrong`` (con ``ones``, sin máscara)."""

    def wrapped(per_token, mask, normalization):
        if normalization != branch:
            return ref_norm(per_token, mask, normalization)
        if callable(wrong):
            return wrong(per_token, mask)
        return ref_norm(per_token, torch.ones_like(mask) if ones else mask, wrong)

    return wrapped


_SWAP = {"grpo": "dr_grpo", "dr_grpo": "grpo"}
_NORM_MISTAKES = with_messages(
    """
norm_grpo_padded_length: Con «grpo» dividiste entre T, la longitud con relleno: cada
    respuesta se divide entre **su** longitud, |o_i| = mask.sum(dim=-1).
norm_grpo_counts_padding: Con «grpo» contaste el relleno (x.mean(dim=-1)): multiplica
    por la máscara y divide entre |o_i| = mask.sum(dim=-1).
norm_dr_grpo_divides_by_length: Con «dr_grpo» no se divide entre |o_i| (es el sesgo
    que quita Dr. GRPO): suma los tokens de cada respuesta y promedia sobre las B.
norm_dr_grpo_sum: Con «dr_grpo» sumaste todo sin dividir: el normalizador es una
    constante, aquí el número B de respuestas (la media sobre ellas).
norm_token_per_response: Con «token» (DAPO) todos los tokens del lote pesan igual:
    divide la suma total entre el total de tokens, no respuesta a respuesta.
norm_token_floor_division: Con «token» usaste la división entera (//): redondea hacia
    abajo. La pérdida es un número real; divide con /.
norm_token_counts_padding: Con «token» contaste el relleno (x.mean()): divide la suma
    con máscara entre mask.sum(), el número de tokens de verdad.
norm_swapped: Tienes «grpo» y «dr_grpo» cambiados: «grpo» divide la suma de cada
    respuesta entre su longitud |o_i|; «dr_grpo» suma sus tokens y promedia sobre las B.
""",
    (
        "norm_grpo_padded_length",
        _norm_with("grpo", lambda x, m: ref_norm(x, m, "dr_grpo") / m.shape[-1]),
    ),
    ("norm_grpo_counts_padding", _norm_with("grpo", "grpo", ones=True)),
    ("norm_dr_grpo_divides_by_length", _norm_with("dr_grpo", "grpo")),
    (
        "norm_dr_grpo_sum",
        _norm_with("dr_grpo", lambda x, m: ref_norm(x, m, "dr_grpo") * len(m)),
    ),
    ("norm_token_per_response", _norm_with("token", "grpo")),
    (
        "norm_token_floor_division",
        _norm_with("token", lambda x, m: torch.where(m.bool(), x, 0).sum() // m.sum()),
    ),
    ("norm_token_counts_padding", _norm_with("token", "token", ones=True)),
    # El último: en una celda de una sola normalización, el error concreto de
    # esa rama dice más que «cambiados»
    ("norm_swapped", lambda x, m, n: ref_norm(x, m, _SWAP.get(n, n))),
)


@exercise(MODULE, "normalize_loss")
def check_normalize_loss(normalize_loss, normalization="grpo", cases=None):
    """Una normalización (una celda calificada por cada una): valor y gradiente."""
    cases = cases or [c for c in _NORM_CASES if c[2] == normalization]
    check_cases(
        normalize_loss,
        "normalize_loss",
        cases,
        ref_norm,
        _NORM_MISTAKES,
        atol=1e-5,
        masked=Masked(
            "mask",
            ("per_token_loss",),
            "finite",
            f"norm_{normalization}_counts_padding",
        ),
    )
    check_gradients(
        normalize_loss,
        "normalize_loss",
        cases,
        ref_norm,
        _NORM_MISTAKES,
        prefix="normalize",
        wrt={"per_token_loss": MUST},
        without_gradient=_SAYS["normalize_without_gradient"],
        atol=1e-5,
    )
