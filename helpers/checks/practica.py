"""Comprobaciones del módulo 11 · Tu entrenamiento con TRL: miran los campos de
los objetos de TRL y lo que significan. TRL se importa solo al comprobar."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import numbers
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

from helpers.checks import (
    Diagnosis,
    Mistake,
    check_cases,
    diagnoses,
    exercise,
    fail,
    variant_of,
    with_messages,
)

MODULE = "11_practica"

#: Lo que dicen las reglas sin variante (``{…}``: lo que llena ``.fail``;
#: ``{said}``: lo que dijo la biblioteca, en su línea, de :func:`_said`).
_SAYS = diagnoses(
    """
config_generations_do_not_divide: TRL no acepta la configuración: num_generations (G)
    debe dividir el lote de generación, per_device_train_batch_size ·
    gradient_accumulation_steps respuestas, porque lo corta en grupos de G respuestas
    del mismo enunciado. ¿Pusiste en per_device_train_batch_size las respuestas por
    enunciado, o los enunciados, en vez de las respuestas del paso?{said}
config_not_grpo_config: make_grpo_config debe devolver un trl.GRPOConfig (el objeto que
    recibe GRPOTrainer en args=), y devolvió {kind}.
config_wrong_field: Algún campo no es el del objetivo: {fields}.
config_ignores_output_dir: La carpeta de salida es el argumento output_dir:
    make_grpo_config({output_dir!r}) devolvió output_dir = {got[output_dir]!r}.
reward_no_kwargs: TRL llama a {name} con todo por nombre: completions=, las columnas del
    conjunto de datos (answer=...) y además sus propios argumentos (completion_ids=,
    trainer_state=, log_metric=...). Tu función no acepta alguno: termina la firma en
    **kwargs.{said}
reward_returns_none: {name} devolvió None: ¿falta el return? TRL espera una lista de
    floats, una por respuesta.
reward_returns_tensor: {name} devolvió un tensor: TRL espera una lista de floats de
    Python, una por respuesta (result.tolist() o construye la lista).
reward_not_a_list: {name} debe devolver una lista con un float de Python (1.0 o 0.0) por
    respuesta ({n}); devolvió {what}.
reward_ignores_conversation: Con un conjunto conversacional TRL pasa cada respuesta como
    [{'role': 'assistant', 'content': '…'}]: el texto está en completion[-1]['content']
    (o en el contenido de sus mensajes).
reward_raises_on_garbage: Una recompensa nunca debe lanzar: TRL pararía el entrenamiento
    por un texto raro del modelo o una fila rota. Lo que no se puede leer paga 0,0.
correctness_wrong_value: Paga 1,0 cuando math-verify da por buena la respuesta frente a
    la columna answer (con el «.» final o sin él), y 0,0 si no.
correctness_substring: Pagas una respuesta que solo contiene la referencia: «8» está
    dentro de «68+340=408», pero la respuesta es 408. Es la trampa que aprende un modelo
    (escribir muchas cifras). Compara la respuesta extraída con math-verify (parse y
    verify), no busques la cadena.
correctness_pays_unparsable_gold: Una referencia que no se puede leer nunca paga:
    math-verify no saca nada de «» ni de «n/a», y parse(gold) == parse(respuesta)
    es [] == [], verdadero. Si parse(gold) está vacío, paga 0,0.
correctness_silent_unparsable: Las referencias ilegibles pagan 0, bien, pero en
    silencio: avísalo con warnings.warn(...) (o regístralo con el log_metric que pasa
    TRL), para que un conjunto de datos roto no entrene sin que nadie lo vea.
format_wrong_value: Paga 1,0 si la respuesta termina en «=N» (N, cifras), con el «.»
    final o sin él, o en \\boxed{…}; si no, 0,0.
format_requires_dot: Dentro de TRL la respuesta llega sin su «.» final: TRL decodifica
    con skip_special_tokens=True y el «.» es el token de fin del curso. El formato
    acepta «=N» con el punto y sin él («\\.?»).
format_no_dotall: Una respuesta puede tener varias líneas. Sin re.DOTALL, «.» no cruza
    los saltos de línea y el patrón no llega al final: usa re.DOTALL (o busca el final
    con re.search(r'=\\d+\\.?\\s*$', texto)).
trainer_not_grpo_trainer: make_trainer debe devolver un trl.GRPOTrainer, no {kind}.
trainer_other_model: El modelo del entrenador no es el punto de control de la carpeta
    model_path: cárgalo con AutoModelForCausalLM.from_pretrained(model_path) (la misma
    línea que carga un Qwen), no con las ayudas del curso.
