"""El oráculo: el gradiente exacto del modelo diminuto, enumerando sus respuestas.

Las respuestas del modelo supervisado a un enunciado son cortas (como mucho
``MAX_NEW_TOKENS`` caracteres) y su reparto está muy concentrado. Si
enumeramos todas las respuestas con probabilidad ``p(y) ≥ exp(min_log_prob)``
cubrimos casi toda la masa, y la que queda fuera la conocemos. Con ese
conjunto, lo que en un modelo grande solo se puede estimar se calcula:

- ``exact_objective``: J(θ) = media sobre enunciados de Σ_y p_θ(y) R(y);
- ``exact_gradient``: ∇J, con un ``backward`` a través de Σ_y p_θ(y) R(y);
- ``exact_kl``: KL(π ‖ π_ref) de secuencias enteras,
  Σ_y p(y) (log p(y) − log p_ref(y));

y cada cifra viaja con su masa sin cubrir, 1 − Σ_y p(y). Con recompensas
en [0, 1], la J verdadera está entre la J cubierta y la J cubierta más esa
masa.

La enumeración (``enumerate_completions``) avanza nivel a nivel, un carácter
más cada vez: en cada nivel, una pasada en lote (con la KV cache) da el
reparto del siguiente carácter de cada prefijo vivo, y solo se sigue con los
hijos cuya probabilidad no baja del umbral. Como la probabilidad de un prefijo
nunca sube al alargarlo, así salen exactamente las respuestas por encima del
umbral. Una respuesta termina, como en ``sample`` a temperatura 1, en el
punto final o al llegar a ``max_new_tokens`` caracteres (cortada), y el
relleno nunca se escribe (su logit es −∞).

``python -m helpers.tinylm.oracle`` mide cuánto cuesta enumerar y cuánta masa
se cubre con el modelo del paquete.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple

import torch
from torch import nn

from .model import KVCache, TinyLM
from .sampling import next_token_log_probs, token_log_probs
from .task import MAX_NEW_TOKENS, TARGET, Problem, encode_prompts, rewards_for
from .tokenizer import tokenizer

#: Una función de recompensa: ``(B, T)`` respuestas y B problemas -> ``(B,)``
#: (la misma forma que ``grpo.RewardFn``).
RewardFn = Callable[[torch.Tensor, list[Problem]], torch.Tensor]

#: Umbral por defecto: las respuestas con p(y) ≥ 10⁻⁵.
DEFAULT_MIN_LOG_PROB = math.log(1e-5)

#: Filas de ``main``: enunciado y umbral de probabilidad.
BENCH_ROWS: tuple[tuple[Problem, float], ...] = (
    (TARGET, 1e-5),
    (TARGET, 1e-7),
    ((38, 76), 1e-5),
    ((91, 57), 1e-5),
)


class Enumeration(NamedTuple):
    """Las respuestas de un enunciado con p(y) ≥ exp(``min_log_prob``).

    - ``sequences``: ``(N, P + T)`` ids, enunciado y respuesta con relleno
      tras el punto final, como ``Samples.sequences`` (T = ``max_new_tokens``):
      ``token_log_probs(model, sequences, prompt_len)`` las recalcula con
      gradiente.
    - ``log_probs``: ``(N,)`` float64, log p(y) de cada respuesta (la suma de
      las de sus tokens), de la más probable a la menos.
    - ``mask``: ``(N, T)`` float, 1 en los tokens de la respuesta (punto final
      incluido) y 0 en el relleno.
    - ``covered_mass``: Σ_y p(y) sobre las N respuestas.
    - ``forwards``: cuántas pasadas en lote hizo la búsqueda.
    """

    sequences: torch.Tensor
    log_probs: torch.Tensor
    mask: torch.Tensor
    covered_mass: float
    forwards: int

    @property
    def prompt_len(self) -> int:
        """Longitud P del enunciado."""
        return self.sequences.shape[1] - self.mask.shape[1]

    @property
    def completions(self) -> torch.Tensor:
        """``(N, T)`` ids de las respuestas (sin el enunciado)."""
        return self.sequences[:, self.prompt_len :]

    @property
    def probs(self) -> torch.Tensor:
        """``(N,)`` float64, p(y) de cada respuesta."""
        return self.log_probs.exp()

    @property
    def lengths(self) -> torch.Tensor:
        """``(N,)`` enteros, tokens de cada respuesta (punto final incluido)."""
        return self.mask.sum(dim=-1).long()

    @property
    def uncovered_mass(self) -> float:
        """1 − Σ_y p(y): la masa de las respuestas que quedaron fuera.

        Se recorta a 0 si el redondeo deja la masa cubierta un pelo por
        encima de 1.
        """
        return max(0.0, 1.0 - self.covered_mass)


class ExactValue(NamedTuple):
    """Una cifra exacta sobre el conjunto enumerado y la masa que quedó fuera.

    - ``value``: la media, sobre los enunciados, de la suma sobre sus
      respuestas enumeradas.
    - ``uncovered_mass``: la media, sobre los enunciados, de 1 − Σ_y p(y).
    """

    value: float
    uncovered_mass: float


class ExactGradient(NamedTuple):
    """∇J exacto sobre el conjunto enumerado.

    - ``gradients``: ``{nombre: tensor}``, uno por parámetro entrenable, en
      el orden de ``model.named_parameters()`` (``flat_gradient`` los junta).
    - ``value``: J sobre el conjunto (lo que se derivó).
    - ``uncovered_mass``: la media, sobre los enunciados, de 1 − Σ_y p(y).
    """

    gradients: dict[str, torch.Tensor]
    value: float
    uncovered_mass: float


def _prompt_ids(prompt: Problem | torch.Tensor) -> torch.Tensor:
    """Un problema ``(a, b)`` o un tensor de ids -> ``(P,)`` ids."""
    if isinstance(prompt, torch.Tensor):
        return prompt.reshape(-1).long()
    return encode_prompts([tuple(prompt)])[0]


def _select_rows(cache: KVCache, rows: torch.Tensor) -> KVCache:
    """Una caché nueva con las filas ``rows`` de ``cache`` (los padres)."""
    selected = KVCache(len(cache.keys))
    selected.keys = [k.index_select(0, rows) for k in cache.keys]
    selected.values = [v.index_select(0, rows) for v in cache.values]
    return selected


def _forward_in_batches(
    model: TinyLM,
    cache: KVCache,
    parents: torch.Tensor,
    tokens: torch.Tensor,
    size: int,
) -> tuple[torch.Tensor, KVCache, int]:
    """Un token nuevo por prefijo, en lotes de como mucho ``size`` filas.

    ``parents[i]`` es la fila de ``cache`` de la que sale el prefijo i y
    ``tokens[i]`` su último carácter. Devuelve los logits ``(F, V)`` del
    carácter siguiente, la caché de los F prefijos y cuántas pasadas hizo.
    """
    # La caché nueva se reserva entera y cada lote escribe en su trozo: así
    # en memoria solo conviven la caché vieja, la nueva y un lote
    F, (_, H, L, D) = len(parents), cache.keys[0].shape
    merged = KVCache(len(cache.keys))
    merged.keys = [k.new_empty(F, H, L + 1, D) for k in cache.keys]
    merged.values = [v.new_empty(F, H, L + 1, D) for v in cache.values]
    logits = []
    for start in range(0, F, size):
        rows = slice(start, start + size)
        chunk = _select_rows(cache, parents[rows])
        logits.append(model(tokens[rows, None], chunk)[:, -1])
        for layer in range(len(cache.keys)):
            merged.keys[layer][rows] = chunk.keys[layer]
            merged.values[layer][rows] = chunk.values[layer]
    return torch.cat(logits), merged, len(logits)


@torch.no_grad()
def enumerate_completions(
    model: TinyLM,
    prompt: Problem | torch.Tensor,
    min_log_prob: float = DEFAULT_MIN_LOG_PROB,
    *,
    max_new_tokens: int = MAX_NEW_TOKENS,
    batch_size: int = 1024,
) -> Enumeration:
    """Todas las respuestas a ``prompt`` con log p(y) ≥ ``min_log_prob``.

    - ``prompt``: un problema ``(a, b)`` o un tensor ``(P,)`` de ids.
    - ``min_log_prob``: el umbral en escala logarítmica (``math.log(1e-5)``
      para p ≥ 10⁻⁵; ``-math.inf`` enumera todas las respuestas, solo
      sensato con un vocabulario y un ``max_new_tokens`` diminutos).
    - ``max_new_tokens``: el de ``sample``: una respuesta sin punto final en
      ese espacio queda cortada y cuenta tal cual.
    - ``batch_size``: prefijos por pasada como mucho.

    El reparto es el de ``sample`` a temperatura 1 (mismo relleno prohibido,
    mismo corte). La búsqueda va nivel a nivel: una pasada (o más, si hay más
    de ``batch_size`` prefijos vivos) por carácter, y es determinista.
    Devuelve una ``Enumeration`` ordenada de la respuesta más probable a la
    menos.

    La memoria crece con los prefijos vivos de un nivel: cada uno guarda su
    KV cache (unos 28 KB con el modelo del paquete). Con p ≥ 10⁻⁵ son unos
    cientos; con p ≥ 10⁻⁷, unos miles (cientos de MB).
    """
    prompt_ids = _prompt_ids(prompt)
    P, T = len(prompt_ids), max_new_tokens
    # Etapa 1: el enunciado, una vez; su caché es la raíz del árbol
    cache = KVCache(model.cfg.n_layers)
    logits = model(prompt_ids[None], cache)[:, -1]  # (1, V)
    forwards = 1
    prefixes = torch.empty(1, 0, dtype=torch.long)  # (F, t): los prefijos vivos
    prefix_log_probs = torch.zeros(1, dtype=torch.float64)  # (F,)
    done_tokens, done_log_probs = [], []
    for t in range(T):
        # Etapa 2: log p de cada hijo = la del padre + la del carácter nuevo
        step = next_token_log_probs(logits).double()  # (F, V), −∞ en el relleno
        children = prefix_log_probs[:, None] + step
        keep = (children >= min_log_prob) & torch.isfinite(children)
        keep[:, tokenizer.pad_id] = False  # nunca se escribe (aun con umbral −∞)
        parent, token = keep.nonzero(as_tuple=True)  # orden fijo: padre, carácter
        prefixes = torch.cat([prefixes[parent], token[:, None]], dim=1)
        prefix_log_probs = children[parent, token]
        # Etapa 3: el punto final, o el último hueco, cierran la respuesta
        ended = token == tokenizer.end_id
        if t == T - 1:
            ended = torch.ones_like(ended)
        done_tokens.append(prefixes[ended])
        done_log_probs.append(prefix_log_probs[ended])
        alive = ~ended
        if not alive.any():
            break
        # Etapa 4: los vivos dan un paso más, en lote, con la caché de su padre
        prefixes, prefix_log_probs = prefixes[alive], prefix_log_probs[alive]
        logits, cache, passes = _forward_in_batches(
            model, cache, parent[alive], token[alive], batch_size
        )
        forwards += passes
    completions = torch.full((0, T), tokenizer.pad_id, dtype=torch.long)
    for tokens in done_tokens:
        padded = torch.full((len(tokens), T), tokenizer.pad_id, dtype=torch.long)
        padded[:, : tokens.shape[1]] = tokens
        completions = torch.cat([completions, padded])
    log_probs = torch.cat(done_log_probs)
    order = torch.sort(log_probs, descending=True, stable=True).indices
    completions, log_probs = completions[order], log_probs[order]
    sequences = torch.cat([prompt_ids.expand(len(completions), P), completions], 1)
    mask = (completions != tokenizer.pad_id).float()
    covered = float(log_probs.exp().sum())
    return Enumeration(sequences, log_probs, mask, covered, forwards)


def _batches(n: int, size: int) -> Iterator[slice]:
    """Trozos ``[start, start + size)`` de ``range(n)``."""
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


def sequence_log_probs(
    model: TinyLM, enumeration: Enumeration, rows: slice | None = None
) -> torch.Tensor:
    """log p(y) bajo ``model`` de las respuestas de ``enumeration`` (o de sus
    filas ``rows``), en float64 y **con gradiente**: ``token_log_probs`` sumado
    sobre la respuesta."""
    sequences = enumeration.sequences if rows is None else enumeration.sequences[rows]
    per_token = token_log_probs(model, sequences, enumeration.prompt_len)
    return per_token.double().sum(dim=-1)


def _enumerations(
    model: TinyLM,
    problems: Sequence[Problem],
    min_log_prob: float,
    max_new_tokens: int,
    enumerations: Sequence[Enumeration] | None,
) -> Sequence[Enumeration]:
    """Las enumeraciones de ``problems``: las dadas o, si no hay, nuevas."""
    if enumerations is None:
        return [
            enumerate_completions(
                model, problem, min_log_prob, max_new_tokens=max_new_tokens
            )
            for problem in problems
        ]
    if len(enumerations) != len(problems):
        raise ValueError(
            f"Hay {len(problems)} enunciados y {len(enumerations)} enumeraciones: "
            "debe haber una por enunciado, en el mismo orden."
        )
    return enumerations


def _objective_terms(
    model: TinyLM,
    problems: Sequence[Problem],
    reward_fn: RewardFn | None,
    sets: Sequence[Enumeration],
    batch_size: int,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Por cada trozo de cada conjunto: (Σ p(y) R(y) / n, Σ p(y) / n), con
    gradiente, donde n es el número de enunciados."""
    reward_fn = reward_fn or rewards_for
    n = len(problems)
    for problem, enumeration in zip(problems, sets, strict=True):
        rewards = reward_fn(
            enumeration.completions, [problem] * len(enumeration.log_probs)
        )
        rewards = torch.as_tensor(rewards, dtype=torch.float64)
        for rows in _batches(len(rewards), batch_size):
            probs = sequence_log_probs(model, enumeration, rows).exp()
            yield (probs * rewards[rows]).sum() / n, probs.sum() / n


