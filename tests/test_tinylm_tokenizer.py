"""Pruebas del tokenizador de caracteres del modelo diminuto."""

import pytest
import torch

from helpers.tinylm.task import all_problems, prompt_text, solution_text
from helpers.tinylm.tokenizer import ALPHABET, END, PAD, CharTokenizer, tokenizer


def test_vocabulary_layout():
    assert tokenizer.vocab_size == len(ALPHABET) + 1
    assert tokenizer.itos[tokenizer.pad_id] == PAD
    assert tokenizer.itos[tokenizer.end_id] == END
    assert set("0123456789×+=") <= set(tokenizer.stoi)


def test_round_trip_alphabet_and_solutions():
    assert tokenizer.decode(tokenizer.encode(ALPHABET)) == ALPHABET
    for a, b in all_problems()[::97]:
        text = prompt_text(a, b) + solution_text(a, b)
        ids = tokenizer.encode(text)
        assert len(ids) == len(text)  # un token por carácter
        assert tokenizer.decode(ids) == text
        assert tokenizer.decode(torch.tensor(ids)) == text


def test_seed_example_ids():
    assert tokenizer.encode("17×24=") == [2, 8, 11, 3, 5, 13]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("17x24=", "«×»"),
        ("17*24=", "asterisco"),
        ("17 × 24", "sin espacios"),
        ("17×24=a", "alfabeto"),
        ("17_24", "alfabeto"),  # el relleno no se puede escribir
    ],
)
def test_unknown_characters_raise_spanish_error(text, fragment):
    with pytest.raises(ValueError, match="no está en el alfabeto") as info:
        tokenizer.encode(text)
    assert fragment in str(info.value)


def test_decode_skips_padding_and_rejects_bad_ids():
    ids = [*tokenizer.encode("12×3."), tokenizer.pad_id, tokenizer.pad_id]
    assert tokenizer.decode(ids) == "12×3."
    with pytest.raises(ValueError, match="no existe"):
        tokenizer.decode([99])


def test_batches_are_right_padded():
    batch = tokenizer.encode_batch(["17×24=", "1."], length=8)
    assert batch.shape == (2, 8)
    assert batch.dtype == torch.long
    assert (batch[1, 2:] == tokenizer.pad_id).all()
    assert tokenizer.decode_batch(batch) == ["17×24=", "1."]
    with pytest.raises(ValueError, match="no cabe"):
        tokenizer.encode_batch(["17×24=408."], length=4)


def test_tokenizers_are_interchangeable():
    assert CharTokenizer().itos == tokenizer.itos
