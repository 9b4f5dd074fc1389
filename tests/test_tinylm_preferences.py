"""La etapa de preferencias del módulo 10 (``helpers.tinylm.preferences``) y sus
ejecuciones guardadas (``helpers.tinylm.preference_runs``)."""

import math

import numpy as np
import pytest
import torch

import helpers.tinylm as tl
from helpers.tinylm import preference_runs as runs
from helpers.tinylm import preferences as pref


@pytest.mark.parametrize(
    ("text", "utility"),
    [
        ("17×20+17×4=340+68=408.", 1.5),  # todo bien
        ("17×20+17×4=350+68=418.", 0.25),  # un parcial mal y la cifra final mal
        ("17×20+17×4=340+78=418.", 0.25),
        ("17×20+17×4=350+58=408.", 1.0),  # la cifra final bien, los parciales no
        ("17×20+17×4=340+68=408", 0.0),  # sin punto final
        ("=408.", 1.0),  # sin desarrollo: solo cuenta la cifra final
        ("408.", 0.0),  # sin «=» no hay cifra final que leer (como el verificador)
        ("×=.", 0.0),
        ("", 0.0),
    ],
)
def test_true_utility(text, utility):
    assert pref.true_utility(text, 17, 24) == utility


def test_utilities_for_reads_the_batch():
    problems = [(17, 24), (12, 10)]
    texts = ["17×20+17×4=340+68=408.", "12×10+12×0=120+0=121."]
    completions = tl.tokenizer.encode_batch(texts)
    assert pref.utilities_for(completions, problems).tolist() == [1.5, 0.5]


def test_preference_probability_is_bradley_terry():
    u1, u2 = torch.tensor([1.5, 0.5, 1.0]), torch.tensor([0.25, 0.5, 1.25])
    p = pref.preference_probability(u1, u2, temperature=0.25)
    expected = [
        1 / (1 + math.exp(-(a - b) / 0.25)) for a, b in zip(u1, u2, strict=True)
    ]
    assert p.tolist() == pytest.approx(expected)
    assert p[1] == 0.5  # con utilidades iguales, una moneda


@pytest.fixture(scope="module")
def pairs():
    return pref.make_preferences(300, seed=5, problems=pref.preference_problems())


def test_pairs_are_deterministic_and_consistent(pairs):
    again = pref.make_preferences(300, seed=5, problems=pref.preference_problems())
    assert torch.equal(pairs.chosen, again.chosen)
    assert torch.equal(pairs.rejected, again.rejected)
    assert len(pairs) == 300 and pairs.prompts.shape == (300, tl.PROMPT_LEN)
    # Nunca dos respuestas idénticas, y las utilidades son las de sus textos
    assert not any(
        torch.equal(c, r) for c, r in zip(pairs.chosen, pairs.rejected, strict=True)
    )
    assert torch.equal(
        pairs.chosen_utility, pref.utilities_for(pairs.chosen, pairs.problems)
    )
    # La probabilidad guardada es la de la etiqueta que salió
    p = pref.preference_probability(pairs.chosen_utility, pairs.rejected_utility)
    assert torch.allclose(pairs.label_probability, p)
    assert set(pairs.problems) <= set(pref.preference_problems())


def test_ceiling_is_the_expected_accuracy_of_the_truth(pairs):
    p = pairs.label_probability
    assert pairs.ceiling() == pytest.approx(torch.maximum(p, 1 - p).mean().item())
    # Con una anotadora casi sin ruido, el techo es el de los empates
    sharp = pref.make_preferences(
        200, seed=5, problems=pref.preference_problems(), temperature=1e-3
    )
    ties = (sharp.chosen_utility == sharp.rejected_utility).float().mean().item()
    assert sharp.ceiling() == pytest.approx(1 - ties / 2, abs=1e-6)
    assert sharp.truth_agreement() == 1.0


def test_subset_keeps_rows_together(pairs):
    index = torch.tensor([4, 0, 7])
    part = pairs.subset(index)
    assert part.problems == [pairs.problems[i] for i in (4, 0, 7)]
    assert torch.equal(part.chosen, pairs.chosen[index])
    assert len(pairs.subset(slice(10, 20))) == 10


@torch.no_grad()
def test_reward_model_reads_the_last_token_and_ignores_padding():
    torch.manual_seed(0)
    model = pref.RewardModel(tl.load_pretrained())
    torch.nn.init.normal_(model.head.weight)
    prompts = tl.encode_prompts([(17, 24)] * 2)
    short = tl.tokenizer.encode_batch(["=408.", "17×20+17×4=340+68=408."])
    wide = torch.nn.functional.pad(short, (0, 3), value=tl.tokenizer.pad_id)
    scores = model(prompts, short)
    assert torch.allclose(scores, model(prompts, wide), atol=1e-6)
    other = model(
        prompts, tl.tokenizer.encode_batch(["=418.", "17×20+17×4=340+68=408."])
    )
    assert other[0] != scores[0] and other[1] == pytest.approx(scores[1].item())


