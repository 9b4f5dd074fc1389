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


# Las recompensas: una con math-verify bien hecha, con huecos para los errores.
_CORRECTNESS = """
import warnings

from math_verify import parse, verify


def correctness_reward(completions, answer, **kwargs):
    rewards, bad = [], []
    for i, (completion, gold) in enumerate(zip(completions, answer)):
        text = {text}
        gold_parsed = parse(str(gold))
        if not gold_parsed:
            bad.append(i)
            rewards.append(0.0)
            continue
        rewards.append({paid})
    {report}
    return {result}
"""
_CORRECTNESS_RIGHT = {
    "text": 'completion[-1]["content"] if isinstance(completion, list) else completion',
    "paid": "1.0 if verify(gold_parsed, parse(text)) else 0.0",
    "report": 'if bad:\n        warnings.warn(f"referencias ilegibles: {bad}")',
    "result": "rewards",
}


def _correctness(**changes: str) -> str:
    return _CORRECTNESS.format(**{**_CORRECTNESS_RIGHT, **changes})


_FORMAT = """
import re


def format_reward(completions, **kwargs):
    rewards = []
    for completion in completions:
        text = {text}
        rewards.append(1.0 if {test} else 0.0)
    return {result}
"""
_FORMAT_RIGHT = {
    "text": 'completion[-1]["content"] if isinstance(completion, list) else completion',
    "test": r're.fullmatch(r".*(=\d+|\\boxed\{.+\})\s*\.?\s*", text, re.DOTALL)',
    "result": "rewards",
}


def _format(**changes: str) -> str:
    return _FORMAT.format(**{**_FORMAT_RIGHT, **changes})


_TRAINER = """
from transformers import AutoModelForCausalLM, AutoTokenizer


def make_trainer(model_path, dataset, config):
    model = {model}
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    return {cls}(
        model=model,
        reward_funcs={rewards},
        args={args},
        train_dataset={data},
        processing_class=tokenizer,
    )
"""
_TRAINER_RIGHT = {
    "model": "AutoModelForCausalLM.from_pretrained(model_path)",
    "cls": "trl.GRPOTrainer",
    "rewards": "[correctness_reward, format_reward]",
    "args": "config",
    "data": "dataset",
}


def _trainer(**changes: str) -> str:
    return _TRAINER.format(**{**_TRAINER_RIGHT, **changes})


