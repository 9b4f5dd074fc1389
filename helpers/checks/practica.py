"""Comprobaciones del módulo 11 · Tu entrenamiento con TRL: una por celda
calificada, en el orden del cuaderno.

Aquí el estudiante escribe objetos de TRL (``GRPOConfig``, ``GRPOTrainer``),
así que las comprobaciones miran sus campos y lo que significan, no valores
de una fórmula. Cada error típico es una fila (``Mistake``) cuya variante es
lo que escribiría quien lo comete; la fila explica el fallo si, en los campos
que su variante cambia, la respuesta del estudiante dice lo mismo que ella.
TRL y transformers se importan solo al comprobar: importar este módulo no los
carga.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

from helpers.checks import Mistake, exercise, fail, variant_of

MODULE = "11_practica"

# Ejercicio · La configuración de GRPO

#: El objetivo del curso para el entrenamiento del cuaderno, con los nombres
#: de TRL: lo que debe decir la ``GRPOConfig`` del estudiante. El enunciado lo
#: cuenta con las palabras del curso (G, enunciados por paso, ÷σ, β, μ...).
GROUP_SIZE = 4  # G: respuestas por enunciado
PROMPTS_PER_STEP = 8  # enunciados por paso del optimizador
OBJECTIVE: dict[str, Any] = {
    "num_generations": GROUP_SIZE,
    "per_device_train_batch_size": GROUP_SIZE * PROMPTS_PER_STEP,
    "gradient_accumulation_steps": 1,
    "loss_type": "dr_grpo",
    "scale_rewards": "none",
    "beta": 0.02,
    "num_iterations": 2,
    "epsilon": 0.2,
    "learning_rate": 3e-4,
    "lr_scheduler_type": "constant",
    "max_completion_length": 26,
    "temperature": 1.0,
    "max_steps": 4,
    "logging_steps": 1,
    "seed": 0,
    "use_cpu": True,
    "bf16": False,
    "report_to": "none",
    "save_strategy": "no",
}
"""Los campos de la referencia de ``make_grpo_config`` (más ``output_dir``)."""

#: Cómo se lee cada campo, para los mensajes: el nombre del curso.
_MEANING = {
    "num_generations": "G, las respuestas por enunciado",
    "per_device_train_batch_size": "las respuestas (no los enunciados) por paso",
    "gradient_accumulation_steps": "los micro-lotes por paso",
    "loss_type": "la normalización de la pérdida",
    "scale_rewards": "si la ventaja se divide por σ",
    "beta": "β, el peso de la penalización KL",
    "num_iterations": "μ, las pasadas por cada lote generado",
    "epsilon": "ε, el recorte del cociente",
    "learning_rate": "la tasa de aprendizaje",
    "lr_scheduler_type": "el calendario de la tasa de aprendizaje",
    "max_completion_length": "la longitud máxima de una respuesta",
    "temperature": "la temperatura de muestreo",
    "max_steps": "los pasos del optimizador",
    "logging_steps": "cada cuántos pasos se registra",
    "seed": "la semilla",
    "use_cpu": "entrenar en la CPU",
    "bf16": "bf16 (la CPU del curso entrena en float32)",
    "report_to": "a dónde van los registros",
    "save_strategy": "cuándo se guardan puntos de control",
    "output_dir": "la carpeta de salida",
}


@contextlib.contextmanager
def _quiet_hf() -> Iterator[None]:
    """Sin barras de progreso ni avisos de transformers, TRL y datasets: una
    celda de pruebas no debe escribir nada en stderr."""
    import datasets
    import transformers

    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        transformers.logging.set_verbosity(level)


def _config(output_dir: str, **changes: Any) -> Any:
    """La ``GRPOConfig`` del objetivo, con ``changes`` encima (las variantes)."""
    import trl

    options = {**OBJECTIVE, "output_dir": output_dir, **changes}
    with _quiet_hf():
        return trl.GRPOConfig(**options)


def reference_grpo_config(output_dir: str) -> Any:
    """La referencia de ``make_grpo_config``: el objetivo del curso."""
    return _config(output_dir)


def _field(config: Any, name: str) -> Any:
    """El valor de un campo, comparable: los enums de transformers como su
    texto y ``report_to`` como lista."""
    value = getattr(config, name, None)
    value = getattr(value, "value", value)
    if name == "report_to":
        value = [] if value in (None, "none", ["none"]) else list(value)
    if isinstance(value, float | int) and not isinstance(value, bool):
        value = float(value)
    return value


def config_fields(config: Any) -> dict[str, Any]:
    """Los campos que mira la comprobación, más el lote de generación."""
    names = [*OBJECTIVE, "output_dir", "generation_batch_size"]
    return {name: _field(config, name) for name in names}


CONFIG_MISTAKES = [
    Mistake(
        "config_batch_counts_prompts",
        variant_of(_config, per_device_train_batch_size=PROMPTS_PER_STEP),
        "per_device_train_batch_size cuenta respuestas, no enunciados: con G "
        "respuestas por enunciado, 8 enunciados por paso son 8 · G respuestas. "
        "TRL reparte ese lote en grupos de num_generations, así que con 8 "
        "tendrías solo 8 / G enunciados por paso.",
    ),
    Mistake(
        "config_group_and_batch_swapped",
        variant_of(_config, num_generations=PROMPTS_PER_STEP),
        "num_generations es G, las respuestas por enunciado; los enunciados por "
        "paso salen de dividir el lote de respuestas (per_device_train_batch_size"
        " por los micro-lotes) entre num_generations.",
    ),
    Mistake(
        "config_loss_type",
        variant_of(_config, loss_type="grpo"),
        "La normalización de la pérdida no es la del objetivo: «sumar los tokens "
        "y dividir por una constante» es loss_type='dr_grpo' (Dr. GRPO). 'grpo' "
        "divide cada respuesta por su longitud y 'dapo' (el valor por defecto) "
        "por los tokens del lote.",
    ),
    Mistake(
        "config_loss_type",
        variant_of(_config, loss_type="dapo"),
        "La normalización de la pérdida no es la del objetivo: «sumar los tokens "
        "y dividir por una constante» es loss_type='dr_grpo' (Dr. GRPO). 'grpo' "
        "divide cada respuesta por su longitud y 'dapo' (el valor por defecto) "
        "por los tokens del lote.",
    ),
    Mistake(
        "config_divides_by_std",
        variant_of(_config, scale_rewards="group"),
        "El objetivo no divide la ventaja por σ: en TRL eso es "
        "scale_rewards='none'. El valor por defecto, 'group', divide por la "
        "desviación típica de cada grupo.",
    ),
    Mistake(
        "config_no_kl",
        variant_of(_config, beta=0.0),
        "Falta la penalización KL: β es beta en TRL, y por defecto vale 0 (sin "
        "modelo de referencia). El objetivo pide β = 0,02.",
    ),
    Mistake(
        "config_one_iteration",
        variant_of(_config, num_iterations=1),
        "μ, las pasadas por cada lote generado, es num_iterations en TRL (por "
        "defecto 1). El objetivo pide μ = 2: con μ > 1 el cociente se aleja de 1 "
        "y el recorte ε trabaja.",
    ),
    Mistake(
        "config_bf16",
        variant_of(_config, bf16=True),
        "En la CPU del curso se entrena en float32: bf16=False (y use_cpu=True). "
        "GRPOConfig activa bf16 por defecto.",
    ),
]

_NOT_DIVIDING = (
    "TRL no acepta la configuración: num_generations (G) debe dividir el lote "
    "de generación, per_device_train_batch_size · gradient_accumulation_steps "
    "respuestas, porque lo corta en grupos de G respuestas del mismo "
    "enunciado. ¿Pusiste en per_device_train_batch_size las respuestas por "
    "enunciado, o los enunciados, en vez de las respuestas del paso?"
)
_BF16 = (
    "En la CPU del curso se entrena en float32: bf16=False (y use_cpu=True). "
    "GRPOConfig activa bf16 por defecto."
)


def _build(make_grpo_config: Callable[[str], Any], output_dir: str) -> Any:
    """Llama a la función del estudiante y traduce los errores de TRL."""
    import trl

    try:
        with _quiet_hf():
            config = make_grpo_config(output_dir)
    except ValueError as error:
        # Si la configuración ni se construye: lo que dicen TRL o transformers,
        # en español, con el id del error típico que lo provoca
        if "must be divisible by num_generations" in str(error):
            fail(
                f"{_NOT_DIVIDING}\n(TRL dijo: {error})",
                "config_generations_do_not_divide",
            )
        if "bf16" in str(error):
            fail(f"{_BF16}\n(transformers dijo: {error})", "config_bf16")
        raise
    if not isinstance(config, trl.GRPOConfig):
        fail(
            "make_grpo_config debe devolver un trl.GRPOConfig (el objeto que "
            f"recibe GRPOTrainer en args=), y devolvió {type(config).__name__}.",
            "config_not_grpo_config",
        )
    return config


def _described(name: str, value: Any) -> str:
    return f"{name} = {value!r} ({_MEANING.get(name, name)})"


@exercise(MODULE, "make_grpo_config")
def check_make_grpo_config(make_grpo_config, output_dirs=("runs/practica",)):
    """Comprueba los campos de la ``GRPOConfig`` y lo que significan."""
    for output_dir in output_dirs:
        config = _build(make_grpo_config, output_dir)
        got = config_fields(config)
        want = config_fields(reference_grpo_config(output_dir))
        if got == want:
            continue
        differ = [name for name in want if got[name] != want[name]]
        if "output_dir" in differ:
            fail(
                "La carpeta de salida es el argumento output_dir: "
                f"make_grpo_config({output_dir!r}) devolvió output_dir = "
                f"{got['output_dir']!r}.",
                "config_ignores_output_dir",
            )
        for row in CONFIG_MISTAKES:
            wrong = config_fields(row.variant(output_dir))
            changed = [name for name in want if wrong[name] != want[name]]
            if all(got[name] == wrong[name] for name in changed):
                rest = [name for name in differ if name not in changed]
                extra = (
                    "\nAdemás difieren: "
                    + "; ".join(_described(n, got[n]) for n in rest)
                    + "."
                    if rest
                    else ""
                )
                fail(row.message + extra, row.id)
        fail(
            "Algún campo no es el del objetivo: "
            + "; ".join(
                f"{_described(n, got[n])}, y el objetivo pide {want[n]!r}"
                for n in differ
            )
            + ".",
            "config_wrong_field",
        )


# Ejercicio · Las log-probabilidades de la respuesta con relleno a la izquierda


def _log_probs(
    model,
    input_ids,
    attention_mask,
    logits_to_keep,
    *,
    mask=True,
    positions=True,
    shift=1,
    axis=-1,
    one_prompt_len=False,
    zero_padding=True,
):
    """La referencia con una opción por error típico (las variantes)."""
    from helpers.practica.prompts import position_ids_from_mask

    options = {}
    if mask:
        options["attention_mask"] = attention_mask
    if positions:
        options["position_ids"] = position_ids_from_mask(attention_mask)
    logits = model(input_ids=input_ids, **options).logits.float()
    width = input_ids.shape[1]
    if one_prompt_len:
        # la longitud del enunciado de la primera fila, para todas
        start = int(attention_mask[0, : width - logits_to_keep].sum()) - 1
    else:
        start = width - logits_to_keep - shift
    shifted = logits[:, start : start + logits_to_keep]
    log_p = torch.log_softmax(shifted, dim=axis)
    completion = input_ids[:, -logits_to_keep:]
    chosen = log_p.gather(-1, completion.unsqueeze(-1)).squeeze(-1)
    if not zero_padding:
        return chosen
    keep = attention_mask[:, -logits_to_keep:].bool()
    return torch.where(keep, chosen, torch.zeros_like(chosen))


LOG_PROB_MISTAKES = [
    Mistake(
        "lp_no_position_ids",
        variant_of(_log_probs, positions=False),
        "Falta position_ids. Con relleno a la izquierda, GPT-2 numera las columnas "
        "0, 1, 2… y el primer token real de un enunciado corto recibe el embedding "
        "de otra posición: pasa position_ids = cumsum(attention_mask) − 1 (con 0 "
        "en el relleno).",
    ),
    Mistake(
        "lp_no_attention_mask",
        variant_of(_log_probs, mask=False),
        "Falta attention_mask en el forward: sin ella, los tokens reales miran al "
        "relleno de la izquierda y sus logits cambian.",
    ),
    Mistake(
        "lp_no_mask_no_positions",
        variant_of(_log_probs, mask=False, positions=False),
        "El forward no recibe ni attention_mask ni position_ids: con relleno a la "
        "izquierda hacen falta las dos (la máscara para no mirar al relleno, las "
        "posiciones cumsum(attention_mask) − 1 para que cada token real esté en "
        "la suya).",
    ),
    Mistake(
        "lp_off_by_one",
        variant_of(_log_probs, shift=0),
        "Los logits de la columna t predicen el token t + 1: la respuesta "
        "(columnas −C:) se lee en los logits de las columnas −C−1:−1, no en las "
        "−C:.",
    ),
    Mistake(
        "lp_softmax_axis",
        variant_of(_log_probs, axis=1),
        "El log-softmax va sobre el vocabulario (el último eje), no sobre las "
        "posiciones.",
    ),
    Mistake(
        "lp_one_prompt_length",
        variant_of(_log_probs, one_prompt_len=True),
        "Usaste una sola longitud de enunciado para todas las filas: con relleno "
        "a la izquierda cada fila tiene la suya, pero todas las respuestas "
        "empiezan en la misma columna, la −C (logits_to_keep = C).",
    ),
    Mistake(
        "lp_padding_not_zero",
        variant_of(_log_probs, zero_padding=False),
        "En el relleno de la respuesta (attention_mask = 0) el valor debe ser 0: "
        "usa torch.where con la máscara.",
    ),
]


@functools.cache
def log_prob_cases(seeds: tuple[int, ...] = (0, 1)) -> list[tuple]:
    """Lotes con enunciados de 4, 5 y 6 tokens rellenados a la izquierda y
    respuestas muestreadas, del modelo del curso convertido a GPT-2."""
    from helpers.practica.prompts import left_padded_batch, practice_problems
    from helpers.puente.convert import load_pretrained_gpt2
    from helpers.puente.tokenizer import make_tokenizer

    model = load_pretrained_gpt2().eval()
    tokenizer = make_tokenizer()
    cases = []
    for seed in seeds:
        with _quiet_hf():
            batch = left_padded_batch(
                model, tokenizer, practice_problems(4 + seed, seed), seed
            )
        cases.append(
            (
                model,
                batch["input_ids"],
                batch["attention_mask"],
                batch["logits_to_keep"],
            )
        )
    return cases


def _detached(function):
    def run(*case):
        with torch.no_grad():
            return function(*case)

    return run


@exercise(MODULE, "response_log_probs")
def check_response_log_probs(response_log_probs, cases=None):
    """Compara con la referencia (que coincide con una fila sin relleno cada
    vez) en lotes cuyos enunciados miden distinto."""
    from helpers.checks import check_cases
    from helpers.practica import prompts

    cases = cases or log_prob_cases()
    with _quiet_hf():
        check_cases(
            response_log_probs,
            "response_log_probs",
            cases,
            _detached(prompts.response_log_probs),
            LOG_PROB_MISTAKES,
            atol=1e-4,
        )
