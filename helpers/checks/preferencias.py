"""Comprobaciones del módulo 10 · Preferencias. Las referencias son las de
``helpers.tinylm.preferences``; las variantes, esas referencias cambiadas."""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import random
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any

import torch
from torch.nn import functional as F

from helpers.checks import (
    MUST,
    Flow,
    Mistake,
    as_tuple,
    call,
    check_cases,
    check_gradients,
    check_procedure,
    close,
    compare_parameters,
    diagnoses,
    exercise,
    negated,
    patched,
    python_number,
    same_parameters,
    scaled,
    tensor,
    values_check,
    with_args,
    with_messages,
)
from helpers.checks.quiz import statements_check
from helpers.formatting import significant
from helpers.tinylm import preferences as pref
from helpers.tinylm.model import TinyLM, TinyLMConfig
from helpers.tinylm.sampling import completion_mask, token_log_probs
from helpers.tinylm.task import encode_prompts, solution_text
from helpers.tinylm.tokenizer import tokenizer

MODULE = "10_preferencias"

_bt_ref = pref.bradley_terry_loss
_acc_ref = pref.pairwise_accuracy
_dpo_ref = pref.dpo_loss
_implicit_ref = pref.implicit_rewards
_sequence = pref.sequence_log_probs
_step = pref.dpo_step
_optimal = pref.optimal_policy
_values = functools.partial(values_check, MODULE)


def _eighths(x: torch.Tensor) -> torch.Tensor:
    """``x`` en octavos: exactos en binario, cortos en los mensajes (1,375)."""
    return torch.round(8 * x) / 8


def _logsig(reference: Callable[..., Any], f: Callable[..., Any]) -> Callable:
    return patched(reference, F=SimpleNamespace(logsigmoid=f))


_CORNER = (
    "Si el valor sale bien y el gradiente no, busca una función con esquina "
    "(abs, relu, max, clamp): en la esquina PyTorch elige una derivada, y en "
    "un empate (d = 0; en DPO, h = 0 al empezar, cuando la política aún es la "
    "referencia) la de tu fórmula sale 0. F.logsigmoid no tiene esquinas."
)

#: Lo que dicen las reglas sin variante (``{…}``: lo que llena ``.fail``).
_SAYS = diagnoses(
    """
loss_not_a_tensor: {call} debe devolver un tensor de PyTorch (para poder llamar a
    loss.backward()); devolvió {kind}. No uses .item(), float() ni NumPy: sin tensor no
    hay gradiente y el modelo no aprende.
dpo_default_loss_type: Sin loss_type, dpo_loss debe calcular la pérdida de DPO: el valor
    por defecto de la firma es loss_type="sigmoid".
reference_has_gradient: El gradiente llega a los parámetros de la referencia{example}:
    calcula sus log-probabilidades dentro de «with torch.no_grad():» (o con .detach()).
    La referencia es el punto fijo con el que se compara la política; no se entrena, y
    su grafo solo gasta memoria.
ir_no_gradient: El resultado de implicit_rewards no tiene gradiente (¿todo dentro de
    torch.no_grad(), un .detach() o .item()?): DPO entrena la política a través de estas
    recompensas. Solo la parte de la referencia va sin gradiente.
step_changes_reference: dpo_step cambió los pesos de la referencia: debe quedar
    congelada. Solo se actualiza la política, con el optimizador que recibes.
step_parameters_unchanged: Los parámetros de la política no cambiaron: ¿falta
    optimizer.step(), o llamas a optimizer.zero_grad() entre loss.backward() y step()?
bt_overflow: {intro}log(σ(d)) en dos pasos se desborda: en float32, σ(d) redondea a 0
    cuando d < −88 y log(0) = −∞ (y log(1 + exp(−d)) desborda igual, porque exp(−d) =
    ∞). Usa F.logsigmoid(d), o −F.softplus(−d), que lo calculan sin pasar por σ.
opt_overflow: {intro}e^{{r/β}} se desborda en float32 cuando r/β pasa de unos 88 (sale
    inf, e inf/inf es nan). Trabaja con logaritmos: log π_ref + r/β, y normaliza con
    torch.softmax (o resta el máximo antes de exp), que no desborda.
wrong_result: dpo_step devolvió ({got[0]}; {got[1]}) y se esperaba ({want[0]};
    {want[1]}): la pérdida de antes del paso y la fracción de pares con r̂(elegida) >
    r̂(rechazada) (un empate, medio acierto).
"""
)
_gradients = functools.partial(
    check_gradients, prefix="loss", mistake="wrong_gradient", atol=1e-5
)


def _loss_checks(function, reference, cases, rows, hint=_CORNER, shown=None, extra=()):
    """Valores, que sea un tensor y el gradiente a las dos primeras entradas."""
    name = reference.__name__
    check_cases(function, name, cases, reference, rows, atol=1e-5)
    for case in cases:
        if not isinstance(out := call(function, name, *case), torch.Tensor):
            what = shown(case) if callable(shown) else shown or f"{name}(...)"
            _SAYS["loss_not_a_tensor"].fail(call=what, kind=type(out).__name__)
    # log σ a mano con relu y abs: exacto, salvo la derivada en 0 (sale 0).
    corner = _logsig(reference, lambda x: -(torch.relu(-x) + (-x.abs()).exp().log1p()))
    rows = [*extra, Mistake("wrong_gradient", corner, _CORNER)]
    inputs = list(inspect.signature(reference).parameters)[:2]
    wrt = dict.fromkeys(inputs, Flow(True, id="gradient_not_reaching_input"))
    _gradients(function, name, cases, reference, rows, wrt=wrt, hint=hint)


