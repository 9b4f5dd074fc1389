"""GRPO con y sin línea base, guardado para 07 (``helpers.tinylm.baseline_runs``):
la forma de lo guardado, que el paso es el de ``train_grpo`` y que el
principio se reproduce."""

import copy

import pytest
import torch

from helpers.tinylm import baseline_runs
from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.grpo import GRPOConfig, train_grpo

NO_BASELINE = "sin línea base (b = 0)"


@pytest.fixture(scope="module")
def data():
    return baseline_runs.load()


def test_the_file_has_every_run_and_seed(data):
    config = data["config"]
    assert config["command"] == baseline_runs.COMMAND
    assert config["steps"] == baseline_runs.STEPS == GRPOConfig().steps
    assert set(data["runs"]) == set(baseline_runs.RUNS)
    assert 0 < data["start"]["heldout_accuracy"] < 1
    for name, seeds in data["runs"].items():
        assert sorted(seeds) == ["0", "1", "2"]
        for run in seeds.values():
            for key in baseline_runs.STEP_KEYS:
                assert len(run[key]) == baseline_runs.STEPS, key
                assert all(0 <= x <= 1 for x in run[key]), key
            assert 0 <= run["heldout_accuracy"] <= 1 and 0 <= run["p_correct"] <= 1
            if name == NO_BASELINE:
                # b = 0 con notas 0/1: empujan justo las respuestas correctas
                assert run["taught"] == run["reward"]


def test_the_step_with_baseline_is_train_grpo_bit_for_bit():
    torch.set_num_threads(1)
    cfg = GRPOConfig(steps=2)
    history, model = baseline_runs.train(cfg, baseline=True)
    reference = load_pretrained()
    expected = train_grpo(reference, cfg, progress=False, evaluate=False)
    assert history["reward"] == expected["reward"]
    for mine, theirs in zip(model.parameters(), reference.parameters(), strict=True):
        assert torch.equal(mine, theirs)


@pytest.mark.stored_figures
def test_the_start_reproduces_and_a_changed_figure_is_found(data):
    changed = copy.deepcopy(data)
    run = changed["runs"][NO_BASELINE]["0"]
    run["reward"] = [x + 0.1 for x in run["reward"][:2]] + run["reward"][2:]
    problems = baseline_runs.check(0, changed, names=[NO_BASELINE], steps=4)
    assert [p.split(":")[0] for p in problems] == [
        f"{NO_BASELINE}, reward[0]",
        f"{NO_BASELINE}, reward[1]",
    ]
