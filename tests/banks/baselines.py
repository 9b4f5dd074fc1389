"""Banco de respuestas del módulo 04 · Varianza y líneas base."""

from tests.banks import Answer

MODULE = "04_lineas_base"

WRONG: dict[str, list[Answer]] = {
    "score_gradients": [
        Answer(
            "línea base restada al revés",
            """
def score_gradients(theta, actions, rewards, baseline):
    pi = np.exp(theta - theta.max())
    pi /= pi.sum()
    weights = np.asarray(baseline, dtype=float) - np.asarray(rewards, dtype=float)
    return weights[:, None] * (np.eye(len(theta))[actions] - pi)
""",
            mistake="score_sign",
        ),
        Answer(
            "sin restar la línea base",
            """
def score_gradients(theta, actions, rewards, baseline):
    pi = np.exp(theta - theta.max())
    pi /= pi.sum()
    weights = np.asarray(rewards, dtype=float)
    return weights[:, None] * (np.eye(len(theta))[actions] - pi)
""",
            mistake="score_no_baseline",
        ),
        Answer(
            "sin restar π",
            """
def score_gradients(theta, actions, rewards, baseline):
    weights = np.asarray(rewards, dtype=float) - baseline
    return weights[:, None] * np.eye(len(theta))[actions]
""",
            mistake="score_no_minus_pi",
        ),
        Answer(
            "devuelve la media",
            """
def score_gradients(theta, actions, rewards, baseline):
    pi = np.exp(theta - theta.max())
    pi /= pi.sum()
    weights = np.asarray(rewards, dtype=float) - baseline
    return (weights[:, None] * (np.eye(len(theta))[actions] - pi)).mean(axis=0)
""",
            mistake="score_returns_mean",
        ),
        Answer(
            "∇π en lugar de ∇log π",
            """
def score_gradients(theta, actions, rewards, baseline):
    pi = np.exp(theta - theta.max())
    pi /= pi.sum()
    weights = (np.asarray(rewards, dtype=float) - baseline) * pi[actions]
    return weights[:, None] * (np.eye(len(theta))[actions] - pi)
""",
            mistake="score_grad_pi",
        ),
    ],
    "estimator_variances": [
        Answer(
            "divide por N − 1",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s.sum(axis=0))
        to_go.append(np.cumsum(r[::-1])[::-1] @ s)
    full, to_go = np.array(full), np.array(to_go)
    return (float(full.var(axis=0, ddof=1).sum()),
            float(to_go.var(axis=0, ddof=1).sum()))
""",
            mistake="variance_ddof1",
        ),
        Answer(
            "recompensa futura hacia delante (el pasado)",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s.sum(axis=0))
        to_go.append(np.cumsum(r) @ s)
    full, to_go = np.array(full), np.array(to_go)
    return float(full.var(axis=0).sum()), float(to_go.var(axis=0).sum())
""",
            mistake="to_go_past",
            fails=("estimator_variances_test_to_go",),
        ),
        Answer(
            "sin la recompensa del propio paso",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        after = np.cumsum(r[::-1])[::-1] - r
        full.append(r.sum() * s.sum(axis=0))
        to_go.append(after @ s)
    full, to_go = np.array(full), np.array(to_go)
    return float(full.var(axis=0).sum()), float(to_go.var(axis=0).sum())
""",
            mistake="to_go_without_own_reward",
            fails=("estimator_variances_test_to_go",),
        ),
        Answer(
            "sumas hacia atrás sin volver a darles la vuelta",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s.sum(axis=0))
        to_go.append(np.cumsum(r[::-1]) @ s)
    full, to_go = np.array(full), np.array(to_go)
    return float(full.var(axis=0).sum()), float(to_go.var(axis=0).sum())
""",
            mistake="to_go_reversed",
            fails=("estimator_variances_test_to_go",),
        ),
        Answer(
            "el retorno entero solo en el primer paso",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s[0])
        to_go.append(np.cumsum(r[::-1])[::-1] @ s)
    full, to_go = np.array(full), np.array(to_go)
    return float(full.var(axis=0).sum()), float(to_go.var(axis=0).sum())
""",
            mistake="full_first_step_only",
            fails=("estimator_variances_test",),
        ),
        Answer(
            "la recompensa futura también en el primer estimador",
            """
def estimator_variances(episode_rewards, episode_scores):
    g = []
    for r, s in zip(episode_rewards, episode_scores):
        g.append(np.cumsum(r[::-1])[::-1] @ s)
    g = np.array(g)
    v = float(g.var(axis=0).sum())
    return v, v
""",
            mistake="full_uses_to_go",
            fails=("estimator_variances_test",),
        ),
        Answer(
            "promedia las varianzas de las componentes",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s.sum(axis=0))
        to_go.append(np.cumsum(r[::-1])[::-1] @ s)
    full, to_go = np.array(full), np.array(to_go)
    return float(full.var(axis=0).mean()), float(to_go.var(axis=0).mean())
""",
            mistake="variance_mean_of_components",
        ),
        Answer(
            "acumula la recompensa futura sobre la entrada",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s.sum(axis=0))
        for t in range(len(r) - 2, -1, -1):
            r[t] += r[t + 1]
        to_go.append(r @ s)
    full, to_go = np.array(full), np.array(to_go)
    return float(full.var(axis=0).sum()), float(to_go.var(axis=0).sum())
