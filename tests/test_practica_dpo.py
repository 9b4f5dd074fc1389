"""DPOTrainer construido como en el ejercicio 6 del módulo 11, frente a la
``dpo_loss`` del módulo 10 y al DPO del curso (``helpers/practica/dpo.py``).

Tolerancias de la igualdad (float32, un hilo), las de ``dpo.LOSS_RTOL`` y
``dpo.GRAD_RTOL``: |pérdida_TRL − pérdida_propia| ≤ 1e-6 · |pérdida_TRL| y
max|∇TRL − ∇propio| ≤ 1e-5 · max|∇TRL| sobre todos los parámetros. Medido al
escribir la prueba, con la política movida y un lote de 16 pares: 8e-8 y
8e-7 (sigmoid), 1e-7 y 1e-6 (ipo). Con la elegida y la rechazada cambiadas, o
con la pérdida equivocada, la comparación falla muy lejos de la tolerancia.

El entrenamiento lado a lado (``train_side_by_side``) se prueba con tres
semillas (los pares y la semilla del entrenador): lo que dice la prosa del
cuaderno (``side_by_side_findings``) se cumple en las tres.
"""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from helpers.puente.convert import load_pretrained_gpt2, to_gpt2
from helpers.puente.dpo_equality import moved_policy
from helpers.tinylm import MAX_NEW_TOKENS, tokenizer
from helpers.tinylm import preferences as pref

datasets = pytest.importorskip("datasets")
trl = pytest.importorskip("trl")

from helpers.practica import dpo  # noqa: E402  (importa transformers)

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def dataset():
    torch.set_num_threads(1)  # el fixture de módulo corre antes que one_thread
    return dpo.preference_dataset()


def moved_trainer(dataset, loss_type, tmp_path):
    """El entrenador de referencia con una política que ya se alejó del SFT."""
    return dpo.reference_dpo_trainer(
        to_gpt2(moved_policy()),
        load_pretrained_gpt2(),
        dataset,
        loss_type,
        dpo.BETAS[loss_type],
        tmp_path,
    )


def swapped_dpo_loss(pc, pr, rc, rr, beta, loss_type="sigmoid"):
    """El error típico: la elegida y la rechazada cambiadas (h → −h)."""
    return pref.dpo_loss(pr, pc, rr, rc, beta, loss_type)


def always_dpo_loss(pc, pr, rc, rr, beta, loss_type="sigmoid"):
    """Otro: ignora loss_type y devuelve siempre DPO."""
    h = (pc - rc) - (pr - rr)
    return -F.logsigmoid(beta * h).mean()


# --- Los datos ---------------------------------------------------------------


def test_dataset_has_trl_columns_and_is_deterministic(dataset):
    assert dataset.column_names == list(dpo.COLUMNS)
    assert len(dataset) == dpo.N_PAIRS
    row = dataset[0]
    assert row["prompt"][0]["role"] == "user"
    assert row["chosen"][0]["role"] == row["rejected"][0]["role"] == "assistant"
    again = dpo.preference_dataset()
    assert again.to_dict() == dataset.to_dict()
    assert dpo.preference_dataset(seed=1).to_dict() != dataset.to_dict()
    dpo.check_preference_dataset(dataset)  # no falla


def test_trl_tokenizes_the_course_ids(dataset, tmp_path):
    """TRL, con la plantilla de chat del curso, entrena exactamente los ids del
    módulo 10."""
    pairs = dpo.preference_pairs()
    trainer = dpo.reference_dpo_trainer(
        load_pretrained_gpt2(),
        load_pretrained_gpt2(),
        dataset,
        "sigmoid",
        0.1,
        tmp_path,
    )
    seen = dpo.trainer_pairs(trainer)
    assert torch.equal(seen.prompts, pairs.prompts)
    assert torch.equal(seen.chosen, pairs.chosen)
    assert torch.equal(seen.rejected, pairs.rejected)
    assert seen.problems == pairs.problems
    assert seen.chosen.shape[1] == MAX_NEW_TOKENS
    assert torch.equal(seen.chosen_utility, pairs.chosen_utility)


