"""La tarea: multiplicar dos números de dos cifras, enseñando el desarrollo.

Un problema es un par ``(a, b)`` con 10 ≤ a, b ≤ 99. El enunciado que ve el
modelo es ``"17×24="`` y la respuesta que debe escribir descompone ``b`` en
decenas y unidades, como en el ejemplo del curso::

    17×24=17×20+17×4=340+68=408.

(el punto final es el token de fin). El verificador solo mira el número que
hay tras el último «=»: da 1 si es el producto correcto y 0 en cualquier otro
caso, sin lanzar nunca una excepción.

Los problemas se reparten una vez, con una semilla fija:

- ``TARGET = (17, 24)``: la pregunta del curso. Ni él ni 24 × 17 aparecen en
  los datos supervisados.
- ``heldout_problems()``: 256 problemas de evaluación que no se entrenan
  nunca, ni con SFT ni con GRPO (tampoco sus conmutados).
- ``train_problems()``: el resto, salvo 17 × 24 y 24 × 17; de aquí salen los
  ejemplos supervisados.
- ``rl_problems()``: lo de entrenamiento más 17 × 24 y 24 × 17: GRPO sí puede
  practicar con la pregunta del curso.
"""

from __future__ import annotations

import random
import re
from functools import cache

import torch

from .tokenizer import END, tokenizer

TARGET = (17, 24)
HELDOUT_SIZE = 256
SPLIT_SEED = 2024  # semilla del reparto de problemas: no la cambies
PROMPT_LEN = 6  # "ab×cd=": todos los enunciados miden lo mismo
MAX_NEW_TOKENS = 26  # la respuesta más larga, 99×90+99×9=8910+891=9801., mide 25

Problem = tuple[int, int]

_NUMBER = re.compile(r"[0-9]+")


def prompt_text(a: int, b: int) -> str:
    """El enunciado: ``prompt_text(17, 24) == "17×24="``."""
    return f"{a}×{b}="


def solution_text(a: int, b: int) -> str:
    """La respuesta desarrollada, con el punto final.

    ``solution_text(17, 24) == "17×20+17×4=340+68=408."``
    """
    tens, units = 10 * (b // 10), b % 10
    return f"{a}×{tens}+{a}×{units}={a * tens}+{a * units}={a * b}{END}"


def extract_answer(text: str) -> int | None:
    """El número tras el último «=» antes del punto final, o ``None``.

    ``text`` puede ser la respuesta sola o el enunciado más la respuesta.
    Devuelve ``None`` si falta el punto final (respuesta cortada), si no hay
    ningún «=» o si lo que sigue al último «=» no es un número.
    """
    if not isinstance(text, str):
        return None
    end = text.find(END)
    if end < 0:
        return None  # sin token de fin: la respuesta quedó a medias
    body = text[:end]
    if "=" not in body:
        return None
    final = body.rsplit("=", 1)[1]
    if not _NUMBER.fullmatch(final):
        return None
    return int(final)


def verify(text: str, a: int, b: int) -> int:
    """Recompensa del verificador: 1 si la respuesta final es ``a * b``, si no 0.

    Nunca lanza una excepción: una respuesta mal formada o cortada vale 0.
    """
    return int(extract_answer(text) == a * b)


def rewards_for(completions: torch.Tensor, problems: list[Problem]) -> torch.Tensor:
    """Recompensas de un lote de respuestas generadas.

    ``completions``: ``(B, T)`` ids (solo la respuesta, sin el enunciado);
    ``problems``: lista de B pares ``(a, b)``. Devuelve ``(B,)`` float con 1 y 0.
    """
    texts = tokenizer.decode_batch(completions)
    return torch.tensor(
        [float(verify(t, a, b)) for t, (a, b) in zip(texts, problems, strict=True)]
    )


def encode_prompts(problems: list[Problem]) -> torch.Tensor:
    """Enunciados de ``problems`` -> tensor ``(N, PROMPT_LEN)`` de ids."""
    return tokenizer.encode_batch([prompt_text(a, b) for a, b in problems])


def all_problems() -> list[Problem]:
    """Los 90 × 90 = 8100 problemas de dos cifras por dos cifras."""
    return [(a, b) for a in range(10, 100) for b in range(10, 100)]


def _pair(problem: Problem) -> frozenset[int]:
    """El problema sin orden: 17 × 24 y 24 × 17 son la misma pareja."""
    return frozenset(problem)


@cache
def _split() -> tuple[tuple[Problem, ...], tuple[Problem, ...]]:
    """Reparto fijo en (evaluación, entrenamiento)."""
    rng = random.Random(SPLIT_SEED)
    candidates = [p for p in all_problems() if _pair(p) != _pair(TARGET)]
    heldout = rng.sample(candidates, HELDOUT_SIZE)
    forbidden = {_pair(p) for p in heldout} | {_pair(TARGET)}
    train = [p for p in all_problems() if _pair(p) not in forbidden]
    return tuple(heldout), tuple(train)


def heldout_problems() -> list[Problem]:
    """Los 256 problemas de evaluación (nunca se entrenan)."""
    return list(_split()[0])


def train_problems() -> list[Problem]:
    """Problemas para el ajuste supervisado: sin evaluación y sin 17 × 24."""
    return list(_split()[1])


def rl_problems() -> list[Problem]:
    """Problemas para GRPO: los de entrenamiento más 17 × 24 y 24 × 17."""
    return [*train_problems(), TARGET, TARGET[::-1]]
