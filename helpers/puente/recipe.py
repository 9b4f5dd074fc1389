"""La receta que escala: GRPO con TRL, del modelo diminuto a un modelo de verdad.

Un solo programa y un archivo de configuración::

    python -m helpers.puente.recipe --config helpers/puente/recipe.toml
    python -m helpers.puente.recipe --config helpers/puente/recipe.toml \\
        --set max_steps=5 --set learning_rate=1e-4

- Con ``model = "course"`` entrena el modelo del ajuste supervisado del curso,
  convertido a ``GPT2LMHeadModel`` (``helpers.puente.convert``), en CPU, con
  los problemas de multiplicar del curso (``dataset = "course"``).
- Con ``--model`` apuntando a un modelo de verdad (una carpeta local o un id
  de Hugging Face, p. ej. ``Qwen/Qwen2.5-0.5B-Instruct``) y ``--dataset`` a un
  JSONL o parquet al estilo de GSM8K (columnas ``question`` y ``answer``, con
  la respuesta final tras «####»), es la misma receta en una GPU, con vLLM
  para generar (``use_vllm``), o en varias con ``accelerate launch``. Los
  comandos exactos y la memoria esperada están en ``docs/gpu.md``.
- En paralelo de datos, cada proceso genera y puntúa su parte del lote y
  los gradientes se promedian entre todos: ``torchrun --nproc_per_node 2 -m
  helpers.puente.recipe ...`` lo hace en CPU con dos procesos (gloo).

Los nombres de la configuración (``RecipeConfig``) son los de ``GRPOConfig``
de TRL 1.16 donde TRL tiene uno (``num_generations`` es la G del curso,
``per_device_train_batch_size`` cuenta **respuestas**, no enunciados, etc.);
los propios de la receta son ``model``, ``dataset``, ``lora_*``,
``instruction``, ``max_examples``, ``dtype``, ``num_threads`` y
``save_model``.

La recompensa es la de ``helpers.puente.rewards``: corrección con
``math-verify`` más formato, con los pesos ``reward_weights``. El modelo del
curso la lee de los ids (``TRLReward``: TRL quita del texto el «.» final,
que es su token de fin); un modelo de verdad, del texto (``TextReward``).

Al empezar, cada proceso dice quién es (rango y número de procesos) y, al
terminar, deja un resumen en ``output_dir/procesos/rank{r}.json``.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
import time
import tomllib
import types
import typing
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

# Nada de descargas salvo que se pida un modelo de fuera (ver main), y sin
# barras de progreso al guardar y cargar los pesos
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import torch  # noqa: E402

from .rewards import TRLReward, check_answer  # noqa: E402

COURSE = "course"
DEFAULT_CONFIG = Path(__file__).with_name("recipe.toml")
#: La instrucción que se añade a cada pregunta de un conjunto al estilo de
#: GSM8K (la que usan los modelos Qwen para matemáticas). El verificador
#: busca la respuesta en el último ``\\boxed{}``.
BOXED_INSTRUCTION = (
    "Please reason step by step, and put your final answer within \\boxed{}."
)


@dataclass
class RecipeConfig:
    """La configuración de la receta (``recipe.toml``).

    Los campos con nombre de TRL significan lo mismo que en ``GRPOConfig``;
    ``None`` se escribe omitiendo la clave en el TOML o con
    ``--set clave=none``.
    """

    # Qué se entrena y con qué
    model: str = COURSE  # "course" o una carpeta / id de Hugging Face
    dataset: str = COURSE  # "course" o un .jsonl / .parquet al estilo de GSM8K
    instruction: str = BOXED_INSTRUCTION  # tras cada pregunta (no con "course")
    max_examples: int = 0  # usar solo los primeros (0: todos)
    output_dir: str = "runs/puente"
    dtype: str = "float32"  # los pesos que se entrenan: float32, bfloat16, auto
    # GRPO (nombres de TRL)
    seed: int = 0
    max_steps: int = 40
    num_generations: int = 8  # G
    per_device_train_batch_size: int = 64  # respuestas por proceso y paso
    gradient_accumulation_steps: int = 1
    learning_rate: float = 3e-4
    lr_scheduler_type: str = "constant"
    warmup_steps: int = 0
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    loss_type: str = "dr_grpo"
    beta: float = 0.0
    epsilon: float = 0.2
    epsilon_high: float | None = None
    num_iterations: int = 1  # μ
    scale_rewards: str = "none"  # "group" (÷ σ del grupo), "batch" o "none"
    temperature: float = 1.0
    max_completion_length: int = 26
    reward_weights: list[float] = field(default_factory=lambda: [1.0, 0.1])
    # Generación con vLLM (en GPU)
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    vllm_gpu_memory_utilization: float = 0.3
    # Máquina
    use_cpu: bool = False
    bf16: bool = False
    gradient_checkpointing: bool = False
    num_threads: int = 0  # hilos de PyTorch por proceso (0: no tocar)
    logging_steps: int = 1
    report_to: list[str] = field(default_factory=list)
    save_model: bool = True  # guardar el modelo final en output_dir
    # LoRA (PEFT)
    lora_r: int = 0  # 0: ajuste completo
    lora_alpha: int = 8
    lora_dropout: float = 0.0
    lora_target_modules: list[str] = field(default_factory=lambda: ["c_attn"])

    @property
    def is_course_model(self) -> bool:
        return self.model == COURSE

    @property
    def is_course_dataset(self) -> bool:
        return self.dataset == COURSE


# ---------------------------------------------------------------------------
# La configuración: TOML y --set, con los tipos comprobados
# ---------------------------------------------------------------------------


def _check_type(name: str, value: Any) -> Any:
    """``value`` con el tipo del campo ``name`` (un int vale por un float), o
    un error que dice qué se esperaba."""
    hint = typing.get_type_hints(RecipeConfig)[name]
    options = (
        typing.get_args(hint)
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
        else (hint,)
    )
    for option in options:
        if option is type(None) and value is None:
            return None
        origin = typing.get_origin(option)
        if origin is list and isinstance(value, list):
            (item,) = typing.get_args(option)
            fits = (
                isinstance(v, item) or (item is float and _is_int(v)) for v in value
            )
            if all(fits):
                return [item(v) for v in value]
        elif option is float and (_is_int(value) or isinstance(value, float)):
            return float(value)
        elif option in (int, str, bool) and type(value) is option:
            return value
    raise ValueError(f"{name} debe ser {hint}; es {value!r}.")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_value(text: str) -> Any:
    """Un valor de ``--set`` como en TOML (``1e-4``, ``true``, ``[1.0, 0.5]``);
    si no es TOML válido, el texto tal cual; ``none`` es ``None``."""
    if text.strip().lower() in ("none", "null"):
        return None
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def make_config(values: dict[str, Any]) -> RecipeConfig:
    """Un ``RecipeConfig`` de un diccionario, rechazando claves y tipos malos."""
    known = {f.name for f in fields(RecipeConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(
            f"Claves desconocidas en la configuración: {unknown}. "
            f"Las válidas son: {sorted(known)}."
        )
    return RecipeConfig(
        **{name: _check_type(name, value) for name, value in values.items()}
    )


def load_config(
    path: str | Path | None = None, overrides: Sequence[str] = ()
) -> RecipeConfig:
    """La configuración de ``path`` (TOML) con los cambios ``clave=valor``."""
    values: dict[str, Any] = {}
    if path is not None:
        with open(path, "rb") as f:
            values = tomllib.load(f)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"--set espera clave=valor; llegó {item!r}.")
        values[key.strip()] = parse_value(text)
    return make_config(values)


# ---------------------------------------------------------------------------
# Modelo, tokenizador y datos
# ---------------------------------------------------------------------------


def load_model_and_tokenizer(cfg: RecipeConfig) -> tuple[Any, Any]:
    """El modelo causal y su tokenizador.

    - ``"course"``: el modelo del ajuste supervisado del paquete convertido a
      ``GPT2LMHeadModel`` y el tokenizador de 15 caracteres. Se guarda en una
      carpeta temporal y se carga de ahí (con atención «eager», la que da los
      mismos logits que el curso): así TRL puede crear el modelo de
      referencia desde esa carpeta si ``beta > 0``.
    - Otro: ``AutoModelForCausalLM.from_pretrained`` y ``AutoTokenizer`` de
      esa carpeta o id de Hugging Face, con el relleno a la izquierda (lo que
      espera ``generate()``).
    """
    if cfg.is_course_model:
        from transformers.utils import logging as hf_logging

        from .convert import load_gpt2, load_pretrained_gpt2
        from .tokenizer import make_tokenizer

        folder = tempfile.mkdtemp(prefix="tinylm_gpt2_")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # 28 tensores: nada que esperar
        try:
            load_pretrained_gpt2().save_pretrained(folder)
            model = load_gpt2(folder)
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        model.train()
        return _with_dtype(model, cfg.dtype), make_tokenizer()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtype = cfg.dtype if cfg.dtype == "auto" else getattr(torch, cfg.dtype)
    model = AutoModelForCausalLM.from_pretrained(cfg.model, dtype=dtype)
    tokenizer = AutoTokenizer.from_pretrained(cfg.model, padding_side="left")
    return model, tokenizer


def _with_dtype(model: Any, dtype: str) -> Any:
    return model if dtype in ("auto", "float32") else model.to(getattr(torch, dtype))


def gsm8k_gold(answer: str | int | float) -> str:
    """La respuesta final de una solución al estilo de GSM8K: lo que sigue a
    «####», sin separadores de miles (``"… #### 1,234"`` -> ``"1234"``). Sin
    «####», la respuesta entera (``"72"``, ``"\\\\boxed{72}"``)."""
    text = str(answer)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    return text.strip().replace(",", "")


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    if path.suffix == ".parquet":
        import pandas as pd

        return pd.read_parquet(path).to_dict(orient="records")
    raise ValueError(
        f"El conjunto de datos debe ser .jsonl o .parquet (o «{COURSE}»); es {path}."
    )


