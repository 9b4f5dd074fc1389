"""La pérdida de DPO e IPO del curso y la de TRL, sobre los mismos pares.

Sobre un lote fijo de pares de preferencias se llama al código de TRL,
``DPOTrainer.compute_loss`` (que llama a su ``_compute_loss``), y a la
pérdida del curso, ``helpers.tinylm.preferences.dpo_loss`` con las
log-probabilidades de ``sequence_log_probs`` (medias por token para IPO,
como ``train_dpo``), y se comparan el valor y el gradiente. Lo usa
``tests/test_preferencias_trl.py``.

Cada lado con su propio camino, de principio a fin:

- **TRL** recibe los pares como texto (``prompt``, ``chosen``,
  ``rejected``), los tokeniza con su ``_prepare_dataset`` y los junta con su
  colador (``DataCollatorForPreference``: primero las filas de las elegidas,
  después las de las rechazadas, relleno a la derecha, ``completion_mask``
  en las respuestas); la política y la referencia son ``GPT2LMHeadModel``
  (``to_gpt2``) con la cabeza «fusionada» que TRL les pone.
- **El curso** usa los ``TinyLM`` de siempre y sus tensores.

La política no es la referencia: es el SFT con ruido fijo en los pesos
(``moved_policy``), como tras unos pasos de entrenamiento; si fueran iguales,
h = 0 en todos los pares y la comparación diría poco. La referencia es el SFT
congelado, como en ``train_dpo``.

Una convención difiere, y se alinea a la vista: el curso pone el logit del
relleno a −∞ (el modelo nunca lo escribe) y ``to_gpt2`` no se lo dice a
GPT-2. ``forbid_pad`` se lo dice con un sesgo en la cabeza de salida
(``PAD_LOGIT_BIAS``), en la política y en la referencia de TRL. Sin él, las
dos pérdidas difieren un poco (lo mide la prueba).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from transformers import GPT2LMHeadModel

from helpers.tinylm import TinyLM, completion_mask, load_pretrained, tokenizer
from helpers.tinylm.preferences import (
    PreferencePairs,
    dpo_loss,
    make_preferences,
    sequence_log_probs,
)

from .convert import _BLOCK_MAP, _TOP_MAP, to_gpt2
from .tokenizer import make_tokenizer

DPO_LOSS_TYPES: tuple[str, ...] = ("sigmoid", "ipo")
DPO_BETAS: tuple[float, ...] = (0.1, 0.5)
EQUALITY_PAIRS = 8
POLICY_NOISE = 0.02  # desviación del ruido que aleja la política de la referencia
# Tan negativo que exp() da 0 exacto en float32: como el −∞ del curso, sin los
# nan de −∞ · 0 en la entropía que TRL calcula para sus métricas
PAD_LOGIT_BIAS = -1e4

Grads = dict[str, torch.Tensor]  # gradiente de cada parámetro, con su nombre en GPT-2


def moved_policy(seed: int = 0, noise: float = POLICY_NOISE) -> TinyLM:
    """El SFT con ruido gaussiano fijo en cada peso: una política que ya se movió."""
    policy = load_pretrained()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in policy.parameters():
            param.add_(noise * torch.randn(param.shape, generator=generator))
    return policy


def equality_pairs(
    policy: TinyLM, n_pairs: int = EQUALITY_PAIRS, seed: int = 0
) -> PreferencePairs:
    """``n_pairs`` pares de respuestas de ``policy``, de longitudes distintas.

    Salen de ``make_preferences`` (la anotadora del módulo 10) y se quedan
    los primeros en que la elegida y la rechazada miden distinto (así la
    media por token de IPO divide cada una por su longitud) y las dos
    terminan en «.» (TRL añade el token de fin a un texto que no lo lleva:
    sería otra secuencia).
    """
    pairs = make_preferences(8 * n_pairs, seed, model=policy)
    lengths_differ = completion_mask(pairs.chosen).sum(-1) != completion_mask(
        pairs.rejected
    ).sum(-1)
    ended = (pairs.chosen == tokenizer.end_id).any(-1) & (
        pairs.rejected == tokenizer.end_id
    ).any(-1)
    index = torch.nonzero(lengths_differ & ended).squeeze(-1)[:n_pairs]
    if len(index) < n_pairs:
        raise RuntimeError(
            f"Solo {len(index)} pares sirven y hacen falta {n_pairs}: "
            "prueba con otra semilla."
        )
    return pairs.subset(index)


def forbid_pad(model: GPT2LMHeadModel) -> GPT2LMHeadModel:
    """Prohíbe el relleno en ``model`` como el curso: un sesgo fijo en su logit.

    La cabeza de GPT-2 no tiene sesgo; se le pone uno, congelado, que vale
    ``PAD_LOGIT_BIAS`` en el relleno y 0 en el resto. La cabeza fusionada de
    TRL lo lee (``lm_head.bias``) igual que el ``forward`` de transformers.
    """
    bias = torch.zeros(model.config.vocab_size)
    bias[tokenizer.pad_id] = PAD_LOGIT_BIAS
    model.lm_head.bias = nn.Parameter(bias, requires_grad=False)
    return model


@contextmanager
def _quiet_datasets() -> Iterator[None]:
    """Sin las barras de progreso de ``datasets`` mientras TRL prepara los pares."""
    import datasets

    enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if enabled:
            datasets.enable_progress_bars()


def make_dpo_trainer(
    policy: TinyLM,
    reference: TinyLM,
    pairs: PreferencePairs,
    loss_type: str,
    beta: float,
    output_dir: str | Path,
    pad_forbidden: bool = True,
):
    """Un ``DPOTrainer`` de verdad con ``pairs`` como texto, en CPU y float32.

    La política y la referencia se copian a ``GPT2LMHeadModel`` (con
    ``forbid_pad`` si ``pad_forbidden``). No entrena: sirve para llamar a su
    ``compute_loss`` sobre el lote de ``trl_batch``.
    """
    import datasets
    import trl

    def text(ids: torch.Tensor) -> list[str]:
        return tokenizer.decode_batch(ids)  # sin el relleno, con el «.»

    dataset = datasets.Dataset.from_dict(
        {
            "prompt": text(pairs.prompts),
            "chosen": text(pairs.chosen),
            "rejected": text(pairs.rejected),
        }
    )
    hf_policy, hf_reference = to_gpt2(policy), to_gpt2(reference)
    if pad_forbidden:
        forbid_pad(hf_policy)
        forbid_pad(hf_reference)
    with warnings.catch_warnings(), _quiet_datasets():
        warnings.simplefilter("ignore")
        args = trl.DPOConfig(
            output_dir=str(output_dir),
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=len(pairs),
            loss_type=[loss_type],
            beta=beta,
            report_to=[],
            disable_tqdm=True,
        )
        trainer = trl.DPOTrainer(
            model=hf_policy,
            ref_model=hf_reference,
            args=args,
            train_dataset=dataset,
            processing_class=make_tokenizer(),
        )
    trainer.model.train()
    return trainer


def trl_batch(trainer) -> dict[str, torch.Tensor]:
    """El lote tal como lo arma TRL: su conjunto tokenizado, por su colador.

    ``input_ids``, ``attention_mask`` y ``completion_mask`` de forma
    ``(2N, L)``: las N elegidas y después las N rechazadas, en el orden de
    los pares.
    """
    rows = [trainer.train_dataset[i] for i in range(len(trainer.train_dataset))]
    keys = ("prompt_ids", "chosen_ids", "rejected_ids")
    return trainer.data_collator([{k: row[k] for k in keys} for row in rows])


def course_log_probs(
    model: TinyLM, pairs: PreferencePairs, average: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(N,)`` log π de las elegidas y de las rechazadas, con ``sequence_log_probs``.

    Con ``average`` (IPO), divididas por los tokens de cada respuesta, como
    ``train_dpo``.
    """

    def one(completions: torch.Tensor) -> torch.Tensor:
        total = sequence_log_probs(model, pairs.prompts, completions)
        if not average:
            return total
        return total / completion_mask(completions).sum(dim=-1).clamp(min=1)

    return one(pairs.chosen), one(pairs.rejected)


