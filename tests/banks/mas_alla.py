"""Banco de respuestas del módulo 08 · Más allá de GRPO."""

from tests.banks import Answer, statements_right

MODULE = "08_mas_alla"

_RLOO = "rloo_advantages_test"
_RLOO_1D = "rloo_advantages_test_1d"
_TOKEN = "token_level_rewards_test"
_TOKEN_GRAD = "token_level_rewards_test_grad"
_GAE = "token_gae_test"
_GAE_GRAD = "token_gae_test_grad"
_PASS = "estimate_pass_at_k_test"
_PASS_EDGES = "estimate_pass_at_k_test_edges"

WRONG: dict[str, list[Answer]] = {
    "rloo_advantages": [
        Answer(
            "la media del grupo entero (GRPO)",
            """
def rloo_advantages(rewards):
    rewards = torch.as_tensor(rewards, dtype=torch.float32)
    return rewards - rewards.mean(dim=-1, keepdim=True)
""",
            mistake="rloo_group_mean",
        ),
        Answer(
            "divide la suma de las demás entre G",
            """
def rloo_advantages(rewards):
    rewards = torch.as_tensor(rewards, dtype=torch.float32)
    G = rewards.shape[-1]
    return rewards - (rewards.sum(dim=-1, keepdim=True) - rewards) / G
""",
            mistake="rloo_divide_by_g",
        ),
        Answer(
            "modifica la entrada",
            """
def rloo_advantages(rewards):
    G = rewards.shape[-1]
    total = rewards.sum(dim=-1, keepdim=True)
    rewards -= (total - rewards) / (G - 1)
    return rewards
""",
            mistake="modified_input",
        ),
        Answer(
            "el eje de los enunciados",
            """
def rloo_advantages(rewards):
    rewards = torch.as_tensor(rewards, dtype=torch.float32)
    others = rewards.sum(dim=0, keepdim=True) - rewards
    return rewards - others / (rewards.shape[0] - 1)
""",
            mistake="rloo_wrong_axis",
        ),
        Answer(
            "dim=1 fijo (falla con un solo grupo)",
            """
def rloo_advantages(rewards):
    rewards = torch.as_tensor(rewards, dtype=torch.float32)
    G = rewards.shape[1]
    return rewards - (rewards.sum(dim=1, keepdim=True) - rewards) / (G - 1)
""",
            mistake="rloo_dim1",
            fails=(_RLOO_1D,),
        ),
        Answer(
            "acumula en enteros con recompensas long",
            """
def rloo_advantages(rewards):
    G = rewards.shape[-1]
    advantages = torch.zeros_like(rewards)
    total = rewards.sum(dim=-1)
    for i in range(G):
        others = (total - rewards[..., i]) / (G - 1)
        advantages[..., i] = rewards[..., i] - others
    return advantages
""",
            mistake="rloo_integer",
            fails=(_RLOO_1D,),
        ),
        Answer(
            "la media de las demás menos la propia",
            """
def rloo_advantages(rewards):
    rewards = torch.as_tensor(rewards).float()
    G = rewards.shape[-1]
    others = (rewards.sum(dim=-1, keepdim=True) - rewards) / (G - 1)
    return others - rewards
""",
            mistake="rloo_sign",
        ),
        Answer(
            "resta la suma de las demás, sin dividir",
            """
def rloo_advantages(rewards):
    rewards = torch.as_tensor(rewards).float()
    return rewards - (rewards.sum(dim=-1, keepdim=True) - rewards)
""",
            mistake="rloo_sum_of_others",
        ),
    ],
    "token_level_rewards": [
        Answer(
            "la nota en la última columna",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    with torch.no_grad():
        kl = log_probs - ref_log_probs
        rewards = torch.where(mask, -kl_coef * kl, torch.zeros_like(kl))
        rewards[:, -1] += scores
    return rewards
""",
            mistake="token_last_column",
            fails=(_TOKEN,),
        ),
        Answer(
            "la nota en el primer token",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    with torch.no_grad():
        kl = log_probs - ref_log_probs
        rewards = torch.where(mask, -kl_coef * kl, torch.zeros_like(kl))
        rewards[:, 0] += scores
    return rewards
""",
            mistake="token_first_token",
            fails=(_TOKEN,),
        ),
        Answer(
            "la nota en todos los tokens",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    with torch.no_grad():
        kl = log_probs - ref_log_probs
        per_token = -kl_coef * kl + scores[:, None]
        return torch.where(mask, per_token, torch.zeros_like(kl))
""",
            mistake="token_every_token",
            fails=(_TOKEN,),
        ),
        Answer(
            "sin la penalización KL",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    rewards = torch.zeros(log_probs.shape)
    last = mask.long().sum(dim=-1) - 1
    rewards[torch.arange(len(scores)), last] = scores.float()
    return rewards
""",
            mistake="token_no_kl",
            fails=(_TOKEN,),
        ),
        Answer(
            "la nota en la posición n, no en n − 1",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    with torch.no_grad():
        kl = log_probs - ref_log_probs
        positions = torch.arange(mask.shape[1])
        lengths = mask.sum(dim=-1, keepdim=True)
        rewards = torch.where(mask, -kl_coef * kl, torch.zeros_like(kl))
        return rewards + torch.where(positions == lengths, scores[:, None], 0.0)
""",
            mistake="token_score_after_last",
            fails=(_TOKEN,),
        ),
        Answer(
            "la KL con el signo cambiado",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    with torch.no_grad():
        kl = log_probs - ref_log_probs
        rewards = torch.where(mask, kl_coef * kl, torch.zeros_like(kl))
        last = mask.long().sum(dim=-1) - 1
        rewards[torch.arange(len(scores)), last] += scores
    return rewards
""",
            mistake="token_kl_sign",
            fails=(_TOKEN,),
        ),
        Answer(
            "la KL también en el relleno",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    with torch.no_grad():
        rewards = -kl_coef * (log_probs - ref_log_probs)
        last = mask.long().sum(dim=-1) - 1
        rewards[torch.arange(len(scores)), last] += scores
    return rewards
""",
            mistake="token_kl_unmasked",
            fails=(_TOKEN,),
        ),
        Answer(
            "con gradiente (valores bien)",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    rewards = -kl_coef * (log_probs - ref_log_probs) * mask
    last = mask.long().sum(dim=-1) - 1
    bonus = torch.zeros_like(rewards)
    bonus[torch.arange(len(scores)), last] = scores
    return rewards + bonus
""",
            mistake="token_rewards_with_grad",
            fails=(_TOKEN_GRAD,),
        ),
        Answer(
            "un tensor bool de zeros_like(mask)",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    rewards = torch.zeros_like(mask)
    for i in range(len(scores)):
        n = int(mask[i].sum())
        for t in range(n):
            rewards[i, t] = -kl_coef * float(log_probs[i, t] - ref_log_probs[i, t])
        rewards[i, n - 1] = rewards[i, n - 1] + float(scores[i])
    return rewards
""",
            mistake="integer_dtype",
            fails=(_TOKEN,),
        ),
        Answer(
            "modifica log_probs",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    log_probs -= ref_log_probs
    log_probs *= -kl_coef
    rewards = torch.where(mask, log_probs, torch.zeros_like(log_probs)).detach()
    last = mask.long().sum(dim=-1) - 1
    rewards[torch.arange(len(scores)), last] += scores
    return rewards
""",
            mistake="modified_input",
        ),
    ],
    "token_gae": [
        Answer(
            "bootstrap con el valor del relleno",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    rewards, values = rewards.detach(), values.detach()
    B, T = rewards.shape
    advantages = torch.zeros(B, T)
    for i in range(B):
        n = int(mask[i].sum())
        running = 0.0
        for t in reversed(range(n)):
            next_value = float(values[i, t + 1]) if t + 1 < T else 0.0
            delta = float(rewards[i, t]) + gamma * next_value - float(values[i, t])
            running = delta + gamma * lam * running
            advantages[i, t] = running
    return advantages
""",
            mistake="gae_bootstrap_pad",
            fails=(_GAE,),
        ),
        Answer(
            "recorre también el relleno",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    rewards, values = rewards.detach(), values.detach()
    B, T = rewards.shape
    advantages = torch.zeros(B, T)
    running = torch.zeros(B)
    next_value = torch.zeros(B)
    for t in reversed(range(T)):
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        running = delta + gamma * lam * running
        advantages[:, t] = running
        next_value = values[:, t]
    return advantages
""",
            mistake="gae_no_mask",
            fails=(_GAE,),
        ),
        Answer(
            "solo λ en la recursión",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    rewards, values = rewards.detach(), values.detach()
    B, T = rewards.shape
    advantages = torch.zeros(B, T)
    for i in range(B):
        n = int(mask[i].sum())
        running, next_value = 0.0, 0.0
        for t in reversed(range(n)):
            delta = float(rewards[i, t]) + gamma * next_value - float(values[i, t])
            running = delta + lam * running
            advantages[i, t] = running
            next_value = float(values[i, t])
    return advantages
""",
            mistake="gae_lambda_only",
            fails=(_GAE,),
        ),
        Answer(
            "acumula hacia delante",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    rewards, values = rewards.detach(), values.detach()
    B, T = rewards.shape
    advantages = torch.zeros(B, T)
    for i in range(B):
        n = int(mask[i].sum())
        running = 0.0
        for t in range(n):
            next_value = float(values[i, t + 1]) if t + 1 < n else 0.0
            delta = float(rewards[i, t]) + gamma * next_value - float(values[i, t])
            running = delta + gamma * lam * running
            advantages[i, t] = running
    return advantages
""",
            mistake="gae_forward",
            fails=(_GAE,),
        ),
        Answer(
            "solo δ_t, sin acumular",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    rewards, values = rewards.detach(), values.detach()
    B, T = rewards.shape
    advantages = torch.zeros(B, T)
    for i in range(B):
        n = int(mask[i].sum())
        for t in range(n):
            next_value = float(values[i, t + 1]) if t + 1 < n else 0.0
            delta = float(rewards[i, t]) + gamma * next_value - float(values[i, t])
            advantages[i, t] = delta
    return advantages
""",
            mistake="gae_td",
            fails=(_GAE,),
        ),
        Answer(
            "con gradiente hacia el crítico (valores bien)",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    B, T = rewards.shape
    columns = [None] * T
    running = torch.zeros(B)
    next_value = torch.zeros(B)
    for t in reversed(range(T)):
        valid = mask[:, t].float()
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        running = valid * (delta + gamma * lam * running)
        next_value = valid * values[:, t]
        columns[t] = running
    return torch.stack(columns, dim=1)
""",
            mistake="gae_with_grad",
            fails=(_GAE_GRAD,),
        ),
        Answer(
            "los retornos en vez de las ventajas",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    rewards, values = rewards.detach(), values.detach()
    B, T = rewards.shape
    returns = torch.zeros(B, T)
    for i in range(B):
        n = int(mask[i].sum())
        running, next_value = 0.0, 0.0
        for t in reversed(range(n)):
            delta = float(rewards[i, t]) + gamma * next_value - float(values[i, t])
            running = delta + gamma * lam * running
            returns[i, t] = running + float(values[i, t])
            next_value = float(values[i, t])
    return returns
""",
            mistake="gae_returns",
            fails=(_GAE,),
        ),
        Answer(
            "escribe en values",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    B, T = rewards.shape
    values[~mask.bool()] = 0.0
    advantages = torch.zeros(B, T)
    running = torch.zeros(B)
    for t in reversed(range(T)):
        next_value = values[:, t + 1] if t + 1 < T else torch.zeros(B)
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        running = (delta + gamma * lam * running) * mask[:, t]
        advantages[:, t] = running
    return advantages.detach()
""",
            mistake="modified_input",
        ),
    ],
    "estimate_pass_at_k": [
        Answer(
            "con reemplazo: 1 − (1 − c/n)^k",
            """
def estimate_pass_at_k(n, c, k):
    return 1.0 - (1.0 - c / n) ** k
""",
            mistake="pass_biased",
        ),
        Answer(
            "sin el complemento",
            """
def estimate_pass_at_k(n, c, k):
    return math.comb(n - c, k) / math.comb(n, k)
""",
            mistake="pass_no_complement",
        ),
        Answer(
            "c/n, la de una sola respuesta",
            """
def estimate_pass_at_k(n, c, k):
    return c / n
""",
            mistake="pass_rate",
        ),
        Answer(
            "k veces la precisión, con tope 1",
            """
def estimate_pass_at_k(n, c, k):
    return min(1.0, k * c / n)
""",
            mistake="pass_k_over_n",
        ),
        Answer(
            "atajo pass@k = 1 también con n − c = k",
            """
def estimate_pass_at_k(n, c, k):
    if n - c <= k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)
""",
            mistake="pass_early_return_at_equal",
            fails=("estimate_pass_at_k_test",),
        ),
        Answer(
            "devuelve un tensor de 0 dimensiones",
            """
def estimate_pass_at_k(n, c, k):
    if n - c < k:
        return torch.tensor(1.0, dtype=torch.float64)
    fails = math.comb(n - c, k) / math.comb(n, k)
    return 1.0 - torch.tensor(fails, dtype=torch.float64)
""",
            mistake="not_python_number",
        ),
        Answer(
            "el producto empieza uno antes",
            """
def estimate_pass_at_k(n, c, k):
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c, n))
""",
            mistake="pass_off_by_one",
        ),
        Answer(
            "float() de números combinatorios enormes",
            """
def estimate_pass_at_k(n, c, k):
    return 1.0 - float(math.comb(n - c, k)) / float(math.comb(n, k))
""",
            mistake="pass_float_comb",
            fails=(_PASS_EDGES,),
        ),
        Answer(
            "redondea a dos decimales",
            """
def estimate_pass_at_k(n, c, k):
    return round(1 - math.comb(n - c, k) / math.comb(n, k), 2)
""",
            mistake="rounded",
        ),
    ],
    "exploit_flags": [
        Answer(
            "todo lo que premia el verificador con el error",
            """
def exploit_flags(texts, problems):
    return [buggy_verify(t, a, b) == 1 for t, (a, b) in zip(texts, problems)]
""",
            mistake="exploit_buggy_rewarded",
        ),
        Answer(
            "todas las incorrectas",
            """
def exploit_flags(texts, problems):
    return [tl.verify(t, a, b) == 0 for t, (a, b) in zip(texts, problems)]
""",
            mistake="exploit_all_incorrect",
        ),
        Answer(
            "los verificadores al revés",
            """
def exploit_flags(texts, problems):
    flags = []
    for text, (a, b) in zip(texts, problems):
        flags.append(tl.verify(text, a, b) == 1 and buggy_verify(text, a, b) == 0)
    return flags
""",
            mistake="exploit_verifiers_swapped",
        ),
        Answer(
            "el primer problema para todas",
            """
def exploit_flags(texts, problems):
    a, b = problems[0]
    return [bool(buggy_verify(t, a, b)) and not tl.verify(t, a, b) for t in texts]
""",
            mistake="exploit_first_problem",
        ),
        Answer(
            "sin return",
            """
def exploit_flags(texts, problems):
    flags = []
    for text, (a, b) in zip(texts, problems):
        flags.append(buggy_verify(text, a, b) == 1 and tl.verify(text, a, b) == 0)
""",
            mistake="exploit_not_a_list",
        ),
        Answer(
            "devuelve solo las respuestas que cuelan",
            """
def exploit_flags(texts, problems):
    return [text for text, (a, b) in zip(texts, problems)
            if buggy_verify(text, a, b) == 1 and tl.verify(text, a, b) == 0]
""",
            mistake="exploit_wrong_length",
        ),
        Answer(
            "pares (respuesta, marca)",
            """
def exploit_flags(texts, problems):
    flags = [buggy_verify(t, a, b) == 1 and tl.verify(t, a, b) == 0
             for t, (a, b) in zip(texts, problems)]
    return list(zip(texts, flags))
""",
            mistake="exploit_not_bool",
        ),
        Answer(
            "vacía la lista de respuestas",
            """
def exploit_flags(texts, problems):
    flags = []
    while texts:
        text = texts.pop(0)
        a, b = problems[len(flags)]
        flags.append(bool(buggy_verify(text, a, b)) and not tl.verify(text, a, b))
    return flags
""",
            mistake="modified_input",
        ),
    ],
}

