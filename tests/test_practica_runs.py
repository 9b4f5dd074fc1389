"""Las ejecuciones rotas del módulo 11 (``helpers.practica.runs``): lo guardado
se carga, cada rota enseña su firma en los registros y su gemela arreglada no,
y el principio se reproduce."""

import copy
import math

import numpy as np
import pytest

from helpers.practica import runs


@pytest.fixture(scope="module")
def data():
    return runs.load()


@pytest.fixture(scope="module")
def stored():
    return runs.load_runs()


def _by_failure(stored, failure):
    run_id = next(k for k, v in runs.RUN_IDS.items() if v == failure)
    run = stored[run_id]
    return run.logs, run.repaired


def _mean(values, start=0):
    return float(np.nanmean(values[start:]))


def test_the_file_has_every_run_with_trl_keys(data, stored):
    assert data["config"]["command"] == runs.COMMAND
    assert set(stored) == set(runs.RUN_IDS) == {chr(ord("A") + i) for i in range(8)}
    assert set(runs.RUN_IDS.values()) == set(runs.FAILURES)
    steps = data["config"]["steps"]
    needed = {
        "reward",
        "reward_std",
        "frac_reward_zero_std",
        "completions/mean_length",
        "completions/clipped_ratio",
        "completions/mean_terminated_length",
        "clip_ratio/region_mean",
        "entropy",
        "kl",
        "grad_norm",
        "loss",
        "learning_rate",
        "rewards/accuracy/mean",
        "rewards/correctness/mean",
        "rewards/format/mean",
    }
    for run_id, run in stored.items():
        assert run.steps == list(range(1, steps + 1))
        assert needed <= set(run.logs), run_id
        assert all(len(v) == steps for v in run.logs.values())
        healthy = runs.failure_of(run_id) == "sana"
        assert (run.repaired is None) == healthy
        if not healthy:
            assert needed <= set(run.repaired)


def test_neutral_ids_and_descriptions():
    assert runs.failure_of(runs.healthy_run_id()) == "sana"
    assert len(runs.BROKEN) >= 6
    for text in runs.FAILURES.values():
        assert text.endswith(".") and len(text) > 30
    with pytest.raises(KeyError, match="No hay ninguna ejecución"):
        runs.failure_of("Z")
    with pytest.raises(KeyError, match="No hay ningún fallo"):
        runs.specs("otro")


def test_the_healthy_run_learns_quietly(stored):
    logs = stored[runs.healthy_run_id()].logs
    # La recompensa de los 10 últimos pasos, por encima de la de los 10 primeros
    assert _mean(logs["reward"], -10) > _mean(logs["reward"][:10]) + 0.03
    assert _mean(logs["frac_reward_zero_std"]) < 0.4
    assert max(logs["completions/clipped_ratio"]) < 0.05
    assert max(logs["clip_ratio/region_mean"]) == 0  # μ = 1: el recorte no muerde
    assert max(logs["kl"]) < 0.5


def test_zero_std_has_no_signal_and_its_twin_has(stored):
    broken, fixed = _by_failure(stored, "zero_std")
    assert _mean(broken["frac_reward_zero_std"]) > 0.9
    assert _mean(broken["grad_norm"]) < 0.2 * _mean(fixed["grad_norm"])
    # (la pérdida no lo distingue: con μ = 1 vale ≈ 0 también en la sana)
    assert _mean(fixed["frac_reward_zero_std"]) < 0.4


def test_summed_kl_blows_up_and_per_token_kl_does_not(stored):
    broken, fixed = _by_failure(stored, "kl_summed")
    assert _mean(broken["kl"]) > 4 * _mean(fixed["kl"])
    assert _mean(broken["grad_norm"]) > 2 * _mean(fixed["grad_norm"])


def test_unparsable_gold_pays_more_than_the_true_accuracy(stored):
    broken, fixed = _by_failure(stored, "unparsable_gold")
    gap = np.subtract(
        broken["rewards/correctness/mean"], broken["rewards/accuracy/mean"]
    )
    assert gap.mean() > 0.1 and gap.min() > 0
    fixed_gap = np.subtract(
        fixed["rewards/correctness/mean"], fixed["rewards/accuracy/mean"]
    )
    assert fixed_gap.max() <= 1e-9  # nunca paga por una referencia ilegible


def test_lora_with_full_lr_barely_moves(stored):
    broken, fixed = _by_failure(stored, "lora_lr")
    assert max(broken["kl"]) < 0.1 * max(fixed["kl"])
    assert max(broken["learning_rate"]) < max(fixed["learning_rate"])


def test_raw_sampler_log_probs_clip_from_the_first_step(stored):
    broken, fixed = _by_failure(stored, "temperature")
    assert min(broken["clip_ratio/region_mean"]) > 1e-3
    assert max(fixed["clip_ratio/region_mean"]) < 1e-6


def test_high_lr_breaks_after_the_first_step(stored):
    broken, fixed = _by_failure(stored, "high_lr")
    assert broken["reward"][0] > 0.3  # el primer lote es del modelo de partida
    assert _mean(broken["rewards/accuracy/mean"], 3) < 0.05
    assert max(broken["kl"]) > 1 and max(broken["entropy"]) > 3 * broken["entropy"][0]
    assert _mean(fixed["rewards/accuracy/mean"], 3) > 0.4


def test_truncation_cuts_every_answer(stored):
    broken, fixed = _by_failure(stored, "truncation")
    assert _mean(broken["completions/clipped_ratio"]) > 0.95
    assert max(broken["rewards/accuracy/mean"]) == 0
    # math-verify paga alguna cortada cuya expresión final vale el producto
    # («…=200+30» para 10 × 23): la recompensa no es 0 del todo
    assert _mean(broken["reward"]) < 0.15
    assert _mean(broken["frac_reward_zero_std"]) > 0.9
    assert max(fixed["completions/clipped_ratio"]) < 0.05


def test_plots_draw_the_keys_and_the_twin(stored, tmp_path):
    import matplotlib.pyplot as plt

    run_id = next(k for k, v in runs.RUN_IDS.items() if v == "temperature")
    fig = runs.plot_run(stored[run_id], repaired=True)
    drawn = [ax for ax in fig.axes if ax.get_visible()]
    assert len(drawn) == len(runs.PLOT_KEYS)
    assert all(len(ax.lines) == 2 for ax in drawn)
    fig.savefig(tmp_path / "run.png")
    plt.close(fig)
    fig = runs.plot_runs(stored, "reward")
    assert len(fig.axes) == len(stored)
    plt.close(fig)
    with pytest.raises(ValueError, match="gemela"):
        runs.plot_run(stored[runs.healthy_run_id()], repaired=True)
    with pytest.raises(ValueError, match="Ninguna de esas claves"):
        runs.plot_run(stored[run_id], keys=["nada"])


@pytest.mark.stored_figures
def test_the_runs_reproduce_their_start(data):
    # La sana y las dos de «temperature» (la subclase de TRL), 2 pasos
    assert runs.check(2, data, failures=["sana", "temperature"]) == []


def test_check_finds_a_changed_figure(data):
    changed = copy.deepcopy(data)
    run_id = runs.healthy_run_id()
    changed["runs"][run_id]["logs"]["entropy"][0] += 0.01
    problems = runs.check(1, changed, failures=["sana"])
    assert len(problems) == 1 and "entropy[0]" in problems[0]
    assert not math.isnan(data["runs"][run_id]["logs"]["entropy"][0])
