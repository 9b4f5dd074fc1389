"""TRL y PEFT con el modelo del curso, en CPU y en pocos segundos.

- **LoRA** (PEFT) sobre ``c_attn``: va con ``fan_in_fan_out=True`` porque
  GPT-2 guarda esa capa como ``Conv1D`` (matriz entrada × salida); sin él,
  PEFT 0.21 lo corrige y avisa.
  Con r = 4 entrena 2 × 4 × (64 + 192) = 2048 parámetros.
- **Un entrenamiento corto con ``GRPOTrainer``**, con lo que necesita en CPU:
  ``use_cpu=True``, ``bf16=False`` (con bf16 las log-probabilidades se
  mueven), el relleno prohibido al generar (``suppress_tokens``),
  ``max_completion_length`` ≥ 26 (la respuesta más larga) y una recompensa
  que lee ``completion_ids`` (``TRLReward``). Se comprueba además que
  ``frac_reward_zero_std`` de TRL es 1 − ``mixed_groups`` del curso.
"""

from __future__ import annotations

import random
import warnings

import pytest
import torch

from helpers.puente import TRLReward, load_gpt2, make_tokenizer
from helpers.tinylm import MAX_NEW_TOKENS, load_pretrained, prompt_text, rl_problems

peft = pytest.importorskip("peft")
trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

G = 4


def _lora_config(fan_in_fan_out: bool = True):
    return peft.LoraConfig(
        r=4,
        lora_alpha=8,
        lora_dropout=0.0,
        target_modules=["c_attn"],
        fan_in_fan_out=fan_in_fan_out,
    )


def test_lora_on_c_attn(saved_model):
    base = load_gpt2(saved_model)
    total_base = sum(p.numel() for p in base.parameters())
    assert total_base == load_pretrained().num_params() == 103_104
    ids = torch.tensor([[2, 8, 11, 3, 5, 13]])  # «17×24=»
    with torch.no_grad():
        before = base(ids).logits
    model = peft.get_peft_model(base, _lora_config())
    trainable, total = model.get_nb_trainable_parameters()
    assert (trainable, total) == (2048, 105_152)
    # B empieza en 0: al principio el adaptador no cambia nada
    with torch.no_grad():
        assert torch.equal(model(ids).logits, before)
    # Sin fan_in_fan_out, PEFT lo corrige y avisa: la matriz está traspuesta
    with pytest.warns(UserWarning, match="fan_in_fan_out"):
        peft.get_peft_model(load_gpt2(saved_model), _lora_config(False))


class _RecordingReward(TRLReward):
    """Una recompensa de ``TRLReward`` que apunta lo que paga en cada llamada."""

    def __init__(self, kind) -> None:
        super().__init__(kind)
        self.calls: list[list[float]] = []

    def __call__(self, **kwargs):
        rewards = super().__call__(**kwargs)
        self.calls.append(rewards)
        return rewards


def test_grpo_trainer_runs_on_cpu(saved_model, tmp_path):
    problems = random.Random(0).sample(rl_problems(), 8)
    dataset = datasets.Dataset.from_dict(
        {
            "prompt": [prompt_text(a, b) for a, b in problems],
            "answer": [str(a * b) for a, b in problems],
        }
    )
    hf_tokenizer = make_tokenizer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        args = trl.GRPOConfig(
            output_dir=str(tmp_path),
            use_cpu=True,
            bf16=False,
            seed=0,
            max_steps=3,
            per_device_train_batch_size=2 * G,  # 2 enunciados por paso
            num_generations=G,
            max_completion_length=MAX_NEW_TOKENS,
            generation_kwargs={"suppress_tokens": [hf_tokenizer.pad_token_id]},
            loss_type="dr_grpo",
            scale_rewards="none",  # Dr. GRPO: sin dividir por la desviación
            learning_rate=3e-4,
            logging_steps=1,
            save_strategy="no",
            report_to=[],
            disable_tqdm=True,
        )
    correctness, fmt = _RecordingReward("correctness"), _RecordingReward("format")
    model = load_gpt2(saved_model)
    start = [p.detach().clone() for p in model.parameters()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = trl.GRPOTrainer(
            model=model,
            reward_funcs=[correctness, fmt],
            args=args,
            train_dataset=dataset,
            processing_class=hf_tokenizer,
        )
        trainer.train()

    logs = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert len(logs) == len(correctness.calls) == len(fmt.calls) == 3
    assert not correctness.unparsable_golds
    for entry, right, formatted in zip(logs, correctness.calls, fmt.calls, strict=True):
        # TRL suma las funciones de recompensa (pesos 1 por defecto)
        rewards = torch.tensor(right) + torch.tensor(formatted)
        assert entry["reward"] == pytest.approx(rewards.mean().item(), abs=1e-6)
        # El formato «=N.» necesita el «.» final, que TRL quita del texto: si
        # la recompensa leyera el texto, pagaría 0. Con los ids, el modelo del
        # SFT casi siempre lo escribe
        assert entry["rewards/format/mean"] > 0.5
        # Cada respuesta termina en «.» dentro de las 26 posiciones
        assert entry["completions/clipped_ratio"] == 0.0
        # frac_reward_zero_std = 1 − mixed_groups (grupos con recompensas
        # distintas; el curso los cuenta con 0/1, aquí con la suma)
        groups = rewards.view(-1, G)
        mixed = (groups.max(dim=-1).values > groups.min(dim=-1).values).float()
        assert entry["frac_reward_zero_std"] == pytest.approx(1 - mixed.mean().item())
        assert "entropy" in entry and "clip_ratio/region_mean" in entry
    # Entrenó de verdad: los pesos se movieron
    moved = [
        not torch.equal(a, b)
        for a, b in zip(start, trainer.model.parameters(), strict=True)
    ]
    assert any(moved)