# La pérdida de Bradley–Terry
def bt_case(seed: int, size: int, scale: float = 1.0) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(seed)
    return tuple(_eighths(scale * torch.randn(size, generator=generator)) for _ in "cr")


#: Diferencias moderadas (la sigmoide no satura), con un empate y un lote de 1.
BT_CASES = [
    (tensor([2.0, 0.0, -1.0]), tensor([0.0, 0.0, 1.0])),
    *(bt_case(*args) for args in ((0, 6, 1.0), (1, 9, 3.0), (2, 1, 2.0))),
]
#: Diferencias de ±50 a ±300: en float32, σ(x) redondea a 0 para x < −88.
BT_STABLE_CASES = [
    (tensor([-100.0, 50.0, 0.0, 3.0]), tensor([100.0, -150.0, 0.0, -2.0])),
    (tensor([-60.0]), tensor([60.0])),
    (tensor([200.0, -200.0, 1.0]), tensor([-0.5, 0.5, -1.0])),
]

_BATCH_MEAN = (
    "Sumaste sobre el lote: la pérdida es la media de los B pares (.mean()), "
    "para que su escala no dependa del tamaño del lote."
)

BT_MISTAKES = with_messages(
    f"""
bt_swapped: La diferencia va al revés: es r_elegida − r_rechazada (chosen − rejected).
    Con la resta cambiada, la pérdida baja cuando el modelo puntúa más a la rechazada.
bt_sum: {_BATCH_MEAN}
bt_no_minus: Falta el signo menos: −log σ(r_elegida − r_rechazada) es positiva y baja
    cuando la elegida puntúa más. Sin el menos, minimizarla empuja al revés.
bt_no_log: Falta el logaritmo: −σ(d) no es la pérdida de Bradley–Terry. Es −log σ(d),
    menos la log-probabilidad de la preferencia observada.
bt_one_minus_sigmoid: Devuelves 1 − σ(d), no −log σ(d): falta el logaritmo. Sin él, un
    par muy mal ordenado cuesta como mucho 1 y apenas empuja.
bt_per_pair: Devuelves la pérdida de cada par: falta promediar sobre el lote (.mean())
    para tener un escalar al que llamar .backward().
bt_separately: Aplicaste log σ a cada recompensa por separado: Bradley–Terry solo mira
    la diferencia, −log σ(r_elegida − r_rechazada).
bt_means_inside: Restaste las medias del lote dentro de σ: la pérdida es la media de
    −log σ(·) de cada par, no −log σ de la diferencia de medias.
""",
    ("bt_swapped", lambda c, r: _bt_ref(r, c)),
    ("bt_sum", lambda c, r: len(c) * _bt_ref(c, r)),
    ("bt_no_minus", negated(_bt_ref)),
    ("bt_no_log", _logsig(_bt_ref, torch.sigmoid)),
    ("bt_one_minus_sigmoid", _logsig(_bt_ref, lambda d: d.sigmoid() - 1)),
    ("bt_per_pair", torch.vmap(_bt_ref)),
    ("bt_separately", lambda c, r: _bt_ref(c, 0 * r) + _bt_ref(0 * c, r)),
    ("bt_means_inside", lambda c, r: _bt_ref(c.mean(), r.mean())),
)

_EPSILON = (
    "Recortaste σ(d) con un ε antes del logaritmo: ya no sale ∞, pero con diferencias "
    "grandes la pérdida queda topada en −log ε y el gradiente se apaga justo en los "
    "pares peor ordenados. Usa F.logsigmoid(d), que es exacto."
)


def _epsilon(k: int, how: str) -> Mistake:
    """La fila de log σ(d) con σ(d) recortada en 10^−k (clamp) o más 10^−k (add)."""
    eps = 10.0**-k
    fix = (lambda s: s.clamp(min=eps)) if how == "clamp" else (lambda s: s + eps)
    variant = _logsig(_bt_ref, lambda d: fix(d.sigmoid()).log())
    return Mistake(f"bt_epsilon_{how}_{k}", variant, _EPSILON)


#: log(σ(d)) da ∞ en estos casos: lo diagnostica ``bt_overflow`` antes que la tabla.
BT_STABLE_MISTAKES = with_messages(
    """
bt_bce: F.binary_cross_entropy(σ(d), 1) recorta el logaritmo en −100: con diferencias
    grandes la pérdida de un par queda topada en 100 y su gradiente se apaga justo en
    los pares peor ordenados. Usa F.logsigmoid(d), o
    F.binary_cross_entropy_with_logits(d, unos), que trabajan con d sin pasar por σ.
""",
    ("bt_bce", lambda c, r: F.binary_cross_entropy((c - r).sigmoid(), 0 * c + 1)),
    *[_epsilon(k, how) for k in (6, 7, 8, 10, 12) for how in ("clamp", "add")],
    *BT_MISTAKES,
)

_WHERE = (
    "una rama que desborda envenena el gradiente (torch.where calcula las dos ramas y "
    "deriva las dos): F.logsigmoid(d) da valor y gradiente exactos."
)
#: log σ(d) con torch.where: un valor finito con un gradiente nan.
_BRANCHES = Mistake(
    "gradient_not_finite",
    _logsig(
        _bt_ref, lambda d: d.sigmoid().log().where(d > 0, d + (-d).sigmoid().log())
    ),
    f"El gradiente sale inf o nan. Aunque el valor salga finito, {_WHERE}",
)


