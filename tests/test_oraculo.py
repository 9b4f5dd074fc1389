"""Pruebas de las referencias del módulo 12 (``helpers.tinylm.estimators``) y
de que las soluciones del cuaderno dicen lo mismo que ellas."""

import math

import pytest
import torch

import helpers.tinylm as tl
from helpers.checks.oraculo import tiny_model
from helpers.tinylm import estimators as est
from helpers.tinylm import oracle
from helpers.tinylm.grpo import k3_kl
from helpers.tinylm.tokenizer import tokenizer
from tests.notebooks import solution_functions


def _log_probs(seed: int, batch: int = 4, length: int = 6):
    generator = torch.Generator().manual_seed(seed)
    lp = -3 * torch.rand(batch, length, generator=generator, dtype=torch.float64)
    ref = -3 * torch.rand(batch, length, generator=generator, dtype=torch.float64)
    lengths = torch.randint(1, length + 1, (batch, 1), generator=generator)
    return lp, ref, (torch.arange(length) < lengths).double()


def test_k3_per_token_is_the_grpo_penalty_summed():
    lp, ref, mask = _log_probs(0)
    torch.testing.assert_close(
        est.kl_estimate(lp, ref, mask, "k3", True), k3_kl(lp, ref, mask).sum(-1)
    )


def test_k1_is_the_same_per_token_and_summed():
    lp, ref, mask = _log_probs(1)
    torch.testing.assert_close(
        est.kl_estimate(lp, ref, mask, "k1", True),
        est.kl_estimate(lp, ref, mask, "k1", False),
    )


def test_audit_of_exact_copies_has_no_bias_and_no_variance():
    truth = torch.tensor([3.0, 4.0], dtype=torch.float64)
    angle, norm, variance = est.audit_estimates(truth.expand(5, 2), truth)
    assert angle < 1e-6 and abs(norm - 1) < 1e-12 and variance == 0


def test_notebook_solutions_agree_with_the_references():
    namespace = solution_functions(
        "12_oraculo",
        {
            "torch": torch,
            "math": math,
            "tl": tl,
            "oracle": oracle,
            "tokenizer": tokenizer,
        },
    )
    for seed in range(3):
        lp, ref, mask = _log_probs(seed)
        for kind in ("k1", "k2", "k3"):
            for per_token in (True, False):
                torch.testing.assert_close(
                    namespace["kl_estimate"](lp, ref, mask, kind, per_token),
                    est.kl_estimate(lp, ref, mask, kind, per_token),
                )
        estimates = torch.randn(7, 3, dtype=torch.float64)
        truth = torch.randn(3, dtype=torch.float64)
        for mine, theirs in zip(
            namespace["audit_estimates"](estimates, truth),
            est.audit_estimates(estimates, truth),
            strict=True,
        ):
            assert abs(mine - theirs) < 1e-9
    model = tiny_model(7)
    completions, log_probs, mass = namespace["enumerate_completions"](
        model, (12, 34), math.log(3e-3), 3
    )
    found = oracle.enumerate_completions(
        model, (12, 34), math.log(3e-3), max_new_tokens=3
    )
    assert len(log_probs) == len(found.log_probs)
    assert abs(mass - found.covered_mass) < 1e-12


# --- La maquinaria de la auditoría, contra cuentas independientes


def test_estimator_identities():
    generator = torch.Generator().manual_seed(1)
    rewards = torch.randint(0, 2, (5, 4), generator=generator).double()
    lengths = torch.randint(3, 9, (5, 4), generator=generator).double()
    w = {e: est.estimator_weights(rewards, lengths, e) for e in est.ESTIMATORS}
    torch.testing.assert_close(w["rloo"], w["group_mean"] * 4 / 3)
    torch.testing.assert_close(w["reinforce"], rewards / 20)
    torch.testing.assert_close(w["per_sequence"], w["rloo"] / lengths)
    torch.testing.assert_close(w["per_token"] * lengths.sum(), w["rloo"] * 20)
    pair, ones = torch.tensor([[0.0, 1.0]]), torch.ones(1, 2)
    torch.testing.assert_close(  # G = 2 y recompensas 0/1: ÷σ es RLOO
        est.estimator_weights(pair, ones, "group_std"),
        est.estimator_weights(pair, ones, "rloo"),
        atol=1e-4,
        rtol=1e-4,
    )
    with pytest.raises(ValueError):
        est.estimator_weights(rewards, lengths, "otro")


