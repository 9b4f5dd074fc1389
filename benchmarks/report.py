"""``make bench``: todo lo que el curso promete, medido, en BENCHMARKS.md.

``python -m benchmarks all`` imprime y escribe en Markdown:

1. la máquina (CPU, núcleos, memoria, carga, versiones) y la fecha;
2. cada cuaderno de solución de principio a fin: tiempo y memoria del kernel;
3. CartPole-v1: DQN, REINFORCE con línea base, A2C y PPO del curso junto a DQN,
   A2C y PPO de Stable-Baselines3 (ver :mod:`benchmarks.cartpole`);
4. GRPO sobre el modelo diminuto: precisión y P(correcta | 17 × 24) antes y
   después, y segundos; y una fila por variante del objetivo (β > 0, μ = 2
   con recorte, normalización por longitud), con la KL al modelo de
   referencia y la longitud de las respuestas incorrectas;
5. la calificación de cada módulo: una clase de 100 entregas de cada uno;
6. GRPO, RLOO y PPO con crítico con las mismas respuestas muestreadas
   (precisión, entropía, segundos y memoria) y GRPO contra un verificador con
   trampa (ver :mod:`benchmarks.methods`);
7. el GRPO del curso frente a ``GRPOTrainer`` de TRL con el mismo presupuesto
   de respuestas, y LoRA frente al ajuste completo (ver
   :mod:`benchmarks.puente`);
8. las preferencias del módulo 10: el modelo de recompensa frente al techo de
   la anotadora, su sobreoptimización con GRPO y varias β, y DPO e IPO frente
   a GRPO (ver :mod:`benchmarks.preferencias`);
9. el oráculo del módulo 12: cuánto cuesta enumerar las respuestas del modelo
   supervisado y qué masa cubren (ver :mod:`benchmarks.oraculo`).

Primero se mide todo (:func:`measure`, un diccionario), luego se escribe: las
medidas en ``helpers/data/benchmarks.json`` (de ahí leen los cuadernos las
cifras del banco, con :mod:`helpers.bench_data`) y la tabla en Markdown
(:func:`render`, BENCHMARKS.md). Una prueba comprueba que BENCHMARKS.md es
exactamente lo que sale del JSON.

``--quick`` hace lo mismo en miniatura (un cuaderno de dos celdas, un
entrenamiento corto por agente, dos pasos de GRPO, dos entregas de dos módulos,
tres pasos de cada GRPO de preferencias con menos pares)
y no toca el
JSON de los cuadernos: comprueba que el código del banco funciona, no mide
nada. CI ejecuta solo eso.

``--only grpo`` (o ``notebooks``, ``cartpole``, ``grading``, ``methods``,
``puente``, ``preferencias``, ``oraculo``) mide solo esa
parte y la mezcla con ``helpers/data/benchmarks.json``; BENCHMARKS.md dice qué
se volvió a medir y cuándo. Con ``--quick`` además, esa parte en miniatura
junto al resto del JSON, sin escribirlo: para probar el código de una parte.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import nbformat

from autograder.course import module_ids as modules
from benchmarks import cartpole
from benchmarks import methods as methods_bench
from benchmarks import oraculo as oraculo_bench
from benchmarks import preferencias as preferencias_bench
from benchmarks import puente as puente_bench
from benchmarks.grading import (
    BUDGET_SECONDS,
    BUDGET_STUDENTS,
    grading_figures,
    projected,
)
from benchmarks.notebooks import (
    ALL_NOTEBOOKS_SECONDS,
    NOTEBOOK_MEGABYTES,
    NOTEBOOK_SECONDS,
    notebook_figures,
    notebook_megabytes,
    notebook_seconds,
)
from helpers.bench_data import DATA, seed_list
from helpers.formatting import number, percent

SEEDS = [0, 1, 2]
#: Presupuesto de ``make bench`` entero, en minutos (con 2 núcleos). Casi todo
#: es CartPole (4 agentes × 20 semillas, junto a SB3: 160 entrenamientos) y el
#: módulo 10 (3 semillas × 7 entrenamientos del modelo diminuto);
#: CI no lo ejecuta (``make bench-quick``), y cada parte se puede volver a
#: medir sola con ``--only``.
BENCH_MINUTES = 180


def _say(message: str) -> None:
    print(f"· {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Medir
# ---------------------------------------------------------------------------


def machine() -> dict[str, str]:
    """La máquina y las versiones, para que las cifras tengan contexto."""
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
        memory = f"{number(mem_kb / 1024**2, 0)} GB"
    except (OSError, StopIteration):  # pragma: no cover - fuera de Linux
        memory = "?"
    return {
        "date": f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        "cpu": f"{cpu}; {os.cpu_count()} núcleos; memoria {memory}",
        "load": "; ".join(number(x, 2) for x in os.getloadavg()),
        "python": f"Python {platform.python_version()} en {platform.platform()}",
        "libraries": cartpole.numpy_seed_note(),
    }


def measure_notebooks(
    quick: bool, module_ids: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Tiempo y memoria de cada cuaderno de solución (o solo de ``module_ids``;
    uno de dos celdas si quick)."""
    results = []
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
            targets = [(module_id, None) for module_id in module_ids or modules()]
        for name, path in targets:
            _say(f"cuaderno {name}")
            results.append({"module": name, **notebook_figures(name, path)})
    return results


