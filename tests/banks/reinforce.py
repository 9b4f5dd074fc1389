"""Banco de respuestas del módulo 03 · REINFORCE."""

from tests.banks import Answer

MODULE = "03_reinforce"

WRONG: dict[str, list[Answer]] = {
    "sample_action": [
        Answer(
            "argmax: no explora",
            """
def sample_action(logits):
    actions = logits.argmax(dim=-1)
    log_pi = torch.log_softmax(logits, dim=-1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            "Siempre eliges la acción más probable",
        ),
        Answer(
            "devuelve la probabilidad, no su logaritmo",
            """
def sample_action(logits):
    distribution = Categorical(logits=logits)
    actions = distribution.sample()
    return actions, distribution.probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            "Eso es π(a), la probabilidad",
        ),
        Answer(
            "softmax a mano: exp desborda",
            """
def sample_action(logits):
    probs = torch.exp(logits) / torch.exp(logits).sum(dim=-1, keepdim=True)
    actions = Categorical(probs=probs).sample()
    return actions, torch.log(probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1))
""",
            "exp(1000) desborda",
        ),
        Answer(
            "log-probabilidad sin gradiente",
            """
def sample_action(logits):
    distribution = Categorical(logits=logits)
    actions = distribution.sample()
    return actions, distribution.log_prob(actions).detach()
""",
            "no tiene gradiente",
        ),
        Answer(
            "acciones uniformes",
            """
def sample_action(logits):
    actions = torch.randint(logits.shape[-1], logits.shape[:-1])
    return actions, Categorical(logits=logits).log_prob(actions)
""",
            "misma frecuencia",
        ),
        Answer(
            "logit sin normalizar",
            """
def sample_action(logits):
    actions = Categorical(logits=logits).sample()
    return actions, logits.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            "logit sin normalizar",
        ),
        Answer(
            "softmax de −logits",
            """
def sample_action(logits):
    distribution = Categorical(logits=-logits)
    actions = distribution.sample()
    return actions, distribution.log_prob(actions)
""",
            "El signo",
        ),
        Answer(
            "log-probabilidad de la acción más probable",
            """
def sample_action(logits):
    distribution = Categorical(logits=logits)
    return distribution.sample(), torch.log_softmax(logits, dim=-1).max(dim=-1).values
""",
            "acción más probable: debe ser la de la acción que muestreaste",
        ),
    ],
    "gaussian_log_prob": [
        Answer(
            "log_std tomado como σ",
            """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / log_std
    return (-0.5 * z**2 - torch.log(log_std) - 0.5 * math.log(2 * math.pi)).sum(-1)
""",
            "Usaste log_std como si fuera σ",
        ),
        Answer(
            "sin −log σ",
            """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return (-0.5 * z**2 - 0.5 * math.log(2 * math.pi)).sum(-1)
""",
            "Falta el término −log σ",
        ),
        Answer(
            "sin la constante",
            """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return (-0.5 * z**2 - log_std).sum(-1)
""",
            "Falta la constante",
        ),
        Answer(
            "divide por σ, no por σ²",
            """
def gaussian_log_prob(actions, mean, log_std):
    std = torch.exp(log_std)
    return (-((actions - mean) ** 2) / (2 * std) - log_std
            - 0.5 * math.log(2 * math.pi)).sum(-1)
""",
            "se divide por σ², no por σ",
        ),
        Answer(
            "log_std tomado como log σ²",
            """
def gaussian_log_prob(actions, mean, log_std):
    var = torch.exp(log_std)
    return (-((actions - mean) ** 2) / (2 * var) - 0.5 * log_std
            - 0.5 * math.log(2 * math.pi)).sum(-1)
""",
            "Es log σ: la varianza es exp(2·log_std)",
        ),
        Answer(
            "media de las dimensiones",
            """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return (-0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)).mean(-1)
""",
            "se suman",
        ),
        Answer(
            "densidad y luego logaritmo",
            """
def gaussian_log_prob(actions, mean, log_std):
    std = torch.exp(log_std)
    density = torch.exp(-0.5 * ((actions - mean) / std) ** 2)
    density = density / (std * math.sqrt(2 * math.pi))
    return torch.log(density).sum(-1)
""",
            "escala logarítmica",
        ),
        Answer(
            "sin sumar las dimensiones",
            """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return -0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)
""",
            "suma sobre la última dimensión",
        ),
        Answer(
            "con NumPy: sin gradiente",
            """
def gaussian_log_prob(actions, mean, log_std):
    a, m, s = (np.asarray(x.detach(), dtype=float) for x in (actions, mean, log_std))
    z = (a - m) / np.exp(s)
    return torch.as_tensor((-0.5 * z**2 - s - 0.5 * np.log(2 * np.pi)).sum(-1))
""",
            "no tiene gradiente",
        ),
    ],
    "discounted_returns": [
        Answer(
            "acumulado hacia delante",
            """
def discounted_returns(rewards, gamma):
    returns, running = [], 0.0
    for r in rewards:
        running = r + gamma * running
        returns.append(running)
    return np.array(returns)
""",
            "Acumulaste hacia delante",
        ),
        Answer(
            "γ en el paso equivocado",
            """
def discounted_returns(rewards, gamma):
    returns, future = np.zeros(len(rewards)), 0.0
    for t in reversed(range(len(rewards))):
        future = gamma * (rewards[t] + future)
        returns[t] = future
    return returns
""",
            "γ multiplica en el paso equivocado",
        ),
        Answer(
            "descuento desde el inicio del episodio",
            """
def discounted_returns(rewards, gamma):
    T = len(rewards)
    return np.array([
        sum(gamma**k * rewards[k] for k in range(t, T)) for t in range(T)
    ])
""",
            "El descuento cuenta desde t",
        ),
        Answer(
            "el retorno total en todos los pasos",
            """
def discounted_returns(rewards, gamma):
    total = sum(gamma**k * r for k, r in enumerate(rewards))
    return np.full(len(rewards), total)
""",
            "retorno del episodio entero",
        ),
        Answer(
            "recompensas inmediatas",
            """
def discounted_returns(rewards, gamma):
    return np.array(rewards, dtype=float)
""",
            "recompensas inmediatas",
        ),
        Answer(
            "sin dar la vuelta",
            """
def discounted_returns(rewards, gamma):
    returns, future = [], 0.0
    for r in reversed(rewards):
        future = r + gamma * future
        returns.append(future)
    return np.array(returns)
""",
            "al revés",
        ),
    ],
    "score_function_gradient": [
        Answer(
            "suma sin dividir por N",
            """
def score_function_gradient(theta, actions, returns):
    pi = bandits.softmax(theta)
    gradient = np.zeros(len(pi))
    for acts, rets in zip(actions, returns):
        for a, g in zip(acts, rets):
            gradient += g * (np.eye(len(pi))[a] - pi)
    return gradient
""",
            "Olvidaste dividir por N",
        ),
        Answer(
            "divide por el número de pasos",
            """
def score_function_gradient(theta, actions, returns):
    pi = bandits.softmax(theta)
    a, g = np.concatenate(actions), np.concatenate(returns)
    return (g[:, None] * (np.eye(len(pi))[a] - pi)).mean(axis=0)
""",
            "número total de pasos",
        ),
        Answer(
            "∇π en lugar de ∇log π",
            """
def score_function_gradient(theta, actions, returns):
    pi = bandits.softmax(theta)
    gradient = np.zeros(len(pi))
    for acts, rets in zip(actions, returns):
        for a, g in zip(acts, rets):
            gradient += g * pi[a] * (np.eye(len(pi))[a] - pi)
    return gradient / len(actions)
""",
            "Eso es ∇π(a)",
        ),
        Answer(
            "signo cambiado",
            """
def score_function_gradient(theta, actions, returns):
    pi = bandits.softmax(theta)
    gradient = np.zeros(len(pi))
    for acts, rets in zip(actions, returns):
        for a, g in zip(acts, rets):
            gradient += g * (pi - np.eye(len(pi))[a])
    return gradient / len(actions)
""",
            "El signo",
        ),
        Answer(
            "solo la acción tomada",
            """
def score_function_gradient(theta, actions, returns):
    pi = bandits.softmax(theta)
    gradient = np.zeros(len(pi))
    for acts, rets in zip(actions, returns):
        for a, g in zip(acts, rets):
            gradient[a] += g * (1 - pi[a])
    return gradient / len(actions)
""",
            "acciones no tomadas",
        ),
        Answer(
            "sin restar π",
            """
def score_function_gradient(theta, actions, returns):
    gradient = np.zeros(len(theta))
    for acts, rets in zip(actions, returns):
        for a, g in zip(acts, rets):
            gradient[a] += g
    return gradient / len(actions)
""",
            "Falta restar π",
        ),
        Answer(
            "sin el retorno",
            """
def score_function_gradient(theta, actions, returns):
    pi = bandits.softmax(theta)
    gradient = np.zeros(len(pi))
    for acts in actions:
        for a in acts:
            gradient += np.eye(len(pi))[a] - pi
    return gradient / len(actions)
""",
            "Falta multiplicar cada término por su retorno",
        ),
    ],
    "reinforce_loss": [
        Answer(
            "sin el signo menos",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return (log_probs * returns.detach()).sum() / n_episodes
""",
            "Falta el signo menos",
        ),
        Answer(
            "media sobre los pasos",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs * returns.detach()).mean()