def exact_objective(
    model: TinyLM,
    problems: Sequence[Problem],
    reward_fn: RewardFn | None = None,
    min_log_prob: float = DEFAULT_MIN_LOG_PROB,
    *,
    max_new_tokens: int = MAX_NEW_TOKENS,
    enumerations: Sequence[Enumeration] | None = None,
    batch_size: int = 256,
) -> ExactValue:
    """J(θ) = media sobre ``problems`` de Σ_y p_θ(y) R(y), sobre lo enumerado.

    - ``reward_fn(completions, problems) -> (B,)``: la recompensa (por
      defecto, el verificador ``rewards_for``).
    - ``enumerations``: los conjuntos ya enumerados, uno por problema; sin
      ellos se enumera con ``min_log_prob``. Sea cual sea el conjunto, p_θ se
      recalcula con ``model`` (``token_log_probs``, en lotes de
      ``batch_size``): así es la misma cuenta que deriva ``exact_gradient``.

    Devuelve ``ExactValue``: con recompensas en [0, 1], la J verdadera está
    entre ``value`` y ``value + uncovered_mass``.
    """
    sets = _enumerations(model, problems, min_log_prob, max_new_tokens, enumerations)
    value = covered = 0.0
    with torch.no_grad():
        for term, mass in _objective_terms(
            model, problems, reward_fn, sets, batch_size
        ):
            value += float(term.detach())
            covered += float(mass.detach())
    return ExactValue(value, max(0.0, 1.0 - covered))