# Las variantes del objetivo de GRPO que mide el banco junto a la configuración
# por defecto: (nombre, etiqueta en la tabla, cambios sobre GRPOConfig()).
GRPO_VARIANTS: list[tuple[str, str, dict[str, Any]]] = [
    ("kl_0.04", "β = 0,04 (KL k3 a la referencia)", {"kl_coef": 0.04}),
    ("kl_0.4", "β = 0,4", {"kl_coef": 0.4}),
    ("epochs_2_clip", "μ = 2 con recorte ε = 0,2", {"epochs": 2, "clip_eps": 0.2}),
    ("grpo_norm", "÷ \\|o_i\\| (normalización «grpo»)", {"loss_normalization": "grpo"}),
    (
        "deepseekmath",
        "÷ σ y ÷ \\|o_i\\| (las normalizaciones de DeepSeekMath, sin KL)",
        {"loss_normalization": "grpo", "std_normalize": True},
    ),
]


def _grpo_run(seed: int, quick: bool, **changes: Any) -> dict[str, Any]:
    """Una ejecución de GRPO desde el checkpoint supervisado, con sus cifras."""
    import statistics

    from helpers.tinylm import kl_to_reference, load_pretrained
    from helpers.tinylm.grpo import GRPOConfig, train_grpo

    config = GRPOConfig(seed=seed, steps=2 if quick else GRPOConfig.steps, **changes)
    if quick:
        config.prompts_per_step, config.eval_samples = 4, 1
    start = time.perf_counter()
    model = load_pretrained()
    history = train_grpo(model, config, progress=False)
    wall_seconds = time.perf_counter() - start
    first_last = {
        key: [history[key][0], history[key][-1]]
        for key in (
            "heldout_accuracy",
            "heldout_greedy_accuracy",
            "heldout_pass_at_k",
            "p_correct",
        )
    }
    window = min(10, len(history["step"]))

    def mean_of(values: list[float]) -> float:
        values = [v for v in values if v == v]  # sin los nan (ningún fallo)
        return statistics.fmean(values) if values else float("nan")

    problems = None if not quick else load_problems_quick()
    return {
        "seed": seed,
        "pass_k": config.eval_samples,
        **first_last,
        "train_seconds": history["train_seconds"][-1],
        "wall_seconds": wall_seconds,
        # Lo que mueve cada término del objetivo, medido en la misma ejecución
        "kl_to_reference": kl_to_reference(model, load_pretrained(), problems),
        "wrong_length": [
            mean_of(history["wrong_length"][:window]),
            mean_of(history["wrong_length"][-window:]),
        ],
        "mixed_groups": [
            mean_of(history["mixed_groups"][:window]),
            mean_of(history["mixed_groups"][-window:]),
        ],
        "clip_fraction": mean_of(history["clip_fraction"]),
    }


def load_problems_quick() -> list[tuple[int, int]]:
    """Pocos problemas para medir la KL en ``--quick``."""
    from helpers.tinylm import heldout_problems

    return heldout_problems()[:8]


def _grpo_job(job: tuple[int, bool, dict[str, Any]]) -> dict[str, Any]:
    """Un trabajo de :func:`measure_grpo_all`: ``(semilla, quick, cambios)``."""
    seed, quick, changes = job
    return _grpo_run(seed, quick, **changes)


