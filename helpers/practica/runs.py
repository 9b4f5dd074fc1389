"""Módulo 11 · Las ejecuciones rotas que el estudiante diagnostica por sus registros.

Cada ejecución es un ``trl.GRPOTrainer`` de verdad sobre el modelo diminuto del
curso (convertido a GPT-2: ``helpers.puente``), corta (``STEPS`` pasos de
``PROMPTS_PER_STEP`` enunciados × ``GROUP_SIZE`` respuestas, un hilo). Hay una
ejecución **sana** y varias **rotas**, cada una con un solo fallo real, y cada
rota con su **gemela arreglada** (la misma configuración con el único arreglo).
De cada una se guarda, paso a paso, todo lo que TRL registra en
``trainer.state.log_history``: ``reward``, ``reward_std``,
``frac_reward_zero_std``, las longitudes, ``clip_ratio/*``, ``entropy``,
``kl``, ``grad_norm``, ``loss``, ``rewards/<nombre>/mean``...

Se guardan en ``helpers/data/practica_runs.json`` con nombres neutros (``"A"``,
``"B"``...: barajados con una semilla fija), para que el cuaderno enseñe «la
ejecución C» sin decir su fallo. Se rehacen con una orden::

    python -m helpers.practica.runs --write      # rehacer el archivo (unos 5 min)
    python -m helpers.practica.runs --check 3    # recalcular 3 pasos y comparar

Lo que el cuaderno usa:

- ``FAILURES``: id del fallo → descripción en español (las opciones entre las
  que elige el estudiante, con ``"sana"``).
- ``load_runs()``: id neutro → ``Run`` (``logs``, ``steps``, ``repaired``).
- ``healthy_run_id()``: el id neutro de la ejecución sana (la sección 4 del
  cuaderno, «leer los registros»); ``diagnosis_runs()``, las demás.
- ``plot_run(run, ...)`` y ``plot_runs(runs, ...)``: las curvas que se leen.
- ``failure_of(run_id)``: el fallo de una ejecución (solo para las pruebas
  ocultas: el cuaderno no debe llamarla).

Qué significa cada clave de TRL, con los nombres del curso: ``MEANINGS``.

Todo es determinista con un hilo; ``--check`` compara con
``helpers.seeding.same_figure`` (en otra CPU el redondeo puede cambiar alguna
cifra en su último decimal).
"""

from __future__ import annotations

import math
import random
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .. import precomputed
from ..puente.compare import COURSE_LR, LORA_LR

DATA_PATH = Path(__file__).resolve().parent.parent / "data" / "practica_runs.json"
COMMAND = "python -m helpers.practica.runs --write"

#: El presupuesto de cada ejecución: pasos, enunciados por paso y G.
STEPS = 30
PROMPTS_PER_STEP = 16
GROUP_SIZE = 8
SEED = 0
#: β pequeña en todas: la penalización casi no pesa, pero TRL registra ``kl``
#: (cuánto se ha movido el modelo desde la referencia).
BETA = 0.001
#: β de la penalización KL de la ejecución «kl_summed» y de su gemela.
KL_BETA = 0.04
#: La temperatura del muestreador en «temperature».
SAMPLER_TEMPERATURE = 0.7
#: La longitud que corta las respuestas en «truncation» (la más larga mide
#: 25 tokens con el de fin: ``MAX_NEW_TOKENS = 26`` le basta).
SHORT_COMPLETION = 16
#: Fracción de filas de «unparsable_gold» con la referencia vacía.
UNPARSABLE_FRACTION = 0.25
#: La tasa demasiado alta de «high_lr» (ajuste completo).
HIGH_LR = 1e-2
#: Semilla con la que se barajan los ids neutros.
SHUFFLE_SEED = 11

