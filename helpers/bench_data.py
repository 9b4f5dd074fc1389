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
        evaluations: por semilla, las evaluaciones ``(pasos, segundos, media)``
            o ``(pasos, segundos, media, confirmación)``.
        all_steps: los pasos de todas las semillas, en orden; las que no
            llegaron cuentan con el tope (``max_steps``).
        all_seconds: igual, en segundos; las que no llegaron, los de la
            ejecución entera hasta el tope.
        reached: por semilla, si llegó (:func:`first_solved`).
    """

    name: str
    seeds: list[int]
    evaluations: list[list[tuple]]
    all_steps: list[int]
    all_seconds: list[float]
    reached: list[bool]

    @property
    def steps(self) -> list[int]:
        """Pasos de entorno hasta «llegar», de cada semilla que llegó."""
        return [s for s, ok in zip(self.all_steps, self.reached, strict=True) if ok]

    @property
    def seconds(self) -> list[float]:
        """Los segundos de reloj correspondientes a ``steps``."""
        return [s for s, ok in zip(self.all_seconds, self.reached, strict=True) if ok]

    @property
    def n_solved(self) -> int:
        return sum(self.reached)

    @property
    def median_steps(self) -> float:
        """Mediana de pasos sobre todas las semillas (las que no llegan, al tope)."""
        return statistics.median(self.all_steps)

    @property
    def median_seconds(self) -> float:
        """Mediana de segundos sobre todas las semillas."""
        return statistics.median(self.all_seconds)

    @property
    def steps_quartiles(self) -> tuple[float, float]:
        """Primer y tercer cuartil de los pasos (todas las semillas)."""
        return quartiles(self.all_steps)

    @property
    def steps_box(self) -> float:
        """Ancho de la caja de pasos, ``Q3 − Q1``: cuánto varían las semillas."""
        q1, q3 = self.steps_quartiles
        return q3 - q1

    @property
    def seconds_quartiles(self) -> tuple[float, float]:
        """Primer y tercer cuartil de los segundos (todas las semillas)."""
        return quartiles(self.all_seconds)

    def rank(self, seed: int) -> int:
        """Puesto de ``seed`` entre las semillas, de menos a más pasos (1 = la
        que menos necesitó; los empates comparten el mejor puesto)."""
        steps = self.all_steps[self.seeds.index(seed)]
        return 1 + sum(other < steps for other in self.all_steps)

    def describe(self) -> str:
        """Una línea: semillas que llegan, y pasos y segundos (mediana [Q1–Q3])."""
        missing = len(self.seeds) - self.n_solved
        capped = (
            ""
            if not missing
            else " (la que no llega, al tope)"
            if missing == 1
            else f" (las {missing} que no llegan, al tope)"
        )
        return (
            f"llegan {self.n_solved} de {len(self.seeds)}{capped} · pasos: "
            f"mediana {median_and_quartiles(self.all_steps, 0)} · segundos de "
            f"reloj: mediana {median_and_quartiles(self.all_seconds, 1)}"
        )


def quartiles(values: list[float]) -> tuple[float, float]:
    """``(Q1, Q3)``, con el método inclusivo (el de ``numpy.percentile``)."""
    if len(values) == 1:
        return values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q3


def median_and_quartiles(values: list[float], decimals: int) -> str:
    """«mediana [Q1–Q3]» con ``decimals`` decimales, como en BENCHMARKS.md."""
    from helpers.formatting import number

    q1, q3 = quartiles(values)
    median, low, high = (
        number(x, decimals) for x in (statistics.median(values), q1, q3)
    )
    return f"{median} [{low}–{high}]"


def ratio_interval(
    ours: list[float],
    theirs: list[float],
    statistic: str = "median",
    level: float = 0.9,
    draws: int = 10_000,
    seed: int = 0,
) -> tuple[float, float]:
    """Intervalo por remuestreo de la razón ``estadístico(ours) /
    estadístico(theirs)``; el estadístico es la mediana (``"median"``) o la
    anchura de la caja, Q3 − Q1 (``"box"``).

    Es el *bootstrap* de percentiles de la estadística (Efron, 1979), que no
    tiene que ver con el de los objetivos TD. Se remuestrean las semillas de
    cada lado, con reemplazo y por separado, ``draws`` veces; el intervalo va
    del percentil ``(1 − level)/2`` al ``(1 + level)/2`` de las razones. Dice
    cuánto podría moverse la razón con otras tantas semillas: si contiene 1, la
    diferencia cabe en el ruido entre semillas y ninguno de los dos gana de
    verdad. El generador tiene semilla, así que el mismo dato da siempre el
    mismo intervalo.

    Returns:
        ``(bajo, alto)``; ``(nan, nan)`` si algún valor de ``theirs`` no es
        positivo (una mediana remuestreada podría ser 0).
    """
    import numpy as np

    a, b = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    if b.min() <= 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)

    def resampled(values: np.ndarray) -> np.ndarray:
        samples = values[rng.integers(0, len(values), (draws, len(values)))]
        if statistic == "median":
            return np.median(samples, axis=1)
        q1, q3 = np.percentile(samples, [25, 75], axis=1)
        return q3 - q1

    levels = [50 * (1 - level), 50 * (1 + level)]
    if statistic == "median":
        ratios = resampled(a) / resampled(b)
        low, high = np.percentile(ratios, levels)
        return float(low), float(high)
    # Una caja remuestreada puede medir 0: x/0 es ∞ (la otra varía
    # infinitamente más) y 0/0 no dice nada (fuera). Sin interpolar, el
    # percentil es una de las razones remuestreadas, también ∞.
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = resampled(a) / resampled(b)
    ratios = ratios[~np.isnan(ratios)]
    if not len(ratios):
        return float("nan"), float("nan")
    low = np.percentile(ratios, levels[0], method="lower")
    high = np.percentile(ratios, levels[1], method="higher")
    return float(low), float(high)


def median_ratio_interval(
    ours: list[float],
    theirs: list[float],
    level: float = 0.9,
    draws: int = 10_000,
    seed: int = 0,
) -> tuple[float, float]:
    """Intervalo por remuestreo de la razón ``mediana(ours) / mediana(theirs)``
    (:func:`ratio_interval` con la mediana)."""
    return ratio_interval(ours, theirs, "median", level, draws, seed)


def median_ratio_text(ours: list[float], theirs: list[float]) -> str:
    """«0,67 (0,60–0,85)»: la razón de medianas y su intervalo del 90 % por remuestreo.

    «—» si la mediana de ``theirs`` es 0; sin intervalo si algún valor de
    ``theirs`` no es positivo (ver :func:`median_ratio_interval`).
    """
    import math

    from helpers.formatting import number

    theirs_median = statistics.median(theirs)
    if not theirs_median:
        return "—"
    ratio = number(statistics.median(ours) / theirs_median, 2)
    low, high = median_ratio_interval(ours, theirs)
    if math.isnan(low):
        return ratio
    return f"{ratio} ({number(low, 2)}–{number(high, 2)})"


def first_solved(evaluations: list[tuple], target: float) -> tuple[int, float] | None:
    """``(pasos, segundos)`` de la primera evaluación que «llega».

    Llega si su media es ≥ ``target`` y, si lleva confirmación (un cuarto
    elemento: la media en episodios nuevos), si la confirmación también lo es.
    Es la regla de ``make bench``, la misma para todos los agentes.
    """
    for steps, seconds, score, *confirmation in evaluations:
        confirmed = confirmation[0] if confirmation else None
        if score >= target and (confirmed is None or confirmed >= target):
            return steps, seconds
    return None


def cartpole_result(agent: dict[str, Any], target: float) -> CartPoleResult:
    """Un agente tal como lo guarda ``make bench`` (``name`` y ``runs``)."""
    evaluations, all_steps, all_seconds, reached = [], [], [], []
    for run in agent["runs"]:
        evals = [
            (int(e[0]), float(e[1]), float(e[2]), *([e[3]] if len(e) > 3 else []))
            for e in run["evaluations"]
        ]
        evaluations.append(evals)
        solved = first_solved(evals, target)
        reached.append(solved is not None)
        if solved is not None:
            all_steps.append(solved[0])
            all_seconds.append(solved[1])
        else:
            all_steps.append(int(run["max_steps"]))
            all_seconds.append(float(run["seconds"]))
    return CartPoleResult(
        agent["name"],
        [r["seed"] for r in agent["runs"]],
        evaluations,
        all_steps,
        all_seconds,
        reached,
    )


def seed_list(seeds: list[int]) -> str:
    """Unas semillas en texto: «0–19» si son seguidas, si no «3, 5, 7»."""
    if len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(map(str, seeds))


def cartpole_rule() -> str:
    """La regla de «llegar» de la última medida de CartPole, en una frase."""
    from helpers.formatting import number

    rule = load()["cartpole"]
    seeds = rule["seeds"]
    confirm = rule.get("confirm_episodes")
    return (
        f"{len(seeds)} semillas ({seed_list(seeds)}) · cada "
        f"{number(rule['interval'], 0)} pasos, {rule['eval_episodes']} episodios "
        f"voraces; llega con media ≥ {number(rule['target'], 0)}"
        + (f", confirmada en {confirm} episodios nuevos" if confirm else "")
        + f" · tope {number(rule['max_steps'], 0)} pasos"
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
