"""Módulo 07 · GRPO con un muestreador que va por detrás, con tres semillas.

La sección 12 del módulo 07 entrena, con la semilla 0, GRPO 40 pasos con un
muestreador 8 pasos por detrás, sin corregir y con muestreo por importancia
truncado. Lo que afirma de esas ejecuciones tiene que cumplirse con más de una
semilla, y entrenar cinco variantes con tres semillas tarda minutos:
demasiado para el cuaderno. Se calcula una vez y se guarda en
``helpers/data/lag_runs.json``::

    {"config": {orden, pasos, semillas, versiones, fecha...},
     "start": {"heldout_accuracy": ..., "p_correct": ...},
     "runs": {nombre: {str(semilla): {"reward": [...],
                                        "heldout_accuracy": float,
                                        "p_correct": float}}}}

``reward`` es la recompensa media de las respuestas muestreadas en cada paso
(las del muestreador); ``heldout_accuracy`` y ``p_correct``, las del modelo
que se entrena en el último paso (a T = 1, como en el cuaderno). Las
variantes (``RUNS``): sin retraso; con 8 pasos de retraso sin corregir y con
IS truncado (``C = 2``); y con 2 y 4 pasos de retraso sin corregir, para ver
cómo crece el daño con el retraso.

Uso::

    python -m helpers.tinylm.lag_runs --write        # rehacer el archivo
    python -m helpers.tinylm.lag_runs --check 0      # recalcular la semilla 0

Todo es determinista con un hilo; en otra CPU, el redondeo de float32 puede
cambiar de vez en cuando una respuesta muestreada. ``--check`` compara las
recompensas por paso y las cifras finales con los márgenes de
``helpers.seeding`` (``same_sampled_fraction``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import precomputed
from ..seeding import same_sampled_fraction
from .checkpoint import load_pretrained
from .evaluate import heldout_accuracy, p_correct
from .grpo import GRPOConfig, train_grpo_runs
from .task import heldout_problems

DATA_PATH = Path(__file__).resolve().parent.parent / "data" / "lag_runs.json"
COMMAND = "python -m helpers.tinylm.lag_runs --write"
SEEDS: tuple[int, ...] = (0, 1, 2)
STEPS = 40
#: Las variantes: nombre → cambios sobre ``GRPOConfig(steps=STEPS, seed=...)``.
RUNS: dict[str, dict[str, Any]] = {
    "sin retraso": {},
    "8 pasos de retraso, sin corregir": {
        "sampler_lag": 8,
        "correct_off_policy": False,
    },
    "8 pasos de retraso, IS truncado (C = 2)": {"sampler_lag": 8, "is_cap": 2.0},
    "2 pasos de retraso, sin corregir": {
        "sampler_lag": 2,
        "correct_off_policy": False,
    },
    "4 pasos de retraso, sin corregir": {
        "sampler_lag": 4,
        "correct_off_policy": False,
    },
}


def run_config(name: str, seed: int, steps: int = STEPS) -> GRPOConfig:
    """La ``GRPOConfig`` de la variante ``name`` con ``seed``."""
    return GRPOConfig(steps=steps, seed=seed, **RUNS[name])


def compute_runs(
    pairs: Sequence[tuple[str, int]], steps: int = STEPS
) -> list[dict[str, Any]]:
    """Entrena cada ``(nombre, semilla)`` (dos a la vez) y mide el final."""
    configs = [run_config(name, seed, steps) for name, seed in pairs]
    out = []
    for history, model in train_grpo_runs(configs):
        out.append(
            {
                "reward": list(history["reward"]),
                "heldout_accuracy": heldout_accuracy(model),
                "p_correct": p_correct(model),
            }
        )
    return out


def compute_all(seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    """Todas las variantes con ``seeds``, con la procedencia en ``config``."""
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
            "Cada variante parte de load_pretrained() y entrena con "
            "helpers.tinylm.grpo.train_grpo_runs([GRPOConfig(steps, seed, "
            "**RUNS[nombre])]), un hilo por proceso. Al final, heldout_accuracy "
            "(256 problemas de evaluación × 8 respuestas, T = 1) y p_correct "
            "(1024 respuestas a 17 × 24, T = 1) del modelo entrenado."
        ),
        "steps": STEPS,
        "seeds": list(seeds),
        "runs": {k: {kk: str(vv) for kk, vv in v.items()} for k, v in RUNS.items()},
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
    """Lo guardado en ``helpers/data/lag_runs.json``."""
    return precomputed.load(path)


def check(
    seed: int,
    data: dict[str, Any] | None = None,
    names: Sequence[str] | None = None,
    steps: int = STEPS,
) -> list[str]:
    """Recalcula las variantes ``names`` (todas si ``None``) de ``seed`` y compara.

    Las recompensas de cada paso son fracciones de 32 × 8 respuestas; la
    precisión, de 256 × 8; ``p_correct``, de 1024: se comparan con
    ``same_sampled_fraction``. Con ``steps`` menor que ``STEPS`` solo entrena
    hasta ahí y compara ese principio de las recompensas (las cifras finales
    son del paso ``STEPS``). Devuelve una línea por diferencia.
    """
    data = load() if data is None else data
    names = list(RUNS) if names is None else list(names)
    config = run_config(names[0], seed)
    answers = {
        "reward": config.prompts_per_step * config.group_size,
        "heldout_accuracy": len(heldout_problems()) * 8,
        "p_correct": 1024,
    }
    problems = []
    fresh_runs = compute_runs([(name, seed) for name in names], steps)
    for name, fresh in zip(names, fresh_runs, strict=True):
        stored = data["runs"][name][str(seed)]
        rewards = zip(stored["reward"], fresh["reward"], strict=False)
        pairs = [
            (f"reward[{i}]", a, b, answers["reward"])
            for i, (a, b) in enumerate(rewards)
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
        prog="python -m helpers.tinylm.lag_runs",
        description="GRPO con muestreador retrasado (helpers/data/lag_runs.json).",
        path=DATA_PATH,
        compute_all=compute_all,
        check=check,
        by_seed=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
