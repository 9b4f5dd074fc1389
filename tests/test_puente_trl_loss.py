"""La pérdida de GRPO del curso es la de TRL, calculada por el código de TRL.

Sobre un lote fijo de tensores (respuestas muestreadas del modelo del SFT,
ventajas de grupo, log-probabilidades «antiguas» y de referencia hechas a
mano), se llama a ``GRPOTrainer._compute_loss`` de TRL (privado: por eso TRL
va fijado en pyproject) y se compara con ``grpo_objective_loss`` del curso
(``helpers.tinylm.grpo``, a través de ``helpers.puente.course_loss_as_trl``),
para ``loss_type`` grpo, dr_grpo, dapo y bnpo y β = 0 y β > 0.

Dos situaciones por combinación:

- **μ = 1** (sin ``old_per_token_logps``: TRL usa las actuales sin
  gradiente). El cociente vale 1 y, con ventajas centradas, la pérdida vale
  casi 0 en los dos lados: lo que se compara de verdad es el **gradiente**.
- **fuera de política** (``old_per_token_logps`` ≠ actuales, como en la
  segunda época con μ > 1): el cociente se aleja de 1, el recorte actúa
  (se comprueba que hay tokens recortados) y se comparan valor y gradiente.

Tolerancias (float32, un hilo): |pérdida_TRL − pérdida_curso| ≤ 1e-6 y
max|∇TRL − ∇curso| ≤ 1e-5 · max|∇TRL|. Medido al escribir la prueba, en
las 24 combinaciones: como mucho 9e-8 en la pérdida y 6e-8 en el gradiente
(1,2e-6 relativo, con max|∇| entre 4e-2 y 5e-2).

Donde las convenciones difieren, el lado del curso adopta la de TRL, a la
vista:

- **Log-probabilidades**: el curso pone el logit del relleno a −∞ y TRL no;
  aquí las del curso salen de ``response_log_probs``, que no lo hace
  (``test_pad_convention_is_the_only_log_prob_difference`` mide la diferencia).
- **dr_grpo**: TRL divide por B · max_completion_length y el curso por B;
  ``course_loss_as_trl`` divide además por max_completion_length.
- **β > 0**: TRL multiplica por defecto la penalización k3 por el cociente
  (``use_bias_correction_kl=True``) y el objetivo del curso no. Se prueban
  las dos: TRL con el valor por defecto contra el curso con esa corrección, y
  TRL con ``use_bias_correction_kl=False`` contra el curso tal cual.
"""

from __future__ import annotations

import pytest
import torch

from helpers.puente import course_loss_as_trl, response_log_probs, to_gpt2
from helpers.puente.trl_equality import (
    BETA,
    compare_with_trl,
    equality_batch,
    make_trl_trainer,
    perturbed,
)
from helpers.tinylm import MAX_NEW_TOKENS, PROMPT_LEN, load_pretrained, token_log_probs

datasets = pytest.importorskip("datasets")
trl = pytest.importorskip("trl")

TRL_LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo")
MAX_COMPLETION = MAX_NEW_TOKENS  # 26
LOSS_ATOL = 1e-6
GRAD_RTOL = 1e-5


@pytest.fixture(scope="module")
def batch():
    """Un lote fijo: G respuestas a T = 1 por enunciado, rellenadas a 26."""
    batch = equality_batch()
    lengths = batch["mask"].sum(dim=-1)
    # Condiciones para que la prueba pueda fallar: longitudes distintas (las
    # normalizaciones dan cosas distintas), relleno presente, ventajas ≠ 0
    assert lengths.unique().numel() > 2 and lengths.max() < MAX_COMPLETION
    assert batch["advantages"].abs().min() > 0
    return batch


@pytest.mark.parametrize("off_policy", [False, True], ids=["mu1", "off_policy"])
@pytest.mark.parametrize("beta", [0.0, BETA], ids=["beta0", "beta"])
@pytest.mark.parametrize("loss_type", TRL_LOSS_TYPES)
def test_course_loss_equals_trl_compute_loss(
    saved_model, batch, tmp_path, loss_type, beta, off_policy
):
    # β > 0: TRL con su valor por defecto (use_bias_correction_kl=True), y el
    # curso con la misma corrección, dicha explícitamente
    trainer = make_trl_trainer(saved_model, loss_type, beta, tmp_path)
    assert trainer.args.use_bias_correction_kl  # el valor por defecto de TRL
    c = compare_with_trl(trainer, batch, off_policy, bias_correction=True)
    assert (c.loss_type, c.beta) == (loss_type, beta)
    assert c.grad_scale > 1e-3  # hay gradiente que comparar
    assert c.loss_diff <= LOSS_ATOL, c
    assert c.grad_diff <= GRAD_RTOL * c.grad_scale, c
    if off_policy:  # el recorte actúa por arriba y por abajo
        assert c.clipped_high and c.clipped_low, c


