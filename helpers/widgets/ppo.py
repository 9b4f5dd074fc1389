"""Módulo 06 · El widget de PPO: ``L^CLIP`` con deslizadores.

- ``ClipExplorer``: ``L^CLIP`` y su gradiente frente al cociente ``r``.

Para una sola muestra con ventaja ``A``, el objetivo recortado de PPO es

    L^CLIP(r) = min(r·A, clip(r, 1 − ε, 1 + ε)·A)

y su derivada respecto a ``r`` (calculada con autograd) es ``A`` donde el
término sin recortar manda y ``0`` donde manda el recortado. Los deslizadores
mueven ``ε`` y ``A`` (su signo y su tamaño). La lógica (``objective``,
``gradient``, ``region``...) no depende de la vista: las pruebas la manejan sin
navegador.

El cuestionario del módulo (sección 8) no tiene formulario a propósito. Un
formulario que corrige revela la respuesta a quien prueba las opciones una a una,
y el código de ``helpers`` llega entero al estudiante, así que tampoco puede
guardar la clave. Las preguntas se califican solo con las pruebas ocultas del
cuaderno de soluciones, y su explicación llega con la retroalimentación.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure

from helpers.formatting import number
from helpers.plotting import COLORS
from helpers.widgets.view import WidgetView, course_style, figure_output


class ClipExplorer(WidgetView):
    """``L^CLIP(r)`` y ``dL^CLIP/dr`` para una muestra con ventaja ``A``.

    Args:
        clip_eps: ``ε``, el radio del recorte (entre 0 y 1).
        advantage: la ventaja ``A`` de la muestra (cualquier signo).
        r_max: el extremo derecho del eje de ``r`` en la figura.
    """

    def __init__(
        self, clip_eps: float = 0.2, advantage: float = 1.0, r_max: float = 2.0
    ) -> None:
        self._widget: widgets.VBox | None = None
        self.r_max = float(r_max)
        self.clip_eps = 0.2
        self.advantage = 1.0
        self.set_clip_eps(clip_eps)
        self.set_advantage(advantage)

    # --- la lógica ---------------------------------------------------------

    def set_clip_eps(self, clip_eps: float) -> None:
        """Cambia ``ε`` (debe estar en ``(0, 1)``)."""
        if not 0 < clip_eps < 1:
            raise ValueError(f"ε debe estar entre 0 y 1, no {clip_eps}.")
        self.clip_eps = float(clip_eps)
        self._changed()

    def set_advantage(self, advantage: float) -> None:
        """Cambia la ventaja ``A``."""
        self.advantage = float(advantage)
        self._changed()

    @property
    def bounds(self) -> tuple[float, float]:
        """El intervalo del recorte, ``[1 − ε, 1 + ε]``."""
        return 1.0 - self.clip_eps, 1.0 + self.clip_eps

    def _values_and_grads(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ratio = torch.tensor(np.asarray(r, dtype=float), requires_grad=True)
        low, high = self.bounds
        a = torch.tensor(self.advantage, dtype=torch.float64)
        objective = torch.min(ratio * a, torch.clamp(ratio, low, high) * a)
        objective.sum().backward()
        return objective.detach().numpy(), ratio.grad.numpy()

    def objective(self, r: float | np.ndarray) -> np.ndarray:
        """``L^CLIP(r) = min(r·A, clip(r)·A)`` en cada ``r``."""
        return self._values_and_grads(np.atleast_1d(r))[0]

    def gradient(self, r: float | np.ndarray) -> np.ndarray:
        """``dL^CLIP/dr`` en cada ``r``, con autograd (``A`` o ``0``)."""
        return self._values_and_grads(np.atleast_1d(r))[1]

    def region(self, r: float) -> str:
        """Qué pasa con la muestra si su cociente vale ``r``, en una frase corta."""
        low, high = self.bounds
        a = self.advantage
        if a == 0:
            return "A = 0: la muestra no aporta gradiente"
        if low <= r <= high:
            return "dentro del intervalo: gradiente normal, r·A"
        if (a > 0 and r > high) or (a < 0 and r < low):
            return "recortada: el min elige el término plano, gradiente 0"
        return "fuera del intervalo pero sin recortar: el gradiente deshace el error"

    def explanation(self) -> str:
        """El caso actual explicado en dos frases."""
        low, high = self.bounds
        a = self.advantage
        if a > 0:
            return (
                f"A = {number(a)} > 0: la acción salió mejor de lo esperado y se "
                "quiere "
                f"subir r. Pasado r = {number(high)} el término recortado se aplana y "
                "el min lo elige: gradiente 0, no se empuja más. Por debajo de "
                f"{number(low)} el gradiente sigue siendo A: se corrige sin freno."
            )
        if a < 0:
            return (
                f"A = {number(a)} < 0: la acción salió peor de lo esperado y se quiere "
                f"bajar r. Por debajo de r = {number(low)} el min elige el término "
                "recortado y el gradiente es 0: no se sigue bajando. Por encima "
                f"de {number(high)} el gradiente sigue siendo A: se corrige sin freno."
            )
        return "A = 0: ni mejor ni peor de lo esperado; la muestra no mueve nada."

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """Dos paneles: ``L^CLIP(r)`` (y ``r·A``) y su derivada ``dL/dr``."""
        r = np.linspace(0.0, self.r_max, 401)
        values, grads = self._values_and_grads(r)
        low, high = self.bounds
        a = self.advantage
        with course_style():
            fig = Figure(figsize=(8.4, 3.3))
            fig.subplots_adjust(
                left=0.08, right=0.98, bottom=0.17, top=0.86, wspace=0.3
            )
            ax_obj, ax_grad = fig.subplots(1, 2)
            for ax in (ax_obj, ax_grad):
                ax.axvspan(low, high, color=COLORS[7], alpha=0.15, lw=0)
                ax.axvline(1.0, color=COLORS[7], lw=0.8, ls=":")
                ax.set_xlabel("cociente r = π_θ / π_θold")
            ax_obj.plot(r, r * a, color=COLORS[7], ls="--", lw=1, label="r·A")
            ax_obj.plot(r, values, color=COLORS[0], lw=2.2, label=r"$L^{CLIP}$")
            ax_obj.set(title=f"Objetivo recortado (A = {number(a, 1)})", ylabel="valor")
            ax_obj.legend(loc="upper right" if a < 0 else "lower right", fontsize=8)
            ax_grad.plot(r, grads, color=COLORS[3], lw=2.2)
            span = max(abs(a), 0.5) * 1.3
            ax_grad.set(
                title=f"Gradiente dL/dr (ε = {number(self.clip_eps)})",
                ylabel=r"$dL^{CLIP}/dr$",
                ylim=(-span, span),
            )
            ax_grad.axhline(0, color="k", lw=0.6)
        return fig

    def _figure_output(self) -> dict:
        return figure_output(self.figure(), "<L^CLIP y su gradiente>", dpi=80)

    def _build_widget(self) -> widgets.VBox:
        style = {"description_width": "initial"}
        self._eps_slider = widgets.FloatSlider(
            self.clip_eps,
            min=0.05,
            max=0.5,
            step=0.05,
            description="ε (radio del recorte)",
            continuous_update=False,
            style=style,
        )
        self._adv_slider = widgets.FloatSlider(
            self.advantage,
            min=-2.0,
            max=2.0,
            step=0.1,
            description="ventaja A (signo y tamaño)",
            continuous_update=False,
            style=style,
        )
        self._eps_slider.observe(self._on_control, names="value")
        self._adv_slider.observe(self._on_control, names="value")
        self._info, self._plot = widgets.HTML(), widgets.Output()
        controls = widgets.HBox([self._eps_slider, self._adv_slider])
        return widgets.VBox([controls, self._info, self._plot])

    def _on_control(self, change: dict) -> None:
        owner, new = change["owner"], change["new"]
        if owner is self._eps_slider and new != self.clip_eps:
            self.set_clip_eps(new)
        elif owner is self._adv_slider and new != self.advantage:
            self.set_advantage(new)

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe."""
        if self._widget is None:
            return
        self._eps_slider.value = self.clip_eps
        self._adv_slider.value = self.advantage
        self._info.value = html.escape(self.explanation())
        self._plot.outputs = (self._figure_output(),)
