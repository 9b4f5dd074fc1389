"""Banco de respuestas del módulo 10 · Preferencias."""

from __future__ import annotations

from tests.banks import Answer, statements_right

MODULE = "10_preferencias"

_BT = "bradley_terry_loss_test"
_BT_STABLE = "bradley_terry_loss_test_stable"
_DPO = "dpo_loss_test"
_IPO = "dpo_loss_test_ipo"
_IR = "implicit_rewards_test"
_IR_GRAD = "implicit_rewards_test_grad"
_STEP = "dpo_step_test"
_STEP_CLIP = "dpo_step_test_clip"
_STEP_RETURNS = "dpo_step_test_returns"

#: El grade_id de la celda de solución del cuestionario (su celda de pruebas
#: es ``experiment_answer_test``), el de
#: ``helpers.checks.preferencias.EXPERIMENT_KEY``.
EXPERIMENT = "experiment_answer"

WRONG: dict[str, list[Answer]] = {
    "bradley_terry_loss": [
        Answer(
            "la diferencia al revés",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -F.logsigmoid(rejected_rewards - chosen_rewards).mean()
""",
            mistake="bt_swapped",
        ),
        Answer(
            "suma en vez de media",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -F.logsigmoid(chosen_rewards - rejected_rewards).sum()
""",
            mistake="bt_sum",
        ),
        Answer(
            "sin el signo menos",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return F.logsigmoid(chosen_rewards - rejected_rewards).mean()
""",
            mistake="bt_no_minus",
        ),
        Answer(
            "σ sin logaritmo",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -torch.sigmoid(chosen_rewards - rejected_rewards).mean()
""",
            mistake="bt_no_log",
        ),
        Answer(
            "1 − σ(d)",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return (1 - torch.sigmoid(chosen_rewards - rejected_rewards)).mean()
""",
            mistake="bt_one_minus_sigmoid",
        ),
        Answer(
            "sin la media del lote",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -F.logsigmoid(chosen_rewards - rejected_rewards)
""",
            mistake="bt_per_pair",
        ),
        Answer(
            "log σ de cada nota por separado",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -(F.logsigmoid(chosen_rewards) + F.logsigmoid(-rejected_rewards)).mean()
""",
            mistake="bt_separately",
        ),
        Answer(
            "la diferencia de las medias del lote",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -F.logsigmoid(chosen_rewards.mean() - rejected_rewards.mean())
""",
            mistake="bt_means_inside",
        ),
        Answer(
            "binary_cross_entropy de la sigmoide (topada en 100)",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    p = torch.sigmoid(chosen_rewards - rejected_rewards)
    return F.binary_cross_entropy(p, torch.ones_like(p))
""",
            mistake="bt_bce",
            fails=(_BT_STABLE,),
        ),
        Answer(
            "estable a mano con abs (gradiente 0 en el empate)",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    d = chosen_rewards - rejected_rewards
    return (torch.relu(-d) + torch.log1p(torch.exp(-d.abs()))).mean()
""",
            mistake="wrong_gradient",
        ),
        Answer(
            "con .detach() al final",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -F.logsigmoid(chosen_rewards - rejected_rewards).mean().detach()
""",
            mistake="loss_no_gradient",
        ),
        Answer(
            "log(sigmoid) en dos pasos",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -torch.log(torch.sigmoid(chosen_rewards - rejected_rewards)).mean()
""",
            mistake="bt_overflow",
            fails=(_BT_STABLE,),
        ),
        Answer(
            "log(1 + exp(−d))",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    d = chosen_rewards - rejected_rewards
    return torch.log(1 + torch.exp(-d)).mean()
""",
            mistake="bt_overflow",
            fails=(_BT_STABLE,),
        ),
        Answer(
            "recorta σ con un ε",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    p = torch.sigmoid(chosen_rewards - rejected_rewards)
    return -torch.log(p.clamp(min=1e-7)).mean()
""",
            mistake="bt_epsilon_clamp_7",
            fails=(_BT_STABLE,),
        ),
        Answer(
            "torch.where con las dos ramas (gradiente nan)",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    d = chosen_rewards - rejected_rewards
    per_pair = torch.where(d > 0, -torch.log(torch.sigmoid(d)),
                           -d - torch.log(torch.sigmoid(-d)))
    return per_pair.mean()
""",
            mistake="gradient_not_finite",
            fails=(_BT_STABLE,),
        ),
        Answer(
            "un float de Python (.item())",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -F.logsigmoid(chosen_rewards - rejected_rewards).mean().item()
""",
            mistake="loss_not_a_tensor",
        ),
        Answer(
            "sin gradiente hacia la rechazada",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return -F.logsigmoid(chosen_rewards - rejected_rewards.detach()).mean()
""",
            mistake="gradient_not_reaching_input",
        ),
        Answer(
            "modifica la entrada",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    chosen_rewards -= rejected_rewards
    return -F.logsigmoid(chosen_rewards).mean()
""",
            mistake="modified_input",
        ),
    ],
    "pairwise_accuracy": [
        Answer(
            "los empates cuentan 0",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    return (chosen_rewards > rejected_rewards).float().mean().item()
""",
            mistake="acc_ties_zero",
        ),
        Answer(
            "≥ en vez de >",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    return (chosen_rewards >= rejected_rewards).float().mean().item()
""",
            mistake="acc_ties_one",
        ),
        Answer(
            "cuenta en vez de fracción",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    wins = (chosen_rewards > rejected_rewards).float()
    ties = (chosen_rewards == rejected_rewards).float()
    return (wins + 0.5 * ties).sum().item()
""",
            mistake="acc_counts",
        ),
        Answer(
            "al revés",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    wins = (rejected_rewards > chosen_rewards).float()
    ties = (chosen_rewards == rejected_rewards).float()
    return (wins + 0.5 * ties).mean().item()
""",
            mistake="acc_reversed",
        ),
        Answer(
            "compara las medias del lote",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    return float(chosen_rewards.mean() > rejected_rewards.mean())
""",
            mistake="acc_means",
        ),
        Answer(
            "quita los empates del recuento",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    decided = chosen_rewards != rejected_rewards
    return (chosen_rewards[decided] > rejected_rewards[decided]).float().mean().item()
""",
            mistake="acc_ties_excluded",
        ),
        Answer(
            "empates con torch.isclose",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    ties = torch.isclose(chosen_rewards, rejected_rewards)
    wins = (chosen_rewards > rejected_rewards) & ~ties
    return (wins.float() + 0.5 * ties.float()).mean().item()
""",
            mistake="acc_ties_close",
        ),
        Answer(
            "devuelve un tensor de 0 dimensiones",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    wins = (chosen_rewards > rejected_rewards).float()
    ties = (chosen_rewards == rejected_rewards).float()
    return (wins + 0.5 * ties).mean()
""",
            mistake="not_python_number",
        ),
        Answer(
            "redondea a dos decimales",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    wins = (chosen_rewards > rejected_rewards).float()
    ties = (chosen_rewards == rejected_rewards).float()
    return round((wins + 0.5 * ties).mean().item(), 2)
""",
            mistake="rounded",
        ),
        Answer(
            "modifica la entrada",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    chosen_rewards -= rejected_rewards
    wins = (chosen_rewards > 0).float()
    ties = (chosen_rewards == 0).float()
    return (wins + 0.5 * ties).mean().item()
""",
            mistake="modified_input",
        ),
    ],
    "dpo_loss": [
        Answer(
            "referencia menos política",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (reference_chosen - policy_chosen) - (reference_rejected - policy_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean()
    return -F.logsigmoid(beta * h).mean()
""",
            mistake="dpo_sign",
        ),
        Answer(
            "β fuera de la sigmoide",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean()
    return -beta * F.logsigmoid(h).mean()
""",
            mistake="dpo_beta_outside",
            fails=(_DPO,),
        ),
        Answer(
            "sin β en DPO",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean()
    return -F.logsigmoid(h).mean()
""",
            mistake="dpo_no_beta",
            fails=(_DPO,),
        ),
        Answer(
            "log(sigmoid) en dos pasos",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean()
    return -torch.log(torch.sigmoid(beta * h)).mean()
""",
            mistake="dpo_log_of_sigmoid",
            fails=(_DPO,),
        ),
        Answer(
            "loss_type=None por defecto",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type=None):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "sigmoid":
        return -F.logsigmoid(beta * h).mean()
    return ((h - 1 / (2 * beta)) ** 2).mean()
""",
            mistake="dpo_default_loss_type",
            fails=(_DPO,),
        ),
        Answer(
            "DPO sin la referencia",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    if loss_type == "ipo":
        h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
        return ((h - 1 / (2 * beta)) ** 2).mean()
    return -F.logsigmoid(beta * (policy_chosen - policy_rejected)).mean()
""",
            mistake="dpo_no_reference",
            fails=(_DPO,),
        ),
        Answer(
            "DPO sin la media del lote",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean()
    return -F.logsigmoid(beta * h)
""",
            mistake="dpo_per_pair",
            fails=(_DPO,),
        ),
        Answer(
            "los cocientes con exp",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean()
    chosen_ratio = (policy_chosen - reference_chosen).exp()
    rejected_ratio = (policy_rejected - reference_rejected).exp()
    return -F.logsigmoid(beta * (chosen_ratio - rejected_ratio)).mean()
""",
            mistake="dpo_ratios",
            fails=(_DPO,),
        ),
        Answer(
            "DPO estable a mano con abs (gradiente 0 con h = 0)",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean()
    x = beta * h
    return (torch.relu(-x) + torch.log1p(torch.exp(-x.abs()))).mean()
""",
            mistake="wrong_gradient",
            fails=(_DPO,),
        ),
        Answer(
            "IPO con objetivo 1/β",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / beta) ** 2).mean()
    return -F.logsigmoid(beta * h).mean()
""",
            mistake="ipo_target_one_over_beta",
            fails=(_IPO,),
        ),
        Answer(
            "1 / 2 * beta",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / 2 * beta) ** 2).mean()
    return -F.logsigmoid(beta * h).mean()
""",
            mistake="ipo_precedence",
            fails=(_IPO,),
        ),
        Answer(
            "β dentro del cuadrado de IPO",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((beta * h - 0.5) ** 2).mean()
    return -F.logsigmoid(beta * h).mean()
""",
            mistake="ipo_beta_times_h_half",
            fails=(_IPO,),
        ),
        Answer(
            "IPO con valor absoluto",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return (h - 1 / (2 * beta)).abs().mean()
    return -F.logsigmoid(beta * h).mean()
""",
            mistake="ipo_abs",
            fails=(_IPO,),
        ),
        Answer(
            "IPO con β·h",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((beta * h - 1 / (2 * beta)) ** 2).mean()
    return -F.logsigmoid(beta * h).mean()
""",
            mistake="ipo_beta_times_h",
            fails=(_IPO,),
        ),
        Answer(
            "IPO con + 1/(2β)",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h + 1 / (2 * beta)) ** 2).mean()
    return -F.logsigmoid(beta * h).mean()
