"""Comprobaciones del módulo 09 · El puente: del modelo diminuto a transformers y TRL.

Cada ejercicio con varios aspectos (valores, relleno, gradiente, tipo) tiene
una comprobación por aspecto, y el cuaderno una celda calificada por cada
una: una respuesta a medias se lleva los puntos de lo que tiene bien.

Los casos se construyen con tensores pequeños y semilla fija; el modelo del
ejercicio de acumulación es un GPT-2 diminuto de transformers con pesos
aleatorios fijos (rápido y de la misma clase que el del curso convertido).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.nn import functional as F

from helpers.checks import (
    Mistake,
    call,
    check_cases,
    check_procedure,
    close,
    compare_parameters,
    describe_difference,
    exercise,
    fail,
    python_number,
    tensor,
)
from helpers.puente.losses import response_log_probs as ref_response_log_probs
from helpers.puente.plumbing import accumulate_gradients as ref_accumulate
from helpers.puente.plumbing import informative_groups as ref_informative_groups
from helpers.puente.plumbing import masked_mean as ref_masked_mean
from helpers.puente.plumbing import trl_normalize as ref_trl_normalize

MODULE = "09_puente"
VOCAB = 15  # el alfabeto del curso (relleno incluido)
PAD_ID = 0


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------------------
# Ejercicio 1 · log-probabilidades por token desde los logits de HF
# ---------------------------------------------------------------------------


def log_probs_case(
    seed: int, prompt_len: int, lengths: list[int], width: int
) -> tuple[torch.Tensor, torch.Tensor, int, torch.Tensor]:
    """``(logits, input_ids, prompt_len, mask)``: B respuestas de las
    longitudes dadas, rellenadas a la derecha hasta ``width`` con el id 0."""
    generator = _generator(seed)
    batch = len(lengths)
    total = prompt_len + width
    logits = 2 * torch.randn(batch, total, VOCAB, generator=generator)
    input_ids = torch.randint(1, VOCAB, (batch, total), generator=generator)
    mask = torch.zeros(batch, width)
    for row, n in enumerate(lengths):
        mask[row, :n] = 1.0
        input_ids[row, prompt_len + n :] = PAD_ID
    return logits, input_ids, prompt_len, mask


_LOG_PROBS_CASES = [
    log_probs_case(0, 3, [5, 2, 4], 5),
    log_probs_case(1, 6, [4, 4], 4),
    log_probs_case(2, 2, [1, 3, 6, 2], 6),
]


def _lp_no_shift(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len:], dim=-1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1)
    return chosen * mask


def _lp_labels_shifted_too(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len - 1 : -1], dim=-1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len - 1 : -1, None]).squeeze(-1)
    return chosen * mask


def _lp_raw_logits(logits, input_ids, prompt_len, mask):
    shifted = logits[:, prompt_len - 1 : -1]
    return shifted.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1) * mask


def _lp_probabilities(logits, input_ids, prompt_len, mask):
    probs = F.softmax(logits[:, prompt_len - 1 : -1], dim=-1)
    return probs.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1) * mask


def _lp_unmasked(logits, input_ids, prompt_len, mask):
    return ref_response_log_probs(logits, input_ids, prompt_len)


def _lp_wrong_dim(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len - 1 : -1], dim=1)
    return log_p.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1) * mask


_LOG_PROBS_MISTAKES: list[Mistake] = [
    Mistake(
        "lp_no_shift",
        _lp_no_shift,
        "Falta el desplazamiento: los logits de la posición t predicen el token "
        "t + 1. El token de la respuesta en la posición P + j se lee en los "
        "logits de la posición P + j − 1: logits[:, P − 1 : −1].",
    ),
    Mistake(
        "lp_labels_shifted_too",
        _lp_labels_shifted_too,
        "Desplazaste los logits y también los tokens: así cada logit «predice» "
        "el token que ya tenía delante. Los logits van de P − 1 a −1 y los "
        "tokens que se leen son los de la respuesta, input_ids[:, P:].",
    ),
    Mistake(
        "lp_raw_logits",
        _lp_raw_logits,
        "Devuelves el logit del token, no su log-probabilidad: pasa los logits "
        "por log_softmax sobre el vocabulario (el último eje) antes de elegir.",
    ),
    Mistake(
        "lp_probabilities",
        _lp_probabilities,
        "Devuelves probabilidades (softmax), no log-probabilidades: usa "
        "log_softmax (más estable que log(softmax(...))).",
    ),
    Mistake(
        "lp_unmasked",
        _lp_unmasked,
        "En el relleno debe salir 0: multiplica por la máscara o usa "
        "torch.where(mask.bool(), ..., 0).",
    ),
    Mistake(
        "lp_wrong_dim",
        _lp_wrong_dim,
        "El log_softmax va sobre el vocabulario, el último eje (dim=-1): sobre "
        "otro eje reparte la probabilidad entre posiciones, no entre tokens.",
    ),
]


def _log_probs_ref(logits, input_ids, prompt_len, mask):
    return ref_response_log_probs(logits, input_ids, prompt_len, mask)


@exercise(MODULE, "response_log_probs")
def check_response_log_probs(
    response_log_probs: Callable[..., Any], cases: list | None = None
) -> None:
    """Los **valores** de ``response_log_probs(logits, ids, prompt_len, mask)``."""
    check_cases(
        response_log_probs,
        "response_log_probs",
        cases or _LOG_PROBS_CASES,
        _log_probs_ref,
        _LOG_PROBS_MISTAKES,
        atol=1e-5,
    )


@exercise(MODULE, "response_log_probs")
def check_response_log_probs_shape(
    response_log_probs: Callable[..., Any], cases: list | None = None
) -> None:
    """La **forma** ``(B, T)`` y los ceros del relleno, con ids de relleno
    cualesquiera (los del relleno no tienen por qué ser 0)."""
    for logits, input_ids, prompt_len, mask in cases or _LOG_PROBS_CASES[:2]:
        ids = input_ids.clone()
        pad = ~mask.bool()
        ids[:, prompt_len:][pad] = VOCAB - 1  # otro id en el relleno
        got = call(
            response_log_probs, "response_log_probs", logits, ids, prompt_len, mask
        )
        if not isinstance(got, torch.Tensor):
            fail(
                "response_log_probs debe devolver un tensor de PyTorch (B, T); "
                f"devolvió {type(got).__name__}.",
                "lp_not_a_tensor",
            )
        if tuple(got.shape) != tuple(mask.shape):
            fail(
                f"response_log_probs devolvió forma {tuple(got.shape)}; debía ser "
                f"(B, T) = {tuple(mask.shape)}, una columna por token de la "
                "respuesta (input_ids[:, P:]), no por toda la secuencia.",
                "lp_wrong_shape",
            )
        if (got.detach()[pad] != 0).any():
            fail(
                "En el relleno (mask = 0) debe salir exactamente 0, sea cual sea "
                "el id que haya en input_ids: multiplica por la máscara o usa "
                "torch.where(mask.bool(), ..., 0).",
                "lp_padding_not_zero",
            )


@exercise(MODULE, "response_log_probs")
def check_response_log_probs_gradient(response_log_probs: Callable[..., Any]) -> None:
    """El **gradiente** llega a los logits (nada de ``.item()``, ``detach`` o NumPy)."""
    logits, input_ids, prompt_len, mask = _LOG_PROBS_CASES[0]
    logits = logits.clone().requires_grad_(True)
    got = response_log_probs(logits, input_ids, prompt_len, mask)
    if not isinstance(got, torch.Tensor) or not got.requires_grad:
        fail(
            "Tu resultado no tiene gradiente respecto a los logits (¿detach, "
            ".item(), .numpy() o torch.no_grad?): la pérdida se deriva a través "
            "de estas log-probabilidades.",
            "lp_no_gradient",
        )
    got.sum().backward()
    want_logits = logits.detach().clone().requires_grad_(True)
    _log_probs_ref(want_logits, input_ids, prompt_len, mask).sum().backward()
    if logits.grad is None or not close(logits.grad, want_logits.grad, atol=1e-5):
        fail(
            "El gradiente respecto a los logits no es el de la referencia. "
            + describe_difference(
                logits.grad if logits.grad is not None else 0 * want_logits.grad,
                want_logits.grad,
                atol=1e-5,
            ),
            "lp_wrong_gradient",
        )


# ---------------------------------------------------------------------------
# Ejercicio 2 · la media con máscara
# ---------------------------------------------------------------------------


def _masked_case(seed: int, lengths: list[int], width: int, fill: float):
    values = torch.randn(len(lengths), width, generator=_generator(seed))
    mask = torch.zeros(len(lengths), width)
    for row, n in enumerate(lengths):
        mask[row, :n] = 1.0
    values = torch.where(mask.bool(), values, torch.full_like(values, fill))
    return values, mask


def _with_dims(case: tuple[torch.Tensor, torch.Tensor]) -> list[tuple]:
    values, mask = case
    return [(values, mask, None), (values, mask, -1)]


_MASKED_CASES = [
    *_with_dims(_masked_case(0, [4, 2, 3], 4, 5.0)),
    *_with_dims(_masked_case(1, [1, 5], 5, -3.0)),
    (*_masked_case(2, [3, 3, 1, 2], 3, 0.7), 1),
]
_MASKED_NONFINITE_CASES = [
    *_with_dims(_masked_case(3, [4, 1, 2], 4, float("nan"))),
    *_with_dims(_masked_case(4, [2, 3], 3, float("inf"))),
    *_with_dims(_masked_case(5, [3, 1], 3, float("-inf"))),
]


def _mm_ref(values, mask, dim=None):
    return ref_masked_mean(values, mask, dim)


def _mm_counts_padding(values, mask, dim=None):
    return values.mean() if dim is None else values.mean(dim=dim)


def _mm_divides_by_all(values, mask, dim=None):
    kept = torch.where(mask.bool(), values, torch.zeros_like(values))
    if dim is None:
        return kept.sum() / mask.numel()
    return kept.sum(dim=dim) / mask.shape[dim]


def _mm_ignores_dim(values, mask, dim=None):
    return ref_masked_mean(values, mask)


def _mm_multiplies(values, mask, dim=None):
    if dim is None:
        return (values * mask).sum() / mask.sum()
    return (values * mask).sum(dim=dim) / mask.sum(dim=dim)


_MASKED_MISTAKES: list[Mistake] = [
    Mistake(
        "mm_counts_padding",
        _mm_counts_padding,
        "Contaste el relleno: values.mean() promedia todas las casillas. Solo "
        "cuentan las de mask = 1.",
    ),
    Mistake(
        "mm_divides_by_all",
        _mm_divides_by_all,
        "Sumaste solo lo válido pero dividiste entre todas las casillas (con el "
        "relleno): divide entre el número de casillas válidas, mask.sum().",
    ),
    Mistake(
        "mm_ignores_dim",
        _mm_ignores_dim,
        "Ignoras dim: con dim=None es la media de todo lo válido (un escalar); "
        "con un eje, la media a lo largo de ese eje (una por fila con dim=-1).",
    ),
]
_NONFINITE_MISTAKES: list[Mistake] = [
    Mistake(
        "mm_multiplies_mask",
        _mm_multiplies,
        "Multiplicas por la máscara: 0 · nan = nan y 0 · inf = nan, así que un "
        "relleno no finito lo estropea todo. Elige con "
        "torch.where(mask.bool(), values, 0) en vez de multiplicar.",
    ),
    *_MASKED_MISTAKES,
]


@exercise(MODULE, "masked_mean")
def check_masked_mean(
    masked_mean: Callable[..., Any], cases: list | None = None
) -> None:
    """``masked_mean(values, mask, dim)`` con relleno finito."""
    check_cases(
        masked_mean,
        "masked_mean",
        cases or _MASKED_CASES,
        _mm_ref,
        _MASKED_MISTAKES,
        atol=1e-5,
    )


@exercise(MODULE, "masked_mean")
def check_masked_mean_nonfinite(
    masked_mean: Callable[..., Any], cases: list | None = None
) -> None:
    """``masked_mean`` con ``nan`` e ``inf`` en el relleno."""
    check_cases(
        masked_mean,
        "masked_mean",
        cases or _MASKED_NONFINITE_CASES,
        _mm_ref,
        _NONFINITE_MISTAKES,
        atol=1e-5,
    )


# ---------------------------------------------------------------------------
# Ejercicio 3 · las normalizaciones de TRL
# ---------------------------------------------------------------------------

MAX_COMPLETION = 8  # > T en los casos: dr_grpo no divide entre el ancho del lote


def _norm_cases(loss_type: str) -> list[tuple]:
    cases = []
    for seed, lengths, width, fill in (
        (10, [5, 2, 4], 5, 9.0),
        (11, [1, 6, 6, 3], 6, float("nan")),
        (12, [3, 3], 4, -2.0),
    ):
        values, mask = _masked_case(seed, lengths, width, fill)
        cases.append((values, mask, loss_type, MAX_COMPLETION))
    return cases


def _norm_with(loss_type: str, wrong: Callable[..., Any]) -> Callable[..., Any]:
    def variant(per_token, mask, kind, max_completion_length):
        if kind == loss_type:
            return wrong(per_token, mask, max_completion_length)
        return ref_trl_normalize(per_token, mask, kind, max_completion_length)

    return variant


def _kept(x, m):
    return torch.where(m.bool(), x, torch.zeros_like(x))


def _norm_multiplies(per_token, mask, kind, max_completion_length):
    kept = per_token * mask
    if kind == "grpo":
        return (kept.sum(-1) / mask.sum(-1)).mean()
    if kind == "bnpo":
        return kept.sum() / mask.sum()
    return kept.sum() / (per_token.shape[0] * max_completion_length)


_NORMALIZE_MISTAKES: list[Mistake] = [
    Mistake(
        "norm_multiplies_mask",
        _norm_multiplies,
        "Multiplicas por la máscara: con nan o inf en el relleno, 0 · nan = nan "
        "y la pérdida entera sale nan. Elige con torch.where(mask.bool(), "
        "per_token, 0) (o usa tu masked_mean).",
    ),
    Mistake(
        "grpo_mean_of_tokens",
        _norm_with("grpo", lambda x, m, L: ref_masked_mean(x, m)),
        "Con «grpo» hiciste la media de todos los tokens del lote (eso es "
        "«bnpo»): primero la media de cada respuesta (dim=-1) y después la "
        "media de esas B medias.",
    ),
    Mistake(
        "grpo_divides_by_width",
        _norm_with("grpo", lambda x, m, L: (_kept(x, m).sum(-1) / x.shape[-1]).mean()),
        "Con «grpo» dividiste cada respuesta entre T, el ancho del lote con "
        "relleno: cada una se divide entre su longitud, mask.sum(dim=-1).",
    ),
    Mistake(
        "bnpo_mean_of_means",
        _norm_with("bnpo", lambda x, m, L: ref_masked_mean(x, m, -1).mean()),
        "Con «bnpo» hiciste la media de cada respuesta y luego la de las "
        "respuestas (eso es «grpo»): en «bnpo» todos los tokens del lote pesan "
        "igual, la suma entre mask.sum().",
    ),
    Mistake(
        "dr_grpo_divides_by_batch",
        _norm_with("dr_grpo", lambda x, m, L: _kept(x, m).sum() / x.shape[0]),
        "Con «dr_grpo» dividiste solo entre B: TRL divide entre "
        "B · max_completion_length.",
    ),
    Mistake(
        "dr_grpo_divides_by_width",
        _norm_with("dr_grpo", lambda x, m, L: _kept(x, m).sum() / x.numel()),
        "Con «dr_grpo» dividiste entre B · T, el ancho de este lote: TRL divide "
        "entre B · max_completion_length, una constante que no depende de lo "
        "largas que salieran las respuestas del lote.",
    ),
    Mistake(
        "dr_grpo_divides_by_tokens",
        _norm_with("dr_grpo", lambda x, m, L: ref_masked_mean(x, m)),
        "Con «dr_grpo» dividiste entre el número de tokens válidos (eso es "
        "«bnpo»): el divisor es la constante B · max_completion_length.",
    ),
]


@exercise(MODULE, "trl_normalize", uses={"masked_mean": _mm_ref})
def check_trl_normalize(
    trl_normalize: Callable[..., Any],
    loss_type: str = "grpo",
    cases: list | None = None,
) -> None:
    """``trl_normalize(per_token, mask, loss_type, max_completion_length)`` en un
    ``loss_type`` (una celda calificada por cada uno: crédito parcial)."""
    cases = cases or _norm_cases(loss_type)
    check_cases(
        trl_normalize,
        "trl_normalize",
        cases,
        ref_trl_normalize,
        _NORMALIZE_MISTAKES,
        atol=1e-5,
    )
    per_token, mask, kind, length = cases[0]
    per_token = per_token.clone().requires_grad_(True)
    loss = trl_normalize(per_token, mask, kind, length)
    if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
        fail(
            "Tu pérdida no tiene gradiente (¿.item(), float() o detach?): "
            "devuelve un tensor de PyTorch para poder hacer loss.backward().",
            "norm_no_gradient",
        )


# ---------------------------------------------------------------------------
# Ejercicio 4 · acumular el gradiente en micro-lotes
# ---------------------------------------------------------------------------

ACCUMULATE_PROMPT_LEN = 3


def tiny_gpt2(seed: int = 0):
    """Un GPT-2 de transformers diminuto (una capa, 16 dimensiones) con pesos
    aleatorios fijos: la misma clase que el modelo del curso convertido."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=VOCAB,
        n_positions=16,
        n_embd=16,
        n_layer=1,
        n_head=2,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=None,
        eos_token_id=None,
        attn_implementation="eager",
    )
    # Los pesos salen del generador global: se fija la semilla sin cambiar el
    # estado aleatorio del cuaderno del estudiante
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return GPT2LMHeadModel(config).eval()