trainer_rewards: reward_funcs debe llevar tus dos recompensas, en este orden:
    [correctness_reward, format_reward]. Lleva {names}.
trainer_ignores_config: El entrenador no usa la configuración que recibe: pásala tal
    cual en args=config (si construyes otra, pierdes el objetivo de make_grpo_config).
trainer_dataset: El entrenador no tiene el conjunto de datos que recibe:
    train_dataset=dataset.
diagnoses_not_a_dict: diagnoses debe ser un diccionario: id de la ejecución → id del
    fallo ({{"A": "…", …}}); es {kind}.
diagnoses_missing_run: diagnoses lleva una entrada por cada ejecución rota ({wanted}):
    {gaps}.
diagnoses_unknown_failure: Estos diagnósticos no son ids de runs.FAILURES: {shown}.
    Elige entre {failures}.
dpo_not_a_trainer: make_dpo_trainer(..., loss_type={loss_type[0]!r}, beta={beta}) debe
    devolver un trl.DPOTrainer (con la DPOConfig en args=), y devolvió {kind}.
dpo_ref_model: El modelo de referencia del entrenador no es ref_model: pásalo en
    ref_model=ref_model. Sin él, TRL hace su propia copia congelada de model, y la
    referencia deja de ser la que tú eliges (la del SFT).
dpo_other_model: La política del entrenador no es model: pásalo en model=model (es el
    modelo que DPO entrena).
dpo_loss_type_ignored: Con loss_type={want[0]!r}, la DPOConfig dice loss_type = {got!r}:
    pasa el argumento a DPOConfig(loss_type=loss_type), no un valor fijo.
dpo_beta_ignored: Con beta={want}, la DPOConfig dice beta = {got}: pasa el argumento a
    DPOConfig(beta=beta), no un valor fijo.
dpo_wrong_field: Algún campo de la DPOConfig no es el pedido: {fields}.
dpo_ignores_output_dir: La carpeta de salida es el argumento output_dir, no {got!r}.
dpo_scheduler: lr_scheduler_type = {got!r}: el DPO del módulo 10 usa una tasa constante,
    lr_scheduler_type='constant' (por defecto TRL la baja en línea recta hasta 0).
"""
)


#: Cuando TRL busca la carpeta de un modelo hecho en memoria (un ``OSError``).
_NO_FOLDER = diagnoses(
    """
trainer_other_model: TRL no encuentra la carpeta de tu modelo: con β > 0 carga el modelo
    de referencia de model.config._name_or_path, que solo tiene un modelo cargado de una
    carpeta. Carga el de model_path con
    AutoModelForCausalLM.from_pretrained(model_path).{said}
dpo_ref_model: DPOTrainer no tiene modelo de referencia: pásale ref_model=ref_model. Sin
    él, TRL intenta cargar una copia de la carpeta de model, y este modelo no viene de
    ninguna.{said}