def test_conversational_keeps_an_unended_answer(dataset, tmp_path):
    """Una respuesta cortada (sin «.») se entrena tal cual en forma
    conversacional; en texto plano TRL le añadiría el «.»: otra secuencia."""
    row = dataset[0]
    cut = row["chosen"][0]["content"].removesuffix(".")
    assert cut != row["chosen"][0]["content"]
    conversational = datasets.Dataset.from_list(
        [{**row, "chosen": [{"role": "assistant", "content": cut}]}]
    )
    plain = datasets.Dataset.from_list(
        [
            {
                "prompt": row["prompt"][0]["content"],
                "chosen": cut,
                "rejected": row["rejected"][0]["content"],
            }
        ]
    )
    ids = {}
    for name, data in (("conversational", conversational), ("plain", plain)):
        trainer = dpo.reference_dpo_trainer(
            load_pretrained_gpt2(),
            load_pretrained_gpt2(),
            data,
            "sigmoid",
            0.1,
            tmp_path,
        )
        ids[name] = trainer.train_dataset[0]["chosen_ids"]
    assert ids["conversational"] == list(tokenizer.encode(cut))
    assert ids["plain"] == ids["conversational"] + [tokenizer.end_id]


# --- La igualdad con la dpo_loss propia ----------------------------------------


@pytest.mark.parametrize("loss_type", dpo.LOSS_TYPES)
def test_trl_loss_equals_own_dpo_loss(dataset, tmp_path, loss_type):
    trainer = moved_trainer(dataset, loss_type, tmp_path)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    c = dpo.compare_with_own_loss(trainer, pref.dpo_loss, loss_type)
    assert c.loss_type == loss_type and c.n_pairs == dpo.BATCH_SIZE
    assert c.matches(), c
    assert (
        c.relative_loss_diff <= dpo.LOSS_RTOL and c.relative_grad_diff <= dpo.GRAD_RTOL
    )
    assert c.grad_scale > 1e-2  # hay gradiente que comparar
    # h no es trivial: los dos signos y lejos de 0
    margins = torch.tensor(c.margins)
    assert (margins > 0).any() and (margins < 0).any(), c
    assert (margins.abs().max() * (c.beta if loss_type == "sigmoid" else 1)) > 0.1
    # No entrena, no deja gradientes ni métricas de TRL
    for n, p in trainer.model.named_parameters():
        assert torch.equal(p, before[n]) and p.grad is None
    assert all(not m for m in trainer._metrics.values())
    assert trainer._total_train_tokens == 0
    assert "|Δ|" in str(c)
    # Con la elegida y la rechazada cambiadas, la comparación falla de lejos
    swapped = dpo.compare_with_own_loss(trainer, swapped_dpo_loss, loss_type)
    assert swapped.relative_loss_diff > 1e3 * dpo.LOSS_RTOL, swapped
    assert swapped.relative_grad_diff > 1e3 * dpo.GRAD_RTOL, swapped


def test_ipo_needs_the_ipo_formula(dataset, tmp_path):
    """Una dpo_loss sin la rama de IPO no pasa por la de TRL."""
    trainer = moved_trainer(dataset, "ipo", tmp_path)
    c = dpo.compare_with_own_loss(trainer, always_dpo_loss, "ipo")
    assert not c.matches()
    assert c.relative_loss_diff > 1e3 * dpo.LOSS_RTOL


def test_equality_at_the_start_is_about_gradients(dataset, tmp_path):
    """Con la política igual a la referencia, h = 0: la pérdida es log 2 con
    cualquier signo, y solo el gradiente delata el signo cambiado."""
    trainer = dpo.reference_dpo_trainer(
        load_pretrained_gpt2(),
        load_pretrained_gpt2(),
        dataset,
        "sigmoid",
        0.1,
        tmp_path,
    )
    c = dpo.compare_with_own_loss(trainer, pref.dpo_loss, "sigmoid")
    assert c.matches(), c
    assert max(abs(h) for h in c.margins) == 0
    swapped = dpo.compare_with_own_loss(trainer, swapped_dpo_loss, "sigmoid")
    assert swapped.relative_loss_diff <= dpo.LOSS_RTOL
    assert swapped.relative_grad_diff > 1.5  # el gradiente, del revés


