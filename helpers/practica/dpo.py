"""DPOTrainer, construido por el estudiante, frente a su propia ``dpo_loss``.

En el ejercicio 6 del cuaderno 11 el estudiante escribe el ``trl.DPOConfig``
y la llamada a ``trl.DPOTrainer(...)`` (``make_dpo_trainer``) y trae su
``dpo_loss`` del módulo 10. Este archivo pone lo demás:

- ``preference_dataset``: los pares del módulo 10 (las respuestas del SFT a
  los enunciados de la etapa de preferencias, etiquetadas por la anotadora)
  con las columnas de TRL, ``prompt``, ``chosen`` y ``rejected``, en forma
  **conversacional** (listas de mensajes ``{"role", "content"}``): la
  plantilla de chat del tokenizador del curso los escribe, y TRL no añade un
  «.» a una respuesta que no lo tenía (con texto plano sí lo haría).
- ``compare_with_own_loss``: sobre un lote del entrenador del estudiante, la
  pérdida y los gradientes de TRL (``DPOTrainer.compute_loss``) frente a los
  de su ``dpo_loss`` alimentada con las mismas log-probabilidades. Las dos
  pérdidas pasan por el mismo modelo y el mismo lote: lo único que cambia es
  la fórmula. Con ``"ipo"`` entran las medias por token (TRL divide cada
  cociente por la longitud de su respuesta, y el enunciado del módulo 10 pide
  lo mismo a ``dpo_loss``); con ``"sigmoid"``, las sumas.
- ``train_side_by_side``: unas épocas del ``DPOTrainer`` del estudiante y, al
  lado, el DPO del curso (``helpers.tinylm.preferences.train_dpo``) sobre los
  mismos pares y con los mismos hiperparámetros, con la log-probabilidad
  media de las elegidas y de las rechazadas (y su cociente con la
  referencia) tras cada época; ``plot_side_by_side`` lo dibuja.
- ``reference_dpo_trainer``: un ``make_dpo_trainer`` de referencia, para las
  pruebas del curso (el cuaderno nunca lo usa en un camino calificado).

Una entrada mala (un ``loss_type`` que no es ``"sigmoid"`` ni ``"ipo"``, un
conjunto sin las columnas, un entrenador que ya entrenó...) da un
``DPOInputError`` en español, nunca una ejecución equivocada en silencio.

``helpers.puente.dpo_equality`` hace la comparación «de punta a punta» (los
``TinyLM`` del curso frente a los modelos de TRL); aquí el entrenador es el
del estudiante y la comparación aísla su fórmula.
"""

from __future__ import annotations

import copy
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import torch
from torch import nn

from helpers.formatting import number, scientific
from helpers.puente.convert import to_tinylm
from helpers.puente.dpo_equality import _max_diff, _quiet_datasets, trl_batch
from helpers.puente.tokenizer import make_tokenizer
from helpers.tinylm import MAX_NEW_TOKENS, PROMPT_LEN, tokenizer
from helpers.tinylm import preferences as pref

#: Los ``loss_type`` de TRL que el módulo 10 sabe escribir con ``dpo_loss``.
LOSS_TYPES: tuple[str, ...] = ("sigmoid", "ipo")
#: Las columnas que ``DPOTrainer`` lee de un conjunto de preferencias.
COLUMNS: tuple[str, ...] = ("prompt", "chosen", "rejected")
#: Pares del conjunto del cuaderno, y la semilla de la anotadora (la de los
#: pares de entrenamiento del módulo 10).
N_PAIRS = 64
PAIRS_SEED = pref.TRAIN_SEED
#: Tolerancias de ``LossComparison.matches`` (float32, un hilo): relativas a
#: |pérdida de TRL| y a max |∇TRL|. Medido al escribirlas, en el entrenador de
#: referencia con la política movida: ver tests/test_practica_dpo.py.
LOSS_RTOL = 1e-6
GRAD_RTOL = 1e-5
#: Los hiperparámetros del entrenador de referencia (y del cuaderno).
BATCH_SIZE = 16
LEARNING_RATE = 2e-4
EPOCHS = 4
BETAS: dict[str, float] = {"sigmoid": 0.1, "ipo": 1.0}  # las del módulo 10


class DPOInputError(ValueError):
    """Una entrada mala para DPOTrainer o para estas comparaciones, en español."""


# --- Los datos ---------------------------------------------------------------


@cache
def _pairs(n_pairs: int, seed: int) -> pref.PreferencePairs:
    return pref.make_preferences(n_pairs, seed, pref.preference_problems())