#: Fallo → descripción en español: las opciones del diagnóstico.
FAILURES: dict[str, str] = {
    "sana": "Nada roto: la recompensa sube poco a poco y todo lo demás es normal.",
    "zero_std": (
        "Casi todos los grupos dan la misma recompensa a sus G respuestas: "
        "sin diferencias dentro del grupo no hay ventaja ni gradiente."
    ),
    "kl_summed": (
        "La penalización KL se calcula sobre la log-probabilidad sumada de "
        "la secuencia entera, no por token: la KL se dispara y frena el "
        "aprendizaje."
    ),
    "unparsable_gold": (
        "La recompensa paga cuando la respuesta de referencia no se puede "
        "leer: la recompensa dice más de lo que el modelo acierta."
    ),
    "lora_lr": (
        "LoRA con la tasa de aprendizaje del ajuste completo: el adaptador "
        "apenas se mueve y nada cambia."
    ),
    "temperature": (
        "El muestreador genera a temperatura T, pero sus log-probabilidades "
        "no están divididas por T: el cociente de importancia no vale 1 "
        "desde el primer paso."
    ),
    "high_lr": (
        "Tasa de aprendizaje demasiado alta: el modelo se rompe tras unos pocos pasos."
    ),
    "truncation": (
        "max_completion_length demasiado corta: todas las respuestas quedan "
        "cortadas y ninguna cobra."
    ),
}

#: Los fallos de las ejecuciones rotas (todos menos «sana»).
BROKEN: tuple[str, ...] = tuple(k for k in FAILURES if k != "sana")

#: Las claves que dibuja ``plot_run`` por defecto, en este orden.
PLOT_KEYS: tuple[str, ...] = (
    "reward",
    "rewards/accuracy/mean",
    "frac_reward_zero_std",
    "completions/mean_length",
    "completions/clipped_ratio",
    "clip_ratio/region_mean",
    "entropy",
    "kl",
    "grad_norm",
)

#: Qué significa cada clave que registra TRL, con los nombres del curso. Una
#: clave con ``<f>`` vale para cualquier función de recompensa.
MEANINGS: dict[str, str] = {
    "reward": (
        "recompensa media del lote, la suma ponderada de las funciones (``reward``)"
    ),
    "reward_std": "su desviación típica dentro de cada grupo, media sobre los grupos",
    "rewards/<f>/mean": (
        "la media de la función ``f`` sola; aquí ``rewards/accuracy/mean`` es la "
        "precisión **verdadera** (peso 0: no entrena)"
    ),
    "frac_reward_zero_std": (
        "fracción de grupos con las G recompensas iguales: sin ventaja ni "
        "gradiente (``1 − mixed_groups``)"
    ),
    "completions/mean_length": "tokens por respuesta, fin incluido (``length``)",
    "completions/clipped_ratio": (
        "fracción de respuestas cortadas por ``max_completion_length`` (sin token "
        "de fin)"
    ),
    "completions/mean_terminated_length": "longitud media de las que terminaron",
    "clip_ratio/region_mean": (
        "fracción de tokens donde el recorte de PPO muerde (``clip_fraction``); "
        "con μ = 1 y el muestreador igual al entrenador, 0"
    ),
    "clip_ratio/low_mean": (
        "fracción de tokens con ventaja negativa cuyo cociente cae por debajo de "
        "1 − ε: el recorte muerde por abajo"
    ),
    "clip_ratio/high_mean": (
        "fracción de tokens con ventaja positiva cuyo cociente pasa de 1 + ε: el "
        "recorte muerde por arriba"
    ),
    "entropy": "nats por token de la respuesta",
    "kl": "KL a la referencia (k3 por token de TRL; solo con β > 0) (``kl_ref``)",
    "grad_norm": "norma del gradiente **antes** de recortarla a ``max_grad_norm``",
    "loss": (
        "la pérdida; con μ = 1 vale ≈ 0 siempre (las ventajas de un grupo suman "
        "0): no dice si se aprende"
    ),
    "learning_rate": "la tasa de Adam de ese paso",
}

