"""Las curvas guardadas de GRPO, RLOO y PPO (``helpers.tinylm.compare``)."""

import copy

import pytest

from helpers.seeding import FLOAT_TOLERANCE, SAMPLED_ANSWERS_MARGIN
from helpers.tinylm.compare import (
    CRITIC_KEYS,
    CURVE_KEYS,
    CURVES_PATH,
    EVAL_KEYS,
    RUNS,
    check_curve,
    compare_curve,
    eval_answers,
    load_curves,
)
from helpers.tinylm.methods import MethodConfig


@pytest.fixture(scope="module")
def data():
    return load_curves()


def test_the_file_has_the_promised_shape(data):
    assert CURVES_PATH.name == "method_curves.json"
    assert set(data) == {"config", "runs", "curves"}
    config = data["config"]
    for key in ("command", "how", "torch", "date", "method_config", "seeds"):
        assert key in config, key
    assert config["command"] == "python -m helpers.tinylm.compare --write"
    # Las ejecuciones guardadas son las de RUNS, y cada una, con la
    # configuración común, es una MethodConfig válida
    assert data["runs"] == RUNS
    assert list(data["curves"]) == list(RUNS)
    for run in RUNS.values():
        MethodConfig(seed=0, **config["method_config"], **run)
    steps = MethodConfig(**config["method_config"]).steps
    samples = None
    for name, seeds in data["curves"].items():
        assert sorted(seeds) == sorted(str(s) for s in config["seeds"])
        assert len(seeds) >= 2
        critic = RUNS[name]["method"] == "ppo"
        for curve in seeds.values():
            assert set(curve) == set(CURVE_KEYS) | (
                set(CRITIC_KEYS) if critic else set()
            )
            n = len(curve["samples"])
            assert n >= 3 and all(len(curve[k]) == n for k in EVAL_KEYS)
            for key in set(curve) - set(EVAL_KEYS):  # una por paso
                assert len(curve[key]) == steps, key
            assert curve["samples"][0] == 0 and curve["train_seconds"][0] == 0
            assert curve["train_seconds"] == sorted(curve["train_seconds"])
            assert all(0 <= a <= 1 for a in curve["heldout_accuracy"])
            assert all(0 <= c <= 1 for c in curve["clip_fraction"])
            assert all(h > 0 for h in curve["entropy"])
            # Mismas respuestas muestreadas con todas las recetas
            samples = samples or curve["samples"]
            assert curve["samples"] == samples
            assert samples[-1] == config["method_config"]["total_samples"]
    # El recorte actúa: varias épocas y minilotes por lote
    assert (
        config["method_config"]["epochs"] * config["method_config"]["minibatches"] > 1
    )


def test_the_stored_config_is_what_compute_curves_writes(data):
    # compute_curves guarda MethodConfig(...).flat() sin lo que cambia cada
    # ejecución: las claves guardadas, con sus valores, siguen saliendo así
    from helpers.tinylm.compare import CURVE_OVERRIDES

    stored = data["config"]["method_config"]
    flat = MethodConfig(**{**CURVE_OVERRIDES, **stored}).flat()
    assert {key: flat[key] for key in stored} == stored
    assert MethodConfig(**flat) == MethodConfig(**stored)


def test_all_curves_start_from_the_same_model(data):
    starts = {
        (curve["heldout_accuracy"][0], curve["entropy"][0])
        for seeds in data["curves"].values()
        for curve in seeds.values()
    }
    assert len(starts) == 1  # el punto de control supervisado, medido igual


def test_compare_curve_finds_differences(data):
    stored = data["curves"]["grpo"]["0"]
    fresh = {k: v[:3] for k, v in stored.items()}
    answers = eval_answers(data)
    assert answers == 256 * 4
    assert compare_curve(stored, fresh, answers) == []
    changed = copy.deepcopy(fresh)
    changed["heldout_accuracy"][2] += 0.01
    changed["train_seconds"][1] += 5.0  # los segundos no cuentan
    problems = compare_curve(stored, changed, answers)
    assert len(problems) == 1 and problems[0].startswith("heldout_accuracy[2]")
    changed = copy.deepcopy(fresh)
    changed["samples"][1] += 1
    assert compare_curve(stored, changed, answers)[0].startswith("samples")


def test_compare_curve_allows_what_another_cpu_changes_and_no_more(data):
    stored = data["curves"]["grpo"]["0"]
    fresh = {k: v[:3] for k, v in stored.items()}
    answers = eval_answers(data)
    # La entropía del modelo supervisado, medida en un AMD EPYC y en un Intel
    # Xeon (otro último decimal): la guardada es una de las dos, y la otra pasa.
    # Unas pocas respuestas muestreadas distintas en la precisión, también
    by_cpu = {0.0858912467956543, 0.08589126169681549}
    assert stored["entropy"][0] in by_cpu
    rounded = copy.deepcopy(fresh)
    (rounded["entropy"][0],) = by_cpu - {stored["entropy"][0]}
    rounded["heldout_accuracy"][1] += SAMPLED_ANSWERS_MARGIN / answers
    assert compare_curve(stored, rounded, answers) == []
    # Pero no una entropía más lejos que la tolerancia, ni una respuesta más
    # que el margen en la precisión
    moved = copy.deepcopy(fresh)
    moved["entropy"][1] += 2 * FLOAT_TOLERANCE
    moved["heldout_accuracy"][2] -= (SAMPLED_ANSWERS_MARGIN + 1) / answers
    problems = compare_curve(stored, moved, answers)
    assert [p.split(":")[0] for p in problems] == ["heldout_accuracy[2]", "entropy[1]"]


@pytest.mark.stored_figures
@pytest.mark.parametrize("run", ["grpo", "ppo"])
def test_the_code_reproduces_a_stored_curve(data, run):
    """El principio de la curva de GRPO y la de PPO, semilla 0, recalculado.

    Con los núcleos de AVX-512, AVX2 y los genéricos (``ATEN_CPU_CAPABILITY``)
    la precisión de estos primeros puntos sale igual y la entropía cambia en
    el último decimal. Más adelante en la curva, una respuesta de evaluación
    llega a cambiar: por eso la precisión admite ``SAMPLED_ANSWERS_MARGIN``.
    """
    step = data["config"]["method_config"]["eval_every_samples"]
    assert check_curve(run, 0, max_samples=step, data=data) == []
