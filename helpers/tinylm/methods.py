"""Más allá de GRPO: RLOO, PPO con crítico, entropía y un verificador con trampa.

Las referencias del módulo 08_mas_alla, sobre el mismo modelo diminuto que
multiplica (``helpers.tinylm``):

- ``rloo_advantages``: la línea base «dejando uno fuera» de RLOO (Kool et al.,
  2019; Ahmadian et al., 2024): a cada respuesta se le resta la media de las
  *otras* G − 1 de su enunciado.
- ``token_level_rewards``: la recompensa token a token de PPO a la
  InstructGPT (Ouyang et al., 2022): −β · (log π_θ − log π_ref) en cada token
  y la nota del verificador sumada en el último.
- ``policy_entropy``: la entropía media por token (en nats) de la política
  sobre sus propias respuestas, para ver el colapso de la entropía.
- ``pass_at_k_curve``: pass@k para k = 1 … 64 con el estimador insesgado
  (``evaluate.estimate_pass_at_k``, Chen et al., 2021).
- ``buggy_verify`` y ``exploit_flags``: un verificador plausible pero con un
  fallo, y qué respuestas se cuelan por él (recompensa sin acertar).
- ``MethodConfig`` y ``train_method``: GRPO, RLOO y PPO con cabeza de valor,
  entrenados con el mismo número de respuestas muestreadas para compararlos.
  El paso y el bucle son los de ``grpo.py`` (``collect_rollout``,
  ``update_policy``, ``run_training``): solo cambian la recompensa, las
  ventajas, el crítico de PPO y lo que se evalúa. Por eso ``MethodConfig``
  lleva dentro la ``GRPOConfig`` del paso y del bucle (``grpo``), la del
  crítico (``critic``) y lo propio de este módulo.
"""

from __future__ import annotations

import copy
import math
import re
import resource
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

import torch
from torch import nn

from ..rollouts import gae
from .evaluate import estimate_pass_at_k
from .grpo import (
    AuxiliaryLoss,
    GRPOConfig,
    RewardFn,
    collect_rollout,
    group_advantages,
    run_training,
    update_policy,
)
from .model import TinyLM
from .preferences import _WORK, FINAL_POINTS, PARTIAL_POINTS, true_utility
from .sampling import copy_model, next_token_log_probs, sample
from .task import (
    Problem,
    encode_prompts,
    extract_answer,
    heldout_problems,
    rl_problems,
    verify,
)
from .tokenizer import END, tokenizer

# --- 1. RLOO: la línea base de los demás -------------------------------------


def rloo_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """Ventajas de RLOO: cada recompensa menos la media de las otras G − 1.

    - ``rewards``: ``(P, G)``, las G recompensas de cada uno de P enunciados
      (también vale un solo grupo ``(G,)``), con G ≥ 2.

    Devuelve un tensor float de la misma forma, sin tocar la entrada:
    ``A_i = r_i − (Σ_j r_j − r_i) / (G − 1)``. La línea base de cada respuesta
    no depende de ella misma, así que el estimador del gradiente no tiene
    sesgo. Es la ventaja de GRPO (sin dividir por la desviación) multiplicada
    por G / (G − 1). Ejemplo: ``[1, 0, 0, 1]`` -> ``[2/3, −2/3, −2/3, 2/3]``.
    """
    rewards = torch.as_tensor(rewards)
    if not rewards.is_floating_point():
        rewards = rewards.float()
    if rewards.dim() not in (1, 2):
        raise ValueError(
            f"rewards debe tener forma (G,) o (P, G); tiene {tuple(rewards.shape)}."
        )
    G = rewards.shape[-1]
    if G < 2:
        raise ValueError(f"RLOO necesita al menos 2 respuestas por grupo; hay {G}.")
    others = (rewards.sum(dim=-1, keepdim=True) - rewards) / (G - 1)
    return (rewards - others).detach()


# --- 2. PPO a la InstructGPT: recompensa por token --------------------------


def token_level_rewards(
    scores: torch.Tensor,
    log_probs: torch.Tensor,
    ref_log_probs: torch.Tensor,
    mask: torch.Tensor,
    kl_coef: float,
) -> torch.Tensor:
    """Recompensa de cada token para PPO con penalización KL por token.

    - ``scores``: ``(B,)``, la nota del verificador de cada respuesta (0 o 1).
    - ``log_probs``, ``ref_log_probs``: ``(B, T)``, log-probabilidad de cada
      token muestreado bajo la política y bajo la referencia congelada.
    - ``mask``: ``(B, T)``, ``True`` (o 1) en los tokens de la respuesta.
    - ``kl_coef``: β.

    Devuelve ``(B, T)``, sin gradiente: ``−β · (log π_θ − log π_ref)`` en cada
    token válido, más la nota sumada en el **último** token válido de cada
    fila, y 0 en el relleno. Así, la suma de una fila es
    ``nota − β · Σ_t log(π_θ / π_ref)``: la recompensa de InstructGPT.
    """
    with torch.no_grad():
        valid = torch.as_tensor(mask).bool()
        log_probs = torch.as_tensor(log_probs).detach().float()
        ref_log_probs = torch.as_tensor(ref_log_probs).detach().float()
        scores = torch.as_tensor(scores).detach().float()
        penalty = -kl_coef * (log_probs - ref_log_probs)
        rewards = torch.where(valid, penalty, torch.zeros_like(penalty))
        T = valid.shape[-1]
        # Índice del último token válido: el primero empezando por el final
        last = T - 1 - valid.flip(-1).int().argmax(dim=-1)  # (B,)
        has_tokens = valid.any(dim=-1)
        rows = torch.arange(valid.shape[0])[has_tokens]
        rewards[rows, last[has_tokens]] += scores[has_tokens]
    return rewards