@exercise(MODULE, "bradley_terry_loss")
def check_bradley_terry_loss(bradley_terry_loss, cases: list | None = None) -> None:
    """Valores y gradiente de ``bradley_terry_loss`` con diferencias moderadas."""
    _loss_checks(bradley_terry_loss, _bt_ref, list(cases or BT_CASES), BT_MISTAKES)


@exercise(MODULE, "bradley_terry_loss")
def check_bradley_terry_loss_stable(bradley_terry_loss, cases: list | None = None):
    """Con diferencias de ±50 a ±300: valores y gradientes finitos y exactos."""
    cases = list(cases or BT_STABLE_CASES)
    for case in cases:
        out = call(bradley_terry_loss, "bradley_terry_loss", *case)
        if torch.is_tensor(out) and not torch.isfinite(out.detach()).all():
            shown = "; ".join(significant(d) for d in (case[0] - case[1]).tolist()[:6])
            loss = significant(out.detach().reshape(-1)[0])
            intro = f"Con diferencias r_elegida − r_rechazada = [{shown}], tu pérdida"
            _SAYS["bt_overflow"].fail(intro=f"{intro} sale {loss}.\n")
    hint = f"Si sale inf o nan, {_WHERE} Si no, {_CORNER[0].lower()}{_CORNER[1:]}"
    shown = "bradley_terry_loss(...) con diferencias grandes"
    _loss_checks(
        bradley_terry_loss, _bt_ref, cases, BT_STABLE_MISTAKES, hint, shown, [_BRANCHES]
    )


# La precisión por pares
#: Con empates (exactos) y sin ellos, un lote de empates solo, un par solo y
#: notas que difieren en la última cifra de float32 (no son empates).
ACCURACY_CASES = [
    (tensor([1.0, 2.0, 0.0, 5.0, 3.0]), tensor([0.0, 3.0, 0.0, 1.0, 3.0])),
    (tensor([0.5, -1, 2, 2, 0.25, 7, 1, 1]), tensor([0.25, -1, 3, 2, 0.5, -7, 1, 0])),
    (tensor([3.0, 1.0, 4.0]), tensor([1.0, 5.0, 9.0])),
    (torch.zeros(4), torch.zeros(4)),
    (tensor([-0.5]), tensor([0.5])),
    (tensor([1.0000001, 0.25, -3.0]), tensor([1.0, 0.25, -3.0000002])),
]

ACCURACY_MISTAKES = with_messages(
    """
acc_ties_zero: Los empates cuentan como fallo: un empate es medio acierto (0,5). Un
    modelo que da a todo la misma nota debe sacar 0,5, como una moneda, no 0.
acc_ties_one: Con ≥ los empates cuentan como acierto entero: la elegida tiene que
    puntuar más (>), y un empate vale 0,5. Si no, un modelo que da a todo la misma
    nota sacaría un 100 %.
acc_counts: Devuelves cuántos aciertos hay, no la fracción: divide entre el número de
    pares (o usa .mean()).
acc_reversed: Está al revés: cuentas los pares en que la rechazada puntúa más. Acierta
    el par en que chosen_rewards > rejected_rewards.
acc_means: Comparas las medias del lote: la precisión se cuenta par a par (la fracción
    de filas en que la elegida puntúa más).
acc_ties_close: Un empate es una nota exactamente igual (==), no una parecida: con
    torch.isclose o una tolerancia, dos notas que difieren en la última cifra cuentan
    como empate, y el modelo sí ha puesto una por encima.
acc_ties_excluded: Quitaste los empates del recuento: se quedan, y cuentan medio
    acierto cada uno (la fracción es sobre todos los pares).
""",
    ("acc_ties_zero", lambda c, r: (c > r).float().mean().item()),
    ("acc_ties_one", lambda c, r: (c >= r).float().mean().item()),
    ("acc_counts", lambda c, r: len(c) * _acc_ref(c, r)),
    ("acc_reversed", lambda c, r: _acc_ref(r, c)),
    ("acc_means", lambda c, r: float(c.mean() > r.mean())),
    # Las notas parecidas, igualadas: la referencia las cuenta como empates.
    ("acc_ties_close", lambda c, r: _acc_ref(r.where(c.isclose(r), c), r)),
    # Sin pares que no empaten, la media de ninguno: nan.
    ("acc_ties_excluded", lambda c, r: _acc_ref(c[c != r], r[c != r])),
)

check_pairwise_accuracy = _values(
    "pairwise_accuracy", _acc_ref, ACCURACY_MISTAKES, ACCURACY_CASES, returns="float"
)


# El cuestionario del experimento (dos valores de β): como el del 06, solo
# mira la forma; la clave está en las pruebas ocultas del cuaderno.
EXPERIMENT_KEY = "experiment_answer"

check_experiment_answer = statements_check(
    MODULE, EXPERIMENT_KEY, "answer_experiment", "la pregunta del experimento"
)


# Las pérdidas de DPO e IPO
def dpo_case(seed: int, size: int, beta: float, scale: float = 20.0) -> tuple[Any, ...]:
    generator = torch.Generator().manual_seed(seed)
    tensors = (_eighths(-scale * torch.rand(size, generator=generator)) for _ in "wlWL")
    return (*tensors, beta)


