"""Módulo 06 · Ejecuciones de PPO precalculadas: PPO sin parar en 475.

El módulo 05 mide que A2C, si no se para al llegar a 475, se hunde otra vez
(``helpers.a2c_runs``, la ejecución ``"separadas, c_V = 0,5, sin parar"``) y
propone como causa que nada limita cuánto cambia la política en cada paso. El
06 lo pone a prueba: aquí se entrena PPO (:func:`helpers.ppo.train_ppo`) con
el mismo tope de pasos, las mismas semillas y la misma evaluación voraz, sin
parar, de dos maneras:

- ``"PPO, sin parar"``: la ``PPOConfig`` del cuaderno (la tasa y ε decaen
  linealmente hasta 0 en ``total_env_steps`` = 100 000 pasos, así que al
  final del tope les queda un 40 %);
- ``"PPO sin decaimiento, sin parar"``: la tasa y ε fijos todo el tiempo, para
  que el decaimiento no sea lo que evita los colapsos.

Los colapsos se cuentan con :func:`helpers.a2c_runs.collapses`, la misma regla
que en el 05. Por cada iteración se guardan además la KL aproximada ``k3`` y la
fracción recortada.

Entrenar las dos configuraciones con tres semillas tarda unos minutos:
demasiado para el cuaderno, que lee lo guardado en
``helpers/data/ppo_runs.json``::

    {"config": {orden, tope, semillas, versiones, fecha...},
     "runs": {nombre: {str(semilla): {"eval_steps": [...],
                                        "eval_returns": [...],
                                        "steps": [...],
                                        "approx_kl_k3": [...],
                                        "clip_fractions": [...]}}}}

Uso::

    python -m helpers.ppo_runs --write           # rehacer el archivo
    python -m helpers.ppo_runs --check            # el principio de cada una

Como en ``helpers.a2c_runs``, ``--check`` solo recalcula el principio de cada
ejecución (``CHECK_STEPS`` pasos: las dos primeras actualizaciones) y compara
con ``helpers.seeding.FLOAT_TOLERANCE``: en otra CPU el redondeo de float32
puede cambiar una acción muestreada y, desde ahí, la trayectoria. Con
``ATEN_CPU_CAPABILITY=default``, a los 1024 pasos ya cambia una fracción
recortada (un token de 5120) y a los 2048 la primera evaluación. El cuaderno afirma
lo que se cumple en las tres semillas, no cifras exactas.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from . import a2c_runs, precomputed
from .ppo import PPOConfig, train_ppo

DATA_PATH = Path(__file__).resolve().parent / "data" / "ppo_runs.json"
COMMAND = "python -m helpers.ppo_runs --write"
#: Las semillas y el tope de las ejecuciones de A2C sin parar del módulo 05.
SEEDS: tuple[int, ...] = a2c_runs.SEEDS
MAX_ENV_STEPS = a2c_runs.MAX_ENV_STEPS
#: Lo que ``--check`` recalcula de cada ejecución.
CHECK_STEPS = 512
#: Las configuraciones: nombre → cambios sobre ``PPOConfig``.
RUNS: dict[str, dict[str, Any]] = {
    "PPO, sin parar": {"target_return": None},
    "PPO sin decaimiento, sin parar": {
        "target_return": None,
        "anneal_lr": False,
        "anneal_clip": False,
    },
}
SERIES = ("steps", "approx_kl_k3", "clip_fractions")


def run_config(name: str, seed: int, max_env_steps: int = MAX_ENV_STEPS) -> PPOConfig:
    """La ``PPOConfig`` de la ejecución ``name`` con ``seed``."""
    return PPOConfig(seed=seed, max_env_steps=max_env_steps, **RUNS[name])


def compute_run(
    name: str, seed: int, max_env_steps: int = MAX_ENV_STEPS
) -> dict[str, Any]:
    """Entrena la ejecución ``name`` con ``seed`` y devuelve lo que se guarda."""
    torch.set_num_threads(1)
    history = train_ppo(run_config(name, seed, max_env_steps), progress=False)
    return {
        "eval_steps": [e.env_steps for e in history.evaluations],
        "eval_returns": [e.mean_return for e in history.evaluations],
        "steps": list(history.env_steps),
        "approx_kl_k3": list(history.approx_kl_k3),
        "clip_fractions": list(history.clip_fractions),
    }


def compute_all(seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    """Todas las ejecuciones de ``RUNS`` con ``seeds``, con su procedencia."""
    start = time.perf_counter()
    runs = {name: {str(s): compute_run(name, s) for s in seeds} for name in RUNS}
    base = dataclasses.asdict(PPOConfig())
    config = {
        "command": COMMAND,
        "how": (
            "helpers.ppo.train_ppo(PPOConfig(seed, max_env_steps, **RUNS[nombre])) "
            "con un hilo; la evaluación voraz de siempre (20 episodios cada 2048 "
            "pasos), sin parar en 475."
        ),
        "seeds": list(seeds),
        "max_env_steps": MAX_ENV_STEPS,
        "runs": {k: {kk: str(vv) for kk, vv in v.items()} for k, v in RUNS.items()},
        "ppo_config": {k: str(v) for k, v in base.items()},
        "total_seconds": time.perf_counter() - start,
        **precomputed.machine(),
    }
    return {"config": config, "runs": runs}


def load(path: Path | str = DATA_PATH) -> dict[str, Any]:
    """Lo guardado en ``helpers/data/ppo_runs.json``."""
    return precomputed.load(path)


def check(
    data: dict[str, Any] | None = None,
    steps: int = CHECK_STEPS,
    which: Sequence[tuple[str, int]] | None = None,
) -> list[str]:
    """Recalcula los primeros ``steps`` pasos de las ejecuciones y compara.

    ``which``: pares ``(nombre, semilla)``; ``None``, todas. Compara las
    evaluaciones y las series por iteración que caen en ese principio, con
    ``same_figure``. Devuelve una línea por diferencia.
    """
    data = load() if data is None else data
    if which is None:
        which = [(n, int(s)) for n, seeds in data["runs"].items() for s in seeds]
    problems = []
    for name, seed in which:
        stored = data["runs"][name][str(seed)]
        fresh = compute_run(name, int(seed), max_env_steps=steps)
        problems += precomputed.differences(
            f"{name}, semilla {seed}", stored, fresh, ("eval_returns", *SERIES)
        )
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    return precomputed.main(
        argv,
        prog="python -m helpers.ppo_runs",
        description="PPO sin parar en 475, frente a los colapsos de A2C "
        "(helpers/data/ppo_runs.json).",
        path=DATA_PATH,
        compute_all=compute_all,
        check=check,
        by_seed=False,
    )


if __name__ == "__main__":
    raise SystemExit(main())
