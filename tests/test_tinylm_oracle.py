"""Pruebas del oráculo: la enumeración de respuestas y las cifras exactas.

Se comparan con cuentas independientes: una búsqueda sin caché escrita aquí,
el muestreo de ``sample`` (respuesta a respuesta y en Monte Carlo, dentro de
unos errores típicos), diferencias finitas del objetivo y la KL estimada con
muestras.
"""

import math
from itertools import pairwise

import pytest
import torch

from helpers.tinylm.checkpoint import load_pretrained
from helpers.tinylm.model import TinyLM, TinyLMConfig
from helpers.tinylm.oracle import (
    angle_degrees,
    cosine_similarity,
    enumerate_completions,
    enumeration_costs,
    exact_gradient,
    exact_kl,
    exact_objective,
    flat_gradient,
    sequence_log_probs,
)
from helpers.tinylm.sampling import next_token_log_probs, sample, token_log_probs
from helpers.tinylm.task import (
    MAX_NEW_TOKENS,
    PROMPT_LEN,
    TARGET,
    encode_prompts,
    rewards_for,
)
from helpers.tinylm.tokenizer import tokenizer

THRESHOLD = math.log(1e-5)
TINY_TOKENS = 3  # respuestas de como mucho 3 caracteres en el modelo diminuto
WRITABLE = tokenizer.vocab_size - 1  # todo menos el relleno
SIGMAS = 4  # tolerancia de Monte Carlo, en errores típicos


def _tiny_model(seed: int, scale: float = 0.5) -> TinyLM:
    """Un modelo diminuto en float64, con pesos grandes para que su reparto
    no sea casi uniforme."""
    torch.manual_seed(seed)
    cfg = TinyLMConfig(
        max_len=PROMPT_LEN + TINY_TOKENS, d_model=8, n_heads=2, n_layers=1, d_mlp=16
    )
    model = TinyLM(cfg).double()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(scale * torch.randn(p.shape, generator=generator, dtype=p.dtype))
    return model.eval()


def _tiny_reward(completions: torch.Tensor, problems: list) -> torch.Tensor:
    """Una recompensa en [0, 1] que depende de cada carácter de la respuesta."""
    hits = (completions % 3 == 1) & (completions != tokenizer.pad_id)
    return hits.double().sum(dim=-1) / completions.shape[1]


def _texts(enumeration) -> list[str]:
    return tokenizer.decode_batch(enumeration.completions)


@pytest.fixture(scope="module")
def model():
    return load_pretrained()


@pytest.fixture(scope="module")
def target_set(model):
    return enumerate_completions(model, TARGET, THRESHOLD)


@pytest.fixture(scope="module")
def tiny():
    return _tiny_model(0)


@pytest.fixture(scope="module")
def tiny_all(tiny):
    return enumerate_completions(tiny, TARGET, -math.inf, max_new_tokens=TINY_TOKENS)


# --- la enumeración ------------------------------------------------------------


def test_enumeration_is_well_formed(model, target_set):
    e = target_set
    N, T = e.mask.shape
    assert T == MAX_NEW_TOKENS and e.sequences.shape == (N, PROMPT_LEN + T)
    assert e.prompt_len == PROMPT_LEN
    assert (e.sequences[:, :PROMPT_LEN] == encode_prompts([TARGET])).all()
    assert e.log_probs.dtype == torch.float64
    assert (e.log_probs >= THRESHOLD).all()
    assert (e.log_probs[:-1] >= e.log_probs[1:]).all()  # de más a menos probable
    assert len(set(_texts(e))) == N  # sin repetidas
    # Cada respuesta acaba en el punto final o llena todo el espacio (cortada),
    # y la máscara cubre justo sus tokens, sin relleno en medio
    lengths = e.lengths
    last = e.completions.gather(1, (lengths - 1)[:, None])[:, 0]
    assert ((last == tokenizer.end_id) | (lengths == T)).all()
    ends_early = (e.completions[:, :-1] == tokenizer.end_id) & (e.mask[:, 1:] > 0)
    assert not ends_early.any()
    assert torch.equal(e.mask, (e.completions != tokenizer.pad_id).float())
    assert (e.mask[:, :-1] >= e.mask[:, 1:]).all()
    # log p(y) es la de token_log_probs (pasada completa, sin caché)
    with torch.no_grad():
        recomputed = sequence_log_probs(model, e)
    torch.testing.assert_close(recomputed, e.log_probs, atol=1e-4, rtol=0)
    assert e.covered_mass == pytest.approx(float(e.probs.sum()))
    assert e.uncovered_mass == pytest.approx(1 - e.covered_mass)
    assert e.forwards <= MAX_NEW_TOKENS  # una pasada por nivel, la del enunciado
    assert e.covered_mass > 0.9


