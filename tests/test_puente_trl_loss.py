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

import warnings

import pytest
import torch

from helpers.puente import (
    TRL_LOSS_TYPES,
    TRLReward,
    course_loss_as_trl,
    load_gpt2,
    make_tokenizer,
    response_log_probs,
    to_gpt2,
)
from helpers.tinylm import (
    PROMPT_LEN,
    encode_prompts,
    group_advantages,
    load_pretrained,
    rewards_for,
    rl_problems,
    sample,
    token_log_probs,
)

datasets = pytest.importorskip("datasets")
trl = pytest.importorskip("trl")

G = 4  # respuestas por enunciado
N_PROMPTS = 4
MAX_COMPLETION = 26  # = helpers.tinylm.MAX_NEW_TOKENS
EPSILON, EPSILON_HIGH = 0.2, 0.28  # recorte asimétrico: prueba los dos topes
BETA = 0.04
LOSS_ATOL = 1e-6
GRAD_RTOL = 1e-5


@pytest.fixture(scope="module")
def batch():
    """Un lote fijo: G respuestas a T = 1 por enunciado, rellenadas a 26."""
    # Respuestas de 21, 22, 24 y 25 caracteres: las normalizaciones difieren
    problems = [(10, 10), (10, 19), (21, 81), (45, 58)]
    assert set(problems) <= set(rl_problems())
    prompts = encode_prompts(problems).repeat_interleave(G, dim=0)
    samples = sample(
        load_pretrained(), prompts, generator=torch.Generator().manual_seed(0)
    )
    rewards = rewards_for(samples.completions, [p for p in problems for _ in range(G)])
    # Un poco de ruido fijo en las recompensas: ventajas distintas de 0 en
    # todos los grupos (también en los de todo aciertos)
    noise = 0.1 * torch.randn(N_PROMPTS, G, generator=torch.Generator().manual_seed(1))
    advantages = group_advantages(
        rewards.view(N_PROMPTS, G) + noise, std_normalize=True
    ).view(-1)
    mask = samples.mask
    lengths = mask.sum(dim=-1)
    # Condiciones para que la prueba pueda fallar: longitudes distintas (las
    # normalizaciones dan cosas distintas), relleno presente, ventajas ≠ 0
    assert lengths.unique().numel() > 2 and lengths.max() < MAX_COMPLETION
    assert advantages.abs().min() > 0
    return {
        "problems": problems,
        "prompts": prompts,
        "sequences": samples.sequences,
        "completions": samples.completions,
        "mask": mask,
        "advantages": advantages,
    }


