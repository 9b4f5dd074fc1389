"""Curvas de GRPO, RLOO y PPO con las mismas respuestas, guardadas con el paquete.

Entrenar los métodos con varias semillas tarda minutos: demasiado para un
cuaderno. Por eso las curvas se calculan una vez con ``train_method`` y se
guardan en ``helpers/data/method_curves.json``. Cada ejecución de ``RUNS``
(GRPO dividiendo por σ y sin dividir, RLOO y PPO con crítico) cambia solo lo
que dice su entrada; todas comparten ``CURVE_OVERRIDES`` (varias épocas de
varios minilotes por lote, para que el recorte actúe en todas). La forma::

    {"config": {cómo se hicieron: orden, configuración, versiones, fecha...},
     "runs": {ejecución: lo que cambia de MethodConfig},
     "curves": {ejecución: {str(semilla): {"samples": [...],
                                             "train_seconds": [...],
                                             "heldout_accuracy": [...],
                                             "entropy": [...],
                                             "step_samples": [...],
                                             "clip_fraction": [...],
                                             y en PPO "value_loss" y
                                             "explained_variance"}}}}

Uso::

    python -m helpers.tinylm.compare --write            # rehacer el archivo
    python -m helpers.tinylm.compare --check grpo 0     # rehacer una curva y comparar
    python -m helpers.tinylm.compare --check ppo 1 --samples 2560  # solo el principio

Todo es determinista con un hilo (semillas fijas en el muestreo, los
enunciados y la evaluación), así que en la misma máquina ``--check``
reproduce la precisión y la entropía guardadas. En otra CPU, PyTorch usa
otros núcleos de float32: la entropía cambia en el último decimal (se compara
con ``helpers.seeding.FLOAT_TOLERANCE``) y, de vez en cuando, una respuesta
muestreada de la evaluación sale distinta (la precisión admite
``helpers.seeding.SAMPLED_ANSWERS_MARGIN`` respuestas). Los segundos no se
comparan: dependen de la máquina y de lo ocupada que esté (están en
``config``). Como las evaluaciones no
tocan el azar del entrenamiento, un entrenamiento más corto reproduce el
principio de la curva: así la prueba comprueba una curva en pocos segundos.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import precomputed
from ..seeding import same_figure, same_sampled_fraction
from .checkpoint import load_pretrained
from .methods import MethodConfig, train_method
from .task import heldout_problems

CURVES_PATH = Path(__file__).resolve().parent.parent / "data" / "method_curves.json"
#: Lo que se mide en cada evaluación (al empezar, cada ``eval_every_samples``
#: respuestas y al final) y lo que se anota en cada paso de entrenamiento.
EVAL_KEYS: tuple[str, ...] = ("samples", "train_seconds", "heldout_accuracy", "entropy")
STEP_KEYS: tuple[str, ...] = ("step_samples", "clip_fraction")
CURVE_KEYS: tuple[str, ...] = EVAL_KEYS + STEP_KEYS
#: Las métricas del crítico, solo en las curvas de PPO (una por paso).
CRITIC_KEYS: tuple[str, ...] = ("value_loss", "explained_variance")
#: Lo que debe coincidir al recalcular: ``samples`` exactamente (son
#: enteros), la precisión salvo unas pocas respuestas y la entropía salvo el
#: redondeo de la CPU.
COMPARED_KEYS: tuple[str, ...] = ("samples", "heldout_accuracy", "entropy")
DEFAULT_SEEDS: tuple[int, ...] = (0, 1, 2)
#: Las ejecuciones del cara a cara y lo único que cambia cada una de
#: ``MethodConfig`` (además de ``CURVE_OVERRIDES``, común a todas). GRPO
#: aparece dos veces: dividir por σ repondera los grupos, y sin dividir es
#: RLOO salvo el factor (G − 1) / G.
RUNS: dict[str, dict[str, Any]] = {
    "grpo": {"method": "grpo", "std_normalize": True},
    "grpo_no_std": {"method": "grpo", "std_normalize": False},
    "rloo": {"method": "rloo"},
    "ppo": {"method": "ppo"},
}
#: Cambios sobre ``MethodConfig()`` comunes a todas las curvas: dos épocas
#: de dos minilotes por lote (cuatro pasos de gradiente), para que el cociente
#: se aleje de 1 y el recorte actúe, como en el PPO de InstructGPT o de TRL.
CURVE_OVERRIDES: dict[str, Any] = {"epochs": 2, "minibatches": 2}
COMMAND = "python -m helpers.tinylm.compare --write"


def curve_config(
    run: str, seed: int, cfg_overrides: dict[str, Any] | None = None
) -> MethodConfig:
    """La ``MethodConfig`` de una curva: la de por defecto, con
    ``CURVE_OVERRIDES``, ``cfg_overrides`` y lo que cambia la ejecución ``run``
    (de ``RUNS``)."""
    if run not in RUNS:
        raise ValueError(f"run debe ser una de {tuple(RUNS)}; es {run!r}.")
    changes = {**CURVE_OVERRIDES, **(cfg_overrides or {}), **RUNS[run]}
    return MethodConfig(seed=seed, **changes)


def compute_curve(
    run: str,
    seed: int,
    cfg_overrides: dict[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, list[float]]:
    """Entrena el modelo supervisado con la ejecución ``run`` y ``seed`` y da
    su curva.

    Devuelve ``{clave: lista}`` con las claves de ``CURVE_KEYS`` y, en PPO,
    también las de ``CRITIC_KEYS``.
    """
    model = load_pretrained()
    history = train_method(model, curve_config(run, seed, cfg_overrides), progress)
    keys = CURVE_KEYS + tuple(k for k in CRITIC_KEYS if k in history)
    return {key: list(history[key]) for key in keys}


def compute_curves(
    runs: Iterable[str] = tuple(RUNS),
    seeds: Iterable[int] = DEFAULT_SEEDS,
    cfg_overrides: dict[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Las curvas de cada ejecución y semilla, con su procedencia en ``config``.

    - ``runs``: de ``RUNS`` (``"grpo"``, ``"grpo_no_std"``, ``"rloo"``,
      ``"ppo"``).
    - ``seeds``: semillas de ``MethodConfig.seed``.
    - ``cfg_overrides``: cambios sobre ``CURVE_OVERRIDES`` y ``MethodConfig()``,
      comunes a todas las ejecuciones.

    Devuelve el diccionario que guarda ``method_curves.json``.
    """
    runs, seeds = list(runs), list(seeds)
    start = time.perf_counter()
    curves: dict[str, dict[str, dict[str, list[float]]]] = {}
    for run in runs:
        curves[run] = {
            str(seed): compute_curve(run, seed, cfg_overrides, progress)
            for seed in seeds
        }
    base = MethodConfig(**{**CURVE_OVERRIDES, **(cfg_overrides or {})}).flat()
    for key in ("method", "seed", "std_normalize"):
        base.pop(key)
    config = {
        "command": COMMAND,
        "how": (
            "Cada curva parte del punto de control supervisado (load_pretrained) "
            "y entrena con helpers.tinylm.methods.train_method(MethodConfig("
            "seed=..., **method_config, **runs[ejecución])), con un hilo de "
            "PyTorch. "
            "samples: respuestas muestreadas; heldout_accuracy: precisión a T = 1 "
            "en los 256 problemas de evaluación (eval_samples respuestas por "
            "problema); entropy: policy_entropy, en nats por token; "
            "train_seconds: segundos de entrenamiento sin las evaluaciones, en "
            "esta máquina y con su carga. Por paso (step_samples): "
            "clip_fraction, la fracción de tokens con el cociente fuera de "
            "[1 − ε, 1 + ε] antes de cada paso de gradiente; en PPO, "
            "value_loss y explained_variance del crítico."
        ),
        "seeds": seeds,
        "overrides": {**CURVE_OVERRIDES, **(cfg_overrides or {})},
        "method_config": base,
        "total_seconds": time.perf_counter() - start,
        **precomputed.machine(),
    }
    return {"config": config, "runs": {r: RUNS[r] for r in runs}, "curves": curves}


