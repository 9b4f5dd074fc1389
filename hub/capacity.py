"""¿Cuántas estudiantes caben en un hub? ``python hub/capacity.py [--ram-gb 8]``.

La cuenta sale de las medidas del banco de pruebas, no de una estimación a
ojo: el pico de memoria del kernel de cada cuaderno
(``helpers.bench_data.load()["notebooks"]``, lo escribe ``make bench``) más lo
que ocupa un servidor de JupyterLab por usuario (``SERVER_MB``, medido en el
hub de ``make test-hub``: ``.artifacts/hub/memoria.json``).

* **Peor caso (memoria)**: todas con el kernel en su pico a la vez.
  ``(RAM - reserva) // (servidor + pico del cuaderno más pesado)``.
* **Clase típica**: cada estudiante con un kernel en uso, con el pico medio de
  los cuadernos.
* **CPU**: cada celda pesada y cada autocomprobación ocupan un núcleo mientras
  duran; con 2 núcleos, dos a la vez van a toda velocidad y las demás esperan.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import bench_data  # noqa: E402

# Un servidor de JupyterLab (jupyterhub-singleuser) sin kernel, en MB de RSS.
# make test-hub lo mide tras el ciclo de la tarea (.artifacts/hub/memoria.json:
# unos 150 MB; en un Intel Xeon con Debian 12, el de la estudiante que más
# hizo llegó a 204 MB) y falla si pasa de esta cifra; se redondea a 250 MB por
# lo que crece con JupyterLab abierto en el navegador.
SERVER_MB = 250
# Sistema, JupyterHub y configurable-http-proxy.
RESERVED_MB = 1024


@dataclass
class Capacity:
    ram_mb: int
    heaviest_module: str
    heaviest_mb: float
    mean_mb: float
    worst_case: int
    typical: int
    slowest_module: str
    slowest_seconds: float


def estimate(ram_mb: int, server_mb: float = SERVER_MB) -> Capacity:
    """Estudiantes a la vez en una máquina con ``ram_mb`` MB de memoria."""
    notebooks = bench_data.load()["notebooks"]
    heaviest = max(notebooks, key=lambda n: n["peak_mb"])
    slowest = max(notebooks, key=lambda n: n["seconds"])
    mean = sum(n["peak_mb"] for n in notebooks) / len(notebooks)
    free = ram_mb - RESERVED_MB
    return Capacity(
        ram_mb=ram_mb,
        heaviest_module=heaviest["module"],
        heaviest_mb=heaviest["peak_mb"],
        mean_mb=mean,
        worst_case=max(0, int(free // (server_mb + heaviest["peak_mb"]))),
        typical=max(0, int(free // (server_mb + mean))),
        slowest_module=slowest["module"],
        slowest_seconds=slowest["seconds"],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python hub/capacity.py",
        description="Estudiantes por hub según la memoria medida de los cuadernos.",
    )
    parser.add_argument(
        "--ram-gb", type=float, nargs="*", default=[4, 8, 16], help="memoria (GB)"
    )
    parser.add_argument("--cores", type=int, default=2, help="núcleos del hub")
    args = parser.parse_args(argv)
    for ram_gb in args.ram_gb:
        cap = estimate(int(ram_gb * 1024))
        print(
            f"{ram_gb:g} GB: {cap.worst_case} estudiantes con todos los kernels en "
            f"su pico ({cap.heaviest_module}: {cap.heaviest_mb:.0f} MB + "
            f"{SERVER_MB} MB de servidor); {cap.typical} con el pico medio de "
            f"los cuadernos ({cap.mean_mb:.0f} MB)."
        )
    # El banco mide cada cuaderno entero solo en la máquina. Si cada ejecución
    # ocupa un núcleo, N a la vez en C núcleos tardan unas N/C veces más.
    cap = estimate(int(args.ram_gb[0] * 1024))
    together = cap.worst_case
    wait = cap.slowest_seconds * together / args.cores
    print(
        f"CPU: con {args.cores} núcleos, {args.cores} celdas pesadas o "
        "autocomprobaciones van a toda velocidad; las demás esperan. Con "
        f"{args.ram_gb[0]:g} GB, {together} estudiantes ejecutando a la vez el "
        f"cuaderno más lento ({cap.slowest_module}, {cap.slowest_seconds:.0f} s) "
        f"tardan unos {wait:.0f} s cada una (si cada ejecución usa un núcleo)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
