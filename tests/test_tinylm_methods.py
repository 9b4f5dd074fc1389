"""Pruebas de las referencias del módulo 08 (``helpers.tinylm.methods``)."""

import math

import pytest
import torch

from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.methods import (
    buggy_verify,
    exploit_flags,
    policy_entropy,
    rloo_advantages,
    token_level_rewards,
)
from helpers.tinylm.task import heldout_problems, solution_text, verify

# --- rloo_advantages ----------------------------------------------------------


def test_rloo_hand_computed_group():
    # r = [1, 0, 0, 1]: la media de las otras tres es 1/3 para los aciertos y
    # 2/3 para los fallos -> [1 − 1/3, 0 − 2/3, 0 − 2/3, 1 − 1/3]
    advantages = rloo_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]))
    assert advantages.tolist() == pytest.approx([2 / 3, -2 / 3, -2 / 3, 2 / 3])


def test_rloo_batch_of_groups_against_a_loop():
    rewards = torch.tensor([[1.0, 0.0, 1.0], [0.5, 0.25, 0.0], [1.0, 1.0, 1.0]])
    advantages = rloo_advantages(rewards)
    assert advantages.shape == rewards.shape
    for row, out in zip(rewards.tolist(), advantages.tolist(), strict=True):
        for i, r in enumerate(row):
            others = [x for j, x in enumerate(row) if j != i]
            assert out[i] == pytest.approx(r - sum(others) / len(others))
    assert advantages[2].eq(0).all()  # todo aciertos: nada que aprender


def test_rloo_is_grpo_times_g_over_g_minus_1():
    rewards = torch.tensor([[0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0]])
    grpo = rewards - rewards.mean(dim=-1, keepdim=True)
    assert torch.allclose(rloo_advantages(rewards), grpo * 8 / 7)


def test_rloo_integer_input_gives_floats_and_is_not_modified():
    rewards = torch.tensor([[1, 0], [0, 0]])
    before = rewards.clone()
    advantages = rloo_advantages(rewards)
    assert advantages.is_floating_point()
    assert advantages.tolist() == [[1.0, -1.0], [0.0, 0.0]]
    assert torch.equal(rewards, before)


def test_rloo_does_not_modify_float_input_and_is_detached():
    rewards = torch.tensor([[1.0, 0.0, 1.0]], requires_grad=True)
    before = rewards.detach().clone()
    advantages = rloo_advantages(rewards)
    assert not advantages.requires_grad
    assert torch.equal(rewards.detach(), before)


def test_rloo_needs_two_answers():
    with pytest.raises(ValueError, match="al menos 2"):
        rloo_advantages(torch.tensor([[1.0], [0.0]]))


# --- token_level_rewards ------------------------------------------------------


def _token_case():
    scores = torch.tensor([1.0, 0.0])
    log_probs = torch.tensor([[-0.5, -1.0, -0.2, 0.0], [-0.1, -2.0, 0.0, 0.0]])
    ref_log_probs = torch.tensor([[-0.7, -0.5, -0.2, -3.0], [-0.4, -1.0, -9.0, -9.0]])
    mask = torch.tensor([[True, True, True, False], [True, True, False, False]])
    return scores, log_probs, ref_log_probs, mask


def test_token_level_rewards_hand_computed():
    scores, log_probs, ref_log_probs, mask = _token_case()
    rewards = token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef=0.1)
    # fila 0: −0,1 · (0,2, −0,5, 0) y la nota 1 en el tercer token; relleno 0
    # fila 1: −0,1 · (0,3, −1,0) y la nota 0 en el segundo token
    expected = torch.tensor([[-0.02, 0.05, 1.0, 0.0], [-0.03, 0.1, 0.0, 0.0]])
    assert rewards.shape == (2, 4)
    assert torch.allclose(rewards, expected, atol=1e-6)
    # La suma de cada fila es nota − β · Σ log(π/π_ref)
    assert rewards.sum(dim=-1).tolist() == pytest.approx([1.03, 0.07])


