"""La configuración de Zero to JupyterHub dice lo mismo que el hub probado.

No hay un Kubernetes en CI: esto comprueba que ``hub/z2jh-values.yaml`` se lee,
que apunta a la imagen construida desde ``binder/``, que el intercambio está en
la misma ruta que usa el hub de ``make test-hub``, que las vistas que nombra
existen y que los límites son los del sandbox de calificación. Es rápida y se
ejecuta también en ``make test``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from autograder.sandbox import Limits
from hub import capacity, settings

VALUES = settings.HUB / "z2jh-values.yaml"
DOCKERFILE = settings.HUB / "imagen" / "Dockerfile"
# Dónde deja repo2docker el repositorio en la imagen (--target-repo-dir).
IMAGE_REPO = "/srv/rl-para-llms/repo"


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load(VALUES.read_text(encoding="utf-8"))


def _bytes(quantity: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([KMG]i?)?", str(quantity)).groups()
    base = 1024 if (unit or "").endswith("i") or unit in {"K", "M", "G"} else 1
    power = {"K": 1, "M": 2, "G": 3}.get((unit or " ")[0], 0)
    return int(number) * base**power


def test_the_values_parse_and_name_the_image(values):
    image = values["singleuser"]["image"]
    assert image["name"] and image["tag"]
    assert values["singleuser"]["cmd"] == "jupyterhub-singleuser"
    assert values["singleuser"]["defaultUrl"] == "/lab"
    # La imagen sale de binder/ (repo2docker) más la capa de hub/imagen/.
    dockerfile = DOCKERFILE.read_text(encoding="utf-8")
    assert "jupyter-repo2docker" in dockerfile
    assert f"--target-repo-dir {IMAGE_REPO}" in dockerfile
    assert "jupyterhub==" in dockerfile
    assert (settings.REPO / "binder" / "requirements.txt").exists()


def test_the_exchange_is_shared_at_the_path_the_hub_test_uses(values):
    exchange = "/srv/rl-para-llms/exchange"
    assert settings.exchange_dir().as_posix().endswith("/exchange")
    single = values["singleuser"]
    assert single["extraEnv"]["RLHUB_EXCHANGE"] == exchange
    mounts = {m["name"]: m["mountPath"] for m in single["storage"]["extraVolumeMounts"]}
    volumes = {v["name"]: v for v in single["storage"]["extraVolumes"]}
    assert mounts["nbgrader-exchange"] == exchange
    assert volumes["nbgrader-exchange"]["persistentVolumeClaim"]["claimName"]
    # Las vistas leen el intercambio de RLHUB_EXCHANGE con la misma ruta por defecto.
    for view in ("estudiante", "docente"):
        config = (settings.VIEWS / view / "nbgrader_config.py").read_text()
        assert f'"RLHUB_EXCHANGE", "{exchange}"' in config
    assert "RLHUB_EXCHANGE" in (settings.HUB / "jupyterhub_config.py").read_text()


def test_the_default_local_exchange_is_the_kubernetes_one(monkeypatch):
    monkeypatch.delenv("RLHUB_DIR", raising=False)
    monkeypatch.delenv("RLHUB_EXCHANGE", raising=False)
    assert settings.exchange_dir() == Path("/srv/rl-para-llms/exchange")


def test_the_views_exist_in_the_image(values):
    snippet = values["hub"]["extraConfig"]["rl-para-llms"]
    ast.parse(snippet)  # es Python válido
    assert f'REPO = "{IMAGE_REPO}"' in snippet
    assert "/hub/jupyter/{role}" in snippet
    for role in ("estudiante", "docente"):
        assert (settings.VIEWS / role / "nbgrader_config.py").exists()
        assert (settings.VIEWS / role / "labconfig" / "page_config.json").exists()
    # Cada cuenta con su uid: el intercambio depende de los permisos Unix.
    assert "c.KubeSpawner.uid" in snippet
    # La docente de la lista es la de la vista de docente.
    instructor = values["hub"]["config"]["Authenticator"]["allowed_users"][0]
    assert f'INSTRUCTOR = "{instructor}"' in snippet
    assert instructor == "rlhub_docente"


def test_resource_limits_match_the_grading_sandbox(values):
    single = values["singleuser"]
    assert _bytes(single["memory"]["limit"]) == Limits().memory_bytes
    assert float(single["cpu"]["limit"]) == 1
    # Cabe el cuaderno más pesado con su servidor, con margen.
    cap = capacity.estimate(8 * 1024)
    assert _bytes(single["memory"]["guarantee"]) >= (
        (cap.heaviest_mb + capacity.SERVER_MB) * 1024**2
    )


def test_capacity_comes_from_the_measured_notebooks():
    cap = capacity.estimate(8 * 1024)
    assert cap.heaviest_mb > 0
    assert 0 < cap.worst_case <= cap.typical
    more = capacity.estimate(16 * 1024)
    assert more.worst_case > cap.worst_case