"""
)


def _said(who: str, error: Exception) -> str:
    return f"\n({who} dijo: {error})"


def _made(lost: str, make: Callable[..., Any], *args: Any) -> Any:
    """``make(*args)`` en silencio; si TRL no encuentra una carpeta, ``lost``."""
    try:
        with _quiet_hf():
            return make(*args)
    except OSError as error:
        _NO_FOLDER[lost].fail(said=_said("TRL", error))


# Ejercicio · La configuración de GRPO

#: El objetivo del curso con los nombres de TRL, campo → (valor, cómo se lee
#: en el curso: G, ÷σ, β, μ...). Un paso: 8 enunciados × G = 4 respuestas.
_OBJECTIVE: dict[str, tuple[Any, str]] = {
    "num_generations": (4, "G, las respuestas por enunciado"),
    "per_device_train_batch_size": (32, "las respuestas (no los enunciados) por paso"),
    "gradient_accumulation_steps": (1, "los micro-lotes por paso"),
    "loss_type": ("dr_grpo", "la normalización de la pérdida"),
    "scale_rewards": ("none", "si la ventaja se divide por σ"),
    "beta": (0.02, "β, el peso de la penalización KL"),
    "num_iterations": (2, "μ, las pasadas por cada lote generado"),
    "epsilon": (0.2, "ε, el recorte del cociente"),
    "learning_rate": (3e-4, "la tasa de aprendizaje"),
    "lr_scheduler_type": ("constant", "el calendario de la tasa de aprendizaje"),
    "max_completion_length": (26, "la longitud máxima de una respuesta"),
    "temperature": (1.0, "la temperatura de muestreo"),
    "max_steps": (4, "los pasos del optimizador"),
    "logging_steps": (1, "cada cuántos pasos se registra"),
    "seed": (0, "la semilla"),
    "use_cpu": (True, "entrenar en la CPU"),
    "bf16": (False, "bf16 (la CPU del curso entrena en float32)"),
    "report_to": ("none", "a dónde van los registros"),
    "save_strategy": ("no", "cuándo se guardan puntos de control"),
}
OBJECTIVE = {name: value for name, (value, _) in _OBJECTIVE.items()}


@contextlib.contextmanager
def _quiet_hf() -> Iterator[None]:
    """Sin barras de progreso ni avisos: una celda de pruebas no escribe en stderr."""
    import datasets
    import transformers

    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    try:
        with warnings.catch_warnings(action="ignore"):
            yield
    finally:
        transformers.logging.set_verbosity(level)


def reference_grpo_config(output_dir: str, **changes: Any) -> Any:
    """La referencia de ``make_grpo_config``; con ``changes``, un error típico."""
    import trl

    with _quiet_hf():
        return trl.GRPOConfig(**{**OBJECTIVE, "output_dir": output_dir, **changes})


def _comparable(name: str, value: Any) -> Any:
    """Comparable: los enums como texto, ``report_to`` como lista, números float."""
    value = getattr(value, "value", value)
    if name == "report_to":
        return [] if value in (None, "none", ["none"]) else list(value)
    if isinstance(value, float | int) and not isinstance(value, bool):
        return float(value)
    return value


def config_fields(config, names=(*OBJECTIVE, "output_dir", "generation_batch_size")):
    return {name: _comparable(name, getattr(config, name, None)) for name in names}


def _listed(got: dict, meaning: dict, names: list, want=None, asked="") -> str:
    """Los campos ``names`` de ``got``, lo que significan y el valor de ``want``."""
    return "; ".join(
        f"{n} = {got[n]!r} ({meaning.get(n, (None, n))[1]})"
        + (f", y {asked} {want[n]!r}" if want else "")
        for n in names
    )


def _config(**changes: Any) -> Callable[[str], Any]:
    """La configuración de quien comete un error típico: ``changes`` encima."""
    return variant_of(reference_grpo_config, **changes)


_BF16 = (
    "En la CPU del curso se entrena en float32: bf16=False (y use_cpu=True). "
    "{} activa bf16 por defecto."
)
CONFIG_MISTAKES = with_messages(
    """
config_batch_counts_prompts: per_device_train_batch_size cuenta respuestas, no
    enunciados: con G respuestas por enunciado, 8 enunciados por paso son 8 · G
    respuestas. TRL reparte ese lote en grupos de num_generations, así que con 8
    tendrías solo 8 / G enunciados por paso.
config_group_and_batch_swapped: num_generations es G, las respuestas por enunciado; los
    enunciados por paso salen de dividir el lote de respuestas
    (per_device_train_batch_size por los micro-lotes) entre num_generations.
config_loss_type: La normalización de la pérdida no es la del objetivo: «sumar los
    tokens y dividir por una constante» es loss_type='dr_grpo' (Dr. GRPO). 'grpo' divide
    cada respuesta por su longitud y 'dapo' (por defecto) por los tokens del lote.
config_divides_by_std: El objetivo no divide la ventaja por σ: en TRL eso es
    scale_rewards='none'. El valor por defecto, 'group', divide por la desviación típica
    de cada grupo.
config_no_kl: Falta la penalización KL: β es beta en TRL, y por defecto vale 0 (sin
    modelo de referencia). El objetivo pide β = 0,02.
config_one_iteration: μ, las pasadas por cada lote generado, es num_iterations en TRL
    (por defecto 1). El objetivo pide μ = 2: con μ > 1 el cociente se aleja de 1 y el
    recorte ε trabaja.
