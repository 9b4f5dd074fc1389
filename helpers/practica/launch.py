"""Tu guion del ejercicio 3, tal cual, fuera del cuaderno: con ``torchrun`` en
CPU o con un modelo de verdad en una GPU.

En el cuaderno 11 escribes ``correctness_reward``, ``format_reward``,
``make_grpo_config(output_dir)`` y ``make_trainer(model_path, dataset,
config)``. Este programa las saca de tu cuaderno (las celdas de solución con
esos ``grade_id``), las ejecuta en orden en un mismo espacio de nombres, tras
las celdas de ``import`` del cuaderno, y entrena con ellas::

    python -m helpers.practica.launch --notebook 11_practica.ipynb
    torchrun --standalone --nproc_per_node 2 -m helpers.practica.launch \\
        --notebook 11_practica.ipynb --max-steps 2
    python -m helpers.practica.launch --notebook 11_practica.ipynb \\
        --model Qwen/Qwen2.5-0.5B-Instruct --device cuda

Sin ``--model``, el modelo es el del curso convertido a GPT-2 y guardado en
una carpeta (con su tokenizador y su plantilla de chat), como un modelo de
fuera. Antes de construir el entrenador pasan las comprobaciones de
``helpers.practica.guards``; al empezar, cada proceso dice su rango y cuántos
son, y al terminar escribe ``OUTPUT/metrics_rank{r}.json`` con el registro
de TRL (``log_history``), el número de procesos y su rango.

Con ``--device cuda`` se cambia de tu configuración solo lo que la máquina
obliga (``use_cpu=False``, bf16 si la GPU lo tiene, vLLM con
``--vllm``) y, si se pide, ``max_steps`` y ``max_completion_length``; lo
demás es tuyo. Lo que se cambió queda en el JSON (``overrides``).
"""

from __future__ import annotations

import argparse
import ast
import atexit
import dataclasses
import json
import math
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# Si quien lanza dijo algo de HF_HUB_OFFLINE, se respeta (ver main)
_USER_OFFLINE = os.environ.get("HF_HUB_OFFLINE")

# helpers.puente.recipe fija HF_HUB_OFFLINE (nada de descargas sin pedirlo)
# antes de que se importe huggingface_hub
from helpers.puente import recipe  # noqa: E402
from helpers.puente.from_notebook import _cell_source  # noqa: E402

from . import guards  # noqa: E402
from .guards import GuardError  # noqa: E402

#: Las celdas de solución del ejercicio 3 (y las recompensas del 2), en el
#: orden en que se ejecutan: los ``grade_id`` son los nombres de las funciones.
SOLUTION_CELLS: tuple[str, ...] = (
    "correctness_reward",
    "format_reward",
    "make_grpo_config",
    "make_trainer",
)
#: Lo que está importado antes de las celdas, además de las celdas de
#: ``import`` del propio cuaderno.
PROLOGUE = """\
import math
import re
import numpy as np
import torch
import trl
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM, AutoTokenizer
import helpers
"""
#: Campos del ``GRPOConfig`` que se copian al JSON de métricas.
REPORTED_FIELDS: tuple[str, ...] = (
    "num_generations",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "generation_batch_size",
    "max_completion_length",
    "loss_type",
    "beta",
    "use_cpu",
    "bf16",
    "use_vllm",
    "vllm_mode",
    "vllm_gpu_memory_utilization",
)


class NotebookError(GuardError):
    """Tu cuaderno no da las funciones: falta una celda o una celda falla.

    ``kind`` es ``"notebook_missing"``, ``"cell_missing"``,
    ``"cell_unsolved"`` o ``"cell_error"``; ``value``, el cuaderno o la celda.
    """


# ---------------------------------------------------------------------------
# Las funciones del cuaderno
# ---------------------------------------------------------------------------


def _code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    sources = []
    for cell in cells:
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            sources.append("".join(source) if isinstance(source, list) else source)
    return sources