def _course_grads_as_gpt2(model: TinyLM) -> Grads:
    """Los gradientes de ``model`` con los nombres y la orientación de GPT-2."""
    grads = {name: p.grad for name, p in model.named_parameters()}
    out = {theirs: grads[ours] for ours, theirs in _TOP_MAP}
    for i in range(model.cfg.n_layers):
        for ours, theirs, transpose in _BLOCK_MAP:
            grad = grads[f"blocks.{i}.{ours}"]
            out[f"transformer.h.{i}.{theirs}"] = grad.T if transpose else grad
    return out


def _max_diff(a: Grads, b: Grads) -> float:
    if a.keys() != b.keys():
        raise RuntimeError(f"Parámetros distintos: {sorted(a.keys() ^ b.keys())}.")
    return max((a[k] - b[k]).abs().max().item() for k in a)


@dataclass
class DPOComparison:
    """Una comparación de ``compare_dpo_with_trl``."""

    loss_type: str
    beta: float
    pad_forbidden: bool
    margins: list[float]  # h de cada par, la que entra en dpo_loss del curso
    trl_loss: float
    course_loss: float
    swapped_loss: float  # el curso con elegida y rechazada cambiadas (h → −h)
    grad_diff: float  # max |∇TRL − ∇curso| sobre todos los parámetros
    swapped_grad_diff: float  # lo mismo con h → −h
    grad_scale: float  # max |∇TRL|

    @property
    def relative_loss_diff(self) -> float:
        return abs(self.trl_loss - self.course_loss) / abs(self.trl_loss)

    @property
    def swapped_relative_loss_diff(self) -> float:
        return abs(self.trl_loss - self.swapped_loss) / abs(self.trl_loss)

    @property
    def relative_grad_diff(self) -> float:
        return self.grad_diff / self.grad_scale

    @property
    def swapped_relative_grad_diff(self) -> float:
        return self.swapped_grad_diff / self.grad_scale


