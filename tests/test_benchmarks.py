"""El banco de pruebas: la regla de «llega», la tabla y los datos de los cuadernos."""

from __future__ import annotations

import pytest

from benchmarks import report
from benchmarks.cartpole import BUDGET, ZOO, Run, render_table, summary
from helpers import bench_data
from tests.notebooks import REPO


def _agent(name, runs, sb3_of=None):
    return {
        "name": name,
        "sb3_of": sb3_of,
        # Cada ejecución acaba en su última evaluación (al llegar o en el tope).
        "runs": [
            Run(evals, 5000, seconds=evals[-1][1] if evals else 0.0).to_dict(seed)
            for seed, evals in enumerate(runs)
        ],
    }


def test_rule_first_solved_and_ratios():
    run = Run([(1000, 1.0, 100.0), (2100, 2.0, 480.0), (3000, 3.0, 500.0)], 5000)
    assert run.solved == (2100, 2.0)
    assert Run([(1000, 1.0, 474.9)], 5000).solved is None
    assert Run.from_dict(run.to_dict(0)) == run
    agents = [
        _agent("PPO", [[(10, 1.0, 500.0)], [(30, 3.0, 500.0)]]),
        _agent("PPO · SB3", [[(40, 4.0, 500.0)], [(40, 2.0, 100.0)]], "PPO"),
    ]
    lines = render_table(agents, 2)
    # La salida de ``python -m benchmarks cartpole``: tras el par de SB3, las
    # razones con sus intervalos y las promesas cumplidas.
    expected = (
        "curso/SB3: pasos 0,01 (0,00–0,75) · segundos 0,67 (0,25–1,50) "
        "· ✓ pasos · ✓ segundos · ✓ caja 0,00 (0,00–∞)"
    )
    assert summary(agents)[-1].split() == expected.split()
    # Medianas y cuartiles con todas las semillas: la que no llega, al tope
    # (5000 pasos) y con los segundos de su última evaluación.
    # Cada razón, con su intervalo del 90 % por remuestreo entre paréntesis.
    # La última columna: las promesas de PPO frente a SB3 (BUDGET), cumplidas.
    assert (
        "| PPO | 2/2 | 20 [15–25] | 10–30 | 2,0 [1,5–2,5] "
        "| 0,01 (0,00–0,75) | 0,67 (0,25–1,50) "
        "| ✓ pasos · ✓ segundos · ✓ caja 0,00 (0,00–∞) |"
    ) in lines
    assert (
        "| PPO · SB3 | 1/2 | 2520 [1280–3760] | 40–5000 | 3,0 [2,5–3,5] |  |  |  |"
    ) in lines


def test_budget_marks_say_which_promise_each_agent_breaks():
    # Cada agente con par en SB3 declara sus promesas.
    assert set(BUDGET) == set(ZOO)
    # A2C promete pasos y caja, no segundos. Aquí empata en la mediana de pasos
    # (✓: no más), es más lento en segundos (no cuenta) y su caja es más ancha.
    a2c = [[(steps, 9.0, 500.0)] for steps in (10, 20, 30, 40, 90)]
    sb3 = [[(steps, 1.0, 500.0)] for steps in (20, 25, 30, 35, 40)]
    agents = [_agent("A2C", a2c), _agent("A2C · SB3", sb3, "A2C")]
    boxes = [bench_data.cartpole_result(a, 475.0).steps_box for a in agents]
    assert boxes == [40 - 20, 35 - 25]  # Q3 − Q1
    row = next(line for line in render_table(agents, 5) if line.startswith("| A2C |"))
    # La caja, con su razón y su intervalo: con cinco semillas, una caja
    # remuestreada de SB3 puede medir 0, y el intervalo no tiene techo.
    assert row.endswith("| ✓ pasos · ✗ caja 2,00 (0,00–∞) |"), row
    # DQN sí promete segundos: los mismos datos lo marcan.
    agents = [_agent("DQN", a2c), _agent("DQN · SB3", sb3, "DQN")]
    row = next(line for line in render_table(agents, 5) if line.startswith("| DQN |"))
    assert row.endswith("| ✓ pasos · ✗ segundos · ✗ caja 2,00 (0,00–∞) |"), row


