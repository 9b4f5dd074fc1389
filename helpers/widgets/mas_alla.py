"""Módulo 08 · Un widget para comparar GRPO, RLOO y PPO en el modelo diminuto.

- ``MethodCurves``: elige un método (una ejecución de
  ``helpers.tinylm.compare.RUNS``) y una semilla y mira su precisión en
  evaluación y su entropía frente a las respuestas muestreadas, en color, sobre
  las demás ejecuciones (en gris).

Lee las curvas precalculadas de ``helpers.tinylm.compare.load_curves()`` (su
forma: ``{"config": {...}, "curves": {método: {semilla: {"samples": [...],
"train_seconds": [...], "heldout_accuracy": [...], "entropy": [...]}}}}``).
La lógica (``select``, ``selected``, ``summary``, ``figure``) no depende de la
vista: las pruebas la manejan sin navegador.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from helpers.formatting import number, percent
from helpers.plotting import COLORS
from helpers.widgets.view import WidgetView, course_style, figure_output

#: Los nombres de los métodos, como se escriben en el cuaderno.
LABELS = {
    "grpo": "GRPO con ÷σ",
    "grpo_no_std": "GRPO sin ÷σ",
    "rloo": "RLOO",
    "ppo": "PPO con crítico",
}


class MethodCurves(WidgetView):
    """Las curvas de un método y una semilla, sobre las de todos los demás.

    Args:
        curves: lo que devuelve ``load_curves()`` (o solo su parte ``"curves"``).
        method: el método elegido al empezar (por defecto, el primero).
        seed: la semilla elegida al empezar (por defecto, la primera).
    """

    def __init__(
        self,
        curves: Mapping[str, Any],
        method: str | None = None,
        seed: str | int | None = None,
    ) -> None:
        runs = curves.get("curves", curves)
        if not runs:
            raise ValueError("No hay curvas que mostrar.")
        self.runs: dict[str, dict[str, dict[str, list[float]]]] = {
            m: {str(s): dict(run) for s, run in by_seed.items()}
            for m, by_seed in runs.items()
        }
        self._widget: widgets.VBox | None = None
        first = next(iter(self.runs))
        self.method = first
        self.seed = next(iter(self.runs[first]))
        self.select(method or first, seed)

    # --- la lógica ---------------------------------------------------------

    @property
    def methods(self) -> list[str]:
        """Los métodos que hay, en el orden del archivo."""
        return list(self.runs)

    def seeds(self, method: str | None = None) -> list[str]:
        """Las semillas de ``method`` (por defecto, el elegido)."""
        return list(self.runs[method or self.method])

    def select(self, method: str, seed: str | int | None = None) -> None:
        """Elige un método y una semilla (sin semilla: la primera del método)."""
        if method not in self.runs:
            raise ValueError(
                f"No hay curvas de «{method}»; hay: {', '.join(self.methods)}."
            )
        seed = self.seeds(method)[0] if seed is None else str(seed)
        if seed not in self.runs[method]:
            seed = self.seeds(method)[0]
        self.method, self.seed = method, seed
        self._changed()

    def next_seed(self) -> None:
        """Pasa a la semilla siguiente del mismo método (y vuelve a la primera)."""
        seeds = self.seeds()
        self.select(self.method, seeds[(seeds.index(self.seed) + 1) % len(seeds)])

    @property
    def selected(self) -> dict[str, list[float]]:
        """La ejecución elegida: ``samples``, ``heldout_accuracy``, ``entropy``..."""
        return self.runs[self.method][self.seed]

    def others(self) -> list[tuple[str, str, dict[str, list[float]]]]:
        """Las demás ejecuciones: ``(método, semilla, ejecución)``."""
        return [
            (m, s, run)
            for m, by_seed in self.runs.items()
            for s, run in by_seed.items()
            if (m, s) != (self.method, self.seed)
        ]

    def summary(self) -> str:
        """Una frase con lo que la ejecución elegida consigue."""
        run = self.selected
        acc = run["heldout_accuracy"]
        ent = run["entropy"]
        label = LABELS.get(self.method, self.method)
        text = (
            f"{label}, semilla {self.seed}: precisión {percent(acc[0])} → "
            f"{percent(acc[-1])} con {number(run['samples'][-1], 0)} respuestas "
            f"muestreadas; entropía {number(ent[0], 3)} → {number(ent[-1], 3)} "
            "nats por token"
        )
        seconds = run.get("train_seconds")
        if seconds:
            text += f"; {number(seconds[-1], 1)} s de entrenamiento"
        return text + "."

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """Precisión y entropía frente a respuestas muestreadas."""
        with course_style():
            fig = Figure(figsize=(9.5, 3.4))
            fig.subplots_adjust(
                left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.28
            )
            ax_acc, ax_ent = fig.subplots(1, 2)
            for _, _, run in self.others():
                ax_acc.plot(
                    run["samples"],
                    run["heldout_accuracy"],
                    color=COLORS[7],
                    alpha=0.35,
                    lw=1,
                )
                ax_ent.plot(
                    run["samples"], run["entropy"], color=COLORS[7], alpha=0.35, lw=1
                )
            color = COLORS[self.methods.index(self.method) % len(COLORS)]
            run = self.selected
            label = f"{LABELS.get(self.method, self.method)} · semilla {self.seed}"
            ax_acc.plot(
                run["samples"], run["heldout_accuracy"], "o-", color=color, label=label
            )
            ax_ent.plot(run["samples"], run["entropy"], "o-", color=color, label=label)
            ax_acc.set(
                title="Precisión en evaluación (T = 1)",
                xlabel="respuestas muestreadas",
                ylabel="precisión",
            )
            ax_ent.set(
                title="Entropía de la política",
                xlabel="respuestas muestreadas",
                ylabel="entropía por token (nats)",
            )
            ax_acc.legend(loc="lower right")
        return fig

    def _build_widget(self) -> widgets.VBox:
        self._method_box = widgets.Dropdown(
            options=[(LABELS.get(m, m), m) for m in self.methods],
            value=self.method,
            description="método",
        )
        self._seed_box = widgets.Dropdown(
            options=self.seeds(), value=self.seed, description="semilla"
        )
        self._method_box.observe(
            lambda change: self.select(change["new"], self._seed_box.value),
            names="value",
        )
        self._seed_box.observe(self._on_seed, names="value")
        self._next_button = widgets.Button(description="siguiente semilla")
        self._next_button.on_click(lambda _: self.next_seed())
        self._info, self._plot = widgets.HTML(), widgets.Output()
        intro = widgets.HTML(
            "<b>GRPO, RLOO y PPO cara a cara.</b> Elige un método y una semilla: "
            "sus curvas salen en color y las de las demás ejecuciones, en gris."
        )
        return widgets.VBox(
            [
                intro,
                widgets.HBox([self._method_box, self._seed_box, self._next_button]),
                self._info,
                self._plot,
            ]
        )

    def _on_seed(self, change: dict) -> None:
        if change["new"] is not None and change["new"] != self.seed:
            self.select(self.method, change["new"])

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe, para que refleje el estado."""
        if self._widget is None:
            return
        self._method_box.value = self.method
        seeds = self.seeds()
        if list(self._seed_box.options) != seeds:
            self._seed_box.options = seeds
        self._seed_box.value = self.seed
        self._info.value = html.escape(self.summary())
        self._plot.outputs = (
            figure_output(self.figure(), "<curvas de precisión y entropía>", dpi=80),
        )


def final_accuracies(curves: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """La precisión final de cada semilla, por método."""
    runs = curves.get("curves", curves)
    return {
        m: np.array([run["heldout_accuracy"][-1] for run in by_seed.values()])
        for m, by_seed in runs.items()
    }
