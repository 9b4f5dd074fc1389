"""Banco de respuestas del módulo 09 · El puente."""

from tests.banks import Answer

MODULE = "09_puente"

_LP = "response_log_probs_test"
_LP_SHAPE = "response_log_probs_test_shape"
_LP_GRAD = "response_log_probs_test_grad"
_MM = "masked_mean_test"
_MM_NONFINITE = "masked_mean_test_nonfinite"
_ACC = "accumulate_gradients_test"
_ACC_MICRO = "accumulate_gradients_test_microbatches"

WRONG: dict[str, list[Answer]] = {
    "response_log_probs": [
        Answer(
            "sin desplazamiento",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len:], dim=-1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1)
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_no_shift",
            fails=(_LP, _LP_GRAD),
        ),
        Answer(
            "desplaza también los tokens",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len - 1:-1], dim=-1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len - 1:-1, None]).squeeze(-1)
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_labels_shifted_too",
            fails=(_LP, _LP_GRAD),
        ),
        Answer(
            "desplazamiento al revés (el token t en los logits de t + 1)",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len:], dim=-1)
    previous = input_ids[:, prompt_len - 1:-1]
    chosen = log_p.gather(-1, previous.unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_shift_backwards",
            fails=(_LP, _LP_GRAD),
        ),
        Answer(
            "el logit sin log_softmax",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    chosen = logits[:, prompt_len - 1:-1].gather(
        -1, input_ids[:, prompt_len:].unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_raw_logits",
            fails=(_LP, _LP_GRAD),
        ),
        Answer(
            "sin máscara",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = torch.log_softmax(logits[:, prompt_len - 1:-1], dim=-1)
    return log_p.gather(-1, input_ids[:, prompt_len:].unsqueeze(-1)).squeeze(-1)
""",
            mistake="lp_unmasked",
        ),
        Answer(
            "log_softmax sobre el lote (dim=0)",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits, dim=0)[:, prompt_len - 1:-1]
    chosen = log_p.gather(2, input_ids[:, prompt_len:, None]).squeeze(2)
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_wrong_dim",
            fails=(_LP, _LP_GRAD),
        ),
        Answer(
            "multiplica por la máscara (−∞ o nan en el relleno)",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len - 1:-1], dim=-1)
    token_lp = log_p.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1)
    return token_lp * mask
""",
            mistake="lp_multiplies_mask",
            fails=(_LP_SHAPE,),
        ),
        Answer(
            "el relleno por el id 0, sin mirar la máscara",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len - 1:-1], dim=-1)
    completions = input_ids[:, prompt_len:]
    chosen = log_p.gather(-1, completions[..., None]).squeeze(-1)
    return torch.where(completions != 0, chosen, torch.zeros_like(chosen))
""",
            mistake="lp_padding_not_zero",
            fails=(_LP_SHAPE,),
        ),
        Answer(
            "softmax en vez de log_softmax",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    p = torch.softmax(logits[:, prompt_len - 1:-1], dim=-1)
    chosen = p.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1)
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_probabilities",
            fails=(_LP, _LP_GRAD),
        ),
        Answer(
            "sin squeeze: (B, T, 1)",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len - 1:-1], dim=-1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len:].unsqueeze(-1))
    return torch.where(mask.bool().unsqueeze(-1), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_wrong_shape",
            fails=(_LP, _LP_SHAPE),
        ),
        Answer(
            "devuelve un array de NumPy",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = F.log_softmax(logits[:, prompt_len - 1:-1], dim=-1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1)
    return torch.where(mask.bool(), chosen, 0.0).detach().numpy()
""",
            mistake="lp_not_a_tensor",
            fails=(_LP_SHAPE, _LP_GRAD),
        ),
        Answer(
            "el denominador sin gradiente (logsumexp con detach)",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    shifted = logits[:, prompt_len - 1:-1]
    norm = torch.logsumexp(shifted.detach(), dim=-1, keepdim=True)
    chosen = (shifted - norm).gather(-1, input_ids[:, prompt_len:, None]).squeeze(-1)
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_wrong_gradient",
            fails=(_LP_GRAD,),
        ),
        Answer(
            "log_softmax sobre las posiciones",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = torch.log_softmax(logits[:, prompt_len - 1:-1], dim=1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len:].unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_wrong_dim",
            fails=(_LP, _LP_GRAD),
        ),
        Answer(
            "sin gradiente (detach)",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    log_p = torch.log_softmax(logits.detach()[:, prompt_len - 1:-1], dim=-1)
    chosen = log_p.gather(-1, input_ids[:, prompt_len:].unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), chosen, torch.zeros_like(chosen))
