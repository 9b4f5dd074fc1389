"""Verificadores de verdad: formato y corrección, con ``math-verify``.

El verificador del curso (``helpers.tinylm.verify``) solo entiende
``…=408.``. Los modelos reales escriben ``La respuesta es \\boxed{408}``,
``1,234``, ``408.0`` o ``\\frac{816}{2}``, y comparar cadenas los suspende.
``math-verify`` (Hugging Face) extrae la respuesta y la compara como número o
expresión. Aquí la recompensa va en dos partes:

- **formato** (``format_reward``): 1 si la respuesta termina donde debe: con
  ``\\boxed{…}`` al final, o en el formato del curso, ``=N.`` al final;
- **corrección** (``correctness_reward``): 1 si la respuesta extraída es
  igual a la de referencia para ``math-verify``. Se extrae del último
  ``\\boxed{…}`` si lo hay y, si no, de la última expresión del texto (así
  que un número escrito *después* de la respuesta la sustituye: para eso
  está el recuadro).

**Una referencia que no se puede leer nunca paga.** Si ``math-verify`` no
saca nada de la respuesta de referencia (un dato roto: ``""``, ``"N/A"``…),
las dos recompensas son 0 y el caso se informa (``Verdict.gold_ok``,
``BatchScore.unparsable_golds``, ``TRLReward.unparsable_golds``). Un
verificador descuidado que compare «lo que se extrajo» de los dos lados
pagaría 1 cuando ninguno de los dos tiene nada: el fallo que enseña 09.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import torch
from math_verify import parse, verify

from helpers.tinylm.tokenizer import tokenizer as course_tokenizer

# \boxed{…} al final (se admiten espacios, un punto, o el cierre de $ o \])
_BOXED_AT_END = re.compile(r"\\boxed\{.+\}\s*(\$|\\\])?\s*\.?\s*$", re.DOTALL)
# El formato del curso: «…=408.» (el punto es el token de fin)
_COURSE_FORMAT = re.compile(r"=[0-9]+\.$")


@dataclass(frozen=True)
class Verdict:
    """Lo que decide el verificador sobre una respuesta.

    Attributes:
        format: 1.0 si la respuesta acaba en ``\\boxed{…}`` o en ``=N.``.
        correctness: 1.0 si ``math-verify`` da la respuesta por buena.
        answer: lo que se extrajo de la respuesta (``None`` si nada).
        gold_ok: ``False`` si la respuesta de referencia no se pudo leer;
            entonces ``format`` y ``correctness`` son 0.
    """

    format: float
    correctness: float
    answer: str | None
    gold_ok: bool


def _last_boxed(text: str) -> str | None:
    """El contenido del último ``\\boxed{…}``, con llaves anidadas, o ``None``."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, i = 0, start + len("\\boxed")
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j]
    return None  # recuadro sin cerrar


def _parse(text: str) -> list:
    """``math_verify.parse`` de ``text``; una lista vacía si no hay nada."""
    return parse(text) if text.strip() else []


def check_answer(completion: str, gold: str | int | float) -> Verdict:
    """Formato y corrección de ``completion`` frente a la referencia ``gold``.

    ``gold`` puede ser un número (``408``) o un texto (``"408"``,
    ``"\\boxed{408}"``, ``"#### 408"``). Nunca lanza una excepción.
    """
    gold_parsed = _parse(str(gold))
    if not gold_parsed:
        return Verdict(0.0, 0.0, None, gold_ok=False)
    boxed = _last_boxed(completion)
    source = f"\\boxed{{{boxed}}}" if boxed is not None else completion
    answer = _parse(source)
    correct = bool(answer) and verify(gold_parsed, answer)
    well_formed = bool(
        (boxed and _BOXED_AT_END.search(completion))
        or _COURSE_FORMAT.search(completion)
    )
    return Verdict(
        format=float(well_formed),
        correctness=float(correct),
        answer=str(answer[-1]) if answer else None,
        gold_ok=True,
    )


