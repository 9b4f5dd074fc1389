"""Módulo 10 · Preferencias: cuando no hay verificador.

Del 07 al 09 el modelo aprende contra un verificador que lee la cifra final.
Aquí no hay verificador: hay una persona (sintética) que, ante dos respuestas
al mismo enunciado, dice cuál prefiere. Este archivo tiene todo lo que el
módulo 10 necesita, en el orden en que lo usa:

1. **La utilidad verdadera** (``true_utility``), oculta para el aprendizaje:
   1 punto si la cifra final es correcta y 0,25 por cada uno de los dos
   productos parciales bien escritos (``17×20=340`` y ``17×4=68``). El
   verificador no ve los parciales; la anotadora sí. Una respuesta sin punto
   final o mal formada vale 0.
2. **La anotadora** (``preference_probability``, ``make_preferences``):
   compara dos respuestas del modelo SFT al mismo enunciado y prefiere la
   primera con probabilidad σ((U₁ − U₂) / τ), el modelo de Bradley y Terry
   (1952), con τ = ``ANNOTATOR_TEMPERATURE``: su ruido. Con utilidades
   iguales, echa una moneda al aire.
3. **El modelo de recompensa** (``RewardModel``): el transformer diminuto
   (que parte del SFT, como en InstructGPT) con una cabeza escalar que lee el
   estado del último token; se entrena con la pérdida de Bradley–Terry
   (``bradley_terry_loss``, ``train_reward_model``).
4. **DPO e IPO** (``dpo_loss``, ``train_dpo``): la política aprende de los
   mismos pares sin modelo de recompensa (Rafailov et al., 2023; Azar et al.,
   2023).

GRPO contra el modelo de recompensa es el de siempre (``train_grpo`` con
``reward_fn``); ``helpers.tinylm.preference_runs`` guarda las ejecuciones
largas que el cuaderno dibuja.

Todo es determinista con un hilo: las semillas de los pares, de la anotadora
y de los entrenamientos son argumentos.
"""

from __future__ import annotations

import copy
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .checkpoint import load_pretrained
from .evaluate import kl_to_reference
from .grpo import RewardFn
from .model import TinyLM
from .sampling import completion_mask, sample, token_log_probs
from .task import (
    Problem,
    encode_prompts,
    extract_answer,
    heldout_problems,
    rl_problems,
)
from .tokenizer import END, tokenizer

#: Puntos de la utilidad verdadera: la cifra final y cada producto parcial.
FINAL_POINTS = 1.0
PARTIAL_POINTS = 0.25
#: τ de la anotadora: con U₁ − U₂ = τ prefiere la mejor el 73 % de las veces.
ANNOTATOR_TEMPERATURE = 0.25
#: Los enunciados de la etapa de preferencias: 64 fijos, sacados de los de RL.
POOL_SIZE = 64
POOL_SEED = 0
#: Tamaños y semillas de los datos del módulo (los usan el cuaderno y el banco).
TRAIN_PAIRS = 4096
TEST_PAIRS = 512
TRAIN_SEED = 0
TEST_SEED = 1
HELDOUT_SEED = 2
#: La puntuación de una respuesta sin punto final (cortada): la más baja.
MISSING_END_SCORE = -3.0

_WORK = re.compile(r"(\d+)×(\d+)\+(\d+)×(\d+)=(\d+)\+(\d+)=(\d+)")


