"""helpers.practica.prompts: enunciados de longitudes distintas y su referencia.

Además de la referencia, cada error típico del ejercicio 1 se escribe aquí y
se comprueba que se aleja de la verdad en estos lotes: si un cambio de los
datos lo volviera inofensivo, el ejercicio dejaría de enseñar algo.
"""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from helpers.practica import prompts
from helpers.puente.convert import load_pretrained_gpt2
from helpers.puente.tokenizer import make_tokenizer
from helpers.tinylm import MAX_NEW_TOKENS, prompt_text

SEEDS = (0, 1, 2)
#: Por debajo: redondeo de float32. Por encima: un error de verdad.
SAME = 1e-4
WRONG = 0.5


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return load_pretrained_gpt2()


@pytest.fixture(scope="module")
def tokenizer():
    return make_tokenizer()


@pytest.fixture(scope="module")
def batches(model, tokenizer):
    return {
        seed: prompts.left_padded_batch(
            model, tokenizer, prompts.practice_problems(8, seed), seed
        )
        for seed in SEEDS
    }


@pytest.fixture(scope="module")
def truths(model, batches):
    with torch.no_grad():
        return {
            seed: prompts.unpadded_log_probs(model, batch)
            for seed, batch in batches.items()
        }


def _args(batch):
    return batch["input_ids"], batch["attention_mask"], batch["logits_to_keep"]


def _gap(values, truth, batch):
    """Máx. |Δ| en las casillas de la respuesta con máscara 1."""
    keep = batch["completion_mask"].bool()
    return (values - truth)[keep].abs().max().item()


# --- los datos ---------------------------------------------------------------


def test_practice_problems_lengths_and_seed():
    problems = prompts.practice_problems(9, seed=3)
    assert problems == prompts.practice_problems(9, seed=3)
    assert problems != prompts.practice_problems(9, seed=4)
    lengths = [len(prompt_text(a, b)) for a, b in problems]
    assert lengths == [4, 5, 6] * 3
    assert all(a >= 2 and b >= 2 for a, b in problems)


@pytest.mark.parametrize("n", [0, -1, 2.5])
def test_practice_problems_rejects_bad_n(n):
    with pytest.raises(ValueError, match="entero"):
        prompts.practice_problems(n, seed=0)


def test_chat_dataset_columns():
    problems = [(7, 8), (7, 24), (17, 24)]
    data = prompts.chat_dataset(problems)
    assert data.column_names == ["prompt", "answer"]
    assert data[1]["prompt"] == [{"role": "user", "content": "7×24="}]
    assert data["answer"] == ["56", "168", "408"]
    plain = prompts.chat_dataset(problems, conversational=False)
    assert plain["prompt"] == ["7×8=", "7×24=", "17×24="]


def test_prompt_texts_go_through_the_chat_template(tokenizer):
    problems = [(7, 8), (17, 24)]
    assert prompts.prompt_texts(problems, tokenizer) == ["7×8=", "17×24="]
    bare = make_tokenizer()
    bare.chat_template = None
    with pytest.raises(ValueError, match="plantilla de chat"):
        prompts.prompt_texts(problems, bare)


# --- el lote -----------------------------------------------------------------


def test_left_padded_batch_layout(batches, tokenizer):
    for batch in batches.values():
        prompt_mask, completion_mask = batch["prompt_mask"], batch["completion_mask"]
        c = batch["logits_to_keep"]
        assert batch["completion_ids"].shape[1] == c <= MAX_NEW_TOKENS
        # enunciados de longitudes distintas, rellenados a la izquierda
        lengths = prompt_mask.sum(dim=1)
        assert len(set(lengths.tolist())) == 3
        assert lengths[0] < prompt_mask.shape[1]  # la primera fila lleva relleno
        assert torch.equal(prompt_mask, prompt_mask.cummax(dim=1).values)
        assert (batch["prompt_ids"][prompt_mask == 0] == tokenizer.pad_token_id).all()
        # respuestas rellenadas a la derecha, con máscara hasta el «.» incluido
        assert torch.equal(
            completion_mask, completion_mask.flip(1).cummax(1)[0].flip(1)
        )
        for ids, mask in zip(batch["completion_ids"], completion_mask, strict=True):
            real = ids[mask.bool()]
            assert (real[:-1] != tokenizer.eos_token_id).all()
            assert (ids[~mask.bool()] == tokenizer.pad_token_id).all()
            if not mask.all():
                assert real[-1] == tokenizer.eos_token_id
        assert completion_mask[:, -1].any()  # C es la respuesta más larga
        assert torch.equal(
            batch["input_ids"],
            torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1),
        )
        assert torch.equal(
            batch["attention_mask"], torch.cat([prompt_mask, completion_mask], 1)
        )