# --- 3. Entropía de la política ---------------------------------------------


@torch.no_grad()
def policy_entropy(
    model: TinyLM,
    problems: list[Problem] | None = None,
    *,
    samples: int = 2,
    generator: torch.Generator | None = None,
    temperature: float = 1.0,
) -> float:
    """Entropía media por token (en nats) de la política en sus respuestas.

    Muestrea ``samples`` respuestas a ``temperature`` para cada problema (por
    defecto, los 256 de evaluación) y, en cada token de cada respuesta, mide
    la entropía ``H = −Σ_v π(v) log π(v)`` de la distribución completa del
    siguiente carácter. Devuelve la media sobre todos esos tokens. Sin
    ``generator`` usa uno con semilla 0, así que el mismo modelo da siempre
    el mismo número. Cerca de 0: el modelo ya casi no duda (colapso).
    """
    problems = heldout_problems() if problems is None else problems
    generator = torch.Generator().manual_seed(0) if generator is None else generator
    prompts = encode_prompts(problems).repeat_interleave(samples, dim=0)
    batch = sample(model, prompts, temperature=temperature, generator=generator)
    logits = model(batch.sequences[:, :-1])[:, batch.prompt_len - 1 :]
    log_p = next_token_log_probs(logits, temperature)  # (B, T, V)
    p = log_p.exp()
    # El relleno tiene p = 0 y log p = −∞: su término es 0, no nan
    entropy = -torch.where(p > 0, p * log_p, torch.zeros_like(p)).sum(dim=-1)
    valid = batch.mask.bool()
    return entropy[valid].mean().item()


# --- 4. Un verificador con trampa -------------------------------------------


def _last_digit_verify(text: str, a: int, b: int) -> int:
    """Candidato: solo compara la última cifra del número final."""
    answer = extract_answer(text)
    return int(answer is not None and answer % 10 == (a * b) % 10)


def _prefix_verify(text: str, a: int, b: int) -> int:
    """Candidato: acepta si el producto *empieza* por el número final.

    Quería tolerar «basura» al final y tiene el ``startswith`` al revés.
    """
    answer = extract_answer(text)
    return int(answer is not None and str(a * b).startswith(str(answer)))


def _anywhere_verify(text: str, a: int, b: int) -> int:
    """Candidato: acepta si el producto aparece en cualquier parte del texto."""
    if not isinstance(text, str):
        return 0
    end = text.find(END)
    body = text if end < 0 else text[:end]
    return int(str(a * b) in body)


# Los tres candidatos que probamos. Con GRPO hasta 10 240 respuestas (el banco),
# solo el de la última cifra se explota: su recompensa sube casi hasta 1
# mientras la precisión de verdad baja (con 4096, las del cuaderno, sube mucho
# menos que con el verificador correcto), y en las respuestas se ven números
# equivocados que terminan en la cifra buena. Con «prefix» el modelo nunca
# escribe un número final cortado, y con «anywhere» el producto casi solo
# aparece cuando la respuesta es correcta: las dos recompensas suben con la
# precisión. Las cifras de la trampa elegida están en el banco
# (``benchmarks/methods.py``).
BUGGY_VERIFIERS = {
    "last_digit": _last_digit_verify,
    "prefix": _prefix_verify,
    "anywhere": _anywhere_verify,
}


def buggy_verify(text: str, a: int, b: int) -> int:
    """Un verificador plausible pero con un fallo: solo mira la última cifra.

    Lee el número final igual que ``task.verify`` (tras el último «=», con el
    punto final) pero solo compara su **última cifra** con la de ``a * b``.
    Devuelve 1 o 0 y nunca lanza una excepción. Un modelo entrenado contra él
    aprende a acertar la última cifra, no el producto: ver ``exploit_flags``.
    """
    return _last_digit_verify(text, a, b)


def exploit_flags(texts: Sequence[str], problems: Sequence[Problem]) -> list[bool]:
    """¿Qué respuestas se cuelan? ``True`` donde ``buggy_verify`` da 1 y
    ``task.verify`` da 0.

    - ``texts``: las respuestas (con o sin el enunciado delante).
    - ``problems``: los pares ``(a, b)``, uno por respuesta.
    """
    if len(texts) != len(problems):
        raise ValueError(
            f"Hay {len(texts)} respuestas y {len(problems)} problemas: "
            "debe haber uno por respuesta."
        )
    return [
        bool(buggy_verify(t, a, b) == 1 and verify(t, a, b) == 0)
        for t, (a, b) in zip(texts, problems, strict=True)
    ]


# --- 5. pass@k para muchas k ----------------------------------------------


