"""Banco de respuestas del módulo 06 · PPO."""

from tests.banks import Answer

MODULE = "06_ppo"

WRONG: dict[str, list[Answer]] = {
    "probability_ratio": [
        Answer(
            "cociente invertido",
            """
def probability_ratio(log_probs, old_log_probs):
    return torch.exp(old_log_probs.detach() - log_probs)
""",
            "El cociente está invertido",
        ),
        Answer(
            "cociente de exponenciales (se anula con log π ≈ −1000)",
            """
def probability_ratio(log_probs, old_log_probs):
    with torch.no_grad():
        old_probs = torch.exp(old_log_probs)
    return torch.exp(log_probs) / old_probs
""",
            "Calculaste exp(log_probs) / exp(old_log_probs)",
        ),
        Answer(
            "cociente de exponenciales con detach",
            """
def probability_ratio(log_probs, old_log_probs):
    return log_probs.exp() / old_log_probs.detach().exp()
""",
            "Calculaste exp(log_probs) / exp(old_log_probs)",
        ),
        Answer(
            "los log π viejos arrastran gradiente",
            """
def probability_ratio(log_probs, old_log_probs):
    return torch.exp(log_probs - old_log_probs)
""",
            "El gradiente llega a old_log_probs",
        ),
        Answer(
            "sin la exponencial",
            """
def probability_ratio(log_probs, old_log_probs):
    return log_probs - old_log_probs.detach()
""",
            "Falta la exponencial",
        ),
        Answer(
            "cociente de log-probabilidades",
            """
def probability_ratio(log_probs, old_log_probs):
    return log_probs / old_log_probs.detach()
""",
            "Dividiste las log-probabilidades",
        ),
        Answer(
            "sin gradiente",
            """
def probability_ratio(log_probs, old_log_probs):
    return torch.exp(log_probs - old_log_probs).detach()
""",
            "no tiene gradiente respecto a log_probs",
        ),
    ],
    "clipped_surrogate_loss": [
        Answer(
            "recorte sin el min",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    return -(torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages).mean()
""",
            "Recortaste sin el min",
        ),
        Answer(
            "max en lugar de min",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.max(ratio * advantages, clipped * advantages).mean()
""",
            "Usaste max en lugar de min",
        ),
        Answer(
            "el min del lado equivocado con ventajas negativas",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    return -(torch.clamp(ratio, max=1 + clip_eps) * advantages).mean()
""",
            "Solo recortaste por arriba",
        ),
        Answer(
            "sin el signo menos",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return torch.min(ratio * advantages, clipped * advantages).mean()
""",
            "Falta el signo menos",
        ),
        Answer(
            "media sobre un solo eje",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean(dim=0)
""",
            "Promediaste sobre un solo eje",
        ),
        Answer(
            "suma en lugar de media",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).sum()
""",
            "Sumaste en lugar de promediar",
        ),
        Answer(
            "sin recorte",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    return -(probability_ratio(log_probs, old_log_probs) * advantages).mean()
""",
            "No hay recorte",
        ),
        Answer(
            "los log π viejos arrastran gradiente",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp(log_probs - old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean()
""",
            "El gradiente llega a old_log_probs",
        ),
    ],
    "kl_estimators": [
        Answer(
            "ρ invertida",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = log_probs - other_log_probs
    return (-log_rho).mean(), (torch.exp(log_rho) - 1 - log_rho).mean()
""",
            "Invertiste ρ",
        ),
        Answer(
            "k3 sin el −1",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    return (-log_rho).mean(), (torch.exp(log_rho) - log_rho).mean()
""",
            "le falta el −1",
        ),
        Answer(
            "k2 en lugar de k3",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    return (-log_rho).mean(), (0.5 * log_rho**2).mean()
""",
            "Eso es k2",
        ),
        Answer(
            "k1 con el signo cambiado",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    return log_rho.mean(), (torch.exp(log_rho) - 1 - log_rho).mean()
""",
            "k1 tiene el signo cambiado",
        ),
        Answer(
            "sin promediar",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    return -log_rho, torch.exp(log_rho) - 1 - log_rho
""",
            "debe ser un escalar",
        ),
    ],
    "minibatch_indices": [
        Answer(
            "baraja una sola vez",
            """
def minibatch_indices(batch_size, minibatch_size, n_epochs, generator=None):
    permutation = torch.randperm(batch_size, generator=generator)
    chunks = torch.split(permutation, minibatch_size)
    return [mb for _ in range(n_epochs) for mb in chunks]
""",
            "Barajaste una sola",
        ),
        Answer(
            "sin barajar",
            """
def minibatch_indices(batch_size, minibatch_size, n_epochs, generator=None):
    order = torch.arange(batch_size)
    return [mb for _ in range(n_epochs) for mb in torch.split(order, minibatch_size)]
""",
            "sin barajar",
        ),
        Answer(
            "con reemplazo",
            """
def minibatch_indices(batch_size, minibatch_size, n_epochs, generator=None):
    batches = []
    for _ in range(n_epochs):
        draws = torch.randint(batch_size, (batch_size,), generator=generator)
        batches.extend(torch.split(draws, minibatch_size))
    return batches
""",
            "con reemplazo",
        ),
        Answer(
            "una sola época",
            """
def minibatch_indices(batch_size, minibatch_size, n_epochs, generator=None):
    permutation = torch.randperm(batch_size, generator=generator)
    return list(torch.split(permutation, minibatch_size))
""",
            "los de una sola",
        ),
        Answer(
            "pierde el minilote corto",
            """
def minibatch_indices(batch_size, minibatch_size, n_epochs, generator=None):
    batches = []
    for _ in range(n_epochs):
        permutation = torch.randperm(batch_size, generator=generator)
        for start in range(0, batch_size - minibatch_size + 1, minibatch_size):
            batches.append(permutation[start:start + minibatch_size])
    return batches
""",
            "el más corto",
        ),
        Answer(
            "ignora el generador",
            """
def minibatch_indices(batch_size, minibatch_size, n_epochs, generator=None):
    batches = []
    for _ in range(n_epochs):
        permutation = torch.randperm(batch_size)
        batches.extend(torch.split(permutation, minibatch_size))
    return batches
""",
            "Usa el generator",
        ),
    ],
    "ppo_loss": [
        Answer(
            "la entropía con el signo cambiado",
            """
def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    policy_loss = ppo.clipped_surrogate_loss(
        log_probs, old_log_probs, advantages, clip_eps
    )
    value_loss = ((values - returns) ** 2).mean()
    return policy_loss + vf_coef * value_loss + ent_coef * entropy.mean()
""",
            "El premio a la entropía va con signo menos",
        ),
        Answer(
            "sin vf_coef",
            """
def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    policy_loss = ppo.clipped_surrogate_loss(
        log_probs, old_log_probs, advantages, clip_eps
    )
    value_loss = ((values - returns) ** 2).mean()
    return policy_loss + value_loss - ent_coef * entropy.mean()
""",
            "Falta multiplicar la pérdida del crítico por vf_coef",
        ),
        Answer(
            "valor absoluto en lugar del cuadrado",
            """
def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    policy_loss = ppo.clipped_surrogate_loss(
        log_probs, old_log_probs, advantages, clip_eps
    )
    value_loss = (values - returns).abs().mean()
    return policy_loss + vf_coef * value_loss - ent_coef * entropy.mean()
""",
            "error cuadrático medio",
        ),
        Answer(
            "cuadrado de la media",
            """
def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    policy_loss = ppo.clipped_surrogate_loss(
        log_probs, old_log_probs, advantages, clip_eps
    )
    value_loss = (values - returns).mean() ** 2
    return policy_loss + vf_coef * value_loss - ent_coef * entropy.mean()
""",
            "la media de los cuadrados",
        ),
        Answer(
            "la política con el signo cambiado",
            """
def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    policy_loss = ppo.clipped_surrogate_loss(
        log_probs, old_log_probs, advantages, clip_eps
    )
    value_loss = ((values - returns) ** 2).mean()
    return -policy_loss + vf_coef * value_loss - ent_coef * entropy.mean()
""",
            "El término de la política tiene el signo cambiado",
        ),
        Answer(
            "el crítico sin gradiente",
            """
def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    policy_loss = ppo.clipped_surrogate_loss(
        log_probs, old_log_probs, advantages, clip_eps
    )
    value_loss = ((values.detach() - returns.detach()) ** 2).mean()
    return policy_loss + vf_coef * value_loss - ent_coef * entropy.mean()
""",
            "¿V lleva .detach()?",
        ),
        Answer(
            "los objetivos del crítico con gradiente",
            """
def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    policy_loss = ppo.clipped_surrogate_loss(
        log_probs, old_log_probs, advantages, clip_eps
    )
    value_loss = ((values - returns) ** 2).mean()
    return policy_loss + vf_coef * value_loss - ent_coef * entropy.mean()
""",
            "El gradiente llega a returns",
        ),
    ],
    # El cuestionario: la comprobación visible acepta cualquier respuesta bien
    # escrita, así que las erróneas bien escritas fallan en la prueba oculta, con
    # la explicación; las mal escritas, ya en la visible.
    "quiz_1": [
        Answer(
            "la acción no muestreada sin gradiente",
            "answer_1 = 0.0",
            "también recibe gradiente",
        ),
        Answer(
            "la componente de la acción muestreada",
            "answer_1 = -0.3",
            "esa es la componente de θ_1",
        ),
        Answer("el signo cambiado", "answer_1 = -0.12", "revisa el signo"),
        Answer("sin la línea base", "answer_1 = 2 * -0.2", "falta la línea base"),
        Answer("sin responder", "answer_1 = None", "Todavía no has respondido"),
        Answer("con coma decimal, como texto", 'answer_1 = "0,12"', "no un texto"),
        Answer(
            "el gradiente entero",
            "answer_1 = torch.tensor([0.12, -0.3, 0.18])",
            "un solo número",
        ),
    ],
    "quiz_2": [
        Answer(
            "todas verdaderas",
            'answer_2 = {"a": True, "b": True, "c": True, "d": True}',
            "Pregunta 2: mal marcadas b, c;",
        ),
        Answer(
            "la línea base que depende de la acción",
            'answer_2 = {"a": True, "b": False, "c": True, "d": True}',
            "sesga el gradiente",
        ),
        Answer(
            "sin marcar",
            'answer_2 = {"a": None, "b": None, "c": None, "d": None}',
            "Todavía no has marcado la afirmación a)",
        ),
        Answer(
            "una lista en vez de un diccionario",
            "answer_2 = [True, False, False, True]",
            "es un diccionario",
        ),
    ],
    "quiz_3": [
        Answer(
            "la pérdida en vez del objetivo",
            "answer_3 = 2.2 / 3",
            "es −L^CLIP, la pérdida",
        ),
        Answer(
            "sin recorte",
            "answer_3 = (1.3 * -2 + 1.5 * 1 + 0.7 * -1) / 3",
            "falta el recorte",
        ),
        Answer(
            "sin el min",
            "answer_3 = (1.2 * -2 + 1.2 * 1 + 0.8 * -1) / 3",
            "sin el min, la muestra 1 no se corrige",
        ),
        Answer("redondeado de más", "answer_3 = -0.7", "L^CLIP = −0,733"),
        Answer("NaN", 'answer_3 = float("nan")', "finito"),
    ],
    "quiz_4": [
        Answer(
            "k3 negativo",
            'answer_4 = {"a": True, "b": True, "c": True, "d": False}',
            "k3 ≥ 0 en cada muestra",
        ),
        Answer(
            "todas falsas",
            'answer_4 = {"a": False, "b": False, "c": False, "d": False}',
            "Pregunta 4: mal marcadas b, c;",
        ),
        Answer(
            "marcas como texto",
            'answer_4 = {"a": "F", "b": "V", "c": "V", "d": "F"}',
            "sin comillas",
        ),
        Answer(
            "una clave en mayúscula",
            'answer_4 = {"A": False, "b": True, "c": True, "d": False}',
            "faltan a",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "probability_ratio": [
        Answer(
            "la vieja congelada bajo no_grad",
            """
def probability_ratio(log_probs, old_log_probs):
    with torch.no_grad():
        reference = old_log_probs.clone()
    return (log_probs - reference).exp()
""",
        ),
        Answer(
            "exp del log-cociente, con la vieja copiada",
            """
def probability_ratio(log_probs, old_log_probs):
    frozen = old_log_probs.clone().detach()
    log_ratio = log_probs - frozen
    return log_ratio.exp()
""",
        ),
    ],
    "clipped_surrogate_loss": [
        Answer(
            "por casos según el signo de A",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp(log_probs - old_log_probs.detach())
    upper = torch.clamp(ratio, max=1 + clip_eps)
    lower = torch.clamp(ratio, min=1 - clip_eps)
    terms = torch.where(advantages >= 0, upper * advantages, lower * advantages)
    return -terms.mean()
""",
        ),
        Answer(
            "con torch.minimum y reshape",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs).reshape(-1)
    adv = advantages.reshape(-1)
    low, high = 1.0 - clip_eps, 1.0 + clip_eps
    surrogate = torch.minimum(ratio * adv, ratio.clamp(low, high) * adv)
    return -surrogate.sum() / surrogate.numel()
""",
        ),
        Answer(
            "el máximo de las pérdidas",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    loss1 = -advantages * ratio
    loss2 = -advantages * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return torch.max(loss1, loss2).mean()
""",
        ),
    ],
    "kl_estimators": [
        Answer(
            "con ρ explícita",
            """
def kl_estimators(log_probs, other_log_probs):
    rho = torch.exp(other_log_probs - log_probs)
    k1 = torch.mean(log_probs - other_log_probs)
    k3 = torch.mean(rho - 1 - torch.log(rho))
    return k1, k3
""",
        ),
        Answer(
            "con NumPy y floats",
            """
def kl_estimators(log_probs, other_log_probs):
    lq = np.asarray(log_probs, dtype=float)
    lp = np.asarray(other_log_probs, dtype=float)
    log_rho = lp - lq
    return float(np.mean(-log_rho)), float(np.mean(np.expm1(log_rho) - log_rho))
""",
        ),
    ],
    "minibatch_indices": [
        Answer(
            "índices con slicing",
            """
def minibatch_indices(batch_size, minibatch_size, n_epochs, generator=None):
    out = []
    for epoch in range(n_epochs):
        perm = torch.randperm(batch_size, generator=generator)
        for start in range(0, batch_size, minibatch_size):
            out.append(perm[start:start + minibatch_size])
    return out
""",
        ),
        Answer(
            "NumPy con una semilla sacada del generador",
            """
def minibatch_indices(batch_size, minibatch_size, n_epochs, generator=None):
    seed = int(torch.randint(2**31 - 1, (1,), generator=generator))
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(n_epochs):
        perm = rng.permutation(batch_size)
        cuts = list(range(minibatch_size, batch_size, minibatch_size))
        batches += np.array_split(perm, cuts)
    return batches
""",
        ),
    ],
    "ppo_loss": [
        Answer(
            "con F.mse_loss",
            """
import torch.nn.functional as F

def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    policy_loss = ppo.clipped_surrogate_loss(
        log_probs, old_log_probs, advantages, clip_eps
    )
    value_loss = F.mse_loss(values, returns.detach())
    entropy_bonus = entropy.mean()
    return policy_loss + vf_coef * value_loss - ent_coef * entropy_bonus
""",
        ),
        Answer(
            "todo en una línea, sin la función del ejercicio 2",
            """
def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    r = torch.exp(log_probs - old_log_probs.detach())
    pg = -torch.min(r * advantages, r.clamp(1 - clip_eps, 1 + clip_eps) * advantages)
    v = (values - returns.detach()).pow(2)
    return (pg + vf_coef * v - ent_coef * entropy).mean()
""",
        ),
    ],
    "quiz_1": [
        Answer("a mano", "answer_1 = 0.12"),
        Answer("la cuenta escrita", "answer_1 = (2 - 2.6) * (0 - 0.2)"),
        Answer("un tensor de un elemento", "answer_1 = torch.tensor(0.12)"),
        Answer("con tres decimales", "answer_1 = np.float32(0.120)"),
    ],
    "quiz_2": [
        Answer(
            "en otro orden",
            'answer_2 = {"d": True, "c": False, "b": False, "a": True}',
        ),
        Answer(
            "con booleanos de NumPy",
            "answer_2 = dict(zip('abcd', np.array([1, 0, 0, 1]) == 1))",
        ),
    ],
    "quiz_3": [
        Answer("con tres decimales", "answer_3 = -0.733"),
        Answer("la cuenta escrita", "answer_3 = (-2.6 + 1.2 - 0.8) / 3"),
        Answer(
            "con la función del ejercicio 2",
            """
answer_3 = -clipped_surrogate_loss(
    torch.log(torch.tensor([1.3, 1.5, 0.7])),
    torch.zeros(3),
    torch.tensor([-2.0, 1.0, -1.0]),
    0.2,
)
""",
        ),
    ],
    "quiz_4": [
        Answer(
            "en otro orden",
            'answer_4 = {"b": True, "a": False, "d": False, "c": True}',
        ),
        Answer(
            "con dict()",
            "answer_4 = dict(a=False, b=True, c=True, d=False)",
        ),
    ],
}

