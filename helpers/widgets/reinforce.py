"""Módulo 03 · Un paso de REINFORCE a mano, sobre una política de tres acciones.

Las tres acciones son tres estrategias del bandido de 17 × 24 (descomponer,
estimar, adivinar) y la política es ``π = softmax(θ)``. Un paso de REINFORCE se
da en dos tiempos, como en el algoritmo: **muestrear** (se elige una acción con
``π``, el verificador pone la recompensa, que aquí es el retorno de un episodio
de un paso) y **actualizar** (``θ ← θ − α ∇_θ[−log π(a)·(R − b)]``, calculado
con autograd). La lógica (``sample``, ``apply``, ``step``, ``reset``...) no
depende de la vista: los tests la manejan sin navegador.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure

from helpers.bandits import QUESTION, StrategyBandit, softmax
from helpers.formatting import number, numbers
from helpers.plotting import COLORS
from helpers.widgets.view import WidgetView, course_style, figure_output

# Los brazos del bandido de estrategias que usa el widget.
ARMS = (0, 2, 4)


@dataclass(frozen=True)
class Sample:
    """Una acción muestreada y lo que pasó.

    Attributes:
        action: índice de la acción (0, 1 o 2).
        reward: la recompensa del verificador (1 si el desarrollo llega a 408).
        text: el desarrollo escrito por la estrategia.
        probabilities: ``π`` en el momento de muestrear.
        ``baseline``: la línea base ``b`` de este paso (0 si no se usa; en la
            primera actualización, la propia ``reward``: ``R̄₁ = R₁``).
    """

    action: int
    reward: float
    text: str
    probabilities: np.ndarray
    baseline: float


class ReinforceStepper(WidgetView):
    """REINFORCE paso a paso sobre ``π = softmax(θ)`` con tres acciones.

    Args:
        seed: semilla del muestreo y de las recompensas.
        learning_rate: el paso ``α``.
        ``baseline``: restar la media de las recompensas anteriores (módulo 04).
            En la primera actualización no hay ninguna y se resta la propia
            recompensa (``R̄₁ = R₁``), como el algoritmo del cuaderno y el
            bandido de gradiente del módulo 01: ese primer paso no mueve nada.
    """

    def __init__(
        self, seed: int = 0, learning_rate: float = 0.5, baseline: bool = False
    ) -> None:
        self.bandit = StrategyBandit()
        self.seed = seed
        self._widget: widgets.VBox | None = None
        self.set_learning_rate(learning_rate)
        self.baseline = bool(baseline)
        self.reset()

    # --- la lógica ---------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """Los nombres de las tres acciones."""
        return [self.bandit.names[arm] for arm in ARMS]

    @property
    def q_star(self) -> np.ndarray:
        """La probabilidad de acierto de cada acción, ``(3,)``."""
        return self.bandit.q_star[list(ARMS)]

    @property
    def probabilities(self) -> np.ndarray:
        """La política actual ``π = softmax(θ)``, ``(3,)``."""
        return softmax(self.theta)

    @property
    def mean_reward(self) -> float:
        """La media de las recompensas de las actualizaciones hechas (0 si no hay)."""
        return float(np.mean(self.rewards)) if self.rewards else 0.0

    def baseline_for(self, reward: float) -> float:
        """La ``b`` que toca a una muestra de recompensa ``reward``.

        0 sin línea base; con ella, la media de las recompensas anteriores o,
        en la primera actualización, la propia ``reward`` (``R̄₁ = R₁``).
        """
        if not self.baseline:
            return 0.0
        return self.mean_reward if self.rewards else float(reward)

    def reset(self) -> None:
        """Vuelve a ``θ = 0`` (π uniforme) con la misma semilla."""
        self.rng = np.random.default_rng(self.seed)
        self.theta = np.zeros(len(ARMS))
        self.pending: Sample | None = None
        self.previous: np.ndarray | None = None
        self.history: list[np.ndarray] = [self.probabilities]
        self.rewards: list[float] = []
        self._changed()

    def set_learning_rate(self, learning_rate: float) -> None:
        """Cambia ``α`` (vale para las actualizaciones siguientes)."""
        if not learning_rate > 0:
            raise ValueError(f"α debe ser positivo, no {learning_rate}.")
        self.learning_rate = float(learning_rate)
        self._changed()

    def set_baseline(self, baseline: bool) -> None:
        """Activa o desactiva la línea base ``b`` = media de las recompensas."""
        self.baseline = bool(baseline)
        if self.pending is not None:
            self.pending = Sample(
                self.pending.action,
                self.pending.reward,
                self.pending.text,
                self.pending.probabilities,
                self.baseline_for(self.pending.reward),
            )
        self._changed()

    def sample(self) -> Sample:
        """Paso 1: muestrea una acción de ``π`` y el verificador la puntúa.

        Si ya había una muestra sin aplicar, se descarta (REINFORCE no la usa).
        """
        pi = self.probabilities
        action = int(self.rng.choice(len(ARMS), p=pi))
        reward, text = self.bandit.pull(ARMS[action], self.rng)
        b = self.baseline_for(reward)
        self.pending = Sample(action, float(reward), text, pi, b)
        self._changed()
        return self.pending

    def gradient(self) -> np.ndarray:
        """``(R − b)·∇_θ log π(a)`` de la muestra pendiente, con autograd."""
        if self.pending is None:
            raise ValueError("Primero muestrea una acción (paso 1).")
        theta = torch.tensor(self.theta, requires_grad=True)
        log_prob = torch.log_softmax(theta, dim=0)[self.pending.action]
        # La pérdida de REINFORCE de un episodio de un paso: −log π(a)·(R − b).
        loss = -log_prob * (self.pending.reward - self.pending.baseline)
        loss.backward()
        return -theta.grad.numpy()

    def apply(self) -> np.ndarray:
        """Paso 2: ``θ ← θ + α (R − b) ∇log π(a)``. Devuelve la ``π`` nueva."""
        step = self.learning_rate * self.gradient()
        self.previous = self.probabilities
        self.theta = self.theta + step
        self.rewards.append(self.pending.reward)  # type: ignore[union-attr]
        self.pending = None
        self.history.append(self.probabilities)
        self._changed()
        return self.probabilities

    def step(self, n: int = 1) -> np.ndarray:
        """``n`` pasos completos (muestrear y actualizar). Devuelve la ``π`` final."""
        view, self._widget = self._widget, None  # sin redibujar en cada paso
        try:
            for _ in range(n):
                self.sample()
                self.apply()
        finally:
            self._widget = view
        self._changed()
        return self.probabilities

    def explanation(self) -> str:
        """Lo que acaba de pasar, en una frase."""
        if self.pending is not None:
            s = self.pending
            weight = s.reward - s.baseline
            name = self.names[s.action]
            if weight > 0:
                effect = f"«{name}» subirá y las otras bajarán"
            elif weight < 0:
                effect = f"«{name}» bajará y las otras subirán"
            elif self.baseline and not self.rewards:
                effect = (
                    "nada se moverá: en la primera tirada la línea base es la "
                    "propia R (R̄₁ = R₁), así que el peso es 0"
                )
            else:
                effect = "nada se moverá: con peso 0 no hay gradiente"
            return (
                f"Muestreaste «{name}» (π = {number(s.probabilities[s.action])}) y el "
                f"verificador dio R = {number(s.reward, 0)}. Peso R − b = "
                f"{number(weight)}: al aplicar, {effect}."
            )
        if self.previous is not None:
            return (
                f"Actualizado: π pasó de {numbers(self.previous)} a "
                f"{numbers(self.probabilities)}. Muestrea otra vez."
            )
        return "π empieza uniforme. Pulsa «1 · Muestrear»."

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """Las barras de ``π`` (y la ``π`` de antes) y su evolución."""
        x = np.arange(len(ARMS))
        with course_style():
            fig = Figure(figsize=(8.4, 3.2))
            fig.subplots_adjust(
                left=0.08, right=0.98, bottom=0.2, top=0.88, wspace=0.28
            )
            ax_bar, ax_hist = fig.subplots(1, 2)
            pi = self.probabilities
            colors = [COLORS[i] for i in range(len(ARMS))]
            ax_bar.bar(x, pi, color=colors, alpha=0.85, label="π ahora")
            if self.previous is not None:
                ax_bar.bar(
                    x,
                    self.previous,
                    fill=False,
                    edgecolor=COLORS[7],
                    linestyle="--",
                    label="π antes",
                )
            for a, p in enumerate(pi):
                ax_bar.text(a, p + 0.03, number(p), ha="center", fontsize=9)
            if self.pending is not None:
                a = self.pending.action
                mark = "R = 1 ✔" if self.pending.reward else "R = 0 ✘"
                ax_bar.annotate(
                    mark,
                    (a, pi[a] + 0.13),
                    ha="center",
                    fontsize=9,
                    fontweight="bold",
                    color=COLORS[2] if self.pending.reward else COLORS[3],
                )
            ax_bar.set_xticks(x, self.names)
            ax_bar.set(title="La política π(a)", ylabel="probabilidad", ylim=(0, 1.15))
            ax_bar.legend(loc="upper right", fontsize=8)
            history = np.array(self.history)
            for a in range(len(ARMS)):
                ax_hist.plot(history[:, a], color=colors[a], label=self.names[a])
            ax_hist.set(
                title="π a lo largo de las actualizaciones",
                xlabel="actualización",
                ylabel="probabilidad",
                ylim=(0, 1),
                xlim=(0, max(10, len(history) - 1)),
            )
            ax_hist.legend(loc="upper left", fontsize=8)
        return fig

    def _figure_output(self) -> dict:
        return figure_output(self.figure(), "<figura de la política>", dpi=80)

    def _build_widget(self) -> widgets.VBox:
        self._sample_button = widgets.Button(description="1 · Muestrear", icon="random")
        self._apply_button = widgets.Button(description="2 · Actualizar θ")
        self._step_button = widgets.Button(description="Paso completo")
        self._ten_button = widgets.Button(description="10 pasos")
        self._reset_button = widgets.Button(description="Reiniciar", icon="refresh")
        self._sample_button.on_click(lambda _: self.sample())
        self._apply_button.on_click(lambda _: self.apply())
        self._step_button.on_click(lambda _: self.step())
        self._ten_button.on_click(lambda _: self.step(10))
        self._reset_button.on_click(lambda _: self.reset())
        style = {"description_width": "initial"}
        self._lr_slider = widgets.FloatSlider(
            self.learning_rate,
            min=0.05,
            max=3.0,
            step=0.05,
            description="tasa de aprendizaje α",
            continuous_update=False,
            style=style,
        )
        self._baseline_box = widgets.Checkbox(
            self.baseline, description="línea base b = media de R", style=style
        )
        self._lr_slider.observe(self._on_control, names="value")
        self._baseline_box.observe(self._on_control, names="value")
        self._info, self._plot = widgets.HTML(), widgets.Output()
        intro = widgets.HTML(
            f"<b>{QUESTION}</b> La política elige entre tres estrategias; el "
            "verificador da R = 1 si el desarrollo llega a 408."
        )
        buttons = [self._sample_button, self._apply_button, self._step_button]
        buttons += [self._ten_button, self._reset_button]
        controls = widgets.HBox([self._lr_slider, self._baseline_box])
        return widgets.VBox(
            [intro, widgets.HBox(buttons), controls, self._info, self._plot]
        )

    def _on_control(self, change: dict) -> None:
        """Un control cambió: avisa a la lógica, salvo si es el eco de ``_changed``."""
        owner, new = change["owner"], change["new"]
        if owner is self._lr_slider and new != self.learning_rate:
            self.set_learning_rate(new)
        elif owner is self._baseline_box and new != self.baseline:
            self.set_baseline(new)

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe, para que refleje el estado."""
        if self._widget is None:
            return
        self._lr_slider.max = max(3.0, self.learning_rate)
        self._lr_slider.value = self.learning_rate
        self._baseline_box.value = self.baseline
        self._apply_button.disabled = self.pending is None
        lines = [html.escape(self.explanation())]
        if self.pending is not None:
            s = self.pending
            grad = self.gradient()
            lines.append(
                f"Desarrollo: <code>{html.escape(s.text)}</code><br>"
                f"∇<sub>θ</sub> log π(a) = one_hot(a) − π = "
                f"{numbers(np.eye(len(ARMS))[s.action] - s.probabilities)} · "
                f"actualización α·(R − b)·∇log π = "
                f"{numbers(self.learning_rate * grad)}"
            )
        b = ""
        if self.baseline and self.pending is not None:
            pending_b = self.pending.baseline
            b = f" · b = {number(pending_b)}"
        elif self.baseline and self.rewards:
            b = f" · b = {number(self.mean_reward)}"
        elif self.baseline:
            b = " · b = la primera R (R̄₁ = R₁)"
        lines.append(
            f"<small>Actualizaciones: {len(self.rewards)} · θ = {numbers(self.theta)}"
            f"{b} · q* (oculto al algoritmo) = {numbers(self.q_star)}</small>"
        )
        self._info.value = "<br>".join(lines)
        self._plot.outputs = (self._figure_output(),)
