"""Cómo medimos al modelo: a temperatura 1, de forma voraz y con pass@k.

- **Precisión en evaluación** (``heldout_accuracy``): para cada uno de los
  256 problemas de ``heldout_problems()`` se muestrean 8 respuestas a
  temperatura 1 con una semilla fija, y se promedia la recompensa de las
  256 × 8 respuestas. Es una estimación de Monte Carlo de la media, sobre
  los problemas, de P(correcta | problema): justo la recompensa media que
  optimiza GRPO. Con ``temperature=0`` (o ``None``) mide en cambio la
  decodificación **voraz**: una sola respuesta por problema, escribiendo
  siempre el carácter más probable.
- **P(correcta | 17 × 24)** (``p_correct``): fracción de aciertos entre
  1024 respuestas muestreadas a temperatura 1 con una semilla fija
  (error típico ≤ 0,016). Con ``temperature=0``, la única respuesta voraz
  vale 1 o 0.
- **pass@k** (``pass_at_k``): la probabilidad de que al menos una de k
  respuestas muestreadas sea correcta, media sobre los problemas de
  evaluación. Se estima con n ≥ k muestras por problema y el estimador sin
  sesgo de Chen et al. (2021), ``estimate_pass_at_k``: si c de las n son
  correctas, 1 − C(n − c, k) / C(n, k). pass@1 es la precisión a T = 1.

Todas usan su propio ``torch.Generator``, así que no alteran el estado
aleatorio global y dan el mismo número cada vez para el mismo modelo.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from .model import TinyLM
from .sampling import is_greedy, sample, token_log_probs
from .task import TARGET, Problem, encode_prompts, heldout_problems, rewards_for


@torch.no_grad()
def correct_counts(
    model: TinyLM,
    problems: list[Problem],
    samples_per_problem: int = 8,
    seed: int = 0,
    temperature: float | None = 1.0,
    batch_size: int = 1024,
) -> torch.Tensor:
    """Cuántas de ``samples_per_problem`` respuestas de cada problema aciertan.

    Muestrea en lotes de como mucho ``batch_size`` respuestas (todas las de un
    problema seguidas) y devuelve un tensor ``(len(problems),)`` de enteros.
    """
    generator = torch.Generator().manual_seed(seed)
    repeated = [p for p in problems for _ in range(samples_per_problem)]
    rewards = []
    for start in range(0, len(repeated), batch_size):
        chunk = repeated[start : start + batch_size]
        samples = sample(
            model, encode_prompts(chunk), temperature=temperature, generator=generator
        )
        rewards.append(rewards_for(samples.completions, chunk))
    per_answer = torch.cat(rewards).view(len(problems), samples_per_problem)
    return per_answer.sum(dim=-1).long()


def mean_reward(
    model: TinyLM,
    problems: list[Problem],
    samples_per_problem: int = 8,
    seed: int = 0,
    temperature: float | None = 1.0,
    batch_size: int = 1024,
) -> float:
    """Recompensa media de ``samples_per_problem`` respuestas por problema.

    Muestrea en lotes de como mucho ``batch_size`` respuestas. Con
    decodificación voraz (``temperature`` 0 o ``None``) todas las respuestas
    de un problema serían la misma, así que se genera una sola.
    """
    n = 1 if is_greedy(temperature) else samples_per_problem
    counts = correct_counts(model, problems, n, seed, temperature, batch_size)
    return counts.sum().item() / (n * len(problems))


def heldout_accuracy(
    model: TinyLM,
    samples_per_problem: int = 8,
    seed: int = 0,
    temperature: float | None = 1.0,
) -> float:
    """Precisión en los problemas de evaluación, entre 0 y 1.

    Por defecto muestrea a T = 1; ``temperature=0`` mide la decodificación voraz.
    """
    return mean_reward(
        model, heldout_problems(), samples_per_problem, seed, temperature
    )


def p_correct(
    model: TinyLM,
    problem: Problem = TARGET,
    n_samples: int = 1024,
    seed: int = 0,
    temperature: float | None = 1.0,
) -> float:
    """P(correcta | problema): estimación de Monte Carlo a temperatura 1.

    Con ``temperature=0`` (voraz) es 1 o 0: ¿acierta la respuesta voraz?
    """
    return mean_reward(model, [problem], n_samples, seed, temperature)


def estimate_pass_at_k(n: int, c: int, k: int) -> float:
    """Estimador sin sesgo de pass@k con ``c`` aciertos entre ``n`` muestras.

    Es 1 − C(n − c, k) / C(n, k): la probabilidad de que k respuestas elegidas
    al azar (sin reemplazo) entre las n contengan al menos un acierto (Chen et
    al., 2021, *Evaluating Large Language Models Trained on Code*). Se calcula
    como un producto, sin números combinatorios enormes.
    """
    if not 1 <= k <= n:
        raise ValueError(f"pass@k necesita 1 ≤ k ≤ n; hay k = {k} y n = {n}.")
    if not 0 <= c <= n:
        raise ValueError(f"Los aciertos deben estar entre 0 y n = {n}; hay {c}.")
    if n - c < k:
        return 1.0  # cualquier elección de k incluye algún acierto
    # C(n − c, k) / C(n, k) = Π_{i = n − c + 1}^{n} (1 − k / i)
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_at_k(
    model: TinyLM,
    ks: Sequence[int] = (1, 8),
    samples_per_problem: int | None = None,
    problems: list[Problem] | None = None,
    seed: int = 0,
    temperature: float | None = 1.0,
) -> dict[int, float]:
    """pass@k en los problemas de evaluación para cada k de ``ks``.

    - ``samples_per_problem``: n, las respuestas muestreadas por problema
      (por defecto, el mayor k: con n = k, pass@k es la fracción de problemas
      con algún acierto entre sus k respuestas).
    - ``problems``: por defecto, ``heldout_problems()``.

    Devuelve ``{k: pass@k}``. Con la semilla y n por defecto (8), pass@1 es
    exactamente ``heldout_accuracy(model)``: las mismas respuestas.
    """
    ks = list(ks)
    n = samples_per_problem or max(ks)
    if is_greedy(temperature):
        raise ValueError("pass@k mide respuestas muestreadas: usa temperature > 0.")
    problems = heldout_problems() if problems is None else problems
    counts = correct_counts(model, problems, n, seed, temperature).tolist()
    return {
        k: sum(estimate_pass_at_k(n, c, k) for c in counts) / len(counts) for k in ks
    }


@torch.no_grad()
def kl_to_reference(
    model: TinyLM,
    reference: TinyLM,
    problems: list[Problem] | None = None,
    samples_per_problem: int = 4,
    seed: int = 0,
) -> float:
    """KL(π_θ ‖ π_ref) por token, estimada con k3 sobre respuestas de ``model``.

    Muestrea ``samples_per_problem`` respuestas a T = 1 de cada problema (por
    defecto, los de evaluación), mide la log-probabilidad de cada token con
    los dos modelos y promedia ``k3 = ρ − log ρ − 1``, con
    ``ρ = π_ref / π_θ``, sobre los tokens de las respuestas. Es lo que vigila
    la penalización KL de GRPO: 0 si los dos modelos coinciden.
    """
    problems = heldout_problems() if problems is None else problems
    generator = torch.Generator().manual_seed(seed)
    prompts = encode_prompts(problems).repeat_interleave(samples_per_problem, dim=0)
    samples = sample(model, prompts, generator=generator)
    log_probs = token_log_probs(model, samples.sequences, samples.prompt_len)
    ref_log_probs = token_log_probs(reference, samples.sequences, samples.prompt_len)
    log_rho = (ref_log_probs - log_probs)[samples.mask.bool()]
    return (torch.exp(log_rho) - log_rho - 1).mean().item()