""",
            mistake="modified_input",
        ),
        Answer(
            "redondea a dos decimales",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s.sum(axis=0))
        to_go.append(np.cumsum(r[::-1])[::-1] @ s)
    full, to_go = np.array(full), np.array(to_go)
    return (round(float(full.var(axis=0).sum()), 2),
            round(float(to_go.var(axis=0).sum()), 2))
""",
            mistake="rounded",
        ),
    ],
    "normalize_returns": [
        Answer(
            "solo centra",
            """
def normalize_returns(returns):
    return np.asarray(returns, dtype=float) - np.mean(returns)
""",
            mistake="normalize_only_centered",
        ),
        Answer(
            "desviación cero: NaN",
            """
def normalize_returns(returns):
    returns = np.asarray(returns, dtype=float)
    return (returns - returns.mean()) / returns.std()
""",
            mistake="zero_std_nan",
            fails=("normalize_returns_test_constant",),
        ),
        Answer(
            "desviación cero con torch: NaN",
            """
def normalize_returns(returns):
    g = torch.as_tensor(returns, dtype=torch.float64)
    return ((g - g.mean()) / g.std()).numpy()
""",
            mistake="zero_std_nan_unbiased",
            fails=("normalize_returns_test_constant",),
        ),
        Answer(
            "divide por la varianza",
            """
def normalize_returns(returns):
    returns = np.asarray(returns, dtype=float)
    return (returns - returns.mean()) / (returns.var() + 1e-8)
""",
            mistake="normalize_by_variance",
        ),
    ],
    "leave_one_out_baseline": [
        Answer(
            "incluye la propia recompensa: depende de la acción",
            """
def leave_one_out_baseline(question_ids, rewards):
    ids, rewards = np.asarray(question_ids), np.asarray(rewards, dtype=float)
    return np.array([rewards[ids == q].mean() for q in ids])
""",
            mistake="loo_includes_own",
        ),
        Answer(
            "media global",
            """
def leave_one_out_baseline(question_ids, rewards):
    return np.full(len(rewards), np.mean(rewards))
""",
            mistake="loo_batch_mean",
        ),
        Answer(
            "pregunta con una sola muestra: NaN",
            """
def leave_one_out_baseline(question_ids, rewards):
    ids, rewards = np.asarray(question_ids), np.asarray(rewards, dtype=float)
    out = np.zeros_like(rewards)
    for i in range(len(ids)):
        same = ids == ids[i]
        out[i] = (rewards[same].sum() - rewards[i]) / (same.sum() - 1)
    return out
""",
            mistake="loo_single_nan",
            fails=("leave_one_out_baseline_test_single",),
        ),
        Answer(
            "deja fuera la propia, pero del lote entero",
            """
def leave_one_out_baseline(question_ids, rewards):
    rewards = np.asarray(rewards, dtype=float)
    return (rewards.sum() - rewards) / (len(rewards) - 1)
""",
            mistake="loo_batch_leave_one_out",
        ),
    ],
    "baseline_losses": [
        Answer(
            "una sola pérdida sumada",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    return policy_loss + ((values - returns) ** 2).mean()
""",
            mistake="losses_not_a_pair",
        ),
        Answer(
            "ventaja sin separar del grafo",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    policy_loss = -(log_probs * (returns - values)).sum() / n_episodes
    value_loss = ((values - returns) ** 2).mean()
    return policy_loss, value_loss
""",
            mistake="advantage_not_detached",
            fails=("baseline_losses_test_grad",),
        ),
        Answer(
            "ventaja con el signo cambiado",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (values - returns).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    return policy_loss, ((values - returns) ** 2).mean()
""",
            mistake="policy_sign",
        ),
        Answer(
            "values separado también en la pérdida del valor",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    values = values.detach()
    policy_loss = -(log_probs * (returns - values)).sum() / n_episodes
    return policy_loss, ((values - returns) ** 2).mean()
""",
            mistake="values_detached",
            fails=("baseline_losses_test_grad",),
        ),
        Answer(
            "pérdida del valor sumada",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    return policy_loss, ((values - returns) ** 2).sum()
""",
            mistake="value_sum",
        ),
        Answer(
            "sin línea base en la política",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    policy_loss = -(log_probs * returns).sum() / n_episodes
    return policy_loss, ((values - returns) ** 2).mean()
""",
            mistake="policy_no_baseline",
        ),
        Answer(
            "pérdidas convertidas en números con .item()",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    value_loss = ((values - returns) ** 2).mean()
    return policy_loss.item(), value_loss.item()
""",
            mistake="loss_not_connected",
            fails=("baseline_losses_test_grad",),
        ),
        Answer(
            "log_probs separado en la pérdida de la política",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    weights = (returns - values).detach()
    policy_loss = -(log_probs.detach() * weights).sum() / n_episodes
    return policy_loss + 0 * values.sum(), ((values - returns) ** 2).mean()
""",
            mistake="log_probs_detached",
            fails=("baseline_losses_test_grad",),
        ),
    ],
    "baseline_update": [
        Answer(
            "ajusta V antes de calcular las ventajas",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    for _ in range(value_epochs):
        value_loss = ((value_net(obs) - returns) ** 2).mean()
        value_optimizer.zero_grad()
        value_loss.backward()
        value_optimizer.step()
    values = value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    policy_loss, _ = baseline_losses(log_probs, values, returns, episodes.n_episodes)
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    return (returns - values).detach()
""",
            mistake="update_fit_before_advantages",
            fails=("baseline_update_test",),
        ),
        Answer(
            "ventaja sin separar: la pérdida de la política llega a V",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    advantages = returns - value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    policy_loss = -(log_probs * advantages).sum() / episodes.n_episodes
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    for _ in range(value_epochs):
        value_optimizer.zero_grad()
        ((value_net(obs) - returns) ** 2).mean().backward()
        value_optimizer.step()
    return advantages.detach()
""",
            mistake="update_advantage_not_detached",
            fails=("baseline_update_test_value",),
        ),
        Answer(
            "las dos pérdidas sumadas en cada paso",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    for _ in range(value_epochs):
        values = value_net(episodes.obs)
        log_probs = policy.distribution(episodes.obs).log_prob(episodes.actions)
        policy_loss, value_loss = baseline_losses(
            log_probs, values, returns, episodes.n_episodes)
        policy_optimizer.zero_grad()
        value_optimizer.zero_grad()
        (policy_loss + value_loss).backward()
        policy_optimizer.step()
        value_optimizer.step()
    return (returns - values).detach()
""",
            mistake="update_losses_summed",
        ),
        Answer(
            "un solo paso de las dos pérdidas sumadas",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    values = value_net(episodes.obs)
    log_probs = policy.distribution(episodes.obs).log_prob(episodes.actions)
    policy_loss, value_loss = baseline_losses(
        log_probs, values, returns, episodes.n_episodes)
    policy_optimizer.zero_grad()
    value_optimizer.zero_grad()
    (policy_loss + value_loss).backward()
    policy_optimizer.step()
    value_optimizer.step()
    return (returns - values).detach()
""",
            mistake="update_value_single_step",
            fails=("baseline_update_test_value",),
        ),
        Answer(
            "un solo optimizador para las dos pérdidas",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    values = value_net(episodes.obs)
    log_probs = policy.distribution(episodes.obs).log_prob(episodes.actions)
    policy_loss, value_loss = baseline_losses(
        log_probs, values, returns, episodes.n_episodes)
    policy_optimizer.zero_grad()
    (policy_loss + value_loss).backward()
    policy_optimizer.step()
    return (returns - values).detach()
""",
            mistake="update_value_not_trained",
            fails=("baseline_update_test_value",),
        ),
        Answer(
            "zero_grad de V una sola vez, antes del bucle",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    with torch.no_grad():
        values = value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    policy_loss, _ = baseline_losses(log_probs, values, returns, episodes.n_episodes)
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    value_optimizer.zero_grad()
    for _ in range(value_epochs):
        ((value_net(obs) - returns) ** 2).mean().backward()
        value_optimizer.step()
    return returns - values
""",
            mistake="update_value_no_zero_grad",
            fails=("baseline_update_test_value",),
        ),
        Answer(
            "sin zero_grad en la política",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    with torch.no_grad():
        values = value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    baseline_losses(log_probs, values, returns, episodes.n_episodes)[0].backward()
    policy_optimizer.step()
    for _ in range(value_epochs):
        value_optimizer.zero_grad()
        ((value_net(obs) - returns) ** 2).mean().backward()
        value_optimizer.step()
    return returns - values
""",
            mistake="update_policy_no_zero_grad",
            fails=("baseline_update_test",),
        ),
        Answer(
            "divide por los pasos, no por los episodios",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    with torch.no_grad():
        values = value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    policy_loss, _ = baseline_losses(log_probs, values, returns, len(returns))
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    for _ in range(value_epochs):
        value_optimizer.zero_grad()
        ((value_net(obs) - returns) ** 2).mean().backward()
        value_optimizer.step()
    return returns - values
""",
            mistake="update_divided_by_steps",
            fails=("baseline_update_test",),
        ),
        Answer(
            "resta la línea base en los propios retornos",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    with torch.no_grad():
        values = value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    policy_loss, value_loss = baseline_losses(
        log_probs, values, returns, episodes.n_episodes)
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    for _ in range(value_epochs):
        value_optimizer.zero_grad()
        ((value_net(obs) - returns) ** 2).mean().backward()
        value_optimizer.step()
    returns -= values
    return returns
""",
            mistake="modified_input",
        ),
        Answer(
            "devuelve las ventajas con gradiente",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    values = value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    policy_loss, _ = baseline_losses(log_probs, values, returns, episodes.n_episodes)
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    for _ in range(value_epochs):
        value_optimizer.zero_grad()
        ((value_net(obs) - returns) ** 2).mean().backward()
        value_optimizer.step()
    return returns - values
""",
            mistake="update_advantages_attached",
            fails=("baseline_update_test",),
        ),
        Answer(
            "sin return",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    values = value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    policy_loss, _ = baseline_losses(log_probs, values, returns, episodes.n_episodes)
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    for _ in range(value_epochs):
        value_optimizer.zero_grad()
        ((value_net(obs) - returns) ** 2).mean().backward()
        value_optimizer.step()
    pass
""",
            mistake="update_advantages_shape",
            fails=("baseline_update_test",),
        ),
        Answer(
            "devuelve las ventajas recalculadas con la V ya ajustada",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    values = value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    policy_loss, _ = baseline_losses(log_probs, values, returns, episodes.n_episodes)
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    for _ in range(value_epochs):
        value_optimizer.zero_grad()
        ((value_net(obs) - returns) ** 2).mean().backward()
        value_optimizer.step()
    return (returns - value_net(obs)).detach()
""",
            mistake="update_wrong_advantages",
            fails=("baseline_update_test",),
        ),
        Answer(
            "un paso de V de más",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    values = value_net(obs)
    log_probs = policy.distribution(obs).log_prob(episodes.actions)
    policy_loss, _ = baseline_losses(log_probs, values, returns, episodes.n_episodes)
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    for _ in range(value_epochs + 1):
        value_optimizer.zero_grad()
        ((value_net(obs) - returns) ** 2).mean().backward()
        value_optimizer.step()
    return (returns - values).detach()
""",
            mistake="update_step_count",
            fails=("baseline_update_test_value",),
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "score_gradients": [
        Answer(
            "con un bucle",
            """
def score_gradients(theta, actions, rewards, baseline):
    pi = np.exp(np.asarray(theta) - np.max(theta))
    pi = pi / pi.sum()
    b = np.broadcast_to(np.asarray(baseline, dtype=float), (len(actions),))
    rows = []
    for a, r, bi in zip(actions, rewards, b):
        one_hot = np.zeros(len(theta))
        one_hot[int(a)] = 1.0
        rows.append((r - bi) * (one_hot - pi))
    return np.array(rows)
""",
        ),
        Answer(
            "con torch y log_softmax",
            """
def score_gradients(theta, actions, rewards, baseline):
    th = torch.as_tensor(theta, dtype=torch.float64)
    pi = torch.softmax(th, dim=0)
    one_hot = torch.nn.functional.one_hot(
        torch.as_tensor(actions, dtype=torch.long), len(th)).double()
    w = torch.as_tensor(rewards, dtype=torch.float64) - torch.as_tensor(
        baseline, dtype=torch.float64)
    return (w[:, None] * (one_hot - pi)).numpy()
""",
        ),
        Answer(
            "con autograd, muestra a muestra",
            """
def score_gradients(theta, actions, rewards, baseline):
    b = np.broadcast_to(np.asarray(baseline, dtype=float), (len(actions),))
    rows = []
    for a, r, bi in zip(actions, rewards, b):
        th = torch.tensor(np.asarray(theta, dtype=float), requires_grad=True)
        torch.log_softmax(th, dim=0)[int(a)].backward()
        rows.append((r - bi) * th.grad.numpy())
    return np.array(rows)
""",
        ),
    ],
    "estimator_variances": [
        Answer(
            "con bucles y sumas a mano",
            """
def estimator_variances(episode_rewards, episode_scores):
    per_episode = {"full": [], "future": []}
    for rewards, scores in zip(episode_rewards, episode_scores):
        total = float(np.sum(rewards))
        g_full = np.zeros(scores.shape[1])
        g_future = np.zeros(scores.shape[1])
        remaining = total
        for t in range(len(rewards)):
            g_full = g_full + total * scores[t]
            g_future = g_future + remaining * scores[t]
            remaining = remaining - rewards[t]
        per_episode["full"].append(g_full)
        per_episode["future"].append(g_future)
    out = []
    for key in ("full", "future"):
        g = np.stack(per_episode[key])
        out.append(float(np.mean(np.sum((g - g.mean(axis=0)) ** 2, axis=1))))
    return tuple(out)
""",
        ),
        Answer(
            "con torch: flip y cumsum",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, future = [], []
    for r, s in zip(episode_rewards, episode_scores):
        r = torch.as_tensor(r, dtype=torch.float64)
        s = torch.as_tensor(s, dtype=torch.float64)
        to_go = torch.flip(torch.cumsum(torch.flip(r, [0]), 0), [0])
        full.append(r.sum() * s.sum(0))
        future.append((to_go[:, None] * s).sum(0))
    full, future = torch.stack(full), torch.stack(future)
    return (full.var(0, unbiased=False).sum().item(),
            future.var(0, unbiased=False).sum().item())
""",
        ),
        Answer(
            "con la traza de la covarianza y una lista",
            """
def estimator_variances(episode_rewards, episode_scores):
    full, future = [], []
    for r, s in zip(episode_rewards, episode_scores):
        r = np.asarray(r, dtype=float)
        weights = np.array([r[t:].sum() for t in range(len(r))])
        full.append(np.sum(r) * np.sum(s, axis=0))
        future.append((weights[:, None] * s).sum(axis=0))
    return [float(np.trace(np.atleast_2d(np.cov(np.array(g).T, bias=True))))
            for g in (full, future)]
""",
        ),
    ],
    "normalize_returns": [
        Answer(
            "con ε en el denominador",
            """
def normalize_returns(returns):
    returns = np.asarray(returns, dtype=float)
    return (returns - returns.mean()) / (returns.std() + 1e-8)
""",
        ),
        Answer(
            "con torch y la desviación de N − 1",
            """
def normalize_returns(returns):
    g = torch.as_tensor(returns, dtype=torch.float64)
    std = g.std()
    if std < 1e-8:
        return torch.zeros_like(g)
    return (g - g.mean()) / std
""",
        ),
        Answer(
            "con np.where",
            """
def normalize_returns(returns):
    g = np.asarray(returns, dtype=float)
    std = g.std()
    return np.where(std > 1e-8, (g - g.mean()) / max(std, 1e-8), 0.0)
""",
        ),
    ],
    "leave_one_out_baseline": [
        Answer(
            "con un doble bucle",
            """
def leave_one_out_baseline(question_ids, rewards):
    out = []
    for i, q in enumerate(question_ids):
        others = [r for j, (p, r) in enumerate(zip(question_ids, rewards))
                  if p == q and j != i]
        out.append(sum(others) / len(others) if others else 0.0)
    return np.array(out)
""",
        ),
        Answer(
            "con bincount",
            """
def leave_one_out_baseline(question_ids, rewards):
    ids = np.asarray(question_ids)
    rewards = np.asarray(rewards, dtype=float)
    _, inverse = np.unique(ids, return_inverse=True)
    sums = np.bincount(inverse, weights=rewards)[inverse]
    counts = np.bincount(inverse)[inverse]
    return np.where(counts > 1, (sums - rewards) / np.maximum(counts - 1, 1), 0.0)
""",
        ),
    ],
    "baseline_losses": [
        Answer(
            "con torch.no_grad y mse_loss",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    with torch.no_grad():
        advantages = returns - values
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    value_loss = torch.nn.functional.mse_loss(values, returns)
    return policy_loss, value_loss
""",
        ),
        Answer(
            "con el módulo 03 y una lista",
            """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = returns.detach() - values.detach()
    policy_loss = reinforce.reinforce_loss(log_probs, advantages, n_episodes)
    value_loss = ((returns.detach() - values) ** 2).sum() / len(values)
    return [policy_loss, value_loss]
""",
        ),
    ],
    "baseline_update": [
        Answer(
            "la pérdida escrita a mano y mse_loss",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    with torch.no_grad():
        advantages = returns - value_net(episodes.obs)
    dist = policy.distribution(episodes.obs)
    policy_loss = -(dist.log_prob(episodes.actions) * advantages).sum()
    policy_optimizer.zero_grad()
    (policy_loss / episodes.n_episodes).backward()
    policy_optimizer.step()
    for epoch in range(value_epochs):
        value_optimizer.zero_grad()
        torch.nn.functional.mse_loss(value_net(episodes.obs), returns).backward()
        value_optimizer.step()
    return advantages
""",
        ),
        Answer(
            "las ventajas primero, V después y la política al final",
            """
def baseline_update(policy, value_net, policy_optimizer, value_optimizer,
                    episodes, returns, value_epochs):
    obs = episodes.obs
    advantages = (returns - value_net(obs)).detach()
    for _ in range(value_epochs):
        value_optimizer.zero_grad()
        baseline_losses(torch.zeros(len(obs)), value_net(obs), returns, 1)[1].backward()
        value_optimizer.step()
    logits = policy(obs)
    log_probs = torch.distributions.Categorical(logits=logits).log_prob(
        episodes.actions)
    old_values = returns - advantages
    policy_loss, _ = baseline_losses(log_probs, old_values, returns,
                                     len(episodes.lengths))
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
    return advantages
""",
        ),
    ],
}