#: Título (en español) de cada clave en las figuras.
TITLES: dict[str, str] = {
    "reward": "Recompensa media (reward)",
    "reward_std": "Desviación en el grupo (reward_std)",
    "rewards/accuracy/mean": "Precisión verdadera (rewards/accuracy/mean)",
    "frac_reward_zero_std": "Grupos sin varianza (frac_reward_zero_std)",
    "completions/mean_length": "Longitud media (completions/mean_length)",
    "completions/clipped_ratio": "Respuestas cortadas (completions/clipped_ratio)",
    "completions/mean_terminated_length": (
        "Longitud de las terminadas (completions/mean_terminated_length)"
    ),
    "clip_ratio/region_mean": "Tokens recortados (clip_ratio/region_mean)",
    "clip_ratio/low_mean": "Recortados por abajo (clip_ratio/low_mean)",
    "clip_ratio/high_mean": "Recortados por arriba (clip_ratio/high_mean)",
    "entropy": "Entropía por token (entropy)",
    "kl": "KL a la referencia (kl)",
    "grad_norm": "Norma del gradiente (grad_norm)",
    "loss": "Pérdida (loss)",
}


def _neutral_ids() -> dict[str, str]:
    """Id neutro («A», «B»...) → fallo, barajado con ``SHUFFLE_SEED``."""
    failures = list(FAILURES)
    random.Random(SHUFFLE_SEED).shuffle(failures)
    return {chr(ord("A") + i): f for i, f in enumerate(failures)}


#: Id neutro → fallo (lo leen las pruebas ocultas; no va en el texto).
RUN_IDS: dict[str, str] = _neutral_ids()


def failure_of(run_id: str) -> str:
    """El fallo de la ejecución ``run_id`` (una clave de ``FAILURES``)."""
    if run_id not in RUN_IDS:
        raise KeyError(
            f"No hay ninguna ejecución «{run_id}»: son {', '.join(sorted(RUN_IDS))}."
        )
    return RUN_IDS[run_id]


def healthy_run_id() -> str:
    """El id neutro de la ejecución sana (la de la sección 4 del cuaderno)."""
    return next(k for k, v in RUN_IDS.items() if v == "sana")


def diagnosis_runs() -> list[str]:
    """Los ids de las ejecuciones que el estudiante diagnostica: todas menos la
    sana (la de la sección 4 del cuaderno), en orden."""
    return sorted(k for k in RUN_IDS if k != healthy_run_id())


@dataclass
class Run:
    """Una ejecución guardada.

    Attributes:
        run_id: su nombre neutro («A», «B»...).
        logs: clave de TRL → valor en cada paso (``nan`` donde TRL no la
            registró).
        steps: los pasos (1, 2, ...).
        repaired: los registros de la gemela arreglada, con las mismas
            claves, o ``None`` (la sana no tiene).
    """

    run_id: str
    logs: dict[str, list[float]]
    steps: list[int]
    repaired: dict[str, list[float]] | None = None
    config: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# Las recompensas
# ---------------------------------------------------------------------------


def true_accuracy(
    completion_ids: Sequence[Sequence[int]] | None = None,
    product: Sequence[int] | None = None,
    **kwargs: object,
) -> list[float]:
    """La precisión verdadera: 1 si la respuesta da el producto (columna
    ``product``, siempre limpia), con el verificador del curso. Va con peso 0:
    no entrena, solo se registra (``rewards/accuracy/mean``)."""
    from helpers.tinylm.task import extract_answer
    from helpers.tinylm.tokenizer import tokenizer

    if completion_ids is None or product is None:
        raise ValueError("Hacen falta completion_ids y la columna «product».")
    return [
        float(extract_answer(tokenizer.decode(_ids(ids))) == int(p))
        for ids, p in zip(completion_ids, product, strict=True)
    ]


true_accuracy.__name__ = "accuracy"


def lenient_correctness(
    completion_ids: Sequence[Sequence[int]] | None = None,
    answer: Sequence[str] | None = None,
    **kwargs: object,
) -> list[float]:
    """La corrección **con el fallo**: si la referencia no se puede leer, paga
    1 («nos saltamos el ejemplo»), como hacía la recompensa de precisión de
    open-r1. Si se puede, la de ``helpers.puente.rewards``."""
    from helpers.puente.rewards import check_answer
    from helpers.tinylm.tokenizer import tokenizer

    if completion_ids is None or answer is None:
        raise ValueError("Hacen falta completion_ids y la columna «answer».")
    out = []
    for ids, gold in zip(completion_ids, answer, strict=True):
        verdict = check_answer(tokenizer.decode(_ids(ids)), gold)
        out.append(verdict.correctness if verdict.gold_ok else 1.0)
    return out