#: h de decenas (sumas de log-probabilidades de respuestas enteras), β de 0,1 a 2,
#: h = 0 (la política aún es la referencia) y β·h = ±195, donde log(σ(·)) desborda.
DPO_CASES = [
    dpo_case(0, 4, 0.1),
    dpo_case(1, 6, 0.5),
    dpo_case(2, 3, 2.0, 5.0),
    (*map(tensor, [[-3.0, -7.5], [-4.0, -2.0]] * 2), 0.1),
    (*map(tensor, [[-5.0, -400.0], [-400.0, -5.0], [-200.0] * 2, [-200.0] * 2]), 0.5),
]
#: h de unidades (IPO usa medias por token), con β ≠ 1 (donde 1/(2β) = β/2).
IPO_CASES = [dpo_case(*args, 3.0) for args in ((3, 4, 0.1), (4, 5, 0.5), (5, 3, 2.0))]


# Las variantes reciben (pc, pr, rc, rr, β, tipo).
def _each_pair(pc, pr, rc, rr, beta, loss_type):
    return torch.vmap(lambda *x: _dpo_ref(*x, beta, loss_type))(pc, pr, rc, rr)


def _swapped(pc, pr, rc, rr, *rest):
    return _dpo_ref(pr, pc, rr, rc, *rest)


_H = "(log π_elegida − log π_ref,elegida) − (log π_rechazada − log π_ref,rechazada)"
_SIGN = (
    f"h sale con el signo cambiado: es {_H}, la política menos la referencia y "
    "la elegida menos la rechazada. Al revés,"
)
_NO_BETA = with_args(_dpo_ref, beta=1.0)

DPO_MISTAKES = with_messages(
    f"""
dpo_sign: {_SIGN} DPO sube la rechazada.
dpo_beta_outside: β va dentro de la sigmoide: −log σ(β·h), no −β·log σ(h). Fuera solo
    escala la pérdida; dentro, decide cuánto se aleja la política de la referencia.
dpo_no_beta: Falta β: la pérdida es −log σ(β·h). β es el peso de la KL implícita,
    cuánto se deja alejar la política de la referencia.
dpo_sum: {_BATCH_MEAN}
dpo_per_pair: Devuelves la pérdida de cada par: falta la media del lote (.mean()).
dpo_no_reference: Falta la referencia: h compara los cocientes π/π_ref de las dos
    respuestas, {_H}. Sin ella, nada ata la política a su punto de partida.
dpo_ratios: Usaste los cocientes π/π_ref (con exp) en vez de sus logaritmos: h es una
    resta de log-cocientes, log π − log π_ref, sin exponenciales.
dpo_log_of_sigmoid: log(σ(β·h)) en dos pasos se desborda: en float32, σ redondea a 0
    cuando β·h < −88, y log(0) = −∞. Usa F.logsigmoid(beta * h), sin pasar por σ.
""",
    ("dpo_sign", _swapped),
    ("dpo_beta_outside", lambda *case: case[4] * _NO_BETA(*case)),
    ("dpo_no_beta", _NO_BETA),
    ("dpo_sum", lambda pc, *rest: len(pc) * _dpo_ref(pc, *rest)),
    ("dpo_per_pair", _each_pair),
    ("dpo_no_reference", lambda pc, pr, rc, rr, *x: _dpo_ref(pc, pr, 0, 0, *x)),
    (
        "dpo_ratios",
        lambda pc, pr, rc, rr, *x: _dpo_ref((pc - rc).exp(), (pr - rr).exp(), 0, 0, *x),
    ),
    ("dpo_log_of_sigmoid", _logsig(_dpo_ref, lambda x: x.sigmoid().log())),
)

_IPO_BETA = "β no multiplica a h en IPO: (h − 1/(2β))², con β solo en el objetivo."
# En IPO, (h − 1/(2β))²: otra β en el objetivo es la referencia con otra β.
IPO_MISTAKES = with_messages(
    f"""
ipo_target_one_over_beta: El objetivo de IPO es 1/(2β), no 1/β: (h − 1/(2β))².
ipo_precedence: En Python, 1 / 2 * beta es β/2, no 1/(2β): la multiplicación y la
    división van de izquierda a derecha. Escribe 1 / (2 * beta).
ipo_beta_times_h_half: {_IPO_BETA} (β·h − 1/2)² es β² veces eso.
ipo_beta_times_h: {_IPO_BETA}
ipo_sign: {_SIGN} IPO sube la rechazada. (O el objetivo va con signo menos: es
    h − 1/(2β).)
ipo_sum: {_BATCH_MEAN}
ipo_abs: Usaste el valor absoluto: IPO es un cuadrado, (h − 1/(2β))².
ipo_returns_dpo: Con loss_type="ipo" devolviste la pérdida de DPO: mira loss_type y, si
    es "ipo", devuelve (h − 1/(2β))².
""",
    ("ipo_target_one_over_beta", with_args(_dpo_ref, beta=lambda a: a.beta / 2)),
    ("ipo_precedence", with_args(_dpo_ref, beta=lambda a: 1 / a.beta)),
    ("ipo_beta_times_h_half", lambda *case: case[4] ** 2 * _dpo_ref(*case)),
    ("ipo_beta_times_h", lambda *c: _dpo_ref(*[c[4] * x for x in c[:4]], *c[4:])),
    ("ipo_sign", _swapped),
    ("ipo_sum", lambda pc, *rest: len(pc) * _dpo_ref(pc, *rest)),
    ("ipo_abs", lambda *case: _each_pair(*case).sqrt().mean()),
    ("ipo_returns_dpo", lambda *case: _dpo_ref(*case[:5])),
)


def _dpo_call(case: tuple) -> str:
    return f'dpo_loss(..., beta={significant(case[4])}, loss_type="{case[5]}")'


