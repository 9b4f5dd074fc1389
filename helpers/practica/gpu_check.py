"""``make gpu-check``: el guion del ejercicio 3 en una GPU, de principio a fin.

::

    python -m helpers.practica.gpu_check [--model ID_O_CARPETA] [--steps N] \\
        [--output ARCHIVO.json]

Con una GPU de CUDA, entrena unos pasos de GRPO con las funciones del
cuaderno (``helpers.practica.launch``: las de la solución del módulo 11 o, si
aún no está, las del cuaderno de prueba con la respuesta correcta) sobre un
modelo de chat pequeño de verdad (por omisión ``Qwen/Qwen2.5-0.5B-Instruct``,
que tiene que estar ya descargado), con vLLM si se puede importar
(``use_vllm=True, vllm_mode="colocate"``) y sin él si no. Escribe un JSON con
las métricas registradas y la memoria, y comprueba tres cosas:

1. **el loss es finito** en cada paso registrado;
2. **la recompensa se mueve**: la media de la recompensa por paso no es la
   misma en todos los pasos (diferencia mayor que ``REWARD_MOVE``) y algún
   paso tiene grupos con varianza (``frac_reward_zero_std < 1``). Es la
   señal de que hay gradiente, no de que el modelo mejore: en pocos pasos
   eso no se puede afirmar;
3. **la memoria cabe en la estimación** de ``docs/gpu.md``, calculada con el
   número de parámetros del modelo (``memory_estimate``).

Sin GPU, lo dice en español, escribe un JSON con ``"status": "skipped"`` y
sale con código 0: ``make gpu-check`` no falla en una máquina sin GPU (ni en
CI). Códigos de salida: 0 si pasa o se salta, 1 si una comprobación falla, 2
si no se puede empezar (falta el modelo, el cuaderno o la entrada es mala).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# launch primero: fija HF_HUB_OFFLINE antes de que se importe huggingface_hub
from . import guards, launch
from .guards import GuardError

DEFAULT_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
DEFAULT_OUTPUT = Path(".artifacts/gpu_check/gpu_check.json")
SOLUTION_NOTEBOOK = Path("solutions/11_practica/11_practica.ipynb")
FIXTURE_NOTEBOOK = Path("tests/data/practica_script.ipynb")
#: Bytes por parámetro entrenable (``docs/gpu.md``): pesos en float32 (4),
#: gradientes (4) y los dos momentos de Adam (8).
BYTES_PER_PARAMETER = 16
#: Bytes por valor de los logits: en bf16 (2) y otra vez en float32 (4) para
#: el log-softmax.
BYTES_PER_LOGIT = 2 + 4
#: Holgura sobre la cuenta para las activaciones y el asignador de PyTorch,
#: que la cuenta de ``docs/gpu.md`` no detalla.
ACTIVATION_MARGIN = 0.25
#: Cuánto tiene que cambiar la recompensa media entre pasos para «moverse».
REWARD_MOVE = 1e-6


@dataclass
class Check:
    """Una comprobación: nombre, si pasó y qué se midió."""

    name: str
    passed: bool
    detail: str


def memory_estimate(
    num_parameters: int,
    vocab_size: int,
    micro_batch: int,
    sequence_length: int,
    vllm_bytes: int = 0,
    trainable_parameters: int | None = None,
) -> dict[str, int]:
    """La memoria esperada en la GPU, en bytes, con la cuenta de ``docs/gpu.md``.

    - ``states``: pesos, gradientes y Adam: 16 B por parámetro entrenable y
      4 B por cada uno congelado (LoRA);
    - ``logits``: ``micro_batch × sequence_length × vocab_size`` valores, en
      bf16 y en float32;
    - ``vllm``: lo que vLLM reserva (``vllm_gpu_memory_utilization`` × la
      memoria de la GPU), si genera en la misma GPU;
    - ``budget``: la suma con ``ACTIVATION_MARGIN`` de holgura sobre los dos
      primeros; es el techo que comprueba ``check_metrics``.
    """
    trainable = num_parameters if trainable_parameters is None else trainable_parameters
    states = trainable * BYTES_PER_PARAMETER + (num_parameters - trainable) * 4
    logits = micro_batch * sequence_length * vocab_size * BYTES_PER_LOGIT
    training = states + logits
    return {
        "states": states,
        "logits": logits,
        "vllm": vllm_bytes,
        "training": training,
        "budget": math.ceil(training * (1 + ACTIVATION_MARGIN)) + vllm_bytes,
    }


def parameter_count(model: str) -> tuple[int, int]:
    """Parámetros y tamaño del vocabulario de ``model`` (carpeta o id en la
    caché), contados de su ``config.json`` sin cargar los pesos."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(model)
    with torch.device("meta"):
        skeleton = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in skeleton.parameters()), config.vocab_size


