"""Módulo 02 · Un mundo de rejilla pequeño y Q-learning tabular.

El mundo es un tablero de casillas: el agente empieza en ``S``, cobra +1 al
llegar a la meta ``M`` y −1 si cae en la trampa ``T`` (las dos terminan el
episodio); ``#`` es una pared. Los movimientos son deterministas y chocar con
una pared o con el borde deja al agente donde estaba. Tras ``max_steps`` pasos
el episodio queda **truncado** (``truncated``): se acabó el tiempo, pero el
estado no es terminal.

La interfaz imita la de gymnasium (``reset`` y ``step`` devuelven lo mismo),
con estados enteros ``fila * columnas + columna``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes

from helpers.bandits import epsilon_greedy
from helpers.plotting import COLORS

LAYOUT: tuple[str, ...] = (
    "....M",
    ".##.T",
    ".....",
    "S.#..",
)
"""El tablero del cuaderno: la trampa está justo debajo de la meta."""

ACTIONS: tuple[str, ...] = ("↑", "→", "↓", "←")
"""Las acciones, en orden: arriba, derecha, abajo, izquierda."""

_MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))


class GridWorld:
    """El mundo de rejilla, con la interfaz ``reset``/``step`` de gymnasium.

    Args:
        layout: una cadena por fila; ``.`` libre, ``#`` pared, ``S`` salida,
            ``M`` meta (+1, termina), ``T`` trampa (−1, termina).
        max_steps: pasos tras los que el episodio queda truncado (``truncated``).
        step_reward: recompensa de cada paso que no acaba en meta ni trampa.
    """

    def __init__(
        self,
        layout: tuple[str, ...] = LAYOUT,
        max_steps: int = 100,
        step_reward: float = 0.0,
    ) -> None:
        widths = {len(row) for row in layout}
        if len(widths) != 1:
            raise ValueError("Todas las filas del tablero deben tener el mismo largo.")
        text = "".join(layout)
        for symbol in "SM":
            if text.count(symbol) != 1:
                raise ValueError(f"El tablero necesita exactamente una «{symbol}».")
        if set(text) - set(".#SMT"):
            raise ValueError("Símbolos permitidos en el tablero: . # S M T")
        self.layout = tuple(layout)
        self.n_rows, self.n_cols = len(layout), widths.pop()
        self.n_states, self.n_actions = self.n_rows * self.n_cols, len(ACTIONS)
        self.max_steps, self.step_reward = max_steps, step_reward
        self.start = text.index("S")
        self.goal = text.index("M")
        self.traps = frozenset(i for i, c in enumerate(text) if c == "T")
        self.walls = frozenset(i for i, c in enumerate(text) if c == "#")
        self.state, self.steps = self.start, 0

    def position(self, state: int) -> tuple[int, int]:
        """``(fila, columna)`` de un estado."""
        return divmod(int(state), self.n_cols)

    def is_terminal(self, state: int) -> bool:
        """Si el estado es la meta o una trampa."""
        return state == self.goal or state in self.traps

    def transition(self, state: int, action: int) -> tuple[int, float, bool]:
        """El modelo del mundo: ``(estado siguiente, recompensa, terminated)``."""
        row, col = self.position(state)
        d_row, d_col = _MOVES[action]
        new_row, new_col = row + d_row, col + d_col
        next_state = new_row * self.n_cols + new_col
        inside = 0 <= new_row < self.n_rows and 0 <= new_col < self.n_cols
        if not inside or next_state in self.walls:
            next_state = state
        if next_state == self.goal:
            return next_state, 1.0, True
        if next_state in self.traps:
            return next_state, -1.0, True
        return next_state, self.step_reward, False

    def reset(self, seed: int | None = None) -> tuple[int, dict]:
        """Vuelve a la salida. (``seed`` se acepta por compatibilidad.)"""
        self.state, self.steps = self.start, 0
        return self.state, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict]:
        """Un paso: ``(estado, recompensa, terminated, truncated, info)``."""
        if not 0 <= action < self.n_actions:
            raise ValueError(f"La acción debe estar entre 0 y 3, no {action}.")
        self.state, reward, terminated = self.transition(self.state, action)
        self.steps += 1
        truncated = not terminated and self.steps >= self.max_steps
        return self.state, reward, terminated, truncated, {}


# ---------------------------------------------------------------------------
# Q* exacto y Q-learning
# ---------------------------------------------------------------------------


def value_iteration(env: GridWorld, gamma: float, tol: float = 1e-10) -> np.ndarray:
    """``Q*`` exacto con iteración de valor (el mundo es conocido y determinista).

    Repite ``Q(s, a) ← r + γ · max_a' Q(s', a')`` (sin el término de ``s'`` si es
    terminal) hasta que nada cambia más de ``tol``.

    Returns:
        ``Q*``, forma ``(n_states, n_actions)``; 0 en paredes y estados terminales.
    """
    q = np.zeros((env.n_states, env.n_actions))
    live = [
        s for s in range(env.n_states) if s not in env.walls and not env.is_terminal(s)
    ]
    for _ in range(10_000):
        new = np.zeros_like(q)
        for s in live:
            for a in range(env.n_actions):
                s_next, reward, terminated = env.transition(s, a)
                new[s, a] = reward + (0.0 if terminated else gamma * q[s_next].max())
        if np.abs(new - q).max() < tol:
            return new
        q = new
    return q


def shortest_distances(env: GridWorld) -> dict[int, int]:
    """Pasos mínimos de cada estado hasta la meta, sin pisar paredes ni trampas.

    Búsqueda en anchura hacia atrás desde la meta. Los estados que no llegan
    (paredes, trampas, casillas encerradas) no aparecen.
    """
    distances = {env.goal: 0}
    frontier = [env.goal]
    while frontier:
        following = []
        for s in frontier:
            for previous in range(env.n_states):
                if previous in distances or previous in env.walls:
                    continue
                if env.is_terminal(previous):
                    continue
                moves = (env.transition(previous, a)[0] for a in range(env.n_actions))
                if s in moves:
                    distances[previous] = distances[s] + 1
                    following.append(previous)
        frontier = following
    return distances


def shortest_paths(env: GridWorld) -> list[tuple[int, ...]]:
    """Todos los caminos más cortos de la salida a la meta, como tuplas de acciones.

    Desde la salida, cada paso de un camino así acerca exactamente un paso a la
    meta (según :func:`shortest_distances`); se enumeran todos.
    """
    distances = shortest_distances(env)
    if env.start not in distances:
        return []

    def paths_from(state: int) -> list[tuple[int, ...]]:
        if state == env.goal:
            return [()]
        found = []
        for action in range(env.n_actions):
            next_state = env.transition(state, action)[0]
            if distances.get(next_state) == distances[state] - 1:
                found += [(action, *rest) for rest in paths_from(next_state)]
        return found

    return paths_from(env.start)


def q_learning_update(
    q_table: np.ndarray,
    state: int,
    action: int,
    reward: float,
    next_state: int,
    terminated: bool,
    alpha: float,
    gamma: float,
) -> np.ndarray:
    """Un paso de Q-learning sobre la tabla (se modifica en su sitio y se devuelve).

    ``Q(s, a) ← Q(s, a) + α · (y − Q(s, a))`` con el objetivo TD
    ``y = r + γ · max_a' Q(s', a')``, o solo ``y = r`` si ``s'`` es terminal.

    Args:
        q_table: la tabla ``Q``, forma ``(n_states, n_actions)``.
        state, action, reward, next_state: la transición ``(s, a, r, s')``.
        terminated: si ``s'`` es terminal (no si el episodio quedó truncado).
        alpha: la tasa de aprendizaje; gamma: el descuento.

    Returns:
        La tabla actualizada (el mismo array).
    """
    target = reward
    if not terminated:
        target = reward + gamma * q_table[next_state].max()
    q_table[state, action] += alpha * (target - q_table[state, action])
    return q_table


def greedy_policy(q_table: np.ndarray) -> np.ndarray:
    """La acción voraz de cada estado, ``argmax_a Q(s, a)``, forma ``(n_states,)``."""
    return np.asarray(q_table).argmax(axis=1)


@dataclass
class QLearningRun:
    """Lo que deja :func:`run_q_learning`.

    Attributes:
        q_table: la tabla final, forma ``(n_states, n_actions)``.
        returns: la recompensa total de cada episodio.
        lengths: los pasos de cada episodio.
    """

    q_table: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray


def q_learning_episode(
    env: GridWorld,
    q_table: np.ndarray,
    alpha: float,
    gamma: float,
    epsilon: float,
    rng: np.random.Generator,
    update=q_learning_update,
) -> tuple[np.ndarray, float, int]:
    """Un episodio entero de Q-learning con ε-greedy, actualizando en cada paso.

    Empieza con ``env.reset()``. En cada paso elige la acción con
    ``epsilon_greedy(q_table[state], epsilon, rng)`` (la del módulo 01: es lo
    único que toma números de ``rng``), da el paso y actualiza la tabla con
    ``terminated`` (un truncado por límite de tiempo sí se apoya en ``Q(s')``).
    Para cuando el episodio termina o queda truncado.

    Args:
        env: el mundo de rejilla (o cualquier entorno con estados enteros).
        q_table: la tabla ``Q``, forma ``(n_states, n_actions)``.
        alpha, gamma, epsilon: tasa de aprendizaje, descuento y exploración.
        rng: el generador de la exploración y los desempates.
        update: la regla de actualización, con la firma de
            :func:`q_learning_update` (la del estudiante, o una con errores).

    Returns:
        ``(q_table, retorno, pasos)``: la tabla actualizada, la suma de las
        recompensas del episodio y cuántos pasos duró.
    """
    state, _ = env.reset()
    episode_return, length = 0.0, 0
    while True:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = update(
            q_table, state, action, reward, next_state, terminated, alpha, gamma
        )
        episode_return += reward
        length += 1
        state = next_state
        if terminated or truncated:
            return q_table, episode_return, length


def run_q_learning(
    env: GridWorld,
    n_episodes: int,
    alpha: float,
    gamma: float,
    epsilon: float,
    rng: np.random.Generator,
    update=q_learning_update,
) -> QLearningRun:
    """Q-learning tabular con ε-greedy (desempates al azar) durante ``n_episodes``.

    Cada episodio es un :func:`q_learning_episode` que sigue con la tabla del
    anterior, empezando por una tabla de ceros. ``update`` permite pasar otra
    regla con la firma de :func:`q_learning_update` (la del estudiante, o una
    con errores).
    """
    q_table = np.zeros((env.n_states, env.n_actions))
    returns, lengths = [], []
    for _ in range(n_episodes):
        q_table, episode_return, length = q_learning_episode(
            env, q_table, alpha, gamma, epsilon, rng, update
        )
        returns.append(episode_return)
        lengths.append(length)
    return QLearningRun(q_table, np.array(returns), np.array(lengths))


# ---------------------------------------------------------------------------
# Dibujos
# ---------------------------------------------------------------------------


def _cell_labels(env: GridWorld, ax: Axes) -> None:
    """Paredes en gris y las letras S, M, T en su casilla."""
    for s in env.walls:
        row, col = env.position(s)
        ax.add_patch(_square(row, col, "#555555"))
    for s, color in [(env.goal, COLORS[2])] + [(t, COLORS[3]) for t in env.traps]:
        row, col = env.position(s)
        ax.add_patch(_square(row, col, color, alpha=0.45))
    for s, label in [(env.start, "S"), (env.goal, "M")] + [(t, "T") for t in env.traps]:
        row, col = env.position(s)
        ax.text(col - 0.38, row - 0.3, label, fontsize=9, fontweight="bold")


def _square(row: int, col: int, color: str, alpha: float = 1.0):
    from matplotlib.patches import Rectangle

    return Rectangle(
        (col - 0.5, row - 0.5), 1, 1, color=color, alpha=alpha, zorder=2, lw=0
    )


def _frame(env: GridWorld, ax: Axes, title: str) -> None:
    ax.set_xlim(-0.5, env.n_cols - 0.5)
    ax.set_ylim(env.n_rows - 0.5, -0.5)
    ax.set_xticks(range(env.n_cols))
    ax.set_yticks(range(env.n_rows))
    ax.set_xlabel("columna")
    ax.set_ylabel("fila")
    ax.grid(False)
    ax.set_title(title)
    ax.set_aspect("equal")


def plot_values_and_policy(
    env: GridWorld,
    q_table: np.ndarray,
    ax: Axes,
    title: str = "V(s) = max Q(s, a) y política voraz",
    agent: int | None = None,
    vmax: float = 1.0,
):
    """Dibuja ``max_a Q(s, a)`` como mapa de color y la acción voraz como flecha.

    Solo llevan flecha los estados con una única acción de valor máximo (sin
    empates: al principio, casi ninguno).

    Returns:
        La imagen de ``imshow`` (para una barra de color).
    """
    q_table = np.asarray(q_table, dtype=float)
    values = q_table.max(axis=1).reshape(env.n_rows, env.n_cols)
    image = ax.imshow(values, cmap="RdBu", vmin=-vmax, vmax=vmax)
    for s in range(env.n_states):
        if s in env.walls or env.is_terminal(s):
            continue
        row, col = env.position(s)
        value = values[row, col]
        ax.text(
            col,
            row + 0.32,
            f"{value:.2f}".replace(".", ","),
            ha="center",
            va="center",
            fontsize=7,
            color="white" if abs(value) > 0.6 * vmax else "black",
        )
        best = np.flatnonzero(q_table[s] >= q_table[s].max() - 1e-12)
        if len(best) == 1:
            d_row, d_col = _MOVES[int(q_table[s].argmax())]
            ax.annotate(
                "",
                xy=(col + 0.3 * d_col, row + 0.3 * d_row - 0.08),
                xytext=(col - 0.3 * d_col, row - 0.3 * d_row - 0.08),
                arrowprops={
                    "arrowstyle": "->",
                    "lw": 1.6,
                    "color": "white" if abs(value) > 0.6 * vmax else "black",
                },
            )
    if agent is not None:
        row, col = env.position(agent)
        ax.plot(col, row, "o", ms=14, mfc="none", mec=COLORS[1], mew=2.5)
    _cell_labels(env, ax)
    _frame(env, ax, title)
    return image


def plot_q_table(
    env: GridWorld,
    q_table: np.ndarray,
    ax: Axes,
    title: str = "Tabla Q: un triángulo por acción",
    vmax: float = 1.0,
):
    """Dibuja la tabla ``Q`` entera: cada casilla, cuatro triángulos (↑ → ↓ ←).

    Returns:
        La colección de triángulos (para una barra de color).
    """
    from matplotlib.collections import PolyCollection

    q_table = np.asarray(q_table, dtype=float)
    polygons, colors = [], []
    # Los vértices exteriores de cada triángulo: arriba, derecha, abajo, izquierda.
    corners = {
        0: ((-0.5, -0.5), (0.5, -0.5)),
        1: ((0.5, -0.5), (0.5, 0.5)),
        2: ((0.5, 0.5), (-0.5, 0.5)),
        3: ((-0.5, 0.5), (-0.5, -0.5)),
    }
    for s in range(env.n_states):
        if s in env.walls:
            continue
        row, col = env.position(s)
        for a in range(env.n_actions):
            (x1, y1), (x2, y2) = corners[a]
            polygons.append([(col, row), (col + x1, row + y1), (col + x2, row + y2)])
            colors.append(q_table[s, a])
            if not env.is_terminal(s):
                d_row, d_col = _MOVES[a]
                ax.text(
                    col + 0.3 * d_col,
                    row + 0.3 * d_row,
                    f"{q_table[s, a]:.1f}".replace(".", ","),
                    ha="center",
                    va="center",
                    fontsize=6.5,
                    zorder=3,
                    color="white" if abs(q_table[s, a]) > 0.6 * vmax else "black",
                )
    collection = PolyCollection(
        polygons,
        array=np.array(colors),
        cmap="RdBu",
        edgecolors="white",
        linewidths=0.5,
    )
    collection.set_clim(-vmax, vmax)
    ax.add_collection(collection)
    _cell_labels(env, ax)
    _frame(env, ax, title)
    return collection
