"""Módulo 01 · Juega tú al bandido de 17 × 24 contra ε-greedy y UCB.

Cada clic tira de una estrategia (``StrategyBandit``) y hace dar un paso a un
agente ε-greedy y a otro UCB, cada uno con su semilla. La lógica (``pull``,
``set_epsilon``, ``set_c``, ``reset``) no depende de la vista: los tests la
manejan sin navegador y los controles solo llaman a esos métodos.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from helpers.bandits import (
    QUESTION,
    STRATEGIES,
    StrategyBandit,
    epsilon_greedy,
    incremental_mean,
    ucb_action,
)
from helpers.formatting import number
from helpers.plotting import COLORS
from helpers.widgets.view import WidgetView, course_style, figure_output

PLAYER, EPSILON_GREEDY, UCB = "tú", "ε-greedy", "UCB"


class Player:
    """Un jugador (tú, ε-greedy o UCB): sus ``N(a)``, ``Q(a)`` y aciertos.

    Usa un solo generador para elegir y para tirar del brazo: con la misma
    semilla y el mismo parámetro, un agente repite exactamente la misma partida.
    """

    def __init__(self, rule: str, param: float, k: int, seed: list[int]) -> None:
        self.rule, self.param = rule, param
        self.rng = np.random.default_rng(seed)
        self.counts = np.zeros(k, dtype=int)
        self.estimates = np.zeros(k)
        self.total = 0

    def play(self, bandit: StrategyBandit, arm: int | None = None) -> tuple[int, str]:
        """Tira de ``arm`` (o del que elija su regla) y actualiza ``Q(a)``."""
        if arm is None and self.rule == UCB:
            t = int(self.counts.sum()) + 1
            arm = ucb_action(self.estimates, self.counts, t, self.param)
        elif arm is None:
            arm = epsilon_greedy(self.estimates, self.param, self.rng)
        reward, text = bandit.pull(arm, self.rng)
        self.counts[arm] += 1
        n = int(self.counts[arm])
        self.estimates[arm] = incremental_mean(self.estimates[arm], reward, n)
        self.total += reward
        return reward, text


class BanditGame(WidgetView):
    """La partida: tú contra un agente ε-greedy y otro UCB, ``horizon`` tiradas.

    Args:
        seed: semilla de la partida; fija tus recompensas y las de los agentes.
        bandit: el bandido; por defecto, el de las estrategias para 17 × 24.
        epsilon: probabilidad de explorar del agente ε-greedy.
        c: peso de la incertidumbre en UCB (con recompensas 0/1, c ≈ 0,5 va bien).
        horizon: número de tiradas de la partida.
    """

    def __init__(
        self,
        seed: int = 0,
        bandit: StrategyBandit | None = None,
        epsilon: float = 0.1,
        c: float = 0.5,
        horizon: int = 50,
    ) -> None:
        if horizon < 1:
            raise ValueError(f"horizon debe ser ≥ 1, no {horizon}.")
        self.bandit = bandit if bandit is not None else StrategyBandit()
        self.seed, self.horizon = seed, horizon
        # Un parámetro por jugador (el tuyo no se usa); el orden fija las semillas.
        self._params = {PLAYER: 0.0, EPSILON_GREEDY: epsilon, UCB: c}
        self._widget: widgets.VBox | None = None
        self.reset()
        self.set_epsilon(epsilon)
        self.set_c(c)

    # --- la lógica ---------------------------------------------------------

    def reset(self) -> None:
        """Empieza una partida nueva con la misma semilla (y q* oculto)."""
        self._players = {name: self._replay(name, 0) for name in self._params}
        self._last: tuple[int, int, str] | None = None
        self.revealed = False
        self._changed()

    def _replay(self, name: str, steps: int) -> Player:
        """Juega el jugador ``name`` desde cero ``steps`` pasos con su semilla."""
        stream = list(self._params).index(name)
        player = Player(name, self._params[name], self.bandit.k, [self.seed, stream])
        for _ in range(steps):
            player.play(self.bandit)
        return player

    def pull(self, arm: int) -> tuple[int, str]:
        """Tiras tú del brazo ``arm`` y cada agente da un paso.

        Returns:
            ``(recompensa, desarrollo)``. Si la partida ya terminó no se tira:
            se devuelve ``(0, mensaje)`` y el estado no cambia.
        """
        if self.finished:
            return 0, (
                f"La partida ha terminado ({self.horizon} tiradas): "
                "pulsa «Reiniciar» para jugar otra."
            )
        if not 0 <= arm < self.bandit.k:
            raise ValueError(f"arm debe estar entre 0 y {self.bandit.k - 1}, no {arm}.")
        reward, text = self._players[PLAYER].play(self.bandit, arm)
        self._players[EPSILON_GREEDY].play(self.bandit)
        self._players[UCB].play(self.bandit)
        self._last = (arm, reward, text)
        self._changed()
        return reward, text

    def _set_param(self, name: str, x: float) -> None:
        """Cambia el parámetro del agente ``name`` y lo vuelve a jugar desde cero."""
        self._params[name] = float(x)
        self._players[name] = self._replay(name, self.steps)
        self._changed()

    def set_epsilon(self, x: float) -> None:
        """Cambia ε y rejuega el agente ε-greedy las mismas tiradas, misma semilla."""
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"ε debe estar en [0, 1], no {x}.")
        self._set_param(EPSILON_GREEDY, x)

    def set_c(self, x: float) -> None:
        """Cambia c y rejuega el agente UCB las mismas tiradas, misma semilla."""
        if x < 0.0:
            raise ValueError(f"c debe ser ≥ 0, no {x}.")
        self._set_param(UCB, x)

    def reveal(self, show: bool = True) -> None:
        """Muestra (u oculta) las probabilidades de acierto verdaderas ``q*``."""
        self.revealed = bool(show)
        self._changed()

    @property
    def epsilon(self) -> float:
        """La ε del agente ε-greedy."""
        return self._params[EPSILON_GREEDY]

    @property
    def c(self) -> float:
        """La c del agente UCB."""
        return self._params[UCB]

    @property
    def steps(self) -> int:
        """Tiradas jugadas hasta ahora (las mismas para los tres)."""
        return int(self._players[PLAYER].counts.sum())

    @property
    def finished(self) -> bool:
        """Si ya se jugaron las ``horizon`` tiradas."""
        return self.steps >= self.horizon

    @property
    def player_counts(self) -> np.ndarray:
        """Tus tiradas por brazo ``N(a)``, forma ``(k,)`` (una copia)."""
        return self._players[PLAYER].counts.copy()

    @property
    def player_estimates(self) -> np.ndarray:
        """Tus medias muestrales ``Q(a)``, forma ``(k,)`` (una copia)."""
        return self._players[PLAYER].estimates.copy()

    @property
    def counts(self) -> dict[str, np.ndarray]:
        """Tiradas por brazo de cada jugador: ``{"tú": ..., "ε-greedy": ..., ...}``."""
        return {name: p.counts.copy() for name, p in self._players.items()}

    @property
    def scores(self) -> dict[str, int]:
        """Aciertos acumulados: ``{"tú": ..., "ε-greedy": ..., "UCB": ...}``."""
        return {name: p.total for name, p in self._players.items()}

    @property
    def best_expected(self) -> float:
        """Lo mejor que se puede esperar en promedio: ``n · max q*``."""
        return self.steps * float(self.bandit.q_star.max())

    def verdict(self) -> str:
        """El veredicto de la partida (o cuántas tiradas quedan)."""
        if not self.finished:
            return f"La partida sigue: quedan {self.horizon - self.steps} tiradas."
        scores, names, q = self.scores, self.bandit.names, self.bandit.q_star
        top = max(scores.values())
        winners = [name for name, s in scores.items() if s == top]
        if len(winners) > 1:
            tied = ", ".join(winners[:-1]) + " y " + winners[-1]
            head = f"Empate a {top} aciertos entre {tied}"
        elif winners == [PLAYER]:
            head = f"¡Ganas tú con {top} aciertos!"
        else:
            head = f"Gana {winners[0]} con {top} aciertos"
        best, second = np.argsort(q)[::-1][:2]
        n_best = {name: int(n[best]) for name, n in self.counts.items()}
        untried = [f"«{names[a]}»" for a in np.flatnonzero(self.player_counts == 0)]
        if untried:
            listed = ", ".join(untried[:-1]) + " ni " * (len(untried) > 1)
            listed += untried[-1]
            lesson = f"No probaste {listed}: sin explorar no sabes cuánto valen."
        elif n_best[PLAYER] < max(n_best.values()):
            lesson = "Un agente explotó la mejor estrategia más que tú."
        else:
            lesson = "Exploraste lo justo y luego explotaste la mejor estrategia."
        return (
            f"{head} (máximo esperado: {number(self.best_expected)}). La mejor "
            f"estrategia era «{names[best]}» (q* = {number(q[best])}): la elegiste "
            f"{n_best[PLAYER]} veces, ε-greedy {n_best[EPSILON_GREEDY]} y UCB "
            f"{n_best[UCB]}. {lesson} Explorar cuesta aciertos ahora, pero sin "
            "explorar puedes quedarte con una estrategia peor; y con recompensas "
            f"0/1, «{names[best]}» ({number(q[best])}) y «{names[second]}» "
            f"({number(q[second])}) necesitan muchas tiradas para distinguirse. "
            "Mueve ε y c y mira cómo les habría ido a los agentes."
        )

    # --- la vista ----------------------------------------------------------

    def figure(self) -> Figure:
        """Tus ``Q(a)`` y ``N(a)`` (y ``q*`` si se reveló), y las tiradas de todos."""
        x, me = np.arange(self.bandit.k), self._players[PLAYER]
        with course_style():
            # Márgenes fijos, sin layout automático: se redibuja en cada clic.
            fig = Figure(figsize=(8.0, 3.2))
            fig.subplots_adjust(left=0.08, right=0.99, bottom=0.26, top=0.9, wspace=0.2)
            ax_q, ax_n = fig.subplots(1, 2)
            ax_q.bar(x, me.estimates, color=COLORS[0], label="tu Q(a)")
            for a, (q, n) in enumerate(zip(me.estimates, me.counts, strict=True)):
                ax_q.text(a, q + 0.02, f"N={n}", ha="center", fontsize=8)
            if self.revealed:
                style = {"marker": "_", "s": 500, "color": COLORS[7], "zorder": 3}
                ax_q.scatter(x, self.bandit.q_star, label="q* verdadero", **style)
            ax_q.set(title="Tus estimaciones", ylabel="Q(a) = aciertos / N(a)")
            ax_q.set_ylim(0, 1.3)
            for i, (name, n) in enumerate(self.counts.items()):
                ax_n.bar(x + (i - 1) * 0.27, n, width=0.27, color=COLORS[i], label=name)
            top = max(p.counts.max() for p in self._players.values())
            ax_n.set(title="Tiradas por estrategia", ylabel="N(a)")
            ax_n.set_ylim(0, 1.3 * max(top, 1))
            for ax in (ax_q, ax_n):
                ax.set_xticks(x, self.bandit.names, rotation=20, fontsize=8)
                ax.set_xlabel("estrategia")
                ax.legend(loc="upper center", ncols=3, fontsize=8)
        return fig

    def _figure_output(self) -> dict:
        return figure_output(self.figure(), "<figura de la partida>", dpi=80)

    def _build_widget(self) -> widgets.VBox:
        self._arm_buttons = [
            widgets.Button(description=name, tooltip=STRATEGIES.get(name, ("",))[0])
            for name in self.bandit.names
        ]
        for button in self._arm_buttons:
            button.on_click(lambda b: self.pull(self._arm_buttons.index(b)))
        slider = {"min": 0.0, "continuous_update": False}
        slider["style"] = {"description_width": "initial"}
        self._epsilon_slider = widgets.FloatSlider(
            self.epsilon, max=0.5, step=0.01, description="ε de ε-greedy", **slider
        )
        self._c_slider = widgets.FloatSlider(
            self.c, max=3.0, step=0.1, description="c de UCB", **slider
        )
        self._reveal_toggle = widgets.ToggleButton(description="Revelar q*")
        for control in (self._epsilon_slider, self._c_slider, self._reveal_toggle):
            control.observe(self._on_control, names="value")
        self._reset_button = widgets.Button(description="Reiniciar", icon="refresh")
        self._reset_button.on_click(lambda _: self.reset())
        self._answer, self._board = widgets.HTML(), widgets.HTML()
        self._plot, self._verdict = widgets.Output(), widgets.HTML()
        intro = widgets.HTML(
            f"<b>{QUESTION}</b> Elige una estrategia: el verificador pone 1 si "
            f"acierta (408) y 0 si no. Tienes {self.horizon} tiradas."
        )
        controls = [self._epsilon_slider, self._c_slider]
        controls += [self._reveal_toggle, self._reset_button]
        rows = [intro, widgets.HBox(self._arm_buttons), self._answer]
        rows += [widgets.HBox(controls), self._board, self._plot, self._verdict]
        return widgets.VBox(rows)

    def _on_control(self, change: dict) -> None:
        """Un control cambió: avisa a la lógica, salvo si es el eco de ``_changed``."""
        owner, new = change["owner"], change["new"]
        if owner is self._epsilon_slider and new != self.epsilon:
            self.set_epsilon(new)
        elif owner is self._c_slider and new != self.c:
            self.set_c(new)
        elif owner is self._reveal_toggle and new != self.revealed:
            self.reveal(new)

    def _changed(self) -> None:
        """Redibuja la vista, si ya existe, para que refleje el estado."""
        if self._widget is None:
            return
        # Primero el máximo: si no, el deslizador recortaría un ε o una c grandes.
        self._epsilon_slider.max = max(0.5, self.epsilon)
        self._c_slider.max = max(3.0, self.c)
        self._epsilon_slider.value, self._c_slider.value = self.epsilon, self.c
        self._reveal_toggle.value = self.revealed
        for button in self._arm_buttons:
            button.disabled = self.finished
        self._answer.value = "<i>Pulsa una estrategia para empezar.</i>"
        if self._last is not None:
            arm, reward, text = self._last
            mark = "✔ 1" if reward else "✘ 0"
            color = COLORS[2] if reward else COLORS[3]
            self._answer.value = (
                f"<b>{self.bandit.names[arm]}</b>: <code>{html.escape(text)}</code> "
                f"→ <b style='color:{color}'>{mark}</b>"
            )
        cells = "".join(f"<td>{n}: <b>{s}</b></td>" for n, s in self.scores.items())
        best = f"<td>mejor esperado n·max q*: <b>{number(self.best_expected)}</b></td>"
        q_star = " · ".join(
            f"{n} {number(q)}"
            for n, q in zip(self.bandit.names, self.bandit.q_star, strict=True)
        )
        self._board.value = (
            f"Tirada {self.steps} de {self.horizon}.<table><tr>{cells}{best}</tr>"
            f"</table>{f'q*: {q_star}' if self.revealed else ''}"
        )
        verdict = f"<b>{html.escape(self.verdict())}</b>"
        self._verdict.value = verdict if self.finished else ""
        self._plot.outputs = (self._figure_output(),)