def test_left_padded_batch_is_deterministic(model, tokenizer, batches):
    again = prompts.left_padded_batch(
        model, tokenizer, prompts.practice_problems(8, 0), 0
    )
    assert torch.equal(again["input_ids"], batches[0]["input_ids"])
    assert not torch.equal(batches[0]["input_ids"], batches[1]["input_ids"])


def test_left_padded_batch_rejects_too_many_positions(model, tokenizer):
    with pytest.raises(ValueError, match="posiciones"):
        prompts.left_padded_batch(model, tokenizer, [(17, 24)], 0, max_new_tokens=40)


def test_generation_sees_each_row_as_if_unpadded(model, tokenizer):
    """``generate`` con la máscara pone bien las posiciones: sus logits de cada
    paso son los del pase sin relleno de esa fila."""
    problems = prompts.practice_problems(6, seed=5)
    batch = prompts.left_padded_batch(model, tokenizer, problems, seed=5)
    _, output = prompts._sample(
        model,
        tokenizer,
        problems,
        5,
        MAX_NEW_TOKENS,
        return_dict_in_generate=True,
        output_logits=True,
    )
    step_logits = torch.stack(output.logits, dim=1)  # (B, C, V)
    assert step_logits.shape[1] == batch["logits_to_keep"]
    worst = 0.0
    with torch.no_grad():
        for i, (ids, p, c) in enumerate(prompts._real_rows(batch)):
            truth = model(input_ids=ids[None]).logits[0, p - 1 : p + c - 1]
            worst = max(worst, (step_logits[i, :c] - truth).abs().max().item())
    assert worst < SAME


# --- la referencia -----------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_reference_matches_unpadded_truth(model, batches, truths, seed):
    batch = batches[seed]
    with torch.no_grad():
        ours = prompts.response_log_probs(model, *_args(batch))
    assert ours.shape == batch["completion_ids"].shape
    assert _gap(ours, truths[seed], batch) < SAME
    padding = ~batch["completion_mask"].bool()
    assert padding.any()
    assert (ours[padding] == 0).all()
    assert (truths[seed][padding] == 0).all()
    assert (ours[~padding] < 0).all()


def test_reference_keeps_the_graph(model, batches):
    model.zero_grad()
    log_probs = prompts.response_log_probs(model, *_args(batches[0]))
    assert log_probs.requires_grad
    log_probs.sum().backward()
    grad = model.transformer.wpe.weight.grad
    assert grad is not None and grad.abs().sum() > 0
    model.zero_grad()


# --- los errores típicos se notan --------------------------------------------


def _forward(model, batch, mask=True, positions=True):
    ids, attention, _ = _args(batch)
    kwargs = {}
    if mask:
        kwargs["attention_mask"] = attention
    if positions:
        kwargs["position_ids"] = prompts.position_ids_from_mask(attention)
    return model(input_ids=ids, **kwargs).logits


def _pick(logits, ids, mask):
    chosen = F.log_softmax(logits, dim=-1).gather(-1, ids[..., None])[..., 0]
    return chosen * mask


def _wrong_no_mask(model, batch):
    c = batch["logits_to_keep"]
    logits = _forward(model, batch, mask=False)[:, -c - 1 : -1]
    return _pick(logits, batch["input_ids"][:, -c:], batch["completion_mask"])


def _wrong_no_positions(model, batch):
    c = batch["logits_to_keep"]
    logits = _forward(model, batch, positions=False)[:, -c - 1 : -1]
    return _pick(logits, batch["input_ids"][:, -c:], batch["completion_mask"])


def _wrong_neither(model, batch):
    c = batch["logits_to_keep"]
    logits = _forward(model, batch, mask=False, positions=False)[:, -c - 1 : -1]
    return _pick(logits, batch["input_ids"][:, -c:], batch["completion_mask"])


def _wrong_off_by_one(model, batch):
    c = batch["logits_to_keep"]
    logits = _forward(model, batch)[:, -c:]  # sin desplazar
    return _pick(logits, batch["input_ids"][:, -c:], batch["completion_mask"])