def measure_grpo_all(
    quick: bool, jobs: int = 2
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """GRPO desde el checkpoint supervisado y cada variante de ``GRPO_VARIANTS``,
    con las mismas semillas.

    Cada ejecución entrena con un hilo (``GRPOConfig.num_threads``) y toma sus
    números de generadores con su semilla, así que el resultado no depende del
    orden ni del proceso: van ``jobs`` a la vez, cada una en un proceso nuevo,
    como en CartPole.

    Returns:
        ``(grpo, variantes)``: las ejecuciones sin cambios, una por semilla, y
        un diccionario por variante (``name``, ``label``, ``changes``, ``runs``).
    """
    seeds = [0] if quick else SEEDS
    variants = GRPO_VARIANTS[:1] if quick else GRPO_VARIANTS
    work = [("GRPO", seed, {}) for seed in seeds] + [
        (f"GRPO, {name}", seed, changes)
        for name, _, changes in variants
        for seed in seeds
    ]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=context) as pool:
        futures = [
            pool.submit(_grpo_job, (seed, quick, changes)) for _, seed, changes in work
        ]
        for (label, seed, _), future in zip(work, futures, strict=True):
            future.result()  # en orden: el mensaje sale cuando termina cada una
            _say(f"{label}, semilla {seed}")
        results = [future.result() for future in futures]
    grpo = results[: len(seeds)]
    rest = iter(results[len(seeds) :])
    grouped = [
        {
            "name": name,
            "label": label,
            "changes": changes,
            "runs": [next(rest) for _ in seeds],
        }
        for name, label, changes in variants
    ]
    return grpo, grouped


