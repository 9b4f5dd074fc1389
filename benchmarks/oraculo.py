"""Módulo 12: el oráculo. Cuánto cuesta enumerar las respuestas del modelo
supervisado a un enunciado y qué masa de probabilidad cubren
(``helpers.tinylm.oracle.enumeration_costs``: la búsqueda por niveles, en
lotes, con un hilo de PyTorch).

Por fila (enunciado y umbral p(y) ≥ …): respuestas enumeradas, masa cubierta,
pasadas en lote y segundos de reloj. La masa cubierta no depende de la
máquina (salvo en el último decimal); los segundos, sí.

Y la tabla de los estimadores (:func:`measure_estimators`): la auditoría del
cuaderno (``helpers.tinylm.estimators``, con sus constantes ``AUDIT_*``), cada
estimador del gradiente frente a ∇J exacto en cada G, en tres semillas, y el
crítico de PPO (``critic_audit``: el de 08 entrenado brevemente y el exacto,
con λ = 1 y 0,95), con sus cifras exactas.

``python -m benchmarks all --only oraculo --output BENCHMARKS.md`` lo mide y
lo mezcla con el resto del banco.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers.formatting import number, scientific


def measure(quick: bool, say: Callable[[str], None]) -> list[dict[str, Any]]:
    """Una fila por ``(enunciado, umbral)`` de ``oracle.BENCH_ROWS`` (con
    ``quick``, solo la primera)."""
    import torch

    from helpers.tinylm import oracle

    say("oráculo: enumerar las respuestas del modelo supervisado")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rows = oracle.BENCH_ROWS[:1] if quick else oracle.BENCH_ROWS
        costs = oracle.enumeration_costs(rows=rows)
    finally:
        torch.set_num_threads(threads)
    return [
        {
            "problem": list(cost.problem),
            "min_prob": cost.min_prob,
            "completions": cost.completions,
            "covered_mass": cost.covered_mass,
            "forwards": cost.forwards,
            "seconds": cost.seconds,
        }
        for cost in costs
    ]


def measure_estimators(quick: bool, say: Callable[[str], None]) -> dict[str, Any]:
    """La auditoría de los estimadores del cuaderno 12 con las referencias:
    por estimador y G, el ángulo, la norma relativa, la varianza y z de cada
    semilla (con ``quick``, una semilla, G = 2 y 300 lotes)."""
    import math

    import torch

    from helpers import tinylm as tl
    from helpers.tinylm import estimators as est
    from helpers.tinylm import oracle

    say("oráculo: la auditoría de los estimadores del gradiente")
    groups = est.AUDIT_GROUPS[:1] if quick else est.AUDIT_GROUPS
    seeds = est.AUDIT_SEEDS[:1] if quick else est.AUDIT_SEEDS
    runs = 300 if quick else est.AUDIT_RUNS
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = tl.load_pretrained()
        found = [
            oracle.enumerate_completions(model, p, math.log(est.AUDIT_MIN_PROB))
            for p in est.AUDIT_PROBLEMS
        ]
        rewards = [
            tl.rewards_for(f.completions, [p] * len(f.log_probs))
            for p, f in zip(est.AUDIT_PROBLEMS, found, strict=True)
        ]
        basis = est.score_basis(model, found, rewards)
        table: dict[str, dict[str, list[list[float]]]] = {}
        for seed in seeds:
            for G in groups:
                estimates = est.sample_estimates(basis, G, runs, seed)
                for name, values in estimates.items():
                    row = est.audit_row(values, basis)
                    table.setdefault(name, {}).setdefault(str(G), []).append(
                        [row[0], row[1], row[2], row[3]]
                    )
        critics: dict[str, list[list[float]]] = {}
        for seed in seeds:
            for (kind, lam), row in est.critic_audit(model, basis, found, seed).items():
                critics.setdefault(f"{kind} {lam}", []).append(
                    [row.angle, row.relative_norm, row.variance, row.explained]
                )
    finally:
        torch.set_num_threads(threads)
    return {
        "problems": [list(p) for p in est.AUDIT_PROBLEMS],
        "min_prob": est.AUDIT_MIN_PROB,
        "runs": runs,
        "seeds": list(seeds),
        "groups": list(groups),
        "estimators": table,
        "critics": critics,
    }


def render_estimators(data: dict[str, Any]) -> list[str]:
    """La tabla de la auditoría en Markdown: por estimador y G, el ángulo con
    ∇J, la norma relativa y z (el recorrido de las semillas)."""
    from helpers.tinylm.estimators import ESTIMATORS

    def spread(values: list[float], digits: int) -> str:
        low, high = min(values), max(values)
        if number(low, digits) == number(high, digits):
            return number(low, digits)
        return f"{number(low, digits)}–{number(high, digits)}"

    problems = ", ".join(f"{a} × {b}" for a, b in data["problems"])
    lines = [
        f"La auditoría del cuaderno 12 con las referencias: {data['runs']} lotes "
        f"por G (G respuestas de cada enunciado: {problems}), muestreados del "
        f"modelo restringido a las respuestas con p(y) ≥ "
        f"{scientific(data['min_prob'], 0)}, semillas "
        f"{', '.join(map(str, data['seeds']))}. En cada celda, el ángulo de la "
        "media de las estimaciones con ∇J, su norma entre la de ∇J y "
        "z = ‖ḡ − ∇J‖² / (varianza/R), que vale 1 en promedio sin sesgo; "
        "el recorrido de las semillas.",
        "",
        "| estimador | " + " | ".join(f"G = {G}" for G in data["groups"]) + " |",
        "| --- |" + " --- |" * len(data["groups"]),
    ]
    for name, label in ESTIMATORS.items():
        cells = []
        for G in data["groups"]:
            rows = data["estimators"][name][str(G)]
            angles, norms, zs = ([row[i] for row in rows] for i in (0, 1, 3))
            cells.append(
                f"{spread(angles, 1)}° · ×{spread(norms, 2)} · z {spread(zs, 0)}"
            )
        shown = label.replace("|", "\\|")  # las barras de |y|, dentro de la tabla
        lines.append(f"| {shown} | " + " | ".join(cells) + " |")
    return lines + _render_critics(data, spread)


def _render_critics(
    data: dict[str, Any], spread: Callable[[list[float], int], str]
) -> list[str]:
    """La tabla del crítico de PPO (si los datos la traen): sus cifras exactas
    y su varianza en cada G junto a la muestreada de REINFORCE y RLOO."""
    from helpers.tinylm.estimators import CRITICS, ESTIMATORS

    if "critics" not in data:
        return []
    groups = data["groups"]
    lines = [
        "",
        "El crítico de PPO del módulo 08, auditado sin muestrear (en el mundo "
        "de q): el de 08 entrenado brevemente con cada semilla y el exacto, "
        "V = E_q[R | prefijo], con GAE de λ = 1 y 0,95. El ángulo y la norma de "
        "su gradiente medio frente a ∇J_q, la fracción de la varianza de R "
        "que explica V y la varianza total de una estimación con G respuestas "
        "por enunciado; la de REINFORCE y RLOO, muestreada en la auditoría.",
        "",
        "| estimador | ángulo | norma | explicada | "
        + " | ".join(f"varianza, G = {G}" for G in groups)
        + " |",
        "| --- | --- | --- | --- |" + " --- |" * len(groups),
    ]
    for (kind, lam), label in CRITICS.items():
        rows = data["critics"][f"{kind} {lam}"]
        angles, norms, variances, explained = (
            [row[i] for row in rows] for i in range(4)
        )
        cells = [
            f"{spread(angles, 2)}°",
            f"×{spread(norms, 3)}",
            spread(explained, 2),
            *(spread([v / G for v in variances], 0) for G in groups),
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for name in ("reinforce", "rloo"):
        cells = [
            spread([row[2] for row in data["estimators"][name][str(G)]], 0)
            for G in groups
        ]
        lines.append(
            f"| {ESTIMATORS[name]} (muestreada) | — | — | — | "
            + " | ".join(cells)
            + " |"
        )
    return lines


def render(rows: list[dict[str, Any]]) -> list[str]:
    """La tabla en Markdown."""
    lines = [
        "La búsqueda por niveles de `helpers.tinylm.oracle` sobre el modelo "
        "supervisado (un hilo): cuántas respuestas superan el umbral, qué masa "
        "de probabilidad suman y cuánto tarda. La masa que falta acota el error "
        "de cada cifra exacta del módulo 12.",
        "",
        "| enunciado | umbral p(y) ≥ | respuestas | masa cubierta | pasadas en lote "
        "| segundos |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        a, b = row["problem"]
        lines.append(
            f"| {a} × {b} | {scientific(row['min_prob'], 0)} | {row['completions']} "
            f"| {number(row['covered_mass'], 5)} | {row['forwards']} "
            f"| {number(row['seconds'], 2)} |"
        )
    return lines
