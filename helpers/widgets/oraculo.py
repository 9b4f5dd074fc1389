"""El widget del módulo 12: cuánta masa cubre cada umbral de la enumeración."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from helpers.formatting import number, scientific
from helpers.plotting import COLORS
from helpers.widgets.view import WidgetView, course_style, figure_output


class ThresholdExplorer(WidgetView):
    """Las respuestas de una enumeración fina, vistas con un umbral más grueso.

    Una enumeración con umbral p ≥ t contiene todas las respuestas de
    cualquier umbral mayor: las de p ≥ 10·t son las suyas con p ≥ 10·t. Así
    que basta enumerar una vez, con el umbral más fino, y el widget sube o
    baja el umbral sin volver a llamar al modelo.

    Args:
        log_probs: log p(y) de cada respuesta de la enumeración fina.
        texts: el texto de cada respuesta, en el mismo orden.
        finest: el umbral de esa enumeración (p ≥ ``finest``).
    """

    def __init__(
        self, log_probs: Sequence[float], texts: Sequence[str], finest: float
    ) -> None:
        order = np.argsort(-np.asarray(log_probs, dtype=float))
        self.log_probs = np.asarray(log_probs, dtype=float)[order]
        self.texts = [texts[i] for i in order]
        self.finest_exponent = math.floor(math.log10(finest) + 1e-9)
        self.exponent = max(self.finest_exponent, -2)  # empieza en p ≥ 1·10⁻²
        self._widget = None

    # --- la lógica ---------------------------------------------------------
    def threshold(self) -> float:
        """El umbral que se mira: p(y) ≥ 10^exponente."""
        return 10.0**self.exponent

    def change(self, delta: int) -> None:
        """Multiplica el umbral por 10^delta, sin bajar del de la enumeración."""
        self.exponent = min(0, max(self.finest_exponent, self.exponent + delta))
        self._changed()

    def kept(self) -> np.ndarray:
        """Las log-probabilidades de las respuestas que superan el umbral."""
        return self.log_probs[self.log_probs >= math.log(self.threshold())]

    def covered_mass(self) -> float:
        """La masa que suman las respuestas por encima del umbral."""
        return float(np.exp(self.kept()).sum())

    def summary(self) -> str:
        """Una frase con lo que cubre el umbral elegido."""
        kept = self.kept()
        return (
            f"Umbral p(y) ≥ {scientific(self.threshold(), 0)}: {len(kept)} "
            f"respuestas, masa cubierta {number(self.covered_mass(), 5)}, "
            f"sin cubrir {number(1 - self.covered_mass(), 5)}."
        )

    # --- la vista ----------------------------------------------------------
    def figure(self) -> Figure:
        """La masa acumulada contra el número de respuestas, con el umbral."""
        with course_style():
            fig = Figure(figsize=(7.5, 3.0))
            fig.subplots_adjust(left=0.1, right=0.98, bottom=0.18, top=0.86)
            ax = fig.subplots()
            cumulative = np.cumsum(np.exp(self.log_probs))
            ranks = np.arange(1, len(cumulative) + 1)
            ax.plot(ranks, cumulative, color=COLORS[0])
            count = len(self.kept())
            if count:
                ax.axvline(count, color=COLORS[3], linestyle="--")
                ax.plot([count], [cumulative[count - 1]], "o", color=COLORS[3])
            ax.set_xscale("log")
            ax.set(
                title="Masa cubierta por las respuestas más probables",
                xlabel="número de respuestas (de la más probable a la menos)",
                ylabel="masa acumulada",
            )
        return fig

    def _build_widget(self) -> widgets.VBox:
        coarser = widgets.Button(description="umbral × 10")
        finer = widgets.Button(description="umbral ÷ 10")
        coarser.on_click(lambda _: self.change(1))
        finer.on_click(lambda _: self.change(-1))
        self._info = widgets.HTML()
        self._top = widgets.HTML()
        self._plot = widgets.Output()
        return widgets.VBox(
            [widgets.HBox([coarser, finer]), self._info, self._top, self._plot]
        )

    def _changed(self) -> None:
        if self._widget is None:
            return
        self._info.value = html.escape(self.summary())
        shown = [
            f"{html.escape(text)} ({number(math.exp(lp), 4)})"
            for text, lp in zip(self.texts[:3], self.log_probs[:3], strict=True)
        ]
        self._top.value = "Las más probables: " + " · ".join(shown)
        self._plot.outputs = (
            figure_output(self.figure(), "<masa acumulada y umbral>", dpi=80),
        )