_DPO_HINT = (
    "Si el gradiente sale inf o nan y usaste log(σ(·)) en dos pasos, se desborda: usa "
    f"F.logsigmoid.\n{_CORNER}"
)


@exercise(MODULE, "dpo_loss")
def check_dpo_loss(dpo_loss, cases: list | None = None) -> None:
    """DPO: valores, gradiente y ``loss_type="sigmoid"`` por defecto."""
    cases = [(*case[:5], "sigmoid") for case in cases or DPO_CASES]
    _loss_checks(dpo_loss, _dpo_ref, cases, DPO_MISTAKES, _DPO_HINT, _dpo_call)
    default = torch.as_tensor(call(dpo_loss, "dpo_loss", *cases[0][:5])).detach()
    if not close(default, _dpo_ref(*cases[0][:5]), atol=1e-5):
        _SAYS["dpo_default_loss_type"].fail()


@exercise(MODULE, "dpo_loss")
def check_ipo_loss(dpo_loss, cases: list | None = None) -> None:
    """IPO (``loss_type="ipo"``): valores y gradiente de (h − 1/(2β))²."""
    cases = [(*case[:5], "ipo") for case in cases or IPO_CASES]
    _loss_checks(dpo_loss, _dpo_ref, cases, IPO_MISTAKES, _DPO_HINT, _dpo_call)


# La recompensa implícita
IMPLICIT_SEEDS = (0, 1, 2)
_BETAS = (0.1, 0.5, 2.0)


class _NamedLM(TinyLM):
    """Un ``TinyLM`` que se presenta con un nombre corto (``label``) en los mensajes."""

    def __repr__(self) -> str:
        return f"<{self.label}>"


def tiny_models(seed: int, noise: float = 0.05) -> tuple[TinyLM, TinyLM]:
    """Un ``TinyLM`` fijo y una copia con ruido, sin tocar el estado aleatorio."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        policy = _NamedLM(TinyLMConfig())
    policy.label = f"política (semilla {seed})"
    reference = copy.deepcopy(policy)
    reference.label = f"referencia (semilla {seed})"
    generator = torch.Generator().manual_seed(seed + 1000)
    with torch.no_grad():
        for p in reference.parameters():
            p.add_(noise * torch.randn(p.shape, generator=generator))
    return policy, reference


def implicit_case(seed: int) -> tuple[Any, ...]:
    """Dos modelos y cuatro respuestas de longitudes distintas, con relleno."""
    rng = random.Random(seed)
    problems = [(rng.randint(10, 99), rng.randint(10, 99)) for _ in range(4)]
    (a0, b0), (a1, b1), (a2, b2), (a3, b3) = problems
    wrong = a2 * b2 + 10 * rng.randint(1, 9)
    texts = [solution_text(a0, b0), f"{a1 * b1}.", f"{a2}×{b2}={wrong}."]
    texts.append(solution_text(a3, b3)[: rng.randint(3, 9)])
    order = rng.sample(range(4), 4)
    problems = [problems[i] for i in order]
    completions = tokenizer.encode_batch([texts[i] for i in order])
    return *tiny_models(seed), encode_prompts(problems), completions, _BETAS[seed % 3]


def _averaged(count: Callable[[torch.Tensor], Any]) -> Callable[..., torch.Tensor]:
    return lambda model, x, y: _sequence(model, x, y) / count(y)


def _tokens(start: Callable[[torch.Tensor], int]) -> Callable[..., torch.Tensor]:
    return lambda model, x, y: token_log_probs(model, torch.cat([x, y], 1), start(x))


def _ir_with(sequence_log_probs: Callable[..., torch.Tensor]) -> Callable:
    return patched(_implicit_ref, sequence_log_probs=sequence_log_probs)


_token_mean = _averaged(lambda y: completion_mask(y).sum(-1))
_AVERAGED = (
    "Hay que sumar, no promediar: DPO compara log-probabilidades de secuencias "
    "enteras, log π(y | x) = Σ_t log π(y_t | x, y_<t), la suma sobre los tokens "
    "de la respuesta (sin el relleno)."
)

IMPLICIT_MISTAKES = with_messages(
    f"""
ir_mean: {_AVERAGED}
ir_mean_with_padding: {_AVERAGED} Además, la media de las T columnas cuenta el relleno.
ir_swapped: Política y referencia cambiadas: es β (log π − log π_ref). Al revés, la
    recompensa sube cuando la política le quita probabilidad a la respuesta.
ir_no_beta: Falta β: la recompensa implícita es β (log π − log π_ref).
ir_beta_on_policy: β multiplica a la diferencia entera: β (log π − log π_ref), no
    β log π − log π_ref.
ir_prompt_tokens: Cuentas también los tokens del enunciado: prompt_len es la longitud
    del enunciado (`prompts.shape[1]`), para que solo se sumen los de la respuesta.
ir_per_token: Devuelves un valor por token (B, T): falta sumar sobre los tokens de
    cada respuesta (.sum(dim=-1)) para tener uno por respuesta, (B,).
ir_policy_only: Falta la referencia: β (log π − log π_ref). La recompensa implícita
    mide cuánto ha subido la política la respuesta respecto al punto de partida, no
    su probabilidad a secas.
