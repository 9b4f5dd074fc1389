"""Módulo 02 · Q-learning paso a paso en el mundo de rejilla.

Cada «Paso» mueve al agente una casilla con ε-greedy y aplica una
actualización de Q-learning; la figura muestra la tabla ``Q`` (un triángulo
por acción) y, al lado, ``V(s) = max_a Q(s, a)`` con la política voraz. La
lógica (``step``, ``run_episode``, ``reset``) no depende de la vista: los tests
la manejan sin navegador y los botones solo llaman a esos métodos.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from helpers.bandits import epsilon_greedy
from helpers.formatting import number
from helpers.gridworld import (
    ACTIONS,
    GridWorld,
    plot_q_table,
    plot_values_and_policy,
    q_learning_update,
)
from helpers.widgets.view import WidgetView, course_style, figure_output


@dataclass(frozen=True)
class Transition:
    """Lo que pasó en un paso: la transición y la actualización de ``Q(s, a)``."""

    state: int
    action: int
    reward: float
    next_state: int
    terminated: bool
    truncated: bool
    explored: bool
    target: float
    q_before: float
    q_after: float


class QLearningExplorer(WidgetView):
    """Q-learning tabular que avanza de paso en paso.

    Args:
        seed: semilla de las decisiones ε-greedy.
        alpha: tasa de aprendizaje; gamma: descuento; epsilon: probabilidad de
            explorar.
        env: el mundo; por defecto el tablero de ``helpers.gridworld``.
    """

    def __init__(
        self,
        seed: int = 0,
        alpha: float = 0.5,
        gamma: float = 0.9,
        epsilon: float = 0.2,
        env: GridWorld | None = None,
    ) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"ε debe estar en [0, 1], no {epsilon}.")
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"α debe estar en (0, 1], no {alpha}.")
        self.env = env if env is not None else GridWorld()
        self.seed, self.alpha, self.gamma, self.epsilon = seed, alpha, gamma, epsilon
        self._widget: widgets.VBox | None = None
        self.reset()

    # --- la lógica ---------------------------------------------------------

    def reset(self) -> None:
        """Tabla a cero, agente en la salida, misma semilla."""
        self.rng = np.random.default_rng(self.seed)
        self.q_table = np.zeros((self.env.n_states, self.env.n_actions))
        self.state, _ = self.env.reset()
        self.total_steps = 0
        self.episode_returns: list[float] = []
        self.episode_lengths: list[int] = []
        self._return = 0.0
        self.last: Transition | None = None
        self._changed()

    @property
    def episode(self) -> int:
        """El número del episodio en curso (empieza en 1)."""
        return len(self.episode_returns) + 1

    def step(self) -> Transition:
        """Un paso de ε-greedy y una actualización de Q-learning."""
        state = self.state
        explored = bool(self.rng.random() < self.epsilon)
        if explored:
            action = int(self.rng.integers(self.env.n_actions))
        else:
            action = epsilon_greedy(self.q_table[state], 0.0, self.rng)
        next_state, reward, terminated, truncated, _ = self.env.step(action)
        q_before = float(self.q_table[state, action])
        future = 0.0 if terminated else self.gamma * self.q_table[next_state].max()
        self.q_table = q_learning_update(
            self.q_table,
            state,
            action,
            reward,
            next_state,
            terminated,
            self.alpha,
            self.gamma,
        )
        self.last = Transition(
            state,
            action,
            float(reward),
            next_state,
            bool(terminated),
            bool(truncated),
            explored,
            float(reward + future),
            q_before,
            float(self.q_table[state, action]),
        )
        self.total_steps += 1
        self._return += reward
        if terminated or truncated:
            self.episode_returns.append(self._return)
            self.episode_lengths.append(self.env.steps)
            self._return = 0.0
            self.state, _ = self.env.reset()
        else:
            self.state = next_state
        self._changed()
        return self.last

    def run_episode(self) -> int:
        """Da pasos hasta terminar el episodio en curso; devuelve cuántos."""
        episode, steps = self.episode, 0
        while self.episode == episode:
            self._step_quietly()
            steps += 1
        self._changed()
        return steps

    def _step_quietly(self) -> None:
        widget, self._widget = self._widget, None
        try:
            self.step()
        finally:
            self._widget = widget

    def describe(self) -> str:
        """El último paso en palabras, con la actualización de ``Q(s, a)``."""
        if self.last is None:
            return "Pulsa «Paso»: el agente sale de S con la tabla Q a cero."
        t, env = self.last, self.env
        how = "explora (al azar)" if t.explored else "explota (acción voraz)"
        future = (
            "0 (s' es terminal: sin futuro)"
            if t.terminated
            else f"{number(self.gamma)} · max Q(s', ·)"
        )
        end = ""
        if t.terminated:
            end = " ¡Fin del episodio!"
        elif t.truncated:
            end = " Se acabó el tiempo (truncated): el agente vuelve a S."
        return (
            f"Paso {self.total_steps}: en {env.position(t.state)} {how}: "
            f"{ACTIONS[t.action]} → {env.position(t.next_state)}, r = "
            f"{number(t.reward)}. Objetivo y = r + {future} = {number(t.target)}. "
            f"Q(s, {ACTIONS[t.action]}): {number(t.q_before)} → "
            f"{number(t.q_after)}.{end}"
        )

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """La tabla ``Q`` y los valores con la política voraz, lado a lado."""
        with course_style():
            fig = Figure(figsize=(9.0, 3.6))
            fig.subplots_adjust(left=0.06, right=0.9, bottom=0.14, top=0.9, wspace=0.3)
            ax_q, ax_v = fig.subplots(1, 2)
            plot_q_table(self.env, self.q_table, ax_q)
            image = plot_values_and_policy(
                self.env, self.q_table, ax_v, agent=self.state, title="V(s) y política"
            )
            cax = fig.add_axes((0.92, 0.18, 0.015, 0.66))
            fig.colorbar(image, cax=cax, label="valor")
        return fig

    def _figure_output(self) -> dict:
        return figure_output(self.figure(), "<tabla Q y política>", dpi=100)

    def _build_widget(self) -> widgets.VBox:
        self._step_button = widgets.Button(description="Paso", icon="step-forward")
        self._step_button.on_click(lambda _: self.step())
        self._episode_button = widgets.Button(description="Episodio entero")
        self._episode_button.on_click(lambda _: self.run_episode())
        self._play = widgets.Play(
            value=0, min=0, max=100_000, interval=400, description="Reproducir"
        )
        self._play.observe(self._on_play, names="value")
        self._reset_button = widgets.Button(description="Reiniciar", icon="refresh")
        self._reset_button.on_click(lambda _: self.reset())
        self._text, self._plot = widgets.HTML(), widgets.Output()
        controls = [self._step_button, self._episode_button, self._play]
        controls.append(self._reset_button)
        return widgets.VBox([widgets.HBox(controls), self._text, self._plot])

    def _on_play(self, change: dict) -> None:
        """El reproductor avanza su contador: un paso por tic (no al rebobinar)."""
        if change["new"] > change["old"]:
            self.step()

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe."""
        if self._widget is None:
            return
        lengths = self.episode_lengths[-8:]
        recent = ", ".join(str(n) for n in lengths) if lengths else "ninguno todavía"
        self._text.value = (
            f"<b>Episodio {self.episode}</b> · paso total {self.total_steps} · "
            f"ε = {number(self.epsilon)}, α = {number(self.alpha)}, "
            f"γ = {number(self.gamma)}<br>{html.escape(self.describe())}<br>"
            f"Pasos de los últimos episodios: {recent}"
        )
        self._plot.outputs = (self._figure_output(),)
