"""Genera ``course/`` a partir de ``solutions/`` con nbgrader."""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from nbgrader.converters import GenerateAssignment
from nbgrader.coursedir import CourseDirectory

from autograder.config import load_config
from autograder.course import COURSE, notebook_name
from autograder.course import module_ids as all_modules


def release(module_ids: list[str] | None = None, target: Path = COURSE) -> list[Path]:
    """Publica los módulos pedidos (todos si ``None``) en ``target``.

    Quita las soluciones y las pruebas ocultas, bloquea las celdas de prueba y
    borra las salidas. No toca el gradebook del curso.

    Returns:
        Las rutas de los cuadernos publicados.
    """
    config = load_config()
    config.CourseDirectory.release_directory = str(target.resolve())
    config.GenerateAssignment.force = True
    written = []
    # nbgrader guarda las celdas en un gradebook incluso al publicar: uno
    # temporal, que se tira al acabar, para no dejar rastro en el repositorio.
    scratch = tempfile.TemporaryDirectory(prefix="release-")
    config.CourseDirectory.db_url = f"sqlite:///{scratch.name}/gradebook.db"
    for module_id in module_ids or all_modules():
        out = target / module_id
        if out.exists():
            shutil.rmtree(out)
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id = module_id
        converter = GenerateAssignment(coursedir=coursedir, config=config)
        converter.log.setLevel(logging.WARNING)
        converter.start()
        written.append(out / notebook_name(module_id))
    scratch.cleanup()
    return written