""",
            "Promediaste sobre los pasos",
        ),
        Answer(
            "sin dividir por N",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs * returns.detach()).sum()
""",
            "Olvidaste dividir por n_episodes",
        ),
        Answer(
            "el retorno arrastra gradiente",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs * returns).sum() / n_episodes
""",
            "El retorno arrastra gradiente",
        ),
        Answer(
            "devuelve un número de Python",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs * returns.detach()).sum().item() / n_episodes
""",
            "tensor de PyTorch conectado a log_probs",
        ),
        Answer(
            "probabilidad en lugar de log-probabilidad",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs.exp() * returns.detach()).sum() / n_episodes
""",
            "no la probabilidad",
        ),
        Answer(
            "suma por suma",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -log_probs.sum() * returns.detach().sum() / n_episodes
""",
            "elemento a",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "sample_action": [
        Answer(
            "multinomial y log_softmax",
            """
def sample_action(logits):
    log_pi = torch.log_softmax(logits, dim=-1)
    flat = log_pi.reshape(-1, log_pi.shape[-1])
    actions = torch.multinomial(flat.exp(), 1).squeeze(-1).reshape(log_pi.shape[:-1])
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
        ),
        Answer(
            "truco de Gumbel-max y logsumexp",
            """
def sample_action(logits):
    gumbel = -torch.log(-torch.log(torch.rand_like(logits)))
    actions = (logits.detach() + gumbel).argmax(dim=-1)
    log_pi = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
        ),
        Answer(
            "Categorical con probs estables",
            """
def sample_action(logits):
    distribution = Categorical(probs=torch.softmax(logits, dim=-1))
    actions = distribution.sample()
    log_pi = torch.log_softmax(logits, dim=-1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
        ),
    ],
    "gaussian_log_prob": [
        Answer(
            "con torch.distributions.Normal",
            """
def gaussian_log_prob(actions, mean, log_std):
    return Normal(mean, torch.exp(log_std)).log_prob(actions).sum(dim=-1)
""",
        ),
        Answer(
            "con la varianza",
            """
def gaussian_log_prob(actions, mean, log_std):
    var = torch.exp(2 * log_std)
    per_dim = -((actions - mean) ** 2) / (2 * var) - log_std
    return per_dim.sum(-1) - 0.5 * actions.shape[-1] * math.log(2 * math.pi)
""",
        ),
        Answer(
            "dimensión a dimensión",
            """
def gaussian_log_prob(actions, mean, log_std):
    log_std = log_std.expand_as(actions)
    total = 0
    for i in range(actions.shape[-1]):
        z = (actions[..., i] - mean[..., i]) * torch.exp(-log_std[..., i])
        total = total - 0.5 * z * z - log_std[..., i] - math.log(math.sqrt(2 * math.pi))
    return total
""",
        ),
    ],
    "discounted_returns": [
        Answer(
            "suma directa O(T²)",
            """
def discounted_returns(rewards, gamma):
    T = len(rewards)
    return [sum(gamma ** (k - t) * rewards[k] for k in range(t, T)) for t in range(T)]
""",
        ),
        Answer(
            "con torch",
            """
def discounted_returns(rewards, gamma):
    rewards = torch.as_tensor(rewards, dtype=torch.float64)
    returns = torch.zeros_like(rewards)
    future = torch.tensor(0.0, dtype=torch.float64)
    for t in range(len(rewards) - 1, -1, -1):
        future = rewards[t] + gamma * future
        returns[t] = future
    return returns
""",
        ),
        Answer(
            "lista con insert(0, ...)",
            """
def discounted_returns(rewards, gamma):
    G, returns = 0.0, []
    for r in reversed(list(rewards)):
        G = r + gamma * G
        returns.insert(0, G)
    return returns
""",
        ),
    ],
    "score_function_gradient": [
        Answer(
            "con autograd",
            """
def score_function_gradient(theta, actions, returns):
    theta_t = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
    log_pi = torch.log_softmax(theta_t, dim=0)
    total = 0
    for acts, rets in zip(actions, returns):
        index = torch.as_tensor(acts, dtype=torch.long)
        total = total + (log_pi[index] * torch.as_tensor(rets)).sum()
    (total / len(actions)).backward()
    return theta_t.grad
""",
        ),
        Answer(
            "vectorizado",
            """
def score_function_gradient(theta, actions, returns):
    theta = np.asarray(theta, dtype=float)
    pi = np.exp(theta - theta.max())
    pi = pi / pi.sum()
    a, g = np.concatenate(actions), np.concatenate(returns)
    return (g[:, None] * (np.eye(len(theta))[a] - pi)).sum(axis=0) / len(actions)
""",
        ),
        Answer(
            "sumas de retornos por acción",
            """
def score_function_gradient(theta, actions, returns):
    pi = bandits.softmax(theta)
    by_action, total = np.zeros(len(pi)), 0.0
    for acts, rets in zip(actions, returns):
        np.add.at(by_action, np.asarray(acts), np.asarray(rets, dtype=float))
        total += float(np.sum(rets))
    return (by_action - total * pi) / len(actions)
""",
        ),
    ],
    "reinforce_loss": [
        Answer(
            "producto escalar",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -torch.dot(log_probs, returns.detach()) / n_episodes
""",
        ),
        Answer(
            "media por pasos reescalada",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    weights = returns.clone().detach()
    return -(log_probs * weights).mean() * len(log_probs) / n_episodes
""",
        ),
        Answer(
            "pesos copiados a un tensor nuevo",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    weights = torch.tensor(returns.tolist(), dtype=log_probs.dtype)
    return -(weights * log_probs).sum() / n_episodes
""",
        ),
    ],
}

