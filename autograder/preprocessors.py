"""Preprocesadores propios del curso para la cadena de calificación de nbgrader."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

SLOW_TAG = "slow"
SKIPPED_SOURCE = (
    "# Celda de entrenamiento o demostración larga: no se ejecuta al calificar."
)


def is_nbgrader_cell(cell: NotebookNode) -> bool:
    """¿Es una celda que nbgrader califica o bloquea (solución, prueba, tarea)?"""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(
        meta.get("solution")
        or meta.get("grade")
        or meta.get("locked")
        or meta.get("task")
    )


def slow_cell_ids(nb: NotebookNode) -> set[str]:
    """Los ids de las celdas de código con la etiqueta «slow»."""
    return {
        cell.get("id", "")
        for cell in nb.cells
        if cell.cell_type == "code" and SLOW_TAG in cell.metadata.get("tags", [])
    }


class SkipSlowCells(NbGraderPreprocessor):
    """Vacía las celdas lentas antes de ejecutar una entrega.

    Una celda se salta si lleva la etiqueta «slow» en la entrega o si su id es
    el de una celda «slow» del cuaderno fuente (así borrar la etiqueta no hace
    que se entrene al calificar). Las celdas de nbgrader nunca se saltan: una
    etiqueta no puede esquivar una prueba.
    """

    source_root = Unicode("", help="Carpeta de los cuadernos fuente (solutions/).").tag(
        config=True
    )

    def _source_slow_ids(self, resources: dict) -> set[str]:
        info = resources.get("nbgrader", {})
        if not self.source_root or "assignment" not in info:
            return set()
        path = Path(self.source_root) / info["assignment"] / f"{info['notebook']}.ipynb"
        if not path.exists():
            return set()
        return slow_cell_ids(nbformat.read(path, as_version=4))

    def preprocess(self, nb: NotebookNode, resources: dict):
        source_ids = self._source_slow_ids(resources)
        for cell in nb.cells:
            if cell.cell_type != "code" or is_nbgrader_cell(cell):
                continue
            tagged = SLOW_TAG in cell.metadata.get("tags", [])
            if tagged or cell.get("id") in source_ids:
                cell.source = SKIPPED_SOURCE
        return nb, resources