def exact_gradient(
    model: TinyLM,
    problems: Sequence[Problem],
    reward_fn: RewardFn | None = None,
    min_log_prob: float = DEFAULT_MIN_LOG_PROB,
    *,
    max_new_tokens: int = MAX_NEW_TOKENS,
    enumerations: Sequence[Enumeration] | None = None,
    batch_size: int = 256,
) -> ExactGradient:
    """∇J(θ), derivando Σ_y p_θ(y) R(y) sobre lo enumerado.

    Los argumentos son los de ``exact_objective``. p_θ(y) se recalcula con
    gradiente (``token_log_probs``) en lotes de ``batch_size`` respuestas, y
    el gradiente de cada lote se suma: es el de un solo ``backward`` a través
    de la suma entera, sin guardarla en memoria de una vez. No toca el
    ``.grad`` de los parámetros de ``model``.
    """
    sets = _enumerations(model, problems, min_log_prob, max_new_tokens, enumerations)
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    params = [p for _, p in named]
    total = [torch.zeros_like(p) for p in params]
    value = covered = 0.0
    for term, mass in _objective_terms(model, problems, reward_fn, sets, batch_size):
        # allow_unused: un parámetro que no toca la respuesta tiene gradiente 0
        grads = torch.autograd.grad(term, params, allow_unused=True)
        for acc, grad in zip(total, grads, strict=True):
            if grad is not None:
                acc += grad
        value += float(term.detach())
        covered += float(mass.detach())
    gradients = {name: g for (name, _), g in zip(named, total, strict=True)}
    return ExactGradient(gradients, value, max(0.0, 1.0 - covered))