#: El grade_id de la celda de la respuesta del experimento (su celda de
#: pruebas es ``clip_experiment_answer_test``), el de
#: ``helpers.checks.mas_alla.EXPERIMENT_KEY``.
EXPERIMENT = "clip_experiment_answer"

WRONG[EXPERIMENT] = [
    Answer(
        "todas verdaderas",
        'answer_experiment = {"a": True, "b": True, "c": True, "d": True}',
        mistake="statement_b",
    ),
    Answer(
        "el recorte actúa siempre",
        'answer_experiment = {"a": False, "b": False, "c": True, "d": False}',
        mistake="statement_a",
    ),
    Answer(
        "el crítico lo explica todo",
        'answer_experiment = {"a": True, "b": False, "c": True, "d": True}',
        mistake="statement_d",
    ),
    Answer(
        "el crítico no aprende nada",
        'answer_experiment = {"a": True, "b": False, "c": False, "d": False}',
        mistake="statement_c",
    ),
    Answer(
        "sin marcar",
        'answer_experiment = {"a": None, "b": None, "c": None, "d": None}',
        mistake="statement_unmarked",
    ),
    Answer(
        "marcas como texto",
        'answer_experiment = {"a": "V", "b": "F", "c": "V", "d": "F"}',
        mistake="statement_not_bool",
    ),
]