def _plain_search(model, prompt, min_log_prob, max_new_tokens):
    """La búsqueda de referencia: un prefijo cada vez, pasada completa sin
    caché. Devuelve {respuesta: log p}."""
    found, stack = {}, [((), 0.0)]
    with torch.no_grad():
        while stack:
            prefix, log_p = stack.pop()
            ids = torch.tensor([[*prompt.tolist(), *prefix]])
            step = next_token_log_probs(model(ids)[0, -1]).double()
            for token in range(tokenizer.vocab_size):
                child = log_p + float(step[token])
                if token == tokenizer.pad_id or child < min_log_prob:
                    continue
                path = (*prefix, token)
                if token == tokenizer.end_id or len(path) == max_new_tokens:
                    found[path] = child
                else:
                    stack.append((path, child))
    return found


def test_tiny_model_enumerates_every_answer(tiny, tiny_all):
    # 1 respuesta de un carácter («.»), 13 de dos y 13 · 13 · 14 de tres
    # (el tercero cierra siempre: punto final o corte)
    alive = WRITABLE - 1
    assert len(tiny_all.log_probs) == 1 + alive + alive * alive * WRITABLE
    assert tiny_all.covered_mass == pytest.approx(1.0, abs=1e-12)
    assert tiny_all.uncovered_mass < 1e-12
    reference = _plain_search(tiny, encode_prompts([TARGET])[0], -math.inf, 3)
    enumerated = {
        tuple(row[row != tokenizer.pad_id].tolist()): log_p
        for row, log_p in zip(
            tiny_all.completions, tiny_all.log_probs.tolist(), strict=True
        )
    }
    assert enumerated.keys() == reference.keys()
    worst = max(abs(enumerated[k] - reference[k]) for k in reference)
    assert worst < 1e-12


@pytest.mark.parametrize("p_min", [1e-2, 1e-3])
def test_threshold_keeps_exactly_the_answers_above_it(tiny, tiny_all, p_min):
    thr = math.log(p_min)
    e = enumerate_completions(tiny, TARGET, thr, max_new_tokens=TINY_TOKENS)
    above = set(
        text
        for text, lp in zip(_texts(tiny_all), tiny_all.log_probs.tolist(), strict=True)
        if lp >= thr
    )
    assert set(_texts(e)) == above
    assert 0 < len(above) < len(tiny_all.log_probs)


def test_every_sample_is_enumerated_with_its_probability(tiny, tiny_all):
    # sample y la enumeración son el mismo reparto, respuesta a respuesta,
    # con el punto final y el corte a max_new_tokens
    generator = torch.Generator().manual_seed(0)
    prompts = encode_prompts([TARGET]).repeat(4000, 1)
    samples = sample(tiny, prompts, TINY_TOKENS, generator=generator)
    table = dict(zip(_texts(tiny_all), tiny_all.log_probs.tolist(), strict=True))
    texts = tokenizer.decode_batch(samples.completions)
    for text, log_p in zip(
        texts, samples.log_probs.double().sum(-1).tolist(), strict=True
    ):
        assert table[text] == pytest.approx(log_p, abs=1e-5)
    # Y en frecuencia: la longitud de la respuesta (1, 2 o 3 caracteres)
    lengths = samples.mask.sum(-1)
    for length in (1, 2, 3):
        freq = float((lengths == length).double().mean())
        exact = float(tiny_all.probs[tiny_all.lengths == length].sum())
        se = math.sqrt(exact * (1 - exact) / len(texts))
        assert abs(freq - exact) <= SIGMAS * se + 1e-9, (length, freq, exact)


def test_small_batches_give_the_same_answers(model, target_set):
    e = enumerate_completions(model, TARGET, THRESHOLD, batch_size=64)
    assert _texts(e) == _texts(target_set)
    torch.testing.assert_close(e.log_probs, target_set.log_probs, atol=1e-5, rtol=0)
    assert e.forwards > target_set.forwards  # más de una pasada en algún nivel


