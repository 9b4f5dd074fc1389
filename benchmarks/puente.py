"""El GRPO del curso frente a ``GRPOTrainer`` de TRL, y LoRA frente al ajuste
completo, sobre el modelo diminuto (``helpers.puente.compare``).

Para cada semilla, tres ejecuciones con el mismo presupuesto de respuestas
muestreadas (``BUDGET``): el entrenador del curso (``train_grpo``), TRL con
ajuste completo y TRL con LoRA (r = 4 en ``c_attn``). Cada una en un proceso
nuevo de Python (``run_isolated``), con un hilo, dos a la vez (una por
núcleo). Se apunta la precisión en evaluación a T = 1 y voraz (medidas por
el mismo código del curso), los segundos de la llamada que entrena, los
parámetros que se entrenan y el pico de memoria que añade el entrenamiento.

La meta, tal como la pide el issue: que el entrenador del curso llegue a la
precisión de TRL en menos tiempo. Se marca ✓ o ✗ con las medias sobre las
semillas, sin margen: precisión media a T = 1 del curso ≥ la de TRL, y
segundos medios del curso < los de TRL.

``python -m benchmarks all --only puente --output BENCHMARKS.md`` lo mide y
lo mezcla con el resto del banco.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from helpers.formatting import number, percent

SEEDS = [0, 1, 2]
#: El presupuesto de cada ejecución: 60 pasos de 32 enunciados × 8 respuestas
#: (15 360 respuestas), donde el GRPO del curso gana más de 20 puntos.
BUDGET: dict[str, Any] = {"steps": 60, "prompts_per_step": 32, "group_size": 8}
QUICK_BUDGET: dict[str, Any] = {
    "steps": 2,
    "prompts_per_step": 2,
    "group_size": 4,
    "eval_samples": 1,
}
LORA_R = 4
#: (etiqueta, qué ejecutar, cambios): las tres ejecuciones de cada semilla.
RUNS: list[tuple[str, str, dict[str, Any]]] = [
    ("curso", "course", {}),
    ("TRL", "trl", {}),
    ("TRL + LoRA", "trl", {"lora_r": LORA_R}),
]


def _isolated(kind: str, **kwargs: Any) -> dict[str, Any]:
    from helpers.puente.compare import run_isolated

    return run_isolated(kind, **kwargs).to_dict()


def measure(
    quick: bool,
    say: Callable[[str], None] = print,
    jobs: int = 2,
    runner: Callable[..., dict[str, Any]] = _isolated,
) -> dict[str, Any]:
    """Las tres ejecuciones de cada semilla, ``jobs`` a la vez.

    ``runner(kind, **kwargs)`` hace una ejecución y devuelve su registro
    (``RunResult.to_dict()``); por defecto, en un proceso nuevo.
    """
    from helpers.puente.compare import LORA_LR, MEMORY_METHOD

    seeds = [0] if quick else SEEDS
    budget = QUICK_BUDGET if quick else BUDGET
    work = [
        (label, seed, kind, {**budget, **changes, "seed": seed})
        for seed in seeds
        for label, kind, changes in RUNS
    ]
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(runner, kind, **kwargs) for _, _, kind, kwargs in work]
        for (label, seed, _, _), future in zip(work, futures, strict=True):
            future.result()
            say(f"{label}, semilla {seed}")
        runs = [future.result() for future in futures]
    return {
        "budget": budget,
        "seeds": seeds,
        "lora_r": LORA_R,
        "lora_lr": LORA_LR,
        "memory_method": MEMORY_METHOD,
        "runs": runs,
        "minutes": (time.perf_counter() - start) / 60,
    }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _runs(data: dict[str, Any], trainer: str) -> list[dict[str, Any]]:
    return [r for r in data["runs"] if r["trainer"] == trainer]


def goal(data: dict[str, Any]) -> dict[str, Any]:
    """La meta del issue con las medias sobre las semillas: ¿llega el curso a
    la precisión de TRL (a T = 1) en menos segundos de entrenamiento?"""
    course, trl = _runs(data, "curso"), _runs(data, "TRL")
    accuracy = (
        _mean([r["heldout_accuracy"] for r in course]),
        _mean([r["heldout_accuracy"] for r in trl]),
    )
    seconds = (
        _mean([r["train_seconds"] for r in course]),
        _mean([r["train_seconds"] for r in trl]),
    )
    return {
        "accuracy": accuracy,
        "seconds": seconds,
        "reaches": accuracy[0] >= accuracy[1],
        "faster": seconds[0] < seconds[1],
    }


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def _rate(x: float) -> str:
    """Una tasa de aprendizaje sin ceros de más: 0,0003, 0,003."""
    return f"{x:g}".replace(".", ",") if x >= 1e-4 else f"{x:.0e}"


def _memory(runs: list[dict[str, Any]]) -> str:
    added = f"{number(_mean([r['peak_memory_mb'] for r in runs]), 0)} MB"
    process = [r.get("process_peak_rss_mb") for r in runs]
    if any(p is None for p in process):
        return f"— ({added})"
    return f"{number(_mean(process), 0)} MB ({added})"


def render(data: dict[str, Any]) -> list[str]:
    """Las tablas en Markdown: una fila por entrenador y semilla, las medias,
    la meta y LoRA frente al ajuste completo."""
    budget = data["budget"]
    first = data["runs"][0]
    answers = budget["steps"] * budget["prompts_per_step"] * budget["group_size"]
    seeds = ", ".join(str(s) for s in data["seeds"])
    lines = [
        "Desde el checkpoint supervisado, el mismo presupuesto para los dos "
        f"entrenadores: {budget['steps']} pasos de {budget['prompts_per_step']} "
        f"enunciados × {budget['group_size']} respuestas "
        f"({number(answers, 0)} respuestas muestreadas), Dr. GRPO sin dividir "
        "por la desviación, μ = 1, β = 0, Adam a tasa constante "
        f"{_rate(first['learning_rate'])} y el verificador del curso en los "
        'dos lados (en TRL, `loss_type="dr_grpo"`, `scale_rewards="none"` y '
        "`max_grad_norm` entre 26, porque su pérdida es 26 veces menor). "
        "Precisión en los problemas de evaluación medida con el mismo código "
        "(`helpers.tinylm.evaluate`, tras volver a `TinyLM`), a T = 1 y voraz. "
        "Segundos: la llamada que entrena (`train_grpo` o `trainer.train()`), "
        "sin preparar ni evaluar. Cada ejecución en un proceso nuevo con un "
        f"hilo, dos a la vez; semillas {seeds}.",
        "",
        "| entrenador | semilla | precisión, T = 1 (puntos) "
        "| precisión voraz (puntos) | segundos de entrenamiento |",
        "|---|---|---|---|---|",
    ]

    def change(before: float, after: float) -> str:
        gain = number(100 * (after - before), 1, sign=True)
        return f"{percent(before)} → {percent(after)} ({gain})"

    for trainer in ("curso", "TRL"):
        runs = _runs(data, trainer)
        for r in runs:
            sampled = change(r["start_heldout_accuracy"], r["heldout_accuracy"])
            greedy = change(
                r["start_heldout_greedy_accuracy"], r["heldout_greedy_accuracy"]
            )
            lines.append(
                f"| {trainer} | {r['seed']} | {sampled} | {greedy} "
                f"| {number(r['train_seconds'], 1)} s |"
            )
        lines.append(
            f"| **{trainer}, media** | "
            f"| {percent(_mean([r['heldout_accuracy'] for r in runs]))} "
            f"| {percent(_mean([r['heldout_greedy_accuracy'] for r in runs]))} "
            f"| {number(_mean([r['train_seconds'] for r in runs]), 1)} s |"
        )
    g = goal(data)

    def spread(trainer: str) -> str:
        values = [r["heldout_accuracy"] for r in _runs(data, trainer)]
        return f"{percent(min(values))}–{percent(max(values))}"

    lines += [
        "",
        "Meta (medias sobre las semillas): que el curso llegue a la precisión de "
        "TRL a T = 1 en menos segundos de entrenamiento. Precisión: "
        f"{percent(g['accuracy'][0])} el curso, {percent(g['accuracy'][1])} TRL "
        f"{_mark(g['reaches'])} (entre semillas, {spread('curso')} el curso y "
        f"{spread('TRL')} TRL); segundos: {number(g['seconds'][0], 1)} s el "
        f"curso, {number(g['seconds'][1], 1)} s TRL {_mark(g['faster'])}.",
        "",
        f"LoRA (r = {data['lora_r']} en `c_attn`, α = {2 * data['lora_r']}, "
        f"tasa {_rate(data['lora_lr'])}: diez veces la del ajuste completo) "
        "frente al ajuste completo, los dos con TRL y el mismo presupuesto; "
        "medias sobre las semillas. Memoria: pico de memoria residente del "
        "proceso (`ru_maxrss`: Python, PyTorch, transformers, el modelo, entrenar "
        "y evaluar); entre paréntesis, lo que añade el entrenamiento (el pico de "
        "RSS mientras entrena, con `/proc/self/clear_refs` y `VmHWM`, menos la "
        "RSS al empezar).",
        "",
        "| ajuste | parámetros entrenables | precisión, T = 1 | precisión voraz "
        "| segundos de entrenamiento | memoria máx. (entrenamiento) |",
        "|---|---|---|---|---|---|",
    ]
    rows = [("TRL", "completo"), ("TRL + LoRA", "LoRA"), ("curso", "curso (completo)")]
    for trainer, label in rows:
        runs = _runs(data, trainer)
        r = runs[0]
        lines.append(
            f"| {label} | {number(r['trainable_params'], 0)} de "
            f"{number(r['total_params'], 0)} "
            f"| {percent(_mean([x['heldout_accuracy'] for x in runs]))} "
            f"| {percent(_mean([x['heldout_greedy_accuracy'] for x in runs]))} "
            f"| {number(_mean([x['train_seconds'] for x in runs]), 1)} s "
            f"| {_memory(runs)} |"
        )
    return lines


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(measure(quick="--quick" in sys.argv), indent=1))
