"""Ajuste supervisado (SFT): el punto de partida que después mejora GRPO.

Uso::

    python -m helpers.tinylm.sft            # reentrena y sobrescribe el .pt
    python -m helpers.tinylm.sft --out otro.pt

El modelo aprende a imitar respuestas desarrolladas
(``17×24=17×20+17×4=340+68=408.``) con la pérdida de entropía cruzada de
siempre, solo sobre los caracteres de la respuesta.

Los ejemplos son como los apuntes de un compañero algo despistado: en una
fracción ``slip_prob`` (un 40 %) de ellos hay *un* despiste, una cifra que
sube o baja en 1 en uno de los tres cálculos (``340+58=398`` en vez de
``340+68=408``), y lo que sigue se calcula a partir del número equivocado,
como haría una persona. El ajuste supervisado imita los datos, despistes
incluidos: el carácter más probable suele ser el bueno, pero no se lleva
toda la probabilidad (tras ``17×24=17×20+17×4=340+``, el modelo del paquete
da casi todo al «6» y algo al «7», el despiste de 78), y con unos 22
caracteres por respuesta esos pequeños márgenes suman: muestreando a
temperatura 1 falla mucho más que con decodificación voraz, que escribe
siempre el carácter más probable (el cuaderno 07 lo mide). El verificador sí
distingue lo correcto de lo que solo se le parece, y por eso GRPO puede
mejorar lo que el SFT no puede: sobre todo, afilando la distribución.

Además paramos pronto (1500 pasos con tasa constante), así que también
quedan errores de verdad, de los que se cometen incluso sin muestrear.

Todo está sembrado y se ejecuta con un hilo, así que la misma semilla da el
mismo checkpoint (y la misma precisión) en la misma máquina.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from .checkpoint import CHECKPOINT_PATH, save_checkpoint
from .evaluate import heldout_accuracy, p_correct
from .model import TinyLM, TinyLMConfig
from .task import PROMPT_LEN, prompt_text, train_problems
from .tokenizer import END, tokenizer


@dataclass
class SFTConfig:
    """Hiperparámetros del ajuste supervisado."""

    seed: int = 0  # semilla de todo (datos, pesos, lotes)
    slip_prob: float = 0.4  # fracción de ejemplos con un despiste
    steps: int = 1500  # pasos de gradiente (parada temprana, a propósito)
    batch_size: int = 256  # ejemplos por paso
    lr: float = 3e-3  # tasa de aprendizaje de AdamW
    warmup: int = 100  # pasos de calentamiento lineal de la tasa
    model: TinyLMConfig = field(default_factory=TinyLMConfig)


def set_seed(seed: int) -> None:
    """Siembra Python, NumPy y PyTorch."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def slip(n: int, rng: random.Random) -> int:
    """Un despiste: una cifra de ``n`` sube o baja en 1 (68 -> 58 o 78).

    Nunca deja un cero delante ni una cifra fuera de 0-9.
    """
    digits = [int(c) for c in str(n)]
    while True:
        i = rng.randrange(len(digits))
        new_digit = digits[i] + rng.choice([-1, 1])
        leading_zero = i == 0 and new_digit == 0 and len(digits) > 1
        if 0 <= new_digit <= 9 and not leading_zero:
            digits[i] = new_digit
            return int("".join(map(str, digits)))


