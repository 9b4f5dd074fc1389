"""Banco de respuestas del módulo 05 · Actor-crítico y GAE."""

from tests.banks import Answer

MODULE = "05_actor_critico"

WRONG: dict[str, list[Answer]] = {
    "td_errors": [
        Answer(
            "bootstrap tras un estado terminal",
            """
def td_errors(rewards, values, next_values, terminated, gamma):
    return rewards + gamma * next_values - values
""",
            mistake="td_bootstraps_terminal",
        ),
        Answer(
            "signo al revés",
            """
def td_errors(rewards, values, next_values, terminated, gamma):
    return values - rewards - gamma * (1 - terminated) * next_values
""",
            mistake="td_sign",
        ),
        Answer(
            "V(s_t) en lugar de V(s_{t+1})",
            """
def td_errors(rewards, values, next_values, terminated, gamma):
    return rewards + gamma * (1 - terminated) * values - values
""",
            mistake="td_values_not_next",
        ),
        Answer(
            "sin γ",
            """
def td_errors(rewards, values, next_values, terminated, gamma):
    return rewards + (1 - terminated) * next_values - values
""",
            mistake="td_no_gamma",
        ),
        Answer(
            "objetivo TD sin restar V",
            """
def td_errors(rewards, values, next_values, terminated, gamma):
    return rewards + gamma * (1 - terminated) * next_values
""",
            mistake="td_target_not_error",
        ),
    ],
    "n_step_returns": [
        Answer(
            "cola con γ^(m−1)",
            """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    T = rewards.shape[0]
    done = torch.maximum(terminated, truncated)
    returns = torch.zeros_like(rewards)
    for t in range(T):
        total = torch.zeros_like(rewards[0])
        alive = torch.ones_like(rewards[0])
        for k in range(t, min(t + n, T)):
            total = total + alive * gamma ** (k - t) * rewards[k]
            stop = done[k] if k < min(t + n, T) - 1 else torch.ones_like(done[k])
            tail = (1 - terminated[k]) * next_values[k]
            total = total + alive * stop * gamma ** (k - t) * tail
            alive = alive * (1 - stop)
        returns[t] = total
    return returns
""",
            mistake="n_step_tail_power",
        ),
        Answer(
            "la suma se filtra al episodio siguiente",
            """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    T = rewards.shape[0]
    returns = torch.zeros_like(rewards)
    for t in range(T):
        end = min(t + n, T)
        total = torch.zeros_like(rewards[0])
        for k in range(t, end):
            total = total + gamma ** (k - t) * rewards[k]
        k = end - 1
        total = total + gamma ** (end - t) * (1 - terminated[k]) * next_values[k]
        returns[t] = total
    return returns
""",
            mistake="n_step_leaks",
            fails=("n_step_returns_test_terminated", "n_step_returns_test_truncated"),
        ),
        Answer(
            "bootstrap tras un estado terminal",
            """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    T = rewards.shape[0]
    done = torch.maximum(terminated, truncated)
    returns = torch.zeros_like(rewards)
    for t in range(T):
        total = torch.zeros_like(rewards[0])
        alive = torch.ones_like(rewards[0])
        for k in range(t, min(t + n, T)):
            total = total + alive * gamma ** (k - t) * rewards[k]
            stop = done[k] if k < min(t + n, T) - 1 else torch.ones_like(done[k])
            total = total + alive * stop * gamma ** (k - t + 1) * next_values[k]
            alive = alive * (1 - stop)
        returns[t] = total
    return returns
""",
            mistake="n_step_bootstraps_terminal",
            fails=("n_step_returns_test_terminated",),
        ),
        Answer(
            "sin bootstrap tras un truncamiento",
            """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    T = rewards.shape[0]
    done = torch.maximum(terminated, truncated)
    returns = torch.zeros_like(rewards)
    for t in range(T):
        total = torch.zeros_like(rewards[0])
        alive = torch.ones_like(rewards[0])
        for k in range(t, min(t + n, T)):
            total = total + alive * gamma ** (k - t) * rewards[k]
            stop = done[k] if k < min(t + n, T) - 1 else torch.ones_like(done[k])
            tail = (1 - done[k]) * next_values[k]
            total = total + alive * stop * gamma ** (k - t + 1) * tail
            alive = alive * (1 - stop)
        returns[t] = total
    return returns
""",
            mistake="n_step_truncated_as_terminal",
            fails=("n_step_returns_test_truncated",),
        ),
        Answer(
            "sin parar a los n pasos",
            """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    T = rewards.shape[0]
    done = torch.maximum(terminated, truncated)
    returns = torch.zeros_like(rewards)
    running = next_values[-1] * (1 - terminated[-1])
    for t in reversed(range(T)):
        tail = (1 - terminated[t]) * next_values[t]
        future = torch.where(done[t] > 0, tail, running)
        running = rewards[t] + gamma * future
        returns[t] = running
    return returns
""",
            mistake="n_step_ignores_n",
        ),
    ],
    "gae": [
        Answer(
            "γ y λ cambiados",
            """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    deltas = rewards + lam * (1 - terminated) * next_values - values
    not_done = 1 - torch.maximum(terminated, truncated)
    advantages = torch.zeros_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in reversed(range(len(deltas))):
        running = deltas[t] + gamma * lam * not_done[t] * running
        advantages[t] = running
    return advantages
""",
            mistake="gae_swapped",
        ),
        Answer(
            "la ventaja se filtra entre episodios",
            """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    deltas = rewards + gamma * (1 - terminated) * next_values - values
    advantages = torch.zeros_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in reversed(range(len(deltas))):
        running = deltas[t] + gamma * lam * running
        advantages[t] = running
    return advantages
""",
            mistake="gae_leaks",
            fails=("gae_test_terminated", "gae_test_truncated"),
        ),
        Answer(
            "bootstrap tras un estado terminal",
            """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    deltas = rewards + gamma * next_values - values
    not_done = 1 - torch.maximum(terminated, truncated)
    advantages = torch.zeros_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in reversed(range(len(deltas))):
        running = deltas[t] + gamma * lam * not_done[t] * running
        advantages[t] = running
    return advantages
""",
            mistake="gae_bootstraps_terminal",
            fails=("gae_test_terminated",),
        ),
        Answer(
            "sin bootstrap tras un truncamiento",
            """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    done = torch.maximum(terminated, truncated)
    deltas = rewards + gamma * (1 - done) * next_values - values
    advantages = torch.zeros_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in reversed(range(len(deltas))):
        running = deltas[t] + gamma * lam * (1 - done[t]) * running
        advantages[t] = running
    return advantages
""",
            mistake="gae_no_bootstrap_truncated",
            fails=("gae_test_truncated",),
        ),
        Answer(
            "hacia delante en el tiempo",
            """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    deltas = rewards + gamma * (1 - terminated) * next_values - values
    done = torch.maximum(terminated, truncated)
    advantages = torch.zeros_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in range(len(deltas)):
        keep = 1 - done[t - 1] if t > 0 else 1.0
        running = deltas[t] + gamma * lam * keep * running
        advantages[t] = running
    return advantages
""",
            mistake="gae_forward",
        ),
        Answer(
            "solo terminated corta la recursión",
            """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    deltas = rewards + gamma * (1 - terminated) * next_values - values
    advantages = torch.zeros_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in reversed(range(len(deltas))):
        running = deltas[t] + gamma * lam * (1 - terminated[t]) * running
        advantages[t] = running
    return advantages
""",
            mistake="gae_truncation_leaks",
            fails=("gae_test_truncated",),
        ),
        Answer(
            "sin λ",
            """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    deltas = rewards + gamma * (1 - terminated) * next_values - values
    not_done = 1 - torch.maximum(terminated, truncated)
    advantages = torch.zeros_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in reversed(range(len(deltas))):
        running = deltas[t] + gamma * not_done[t] * running
        advantages[t] = running
    return advantages
""",
            mistake="gae_no_lambda",
        ),
    ],
    "actor_critic_loss": [
        Answer(
            "devuelve los tres términos por separado",
            """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    return policy_loss, value_coef * value_loss, -entropy_coef * entropy.mean()
""",
            mistake="loss_not_scalar",
        ),
        Answer(
            "ventaja sin separar del grafo",
            """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    return policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
""",
            mistake="loss_advantage_attached",
            fails=("actor_critic_loss_test_grad",),
        ),
        Answer(
            "signo del actor",
            """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = (log_probs * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    return policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
""",
            mistake="loss_policy_sign",
        ),
        Answer(
            "entropía con el signo cambiado",
            """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    return policy_loss + value_coef * value_loss + entropy_coef * entropy.mean()
""",
            mistake="loss_entropy_sign",
        ),
        Answer(
            "sin value_coef",
            """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    return policy_loss + value_loss - entropy_coef * entropy.mean()
""",
            mistake="loss_no_value_coef",
        ),
        Answer(
            "sumas en lugar de medias",
            """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).sum()
    value_loss = ((values - returns.detach()) ** 2).sum()
    return policy_loss + value_coef * value_loss - entropy_coef * entropy.sum()
""",
            mistake="loss_sum",
        ),
        Answer(
            "pérdida como número de Python",
            """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    total = policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
    return total.item()
""",
            mistake="loss_not_tensor",
            fails=("actor_critic_loss_test_grad",),
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "td_errors": [
        Answer(
            "con NumPy",
            """
def td_errors(rewards, values, next_values, terminated, gamma):
    r, v, nv, d = (np.asarray(x, dtype=float)
                   for x in (rewards, values, next_values, terminated))
    return r + gamma * np.where(d > 0, 0.0, nv) - v
""",
        ),
        Answer(
            "con torch.where y float64",
            """
def td_errors(rewards, values, next_values, terminated, gamma):
    bootstrap = torch.where(terminated.bool(), torch.zeros_like(next_values),
                            next_values)
    return (rewards.double() + gamma * bootstrap.double()) - values.double()
""",
        ),
    ],
    "n_step_returns": [
        Answer(
            "hacia atrás con una ventana de n pasos (NumPy)",
            """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    r = np.asarray(rewards, dtype=float)
    nv = np.asarray(next_values, dtype=float)
    term = np.asarray(terminated, dtype=float)
    done = np.maximum(term, np.asarray(truncated, dtype=float))
    T = len(r)
    out = np.zeros_like(r)
    for t in range(T):
        total, discount = np.zeros_like(r[0]), 1.0
        alive = np.ones_like(r[0])
        for k in range(t, min(t + n, T)):
            total += alive * discount * r[k]
            discount *= gamma
            last = k == min(t + n, T) - 1
            stop = np.ones_like(r[0]) if last else done[k]
            total += alive * stop * discount * (1 - term[k]) * nv[k]
            alive = alive * (1 - stop)
        out[t] = total
    return out
""",
        ),
        Answer(
            "columna a columna, con listas",
            """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    T, N = rewards.shape
    out = torch.zeros(T, N, dtype=torch.float64)
    for i in range(N):
        for t in range(T):
            total, k = 0.0, t
            while True:
                total += gamma ** (k - t) * float(rewards[k, i])
                ended = bool(terminated[k, i]) or bool(truncated[k, i])
                if ended or k == T - 1 or k == t + n - 1:
                    if not bool(terminated[k, i]):
                        total += gamma ** (k - t + 1) * float(next_values[k, i])
                    break
                k += 1
            out[t, i] = total
    return out
""",
        ),
    ],
    "gae": [
        Answer(
            "con NumPy y listas",
            """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    r, v, nv = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    term = np.asarray(terminated, dtype=bool)
    done = term | np.asarray(truncated, dtype=bool)
    deltas = r + gamma * np.where(term, 0.0, nv) - v
    advantages = []
    running = np.zeros(r.shape[1:])
    for t in range(len(r) - 1, -1, -1):
        running = deltas[t] + np.where(done[t], 0.0, gamma * lam * running)
        advantages.append(running)
    return np.stack(advantages[::-1])
""",
        ),
        Answer(
            "con td_errors y float64",
            """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    deltas = td_errors(rewards, values, next_values, terminated, gamma)
    deltas = torch.as_tensor(deltas, dtype=torch.float64)
    not_done = (1 - terminated.double()) * (1 - truncated.double())
    advantages = torch.zeros_like(deltas)
    for t in reversed(range(deltas.shape[0])):
        advantages[t] = deltas[t]
        if t + 1 < deltas.shape[0]:
            advantages[t] += gamma * lam * not_done[t] * advantages[t + 1]
    return advantages
""",
        ),
    ],
    "actor_critic_loss": [
        Answer(
            "con F.mse_loss y términos por separado",
            """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    import torch.nn.functional as F

    weights = advantages.detach()
    policy_loss = -torch.mean(weights * log_probs)
    value_loss = F.mse_loss(values, returns.detach())
    entropy_bonus = torch.mean(entropy)
    return policy_loss + value_coef * value_loss - entropy_coef * entropy_bonus
""",
        ),
        Answer(
            "con sumas divididas por B",
            """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    B = log_probs.numel()
    with torch.no_grad():
        adv, target = advantages.clone(), returns.clone()
    total = -(log_probs * adv).sum() + value_coef * ((target - values) ** 2).sum()
    return (total - entropy_coef * entropy.sum()) / B
""",
        ),
    ],
}

# ---------------------------------------------------------------------------
# Clases de error que valen para cualquier ejercicio (issue #22).
# ---------------------------------------------------------------------------

WRONG["td_errors"] += [
    Answer(
        "acumula sobre rewards",
        """
def td_errors(rewards, values, next_values, terminated, gamma):
    rewards += gamma * (1 - terminated) * next_values - values
    return rewards
""",
        mistake="modified_input",
    ),
    Answer(
        "redondea a dos decimales",
        """
def td_errors(rewards, values, next_values, terminated, gamma):
    delta = rewards + gamma * (1 - terminated) * next_values - values
    return torch.round(delta, decimals=2)
""",
        mistake="rounded",
    ),
]
WRONG["gae"] += [
    Answer(
        "convierte los deltas en ventajas sobre la entrada",
        """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    rewards += gamma * (1 - terminated) * next_values - values
    not_done = 1 - torch.maximum(terminated, truncated)
    for t in reversed(range(rewards.shape[0] - 1)):
        rewards[t] += gamma * lam * not_done[t] * rewards[t + 1]
    return rewards
""",
        mistake="modified_input",
    ),
]
WRONG["n_step_returns"] += [
    Answer(
        "descuenta las recompensas sobre la entrada",
        """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    T = rewards.shape[0]
    done = torch.maximum(terminated, truncated)
    out = torch.zeros_like(rewards)
    for t in range(T):
        alive = torch.ones_like(rewards[0])
        for k in range(t, min(t + n, T)):
            rewards[k] = rewards[k] * 1.0
            out[t] += alive * gamma ** (k - t) * rewards[k]
            stop = done[k] if k < min(t + n, T) - 1 else torch.ones_like(done[k])
            tail = (1 - terminated[k]) * next_values[k]
            out[t] += alive * stop * gamma ** (k - t + 1) * tail
            alive = alive * (1 - stop)
        next_values[t] = 0.0
    return out
""",
        mistake="modified_input",
    ),
    Answer(
        "acumula en un tensor de enteros",
        """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    T = rewards.shape[0]
    done = torch.maximum(terminated, truncated)
    out = torch.zeros(rewards.shape, dtype=torch.long)
    for t in range(T):
        total = torch.zeros_like(rewards[0])
        alive = torch.ones_like(rewards[0])
        for k in range(t, min(t + n, T)):
            total = total + alive * gamma ** (k - t) * rewards[k]
            stop = done[k] if k < min(t + n, T) - 1 else torch.ones_like(done[k])
            tail = (1 - terminated[k]) * next_values[k]
            total = total + alive * stop * gamma ** (k - t + 1) * tail
            alive = alive * (1 - stop)
        out[t] = total
    return out
""",
        mistake="integer_dtype",
    ),
]
WRONG["actor_critic_loss"] += [
    Answer(
        "objetivos del crítico sin separar del grafo",
        """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values - returns) ** 2).mean()
    return policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
""",
        mistake="loss_returns_attached",
        fails=("actor_critic_loss_test_grad",),
    ),
]

# ---------------------------------------------------------------------------
# Un error típico por cada fila que ninguna respuesta provocaba (issue 48).
# ---------------------------------------------------------------------------

WRONG["td_errors"] += [
    Answer(
        "multiplica por terminated en lugar de por 1 − terminated",
        """
def td_errors(rewards, values, next_values, terminated, gamma):
    return rewards + gamma * terminated * next_values - values
""",
        mistake="td_mask_reversed",
    ),
]
WRONG["gae"] += [
    Answer(
        "sin γ en la recursión",
        """
def gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    deltas = rewards + gamma * (1 - terminated) * next_values - values
    not_done = 1 - torch.maximum(terminated, truncated)
    advantages = torch.zeros_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in reversed(range(len(deltas))):
        running = deltas[t] + lam * not_done[t] * running
        advantages[t] = running
    return advantages
""",
        mistake="gae_no_gamma",
    ),
]
WRONG["actor_critic_loss"] += [
    Answer(
        "olvida el return",
        """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    loss = policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
""",
        mistake="loss_not_number",
    ),
    Answer(
        "sin el premio a la entropía",
        """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    return policy_loss + value_coef * value_loss
""",
        mistake="loss_no_entropy",
    ),
    Answer(
        "error absoluto en el crítico",
        """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = (values - returns.detach()).abs().mean()
    return policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
""",
        mistake="loss_value_abs",
    ),
    Answer(
        "un ½ de más en el crítico",
        """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = 0.5 * ((values - returns.detach()) ** 2).mean()
    return policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
""",
        mistake="loss_wrong_value",
    ),
    Answer(
        "log_probs separado del grafo",
        """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs.detach() * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    return policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
""",
        mistake="loss_policy_detached",
        fails=("actor_critic_loss_test_grad",),
    ),
    Answer(
        "values separado del grafo",
        """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values.detach() - returns.detach()) ** 2).mean()
    return policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
""",
        mistake="loss_critic_detached",
        fails=("actor_critic_loss_test_grad",),
    ),
    Answer(
        "la entropía separada del grafo",
        """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    policy_loss = -(log_probs * advantages.detach()).mean()
    value_loss = ((values - returns.detach()) ** 2).mean()
    bonus = entropy.detach().mean()
    return policy_loss + value_coef * value_loss - entropy_coef * bonus
""",
        mistake="loss_entropy_detached",
        fails=("actor_critic_loss_test_grad",),
    ),
    Answer(
        "todo bajo torch.no_grad()",
        """
def actor_critic_loss(log_probs, values, advantages, returns, entropy,
                      value_coef, entropy_coef):
    with torch.no_grad():
        policy_loss = -(log_probs * advantages).mean()
        value_loss = ((values - returns) ** 2).mean()
        return policy_loss + value_coef * value_loss - entropy_coef * entropy.mean()
""",
        mistake="loss_no_grad",
        fails=("actor_critic_loss_test_grad",),
    ),
]
WRONG["n_step_returns"] += [
    Answer(
        "calcula en (N, T), una fila por entorno, y no vuelve a trasponer",
        """
def n_step_returns(rewards, next_values, terminated, truncated, n, gamma):
    # Más cómodo con una fila por entorno: (N, T).
    r, nv, term = rewards.T, next_values.T, terminated.T
    done = torch.maximum(terminated, truncated).T
    N, T = r.shape
    out = torch.zeros(N, T)
    for t in range(T):
        alive = torch.ones(N)
        end = min(t + n, T)
        for k in range(t, end):
            out[:, t] += alive * gamma ** (k - t) * r[:, k]
            stop = done[:, k] if k < end - 1 else torch.ones(N)
            tail = (1 - term[:, k]) * nv[:, k]
            out[:, t] += alive * stop * gamma ** (k - t + 1) * tail
            alive = alive * (1 - stop)
    return out
""",
        mistake="transposed",
    ),
]
