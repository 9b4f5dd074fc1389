"""Lo común a los agentes (helpers.training): episodios, evaluación, historial."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from helpers import reinforce, training


@pytest.mark.parametrize("vectorization", ["sync", "vector_entry_point"])
def test_collect_episodes_records_consistent_steps(vectorization):
    """Cada (s_t, a_t, r_t) guardado se reproduce paso a paso en un CartPole suelto."""
    torch.manual_seed(1)
    envs = training.make_envs("CartPole-v1", 4, vectorization)
    episodes = training.collect_episodes(
        envs, reinforce.CategoricalPolicy(4, 2), seed=3
    )
    assert episodes.n_episodes == 4
    assert episodes.n_steps == len(episodes.obs) == len(episodes.actions)
    assert torch.all(episodes.rewards == 1.0)
    np.testing.assert_allclose(episodes.total_rewards(), episodes.lengths)
    single = gym.make("CartPole-v1").unwrapped
    single.reset(seed=0)
    for obs, actions in zip(
        episodes.split(episodes.obs), episodes.split(episodes.actions), strict=True
    ):
        single.state = obs[0].double().numpy()
        single.steps_beyond_terminated = None
        for t in range(len(actions)):
            next_obs, _, terminated, _, _ = single.step(int(actions[t]))
            if t + 1 < len(actions):
                np.testing.assert_allclose(next_obs, obs[t + 1], rtol=1e-5, atol=1e-5)
                assert not terminated
        assert terminated or len(actions) == 500
    envs.close()


class _AlwaysLeft:
    def act(self, obs, greedy=False):
        return torch.zeros(len(obs), dtype=torch.long)


def test_evaluate_a_bad_policy():
    returns = training.evaluate(_AlwaysLeft(), n_episodes=5, seed=0)
    assert returns.shape == (5,)
    assert np.all((returns >= 8) & (returns <= 12))


def test_solved_is_the_first_evaluation_over_the_target():
    history = training.History(target_return=475.0)
    history.evaluations = [
        training.Evaluation(100, 1.0, 200.0),
        training.Evaluation(200, 2.0, 480.0),
        training.Evaluation(300, 3.0, 500.0),
    ]
    assert history.solved == history.evaluations[1]