""",
    ("config_batch_counts_prompts", _config(per_device_train_batch_size=8)),
    ("config_group_and_batch_swapped", _config(num_generations=8)),
    ("config_loss_type", _config(loss_type="grpo")),
    ("config_loss_type", _config(loss_type="dapo")),
    ("config_divides_by_std", _config(scale_rewards="group")),
    ("config_no_kl", _config(beta=0.0)),
    ("config_one_iteration", _config(num_iterations=1)),
    Mistake("config_bf16", _config(bf16=True), _BF16.format("GRPOConfig")),
)


@exercise(MODULE, "make_grpo_config")
def check_make_grpo_config(make_grpo_config, output_dirs=("runs/practica",)):
    """Los campos de la ``GRPOConfig``: un error típico explica el fallo si, en los
    campos que cambia su variante, el estudiante dice lo mismo."""
    import trl

    for output_dir in output_dirs:
        try:
            with _quiet_hf():
                config = make_grpo_config(output_dir)
        except ValueError as error:
            # no se construye: lo que dicen TRL o transformers, con el id de su error
            if "must be divisible by num_generations" in str(error):
                _SAYS["config_generations_do_not_divide"].fail(said=_said("TRL", error))
            if "bf16" in str(error):
                said = _said("transformers", error)
                fail(_BF16.format("GRPOConfig") + said, "config_bf16")
            raise
        if not isinstance(config, trl.GRPOConfig):
            _SAYS["config_not_grpo_config"].fail(kind=type(config).__name__)
        got = config_fields(config)
        want = config_fields(reference_grpo_config(output_dir))
        differ = [name for name in want if got[name] != want[name]]
        if not differ:
            continue
        if "output_dir" in differ:
            _SAYS["config_ignores_output_dir"].fail(output_dir=output_dir, got=got)
        for row in CONFIG_MISTAKES:
            wrong = config_fields(row.variant(output_dir))
            changed = [name for name in want if wrong[name] != want[name]]
            if all(got[name] == wrong[name] for name in changed):
                rest = [name for name in differ if name not in changed]
                also = _listed(got, _OBJECTIVE, rest)
                fail(
                    row.message + (f"\nAdemás difieren: {also}." if rest else ""),
                    row.id,
                )
        fields = _listed(got, _OBJECTIVE, differ, want, "el objetivo pide")
        _SAYS["config_wrong_field"].fail(fields=fields)


# Ejercicio · Las log-probabilidades de la respuesta con relleno a la izquierda


def _log_probs(model, input_ids, attention_mask, c, *, wrong=""):
    """La referencia con los errores típicos nombrados en ``wrong`` (las variantes:
    ver sus filas, en ``LOG_PROB_MISTAKES``)."""
    from helpers.practica.prompts import position_ids_from_mask

    options = {}
    if "no_mask" not in wrong:
        options["attention_mask"] = attention_mask
    if "no_positions" not in wrong:
        options["position_ids"] = position_ids_from_mask(attention_mask)
    logits = model(input_ids=input_ids, **options).logits.float()
    width = input_ids.shape[1]
    start = width - c - ("no_shift" not in wrong)
    if "one_len" in wrong:
        start = int(attention_mask[0, : width - c].sum()) - 1
    log_p = logits[:, start : start + c].log_softmax(1 if "axis" in wrong else -1)
    chosen = log_p.gather(-1, input_ids[:, -c:].unsqueeze(-1)).squeeze(-1)
    if "no_zeros" in wrong:
        return chosen
    return torch.where(attention_mask[:, -c:].bool(), chosen, torch.zeros_like(chosen))


LOG_PROB_MISTAKES = with_messages(
    """
lp_no_position_ids: Falta position_ids. Con relleno a la izquierda, GPT-2 numera las
    columnas 0, 1, 2… y el primer token real de un enunciado corto recibe el embedding
    de otra posición: pasa position_ids = cumsum(attention_mask) − 1 (con 0 en el
    relleno).
lp_no_attention_mask: Falta attention_mask en el forward: sin ella, los tokens reales
    miran al relleno de la izquierda y sus logits cambian.
lp_no_mask_no_positions: El forward no recibe ni attention_mask ni position_ids: con
    relleno a la izquierda hacen falta las dos (la máscara para no mirar al relleno, las
    posiciones cumsum(attention_mask) − 1 para que cada token real esté en la suya).
lp_off_by_one: Los logits de la columna t predicen el token t + 1: la respuesta
    (columnas −C:) se lee en los logits de las columnas −C−1:−1, no en las −C:.
lp_softmax_axis: El log-softmax va sobre el vocabulario (el último eje), no sobre las
    posiciones.
lp_one_prompt_length: Usaste una sola longitud de enunciado para todas las filas: con
    relleno a la izquierda cada fila tiene la suya, pero todas las respuestas empiezan
    en la misma columna, la −C (logits_to_keep = C).
lp_padding_not_zero: En el relleno de la respuesta (attention_mask = 0) el valor debe
    ser 0: usa torch.where con la máscara.