def load_dataset_for(cfg: RecipeConfig) -> Any:
    """El conjunto de entrenamiento como ``datasets.Dataset`` con las columnas
    que usa TRL: ``prompt`` y ``answer`` (la referencia del verificador).

    - ``"course"``: los problemas de GRPO del curso (``rl_problems()``, nunca
      los de evaluación); el enunciado es texto (``"17×24="``) y la
      referencia, el producto.
    - Un ``.jsonl`` o ``.parquet`` local con ``question`` y ``answer`` al
      estilo de GSM8K: el enunciado es una conversación de un mensaje
      (pregunta + ``instruction``), para que TRL le aplique la plantilla de
      chat del modelo, y la referencia, lo que sigue a «####». Las filas cuya
      referencia no se puede leer (``math-verify`` no saca nada) no darían
      señal: se quitan y se avisa de cuántas.
    """
    from datasets import Dataset

    if cfg.is_course_dataset:
        from helpers.tinylm import prompt_text, rl_problems

        problems = rl_problems()
        if cfg.max_examples:
            problems = problems[: cfg.max_examples]
        return Dataset.from_dict(
            {
                "prompt": [prompt_text(a, b) for a, b in problems],
                "answer": [str(a * b) for a, b in problems],
            }
        )
    path = Path(cfg.dataset)
    if not path.exists():
        raise FileNotFoundError(f"No existe el conjunto de datos {path}.")
    rows = _read_rows(path)
    if cfg.max_examples:
        rows = rows[: cfg.max_examples]
    missing = [k for k in ("question", "answer") if rows and k not in rows[0]]
    if missing or not rows:
        raise ValueError(
            f"{path} necesita filas con las columnas «question» y «answer»; "
            f"faltan {missing or 'todas las filas'}."
        )
    prompts, golds, dropped = [], [], 0
    for row in rows:
        gold = gsm8k_gold(row["answer"])
        if not check_answer("", gold).gold_ok:
            dropped += 1
            continue
        content = str(row["question"]).strip()
        if cfg.instruction:
            content = f"{content}\n{cfg.instruction}"
        prompts.append([{"role": "user", "content": content}])
        golds.append(gold)
    if dropped:
        warnings.warn(
            f"{dropped} de {len(rows)} filas de {path} tienen una respuesta de "
            "referencia que no se puede leer: se quitan (pagarían siempre 0).",
            stacklevel=2,
        )
    if not prompts:
        raise ValueError(f"Ninguna fila de {path} tiene una referencia legible.")
    return Dataset.from_dict({"prompt": prompts, "answer": golds})


