"""Comprobaciones del módulo 12 · El oráculo: una por celda calificada, en el
orden del cuaderno. Las referencias son las de ``helpers.tinylm.oracle`` y
``helpers.tinylm.estimators``; cada error típico es una transformación de
ellas."""

from __future__ import annotations

import functools
import math

import torch

from helpers.checks import (
    Diagnosis,
    Flow,
    Mistake,
    check_cases,
    check_gradients,
    exercise,
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


def _reference(model, problem, min_log_prob, max_new_tokens):
    found = oracle.enumerate_completions(
        model, problem, min_log_prob, max_new_tokens=max_new_tokens
    )
    return found.completions, found.log_probs, found.covered_mass


def _table(found) -> torch.Tensor:
    """``(respuestas, log p, masa)`` como una tabla que no depende del orden:
    la masa en la primera fila y, después, ``[log p, ids...]`` por respuesta."""
    completions, log_probs, mass = found
    completions = torch.as_tensor(completions).long()
    log_probs = torch.as_tensor(log_probs, dtype=torch.float64).reshape(-1)
    rows = sorted(zip(completions.tolist(), log_probs.tolist(), strict=True))
    width = completions.shape[1] if completions.ndim == 2 else 0
    table = [[float(mass)] + [0.0] * width] + [[lp, *ids] for ids, lp in rows]
    return torch.tensor(table, dtype=torch.float64)


def _tabled(function):
    return lambda *case: _table(function(*case))


def _changed(transform):
    """Una variante: la referencia, con su resultado transformado."""
    return _tabled(lambda *case: transform(*_reference(*case)))


def _token_pruned(model, problem, min_log_prob, max_new_tokens, *, summed):
    """Poda con la probabilidad de cada carácter, no la del prefijo: se
    queda lo que tiene todos sus caracteres por encima del umbral."""
    wide = oracle.enumerate_completions(
        model, problem, max_new_tokens * min_log_prob, max_new_tokens=max_new_tokens
    )
    per_token = token_log_probs(model, wide.sequences, wide.prompt_len).double()
    keep = ((per_token >= min_log_prob) | (wide.mask == 0)).all(dim=-1)
    last = per_token.gather(1, wide.lengths[:, None] - 1).squeeze(1)
    log_probs = (wide.log_probs if summed else last)[keep]
    return wide.completions[keep], log_probs, float(log_probs.exp().sum())


@functools.cache
def enumeration_cases() -> list[tuple]:
    """Modelos diminutos al azar, con respuestas de 3 caracteres: ahí se
    puede comprobar cada error típico enumerando casi todo el árbol."""
    return [
        (tiny_model(0), (12, 34), math.log(1e-2), 3),
        (tiny_model(1), (57, 21), math.log(2e-3), 3),
        (tiny_model(4), (17, 24), math.log(4e-3), 3),
    ]


ENUMERATION_MISTAKES = [
    Mistake(
        "enum_token_threshold",
        _tabled(lambda *case: _token_pruned(*case, summed=True)),
        "Sobran respuestas: podaste con la probabilidad del carácter nuevo, y el "
        "umbral es para la del prefijo entero (la suma de log-probabilidades "
        "hasta ese carácter).",
    ),
    Mistake(
        "enum_last_token",
        _tabled(lambda *case: _token_pruned(*case, summed=False)),
        "La log-probabilidad de una respuesta es la suma de las de sus "
        "caracteres: a la del carácter nuevo hay que sumarle la del prefijo.",
    ),
    Mistake(
        "enum_mass_of_log_probs",
        _changed(lambda c, lp, mass: (c, lp, float(lp.sum()))),
        "La masa cubierta es Σ p(y), la suma de las probabilidades: exp de cada "
        "log-probabilidad antes de sumar.",
    ),
    Mistake(
        "enum_probabilities",
        _changed(lambda c, lp, mass: (c, lp.exp(), mass)),
        "Devuelve log p(y), no p(y).",
    ),
    Mistake(
        "enum_drops_cut",
        _changed(lambda c, lp, mass: _kept(c, lp, (c == tokenizer.end_id).any(1))),
        "Faltan las respuestas cortadas: una respuesta que llega a max_new_tokens "
        "caracteres sin punto final también termina, y cuenta.",
    ),
]


def _kept(completions, log_probs, keep):
    return completions[keep], log_probs[keep], float(log_probs[keep].exp().sum())


@exercise(MODULE, "enumerate_completions")
def check_enumerate_completions(enumerate_completions, cases=None):
    check_cases(
        _tabled(enumerate_completions),
        "enumerate_completions",
        cases or enumeration_cases(),
        _tabled(_reference),
        ENUMERATION_MISTAKES,
        atol=1e-9,
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
    model = sft64()
    sets = [
        oracle.enumerate_completions(model, p, math.log(1e-2))
        for p in ((17, 24), (10, 15))
    ]
    return [(model, [(17, 24)], sets[:1]), (model, [(17, 24), (10, 15)], sets)]


OBJECTIVE_MISTAKES = [
    Mistake(
        "objective_log_p",
        _log_p_objective,
        "J = Σ p(y) R(y) pesa cada recompensa con la probabilidad p(y) = exp(log p), "
        "no con log p.",
    ),
    Mistake(
        "objective_mean_over_y",
        lambda m, probs, sets: _objective(
            m, probs, sets, lambda c, p: rewards_for(c, p) / len(c)
        ),
        "Sobre las respuestas es una suma pesada por p(y), no una media: los "
        "pesos ya suman (casi) 1.",
    ),
    Mistake(
        "objective_no_prompt_average",
        lambda m, probs, sets: len(probs) * _objective(m, probs, sets),
        "Falta la media sobre los enunciados: J es la media de Σ p(y) R(y) de "
        "cada uno.",
    ),
]


@exercise(MODULE, "exact_objective", "el valor")
def check_exact_objective(exact_objective, cases=None):
    check_cases(
        exact_objective,
        "exact_objective",
        cases or objective_cases(),
        _objective,
        OBJECTIVE_MISTAKES,
        atol=1e-9,
    )


@exercise(MODULE, "exact_objective", "el gradiente")
def check_exact_objective_gradient(exact_objective, cases=None):
    check_gradients(
        exact_objective,
        "exact_objective",
        cases or objective_cases(),
        _objective,
        OBJECTIVE_MISTAKES,
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


def _audit_sample(estimates, true_gradient):
    """La otra convención aceptada: la covarianza dividiendo por R − 1."""
    angle, norm, variance = estimators.audit_estimates(estimates, true_gradient)
    return angle, norm, variance * len(estimates) / (len(estimates) - 1)


def _audit_changed(transform):
    return lambda e, t: transform(e, t, *estimators.audit_estimates(e, t))


def _audit_case(seed: int, runs: int, dims: int, bias: float):
    generator = torch.Generator().manual_seed(seed)
    truth = torch.randn(dims, generator=generator, dtype=torch.float64)
    noise = torch.randn(runs, dims, generator=generator, dtype=torch.float64)
    tilt = torch.randn(dims, generator=generator, dtype=torch.float64)
    return truth + bias * tilt + 0.8 * noise, truth


AUDIT_CASES = [_audit_case(0, 6, 4, 0.5), _audit_case(1, 40, 7, 0.0)]

AUDIT_MISTAKES = [
    Mistake(
        "audit_mean_of_angles",
        _audit_changed(
            lambda e, t, a, n, v: (
                sum(oracle.angle_degrees(g, t) for g in e) / len(e),
                n,
                v,
            )
        ),
        "El sesgo es el ángulo de la estimación media con ∇J, no la media de "
        "los ángulos de cada estimación (eso mide sobre todo el ruido).",
    ),
    Mistake(
        "audit_radians",
        _audit_changed(lambda e, t, a, n, v: (math.radians(a), n, v)),
        "El ángulo va en grados, no en radianes.",
    ),
    Mistake(
        "audit_mean_of_norms",
        _audit_changed(
            lambda e, t, a, n, v: (
                a,
                float(e.double().norm(dim=1).mean() / t.double().norm()),
                v,
            )
        ),
        "La norma relativa es la de la estimación media, ‖ḡ‖ / ‖∇J‖, no la media "
        "de las normas (el ruido siempre alarga cada estimación).",
    ),
    Mistake(
        "audit_not_centred",
        _audit_changed(
            lambda e, t, a, n, v: (a, n, v + float(e.double().mean(0).norm() ** 2))
        ),
        "La varianza mide la distancia de cada estimación a la media, ‖ĝ_r − ḡ‖²: "
        "falta restar la media.",
    ),
    Mistake(
        "audit_per_coordinate",
        _audit_changed(lambda e, t, a, n, v: (a, n, v / e.shape[1])),
        "La varianza total es la traza de la covarianza: suma sobre las "
        "coordenadas, no la media.",
    ),
    Mistake(
        "audit_standard_deviation",
        _audit_changed(lambda e, t, a, n, v: (a, n, math.sqrt(v))),
        "Devuelve la varianza (la media de ‖ĝ_r − ḡ‖²), sin la raíz.",
    ),
]


@exercise(MODULE, "audit_estimates")
def check_audit_estimates(audit_estimates, cases=AUDIT_CASES):
    check_cases(
        audit_estimates,
        "audit_estimates",
        cases,
        (estimators.audit_estimates, _audit_sample),
        AUDIT_MISTAKES,
        atol=1e-6,
    )


# Ejercicio 4 · Los estimadores de la KL


def kl_cases(seed: int, kinds=("k1", "k2", "k3")):
    """Log-probabilidades ``(3, 5)`` con relleno (números cualesquiera), con
    cada estimador y cada nivel."""
    generator = torch.Generator().manual_seed(seed)
    log_probs = -2 * torch.rand(3, 5, generator=generator, dtype=torch.float64)
    ref_log_probs = -2 * torch.rand(3, 5, generator=generator, dtype=torch.float64)
    mask = (torch.arange(5) < torch.tensor([[5], [3], [1]])).double()
    return [
        (log_probs, ref_log_probs, mask, kind, per_token)
        for kind in kinds
        for per_token in (True, False)
    ]


KL_CASES = kl_cases(0)

KL_MISTAKES = [
    Mistake(
        "kl_ratio_flipped",
        lambda lp, lr, m, k, pt: estimators.kl_estimate(lr, lp, m, k, pt),
        "El cociente va al revés: log ρ = log π_ref − log π (las muestras son de "
        "π, y KL(π ‖ π_ref) = E_π[−log ρ]).",
    ),
    Mistake(
        "kl_padding_counted",
        lambda lp, lr, m, k, pt: estimators.kl_estimate(
            lp, lr, torch.ones_like(m), k, pt
        ),
        "Cuenta el relleno: los tokens con máscara 0 no entran (usa torch.where "
        "con la máscara antes de sumar o de aplicar el estimador).",
    ),
    Mistake(
        "kl_level_swapped",
        lambda lp, lr, m, k, pt: estimators.kl_estimate(lp, lr, m, k, not pt),
        "Los dos niveles están cambiados: per_token=True aplica el estimador a "
        "cada token y suma; per_token=False lo aplica a la suma de los log ρ.",
    ),
    Mistake(
        "kl_k2_without_half",
        lambda lp, lr, m, k, pt: (
            estimators.kl_estimate(lp, lr, m, k, pt) * (2 if k == "k2" else 1)
        ),
        "k2 lleva un medio: ½ (log ρ)².",
    ),
    Mistake(
        "kl_mean_over_tokens",
        lambda lp, lr, m, k, pt: estimators.kl_estimate(lp, lr, m, k, pt) / m.sum(-1),
        "La KL de una respuesta entera es una suma sobre sus tokens, no una media.",
    ),
]


@exercise(MODULE, "kl_estimate")
def check_kl_estimate(kl_estimate, cases=KL_CASES):
    check_cases(
        kl_estimate,
        "kl_estimate",
        cases,
        estimators.kl_estimate,
        KL_MISTAKES,
        atol=1e-9,
    )


# Ejercicio 5 · Lo que confirma y lo que matiza

ORACLE_KEY = "oracle_answer"

check_oracle_answer = statements_check(
    MODULE, ORACLE_KEY, "answer_oracle", "la pregunta del oráculo"
)
