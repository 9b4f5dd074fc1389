"""Módulo 02 · Entornos sonda: MDPs diminutos cuyos valores correctos conocemos.

Un agente de RL que no aprende puede fallar en mil sitios (la red, el objetivo
TD, el descuento, el búfer...). Los entornos sonda aíslan uno cada vez: son
tan sencillos que sabemos de memoria cuánto debe valer ``Q(s, a)``, así que si
el agente no llega a ese número, el fallo está en la pieza que la sonda pone a
prueba. Cada sonda es un ``gymnasium.Env`` con observaciones de forma ``(1,)``
y un método ``true_q_values(observation, gamma)`` con la respuesta.

La idea y las sondas 1 a 5 vienen de Andy Jones, «Debugging RL, Without the
Agonizing Pain» (2021); la sonda 6 (límite de tiempo, ``truncated``) la añade
el curso.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Probe(gym.Env):
    """Base de las sondas: observación ``(1,)`` en ``[-1, 1]``, acciones discretas.

    Args:
        n_actions: cuántas acciones hay.
    """

    name = "sonda"
    tests = ""
    observations: tuple[float, ...] = (0.0,)
    """Las observaciones que la sonda puede mostrar (para comprobar ``Q``)."""

    def __init__(self, n_actions: int = 1) -> None:
        super().__init__()
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self.action_space = spaces.Discrete(n_actions)
        self._obs = 0.0
        self._t = 0

    def _observation(self) -> np.ndarray:
        return np.array([self._obs], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._t = 0
        self._obs = self._first_observation()
        return self._observation(), {}

    def _first_observation(self) -> float:
        return 0.0

    def true_q_values(self, observation: float, gamma: float) -> np.ndarray:
        """Los ``Q(s, a)`` correctos para una observación, forma ``(n_actions,)``."""
        raise NotImplementedError


class ConstantReward(Probe):
    """Un paso, una acción, recompensa +1. Correcto: ``Q = 1``.

    Si el agente no llega a 1, falla lo más básico: la red, la pérdida o el
    optimizador. Si pasa de 1 y sigue subiendo, el objetivo se está apoyando
    en ``Q`` del estado terminal (*bootstrapping* donde no debe).
    """

    name = "1 · recompensa constante"
    tests = "la red y la pérdida; nada de bootstrapping desde un estado terminal"

    def step(self, action: int):
        self._t += 1
        return self._observation(), 1.0, True, False, {}

    def true_q_values(self, observation: float, gamma: float) -> np.ndarray:
        return np.array([1.0])


class ObservationReward(Probe):
    """Un paso, una acción, observación ±1 al azar y recompensa igual a ella.

    Correcto: ``Q(+1) = +1``, ``Q(−1) = −1``. Comprueba que la red **mira** la
    observación (y que el lote no desordena observaciones y recompensas).
    """

    name = "2 · recompensa según la observación"
    tests = "que la red use la observación; lotes bien alineados"
    observations = (-1.0, 1.0)

    def _first_observation(self) -> float:
        return float(self.np_random.choice([-1.0, 1.0]))

    def step(self, action: int):
        self._t += 1
        return self._observation(), self._obs, True, False, {}

    def true_q_values(self, observation: float, gamma: float) -> np.ndarray:
        return np.array([float(observation)])


class TwoStepDiscount(Probe):
    """Dos pasos, una acción: observación 0 y luego 1; +1 solo al final.

    Correcto: ``Q(1) = 1`` y ``Q(0) = γ``. Comprueba el descuento y el
    *bootstrapping* a través de un estado **no** terminal.
    """

    name = "3 · dos pasos con descuento"
    tests = "el descuento γ y el bootstrapping desde s' no terminal"
    observations = (0.0, 1.0)

    def step(self, action: int):
        self._t += 1
        if self._t == 1:
            self._obs = 1.0
            return self._observation(), 0.0, False, False, {}
        return self._observation(), 1.0, True, False, {}

    def true_q_values(self, observation: float, gamma: float) -> np.ndarray:
        return np.array([1.0 if observation > 0.5 else gamma])


class ActionReward(Probe):
    """Un paso, dos acciones: la acción 1 da +1 y la 0 da −1.

    Correcto: ``Q = [−1, +1]``. Comprueba que la pérdida usa ``Q(s, a)`` de la
    acción **tomada** (el ``gather``) y que la política elige el máximo.
    """

    name = "4 · recompensa según la acción"
    tests = "Q(s, a) de la acción tomada (gather) y el argmax"

    def __init__(self) -> None:
        super().__init__(n_actions=2)

    def step(self, action: int):
        self._t += 1
        return self._observation(), 1.0 if action == 1 else -1.0, True, False, {}

    def true_q_values(self, observation: float, gamma: float) -> np.ndarray:
        return np.array([-1.0, 1.0])


class ObservationActionReward(Probe):
    """Un paso, dos acciones, observación ±1: +1 si la acción «acierta» el signo.

    Acierta la acción 1 con ``+1`` y la 0 con ``−1``. Correcto:
    ``Q(+1) = [−1, +1]`` y ``Q(−1) = [+1, −1]``. Es la sonda completa de un
    paso: observación y acción juntas.
    """

    name = "5 · recompensa según observación y acción"
    tests = "observación y acción a la vez"
    observations = (-1.0, 1.0)

    def __init__(self) -> None:
        super().__init__(n_actions=2)

    def _first_observation(self) -> float:
        return float(self.np_random.choice([-1.0, 1.0]))

    def step(self, action: int):
        self._t += 1
        right = (action == 1) == (self._obs > 0)
        return self._observation(), 1.0 if right else -1.0, True, False, {}

    def true_q_values(self, observation: float, gamma: float) -> np.ndarray:
        return np.array([-1.0, 1.0]) * (1.0 if observation > 0 else -1.0)


class TimeLimit(Probe):
    """Una acción, +1 en cada paso, nunca termina: se **trunca** tras ``horizon``.

    La observación no dice cuánto tiempo queda, así que el límite de tiempo no
    es parte del problema: el valor correcto es el de seguir para siempre,
    ``Q = 1 / (1 − γ)``. Un agente que trata el truncado como un final
    (``truncated`` como ``terminated``) aprende un valor menor.

    Args:
        horizon: pasos tras los que el episodio queda truncado.
    """

    name = "6 · límite de tiempo"
    tests = "bootstrapping a través de un truncado, no de un final"

    def __init__(self, horizon: int = 5) -> None:
        super().__init__()
        self.horizon = horizon

    def step(self, action: int):
        self._t += 1
        return self._observation(), 1.0, False, self._t >= self.horizon, {}

    def true_q_values(self, observation: float, gamma: float) -> np.ndarray:
        return np.array([1.0 / (1.0 - gamma)])


class MaximizationBias(Probe):
    """El sesgo de maximización (Sutton y Barto, 2018, ejemplo 6.7), con ``Q``.

    Dos estados. En ``A`` (observación 0) la acción 0 acaba con recompensa 0 y
    las demás llevan a ``B`` (observación 1) sin recompensa. En ``B`` cualquier
    acción acaba con una recompensa al azar de media ``mean`` y desviación 1.
    Correcto: ``Q(B, ·) = mean`` y, en ``A``, ``[0, γ·mean, …]``. Con
    ``mean < 0`` ir a ``B`` es peor que acabar, pero el máximo de varias
    estimaciones ruidosas de ``Q(B, ·)`` sale por encima de ``mean``: el
    objetivo ``γ·max Q(B, ·)`` sobrestima ``Q(A, a ≥ 1)``.

    Args:
        n_actions: acciones en cada estado (al menos 2).
        mean: la media de la recompensa en ``B``.
    """

    name = "sesgo de maximización"
    tests = "cuánto sobrestima el máximo de Q en el objetivo"
    observations = (0.0, 1.0)

    def __init__(self, n_actions: int = 8, mean: float = -0.1) -> None:
        super().__init__(n_actions=n_actions)
        self.mean = mean

    def step(self, action: int):
        self._t += 1
        if self._obs == 0.0:
            if action == 0:
                return self._observation(), 0.0, True, False, {}
            self._obs = 1.0
            return self._observation(), 0.0, False, False, {}
        reward = float(self.mean + self.np_random.normal())
        return self._observation(), reward, True, False, {}

    def true_q_values(self, observation: float, gamma: float) -> np.ndarray:
        n = int(self.action_space.n)
        if observation > 0.5:
            return np.full(n, self.mean)
        return np.array([0.0] + [gamma * self.mean] * (n - 1))


PROBES: tuple[type[Probe], ...] = (
    ConstantReward,
    ObservationReward,
    TwoStepDiscount,
    ActionReward,
    ObservationActionReward,
    TimeLimit,
)
"""Las sondas, de la más simple a la más completa."""


def probe_report(probe: Probe, q_function, gamma: float) -> list[dict]:
    """Compara los ``Q`` de un agente con los correctos en cada observación.

    Args:
        probe: la sonda.
        q_function: recibe un array ``(1,)`` y devuelve ``Q(s, ·)``.
        gamma: el descuento con el que se entrenó.

    Returns:
        Una fila por observación: ``observation``, ``learned``, ``expected`` y
        ``error`` (el mayor error absoluto).
    """
    rows = []
    for observation in probe.observations:
        learned = np.asarray(
            q_function(np.array([observation], dtype=np.float32)), dtype=float
        ).reshape(-1)
        expected = probe.true_q_values(observation, gamma)
        rows.append(
            {
                "observation": observation,
                "learned": learned,
                "expected": expected,
                "error": float(np.abs(learned - expected).max()),
            }
        )
    return rows
