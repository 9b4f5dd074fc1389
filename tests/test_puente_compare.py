"""El entrenador del curso y GRPOTrainer de TRL con el mismo presupuesto
(``helpers.puente.compare``), y las métricas de TRL con los nombres del curso."""

from __future__ import annotations

import math

import pytest
import torch

# helpers.puente primero: fija HF_HUB_OFFLINE antes de que trl importe
# huggingface_hub (que lo lee al importarse)
from helpers.puente import compare
from helpers.puente.compare import (
    CourseVerifierReward,
    course_metrics,
    run_course,
    run_trl,
    trl_recipe,
)

pytest.importorskip("trl")
pytest.importorskip("peft")

TINY = {"steps": 3, "prompts_per_step": 4, "group_size": 4, "eval_samples": 1}


def test_course_metrics_renames_and_keeps_the_steps():
    log_history = [
        {"step": 1, "reward": 0.5, "frac_reward_zero_std": 0.25, "entropy": 0.1,
         "clip_ratio/region_mean": 0.0, "completions/mean_length": 24.0, "loss": 0.0},
        # μ = 2: el segundo paso reutiliza las respuestas, sin recompensas nuevas
        {"step": 2, "entropy": 0.09, "clip_ratio/region_mean": 0.01, "loss": 0.0},
        {"train_runtime": 3.0, "step": 2},  # el resumen de train(): no es un paso
    ]  # fmt: skip
    history = course_metrics(log_history)
    assert history["step"] == [1.0, 2.0]
    assert history["mixed_groups"][0] == 0.75 and math.isnan(history["mixed_groups"][1])
    assert history["reward"][0] == 0.5 and math.isnan(history["reward"][1])
    assert history["clip_fraction"] == [0.0, 0.01]
    assert history["entropy"] == [0.1, 0.09] and history["length"][0] == 24.0
    assert "kl_ref" not in history  # β = 0: TRL no la registra


def test_course_verifier_reward_reads_the_ids():
    from helpers.tinylm.tokenizer import tokenizer

    reward = CourseVerifierReward()
    ids = [tokenizer.encode(t) for t in ("17×20+17×4=340+68=408.", "=408", "=407.")]
    # «=408» sin el punto quedó cortada: 0, como en el curso
    assert reward(completion_ids=ids, answer=["408"] * 3) == [1.0, 0.0, 0.0]
    assert reward(completion_ids=[torch.tensor(ids[0])], answer=[408]) == [1.0]
    assert reward.calls == [[1.0, 0.0, 0.0], [1.0]]


def test_trl_side_matches_the_course_hyperparameters():
    cfg = trl_recipe(seed=3, steps=10, prompts_per_step=32, group_size=8)
    assert cfg.per_device_train_batch_size == 256 and cfg.num_generations == 8
    assert cfg.learning_rate == compare.COURSE_LR and cfg.lora_r == 0
    assert (cfg.loss_type, cfg.scale_rewards, cfg.beta) == ("dr_grpo", "none", 0.0)
    assert cfg.lr_scheduler_type == "constant" and cfg.num_iterations == 1
    # TRL divide Dr. GRPO por B · 26 y el curso por B: el mismo recorte
    assert cfg.max_grad_norm * 26 == pytest.approx(compare.MAX_GRAD_NORM)
    lora = trl_recipe(lora_r=4)
    assert lora.learning_rate == compare.LORA_LR and lora.lora_alpha == 8


def test_trl_metrics_are_the_course_metrics_on_a_real_run():
    """Una ejecución corta de verdad, con μ = 2, recorte y β > 0 para que TRL
    registre todo: ``mixed_groups`` se recalcula de lo que pagó la recompensa."""
    reward = CourseVerifierReward()
    result = run_trl(seed=0, reward=reward, num_iterations=2, beta=0.04, **TINY)
    history = result.history
    assert history["step"] == [1.0, 2.0, 3.0]
    # Con μ = 2, TRL genera en los pasos 1 y 3 y reutiliza en el 2
    generated = [i for i, r in enumerate(history["reward"]) if not math.isnan(r)]
    assert generated == [0, 2] and len(reward.calls) == 2
    for i, paid in zip(generated, reward.calls, strict=True):
        groups = torch.tensor(paid).view(-1, TINY["group_size"])
        mixed = (groups.max(dim=-1).values > groups.min(dim=-1).values).float()
        assert history["mixed_groups"][i] == pytest.approx(mixed.mean().item())
        assert history["reward"][i] == pytest.approx(groups.mean().item())
    assert all(k >= 0 for k in history["kl_ref"])
    assert all(0 <= c <= 1 for c in history["clip_fraction"])
    assert all(e > 0 for e in history["entropy"])
    assert all(14 <= n <= 26 for n in history["length"] if not math.isnan(n))
    assert history["train_seconds"] == sorted(history["train_seconds"])
    # El registro
    assert result.trainer == "TRL" and result.sampled_answers == 3 * 4 * 4
    assert result.trainable_params == result.total_params == 103_104
    assert (
        0 <= result.heldout_accuracy <= 1 and 0 <= result.heldout_greedy_accuracy <= 1
    )
    assert result.train_seconds > 0 and result.peak_memory_mb >= 0


def test_course_side_and_lora_side():
    course = run_course(seed=0, **TINY)
    assert course.trainer == "curso" and course.sampled_answers == 48
    assert course.history["step"] == [1, 2, 3]
    assert set(course.history) >= {"reward", "mixed_groups", "train_seconds"}
    assert course.trainable_params == 103_104
    # Los dos lados parten del mismo sitio, medido con el mismo código
    lora = run_trl(seed=0, lora_r=4, **TINY)
    assert lora.trainer == "TRL + LoRA" and lora.learning_rate == compare.LORA_LR
    assert (lora.trainable_params, lora.total_params) == (2048, 105_152)
    assert lora.start_heldout_accuracy == course.start_heldout_accuracy
    assert "semilla 0" in lora.summary() and "2048 parámetros" in lora.summary()


def test_lora_training_moves_the_merged_weights(monkeypatch):
    """Lo que se evalúa con LoRA es el modelo con el adaptador fundido: tiene
    que ser distinto del de partida (si no, se mediría el modelo sin entrenar)."""
    from helpers.puente import convert
    from helpers.tinylm import load_pretrained

    seen = []
    original = convert.to_tinylm

    def spy(model):
        seen.append(original(model))
        return seen[-1]

    monkeypatch.setattr(convert, "to_tinylm", spy)
    run_trl(seed=0, lora_r=4, **TINY)
    (evaluated,) = seen
    start = load_pretrained().state_dict()
    qkv = "blocks.0.attn.qkv.weight"
    assert not torch.equal(evaluated.state_dict()[qkv], start[qkv])
    mlp = "blocks.0.mlp.0.weight"  # fuera de c_attn, LoRA no toca nada
    assert torch.equal(evaluated.state_dict()[mlp], start[mlp])