lenient_correctness.__name__ = "correctness"


def _ids(ids: Sequence[int] | torch.Tensor) -> list[int]:
    return ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)


def _rewards(lenient: bool = False) -> list[Callable[..., list[float]]]:
    """Corrección, formato y la precisión verdadera (pesos ``[1, 0,1, 0]``)."""
    import warnings as _w

    from helpers.puente.rewards import TRLReward

    correctness = lenient_correctness if lenient else TRLReward("correctness")
    if not lenient:
        # La referencia vacía paga 0; el aviso de cada una no hace falta aquí
        _w.filterwarnings("ignore", message="Respuesta de referencia ilegible")
    return [correctness, TRLReward("format"), true_accuracy]


# ---------------------------------------------------------------------------
# Los entrenadores con un fallo de dentro
# ---------------------------------------------------------------------------


def _trainer_classes() -> dict[str, type]:
    """Las dos subclases de ``trl.GRPOTrainer`` con un fallo de dentro.

    - ``summed_kl``: la KL a la referencia como k3 de la log-probabilidad
      **sumada** de la secuencia, ``exp(Δ) − Δ − 1`` con
      ``Δ = Σ_t (log π_ref − log π)``, en vez de la k3 de cada token. Llama a
      ``_compute_loss`` de TRL con β = 0 (la pérdida de la política y sus
      métricas, tal cual) y suma ``β · k3(Δ)`` media por respuesta; registra
      esa KL como ``kl``.
    - ``sampler_log_probs``: las log-probabilidades «viejas» del cociente de
      importancia son las del muestreador (como con vLLM), calculadas aquí de
      los logits: divididos por la temperatura si ``sampler_divides_by_t``
      (lo correcto) o sin dividir (el fallo). TRL, en la pérdida, sí divide.
    """
    import trl

    class SummedKLTrainer(trl.GRPOTrainer):
        def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
            beta, self.beta = self.beta, 0.0
            try:
                loss = super()._compute_loss(model, inputs)
            finally:
                self.beta = beta
            completion = inputs["completion_ids"]
            ids = torch.cat([inputs["prompt_ids"], completion], dim=1)
            mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
            logps, _, _ = self._get_per_token_logps_and_entropies(
                model, ids, mask, completion.size(1)
            )
            delta = (
                (inputs["ref_per_token_logps"] - logps) * inputs["completion_mask"]
            ).sum(dim=-1)
            kl = torch.exp(delta) - delta - 1
            gathered = self.accelerator.gather(kl.detach())
            self._metrics["train"]["kl"].append(gathered.mean().item())
            return loss + beta * kl.mean()

    class SamplerLogProbsTrainer(trl.GRPOTrainer):
        sampler_divides_by_t = True

        def _generate_and_score_completions(self, inputs: Any) -> dict[str, Any]:
            out = super()._generate_and_score_completions(inputs)
            prompt, completion = out["prompt_ids"], out["completion_ids"]
            ids = torch.cat([prompt, completion], dim=1)
            mask = torch.cat([out["prompt_mask"], out["completion_mask"]], dim=1)
            with torch.no_grad():
                logits = self.model(input_ids=ids, attention_mask=mask).logits
                logits = logits[:, prompt.size(1) - 1 : -1].float()
                if self.sampler_divides_by_t:
                    logits = logits / self.temperature
                out["old_per_token_logps"] = (
                    logits.log_softmax(-1)
                    .gather(-1, completion.unsqueeze(-1))
                    .squeeze(-1)
                )
            return out

    class RawSamplerLogProbsTrainer(SamplerLogProbsTrainer):
        sampler_divides_by_t = False

    return {
        "summed_kl": SummedKLTrainer,
        "sampler_log_probs": SamplerLogProbsTrainer,
        "raw_sampler_log_probs": RawSamplerLogProbsTrainer,
    }