class TextReward(TRLReward):
    """La recompensa de ``TRLReward`` leyendo el **texto** de las respuestas.

    Para modelos de verdad: su token de fin (``<|im_end|>``...) no forma
    parte de la respuesta, así que el texto que pasa TRL (sin tokens
    especiales) la tiene entera. Las respuestas de una conversación llegan
    como listas de mensajes: se lee el contenido del último.
    """

    def __call__(  # type: ignore[override]
        self,
        completions: Sequence[Any] | None = None,
        completion_ids: Sequence[Sequence[int]] | None = None,
        answer: Sequence[str | int | float] | None = None,
        **kwargs: object,
    ) -> list[float]:
        if completions is None or answer is None:
            raise ValueError(
                "Hacen falta completions (las pasa TRL) y la columna «answer»."
            )
        rewards = []
        for completion, gold in zip(completions, answer, strict=True):
            if isinstance(completion, list):  # una conversación
                completion = completion[-1]["content"]
            verdict = check_answer(str(completion), gold)
            if not verdict.gold_ok:
                self.unparsable_golds.append(str(gold))
                warnings.warn(
                    f"Respuesta de referencia ilegible ({gold!r}): se puntúa con 0.",
                    stacklevel=2,
                )
            rewards.append(getattr(verdict, self.kind))
        return rewards