""",
            mistake="lp_no_gradient",
            fails=(_LP_GRAD,),
        ),
    ],
    "masked_mean": [
        Answer(
            "cuenta el relleno",
            """
def masked_mean(values, mask, dim=None):
    return values.mean() if dim is None else values.mean(dim=dim)
""",
            mistake="mm_counts_padding",
        ),
        Answer(
            "divide entre todas las casillas",
            """
def masked_mean(values, mask, dim=None):
    kept = torch.where(mask.bool(), values, torch.zeros_like(values))
    if dim is None:
        return kept.sum() / mask.numel()
    return kept.sum(dim=dim) / mask.shape[dim]
""",
            mistake="mm_divides_by_all",
        ),
        Answer(
            "multiplica por la máscara (nan en el relleno)",
            """
def masked_mean(values, mask, dim=None):
    if dim is None:
        return (values * mask).sum() / mask.sum()
    return (values * mask).sum(dim=dim) / mask.sum(dim=dim)
""",
            mistake="mm_multiplies_mask",
            fails=(_MM_NONFINITE,),
        ),
        Answer(
            "ignora dim",
            """
def masked_mean(values, mask, dim=None):
    keep = mask.bool()
    return torch.where(keep, values, torch.zeros_like(values)).sum() / keep.sum()
""",
            mistake="mm_ignores_dim",
        ),
        Answer(
            "if not dim: toma dim=0 por None",
            """
def masked_mean(values, mask, dim=None):
    kept = torch.where(mask.bool(), values, torch.zeros_like(values))
    if not dim:
        return kept.sum() / mask.sum()
    return kept.sum(dim=dim) / mask.sum(dim=dim)
""",
            mistake="mm_dim_zero_as_none",
        ),
        Answer(
            "siempre sobre el último eje",
            """
def masked_mean(values, mask, dim=None):
    kept = torch.where(mask.bool(), values, torch.zeros_like(values))
    if dim is None:
        return kept.sum() / mask.sum()
    return kept.sum(dim=-1) / mask.sum(dim=-1)
""",
            mistake="mm_last_axis_only",
        ),
        Answer(
            "modifica la entrada",
            """
def masked_mean(values, mask, dim=None):
    values[~mask.bool()] = 0.0
    if dim is None:
        return values.sum() / mask.sum()
    return values.sum(dim=dim) / mask.sum(dim=dim)
""",
            mistake="modified_input",
        ),
    ],
    "trl_normalize": [
        Answer(
            "grpo y bnpo cambiados",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    kept = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))
    if loss_type == "bnpo":
        return (kept.sum(-1) / mask.sum(-1)).mean()
    if loss_type == "grpo":
        return kept.sum() / mask.sum()
    return kept.sum() / (per_token.shape[0] * max_completion_length)
""",
            mistake="grpo_mean_of_tokens",
            fails=("trl_normalize_test_grpo", "trl_normalize_test_bnpo"),
        ),
        Answer(
            "dr_grpo entre B",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    kept = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))
    if loss_type == "grpo":
        return (kept.sum(-1) / mask.sum(-1)).mean()
    if loss_type == "bnpo":
        return kept.sum() / mask.sum()
    return kept.sum() / per_token.shape[0]