@torch.no_grad()
def exact_kl(
    model: TinyLM,
    reference: TinyLM,
    problems: Sequence[Problem],
    min_log_prob: float = DEFAULT_MIN_LOG_PROB,
    *,
    max_new_tokens: int = MAX_NEW_TOKENS,
    enumerations: Sequence[Enumeration] | None = None,
    batch_size: int = 256,
) -> ExactValue:
    """KL(π ‖ π_ref) de secuencias enteras: Σ_y p(y) (log p(y) − log p_ref(y)).

    La suma va sobre las respuestas de π (``model``) enumeradas con
    ``min_log_prob`` (o las de ``enumerations``), con log p y log p_ref
    recalculados con ``token_log_probs``; es la media sobre ``problems``.
    Con el mismo modelo en los dos lados da 0 exacto.

    ``uncovered_mass`` es la masa de π que quedó fuera. Aquí no es una cota
    estricta: lo que falta, Σ p (log p − log p_ref) sobre las respuestas no
    enumeradas, es pequeño si esa masa lo es, pero puede crecer con
    log(p / p_ref).
    """
    sets = _enumerations(model, problems, min_log_prob, max_new_tokens, enumerations)
    value = covered = 0.0
    n = len(problems)
    for enumeration in sets:
        for rows in _batches(len(enumeration.log_probs), batch_size):
            log_p = sequence_log_probs(model, enumeration, rows)
            log_ref = sequence_log_probs(reference, enumeration, rows)
            probs = log_p.exp()
            value += float((probs * (log_p - log_ref)).sum()) / n
            covered += float(probs.sum()) / n
    return ExactValue(value, max(0.0, 1.0 - covered))


