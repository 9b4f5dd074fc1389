"""Módulo 10: el modelo de recompensa, su sobreoptimización con GRPO y DPO e
IPO sobre los mismos pares (``helpers.tinylm.preference_runs``).

Se vuelven a calcular, desde cero, las ejecuciones largas que dibuja el
cuaderno 10 (``preference_runs.compute_all``: tres semillas, dos a la vez,
cada una en su proceso con un hilo; BENCHMARKS.md dice cuánto tardó). Por
semilla: un modelo de recompensa entrenado con Bradley–Terry sobre los pares
de la anotadora, GRPO contra él con cada β de ``BETAS``, GRPO contra la
utilidad verdadera (el techo, «verdad») y DPO e IPO sobre los mismos pares.

Al JSON del banco va un resumen sin las curvas por paso (esas están en
``helpers/data/preference_runs.json``): por semilla, las precisiones por
pares del modelo de recompensa y sus segundos; por ejecución de GRPO, dónde
alcanza su máximo la utilidad verdadera suavizada (``preference_runs.peak``),
la utilidad media del modelo final y los segundos; por DPO e IPO, la utilidad
al final y en la mejor época, la KL final y los segundos. Aparte, lo que no
depende de la semilla: el techo de la anotadora y la precisión por pares del
SFT por log-probabilidad.

``python -m benchmarks all --only preferencias --output BENCHMARKS.md`` lo
mide y lo mezcla con el resto del banco.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from helpers.formatting import number, percent

SEEDS = [0, 1, 2]
#: ``--quick``: una semilla, tres pasos de GRPO por ejecución, menos pares y
#: una época de DPO e IPO. El mismo código (``run_seed`` y ``data_figures``),
#: en miniatura: prueba que funciona, no mide.
QUICK_STEPS = 3
QUICK_SIZES = {"train_size": 256, "test_size": 128, "dpo_epochs": 1}


def _compute(quick: bool, jobs: int) -> dict[str, Any]:
    """Las ejecuciones, con la forma de ``preference_runs.compute_all``."""
    import torch

    from helpers.tinylm import preference_runs as runs
    from helpers.tinylm import preferences as pref

    if not quick:
        return runs.compute_all(SEEDS, jobs)
    threads = torch.get_num_threads()  # run_seed fija un hilo en este proceso
    start = time.perf_counter()
    try:
        seed = runs.run_seed(0, QUICK_STEPS, **QUICK_SIZES)
    finally:
        torch.set_num_threads(threads)
    config = {
        "steps": QUICK_STEPS,
        "betas": list(runs.BETAS),
        "seeds": [0],
        "pairs": {
            "train": QUICK_SIZES["train_size"],
            "test": QUICK_SIZES["test_size"],
        },
        "annotator_temperature": pref.ANNOTATOR_TEMPERATURE,
        "dpo_runs": {
            k: {**dataclasses.asdict(v), "epochs": QUICK_SIZES["dpo_epochs"]}
            for k, v in runs.DPO_RUNS.items()
        },
        "total_seconds": time.perf_counter() - start,
    }
    data = runs.data_figures(QUICK_SIZES["test_size"])
    return {"config": config, "data": data, "seeds": {"0": seed}}


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
    """Lo que guarda el banco de la salida de ``compute_all`` (sin curvas)."""
    from helpers.tinylm.preference_runs import SMOOTHING, peak

    config = raw["config"]
    per_seed = []
    for seed, result in raw["seeds"].items():
        grpo = {
            name: {
                **peak(run),
                "steps": len(run["true"]),
                "utility": run["utility"],
                "seconds": run["seconds"],
            }
            for name, run in result["grpo"].items()
        }
        dpo = {}
        for name, run in result["dpo"].items():
            utility = run["utility"]  # por época; la 0 es el SFT
            best = max(range(len(utility)), key=utility.__getitem__)
            dpo[name] = {
                "epochs": len(utility) - 1,
                "utility_final": utility[-1],
                "utility_best": utility[best],
                "best_epoch": best,
                "kl_final": run["kl"][-1],
                "test_accuracy": run["test_accuracy"][-1],
                "seconds": run["seconds"],
            }
        per_seed.append(
            {
                "seed": int(seed),
                "reward_model": dict(result["reward_model"]),
                "grpo": grpo,
                "dpo": dpo,
            }
        )
    return {
        "steps": config["steps"],
        "betas": config["betas"],
        "seeds": config["seeds"],
        "pairs": config["pairs"],
        "annotator_temperature": config["annotator_temperature"],
        "smoothing": SMOOTHING,
        "dpo_runs": {
            name: {k: cfg[k] for k in ("beta", "loss_type", "epochs")}
            for name, cfg in config["dpo_runs"].items()
        },
        "data": raw["data"],
        "runs": per_seed,
        "total_seconds": config["total_seconds"],
    }


def _last_time() -> str:
    """Cuánto tardó la última medida guardada de esta parte, si la hay."""
    from helpers.bench_data import load

    try:
        minutes = load().get("preferencias", {}).get("minutes")
    except (OSError, ValueError):
        return ""
    return f" (la última vez, {number(minutes, 0)} min)" if minutes else ""


def measure(
    quick: bool, say: Callable[[str], None] = print, jobs: int = 2
) -> dict[str, Any]:
    """Las ejecuciones de preferencias (``jobs`` semillas a la vez), resumidas."""
    start = time.perf_counter()
    if quick:
        say("preferencias en miniatura, semilla 0")
    else:
        say(
            f"preferencias, semillas {', '.join(map(str, SEEDS))}, "
            f"{jobs} a la vez{_last_time()}"
        )
    data = summarize(_compute(quick, jobs))
    data["jobs"] = 1 if quick else jobs  # en miniatura, en este mismo proceso
    data["minutes"] = (time.perf_counter() - start) / 60
    return data


# ---------------------------------------------------------------------------
# Escribir
# ---------------------------------------------------------------------------


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _spread(values: list[float], show: Callable[[float], str]) -> str:
    """La media y, entre paréntesis, la mínima y la máxima entre semillas."""
    if len(values) == 1:
        return show(values[0])
    return f"{show(_mean(values))} ({show(min(values))}–{show(max(values))})"


def _grpo_label(name: str) -> str:
    return "contra la utilidad verdadera" if name == "verdad" else name


def rm_grpo_seconds(run: dict[str, Any], name: str) -> float:
    """Segundos de GRPO y, si entrena contra él, del modelo de recompensa."""
    seconds = run["grpo"][name]["seconds"]
    return seconds if name == "verdad" else seconds + run["reward_model"]["seconds"]


def kept_rising(figures: dict[str, Any]) -> bool:
    """¿Siguió subiendo la recompensa aprendida después del máximo de la
    verdadera? (Las dos suavizadas: al final frente a en el máximo.)"""
    return figures["proxy_final"] > figures["proxy_at_peak"]


def render(data: dict[str, Any]) -> list[str]:
    """Las tres tablas en Markdown: el modelo de recompensa frente al techo,
    la sobreoptimización con cada β, y DPO e IPO frente a GRPO."""
    runs, figures = data["runs"], data["data"]
    seeds = ", ".join(str(r["seed"]) for r in runs)
    pairs = data["pairs"]
    dpo = data["dpo_runs"]

    def values(get: Callable[[dict[str, Any]], float]) -> list[float]:
        return [get(r) for r in runs]

    def pct(x: float) -> str:
        return percent(x)

    def utility(x: float) -> str:
        return number(x, 3)

    def seconds(x: float) -> str:
        return f"{number(x, 0)} s"

    betas = [_beta_name(b) for b in data["betas"]]
    lines = [
        "Las ejecuciones del cuaderno 10, calculadas de nuevo: "
        f"{number(pairs['train'], 0)} pares de entrenamiento que etiqueta la "
        "anotadora de Bradley–Terry "
        f"(τ = {number(data['annotator_temperature'], 2)}) a partir de dos "
        "respuestas del SFT al mismo enunciado, y "
        f"{number(pairs['test'], 0)} de prueba. Por semilla: un modelo de "
        "recompensa (el SFT con una cabeza escalar); GRPO "
        f"{data['steps']} pasos contra él con β = "
        f"{', '.join(b.removeprefix('β = ') for b in betas)}; GRPO contra la "
        "utilidad verdadera (el techo); y DPO "
        f"(β = {number(dpo['dpo']['beta'], 1)}) e IPO "
        f"(τ = {number(dpo['ipo']['beta'], 0)}) sobre los mismos pares, "
        f"{_epochs(dpo['dpo']['epochs'])}. Semillas {seeds}, {_processes(data)}, "
        "con un hilo. Cada cifra es la media sobre las semillas y, entre "
        "paréntesis, la mínima y la máxima.",
        "",
        "| quién ordena los pares | precisión por pares | techo de la anotadora |",
        "|---|---|---|",
    ]
    ceiling = pct(figures["ceiling"])
    rm = [
        ("modelo de recompensa, pares de entrenamiento", "train_accuracy", "—"),
        (
            "modelo de recompensa, pares de prueba (los mismos enunciados)",
            "test_accuracy",
            ceiling,
        ),
        ("modelo de recompensa, enunciados nuevos", "heldout_accuracy", "—"),
    ]
    for label, key, top in rm:
        shown = _spread(values(lambda r, k=key: r["reward_model"][k]), pct)
        lines.append(f"| {label} | {shown} | {top} |")
    lines.append(
        "| el SFT por log-probabilidad, pares de prueba "
        f"| {pct(figures['sft_log_prob_accuracy'])} | {ceiling} |"
    )
    for name in dpo:
        if all(name in r["dpo"] for r in runs):
            shown = _spread(values(lambda r, n=name: r["dpo"][n]["test_accuracy"]), pct)
            lines.append(
                f"| la recompensa implícita de {name.upper()}, pares de prueba "
                f"| {shown} | {ceiling} |"
            )
    lines += [
        "",
        "El techo es la precisión de quien conociera la utilidad verdadera: "
        "max(p, 1 − p) en cada par, con p la probabilidad con la que la anotadora "
        "elige. La elegida tiene más utilidad en el "
        f"{pct(figures['truth_agreement'])} de los pares de prueba sin empate. "
        "Segundos del modelo de recompensa: "
        f"{_spread(values(lambda r: r['reward_model']['seconds']), seconds)}.",
        "",
        "Sobreoptimización: la utilidad verdadera y la recompensa aprendida "
        f"(medias de {data['smoothing']} pasos de las respuestas de "
        "entrenamiento) en el paso donde la verdadera es máxima y al final; la "
        "KL k3 por token al SFT en ese paso. La última columna, por semilla: "
        "¿siguió subiendo la aprendida después del máximo de la verdadera?",
        "",
        "| GRPO | paso del máximo | KL en el máximo | utilidad verdadera: "
        "máximo → final | recompensa aprendida: en el máximo → final "
        "| la aprendida siguió subiendo |",
        "|---|---|---|---|---|---|",
    ]
    names = [*betas, "verdad"]
    for name in names:
        if not all(name in r["grpo"] for r in runs):
            continue
        peaks = [r["grpo"][name] for r in runs]

        def across(key: str, show: Callable[[float], str], p=peaks) -> str:
            return _spread([x[key] for x in p], show)

        true = f"{across('true_peak', utility)} → {across('true_final', utility)}"
        if name == "verdad":
            proxy, rising = "— (es la verdadera)", "—"
        else:
            proxy = (
                f"{across('proxy_at_peak', utility)} → {across('proxy_final', utility)}"
            )
            marks = [kept_rising(x) for x in peaks]
            rising = " ".join("✓" if m else "✗" for m in marks)
            rising += f" ({sum(marks)} de {len(marks)})"
        lines.append(
            f"| {_grpo_label(name)} | {across('step', lambda x: number(x, 0))} "
            f"| {across('kl_at_peak', lambda x: number(x, 3))} | {true} "
            f"| {proxy} | {rising} |"
        )
    lines += [
        "",
        "DPO e IPO frente a GRPO: la utilidad verdadera media del modelo final "
        "(`mean_utility`: 16 respuestas a T = 1 por enunciado de la etapa; el "
        f"SFT del que parten todos, {utility(figures['sft_utility'])}), la de DPO "
        "e IPO en su mejor época (la 0 es el SFT), la KL por token al SFT al "
        "final (en GRPO, la media de los últimos pasos de entrenamiento; en DPO "
        "e IPO, `kl_to_reference` con respuestas nuevas) y los segundos de "
        "entrenamiento: los de GRPO contra el modelo de recompensa suman los de "
        "entrenar ese modelo.",
        "",
        "| método | utilidad verdadera final | en su mejor época "
        "| KL final por token | segundos de entrenamiento |",
        "|---|---|---|---|---|",
    ]
    for name in dpo:
        if not all(name in r["dpo"] for r in runs):
            continue
        got = [r["dpo"][name] for r in runs]
        best = _spread([g["utility_best"] for g in got], utility)
        epochs = ", ".join(str(g["best_epoch"]) for g in got)
        lines.append(
            f"| {name.upper()} | {_spread([g['utility_final'] for g in got], utility)} "
            f"| {best}, época {epochs} "
            f"| {_spread([g['kl_final'] for g in got], lambda x: number(x, 3))} "
            f"| {_spread([g['seconds'] for g in got], seconds)} |"
        )
    for name in names:
        if not all(name in r["grpo"] for r in runs):
            continue
        got = [r["grpo"][name] for r in runs]
        label = "GRPO " + _grpo_label(name)
        if name != "verdad":
            label = f"modelo de recompensa + GRPO, {name}"
        lines.append(
            f"| {label} | {_spread([g['utility'] for g in got], utility)} | — "
            f"| {_spread([g['kl_final'] for g in got], lambda x: number(x, 3))} "
            f"| {_spread([rm_grpo_seconds(r, name) for r in runs], seconds)} |"
        )
    return lines


def _processes(data: dict[str, Any]) -> str:
    jobs = data.get("jobs", 1)
    if jobs == 1:
        return "una tras otra"
    return f"cada una en su proceso, {jobs} a la vez"


def _epochs(n: int) -> str:
    return f"{n} época" if n == 1 else f"{n} épocas"


def _beta_name(beta: float) -> str:
    from helpers.tinylm.preference_runs import grpo_name

    return grpo_name(beta)


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(measure(quick="--quick" in sys.argv), indent=1))