def test_a_confirmation_that_fails_keeps_training():
    # La primera media ≥ 475 no se confirma en los 100 episodios nuevos: no
    # cuenta; la segunda sí.
    evals = [(1000, 1.0, 480.0, 430.0), (2000, 2.0, 490.0, 481.0)]
    assert Run(evals, 5000).solved == (2000, 2.0)
    assert Run(evals[:1], 5000).solved is None
    assert Run.from_dict(Run(evals, 5000).to_dict(3)) == Run(evals, 5000)
    result = bench_data.cartpole_result(_agent("DQN", [evals, evals[:1]]), 475.0)
    assert result.steps == [2000] and result.all_steps == [2000, 5000]
    assert result.all_seconds == [2.0, 1.0]


def test_runs_that_never_arrive_count_their_whole_time():
    # Sin evaluaciones (el modo --quick, con un tope menor que el intervalo): los
    # segundos son los de la ejecución entera, y una razón sin divisor es «—».
    never = Run([], 1024, seconds=3.5).to_dict(0)
    silent = Run([], 1024).to_dict(0)
    agents = [
        {"name": "PPO", "sb3_of": None, "runs": [never]},
        {"name": "PPO · SB3", "sb3_of": "PPO", "runs": [silent]},
    ]
    assert bench_data.cartpole_result(agents[0], 475.0).all_seconds == [3.5]
    assert (
        "| PPO | 0/1 | 1024 [1024–1024] | 1024–1024 | 3,5 [3,5–3,5] "
        "| 1,00 (1,00–1,00) | — | ✓ pasos · ✗ segundos · ✓ caja — |"
        in (render_table(agents, 1))
    )


def test_median_ratio_interval_says_when_seeds_cannot_separate_two_agents():
    import math

    same = [4096.0, 6144.0, 8192.0, 10_240.0, 14_336.0, 30_720.0] * 3
    low, high = bench_data.median_ratio_interval(same, same)
    assert low < 1 < high  # los mismos datos: empate
    # Siempre el mismo intervalo para los mismos datos (generador con semilla).
    assert bench_data.median_ratio_interval(same, same) == (low, high)
    faster = [x / 3 for x in same]
    low, high = bench_data.median_ratio_interval(faster, same)
    assert low <= 1 / 3 <= high < 1  # un tercio de los pasos: gana de verdad
    wide = bench_data.median_ratio_interval(same, same, level=0.99)
    assert wide[0] <= bench_data.median_ratio_interval(same, same)[0]
    assert all(map(math.isnan, bench_data.median_ratio_interval(same, [0.0, 1.0])))


def test_course_trainers_confirm_before_stopping():
    from helpers.training import Evaluation, History

    history = History(target_return=475.0)
    history.evaluations = [
        Evaluation(10, 1.0, 500.0, 470.0),
        Evaluation(20, 2.0, 480.0, 476.0),
    ]
    assert history.solved.env_steps == 20
    assert Evaluation(30, 3.0, 475.0).reaches(475.0)  # sin confirmación, basta la media


def test_seeds_and_overrides_from_the_command_line():
    from benchmarks.__main__ import parse_overrides, parse_seeds

    assert parse_seeds("0-9") == list(range(10))
    assert parse_seeds("3,5,1000-1002") == [3, 5, 1000, 1001, 1002]
    assert parse_overrides(
        ["PPO.n_epochs=10", "DQN.hidden=128", "A2C.shared=True"]
    ) == {
        "PPO": {"n_epochs": 10},
        "DQN": {"hidden": 128},
        "A2C": {"shared": True},
    }


def test_seed_lists_read_as_ranges_only_when_contiguous():
    from benchmarks.__main__ import parse_seeds

    assert bench_data.seed_list(list(range(20))) == "0–19"
    assert bench_data.seed_list(parse_seeds("1000-1039")) == "1000–1039"
    assert bench_data.seed_list([3, 5, 7]) == "3, 5, 7"
    assert bench_data.seed_list([0, 1, 3]) == "0, 1, 3"
    assert bench_data.seed_list([4]) == "4"


def test_benchmarks_md_is_rendered_from_the_data():
    """BENCHMARKS.md y helpers/data/benchmarks.json son la misma ejecución."""
    committed = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert report.render(bench_data.load()) == committed, (
        "BENCHMARKS.md no sale de helpers/data/benchmarks.json: vuelve a "
        "ejecutar `make bench` y confirma los dos"
    )
    assert not bench_data.load()["quick"], "los datos de los cuadernos no son --quick"