def true_utility(text: str, a: int, b: int) -> float:
    """La utilidad que la anotadora tiene en la cabeza (y el modelo no ve).

    ``text`` es la respuesta sola (``"17×20+17×4=340+68=408."``). Vale
    ``FINAL_POINTS`` si la cifra final es ``a × b`` y suma ``PARTIAL_POINTS``
    por cada producto parcial correcto (``a × decenas`` y ``a × unidades`` de
    ``b``, escritos donde la solución los pone). Sin punto final o sin la
    forma del desarrollo, solo cuenta la cifra final (y sin punto final, 0).
    """
    final = extract_answer(text)
    if final is None:
        return 0.0
    utility = FINAL_POINTS * float(final == a * b)
    work = _WORK.fullmatch(text.split(END, 1)[0])
    if work is not None:
        tens, units = 10 * (b // 10), b % 10
        utility += PARTIAL_POINTS * float(int(work.group(5)) == a * tens)
        utility += PARTIAL_POINTS * float(int(work.group(6)) == a * units)
    return utility


def utilities_for(completions: torch.Tensor, problems: list[Problem]) -> torch.Tensor:
    """``(B, T)`` respuestas + B problemas -> ``(B,)`` utilidades verdaderas."""
    texts = tokenizer.decode_batch(completions)
    return torch.tensor(
        [true_utility(t, a, b) for t, (a, b) in zip(texts, problems, strict=True)]
    )


def preference_probability(
    first: torch.Tensor,
    second: torch.Tensor,
    temperature: float = ANNOTATOR_TEMPERATURE,
) -> torch.Tensor:
    """P(la anotadora prefiere la primera) = σ((U₁ − U₂) / τ), elemento a elemento."""
    return torch.sigmoid((first - second) / temperature)


@dataclass
class PreferencePairs:
    """Pares etiquetados: en cada fila, la elegida y la rechazada.

    - ``prompts``: ``(N, P)`` ids de los enunciados.
    - ``chosen`` / ``rejected``: ``(N, T)`` ids de las respuestas (relleno a
      la derecha), la que prefirió la anotadora y la otra.
    - ``problems``: los N pares ``(a, b)``.
    - ``chosen_utility`` / ``rejected_utility``: ``(N,)`` utilidades verdaderas.
    - ``label_probability``: ``(N,)`` la probabilidad con la que la anotadora
      prefiere la que acabó elegida (≥ 0,5 si la elegida es la mejor).
    """

    prompts: torch.Tensor
    chosen: torch.Tensor
    rejected: torch.Tensor
    problems: list[Problem]
    chosen_utility: torch.Tensor
    rejected_utility: torch.Tensor
    label_probability: torch.Tensor

    def __len__(self) -> int:
        return len(self.problems)

    def subset(self, index: torch.Tensor | slice) -> PreferencePairs:
        """Las filas ``index`` (un tensor de índices o un ``slice``)."""
        rows = range(len(self))[index] if isinstance(index, slice) else index.tolist()
        return PreferencePairs(
            self.prompts[index],
            self.chosen[index],
            self.rejected[index],
            [self.problems[i] for i in rows],
            self.chosen_utility[index],
            self.rejected_utility[index],
            self.label_probability[index],
        )

    def ceiling(self) -> float:
        """La precisión de la mejor predicción posible sobre estas etiquetas.

        Quien conociera la utilidad verdadera acertaría la etiqueta con
        probabilidad max(p, 1 − p) en cada par: el techo que fija el ruido de
        la anotadora. Es una esperanza, no un recuento: no depende del sorteo.
        """
        p = self.label_probability
        # p es la probabilidad de la etiqueta que salió; la del par es la misma
        # para las dos respuestas: max(p, 1 − p)
        return torch.maximum(p, 1 - p).mean().item()

    def truth_agreement(self) -> float:
        """Fracción de pares (sin empates) cuya elegida tiene más utilidad."""
        diff = self.chosen_utility - self.rejected_utility
        decided = diff != 0
        return (diff[decided] > 0).float().mean().item()


@torch.no_grad()
def make_preferences(
    n_pairs: int,
    seed: int,
    problems: list[Problem] | None = None,
    model: TinyLM | None = None,
    temperature: float = ANNOTATOR_TEMPERATURE,
) -> PreferencePairs:
    """Pares de respuestas del modelo al mismo enunciado, etiquetados.

    Para cada par: un enunciado al azar de ``problems`` (por defecto los de
    ``rl_problems()``; para pares de evaluación, ``heldout_problems()``), dos
    respuestas del modelo (por defecto el SFT del paquete) a temperatura 1, y
    la anotadora de Bradley–Terry decide. Se descartan los pares de dos
    respuestas idénticas (nadie pide comparar una respuesta consigo misma).
    Todo sale de generadores con ``seed``: los mismos datos cada vez.
    """
    problems = rl_problems() if problems is None else problems
    model = load_pretrained() if model is None else model
    generator = torch.Generator().manual_seed(seed)
    kept: list[tuple[torch.Tensor, torch.Tensor, Problem]] = []
    while len(kept) < n_pairs:
        index = torch.randint(len(problems), (256,), generator=generator).tolist()
        batch = [problems[i] for i in index]
        prompts = encode_prompts(batch).repeat_interleave(2, dim=0)
        completions = sample(model, prompts, generator=generator).completions
        for row, problem in enumerate(batch):
            first, second = completions[2 * row], completions[2 * row + 1]
            if not torch.equal(first, second):
                kept.append((first, second, problem))
    kept = kept[:n_pairs]
    firsts = torch.stack([f for f, _, _ in kept])
    seconds = torch.stack([s for _, s, _ in kept])
    batch = [p for _, _, p in kept]
    u_first, u_second = utilities_for(firsts, batch), utilities_for(seconds, batch)
    p_first = preference_probability(u_first, u_second, temperature)
    first_wins = torch.rand(n_pairs, generator=generator) < p_first
    keep = first_wins.unsqueeze(-1)
    return PreferencePairs(
        prompts=encode_prompts(batch),
        chosen=torch.where(keep, firsts, seconds),
        rejected=torch.where(keep, seconds, firsts),
        problems=batch,
        chosen_utility=torch.where(first_wins, u_first, u_second),
        rejected_utility=torch.where(first_wins, u_second, u_first),
        label_probability=torch.where(first_wins, p_first, 1 - p_first),
    )


@cache
def preference_problems() -> list[Problem]:
    """Los ``POOL_SIZE`` enunciados de la etapa de preferencias.

    Como en un conjunto de datos de preferencias de verdad, hay un número fijo
    de enunciados: la anotadora compara respuestas a ellos y GRPO practica con
    ellos. Salen de ``rl_problems()`` (nunca de los de evaluación).
    """
    return random.Random(POOL_SEED).sample(rl_problems(), POOL_SIZE)


def train_pairs(n: int = TRAIN_PAIRS) -> PreferencePairs:
    """Los ``n`` pares de entrenamiento (enunciados de la etapa)."""
    return make_preferences(n, TRAIN_SEED, preference_problems())


def test_pairs(n: int = TEST_PAIRS) -> PreferencePairs:
    """``n`` pares nuevos (otras respuestas) a los mismos enunciados."""
    return make_preferences(n, TEST_SEED, preference_problems())


def heldout_pairs(n: int = TEST_PAIRS) -> PreferencePairs:
    """``n`` pares de enunciados que nunca se entrenan (generalizar)."""
    return make_preferences(n, HELDOUT_SEED, heldout_problems())


# --- El modelo de recompensa ------------------------------------------------


class RewardModel(nn.Module):
    """El transformer diminuto con una cabeza escalar: (enunciado, respuesta) -> r.

    El tronco es una copia del modelo de lenguaje (sin usar sus logits); la
    cabeza lineal lee el estado del último token de la respuesta (el punto
    final, o el último carácter si no lo hay), que por la atención causal ha
    visto el enunciado y la respuesta enteros.
    """

    def __init__(self, trunk: TinyLM) -> None:
        super().__init__()
        self.trunk = copy.deepcopy(trunk)
        self.head = nn.Linear(trunk.cfg.d_model, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def hidden(self, sequences: torch.Tensor) -> torch.Tensor:
        """``(B, L)`` ids -> ``(B, L, d_model)`` estados tras la última capa."""
        trunk = self.trunk
        positions = torch.arange(sequences.shape[1])
        x = trunk.tok_emb(sequences) + trunk.pos_emb(positions)
        for block in trunk.blocks:
            x = block(x)
        return trunk.ln_final(x)

    def forward(self, prompts: torch.Tensor, completions: torch.Tensor) -> torch.Tensor:
        """``(B, P)`` enunciados + ``(B, T)`` respuestas -> ``(B,)`` puntuaciones."""
        states = self.hidden(torch.cat([prompts, completions], dim=1))
        lengths = completion_mask(completions).sum(dim=-1).long()  # (B,)
        last = prompts.shape[1] + (lengths - 1).clamp(min=0)  # posición a leer
        picked = states[torch.arange(len(last)), last]  # (B, d_model)
        return self.head(picked).squeeze(-1)


def bradley_terry_loss(
    chosen_rewards: torch.Tensor, rejected_rewards: torch.Tensor
) -> torch.Tensor:
    """−log σ(r_elegida − r_rechazada), promediada sobre el lote (escalar)."""
    return -F.logsigmoid(chosen_rewards - rejected_rewards).mean()


def pairwise_accuracy(
    chosen_rewards: torch.Tensor, rejected_rewards: torch.Tensor
) -> float:
    """Fracción de pares en que la elegida puntúa más; un empate cuenta medio."""
    diff = chosen_rewards - rejected_rewards
    return ((diff > 0).float() + 0.5 * (diff == 0).float()).mean().item()


@dataclass
class RewardModelConfig:
    """Hiperparámetros de ``train_reward_model``."""

    seed: int = 0
    epochs: int = 4
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.01


@torch.no_grad()
def score_pairs(
    reward_model: RewardModel, pairs: PreferencePairs
) -> tuple[torch.Tensor, torch.Tensor]:
    """Puntuaciones ``(N,)`` de las elegidas y de las rechazadas."""
    return (
        reward_model(pairs.prompts, pairs.chosen),
        reward_model(pairs.prompts, pairs.rejected),
    )


def train_reward_model(
    pairs: PreferencePairs,
    cfg: RewardModelConfig | None = None,
    test: PreferencePairs | None = None,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
) -> tuple[RewardModel, dict[str, list[float]]]:
    """Ajusta un ``RewardModel`` (que parte del SFT) a ``pairs`` con Bradley–Terry.

    Devuelve el modelo, en modo evaluación y **normalizado**: un desplazamiento
    y una escala fijos hacen que sus puntuaciones de las respuestas de
    ``pairs`` tengan media 0 y desviación 1 (Bradley–Terry solo fija las
    diferencias; así la escala de la recompensa no depende de la semilla). La
    historia tiene, por época, la pérdida media y la precisión por pares en
    entrenamiento (y en ``test``, si se da). ``loss_fn`` es la pérdida (por
    defecto, ``bradley_terry_loss``; el cuaderno pasa la tuya).
    """
    cfg = cfg or RewardModelConfig()
    loss_fn = loss_fn or bradley_terry_loss
    torch.manual_seed(cfg.seed)
    model = RewardModel(load_pretrained())
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay
    )
    generator = torch.Generator().manual_seed(cfg.seed)
    history: dict[str, list[float]] = {"epoch": [], "loss": [], "train_accuracy": []}
    if test is not None:
        history["test_accuracy"] = []
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        order = torch.randperm(len(pairs), generator=generator)
        losses = []
        for start in range(0, len(pairs), cfg.batch_size):
            batch = pairs.subset(order[start : start + cfg.batch_size])
            loss = loss_fn(
                model(batch.prompts, batch.chosen), model(batch.prompts, batch.rejected)
            )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        history["epoch"].append(epoch)
        history["loss"].append(sum(losses) / len(losses))
        history["train_accuracy"].append(pairwise_accuracy(*score_pairs(model, pairs)))
        if test is not None:
            history["test_accuracy"].append(
                pairwise_accuracy(*score_pairs(model, test))
            )
    _normalize(model, pairs)
    for p in model.parameters():
        p.requires_grad_(False)
    return model, history


@torch.no_grad()
def _normalize(model: RewardModel, pairs: PreferencePairs) -> None:
    """Media 0 y desviación 1 sobre las respuestas de ``pairs`` (en la cabeza)."""
    scores = torch.cat(score_pairs(model, pairs))
    mean, std = scores.mean(), scores.std().clamp(min=1e-6)
    model.head.weight /= std
    model.head.bias.sub_(mean).div_(std)


def reward_model_rewards(
    reward_model: RewardModel, missing_end_score: float | None = MISSING_END_SCORE
) -> RewardFn:
    """La función de recompensa para ``train_grpo(..., reward_fn=...)``.

    Puntúa con ``reward_model``; una respuesta que no llega al punto final
    recibe ``missing_end_score`` (``None``: la del modelo, sin más). El modelo
    de recompensa casi no vio respuestas sin terminar y su nota allí no significa
    nada. ``OnlineDPOTrainer`` de TRL tiene un ajuste parecido
    (``missing_eos_penalty``), que resta una penalización.
    """

    @torch.no_grad()
    def rewards(completions: torch.Tensor, problems: list[Problem]) -> torch.Tensor:
        scores = reward_model(encode_prompts(problems), completions)
        if missing_end_score is None:
            return scores
        ended = (completions == tokenizer.end_id).any(dim=-1)
        return torch.where(ended, scores, torch.full_like(scores, missing_end_score))

    return rewards


# --- DPO e IPO ---------------------------------------------------------------


def optimal_policy(
    reference_probs: torch.Tensor, rewards: torch.Tensor, beta: float
) -> torch.Tensor:
    """La política que maximiza E_π[r] − β KL(π ‖ π_ref) en un bandido: ``(K,)``.

    π*(y) = π_ref(y) e^{r(y)/β} / Z, con Z la suma de los numeradores. Se
    calcula con logaritmos (``softmax``), así que r/β de ±1000 no desborda.
    """
    return torch.softmax(torch.log(reference_probs) + rewards / beta, dim=-1)


def sequence_log_probs(
    model: TinyLM, prompts: torch.Tensor, completions: torch.Tensor
) -> torch.Tensor:
    """``(B,)`` log π(respuesta | enunciado): la suma de sus tokens."""
    sequences = torch.cat([prompts, completions], dim=1)
    return token_log_probs(model, sequences, prompts.shape[1]).sum(dim=-1)


def dpo_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    reference_chosen: torch.Tensor,
    reference_rejected: torch.Tensor,
    beta: float,
    loss_type: str = "sigmoid",
) -> torch.Tensor:
    """La pérdida de DPO (``"sigmoid"``) o de IPO (``"ipo"``), media del lote.

    Entran las log-probabilidades ``(B,)`` de cada respuesta bajo la política
    y la referencia. Con h = (log π_w − log π_ref,w) − (log π_l − log π_ref,l):
    DPO es −log σ(β h) e IPO es (h − 1/(2β))². Para IPO, como hace TRL, las
    log-probabilidades deben ser medias por token (ver ``train_dpo``).
    """
    h = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    if loss_type == "sigmoid":
        return -F.logsigmoid(beta * h).mean()
    if loss_type == "ipo":
        return ((h - 1 / (2 * beta)) ** 2).mean()
    raise ValueError(f"loss_type debe ser 'sigmoid' o 'ipo'; es {loss_type!r}.")


