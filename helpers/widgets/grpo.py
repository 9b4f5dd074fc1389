"""Módulo 07 · Dos widgets para GRPO en 17 × 24.

- ``ContinuationTree``: el árbol de continuaciones del modelo diminuto. Cada
  clic en un carácter alarga el camino y multiplica su probabilidad por la
  del paso, calculada con el modelo de verdad (``next_token_probs``).
- ``AdvantageTable``: la tabla de lápiz de las ventajas de grupo. Marca qué
  respuestas del grupo son correctas y mira cómo cambian las ventajas (con o
  sin dividir por la desviación típica).

La lógica (``extend``, ``back``, ``toggle``, ``advantages``...) no depende de
la vista: las pruebas la manejan sin navegador.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure

from helpers.formatting import number, scientific
from helpers.plotting import COLORS
from helpers.tinylm.grpo import group_advantages
from helpers.tinylm.model import TinyLM
from helpers.tinylm.sampling import next_token_probs
from helpers.tinylm.task import TARGET, prompt_text, verify
from helpers.tinylm.tokenizer import END
from helpers.widgets.view import WidgetView, course_style, figure_output


def _prob(p: float) -> str:
    """Una probabilidad legible: 0,953 o 3,1·10⁻⁴ si es muy pequeña."""
    return number(p, 3) if p >= 0.01 else scientific(p, 1)


# ---------------------------------------------------------------------------
# El árbol de continuaciones
# ---------------------------------------------------------------------------


class ContinuationTree(WidgetView):
    """Recorre a mano el árbol de continuaciones de un enunciado.

    Args:
        model: el modelo diminuto (p. ej. ``load_pretrained()``).
        problem: el par ``(a, b)``; por defecto 17 × 24.
        top_k: cuántas continuaciones se ofrecen en cada nodo.
    """

    def __init__(
        self, model: TinyLM, problem: tuple[int, int] = TARGET, top_k: int = 6
    ) -> None:
        self.model = model
        self.problem = problem
        self.prompt = prompt_text(*problem)
        self.top_k = int(top_k)
        self._widget: widgets.VBox | None = None
        self.reset()

    # --- la lógica ---------------------------------------------------------

    @property
    def text(self) -> str:
        """La respuesta escrita hasta ahora (sin el enunciado)."""
        return "".join(ch for ch, _ in self.path)

    @property
    def probability(self) -> float:
        """La probabilidad del camino: el producto de la de cada paso."""
        return math.prod(p for _, p in self.path)

    @property
    def finished(self) -> bool:
        """¿Ha escrito ya el punto final (el token de fin)?"""
        return self.text.endswith(END)

    @property
    def reward(self) -> int | None:
        """La recompensa del verificador si el camino terminó; si no, ``None``."""
        return verify(self.text, *self.problem) if self.finished else None

    def distribution(self) -> dict[str, float]:
        """Probabilidad de cada carácter siguiente (vacía si ya terminó)."""
        if self.finished:
            return {}
        return next_token_probs(self.model, self.prompt + self.text)

    def options(self) -> list[tuple[str, float]]:
        """Las ``top_k`` continuaciones más probables, de más a menos."""
        return list(self.distribution().items())[: self.top_k]

    def extend(self, char: str) -> float:
        """Alarga el camino con ``char``. Devuelve la probabilidad del camino."""
        if self.finished:
            raise ValueError("El camino ya terminó con el punto final.")
        if len(self.prompt + self.text) >= self.model.cfg.max_len:
            raise ValueError("El camino ya ocupa todo el contexto del modelo.")
        probs = self.distribution()
        if char not in probs:
            raise ValueError(
                f"{char!r} no es un carácter que el modelo pueda escribir."
            )
        self.path.append((char, probs[char]))
        self._changed()
        return self.probability

    def follow(self, text: str) -> float:
        """Alarga el camino carácter a carácter con ``text``."""
        view, self._widget = self._widget, None  # sin redibujar en cada paso
        try:
            for char in text:
                self.extend(char)
        finally:
            self._widget = view
        self._changed()
        return self.probability

    def greedy(self) -> float:
        """Completa el camino eligiendo siempre el carácter más probable."""
        view, self._widget = self._widget, None
        try:
            while not self.finished and (
                len(self.prompt + self.text) < self.model.cfg.max_len
            ):
                self.extend(self.options()[0][0])
        finally:
            self._widget = view
        self._changed()
        return self.probability

    def back(self) -> None:
        """Deshace el último paso."""
        if self.path:
            self.path.pop()
        self._changed()

    def reset(self) -> None:
        """Vuelve al enunciado, sin respuesta."""
        self.path: list[tuple[str, float]] = []
        self._changed()

    def explanation(self) -> str:
        """El camino y su probabilidad como producto, en una línea."""
        if not self.path:
            return (
                f"Enunciado «{self.prompt}». Elige el primer carácter: el camino "
                "empieza con probabilidad 1."
            )
        factors = " × ".join(_prob(p) for _, p in self.path)
        line = (
            f"P(«{self.text}» | «{self.prompt}») = {factors} = "
            f"{_prob(self.probability)}"
        )
        if self.finished:
            mark = "✔ recompensa 1" if self.reward else "✘ recompensa 0"
            line += f" · el verificador: {mark}"
        return line

    # --- la vista ----------------------------------------------------------

    def _build_widget(self) -> widgets.VBox:
        self._choices = widgets.HBox()
        self._back_button = widgets.Button(description="Deshacer", icon="undo")
        self._greedy_button = widgets.Button(
            description="Completar (lo más probable)",
            layout=widgets.Layout(width="auto"),
        )
        self._reset_button = widgets.Button(description="Empezar de nuevo")
        self._back_button.on_click(lambda _: self.back())
        self._greedy_button.on_click(lambda _: self.greedy())
        self._reset_button.on_click(lambda _: self.reset())
        self._info = widgets.HTML()
        intro = widgets.HTML(
            "<b>El árbol de continuaciones de 17 × 24.</b> Cada botón es un "
            "carácter que el modelo puede escribir ahora, con su probabilidad. "
            "Pulsa uno para bajar por esa rama."
        )
        controls = widgets.HBox(
            [self._back_button, self._greedy_button, self._reset_button]
        )
        return widgets.VBox([intro, self._choices, controls, self._info])

    def _choice_button(self, char: str, p: float) -> widgets.Button:
        label = "fin «.»" if char == END else f"«{char}»"
        button = widgets.Button(description=f"{label} {_prob(p)}")
        button.on_click(lambda _, c=char: self.extend(c))
        return button

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe, para que refleje el estado."""
        if self._widget is None:
            return
        self._choices.children = tuple(
            self._choice_button(ch, p) for ch, p in self.options()
        )
        self._back_button.disabled = not self.path
        self._greedy_button.disabled = self.finished
        rows = "".join(
            f"<tr><td>{i + 1}</td><td><code>{html.escape(self.prompt)}"
            f"{html.escape(self.text[:i])}<b>{html.escape(ch)}</b></code></td>"
            f"<td>{_prob(p)}</td></tr>"
            for i, (ch, p) in enumerate(self.path)
        )
        table = (
            "<table><tr><th>paso</th><th>camino</th><th>P(paso)</th></tr>"
            f"{rows}</table>"
            if rows
            else ""
        )
        self._info.value = f"{html.escape(self.explanation())}<br>{table}"