def _only_imports(source: str) -> bool:
    """Si la celda solo importa (nada que ejecutar salvo ``import``)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    return bool(body) and all(
        isinstance(node, (ast.Import, ast.ImportFrom)) for node in body
    )


def load_learner_functions(
    notebook: str | os.PathLike[str], names: Sequence[str] = SOLUTION_CELLS
) -> dict[str, Callable[..., Any]]:
    """Las funciones ``names`` de las celdas de solución de ``notebook``.

    Se ejecutan, en un mismo espacio de nombres: ``PROLOGUE``, las celdas del
    cuaderno que solo importan y, en el orden de ``names``, la celda de
    solución de cada una (una celda puede usar lo que definió otra anterior).
    Un error dice qué celda falta o cuál falla y por qué.
    """
    path = Path(notebook)
    if not path.is_file():
        raise NotebookError(
            "notebook_missing",
            str(path),
            f"No encuentro el cuaderno {path} (desde {Path.cwd()}). Pasa con "
            "--notebook la ruta de tu 11_practica.ipynb.",
        )
    sources = {name: _cell_source(path, name) for name in names}
    missing = [name for name, source in sources.items() if source is None]
    if missing:
        raise NotebookError(
            "cell_missing",
            missing,
            f"El cuaderno {path} no tiene las celdas de solución {missing} "
            "(se buscan por su grade_id). ¿Es el cuaderno del módulo 11? Si "
            "borraste o copiaste una celda, recupérala del cuaderno publicado.",
        )
    namespace: dict[str, Any] = {"__name__": "practica_guion"}
    exec(compile(PROLOGUE, "<prólogo>", "exec"), namespace)  # noqa: S102
    for source in filter(_only_imports, _code_cells(path)):
        try:
            exec(compile(source, f"{path} (imports)", "exec"), namespace)  # noqa: S102
        except Exception as error:  # noqa: BLE001 — el cuaderno es del estudiante
            raise NotebookError(
                "cell_error",
                source.strip(),
                f"Una celda de import de {path} falla: {type(error).__name__}: "
                f"{error}. La celda: {source.strip()!r}.",
            ) from error
    for name in names:
        try:
            exec(compile(sources[name], f"{path} [{name}]", "exec"), namespace)  # noqa: S102
        except NotImplementedError as error:
            raise NotebookError(
                "cell_unsolved",
                name,
                f"La celda «{name}» de {path} sigue sin resolver "
                "(NotImplementedError). Escríbela en el cuaderno y guárdalo.",
            ) from error
        except Exception as error:  # noqa: BLE001 — el código es del estudiante
            raise NotebookError(
                "cell_error",
                name,
                f"La celda «{name}» de {path} lanzó {type(error).__name__}: "
                f"{error}. Ejecútala en el cuaderno para ver dónde.",
            ) from error
        if not callable(namespace.get(name)):
            raise NotebookError(
                "cell_missing",
                name,
                f"La celda «{name}» de {path} no define la función {name}. "
                "No le cambies el nombre: el guion la busca por él.",
            )
    return {name: namespace[name] for name in names}


def call_learner(name: str, function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)``, con los errores de TRL en español y los demás
    atribuidos a tu función ``name``."""
    try:
        with guards.trl_errors_in_spanish():
            return function(*args)
    except GuardError as error:
        raise GuardError(
            error.kind, error.value, f"Tu «{name}»: {error}"
        ) from error.__cause__
    except NotImplementedError as error:
        raise NotebookError(
            "cell_unsolved", name, f"Tu «{name}» sigue sin resolver."
        ) from error
    except Exception as error:  # noqa: BLE001 — el código es del estudiante
        raise NotebookError(
            "cell_error",
            name,
            f"Tu «{name}» lanzó {type(error).__name__}: {error}.",
        ) from error


# ---------------------------------------------------------------------------
# Modelo, datos y configuración
# ---------------------------------------------------------------------------


def course_checkpoint(folder: str | os.PathLike[str] | None = None) -> str:
    """El modelo del curso como un modelo de fuera: GPT-2 con
    ``save_pretrained`` y su tokenizador (con plantilla de chat) en
    ``folder`` (por omisión, una carpeta temporal que se borra al salir)."""
    from transformers.utils import logging as hf_logging

    from helpers.puente import load_pretrained_gpt2, make_tokenizer

    if folder is None:
        folder = tempfile.mkdtemp(prefix="practica_modelo_")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    hf_logging.disable_progress_bar()
    load_pretrained_gpt2().save_pretrained(folder)
    make_tokenizer().save_pretrained(folder)
    return os.fspath(folder)


