"""Comprobaciones del módulo 09 · El puente: del modelo diminuto a transformers."""

from __future__ import annotations

import torch

from helpers.checks import (
    MUST,
    Diagnosis,
    Masked,
    Microbatches,
    Procedure,
    Setup,
    call,
    check_cases,
    check_gradients,
    close,
    compare_parameters,
    diagnoses,
    exercise,
    fail,
    on_output,
    patched,
    python_number,
    same_parameters,
    tensor,
    values_check,
    with_args,
    with_messages,
)
from helpers.formatting import significant
from helpers.puente import plumbing
from helpers.puente.losses import response_log_probs as ref_log_probs

MODULE = "09_puente"
VOCAB = 15  # el alfabeto del curso (relleno incluido)

#: Lo que dicen las reglas de este tema que no son una fila (``fail`` a mano).
SAYS = diagnoses(
    """
lp_not_a_tensor: response_log_probs devolvió {kind}: debe ser un torch.Tensor (B, T).
acc_resets_grad: Con gradientes de antes en .grad, no les sumaste los del lote:
    accumulate_gradients no pone .grad a 0 (ni antes ni dentro del bucle); eso lo
    decide quien la llama.
ig_not_bool: informative_groups debe devolver un tensor booleano (para indexar el lote
    con él); devolvió {kind}. Una comparación (!=, >) ya da booleanos.
"""
)


def _padded(seed: int, lengths: list[int], width: int, fill: float = 0.0):
    """``(values, mask)``: filas de las longitudes dadas y ``fill`` en el relleno."""
    generator = torch.Generator().manual_seed(seed)
    mask = (torch.arange(width) < torch.tensor(lengths)[:, None]).float()
    values = torch.randn(len(lengths), width, generator=generator)
    return values.masked_fill(mask == 0, fill), mask


# --- Ejercicio 1 · log-probabilidades por token desde los logits de HF
def log_probs_case(seed, prompt_len, lengths, width, pad_id=0):
    """``(logits, input_ids, prompt_len, mask)``, rellenado a la derecha con pad_id."""
    generator = torch.Generator().manual_seed(seed)
    total = prompt_len + width
    logits = 2 * torch.randn(len(lengths), total, VOCAB, generator=generator)
    input_ids = torch.randint(1, VOCAB, (len(lengths), total), generator=generator)
    mask = (torch.arange(width) < torch.tensor(lengths)[:, None]).float()
    input_ids[:, prompt_len:][~mask.bool()] = pad_id
    return logits, input_ids, prompt_len, mask


def _read(transform):  # cada token leído en transform(logits), sin log_softmax
    return lambda z, ids, P, m: (
        transform(z[:, P - 1 : -1]).gather(-1, ids[:, P:, None]).squeeze(-1) * m
    )


def _shifted(logits: int = 0, tokens: int = 0):  # desplazados una posición
    return lambda z, i, *r: ref_log_probs(z.roll(-logits, 1), i.roll(tokens, 1), *r)


_READ_AT = "la respuesta, input_ids[:, P:], se lee en logits[:, P − 1 : −1]"
_WHERE = "Elige con torch.where(mask.bool(), log_probs, 0) (o masked_fill)"

