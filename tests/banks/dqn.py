"""Banco de respuestas del módulo 02 · DQN."""

from tests.banks import Answer

MODULE = "02_dqn"

WRONG: dict[str, list[Answer]] = {
    "q_learning_update": [
        Answer(
            "se apoya en terminales",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    target = reward + gamma * q_table[next_state].max()
    q_table[state, action] += alpha * (target - q_table[state, action])
    return q_table
""",
            mistake="q_bootstraps_terminal",
        ),
        Answer(
            "máximo de toda la tabla",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    target = reward if terminated else reward + gamma * q_table.max()
    q_table[state, action] += alpha * (target - q_table[state, action])
    return q_table
""",
            mistake="q_max_whole_table",
        ),
        Answer(
            "máximo sobre el eje equivocado",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    if terminated:
        target = reward
    else:
        target = reward + gamma * q_table.max(axis=0)[next_state]
    q_table[state, action] += alpha * (target - q_table[state, action])
    return q_table
""",
            mistake="q_max_wrong_axis",
        ),
        Answer(
            "mira el estado actual",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    target = reward if terminated else reward + gamma * q_table[state].max()
    q_table[state, action] += alpha * (target - q_table[state, action])
    return q_table
""",
            mistake="q_current_state",
        ),
        Answer(
            "la misma acción en s'",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    future = 0.0 if terminated else q_table[next_state, action]
    target = reward + gamma * future
    q_table[state, action] += alpha * (target - q_table[state, action])
    return q_table
""",
            mistake="q_same_action",
        ),
        Answer(
            "sin α",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    target = reward if terminated else reward + gamma * q_table[next_state].max()
    q_table[state, action] = target
    return q_table
""",
            mistake="q_no_alpha",
        ),
        Answer(
            "γ delante de r",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    future = 0.0 if terminated else q_table[next_state].max()
    target = gamma * (reward + future)
    q_table[state, action] += alpha * (target - q_table[state, action])
    return q_table
""",
            mistake="q_gamma_on_reward",
        ),
        Answer(
            "no devuelve la tabla",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    target = reward if terminated else reward + gamma * q_table[next_state].max()
    q_table[state, action] += alpha * (target - q_table[state, action])
""",
            mistake="returns_none",
        ),
    ],
    "linear_epsilon": [
        Answer(
            "sin tope",
            """
def linear_epsilon(step, start, end, duration):
    return start + step / duration * (end - start)
""",
            mistake="epsilon_no_clip",
        ),
        Answer(
            "llega un paso antes",
            """
def linear_epsilon(step, start, end, duration):
    return start + min(step / (duration - 1), 1.0) * (end - start)
""",
            mistake="epsilon_off_by_one_end",
        ),
        Answer(
            "empieza un paso tarde",
            """
def linear_epsilon(step, start, end, duration):
    return start + min((step + 1) / duration, 1.0) * (end - start)
""",
            mistake="epsilon_off_by_one_start",
        ),
        Answer(
            "al revés",
            """
def linear_epsilon(step, start, end, duration):
    return end + min(step / duration, 1.0) * (start - end)
""",
            mistake="epsilon_reversed",
        ),
        Answer(
            "división entera",
            """
def linear_epsilon(step, start, end, duration):
    return start + min(step // duration, 1) * (end - start)
""",
            mistake="epsilon_integer_division",
        ),
    ],
    "td_targets": [
        Answer(
            "se apoya en terminales",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    return rewards + gamma * next_q_values.max(dim=1).values
""",
            mistake="td_no_mask",
        ),
        Answer(
            "máscara también sobre r",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    return (rewards + gamma * next_q_values.max(dim=1).values) * (1 - terminated)
""",
            mistake="td_mask_on_reward",
        ),
        Answer(
            "máscara al revés",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    return rewards + gamma * terminated * next_q_values.max(dim=1).values
""",
            mistake="td_mask_reversed",
        ),
        Answer(
            "max sobre el eje del lote",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    return rewards + gamma * (1 - terminated) * next_q_values.max(dim=0).values
""",
            mistake="td_max_wrong_dim",
        ),
        Answer(
            "media en lugar de máximo",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    return rewards + gamma * (1 - terminated) * next_q_values.mean(dim=1)
""",
            mistake="td_mean_not_max",
        ),
        Answer(
            "keepdim",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    best = next_q_values.max(dim=1, keepdim=True).values
    return rewards + gamma * (1 - terminated) * best
""",
            mistake="td_keepdim",
        ),
        Answer(
            "sin γ",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    return rewards + (1 - terminated) * next_q_values.max(dim=1).values
""",
            mistake="td_no_gamma",
        ),
    ],
    "sample_batch": [
        Answer(
            "muestrea toda la capacidad",
            """
def sample_batch(buffer, batch_size, rng):
    i = rng.integers(0, buffer.capacity, size=batch_size)
    return {
        "observations": torch.as_tensor(buffer.observations[i]),
        "actions": torch.as_tensor(buffer.actions[i]),
        "rewards": torch.as_tensor(buffer.rewards[i]),
        "next_observations": torch.as_tensor(buffer.next_observations[i]),
        "terminated": torch.as_tensor(buffer.terminated[i]),
    }
""",
            mistake="batch_empty_slots",
        ),
        Answer(
            "índices distintos por campo",
            """
def sample_batch(buffer, batch_size, rng):
    def pick(array):
        return torch.as_tensor(array[rng.integers(0, buffer.size, size=batch_size)])
    return {
        "observations": pick(buffer.observations),
        "actions": pick(buffer.actions),
        "rewards": pick(buffer.rewards),
        "next_observations": pick(buffer.next_observations),
        "terminated": pick(buffer.terminated),
    }
""",
            mistake="batch_misaligned",
        ),
        Answer(
            "acciones como float",
            """
def sample_batch(buffer, batch_size, rng):
    i = rng.integers(0, buffer.size, size=batch_size)
    return {
        "observations": torch.as_tensor(buffer.observations[i]),
        "actions": torch.as_tensor(buffer.actions[i], dtype=torch.float32),
        "rewards": torch.as_tensor(buffer.rewards[i]),
        "next_observations": torch.as_tensor(buffer.next_observations[i]),
        "terminated": torch.as_tensor(buffer.terminated[i]),
    }
""",
            mistake="batch_actions_not_int64",
        ),
        Answer(
            "arrays de NumPy",
            """
def sample_batch(buffer, batch_size, rng):
    i = rng.integers(0, buffer.size, size=batch_size)
    return {
        "observations": buffer.observations[i],
        "actions": buffer.actions[i],
        "rewards": buffer.rewards[i],
        "next_observations": buffer.next_observations[i],
        "terminated": buffer.terminated[i],
    }
""",
            mistake="batch_not_tensor",
        ),
        Answer(
            "np.random global",
            """
def sample_batch(buffer, batch_size, rng):
    i = np.random.randint(0, buffer.size, size=batch_size)
    return {
        "observations": torch.as_tensor(buffer.observations[i]),
        "actions": torch.as_tensor(buffer.actions[i]),
        "rewards": torch.as_tensor(buffer.rewards[i]),
        "next_observations": torch.as_tensor(buffer.next_observations[i]),
        "terminated": torch.as_tensor(buffer.terminated[i]),
    }
""",
            mistake="batch_ignores_rng",
        ),
        Answer(
            "nunca la última",
            """
def sample_batch(buffer, batch_size, rng):
    i = rng.integers(0, buffer.size - 1, size=batch_size)
    return {
        "observations": torch.as_tensor(buffer.observations[i]),
        "actions": torch.as_tensor(buffer.actions[i]),
        "rewards": torch.as_tensor(buffer.rewards[i]),
        "next_observations": torch.as_tensor(buffer.next_observations[i]),
        "terminated": torch.as_tensor(buffer.terminated[i]),
    }
""",
            mistake="batch_skips_last",
        ),
        Answer(
            "float64",
            """
def sample_batch(buffer, batch_size, rng):
    i = rng.integers(0, buffer.size, size=batch_size)
    as64 = lambda a: torch.tensor(a, dtype=torch.float64)
    return {
        "observations": as64(buffer.observations[i]),
        "actions": torch.as_tensor(buffer.actions[i]),
        "rewards": as64(buffer.rewards[i]),
        "next_observations": as64(buffer.next_observations[i]),
        "terminated": as64(buffer.terminated[i]),
    }
""",
            mistake="batch_not_float32",
        ),
    ],
    "dqn_loss": [
        Answer(
            "gradiente hacia la red objetivo",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    next_q_values = target_network(batch["next_observations"])
    targets = td_targets(batch["rewards"], next_q_values, batch["terminated"], gamma)
    return F.smooth_l1_loss(q_taken, targets)
""",
            mistake="loss_grad_into_target",
            # El valor es el correcto: pierde solo la celda del gradiente.
            fails=("dqn_loss_test_grad",),
        ),
        Answer(
            "error cuadrático",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.mse_loss(q_taken, targets)
""",
            mistake="loss_mse",
        ),
        Answer(
            "gather sobre el eje del lote",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(0, batch["actions"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.smooth_l1_loss(q_taken, targets)
""",
            mistake="loss_gather_wrong_dim",
        ),
        Answer(
            "max en lugar de la acción tomada",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_taken = q_network(batch["observations"]).max(dim=1).values
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.smooth_l1_loss(q_taken, targets)
""",
            mistake="loss_max_not_gather",
        ),
        Answer(
            "objetivo con la red Q",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q_values = q_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.smooth_l1_loss(q_taken, targets)
""",
            mistake="loss_online_target",
        ),
        Answer(
            "sin squeeze",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1))
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.smooth_l1_loss(q_taken, targets)
""",
            mistake="loss_no_squeeze",
        ),
        Answer(
            "suma en lugar de media",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.smooth_l1_loss(q_taken, targets, reduction="sum")
""",
            mistake="loss_sum",
        ),
        Answer(
            "objetivo sin máscara, escrito a mano",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        best_next = target_network(batch["next_observations"]).max(dim=1).values
        targets = batch["rewards"] + gamma * best_next
    return F.smooth_l1_loss(q_taken, targets)
""",
            mistake="loss_no_mask",
        ),
        Answer(
            "devuelve un float",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.smooth_l1_loss(q_taken, targets).item()
""",
            mistake="loss_no_grad",
            fails=("dqn_loss_test_grad",),
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "q_learning_update": [
        Answer(
            "sobre una copia",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    q = np.array(q_table, dtype=float)
    future = 0.0 if terminated else np.max(q[next_state])
    target = reward + gamma * future
    q[state, action] = (1 - alpha) * q[state, action] + alpha * target
    return q
""",
        ),
        Answer(
            "máscara con (1 − terminated)",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    target = reward + gamma * (1 - float(terminated)) * q_table[next_state].max()
    td_error = target - q_table[state, action]
    q_table[state, action] = q_table[state, action] + alpha * td_error
    return q_table
""",
        ),
        Answer(
            "con un bucle para el máximo",
            """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    best = max(q_table[next_state][a] for a in range(q_table.shape[1]))
    target = reward if terminated else reward + gamma * best
    q_table[state][action] += alpha * (target - q_table[state][action])
    return q_table
""",
        ),
    ],
    "linear_epsilon": [
        Answer(
            "con max",
            """
def linear_epsilon(step, start, end, duration):
    return max(end, start - (start - end) * step / duration)
""",
        ),
        Answer(
            "con np.interp",
            """
def linear_epsilon(step, start, end, duration):
    return float(np.interp(step, [0, duration], [start, end]))
""",
        ),
        Answer(
            "con un if",
            """
def linear_epsilon(step, start, end, duration):
    if step >= duration:
        return end
    return start + (end - start) * step / duration
""",
        ),
    ],
    "td_targets": [
        Answer(
            "con torch.where",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    bootstrap = rewards + gamma * next_q_values.max(dim=1).values
    return torch.where(terminated.bool(), rewards, bootstrap)
""",
        ),
        Answer(
            "con amax y torch.max",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    not_done = 1 - terminated
    return rewards + gamma * not_done * torch.amax(next_q_values, dim=1)
""",
        ),
        Answer(
            "con un bucle",
            """
def td_targets(rewards, next_q_values, terminated, gamma):
    targets = []
    for r, q, d in zip(rewards, next_q_values, terminated):
        targets.append(r if d == 1 else r + gamma * torch.max(q))
    return torch.stack([torch.as_tensor(y, dtype=torch.float32) for y in targets])
""",
        ),
    ],
    "sample_batch": [
        Answer(
            "rng.choice y from_numpy",
            """
def sample_batch(buffer, batch_size, rng):
    idx = rng.choice(buffer.size, size=batch_size)
    fields = ["observations", "actions", "rewards", "next_observations", "terminated"]
    return {f: torch.from_numpy(getattr(buffer, f)[idx]) for f in fields}
""",
        ),
        Answer(
            "tipos explícitos",
            """
def sample_batch(buffer, batch_size, rng):
    idx = rng.integers(buffer.size, size=batch_size)
    f32 = torch.float32
    return {
        "observations": torch.tensor(buffer.observations[idx], dtype=f32),
        "actions": torch.tensor(buffer.actions[idx], dtype=torch.long),
        "rewards": torch.tensor(buffer.rewards[idx], dtype=f32),
        "next_observations": torch.tensor(buffer.next_observations[idx], dtype=f32),
        "terminated": torch.tensor(buffer.terminated[idx], dtype=f32),
    }
""",
        ),
    ],
    "dqn_loss": [
        Answer(
            "detach en lugar de no_grad",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    next_q_values = target_network(batch["next_observations"]).detach()
    targets = td_targets(batch["rewards"], next_q_values, batch["terminated"], gamma)
    return F.smooth_l1_loss(q_taken, targets)
""",
        ),
        Answer(
            "índices avanzados y Huber a mano",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    actions = batch["actions"]
    q_taken = q_network(batch["observations"])[torch.arange(len(actions)), actions]
    with torch.no_grad():
        best = target_network(batch["next_observations"]).max(dim=1).values
        targets = batch["rewards"] + gamma * (1 - batch["terminated"]) * best
    error = q_taken - targets
    huber = torch.where(error.abs() <= 1, 0.5 * error**2, error.abs() - 0.5)
    return huber.mean()
""",
        ),
        Answer(
            "F.huber_loss",
            """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = torch.gather(q_values, 1, batch["actions"][:, None])[:, 0]
    with torch.no_grad():
        targets = td_targets(batch["rewards"],
                             target_network(batch["next_observations"]),
                             batch["terminated"], gamma)
    return F.huber_loss(q_taken, targets, delta=1.0)
""",
        ),
    ],
}