@torch.no_grad()
def pass_at_k_curve(
    model: TinyLM,
    problems: list[Problem] | None = None,
    ks: Sequence[int] = (1, 2, 4, 8, 16, 32, 64),
    n: int = 64,
    generator: torch.Generator | None = None,
) -> dict[int, float]:
    """pass@k para cada k de ``ks``, con n respuestas por problema a T = 1.

    Para cada problema (por defecto, los 256 de evaluación) muestrea ``n``
    respuestas, cuenta los aciertos c y promedia el estimador insesgado de
    Chen et al. (2021), ``estimate_pass_at_k(n, c, k)``. Muestrea en lotes
    de 1024 respuestas; sin ``generator`` usa uno con semilla 0, y entonces
    da lo mismo que ``evaluate.pass_at_k(model, ks, n, problems)``.
    """
    ks = list(ks)
    if not ks or max(ks) > n or min(ks) < 1:
        raise ValueError(f"Cada k debe estar entre 1 y n = {n}; ks = {ks}.")
    problems = heldout_problems() if problems is None else problems
    generator = torch.Generator().manual_seed(0) if generator is None else generator
    repeated = [p for p in problems for _ in range(n)]
    scores = []
    for start in range(0, len(repeated), 1024):
        chunk = repeated[start : start + 1024]
        batch = sample(model, encode_prompts(chunk), generator=generator)
        scores.append(_scores(tokenizer.decode_batch(batch.completions), chunk, verify))
    counts = torch.cat(scores).view(len(problems), n).sum(dim=-1).long().tolist()
    return {
        k: sum(estimate_pass_at_k(n, c, k) for c in counts) / len(counts) for k in ks
    }


# --- 6. Entrenar con GRPO, RLOO o PPO --------------------------------------

Method = Literal["grpo", "rloo", "ppo"]
VerifierName = Literal["correct", "buggy", "process"]
#: «process» es la utilidad verdadera del módulo 10 (``true_utility``): 1 por
#: la cifra final y 0,25 por cada producto parcial bien escrito. GRPO y RLOO
#: la ven entera al final de la respuesta; PPO, repartida donde se gana
#: (``process_token_rewards``).
VERIFIERS: dict[str, Callable[[str, int, int], float]] = {
    "correct": verify,
    "buggy": buggy_verify,
    "process": true_utility,
}


