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
from helpers.formatting import significant
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
    seed: int, prompt_len: int, lengths: list[int], width: int, pad_id: int = PAD_ID
) -> tuple[torch.Tensor, torch.Tensor, int, torch.Tensor]:
    """``(logits, input_ids, prompt_len, mask)``: B respuestas de las
    longitudes dadas, rellenadas a la derecha hasta ``width`` con ``pad_id``."""
    generator = _generator(seed)
    batch = len(lengths)
    total = prompt_len + width
    logits = 2 * torch.randn(batch, total, VOCAB, generator=generator)
    input_ids = torch.randint(1, VOCAB, (batch, total), generator=generator)
    mask = torch.zeros(batch, width)
    for row, n in enumerate(lengths):
        mask[row, :n] = 1.0
        input_ids[row, prompt_len + n :] = pad_id
    return logits, input_ids, prompt_len, mask


_LOG_PROBS_CASES = [
    log_probs_case(0, 3, [5, 2, 4], 5),
    log_probs_case(1, 6, [4, 4], 4),
    log_probs_case(2, 2, [1, 3, 6, 2], 6),
    log_probs_case(3, 4, [3], 5),  # B = 1: cada eje da otra cosa
]


def nonfinite_padding(
    case: tuple[torch.Tensor, torch.Tensor, int, torch.Tensor],
) -> list[tuple[torch.Tensor, torch.Tensor, int, torch.Tensor]]:
    """El caso con el relleno que permite el enunciado: el logit del id del
    relleno a −∞ en todas las posiciones (prohibido, como en la demo del
    cuaderno), y ``nan`` en los logits de las posiciones del relleno."""
    logits, input_ids, prompt_len, mask = case
    banned = logits.clone()
    banned[..., PAD_ID] = float("-inf")
    ids = input_ids.clone()
    ids[:, prompt_len:][~mask.bool()] = PAD_ID
    broken = logits.clone()
    before = torch.zeros(mask.shape[0], prompt_len, dtype=torch.bool)
    broken[torch.cat([before, ~mask.bool()], dim=1)] = float("nan")
    return [(banned, ids, prompt_len, mask), (broken, input_ids, prompt_len, mask)]


def _lp_no_shift(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len:], dim=-1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1)
    return chosen * mask


def _lp_labels_shifted_too(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len - 1 : -1], dim=-1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len - 1 : -1, None]).squeeze(-1)
    return chosen * mask


def _lp_shift_backwards(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len:], dim=-1)
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


def _lp_over_dim(dim: int) -> Callable[..., Any]:
    def wrong(logits, input_ids, prompt_len, mask):
        log_p = F.log_softmax(logits[:, prompt_len - 1 : -1], dim=dim)
        return log_p.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1) * mask

    return wrong


#: Elegir con la máscara: lo que se dice en vez de «multiplica por la máscara»,
#: que con un −∞ o un nan en el relleno da nan (0 · (−∞) = nan).
_CHOOSE = (
    "Elige con torch.where(mask.bool(), log_probs, 0) (o masked_fill): "
    "multiplicar por la máscara no basta, porque en el relleno puede haber "
    "−∞ o nan, y 0 · (−∞) = nan."
)
_WRONG_DIM = (
    "El log_softmax va sobre el vocabulario, el último eje (dim=-1): sobre otro "
    "eje reparte la probabilidad entre posiciones (dim=1) o entre las "
    "respuestas del lote (dim=0), no entre tokens."
)
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
        "lp_shift_backwards",
        _lp_shift_backwards,
        "Desplazaste al revés: lees el token de la posición t en los logits de "
        "t + 1, que ya lo tenían delante. Son los logits de t − 1 los que "
        "predicen el token t: los de la respuesta, input_ids[:, P:], se leen "
        "en logits[:, P − 1 : −1].",
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
    Mistake("lp_unmasked", _lp_unmasked, f"En el relleno debe salir 0. {_CHOOSE}"),
    Mistake("lp_wrong_dim", _lp_over_dim(1), _WRONG_DIM),
    Mistake("lp_wrong_dim", _lp_over_dim(0), _WRONG_DIM),
]


