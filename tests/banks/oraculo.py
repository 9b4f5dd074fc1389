"""Banco de respuestas del módulo 12 · El oráculo."""

from __future__ import annotations

from tests.banks import Answer, statements_right

MODULE = "12_oraculo"

_OBJECTIVE_GRAD = ("exact_objective_test_grad",)

#: El grade_id de la celda de la pregunta (su celda de pruebas es
#: ``oracle_answer_test``), el de ``helpers.checks.oraculo.ORACLE_KEY``.
ORACLE = "oracle_answer"

# Una búsqueda nivel a nivel, con un hueco para cada error típico: {children},
# {keep}, {ended}, {log_probs} y {mass}.
_SEARCH = """
def enumerate_completions(model, problem, min_log_prob, max_new_tokens):
    prompt = tl.encode_prompts([problem])[0]
    alive = torch.empty(1, 0, dtype=torch.long)
    alive_lp = torch.zeros(1, dtype=torch.float64)
    done, done_lp = [], []
    for t in range(max_new_tokens):
        seqs = torch.cat([prompt.expand(len(alive), -1), alive], dim=1)
        with torch.no_grad():
            step = tl.next_token_log_probs(model(seqs)[:, -1]).double()
        children = {children}
        parent, token = torch.nonzero({keep}, as_tuple=True)
        alive = torch.cat([alive[parent], token[:, None]], dim=1)
        alive_lp = children[parent, token]
        ended = {ended}
        for tokens, lp in zip(alive[ended], alive_lp[ended]):
            row = torch.full((max_new_tokens,), tokenizer.pad_id)
            row[: len(tokens)] = tokens
            done.append(row)
            done_lp.append(lp)
        alive, alive_lp = alive[~ended], alive_lp[~ended]
        if len(alive) == 0:
            break
    log_probs = torch.stack(done_lp)
    return torch.stack(done), {log_probs}, {mass}
"""

_RIGHT_SEARCH = {
    "children": "alive_lp[:, None] + step",
    "keep": "children >= min_log_prob",
    "ended": "(token == tokenizer.end_id) | (t == max_new_tokens - 1)",
    "log_probs": "log_probs",
    "mass": "float(log_probs.exp().sum())",
}


def _search(**changes: str) -> str:
    return _SEARCH.format(**{**_RIGHT_SEARCH, **changes})


_OBJECTIVE = """
def exact_objective(model, problems, enumerations):
    total = 0
    for problem, found in zip(problems, enumerations):
        log_p = tl.token_log_probs(model, found.sequences, found.prompt_len)
        log_p = log_p.double().sum(dim=-1)
        rewards = tl.rewards_for(found.completions, [problem] * len(log_p))
        total = total + {term}
    return {result}
"""


def _objective(
    term: str = "(log_p.exp() * rewards).sum()", result: str = "total / len(problems)"
) -> str:
    return _OBJECTIVE.format(term=term, result=result)


_AUDIT = """
def audit_estimates(estimates, true_gradient):
    mean = estimates.mean(dim=0)
    angle = {angle}
    norm = {norm}
    variance = {variance}
    return angle, norm, variance
"""
_AUDIT_RIGHT = {
    "angle": "oracle.angle_degrees(mean, true_gradient)",
    "norm": "(mean.norm() / true_gradient.norm()).item()",
    "variance": "((estimates - mean) ** 2).sum(dim=1).mean().item()",
}


def _audit(**changes: str) -> str:
    return _AUDIT.format(**{**_AUDIT_RIGHT, **changes})


_KL = """
def kl_estimate(log_probs, ref_log_probs, mask, kind, per_token):
    log_ratio = {log_ratio}
    if {summed}:
        log_ratio = log_ratio.sum(dim=-1)
    if kind == "k1":
        k = -log_ratio
    elif kind == "k2":
        k = {k2}
    else:
        k = torch.exp(log_ratio) - 1 - log_ratio
    return {result}
"""
_KL_RIGHT = {
    "log_ratio": "torch.where(mask.bool(), ref_log_probs - log_probs, 0.0)",
    "summed": "not per_token",
    "k2": "0.5 * log_ratio ** 2",
    "result": "k.sum(dim=-1) if per_token else k",
}


def _kl(**changes: str) -> str:
    return _KL.format(**{**_KL_RIGHT, **changes})


