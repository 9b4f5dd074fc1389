"""Comprobaciones del módulo 12 · El oráculo: cada error, una referencia cambiada."""

from __future__ import annotations

import functools
import math

import torch

from helpers.checks import (
    Diagnosis,
    Flow,
    check_cases,
    check_gradients,
    exercise,
    values_check,
    variant_of,
    with_args,
    with_messages,
)
from helpers.checks.quiz import statements_check
from helpers.tinylm import estimators, oracle
from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.model import TinyLM, TinyLMConfig
from helpers.tinylm.sampling import token_log_probs
from helpers.tinylm.task import PROMPT_LEN, rewards_for
from helpers.tinylm.tokenizer import tokenizer

MODULE = "12_oraculo"


def tiny_model(seed: int, new_tokens: int = 3) -> TinyLM:
    """Un modelo diminuto al azar en float64 (respuestas de ``new_tokens``)."""
    torch.manual_seed(seed)
    cfg = TinyLMConfig(
        max_len=PROMPT_LEN + new_tokens, d_model=8, n_heads=2, n_layers=1, d_mlp=16
    )
    model = TinyLM(cfg).double()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.5 * torch.randn(p.shape, dtype=p.dtype))
    return model.eval()


def sft64() -> TinyLM:
    """El modelo supervisado del curso, en float64 (sin ruido de redondeo)."""
    return load_pretrained().double()


# Ejercicio 1 · La enumeración


def _reference(model, problem, threshold, n):
    found = oracle.enumerate_completions(model, problem, threshold, max_new_tokens=n)
    return found.completions, found.log_probs, found.covered_mass


def _table(found, *case) -> torch.Tensor:
    """``(respuestas, log p, masa)`` como una tabla que no depende del orden:
    la masa en la primera fila y, después, ``[log p, ids...]`` por respuesta."""
    completions, log_probs, mass = found
    completions = torch.as_tensor(completions).long()
    log_probs = torch.as_tensor(log_probs, dtype=torch.float64).reshape(-1)
    rows = sorted(zip(completions.tolist(), log_probs.tolist(), strict=True))
    width = completions.shape[1] if completions.ndim == 2 else 0
    table = [[float(mass)] + [0.0] * width] + [[lp, *ids] for ids, lp in rows]
    return torch.tensor(table, dtype=torch.float64)


def _changed(transform):
    return lambda *case: transform(*_reference(*case))


def _kept(completions, log_probs, keep):
    return completions[keep], log_probs[keep], float(log_probs[keep].exp().sum())


def _token_pruned(model, problem, threshold, n, *, summed):
    """Poda con la probabilidad de cada carácter, no la del prefijo entero."""
    wide = oracle.enumerate_completions(model, problem, n * threshold, max_new_tokens=n)
    per_token = token_log_probs(model, wide.sequences, wide.prompt_len).double()
    keep = ((per_token >= threshold) | (wide.mask == 0)).all(dim=-1)
    last = per_token.gather(1, wide.lengths[:, None] - 1).squeeze(1)
    return _kept(wide.completions, wide.log_probs if summed else last, keep)


@functools.cache
def enumeration_cases() -> list[tuple]:
    """Modelos diminutos al azar, con respuestas de 3 caracteres: ahí se
    puede comprobar cada error típico enumerando casi todo el árbol."""
    return [
        (tiny_model(0), (12, 34), math.log(1e-2), 3),
        (tiny_model(1), (57, 21), math.log(2e-3), 3),
        (tiny_model(4), (17, 24), math.log(4e-3), 3),
    ]


ENUMERATION_MISTAKES = with_messages(
    """
enum_token_threshold: Sobran respuestas: podaste con la probabilidad del carácter
    nuevo, y el umbral es para la del prefijo entero (la suma de log-probabilidades
    hasta ese carácter).
enum_last_token: La log-probabilidad de una respuesta es la suma de las de sus
    caracteres: a la del carácter nuevo hay que sumarle la del prefijo.
enum_mass_of_log_probs: La masa cubierta es Σ p(y), la suma de las probabilidades:
    exp de cada log-probabilidad antes de sumar.
enum_probabilities: Devuelve log p(y), no p(y).
enum_drops_cut: Faltan las respuestas cortadas: una respuesta que llega a
    max_new_tokens caracteres sin punto final también termina, y cuenta.
""",
    ("enum_token_threshold", variant_of(_token_pruned, summed=True)),
    ("enum_last_token", variant_of(_token_pruned, summed=False)),
    ("enum_mass_of_log_probs", _changed(lambda c, lp, mass: (c, lp, float(lp.sum())))),
    ("enum_probabilities", _changed(lambda c, lp, m: (c, lp.exp(), m))),
    (
        "enum_drops_cut",
        _changed(lambda c, lp, m: _kept(c, lp, (c == tokenizer.end_id).any(1))),
    ),
)