def preference_pairs(
    n_pairs: int = N_PAIRS, seed: int = PAIRS_SEED
) -> pref.PreferencePairs:
    """``n_pairs`` pares del módulo 10 como tensores (``PreferencePairs``).

    Son los de ``make_preferences`` sobre los enunciados de la etapa de
    preferencias: con ``seed = 0``, los primeros de ``pref.train_pairs``.
    Deterministas: la misma semilla da los mismos pares.
    """
    if not isinstance(n_pairs, int) or n_pairs < 1:
        raise DPOInputError(
            f"n_pairs tiene que ser un entero positivo; es {n_pairs!r}."
        )
    return copy.deepcopy(_pairs(n_pairs, seed))


def _messages(texts: list[str], role: str) -> list[list[dict[str, str]]]:
    return [[{"role": role, "content": text}] for text in texts]


def preference_dataset(n_pairs: int = N_PAIRS, seed: int = PAIRS_SEED):
    """Los pares del módulo 10 con las columnas de TRL: un ``datasets.Dataset``.

    Cada fila es conversacional, como las de un conjunto de preferencias de
    verdad: la columna ``prompt`` es ``[{"role": "user", "content": "55×78="}]``
    y ``chosen`` y ``rejected`` son
    ``[{"role": "assistant", "content": "55×70+55×8=3850+440=4290."}]`` y otra
    respuesta al mismo enunciado.

    La plantilla de chat de ``helpers.puente.tokenizer.make_tokenizer()``
    escribe el enunciado y la respuesta seguidos, así que TRL tokeniza
    exactamente los ids del curso. Una respuesta que no llegó al «.» se queda
    sin él (con texto plano, TRL se lo añadiría).
    """
    import datasets

    pairs = preference_pairs(n_pairs, seed)
    return datasets.Dataset.from_dict(
        {
            "prompt": _messages(tokenizer.decode_batch(pairs.prompts), "user"),
            "chosen": _messages(tokenizer.decode_batch(pairs.chosen), "assistant"),
            "rejected": _messages(tokenizer.decode_batch(pairs.rejected), "assistant"),
        }
    )


def check_preference_dataset(dataset: Any) -> None:
    """Falla con un ``DPOInputError`` si ``dataset`` no sirve a ``DPOTrainer``.

    Tiene que ser un ``datasets.Dataset`` con las columnas ``prompt``,
    ``chosen`` y ``rejected`` y al menos una fila.
    """
    import datasets

    if not isinstance(dataset, datasets.Dataset):
        raise DPOInputError(
            "El conjunto de preferencias tiene que ser un datasets.Dataset; es "
            f"{type(dataset).__name__}. Usa practica_dpo.preference_dataset() o "
            "datasets.Dataset.from_dict({...})."
        )
    missing = [c for c in COLUMNS if c not in dataset.column_names]
    if missing:
        raise DPOInputError(
            f"Al conjunto de preferencias le faltan las columnas {missing}: "
            f"DPOTrainer lee {list(COLUMNS)} (el enunciado, la respuesta "
            f"elegida y la rechazada) y este tiene {dataset.column_names}."
        )
    if len(dataset) == 0:
        raise DPOInputError("El conjunto de preferencias está vacío.")


def check_loss_type(loss_type: Any) -> str:
    """Devuelve ``loss_type`` si es ``"sigmoid"`` o ``"ipo"``; si no, falla."""
    if loss_type not in LOSS_TYPES:
        raise DPOInputError(
            f"loss_type tiene que ser 'sigmoid' (DPO) o 'ipo' (IPO), las dos "
            f"pérdidas que escribiste en el módulo 10; es {loss_type!r}."
        )
    return loss_type


# --- El entrenador de referencia ---------------------------------------------