def accumulate_case(seed: int, lengths: list[int], width: int = 5):
    """``(input_ids, prompt_len, mask, advantages)`` de B = len(lengths) filas."""
    _, input_ids, prompt_len, mask = log_probs_case(
        seed, ACCUMULATE_PROMPT_LEN, lengths, width
    )
    advantages = torch.randn(len(lengths), generator=_generator(seed + 100))
    return input_ids, prompt_len, mask, advantages


#: B = 8 respuestas de longitudes distintas; k = 1, 2 y 4 micro-lotes
ACCUMULATE_BATCH = accumulate_case(20, [5, 1, 3, 5, 2, 4, 4, 1])


def _accumulate_variant(
    *,
    local_tokens=False,
    mean_of_means=False,
    zero_each=False,
    no_mask=False,
    sign=1.0,
    no_norm=False,
):
    """La referencia con un error típico."""

    def accumulate(model, input_ids, prompt_len, mask, advantages, num_microbatches):
        size = input_ids.shape[0] // num_microbatches
        total_tokens = mask.sum()
        total = 0.0
        for start in range(0, input_ids.shape[0], size):
            rows = slice(start, start + size)
            if zero_each:
                model.zero_grad()
            logits = model(input_ids[rows]).logits
            m = torch.ones_like(mask[rows]) if no_mask else mask[rows]
            log_probs = ref_response_log_probs(logits, input_ids[rows], prompt_len, m)
            weighted = sign * advantages[rows][:, None] * log_probs * m
            if no_norm:
                loss = -weighted.sum()
            elif local_tokens:
                loss = -weighted.sum() / m.sum()
                if mean_of_means:
                    loss = loss / num_microbatches
            else:
                loss = -weighted.sum() / total_tokens
            loss.backward()
            total += loss.item()
        return total

    return accumulate