def process_token_rewards(
    completions: torch.Tensor, problems: Sequence[Problem]
) -> torch.Tensor:
    """La utilidad verdadera, repartida en los tokens donde se gana.

    ``completions``: ``(B, T)`` ids de las respuestas (un carácter, un token);
    ``problems``: B pares ``(a, b)``. Devuelve ``(B, T)`` float:
    ``PARTIAL_POINTS`` en la última cifra de cada producto parcial correcto y
    ``FINAL_POINTS`` en el último token (el punto final) si la cifra final es
    ``a × b``. Cada fila suma ``true_utility`` de su respuesta.
    """
    texts = tokenizer.decode_batch(completions)
    rewards = torch.zeros(completions.shape, dtype=torch.float32)
    for row, (text, (a, b)) in enumerate(zip(texts, problems, strict=True)):
        final = extract_answer(text)
        if final is None:
            continue  # sin punto final la utilidad es 0
        body = text.split(END, 1)[0]
        if final == a * b:
            rewards[row, len(body)] += FINAL_POINTS  # el punto final
        work = _WORK.fullmatch(body)
        if work is not None:
            tens, units = 10 * (b // 10), b % 10
            for group, product in ((5, a * tens), (6, a * units)):
                if int(work.group(group)) == product:
                    rewards[row, work.end(group) - 1] += PARTIAL_POINTS
    return rewards


@dataclass(frozen=True)
class MethodTraits:
    """Lo que distingue a un método fuera de sus ventajas (``method_step``)."""

    kl_in_loss: bool  # la KL a la referencia, en la pérdida (no en la recompensa)
    needs_critic: bool  # entrena un crítico (si no, la línea base sale del grupo)


#: Los métodos de ``train_method``. Las ventajas de cada uno están en
#: ``method_step``, una rama por método.
METHOD_TRAITS: dict[str, MethodTraits] = {
    "grpo": MethodTraits(kl_in_loss=True, needs_critic=False),
    "rloo": MethodTraits(kl_in_loss=False, needs_critic=False),
    "ppo": MethodTraits(kl_in_loss=False, needs_critic=True),
}
METHODS: tuple[str, ...] = tuple(METHOD_TRAITS)


def default_grpo_config(**changes: Any) -> GRPOConfig:
    """La ``GRPOConfig`` de ``MethodConfig()``, con ``changes`` encima.

    Es la de 07 (``GRPOConfig()``) con cuatro cambios, los de la comparación
    de este módulo: ventajas divididas por la desviación del grupo (como
    DeepSeekMath), recorte con ε = 0,2 (actúa con varias épocas o minilotes,
    como en el PPO de InstructGPT), ningún enunciado fijo en cada paso (el
    17 × 24 es la demo de 07) y 4 respuestas por problema al evaluar.
    """
    defaults = dict(
        std_normalize=True, clip_eps=0.2, include_target=False, eval_samples=4
    )
    return GRPOConfig(**{**defaults, **changes})


@dataclass
class CriticConfig:
    """El crítico de PPO (``ValueModel``) y sus ventajas GAE. Solo cuenta en PPO."""

    lr: float = 1e-3  # tasa de aprendizaje del crítico (Adam)
    value_coef: float = 0.5  # peso de la pérdida del crítico
    gae_lambda: float = 0.95  # λ de GAE
    gamma: float = 1.0  # descuento γ entre tokens


#: Lo que ``MethodConfig`` no copia de su ``grpo``: lo calcula ``grpo_config``.
_DERIVED = ("steps", "eval_every")
#: Los nombres sueltos de ``MethodConfig(...)``: los de ``GRPOConfig`` (menos
#: ``_DERIVED``) y los de ``CriticConfig``, con ``critic_`` delante si se
#: repiten en ``GRPOConfig`` (``critic_lr``).
_GRPO_NAMES = tuple(f.name for f in fields(GRPOConfig) if f.name not in _DERIVED)
_CRITIC_NAMES = {
    (f"critic_{f.name}" if f.name in _GRPO_NAMES else f.name): f.name
    for f in fields(CriticConfig)
}


@dataclass(init=False)
class MethodConfig:
    """Hiperparámetros de ``train_method``: GRPO, RLOO o PPO con las mismas respuestas.

    Se compone de tres partes:

    - ``grpo``: la ``GRPOConfig`` del paso y del bucle de ``grpo.py``, común a
      los tres métodos, con todos sus ajustes (por defecto,
      ``default_grpo_config()``). Sus ``steps`` y ``eval_every`` no cuentan:
      los calcula ``grpo_config`` a partir de ``total_samples`` y
      ``eval_every_samples``;
    - ``critic``: el crítico de PPO (``CriticConfig``);
    - lo propio de este módulo: el método, el verificador, cuántas respuestas
      muestrear en total, cada cuántas evaluar y con cuántas medir la
      entropía.

    Los tres métodos ven lo mismo en cada paso: ``grpo.prompts_per_step``
    enunciados con ``grpo.group_size`` respuestas cada uno, así que con el
    mismo ``total_samples`` muestrean exactamente las mismas respuestas en
    número.

    Como una configuración plana, también vale con nombres sueltos:
    ``MethodConfig(method="ppo", lr=1e-3, critic_lr=3e-3)`` cambia
    ``grpo.lr`` y ``critic.lr`` de los de por defecto (o de los ``grpo`` y
    ``critic`` que se den). ``flat()`` la devuelve así:
    ``MethodConfig(**cfg.flat()) == cfg``.
    """

    method: Method  # "grpo", "rloo" o "ppo" (ver METHOD_TRAITS)
    grpo: GRPOConfig  # el paso y el bucle, comunes a los tres
    critic: CriticConfig  # el crítico (solo PPO)
    verifier: VerifierName  # "correct" (task.verify) o "buggy"
    total_samples: int  # respuestas muestreadas en total (10 240: 40 pasos)
    eval_every_samples: int  # evaluar cada tantas respuestas (1280: 5 pasos)
    entropy_samples: int  # respuestas por problema al medir la entropía

    def __init__(
        self,
        method: Method = "grpo",
        grpo: GRPOConfig | None = None,
        critic: CriticConfig | None = None,
        verifier: VerifierName = "correct",
        total_samples: int = 10_240,
        eval_every_samples: int = 1_280,
        entropy_samples: int = 1,
        **changes: Any,
    ) -> None:
        grpo_changes, critic_changes = {}, {}
        for name, value in changes.items():
            if name in _CRITIC_NAMES:
                critic_changes[_CRITIC_NAMES[name]] = value
            elif name in _GRPO_NAMES:
                grpo_changes[name] = value
            elif name in _DERIVED:
                raise TypeError(
                    f"MethodConfig no acepta {name!r}: sale de total_samples y "
                    "eval_every_samples."
                )
            else:
                raise TypeError(f"MethodConfig no tiene el campo {name!r}.")
        grpo = default_grpo_config() if grpo is None else grpo
        critic = CriticConfig() if critic is None else critic
        # Copias: cambiar esta configuración no cambia las que se pasaron
        self.method = method
        self.grpo = replace(grpo, **grpo_changes)
        self.critic = replace(critic, **critic_changes)
        self.verifier = verifier
        self.total_samples = total_samples
        self.eval_every_samples = eval_every_samples
        self.entropy_samples = entropy_samples

    @property
    def samples_per_step(self) -> int:
        """Respuestas muestreadas en cada paso."""
        return self.grpo.prompts_per_step * self.grpo.group_size

    @property
    def steps(self) -> int:
        """Pasos de entrenamiento para llegar a ``total_samples``."""
        return math.ceil(self.total_samples / self.samples_per_step)

    def check(self) -> None:
        """Lanza ``ValueError`` si la configuración no tiene sentido."""
        if self.method not in METHOD_TRAITS:
            raise ValueError(f"method debe ser uno de {METHODS}; es {self.method!r}.")
        if self.verifier not in VERIFIERS:
            raise ValueError(
                f"verifier debe ser uno de {tuple(VERIFIERS)}; es {self.verifier!r}."
            )
        if not METHOD_TRAITS[self.method].needs_critic and self.grpo.group_size < 2:
            raise ValueError(
                "GRPO y RLOO necesitan al menos 2 respuestas por enunciado."
            )

    def grpo_config(self) -> GRPOConfig:
        """La ``GRPOConfig`` del paso y del bucle: ``grpo`` salvo tres campos.

        - ``steps``: los que hacen falta para muestrear ``total_samples``;
        - ``eval_every``: se evalúa cada tantos pasos como hagan falta para
          muestrear ``eval_every_samples`` respuestas (al menos cada paso);
        - ``kl_coef``: la KL va en la pérdida solo en GRPO. RLOO y PPO la
          restan de la recompensa (``method_step``), así que su pérdida va
          sin ella.

        Antes comprueba la configuración (``check``).
        """
        self.check()
        kl_in_loss = METHOD_TRAITS[self.method].kl_in_loss
        return replace(
            self.grpo,
            steps=self.steps,
            eval_every=max(
                1, math.ceil(self.eval_every_samples / self.samples_per_step)
            ),
            kl_coef=self.grpo.kl_coef if kl_in_loss else 0.0,
        )

    def flat(self) -> dict[str, Any]:
        """La configuración con los nombres sueltos que acepta el constructor.

        Es lo que guarda ``compare.py`` (``method_config``): un diccionario
        plano, con ``critic_lr`` para ``critic.lr``.
        """
        own = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("grpo", "critic")
        }
        grpo = {name: getattr(self.grpo, name) for name in _GRPO_NAMES}
        critic = {
            name: getattr(self.critic, attr) for name, attr in _CRITIC_NAMES.items()
        }
        return {**own, **grpo, **critic}


