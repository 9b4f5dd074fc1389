"""Banco de respuestas del módulo 07 · GRPO en 17 × 24.

Cada ejercicio tiene al menos cuatro errores típicos, con uno de cada clase que
aplica: modificar la entrada, una variante de la fórmula que coincide en casos
mal elegidos, un término con o sin gradiente donde no toca (en las pérdidas se
comprueban los gradientes) y un despiste de tipo (media precisión, enteros,
redondeos). En los ejercicios con una celda calificada por aspecto, ``fails``
dice qué celdas pierde cada error: las demás dan sus puntos.
"""

from tests.banks import Answer

MODULE = "07_grpo"

# Las dos funciones del ejercicio 1 van en la misma celda: cada respuesta
# errónea se equivoca en una y acierta en la otra.
_PATH_OK = """
def path_log_probability(step_probs):
    return float(np.sum(np.log(np.asarray(step_probs, dtype=float))))
"""
_COUNT_OK = """
def log10_num_responses(vocab_size, length):
    return length * math.log10(vocab_size)
"""
_PATH_CELL = ("path_log_probability_test",)
_COUNT_CELL = ("path_log_probability_test_count",)

WRONG: dict[str, list[Answer]] = {
    "path_log_probability": [
        Answer(
            "producto sin logaritmo y logaritmo natural en la cuenta",
            """
def path_log_probability(step_probs):
    return math.prod(float(p) for p in step_probs)


def log10_num_responses(vocab_size, length):
    return length * math.log(vocab_size)
""",
            mistake="path_probability",
        ),
        Answer(
            "logaritmo del producto",
            """
def path_log_probability(step_probs):
    return math.log(math.prod(float(p) for p in step_probs))
"""
            + _COUNT_OK,
            mistake="path_log_of_product",
            fails=_PATH_CELL,
        ),
        Answer(
            "modifica la lista que recibe",
            """
def path_log_probability(step_probs):
    for i in range(len(step_probs)):
        step_probs[i] = math.log(float(step_probs[i]))
    return float(sum(step_probs))
"""
            + _COUNT_OK,
            mistake="modified_input",
            fails=_PATH_CELL,
        ),
        Answer(
            "en media precisión",
            """
def path_log_probability(step_probs):
    steps = torch.as_tensor(np.asarray(step_probs, dtype=float), dtype=torch.float16)
    return float(steps.log().sum())
"""
            + _COUNT_OK,
            mistake="path_float16",
            fails=_PATH_CELL,
        ),
        Answer(
            "devuelve la probabilidad",
            """
def path_log_probability(step_probs):
    return float(np.prod(np.asarray(step_probs, dtype=float)))
"""
            + _COUNT_OK,
            mistake="path_probability",
            fails=_PATH_CELL,
        ),
        Answer(
            "log10 en el camino",
            """
def path_log_probability(step_probs):
    return float(np.sum(np.log10(np.asarray(step_probs, dtype=float))))
"""
            + _COUNT_OK,
            mistake="path_log10",
            fails=_PATH_CELL,
        ),
        Answer(
            "cuenta las cifras (coincide con potencias de 10)",
            _PATH_OK
            + """
def log10_num_responses(vocab_size, length):
    return len(str(vocab_size**length)) - 1
""",
            mistake="count_digits",
            fails=_COUNT_CELL,
        ),
        Answer(
            "redondea el exponente",
            _PATH_OK
            + """
def log10_num_responses(vocab_size, length):
    return round(length * math.log10(vocab_size), 1)
""",
            mistake="rounded",
            fails=_COUNT_CELL,
        ),
        Answer(
            "logaritmo natural en la cuenta",
            _PATH_OK
            + """
def log10_num_responses(vocab_size, length):
    return length * math.log(vocab_size)
""",
            mistake="count_natural_log",
            fails=_COUNT_CELL,
        ),
        Answer(
            "float desborda",
            _PATH_OK
            + """
def log10_num_responses(vocab_size, length):
    return math.log10(float(vocab_size) ** length)
""",
            mistake="count_float_overflow",
            fails=_COUNT_CELL,
        ),
        Answer(
            "logaritmo del producto con NumPy",
            """
def path_log_probability(step_probs):
    return float(np.log(np.prod(np.asarray(step_probs, dtype=float))))
"""
            + _COUNT_OK,
            mistake="path_log_of_product_numpy",
            fails=_PATH_CELL,
        ),
        Answer(
            "media de los logaritmos",
            """
def path_log_probability(step_probs):
    return float(np.mean(np.log(np.asarray(step_probs, dtype=float))))
"""
            + _COUNT_OK,
            mistake="path_mean_of_logs",
            fails=_PATH_CELL,
        ),
        Answer(
            "en bfloat16",
            """
def path_log_probability(step_probs):
    steps = torch.as_tensor(np.asarray(step_probs, dtype=float))
    return float(steps.to(torch.bfloat16).log().sum())
"""
            + _COUNT_OK,
            mistake="path_bfloat16",
            fails=_PATH_CELL,
        ),
        Answer(
            "la potencia al revés",
            _PATH_OK
            + """
def log10_num_responses(vocab_size, length):
    return vocab_size * math.log10(length)
""",
            mistake="count_reversed",
            fails=_COUNT_CELL,
        ),
        Answer(
            "multiplica el vocabulario por la longitud",
            _PATH_OK
            + """
def log10_num_responses(vocab_size, length):
    return math.log10(vocab_size * length)
""",
            mistake="count_product",
            fails=_COUNT_CELL,
        ),
    ],
    "verify": [
        Answer(
            "busca el producto en cualquier parte",
            """
def verify(text, a, b):
    return int(str(a * b) in text)
""",
            mistake="verify_substring",
        ),
        Answer(
            "acepta respuestas cortadas",
            """
def verify(text, a, b):
    final = text.replace(".", "").rsplit("=", 1)[-1]
    return int(final.isdigit() and int(final) == a * b)
""",
            mistake="verify_no_end_check",
        ),
        Answer(
            "lanza excepciones",
            """
def verify(text, a, b):
    body = text.split(".")[0]
    return int(int(body.rsplit("=", 1)[1]) == a * b)
""",
            mistake="verify_raises",
            fails=("verify_test_malformed",),
        ),
        Answer(
            "el número tras el primer «=»",
            """
def verify(text, a, b):
    if "." not in text or "=" not in text:
        return 0
    first = text.split(".")[0].split("=")[1].split("+")[0]
    return int(first.isdigit() and int(first) == a * b)
""",
            # y lanza IndexError si antes del primer «.» no hay «=»
            mistake="verify_first_equals",
        ),
        Answer(
            "se queda con el punto final",
            """
def verify(text, a, b):
    final = text.rsplit("=", 1)[-1]
    return int(final.isdigit() and int(final) == a * b)
""",
            mistake="verify_keeps_dot",
        ),
        Answer(
            "corta en text.find('.') sin mirar si hay punto",
            """
def verify(text, a, b):
    body = text[: text.find(".")]
    if "=" not in body:
        return 0
    final = body.rsplit("=", 1)[1]
    return int(final.isascii() and final.isdigit() and int(final) == a * b)
""",
            mistake="verify_find_without_check",
            fails=("verify_test_malformed",),
        ),
        Answer(
            "isdigit() acepta «²» y int() lanza",
            """
def verify(text, a, b):
    end = text.find(".")
    if end < 0 or "=" not in text[:end]:
        return 0
    final = text[:end].rsplit("=", 1)[1]
    return int(final.isdigit() and int(final) == a * b)
""",
            mistake="verify_isdigit",
            fails=("verify_test_malformed",),
        ),
        Answer(
            "exige que el texto acabe en punto (lo de detrás sí cuenta)",
            """
def verify(text, a, b):
    if not text.endswith(".") or "=" not in text:
        return 0
    final = text[:-1].rsplit("=", 1)[1]
    return int(final.isascii() and final.isdigit() and int(final) == a * b)
""",
            mistake="verify_requires_final_dot",
            fails=("verify_test",),
        ),
        Answer(
            "quita el punto del final sin comprobar que estaba",
            """
def verify(text, a, b):
    final = text.rsplit("=", 1)[-1].rstrip(".")
    return int(final.isascii() and final.isdigit() and int(final) == a * b)
""",
            mistake="verify_strips_end",
        ),
        Answer(
            "el trozo tras el primer «=», hasta el punto",
            """
def verify(text, a, b):
    end = text.find(".")
    if end < 0 or "=" not in text[:end]:
        return 0
    final = text[:end].split("=")[1]
    return int(final.isascii() and final.isdigit() and int(final) == a * b)
""",
            mistake="verify_first_equals",
            fails=("verify_test",),
        ),
    ],
    "group_advantages": [
        Answer(
            "media de todo el lote",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    advantages = rewards - rewards.mean()
    if std_normalize:
        advantages = advantages / (rewards.std(unbiased=False) + eps)
    return advantages
""",
            mistake="advantages_batch_mean",
        ),
        Answer(
            "división por una desviación nula",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    advantages = rewards - rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        advantages = advantages / rewards.std(dim=-1, unbiased=False, keepdim=True)
    return advantages
""",
            mistake="advantages_no_eps",
            fails=("group_advantages_std",),
        ),
        Answer(
            "sin keepdim",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    centred = rewards - rewards.mean(dim=-1)
    if std_normalize:
        centred = centred / (rewards.std(dim=-1, unbiased=False) + eps)
    return centred
""",
            mistake="broadcast",
        ),
        Answer(
            "el signo",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    advantages = rewards.mean(dim=-1, keepdim=True) - rewards
    if std_normalize:
        std = rewards.std(dim=-1, unbiased=False, keepdim=True)
        advantages = advantages / (std + eps)
    return advantages
""",
            mistake="advantages_sign",
        ),
        Answer(
            "media sobre el eje equivocado",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    advantages = rewards - rewards.mean(dim=0, keepdim=True)
    if std_normalize:
        std = rewards.std(dim=0, unbiased=False, keepdim=True)
        advantages = advantages / (std + eps)
    return advantages
""",
            mistake="advantages_wrong_axis",
        ),
        Answer(
            "desviación muestral sin eps",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    advantages = rewards - rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        advantages = advantages / rewards.std(dim=-1, keepdim=True)
    return advantages
""",
            # Los números del mensaje son los de su convención (la muestral):
            # solo falla el grupo unánime, no parece que falle la desviación.
            mistake="advantages_no_eps_unbiased",
            fails=("group_advantages_std",),
        ),
        Answer(
            "resta la media en su sitio",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    std = rewards.std(dim=-1, unbiased=False, keepdim=True)
    rewards -= rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        return rewards / (std + eps)
    return rewards
""",
            mistake="modified_input",
        ),
        Answer(
            "redondea a dos decimales (coincide en la tabla de 4)",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    advantages = rewards - rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        std = rewards.std(dim=-1, unbiased=False, keepdim=True)
        advantages = advantages / (std + eps)
    return torch.round(advantages, decimals=2)
""",
            mistake="rounded",
        ),
        Answer(
            "nunca divide por la desviación",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    return rewards - rewards.mean(dim=-1, keepdim=True)
""",
            mistake="advantages_never_std",
            fails=("group_advantages_std",),
        ),
        Answer(
            "siempre divide por la desviación",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    std = rewards.std(dim=-1, unbiased=False, keepdim=True)
    return (rewards - rewards.mean(dim=-1, keepdim=True)) / (std + eps)
""",
            mistake="advantages_always_std",
            fails=("group_advantages_pencil",),
        ),
        Answer(
            "pregunta si σ == 0 en lugar de sumar eps",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    advantages = rewards - rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        std = rewards.std(dim=-1, unbiased=False, keepdim=True)
        scaled = advantages / std
        advantages = torch.where(std == 0, torch.zeros_like(advantages), scaled)
    return advantages
""",
            mistake="advantages_zero_std_test",
            fails=("group_advantages_std",),
        ),
    ],
    "grpo_loss": [
        Answer(
            "cuenta el relleno",
            """
def grpo_loss(log_probs, mask, advantages):
    return -(advantages.detach() * log_probs.sum(dim=-1)).mean()
""",
            mistake="loss_no_mask",
        ),
        Answer(
            "sin el signo menos",
            """
def grpo_loss(log_probs, mask, advantages):
    return (advantages.detach() * (log_probs * mask).sum(dim=-1)).mean()
""",
            mistake="loss_sign",
        ),
        Answer(
            "suma sobre el eje equivocado",
            """
def grpo_loss(log_probs, mask, advantages):
    return -(advantages.detach() * (log_probs * mask).sum(dim=0)).mean()
""",
            mistake="loss_wrong_axis",
        ),
        Answer(
            "la ventaja lleva gradiente",
            """
def grpo_loss(log_probs, mask, advantages):
    return -(advantages * (log_probs * mask).sum(dim=-1)).mean()
""",
            mistake="loss_advantage_has_gradient",
            fails=("grpo_loss_test_grad",),
        ),
        Answer(
            "devuelve un float (.item())",
            """
def grpo_loss(log_probs, mask, advantages):
    return -(advantages * (log_probs * mask).sum(dim=-1)).mean().item()
""",
            mistake="loss_without_gradient",
            fails=("grpo_loss_test_grad",),
        ),
        Answer(
            "pone a cero el relleno en su sitio",
            """
def grpo_loss(log_probs, mask, advantages):
    log_probs[mask == 0] = 0.0
    return -(advantages.detach() * log_probs.sum(dim=-1)).mean()
""",
            mistake="modified_input",
        ),
        Answer(
            "media por token dentro de cada respuesta",
            """
def grpo_loss(log_probs, mask, advantages):
    per_token = (log_probs * mask).sum(dim=-1) / mask.sum(dim=-1)
    return -(advantages.detach() * per_token).mean()
""",
            mistake="loss_per_token_mean",
        ),
        Answer(
            "media sobre las B · T casillas",
            """
def grpo_loss(log_probs, mask, advantages):
    return -(advantages.detach()[:, None] * log_probs * mask).mean()
""",
            mistake="loss_mean_over_cells",
        ),
        Answer(
            "suma sobre las respuestas",
            """
def grpo_loss(log_probs, mask, advantages):
    return -(advantages.detach() * (log_probs * mask).sum(dim=-1)).sum()
""",
            mistake="loss_sum_not_mean",
        ),
        Answer(
            "sin la media: un término por respuesta",
            """
def grpo_loss(log_probs, mask, advantages):
    return -advantages.detach() * (log_probs * mask).sum(dim=-1)
""",
            mistake="loss_not_scalar",
        ),
        Answer(
            "copia sin grafo y requires_grad_ después",
            """
def grpo_loss(log_probs, mask, advantages):
    kept = log_probs.detach().clone()
    kept[mask == 0] = 0.0
    kept.requires_grad_(True)
    return -(advantages.detach() * kept.sum(dim=-1)).mean()
""",
            mistake="loss_wrong_gradient",
            fails=("grpo_loss_test_grad",),
        ),
    ],
    "logit_push": [
        Answer(
            "el signo",
            """
def logit_push(logits, token, advantage=1.0):
    probs = torch.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    one_hot = torch.zeros_like(probs)
    one_hot[token] = 1.0
    return advantage * (probs - one_hot)
""",
            mistake="push_sign",
        ),
        Answer(
            "solo el logit propio",
            """
def logit_push(logits, token, advantage=1.0):
    probs = torch.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    push = torch.zeros_like(probs)
    push[token] = advantage * (1 - probs[token])
    return push
""",
            mistake="push_own_only",
        ),
        Answer(
            "sin la ventaja",
            """
def logit_push(logits, token, advantage=1.0):
    probs = torch.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    one_hot = torch.zeros_like(probs)
    one_hot[token] = 1.0
    return one_hot - probs
""",
            mistake="push_no_advantage",
        ),
        Answer(
            "estabiliza restando el máximo en su sitio",
            """
def logit_push(logits, token, advantage=1.0):
    logits -= logits.max()
    probs = torch.softmax(logits.double(), dim=-1)
    one_hot = torch.zeros_like(probs)
    one_hot[token] = 1.0
    return advantage * (one_hot - probs)
""",
            mistake="modified_input",
        ),
        Answer(
            "redondea a dos decimales",
            """
def logit_push(logits, token, advantage=1.0):
    probs = torch.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    one_hot = torch.zeros_like(probs)
    one_hot[token] = 1.0
    return torch.round(advantage * (one_hot - probs), decimals=2)
""",
            mistake="rounded",
        ),
        Answer(
            "p en lugar de 1 − p en el logit propio",
            """
def logit_push(logits, token, advantage=1.0):
    probs = torch.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    push = -advantage * probs
    push[token] = advantage * probs[token]
    return push
""",
            mistake="push_p_not_one_minus_p",
        ),
        Answer(
            "deriva la probabilidad y no su logaritmo",
            """
def logit_push(logits, token, advantage=1.0):
    probs = torch.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    one_hot = torch.zeros_like(probs)
    one_hot[token] = 1.0
    return advantage * probs[token] * (one_hot - probs)
""",
            mistake="push_probability_gradient",
        ),
    ],
    "grpo_update": [
        Answer(
            "enunciados con .repeat y problemas por bloques",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat(group_size, 1)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(samples.completions, rows)
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_tiled_prompts",
        ),
        Answer(
            "recorta la norma del gradiente",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(samples.completions, rows)
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_clipped_gradient",
        ),
        Answer(
            "devuelve un tensor de 0 dimensiones, no un float",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(samples.completions, rows)
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean()
""",
            mistake="not_python_number",
        ),
        Answer(
            "copias en mosaico (coincide si todos los problemas son iguales)",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat(group_size, 1)
    samples = tl.sample(model, prompts, generator=generator)
    rewards = tl.rewards_for(samples.completions, list(problems) * group_size)
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_tiled_groups",
        ),
        Answer(
            "sin poner los gradientes a cero (la primera vez coincide)",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(samples.completions, rows)
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    grpo_loss(log_probs, samples.mask, advantages).backward()
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_no_zero_grad",
            fails=("grpo_update_test_steps",),
        ),
        Answer(
            "log-probabilidades del muestreo, sin gradiente",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(samples.completions, rows)
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    loss = grpo_loss(samples.log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_log_probs_without_gradient",
        ),
        Answer(
            "media de todo el lote",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(samples.completions, rows)
    advantages = rewards - rewards.mean()
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_batch_mean",
        ),
        Answer(
            "muestrea problema a problema",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    parts = []
    for problem in problems:
        prompts = tl.encode_prompts([problem] * group_size)
        parts.append(tl.sample(model, prompts, generator=generator))
    sequences = torch.cat([part.sequences for part in parts])
    completions = torch.cat([part.completions for part in parts])
    mask = torch.cat([part.mask for part in parts])
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(completions, rows)
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    log_probs = tl.token_log_probs(model, sequences, parts[0].prompt_len)
    loss = grpo_loss(log_probs, mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_sampled_per_problem",
        ),
        Answer(
            "reescribe la lista de problemas",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    rows = problems
    rows[:] = [p for p in problems for _ in range(group_size)]
    samples = tl.sample(model, tl.encode_prompts(rows), generator=generator)
    rewards = tl.rewards_for(samples.completions, rows)
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_modifies_problems",
        ),
        Answer(
            "recompensas de enteros",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    texts = tl.tokenizer.decode_batch(samples.completions)
    rewards = torch.tensor([tl.verify(t, a, b) for t, (a, b) in zip(texts, rows)])
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.float().mean().item()
""",
            mistake="update_integer_rewards",
        ),
        Answer(
            "devuelve la pérdida y no la recompensa",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(samples.completions, rows)
    advantages = group_advantages(rewards.view(-1, group_size)).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
""",
            mistake="update_wrong_reward",
        ),
        Answer(
            "agrupa con view(G, -1)",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(samples.completions, rows)
    advantages = group_advantages(rewards.view(group_size, -1)).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_transposed_groups",
        ),
        Answer(
            "divide también por la desviación típica",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    prompts = tl.encode_prompts(problems).repeat_interleave(group_size, dim=0)
    samples = tl.sample(model, prompts, generator=generator)
    rows = [p for p in problems for _ in range(group_size)]
    rewards = tl.rewards_for(samples.completions, rows)
    grouped = rewards.view(-1, group_size)
    advantages = group_advantages(grouped, std_normalize=True).view(-1)
    log_probs = tl.token_log_probs(model, samples.sequences, samples.prompt_len)
    loss = grpo_loss(log_probs, samples.mask, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()
""",
            mistake="update_wrong_parameters",
        ),
    ],
    "truncated_importance_weights": [
        Answer(
            "cociente invertido y con gradiente",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    return torch.exp(sampler_log_probs - trainer_log_probs).clamp(max=cap) * mask
""",
            mistake="tis_ratio_inverted",
        ),
        Answer(
            "cociente invertido",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    log_ratio = sampler_log_probs.detach() - trainer_log_probs.detach()
    return torch.exp(log_ratio).clamp(max=cap) * mask
""",
            mistake="tis_ratio_inverted",
            fails=("truncated_importance_weights_test",),
        ),
        Answer(
            "sin truncar",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    log_ratio = trainer_log_probs.detach() - sampler_log_probs.detach()
    return torch.exp(log_ratio) * mask
""",
            mistake="tis_not_truncated",
            fails=("truncated_importance_weights_test",),
        ),
        Answer(
            "relleno con peso 1",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    log_ratio = trainer_log_probs.detach() - sampler_log_probs.detach()
    return torch.exp(log_ratio).clamp(max=cap)
""",
            mistake="tis_no_mask",
            fails=("truncated_importance_weights_test",),
        ),
        Answer(
            "con gradiente",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    return torch.exp(trainer_log_probs - sampler_log_probs).clamp(max=cap) * mask
""",
            mistake="tis_weights_have_gradient",
            fails=("truncated_importance_weights_test_grad",),
        ),
        Answer(
            "multiplica la máscara en su sitio",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    ratio = torch.exp(trainer_log_probs.detach() - sampler_log_probs.detach())
    mask *= ratio.clamp(max=cap)
    return mask
""",
            mistake="modified_input",
            fails=("truncated_importance_weights_test",),
        ),
        Answer(
            "tope convertido a entero",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    ratio = torch.exp(trainer_log_probs.detach() - sampler_log_probs.detach())
    return ratio.clamp(max=int(cap)) * mask
""",
            mistake="tis_integer_cap",
            fails=("truncated_importance_weights_test",),
        ),
        Answer(
            "trunca también por abajo",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    log_ratio = trainer_log_probs.detach() - sampler_log_probs.detach()
    return torch.exp(log_ratio).clamp(1 / cap, cap) * mask
""",
            mistake="tis_clamped_below",
            fails=("truncated_importance_weights_test",),
        ),
        Answer(
            "el log-cociente sin la exponencial",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    log_ratio = trainer_log_probs.detach() - sampler_log_probs.detach()
    return log_ratio.clamp(max=cap) * mask
""",
            mistake="tis_log_ratio",
            fails=("truncated_importance_weights_test",),
        ),
        Answer(
            "con NumPy, que no acepta tensores con gradiente",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    log_ratio = trainer_log_probs.numpy() - sampler_log_probs.numpy()
    return torch.from_numpy(np.minimum(np.exp(log_ratio), cap)) * mask
""",
            mistake="raises_with_gradient",
            fails=("truncated_importance_weights_test_grad",),
        ),
    ],
    "kl_penalty": [
        Answer(
            "cociente al revés",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = log_probs - ref_log_probs.detach()
    return (torch.exp(log_rho) - log_rho - 1) * mask
""",
            mistake="kl_ratio_inverted",
        ),
        Answer(
            "k1 en lugar de k3",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    return (log_probs - ref_log_probs.detach()) * mask
""",
            mistake="kl_k1",
        ),
        Answer(
            "sin el −1",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs.detach() - log_probs
    return (torch.exp(log_rho) - log_rho) * mask
""",
            mistake="kl_missing_minus_one",
            fails=("kl_penalty_test",),
        ),
        Answer(
            "sin máscara",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs.detach() - log_probs
    return torch.exp(log_rho) - log_rho - 1
""",
            mistake="kl_no_mask",
        ),
        Answer(
            "gradiente hacia la referencia",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs - log_probs
    return (torch.exp(log_rho) - log_rho - 1) * mask
""",
            mistake="kl_gradient_to_reference",
            fails=("kl_penalty_test_grad",),
        ),
        Answer(
            "sin gradiente",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs.detach() - log_probs.detach()
    return (torch.exp(log_rho) - log_rho - 1) * mask
""",
            mistake="kl_without_gradient",
            fails=("kl_penalty_test_grad",),
        ),
        Answer(
            "pone a cero el relleno de las entradas en su sitio",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_probs[mask == 0] = 0.0
    ref_log_probs[mask == 0] = 0.0
    log_rho = ref_log_probs.detach() - log_probs
    return torch.exp(log_rho) - log_rho - 1
""",
            mistake="modified_input",
        ),
        Answer(
            "k2 en lugar de k3",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs.detach() - log_probs
    return 0.5 * log_rho**2 * mask
""",
            mistake="kl_k2",
        ),
        Answer(
            "suma el logaritmo",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs.detach() - log_probs
    return (torch.exp(log_rho) + log_rho - 1) * mask
""",
            mistake="kl_log_added",
        ),
        Answer(
            "ρ sin gradiente, como el peso del ejercicio 7",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs.detach() - log_probs
    rho = torch.exp(log_rho).detach()
    return (rho - log_rho - 1) * mask
""",
            mistake="kl_wrong_gradient",
            fails=("kl_penalty_test_grad",),
        ),
    ],
    "normalize_loss": [
        Answer(
            "aplica la máscara en su sitio",
            """
def normalize_loss(per_token_loss, mask, normalization):
    per_token_loss *= mask
    if normalization == "grpo":
        return (per_token_loss.sum(dim=-1) / mask.sum(dim=-1)).mean()
    if normalization == "dr_grpo":
        return per_token_loss.sum(dim=-1).mean()
    return per_token_loss.sum() / mask.sum()
""",
            mistake="modified_input",
        ),
        Answer(
            "grpo y dr_grpo cambiados",
            """
def normalize_loss(per_token_loss, mask, normalization):
    masked = per_token_loss * mask
    if normalization == "grpo":
        return masked.sum(dim=-1).mean()
    if normalization == "dr_grpo":
        return (masked.sum(dim=-1) / mask.sum(dim=-1)).mean()
    return masked.sum() / mask.sum()
""",
            mistake="norm_swapped",
            fails=("normalize_loss_test", "normalize_loss_test_dr_grpo"),
        ),
        Answer(
            "grpo entre la longitud con relleno",
            """
def normalize_loss(per_token_loss, mask, normalization):
    masked = per_token_loss * mask
    if normalization == "grpo":
        return (masked.sum(dim=-1) / mask.shape[-1]).mean()
    if normalization == "dr_grpo":
        return masked.sum(dim=-1).mean()
    return masked.sum() / mask.sum()
""",
            mistake="norm_grpo_padded_length",
            fails=("normalize_loss_test",),
        ),
        Answer(
            "dr_grpo también divide por la longitud",
            """
def normalize_loss(per_token_loss, mask, normalization):
    masked = per_token_loss * mask
    if normalization in ("grpo", "dr_grpo"):
        return (masked.sum(dim=-1) / mask.sum(dim=-1)).mean()
    return masked.sum() / mask.sum()
""",
            mistake="norm_dr_grpo_divides_by_length",
            fails=("normalize_loss_test_dr_grpo",),
        ),
        Answer(
            "token respuesta a respuesta",
            """
def normalize_loss(per_token_loss, mask, normalization):
    masked = per_token_loss * mask
    if normalization == "dr_grpo":
        return masked.sum(dim=-1).mean()
    return (masked.sum(dim=-1) / mask.sum(dim=-1)).mean()
""",
            mistake="norm_token_per_response",
            fails=("normalize_loss_test_token",),
        ),
        Answer(
            "sin máscara",
            """
def normalize_loss(per_token_loss, mask, normalization):
    if normalization == "grpo":
        return per_token_loss.mean(dim=-1).mean()
    if normalization == "dr_grpo":
        return (per_token_loss * mask).sum(dim=-1).mean()
    return (per_token_loss * mask).sum() / mask.sum()
""",
            mistake="norm_grpo_counts_padding",
            fails=("normalize_loss_test",),
        ),
        Answer(
            "token con división entera",
            """
def normalize_loss(per_token_loss, mask, normalization):
    masked = per_token_loss * mask
    if normalization == "grpo":
        return (masked.sum(dim=-1) / mask.sum(dim=-1)).mean()
    if normalization == "dr_grpo":
        return masked.sum(dim=-1).mean()
    return masked.sum() // mask.sum()
""",
            mistake="norm_token_floor_division",
            fails=("normalize_loss_test_token",),
        ),
        Answer(
            "dr_grpo suma sin dividir",
            """
def normalize_loss(per_token_loss, mask, normalization):
    masked = per_token_loss * mask
    if normalization == "grpo":
        return (masked.sum(dim=-1) / mask.sum(dim=-1)).mean()
    if normalization == "dr_grpo":
        return masked.sum()
    return masked.sum() / mask.sum()
""",
            mistake="norm_dr_grpo_sum",
            fails=("normalize_loss_test_dr_grpo",),
        ),
        Answer(
            "token cuenta el relleno",
            """
def normalize_loss(per_token_loss, mask, normalization):
    masked = per_token_loss * mask
    if normalization == "grpo":
        return (masked.sum(dim=-1) / mask.sum(dim=-1)).mean()
    if normalization == "dr_grpo":
        return masked.sum(dim=-1).mean()
    return per_token_loss.mean()
""",
            mistake="norm_token_counts_padding",
            fails=("normalize_loss_test_token",),
        ),
        Answer(
            "devuelve un float",
            """
def normalize_loss(per_token_loss, mask, normalization):
    masked = per_token_loss * mask
    if normalization == "grpo":
        return float((masked.sum(dim=-1) / mask.sum(dim=-1)).mean())
    if normalization == "dr_grpo":
        return float(masked.sum(dim=-1).mean())
    return float(masked.sum() / mask.sum())
""",
            mistake="normalize_without_gradient",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "path_log_probability": [
        Answer(
            "bucles con math",
            """
def path_log_probability(step_probs):
    total = 0.0
    for p in step_probs:
        total += math.log(float(p))
    return total


def log10_num_responses(vocab_size, length):
    return math.log10(vocab_size) * length
""",
        ),
        Answer(
            "en float32, y el entero exacto de Python",
            """
def path_log_probability(step_probs):
    return torch.as_tensor(step_probs, dtype=torch.float32).log().sum()


def log10_num_responses(vocab_size, length):
    return math.log10(vocab_size**length)
""",
        ),
        Answer(
            "NumPy",
            """
def path_log_probability(step_probs):
    return np.log(np.asarray(step_probs, dtype=np.float64)).sum()


def log10_num_responses(vocab_size, length):
    return float(np.log10(vocab_size) * length)
""",
        ),
    ],
    "verify": [
        Answer(
            "con una expresión regular y bool",
            """
import re


def verify(text, a, b):
    if "." not in text:
        return False
    match = re.search(r"=([0-9]+)$", text.split(".")[0])
    return match is not None and int(match.group(1)) == a * b
""",
        ),
        Answer(
            "con try/except",
            """
def verify(text, a, b):
    try:
        body, _ = text.split(".", 1)
        return int(int(body.rsplit("=", 1)[1]) == a * b) if "=" in body else 0
    except ValueError:
        return 0
""",
        ),
    ],
    "group_advantages": [
        Answer(
            "bucle por grupos",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    out = torch.zeros_like(rewards)
    for i, group in enumerate(rewards):
        mean = group.mean()
        out[i] = group - mean
        if std_normalize:
            std = ((group - mean) ** 2).mean().sqrt()
            out[i] = out[i] / (std + eps)
    return out
""",
        ),
        Answer(
            "desviación muestral, como torch.std por defecto y TRL",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    advantages = rewards - rewards.mean(dim=-1, keepdim=True)
    if std_normalize:
        advantages = advantages / (rewards.std(dim=-1, keepdim=True) + eps)
    return advantages
""",
        ),
        Answer(
            "NumPy",
            """
def group_advantages(rewards, std_normalize=False, eps=1e-6):
    r = np.asarray(rewards, dtype=np.float64)
    advantages = r - r.mean(axis=-1, keepdims=True)
    if std_normalize:
        advantages = advantages / (r.std(axis=-1, keepdims=True) + eps)
    return advantages
""",
        ),
    ],
    "grpo_loss": [
        Answer(
            "bucle por respuestas",
            """
def grpo_loss(log_probs, mask, advantages):
    terms = []
    for i in range(log_probs.shape[0]):
        terms.append(advantages[i].item() * (log_probs[i] * mask[i]).sum())
    return -torch.stack(terms).mean()
""",
        ),
        Answer(
            "torch.where y einsum",
            """
def grpo_loss(log_probs, mask, advantages):
    kept = torch.where(mask.bool(), log_probs, torch.zeros_like(log_probs))
    return -torch.einsum("b,bt->", advantages.detach(), kept) / log_probs.shape[0]
""",
        ),
    ],
    "logit_push": [
        Answer(
            "con autograd",
            """
def logit_push(logits, token, advantage=1.0):
    z = torch.as_tensor(logits, dtype=torch.float64).clone().requires_grad_(True)
    loss = -advantage * torch.log_softmax(z, dim=-1)[token]
    loss.backward()
    return -z.grad
""",
        ),
        Answer(
            "NumPy",
            """
def logit_push(logits, token, advantage=1.0):
    z = np.asarray(logits, dtype=np.float64)
    p = np.exp(z - z.max())
    p = p / p.sum()
    return advantage * (np.eye(len(z))[token] - p)
""",
        ),
        Answer(
            "en float32, con F.one_hot",
            """
def logit_push(logits, token, advantage=1.0):
    probs = torch.softmax(logits.float(), dim=-1)
    one_hot = torch.nn.functional.one_hot(torch.tensor(token), len(probs))
    return advantage * (one_hot - probs)
""",
        ),
    ],
    "grpo_update": [
        Answer(
            "lista de filas y reshape",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    # Etapa 1: muestrear, G copias seguidas de cada problema
    rows = []
    for problem in problems:
        rows.extend([problem] * group_size)
    batch = tl.sample(model, tl.encode_prompts(rows), generator=generator)
    # Etapa 2: puntuar
    rewards = tl.rewards_for(batch.completions, rows)
    # Etapa 3: ventajas, grupo a grupo
    grouped = rewards.reshape(len(problems), group_size)
    advantages = group_advantages(grouped).reshape(-1)
    # Etapa 4: actualizar
    optimizer.zero_grad()
    log_probs = tl.token_log_probs(model, batch.sequences, batch.prompt_len)
    grpo_loss(log_probs, batch.mask, advantages).backward()
    optimizer.step()
    return float(rewards.mean())
""",
        ),
        Answer(
            "todo a mano, con zero_grad al final",
            """
def grpo_update(model, optimizer, problems, group_size, generator):
    G = group_size
    prompts = tl.encode_prompts(problems).repeat_interleave(G, dim=0)
    out = tl.sample(model, prompts, generator=generator)
    rewards = tl.rewards_for(out.completions, [p for p in problems for _ in range(G)])
    grouped = rewards.view(len(problems), G)
    advantages = (grouped - grouped.mean(dim=1, keepdim=True)).flatten()
    log_probs = tl.token_log_probs(model, out.sequences, out.prompt_len)
    per_answer = (log_probs * out.mask).sum(dim=1)
    loss = -(advantages * per_answer).sum() / len(per_answer)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return rewards.mean().item()
""",
        ),
    ],
    "truncated_importance_weights": [
        Answer(
            "torch.minimum y where",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    with torch.no_grad():
        ratio = torch.exp(trainer_log_probs - sampler_log_probs)
        weights = torch.minimum(ratio, torch.tensor(float(cap)))
        return torch.where(mask.bool(), weights, torch.zeros_like(weights))
""",
        ),
        Answer(
            "cociente de probabilidades",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    ratio = trainer_log_probs.detach().exp() / sampler_log_probs.detach().exp()
    return ratio.clamp(max=cap) * mask
""",
        ),
    ],
    "kl_penalty": [
        Answer(
            "con el cociente y where",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    rho = torch.exp(ref_log_probs.detach() - log_probs)
    k3 = rho - torch.log(rho) - 1
    return torch.where(mask.bool(), k3, torch.zeros_like(k3))
""",
        ),
        Answer(
            "con expm1",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = (ref_log_probs.detach() - log_probs) * mask
    return torch.expm1(log_rho) - log_rho
""",
        ),
    ],
    "normalize_loss": [
        Answer(
            "con un bucle por respuestas",
            """
def normalize_loss(per_token_loss, mask, normalization):
    sums, lengths = [], []
    for row, m in zip(per_token_loss, mask):
        sums.append((row * m).sum())
        lengths.append(m.sum())
    sums, lengths = torch.stack(sums), torch.stack(lengths)
    if normalization == "grpo":
        return (sums / lengths).mean()
    if normalization == "dr_grpo":
        return sums.sum() / len(sums)
    return sums.sum() / lengths.sum()
""",
        ),
        Answer(
            "con where y un diccionario",
            """
def normalize_loss(per_token_loss, mask, normalization):
    kept = torch.where(mask.bool(), per_token_loss, torch.zeros_like(per_token_loss))
    per_response = kept.sum(dim=-1)
    B = per_token_loss.shape[0]
    options = {
        "grpo": lambda: (per_response / mask.sum(dim=-1)).mean(),
        "dr_grpo": lambda: per_response.sum() / B,
        "token": lambda: kept.sum() / mask.sum(),
    }
    return options[normalization]()
""",
        ),
    ],
}