def build_dataset(name: str, num_examples: int = 64, seed: int = 0) -> Any:
    """El conjunto de entrenamiento: enunciados conversacionales y ``answer``.

    - ``"practica"``: los problemas de la práctica
      (``helpers.practica.prompts``), de longitudes distintas;
    - ``"course"``: los problemas de GRPO del curso (``rl_problems``), cada
      uno como un mensaje de usuario;
    - un ``.jsonl`` o ``.parquet`` al estilo de GSM8K (``question`` y
      ``answer`` con «####»), como en la receta del 09.
    """
    from datasets import Dataset

    if name == "practica":
        try:
            from . import prompts
        except ImportError as error:
            raise GuardError(
                "dataset",
                name,
                "helpers.practica.prompts no está disponible en esta copia del "
                "curso; usa --dataset course.",
            ) from error
        return prompts.chat_dataset(prompts.practice_problems(num_examples, seed))
    if name == "course":
        data = recipe.load_dataset_for(recipe.RecipeConfig(max_examples=num_examples))
        return Dataset.from_dict(
            {
                "prompt": [[{"role": "user", "content": p}] for p in data["prompt"]],
                "answer": data["answer"],
            }
        )
    cfg = recipe.RecipeConfig(dataset=name, max_examples=num_examples)
    return recipe.load_dataset_for(cfg)


