"""Tests de las implementaciones de referencia del módulo 06 (``helpers.ppo``)."""

import math

import numpy as np
import pytest
import torch

from helpers import ppo
from tests.notebooks import exercises, read, solution_path, student_version


def _t(values):
    return torch.tensor(values, dtype=torch.float64)


# ---------------------------------------------------------------------------
# La razón y la pérdida recortada
# ---------------------------------------------------------------------------


def test_ratio_is_the_quotient_of_probabilities_and_ignores_the_old_gradient():
    new, old = _t([0.3, 0.25, 0.4]), _t([0.2, 0.5, 0.4])
    log_new = torch.log(new).requires_grad_(True)
    log_old = torch.log(old).requires_grad_(True)
    ratio = ppo.probability_ratio(log_new, log_old)
    torch.testing.assert_close(ratio.detach(), new / old)
    ratio.sum().backward()
    assert log_old.grad is None
    torch.testing.assert_close(log_new.grad, new / old)


def _clip_by_cases(r: float, a: float, eps: float) -> tuple[float, float]:
    """``(min(r·A, clip(r)·A), d/dr)`` escrito caso por caso, sin torch."""
    if a >= 0:
        return (min(r, 1 + eps) * a, a if r < 1 + eps else 0.0)
    return (max(r, 1 - eps) * a, a if r > 1 - eps else 0.0)


def test_clipped_loss_matches_the_four_cases_value_and_gradient():
    rng = np.random.default_rng(0)
    ratios = rng.uniform(0.3, 1.8, size=200)
    advantages = rng.normal(size=200)
    eps = 0.2
    log_probs = torch.tensor(np.log(ratios), requires_grad=True)
    loss = ppo.clipped_surrogate_loss(
        log_probs, torch.zeros(200, dtype=torch.float64), _t(advantages), eps
    )
    loss.backward()
    cases = [_clip_by_cases(r, a, eps) for r, a in zip(ratios, advantages, strict=True)]
    values = np.array([c[0] for c in cases])
    d_dr = np.array([c[1] for c in cases])
    assert loss.item() == pytest.approx(-values.mean())
    # d(−mean)/d log π = −(1/B)·(dL/dr)·r
    np.testing.assert_allclose(log_probs.grad.numpy(), -d_dr * ratios / 200)


def test_clipped_loss_hand_worked_example():
    log_probs = torch.log(_t([1.5, 0.5, 1.1]))
    loss = ppo.clipped_surrogate_loss(log_probs, torch.zeros(3), _t([1.0, -1.0, 1.0]))
    assert loss.item() == pytest.approx(-(1.2 - 0.8 + 1.1) / 3)


def test_at_the_old_policy_the_clipped_gradient_is_the_policy_gradient():
    torch.manual_seed(0)
    logits = torch.randn(6, 3, requires_grad=True)
    actions = torch.randint(3, (6,))
    advantages = torch.randn(6)
    log_probs = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
    ppo.clipped_surrogate_loss(log_probs, log_probs.detach(), advantages).backward()
    clipped_grad = logits.grad.clone()
    logits.grad = None
    log_probs = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
    (-(log_probs * advantages).mean()).backward()
    torch.testing.assert_close(clipped_grad, logits.grad)


def test_clip_fraction():
    ratio = _t([0.5, 0.85, 1.0, 1.19, 1.21, 2.0])
    assert ppo.clip_fraction(ratio, 0.2).item() == pytest.approx(3 / 6)
    # El tope de arriba de DAPO: 1,21 ya no sale de [0,8; 1,28]
    assert ppo.clip_fraction(ratio, 0.2, 0.28).item() == pytest.approx(2 / 6)
    # Simétrico, es exactamente |r − 1| > ε, también justo en la frontera
    many = torch.exp(torch.randn(10_000, generator=torch.Generator().manual_seed(0)))
    many = torch.cat([many, torch.tensor([0.8, 1.2]), 1 + torch.tensor([-0.2, 0.2])])
    assert torch.equal(
        ppo.clip_fraction(many, 0.2), ((many - 1).abs() > 0.2).float().mean()
    )