def compare_dpo_with_trl(
    policy: TinyLM,
    reference: TinyLM,
    pairs: PreferencePairs,
    loss_type: str,
    beta: float,
    output_dir: str | Path,
    pad_forbidden: bool = True,
) -> DPOComparison:
    """Pérdida y gradiente de ``DPOTrainer`` y de ``dpo_loss`` sobre ``pairs``.

    No cambia ``policy`` ni ``reference``: cada lado trabaja con su copia.
    """
    trainer = make_dpo_trainer(
        policy, reference, pairs, loss_type, beta, output_dir, pad_forbidden
    )
    if list(trainer.loss_types) != [loss_type] or trainer.beta != beta:
        raise RuntimeError("DPOTrainer no tomó el loss_type o la β pedidos.")
    hf = trainer.model
    hf.zero_grad()
    with warnings.catch_warnings():  # avisos de obsolescencia de transformers
        warnings.simplefilter("ignore", FutureWarning)
        trl_loss = trainer.compute_loss(hf, trl_batch(trainer))
    trl_loss.backward()
    trl_grads = {n: p.grad.clone() for n, p in hf.named_parameters() if p.requires_grad}

    course = copy.deepcopy(policy).train()
    frozen = copy.deepcopy(reference).eval().requires_grad_(False)
    average = loss_type == "ipo"
    with torch.no_grad():
        ref_chosen, ref_rejected = course_log_probs(frozen, pairs, average)

    def course_side(swap: bool) -> tuple[torch.Tensor, Grads, torch.Tensor]:
        """La pérdida del curso, sus gradientes (nombres de GPT-2) y las h."""
        course.zero_grad()
        chosen, rejected = course_log_probs(course, pairs, average)
        if swap:
            loss = dpo_loss(rejected, chosen, ref_rejected, ref_chosen, beta, loss_type)
        else:
            loss = dpo_loss(chosen, rejected, ref_chosen, ref_rejected, beta, loss_type)
        loss.backward()
        grads = {k: g.clone() for k, g in _course_grads_as_gpt2(course).items()}
        margins = (chosen - ref_chosen) - (rejected - ref_rejected)
        return loss, grads, margins.detach()

    course_loss, course_grads, margins = course_side(swap=False)
    swapped_loss, swapped_grads, _ = course_side(swap=True)
    return DPOComparison(
        loss_type=loss_type,
        beta=beta,
        pad_forbidden=pad_forbidden,
        margins=margins.tolist(),
        trl_loss=trl_loss.item(),
        course_loss=course_loss.item(),
        swapped_loss=swapped_loss.item(),
        grad_diff=_max_diff(trl_grads, course_grads),
        swapped_grad_diff=_max_diff(trl_grads, swapped_grads),
        grad_scale=max(g.abs().max().item() for g in trl_grads.values()),
    )