def with_overrides(config: Any, **changes: Any) -> Any:
    """Otro ``GRPOConfig`` igual a ``config`` salvo ``changes``, validado de
    nuevo por TRL (el lote de generación se vuelve a calcular)."""
    if not changes:
        return config
    values = {
        f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.init
    }
    values.update(generation_batch_size=None, steps_per_generation=None)
    values.update(changes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with guards.trl_errors_in_spanish():
            return type(config)(**values)


def machine_overrides(
    device: str,
    use_vllm: bool,
    max_steps: int | None,
    max_completion_length: int | None,
) -> dict[str, Any]:
    """Lo que se cambia de la configuración del estudiante y por qué: la
    máquina (``device``), vLLM si se pide y está, y los pasos y la longitud
    si se piden."""
    import torch

    changes: dict[str, Any] = {}
    if max_steps is not None:
        changes["max_steps"] = max_steps
    if max_completion_length is not None:
        changes["max_completion_length"] = max_completion_length
    if device == "cuda":
        if not torch.cuda.is_available():
            raise GuardError(
                "device",
                device,
                "Pediste --device cuda, pero PyTorch no ve ninguna GPU "
                "(torch.cuda.is_available() es False).",
            )
        changes.update(use_cpu=False, bf16=torch.cuda.is_bf16_supported())
        if use_vllm:
            changes.update(use_vllm=True, vllm_mode="colocate")
    elif device == "cpu":
        changes.update(use_cpu=True)
    return changes


# ---------------------------------------------------------------------------
# Entrenar
# ---------------------------------------------------------------------------


def run(
    notebook: str | os.PathLike[str],
    output: str | os.PathLike[str],
    model: str | None = None,
    dataset: str = "practica",
    num_examples: int = 64,
    max_steps: int | None = 3,
    max_completion_length: int | None = None,
    device: str = "keep",
    use_vllm: bool = False,
) -> dict[str, Any]:
    """Entrena con las funciones del cuaderno y devuelve el resumen que se
    escribe en ``output/metrics_rank{r}.json``.

    ``device``: ``"keep"`` deja la máquina de tu configuración; ``"cpu"`` o
    ``"cuda"`` la cambian.
    """
    import torch

    before = recipe.process_info()
    rank, world = before["env_rank"], before["env_world_size"]
    print(
        f"[práctica] proceso {rank} de {world} (pid {before['pid']}): cuaderno "
        f"{notebook}, modelo {model or 'del curso'}, datos {dataset}",
        flush=True,
    )
    functions = load_learner_functions(notebook)
    model_path = (
        course_checkpoint() if model is None else guards.check_model_path(model)
    )
    data = build_dataset(dataset, num_examples)

    output = Path(output)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        config = call_learner(
            "make_grpo_config", functions["make_grpo_config"], str(output)
        )
    changes = machine_overrides(device, use_vllm, max_steps, max_completion_length)
    kwargs = config.generation_kwargs or {}
    if model is not None and "suppress_tokens" in kwargs:
        # Prohibir el relleno del modelo del curso (id 0) no tiene sentido en
        # otro vocabulario, y vLLM no acepta esa opción
        changes["generation_kwargs"] = {
            k: v for k, v in kwargs.items() if k != "suppress_tokens"
        } or None
    config = with_overrides(config, **changes)
    if config.use_cpu or not torch.cuda.is_available():
        torch.set_num_threads(1)

    # Las comprobaciones, antes de cargar nada grande
    guards.check_grpo_config(config, world_size=world)
    from transformers import AutoTokenizer

    guards.check_chat_template(AutoTokenizer.from_pretrained(model_path), data)
    rewards = [functions["correctness_reward"], functions["format_reward"]]
    guards.check_reward_columns(data, rewards)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", FutureWarning)
        trainer = call_learner(
            "make_trainer", functions["make_trainer"], model_path, data, config
        )
    guards.check_reward_columns(data, trainer.reward_funcs)
    info = recipe.process_info(trainer)
    print(
        f"[práctica] rango {info['process_index']} de {info['num_processes']} "
        f"procesos ({info['distributed_type']}, {info['device']}"
        + (f", {info['backend']}" if "backend" in info else "")
        + ")",
        flush=True,
    )
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        trainer.train()
    seconds = time.perf_counter() - start

    history = trainer.state.log_history
    losses = [e["loss"] for e in history if "loss" in e]
    summary = {
        **info,
        "rank": info["process_index"],
        "world_size": info["num_processes"],
        "notebook": str(notebook),
        "model": model or "course",
        "dataset": dataset,
        "overrides": changes,
        "config": {name: getattr(config, name) for name in REPORTED_FIELDS},
        "steps": trainer.state.global_step,
        "train_seconds": seconds,
        "loss_finite": bool(losses) and all(math.isfinite(x) for x in losses),
        "peak_memory_bytes": (
            torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
        ),
        "log_history": history,
    }
    output.mkdir(parents=True, exist_ok=True)
    path = output / f"metrics_rank{summary['rank']}.json"
    path.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n")
    rewards_logged = [e["reward"] for e in history if "reward" in e]
    print(
        f"[práctica] rango {summary['rank']}: {summary['steps']} pasos en "
        f"{seconds:.1f} s; recompensa "
        f"{rewards_logged[0] if rewards_logged else None} → "
        f"{rewards_logged[-1] if rewards_logged else None}; métricas en {path}",
        flush=True,
    )
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m helpers.practica.launch",
        description="Tu guion del ejercicio 3 del módulo 11, fuera del cuaderno.",
    )
    parser.add_argument("--notebook", required=True, help="tu 11_practica.ipynb")
    parser.add_argument(
        "--model", help="carpeta o id de Hugging Face (por omisión, el del curso)"
    )
    parser.add_argument(
        "--dataset",
        default="practica",
        help="«practica», «course» o un .jsonl / .parquet al estilo de GSM8K",
    )
    parser.add_argument("--num-examples", type=int, default=64)
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--max-completion-length", type=int)
    parser.add_argument("--output", default=".artifacts/practica", help="carpeta")
    parser.add_argument("--device", choices=("keep", "cpu", "cuda"), default="keep")
    parser.add_argument("--vllm", action="store_true", help="generar con vLLM")
    args = parser.parse_args(argv)
    if args.model and not Path(args.model).exists() and _USER_OFFLINE is None:
        # Un id de Hugging Face: se descarga si no está en la caché, como en
        # la receta del 09 (salvo que quien lanza fije HF_HUB_OFFLINE)
        import huggingface_hub.constants as hub

        os.environ["HF_HUB_OFFLINE"] = "0"
        hub.HF_HUB_OFFLINE = False
    try:
        run(
            args.notebook,
            args.output,
            model=args.model,
            dataset=args.dataset,
            num_examples=args.num_examples,
            max_steps=args.max_steps,
            max_completion_length=args.max_completion_length,
            device=args.device,
            use_vllm=args.vllm,
        )
    except GuardError as error:
        print(f"[práctica] Error: {error}", file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