def hidden_states(model: TinyLM, tokens: torch.Tensor) -> torch.Tensor:
    """El flujo residual final de ``model`` (tras la LayerNorm), sin los logits.

    ``tokens``: ``(B, L)`` -> ``(B, L, d_model)``. Es ``TinyLM.forward`` sin
    la última multiplicación por el embedding.
    """
    positions = torch.arange(tokens.shape[1], device=tokens.device)
    x = model.tok_emb(tokens) + model.pos_emb(positions)
    for block in model.blocks:
        x = block(x)
    return model.ln_final(x)


class ValueModel(nn.Module):
    """El crítico de PPO: una copia del transformer con una cabeza de valor.

    Es un modelo aparte, como en InstructGPT (que usó uno de 6B, inicializado
    desde el modelo de recompensa: Ouyang et al., 2022, apéndice C.4); aquí,
    una copia de la política con sus pesos; la cabeza lineal empieza en 0. Lee
    el estado antes de cada token de la respuesta y predice el retorno que
    falta: la nota final menos la penalización KL que queda por pagar.
    """

    def __init__(self, policy: TinyLM) -> None:
        super().__init__()
        self.trunk = copy.deepcopy(policy).train()
        for p in self.trunk.parameters():
            p.requires_grad_(True)
        self.head = nn.Linear(policy.cfg.d_model, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, sequences: torch.Tensor, prompt_len: int) -> torch.Tensor:
        """``(B, P + T)`` ids -> ``(B, T)``: V(s_t) antes de cada token t."""
        hidden = hidden_states(self.trunk, sequences[:, :-1])[:, prompt_len - 1 :]
        return self.head(hidden).squeeze(-1)


def token_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor,
    gamma: float = 1.0,
    lam: float = 0.95,
) -> torch.Tensor:
    """Ventajas GAE token a token de un lote de respuestas (la referencia del
    ejercicio de 08_mas_alla), con ``helpers.rollouts.gae`` del módulo 05.

    Cada respuesta es un episodio: el estado siguiente al último token válido
    es terminal (sin bootstrap) y el relleno no aporta nada.

    Args:
        rewards: ``(B, T)`` recompensas por token (``token_level_rewards``).
        values: ``(B, T)`` valores del crítico en cada token.
        mask: ``(B, T)`` tokens válidos (bool o 0/1, primero los válidos).
        gamma, lam: el descuento γ y la λ de GAE.

    Returns:
        ``(B, T)`` en float32, sin gradiente, con 0 en el relleno.
    """
    rewards = torch.as_tensor(rewards).detach().float()
    mask = torch.as_tensor(mask).float()
    values = torch.as_tensor(values).detach().float() * mask
    next_values = torch.cat([values[:, 1:], torch.zeros_like(values[:, :1])], dim=1)
    next_valid = torch.cat([mask[:, 1:], torch.zeros_like(mask[:, :1])], dim=1)
    terminated = 1.0 - next_valid
    advantages = gae(
        rewards.T,
        values.T,
        next_values.T,
        terminated.T,
        torch.zeros_like(terminated.T),
        gamma=gamma,
        lam=lam,
    ).T
    return (advantages * mask).detach()


def explained_variance(
    values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor
) -> float:
    """Cuánto de la varianza de los retornos explica el crítico.

    ``1 − Var(retornos − V) / Var(retornos)`` sobre los tokens de ``mask``:
    1 si V acierta cada retorno, 0 si no explica más que una constante y
    negativo si lo hace peor que ella. Es la métrica del crítico que vigilan
    CleanRL y TRL. Con retornos constantes devuelve ``nan``.
    """
    valid = torch.as_tensor(mask).bool()
    targets = torch.as_tensor(returns).detach().float()[valid]
    predicted = torch.as_tensor(values).detach().float()[valid]
    variance = targets.var(unbiased=False)
    if variance == 0:
        return math.nan
    return (1 - (targets - predicted).var(unbiased=False) / variance).item()


def _scores(
    texts: list[str], problems: list[Problem], verifier: Callable[[str, int, int], int]
) -> torch.Tensor:
    """``(B,)`` float: la nota de ``verifier`` para cada respuesta."""
    return torch.tensor(
        [float(verifier(t, a, b)) for t, (a, b) in zip(texts, problems, strict=True)]
    )