RIGHT: dict[str, list[Answer]] = {
    "rloo_advantages": [
        Answer(
            "G/(G − 1) veces la ventaja de GRPO",
            """
def rloo_advantages(rewards):
    rewards = torch.as_tensor(rewards).double()
    G = rewards.shape[-1]
    return G / (G - 1) * (rewards - rewards.mean(dim=-1, keepdim=True))
""",
        ),
        Answer(
            "con un bucle sobre las respuestas",
            """
def rloo_advantages(rewards):
    rewards = torch.as_tensor(rewards, dtype=torch.float32)
    G = rewards.shape[-1]
    advantages = torch.empty_like(rewards)
    for i in range(G):
        others = torch.cat([rewards[..., :i], rewards[..., i + 1 :]], dim=-1)
        advantages[..., i] = rewards[..., i] - others.mean(dim=-1)
    return advantages
""",
        ),
        Answer(
            "en NumPy",
            """
def rloo_advantages(rewards):
    r = np.asarray(rewards, dtype=float)
    G = r.shape[-1]
    return r - (r.sum(axis=-1, keepdims=True) - r) / (G - 1)
""",
        ),
    ],
    "token_level_rewards": [
        Answer(
            "fila a fila",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    B, T = log_probs.shape
    rewards = torch.zeros(B, T)
    for i in range(B):
        valid = [t for t in range(T) if mask[i, t]]
        for t in valid:
            kl = log_probs[i, t].item() - ref_log_probs[i, t].item()
            rewards[i, t] = -kl_coef * kl
        rewards[i, valid[-1]] += float(scores[i])
    return rewards
""",
        ),
        Answer(
            "vectorizada con scatter_add",
            """
def token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef):
    mask = mask.bool()
    kl = (log_probs - ref_log_probs).detach()
    rewards = torch.where(mask, -kl_coef * kl, torch.zeros_like(kl))
    last = (mask.sum(dim=-1) - 1).long()[:, None]
    return rewards.scatter_add(1, last, scores.float()[:, None].to(rewards.dtype))
""",
        ),
    ],
    "token_gae": [
        Answer(
            "fila a fila, con floats de Python",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    B, T = rewards.shape
    advantages = torch.zeros(B, T)
    for i in range(B):
        n = int(mask[i].sum())
        running, next_value = 0.0, 0.0
        for t in reversed(range(n)):
            delta = float(rewards[i, t]) + gamma * next_value - float(values[i, t])
            running = delta + gamma * lam * running
            advantages[i, t] = running
            next_value = float(values[i, t])
    return advantages
""",
        ),
        Answer(
            "todas las filas a la vez, hacia atrás",
            """
def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    with torch.no_grad():
        valid = mask.float()
        B, T = rewards.shape
        advantages = torch.zeros(B, T)
        running = torch.zeros(B)
        next_value = torch.zeros(B)
        for t in range(T - 1, -1, -1):
            delta = rewards[:, t] + gamma * next_value - values[:, t]
            running = valid[:, t] * (delta + gamma * lam * running)
            next_value = valid[:, t] * values[:, t]
            advantages[:, t] = running
    return advantages
""",
        ),
    ],
    "estimate_pass_at_k": [
        Answer(
            "el producto de Chen et al. (2021)",
            """
def estimate_pass_at_k(n, c, k):
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
""",
        ),
        Answer(
            "con math.comb y división de enteros grandes",
            """
def estimate_pass_at_k(n, c, k):
    return 1 - math.comb(n - c, k) / math.comb(n, k)
""",
        ),
        Answer(
            "con un bucle",
            """
def estimate_pass_at_k(n, c, k):
    all_fail = 1.0
    for i in range(k):
        all_fail *= (n - c - i) / (n - i)
        if all_fail <= 0:
            return 1.0
    return 1.0 - all_fail
""",
        ),
    ],
    "exploit_flags": [
        Answer(
            "con un bucle",
            """
def exploit_flags(texts, problems):
    flags = []
    for text, (a, b) in zip(texts, problems):
        rewarded = buggy_verify(text, a, b) == 1
        correct = tl.verify(text, a, b) == 1
        flags.append(rewarded and not correct)
    return flags
""",
        ),
        Answer(
            "por comprensión, con enteros",
            """
def exploit_flags(texts, problems):
    return [
        int(buggy_verify(t, *p) > tl.verify(t, *p))
        for t, p in zip(texts, problems, strict=True)
    ]
""",
        ),
    ],
}

RIGHT[EXPERIMENT] = statements_right(MODULE, EXPERIMENT, "answer_experiment")