def load_curves(path: Path | str = CURVES_PATH) -> dict[str, Any]:
    """Las curvas guardadas (``helpers/data/method_curves.json``)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_curves(data: dict[str, Any], path: Path | str = CURVES_PATH) -> None:
    """Guarda ``data`` (de ``compute_curves``) como JSON legible."""
    Path(path).write_text(
        json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )


def check_curve(
    run: str,
    seed: int,
    max_samples: int | None = None,
    data: dict[str, Any] | None = None,
    progress: bool = False,
) -> list[str]:
    """Recalcula la curva guardada de la ejecución ``run`` y ``seed`` y la
    compara.

    Con ``max_samples`` solo entrena hasta ahí y compara ese principio de la
    curva. Usa la configuración guardada en ``config["method_config"]``.
    Devuelve la lista de diferencias (vacía si todo coincide); los segundos
    no se comparan.
    """
    data = load_curves() if data is None else data
    stored = data["curves"][run][str(seed)]
    # La configuración guardada entera: no depende de los valores por defecto
    overrides = dict(data["config"]["method_config"])
    if max_samples is not None:
        overrides["total_samples"] = min(max_samples, overrides["total_samples"])
    fresh = compute_curve(run, seed, overrides, progress)
    return compare_curve(stored, fresh, eval_answers(data))


def eval_answers(data: dict[str, Any]) -> int:
    """Cuántas respuestas muestreadas da cada punto de ``heldout_accuracy``."""
    return len(heldout_problems()) * data["config"]["method_config"]["eval_samples"]


def compare_curve(
    stored: dict[str, list[float]],
    fresh: dict[str, list[float]],
    eval_answers: int,
) -> list[str]:
    """Diferencias entre una curva guardada y una recalculada (quizá más corta).

    Compara ``COMPARED_KEYS`` en los puntos de ``fresh`` (el principio de
    ``stored``): ``samples`` exactamente; ``heldout_accuracy``, una fracción de
    ``eval_answers`` respuestas, con ``same_sampled_fraction``; ``entropy``,
    con ``same_figure`` (el redondeo de la CPU). Los segundos no. Devuelve una
    línea por diferencia.
    """
    n = len(fresh["samples"])
    if stored["samples"][:n] != fresh["samples"]:
        return [f"samples: guardado {stored['samples'][:n]}, ahora {fresh['samples']}"]
    problems = []
    same = {
        "heldout_accuracy": lambda a, b: same_sampled_fraction(a, b, eval_answers),
        "entropy": same_figure,
    }
    for key in COMPARED_KEYS[1:]:
        for i, (old, new) in enumerate(zip(stored[key][:n], fresh[key], strict=True)):
            if not same[key](old, new):
                problems.append(f"{key}[{i}]: guardado {old!r}, ahora {new!r}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m helpers.tinylm.compare",
        description="Curvas de GRPO, RLOO y PPO (helpers/data/method_curves.json).",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="rehacer el archivo")
    action.add_argument(
        "--check",
        nargs=2,
        metavar=("EJECUCION", "SEMILLA"),
        help="recalcular una curva y compararla con la guardada",
    )
    parser.add_argument(
        "--samples", type=int, help="con --check: comparar solo hasta aquí"
    )
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(DEFAULT_SEEDS))
    parser.add_argument("--output", type=Path, default=CURVES_PATH)
    args = parser.parse_args(argv)
    if args.write:
        data = compute_curves(args.runs, args.seeds, progress=True)
        write_curves(data, args.output)
        print(f"Curvas guardadas en {args.output}")
        return 0
    run, seed = args.check[0], int(args.check[1])
    problems = check_curve(run, seed, args.samples, load_curves(args.output), True)
    if problems:
        print("La curva recalculada NO coincide con la guardada:")
        for line in problems:
            print("  " + line)
        return 1
    print(f"La curva de {run} con semilla {seed} coincide con la guardada.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
