"""Módulo 05 · GAE con deslizadores: γ, λ y los pesos de cada estimación de k pasos.

Una trayectoria fija de diez pasos (recompensas y valores de un crítico
imperfecto; el episodio termina en el último paso). Para cada paso ``t`` se ven
los errores TD ``δ_t`` y las ventajas ``Â_t`` de GAE(γ, λ); para el paso elegido,
los pesos que GAE da a cada estimación de ``k`` pasos

    Â_t^{(k)} = δ_t + γ δ_{t+1} + … + γ^{k−1} δ_{t+k−1},

que son ``(1 − λ)·λ^{k−1}``, y toda la cola ``λ^{K−1}`` para la última (la de
Monte Carlo, ``K`` = pasos que le quedan al episodio). La lógica (``advantages``,
``k_step_advantages``, ``k_step_weights``...) no depende de la vista: los tests
la manejan sin navegador.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from helpers.formatting import number
from helpers.plotting import COLORS
from helpers.rollouts import gae
from helpers.widgets.view import WidgetView, course_style, figure_output

# La trayectoria fija: diez pasos, el último termina el episodio.
REWARDS = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, -1.0])
# V(s_0), …, V(s_10) de un crítico a medio entrenar (V(s_10) no se usa: terminal).
VALUES = np.array([0.6, 0.9, 1.4, 0.5, 1.0, 1.6, 2.4, 2.0, -0.2, -0.8, 0.0])


class GaeExplorer(WidgetView):
    """GAE(γ, λ) sobre una trayectoria fija, con deslizadores.

    Args:
        gamma: el descuento γ inicial.
        lam: el λ inicial.
        step: el paso ``t`` cuyos pesos se muestran.
        rewards: ``(T,)``, las recompensas (por defecto, :data:`REWARDS`).
        values: ``(T + 1,)``, ``V(s_0), …, V(s_T)`` (por defecto, :data:`VALUES`).
            El episodio termina en el paso ``T − 1``: ``V(s_T)`` no cuenta.
    """

    def __init__(
        self,
        gamma: float = 0.9,
        lam: float = 0.8,
        step: int = 0,
        rewards: np.ndarray | None = None,
        values: np.ndarray | None = None,
    ) -> None:
        self._widget: widgets.VBox | None = None
        self.rewards = np.asarray(REWARDS if rewards is None else rewards, float)
        self.values = np.asarray(VALUES if values is None else values, float)
        if self.values.shape != (len(self.rewards) + 1,):
            raise ValueError("values debe tener un elemento más que rewards.")
        self.gamma, self.lam, self.step = 0.9, 0.8, 0
        self.set_gamma(gamma)
        self.set_lam(lam)
        self.set_step(step)

    # --- la lógica ---------------------------------------------------------

    @property
    def horizon(self) -> int:
        """``T``, el número de pasos de la trayectoria."""
        return len(self.rewards)

    def set_gamma(self, gamma: float) -> None:
        """Cambia γ (entre 0 y 1)."""
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"γ debe estar entre 0 y 1, no {gamma}.")
        self.gamma = float(gamma)
        self._changed()

    def set_lam(self, lam: float) -> None:
        """Cambia λ (entre 0 y 1)."""
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"λ debe estar entre 0 y 1, no {lam}.")
        self.lam = float(lam)
        self._changed()

    def set_step(self, step: int) -> None:
        """Elige el paso ``t`` cuyos pesos se muestran."""
        if not 0 <= step < self.horizon:
            raise ValueError(f"t debe estar entre 0 y {self.horizon - 1}, no {step}.")
        self.step = int(step)
        self._changed()

    def _batch(self) -> tuple[np.ndarray, ...]:
        terminated = np.zeros(self.horizon)
        terminated[-1] = 1.0
        return self.values[:-1], self.values[1:], terminated

    def td_errors(self) -> np.ndarray:
        """``δ_t = r_t + γ·(1 − terminated_t)·V(s_{t+1}) − V(s_t)``, ``(T,)``."""
        values, next_values, terminated = self._batch()
        return self.rewards + self.gamma * (1 - terminated) * next_values - values

    def advantages(self) -> np.ndarray:
        """Las ventajas GAE(γ, λ) de cada paso (:func:`helpers.rollouts.gae`)."""
        values, next_values, terminated = self._batch()
        result = gae(
            self.rewards,
            values,
            next_values,
            terminated,
            np.zeros(self.horizon),
            self.gamma,
            self.lam,
        )
        return result.double().numpy()

    def k_step_advantages(self, step: int | None = None) -> np.ndarray:
        """``Â_t^{(k)} = Σ_{l<k} γ^l δ_{t+l}`` para ``k = 1 … K``, ``(K,)``.

        Es el retorno de ``k`` pasos menos ``V(s_t)``: ``k`` recompensas y luego
        el crítico. La última (``k = K``) llega al final del episodio: es el
        retorno de Monte Carlo menos ``V(s_t)``.
        """
        t = self.step if step is None else step
        deltas = self.td_errors()[t:]
        return np.cumsum(self.gamma ** np.arange(len(deltas)) * deltas)

    def k_step_weights(self, step: int | None = None) -> np.ndarray:
        """Los pesos de GAE sobre las ``K`` estimaciones de :meth:`k_step_advantages`.

        ``(1 − λ)·λ^{k−1}`` para ``k < K`` y ``λ^{K−1}`` para ``k = K`` (lo que
        la serie geométrica pondría más allá del final cae en Monte Carlo). Suman
        1, y ``Σ_k w_k·Â_t^{(k)} = Â_t``.
        """
        t = self.step if step is None else step
        k = np.arange(1, self.horizon - t + 1)
        weights = (1 - self.lam) * self.lam ** (k - 1.0)
        weights[-1] = self.lam ** (k[-1] - 1.0)
        return weights

    def effective_horizon(self) -> float:
        """``1 / (1 − γλ)``: cuántos pasos mira GAE, más o menos (∞ si γλ = 1)."""
        decay = self.gamma * self.lam
        return float("inf") if decay >= 1 else 1.0 / (1.0 - decay)

    def explanation(self) -> str:
        """Lo que muestran los gráficos, en una frase."""
        t = self.step
        adv = self.advantages()[t]
        weights = self.k_step_weights()
        horizon = self.effective_horizon()
        look = "todo el episodio" if horizon > 1e6 else f"≈ {number(horizon, 1)} pasos"
        if len(weights) == 1:
            return (
                f"Â_{t} = {number(adv)}: en el último paso del episodio solo hay una "
                "estimación, δ_t, y se lleva todo el peso."
            )
        return (
            f"Con γ = {number(self.gamma)} y λ = {number(self.lam)}, Â_{t} = "
            f"{number(adv)}: el paso de un solo δ pesa {number(weights[0])} y la "
            f"estimación de Monte Carlo, {number(weights[-1])}. GAE mira {look} "
            "hacia delante (1 / (1 − γλ))."
        )

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """Ventajas y errores TD por paso, y los pesos de cada ``k``."""
        t = self.step
        steps = np.arange(self.horizon)
        with course_style():
            fig = Figure(figsize=(9.4, 3.4))
            fig.subplots_adjust(
                left=0.08, right=0.98, bottom=0.17, top=0.87, wspace=0.25
            )
            ax_adv, ax_w = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.3, 1]})
            ax_adv.bar(
                steps - 0.2, self.td_errors(), 0.4, color=COLORS[7], label=r"$\delta_t$"
            )
            colors = [COLORS[3] if s == t else COLORS[0] for s in steps]
            ax_adv.bar(
                steps + 0.2,
                self.advantages(),
                0.4,
                color=colors,
                label=r"$\hat A_t$ (en naranja, el paso t elegido)",
            )
            ax_adv.axhline(0, color="k", lw=0.8)
            ax_adv.set_xticks(steps)
            ax_adv.set(
                title="Errores TD y ventajas GAE por paso",
                xlabel="paso t (el episodio termina en el último)",
                ylabel="valor",
            )
            ax_adv.legend(loc="lower left", fontsize=8)
            weights = self.k_step_weights()
            k = np.arange(1, len(weights) + 1)
            bar_colors = [COLORS[0]] * (len(k) - 1) + [COLORS[2]]
            ax_w.bar(k, weights, color=bar_colors)
            ax_w.set_xticks(k)
            ax_w.set(
                title=rf"Pesos de GAE sobre $\hat A_{{{t}}}^{{(k)}}$",
                xlabel="k (en verde: Monte Carlo)",
                ylabel="peso",
                ylim=(0, 1.05),
            )
        return fig

    def _figure_output(self) -> dict:
        return figure_output(self.figure(), "<figura de GAE>", dpi=80)

    def _build_widget(self) -> widgets.VBox:
        style = {"description_width": "initial"}
        common = {"min": 0.0, "max": 1.0, "step": 0.01, "continuous_update": False}
        self._gamma_slider = widgets.FloatSlider(
            self.gamma, description="γ (descuento)", style=style, **common
        )
        self._lam_slider = widgets.FloatSlider(
            self.lam, description="λ (GAE)", style=style, **common
        )
        self._step_slider = widgets.IntSlider(
            self.step,
            min=0,
            max=self.horizon - 1,
            description="paso t",
            continuous_update=False,
            style=style,
        )
        for slider in (self._gamma_slider, self._lam_slider, self._step_slider):
            slider.observe(self._on_control, names="value")
        self._info, self._plot = widgets.HTML(), widgets.Output()
        controls = widgets.HBox(
            [self._gamma_slider, self._lam_slider, self._step_slider]
        )
        return widgets.VBox([controls, self._info, self._plot])

    def _on_control(self, change: dict) -> None:
        """Un deslizador cambió: avisa a la lógica (salvo el eco de ``_changed``)."""
        owner, new = change["owner"], change["new"]
        if owner is self._gamma_slider and new != self.gamma:
            self.set_gamma(new)
        elif owner is self._lam_slider and new != self.lam:
            self.set_lam(new)
        elif owner is self._step_slider and new != self.step:
            self.set_step(new)

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe, para que refleje el estado."""
        if self._widget is None:
            return
        self._gamma_slider.value = self.gamma
        self._lam_slider.value = self.lam
        self._step_slider.value = self.step
        k_adv = self.k_step_advantages()
        weights = self.k_step_weights()
        terms = " · ".join(
            f"k={k}: {number(a)}" for k, a in enumerate(k_adv[:4], start=1)
        )
        self._info.value = (
            f"{html.escape(self.explanation())}<br><small>Estimaciones de k pasos "
            f"de Â_{self.step}: {terms}{' …' if len(k_adv) > 4 else ''} · "
            f"Σ_k w_k·Â^(k) = {number(float(weights @ k_adv))}</small>"
        )
        self._plot.outputs = (self._figure_output(),)