def reward_functions(cfg: RecipeConfig) -> list[TRLReward]:
    """Corrección y formato, en el orden de ``reward_weights``."""
    kind: type[TRLReward] = TRLReward if cfg.is_course_model else TextReward
    return [kind("correctness"), kind("format")]


# ---------------------------------------------------------------------------
# El entrenador
# ---------------------------------------------------------------------------

#: Campos de ``RecipeConfig`` que pasan tal cual a ``trl.GRPOConfig``.
TRL_FIELDS: tuple[str, ...] = (
    "output_dir",
    "seed",
    "max_steps",
    "num_generations",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "learning_rate",
    "lr_scheduler_type",
    "warmup_steps",
    "weight_decay",
    "max_grad_norm",
    "loss_type",
    "beta",
    "epsilon",
    "epsilon_high",
    "num_iterations",
    "scale_rewards",
    "temperature",
    "max_completion_length",
    "reward_weights",
    "use_vllm",
    "vllm_mode",
    "vllm_gpu_memory_utilization",
    "use_cpu",
    "bf16",
    "gradient_checkpointing",
    "logging_steps",
    "report_to",
)


def grpo_config(cfg: RecipeConfig, tokenizer: Any = None, **extra: Any) -> Any:
    """El ``trl.GRPOConfig`` de la receta (``extra``: más opciones de TRL).

    Con el modelo del curso, la generación no puede escribir el relleno
    (``suppress_tokens``), como el muestreador del curso.
    """
    import trl

    options = {name: getattr(cfg, name) for name in TRL_FIELDS}
    if cfg.is_course_model and not cfg.use_vllm:
        pad = tokenizer.pad_token_id if tokenizer is not None else 0
        options["generation_kwargs"] = {"suppress_tokens": [pad]}
    options.update(
        save_strategy="no",
        disable_tqdm=True,
        report_to=cfg.report_to or "none",
        fp16=False,
        # Todos los parámetros que se entrenan reciben gradiente: DDP no tiene
        # que buscar los que no (y no avisa de que no los encontró)
        ddp_find_unused_parameters=False,
    )
    options.update(extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return trl.GRPOConfig(**options)


def lora_config(cfg: RecipeConfig) -> Any:
    """La ``peft.LoraConfig`` de la receta, o ``None`` si ``lora_r = 0``.

    Con el modelo del curso (GPT-2: capas ``Conv1D``, matriz entrada ×
    salida) hace falta ``fan_in_fan_out=True``.
    """
    if not cfg.lora_r:
        return None
    import peft

    targets: list[str] | str = cfg.lora_target_modules
    if targets == ["all-linear"]:
        targets = "all-linear"
    return peft.LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=targets,
        fan_in_fan_out=cfg.is_course_model,
        task_type="CAUSAL_LM",
    )


def build_trainer(
    cfg: RecipeConfig,
    reward_funcs: Sequence[Any] | None = None,
    train_dataset: Any = None,
    **extra: Any,
) -> Any:
    """Un ``trl.GRPOTrainer`` listo para ``train()``.

    Por defecto, con las recompensas de ``reward_functions(cfg)`` y el
    conjunto de ``load_dataset_for(cfg)``; ``extra`` va a ``GRPOConfig``.
    """
    import trl

    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    model, tokenizer = load_model_and_tokenizer(cfg)
    args = grpo_config(cfg, tokenizer, **extra)
    dataset = load_dataset_for(cfg) if train_dataset is None else train_dataset
    rewards = list(reward_funcs) if reward_funcs is not None else reward_functions(cfg)
    with warnings.catch_warnings():
        # Avisos de TRL y transformers sobre opciones de GPU o que cambiarán
        # en otra versión, no sobre la receta
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", FutureWarning)
        return trl.GRPOTrainer(
            model=model,
            reward_funcs=rewards,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=lora_config(cfg),
        )


