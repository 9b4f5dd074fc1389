"""Simula la instalación de Binder: un entorno nuevo hecho solo con binder/.

repo2docker instala ``binder/requirements.txt`` y ejecuta ``binder/postBuild``.
Aquí se hace lo mismo en un entorno virtual vacío y se comprueba que el curso
importa, que el informe del entorno no encuentra problemas y que las
herramientas de docente de nbgrader quedan apagadas. PyTorch para CPU sale en
Binder del índice de PyTorch; esta máquina solo llega a PyPI y tiene la rueda
en disco (``PIP_FIND_LINKS``), así que aquí ``TORCH_SOURCE`` va vacío.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.notebooks import REPO, course_path, module_ids, read

CHECK = """
import importlib, pkgutil, helpers
for info in pkgutil.walk_packages(helpers.__path__, "helpers."):
    importlib.import_module(info.name)
report = helpers.check_environment()
assert report.ok, report.problems
print("ok", report.versions["torch"])
"""


def test_binder_environment_builds_and_runs_the_course(tmp_path):
    venv = tmp_path / "binder-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}")
    env.pop("VIRTUAL_ENV", None)
    if os.environ.get("PIP_FIND_LINKS"):
        env["TORCH_SOURCE"] = ""
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "-r",
            "binder/requirements.txt",
        ],
        cwd=REPO,
        env=env,
        check=True,
    )
    subprocess.run(
        ["bash", "binder/postBuild"], cwd=REPO, env=env, check=True, capture_output=True
    )

    checked = subprocess.run(
        [str(python), "-c", CHECK],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr
    assert "ok 2.13.0" in checked.stdout

    # La primera celda de cada cuaderno publicado funciona en ese entorno.
    for module_id in module_ids():
        setup = next(
            c.source
            for c in read(course_path(module_id)).cells
            if c.cell_type == "code"
        )
        ran = subprocess.run(
            [str(python), "-c", setup],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert ran.returncode == 0, (module_id, ran.stderr[-2000:])
        assert "Entorno listo" in ran.stdout, ran.stdout

    extensions = subprocess.run(
        [str(venv / "bin" / "jupyter"), "labextension", "list"],
        env=env,
        capture_output=True,
        text=True,
    )
    listing = extensions.stdout + extensions.stderr
    for plugin in ("create-assignment", "formgrader", "course-list"):
        assert f"@jupyter/nbgrader:{plugin}" in listing.split("Disabled extensions")[-1]