""",
            mistake="ipo_sign",
            fails=(_IPO,),
        ),
        Answer(
            "IPO sumado",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).sum()
    return -F.logsigmoid(beta * h).mean()
""",
            mistake="ipo_sum",
            fails=(_IPO,),
        ),
        Answer(
            "no mira loss_type",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    chosen_ratio = policy_chosen - reference_chosen
    rejected_ratio = policy_rejected - reference_rejected
    return F.softplus(beta * (rejected_ratio - chosen_ratio)).mean()
""",
            mistake="ipo_returns_dpo",
            fails=(_IPO,),
        ),
        Answer(
            "suma en vez de media",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).sum()
    return -F.logsigmoid(beta * h).sum()
""",
            mistake="dpo_sum",
        ),
        Answer(
            "un float de Python (.item())",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean().item()
    return -F.logsigmoid(beta * h).mean().item()
""",
            mistake="loss_not_a_tensor",
        ),
        Answer(
            "modifica la entrada",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    policy_chosen -= reference_chosen
    policy_rejected -= reference_rejected
    h = policy_chosen - policy_rejected
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean()
    return -F.logsigmoid(beta * h).mean()
""",
            mistake="modified_input",
        ),
    ],
    "implicit_rewards": [
        Answer(
            "promedia los tokens",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    lengths = (completions != 0).sum(dim=-1)
    with torch.no_grad():
        ref = tl.token_log_probs(reference, sequences, prompts.shape[1]).sum(-1)
    pol = tl.token_log_probs(policy, sequences, prompts.shape[1]).sum(-1)
    return beta * (pol - ref) / lengths
""",
            mistake="ir_mean",
        ),
        Answer(
            "política y referencia cambiadas",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    with torch.no_grad():
        ref = tl.token_log_probs(reference, sequences, prompts.shape[1]).sum(-1)
    pol = tl.token_log_probs(policy, sequences, prompts.shape[1]).sum(-1)
    return beta * (ref - pol)
""",
            mistake="ir_swapped",
        ),
        Answer(
            "sin β",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    with torch.no_grad():
        ref = tl.token_log_probs(reference, sequences, prompts.shape[1]).sum(-1)
    pol = tl.token_log_probs(policy, sequences, prompts.shape[1]).sum(-1)
    return pol - ref
""",
            mistake="ir_no_beta",
        ),
        Answer(
            "cuenta los tokens del enunciado",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    with torch.no_grad():
        ref = tl.token_log_probs(reference, sequences, 1).sum(-1)
    pol = tl.token_log_probs(policy, sequences, 1).sum(-1)
    return beta * (pol - ref)
""",
            mistake="ir_prompt_tokens",
        ),
        Answer(
            "un valor por token",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    with torch.no_grad():
        ref = tl.token_log_probs(reference, sequences, prompts.shape[1])
    pol = tl.token_log_probs(policy, sequences, prompts.shape[1])
    return beta * (pol - ref)
""",
            mistake="ir_per_token",
        ),
        Answer(
            "β solo en la política",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    with torch.no_grad():
        ref = tl.token_log_probs(reference, sequences, prompts.shape[1]).sum(-1)
    pol = tl.token_log_probs(policy, sequences, prompts.shape[1]).sum(-1)
    return beta * pol - ref
""",
            mistake="ir_beta_on_policy",
        ),
        Answer(
            "la media de las T columnas",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    with torch.no_grad():
        ref = tl.token_log_probs(reference, sequences, prompts.shape[1]).mean(-1)
    pol = tl.token_log_probs(policy, sequences, prompts.shape[1]).mean(-1)
    return beta * (pol - ref)
""",
            mistake="ir_mean_with_padding",
        ),
        Answer(
            "sin la referencia",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    return beta * tl.token_log_probs(policy, sequences, prompts.shape[1]).sum(-1)
""",
            mistake="ir_policy_only",
        ),
        Answer(
            "la referencia con gradiente",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    ref = tl.token_log_probs(reference, sequences, prompts.shape[1]).sum(-1)
    pol = tl.token_log_probs(policy, sequences, prompts.shape[1]).sum(-1)
    return beta * (pol - ref)
""",
            mistake="reference_has_gradient",
            fails=(_IR_GRAD,),
        ),
        Answer(
            "todo sin gradiente",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    with torch.no_grad():
        ref = tl.token_log_probs(reference, sequences, prompts.shape[1]).sum(-1)
        pol = tl.token_log_probs(policy, sequences, prompts.shape[1]).sum(-1)
    return beta * (pol - ref)
""",
            mistake="ir_no_gradient",
            fails=(_IR_GRAD,),
        ),
    ],
    "dpo_step": [
        Answer(
            "sin zero_grad",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = F.softplus(rejected - chosen).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_no_zero_grad",
            fails=(_STEP,),
        ),
        Answer(
            "zero_grad entre backward y step",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -torch.log(torch.sigmoid(chosen - rejected)).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.zero_grad()
    optimizer.step()
    return float(loss), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_parameters_unchanged",
            fails=(_STEP, _STEP_CLIP),
        ),
        Answer(
            "sin recortar",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    margins = chosen - rejected
    loss = -F.logsigmoid(margins).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_no_clip",
            fails=(_STEP_CLIP,),
        ),
        Answer(
            "recorta después de step",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_no_clip",
            fails=(_STEP_CLIP,),
        ),
        Answer(
            "β dos veces con dpo_loss",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    zeros = torch.zeros_like(chosen)
    loss = dpo_loss(chosen, rejected, zeros, zeros, beta)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_beta_twice",
            fails=(_STEP, _STEP_CLIP, _STEP_RETURNS),
        ),
        Answer(
            "elegida y rechazada cambiadas",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(rejected - chosen).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_swapped",
        ),
        Answer(
            "sin β",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, 1.0)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, 1.0)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_no_beta",
        ),
        Answer(
            "suma la pérdida del lote",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).sum()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_sum",
            fails=(_STEP, _STEP_RETURNS),
        ),
        Answer(
            "log-probabilidades medias por token",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    start = batch.prompts.shape[1]
    def mean_log_probs(model, answers):
        sequences = torch.cat([batch.prompts, answers], dim=1)
        mask = tl.completion_mask(answers)
        return tl.token_log_probs(model, sequences, start).sum(-1) / mask.sum(-1)
    with torch.no_grad():
        reference_w = mean_log_probs(reference, batch.chosen)
        reference_l = mean_log_probs(reference, batch.rejected)
    policy_w = mean_log_probs(policy, batch.chosen)
    policy_l = mean_log_probs(policy, batch.rejected)
    loss = dpo_loss(policy_w, policy_l, reference_w, reference_l, beta)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    chosen, rejected = policy_w - reference_w, policy_l - reference_l
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_token_average",
        ),
        Answer(
            "copia la política en la referencia",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    reference.load_state_dict(policy.state_dict())
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_changes_reference",
        ),
        Answer(
            "clip_grad_value_ en vez de clip_grad_norm_",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_wrong_parameters",
            fails=(_STEP_CLIP,),
        ),
        Answer(
            "precisión en porcentaje",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), 100 * pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="step_accuracy_percent",
            fails=(_STEP_RETURNS,),
        ),
        Answer(
            "precisión al revés",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), pairwise_accuracy(rejected.detach(), chosen.detach())
