"""Pruebas de la tarea: problemas, respuestas desarrolladas y verificador."""

import pytest
import torch

from helpers.tinylm.task import (
    MAX_NEW_TOKENS,
    PROMPT_LEN,
    TARGET,
    all_problems,
    encode_prompts,
    extract_answer,
    heldout_problems,
    prompt_text,
    rewards_for,
    rl_problems,
    solution_text,
    train_problems,
    verify,
)
from helpers.tinylm.tokenizer import tokenizer


def test_seed_walkthrough_text():
    assert prompt_text(17, 24) == "17×24="
    assert solution_text(17, 24) == "17×20+17×4=340+68=408."


def test_every_solution_is_correct_and_fits():
    for a, b in all_problems():
        solution = solution_text(a, b)
        assert len(prompt_text(a, b)) == PROMPT_LEN
        assert len(solution) <= MAX_NEW_TOKENS
        assert verify(solution, a, b) == 1
        # Cada paso intermedio es aritmética correcta
        left, middle, _ = solution[:-1].split("=")
        x, y = (int(n) for n in middle.split("+"))
        assert x + y == a * b
        assert left == f"{a}×{10 * (b // 10)}+{a}×{b % 10}"


@pytest.mark.parametrize(
    ("text", "reward"),
    [
        ("17×20+17×4=340+68=408.", 1),  # la respuesta correcta
        ("17×24=17×20+17×4=340+68=408.", 1),  # con el enunciado delante
        ("=408.", 1),  # solo cuenta el número final
        ("17×20+17×4=340+58=398.", 0),  # el despiste del «58»
        ("17×20+17×4=340+68=0408.", 1),  # el mismo número, con un cero delante
        ("17×20+17×4=340+68=408", 0),  # cortada: sin punto final
        ("17×20+17×4=340+68=408.9", 1),  # lo que sigue al punto no cuenta
        ("17×20+17×4=340+68=.", 0),  # sin número final
        ("17×20+17×4=340+68=4+08.", 0),  # lo final no es un número
        ("408.", 0),  # sin ningún «=»
        (".", 0),
        ("", 0),
        ("=４０８.", 0),  # dígitos que no son ASCII
        (None, 0),
        (408, 0),
    ],
)
def test_verifier_never_raises(text, reward):
    assert verify(text, 17, 24) == reward


def test_extract_answer():
    assert extract_answer("17×20+17×4=340+68=408.") == 408
    assert extract_answer("17×20+17×4=340+68=408") is None
    assert extract_answer("17×20+.") is None


def test_rewards_for_token_batches():
    texts = ["17×20+17×4=340+68=408.", "17×20+17×4=340+58=398.", "17×20+1"]
    completions = tokenizer.encode_batch(texts, length=MAX_NEW_TOKENS)
    rewards = rewards_for(completions, [TARGET] * 3)
    assert rewards.dtype == torch.float32
    assert rewards.tolist() == [1.0, 0.0, 0.0]


def test_prompts_encode_to_fixed_length():
    prompts = encode_prompts([TARGET, (99, 10)])
    assert prompts.shape == (2, PROMPT_LEN)
    assert tokenizer.decode(prompts[0]) == "17×24="


def test_splits_keep_target_and_heldout_out_of_training():
    heldout, train, rl = heldout_problems(), train_problems(), rl_problems()
    assert len(heldout) == len(set(heldout)) == 256
    pairs = lambda problems: {frozenset(p) for p in problems}  # noqa: E731
    assert frozenset(TARGET) not in pairs(train)
    assert not pairs(heldout) & pairs(train)
    assert not pairs(heldout) & pairs(rl)
    assert TARGET in rl and TARGET not in heldout
    assert set(rl) == set(train) | {TARGET, TARGET[::-1]}
    # El reparto es fijo: siempre los mismos problemas
    assert heldout_problems() == heldout
    assert len(train) + len(heldout) + 2 <= len(all_problems())
