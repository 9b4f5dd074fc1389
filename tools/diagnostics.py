"""La instantánea de los diagnósticos: la red de seguridad al reescribir las
comprobaciones.

Ejecuta cada respuesta errónea de los bancos (``tests/banks``) contra las
celdas de pruebas de su ejercicio, visibles y ocultas, como
``tests/test_checks_bank.py``, y guarda, celda a celda, si pasó, el tipo de
error, el id del error típico y el mensaje entero. Comparar dos instantáneas
dice qué diagnóstico cambió: al reescribir una comprobación, los mensajes solo
pueden mejorar y ninguna respuesta errónea puede dejar de fallar.

Uso::

    python -m tools.diagnostics write ANTES.json [--module 07_grpo ...]
    python -m tools.diagnostics compare ANTES.json DESPUES.json

``compare`` imprime cada diferencia y sale con 1 si alguna respuesta errónea
dejó de fallar en una celda en la que antes fallaba, o cambió de id; los
cambios de mensaje se listan para revisarlos a mano.

Los mensajes llevan cifras calculadas en coma flotante: dos máquinas distintas
pueden escribir la última cifra de otra manera. Compare instantáneas de la
misma máquina.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def _module_snapshot(module_id: str) -> dict[str, list[dict]]:
    # La preparación de cada cuaderno imprime su entorno: aquí no interesa.
    with contextlib.redirect_stdout(io.StringIO()):
        return _answers(module_id)


def _answers(module_id: str) -> dict[str, list[dict]]:
    from tests.banks import bank
    from tests.notebooks import exercises, read, run_exercise, solution_path

    nb = read(solution_path(module_id))
    module_bank = bank(module_id)
    found: dict[str, list[dict]] = {}
    for exercise in exercises(nb):
        for answer in module_bank.WRONG.get(exercise.grade_id, []):
            key = f"{module_id}:{exercise.grade_id}:{answer.name}"
            found[key] = [
                {
                    "cell": outcome.grade_id,
                    "failed": outcome.error is not None,
                    "type": type(outcome.error).__name__ if outcome.error else None,
                    "mistake": getattr(outcome.error, "mistake", None),
                    "message": str(outcome.error) if outcome.error else None,
                }
                for outcome in run_exercise(nb, exercise, answer.source)
            ]
    return found


def write(path: Path, modules: list[str], jobs: int) -> int:
    from autograder.course import module_ids

    chosen = modules or module_ids()
    snapshot: dict[str, list[dict]] = {}
    with ProcessPoolExecutor(jobs) as pool:
        for part in pool.map(_module_snapshot, chosen):
            snapshot.update(part)
    path.write_text(json.dumps(snapshot, ensure_ascii=False, indent=1, sort_keys=True))
    print(f"{len(snapshot)} respuestas erróneas en {path}")
    return 0


def compare(before_path: Path, after_path: Path) -> int:
    before = json.loads(before_path.read_text())
    after = json.loads(after_path.read_text())
    worse, messages = [], []
    for key, cells in sorted(before.items()):
        if key not in after:
            if key.split(":")[0] in {k.split(":")[0] for k in after}:
                worse.append(f"{key}: la respuesta ya no está en el banco")
            continue
        now = {cell["cell"]: cell for cell in after[key]}
        for cell in cells:
            new = now.get(cell["cell"])
            where = f"{key} [{cell['cell']}]"
            if new is None:
                worse.append(f"{where}: la celda ya no existe")
            elif cell["failed"] and not new["failed"]:
                worse.append(f"{where}: antes fallaba y ahora pasa")
            elif cell["mistake"] != new["mistake"]:
                worse.append(f"{where}: id {cell['mistake']} → {new['mistake']}")
            elif cell["message"] != new["message"]:
                messages.append(
                    f"{where}\n  antes: {cell['message']}\n  ahora: {new['message']}"
                )
    added = sorted(set(after) - set(before))
    for line in worse:
        print("PEOR", line)
    for line in messages:
        print("MENSAJE", line)
    print(
        f"{len(worse)} empeoran, {len(messages)} mensajes cambian, "
        f"{len(added)} respuestas nuevas"
    )
    return 1 if worse else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    writer = sub.add_parser("write")
    writer.add_argument("path", type=Path)
    writer.add_argument("--module", action="append", default=[])
    writer.add_argument("--jobs", type=int, default=2)
    comparer = sub.add_parser("compare")
    comparer.add_argument("before", type=Path)
    comparer.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "write":
        return write(args.path, args.module, args.jobs)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