# Las dos últimas filas son las de la celda de la forma y el relleno.
*_LP_MISTAKES, _WRONG_SHAPE, _PADDING_NOT_ZERO = with_messages(
    f"""
lp_no_shift: Falta el desplazamiento: los logits de la posición t predicen el token
    t + 1, así que {_READ_AT}.
lp_labels_shifted_too: Desplazaste los logits y también los tokens: así cada logit
    «predice» el token que ya tenía delante. Los tokens no se desplazan: {_READ_AT}.
lp_shift_backwards: Desplazaste al revés: lees el token de la posición t en los logits
    de t + 1, que ya lo tenían delante. Los de t − 1 lo predicen: {_READ_AT}.
lp_raw_logits: Devuelves el logit del token, no su log-probabilidad: pasa los logits por
    log_softmax sobre el vocabulario (el último eje) antes de elegir.
lp_probabilities: Devuelves probabilidades (softmax), no log-probabilidades: usa
    log_softmax (más estable que log(softmax(...))).
lp_unmasked: En el relleno debe salir 0. {_WHERE}: multiplicar por la máscara no basta,
    porque en el relleno puede haber −∞ o nan, y 0 · (−∞) = nan.
lp_wrong_dim: El log_softmax va sobre el vocabulario, el último eje (dim=-1): sobre otro
    reparte la probabilidad entre posiciones (dim=1) o respuestas (dim=0), no tokens.
lp_wrong_shape: Sobra el último eje, el de gather: quítalo con squeeze(-1). Sale (B, T),
    una columna por token de la respuesta (input_ids[:, P:]).
lp_padding_not_zero: En el relleno (mask = 0) debe salir exactamente 0, sea cual sea el
    id que haya en input_ids: el relleno lo dice la máscara, no el id (el del relleno no
    tiene por qué ser 0). {_WHERE}.
""",
    ("lp_no_shift", _shifted(logits=1)),
    ("lp_labels_shifted_too", _shifted(tokens=1)),
    ("lp_shift_backwards", _shifted(logits=1, tokens=1)),
    ("lp_raw_logits", _read(lambda x: x)),
    ("lp_probabilities", _read(lambda x: x.softmax(dim=-1))),
    ("lp_unmasked", with_args(ref_log_probs, mask=None)),
    ("lp_wrong_dim", _read(lambda x: x.log_softmax(dim=1))),
    ("lp_wrong_dim", _read(lambda x: x.log_softmax(dim=0))),
    ("lp_wrong_shape", on_output(ref_log_probs, lambda x: x[..., None], "3D")),
    ("lp_padding_not_zero", with_args(ref_log_probs, mask=None)),
)

_LP = (MODULE, "response_log_probs", ref_log_probs)
_LP_CASES = [
    log_probs_case(0, 3, [5, 2, 4], 5),
    log_probs_case(1, 6, [4, 4], 4),
    log_probs_case(2, 2, [1, 3, 6, 2], 6),
    log_probs_case(3, 4, [3], 5),  # B = 1: cada eje da otra cosa
]
check_response_log_probs = values_check(
    *_LP, [*_LP_MISTAKES, _WRONG_SHAPE], _LP_CASES, aspect="los valores", atol=1e-5
)


def _padding_logits(args: dict) -> torch.Tensor:
    """Los logits de las posiciones del relleno, que pueden valer cualquier cosa."""
    rows = torch.zeros(args["logits"].shape[:2], dtype=torch.bool)
    rows[:, args["prompt_len"] :] = ~args["mask"].bool()
    return rows[..., None].expand(args["logits"].shape)


def _on_padding(out, logits, input_ids, prompt_len, mask):
    """Lo que devuelve en el relleno (0 en lo demás: los valores tienen su celda)."""
    if not isinstance(out, torch.Tensor):
        SAYS["lp_not_a_tensor"].fail(kind=type(out).__name__)
    return out.masked_fill(mask.bool(), 0) if out.shape == mask.shape else out


check_response_log_probs_shape = values_check(
    *_LP,
    [_PADDING_NOT_ZERO, _WRONG_SHAPE],
    [log_probs_case(*c, VOCAB - 1) for c in [(0, 3, [5, 2, 4], 5), (1, 6, [4, 1], 4)]],
    check_name="check_response_log_probs_shape",
    aspect="la forma y el relleno",
    doc="``(B, T)``, 0 en el relleno sean cuales sean su id o sus logits (nan, ±∞).",
    atol=1e-5,
    masked=Masked(
        "mask",
        ("logits",),
        "any",
        mistake="lp_multiplies_mask",
        batched=("input_ids",),
        where={"logits": _padding_logits},
    ),
    view=_on_padding,
)


@exercise(MODULE, "response_log_probs", "el gradiente")
def check_response_log_probs_gradient(response_log_probs, case=None) -> None:
    """El gradiente respecto a los logits (la forma de la salida tiene su celda)."""

    def reshaped(logits, input_ids, prompt_len, mask):
        out = response_log_probs(logits, input_ids, prompt_len, mask)
        fits = isinstance(out, torch.Tensor) and out.numel() == mask.numel()
        return out.reshape(mask.shape) if fits else out

    check_gradients(
        reshaped,
        "response_log_probs",
        [case or _LP_CASES[0]],
        ref_log_probs,
        wrt={"logits": MUST},
        prefix="lp",
        hint="Solo reciben gradiente las filas de logits que leen un token de la "
        "respuesta (de P − 1 a −2), nada del relleno; y todo el log-softmax se "
        "deriva: ¿cortaste con detach el log-sumexp o el máximo que restas?",
        atol=1e-5,
    )


