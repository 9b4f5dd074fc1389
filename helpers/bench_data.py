"""Las cifras de ``make bench``, para que los cuadernos las lean en vez de escribirlas.

``make bench`` mide el curso (``python -m benchmarks all``) y guarda todas las
medidas en ``helpers/data/benchmarks.json``: cada cuaderno, cada ejecución de
CartPole de los agentes del curso y de Stable-Baselines3 con cada evaluación,
GRPO (con cada variante del objetivo) y la calificación. BENCHMARKS.md sale
del mismo archivo. Un cuaderno que compara con Stable-Baselines3, o con las
variantes de GRPO (``grpo_variants``), imprime esas cifras desde aquí, así que
nunca se quedan atrás de la última medida.
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


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _grpo_summary(label: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"label": label, "seeds": [r["seed"] for r in runs]}
    for key in (
        "heldout_accuracy",
        "heldout_greedy_accuracy",
        "heldout_pass_at_k",
        "p_correct",
    ):
        summary[key] = _mean([r[key][-1] for r in runs])  # al final
    for key in ("kl_to_reference", "clip_fraction", "train_seconds"):
        summary[key] = _mean([r[key] for r in runs])
    for key in ("wrong_length", "mixed_groups"):  # 10 primeros y 10 últimos pasos
        summary[key] = [_mean([r[key][i] for r in runs]) for i in (0, 1)]
    return summary


def grpo_variants() -> dict[str, dict[str, Any]]:
    """GRPO por defecto y cada variante del objetivo, como las midió ``make bench``.

    Devuelve ``{nombre: resumen}``, empezando por ``"default"`` (la
    configuración por defecto) y siguiendo con las variantes del banco
    (``"kl_0.04"``, ``"kl_0.4"``, ``"epochs_2_clip"``, ``"grpo_norm"``,
    ``"deepseekmath"``). Cada resumen tiene ``label`` y ``seeds``, y las
    medias sobre las semillas de: la precisión a T = 1, voraz, pass@k y
    P(correcta | 17 × 24) al final; ``kl_to_reference`` (KL k3 por token al
    punto de partida, al final); ``clip_fraction``; ``train_seconds``; y
    ``wrong_length`` y ``mixed_groups`` como ``[10 primeros, 10 últimos]``
    pasos.
    """
    data = load()
    summaries = {
        "default": _grpo_summary(
            "por defecto (μ = 1, sin recorte, β = 0, «dr_grpo»)", data["grpo"]
        )
    }
    for variant in data.get("grpo_variants", []):
        label = variant["label"].replace("\\|", "|")
        summaries[variant["name"]] = _grpo_summary(label, variant["runs"])
    return summaries
