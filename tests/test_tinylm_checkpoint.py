"""Pruebas del checkpoint supervisado que trae el paquete."""

import pytest
import torch

from helpers.seeding import same_sampled_fraction
from helpers.tinylm.checkpoint import CHECKPOINT_PATH, checkpoint_info, load_pretrained
from helpers.tinylm.evaluate import heldout_accuracy, mean_reward, p_correct
from helpers.tinylm.model import TinyLM
from helpers.tinylm.sampling import sample
from helpers.tinylm.task import encode_prompts, heldout_problems, rewards_for


@pytest.fixture(scope="module")
def model():
    return load_pretrained()


def test_checkpoint_ships_small_and_loads_without_arguments(model):
    assert CHECKPOINT_PATH.exists()
    assert CHECKPOINT_PATH.stat().st_size <= 3 * 1024 * 1024
    assert isinstance(model, TinyLM)
    assert 100_000 <= model.num_params() <= 1_000_000
    assert not model.training
    assert all(p.dtype == torch.float32 for p in model.parameters())


# Las dos cifras guardadas con el punto de control se recalculan con la misma
# función y la misma semilla: en esta máquina salen iguales con los núcleos de
# AVX-512, AVX2 y los genéricos (ATEN_CPU_CAPABILITY). Son fracciones de
# respuestas muestreadas, y en otra CPU alguna puede cambiar: se admiten
# SAMPLED_ANSWERS_MARGIN respuestas distintas.


@pytest.mark.stored_figures
def test_heldout_accuracy_is_in_the_band(model):
    accuracy = heldout_accuracy(model)
    assert 0.2 <= accuracy <= 0.6
    # Es la misma cifra que midió el script de SFT al guardarlo (T = 1)
    stored = checkpoint_info()["heldout_accuracy"]
    answers = len(heldout_problems()) * 8  # las de heldout_accuracy por defecto
    assert same_sampled_fraction(stored, accuracy, answers), (stored, accuracy)


@pytest.mark.stored_figures
def test_target_is_far_from_solved(model):
    p = p_correct(model)
    assert 0.05 < p < 0.85
    stored = checkpoint_info()["p_correct"]
    assert same_sampled_fraction(stored, p, 1024), (stored, p)  # n_samples


def test_most_groups_of_eight_are_mixed(model):
    problems = heldout_problems()
    prompts = encode_prompts(problems).repeat_interleave(8, dim=0)
    samples = sample(model, prompts, generator=torch.Generator().manual_seed(0))
    repeated = [p for p in problems for _ in range(8)]
    correct = rewards_for(samples.completions, repeated).view(-1, 8).sum(dim=-1)
    mixed = ((correct > 0) & (correct < 8)).float().mean().item()
    assert mixed > 0.5


def test_mistakes_are_near_misses(model):
    # Voraz acierta bastante más que a temperatura 1: el carácter más probable
    # suele ser el bueno, y hay margen para que GRPO concentre la probabilidad
    greedy = mean_reward(model, heldout_problems(), 1, temperature=0)
    assert greedy > heldout_accuracy(model) + 0.1