# --- Ejercicio 2 · la media con máscara
def _mm_divides_by_all(values, mask, dim=None):
    size = mask.numel() if dim is None else mask.shape[dim]
    return torch.where(mask.bool(), values, 0.0).sum(dim=dim) / size


def _mm_with(dim=lambda dim: dim, mask=lambda mask: mask):
    return lambda v, m, d=None: plumbing.masked_mean(v, mask(m), dim(d))


_MASKED_MISTAKES = with_messages(
    """
mm_counts_padding: Contaste el relleno: values.mean() promedia todas las casillas. Solo
    cuentan las de mask = 1.
mm_divides_by_all: Sumaste solo lo válido pero dividiste entre todas las casillas (con
    el relleno): divide entre el número de casillas válidas, mask.sum().
mm_ignores_dim: Ignoras dim: con dim=None es la media de todo lo válido (un escalar);
    con un eje, la media a lo largo de ese eje (una por fila con dim=-1).
mm_last_axis_only: Con un eje que no es el último devolviste la media de cada fila: usa
    el eje que te piden, dim, en la suma y en el recuento (sum(dim=dim)).
mm_dim_zero_as_none: Con dim=0 devolviste la media de todo: 0 es un eje (el primero), no
    «sin eje». Un if dim: (o if not dim:) toma el 0 por None; pregunta si dim is None.
""",
    ("mm_counts_padding", _mm_with(mask=torch.ones_like)),
    ("mm_divides_by_all", _mm_divides_by_all),
    ("mm_ignores_dim", _mm_with(dim=lambda d: None)),
    ("mm_last_axis_only", _mm_with(dim=lambda d: d if d is None else -1)),
    ("mm_dim_zero_as_none", _mm_with(dim=lambda d: d or None)),
)

_MASKED_CASES = [_padded(0, [4, 2, 3], 4, 5.0), _padded(1, [1, 5], 5, -3.0)]
_STACKED = zip(_padded(6, [2, 3], 3), _padded(7, [1, 3], 3), strict=True)
_MASKED_CASES.append(tuple(torch.stack(pair) for pair in _STACKED))  # (2, 2, 3)
_MM = (MODULE, "masked_mean", plumbing.masked_mean, _MASKED_MISTAKES, _MASKED_CASES)


def _masked_mean_check(padding: str, aspect: str, suffix: str = "", *, mistake: str):
    masked = Masked("mask", ("values",), padding, mistake, axis="dim", transposed=True)
    name = f"check_masked_mean{suffix}"
    return values_check(*_MM, check_name=name, aspect=aspect, masked=masked, atol=1e-5)


check_masked_mean = _masked_mean_check(
    "finite", "relleno finito", mistake="mm_counts_padding"
)
check_masked_mean_nonfinite = _masked_mean_check(
    "any", "relleno con nan e inf", "_nonfinite", mistake="mm_multiplies_mask"
)


# --- Ejercicio 3 · las normalizaciones de TRL
MAX_COMPLETION = 8  # > T en los casos: dr_grpo no divide entre el ancho del lote


def _as(loss_type: str, wrong: str, length: int | str | None = None):
    """La referencia, salvo con ``loss_type``: la de ``wrong``, con ancho ``length``."""

    def variant(per_token, mask, kind, max_length):
        if kind == loss_type:
            kind = wrong
            max_length = per_token.shape[-1] if length == "T" else length or max_length
        return plumbing.trl_normalize(per_token, mask, kind, max_length)

    return variant


_NORMALIZE_MISTAKES = with_messages(
    """
grpo_mean_of_tokens: Con «grpo» hiciste la media de todos los tokens del lote (eso es
    «bnpo»): primero la media de cada respuesta (dim=-1) y luego la de esas B medias.
grpo_divides_by_width: Con «grpo» dividiste cada respuesta entre T, el ancho del lote
    con relleno: cada una se divide entre su longitud, mask.sum(dim=-1).
bnpo_mean_of_means: Con «bnpo» hiciste la media de las medias de cada respuesta (eso es
    «grpo»): en «bnpo» todos los tokens del lote pesan igual, la suma entre mask.sum().
dr_grpo_divides_by_batch: Con «dr_grpo» dividiste solo entre B: TRL divide entre B ·
    max_completion_length.
dr_grpo_divides_by_width: Con «dr_grpo» dividiste entre B · T, el ancho de este lote:
    TRL divide entre B · max_completion_length, una constante, sea cual sea T.
dr_grpo_divides_by_tokens: Con «dr_grpo» dividiste entre el número de tokens válidos
    (eso es «bnpo»): el divisor es la constante B · max_completion_length.
""",
    ("grpo_mean_of_tokens", _as("grpo", "bnpo")),
    ("grpo_divides_by_width", _as("grpo", "dr_grpo", "T")),
    ("bnpo_mean_of_means", _as("bnpo", "grpo")),
    ("dr_grpo_divides_by_batch", _as("dr_grpo", "dr_grpo", 1)),
    ("dr_grpo_divides_by_width", _as("dr_grpo", "dr_grpo", "T")),
    ("dr_grpo_divides_by_tokens", _as("dr_grpo", "bnpo")),
)