WRONG["correctness_reward"] = [
    Answer(
        "compara parse(gold) == parse(respuesta): [] == [] paga",
        """
from math_verify import parse


def correctness_reward(completions, answer, **kwargs):
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    return [1.0 if parse(str(g)) == parse(t) else 0.0 for t, g in zip(texts, answer)]
""",
        mistake="correctness_pays_unparsable_gold",
    ),
    Answer(
        "busca la referencia como subcadena",
        """
def correctness_reward(completions, answer, **kwargs):
    rewards = []
    for completion, gold in zip(completions, answer):
        if isinstance(completion, list):
            completion = completion[0]["content"]
        rewards.append(1.0 if str(gold) in completion else 0.0)
    return rewards
""",
        mistake="correctness_substring",
    ),
    Answer(
        "no avisa de las referencias ilegibles",
        _correctness(report="pass"),
        mistake="correctness_silent_unparsable",
    ),
    Answer(
        "sin **kwargs",
        _correctness().replace("answer, **kwargs)", "answer)"),
        mistake="reward_no_kwargs",
    ),
    Answer(
        "trata cada respuesta como texto",
        _correctness(text="completion"),
        mistake="reward_ignores_conversation",
    ),
    Answer(
        "lee el número tras el último «=» con float()",
        """
def correctness_reward(completions, answer, **kwargs):
    rewards = []
    for completion, gold in zip(completions, answer):
        if isinstance(completion, list):
            completion = completion[-1]["content"]
        number = float(completion.split("=")[-1].rstrip("."))
        rewards.append(1.0 if number == float(gold) else 0.0)
    return rewards
""",
        mistake="reward_raises_on_garbage",
    ),
    Answer(
        "compara el texto tras el último «=» con la referencia",
        """
def correctness_reward(completions, answer, **kwargs):
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    return [1.0 if t.split("=")[-1] == str(g) else 0.0 for t, g in zip(texts, answer)]
""",
        mistake="correctness_wrong_value",
    ),
]
WRONG["format_reward"] = [
    Answer(
        "fullmatch sin re.DOTALL",
        _format(test=r're.fullmatch(r".*(=\d+|\\boxed\{.+\})\s*\.?\s*", text)'),
        mistake="format_no_dotall",
    ),
    Answer(
        "exige el «.» final",
        _format(test=r're.search(r"(=\d+|\\boxed\{.+\})\s*\.\s*$", text, re.DOTALL)'),
        mistake="format_requires_dot",
    ),
    Answer(
        "mira solo si hay un «=»",
        _format(test='"=" in text or "\\\\boxed{" in text'),
        mistake="format_wrong_value",
    ),
    Answer(
        "devuelve un tensor",
        _format(result="torch.tensor(rewards)"),
        mistake="reward_returns_tensor",
    ),
    Answer(
        "olvida el return",
        _format(result="None"),
        mistake="reward_returns_none",
    ),
    Answer(
        "devuelve la media del lote",
        _format(result="sum(rewards) / len(rewards)"),
        mistake="reward_not_a_list",
    ),
    Answer(
        "trata cada respuesta como texto",
        _format(text="completion.strip()"),
        mistake="reward_ignores_conversation",
    ),
]
WRONG["make_trainer"] = [
    Answer(
        "el modelo con las ayudas del curso",
        _trainer(model="hp.load_pretrained_gpt2()"),
        mistake="trainer_other_model",
    ),
    Answer(
        "solo la recompensa de corrección",
        _trainer(rewards="[correctness_reward]"),
        mistake="trainer_rewards",
    ),
    Answer(
        "las recompensas en otro orden",
        _trainer(rewards="[format_reward, correctness_reward]"),
        mistake="trainer_rewards",
    ),
    Answer(
        "construye su propia configuración",
        _trainer(args='make_grpo_config("runs/practica")'),
        mistake="trainer_ignores_config",
    ),
    Answer(
        "su propio conjunto de datos",
        _trainer(data="prompts.chat_dataset(prompts.practice_problems(8, seed=0))"),
        mistake="trainer_dataset",
    ),
    Answer(
        "devuelve el modelo en vez del entrenador",
        """
from transformers import AutoModelForCausalLM


def make_trainer(model_path, dataset, config):
    model = AutoModelForCausalLM.from_pretrained(model_path)
    trainer = trl.GRPOTrainer(model=model, args=config, train_dataset=dataset,
                              reward_funcs=[correctness_reward, format_reward])
    return trainer.model
""",
        mistake="trainer_not_grpo_trainer",
    ),
]
RIGHT["correctness_reward"] = [
    Answer("con el molde y warnings.warn", _correctness()),
    Answer(
        "con la métrica de TRL y un aviso",
        """
import warnings

import math_verify


def correctness_reward(completions, answer, **kwargs):
    def text_of(completion):
        if isinstance(completion, str):
            return completion
        return "".join(message.get("content") or "" for message in completion)

    golds = [math_verify.parse(str(g)) for g in answer]
    rewards = [
        float(bool(g) and math_verify.verify(g, math_verify.parse(text_of(c))))
        for c, g in zip(completions, golds, strict=True)
    ]
    missing = sum(1 for g in golds if not g)
    if missing:
        warnings.warn(f"{missing} referencias no se pueden leer y pagan 0")
    log_metric = kwargs.get("log_metric")
    if log_metric is not None:
        log_metric("unparsable_gold", missing / len(golds))
    return rewards
""",
    ),
]
RIGHT["format_reward"] = [
    Answer("fullmatch con re.DOTALL", _format()),
    Answer(
        "re.search del final, sin DOTALL (no le hace falta)",
        r"""
import re

ENDING = re.compile(r"(=[0-9]+|\\boxed\{.+\})\s*\.?\s*$")


def format_reward(completions, **kwargs):
    texts = []
    for c in completions:
        texts.append(c if isinstance(c, str) else c[-1]["content"])
    return [float(ENDING.search(t) is not None) for t in texts]
""",
    ),
]
RIGHT["make_trainer"] = [
    Answer("con nombres", _trainer()),
    Answer(
        "sin pasar el tokenizador (TRL lo carga de la carpeta del modelo)",
        """
from transformers import AutoModelForCausalLM


def make_trainer(model_path, dataset, config):
    return trl.GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(model_path),
        [correctness_reward, format_reward],
        args=config,
        train_dataset=dataset,
    )
""",
    ),
]

# Los diagnósticos: la respuesta buena con un cambio cada vez (la confusión
# típica de cada ejecución). Solo falla la celda de la ejecución cambiada.
_DIAGNOSES = {
    "A": "zero_std",
    "C": "kl_summed",
    "D": "temperature",
    "E": "unparsable_gold",
    "F": "lora_lr",
    "G": "high_lr",
    "H": "truncation",
}


def _diagnoses(**changes: str) -> str:
    return f"diagnoses = { ({**_DIAGNOSES, **changes})!r}\n"


def _one_wrong(name: str, run_id: str, failure: str) -> Answer:
    return Answer(
        name,
        _diagnoses(**{run_id: failure}),
        mistake=f"diagnosis_{failure}",
        fails=(f"diagnoses_{run_id.lower()}_test",),
    )