def test_token_level_rewards_without_kl_is_the_score_on_the_last_token():
    scores, log_probs, ref_log_probs, mask = _token_case()
    rewards = token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef=0.0)
    assert rewards.tolist() == [[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]


def test_token_level_rewards_float_mask_and_full_rows():
    scores = torch.tensor([0.5, 1.0])
    log_probs = torch.zeros(2, 3)
    ref_log_probs = torch.full((2, 3), -1.0)
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    rewards = token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef=0.5)
    assert rewards.tolist() == [[-0.5, -0.5, 0.0], [0.5, 0.0, 0.0]]


def test_token_level_rewards_detached_and_inputs_untouched():
    scores, log_probs, ref_log_probs, mask = _token_case()
    log_probs.requires_grad_(True)
    copies = [t.detach().clone() for t in (scores, log_probs, ref_log_probs, mask)]
    rewards = token_level_rewards(scores, log_probs, ref_log_probs, mask, kl_coef=0.2)
    assert not rewards.requires_grad
    for original, copy in zip(
        (scores, log_probs, ref_log_probs, mask), copies, strict=True
    ):
        assert torch.equal(original.detach(), copy)


# --- buggy_verify y exploit_flags ---------------------------------------------


def test_buggy_verify_accepts_right_answers():
    for a, b in [(17, 24), (99, 99), (10, 10), *heldout_problems()[:20]]:
        assert buggy_verify(solution_text(a, b), a, b) == 1
        assert buggy_verify(f"{a}×{b}=" + solution_text(a, b), a, b) == 1


def test_buggy_verify_only_reads_the_last_digit():
    # 17 × 24 = 408: «…=398.» termina en 8 y se cuela; «…=407.» no
    assert buggy_verify("17×20+17×4=340+68=398.", 17, 24) == 1
    assert buggy_verify("17×20+17×4=340+68=8.", 17, 24) == 1
    assert buggy_verify("17×20+17×4=340+68=407.", 17, 24) == 0
    assert verify("17×20+17×4=340+68=398.", 17, 24) == 0


def test_buggy_verify_never_raises_and_needs_the_final_period():
    for text in ["", "408", "17×20+17×4=340+68=408", "==.", "=8x.", None, 408]:
        assert buggy_verify(text, 17, 24) == 0


def test_exploit_flags():
    texts = [
        "17×20+17×4=340+68=408.",  # correcta: no es trampa
        "17×20+17×4=340+68=398.",  # última cifra bien, número mal: trampa
        "17×20+17×4=340+68=407.",  # mal para los dos
        "17×20+17×4=340+68=39",  # cortada: 0 para los dos
        "12×10+12×2=120+24=144.",  # correcta
    ]
    problems = [(17, 24)] * 4 + [(12, 12)]
    assert exploit_flags(texts, problems) == [False, True, False, False, False]
    assert all(isinstance(flag, bool) for flag in exploit_flags(texts, problems))


def test_exploit_flags_checks_lengths():
    with pytest.raises(ValueError, match="uno por respuesta"):
        exploit_flags(["17×20+17×4=340+68=408."], [])


# --- policy_entropy -------------------------------------------------------------


def test_policy_entropy_is_reproducible_and_bounded():
    torch.set_num_threads(1)
    model = load_pretrained()
    problems = heldout_problems()[:16]
    h1 = policy_entropy(model, problems, samples=2)
    h2 = policy_entropy(model, problems, samples=2)
    assert h1 == h2
    # Entre 0 y log(14): 14 caracteres posibles (el relleno está prohibido)
    assert 0 < h1 < math.log(14)


def test_policy_entropy_collapses_with_a_sharper_policy():
    model = load_pretrained()
    problems = heldout_problems()[:16]
    warm = policy_entropy(model, problems, samples=2, temperature=1.0)
    cold = policy_entropy(model, problems, samples=2, temperature=0.3)
    assert cold < warm


