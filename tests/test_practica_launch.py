"""El guion del estudiante fuera del cuaderno (``helpers.practica.launch``):
dos procesos con ``torchrun`` en CPU (gloo) y errores claros si el cuaderno
no da sus funciones.

``NOTEBOOK`` es el cuaderno cuyas celdas se ejecutan: de momento, uno de
prueba con la respuesta correcta escrita con ``trl.GRPOConfig`` y
``trl.GRPOTrainer``; cuando exista la solución del módulo 11, basta cambiar
esa línea por ``REPO / "solutions/11_practica/11_practica.ipynb"``.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys

import pytest

# helpers.puente primero: fija HF_HUB_OFFLINE antes de que trl se importe
import helpers.puente  # noqa: F401
from helpers.practica import launch
from helpers.practica.guards import GuardError
from helpers.practica.launch import NotebookError, load_learner_functions
from tests.notebooks import REPO

pytest.importorskip("trl")

NOTEBOOK = REPO / "solutions" / "11_practica" / "11_practica.ipynb"


def _notebook(tmp_path, edit):
    """Una copia de ``NOTEBOOK`` con ``edit(cells)`` aplicado."""
    data = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    data = copy.deepcopy(data)
    edit(data["cells"])
    path = tmp_path / "11_practica.ipynb"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _set_solution(cells, grade_id, source):
    for cell in cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            cell["source"] = source
            return
    raise AssertionError(grade_id)


def test_the_notebook_gives_the_four_functions():
    functions = load_learner_functions(NOTEBOOK)
    assert sorted(functions) == sorted(launch.SOLUTION_CELLS)
    assert all(callable(f) for f in functions.values())


@pytest.mark.slow
def test_two_processes_with_torchrun(tmp_path):
    """El guion tal cual con dos procesos: los dos dicen 2 en su JSON y el
    loss registrado es finito."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "helpers.practica.launch",
        "--notebook",
        str(NOTEBOOK),
        "--dataset",
        "course",
        "--num-examples",
        "16",
        "--max-steps",
        "2",
        "--output",
        str(tmp_path),
    ]
    result = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = {
        int(p.stem.removeprefix("metrics_rank")): json.loads(p.read_text())
        for p in tmp_path.glob("metrics_rank*.json")
    }
    assert sorted(ranks) == [0, 1], result.stdout
    for rank, info in ranks.items():
        assert info["rank"] == info["env_rank"] == info["dist_rank"] == rank
        assert info["world_size"] == info["dist_world_size"] == 2
        assert info["backend"] == "gloo" and info["steps"] == 2
        losses = [e["loss"] for e in info["log_history"] if "loss" in e]
        assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
        assert info["loss_finite"]
    assert ranks[0]["pid"] != ranks[1]["pid"]
    assert "rango 0 de 2 procesos" in result.stdout
    assert "rango 1 de 2 procesos" in result.stdout


def test_a_cell_that_raises_is_named(tmp_path):
    path = _notebook(
        tmp_path,
        lambda cells: _set_solution(
            cells,
            "make_grpo_config",
            "def make_grpo_config(d):\n    return d\n\nx = {}['falta']\n",
        ),
    )
    with pytest.raises(NotebookError) as info:
        load_learner_functions(path)
    message = str(info.value)
    assert info.value.kind == "cell_error" and info.value.value == "make_grpo_config"
    assert "La celda «make_grpo_config»" in message and "KeyError" in message
    assert "lanzó" in message


def test_an_unsolved_cell(tmp_path):
    path = _notebook(
        tmp_path,
        lambda cells: _set_solution(
            cells,
            "make_trainer",
            "def make_trainer(model_path, dataset, config):\n"
            "    raise NotImplementedError()\n",
        ),
    )
    functions = load_learner_functions(path)  # definirla no falla; llamarla sí
    with pytest.raises(NotebookError, match="«make_trainer» sigue sin resolver"):
        launch.call_learner("make_trainer", functions["make_trainer"], "", None, None)


def test_a_function_that_raises_when_called_is_named():
    def make_trainer(model_path, dataset, config):
        return model_path.nope

    with pytest.raises(NotebookError) as info:
        launch.call_learner("make_trainer", make_trainer, "x", None, None)
    assert info.value.kind == "cell_error"
    assert "Tu «make_trainer» lanzó AttributeError" in str(info.value)


def test_a_config_that_trl_rejects_is_explained(tmp_path):
    """Un GRPOConfig con un lote que G no divide: TRL lo rechaza en inglés y
    el guion lo dice en español, con el nombre de la función."""
    bad = (
        "def make_grpo_config(output_dir):\n"
        "    return trl.GRPOConfig(output_dir=output_dir, num_generations=3,\n"
        "        per_device_train_batch_size=8, use_cpu=True, bf16=False,\n"
        "        report_to='none')\n"
    )
    path = _notebook(
        tmp_path, lambda cells: _set_solution(cells, "make_grpo_config", bad)
    )
    functions = load_learner_functions(path)
    with pytest.raises(GuardError) as info:
        launch.call_learner(
            "make_grpo_config", functions["make_grpo_config"], str(tmp_path)
        )
    message = str(info.value)
    assert info.value.kind == "batch" and "Tu «make_grpo_config»" in message
    assert "num_generations = 3 no divide" in message


def test_a_notebook_without_the_cells(tmp_path, capsys):
    def drop(cells):
        cells[:] = [c for c in cells if "nbgrader" not in c.get("metadata", {})]

    path = _notebook(tmp_path, drop)
    with pytest.raises(NotebookError) as info:
        load_learner_functions(path)
    assert info.value.kind == "cell_missing"
    assert info.value.value == list(launch.SOLUTION_CELLS)
    assert "no tiene las celdas de solución" in str(info.value)
    # Desde la línea de órdenes: código 2 y el mensaje, sin traza
    code = launch.main(["--notebook", str(path), "--output", str(tmp_path / "o")])
    assert code == 2
    assert "no tiene las celdas de solución" in capsys.readouterr().err


def test_a_notebook_that_does_not_exist(tmp_path):
    with pytest.raises(NotebookError, match="No encuentro el cuaderno") as info:
        load_learner_functions(tmp_path / "11_practica.ipynb")
    assert info.value.kind == "notebook_missing"


def test_overrides_keep_the_learners_choices(monkeypatch):
    """Cambiar pasos o máquina vuelve a validar con TRL y deja lo demás."""
    functions = load_learner_functions(NOTEBOOK)
    config = functions["make_grpo_config"]("/tmp/practica")
    changed = launch.with_overrides(config, max_steps=7, max_completion_length=40)
    assert changed.max_steps == 7 and changed.max_completion_length == 40
    for name in ("num_generations", "per_device_train_batch_size", "loss_type"):
        assert getattr(changed, name) == getattr(config, name)
    assert changed.generation_batch_size == config.generation_batch_size
    assert launch.machine_overrides("keep", False, 2, None) == {"max_steps": 2}
    assert launch.machine_overrides("cpu", False, None, None) == {"use_cpu": True}
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(GuardError, match="ninguna GPU"):
        launch.machine_overrides("cuda", False, None, None)
