"""Módulo 04 · Mueve la línea base ``b`` y mira cómo se estrecha el histograma.

Muestras fijas del problema del pedestal (tres acciones con retornos medios 480,
500 y 520, ±50 de ruido) con la política uniforme. Dos deslizadores: la línea
base ``b`` y un desplazamiento ``c`` que se suma a todos los retornos. Se
muestra el histograma de las estimaciones por muestra de ``∂J/∂θ₂``,
``(R_i − b)·(1[a_i = 2] − π₂)``, su media, su varianza y la varianza en función
de ``b``. La lógica (``set_baseline``, ``set_offset``, ``estimates``...) no
depende de la vista: los tests la manejan sin navegador.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from helpers.baselines import (
    PEDESTAL_MEANS,
    PEDESTAL_NOISE,
    exact_bandit_gradient,
    softmax_policy,
)
from helpers.formatting import number
from helpers.plotting import COLORS
from helpers.widgets.view import WidgetView, course_style, figure_output

#: La componente del gradiente que se muestra: la de la mejor acción (520).
COMPONENT = 2
B_RANGE = (0.0, 1000.0)
OFFSET_RANGE = (-500.0, 500.0)


class BaselineExplorer(WidgetView):
    """El histograma de las estimaciones por muestra según la línea base.

    Args:
        seed: semilla de las muestras (fijas mientras se mueven los controles).
        n_samples: cuántas muestras.
        ``baseline``: la línea base ``b`` inicial.
        offset: el desplazamiento ``c`` inicial de los retornos.
    """

    def __init__(
        self,
        seed: int = 0,
        n_samples: int = 400,
        baseline: float = 0.0,
        offset: float = 0.0,
    ) -> None:
        if n_samples < 2:
            raise ValueError("Hacen falta al menos 2 muestras para una varianza.")
        self._widget: widgets.VBox | None = None
        self.theta = np.zeros(len(PEDESTAL_MEANS))
        self.pi = softmax_policy(self.theta)
        rng = np.random.default_rng(seed)
        self.actions = rng.choice(len(self.pi), size=n_samples, p=self.pi)
        self.noise = PEDESTAL_NOISE * rng.standard_normal(n_samples)
        self.baseline = 0.0
        self.offset = 0.0
        self.set_offset(offset)
        self.set_baseline(baseline)

    # --- la lógica ---------------------------------------------------------

    @property
    def rewards(self) -> np.ndarray:
        """Los retornos de las muestras, ``r̄(a_i) + c + ruido_i``."""
        return PEDESTAL_MEANS[self.actions] + self.offset + self.noise

    @property
    def scores(self) -> np.ndarray:
        """``∂log π(a_i)/∂θ₂ = 1[a_i = 2] − π₂`` de cada muestra."""
        return (self.actions == COMPONENT).astype(float) - self.pi[COMPONENT]

    @property
    def exact(self) -> float:
        """``∂J/∂θ₂`` exacto (no depende de ``b`` ni de ``c``)."""
        means = PEDESTAL_MEANS + self.offset
        return float(exact_bandit_gradient(self.theta, means)[COMPONENT])

    def estimates(self, baseline: float | None = None) -> np.ndarray:
        """``(R_i − b)·(1[a_i = 2] − π₂)``, ``(N,)``, con ``b`` actual o dada."""
        b = self.baseline if baseline is None else baseline
        return (self.rewards - b) * self.scores

    def variance(self, baseline: float | None = None) -> float:
        """La varianza (dividiendo por ``N``) de las estimaciones."""
        return float(np.var(self.estimates(baseline)))

    def best_baseline(self) -> float:
        """La ``b`` que minimiza la varianza de estas muestras (exacta, cerrada).

        ``Var((R − b)·s)`` es una parábola en ``b``; su mínimo está en
        ``Cov(R·s, s) / Var(s)``.
        """
        s, rs = self.scores, self.rewards * self.scores
        return float(np.cov(rs, s, bias=True)[0, 1] / np.var(s))

    def set_baseline(self, baseline: float) -> None:
        """Cambia ``b`` (recortada al rango del deslizador)."""
        self.baseline = float(np.clip(baseline, *B_RANGE))
        self._changed()

    def set_offset(self, offset: float) -> None:
        """Cambia el desplazamiento ``c`` de todos los retornos."""
        self.offset = float(np.clip(offset, *OFFSET_RANGE))
        self._changed()

    def summary(self) -> str:
        """Una línea con la media, el valor exacto y la varianza."""
        estimates = self.estimates()
        ratio = self.variance(0.0) / max(self.variance(), 1e-12)
        b = self.baseline
        return (
            f"Retornos ≈ {number(self.rewards.mean(), 0)} · b = "
            f"{number(b, 0)} · media de las estimaciones "
            f"{number(estimates.mean(), 2)} (exacto {number(self.exact, 2)}) · "
            f"varianza {number(self.variance(), 0)}, "
            f"{number(ratio, 1)} veces menos que con b = 0"
        )

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """El histograma de las estimaciones y la varianza en función de ``b``."""
        with course_style():
            fig = Figure(figsize=(8.6, 3.3))
            fig.subplots_adjust(
                left=0.08, right=0.98, bottom=0.17, top=0.88, wspace=0.3
            )
            ax_hist, ax_var = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.5, 1]})
            bins = np.linspace(-1000, 1000, 101)
            ax_hist.hist(
                np.clip(self.estimates(), -999, 999), bins=bins, color=COLORS[0]
            )
            ax_hist.axvline(self.exact, color="k", ls="--", lw=1, label="∂J/∂θ₂ exacto")
            ax_hist.set(
                title="Estimaciones por muestra de ∂J/∂θ₂",
                xlabel="(R − b)·∂log π/∂θ₂",
                ylabel="muestras",
                xlim=(-1000, 1000),
            )
            ax_hist.legend(loc="upper right", fontsize=8)
            grid = np.linspace(*B_RANGE, 101)
            ax_var.plot(grid, [self.variance(b) for b in grid], color=COLORS[1])
            ax_var.plot([self.baseline], [self.variance()], "o", color=COLORS[3])
            ax_var.set(
                title="Varianza según b",
                xlabel="línea base b",
                ylabel="varianza",
                yscale="log",
            )
        return fig

    def _build_widget(self) -> widgets.VBox:
        style = {"description_width": "initial"}
        layout = widgets.Layout(width="420px")
        self._b_slider = widgets.FloatSlider(
            self.baseline,
            min=B_RANGE[0],
            max=B_RANGE[1],
            step=10,
            readout_format=".0f",
            description="línea base b",
            continuous_update=False,
            style=style,
            layout=layout,
        )
        self._c_slider = widgets.FloatSlider(
            self.offset,
            min=OFFSET_RANGE[0],
            max=OFFSET_RANGE[1],
            step=50,
            readout_format=".0f",
            description="desplazamiento c de los retornos",
            continuous_update=False,
            style=style,
            layout=layout,
        )
        self._best_button = widgets.Button(
            description="b que minimiza la varianza",
            layout=widgets.Layout(width="auto"),
        )
        self._best_button.on_click(lambda _: self.set_baseline(self.best_baseline()))
        self._b_slider.observe(self._on_control, names="value")
        self._c_slider.observe(self._on_control, names="value")
        self._info, self._plot = widgets.HTML(), widgets.Output()
        intro = widgets.HTML(
            "<b>El pedestal.</b> Tres acciones con retornos medios 480, 500 y 520 "
            "(más c), ±50 de ruido, política uniforme, "
            f"{len(self.actions)} muestras fijas."
        )
        controls = widgets.VBox([self._b_slider, self._c_slider, self._best_button])
        return widgets.VBox([intro, controls, self._info, self._plot])

    def _on_control(self, change: dict) -> None:
        """Un control cambió: avisa a la lógica, salvo si es el eco de ``_changed``."""
        owner, new = change["owner"], change["new"]
        if owner is self._b_slider and new != self.baseline:
            self.set_baseline(new)
        elif owner is self._c_slider and new != self.offset:
            self.set_offset(new)

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe, para que refleje el estado."""
        if self._widget is None:
            return
        self._b_slider.value = self.baseline
        self._c_slider.value = self.offset
        self._info.value = html.escape(self.summary())
        self._plot.outputs = (
            figure_output(self.figure(), "<histograma de las estimaciones>", dpi=80),
        )
