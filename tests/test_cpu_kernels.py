"""Las cifras guardadas no dependen de la CPU en que se calcularon.

PyTorch elige sus núcleos de float32 según lo que sepa hacer el procesador
(AVX-512, AVX2 o los genéricos), y cada uno redondea a su manera: una cifra
guardada en una máquina sale con otro último decimal en otra. Por eso las
pruebas que comparan una cifra guardada con la recalculada (las marcadas
``stored_figures``) usan ``helpers.seeding.FLOAT_TOLERANCE``. Esta prueba las
vuelve a ejecutar en un proceso aparte con ``ATEN_CPU_CAPABILITY=default``, los
núcleos genéricos: así ``make test`` comprueba, en cualquier máquina, que esas
cifras se reproducen también con otros núcleos que los de la suya.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
MARK = "@pytest.mark.stored_figures"
#: Vuelve a ejecutar todas las cifras guardadas en otro proceso: make test-fast
#: la salta (make test y la CI, no).
pytestmark = pytest.mark.slow

# En el proceso hijo: qué núcleos usa de verdad PyTorch, y después las pruebas
_CHILD = (
    "import sys, pytest, torch; "
    "print('núcleos de PyTorch:', torch.backends.cpu.get_cpu_capability(), "
    "flush=True); "
    "sys.exit(pytest.main(sys.argv[1:]))"
)


def _marked() -> dict[Path, int]:
    """Los archivos de pruebas con la marca, y cuántas veces la llevan."""
    counts = {
        path: path.read_text(encoding="utf-8").count(MARK)
        for path in sorted(TESTS.glob("test_*.py"))
        if path.name != Path(__file__).name
    }
    return {path: n for path, n in counts.items() if n}


def test_the_stored_figure_tests_are_marked():
    # La curva de GRPO de 08, las dos cifras del punto de control y las
    # ejecuciones guardadas de 05, 07 y 10 (su comienzo), al menos
    marked = _marked()
    assert {p.name for p in marked} >= {
        "test_tinylm_compare.py",
        "test_tinylm_checkpoint.py",
        "test_precomputed_runs.py",
        "test_tinylm_preferences.py",
    }
    assert sum(marked.values()) >= 6


@pytest.mark.parametrize("capability", ["default"])
def test_stored_figures_hold_with_other_cpu_kernels(capability):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["ATEN_CPU_CAPABILITY"] = capability
    marked = _marked()
    files = [str(path) for path in marked]
    args = ["-m", "stored_figures", "-q", "-p", "no:cacheprovider", *files]
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, (
        f"Con ATEN_CPU_CAPABILITY={capability}, una cifra guardada no se "
        f"reproduce:\n{output[-4000:]}"
    )
    assert f"núcleos de PyTorch: {capability.upper()}" in output, output[-2000:]
    passed = re.search(r"(\d+) passed", output)
    # Todas las marcadas (una parametrizada cuenta una vez en el código)
    assert passed and int(passed.group(1)) >= sum(marked.values()), output[-2000:]
    assert not re.search(r"\d+ (failed|error|skipped)", output), output[-2000:]