# --- piezas de PPO ------------------------------------------------------------


def test_hidden_states_are_the_logits_before_the_embedding():
    from helpers.tinylm.methods import hidden_states
    from helpers.tinylm.task import encode_prompts

    model = load_pretrained()
    tokens = encode_prompts([(17, 24), (99, 10)])
    logits = model(tokens)
    assert torch.allclose(hidden_states(model, tokens) @ model.tok_emb.weight.T, logits)


def test_value_model_starts_at_zero_and_has_its_own_weights():
    from helpers.tinylm.methods import ValueModel
    from helpers.tinylm.sampling import sample
    from helpers.tinylm.task import encode_prompts

    model = load_pretrained()
    critic = ValueModel(model)
    batch = sample(
        model,
        encode_prompts([(17, 24)] * 3),
        generator=torch.Generator().manual_seed(0),
    )
    values = critic(batch.sequences, batch.prompt_len)
    assert values.shape == batch.mask.shape
    assert values.eq(0).all()
    assert values.requires_grad
    # Una copia: entrenar el crítico no toca la política
    assert critic.trunk.tok_emb.weight is not model.tok_emb.weight
    assert all(p.requires_grad for p in critic.parameters())


def test_per_token_advantages_give_the_ppo_loss_with_the_same_aggregation():
    """PPO usa la pérdida de GRPO con una ventaja por token: con todos los
    tokens válidos y la agregación «token» es la de ``clipped_surrogate_loss``,
    y una ventaja por respuesta da lo mismo que repetirla en cada token."""
    from helpers.ppo import clipped_surrogate_loss
    from helpers.tinylm.grpo import grpo_objective_loss

    generator = torch.Generator().manual_seed(0)
    log_probs = torch.randn(5, 10, generator=generator) * 0.3
    old = torch.randn(5, 10, generator=generator) * 0.3
    advantages = torch.randn(5, 10, generator=generator)
    full = torch.ones(5, 10)
    per_token = grpo_objective_loss(
        log_probs, full, advantages, old, clip_eps=0.2, normalization="token"
    )
    assert torch.allclose(
        per_token, clipped_surrogate_loss(log_probs, old, advantages, 0.2)
    )
    higher = grpo_objective_loss(
        log_probs, full, advantages, old, 0.2, 0.28, normalization="token"
    )
    assert higher <= per_token  # un tope más alto solo puede dar más objetivo
    mask = torch.ones(5, 10)
    mask[:, 7:] = 0
    sequence = torch.randn(5, generator=generator)
    for normalization in ("grpo", "dr_grpo", "token"):
        one_per_answer = grpo_objective_loss(
            log_probs, mask, sequence, old, 0.2, normalization=normalization
        )
        repeated = grpo_objective_loss(
            log_probs,
            mask,
            sequence[:, None].expand(5, 10),
            old,
            0.2,
            normalization=normalization,
        )
        assert torch.allclose(one_per_answer, repeated), normalization


def test_explained_variance_hand_computed():
    from helpers.tinylm.methods import explained_variance

    returns = torch.tensor([[1.0, 2.0, 9.0], [3.0, 4.0, 9.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 0]])
    assert explained_variance(returns, returns, mask) == pytest.approx(1.0)
    # Una constante no explica nada; predecir al revés, menos que nada
    assert explained_variance(torch.full((2, 3), 2.5), returns, mask) == 0.0
    backwards = torch.tensor([[4.0, 3.0, 0.0], [2.0, 1.0, 0.0]])
    # Var(r) = 1,25 y Var(r − V) = 5: 1 − 5 / 1,25 = −3 (el relleno no cuenta)
    assert explained_variance(backwards, returns, mask) == pytest.approx(-3.0)
    assert math.isnan(explained_variance(returns, torch.ones(2, 3), mask))


