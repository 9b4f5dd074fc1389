"""Las cifras de ``make bench``, para que los cuadernos las lean en vez de escribirlas.

``make bench`` mide el curso (``python -m benchmarks all``) y guarda todas las
medidas en ``helpers/data/benchmarks.json``: cada cuaderno, cada ejecución de
CartPole de los agentes del curso y de Stable-Baselines3 con cada evaluación,
GRPO y la calificación. BENCHMARKS.md sale del mismo archivo. Un cuaderno que
compara con Stable-Baselines3 imprime esas cifras desde aquí, así que nunca se
quedan atrás de la última medida.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "benchmarks.json"


@cache
def load() -> dict[str, Any]:
    """Todas las medidas de la última ejecución de ``make bench``."""
    return json.loads(DATA.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class CartPoleResult:
    """Un agente en CartPole-v1 sobre las semillas del banco.

    Attributes:
        name: «PPO», «PPO · SB3»...
        seeds: las semillas medidas.
        steps: pasos de entorno hasta la primera evaluación voraz ≥ objetivo, de
            cada semilla que llegó.
        seconds: los segundos de reloj correspondientes.
        evaluations: por semilla, las evaluaciones ``(pasos, segundos, media)``.
    """

    name: str
    seeds: list[int]
    steps: list[int]
    seconds: list[float]
    evaluations: list[list[tuple[int, float, float]]]

    @property
    def n_solved(self) -> int:
        return len(self.steps)

    @property
    def median_steps(self) -> float:
        return statistics.median(self.steps)

    @property
    def median_seconds(self) -> float:
        return statistics.median(self.seconds)


def first_solved(
    evaluations: list[tuple[int, float, float]], target: float
) -> tuple[int, float] | None:
    """``(pasos, segundos)`` de la primera evaluación con media ≥ ``target``.

    Es la regla de «llega» de ``make bench``, la misma para todos los agentes.
    """
    for steps, seconds, score in evaluations:
        if score >= target:
            return steps, seconds
    return None


def cartpole_result(agent: dict[str, Any], target: float) -> CartPoleResult:
    """Un agente tal como lo guarda ``make bench`` (``name`` y ``runs``)."""
    steps, seconds, evaluations = [], [], []
    for run in agent["runs"]:
        evals = [(int(s), float(t), float(m)) for s, t, m in run["evaluations"]]
        evaluations.append(evals)
        solved = first_solved(evals, target)
        if solved is not None:
            steps.append(solved[0])
            seconds.append(solved[1])
    return CartPoleResult(
        agent["name"], [r["seed"] for r in agent["runs"]], steps, seconds, evaluations
    )


def cartpole(name: str) -> CartPoleResult:
    """Lo que midió ``make bench`` para el agente ``name`` («DQN», «DQN · SB3»...)."""
    data = load()["cartpole"]
    agents = {agent["name"]: agent for agent in data["agents"]}
    if name not in agents:
        raise KeyError(f"{name!r} no está en el banco; hay: {sorted(agents)}")
    return cartpole_result(agents[name], data["target"])