""",
    ("ir_mean", _ir_with(_token_mean)),
    ("ir_mean_with_padding", _ir_with(_averaged(lambda y: y.shape[1]))),
    ("ir_swapped", negated(_implicit_ref)),
    ("ir_no_beta", with_args(_implicit_ref, beta=1.0)),
    (
        "ir_beta_on_policy",
        lambda p, r, x, y, b: b * _sequence(p, x, y) - _sequence(r, x, y).detach(),
    ),
    ("ir_prompt_tokens", _ir_with(lambda *a: _tokens(lambda x: 1)(*a).sum(-1))),
    ("ir_per_token", _ir_with(_tokens(lambda x: x.shape[1]))),
    ("ir_policy_only", lambda p, r, x, y, beta: beta * _sequence(p, x, y)),
)


@exercise(MODULE, "implicit_rewards")
def check_implicit_rewards(implicit_rewards, seeds: Iterable[int] = IMPLICIT_SEEDS):
    """Los valores de ``implicit_rewards``, ``(B,)``, con modelos diminutos."""
    cases = [implicit_case(seed) for seed in seeds]
    name = "implicit_rewards"
    check_cases(
        implicit_rewards, name, cases, _implicit_ref, IMPLICIT_MISTAKES, atol=1e-4
    )


@exercise(MODULE, "implicit_rewards")
def check_implicit_rewards_grad(implicit_rewards, seeds: Iterable[int] = (3,)) -> None:
    """Valores y gradiente: a la política sí; a la referencia, nunca."""
    check_implicit_rewards.__wrapped__(implicit_rewards, seeds)
    leak = _SAYS["reference_has_gradient"]
    frozen = Flow(False, leak.id, leak.message.format(example=""))
    _gradients(
        implicit_rewards,
        "implicit_rewards",
        [implicit_case(seed) for seed in seeds],
        _implicit_ref,
        IMPLICIT_MISTAKES,
        wrt={"policy": MUST, "reference": frozen},
        prefix="ir",
        without_gradient=_SAYS["ir_no_gradient"],
    )


# Un paso de DPO
STEP_SEEDS = (0, 1)
#: SGD con momento: un optimizador nuevo en cada paso o gradientes que se acumulan
#: dejan otros parámetros (con Adam, el primer paso apenas depende de su escala).
STEP_LR, STEP_MOMENTUM = 0.05, 0.9
#: Sin recorte efectivo y con uno que siempre actúa (los gradientes pasan de 0,05).
NO_CLIP, TIGHT_CLIP = 1e6, 0.05


def step_case(seed: int, tied: bool = False) -> tuple[Any, ...]:
    """Dos modelos y cuatro pares; con ``tied``, la referencia es la política."""
    rng = random.Random(seed + 500)
    problems = [(rng.randint(10, 99), rng.randint(10, 99)) for _ in range(4)]
    first, last = problems[:2], problems[2:]
    chosen = [solution_text(*p) for p in first] + [f"{a * b}." for a, b in last]
    rejected = [f"{a * b + 10 * rng.randint(1, 9)}." for a, b in first]
    rejected += [solution_text(*p)[: rng.randint(3, 9)] for p in last]
    policy, reference = tiny_models(seed + 20)
    reference = copy.deepcopy(policy) if tied else reference
    answers = map(tokenizer.encode_batch, (chosen, rejected))
    zeros = torch.zeros(len(problems))  # utilidades y etiquetas: no se usan
    rest = (problems, zeros, zeros.clone(), zeros + 0.5)
    batch = pref.PreferencePairs(encode_prompts(problems), *answers, *rest)
    return policy, reference, batch, _BETAS[seed % 3]


def _never_zeroed(policy, reference, optimizer, *args, **kwargs):
    kept = SimpleNamespace(zero_grad=lambda: None, step=optimizer.step)
    return _step(policy, reference, kept, *args, **kwargs)


def _swapped_pairs(policy, reference, optimizer, batch, *args, **kwargs):
    swapped = dataclasses.replace(batch, chosen=batch.rejected, rejected=batch.chosen)
    return _step(policy, reference, optimizer, swapped, *args, **kwargs)


def _loss_after(*args, **kwargs):
    accuracy = _step(*args, **kwargs)[1]
    return _step(*args, **kwargs)[0], accuracy  # la del 2.º paso: tras el 1.º


def _policy_accuracy(policy, reference, optimizer, batch, *args, **kwargs):
    answers = (batch.chosen, batch.rejected)
    logps = [_sequence(policy, batch.prompts, y).detach() for y in answers]
    loss = _step(policy, reference, optimizer, batch, *args, **kwargs)[0]
    return loss, _acc_ref(*logps)


def _step_accuracy(accuracy: Callable[..., float]) -> Callable:
    return patched(_step, pairwise_accuracy=accuracy)


STEP_MISTAKES = with_messages(
    """
step_no_zero_grad: Los gradientes se acumulan entre pasos: PyTorch los suma en .grad
    hasta que los pones a cero. Llama a optimizer.zero_grad() antes de loss.backward().
step_swapped: Elegida y rechazada cambiadas: la pérdida es −log σ(r̂_w − r̂_l), la
    recompensa implícita de la elegida menos la de la rechazada. Al revés, el paso
    enseña a preferir la rechazada.
step_beta_twice: β aparece dos veces: la recompensa implícita ya lleva β, así que la
    pérdida es −log σ(r̂_w − r̂_l), sin otro β. Si usas dpo_loss, pásale
    log-probabilidades (con la β del paso), no recompensas implícitas.
step_no_beta: Falta β: la pérdida de DPO es −log σ(β h), con h la diferencia de los
    log-cocientes entre política y referencia.
step_token_average: Promediaste por token: DPO compara respuestas enteras, con la suma
    de sus log-probabilidades sin el relleno (como en implicit_rewards), no la media.
