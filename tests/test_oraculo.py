"""Pruebas de las referencias del módulo 12 (``helpers.tinylm.estimators``) y
de que las soluciones del cuaderno dicen lo mismo que ellas."""

import math

import torch

import helpers.tinylm as tl
from helpers.checks.oraculo import tiny_model
from helpers.tinylm import estimators as est
from helpers.tinylm import oracle
from helpers.tinylm.grpo import k3_kl
from helpers.tinylm.tokenizer import tokenizer
from tests.notebooks import solution_functions


def _log_probs(seed: int, batch: int = 4, length: int = 6):
    generator = torch.Generator().manual_seed(seed)
    lp = -3 * torch.rand(batch, length, generator=generator, dtype=torch.float64)
    ref = -3 * torch.rand(batch, length, generator=generator, dtype=torch.float64)
    lengths = torch.randint(1, length + 1, (batch, 1), generator=generator)
    return lp, ref, (torch.arange(length) < lengths).double()


def test_k3_per_token_is_the_grpo_penalty_summed():
    lp, ref, mask = _log_probs(0)
    torch.testing.assert_close(
        est.kl_estimate(lp, ref, mask, "k3", True), k3_kl(lp, ref, mask).sum(-1)
    )


def test_k1_is_the_same_per_token_and_summed():
    lp, ref, mask = _log_probs(1)
    torch.testing.assert_close(
        est.kl_estimate(lp, ref, mask, "k1", True),
        est.kl_estimate(lp, ref, mask, "k1", False),
    )


def test_audit_of_exact_copies_has_no_bias_and_no_variance():
    truth = torch.tensor([3.0, 4.0], dtype=torch.float64)
    angle, norm, variance = est.audit_estimates(truth.expand(5, 2), truth)
    assert angle < 1e-6 and abs(norm - 1) < 1e-12 and variance == 0


def test_notebook_solutions_agree_with_the_references():
    namespace = solution_functions(
        "12_oraculo",
        {
            "torch": torch,
            "math": math,
            "tl": tl,
            "oracle": oracle,
            "tokenizer": tokenizer,
        },
    )
    for seed in range(3):
        lp, ref, mask = _log_probs(seed)
        for kind in ("k1", "k2", "k3"):
            for per_token in (True, False):
                torch.testing.assert_close(
                    namespace["kl_estimate"](lp, ref, mask, kind, per_token),
                    est.kl_estimate(lp, ref, mask, kind, per_token),
                )
        estimates = torch.randn(7, 3, dtype=torch.float64)
        truth = torch.randn(3, dtype=torch.float64)
        for mine, theirs in zip(
            namespace["audit_estimates"](estimates, truth),
            est.audit_estimates(estimates, truth),
            strict=True,
        ):
            assert abs(mine - theirs) < 1e-9
    model = tiny_model(7)
    completions, log_probs, mass = namespace["enumerate_completions"](
        model, (12, 34), math.log(3e-3), 3
    )
    found = oracle.enumerate_completions(
        model, (12, 34), math.log(3e-3), max_new_tokens=3
    )
    assert len(log_probs) == len(found.log_probs)
    assert abs(mass - found.covered_mass) < 1e-12
