"""Módulo 10 · Un widget para ver la sobreoptimización de la recompensa aprendida.

- ``ProxyExplorer``: elige una ejecución de GRPO contra el modelo de
  recompensa (una β de la penalización KL, o «verdad», la que entrena con la
  utilidad verdadera: el techo) y una semilla, y mira la recompensa aprendida
  (el sustituto) y la utilidad verdadera frente a la KL a la referencia, como
  en Gao, Schulman y Hilton (2022). El máximo de la utilidad verdadera va
  marcado: a partir de ahí, lo que sube el sustituto ya no lo sube la
  anotadora.

Lee las ejecuciones guardadas de ``helpers.tinylm.preference_runs.load()``
(su forma, en ese módulo: ``data["seeds"][semilla]["grpo"][nombre]`` con
``"proxy"``, ``"true"`` y ``"kl"`` por paso). Las curvas se suavizan con
``preference_runs.smooth`` y el máximo sale de ``preference_runs.peak``, lo
mismo que usa el cuaderno. La lógica (``select``, ``next_run``,
``next_seed``, ``selected``, ``peak``, ``summary``, ``figure``) no depende de
la vista: las pruebas la manejan sin navegador.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from helpers.formatting import number
from helpers.plotting import COLORS
from helpers.tinylm.preference_runs import peak, smooth
from helpers.widgets.view import WidgetView, course_style, figure_output

#: El nombre de la ejecución que entrena con la utilidad verdadera.
TRUTH = "verdad"


def _label(name: str) -> str:
    """Cómo se nombra una ejecución en una frase («GRPO β = 0,05»)."""
    return "contra la utilidad verdadera (el techo)" if name == TRUTH else name


def _options(names: list[str]) -> list[tuple[str, str]]:
    """Las opciones del desplegable: las β tal cual y «verdad (el techo)»."""
    return [(f"{n} (el techo)" if n == TRUTH else n, n) for n in names]


class ProxyExplorer(WidgetView):
    """La recompensa aprendida y la utilidad verdadera de una ejecución de GRPO.

    Args:
        data: lo que devuelve ``preference_runs.load()`` (basta su parte
            ``"seeds"``: ``{semilla: {"grpo": {nombre: ejecución}}}``).
        run: la ejecución elegida al empezar (``"β = 0"``, ``"verdad"``...;
            por defecto, la primera).
        seed: la semilla elegida al empezar (por defecto, la primera).
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        run: str | None = None,
        seed: str | int | None = None,
    ) -> None:
        by_seed = data.get("seeds", data)
        self.runs: dict[str, dict[str, dict[str, Any]]] = {
            str(s): dict(results["grpo"]) for s, results in by_seed.items()
        }
        if not self.runs or not any(self.runs.values()):
            raise ValueError("No hay ejecuciones de GRPO que mostrar.")
        self._widget: widgets.VBox | None = None
        self.seed = self.seeds[0]
        self.run = self.names()[0]
        self.select(run or self.run, seed)

    # --- la lógica ---------------------------------------------------------

    @property
    def seeds(self) -> list[str]:
        """Las semillas guardadas, en el orden del archivo."""
        return list(self.runs)

    def names(self, seed: str | None = None) -> list[str]:
        """Las ejecuciones de ``seed`` (por defecto, la elegida): las β y «verdad»."""
        return list(self.runs[seed or self.seed])

    def select(self, run: str, seed: str | int | None = None) -> None:
        """Elige una ejecución y una semilla (sin semilla: la de ahora)."""
        seed = self.seed if seed is None else str(seed)
        if seed not in self.runs:
            raise ValueError(
                f"No hay ejecuciones de la semilla {seed}; hay: "
                f"{', '.join(self.seeds)}."
            )
        if run not in self.runs[seed]:
            raise ValueError(
                f"No hay ejecución «{run}»; hay: {', '.join(self.names(seed))}."
            )
        self.run, self.seed = run, seed
        self._changed()

    def next_run(self) -> None:
        """Pasa a la ejecución siguiente (la β siguiente), en círculo."""
        names = self.names()
        self.select(names[(names.index(self.run) + 1) % len(names)])

    def next_seed(self) -> None:
        """Pasa a la semilla siguiente, con la misma ejecución si la tiene."""
        seeds = self.seeds
        seed = seeds[(seeds.index(self.seed) + 1) % len(seeds)]
        run = self.run if self.run in self.runs[seed] else self.names(seed)[0]
        self.select(run, seed)

    @property
    def selected(self) -> dict[str, Any]:
        """La ejecución elegida: ``proxy``, ``true`` y ``kl`` por paso."""
        return self.runs[self.seed][self.run]

    def curves(self, run: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        """Las curvas suavizadas de ``run`` (por defecto, la elegida)."""
        run = self.selected if run is None else run
        return {key: smooth(run[key]) for key in ("proxy", "true", "kl")}

    def peak(self) -> dict[str, float]:
        """El máximo de la utilidad verdadera suavizada (``preference_runs.peak``)."""
        return peak(self.selected)

    def summary(self) -> str:
        """Una frase con el máximo de la utilidad verdadera y cómo acaba."""
        top = self.peak()
        steps = len(self.selected["true"])
        text = (
            f"GRPO {_label(self.run)}, semilla {self.seed}: la utilidad verdadera "
            f"(media móvil) llega a su máximo, {number(top['true_peak'], 3)}, en el "
            f"paso {top['step']} de {steps}, con una KL a la referencia de "
            f"{number(top['kl_at_peak'], 3)} por token. Al final vale "
            f"{number(top['true_final'], 3)}"
        )
        if self.run == TRUTH:
            return (
                text + f", con KL {number(top['kl_final'], 3)}: aquí la recompensa "
                "es la propia utilidad, y no hay sustituto que sobreoptimizar."
            )
        return (
            text + f", y la recompensa aprendida, {number(top['proxy_final'], 3)} "
            f"(en el máximo era {number(top['proxy_at_peak'], 3)}), con KL "
            f"{number(top['kl_final'], 3)}."
        )

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """Dos paneles frente a la KL: la recompensa aprendida y la utilidad
        verdadera. Las demás ejecuciones de la semilla, en gris (en el panel
        del sustituto, sin «verdad», cuya recompensa es la propia utilidad)."""
        with course_style():
            fig = Figure(figsize=(9.5, 3.6))
            fig.subplots_adjust(
                left=0.08, right=0.98, bottom=0.15, top=0.82, wspace=0.26
            )
            ax_proxy, ax_true = fig.subplots(1, 2, sharex=True)
            for name, run in self.runs[self.seed].items():
                if name == self.run:
                    continue
                other = self.curves(run)
                if name != TRUTH:  # su «recompensa» es la utilidad: otra escala
                    ax_proxy.plot(
                        other["kl"], other["proxy"], color=COLORS[7], alpha=0.3
                    )
                ax_true.plot(other["kl"], other["true"], color=COLORS[7], alpha=0.3)
            mine = self.curves()
            top = self.peak()
            color = COLORS[2] if self.run == TRUTH else COLORS[0]
            ax_proxy.plot(mine["kl"], mine["proxy"], color=color, lw=2)
            ax_true.plot(mine["kl"], mine["true"], color=color, lw=2)
            for ax in (ax_proxy, ax_true):
                ax.axvline(top["kl_at_peak"], color=COLORS[3], ls=":", lw=1.2)
            ax_true.plot(
                [top["kl_at_peak"]],
                [top["true_peak"]],
                "*",
                color=COLORS[3],
                markersize=13,
                label=f"máximo (paso {top['step']})",
            )
            ax_proxy.set(
                title=(
                    "Su recompensa: aquí, la propia utilidad"
                    if self.run == TRUTH
                    else "Recompensa aprendida (el sustituto)"
                ),
                xlabel="KL a la referencia (por token)",
                ylabel="recompensa media",
            )
            ax_true.set(
                title="Utilidad verdadera (la anotadora)",
                xlabel="KL a la referencia (por token)",
                ylabel="utilidad media",
            )
            ax_true.legend(loc="best")
            fig.suptitle(f"GRPO {_label(self.run)} · semilla {self.seed}")
        return fig

    def _build_widget(self) -> widgets.VBox:
        self._next_run_button = widgets.Button(description="siguiente β →")
        self._next_run_button.on_click(lambda _: self.next_run())
        self._next_seed_button = widgets.Button(description="siguiente semilla")
        self._next_seed_button.on_click(lambda _: self.next_seed())
        self._run_box = widgets.Dropdown(
            options=_options(self.names()),
            value=self.run,
            description="ejecución",
        )
        self._seed_box = widgets.Dropdown(
            options=self.seeds, value=self.seed, description="semilla"
        )
        self._run_box.observe(self._on_run, names="value")
        self._seed_box.observe(self._on_seed, names="value")
        self._info, self._plot = widgets.HTML(), widgets.Output()
        intro = widgets.HTML(
            "<b>¿Hasta dónde se puede optimizar un sustituto?</b> Cada ejecución "
            "es GRPO contra el modelo de recompensa con una β de la penalización "
            "KL (o contra la utilidad verdadera, el techo). La estrella marca el "
            "máximo de la utilidad verdadera; en gris, las demás ejecuciones de "
            "la semilla."
        )
        return widgets.VBox(
            [
                intro,
                widgets.HBox(
                    [
                        self._next_run_button,
                        self._next_seed_button,
                        self._run_box,
                        self._seed_box,
                    ]
                ),
                self._info,
                self._plot,
            ]
        )

    def _on_run(self, change: dict) -> None:
        if change["new"] is not None and change["new"] != self.run:
            self.select(change["new"])

    def _on_seed(self, change: dict) -> None:
        if change["new"] is not None and change["new"] != self.seed:
            run = self.run if self.run in self.runs[change["new"]] else None
            self.select(run or self.names(change["new"])[0], change["new"])

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe, para que refleje el estado."""
        if self._widget is None:
            return
        names = self.names()
        if [value for _, value in self._run_box.options] != names:
            self._run_box.options = _options(names)
        self._run_box.value = self.run
        self._seed_box.value = self.seed
        self._info.value = html.escape(self.summary())
        self._plot.outputs = (
            figure_output(
                self.figure(),
                "<recompensa aprendida y utilidad verdadera frente a la KL>",
                dpi=80,
            ),
        )