@pytest.mark.parametrize("loss_type", TRL_LOSS_TYPES)
def test_deepseekmath_kl_without_trl_bias_correction(
    saved_model, batch, tmp_path, loss_type
):
    """Con ``use_bias_correction_kl=False``, TRL da el objetivo del curso tal cual."""
    trainer = make_trl_trainer(
        saved_model, loss_type, BETA, tmp_path, use_bias_correction_kl=False
    )
    for off_policy in (False, True):
        c = compare_with_trl(trainer, batch, off_policy)
        assert not c.bias_correction
        assert c.loss_diff <= LOSS_ATOL, c
        assert c.grad_diff <= GRAD_RTOL * c.grad_scale, c


def test_the_conventions_matter(saved_model, batch, tmp_path):
    """Las conversiones de arriba no sobran: sin ellas, la prueba fallaría."""
    trainer = make_trl_trainer(saved_model, "dr_grpo", BETA, tmp_path)
    # La corrección de TRL cambia el gradiente de la KL aun con μ = 1
    c = compare_with_trl(trainer, batch, off_policy=False, bias_correction=False)
    assert c.grad_diff > 10 * GRAD_RTOL * c.grad_scale
    # Sin dividir por max_completion_length, dr_grpo es 26 veces más grande
    model = trainer.model
    mask = batch["mask"]
    log_probs = response_log_probs(
        model(batch["sequences"]).logits, batch["sequences"], PROMPT_LEN, mask
    )
    old = perturbed(log_probs.detach(), mask, seed=2)
    ours = course_loss_as_trl(
        log_probs,
        mask,
        batch["advantages"],
        "dr_grpo",
        old_log_probs=old,
        max_completion_length=MAX_COMPLETION,
    )
    theirs = course_loss_as_trl(
        log_probs,
        mask,
        batch["advantages"],
        "dr_grpo",
        old_log_probs=old,
        max_completion_length=1,
    )
    assert theirs.item() == pytest.approx(MAX_COMPLETION * ours.item(), rel=1e-6)
    assert abs(theirs.item() - ours.item()) > 1e3 * LOSS_ATOL


def test_pad_convention_is_the_only_log_prob_difference(batch):
    """El curso pone el logit del relleno a −∞; TRL no. La diferencia es real
    (mayor que las tolerancias de arriba) y pequeña (< 1e-3 en este lote)."""
    model = load_pretrained()
    mask = batch["mask"]
    with torch.no_grad():
        course = token_log_probs(model, batch["sequences"], PROMPT_LEN)
        logits = to_gpt2(model)(batch["sequences"]).logits
        trl_style = response_log_probs(logits, batch["sequences"], PROMPT_LEN, mask)
        # Con el relleno prohibido también en los logits de HF, son iguales
        logits[..., 0] = float("-inf")
        masked = response_log_probs(logits, batch["sequences"], PROMPT_LEN, mask)
    gap = (course - trl_style).abs().max().item()
    assert 1e-5 < gap < 1e-3, gap
    assert (course - masked).abs().max().item() < 1e-6
    assert (trl_style <= course + 1e-7).all()  # sin prohibirlo, el relleno resta


def test_accumulation_bnpo_is_the_mean_of_means(saved_model, tmp_path):
    """Con dos micro-lotes de tokens distintos, el ``bnpo`` de TRL es la media
    de las medias de los micro-lotes y el ``dapo``, la media del lote entero
    (el cuaderno 09, §2.4 y §4)."""
    from helpers.puente.trl_equality import accumulation_table

    rows = {r.loss_type: r for r in accumulation_table(saved_model, tmp_path / "trl")}
    tokens = rows["bnpo"].microbatch_tokens
    assert len(tokens) == 2 and tokens[0] != tokens[1]
    assert rows["bnpo"].to_mean_of_means < GRAD_RTOL < 1e-2 < rows["bnpo"].to_batch_mean
    assert rows["dapo"].to_batch_mean < GRAD_RTOL < 1e-2 < rows["dapo"].to_mean_of_means
