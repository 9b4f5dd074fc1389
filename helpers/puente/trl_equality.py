"""La pérdida de TRL y la del curso, calculadas sobre el mismo lote.

Sobre un lote fijo (respuestas muestreadas del modelo del SFT, ventajas de
grupo, log-probabilidades «antiguas» y de referencia hechas a mano) se llama
al código de TRL, ``GRPOTrainer._compute_loss`` (privado: por eso TRL va
fijado en pyproject), y a la pérdida del curso
(``helpers.tinylm.grpo.grpo_objective_loss`` a través de
``course_loss_as_trl``), y se comparan el valor y el gradiente. Lo usan
``tests/test_puente_trl_loss.py`` (con tolerancias) y el cuaderno 09 (la
tabla).

Donde las convenciones difieren, el lado del curso adopta la de TRL, a la
vista (ver ``losses.py``): el logit del relleno no se prohíbe al calcular
las log-probabilidades, ``dr_grpo`` se divide además por
``max_completion_length`` y, con β > 0, la corrección de la KL de TRL
(``use_bias_correction_kl``) se aplica o no en los dos lados a la vez.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import torch

from helpers.tinylm import (
    MAX_NEW_TOKENS,
    PROMPT_LEN,
    encode_prompts,
    group_advantages,
    load_pretrained,
    rewards_for,
    sample,
)

from .convert import load_gpt2
from .losses import course_loss_as_trl, response_log_probs
from .rewards import TRLReward
from .tokenizer import make_tokenizer

GROUP_SIZE = 4  # G: respuestas por enunciado
# Respuestas de 21, 22, 24 y 25 caracteres: las normalizaciones difieren
EQUALITY_PROBLEMS: tuple[tuple[int, int], ...] = (
    (10, 10),
    (10, 19),
    (21, 81),
    (45, 58),
)
EPSILON, EPSILON_HIGH = 0.2, 0.28  # recorte asimétrico: se prueban los dos topes
BETA = 0.04


def equality_batch(seed: int = 0) -> dict[str, torch.Tensor]:
    """Un lote fijo: G = 4 respuestas a T = 1 por enunciado, rellenadas a 26.

    Las ventajas son las de grupo (÷σ) de las recompensas más un poco de
    ruido fijo, para que ninguna valga 0 (también en los grupos de todo
    aciertos): así el gradiente de cada respuesta cuenta en la comparación.
    Se muestrea una vez por proceso; cada llamada devuelve copias.
    """
    return {key: value.clone() for key, value in _equality_batch(seed).items()}


@cache
def _equality_batch(seed: int) -> dict[str, torch.Tensor]:
    problems = list(EQUALITY_PROBLEMS)
    prompts = encode_prompts(problems).repeat_interleave(GROUP_SIZE, dim=0)
    samples = sample(
        load_pretrained(), prompts, generator=torch.Generator().manual_seed(seed)
    )
    repeated = [p for p in problems for _ in range(GROUP_SIZE)]
    rewards = rewards_for(samples.completions, repeated)
    n = len(problems)
    noise = 0.1 * torch.randn(
        n, GROUP_SIZE, generator=torch.Generator().manual_seed(seed + 1)
    )
    advantages = group_advantages(
        rewards.view(n, GROUP_SIZE) + noise, std_normalize=True
    ).view(-1)
    return {
        "prompts": prompts,
        "sequences": samples.sequences,
        "completions": samples.completions,
        "mask": samples.mask,
        "advantages": advantages,
    }


def make_trl_trainer(
    model_path: str | Path,
    loss_type: str,
    beta: float,
    output_dir: str | Path,
    **extra: object,
):
    """Un ``GRPOTrainer`` de verdad sobre el modelo guardado, en CPU y float32.

    No entrena: sirve para llamar a su ``_compute_loss`` sobre un lote hecho
    a mano (con un micro-lote: ``current_gradient_accumulation_steps = 1``).
    ``extra`` pasa más opciones a ``GRPOConfig`` (p. ej.
    ``use_bias_correction_kl=False``).
    """
    import datasets
    import trl

    with warnings.catch_warnings():  # avisos de obsolescencia de transformers
        warnings.simplefilter("ignore", FutureWarning)
        args = trl.GRPOConfig(
            output_dir=str(output_dir),
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=GROUP_SIZE * len(EQUALITY_PROBLEMS),
            num_generations=GROUP_SIZE,
            max_completion_length=MAX_NEW_TOKENS,
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
            model=load_gpt2(model_path),
            reward_funcs=[TRLReward("correctness")],
            args=args,
            train_dataset=dataset,
            processing_class=make_tokenizer(),
        )
    trainer.model.train()
    # Lo fija el bucle de entrenamiento; aquí no hay bucle: un micro-lote
    trainer.current_gradient_accumulation_steps = 1
    return trainer


def perturbed(log_probs: torch.Tensor, mask: torch.Tensor, seed: int) -> torch.Tensor:
    """Log-probabilidades «de otra política»: las dadas más ruido fijo."""
    noise = 0.3 * torch.randn(
        log_probs.shape, generator=torch.Generator().manual_seed(seed)
    )
    return (log_probs + noise) * mask


@dataclass
class Comparison:
    """Una comparación de ``compare_with_trl``."""

    loss_type: str
    beta: float
    off_policy: bool  # False: μ = 1 (cociente 1); True: π_old ≠ π_θ (*off-policy*)
    bias_correction: bool  # use_bias_correction_kl en los dos lados
    trl_loss: float
    loss_diff: float  # |pérdida_TRL − pérdida_curso|
    grad_diff: float  # max |∇TRL − ∇curso| sobre todos los parámetros
    grad_scale: float  # max |∇TRL|
    clipped_low: bool  # algún token con r < 1 − ε
    clipped_high: bool  # algún token con r > 1 + ε_high

    @property
    def relative_grad_diff(self) -> float:
        return self.grad_diff / self.grad_scale


def _grads(model: torch.nn.Module) -> list[torch.Tensor]:
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return grads


def compare_with_trl(
    trainer,
    batch: dict[str, torch.Tensor],
    off_policy: bool,
    bias_correction: bool | None = None,
) -> Comparison:
    """Pérdida y gradiente de TRL y del curso sobre el mismo modelo y lote.

    ``bias_correction`` es lo que el lado del curso hace con la KL (por
    defecto, lo mismo que ``trainer.args.use_bias_correction_kl``).
    """
    model = trainer.model
    beta = trainer.beta
    if bias_correction is None:
        bias_correction = bool(trainer.args.use_bias_correction_kl)
    mask = batch["mask"]
    sequences = batch["sequences"]
    with torch.no_grad():
        current = response_log_probs(
            model(sequences).logits, sequences, PROMPT_LEN, mask
        )
    old = perturbed(current, mask, seed=2) if off_policy else None
    ref = perturbed(current, mask, seed=3) if beta else None
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
    # máscara de atención: con relleno a la derecha y atención causal no
    # cambia nada) y la pérdida del curso
    log_probs = response_log_probs(model(sequences).logits, sequences, PROMPT_LEN, mask)
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
        max_completion_length=MAX_NEW_TOKENS,
        use_bias_correction_kl=bias_correction,
    )
    course_loss.backward()
    course_grads = _grads(model)

    grad_diff = max(
        (a - b).abs().max().item() for a, b in zip(trl_grads, course_grads, strict=True)
    )
    ratio = torch.exp(log_probs.detach() - (old if old is not None else current))
    ratio = ratio[mask.bool()]
    return Comparison(
        loss_type=trainer.loss_type,
        beta=beta,
        off_policy=off_policy,
        bias_correction=bias_correction,
        trl_loss=trl_loss.item(),
        loss_diff=abs(trl_loss.item() - course_loss.item()),
        grad_diff=grad_diff,
        grad_scale=max(g.abs().max().item() for g in trl_grads),
        clipped_low=bool((ratio < 1 - EPSILON).any()),
        clipped_high=bool((ratio > 1 + EPSILON_HIGH).any()),
    )


def equality_table(
    model_path: str | Path,
    output_dir: str | Path,
    loss_types: tuple[str, ...] = ("grpo", "dr_grpo", "dapo", "bnpo"),
    betas: tuple[float, ...] = (0.0, BETA),
) -> list[Comparison]:
    """Las comparaciones de cada ``loss_type`` y β, con μ = 1 y *off-policy*.

    TRL va con sus valores por defecto (``use_bias_correction_kl=True``) y el
    curso con la misma corrección de la KL, dicha explícitamente.
    """
    batch = equality_batch()
    rows = []
    for loss_type in loss_types:
        for beta in betas:
            trainer = make_trl_trainer(model_path, loss_type, beta, output_dir)
            for off_policy in (False, True):
                rows.append(compare_with_trl(trainer, batch, off_policy))
    return rows


def trl_defaults(names: tuple[str, ...]) -> dict[str, object]:
    """Los valores por defecto de ``trl.GRPOConfig`` (la versión instalada)."""
    import trl

    fields = {field.name: field for field in dataclasses.fields(trl.GRPOConfig)}
    defaults: dict[str, object] = {}
    for name in names:
        field = fields[name]
        if field.default is not dataclasses.MISSING:
            defaults[name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            defaults[name] = field.default_factory()
        else:
            defaults[name] = None
    return defaults


@dataclass
class Accumulation:
    """Un ``loss_type`` de TRL acumulado en micro-lotes (``accumulation_table``).

    Las dos diferencias son relativas (max |Δ∇| / max |∇ de TRL|), contra el
    gradiente de la media de los tokens de todo el lote (``to_batch_mean``) y
    contra el de la media de las medias de los micro-lotes
    (``to_mean_of_means``, el error clásico del cuaderno 09, §2.4).
    """

    loss_type: str
    microbatches: int
    microbatch_tokens: list[int]
    to_batch_mean: float
    to_mean_of_means: float


def accumulation_table(
    model_path: str | Path,
    output_dir: str | Path,
    loss_types: tuple[str, ...] = ("bnpo", "dapo"),
    microbatches: int = 2,
) -> list[Accumulation]:
    """``_compute_loss`` de TRL con acumulación, como lo llama su bucle.

    El lote fijo de ``equality_batch`` (16 respuestas) se parte en
    ``microbatches`` micro-lotes de filas seguidas, con
    ``gradient_accumulation_steps = microbatches`` (y, por defecto en TRL,
    ``steps_per_generation`` igual): cada micro-lote hace su ``backward`` y
    los gradientes se suman, con ``num_items_in_batch`` = los tokens de todo
    el lote, lo que TRL le pasa. Con μ = 1 y β = 0, el gradiente de TRL es el
    de −A · log π normalizado como diga ``loss_type``; se compara con las dos
    normalizaciones del curso que pueden ser.
    """
    batch = equality_batch()
    trainer = make_trl_trainer(
        model_path,
        loss_types[0],
        0.0,
        output_dir,
        gradient_accumulation_steps=microbatches,
    )
    # Lo que fija el bucle de TRL en cada paso con acumulación
    trainer.current_gradient_accumulation_steps = microbatches
    model = trainer.model
    mask, sequences = batch["mask"], batch["sequences"]
    advantages = batch["advantages"]
    chunks = torch.arange(len(mask)).chunk(microbatches)

    def course_gradient(mean_of_means: bool) -> list[torch.Tensor]:
        log_probs = response_log_probs(
            model(sequences).logits, sequences, PROMPT_LEN, mask
        )
        per_token = -advantages[:, None] * log_probs
        if mean_of_means:
            loss = sum(per_token[c].sum() / mask[c].sum() for c in chunks)
            loss = loss / microbatches
        else:
            loss = per_token.sum() / mask.sum()
        model.zero_grad()
        loss.backward()
        return _grads(model)

    batch_mean, mean_of_means = course_gradient(False), course_gradient(True)
    rows = []
    for loss_type in loss_types:
        trainer.loss_type = loss_type
        model.zero_grad()
        for c in chunks:
            inputs = {
                "prompt_ids": batch["prompts"][c],
                "prompt_mask": torch.ones_like(batch["prompts"][c]),
                "completion_ids": batch["completions"][c],
                "completion_mask": mask[c].long(),
                "advantages": advantages[c],
                "num_items_in_batch": mask.sum(),
            }
            trainer._compute_loss(model, inputs).backward()
        grads = _grads(model)
        scale = max(g.abs().max().item() for g in grads)

        def gap(other: list[torch.Tensor], grads=grads, scale=scale) -> float:
            pairs = zip(grads, other, strict=True)
            return max((a - b).abs().max().item() for a, b in pairs) / scale

        rows.append(
            Accumulation(
                loss_type=loss_type,
                microbatches=microbatches,
                microbatch_tokens=[int(mask[c].sum()) for c in chunks],
                to_batch_mean=gap(batch_mean),
                to_mean_of_means=gap(mean_of_means),
            )
        )
    return rows
