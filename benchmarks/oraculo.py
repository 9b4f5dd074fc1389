"""Módulo 12: el oráculo. Cuánto cuesta enumerar las respuestas del modelo
supervisado a un enunciado y qué masa de probabilidad cubren
(``helpers.tinylm.oracle.enumeration_costs``: la búsqueda por niveles, en
lotes, con un hilo de PyTorch).

Por fila (enunciado y umbral p(y) ≥ …): respuestas enumeradas, masa cubierta,
pasadas en lote y segundos de reloj. La masa cubierta no depende de la
máquina (salvo en el último decimal); los segundos, sí.

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
