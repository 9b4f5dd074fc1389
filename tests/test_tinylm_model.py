"""Pruebas del transformer diminuto y de su muestreador."""

import pytest
import torch

from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.model import KVCache, TinyLM, TinyLMConfig
from helpers.tinylm.sampling import (
    copy_model,
    next_token_probs,
    path_probs,
    sample,
    token_log_probs,
)
from helpers.tinylm.task import MAX_NEW_TOKENS, PROMPT_LEN, TARGET, encode_prompts
from helpers.tinylm.tokenizer import tokenizer


@pytest.fixture(scope="module")
def model():
    """Un modelo pequeño sin entrenar (pesos aleatorios con semilla)."""
    torch.manual_seed(0)
    tiny = TinyLM(TinyLMConfig(d_model=32, n_heads=4, n_layers=2, d_mlp=64))
    # Pesos más grandes que los iniciales, para que la distribución no sea plana
    with torch.no_grad():
        for p in tiny.parameters():
            p.mul_(4.0)
    return tiny.eval()


@pytest.fixture(scope="module")
def prompts():
    return encode_prompts([TARGET, (99, 99), (10, 10)]).repeat_interleave(4, dim=0)


def test_default_size_is_in_the_stated_range():
    n_params = TinyLM().num_params()
    assert 100_000 <= n_params <= 1_000_000


def test_forward_shape_and_tied_embeddings(model):
    logits = model(torch.zeros(2, 7, dtype=torch.long))
    assert logits.shape == (2, 7, tokenizer.vocab_size)
    assert not hasattr(model, "head")  # la salida usa la matriz del embedding


def test_attention_is_causal(model):
    tokens = torch.tensor([tokenizer.encode("17×24=17×20+")])
    changed = tokens.clone()
    changed[0, -1] = tokenizer.stoi["9"]
    with torch.no_grad():
        assert torch.allclose(model(tokens)[:, :-1], model(changed)[:, :-1])


def test_kv_cache_matches_full_forward(model):
    tokens = torch.tensor([tokenizer.encode("17×24=17×20+17×4=340+68=408.")])
    with torch.no_grad():
        full = model(tokens)
        cache = KVCache(model.cfg.n_layers)
        pieces = [model(tokens[:, :6], cache)]  # el enunciado de una vez
        for t in range(6, tokens.shape[1]):  # y después token a token
            pieces.append(model(tokens[:, t : t + 1], cache))
    assert len(cache) == tokens.shape[1]
    assert torch.allclose(torch.cat(pieces, dim=1), full, rtol=1e-4, atol=1e-4)


def test_too_long_sequences_raise(model):
    with pytest.raises(ValueError, match="solo admite"):
        model(torch.zeros(1, model.cfg.max_len + 1, dtype=torch.long))


def test_sample_shapes_and_masks(model, prompts):
    generator = torch.Generator().manual_seed(0)
    samples = sample(model, prompts, generator=generator)
    B = prompts.shape[0]
    assert samples.sequences.shape == (B, PROMPT_LEN + MAX_NEW_TOKENS)
    assert samples.log_probs.shape == samples.mask.shape == (B, MAX_NEW_TOKENS)
    assert samples.prompt_len == PROMPT_LEN
    assert torch.equal(samples.sequences[:, :PROMPT_LEN], prompts)
    completions = samples.completions
    is_end = completions == tokenizer.end_id
    for row in range(B):
        ends = is_end[row].nonzero()
        length = ends[0].item() + 1 if len(ends) else MAX_NEW_TOKENS
        # La máscara cubre la respuesta, punto final incluido, y nada más
        assert samples.mask[row, :length].eq(1).all()
        assert samples.mask[row, length:].eq(0).all()
        assert completions[row, length:].eq(tokenizer.pad_id).all()
    assert (completions[samples.mask.bool()] != tokenizer.pad_id).all()
    assert (samples.log_probs[samples.mask.bool()] <= 0).all()
    assert samples.log_probs[~samples.mask.bool()].eq(0).all()


def test_sampling_is_reproducible_with_a_generator(model, prompts):
    first = sample(model, prompts, generator=torch.Generator().manual_seed(3))
    second = sample(model, prompts, generator=torch.Generator().manual_seed(3))
    assert torch.equal(first.sequences, second.sequences)
    assert torch.equal(first.log_probs, second.log_probs)


def test_short_budget_truncates(model, prompts):
    samples = sample(model, prompts, max_new_tokens=3)
    assert samples.sequences.shape == (prompts.shape[0], PROMPT_LEN + 3)


