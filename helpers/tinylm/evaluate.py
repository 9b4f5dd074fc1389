"""Cómo medimos al modelo: dos cifras, siempre con muestreo a temperatura 1.

- **Precisión en evaluación** (``heldout_accuracy``): para cada uno de los
  256 problemas de ``heldout_problems()`` se muestrean 8 respuestas a
  temperatura 1 con una semilla fija, y se promedia la recompensa de las
  256 × 8 respuestas. Es una estimación de Monte Carlo de la media, sobre
  los problemas, de P(correcta | problema): justo la recompensa media que
  optimiza GRPO. (La decodificación voraz daría cifras más altas.)
- **P(correcta | 17 × 24)** (``p_correct``): fracción de aciertos entre
  1024 respuestas muestreadas a temperatura 1 con una semilla fija
  (error típico ≤ 0,016).

Las dos usan su propio ``torch.Generator``, así que no alteran el estado
aleatorio global y dan el mismo número cada vez para el mismo modelo.
"""

from __future__ import annotations

import torch

from .model import TinyLM
from .sampling import sample
from .task import TARGET, Problem, encode_prompts, heldout_problems, rewards_for


@torch.no_grad()
def mean_reward(
    model: TinyLM,
    problems: list[Problem],
    samples_per_problem: int = 8,
    seed: int = 0,
    temperature: float = 1.0,
    batch_size: int = 1024,
) -> float:
    """Recompensa media de ``samples_per_problem`` respuestas por problema.

    Muestrea en lotes de como mucho ``batch_size`` respuestas.
    """
    generator = torch.Generator().manual_seed(seed)
    repeated = [p for p in problems for _ in range(samples_per_problem)]
    total = 0.0
    for start in range(0, len(repeated), batch_size):
        chunk = repeated[start : start + batch_size]
        samples = sample(
            model, encode_prompts(chunk), temperature=temperature, generator=generator
        )
        total += rewards_for(samples.completions, chunk).sum().item()
    return total / len(repeated)


def heldout_accuracy(
    model: TinyLM, samples_per_problem: int = 8, seed: int = 0
) -> float:
    """Precisión en los problemas de evaluación (muestreo a T = 1), entre 0 y 1."""
    return mean_reward(model, heldout_problems(), samples_per_problem, seed)


def p_correct(
    model: TinyLM, problem: Problem = TARGET, n_samples: int = 1024, seed: int = 0
) -> float:
    """Estimación de Monte Carlo de P(correcta | problema) a temperatura 1."""
    return mean_reward(model, [problem], n_samples, seed)
