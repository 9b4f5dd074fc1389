"""El puente: el modelo y la pérdida del curso dentro de transformers y TRL.

Todo lo que necesita el módulo 09_puente, hecho con lo que trae el
repositorio y sin descargar nada (``HF_HUB_OFFLINE=1`` si nadie lo fijó):

- ``convert``: el modelo del ajuste supervisado (``helpers.tinylm``) como un
  ``GPT2LMHeadModel`` de transformers, y de vuelta (``to_gpt2``,
  ``to_tinylm``, ``load_pretrained_gpt2``; ``load_gpt2`` lo carga de una
  carpeta de ``save_pretrained``).
- ``tokenizer``: el alfabeto de 15 caracteres como ``PreTrainedTokenizerFast``
  con plantilla de chat (``make_tokenizer``), y la generación voraz con
  ``generate()`` (``greedy_completions``).
- ``rewards``: verificadores de verdad con ``math-verify``: una recompensa de
  formato y otra de corrección; una respuesta de referencia que no se puede
  leer da 0 y se avisa, nunca se paga.
- ``losses``: log-probabilidades por token de los logits de Hugging Face
  (``response_log_probs``) y la pérdida del curso con los nombres y las
  convenciones de TRL (``course_loss_as_trl``).
- ``recipe``: la receta que escala, ``python -m helpers.puente.recipe``
  (``RecipeConfig``, ``load_config``, ``build_trainer``): GRPOTrainer de TRL
  con el modelo del curso en CPU o uno de verdad en GPU (``docs/gpu.md``).
- ``compare``: el entrenador del curso y GRPOTrainer con el mismo presupuesto
  (``run_course``, ``run_trl``, ``RunResult``) y las métricas de TRL con los
  nombres del curso (``course_metrics``).

Importar ``helpers.puente`` importa transformers (unos segundos); el resto
del curso no lo necesita y no lo importa.
"""

from __future__ import annotations

import os

# Nada de descargas: el modelo y el tokenizador salen del repositorio.
# huggingface_hub lee la variable una sola vez, al importarse: si alguien lo
# importó antes que a este paquete (un «import transformers» más arriba en la
# misma celda), se corrige también la constante ya leída.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
if os.environ["HF_HUB_OFFLINE"].upper() in {"1", "ON", "YES", "TRUE"}:
    import huggingface_hub.constants

    huggingface_hub.constants.HF_HUB_OFFLINE = True

from .compare import (  # noqa: E402
    RunResult,
    course_metrics,
    run_course,
    run_trl,
)
from .convert import (  # noqa: E402
    gpt2_config,
    load_gpt2,
    load_pretrained_gpt2,
    to_gpt2,
    to_tinylm,
)
from .losses import (  # noqa: E402
    COURSE_NORMALIZATION,
    TRL_LOSS_TYPES,
    course_loss_as_trl,
    response_log_probs,
)
from .rewards import (  # noqa: E402
    BatchScore,
    TRLReward,
    Verdict,
    check_answer,
    correctness_reward,
    format_reward,
    score_batch,
)
from .tokenizer import (  # noqa: E402
    CHAT_TEMPLATE,
    greedy_completions,
    make_tokenizer,
)

# La receta se importa cuando se pide: si el paquete la importara al cargarse,
# «python -m helpers.puente.recipe» la encontraría ya importada y runpy
# avisaría (RuntimeWarning) antes de ejecutarla.
_FROM_RECIPE = ("RecipeConfig", "build_trainer", "load_config")


def __getattr__(name: str) -> object:
    if name in _FROM_RECIPE:
        from . import recipe

        return getattr(recipe, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def quiet_transformers() -> None:
    """Sin barras de progreso ni avisos de transformers (para los cuadernos)."""
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()


__all__ = [
    "CHAT_TEMPLATE",
    "COURSE_NORMALIZATION",
    "TRL_LOSS_TYPES",
    "BatchScore",
    "RecipeConfig",
    "RunResult",
    "TRLReward",
    "Verdict",
    "build_trainer",
    "check_answer",
    "course_metrics",
    "correctness_reward",
    "course_loss_as_trl",
    "format_reward",
    "gpt2_config",
    "greedy_completions",
    "load_gpt2",
    "load_config",
    "load_pretrained_gpt2",
    "make_tokenizer",
    "quiet_transformers",
    "response_log_probs",
    "run_course",
    "run_trl",
    "score_batch",
    "to_gpt2",
    "to_tinylm",
]