def _log_probs_ref(logits, input_ids, prompt_len, mask):
    return ref_response_log_probs(logits, input_ids, prompt_len, mask)


def _check_shape(got: Any, mask: torch.Tensor) -> None:
    """Falla si ``got`` (un tensor o un array) no tiene la forma ``(B, T)``."""
    shape = getattr(got, "shape", None)
    if shape is not None and tuple(shape) != tuple(mask.shape):
        extra = (
            "; sobra el último eje, el de gather: quítalo con squeeze(-1)"
            if tuple(shape) == (*mask.shape, 1)
            else ", no una por posición de toda la secuencia"
        )
        fail(
            f"response_log_probs devolvió forma {tuple(shape)}; debía ser (B, T) = "
            f"{tuple(mask.shape)}, una columna por token de la respuesta "
            f"(input_ids[:, P:]){extra}.",
            "lp_wrong_shape",
        )


@exercise(MODULE, "response_log_probs", "los valores")
def check_response_log_probs(
    response_log_probs: Callable[..., Any], cases: list | None = None
) -> None:
    """Los **valores** de ``response_log_probs(logits, ids, prompt_len, mask)``."""
    cases = cases or _LOG_PROBS_CASES
    try:  # la forma, antes que los valores: su mensaje dice más
        first = call(response_log_probs, "response_log_probs", *cases[0])
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001 - check_cases lo diagnostica
        first = None
    _check_shape(first, cases[0][3])
    check_cases(
        response_log_probs,
        "response_log_probs",
        cases,
        _log_probs_ref,
        _LOG_PROBS_MISTAKES,
        atol=1e-5,
    )


@exercise(MODULE, "response_log_probs", "la forma y el relleno")
def check_response_log_probs_shape(
    response_log_probs: Callable[..., Any], cases: list | None = None
) -> None:
    """La **forma** ``(B, T)`` y los ceros del relleno: con ids de relleno
    cualesquiera (no tienen por qué ser 0), con el logit del relleno a −∞ y
    con ``nan`` en los logits de las posiciones del relleno."""
    for case in cases or _LOG_PROBS_CASES[:2]:
        logits, input_ids, prompt_len, mask = case
        pad = ~mask.bool()
        ids = input_ids.clone()
        ids[:, prompt_len:][pad] = VOCAB - 1  # otro id en el relleno
        for kind, args in [("id", (logits, ids, prompt_len, mask))] + [
            ("nonfinite", variant) for variant in nonfinite_padding(case)
        ]:
            got = call(response_log_probs, "response_log_probs", *args)
            if not isinstance(got, torch.Tensor):
                fail(
                    "response_log_probs debe devolver un tensor de PyTorch (B, T); "
                    f"devolvió {type(got).__name__}.",
                    "lp_not_a_tensor",
                )
            _check_shape(got, mask)
            padding = got.detach()[pad]
            if kind == "id" and (padding != 0).any():
                fail(
                    "En el relleno (mask = 0) debe salir exactamente 0, sea cual "
                    "sea el id que haya en input_ids: el relleno lo dice la "
                    "máscara, no el id (el del relleno no tiene por qué ser 0). "
                    + _CHOOSE,
                    "lp_padding_not_zero",
                )
            if (padding != 0).any():
                fail(
                    f"En el relleno salió {significant(padding[padding != 0][0])}, "
                    "no 0, con el logit del relleno a −∞ (como en la demo) o con "
                    f"nan en los logits de las posiciones del relleno. {_CHOOSE}",
                    "lp_multiplies_mask",
                )