def measure_grading(
    quick: bool, module_ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """Calificar una clase fabricada de cada módulo (o solo de ``module_ids``).

    Cada módulo con :data:`BUDGET_STUDENTS` entregas, la clase del
    presupuesto. Con ``quick``, dos entregas del primer módulo y del último:
    prueba el código, no mide.
    """
    all_modules = list(module_ids or modules())
    if quick:
        plan = [(all_modules[0], 2), (all_modules[-1], 2)]
    else:
        plan = [(module_id, BUDGET_STUDENTS) for module_id in all_modules]
    results = []
    for module_id, students in plan:
        _say(f"calificación de {students} entregas de {module_id}")
        figures = grading_figures(module_id, students, jobs=2)
        results.append(
            {
                "module": module_id,
                "students": students,
                "seconds": float(figures["seconds"]),  # type: ignore[arg-type]
                "n_problems": int(figures["n_problems"]),  # type: ignore[call-overload]
            }
        )
    return {"jobs": 2, "modules": results}


def measure_cartpole(quick: bool, seeds: list[int] | None = None) -> dict[str, Any]:
    """CartPole-v1, el curso junto a SB3 (por defecto, las semillas del informe)."""
    seeds = [0] if quick else (seeds or cartpole.REPORT_SEEDS)
    interval = 1024 if quick else cartpole.INTERVAL
    max_steps = 1024 if quick else cartpole.MAX_STEPS
    return {
        "seeds": seeds,
        "interval": interval,
        "max_steps": max_steps,
        "target": cartpole.TARGET,
        "eval_episodes": cartpole.EVAL_EPISODES,
        "confirm_episodes": cartpole.CONFIRM_EPISODES,
        "agents": cartpole.measure(seeds, interval, max_steps, _say),
    }


#: Las partes que se pueden medir solo para algunos módulos (``--module``).
BY_MODULE = ("notebooks", "grading")


def _measure_section(
    section: str,
    quick: bool,
    seeds: list[int] | None,
    module_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Las claves que ``section`` aporta al JSON del banco (``module_ids``:
    solo esos módulos, en las partes de :data:`BY_MODULE`)."""
    if section == "notebooks":
        return {"notebooks": measure_notebooks(quick, module_ids)}
    if section == "cartpole":
        return {"cartpole": measure_cartpole(quick, seeds)}
    if section == "grpo":
        grpo, variants = measure_grpo_all(quick)
        return {"grpo": grpo, "grpo_variants": variants}
    if section == "grading":
        return {"grading": measure_grading(quick, module_ids)}
    if section == "methods":
        return {"methods": methods_bench.measure(quick, _say)}
    if section == "puente":
        return {"puente": puente_bench.measure(quick, _say)}
    if section == "preferencias":
        return {"preferencias": preferencias_bench.measure(quick, _say)}
    if section == "oraculo":
        return {
            "oraculo": oraculo_bench.measure(quick, _say),
            "oraculo_estimators": oraculo_bench.measure_estimators(quick, _say),
        }
    raise SystemExit(f"--only: {section!r} no es de {SECTIONS}")


def measure_sections(
    sections: Iterable[str],
    quick: bool,
    seeds: list[int] | None = None,
    module_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Mide cada parte de ``sections`` y apunta sus minutos en ``section_minutes``
    (no los de una parte medida solo para algunos módulos: no son los suyos)."""
    data: dict[str, Any] = {"section_minutes": {}}
    for section in sections:
        start = time.perf_counter()
        if module_ids and section in BY_MODULE:
            data.update(_measure_section(section, quick, seeds, module_ids))
            continue
        data.update(_measure_section(section, quick, seeds))
        data["section_minutes"][section] = (time.perf_counter() - start) / 60
    return data


def merge_module_rows(
    old: list[dict[str, Any]], new: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Las filas de ``old`` (una por módulo, clave ``"module"``) con las de
    ``new`` en su lugar, y las de módulos nuevos añadidas, en el orden de los
    módulos del curso (los que ya no existen, al final, como estaban)."""
    rows = {row["module"]: row for row in old}
    rows.update({row["module"]: row for row in new})
    order = {module_id: i for i, module_id in enumerate(modules())}
    return sorted(rows.values(), key=lambda row: order.get(row["module"], len(order)))


def measure(quick: bool, seeds: list[int] | None = None) -> dict[str, Any]:
    """Todas las medidas del banco, en un diccionario que cabe en JSON."""
    start = time.perf_counter()
    data: dict[str, Any] = {"quick": quick, "machine": machine()}
    data.update(measure_sections(SECTIONS, quick, seeds))
    data["minutes"] = (time.perf_counter() - start) / 60
    return data


# ---------------------------------------------------------------------------
# Escribir
# ---------------------------------------------------------------------------


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def render_notebooks(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| cuaderno | tiempo | memoria máx. del kernel | presupuesto "
        f"(≤ {NOTEBOOK_SECONDS} s o el suyo, "
        f"≤ {number(NOTEBOOK_MEGABYTES / 1024, 1)} GB o la suya) |",
        "|---|---|---|---|",
    ]
    for r in results:
        budget = notebook_seconds(r["module"])
        memory = notebook_megabytes(r["module"])
        ok = r["seconds"] <= budget and r["peak_mb"] <= memory
        own = [] if budget == NOTEBOOK_SECONDS else [f"≤ {budget} s"]
        if memory != NOTEBOOK_MEGABYTES:
            own.append(f"≤ {number(memory / 1024, 1)} GB")
        own = f" ({', '.join(own)})" if own else ""
        lines.append(
            f"| {r['module']} | {number(r['seconds'], 1)} s | "
            f"{number(r['peak_mb'], 0)} MB | {_mark(ok)}{own} |"
        )
    total = sum(r["seconds"] for r in results)
    lines.append(
        f"| **total** | **{number(total, 0)} s** | | "
        f"{_mark(total <= ALL_NOTEBOOKS_SECONDS)} "
        f"(≤ {ALL_NOTEBOOKS_SECONDS // 60} min todos) |"
    )
    return lines


def render_grpo(results: list[dict[str, Any]]) -> list[str]:
    def change(pair: list[float]) -> str:
        before, after = pair
        gain = number(100 * (after - before), 1, sign=True)
        return f"{percent(before)} → {percent(after)} ({gain})"

    k = results[0]["pass_k"]
    lines = [
        "| semilla | precisión, T = 1 (puntos) | precisión voraz (puntos) "
        f"| pass@{k} (puntos) | P(correcta \\| 17 × 24), T = 1 "
        "| segundos de entrenamiento (con evaluaciones) | presupuesto |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        (acc0, acc1), (p0, p1) = r["heldout_accuracy"], r["p_correct"]
        ok = acc1 - acc0 >= 0.20 and p1 > 0.9 and r["train_seconds"] <= 60
        lines.append(
            f"| {r['seed']} | {change(r['heldout_accuracy'])} "
            f"| {change(r['heldout_greedy_accuracy'])} "
            f"| {change(r['heldout_pass_at_k'])} "
            f"| {number(p0, 3)} → {number(p1, 3)} "
            f"| {number(r['train_seconds'], 1)} s ({number(r['wall_seconds'], 1)} s) "
            f"| {_mark(ok)} |"
        )
    return lines


def render_grpo_variants(
    default: list[dict[str, Any]], variants: list[dict[str, Any]]
) -> list[str]:
    """Una fila por variante del objetivo, con las medias sobre sus semillas."""

    def mean(runs: list[dict[str, Any]], key: str, index: int | None = -1) -> float:
        values = [r[key] if index is None else r[key][index] for r in runs]
        return sum(values) / len(values)

    def row(label: str, runs: list[dict[str, Any]]) -> str:
        wrong = f"{number(mean(runs, 'wrong_length', 0), 2)} → "
        wrong += number(mean(runs, "wrong_length"), 2)
        return (
            f"| {label} | {len(runs)} | {percent(mean(runs, 'heldout_accuracy'))} "
            f"| {percent(mean(runs, 'heldout_greedy_accuracy'))} "
            f"| {number(mean(runs, 'p_correct'), 3)} "
            f"| {number(mean(runs, 'kl_to_reference', None), 4)} | {wrong} "
            f"| {percent(mean(runs, 'clip_fraction', None), 2)} "
            f"| {number(mean(runs, 'train_seconds', None), 1)} s |"
        )

    lines = [
        "| variante | semillas | precisión, T = 1 | precisión voraz "
        "| P(correcta \\| 17 × 24), T = 1 | KL(π_θ ‖ π_ref) por token "
        "| longitud de las incorrectas (10 primeros → 10 últimos pasos) "
        "| fracción recortada | segundos de entrenamiento |",
        "|---|---|---|---|---|---|---|---|---|",
        row("por defecto (μ = 1, sin recorte, β = 0, «dr_grpo»)", default),
    ]
    lines += [row(v["label"], v["runs"]) for v in variants]
    return lines


def section_minutes(data: dict[str, Any]) -> dict[str, float | None]:
    """Los minutos de cada parte del banco (``None`` si no tiene los suyos).

    Las medidas de antes de ``section_minutes`` solo guardaban el total; de
    ellas, las partes que llevan sus propios ``minutes`` (08, 09 y 10) aún
    dicen cuánto tardaron.
    """
    known = data.get("section_minutes", {})
    result: dict[str, float | None] = {}
    for section in SECTIONS:
        own = data.get(section)
        result[section] = known.get(section) or (
            own.get("minutes") if isinstance(own, dict) else None
        )
    return result


def render_minutes(data: dict[str, Any]) -> list[str]:
    """Minutos por parte y el total frente a :data:`BENCH_MINUTES`.

    El total solo se compara con el presupuesto cuando todas las partes tienen
    su tiempo; si no, se da lo que suman las que lo tienen, como mínimo.
    """
    minutes = section_minutes(data)
    lines = ["| parte | para medirla sola | minutos |", "|---|---|---|"]
    for section, value in minutes.items():
        shown = number(value, 1) if value is not None else "—"
        lines.append(f"| {SECTION_NAMES[section]} | `--only {section}` | {shown} |")
    known = [v for v in minutes.values() if v is not None]
    missing = [s for s, v in minutes.items() if v is None]
    total = sum(known)
    lines.append("")
    if missing:
        names = ", ".join(SECTION_NAMES[s] for s in missing)
        lines.append(
            f"Las partes sin minutos ({names}) se midieron antes de que el banco "
            f"guardara el tiempo de cada parte. Las que lo tienen suman "
            f"{number(total, 1)} min; la última medida completa, del "
            f"{data['machine']['date']}, tardó {number(data['minutes'], 1)} min, "
            "con menos partes que ahora. El presupuesto del banco entero (≤ "
            f"{BENCH_MINUTES} min en 2 núcleos) se juzga con el próximo `make bench`."
        )
    else:
        lines.append(
            f"Tiempo total del banco: {number(total, 1)} min (presupuesto "
            f"≤ {BENCH_MINUTES} min en 2 núcleos {_mark(total <= BENCH_MINUTES)})."
        )
    return lines


def render_grading(r: dict[str, Any]) -> list[str]:
    if "modules" not in r:
        return _render_grading_one_module(r)
    lines = [
        f"Clases fabricadas (un tercio de entregas resueltas, un tercio a medias, "
        f"un tercio sin tocar), {r['jobs']} trabajos a la vez, cada entrega en su "
        "sandbox y con su kernel, bifurcados de un servidor que ya cargó los "
        "módulos del cuaderno (autograder/forkserver.py). Los módulos con menos de "
        f"{BUDGET_STUDENTS} entregas se proyectan a {BUDGET_STUDENTS} al mismo "
        "ritmo; la parte fija del lote (preparar el gradebook, escribir el "
        "informe) se reparte entonces entre menos entregas, así que la "
        "proyección peca por arriba.",
        "",
        f"| módulo | entregas | segundos | por entrega | para {BUDGET_STUDENTS} "
        f"| presupuesto (≤ {BUDGET_SECONDS} s por {BUDGET_STUDENTS}) |",
        "|---|---|---|---|---|---|",
    ]
    for m in r["modules"]:
        students, seconds = m["students"], m["seconds"]
        per_100 = projected(seconds, students)
        kind = "medido" if students == BUDGET_STUDENTS else "proyectado"
        note = f" ({m['n_problems']} con incidencias)" if m["n_problems"] else ""
        lines.append(
            f"| {m['module']} | {students}{note} | {number(seconds, 0)} s "
            f"| {number(seconds / max(1, students), 1)} s "
            f"| {number(per_100, 0)} s ({kind}) | {_mark(per_100 <= BUDGET_SECONDS)} |"
        )
    return lines


def _render_grading_one_module(r: dict[str, Any]) -> list[str]:
    """La calificación de un solo módulo (los datos de antes de medir todos)."""
    students, seconds = r["students"], r["seconds"]
    per_100 = projected(seconds, students)
    note = f", {r['n_problems']} con incidencias" if r["n_problems"] else ""
    return [
        f"Módulo {r['module']}, {students} entregas (un tercio resueltas, un tercio "
        f"a medias, un tercio sin tocar), {r['jobs']} trabajos a la vez, aisladas "
        f"con bubblewrap{note}: **{number(seconds, 0)} s**, "
        f"{number(seconds / students, 1)} s por entrega; para {BUDGET_STUDENTS}: "
        f"{number(per_100, 0)} s (presupuesto ≤ {BUDGET_SECONDS} s "
        f"{_mark(per_100 <= BUDGET_SECONDS)}).",
    ]


def render(data: dict[str, Any]) -> str:
    """BENCHMARKS.md a partir de las medidas (el JSON que escribe :func:`run`)."""
    m, cp = data["machine"], data["cartpole"]
    seeds = seed_list(cp["seeds"])
    parts = [
        "# Banco de pruebas del curso",
        "",
        "Generado por `make bench` (`python -m benchmarks all"
        + (" --quick" if data["quick"] else "")
        + "`). Cifras de una ejecución real en esta máquina; cambian con la "
        "máquina y con lo ocupada que esté. Las medidas, con cada evaluación de "
        "cada ejecución, están en `helpers/data/benchmarks.json`.",
        "",
        "## Máquina",
        "",
        f"- Fecha: {m['date']}",
        f"- CPU: {m['cpu']}",
        f"- Carga media (1, 5, 15 min) al empezar: {m['load']}",
        f"- {m['python']}",
        f"- {m['libraries']}",
        "- PyTorch con 1 hilo en todos los entrenamientos.",
        *(
            f"- Medido de nuevo solo {', '.join(u['sections'])}: {u['date']} "
            f"(carga media {u['load']}"
            # Las medidas de antes no guardaban la CPU: la de la medida completa
            + (f"; CPU {u['cpu']}" if u.get("cpu", m["cpu"]) != m["cpu"] else "")
            + ")."
            for u in data.get("updates", [])
        ),
        "",
        "## Cuadernos de solución, de principio a fin",
        "",
        *render_notebooks(data["notebooks"]),
        "",
        "## CartPole-v1: el curso junto a Stable-Baselines3",
        "",
        f"Regla para todos: cada {number(cp['interval'], 0)} pasos de entorno, "
        "justo después de la actualización que aprende de los datos hasta ese paso "
        "(si los bloques de un agente no caen en el múltiplo, tras la primera "
        "actualización después; SB3 evalúa al empezar cada rollout, tras el "
        "`train()` del anterior, así que en cada evaluación los dos lados llevan "
        "hechas todas las actualizaciones que tocan con sus pasos), "
        f"{cp['eval_episodes']} episodios con la "
        "política voraz (semillas de `helpers.training.evaluation_seed`; el DQN del "
        "curso usa las suyas, 10 000 + paso). "
        + (
            f"Una evaluación con media ≥ {number(cp['target'], 0)} se confirma en "
            f"el acto con {cp['confirm_episodes']} episodios nuevos "
            "(`helpers.training.confirmation_seed`); «llega» en la primera "
            "evaluación confirmada, y si la confirmación falla sigue entrenando. "
            if cp.get("confirm_episodes")
            else "«llega» en la primera evaluación con media ≥ "
            f"{number(cp['target'], 0)}. "
        )
        + "Segundos de reloj desde el inicio del entrenamiento, evaluaciones "
        "incluidas en los dos lados; dos ejecuciones a la vez, una por núcleo. "
        f"Semillas {seeds} (los hiperparámetros del curso se ajustan con otras, "
        f"{seed_list(cartpole.TUNING_SEEDS)}); tope {number(cp['max_steps'], 0)} "
        "pasos: las ejecuciones que no llegan cuentan con el tope en las medianas "
        "y los cuartiles. SB3 "
        "con los hiperparámetros de rl-baselines3-zoo para CartPole-v1. Razones "
        "< 1: el curso necesita menos. Entre paréntesis, el intervalo del 90 % de "
        "cada razón por remuestreo (*bootstrap* de percentiles, Efron 1979: las "
        "semillas de cada lado, remuestreadas 10 000 veces con reemplazo): si "
        "contiene el 1, la diferencia cabe en el ruido entre semillas. La última "
        "columna es lo que promete cada agente del curso frente a su par "
        "(`benchmarks.cartpole.BUDGET`): una mediana de pasos no mayor que la de "
        "SB3 (DQN y PPO, también de segundos) y una caja de pasos (de Q1 a Q3) "
        "no más ancha; ✗ es una promesa que estas semillas no cumplen. La caja "
        "lleva la razón de anchuras curso/SB3 y su intervalo: cuando contiene "
        "el 1, ✓ o ✗ dicen lo que pasó con estas semillas, no quién varía menos.",
        "",
        *cartpole.render_table(cp["agents"], len(cp["seeds"]), cp["target"]),
        "",
        "## GRPO sobre el modelo diminuto (17 × 24)",
        "",
        "Desde el checkpoint supervisado del paquete, `GRPOConfig()` por defecto. "
        "Precisión en los problemas de evaluación muestreando a temperatura 1, "
        "decodificando de forma voraz y pass@k (acierta alguna de k muestras). "
        "Presupuesto: +20 puntos de precisión a T = 1 y P > 0,9 en ≤ 60 s de CPU. "
        "Cada ejecución, en un proceso nuevo con un hilo; dos a la vez, una por "
        "núcleo.",
        "",
        *render_grpo(data["grpo"]),
        "",
        *(
            [
                "Las variantes del objetivo completo (`GRPOConfig` con un cambio "
                "cada una; medias sobre las semillas, al final del entrenamiento). "
                "La KL al modelo de referencia (el punto de partida) se mide con "
                "k3 sobre 4 respuestas a T = 1 por problema de evaluación.",
                "",
                *render_grpo_variants(data["grpo"], data["grpo_variants"]),
                "",
            ]
            if data.get("grpo_variants")
            else []
        ),
        *(
            [
                "## GRPO, RLOO y PPO con crítico, con las mismas respuestas",
                "",
                *methods_bench.render(data["methods"]),
                "",
            ]
            if data.get("methods")
            else []
        ),
        *(
            [
                "## El GRPO del curso y GRPOTrainer de TRL, con las mismas respuestas",
                "",
                *puente_bench.render(data["puente"]),
                "",
            ]
            if data.get("puente")
            else []
        ),
        *(
            [
                "## Preferencias (10): el modelo de recompensa, su "
                "sobreoptimización y DPO",
                "",
                *preferencias_bench.render(data["preferencias"]),
                "",
            ]
            if data.get("preferencias")
            else []
        ),
        *(
            [
                "## El oráculo (12): enumerar las respuestas",
                "",
                *oraculo_bench.render(data["oraculo"]),
                "",
                *(
                    [
                        "### Los estimadores del gradiente frente a ∇J",
                        "",
                        *oraculo_bench.render_estimators(data["oraculo_estimators"]),
                        "",
                    ]
                    if data.get("oraculo_estimators")
                    else []
                ),
            ]
            if data.get("oraculo")
            else []
        ),
        "## Calificación",
        "",
        *render_grading(data["grading"]),
        "",
        "## Lo que tarda el banco",
        "",
        *render_minutes(data),
        "",
    ]
    return "\n".join(parts)


SECTIONS = (
    "notebooks",
    "cartpole",
    "grpo",
    "grading",
    "methods",
    "puente",
    "preferencias",
    "oraculo",
)
#: Cómo se llama cada parte en el informe.
SECTION_NAMES = {
    "notebooks": "cuadernos",
    "cartpole": "CartPole junto a SB3",
    "grpo": "GRPO (07)",
    "grading": "calificación",
    "methods": "métodos (08)",
    "puente": "puente (09)",
    "preferencias": "preferencias (10)",
    "oraculo": "oráculo (12)",
}


def measure_only(
    sections: list[str],
    seeds: list[int] | None = None,
    quick: bool = False,
    module_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Mide solo ``sections`` y las mezcla con la última medida completa.

    El resto de ``helpers/data/benchmarks.json`` se conserva tal cual (se lee
    al terminar de medir, para no pisar lo que haya cambiado mientras), y
    ``updates`` apunta qué se volvió a medir, cuándo y con qué carga. Con
    ``quick``, cada parte en miniatura y el resultado marcado ``quick``
    (:func:`run` no lo escribe en el JSON de los cuadernos). Con
    ``module_ids``, las partes de :data:`BY_MODULE` solo para esos módulos:
    sus filas sustituyen a las que había (:func:`merge_module_rows`).
    """
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise SystemExit(f"--only: {unknown} no son de {SECTIONS}")
    if module_ids:
        other = [s for s in sections if s not in BY_MODULE]
        if other:
            raise SystemExit(f"--module solo vale con --only {' o '.join(BY_MODULE)}")
        unknown = [m for m in module_ids if m not in modules()]
        if unknown:
            raise SystemExit(f"--module: {unknown} no son módulos del curso")
    current = machine()
    measured = measure_sections(sections, quick, seeds, module_ids)
    minutes = measured.pop("section_minutes")
    data = json.loads(DATA.read_text(encoding="utf-8"))
    if data.get("quick"):
        raise SystemExit("--only mezcla con una medida completa, no con --quick")
    if module_ids and "notebooks" in measured:
        measured["notebooks"] = merge_module_rows(
            data["notebooks"], measured["notebooks"]
        )
    if module_ids and "grading" in measured:
        grading = measured["grading"]
        grading["modules"] = merge_module_rows(
            data["grading"]["modules"], grading["modules"]
        )
    data.update(measured)
    data.setdefault("section_minutes", {}).update(minutes)
    data["quick"] = quick
    data.setdefault("updates", []).append(
        {
            "sections": sections,
            **({"modules": list(module_ids)} if module_ids else {}),
            "date": current["date"],
            "load": current["load"],
            "cpu": current["cpu"],
        }
    )
    return data


def run(
    quick: bool,
    output: Path | None,
    only: list[str] | None = None,
    seeds: list[int] | None = None,
    module_ids: list[str] | None = None,
) -> int:
    """Mide todo, imprime el Markdown y lo escribe en ``output``.

    Sin ``--quick``, las medidas van también a ``helpers/data/benchmarks.json``;
    con él, junto a ``output`` si lo hay (nunca a los datos de los cuadernos).
    Con ``only`` (p. ej. ``["grpo"]``) mide solo esas partes y las mezcla con
    el JSON que ya hay; con ``only`` y ``quick``, las mide en miniatura.
    """
    if module_ids and not only:
        raise SystemExit("--module va con --only notebooks o --only grading")
    data = (
        measure_only(only, seeds, quick, module_ids) if only else measure(quick, seeds)
    )
    text = render(data)
    print(text)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        _say(f"escrito {output}")
    data_path = output.with_suffix(".json") if quick and output else DATA
    if not quick or output:
        data_path.parent.mkdir(parents=True, exist_ok=True)
        data_path.write_text(
            json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
        _say(f"escrito {data_path}")
    if quick:
        _say("modo --quick: comprueba el código del banco, las cifras no valen")
    return 0
