"""La KL en la recompensa o en la pérdida, guardada para 08
(``helpers.tinylm.kl_runs``): la forma de lo guardado, las partes de la
ventaja y que el principio se reproduce."""

import copy

import pytest
import torch

from helpers.tinylm import kl_runs
from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.methods import MethodConfig


@pytest.fixture(scope="module")
def data():
    return kl_runs.load()


def test_the_file_has_the_promised_shape(data):
    config = data["config"]
    assert config["command"] == kl_runs.COMMAND
    assert config["beta"] == kl_runs.BETA > 0
    assert data["runs"] == kl_runs.RUNS
    assert config["method_config"] == kl_runs.run_config("loss", 0).flat()
    assert MethodConfig(**config["method_config"]).grpo.kl_coef == kl_runs.BETA
    steps = kl_runs.run_config("reward", 0).steps
    for by_seed in data["curves"].values():
        assert sorted(by_seed) == [str(s) for s in kl_runs.SEEDS]
        for curve in by_seed.values():
            assert curve["samples"][0] == 0 and curve["samples"][-1] == 10_240
            assert all(0 <= a <= 1 for a in curve["heldout_accuracy"])
            assert all(len(curve[key]) == steps for key in kl_runs.STEP_KEYS)
            assert all(k >= 0 for k in curve["kl_ref"])
            parts = curve["advantages"]
            assert parts["variance"] > 0 and 0 <= parts["nonzero"] <= 1
    # En la pérdida, la ventaja es solo la de la nota
    for curve in data["curves"]["loss"].values():
        parts = curve["advantages"]
        assert (
            parts["kl_variance"] == 0 and parts["variance"] == parts["score_variance"]
        )


def test_advantage_parts_without_drift():
    # Con π_θ = π_ref la parte de la KL es 0, y la de la nota es la de GRPO
    # por G / (G − 1) (RLOO)
    torch.set_num_threads(1)
    model = load_pretrained()
    in_reward = kl_runs.advantage_parts(model, model, "reward")
    in_loss = kl_runs.advantage_parts(model, model, "loss")
    assert in_reward["kl_variance"] == 0
    assert in_reward["score_variance"] == pytest.approx(
        in_loss["score_variance"] * (8 / 7) ** 2, rel=1e-5
    )
    assert in_reward["uniform_groups"] == in_loss["uniform_groups"]


@pytest.mark.stored_figures
def test_the_start_reproduces_and_a_changed_figure_is_found(data):
    changed = copy.deepcopy(data)
    changed["curves"]["reward"]["0"]["reward"][0] += 0.1
    problems = kl_runs.check(0, changed, total_samples=1_280)
    assert [p.split(":")[0] for p in problems] == ["reward, reward[0]"]
