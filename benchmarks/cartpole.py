"""CartPole-v1: los agentes del curso junto a Stable-Baselines3, con la misma regla.

La regla, igual para todos: cada ``interval`` pasos de entorno, justo después de
la actualización que aprende de los datos hasta ese paso (quien actualiza por
bloques que no caen en el múltiplo, tras la primera actualización después),
20 episodios con la política voraz mediante :func:`helpers.training.evaluate`,
con las semillas de :func:`helpers.training.evaluation_seed` (el DQN del curso
evalúa con sus propias semillas, ``10 000 + paso``, en ``helpers.dqn``). Una
evaluación con media ≥ 475 se **confirma** en el acto con 100 episodios nuevos
(:func:`helpers.training.confirmation_seed`): el agente «llega» en la primera
evaluación confirmada; si la confirmación no llega, sigue entrenando. Se
cuentan los pasos de entorno de entrenamiento y los segundos de reloj desde el
comienzo del entrenamiento (evaluaciones y confirmaciones incluidas, para los
dos lados). Una ejecución que no llega cuenta con el tope de pasos. PyTorch usa
un hilo por ejecución; con ``jobs=2``, dos ejecuciones van a la vez, una en
cada núcleo, mezclando las del curso y las de SB3.

El momento de la evaluación es el mismo en los dos lados. Los agentes del curso
evalúan al final de su iteración, después del paso de gradiente. SB3 evalúa al
empezar cada rollout (``_on_rollout_start``), que en ``learn`` va justo después
del ``train()`` del rollout anterior; no en ``_on_step``, que SB3 llama
mientras recoge el rollout, antes de aprender de él (así llevaba una
actualización menos que el curso en cada marca: 7 frente a 8 en PPO a los
2048 pasos). Cada evaluación anota cuántas actualizaciones llevaba el agente
(``Run.updates``), y ``tests/test_benchmarks.py`` comprueba que son todas las
que tocan con los pasos dados.

Semillas: las del informe son 0-19 (``REPORT_SEEDS``); los hiperparámetros del
curso se ajustan con otras, 1000-1039 (``TUNING_SEEDS``), con
``python -m benchmarks cartpole``, que no escribe nada. Con 10 semillas, el
ruido entre ellas decidía quién ganaba (lo que en 40 de ajuste se separaba
claramente, en 10 del informe salía empatado o al revés); por eso son 20.

Stable-Baselines3 usa los hiperparámetros de rl-baselines3-zoo para CartPole-v1
(``hyperparams/{dqn,a2c,ppo}.yml``). Es un extra solo del banco de pruebas
(``pip install -e '.[bench]'``), nunca una dependencia del curso.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from helpers.bench_data import (
    CartPoleResult,
    cartpole_result,
    first_solved,
    median_and_quartiles,
    median_ratio_text,
    ratio_interval,
)
from helpers.formatting import number

TARGET = 475.0
EVAL_EPISODES = 20
CONFIRM_EPISODES = 100
INTERVAL = 2048  # pasos de entorno entre evaluaciones voraces
MAX_STEPS = 200_000  # tope por ejecución
REPORT_SEEDS = list(range(20))
TUNING_SEEDS = list(range(1000, 1040))

#: Lo que cada agente del curso promete frente a su par de SB3, sobre las
#: semillas del informe: una mediana de pasos no mayor («pasos»), una de
#: segundos no mayor («segundos»; A2C no la promete) y una caja de pasos
#: (Q3 − Q1) no más ancha («caja»).
BUDGET: dict[str, tuple[str, ...]] = {
    "DQN": ("pasos", "segundos", "caja"),
    "A2C": ("pasos", "caja"),
    "PPO": ("pasos", "segundos", "caja"),
}

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
    """Una ejecución: las evaluaciones ``(pasos, segundos, media, confirmación)``.

    ``confirmación`` es la media de los 100 episodios nuevos, o ``None`` si la
    evaluación no llegó a 475 (entonces no se confirma).
    """

    evaluations: list[tuple] = field(default_factory=list)
    max_steps: int = 0
    #: segundos de reloj de la ejecución entera (hasta llegar o hasta el tope)
    seconds: float = 0.0
    #: las actualizaciones hechas antes de cada evaluación: las veces que el
    #: agente aprendió de sus datos (un rollout en A2C y PPO, con todas sus
    #: épocas; un lote de episodios en REINFORCE; un paso de gradiente en el
    #: DQN del curso; una llamada a ``train()`` en SB3, que en su DQN son 128)
    updates: list[int] = field(default_factory=list)

    @property
    def solved(self) -> tuple[int, float] | None:
        """``(pasos, segundos)`` de la primera evaluación que llega, o ``None``."""
        return first_solved(self.evaluations, TARGET)

    def to_dict(self, seed: int) -> dict[str, Any]:
        return {
            "seed": seed,
            "max_steps": self.max_steps,
            "seconds": self.seconds,
            "evaluations": [list(e) for e in self.evaluations],
            "updates": list(self.updates),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Run:
        return cls(
            [
                (int(e[0]), float(e[1]), float(e[2]), *e[3:])
                for e in data["evaluations"]
            ],
            data["max_steps"],
            data["seconds"],
            list(data.get("updates", [])),  # las medidas de antes no lo guardan
        )


# ---------------------------------------------------------------------------
# Los agentes del curso
# ---------------------------------------------------------------------------


def _from_history(history: Any, max_steps: int) -> Run:
    """Las evaluaciones de una historia del curso (``helpers.training.Evaluation``)."""
    run = Run(max_steps=max_steps)
    for e in history.evaluations:
        run.evaluations.append(
            (
                int(e.env_steps),
                float(e.seconds),
                float(e.mean_return),
                e.confirmed_return,
            )
        )
        run.updates.append(int(e.updates))
    return run


#: Los agentes del curso: ``(clase de configuración, entrenador)``, como
#: ``"módulo:nombre"`` (se importan al usarse). Todos comparten los nombres de
#: la regla del banco (``seed``, ``eval_every`` en pasos de entorno,
#: ``max_env_steps``, ``confirm_episodes``) y devuelven una historia con
#: ``evaluations`` de ``helpers.training.Evaluation``. REINFORCE actualiza por
#: lotes de episodios enteros: evalúa en la primera actualización después de
#: cada múltiplo de ``eval_every``.
COURSE: dict[str, tuple[str, str]] = {
    "DQN": ("helpers.dqn:DQNConfig", "helpers.dqn:train_dqn"),
    "REINFORCE + línea base": (
        "helpers.reinforce:ReinforceConfig",
        "helpers.baselines:train_reinforce_with_baseline",
    ),
    "A2C": ("helpers.actor_critic:A2CConfig", "helpers.actor_critic:train_a2c"),
    "PPO": ("helpers.ppo:PPOConfig", "helpers.ppo:train_ppo"),
}


def _load(path: str) -> Any:
    """``"módulo:nombre"`` -> el objeto."""
    import importlib

    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def course_run(
    name: str, seed: int, interval: int, max_steps: int, **overrides: Any
) -> Run:
    """Una ejecución del agente ``name`` del curso con la regla del banco."""
    config_class, train = (_load(path) for path in COURSE[name])
    config = config_class(
        seed=seed,
        eval_every=interval,
        max_env_steps=max_steps,
        confirm_episodes=CONFIRM_EPISODES,
        **overrides,
    )
    return _from_history(train(config, progress=False), max_steps)


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


def sb3_model(algorithm: str, seed: int) -> Any:
    """El modelo de SB3 de ``algorithm`` con los hiperparámetros del zoo, sin entrenar.

    Su entorno (``model.get_env()``) son las ``n_envs`` copias de CartPole-v1
    del zoo, con la semilla ``seed``.
    """
    import stable_baselines3 as sb3
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.utils import LinearSchedule

    zoo = ZOO[algorithm]
    kwargs = dict(zoo["kwargs"])
    for key, value in kwargs.items():  # «lin_0.001»: lineal de 0,001 a 0
        if isinstance(value, str) and value.startswith("lin_"):
            kwargs[key] = LinearSchedule(float(value[4:]), 0.0, 1.0)
    env = make_vec_env("CartPole-v1", n_envs=zoo["n_envs"], seed=seed)
    return getattr(sb3, algorithm)("MlpPolicy", env, seed=seed, device="cpu", **kwargs)


def sb3_updates_per_train(model: Any) -> int:
    """Cuánto suma ``model._n_updates`` en cada ``train()`` de SB3.

    SB3 cuenta épocas en PPO (sin ``target_kl``, como en el zoo, siempre
    ``n_epochs``), pasos de gradiente en DQN y una por ``train()`` en A2C.
    """
    from stable_baselines3 import DQN, PPO

    if isinstance(model, PPO):
        if model.target_kl is not None:  # cortaría las épocas: la cuenta no vale
            raise ValueError("sb3_updates_per_train supone PPO sin target_kl")
        return model.n_epochs
    if isinstance(model, DQN):
        if model.gradient_steps <= 0:  # −1: tantos como pasos; la cuenta no vale
            raise ValueError("sb3_updates_per_train supone gradient_steps > 0")
        return model.gradient_steps
    return 1


def sb3_run(algorithm: str, seed: int, interval: int, max_steps: int) -> Run:
    """Entrena ``algorithm`` de SB3 con los hiperparámetros del zoo.

    Evalúa al empezar cada rollout, justo después del ``train()`` del anterior
    (y al acabar cada llamada a ``learn``, tras su último ``train()``), la
    primera vez que se ha pasado una marca de ``interval`` pasos. Como el curso,
    se para tras la actualización que llega al tope, o al llegar a 475.
    """
    from stable_baselines3.common.callbacks import BaseCallback

    from helpers.training import confirmation_seed, evaluate, evaluation_seed

    run = Run(max_steps=max_steps)
    model = sb3_model(algorithm, seed)
    per_train = sb3_updates_per_train(model)

    class GreedyEvaluation(BaseCallback):
        start: float | None = None
        next_mark = interval
        stop = False

        def _on_training_start(self) -> None:
            if self.start is None:  # la segunda llamada a learn sigue el reloj
                self.start = time.perf_counter()

        def _on_rollout_start(self) -> None:
            # Aquí ya corrió el train() del rollout anterior (el del paso
            # ``num_timesteps``): nada de lo recogido espera su actualización.
            self._evaluate_if_due()
            if run.solved is not None or self.model.num_timesteps >= max_steps:
                self.stop = True  # _on_step corta el rollout recién empezado

        def _on_training_end(self) -> None:
            # El train() del último rollout de learn no tiene rollout detrás.
            self._evaluate_if_due()

        def _on_step(self) -> bool:
            return not self.stop

        def _evaluate_if_due(self) -> None:
            steps = self.model.num_timesteps
            if self.stop or steps < self.next_mark:
                return
            self.next_mark = (steps // interval + 1) * interval
            index = len(run.evaluations)
            policy = _SB3Policy(self.model)
            score = float(
                evaluate(
                    policy,
                    n_episodes=EVAL_EPISODES,
                    seed=evaluation_seed(seed, index),
                ).mean()
            )
            confirmed = None
            if score >= TARGET:
                confirmed = float(
                    evaluate(
                        policy,
                        n_episodes=CONFIRM_EPISODES,
                        seed=confirmation_seed(seed, index),
                    ).mean()
                )
            seconds = time.perf_counter() - self.start
            run.evaluations.append((steps, seconds, score, confirmed))
            run.updates.append(self.model._n_updates // per_train)

    # El total del zoo fija los calendarios (ε, tasa de aprendizaje, recorte);
    # la llamada se detiene antes, al llegar a 475 o a ``max_steps``. Si el
    # total del zoo (50 000 pasos en DQN, 100 000 en PPO) se acaba antes del
    # tope sin llegar, se sigue hasta el tope, como el curso: SB3 recalcula
    # entonces sus calendarios sobre el total nuevo (ε ya está en su mínimo).
    callback = GreedyEvaluation()
    model.learn(total_timesteps=ZOO[algorithm]["n_timesteps"], callback=callback)
    if run.solved is None and model.num_timesteps < max_steps:
        model.learn(
            total_timesteps=max_steps - model.num_timesteps,
            callback=callback,
            reset_num_timesteps=False,
        )
    model.get_env().close()
    return run


# ---------------------------------------------------------------------------
# Medir: cada (agente, semilla) es un trabajo; van ``jobs`` a la vez
# ---------------------------------------------------------------------------


def _one_run(job: tuple[str, str | None, int, int, int, dict]) -> dict[str, Any]:
    """Un trabajo: ``(agente, algoritmo de SB3 o None, semilla, ...)``."""
    name, sb3_algorithm, seed, interval, max_steps, overrides = job
    torch.set_num_threads(1)
    start = time.perf_counter()
    if sb3_algorithm is not None:
        run = sb3_run(sb3_algorithm, seed, interval, max_steps)
    else:
        run = course_run(name, seed, interval, max_steps, **overrides)
    run.seconds = time.perf_counter() - start
    return run.to_dict(seed)


def measure(
    seeds: list[int],
    interval: int,
    max_steps: int,
    progress: Callable[[str], None],
    jobs: int = 2,
    agents: list[str] | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    sb3: bool = True,
) -> list[dict[str, Any]]:
    """Ejecuta cada agente del curso (y su par de SB3) con cada semilla.

    Args:
        seeds: las semillas (las mismas para el curso y SB3).
        interval, max_steps: la regla de evaluación y el tope.
        progress: recibe un mensaje por ejecución terminada.
        jobs: ejecuciones a la vez (una por núcleo).
        agents: solo estos agentes del curso (por defecto, todos).
        overrides: cambios de configuración por agente, para ajustar
            (``{"PPO": {"n_epochs": 10}}``).
        sb3: medir también Stable-Baselines3.

    Returns:
        Un diccionario por agente (``name``; ``sb3_of``, el agente del curso con
        el que se compara uno de SB3; ``runs``, con las evaluaciones de cada
        semilla, en el orden de ``seeds``), listo para JSON.
    """
    names = agents or list(COURSE)
    overrides = overrides or {}
    work: list[tuple[str, str | None, int, int, int, dict]] = []
    for name in names:
        for seed in seeds:
            work.append(
                (name, None, seed, interval, max_steps, overrides.get(name, {}))
            )
            if sb3 and name in ZOO:
                work.append((f"{name} · SB3", name, seed, interval, max_steps, {}))
    results: dict[tuple[str, int], dict[str, Any]] = {}
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=context) as pool:
        futures = {pool.submit(_one_run, job): job for job in work}
        for future in as_completed(futures):
            job = futures[future]
            run = future.result()
            results[(job[0], job[2])] = run
            solved = Run.from_dict(run).solved
            progress(
                f"{job[0]}, semilla {job[2]}: "
                + (f"llega en {solved[0]} pasos" if solved else "no llega")
            )
    measured = []
    for name in names:
        measured.append(
            {"name": name, "sb3_of": None, "runs": [results[(name, s)] for s in seeds]}
        )
        if sb3 and name in ZOO:
            label = f"{name} · SB3"
            measured.append(
                {
                    "name": label,
                    "sb3_of": name,
                    "runs": [results[(label, s)] for s in seeds],
                }
            )
    return measured


# ---------------------------------------------------------------------------
# La tabla
# ---------------------------------------------------------------------------


def _compare(
    course: CartPoleResult, sb3: CartPoleResult, name: str
) -> tuple[str, str, str]:
    """Las razones curso/SB3 de las medianas de pasos y de segundos, con sus
    intervalos (:func:`helpers.bench_data.median_ratio_text`), y las promesas
    de ``BUDGET[name]`` que se cumplen (:func:`budget_marks`)."""
    return (
        median_ratio_text(course.all_steps, sb3.all_steps),
        median_ratio_text(course.all_seconds, sb3.all_seconds),
        budget_marks(course, sb3, BUDGET[name]),
    )


def budget_marks(
    course: CartPoleResult, sb3: CartPoleResult, promises: tuple[str, ...]
) -> str:
    """«✓ pasos · ✓ segundos · ✗ caja 1,20 (0,50–2,10)»: qué promesas de
    ``BUDGET`` se cumplen.

    Compara las medianas y las cajas (Q1–Q3) de pasos de todas las semillas
    (las que no llegan, con el tope), como la tabla. La caja lleva su razón
    curso/SB3 y el intervalo del 90 % por remuestreo
    (:func:`helpers.bench_data.ratio_interval`): la tabla no da otro.
    """
    kept = {
        "pasos": course.median_steps <= sb3.median_steps,
        "segundos": course.median_seconds <= sb3.median_seconds,
        "caja": course.steps_box <= sb3.steps_box,
    }
    low, high = ratio_interval(course.all_steps, sb3.all_steps, "box")
    box = number(course.steps_box / sb3.steps_box, 2) if sb3.steps_box else "—"
    if sb3.steps_box and low == low:  # sin intervalo si es nan
        box += f" ({number(low, 2)}–{number(high, 2)})"
    shown = {"caja": f"caja {box}"}
    return " · ".join(f"{'✓' if kept[p] else '✗'} {shown.get(p, p)}" for p in promises)


def render_table(
    agents: list[dict[str, Any]], n_seeds: int, target: float = TARGET
) -> list[str]:
    """Las filas de la tabla Markdown, con las razones curso/SB3 de las medianas.

    Cada razón lleva entre paréntesis su intervalo del 90 % por remuestreo
    (:func:`helpers.bench_data.median_ratio_text`).

    La última columna dice qué promesas de ``BUDGET`` cumple cada agente del
    curso frente a su par (:func:`budget_marks`).

    Las medianas y los cuartiles cuentan todas las semillas; las que no llegan,
    con el tope de pasos (y los segundos hasta él).
    """
    results = {a["name"]: cartpole_result(a, target) for a in agents}
    pairs = {a["sb3_of"]: a["name"] for a in agents if a["sb3_of"]}
    lines = [
        "| agente | llegan | pasos: mediana [Q1–Q3] | pasos: mín.–máx. "
        "| segundos: mediana [Q1–Q3] | pasos curso/SB3 | segundos curso/SB3 "
        "| presupuesto frente a SB3 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, result in results.items():
        steps, seconds, marks = (
            _compare(result, results[pairs[name]], name) if name in pairs else ("",) * 3
        )
        low, high = min(result.all_steps), max(result.all_steps)
        lines.append(
            f"| {name} | {result.n_solved}/{n_seeds} "
            f"| {median_and_quartiles(result.all_steps, 0)} "
            f"| {number(low, 0)}–{number(high, 0)} "
            f"| {median_and_quartiles(result.all_seconds, 1)} "
            f"| {steps} | {seconds} | {marks} |"
        )
    return lines


def summary(agents: list[dict[str, Any]], target: float = TARGET) -> list[str]:
    """Una línea por agente, para ajustar: mediana y cuartiles de pasos y segundos.

    Si se midió también su par de SB3, una línea más con las razones de las
    medianas, curso/SB3, sus intervalos del 90 % por remuestreo y las
    promesas de ``BUDGET`` que se cumplen (:func:`budget_marks`).
    """
    results = {a["name"]: cartpole_result(a, target) for a in agents}
    lines = []
    for agent in agents:
        result = results[agent["name"]]
        lines.append(
            f"{agent['name']:<26} llegan {result.n_solved}/{len(result.seeds)} · "
            f"pasos {median_and_quartiles(result.all_steps, 0)} · "
            f"segundos {median_and_quartiles(result.all_seconds, 1)}"
        )
        course = results.get(agent["sb3_of"])
        if course is not None:
            steps, seconds, marks = _compare(course, result, agent["sb3_of"])
            lines.append(
                f"{'':<26} curso/SB3: pasos {steps} · segundos {seconds} · {marks}"
            )
    return lines


def tune_main(
    seeds: list[int],
    agents: list[str] | None,
    overrides: dict[str, dict[str, Any]],
    sb3: bool,
    jobs: int,
    max_steps: int,
) -> int:
    """``python -m benchmarks cartpole``: medir en otras semillas, sin escribir.

    Un ``max_steps`` menor que el del informe abrevia las ejecuciones que no
    llegan (para buscar semillas que se atascan sin esperar al tope).
    """
    start = time.perf_counter()
    measured = measure(
        seeds,
        INTERVAL,
        max_steps,
        lambda message: print("·", message, flush=True),
        jobs=jobs,
        agents=agents,
        overrides=overrides,
        sb3=sb3,
    )
    if overrides:
        print("cambios:", overrides)
    print("\n".join(summary(measured)))
    print(f"{number(time.perf_counter() - start, 0)} s en total")
    return 0


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