def flat_gradient(gradients: Mapping[str, torch.Tensor] | nn.Module) -> torch.Tensor:
    """Un gradiente como un solo vector float64.

    - Un ``{nombre: tensor}`` (``ExactGradient.gradients``): sus tensores en
      orden, aplanados y unidos.
    - Un modelo: el ``.grad`` de sus parámetros entrenables en el orden de
      ``named_parameters()`` (0 donde no hay), p. ej. tras el ``backward`` de
      una pérdida. Ojo con el signo: la pérdida se minimiza, así que
      −gradiente de la pérdida es la estimación de ∇J.
    """
    if isinstance(gradients, nn.Module):
        tensors = [
            torch.zeros_like(p) if p.grad is None else p.grad
            for p in gradients.parameters()
            if p.requires_grad
        ]
    else:
        tensors = list(gradients.values())
    return torch.cat([t.detach().reshape(-1).double() for t in tensors])


def cosine_similarity(u: torch.Tensor, v: torch.Tensor) -> float:
    """cos(u, v) = ⟨u, v⟩ / (‖u‖ ‖v‖) de dos vectores (0 si alguno es nulo)."""
    u, v = u.reshape(-1).double(), v.reshape(-1).double()
    norms = float(u.norm() * v.norm())
    return float(u @ v) / norms if norms > 0 else 0.0


