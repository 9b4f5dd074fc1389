"""Módulo 08 · La KL en la recompensa frente a la KL en la pérdida, con β > 0.

Todas las curvas del cara a cara (``compare.py``) van con β = 0. Aquí, las
dos maneras de frenar la política con la misma β contra la copia congelada
del punto de partida:

- **en la pérdida**, como GRPO: la ventaja es solo la de la nota (la del
  grupo, sin ÷σ) y cada token suma β · k3(π_θ ‖ π_ref) a la pérdida
  (``grpo.k3_kl``), con su propio gradiente;
- **en la recompensa**, como PPO-RLHF: cada token resta
  β · log(π_θ / π_ref) de la recompensa; sin crítico y con γ = 1, lo que
  llega a la respuesta es la nota menos β · Σ_t log(π_θ / π_ref), y la
  ventaja es la de RLOO de esa recompensa (``methods.method_step``).

Sin KL, las dos ventajas son la misma salvo el factor G / (G − 1) (RLOO
frente a GRPO sin ÷σ, ``compare.RUNS``); lo demás es lo del cara a cara
(``compare.CURVE_OVERRIDES``: dos épocas de dos minilotes, 40 pasos). Tres
semillas de las dos recetas tardan unos minutos: se calculan una vez y se
guardan en ``helpers/data/kl_runs.json``::

    {"config": {orden, β, configuración, semillas, versiones, fecha...},
     "runs": {receta: lo que cambia de MethodConfig},
     "curves": {receta: {str(semilla): {"samples": [...],
                                         "heldout_accuracy": [...],
                                         "step_samples": [...],
                                         "kl_ref": [...],
                                         "reward": [...],
                                         "advantages": {...}}}}}

``heldout_accuracy`` se mide cada 1280 respuestas (4 por problema de
evaluación, T = 1); ``kl_ref``, en cada paso, es la KL k3 media por token de
la política que muestrea a la referencia. ``advantages`` (``advantage_parts``)
mide, con el modelo ya entrenado y un lote nuevo de 32 × 8 respuestas, la
varianza de la ventaja que usa la receta, la de su parte que sale de la nota y
la de la parte que sale de la KL (0 con la KL en la pérdida), y la fracción de
respuestas con ventaja distinta de 0.

Uso::

    python -m helpers.tinylm.kl_runs --write      # rehacer el archivo
    python -m helpers.tinylm.kl_runs --check 0    # recalcular la semilla 0

Todo es determinista con un hilo; en otra CPU, el redondeo de float32 puede
cambiar de vez en cuando una respuesta muestreada (``--check`` compara con
los márgenes de ``helpers.seeding``).
"""

from __future__ import annotations

import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch

from .. import precomputed
from ..seeding import same_sampled_fraction
from .checkpoint import load_pretrained
from .compare import CURVE_OVERRIDES
from .grpo import group_advantages
from .methods import MethodConfig, rloo_advantages, train_method
from .model import TinyLM
from .sampling import copy_model, sample, token_log_probs
from .task import encode_prompts, heldout_problems, rewards_for, rl_problems

DATA_PATH = Path(__file__).resolve().parent.parent / "data" / "kl_runs.json"
COMMAND = "python -m helpers.tinylm.kl_runs --write"
SEEDS: tuple[int, ...] = (0, 1, 2)
#: β, la misma para las dos recetas (la más fuerte de las variantes de 07).
BETA = 0.4
#: Las dos recetas: lo que cambia cada una de ``MethodConfig`` (además de
#: ``CURVE_OVERRIDES`` y ``COMMON``).
RUNS: dict[str, dict[str, Any]] = {
    "loss": {"method": "grpo", "std_normalize": False},
    "reward": {"method": "rloo"},
}
#: Cómo se llama cada receta en el cuaderno.
LABELS: dict[str, str] = {
    "loss": "KL en la pérdida (k3 por token, GRPO)",
    "reward": "KL en la recompensa (log π/π_ref por token, RLOO)",
}
COMMON: dict[str, Any] = {"kl_coef": BETA}
EVAL_KEYS: tuple[str, ...] = ("samples", "heldout_accuracy")
STEP_KEYS: tuple[str, ...] = ("step_samples", "kl_ref", "reward")


def run_config(run: str, seed: int, total_samples: int | None = None) -> MethodConfig:
    """La ``MethodConfig`` de la receta ``run`` con ``seed``."""
    changes = {**CURVE_OVERRIDES, **COMMON, **RUNS[run]}
    if total_samples is not None:
        changes["total_samples"] = total_samples
    return MethodConfig(seed=seed, **changes)


