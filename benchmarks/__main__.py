"""``python -m benchmarks``: medir los presupuestos del curso.

Ejemplos::

    python -m benchmarks all --output BENCHMARKS.md   # make bench (≤ 3 h)
    python -m benchmarks all --quick                  # make bench-quick (CI)
    python -m benchmarks all --only grpo --output BENCHMARKS.md  # solo GRPO
    python -m benchmarks all --only methods --output BENCHMARKS.md  # GRPO/RLOO/PPO
    python -m benchmarks all --only puente --output BENCHMARKS.md  # curso frente a TRL
    python -m benchmarks all --only preferencias --output BENCHMARKS.md  # módulo 10
    python -m benchmarks all --quick --only preferencias  # esa parte, en miniatura
    python -m benchmarks all --only oraculo --output BENCHMARKS.md  # módulo 12
    python -m benchmarks all --only grading --module 11_practica --output BENCHMARKS.md
    python -m benchmarks notebooks 07_grpo            # tiempo y memoria
    python -m benchmarks grading 01_bandidos --students 100 --jobs 2
    python -m benchmarks grading --students 20        # todos los módulos
    python -m benchmarks all --only cartpole --seeds 0-19 --output BENCHMARKS.md
    python -m benchmarks cartpole --seeds 1000-1039 --agents PPO --set PPO.n_epochs=10
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

#: Las partes de ``--only`` (las de ``benchmarks.report.SECTIONS``; una prueba
#: comprueba que son las mismas sin importar aquí todo el banco).
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Mide los presupuestos del curso (tiempo, memoria, pasos).",
    )
    kinds = parser.add_subparsers(dest="kind", required=True)
    grading_parser = kinds.add_parser(
        "grading", help="cuánto tarda calificar una clase entera"
    )
    grading_parser.add_argument(
        "modules", nargs="*", help="p. ej. 01_bandidos (todos si nada)"
    )
    grading_parser.add_argument("--students", type=int, default=100)
    grading_parser.add_argument("--jobs", type=int, default=2)
    notebooks_parser = kinds.add_parser(
        "notebooks", help="tiempo y memoria de cada cuaderno de solución"
    )
    notebooks_parser.add_argument("modules", nargs="*", help="módulos (todos si nada)")
    all_parser = kinds.add_parser(
        "all", help="todos los presupuestos, junto a Stable-Baselines3 (make bench)"
    )
    all_parser.add_argument(
        "--quick", action="store_true", help="en miniatura: solo prueba el código"
    )
    all_parser.add_argument(
        "--output", type=Path, help="escribir la tabla en Markdown (BENCHMARKS.md)"
    )
    all_parser.add_argument(
        "--only",
        action="append",
        choices=list(SECTIONS),
        help="medir solo esta parte y mezclarla con el JSON que ya hay (repetible)",
    )
    all_parser.add_argument(
        "--module",
        action="append",
        dest="module_ids",
        metavar="NN_x",
        help="con --only notebooks o grading: solo este módulo; sus filas "
        "sustituyen a las del JSON (repetible)",
    )
    all_parser.add_argument(
        "--seeds",
        type=parse_seeds,
        help="semillas de CartPole («0-19», «3,5,7»); por defecto, 0-19",
    )
    cartpole_parser = kinds.add_parser(
        "cartpole",
        help="CartPole en otras semillas, para ajustar (no escribe nada)",
    )
    cartpole_parser.add_argument(
        "--seeds", type=parse_seeds, default="1000-1039", help="por defecto, 1000-1039"
    )
    cartpole_parser.add_argument(
        "--agents", nargs="*", help="agentes del curso (por defecto, todos)"
    )
    cartpole_parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="AGENTE.campo=valor",
        help="cambiar la configuración de un agente (repetible): PPO.n_epochs=10",
    )
    cartpole_parser.add_argument(
        "--no-sb3", action="store_true", help="sin Stable-Baselines3"
    )
    cartpole_parser.add_argument("--jobs", type=int, default=2)
    cartpole_parser.add_argument(
        "--max-steps",
        type=int,
        help="tope de pasos por ejecución (por defecto, el del informe)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")

    if args.kind == "all":
        from benchmarks import report

        return report.run(
            args.quick, args.output, args.only, args.seeds, args.module_ids
        )
    if args.kind == "cartpole":
        from benchmarks import cartpole

        overrides = parse_overrides(args.set)
        return cartpole.tune_main(
            args.seeds,
            args.agents,
            overrides,
            not args.no_sb3,
            args.jobs,
            args.max_steps or cartpole.MAX_STEPS,
        )
    if args.kind == "notebooks":
        from benchmarks import notebooks

        return notebooks.notebooks_main(args.modules)
    from benchmarks import grading

    return grading.main(args.modules, args.students, args.jobs)


def parse_seeds(text: str) -> list[int]:
    """«0-9» -> [0, ..., 9]; «3,5,7» -> [3, 5, 7]."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds += range(int(low), int(high or low) + 1)
    return seeds


def parse_overrides(items: list[str]) -> dict[str, dict[str, object]]:
    """``["PPO.n_epochs=10"]`` -> ``{"PPO": {"n_epochs": 10}}`` (valores de Python)."""
    import ast

    overrides: dict[str, dict[str, object]] = {}
    for item in items:
        key, _, value = item.partition("=")
        agent, _, name = key.rpartition(".")
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            parsed = value
        overrides.setdefault(agent, {})[name] = parsed
    return overrides


if __name__ == "__main__":
    sys.exit(main())