""",
            mistake="step_accuracy_reversed",
            fails=(_STEP_RETURNS,),
        ),
        Answer(
            "precisión con > (los empates cuentan 0)",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), (chosen > rejected).float().mean().item()
""",
            mistake="step_accuracy_ties",
            fails=(_STEP_RETURNS,),
        ),
        Answer(
            "precisión de después del paso",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    with torch.no_grad():
        after = [implicit_rewards(policy, reference, batch.prompts, y, beta)
                 for y in (batch.chosen, batch.rejected)]
    return loss.item(), pairwise_accuracy(*after)
""",
            mistake="wrong_result",
            fails=(_STEP_RETURNS,),
        ),
        Answer(
            "devuelve solo la pérdida",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()
""",
            mistake="step_returns_not_pair",
            fails=(_STEP_RETURNS,),
        ),
        Answer(
            "la pérdida de después del paso",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    with torch.no_grad():
        after = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
        after = after - implicit_rewards(
            policy, reference, batch.prompts, batch.rejected, beta)
    return (-F.logsigmoid(after).mean()).item(), pairwise_accuracy(
        chosen.detach(), rejected.detach())
""",
            mistake="step_loss_after",
            fails=(_STEP_RETURNS,),
        ),
        Answer(
            "devuelve tensores",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen = implicit_rewards(policy, reference, batch.prompts, batch.chosen, beta)
    rejected = implicit_rewards(policy, reference, batch.prompts, batch.rejected, beta)
    loss = -F.logsigmoid(chosen - rejected).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.detach(), pairwise_accuracy(chosen.detach(), rejected.detach())
""",
            mistake="not_python_number",
            fails=(_STEP_RETURNS,),
        ),
        Answer(
            "precisión sin la referencia",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    answers = (batch.chosen, batch.rejected)
    sequences = [torch.cat([batch.prompts, y], dim=1) for y in answers]
    start = batch.prompts.shape[1]
    policy_w, policy_l = (
        tl.token_log_probs(policy, s, start).sum(-1) for s in sequences)
    with torch.no_grad():
        reference_w, reference_l = (
            tl.token_log_probs(reference, s, start).sum(-1) for s in sequences)
    loss = dpo_loss(policy_w, policy_l, reference_w, reference_l, beta)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), pairwise_accuracy(policy_w.detach(), policy_l.detach())
