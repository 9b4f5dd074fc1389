"""GRPO, RLOO y PPO con crítico sobre el modelo diminuto, con las mismas respuestas.

Para cada método y semilla, un proceso nuevo de Python carga el punto de
control supervisado y entrena con ``helpers.tinylm.methods.train_method`` la
misma cantidad de respuestas muestreadas (``METHODS_CONFIG``). Un proceso
nuevo por ejecución para que la memoria de una no cuente en la siguiente; cada
una entrena con un hilo y van dos a la vez, una por núcleo. Se apunta:

- la precisión en evaluación a T = 1 y la entropía por token, antes y después;
- los segundos de entrenamiento (sin las evaluaciones) y de reloj;
- la memoria: el pico de memoria residente de todo el proceso
  (``peak_rss_mb``), la que había antes de entrenar (``start_rss_mb``), el
  pico que añaden los pasos de entrenamiento (``peak_memory_mb``, de
  ``MemoryMeter``) y la de los estados (``state_memory_mb``: pesos,
  gradientes y Adam);

y, aparte, GRPO contra el verificador con trampa (``buggy_verify``): su
recompensa, la precisión de verdad y la fracción de respuestas que se cuelan.

``python -m benchmarks all --only methods --output BENCHMARKS.md`` lo mide y
lo mezcla con el resto del banco.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from helpers.formatting import number, percent

SEEDS = [0, 1, 2]
HACK_SEEDS = [0, 1]
#: Cambios sobre ``MethodConfig()`` (por defecto, 10 240 respuestas por ejecución).
#: Las mismas ejecuciones que las curvas de ``compare`` (misma precisión final),
#: evaluando solo al principio y al final.
METHODS_CONFIG: dict[str, Any] = {"eval_every_samples": 10_240}
HACK_CONFIG: dict[str, Any] = {
    "method": "grpo",
    "verifier": "buggy",
    "eval_every_samples": 2_560,
}
QUICK_CONFIG: dict[str, Any] = {
    "total_samples": 32,
    "prompts_per_step": 4,
    "group_size": 4,
    "eval_every_samples": 16,
    "eval_samples": 1,
}

_CHILD = """
import json, re, resource, sys, time
start = time.perf_counter()
from helpers.tinylm import load_pretrained
from helpers.tinylm.methods import MethodConfig, train_method
cfg = MethodConfig(**json.loads(sys.argv[1]))
model = load_pretrained()
status = open("/proc/self/status").read()
start_rss = int(re.search(r"VmRSS:\\s+(\\d+)", status).group(1)) / 1024
history = train_method(model, cfg, progress=False)
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
keep = ("samples", "train_seconds", "heldout_accuracy", "heldout_reward",
        "heldout_exploit", "entropy", "peak_memory_mb", "state_memory_mb")