_NORMALIZE_INPUTS = [
    _padded(10, [5, 2, 4], 5, 9.0),
    _padded(11, [1, 6, 6, 3], 6, -2.0),
    _padded(12, [3, 3], 4, 0.5),
]


@exercise(MODULE, "trl_normalize", uses={"masked_mean": plumbing.masked_mean})
def check_trl_normalize(trl_normalize, loss_type: str = "grpo", cases=None) -> None:
    """Un ``loss_type`` por celda: valores con cualquier relleno y gradiente."""
    cases = cases or [(*xm, loss_type, MAX_COMPLETION) for xm in _NORMALIZE_INPUTS]
    common = (trl_normalize, "trl_normalize", cases, plumbing.trl_normalize)
    masked = Masked("mask", ("per_token",), "any", mistake="norm_multiplies_mask")
    check_cases(*common, _NORMALIZE_MISTAKES, atol=1e-5, masked=masked)
    check_gradients(*common, wrt={"per_token": MUST}, prefix="norm", atol=1e-5)


# --- Ejercicio 4 · acumular el gradiente en micro-lotes
def tiny_gpt2(seed: int = 0):
    """Un GPT-2 de una capa como el del curso convertido, con pesos fijos (``seed``)."""
    from transformers import GPT2LMHeadModel

    from helpers.puente.convert import gpt2_config
    from helpers.tinylm import TinyLMConfig

    sizes = TinyLMConfig(max_len=16, d_model=16, n_heads=2, n_layers=1, d_mlp=64)
    config = gpt2_config(sizes)
    config.pad_token_id = None  # sin el aviso de transformers por no dar la máscara
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return GPT2LMHeadModel(config).eval()


def accumulate_case(seed, lengths, width=5, pad_id=0):
    """``(input_ids, prompt_len, mask, advantages)`` de B = len(lengths) filas."""
    _, input_ids, prompt_len, mask = log_probs_case(seed, 3, lengths, width, pad_id)
    generator = torch.Generator().manual_seed(seed + 100)
    return input_ids, prompt_len, mask, torch.randn(len(lengths), generator=generator)


#: B = 8 respuestas de longitudes distintas; k = 1, 2 y 4 micro-lotes
ACCUMULATE_BATCH = accumulate_case(20, [5, 1, 3, 5, 2, 4, 4, 1])


