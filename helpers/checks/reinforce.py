"""Comprobaciones del módulo 03 · REINFORCE."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from helpers import reinforce
from helpers.checks import as_array, check_cases, close, exercise, fail
from helpers.checks import call as guarded_call
from helpers.formatting import number

MODULE = "03_reinforce"


def _numbers(values: Any, decimals: int) -> str:
    """Varias cifras con coma decimal, separadas por «;»: «[0,33; 0; 0,67]»."""
    if isinstance(values, torch.Tensor):
        values = values.detach().numpy()
    return "[" + "; ".join(number(v, decimals) for v in np.ravel(values)) + "]"


# ---------------------------------------------------------------------------
# Ejercicio 1 · muestrear una acción y su log-probabilidad
# ---------------------------------------------------------------------------


def _split_pair(out: Any, call: str) -> tuple[Any, Any]:
    """``(acción, log-probabilidad)`` de lo que devolvió el estudiante."""
    if not isinstance(out, tuple | list) or len(out) != 2:
        fail(
            f"{call} debe devolver dos cosas, (acción, log-probabilidad), y devolvió "
            f"{type(out).__name__}."
        )
    return out[0], out[1]


def _actions_array(actions: Any, n: int, n_actions: int) -> np.ndarray:
    values = as_array(actions, "La acción")
    if values.size != n and n == 1:
        fail(
            f"Con logits de forma ({n_actions},), un solo estado, hace falta una sola "
            f"acción y devolviste algo de forma {values.shape}."
        )
    if values.size != n:
        fail(
            f"Con logits de forma ({n}, {n_actions}) hacían falta {n} acciones (una "
            f"por fila) y devolviste algo de forma {values.shape}."
        )
    values = values.reshape(-1)
    if not np.all(values == np.round(values)) or values.min() < 0:
        fail(
            "Las acciones deben ser índices enteros 0, 1, …, A − 1. ¿Devolviste "
            "probabilidades o logits en lugar del índice muestreado?"
        )
    if values.max() >= n_actions:
        fail(
            f"Hay acciones ≥ {n_actions}: solo existen los índices 0 a {n_actions - 1}."
        )
    return values.astype(int)


def _diagnose_log_prob(got: float, logits: torch.Tensor, action: int) -> str:
    """Un mensaje que explica una log-probabilidad equivocada de una acción."""
    logits = logits.detach().double()
    log_pi = torch.log_softmax(logits, dim=-1)
    want = float(log_pi[action])
    intro = (
        f"Para logits {_numbers(logits, 3)} y la acción muestreada {action}, "
        f"log π(a) = {number(want, 4)}, pero devolviste {number(got, 4)}."
    )
    if math.isclose(got, math.exp(want), abs_tol=1e-5):
        return intro + " Eso es π(a), la probabilidad: falta el logaritmo."
    if math.isclose(got, float(logits[action]), abs_tol=1e-5):
        return intro + (
            " Eso es el logit sin normalizar: log π(a) = logit(a) − log Σ_b "
            "exp(logit(b)) (o usa Categorical(logits=...).log_prob)."
        )
    if math.isclose(got, float(log_pi.max()), abs_tol=1e-5):
        return intro + (
            " Es la log-probabilidad de la acción más probable: debe ser la de la "
            "acción que muestreaste."
        )
    if math.isclose(got, float(torch.log_softmax(-logits, -1)[action]), abs_tol=1e-5):
        return intro + " ¿El signo? La softmax es de los logits, no de −logits."
    return intro


@exercise(MODULE, "sample_action", "Muestrear una acción con su log-probabilidad")
def check_sample_action(sample_action: Callable[..., Any], seed: int = 0) -> None:
    """Comprueba ``sample_action(logits)``: frecuencias, log-probabilidad, gradiente."""
    torch.manual_seed(seed)
    # 1. Un estado: una acción y su log-probabilidad, con gradiente.
    logits = torch.tensor([0.3, -1.2, 1.7], requires_grad=True)
    action, log_prob = _split_pair(sample_action(logits), "sample_action(logits)")
    action = int(_actions_array(action, 1, 3)[0])
    if not isinstance(log_prob, torch.Tensor):
        fail(
            "La log-probabilidad debe ser un tensor de PyTorch con gradiente (la "
            f"devolviste como {type(log_prob).__name__}): REINFORCE necesita "
            "derivarla. No uses .item(), float() ni NumPy."
        )
    if log_prob.numel() != 1:
        fail(
            "Con logits de forma (3,) la log-probabilidad debe ser un solo número; "
            f"tiene forma {tuple(log_prob.shape)}."
        )
    got = float(log_prob.detach().reshape(()))
    if not math.isclose(
        got, float(torch.log_softmax(logits, -1)[action]), abs_tol=1e-5
    ):
        fail(_diagnose_log_prob(got, logits, action))
    if not log_prob.requires_grad:
        fail(
            "Tu log-probabilidad no tiene gradiente respecto a los logits (¿detach, "
            ".item() o un tensor nuevo con torch.tensor(...)?). Sin él, "
            "loss.backward() no puede mover la política."
        )
    log_prob.reshape(()).backward()
    expected_grad = -torch.softmax(logits.detach(), -1)
    expected_grad[action] += 1.0
    if logits.grad is None or not close(logits.grad, expected_grad, atol=1e-5):
        fail(
            "El gradiente de tu log-probabilidad respecto a los logits debería ser "
            f"one_hot(a) − π = {_numbers(expected_grad, 4)}."
        )

    # 2. Un lote de estados: frecuencias de muestreo y log-probabilidades.
    n = 20_000
    base = torch.tensor([1.0, 0.0, -1.0, 2.0])
    pi = torch.softmax(base, -1).numpy()
    actions, log_probs = _split_pair(sample_action(base.repeat(n, 1)), "sample_action")
    actions = _actions_array(actions, n, 4)
    freq = np.bincount(actions, minlength=4) / n
    if freq[int(np.argmax(pi))] == 1.0:
        fail(
            "Siempre eliges la acción más probable (argmax): así la política no "
            "explora. Muestrea de la distribución, por ejemplo con "
            "Categorical(logits=logits).sample()."
        )
    if np.abs(freq - torch.softmax(-base, -1).numpy()).max() < 0.02:
        fail(
            "Tus frecuencias son las de softmax(−logits): ¿el signo? Las acciones "
            "con logit mayor deben salir más."
        )
    if np.abs(freq - 0.25).max() < 0.02:
        fail(
            "Eliges las cuatro acciones con la misma frecuencia: muestrea con las "
            "probabilidades softmax(logits), no uniformemente."
        )
    if np.abs(freq - pi).max() > 0.02:
        fail(
            f"Con logits {_numbers(base, 1)} las frecuencias deberían ser ≈ "
            f"{_numbers(pi, 3)} (softmax) y salieron {_numbers(freq, 3)}."
        )
    want = np.log(pi)[actions]
    got_batch = as_array(log_probs, "La log-probabilidad").reshape(-1)
    if got_batch.shape != want.shape:
        fail(
            f"Con logits de forma ({n}, 4) hacen falta {n} log-probabilidades, una "
            f"por fila; devolviste forma {got_batch.shape}."
        )
    if not close(got_batch, want, atol=1e-4):
        wrong = int(np.argmax(np.abs(got_batch - want)))
        fail(_diagnose_log_prob(float(got_batch[wrong]), base, int(actions[wrong])))

    # 3. Cada fila usa sus propios logits.
    rows = torch.tensor([[8.0, -8.0], [-8.0, 8.0]]).repeat(500, 1)
    actions, _ = _split_pair(sample_action(rows), "sample_action")
    actions = _actions_array(actions, 1000, 2)
    if (actions[0::2] == 0).mean() < 0.99 or (actions[1::2] == 1).mean() < 0.99:
        fail(
            "Con logits de forma (N, A) cada fila es un estado distinto: la acción "
            "de la fila i se muestrea de softmax(logits[i])."
        )

    # 4. Logits enormes: nada de exp que desborde.
    big = torch.tensor([1000.0, 1000.5, 999.0])
    overflow = (
        f"Con logits {_numbers(big, 1)} {{}}: exp(1000) desborda (inf / inf = nan). "
        "Usa torch.log_softmax o Categorical(logits=...), que restan el máximo "
        "antes de exponenciar."
    )
    try:
        action, log_prob = _split_pair(sample_action(big), "sample_action")
    except (ValueError, RuntimeError) as error:
        fail(overflow.format(f"tu función lanzó {type(error).__name__}"))
    action = int(_actions_array(action, 1, 3)[0])
    got = float(torch.as_tensor(log_prob).detach().reshape(()))
    if not math.isfinite(got):
        fail(overflow.format(f"tu log-probabilidad sale {got}"))
    if not math.isclose(got, float(torch.log_softmax(big, -1)[action]), abs_tol=1e-4):
        fail(_diagnose_log_prob(got, big, action))


# ---------------------------------------------------------------------------
# Ejercicio 2 · la log-densidad gaussiana
# ---------------------------------------------------------------------------


def _t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


GAUSSIAN_CASES = [
    (_t([[0.5], [-1.0], [2.0]]), _t([[0.0], [0.0], [1.0]]), _t([0.0])),
    (_t([[1.0, -2.0, 0.3]]), _t([[0.5, -1.0, 0.0]]), _t([-0.5, 0.2, 1.0])),
    (
        _t([[0.1, 0.2], [3.0, -1.0]]),
        _t([[0.0, 0.0], [1.0, 1.0]]),
        _t([[0.3, -0.7], [-1.2, 0.4]]),
    ),
    (_t([[60.0], [0.0]]), _t([[0.0], [0.0]]), _t([0.0])),
    (_t([[1.5, 1.5]]), _t([[1.5, 1.0]]), _t([-2.0, -2.0])),
]

_LOG_2PI = math.log(2 * math.pi)


def _gaussian(per_dim: Callable, reduce: str = "sum") -> Callable:
    """Una log-densidad con alguna variación de la fórmula por dimensión."""

    def log_prob(actions, mean, log_std):
        values = per_dim(actions, mean, log_std.expand_as(actions))
        return values.sum(-1) if reduce == "sum" else values.mean(-1)

    return log_prob


def _gaussian_naive(actions, mean, log_std):
    std = torch.exp(log_std)
    density = torch.exp(-0.5 * ((actions - mean) / std) ** 2) / (
        std * math.sqrt(2 * math.pi)
    )
    return torch.log(density).sum(-1)


GAUSSIAN_MISTAKES = [
    (
        _gaussian(
            lambda a, m, s: -0.5 * ((a - m) / s) ** 2 - torch.log(s) - 0.5 * _LOG_2PI
        ),
        "¿Usaste log_std como si fuera σ? Es su logaritmo: σ = exp(log_std).",
    ),
    (
        _gaussian(
            lambda a, m, s: (
                -0.5 * (a - m) ** 2 / torch.exp(s) - 0.5 * s - 0.5 * _LOG_2PI
            )
        ),
        "¿Tomaste log_std como log σ²? Es log σ: la varianza es exp(2·log_std).",
    ),
    (
        _gaussian(
            lambda a, m, s: -0.5 * ((a - m) * torch.exp(-s)) ** 2 - 0.5 * _LOG_2PI
        ),
        "Falta el término −log σ (la normalización de la densidad por su anchura).",
    ),
    (
        _gaussian(lambda a, m, s: -0.5 * ((a - m) * torch.exp(-s)) ** 2 - s),
        "Falta la constante −½·log(2π) en cada dimensión.",
    ),
    (
        _gaussian(
            lambda a, m, s: -0.5 * (a - m) ** 2 * torch.exp(-s) - s - 0.5 * _LOG_2PI
        ),
        "En el término cuadrático se divide por σ², no por σ: −(a − μ)² / (2σ²).",
    ),
    (
        _gaussian(
            lambda a, m, s: -(((a - m) * torch.exp(-s)) ** 2) - s - 0.5 * _LOG_2PI
        ),
        "Falta el ½ del término cuadrático: −(a − μ)² / (2σ²).",
    ),
    (
        _gaussian(
            lambda a, m, s: -0.5 * ((a - m) * torch.exp(-s)) ** 2 - s - 0.5 * _LOG_2PI,
            reduce="mean",
        ),
        "Promediaste las dimensiones: las d dimensiones son independientes, así que "
        "sus log-densidades se suman.",
    ),
    (
        _gaussian_naive,
        "Calculaste la densidad y luego su logaritmo: para una acción lejana "
        "exp(−z²/2) se redondea a 0 y log(0) = −inf. Escribe la fórmula "
        "directamente en escala logarítmica.",
    ),
]


@dataclass(frozen=True)
class _GaussianCase:
    """Los tres argumentos de un caso, mostrados como listas cortas."""

    actions: torch.Tensor
    mean: torch.Tensor
    log_std: torch.Tensor

    def __repr__(self) -> str:
        def show(x: torch.Tensor) -> str:
            return _numbers(x, 4)

        return (
            f"actions={show(self.actions)}, mean={show(self.mean)}, "
            f"log_std={show(self.log_std)}"
        )


def _on_case(function: Callable[..., Any]) -> Callable[[_GaussianCase], Any]:
    """``function(actions, mean, log_std)`` aplicada a un :class:`_GaussianCase`."""

    def call(case: _GaussianCase) -> Any:
        # Con copias, y falla si la función modifica alguna (nombrando cuál).
        return guarded_call(
            function, "gaussian_log_prob", case.actions, case.mean, case.log_std
        )

    return call


@exercise(MODULE, "gaussian_log_prob", "Log-densidad de una política gaussiana")
def check_gaussian_log_prob(
    gaussian_log_prob: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = GAUSSIAN_CASES,
) -> None:
    """Comprueba ``gaussian_log_prob(actions, mean, log_std)`` contra la fórmula."""
    cases = [_GaussianCase(*(torch.as_tensor(x) for x in case)) for case in cases]
    # Una acción de varias dimensiones: ¿devuelve una log-densidad por acción?
    wide = next((c for c in cases if c.actions.shape[-1] > 1), cases[0])
    shape = tuple(as_array(_on_case(gaussian_log_prob)(wide), "El resultado").shape)
    if shape == tuple(wide.actions.shape):
        fail(
            f"Devolviste una log-densidad por dimensión, forma {shape}: suma sobre la "
            "última dimensión para tener una por acción, forma (N,)."
        )
    check_cases(
        _on_case(gaussian_log_prob),
        "gaussian_log_prob",
        [(case,) for case in cases],
        _on_case(reinforce.gaussian_log_prob),
        [(_on_case(mistake), message) for mistake, message in GAUSSIAN_MISTAKES],
    )
    # El gradiente tiene que llegar a μ y a log σ: si no, no se aprenden.
    case = cases[-1]
    mean = case.mean.clone().requires_grad_(True)
    log_std = case.log_std.clone().requires_grad_(True)
    out = gaussian_log_prob(case.actions.clone(), mean, log_std)
    if not isinstance(out, torch.Tensor) or not out.requires_grad:
        fail(
            "Tu log-densidad no tiene gradiente respecto a mean y log_std: usa "
            "operaciones de torch (torch.exp, **, .sum), no NumPy ni math, para que "
            "REINFORCE pueda mover μ y σ."
        )
    out.sum().backward()
    mean_ref = case.mean.clone().requires_grad_(True)
    log_std_ref = case.log_std.clone().requires_grad_(True)
    normal = torch.distributions.Normal(mean_ref, log_std_ref.exp())
    normal.log_prob(case.actions).sum().backward()
    if not (close(mean.grad, mean_ref.grad) and close(log_std.grad, log_std_ref.grad)):
        fail(
            "El gradiente respecto a mean o log_std no coincide con el de "
            "torch.distributions.Normal."
        )


# ---------------------------------------------------------------------------
# Ejercicio 3 · retornos descontados
# ---------------------------------------------------------------------------

RETURNS_CASES = [
    ([1.0, 1.0, 1.0], 0.9),
    ([0.0, 0.0, 1.0], 0.5),
    ([1.0, 2.0, 3.0, 4.0], 1.0),
    ([5.0], 0.99),
    (np.array([1.0, -1.0, 2.0, 0.0, 3.0]), 0.8),
    (np.array([2.0, 0.0, 0.0, 0.0]), 0.0),
    # Recompensas enteras: los retornos con γ < 1 tienen decimales y no deben
    # perderse en un array de enteros.
    ([1, 0, 2, 1], 0.5),
]


def _returns_forward(rewards, gamma):
    """Acumulado hacia delante: lo cobrado hasta t, no desde t."""
    out, running = [], 0.0
    for r in rewards:
        running = r + gamma * running
        out.append(running)
    return np.array(out)


def _returns_loop(rewards, gamma, update):
    out, future = [], 0.0
    for r in reversed(list(rewards)):
        future = update(r, future, gamma)
        out.append(future)
    return np.array(out[::-1])


def _returns_absolute(rewards, gamma):
    rewards = np.asarray(rewards, dtype=float)
    powers = gamma ** np.arange(len(rewards))
    return np.array([np.sum(powers[t:] * rewards[t:]) for t in range(len(rewards))])


def _returns_total(rewards, gamma):
    g = reinforce.discounted_returns(rewards, gamma)
    return np.full(len(g), g[0])


def _returns_not_reversed(rewards, gamma):
    return reinforce.discounted_returns(rewards, gamma)[::-1]


RETURNS_MISTAKES = [
    (
        _returns_forward,
        "Acumulaste hacia delante (lo cobrado hasta t). G_t mira al futuro: recorre "
        "el episodio hacia atrás, G_t = r_t + γ·G_{t+1}.",
    ),
    (
        lambda rewards, gamma: _returns_loop(
            rewards, gamma, lambda r, g, y: y * (r + g)
        ),
        "γ multiplica en el paso equivocado: r_t no se descuenta, solo el futuro. "
        "Es G_t = r_t + γ·G_{t+1}, no γ·(r_t + G_{t+1}).",
    ),
    (
        _returns_absolute,
        "El descuento cuenta desde t, no desde el inicio del episodio: "
        "G_t = Σ_k γ^(k−t)·r_k.",
    ),
    (
        _returns_total,
        "Diste a todos los pasos el retorno del episodio entero (G_0). Cada paso "
        "recibe lo que viene desde él: G_t = r_t + γ·G_{t+1}.",
    ),
    (
        lambda rewards, gamma: np.asarray(rewards, dtype=float),
        "Devolviste las recompensas inmediatas: falta sumar el futuro descontado.",
    ),
    (
        _returns_not_reversed,
        "Los valores están bien pero al revés: si los calculas hacia atrás, dale la "
        "vuelta a la lista al final (o escribe en returns[t]).",
    ),
]


@exercise(MODULE, "discounted_returns", "Retornos descontados, hacia atrás")
def check_discounted_returns(
    discounted_returns: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = RETURNS_CASES,
) -> None:
    """Comprueba ``discounted_returns(rewards, gamma)``."""
    check_cases(
        discounted_returns,
        "discounted_returns",
        cases,
        reinforce.discounted_returns,
        RETURNS_MISTAKES,
    )


# ---------------------------------------------------------------------------
# Ejercicio 4 · la estimación del gradiente por función de puntuación
# ---------------------------------------------------------------------------

SCORE_CASES = [
    (
        np.array([0.0, 0.0]),
        [np.array([1, 1, 0]), np.array([1])],
        [np.array([-3.0, -2.0, -1.0]), np.array([-1.0])],
    ),
    (
        np.array([0.5, -0.5]),
        [np.array([0, 1]), np.array([1, 0, 1, 1]), np.array([1])],
        [np.array([-2.0, -1.0]), np.array([-4.0, -3.0, -2.0, -1.0]), np.array([-1.0])],
    ),
    (
        np.array([1.0, 0.0, -1.0]),
        [np.array([2, 0]), np.array([1, 1, 2])],
        [np.array([0.5, 2.0]), np.array([1.0, -1.0, 3.0])],
    ),
]


def _score(weight: Callable, scale: str = "episodes", chosen_only: bool = False):
    """Una estimación con alguna variación: peso de cada término y escala."""

    def estimate(theta, actions, returns):
        theta = np.asarray(theta, dtype=float)
        pi = np.exp(theta - theta.max())
        pi /= pi.sum()
        total, steps = np.zeros_like(theta), 0
        for acts, rets in zip(actions, returns, strict=True):
            for a, g in zip(acts, rets, strict=True):
                one_hot = np.eye(len(theta))[int(a)]
                term = weight(g, one_hot, pi, int(a))
                total += term * one_hot if chosen_only else term
                steps += 1
        if scale == "episodes":
            return total / len(actions)
        if scale == "steps":
            return total / steps
        return total

    return estimate


SCORE_MISTAKES = [
    (
        _score(lambda g, e, pi, a: g * (e - pi), scale="sum"),
        "¿Olvidaste dividir por N, el número de episodios? Es una media sobre "
        "episodios: (1/N) Σ_i Σ_t …",
    ),
    (
        _score(lambda g, e, pi, a: g * (e - pi), scale="steps"),
        "Dividiste por el número total de pasos; se divide por N, el número de "
        "episodios (dentro de cada episodio los pasos se suman).",
    ),
    (
        _score(lambda g, e, pi, a: g * pi[a] * (e - pi)),
        "Eso es ∇π(a), el gradiente de la probabilidad. El truco usa "
        "∇log π(a) = ∇π(a) / π(a) = one_hot(a) − π: no multipliques por π(a).",
    ),
    (
        _score(lambda g, e, pi, a: g * (pi - e)),
        "¿El signo? ∇log π(a) = one_hot(a) − π: la acción tomada sube y las demás "
        "bajan.",
    ),
    (
        _score(lambda g, e, pi, a: g * (e - pi), chosen_only=True),
        "También cambian los logits de las acciones no tomadas: ∇log π(a) tiene "
        "−π(b) en cada componente b ≠ a.",
    ),
    (
        _score(lambda g, e, pi, a: g * e),
        "Falta restar π: ∇_θ log softmax(θ)[a] = one_hot(a) − π.",
    ),
    (
        _score(lambda g, e, pi, a: e - pi),
        "Falta multiplicar cada término por su retorno G_t: así solo sube lo que se "
        "eligió, sin importar si salió bien o mal.",
    ),
]


@exercise(MODULE, "score_function_gradient", "El gradiente por función de puntuación")
def check_score_function_gradient(
    score_function_gradient: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = SCORE_CASES,
) -> None:
    """Comprueba ``score_function_gradient(theta, actions, returns)``."""
    check_cases(
        score_function_gradient,
        "score_function_gradient",
        cases,
        reinforce.score_function_gradient,
        SCORE_MISTAKES,
    )


# ---------------------------------------------------------------------------
# Ejercicio 5 · la pérdida de REINFORCE
# ---------------------------------------------------------------------------

LOSS_CASES = [
    (torch.tensor([-0.5, -1.0, -0.2]), torch.tensor([3.0, 2.0, 1.0]), 1),
    (torch.tensor([-0.7, -0.1, -2.0, -0.3]), torch.tensor([1.0, -1.0, 0.5, 2.0]), 2),
    (
        torch.tensor([-1.2, -0.4, -0.9, -0.05, -3.0]),
        torch.tensor([5.0, 4.0, 3.0, 2.0, 1.0]),
        4,
    ),
]

LOSS_MISTAKES = [
    (
        lambda lp, g, n: (lp * g).sum() / n,
        "Falta el signo menos: el optimizador minimiza, y sin él subes la "
        "probabilidad de lo que salió peor. Es −(1/N) Σ log π · G.",
    ),
    (
        lambda lp, g, n: -(lp * g).mean(),
        "Promediaste sobre los pasos; el enunciado divide por N, el número de "
        "episodios. Con la media por pasos los episodios largos pesan menos y la "
        "escala del gradiente cambia.",
    ),
    (
        lambda lp, g, n: -(lp * g).sum(),
        "¿Olvidaste dividir por n_episodes? Es una media sobre los N episodios.",
    ),
    (
        lambda lp, g, n: -(lp.exp() * g).sum() / n,
        "La pérdida usa log π(a_t|s_t), no la probabilidad π = exp(log π).",
    ),
    (
        lambda lp, g, n: -(lp.sum() * g.sum()) / n,
        "Cada log π(a_t|s_t) se multiplica por su propio G_t (producto elemento a "
        "elemento), no la suma de unos por la suma de otros.",
    ),
]


@exercise(MODULE, "reinforce_loss", "La pérdida de REINFORCE")
def check_reinforce_loss(
    reinforce_loss: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]] = LOSS_CASES,
) -> None:
    """Comprueba ``reinforce_loss(log_probs, returns, n_episodes)`` y su gradiente."""
    cases = list(cases)
    check_cases(
        reinforce_loss,
        "reinforce_loss",
        cases,
        reinforce.reinforce_loss,
        LOSS_MISTAKES,
    )
    for log_probs, returns, n in cases:
        log_probs = log_probs.clone().requires_grad_(True)
        # Un retorno que viene con gradiente (p. ej. de una red): debe ser constante.
        weights = returns.clone().requires_grad_(True)
        loss = reinforce_loss(log_probs, weights, n)
        if not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
            fail(
                "La pérdida debe ser un tensor de PyTorch conectado a log_probs (para "
                "poder llamar a loss.backward()); no uses .item(), float() ni NumPy."
            )
        if loss.numel() != 1:
            fail(f"La pérdida debe ser un escalar; tiene forma {tuple(loss.shape)}.")
        loss.reshape(()).backward()
        if weights.grad is not None and weights.grad.abs().max() > 0:
            fail(
                "El retorno arrastra gradiente: loss.backward() llegó hasta returns. "
                "G_t es un peso constante, no algo que optimizar: usa "
                "returns.detach(). Si no, estás optimizando otra cosa."
            )
        expected = -returns / n
        if log_probs.grad is None or not close(log_probs.grad, expected, atol=1e-6):
            fail(
                "El gradiente de la pérdida respecto a log_probs debería ser −G_t / N "
                f"= {_numbers(expected, 4)}."
            )
