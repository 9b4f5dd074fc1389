"""Configuración común de las pruebas: sin ventanas y con un solo hilo."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import torch  # noqa: E402

# Redes diminutas: un hilo es tan rápido como varios y no compite con el otro
# trabajador de pytest-xdist (en una máquina cargada, mucho más rápido).
torch.set_num_threads(1)