step_sum: Sumaste la pérdida sobre el lote: es la media de los pares (.mean()), para
    que el paso no dependa del tamaño del lote.
""",
    ("step_no_zero_grad", _never_zeroed),
    ("step_swapped", _swapped_pairs),
    ("step_beta_twice", with_args(_step, beta=lambda a: a.beta**2)),
    ("step_no_beta", with_args(_step, beta=1.0)),
    ("step_token_average", patched(_step, sequence_log_probs=_token_mean)),
    ("step_sum", _logsig(_step, lambda d: len(d) * F.logsigmoid(d))),
)

CLIP_MISTAKES = with_messages(
    """
step_no_clip: Falta recortar la norma del gradiente a max_grad_norm, entre
    loss.backward() y optimizer.step():
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm). Recortar después
    de step() ya no cambia el paso.
""",
    ("step_no_clip", with_args(_step, max_grad_norm=float("inf"))),
)

RETURN_MISTAKES = with_messages(
    """
step_loss_after: La pérdida que devuelves es la de después del paso: devuelve la que
    derivaste (loss.item() de la que pasó por backward).
step_accuracy_policy: La precisión compara log π de la política sin restar la
    referencia: es la de la recompensa implícita, β (log π − log π_ref), la elegida
    por encima de la rechazada.
step_accuracy_reversed: La precisión va al revés: cuenta los pares en que la
    recompensa implícita de la elegida supera a la de la rechazada.
step_accuracy_percent: La precisión es una fracción entre 0 y 1, no un porcentaje.
step_accuracy_ties: En la precisión, un empate cuenta medio acierto, como en
    pairwise_accuracy: en el primer paso desde el SFT la política aún es la
    referencia, todas las recompensas implícitas valen 0 y la precisión debe salir
    0,5 (ni 0 con >, ni 1 con ≥).
""",
    ("step_loss_after", _loss_after),
    ("step_accuracy_policy", _policy_accuracy),
    ("step_accuracy_reversed", _step_accuracy(lambda c, r: _acc_ref(r, c))),
    ("step_accuracy_percent", _step_accuracy(scaled(_acc_ref, 100))),
    # Los empates como fallo (acc_ties_zero) o como acierto (acc_ties_one).
    ("step_accuracy_ties", _step_accuracy(ACCURACY_MISTAKES[0].variant)),
    ("step_accuracy_ties", _step_accuracy(ACCURACY_MISTAKES[1].variant)),
)


def _run_steps(step, seed: int, steps: int, max_grad_norm: float, tied=False):
    """Los modelos, sus parámetros de antes y lo que devolvió el último paso."""
    policy, reference, batch, beta = step_case(seed, tied)
    before = copy.deepcopy([policy.state_dict(), reference.state_dict()])
    optimizer = torch.optim.SGD(policy.parameters(), lr=STEP_LR, momentum=STEP_MOMENTUM)
    args = (policy, reference, optimizer, batch, beta)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(steps):
            returned = step(*args, max_grad_norm=max_grad_norm)
    finally:
        torch.set_num_threads(threads)
    return policy, reference, before, returned


def _parameters_after(step, seed: int, steps: int, max_grad_norm: float):
    """Los de la política tras ``steps`` pasos (y las reglas de la referencia)."""
    policy, reference, (start, frozen), _ = _run_steps(step, seed, steps, max_grad_norm)
    grads = [(n, p.grad) for n, p in reference.named_parameters()]
    if leaked := [n for n, g in grads if g is not None and g.abs().max() > 0]:
        _SAYS["reference_has_gradient"].fail(example=f" (por ejemplo a «{leaked[0]}»)")
    if not same_parameters(reference.state_dict(), frozen):
        _SAYS["step_changes_reference"].fail()
    if same_parameters(policy.state_dict(), start):
        _SAYS["step_parameters_unchanged"].fail()
    return policy.state_dict()


def _check_step_parameters(dpo_step, seeds, steps, max_grad_norm, mistakes) -> None:
    what = f"la política tras {steps} pasos"
    for seed in seeds:
        check_procedure(
            dpo_step,
            _step,
            mistakes,
            run=lambda f, s=seed: _parameters_after(f, s, steps, max_grad_norm),
            same=same_parameters,
            describe=lambda *_: f"Los parámetros de {what} no son los esperados.",
            same_as_mistake=lambda got, wrong: same_parameters(wrong, got),
            unexplained=lambda got, want: compare_parameters(
                got, want, what=what, atol=1e-5, mistake="step_wrong_parameters"
            ),
        )


_STEP_USES = {f.__name__: f for f in (_dpo_ref, _implicit_ref, _acc_ref)}


@exercise(MODULE, "dpo_step", uses=_STEP_USES)
def check_dpo_step(dpo_step, seeds: Iterable[int] = STEP_SEEDS) -> None:
    """Tres pasos sin recorte efectivo: los parámetros y la referencia intacta."""
    _check_step_parameters(dpo_step, seeds, 3, NO_CLIP, STEP_MISTAKES)


@exercise(MODULE, "dpo_step", uses=_STEP_USES)
def check_dpo_step_clip(dpo_step, seeds: Iterable[int] = STEP_SEEDS) -> None:
    """El **recorte**: dos pasos con ``max_grad_norm`` = 0,05, que siempre actúa."""
    mistakes = CLIP_MISTAKES + STEP_MISTAKES
    _check_step_parameters(dpo_step, seeds, 2, TIGHT_CLIP, mistakes)


def _step_returns(step: Callable[..., Any], seed: int, tied: bool) -> tuple:
    promised = "dpo_step debe devolver dos números, (pérdida, precisión)"
    out = _run_steps(step, seed, 1, NO_CLIP, tied)[3]
    loss, accuracy = as_tuple(out, 2, promised, mistake="step_returns_not_pair")
    python_number(loss, "La pérdida que devuelve dpo_step")
    python_number(accuracy, "La precisión que devuelve dpo_step")
    return float(loss), float(accuracy)


@exercise(MODULE, "dpo_step", uses=_STEP_USES)
def check_dpo_step_returns(dpo_step, seeds: Iterable[int] = STEP_SEEDS) -> None:
    """``(pérdida, precisión)``: dos ``float``, de antes del paso (un empate, 0,5)."""
    seeds = list(seeds)
    for seed, tied in [(seed, False) for seed in seeds] + [(seeds[0], True)]:
        check_procedure(
            dpo_step,
            _step,
            RETURN_MISTAKES,
            run=functools.partial(_step_returns, seed=seed, tied=tied),
            same=lambda got, want: close(got, want, atol=1e-5),
            describe=lambda *_: "",  # el mensaje de la fila ya lo explica todo
            unexplained=lambda got, want: _SAYS["wrong_result"].fail(
                got=[*map(significant, got)], want=[*map(significant, want)]
            ),
        )


# La política óptima del objetivo con KL (de dónde sale DPO)
def optimal_case(seed: int, size: int, beta: float) -> tuple[Any, ...]:
    """Un bandido de ``size`` brazos: π_ref al azar (suma 1), r en [−2, 2] y β."""
    g = torch.Generator().manual_seed(seed)
    reference = torch.softmax(torch.randn(size, generator=g), dim=-1)
    rewards = _eighths(4 * torch.rand(size, generator=g) - 2)
    return reference, rewards, beta


#: Casos con r/β moderado (hasta ±40): la fórmula directa aún no desborda.
OPTIMAL_CASES = [
    (tensor([0.5, 0.3, 0.2]), tensor([0.0, 1.0, 2.0]), 1.0),
    (tensor([0.25, 0.25, 0.25, 0.25]), tensor([1.0, -1.0, 0.5, 0.0]), 0.5),
    optimal_case(1, 5, 0.1),
    optimal_case(2, 4, 2.0),
    (tensor([0.9, 0.1]), tensor([0.0, 0.0]), 0.3),
]
#: r/β de cientos a miles: e^{r/β} desborda en float32 (por encima de 88).
OPTIMAL_STABLE_CASES = [
    (tensor([0.5, 0.3, 0.2]), tensor([0.0, 1.0, 2.0]), 0.01),
    (tensor([0.1, 0.2, 0.3, 0.4]), tensor([-5.0, 3.0, 2.5, 3.0]), 0.005),
]

# opt_beta_whole se escribe a mano: con otra π_ref, p^{1/β} se haría 0.
OPTIMAL_MISTAKES = with_messages(
    """