WRONG["diagnoses"] = [
    _one_wrong("cortadas leídas como grupos sin varianza", "H", "zero_std"),
    _one_wrong(
        "grupos iguales leídos como recompensa que paga de más", "A", "unparsable_gold"
    ),
    _one_wrong("LoRA con tasa baja leída como sana", "F", "sana"),
    _one_wrong("KL sumada leída como tasa alta", "C", "high_lr"),
    _one_wrong("temperatura leída como KL sumada", "D", "kl_summed"),
    _one_wrong("tasa alta leída como grupos sin varianza", "G", "zero_std"),
    _one_wrong("referencias ilegibles leídas como temperatura", "E", "temperature"),
    _one_wrong("LoRA con tasa baja leída como grupos sin varianza", "F", "zero_std"),
    _one_wrong("cortadas leídas como LoRA", "H", "lora_lr"),
    _one_wrong("KL sumada leída como cortadas", "C", "truncation"),
    Answer(
        "falta una ejecución",
        "diagnoses = {'A': 'zero_std', 'C': 'kl_summed', 'D': 'temperature'}\n",
        mistake="diagnoses_missing_run",
    ),
    Answer(
        "un fallo que no está en la lista",
        _diagnoses(D="temperatura"),
        mistake="diagnoses_unknown_failure",
    ),
    Answer(
        "una lista en vez de un diccionario",
        "diagnoses = list(" + repr(list(_DIAGNOSES.values())) + ")\n",
        mistake="diagnoses_not_a_dict",
    ),
]
RIGHT["diagnoses"] = [
    Answer("el diccionario escrito", _diagnoses()),
    Answer(
        "empezando por la plantilla",
        "diagnoses = {run_id: None for run_id in runs.diagnosis_runs()}\n"
        + "".join(f"diagnoses[{k!r}] = {v!r}\n" for k, v in _DIAGNOSES.items()),
    ),
]

# El entrenador de DPO, con un hueco por campo que se confunde.
_DPO = """
def make_dpo_trainer(model, ref_model, dataset, loss_type, beta, output_dir):
    config = trl.DPOConfig(
        output_dir={output_dir},
        loss_type={loss_type},
        beta={beta},
        per_device_train_batch_size=16,
        learning_rate={lr},
        {scheduler}
        num_train_epochs=4,
        logging_strategy="epoch",
        use_cpu=True,
        {bf16}
        seed=0,
        save_strategy="no",
        report_to="none",
    )
    return trl.DPOTrainer(
        model=model,
        {ref}
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
"""
_DPO_RIGHT = {
    "output_dir": "output_dir",
    "loss_type": "loss_type",
    "beta": "beta",
    "lr": "2e-4",
    "scheduler": 'lr_scheduler_type="constant",',
    "bf16": "bf16=False,",
    "ref": "ref_model=ref_model,",
}


def _dpo(**changes: str) -> str:
    return _DPO.format(**{**_DPO_RIGHT, **changes})


WRONG["make_dpo_trainer"] = [
    Answer("sin ref_model", _dpo(ref=""), mistake="dpo_ref_model"),
    Answer(
        "loss_type fijo",
        _dpo(loss_type='"sigmoid"'),
        mistake="dpo_loss_type_ignored",
    ),
    Answer("β fija", _dpo(beta="0.1"), mistake="dpo_beta_ignored"),
    Answer(
        "el calendario por defecto (lineal)",
        _dpo(scheduler=""),
        mistake="dpo_scheduler",
    ),
    Answer("sin bf16=False", _dpo(bf16=""), mistake="dpo_bf16"),
    Answer("la tasa por defecto", _dpo(lr="1e-6"), mistake="dpo_wrong_field"),
    Answer(
        "una carpeta fija",
        _dpo(output_dir='"runs/dpo"'),
        mistake="dpo_ignores_output_dir",
    ),
    Answer(
        "devuelve la configuración",
        """
def make_dpo_trainer(model, ref_model, dataset, loss_type, beta, output_dir):
    return trl.DPOConfig(output_dir=output_dir, loss_type=loss_type, beta=beta,
                         use_cpu=True, bf16=False)
""",
        mistake="dpo_not_a_trainer",
    ),
    Answer(
        "vuelve a cargar el SFT como política",
        _dpo().replace("model=model,", "model=hp.load_pretrained_gpt2(),", 1),
        mistake="dpo_other_model",
    ),
]
RIGHT["make_dpo_trainer"] = [
    Answer("con nombres", _dpo()),
    Answer(
        "con un diccionario y loss_type en lista",
        """
def make_dpo_trainer(model, ref_model, dataset, loss_type, beta, output_dir):
    options = dict(
        per_device_train_batch_size=16, learning_rate=2e-4,
        lr_scheduler_type="constant", num_train_epochs=4,
        logging_strategy="epoch", use_cpu=True, bf16=False, seed=0,
        save_strategy="no", report_to=[],
    )
    args = trl.DPOConfig(output_dir, loss_type=[loss_type], beta=beta, **options)
    return trl.DPOTrainer(model, ref_model, args=args, train_dataset=dataset,
                          processing_class=make_tokenizer())
""",
    ),
]