_ACCUMULATE_MISTAKES: list[Mistake] = [
    Mistake(
        "acc_mean_of_means",
        _accumulate_variant(local_tokens=True, mean_of_means=True),
        "Cada micro-lote se normaliza entre sus propios tokens y luego divides "
        "entre k: es la media de k medias, que solo coincide con la del lote "
        "entero si todos los micro-lotes tienen los mismos tokens (el fallo "
        "de acumulación que transformers corrigió en 2024). Divide cada trozo "
        "entre los tokens de todo el lote, mask.sum().",
    ),
    Mistake(
        "acc_local_tokens",
        _accumulate_variant(local_tokens=True),
        "Cada micro-lote se normaliza entre sus propios tokens: así la suma "
        "pesa k veces más y los trozos con menos tokens pesan más por token. "
        "Divide cada trozo entre los tokens de todo el lote, mask.sum().",
    ),
    Mistake(
        "acc_zero_grad_inside",
        _accumulate_variant(zero_each=True),
        "Pones los gradientes a 0 dentro del bucle: solo sobrevive el último "
        "micro-lote. backward() suma en .grad; deja que sume.",
    ),
    Mistake(
        "acc_counts_padding",
        _accumulate_variant(no_mask=True),
        "Cuentas los tokens de relleno: multiplica por la máscara (y normaliza "
        "entre los tokens de verdad).",
    ),
    Mistake(
        "acc_sign",
        _accumulate_variant(sign=-1.0),
        "El signo: la pérdida es −Σ A · log π / N (el optimizador minimiza).",
    ),
    Mistake(
        "acc_no_divisor",
        _accumulate_variant(no_norm=True),
        "Falta el divisor: la pérdida es la suma entre el número de tokens de "
        "todo el lote, mask.sum().",
    ),
]


