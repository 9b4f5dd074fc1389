"""Módulo 05 · Ejecuciones de A2C precalculadas: tronco compartido y colapsos.

Dos preguntas del módulo 05 necesitan más entrenamiento del que cabe en su
cuaderno.

**Tronco compartido o redes separadas, con el mismo ``c_V``.** A2C con el
tronco compartido entre actor y crítico aprende peor que con dos redes
separadas. Para saber por qué hay que cambiar **una sola cosa** a la vez: aquí
se entrena A2C (:func:`helpers.actor_critic.train_a2c`) con las dos
arquitecturas y los mismos pesos del crítico ``c_V`` (0,5, el de
``A2CConfig``, y 0,01), y además el tronco compartido con ``c_V = 0,5`` sin
recorte del gradiente, para ver si el recorte tiene la culpa, y con PopArt
(:class:`helpers.actor_critic.PopArt`: los objetivos del crítico
normalizados), para ver si la culpa es de su escala. Tres semillas cada uno,
con un tope de pasos.

Cada ``TRACE_EVERY`` actualizaciones del tronco compartido se mide qué hace
cada pérdida en las capas comunes (:func:`trunk_gradients`): la norma del
gradiente del actor (gradiente de política y entropía) y la del crítico
(``c_V`` por la regresión), y el coseno entre el gradiente total y el del
actor. Si el crítico domina, ese coseno cae hacia 0: las capas que lee el
actor se mueven hacia donde le conviene al crítico.

**Los colapsos de A2C.** La ejecución ``"separadas, c_V = 0,5, sin parar"``
es el A2C de ``A2CConfig`` sin parar al llegar a 475: deja ver si la política
voraz, una vez buena, se mantiene o se hunde (:func:`collapses`).

Entrenar las siete configuraciones con tres semillas tarda unos minutos:
demasiado para el cuaderno, que lee lo guardado en
``helpers/data/a2c_runs.json``::

    {"config": {orden, tope, semillas, versiones, fecha...},
     "runs": {nombre: {str(semilla): {"eval_steps": [...],
                                        "eval_returns": [...],
                                        "solved_steps": int | None,
                                        "trace_steps": [...],
                                        "actor_norm": [...],
                                        "critic_norm": [...],
                                        "actor_cosine": [...]}}}}

Uso::

    python -m helpers.a2c_runs --write           # rehacer el archivo
    python -m helpers.a2c_runs --check            # el principio de cada una

Con un hilo y la misma máquina todo se reproduce; en otra CPU el redondeo de
float32 puede cambiar una acción muestreada y, desde ahí, la trayectoria. Por
eso ``--check`` solo recalcula el principio de cada ejecución (las primeras
``CHECK_STEPS`` pasos) y compara con ``helpers.seeding.FLOAT_TOLERANCE``, y el
cuaderno afirma lo que se cumple en las tres semillas con margen, no cifras
exactas.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from . import precomputed
from .actor_critic import A2CConfig, train_a2c

DATA_PATH = Path(__file__).resolve().parent / "data" / "a2c_runs.json"
COMMAND = "python -m helpers.a2c_runs --write"
SEEDS: tuple[int, ...] = (0, 1, 2)
#: Tope de pasos de entorno de cada ejecución (A2C de redes separadas llega a
#: 475 en unos 10 000 en la mediana de ``make bench``).
MAX_ENV_STEPS = 60_000
#: Cada cuántas actualizaciones se mide el gradiente en el tronco.
TRACE_EVERY = 8
#: Lo que ``--check`` recalcula de cada ejecución.
CHECK_STEPS = 4_096
#: Las configuraciones: nombre → cambios sobre ``A2CConfig``.
RUNS: dict[str, dict[str, Any]] = {
    "separadas, c_V = 0,5": {"shared": False, "value_coef": 0.5},
    "compartido, c_V = 0,5": {"shared": True, "value_coef": 0.5},
    "compartido, c_V = 0,5, sin recorte": {
        "shared": True,
        "value_coef": 0.5,
        "max_grad_norm": math.inf,
    },
    "separadas, c_V = 0,01": {"shared": False, "value_coef": 0.01},
    "compartido, c_V = 0,01": {"shared": True, "value_coef": 0.01},
    "compartido, c_V = 0,5, PopArt": {
        "shared": True,
        "value_coef": 0.5,
        "popart_rate": 0.01,
    },
    "separadas, c_V = 0,5, sin parar": {"target_return": None},
}
#: Un colapso: la media voraz cae por debajo de ``COLLAPSE_LOW`` después de
#: haber llegado al menos a ``COLLAPSE_HIGH``.
COLLAPSE_HIGH, COLLAPSE_LOW = 400.0, 200.0
TRACE_KEYS = ("actor_norm", "critic_norm", "actor_cosine")


def trunk_gradients(
    agent: torch.nn.Module,
    log_probs: torch.Tensor,
    values: torch.Tensor,
    advantages: torch.Tensor,
    returns: torch.Tensor,
    entropy: torch.Tensor,
    value_coef: float,
    entropy_coef: float,
) -> dict[str, float]:
    """Lo que cada pérdida pide a las capas comunes de ``agent`` (``shared=True``).

    Con las mismas piezas que :func:`helpers.actor_critic.actor_critic_loss`,
    separa la pérdida del actor, ``−mean(log π·Â) − c_H·mean(H)``, de la del
    crítico, ``c_V·mean((V − R)²)``, y deriva cada una respecto a los
    parámetros del tronco (``agent.trunk``), sin tocar sus ``.grad``.

    Returns:
        ``actor_norm`` y ``critic_norm``, las normas de los dos gradientes en
        el tronco; ``actor_cosine``, el coseno entre el gradiente total
        (la suma) y el del actor: 1 si el tronco se mueve solo por el actor,
        cerca de 0 si lo mueve el crítico.
    """
    params = [p for p in agent.trunk.parameters() if p.requires_grad]
    if not params:
        raise ValueError("La red no tiene tronco compartido (shared=False).")
    actor_loss = -(log_probs * advantages.detach()).mean()
    actor_loss = actor_loss - entropy_coef * entropy.mean()
    critic_loss = value_coef * ((values - returns.detach()) ** 2).mean()
    grads = []
    for loss in (actor_loss, critic_loss):
        parts = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        grads.append(
            torch.cat(
                [
                    (g if g is not None else torch.zeros_like(p)).flatten()
                    for g, p in zip(parts, params, strict=True)
                ]
            )
        )
    actor, critic = grads
    total = actor + critic
    cosine = torch.dot(total, actor) / (total.norm() * actor.norm() + 1e-12)
    return {
        "actor_norm": float(actor.norm()),
        "critic_norm": float(critic.norm()),
        "actor_cosine": float(cosine),
    }


def collapses(
    eval_steps: Sequence[int],
    eval_returns: Sequence[float],
    high: float = COLLAPSE_HIGH,
    low: float = COLLAPSE_LOW,
) -> list[tuple[int, float, float]]:
    """Los colapsos de una curva de evaluaciones voraces.

    Un colapso empieza en la primera evaluación por debajo de ``low`` después de
    una que llegó a ``high`` o más; para contar otro, la curva tiene que volver
    antes a ``high``.

    Returns:
        ``(paso, mejor media antes, media en el colapso)`` de cada colapso.
    """
    found, best, armed = [], 0.0, False
    for step, value in zip(eval_steps, eval_returns, strict=True):
        if armed and value < low:
            found.append((int(step), best, float(value)))
            armed = False
        best = max(best, value)
        if value >= high:
            armed = True
    return found


def run_config(name: str, seed: int, max_env_steps: int = MAX_ENV_STEPS) -> A2CConfig:
    """La ``A2CConfig`` de la ejecución ``name`` con ``seed``."""
    return A2CConfig(seed=seed, max_env_steps=max_env_steps, **RUNS[name])


def compute_run(
    name: str, seed: int, max_env_steps: int = MAX_ENV_STEPS
) -> dict[str, Any]:
    """Entrena la ejecución ``name`` con ``seed`` y devuelve lo que se guarda."""
    torch.set_num_threads(1)
    config = run_config(name, seed, max_env_steps)
    trace: dict[str, list[float]] = {"trace_steps": [], **{k: [] for k in TRACE_KEYS}}
    updates = [0]

    def measure(agent, log_probs, values, advantages, returns, entropy, env_steps):
        if config.shared and updates[0] % TRACE_EVERY == 0:
            measured = trunk_gradients(
                agent,
                log_probs,
                values,
                advantages,
                returns,
                entropy,
                config.value_coef,
                config.entropy_coef,
            )
            trace["trace_steps"].append(env_steps)
            for key in TRACE_KEYS:
                trace[key].append(measured[key])
        updates[0] += 1

    history = train_a2c(config, progress=False, on_update=measure)
    return {
        "eval_steps": [e.env_steps for e in history.evaluations],
        "eval_returns": [e.mean_return for e in history.evaluations],
        "solved_steps": history.solved.env_steps if history.solved else None,
        **trace,
    }


def compute_all(seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    """Todas las ejecuciones de ``RUNS`` con ``seeds``, con su procedencia."""
    start = time.perf_counter()
    runs = {name: {str(s): compute_run(name, s) for s in seeds} for name in RUNS}
    base = dataclasses.asdict(A2CConfig())
    config = {
        "command": COMMAND,
        "how": (
            "helpers.actor_critic.train_a2c(A2CConfig(seed, max_env_steps, "
            "**RUNS[nombre])) con un hilo; la evaluación voraz de siempre (20 "
            "episodios cada 2048 pasos, parar en 475). En el tronco compartido, "
            f"cada {TRACE_EVERY} actualizaciones, trunk_gradients sobre el bloque "
            "de esa actualización, antes del paso."
        ),
        "seeds": list(seeds),
        "max_env_steps": MAX_ENV_STEPS,
        "trace_every": TRACE_EVERY,
        "runs": {k: {kk: str(vv) for kk, vv in v.items()} for k, v in RUNS.items()},
        "a2c_config": {k: str(v) for k, v in base.items()},
        "total_seconds": time.perf_counter() - start,
        **precomputed.machine(),
    }
    return {"config": config, "runs": runs}


def load(path: Path | str = DATA_PATH) -> dict[str, Any]:
    """Lo guardado en ``helpers/data/a2c_runs.json``."""
    return precomputed.load(path)


def check(
    data: dict[str, Any] | None = None,
    steps: int = CHECK_STEPS,
    which: Sequence[tuple[str, int]] | None = None,
) -> list[str]:
    """Recalcula los primeros ``steps`` pasos de las ejecuciones y compara.

    ``which``: pares ``(nombre, semilla)``; ``None``, todas. Compara las
    evaluaciones y la traza del gradiente que caen en ese principio, con
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
            f"{name}, semilla {seed}", stored, fresh, ("eval_returns", *TRACE_KEYS)
        )
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    return precomputed.main(
        argv,
        prog="python -m helpers.a2c_runs",
        description="Tronco compartido o separado en A2C (helpers/data/a2c_runs.json).",
        path=DATA_PATH,
        compute_all=compute_all,
        check=check,
        by_seed=False,
    )


if __name__ == "__main__":
    raise SystemExit(main())
