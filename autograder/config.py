"""Carga la configuración de nbgrader del curso (``autograder/nbgrader_config.py``).

Las rutas del repositorio y de cada cuaderno están en :mod:`autograder.course`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from autograder.course import HERE


def use_this_python() -> None:
    """Pone la carpeta de este Python al principio del ``PATH``.

    nbgrader lanza ``alembic`` y el kernel ``python3`` como programas externos:
    tienen que ser los del entorno del curso, no otros que haya en el sistema.
    """
    bin_dir = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = bin_dir + os.pathsep + path


def load_config() -> Config:
    """La configuración de nbgrader del curso, lista para modificar."""
    use_this_python()
    loader = PyFileConfigLoader("nbgrader_config.py", path=str(HERE))
    return loader.load_config()