def _verifier_rewards(verifier: Callable[[str, int, int], int]) -> RewardFn:
    """La función de recompensa (``grpo.RewardFn``) que puntúa con ``verifier``."""

    def rewards(completions: torch.Tensor, problems: list[Problem]) -> torch.Tensor:
        return _scores(tokenizer.decode_batch(completions), problems, verifier)

    return rewards


def method_step(
    model: TinyLM,
    optimizer: torch.optim.Optimizer,
    problems: list[Problem],
    cfg: MethodConfig,
    generator: torch.Generator,
    reference: TinyLM | None = None,
    critic: ValueModel | None = None,
    critic_optimizer: torch.optim.Optimizer | None = None,
    sampler: TinyLM | None = None,
) -> dict[str, float]:
    """Un paso de ``cfg.method`` sobre ``problems`` (G respuestas por cada uno).

    Es el paso de GRPO (``grpo.collect_rollout`` y ``grpo.update_policy``, con
    ``cfg.grpo_config()``); solo cambian la recompensa y las ventajas:

    1. Muestrea G respuestas por enunciado (con ``sampler`` si se da, como
       ``grpo.grpo_step``) y las puntúa con el verificador de
       ``cfg.verifier`` (y, para vigilar, con el correcto).
    2. Ventajas:
       - GRPO: recompensa menos la media del grupo, dividida por su
         desviación si ``cfg.grpo.std_normalize`` (``group_advantages``, como
         DeepSeekMath), y la KL k3 a la referencia en la pérdida si
         ``cfg.grpo.kl_coef``. Sin dividir, es RLOO por (G − 1) / G;
       - RLOO: recompensa menos la media de las otras G − 1
         (``rloo_advantages``), con la KL de toda la respuesta restada de la
         recompensa (Ahmadian et al., 2024);
       - PPO: recompensa por token (``token_level_rewards``), valores del
         crítico y GAE token a token, normalizadas en el lote.
    3. ``cfg.grpo.epochs`` épocas de ``cfg.grpo.minibatches`` minilotes con
       la misma pérdida recortada para los tres (``grpo_objective_loss``, con
       los tokens agregados según ``cfg.grpo.loss_normalization``) y, en PPO,
       la del crítico. Solo cambian las ventajas: una por respuesta en GRPO y
       RLOO, una por token en PPO.

    Devuelve las métricas del paso: ``reward`` (con el verificador usado),
    ``true_reward`` (con el correcto), ``exploit`` (fracción que se cuela por
    el verificador con trampa), ``loss``, ``entropy`` (media por token de las
    respuestas del primer minilote, las de la política que muestreó),
    ``clip_fraction`` (la fracción de tokens con el cociente fuera de
    [1 − ε, 1 + ε] antes de cada paso de gradiente, media de los minilotes:
    0 con un solo paso por lote), ``kl_ref`` (si hay referencia) y, en PPO,
    ``value_loss`` y ``explained_variance`` (la del crítico antes de
    actualizarlo, ``explained_variance``).
    """
    update = cfg.grpo_config()  # antes, comprueba cfg
    # β: en la pérdida (GRPO, ya en update) o restada de la recompensa
    beta, G = cfg.grpo.kl_coef, update.group_size
    if beta and reference is None:
        raise ValueError("Con kl_coef > 0 hace falta un modelo de referencia.")
    needs_critic = METHOD_TRAITS[cfg.method].needs_critic
    if needs_critic and (critic is None or critic_optimizer is None):
        raise ValueError("PPO necesita un crítico (ValueModel) y su optimizador.")
    verifier = VERIFIERS[cfg.verifier]
    rollout = collect_rollout(
        model,
        problems,
        update,
        generator,
        sampler=sampler,
        reference=reference,
        reward_fn=_verifier_rewards(verifier),
    )
    scores, old_log_probs = rollout.rewards, rollout.old_log_probs
    ref_log_probs = rollout.ref_log_probs
    mask = rollout.samples.mask
    valid = mask.bool()
    P = rollout.samples.prompt_len

    metrics: dict[str, float] = {}
    auxiliary = None
    if cfg.method == "ppo":
        reference_lp = old_log_probs if ref_log_probs is None else ref_log_probs
        if cfg.verifier == "process":  # la nota, donde se gana cada trozo
            rewards = token_level_rewards(
                torch.zeros_like(scores), old_log_probs, reference_lp, valid, beta
            ) + process_token_rewards(rollout.samples.completions, rollout.problems)
        else:
            rewards = token_level_rewards(
                scores, old_log_probs, reference_lp, valid, beta
            )
        with torch.no_grad():
            values = critic(rollout.samples.sequences, P) * mask
        gamma, lam = cfg.critic.gamma, cfg.critic.gae_lambda
        advantages = token_gae(rewards, values, mask, gamma, lam)
        returns = advantages + values  # lo que persigue el crítico
        metrics["explained_variance"] = explained_variance(values, returns, valid)
        flat = advantages[valid]
        advantages = (advantages - flat.mean()) / (flat.std() + 1e-8) * mask
        value_losses: list[float] = []

        def value_term(idx: torch.Tensor) -> torch.Tensor:
            new_values = critic(rollout.samples.sequences[idx], P)
            value_loss = ((new_values - returns[idx]) ** 2)[valid[idx]].mean()
            value_losses.append(value_loss.item())
            return cfg.critic.value_coef * value_loss

        auxiliary = AuxiliaryLoss(value_term, critic, critic_optimizer)
    elif cfg.method == "grpo":
        advantages = group_advantages(
            scores.view(-1, G), std_normalize=update.std_normalize
        ).view(-1)
    else:  # RLOO, con la KL de toda la respuesta restada de la recompensa
        seq_rewards = scores
        if beta:
            kl = ((old_log_probs - ref_log_probs) * mask).sum(dim=-1)
            seq_rewards = scores - beta * kl
        advantages = rloo_advantages(seq_rewards.view(-1, G)).view(-1)

    stats = update_policy(
        model, optimizer, rollout, advantages, update, generator, auxiliary
    )

    texts = tokenizer.decode_batch(rollout.samples.completions)
    true_scores = _scores(texts, rollout.problems, verify)
    buggy_scores = _scores(texts, rollout.problems, buggy_verify)
    metrics["reward"] = scores.mean().item()
    metrics["true_reward"] = true_scores.mean().item()
    metrics["exploit"] = (
        ((buggy_scores == 1) & (true_scores == 0)).float().mean().item()
    )
    metrics["loss"] = sum(stats["loss"]) / len(stats["loss"])
    metrics["entropy"] = stats["entropy"][0]  # la de la política que muestreó
    metrics["clip_fraction"] = sum(stats["clip_fraction"]) / len(stats["clip_fraction"])
    if auxiliary is not None:
        metrics["value_loss"] = sum(value_losses) / len(value_losses)
    if ref_log_probs is not None:
        log_rho = (ref_log_probs - old_log_probs)[valid]
        metrics["kl_ref"] = (torch.exp(log_rho) - log_rho - 1).mean().item()
    return metrics