def angle_degrees(u: torch.Tensor, v: torch.Tensor) -> float:
    """El ángulo entre dos vectores, en grados (0: misma dirección; 90:
    ortogonales; 180: opuestos)."""
    cosine = min(1.0, max(-1.0, cosine_similarity(u, v)))
    return math.degrees(math.acos(cosine))


class EnumerationCost(NamedTuple):
    """Lo que cuesta enumerar un enunciado y lo que cubre (una fila de ``main``)."""

    problem: Problem
    min_prob: float  # el umbral, en probabilidad: p(y) ≥ min_prob
    completions: int  # respuestas enumeradas
    covered_mass: float  # Σ p(y) sobre ellas
    forwards: int  # pasadas en lote
    seconds: float  # tiempo de reloj de la enumeración


def enumeration_costs(
    model: TinyLM | None = None,
    rows: Sequence[tuple[Problem, float]] = BENCH_ROWS,
) -> list[EnumerationCost]:
    """Enumera cada ``(problema, umbral)`` de ``rows`` y mide su coste, tras
    una enumeración de calentamiento que no se cuenta.

    ``model``: por defecto, el del paquete (``load_pretrained()``). Los
    segundos dependen de la máquina y de los hilos de PyTorch.
    """
    if model is None:
        from .checkpoint import load_pretrained

        model = load_pretrained()
    # Calentamiento: la primera pasada de PyTorch paga su arranque
    enumerate_completions(model, rows[0][0], math.log(1e-2))
    costs = []
    for problem, min_prob in rows:
        start = time.perf_counter()
        enumeration = enumerate_completions(model, problem, math.log(min_prob))
        seconds = time.perf_counter() - start
        costs.append(
            EnumerationCost(
                tuple(problem),
                min_prob,
                len(enumeration.log_probs),
                enumeration.covered_mass,
                enumeration.forwards,
                seconds,
            )
        )
    return costs


def main() -> None:
    """Imprime, para el modelo del paquete, cuánto cuesta enumerar y qué cubre."""
    from ..formatting import number, scientific

    parser = argparse.ArgumentParser(description="Enumerar las respuestas del modelo.")
    parser.add_argument("--threads", type=int, default=1, help="hilos de PyTorch")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"Hilos de PyTorch: {torch.get_num_threads()} · "
        f"MAX_NEW_TOKENS = {MAX_NEW_TOKENS}\n"
    )
    header = ("enunciado", "umbral p ≥", "respuestas", "masa cubierta", "pasadas", "s")
    rows = [
        (
            f"{cost.problem[0]} × {cost.problem[1]}",
            scientific(cost.min_prob, 0),
            number(cost.completions, 0),
            number(cost.covered_mass, 5),
            number(cost.forwards, 0),
            number(cost.seconds, 2),
        )
        for cost in enumeration_costs()
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print(" | ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
