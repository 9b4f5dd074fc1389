"""El entrenador del curso y ``GRPOTrainer`` de TRL, con el mismo presupuesto.

Los dos lados entrenan el mismo modelo (el del ajuste supervisado del
paquete) con los mismos hiperparámetros y el mismo número de respuestas
muestreadas, y se miden con el mismo código:

- **el mismo presupuesto**: ``steps`` pasos de ``prompts_per_step``
  enunciados con ``group_size`` respuestas cada uno (en TRL,
  ``num_generations = G`` y ``per_device_train_batch_size = enunciados × G``:
  TRL cuenta respuestas, no enunciados);
- **la misma pérdida**: Dr. GRPO sin dividir por la desviación del grupo
  (``loss_type="dr_grpo"``, ``scale_rewards="none"``), μ = 1, β = 0, Adam con
  la misma tasa y sin calendario (``lr_scheduler_type="constant"``). TRL
  divide Dr. GRPO por B · L_max y el curso por B (``helpers.puente.losses``):
  el gradiente de TRL es L_max = 26 veces menor, así que su recorte de la
  norma es ``max_grad_norm / 26`` para recortar exactamente lo mismo (Adam
  no ve la escala);
- **el mismo verificador**: el del curso (``helpers.tinylm.verify``: la cifra
  tras el último «=» y el punto final), leído de los ids (TRL quita el «.»
  del texto, ver ``TRLReward``);
- **la misma evaluación**: los pesos entrenados vuelven a ``TinyLM``
  (``to_tinylm``; con LoRA, tras fundir el adaptador) y se miden con
  ``helpers.tinylm.evaluate``: precisión en los 256 problemas de evaluación a
  T = 1 (8 respuestas por problema) y voraz;
- **un hilo** de PyTorch en los dos lados.

Diferencias que quedan: los enunciados de cada paso (cada lado baraja con su
generador; el curso no fuerza 17 × 24 en cada paso, ``include_target=False``)
y el muestreo (TRL usa ``generate()`` de transformers con ``suppress_tokens``
para el relleno; el curso, su muestreador).

La memoria (``peak_memory_mb``) es el pico de memoria residente (RSS) que
añade el entrenamiento, medido con ``MemoryMeter`` del curso: pone a cero el
pico del proceso antes de entrenar (``/proc/self/clear_refs``) y lo lee al
terminar (``VmHWM``), menos lo que ocupaba el proceso al empezar. En un mismo
proceso, la memoria que el asignador ya tenía se reutiliza: para comparar de
verdad, cada ejecución en un proceso nuevo (``run_isolated``, lo que hace el
banco).

Las métricas de TRL, con los nombres del curso (``course_metrics``):

==========================  ===================  ===============================
TRL (``log_history``)       curso                relación
==========================  ===================  ===============================
``reward``                  ``reward``           la misma (suma ponderada)
``frac_reward_zero_std``    ``mixed_groups``     ``mixed_groups = 1 − frac``
``clip_ratio/region_mean``  ``clip_fraction``    ver abajo
``kl``                      ``kl_ref``           k3 por token a la referencia
``entropy``                 ``entropy``          nats por token de la respuesta
``completions/mean_length`` ``length``           tokens de la respuesta, «.» incl.
==========================  ===================  ===============================

``clip_fraction`` del curso cuenta los tokens con el cociente fuera de
[1 − ε, 1 + ε_alto]; ``clip_ratio/region_mean`` de TRL, solo aquellos en los
que el recorte muerde (cociente bajo con ventaja negativa o alto con ventaja
positiva): es menor o igual. Con μ = 1 las dos valen 0. ``kl`` solo aparece
con β > 0 (sin modelo de referencia, TRL no la mide).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

import torch

from helpers.tinylm import MAX_NEW_TOKENS
from helpers.tinylm.task import extract_answer
from helpers.tinylm.tokenizer import tokenizer as course_tokenizer

#: Nombre de TRL -> (nombre del curso, conversión).
TRL_TO_COURSE: dict[str, tuple[str, Callable[[float], float]]] = {
    "reward": ("reward", float),
    "frac_reward_zero_std": ("mixed_groups", lambda frac: 1.0 - frac),
    "clip_ratio/region_mean": ("clip_fraction", float),
    "kl": ("kl_ref", float),
    "entropy": ("entropy", float),
    "completions/mean_length": ("length", float),
}
#: Lo que se guarda de la historia del entrenador del curso.
COURSE_KEYS = (
    "step",
    "reward",
    "mixed_groups",
    "clip_fraction",
    "kl_ref",
    "length",
    "train_seconds",
)
#: La tasa de aprendizaje del curso (Adam) y la de LoRA, que entrena muchos
#: menos parámetros y necesita pasos más largos (ver ``LORA_LR``).
COURSE_LR = 3e-4
#: Con LoRA (r = 4 en ``c_attn``: 2048 parámetros de 105 152) cada paso de
#: Adam mueve un adaptador diminuto y hace falta una tasa mayor. Elegida entre
#: 1e-3, 3e-3, 1e-2 y 3e-2 con 30 pasos de 32 × 8 y la semilla 0 (la que más
#: subió la precisión a T = 1; 3e-2 la bajó): diez veces la del curso.
LORA_LR = 3e-3
LORA_R = 4
MAX_GRAD_NORM = 1.0  # el del curso (GRPOConfig.max_grad_norm)
MEMORY_METHOD = (
    "pico de RSS que añade el entrenamiento (MemoryMeter: /proc/self/clear_refs "
    "y VmHWM), sobre la memoria del proceso al empezar"
)


def course_metrics(log_history: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    """Las métricas por paso de un ``GRPOTrainer`` con los nombres del curso.

    ``log_history`` es ``trainer.state.log_history`` (con ``logging_steps=1``,
    una entrada por paso; la última, el resumen de ``train()``, no cuenta).
    Devuelve ``step`` y cada métrica de ``TRL_TO_COURSE`` que TRL registró en
    algún paso, con ``nan`` en los que no: con μ > 1, TRL genera (y puntúa)
    solo cada μ pasos, así que ``reward`` y ``mixed_groups`` faltan en los
    demás; ``kl_ref`` solo existe con β > 0.
    """
    entries = [
        e
        for e in log_history
        if "step" in e and "train_runtime" not in e and set(e) & set(TRL_TO_COURSE)
    ]
    history: dict[str, list[float]] = {"step": [float(e["step"]) for e in entries]}
    for theirs, (ours, convert) in TRL_TO_COURSE.items():
        if any(e.get(theirs) is not None for e in entries):
            history[ours] = [
                convert(e[theirs]) if e.get(theirs) is not None else math.nan
                for e in entries
            ]
    return history


class CourseVerifierReward:
    """El verificador del curso como función de recompensa de TRL.

    1 si la cifra tras el último «=» de la respuesta, antes del «.» final, es
    la de la columna ``answer``; 0 si no (también si quedó cortada, sin
    «.»). Lee ``completion_ids`` porque el texto que pasa TRL ya no tiene el
    «.», su token de fin. Guarda en ``calls`` las recompensas de cada
    llamada, en el orden de TRL (grupos de G seguidas).
    """

    __name__ = "correctness"

    def __init__(self) -> None:
        self.calls: list[list[float]] = []

    def __call__(
        self,
        completion_ids: Sequence[Sequence[int]] | None = None,
        answer: Sequence[str | int] | None = None,
        **kwargs: object,
    ) -> list[float]:
        if completion_ids is None or answer is None:
            raise ValueError("Hacen falta completion_ids y la columna «answer».")
        texts = [
            course_tokenizer.decode(ids.tolist() if torch.is_tensor(ids) else list(ids))
            for ids in completion_ids
        ]
        rewards = [
            float(extract_answer(text) == int(gold))
            for text, gold in zip(texts, answer, strict=True)
        ]
        self.calls.append(rewards)
        return rewards


@dataclass
class RunResult:
    """Una ejecución de GRPO (del curso o de TRL) y lo que se midió.

    Attributes:
        trainer: «curso», «TRL» o «TRL + LoRA».
        seed: la semilla.
        steps, prompts_per_step, group_size: el presupuesto.
        sampled_answers: respuestas muestreadas en total (pasos × enunciados × G).
        learning_rate: la tasa de Adam; lora_r: el rango de LoRA (0: completo).
        train_seconds: segundos de reloj de la llamada que entrena
            (``train_grpo`` o ``trainer.train()``), sin evaluar.
        setup_seconds: segundos de preparar el entrenamiento (cargar el
            modelo y, en TRL, construir el ``GRPOTrainer``).
        start_heldout_accuracy, start_heldout_greedy_accuracy: las del punto
            de partida (las mismas para los dos lados).
        heldout_accuracy, heldout_greedy_accuracy: al terminar, a T = 1 y
            voraz, con ``helpers.tinylm.evaluate``.
        trainable_params, total_params: parámetros que se entrenan y totales.
        peak_memory_mb: ver ``memory_method``.
        history: las métricas por paso con los nombres del curso.
        process_peak_rss_mb: con ``run_isolated``, el pico de memoria
            residente de todo el proceso (``ru_maxrss``: Python, PyTorch,
            transformers, el modelo, entrenar y evaluar); ``None`` si no.
    """

    trainer: str
    seed: int
    steps: int
    prompts_per_step: int
    group_size: int
    sampled_answers: int
    learning_rate: float
    lora_r: int
    train_seconds: float
    setup_seconds: float
    start_heldout_accuracy: float
    start_heldout_greedy_accuracy: float
    heldout_accuracy: float
    heldout_greedy_accuracy: float
    trainable_params: int
    total_params: int
    peak_memory_mb: float
    memory_method: str = MEMORY_METHOD
    history: dict[str, list[float]] = field(default_factory=dict)
    process_peak_rss_mb: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """Una línea en español con lo principal."""
        from helpers.formatting import number, percent

        return (
            f"{self.trainer} (semilla {self.seed}): precisión "
            f"{percent(self.start_heldout_accuracy)} → {percent(self.heldout_accuracy)}"
            f" a T = 1, {percent(self.start_heldout_greedy_accuracy)} → "
            f"{percent(self.heldout_greedy_accuracy)} voraz; "
            f"{number(self.train_seconds, 1)} s; "
            f"{number(self.trainable_params, 0)} parámetros entrenables; "
            f"+{number(self.peak_memory_mb, 0)} MB"
        )


def evaluate_tinylm(model: Any, eval_samples: int = 8) -> tuple[float, float]:
    """Precisión en evaluación a T = 1 (``eval_samples`` por problema) y voraz."""
    from helpers.tinylm.evaluate import heldout_accuracy

    with torch.no_grad():
        return (
            heldout_accuracy(model, samples_per_problem=eval_samples),
            heldout_accuracy(model, temperature=0),
        )


@cache
def start_accuracy(eval_samples: int = 8) -> tuple[float, float]:
    """La precisión del punto de partida (se mide una vez por proceso)."""
    from helpers.tinylm import load_pretrained

    return evaluate_tinylm(load_pretrained(), eval_samples)


def _with_threads(n: int) -> Callable[[], None]:
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    return lambda: torch.set_num_threads(previous)


def run_course(
    seed: int = 0,
    steps: int = 30,
    prompts_per_step: int = 32,
    group_size: int = 8,
    lr: float = COURSE_LR,
    eval_samples: int = 8,
) -> RunResult:
    """GRPO con el entrenador del curso (``train_grpo``) y este presupuesto."""
    from helpers.tinylm import load_pretrained
    from helpers.tinylm.grpo import GRPOConfig, train_grpo
    from helpers.tinylm.methods import MemoryMeter

    cfg = GRPOConfig(
        seed=seed,
        steps=steps,
        prompts_per_step=prompts_per_step,
        group_size=group_size,
        lr=lr,
        std_normalize=False,
        loss_normalization="dr_grpo",
        include_target=False,
        max_grad_norm=MAX_GRAD_NORM,
        num_threads=1,
    )
    start = time.perf_counter()
    model = load_pretrained()
    setup = time.perf_counter() - start
    meter = MemoryMeter()
    meter.resume()
    start = time.perf_counter()
    history = train_grpo(model, cfg, progress=False, evaluate=False)
    seconds = time.perf_counter() - start
    peak = meter.pause()
    restore = _with_threads(1)
    try:
        accuracy, greedy = evaluate_tinylm(model, eval_samples)
        start_acc, start_greedy = start_accuracy(eval_samples)
    finally:
        restore()
    n_params = sum(p.numel() for p in model.parameters())
    return RunResult(
        trainer="curso",
        seed=seed,
        steps=len(history["step"]),
        prompts_per_step=prompts_per_step,
        group_size=group_size,
        sampled_answers=len(history["step"]) * prompts_per_step * group_size,
        learning_rate=lr,
        lora_r=0,
        train_seconds=seconds,
        setup_seconds=setup,
        start_heldout_accuracy=start_acc,
        start_heldout_greedy_accuracy=start_greedy,
        heldout_accuracy=accuracy,
        heldout_greedy_accuracy=greedy,
        trainable_params=n_params,
        total_params=n_params,
        peak_memory_mb=peak,
        history={k: list(history[k]) for k in COURSE_KEYS if k in history},
    )


def trl_recipe(
    seed: int = 0,
    steps: int = 30,
    prompts_per_step: int = 32,
    group_size: int = 8,
    lr: float | None = None,
    lora_r: int = 0,
    output_dir: str = "runs/puente_compare",
    **options: Any,
) -> Any:
    """La ``RecipeConfig`` de TRL que iguala a ``run_course`` con ese presupuesto.

    ``lr`` por defecto: ``COURSE_LR`` (ajuste completo) o ``LORA_LR``;
    ``options``: otros campos de ``RecipeConfig`` (p. ej. ``beta``).
    """
    from .recipe import COURSE, RecipeConfig

    if lr is None:
        lr = LORA_LR if lora_r else COURSE_LR
    values: dict[str, Any] = {
        "model": COURSE,
        "dataset": COURSE,
        "output_dir": output_dir,
        "seed": seed,
        "max_steps": steps,
        "num_generations": group_size,
        "per_device_train_batch_size": prompts_per_step * group_size,
        "learning_rate": lr,
        "lr_scheduler_type": "constant",
        "loss_type": "dr_grpo",
        "scale_rewards": "none",
        "beta": 0.0,
        "num_iterations": 1,
        # TRL divide Dr. GRPO por B · L_max y el curso por B: el mismo recorte
        "max_grad_norm": MAX_GRAD_NORM / MAX_NEW_TOKENS,
        "max_completion_length": MAX_NEW_TOKENS,
        "reward_weights": [1.0],
        "use_cpu": True,
        "num_threads": 1,
        "save_model": False,
        "logging_steps": 1,
        "lora_r": lora_r,
        "lora_alpha": 2 * lora_r,
    }
    values.update(options)
    return RecipeConfig(**values)


class _StepClock:
    """Un ``TrainerCallback`` que apunta los segundos acumulados de cada paso."""

    def __init__(self) -> None:
        from transformers import TrainerCallback

        clock = self

        class Callback(TrainerCallback):
            def on_train_begin(self, args, state, control, **kwargs):
                clock.start = time.perf_counter()

            def on_step_end(self, args, state, control, **kwargs):
                clock.seconds[state.global_step] = time.perf_counter() - clock.start

        self.start = time.perf_counter()
        self.seconds: dict[int, float] = {}
        self.callback = Callback()


def run_trl(
    seed: int = 0,
    steps: int = 30,
    prompts_per_step: int = 32,
    group_size: int = 8,
    lr: float | None = None,
    lora_r: int = 0,
    eval_samples: int = 8,
    reward: CourseVerifierReward | None = None,
    **options: Any,
) -> RunResult:
    """GRPO con ``GRPOTrainer`` de TRL, igualado a ``run_course``.

    ``lora_r > 0`` entrena un adaptador LoRA de ese rango en ``c_attn``
    (``lora_alpha = 2 r``) con ``lr = LORA_LR`` salvo que se diga otra.
    ``reward``: la función de recompensa (por defecto, una
    ``CourseVerifierReward`` nueva; pasa la tuya para ver lo que pagó).
    ``options``: otros campos de ``RecipeConfig`` (p. ej. ``beta=0.04``).
    """
    from transformers import PrinterCallback

    from helpers.tinylm.methods import MemoryMeter

    from .convert import to_tinylm
    from .recipe import build_trainer

    reward = reward if reward is not None else CourseVerifierReward()
    restore = _with_threads(1)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            cfg = trl_recipe(
                seed,
                steps,
                prompts_per_step,
                group_size,
                lr,
                lora_r,
                scratch,
                **options,
            )
            start = time.perf_counter()
            trainer = build_trainer(cfg, reward_funcs=[reward])
            setup = time.perf_counter() - start
            trainer.remove_callback(PrinterCallback)
            clock = _StepClock()
            trainer.add_callback(clock.callback)
            trainable = sum(
                p.numel() for p in trainer.model.parameters() if p.requires_grad
            )
            total = sum(p.numel() for p in trainer.model.parameters())
            meter = MemoryMeter()
            meter.resume()
            start = time.perf_counter()
            with _quiet():
                trainer.train()
            seconds = time.perf_counter() - start
            peak = meter.pause()
        model = trainer.model
        if lora_r:
            model = model.merge_and_unload()
        tiny = to_tinylm(model)
        accuracy, greedy = evaluate_tinylm(tiny, eval_samples)
        start_acc, start_greedy = start_accuracy(eval_samples)
    finally:
        restore()
    history = course_metrics(trainer.state.log_history)
    history["train_seconds"] = [clock.seconds[int(s)] for s in history["step"]]
    done = trainer.state.global_step
    return RunResult(
        trainer="TRL + LoRA" if lora_r else "TRL",
        seed=seed,
        steps=done,
        prompts_per_step=prompts_per_step,
        group_size=group_size,
        sampled_answers=done * prompts_per_step * group_size,
        learning_rate=cfg.learning_rate,
        lora_r=lora_r,
        train_seconds=seconds,
        setup_seconds=setup,
        start_heldout_accuracy=start_acc,
        start_heldout_greedy_accuracy=start_greedy,
        heldout_accuracy=accuracy,
        heldout_greedy_accuracy=greedy,
        trainable_params=trainable,
        total_params=total,
        peak_memory_mb=peak,
        history=history,
    )


@contextmanager
def _quiet() -> Iterator[None]:
    """Sin los avisos de transformers y TRL durante ``train()``."""
    import warnings

    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        hf_logging.set_verbosity(level)


RUNNERS: dict[str, Callable[..., RunResult]] = {"course": run_course, "trl": run_trl}

_CHILD = """
import json, resource, sys
from helpers.puente.compare import RUNNERS
kind, kwargs = sys.argv[1], json.loads(sys.argv[2])
result = RUNNERS[kind](**kwargs)
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB en Linux
result.process_peak_rss_mb = peak_kb / 1024
print(json.dumps(result.to_dict()))
"""


def run_isolated(kind: str, **kwargs: Any) -> RunResult:
    """``run_course`` (``kind="course"``) o ``run_trl`` (``"trl"``) en un
    proceso nuevo de Python, para que la memoria de una ejecución no cuente
    en otra (``peak_memory_mb``). Tarda unos segundos más: importar torch y
    transformers."""
    if kind not in RUNNERS:
        raise ValueError(f"kind debe ser uno de {sorted(RUNNERS)}; es {kind!r}.")
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, json.dumps(kwargs)],
        capture_output=True,
        text=True,
    )
    if result.returncode:
        raise RuntimeError(
            f"La ejecución {kind} {kwargs} falló:\n{result.stderr[-3000:]}"
        )
    return RunResult(**json.loads(result.stdout.strip().splitlines()[-1]))
