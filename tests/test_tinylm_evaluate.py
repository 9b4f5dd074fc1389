"""Pruebas de cómo medimos al modelo: T = 1, voraz y pass@k."""

from itertools import combinations

import pytest
import torch

from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.evaluate import (
    correct_counts,
    estimate_pass_at_k,
    heldout_accuracy,
    mean_reward,
    p_correct,
    pass_at_k,
)
from helpers.tinylm.grpo import GRPOConfig, train_grpo
from helpers.tinylm.sampling import sample
from helpers.tinylm.task import TARGET, encode_prompts, heldout_problems, verify
from helpers.tinylm.tokenizer import tokenizer


@pytest.fixture(scope="module")
def model():
    return load_pretrained()


# --- el estimador de pass@k ---------------------------------------------------


def _brute_force_pass_at_k(n: int, c: int, k: int) -> float:
    """Fracción de las elecciones de k respuestas entre n con algún acierto."""
    answers = [1] * c + [0] * (n - c)
    choices = list(combinations(range(n), k))
    return sum(any(answers[i] for i in chosen) for chosen in choices) / len(choices)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 10])
def test_pass_at_k_estimator_matches_brute_force(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert estimate_pass_at_k(n, c, k) == pytest.approx(
                _brute_force_pass_at_k(n, c, k), abs=1e-12
            ), (n, c, k)


def test_pass_at_k_estimator_special_cases():
    assert estimate_pass_at_k(8, 3, 1) == pytest.approx(3 / 8)  # pass@1 = c / n
    assert estimate_pass_at_k(8, 0, 8) == 0.0
    assert estimate_pass_at_k(8, 1, 8) == 1.0  # con n = k: ¿algún acierto?
    assert estimate_pass_at_k(200, 1, 100) == pytest.approx(0.5)  # sin desbordar
    for n, c, k in [(4, 1, 5), (4, 1, 0), (4, 5, 1), (4, -1, 1)]:
        with pytest.raises(ValueError):
            estimate_pass_at_k(n, c, k)


def test_pass_at_k_is_unbiased_by_simulation():
    # Cada respuesta acierta con probabilidad q: pass@k verdadero = 1 − (1 − q)^k
    generator = torch.Generator().manual_seed(0)
    q, n, k = 0.3, 10, 4
    hits = (torch.rand(20_000, n, generator=generator) < q).sum(dim=1).tolist()
    estimate = sum(estimate_pass_at_k(n, c, k) for c in hits) / len(hits)
    assert estimate == pytest.approx(1 - (1 - q) ** k, abs=0.01)


# --- las medidas del modelo -----------------------------------------------------


def test_pass_at_one_is_the_temperature_one_accuracy(model):
    problems = heldout_problems()[:32]
    results = pass_at_k(model, (1, 2, 8), problems=problems)
    assert results[1] == pytest.approx(mean_reward(model, problems), abs=1e-12)
    assert results[1] <= results[2] <= results[8] <= 1
    counts = correct_counts(model, problems, 8)
    assert results[8] == pytest.approx((counts > 0).float().mean().item())
    with pytest.raises(ValueError, match="temperature"):
        pass_at_k(model, (1,), problems=problems, temperature=0)


def test_correct_counts_agree_with_the_verifier(model):
    problems = [TARGET, (12, 11)]
    counts = correct_counts(model, problems, 4, seed=3)
    generator = torch.Generator().manual_seed(3)
    repeated = [p for p in problems for _ in range(4)]
    samples = sample(model, encode_prompts(repeated), generator=generator)
    texts = tokenizer.decode_batch(samples.completions)
    by_hand = [verify(t, a, b) for t, (a, b) in zip(texts, repeated, strict=True)]
    assert counts.tolist() == [sum(by_hand[:4]), sum(by_hand[4:])]


def test_greedy_measures_one_answer_per_problem(model):
    problems = heldout_problems()[:16]
    samples = sample(model, encode_prompts(problems), temperature=0)
    texts = tokenizer.decode_batch(samples.completions)
    by_hand = [verify(t, a, b) for t, (a, b) in zip(texts, problems, strict=True)]
    greedy = mean_reward(model, problems, samples_per_problem=8, temperature=0)
    assert greedy == sum(by_hand) / len(problems)
    assert p_correct(model, temperature=0) in (0.0, 1.0)
    assert p_correct(model, temperature=None) == p_correct(model, temperature=0)


def test_greedy_beats_temperature_one_on_the_shipped_checkpoint(model):
    # Los despistes que el SFT imitó salen al muestrear, no al ir a lo seguro
    assert heldout_accuracy(model, temperature=0) > heldout_accuracy(model) + 0.1
    assert p_correct(model, temperature=0) == 1.0  # 17 × 24 voraz ya acierta


def test_training_history_reports_greedy_and_pass_at_k(model):
    policy = load_pretrained()
    cfg = GRPOConfig(steps=2, prompts_per_step=4, eval_samples=2)
    history = train_grpo(policy, cfg, progress=False)
    for key in (
        "heldout_accuracy",
        "heldout_pass_at_k",
        "heldout_greedy_accuracy",
        "p_correct",
        "p_correct_greedy",
    ):
        assert len(history[key]) == len(history["eval_step"]) == 2, key
    # En el paso 0, las mismas cifras que las funciones de evaluate.py
    assert history["heldout_accuracy"][0] == heldout_accuracy(model, 2)
    assert history["heldout_pass_at_k"][0] == pytest.approx(
        pass_at_k(model, (2,))[2], abs=1e-6
    )
    assert history["heldout_greedy_accuracy"][0] == heldout_accuracy(
        model, temperature=0
    )
    assert history["p_correct"][0] == p_correct(model)
    assert history["p_correct_greedy"][0] == p_correct(model, temperature=0)