# ---------------------------------------------------------------------------
# Los estimadores de la KL
# ---------------------------------------------------------------------------


def test_kl_estimators_are_unbiased_and_k3_is_never_negative():
    g = torch.Generator().manual_seed(0)
    log_q = torch.log_softmax(torch.randn(50, generator=g, dtype=torch.float64), 0)
    log_p = torch.log_softmax(
        log_q + 0.5 * torch.randn(50, generator=g, dtype=torch.float64), 0
    )
    exact = float((log_q.exp() * (log_q - log_p)).sum())
    samples = torch.multinomial(log_q.exp(), 400_000, replacement=True, generator=g)
    k1, k3 = ppo.kl_estimators(log_q[samples], log_p[samples])
    assert float(k1) == pytest.approx(exact, rel=0.05)
    assert float(k3) == pytest.approx(exact, rel=0.05)
    log_rho = log_p[samples] - log_q[samples]
    assert (torch.exp(log_rho) - 1 - log_rho).min() >= 0
    zero = ppo.kl_estimators(log_q, log_q)
    assert float(zero[0]) == 0 and float(zero[1]) == 0


# ---------------------------------------------------------------------------
# Minilotes y pérdida total
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("batch", "size", "epochs"), [(10, 4, 3), (256, 256, 20)])
def test_minibatches_cover_every_sample_once_per_epoch(batch, size, epochs):
    batches = ppo.minibatch_indices(batch, size, epochs, torch.Generator())
    per_epoch = math.ceil(batch / size)
    assert len(batches) == epochs * per_epoch
    orders = []
    for e in range(epochs):
        order = torch.cat(batches[e * per_epoch : (e + 1) * per_epoch]).tolist()
        assert sorted(order) == list(range(batch))
        orders.append(order)
    assert len({tuple(o) for o in orders}) > 1
    again = ppo.minibatch_indices(batch, size, epochs, torch.Generator())
    assert all(torch.equal(a, b) for a, b in zip(batches, again, strict=True))


def test_ppo_loss_hand_worked_example():
    loss = ppo.ppo_loss(
        torch.zeros(3),
        torch.zeros(3),
        torch.tensor([1.0, -1.0, 0.5]),
        torch.tensor([1.0, 2.0, 3.0]),
        torch.ones(3),
        torch.full((3,), math.log(2)),
        0.2,
        0.5,
        0.01,
    )
    assert loss.item() == pytest.approx(-0.5 / 3 + 0.5 * 5 / 3 - 0.01 * math.log(2))


# ---------------------------------------------------------------------------
# La fase de actualización
# ---------------------------------------------------------------------------


def test_tiny_problem_is_fixed_by_its_seed_and_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    agent_a, batch_a = ppo.tiny_ppo_problem(3)
    agent_b, batch_b = ppo.tiny_ppo_problem(3)
    assert torch.equal(torch.random.get_rng_state(), state)
    for name, value in agent_a.state_dict().items():
        assert torch.equal(value, agent_b.state_dict()[name])
    for field in ("obs", "actions", "log_probs", "advantages", "returns"):
        assert torch.equal(getattr(batch_a, field), getattr(batch_b, field))
    assert len(batch_a) == 40 and batch_a.actions.dtype == torch.int64
    # Los log π viejos son los de la propia red: al empezar, el cociente es 1.
    assert ppo.batch_kl(agent_a, batch_a) == pytest.approx(0.0, abs=1e-7)


def test_minibatch_loss_is_ppo_loss_with_normalized_minibatch_advantages():
    agent, batch = ppo.tiny_ppo_problem(1)
    indices = torch.tensor([3, 9, 27, 14, 0])
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    want = ppo.ppo_loss(
        dist.log_prob(batch.actions[indices]),
        batch.log_probs[indices],
        adv,
        values,
        batch.returns[indices],
        dist.entropy(),
        0.1,
        0.7,
        0.03,
    )
    got = ppo.ppo_minibatch_loss(agent, batch, indices, 0.1, 0.7, 0.03)
    torch.testing.assert_close(got, want)
    got.backward()
    assert all(
        p.grad is not None and p.grad.abs().sum() > 0 for p in agent.parameters()
    )


