"""La receta que escala (``helpers.puente.recipe``): configuración, datos,
entrenamiento en CPU y en paralelo de datos con dos procesos (gloo).

Nada se descarga: el modelo es el del curso (convertido, o guardado en una
carpeta como si fuera uno de fuera) y el conjunto al estilo de GSM8K es un
JSONL diminuto que escribe la propia prueba.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import warnings

import pytest
import torch

# helpers.puente primero: fija HF_HUB_OFFLINE antes de que trl importe
# huggingface_hub (que lo lee al importarse)
from helpers.puente import recipe
from helpers.puente.recipe import (
    RecipeConfig,
    build_trainer,
    gsm8k_gold,
    load_config,
    load_dataset_for,
    main,
)
from tests.notebooks import REPO

trl = pytest.importorskip("trl")
pytest.importorskip("peft")
pytest.importorskip("datasets")

GPU_CONFIG = REPO / "helpers" / "puente" / "recipe_gpu.toml"


def _read_ranks(folder):
    return {
        int(p.stem.removeprefix("rank")): json.loads(p.read_text())
        for p in (folder / "procesos").glob("rank*.json")
    }


# ---------------------------------------------------------------------------
# La configuración
# ---------------------------------------------------------------------------


def test_config_files_load_with_their_types():
    cfg = load_config(recipe.DEFAULT_CONFIG)
    assert cfg.is_course_model and cfg.is_course_dataset
    assert cfg.use_cpu and not cfg.bf16 and cfg.lora_r == 0
    assert cfg.loss_type == "dr_grpo" and cfg.scale_rewards == "none"
    assert cfg.max_completion_length == 26
    gpu = load_config(GPU_CONFIG)
    assert gpu.model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert gpu.use_vllm and gpu.vllm_mode == "colocate" and gpu.bf16
    assert gpu.lora_target_modules == ["all-linear"]
    # Cada campo de los dos archivos está en RecipeConfig (si no, load_config
    # habría fallado) y lo que no dicen se queda como en RecipeConfig()
    assert load_config(None) == RecipeConfig()


def test_trl_names_exist_in_the_pinned_grpo_config():
    """Los nombres que la receta pasa a TRL son de trl.GRPOConfig 1.16."""
    names = {f.name for f in dataclasses.fields(trl.GRPOConfig)}
    assert set(recipe.TRL_FIELDS) <= names, set(recipe.TRL_FIELDS) - names
    for name in recipe.TRL_FIELDS:
        assert name in {f.name for f in dataclasses.fields(RecipeConfig)}
    # Y llegan con su valor: la configuración de TRL es la de la receta
    cfg = load_config(recipe.DEFAULT_CONFIG, ["epsilon_high=0.28", "beta=0.04"])
    args = recipe.grpo_config(cfg)
    for name in recipe.TRL_FIELDS:
        if name != "report_to":
            assert getattr(args, name) == getattr(cfg, name), name
    assert args.generation_kwargs == {"suppress_tokens": [0]}  # el relleno


def test_gpu_files_are_valid_for_trl_and_accelerate():
    """La configuración de GPU pasa la validación de trl.GRPOConfig (lotes
    divisibles por G, opciones de vLLM) y el YAML de DeepSpeed la de accelerate.
    En CPU: sin bf16 ni GPU, que aquí no hay."""
    from accelerate.commands.config.config_args import load_config_from_file

    cfg = load_config(GPU_CONFIG, ["use_cpu=true", "bf16=false"])
    args = recipe.grpo_config(cfg)
    assert args.use_vllm and args.vllm_mode == "colocate"
    assert args.generation_batch_size == 64 and args.num_generations == 8
    assert "generation_kwargs" not in {k for k, v in vars(args).items() if v}
    zero2 = load_config_from_file(str(REPO / "helpers/puente/accelerate_zero2.yaml"))
    assert zero2.distributed_type == "DEEPSPEED"
    assert zero2.deepspeed_config["zero_stage"] == 2 and not zero2.use_cpu


def test_overrides_are_parsed_and_checked():
    cfg = load_config(
        recipe.DEFAULT_CONFIG,
        [
            "learning_rate=1e-4",
            "max_steps=7",
            "use_vllm=true",
            "loss_type=dapo",
            "reward_weights=[1, 0.5]",
            "epsilon_high=0.28",
        ],
    )
    assert cfg.learning_rate == 1e-4 and cfg.max_steps == 7 and cfg.use_vllm
    assert cfg.loss_type == "dapo" and cfg.reward_weights == [1.0, 0.5]
    assert cfg.epsilon_high == 0.28
    assert load_config(None, ["epsilon_high=none"]).epsilon_high is None
    assert load_config(None, ["learning_rate=1"]).learning_rate == 1.0  # int → float
    with pytest.raises(ValueError, match="desconocidas.*lerning_rate"):
        load_config(None, ["lerning_rate=1e-4"])
    with pytest.raises(ValueError, match="max_steps"):
        load_config(None, ["max_steps=1.5"])
    with pytest.raises(ValueError, match="use_vllm"):
        load_config(None, ["use_vllm=1"])
    with pytest.raises(ValueError, match="clave=valor"):
        load_config(None, ["max_steps"])


# ---------------------------------------------------------------------------
# Los datos
# ---------------------------------------------------------------------------

GSM8K_ROWS = [
    {"question": "Ana tiene 3 cajas de 4 lápices. ¿Cuántos?", "answer": "12\n#### 12"},
    {"question": "¿Cuánto es 1000 + 234?", "answer": "Suma.\n#### 1,234"},
    {"question": "Un dato roto", "answer": "sin respuesta final #### N/A"},
    {"question": "Ya sin desarrollo", "answer": "72"},
]


def _write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    return path


def test_gsm8k_gold_reads_after_the_marks():
    assert gsm8k_gold("48/2 = <<48/2=24>>24\n#### 72") == "72"
    assert gsm8k_gold("#### 1,234") == "1234"
    assert gsm8k_gold(" 408 ") == "408"
    assert gsm8k_gold("\\boxed{408}") == "\\boxed{408}"


def test_gsm8k_jsonl_and_parquet(tmp_path):
    path = _write_jsonl(tmp_path / "mini.jsonl", GSM8K_ROWS)
    cfg = RecipeConfig(dataset=str(path))
    with pytest.warns(UserWarning, match="1 de 4 filas"):
        data = load_dataset_for(cfg)
    assert data["answer"] == ["12", "1234", "72"]  # la fila ilegible, fuera
    first = data["prompt"][0]
    assert first == [
        {
            "role": "user",
            "content": GSM8K_ROWS[0]["question"] + "\n" + recipe.BOXED_INSTRUCTION,
        }
    ]
    # El mismo conjunto en parquet da lo mismo; max_examples corta
    import pandas as pd

    pd.DataFrame(GSM8K_ROWS).to_parquet(tmp_path / "mini.parquet")
    cfg = RecipeConfig(dataset=str(tmp_path / "mini.parquet"), max_examples=2)
    assert load_dataset_for(cfg)["answer"] == ["12", "1234"]
    with pytest.raises(ValueError, match="question"):
        load_dataset_for(
            RecipeConfig(dataset=str(_write_jsonl(tmp_path / "x.jsonl", [{"q": 1}])))
        )
    (tmp_path / "mini.csv").write_text("question,answer\n")
    with pytest.raises(ValueError, match=".jsonl o .parquet"):
        load_dataset_for(RecipeConfig(dataset=str(tmp_path / "mini.csv")))
    with pytest.raises(FileNotFoundError, match="no_existe"):
        load_dataset_for(RecipeConfig(dataset=str(tmp_path / "no_existe.jsonl")))


def test_course_dataset_is_the_rl_problems():
    from helpers.tinylm import heldout_problems, prompt_text, rl_problems

    data = load_dataset_for(RecipeConfig())
    problems = rl_problems()
    assert len(data) == len(problems)
    assert data["prompt"][0] == prompt_text(*problems[0])
    assert data["answer"][0] == str(problems[0][0] * problems[0][1])
    held = {prompt_text(a, b) for a, b in heldout_problems()}
    assert not held & set(data["prompt"])  # nunca los de evaluación


# ---------------------------------------------------------------------------
# Entrenar
# ---------------------------------------------------------------------------


def test_recipe_trains_the_course_model_as_is(tmp_path):
    from helpers.puente import load_gpt2, load_pretrained_gpt2

    argv = [
        "--config",
        str(recipe.DEFAULT_CONFIG),
        "--output-dir",
        str(tmp_path),
        "--set",
        "max_steps=3",
        "--set",
        "per_device_train_batch_size=16",
    ]
    assert main(argv) == 0
    (summary,) = _read_ranks(tmp_path).values()
    assert summary["env_world_size"] == summary["num_processes"] == 1
    assert summary["steps"] == 3 and summary["param_change_norm"] > 0
    logs = [e for e in summary["log_history"] if "reward" in e]
    assert len(logs) == 3
    for entry in logs:
        for key in ("reward", "frac_reward_zero_std", "entropy", "rewards/format/mean"):
            assert entry[key] is not None, key
        # TRLReward lee los ids: el «.» final está, el formato paga
        assert entry["rewards/format/mean"] > 0.5
    # El modelo final, guardado con save_pretrained, se carga y es otro
    trained = load_gpt2(tmp_path)
    start = load_pretrained_gpt2()
    ids = torch.tensor([[2, 8, 11, 3, 5, 13]])  # «17×24=»
    with torch.no_grad():
        assert not torch.equal(trained(ids).logits, start(ids).logits)


def test_a_real_model_folder_uses_the_text_rewards(saved_model, tmp_path):
    """``--model`` con una carpeta: AutoModelForCausalLM, AutoTokenizer y las
    recompensas del texto. El modelo del curso como «modelo de fuera»: su fin
    («.») es un token especial y TRL lo quita del texto, así que el formato
    «=N.» nunca paga, aunque la corrección (math-verify, la última cifra) sí."""
    from helpers.puente import make_tokenizer
    from helpers.tinylm import prompt_text, rl_problems

    make_tokenizer().save_pretrained(saved_model)
    problems = rl_problems()[:8]
    path = _write_jsonl(
        tmp_path / "mult.jsonl",
        [
            {"question": prompt_text(a, b), "answer": f"… #### {a * b}"}
            for a, b in problems
        ],
    )
    cfg = RecipeConfig(
        model=str(saved_model),
        dataset=str(path),
        instruction="",  # fuera del alfabeto de 15 caracteres
        output_dir=str(tmp_path / "out"),
        max_steps=2,
        num_generations=4,
        per_device_train_batch_size=8,
        use_cpu=True,
        num_threads=1,
    )
    trainer = build_trainer(cfg)
    assert type(trainer.model).__name__ == "GPT2LMHeadModel"
    assert all(isinstance(f, recipe.TextReward) for f in trainer.reward_funcs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.train()
    logs = [e for e in trainer.state.log_history if "reward" in e]
    assert len(logs) == 2
    assert all(e["rewards/format/mean"] == 0.0 for e in logs)
    assert sum(e["rewards/correctness/mean"] for e in logs) > 0.5


def test_lora_from_the_recipe(tmp_path):
    cfg = load_config(
        recipe.DEFAULT_CONFIG,
        [f"output_dir={json.dumps(str(tmp_path))}", "lora_r=4", "max_steps=1"],
    )
    trainer = build_trainer(cfg)
    trainable, total = trainer.model.get_nb_trainable_parameters()
    assert (trainable, total) == (2048, 105_152)
    assert trainer.model.peft_config["default"].fan_in_fan_out


def test_two_processes_with_gloo(tmp_path):
    """Paralelo de datos de verdad: dos procesos (torchrun) que se ven.

    Cada proceso escribe quién es; los dos dicen 2 según el entorno, según
    ``torch.distributed`` (gloo) y según el ``Accelerator`` de TRL, y acaban
    con los mismos pesos (DDP promedia los gradientes), distintos de los del
    principio.
    """
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "helpers.puente.recipe",
        "--output-dir",
        str(tmp_path),
        "--set",
        "max_steps=2",
        "--set",
        "per_device_train_batch_size=8",
        "--set",
        "num_generations=4",
        "--set",
        "save_model=false",
    ]
    result = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = _read_ranks(tmp_path)
    assert sorted(ranks) == [0, 1], result.stdout
    for rank, info in ranks.items():
        assert info["env_rank"] == info["dist_rank"] == info["process_index"] == rank
        assert info["env_world_size"] == info["dist_world_size"] == 2
        assert info["num_processes"] == 2
        assert info["backend"] == "gloo"
        assert info["steps"] == 2 and info["param_change_norm"] > 0
    assert ranks[0]["pid"] != ranks[1]["pid"]
    assert ranks[0]["param_checksum"] == ranks[1]["param_checksum"]
    # Cada proceso dice al empezar quién es
    assert "rango 0 de 2 procesos" in result.stdout
    assert "rango 1 de 2 procesos" in result.stdout
