"""Los ajustes del hub del curso, leídos del entorno (con valores por defecto).

Los comparten ``jupyterhub_config.py``, ``prepare.py``, las vistas de
``hub/jupyter/`` y las pruebas, para que todos hablen de las mismas rutas y
cuentas.

Variables de entorno (todas opcionales):

* ``RLHUB_DIR``: carpeta de estado del hub (base de datos, secreto de cookies)
  y del intercambio de nbgrader. Por defecto ``/srv/rl-para-llms``.
* ``RLHUB_IP`` y ``RLHUB_PORT``: dónde escucha el hub (``127.0.0.1:8000``).
* ``RLHUB_INSTRUCTOR``: la cuenta de docente (``rlhub_docente``).
* ``RLHUB_STUDENTS``: las cuentas de estudiante, separadas por comas
  (``rlhub_ana,rlhub_beto,rlhub_carla``).
* ``RLHUB_SERVICE_TOKEN``: si se da, un servicio «automatizacion» con ese
  token puede crear tokens y servidores de usuario (lo usan las pruebas).
"""

from __future__ import annotations

import os
from pathlib import Path

HUB = Path(__file__).resolve().parent
REPO = HUB.parent
VENV_BIN = REPO / ".venv" / "bin"
PROXY = (
    REPO / ".venv" / "hub-proxy" / "node_modules" / ".bin" / "configurable-http-proxy"
)
COURSE_ID = "rl-para-llms"
# La carpeta del curso en el $HOME de la cuenta docente (entregas, notas,
# gradebook); la fuente y la versión publicada se leen del repositorio.
INSTRUCTOR_COURSE = "rl-para-llms"
# Las vistas de JupyterLab en el hub: la de estudiante y la de docente.
VIEWS = HUB / "jupyter"


def state_dir() -> Path:
    return Path(os.environ.get("RLHUB_DIR", "/srv/rl-para-llms"))


def exchange_dir() -> Path:
    """El intercambio de nbgrader: lo crea y lo posee el hub (root)."""
    return Path(os.environ.get("RLHUB_EXCHANGE", str(state_dir() / "exchange")))


def instructor() -> str:
    return os.environ.get("RLHUB_INSTRUCTOR", "rlhub_docente")


def students() -> list[str]:
    raw = os.environ.get("RLHUB_STUDENTS", "rlhub_ana,rlhub_beto,rlhub_carla")
    return [name.strip() for name in raw.split(",") if name.strip()]


def ip() -> str:
    return os.environ.get("RLHUB_IP", "127.0.0.1")


def port() -> int:
    return int(os.environ.get("RLHUB_PORT", "8000"))


def hub_port() -> int:
    """El puerto interno del hub (API y OAuth), solo en 127.0.0.1."""
    return int(os.environ.get("RLHUB_HUB_PORT", str(port() + 1)))


def proxy_api_port() -> int:
    """El puerto de la API del proxy (configurable-http-proxy), en 127.0.0.1."""
    return int(os.environ.get("RLHUB_PROXY_API_PORT", str(port() + 2)))


def service_token() -> str:
    """El token del servicio de automatización (vacío: no hay servicio)."""
    return os.environ.get("RLHUB_SERVICE_TOKEN", "")
