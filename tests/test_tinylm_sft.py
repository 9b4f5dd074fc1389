"""Pruebas del ajuste supervisado: datos con despistes y reproducibilidad."""

import random

import torch

from helpers.tinylm.model import TinyLMConfig
from helpers.tinylm.sft import (
    SFTConfig,
    build_dataset,
    notes_solution_text,
    slip,
    train_sft,
)
from helpers.tinylm.task import (
    TARGET,
    all_problems,
    extract_answer,
    heldout_problems,
    prompt_text,
    solution_text,
    verify,
)
from helpers.tinylm.tokenizer import tokenizer


def test_a_slip_changes_one_digit_by_one():
    rng = random.Random(0)
    for n in [0, 7, 10, 68, 340, 408, 8910, 9801]:
        for _ in range(50):
            slipped = slip(n, rng)
            a, b = str(n), str(slipped)
            assert len(a) == len(b)  # nunca un cero delante
            changed = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
            assert len(changed) == 1
            assert abs(int(changed[0][0]) - int(changed[0][1])) == 1


def test_notes_without_slips_are_the_clean_solution():
    rng = random.Random(0)
    for a, b in all_problems()[::50]:
        assert notes_solution_text(a, b, rng, slip_prob=0.0) == solution_text(a, b)


def test_a_slip_always_spoils_the_final_answer_but_not_the_format():
    rng = random.Random(0)
    for a, b in all_problems()[::50]:
        text = notes_solution_text(a, b, rng, slip_prob=1.0)
        assert extract_answer(text) is not None
        assert verify(text, a, b) == 0
        assert text.split("=")[0] == solution_text(a, b).split("=")[0]


def test_dataset_leaves_out_the_target_and_the_heldout_set():
    cfg = SFTConfig(slip_prob=0.4)
    data = build_dataset(cfg)
    prompts = {text[:6] for text in tokenizer.decode_batch(data[:, :6])}
    forbidden = [TARGET, TARGET[::-1], *heldout_problems()]
    assert not prompts & {prompt_text(a, b) for a, b in forbidden}
    # Más o menos un 40 % de los ejemplos lleva un despiste
    texts = tokenizer.decode_batch(data)
    wrong = sum(verify(t, int(t[:2]), int(t[3:5])) == 0 for t in texts) / len(texts)
    assert 0.37 < wrong < 0.43


def test_training_is_reproducible():
    # Un hilo (conftest): el mismo orden de las sumas, los mismos pesos.
    tiny = TinyLMConfig(d_model=16, n_heads=2, n_layers=1, d_mlp=32)
    cfg = SFTConfig(steps=3, batch_size=8, warmup=2, model=tiny)
    first = train_sft(cfg, verbose=False).state_dict()
    second = train_sft(cfg, verbose=False).state_dict()
    assert all(torch.equal(first[k], second[k]) for k in first)
