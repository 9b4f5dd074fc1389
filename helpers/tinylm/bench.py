"""Mide los presupuestos de tiempo del modelo diminuto.

Uso::

    python -m helpers.tinylm.bench              # con 1 hilo
    python -m helpers.tinylm.bench --threads 2

Imprime:

1. el tiempo de muestrear 8 respuestas para 64 problemas (presupuesto ≤ 1 s);
2. una ejecución de GRPO con la configuración por defecto desde el
   checkpoint del paquete: segundos de entrenamiento, precisión en
   evaluación y P(correcta | 17 × 24) antes y después, a T = 1 (presupuesto:
   +20 puntos y P > 0,9 en ≤ 60 s), y también la precisión voraz, pass@8 y
   si 17 × 24 acierta con decodificación voraz;
3. el tiempo que tardó el ajuste supervisado que produjo el checkpoint,
   tal como lo midió ``python -m helpers.tinylm.sft`` (presupuesto ≤ 10 min).

No es una prueba con tiempo límite: solo informa. Las cifras dependen de la
máquina y de lo ocupada que esté.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from .checkpoint import checkpoint_info, load_pretrained
from .grpo import GRPOConfig, train_grpo
from .model import TinyLM
from .sampling import sample
from .task import encode_prompts, rl_problems


def time_sampling(
    model: TinyLM, n_problems: int = 64, group_size: int = 8, repeats: int = 5
) -> float:
    """Mediana, en segundos, de muestrear ``group_size`` respuestas por problema."""
    prompts = encode_prompts(rl_problems()[:n_problems])
    prompts = prompts.repeat_interleave(group_size, dim=0)  # (n_problems · G, P)
    generator = torch.Generator().manual_seed(0)
    sample(model, prompts, generator=generator)  # calentamiento
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        sample(model, prompts, generator=generator)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def main() -> None:
    parser = argparse.ArgumentParser(description="Presupuestos del modelo diminuto.")
    parser.add_argument("--threads", type=int, default=1, help="hilos de PyTorch")
    parser.add_argument(
        "--seed", type=int, default=GRPOConfig.seed, help="semilla de GRPO"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    model = load_pretrained()
    print(f"Hilos de PyTorch: {torch.get_num_threads()}")
    print(f"Parámetros del modelo: {model.num_params():,}")

    sampling_seconds = time_sampling(model)
    print(
        f"\n1. Muestrear 8 respuestas × 64 problemas: {sampling_seconds:.3f} s "
        f"(presupuesto ≤ 1 s) {_mark(sampling_seconds <= 1.0)}"
    )

    cfg = GRPOConfig(seed=args.seed, num_threads=args.threads)
    start = time.perf_counter()
    history = train_grpo(model, cfg, progress=False)
    wall = time.perf_counter() - start
    train_seconds = history["train_seconds"][-1]
    accuracy, p_target = history["heldout_accuracy"], history["p_correct"]
    acc_before, acc_after = accuracy[0], accuracy[-1]
    p_before, p_after = p_target[0], p_target[-1]
    gain = 100 * (acc_after - acc_before)
    print(
        f"\n2. GRPO, {len(history['step'])} pasos de "
        f"{cfg.prompts_per_step} enunciados × {cfg.group_size} respuestas:"
    )
    print(f"   entrenamiento: {train_seconds:.1f} s (con evaluaciones: {wall:.1f} s)")
    print(
        f"   precisión en evaluación (T = 1): {acc_before:.1%} -> {acc_after:.1%} "
        f"({gain:+.1f} puntos)"
    )
    print(f"   P(correcta | 17 × 24) (T = 1): {p_before:.3f} -> {p_after:.3f}")
    greedy, pass_k = history["heldout_greedy_accuracy"], history["heldout_pass_at_k"]
    print(f"   precisión en evaluación (voraz): {greedy[0]:.1%} -> {greedy[-1]:.1%}")
    print(
        f"   pass@{cfg.eval_samples} en evaluación (T = 1): "
        f"{pass_k[0]:.1%} -> {pass_k[-1]:.1%}"
    )
    target_greedy = ["falla", "acierta"]
    print(
        "   17 × 24 con decodificación voraz: "
        f"{target_greedy[int(history['p_correct_greedy'][0])]} -> "
        f"{target_greedy[int(history['p_correct_greedy'][-1])]}"
    )
    ok = gain >= 20 and p_after > 0.9 and train_seconds <= 60
    print(f"   presupuesto (+20 puntos y P > 0,9 en ≤ 60 s): {_mark(ok)}")

    info = checkpoint_info()
    sft_seconds = info.get("sft_seconds")
    if sft_seconds is not None:
        print(
            f"\n3. Ajuste supervisado (medido por helpers.tinylm.sft): "
            f"{sft_seconds:.0f} s (presupuesto ≤ 600 s) {_mark(sft_seconds <= 600)}"
        )
        print(
            f"   precisión del checkpoint: {info['heldout_accuracy']:.1%}, "
            f"P(correcta | 17 × 24): {info['p_correct']:.3f}"
        )


if __name__ == "__main__":
    main()
