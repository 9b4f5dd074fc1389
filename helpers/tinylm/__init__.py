"""Un modelo de lenguaje diminuto que multiplica, para entrenarlo con GRPO.

Todo lo que necesita el módulo 07_grpo, sin descargar nada:

- ``tokenizer``: caracteres <-> ids (dígitos, «×», «+», «=», punto final).
- ``TinyLM``: un transformer solo decodificador de ~0,1 M parámetros.
- ``sample`` / ``token_log_probs``: generar respuestas (muestreando o, con
  ``temperature=0``, de forma voraz) y medir su log-probabilidad token a token.
- ``heldout_accuracy``, ``p_correct``, ``pass_at_k``: cómo medimos al modelo
  (a temperatura 1, voraz y pass@k; ver ``evaluate.py``).
- ``verify``: el verificador, 1 si la respuesta final es correcta y 0 si no.
- ``load_pretrained``: el punto de partida (ajuste supervisado) que trae el
  paquete; ``python -m helpers.tinylm.sft`` lo reproduce.
- ``group_advantages``, ``grpo_loss``, ``train_grpo``: GRPO de referencia;
  ``grpo_objective_loss``, ``k3_kl`` y ``normalize_loss``: el objetivo
  completo de DeepSeekMath (recorte, penalización KL, normalización por
  longitud), y ``kl_to_reference`` para medir cuánto se alejó el modelo.
- ``rloo_advantages``, ``token_level_rewards``, ``policy_entropy``,
  ``pass_at_k_curve``, ``buggy_verify``, ``exploit_flags`` y
  ``train_method`` (GRPO, RLOO o PPO con crítico, con el mismo paso y el
  mismo bucle que ``train_grpo``): el módulo 08_mas_alla (``methods.py``; las
  curvas guardadas, en ``compare.py``).
- ``python -m helpers.tinylm.bench`` mide los presupuestos de tiempo.

Ejemplo::

    from helpers.tinylm import load_pretrained, train_grpo, p_correct
    model = load_pretrained()
    print(p_correct(model))           # P(correcta | 17 × 24) antes
    history = train_grpo(model)       # un minuto de CPU, más o menos
    print(p_correct(model))           # y después
"""

from .checkpoint import (
    CHECKPOINT_PATH,
    checkpoint_info,
    load_checkpoint,
    load_pretrained,
    save_checkpoint,
)
from .evaluate import (
    correct_counts,
    estimate_pass_at_k,
    heldout_accuracy,
    kl_to_reference,
    mean_reward,
    p_correct,
    pass_at_k,
)
from .grpo import (
    LOSS_NORMALIZATIONS,
    GRPOConfig,
    group_advantages,
    grpo_loss,
    grpo_objective_loss,
    grpo_step,
    k3_kl,
    normalize_loss,
    train_grpo,
    train_grpo_runs,
)
from .methods import (
    MethodConfig,
    buggy_verify,
    exploit_flags,
    pass_at_k_curve,
    policy_entropy,
    rloo_advantages,
    token_gae,
    token_level_rewards,
    train_method,
)
from .model import KVCache, TinyLM, TinyLMConfig
from .sampling import (
    Samples,
    completion_mask,
    copy_model,
    is_greedy,
    next_token_log_probs,
    next_token_probs,
    path_probs,
    sample,
    token_log_probs,
)
from .task import (
    MAX_NEW_TOKENS,
    PROMPT_LEN,
    TARGET,
    Problem,
    all_problems,
    encode_prompts,
    extract_answer,
    heldout_problems,
    prompt_text,
    rewards_for,
    rl_problems,
    solution_text,
    train_problems,
    verify,
)
from .tokenizer import ALPHABET, END, PAD, CharTokenizer, tokenizer

__all__ = [
    "ALPHABET",
    "LOSS_NORMALIZATIONS",
    "CHECKPOINT_PATH",
    "END",
    "MAX_NEW_TOKENS",
    "PAD",
    "PROMPT_LEN",
    "TARGET",
    "CharTokenizer",
    "GRPOConfig",
    "KVCache",
    "MethodConfig",
    "Problem",
    "Samples",
    "TinyLM",
    "TinyLMConfig",
    "all_problems",
    "buggy_verify",
    "checkpoint_info",
    "completion_mask",
    "copy_model",
    "correct_counts",
    "encode_prompts",
    "estimate_pass_at_k",
    "exploit_flags",
    "extract_answer",
    "group_advantages",
    "grpo_loss",
    "grpo_objective_loss",
    "grpo_step",
    "heldout_accuracy",
    "heldout_problems",
    "is_greedy",
    "k3_kl",
    "kl_to_reference",
    "load_checkpoint",
    "load_pretrained",
    "mean_reward",
    "next_token_log_probs",
    "next_token_probs",
    "normalize_loss",
    "p_correct",
    "pass_at_k",
    "pass_at_k_curve",
    "path_probs",
    "policy_entropy",
    "prompt_text",
    "rewards_for",
    "rl_problems",
    "rloo_advantages",
    "sample",
    "save_checkpoint",
    "solution_text",
    "token_gae",
    "token_level_rewards",
    "token_log_probs",
    "tokenizer",
    "train_grpo",
    "train_grpo_runs",
    "train_method",
    "train_problems",
    "verify",
]
