"""Comprobaciones del módulo 02 · DQN (variantes: la referencia con otra pieza)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from helpers import dqn, gridworld
from helpers.bandits import epsilon_greedy
from helpers.checks import (
    Flow,
    Mistake,
    as_tuple,
    check_cases,
    check_gradients,
    check_procedure,
    compare_parameters,
    describe_difference,
    diagnoses,
    exercise,
    fail,
    patched,
    tensor,
    values_check,
    variant_of,
    with_args,
    with_messages,
)
from helpers.formatting import numbers, significant

MODULE = "02_dqn"


# Ejercicio 1 · la actualización de Q-learning
# (q_table, state, action, reward, next_state, terminated, alpha, gamma); la tabla
# (6 estados, 3 acciones) sale de la semilla i, la posición del caso.
Q_LEARNING_CASES = [
    (np.round(np.random.default_rng(i).normal(size=(6, 3)), 2), *case)
    for i, case in enumerate(
        [(0, 1, 0.0, 2, False, 0.5, 0.9), (4, 2, 1.0, 5, True, 0.5, 0.9)]
        + [(2, 0, -1.0, 2, False, 0.1, 0.99), (5, 1, 0.5, 1, False, 1.0, 0.5)]
        + [(1, 0, 2.0, 0, True, 0.3, 0.9), (3, 2, 0.0, 4, False, 0.2, 0.0)]
    )
]
ref_update = gridworld.q_learning_update
_changed = functools.partial(with_args, ref_update)  # con unos argumentos cambiados


def _with_future(future: Callable[..., Any]) -> Callable[..., Any]:
    """La referencia con otro «futuro» ``future(q, s, a, s')`` en el objetivo."""

    def update(q, s, a, r, s2, terminated, alpha, gamma):
        y = r if terminated else r + gamma * future(q, s, a, s2)
        return ref_update(q, s, a, y, s2, True, alpha, gamma)

    return update


Q_LEARNING_MISTAKES = with_messages(
    """
q_bootstraps_terminal: ¿Te apoyas en Q(s') aunque s' sea terminal? Si terminated es
    True, s' no tiene futuro: el objetivo es solo r, sin γ · max Q(s', a').
q_max_whole_table: max_a' Q(s', a') es el máximo de la fila de s'
    (q_table[next_state].max()), no el de toda la tabla.
q_max_wrong_axis: ¿max sobre el eje equivocado? q_table[next_state] es la fila de s',
    de forma (n_actions,): su máximo es max_a' Q(s', a').
q_current_state: El objetivo mira el estado siguiente: max_a' Q(s', a') con
    s' = next_state, no el estado actual.
q_same_action: Q-learning usa el máximo sobre todas las acciones de s'
    (max_a' Q(s', a')), no Q(s', a) con la misma acción.
q_mean_not_max: Q-learning usa el máximo de Q(s', ·), no la media.
q_no_alpha: ¿Olvidaste α? Q(s, a) se mueve una fracción α hacia el objetivo:
    Q + α · (y − Q).
q_gamma_on_reward: γ descuenta solo el futuro: y = r + γ · max Q(s', a') (r va sin γ).
q_step_sign: ¿El signo? Q(s, a) debe acercarse al objetivo: Q + α · (y − Q).
""",
    ("q_bootstraps_terminal", _changed(terminated=False)),
    ("q_max_whole_table", _with_future(lambda q, s, a, s2: q.max())),
    ("q_max_wrong_axis", _with_future(lambda q, s, a, s2: q.max(0)[s2])),
    ("q_current_state", _with_future(lambda q, s, a, s2: q[s].max())),
    ("q_same_action", _with_future(lambda q, s, a, s2: q[s2, a])),
    ("q_mean_not_max", _with_future(lambda q, s, a, s2: q[s2].mean())),
    ("q_no_alpha", _changed(alpha=1.0)),
    ("q_gamma_on_reward", _changed(reward=lambda c: c.gamma * c.reward)),
    ("q_step_sign", _changed(alpha=lambda c: -c.alpha)),
)
_NO_RETURN = "q_learning_update no devuelve nada: termina con `return q_table`."

check_q_learning_update = values_check(
    MODULE,
    "q_learning_update",
    ref_update,
    Q_LEARNING_MISTAKES,
    Q_LEARNING_CASES,
    may_modify=(0,),  # puede modificar la tabla, y debe devolverla
    view=lambda out, *_: fail(_NO_RETURN, "returns_none") if out is None else out,
)


# Ejercicio 2 · un episodio de Q-learning
_EPISODE = diagnoses(
    """
episode_no_reset: Tu episodio dio un paso sin llamar antes a env.reset(): cada
    episodio empieza en la salida, con state, _ = env.reset().
episode_steps_after_end: Tu episodio siguió dando pasos después de acabar: para y
    devuelve en cuanto terminated o truncated sea True (cualquiera de los dos).
episode_wrong_order: Repasa el orden: reset y, en cada paso, elegir con
    epsilon_greedy(q_table[state], epsilon, rng), env.step, actualizar Q(s, a) y pasar
    al estado siguiente. Y pasa a q_learning_update los argumentos en el orden de su
    firma: (q_table, state, action, reward, next_state, terminated, alpha, gamma).
"""
)


class WatchedGridWorld(gridworld.GridWorld):
    """El tablero, vigilando el ``reset`` y que no se dé un paso tras el final."""

    ended = reset_done = False

    def reset(self, seed: int | None = None) -> tuple[int, dict]:
        self.ended, self.reset_done = False, True
        return super().reset(seed)

    def step(self, action: int) -> tuple[int, float, bool, bool, dict]:
        if self.ended:
            ids = ("episode_no_reset", "episode_steps_after_end")
            _EPISODE[ids[self.reset_done]].fail()
        result = super().step(int(action))
        self.ended = bool(result[2] or result[3])
        return result


# (semilla, episodios, alpha, gamma, epsilon)
EPISODE_CASES = [(0, 3, 0.5, 0.9, 0.2), (1, 2, 0.3, 0.8, 0.5)]
TRUNCATED_CASES = [(3, 2, 0.5, 0.9, 0.1), (4, 3, 0.4, 0.95, 0.3)]
# Con este margen, ningún episodio de EPISODE_CASES queda truncado.
LONG_EPISODES = 10_000
_RETURNS = "q_learning_episode debe devolver (q_table, episode_return, length)"
EPISODE_USES = {"q_learning_update": ref_update, "epsilon_greedy": epsilon_greedy}
ref_episode = gridworld.q_learning_episode
#: Nunca explora y desempata por la primera acción: epsilon_greedy es np.argmax.
_GREEDY = SimpleNamespace(random=lambda: 1.0, choice=lambda options: options[0])


def _episode_table(seed: int, n_states: int, n_actions: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(0, 0.3, (n_states, n_actions)), 2)


def _play(function, env, q_table, case) -> list[tuple[np.ndarray, float, int]]:
    """(tabla, retorno, pasos) de los episodios de un caso, como en el cuaderno."""
    seed, n_episodes, alpha, gamma, epsilon = case
    rng = np.random.default_rng(seed)
    q_table = np.array(q_table, dtype=float)
    played = []
    for _ in range(n_episodes):
        env.reset_done = False  # cada llamada debe empezar con su reset
        out = function(env, q_table, alpha, gamma, epsilon, rng)
        out = as_tuple(out, 3, _RETURNS, mistake="episode_not_tuple")
        q_table = np.asarray(out[0], dtype=float)
        played.append((q_table.copy(), float(out[1]), int(out[2])))
    return played


def _updating(**changes: Any) -> Callable[..., Any]:
    """La referencia con la actualización llamada con ``changes`` cambiados."""
    return variant_of(ref_episode, update=_changed(**changes))


def _truncated_as_terminal(env, *args):
    """La referencia con ``terminated or truncated`` (el tope de pasos) por
    ``terminated``."""
    ended = _updating(terminated=lambda c: c.terminated or env.steps >= env.max_steps)
    return ended(env, *args)


EPISODE_MISTAKES = with_messages(
    """
episode_update_ignored: Tu tabla no cambia: no guardas la tabla que devuelve
    q_learning_update (puede ser una copia): q_table = q_learning_update(q_table, ...).
episode_greedy: Tu agente no explora: elige siempre la acción de mayor Q. Elige con
    epsilon_greedy(q_table[state], epsilon, rng), con el rng que recibes: explora con
    probabilidad ε y desempata al azar.
episode_updates_next_state: Actualizas Q(s', a) en lugar de Q(s, a): se actualiza la
    casilla desde la que se actuó. Cambia de estado después de actualizar.
episode_never_terminal: Pasas siempre terminated = False. En la meta o en la trampa, s'
    no tiene futuro y el objetivo no debe apoyarse en Q(s'): pasa a q_learning_update
    el terminated que devuelve env.step.
""",
    ("episode_update_ignored", _updating(alpha=0)),  # la tabla no cambia
    ("episode_greedy", with_args(ref_episode, rng=_GREEDY)),
    ("episode_updates_next_state", _updating(state=lambda c: c.next_state)),
    ("episode_never_terminal", _updating(terminated=0)),
)
TRUNCATED_MISTAKES = with_messages(
    """
episode_truncated_as_terminal: Truncar por límite de tiempo no hace terminal a s': la
    actualización se apoya en Q(s'). Pasa a q_learning_update terminated, no
    terminated or truncated (truncated solo sirve para parar).
""",
    ("episode_truncated_as_terminal", _truncated_as_terminal),
    *EPISODE_MISTAKES,  # también explican lo que pasa aquí
)


def _check_episodes(student, case, zero, max_steps, described, truncated=False):
    """Los episodios de ``case`` (desde ceros o no); los del estudiante, vigilados."""
    start = np.zeros((20, 4)) if zero else _episode_table(case[0], 20, 4)

    def run(function: Any) -> Any:
        env_class = WatchedGridWorld if function is student else gridworld.GridWorld
        return _play(function, env_class(max_steps=max_steps), start, case)

    def diff(got: Any, want: Any) -> str:
        for k, ((q, ret, length), (q_ref, ret_ref, length_ref)) in enumerate(
            zip(got, want, strict=True), start=1
        ):
            if length != length_ref:
                return (
                    f"{described}, el episodio {k} duró {length} pasos y debía "
                    f"durar {length_ref} (length cuenta los env.step del episodio)."
                )
            if not np.isclose(ret, ret_ref):
                return (
                    f"{described}, el retorno del episodio {k} es {significant(ret)} "
                    f"y debía ser {significant(ret_ref)}: la suma de las "
                    "recompensas del episodio."
                )
            if q.shape != q_ref.shape or not np.allclose(q, q_ref, atol=1e-9):
                difference = (
                    f"devuelve una tabla de forma {q.shape}"
                    if q.shape != q_ref.shape
                    else describe_difference(q, q_ref, atol=1e-9)
                )
                return f"{described}, tras el episodio {k} tu función {difference}"
        return ""

    def same(got: Any, want: Any) -> bool:
        return not diff(got, want)

    def order(got: Any, want: Any) -> None:
        # Sin truncar, la misma duración y el mismo retorno con otra tabla.
        if not truncated and "tu función devuelve" in diff(got, want):
            said = _EPISODE["episode_wrong_order"]
            fail(f"{diff(got, want)}\n{said.message}", said.id)

    rows = TRUNCATED_MISTAKES if truncated else EPISODE_MISTAKES
    check_procedure(
        student, ref_episode, rows, run=run, same=same, describe=diff, unexplained=order
    )


@exercise(MODULE, "q_learning_episode", uses=EPISODE_USES)
def check_q_learning_episode(
    q_learning_episode, cases=EPISODE_CASES, zero_table: bool = True
) -> None:
    """Sin truncar, desde ceros y (``zero_table``) desde una tabla sin ceros."""
    extra = [((2, 2, 0.5, 0.9, 0.3), False)] if zero_table else []
    for case, zero in [(case, zero_table) for case in cases] + extra:
        seed, _, alpha, gamma, epsilon = case
        described = (
            f"Con rng = np.random.default_rng({seed}), α = {significant(alpha)}, "
            f"γ = {significant(gamma)} y ε = {significant(epsilon)}"
            + ("" if zero else ", empezando con una tabla sin ceros")
        )
        _check_episodes(q_learning_episode, case, zero, LONG_EPISODES, described)


@exercise(MODULE, "q_learning_episode", uses=EPISODE_USES)
def check_q_learning_episode_truncated(
    q_learning_episode, cases=TRUNCATED_CASES, max_steps: int = 4
) -> None:
    """Con ``max_steps`` pasos, truncado: para y su último paso usa ``Q(s')``."""
    for case in cases:
        described = (
            f"Con un límite de {max_steps} pasos (el episodio queda truncado) y "
            f"rng = np.random.default_rng({case[0]})"
        )
        _check_episodes(q_learning_episode, case, False, max_steps, described, True)


# Ejercicio 3 · el calendario lineal de ε
ref_epsilon = dqn.linear_epsilon
EPSILON_MISTAKES = with_messages(
    """
epsilon_no_clip: Pasado el paso duration, ε debe quedarse en end; tu ε sigue bajando (y
    acaba negativo). Limita la fracción: min(step / duration, 1).
epsilon_off_by_one_end: Error de uno: tu ε llega a end en el paso duration − 1; debe
    llegar justo en el paso duration (fracción step / duration).
epsilon_off_by_one_start: Error de uno: en el paso 0 ε debe valer start; tu ε ya ha
    bajado un paso (¿usaste step + 1?).
epsilon_reversed: ¿Al revés? ε empieza en start (mucha exploración) y baja hacia end.
epsilon_integer_division: ¿División entera? step // duration vale 0 hasta el final:
    usa step / duration.
""",
    # la recta, sin min(·, 1)
    ("epsilon_no_clip", lambda t, s, e, d: s + t / d * (e - s)),
    ("epsilon_off_by_one_end", lambda *a: ref_epsilon(*a[:3], a[3] - 1)),
    ("epsilon_off_by_one_start", lambda t, *a: ref_epsilon(t + 1, *a)),
    ("epsilon_reversed", lambda t, s, e, d: ref_epsilon(t, e, s, d)),
    ("epsilon_integer_division", lambda t, *a: ref_epsilon(t - t % a[2], *a)),
)
EPS_CASES = (
    [(0, 1.0, 0.05, 100), (50, 1.0, 0.05, 100), (1, 1.0, 0.0, 10), (9, 1.0, 0.1, 10)]
    + [(10, 1.0, 0.1, 10), (100, 1.0, 0.05, 100), (250, 1.0, 0.05, 100)]
    + [(3, 0.5, 0.5, 4)]
)
check_linear_epsilon = values_check(
    MODULE, "linear_epsilon", ref_epsilon, EPSILON_MISTAKES, EPS_CASES, returns="float"
)


# Ejercicio 4 · objetivos TD con la máscara de estados terminales
TD_CASES = [
    (tensor(rewards), tensor(next_q_values), tensor(terminated), gamma)
    for rewards, next_q_values, terminated, gamma in [
        ([1, 1, 0, -1], [[2, 3], [0.5, -1], [4, 1], [-2, -3]], [0, 1, 0, 1], 0.9),
        ([0.5, 2, 1], [[1, 7, 2], [3, 0, -1], [5, 4, 6]], [0, 0, 1], 0.5),
        ([1, 1], [[10, 20], [30, 40]], [1, 1], 0.99),
        ([0, 0, 3, 1, 1], [[1, 2], [2, 1], [0, 0], [5, -5], [1, 1.5]], [0] * 5, 0.99),
        ([0.5], [[1, -2, 3]], [0], 0.9),  # una sola transición (B = 1): también vale
    ]
]
ref_td = dqn.td_targets
_TD_NO_MASK = with_args(ref_td, terminated=0)  # también en la pérdida
TD_MISTAKES = with_messages(
    """
td_no_mask: Sumas el futuro de estados terminales: si terminated = 1, s' no tiene
    futuro y el objetivo es solo r. Multiplica el futuro por (1 − terminated).
td_mask_on_reward: La máscara solo anula el futuro: en un paso terminal la recompensa r
    sí cuenta. y = r + γ · (1 − terminated) · max Q(s', ·).
td_mask_reversed: ¿La máscara al revés? El futuro se anula cuando terminated = 1:
    multiplica por (1 − terminated), no por terminated.
td_max_wrong_dim: ¿max sobre el eje equivocado? next_q_values tiene forma
    (B, n_actions): el máximo sobre las acciones es max(dim=1).
td_mean_not_max: Q-learning usa el máximo sobre las acciones de s', no la media.
td_no_gamma: ¿Olvidaste multiplicar el futuro por γ?
td_gamma_on_reward: γ descuenta solo el futuro: y = r + γ · (1 − terminated) ·
    max Q(s', ·), sin γ delante de r.
""",
    ("td_no_mask", _TD_NO_MASK),
    ("td_mask_on_reward", lambda r, q, d, g: ref_td(r * (1 - d), q, d, g)),
    ("td_mask_reversed", lambda r, q, d, g: ref_td(r, q, 1 - d, g)),
    ("td_max_wrong_dim", lambda r, q, d, g: ref_td(r, q.T, d, g)),
    ("td_mean_not_max", lambda r, q, *a: ref_td(r, q.mean(1, True), *a)),
    ("td_no_gamma", with_args(ref_td, gamma=1.0)),
    ("td_gamma_on_reward", lambda r, q, d, g: ref_td(g * r, q, d, g)),
)
_TD = diagnoses(
    """
td_not_tensor: td_targets debe devolver un tensor de PyTorch (la pérdida lo combina con
    la salida de la red), no {kind}.
td_keepdim: td_targets devolvió forma {shape}; debía ser ({n},). ¿Usaste keepdim=True
    en el max? Con (B, 1) + (B,) PyTorch difunde a (B, B).
"""
)


def _td_view(out: Any, rewards: Any, *_: Any) -> Any:
    """La salida, si es un tensor y no tiene la forma (B, B) del keepdim."""
    if not isinstance(out, torch.Tensor):
        _TD["td_not_tensor"].fail(kind=type(out).__name__)
    if out.ndim == 2:
        _TD["td_keepdim"].fail(shape=tuple(out.shape), n=len(rewards))
    return out


check_td_targets = values_check(
    MODULE, "td_targets", ref_td, TD_MISTAKES, TD_CASES, view=_td_view
)


# Ejercicio 5 · un lote del búfer de repetición
def tagged_buffer(capacity: int, size: int, obs_dim: int = 4, n_actions: int = 2):
    """Un búfer cuya casilla ``i`` guarda, con ``v = i + 1``, ``s = [v, −v, ...]``,
    ``s' = s + 0,5``, ``a = i mod n_actions``, ``r = 10 v`` y ``terminated = (i mod 3
    == 0)``."""
    buffer = dqn.ReplayBuffer(capacity, obs_dim)
    for i in range(size):
        slot = i % capacity
        obs = np.full(obs_dim, float(slot + 1), dtype=np.float32)
        obs[1::2] *= -1
        buffer.add(obs, slot % n_actions, 10.0 * (slot + 1), obs + 0.5, slot % 3 == 0)
    return buffer


BATCH_FIELDS = ("observations", "actions", "rewards", "next_observations", "terminated")
_BATCH = diagnoses(
    """
batch_not_dict: sample_batch debe devolver un diccionario con las claves observations,
    actions, rewards, next_observations y terminated; devolvió {kind}.
batch_missing_keys: Al lote le faltan las claves: {missing}.
batch_not_tensor: batch['{key}'] es {kind}; debe ser un tensor de PyTorch (por ejemplo
    torch.as_tensor(...)).
batch_wrong_shape: batch['{key}'] tiene forma {shape}; debía ser {want} (batch_size =
    {batch_size}, obs_dim = {obs_dim}).
batch_actions_not_int64: batch['{key}'] es {dtype}; debe ser torch.int64: gather solo
    acepta índices enteros int64.
batch_not_float32: batch['{key}'] es {dtype}; debe ser torch.float32, el tipo de los
    pesos de la red (float64 daría un error al mezclarlos).
batch_empty_slots: El lote trae casillas vacías del búfer, a cero, nunca escritas.
    Muestrea solo entre las `buffer.size` llenas, no entre las `buffer.capacity`.
batch_misaligned: Las transiciones del lote están desalineadas: la acción, la
    recompensa o s' de la fila i no son los de su observación. Usa los mismos índices
    para todos los campos.
batch_modifies_buffer: sample_batch modificó el búfer: solo debe leerlo.
batch_ignores_rng: Con el mismo rng (misma semilla) salieron lotes distintos. Usa el
    rng que recibes (rng.integers o rng.choice), no np.random ni torch.randint.
batch_skips_last: La última transición guardada no sale nunca. rng.integers(0, n) ya
    excluye n: el límite es `buffer.size`, no `buffer.size − 1`.
batch_skips_first: La primera transición del búfer no sale nunca: ¿empiezas en 1?
batch_not_uniform: El muestreo no es uniforme entre las casillas llenas. Frecuencias:
    {frequencies} (cada una debería ser ≈ {each}).
batch_full_buffer_position: Con el búfer lleno deben poder salir todas las casillas;
    salieron solo {seen}. ¿Usas `buffer.position` como límite?
"""
)


def _check_one_batch(batch: Any, batch_size: int, obs_dim: int) -> None:
    if not isinstance(batch, dict):
        _BATCH["batch_not_dict"].fail(kind=type(batch).__name__)
    if missing := [k for k in BATCH_FIELDS if k not in batch]:
        _BATCH["batch_missing_keys"].fail(missing=", ".join(missing))
    for key in BATCH_FIELDS:
        if not isinstance(batch[key], torch.Tensor):
            _BATCH["batch_not_tensor"].fail(key=key, kind=type(batch[key]).__name__)
    sizes = {"batch_size": batch_size, "obs_dim": obs_dim}
    for key in BATCH_FIELDS:
        want = (batch_size, obs_dim) if "observations" in key else (batch_size,)
        if (shape := tuple(batch[key].shape)) != want:
            _BATCH["batch_wrong_shape"].fail(key=key, shape=shape, want=want, **sizes)
        int64 = key == "actions"
        if batch[key].dtype != (torch.int64 if int64 else torch.float32):
            wrong = "batch_actions_not_int64" if int64 else "batch_not_float32"
            _BATCH[wrong].fail(key=key, dtype=batch[key].dtype)


def _slots(batch: dict, size: int, n_actions: int = 2) -> np.ndarray:
    """Las casillas de las transiciones, si están llenas y alineadas."""
    slots = batch["observations"][:, 0].numpy().astype(float) - 1
    if (slots < 0).any() or (slots >= size).any():
        _BATCH["batch_empty_slots"].fail()
    index = slots.astype(int)
    if not (
        np.allclose(batch["next_observations"][:, 0].numpy() - 1.5, slots)
        and np.allclose(batch["rewards"].numpy() / 10.0 - 1, slots)
        and np.array_equal(batch["actions"].numpy(), index % n_actions)
        and np.array_equal(batch["terminated"].numpy(), index % 3 == 0)
    ):
        _BATCH["batch_misaligned"].fail()
    return index


@exercise(MODULE, "sample_batch")
def check_sample_batch(
    sample_batch, capacity: int = 10, size: int = 6, obs_dim: int = 4, seed: int = 0
) -> None:
    """Comprueba ``sample_batch(buffer, batch_size, rng)`` con un búfer marcado."""
    buffer = tagged_buffer(capacity, size, obs_dim)
    before = copy.deepcopy(buffer.__dict__)
    batch = sample_batch(buffer, 5, np.random.default_rng(seed))
    _check_one_batch(batch, 5, obs_dim)
    _slots(batch, size)
    if any(not np.array_equal(before[k], v) for k, v in buffer.__dict__.items()):
        _BATCH["batch_modifies_buffer"].fail()
    again = sample_batch(buffer, 5, np.random.default_rng(seed))
    if not torch.equal(batch["observations"], again["observations"]):
        _BATCH["batch_ignores_rng"].fail()
    rng = np.random.default_rng(seed + 1)
    counts = sum(
        np.bincount(_slots(sample_batch(buffer, 8, rng), size), minlength=size)
        for _ in range(600)
    )
    if counts[-1] == 0:
        _BATCH["batch_skips_last"].fail()
    if counts[0] == 0:
        _BATCH["batch_skips_first"].fail()
    frequencies = counts / counts.sum()
    if np.abs(frequencies - 1 / size).max() > 0.04:
        _BATCH["batch_not_uniform"].fail(
            frequencies=numbers(np.round(frequencies, 3), 3),
            each=significant(round(1 / size, 3)),
        )
    # Con el búfer lleno y dado la vuelta, todas las casillas cuentan.
    full = tagged_buffer(capacity, capacity + 3, obs_dim)
    seen = set()
    for _ in range(200):
        seen |= set(_slots(sample_batch(full, 8, rng), capacity).tolist())
    if seen != set(range(capacity)):
        _BATCH["batch_full_buffer_position"].fail(seen=sorted(seen))


# Ejercicio 6 · la pérdida de DQN
# (semilla, tamaño del lote, obs_dim, n_actions, gamma)
LOSS_CASES = [(0, 5, 3, 2, 0.9), (1, 4, 2, 3, 0.99), (2, 6, 4, 2, 0.5)]
ref_loss = dqn.dqn_loss


def _networks(seed: int, obs_dim: int, n_actions: int, stale: bool = False) -> list:
    """Red Q y red objetivo por semilla; con ``stale``, la Q trae gradientes."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        networks = [dqn.make_q_network(obs_dim, n_actions, hidden=8) for _ in range(2)]
        if stale:
            networks[0](torch.randn(4, obs_dim)).pow(2).sum().backward()
    return networks


def loss_problem(seed: int, batch_size: int, obs_dim: int, n_actions: int) -> tuple:
    """Redes y lote por semilla; recompensas grandes para separar Huber de MSE."""
    generator = torch.Generator().manual_seed(seed)
    q_network, target_network = _networks(seed, obs_dim, n_actions)
    batch = {
        "observations": torch.randn(batch_size, obs_dim, generator=generator),
        "actions": torch.randint(0, n_actions, (batch_size,), generator=generator),
        "rewards": 3.0 * torch.randn(batch_size, generator=generator),
        "next_observations": torch.randn(batch_size, obs_dim, generator=generator),
        "terminated": (torch.arange(batch_size) % 2 == 0).float(),
    }
    return q_network, target_network, batch


def _named(value: Any, label: str) -> Any:
    """``value`` con ``label`` por repr, para que los mensajes lo nombren."""
    kind = type(type(value).__name__, (type(value),), {"__repr__": lambda _: label})
    if isinstance(value, dict):
        return kind(value)
    value.__class__ = kind
    return value


def _loss_cases(cases: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Los argumentos de ``dqn_loss`` de cada caso."""
    built = []
    for seed, size, obs_dim, n, gamma in cases:
        lote = f"<lote de prueba {seed}: {size} transiciones, {n} acciones>"
        names = ("q_network", "target_network", lote)
        built.append((*map(_named, loss_problem(seed, size, obs_dim, n), names), gamma))
    return built


def _loss(loss: Callable[..., Any] = F.smooth_l1_loss, **options: Any) -> Any:
    """La referencia con ``loss(Q(s, a), objetivo, **options)`` por pérdida."""
    chosen = functools.partial(loss, **options)
    return patched(ref_loss, F=SimpleNamespace(smooth_l1_loss=chosen))


def _q_as(change: Callable[[Any], Any]) -> Callable[..., Any]:
    """La referencia con ``change(q)`` como salida de la red Q."""
    return with_args(ref_loss, q_network=lambda c: lambda s: change(c.q_network(s)))


_LOSS = diagnoses(
    """
loss_not_scalar: dqn_loss debe devolver un tensor escalar (un solo número): la media de
    la pérdida de Huber sobre el lote, no una pérdida por transición.
loss_no_grad: La pérdida no tiene gradiente: no la conviertas a float (.item()) ni
    uses torch.no_grad() o .detach() sobre Q(s, a). Solo el objetivo va sin gradiente.
loss_grad_into_target: El gradiente fluye hacia target_network: el objetivo TD debe
    ser una constante. Calcula target_network(...) dentro de `with torch.no_grad():`
    (o usa .detach()).
"""
)
_NOT_SCALAR = _LOSS["loss_not_scalar"]  # la fila y la forma mala en los gradientes
LOSS_MISTAKES = with_messages(
    """
loss_mse: ¿Error cuadrático en lugar de Huber? DQN usa la pérdida de Huber
    (F.smooth_l1_loss): con errores TD grandes el gradiente no explota.
loss_sum: ¿Sumaste en lugar de promediar? La pérdida es la media sobre el lote (así el
    paso no depende del tamaño del lote).
loss_no_mask: Sumas el futuro de estados terminales: el objetivo debe multiplicar el
    futuro por (1 − terminated). Usa tu td_targets.
loss_online_target: El objetivo se calcula con target_network, no con q_network: esa es
    la gracia de la red objetivo (un blanco que no se mueve en cada paso).
loss_max_not_gather: Usa Q(s, a) de la acción tomada (batch['actions']) con gather, no
    max_a Q(s, a): la pérdida corrige solo el valor de lo que se hizo.
loss_gather_wrong_dim: ¿gather sobre el eje equivocado? Las acciones eligen columnas de
    q_values, de forma (B, n_actions): q_values.gather(1, actions.unsqueeze(1)).
loss_no_squeeze: ¿Falta .squeeze(1)? Q(s, a) sale con forma (B, 1) y el objetivo (B,):
    PyTorch los difunde a (B, B) y compara cada Q con todos los objetivos.
""",
    ("loss_mse", _loss(F.mse_loss)),
    ("loss_sum", _loss(reduction="sum")),
    Mistake("loss_not_scalar", _loss(reduction="none"), _NOT_SCALAR.message),
    ("loss_no_mask", patched(ref_loss, td_targets=_TD_NO_MASK)),
    ("loss_online_target", lambda qn, tn, b, g: ref_loss(qn, qn, b, g)),
    # el máximo de cada fila, tome la acción que tome
    ("loss_max_not_gather", _q_as(lambda q: q.amax(1, True).expand_as(q))),
    # gather(0, a): la fila a_i, primera columna
    ("loss_gather_wrong_dim", _q_as(lambda q: q[:, 0].expand(len(q), -1))),
    ("loss_no_squeeze", _loss(lambda q, y: F.huber_loss(q[:, None], y))),
)

# Con los objetivos TD de referencia: un error en td_targets ya cuenta en su
# ejercicio y no debe costar puntos también aquí.
LOSS_USES = {"td_targets": dqn.td_targets}


@exercise(MODULE, "dqn_loss", uses=LOSS_USES)
def check_dqn_loss(dqn_loss, cases=LOSS_CASES) -> None:
    """Comprueba el valor de ``dqn_loss(q_network, target_network, batch, gamma)``."""
    check_cases(dqn_loss, "dqn_loss", _loss_cases(cases), ref_loss, LOSS_MISTAKES)


@exercise(MODULE, "dqn_loss", uses=LOSS_USES)
def check_dqn_loss_gradients(dqn_loss, cases=LOSS_CASES) -> None:
    """El gradiente de ``dqn_loss``: a la red Q, el de referencia; al objetivo, no."""
    check_gradients(
        dqn_loss,
        "dqn_loss",
        _loss_cases(cases),
        ref_loss,
        LOSS_MISTAKES,
        prefix="loss",
        wrt={
            "q_network": Flow(True, "loss_wrong_gradients"),
            "target_network": Flow(False, _LOSS["loss_grad_into_target"]),
        },
        mistake="loss_wrong_gradients",
        hint="¿Cortaste el gradiente en alguna parte de Q(s, a), o la pérdida no es "
        "la media de la Huber?",
        without_gradient=_LOSS["loss_no_grad"],
        wrong_shape=_NOT_SCALAR,
    )


# Ejercicio 7 · una actualización de DQN
ref_dqn_update = dqn.dqn_update


def update_problem(seed: int, stale_gradients: bool = True) -> tuple:
    """Las redes de :func:`_networks` y un búfer de 11 transiciones, por semilla."""
    obs_dim, n_actions = 3, 2
    q_network, target_network = _networks(seed, obs_dim, n_actions, stale_gradients)
    rng = np.random.default_rng(seed + 100)
    buffer = dqn.ReplayBuffer(16, obs_dim)
    for i in range(11):
        s = rng.normal(size=obs_dim).astype(np.float32)
        a, r = int(rng.integers(n_actions)), float(3 * rng.normal())
        buffer.add(s, a, r, rng.normal(size=obs_dim).astype(np.float32), i % 3 == 0)
    return q_network, target_network, buffer


def update_config(**fields: Any) -> dqn.DQNConfig:
    """Lo que lee ``dqn_update``; por defecto, sin recorte ni copia de la red."""
    defaults = {"batch_size": 6, "gamma": 0.9, "max_grad_norm": 1e9}
    return dqn.DQNConfig(**defaults | {"target_every": 10**9} | fields)


def _optimizer(**methods: Callable[[], None]) -> Callable[..., Any]:
    """``dqn_update`` de referencia con un optimizador que cambia ``methods``."""

    def optimizer(c: Any) -> Any:
        kept = {"zero_grad": c.optimizer.zero_grad, "step": c.optimizer.step}
        return SimpleNamespace(**kept | methods)

    return with_args(ref_dqn_update, optimizer=optimizer)


def _clipping(clip: Callable[..., Any]) -> Callable[..., Any]:
    """``dqn_update`` de referencia con ``clip`` en lugar de ``clip_grad_norm_``."""
    utils = SimpleNamespace(clip_grad_norm_=clip)
    return patched(ref_dqn_update, nn=SimpleNamespace(utils=utils))


def _clip_after_step(q_network: torch.nn.Module, *args: Any) -> float:
    loss = _clipping(lambda *_: None)(q_network, *args)
    torch.nn.utils.clip_grad_norm_(q_network.parameters(), args[-1].max_grad_norm)
    return loss


UPDATE_MISTAKES = with_messages(
    """
update_no_zero_grad: ¿Borras los gradientes viejos? La red trae los de la actualización
    anterior y backward les suma los nuevos: optimizer.zero_grad() antes de backward.
update_step_before_backward: ¿optimizer.step() antes de loss.backward()? step mueve los
    pesos con los gradientes que hay en ese momento: primero backward, después step.
""",
    ("update_no_zero_grad", _optimizer(zero_grad=lambda: None)),
    # el paso, con los gradientes recién borrados, no mueve nada
    ("update_step_before_backward", _optimizer(step=lambda: None)),
)
CLIP_MISTAKES = with_messages(
    """
update_no_clip: ¿Recortas el gradiente? Su norma en este lote supera max_grad_norm, y
    tu paso es el del gradiente entero. Recorta la norma de todos los gradientes de
    q_network juntos entre backward y step.
update_clip_after_step: Recortas después de optimizer.step(): el paso ya se dio con el
    gradiente entero. El recorte va entre backward y step.
update_clip_value: Recortas cada componente por separado (clip_grad_value_); DQN
    recorta la norma del gradiente entero (clip_grad_norm_), que conserva su dirección.
""",
    ("update_no_clip", _clipping(lambda *_: None)),
    ("update_clip_after_step", _clip_after_step),
    ("update_clip_value", _clipping(torch.nn.utils.clip_grad_value_)),
)

UPDATE_CASES = [(0, "sgd", 7), (1, "sgd", 250)]  # (semilla, optimizador, paso)
CLIP_CASES = [(2, "sgd", 3)]
CLIP_NORM = 0.1
_AN_UPDATE = "una actualización"
UPDATE_USES = {"sample_batch": dqn.sample_batch, "dqn_loss": dqn.dqn_loss}


def _snapshot(network: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in network.state_dict().items()}


def _same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        torch.allclose(a[k], b[k], atol=1e-6, rtol=1e-4, equal_nan=True) for k in a
    )