def implicit_rewards(
    policy: TinyLM,
    reference: TinyLM,
    prompts: torch.Tensor,
    completions: torch.Tensor,
    beta: float,
) -> torch.Tensor:
    """La recompensa implícita de DPO, respuesta a respuesta: ``(B,)``.

    β (log π(y | x) − log π_ref(y | x)), con las log-probabilidades de la
    respuesta entera (la suma de sus tokens, sin el relleno). El gradiente
    pasa por ``policy`` y nunca por ``reference``.
    """
    with torch.no_grad():
        reference_log_probs = sequence_log_probs(reference, prompts, completions)
    policy_log_probs = sequence_log_probs(policy, prompts, completions)
    return beta * (policy_log_probs - reference_log_probs)


def dpo_step(
    policy: TinyLM,
    reference: TinyLM,
    optimizer: torch.optim.Optimizer,
    batch: PreferencePairs,
    beta: float,
    max_grad_norm: float = 1.0,
) -> tuple[float, float]:
    """Un paso de DPO sobre el lote ``batch``; devuelve ``(pérdida, precisión)``.

    La pérdida es la de antes del paso y la precisión, la de la recompensa
    implícita en el lote (también antes del paso). El gradiente solo pasa por
    ``policy``; se recorta su norma a ``max_grad_norm`` antes de
    ``optimizer.step()``. ``train_dpo`` hace lo mismo con las
    log-probabilidades de la referencia calculadas una sola vez.
    """
    chosen, rejected = (
        implicit_rewards(policy, reference, batch.prompts, answers, beta)
        for answers in (batch.chosen, batch.rejected)
    )
    loss = -F.logsigmoid(chosen - rejected).mean()
    _update(policy, optimizer, loss, max_grad_norm)
    return loss.item(), pairwise_accuracy(chosen.detach(), rejected.detach())


