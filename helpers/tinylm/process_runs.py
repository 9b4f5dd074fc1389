"""Módulo 08 · El cara a cara con una recompensa que llega a trozos.

El cara a cara del módulo 08 (``compare.py``) puntúa solo la cifra final, y
ahí el crítico no compra precisión. Aquí la recompensa es la utilidad
verdadera del módulo 10 (``preferences.true_utility``): 1 por la cifra final
y 0,25 por cada producto parcial bien escrito. GRPO la ve entera al final de
cada respuesta y da la misma ventaja a todos sus tokens; PPO la recibe en el
token donde se gana cada trozo (``methods.process_token_rewards``) y su
crítico, con GAE (λ = 0,95), reparte el mérito token a token. Todo lo demás
es lo del cara a cara (``compare.CURVE_OVERRIDES``): las mismas respuestas en
número, la misma pérdida recortada y dos épocas de dos minilotes por lote.
Tres semillas de las dos recetas tardan minutos: se calculan una vez y se
guardan en ``helpers/data/process_runs.json``::

    {"config": {orden, configuración, semillas, versiones, fecha...},
     "runs": {receta: lo que cambia de MethodConfig},
     "curves": {receta: {str(semilla): {"samples": [...],
                                         "heldout_reward": [...],
                                         "heldout_accuracy": [...],
                                         "train_seconds": [...],
                                         y en PPO "explained_variance"}}}}

``heldout_reward`` es la utilidad media en los 256 problemas de evaluación
(a T = 1, ``eval_samples`` respuestas por problema) y ``heldout_accuracy``, la
fracción con la cifra final correcta en esas mismas respuestas.

Uso::

    python -m helpers.tinylm.process_runs --write      # rehacer el archivo
    python -m helpers.tinylm.process_runs --check 0    # recalcular la semilla 0

Todo es determinista con un hilo; en otra CPU, el redondeo de float32 puede
cambiar de vez en cuando una respuesta muestreada (``--check`` compara con
los márgenes de ``helpers.seeding``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from .. import precomputed
from ..seeding import same_sampled_fraction
from .checkpoint import load_pretrained
from .compare import CURVE_OVERRIDES
from .methods import MethodConfig, train_method

DATA_PATH = Path(__file__).resolve().parent.parent / "data" / "process_runs.json"
COMMAND = "python -m helpers.tinylm.process_runs --write"
SEEDS: tuple[int, ...] = (0, 1, 2)
#: Las dos recetas: lo que cambia cada una de ``MethodConfig`` (además de
#: ``CURVE_OVERRIDES`` y ``COMMON``).
RUNS: dict[str, dict[str, Any]] = {
    "grpo": {"method": "grpo"},
    "ppo": {"method": "ppo"},
}
#: Común a las dos: la recompensa a trozos y una evaluación cada 10 pasos.
COMMON: dict[str, Any] = {
    "verifier": "process",
    "total_samples": 10_240,
    "eval_every_samples": 2_560,
}
EVAL_KEYS: tuple[str, ...] = (
    "samples",
    "heldout_reward",
    "heldout_accuracy",
    "train_seconds",
)


def run_config(run: str, seed: int, total_samples: int | None = None) -> MethodConfig:
    """La ``MethodConfig`` de la receta ``run`` con ``seed``."""
    changes = {**CURVE_OVERRIDES, **COMMON, **RUNS[run]}
    if total_samples is not None:
        changes["total_samples"] = total_samples
    return MethodConfig(seed=seed, **changes)


def compute_run(
    run: str, seed: int, total_samples: int | None = None
) -> dict[str, list[float]]:
    """Entrena el modelo supervisado con una receta y da su curva."""
    torch.set_num_threads(1)
    history = train_method(
        load_pretrained(), run_config(run, seed, total_samples), progress=False
    )
    curve = {key: list(history[key]) for key in EVAL_KEYS}
    if "explained_variance" in history:
        curve["explained_variance"] = list(history["explained_variance"])
    return curve


def assemble(
    curves: dict[str, dict[str, dict[str, list[float]]]], seconds: float
) -> dict[str, Any]:
    """El archivo: las curvas con su procedencia."""
    return {
        "config": {
            "command": COMMAND,
            "how": (
                "Cada curva parte del punto de control supervisado y entrena con "
                "helpers.tinylm.methods.train_method(MethodConfig(seed=..., "
                "**CURVE_OVERRIDES, **COMMON, **runs[receta])), con un hilo de "
                "PyTorch. heldout_reward: utilidad verdadera media (1 por la cifra "
                "final, 0,25 por cada producto parcial) en los 256 problemas de "
                "evaluación a T = 1; heldout_accuracy: la fracción con la cifra "
                "final correcta; train_seconds: sin las evaluaciones, en esta "
                "máquina y con su carga."
            ),
            "seeds": sorted({int(s) for by_seed in curves.values() for s in by_seed}),
            "overrides": {**CURVE_OVERRIDES, **COMMON},
            "method_config": run_config("grpo", 0).flat(),
            "total_seconds": seconds,
            **precomputed.machine(),
        },
        "runs": RUNS,
        "curves": curves,
    }


def compute_all(seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    """Las dos recetas con cada semilla, y su procedencia."""
    start = time.perf_counter()
    curves = {
        run: {str(seed): compute_run(run, seed) for seed in seeds} for run in RUNS
    }
    return assemble(curves, time.perf_counter() - start)


def load(path: Path | str = DATA_PATH) -> dict[str, Any]:
    """Las ejecuciones guardadas."""
    return precomputed.load(path)


def check(seed: int, total_samples: int = 2_560) -> list[str]:
    """Recalcula el principio de las dos curvas de ``seed`` y las compara."""
    stored = load()
    problems = []
    for run in RUNS:
        saved = stored["curves"][run][str(seed)]
        fresh = compute_run(run, seed, total_samples)
        n = len(fresh["samples"])
        if fresh["samples"] != saved["samples"][:n]:
            problems.append(f"{run}: samples {fresh['samples']} ≠ {saved['samples']}")
            continue
        # La utilidad de una respuesta llega a 1,5: su margen, en proporción
        for key, scale in (("heldout_accuracy", 1.0), ("heldout_reward", 1.5)):
            for new, old in zip(fresh[key], saved[key][:n], strict=True):
                if not same_sampled_fraction(new / scale, old / scale, 1024):
                    problems.append(f"{run} {key}: {new} ≠ {old}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    return precomputed.main(
        argv,
        prog="python -m helpers.tinylm.process_runs",
        description=__doc__.splitlines()[0],
        path=DATA_PATH,
        compute_all=compute_all,
        check=check,
        by_seed=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