# ---------------------------------------------------------------------------
# La tabla de ventajas de grupo
# ---------------------------------------------------------------------------

# Los cuatro intentos del ejemplo (ilustrativos, como en el texto original).
SEED_ROLLOUTS = (
    ("A", "17×20 + 17×4 = 340 + 58 = 398 (despiste)"),
    ("B", "17×20 + 17×4 = 340 + 68 = 408"),
    ("C", "24×10 + 24×7 = 240 + 168 = 408"),
    ("D", "17 × 24 ≈ 17 × 25 ≈ 400 (estimación)"),
)
SEED_REWARDS = (0, 1, 1, 0)


class AdvantageTable(WidgetView):
    """La tabla de lápiz de GRPO: recompensas de un grupo -> ventajas.

    Args:
        rollouts: pares ``(nombre, texto)`` de las respuestas del grupo.
        rewards: la recompensa inicial de cada una (1 acierto, 0 fallo).
        std_normalize: dividir por la desviación típica del grupo.
    """

    def __init__(
        self,
        rollouts: Sequence[tuple[str, str]] = SEED_ROLLOUTS,
        rewards: Sequence[int] = SEED_REWARDS,
        std_normalize: bool = False,
    ) -> None:
        if len(rollouts) != len(rewards) or len(rollouts) < 2:
            raise ValueError("Hace falta una recompensa por respuesta (y al menos 2).")
        self.rollouts = list(rollouts)
        self._widget: widgets.VBox | None = None
        self.std_normalize = bool(std_normalize)
        self.set_rewards(rewards)

    # --- la lógica ---------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """Los nombres de las respuestas (A, B, C, D...)."""
        return [name for name, _ in self.rollouts]

    def set_rewards(self, rewards: Sequence[int]) -> None:
        """Fija todas las recompensas (0 o 1)."""
        if len(rewards) != len(self.rollouts) or any(r not in (0, 1) for r in rewards):
            raise ValueError("Una recompensa 0 o 1 por respuesta.")
        self.rewards = [int(r) for r in rewards]
        self._changed()

    def toggle(self, index: int) -> None:
        """Cambia la respuesta ``index`` de correcta a incorrecta o al revés."""
        self.rewards[index] = 1 - self.rewards[index]
        self._changed()

    def set_std_normalize(self, value: bool) -> None:
        """Divide (o no) por la desviación típica del grupo."""
        self.std_normalize = bool(value)
        self._changed()

    @property
    def mean(self) -> float:
        """La media del grupo: la línea base de GRPO."""
        return float(np.mean(self.rewards))

    def advantages(self) -> np.ndarray:
        """Las ventajas del grupo, con ``helpers.tinylm.grpo.group_advantages``."""
        rewards = torch.tensor([self.rewards], dtype=torch.float64)
        return group_advantages(rewards, self.std_normalize)[0].numpy()

    def explanation(self) -> str:
        """Lo que enseña el grupo, en una frase."""
        right = sum(self.rewards)
        n = len(self.rewards)
        if right in (0, n):
            which = "aciertan todas" if right == n else "fallan todas"
            return (
                f"{which.capitalize()}: cada recompensa es igual a la media, "
                "todas las ventajas valen 0 y el grupo no enseña nada."
            )
        adv = self.advantages()
        up = adv[self.rewards.index(1)]
        down = adv[self.rewards.index(0)]
        return (
            f"Media del grupo {number(self.mean)}: cada acierto recibe "
            f"{number(up)} (sube) y cada fallo {number(down)} (baja). Las ventajas "
            f"suman {number(abs(float(adv.sum())))}."
        )

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """Las ventajas del grupo como barras (verde sube, rojo baja)."""
        adv = self.advantages()
        with course_style():
            fig = Figure(figsize=(6.0, 2.6))
            fig.subplots_adjust(left=0.12, right=0.98, bottom=0.18, top=0.86)
            ax = fig.subplots()
            colors = [COLORS[2] if a > 0 else COLORS[3] for a in adv]
            ax.bar(self.names, adv, color=colors)
            ax.axhline(0, color=COLORS[7], lw=0.8)
            limit = max(1.0, float(np.abs(adv).max()) * 1.15)
            for x, a in enumerate(adv):
                offset = 0.06 * limit if a >= 0 else -0.14 * limit
                ax.text(x, a + offset, number(a), ha="center", fontsize=9)
            ax.set(
                title="Ventaja de cada respuesta del grupo",
                ylabel="ventaja",
                ylim=(-limit, limit),
            )
        return fig

    def _build_widget(self) -> widgets.VBox:
        self._toggles = [
            widgets.ToggleButton(value=bool(r), description=f"{name}: ✘ fallo")
            for name, r in zip(self.names, self.rewards, strict=True)
        ]
        for index, toggle in enumerate(self._toggles):
            toggle.observe(
                lambda change, i=index: self._on_toggle(i, change["new"]), names="value"
            )
        self._std_box = widgets.Checkbox(
            self.std_normalize,
            description="dividir por la desviación típica del grupo",
            style={"description_width": "initial"},
        )
        self._std_box.observe(lambda change: self._on_std(change["new"]), names="value")
        self._info, self._plot = widgets.HTML(), widgets.Output()
        intro = widgets.HTML(
            "<b>La tabla de GRPO.</b> Pulsa una respuesta para marcarla como "
            "correcta (recompensa 1) o incorrecta (0)."
        )
        return widgets.VBox(
            [intro, widgets.HBox(self._toggles), self._std_box, self._info, self._plot]
        )

    def _on_toggle(self, index: int, value: bool) -> None:
        if int(value) != self.rewards[index]:
            self.toggle(index)

    def _on_std(self, value: bool) -> None:
        if value != self.std_normalize:
            self.set_std_normalize(value)

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe, para que refleje el estado."""
        if self._widget is None:
            return
        for toggle, name, r in zip(
            self._toggles, self.names, self.rewards, strict=True
        ):
            toggle.value = bool(r)
            toggle.description = f"{name}: ✔ acierto" if r else f"{name}: ✘ fallo"
            toggle.button_style = "success" if r else "danger"
        self._std_box.value = self.std_normalize
        adv = self.advantages()
        rows = "".join(
            f"<tr><td><b>{name}</b></td><td>{html.escape(text)}</td><td>{r}</td>"
            f"<td>{number(self.mean)}</td><td><b>{number(a)}</b></td></tr>"
            for (name, text), r, a in zip(self.rollouts, self.rewards, adv, strict=True)
        )
        self._info.value = (
            "<table><tr><th></th><th>respuesta</th><th>recompensa</th>"
            "<th>media del grupo</th><th>ventaja</th></tr>"
            f"{rows}</table>{html.escape(self.explanation())}"
        )
        self._plot.outputs = (
            figure_output(self.figure(), "<ventajas del grupo>", dpi=80),
        )