WRONG: dict[str, list[Answer]] = {
    "enumerate_completions": [
        Answer(
            "poda con la probabilidad del carácter",
            _search(keep="step >= min_log_prob"),
            mistake="enum_token_threshold",
        ),
        Answer(
            "sin sumar la del prefijo",
            _search(children="step"),
            mistake="enum_last_token",
        ),
        Answer(
            "la masa con log-probabilidades",
            _search(mass="float(log_probs.sum())"),
            mistake="enum_mass_of_log_probs",
        ),
        Answer(
            "devuelve probabilidades",
            _search(log_probs="log_probs.exp()"),
            mistake="enum_probabilities",
        ),
        Answer(
            "olvida las respuestas cortadas",
            _search(ended="token == tokenizer.end_id"),
            mistake="enum_drops_cut",
        ),
    ],
    "exact_objective": [
        Answer(
            "log p en vez de p",
            _objective(term="(log_p * rewards).sum()"),
            mistake="objective_log_p",
        ),
        Answer(
            "media sobre las respuestas",
            _objective(term="(log_p.exp() * rewards).mean()"),
            mistake="objective_mean_over_y",
        ),
        Answer(
            "sin la media sobre enunciados",
            _objective(result="total"),
            mistake="objective_no_prompt_average",
        ),
        Answer(
            "las log-probabilidades guardadas",
            _objective(term="(found.log_probs.exp() * rewards).sum()"),
            mistake="objective_no_gradient",
            fails=_OBJECTIVE_GRAD,
        ),
        Answer(
            "p separada del grafo",
            _objective(term="(log_p.exp().detach() * rewards).sum()"),
            mistake="objective_no_gradient",
            fails=_OBJECTIVE_GRAD,
        ),
    ],
    "audit_estimates": [
        Answer(
            "media de los ángulos",
            _audit(
                angle="sum(oracle.angle_degrees(g, true_gradient) for g in estimates)"
                " / len(estimates)"
            ),
            mistake="audit_mean_of_angles",
        ),
        Answer(
            "en radianes",
            _audit(angle="math.radians(oracle.angle_degrees(mean, true_gradient))"),
            mistake="audit_radians",
        ),
        Answer(
            "media de las normas",
            _audit(norm="(estimates.norm(dim=1).mean() / true_gradient.norm()).item()"),
            mistake="audit_mean_of_norms",
        ),
        Answer(
            "sin centrar",
            _audit(variance="(estimates ** 2).sum(dim=1).mean().item()"),
            mistake="audit_not_centred",
        ),
        Answer(
            "media sobre las coordenadas",
            _audit(variance="((estimates - mean) ** 2).mean().item()"),
            mistake="audit_per_coordinate",
        ),
        Answer(
            "la desviación típica",
            _audit(
                variance="((estimates - mean) ** 2).sum(dim=1).mean().sqrt().item()"
            ),
            mistake="audit_standard_deviation",
        ),
    ],
    "kl_estimate": [
        Answer(
            "el cociente al revés",
            _kl(log_ratio="torch.where(mask.bool(), log_probs - ref_log_probs, 0.0)"),
            mistake="kl_ratio_flipped",
        ),
        Answer(
            "sin máscara",
            _kl(log_ratio="ref_log_probs - log_probs"),
            mistake="kl_padding_counted",
        ),
        Answer(
            "los niveles cambiados",
            _kl(summed="per_token", result="k if per_token else k.sum(dim=-1)"),
            mistake="kl_level_swapped",
        ),
        Answer(
            "k2 sin el medio",
            _kl(k2="log_ratio ** 2"),
            mistake="kl_k2_without_half",
        ),
        Answer(
            "media sobre los tokens",
            _kl(
                result="k.sum(dim=-1) / mask.sum(dim=-1) if per_token "
                "else k / mask.sum(dim=-1)"
            ),
            mistake="kl_mean_over_tokens",
        ),
    ],
    ORACLE: [
        Answer(
            "todo lo anterior se confirma",
            'answer_oracle = {"a": True, "b": False, "c": True, "d": True}',
            mistake="statement_a",
        ),
        Answer(
            "la media del grupo no sesga",
            'answer_oracle = {"a": True, "b": True, "c": False, "d": False}',
            mistake="statement_a",
        ),
        Answer(
            "la línea base siempre ayuda",
            'answer_oracle = {"a": False, "b": False, "c": False, "d": False}',
            mistake="statement_b",
        ),
        Answer(
            "÷σ sesga ya con G = 2",
            'answer_oracle = {"a": False, "b": True, "c": True, "d": False}',
            mistake="statement_c",
        ),
        Answer(
            "k3 siempre el menos disperso",
            'answer_oracle = {"a": False, "b": True, "c": False, "d": True}',
            mistake="statement_d",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "enumerate_completions": [
        Answer(
            "con listas de Python, prefijo a prefijo",
            """
def enumerate_completions(model, problem, min_log_prob, max_new_tokens):
    prompt = tl.encode_prompts([problem])[0].tolist()
    alive = [([], 0.0)]
    found = []
    for t in range(max_new_tokens):
        if not alive:
            break
        batch = torch.tensor([prompt + tokens for tokens, _ in alive])
        with torch.no_grad():
            step = tl.next_token_log_probs(model(batch)[:, -1]).double()
        survivors = []
        for (tokens, lp), row in zip(alive, step):
            for token in range(len(row)):
                child = lp + row[token].item()
                if child < min_log_prob:
                    continue
                if token == tokenizer.end_id or t == max_new_tokens - 1:
                    found.append((tokens + [token], child))
                else:
                    survivors.append((tokens + [token], child))
        alive = survivors
    completions = torch.full((len(found), max_new_tokens), tokenizer.pad_id)
    for i, (tokens, _) in enumerate(found):
        completions[i, : len(tokens)] = torch.tensor(tokens)
    log_probs = torch.tensor([lp for _, lp in found], dtype=torch.float64)
    return completions, log_probs, log_probs.exp().sum().item()
""",
        ),
        Answer(
            "en profundidad, con recursión",
            """
def enumerate_completions(model, problem, min_log_prob, max_new_tokens):
    prompt = tl.encode_prompts([problem])[0]
    rows, scores = [], []

    def expand(prefix, log_p):
        with torch.no_grad():
            logits = model(torch.cat([prompt, prefix])[None])[0, -1]
        step = tl.next_token_log_probs(logits).double()
        for token in torch.nonzero(log_p + step >= min_log_prob).flatten():
            child = torch.cat([prefix, token[None]])
            child_lp = log_p + step[token]
            if token == tokenizer.end_id or len(child) == max_new_tokens:
                padded = torch.full((max_new_tokens,), tokenizer.pad_id)
                padded[: len(child)] = child
                rows.append(padded)
                scores.append(child_lp)
            else:
                expand(child, child_lp)

    expand(torch.empty(0, dtype=torch.long), torch.tensor(0.0, dtype=torch.float64))
    log_probs = torch.stack(scores)
    return torch.stack(rows), log_probs, float(torch.exp(log_probs).sum())
""",
        ),
    ],
    "exact_objective": [
        Answer("con un bucle", _objective()),
        Answer(
            "con la suma de log-probabilidades de oracle",
            """
def exact_objective(model, problems, enumerations):
    terms = []
    for problem, found in zip(problems, enumerations):
        probs = oracle.sequence_log_probs(model, found).exp()
        rewards = tl.rewards_for(found.completions, [problem] * len(probs))
        terms.append(torch.dot(probs, rewards.double()))
    return torch.stack(terms).mean()
""",
        ),
    ],
    "audit_estimates": [
        Answer(
            "con vector_norm",
            """
def audit_estimates(estimates, true_gradient):
    g = estimates.double()
    center = g.sum(0) / g.shape[0]
    spread = torch.linalg.vector_norm(g - center, dim=1).pow(2).mean()
    size = torch.linalg.vector_norm(true_gradient.double())
    ratio = torch.linalg.vector_norm(center) / size
    return oracle.angle_degrees(center, true_gradient), ratio.item(), spread.item()
""",
        ),
        Answer(
            "con la varianza muestral y math",
            """
def audit_estimates(estimates, true_gradient):
    mean = estimates.mean(0)
    cosine = float(mean @ true_gradient) / float(mean.norm() * true_gradient.norm())
    angle = math.degrees(math.acos(max(-1.0, min(1.0, cosine))))
    variance = estimates.var(dim=0, unbiased=True).sum().item()
    return angle, float(mean.norm() / true_gradient.norm()), variance
""",
        ),
    ],
    "kl_estimate": [
        Answer("con torch.where", _kl()),
        Answer(
            "multiplicando por la máscara y con un diccionario",
            """
def kl_estimate(log_probs, ref_log_probs, mask, kind, per_token):
    r = (ref_log_probs - log_probs) * mask
    if not per_token:
        r = r.sum(-1)
    k = {"k1": -r, "k2": r ** 2 / 2, "k3": r.exp() - 1 - r}[kind]
    return (k * mask).sum(-1) if per_token else k
""",
        ),
    ],
}

RIGHT[ORACLE] = statements_right(MODULE, ORACLE, "answer_oracle")