def test_losses_match_their_formulas():
    chosen, rejected = torch.tensor([2.0, -1.0]), torch.tensor([0.5, 1.0])
    bt = pref.bradley_terry_loss(chosen, rejected)
    expected = np.mean([-math.log(1 / (1 + math.exp(-d))) for d in (1.5, -2.0)])
    assert bt.item() == pytest.approx(expected)
    big = pref.bradley_terry_loss(torch.tensor([-200.0]), torch.tensor([200.0]))
    assert big.item() == pytest.approx(400.0)
    assert (
        pref.pairwise_accuracy(torch.tensor([1.0, 0, 2]), torch.tensor([0.0, 0, 3]))
        == 0.5
    )
    pw, pl, rw, rl = (torch.tensor([v]) for v in (-10.0, -12.0, -11.0, -11.5))
    h = (-10.0 + 11.0) - (-12.0 + 11.5)
    dpo = pref.dpo_loss(pw, pl, rw, rl, beta=0.1)
    assert dpo.item() == pytest.approx(math.log(1 + math.exp(-0.1 * h)))
    ipo = pref.dpo_loss(pw, pl, rw, rl, beta=0.5, loss_type="ipo")
    assert ipo.item() == pytest.approx((h - 1.0) ** 2)
    with pytest.raises(ValueError, match="loss_type"):
        pref.dpo_loss(pw, pl, rw, rl, beta=0.1, loss_type="hinge")


def test_implicit_rewards_flow_only_through_the_policy():
    policy, reference = tl.load_pretrained(), tl.load_pretrained()
    with torch.no_grad():
        policy.tok_emb.weight.add_(0.05)
    prompts = tl.encode_prompts([(17, 24), (12, 10)])
    completions = tl.tokenizer.encode_batch(["408.", "12×10+12×0=120+0=120."])
    rewards = pref.implicit_rewards(policy, reference, prompts, completions, 0.1)
    expected = 0.1 * (
        pref.sequence_log_probs(policy, prompts, completions)
        - pref.sequence_log_probs(reference, prompts, completions)
    )
    assert torch.allclose(rewards, expected)
    rewards.sum().backward()
    assert policy.tok_emb.weight.grad is not None
    assert all(p.grad is None for p in reference.parameters())


def test_missing_end_gets_the_lowest_score():
    torch.manual_seed(0)
    model = pref.RewardModel(tl.load_pretrained()).eval()
    reward = pref.reward_model_rewards(model)
    completions = tl.tokenizer.encode_batch(["=408.", "0000"])
    scores = reward(completions, [(17, 24)] * 2)
    assert scores[1] == pref.MISSING_END_SCORE and scores[0] != pref.MISSING_END_SCORE
    plain = pref.reward_model_rewards(model, missing_end_score=None)
    assert plain(completions, [(17, 24)] * 2)[1] != pref.MISSING_END_SCORE


def test_train_grpo_trains_on_reward_fn_and_watches():
    # Una recompensa constante: todas las ventajas son 0 y nada cambia, aunque
    # el verificador sí distinguiría; lo vigilado se registra sin entrenar
    model = tl.load_pretrained()
    before = [p.detach().clone() for p in model.parameters()]
    pool = pref.preference_problems()[:8]
    history = tl.train_grpo(
        model,
        tl.GRPOConfig(steps=2, prompts_per_step=4, include_target=False),
        progress=False,
        evaluate=False,
        reward_fn=lambda completions, problems: torch.ones(len(problems)),
        watch={"true_utility": pref.utilities_for},
        problems=pool,
    )
    assert history["reward"] == [1.0, 1.0]
    assert len(history["true_utility"]) == 2
    assert all(
        torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True)
    )


def test_reward_model_and_dpo_learn_from_pairs(pairs):
    test = pref.make_preferences(128, seed=6, problems=pref.preference_problems())
    model, history = pref.train_reward_model(
        pairs, pref.RewardModelConfig(epochs=2), test
    )
    assert len(history["test_accuracy"]) == 2
    scores = torch.cat(pref.score_pairs(model, pairs))  # normalizado
    assert scores.mean().item() == pytest.approx(0.0, abs=1e-4)
    assert scores.std().item() == pytest.approx(1.0, abs=1e-4)
    assert not any(p.requires_grad for p in model.parameters())
    policy, history = pref.train_dpo(
        pairs, pref.DPOConfig(epochs=1), test, evaluate=True
    )
    assert len(history["utility"]) == len(history["kl_ref"]) == 2
    assert history["kl_ref"][0] == 0.0 and history["kl_ref"][1] > 0
    assert history["train_accuracy"][-1] > 0.5


