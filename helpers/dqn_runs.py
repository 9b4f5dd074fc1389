"""Módulo 02 · Ejecuciones de DQN guardadas: los valores Q de la semilla que se hunde.

En ``make bench`` alguna semilla de DQN no llega nunca a 475: aprende algo y
después su política voraz se hunde hasta durar lo que empujar siempre hacia
el mismo lado. ¿Es una divergencia de los valores (la «tríada mortal») o solo
una política que olvidó? Para verlo hay que mirar los valores ``Q`` mientras
entrena, y la figura del banco solo guarda retornos.

Aquí se entrena de nuevo, con :func:`helpers.dqn.train_dqn` y la regla de
``make bench`` (20 episodios voraces cada 2048 pasos, confirmar con 100
nuevos), la semilla del banco que se hunde y dos que llegan, midiendo en cada
evaluación ``max_a Q(s, a)`` sobre los estados del búfer
(:func:`helpers.dqn.buffer_q_values`): su media y su máximo. En CartPole la
recompensa es 1 por paso, así que ningún retorno descontado pasa de
``1 / (1 − γ) = 100``: un ``Q`` muy por encima es una estimación que se ha ido.

Entrenar decenas de miles de pasos tarda minutos: demasiado para el cuaderno,
que lee lo guardado en ``helpers/data/dqn_runs.json``::

    {"config": {orden, tope, semillas, versiones, fecha...},
     "runs": {str(semilla): {"eval_steps": [...], "eval_returns": [...],
                              "q_mean": [...], "q_max": [...],
                              "solved_steps": int | None}}}

Uso::

    python -m helpers.dqn_runs --write           # rehacer el archivo
    python -m helpers.dqn_runs --check            # el principio de cada una

Con un hilo y la misma máquina todo se reproduce; en otra CPU el redondeo de
float32 puede cambiar una acción voraz y, desde ahí, la trayectoria. Por eso
``--check`` solo recalcula el principio de cada ejecución (``CHECK_STEPS``) y
compara con ``helpers.seeding.FLOAT_TOLERANCE``, y el cuaderno afirma lo que se
cumple con mucho margen, no cifras exactas.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from . import precomputed
from .dqn import DQNConfig, train_dqn

DATA_PATH = Path(__file__).resolve().parent / "data" / "dqn_runs.json"
COMMAND = "python -m helpers.dqn_runs --write"
#: La semilla de ``make bench`` que no llega (la 10) y dos que llegan.
COLLAPSING_SEED = 10
SEEDS: tuple[int, ...] = (COLLAPSING_SEED, 0, 1)
#: La regla de ``make bench`` (``benchmarks.cartpole``): cada cuántos pasos se
#: evalúa y con cuántos episodios nuevos se confirma una evaluación ≥ 475.
EVAL_EVERY = 2048
CONFIRM_EPISODES = 100
#: Tope de pasos de entorno (el banco llega a 200 000; la semilla 10 ya se ha
#: hundido mucho antes).
MAX_ENV_STEPS = 80_000
#: Lo que ``--check`` recalcula de cada ejecución.
CHECK_STEPS = 6_144
KEYS = ("eval_returns", "q_mean", "q_max")


def run_config(seed: int, max_env_steps: int = MAX_ENV_STEPS) -> DQNConfig:
    """La ``DQNConfig`` de la ejecución de ``seed``: la de siempre, con la regla
    del banco y la medida de ``Q``."""
    return DQNConfig(
        seed=seed,
        max_env_steps=max_env_steps,
        eval_every=EVAL_EVERY,
        confirm_episodes=CONFIRM_EPISODES,
        trace_q=True,
    )


def compute_run(seed: int, max_env_steps: int = MAX_ENV_STEPS) -> dict[str, Any]:
    """Entrena la ejecución de ``seed`` y devuelve lo que se guarda."""
    torch.set_num_threads(1)
    history = train_dqn(run_config(seed, max_env_steps), progress=False)
    return {
        "eval_steps": [e.env_steps for e in history.evaluations],
        "eval_returns": [e.mean_return for e in history.evaluations],
        "q_mean": [q_mean for _, q_mean, _ in history.q_traces],
        "q_max": [q_max for _, _, q_max in history.q_traces],
        "solved_steps": history.solved_at,
    }


def compute_all(seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    """Las ejecuciones de ``seeds``, con su procedencia."""
    start = time.perf_counter()
    runs = {str(seed): compute_run(seed) for seed in seeds}
    config = {
        "command": COMMAND,
        "how": (
            "helpers.dqn.train_dqn(DQNConfig(seed, max_env_steps, eval_every="
            f"{EVAL_EVERY}, confirm_episodes={CONFIRM_EPISODES}, trace_q=True)) "
            "con un hilo: la regla de make bench, con un tope menor. En cada "
            "evaluación, buffer_q_values: media y máximo de max_a Q(s, a) sobre "
            "los estados del búfer."
        ),
        "seeds": list(seeds),
        "max_env_steps": MAX_ENV_STEPS,
        "dqn_config": {k: str(v) for k, v in dataclasses.asdict(DQNConfig()).items()},
        "total_seconds": time.perf_counter() - start,
        **precomputed.machine(),
    }
    return {"config": config, "runs": runs}


def load(path: Path | str = DATA_PATH) -> dict[str, Any]:
    """Lo guardado en ``helpers/data/dqn_runs.json``."""
    return precomputed.load(path)


def check(
    data: dict[str, Any] | None = None,
    steps: int = CHECK_STEPS,
    seeds: Sequence[int] | None = None,
) -> list[str]:
    """Recalcula los primeros ``steps`` pasos de las ejecuciones y compara.

    Compara las evaluaciones y los valores ``Q`` que caen en ese principio, con
    ``same_figure``. Devuelve una línea por diferencia.
    """
    data = load() if data is None else data
    seeds = [int(s) for s in data["runs"]] if seeds is None else seeds
    problems = []
    for seed in seeds:
        stored = data["runs"][str(seed)]
        fresh = compute_run(int(seed), max_env_steps=steps)
        problems += precomputed.differences(f"semilla {seed}", stored, fresh, KEYS)
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    return precomputed.main(
        argv,
        prog="python -m helpers.dqn_runs",
        description="Los valores Q de DQN en la semilla que se hunde "
        "(helpers/data/dqn_runs.json).",
        path=DATA_PATH,
        compute_all=compute_all,
        check=check,
        by_seed=False,
    )


if __name__ == "__main__":
    raise SystemExit(main())
