"""Las ejecuciones precalculadas de 05 (``helpers.a2c_runs``) y de 07
(``helpers.tinylm.lag_runs``): la forma de lo guardado, que el principio se
reproduce y las piezas que miden."""

import numpy as np
import pytest
import torch

from helpers import a2c_runs, rollouts
from helpers.tinylm import lag_runs


@pytest.fixture(scope="module")
def a2c_data():
    return a2c_runs.load()


@pytest.fixture(scope="module")
def lag_data():
    return lag_runs.load()


def test_a2c_runs_file_has_every_run_and_seed(a2c_data):
    config = a2c_data["config"]
    assert config["command"] == "python -m helpers.a2c_runs --write"
    assert set(a2c_data["runs"]) == set(a2c_runs.RUNS)
    for name, seeds in a2c_data["runs"].items():
        assert sorted(seeds) == [str(s) for s in config["seeds"]] == ["0", "1", "2"]
        shared = a2c_runs.RUNS[name].get("shared", False)
        for run in seeds.values():
            n = len(run["eval_steps"])
            assert n == len(run["eval_returns"]) >= 1
            assert run["eval_steps"][-1] <= config["max_env_steps"]
            lengths = {len(run[k]) for k in ("trace_steps", *a2c_runs.TRACE_KEYS)}
            assert len(lengths) == 1
            assert (lengths.pop() > 0) == shared  # la traza, solo en el tronco
            if run["solved_steps"] is not None:
                assert run["eval_returns"][-1] >= 475


@pytest.mark.stored_figures
def test_a2c_runs_reproduce_their_start(a2c_data):
    # Una ejecución con traza y otra sin ella, sus primeros 2048 pasos
    which = [("compartido, c_V = 0,01", 1), ("separadas, c_V = 0,5", 0)]
    which.append(("compartido, c_V = 0,5, PopArt", 2))  # con PopArt
    assert a2c_runs.check(a2c_data, steps=2048, which=which) == []


def test_check_finds_a_changed_figure(a2c_data):
    import copy

    changed = copy.deepcopy(a2c_data)
    changed["runs"]["compartido, c_V = 0,5"]["0"]["actor_cosine"][0] += 0.01
    problems = a2c_runs.check(changed, steps=600, which=[("compartido, c_V = 0,5", 0)])
    assert len(problems) == 1 and "actor_cosine[0]" in problems[0]


def test_trunk_gradients_split_the_two_losses():
    torch.manual_seed(0)
    net = rollouts.ActorCritic(4, 2, shared=True)
    obs = torch.randn(32, 4)
    logits, values = net(obs)
    dist = torch.distributions.Categorical(logits=logits)
    actions = dist.sample()
    advantages, returns = torch.randn(32), 10 * torch.rand(32)
    pieces = (dist.log_prob(actions), values, advantages, returns, dist.entropy())
    out = a2c_runs.trunk_gradients(net, *pieces, 0.5, 0.01)
    # A mano: las dos pérdidas por separado, derivadas en el tronco
    params = list(net.trunk.parameters())
    actor = -(pieces[0] * advantages).mean() - 0.01 * pieces[4].mean()
    critic = 0.5 * ((values - returns) ** 2).mean()
    g_actor = torch.cat(
        [g.flatten() for g in torch.autograd.grad(actor, params, retain_graph=True)]
    )
    g_critic = torch.cat([g.flatten() for g in torch.autograd.grad(critic, params)])
    total = g_actor + g_critic
    assert out["actor_norm"] == pytest.approx(float(g_actor.norm()), rel=1e-5)
    assert out["critic_norm"] == pytest.approx(float(g_critic.norm()), rel=1e-5)
    cosine = float(total @ g_actor / (total.norm() * g_actor.norm()))
    assert out["actor_cosine"] == pytest.approx(cosine, abs=1e-5)
    # Sin crítico, el tronco va justo hacia donde pide el actor
    logits, values = net(obs)
    dist = torch.distributions.Categorical(logits=logits)
    alone = a2c_runs.trunk_gradients(
        net,
        dist.log_prob(actions),
        values,
        advantages,
        returns,
        dist.entropy(),
        0.0,
        0.01,
    )
    assert alone["critic_norm"] == 0 and alone["actor_cosine"] == pytest.approx(
        1, abs=1e-5
    )
    assert all(p.grad is None for p in net.parameters())  # no toca .grad
    with pytest.raises(ValueError, match="tronco"):
        a2c_runs.trunk_gradients(rollouts.ActorCritic(4, 2), *pieces, 0.5, 0.01)


def test_collapses_need_a_high_before_a_fall():
    steps = list(range(0, 1000, 100))
    returns = [50, 150, 410, 300, 190, 500, 480, 100, 120, 500]
    assert a2c_runs.collapses(steps, returns) == [
        (400, 410.0, 190.0),
        (700, 500.0, 100.0),
    ]
    assert a2c_runs.collapses(steps, [50, 150, 390, 100, 20, 0, 0, 0, 0, 0]) == []
    assert a2c_runs.collapses([0, 1], [400, 199.9]) == [(1, 400.0, 199.9)]


def test_lag_runs_file_has_every_run_and_seed(lag_data):
    config = lag_data["config"]
    assert config["command"] == "python -m helpers.tinylm.lag_runs --write"
    assert set(lag_data["runs"]) == set(lag_runs.RUNS)
    assert 0 < lag_data["start"]["heldout_accuracy"] < 1
    for seeds in lag_data["runs"].values():
        assert sorted(seeds) == ["0", "1", "2"]
        for run in seeds.values():
            assert len(run["reward"]) == config["steps"] == lag_runs.STEPS
            assert all(0 <= x <= 1 for x in run["reward"])
            assert 0 <= run["heldout_accuracy"] <= 1 and 0 <= run["p_correct"] <= 1


@pytest.mark.stored_figures
def test_lag_runs_reproduce_their_start(lag_data):
    name = "8 pasos de retraso, sin corregir"
    assert lag_runs.check(0, lag_data, names=[name], steps=10) == []
    changed = {"runs": {name: {"0": dict(lag_data["runs"][name]["0"])}}}
    changed["runs"][name]["0"]["reward"] = list(
        np.array(changed["runs"][name]["0"]["reward"]) + 0.1
    )
    assert len(lag_runs.check(0, changed, names=[name], steps=3)) == 3


def test_the_shared_command_writes_and_checks(tmp_path, capsys):
    from helpers import precomputed

    path = tmp_path / "runs.json"
    data = {"config": {"total_seconds": 1.5, **precomputed.machine()}, "x": "ñ"}
    calls = []

    def check(*args):
        calls.append(args)
        return ["x: 1 -> 2"] if args == (3,) else []

    options = dict(prog="p", description="d", path=path, compute_all=lambda: data)
    assert precomputed.main(["--write"], check=check, by_seed=True, **options) == 0
    assert precomputed.load(path) == data and "ñ" in path.read_text(encoding="utf-8")
    assert precomputed.main(["--check", "0"], check=check, by_seed=True, **options) == 0
    assert precomputed.main(["--check", "3"], check=check, by_seed=True, **options) == 1
    assert precomputed.main(["--check"], check=check, by_seed=False, **options) == 0
    assert calls == [(0,), (3,), ()]
    out = capsys.readouterr().out
    assert "x: 1 -> 2" in out and "1 diferencias" in out and "coincide" in out
