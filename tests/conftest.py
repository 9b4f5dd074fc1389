"""Configuración común de las pruebas: sin ventanas y con un solo hilo."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")