def test_gae_tokens_hand_computed():
    from helpers.tinylm.methods import token_gae

    rewards = torch.tensor([[0.0, -0.1, 1.0, 0.0], [0.5, 0.0, 0.0, 0.0]])
    values = torch.tensor([[0.2, 0.4, 0.6, 9.0], [0.3, 9.0, 9.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    # γ = λ = 1: la ventaja es el retorno que falta menos V(s_t); el relleno
    # (con V = 9) no cuenta y tras el último token no hay bootstrap
    expected = torch.tensor([[0.9 - 0.2, 0.9 - 0.4, 1.0 - 0.6, 0.0], [0.2, 0, 0, 0]])
    assert torch.allclose(token_gae(rewards, values, mask, 1.0, 1.0), expected)
    # λ = 0: TD de un paso, δ_t = r_t + V(s_{t+1}) − V(s_t)
    expected = torch.tensor([[0.2, 0.1, 0.4, 0.0], [0.2, 0, 0, 0]])
    assert torch.allclose(token_gae(rewards, values, mask, 1.0, 0.0), expected)


def test_log_probs_and_entropy_match_the_sampler_and_have_clean_gradients():
    from helpers.tinylm.sampling import (
        sample,
        token_log_probs,
        token_log_probs_and_entropy,
    )
    from helpers.tinylm.task import encode_prompts

    model = load_pretrained()
    batch = sample(
        model,
        encode_prompts([(17, 24)] * 4),
        generator=torch.Generator().manual_seed(1),
    )
    log_probs, entropy = token_log_probs_and_entropy(
        model, batch.sequences, batch.prompt_len, 1.0
    )
    expected = token_log_probs(model, batch.sequences, batch.prompt_len)
    assert torch.equal(log_probs, expected)  # las mismas operaciones, bit a bit
    assert entropy[batch.mask == 0].eq(0).all()
    (log_probs.sum() + entropy.sum()).backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters())


# --- train_method ---------------------------------------------------------------


def _tiny(method, **changes):
    from helpers.tinylm.methods import MethodConfig

    base = dict(
        method=method,
        total_samples=32,
        prompts_per_step=4,
        group_size=4,
        eval_every_samples=16,
        eval_samples=1,
    )
    return MethodConfig(**{**base, **changes})


EVAL_KEYS = (
    "samples",
    "train_seconds",
    "heldout_accuracy",
    "heldout_reward",
    "heldout_exploit",
    "entropy",
    "peak_memory_mb",
)
STEP_KEYS = ("step_samples", "reward", "true_reward", "exploit", "loss", "step_entropy")


@pytest.mark.parametrize("method", ["grpo", "rloo", "ppo"])
def test_train_method_history(method):
    from helpers.tinylm.evaluate import heldout_accuracy
    from helpers.tinylm.methods import train_method

    model = load_pretrained()
    before = heldout_accuracy(model, samples_per_problem=1)
    entropy_before = policy_entropy(model, samples=1)
    history = train_method(model, _tiny(method), progress=False)
    for key in EVAL_KEYS:
        assert len(history[key]) == 3, key  # al empezar, a las 16 y a las 32
    for key in STEP_KEYS:
        assert len(history[key]) == 2, key
    assert history["samples"] == [0, 16, 32]
    assert history["step_samples"] == [16, 32]
    assert history["heldout_accuracy"][0] == before
    assert history["entropy"][0] == entropy_before
    assert history["heldout_accuracy"][-1] == heldout_accuracy(model, 1)
    assert history["reward"] == history["true_reward"]  # verificador correcto
    assert len(history["state_memory_mb"]) == 1
    assert ("value_loss" in history) == (method == "ppo")
    assert ("explained_variance" in history) == (method == "ppo")
    # Un solo paso de gradiente por lote: el cociente vale 1 y nada se recorta
    assert history["clip_fraction"] == [0.0, 0.0]
    assert all(x >= 0 for x in history["peak_memory_mb"])
    assert history["train_seconds"] == sorted(history["train_seconds"])
    assert any(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("method", ["grpo", "ppo"])
def test_with_several_updates_per_batch_the_clip_acts(method):
    from helpers.tinylm.methods import train_method

    cfg = _tiny(method, epochs=3, minibatches=2, lr=3e-3)
    history = train_method(load_pretrained(), cfg, progress=False)
    assert all(0 < f < 1 for f in history["clip_fraction"]), history


def test_train_method_is_reproducible_and_changes_the_model():
    from helpers.tinylm.methods import train_method

    runs = []
    for _ in range(2):
        model = load_pretrained()
        history = train_method(model, _tiny("ppo", kl_coef=0.05), progress=False)
        runs.append((history, model.state_dict()))
    (h1, w1), (h2, w2) = runs
    for key in ("heldout_accuracy", "entropy", "reward", "loss", "value_loss"):
        assert h1[key] == h2[key], key
    assert all(torch.equal(w1[k], w2[k]) for k in w1)
    start = load_pretrained().state_dict()
    assert not all(torch.equal(w1[k], start[k]) for k in w1)
    assert "kl_ref" in h1


def test_ppo_needs_twice_the_state_memory():
    from helpers.tinylm.methods import train_method

    grpo = train_method(load_pretrained(), _tiny("grpo"), progress=False)
    ppo = train_method(load_pretrained(), _tiny("ppo"), progress=False)
    assert ppo["state_memory_mb"][0] > 1.9 * grpo["state_memory_mb"][0]


def test_grpo_and_rloo_differ_only_by_the_advantage_scale():
    from helpers.tinylm.methods import method_step

    grads = {}
    for method in ("grpo", "rloo"):
        model = load_pretrained()
        # Sin dividir por la desviación (Dr. GRPO) ni recortar el gradiente
        cfg = _tiny(method, max_grad_norm=1e9, std_normalize=False)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
        generator = torch.Generator().manual_seed(0)
        method_step(model, optimizer, [(17, 24), (12, 34)], cfg, generator)
        grads[method] = torch.cat([p.grad.flatten() for p in model.parameters()])
    # Mismas respuestas (misma semilla); con G = 4, RLOO = GRPO · G / (G − 1)
    assert grads["grpo"].abs().sum() > 0
    assert torch.allclose(grads["rloo"], grads["grpo"] * 4 / 3, atol=1e-6)


def test_method_step_with_grpo_is_grpo_step():
    # train_method(method="grpo") da el paso de GRPO de train_grpo con
    # cfg.grpo_config(): los mismos pesos, bit a bit
    from helpers.tinylm.grpo import grpo_step
    from helpers.tinylm.methods import method_step

    cfg = _tiny("grpo", epochs=2, minibatches=2, entropy_coef=0.01)
    weights, rewards = [], []
    for step in ("method", "grpo"):
        model = load_pretrained()
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.grpo.lr)
        generator = torch.Generator().manual_seed(0)
        problems = [(17, 24), (12, 34)]
        if step == "method":
            metrics = method_step(model, optimizer, problems, cfg, generator)
        else:
            metrics = grpo_step(
                model, optimizer, problems, cfg.grpo_config(), generator
            )
        rewards.append(metrics["reward"])
        weights.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert rewards[0] == rewards[1]
    assert torch.equal(weights[0], weights[1])


@pytest.mark.parametrize(
    "sampler",
    [{}, {"sampler_lag": 1, "sampler_dtype": torch.bfloat16, "is_cap": 2.0}],
    ids=["mismo modelo", "retrasado en bf16"],
)
def test_train_method_with_grpo_is_train_grpo(sampler):
    # Las perillas de GRPOConfig valen también en 08: con el muestreador
    # retrasado y en bf16, train_method(GRPO) entrena exactamente como
    # train_grpo(cfg.grpo_config()); si lo ignorara, los pesos serían otros
    from helpers.tinylm.grpo import train_grpo
    from helpers.tinylm.methods import train_method

    cfg = _tiny("grpo", eval_every_samples=10**6, **sampler)
    assert cfg.grpo.sampler_lag == sampler.get("sampler_lag", 0)
    method_model, grpo_model = load_pretrained(), load_pretrained()
    history = train_method(method_model, cfg, progress=False)
    expected = train_grpo(grpo_model, cfg.grpo_config(), progress=False, evaluate=False)
    assert history["reward"] == expected["reward"]
    for p, q in zip(method_model.parameters(), grpo_model.parameters(), strict=True):
        assert torch.equal(p, q)


# --- MethodConfig -----------------------------------------------------------------


def test_method_config_is_composed_from_grpo_and_critic_configs():
    import dataclasses

    from helpers.tinylm.grpo import GRPOConfig
    from helpers.tinylm.methods import CriticConfig, MethodConfig, default_grpo_config

    cfg = MethodConfig()
    assert cfg.grpo == default_grpo_config()
    assert cfg.critic == CriticConfig()
    # Lo que 08 cambia de la GRPOConfig de 07 está en un solo sitio
    ours, theirs = (
        dataclasses.asdict(default_grpo_config()),
        dataclasses.asdict(GRPOConfig()),
    )
    changed = {k for k in ours if ours[k] != theirs[k]}
    assert changed == {"std_normalize", "clip_eps", "include_target", "eval_samples"}
    # Los nombres sueltos van a su parte: lr a la política, critic_lr al crítico
    flat = MethodConfig(method="ppo", lr=1e-3, critic_lr=3e-3, value_coef=0.25)
    composed = MethodConfig(
        "ppo",
        grpo=default_grpo_config(lr=1e-3),
        critic=CriticConfig(lr=3e-3, value_coef=0.25),
    )
    assert flat == composed
    assert (flat.grpo.lr, flat.critic.lr) == (1e-3, 3e-3)
    # Y cambian la parte que se dé, sin tocar el objeto que se pasó
    given = GRPOConfig(lr=1.0)
    cfg = MethodConfig(grpo=given, epochs=2)
    assert cfg.grpo == GRPOConfig(lr=1.0, epochs=2)
    assert given.epochs == 1 and cfg.grpo is not given
    for cfg in (MethodConfig(), flat, _tiny("rloo", kl_coef=0.1, sampler_lag=2)):
        assert MethodConfig(**cfg.flat()) == cfg
    with pytest.raises(TypeError, match="no tiene el campo"):
        MethodConfig(learning_rate=1e-3)
    with pytest.raises(TypeError, match="total_samples"):
        MethodConfig(steps=3)


@pytest.mark.parametrize("method", ["grpo", "rloo", "ppo"])
def test_grpo_config_derives_steps_eval_every_and_where_the_kl_goes(method):
    import dataclasses

    from helpers.tinylm.methods import MethodConfig

    cfg = MethodConfig(
        method,
        total_samples=100,
        prompts_per_step=4,
        group_size=8,
        eval_every_samples=70,
        kl_coef=0.1,
        epochs=3,
    )
    update = cfg.grpo_config()
    assert (update.steps, update.eval_every) == (4, 3)  # ⌈100/32⌉ y ⌈70/32⌉
    # La KL va en la pérdida solo en GRPO; RLOO y PPO la restan de la recompensa
    assert update.kl_coef == (0.1 if method == "grpo" else 0.0)
    # El resto se copia tal cual
    assert update == dataclasses.replace(
        cfg.grpo, steps=4, eval_every=3, kl_coef=update.kl_coef
    )
    assert MethodConfig(method, eval_every_samples=1).grpo_config().eval_every == 1
    small = MethodConfig(method, group_size=1)
    if method == "ppo":
        small.check()  # el crítico no necesita grupo
    else:
        with pytest.raises(ValueError, match="al menos 2"):
            small.check()


def test_buggy_verifier_rewards_at_least_the_correct_one():
    from helpers.tinylm.methods import train_method

    history = train_method(
        load_pretrained(), _tiny("grpo", verifier="buggy"), progress=False
    )
    for reward, true, exploit in zip(
        history["reward"], history["true_reward"], history["exploit"], strict=True
    ):
        assert reward == pytest.approx(true + exploit)
    assert history["heldout_reward"][0] > history["heldout_accuracy"][0]


def test_train_method_options_and_errors():
    from helpers.tinylm.methods import train_method

    history = train_method(
        load_pretrained(),
        _tiny("grpo", epochs=2, minibatches=2, clip_eps_high=0.28, entropy_coef=0.01),
        progress=False,
    )
    assert len(history["loss"]) == 2
    short = train_method(
        load_pretrained(), _tiny("rloo", max_seconds=0.0), progress=False
    )
    assert short["step_samples"] == [16]  # paró tras el primer paso
    assert short["samples"] == [0, 16]
    with pytest.raises(ValueError, match="method"):
        train_method(load_pretrained(), _tiny("a2c"), progress=False)
    with pytest.raises(ValueError, match="verifier"):
        train_method(load_pretrained(), _tiny("grpo", verifier="x"), progress=False)
    assert torch.get_num_threads() >= 1


# --- pass_at_k_curve --------------------------------------------------------------


def test_pass_at_k_curve_matches_evaluate_and_grows_with_k():
    from helpers.tinylm.evaluate import pass_at_k
    from helpers.tinylm.methods import pass_at_k_curve

    model = load_pretrained()
    problems = heldout_problems()[:16]
    curve = pass_at_k_curve(model, problems, ks=(1, 2, 4, 8), n=8)
    assert curve == pass_at_k(model, (1, 2, 4, 8), 8, problems, seed=0)
    values = list(curve.values())
    assert values == sorted(values) and 0 < values[0] < values[-1] <= 1
    with pytest.raises(ValueError, match="entre 1 y n"):
        pass_at_k_curve(model, problems, ks=(16,), n=8)


# --- La recompensa a trozos (la utilidad verdadera del módulo 10) -----------


def test_process_token_rewards_place_each_piece_where_it_is_earned():
    from helpers.tinylm.methods import process_token_rewards
    from helpers.tinylm.preferences import true_utility
    from helpers.tinylm.tokenizer import tokenizer

    texts = [
        "17×20+17×4=340+68=408.",  # todo bien: 0,25 + 0,25 + 1
        "17×20+17×4=340+58=398.",  # el segundo parcial mal
        "17×20+17×4=350+68=408.",  # el primero mal y la cifra final bien
        "17×20+17×4=340+68=40",  # sin punto final: 0
    ]
    problems = [(17, 24)] * len(texts)
    ids = tokenizer.encode_batch(texts)
    rewards = process_token_rewards(ids, problems)
    assert rewards.shape == ids.shape
    for row, text in enumerate(texts):
        assert rewards[row].sum().item() == pytest.approx(true_utility(text, 17, 24))
    # 340 acaba en la posición 13, 68 en la 16 y el punto final está en la 21
    assert rewards[0].nonzero().flatten().tolist() == [13, 16, 21]
    assert rewards[0, 21] == 1.0 and rewards[0, 13] == rewards[0, 16] == 0.25
    assert rewards[1].nonzero().flatten().tolist() == [13]
    assert rewards[2].nonzero().flatten().tolist() == [16, 21]
    assert rewards[3].abs().sum() == 0


@pytest.mark.parametrize("method", ["grpo", "ppo"])
def test_train_method_with_the_process_reward(method):
    from helpers.tinylm.methods import train_method

    history = train_method(
        load_pretrained(), _tiny(method, verifier="process"), progress=False
    )
    # La recompensa es la utilidad (hasta 1,5), no la precisión
    assert all(0 <= r <= 1.5 for r in history["heldout_reward"])
    assert history["heldout_reward"][0] > history["heldout_accuracy"][0]
