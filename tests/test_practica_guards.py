"""Las entradas malas del módulo 11 (``helpers.practica.guards``): un error en
español que nombra el valor culpable, y la entrada buena pasa."""

from __future__ import annotations

import pytest
import torch

# helpers.puente primero: fija HF_HUB_OFFLINE antes de que trl se importe
import helpers.puente  # noqa: F401
from helpers.practica import guards
from helpers.practica.guards import GuardError

trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

# Palabras que solo tiene un mensaje en español
SPANISH = ("conjunto", "recompensa", "lote", "carpeta", "plantilla", "respuestas")


def _spanish(message: str) -> bool:
    return any(word in message for word in SPANISH)


def correctness_reward(completions, answer, **kwargs):
    return [1.0 for _ in completions]


def format_reward(completions, **kwargs):
    return [0.0 for _ in completions]


def _chat_dataset(**extra):
    rows = {"prompt": [[{"role": "user", "content": "17×24="}]]}
    rows.update({k: [v] for k, v in extra.items()})
    return datasets.Dataset.from_dict(rows)


# ---------------------------------------------------------------------------
# Columnas
# ---------------------------------------------------------------------------


def test_required_columns_read_the_signature():
    assert guards.required_columns(correctness_reward) == ["answer"]
    assert guards.required_columns(format_reward) == []  # solo **kwargs

    def with_default(completions, answer=None, **kwargs):
        return []

    def trl_only(prompts, completions, completion_ids, trainer_state, **kwargs):
        return []

    assert guards.required_columns(with_default) == []
    assert guards.required_columns(trl_only) == []

    class RewardObject:
        def __call__(self, completions, solution, **kwargs):
            return []

    assert guards.required_columns(RewardObject()) == ["solution"]


def test_missing_reward_column_names_it():
    data = _chat_dataset(solution="408")
    with pytest.raises(GuardError) as info:
        guards.check_reward_columns(data, [format_reward, correctness_reward])
    error = info.value
    assert error.kind == "columns" and error.value == ["answer"]
    message = str(error)
    assert _spanish(message)
    assert "correctness_reward" in message and "answer" in message
    assert "solution" in message  # las columnas que sí hay


def test_missing_prompt_column():
    data = datasets.Dataset.from_dict({"question": ["17×24="], "answer": ["408"]})
    with pytest.raises(GuardError, match="`prompt`") as info:
        guards.check_reward_columns(data, [format_reward])
    assert info.value.kind == "columns" and _spanish(str(info.value))


# ---------------------------------------------------------------------------
# Lotes
# ---------------------------------------------------------------------------


def test_batch_sizes_that_fit():
    assert guards.check_batch_sizes(8, 16) == 16
    assert guards.check_batch_sizes(4, 2, 2, world_size=2) == 8
    assert guards.check_batch_sizes(8, 4, generation_batch_size=32) == 32


@pytest.mark.parametrize(
    ("args", "batch"),
    [
        ((3, 8, 1, 1, None), "8"),
        ((8, 6, 1, 2, None), "12"),
        ((5, 4, 1, 1, 16), "16"),
    ],
)
def test_num_generations_that_does_not_divide(args, batch):
    with pytest.raises(GuardError) as info:
        guards.check_batch_sizes(*args)
    message = str(info.value)
    assert info.value.kind == "batch" and info.value.value == args[0]
    assert f"num_generations = {args[0]}" in message and f"= {batch}" in message
    assert _spanish(message)


def test_one_generation_is_not_a_group():
    with pytest.raises(GuardError, match="al menos 2"):
        guards.check_batch_sizes(1, 8)


def test_trl_rejects_in_english_and_we_explain_in_spanish():
    """TRL ya rechaza el lote: su mensaje es inglés; el nuestro lo explica y
    lo conserva como causa."""
    options = dict(output_dir="/tmp/x", use_cpu=True, report_to="none")
    with pytest.raises(ValueError, match="must be divisible by num_generations"):
        trl.GRPOConfig(per_device_train_batch_size=6, num_generations=4, **options)
    with pytest.raises(GuardError) as info:
        with guards.trl_errors_in_spanish():
            trl.GRPOConfig(per_device_train_batch_size=6, num_generations=4, **options)
    error = info.value
    assert error.kind == "batch" and "num_generations = 4" in str(error)
    assert "6 respuestas" in str(error) and _spanish(str(error))
    assert "must be divisible" in str(error.__cause__)
    # Un mensaje que no se reconoce se cita entero
    with pytest.raises(GuardError, match="rechaza.*cp_size") as info:
        with guards.trl_errors_in_spanish():
            raise ValueError("something about cp_size")
    assert info.value.kind == "trl_config"