def test_ppo_update_takes_one_step_per_minibatch_and_leaves_the_batch_alone():
    agent, batch = ppo.tiny_ppo_problem(0)
    before = {k: v.clone() for k, v in vars(batch).items()}
    optimizer = torch.optim.Adam(agent.parameters(), lr=0.01)
    steps = []
    optimizer.register_step_post_hook(lambda *_: steps.append(1))
    epochs = ppo.ppo_update(
        agent,
        optimizer,
        batch,
        torch.Generator().manual_seed(0),
        n_epochs=3,
        minibatch_size=16,
        max_grad_norm=100.0,
    )
    assert epochs == 3 and len(steps) == 3 * math.ceil(40 / 16)
    assert all(torch.equal(before[k], v) for k, v in vars(batch).items())
    assert ppo.batch_kl(agent, batch) > 0


def test_ppo_update_draws_one_permutation_per_epoch_from_its_generator():
    generator = torch.Generator().manual_seed(7)
    agent, batch = ppo.tiny_ppo_problem(0)
    optimizer = torch.optim.SGD(agent.parameters(), lr=0.0)
    ppo.ppo_update(agent, optimizer, batch, generator, n_epochs=4, minibatch_size=16)
    twin = torch.Generator().manual_seed(7)
    for _ in range(4):
        torch.randperm(40, generator=twin)
    assert torch.equal(generator.get_state(), twin.get_state())


def test_ppo_update_stops_after_the_epoch_whose_kl_passes_the_target():
    settings = dict(n_epochs=6, minibatch_size=16, max_grad_norm=100.0)
    full_agent, batch = ppo.tiny_ppo_problem(0)
    full = torch.optim.Adam(full_agent.parameters(), lr=0.01, eps=1e-5)
    generator = torch.Generator().manual_seed(0)
    kls = []
    for _ in range(6):
        ppo.ppo_update(
            full_agent,
            full,
            batch,
            generator,
            n_epochs=1,
            **{k: v for k, v in settings.items() if k != "n_epochs"},
        )
        kls.append(ppo.batch_kl(full_agent, batch))
    target = (kls[1] + kls[2]) / 2  # entre la época 2 y la 3
    assert kls[1] < target < kls[2]
    agent, batch = ppo.tiny_ppo_problem(0)
    optimizer = torch.optim.Adam(agent.parameters(), lr=0.01, eps=1e-5)
    epochs = ppo.ppo_update(
        agent,
        optimizer,
        batch,
        torch.Generator().manual_seed(0),
        target_kl=target,
        **settings,
    )
    assert epochs == 3
    assert ppo.batch_kl(agent, batch) == pytest.approx(kls[2])
    assert (
        ppo.ppo_update(
            agent, optimizer, batch, torch.Generator(), target_kl=0.0, **settings
        )
        == 1
    )


# ---------------------------------------------------------------------------
# train_ppo
# ---------------------------------------------------------------------------


def _tiny(**kwargs) -> ppo.PPOConfig:
    settings = dict(
        max_env_steps=512,
        eval_every=256,
        eval_episodes=2,
        target_return=None,
        n_epochs=4,
        minibatch_size=64,
    )
    settings.update(kwargs)
    return ppo.PPOConfig(**settings)


def test_train_ppo_records_its_monitoring():
    history = ppo.train_ppo(_tiny(), progress=False)
    assert history.env_steps == [256, 512]
    assert len(history.evaluations) == 2
    for series in (
        history.approx_kl_k1,
        history.approx_kl_k3,
        history.clip_fractions,
        history.learning_rates,
        history.value_losses,
    ):
        assert len(series) == 2 and all(np.isfinite(series))
    assert history.epochs_done == [4, 4]
    assert history.learning_rates[1] < history.learning_rates[0]
    assert history.solved is None
    assert isinstance(history.policy, torch.nn.Module)


