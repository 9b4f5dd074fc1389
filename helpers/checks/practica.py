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

import atexit
import contextlib
import functools
import numbers
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
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


# Ejercicio · Las recompensas con el contrato de TRL

#: Respuestas del curso tal como llegan dentro de TRL (sin el «.» final, que
#: es el token de fin) y fuera (con él).
_STRIPPED = "17×20+17×4=340+68=408"
_COURSE = _STRIPPED + "."

#: Textos raros que una recompensa recibe de un modelo que aún no sabe
#: escribir: ninguno debe lanzar una excepción (ni tardar: nada como
#: «10**10**10», que atasca a math-verify).
GARBAGE: tuple[Any, ...] = (
    "",
    "   ",
    "\x00",
    "١٢٣",
    "💥" * 50,
    "=" * 300,
    "\\boxed{" * 30,
    "}{=",
    "\n\n\n",
    "NaN",
    "17×20+17×4=340+6",
)


def _conversation(text: str) -> list[dict[str, str]]:
    """Una respuesta en forma de conversación, como la pasa TRL cuando el
    ``prompt`` del conjunto de datos es una conversación."""
    return [{"role": "assistant", "content": text}]


class _Recorder:
    """Lo que TRL pasa como ``log_metric``: anota cada llamada."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append(args + tuple(kwargs.values()))


def _trl_call(
    reward: Callable[..., Any], completions: list[Any], **columns: Any
) -> tuple[Any, _Recorder, list[warnings.WarningMessage]]:
    """Llama a ``reward`` como lo hace ``GRPOTrainer`` de TRL 1.16: todo con
    nombre, con los argumentos de TRL y las columnas del conjunto de datos.
    Devuelve el resultado, lo que se registró con ``log_metric`` y los avisos."""
    n = len(completions)
    recorder = _Recorder()
    kwargs = dict(
        prompts=[[{"role": "user", "content": "17×24="}]] * n,
        completions=completions,
        completion_ids=[[1, 2, 3]] * n,
        trainer_state=None,
        log_extra=lambda *a, **k: None,
        log_metric=recorder,
        difficulty=["fácil"] * n,
    )
    kwargs.update(columns)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = reward(**kwargs)
    return result, recorder, list(caught)


_CONVERSATION = (
    "Con un conjunto conversacional TRL pasa cada respuesta como "
    "[{'role': 'assistant', 'content': '…'}]: el texto está en "
    "completion[-1]['content'] (o en el contenido de sus mensajes)."
)
#: Lo que se dice cuando la recompensa lanza una excepción, según lo que se
#: probaba.
_HINTS = {
    "reward_ignores_conversation": _CONVERSATION,
    "reward_raises_on_garbage": (
        "Una recompensa nunca debe lanzar: TRL pararía el entrenamiento por "
        "un texto raro del modelo o una fila rota. Lo que no se puede leer "
        "paga 0,0."
    ),
    "correctness_wrong_value": "Una respuesta que no se entiende paga 0,0.",
    "format_wrong_value": "Una respuesta que no se entiende paga 0,0.",
}


def _reward_name(reward: Callable[..., Any]) -> str:
    return getattr(reward, "__name__", "la recompensa")


def _called(
    reward: Callable[..., Any],
    completions: list[Any],
    what: str,
    mistake: str | None,
    **columns: Any,
) -> tuple[list[float], _Recorder, list[warnings.WarningMessage]]:
    """``_trl_call`` con cada fallo dicho en español: una excepción (con el id
    ``mistake`` de lo que se probaba) o un resultado que no es una lista de
    floats, una por respuesta."""
    name = _reward_name(reward)
    try:
        result, recorder, caught = _trl_call(reward, completions, **columns)
    except NotImplementedError:
        raise
    except TypeError as error:
        if "unexpected keyword" in str(error) or "got an unexpected" in str(error):
            fail(
                f"TRL llama a {name} con todo por nombre: completions=, las "
                "columnas del conjunto de datos (answer=...) y además sus propios "
                "argumentos (completion_ids=, trainer_state=, log_metric=...). "
                "Tu función no acepta alguno: termina la firma en **kwargs.\n"
                f"(Python dijo: {error})",
                "reward_no_kwargs",
            )
        if mistake is None:
            raise
        fail(f"{name} lanzó TypeError con {what}: {error}. {_HINTS[mistake]}", mistake)
    except Exception as error:  # noqa: BLE001 — el código es del estudiante
        if mistake is None:
            raise
        fail(
            f"{name} lanzó {type(error).__name__} con {what}: {error}. "
            f"{_HINTS[mistake]}",
            mistake,
        )
    if result is None:
        fail(
            f"{name} devolvió None: ¿falta el return? TRL espera una lista de "
            "floats, una por respuesta.",
            "reward_returns_none",
        )
    if isinstance(result, torch.Tensor):
        fail(
            f"{name} devolvió un tensor: TRL espera una lista de floats de "
            "Python, una por respuesta (result.tolist() o construye la lista).",
            "reward_returns_tensor",
        )
    if not isinstance(result, list) or len(result) != len(completions):
        fail(
            f"{name} debe devolver una lista con un float por respuesta "
            f"({len(completions)}); devolvió {type(result).__name__}"
            + (f" de longitud {len(result)}" if hasattr(result, "__len__") else "")
            + ".",
            "reward_not_a_list",
        )
    if not all(isinstance(x, numbers.Real) for x in result):
        kinds = sorted({type(x).__name__ for x in result})
        fail(
            f"{name} debe devolver floats de Python (1.0 o 0.0); devolvió "
            f"elementos de tipo {', '.join(kinds)}.",
            "reward_not_a_list",
        )
    return [float(x) for x in result], recorder, caught


def _shown(completions: list[Any]) -> str:
    return ", ".join(repr(c) for c in completions)


def _same_rewards(
    got: list[float],
    want: list[float],
    completions: list[Any],
    name: str,
    message: str,
    mistake: str,
    answer: list[Any] | None = None,
) -> None:
    """Falla con ``message`` (y las entradas) si ``got`` no es ``want``."""
    if got == want:
        return
    gold = f"\n  answer = {answer!r}" if answer is not None else ""
    fail(
        f"{message}\n  completions = [{_shown(completions)}]{gold}\n"
        f"  {name} dio {got}; debía dar {want}.",
        mistake,
    )


def _reported(recorder: _Recorder, caught: list[warnings.WarningMessage]) -> bool:
    """Si la recompensa avisó (``warnings.warn``) o registró algo (``log_metric``)."""
    return bool(caught) or any(call and call[-1] for call in recorder.calls)


@exercise(MODULE, "correctness_reward")
def check_correctness_reward(correctness_reward):
    """Comprueba la recompensa de corrección como la llama TRL: respuestas en
    texto y en conversación, la trampa de la subcadena, referencias ilegibles
    (pagan 0 y se avisan) y textos raros (nunca lanza)."""
    from helpers.practica import rewards

    name = "correctness_reward"
    plain = [_COURSE, _STRIPPED, "3×4=12", "3×4=13", "Pienso.\n17×24=408"]
    answer = ["408", "408", "12", "12", 408]
    got, _, _ = _called(
        correctness_reward, plain, "respuestas del curso", mistake=None, answer=answer
    )
    want = rewards.correctness_reward(plain, answer)
    _same_rewards(
        got,
        want,
        plain,
        name,
        "Paga 1,0 cuando math-verify da por buena la respuesta frente a la "
        "columna answer (con el «.» final o sin él), y 0,0 si no.",
        mistake="correctness_wrong_value",
        answer=answer,
    )
    hack = ["68+340=408", "11×8=88", "5×8=40"]
    gold = ["8", "8", "8"]
    got, _, _ = _called(
        correctness_reward,
        hack,
        "la respuesta 68+340=408",
        mistake="correctness_wrong_value",
        answer=gold,
    )
    _same_rewards(
        got,
        rewards.correctness_reward(hack, gold),
        hack,
        name,
        "Pagas una respuesta que solo contiene la referencia: «8» está dentro "
        "de «68+340=408», pero la respuesta es 408. Es la trampa que aprende un "
        "modelo (escribir muchas cifras). Compara la respuesta extraída con "
        "math-verify (parse y verify), no busques la cadena.",
        mistake="correctness_substring",
        answer=gold,
    )
    chat = [_conversation(text) for text in plain]
    got, _, _ = _called(
        correctness_reward,
        chat,
        "respuestas en forma de conversación",
        mistake="reward_ignores_conversation",
        answer=answer,
    )
    _same_rewards(
        got,
        want,
        chat,
        name,
        _CONVERSATION,
        mistake="reward_ignores_conversation",
        answer=answer,
    )
    garbage = list(GARBAGE)
    _called(
        correctness_reward,
        garbage,
        "textos raros",
        mistake="reward_raises_on_garbage",
        answer=["408"] * len(garbage),
    )
    unreadable = ["", "n/a", "3×4=12", "####"]
    bad_gold = ["", "n/a", "", "####"]
    got, recorder, caught = _called(
        correctness_reward,
        unreadable,
        "referencias ilegibles",
        mistake="reward_raises_on_garbage",
        answer=bad_gold,
    )
    _same_rewards(
        got,
        [0.0] * len(unreadable),
        unreadable,
        name,
        "Una referencia que no se puede leer nunca paga: math-verify no saca "
        "nada de «» ni de «n/a», y parse(gold) == parse(respuesta) es [] == [], "
        "verdadero. Si parse(gold) está vacío, paga 0,0.",
        mistake="correctness_pays_unparsable_gold",
        answer=bad_gold,
    )
    if not _reported(recorder, caught):
        fail(
            "Las referencias ilegibles pagan 0, bien, pero en silencio: avísalo "
            "con warnings.warn(...) (o regístralo con el log_metric que pasa "
            "TRL), para que un conjunto de datos roto no entrene sin que nadie "
            "lo vea.",
            "correctness_silent_unparsable",
        )


@exercise(MODULE, "format_reward")
def check_format_reward(format_reward):
    """Comprueba la recompensa de formato como la llama TRL: el «=N» final
    con el «.» o sin él, respuestas de varias líneas, conversaciones y
    textos raros."""
    from helpers.practica import rewards

    name = "format_reward"
    plain = [
        _COURSE,
        "=56.",
        "408",
        "la respuesta es 408",
        "=408.\nY además 7",
        "17×20+17×4=340+6",
        "\\boxed{408}.",
        "",
    ]
    got, _, _ = _called(format_reward, plain, "respuestas del curso", mistake=None)
    _same_rewards(
        got,
        rewards.format_reward(plain),
        plain,
        name,
        "Paga 1,0 si la respuesta termina en «=N» (N, cifras), con el «.» "
        "final o sin él, o en \\boxed{…}; si no, 0,0.",
        mistake="format_wrong_value",
    )
    stripped = [_STRIPPED, "=56", "3×4=12"]
    got, _, _ = _called(
        format_reward, stripped, "respuestas sin el punto", mistake="format_wrong_value"
    )
    _same_rewards(
        got,
        rewards.format_reward(stripped),
        stripped,
        name,
        "Dentro de TRL la respuesta llega sin su «.» final: TRL decodifica con "
        "skip_special_tokens=True y el «.» es el token de fin del curso. El "
        "formato acepta «=N» con el punto y sin él («\\.?»).",
        mistake="format_requires_dot",
    )
    lines = ["Primero 17×20=340.\nLuego 17×4=68.\n17×24=408", "Pienso:\n17×24=408."]
    got, _, _ = _called(
        format_reward,
        lines,
        "respuestas de varias líneas",
        mistake="format_wrong_value",
    )
    _same_rewards(
        got,
        rewards.format_reward(lines),
        lines,
        name,
        "Una respuesta puede tener varias líneas. Sin re.DOTALL, «.» no cruza "
        "los saltos de línea y «.*=…» no llega al final: usa re.DOTALL (o busca "
        "el final con re.search(r'=\\d+\\.?\\s*$', texto)).",
        mistake="format_no_dotall",
    )
    chat = [_conversation(text) for text in plain]
    got, _, _ = _called(
        format_reward,
        chat,
        "respuestas en forma de conversación",
        mistake="reward_ignores_conversation",
    )
    _same_rewards(
        got,
        rewards.format_reward(plain),
        chat,
        name,
        _CONVERSATION,
        mistake="reward_ignores_conversation",
    )
    garbage = list(GARBAGE)
    got, _, _ = _called(
        format_reward, garbage, "textos raros", mistake="reward_raises_on_garbage"
    )
    _same_rewards(
        got,
        rewards.format_reward(garbage),
        garbage,
        name,
        "Un texto raro no tiene el formato: paga 0,0.",
        mistake="format_wrong_value",
    )


# Ejercicio · El entrenador


def correctness_stand_in(completions, answer, **kwargs) -> list[float]:
    """Ocupa el lugar de la ``correctness_reward`` del estudiante mientras se
    comprueba ``make_trainer``: así ese ejercicio se califica solo."""
    return [0.0 for _ in completions]


def format_stand_in(completions, **kwargs) -> list[float]:
    """Ocupa el lugar de la ``format_reward`` del estudiante (ver arriba)."""
    return [0.0 for _ in completions]


_STAND_INS = {
    "correctness_reward": correctness_stand_in,
    "format_reward": format_stand_in,
}


#: Los pesos de cada punto de control de ``_checkpoint_dir``, para comparar
#: sin volver a leerlos del disco.
_CHECKPOINT_STATES: dict[str, dict[str, torch.Tensor]] = {}


@functools.cache
def _checkpoint_dir(seed: int) -> str:
    """Un punto de control en disco (modelo y tokenizador), con los pesos del
    curso movidos un poco con ``seed``: si el entrenador carga otro modelo
    (el del curso, con ``helpers.puente``), sus pesos no coinciden."""
    from helpers.puente.convert import load_pretrained_gpt2
    from helpers.puente.tokenizer import make_tokenizer

    folder = Path(tempfile.mkdtemp(prefix="practica_checkpoint_"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model = load_pretrained_gpt2()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            parameter.add_(0.01 * noise)
    with _quiet_hf():
        model.save_pretrained(folder)
        make_tokenizer().save_pretrained(folder)
    _CHECKPOINT_STATES[str(folder)] = {
        name: tensor.clone() for name, tensor in model.state_dict().items()
    }
    return str(folder)


def tiny_dataset(problems: tuple[tuple[int, int], ...] = ((3, 4), (12, 5))) -> Any:
    """Un conjunto conversacional diminuto con las columnas ``prompt`` y
    ``answer`` (lo que leen las recompensas)."""
    from datasets import Dataset

    from helpers.tinylm import prompt_text

    return Dataset.from_dict(
        {
            "prompt": [
                [{"role": "user", "content": prompt_text(a, b)}] for a, b in problems
            ],
            "answer": [str(a * b) for a, b in problems],
        }
    )


def _trainer_reward_names(trainer: Any) -> list[str]:
    return [getattr(f, "__name__", type(f).__name__) for f in trainer.reward_funcs]


@exercise(MODULE, "make_trainer", uses=_STAND_INS)
def check_make_trainer(make_trainer, seed=0, steps=4):
    """Comprueba el ``GRPOTrainer`` del estudiante sin entrenar: su tipo, el
    modelo de la carpeta, las dos recompensas, la configuración y los datos."""
    import trl

    folder = _checkpoint_dir(seed)
    with tempfile.TemporaryDirectory() as output_dir:
        config = _config(output_dir, max_steps=steps)
        dataset = tiny_dataset()
        try:
            with _quiet_hf():
                trainer = make_trainer(folder, dataset, config)
        except OSError as error:
            # Con β > 0, TRL carga el modelo de referencia de la carpeta del
            # modelo (model.config._name_or_path): uno hecho en memoria no la tiene
            fail(
                "TRL no encuentra la carpeta de tu modelo: con β > 0 carga el "
                "modelo de referencia de model.config._name_or_path, que solo "
                "tiene un modelo cargado de una carpeta. Carga el de model_path "
                "con AutoModelForCausalLM.from_pretrained(model_path).\n"
                f"(TRL dijo: {error})",
                "trainer_other_model",
            )
        if not isinstance(trainer, trl.GRPOTrainer):
            fail(
                "make_trainer debe devolver un trl.GRPOTrainer, y devolvió "
                f"{type(trainer).__name__}.",
                "trainer_not_grpo_trainer",
            )
        expected = _CHECKPOINT_STATES[folder]
        loaded = trainer.model.state_dict()
        same = all(
            name in loaded and torch.equal(loaded[name], tensor)
            for name, tensor in expected.items()
        )
        if not same:
            fail(
                "El modelo del entrenador no es el punto de control de la carpeta "
                "model_path: cárgalo con AutoModelForCausalLM.from_pretrained("
                "model_path) (la misma línea que carga un Qwen), no con las "
                "ayudas del curso.",
                "trainer_other_model",
            )
        stand_in_of = {v.__name__: k for k, v in _STAND_INS.items()}
        names = [stand_in_of.get(n, n) for n in _trainer_reward_names(trainer)]
        if names != ["correctness_reward", "format_reward"]:
            got = names
            fail(
                "reward_funcs debe llevar tus dos recompensas, en este orden: "
                f"[correctness_reward, format_reward]. Lleva {got}.",
                "trainer_rewards",
            )
        if trainer.args is not config:
            fail(
                "El entrenador no usa la configuración que recibe: pásala tal cual "
                "en args=config (si construyes otra, pierdes el objetivo de "
                "make_grpo_config).",
                "trainer_ignores_config",
            )
        if trainer.train_dataset is None or len(trainer.train_dataset) != len(dataset):
            fail(
                "El entrenador no tiene el conjunto de datos que recibe: "
                "train_dataset=dataset.",
                "trainer_dataset",
            )


def reference_trainer(model_path: str, dataset: Any, config: Any) -> Any:
    """La referencia de ``make_trainer``: el ``GRPOTrainer`` con el modelo y el
    tokenizador de la carpeta y las recompensas de referencia
    (``helpers.practica.rewards``)."""
    import trl
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from helpers.practica.rewards import correctness_reward, format_reward

    return trl.GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_path),
        reward_funcs=[correctness_reward, format_reward],
        args=config,
        train_dataset=dataset,
        processing_class=AutoTokenizer.from_pretrained(model_path),
    )


# Ejercicio · Los diagnósticos de las ejecuciones rotas


def run_signals(logs: dict[str, Any]) -> dict[str, float]:
    """Las cifras que resumen los registros de una ejecución (``Run.logs``):
    lo que se lee en sus curvas, sin decir qué fallo tiene.

    - ``zero_std``: media de ``frac_reward_zero_std``;
    - ``grad_norm``: media de ``grad_norm``;
    - ``clipped``: media de ``completions/clipped_ratio``;
    - ``region_first``: ``clip_ratio/region_mean`` en el primer paso;
    - ``kl_max``: el mayor ``kl``;
    - ``length_first``, ``length_min``: ``completions/mean_length`` en el
      primer paso y el menor;
    - ``gap``: media de ``reward − rewards/accuracy/mean`` (cuánto paga la
      recompensa por encima de la precisión verdadera).
    """
    import numpy as np

    def series(key: str) -> Any:
        return np.asarray(logs[key], dtype=float)

    return {
        "zero_std": float(np.nanmean(series("frac_reward_zero_std"))),
        "grad_norm": float(np.nanmean(series("grad_norm"))),
        "clipped": float(np.nanmean(series("completions/clipped_ratio"))),
        "region_first": float(series("clip_ratio/region_mean")[0]),
        "kl_max": float(np.nanmax(series("kl"))),
        "length_first": float(series("completions/mean_length")[0]),
        "length_min": float(np.nanmin(series("completions/mean_length"))),
        "gap": float(np.nanmean(series("reward") - series("rewards/accuracy/mean"))),
    }


@exercise(MODULE, "diagnoses")
def _check_diagnoses_form(diagnoses):
    from helpers.practica import runs

    if not isinstance(diagnoses, dict):
        fail(
            "diagnoses debe ser un diccionario: id de la ejecución → id del fallo "
            f'({{"A": "…", …}}); es {type(diagnoses).__name__}.',
            "diagnoses_not_a_dict",
        )
    wanted = runs.diagnosis_runs()
    missing = [k for k in wanted if k not in diagnoses]
    if missing:
        fail(
            f"Faltan las ejecuciones {', '.join(missing)}: diagnoses lleva una "
            f"entrada por cada una de {', '.join(wanted)}.",
            "diagnoses_missing_run",
        )
    extra = sorted(str(k) for k in diagnoses if k not in wanted)
    if extra:
        fail(
            f"No hay que diagnosticar {', '.join(extra)}: las ejecuciones son "
            f"{', '.join(wanted)}.",
            "diagnoses_missing_run",
        )
    unknown = {k: v for k, v in diagnoses.items() if v not in runs.FAILURES}
    if unknown:
        shown = ", ".join(f"{k} → {v!r}" for k, v in sorted(unknown.items()))
        fail(
            f"Estos diagnósticos no son ids de runs.FAILURES: {shown}. Elige "
            f"entre {', '.join(runs.FAILURES)}.",
            "diagnoses_unknown_failure",
        )


def check_diagnoses(diagnoses: Any, quiet: bool = False) -> None:
    """Comprueba que ``diagnoses`` está bien escrito: una entrada por
    ejecución rota, cada una un id de ``runs.FAILURES``. No dice si aciertas:
    se califica al corregir, y la explicación llega con la nota."""
    from helpers.checks.core.registry import exercise_title
    from helpers.checks.quiz import FORM_ONLY_MARK

    _check_diagnoses_form(diagnoses, quiet=True)
    if not quiet:
        print(
            f"{FORM_ONLY_MARK} {exercise_title(MODULE, 'diagnoses')}: respuesta "
            "bien escrita (un fallo de la lista por cada ejecución). Esta "
            "comprobación no dice si aciertas: se califica al corregir, y la "
            "retroalimentación trae la explicación de cada ejecución."
        )


def grade_diagnosis(
    diagnoses: dict[str, str],
    run_id: str,
    key: str,
    signs: dict[str, tuple[Callable[..., bool], str]],
) -> None:
    """Califica el diagnóstico de la ejecución ``run_id`` con su clave ``key``
    (la pone la prueba oculta que la llama: este módulo no la sabe).

    ``signs``: para cada fallo, la señal que deja en los registros, como
    ``(predicado, texto)``: ``predicado(s, h)`` dice si las cifras ``s`` de
    una ejecución (``run_signals``) la muestran, frente a las ``h`` de la
    sana, y ``texto`` la describe con huecos ``{s[...]}`` y ``{h[...]}``.
    Antes de calificar se comprueba que la señal de ``key`` está en la
    ejecución y la del diagnóstico equivocado no: lo que se dice es verdad.
    Si falla, el mensaje dice qué no cuadra del diagnóstico elegido, con las
    cifras de esa ejecución, y qué muestran sus registros.
    """
    from helpers.formatting import significant
    from helpers.practica import runs

    _check_diagnoses_form(diagnoses, quiet=True)
    loaded = runs.load_runs()
    shown = {
        name: {k: significant(v, 3) for k, v in run_signals(r.logs).items()}
        for name, r in (("s", loaded[run_id]), ("h", loaded[runs.healthy_run_id()]))
    }
    s = run_signals(loaded[run_id].logs)
    h = run_signals(loaded[runs.healthy_run_id()].logs)
    seen, says = signs[key]
    if not seen(s, h):
        raise RuntimeError(f"La señal de {key} no está en la ejecución {run_id}.")
    evidence = says.format(**shown)
    chosen = diagnoses[run_id]
    if chosen == key:
        print(f"Ejecución {run_id}: correcto ({key}). {evidence}")
        return
    if chosen == "sana":
        why_not = "una ejecución sana no tiene ninguna señal fuera de lo normal"
    else:
        other_seen, other_says = signs[chosen]
        if other_seen(s, h):
            raise RuntimeError(f"La ejecución {run_id} también muestra {chosen}.")
        why_not = (
            "si lo fuera, veríamos esto: "
            + other_says.format(**shown)
            + " No es lo que hay en esta ejecución"
        )
    fail(
        f"Ejecución {run_id}: no es «{chosen}»: {why_not}. Lo que dicen sus "
        f"registros: {evidence}",
        f"diagnosis_{chosen}",
    )


# Ejercicio · El entrenador de DPO

#: Lo que pide el enunciado a la ``DPOConfig``, además de ``loss_type``,
#: ``beta`` y ``output_dir`` (los argumentos): los hiperparámetros del DPO del
#: módulo 10 (``helpers.practica.dpo``).
DPO_OBJECTIVE: dict[str, Any] = {
    "per_device_train_batch_size": 16,
    "learning_rate": 2e-4,
    "lr_scheduler_type": "constant",
    "num_train_epochs": 4,
    "logging_strategy": "epoch",
    "use_cpu": True,
    "bf16": False,
    "save_strategy": "no",
    "report_to": "none",
    "seed": 0,
}
_DPO_MEANING = {
    "per_device_train_batch_size": "los pares por lote",
    "learning_rate": "la tasa de aprendizaje",
    "lr_scheduler_type": "el calendario de la tasa",
    "num_train_epochs": "las épocas",
    "logging_strategy": "cuándo se registra",
    "use_cpu": "entrenar en la CPU",
    "bf16": "bf16",
    "save_strategy": "cuándo se guardan puntos de control",
    "report_to": "a dónde van los registros",
    "seed": "la semilla",
}


@functools.cache
def _dpo_pairs(n_pairs: int = 8) -> Any:
    """Unos pocos pares de preferencias del módulo 10, con las columnas de TRL."""
    from helpers.practica.dpo import preference_dataset

    with _quiet_hf():
        return preference_dataset(n_pairs)


@exercise(MODULE, "make_dpo_trainer")
def check_make_dpo_trainer(make_dpo_trainer, cases=(("ipo", 1.0),)):
    """Construye el ``DPOTrainer`` del estudiante (sin entrenar) y mira su
    tipo, sus dos modelos y los campos de su ``DPOConfig``."""
    import trl

    from helpers.puente.convert import load_pretrained_gpt2

    for loss_type, beta in cases:
        with tempfile.TemporaryDirectory() as output_dir:
            model, ref_model = load_pretrained_gpt2(), load_pretrained_gpt2()
            try:
                with _quiet_hf():
                    trainer = make_dpo_trainer(
                        model, ref_model, _dpo_pairs(), loss_type, beta, output_dir
                    )
            except OSError as error:
                # Sin ref_model, TRL carga una copia de la carpeta del modelo
                # (model.config._name_or_path): uno hecho en memoria no la tiene
                fail(
                    "DPOTrainer no tiene modelo de referencia: pásale "
                    "ref_model=ref_model. Sin él, TRL intenta cargar una copia "
                    "de la carpeta de model, y este modelo no viene de ninguna.\n"
                    f"(TRL dijo: {error})",
                    "dpo_ref_model",
                )
            call = f"make_dpo_trainer(..., loss_type={loss_type!r}, beta={beta})"
            if not isinstance(trainer, trl.DPOTrainer):
                fail(
                    f"{call} debe devolver un trl.DPOTrainer (con la DPOConfig en "
                    f"args=), y devolvió {type(trainer).__name__}.",
                    "dpo_not_a_trainer",
                )
            if trainer.ref_model is not ref_model:
                fail(
                    "El modelo de referencia del entrenador no es ref_model: "
                    "pásalo en ref_model=ref_model. Sin él, TRL hace su propia "
                    "copia congelada de model, y la referencia deja de ser la que "
                    "tú eliges (la del SFT).",
                    "dpo_ref_model",
                )
            if trainer.model is not model:
                fail(
                    "La política del entrenador no es model: pásalo en model=model "
                    "(es el modelo que DPO entrena).",
                    "dpo_other_model",
                )
            args = trainer.args
            if list(args.loss_type) != [loss_type]:
                fail(
                    f"Con loss_type={loss_type!r}, la DPOConfig dice loss_type = "
                    f"{args.loss_type!r}: pasa el argumento a DPOConfig(loss_type="
                    "loss_type), no un valor fijo.",
                    "dpo_loss_type_ignored",
                )
            if args.beta != beta:
                fail(
                    f"Con beta={beta}, la DPOConfig dice beta = {args.beta}: pasa el "
                    "argumento a DPOConfig(beta=beta), no un valor fijo.",
                    "dpo_beta_ignored",
                )
            if args.output_dir != output_dir:
                fail(
                    "La carpeta de salida es el argumento output_dir; la DPOConfig "
                    f"dice {args.output_dir!r}.",
                    "dpo_ignores_output_dir",
                )
            if args.bf16:
                fail(
                    "En la CPU del curso se entrena en float32: bf16=False (y "
                    "use_cpu=True). DPOConfig activa bf16 por defecto.",
                    "dpo_bf16",
                )
            scheduler = _field(args, "lr_scheduler_type")
            if scheduler != "constant":
                fail(
                    f"lr_scheduler_type = {scheduler!r}: el DPO del módulo 10 usa "
                    "una tasa constante, lr_scheduler_type='constant' (por defecto "
                    "TRL la baja en línea recta hasta 0).",
                    "dpo_scheduler",
                )
            wrong = [
                f"{name} = {_field(args, name)!r} ({_DPO_MEANING[name]}), y se pide "
                f"{want!r}"
                for name, want in DPO_OBJECTIVE.items()
                if _field(args, name) != _field_value(name, want)
            ]
            if wrong:
                fail(
                    "Algún campo de la DPOConfig no es el pedido: "
                    + "; ".join(wrong)
                    + ".",
                    "dpo_wrong_field",
                )


def _field_value(name: str, value: Any) -> Any:
    """Un valor del objetivo, comparable con ``_field``."""
    if name == "report_to":
        return [] if value in (None, "none", ["none"]) else list(value)
    if isinstance(value, float | int) and not isinstance(value, bool):
        return float(value)
    return value