def reference_dpo_trainer(
    model: nn.Module,
    ref_model: nn.Module,
    dataset: Any,
    loss_type: str,
    beta: float,
    output_dir: str | Path,
    seed: int = 0,
):
    """Un ``make_dpo_trainer`` de referencia: el ``DPOTrainer`` del ejercicio 6.

    Solo para las pruebas del curso. En CPU y float32, sin informes ni
    puntos de control, con el ``loss_type`` y la ``beta`` pedidos, lotes de
    ``BATCH_SIZE`` pares, ``LEARNING_RATE`` constante (sin calendario, como
    ``train_dpo``) y ``EPOCHS`` épocas, registrando una vez por época;
    ``seed`` es la de ``DPOConfig`` (la que baraja los pares).
    """
    import trl

    check_loss_type(loss_type)
    check_preference_dataset(dataset)
    with warnings.catch_warnings(), _quiet_datasets():
        warnings.simplefilter("ignore")
        args = trl.DPOConfig(
            output_dir=str(output_dir),
            use_cpu=True,
            bf16=False,
            loss_type=[loss_type],
            beta=beta,
            per_device_train_batch_size=BATCH_SIZE,
            learning_rate=LEARNING_RATE,
            lr_scheduler_type="constant",
            num_train_epochs=EPOCHS,
            logging_strategy="epoch",
            save_strategy="no",
            report_to=[],
            disable_tqdm=True,
            seed=seed,
        )
        return trl.DPOTrainer(
            model=model,
            ref_model=ref_model,
            args=args,
            train_dataset=dataset,
            processing_class=make_tokenizer(),
        )


# --- Lo que se comprueba de un entrenador ------------------------------------


def _check_trainer(trainer: Any, loss_type: str | None = None) -> str:
    """Comprueba que ``trainer`` es un DPOTrainer que se puede comparar.

    Devuelve su ``loss_type``.
    """
    import trl

    if not isinstance(trainer, trl.DPOTrainer):
        raise DPOInputError(
            f"Hace falta un trl.DPOTrainer (lo que devuelve tu make_dpo_trainer); "
            f"llegó {type(trainer).__name__}."
        )
    types = list(trainer.loss_types)
    if len(types) != 1:
        raise DPOInputError(
            f"Tu DPOTrainer mezcla varias pérdidas, loss_type={types}: aquí va "
            "una sola, 'sigmoid' o 'ipo'."
        )
    own = check_loss_type(types[0])
    if loss_type is not None and check_loss_type(loss_type) != own:
        raise DPOInputError(
            f"Tu DPOTrainer usa loss_type={own!r} y pides comparar con "
            f"{loss_type!r}: construye el entrenador con el mismo loss_type."
        )
    args = trainer.args
    unsupported = {
        "padding_free": args.padding_free,
        "ld_alpha": args.ld_alpha,
        "use_weighting": args.use_weighting,
        "precompute_ref_log_probs": args.precompute_ref_log_probs,
    }
    changed = {k: v for k, v in unsupported.items() if v not in (False, None)}
    if args.f_divergence_type != "reverse_kl":
        changed["f_divergence_type"] = args.f_divergence_type
    if changed:
        raise DPOInputError(
            f"Tu DPOConfig cambia opciones que el DPO del módulo 10 no tiene: "
            f"{changed}. Déjalas con su valor por defecto."
        )
    if trainer.ref_model is None:
        raise DPOInputError(
            "Tu DPOTrainer no tiene modelo de referencia (ref_model): pásale "
            "una copia congelada del modelo de partida."
        )
    check_preference_dataset(trainer.train_dataset)
    return own


def _collate(trainer: Any, rows: range) -> dict[str, torch.Tensor]:
    """Las filas ``rows`` del conjunto tokenizado de TRL, por su colador."""
    keys = ("prompt_ids", "chosen_ids", "rejected_ids")
    data = trainer.train_dataset
    return trainer.data_collator([{k: data[i][k] for k in keys} for i in rows])