def test_train_ppo_is_reproducible_and_accepts_student_functions():
    calls = []

    def loss_fn(*args):
        calls.append(1)
        return ppo.ppo_loss(*args)

    a = ppo.train_ppo(_tiny(seed=3), progress=False)
    b = ppo.train_ppo(_tiny(seed=3), loss_fn=loss_fn, progress=False)
    assert a.approx_kl_k3 == b.approx_kl_k3
    assert len(calls) == 2 * 4 * 4


def test_target_kl_stops_the_epochs_early():
    history = ppo.train_ppo(_tiny(target_kl=0.0), progress=False)
    assert history.epochs_done == [1, 1]


def test_train_ppo_updates_with_ppo_update_and_its_early_stop(monkeypatch):
    """La etapa 3 de train_ppo es ppo_update: una sola regla de parada."""
    calls = []
    original = ppo.ppo_update

    def spy(agent, optimizer, batch, generator, **settings):
        epochs = original(agent, optimizer, batch, generator, **settings)
        calls.append((len(batch), settings, epochs))
        return epochs

    monkeypatch.setattr(ppo, "ppo_update", spy)
    config = _tiny(target_kl=0.004, n_epochs=8)
    history = ppo.train_ppo(config, progress=False)
    assert [epochs for *_, epochs in calls] == history.epochs_done
    for size, settings, _ in calls:
        assert size == config.n_envs * config.n_steps
        assert settings["n_epochs"] == 8 and settings["target_kl"] == 0.004
        assert settings["minibatch_size"] == config.minibatch_size
    # ε decae con los pasos de entorno, como la tasa
    assert calls[1][1]["clip_eps"] < calls[0][1]["clip_eps"] == config.clip_eps


# ---------------------------------------------------------------------------
# El cuaderno (el cuestionario tiene sus pruebas en test_ppo_quiz.py)
# ---------------------------------------------------------------------------


def _namespace() -> dict:
    namespace: dict = {"np": np, "torch": torch, "math": math, "ppo": ppo}
    for exercise in exercises(read(solution_path("06_ppo"))):
        exec(student_version(exercise.solution), namespace)
    return namespace


def _run_update(function, seed: int, **settings) -> tuple[dict, int]:
    agent, batch = ppo.tiny_ppo_problem(seed)
    optimizer = torch.optim.Adam(agent.parameters(), lr=0.01, eps=1e-5)
    epochs = function(
        agent, optimizer, batch, torch.Generator().manual_seed(seed), **settings
    )
    return agent.state_dict(), epochs


def test_notebook_solutions_agree_with_the_references():
    ns = _namespace()
    rng = np.random.default_rng(5)
    for _ in range(30):
        shape = tuple(rng.integers(1, 5, size=int(rng.integers(1, 3))))
        lp, old, adv = (_t(rng.normal(scale=0.7, size=shape)) for _ in range(3))
        eps = float(rng.choice([0.1, 0.2, 0.3]))
        torch.testing.assert_close(
            ns["clipped_surrogate_loss"](lp, old, adv, eps),
            ppo.clipped_surrogate_loss(lp, old, adv, eps),
        )
        for mine, ref in zip(
            ns["kl_estimators"](lp, old), ppo.kl_estimators(lp, old), strict=True
        ):
            torch.testing.assert_close(mine, ref)
    for seed in range(4):
        agent, batch = ppo.tiny_ppo_problem(seed)
        indices = torch.randperm(40, generator=torch.Generator().manual_seed(seed))
        for mb in indices.split(12):
            torch.testing.assert_close(
                ns["ppo_minibatch_loss"](agent, batch, mb, 0.2, 0.5, 0.05),
                ppo.ppo_minibatch_loss(agent, batch, mb, 0.2, 0.5, 0.05),
            )
        for target_kl in (None, 0.004, 1.0):
            settings = dict(
                n_epochs=5,
                minibatch_size=16,
                clip_eps=0.2,
                vf_coef=0.5,
                ent_coef=0.01,
                max_grad_norm=0.5,
                target_kl=target_kl,
            )
            mine, mine_epochs = _run_update(ns["ppo_update"], seed, **settings)
            ref, ref_epochs = _run_update(ppo.ppo_update, seed, **settings)
            assert mine_epochs == ref_epochs
            for name in ref:
                torch.testing.assert_close(mine[name], ref[name], atol=1e-5, rtol=1e-4)