def _update(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss: torch.Tensor,
    max_grad_norm: float,
) -> None:
    """Gradientes a cero, ``backward``, norma recortada y ``step``."""
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()


@dataclass
class DPOConfig:
    """Hiperparámetros de ``train_dpo``."""

    seed: int = 0
    beta: float = 0.1
    loss_type: str = "sigmoid"  # "sigmoid" (DPO) o "ipo"
    epochs: int = 3
    batch_size: int = 64
    lr: float = 5e-5
    max_grad_norm: float = 1.0


def _log_probs(
    model: TinyLM, prompts: torch.Tensor, completions: torch.Tensor, average: bool
) -> torch.Tensor:
    total = sequence_log_probs(model, prompts, completions)
    if not average:
        return total
    return total / completion_mask(completions).sum(dim=-1).clamp(min=1)


def train_dpo(
    pairs: PreferencePairs,
    cfg: DPOConfig | None = None,
    test: PreferencePairs | None = None,
    model: TinyLM | None = None,
    evaluate: bool = False,
    loss_fn: Callable[..., torch.Tensor] | None = None,
) -> tuple[TinyLM, dict[str, list[float]]]:
    """DPO (o IPO) desde el SFT sobre ``pairs``, fuera de línea.

    La referencia es una copia **congelada** del modelo de partida; sus
    log-probabilidades se calculan una vez. Con ``loss_type="ipo"`` se usan
    medias por token, como TRL. La historia tiene, por época, la pérdida
    media, los segundos de entrenamiento acumulados (sin las mediciones) y la
    precisión por pares de la recompensa implícita en entrenamiento (y en
    ``test``). Con ``evaluate``, además la utilidad
    verdadera media (``mean_utility``) y la KL por token a la referencia
    (``kl_to_reference`` sobre los enunciados de la etapa), al empezar
    (la primera, la del punto de partida) y tras cada época. ``loss_fn``: la
    pérdida, con la firma de ``dpo_loss`` (por defecto, esa; el cuaderno pasa
    la tuya).
    """
    cfg = cfg or DPOConfig()
    loss_fn = loss_fn or dpo_loss
    torch.manual_seed(cfg.seed)
    policy = load_pretrained() if model is None else model
    reference = copy.deepcopy(policy).eval()
    for p in reference.parameters():
        p.requires_grad_(False)
    average = cfg.loss_type == "ipo"
    optimizer = torch.optim.Adam(policy.parameters(), lr=cfg.lr)
    generator = torch.Generator().manual_seed(cfg.seed)

    @torch.no_grad()
    def reference_of(data: PreferencePairs) -> tuple[torch.Tensor, torch.Tensor]:
        return (
            _log_probs(reference, data.prompts, data.chosen, average),
            _log_probs(reference, data.prompts, data.rejected, average),
        )

    @torch.no_grad()
    def accuracy(
        data: PreferencePairs, ref: tuple[torch.Tensor, torch.Tensor]
    ) -> float:
        chosen = _log_probs(policy, data.prompts, data.chosen, average)
        rejected = _log_probs(policy, data.prompts, data.rejected, average)
        return pairwise_accuracy(chosen - ref[0], rejected - ref[1])

    ref_train = reference_of(pairs)
    ref_test = reference_of(test) if test is not None else None
    history: dict[str, list[float]] = {
        "epoch": [],
        "train_seconds": [],
        "loss": [],
        "train_accuracy": [],
    }
    if test is not None:
        history["test_accuracy"] = []

    def measure() -> None:
        if evaluate:
            history.setdefault("utility", []).append(mean_utility(policy))
            history.setdefault("kl_ref", []).append(
                kl_to_reference(policy, reference, preference_problems())
            )

    measure()  # época 0: el punto de partida
    train_seconds = 0.0
    for epoch in range(1, cfg.epochs + 1):
        epoch_start = time.perf_counter()
        order = torch.randperm(len(pairs), generator=generator)
        losses = []
        for start in range(0, len(pairs), cfg.batch_size):
            index = order[start : start + cfg.batch_size]
            batch = pairs.subset(index)
            loss = loss_fn(
                _log_probs(policy, batch.prompts, batch.chosen, average),
                _log_probs(policy, batch.prompts, batch.rejected, average),
                ref_train[0][index],
                ref_train[1][index],
                cfg.beta,
                cfg.loss_type,
            )
            _update(policy, optimizer, loss, cfg.max_grad_norm)
            losses.append(loss.item())
        train_seconds += time.perf_counter() - epoch_start
        history["epoch"].append(epoch)
        history["train_seconds"].append(train_seconds)
        history["loss"].append(sum(losses) / len(losses))
        history["train_accuracy"].append(accuracy(pairs, ref_train))
        if test is not None:
            history["test_accuracy"].append(accuracy(test, ref_test))
        measure()
    return policy, history