def completion_log_probs(
    model: nn.Module, batch: dict[str, torch.Tensor], average: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(N,)`` log π de las elegidas y de las rechazadas de un lote de TRL.

    El lote es el del colador de ``DPOTrainer``: ``2N`` filas, primero las
    elegidas y luego las rechazadas, con relleno a la derecha y
    ``completion_mask`` en las respuestas. Un ``forward`` normal de
    ``model`` (los logits, sin la cabeza «fusionada» de TRL), log-softmax y
    la suma de los tokens de cada respuesta; con ``average``, dividida por su
    número de tokens (lo que TRL hace en IPO).
    """
    ids, mask = batch["input_ids"], batch["completion_mask"]
    logits = model(input_ids=ids, attention_mask=batch["attention_mask"]).logits
    # El logit de la posición t predice el token t + 1
    log_probs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    per_token = log_probs.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    shifted = mask[:, 1:].to(per_token.dtype)
    total = (per_token * shifted).sum(dim=-1)
    if average:
        total = total / shifted.sum(dim=-1).clamp(min=1)
    return total.chunk(2, dim=0)


@dataclass
class LossComparison:
    """Lo que devuelve ``compare_with_own_loss``: TRL frente a tu ``dpo_loss``."""

    loss_type: str
    beta: float
    n_pairs: int  # pares del lote comparado
    trl_loss: float
    own_loss: float
    loss_diff: float  # |pérdida_TRL − tu pérdida|
    grad_diff: float  # max |∇TRL − ∇tuyo| sobre todos los parámetros
    grad_scale: float  # max |∇TRL|
    margins: list[float] = field(repr=False)  # h de cada par, la que entra en dpo_loss

    @property
    def log_probs(self) -> str:
        """Qué log-probabilidades recibe ``dpo_loss``: sumas o medias por token."""
        return "medias por token" if self.loss_type == "ipo" else "sumas"

    @property
    def relative_loss_diff(self) -> float:
        return self.loss_diff / max(abs(self.trl_loss), 1e-12)

    @property
    def relative_grad_diff(self) -> float:
        return self.grad_diff / max(self.grad_scale, 1e-12)

    def matches(
        self, loss_rtol: float = LOSS_RTOL, grad_rtol: float = GRAD_RTOL
    ) -> bool:
        """¿Coinciden la pérdida y el gradiente dentro de las tolerancias?"""
        return (
            self.relative_loss_diff <= loss_rtol
            and self.relative_grad_diff <= grad_rtol
        )

    def __str__(self) -> str:
        h = torch.tensor(self.margins)
        return "\n".join(
            [
                f"loss_type={self.loss_type!r}, β = {number(self.beta, 2)}, "
                f"{self.n_pairs} pares, log-probabilidades {self.log_probs}",
                f"  h de los pares: de {number(h.min(), 3)} a {number(h.max(), 3)}",
                f"  pérdida de TRL: {number(self.trl_loss, 6)} · la tuya: "
                f"{number(self.own_loss, 6)} · |Δ| = {scientific(self.loss_diff)}",
                f"  gradientes: max |Δ| = {scientific(self.grad_diff)} sobre una "
                f"escala de {scientific(self.grad_scale)}",
            ]
        )


def _own_loss_value(loss: Any) -> torch.Tensor:
    """Comprueba lo que devolvió la ``dpo_loss`` del estudiante."""
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise DPOInputError(
            "Tu dpo_loss tiene que devolver un tensor escalar (la media del "
            f"lote); devolvió {type(loss).__name__}"
            + (
                f" de forma {tuple(loss.shape)}."
                if isinstance(loss, torch.Tensor)
                else "."
            )
        )
    if loss.grad_fn is None:
        raise DPOInputError(
            "El gradiente no llega a tu dpo_loss: ¿usaste .item(), .detach() o "
            "torch.no_grad()? Tiene que devolver un tensor con su grafo."
        )
    if not torch.isfinite(loss):
        raise DPOInputError(f"Tu dpo_loss dio {loss.item()}: no es un número finito.")
    return loss.reshape(())


def compare_with_own_loss(
    trainer: Any, dpo_loss: Callable[..., torch.Tensor], loss_type: str
) -> LossComparison:
    """La pérdida y los gradientes de ``DPOTrainer`` frente a los de ``dpo_loss``.

    Sobre el primer lote del entrenador (``per_device_train_batch_size``
    pares, tal como los junta su colador):

    1. TRL: ``trainer.compute_loss`` y ``backward``.
    2. Tú: las log-probabilidades de las respuestas bajo la política y bajo
       ``trainer.ref_model`` (``completion_log_probs``: sumas con
       ``"sigmoid"``, medias por token con ``"ipo"``), tu
       ``dpo_loss(policy_chosen, policy_rejected, reference_chosen,
       reference_rejected, beta, loss_type=...)`` y ``backward``.

    Los dos gradientes salen del mismo modelo y se comparan parámetro a
    parámetro. No entrena ni cambia los pesos: deja los gradientes a cero y
    las métricas de TRL como estaban.
    """
    loss_type = _check_trainer(trainer, loss_type)
    model = trainer.model
    rows = range(
        min(trainer.args.per_device_train_batch_size, len(trainer.train_dataset))
    )
    batch = _collate(trainer, rows)
    metrics = {
        mode: {k: list(v) for k, v in m.items()} for mode, m in trainer._metrics.items()
    }
    total_tokens = trainer._total_train_tokens
    was_training = model.training
    model.train()
    try:
        model.zero_grad()
        with warnings.catch_warnings():  # avisos de obsolescencia de transformers
            warnings.simplefilter("ignore", FutureWarning)
            trl_loss = trainer.compute_loss(model, batch)
        trl_loss.backward()
        trl_grads = {
            n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None
        }

        model.zero_grad()
        average = loss_type == "ipo"
        with torch.no_grad():
            ref_chosen, ref_rejected = completion_log_probs(
                trainer.ref_model, batch, average
            )
        chosen, rejected = completion_log_probs(model, batch, average)
        own = dpo_loss(
            chosen,
            rejected,
            ref_chosen,
            ref_rejected,
            trainer.beta,
            loss_type=loss_type,
        )
        own = _own_loss_value(own)
        own.backward()
        own_grads = {
            n: (p.grad.clone() if p.grad is not None else torch.zeros_like(p))
            for n, p in model.named_parameters()
            if n in trl_grads
        }
    finally:
        model.zero_grad(set_to_none=True)
        model.train(was_training)
        for mode, values in trainer._metrics.items():
            values.clear()
            values.update(metrics.get(mode, {}))
        trainer._total_train_tokens = total_tokens
    margins = (chosen - ref_chosen) - (rejected - ref_rejected)
    return LossComparison(
        loss_type=loss_type,
        beta=float(trainer.beta),
        n_pairs=len(rows),
        trl_loss=trl_loss.item(),
        own_loss=own.item(),
        loss_diff=abs(trl_loss.item() - own.item()),
        grad_diff=_max_diff(trl_grads, own_grads),
        grad_scale=max(g.abs().max().item() for g in trl_grads.values()),
        margins=margins.detach().tolist(),
    )


# --- Entrenar los dos, lado a lado --------------------------------------------


def trainer_pairs(trainer: Any) -> pref.PreferencePairs:
    """Los pares que entrena ``trainer``, como ``PreferencePairs`` del curso.

    Salen de los ids que tokenizó TRL (``prompt_ids``, ``chosen_ids``,
    ``rejected_ids``): el DPO del curso entrena exactamente lo mismo. Los
    enunciados tienen que ser los del curso (``ab×cd=``, ``PROMPT_LEN``
    tokens) y las respuestas caber en ``MAX_NEW_TOKENS``.
    """
    data = trainer.train_dataset
    prompts, chosen, rejected, problems = [], [], [], []
    for i in range(len(data)):
        row = data[i]
        text = tokenizer.decode(row["prompt_ids"])
        a, times, rest = text.partition("×")
        b = rest.removesuffix("=")
        if (
            len(row["prompt_ids"]) != PROMPT_LEN
            or not times
            or not (a.isdigit() and b.isdigit())
        ):
            raise DPOInputError(
                f"El enunciado {text!r} (fila {i}) no es uno del curso, «ab×cd=»: "
                "el DPO del curso solo entrena los pares de preference_dataset()."
            )
        answers = []
        for key in ("chosen_ids", "rejected_ids"):
            ids = row[key]
            if len(ids) > MAX_NEW_TOKENS:
                raise DPOInputError(
                    f"La respuesta {key} de la fila {i} mide {len(ids)} tokens; el "
                    f"modelo del curso escribe como mucho {MAX_NEW_TOKENS}."
                )
            answers.append(ids + [tokenizer.pad_id] * (MAX_NEW_TOKENS - len(ids)))
        prompts.append(row["prompt_ids"])
        chosen.append(answers[0])
        rejected.append(answers[1])
        problems.append((int(a), int(b)))
    chosen_t, rejected_t = torch.tensor(chosen), torch.tensor(rejected)
    u_chosen = pref.utilities_for(chosen_t, problems)
    u_rejected = pref.utilities_for(rejected_t, problems)
    return pref.PreferencePairs(
        prompts=torch.tensor(prompts),
        chosen=chosen_t,
        rejected=rejected_t,
        problems=problems,
        chosen_utility=u_chosen,
        rejected_utility=u_rejected,
        label_probability=pref.preference_probability(u_chosen, u_rejected),
    )


#: Las series de cada lado en ``train_side_by_side``: medias sobre los pares,
#: en nats por respuesta entera (la suma de sus tokens).
SERIES: tuple[str, ...] = (
    "chosen",  # log π(elegida)
    "rejected",  # log π(rechazada)
    "chosen_ratio",  # log π(elegida) − log π_ref(elegida)
    "rejected_ratio",  # log π(rechazada) − log π_ref(rechazada)
    "margin",  # h = chosen_ratio − rejected_ratio
)


def _record(
    series: dict[str, list[float]],
    chosen: torch.Tensor,
    rejected: torch.Tensor,
    reference: tuple[torch.Tensor, torch.Tensor],
) -> None:
    chosen_ratio, rejected_ratio = chosen - reference[0], rejected - reference[1]
    values = (
        chosen,
        rejected,
        chosen_ratio,
        rejected_ratio,
        chosen_ratio - rejected_ratio,
    )
    for key, value in zip(SERIES, values, strict=True):
        series[key].append(value.mean().item())


def _same_weights(a: nn.Module, b: nn.Module) -> bool:
    params = dict(b.named_parameters())
    return all(
        name in params and torch.equal(p.detach(), params[name].detach())
        for name, p in a.named_parameters()
    )


def _differences(args: Any) -> list[str]:
    """En qué se distinguen los dos entrenamientos, además del orden de los lotes."""
    notes = [
        "la primera época baraja los pares igual en los dos lados (accelerate "
        "siembra la época e con seed + e, y train_dpo saca su primera "
        "permutación con seed); desde la segunda, los lotes ya no son los "
        "mismos y las curvas se parecen sin ser iguales",
        "el modelo del curso nunca escribe el relleno (log π = −∞); el de TRL "
        "le da algo de probabilidad: las log-probabilidades difieren un poco",
    ]
    schedule = str(getattr(args.lr_scheduler_type, "value", args.lr_scheduler_type))
    if schedule != "constant":
        notes.append(
            f"tu tasa de aprendizaje sigue el calendario {schedule!r}; la del "
            "curso es constante (lr_scheduler_type='constant' las iguala)"
        )
    if getattr(args, "warmup_steps", 0) or getattr(args, "warmup_ratio", 0):
        notes.append(
            "tu entrenamiento calienta la tasa de aprendizaje; el del curso no"
        )
    if args.weight_decay:
        notes.append(
            f"tu AdamW tiene weight_decay = {number(args.weight_decay, 3)}; el Adam "
            "del curso, ninguno"
        )
    return notes


def train_side_by_side(
    trainer: Any,
    epochs: int | None = None,
    dpo_loss: Callable[..., torch.Tensor] | None = None,
    verbose: bool = True,
) -> dict[str, Any]:
    """Unas épocas de tu ``DPOTrainer`` y, al lado, las mismas del DPO del curso.

    Los dos parten de los mismos pesos (tu ``model``, que tiene que ser igual
    a tu ``ref_model``), entrenan los mismos pares (``trainer_pairs``) con
    los mismos hiperparámetros (β, ``loss_type``, lote, tasa de aprendizaje,
    recorte del gradiente, semilla: los de tu ``DPOConfig``) durante
    ``epochs`` épocas (por defecto, las de tu ``DPOConfig``). El del curso es
    ``helpers.tinylm.preferences.train_dpo`` con ``dpo_loss`` (por defecto, la
    de referencia; pásale la tuya).

    Al empezar y tras cada época se mide, sobre todos los pares, la
    log-probabilidad media de las elegidas y de las rechazadas y su cociente
    con la referencia (``SERIES``). Devuelve::

        {"epoch": [0, 1, ...],
         "trl": {serie: [...], "seconds": s}, "course": {serie: [...], "seconds": s},
         "config": {...}, "differences": [...]}

    Con ``verbose``, imprime la tabla (``print_side_by_side``). Entrena tu
    ``trainer`` de verdad: llámala una sola vez, después de
    ``compare_with_own_loss``.
    """
    from transformers import TrainerCallback

    loss_type = _check_trainer(trainer)
    if trainer.state.global_step > 0:
        raise DPOInputError(
            "Este DPOTrainer ya entrenó (global_step = "
            f"{trainer.state.global_step}): construye uno nuevo con make_dpo_trainer "
            "para que los dos lados partan del mismo punto."
        )
    if epochs is not None:
        if not isinstance(epochs, int) or epochs < 1:
            raise DPOInputError(
                f"epochs tiene que ser un entero positivo; es {epochs!r}."
            )
        trainer.args.num_train_epochs = epochs
    epochs = trainer.args.num_train_epochs
    if epochs != int(epochs) or epochs < 1 or trainer.args.max_steps > 0:
        raise DPOInputError(
            "Para comparar época a época, tu DPOConfig tiene que entrenar un número "
            f"entero de épocas (num_train_epochs = {epochs}, max_steps = "
            f"{trainer.args.max_steps}): deja max_steps sin fijar."
        )
    epochs = int(epochs)
    if not _same_weights(trainer.model, trainer.ref_model):
        raise DPOInputError(
            "Tu model y tu ref_model no tienen los mismos pesos: DPO parte de la "
            "referencia (dos copias del mismo modelo, una de ellas congelada)."
        )
    args = trainer.args
    pairs = trainer_pairs(trainer)
    batch_size = args.per_device_train_batch_size * args.gradient_accumulation_steps
    config = {
        "loss_type": loss_type,
        "beta": float(trainer.beta),
        "epochs": epochs,
        "batch_size": batch_size,
        "lr": float(args.learning_rate),
        "max_grad_norm": float(args.max_grad_norm),
        "seed": int(args.seed),
        "n_pairs": len(pairs),
    }

    # Lado de TRL: tu entrenador, medido al empezar y al final de cada época
    full_batch = trl_batch(trainer)
    trl_series: dict[str, Any] = {key: [] for key in SERIES}
    with torch.no_grad():
        trl_reference = completion_log_probs(trainer.ref_model, full_batch)

    @torch.no_grad()
    def measure_trl() -> None:
        _record(
            trl_series, *completion_log_probs(trainer.model, full_batch), trl_reference
        )

    class MeasureEachEpoch(TrainerCallback):
        def on_epoch_end(self, *_args: Any, **_kwargs: Any) -> None:
            measure_trl()

    measure_trl()
    callback = MeasureEachEpoch()
    trainer.add_callback(callback)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer.train()
    finally:
        trainer.remove_callback(callback)
    trl_series["seconds"] = time.perf_counter() - start

    # Lado del curso: train_dpo desde los mismos pesos; su dpo_loss mide la
    # política al empezar cada época (después de la anterior)
    policy = to_tinylm(trainer.ref_model)
    with torch.no_grad():
        course_reference = (
            pref.sequence_log_probs(policy, pairs.prompts, pairs.chosen),
            pref.sequence_log_probs(policy, pairs.prompts, pairs.rejected),
        )
    course_series: dict[str, Any] = {key: [] for key in SERIES}
    measuring = 0.0

    @torch.no_grad()
    def measure_course() -> None:
        nonlocal measuring
        begin = time.perf_counter()
        _record(
            course_series,
            pref.sequence_log_probs(policy, pairs.prompts, pairs.chosen),
            pref.sequence_log_probs(policy, pairs.prompts, pairs.rejected),
            course_reference,
        )
        measuring += time.perf_counter() - begin

    steps_per_epoch = math.ceil(len(pairs) / batch_size)
    loss = dpo_loss or pref.dpo_loss
    calls = 0

    def measured_loss(*loss_args: Any, **loss_kwargs: Any) -> torch.Tensor:
        nonlocal calls
        if calls and calls % steps_per_epoch == 0:
            measure_course()
        calls += 1
        return loss(*loss_args, **loss_kwargs)

    measure_course()
    start = time.perf_counter()
    pref.train_dpo(
        pairs,
        pref.DPOConfig(
            seed=config["seed"],
            beta=config["beta"],
            loss_type=loss_type,
            epochs=epochs,
            batch_size=batch_size,
            lr=config["lr"],
            max_grad_norm=config["max_grad_norm"],
        ),
        model=policy,
        loss_fn=measured_loss,
    )
    measure_course()
    course_series["seconds"] = time.perf_counter() - start - measuring

    result = {
        "epoch": list(range(epochs + 1)),
        "trl": trl_series,
        "course": course_series,
        "config": config,
        "differences": _differences(args),
    }
    if verbose:
        print_side_by_side(result)
    return result


def print_side_by_side(result: dict[str, Any]) -> None:
    """La tabla de ``train_side_by_side``, época a época, en nats por respuesta."""
    cfg = result["config"]
    print(
        f"DPO con loss_type={cfg['loss_type']!r}, β = {number(cfg['beta'], 2)}, "
        f"{cfg['n_pairs']} pares, lotes de {cfg['batch_size']}, "
        f"tasa {scientific(cfg['lr'])}: medias sobre los pares (nats)"
    )
    print(
        "época │ lado  │ log π elegidas │ log π rechazadas │ cociente elegidas │"
        " cociente rechazadas │ margen h"
    )
    for i, epoch in enumerate(result["epoch"]):
        for side, label in (("trl", "TRL  "), ("course", "curso")):
            s = result[side]
            print(
                f"{epoch:>5} │ {label} │ {number(s['chosen'][i], 3):>14} │ "
                f"{number(s['rejected'][i], 3):>16} │ "
                f"{number(s['chosen_ratio'][i], 3, sign=True):>17} │ "
                f"{number(s['rejected_ratio'][i], 3, sign=True):>19} │ "
                f"{number(s['margin'][i], 3, sign=True):>8}"
            )
    print(
        f"segundos de entrenamiento: TRL {number(result['trl']['seconds'], 1)} · "
        f"curso {number(result['course']['seconds'], 1)}"
    )
    for note in result["differences"]:
        print("·", note)


def plot_side_by_side(result: dict[str, Any], path: str | Path | None = None):
    """Dibuja ``train_side_by_side``: log-probabilidades y cocientes, época a época.

    A la izquierda, la log-probabilidad media de las elegidas y de las
    rechazadas; a la derecha, su cociente con la referencia. TRL en línea
    continua y el curso a trazos. Devuelve la figura (y la guarda en
    ``path`` si se da).
    """
    import matplotlib.pyplot as plt

    from helpers.plotting import use_course_style

    use_course_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    epochs = result["epoch"]
    colors = {"chosen": "tab:green", "rejected": "tab:red"}
    names = {"chosen": "elegidas", "rejected": "rechazadas"}
    styles = {
        "trl": {"linestyle": "-", "marker": "o", "linewidth": 2.5},
        "course": {"linestyle": "--", "marker": "s", "markerfacecolor": "none"},
    }
    for side, label in (("trl", "TRL"), ("course", "curso")):
        s = result[side]
        for key in ("chosen", "rejected"):
            kw = {"color": colors[key], **styles[side]}
            left.plot(epochs, s[key], label=f"{names[key]} ({label})", **kw)
            right.plot(epochs, s[f"{key}_ratio"], label=f"{names[key]} ({label})", **kw)
    right.axhline(0, color="0.4", linewidth=1)
    cfg = result["config"]
    left.set_title("Log-probabilidad media de las respuestas")
    left.set_ylabel("log π(respuesta | enunciado) (nats)")
    right.set_title("Cociente con la referencia")
    right.set_ylabel("log π / π_ref (nats)")
    for ax in (left, right):
        ax.set_xlabel("época")
        ax.set_xticks(epochs)
        ax.legend()
    fig.suptitle(
        "Tu DPOTrainer y el DPO del curso, lado a lado: "
        f"loss_type={cfg['loss_type']!r}, β = {number(cfg['beta'], 2)}"
    )
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    return fig


def side_by_side_findings(result: dict[str, Any]) -> dict[str, bool]:
    """Lo que se lee en ``train_side_by_side``, afirmación a afirmación.

    Cada clave es una afirmación que el cuaderno escribe en su prosa; vale
    ``True`` si se cumple en ``result``:

    - ``margin_grows``: en los dos lados, el margen h medio crece en cada época;
    - ``rejected_falls``: el cociente de las rechazadas baja en cada época;
    - ``margin_from_rejected``: al final, más del 90 % del margen viene de
      bajar las rechazadas (|cociente de las rechazadas| > 0,9 · h);
    - ``chosen_peaks_then_falls``: el cociente de las elegidas sube en la
      primera época y al final ha bajado al menos 0,05 nats desde su máximo
      (el principio del desplazamiento de la verosimilitud del módulo 10);
    - ``sides_agree``: en cada época, el margen de TRL y el del curso difieren
      menos de un 10 % del del curso.
    """

    def one_side(s: dict[str, list[float]]) -> dict[str, bool]:
        margin, chosen, rejected = s["margin"], s["chosen_ratio"], s["rejected_ratio"]
        return {
            "margin_grows": all(
                b > a for a, b in zip(margin[:-1], margin[1:], strict=True)
            ),
            "rejected_falls": all(
                b < a for a, b in zip(rejected[:-1], rejected[1:], strict=True)
            ),
            "margin_from_rejected": 0 < 0.9 * margin[-1] < -rejected[-1],
            "chosen_peaks_then_falls": chosen[1] > 0
            and chosen[-1] < max(chosen) - 0.05,
        }

    trl, course = one_side(result["trl"]), one_side(result["course"])
    findings = {key: trl[key] and course[key] for key in trl}
    findings["sides_agree"] = all(
        abs(a - b) < 0.1 * abs(b)
        for a, b in zip(
            result["trl"]["margin"][1:], result["course"]["margin"][1:], strict=True
        )
    )
    return findings
