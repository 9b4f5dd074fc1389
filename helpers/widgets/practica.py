"""Módulo 11 · Un widget para leer los registros de una ejecución de GRPOTrainer.

- ``LogExplorer``: elige una de las ejecuciones guardadas (por su nombre
  neutro, «A», «B»...) y qué claves de las que registra TRL mirar (la
  recompensa y su desviación, ``frac_reward_zero_std``, las longitudes y las
  respuestas cortadas, los recortes, la entropía, la KL, la norma del
  gradiente, la pérdida y la precisión verdadera); si quieres, con la
  ejecución sana encima para comparar. Debajo, qué significa cada clave
  elegida con los nombres del curso, y su primer y último valor.

Las ejecuciones son las de ``helpers.practica.runs.load_runs()`` y las curvas
las dibuja ``runs.plot_run``, lo mismo que usa el cuaderno. Lo que significa
cada clave se lee de ``runs`` (su tabla): no se repite aquí. El widget nunca
enseña el fallo de una ejecución ni su gemela arreglada: el diagnóstico es el
ejercicio. La lógica (``select``, ``next_run``, ``set_keys``, ``toggle_key``,
``set_compare``, ``reading``, ``summary``, ``figure``) no depende de la vista:
las pruebas la manejan sin navegador.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping

import ipywidgets as widgets
from matplotlib.figure import Figure

from helpers.formatting import significant
from helpers.plotting import COLORS
from helpers.practica import runs as practica_runs
from helpers.practica.runs import Run
from helpers.widgets.view import WidgetView, course_style, figure_output

#: Las claves de TRL que se pueden mirar, por grupos (el orden de las gráficas).
KEY_GROUPS: dict[str, tuple[str, ...]] = {
    "Recompensa": (
        "reward",
        "reward_std",
        "rewards/accuracy/mean",
        "frac_reward_zero_std",
    ),
    "Longitudes": (
        "completions/mean_length",
        "completions/mean_terminated_length",
        "completions/clipped_ratio",
    ),
    "Política": (
        "clip_ratio/region_mean",
        "clip_ratio/low_mean",
        "clip_ratio/high_mean",
        "entropy",
        "kl",
    ),
    "Optimización": ("grad_norm", "loss"),
}

#: Todas las claves que se pueden mirar, en el orden de las gráficas.
KEYS: tuple[str, ...] = tuple(k for group in KEY_GROUPS.values() for k in group)

#: Las claves marcadas al empezar.
DEFAULT_KEYS: tuple[str, ...] = (
    "reward",
    "rewards/accuracy/mean",
    "frac_reward_zero_std",
)


def key_meanings() -> dict[str, str]:
    """Clave de TRL → qué es, con los nombres del curso (texto de una línea):
    ``helpers.practica.runs.MEANINGS``, la única fuente."""
    return dict(practica_runs.MEANINGS)


def meaning_of(key: str, meanings: Mapping[str, str] | None = None) -> str:
    """Lo que significa ``key``; las claves con ``<f>`` valen para cualquier
    función (``rewards/<f>/mean`` sirve para ``rewards/accuracy/mean``)."""
    meanings = key_meanings() if meanings is None else meanings
    if key in meanings:
        return meanings[key]
    for pattern, text in meanings.items():
        parts = re.split(r"<[^>]*>", pattern)
        if len(parts) > 1 and re.fullmatch("[^/]+".join(map(re.escape, parts)), key):
            return text
    raise KeyError(f"No sé qué significa la clave «{key}» de TRL.")


def _as_html(text: str) -> str:
    """El texto de la tabla en HTML: ``código`` y **negrita**."""
    text = html.escape(text)
    text = re.sub(r"``([^`]+)``", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)


class LogExplorer(WidgetView):
    """Las curvas que registra TRL de una ejecución guardada, clave a clave.

    Args:
        runs: lo que devuelve ``helpers.practica.runs.load_runs()`` (id
            neutro → ``Run``).
        run_id: la ejecución elegida al empezar (por defecto, la primera).
        keys: las claves marcadas al empezar (de ``KEYS``).
        healthy_id: el id de la ejecución sana, la que se puede poner encima
            (por defecto, ``runs.healthy_run_id()``).
        compare: empezar con la sana encima.
    """

    def __init__(
        self,
        runs: Mapping[str, Run],
        run_id: str | None = None,
        keys: Iterable[str] = DEFAULT_KEYS,
        healthy_id: str | None = None,
        compare: bool = False,
    ) -> None:
        if not runs:
            raise ValueError("No hay ejecuciones que mostrar.")
        self.runs: dict[str, Run] = dict(sorted(runs.items()))
        self.healthy_id = (
            practica_runs.healthy_run_id() if healthy_id is None else healthy_id
        )
        if self.healthy_id not in self.runs:
            raise ValueError(
                f"La ejecución sana «{self.healthy_id}» no está entre las "
                f"ejecuciones: {', '.join(self.runs)}."
            )
        self.meanings = key_meanings()
        self._widget: widgets.VBox | None = None
        self.run_id = next(iter(self.runs))
        self.keys: tuple[str, ...] = ()
        self.compare = bool(compare)
        self.set_keys(keys)
        self.select(self.run_id if run_id is None else run_id)

    # --- la lógica ---------------------------------------------------------

    @property
    def ids(self) -> list[str]:
        """Los ids neutros de las ejecuciones, en orden."""
        return list(self.runs)

    @property
    def run(self) -> Run:
        """La ejecución elegida."""
        return self.runs[self.run_id]

    def select(self, run_id: str) -> None:
        """Elige la ejecución ``run_id`` («A», «B»...)."""
        if run_id not in self.runs:
            raise ValueError(
                f"No hay ninguna ejecución «{run_id}»; hay: {', '.join(self.ids)}."
            )
        self.run_id = run_id
        self._changed()

    def next_run(self) -> None:
        """Pasa a la ejecución siguiente, en círculo."""
        ids = self.ids
        self.select(ids[(ids.index(self.run_id) + 1) % len(ids)])

    def set_keys(self, keys: Iterable[str]) -> None:
        """Elige qué claves mirar (se dibujan en el orden de ``KEYS``)."""
        wanted = set(keys)
        unknown = sorted(wanted - set(KEYS))
        if unknown:
            raise ValueError(
                f"No conozco la clave {', '.join(repr(k) for k in unknown)}; "
                f"se pueden mirar: {', '.join(KEYS)}."
            )
        self.keys = tuple(k for k in KEYS if k in wanted)
        self._changed()

    def toggle_key(self, key: str, on: bool) -> None:
        """Marca (``on=True``) o desmarca una clave."""
        self.set_keys(set(self.keys) | {key} if on else set(self.keys) - {key})

    def set_compare(self, on: bool) -> None:
        """Pone (o quita) la ejecución sana encima de la elegida."""
        self.compare = bool(on)
        self._changed()

    @property
    def overlaid(self) -> bool:
        """Si la sana va encima: pedido, y la elegida no es la sana."""
        return self.compare and self.run_id != self.healthy_id

    def shown_keys(self) -> list[str]:
        """Las claves marcadas que la ejecución elegida tiene."""
        return [k for k in self.keys if k in self.run.logs]

    def summary(self) -> str:
        """Una frase con lo que se ve."""
        text = f"Ejecución {self.run_id}, {len(self.run.steps)} pasos"
        if self.run_id == self.healthy_id:
            text += " (es la sana)"
        elif self.overlaid:
            text += f", con la sana (ejecución {self.healthy_id}) encima, en gris"
        shown = self.shown_keys()
        if not shown:
            return text + ". Marca al menos una clave para ver sus curvas."
        return text + f": {len(shown)} clave{'s' if len(shown) > 1 else ''}."

    def _ends(self, run: Run, key: str) -> str:
        values = run.logs[key]
        return (
            f"{significant(values[0], 3)} en el paso {run.steps[0]} y "
            f"{significant(values[-1], 3)} en el {run.steps[-1]}"
        )

    def reading(self) -> list[tuple[str, str, str]]:
        """Por cada clave que se ve: (clave, qué es, sus valores al principio y
        al final, de la elegida y, si va encima, de la sana)."""
        out = []
        healthy = self.runs[self.healthy_id]
        for key in self.shown_keys():
            values = f"Ejecución {self.run_id}: {self._ends(self.run, key)}"
            if self.overlaid and key in healthy.logs:
                values += f"; la sana: {self._ends(healthy, key)}"
            out.append((key, meaning_of(key, self.meanings), values + "."))
        return out

    def reading_html(self) -> str:
        """``reading()`` como una lista HTML."""
        items = [
            f"<li><b><code>{html.escape(key)}</code></b>: {_as_html(meaning)}."
            f"<br><i>{html.escape(values)}</i></li>"
            for key, meaning, values in self.reading()
        ]
        return "<ul>" + "".join(items) + "</ul>" if items else ""

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """Una gráfica por clave, dibujada por ``runs.plot_run``; con la sana
        encima, su curva en gris discontinuo bajo la de la elegida."""
        shown = self.shown_keys()
        if not shown:
            raise ValueError("Marca al menos una clave para ver sus curvas.")
        cols = min(len(shown), 3)
        rows = -(-len(shown) // cols)
        with course_style():
            fig = Figure(figsize=(max(4.2 * cols, 5.0), 2.6 * rows + 0.5))
            axes = list(fig.subplots(rows, cols, squeeze=False).flat)
            for extra in axes[len(shown) :]:
                extra.set_visible(False)
            axes = axes[: len(shown)]
            title = f"Ejecución {self.run_id}"
            if self.overlaid:
                healthy = self.runs[self.healthy_id]
                practica_runs.plot_run(healthy, shown, ax=axes)
                for axis in axes:
                    axis.lines[-1].set(
                        color=COLORS[7],
                        alpha=0.45,
                        linestyle="--",
                        label=f"sana (ejecución {self.healthy_id})",
                    )
                title += f" frente a la sana ({self.healthy_id})"
            practica_runs.plot_run(self.run, shown, ax=axes, title=title)
            if self.overlaid:
                axes[0].legend(fontsize=8)
        return fig

    def _build_widget(self) -> widgets.VBox:
        self._next_button = widgets.Button(description="siguiente ejecución →")
        self._next_button.on_click(lambda _: self.next_run())
        self._run_box = widgets.Dropdown(
            options=self.ids, value=self.run_id, description="ejecución"
        )
        self._run_box.observe(self._on_run, names="value")
        self._compare_box = widgets.Checkbox(
            value=self.compare,
            description=f"la sana (ejecución {self.healthy_id}) encima",
            indent=False,
            layout=widgets.Layout(width="auto"),
        )
        self._compare_box.observe(
            lambda change: self.set_compare(change["new"]), names="value"
        )
        self._key_boxes: dict[str, widgets.Checkbox] = {}
        columns = []
        for group, keys in KEY_GROUPS.items():
            boxes = []
            for key in keys:
                box = widgets.Checkbox(
                    value=key in self.keys,
                    description=key,
                    indent=False,
                    layout=widgets.Layout(width="auto"),
                )
                box.observe(self._on_key(key), names="value")
                self._key_boxes[key] = box
                boxes.append(box)
            columns.append(
                widgets.VBox(
                    [widgets.HTML(f"<b>{group}</b>"), *boxes],
                    layout=widgets.Layout(margin="0 24px 0 0"),
                )
            )
        intro = widgets.HTML(
            "<b>Los registros de una ejecución de GRPOTrainer.</b> Elige una "
            "ejecución y las claves que registra TRL; debajo de las curvas, qué "
            "significa cada una. El fallo de cada ejecución no se dice: "
            "diagnosticarlo es el ejercicio."
        )
        self._info, self._reading = widgets.HTML(), widgets.HTML()
        self._plot = widgets.Output()
        return widgets.VBox(
            [
                intro,
                widgets.HBox([self._next_button, self._run_box, self._compare_box]),
                widgets.HBox(columns),
                self._info,
                self._plot,
                self._reading,
            ]
        )

    def _on_run(self, change: dict) -> None:
        if change["new"] is not None and change["new"] != self.run_id:
            self.select(change["new"])

    def _on_key(self, key: str):  # noqa: ANN202
        def observe(change: dict) -> None:
            if change["new"] != (key in self.keys):
                self.toggle_key(key, change["new"])

        return observe

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe, para que refleje el estado."""
        if self._widget is None:
            return
        self._run_box.value = self.run_id
        self._compare_box.value = self.compare
        for key, box in self._key_boxes.items():
            box.value = key in self.keys
        self._info.value = html.escape(self.summary())
        self._reading.value = self.reading_html()
        if self.shown_keys():
            self._plot.outputs = (
                figure_output(
                    self.figure(),
                    f"<curvas de la ejecución {self.run_id}: "
                    f"{', '.join(self.shown_keys())}>",
                    dpi=80,
                ),
            )
        else:
            self._plot.outputs = ()
