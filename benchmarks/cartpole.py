"""CartPole-v1: los agentes del curso junto a Stable-Baselines3, con la misma regla.

La regla, igual para todos: cada ``interval`` pasos de entorno (o en la primera
actualización después, para quien actualiza por lotes), 20 episodios con la
política voraz mediante :func:`helpers.training.evaluate`, con las semillas
de :func:`helpers.training.evaluation_seed` (el DQN del curso evalúa con sus
propias semillas, ``10 000 + paso``, en ``helpers.dqn``); el agente «llega» en
la primera evaluación cuya media es ≥ 475. Se cuentan los pasos de entorno de
entrenamiento y los segundos de reloj desde el comienzo del entrenamiento
(evaluaciones incluidas, para los dos lados). PyTorch usa un hilo.

Stable-Baselines3 usa los hiperparámetros de rl-baselines3-zoo para CartPole-v1
(``hyperparams/{dqn,a2c,ppo}.yml``). Es un extra solo del banco de pruebas
(``pip install -e '.[bench]'``), nunca una dependencia del curso.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from helpers.bench_data import cartpole_result, first_solved
from helpers.formatting import number

TARGET = 475.0
EVAL_EPISODES = 20

# rl-baselines3-zoo, hyperparams/*.yml, entrada CartPole-v1.
ZOO: dict[str, dict[str, Any]] = {
    "DQN": dict(
        n_envs=1,
        n_timesteps=50_000,
        kwargs=dict(
            learning_rate=2.3e-3,
            batch_size=64,
            buffer_size=100_000,
            learning_starts=1000,
            gamma=0.99,
            target_update_interval=10,
            train_freq=256,
            gradient_steps=128,
            exploration_fraction=0.16,
            exploration_final_eps=0.04,
            policy_kwargs=dict(net_arch=[256, 256]),
        ),
    ),
    "A2C": dict(n_envs=8, n_timesteps=500_000, kwargs=dict(ent_coef=0.0)),
    "PPO": dict(
        n_envs=8,
        n_timesteps=100_000,
        kwargs=dict(
            n_steps=32,
            batch_size=256,
            gae_lambda=0.8,
            gamma=0.98,
            n_epochs=20,
            ent_coef=0.0,
            learning_rate="lin_0.001",
            clip_range="lin_0.2",
        ),
    ),
}


@dataclass
class Run:
    """Una ejecución: las evaluaciones ``(pasos, segundos, media voraz)``."""

    evaluations: list[tuple[int, float, float]] = field(default_factory=list)
    max_steps: int = 0

    @property
    def solved(self) -> tuple[int, float] | None:
        """``(pasos, segundos)`` de la primera evaluación ≥ 475, o ``None``."""
        return first_solved(self.evaluations, TARGET)

    def to_dict(self, seed: int) -> dict[str, Any]:
        return {
            "seed": seed,
            "max_steps": self.max_steps,
            "evaluations": [list(e) for e in self.evaluations],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Run:
        return cls(
            [(int(s), float(t), float(m)) for s, t, m in data["evaluations"]],
            data["max_steps"],
        )


# ---------------------------------------------------------------------------
# Los agentes del curso
# ---------------------------------------------------------------------------


def _from_history(history: Any, max_steps: int) -> Run:
    run = Run(max_steps=max_steps)
    for evaluation in history.evaluations:
        if isinstance(evaluation, tuple):  # DQN: (pasos, media, segundos)
            steps, score, seconds = evaluation
        else:  # helpers.training.Evaluation
            steps, seconds, score = (
                evaluation.env_steps,
                evaluation.seconds,
                evaluation.mean_return,
            )
        run.evaluations.append((int(steps), float(seconds), float(score)))
    return run


def course_dqn(seed: int, interval: int, max_steps: int) -> Run:
    from helpers.dqn import DQNConfig, train_dqn

    config = DQNConfig(seed=seed, eval_every=interval, total_steps=max_steps)
    return _from_history(train_dqn(config, progress=False), max_steps)


def course_reinforce(seed: int, interval: int, max_steps: int) -> Run:
    from helpers.baselines import train_reinforce_with_baseline
    from helpers.reinforce import ReinforceConfig

    # REINFORCE actualiza por lotes de episodios enteros: evalúa en la primera
    # actualización después de cada múltiplo de ``interval``.
    config = ReinforceConfig(
        seed=seed, max_env_steps=max_steps, eval_every=0, eval_every_steps=interval
    )
    return _from_history(
        train_reinforce_with_baseline(config, progress=False), max_steps
    )


def course_a2c(seed: int, interval: int, max_steps: int) -> Run:
    from helpers.actor_critic import A2CConfig, train_a2c

    config = A2CConfig(seed=seed, eval_every=interval, max_env_steps=max_steps)
    return _from_history(train_a2c(config, progress=False), max_steps)


def course_ppo(seed: int, interval: int, max_steps: int) -> Run:
    from helpers.ppo import PPOConfig, train_ppo

    config = PPOConfig(seed=seed, eval_every=interval, max_env_steps=max_steps)
    return _from_history(train_ppo(config, progress=False), max_steps)


COURSE: dict[str, Callable[[int, int, int], Run]] = {
    "DQN": course_dqn,
    "REINFORCE + línea base": course_reinforce,
    "A2C": course_a2c,
    "PPO": course_ppo,
}

# ---------------------------------------------------------------------------
# Stable-Baselines3
# ---------------------------------------------------------------------------


class _SB3Policy:
    """Adapta un modelo de SB3 a ``act(obs, greedy)`` de ``helpers.reinforce``."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def act(self, obs: torch.Tensor, greedy: bool = False) -> torch.Tensor:
        actions, _ = self.model.predict(obs.numpy(), deterministic=greedy)
        return torch.as_tensor(actions)


