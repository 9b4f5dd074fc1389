"""Pruebas de la auditoría de estimadores (``helpers.tinylm.audit``).

Se comparan con cuentas independientes: ``backward`` respuesta a respuesta,
las identidades entre estimadores (RLOO = G/(G−1) · media del grupo), un caso
de auditoría hecho a mano y la KL exacta del oráculo frente a la media de
muchas muestras.
"""

import math

import pytest
import torch

from helpers.tinylm.audit import (
    ESTIMATORS,
    bias_ratio,
    estimator_weights,
    gradient_audit,
    gradient_estimates,
    kl_estimates,
    sequence_scores,
    tempered_copy,
)
from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.oracle import exact_gradient, exact_kl, flat_gradient
from helpers.tinylm.sampling import sample, token_log_probs
from helpers.tinylm.task import TARGET, encode_prompts

SIGMAS = 4


@pytest.fixture(scope="module")
def model():
    return load_pretrained()


def test_scores_match_backward(model):
    samples = sample(
        model, encode_prompts([TARGET] * 3), generator=torch.Generator().manual_seed(0)
    )
    scores = sequence_scores(model, samples.sequences, samples.prompt_len)
    for row in range(3):
        model.zero_grad()
        token_log_probs(
            model, samples.sequences[row : row + 1], samples.prompt_len
        ).sum().backward()
        expected = flat_gradient(model)
        assert torch.allclose(scores[row].double(), expected, atol=1e-4, rtol=1e-4)
    model.zero_grad()


def test_estimator_identities():
    generator = torch.Generator().manual_seed(1)
    rewards = torch.randint(0, 2, (5, 4), generator=generator).double()
    lengths = torch.randint(3, 9, (5, 4), generator=generator).double()
    w = {e: estimator_weights(rewards, lengths, e) for e in ESTIMATORS}
    assert torch.allclose(w["rloo"], w["group_mean"] * 4 / 3)
    assert torch.allclose(w["reinforce"], rewards / 20)
    assert torch.allclose(w["length_grpo"], w["group_mean"] / lengths)
    assert torch.allclose(w["length_token"] * lengths.sum(), w["group_mean"] * 20)
    pair = torch.tensor([[0.0, 1.0]])  # G = 2: ÷σ da lo mismo que RLOO
    ones = torch.ones(1, 2)
    assert torch.allclose(
        estimator_weights(pair, ones, "group_std"),
        estimator_weights(pair, ones, "rloo"),
        atol=1e-5,
    )
    with pytest.raises(ValueError):
        estimator_weights(rewards, lengths, "otro")


def test_gradient_audit_by_hand():
    truth = torch.tensor([1.0, 0.0])
    estimates = torch.tensor([[2.0, 2.0], [0.0, 2.0]])  # media (1, 2)
    angle, ratio, spread = gradient_audit(estimates, truth)
    assert angle == pytest.approx(math.degrees(math.atan2(2, 1)))
    assert ratio == pytest.approx(math.sqrt(5))
    assert spread == pytest.approx(1.0)  # ‖±(1, 0)‖² de media
    assert gradient_audit(estimates, truth, ddof=1)[2] == pytest.approx(2.0)


def test_unbiased_estimators_have_small_bias_ratio(model):
    problems = [TARGET, (23, 45)]
    truth = flat_gradient(
        exact_gradient(model, problems, None, math.log(1e-4)).gradients
    )
    estimates = gradient_estimates(
        model, problems, 4, 96, torch.Generator().manual_seed(3), ("rloo", "group_mean")
    )
    assert bias_ratio(estimates["rloo"], truth) < 4
    assert bias_ratio(estimates["group_mean"], truth, direction_only=True) < 4
    # la media del grupo sin corregir es exactamente (G − 1)/G de RLOO
    assert torch.allclose(estimates["group_mean"], estimates["rloo"] * 3 / 4)


def test_kl_estimators_by_hand():
    log_p = torch.tensor([[-1.0, -2.0, float("inf")]])
    log_ref = torch.tensor([[-1.5, -1.0, float("nan")]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    log_rho = torch.tensor([-0.5, 1.0])
    k1 = kl_estimates(log_p, log_ref, mask, "k1")
    k2 = kl_estimates(log_p, log_ref, mask, "k2")
    k3 = kl_estimates(log_p, log_ref, mask, "k3")
    assert k1.item() == pytest.approx(float(-log_rho.sum()))
    assert k2.item() == pytest.approx(float((log_rho**2 / 2).sum()))
    assert k3.item() == pytest.approx(float((log_rho.exp() - 1 - log_rho).sum()))
    total = log_rho.sum()
    seq = kl_estimates(log_p, log_ref, mask, "k3", per_token=False)
    assert seq.item() == pytest.approx(float(total.exp() - 1 - total))
    assert kl_estimates(log_p, log_ref, mask, "k1", per_token=False).item() == (
        pytest.approx(k1.item())
    )


def test_tempered_copy_scales_logits(model):
    ids = encode_prompts([TARGET])
    hot = tempered_copy(model, 0.5)
    with torch.no_grad():
        assert torch.allclose(hot(ids), 0.5 * model(ids), atol=1e-5)


def test_unbiased_kl_estimators_match_the_oracle(model):
    policy = tempered_copy(model, 1.5)
    exact = exact_kl(policy, model, [TARGET], math.log(1e-5))
    samples = sample(
        policy,
        encode_prompts([TARGET] * 4000),
        generator=torch.Generator().manual_seed(5),
    )
    with torch.no_grad():
        log_p = token_log_probs(policy, samples.sequences, samples.prompt_len)
        log_ref = token_log_probs(model, samples.sequences, samples.prompt_len)
    for estimator in ("k1", "k3"):
        values = kl_estimates(log_p, log_ref, samples.mask, estimator).double()
        error = values.std() / math.sqrt(len(values))
        assert abs(values.mean() - exact.value) < SIGMAS * error + exact.uncovered_mass
