"""Los entornos sonda (``helpers.probes``): interfaz de gymnasium y valores."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

from helpers import dqn, probes


@pytest.mark.parametrize("probe_class", probes.PROBES, ids=lambda c: c.__name__)
def test_probes_follow_the_gymnasium_api(probe_class):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(probe_class(), skip_render_check=True)


def _discounted_return(probe, gamma: float, action: int, seed: int, cap: int = 2000):
    """Retorno descontado de un episodio repitiendo ``action`` (a mano)."""
    observation, _ = probe.reset(seed=seed)
    first = float(observation[0])
    total, discount = 0.0, 1.0
    for _ in range(cap):
        observation, reward, terminated, truncated, _ = probe.step(action)
        total += discount * reward
        discount *= gamma
        if terminated:
            return first, total
        if truncated:  # el corte no es un final: seguir con la misma sonda
            probe._t = 0
    return first, total


@pytest.mark.parametrize("probe_class", probes.PROBES, ids=lambda c: c.__name__)
def test_true_q_values_are_the_discounted_returns(probe_class):
    gamma = 0.9
    probe = probe_class()
    for seed in range(6):
        for action in range(probe.action_space.n):
            first, value = _discounted_return(probe, gamma, action, seed)
            expected = probe.true_q_values(first, gamma)[action]
            assert value == pytest.approx(expected, abs=1e-6)


def test_time_limit_probe_truncates_without_terminating():
    probe = probes.TimeLimit(horizon=3)
    probe.reset(seed=0)
    flags = [probe.step(0)[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)]


def test_observation_probes_show_both_signs():
    probe = probes.ObservationReward()
    seen = {float(probe.reset(seed=s)[0][0]) for s in range(20)}
    assert seen == {-1.0, 1.0}


def test_probe_report_compares_with_the_truth():
    probe = probes.ObservationActionReward()
    rows = probes.probe_report(probe, lambda o: probe.true_q_values(o[0], 0.9), 0.9)
    assert [r["observation"] for r in rows] == [-1.0, 1.0]
    assert all(r["error"] == 0 for r in rows)
    rows = probes.probe_report(probe, lambda o: np.zeros(2), 0.9)
    assert all(r["error"] == 1.0 for r in rows)


PROBE_CONFIG = dqn.DQNConfig(
    max_env_steps=400,
    learning_starts=100,
    epsilon_duration=200,
    target_every=5,
    gamma=0.9,
    eval_every=0,
    target_return=None,
)


@pytest.mark.parametrize("probe_class", probes.PROBES, ids=lambda c: c.__name__)
def test_reference_dqn_passes_every_probe(probe_class):
    history = dqn.train_dqn(PROBE_CONFIG, make_env=probe_class)
    q_network = history.q_network

    def q_function(observation):
        with torch.no_grad():
            return q_network(torch.as_tensor(observation)).numpy()

    for row in probes.probe_report(probe_class(), q_function, PROBE_CONFIG.gamma):
        assert row["error"] < 0.1, (probe_class.__name__, row)