def _wrong_axis(model, batch):
    c = batch["logits_to_keep"]
    logits = _forward(model, batch)[:, -c - 1 : -1]
    log_p = F.log_softmax(logits, dim=1)  # sobre la secuencia, no el vocabulario
    chosen = log_p.gather(-1, batch["input_ids"][:, -c:, None])[..., 0]
    return chosen * batch["completion_mask"]


def _wrong_first_row_prompt_len(model, batch):
    """Una sola longitud de enunciado: la real de la primera fila."""
    c = batch["logits_to_keep"]
    start = int(batch["prompt_mask"][0].sum())
    logits = _forward(model, batch)[:, start - 1 : start - 1 + c]
    ids = batch["input_ids"][:, start : start + c]
    return _pick(logits, ids, batch["completion_mask"])


def _wrong_per_row_from_the_left(model, batch):
    """La longitud real de cada enunciado, contada desde la izquierda (como si
    el relleno del enunciado fuera a la derecha)."""
    c = batch["logits_to_keep"]
    logits = _forward(model, batch)
    rows = []
    for i, start in enumerate(batch["prompt_mask"].sum(dim=1).tolist()):
        rows.append(
            _pick(
                logits[i, start - 1 : start - 1 + c],
                batch["input_ids"][i, start : start + c],
                batch["completion_mask"][i],
            )
        )
    return torch.stack(rows)


WRONG_VARIANTS = {
    "sin attention_mask": _wrong_no_mask,
    "sin position_ids": _wrong_no_positions,
    "sin máscara ni posiciones": _wrong_neither,
    "sin desplazar": _wrong_off_by_one,
    "log_softmax en otro eje": _wrong_axis,
    "longitud de la primera fila": _wrong_first_row_prompt_len,
    "enunciado contado desde la izquierda": _wrong_per_row_from_the_left,
}


@pytest.mark.parametrize("name", list(WRONG_VARIANTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_typical_mistake_is_far_from_the_truth(model, batches, truths, name, seed):
    batch = batches[seed]
    with torch.no_grad():
        wrong = WRONG_VARIANTS[name](model, batch)
    assert wrong.shape == truths[seed].shape
    assert _gap(wrong, truths[seed], batch) > WRONG, name


def test_right_edge_is_right_in_trl_layout(model, batches, truths):
    """Leer la respuesta en las C últimas columnas es correcto aquí: el
    enunciado va rellenado a la izquierda y la respuesta a la derecha."""
    batch = batches[0]
    c = batch["logits_to_keep"]
    with torch.no_grad():
        logits = _forward(model, batch)
    right_edge = _pick(logits[:, -c - 1 : -1], batch["input_ids"][:, -c:], 1)
    assert _gap(right_edge, truths[0], batch) < SAME


def test_unmasked_padding_differs_from_the_statement(model, batches):
    """Sin tapar el relleno, la respuesta no vale 0 ahí (el enunciado lo pide)."""
    batch = batches[0]
    c = batch["logits_to_keep"]
    with torch.no_grad():
        logits = _forward(model, batch)
    raw = _pick(logits[:, -c - 1 : -1], batch["input_ids"][:, -c:], 1)
    padding = ~batch["completion_mask"].bool()
    assert raw[padding].abs().min() > 0


# --- las tablas ----------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_padding_table_needs_mask_and_positions(model, batches, seed):
    table = prompts.padding_table(model, batches[seed])
    assert set(table) == set(prompts.PADDING_FORWARDS)
    assert table["nothing"] > WRONG
    assert table["mask"] > WRONG
    assert table["mask_and_positions"] < SAME


def test_rotary_shift_cancels(batches):
    """Con RoPE, la máscara basta: desplazar toda la fila no cambia nada."""
    rotary = prompts.tiny_rotary_model(seed=0)
    for seed in SEEDS:
        table = prompts.padding_table(rotary, batches[seed])
        assert table["nothing"] > WRONG
        assert table["mask"] < SAME
        assert table["mask_and_positions"] < SAME


def test_trl_training_forward_misses_positions(model, batches):
    """TRL 1.16 no pasa position_ids: en GPT-2 sus log-probs se alejan."""
    gaps = prompts.trl_log_prob_gap(model, batches[0])
    assert gaps["trl"] > WRONG
    assert gaps["reference"] < SAME