class _ForwardLog:
    """Apunta cuántas filas recibe cada forward del modelo."""

    def __init__(self, model) -> None:
        self.sizes: list[int] = []
        self.handle = model.register_forward_pre_hook(self._record, with_kwargs=True)

    def _record(self, module, args, kwargs):
        ids = args[0] if args else kwargs.get("input_ids")
        self.sizes.append(int(ids.shape[0]) if ids is not None else -1)

    def remove(self) -> None:
        self.handle.remove()


def _run_accumulate(accumulate, k: int, preset: bool = False):
    """Gradientes (y lo devuelto, y los tamaños de los forward) tras una llamada."""
    model = tiny_gpt2()
    if preset:  # gradientes de antes: la función debe sumarles, no borrarlos
        for p in model.parameters():
            p.grad = torch.full_like(p, 0.01)
    input_ids, prompt_len, mask, advantages = ACCUMULATE_BATCH
    given = [x.clone() for x in (input_ids, mask, advantages)]
    log = _ForwardLog(model)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        value = accumulate(model, given[0], prompt_len, given[1], given[2], k)
    finally:
        torch.set_num_threads(previous_threads)
        log.remove()
    for name, before, after in zip(
        ("input_ids", "mask", "advantages"),
        (input_ids, mask, advantages),
        given,
        strict=True,
    ):
        if not torch.equal(before, after):
            fail(
                f"accumulate_gradients modificó su argumento {name}: quien la "
                "llama lo sigue usando. Calcula sobre valores nuevos.",
                "modified_input",
            )
    grads = {
        name: (p.grad.clone() if p.grad is not None else torch.zeros_like(p))
        for name, p in model.named_parameters()
    }
    return grads, value, log.sizes


