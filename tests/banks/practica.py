"""Banco de respuestas del módulo 11 · Tu entrenamiento con TRL."""

from __future__ import annotations

from tests.banks import Answer

MODULE = "11_practica"

# Una pasada del modelo con un hueco para cada error típico: {forward},
# {logits}, {axis} y {result}.
_LOG_PROBS = """
def response_log_probs(model, input_ids, attention_mask, logits_to_keep):
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    out = {forward}
    logits = {logits}
    log_p = torch.log_softmax(logits.float(), dim={axis})
    tokens = input_ids[:, -logits_to_keep:]
    chosen = log_p.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    keep = attention_mask[:, -logits_to_keep:].bool()
    return {result}
"""
_LOG_PROBS_RIGHT = {
    "forward": "model(input_ids=input_ids, attention_mask=attention_mask, "
    "position_ids=position_ids)",
    "logits": "out.logits[:, -logits_to_keep - 1 : -1]",
    "axis": "-1",
    "result": "torch.where(keep, chosen, torch.zeros_like(chosen))",
}


def _log_probs(**changes: str) -> str:
    return _LOG_PROBS.format(**{**_LOG_PROBS_RIGHT, **changes})


# La configuración del objetivo, con un hueco por campo que se confunde.
_CONFIG = """
def make_grpo_config(output_dir):
    return trl.GRPOConfig(
        output_dir={output_dir},
        num_generations={G},
        per_device_train_batch_size={batch},
        loss_type={loss},
        scale_rewards={scale},
        beta={beta},
        num_iterations={mu},
        epsilon=0.2,
        learning_rate={lr},
        lr_scheduler_type="constant",
        max_completion_length=26,
        max_steps=4,
        logging_steps=1,
        seed=0,
        use_cpu=True,
        bf16={bf16},
        save_strategy="no",
        report_to="none",
    )
"""
_CONFIG_RIGHT = {
    "output_dir": "output_dir",
    "G": "4",
    "batch": "32",
    "loss": '"dr_grpo"',
    "scale": '"none"',
    "beta": "0.02",
    "mu": "2",
    "lr": "3e-4",
    "bf16": "False",
}


def _config(**changes: str) -> str:
    return _CONFIG.format(**{**_CONFIG_RIGHT, **changes})


WRONG: dict[str, list[Answer]] = {
    "response_log_probs": [
        Answer(
            "sin position_ids (solo la máscara)",
            _log_probs(
                forward="model(input_ids=input_ids, attention_mask=attention_mask)"
            ),
            mistake="lp_no_position_ids",
        ),
        Answer(
            "sin attention_mask (con las posiciones)",
            _log_probs(forward="model(input_ids=input_ids, position_ids=position_ids)"),
            mistake="lp_no_attention_mask",
        ),
        Answer(
            "model(input_ids) a secas",
            _log_probs(forward="model(input_ids)"),
            mistake="lp_no_mask_no_positions",
        ),
        Answer(
            "lee los logits de las columnas de la respuesta (sin desplazar)",
            _log_probs(logits="out.logits[:, -logits_to_keep:]"),
            mistake="lp_off_by_one",
        ),
        Answer(
            "log_softmax sobre las posiciones",
            _log_probs(axis="1"),
            mistake="lp_softmax_axis",
        ),
        Answer(
            "una sola longitud de enunciado, la de la primera fila",
            """
def response_log_probs(model, input_ids, attention_mask, logits_to_keep):
    prompt_len = int(attention_mask[0, :-logits_to_keep].sum())
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask,
                   position_ids=position_ids).logits
    logits = logits[:, prompt_len - 1 : prompt_len - 1 + logits_to_keep]
    log_p = torch.log_softmax(logits, dim=-1)
    tokens = input_ids[:, -logits_to_keep:]
    chosen = log_p.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    return chosen * attention_mask[:, -logits_to_keep:]
""",
            mistake="lp_one_prompt_length",
        ),
        Answer(
            "no pone 0 en el relleno de la respuesta",
            _log_probs(result="chosen"),
            mistake="lp_padding_not_zero",
        ),
    ],
    "make_grpo_config": [
        Answer(
            "per_device_train_batch_size = 8 enunciados",
            _config(batch="8"),
            mistake="config_batch_counts_prompts",
        ),
        Answer(
            "G y los enunciados cambiados",
            _config(G="8"),
            mistake="config_group_and_batch_swapped",
        ),
        Answer(
            "per_device_train_batch_size = 4 (las respuestas de un enunciado)",
            _config(G="8", batch="4"),
            mistake="config_generations_do_not_divide",
        ),
        Answer(
            "loss_type='grpo' (divide por la longitud de cada respuesta)",
            _config(loss='"grpo"'),
            mistake="config_loss_type",
        ),
        Answer(
            "deja scale_rewards por defecto (divide por σ)",
            _config(scale='"group"'),
            mistake="config_divides_by_std",
        ),
        Answer("sin β", _config(beta="0.0"), mistake="config_no_kl"),
        Answer("μ = 1", _config(mu="1"), mistake="config_one_iteration"),
        Answer("bf16 en la CPU", _config(bf16="True"), mistake="config_bf16"),
        Answer(
            "la tasa de aprendizaje por defecto",
            _config(lr="1e-6"),
            mistake="config_wrong_field",
        ),
        Answer(
            "una carpeta fija",
            _config(output_dir='"runs/practica"'),
            mistake="config_ignores_output_dir",
        ),
        Answer(
            "devuelve un diccionario de opciones",
            """
def make_grpo_config(output_dir):
    return dict(output_dir=output_dir, num_generations=4,
                per_device_train_batch_size=32, loss_type="dr_grpo")
""",
            mistake="config_not_grpo_config",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "response_log_probs": [
        Answer("con torch.where", _log_probs()),
        Answer(
            "con masked_fill, las posiciones con where y logits enteros",
            """
def response_log_probs(model, input_ids, attention_mask, logits_to_keep):
    seen = attention_mask.long().cumsum(dim=1) - 1
    position_ids = torch.where(attention_mask.bool(), seen, torch.zeros_like(seen))
    logits = model(input_ids, attention_mask=attention_mask,
                   position_ids=position_ids).logits
    C = logits_to_keep
    log_p = torch.nn.functional.log_softmax(logits[:, -C - 1 : -1, :], dim=2)
    chosen = torch.gather(log_p, 2, input_ids[:, -C:, None])[..., 0]
    return chosen.masked_fill(attention_mask[:, -C:] == 0, 0.0)
""",
        ),
    ],
    "make_grpo_config": [
        Answer("campo a campo", _config()),
        Answer(
            "con un diccionario y los nombres del curso",
            """
def make_grpo_config(output_dir):
    G, prompts_per_step = 4, 8
    options = {
        "num_generations": G,
        "per_device_train_batch_size": G * prompts_per_step,
        "gradient_accumulation_steps": 1,
        "loss_type": "dr_grpo", "scale_rewards": "none",
        "beta": 0.02, "num_iterations": 2, "epsilon": 0.2,
        "learning_rate": 3e-4, "lr_scheduler_type": "constant",
        "max_completion_length": 26, "temperature": 1.0,
        "max_steps": 4, "logging_steps": 1, "seed": 0,
        "use_cpu": True, "bf16": False,
        "save_strategy": "no", "report_to": [],
    }
    return trl.GRPOConfig(output_dir=output_dir, **options)
""",
        ),
    ],
}