out = {k: history[k] for k in keep}
out.update(wall_seconds=wall, peak_rss_mb=peak, start_rss_mb=start_rss)
print(json.dumps(out))
"""


def run_one(changes: dict[str, Any]) -> dict[str, Any]:
    """Una ejecución de ``train_method`` en un proceso nuevo, con sus cifras."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(changes)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(
    quick: bool, say: Callable[[str], None] = print, jobs: int = 2
) -> dict[str, Any]:
    """Los tres métodos con cada semilla, y GRPO con el verificador con trampa.

    Cada ejecución es un proceso nuevo que entrena con un hilo
    (``MethodConfig.grpo.num_threads``): van ``jobs`` a la vez, una por núcleo.
    """
    from helpers.tinylm.methods import METHODS

    seeds = [0] if quick else SEEDS
    base = QUICK_CONFIG if quick else METHODS_CONFIG
    hack_base = {**HACK_CONFIG, **(QUICK_CONFIG if quick else {})}
    work = [
        (f"{method.upper()}, semilla {seed}", {**base, "method": method, "seed": seed})
        for method in METHODS
        for seed in seeds
    ] + [
        (
            f"GRPO contra el verificador con trampa, semilla {seed}",
            {**hack_base, "seed": seed},
        )
        for seed in ([0] if quick else HACK_SEEDS)
    ]
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run_one, changes) for _, changes in work]
        for (label, _), future in zip(work, futures, strict=True):
            future.result()
            say(label)
        figures = [future.result() for future in futures]
    n_runs = len(METHODS) * len(seeds)
    runs = [
        {"method": changes["method"], "seed": changes["seed"], **result}
        for (_, changes), result in zip(work[:n_runs], figures[:n_runs], strict=True)
    ]
    hack_runs = [
        {"seed": changes["seed"], **result}
        for (_, changes), result in zip(work[n_runs:], figures[n_runs:], strict=True)
    ]
    return {
        "config": base,
        "seeds": seeds,
        "runs": runs,
        "hack_config": hack_base,
        "hack_runs": hack_runs,
        "minutes": (time.perf_counter() - start) / 60,
    }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def render(data: dict[str, Any]) -> list[str]:
    """Las tablas en Markdown (una fila por método, medias sobre las semillas)."""
    samples = data["runs"][0]["samples"][-1]
    lines = [
        f"Desde el checkpoint supervisado, {number(samples, 0)} respuestas "
        "muestreadas por ejecución con cada método (mismos enunciados por paso "
        "y mismas respuestas por enunciado), `MethodConfig` por defecto salvo "
        f"{_changes(data['config'])}. Medias sobre las semillas "
        f"{', '.join(str(s) for s in data['seeds'])}, cada ejecución en un "
        "proceso nuevo con un hilo, dos a la vez. Memoria: pico de memoria "
        "residente del proceso; entre paréntesis, lo que añaden los pasos de "
        "entrenamiento sobre lo que ya ocupaban Python, PyTorch y los modelos; "
        "estados: pesos, gradientes y momentos de Adam de lo que se entrena (PPO "
        "entrena también su crítico).",
        "",
        "| método | precisión, T = 1 (puntos) | entropía por token (nats) "
        "| segundos de entrenamiento (reloj) | memoria máx. (pasos) | estados |",
        "|---|---|---|---|---|---|",
    ]
    names = {"grpo": "GRPO", "rloo": "RLOO", "ppo": "PPO con crítico"}
    for method in dict.fromkeys(r["method"] for r in data["runs"]):
        runs = [r for r in data["runs"] if r["method"] == method]
        acc0 = _mean([r["heldout_accuracy"][0] for r in runs])
        acc1 = _mean([r["heldout_accuracy"][-1] for r in runs])
        ent0 = _mean([r["entropy"][0] for r in runs])
        ent1 = _mean([r["entropy"][-1] for r in runs])
        seconds = _mean([r["train_seconds"][-1] for r in runs])
        wall = _mean([r["wall_seconds"] for r in runs])
        peak = _mean([r["peak_rss_mb"] for r in runs])
        steps = _mean([r["peak_memory_mb"][-1] for r in runs])
        state = _mean([r["state_memory_mb"][0] for r in runs])
        lines.append(
            f"| {names.get(method, method)} | {percent(acc0)} → {percent(acc1)} "
            f"({number(100 * (acc1 - acc0), 1, sign=True)}) "
            f"| {number(ent0, 3)} → {number(ent1, 3)} "
            f"| {number(seconds, 1)} s ({number(wall, 1)} s) "
            f"| {number(peak, 0)} MB ({number(steps, 0)} MB) "
            f"| {number(state, 2)} MB |"
        )
    hack = data.get("hack_runs") or []
    if hack:
        lines += [
            "",
            "GRPO contra el verificador con trampa (`buggy_verify`: solo mira la "
            "última cifra), "
            f"{number(hack[0]['samples'][-1], 0)} respuestas, semillas "
            f"{', '.join(str(r['seed']) for r in hack)}: lo que cree el verificador "
            "frente a lo que acierta de verdad, en las respuestas de evaluación.",
            "",
            "| semilla | recompensa del verificador con trampa | precisión de verdad "
            "| respuestas que se cuelan |",
            "|---|---|---|---|",
        ]
        for r in hack:
            lines.append(
                f"| {r['seed']} | {percent(r['heldout_reward'][0])} → "
                f"{percent(r['heldout_reward'][-1])} "
                f"| {percent(r['heldout_accuracy'][0])} → "
                f"{percent(r['heldout_accuracy'][-1])} "
                f"| {percent(r['heldout_exploit'][0])} → "
                f"{percent(r['heldout_exploit'][-1])} |"
            )
    return lines


def _changes(config: dict[str, Any]) -> str:
    return ", ".join(f"`{k}={v}`" for k, v in config.items())


if __name__ == "__main__":
    print(json.dumps(measure(quick="--quick" in sys.argv), indent=1))