def _updated(seed, kind, step, config, stale_gradients, function) -> tuple:
    """Lo devuelto, los pesos de la red Q y la norma del gradiente que queda (que
    separa recortar tras el paso de no recortar)."""
    q_network, target_network, buffer = update_problem(seed, stale_gradients)
    make, lr = (torch.optim.Adam, 0.01) if kind == "adam" else (torch.optim.SGD, 0.1)
    optimizer = make(q_network.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    loss = function(q_network, target_network, optimizer, buffer, rng, step, config)
    grads = [p.grad.reshape(-1) for p in q_network.parameters() if p.grad is not None]
    norm = torch.cat(grads).norm() if grads else torch.tensor(float("nan"))
    return loss, _snapshot(q_network), {"norma": norm}


def _weights_differ(got: tuple, want: tuple, where: str) -> bool:
    """Qué parámetro difiere; ``True`` si ninguno (con su tolerancia)."""
    compare_parameters(got[1], want[1], what=where, mistake="update_wrong_weights")
    return True


def _check_update(
    dqn_update, cases, config=None, stale=True, rows=UPDATE_MISTAKES, what=_AN_UPDATE
) -> list:
    """La red Q tras cada caso; devuelve las pérdidas (estudiante, referencia)."""
    config, losses = config or update_config(), []
    for seed, kind, step in cases:
        run = functools.partial(_updated, seed, kind, step, config, stale)
        where = f"la red Q tras {what} (semilla {seed}, {kind.upper()})"
        got = check_procedure(
            dqn_update,
            ref_dqn_update,
            rows,
            run=run,
            same=lambda got, want: _same_state(got[1], want[1]),
            same_as_mistake=lambda got, bad: all(map(_same_state, got[1:], bad[1:])),
            describe=lambda got, want: f"La red Q no queda como debía tras {what}.",
            unexplained=functools.partial(_weights_differ, where=where),
        )
        losses.append((got[0], run(ref_dqn_update)[0]))
    return losses


_UPDATE = diagnoses(
    """
update_loss_not_float: dqn_update debe devolver la pérdida como un float de Python
    (loss.item()), no {kind}: así el bucle la guarda sin retener el grafo.
update_wrong_loss: La red queda bien, pero devolviste {got} y la pérdida del lote era
    {want}. Devuelve la pérdida que usaste para el paso.
target_shares_memory: La red objetivo comparte sus tensores con la red Q y se mueve con
    ella. Copia los valores: target_network.load_state_dict(q_network.state_dict()).
target_copied_before_step: En el paso {step} (múltiplo de target_every = {every})
    copiaste la red Q de antes del paso de gradiente: la copia va al final, con los
    pesos ya actualizados.
target_not_copied: En el paso {step}, múltiplo de target_every = {every}, la red
    objetivo no cambió: copia en ella los pesos de la red Q (target_network =
    q_network solo cambia un nombre dentro de tu función).
target_copied_off_schedule: En el paso {step}, que no es múltiplo de target_every =
    {every}, copiaste la red Q; debía seguir igual {since}. Copia solo cuando
    step % target_every == 0.
target_wrong: Tras el paso {step}, la red objetivo no es ni la anterior ni una copia de
    la red Q: solo cambia copiando la red Q, en los pasos múltiplos de target_every.
"""
)


@exercise(MODULE, "dqn_update", uses=UPDATE_USES)
def check_dqn_update(dqn_update, cases=UPDATE_CASES) -> None:
    """El paso de gradiente, con gradientes viejos, y la pérdida devuelta."""
    for loss, ref in _check_update(dqn_update, cases):
        if not isinstance(loss, float | int | np.floating):  # ni un tensor
            _UPDATE["update_loss_not_float"].fail(kind=type(loss).__name__)
        if not np.isclose(float(loss), ref, atol=1e-6, rtol=1e-5):
            _UPDATE["update_wrong_loss"].fail(
                got=significant(float(loss)), want=significant(ref)
            )


@exercise(MODULE, "dqn_update", uses=UPDATE_USES)
def check_dqn_update_clipping(
    dqn_update, cases=CLIP_CASES, max_grad_norm: float = CLIP_NORM
) -> None:
    """Una actualización con un ``max_grad_norm`` que el gradiente supera."""
    config = update_config(max_grad_norm=max_grad_norm)
    what = f"{_AN_UPDATE} con el gradiente recortado a {significant(max_grad_norm)}"
    _check_update(dqn_update, cases, config, False, CLIP_MISTAKES, what)


@exercise(MODULE, "dqn_update", uses=UPDATE_USES)
def check_dqn_update_target(
    dqn_update, steps: Iterable[int] = range(1, 7), target_every: int = 2, seed=4
) -> None:
    """La red objetivo: la red Q del último múltiplo de ``target_every``."""
    q_network, target_network, buffer = update_problem(seed)
    optimizer = torch.optim.SGD(q_network.parameters(), lr=0.1)
    rng = np.random.default_rng(seed)
    config = update_config(target_every=target_every)
    expected, synced_at = _snapshot(target_network), None
    for step in steps:
        before, previous_target = _snapshot(q_network), _snapshot(target_network)
        dqn_update(q_network, target_network, optimizer, buffer, rng, step, config)
        after, target = _snapshot(q_network), _snapshot(target_network)
        shared = {p.data_ptr() for p in q_network.parameters()}
        if shared & {p.data_ptr() for p in target_network.parameters()}:
            _UPDATE["target_shares_memory"].fail()
        multiple = step % target_every == 0
        if multiple:
            expected, synced_at = after, step
        if _same_state(target, expected):
            continue
        at = {"step": step, "every": target_every}
        if multiple and _same_state(target, before):
            _UPDATE["target_copied_before_step"].fail(**at)
        if multiple and _same_state(target, previous_target):
            _UPDATE["target_not_copied"].fail(**at)
        if not multiple and _same_state(target, after):
            since = f"desde el paso {synced_at}" if synced_at else "desde el principio"
            _UPDATE["target_copied_off_schedule"].fail(**at, since=since)
        _UPDATE["target_wrong"].fail(**at)