def test_grpo_config_checked_again_and_for_a_world_size():
    """TRL valida al crear la configuración; un campo cambiado después, o
    otro número de procesos, se comprueba otra vez."""
    config = trl.GRPOConfig(
        output_dir="/tmp/x",
        per_device_train_batch_size=3,
        gradient_accumulation_steps=1,
        num_generations=3,
        use_cpu=True,
        bf16=False,
        report_to="none",
    )
    guards.check_grpo_config(config)  # 3 × 1 × 1 = 3
    config.num_generations = 6
    with pytest.raises(GuardError, match=r"generation_batch_size = 3"):
        guards.check_grpo_config(config)
    guards.check_grpo_config(config, world_size=2)  # 3 × 1 × 2 = 6
    with pytest.raises(GuardError, match=r"3 × 1 × 3 = 9"):
        guards.check_grpo_config(config, world_size=3)


# ---------------------------------------------------------------------------
# bf16
# ---------------------------------------------------------------------------


def test_bf16_on_a_cpu_without_it(monkeypatch):
    monkeypatch.setattr(guards, "cpu_supports_bf16", lambda: False)
    guards.check_bf16(False, use_cpu=True)
    with pytest.raises(GuardError) as info:
        guards.check_bf16(True, use_cpu=True)
    message = str(info.value)
    assert info.value.kind == "bf16" and "bf16 = True" in message
    assert torch.backends.cpu.get_cpu_capability() in message
    assert "CPU" in message and "float32" in message
    # GRPOConfig pone bf16=True si no se dice: en CPU, la trampa de verdad
    config = trl.GRPOConfig(output_dir="/tmp/x", use_cpu=True, report_to="none")
    assert config.bf16
    with pytest.raises(GuardError, match="bf16=True si no lo dices"):
        guards.check_grpo_config(config)


def test_bf16_on_a_cpu_with_it(monkeypatch):
    monkeypatch.setattr(guards, "cpu_supports_bf16", lambda: True)
    guards.check_bf16(True, use_cpu=True)


def test_cpu_detector_reads_torch(monkeypatch):
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert not guards.cpu_supports_bf16()
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
    assert guards.cpu_supports_bf16()


# ---------------------------------------------------------------------------
# Plantilla de chat y modelo
# ---------------------------------------------------------------------------


def test_chat_template_needed_for_conversations():
    from helpers.puente import make_tokenizer

    tokenizer = make_tokenizer()
    guards.check_chat_template(tokenizer, _chat_dataset())
    tokenizer.chat_template = None
    with pytest.raises(GuardError) as info:
        guards.check_chat_template(tokenizer, _chat_dataset())
    assert info.value.kind == "chat_template"
    assert "plantilla de chat" in str(info.value)
    # Enunciados de texto: no hace falta plantilla
    plain = datasets.Dataset.from_dict({"prompt": ["17×24="]})
    guards.check_chat_template(tokenizer, plain)


def test_model_path_that_does_not_exist(tmp_path):
    missing = tmp_path / "modelo"
    with pytest.raises(GuardError) as info:
        guards.check_model_path(missing)
    assert info.value.kind == "model_path" and info.value.value == str(missing)
    assert "No existe la carpeta" in str(info.value) and str(missing) in str(info.value)


def test_model_path_without_config(tmp_path):
    (tmp_path / "pesos.safetensors").write_bytes(b"")
    with pytest.raises(GuardError, match="config.json") as info:
        guards.check_model_path(tmp_path)
    assert str(tmp_path) in str(info.value)
    with pytest.raises(GuardError, match="config.json"):
        guards.check_model_path(tmp_path / "pesos.safetensors")


def test_hub_id_not_in_the_cache_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # una caché vacía
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    name = "Organizacion/modelo-que-no-hay"
    with pytest.raises(GuardError) as info:
        guards.check_model_path(name, offline=True)
    message = str(info.value)
    assert info.value.value == name and f"hf download {name}" in message
    assert guards.check_model_path(name, offline=False) == name  # se descargará


def test_good_input_passes(saved_model, monkeypatch):
    """Lo que usa la práctica: la carpeta del modelo del curso, su tokenizador
    con plantilla, enunciados de chat con «answer» y un lote que divide."""
    from helpers.puente import make_tokenizer

    monkeypatch.setattr(guards, "cpu_supports_bf16", lambda: False)
    assert guards.check_model_path(saved_model) == str(saved_model)
    data = _chat_dataset(answer="408")
    guards.check_reward_columns(data, [correctness_reward, format_reward])
    guards.check_chat_template(make_tokenizer(), data)
    config = trl.GRPOConfig(
        output_dir="/tmp/x",
        per_device_train_batch_size=8,
        num_generations=4,
        use_cpu=True,
        bf16=False,
        report_to="none",
    )
    guards.check_grpo_config(config)
    guards.check_grpo_config(config, world_size=2)
    with guards.trl_errors_in_spanish():
        pass
