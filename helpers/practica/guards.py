"""Errores claros, en español, antes de entrenar: nunca una ejecución mala en
silencio.

TRL y transformers detectan algunas entradas malas, pero tarde (en el primer
paso, tras cargar el modelo) o en inglés, y otras no las detectan: bf16 en
una CPU que no lo tiene corre, emulado y lento, sin avisar. Estas funciones
se llaman antes de construir el entrenador (``helpers.practica.launch`` y el
cuaderno 11 lo hacen) y lanzan un ``GuardError`` (un ``ValueError``) que dice
qué está mal, con el valor que lo causa, y cómo arreglarlo:

- ``check_reward_columns``: cada parámetro obligatorio de una recompensa
  (``answer`` en ``correctness_reward(completions, answer, **kwargs)``) tiene
  que ser una columna del conjunto de datos;
- ``check_batch_sizes`` / ``check_grpo_config``: ``num_generations`` divide el
  lote de generación;
- ``check_bf16``: bf16 solo donde la máquina lo tiene;
- ``check_chat_template``: un conjunto conversacional necesita un tokenizador
  con plantilla de chat;
- ``check_model_path``: la carpeta del modelo existe y tiene ``config.json``
  (o el id de Hugging Face está descargado);
- ``trl_errors_in_spanish``: los ``ValueError`` de ``trl.GRPOConfig``,
  explicados en español (el original queda como causa).

El tipo de cada error es un dato (``GuardError.kind``), no una frase que haya
que leer.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

#: Los argumentos que TRL 1.16 pasa a toda función de recompensa
#: (``GRPOTrainer._calculate_rewards``): no son columnas del conjunto.
TRL_REWARD_ARGUMENTS = frozenset(
    {
        "prompts",
        "completions",
        "completion_ids",
        "trainer_state",
        "log_extra",
        "log_metric",
        "environments",
    }
)

# Un id de Hugging Face: «organización/nombre» (sin ruta relativa ni absoluta)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class GuardError(ValueError):
    """Una entrada mala, explicada en español.

    ``kind`` dice qué comprobación falló (``"columns"``, ``"batch"``,
    ``"bf16"``, ``"chat_template"``, ``"model_path"``, ``"trl_config"``) y
    ``value``, el valor que lo causa.
    """

    def __init__(self, kind: str, value: Any, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.value = value


# ---------------------------------------------------------------------------
# Columnas que leen las recompensas
# ---------------------------------------------------------------------------


def reward_name(function: Any) -> str:
    """El nombre de una función de recompensa (o de la clase de un objeto)."""
    return getattr(function, "__name__", None) or type(function).__name__


def required_columns(function: Callable[..., Any]) -> list[str]:
    """Las columnas del conjunto que lee ``function``: sus parámetros con
    nombre y sin valor por defecto que TRL no pasa por sí mismo.

    ``**kwargs`` solo no lee ninguna: recibe las columnas que haya.
    """
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # sin firma que leer: nada que exigir
        return []
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [
        p.name
        for p in parameters
        if p.kind in named
        and p.default is inspect.Parameter.empty
        and p.name not in TRL_REWARD_ARGUMENTS
    ]


def check_reward_columns(dataset: Any, reward_funcs: Sequence[Any]) -> None:
    """Cada recompensa encuentra en ``dataset`` las columnas que lee.

    ``dataset``: un ``datasets.Dataset`` (o algo con ``column_names``). TRL
    pasa a cada recompensa las columnas del lote como argumentos con nombre;
    si falta una que la función pide, el error llegaría en el primer paso,
    en inglés y tras cargar el modelo. Un modelo de recompensa (no una
    función) no lee columnas.
    """
    columns = list(getattr(dataset, "column_names", None) or [])
    if "prompt" not in columns:
        raise GuardError(
            "columns",
            columns,
            f"El conjunto de datos no tiene la columna `prompt` (tiene {columns}). "
            "GRPOTrainer genera a partir de ella: renombra la columna de los "
            "enunciados a `prompt`.",
        )
    for function in reward_funcs:
        if isinstance(function, (str, torch.nn.Module)):
            continue
        missing = [c for c in required_columns(function) if c not in columns]
        if missing:
            raise GuardError(
                "columns",
                missing,
                f"La recompensa «{reward_name(function)}» lee {missing}, pero el "
                f"conjunto de datos solo tiene las columnas {columns}. Añade esas "
                "columnas al conjunto (TRL pasa cada columna a la recompensa con "
                "su nombre) o cambia el nombre del parámetro por el de la columna "
                "que tiene la referencia.",
            )


# ---------------------------------------------------------------------------
# Tamaños de lote
# ---------------------------------------------------------------------------


def check_batch_sizes(
    num_generations: int,
    per_device_train_batch_size: int,
    gradient_accumulation_steps: int = 1,
    world_size: int = 1,
    generation_batch_size: int | None = None,
) -> int:
    """El lote de generación, si ``num_generations`` lo divide; si no, un error.

    En TRL 1.16 cada paso de generación produce ``generation_batch_size``
    respuestas; sin fijarlo, son ``per_device_train_batch_size`` (respuestas,
    no enunciados) × ``gradient_accumulation_steps`` × procesos. Cada
    enunciado aparece ``num_generations`` veces (su grupo), así que el lote
    tiene que contener grupos enteros.
    """
    if num_generations < 2:
        raise GuardError(
            "batch",
            num_generations,
            f"num_generations = {num_generations}: GRPO necesita al menos 2 "
            "respuestas por enunciado para comparar cada una con la media de su "
            "grupo. Usa 2 o más.",
        )
    if generation_batch_size is None:
        batch = per_device_train_batch_size * gradient_accumulation_steps * world_size
        how = (
            f"per_device_train_batch_size × gradient_accumulation_steps × procesos "
            f"= {per_device_train_batch_size} × {gradient_accumulation_steps} × "
            f"{world_size} = {batch}"
        )
    else:
        batch = generation_batch_size
        how = f"generation_batch_size = {batch}"
    if batch % num_generations:
        fits = [g for g in range(2, batch + 1) if batch % g == 0]
        raise GuardError(
            "batch",
            num_generations,
            f"num_generations = {num_generations} no divide el lote de generación "
            f"({how}). Cada enunciado se repite num_generations veces y el lote "
            "debe contener grupos enteros. Elige un lote múltiplo de "
            f"{num_generations} (per_device_train_batch_size cuenta respuestas, "
            f"no enunciados) o un num_generations que lo divida: {fits}.",
        )
    return batch


def check_grpo_config(config: Any, world_size: int | None = None) -> None:
    """Las comprobaciones de lote y de bf16 sobre un ``trl.GRPOConfig`` hecho.

    ``world_size``: los procesos con que se va a entrenar (por omisión, los
    de la configuración, que TRL lee del entorno al crearla).
    """
    world = config.world_size if world_size is None else world_size
    check_batch_sizes(
        config.num_generations,
        config.per_device_train_batch_size,
        config.gradient_accumulation_steps,
        world,
        # TRL guarda el lote que calculó; solo se respeta si no cambia el
        # número de procesos
        config.generation_batch_size if world_size is None else None,
    )
    check_bf16(bool(config.bf16), use_cpu=bool(config.use_cpu))


# ---------------------------------------------------------------------------
# bf16
# ---------------------------------------------------------------------------


def cpu_supports_bf16() -> bool:
    """Si esta CPU hace cuentas en bf16 por hardware (AVX-512 BF16 o AMX).

    Sin eso, PyTorch emula bf16 en la CPU: corre, pero más lento que float32
    y sin ninguna ventaja.
    """
    cpu = torch.cpu
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(cpu, name, lambda: False)() for name in checks)


def check_bf16(bf16: bool, use_cpu: bool = False) -> None:
    """bf16 solo donde la máquina lo tiene.

    En GPU, transformers ya lo comprueba (en inglés); en CPU, no: con
    ``use_cpu=True`` acepta bf16 aunque la CPU no lo tenga.
    """
    if not bf16:
        return
    on_gpu = not use_cpu and torch.cuda.is_available()
    if on_gpu:
        if not torch.cuda.is_bf16_supported():
            raise GuardError(
                "bf16",
                torch.cuda.get_device_name(),
                f"bf16 = True, pero esta GPU ({torch.cuda.get_device_name()}) no "
                "tiene bf16 (hace falta una Ampere o posterior). Usa bf16=False.",
            )
        return
    if not cpu_supports_bf16():
        capability = torch.backends.cpu.get_cpu_capability()
        raise GuardError(
            "bf16",
            capability,
            "bf16 = True, pero aquí se entrena en CPU y esta CPU no tiene bf16 "
            f"por hardware (capacidad {capability}, sin AVX-512 BF16 ni AMX): "
            "PyTorch lo emularía, más lento que float32 y con otros números. "
            "Usa bf16=False en la CPU (bf16=True es para la GPU; ojo: "
            "trl.GRPOConfig pone bf16=True si no lo dices).",
        )


# ---------------------------------------------------------------------------
# Tokenizador y modelo
# ---------------------------------------------------------------------------


def is_conversational_dataset(dataset: Any) -> bool:
    """Si los enunciados de ``dataset`` son conversaciones (listas de
    mensajes con ``role`` y ``content``), mirando la primera fila."""
    from trl.data_utils import is_conversational

    return len(dataset) > 0 and is_conversational(dataset[0])


def check_chat_template(tokenizer: Any, dataset: Any) -> None:
    """Un conjunto conversacional necesita un tokenizador con plantilla de chat.

    TRL convierte cada conversación en texto con
    ``tokenizer.apply_chat_template``; sin plantilla, el error llegaría al
    generar el primer lote.
    """
    if not is_conversational_dataset(dataset):
        return
    if getattr(tokenizer, "chat_template", None):
        return
    name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    raise GuardError(
        "chat_template",
        name,
        f"Los enunciados son conversaciones ([{{'role': 'user', ...}}]), pero el "
        f"tokenizador «{name}» no tiene plantilla de chat (chat_template es "
        "None). Usa el tokenizador de un modelo de chat («…-Instruct»), ponle "
        "una (tokenizer.chat_template = ...) o pasa los enunciados como texto.",
    )


def hub_offline() -> bool:
    """Si no se puede descargar de Hugging Face (``HF_HUB_OFFLINE``)."""
    value = os.environ.get("HF_HUB_OFFLINE", "0").strip().lower()
    return value in ("1", "true", "yes", "on")


def download_hint(model_id: str) -> str:
    """Cómo descargar ``model_id`` en una máquina con red."""
    return (
        f"En una máquina con red: `hf download {model_id}` (o "
        f"`huggingface-cli download {model_id}`), y en esta, HF_HOME apuntando "
        "a esa caché; o pasa la carpeta del modelo descargado."
    )


def check_model_path(model: str | os.PathLike[str], offline: bool | None = None) -> str:
    """La carpeta del modelo, o el id de Hugging Face si se puede cargar.

    - Una carpeta que existe tiene que tener ``config.json`` (lo que lee
      ``AutoModelForCausalLM.from_pretrained``).
    - Algo que no existe vale si parece un id de Hugging Face
      (``organización/nombre``) y está en la caché local o se puede
      descargar (``offline`` falso; por omisión, según ``HF_HUB_OFFLINE``).

    Devuelve ``model`` como texto.
    """
    text = os.fspath(model)
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir() or not (path / "config.json").is_file():
            raise GuardError(
                "model_path",
                text,
                f"«{text}» existe pero no es la carpeta de un modelo: le falta "
                "config.json. Pasa la carpeta que escribió save_pretrained (con "
                "config.json y los pesos), no un archivo ni la carpeta de encima.",
            )
        return text
    # «runs/modelo» con runs/ aquí es una carpeta que falta, no un id
    if _HUB_ID.match(text) and not path.parent.is_dir():
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(text, "config.json")
        if isinstance(cached, str):
            return text
        if not (hub_offline() if offline is None else offline):
            return text
        raise GuardError(
            "model_path",
            text,
            f"El modelo «{text}» no está en la caché local de Hugging Face y no "
            f"se puede descargar (HF_HUB_OFFLINE). {download_hint(text)} Si era "
            "una carpeta, no existe.",
        )
    raise GuardError(
        "model_path",
        text,
        f"No existe la carpeta del modelo «{text}». Comprueba la ruta (relativa "
        f"a {Path.cwd()}) o pasa un id de Hugging Face como «organización/nombre».",
    )


# ---------------------------------------------------------------------------
# Los errores de TRL, en español
# ---------------------------------------------------------------------------

_TRL_MESSAGES: list[tuple[re.Pattern[str], str, Callable[[re.Match[str]], str]]] = [
    (
        re.compile(
            r"generation_batch_size \((\d+)\) must be divisible by num_generations "
            r"\((\d+)\)"
        ),
        "batch",
        lambda m: (
            f"TRL rechaza la configuración: num_generations = {m[2]} no divide el "
            f"lote de generación ({m[1]} respuestas = per_device_train_batch_size "
            "× gradient_accumulation_steps × procesos). El lote debe contener "
            f"grupos enteros: hazlo múltiplo de {m[2]} o cambia num_generations."
        ),
    ),
    (
        re.compile(
            r"generation_batch_size \((\d+)\) must be divisible by the global "
            r"batch size \((\d+)\)"
        ),
        "batch",
        lambda m: (
            f"TRL rechaza la configuración: generation_batch_size = {m[1]} no es "
            f"múltiplo del lote global ({m[2]} = per_device_train_batch_size × "
            "procesos). Ajusta uno de los dos."
        ),
    ),
    (
        re.compile(r"GRPO requires at least 2 generations per\sprompt.*?(-?\d+)"),
        "batch",
        lambda m: (
            f"TRL rechaza la configuración: num_generations = {m[1]}, y GRPO "
            "necesita al menos 2 respuestas por enunciado. Usa 2 o más."
        ),
    ),
    (
        re.compile(r"doesn't support bf16/gpu"),
        "bf16",
        lambda m: (
            "transformers rechaza bf16 = True: no hay una GPU con bf16. En la "
            "CPU, usa bf16=False (y use_cpu=True)."
        ),
    ),
]


def explain_trl_error(error: Exception) -> GuardError:
    """Un ``GuardError`` en español para un ``ValueError`` de TRL o de
    transformers. Si no se reconoce el mensaje, lo cita entero."""
    text = str(error)
    for pattern, kind, render in _TRL_MESSAGES:
        match = pattern.search(text)
        if match:
            return GuardError(kind, text, f"{render(match)} (TRL dijo: «{text}»)")
    return GuardError(
        "trl_config",
        text,
        f"TRL rechaza la configuración con este mensaje (en inglés): «{text}». "
        "Revisa el campo que nombra.",
    )


@contextmanager
def trl_errors_in_spanish() -> Iterator[None]:
    """Lo que se construya dentro (``trl.GRPOConfig(...)``, ``GRPOTrainer``)
    lanza un ``GuardError`` en español en vez del ``ValueError`` de TRL; el
    original queda como ``__cause__``."""
    try:
        yield
    except GuardError:
        raise
    except ValueError as error:
        raise explain_trl_error(error) from error
