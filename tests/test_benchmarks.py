"""El banco de pruebas: la regla de «llega», la tabla y los datos de los cuadernos."""

from __future__ import annotations

from benchmarks import report
from benchmarks.cartpole import Run, render_table
from helpers import bench_data
from tests.notebooks import REPO


def _agent(name, runs, sb3_of=None):
    return {
        "name": name,
        "sb3_of": sb3_of,
        "runs": [Run(evals, 5000).to_dict(seed) for seed, evals in enumerate(runs)],
    }


def test_rule_first_solved_and_ratios():
    run = Run([(1000, 1.0, 100.0), (2100, 2.0, 480.0), (3000, 3.0, 500.0)], 5000)
    assert run.solved == (2100, 2.0)
    assert Run([(1000, 1.0, 474.9)], 5000).solved is None
    assert Run.from_dict(run.to_dict(0)) == run
    agents = [
        _agent("PPO", [[(10, 1.0, 500.0)], [(30, 3.0, 500.0)]]),
        _agent("PPO · SB3", [[(40, 4.0, 500.0)], [(40, 2.0, 100.0)]], "PPO"),
    ]
    lines = render_table(agents, 2)
    assert "| PPO | 2/2 | 20 (10–30) | 2,0 (1,0–3,0) | 0,50 | 0,50 |" in lines
    assert "| PPO · SB3 | 1/2 | 40 (40–40) | 4,0 (4,0–4,0) |  |  |" in lines


def test_benchmarks_md_is_rendered_from_the_data():
    """BENCHMARKS.md y helpers/data/benchmarks.json son la misma ejecución."""
    committed = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert report.render(bench_data.load()) == committed, (
        "BENCHMARKS.md no sale de helpers/data/benchmarks.json: vuelve a "
        "ejecutar `make bench` y confirma los dos"
    )
    assert not bench_data.load()["quick"], "los datos de los cuadernos no son --quick"


def test_cartpole_results_for_the_notebooks():
    data = bench_data.load()["cartpole"]
    for agent in data["agents"]:
        result = bench_data.cartpole(agent["name"])
        assert result.seeds == data["seeds"]
        assert len(result.steps) == len(result.seconds) == result.n_solved
        for steps, seconds, evals in zip(
            result.steps, result.seconds, result.evaluations, strict=False
        ):
            assert (steps, seconds) in [(s, t) for s, t, _ in evals]