@torch.no_grad()
def advantage_parts(
    model: TinyLM, reference: TinyLM, run: str, seed: int = 0
) -> dict[str, float]:
    """La ventaja de la receta ``run`` en un lote nuevo de ``model``, por partes.

    Muestrea 32 enunciados de ``rl_problems()`` × G = 8 respuestas (semilla
    ``seed``) y calcula, por respuesta, la nota R y
    ``KL = Σ_t log(π_θ / π_ref)`` de sus tokens. Con la KL en la recompensa,
    la ventaja es ``rloo(R − β · KL)`` = ``rloo(R)`` + ``rloo(−β · KL)``; con
    la KL en la pérdida, ``group_advantages(R)`` y nada más.

    Devuelve ``variance`` (la varianza de la ventaja entera), ``score_variance``
    y ``kl_variance`` (las de sus dos partes; la segunda, 0 en la pérdida),
    ``nonzero`` (fracción de respuestas con ventaja distinta de 0) y
    ``uniform_groups`` (fracción de grupos con la misma nota en las G).
    """
    cfg = run_config(run, seed)
    G = cfg.grpo.group_size
    problems = random.Random(seed).sample(rl_problems(), cfg.grpo.prompts_per_step)
    repeated = [p for p in problems for _ in range(G)]
    generator = torch.Generator().manual_seed(seed)
    draws = sample(model, encode_prompts(repeated), generator=generator)
    scores = rewards_for(draws.completions, repeated).float().view(-1, G)
    P = draws.prompt_len
    mask = draws.mask.float()
    log_ratio = token_log_probs(model, draws.sequences, P) - token_log_probs(
        reference, draws.sequences, P
    )
    kl = (log_ratio * mask).sum(dim=-1).view(-1, G)
    if run == "reward":
        score_part = rloo_advantages(scores)
        kl_part = rloo_advantages(-BETA * kl)
    else:
        score_part = group_advantages(scores)
        kl_part = torch.zeros_like(score_part)
    advantages = score_part + kl_part
    uniform = (scores.min(dim=-1).values == scores.max(dim=-1).values).float()
    return {
        "variance": advantages.var(unbiased=False).item(),
        "score_variance": score_part.var(unbiased=False).item(),
        "kl_variance": kl_part.var(unbiased=False).item(),
        "nonzero": (advantages.abs() > 1e-6).float().mean().item(),
        "uniform_groups": uniform.mean().item(),
    }


def compute_run(
    job: tuple[str, int, int | None],
) -> dict[str, Any]:
    """Entrena una receta desde el punto de control y da su curva (un proceso)."""
    run, seed, total_samples = job
    torch.set_num_threads(1)
    model = load_pretrained()
    reference = copy_model(model)
    history = train_method(
        model, run_config(run, seed, total_samples), progress=False, reference=reference
    )
    curve: dict[str, Any] = {key: list(history[key]) for key in EVAL_KEYS + STEP_KEYS}
    curve["advantages"] = advantage_parts(model, reference, run, seed)
    return curve


def compute_curves(
    pairs: Sequence[tuple[str, int]], total_samples: int | None = None, jobs: int = 2
) -> list[dict[str, Any]]:
    """Cada ``(receta, semilla)``, ``jobs`` a la vez, cada una con un hilo."""
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    work = [(run, seed, total_samples) for run, seed in pairs]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(compute_run, work))


def compute_all(seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    """Las dos recetas con cada semilla, y su procedencia."""
    start = time.perf_counter()
    pairs = [(run, seed) for run in RUNS for seed in seeds]
    curves: dict[str, dict[str, Any]] = {run: {} for run in RUNS}
    for (run, seed), curve in zip(pairs, compute_curves(pairs), strict=True):
        curves[run][str(seed)] = curve
    return {
        "config": {
            "command": COMMAND,
            "how": (
                "Cada curva parte del punto de control supervisado y entrena con "
                "helpers.tinylm.methods.train_method(MethodConfig(seed=..., "
                "**CURVE_OVERRIDES, **COMMON, **runs[receta])), con un hilo de "
                "PyTorch y la referencia congelada en el punto de partida. "
                "heldout_accuracy: 256 problemas de evaluación × 4 respuestas, "
                "T = 1; kl_ref: k3 media por token de las respuestas de cada "
                "paso; advantages: kl_runs.advantage_parts con el modelo final."
            ),
            "beta": BETA,
            "seeds": list(seeds),
            "overrides": {**CURVE_OVERRIDES, **COMMON},
            "method_config": run_config("loss", 0).flat(),
            "total_seconds": time.perf_counter() - start,
            **precomputed.machine(),
        },
        "runs": RUNS,
        "curves": curves,
    }


def load(path: Path | str = DATA_PATH) -> dict[str, Any]:
    """Las ejecuciones guardadas."""
    return precomputed.load(path)


def final(data: dict[str, Any], run: str, key: str) -> list[float]:
    """El último valor de ``key`` en cada semilla de ``run``."""
    return [curve[key][-1] for curve in data["curves"][run].values()]


def check(
    seed: int, data: dict[str, Any] | None = None, total_samples: int = 2_560
) -> list[str]:
    """Recalcula el principio de las dos recetas de ``seed`` y lo compara.

    Entrena hasta ``total_samples`` respuestas (por defecto 10 pasos) y
    compara las precisiones (256 × 4 respuestas) y las recompensas (32 × 8)
    con ``same_sampled_fraction``. Devuelve una línea por diferencia.
    """
    data = load() if data is None else data
    answers = {
        "heldout_accuracy": len(heldout_problems()) * 4,
        "reward": 32 * 8,
    }
    problems = []
    pairs = [(run, seed) for run in RUNS]
    for (run, _), fresh in zip(
        pairs, compute_curves(pairs, total_samples), strict=True
    ):
        stored = data["curves"][run][str(seed)]
        # La precisión, en las evaluaciones de las dos (la última recalculada
        # puede caer antes de la siguiente guardada); la recompensa, por paso
        evals = dict(zip(stored["samples"], stored["heldout_accuracy"], strict=True))
        compared = [
            (f"heldout_accuracy[{i}]", evals[samples], new, answers["heldout_accuracy"])
            for i, (samples, new) in enumerate(
                zip(fresh["samples"], fresh["heldout_accuracy"], strict=True)
            )
            if samples in evals
        ]
        compared += [
            (f"reward[{i}]", stored["reward"][i], new, answers["reward"])
            for i, new in enumerate(fresh["reward"])
        ]
        for what, old, new, n in compared:
            if not same_sampled_fraction(old, new, n):
                problems.append(f"{run}, {what}: guardado {old!r}, ahora {new!r}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    return precomputed.main(
        argv,
        prog="python -m helpers.tinylm.kl_runs",
        description="La KL en la recompensa o en la pérdida (kl_runs.json).",
        path=DATA_PATH,
        compute_all=compute_all,
        check=check,
        by_seed=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