@torch.no_grad()
def mean_utility(
    model: TinyLM,
    problems: list[Problem] | None = None,
    samples_per_problem: int = 16,
    seed: int = 0,
) -> float:
    """Utilidad verdadera media de las respuestas de ``model`` a T = 1.

    Por defecto, sobre los enunciados de la etapa (``preference_problems()``),
    los mismos con los que se entrena: lo que mide la anotadora.
    """
    problems = preference_problems() if problems is None else problems
    generator = torch.Generator().manual_seed(seed)
    prompts = encode_prompts(problems).repeat_interleave(samples_per_problem, dim=0)
    repeated = [p for p in problems for _ in range(samples_per_problem)]
    completions = sample(model, prompts, generator=generator).completions
    return utilities_for(completions, repeated).mean().item()


# --- Las formas de Gao, Schulman y Hilton (2022) ------------------------------

#: Las dos formas: ``"bon"`` (mejor de n), d(α − β d); ``"rl"``, d(α − β log d).
GAO_FORMS = ("bon", "rl")


def _gao_columns(d: np.ndarray, form: str) -> np.ndarray:
    """Las columnas (d, −d·g(d)) que multiplican a (α, β) en cada forma."""
    if form not in GAO_FORMS:
        raise ValueError(f"forma desconocida {form!r}: usa una de {GAO_FORMS}")
    d = np.asarray(d, dtype=float)
    if form == "bon":
        second = d * d
    else:  # d log d vale 0 en d = 0 (el límite)
        second = d * np.log(np.where(d > 0, d, 1.0))
    return np.stack([d, -second], axis=-1)