# ---------------------------------------------------------------------------
# Clases de error que valen para cualquier ejercicio (issue #22).
# ---------------------------------------------------------------------------

WRONG["probability_ratio"] += [
    Answer(
        "redondea a dos decimales",
        """
def probability_ratio(log_probs, old_log_probs):
    return torch.round(torch.exp(log_probs - old_log_probs.detach()), decimals=2)
""",
        "redondeado a 2 decimales",
    ),
]
WRONG["kl_estimators"] += [
    Answer(
        "calcula log ρ sobre la entrada",
        """
def kl_estimators(log_probs, other_log_probs):
    other_log_probs -= log_probs
    k1 = (-other_log_probs).mean()
    k3 = (torch.exp(other_log_probs) - 1 - other_log_probs).mean()
    return k1, k3
""",
        "modificó su argumento «other_log_probs»",
    ),
]
RIGHT["ppo_loss"] += [
    Answer(
        # Sin doble penalización: su pérdida recortada está mal, pero este
        # ejercicio se califica con la de referencia en su lugar.
        "con una clipped_surrogate_loss mal escrita en la misma celda",
        """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    return (torch.exp(log_probs - old_log_probs) * advantages).mean()

def ppo_loss(log_probs, old_log_probs, advantages, values, returns, entropy,
             clip_eps=0.2, vf_coef=0.5, ent_coef=0.01):
    policy_loss = clipped_surrogate_loss(log_probs, old_log_probs, advantages,
                                         clip_eps)
    value_loss = ((values - returns.detach()) ** 2).mean()
    return policy_loss + vf_coef * value_loss - ent_coef * entropy.mean()
""",
    ),
]