""",
            mistake="step_accuracy_policy",
            fails=(_STEP_RETURNS,),
        ),
        Answer(
            "referencia con gradiente",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    start = batch.prompts.shape[1]
    def log_probs(model, answers):
        sequences = torch.cat([batch.prompts, answers], dim=1)
        return tl.token_log_probs(model, sequences, start).sum(-1)
    loss = dpo_loss(log_probs(policy, batch.chosen), log_probs(policy, batch.rejected),
                    log_probs(reference, batch.chosen),
                    log_probs(reference, batch.rejected), beta)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), 0.5
""",
            mistake="reference_has_gradient",
            fails=(_STEP, _STEP_CLIP, _STEP_RETURNS),
        ),
    ],
    # El cuestionario: la comprobación visible acepta cualquier respuesta bien
    # escrita, así que las erróneas bien escritas (las de KEY_ONLY) fallan solo en
    # la prueba oculta, con la explicación; las mal escritas, ya en la visible.
    EXPERIMENT: [
        Answer(
            "todas verdaderas",
            'answer_experiment = {"a": True, "b": True, "c": True, "d": True}',
            mistake="statement_c",
        ),
        Answer(
            "sin sobreoptimización",
            'answer_experiment = {"a": True, "b": False, "c": False, "d": True}',
            mistake="statement_b",
        ),
        Answer(
            "la nota no sube",
            'answer_experiment = {"a": False, "b": True, "c": False, "d": False}',
            mistake="statement_a",
        ),
        Answer(
            "sin marcar",
            'answer_experiment = {"a": None, "b": None, "c": None, "d": None}',
            mistake="statement_unmarked",
        ),
        Answer(
            "una lista en vez de un diccionario",
            "answer_experiment = [True, False, False, True]",
            mistake="statements_not_a_dict",
        ),
        Answer(
            "marcas como texto",
            'answer_experiment = {"a": "V", "b": "F", "c": "V", "d": "F"}',
            mistake="statement_not_bool",
        ),
        Answer(
            "una clave en mayúscula",
            'answer_experiment = {"A": True, "b": False, "c": True, "d": False}',
            mistake="statements_wrong_keys",
        ),
    ],
    "optimal_policy": [
        Answer(
            "sin dividir por Z",
            """
def optimal_policy(reference_probs, rewards, beta):
    return reference_probs * torch.exp(rewards / beta)
""",
            mistake="opt_no_partition",
        ),
        Answer(
            "el signo de r al revés",
            """
def optimal_policy(reference_probs, rewards, beta):
    return torch.softmax(torch.log(reference_probs) - rewards / beta, dim=-1)
""",
            mistake="opt_sign",
        ),
        Answer(
            "β multiplicando",
            """
def optimal_policy(reference_probs, rewards, beta):
    weights = reference_probs * torch.exp(beta * rewards)
    return weights / weights.sum()
""",
            mistake="opt_beta_times",
        ),
        Answer(
            "β dividiendo también log π_ref",
            """
def optimal_policy(reference_probs, rewards, beta):
    return torch.softmax((reference_probs.log() + rewards) / beta, dim=-1)
""",
            mistake="opt_beta_whole",
        ),
        Answer(
            "sin la referencia",
            """
def optimal_policy(reference_probs, rewards, beta):
    return torch.softmax(rewards / beta, dim=-1)
""",
            mistake="opt_no_reference",
        ),
        Answer(
            "probabilidades dentro de softmax",
            """
def optimal_policy(reference_probs, rewards, beta):
    return torch.softmax(reference_probs + rewards / beta, dim=-1)
""",
            mistake="opt_probs_not_logs",
        ),
        Answer(
            "la fórmula directa, que desborda",
            """
def optimal_policy(reference_probs, rewards, beta):
    weights = reference_probs * torch.exp(rewards / beta)
    return weights / weights.sum()
""",
            mistake="opt_overflow",
            fails=("optimal_policy_test_stable",),
        ),
        Answer(
            "modifica la entrada",
            """
def optimal_policy(reference_probs, rewards, beta):
    rewards /= beta
    return torch.softmax(torch.log(reference_probs) + rewards, dim=-1)
""",
            mistake="modified_input",
        ),
    ],
}