# --- 7. Memoria -------------------------------------------------------------

_HWM = re.compile(r"VmHWM:\s+(\d+)\s+kB")
_RSS = re.compile(r"VmRSS:\s+(\d+)\s+kB")


class MemoryMeter:
    """El pico de memoria residente (RSS) que añaden los pasos de entrenamiento.

    En Linux, ``resume()`` pone a cero el pico del proceso
    (``/proc/self/clear_refs``) y ``pause()`` lo lee de ``/proc/self/status``;
    así se mide solo lo que pasa entre las dos llamadas (los pasos), no las
    evaluaciones ni lo que el proceso usó antes. ``pause()`` devuelve el
    mayor pico visto hasta entonces, en MB por encima de la memoria que había
    al crear el medidor. Si no se puede poner a cero (otro sistema), se usa
    el pico de todo el proceso (``resource``): una cota superior.

    Dentro de un mismo proceso, la memoria que el asignador ya tenía de antes
    se reutiliza sin crecer: para comparar métodos, mídelos en procesos
    nuevos (lo hace el banco, ``benchmarks/methods.py``).
    """

    def __init__(self) -> None:
        self.resettable = self._clear_peak()
        self.start_mb = self._current_mb()
        self.peak = 0.0

    @staticmethod
    def _clear_peak() -> bool:
        if not sys.platform.startswith("linux"):
            return False
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            return False
        return True

    @staticmethod
    def _status(pattern: re.Pattern[str]) -> float | None:
        try:
            with open("/proc/self/status") as f:
                found = pattern.search(f.read())
        except OSError:
            return None
        return int(found.group(1)) / 1024 if found else None

    @staticmethod
    def _max_rss_mb() -> float:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 1024 / (1024 if sys.platform == "darwin" else 1)

    def _current_mb(self) -> float:
        current = self._status(_RSS)
        return self._max_rss_mb() if current is None else current

    def resume(self) -> None:
        """Empieza (o sigue) a medir: pone a cero el pico del proceso."""
        self.resettable = self._clear_peak()

    def pause(self) -> float:
        """Deja de medir y devuelve el mayor pico hasta ahora (MB, ≥ 0)."""
        peak = self._status(_HWM) if self.resettable else None
        peak = self._max_rss_mb() if peak is None else peak
        self.peak = max(self.peak, peak - self.start_mb)
        return self.peak


def state_memory_mb(*models: nn.Module, trained: int = 1) -> float:
    """MB que ocupan los estados: pesos, gradientes y momentos de Adam.

    Los ``trained`` primeros modelos se entrenan (4 copias de cada peso: el
    peso, su gradiente y los dos momentos de Adam); los demás solo se leen
    (el peso). En un LLM de verdad esta cuenta manda: un crítico del tamaño
    de la política duplica la memoria de entrenamiento.
    """
    total = 0
    for i, model in enumerate(models):
        params = sum(p.numel() * p.element_size() for p in model.parameters())
        total += params * (4 if i < trained else 1)
    return total / 2**20


# --- 8. El bucle ------------------------------------------------------------


def _evaluate(
    model: TinyLM, cfg: MethodConfig, verifier: Callable[[str, int, int], int]
) -> dict[str, float]:
    """Precisión en evaluación (la de ``heldout_accuracy(model, n)``), la nota
    del verificador de entrenamiento y las trampas en esas mismas respuestas,
    y la entropía de la política."""
    problems = heldout_problems()
    n = cfg.grpo.eval_samples
    generator = torch.Generator().manual_seed(0)  # como correct_counts
    repeated = [p for p in problems for _ in range(n)]
    texts: list[str] = []
    with torch.no_grad():
        for start in range(0, len(repeated), 1024):
            chunk = repeated[start : start + 1024]
            batch = sample(model, encode_prompts(chunk), generator=generator)
            texts += tokenizer.decode_batch(batch.completions)
    true_scores = _scores(texts, repeated, verify)
    scores = _scores(texts, repeated, verifier)
    buggy_scores = _scores(texts, repeated, buggy_verify)
    return {
        "heldout_accuracy": true_scores.mean().item(),
        "heldout_reward": scores.mean().item(),
        "heldout_exploit": ((buggy_scores == 1) & (true_scores == 0))
        .float()
        .mean()
        .item(),
        "entropy": policy_entropy(model, problems, samples=cfg.entropy_samples),
    }


