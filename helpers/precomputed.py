"""Las ejecuciones precalculadas: guardarlas, leerlas y la orden que las rehace.

Algunas afirmaciones de los cuadernos necesitan ejecuciones de minutos, con
varias semillas: la divergencia de Q en DQN (``helpers.dqn_runs``, módulo 02),
el tronco compartido de A2C (``helpers.a2c_runs``, 05), PPO sin parar
(``helpers.ppo_runs``, 06), el muestreador retrasado de GRPO
(``helpers.tinylm.lag_runs``, 07), GRPO sin línea base
(``helpers.tinylm.baseline_runs``, 07), la recompensa por partes
(``helpers.tinylm.process_runs``, 08), la KL en la recompensa o en la pérdida
(``helpers.tinylm.kl_runs``, 08) y la etapa de preferencias
(``helpers.tinylm.preference_runs``, 10). Cada una se calcula una vez, se
guarda en ``helpers/data/*.json`` con su procedencia (``machine``) y se puede
recalcular y comparar. Todas comparten aquí la lectura, la escritura y la línea
de órdenes::

    python -m helpers.tinylm.lag_runs --write      # rehacer el archivo
    python -m helpers.tinylm.lag_runs --check 0    # recalcular y comparar
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def differences(
    label: str, stored: dict[str, Any], fresh: dict[str, Any], keys: Sequence[str]
) -> list[str]:
    """Las cifras del principio recalculado ``fresh`` que no son las guardadas
    en ``stored`` (salvo el redondeo de la CPU: ``seeding.same_figure``), una
    línea por diferencia: «``label``, clave[i]: guardado …, ahora …». Cada
    serie se compara hasta donde llega la recalculada."""
    from .seeding import same_figure

    problems = []
    for key in keys:
        n = len(fresh[key])
        for i, (old, new) in enumerate(zip(stored[key][:n], fresh[key], strict=True)):
            if not same_figure(old, new):
                problems.append(f"{label}, {key}[{i}]: guardado {old!r}, ahora {new!r}")
    return problems


def machine() -> dict[str, Any]:
    """Versiones, fecha y carga de la máquina, para la procedencia."""
    import torch

    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "load_average": load,
    }


def load(path: Path | str) -> dict[str, Any]:
    """Lo guardado en ``path`` (JSON)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write(path: Path | str, data: dict[str, Any]) -> None:
    """Guarda ``data`` en ``path`` como JSON legible (sin escapar los acentos)."""
    Path(path).write_text(
        json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )


def main(
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str,
    path: Path,
    compute_all: Callable[[], dict[str, Any]],
    check: Callable[..., list[str]],
    by_seed: bool,
) -> int:
    """La orden ``--write`` / ``--check`` de un módulo de ejecuciones guardadas.

    ``--write`` llama a ``compute_all()`` (que deja sus segundos en
    ``config.total_seconds``) y lo guarda en ``path``. ``--check`` llama a
    ``check(semilla)`` si ``by_seed`` o a ``check()`` si no, imprime cada
    diferencia y termina con 1 si hay alguna.
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="rehacer el archivo")
    if by_seed:
        group.add_argument(
            "--check", type=int, metavar="SEMILLA", help="recalcular una semilla"
        )
    else:
        group.add_argument(
            "--check", action="store_true", help="recalcular el principio y comparar"
        )
    args = parser.parse_args(argv)
    if args.write:
        data = compute_all()
        write(path, data)
        print(f"Escrito {path} en {data['config']['total_seconds']:.0f} s")
        return 0
    problems = check(args.check) if by_seed else check()
    for line in problems:
        print(line)
    print("coincide" if not problems else f"{len(problems)} diferencias")
    return 1 if problems else 0
