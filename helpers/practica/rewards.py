"""Funciones de recompensa con el contrato de TRL (ejercicio 2 del cuaderno 11).

``GRPOTrainer`` de TRL 1.16 (``_calculate_rewards``) llama a cada función de
recompensa así: ``f(prompts=..., completions=..., completion_ids=...,
answer=..., <cada otra columna del conjunto de datos>=..., trainer_state=...,
log_extra=..., log_metric=...)``,
todo con nombre, una lista por argumento (una entrada por respuesta), y
espera una **lista de floats**, una por respuesta (``None`` significa «no se
aplica» y TRL lo convierte en ``nan``). Por eso una función de recompensa
acaba siempre en ``**kwargs``: lo que no usa, lo recibe y lo ignora.

Las respuestas llegan como texto (``"17×20+17×4=340+68=408"``) o, si el
``prompt`` del conjunto de datos es una conversación, como mensajes
(``[{"role": "assistant", "content": "…"}]``): ``completion_text`` saca el
texto de las dos formas.

**El «.» final.** TRL decodifica las respuestas con
``skip_special_tokens=True``. Con el tokenizador del curso el «.» es el token
de fin (especial), así que dentro de TRL la respuesta llega **sin** su punto
final: ``"…=408"``, no ``"…=408."``. Estas referencias aceptan el formato del
curso con el punto y sin él.

Las referencias:

- ``correctness_reward(completions, answer, **kwargs)``: 1,0 si
  ``math-verify`` da por buena la respuesta frente a la columna ``answer``
  (con ``helpers.puente.rewards.check_answer``, la de 09). Una referencia que
  no se puede leer (``""``, ``"n/a"``, ``"####"``) **paga 0 y se avisa**.
- ``format_reward(completions, **kwargs)``: 1,0 si la respuesta termina en el
  formato del curso (``=N``, con el «.» o sin él) o en ``\\boxed{…}``.

Ninguna lanza una excepción por un texto raro (vacío, con unicode, enorme).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence

from helpers.puente.rewards import check_answer

#: La respuesta entera (``fullmatch``), que puede tener varias líneas
#: (``DOTALL``: sin él, ``.`` no cruza los saltos de línea), termina en el
#: formato del curso, ``=408`` con el punto final o sin él, o en
#: ``\boxed{…}`` (con un nivel de llaves dentro: ``\boxed{\frac{1}{2}}``).
FORMAT_PATTERN = re.compile(
    r".*(?:=[0-9]+|\\boxed\{(?:[^{}]|\{[^{}]*\})+\})\s*\.?\s*", re.DOTALL
)

#: El nombre de la métrica que registra ``correctness_reward`` en TRL: la
#: fracción de referencias ilegibles del lote.
UNPARSABLE_METRIC = "unparsable_gold"


class UnparsableGoldWarning(UserWarning):
    """Aviso: una respuesta de referencia no se puede leer y paga 0."""


def completion_text(completion: object) -> str:
    """El texto de una respuesta, venga como venga de TRL.

    - un texto: tal cual;
    - una conversación, ``[{"role": "assistant", "content": "…"}]``: el
      contenido de sus mensajes, seguido (TRL pasa uno solo);
    - un mensaje suelto, ``{"role": …, "content": …}``: su contenido (que
      también puede ser una lista de partes ``{"type": "text", "text": …}``);
    - ``None``: el texto vacío.

    Cualquier otra cosa (un tensor de ids, un número) es un ``TypeError``
    en español: no es texto que se pueda puntuar.
    """
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        content = completion.get("content")
        if isinstance(content, list):  # partes de un mensaje multimodal
            return "".join(
                str(part.get("text") or "")
                for part in content
                if isinstance(part, dict)
            )
        return completion_text(content)
    if isinstance(completion, list | tuple):
        return "".join(completion_text(message) for message in completion)
    raise TypeError(
        "Una respuesta debe ser un texto o una conversación "
        f"([{{'role': 'assistant', 'content': …}}]); es {type(completion).__name__}."
    )


def correctness_reward(
    completions: Sequence[object],
    answer: Sequence[object] | None = None,
    **kwargs: object,
) -> list[float]:
    """1,0 por cada respuesta que ``math-verify`` da por buena; si no, 0,0.

    - ``completions``: las respuestas, en texto o en conversación;
    - ``answer``: la columna ``answer`` del conjunto de datos (la referencia
      de cada respuesta: ``"408"``, ``408`` o ``"\\boxed{408}"``);
    - ``kwargs``: lo demás que pasa TRL (``prompts``, ``completion_ids``,
      ``trainer_state``, otras columnas…), que se ignora salvo
      ``log_metric``.

    La respuesta se lee con ``check_answer`` de 09: del último ``\\boxed{…}``
    si lo hay y, si no, de la última expresión (``…=340+68=408`` da 408).

    **Una referencia ilegible nunca paga**: si ``math-verify`` no saca nada
    de ella, la respuesta vale 0,0 se diga lo que se diga, y se avisa con un
    ``UnparsableGoldWarning`` (uno por llamada, con los índices). Dentro de
    TRL además se registra la fracción de ilegibles como la métrica
    ``unparsable_gold`` (con el ``log_metric`` que TRL pasa). Ojo con el
    clásico: ``parse("") == parse("")`` es ``[] == []``, verdadero.
    """
    if answer is None:
        raise ValueError(
            "correctness_reward necesita la columna «answer» del conjunto de datos "
            "(TRL la pasa como answer=...): el conjunto de datos no la tiene."
        )
    if len(answer) != len(completions):
        raise ValueError(
            f"Hay {len(completions)} respuestas y {len(answer)} referencias: "
            "debe haber una referencia por respuesta."
        )
    rewards: list[float] = []
    unparsable: list[int] = []
    for i, (completion, gold) in enumerate(zip(completions, answer, strict=True)):
        verdict = check_answer(completion_text(completion), _gold_text(gold))
        if not verdict.gold_ok:
            unparsable.append(i)
        rewards.append(float(verdict.correctness))
    if unparsable:
        shown = ", ".join(f"{i} ({answer[i]!r})" for i in unparsable[:5])
        more = "…" if len(unparsable) > 5 else ""
        warnings.warn(
            f"{len(unparsable)} de {len(answer)} respuestas de referencia no se "
            f"pueden leer y pagan 0: {shown}{more}. Revisa la columna «answer».",
            UnparsableGoldWarning,
            stacklevel=2,
        )
    log_metric = kwargs.get("log_metric")
    if callable(log_metric):
        _log(log_metric, len(unparsable) / max(len(answer), 1))
    return rewards


def format_reward(completions: Sequence[object], **kwargs: object) -> list[float]:
    """1,0 por cada respuesta que termina en el formato pedido; si no, 0,0.

    El formato: la respuesta **entera** (que puede tener varias líneas) acaba
    en ``=N`` del curso, con el «.» final o sin él (TRL lo quita al
    decodificar: es el token de fin), o en ``\\boxed{…}``; se admiten espacios
    y un punto detrás. Es ``FORMAT_PATTERN.fullmatch``, con ``re.DOTALL``
    para que ``.*`` cruce los saltos de línea. No mira si el número es el
    correcto: eso es ``correctness_reward``. ``kwargs`` (lo que pasa TRL) se
    ignora.
    """
    return [
        float(FORMAT_PATTERN.fullmatch(completion_text(c)) is not None)
        for c in completions
    ]


def _gold_text(gold: object) -> str:
    """La referencia como texto (``None`` es ilegible: el texto vacío)."""
    return "" if gold is None else str(gold)


def _log(log_metric: Callable[[str, float], object], value: float) -> None:
    """Registra ``value`` con el ``log_metric`` de TRL."""
    log_metric(UNPARSABLE_METRIC, value)
