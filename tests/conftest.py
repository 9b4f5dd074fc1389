"""Configuración común de las pruebas: sin ventanas y con un solo hilo."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402
import torch  # noqa: E402


@pytest.fixture(autouse=True)
def one_thread():
    """Un hilo de PyTorch en cada prueba, como en los cuadernos.

    Con redes diminutas un hilo es tan rápido como varios, da resultados
    reproducibles y no compite con el otro trabajador de pytest-xdist. Si una
    prueba cambia los hilos, se restauran al terminar.
    """
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory, worker_id):
    """La clase de 01_bandidos de las pruebas de calificación, calificada una
    sola vez (ver tests/graded_class.py).

    Con pytest-xdist, el primer proceso que la pide la califica y los demás
    esperan y leen lo que dejó (el patrón de la documentación de xdist).
    """
    from filelock import FileLock

    from tests.graded_class import grade_class, load_class

    if worker_id == "master":
        return grade_class(tmp_path_factory.mktemp("clase"))
    root = tmp_path_factory.getbasetemp().parent / "clase_01"
    with FileLock(f"{root}.lock"):
        if (root / "clase.json").exists():
            return load_class(root)
        return grade_class(root)


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    """El modelo del SFT convertido a GPT-2 y guardado con save_pretrained, para
    las pruebas de helpers.puente (TRL crea su referencia desde la carpeta)."""
    from helpers.puente import to_gpt2
    from helpers.tinylm import load_pretrained

    path = tmp_path_factory.mktemp("tinylm_gpt2")
    to_gpt2(load_pretrained()).save_pretrained(path)
    return path
