"""helpers.rollouts: GAE contra sumas explícitas y el recolector contra gymnasium."""

import numpy as np
import pytest
import torch

from helpers.rollouts import ActorCritic, RolloutCollector, gae, make_vector_env


def brute_force_gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    """Â_t = Σ_k (γλ)^k δ_{t+k}, sumando hasta el final del episodio de t."""
    T = len(rewards)
    deltas = [
        rewards[t] + gamma * (1 - terminated[t]) * next_values[t] - values[t]
        for t in range(T)
    ]
    advantages = []
    for t in range(T):
        total, weight = 0.0, 1.0
        for k in range(t, T):
            total += weight * deltas[k]
            if terminated[k] or truncated[k]:
                break
            weight *= gamma * lam
        advantages.append(total)
    return np.array(advantages)


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.95, 1.0])
def test_gae_matches_explicit_sums_on_a_batch_with_boundaries(lam):
    rng = np.random.default_rng(0)
    T, N = 12, 3
    rewards = rng.normal(size=(T, N))
    values = rng.normal(size=(T, N))
    next_values = rng.normal(size=(T, N))
    terminated = np.zeros((T, N))
    truncated = np.zeros((T, N))
    terminated[3, 0] = terminated[8, 1] = 1
    truncated[5, 0] = truncated[10, 2] = 1
    got = gae(rewards, values, next_values, terminated, truncated, 0.9, lam)
    assert got.shape == (T, N) and got.dtype == torch.float32
    for n in range(N):
        expected = brute_force_gae(
            rewards[:, n],
            values[:, n],
            next_values[:, n],
            terminated[:, n],
            truncated[:, n],
            0.9,
            lam,
        )
        np.testing.assert_allclose(got[:, n].numpy(), expected, rtol=1e-5, atol=1e-5)


def test_gae_limits_td_error_and_monte_carlo():
    rewards = np.array([1.0, 2.0, 3.0])
    values = np.array([0.5, -1.0, 2.0])
    next_values = np.array([-1.0, 2.0, 7.0])
    terminated = np.array([0, 0, 1])
    truncated = np.zeros(3)
    td = gae(rewards, values, next_values, terminated, truncated, 0.5, 0.0)
    np.testing.assert_allclose(td, [1 + 0.5 * -1 - 0.5, 2 + 0.5 * 2 + 1, 3 - 2])
    mc = gae(rewards, values, next_values, terminated, truncated, 0.5, 1.0)
    returns = np.array([1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3, 3])
    np.testing.assert_allclose(mc, returns - values, rtol=1e-6)


def test_truncation_bootstraps_and_termination_does_not():
    kwargs = dict(rewards=[1.0], values=[0.0], next_values=[10.0], gamma=0.9, lam=0.95)
    assert gae(terminated=[1], truncated=[0], **kwargs).item() == pytest.approx(1.0)
    assert gae(terminated=[0], truncated=[1], **kwargs).item() == pytest.approx(10.0)


def test_collector_shapes_boundaries_and_next_values():
    torch.manual_seed(0)
    envs = make_vector_env("CartPole-v1", 4)
    agent = ActorCritic(4, 2, hidden=16)
    collector = RolloutCollector(envs, seed=0)
    rollout = collector.collect(agent, 64)
    envs.close()
    assert rollout.obs.shape == (64, 4, 4)
    for name in ("actions", "log_probs", "values", "rewards", "next_values"):
        assert getattr(rollout, name).shape == (64, 4), name
    assert rollout.n_steps == 256
    assert rollout.terminated.sum() > 0  # una política al azar deja caer la pértiga
    # Sin fin de episodio, V(s_{t+1}) es el valor del estado en el que se actúa
    # después; con fin, es el de la observación final, no el del reinicio.
    done = (rollout.terminated + rollout.truncated)[:-1] > 0
    with torch.no_grad():
        following = agent.value(rollout.obs[1:])
    np.testing.assert_allclose(
        rollout.next_values[:-1][~done], following[~done], rtol=1e-5, atol=1e-6
    )
    assert not torch.allclose(rollout.next_values[:-1][done], following[done])
    # Los episodios acabados de CartPole cobran 1 por paso: sus retornos son
    # enteros y suman a lo sumo los pasos del bloque.
    assert len(rollout.episode_returns) == int(rollout.terminated.sum())
    assert sum(rollout.episode_returns) <= rollout.n_steps


def test_log_probs_match_the_distribution_and_greedy_acts_argmax():
    torch.manual_seed(1)
    for shared in (False, True):
        agent = ActorCritic(4, 2, hidden=8, shared=shared)
        obs = torch.randn(5, 4)
        logits, values = agent(obs)
        assert logits.shape == (5, 2) and values.shape == (5,)
        assert torch.equal(agent.act(obs, greedy=True), logits.argmax(-1))
        torch.testing.assert_close(agent.value(obs), values)