def test_monte_carlo_agrees_with_enumeration(model, target_set):
    n = 4096
    generator = torch.Generator().manual_seed(1)
    samples = sample(model, encode_prompts([TARGET]).repeat(n, 1), generator=generator)
    e, u = target_set, target_set.uncovered_mass
    probs = e.probs
    # P(correcta): la verdadera está entre la cubierta y la cubierta + u
    correct = rewards_for(samples.completions, [TARGET] * n).double()
    exact = float((probs * rewards_for(e.completions, [TARGET] * len(probs))).sum())
    se = float(correct.std()) / math.sqrt(n)
    assert exact - SIGMAS * se <= float(correct.mean()) <= exact + u + SIGMAS * se
    # Longitud media: lo no cubierto aporta como mucho u · MAX_NEW_TOKENS
    lengths = samples.mask.sum(-1).double()
    exact_len = float((probs * e.lengths).sum())
    se = float(lengths.std()) / math.sqrt(n)
    slack = u * MAX_NEW_TOKENS
    low, high = exact_len - SIGMAS * se, exact_len + slack + SIGMAS * se
    assert low <= float(lengths.mean()) <= high
    # Frecuencia de la respuesta más probable
    top = tokenizer.decode(e.completions[0])
    freq = sum(t == top for t in tokenizer.decode_batch(samples.completions)) / n
    p_top = float(probs[0])
    se = math.sqrt(p_top * (1 - p_top) / n)
    assert abs(freq - p_top) <= SIGMAS * se


def test_covered_mass_rises_as_threshold_falls(model, target_set):
    sets = [
        enumerate_completions(model, TARGET, math.log(p)) for p in (1e-2, 1e-3, 1e-4)
    ]
    sets.append(target_set)  # 1e-5
    masses = [e.covered_mass for e in sets]
    counts = [len(e.log_probs) for e in sets]
    assert all(a < b for a, b in pairwise(masses)), masses
    assert all(a < b for a, b in pairwise(counts)), counts
    for small, large in pairwise(sets):  # conjuntos anidados
        assert set(_texts(small)) <= set(_texts(large))
    # Lo que falta baja en órdenes de magnitud: a 10⁻⁵ queda menos del 2 %,
    # y al menos tres veces menos que a 10⁻³
    assert sets[-1].uncovered_mass < 0.02
    assert sets[-1].uncovered_mass < sets[1].uncovered_mass / 3


def test_enumeration_is_deterministic(model, target_set):
    again = enumerate_completions(model, TARGET, THRESHOLD)
    assert torch.equal(again.sequences, target_set.sequences)
    assert torch.equal(again.log_probs, target_set.log_probs)
    assert again.covered_mass == target_set.covered_mass
    assert again.forwards == target_set.forwards


def test_enumeration_costs_report_the_enumeration(model, target_set):
    (cost,) = enumeration_costs(model, [(TARGET, 1e-5)])
    assert cost.problem == TARGET and cost.min_prob == 1e-5
    assert cost.completions == len(target_set.log_probs)
    assert cost.covered_mass == target_set.covered_mass
    assert cost.forwards == target_set.forwards and cost.seconds > 0


# --- J, ∇J y la KL exactos -------------------------------------------------------


def _brute_objective(model, e, reward_fn) -> float:
    """Σ_y p(y) R(y) recalculado aquí, de una vez."""
    with torch.no_grad():
        per_token = token_log_probs(model, e.sequences, e.prompt_len)
    probs = per_token.double().sum(-1).exp()
    return float((probs * reward_fn(e.completions, [TARGET] * len(probs))).sum())


def test_exact_objective_matches_a_direct_sum(tiny, tiny_all):
    result = exact_objective(
        tiny, [TARGET], _tiny_reward, -math.inf, max_new_tokens=TINY_TOKENS
    )
    assert result.value == pytest.approx(_brute_objective(tiny, tiny_all, _tiny_reward))
    assert 0 < result.value < 1 and result.uncovered_mass < 1e-12
    # Varios enunciados: la media, y con los conjuntos dados, lo mismo
    two = [TARGET, (38, 76)]
    sets = [tiny_all, enumerate_completions(tiny, two[1], -math.inf, max_new_tokens=3)]
    both = exact_objective(tiny, two, _tiny_reward, enumerations=sets, batch_size=100)
    alone = exact_objective(tiny, two[1:], _tiny_reward, enumerations=sets[1:])
    assert both.value == pytest.approx((result.value + alone.value) / 2)
    with pytest.raises(ValueError, match="una por enunciado"):
        exact_objective(tiny, two, _tiny_reward, enumerations=sets[:1])


