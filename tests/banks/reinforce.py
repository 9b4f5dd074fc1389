"""Banco de respuestas del módulo 03 · REINFORCE."""

from tests.banks import Answer

MODULE = "03_reinforce"

# La primera respuesta errónea de cada ejercicio falla en todas sus celdas
# (sin ``fails``): tests/test_roundtrip.py la usa para la entrega tramposa, que
# debe sacar 0.

WRONG: dict[str, list[Answer]] = {
    "sample_action": [
        Answer(
            "softmax a mano: exp desborda",
            """
def sample_action(logits, u):
    probs = torch.exp(logits) / torch.exp(logits).sum(dim=-1, keepdim=True)
    actions = (probs.cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, torch.log(probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1))
""",
            mistake="sample_softmax_overflow",
        ),
        Answer(
            "argmax: ignora u",
            """
def sample_action(logits, u):
    actions = logits.argmax(dim=-1)
    log_pi = torch.log_softmax(logits, dim=-1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="sample_argmax",
            fails=("sample_action_test",),
        ),
        Answer(
            "devuelve la probabilidad, no su logaritmo",
            """
def sample_action(logits, u):
    probs = torch.softmax(logits, dim=-1)
    actions = (probs.cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="log_prob_is_prob",
            fails=("sample_action_test_log_prob",),
        ),
        Answer(
            "log-probabilidad sin gradiente",
            """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1).detach()
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="log_prob_no_grad",
            fails=("sample_action_test_log_prob",),
        ),
        Answer(
            "tramos iguales: acciones uniformes",
            """
def sample_action(logits, u):
    n = logits.shape[-1]
    actions = (u * n).long().clamp(max=n - 1)
    log_pi = torch.log_softmax(logits, dim=-1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="sample_uniform_bins",
            fails=("sample_action_test",),
        ),
        Answer(
            "logit sin normalizar",
            """
def sample_action(logits, u):
    probs = torch.softmax(logits, dim=-1)
    actions = (probs.cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, logits.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="log_prob_unnormalized",
            fails=("sample_action_test_log_prob",),
        ),
        Answer(
            "acumula los logits",
            """
def sample_action(logits, u):
    actions = (logits.cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    log_pi = torch.log_softmax(logits, dim=-1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="sample_cumsum_logits",
            fails=("sample_action_test",),
        ),
        Answer(
            "una acción antes",
            """
def sample_action(logits, u):
    cdf = torch.softmax(logits, dim=-1).cumsum(-1)
    actions = ((cdf <= u.unsqueeze(-1)).sum(-1) - 1).clamp(min=0)
    log_pi = torch.log_softmax(logits, dim=-1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="sample_one_before",
            fails=("sample_action_test",),
        ),
        Answer(
            "resta el máximo sobre los logits",
            """
def sample_action(logits, u):
    logits -= logits.max(dim=-1, keepdim=True).values
    log_pi = logits - logits.exp().sum(-1, keepdim=True).log()
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="modified_input",
        ),
        Answer(
            "«<» en lugar de «≤»: la acción cuya acumulada vale justo u",
            """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) < u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="sample_strictly_below",
            fails=("sample_action_test",),
        ),
        Answer(
            "sin la última acción de respaldo (float32 por debajo de u)",
            """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="sample_no_clamp",
        ),
        Answer(
            "argmax de «acumulada > u»: la acción 0 si ninguna supera u",
            """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    above = log_pi.exp().cumsum(-1) > u.unsqueeze(-1)
    actions = above.int().argmax(dim=-1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="sample_no_last_fallback",
            fails=("sample_action_test",),
        ),
        Answer(
            "log(softmax) en lugar de log_softmax",
            """
def sample_action(logits, u):
    probs = torch.softmax(logits, dim=-1)
    actions = (probs.cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, torch.log(probs).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
            mistake="log_prob_log_of_softmax",
            fails=("sample_action_test_log_prob",),
        ),
        Answer(
            "log-probabilidad redondeada",
            """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    chosen = log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    return actions, torch.round(chosen, decimals=2)
""",
            mistake="log_prob_rounded",
            fails=("sample_action_test_log_prob",),
        ),
    ],
    "gradient_estimators": [
        Answer(
            "orden cambiado",
            """
def gradient_estimators(f, mean, log_std, noise):
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    mu, std = params[0], params[1].exp()
    x = mu + std * noise
    (pathwise,) = torch.autograd.grad(f(x).mean(), params, retain_graph=True)
    log_prob = Normal(mu, std).log_prob(x.detach())
    (score,) = torch.autograd.grad((f(x.detach()) * log_prob).mean(), params)
    return pathwise, score
""",
            mistake="estimators_swapped",
        ),
        Answer(
            "función de puntuación sin separar x",
            """
def gradient_estimators(f, mean, log_std, noise):
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    mu, std = params[0], params[1].exp()
    x = mu + std * noise
    (pathwise,) = torch.autograd.grad(f(x).mean(), params, retain_graph=True)
    log_prob = Normal(mu, std).log_prob(x)
    (score,) = torch.autograd.grad((f(x.detach()) * log_prob).mean(), params)
    return score, pathwise
""",
            mistake="score_estimate_x_attached",
            fails=("gradient_estimators_test",),
        ),
        Answer(
            "peso f(x) con gradiente",
            """
def gradient_estimators(f, mean, log_std, noise):
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    mu, std = params[0], params[1].exp()
    x = mu + std * noise
    (pathwise,) = torch.autograd.grad(f(x).mean(), params, retain_graph=True)
    log_prob = Normal(mu, std).log_prob(x.detach())
    (score,) = torch.autograd.grad((f(x) * log_prob).mean(), params)
    return score, pathwise
""",
            mistake="score_estimate_weight_grad",
            fails=("gradient_estimators_test",),
        ),
        Answer(
            "reparametrización con la muestra separada: gradiente 0",
            """
def gradient_estimators(f, mean, log_std, noise):
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    mu, std = params[0], params[1].exp()
    x = (mu + std * noise).detach()
    pathwise = torch.zeros(2, dtype=noise.dtype)
    log_prob = Normal(mu, std).log_prob(x)
    (score,) = torch.autograd.grad((f(x) * log_prob).mean(), params)
    return score, pathwise
""",
            mistake="pathwise_estimate_detached",
            fails=("gradient_estimators_test_pathwise",),
        ),
        Answer(
            "sumas en vez de medias",
            """
def gradient_estimators(f, mean, log_std, noise):
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    mu, std = params[0], params[1].exp()
    x = mu + std * noise
    (pathwise,) = torch.autograd.grad(f(x).sum(), params, retain_graph=True)
    log_prob = Normal(mu, std).log_prob(x.detach())
    (score,) = torch.autograd.grad((f(x.detach()) * log_prob).sum(), params)
    return score, pathwise
""",
            mistake="estimators_summed",
        ),
        Answer(
            "derivada respecto a σ, no a log σ",
            """
def gradient_estimators(f, mean, log_std, noise):
    params = torch.tensor([mean, math.exp(log_std)], dtype=noise.dtype,
                          requires_grad=True)
    mu, std = params[0], params[1]
    x = mu + std * noise
    (pathwise,) = torch.autograd.grad(f(x).mean(), params, retain_graph=True)
    log_prob = Normal(mu, std).log_prob(x.detach())
    (score,) = torch.autograd.grad((f(x.detach()) * log_prob).mean(), params)
    return score, pathwise
""",
            mistake="estimators_wrt_std",
        ),
        Answer(
            "a mano, sin el −1 de −log σ",
            """
def gradient_estimators(f, mean, log_std, noise):
    std = math.exp(log_std)
    x = mean + std * noise
    weights = f(x)
    z = noise
    score = torch.stack([(weights * z / std).mean(), (weights * z**2).mean()])
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    y = params[0] + params[1].exp() * noise
    (pathwise,) = torch.autograd.grad(f(y).mean(), params)
    return score.detach(), pathwise
""",
            mistake="score_estimate_no_minus_one",
            fails=("gradient_estimators_test",),
        ),
        Answer(
            "estimaciones con gradiente",
            """
def gradient_estimators(f, mean, log_std, noise):
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    mu, std = params[0], params[1].exp()
    x = mu + std * noise
    (pathwise,) = torch.autograd.grad(f(x).mean(), params, create_graph=True)
    log_prob = Normal(mu, std).log_prob(x.detach())
    (score,) = torch.autograd.grad((f(x.detach()) * log_prob).mean(), params,
                                   create_graph=True)
    return score, pathwise
""",
            mistake="estimate_with_grad",
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
            mistake="gaussian_log_std_as_std",
        ),
        Answer(
            "sin −log σ",
            """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return (-0.5 * z**2 - 0.5 * math.log(2 * math.pi)).sum(-1)
""",
            mistake="gaussian_no_log_std",
        ),
        Answer(
            "sin la constante",
            """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return (-0.5 * z**2 - log_std).sum(-1)
""",
            mistake="gaussian_no_constant",
            fails=("gaussian_log_prob_test",),
        ),
        Answer(
            "divide por σ, no por σ²",
            """
def gaussian_log_prob(actions, mean, log_std):
    std = torch.exp(log_std)
    return (-((actions - mean) ** 2) / (2 * std) - log_std
            - 0.5 * math.log(2 * math.pi)).sum(-1)
""",
            mistake="gaussian_divide_by_std",
        ),
        Answer(
            "log_std tomado como log σ²",
            """
def gaussian_log_prob(actions, mean, log_std):
    var = torch.exp(log_std)
    return (-((actions - mean) ** 2) / (2 * var) - 0.5 * log_std
            - 0.5 * math.log(2 * math.pi)).sum(-1)
""",
            mistake="gaussian_log_std_as_log_var",
        ),
        Answer(
            "media de las dimensiones",
            """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return (-0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)).mean(-1)
""",
            mistake="gaussian_mean_dims",
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
            mistake="gaussian_density_then_log",
            fails=("gaussian_log_prob_test",),
        ),
        Answer(
            "sin sumar las dimensiones",
            """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return -0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)
""",
            mistake="gaussian_per_dimension",
            fails=("gaussian_log_prob_test",),
        ),
        Answer(
            "con NumPy: sin gradiente",
            """
def gaussian_log_prob(actions, mean, log_std):
    a, m, s = (np.asarray(x.detach(), dtype=float) for x in (actions, mean, log_std))
    z = (a - m) / np.exp(s)
    return torch.as_tensor((-0.5 * z**2 - s - 0.5 * np.log(2 * np.pi)).sum(-1))
""",
            mistake="gaussian_no_grad",
            fails=("gaussian_log_prob_test_grad",),
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
            mistake="returns_forward",
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
            mistake="returns_gamma_outside",
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
            mistake="returns_absolute_discount",
        ),
        Answer(
            "el retorno total en todos los pasos",
            """
def discounted_returns(rewards, gamma):
    total = sum(gamma**k * r for k, r in enumerate(rewards))
    return np.full(len(rewards), total)
""",
            mistake="returns_total",
        ),
        Answer(
            "recompensas inmediatas",
            """
def discounted_returns(rewards, gamma):
    return np.array(rewards, dtype=float)
""",
            mistake="returns_immediate",
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
            mistake="returns_not_reversed",
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
            mistake="score_no_divide",
        ),
        Answer(
            "divide por el número de pasos",
            """
def score_function_gradient(theta, actions, returns):
    pi = bandits.softmax(theta)
    a, g = np.concatenate(actions), np.concatenate(returns)
    return (g[:, None] * (np.eye(len(pi))[a] - pi)).mean(axis=0)
""",
            mistake="score_divide_by_steps",
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
            mistake="score_grad_of_prob",
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
            mistake="score_sign",
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
            mistake="score_chosen_only",
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
            mistake="score_no_minus_pi",
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
            mistake="score_no_return",
        ),
    ],
    "reinforce_loss": [
        Answer(
            "sin el signo menos",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return (log_probs * returns.detach()).sum() / n_episodes
""",
            mistake="loss_no_minus",
        ),
        Answer(
            "media sobre los pasos",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs * returns.detach()).mean()
""",
            mistake="loss_mean_over_steps",
        ),
        Answer(
            "sin dividir por N",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs * returns.detach()).sum()
""",
            mistake="loss_no_divide",
        ),
        Answer(
            "el retorno arrastra gradiente",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs * returns).sum() / n_episodes
""",
            mistake="loss_returns_grad",
            fails=("reinforce_loss_test_grad",),
        ),
        Answer(
            "devuelve un número de Python",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs * returns.detach()).sum().item() / n_episodes
""",
            mistake="loss_not_tensor",
            fails=("reinforce_loss_test_grad",),
        ),
        Answer(
            "probabilidad en lugar de log-probabilidad",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs.exp() * returns.detach()).sum() / n_episodes
""",
            mistake="loss_prob",
        ),
        Answer(
            "suma por suma",
            """
def reinforce_loss(log_probs, returns, n_episodes):
    return -log_probs.sum() * returns.detach().sum() / n_episodes
""",
            mistake="loss_sum_times_sum",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "sample_action": [
        Answer(
            "searchsorted y logsumexp",
            """
def sample_action(logits, u):
    log_pi = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    cdf = torch.softmax(logits.detach(), dim=-1).cumsum(dim=-1)
    index = torch.searchsorted(cdf, u.reshape(*u.shape, 1), right=True)
    actions = index.squeeze(-1).clamp(max=logits.shape[-1] - 1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
        ),
        Answer(
            "un bucle por estado",
            """
def sample_action(logits, u):
    rows = logits.reshape(-1, logits.shape[-1])
    uniforms = u.reshape(-1)
    actions, log_probs = [], []
    for row, x in zip(rows, uniforms):
        log_pi = torch.log_softmax(row, dim=0)
        total, chosen = 0.0, len(row) - 1
        for a in range(len(row)):
            total += float(log_pi[a].exp())
            if total > float(x):
                chosen = a
                break
        actions.append(chosen)
        log_probs.append(log_pi[chosen])
    actions = torch.tensor(actions).reshape(logits.shape[:-1])
    return actions, torch.stack(log_probs).reshape(logits.shape[:-1])
""",
        ),
        Answer(
            "Categorical para log_prob y cumsum a mano",
            """
def sample_action(logits, u):
    distribution = Categorical(logits=logits)
    below = distribution.probs.detach().cumsum(-1) <= u.unsqueeze(-1)
    actions = below.sum(-1).clamp(max=logits.shape[-1] - 1)
    return actions, distribution.log_prob(actions)
""",
        ),
    ],
    "gradient_estimators": [
        Answer(
            "función de puntuación a mano, reparametrización con backward",
            """
def gradient_estimators(f, mean, log_std, noise):
    std = math.exp(log_std)
    x = mean + std * noise
    weights = f(x)
    z = noise
    score = torch.stack([(weights * z / std).mean(), (weights * (z**2 - 1)).mean()])
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    f(params[0] + params[1].exp() * noise).mean().backward()
    return score.detach(), params.grad
""",
        ),
        Answer(
            "dos tensores hoja y la log-densidad del ejercicio 2",
            """
def gradient_estimators(f, mean, log_std, noise):
    mu = torch.tensor(mean, dtype=noise.dtype, requires_grad=True)
    log_sigma = torch.tensor(log_std, dtype=noise.dtype, requires_grad=True)
    x = mu + log_sigma.exp() * noise
    path = torch.autograd.grad(f(x).mean(), [mu, log_sigma])
    fixed = x.detach()
    log_p = gaussian_log_prob(fixed[:, None], mu.expand(len(noise), 1),
                              log_sigma.reshape(1))
    score = torch.autograd.grad((f(fixed) * log_p).mean(), [mu, log_sigma])
    return torch.stack(list(score)), torch.stack(list(path))
""",
        ),
        Answer(
            "en float64 y devolviendo una lista",
            """
def gradient_estimators(f, mean, log_std, noise):
    noise = noise.double()
    params = torch.tensor([mean, log_std], dtype=torch.float64, requires_grad=True)
    x = params[0] + params[1].exp() * noise
    path = torch.autograd.grad(f(x).mean(), params, retain_graph=True)[0]
    surrogate = f(x.detach()) * Normal(params[0], params[1].exp()).log_prob(x.detach())
    score = torch.autograd.grad(surrogate.mean(), params)[0]
    return [score, path]
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
        mistake="modified_input",
        fails=("gaussian_log_prob_test",),
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
        mistake="integer_dtype",
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
        mistake="modified_input",
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
        mistake="rounded",
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
        mistake="modified_input",
    ),
]

# ---------------------------------------------------------------------------
# Ejercicio 6 · el bucle de REINFORCE (tres celdas: rollout, gradiente y
# parámetros; ``fails`` dice cuáles pierde cada error).
# ---------------------------------------------------------------------------

_LOOP = """
def reinforce_updates(policy, optimizer, env, n_updates, n_episodes, gamma, seed,
                      generator):
    mean_returns, episode = [], 0
    for _ in range(n_updates):
        log_probs, returns, totals{batch_init} = [], [], []{batch_init_value}
        for _ in range(n_episodes):
            obs, _ = env.reset(seed={seed_expr})
            episode += 1
            rewards, done = [], False
            while not done:
                u = {draw}
                logits = policy(torch.as_tensor(obs, dtype=torch.float32))
                action, log_prob = sample_action(logits, u)
                obs, reward, terminated, truncated, _ = env.step(int(action))
                rewards.append(float(reward))
                log_probs.append(log_prob)
                done = {done}
            {returns_line}
            totals.append(sum(rewards)){per_episode_step}
        {batch_returns}weights = {weights}
        loss = reinforce_loss(torch.stack(log_probs), weights, n_episodes)
        {zero_grad}loss.backward()
        optimizer.step()
        mean_returns.append({summary})
    return mean_returns
"""

_DEFAULTS = dict(
    batch_init="",
    batch_init_value="",
    seed_expr="seed + episode",
    draw="torch.rand((), generator=generator)",
    done="terminated or truncated",
    returns_line=(
        "returns.append(torch.as_tensor(discounted_returns(rewards, gamma), "
        "dtype=torch.float32))"
    ),
    per_episode_step="",
    batch_returns="",
    weights="torch.cat(returns)",
    zero_grad="optimizer.zero_grad()\n        ",
    summary="sum(totals) / n_episodes",
)


def _loop(**changes: str) -> str:
    return _LOOP.format(**{**_DEFAULTS, **changes})


WRONG["reinforce_updates"] = [
    Answer(
        "la misma semilla en todos los episodios",
        _loop(seed_expr="seed"),
        mistake="loop_wrong_seeds",
    ),
    Answer(
        "las semillas vuelven a empezar en cada actualización",
        _loop(seed_expr="seed + len(totals)"),
        mistake="loop_wrong_seeds",
        fails=("reinforce_updates_test", "reinforce_updates_test_params"),
    ),
    Answer(
        "muestrea con el generador global",
        _loop(draw="torch.rand(())"),
        mistake="loop_no_generator_draws",
    ),
    Answer(
        "sigue jugando tras el truncado",
        _loop(done="terminated"),
        mistake="loop_step_after_end",
    ),
    Answer(
        "devuelve la suma, no la media",
        _loop(summary="sum(totals)"),
        mistake="loop_returned_sum",
        fails=("reinforce_updates_test",),
    ),
    Answer(
        "retornos sobre todo el lote seguido",
        _loop(
            batch_init=", all_rewards",
            batch_init_value=", []",
            returns_line="all_rewards += rewards",
            batch_returns=(
                "returns = [torch.as_tensor(discounted_returns(all_rewards, gamma),"
                " dtype=torch.float32)]\n        "
            ),
        ),
        mistake="loop_returns_across_batch",
        fails=("reinforce_updates_test_grad", "reinforce_updates_test_params"),
    ),
    Answer(
        "retornos truncados a enteros",
        _loop(
            returns_line=(
                "returns.append(torch.as_tensor(discounted_returns(rewards, gamma),"
                " dtype=torch.float32).long())"
            )
        ),
        mistake="loop_wrong_gradient",
        fails=("reinforce_updates_test_grad", "reinforce_updates_test_params"),
    ),
    Answer(
        "un paso del optimizador por episodio",
        """
def reinforce_updates(policy, optimizer, env, n_updates, n_episodes, gamma, seed,
                      generator):
    mean_returns, episode = [], 0
    for _ in range(n_updates):
        totals = []
        for _ in range(n_episodes):
            obs, _ = env.reset(seed=seed + episode)
            episode += 1
            rewards, log_probs, done = [], [], False
            while not done:
                u = torch.rand((), generator=generator)
                logits = policy(torch.as_tensor(obs, dtype=torch.float32))
                action, log_prob = sample_action(logits, u)
                obs, reward, terminated, truncated, _ = env.step(int(action))
                rewards.append(float(reward))
                log_probs.append(log_prob)
                done = terminated or truncated
            g = torch.as_tensor(discounted_returns(rewards, gamma), dtype=torch.float32)
            loss = reinforce_loss(torch.stack(log_probs), g, n_episodes)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            totals.append(sum(rewards))
        mean_returns.append(sum(totals) / n_episodes)
    return mean_returns
""",
        mistake="loop_steps_per_update",
        fails=("reinforce_updates_test_grad", "reinforce_updates_test_params"),
    ),
    Answer(
        "sin zero_grad",
        _loop(zero_grad=""),
        mistake="loop_no_zero_grad",
        fails=("reinforce_updates_test_params",),
    ),
]

RIGHT["reinforce_updates"] = [
    Answer(
        "log-probabilidades recalculadas al final, en una pasada",
        """
def reinforce_updates(policy, optimizer, env, n_updates, n_episodes, gamma, seed,
                      generator):
    curve = []
    for update in range(n_updates):
        observations, actions, weights, totals = [], [], [], []
        for k in range(n_episodes):
            obs, _ = env.reset(seed=seed + update * n_episodes + k)
            rewards = []
            while True:
                u = torch.rand((), generator=generator)
                with torch.no_grad():
                    logits = policy(torch.tensor(obs, dtype=torch.float32))
                action, _ = sample_action(logits, u)
                observations.append(torch.tensor(obs, dtype=torch.float32))
                actions.append(int(action))
                obs, reward, terminated, truncated, _ = env.step(int(action))
                rewards.append(reward)
                if terminated or truncated:
                    break
            weights.extend(discounted_returns(rewards, gamma).tolist())
            totals.append(float(np.sum(rewards)))
        log_pi = torch.log_softmax(policy(torch.stack(observations)), dim=-1)
        chosen = log_pi[torch.arange(len(actions)), torch.tensor(actions)]
        loss = reinforce_loss(chosen, torch.tensor(weights), n_episodes)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        curve.append(float(np.mean(totals)))
    return curve
""",
    ),
    Answer(
        "un contador de episodios y retornos en float64",
        """
def reinforce_updates(policy, optimizer, env, n_updates, n_episodes, gamma, seed,
                      generator):
    import itertools

    seeds = itertools.count(seed)
    history = []
    for _ in range(n_updates):
        steps, episode_totals = [], []
        for _ in range(n_episodes):
            obs, _ = env.reset(seed=next(seeds))
            episode = []
            finished = False
            while not finished:
                logits = policy(torch.from_numpy(np.asarray(obs, dtype=np.float32)))
                action, log_prob = sample_action(
                    logits, torch.rand((), generator=generator)
                )
                obs, reward, terminated, truncated, _ = env.step(int(action))
                episode.append((log_prob, reward))
                finished = terminated or truncated
            returns = discounted_returns([r for _, r in episode], gamma)
            steps += [(lp, g) for (lp, _), g in zip(episode, returns)]
            episode_totals.append(sum(r for _, r in episode))
        log_probs = torch.stack([lp for lp, _ in steps])
        weights = torch.tensor([g for _, g in steps], dtype=torch.float64)
        optimizer.zero_grad()
        reinforce_loss(log_probs, weights, n_episodes).backward()
        optimizer.step()
        history.append(np.mean(episode_totals))
    return history
""",
    ),
]

# ---------------------------------------------------------------------------
# Un error por cada diagnóstico con nombre (issue 48): cada fila o fallo con
# id de helpers/checks/reinforce.py lo provoca alguna respuesta de aquí.
# ---------------------------------------------------------------------------

WRONG["sample_action"] += [
    Answer(
        "devuelve solo la acción",
        """
def sample_action(logits, u):
    cdf = torch.softmax(logits, dim=-1).cumsum(-1)
    return (cdf <= u.unsqueeze(-1)).sum(-1).clamp(max=logits.shape[-1] - 1)
""",
        mistake="returns_not_pair",
    ),
    Answer(
        "olvida el .sum(-1): la máscara de la acumulada como acción",
        """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).long()
    return actions, log_pi.gather(-1, actions)
""",
        mistake="action_not_single",
    ),
    Answer(
        "cuenta los tramos sobre el eje 0",
        """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(0)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
        mistake="actions_wrong_count",
    ),
    Answer(
        "devuelve (log-probabilidad, acción), al revés",
        """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1), actions
""",
        mistake="action_not_index",
    ),
    Answer(
        "acumula desde la última acción",
        """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    n = logits.shape[-1]
    from_last = (log_pi.exp().flip(-1).cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = n - 1 - from_last.clamp(max=n - 1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
        mistake="sample_reversed_cumsum",
        fails=("sample_action_test",),
    ),
    Answer(
        "softmax de −logits",
        """
def sample_action(logits, u):
    log_pi = torch.log_softmax(-logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
        mistake="sample_sign",
    ),
    Answer(
        "log-probabilidad como array de NumPy",
        """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    chosen = log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    return actions, chosen.detach().numpy()
""",
        mistake="log_prob_not_tensor",
        fails=("sample_action_test_log_prob",),
    ),
    Answer(
        "devuelve toda la fila de log-probabilidades",
        """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    return actions.clamp(max=logits.shape[-1] - 1), log_pi
""",
        mistake="log_prob_wrong_count",
        fails=("sample_action_test_log_prob",),
    ),
    Answer(
        "la log-probabilidad de la acción más probable",
        """
def sample_action(logits, u):
    log_pi = torch.log_softmax(logits, dim=-1)
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    return actions.clamp(max=logits.shape[-1] - 1), log_pi.max(dim=-1).values
""",
        mistake="log_prob_of_argmax",
        fails=("sample_action_test_log_prob",),
    ),
    Answer(
        "log-sum-exp sin restar el máximo",
        """
def sample_action(logits, u):
    probs = torch.softmax(logits, dim=-1)
    actions = (probs.cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    log_pi = logits - torch.log(torch.exp(logits).sum(-1, keepdim=True))
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
        mistake="log_prob_overflow",
        fails=("sample_action_test_log_prob",),
    ),
    Answer(
        "−log π con la entropía cruzada",
        """
import torch.nn.functional as F

def sample_action(logits, u):
    probs = torch.softmax(logits, dim=-1)
    actions = (probs.cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    rows = logits.reshape(-1, logits.shape[-1])
    nll = F.cross_entropy(rows, actions.reshape(-1), reduction="none")
    return actions, nll.reshape(actions.shape)
""",
        mistake="log_prob_sign",
        fails=("sample_action_test_log_prob",),
    ),
    Answer(
        "el normalizador sin gradiente",
        """
def sample_action(logits, u):
    log_z = torch.logsumexp(logits, dim=-1, keepdim=True).detach()
    log_pi = logits - log_z
    actions = (log_pi.exp().cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, log_pi.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
""",
        mistake="log_prob_wrong_grad",
        fails=("sample_action_test_log_prob",),
    ),
    Answer(
        "logaritmo en base 2",
        """
def sample_action(logits, u):
    probs = torch.softmax(logits, dim=-1)
    actions = (probs.cumsum(-1) <= u.unsqueeze(-1)).sum(-1)
    actions = actions.clamp(max=logits.shape[-1] - 1)
    return actions, torch.log2(probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1))
""",
        mistake="log_prob_wrong_value",
        fails=("sample_action_test_log_prob",),
    ),
]
WRONG["gaussian_log_prob"] += [
    Answer(
        "sin el ½ del término cuadrático",
        """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return (-(z**2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
""",
        mistake="gaussian_no_half",
    ),
    Answer(
        "σ separada del grafo",
        """
def gaussian_log_prob(actions, mean, log_std):
    std = torch.exp(log_std).detach()
    z = (actions - mean) / std
    return (-0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
""",
        mistake="gaussian_wrong_grad",
        fails=("gaussian_log_prob_test_grad",),
    ),
    Answer(
        "suma todo: un solo número para el lote",
        """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    return (-0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)).sum()
""",
        mistake="scalar",
        fails=("gaussian_log_prob_test",),
    ),
    Answer(
        "keepdim=True: forma (N, 1)",
        """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    per_dim = -0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)
    return per_dim.sum(dim=-1, keepdim=True)
""",
        mistake="reshaped",
        fails=("gaussian_log_prob_test",),
    ),
    Answer(
        "keepdim=True solo en la suma de log_std: (N,) − (N, 1)",
        """
def gaussian_log_prob(actions, mean, log_std):
    z = (actions - mean) / torch.exp(log_std)
    quadratic = (-0.5 * z**2).sum(-1)
    log_std = log_std.expand_as(actions)
    return (quadratic - log_std.sum(-1, keepdim=True)
            - 0.5 * actions.shape[-1] * math.log(2 * math.pi))
""",
        mistake="extra_dimensions",
    ),
]
WRONG["discounted_returns"] += [
    Answer(
        "vectorizado, dividiendo por γ^t",
        """
def discounted_returns(rewards, gamma):
    rewards = np.asarray(rewards, dtype=float)
    powers = gamma ** np.arange(len(rewards))
    return np.cumsum((powers * rewards)[::-1])[::-1] / powers
""",
        mistake="nan",
    ),
    Answer(
        "rewards.shape con una lista",
        """
def discounted_returns(rewards, gamma):
    returns, future = np.zeros(rewards.shape[0]), 0.0
    for t in reversed(range(rewards.shape[0])):
        future = rewards[t] + gamma * future
        returns[t] = future
    return returns
""",
        mistake="raised",
    ),
    Answer(
        "solo la recompensa siguiente: r_t + γ·r_{t+1}",
        """
def discounted_returns(rewards, gamma):
    rewards = np.asarray(rewards, dtype=float)
    following = np.append(rewards[1:], 0.0)
    return rewards + gamma * following
""",
        mistake="wrong_value",
    ),
]
WRONG["reinforce_loss"] += [
    Answer(
        "sin sumar: un término por paso",
        """
def reinforce_loss(log_probs, returns, n_episodes):
    return -(log_probs * returns.detach()) / n_episodes
""",
        mistake="loss_not_scalar",
    ),
    Answer(
        "log_probs envueltas en un tensor nuevo",
        """
def reinforce_loss(log_probs, returns, n_episodes):
    log_probs = torch.tensor(log_probs.tolist(), requires_grad=True)
    return -(log_probs * returns.detach()).sum() / n_episodes
""",
        mistake="loss_wrong_grad",
        fails=("reinforce_loss_test_grad",),
    ),
]
WRONG["gradient_estimators"] += [
    Answer(
        "apiladas en un tensor (2, 2)",
        """
def gradient_estimators(f, mean, log_std, noise):
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    mu, std = params[0], params[1].exp()
    x = mu + std * noise
    (pathwise,) = torch.autograd.grad(f(x).mean(), params, retain_graph=True)
    log_prob = Normal(mu, std).log_prob(x.detach())
    (score,) = torch.autograd.grad((f(x.detach()) * log_prob).mean(), params)
    return torch.stack([score, pathwise])
""",
        mistake="estimators_not_pair",
    ),
    Answer(
        "derivan −f, como una pérdida",
        """
def gradient_estimators(f, mean, log_std, noise):
    params = torch.tensor([mean, log_std], dtype=noise.dtype, requires_grad=True)
    mu, std = params[0], params[1].exp()
    x = mu + std * noise
    (pathwise,) = torch.autograd.grad(-f(x).mean(), params, retain_graph=True)
    log_prob = Normal(mu, std).log_prob(x.detach())
    (score,) = torch.autograd.grad(-(f(x.detach()) * log_prob).mean(), params)
    return score, pathwise
""",
        mistake="sign",
    ),
]

_ONE_EPISODE_PER_UPDATE = """
def reinforce_updates(policy, optimizer, env, n_updates, n_episodes, gamma, seed,
                      generator):
    mean_returns = []
    for update in range(n_updates):
        obs, _ = env.reset(seed=seed + update)
        log_probs, rewards, done = [], [], False
        while not done:
            u = torch.rand((), generator=generator)
            logits = policy(torch.as_tensor(obs, dtype=torch.float32))
            action, log_prob = sample_action(logits, u)
            obs, reward, terminated, truncated, _ = env.step(int(action))
            rewards.append(float(reward))
            log_probs.append(log_prob)
            done = terminated or truncated
        weights = torch.as_tensor(discounted_returns(rewards, gamma),
                                  dtype=torch.float32)
        loss = reinforce_loss(torch.stack(log_probs), weights, n_episodes)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        mean_returns.append(sum(rewards))
    return mean_returns
"""

_STALE_DONE = """
def reinforce_updates(policy, optimizer, env, n_updates, n_episodes, gamma, seed,
                      generator):
    mean_returns, episode = [], 0
    for _ in range(n_updates):
        log_probs, returns, totals = [], [], []
        terminated = truncated = False
        for _ in range(n_episodes):
            obs, _ = env.reset(seed=seed + episode)
            episode += 1
            rewards = []
            while not (terminated or truncated):
                u = torch.rand((), generator=generator)
                logits = policy(torch.as_tensor(obs, dtype=torch.float32))
                action, log_prob = sample_action(logits, u)
                obs, reward, terminated, truncated, _ = env.step(int(action))
                rewards.append(float(reward))
                log_probs.append(log_prob)
            returns.append(torch.as_tensor(discounted_returns(rewards, gamma),
                                           dtype=torch.float32))
            totals.append(sum(rewards))
        loss = reinforce_loss(torch.stack(log_probs), torch.cat(returns), n_episodes)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        mean_returns.append(sum(totals) / n_episodes)
    return mean_returns
"""

WRONG["reinforce_updates"] += [
    Answer(
        "un solo episodio por actualización",
        _ONE_EPISODE_PER_UPDATE,
        mistake="loop_wrong_episode_count",
    ),
    Answer(
        "terminated y truncated se inician fuera de los episodios: del segundo "
        "en adelante no se juega",
        _STALE_DONE,
        mistake="loop_wrong_episode_length",
    ),
    Answer(
        "un solo u por episodio",
        _loop(
            seed_expr="seed + episode",
            draw="u_episode",
        ).replace(
            "rewards, done = [], False",
            "rewards, done = [], False\n"
            "            u_episode = torch.rand((), generator=generator)",
        ),
        mistake="loop_wrong_action",
    ),
    Answer(
        "devuelve la lista de retornos de cada actualización",
        _loop(summary="totals"),
        mistake="loop_returned_wrong_shape",
        fails=("reinforce_updates_test",),
    ),
    Answer(
        "devuelve la media de los G_t",
        _loop(summary="float(weights.mean())"),
        mistake="loop_returned_wrong_value",
        fails=("reinforce_updates_test",),
    ),
    Answer(
        "zero_grad entre backward y step",
        _loop(zero_grad="").replace(
            "loss.backward()\n", "loss.backward()\n        optimizer.zero_grad()\n"
        ),
        mistake="loop_no_backward",
        fails=("reinforce_updates_test_grad", "reinforce_updates_test_params"),
    ),
    Answer(
        "pérdida con el signo cambiado",
        _loop().replace("loss.backward()", "(-loss).backward()"),
        mistake="loop_grad_sign",
        fails=("reinforce_updates_test_grad", "reinforce_updates_test_params"),
    ),
    Answer(
        "divide por el número de pasos del lote",
        _loop().replace("weights, n_episodes)", "weights, len(log_probs))"),
        mistake="loop_grad_scale",
        fails=("reinforce_updates_test_grad", "reinforce_updates_test_params"),
    ),
    Answer(
        "retornos sin descontar",
        _loop(
            returns_line=(
                "returns.append(torch.as_tensor(discounted_returns(rewards, 1.0), "
                "dtype=torch.float32))"
            )
        ),
        mistake="loop_returns_no_gamma",
        fails=("reinforce_updates_test_grad", "reinforce_updates_test_params"),
    ),
    Answer(
        "el retorno del episodio en todos los pasos",
        _loop(
            returns_line=(
                "returns.append(torch.full((len(rewards),), "
                "float(discounted_returns(rewards, gamma)[0])))"
            )
        ),
        mistake="loop_returns_total",
        fails=("reinforce_updates_test_grad", "reinforce_updates_test_params"),
    ),
    Answer(
        "pesa cada paso con su recompensa",
        _loop(
            returns_line=(
                "returns.append(torch.as_tensor(rewards, dtype=torch.float32))"
            )
        ),
        mistake="loop_returns_immediate",
        fails=("reinforce_updates_test_grad", "reinforce_updates_test_params"),
    ),
    Answer(
        "optimizer.step() fuera del bucle de actualizaciones",
        _loop()
        .replace(
            "        optimizer.step()\n        mean_returns",
            "        mean_returns",
        )
        .replace(
            "    return mean_returns",
            "    optimizer.step()\n    return mean_returns",
        ),
        mistake="loop_wrong_step_count",
        fails=("reinforce_updates_test_params",),
    ),
    Answer(
        "divide por el contador de episodios de todo el bucle",
        _loop().replace("weights, n_episodes)", "weights, episode)"),
        mistake="loop_wrong_parameters",
        fails=("reinforce_updates_test_params",),
    ),
]