""",
            mistake="dr_grpo_divides_by_batch",
            fails=("trl_normalize_test_dr_grpo",),
        ),
        Answer(
            "dr_grpo entre B · T",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    kept = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))
    if loss_type == "grpo":
        return (kept.sum(-1) / mask.sum(-1)).mean()
    if loss_type == "bnpo":
        return kept.sum() / mask.sum()
    return kept.sum() / kept.numel()
""",
            mistake="dr_grpo_divides_by_width",
            fails=("trl_normalize_test_dr_grpo",),
        ),
        Answer(
            "grpo dividiendo entre T",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    kept = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))
    if loss_type == "grpo":
        return (kept.sum(-1) / per_token.shape[-1]).mean()
    if loss_type == "bnpo":
        return kept.sum() / mask.sum()
    return kept.sum() / (per_token.shape[0] * max_completion_length)
""",
            mistake="grpo_divides_by_width",
            fails=("trl_normalize_test_grpo",),
        ),
        Answer(
            "bnpo como la media de las medias",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    kept = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))
    if loss_type in ("grpo", "bnpo"):
        return (kept.sum(-1) / mask.sum(-1)).mean()
    return kept.sum() / (per_token.shape[0] * max_completion_length)
""",
            mistake="bnpo_mean_of_means",
            fails=("trl_normalize_test_bnpo",),
        ),
        Answer(
            "dr_grpo entre los tokens válidos",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    if loss_type == "grpo":
        return masked_mean(per_token, mask, dim=-1).mean()
    return masked_mean(per_token, mask)
""",
            mistake="dr_grpo_divides_by_tokens",
            fails=("trl_normalize_test_dr_grpo",),
        ),
        Answer(
            "devuelve un float (.item())",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    kept = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))
    if loss_type == "grpo":
        loss = (kept.sum(-1) / mask.sum(-1)).mean()
    elif loss_type == "bnpo":
        loss = kept.sum() / mask.sum()
    else:
        loss = kept.sum() / (per_token.shape[0] * max_completion_length)
    return loss.item()
""",
            mistake="norm_no_gradient",
        ),
        Answer(
            "multiplica por la máscara (nan en el relleno)",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    kept = per_token * mask
    if loss_type == "grpo":
        return (kept.sum(-1) / mask.sum(-1)).mean()
    if loss_type == "bnpo":
        return kept.sum() / mask.sum()
    return kept.sum() / (per_token.shape[0] * max_completion_length)
""",
            mistake="norm_multiplies_mask",
        ),
    ],
    "accumulate_gradients": [
        Answer(
            "media de las medias de cada micro-lote",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    size = input_ids.shape[0] // num_microbatches
    total = 0.0
    for start in range(0, input_ids.shape[0], size):
        ids, m = input_ids[start:start + size], mask[start:start + size]
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        adv = advantages[start:start + size]
        loss = -(adv[:, None] * lp * m).sum() / m.sum() / num_microbatches
        loss.backward()
        total += loss.item()
    return total
""",
            mistake="acc_mean_of_means",
            fails=(_ACC, _ACC_MICRO),
        ),
        Answer(
            "zero_grad dentro del bucle",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    size = input_ids.shape[0] // num_microbatches
    total = 0.0
    for start in range(0, input_ids.shape[0], size):
        model.zero_grad()
        ids, m = input_ids[start:start + size], mask[start:start + size]
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        loss = -(advantages[start:start + size, None] * lp * m).sum() / mask.sum()
        loss.backward()
        total += loss.item()
    return total
""",
            mistake="acc_zero_grad_inside",
            fails=(_ACC, _ACC_MICRO),
        ),
        Answer(
            "el lote entero de una vez",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    lp = response_log_probs(model(input_ids).logits, input_ids, prompt_len, mask)
    loss = -(advantages[:, None] * lp * mask).sum() / mask.sum()
    loss.backward()
    return loss.item()
""",
            mistake="acc_forward_sizes",
            fails=(_ACC_MICRO,),
        ),
        Answer(
            "devuelve un tensor",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    size = input_ids.shape[0] // num_microbatches
    total = 0.0
    for start in range(0, input_ids.shape[0], size):
        ids, m = input_ids[start:start + size], mask[start:start + size]
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        loss = -(advantages[start:start + size, None] * lp * m).sum() / mask.sum()
        loss.backward()
        total = total + loss.detach()
    return total
""",
            mistake="not_python_number",
            fails=(_ACC_MICRO,),
        ),
        Answer(
            "cada micro-lote entre sus propios tokens",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    size = input_ids.shape[0] // num_microbatches
    total = 0.0
    for start in range(0, input_ids.shape[0], size):
        ids, m = input_ids[start:start + size], mask[start:start + size]
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        loss = -(advantages[start:start + size, None] * lp).sum() / m.sum()
        loss.backward()
        total += loss.item()
    return total
""",
            mistake="acc_local_tokens",
            fails=(_ACC, _ACC_MICRO),
        ),
        Answer(
            "log-probabilidades a mano, sin la máscara",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    size = input_ids.shape[0] // num_microbatches
    total = 0.0
    for start in range(0, input_ids.shape[0], size):
        ids = input_ids[start:start + size]
        log_p = F.log_softmax(model(ids).logits[:, prompt_len - 1:-1], dim=-1)
        lp = log_p.gather(-1, ids[:, prompt_len:, None]).squeeze(-1)
        loss = -(advantages[start:start + size, None] * lp).sum() / mask.sum()
        loss.backward()
        total += loss.item()
    return total
""",
            mistake="acc_counts_padding",
            fails=(_ACC, _ACC_MICRO),
        ),
        Answer(
            "sin dividir entre los tokens",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    total = 0.0
    for ids, m, adv in zip(input_ids.chunk(num_microbatches),
                           mask.chunk(num_microbatches),
                           advantages.chunk(num_microbatches)):
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        loss = -(adv[:, None] * lp).sum()
        loss.backward()
        total += loss.item()
    return total
""",
            mistake="acc_no_divisor",
            fails=(_ACC, _ACC_MICRO),
        ),
        Answer(
            "cada respuesta entre su longitud (la normalización de grpo)",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    size = input_ids.shape[0] // num_microbatches
    total = 0.0
    for start in range(0, input_ids.shape[0], size):
        ids, m = input_ids[start:start + size], mask[start:start + size]
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        per_answer = (lp * m).sum(-1) / m.sum(-1)
        adv = advantages[start:start + size]
        loss = -(adv * per_answer).sum() / input_ids.shape[0]
        loss.backward()
        total += loss.item()
    return total
""",
            mistake="acc_wrong_gradients",
            fails=(_ACC, _ACC_MICRO),
        ),
        Answer(
            "un solo backward al final",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    size = input_ids.shape[0] // num_microbatches
    n_tokens = mask.sum()
    loss = 0.0
    for start in range(0, input_ids.shape[0], size):
        ids, m = input_ids[start:start + size], mask[start:start + size]
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        loss = loss - (advantages[start:start + size, None] * lp).sum() / n_tokens
    loss.backward()
    return loss.item()
""",
            mistake="acc_backward_per_microbatch",
            fails=(_ACC_MICRO,),
        ),
        Answer(
            "micro-lotes con paso k (input_ids[j::k])",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    k = num_microbatches
    n_tokens = mask.sum()
    total = 0.0
    for j in range(k):
        ids, m = input_ids[j::k], mask[j::k]
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        loss = -(advantages[j::k, None] * lp).sum() / n_tokens
        loss.backward()
        total += loss.item()
    return total
""",
            mistake="acc_strided_microbatches",
            fails=(_ACC_MICRO,),
        ),
        Answer(
            "devuelve la media de las pérdidas",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    n_tokens = mask.sum()
    losses = []
    for ids, m, adv in zip(input_ids.chunk(num_microbatches),
                           mask.chunk(num_microbatches),
                           advantages.chunk(num_microbatches)):
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        loss = -(adv[:, None] * lp).sum() / n_tokens
        loss.backward()
        losses.append(loss.item())
    return sum(losses) / len(losses)
""",
            mistake="acc_wrong_value",
            fails=(_ACC_MICRO,),
        ),
        Answer(
            "zero_grad antes del bucle",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    model.zero_grad()
    n_tokens = mask.sum()
    total = 0.0
    for ids, m, adv in zip(input_ids.chunk(num_microbatches),
                           mask.chunk(num_microbatches),
                           advantages.chunk(num_microbatches)):
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        loss = -(adv[:, None] * lp).sum() / n_tokens
        loss.backward()
        total += loss.item()
    return total
""",
            mistake="acc_resets_grad",
            fails=(_ACC_MICRO,),
        ),
        Answer(
            "sin el signo menos",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    size = input_ids.shape[0] // num_microbatches
    total = 0.0
    for start in range(0, input_ids.shape[0], size):
        ids, m = input_ids[start:start + size], mask[start:start + size]
        lp = response_log_probs(model(ids).logits, ids, prompt_len, m)
        loss = (advantages[start:start + size, None] * lp * m).sum() / mask.sum()
        loss.backward()
        total += loss.item()
    return total
""",
            mistake="acc_sign",
        ),
    ],
    "informative_groups": [
        Answer(
            "media entre 0 y 1",
            """
def informative_groups(rewards, group_size):
    means = rewards.view(-1, group_size).mean(dim=1)
    return ((means > 0) & (means < 1)).repeat_interleave(group_size)
""",
            mistake="ig_mixed_binary",
        ),
        Answer(
            "uno por grupo",
            """
def informative_groups(rewards, group_size):
    return rewards.view(-1, group_size).std(dim=1) > 0
""",
            mistake="ig_per_group",
        ),
        Answer(
            "grupos en mosaico",
            """
def informative_groups(rewards, group_size):
    groups = rewards.reshape(group_size, -1).T
    return (groups.max(dim=1).values > groups.min(dim=1).values).repeat(group_size)
""",
            mistake="ig_tiled",
        ),
        Answer(
            "desviación típica del grupo distinta de 0",
            """
def informative_groups(rewards, group_size):
    std = rewards.view(-1, group_size).std(dim=1)
    return (std != 0).repeat_interleave(group_size)
""",
            mistake="ig_std_rounding",
        ),
        Answer(
            "desviación típica de todo el lote",
            """
def informative_groups(rewards, group_size):
    has_signal = bool(rewards.std() > 0)
    return torch.full(rewards.shape, has_signal)
""",
            mistake="ig_batch_std",
        ),
        Answer(
            "al revés",
            """
def informative_groups(rewards, group_size):
    groups = rewards.reshape(-1, group_size)
    same = (groups == groups[:, :1]).all(dim=1)
    return same.repeat_interleave(group_size)
""",
            mistake="ig_inverse",
        ),
        Answer(
            "floats en vez de booleanos",
            """
def informative_groups(rewards, group_size):
    groups = rewards.reshape(-1, group_size)
    varied = (groups.max(dim=1).values - groups.min(dim=1).values > 0).float()
    return varied.repeat_interleave(group_size)
""",
            mistake="ig_not_bool",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "response_log_probs": [
        Answer(
            "con un bucle por posición",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    B, T = mask.shape
    out = torch.zeros(B, T, dtype=logits.dtype)
    columns = []
    for j in range(T):
        log_p = torch.log_softmax(logits[:, prompt_len + j - 1], dim=-1)
        token = input_ids[:, prompt_len + j]
        columns.append(log_p[torch.arange(B), token])
    out = torch.stack(columns, dim=1)
    return torch.where(mask > 0, out, torch.zeros_like(out))
""",
        ),
        Answer(
            "log(softmax) y masked_fill",
            """
def response_log_probs(logits, input_ids, prompt_len, mask):
    shifted = logits[:, prompt_len - 1 : input_ids.shape[1] - 1]
    probs = torch.softmax(shifted, dim=-1)
    chosen = torch.log(probs.gather(2, input_ids[:, prompt_len:, None]))[..., 0]
    return chosen.masked_fill(mask == 0, 0.0)
""",
        ),
    ],
    "masked_mean": [
        Answer(
            "con masked_fill",
            """
def masked_mean(values, mask, dim=None):
    kept = values.masked_fill(mask == 0, 0.0)
    count = mask.sum() if dim is None else mask.sum(dim=dim)
    total = kept.sum() if dim is None else kept.sum(dim=dim)
    return total / count
""",
        ),
        Answer(
            "con nan_to_num y where",
            """
def masked_mean(values, mask, dim=None):
    keep = mask > 0.5
    clean = torch.where(keep, values, torch.tensor(0.0))
    if dim is None:
        return clean.sum() / keep.float().sum()
    return clean.sum(dim) / keep.float().sum(dim)
""",
        ),
    ],
    "trl_normalize": [
        Answer(
            "sin masked_mean",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    kept = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))
    if loss_type == "grpo":
        return (kept.sum(dim=1) / mask.sum(dim=1)).mean()
    if loss_type == "bnpo":
        return kept.sum() / mask.sum()
    if loss_type == "dr_grpo":
        return kept.sum() / (len(per_token) * max_completion_length)
    raise ValueError(loss_type)
""",
        ),
        Answer(
            "con un diccionario de funciones",
            """
def trl_normalize(per_token, mask, loss_type, max_completion_length):
    B = per_token.shape[0]
    options = {
        "grpo": lambda: masked_mean(per_token, mask, dim=-1).mean(),
        "bnpo": lambda: masked_mean(per_token, mask),
        "dr_grpo": lambda: masked_mean(per_token, mask) * mask.sum()
        / (B * max_completion_length),
    }
    return options[loss_type]()
""",
        ),
    ],
    "accumulate_gradients": [
        Answer(
            "con chunk",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    n_tokens = mask.sum()
    value = 0.0
    for ids, m, adv in zip(input_ids.chunk(num_microbatches),
                           mask.chunk(num_microbatches),
                           advantages.chunk(num_microbatches)):
        lp = response_log_probs(model(input_ids=ids).logits, ids, prompt_len, m)
        part = -(adv.unsqueeze(1) * lp * m).sum() / n_tokens
        part.backward()
        value += float(part)
    return value
""",
        ),
        Answer(
            "con índices y la pérdida por token",
            """
def accumulate_gradients(model, input_ids, prompt_len, mask, advantages,
                         num_microbatches):
    B = input_ids.shape[0]
    size = B // num_microbatches
    denominator = float(mask.sum())
    losses = []
    for j in range(num_microbatches):
        rows = torch.arange(j * size, (j + 1) * size)
        logits = model(input_ids[rows]).logits
        lp = response_log_probs(logits, input_ids[rows], prompt_len, mask[rows])
        per_token = -advantages[rows].detach().reshape(-1, 1) * lp
        loss = torch.where(mask[rows] > 0, per_token, 0.0).sum() / denominator
        loss.backward()
        losses.append(loss.item())
    return sum(losses)
""",
        ),
    ],
    "informative_groups": [
        Answer(
            "con max y min",
            """
def informative_groups(rewards, group_size):
    groups = rewards.view(-1, group_size)
    varied = groups.max(dim=1).values != groups.min(dim=1).values
    return varied.repeat_interleave(group_size)
""",
        ),
        Answer(
            "con un bucle",
            """
def informative_groups(rewards, group_size):
    flags = []
    for start in range(0, len(rewards), group_size):
        group = rewards[start:start + group_size].tolist()
        flags += [len(set(group)) > 1] * group_size
    return torch.tensor(flags, dtype=torch.bool)
""",
        ),
    ],
}