# ---------------------------------------------------------------------------
# Clases de error que valen para cualquier ejercicio (issue #22).
# ---------------------------------------------------------------------------

WRONG["q_learning_update"] += [
    Answer(
        "redondea la tabla a dos decimales",
        """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    target = reward if terminated else reward + gamma * q_table[next_state].max()
    q_table[state, action] += alpha * (target - q_table[state, action])
    return np.round(q_table, 2)
""",
        mistake="rounded",
    ),
]
WRONG["linear_epsilon"] += [
    Answer(
        "redondea a dos decimales",
        """
def linear_epsilon(step, start, end, duration):
    return round(start + min(step / duration, 1.0) * (end - start), 2)
""",
        mistake="rounded",
    ),
]
WRONG["td_targets"] += [
    Answer(
        "acumula sobre rewards",
        """
def td_targets(rewards, next_q_values, terminated, gamma):
    rewards += gamma * (1.0 - terminated) * next_q_values.max(dim=1).values
    return rewards
""",
        mistake="modified_input",
    ),
    Answer(
        "redondea a dos decimales",
        """
def td_targets(rewards, next_q_values, terminated, gamma):
    y = rewards + gamma * (1.0 - terminated) * next_q_values.max(dim=1).values
    return torch.round(y, decimals=2)
""",
        mistake="rounded",
    ),
]
RIGHT["dqn_loss"] += [
    Answer(
        # Sin doble penalización: su td_targets está mal, pero este ejercicio se
        # califica con la de referencia en su lugar.
        "con unos td_targets mal escritos en la misma celda",
        """
def td_targets(rewards, next_q_values, terminated, gamma):
    return rewards + gamma * next_q_values.max(dim=1).values

def dqn_loss(q_network, target_network, batch, gamma):
    q_taken = q_network(batch["observations"]).gather(
        1, batch["actions"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        targets = td_targets(batch["rewards"],
                             target_network(batch["next_observations"]),
                             batch["terminated"], gamma)
    return F.smooth_l1_loss(q_taken, targets)
""",
    ),
]

