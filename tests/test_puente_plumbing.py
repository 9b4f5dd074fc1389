"""Las tuberías del módulo 09 (``helpers.puente.plumbing``) y su cuaderno.

Las referencias de los ejercicios se comprueban contra definiciones
independientes (bucles escritos a mano, el lote entero de una vez) y contra
lo que el cuaderno de solución resuelve.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from helpers.checks import CheckError
from helpers.checks.puente import (
    ACCUMULATE_BATCH,
    accumulate_case,
    check_response_log_probs,
    check_response_log_probs_shape,
    log_probs_case,
    tiny_gpt2,
)
from helpers.puente import response_log_probs
from helpers.puente.from_notebook import function_from_notebook
from helpers.puente.plumbing import (
    accumulate_gradients,
    informative_groups,
    masked_mean,
    trl_normalize,
)
from tests.notebooks import solution_functions


def _notebook_functions() -> dict:
    return solution_functions(
        "09_puente", {"math": math, "np": np, "torch": torch, "F": F}
    )


def test_response_log_probs_reads_each_token_in_the_previous_logits():
    logits, input_ids, prompt_len, mask = log_probs_case(0, 3, [5, 2, 4], 5)
    got = response_log_probs(logits, input_ids, prompt_len, mask)
    log_p = F.log_softmax(logits, dim=-1)
    for i in range(logits.shape[0]):
        for j in range(mask.shape[1]):
            position = prompt_len + j
            want = log_p[i, position - 1, input_ids[i, position]] if mask[i, j] else 0.0
            assert got[i, j].item() == pytest.approx(float(want), abs=1e-6)


def test_masked_mean_ignores_non_finite_padding():
    values = torch.tensor(
        [[1.0, 3.0, float("nan")], [2.0, float("inf"), -float("inf")]]
    )
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert masked_mean(values, mask).item() == pytest.approx(2.0)
    assert masked_mean(values, mask, dim=-1).tolist() == [2.0, 2.0]


def test_trl_normalize_by_hand():
    per_token = torch.tensor([[1.0, 1.0, 1.0, 1.0], [4.0, float("nan"), 0.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0]])
    assert trl_normalize(per_token, mask, "grpo", 8).item() == pytest.approx(2.5)
    assert trl_normalize(per_token, mask, "bnpo", 8).item() == pytest.approx(8 / 5)
    assert trl_normalize(per_token, mask, "dr_grpo", 8).item() == pytest.approx(8 / 16)
    with pytest.raises(ValueError):
        trl_normalize(per_token, mask, "dapo", 8)


@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_accumulation_equals_the_whole_batch(k):
    input_ids, prompt_len, mask, advantages = ACCUMULATE_BATCH
    # El lote entero a mano, de una vez
    whole = tiny_gpt2()
    log_probs = response_log_probs(whole(input_ids).logits, input_ids, prompt_len, mask)
    loss = -(advantages[:, None] * log_probs * mask).sum() / mask.sum()
    loss.backward()
    parts = tiny_gpt2()
    value = accumulate_gradients(parts, input_ids, prompt_len, mask, advantages, k)
    assert isinstance(value, float)
    assert value == pytest.approx(loss.item(), abs=1e-6)
    for a, b in zip(whole.parameters(), parts.parameters(), strict=True):
        assert torch.allclose(a.grad, b.grad, atol=1e-7, rtol=1e-4)
    with pytest.raises(ValueError):
        accumulate_gradients(parts, input_ids, prompt_len, mask, advantages, 3)


def test_informative_groups_by_hand():
    rewards = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.5, 0.5])
    assert informative_groups(rewards, 2).tolist() == [
        False,
        False,
        True,
        True,
        False,
        False,
    ]
    assert informative_groups(rewards, 3).tolist() == [True] * 3 + [True] * 3


def test_equal_rewards_that_rounding_defeats_have_no_signal():
    # Los casos de la comprobación con recompensas iguales que no son exactas
    # en binario: su desviación típica no sale 0 (así cazan «std > 0»), pero
    # el grupo no tiene señal
    for rewards, group_size in (
        (torch.tensor([0.1] * 3, dtype=torch.float64), 3),
        (torch.tensor([0.2] * 8), 8),
    ):
        assert rewards.reshape(-1, group_size).std(dim=-1).item() > 0
        assert not informative_groups(rewards, group_size).any()


def test_the_padding_check_catches_multiplying_by_the_mask():
    # Con logits finitos, multiplicar por la máscara da los valores de la
    # referencia; con nan o ±∞ en los logits del relleno, nan
    def times_mask(logits, input_ids, prompt_len, mask):
        return response_log_probs(logits, input_ids, prompt_len) * mask

    check_response_log_probs(times_mask)
    with pytest.raises(CheckError) as caught:
        check_response_log_probs_shape(times_mask)
    assert caught.value.mistake == "lp_multiplies_mask"
    check_response_log_probs_shape(response_log_probs)


@pytest.mark.parametrize(
    "batch",
    [ACCUMULATE_BATCH, accumulate_case(4, [4, 1, 2, 4, 1, 2], 4, pad_id=9)],
)
def test_the_check_batches_have_distinct_rows(batch):
    # La comprobación reconoce qué filas recibe cada forward por su contenido
    input_ids = batch[0]
    assert len({tuple(row.tolist()) for row in input_ids}) == len(input_ids)


def test_notebook_solutions_agree_with_the_references():
    fns = _notebook_functions()
    for seed in range(3):
        case = log_probs_case(seed, 2 + seed, [3, 1, 4], 4)
        assert torch.allclose(
            fns["response_log_probs"](*case), response_log_probs(*case)
        )
    values = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    mask = (torch.rand(4, 5, generator=torch.Generator().manual_seed(2)) > 0.3).float()
    mask[:, 0] = 1.0
    for dim in (None, -1, 0):
        assert torch.allclose(
            fns["masked_mean"](values, mask, dim), masked_mean(values, mask, dim)
        )
    for loss_type in ("grpo", "bnpo", "dr_grpo"):
        assert torch.allclose(
            fns["trl_normalize"](values, mask, loss_type, 9),
            trl_normalize(values, mask, loss_type, 9),
        )
    input_ids, prompt_len, mask, advantages = ACCUMULATE_BATCH
    ours, theirs = tiny_gpt2(), tiny_gpt2()
    got = fns["accumulate_gradients"](ours, input_ids, prompt_len, mask, advantages, 4)
    want = accumulate_gradients(theirs, input_ids, prompt_len, mask, advantages, 4)
    assert got == pytest.approx(want, abs=1e-7)
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.allclose(a.grad, b.grad, atol=1e-8, rtol=1e-5)
    rewards = torch.tensor([0.0, 1.0, 1.0, 1.0, 0.3, 0.3, 0.3, 0.2])
    assert torch.equal(
        fns["informative_groups"](rewards, 4), informative_groups(rewards, 4)
    )


def test_function_from_notebook(tmp_path, monkeypatch):
    import nbformat

    def notebook(source):
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["nbgrader"] = {"grade_id": "grpo_loss", "solution": True}
        nb.cells.append(cell)
        (tmp_path / "07_grpo.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")

    monkeypatch.chdir(tmp_path)

    def fallback(*args):
        return "referencia"

    probe = (torch.zeros(2), torch.ones(2), torch.zeros(2))
    notebook("def grpo_loss(lp, m, a):\n    return 'mía'\n")
    function, note = function_from_notebook(
        "07_grpo.ipynb", "grpo_loss", "grpo_loss", fallback, probe
    )
    assert function(*probe) == "mía" and "Uso tu" in note
    notebook("def grpo_loss(lp, m, a):\n    raise NotImplementedError()\n")
    function, note = function_from_notebook(
        "07_grpo.ipynb", "grpo_loss", "grpo_loss", fallback, probe
    )
    assert function is fallback and "sin resolver" in note
    notebook("def grpo_loss(lp, m, a):\n    return 1 / 0\n")
    function, note = function_from_notebook(
        "07_grpo.ipynb", "grpo_loss", "grpo_loss", fallback, probe
    )
    assert function is fallback and "ZeroDivisionError" in note
    (tmp_path / "07_grpo.ipynb").unlink()
    function, note = function_from_notebook(
        "07_grpo.ipynb", "grpo_loss", "grpo_loss", fallback, probe
    )
    assert function is fallback and "No encuentro" in note


def test_the_check_model_leaves_the_global_random_state_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    first = tiny_gpt2(seed=5)
    assert torch.equal(torch.random.get_rng_state(), before)
    second = tiny_gpt2(seed=5)
    for a, b in zip(first.parameters(), second.parameters(), strict=True):
        assert torch.equal(a, b)