""",
    ("lp_no_position_ids", variant_of(_log_probs, wrong="no_positions")),
    ("lp_no_attention_mask", variant_of(_log_probs, wrong="no_mask")),
    ("lp_no_mask_no_positions", variant_of(_log_probs, wrong="no_mask no_positions")),
    ("lp_off_by_one", variant_of(_log_probs, wrong="no_shift")),
    ("lp_softmax_axis", variant_of(_log_probs, wrong="axis")),
    ("lp_one_prompt_length", variant_of(_log_probs, wrong="one_len")),
    ("lp_padding_not_zero", variant_of(_log_probs, wrong="no_zeros")),
)


@functools.cache
def log_prob_cases(seeds: tuple[int, ...] = (0, 1)) -> list[tuple]:
    """Lotes con enunciados de 4, 5 y 6 tokens rellenados a la izquierda y
    respuestas muestreadas, del modelo del curso convertido a GPT-2."""
    from helpers.practica.prompts import left_padded_batch, practice_problems
    from helpers.puente.convert import load_pretrained_gpt2
    from helpers.puente.tokenizer import make_tokenizer

    model, tokenizer, cases = load_pretrained_gpt2().eval(), make_tokenizer(), []
    for seed in seeds:
        with _quiet_hf():
            problems = practice_problems(4 + seed, seed)
            batch = left_padded_batch(model, tokenizer, problems, seed)
        keys = ("input_ids", "attention_mask", "logits_to_keep")
        cases.append((model, *(batch[key] for key in keys)))
    return cases


@exercise(MODULE, "response_log_probs")
def check_response_log_probs(response_log_probs, cases=None):
    """Compara con la referencia en lotes cuyos enunciados miden distinto."""
    from helpers.practica import prompts

    with _quiet_hf(), torch.no_grad():
        args = cases or log_prob_cases(), prompts.response_log_probs, LOG_PROB_MISTAKES
        check_cases(response_log_probs, "response_log_probs", *args, atol=1e-4)


# Ejercicio · Las recompensas con el contrato de TRL

#: Respuestas del curso tal como llegan dentro de TRL (sin el «.» final, que
#: es el token de fin) y fuera (con él).
_STRIPPED = "17×20+17×4=340+68=408"
_COURSE = _STRIPPED + "."

#: Textos raros de un modelo que aún no sabe escribir: ninguno debe lanzar (ni
#: tardar: nada como «10**10**10», que atasca a math-verify).
GARBAGE: tuple[Any, ...] = ("", "   ", "\x00", "١٢٣", "💥" * 50, "=" * 300)
GARBAGE += ("\\boxed{" * 30, "}{=", "\n\n\n", "NaN", "17×20+17×4=340+6")

_CONVERSATION = _SAYS["reward_ignores_conversation"]
_RAISES = _SAYS["reward_raises_on_garbage"]
_UNREADABLE = "Una respuesta que no se entiende paga 0,0."


def _called(reward, completions, what, raised, **columns) -> tuple[list[float], bool]:
    """Llama a ``reward`` como ``GRPOTrainer`` de TRL 1.16, todo con nombre, y
    devuelve las recompensas y si avisó o registró algo. Si lanza, falla con
    ``raised`` (``None``: deja pasar la excepción)."""
    name, n, logged = getattr(reward, "__name__", "la recompensa"), len(completions), []
    try:
        with warnings.catch_warnings(record=True, action="always") as caught:
            result = reward(
                prompts=[[{"role": "user", "content": "17×24="}]] * n,
                completions=completions,
                completion_ids=[[1, 2, 3]] * n,
                trainer_state=None,
                log_extra=lambda *a, **k: None,
                log_metric=lambda *a, **k: logged.append(a + tuple(k.values())),
                difficulty=["fácil"] * n,
                **columns,
            )
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 — el código es del estudiante
        if isinstance(error, TypeError) and "unexpected keyword" in str(error):
            _SAYS["reward_no_kwargs"].fail(name=name, said=_said("Python", error))
        if raised is None:
            raise
        said = f"{type(error).__name__} con {what}: {error}. {raised.message}"
        fail(f"{name} lanzó {said}", raised.id)
    if result is None:
        _SAYS["reward_returns_none"].fail(name=name)
    if isinstance(result, torch.Tensor):
        _SAYS["reward_returns_tensor"].fail(name=name)
    if not isinstance(result, list) or len(result) != n:
        size = f" de longitud {len(result)}" if hasattr(result, "__len__") else ""
        what = type(result).__name__ + size
        _SAYS["reward_not_a_list"].fail(name=name, n=n, what=what)
    if not all(isinstance(x, numbers.Real) for x in result):
        kinds = ", ".join(sorted({type(x).__name__ for x in result}))
        what = f"elementos de tipo {kinds}"
        _SAYS["reward_not_a_list"].fail(name=name, n=n, what=what)
    reported = bool(caught) or any(call and call[-1] for call in logged)
    return [float(x) for x in result], reported


def _probes(reward, reference, rows, **columns) -> bool:
    """Prueba ``reward`` con cada fila ``(respuestas, qué son, si lanza, si no paga
    lo que ``reference``)``, con un :class:`Diagnosis` o ``None`` (no se mira) en
    las dos últimas; ``columns``: una lista por fila. Dice si avisó en la última."""
    for row, (completions, what, raised, wrong) in enumerate(rows):
        chosen = {key: value[row] for key, value in columns.items()}
        got, reported = _called(reward, completions, what, raised, **chosen)
        with warnings.catch_warnings(action="ignore"):
            want = reference(completions, **chosen)
        if wrong is not None and got != want:
            gold = "".join(f"\n  {key} = {value!r}" for key, value in chosen.items())
            fail(
                f"{wrong.message}\n  completions = {completions!r}{gold}\n"
                f"  {reference.__name__} dio {got}; debía dar {want}.",
                wrong.id,
            )
    return reported


@exercise(MODULE, "correctness_reward")
def check_correctness_reward(correctness_reward):
    """Como la llama TRL: texto y conversación, la trampa de la subcadena,
    referencias ilegibles (pagan 0 y se avisan) y textos raros (nunca lanza)."""
    from helpers.practica.rewards import correctness_reward as reference

    plain = [_COURSE, _STRIPPED, "3×4=12", "3×4=13", "Pienso.\n17×24=408"]
    gold = ["408", "408", "12", "12", 408]
    chat = [[{"role": "assistant", "content": text}] for text in plain]
    wrong = _SAYS["correctness_wrong_value"]
    unreadable = dataclasses.replace(wrong, message=_UNREADABLE)
    tricked = ["68+340=408", "11×8=88", "5×8=40"]
    substring = _SAYS["correctness_substring"]
    unparsable = _SAYS["correctness_pays_unparsable_gold"]
    rows = [
        (plain, "respuestas del curso", None, wrong),
        (tricked, "la respuesta 68+340=408", unreadable, substring),
        (chat, "respuestas en forma de conversación", _CONVERSATION, _CONVERSATION),
        (list(GARBAGE), "textos raros", _RAISES, None),
        (["", "n/a", "3×4=12", "####"], "referencias ilegibles", _RAISES, unparsable),
    ]
    golds = [gold, ["8"] * 3, gold, ["408"] * len(GARBAGE), ["", "n/a", "", "####"]]
    if not _probes(correctness_reward, reference, rows, answer=golds):
        _SAYS["correctness_silent_unparsable"].fail()


@exercise(MODULE, "format_reward")
def check_format_reward(format_reward):
    """Como la llama TRL: el «=N» final con el «.» o sin él, respuestas de
    varias líneas, conversaciones y textos raros."""
    from helpers.practica.rewards import format_reward as reference

    plain = [_COURSE, "=56.", "408", "la respuesta es 408", "=408.\nY además 7"]
    plain += ["17×20+17×4=340+6", "\\boxed{408}.", ""]
    dotless = [_STRIPPED, "=56", "3×4=12"]
    lines = ["Primero 17×20=340.\nLuego 17×4=68.\n17×24=408", "Pienso:\n17×24=408."]
    chat = [[{"role": "assistant", "content": text}] for text in plain]
    wrong = _SAYS["format_wrong_value"]
    unreadable = dataclasses.replace(wrong, message=_UNREADABLE)
    odd = dataclasses.replace(
        wrong, message="Un texto raro no tiene el formato: paga 0,0."
    )
    rows = [
        (plain, "respuestas del curso", None, wrong),
        (dotless, "respuestas sin el punto", unreadable, _SAYS["format_requires_dot"]),
        (lines, "respuestas de varias líneas", unreadable, _SAYS["format_no_dotall"]),
        (chat, "respuestas en forma de conversación", _CONVERSATION, _CONVERSATION),
        (list(GARBAGE), "textos raros", _RAISES, odd),
    ]
    _probes(format_reward, reference, rows)


# Ejercicio · El entrenador


def _stand_in(name: str) -> Callable[..., list[float]]:
    """La recompensa ``name`` mientras se califica ``make_trainer`` (solo él)."""

    def reward(completions, **kwargs) -> list[float]:
        return [0.0 for _ in completions]

    reward.__name__ = name
    return reward


_STAND_INS = {name: _stand_in(name) for name in ("correctness_reward", "format_reward")}


@functools.cache
def _checkpoint(seed: int) -> tuple[str, dict[str, torch.Tensor]]:
    """Un punto de control en disco con los pesos del curso movidos con ``seed``
    (si el entrenador carga otro modelo, no coinciden) y esos pesos."""
    from helpers.puente.convert import load_pretrained_gpt2
    from helpers.puente.tokenizer import make_tokenizer

    folder = tempfile.mkdtemp(prefix="practica_checkpoint_")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model = load_pretrained_gpt2()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.01 * torch.randn(parameter.shape, generator=generator))
    with _quiet_hf():
        model.save_pretrained(folder)
        make_tokenizer().save_pretrained(folder)
    return folder, {name: w.clone() for name, w in model.state_dict().items()}


def tiny_dataset(problems: tuple[tuple[int, int], ...] = ((3, 4), (12, 5))) -> Any:
    """Un conjunto conversacional diminuto, con las columnas ``prompt`` y ``answer``."""
    from datasets import Dataset

    from helpers.tinylm import prompt_text

    prompts = [[{"role": "user", "content": prompt_text(a, b)}] for a, b in problems]
    answers = [str(a * b) for a, b in problems]
    return Dataset.from_dict({"prompt": prompts, "answer": answers})


@exercise(MODULE, "make_trainer", uses=_STAND_INS)
def check_make_trainer(make_trainer, seed=0, steps=4):
    """Sin entrenar: tipo, modelo, recompensas, configuración y datos."""
    import trl

    folder, saved = _checkpoint(seed)
    with tempfile.TemporaryDirectory() as output_dir:
        config = reference_grpo_config(output_dir, max_steps=steps)
        dataset = tiny_dataset()
        trainer = _made("trainer_other_model", make_trainer, folder, dataset, config)
        if not isinstance(trainer, trl.GRPOTrainer):
            _SAYS["trainer_not_grpo_trainer"].fail(kind=type(trainer).__name__)
        state = trainer.model.state_dict()
        if not all(k in state and torch.equal(state[k], w) for k, w in saved.items()):
            _SAYS["trainer_other_model"].fail()
        names = [getattr(f, "__name__", type(f).__name__) for f in trainer.reward_funcs]
        if names != ["correctness_reward", "format_reward"]:
            _SAYS["trainer_rewards"].fail(names=names)
        if trainer.args is not config:
            _SAYS["trainer_ignores_config"].fail()
        if trainer.train_dataset is None or len(trainer.train_dataset) != len(dataset):
            _SAYS["trainer_dataset"].fail()


def reference_trainer(model_path: str, dataset: Any, config: Any) -> Any:
    """La referencia de ``make_trainer``."""
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
    """Las cifras que resumen las curvas de una ejecución (``Run.logs``); ``gap``:
    cuánto paga la recompensa por encima de la precisión verdadera."""
    import numpy as np

    x = {key: np.asarray(values, dtype=float) for key, values in logs.items()}
    return {
        "zero_std": float(np.nanmean(x["frac_reward_zero_std"])),
        "grad_norm": float(np.nanmean(x["grad_norm"])),
        "clipped": float(np.nanmean(x["completions/clipped_ratio"])),
        "region_first": float(x["clip_ratio/region_mean"][0]),
        "kl_max": float(np.nanmax(x["kl"])),
        "length_first": float(x["completions/mean_length"][0]),
        "length_min": float(np.nanmin(x["completions/mean_length"])),
        "gap": float(np.nanmean(x["reward"] - x["rewards/accuracy/mean"])),
    }


@exercise(MODULE, "diagnoses")
def _check_diagnoses_form(diagnoses):
    from helpers.practica import runs

    if not isinstance(diagnoses, dict):
        _SAYS["diagnoses_not_a_dict"].fail(kind=type(diagnoses).__name__)
    wanted = runs.diagnosis_runs()
    off = {
        "faltan": [k for k in wanted if k not in diagnoses],
        "sobran": sorted(str(k) for k in diagnoses if k not in wanted),
    }
    if gaps := "; ".join(f"{w} {', '.join(keys)}" for w, keys in off.items() if keys):
        _SAYS["diagnoses_missing_run"].fail(wanted=", ".join(wanted), gaps=gaps)
    if unknown := {k: v for k, v in diagnoses.items() if v not in runs.FAILURES}:
        shown = ", ".join(f"{k} → {v!r}" for k, v in sorted(unknown.items()))
        failures = ", ".join(runs.FAILURES)
        _SAYS["diagnoses_unknown_failure"].fail(shown=shown, failures=failures)


def check_diagnoses(diagnoses: Any, quiet: bool = False) -> None:
    """Que ``diagnoses`` está bien escrito: una entrada por ejecución rota, cada
    una de ``runs.FAILURES``. Si aciertas se califica al corregir."""
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
    diagnoses: dict[str, str], run_id: str, key: str, signs: dict[str, Any]
) -> None:
    """Califica el diagnóstico de ``run_id`` con su clave ``key`` (la da la prueba
    oculta). ``signs``: fallo → (``predicado(s, h)``, si las cifras ``s`` de la
    ejecución muestran su señal frente a las ``h`` de la sana; el texto que la
    describe, con huecos ``{s[...]}`` y ``{h[...]}``). Se comprueba que la señal de
    ``key`` está y la del diagnóstico equivocado no: lo que se dice es verdad."""
    from helpers.formatting import significant
    from helpers.practica import runs

    _check_diagnoses_form(diagnoses, quiet=True)
    loaded = runs.load_runs()
    s = run_signals(loaded[run_id].logs)
    h = run_signals(loaded[runs.healthy_run_id()].logs)
    shown = {
        name: {k: significant(v, 3) for k, v in signals.items()}
        for name, signals in (("s", s), ("h", h))
    }
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
        why_not = "si lo fuera, veríamos esto: " + other_says.format(**shown)
        why_not += " No es lo que hay en esta ejecución"
    fail(
        f"Ejecución {run_id}: no es «{chosen}»: {why_not}. Lo que dicen sus "
        f"registros: {evidence}",
        f"diagnosis_{chosen}",
    )


# Ejercicio · El entrenador de DPO

#: Lo que pide el enunciado a la ``DPOConfig`` además de sus argumentos: los
#: hiperparámetros del DPO del módulo 10, campo → (valor, qué es).
_DPO_OBJECTIVE: dict[str, tuple[Any, str]] = {
    "per_device_train_batch_size": (16, "los pares por lote"),
    "learning_rate": (2e-4, "la tasa de aprendizaje"),
    "lr_scheduler_type": ("constant", "el calendario de la tasa"),
    "num_train_epochs": (4, "las épocas"),
    "logging_strategy": ("epoch", "cuándo se registra"),
    "use_cpu": (True, "entrenar en la CPU"),
    "bf16": (False, "bf16"),
    "save_strategy": ("no", "cuándo se guardan puntos de control"),
    "report_to": ("none", "a dónde van los registros"),
    "seed": (0, "la semilla"),
}
DPO_OBJECTIVE = {name: value for name, (value, _) in _DPO_OBJECTIVE.items()}
#: Los campos de la ``DPOConfig`` con diagnóstico propio, en este orden; el
#: mensaje lleva el valor pedido, ``{want}``, y el que tiene, ``{got}``.
_DPO_FIELDS = {
    "loss_type": _SAYS["dpo_loss_type_ignored"],
    "beta": _SAYS["dpo_beta_ignored"],
    "output_dir": _SAYS["dpo_ignores_output_dir"],
    "bf16": Diagnosis(id="dpo_bf16", message=_BF16.format("DPOConfig")),
    "lr_scheduler_type": _SAYS["dpo_scheduler"],
}


@functools.cache
def _dpo_pairs(n_pairs: int = 8) -> Any:
    """Unos pocos pares de preferencias del módulo 10, con las columnas de TRL."""
    from helpers.practica.dpo import preference_dataset

    with _quiet_hf():
        return preference_dataset(n_pairs)


@exercise(MODULE, "make_dpo_trainer")
def check_make_dpo_trainer(make_dpo_trainer, cases=(("ipo", 1.0),)):
    """Sin entrenar: el tipo, los dos modelos y los campos de la ``DPOConfig``."""
    import trl

    from helpers.puente.convert import load_pretrained_gpt2

    for loss_type, beta in cases:
        with tempfile.TemporaryDirectory() as output_dir:
            model, ref_model = load_pretrained_gpt2(), load_pretrained_gpt2()
            args = model, ref_model, _dpo_pairs(), loss_type, beta, output_dir
            trainer = _made("dpo_ref_model", make_dpo_trainer, *args)
            asked = {"loss_type": [loss_type], "beta": beta, "output_dir": output_dir}
            if not isinstance(trainer, trl.DPOTrainer):
                _SAYS["dpo_not_a_trainer"].fail(kind=type(trainer).__name__, **asked)
            if trainer.ref_model is not ref_model:
                _SAYS["dpo_ref_model"].fail()
            if trainer.model is not model:
                _SAYS["dpo_other_model"].fail()
            want = {**DPO_OBJECTIVE, **asked}
            got = config_fields(trainer.args, want)
            for name, rule in _DPO_FIELDS.items():
                if got[name] != _comparable(name, want[name]):
                    rule.fail(got=got[name], want=want[name])
            differ = [n for n in DPO_OBJECTIVE if got[n] != _comparable(n, want[n])]
            if differ:
                fields = _listed(got, _DPO_OBJECTIVE, differ, want, "se pide")
                _SAYS["dpo_wrong_field"].fail(fields=fields)