def test_audit_by_hand():
    truth = torch.tensor([1.0, 0.0], dtype=torch.float64)
    estimates = torch.tensor([[2.0, 2.0], [0.0, 2.0]], dtype=torch.float64)
    angle, ratio, spread = est.audit_estimates(estimates, truth)  # media (1, 2)
    assert angle == pytest.approx(math.degrees(math.atan2(2, 1)))
    assert ratio == pytest.approx(math.sqrt(5))
    assert spread == pytest.approx(1.0)  # ‖±(1, 0)‖² de media


def test_kl_estimates_by_hand_ignore_the_padding():
    log_p = torch.tensor([[-1.0, -2.0, float("inf")]])
    log_ref = torch.tensor([[-1.5, -1.0, float("nan")]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    log_rho = torch.tensor([-0.5, 1.0])
    expected = {
        "k1": -log_rho.sum(),
        "k2": (log_rho**2 / 2).sum(),
        "k3": (log_rho.exp() - 1 - log_rho).sum(),
    }
    for kind, value in expected.items():
        got = est.kl_estimate(log_p, log_ref, mask, kind, True)
        assert got.item() == pytest.approx(float(value))
    total = log_rho.sum()
    summed = est.kl_estimate(log_p, log_ref, mask, "k3", False)
    assert summed.item() == pytest.approx(float(total.exp() - 1 - total))


@pytest.fixture(scope="module")
def model():
    return tl.load_pretrained()


def test_tempered_copy_scales_the_logits(model):
    ids = tl.encode_prompts([tl.TARGET])
    with torch.no_grad():
        torch.testing.assert_close(
            est.tempered_copy(model, 0.5)(ids), 0.5 * model(ids), atol=1e-5, rtol=1e-5
        )


def test_unbiased_kl_estimators_match_the_oracle(model):
    policy = est.tempered_copy(model, 1.5)
    exact = oracle.exact_kl(policy, model, [tl.TARGET], math.log(1e-5))
    drawn = tl.sample(
        policy,
        tl.encode_prompts([tl.TARGET] * 4000),
        generator=torch.Generator().manual_seed(5),
    )
    with torch.no_grad():
        log_p = tl.token_log_probs(policy, drawn.sequences, drawn.prompt_len)
        log_ref = tl.token_log_probs(model, drawn.sequences, drawn.prompt_len)
    for kind in ("k1", "k3"):
        values = est.kl_estimate(log_p, log_ref, drawn.mask, kind, True).double()
        error = values.std() / math.sqrt(len(values))
        assert abs(values.mean() - exact.value) < 4 * error + exact.uncovered_mass


def test_the_basis_keeps_the_gradient_and_rloo_is_unbiased(model):
    problems = [tl.TARGET, (23, 45)]
    found = [
        oracle.enumerate_completions(model, problem, math.log(1e-3))
        for problem in problems
    ]
    rewards = [
        tl.rewards_for(f.completions, [problem] * len(f.log_probs))
        for problem, f in zip(problems, found, strict=True)
    ]
    basis = est.score_basis(model, found, rewards)
    exact = oracle.exact_gradient(model, problems, enumerations=found)
    norm = oracle.flat_gradient(exact.gradients).norm().item()
    assert abs(basis.library_gradient.norm().item() - norm) < 1e-5 * norm
    estimates = est.sample_estimates(basis, group_size=4, runs=400, seed=3)
    # La media del grupo sin corregir es exactamente (G − 1)/G de RLOO
    torch.testing.assert_close(estimates["group_mean"], estimates["rloo"] * 3 / 4)
    # RLOO, insesgado: la media se aleja de ∇J_q menos de 4 errores típicos
    error = estimates["rloo"] - basis.true_gradient
    spread = (error - error.mean(0)).norm(dim=1).pow(2).mean().sqrt()
    assert error.mean(0).norm() < 4 * spread / math.sqrt(400)


def test_audit_row_z_is_zero_for_the_truth_and_large_for_a_tilt():
    truth = torch.tensor([1.0, 0.0], dtype=torch.float64)
    basis = est.ScoreBasis(*([None] * 5), truth, truth)
    noise = torch.tensor([[0.1, 0.1], [-0.1, -0.1]], dtype=torch.float64)
    _, _, _, z, z_perp = est.audit_row(truth + noise, basis)
    assert z == 0 and z_perp == 0
    tilted = truth + torch.tensor([0.0, 1.0], dtype=torch.float64) + noise
    _, norm, _, z, z_perp = est.audit_row(tilted, basis)
    assert z == z_perp > 10 and norm == pytest.approx(math.sqrt(2))


def test_the_bench_table_has_one_row_per_estimator():
    from benchmarks import oraculo as bench

    row = [[3.0, 1.0, 2.0, 1.0]]
    data = {
        "problems": [[17, 24]],
        "min_prob": 1e-4,
        "runs": 10,
        "seeds": [0],
        "groups": [2],
        "estimators": {name: {"2": row} for name in est.ESTIMATORS},
    }
    lines = bench.render_estimators(data)  # sin críticos: los datos de antes
    rows = [line for line in lines if line.startswith("| ") and "---" not in line]
    table = rows[1:]  # sin la cabecera
    assert len(table) == len(est.ESTIMATORS)
    assert all(line.count(" | ") == 1 for line in table)  # |y| no parte la fila
    data["critics"] = {
        f"{kind} {lam}": [[0.0, 1.0, 10.0, 0.1]] for kind, lam in est.CRITICS
    }
    lines = bench.render_estimators(data)
    rows = [line for line in lines if line.startswith("| ") and "---" not in line]
    critics = rows[len(est.ESTIMATORS) + 2 :]  # tras las dos cabeceras
    assert len(critics) == len(est.CRITICS) + 2  # y REINFORCE y RLOO
    assert all(line.count(" | ") == 4 for line in critics)
    assert critics[0].endswith("| 5 |")  # la varianza exacta con G = 2: 10 / 2


# --- El crítico de PPO (módulo 08) en la auditoría


@pytest.fixture(scope="module")
def tiny_world():
    """Un modelo diminuto, sus respuestas de hasta 3 tokens con p ≥ 10⁻³ a dos
    enunciados, recompensas al azar y su base."""
    model = tiny_model(3)
    problems = [(12, 34), (56, 78)]
    found = [
        oracle.enumerate_completions(model, p, math.log(1e-3), max_new_tokens=3)
        for p in problems
    ]
    generator = torch.Generator().manual_seed(0)
    rewards = [
        torch.randint(0, 2, (len(f.log_probs),), generator=generator).double()
        for f in found
    ]
    return model, found, est.score_basis(model, found, rewards)


def _prefix_function(basis, found, seed):
    """Un V(y_<t) al azar que solo depende del prefijo (y del enunciado)."""
    groups = est._prefix_groups(basis, found)[:-1]
    generator = torch.Generator().manual_seed(seed)
    return torch.stack(
        [torch.rand(int(g.max()) + 1, generator=generator)[g] for g in groups], 1
    ).double()


def test_critic_token_scores_add_up_and_match_autograd(tiny_world):
    model, found, basis = tiny_world
    mask = torch.cat([f.mask for f in found]).double()
    # Con A_t = 1, la suma de las puntuaciones por token es la de la respuesta
    torch.testing.assert_close(est.critic_vectors(basis, found, mask), basis.scores)
    # Con A = 1 solo en el token t, la puntuación de ese token, ∇log q(y_t | y_<t),
    # calculada aparte con autograd: log M(y_≤t) − log M(y_<t) en los parámetros.
    # Se compara con la base por sus productos escalares con cada ∇log q(y)
    rows = torch.cat([est._score_rows(model, f) for f in found])  # (N, D)
    means = torch.zeros(2, rows.shape[1], dtype=rows.dtype)
    means.index_add_(0, basis.prompt, basis.probs[:, None] * rows)
    centred = rows - means[basis.prompt]  # ∇log q(y), con todos los parámetros
    params = [p for p in model.parameters() if p.requires_grad]
    f = found[0]
    log_p = oracle.sequence_log_probs(model, f)
    for t in range(2):
        advantages = torch.zeros_like(mask)
        advantages[:, t] = mask[:, t]
        vectors = est.critic_vectors(basis, found, advantages)
        for i in (0, len(f.log_probs) - 1):
            if mask[i, t] == 0:
                continue
            prefix = f.completions[i]
            mass = [
                log_p.exp()[(f.completions[:, :n] == prefix[:n]).all(1)].sum().log()
                for n in (t, t + 1)
            ]
            grads = torch.autograd.grad(
                mass[1] - mass[0], params, allow_unused=True, retain_graph=True
            )
            flat = torch.cat(
                [
                    torch.zeros(p.numel()) if g is None else g.reshape(-1)
                    for p, g in zip(params, grads, strict=True)
                ]
            ).double()
            torch.testing.assert_close(vectors[i] @ basis.scores.T, centred @ flat)
            assert vectors[i].norm().item() == pytest.approx(flat.norm().item())


def test_critic_with_lambda_one_is_unbiased_for_any_prefix_value(tiny_world):
    _, found, basis = tiny_world
    zero = torch.zeros(len(basis.probs), found[0].mask.shape[1], dtype=torch.float64)
    # Con V = 0 y λ = 1 es REINFORCE: R(y) ∇log q(y)
    reinforce = est.critic_vectors(
        basis, found, est.critic_advantages(basis, found, zero, 1.0)
    )
    torch.testing.assert_close(reinforce, basis.rewards[:, None] * basis.scores)
    for seed in range(3):
        values = _prefix_function(basis, found, seed)
        vectors = est.critic_vectors(
            basis, found, est.critic_advantages(basis, found, values, 1.0)
        )
        angle, norm, _ = est.exact_audit(basis, vectors)
        assert angle < 1e-3 and abs(norm - 1) < 1e-5
        gae = est.critic_vectors(
            basis, found, est.critic_advantages(basis, found, values, 0.5)
        )
        assert est.exact_audit(basis, gae)[0] > 0.1  # λ < 1 con un V cualquiera
    # Con el V exacto, cualquier λ
    exact = est.exact_values(basis, found)
    for lam in (0.0, 0.5, 0.95):
        vectors = est.critic_vectors(
            basis, found, est.critic_advantages(basis, found, exact, lam)
        )
        angle, norm, _ = est.exact_audit(basis, vectors)
        assert angle < 1e-3 and abs(norm - 1) < 1e-5


def test_exact_critic_values_by_hand(tiny_world):
    _, found, basis = tiny_world
    values = est.exact_values(basis, found)
    for i in range(2):
        rows = basis.prompt == i
        j = basis.probs[rows] @ basis.rewards[rows]  # V(raíz) = J_q del enunciado
        torch.testing.assert_close(values[rows, 0], j.expand(int(rows.sum())))


def test_exact_critic_audit_matches_sampled_batches(tiny_world):
    _, found, basis = tiny_world
    values = _prefix_function(basis, found, 7)
    vectors = est.critic_vectors(
        basis, found, est.critic_advantages(basis, found, values, 0.8)
    )
    angle, norm, variance = est.exact_audit(basis, vectors)
    runs, G = 20000, 3
    sampled = est.sample_estimates(basis, G, runs, 1, per_answer={"c": vectors})["c"]
    mean = sampled.mean(0)
    exact_mean = torch.zeros_like(mean)
    for i in range(2):
        rows = basis.prompt == i
        exact_mean += basis.probs[rows] @ vectors[rows] / 2
    assert oracle.angle_degrees(exact_mean, basis.true_gradient) == pytest.approx(
        angle, abs=1e-9
    )
    assert float(exact_mean.norm() / basis.true_gradient.norm()) == pytest.approx(norm)
    # La media muestreada, a menos de 4 errores típicos de la exacta
    assert (mean - exact_mean).norm() < 4 * math.sqrt(variance / G / runs)
    spread = ((sampled - mean) ** 2).sum(1).mean()
    assert float(spread) == pytest.approx(variance / G, rel=0.05)


def test_train_critic_is_deterministic(tiny_world):
    model, found, basis = tiny_world
    first, second = (
        est.critic_values(est.train_critic(model, basis, found, 4, 3, 2), found)
        for _ in range(2)
    )
    torch.testing.assert_close(first, second)
    assert first.abs().sum() > 0  # la cabeza, que empieza en 0, aprendió algo