def test_clipped_surrogate_is_the_pessimistic_bound_for_both_signs():
    ratio = torch.tensor([0.5, 0.9, 1.1, 1.5, 0.5, 1.5])
    advantages = torch.tensor([1.0, 1.0, 1.0, 1.0, -1.0, -1.0])
    got = ppo.clipped_surrogate(ratio, advantages, 0.2)
    # A > 0: el cociente cuenta hasta 1 + ε; A < 0: hasta 1 − ε por abajo
    assert got.tolist() == pytest.approx([0.5, 0.9, 1.1, 1.2, -0.8, -1.5])
    higher = ppo.clipped_surrogate(ratio, advantages, 0.2, clip_eps_high=0.28)
    assert higher[3].item() == pytest.approx(1.28)
    assert higher[4].item() == pytest.approx(-0.8)  # el de abajo no cambia


# --- Las ejecuciones guardadas de PPO sin parar (helpers.ppo_runs, módulo 06)


@pytest.fixture(scope="module")
def ppo_runs_data():
    from helpers import ppo_runs

    return ppo_runs.load()


def test_ppo_runs_file_has_every_run_and_seed(ppo_runs_data):
    from helpers import a2c_runs, ppo_runs

    config = ppo_runs_data["config"]
    assert config["command"] == "python -m helpers.ppo_runs --write"
    assert set(ppo_runs_data["runs"]) == set(ppo_runs.RUNS)
    # Las mismas semillas y el mismo tope que el A2C sin parar del módulo 05
    assert config["seeds"] == list(a2c_runs.SEEDS)
    assert config["max_env_steps"] == a2c_runs.MAX_ENV_STEPS
    for seeds in ppo_runs_data["runs"].values():
        assert sorted(seeds) == [str(s) for s in config["seeds"]]
        for run in seeds.values():
            assert len(run["eval_steps"]) == len(run["eval_returns"]) >= 1
            lengths = {len(run[k]) for k in ppo_runs.SERIES}
            assert len(lengths) == 1
            # Sin parar: llega al tope, aunque ya haya pasado de 475
            assert run["steps"][-1] >= config["max_env_steps"]
            assert max(run["eval_returns"]) >= 475


def test_ppo_runs_configs_change_only_what_they_say():
    from helpers import ppo_runs

    base = ppo.PPOConfig(seed=1, max_env_steps=ppo_runs.MAX_ENV_STEPS)
    for name, changes in ppo_runs.RUNS.items():
        config = ppo_runs.run_config(name, 1)
        assert config.target_return is None
        for field in ("learning_rate", "clip_eps", "n_epochs", "n_steps", "n_envs"):
            assert getattr(config, field) == getattr(base, field), (name, field)
        assert (config.anneal_lr, config.anneal_clip) == (
            changes.get("anneal_lr", True),
            changes.get("anneal_clip", True),
        )


@pytest.mark.stored_figures
def test_ppo_runs_reproduce_their_start(ppo_runs_data):
    from helpers import ppo_runs

    # Las dos primeras actualizaciones: más allá, otros núcleos de float32
    # (ATEN_CPU_CAPABILITY=default) ya cambian alguna acción muestreada.
    which = [("PPO sin decaimiento, sin parar", 1)]
    assert ppo_runs.check(ppo_runs_data, steps=ppo_runs.CHECK_STEPS, which=which) == []