def _same_grads(a, b) -> bool:
    return all(torch.allclose(a[n], b[n], atol=1e-7, rtol=1e-4) for n in b)


def _whole_batch(model, input_ids, prompt_len, mask, advantages, num_microbatches):
    """La referencia con el lote entero (k = 1), se pida el k que se pida: sus
    gradientes son los que debe dar cualquier número de micro-lotes."""
    return ref_accumulate(model, input_ids, prompt_len, mask, advantages, 1)


def _check_gradients(accumulate_gradients: Callable[..., Any], k: int) -> None:
    """:func:`check_procedure` con los gradientes que deja una llamada con
    ``k`` micro-lotes. Si un error típico los explica, lo dice; si ninguno,
    :func:`compare_parameters` dice qué gradiente difiere primero y dónde."""
    what = f"el gradiente con k = {k} micro-lotes"

    def unexplained(got, want) -> None:
        compare_parameters(
            got, want, what=what, atol=1e-7, mistake="acc_wrong_gradients"
        )

    check_procedure(
        accumulate_gradients,
        _whole_batch,
        _ACCUMULATE_MISTAKES,
        run=lambda accumulate: _run_accumulate(accumulate, k)[0],
        same=_same_grads,
        describe=lambda got, want: (
            f"Con k = {k} micro-lotes, los gradientes no son los del lote entero."
        ),
        same_as_mistake=lambda got, wrong: _same_grads(wrong, got),
        unexplained=unexplained,
    )