def test_smooth_and_peak():
    values = [0.0, 1.0, 2.0, 3.0]
    assert runs.smooth(values, window=2).tolist() == [0.0, 0.5, 1.5, 2.5]
    run = {
        "true": [1.0] * 10 + [2.0] * 10 + [0.5] * 30,
        "proxy": list(np.linspace(0, 3, 50)),
        "kl": list(np.linspace(0, 1, 50)),
    }
    p = runs.peak(run)
    assert p["step"] == 20 and p["true_peak"] == pytest.approx(2.0)
    assert (
        p["true_final"] == pytest.approx(0.5) and p["proxy_final"] > p["proxy_at_peak"]
    )
    assert runs.grpo_name(0.05) == "β = 0,05" and runs.grpo_name(None) == "verdad"


@pytest.fixture(scope="module")
def stored():
    return runs.load()


def test_stored_runs_have_every_seed_and_run(stored):
    config = stored["config"]
    assert config["command"] == runs.COMMAND
    assert config["seeds"] == list(runs.SEEDS) and config["betas"] == list(runs.BETAS)
    names = {runs.grpo_name(b) for b in runs.BETAS} | {"verdad"}
    for result in stored["seeds"].values():
        assert set(result["grpo"]) == names
        for run in result["grpo"].values():
            assert len(run["true"]) == len(run["proxy"]) == len(run["kl"]) == runs.STEPS
        assert set(result["dpo"]) == set(runs.DPO_RUNS)
        for name, run in result["dpo"].items():
            epochs = runs.DPO_RUNS[name].epochs
            assert len(run["utility"]) == len(run["kl"]) == epochs + 1
    data = stored["data"]
    assert 0.5 < data["ceiling"] < 1 and data["sft_utility"] > 0


@pytest.fixture(scope="module")
def fresh_start():
    # El modelo de recompensa entero y los 3 primeros pasos de cada GRPO. Más
    # allá, cada paso depende ya de las notas de un modelo de recompensa
    # entrenado, y con los núcleos genéricos de otra CPU la utilidad se separa
    # más que TRAINED_FRACTION_MARGIN: medido en un Intel Xeon con
    # ATEN_CPU_CAPABILITY=default, un 3,7 % en el cuarto paso.
    return runs.run_seed(0, steps=3, dpo=False)


@pytest.mark.slow  # fresh_start entrena (≈ 1 min)
@pytest.mark.stored_figures
def test_stored_runs_reproduce_their_start(stored, fresh_start):
    assert runs.compare(stored["seeds"]["0"], fresh_start) == []


@pytest.mark.slow  # comparte fresh_start, que entrena (≈ 1 min)
def test_compare_finds_a_changed_figure(stored, fresh_start):
    import copy

    changed = copy.deepcopy(stored["seeds"]["0"])
    changed["grpo"]["β = 0"]["true"][1] += 0.2
    changed["reward_model"]["test_accuracy"] += 0.05
    problems = runs.compare(changed, fresh_start)
    assert len(problems) == 2
    assert "test_accuracy" in problems[0] and "true[1]" in problems[1]


@pytest.mark.parametrize(
    ("form", "alpha", "beta"), [("bon", 0.7, 0.5), ("rl", -0.9, 1.2)]
)
def test_fit_gao_recovers_the_curve(form, alpha, beta):
    d = np.linspace(0.0, 1.5, 40)
    gain = pref.gao_curve(d, alpha, beta, form)
    assert gain[0] == 0.0
    fitted_alpha, fitted_beta, rmse = pref.fit_gao(d, gain, form)
    assert fitted_alpha == pytest.approx(alpha) and fitted_beta == pytest.approx(beta)
    assert rmse < 1e-9
    # el máximo de la fórmula es el de la curva
    grid = np.linspace(1e-6, 5.0, 200_001)
    best = grid[np.argmax(pref.gao_curve(grid, alpha, beta, form))]
    assert pref.gao_peak(alpha, beta, form) == pytest.approx(best, abs=1e-4)


def test_fit_gao_reports_the_error_and_rejects_unknown_forms():
    d = np.array([0.0, 0.5, 1.0, 1.5])
    gain = np.array([0.0, 0.3, 0.2, 0.4])
    alpha, beta, rmse = pref.fit_gao(d, gain, "bon")
    residual = pref.gao_curve(d, alpha, beta, "bon") - gain
    assert rmse == pytest.approx(np.sqrt(np.mean(residual**2))) and rmse > 0.01
    with pytest.raises(ValueError, match="forma desconocida"):
        pref.fit_gao(d, gain, "ppo")
