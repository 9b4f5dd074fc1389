"""La pérdida de DPO e IPO del curso es la de TRL, calculada por el código de TRL.

Sobre ocho pares fijos de preferencias (respuestas de una política que ya se
alejó del SFT, etiquetadas por la anotadora del módulo 10, con la elegida y
la rechazada de longitudes distintas), se llama a ``DPOTrainer.compute_loss``
de TRL (su ``_compute_loss``, con los pares tokenizados y juntados por TRL)
y a ``dpo_loss`` del curso con las log-probabilidades de
``sequence_log_probs`` (medias por token en IPO, como ``train_dpo``), para
``loss_type`` sigmoid (DPO) e ipo y dos valores de β. Ver
``helpers/puente/dpo_equality.py``.

Tolerancias (float32, un hilo): |pérdida_TRL − pérdida_curso| ≤ 1e-6 ·
|pérdida_TRL| y max|∇TRL − ∇curso| ≤ 1e-5 · max|∇TRL| sobre todos los
parámetros. Medido al escribir la prueba, en las cuatro combinaciones: como
mucho 1,3e-7 relativo en la pérdida y 5,1e-7 en el gradiente.

Para que la prueba pueda fallar: h toma los dos signos y se aleja de 0, y
con la elegida y la rechazada cambiadas (h → −h) la pérdida y el gradiente
del curso se alejan de los de TRL miles de veces la tolerancia.

La única convención que se alinea es la del relleno: el curso le pone
log-probabilidad −∞ y GPT-2 no; ``forbid_pad`` se lo prohíbe a los modelos
de TRL. ``test_pad_convention_is_the_only_difference`` mide lo que pasa sin
eso.
"""

from __future__ import annotations

import pytest
import torch

from helpers.puente.dpo_equality import (
    DPO_BETAS,
    DPO_LOSS_TYPES,
    compare_dpo_with_trl,
    equality_pairs,
    make_dpo_trainer,
    moved_policy,
    trl_batch,
)
from helpers.tinylm import PROMPT_LEN, completion_mask, load_pretrained, tokenizer

datasets = pytest.importorskip("datasets")
trl = pytest.importorskip("trl")

LOSS_RTOL = 1e-6
GRAD_RTOL = 1e-5


@pytest.fixture(scope="module")
def setup():
    """La política movida, la referencia (el SFT) y los ocho pares."""
    torch.set_num_threads(1)  # el fixture de módulo corre antes que one_thread
    policy = moved_policy()
    reference = load_pretrained()
    pairs = equality_pairs(policy)
    chosen_len = completion_mask(pairs.chosen).sum(-1)
    rejected_len = completion_mask(pairs.rejected).sum(-1)
    # Condiciones para que la prueba pueda fallar: longitudes distintas dentro
    # de cada par (la media por token de IPO importa) y relleno presente
    assert (chosen_len != rejected_len).all()
    assert max(chosen_len.max(), rejected_len.max()) < pairs.chosen.shape[1]
    return policy, reference, pairs


@pytest.mark.parametrize("beta", DPO_BETAS)
@pytest.mark.parametrize("loss_type", DPO_LOSS_TYPES)
def test_course_dpo_loss_equals_trl_compute_loss(setup, tmp_path, loss_type, beta):
    c = compare_dpo_with_trl(*setup, loss_type, beta, tmp_path)
    assert c.grad_scale > 1e-2  # hay gradiente que comparar
    assert c.relative_loss_diff <= LOSS_RTOL, c
    assert c.relative_grad_diff <= GRAD_RTOL, c
    # h no es trivial: los dos signos y lejos de 0 (en DPO cuenta β h; en IPO,
    # h por token frente a 1/(2β))
    margins = torch.tensor(c.margins)
    assert (margins > 0).any() and (margins < 0).any(), c
    scale = beta if loss_type == "sigmoid" else 1.0
    assert (scale * margins).abs().max() > 0.1, c
    # Con h → −h la comparación fallaría de lejos: la prueba no pasa por nada
    assert c.swapped_relative_loss_diff > 1e3 * LOSS_RTOL, c
    assert c.swapped_relative_grad_diff > 1e3 * GRAD_RTOL, c


def test_trl_sees_the_same_pairs(setup, tmp_path):
    """El lote que arma TRL (del texto, con su tokenizador y su colador) tiene
    los mismos ids que los pares del curso: elegidas arriba, rechazadas abajo."""
    policy, reference, pairs = setup
    trainer = make_dpo_trainer(policy, reference, pairs, "sigmoid", 0.1, tmp_path)
    batch = trl_batch(trainer)
    n = len(pairs)
    assert batch["input_ids"].shape[0] == 2 * n
    for row in range(2 * n):
        i = row % n
        completions = pairs.chosen if row < n else pairs.rejected
        ids = batch["input_ids"][row]
        in_completion = batch["completion_mask"][row].bool()
        assert torch.equal(ids[:PROMPT_LEN], pairs.prompts[i])
        assert not in_completion[:PROMPT_LEN].any()
        expected = completions[i][completions[i] != tokenizer.pad_id]
        assert torch.equal(ids[in_completion], expected)
        assert batch["attention_mask"][row].sum() == PROMPT_LEN + len(expected)


def test_pad_convention_is_the_only_difference(setup, tmp_path):
    """Sin prohibir el relleno en los modelos de TRL, el gradiente difiere más
    que la tolerancia (el de TRL empuja también el logit del relleno), pero
    poco: menos de una centésima de su escala."""
    c = compare_dpo_with_trl(*setup, "sigmoid", 0.1, tmp_path, pad_forbidden=False)
    assert not c.pad_forbidden
    assert 10 * GRAD_RTOL < c.relative_grad_diff < 1e-2, c
    assert c.relative_loss_diff < 1e-4, c