@exercise(MODULE, "enumerate_completions")
def check_enumerate_completions(enumerate_completions, cases=None):
    args = cases or enumeration_cases(), _reference, ENUMERATION_MISTAKES
    check_cases(
        enumerate_completions, "enumerate_completions", *args, atol=1e-9, view=_table
    )


# Ejercicio 2 · J y ∇J exactos


def _objective(model, problems, enumerations, reward_fn=None):
    """J con gradiente: los términos de la suma de ``oracle``."""
    terms = oracle._objective_terms(model, problems, reward_fn, enumerations, 256)
    return sum(term for term, _ in terms)


def _log_p_objective(model, problems, enumerations):
    return sum(
        (
            oracle.sequence_log_probs(model, e)
            * rewards_for(e.completions, [p] * len(e.log_probs))
        ).sum()
        for p, e in zip(problems, enumerations, strict=True)
    ) / len(problems)


@functools.cache
def objective_cases() -> list[tuple]:
    """El modelo del curso en float64 con uno y con dos enunciados."""
    model, problems = sft64(), [(17, 24), (10, 15)]
    sets = [oracle.enumerate_completions(model, p, math.log(1e-2)) for p in problems]
    return [(model, problems[:1], sets[:1]), (model, problems, sets)]


OBJECTIVE_MISTAKES = with_messages(
    """
objective_log_p: J = Σ p(y) R(y) pesa cada recompensa con la probabilidad
    p(y) = exp(log p), no con log p.
objective_mean_over_y: Sobre las respuestas es una suma pesada por p(y), no una
    media: los pesos ya suman (casi) 1.
objective_no_prompt_average: Falta la media sobre los enunciados: J es la media
    de Σ p(y) R(y) de cada uno.
""",
    ("objective_log_p", _log_p_objective),
    (
        "objective_mean_over_y",
        lambda *case: _objective(*case, lambda c, p: rewards_for(c, p) / len(c)),
    ),
    ("objective_no_prompt_average", lambda m, ps, es: len(ps) * _objective(m, ps, es)),
)


@exercise(MODULE, "exact_objective", "el valor")
def check_exact_objective(exact_objective, cases=None):
    args = cases or objective_cases(), _objective, OBJECTIVE_MISTAKES
    check_cases(exact_objective, "exact_objective", *args, atol=1e-9)


@exercise(MODULE, "exact_objective", "el gradiente")
def check_exact_objective_gradient(exact_objective, cases=None):
    args = cases or objective_cases(), _objective, OBJECTIVE_MISTAKES
    check_gradients(
        exact_objective,
        "exact_objective",
        *args,
        prefix="objective",
        wrt={"model": Flow(True, id="objective_no_gradient")},
        without_gradient=Diagnosis(
            id="objective_no_gradient",
            message="J no tiene gradiente: p(y) debe salir de tl.token_log_probs con "
            "el modelo, no de las log-probabilidades guardadas en la enumeración "
            "ni de un tensor separado del grafo (.detach(), torch.no_grad()).",
        ),
        atol=1e-9,
    )


# Ejercicio 3 · La auditoría de un estimador


def _audit(part, change):
    """La referencia con su ``part`` (ángulo, norma, varianza) cambiada."""
    return lambda e, t: tuple(
        change(v, e, t) if i == part else v
        for i, v in enumerate(estimators.audit_estimates(e, t))
    )


def _audit_case(seed: int, runs: int, dims: int, bias: float):
    generator = torch.Generator().manual_seed(seed)
    truth = torch.randn(dims, generator=generator, dtype=torch.float64)
    noise = torch.randn(runs, dims, generator=generator, dtype=torch.float64)
    tilt = torch.randn(dims, generator=generator, dtype=torch.float64)
    return truth + bias * tilt + 0.8 * noise, truth