WRONG["dqn_loss"] += [
    Answer(
        "Q(s, a) sin gradiente",
        """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1).detach()
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.smooth_l1_loss(q_taken, targets)
""",
        mistake="loss_no_grad",
        fails=("dqn_loss_test_grad",),
    ),
]

# ---------------------------------------------------------------------------
# Ejercicio 2 · un episodio de Q-learning
# ---------------------------------------------------------------------------

WRONG["q_learning_episode"] = [
    Answer(
        "no guarda lo que devuelve q_learning_update",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    episode_return, length, done = 0.0, 0, False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_learning_update(q_table, state, action, reward, next_state, terminated,
                          alpha, gamma)
        episode_return += reward
        length += 1
        done = terminated or truncated
        state = next_state
    return q_table, episode_return, length
""",
        mistake="episode_update_ignored",
    ),
    Answer(
        "el truncado como final",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    episode_return, length, done = 0.0, 0, False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    done, alpha, gamma)
        episode_return += reward
        length += 1
        state = next_state
    return q_table, episode_return, length
""",
        mistake="episode_truncated_as_terminal",
        # Sin límite de tiempo que corte el episodio, juega bien.
        fails=("q_learning_episode_test_truncated",),
    ),
    Answer(
        "no para al truncar",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    episode_return, length, terminated = 0.0, 0, False
    while not terminated:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    terminated, alpha, gamma)
        episode_return += reward
        length += 1
        state = next_state
    return q_table, episode_return, length
""",
        mistake="episode_steps_after_end",
        fails=("q_learning_episode_test_truncated",),
    ),
    Answer(
        "actualiza la casilla siguiente",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    episode_return, length, done = 0.0, 0, False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, state,
                                    terminated, alpha, gamma)
        episode_return += reward
        length += 1
        done = terminated or truncated
    return q_table, episode_return, length
""",
        mistake="episode_updates_next_state",
    ),
    Answer(
        "siempre voraz, sin el rng",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    episode_return, length, done = 0.0, 0, False
    while not done:
        action = int(np.argmax(q_table[state]))
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    terminated, alpha, gamma)
        episode_return += reward
        length += 1
        state = next_state
        done = terminated or truncated
    return q_table, episode_return, length