def check_metrics(metrics: dict[str, Any]) -> list[Check]:
    """Las tres comprobaciones sobre el JSON de métricas de ``launch``
    (``log_history``, ``peak_memory_bytes``) y su ``estimate``."""
    history = metrics.get("log_history", [])
    losses = [e["loss"] for e in history if "loss" in e]
    finite = bool(losses) and all(math.isfinite(x) for x in losses)
    checks = [
        Check(
            "loss_finite",
            finite,
            f"{len(losses)} valores del loss registrados"
            + ("" if finite else f"; no finitos o ninguno: {losses}"),
        )
    ]
    steps = [e for e in history if "reward" in e]
    rewards = [e["reward"] for e in steps]
    spread = max(rewards) - min(rewards) if rewards else 0.0
    signal = any(e.get("frac_reward_zero_std", 1.0) < 1.0 for e in steps)
    checks.append(
        Check(
            "reward_moves",
            len(rewards) >= 2 and spread > REWARD_MOVE and signal,
            f"recompensa media por paso {rewards}; diferencia {spread:.4g}; "
            f"{'algún' if signal else 'ningún'} paso con grupos de varianza > 0",
        )
    )
    peak = metrics.get("peak_memory_bytes")
    budget = metrics.get("estimate", {}).get("budget")
    fits = peak is not None and budget is not None and peak <= budget
    checks.append(
        Check(
            "memory_within_estimate",
            fits,
            f"pico {_gb(peak)} GB frente a la estimación {_gb(budget)} GB",
        )
    )
    return checks


def _gb(value: int | None) -> str:
    from helpers.formatting import number

    return "?" if value is None else number(value / 1e9, 2)


def _write(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n")


def default_notebook() -> Path:
    """La solución del módulo 11 si existe; si no, el cuaderno de prueba."""
    return SOLUTION_NOTEBOOK if SOLUTION_NOTEBOOK.is_file() else FIXTURE_NOTEBOOK


def vllm_available() -> bool:
    """Si vLLM se puede importar aquí."""
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m helpers.practica.gpu_check",
        description="Unos pasos de GRPO con el guion del módulo 11 en una GPU.",
    )
    parser.add_argument("--model", default=DEFAULT_MODEL, help="id o carpeta")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--notebook", type=Path, default=None)
    parser.add_argument("--max-completion-length", type=int, default=256)
    args = parser.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        reason = (
            "No hay GPU de CUDA (torch.cuda.is_available() es False): la "
            "comprobación en GPU se salta. Nada ha fallado; en una máquina con "
            "GPU, `make gpu-check` entrena unos pasos de verdad."
        )
        print(f"[gpu-check] {reason}", flush=True)
        _write(args.output, {"status": "skipped", "reason": reason})
        return 0

    notebook = args.notebook or default_notebook()
    try:
        guards.check_model_path(args.model, offline=True)
    except GuardError as error:
        print(f"[gpu-check] {error}", file=sys.stderr, flush=True)
        _write(args.output, {"status": "error", "reason": str(error)})
        return 2
    use_vllm = vllm_available()
    print(
        f"[gpu-check] {torch.cuda.get_device_name()}: {args.steps} pasos de "
        f"{args.model} con {notebook}, "
        + ("con vLLM (colocate)" if use_vllm else "sin vLLM (no se puede importar)"),
        flush=True,
    )
    try:
        summary = launch.run(
            notebook,
            args.output.parent / "entrenamiento",
            model=args.model,
            dataset="course",
            num_examples=64,
            max_steps=args.steps,
            max_completion_length=args.max_completion_length,
            device="cuda",
            use_vllm=use_vllm,
        )
    except GuardError as error:
        print(f"[gpu-check] {error}", file=sys.stderr, flush=True)
        _write(args.output, {"status": "error", "reason": str(error)})
        return 2

    num_parameters, vocab = parameter_count(args.model)
    config = summary["config"]
    prompt_tokens = _longest_prompt(args.model)
    total_gpu = torch.cuda.get_device_properties(0).total_memory
    vllm_bytes = (
        int(config["vllm_gpu_memory_utilization"] * total_gpu)
        if config["use_vllm"]
        else 0
    )
    summary["estimate"] = memory_estimate(
        num_parameters,
        vocab,
        config["per_device_train_batch_size"],
        prompt_tokens + config["max_completion_length"],
        vllm_bytes,
    )
    summary["num_parameters"] = num_parameters
    summary["gpu"] = torch.cuda.get_device_name()
    checks = check_metrics(summary)
    passed = all(c.passed for c in checks)
    report = {
        "status": "passed" if passed else "failed",
        "checks": [asdict(c) for c in checks],
        **summary,
    }
    _write(args.output, report)
    for check in checks:
        mark = "bien" if check.passed else "FALLA"
        print(f"[gpu-check] {check.name}: {mark} ({check.detail})", flush=True)
    print(f"[gpu-check] métricas en {args.output}", flush=True)
    return 0 if passed else 1


def _longest_prompt(model: str) -> int:
    """Tokens del enunciado más largo de los datos, con la plantilla de chat."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model)
    data = launch.build_dataset("course", 64)
    lengths = []
    for prompt in data["prompt"]:
        encoded = tokenizer.apply_chat_template(
            prompt, add_generation_prompt=True, tokenize=True
        )
        # transformers 5 devuelve un BatchEncoding; versiones anteriores, ids
        ids = encoded["input_ids"] if hasattr(encoded, "keys") else encoded
        lengths.append(len(ids))
    return max(lengths)


if __name__ == "__main__":
    sys.exit(main())