def _trainer(path, loss_type: str, beta: float, tmp_path, **extra):
    """Un GRPOTrainer de verdad sobre el modelo guardado, en CPU y float32."""
    with warnings.catch_warnings():  # avisos de obsolescencia de transformers
        warnings.simplefilter("ignore", FutureWarning)
        args = trl.GRPOConfig(
            output_dir=str(tmp_path),
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=G * N_PROMPTS,
            num_generations=G,
            max_completion_length=MAX_COMPLETION,
            loss_type=loss_type,
            beta=beta,
            epsilon=EPSILON,
            epsilon_high=EPSILON_HIGH,
            report_to=[],
            disable_tqdm=True,
            **extra,
        )
    dataset = datasets.Dataset.from_dict({"prompt": ["17×24="], "answer": ["408"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = trl.GRPOTrainer(
            model=load_gpt2(path),
            reward_funcs=[TRLReward("correctness")],
            args=args,
            train_dataset=dataset,
            processing_class=make_tokenizer(),
        )
    trainer.model.train()
    # Lo fija el bucle de entrenamiento; aquí no hay bucle: un micro-lote
    trainer.current_gradient_accumulation_steps = 1
    return trainer


def _perturbed(log_probs, mask, seed: int) -> torch.Tensor:
    """Log-probabilidades «de otra política»: las actuales más ruido fijo."""
    noise = 0.3 * torch.randn(
        log_probs.shape, generator=torch.Generator().manual_seed(seed)
    )
    return (log_probs + noise) * mask


def _grads(model) -> list[torch.Tensor]:
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return grads


def _compare(trainer, batch, beta, off_policy, bias_correction):
    """Pérdida y gradiente de TRL y del curso sobre el mismo modelo y lote."""
    model = trainer.model
    mask = batch["mask"]
    with torch.no_grad():
        current = response_log_probs(
            model(batch["sequences"]).logits, batch["sequences"], PROMPT_LEN, mask
        )
    old = _perturbed(current, mask, seed=2) if off_policy else None
    ref = _perturbed(current, mask, seed=3) if beta else None
    inputs = {
        "prompt_ids": batch["prompts"],
        "prompt_mask": torch.ones_like(batch["prompts"]),
        "completion_ids": batch["completions"],
        "completion_mask": mask.long(),
        "advantages": batch["advantages"],
        "num_items_in_batch": mask.sum(),
    }
    if old is not None:
        inputs["old_per_token_logps"] = old
    if ref is not None:
        inputs["ref_per_token_logps"] = ref

    model.zero_grad()
    trl_loss = trainer._compute_loss(model, inputs)
    trl_loss.backward()
    trl_grads = _grads(model)

    # El lado del curso: los logits del mismo modelo (su forward normal, sin
    # la cabeza fusionada de TRL ni máscara de atención: con relleno a la
    # derecha y atención causal no cambia nada), la convención de TRL para
    # las log-probabilidades y la pérdida del curso
    log_probs = response_log_probs(
        model(batch["sequences"]).logits, batch["sequences"], PROMPT_LEN, mask
    )
    course_loss = course_loss_as_trl(
        log_probs,
        mask,
        batch["advantages"],
        trainer.loss_type,
        old_log_probs=old,
        ref_log_probs=ref,
        beta=beta,
        epsilon=EPSILON,
        epsilon_high=EPSILON_HIGH,
        max_completion_length=MAX_COMPLETION,
        use_bias_correction_kl=bias_correction,
    )
    course_loss.backward()
    course_grads = _grads(model)

    loss_diff = abs(trl_loss.item() - course_loss.item())
    grad_diff = max(
        (a - b).abs().max().item() for a, b in zip(trl_grads, course_grads, strict=True)
    )
    grad_scale = max(g.abs().max().item() for g in trl_grads)
    return trl_loss.item(), loss_diff, grad_diff, grad_scale, old, log_probs


@pytest.mark.parametrize("off_policy", [False, True], ids=["mu1", "off_policy"])
@pytest.mark.parametrize("beta", [0.0, BETA], ids=["beta0", "beta"])
@pytest.mark.parametrize("loss_type", TRL_LOSS_TYPES)
def test_course_loss_equals_trl_compute_loss(
    saved_model, batch, tmp_path, loss_type, beta, off_policy
):
    # β > 0: TRL con su valor por defecto (use_bias_correction_kl=True), y el
    # curso con la misma corrección, dicha explícitamente
    trainer = _trainer(saved_model, loss_type, beta, tmp_path)
    assert trainer.args.use_bias_correction_kl  # el valor por defecto de TRL
    _, loss_diff, grad_diff, scale, old, log_probs = _compare(
        trainer, batch, beta, off_policy, bias_correction=True
    )
    assert scale > 1e-3  # hay gradiente que comparar
    assert loss_diff <= LOSS_ATOL, (loss_type, beta, loss_diff)
    assert grad_diff <= GRAD_RTOL * scale, (loss_type, beta, grad_diff, scale)
    if off_policy:  # el recorte actúa por arriba y por abajo
        ratio = torch.exp(log_probs.detach() - old)[batch["mask"].bool()]
        assert (ratio > 1 + EPSILON_HIGH).any() and (ratio < 1 - EPSILON).any()


@pytest.mark.parametrize("loss_type", TRL_LOSS_TYPES)
def test_deepseekmath_kl_without_trl_bias_correction(
    saved_model, batch, tmp_path, loss_type
):
    """Con ``use_bias_correction_kl=False``, TRL da el objetivo del curso tal cual."""
    trainer = _trainer(
        saved_model, loss_type, BETA, tmp_path, use_bias_correction_kl=False
    )
    for off_policy in (False, True):
        _, loss_diff, grad_diff, scale, _, _ = _compare(
            trainer, batch, BETA, off_policy, bias_correction=False
        )
        assert loss_diff <= LOSS_ATOL, (loss_type, off_policy, loss_diff)
        assert grad_diff <= GRAD_RTOL * scale, (loss_type, off_policy, grad_diff)


def test_the_conventions_matter(saved_model, batch, tmp_path):
    """Las conversiones de arriba no sobran: sin ellas, la prueba fallaría."""
    trainer = _trainer(saved_model, "dr_grpo", BETA, tmp_path)
    # La corrección de TRL cambia el gradiente de la KL aun con μ = 1
    _, _, grad_diff, scale, _, _ = _compare(
        trainer, batch, BETA, off_policy=False, bias_correction=False
    )
    assert grad_diff > 10 * GRAD_RTOL * scale
    # Sin dividir por max_completion_length, dr_grpo es 26 veces más grande
    model = trainer.model
    mask = batch["mask"]
    log_probs = response_log_probs(
        model(batch["sequences"]).logits, batch["sequences"], PROMPT_LEN, mask
    )
    old = _perturbed(log_probs.detach(), mask, seed=2)
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
