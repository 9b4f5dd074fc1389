"""Lo común a los widgets del curso: el estilo, la figura y la vista perezosa.

Cada widget separa su lógica (métodos que las pruebas llaman sin navegador) de
su vista (ipywidgets), que se construye la primera vez que se pide y se
redibuja con ``_changed()`` cuando la lógica cambia.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from contextlib import contextmanager

import ipywidgets as widgets
import matplotlib as mpl
from IPython.display import display
from matplotlib.figure import Figure

from helpers.plotting import use_course_style


@contextmanager
def course_style() -> Iterator[None]:
    """El estilo del curso solo dentro del bloque: no toca el estilo global."""
    with mpl.rc_context():
        use_course_style()
        yield


def figure_output(figure: Figure, description: str, dpi: int = 80) -> dict:
    """Una figura como salida PNG para un ``ipywidgets.Output`` (sin pyplot).

    Args:
        figure: la figura de matplotlib.
        description: el texto alternativo (``text/plain``).
        dpi: resolución de la imagen.
    """
    buffer = io.BytesIO()
    with course_style():
        figure.savefig(buffer, format="png", dpi=dpi, bbox_inches=None)
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    data = {"image/png": png, "text/plain": description}
    return {"output_type": "display_data", "data": data, "metadata": {}}


class WidgetView:
    """Mezcla para los widgets: ``widget`` perezoso y visualización en Jupyter.

    Las subclases definen ``_build_widget()`` (la vista) y ``_changed()``
    (redibujar), e inicializan ``self._widget = None``.
    """

    _widget: widgets.VBox | None = None

    def _build_widget(self) -> widgets.VBox:
        raise NotImplementedError

    def _changed(self) -> None:
        raise NotImplementedError

    @property
    def widget(self) -> widgets.VBox:
        """El widget del cuaderno (se construye la primera vez que se pide)."""
        if self._widget is None:
            self._widget = self._build_widget()
            self._changed()
        return self._widget

    def _ipython_display_(self) -> None:
        display(self.widget)