# ---------------------------------------------------------------------------
# Clases de error que valen para cualquier ejercicio (issue #22).
# ---------------------------------------------------------------------------

WRONG["gaussian_log_prob"] += [
    Answer(
        "resta la media sobre las acciones",
        """
def gaussian_log_prob(actions, mean, log_std):
    actions -= mean
    z = actions / torch.exp(log_std)
    return (-0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)).sum(dim=-1)
""",
        "modificó su argumento «actions»",
    ),
]
WRONG["discounted_returns"] += [
    Answer(
        "acumula en enteros",
        """
def discounted_returns(rewards, gamma):
    rewards = np.asarray(rewards)
    returns = np.zeros_like(rewards)
    future = 0.0
    for t in reversed(range(len(rewards))):
        future = rewards[t] + gamma * future
        returns[t] = future
    return returns
""",
        "de enteros",
    ),
    Answer(
        "acumula sobre la entrada",
        """
def discounted_returns(rewards, gamma):
    returns = np.asarray(rewards, dtype=float)
    for t in reversed(range(len(returns) - 1)):
        returns[t] += gamma * returns[t + 1]
    return returns
""",
        "modificó su argumento «rewards»",
    ),
    Answer(
        "redondea a dos decimales",
        """
def discounted_returns(rewards, gamma):
    returns = np.zeros(len(rewards))
    future = 0.0
    for t in reversed(range(len(rewards))):
        future = rewards[t] + gamma * future
        returns[t] = future
    return np.round(returns, 2)
""",
        "redondeado a 2 decimales",
    ),
]
WRONG["score_function_gradient"] += [
    Answer(
        "resta el máximo sobre theta",
        """
def score_function_gradient(theta, actions, returns):
    theta -= theta.max()
    pi = np.exp(theta) / np.exp(theta).sum()
    gradient = np.zeros(len(pi))
    for episode_actions, episode_returns in zip(actions, returns):
        for a, g in zip(episode_actions, episode_returns):
            gradient += g * (np.eye(len(pi))[a] - pi)
    return gradient / len(actions)
""",
        "modificó su argumento «theta»",
    ),
]