""",
        mistake="episode_greedy",
    ),
    Answer(
        "retorno descontado",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    episode_return, length, done = 0.0, 0, False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    terminated, alpha, gamma)
        episode_return += gamma**length * reward
        length += 1
        state = next_state
        done = terminated or truncated
    return q_table, episode_return, length
""",
        mistake="wrong_result",
        # Los episodios truncados del tablero no cobran nada: ahí no se nota.
        fails=("q_learning_episode_test",),
    ),
    Answer(
        "cuenta un paso de más",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    episode_return, length, done = 0.0, 1, False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    terminated, alpha, gamma)
        episode_return += reward
        state = next_state
        done = terminated or truncated
        if not done:
            length += 1
    return q_table, episode_return, length + 1
""",
        mistake="wrong_result",
    ),
    Answer(
        "tabla de enteros",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    q_table = np.asarray(q_table).astype(int)
    state, _ = env.reset()
    episode_return, length, done = 0.0, 0, False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    terminated, alpha, gamma)
        episode_return += reward
        length += 1
        state = next_state
        done = terminated or truncated
    return q_table, episode_return, length
""",
        mistake="episode_update_ignored",
    ),
]
RIGHT["q_learning_episode"] = [
    Answer(
        "ε-greedy a mano y un bucle con break",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    s, _ = env.reset()
    rewards = []
    while True:
        row = q_table[s]
        if rng.random() < epsilon:
            a = int(rng.integers(len(row)))
        else:
            a = int(rng.choice(np.flatnonzero(row == row.max())))
        s_next, r, terminated, truncated, _ = env.step(a)
        q_table = q_learning_update(q_table, s, a, r, s_next, bool(terminated),
                                    alpha, gamma)
        rewards.append(r)
        if terminated or truncated:
            break
        s = s_next
    return q_table, float(sum(rewards)), len(rewards)
""",
    ),
    Answer(
        "con itertools.count",
        """
import itertools

def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state = env.reset()[0]
    total = 0.0
    for t in itertools.count(1):
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    terminated, alpha, gamma)
        total = total + reward
        if terminated or truncated:
            return q_table, total, t
        state = next_state
""",
    ),
]

# ---------------------------------------------------------------------------
# Ejercicio 7 · una actualización de DQN
# ---------------------------------------------------------------------------

_UPDATE = """
def dqn_update(q_network, target_network, optimizer, buffer, rng, step, config):
    batch = sample_batch(buffer, config.batch_size, rng)
    loss = dqn_loss(q_network, target_network, batch, config.gamma)
{learn}
{sync}
    return {result}
"""
_LEARN = """    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(q_network.parameters(), config.max_grad_norm)
    optimizer.step()"""
_SYNC = """    if step % config.target_every == 0:
        target_network.load_state_dict(q_network.state_dict())"""


def _update(learn: str = _LEARN, sync: str = _SYNC, result: str = "loss.item()"):
    return _UPDATE.format(learn=learn, sync=sync, result=result)


WRONG["dqn_update"] = [
    Answer(
        "sin borrar los gradientes viejos",
        _update(
            learn="""    loss.backward()
    nn.utils.clip_grad_norm_(q_network.parameters(), config.max_grad_norm)
    optimizer.step()"""
        ),
        mistake="update_no_zero_grad",
        # El recorte y la red objetivo, bien: esas celdas puntúan.
        fails=("dqn_update_test",),
    ),
    Answer(
        "step antes de backward",
        _update(
            learn="""    optimizer.zero_grad()
    optimizer.step()
    loss.backward()
    nn.utils.clip_grad_norm_(q_network.parameters(), config.max_grad_norm)"""
        ),
        mistake="update_step_before_backward",
        fails=("dqn_update_test", "dqn_update_test_clip"),
    ),
    Answer(
        "sin recorte",
        _update(
            learn="""    optimizer.zero_grad()
    loss.backward()
    optimizer.step()"""
        ),
        mistake="update_no_clip",
        fails=("dqn_update_test_clip",),
    ),
    Answer(
        "recorta después del paso",
        _update(
            learn="""    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    nn.utils.clip_grad_norm_(q_network.parameters(), config.max_grad_norm)"""
        ),
        mistake="update_clip_after_step",
        fails=("dqn_update_test_clip",),
    ),
    Answer(
        "recorta cada componente",
        _update(
            learn="""    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(q_network.parameters(), config.max_grad_norm)
    optimizer.step()"""
        ),
        mistake="update_clip_value",
        fails=("dqn_update_test_clip",),
    ),
    Answer(
        "copia la red objetivo antes del paso",
        """
def dqn_update(q_network, target_network, optimizer, buffer, rng, step, config):
    if step % config.target_every == 0:
        target_network.load_state_dict(q_network.state_dict())
    batch = sample_batch(buffer, config.batch_size, rng)
    loss = dqn_loss(q_network, target_network, batch, config.gamma)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(q_network.parameters(), config.max_grad_norm)
    optimizer.step()
    return loss.item()
""",
        mistake="target_copied_before_step",
        fails=("dqn_update_test_target",),
    ),
    Answer(
        "la red objetivo como alias",
        _update(
            sync="""    if step % config.target_every == 0:
        target_network = q_network"""
        ),
        mistake="target_not_copied",
        fails=("dqn_update_test_target",),
    ),
    Answer(
        "copia en cada paso",
        _update(sync="""    target_network.load_state_dict(q_network.state_dict())"""),
        mistake="target_copied_off_schedule",
        fails=("dqn_update_test_target",),
    ),
    Answer(
        "comparte los tensores",
        _update(
            sync="""    if step % config.target_every == 0:
        for target_p, p in zip(target_network.parameters(), q_network.parameters()):
            target_p.data = p.data"""
        ),
        mistake="target_shares_memory",
        fails=("dqn_update_test_target",),
    ),
    Answer(
        "devuelve el tensor",
        _update(result="loss"),
        mistake="update_loss_not_float",
        fails=("dqn_update_test",),
    ),
]
RIGHT["dqn_update"] = [
    Answer(
        "recorte a mano y copia parámetro a parámetro",
        """
def dqn_update(q_network, target_network, optimizer, buffer, rng, step, config):
    params = list(q_network.parameters())
    loss = dqn_loss(q_network, target_network,
                    sample_batch(buffer, config.batch_size, rng), config.gamma)
    for p in params:
        p.grad = None
    loss.backward()
    norm = torch.sqrt(sum((p.grad.detach() ** 2).sum() for p in params))
    scale = torch.clamp(config.max_grad_norm / (norm + 1e-6), max=1.0)
    for p in params:
        p.grad.detach().mul_(scale)
    optimizer.step()
    if step % config.target_every == 0:
        with torch.no_grad():
            for target_p, p in zip(target_network.parameters(), params):
                target_p.copy_(p)
    return float(loss)
""",
    ),
    Answer(
        "zero_grad de la red y deepcopy del estado",
        """
def dqn_update(q_network, target_network, optimizer, buffer, rng, step, config):
    batch = sample_batch(buffer, config.batch_size, rng)
    loss = dqn_loss(q_network, target_network, batch, config.gamma)
    q_network.zero_grad(set_to_none=False)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(q_network.parameters(),
                                   max_norm=config.max_grad_norm)
    optimizer.step()
    sync = step % config.target_every == 0
    if sync:
        target_network.load_state_dict(copy.deepcopy(q_network.state_dict()))
    return loss.detach().item()
""",
    ),
]


# La primera respuesta errónea de cada ejercicio falla en todas sus celdas:
# tests/test_roundtrip.py la usa para la entrega «tampered», que no debe sacar
# nada. Las de crédito parcial van detrás.
def _first(grade_id: str, name: str) -> None:
    answers = WRONG[grade_id]
    chosen = next(a for a in answers if a.name == name)
    assert chosen.fails is None, name
    answers.remove(chosen)
    answers.insert(0, chosen)


WRONG["dqn_update"].insert(
    0,
    Answer(
        "solo backward y step",
        _update(
            learn="""    loss.backward()
    optimizer.step()""",
            sync="",
        ),
        mistake="update_no_zero_grad",
    ),
)
_first("q_learning_episode", "actualiza la casilla siguiente")
_first("dqn_loss", "error cuadrático")

# ---------------------------------------------------------------------------
# Un error por cada diagnóstico con nombre (issue 48): cada fila o fallo con
# id de helpers/checks/dqn.py lo provoca alguna respuesta de aquí.
# ---------------------------------------------------------------------------

WRONG["q_learning_update"] += [
    Answer(
        "media en lugar de máximo",
        """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    target = reward if terminated else reward + gamma * q_table[next_state].mean()
    q_table[state, action] += alpha * (target - q_table[state, action])
    return q_table
""",
        mistake="q_mean_not_max",
    ),
    Answer(
        "el paso con el signo cambiado",
        """
def q_learning_update(q_table, state, action, reward, next_state, terminated,
                      alpha, gamma):
    target = reward if terminated else reward + gamma * q_table[next_state].max()
    q_table[state, action] += alpha * (q_table[state, action] - target)
    return q_table
""",
        mistake="q_step_sign",
    ),
]
WRONG["q_learning_episode"] += [
    Answer(
        "sin env.reset(): empieza en env.start",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state = env.start
    episode_return, length, done = 0.0, 0, False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    terminated, alpha, gamma)
        episode_return += reward
        length += 1
        state = next_state
        done = terminated or truncated
    return q_table, episode_return, length
""",
        mistake="episode_no_reset",
    ),
    Answer(
        "devuelve solo la tabla",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    done = False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    terminated, alpha, gamma)
        state = next_state
        done = terminated or truncated
    return q_table
