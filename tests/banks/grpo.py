"""Banco de respuestas del módulo 07 · GRPO en 17 × 24."""

from tests.banks import Answer

MODULE = "07_grpo"

WRONG: dict[str, list[Answer]] = {
    "path_probability": [
        Answer(
            "suma en vez de producto",
            """
def path_probability(step_probs):
    return float(sum(step_probs))
""",
            "Sumaste las probabilidades",
        ),
        Answer(
            "log-probabilidad sin exp",
            """
def path_probability(step_probs):
    return float(np.log(np.asarray(step_probs)).sum())
""",
            "te falta deshacer el logaritmo",
        ),
        Answer(
            "media de los pasos",
            """
def path_probability(step_probs):
    return float(np.mean(step_probs))
""",
            "Promediaste",
        ),
    ],
    "log10_num_responses": [
        Answer(
            "logaritmo natural",
            """
def log10_num_responses(vocab_size, length):
    return length * math.log(vocab_size)
""",
            "logaritmo natural",
        ),
        Answer(
            "al revés",
            """
def log10_num_responses(vocab_size, length):
    return vocab_size * math.log10(length)
""",
            "al revés",
        ),
        Answer(
            "float desborda",
            """
def log10_num_responses(vocab_size, length):
    return math.log10(float(vocab_size) ** length)
""",
            "desborda",
        ),
    ],
    "verify": [
        Answer(
            "busca el producto en cualquier parte",
            """
def verify(text, a, b):
    return int(str(a * b) in text)
""",
            "en cualquier parte",
        ),
        Answer(
            "acepta respuestas cortadas",
            """
def verify(text, a, b):
    final = text.replace(".", "").rsplit("=", 1)[-1]
    return int(final.isdigit() and int(final) == a * b)
""",
            "cortada",
        ),
        Answer(
            "lanza excepciones",
            """
def verify(text, a, b):
    body = text.split(".")[0]
    return int(int(body.rsplit("=", 1)[1]) == a * b)
""",
            "nunca debe lanzar",
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
            "todo el lote",
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
            "0/0",
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
            "signo",
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
            "eje equivocado",
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
            "0/0",
        ),
    ],
    "grpo_loss": [
        Answer(
            "cuenta el relleno",
            """
def grpo_loss(log_probs, mask, advantages):
    return -(advantages.detach() * log_probs.sum(dim=-1)).mean()
""",
            "relleno",
        ),
        Answer(
            "sin el signo menos",
            """
def grpo_loss(log_probs, mask, advantages):
    return (advantages.detach() * (log_probs * mask).sum(dim=-1)).mean()
""",
            "signo",
        ),
        Answer(
            "suma sobre el eje equivocado",
            """
def grpo_loss(log_probs, mask, advantages):
    return -(advantages.detach() * (log_probs * mask).sum(dim=0)).mean()
""",
            "eje equivocado",
        ),
        Answer(
            "la ventaja lleva gradiente",
            """
def grpo_loss(log_probs, mask, advantages):
    return -(advantages * (log_probs * mask).sum(dim=-1)).mean()
""",
            "La ventaja lleva gradiente",
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
            "El signo",
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
            "Solo moviste el logit",
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
            "Olvidaste la ventaja",
        ),
    ],
    "truncated_importance_weights": [
        Answer(
            "cociente invertido",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    log_ratio = sampler_log_probs.detach() - trainer_log_probs.detach()
    return torch.exp(log_ratio).clamp(max=cap) * mask
""",
            "al revés",
        ),
        Answer(
            "sin truncar",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    log_ratio = trainer_log_probs.detach() - sampler_log_probs.detach()
    return torch.exp(log_ratio) * mask
""",
            "No truncaste",
        ),
        Answer(
            "relleno con peso 1",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    log_ratio = trainer_log_probs.detach() - sampler_log_probs.detach()
    return torch.exp(log_ratio).clamp(max=cap)
""",
            "relleno",
        ),
        Answer(
            "con gradiente",
            """
def truncated_importance_weights(trainer_log_probs, sampler_log_probs, mask, cap):
    return torch.exp(trainer_log_probs - sampler_log_probs).clamp(max=cap) * mask
""",
            "llevan gradiente",
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
            "al revés",
        ),
        Answer(
            "k1 en lugar de k3",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    return (log_probs - ref_log_probs.detach()) * mask
""",
            "Eso es k1",
        ),
        Answer(
            "sin el −1",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs.detach() - log_probs
    return (torch.exp(log_rho) - log_rho) * mask
""",
            "Te falta el −1",
        ),
        Answer(
            "sin máscara",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs.detach() - log_probs
    return torch.exp(log_rho) - log_rho - 1
""",
            "El relleno no es parte",
        ),
        Answer(
            "gradiente hacia la referencia",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs - log_probs
    return (torch.exp(log_rho) - log_rho - 1) * mask
""",
            "congelado",
        ),
        Answer(
            "sin gradiente",
            """
def kl_penalty(log_probs, ref_log_probs, mask):
    log_rho = ref_log_probs.detach() - log_probs.detach()
    return (torch.exp(log_rho) - log_rho - 1) * mask
""",
            "no tiene gradiente",
        ),
    ],
    "normalize_loss": [
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
            "cambiados",
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
            "dividiste entre T",
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
            "no se divide entre la longitud",
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
            "todos los tokens del lote pesan igual",
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
            "contaste el relleno",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "path_probability": [
        Answer(
            "bucle",
            """
def path_probability(step_probs):
    total = 1.0
    for p in step_probs:
        total *= float(p)
    return total
""",
        ),
        Answer(
            "math.prod",
            """
def path_probability(step_probs):
    return math.prod(float(p) for p in step_probs)
""",
        ),
        Answer(
            "torch, en escala logarítmica",
            """
def path_probability(step_probs):
    return torch.as_tensor(step_probs, dtype=torch.float64).log().sum().exp()
""",
        ),
    ],
    "log10_num_responses": [
        Answer(
            "entero de Python exacto",
            """
def log10_num_responses(vocab_size, length):
    return math.log10(vocab_size**length)
""",
        ),
        Answer(
            "NumPy",
            """
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