def sb3_run(algorithm: str, seed: int, interval: int, max_steps: int) -> Run:
    """Entrena ``algorithm`` de SB3 con los hiperparámetros del zoo."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.utils import LinearSchedule

    from helpers.training import evaluate, evaluation_seed

    zoo = ZOO[algorithm]
    kwargs = dict(zoo["kwargs"])
    for key, value in kwargs.items():  # «lin_0.001»: lineal de 0,001 a 0
        if isinstance(value, str) and value.startswith("lin_"):
            kwargs[key] = LinearSchedule(float(value[4:]), 0.0, 1.0)
    run = Run(max_steps=max_steps)

    class GreedyEvaluation(BaseCallback):
        def _on_training_start(self) -> None:
            self.start = time.perf_counter()
            self.next_mark = interval

        def _on_step(self) -> bool:
            if self.num_timesteps >= max_steps:
                return False
            if self.num_timesteps < self.next_mark:
                return True
            self.next_mark += interval
            score = float(
                evaluate(
                    _SB3Policy(self.model),
                    n_episodes=EVAL_EPISODES,
                    seed=evaluation_seed(seed, len(run.evaluations)),
                ).mean()
            )
            seconds = time.perf_counter() - self.start
            run.evaluations.append((self.num_timesteps, seconds, score))
            return score < TARGET

    env = make_vec_env("CartPole-v1", n_envs=zoo["n_envs"], seed=seed)
    model = getattr(sb3, algorithm)("MlpPolicy", env, seed=seed, device="cpu", **kwargs)
    # El total del zoo fija los calendarios (ε, tasa de aprendizaje, recorte);
    # la llamada se detiene antes, al llegar a 475 o a ``max_steps``.
    model.learn(total_timesteps=zoo["n_timesteps"], callback=GreedyEvaluation())
    env.close()
    return run


# ---------------------------------------------------------------------------
# La tabla
# ---------------------------------------------------------------------------


def measure(
    seeds: list[int], interval: int, max_steps: int, progress: Callable[[str], None]
) -> list[dict[str, Any]]:
    """Ejecuta cada agente del curso (y su par de SB3) con cada semilla.

    Returns:
        Un diccionario por agente (``name``; ``sb3_of``, el agente del curso con
        el que se compara uno de SB3; ``runs``, con las evaluaciones
        ``[pasos, segundos, media]`` de cada semilla), listo para JSON.
    """
    torch.set_num_threads(1)
    agents = []
    for name, runner in COURSE.items():
        course_runs, sb3_runs = [], []
        for seed in seeds:
            progress(f"{name} (curso), semilla {seed}")
            course_runs.append(runner(seed, interval, max_steps).to_dict(seed))
            if name in ZOO:
                progress(f"{name} (Stable-Baselines3), semilla {seed}")
                sb3_runs.append(sb3_run(name, seed, interval, max_steps).to_dict(seed))
        agents.append({"name": name, "sb3_of": None, "runs": course_runs})
        if sb3_runs:
            agents.append({"name": f"{name} · SB3", "sb3_of": name, "runs": sb3_runs})
    return agents


def _describe(values: list[float], decimals: int) -> str:
    """«mediana (mínimo–máximo)», o «no llegó» si ninguna semilla llegó."""
    if not values:
        return "no llegó"
    median, low, high = (
        number(x, decimals)
        for x in (statistics.median(values), min(values), max(values))
    )
    return f"{median} ({low}–{high})"


def render_table(
    agents: list[dict[str, Any]], n_seeds: int, target: float = TARGET
) -> list[str]:
    """Las filas de la tabla Markdown, con las razones curso/SB3 de las medianas."""
    results = {a["name"]: cartpole_result(a, target) for a in agents}
    pairs = {a["sb3_of"]: a["name"] for a in agents if a["sb3_of"]}
    lines = [
        "| agente | llegan | pasos: mediana (rango) | segundos: mediana (rango) "
        "| pasos curso/SB3 | segundos curso/SB3 |",
        "|---|---|---|---|---|---|",
    ]
    for name, result in results.items():
        ratios = ["", ""]
        if name in pairs:
            sb3 = results[pairs[name]]
            for i, field_name in enumerate(("steps", "seconds")):
                ours, theirs = getattr(result, field_name), getattr(sb3, field_name)
                ratios[i] = (
                    number(statistics.median(ours) / statistics.median(theirs), 2)
                    if ours and theirs
                    else "—"
                )
        lines.append(
            f"| {name} | {result.n_solved}/{n_seeds} "
            f"| {_describe(result.steps, 0)} | {_describe(result.seconds, 1)} "
            f"| {ratios[0]} | {ratios[1]} |"
        )
    return lines


def numpy_seed_note() -> str:
    """Versión de las bibliotecas que deciden los números."""
    import gymnasium

    try:
        import stable_baselines3

        sb3_version = stable_baselines3.__version__
    except ImportError:  # pragma: no cover - solo sin el extra «bench»
        sb3_version = "no instalado"
    return (
        f"torch {torch.__version__}, numpy {np.__version__}, gymnasium "
        f"{gymnasium.__version__}, stable-baselines3 {sb3_version}"
    )