@exercise(MODULE, "response_log_probs", "el gradiente")
def check_response_log_probs_gradient(
    response_log_probs: Callable[..., Any], case: tuple | None = None
) -> None:
    """El **gradiente** llega a los logits (nada de ``.item()``, ``detach`` o
    NumPy) y es el de la referencia: nada al relleno ni a la última fila."""
    logits, input_ids, prompt_len, mask = case or _LOG_PROBS_CASES[0]
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
    want = want_logits.grad
    grad = logits.grad if logits.grad is not None else torch.zeros_like(want)
    if not close(grad, want, atol=1e-5):
        difference = describe_difference(grad, want, atol=1e-5)
        # Filas de logits que no deben recibir nada: el enunciado, el relleno
        # y la última (predice lo que viene después de la secuencia)
        leaked = ((want == 0).all(-1) & (grad != 0).any(-1)).nonzero()
        if len(leaked):
            hint = (
                f"Llega gradiente a la fila de logits {leaked[0].tolist()}, que no "
                "debe recibirlo: solo cuentan las filas que leen un token de la "
                "respuesta, y del relleno no debe llegar nada."
            )
        else:
            hint = (
                "Si tus valores ya pasan su comprobación, ¿cortaste el "
                "gradiente de una parte con detach (el log-sumexp del "
                "denominador, el máximo que restas)? Todo el log-softmax debe "
                "derivarse."
            )
        fail(
            "El gradiente respecto a los logits no es el de la referencia: "
            + difference.replace("devuelve un array que difiere", "difiere", 1)
            + f" {hint}",
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


def _with_dims(case: tuple[torch.Tensor, torch.Tensor], dims=(None, -1)) -> list:
    values, mask = case
    return [(values, mask, dim) for dim in dims]


def _stacked(*cases: tuple[torch.Tensor, torch.Tensor]) -> tuple:
    """Varios casos de la misma forma, uno encima de otro: un caso 3-D."""
    return torch.stack([v for v, _ in cases]), torch.stack([m for _, m in cases])


# Cada eje que admite dim: None, el último, el primero (0, que no es None) y
# uno del medio en un caso 3-D
_MASKED_CASES = [
    *_with_dims(_masked_case(0, [4, 2, 3], 4, 5.0), (None, -1, 0)),
    *_with_dims(_masked_case(1, [1, 5], 5, -3.0)),
    (*_masked_case(2, [3, 3, 1, 2], 3, 0.7), 1),
    (*_stacked(_masked_case(6, [2, 3], 3, 4.0), _masked_case(7, [1, 3], 3, 4.0)), 1),
]
_MASKED_NONFINITE_CASES = [
    *_with_dims(_masked_case(3, [4, 1, 2], 4, float("nan"))),
    *_with_dims(_masked_case(4, [2, 3], 3, float("inf")), (None, -1, 0)),
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


def _mm_dim_zero_as_none(values, mask, dim=None):
    return ref_masked_mean(values, mask, dim if dim else None)


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
    Mistake(
        "mm_dim_zero_as_none",
        _mm_dim_zero_as_none,
        "Con dim=0 devolviste la media de todo: 0 es un eje (el primero), no "
        "«sin eje». Un if dim: (o if not dim:) toma el 0 por None; pregunta "
        "si dim is None.",
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


@exercise(MODULE, "masked_mean", "relleno finito")
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


@exercise(MODULE, "masked_mean", "relleno con nan e inf")
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
    # El relleno puede valer cualquier cosa: un número, nan, ∞ o −∞ (y B = 1)
    for seed, lengths, width, fill in (
        (10, [5, 2, 4], 5, 9.0),
        (11, [1, 6, 6, 3], 6, float("nan")),
        (12, [3, 3], 4, float("-inf")),
        (13, [2], 4, float("inf")),
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


def accumulate_case(
    seed: int, lengths: list[int], width: int = 5, pad_id: int = PAD_ID
):
    """``(input_ids, prompt_len, mask, advantages)`` de B = len(lengths) filas."""
    _, input_ids, prompt_len, mask = log_probs_case(
        seed, ACCUMULATE_PROMPT_LEN, lengths, width, pad_id
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
        "Cuentas los tokens de relleno: sus log-probabilidades entran en la "
        "suma. response_log_probs, con la máscara del micro-lote, ya pone 0 en "
        "el relleno; y el divisor son los tokens de verdad, mask.sum().",
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


class _CallLog:
    """Apunta, en orden, cada forward del modelo (con las filas que recibe) y
    cada backward que llega a sus parámetros (al embedding, que usan todos)."""

    def __init__(self, model) -> None:
        self.events: list[tuple[str, torch.Tensor | None]] = []
        weight = model.get_input_embeddings().weight
        self.handles = [
            model.register_forward_pre_hook(self._forward, with_kwargs=True),
            weight.register_post_accumulate_grad_hook(self._backward),
        ]

    def _forward(self, module, args, kwargs):
        ids = args[0] if args else kwargs.get("input_ids")
        self.events.append(("forward", None if ids is None else ids.detach().clone()))

    def _backward(self, parameter):
        self.events.append(("backward", None))

    def forwards(self) -> list[torch.Tensor | None]:
        return [ids for kind, ids in self.events if kind == "forward"]

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def _run_accumulate(
    accumulate, k: int, preset: bool = False, batch=ACCUMULATE_BATCH, seed: int = 0
):
    """Gradientes, lo devuelto y el registro de forward y backward tras una
    llamada con ``k`` micro-lotes sobre ``batch`` (el modelo de ``seed``)."""
    model = tiny_gpt2(seed)
    if preset:  # gradientes de antes: la función debe sumarles, no borrarlos
        for p in model.parameters():
            p.grad = torch.full_like(p, 0.01)
    input_ids, prompt_len, mask, advantages = batch
    given = [x.clone() for x in (input_ids, mask, advantages)]
    log = _CallLog(model)
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
    return grads, value, log


def _same_grads(a, b) -> bool:
    return all(torch.allclose(a[n], b[n], atol=1e-7, rtol=1e-4) for n in b)


def _whole_batch(model, input_ids, prompt_len, mask, advantages, num_microbatches):
    """La referencia con el lote entero (k = 1), se pida el k que se pida: sus
    gradientes son los que debe dar cualquier número de micro-lotes."""
    return ref_accumulate(model, input_ids, prompt_len, mask, advantages, 1)


def _check_gradients(
    accumulate_gradients: Callable[..., Any], k: int, batch, seed: int
) -> None:
    """:func:`check_procedure` con los gradientes que deja una llamada con
    ``k`` micro-lotes. Si un error típico los explica, lo dice; si ninguno,
    :func:`compare_parameters` dice qué gradiente difiere primero y dónde."""
    micro = "micro-lote" if k == 1 else "micro-lotes"
    what = f"el gradiente con k = {k} {micro}"

    def unexplained(got, want) -> None:
        compare_parameters(
            got, want, what=what, atol=1e-7, mistake="acc_wrong_gradients"
        )

    check_procedure(
        accumulate_gradients,
        _whole_batch,
        _ACCUMULATE_MISTAKES,
        run=lambda accumulate: _run_accumulate(accumulate, k, False, batch, seed)[0],
        same=_same_grads,
        describe=lambda got, want: (
            f"Con k = {k} {micro}, los gradientes no son los del lote entero."
        ),
        same_as_mistake=lambda got, wrong: _same_grads(wrong, got),
        unexplained=unexplained,
    )


@exercise(
    MODULE,
    "accumulate_gradients",
    "los gradientes",
    uses={"response_log_probs": _log_probs_ref},
)
def check_accumulate_gradients(
    accumulate_gradients: Callable[..., Any],
    batch=ACCUMULATE_BATCH,
    ks: tuple[int, ...] = (1, 2, 4),
    seed: int = 0,
) -> None:
    """Los **gradientes** con k = 1, 2 y 4 micro-lotes son los del lote entero
    (con la ``response_log_probs`` de referencia, como dice el enunciado)."""
    for k in ks:
        _check_gradients(accumulate_gradients, k, batch, seed)


def _check_order(log: _CallLog, input_ids: torch.Tensor, k: int) -> None:
    """Cada micro-lote, sus filas seguidas y en orden, con su forward y
    enseguida su backward."""
    batch = input_ids.shape[0]
    size = batch // k
    sizes = [-1 if ids is None else int(ids.shape[0]) for ids in log.forwards()]
    if sizes != [size] * k:
        fail(
            f"Con k = {k}, el modelo recibió forward de {sizes} filas; debían "
            f"ser {k} forward de B/k = {size} filas seguidas (un forward "
            "y un backward por micro-lote, nunca el lote entero a la vez).",
            "acc_forward_sizes",
        )
    # Qué filas del lote recibió cada forward (−1: una que no es del lote)
    rows = [
        [
            next((i for i, r in enumerate(input_ids) if torch.equal(r, row)), -1)
            for row in ids
        ]
        for ids in log.forwards()
    ]
    want = [list(range(j * size, (j + 1) * size)) for j in range(k)]
    if rows != want:
        strided = rows == [list(range(j, batch, k)) for j in range(k)]
        fail(
            f"Con k = {k}, los micro-lotes fueron las filas {rows}; debían ser "
            f"{want}: el micro-lote j son las filas seguidas de j · B/k a "
            "(j + 1) · B/k − 1, en orden."
            + (
                " Tomaste una fila de cada k (un paso de k al cortar)."
                if strided
                else ""
            ),
            "acc_strided_microbatches",
        )
    kinds = [kind for kind, _ in log.events]
    if kinds != ["forward", "backward"] * k:
        fail(
            f"Con k = {k}, el modelo vio, en este orden: {' → '.join(kinds)}. "
            f"Debían ser {k} parejas forward → backward: cada micro-lote hace "
            "su backward antes del forward del siguiente, y así su grafo (las "
            "activaciones que guarda el forward) se libera enseguida. Con un "
            "solo backward al final, los k grafos viven a la vez en memoria, "
            "como con el lote entero: justo lo que la acumulación evita.",
            "acc_backward_per_microbatch",
        )


@exercise(
    MODULE,
    "accumulate_gradients",
    "los micro-lotes y lo devuelto",
    uses={"response_log_probs": _log_probs_ref},
)
def check_accumulate_gradients_microbatches(
    accumulate_gradients: Callable[..., Any],
    batch=ACCUMULATE_BATCH,
    ks: tuple[int, ...] = (2, 4),
    seed: int = 0,
) -> None:
    """Un forward de B/k filas seguidas y un backward por micro-lote, en orden;
    lo devuelto es L como ``float``, y los gradientes se suman a los que ya
    hubiera."""
    for k in ks:
        _, value, log = _run_accumulate(accumulate_gradients, k, False, batch, seed)
        _check_order(log, batch[0], k)
        python_number(value, "Lo que devuelve accumulate_gradients (la pérdida L)")
        _, want, _ = _run_accumulate(ref_accumulate, k, False, batch, seed)
        value = float(value)
        if not close(value, want, atol=1e-5):
            if close(-value, want, atol=1e-5):
                hint = "Sale con el signo cambiado: L = −Σ A · log π / N."
            elif close(value * k, want, atol=1e-5):
                hint = (
                    f"Es {k} veces menos: devolviste la media de las pérdidas de "
                    "los micro-lotes, y L es su suma (cada una ya va dividida "
                    "entre los tokens del lote entero)."
                )
            else:
                hint = (
                    "Devuelve la suma de las pérdidas de los micro-lotes (cada "
                    "una ya dividida entre los tokens del lote entero)."
                )
            fail(
                f"Con k = {k}, devolviste L = {significant(value)} y era "
                f"{significant(want)}. {hint}",
                "acc_wrong_value",
            )
    got, _, _ = _run_accumulate(accumulate_gradients, ks[0], True, batch, seed)
    want_grads, _, _ = _run_accumulate(ref_accumulate, ks[0], True, batch, seed)
    if not _same_grads(got, want_grads):
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
    # Recompensas iguales que no son exactas en binario: por el redondeo, su
    # desviación típica no sale 0, pero el grupo no tiene señal
    (tensor([0.1, 0.1, 0.1], dtype=torch.float64), 3),
    (tensor([0.2] * 8), 8),
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


def _ig_std_positive(rewards, group_size):
    return (rewards.reshape(-1, group_size).std(dim=-1) > 0).repeat_interleave(
        group_size
    )


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
        "ig_std_rounding",
        _ig_std_positive,
        "Comparas con 0 la variación del grupo (su desviación típica, su "
        "varianza o la distancia a su media), y con floats eso falla: la "
        "desviación típica de tres recompensas iguales de 0,1 no sale "
        "exactamente 0, por el redondeo, y el grupo parece tener señal. "
        "Compara las recompensas entre sí: un grupo no aporta si todas son "
        "iguales.",
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