opt_no_partition: Falta dividir por Z: π_ref·e^{r/β} no suma 1. Z = Σ_y
    π_ref(y)·e^{r(y)/β} es la suma de esos numeradores, y π* es una distribución.
opt_sign: El signo de la recompensa va al revés: π* ∝ π_ref·e^{+r/β}. Con el menos, la
    política óptima preferiría las respuestas con menos recompensa.
opt_beta_times: β divide a la recompensa, no la multiplica: e^{r/β}. Una β grande
    (mucha penalización KL) debe dejar π* cerca de π_ref; con β·r pasa lo contrario.
opt_beta_whole: β divide solo a la recompensa: log π* = log π_ref + r/β − log Z.
    Dividiste también log π_ref, que es como elevar π_ref a 1/β.
opt_no_reference: Falta π_ref: π* ∝ π_ref·e^{r/β}. Sin ella sale la política óptima sin
    penalización KL respecto a una referencia uniforme, no la de tu referencia.
opt_probs_not_logs: Dentro de softmax van logaritmos: softmax(log π_ref + r/β). Sumaste
    la probabilidad π_ref, no su logaritmo.
""",
    ("opt_no_partition", lambda p, r, b: p * torch.exp(r / b)),
    ("opt_sign", lambda p, r, b: _optimal(p, -r, b)),
    ("opt_beta_times", lambda p, r, b: _optimal(p, r, 1 / b)),
    ("opt_beta_whole", lambda p, r, b: (p.log() + r).div(b).softmax(-1)),
    ("opt_no_reference", lambda p, r, b: _optimal(0 * p + 1, r, b)),
    ("opt_probs_not_logs", lambda p, r, b: _optimal(p.exp(), r, b)),
)

check_optimal_policy = _values(
    "optimal_policy", _optimal, OPTIMAL_MISTAKES, OPTIMAL_CASES, atol=1e-5
)


@exercise(MODULE, "optimal_policy")
def check_optimal_policy_stable(optimal_policy, cases: list | None = None) -> None:
    """π* con r/β de cientos a miles: finita y exacta."""
    cases = list(cases or OPTIMAL_STABLE_CASES)
    for case in cases:
        out = call(optimal_policy, "optimal_policy", *case)
        if torch.is_tensor(out) and not torch.isfinite(out).all():
            top = significant(float((case[1] / case[2]).abs().max()))
            intro = (
                f"Con β = {significant(case[2])} (r/β de hasta {top}), optimal_policy"
            )
            _SAYS["opt_overflow"].fail(intro=f"{intro} devolvió valores inf o nan.\n")
    check_optimal_policy.__wrapped__(optimal_policy, cases)