""",
        mistake="episode_not_tuple",
    ),
    Answer(
        "nunca terminal: pasa False a la actualización",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    episode_return, length, done = 0.0, 0, False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    False, alpha, gamma)
        episode_return += reward
        length += 1
        state = next_state
        done = terminated or truncated
    return q_table, episode_return, length
""",
        mistake="episode_never_terminal",
        fails=("q_learning_episode_test",),
    ),
    Answer(
        "α y γ en el orden cambiado",
        """
def q_learning_episode(env, q_table, alpha, gamma, epsilon, rng):
    state, _ = env.reset()
    episode_return, length, done = 0.0, 0, False
    while not done:
        action = epsilon_greedy(q_table[state], epsilon, rng)
        next_state, reward, terminated, truncated, _ = env.step(action)
        q_table = q_learning_update(q_table, state, action, reward, next_state,
                                    terminated, gamma, alpha)
        episode_return += reward
        length += 1
        state = next_state
        done = terminated or truncated
    return q_table, episode_return, length
""",
        mistake="episode_wrong_order",
    ),
]
WRONG["td_targets"] += [
    Answer(
        "γ delante de r",
        """
def td_targets(rewards, next_q_values, terminated, gamma):
    return gamma * (rewards + (1 - terminated) * next_q_values.max(dim=1).values)
""",
        mistake="td_gamma_on_reward",
    ),
    Answer(
        "con NumPy: devuelve un array",
        """
def td_targets(rewards, next_q_values, terminated, gamma):
    best = next_q_values.numpy().max(axis=1)
    return rewards.numpy() + gamma * (1 - terminated.numpy()) * best
""",
        mistake="td_not_tensor",
    ),
]