#: Las erróneas del cuestionario que están bien escritas: las pasa la
#: comprobación visible (no revela la clave) y las caza la prueba oculta.
KEY_ONLY = {"todas verdaderas", "sin sobreoptimización", "la nota no sube"}

RIGHT: dict[str, list[Answer]] = {
    "bradley_terry_loss": [
        Answer(
            "con softplus",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    return F.softplus(rejected_rewards - chosen_rewards).mean()
""",
        ),
        Answer(
            "con logaddexp",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    d = chosen_rewards - rejected_rewards
    return torch.logaddexp(torch.zeros_like(d), -d).mean()
""",
        ),
        Answer(
            "con un bucle sobre los pares",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    total = 0.0
    for chosen, rejected in zip(chosen_rewards, rejected_rewards):
        total = total - F.logsigmoid(chosen - rejected)
    return total / len(chosen_rewards)
""",
        ),
        Answer(
            "suma entre el número de pares",
            """
def bradley_terry_loss(chosen_rewards, rejected_rewards):
    losses = -torch.nn.functional.logsigmoid(chosen_rewards - rejected_rewards)
    return losses.sum() / losses.numel()
""",
        ),
    ],
    "pairwise_accuracy": [
        Answer(
            "con un bucle en Python",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    score = 0.0
    for c, r in zip(chosen_rewards.tolist(), rejected_rewards.tolist()):
        if c > r:
            score += 1.0
        elif c == r:
            score += 0.5
    return score / len(chosen_rewards)
""",
        ),
        Answer(
            "con el signo de la diferencia",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    return ((torch.sign(chosen_rewards - rejected_rewards) + 1) / 2).mean().item()
""",
        ),
        Answer(
            "con NumPy",
            """
def pairwise_accuracy(chosen_rewards, rejected_rewards):
    c, r = chosen_rewards.numpy(), rejected_rewards.numpy()
    return float(np.mean((c > r) + 0.5 * (c == r)))
""",
        ),
    ],
    "dpo_loss": [
        Answer(
            "h agrupado de otra manera, con softplus y torch.square",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    h = (policy_chosen - policy_rejected) - (reference_chosen - reference_rejected)
    if loss_type == "sigmoid":
        return F.softplus(-beta * h).mean()
    return torch.square(h - 0.5 / beta).mean()
""",
        ),
        Answer(
            "con un diccionario de pérdidas",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    chosen_ratio = policy_chosen - reference_chosen
    rejected_ratio = policy_rejected - reference_rejected
    h = chosen_ratio - rejected_ratio
    losses = {
        "sigmoid": lambda: -F.logsigmoid(beta * h),
        "ipo": lambda: (h - 1 / (2 * beta)) ** 2,
    }
    return losses[loss_type]().mean()
""",
        ),
        Answer(
            "con un bucle sobre los pares",
            """
def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected,
             beta, loss_type="sigmoid"):
    terms = []
    for pc, pr, rc, rr in zip(policy_chosen, policy_rejected,
                              reference_chosen, reference_rejected):
        h = (pc - rc) - (pr - rr)
        if loss_type == "ipo":
            terms.append((h - 1 / (2 * beta)) ** 2)
        else:
            terms.append(-F.logsigmoid(beta * h))
    return torch.stack(terms).mean()
""",
        ),
    ],
    "implicit_rewards": [
        Answer(
            "con la máscara multiplicada y .detach()",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    sequences = torch.cat([prompts, completions], dim=1)
    mask = tl.completion_mask(completions)
    pol = (tl.token_log_probs(policy, sequences, prompts.shape[1]) * mask).sum(-1)
    ref = tl.token_log_probs(reference, sequences, prompts.shape[1]).detach()
    return beta * pol - beta * (ref * mask).sum(-1)
""",
        ),
        Answer(
            "respuesta a respuesta",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    rewards = []
    for i in range(prompts.shape[0]):
        sequence = torch.cat([prompts[i:i + 1], completions[i:i + 1]], dim=1)
        with torch.no_grad():
            ref = tl.token_log_probs(reference, sequence, prompts.shape[1]).sum()
        pol = tl.token_log_probs(policy, sequence, prompts.shape[1]).sum()
        rewards.append(beta * (pol - ref))
    return torch.stack(rewards)
""",
        ),
        Answer(
            "con pref.sequence_log_probs",
            """
def implicit_rewards(policy, reference, prompts, completions, beta):
    with torch.no_grad():
        ref = pref.sequence_log_probs(reference, prompts, completions)
    return beta * (pref.sequence_log_probs(policy, prompts, completions) - ref)
""",
        ),
    ],
    # Las correctas del cuestionario dependen de su clave, que vive en el
    # cuaderno de soluciones: ver ``_experiment_right()`` al final.
    "dpo_step": [
        Answer(
            "con implicit_rewards y softplus",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    chosen_rewards = implicit_rewards(policy, reference, batch.prompts, batch.chosen,
                                      beta)
    rejected_rewards = implicit_rewards(policy, reference, batch.prompts,
                                        batch.rejected, beta)
    accuracy = pairwise_accuracy(chosen_rewards.detach(), rejected_rewards.detach())
    loss = F.softplus(rejected_rewards - chosen_rewards).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss), accuracy
""",
        ),
        Answer(
            "con dpo_loss y log-probabilidades",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    start = batch.prompts.shape[1]

    def log_probs(model, answers):
        sequences = torch.cat([batch.prompts, answers], dim=1)
        return tl.token_log_probs(model, sequences, start).sum(dim=-1)

    with torch.no_grad():
        reference_w = log_probs(reference, batch.chosen)
        reference_l = log_probs(reference, batch.rejected)
    policy_w = log_probs(policy, batch.chosen)
    policy_l = log_probs(policy, batch.rejected)
    loss = dpo_loss(policy_w, policy_l, reference_w, reference_l, beta)
    margins = ((policy_w - reference_w) - (policy_l - reference_l)).detach()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
    optimizer.step()
    right = (margins > 0).float() + 0.5 * (margins == 0).float()
    return float(loss), float(right.mean())
""",
        ),
        Answer(
            "con pref.sequence_log_probs y el recorte a mano",
            """
def dpo_step(policy, reference, optimizer, batch, beta, max_grad_norm=1.0):
    with torch.no_grad():
        ref = [pref.sequence_log_probs(reference, batch.prompts, y)
               for y in (batch.chosen, batch.rejected)]
    pol = [pref.sequence_log_probs(policy, batch.prompts, y)
           for y in (batch.chosen, batch.rejected)]
    h = (pol[0] - ref[0]) - (pol[1] - ref[1])
    loss = -F.logsigmoid(beta * h).mean()
    optimizer.zero_grad()
    loss.backward()
    grads = [p.grad for p in policy.parameters() if p.grad is not None]
    norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
    if norm > max_grad_norm:
        for g in grads:
            g.mul_(max_grad_norm / (norm + 1e-6))
    optimizer.step()
    return loss.item(), pairwise_accuracy(beta * (pol[0] - ref[0]).detach(),
                                          beta * (pol[1] - ref[1]).detach())
""",
        ),
    ],
    "optimal_policy": [
        Answer(
            "restando el máximo antes de exp",
            """
def optimal_policy(reference_probs, rewards, beta):
    logits = torch.log(reference_probs) + rewards / beta
    weights = torch.exp(logits - logits.max())
    return weights / weights.sum()
""",
        ),
        Answer(
            "con logsumexp",
            """
def optimal_policy(reference_probs, rewards, beta):
    logits = reference_probs.log() + rewards / beta
    return torch.exp(logits - torch.logsumexp(logits, dim=0))
""",
        ),
    ],
}


RIGHT[EXPERIMENT] = statements_right(MODULE, EXPERIMENT, "answer_experiment")
