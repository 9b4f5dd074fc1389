"""Semilla, informe del entorno, estilo de figuras y resumen de progreso."""

from __future__ import annotations

import random
import subprocess
import sys

import matplotlib as mpl
import numpy as np
import pytest
import torch

import helpers
from helpers.checks import CheckError, Mistake, check_cases, exercise
from tests.notebooks import module_ids, read, setup_source, solution_path


def test_set_seed_makes_everything_repeatable():
    draws = []
    for _ in range(2):
        rng = helpers.set_seed(123)
        draws.append(
            (random.random(), np.random.rand(), torch.rand(1).item(), rng.random())
        )
    assert draws[0] == draws[1]
    assert torch.get_num_threads() == 1


def test_set_seed_rejects_negative_seeds():
    with pytest.raises(ValueError, match="no negativo"):
        helpers.set_seed(-1)


def test_environment_report_is_clean_here(capsys):
    report = helpers.report_environment()
    printed = capsys.readouterr().out
    assert report.ok, report.problems
    assert "Entorno listo" in printed
    assert report.versions["torch"].startswith("2.13.0")


def test_environment_report_names_a_wrong_version(monkeypatch):
    from helpers import environment

    real_version = environment.metadata.version
    monkeypatch.setattr(
        environment.metadata,
        "version",
        lambda name: "1.0.0" if name == "torch" else real_version(name),
    )
    report = environment.check_environment()
    assert not report.ok
    assert any("torch" in p and "1.0.0" in p for p in report.problems)


def test_course_style_sets_readable_defaults():
    helpers.use_course_style()
    assert mpl.rcParams["axes.grid"] is True
    assert mpl.rcParams["figure.figsize"] == [8.0, 4.5]


def test_course_style_writes_axis_ticks_with_a_decimal_comma():
    import matplotlib.pyplot as plt

    helpers.use_course_style()
    fig, ax = plt.subplots()
    try:
        ax.plot([0.0, 1.0], [-0.5, 0.25])
        fig.canvas.draw()
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert "0,0" in labels and not any("." in label for label in labels)
        assert any(label.startswith("−") for label in labels)  # el signo menos
        formatter = ax.xaxis.get_major_formatter()
        assert formatter.format_data_short(0.125).strip() == "0,125"
    finally:
        plt.close(fig)


@exercise("test_module", "double", "el doble")
def _check_double(function):
    check_cases(
        function,
        "double",
        [(1.0,), (2.5,), (-3.0,)],
        lambda x: 2 * x,
        [Mistake("squared", lambda x: x**2, "¿Elevaste al cuadrado en vez de doblar?")],
    )


def test_check_passes_and_prints(capsys):
    # Sin ejercicio en ningún cuaderno, el título es la clave; el aspecto va
    # entre paréntesis
    _check_double(lambda x: x + x)
    assert "✔ double (el doble): ¡correcto!" in capsys.readouterr().out


def test_checks_take_the_exercise_title_from_the_notebook(capsys):
    from helpers.checks import exercise_title

    title = exercise_title("01_bandidos", "incremental_mean")
    assert title == "Ejercicio 1 · La media incremental"
    helpers.progress_summary("01_bandidos")
    # (✔, ✘ o · según lo que otras pruebas de este proceso hayan ejecutado)
    assert f"  {title}" in capsys.readouterr().out


def test_check_names_the_mistake():
    with pytest.raises(CheckError, match="cuadrado") as caught:
        _check_double(lambda x: x * x)
    assert isinstance(caught.value, AssertionError)
    assert caught.value.mistake == "squared"
    assert "double(1.0) devolvió 1, pero debía ser 2." in str(caught.value)


def test_check_reports_unknown_mistakes_with_the_failing_case():
    with pytest.raises(CheckError, match=r"double\(1.0\) devolvió 3"):
        _check_double(lambda x: x + 2)


def test_check_turns_not_implemented_into_a_spanish_message():
    def stub(x):
        raise NotImplementedError

    with pytest.raises(CheckError, match="Todavía no hay solución"):
        _check_double(stub)