# --- Lado a lado ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_side_by_side_shows_what_the_notebook_says(tmp_path, seed, capsys):
    data = dpo.preference_dataset(seed=seed)
    trainer = dpo.reference_dpo_trainer(
        load_pretrained_gpt2(),
        load_pretrained_gpt2(),
        data,
        "sigmoid",
        0.1,
        tmp_path,
        seed=seed,
    )
    result = dpo.train_side_by_side(trainer, epochs=dpo.EPOCHS)
    printed = capsys.readouterr().out
    assert "rechazadas" in printed and "época" in printed
    assert result["epoch"] == list(range(dpo.EPOCHS + 1))
    assert result["config"]["seed"] == seed
    for side in ("trl", "course"):
        for key in dpo.SERIES:
            assert len(result[side][key]) == dpo.EPOCHS + 1
            assert (
                result[side][key][0] == pytest.approx(0, abs=1e-9) or "ratio" not in key
            )
        assert result[side]["margin"][0] == 0
    # Al empezar, los dos lados miden el mismo modelo: difieren solo por el relleno
    for key in ("chosen", "rejected"):
        assert result["trl"][key][0] == pytest.approx(
            result["course"][key][0], abs=0.01
        )

    # La primera época baraja igual en los dos lados (la misma semilla): solo
    # difiere el relleno; desde la segunda, los lotes cambian (ver _differences)
    def gap(epoch):
        return max(
            abs(result["trl"][k][epoch] - result["course"][k][epoch])
            for k in dpo.SERIES
        )

    assert gap(1) < 2e-3, result
    assert gap(dpo.EPOCHS) > 5 * 2e-3, result
    findings = dpo.side_by_side_findings(result)
    assert all(findings.values()), (findings, result)
    assert trainer.state.global_step == dpo.EPOCHS * (dpo.N_PAIRS // dpo.BATCH_SIZE)


def test_findings_can_fail():
    """Con curvas que no hacen lo que dice la prosa, cada afirmación cae."""
    flat = {
        "chosen": [0.0] * 3,
        "rejected": [0.0] * 3,
        "chosen_ratio": [0.0, -0.1, -0.2],
        "rejected_ratio": [0.0, 0.1, 0.2],
        "margin": [0.0, -0.2, -0.4],
    }
    good = {
        "chosen": [0.0] * 3,
        "rejected": [0.0] * 3,
        "chosen_ratio": [0.0, 0.3, 0.1],
        "rejected_ratio": [0.0, -2.0, -4.0],
        "margin": [0.0, 2.3, 4.1],
    }
    assert all(dpo.side_by_side_findings({"trl": good, "course": good}).values())
    bad = dpo.side_by_side_findings({"trl": flat, "course": good})
    assert not any(bad.values()), bad


def test_plot_side_by_side(tmp_path):
    series = {
        "chosen": [-1.0, -1.1],
        "rejected": [-3.0, -4.0],
        "chosen_ratio": [0.0, -0.1],
        "rejected_ratio": [0.0, -1.0],
        "margin": [0.0, 0.9],
    }
    result = {
        "epoch": [0, 1],
        "trl": series,
        "course": series,
        "config": {"loss_type": "sigmoid", "beta": 0.1},
    }
    fig = dpo.plot_side_by_side(result, tmp_path / "lado.png")
    assert (tmp_path / "lado.png").stat().st_size > 0
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == [
        "Log-probabilidad media de las respuestas",
        "Cociente con la referencia",
    ]
    assert all(ax.get_xlabel() == "época" for ax in fig.axes)


# --- Entradas malas ------------------------------------------------------------


def test_bad_loss_type(dataset, tmp_path):
    with pytest.raises(dpo.DPOInputError, match="'sigmoid' .* o 'ipo'"):
        dpo.reference_dpo_trainer(
            load_pretrained_gpt2(),
            load_pretrained_gpt2(),
            dataset,
            "hinge",
            0.1,
            tmp_path,
        )
    trainer = moved_trainer(dataset, "sigmoid", tmp_path)
    with pytest.raises(dpo.DPOInputError, match="'sigmoid' .* o 'ipo'"):
        dpo.compare_with_own_loss(trainer, pref.dpo_loss, "dpo")
    with pytest.raises(dpo.DPOInputError, match="mismo loss_type"):
        dpo.compare_with_own_loss(trainer, pref.dpo_loss, "ipo")
    # Un DPOTrainer con otra pérdida de TRL (que el módulo 10 no escribe)
    hinge = trl.DPOTrainer(
        model=load_pretrained_gpt2(),
        ref_model=load_pretrained_gpt2(),
        args=trl.DPOConfig(
            output_dir=str(tmp_path), use_cpu=True, loss_type=["hinge"], report_to=[]
        ),
        train_dataset=dataset,
        processing_class=trainer.processing_class,
    )
    with pytest.raises(dpo.DPOInputError, match="'hinge'"):
        dpo.train_side_by_side(hinge, verbose=False)


@pytest.mark.parametrize("drop", dpo.COLUMNS)
def test_dataset_without_a_column(dataset, tmp_path, drop):
    broken = dataset.remove_columns(drop)
    with pytest.raises(dpo.DPOInputError, match=f"faltan las columnas \\['{drop}'\\]"):
        dpo.check_preference_dataset(broken)
    with pytest.raises(dpo.DPOInputError, match="faltan las columnas"):
        dpo.reference_dpo_trainer(
            load_pretrained_gpt2(),
            load_pretrained_gpt2(),
            broken,
            "sigmoid",
            0.1,
            tmp_path,
        )


def test_not_a_dataset():
    with pytest.raises(dpo.DPOInputError, match="datasets.Dataset"):
        dpo.check_preference_dataset(
            [{"prompt": "1×2=", "chosen": "2.", "rejected": "3."}]
        )
    with pytest.raises(dpo.DPOInputError, match="entero positivo"):
        dpo.preference_dataset(0)


def test_bad_own_loss_and_trainer(dataset, tmp_path):
    trainer = moved_trainer(dataset, "sigmoid", tmp_path)
    with pytest.raises(dpo.DPOInputError, match="tensor escalar"):
        dpo.compare_with_own_loss(
            trainer, lambda *a, **k: pref.dpo_loss(*a, **k).item(), "sigmoid"
        )
    with pytest.raises(dpo.DPOInputError, match="tensor escalar"):
        dpo.compare_with_own_loss(
            trainer, lambda pc, pr, rc, rr, beta, loss_type: pc - pr, "sigmoid"
        )
    with pytest.raises(dpo.DPOInputError, match="gradiente no llega"):
        dpo.compare_with_own_loss(
            trainer, lambda *a, **k: pref.dpo_loss(*a, **k).detach(), "sigmoid"
        )
    with pytest.raises(dpo.DPOInputError, match="trl.DPOTrainer"):
        dpo.compare_with_own_loss(object(), pref.dpo_loss, "sigmoid")
    # La política movida no es la referencia: lado a lado no parte del mismo punto
    with pytest.raises(dpo.DPOInputError, match="mismos pesos"):
        dpo.train_side_by_side(trainer, verbose=False)
    with pytest.raises(dpo.DPOInputError, match="entero positivo"):
        dpo.train_side_by_side(trainer, epochs=0, verbose=False)


def test_trained_trainer_is_refused(dataset, tmp_path):
    trainer = dpo.reference_dpo_trainer(
        load_pretrained_gpt2(),
        load_pretrained_gpt2(),
        dataset,
        "sigmoid",
        0.1,
        tmp_path,
    )
    trainer.args.num_train_epochs = 1
    trainer.args.max_steps = 1
    trainer.train()
    with pytest.raises(dpo.DPOInputError, match="ya entrenó"):
        dpo.train_side_by_side(trainer, verbose=False)


def test_pairs_that_are_not_the_course_ones(tmp_path):
    """El DPO del curso solo entrena enunciados «ab×cd=»: otro da un error claro."""
    data = datasets.Dataset.from_list(
        [
            {
                "prompt": [{"role": "user", "content": "7×8="}],
                "chosen": [{"role": "assistant", "content": "56."}],
                "rejected": [{"role": "assistant", "content": "54."}],
            }
        ]
    )
    trainer = dpo.reference_dpo_trainer(
        load_pretrained_gpt2(), load_pretrained_gpt2(), data, "sigmoid", 0.1, tmp_path
    )
    with pytest.raises(dpo.DPOInputError, match="no es uno del curso"):
        dpo.train_side_by_side(trainer, verbose=False)