# ---------------------------------------------------------------------------
# Las configuraciones
# ---------------------------------------------------------------------------


def _healthy() -> dict[str, Any]:
    """La receta sana: ajuste completo, Dr. GRPO, μ = 1, β pequeña."""
    return {
        "trainer": "trl",
        "dataset": "course",
        "lenient": False,
        "options": {
            "learning_rate": COURSE_LR,
            "beta": BETA,
            "reward_weights": [1.0, 0.1, 0.0],
        },
    }


def _with(spec: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = {**spec, "options": dict(spec["options"])}
    for key, value in changes.items():
        if key in ("trainer", "dataset", "lenient"):
            out[key] = value
        else:
            out["options"][key] = value
    return out


def specs(failure: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """La configuración rota de ``failure`` y la de su gemela arreglada
    (``None`` para «sana»)."""
    healthy = _healthy()
    lora = {"lora_r": 4, "lora_alpha": 8}
    pairs: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
        "sana": (healthy, None),
        # Solo el formato, que el modelo del SFT ya cumple siempre
        "zero_std": (_with(healthy, reward_weights=[0.0, 1.0, 0.0]), healthy),
        "kl_summed": (
            _with(healthy, trainer="summed_kl", beta=KL_BETA),
            _with(healthy, beta=KL_BETA),
        ),
        "unparsable_gold": (
            _with(healthy, dataset="unparsable", lenient=True),
            _with(healthy, dataset="unparsable"),
        ),
        "lora_lr": (
            _with(healthy, learning_rate=COURSE_LR, **lora),
            _with(healthy, learning_rate=LORA_LR, **lora),
        ),
        "temperature": (
            _with(
                healthy,
                trainer="raw_sampler_log_probs",
                temperature=SAMPLER_TEMPERATURE,
            ),
            _with(
                healthy, trainer="sampler_log_probs", temperature=SAMPLER_TEMPERATURE
            ),
        ),
        "high_lr": (_with(healthy, learning_rate=HIGH_LR), healthy),
        "truncation": (
            _with(healthy, max_completion_length=SHORT_COMPLETION),
            healthy,
        ),
    }
    if failure not in pairs:
        raise KeyError(f"No hay ningún fallo «{failure}»: son {', '.join(pairs)}.")
    return pairs[failure]


def _dataset(kind: str) -> Any:
    """Los problemas de GRPO del curso, barajados con ``SEED``; con
    ``"unparsable"``, una fracción ``UNPARSABLE_FRACTION`` de filas lleva la
    referencia vacía (un dato perdido), y ``product`` guarda la verdad."""
    from datasets import Dataset

    from helpers.tinylm import prompt_text, rl_problems

    problems = list(rl_problems())
    rng = random.Random(SEED)
    rng.shuffle(problems)
    golds = [str(a * b) for a, b in problems]
    if kind == "unparsable":
        golds = [g if rng.random() >= UNPARSABLE_FRACTION else "" for g in golds]
    elif kind != "course":
        raise ValueError(f"Conjunto de datos desconocido: {kind!r}.")
    return Dataset.from_dict(
        {
            "prompt": [prompt_text(a, b) for a, b in problems],
            "answer": golds,
            "product": [a * b for a, b in problems],
        }
    )


def _float(x: Any) -> float:
    return float(x) if x is not None else math.nan


def train(spec: dict[str, Any], steps: int = STEPS) -> dict[str, list[float]]:
    """Entrena una configuración de ``specs`` y devuelve sus registros:
    clave de TRL → valor por paso (``nan`` donde no está), más ``step``."""
    import trl
    from transformers import PrinterCallback

    from helpers.puente.compare import _quiet, trl_recipe
    from helpers.puente.recipe import grpo_config, load_model_and_tokenizer, lora_config

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            cfg = trl_recipe(
                SEED,
                steps,
                PROMPTS_PER_STEP,
                GROUP_SIZE,
                output_dir=scratch,
                **spec["options"],
            )
            model, tokenizer = load_model_and_tokenizer(cfg)
            args = grpo_config(cfg, tokenizer)
            kind = spec["trainer"]
            cls = trl.GRPOTrainer if kind == "trl" else _trainer_classes()[kind]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                trainer = cls(
                    model=model,
                    reward_funcs=_rewards(spec["lenient"]),
                    args=args,
                    train_dataset=_dataset(spec["dataset"]),
                    processing_class=tokenizer,
                    peft_config=lora_config(cfg),
                )
            trainer.remove_callback(PrinterCallback)
            with _quiet():
                trainer.train()
    finally:
        torch.set_num_threads(previous)
    entries = [
        e for e in trainer.state.log_history if "step" in e and "train_runtime" not in e
    ]
    keys = sorted({k for e in entries for k in e} - {"step", "epoch", "step_time"})
    logs = {"step": [float(e["step"]) for e in entries]}
    for key in keys:
        logs[key] = [_float(e.get(key)) for e in entries]
    return logs


def _rounded(logs: dict[str, list[float]]) -> dict[str, list[float]]:
    return {k: [float(f"{v:.7g}") for v in values] for k, values in logs.items()}


def compute_all(steps: int = STEPS) -> dict[str, Any]:
    """Todas las ejecuciones (la sana, las rotas y sus gemelas), con la
    procedencia en ``config``."""
    start = time.perf_counter()
    runs: dict[str, Any] = {}
    for run_id, failure in sorted(RUN_IDS.items()):
        broken, repaired = specs(failure)
        runs[run_id] = {
            "logs": _rounded(train(broken, steps)),
            "repaired": None if repaired is None else _rounded(train(repaired, steps)),
        }
    config = {
        "command": COMMAND,
        "steps": steps,
        "prompts_per_step": PROMPTS_PER_STEP,
        "group_size": GROUP_SIZE,
        "seed": SEED,
        "total_seconds": time.perf_counter() - start,
        **precomputed.machine(),
    }
    return {"config": config, "runs": runs}


def load(path: Path | str = DATA_PATH) -> dict[str, Any]:
    """Lo guardado en ``helpers/data/practica_runs.json``, tal cual."""
    return precomputed.load(path)


def load_runs(path: Path | str = DATA_PATH) -> dict[str, Run]:
    """Las ejecuciones guardadas: id neutro → ``Run``."""
    data = load(path)
    out = {}
    for run_id, stored in data["runs"].items():
        logs = {k: v for k, v in stored["logs"].items() if k != "step"}
        repaired = stored["repaired"]
        if repaired is not None:
            repaired = {k: v for k, v in repaired.items() if k != "step"}
        out[run_id] = Run(
            run_id=run_id,
            logs=logs,
            steps=[int(s) for s in stored["logs"]["step"]],
            repaired=repaired,
            config=data["config"],
        )
    return out


#: Lo que ``check`` compara de cada paso recalculado.
CHECK_KEYS: tuple[str, ...] = (
    "reward",
    "rewards/accuracy/mean",
    "frac_reward_zero_std",
    "completions/mean_length",
    "completions/clipped_ratio",
    "entropy",
    "grad_norm",
)


def check(
    steps: int,
    data: dict[str, Any] | None = None,
    failures: Sequence[str] | None = None,
) -> list[str]:
    """Recalcula los ``steps`` primeros pasos de las ejecuciones de
    ``failures`` (todas si ``None``; las rotas y sus gemelas) y los compara
    con lo guardado (``precomputed.differences``). Una línea por diferencia."""
    data = load() if data is None else data
    wanted = list(FAILURES) if failures is None else list(failures)
    problems = []
    for run_id, failure in sorted(RUN_IDS.items()):
        if failure not in wanted:
            continue
        broken, repaired = specs(failure)
        stored = data["runs"][run_id]
        for label, spec, old in (
            (run_id, broken, stored["logs"]),
            (f"{run_id} arreglada", repaired, stored["repaired"]),
        ):
            if spec is None:
                continue
            fresh = train(spec, steps)
            keys = [k for k in CHECK_KEYS if k in fresh]
            problems += precomputed.differences(label, old, fresh, keys)
    return problems


# ---------------------------------------------------------------------------
# Las figuras
# ---------------------------------------------------------------------------


def plot_run(
    run: Run,
    keys: Sequence[str] | None = None,
    ax: Any = None,
    repaired: bool = False,
    title: str | None = None,
) -> Any:
    """Las curvas de ``run``: una gráfica por clave de ``keys`` (por defecto,
    las de ``PLOT_KEYS`` que la ejecución tiene), paso a paso.

    Con ``repaired=True`` y una gemela arreglada, las dos en los mismos ejes
    (la rota en rojo, la arreglada en verde). ``ax``: una lista de ejes (uno
    por clave) donde dibujar; si no, se crea una figura. Devuelve la figura.
    """
    import matplotlib.pyplot as plt

    from helpers.plotting import use_course_style

    use_course_style()
    if repaired and run.repaired is None:
        raise ValueError(f"La ejecución {run.run_id} no tiene gemela arreglada.")
    chosen = [k for k in (keys or PLOT_KEYS) if k in run.logs]
    if not chosen:
        raise ValueError(
            f"Ninguna de esas claves está en la ejecución {run.run_id}: "
            f"tiene {', '.join(sorted(run.logs))}."
        )
    if ax is None:
        cols = 3 if len(chosen) > 4 else len(chosen)
        rows = math.ceil(len(chosen) / cols)
        fig, axes = plt.subplots(
            rows, cols, figsize=(4.2 * cols, 2.9 * rows), squeeze=False
        )
        flat = list(axes.flat)
        for extra in flat[len(chosen) :]:
            extra.set_visible(False)
    else:
        flat = list(ax) if isinstance(ax, Sequence) else list(getattr(ax, "flat", [ax]))
        if len(flat) < len(chosen):
            raise ValueError(
                f"Hacen falta {len(chosen)} ejes (uno por clave); hay {len(flat)}."
            )
        fig = flat[0].figure
    for axis, key in zip(flat, chosen, strict=False):
        label = f"ejecución {run.run_id}" + (" (rota)" if repaired else "")
        axis.plot(
            run.steps, run.logs[key], color="C3" if repaired else "C0", label=label
        )
        if repaired and run.repaired is not None and key in run.repaired:
            axis.plot(run.steps, run.repaired[key], color="C2", label="arreglada")
        axis.set_title(TITLES.get(key, key), fontsize=10)
        axis.set_xlabel("paso")
    if repaired:
        flat[0].legend(fontsize=8)
    fig.suptitle(title or f"Ejecución {run.run_id}", fontsize=13, fontweight="bold")
    fig.tight_layout()
    return fig


def plot_runs(
    runs: dict[str, Run],
    key: str = "reward",
    ids: Sequence[str] | None = None,
) -> Any:
    """Una clave de varias ejecuciones, una gráfica por ejecución, en fila."""
    import matplotlib.pyplot as plt

    from helpers.plotting import use_course_style

    use_course_style()
    chosen = list(ids) if ids is not None else sorted(runs)
    unknown = [i for i in chosen if i not in runs]
    if unknown:
        raise KeyError(f"No hay ejecuciones {unknown}: son {', '.join(sorted(runs))}.")
    fig, axes = plt.subplots(
        1, len(chosen), figsize=(2.6 * len(chosen), 2.6), sharey=True, squeeze=False
    )
    for axis, run_id in zip(axes.flat, chosen, strict=True):
        run = runs[run_id]
        axis.plot(run.steps, run.logs.get(key, [math.nan] * len(run.steps)))
        axis.set_title(f"Ejecución {run_id}", fontsize=10)
        axis.set_xlabel("paso")
    fig.suptitle(TITLES.get(key, key), fontsize=12, fontweight="bold")
    fig.tight_layout()
    return fig


def main(argv: Sequence[str] | None = None) -> int:
    return precomputed.main(
        argv,
        prog="python -m helpers.practica.runs",
        description=(
            "Las ejecuciones rotas del módulo 11 (helpers/data/practica_runs.json)."
        ),
        path=DATA_PATH,
        compute_all=compute_all,
        check=check,
        by_seed=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
