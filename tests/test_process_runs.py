"""El cara a cara con la recompensa a trozos (``helpers.tinylm.process_runs``)."""

from helpers.seeding import same_sampled_fraction
from helpers.tinylm import process_runs
from helpers.tinylm.methods import MethodConfig


def test_the_file_has_the_promised_shape():
    data = process_runs.load()
    assert set(data) == {"config", "runs", "curves"}
    config = data["config"]
    assert config["command"] == process_runs.COMMAND
    assert data["runs"] == process_runs.RUNS
    assert config["seeds"] == list(process_runs.SEEDS)
    # La configuración guardada es la que da run_config
    assert config["method_config"] == process_runs.run_config("grpo", 0).flat()
    assert MethodConfig(**config["method_config"]).verifier == "process"
    steps = process_runs.run_config("ppo", 0).steps
    for run, by_seed in data["curves"].items():
        assert sorted(by_seed) == [str(s) for s in process_runs.SEEDS]
        for curve in by_seed.values():
            assert curve["samples"] == [0, 2560, 5120, 7680, 10240]
            assert all(0 <= u <= 1.5 for u in curve["heldout_reward"])
            assert all(0 <= a <= 1 for a in curve["heldout_accuracy"])
            # La utilidad cuenta la cifra final: nunca menos que la precisión
            assert all(
                u >= a
                for u, a in zip(
                    curve["heldout_reward"], curve["heldout_accuracy"], strict=True
                )
            )
            assert ("explained_variance" in curve) == (run == "ppo")
            if run == "ppo":
                assert len(curve["explained_variance"]) == steps


def test_the_start_of_a_stored_run_is_reproduced():
    # GRPO, semilla 0, hasta la primera evaluación tras empezar (10 pasos)
    stored = process_runs.load()["curves"]["grpo"]["0"]
    fresh = process_runs.compute_run("grpo", 0, total_samples=2560)
    assert fresh["samples"] == stored["samples"][:2]
    for key, scale in (("heldout_accuracy", 1.0), ("heldout_reward", 1.5)):
        for new, old in zip(fresh[key], stored[key][:2], strict=True):
            assert same_sampled_fraction(old / scale, new / scale, 1024), (key, new)