# ---------------------------------------------------------------------------
# Clases de error que valen para cualquier ejercicio (issue #22).
# ---------------------------------------------------------------------------

WRONG["score_gradients"] += [
    Answer(
        "softmax sin restar el máximo: desborda con logits grandes",
        """
def score_gradients(theta, actions, rewards, baseline):
    pi = np.exp(theta) / np.exp(theta).sum()
    weights = np.asarray(rewards, dtype=float) - np.asarray(baseline, dtype=float)
    return weights[:, None] * (np.eye(len(theta))[actions] - pi)
""",
        mistake="score_overflow",
        fails=("score_gradients_test_stable",),
    ),
    Answer(
        "resta el máximo sobre theta",
        """
def score_gradients(theta, actions, rewards, baseline):
    theta -= theta.max()
    pi = np.exp(theta) / np.exp(theta).sum()
    weights = np.asarray(rewards, dtype=float) - baseline
    return weights[:, None] * (np.eye(len(theta))[actions] - pi)
""",
        mistake="modified_input",
    ),
]
WRONG["normalize_returns"] += [
    Answer(
        "normaliza sobre la entrada",
        """
def normalize_returns(returns):
    std = returns.std()
    returns -= returns.mean()
    if std < 1e-8:
        return returns
    returns /= std
    return returns
""",
        mistake="modified_input",
    ),
]
WRONG["leave_one_out_baseline"] += [
    Answer(
        "acumula sobre rewards",
        """
def leave_one_out_baseline(question_ids, rewards):
    out = np.zeros(len(rewards))
    for q in np.unique(question_ids):
        members = question_ids == q
        n = members.sum()
        if n > 1:
            rewards[members] = (rewards[members].sum() - rewards[members]) / (n - 1)
            out[members] = rewards[members]
    return out
""",
        mistake="modified_input",
    ),
]

