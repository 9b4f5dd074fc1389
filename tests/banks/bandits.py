"""Banco de respuestas del módulo 01 · Bandidos."""

from tests.banks import Answer

MODULE = "01_bandidos"

WRONG: dict[str, list[Answer]] = {
    "incremental_mean": [
        Answer(
            "sin dividir por n",
            """
def incremental_mean(estimate, reward, count):
    return estimate + (reward - estimate)
""",
            mistake="mean_not_divided",
        ),
        Answer(
            "divide entre n − 1",
            """
def incremental_mean(estimate, reward, count):
    return estimate + (reward - estimate) / (count - 1)
""",
            mistake="mean_count_minus_one",
        ),
        Answer(
            "divide entre n + 1",
            """
def incremental_mean(estimate, reward, count):
    return estimate + (reward - estimate) / (count + 1)
""",
            mistake="mean_count_plus_one",
        ),
        Answer(
            "signo cambiado",
            """
def incremental_mean(estimate, reward, count):
    return estimate - (reward - estimate) / count
""",
            mistake="mean_sign",
        ),
        Answer(
            "media de dos",
            """
def incremental_mean(estimate, reward, count):
    return (estimate + reward) / 2
""",
            mistake="mean_of_two",
        ),
        Answer(
            "multiplica por n",
            """
def incremental_mean(estimate, reward, count):
    return estimate + (reward - estimate) * count
""",
            mistake="mean_times_count",
        ),
    ],
    "epsilon_greedy": [
        Answer(
            "np.argmax sin desempate",
            """
def epsilon_greedy(q_values, epsilon, rng):
    if rng.random() < epsilon:
        return int(rng.integers(len(q_values)))
    return int(np.argmax(q_values))
""",
            mistake="ties_first_max",
        ),
        Answer(
            "usa np.random global",
            """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if np.random.random() < epsilon:
        return int(np.random.randint(len(q_values)))
    return int(np.random.choice(np.flatnonzero(q_values == q_values.max())))
""",
            mistake="global_random",
        ),
        Answer(
            "explora solo entre los no voraces",
            """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    best = np.flatnonzero(q_values == q_values.max())
    greedy = int(rng.choice(best))
    if rng.random() < epsilon:
        others = [a for a in range(len(q_values)) if a != greedy]
        return int(rng.choice(others))
    return greedy
""",
            mistake="explore_excludes_best",
        ),
        Answer(
            "ε al revés",
            """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if rng.random() > epsilon:
        return int(rng.integers(len(q_values)))
    return int(rng.choice(np.flatnonzero(q_values == q_values.max())))
""",
            mistake="explores_when_greedy",
        ),
        Answer(
            "argmin",
            """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if rng.random() < epsilon:
        return int(rng.integers(len(q_values)))
    return int(rng.choice(np.flatnonzero(q_values == q_values.min())))
""",
            mistake="argmin",
        ),
        Answer(
            "devuelve el valor y no el índice",
            """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if rng.random() < epsilon:
        return int(rng.integers(len(q_values)))
    return q_values.max()
""",
            mistake="not_an_arm",
        ),
    ],
    "ucb_action": [
        Answer(
            "suma 1 a N(a)",
            """
def ucb_action(q_values, counts, t, c):
    return int(np.argmax(q_values + c * np.sqrt(np.log(t) / (counts + 1))))
""",
            mistake="ucb_plus_one",
        ),
        Answer(
            "último brazo sin probar",
            """
def ucb_action(q_values, counts, t, c):
    untried = np.flatnonzero(counts == 0)
    if len(untried):
        return int(untried[-1])
    return int(np.argmax(q_values + c * np.sqrt(np.log(t) / counts)))
""",
            mistake="ucb_last_untried",
        ),
        Answer(
            "sin bono",
            """
def ucb_action(q_values, counts, t, c):
    untried = np.flatnonzero(counts == 0)
    if len(untried):
        return int(untried[0])
    return int(np.argmax(q_values))
""",
            mistake="ucb_no_bonus",
        ),
        Answer(
            "sin raíz",
            """
def ucb_action(q_values, counts, t, c):
    untried = np.flatnonzero(counts == 0)
    if len(untried):
        return int(untried[0])
    return int(np.argmax(q_values + c * np.log(t) / counts))
""",
            mistake="ucb_no_sqrt",
        ),
        Answer(
            "c dentro de la raíz",
            """
def ucb_action(q_values, counts, t, c):
    untried = np.flatnonzero(counts == 0)
    if len(untried):
        return int(untried[0])
    return int(np.argmax(q_values + np.sqrt(c * np.log(t) / counts)))
""",
            mistake="ucb_c_inside_sqrt",
        ),
        Answer(
            "sin logaritmo",
            """
def ucb_action(q_values, counts, t, c):
    untried = np.flatnonzero(counts == 0)
    if len(untried):
        return int(untried[0])
    return int(np.argmax(q_values + c * np.sqrt(t / counts)))
""",
            mistake="ucb_no_log",
        ),
        Answer(
            "bono restado",
            """
def ucb_action(q_values, counts, t, c):
    untried = np.flatnonzero(counts == 0)
    if len(untried):
        return int(untried[0])
    return int(np.argmax(q_values - c * np.sqrt(np.log(t) / counts)))
""",
            mistake="ucb_bonus_subtracted",
        ),
    ],
    "softmax": [
        Answer(
            "sin restar el máximo",
            """
def softmax(preferences):
    z = np.exp(preferences)
    return z / z.sum()
""",
            mistake="softmax_overflow",
        ),
        Answer(
            "resta el mínimo",
            """
def softmax(preferences):
    z = np.exp(preferences - np.min(preferences))
    return z / z.sum()
""",
            mistake="softmax_minus_min",
        ),
        Answer(
            "sin normalizar",
            """
def softmax(preferences):
    return np.exp(preferences - np.max(preferences))
""",
            mistake="softmax_not_normalized",
        ),
        Answer(
            "sin exponencial",
            """
def softmax(preferences):
    return preferences / np.sum(preferences)
""",
            mistake="softmax_no_exp",
        ),
        Answer(
            "signo cambiado",
            """
def softmax(preferences):
    z = np.exp(-(preferences - np.min(preferences)))
    return z / z.sum()
""",
            mistake="softmax_sign",
        ),
    ],
    "gradient_bandit_update": [
        Answer(
            "sin línea base",
            """
def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    one_hot = np.eye(len(preferences))[action]
    return preferences + alpha * reward * (one_hot - softmax(preferences))
""",
            mistake="gradient_no_baseline",
        ),
        Answer(
            "línea base sumada",
            """
def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    one_hot = np.eye(len(preferences))[action]
    return preferences + alpha * (reward + baseline) * (one_hot - softmax(preferences))
""",
            mistake="gradient_baseline_added",
        ),
        Answer(
            "signo del indicador",
            """
def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    one_hot = np.eye(len(preferences))[action]
    return preferences + alpha * (reward - baseline) * (softmax(preferences) - one_hot)
""",
            mistake="gradient_sign",
        ),
        Answer(
            "solo el brazo elegido",
            """
def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    new = np.array(preferences, dtype=float)
    pi = softmax(preferences)
    new[action] += alpha * (reward - baseline) * (1 - pi[action])
    return new
""",
            mistake="gradient_chosen_only",
        ),
        Answer(
            "sin α",
            """
def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    one_hot = np.eye(len(preferences))[action]
    return preferences + (reward - baseline) * (one_hot - softmax(preferences))
""",
            mistake="gradient_no_alpha",
        ),
        Answer(
            "modifica la entrada",
            """
def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    one_hot = np.eye(len(preferences))[action]
    preferences += alpha * (reward - baseline) * (one_hot - softmax(preferences))
    return preferences
""",
            mistake="modified_input",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "incremental_mean": [
        Answer(
            "media ponderada",
            """
def incremental_mean(estimate, reward, count):
    return ((count - 1) * estimate + reward) / count
""",
        ),
        Answer(
            "con torch",
            """
import torch

def incremental_mean(estimate, reward, count):
    estimate = torch.as_tensor(estimate, dtype=torch.float64)
    return estimate + (reward - estimate) / count
""",
        ),
        Answer(
            "fracciones",
            """
def incremental_mean(estimate, reward, count):
    return (1 - 1 / count) * estimate + reward / count
""",
        ),
    ],
    "epsilon_greedy": [
        Answer(
            "con un bucle",
            """
def epsilon_greedy(q_values, epsilon, rng):
    if rng.uniform() < epsilon:
        return int(rng.choice(len(q_values)))
    best_value = max(q_values)
    best = [a for a, q in enumerate(q_values) if q == best_value]
    return int(best[rng.integers(len(best))])
""",
        ),
        Answer(
            "permutación al azar",
            """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values, dtype=float)
    k = len(q_values)
    if rng.random() < epsilon:
        return int(rng.integers(0, k))
    order = rng.permutation(k)
    return int(order[np.argmax(q_values[order])])
""",
        ),
    ],
    "ucb_action": [
        Answer(
            "infinito para los no probados",
            """
def ucb_action(q_values, counts, t, c):
    counts = np.asarray(counts, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = q_values + c * np.sqrt(np.log(t) / counts)
    scores[counts == 0] = np.inf
    return int(np.argmax(scores))
""",
        ),
        Answer(
            "con un bucle",
            """
import math

def ucb_action(q_values, counts, t, c):
    for a, n in enumerate(counts):
        if n == 0:
            return a
    scores = [q + c * math.sqrt(math.log(t) / n) for q, n in zip(q_values, counts)]
    return scores.index(max(scores))
""",
        ),
        Answer(
            "sin tratar aparte N = 0 (NumPy da inf o nan, con avisos)",
            """
def ucb_action(q_values, counts, t, c):
    return int(np.argmax(q_values + c * np.sqrt(np.log(t) / counts)))
""",
        ),
    ],
    "softmax": [
        Answer(
            "con torch",
            """
import torch

def softmax(preferences):
    h = torch.as_tensor(preferences, dtype=torch.float64)
    return torch.softmax(h, dim=0).numpy()
""",
        ),
        Answer(
            "log-sum-exp",
            """
def softmax(preferences):
    h = np.asarray(preferences, dtype=float)
    m = h.max()
    log_z = m + np.log(np.sum(np.exp(h - m)))
    return np.exp(h - log_z)
""",
        ),
        Answer(
            "lista de Python",
            """
import math

def softmax(preferences):
    m = max(preferences)
    exps = [math.exp(h - m) for h in preferences]
    total = sum(exps)
    return [e / total for e in exps]
""",
        ),
    ],
    "gradient_bandit_update": [
        Answer(
            "con un bucle",
            """
def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    pi = softmax(preferences)
    new = []
    for a in range(len(preferences)):
        indicator = 1.0 if a == action else 0.0
        new.append(preferences[a] + alpha * (reward - baseline) * (indicator - pi[a]))
    return np.array(new)
""",
        ),
        Answer(
            "copia y dos pasos",
            """
def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    new = np.array(preferences, dtype=float)
    step = alpha * (reward - baseline)
    new -= step * softmax(preferences)
    new[action] += step
    return new
""",
        ),
    ],
}

# ---------------------------------------------------------------------------
# Clases de error que valen para cualquier ejercicio (issue #22): modificar la
# entrada, variantes de la fórmula que coinciden en algunos puntos, dtype.
# ---------------------------------------------------------------------------

WRONG["incremental_mean"] += [
    Answer(
        "redondea a dos decimales",
        """
def incremental_mean(estimate, reward, count):
    return round(estimate + (reward - estimate) / count, 2)
""",
        mistake="rounded",
    ),
    Answer(
        "convierte a entero",
        """
def incremental_mean(estimate, reward, count):
    return int(estimate + (reward - estimate) / count)
""",
        mistake="integer_dtype",
    ),
]
WRONG["epsilon_greedy"] += [
    Answer(
        "desempata con ruido sumado a la entrada",
        """
def epsilon_greedy(q_values, epsilon, rng):
    if rng.random() < epsilon:
        return int(rng.integers(len(q_values)))
    q_values += rng.random(len(q_values)) * 1e-9
    return int(np.argmax(q_values))
""",
        mistake="modified_input",
    ),
]
WRONG["ucb_action"] += [
    Answer(
        "logaritmo en base 2",
        """
def ucb_action(q_values, counts, t, c):
    counts = np.asarray(counts, dtype=float)
    untried = np.flatnonzero(counts == 0)
    if untried.size:
        return int(untried[0])
    return int(np.argmax(q_values + c * np.sqrt(np.log2(t) / counts)))
""",
        mistake="ucb_log2",
    ),
    Answer(
        "log(t + 1)",
        """
def ucb_action(q_values, counts, t, c):
    counts = np.asarray(counts, dtype=float)
    untried = np.flatnonzero(counts == 0)
    if untried.size:
        return int(untried[0])
    return int(np.argmax(q_values + c * np.sqrt(np.log(t + 1) / counts)))
""",
        mistake="ucb_log_t_plus_one",
    ),
    Answer(
        "Σ N en lugar de t",
        """
def ucb_action(q_values, counts, t, c):
    counts = np.asarray(counts, dtype=float)
    untried = np.flatnonzero(counts == 0)
    if untried.size:
        return int(untried[0])
    return int(np.argmax(q_values + c * np.sqrt(np.log(counts.sum()) / counts)))
""",
        mistake="ucb_sum_of_counts",
    ),
    Answer(
        "suma el bono sobre la entrada",
        """
def ucb_action(q_values, counts, t, c):
    untried = np.flatnonzero(counts == 0)
    if untried.size:
        return int(untried[0])
    q_values += c * np.sqrt(np.log(t) / counts)
    return int(np.argmax(q_values))
""",
        mistake="modified_input",
    ),
]
WRONG["softmax"] += [
    Answer(
        "resta el máximo sobre la entrada",
        """
def softmax(preferences):
    preferences -= preferences.max()
    z = np.exp(preferences)
    return z / z.sum()
""",
        mistake="modified_input",
    ),
    Answer(
        "redondea a dos decimales",
        """
def softmax(preferences):
    z = np.exp(preferences - np.max(preferences))
    return np.round(z / z.sum(), 2)
""",
        mistake="rounded",
    ),
]
WRONG["gradient_bandit_update"] += [
    Answer(
        "redondea a dos decimales",
        """
def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    one_hot = np.eye(len(preferences))[action]
    new = preferences + alpha * (reward - baseline) * (one_hot - softmax(preferences))
    return np.round(new, 2)
""",
        mistake="rounded",
    ),
]
RIGHT["gradient_bandit_update"] += [
    Answer(
        # Sin doble penalización: su softmax está mal, pero este ejercicio se
        # califica con la de referencia en su lugar.
        "con una softmax mal escrita en la misma celda",
        """
def softmax(preferences):
    return np.exp(preferences) / np.sum(preferences)

def gradient_bandit_update(preferences, action, reward, baseline, alpha):
    one_hot = np.eye(len(preferences))[action]
    return preferences + alpha * (reward - baseline) * (one_hot - softmax(preferences))
""",
    ),
]

# ---------------------------------------------------------------------------
# Ejercicio 3 · un paso del banco de pruebas: dos celdas calificadas, elegir y
# cobrar (testbed_step_test) y actualizar (testbed_step_test_update). Cada
# respuesta errónea dice cuál debe fallar; la otra debe pasar.
# ---------------------------------------------------------------------------

_CHOICE = ("testbed_step_test",)
_UPDATE = ("testbed_step_test_update",)


def _testbed(choose: str, reward: str, update: str) -> str:
    """Una respuesta de testbed_step con sus tres partes, para el banco."""
    return f"""
def testbed_step(q, counts, q_star, epsilon, rng):
    q = np.asarray(q, dtype=float)
    n, k = q.shape
    rows = np.arange(n)
{choose}
{reward}
{update}
    return actions, rewards, new_q, new_counts
"""


_CHOOSE = """    explore = rng.random(n) < epsilon
    arms = rng.integers(k, size=n)
    noise = rng.random((n, k))
    tied = q == q.max(axis=1, keepdims=True)
    actions = np.where(explore, arms, np.argmax(noise * tied, axis=1))"""
_REWARD = """    rewards = q_star[rows, actions] + rng.standard_normal(n)"""
_UPDATE_OK = """    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1
    new_q = q.copy()
    new_q[rows, actions] += (rewards - q[rows, actions]) / new_counts[rows, actions]"""

WRONG["testbed_step"] = [
    Answer(
        # La primera errónea falla en las dos celdas: la usa la entrega
        # «equivocada» de tests/test_grading_integrity.py, que debe sacar 0.
        "np.argmax sin desempate y += sobre q y counts",
        _testbed(
            """    explore = rng.random(n) < epsilon
    arms = rng.integers(k, size=n)
    actions = np.where(explore, arms, np.argmax(q, axis=1))""",
            _REWARD,
            """    counts[rows, actions] += 1
    q[rows, actions] += (rewards - q[rows, actions]) / counts[rows, actions]
    new_q, new_counts = q, counts""",
        ),
        mistake="step_ties_first_max",
    ),
    Answer(
        "np.argmax sin desempate",
        _testbed(
            """    explore = rng.random(n) < epsilon
    arms = rng.integers(k, size=n)
    actions = np.where(explore, arms, np.argmax(q, axis=1))""",
            _REWARD,
            _UPDATE_OK,
        ),
        mistake="step_ties_first_max",
        fails=_CHOICE,
    ),
    Answer(
        "empates con el máximo de toda la matriz",
        _testbed(
            _CHOOSE.replace("q.max(axis=1, keepdims=True)", "q.max()"),
            _REWARD,
            _UPDATE_OK,
        ),
        mistake="step_ties_whole_matrix",
        fails=_CHOICE,
    ),
    Answer(
        "ε al revés",
        _testbed(
            _CHOOSE.replace("rng.random(n) < epsilon", "rng.random(n) > epsilon"),
            _REWARD,
            _UPDATE_OK,
        ),
        mistake="step_epsilon_inverted",
        fails=_CHOICE,
    ),
    Answer(
        "brazos al azar solo para las que exploran",
        _testbed(
            """    explore = rng.random(n) < epsilon
    actions = np.zeros(n, dtype=int)
    actions[explore] = rng.integers(k, size=int(explore.sum()))
    noise = rng.random((n, k))
    tied = q == q.max(axis=1, keepdims=True)
    greedy = np.argmax(noise * tied, axis=1)
    actions[~explore] = greedy[~explore]""",
            _REWARD,
            _UPDATE_OK,
        ),
        mistake="step_arms_only_explorers",
        fails=_CHOICE,
    ),
    Answer(
        "el ruido de desempate antes que los brazos",
        _testbed(
            """    explore = rng.random(n) < epsilon
    noise = rng.random((n, k))
    arms = rng.integers(k, size=n)
    tied = q == q.max(axis=1, keepdims=True)
    actions = np.where(explore, arms, np.argmax(noise * tied, axis=1))""",
            _REWARD,
            _UPDATE_OK,
        ),
        mistake="step_noise_before_arms",
        fails=_CHOICE,
    ),
    Answer(
        "recompensa sin ruido",
        _testbed(_CHOOSE, "    rewards = q_star[rows, actions]", _UPDATE_OK),
        mistake="reward_without_noise",
        fails=_CHOICE,
    ),
    Answer(
        "recompensa de las estimaciones",
        _testbed(
            _CHOOSE,
            "    rewards = q[rows, actions] + rng.standard_normal(n)",
            _UPDATE_OK,
        ),
        mistake="reward_from_estimates",
        fails=_CHOICE,
    ),
    Answer(
        "redondea las recompensas a dos decimales",
        _testbed(
            _CHOOSE,
            "    rewards = np.round(q_star[rows, actions] + rng.standard_normal(n), 2)",
            _UPDATE_OK,
        ),
        mistake="rounded",
        fails=_CHOICE,
    ),
    Answer(
        "modifica q y counts",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    counts[rows, actions] += 1
    q[rows, actions] += (rewards - q[rows, actions]) / counts[rows, actions]
    new_q, new_counts = q, counts""",
        ),
        mistake="modified_input",
        fails=_UPDATE,
    ),
    Answer(
        "columnas enteras con [:, actions]",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = np.array(counts, dtype=float)
    new_counts[:, actions] += 1
    new_q = q.copy()
    new_q[:, actions] += (rewards - q[:, actions]) / new_counts[:, actions]""",
        ),
        mistake="counts_whole_columns",
        fails=_UPDATE,
    ),
    Answer(
        "divide entre la N de antes",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_q = q.copy()
    new_q[rows, actions] += (rewards - q[rows, actions]) / counts[rows, actions]
    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1""",
        ),
        mistake="q_divides_by_old_count",
        fails=_UPDATE,
    ),
    Answer(
        "actualiza toda la fila",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1
    new_q = q + (rewards[:, None] - q) / new_counts""",
        ),
        mistake="q_other_arms_changed",
        fails=_UPDATE,
    ),
    Answer(
        "redondea Q a dos decimales",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1
    mean = q[rows, actions] + (rewards - q[rows, actions]) / new_counts[rows, actions]
    new_q = q.copy()
    new_q[rows, actions] = np.round(mean, 2)""",
        ),
        mistake="rounded",
        fails=_UPDATE,
    ),
]

RIGHT["testbed_step"] = [
    Answer(
        "con un one-hot de booleanos",
        """
def testbed_step(q, counts, q_star, epsilon, rng):
    q = np.asarray(q, dtype=float)
    n, k = q.shape
    explore = rng.uniform(size=n) < epsilon
    arms = rng.integers(0, k, size=n)
    noise = rng.random(size=(n, k))
    best = q.max(axis=1)[:, None]
    score = np.where(q == best, noise, -np.inf)
    actions = np.where(explore, arms, score.argmax(axis=1))
    chosen = np.eye(k, dtype=bool)[actions]
    rewards = q_star[chosen] + rng.normal(0.0, 1.0, size=n)
    new_counts = counts + chosen
    safe = np.maximum(new_counts, 1)
    new_q = np.where(chosen, q + (rewards[:, None] - q) / safe, q)
    return actions, rewards, new_q, new_counts
""",
    ),
    Answer(
        "media ponderada y asignación por máscara",
        """
def testbed_step(q, counts, q_star, epsilon, rng):
    n, k = np.shape(q)
    u = rng.random(n)
    arms = rng.integers(k, size=n)
    noise = rng.random((n, k))
    masked = noise * (q >= np.max(q, axis=1, keepdims=True))
    actions = masked.argmax(axis=1)
    actions[u < epsilon] = arms[u < epsilon]
    rows = np.arange(n)
    rewards = q_star[rows, actions] + rng.standard_normal(n)
    old_n = counts[rows, actions]
    new_counts = counts.astype(float)
    new_counts[rows, actions] = old_n + 1
    new_q = q.astype(float)
    new_q[rows, actions] = (q[rows, actions] * old_n + rewards) / (old_n + 1)
    return actions, rewards, new_q, new_counts
""",
    ),
]

# ---------------------------------------------------------------------------
# Ejercicio 7 · el bucle del bandido de gradiente
# ---------------------------------------------------------------------------

WRONG["gradient_bandit_train"] = [
    Answer(
        "la media incluye R_t antes de usarla",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    preferences = np.zeros(k)
    mean_reward = 0.0
    actions = []
    for t in range(1, n_steps + 1):
        action = int(rng.choice(k, p=softmax(preferences)))
        reward = pull(action, rng)
        mean_reward = incremental_mean(mean_reward, reward, t)
        preferences = gradient_bandit_update(
            preferences, action, reward, mean_reward, alpha
        )
        actions.append(action)
    return preferences, actions
""",
        mistake="train_mean_first",
    ),
    Answer(
        "sin línea base",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    H = np.zeros(k)
    chosen = []
    for _ in range(n_steps):
        a = int(rng.choice(k, p=softmax(H)))
        chosen.append(a)
        H = gradient_bandit_update(H, a, pull(a, rng), 0.0, alpha)
    return H, chosen
""",
        mistake="train_no_baseline",
    ),
    Answer(
        "en el primer paso, línea base 0",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    preferences, average, actions = np.zeros(k), 0.0, []
    for t in range(n_steps):
        pi = softmax(preferences)
        a = rng.choice(k, p=pi)
        r = pull(a, rng)
        preferences = gradient_bandit_update(preferences, a, r, average, alpha)
        average = average + (r - average) / (t + 1)
        actions.append(int(a))
    return preferences, actions
""",
        mistake="train_first_baseline_zero",
    ),
    Answer(
        "argmax de π en vez de muestrear",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    preferences = np.zeros(k)
    mean_reward = 0.0
    actions = []
    for t in range(1, n_steps + 1):
        action = int(np.argmax(softmax(preferences)))
        reward = pull(action, rng)
        baseline = reward if t == 1 else mean_reward
        preferences = gradient_bandit_update(
            preferences, action, reward, baseline, alpha
        )
        mean_reward = incremental_mean(mean_reward, reward, t)
        actions.append(action)
    return preferences, actions
""",
        mistake="train_greedy",
    ),
    Answer(
        "redondea las preferencias a dos decimales",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    prefs = np.zeros(k)
    total = 0.0
    picks = []
    for t in range(1, n_steps + 1):
        arm = int(rng.choice(k, p=softmax(prefs)))
        reward = pull(arm, rng)
        base = total / (t - 1) if t > 1 else reward
        prefs = gradient_bandit_update(prefs, arm, reward, base, alpha)
        total += reward
        picks.append(arm)
    return np.round(prefs, 2), picks
""",
        mistake="rounded",
    ),
    Answer(
        "devuelve π en lugar de las preferencias",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    prefs = np.zeros(k)
    total = 0.0
    picks = []
    for t in range(1, n_steps + 1):
        pi = softmax(prefs)
        arm = int(rng.choice(k, p=pi))
        reward = pull(arm, rng)
        base = total / (t - 1) if t > 1 else reward
        prefs = gradient_bandit_update(prefs, arm, reward, base, alpha)
        total += reward
        picks.append(arm)
    return softmax(prefs), picks
""",
        mistake="train_returns_pi",
    ),
]

RIGHT["gradient_bandit_train"] = [
    Answer(
        "con el historial de recompensas y la fórmula a mano",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    H = np.zeros(k)
    history, chosen = [], []
    for _ in range(n_steps):
        z = np.exp(H - H.max())
        pi = z / z.sum()
        a = int(rng.choice(k, p=pi))
        r = pull(a, rng)
        b = np.mean(history) if history else r
        indicator = np.zeros(k)
        indicator[a] = 1.0
        H = H + alpha * (r - b) * (indicator - pi)
        history.append(r)
        chosen.append(a)
    return H, chosen
""",
    ),
    Answer(
        "inversa de la función de distribución",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    preferences = np.zeros(k)
    rewards_so_far = 0.0
    actions = []
    for step in range(n_steps):
        pi = softmax(preferences)
        action = int(np.searchsorted(np.cumsum(pi), rng.random(), side="right"))
        reward = pull(action, rng)
        baseline = reward if step == 0 else rewards_so_far / step
        preferences = gradient_bandit_update(
            preferences, action, reward, baseline, alpha
        )
        rewards_so_far += reward
        actions.append(action)
    return preferences, actions
""",
    ),
]

# ---------------------------------------------------------------------------
# Un error por cada diagnóstico con nombre (issue 48): cada fila o fallo con
# id de helpers/checks/bandits.py lo provoca alguna respuesta de aquí.
# ---------------------------------------------------------------------------

WRONG["epsilon_greedy"] += [
    Answer(
        "ε fijo a 0,1 en lugar del argumento",
        """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if rng.random() < 0.1:
        return int(rng.integers(len(q_values)))
    return int(rng.choice(np.flatnonzero(q_values == q_values.max())))
""",
        mistake="greedy_wrong_arm",
    ),
    Answer(
        "desempata solo entre el primer y el último máximo",
        """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if rng.random() < epsilon:
        return int(rng.integers(len(q_values)))
    first = int(np.argmax(q_values))
    last = len(q_values) - 1 - int(np.argmax(q_values[::-1]))
    return int(rng.choice([first, last]))
""",
        mistake="ties_not_uniform",
    ),
    Answer(
        "desempata sumando un ruido uniforme entre 0 y 1",
        """
def epsilon_greedy(q_values, epsilon, rng):
    if rng.random() < epsilon:
        return int(rng.integers(len(q_values)))
    return int(np.argmax(q_values + rng.random(len(q_values))))
""",
        mistake="ties_noise_too_large",
    ),
    Answer(
        "falta el else: la rama que explora no tiene efecto",
        """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if rng.random() < epsilon:
        action = int(rng.integers(len(q_values)))
    action = int(rng.choice(np.flatnonzero(q_values == q_values.max())))
    return action
""",
        mistake="epsilon_inverted",
    ),
    Answer(
        "al explorar, rng.integers(k − 1): nunca el último brazo",
        """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if rng.random() < epsilon:
        return int(rng.integers(0, len(q_values) - 1))
    return int(rng.choice(np.flatnonzero(q_values == q_values.max())))
""",
        mistake="explore_not_uniform",
    ),
    Answer(
        "una moneda por brazo: explora si sale alguna",
        """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if (rng.random(len(q_values)) < epsilon).any():
        return int(rng.integers(len(q_values)))
    return int(rng.choice(np.flatnonzero(q_values == q_values.max())))
""",
        mistake="wrong_best_frequency",
    ),
    Answer(
        "brazo al azar con rng.random() · k, sin pasarlo a entero",
        """
def epsilon_greedy(q_values, epsilon, rng):
    q_values = np.asarray(q_values)
    if rng.random() < epsilon:
        return rng.random() * len(q_values)
    return int(rng.choice(np.flatnonzero(q_values == q_values.max())))
""",
        mistake="not_an_integer",
    ),
]
WRONG["ucb_action"] += [
    Answer(
        "logaritmo en base 10",
        """
def ucb_action(q_values, counts, t, c):
    counts = np.asarray(counts, dtype=float)
    untried = np.flatnonzero(counts == 0)
    if untried.size:
        return int(untried[0])
    return int(np.argmax(q_values + c * np.sqrt(np.log10(t) / counts)))
""",
        mistake="ucb_log10",
    ),
]
WRONG["softmax"] += [
    Answer(
        "resta el máximo solo en el numerador",
        """
def softmax(preferences):
    return np.exp(preferences - np.max(preferences)) / np.sum(np.exp(preferences))
""",
        mistake="proportional",
    ),
    Answer(
        "devuelve un generador, no una lista",
        """
import math

def softmax(preferences):
    m = max(preferences)
    exps = [math.exp(h - m) for h in preferences]
    total = sum(exps)
    return (e / total for e in exps)
""",
        mistake="not_a_number",
    ),
]
WRONG["testbed_step"] += [
    Answer(
        "devuelve tres cosas: olvida rewards",
        _testbed(_CHOOSE, _REWARD, _UPDATE_OK).replace(
            "return actions, rewards, new_q, new_counts",
            "return actions, new_q, new_counts",
        ),
        mistake="step_not_four",
    ),
    Answer(
        "la moneda como columna (n, 1): las acciones salen (n, n)",
        _testbed(
            _CHOOSE.replace("rng.random(n) < epsilon", "rng.random((n, 1)) < epsilon"),
            _REWARD,
            _UPDATE_OK,
        ),
        mistake="actions_shape",
    ),
    Answer(
        "devuelve rewards y actions en el orden cambiado",
        _testbed(_CHOOSE, _REWARD, _UPDATE_OK).replace(
            "return actions, rewards, new_q, new_counts",
            "return rewards, actions, new_q, new_counts",
        ),
        mistake="actions_not_indices",
    ),
    Answer(
        "los empatados con el mínimo de la fila",
        _testbed(
            _CHOOSE.replace(
                "q.max(axis=1, keepdims=True)", "q.min(axis=1, keepdims=True)"
            ),
            _REWARD,
            _UPDATE_OK,
        ),
        mistake="step_greedy_not_max",
        fails=_CHOICE,
    ),
    Answer(
        "los brazos al azar antes que la moneda",
        _testbed(
            """    arms = rng.integers(k, size=n)
    explore = rng.random(n) < epsilon
    noise = rng.random((n, k))
    tied = q == q.max(axis=1, keepdims=True)
    actions = np.where(explore, arms, np.argmax(noise * tied, axis=1))""",
            _REWARD,
            _UPDATE_OK,
        ),
        mistake="step_random_order",
        fails=_CHOICE,
    ),
    Answer(
        "recompensas con q_star[:, actions]: una matriz",
        _testbed(
            _CHOOSE,
            "    rewards = q_star[:, actions] + rng.standard_normal(n)",
            """    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1
    new_q = q.copy()""",
        ),
        mistake="rewards_matrix",
    ),
    Answer(
        "un solo ruido para todas las ejecuciones",
        _testbed(
            _CHOOSE,
            "    rewards = q_star[rows, actions] + rng.standard_normal()",
            _UPDATE_OK,
        ),
        mistake="reward_noise",
        fails=_CHOICE,
    ),
    Answer(
        "new_counts solo con las casillas elegidas",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = counts[rows, actions] + 1
    new_q = q.copy()
    new_q[rows, actions] += (rewards - q[rows, actions]) / new_counts""",
        ),
        mistake="update_shape",
        fails=_UPDATE,
    ),
    Answer(
        "N sin actualizar (divide por N + 1)",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = np.array(counts, dtype=float)
    new_q = q.copy()
    old = counts[rows, actions]
    new_q[rows, actions] += (rewards - q[rows, actions]) / (old + 1)""",
        ),
        mistake="counts_unchanged",
        fails=_UPDATE,
    ),
    Answer(
        "N con new_counts[actions]: suma 1 a filas enteras",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = np.array(counts, dtype=float)
    new_counts[actions] += 1
    new_q = q.copy()
    old = counts[rows, actions]
    new_q[rows, actions] += (rewards - q[rows, actions]) / (old + 1)""",
        ),
        mistake="counts_wrong",
        fails=_UPDATE,
    ),
    Answer(
        "Q sin actualizar",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1
    new_q = q.copy()""",
        ),
        mistake="q_unchanged",
        fails=_UPDATE,
    ),
    Answer(
        "Q sin dividir entre N",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1
    new_q = q.copy()
    new_q[rows, actions] += rewards - q[rows, actions]""",
        ),
        mistake="q_not_divided",
        fails=_UPDATE,
    ),
    Answer(
        "Q con columnas enteras (N bien)",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1
    new_q = q.copy()
    new_q[:, actions] += (rewards - q[:, actions]) / (counts[:, actions] + 1)""",
        ),
        mistake="q_whole_columns",
        fails=_UPDATE,
    ),
    Answer(
        "Q con un paso fijo α = 0,1",
        _testbed(
            _CHOOSE,
            _REWARD,
            """    new_counts = np.array(counts, dtype=float)
    new_counts[rows, actions] += 1
    new_q = q.copy()
    new_q[rows, actions] += 0.1 * (rewards - q[rows, actions])""",
        ),
        mistake="q_wrong",
        fails=_UPDATE,
    ),
]
WRONG["gradient_bandit_train"] += [
    Answer(
        "devuelve solo las preferencias",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    preferences, mean_reward = np.zeros(k), 0.0
    for t in range(1, n_steps + 1):
        action = int(rng.choice(k, p=softmax(preferences)))
        reward = pull(action, rng)
        baseline = reward if t == 1 else mean_reward
        preferences = gradient_bandit_update(
            preferences, action, reward, baseline, alpha
        )
        mean_reward = incremental_mean(mean_reward, reward, t)
    return preferences
""",
        mistake="train_not_a_pair",
    ),
    Answer(
        "un paso de menos: range(1, n_steps)",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    preferences, mean_reward, actions = np.zeros(k), 0.0, []
    for t in range(1, n_steps):
        action = int(rng.choice(k, p=softmax(preferences)))
        reward = pull(action, rng)
        baseline = reward if t == 1 else mean_reward
        preferences = gradient_bandit_update(
            preferences, action, reward, baseline, alpha
        )
        mean_reward = incremental_mean(mean_reward, reward, t)
        actions.append(action)
    return preferences, actions
""",
        mistake="train_wrong_number_of_actions",
    ),
    Answer(
        "la media cuenta una recompensa de más (t + 1)",
        """
def gradient_bandit_train(pull, k, n_steps, alpha, rng):
    preferences, mean_reward, actions = np.zeros(k), 0.0, []
    for t in range(1, n_steps + 1):
        action = int(rng.choice(k, p=softmax(preferences)))
        reward = pull(action, rng)
        baseline = reward if t == 1 else mean_reward
        preferences = gradient_bandit_update(
            preferences, action, reward, baseline, alpha
        )
        mean_reward = incremental_mean(mean_reward, reward, t + 1)
        actions.append(action)
    return preferences, actions
""",
        mistake="train_wrong",
    ),
]
