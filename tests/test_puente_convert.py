"""El modelo y el tokenizador del curso dentro de transformers (helpers.puente).

- Los logits del ``GPT2LMHeadModel`` convertido son los de ``TinyLM`` en los
  256 problemas de evaluación (enunciado + respuesta muestreada). Tolerancia:
  1e-5 en valor absoluto; medido aquí con atención «eager», 0,0 exacto (otra
  CPU u otra biblioteca de álgebra podría sumar en otro orden).
- ``save_pretrained`` → ``from_pretrained`` da los mismos logits, bit a bit.
- El tokenizador codifica los 8100 enunciados con su solución como el del
  curso, y ``generate()`` voraz da las mismas respuestas que
  ``helpers.tinylm.sample`` a temperatura 0.

Nada se descarga: todo sale del checkpoint que trae el repositorio.
"""

from __future__ import annotations

import os

import pytest
import torch

from helpers.puente import (
    CHAT_TEMPLATE,
    greedy_completions,
    load_gpt2,
    load_pretrained_gpt2,
    make_tokenizer,
    to_gpt2,
    to_tinylm,
)
from helpers.tinylm import (
    all_problems,
    encode_prompts,
    heldout_problems,
    load_pretrained,
    prompt_text,
    sample,
    solution_text,
    tokenizer,
)

LOGIT_ATOL = 1e-5


@pytest.fixture(scope="module")
def course_model():
    return load_pretrained()


@pytest.fixture(scope="module")
def heldout_sequences(course_model):
    """Enunciado + respuesta muestreada (T = 1) de cada problema de evaluación."""
    prompts = encode_prompts(heldout_problems())
    samples = sample(course_model, prompts, generator=torch.Generator().manual_seed(0))
    # El último token no predice nada: como en token_log_probs
    return samples.sequences[:, :-1]


def test_importing_puente_forbids_downloads():
    from huggingface_hub import constants

    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert constants.HF_HUB_OFFLINE  # se fijó antes de importar huggingface_hub


def test_gpt2_logits_equal_course_logits(course_model, heldout_sequences):
    hf = load_pretrained_gpt2()
    assert type(hf).__name__ == "GPT2LMHeadModel"
    assert hf.config._attn_implementation == "eager"
    with torch.no_grad():
        ours = course_model(heldout_sequences)
        theirs = hf(heldout_sequences).logits
    assert theirs.shape == ours.shape == (256, 31, 15)
    assert (theirs - ours).abs().max().item() <= LOGIT_ATOL


def test_conversion_is_independent_and_reversible(course_model, heldout_sequences):
    hf = to_gpt2(course_model)
    # Cabeza atada al embedding, como en TinyLM; y copia, no vista
    assert hf.lm_head.weight is hf.transformer.wte.weight
    assert (
        hf.transformer.wte.weight.data_ptr() != course_model.tok_emb.weight.data_ptr()
    )
    assert sum(p.numel() for p in hf.parameters()) == course_model.num_params()
    back = to_tinylm(hf)
    for name, value in course_model.state_dict().items():
        assert torch.equal(back.state_dict()[name], value), name
    # Cambiar la copia no cambia el original
    with torch.no_grad():
        hf.transformer.h[0].attn.c_attn.weight.add_(1.0)
        before = course_model(heldout_sequences[:4])
        after = load_pretrained()(heldout_sequences[:4])
    assert torch.equal(before, after)


def test_save_pretrained_round_trip(tmp_path, heldout_sequences):
    hf = load_pretrained_gpt2()
    hf_tokenizer = make_tokenizer()
    hf.save_pretrained(tmp_path)
    hf_tokenizer.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").exists()
    assert (tmp_path / "tokenizer.json").exists()

    loaded = load_gpt2(tmp_path)
    assert loaded.config._attn_implementation == "eager"
    assert loaded.lm_head.weight is loaded.transformer.wte.weight
    for key in ("n_positions", "layer_norm_epsilon", "activation_function"):
        assert getattr(loaded.config, key) == getattr(hf.config, key)
    with torch.no_grad():
        assert torch.equal(
            loaded(heldout_sequences).logits, hf(heldout_sequences).logits
        )

    from transformers import AutoTokenizer

    reloaded = AutoTokenizer.from_pretrained(tmp_path)
    assert reloaded("17×24=")["input_ids"] == tokenizer.encode("17×24=")
    assert reloaded.chat_template == CHAT_TEMPLATE
    assert (reloaded.pad_token_id, reloaded.eos_token_id) == (0, 14)


def test_tokenizer_matches_the_course_on_every_text():
    hf_tokenizer = make_tokenizer()
    texts = [prompt_text(a, b) + solution_text(a, b) for a, b in all_problems()]
    assert len(texts) == 8100
    encoded = hf_tokenizer(texts)["input_ids"]
    assert encoded == [tokenizer.encode(t) for t in texts]
    assert hf_tokenizer.vocab_size == tokenizer.vocab_size == 15
    # Decodificar pega los caracteres sin espacios
    assert hf_tokenizer.decode(encoded[0]) == texts[0]
    # Sin token desconocido: lo que no está en el alfabeto no pasa en silencio
    with pytest.raises(Exception):  # noqa: B017 (el tipo depende de tokenizers)
        hf_tokenizer("17*24=")


def test_chat_template_is_the_bare_prompt():
    hf_tokenizer = make_tokenizer()
    chat = [{"role": "user", "content": "17×24="}]
    text = hf_tokenizer.apply_chat_template(
        chat, tokenize=False, add_generation_prompt=True
    )
    assert text == "17×24="
    answer = [*chat, {"role": "assistant", "content": solution_text(17, 24)}]
    full = hf_tokenizer.apply_chat_template(answer, tokenize=False)
    assert full == "17×24=" + solution_text(17, 24)
    with pytest.raises(Exception, match="user y assistant"):
        hf_tokenizer.apply_chat_template(
            [{"role": "system", "content": "0"}, *chat], tokenize=False
        )


def test_greedy_generate_gives_the_course_answers(course_model):
    problems = heldout_problems()
    hf_answers = greedy_completions(load_pretrained_gpt2(), problems)
    course = sample(course_model, encode_prompts(problems), temperature=0)
    course_answers = tokenizer.decode_batch(course.completions)
    assert hf_answers == course_answers
    assert all(a.endswith(".") for a in hf_answers)  # paró en el token de fin