def test_recomputed_log_probs_equal_sampler_log_probs(model, prompts):
    generator = torch.Generator().manual_seed(1)
    for temperature in (1.0, 0.7):
        samples = sample(model, prompts, temperature=temperature, generator=generator)
        recomputed = token_log_probs(
            model, samples.sequences, PROMPT_LEN, temperature=temperature
        )
        assert recomputed.dtype == torch.float32
        assert torch.allclose(recomputed, samples.log_probs, atol=1e-5)


def test_log_probs_carry_gradient_and_ignore_padding(model, prompts):
    samples = sample(model, prompts, generator=torch.Generator().manual_seed(2))
    log_probs = token_log_probs(model, samples.sequences, PROMPT_LEN)
    assert log_probs.requires_grad
    assert log_probs[~samples.mask.bool()].eq(0).all()
    assert torch.isfinite(log_probs).all()


def test_next_token_probs_is_a_distribution(model):
    probs = next_token_probs(model, "17×24=17×20+17×4=340+")
    assert set(probs) == set(tokenizer.itos) - {tokenizer.itos[tokenizer.pad_id]}
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
    values = list(probs.values())
    assert values == sorted(values, reverse=True)


def test_path_probability_is_the_product_of_steps(model):
    completion = "17×20+17×4=340+68=408."
    steps = path_probs(model, "17×24=", completion)
    assert [ch for ch, _ in steps] == list(completion)
    ids = torch.tensor([tokenizer.encode("17×24=" + completion)])
    with torch.no_grad():
        total = token_log_probs(model, ids, PROMPT_LEN).sum().exp().item()
    product = torch.tensor([p for _, p in steps], dtype=torch.float64).prod().item()
    assert product == pytest.approx(total, rel=1e-4)


def test_copy_model_is_frozen_and_independent(model):
    frozen = copy_model(model)
    assert all(not p.requires_grad for p in frozen.parameters())
    assert not frozen.training
    with torch.no_grad():
        frozen.tok_emb.weight.add_(1.0)
    assert not torch.equal(frozen.tok_emb.weight, model.tok_emb.weight)


def test_bfloat16_sampler_differs_slightly_from_fp32(prompts):
    model = load_pretrained()
    sampler = copy_model(model, dtype=torch.bfloat16)
    assert sampler.tok_emb.weight.dtype == torch.bfloat16
    samples = sample(sampler, prompts, generator=torch.Generator().manual_seed(4))
    assert samples.log_probs.dtype == torch.float32
    with torch.no_grad():
        trainer = token_log_probs(model, samples.sequences, PROMPT_LEN)
    gap = (trainer - samples.log_probs).abs()[samples.mask.bool()]
    assert gap.max() > 0  # el muestreador no es el entrenador...
    assert gap.mean() < 0.1  # ...pero se le parece


# --- decodificación voraz ---------------------------------------------------


def test_greedy_decoding_writes_the_most_probable_character(model):
    samples = sample(model, encode_prompts([TARGET]), temperature=0)
    completion = tokenizer.decode_batch(samples.completions)[0]
    prompt = "17×24="
    # Carácter a carácter, el más probable según next_token_probs
    written = ""
    while len(written) < MAX_NEW_TOKENS and not written.endswith("."):
        written += next(iter(next_token_probs(model, prompt + written)))
    assert completion == written


def test_greedy_decoding_is_deterministic_and_leaves_the_generator_alone(
    model, prompts
):
    generator = torch.Generator().manual_seed(5)
    state = generator.get_state()
    first = sample(model, prompts, temperature=0, generator=generator)
    assert torch.equal(generator.get_state(), state)  # no ha sorteado nada
    for temperature in (None, 0.0):
        again = sample(model, prompts, temperature=temperature)
        assert torch.equal(first.sequences, again.sequences)
    # Filas con el mismo enunciado dan la misma respuesta
    assert torch.equal(first.sequences[0], first.sequences[3])


def test_greedy_log_probs_are_the_temperature_one_log_probs(model, prompts):
    samples = sample(model, prompts, temperature=0)
    recomputed = token_log_probs(model, samples.sequences, PROMPT_LEN)
    assert torch.allclose(recomputed, samples.log_probs, atol=1e-5)
    assert torch.allclose(
        token_log_probs(model, samples.sequences, PROMPT_LEN, temperature=0),
        recomputed,
    )