def train_method(
    model: TinyLM,
    cfg: MethodConfig | None = None,
    progress: bool = True,
    reference: TinyLM | None = None,
) -> dict[str, list[float]]:
    """Entrena ``model`` en su sitio con GRPO, RLOO o PPO y devuelve la historia.

    Es el bucle de ``train_grpo`` (``grpo.run_training`` con
    ``cfg.grpo_config()``) con ``method_step`` y la evaluación de este módulo.
    Los enunciados salen de ``rl_problems()`` (nunca de los de evaluación).
    Cada paso muestrea ``cfg.samples_per_step`` respuestas, hasta
    ``cfg.total_samples`` (o hasta ``cfg.grpo.max_seconds`` de
    entrenamiento). PPO crea su crítico (``ValueModel``, una copia del modelo
    con cabeza de valor). ``reference`` es la referencia congelada de la KL;
    si no se da y ``cfg.grpo.kl_coef > 0``, es una copia de ``model`` tal
    como llega. Con ``cfg.grpo.sampler_lag`` o ``cfg.grpo.sampler_dtype``,
    muestrea una copia retrasada o en otra precisión, como ``train_grpo``.

    La historia es un diccionario de listas:

    - en cada evaluación (al empezar, cada ``cfg.eval_every_samples``
      respuestas y al final): ``samples`` (respuestas muestreadas hasta
      entonces), ``train_seconds`` (sin contar las evaluaciones),
      ``heldout_accuracy`` (a T = 1 con ``cfg.grpo.eval_samples`` respuestas
      por problema: es ``heldout_accuracy(model, cfg.grpo.eval_samples)``),
      ``heldout_reward`` (esas respuestas con el verificador de
      entrenamiento), ``heldout_exploit`` (fracción que se cuela por
      ``buggy_verify``), ``entropy`` (``policy_entropy``) y
      ``peak_memory_mb`` (el mayor pico de memoria residente de los pasos
      hasta entonces, por encima de la del inicio; ver ``MemoryMeter``);
    - en cada paso: ``step_samples``, ``reward`` (media con el verificador de
      entrenamiento), ``true_reward`` (con ``task.verify``), ``exploit``,
      ``loss``, ``step_entropy``, ``clip_fraction``, ``kl_ref`` (si hay
      referencia) y, en PPO, ``value_loss`` y ``explained_variance``;
    - una vez: ``state_memory_mb`` (``state_memory_mb``: pesos, gradientes y
      Adam de lo que se entrena, y los pesos de la referencia).
    """
    cfg = cfg or MethodConfig()
    cfg.check()
    if reference is None and cfg.grpo.kl_coef:
        reference = copy_model(model)
    model.train()
    critic = critic_optimizer = None
    if METHOD_TRAITS[cfg.method].needs_critic:
        critic = ValueModel(model)
        critic_optimizer = torch.optim.Adam(critic.parameters(), lr=cfg.critic.lr)
    trained = [model] if critic is None else [model, critic]
    frozen = [] if reference is None else [reference]
    memory = state_memory_mb(*trained, *frozen, trained=len(trained))
    verifier = VERIFIERS[cfg.verifier]
    # Después de crear los modelos: se mide lo que añaden los pasos
    meter = MemoryMeter()

    def step_fn(
        optimizer: torch.optim.Optimizer,
        problems: list[Problem],
        generator: torch.Generator,
        sampler: TinyLM | None,
    ) -> dict[str, float]:
        return method_step(
            model,
            optimizer,
            problems,
            cfg,
            generator,
            reference,
            critic,
            critic_optimizer,
            sampler,
        )

    def record_step(
        step: int, seconds: float, metrics: dict[str, float]
    ) -> dict[str, float]:
        renamed = {
            "step_entropy" if k == "entropy" else k: v for k, v in metrics.items()
        }
        return {"step_samples": step * cfg.samples_per_step, **renamed}

    def run_evaluation(step: int, seconds: float) -> dict[str, float]:
        peak = meter.pause()  # solo los pasos
        values = {
            "peak_memory_mb": peak,
            "samples": step * cfg.samples_per_step,
            "train_seconds": seconds,
            **_evaluate(model, cfg, verifier),
        }
        meter.resume()
        return values

    history = run_training(
        model,
        cfg.grpo_config(),
        step_fn,
        record_step,
        run_evaluation,
        rl_problems(),
        cfg.method.upper(),
        progress,
    )
    model.eval()
    return {"state_memory_mb": [memory], **history}


__all__ = [
    "BUGGY_VERIFIERS",
    "METHODS",
    "METHOD_TRAITS",
    "CriticConfig",
    "MethodConfig",
    "MethodTraits",
    "ValueModel",
    "train_method",
    "buggy_verify",
    "default_grpo_config",
    "explained_variance",
    "exploit_flags",
    "pass_at_k_curve",
    "policy_entropy",
    "rloo_advantages",
    "token_level_rewards",
]