def notes_solution_text(a: int, b: int, rng: random.Random, slip_prob: float) -> str:
    """Respuesta desarrollada de ``a × b`` con un despiste ocasional.

    Con probabilidad ``1 - slip_prob`` es ``solution_text(a, b)``. Si no, uno
    de los tres números calculados (``a × decenas``, ``a × unidades`` o la
    suma) lleva un despiste, y lo siguiente se calcula a partir de él.
    """
    tens, units = 10 * (b // 10), b % 10
    x, y = a * tens, a * units
    total = None
    if rng.random() < slip_prob:
        where = rng.choice(["decenas", "unidades", "suma"])
        if where == "decenas":
            x = slip(x, rng)
        elif where == "unidades":
            y = slip(y, rng)
        else:
            total = slip(x + y, rng)
    total = x + y if total is None else total
    return f"{a}×{tens}+{a}×{units}={x}+{y}={total}{END}"


def build_dataset(cfg: SFTConfig) -> torch.Tensor:
    """Todos los problemas de entrenamiento -> tensor ``(N, max_len)`` de ids.

    Cada fila es enunciado + respuesta (con o sin despiste) + punto final,
    rellenada a la derecha. Ni 17 × 24 ni los problemas de evaluación están.
    """
    rng = random.Random(cfg.seed)
    texts = [
        prompt_text(a, b) + notes_solution_text(a, b, rng, cfg.slip_prob)
        for a, b in train_problems()
    ]
    return tokenizer.encode_batch(texts, length=cfg.model.max_len)


def sft_loss(model: TinyLM, batch: torch.Tensor) -> torch.Tensor:
    """Entropía cruzada media sobre los tokens de la respuesta.

    ``batch``: ``(B, L)`` ids. El enunciado no se puntúa (viene dado) y el
    relleno tampoco.
    """
    logits = model(batch[:, :-1])[:, PROMPT_LEN - 1 :]  # (B, T, V)
    targets = batch[:, PROMPT_LEN:]  # (B, T)
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        targets.reshape(-1),
        ignore_index=tokenizer.pad_id,
    )


def train_sft(cfg: SFTConfig, verbose: bool = True) -> TinyLM:
    """Entrena un ``TinyLM`` nuevo con ``cfg`` y lo devuelve."""
    set_seed(cfg.seed)
    model = TinyLM(cfg.model)
    data = build_dataset(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)

    # Calentamiento lineal y después tasa constante: paramos antes de converger
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / cfg.warmup)
    )
    generator = torch.Generator().manual_seed(cfg.seed)
    for step in range(cfg.steps):
        rows = torch.randint(0, len(data), (cfg.batch_size,), generator=generator)
        loss = sft_loss(model, data[rows])
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if verbose and (step % 250 == 0 or step == cfg.steps - 1):
            print(f"paso {step:5d}  pérdida {loss.item():.4f}", flush=True)
    return model.eval()


def main() -> None:
    parser = argparse.ArgumentParser(description="Ajuste supervisado del TinyLM.")
    parser.add_argument(
        "--out", type=Path, default=CHECKPOINT_PATH, help="dónde guardar el .pt"
    )
    parser.add_argument("--seed", type=int, default=SFTConfig.seed, help="semilla")
    parser.add_argument(
        "--steps", type=int, default=SFTConfig.steps, help="pasos de gradiente"
    )
    parser.add_argument(
        "--slip-prob",
        type=float,
        default=SFTConfig.slip_prob,
        help="fracción de ejemplos con un despiste",
    )
    parser.add_argument(
        "--lr", type=float, default=SFTConfig.lr, help="tasa de aprendizaje"
    )
    args = parser.parse_args()

    torch.set_num_threads(1)  # reproducible y justo con el resto de la máquina
    cfg = SFTConfig(
        seed=args.seed, steps=args.steps, slip_prob=args.slip_prob, lr=args.lr
    )
    start = time.perf_counter()
    model = train_sft(cfg)
    seconds = time.perf_counter() - start
    accuracy = heldout_accuracy(model)
    p_target = p_correct(model)
    print(f"Parámetros: {model.num_params():,}")
    print(f"Tiempo de entrenamiento: {seconds:.1f} s (1 hilo)")
    print(f"Precisión en evaluación (T = 1): {accuracy:.1%}")
    print(f"P(correcta | 17 × 24) (T = 1): {p_target:.3f}")
    sft_cfg = {k: v for k, v in asdict(cfg).items() if k != "model"}
    extra = {
        "sft": sft_cfg,
        "sft_seconds": seconds,
        "heldout_accuracy": accuracy,
        "p_correct": p_target,
    }
    save_checkpoint(model, args.out, extra)
    print(f"Checkpoint guardado en {args.out}")


if __name__ == "__main__":
    main()
