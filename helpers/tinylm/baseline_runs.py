"""Módulo 07 · GRPO sin línea base (b = 0) frente a GRPO, con tres semillas.

La sección 8 del módulo 07 mide la varianza del gradiente con tres líneas
base, pero con el modelo quieto. Aquí se entrena: el GRPO de 07
(``GRPOConfig()``: 100 pasos, Dr. GRPO, sin ÷σ) y el mismo con la ventaja
igual a la recompensa tal cual (b = 0: sin restar la media del grupo, sin
dividir por nada), tres semillas cada uno. Seis entrenamientos tardan
minutos: demasiado para el cuaderno. Se calculan una vez y se guardan en
``helpers/data/baseline_runs.json``::

    {"config": {orden, pasos, semillas, versiones, fecha...},
     "start": {"heldout_accuracy": ..., "p_correct": ...},
     "runs": {nombre: {str(semilla): {"reward": [...],
                                        "mixed_groups": [...],
                                        "taught": [...],
                                        "heldout_accuracy": float,
                                        "p_correct": float}}}}

Por paso: ``reward``, la recompensa media de las 32 × 8 respuestas;
``mixed_groups``, la fracción de grupos con aciertos y fallos; ``taught``,
la fracción de respuestas con ventaja distinta de 0 (las que empujan algo).
Al final, ``heldout_accuracy`` y ``p_correct`` del modelo entrenado (a T = 1,
como en el cuaderno).

El paso es el de ``grpo.grpo_step`` (``collect_rollout``, las ventajas,
``update_policy``) con una sola línea cambiada: las ventajas. Con línea base
da, bit a bit, lo mismo que ``train_grpo`` (lo comprueba
``tests/test_baseline_runs.py``).

Uso::

    python -m helpers.tinylm.baseline_runs --write      # rehacer el archivo
    python -m helpers.tinylm.baseline_runs --check 0    # recalcular la semilla 0

Todo es determinista con un hilo; en otra CPU, el redondeo de float32 puede
cambiar de vez en cuando una respuesta muestreada. ``--check`` compara con
los márgenes de ``helpers.seeding`` (``same_sampled_fraction``).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch

from .. import precomputed
from ..seeding import same_sampled_fraction
from .checkpoint import load_pretrained
from .evaluate import heldout_accuracy, p_correct
from .grpo import (
    GRPOConfig,
    collect_rollout,
    group_advantages,
    run_training,
    update_policy,
)
from .model import TinyLM
from .task import Problem, heldout_problems, rl_problems

DATA_PATH = Path(__file__).resolve().parent.parent / "data" / "baseline_runs.json"
COMMAND = "python -m helpers.tinylm.baseline_runs --write"
SEEDS: tuple[int, ...] = (0, 1, 2)
STEPS = GRPOConfig().steps
#: Las dos recetas: nombre → si se resta la media del grupo.
RUNS: dict[str, bool] = {
    "GRPO (b = media del grupo)": True,
    "sin línea base (b = 0)": False,
}
STEP_KEYS: tuple[str, ...] = ("reward", "mixed_groups", "taught")


def baseline_step(
    model: TinyLM,
    optimizer: torch.optim.Optimizer,
    problems: list[Problem],
    cfg: GRPOConfig,
    generator: torch.Generator,
    sampler: TinyLM | None,
    baseline: bool,
) -> dict[str, float]:
    """Un paso de GRPO; con ``baseline=False``, la ventaja es la recompensa."""
    G = cfg.group_size
    rollout = collect_rollout(model, problems, cfg, generator, sampler)
    rewards = rollout.rewards.float()
    if baseline:
        advantages = group_advantages(
            rewards.view(-1, G), std_normalize=cfg.std_normalize
        ).view(-1)
    else:  # b = 0: cada acierto empuja hacia arriba; cada fallo, nada
        advantages = rewards
    update_policy(model, optimizer, rollout, advantages, cfg, generator)
    group_means = rewards.view(-1, G).mean(dim=-1)
    return {
        "reward": rewards.mean().item(),
        "mixed_groups": ((group_means > 0) & (group_means < 1)).float().mean().item(),
        "taught": (advantages != 0).float().mean().item(),
    }


def train(cfg: GRPOConfig, baseline: bool) -> tuple[dict[str, list[float]], TinyLM]:
    """Entrena desde ``load_pretrained()``; devuelve la historia y el modelo."""
    model = load_pretrained()

    def step_fn(optimizer, problems, generator, sampler):  # noqa: ANN001, ANN202
        return baseline_step(
            model, optimizer, problems, cfg, generator, sampler, baseline
        )

    def record_step(step: int, seconds: float, metrics: dict) -> dict:
        return {"step": step, "train_seconds": seconds, **metrics}

    history = run_training(
        model,
        cfg,
        step_fn,
        record_step,
        lambda step, seconds: {},
        rl_problems(),
        progress=False,
    )
    return history, model


def _run(job: tuple[str, int, int]) -> dict[str, Any]:
    """Un entrenamiento de ``compute_runs``, en su propio proceso."""
    name, seed, steps = job
    history, model = train(GRPOConfig(steps=steps, seed=seed), RUNS[name])
    result: dict[str, Any] = {key: list(history[key]) for key in STEP_KEYS}
    if steps >= STEPS:
        result["heldout_accuracy"] = heldout_accuracy(model)
        result["p_correct"] = p_correct(model)
    return result


def compute_runs(
    pairs: Sequence[tuple[str, int]], steps: int = STEPS, jobs: int = 2
) -> list[dict[str, Any]]:
    """Entrena cada ``(nombre, semilla)``, ``jobs`` a la vez, y mide el final.

    Cada entrenamiento va en su proceso con un hilo, como ``train_grpo_runs``.
    """
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    work = [(name, seed, steps) for name, seed in pairs]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_run, work))


def compute_all(seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    """Las dos recetas con ``seeds``, con la procedencia en ``config``."""
    start = time.perf_counter()
    pairs = [(name, seed) for name in RUNS for seed in seeds]
    results = compute_runs(pairs)
    runs: dict[str, dict[str, Any]] = {name: {} for name in RUNS}
    for (name, seed), result in zip(pairs, results, strict=True):
        runs[name][str(seed)] = result
    model = load_pretrained()
    config = {
        "command": COMMAND,
        "how": (
            "Cada receta parte de load_pretrained() y entrena con "
            "helpers.tinylm.baseline_runs.train(GRPOConfig(steps, seed), "
            "RUNS[receta]), un hilo por proceso: el paso de grpo_step con las "
            "ventajas de group_advantages (con línea base) o iguales a la "
            "recompensa (b = 0). Al final, heldout_accuracy (256 problemas de "
            "evaluación × 8 respuestas, T = 1) y p_correct (1024 respuestas a "
            "17 × 24, T = 1) del modelo entrenado."
        ),
        "steps": STEPS,
        "seeds": list(seeds),
        "runs": {name: {"baseline": value} for name, value in RUNS.items()},
        "grpo_config": {
            k: str(v) for k, v in dataclasses.asdict(GRPOConfig(steps=STEPS)).items()
        },
        "total_seconds": time.perf_counter() - start,
        **precomputed.machine(),
    }
    start_point = {
        "heldout_accuracy": heldout_accuracy(model),
        "p_correct": p_correct(model),
    }
    return {"config": config, "start": start_point, "runs": runs}


def load(path: Path | str = DATA_PATH) -> dict[str, Any]:
    """Lo guardado en ``helpers/data/baseline_runs.json``."""
    return precomputed.load(path)


def gains(data: dict[str, Any], name: str, key: str = "heldout_accuracy") -> list:
    """Lo que sube ``key`` desde el punto de partida en cada semilla de ``name``."""
    start = data["start"][key]
    return [run[key] - start for run in data["runs"][name].values()]


def check(
    seed: int,
    data: dict[str, Any] | None = None,
    names: Sequence[str] | None = None,
    steps: int = STEPS,
) -> list[str]:
    """Recalcula las recetas ``names`` (todas si ``None``) de ``seed`` y compara.

    Las cifras de cada paso son fracciones de 32 × 8 respuestas (o de 32
    grupos); la precisión, de 256 × 8; ``p_correct``, de 1024: se comparan con
    ``same_sampled_fraction``. Con ``steps`` menor que ``STEPS`` solo entrena
    hasta ahí y compara ese principio. Devuelve una línea por diferencia.
    """
    data = load() if data is None else data
    names = list(RUNS) if names is None else list(names)
    config = GRPOConfig()
    answers = {
        "reward": config.prompts_per_step * config.group_size,
        "taught": config.prompts_per_step * config.group_size,
        "mixed_groups": config.prompts_per_step,
        "heldout_accuracy": len(heldout_problems()) * 8,
        "p_correct": 1024,
    }
    problems = []
    fresh_runs = compute_runs([(name, seed) for name in names], steps)
    for name, fresh in zip(names, fresh_runs, strict=True):
        stored = data["runs"][name][str(seed)]
        pairs = [
            (f"{key}[{i}]", a, b, answers[key])
            for key in STEP_KEYS
            for i, (a, b) in enumerate(zip(stored[key], fresh[key], strict=False))
        ]
        if steps >= STEPS:
            pairs += [
                (key, stored[key], fresh[key], answers[key])
                for key in ("heldout_accuracy", "p_correct")
            ]
        for what, old, new, n in pairs:
            if not same_sampled_fraction(old, new, n):
                problems.append(f"{name}, {what}: guardado {old!r}, ahora {new!r}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    return precomputed.main(
        argv,
        prog="python -m helpers.tinylm.baseline_runs",
        description="GRPO con y sin línea base (helpers/data/baseline_runs.json).",
        path=DATA_PATH,
        compute_all=compute_all,
        check=check,
        by_seed=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