_BATCH = """
def sample_batch(buffer, batch_size, rng):
    i = {indices}
    return {{
        "observations": torch.as_tensor(buffer.observations[i]),
        "actions": torch.as_tensor(buffer.actions[i]),
        "rewards": torch.as_tensor(buffer.rewards[i]),
        "next_observations": torch.as_tensor(buffer.next_observations[i]),
        "{terminated}": torch.as_tensor(buffer.terminated[i]),
    }}
"""


def _batch(indices: str, terminated: str = "terminated") -> str:
    return _BATCH.format(indices=indices, terminated=terminated)


WRONG["sample_batch"] += [
    Answer(
        "devuelve una tupla",
        """
def sample_batch(buffer, batch_size, rng):
    i = rng.integers(0, buffer.size, size=batch_size)
    return (
        torch.as_tensor(buffer.observations[i]),
        torch.as_tensor(buffer.actions[i]),
        torch.as_tensor(buffer.rewards[i]),
        torch.as_tensor(buffer.next_observations[i]),
        torch.as_tensor(buffer.terminated[i]),
    )
""",
        mistake="batch_not_dict",
    ),
    Answer(
        "la clave «dones» en lugar de «terminated»",
        _batch("rng.integers(0, buffer.size, size=batch_size)", terminated="dones"),
        mistake="batch_missing_keys",
    ),
    Answer(
        "índices de forma (batch_size, 1)",
        _batch("rng.integers(0, buffer.size, size=(batch_size, 1))"),
        mistake="batch_wrong_shape",
    ),
    Answer(
        "baraja el búfer para no repetir transiciones",
        """
def sample_batch(buffer, batch_size, rng):
    order = rng.permutation(buffer.size)
    fields = ["observations", "actions", "rewards", "next_observations", "terminated"]
    for field in fields:
        values = getattr(buffer, field)
        values[: buffer.size] = values[order]
    i = np.arange(batch_size) % buffer.size
    return {field: torch.as_tensor(getattr(buffer, field)[i]) for field in fields}
""",
        mistake="batch_modifies_buffer",
    ),
    Answer(
        "empieza en 1",
        _batch("rng.integers(1, buffer.size, size=batch_size)"),
        mistake="batch_skips_first",
    ),
    Answer(
        "redondea un uniforme: los extremos salen la mitad",
        _batch("np.round(rng.random(batch_size) * (buffer.size - 1)).astype(int)"),
        mistake="batch_not_uniform",
    ),
    Answer(
        "buffer.position como límite",
        _batch("rng.integers(0, buffer.position, size=batch_size)"),
        mistake="batch_full_buffer_position",
    ),
]
WRONG["dqn_loss"] += [
    Answer(
        "Huber sin promediar: una pérdida por transición",
        """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.smooth_l1_loss(q_taken, targets, reduction="none")
""",
        mistake="loss_not_scalar",
    ),
    Answer(
        "Q(s, a) envuelto en un tensor nuevo con requires_grad",
        """
def dqn_loss(q_network, target_network, batch, gamma):
    q_values = q_network(batch["observations"])
    q_taken = q_values.gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
    q_taken = torch.tensor(q_taken, requires_grad=True)
    with torch.no_grad():
        next_q_values = target_network(batch["next_observations"])
        targets = td_targets(batch["rewards"], next_q_values, batch["terminated"],
                             gamma)
    return F.smooth_l1_loss(q_taken, targets)
""",
        mistake="loss_wrong_gradients",
        fails=("dqn_loss_test_grad",),
    ),
]
WRONG["dqn_update"] += [
    Answer(
        "devuelve la pérdida de después del paso",
        """
def dqn_update(q_network, target_network, optimizer, buffer, rng, step, config):
    batch = sample_batch(buffer, config.batch_size, rng)
    loss = dqn_loss(q_network, target_network, batch, config.gamma)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(q_network.parameters(), config.max_grad_norm)
    optimizer.step()
    if step % config.target_every == 0:
        target_network.load_state_dict(q_network.state_dict())
    with torch.no_grad():
        return dqn_loss(q_network, target_network, batch, config.gamma).item()
""",
        mistake="update_wrong_loss",
        fails=("dqn_update_test",),
    ),
    Answer(
        "lote de 32 escrito a mano",
        _update().replace("config.batch_size", "32"),
        mistake="update_wrong_weights",
        fails=("dqn_update_test", "dqn_update_test_clip"),
    ),
    Answer(
        "actualización suave de la red objetivo en cada paso",
        _update(
            sync="""    with torch.no_grad():
        for target_p, p in zip(target_network.parameters(), q_network.parameters()):
            target_p.mul_(0.99).add_(0.01 * p)"""
        ),
        mistake="target_wrong",
        fails=("dqn_update_test_target",),
    ),
]