def _reweighted(weight, ones: bool = False):
    """La referencia con cada ventaja por ``weight(mask, k, n)`` (n: los tokens de su
    micro-lote; la pérdida es lineal en ella). ``ones``: el relleno también cuenta."""

    def variant(model, input_ids, prompt_len, mask, advantages, k):
        n = mask.reshape(k, -1).sum(-1).repeat_interleave(len(mask) // k)
        adv = advantages * weight(mask, k, n)
        mask = torch.ones_like(mask) if ones else mask
        return plumbing.accumulate_gradients(model, input_ids, prompt_len, mask, adv, k)

    return variant


def _zero_grad_inside(model, *args):  # con model.zero_grad() en cada micro-lote
    variant = patched(
        plumbing.accumulate_gradients,
        response_log_probs=lambda *x: model.zero_grad() or ref_log_probs(*x),
    )
    return variant(model, *args)


#: Textos que se repiten en los mensajes.
_LOSS = "−Σ A · log π / N"
_EACH = "cada una ya va dividida entre los tokens del lote entero"
_SUM = "la suma de las pérdidas de los micro-lotes"
_WHOLE = "Divide cada trozo entre los tokens de todo el lote, mask.sum()."

_ACC_ROWS = with_messages(
    f"""
acc_mean_of_means: Normalizas cada micro-lote entre sus tokens y divides entre k: la
    media de k medias solo es la del lote entero si todos tienen los mismos tokens (el
    fallo de acumulación que transformers corrigió en 2024). {_WHOLE}
acc_local_tokens: Cada micro-lote se normaliza entre sus propios tokens: así la suma
    pesa k veces más y los trozos con menos tokens pesan más por token. {_WHOLE}
acc_zero_grad_inside: Pones los gradientes a 0 dentro del bucle: solo sobrevive el
    último micro-lote. backward() suma en .grad; deja que sume.
acc_counts_padding: Cuentas los tokens de relleno: sus log-probabilidades entran en la
    suma. response_log_probs, con la máscara del micro-lote, ya pone 0 en el relleno; y
    el divisor son los tokens de verdad, mask.sum().
acc_sign: El signo: la pérdida es {_LOSS} (el optimizador minimiza).
acc_no_divisor: Falta el divisor. {_WHOLE}
""",
    ("acc_mean_of_means", _reweighted(lambda m, k, n: m.sum() / (k * n))),
    ("acc_local_tokens", _reweighted(lambda m, k, n: m.sum() / n)),
    ("acc_zero_grad_inside", _zero_grad_inside),
    ("acc_counts_padding", _reweighted(lambda m, k, n: m.numel() / m.sum(), True)),
    ("acc_sign", _reweighted(lambda m, k, n: -1)),
    ("acc_no_divisor", _reweighted(lambda m, k, n: m.sum())),
)


def _accumulation(batch, k: int, seed: int, preset: bool = False) -> Procedure:
    input_ids, prompt_len, mask, advantages = batch

    def setup() -> Setup:
        model = tiny_gpt2(seed)
        for parameter in model.parameters() if preset else ():
            parameter.grad = torch.full_like(parameter, 0.01)  # debe sumarles
        args = (model, input_ids.clone(), prompt_len, mask.clone(), advantages.clone())
        return Setup((*args, k), model=model, batch=input_ids)

    def observe(state: Setup, returned):
        grads = {
            name: torch.zeros_like(p) if p.grad is None else p.grad.clone()
            for name, p in state.model.named_parameters()
        }
        return grads, returned

    micro = f"k = {k} micro-lote" + ("" if k == 1 else "s")
    header = f"Con {micro}, los gradientes no son los del lote entero."
    what = f"el gradiente con {micro}"
    return Procedure(
        name="accumulate_gradients",
        setup=setup,
        observe=observe,
        same=lambda got, want: same_parameters(got[0], want[0], atol=1e-7),
        describe=lambda got, want: header,
        unexplained=lambda got, want: compare_parameters(
            got[0], want[0], what=what, atol=1e-7, mistake="acc_wrong_gradients"
        ),
    )


_USES = {"response_log_probs": ref_log_probs}
#: La referencia con el lote entero (un micro-lote): lo que debe dar cualquier k.
_AT_ONCE = with_args(plumbing.accumulate_gradients, num_microbatches=1)
_FORWARDS = Diagnosis(id="acc_forward_sizes")
_ORDER = Diagnosis(id="acc_strided_microbatches")


@exercise(MODULE, "accumulate_gradients", "los gradientes", uses=_USES)
def check_accumulate_gradients(
    accumulate_gradients, batch=ACCUMULATE_BATCH, ks=(1, 2, 4), seed: int = 0
) -> None:
    """Con k = 1, 2 y 4 micro-lotes, los gradientes del lote entero."""
    for k in ks:
        _accumulation(batch, k, seed).check(accumulate_gradients, _AT_ONCE, _ACC_ROWS)


@exercise(MODULE, "accumulate_gradients", "los micro-lotes y lo devuelto", uses=_USES)
def check_accumulate_gradients_microbatches(
    accumulate_gradients, batch=ACCUMULATE_BATCH, ks=(2, 4), seed: int = 0
) -> None:
    """Un forward de B/k filas seguidas y su backward por micro-lote, en orden;
    L como ``float``; y los gradientes sumados a los que ya hubiera."""
    reference, B = plumbing.accumulate_gradients, len(batch[0])
    for k in ks:
        procedure = _accumulation(batch, k, seed)
        (_, value), trace = procedure.run(accumulate_gradients, student=True)
        rule = Microbatches(k, B, prefix="acc", forwards=_FORWARDS, rows_order=_ORDER)
        rule.check(trace, "accumulate_gradients")
        python_number(value, "Lo que devuelve accumulate_gradients (la pérdida L)")
        want = procedure.run(reference)[0][1]
        if close(value, want, atol=1e-5):
            continue
        hint = f"Devuelve {_SUM} ({_EACH})."
        if close(-value, want, atol=1e-5):
            hint = f"Sale con el signo cambiado: L = {_LOSS}."
        elif close(value * k, want, atol=1e-5):
            hint = f"Es {k} veces menos: devolviste la media, y L es {_SUM} ({_EACH})."
        shown = f"devolviste L = {significant(value)} y era {significant(want)}"
        fail(f"Con k = {k}, {shown}. {hint}", "acc_wrong_value")
    preset = _accumulation(batch, ks[0], seed, preset=True)
    got, want = (preset.run(f)[0][0] for f in (accumulate_gradients, reference))
    if not same_parameters(got, want, atol=1e-7):
        SAYS["acc_resets_grad"].fail()


# --- Ejercicio 5 · saltarse los grupos sin señal
_INFORMATIVE_CASES = [
    (tensor([0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0]), 4),
    (tensor([1, 0, 0, 0, 0, 0]), 2),
    (tensor([0.5, 0.5, 0.5, 2.0, 2.0, 1.0, 0.25, 0.25, 0.25]), 3),
    (tensor([1, 1, 1, 1, 0, 0, 0, 1]), 4),
    (tensor([3.0, 3.0, 3.0, 3.0]), 4),
    # Iguales pero no exactas en binario: su desviación típica no sale 0
    (tensor([0.1, 0.1, 0.1], dtype=torch.float64), 3),
    (tensor([0.2] * 8), 8),
]


def _ig_mixed_binary(rewards, group_size):
    means = rewards.reshape(-1, group_size).mean(dim=-1)
    return ((means > 0) & (means < 1)).repeat_interleave(group_size)


def _ig_tiled(rewards, group_size):
    """Los grupos salteados, reshape(G, -1): la referencia sobre ellos, en mosaico."""
    strided = rewards.reshape(group_size, -1).T.flatten()
    informative = plumbing.informative_groups(strided, group_size)
    return informative.reshape(-1, group_size).T.flatten()


_INFORMATIVE_MISTAKES = with_messages(
    """
ig_mixed_binary: Miras si la media del grupo está entre 0 y 1: vale para recompensas
    0/1, pero no para otras (un grupo [0,5; 0,5; 0,5] no tiene señal y uno [2; 2; 1]
    sí). Un grupo no aporta si todas sus recompensas son iguales.
ig_per_group: Devuelves un valor por grupo: el resultado es uno por respuesta, (B,),
    repetido G veces dentro de cada grupo (repeat_interleave).
ig_tiled: Los grupos son G respuestas seguidas (las del primer enunciado, luego las del
    segundo...): reshape(-1, G), no reshape(G, -1).
ig_std_rounding: Comparas con 0 la variación del grupo (desviación típica, varianza o
    distancia a la media), y con floats eso falla: la desviación típica de tres
    recompensas iguales de 0,1 no sale 0 por el redondeo, y el grupo parece tener señal.
    Compara las recompensas entre sí: un grupo no aporta si todas son iguales.
ig_inverse: Está al revés: True en los grupos con recompensas distintas (los que tienen
    señal), False en los de todo iguales.
ig_batch_std: Miras la variación del lote entero: lo que cuenta es la de cada grupo.
""",
    ("ig_mixed_binary", _ig_mixed_binary),
    ("ig_per_group", lambda r, g: plumbing.informative_groups(r, g)[::g]),
    ("ig_tiled", _ig_tiled),
    (
        "ig_std_rounding",
        lambda r, g: (r.reshape(-1, g).std(dim=-1) > 0).repeat_interleave(g),
    ),
    ("ig_inverse", lambda r, g: ~plumbing.informative_groups(r, g)),
    ("ig_batch_std", lambda r, g: (r.std() > 0).expand(r.shape)),
)


@exercise(MODULE, "informative_groups")
def check_informative_groups(informative_groups, cases=None) -> None:
    """``informative_groups(rewards, group_size)``: máscara booleana ``(B,)``."""
    cases, name = cases or _INFORMATIVE_CASES, "informative_groups"
    reference = plumbing.informative_groups
    check_cases(informative_groups, name, cases, reference, _INFORMATIVE_MISTAKES)
    got = call(informative_groups, name, *cases[0])
    if not isinstance(got, torch.Tensor) or got.dtype != torch.bool:
        dtype = f" de {got.dtype}" if isinstance(got, torch.Tensor) else ""
        SAYS["ig_not_bool"].fail(kind=type(got).__name__ + dtype)
