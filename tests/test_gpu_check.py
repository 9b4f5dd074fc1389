"""``make gpu-check`` (``helpers.practica.gpu_check``): el camino sin GPU, la
estimación de memoria y las comprobaciones sobre un JSON de métricas.

El camino con GPU no se puede ejecutar aquí (no hay GPU): lo que se prueba
es lo que decide sobre sus resultados.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

# helpers.puente primero: fija HF_HUB_OFFLINE antes de que trl se importe
import helpers.puente  # noqa: F401
from helpers.practica import gpu_check
from tests.notebooks import REPO

pytest.importorskip("transformers")


def test_without_gpu_it_skips_with_exit_zero(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    output = tmp_path / "gpu.json"
    assert gpu_check.main(["--output", str(output)]) == 0
    assert "No hay GPU" in capsys.readouterr().out
    report = json.loads(output.read_text())
    assert report["status"] == "skipped" and "se salta" in report["reason"]


def test_without_gpu_from_the_command_line(tmp_path):
    """Como lo llama ``make gpu-check``: otro proceso, sin GPU visible."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1"}
    output = tmp_path / "gpu.json"
    result = subprocess.run(
        [sys.executable, "-m", "helpers.practica.gpu_check", "--output", str(output)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "[gpu-check] No hay GPU" in result.stdout
    assert json.loads(output.read_text())["status"] == "skipped"


def test_the_makefile_target_calls_it_with_the_venv():
    makefile = (REPO / "Makefile").read_text()
    assert "gpu-check: $(STAMP)" in makefile
    assert "$(PY) -m helpers.practica.gpu_check" in makefile
    assert "make gpu-check" in makefile  # en la ayuda


def test_parameter_count_of_docs_gpu_md(tmp_path):
    """Los 494 032 768 parámetros de Qwen2.5-0.5B-Instruct que cita
    ``docs/gpu.md``, contados de un config.json con sus medidas (sin pesos)."""
    from transformers import Qwen2Config

    Qwen2Config(
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=24,
        num_attention_heads=14,
        num_key_value_heads=2,
        vocab_size=151_936,
        tie_word_embeddings=True,
    ).save_pretrained(tmp_path)
    assert gpu_check.parameter_count(str(tmp_path)) == (494_032_768, 151_936)
    assert "494 032 768" in (REPO / "docs" / "gpu.md").read_text()


def test_parameter_count_matches_the_loaded_model(saved_model):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(saved_model)
    count, vocab = gpu_check.parameter_count(str(saved_model))
    assert count == sum(p.numel() for p in model.parameters())
    assert vocab == model.config.vocab_size


def test_memory_estimate_is_the_docs_sum():
    n, vocab, batch, length = 494_032_768, 151_936, 8, 700
    estimate = gpu_check.memory_estimate(n, vocab, batch, length, vllm_bytes=10)
    assert estimate["states"] == n * (4 + 4 + 8)  # pesos, gradientes, Adam
    assert estimate["logits"] == batch * length * vocab * (2 + 4)
    training = estimate["states"] + estimate["logits"]
    assert estimate["training"] == training
    assert estimate["budget"] == pytest.approx(training * 1.25 + 10, abs=1)
    # ≈ 7,9 GB de estados, como dice docs/gpu.md para el ajuste completo
    assert estimate["states"] / 1e9 == pytest.approx(7.9, abs=0.05)
    # LoRA: los congelados solo pesan sus 4 B
    lora = gpu_check.memory_estimate(n, vocab, batch, length, trainable_parameters=0)
    assert lora["states"] == n * 4


def test_longest_prompt_uses_the_chat_template(saved_model):
    from helpers.puente import make_tokenizer

    make_tokenizer().save_pretrained(saved_model)
    # La plantilla del curso no añade nada: «ab×cd=», 6 tokens
    assert gpu_check._longest_prompt(str(saved_model)) == 6


def _metrics(rewards, losses, zero_std=0.5, peak=1_000, budget=2_000):
    history = [
        {"loss": loss, "reward": r, "frac_reward_zero_std": zero_std}
        for r, loss in zip(rewards, losses, strict=True)
    ]
    return {
        "log_history": [*history, {"train_loss": 0.0}],
        "peak_memory_bytes": peak,
        "estimate": {"budget": budget},
    }


def _verdicts(metrics):
    return {c.name: c.passed for c in gpu_check.check_metrics(metrics)}


def test_checks_pass_on_a_good_run():
    assert _verdicts(_metrics([0.2, 0.3, 0.25], [0.0, 0.01, -0.02])) == {
        "loss_finite": True,
        "reward_moves": True,
        "memory_within_estimate": True,
    }


def test_checks_fail_where_they_should():
    assert not _verdicts(_metrics([0.2, 0.3], [0.0, float("nan")]))["loss_finite"]
    assert not _verdicts(_metrics([0.2, 0.3], [0.0, float("inf")]))["loss_finite"]
    assert not _verdicts({"log_history": []})["loss_finite"]
    # Recompensa quieta, o sin grupos con varianza
    assert not _verdicts(_metrics([0.5, 0.5, 0.5], [0, 0, 0]))["reward_moves"]
    stuck = _metrics([0.2, 0.3], [0, 0], zero_std=1.0)
    assert not _verdicts(stuck)["reward_moves"]
    assert not _verdicts(_metrics([0.2], [0.0]))["reward_moves"]
    # Memoria por encima de la estimación, o sin medir
    over = _metrics([0.2, 0.3], [0, 0], peak=2_001, budget=2_000)
    assert not _verdicts(over)["memory_within_estimate"]
    unknown = _metrics([0.2, 0.3], [0, 0], peak=None)
    assert not _verdicts(unknown)["memory_within_estimate"]
    details = {c.name: c.detail for c in gpu_check.check_metrics(over)}
    assert "frente a la estimación" in details["memory_within_estimate"]