def test_check_reports_exceptions_in_a_case():
    with pytest.raises(CheckError, match="lanzó ZeroDivisionError"):
        _check_double(lambda x: 2 * x if x > 0 else 1 / 0)


def test_check_silences_numpy_warnings(recwarn):
    _check_double(lambda x: np.float64(2 * x) + np.log(np.float64(1.0)), quiet=True)
    with pytest.raises(CheckError):
        _check_double(lambda x: np.float64(x) / np.float64(0.0), quiet=True)
    assert len(recwarn) == 0


def test_progress_summary_tracks_the_last_result(capsys):
    _check_double(lambda x: 2 * x, quiet=True)
    assert helpers.progress_summary("test_module") == {"double": True}
    with pytest.raises(CheckError):
        _check_double(lambda x: x, quiet=True)
    assert helpers.progress_summary("test_module") == {"double": False}
    assert "0 de 1 ejercicios" in capsys.readouterr().out


def test_progress_summary_ignores_other_functions_the_student_tries(capsys):
    """Probar con la comprobación otra función (no la que el cuaderno llama
    como el ejercicio) no cambia lo que el resumen dice del ejercicio."""
    notebook: dict = {}
    exec("def double(x):\n    return 2 * x\n\ndef trial(x):\n    return x", notebook)
    _check_double(notebook["double"], quiet=True)
    with pytest.raises(CheckError):
        _check_double(notebook["trial"], quiet=True)
    assert helpers.progress_summary("test_module") == {"double": True}
    notebook["double"] = notebook["trial"]  # la respuesta del cuaderno, mal
    with pytest.raises(CheckError):
        _check_double(notebook["double"], quiet=True)
    assert helpers.progress_summary("test_module") == {"double": False}


def test_a_strange_answer_object_does_not_break_the_progress_record():
    """Una respuesta con un ``__wrapped__`` sin fin o un ``__getattr__`` que
    lanza no rompe la comprobación antes de empezar: se anota como la del
    cuaderno."""
    from helpers.checks.core.registry import _is_the_answer

    class Endless:
        @property
        def __wrapped__(self):
            return Endless()

    class Hostile:
        def __getattr__(self, name):
            raise RuntimeError(name)

    assert _is_the_answer(Endless(), "double")
    assert _is_the_answer(Hostile(), "double")


def test_progress_summary_lists_unchecked_exercises(capsys):
    summary = helpers.progress_summary("01_bandidos")
    assert set(summary) == {
        "incremental_mean",
        "epsilon_greedy",
        "testbed_step",
        "ucb_action",
        "softmax",
        "gradient_bandit_update",
        "gradient_bandit_train",
    }
    assert "ejercicios pasan su comprobación visible" in capsys.readouterr().out


def test_set_seed_does_not_load_torch():
    # Un cuaderno sin redes (01) no paga la carga de PyTorch, ni al calificar.
    code = (
        "import sys, helpers; helpers.set_seed(0); helpers.report_environment(); "
        "sys.exit(int('torch' in sys.modules))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, "set_seed o el informe cargaron PyTorch"
    assert "este cuaderno no lo carga" in completed.stdout


def test_progress_of_the_bandits_does_not_load_torch():
    # El resumen importa solo las comprobaciones del tema de su módulo
    # (helpers.topics.TOPICS): las de los bandidos no usan PyTorch.
    code = (
        "import sys, helpers; summary = helpers.progress_summary('01_bandidos'); "
        "assert len(summary) == 7, summary; "
        "assert 'helpers.checks.bandits' in sys.modules; "
        "assert 'helpers.checks.dqn' not in sys.modules; "
        "sys.exit(int('torch' in sys.modules))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr or "el resumen cargó PyTorch"


def test_notebooks_that_use_torch_import_it_before_seeding():
    # set_seed solo siembra PyTorch si ya está importado. (01 lo importa más
    # abajo solo para derivar una cuenta, sin nada aleatorio.)
    for module_id in module_ids():
        nb = read(solution_path(module_id))
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        if not any(f"torch.{f}(" in code for f in ("rand", "randn", "randint")):
            continue
        setup = setup_source(nb)
        assert "import torch" in setup, module_id
        assert setup.index("import torch") < setup.index("set_seed("), module_id