def format_reward(completion: str, gold: str | int | float) -> float:
    """1.0 si ``completion`` acaba en ``\\boxed{…}`` o en ``=N.``.

    Ver ``check_answer``.
    """
    return check_answer(completion, gold).format


def correctness_reward(completion: str, gold: str | int | float) -> float:
    """1.0 si ``math-verify`` da por buena la respuesta (ver ``check_answer``)."""
    return check_answer(completion, gold).correctness


@dataclass
class BatchScore:
    """Recompensas de un lote, con lo que no se pudo puntuar a la vista.

    Attributes:
        rewards: ``correctness + format_weight · format`` de cada respuesta.
        format: la parte de formato de cada una.
        correctness: la parte de corrección de cada una.
        unparsable_golds: índices cuya referencia no se pudo leer (pagan 0).
    """

    rewards: list[float]
    format: list[float]
    correctness: list[float]
    unparsable_golds: list[int] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """Un aviso en español por cada referencia ilegible."""
        return [
            f"La respuesta de referencia del ejemplo {i} no se puede leer: "
            "se puntúa con 0."
            for i in self.unparsable_golds
        ]


def score_batch(
    completions: Sequence[str],
    golds: Sequence[str | int | float],
    format_weight: float = 0.0,
) -> BatchScore:
    """Puntúa un lote: ``correctness + format_weight · format`` por respuesta."""
    verdicts = [check_answer(c, g) for c, g in zip(completions, golds, strict=True)]
    return BatchScore(
        rewards=[v.correctness + format_weight * v.format for v in verdicts],
        format=[v.format for v in verdicts],
        correctness=[v.correctness for v in verdicts],
        unparsable_golds=[i for i, v in enumerate(verdicts) if not v.gold_ok],
    )


class TRLReward:
    """Una función de recompensa para ``GRPOTrainer`` de TRL.

    TRL llama a cada función de recompensa con las respuestas y las columnas
    del conjunto de datos como argumentos con nombre, y usa ``__name__`` en
    sus métricas (``rewards/correctness/mean``...). Esta lee la columna
    ``answer`` (la referencia) y **``completion_ids``, no el texto**: TRL
    decodifica las respuestas quitando los tokens especiales, y en este
    vocabulario el «.» final es uno (el de fin), así que el texto que pasa ya
    no tiene el formato ``=N.``. Los ids se decodifican con el tokenizador del
    curso, que solo quita el relleno.

    Las referencias ilegibles pagan 0, se acumulan en ``unparsable_golds`` y
    se avisan con ``warnings.warn``.
    """

    def __init__(self, kind: Literal["format", "correctness"]) -> None:
        if kind not in ("format", "correctness"):
            raise ValueError(f"kind debe ser 'format' o 'correctness'; es {kind!r}.")
        self.kind = kind
        self.__name__ = kind
        self.unparsable_golds: list[str] = []

    def __call__(
        self,
        completions: Sequence[object] | None = None,
        completion_ids: Sequence[Sequence[int]] | None = None,
        answer: Sequence[str | int | float] | None = None,
        **kwargs: object,
    ) -> list[float]:
        """Una recompensa por respuesta (``kwargs``: lo demás que pasa TRL)."""
        if completion_ids is None or answer is None:
            raise ValueError(
                "Hacen falta completion_ids (los pasa TRL) y la columna «answer» "
                "del conjunto de datos."
            )
        texts = [course_tokenizer.decode(_as_list(ids)) for ids in completion_ids]
        rewards = []
        for text, gold in zip(texts, answer, strict=True):
            verdict = check_answer(text, gold)
            if not verdict.gold_ok:
                self.unparsable_golds.append(str(gold))
                warnings.warn(
                    f"Respuesta de referencia ilegible ({gold!r}): se puntúa con 0.",
                    stacklevel=2,
                )
            rewards.append(getattr(verdict, self.kind))
        return rewards


def _as_list(ids: Sequence[int] | torch.Tensor) -> list[int]:
    """Ids de una respuesta como lista (TRL pasa listas; se admiten tensores)."""
    return ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
