"""Módulo 10 · Las ejecuciones largas de la etapa de preferencias, con tres semillas.

El cuaderno 10 dibuja GRPO contra el modelo de recompensa con varias β (la
recompensa aprendida y la utilidad verdadera frente a la KL, como en Gao,
Schulman y Hilton, 2022), GRPO contra la utilidad verdadera (el techo) y DPO
e IPO sobre los mismos pares, cada cosa con tres semillas. Son minutos de CPU:
demasiado para el cuaderno. Se calcula una vez y se guarda en
``helpers/data/preference_runs.json``::

    {"config": {pasos, β, semillas, versiones, fecha...},
     "data": {"ceiling", "truth_agreement", "sft_log_prob_accuracy",
              "sft_utility"},
     "seeds": {str(semilla): {
         "reward_model": {"train_accuracy", "test_accuracy",
                          "heldout_accuracy", "seconds"},
         "grpo": {nombre: {"proxy": [...], "true": [...], "kl": [...],
                           "seconds", "utility"}},
         "dpo": {"dpo" | "ipo": {"utility": [...], "kl": [...],
                                 "test_accuracy": [...], "seconds"}}}}}

Los segundos son de entrenamiento, sin las mediciones: los de GRPO no
incluyen los del modelo de recompensa (``reward_model.seconds``), que hay que
sumar para comparar con DPO.

En ``grpo``, por paso: ``proxy`` es la recompensa media con la que se entrena
(la del modelo de recompensa, o la utilidad en la ejecución «verdad»),
``true`` la utilidad verdadera media de las mismas respuestas y ``kl`` la KL
k3 por token a la referencia (el SFT); ``utility`` es la utilidad media del
modelo final (``mean_utility``). En ``dpo``, por época (la 0 es el SFT).

Uso::

    python -m helpers.tinylm.preference_runs --write      # rehacer el archivo
    python -m helpers.tinylm.preference_runs --check 0    # recalcular la semilla 0

Todo es determinista con un hilo; ``--check`` compara con los márgenes de
``helpers.seeding`` (en otra CPU el redondeo puede cambiar alguna respuesta).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .. import precomputed
from ..seeding import (
    same_near_chance_fraction,
    same_sampled_fraction,
    same_trained_fraction,
)
from . import preferences as pref
from .checkpoint import load_pretrained
from .grpo import GRPOConfig, train_grpo
from .sampling import copy_model

DATA_PATH = Path(__file__).resolve().parent.parent / "data" / "preference_runs.json"
COMMAND = "python -m helpers.tinylm.preference_runs --write"
SEEDS: tuple[int, ...] = (0, 1, 2)
STEPS = 200
#: β de la penalización KL de GRPO contra el modelo de recompensa.
BETAS: tuple[float, ...] = (0.0, 0.01, 0.05, 0.2)
#: DPO (β = 0,1) e IPO (τ = 1, con log-probabilidades medias por token).
DPO_RUNS: dict[str, pref.DPOConfig] = {
    "dpo": pref.DPOConfig(beta=0.1, loss_type="sigmoid", epochs=4),
    "ipo": pref.DPOConfig(beta=1.0, loss_type="ipo", epochs=4),
}
#: Ventana (en pasos) de la media móvil con la que se busca el máximo.
SMOOTHING = 10


def grpo_name(beta: float | None) -> str:
    """Nombre de una ejecución de GRPO: ``"β = 0,05"``, o ``"verdad"``."""
    if beta is None:
        return "verdad"
    return "β = " + f"{beta:g}".replace(".", ",")


def grpo_config(seed: int, beta: float, steps: int = STEPS) -> GRPOConfig:
    """La configuración de GRPO de la etapa de preferencias."""
    return GRPOConfig(steps=steps, seed=seed, kl_coef=beta, include_target=False)


def smooth(values: Sequence[float], window: int = SMOOTHING) -> np.ndarray:
    """Media móvil hacia atrás (los primeros puntos promedian lo que hay)."""
    x = np.asarray(values, dtype=float)
    cumulative = np.cumsum(np.insert(x, 0, 0.0))
    out = np.empty_like(x)
    for i in range(len(x)):
        lo = max(0, i + 1 - window)
        out[i] = (cumulative[i + 1] - cumulative[lo]) / (i + 1 - lo)
    return out


def peak(run: dict[str, Any]) -> dict[str, float]:
    """Dónde alcanza su máximo la utilidad verdadera (suavizada) de una ejecución.

    Devuelve el paso (desde 1), la utilidad y la KL suavizadas allí, y la
    utilidad y la recompensa aprendida suavizadas al final.
    """
    true, proxy, kl = (smooth(run[k]) for k in ("true", "proxy", "kl"))
    i = int(np.argmax(true))
    return {
        "step": i + 1,
        "true_peak": float(true[i]),
        "kl_at_peak": float(kl[i]),
        "proxy_at_peak": float(proxy[i]),
        "true_final": float(true[-1]),
        "proxy_final": float(proxy[-1]),
        "kl_final": float(kl[-1]),
    }


def _rounded(values: Sequence[float]) -> list[float]:
    return [round(float(v), 5) for v in values]


def run_seed(
    seed: int,
    steps: int = STEPS,
    dpo: bool = True,
    *,
    train_size: int = pref.TRAIN_PAIRS,
    test_size: int = pref.TEST_PAIRS,
    dpo_epochs: int | None = None,
) -> dict[str, Any]:
    """Todo lo de una semilla: modelo de recompensa, GRPO con cada β, DPO e IPO.

    Por defecto, lo que se guarda: ``steps`` pasos de GRPO, los pares de
    ``preferences`` y las épocas de ``DPO_RUNS``. En miniatura (la prueba del
    banco), menos pares (``train_size``, ``test_size``, también los de
    enunciados nuevos) y ``dpo_epochs`` épocas de DPO e IPO.
    """
    torch.set_num_threads(1)
    train, test = pref.train_pairs(train_size), pref.test_pairs(test_size)
    start = time.perf_counter()
    reward_model, _ = pref.train_reward_model(train, pref.RewardModelConfig(seed=seed))
    seconds = time.perf_counter() - start  # solo el entrenamiento
    out: dict[str, Any] = {
        "reward_model": {
            "train_accuracy": pref.pairwise_accuracy(
                *pref.score_pairs(reward_model, train)
            ),
            "test_accuracy": pref.pairwise_accuracy(
                *pref.score_pairs(reward_model, test)
            ),
            "heldout_accuracy": pref.pairwise_accuracy(
                *pref.score_pairs(reward_model, pref.heldout_pairs(test_size))
            ),
            "seconds": seconds,
        },
        "grpo": {},
        "dpo": {},
    }
    proxy = pref.reward_model_rewards(reward_model)
    for beta in (*BETAS, None):
        policy = load_pretrained()
        reference = copy_model(policy)
        run = train_grpo(
            policy,
            grpo_config(seed, beta or 0.0, steps),
            progress=False,
            evaluate=False,
            reference=reference,
            reward_fn=pref.utilities_for if beta is None else proxy,
            watch={"true_utility": pref.utilities_for},
            problems=pref.preference_problems(),
        )
        out["grpo"][grpo_name(beta)] = {
            "proxy": _rounded(run["reward"]),
            "true": _rounded(run["true_utility"]),
            "kl": _rounded(run["kl_ref"]),
            "seconds": run["train_seconds"][-1],
            "utility": pref.mean_utility(policy),
        }
    for name, cfg in DPO_RUNS.items() if dpo else ():
        cfg = dataclasses.replace(cfg, seed=seed, epochs=dpo_epochs or cfg.epochs)
        _, history = pref.train_dpo(train, cfg, test, evaluate=True)
        out["dpo"][name] = {
            "utility": history["utility"],
            "kl": history["kl_ref"],
            "test_accuracy": history["test_accuracy"],
            "seconds": history["train_seconds"][-1],
        }
    return out


def data_figures(test_size: int = pref.TEST_PAIRS) -> dict[str, float]:
    """Lo que no depende de la semilla: el techo de la anotadora y el SFT."""
    test = pref.test_pairs(test_size)
    model = load_pretrained()
    with torch.no_grad():
        chosen = pref.sequence_log_probs(model, test.prompts, test.chosen)
        rejected = pref.sequence_log_probs(model, test.prompts, test.rejected)
    return {
        "ceiling": test.ceiling(),
        "truth_agreement": test.truth_agreement(),
        "sft_log_prob_accuracy": pref.pairwise_accuracy(chosen, rejected),
        "sft_utility": pref.mean_utility(model),
    }


def compute_all(seeds: Sequence[int] = SEEDS, jobs: int = 3) -> dict[str, Any]:
    """Todas las semillas (``jobs`` a la vez), con la procedencia en ``config``."""
    start = time.perf_counter()
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        results = list(pool.map(run_seed, seeds))
    config = {
        "command": COMMAND,
        "steps": STEPS,
        "betas": list(BETAS),
        "seeds": list(seeds),
        "pairs": {"train": pref.TRAIN_PAIRS, "test": pref.TEST_PAIRS},
        "pool_size": pref.POOL_SIZE,
        "annotator_temperature": pref.ANNOTATOR_TEMPERATURE,
        "grpo_config": {
            k: str(v) for k, v in dataclasses.asdict(grpo_config(0, 0.0)).items()
        },
        "reward_model_config": dataclasses.asdict(pref.RewardModelConfig()),
        "dpo_runs": {k: dataclasses.asdict(v) for k, v in DPO_RUNS.items()},
        "total_seconds": time.perf_counter() - start,
        **precomputed.machine(),
    }
    return {
        "config": config,
        "data": data_figures(),
        "seeds": {str(s): r for s, r in zip(seeds, results, strict=True)},
    }


def load(path: Path | str = DATA_PATH) -> dict[str, Any]:
    """Lo guardado en ``helpers/data/preference_runs.json``."""
    return precomputed.load(path)


def compare(stored: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """Las diferencias entre una semilla guardada y otra recién calculada.

    Las precisiones por pares del modelo de recompensa salen de entrenarlo 4
    épocas: se comparan con ``same_trained_fraction``, salvo la de enunciados
    nuevos, donde acierta poco más que al azar, con
    ``same_near_chance_fraction``. Las utilidades medias
    de cada paso de GRPO son de 32 × 8 respuestas con hasta 1,5 puntos
    (divididas por 1,5, una fracción): la del primer paso sale de muestrear el
    modelo SFT, y se compara con ``same_sampled_fraction``; las siguientes
    dependen ya de los pasos dados con el modelo de recompensa, y se comparan
    con ``same_trained_fraction``. ``fresh`` puede ser más corta (menos
    pasos): se compara lo que tiene. Devuelve una línea por diferencia.
    """
    problems = []
    for key in ("train_accuracy", "test_accuracy", "heldout_accuracy"):
        old, new = stored["reward_model"][key], fresh["reward_model"][key]
        same = (
            same_near_chance_fraction
            if key == "heldout_accuracy"
            else same_trained_fraction
        )
        if not same(old, new):
            problems.append(f"modelo de recompensa, {key}: {old!r} -> {new!r}")
    per_step = grpo_config(0, 0.0).prompts_per_step * grpo_config(0, 0.0).group_size
    top = pref.FINAL_POINTS + 2 * pref.PARTIAL_POINTS
    for name, run in fresh["grpo"].items():
        pairs = zip(stored["grpo"][name]["true"], run["true"], strict=False)
        for i, (old, new) in enumerate(pairs):
            if i == 0:  # respuestas del SFT, antes de cualquier paso
                same = same_sampled_fraction(old / top, new / top, per_step)
            else:
                same = same_trained_fraction(old / top, new / top)
            if not same:
                problems.append(f"{name}, true[{i}]: {old!r} -> {new!r}")
    return problems


def check(
    seed: int, data: dict[str, Any] | None = None, steps: int = STEPS
) -> list[str]:
    """Recalcula ``seed`` (``steps`` pasos de GRPO; sin DPO si son menos) y compara."""
    data = load() if data is None else data
    fresh = run_seed(seed, steps, dpo=steps >= STEPS)
    return compare(data["seeds"][str(seed)], fresh)


def main(argv: Sequence[str] | None = None) -> int:
    return precomputed.main(
        argv,
        prog="python -m helpers.tinylm.preference_runs",
        description="Preferencias del módulo 10 (helpers/data/preference_runs.json).",
        path=DATA_PATH,
        compute_all=compute_all,
        check=check,
        by_seed=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
