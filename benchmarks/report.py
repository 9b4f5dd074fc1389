"""``make bench``: todo lo que el curso promete, medido, en BENCHMARKS.md.

``python -m benchmarks all`` imprime y escribe en Markdown:

1. la máquina (CPU, núcleos, memoria, carga, versiones) y la fecha;
2. cada cuaderno de solución de principio a fin: tiempo y memoria del kernel;
3. CartPole-v1: DQN, REINFORCE con línea base, A2C y PPO del curso junto a DQN,
   A2C y PPO de Stable-Baselines3 (ver :mod:`benchmarks.cartpole`);
4. GRPO sobre el modelo diminuto: precisión y P(correcta | 17 × 24) antes y
   después, y segundos;
5. la calificación de una clase de 100 entregas.

``--quick`` hace lo mismo en miniatura (un cuaderno de dos celdas, un
entrenamiento corto por agente, dos pasos de GRPO, tres entregas): comprueba
que el código del banco funciona, no mide nada. CI ejecuta solo eso.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder.config import modules
from benchmarks import cartpole
from benchmarks.cartpole import thousands
from benchmarks.grading import BUDGET_SECONDS, BUDGET_STUDENTS, grading_figures
from benchmarks.notebooks import (
    ALL_NOTEBOOKS_SECONDS,
    NOTEBOOK_MEGABYTES,
    NOTEBOOK_SECONDS,
    notebook_figures,
)

SEEDS = [0, 1, 2]
INTERVAL = 2048  # pasos de entorno entre evaluaciones voraces
MAX_STEPS = 200_000  # tope por ejecución de CartPole


def _say(message: str) -> None:
    print(f"· {message}", file=sys.stderr, flush=True)


def machine_lines() -> list[str]:
    """Descripción de la máquina, para que las cifras tengan contexto."""
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        memory = f"{mem_kb / 1024**2:.0f} GB"
    except (OSError, StopIteration):  # pragma: no cover - fuera de Linux
        memory = "?"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"- Fecha: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- CPU: {cpu}; {os.cpu_count()} núcleos; memoria {memory}",
        f"- Carga media (1, 5, 15 min) al empezar: {load}",
        f"- Python {platform.python_version()} en {platform.platform()}",
        f"- {cartpole.numpy_seed_note()}",
        "- PyTorch con 1 hilo en todos los entrenamientos.",
    ]


def notebook_section(quick: bool) -> list[str]:
    lines = [
        f"| cuaderno | tiempo | memoria máx. del kernel | presupuesto "
        f"(≤ {NOTEBOOK_SECONDS} s, ≤ {NOTEBOOK_MEGABYTES / 1024:.1f} GB) |",
        "|---|---|---|---|",
    ]
    total = 0.0
    with tempfile.TemporaryDirectory() as scratch:
        targets: list[tuple[str, Path | None]]
        if quick:
            path = Path(scratch) / "mini.ipynb"
            nb = nbformat.v4.new_notebook()
            nb.cells = [
                nbformat.v4.new_code_cell("import helpers"),
                nbformat.v4.new_code_cell("helpers.set_seed(0)"),
            ]
            nbformat.write(nb, path)
            targets = [("mini (--quick)", path)]
        else:
            targets = [(module_id, None) for module_id in modules()]
        for name, path in targets:
            _say(f"cuaderno {name}")
            figures = notebook_figures(name, path)
            total += figures["seconds"]
            ok = (
                figures["seconds"] <= NOTEBOOK_SECONDS
                and figures["peak_mb"] <= NOTEBOOK_MEGABYTES
            )
            lines.append(
                f"| {name} | {figures['seconds']:.1f} s | "
                f"{figures['peak_mb']:.0f} MB | {'✓' if ok else '✗'} |"
            )
    lines.append(
        f"| **total** | **{total:.0f} s** | | "
        f"{'✓' if total <= ALL_NOTEBOOKS_SECONDS else '✗'} "
        f"(≤ {ALL_NOTEBOOKS_SECONDS // 60} min los siete) |"
    )
    return lines


def grpo_section(quick: bool) -> list[str]:
    import torch

    from helpers.tinylm import load_pretrained
    from helpers.tinylm.grpo import GRPOConfig, train_grpo

    torch.manual_seed(0)
    results = []
    for seed in [0] if quick else SEEDS:
        _say(f"GRPO, semilla {seed}")
        config = GRPOConfig(seed=seed, steps=2 if quick else GRPOConfig.steps)
        if quick:
            config.prompts_per_step, config.eval_samples = 4, 1
        start = time.perf_counter()
        history = train_grpo(load_pretrained(), config, progress=False)
        wall = time.perf_counter() - start
        results.append((seed, history, wall))
    lines = [
        "| semilla | precisión en evaluación | P(correcta \\| 17 × 24) "
        "| segundos de entrenamiento (con evaluaciones) | presupuesto |",
        "|---|---|---|---|---|",
    ]
    for seed, history, wall in results:
        accuracy, p_target = history["heldout_accuracy"], history["p_correct"]
        train_seconds = history["train_seconds"][-1]
        gain = 100 * (accuracy[-1] - accuracy[0])
        ok = gain >= 20 and p_target[-1] > 0.9 and train_seconds <= 60
        lines.append(
            f"| {seed} | {accuracy[0]:.1%} → {accuracy[-1]:.1%} ({gain:+.1f} puntos) "
            f"| {p_target[0]:.3f} → {p_target[-1]:.3f} "
            f"| {train_seconds:.1f} s ({wall:.1f} s) | {'✓' if ok else '✗'} |"
        )
    return lines


def grading_section(quick: bool) -> list[str]:
    students = 3 if quick else BUDGET_STUDENTS
    module_id = modules()[0]
    _say(f"calificación de {students} entregas de {module_id}")
    figures = grading_figures(module_id, students, jobs=2)
    seconds = float(figures["seconds"])  # type: ignore[arg-type]
    projected = seconds / students * BUDGET_STUDENTS
    ok = projected <= BUDGET_SECONDS
    note = f", {figures['n_problems']} con incidencias" if figures["n_problems"] else ""
    return [
        f"Módulo {module_id}, {students} entregas (un tercio resueltas, un tercio a "
        f"medias, un tercio sin tocar), 2 trabajos a la vez, aisladas con "
        f"bubblewrap{note}: **{seconds:.0f} s**, {seconds / students:.1f} s por "
        f"entrega; para {BUDGET_STUDENTS}: {projected:.0f} s "
        f"(presupuesto ≤ {BUDGET_SECONDS} s {'✓' if ok else '✗'}).",
    ]


def run(quick: bool, output: Path | None) -> int:
    """Ejecuta todo, imprime el Markdown y, si hay ``output``, lo escribe."""
    seeds = [0] if quick else SEEDS
    interval = 1024 if quick else INTERVAL
    max_steps = 1024 if quick else MAX_STEPS
    start = time.perf_counter()
    parts = ["# Banco de pruebas del curso", ""]
    parts += [
        "Generado por `make bench` (`python -m benchmarks all"
        + (" --quick" if quick else "")
        + "`). Cifras de una ejecución real en esta máquina; cambian con la "
        "máquina y con lo ocupada que esté.",
        "",
        "## Máquina",
        "",
        *machine_lines(),
        "",
        "## Cuadernos de solución, de principio a fin",
        "",
        *notebook_section(quick),
        "",
        "## CartPole-v1: el curso junto a Stable-Baselines3",
        "",
        f"Regla para todos: cada {thousands(interval)} pasos de entorno (o en la "
        "primera actualización después), 20 episodios con la política voraz "
        "(semillas de `helpers.training.evaluation_seed`; el DQN del curso usa "
        "las suyas, 10 000 + paso); «llega» en la primera evaluación con "
        "media ≥ 475. Segundos de reloj desde el inicio del entrenamiento, "
        f"evaluaciones incluidas en los dos lados. Semillas {seeds}; tope "
        f"{thousands(max_steps)} pasos. SB3 con los hiperparámetros de "
        "rl-baselines3-zoo para CartPole-v1. Razones < 1: el curso necesita menos.",
        "",
        *cartpole.cartpole_table(
            cartpole.cartpole_rows(seeds, interval, max_steps, _say), len(seeds)
        ),
        "",
        "## GRPO sobre el modelo diminuto (17 × 24)",
        "",
        "Desde el checkpoint supervisado del paquete, `GRPOConfig()` por defecto. "
        "Presupuesto: +20 puntos de precisión y P > 0,9 en ≤ 60 s de CPU.",
        "",
        *grpo_section(quick),
        "",
        "## Calificación",
        "",
        *grading_section(quick),
        "",
    ]
    minutes = (time.perf_counter() - start) / 60
    parts += [f"Tiempo total del banco: {minutes:.1f} min.", ""]
    text = "\n".join(parts)
    print(text)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        _say(f"escrito {output}")
    if quick:
        _say("modo --quick: comprueba el código del banco, las cifras no valen")
    return 0