def test_cartpole_results_for_the_notebooks():
    data = bench_data.load()["cartpole"]
    for agent in data["agents"]:
        result = bench_data.cartpole(agent["name"])
        assert result.seeds == data["seeds"]
        assert len(result.steps) == len(result.seconds) == result.n_solved
        # Cada semilla que llega, en una de sus evaluaciones (las demás, al tope)
        for steps, seconds, evals, reached in zip(
            result.all_steps,
            result.all_seconds,
            result.evaluations,
            result.reached,
            strict=True,
        ):
            assert ((steps, seconds) in [(e[0], e[1]) for e in evals]) == reached
        # Las que no llegan cuentan con el tope; el puesto de cada semilla, de 1 a n
        assert len(result.all_steps) == len(result.seeds) == len(result.reached)
        assert all(
            steps == data["max_steps"]
            for steps, reached in zip(result.all_steps, result.reached, strict=True)
            if not reached
        )
        ranks = [result.rank(seed) for seed in result.seeds]
        assert min(ranks) == 1 and max(ranks) <= len(result.seeds)
        assert result.describe().startswith(f"llegan {result.n_solved} de ")
    assert "confirmada en 100 episodios nuevos" in bench_data.cartpole_rule()


def test_seed_spread_plot_marks_the_runs_that_never_arrive():
    import matplotlib

    matplotlib.use("Agg")
    from helpers.plotting import plot_seed_spread

    agent = _agent("PPO", [[(10, 1.0, 500.0)], [(30, 3.0, 100.0)]])
    result = bench_data.cartpole_result(agent, 475.0)
    ax = plot_seed_spread([result])
    filled, hollow = ax.collections[0], ax.collections[1]
    assert filled.get_offsets()[:, 0].tolist() == [10]
    assert hollow.get_offsets()[:, 0].tolist() == [5000]  # en el tope
    assert ax.get_title().startswith("Pasos hasta llegar")


# ---------------------------------------------------------------------------
# El momento de la evaluación: en los dos lados, tras la actualización
# ---------------------------------------------------------------------------

# Un presupuesto diminuto: dos marcas (1024 y 2048 pasos), unos segundos de CPU
# por agente.
TINY_INTERVAL, TINY_MAX_STEPS = 1024, 2048


def _course_due(name):
    """``(bloque, actualizaciones(pasos))`` del agente del curso ``name``.

    El bloque son los pasos de entorno entre dos actualizaciones; la función,
    cuántas tocan con los datos de ``pasos`` pasos. ``None`` si los bloques
    no tienen tamaño fijo (REINFORCE: lotes de episodios enteros).
    """
    from helpers.actor_critic import A2CConfig
    from helpers.dqn import DQNConfig
    from helpers.ppo import PPOConfig

    if name == "DQN":  # un paso de gradiente cada train_every desde learning_starts
        c = DQNConfig()
        first = c.learning_starts
        return c.train_every, lambda steps: max(
            0, steps // c.train_every - (first - 1) // c.train_every
        )
    if name in ("A2C", "PPO"):
        c = A2CConfig() if name == "A2C" else PPOConfig()
        block = c.n_envs * c.n_steps
        return block, lambda steps: steps // block
    return None