AUDIT_MISTAKES = with_messages(
    """
audit_mean_of_angles: El sesgo es el ángulo de la estimación media con ∇J, no la
    media de los ángulos de cada estimación (eso mide sobre todo el ruido).
audit_radians: El ángulo va en grados, no en radianes.
audit_mean_of_norms: La norma relativa es la de la estimación media, ‖ḡ‖ / ‖∇J‖,
    no la media de las normas (el ruido siempre alarga cada estimación).
audit_not_centred: La varianza mide la distancia de cada estimación a la media,
    ‖ĝ_r − ḡ‖²: falta restar la media.
audit_per_coordinate: La varianza total es la traza de la covarianza: suma sobre
    las coordenadas, no la media.
audit_standard_deviation: Devuelve la varianza, la media de ‖ĝ_r − ḡ‖², sin la raíz.
""",
    (
        "audit_mean_of_angles",
        _audit(0, lambda a, e, t: sum(oracle.angle_degrees(g, t) for g in e) / len(e)),
    ),
    ("audit_radians", _audit(0, lambda a, e, t: math.radians(a))),
    (
        "audit_mean_of_norms",
        _audit(1, lambda n, e, t: float(e.norm(dim=1).mean() / t.norm())),
    ),
    ("audit_not_centred", _audit(2, lambda v, e, t: v + float(e.mean(0).norm() ** 2))),
    ("audit_per_coordinate", _audit(2, lambda v, e, t: v / e.shape[1])),
    ("audit_standard_deviation", _audit(2, lambda v, e, t: math.sqrt(v))),
)

check_audit_estimates = values_check(
    MODULE,
    "audit_estimates",
    # la otra convención aceptada: la covarianza dividiendo por R − 1
    (estimators.audit_estimates, _audit(2, lambda v, e, t: v * len(e) / (len(e) - 1))),
    AUDIT_MISTAKES,
    [_audit_case(0, 6, 4, 0.5), _audit_case(1, 40, 7, 0.0)],
)


# Ejercicio 4 · Los estimadores de la KL


def kl_cases(seed: int, kinds=("k1", "k2", "k3")):
    """Log-probabilidades ``(3, 5)`` con relleno, con cada estimador y cada nivel."""
    generator = torch.Generator().manual_seed(seed)
    log_probs = -2 * torch.rand(3, 5, generator=generator, dtype=torch.float64)
    ref = -2 * torch.rand(3, 5, generator=generator, dtype=torch.float64)
    mask = (torch.arange(5) < torch.tensor([[5], [3], [1]])).double()
    return [(log_probs, ref, mask, k, pt) for k in kinds for pt in (True, False)]


_kl = estimators.kl_estimate
KL_MISTAKES = with_messages(
    """
kl_ratio_flipped: El cociente va al revés: log ρ = log π_ref − log π (las muestras
    son de π, y KL(π ‖ π_ref) = E_π[−log ρ]).
kl_padding_counted: Cuenta el relleno: los tokens con máscara 0 no entran (usa
    torch.where con la máscara antes de sumar o de aplicar el estimador).
kl_level_swapped: Los dos niveles están cambiados: per_token=True aplica el
    estimador a cada token y suma; per_token=False lo aplica a la suma de los log ρ.
kl_k2_without_half: k2 lleva un medio: ½ (log ρ)².
kl_mean_over_tokens: La KL de una respuesta entera es una suma sobre sus tokens, no
    una media.
""",
    ("kl_ratio_flipped", lambda lp, lr, *rest: _kl(lr, lp, *rest)),
    ("kl_padding_counted", with_args(_kl, mask=lambda a: torch.ones_like(a.mask))),
    ("kl_level_swapped", with_args(_kl, per_token=lambda a: not a.per_token)),
    (
        "kl_k2_without_half",
        lambda lp, lr, m, k, pt: _kl(lp, lr, m, k, pt) * (2 if k == "k2" else 1),
    ),
    ("kl_mean_over_tokens", lambda lp, lr, m, k, pt: _kl(lp, lr, m, k, pt) / m.sum(-1)),
)
check_kl_estimate = values_check(
    MODULE, "kl_estimate", _kl, KL_MISTAKES, kl_cases(0), atol=1e-9
)


# Ejercicio 5 · Lo que confirma y lo que matiza

ORACLE_KEY = "oracle_answer"

check_oracle_answer = statements_check(
    MODULE, ORACLE_KEY, "answer_oracle", "la pregunta del oráculo"
)