# ---------------------------------------------------------------------------
# Un error típico por cada fila que ninguna respuesta provocaba (issue 48).
# ---------------------------------------------------------------------------

WRONG["score_gradients"] += [
    Answer(
        "suma la línea base",
        """
def score_gradients(theta, actions, rewards, baseline):
    pi = np.exp(theta - theta.max())
    pi /= pi.sum()
    weights = np.asarray(rewards, dtype=float) + baseline
    return weights[:, None] * (np.eye(len(theta))[actions] - pi)
""",
        mistake="score_baseline_added",
    ),
    Answer(
        "el peso medio para todas las muestras",
        """
def score_gradients(theta, actions, rewards, baseline):
    pi = np.exp(theta - theta.max())
    pi /= pi.sum()
    weights = np.asarray(rewards, dtype=float) - baseline
    return weights.mean() * (np.eye(len(theta))[actions] - pi)
""",
        mistake="score_mean_weight",
    ),
]
WRONG["estimator_variances"] += [
    Answer(
        "la recompensa media en el primer estimador",
        """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.mean() * s.sum(axis=0))
        to_go.append(np.cumsum(r[::-1])[::-1] @ s)
    full, to_go = np.array(full), np.array(to_go)
    return float(full.var(axis=0).sum()), float(to_go.var(axis=0).sum())
""",
        mistake="full_mean_reward",
        fails=("estimator_variances_test",),
    ),
    Answer(
        "sin restar la media de las estimaciones",
        """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s.sum(axis=0))
        to_go.append(np.cumsum(r[::-1])[::-1] @ s)
    full, to_go = np.array(full), np.array(to_go)
    return (float((full**2).sum(axis=1).mean()),
            float((to_go**2).sum(axis=1).mean()))
""",
        mistake="variance_not_centered",
    ),
    Answer(
        "np.var sin axis",
        """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s.sum(axis=0))
        to_go.append(np.cumsum(r[::-1])[::-1] @ s)
    return float(np.var(full)), float(np.var(to_go))
""",
        mistake="variance_flattened",
    ),
    Answer(
        "las varianzas de las componentes, sin sumar",
        """
def estimator_variances(episode_rewards, episode_scores):
    full, to_go = [], []
    for r, s in zip(episode_rewards, episode_scores):
        full.append(r.sum() * s.sum(axis=0))
        to_go.append(np.cumsum(r[::-1])[::-1] @ s)
    return np.array(full).var(axis=0), np.array(to_go).var(axis=0)
""",
        mistake="variance_not_a_number",
    ),
    Answer(
        "solo la varianza de la recompensa futura",
        """
def estimator_variances(episode_rewards, episode_scores):
    to_go = []
    for r, s in zip(episode_rewards, episode_scores):
        to_go.append(np.cumsum(r[::-1])[::-1] @ s)
    return float(np.array(to_go).var(axis=0).sum())
""",
        mistake="variances_not_a_pair",
    ),
]
WRONG["normalize_returns"] += [
    Answer(
        "solo divide por la desviación",
        """
def normalize_returns(returns):
    returns = np.asarray(returns, dtype=float)
    return returns / (returns.std() + 1e-8)
""",
        mistake="normalize_only_scaled",
    ),
    Answer(
        "compara la desviación con == 0",
        """
def normalize_returns(returns):
    returns = np.asarray(returns, dtype=float)
    std = returns.std()
    if std == 0:
        return np.zeros_like(returns)
    return (returns - returns.mean()) / std
""",
        mistake="zero_std_exact",
        fails=("normalize_returns_test_constant",),
    ),
]
WRONG["baseline_losses"] += [
    Answer(
        "la pérdida de la política sin sumar",
        """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages) / n_episodes
    return policy_loss, ((values - returns) ** 2).mean()
""",
        mistake="loss_not_scalar",
        fails=("baseline_losses_test_grad",),
    ),
    Answer(
        "la política promediada sobre los pasos",
        """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).mean()
    return policy_loss, ((values - returns) ** 2).mean()
""",
        mistake="policy_mean_over_steps",
    ),
    Answer(
        "la política sin dividir por N",
        """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).sum()
    return policy_loss, ((values - returns) ** 2).mean()
""",
        mistake="policy_not_divided",
    ),
    Answer(
        "suma V(s) en la ventaja",
        """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns + values).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    return policy_loss, ((values - returns) ** 2).mean()
""",
        mistake="policy_value_added",
    ),
    Answer(
        "error absoluto en el valor",
        """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    return policy_loss, (values - returns).abs().mean()
""",
        mistake="value_absolute",
    ),
    Answer(
        "el valor dividido por N episodios",
        """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    return policy_loss, ((values - returns) ** 2).sum() / n_episodes
""",
        mistake="value_divided_by_episodes",
    ),
    Answer(
        "el cuadrado de la media de los errores",
        """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    return policy_loss, (values - returns).mean() ** 2
""",
        mistake="value_square_of_mean",
    ),
    Answer(
        "devuelve la pérdida total como segunda",
        """
def baseline_losses(log_probs, values, returns, n_episodes):
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).sum() / n_episodes
    return policy_loss, policy_loss + ((values - returns) ** 2).mean()
""",
        mistake="value_loss_reaches_log_probs",
    ),
]