def test_exact_gradient_matches_finite_differences(tiny, tiny_all):
    sets = [tiny_all]
    result = exact_gradient(tiny, [TARGET], _tiny_reward, enumerations=sets)
    assert all(p.grad is None for p in tiny.parameters())  # no toca .grad
    value = exact_objective(tiny, [TARGET], _tiny_reward, enumerations=sets).value
    assert result.value == pytest.approx(value, rel=1e-12)
    grad = flat_gradient(result.gradients)
    assert grad.numel() == tiny.num_params() and grad.norm() > 0
    # Derivada direccional por diferencias centradas, en float64
    generator = torch.Generator().manual_seed(0)
    params = list(tiny.parameters())
    direction = [
        torch.randn(p.shape, generator=generator, dtype=p.dtype) for p in params
    ]
    eps = 1e-5

    def objective_at(shift: float) -> float:
        moved = _tiny_model(0)
        with torch.no_grad():
            for p, d in zip(moved.parameters(), direction, strict=True):
                p.add_(shift * d)
        # La enumeración se rehace con los pesos movidos: con umbral −∞ el
        # conjunto es el mismo (todas las respuestas)
        return exact_objective(
            moved, [TARGET], _tiny_reward, -math.inf, max_new_tokens=TINY_TOKENS
        ).value

    finite = (objective_at(eps) - objective_at(-eps)) / (2 * eps)
    directional = float(grad @ torch.cat([d.reshape(-1) for d in direction]))
    assert abs(directional) > 1e-4
    assert finite == pytest.approx(directional, rel=1e-6)


def test_exact_gradient_agrees_with_backward_and_is_deterministic(tiny, tiny_all):
    sets = [tiny_all]
    first = exact_gradient(tiny, [TARGET], _tiny_reward, enumerations=sets)
    again = exact_gradient(tiny, [TARGET], _tiny_reward, enumerations=sets)
    assert torch.equal(flat_gradient(first.gradients), flat_gradient(again.gradients))
    # Un backward a mano de −J deja en .grad justo −∇J
    model = _tiny_model(0)
    log_p = token_log_probs(model, tiny_all.sequences, tiny_all.prompt_len).sum(-1)
    rewards = _tiny_reward(tiny_all.completions, [])
    (-(log_p.exp() * rewards).sum()).backward()
    torch.testing.assert_close(
        -flat_gradient(model), flat_gradient(first.gradients), atol=1e-12, rtol=1e-9
    )


def test_angle_helpers():
    u = torch.tensor([1.0, 0.0, 2.0])
    assert angle_degrees(u, 3 * u) == pytest.approx(0.0, abs=1e-6)
    assert angle_degrees(u, -u) == pytest.approx(180.0)
    assert angle_degrees(u, torch.tensor([0.0, 5.0, 0.0])) == pytest.approx(90.0)
    assert cosine_similarity(u, torch.tensor([2.0, 0.0, 0.0])) == pytest.approx(
        1 / math.sqrt(5)
    )
    assert cosine_similarity(u, torch.zeros(3)) == 0.0


def test_exact_kl_is_zero_against_itself_and_positive_otherwise(model, tiny):
    assert exact_kl(model, model, [TARGET]).value == 0.0
    assert exact_kl(tiny, tiny, [TARGET], max_new_tokens=TINY_TOKENS).value == 0.0
    for seed in (1, 2):
        other = _tiny_model(seed)
        kl = exact_kl(tiny, other, [TARGET], -math.inf, max_new_tokens=TINY_TOKENS)
        assert kl.value > 0 and kl.uncovered_mass < 1e-12


def test_exact_kl_matches_monte_carlo(tiny):
    reference = _tiny_model(0)
    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():  # una referencia cercana: los pesos con algo de ruido
        for p in reference.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=generator, dtype=p.dtype))
    kl = exact_kl(tiny, reference, [TARGET], -math.inf, max_new_tokens=TINY_TOKENS)
    # Monte Carlo: la media de log p(y) − log p_ref(y) sobre y ~ π
    n = 8000
    prompts = encode_prompts([TARGET]).repeat(n, 1)
    samples = sample(tiny, prompts, TINY_TOKENS, generator=generator)
    with torch.no_grad():
        log_ratio = (
            token_log_probs(tiny, samples.sequences, PROMPT_LEN)
            - token_log_probs(reference, samples.sequences, PROMPT_LEN)
        ).sum(-1)
    se = float(log_ratio.std()) / math.sqrt(n)
    assert kl.value > 3 * se  # lejos de 0: la prueba puede fallar
    assert abs(float(log_ratio.mean()) - kl.value) <= SIGMAS * se
