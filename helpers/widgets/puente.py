"""Módulo 09 · Un widget para ver el desplazamiento entre logits y tokens.

- ``ShiftExplorer``: una respuesta del modelo, token a token. Para cada token
  de la respuesta dice en qué fila de logits se lee su log-probabilidad (la de
  la posición anterior), qué había visto el modelo hasta ahí y cómo repartía
  la probabilidad entre los 15 caracteres. Un botón cambia a la lectura sin
  desplazamiento (el error común 1) para ver qué sale.

La lógica (``move``, ``set_shifted``, ``row``, ``token``, ``log_prob``,
``summary``, ``figure``) no depende de la vista: las pruebas la manejan sin
navegador.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from helpers.formatting import number, percent
from helpers.plotting import COLORS
from helpers.widgets.view import WidgetView, course_style, figure_output


def _log_softmax(row: np.ndarray) -> np.ndarray:
    shifted = row - row.max()
    return shifted - np.log(np.exp(shifted).sum())


class ShiftExplorer(WidgetView):
    """Una secuencia (enunciado + respuesta) y sus logits, token a token.

    Args:
        logits: ``(N, V)``, los logits del modelo sobre ``input_ids``.
        input_ids: ``(N,)``, los ids del enunciado y la respuesta.
        prompt_len: P, la longitud del enunciado.
        length: cuántos tokens de la respuesta son de verdad (sin relleno).
        alphabet: el carácter de cada id (``tokenizer.itos``).
    """

    def __init__(
        self,
        logits: Any,
        input_ids: Any,
        prompt_len: int,
        length: int,
        alphabet: Sequence[str],
    ) -> None:
        self.logits = np.asarray(
            logits.detach() if hasattr(logits, "detach") else logits, dtype=float
        )
        self.ids = [int(i) for i in np.asarray(input_ids).tolist()]
        self.prompt_len = int(prompt_len)
        self.length = int(length)
        self.alphabet = list(alphabet)
        if not 1 <= self.length <= len(self.ids) - self.prompt_len:
            raise ValueError(
                f"length debe estar entre 1 y {len(self.ids) - prompt_len}."
            )
        self.position = 0  # j: el token j de la respuesta (posición P + j)
        self.shifted = True  # False: la lectura sin desplazamiento (el error)
        self._widget = None

    # --- la lógica ---------------------------------------------------------
    def move(self, delta: int) -> None:
        """Avanza (o retrocede) ``delta`` tokens por la respuesta, en círculo."""
        self.position = (self.position + delta) % self.length
        self._changed()

    def set_shifted(self, shifted: bool) -> None:
        """``True``: leer en los logits de la posición anterior (bien)."""
        self.shifted = bool(shifted)
        self._changed()

    @property
    def target(self) -> int:
        """La posición del token que se puntúa: P + j."""
        return self.prompt_len + self.position

    def row(self) -> int:
        """La fila de logits que se lee: P + j − 1 (o P + j, sin desplazamiento)."""
        return self.target - 1 if self.shifted else self.target

    def token(self) -> str:
        """El carácter que se puntúa."""
        return self.alphabet[self.ids[self.target]]

    def context(self) -> str:
        """Lo que el modelo había visto al producir la fila leída."""
        return "".join(self.alphabet[i] for i in self.ids[: self.row() + 1])

    def log_probs(self) -> np.ndarray:
        """El log-softmax de la fila leída: un valor por carácter."""
        return _log_softmax(self.logits[self.row()])

    def log_prob(self) -> float:
        """La log-probabilidad que se le asigna al token puntuado."""
        return float(self.log_probs()[self.ids[self.target]])

    def summary(self) -> str:
        """Una frase con la lectura elegida."""
        favourite = self.alphabet[int(np.argmax(self.log_probs()))]
        how = (
            "la posición anterior"
            if self.shifted
            else "la misma posición (sin desplazamiento: el error)"
        )
        return (
            f"Token {self.position + 1} de {self.length} de la respuesta: "
            f"«{self.token()}», en la posición {self.target}. Se lee en los logits "
            f"de {how}, la {self.row()}, que el modelo calculó tras ver "
            f"«{self.context()}». Su favorito ahí: «{favourite}». "
            f"log π(«{self.token()}») = {number(self.log_prob(), 3)} "
            f"(probabilidad {percent(np.exp(self.log_prob()))})."
        )

    # --- la vista ----------------------------------------------------------
    def figure(self) -> Figure:
        """La probabilidad de cada carácter en la fila leída."""
        with course_style():
            fig = Figure(figsize=(7.5, 2.8))
            fig.subplots_adjust(left=0.1, right=0.98, bottom=0.18, top=0.86)
            ax = fig.subplots()
            probs = np.exp(self.log_probs())
            colors = [COLORS[7]] * len(probs)
            colors[self.ids[self.target]] = COLORS[0] if self.shifted else COLORS[3]
            ax.bar(range(len(probs)), probs, color=colors)
            ax.set_xticks(range(len(probs)), self.alphabet)
            ax.set_ylim(0, 1)
            ax.set(
                title=f"Fila {self.row()} de los logits: ¿qué carácter viene?",
                xlabel="carácter (en color, el que se puntúa)",
                ylabel="probabilidad",
            )
        return fig

    def _build_widget(self) -> widgets.VBox:
        back = widgets.Button(description="← anterior")
        forward = widgets.Button(description="siguiente →")
        back.on_click(lambda _: self.move(-1))
        forward.on_click(lambda _: self.move(1))
        self._toggle = widgets.ToggleButton(
            value=not self.shifted, description="sin desplazamiento (el error)"
        )
        self._toggle.observe(
            lambda change: self.set_shifted(not change["new"]), names="value"
        )
        self._sequence = widgets.HTML()
        self._info = widgets.HTML()
        self._plot = widgets.Output()
        return widgets.VBox(
            [
                widgets.HBox([back, forward, self._toggle]),
                self._sequence,
                self._info,
                self._plot,
            ]
        )

    def _sequence_html(self) -> str:
        cells = []
        for position, token_id in enumerate(self.ids[: self.prompt_len + self.length]):
            char = html.escape(self.alphabet[token_id])
            style = "padding:1px 3px;font-family:monospace;"
            if position == self.target:
                style += "background:#cde4f7;font-weight:bold;"
            elif position == self.row():
                style += "outline:2px solid #e8a33c;"
            elif position < self.prompt_len:
                style += "color:#666;"
            cells.append(f'<span style="{style}">{char}</span>')
        return (
            "<div>" + "".join(cells) + "</div><div style='font-size:90%;"
            "color:#555'>en azul, el token puntuado; con borde, la posición "
            "de la fila de logits que se lee</div>"
        )

    def _changed(self) -> None:
        if self._widget is None:
            return
        self._toggle.value = not self.shifted
        self._sequence.value = self._sequence_html()
        self._info.value = html.escape(self.summary())
        self._plot.outputs = (
            figure_output(self.figure(), "<probabilidades de la fila leída>", dpi=80),
        )