def _sb3_due(model):
    """``(bloque, actualizaciones(pasos))`` de un modelo de SB3: sus ``train()``."""
    from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

    if isinstance(model, OffPolicyAlgorithm):  # train() tras cada train_freq pasos,
        block = model.train_freq.frequency * model.n_envs  # si ya pasó learning_starts
        return block, lambda steps: sum(
            k * block > model.learning_starts for k in range(1, steps // block + 1)
        )
    block = model.n_steps * model.n_envs
    return block, lambda steps: steps // block


def _check_moment(run, block, due, side):
    """Cada evaluación, en la primera actualización tras su marca, con todas
    las actualizaciones que tocan (ningún dato espera a la siguiente)."""
    assert len(run.updates) == len(run.evaluations), side
    for number, (evaluation, updates) in enumerate(
        zip(run.evaluations, run.updates, strict=True), start=1
    ):
        steps, mark = evaluation[0], number * TINY_INTERVAL
        assert updates == due(steps), (
            f"{side}, {steps} pasos: {updates} actualizaciones; tocan {due(steps)}"
        )
        assert steps % block == 0, f"{side}: evalúa a medio bloque, en {steps}"
        assert mark <= steps < mark + block, f"{side}: evalúa en {steps}"
    # Una evaluación por marca, también la del tope (como en el curso).
    assert len(run.evaluations) == TINY_MAX_STEPS // TINY_INTERVAL, side


def _last_mark(steps):
    return steps // TINY_INTERVAL * TINY_INTERVAL


@pytest.mark.slow
@pytest.mark.parametrize("name", ["DQN", "REINFORCE + línea base", "A2C", "PPO"])
def test_both_sides_evaluate_after_the_update_that_used_the_mark(name, monkeypatch):
    """A cada marca, el curso y SB3 evalúan con todas sus actualizaciones hechas.

    Antes, SB3 evaluaba en ``_on_step``, mientras recogía el rollout y antes de
    su ``train()``: una actualización menos que el curso en cada marca (en PPO,
    3 frente a 4 a los 1024 pasos y 7 frente a 8 a los 2048). Las cuentas de
    los dos lados solo coinciden donde el calendario es el mismo (PPO); en A2C
    y DQN cada lado tiene el suyo, y lo que se pide es que ninguno evalúe con
    datos que aún esperan su actualización.
    """
    from benchmarks import cartpole

    assert set(cartpole.COURSE) >= set(ZOO)
    histories = []
    original = cartpole._from_history

    def keep(history, max_steps):
        histories.append(history)
        return original(history, max_steps)

    monkeypatch.setattr(cartpole, "_from_history", keep)
    course = cartpole.course_run(name, 0, TINY_INTERVAL, TINY_MAX_STEPS)
    assert course.evaluations and len(course.updates) == len(course.evaluations)
    if name != "DQN":  # el DQN del curso no guarda un historial por actualización
        # Justo tras una actualización (la que usó los pasos hasta la
        # evaluación), la primera desde la marca.
        steps_after = histories[0].env_steps
        for evaluation in histories[0].evaluations:
            done = evaluation.updates
            assert done >= 1 and evaluation.env_steps == steps_after[done - 1], name
            mark = _last_mark(evaluation.env_steps)
            assert mark > 0 and (done == 1 or steps_after[done - 2] < mark), name
    if name not in ZOO:  # REINFORCE: lotes de episodios enteros y sin par en SB3
        return
    _check_moment(course, *_course_due(name), f"{name} del curso")

    pytest.importorskip("stable_baselines3")
    sb3 = cartpole.sb3_run(name, 0, TINY_INTERVAL, TINY_MAX_STEPS)
    model = cartpole.sb3_model(name, 0)
    model.get_env().close()
    _check_moment(sb3, *_sb3_due(model), f"{name} de SB3")
    if name == "PPO":  # el mismo calendario en los dos lados: las mismas cuentas
        assert [e[0] for e in course.evaluations] == [e[0] for e in sb3.evaluations]
        assert course.updates == sb3.updates


def test_grading_table_has_a_row_per_module_and_says_what_is_projected():
    data = {
        "jobs": 2,
        "modules": [
            {"module": "01_x", "students": 100, "seconds": 150.0, "n_problems": 0},
            {"module": "02_y", "students": 20, "seconds": 40.0, "n_problems": 1},
        ],
    }
    lines = report.render_grading(data)
    assert "| 01_x | 100 | 150 s | 1,5 s | 150 s (medido) | ✓ |" in lines
    # 20 entregas en 40 s: 2 s cada una, 200 s para 100, fuera del presupuesto
    assert (
        "| 02_y | 20 (1 con incidencias) | 40 s | 2,0 s | 200 s (proyectado) | ✗ |"
        in (lines)
    )
    # Los datos de antes (un solo módulo) se siguen escribiendo como entonces.
    old = {"module": "01_x", "students": 100, "jobs": 2, "seconds": 153.0}
    assert (
        "153 s (presupuesto ≤ 180 s ✓)"
        in report.render_grading({**old, "n_problems": 0})[0]
    )


# ---------------------------------------------------------------------------
# El GRPO del curso frente a GRPOTrainer de TRL (benchmarks.puente)
# ---------------------------------------------------------------------------


def _puente_run(trainer, seed, accuracy, seconds, trainable=103_104, memory=30.0):
    return {
        "trainer": trainer,
        "seed": seed,
        "learning_rate": 3e-4,
        "start_heldout_accuracy": 0.5,
        "start_heldout_greedy_accuracy": 0.77,
        "heldout_accuracy": accuracy,
        "heldout_greedy_accuracy": accuracy + 0.1,
        "train_seconds": seconds,
        "trainable_params": trainable,
        "total_params": 103_104 if trainable == 103_104 else 105_152,
        "peak_memory_mb": memory,
        "process_peak_rss_mb": 400.0 + memory,
    }


def _puente_data(course, trl):
    from benchmarks import puente

    runs = [_puente_run("curso", s, a, t) for s, (a, t) in enumerate(course)]
    runs += [_puente_run("TRL", s, a, t) for s, (a, t) in enumerate(trl)]
    runs += [_puente_run("TRL + LoRA", s, 0.6, 30.0, 2048, 20.0) for s in range(2)]
    return {
        "budget": puente.BUDGET,
        "seeds": [0, 1],
        "lora_r": 4,
        "lora_lr": 3e-3,
        "memory_method": "pico de RSS",
        "runs": runs,
    }


def test_puente_goal_is_judged_on_the_means_without_margin():
    from benchmarks import puente

    def table(data):
        return [
            line.replace("\u00a0", " ").replace("\u202f", " ")
            for line in puente.render(data)
        ]

    # El curso llega (media 68,75 % frente a 68,75 %) y tarda menos: ✓ ✓
    course, trl = [(0.625, 10.0), (0.75, 12.0)], [(0.6875, 20.0), (0.6875, 21.0)]
    data = _puente_data(course, trl)
    assert puente.goal(data)["reaches"] and puente.goal(data)["faster"]
    lines = table(data)
    assert any("68,8 % TRL ✓" in line and "20,5 s TRL ✓" in line for line in lines)
    assert (
        "| curso | 0 | 50,0 % → 62,5 % (+12,5) | 77,0 % → 72,5 % (−4,5) | 10,0 s |"
        in lines
    ), lines
    assert "| **curso, media** | | 68,8 % | 78,8 % | 11,0 s |" in lines
    assert (
        "| LoRA | 2048 de 105 152 | 60,0 % | 70,0 % | 30,0 s | 420 MB (20 MB) |"
        in lines
    )
    # Un poco menos de precisión ya es ✗, y empatar en segundos también
    course = [(0.625, 20.0), (0.75 - 1e-9, 21.0)]
    data = _puente_data(course, trl)
    verdict = puente.goal(data)
    assert not verdict["reaches"] and not verdict["faster"]
    assert any(
        "68,8 % TRL ✗" in line and "20,5 s TRL ✗" in line for line in table(data)
    )


@pytest.mark.slow
def test_puente_bench_runs_in_quick_mode():
    """``--quick``: las tres ejecuciones de una semilla, cada una en un proceso
    nuevo, con el registro que lee la tabla."""
    import helpers.puente  # noqa: F401  (fija HF_HUB_OFFLINE antes que trl)

    pytest.importorskip("trl")
    from benchmarks import puente

    data = puente.measure(quick=True, say=lambda _: None)
    assert [r["trainer"] for r in data["runs"]] == ["curso", "TRL", "TRL + LoRA"]
    budget = puente.QUICK_BUDGET
    answers = budget["steps"] * budget["prompts_per_step"] * budget["group_size"]
    for run in data["runs"]:
        assert run["sampled_answers"] == answers and run["seed"] == 0
        assert 0 <= run["heldout_accuracy"] <= 1 and run["train_seconds"] > 0
    assert data["runs"][2]["trainable_params"] == 2048
    # Cada una en su proceso: el pico de todo el proceso, mayor que lo que
    # añade el entrenamiento (torch y transformers ya ocupan cientos de MB)
    for run in data["runs"]:
        assert run["process_peak_rss_mb"] > max(100.0, run["peak_memory_mb"])
    lines = puente.render(data)
    assert sum(line.startswith("| curso | 0 |") for line in lines) == 1
    # La sección aparece en el informe cuando hay datos, y no si no
    full = {**bench_data.load(), "puente": data}
    assert "## El GRPO del curso y GRPOTrainer de TRL" in report.render(full)
    assert "GRPOTrainer de TRL" not in report.render(
        {k: v for k, v in full.items() if k != "puente"}
    )


# ---------------------------------------------------------------------------
# Módulo 10: preferencias (benchmarks.preferencias)
# ---------------------------------------------------------------------------


def _peak(step, true_peak, true_final, proxy_peak, proxy_final, kl=0.02):
    return {
        "step": step,
        "true_peak": true_peak,
        "kl_at_peak": kl,
        "proxy_at_peak": proxy_peak,
        "true_final": true_final,
        "proxy_final": proxy_final,
        "kl_final": 2 * kl,
        "steps": 200,
        "utility": true_final,
        "seconds": 40.0,
    }


def _preference_seed(seed, rising):
    """Una semilla del resumen: con β = 0 la aprendida sigue subiendo (o no)."""
    proxy_final = 1.5 if rising else 0.9  # en el máximo de la verdadera, 1,0
    return {
        "seed": seed,
        "reward_model": {
            "train_accuracy": 0.85,
            "test_accuracy": 0.80 + 0.01 * seed,
            "heldout_accuracy": 0.55,
            "seconds": 20.0,
        },
        "grpo": {
            "β = 0": _peak(50 + seed, 1.2, 1.0, 1.0, proxy_final),
            "β = 0,2": _peak(200, 1.1, 1.1, 0.5, 0.5),
            "verdad": _peak(180, 1.4, 1.38, 1.4, 1.38),
        },
        "dpo": {
            "dpo": {
                "epochs": 4,
                "utility_final": 1.0,
                "utility_best": 1.05,
                "best_epoch": 3,
                "kl_final": 0.05,
                "test_accuracy": 0.7,
                "seconds": 30.0 + seed,
            },
            "ipo": {
                "epochs": 4,
                "utility_final": 0.98,
                "utility_best": 0.98,
                "best_epoch": 4,
                "kl_final": 0.01,
                "test_accuracy": 0.69,
                "seconds": 31.0,
            },
        },
    }


def _preference_data(rising):
    return {
        "steps": 200,
        "betas": [0.0, 0.2],
        "seeds": [0, 1, 2],
        "pairs": {"train": 4096, "test": 512},
        "annotator_temperature": 0.25,
        "smoothing": 10,
        "dpo_runs": {
            "dpo": {"beta": 0.1, "loss_type": "sigmoid", "epochs": 4},
            "ipo": {"beta": 1.0, "loss_type": "ipo", "epochs": 4},
        },
        "data": {
            "ceiling": 0.85,
            "truth_agreement": 0.93,
            "sft_log_prob_accuracy": 0.78,
            "sft_utility": 0.94,
        },
        "runs": [_preference_seed(s, r) for s, r in enumerate(rising)],
        "total_seconds": 900.0,
        "jobs": 2,
    }


def _plain(lines):
    return [line.replace("\u00a0", " ").replace("\u202f", " ") for line in lines]


def test_preferencias_render_reward_model_overoptimisation_and_dpo():
    from benchmarks import preferencias

    lines = _plain(preferencias.render(_preference_data([True, True, False])))
    assert (
        "Semillas 0, 1, 2, cada una en su proceso, 2 a la vez, con un hilo."
        in (lines[0])
    )
    # El modelo de recompensa frente al techo: media (mínima–máxima)
    assert (
        "| modelo de recompensa, pares de prueba (los mismos enunciados) "
        "| 81,0 % (80,0 %–82,0 %) | 85,0 % |"
    ) in lines
    assert "| el SFT por log-probabilidad, pares de prueba | 78,0 % | 85,0 % |" in lines
    # Sobreoptimización: la aprendida sigue subiendo en dos semillas de tres
    # (en la tercera acaba por debajo de su valor en el máximo: ✗)
    assert (
        "| β = 0 | 51 (50–52) | 0,020 (0,020–0,020) | 1,200 (1,200–1,200) → "
        "1,000 (1,000–1,000) | 1,000 (1,000–1,000) → 1,300 (0,900–1,500) "
        "| ✓ ✓ ✗ (2 de 3) |"
    ) in lines
    # Si el máximo de la verdadera es el final, la aprendida no siguió subiendo
    row = next(line for line in lines if line.startswith("| β = 0,2 |"))
    assert row.endswith("| ✗ ✗ ✗ (0 de 3) |"), row
    row = next(line for line in lines if line.startswith("| contra la utilidad"))
    assert row.endswith("| — (es la verdadera) | — |"), row
    # DPO e IPO frente a GRPO; GRPO contra el modelo de recompensa suma sus
    # segundos (40 + 20), contra la verdadera no
    assert (
        "| DPO | 1,000 (1,000–1,000) | 1,050 (1,050–1,050), época 3, 3, 3 "
        "| 0,050 (0,050–0,050) | 31 s (30 s–32 s) |"
    ) in lines
    assert any(
        line.startswith("| modelo de recompensa + GRPO, β = 0 |")
        and line.endswith("| 60 s (60 s–60 s) |")
        for line in lines
    ), lines
    assert any(
        line.startswith("| GRPO contra la utilidad verdadera |")
        and line.endswith("| 40 s (40 s–40 s) |")
        for line in lines
    ), lines
    # Ni un solo ✓ si ninguna semilla siguió subiendo
    lines = _plain(preferencias.render(_preference_data([False, False, False])))
    row = next(line for line in lines if line.startswith("| β = 0 |"))
    assert row.endswith("| ✗ ✗ ✗ (0 de 3) |"), row


def test_preferencias_summary_keeps_peaks_and_best_epochs_without_curves():
    from benchmarks import preferencias
    from helpers.tinylm.preference_runs import peak

    run = {
        "proxy": [0.1 * i for i in range(30)],
        "true": [min(i, 30 - i) / 10 for i in range(30)],
        "kl": [0.01 * i for i in range(30)],
        "seconds": 12.0,
        "utility": 1.1,
    }
    raw = {
        "config": {
            "steps": 30,
            "betas": [0.0],
            "seeds": [4],
            "pairs": {"train": 8, "test": 4},
            "annotator_temperature": 0.25,
            "dpo_runs": {"dpo": {"beta": 0.1, "loss_type": "sigmoid", "epochs": 2}},
            "total_seconds": 1.0,
        },
        "data": {"ceiling": 0.8},
        "seeds": {
            "4": {
                "reward_model": {"seconds": 3.0},
                "grpo": {"β = 0": run},
                "dpo": {
                    "dpo": {
                        "utility": [0.9, 1.2, 1.0],
                        "kl": [0.0, 0.1, 0.2],
                        "test_accuracy": [0.6, 0.7],
                        "seconds": 5.0,
                    }
                },
            }
        },
    }
    data = preferencias.summarize(raw)
    (seed,) = data["runs"]
    assert seed["seed"] == 4
    grpo = seed["grpo"]["β = 0"]
    assert grpo == {**peak(run), "steps": 30, "utility": 1.1, "seconds": 12.0}
    assert preferencias.kept_rising(grpo)  # la aprendida sube hasta el final
    assert seed["dpo"]["dpo"] == {
        "epochs": 2,
        "utility_final": 1.0,
        "utility_best": 1.2,
        "best_epoch": 1,
        "kl_final": 0.2,
        "test_accuracy": 0.7,
        "seconds": 5.0,
    }
    assert preferencias.rm_grpo_seconds(seed, "β = 0") == 15.0
    # Sin curvas por paso en lo que va al JSON
    assert not any(isinstance(v, list) for v in grpo.values())


@pytest.mark.slow
def test_preferencias_bench_runs_in_quick_mode():
    """``--quick``: una semilla en miniatura por el mismo ``run_seed`` (con
    tamaños pequeños como argumentos), con todo lo que lee la tabla, sin tocar
    los tamaños de verdad ni los hilos."""
    import torch

    from benchmarks import preferencias
    from helpers.tinylm import preference_runs, preferences

    threads = torch.get_num_threads()
    data = preferencias.measure(quick=True, say=lambda _: None)
    assert torch.get_num_threads() == threads
    assert preferences.TRAIN_PAIRS == 4096 and preferences.TEST_PAIRS == 512
    quick_epochs = preferencias.QUICK_SIZES["dpo_epochs"]
    assert preference_runs.DPO_RUNS["dpo"].epochs > quick_epochs
    (seed,) = data["runs"]
    assert data["pairs"] == {"train": 256, "test": 128}
    assert 0.5 <= data["data"]["ceiling"] <= 1
    assert 0 <= seed["reward_model"]["test_accuracy"] <= 1
    names = [preference_runs.grpo_name(b) for b in preference_runs.BETAS]
    assert list(seed["grpo"]) == [*names, "verdad"]
    for figures in seed["grpo"].values():
        assert figures["steps"] == preferencias.QUICK_STEPS
        assert 1 <= figures["step"] <= preferencias.QUICK_STEPS
    for figures in seed["dpo"].values():
        assert figures["epochs"] == quick_epochs
        assert figures["seconds"] > 0
    lines = preferencias.render(data)
    assert sum(line.startswith("| DPO |") for line in lines) == 1
    assert sum(line.startswith("| β = 0 |") for line in lines) == 1
    # La sección aparece en el informe cuando hay datos, y no si no
    full = {**bench_data.load(), "preferencias": data}
    assert "## Preferencias (10)" in report.render(full)
    assert "## Preferencias (10)" not in report.render(
        {k: v for k, v in full.items() if k != "preferencias"}
    )


def test_sections_of_the_command_line_are_those_of_the_report():
    from benchmarks import __main__ as command

    assert command.SECTIONS == report.SECTIONS


def test_each_section_keeps_its_minutes_and_the_total_is_judged_only_when_complete(
    monkeypatch,
):
    calls = []

    def fake_section(section, quick, seeds, module_ids=None):
        calls.append((section, module_ids))
        return {section: {"measured": True}}

    monkeypatch.setattr(report, "_measure_section", fake_section)
    measured = report.measure_sections(["grading", "puente"], quick=True)
    assert calls == [("grading", None), ("puente", None)]
    assert set(measured["section_minutes"]) == {"grading", "puente"}
    # Medida solo para algunos módulos: sin minutos propios (no son los de la parte)
    calls.clear()
    partial = report.measure_sections(
        ["grading", "puente"], quick=True, module_ids=["09_puente"]
    )
    assert calls == [("grading", ["09_puente"]), ("puente", None)]
    assert set(partial["section_minutes"]) == {"puente"}
    assert all(m >= 0 for m in measured["section_minutes"].values())

    data = {"machine": {"date": "2026-12-02 04:43 UTC"}, "minutes": 34.0}
    data["section_minutes"] = {s: 10.0 for s in report.SECTIONS}
    lines = report.render_minutes(data)
    assert "| calificación | `--only grading` | 10,0 |" in lines
    total = 10.0 * len(report.SECTIONS)
    assert lines[-1].startswith(
        f"Tiempo total del banco: {total:.1f}".replace(".", ",")
    )
    assert lines[-1].endswith(("✓).", "✗).")) and (total <= report.BENCH_MINUTES) == (
        "✓" in lines[-1]
    )
    # Una parte sin tiempo propio: no se juzga el total, se dice cuáles faltan
    del data["section_minutes"]["cartpole"]
    last = report.render_minutes(data)[-1]
    assert "CartPole" in last and "✓" not in last and "✗" not in last
    # Los datos de antes: 08, 09 y 10 llevan sus propios minutos
    legacy = {"methods": {"minutes": 2.0}, "puente": {"minutes": 7.0}}
    assert report.section_minutes(legacy) == {
        **{s: None for s in report.SECTIONS},
        "methods": 2.0,
        "puente": 7.0,
    }


def test_rows_of_some_modules_replace_theirs_in_course_order():
    first, second, *_ = report.modules()
    old = [{"module": first, "seconds": 1.0}, {"module": "00_viejo", "seconds": 9.0}]
    new = [{"module": second, "seconds": 2.0}, {"module": first, "seconds": 3.0}]
    merged = report.merge_module_rows(old, new)
    assert merged == [
        {"module": first, "seconds": 3.0},
        {"module": second, "seconds": 2.0},
        {"module": "00_viejo", "seconds": 9.0},
    ]
    with pytest.raises(SystemExit, match="--module solo vale"):
        report.measure_only(["puente"], module_ids=[first])
    with pytest.raises(SystemExit, match="no son módulos"):
        report.measure_only(["grading"], module_ids=["99_nada"])