def gao_curve(d: np.ndarray, alpha: float, beta: float, form: str) -> np.ndarray:
    """La ganancia de utilidad verdadera frente a d = √KL(π ‖ π_ref).

    Gao, Schulman y Hilton (2022): d(α − β d) para el mejor de n (``"bon"``) y
    d(α − β log d) para RL (``"rl"``); las dos valen 0 en d = 0.
    """
    return _gao_columns(d, form) @ np.array([alpha, beta])


def fit_gao(d: np.ndarray, gain: np.ndarray, form: str) -> tuple[float, float, float]:
    """α, β y el error del ajuste (raíz del error cuadrático medio).

    Las dos formas son lineales en (α, β): basta un ajuste por mínimos
    cuadrados, sin término independiente (la ganancia en d = 0 es 0).
    """
    columns = _gao_columns(d, form)
    gain = np.asarray(gain, dtype=float)
    (alpha, beta), *_ = np.linalg.lstsq(columns, gain, rcond=None)
    rmse = float(np.sqrt(np.mean((columns @ np.array([alpha, beta]) - gain) ** 2)))
    return float(alpha), float(beta), rmse


def gao_peak(alpha: float, beta: float, form: str) -> float:
    """El d del máximo de la curva (con β > 0): α/(2β) o e^{α/β − 1}."""
    if form not in GAO_FORMS:
        raise ValueError(f"forma desconocida {form!r}: usa una de {GAO_FORMS}")
    return alpha / (2 * beta) if form == "bon" else float(np.exp(alpha / beta - 1))


__all__ = [
    "GAO_FORMS",
    "ANNOTATOR_TEMPERATURE",
    "DPOConfig",
    "PreferencePairs",
    "RewardModel",
    "RewardModelConfig",
    "bradley_terry_loss",
    "dpo_loss",
    "fit_gao",
    "gao_curve",
    "gao_peak",
    "implicit_rewards",
    "heldout_pairs",
    "make_preferences",
    "preference_problems",
    "mean_utility",
    "optimal_policy",
    "pairwise_accuracy",
    "preference_probability",
    "reward_model_rewards",
    "score_pairs",
    "sequence_log_probs",
    "test_pairs",
    "train_dpo",
    "train_pairs",
    "train_reward_model",
    "true_utility",
    "utilities_for",
]