@exercise(
    MODULE,
    "accumulate_gradients",
    uses={"response_log_probs": _log_probs_ref},
)
def check_accumulate_gradients(accumulate_gradients: Callable[..., Any]) -> None:
    """Los **gradientes** con k = 1, 2 y 4 micro-lotes son los del lote entero."""
    for k in (1, 2, 4):
        _check_gradients(accumulate_gradients, k)


@exercise(
    MODULE,
    "accumulate_gradients",
    uses={"response_log_probs": _log_probs_ref},
)
def check_accumulate_gradients_microbatches(
    accumulate_gradients: Callable[..., Any],
) -> None:
    """Un forward por micro-lote de B/k filas, lo devuelto es L como ``float`` y
    los gradientes se suman a los que ya hubiera."""
    input_ids = ACCUMULATE_BATCH[0]
    batch = input_ids.shape[0]
    for k in (2, 4):
        _, value, sizes = _run_accumulate(accumulate_gradients, k)
        if sizes != [batch // k] * k:
            fail(
                f"Con k = {k}, el modelo recibió forward de {sizes} filas; debían "
                f"ser {k} forward de B/k = {batch // k} filas seguidas (un forward "
                "y un backward por micro-lote, nunca el lote entero a la vez).",
                "acc_forward_sizes",
            )
        python_number(value, "Lo que devuelve accumulate_gradients (la pérdida L)")
        _, want_value, _ = _run_accumulate(ref_accumulate, k)
        if not close(float(value), want_value, atol=1e-5):
            fail(
                f"Con k = {k}, devolviste L = {float(value):.6g} y era "
                f"{want_value:.6g}: devuelve la suma de las pérdidas de los "
                "micro-lotes (cada una ya dividida entre los tokens del lote).",
                "acc_wrong_value",
            )
    got, _, _ = _run_accumulate(accumulate_gradients, 2, preset=True)
    want, _, _ = _run_accumulate(ref_accumulate, 2, preset=True)
    if not _same_grads(got, want):
        fail(
            "Con gradientes de antes en .grad, los tuyos no son los de antes más "
            "los del lote: accumulate_gradients no debe poner .grad a 0 (ni "
            "antes ni dentro del bucle); quien la llama decide cuándo.",
            "acc_resets_grad",
        )


# ---------------------------------------------------------------------------
# Ejercicio 5 · saltarse los grupos sin señal
# ---------------------------------------------------------------------------


_INFORMATIVE_CASES = [
    (tensor([0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0]), 4),
    (tensor([1, 0, 0, 0, 0, 0]), 2),
    (tensor([0.5, 0.5, 0.5, 2.0, 2.0, 1.0, 0.25, 0.25, 0.25]), 3),
    (tensor([1, 1, 1, 1, 0, 0, 0, 1]), 4),
    (tensor([3.0, 3.0, 3.0, 3.0]), 4),
]


def _ig_mixed_binary(rewards, group_size):
    means = rewards.reshape(-1, group_size).mean(dim=-1)
    return ((means > 0) & (means < 1)).repeat_interleave(group_size)


def _ig_per_group(rewards, group_size):
    groups = rewards.reshape(-1, group_size)
    return (groups != groups[:, :1]).any(dim=-1)


def _ig_tiled(rewards, group_size):
    groups = rewards.reshape(group_size, -1).T
    varied = (groups != groups[:, :1]).any(dim=-1)
    return varied.repeat(group_size)


def _ig_inverse(rewards, group_size):
    return ~ref_informative_groups(rewards, group_size)


def _ig_batch_std(rewards, group_size):
    return torch.full_like(rewards, bool(rewards.std() > 0), dtype=torch.bool)


_INFORMATIVE_MISTAKES: list[Mistake] = [
    Mistake(
        "ig_mixed_binary",
        _ig_mixed_binary,
        "Miras si la media del grupo está entre 0 y 1: vale para recompensas 0/1, "
        "pero no para otras (un grupo [0,5; 0,5; 0,5] no tiene señal y uno "
        "[2; 2; 1] sí). Un grupo no aporta si todas sus recompensas son iguales.",
    ),
    Mistake(
        "ig_per_group",
        _ig_per_group,
        "Devuelves un valor por grupo: el resultado es uno por respuesta, (B,), "
        "repetido G veces dentro de cada grupo (repeat_interleave).",
    ),
    Mistake(
        "ig_tiled",
        _ig_tiled,
        "Los grupos son G respuestas seguidas (las del primer enunciado, luego "
        "las del segundo...): reshape(-1, G), no reshape(G, -1).",
    ),
    Mistake(
        "ig_inverse",
        _ig_inverse,
        "Está al revés: True en los grupos con recompensas distintas (los que "
        "tienen señal), False en los de todo iguales.",
    ),
    Mistake(
        "ig_batch_std",
        _ig_batch_std,
        "Miras la variación del lote entero: lo que cuenta es la de cada grupo.",
    ),
]


@exercise(MODULE, "informative_groups")
def check_informative_groups(
    informative_groups: Callable[..., Any], cases: list | None = None
) -> None:
    """``informative_groups(rewards, group_size)``: máscara booleana ``(B,)``."""
    cases = cases or _INFORMATIVE_CASES
    check_cases(
        informative_groups,
        "informative_groups",
        cases,
        ref_informative_groups,
        _INFORMATIVE_MISTAKES,
    )
    got = informative_groups(
        *[x.clone() if hasattr(x, "clone") else x for x in cases[0]]
    )
    if not isinstance(got, torch.Tensor) or got.dtype != torch.bool:
        fail(
            "informative_groups debe devolver un tensor booleano (para indexar "
            f"el lote con él); devolvió {type(got).__name__}"
            + (f" de {got.dtype}" if isinstance(got, torch.Tensor) else "")
            + ". Una comparación (!=, >) ya da booleanos.",
            "ig_not_bool",
        )