# ---------------------------------------------------------------------------
# El programa
# ---------------------------------------------------------------------------


def process_info(trainer: Any = None) -> dict[str, Any]:
    """Quién es este proceso: rango y número de procesos, según el entorno
    (``RANK``, ``WORLD_SIZE``, los pone ``torchrun``), según
    ``torch.distributed`` y según el ``Accelerator`` del entrenador."""
    info: dict[str, Any] = {
        "env_rank": int(os.environ.get("RANK", 0)),
        "env_world_size": int(os.environ.get("WORLD_SIZE", 1)),
        "pid": os.getpid(),
    }
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        info.update(
            dist_rank=dist.get_rank(),
            dist_world_size=dist.get_world_size(),
            backend=str(dist.get_backend()),
        )
    if trainer is not None:
        accelerator = trainer.accelerator
        info.update(
            num_processes=accelerator.num_processes,
            process_index=accelerator.process_index,
            device=str(accelerator.device),
            distributed_type=str(accelerator.distributed_type),
        )
    return info


def _params(model: Any) -> list[torch.Tensor]:
    return [p.detach().float().cpu().clone() for p in model.parameters()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m helpers.puente.recipe",
        description="GRPO con TRL: el modelo del curso en CPU o uno de verdad en GPU.",
    )
    parser.add_argument(
        "--config", type=Path, default=DEFAULT_CONFIG, help="archivo TOML"
    )
    parser.add_argument("--model", help="«course», una carpeta o un id de HF")
    parser.add_argument("--dataset", help="«course» o un .jsonl / .parquet")
    parser.add_argument("--output-dir", help="dónde escribir (output_dir)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="clave=valor",
        help="cambiar un campo de la configuración (repetible)",
    )
    args = parser.parse_args(argv)
    overrides = list(args.set)
    for key in ("model", "dataset", "output_dir"):
        value = getattr(args, key)
        if value is not None:
            overrides.append(f"{key}={json.dumps(value)}")
    cfg = load_config(args.config, overrides)
    if not cfg.is_course_model and not Path(cfg.model).exists():
        # Un id de Hugging Face: aquí sí hay que descargar
        os.environ["HF_HUB_OFFLINE"] = "0"
        import huggingface_hub.constants as hub

        hub.HF_HUB_OFFLINE = False

    before = process_info()
    print(
        f"[receta] proceso {before['env_rank']} de {before['env_world_size']} "
        f"(pid {before['pid']}): modelo {cfg.model}, datos {cfg.dataset}",
        flush=True,
    )
    trainer = build_trainer(cfg)
    info = process_info(trainer)
    print(
        f"[receta] rango {info['process_index']} de {info['num_processes']} "
        f"procesos ({info['distributed_type']}, {info['device']}"
        + (f", {info['backend']}" if "backend" in info else "")
        + ")",
        flush=True,
    )
    start_params = _params(trainer.model)
    start = time.perf_counter()
    with warnings.catch_warnings():
        # TRL llama a un método que transformers 5 da por obsoleto
        warnings.simplefilter("ignore", FutureWarning)
        trainer.train()
    seconds = time.perf_counter() - start
    end_params = _params(trainer.model)
    change = sum(
        (a - b).pow(2).sum().item()
        for a, b in zip(start_params, end_params, strict=True)
    )
    logs = [e for e in trainer.state.log_history if "reward" in e]
    summary = {
        **process_info(trainer),
        "config": asdict(cfg),
        "steps": trainer.state.global_step,
        "train_seconds": seconds,
        "param_change_norm": change**0.5,
        "param_checksum": sum(p.double().sum().item() for p in end_params),
        "first_reward": logs[0]["reward"] if logs else None,
        "last_reward": logs[-1]["reward"] if logs else None,
        "log_history": trainer.state.log_history,
    }
    folder = Path(cfg.output_dir) / "procesos"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rank{info['process_index']}.json"
    path.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n")
    if cfg.save_model:
        trainer.save_model(cfg.output_dir)
    print(
        f"[receta] rango {info['process_index']}: {summary['steps']} pasos en "
        f"{seconds:.1f} s; recompensa {summary['first_reward']} → "
        f"{summary['last_reward']}; resumen en {path}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
