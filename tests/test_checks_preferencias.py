"""Las comprobaciones del módulo 10 (``helpers.checks.preferencias``).

Además de las pruebas de cada comprobación, el banco de respuestas
(``tests/banks/preferencias.py``) se ejecuta aquí contra las comprobaciones
visibles, sin el cuaderno: cada errónea falla en las celdas que dice (y pasa
en las demás) con su diagnóstico, y cada correcta pasa en silencio.
``tests/test_checks_bank.py`` lo repite con las celdas del cuaderno, pruebas
ocultas incluidas.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
import torch
from torch.nn import functional as F

import helpers
import helpers.tinylm as tl
from helpers.checks import CheckError
from helpers.checks import preferencias as checks
from helpers.tinylm import preferences as pref
from tests.banks import preferencias as bank

# ---------------------------------------------------------------------------
# Las referencias de las comprobaciones son las de helpers.tinylm.preferences
# ---------------------------------------------------------------------------


def test_references_agree_with_the_module():
    for case in checks.BT_CASES + checks.BT_STABLE_CASES:
        assert torch.allclose(checks._bt_ref(*case), pref.bradley_terry_loss(*case))
    for case in checks.ACCURACY_CASES:
        assert checks._acc_ref(*case) == pref.pairwise_accuracy(*case)
    for loss_type, cases in (("sigmoid", checks.DPO_CASES), ("ipo", checks.IPO_CASES)):
        for case in cases:
            assert torch.allclose(
                checks._dpo_ref(*case, loss_type), pref.dpo_loss(*case, loss_type)
            )


def test_implicit_reference_sums_the_answer_tokens():
    policy, reference, prompts, completions, beta = checks.implicit_case(0)
    got = checks._implicit_ref(policy, reference, prompts, completions, beta)
    with torch.no_grad():
        want = beta * (
            pref.sequence_log_probs(policy, prompts, completions)
            - pref.sequence_log_probs(reference, prompts, completions)
        )
    assert got.shape == (4,) and torch.allclose(got, want, atol=1e-6)
    # A mano, token a token, para la primera respuesta.
    row = completions[0][completions[0] != 0]
    sequence = torch.cat([prompts[0], row])[None]
    logits = [model(sequence)[0] for model in (policy, reference)]
    for row_logits in logits:  # el relleno nunca se puede escribir
        row_logits[:, tl.tokenizer.pad_id] = float("-inf")
    logits = [row_logits.log_softmax(-1) for row_logits in logits]
    positions = range(prompts.shape[1] - 1, sequence.shape[1] - 1)
    by_hand = sum(
        logits[0][t, sequence[0, t + 1]] - logits[1][t, sequence[0, t + 1]]
        for t in positions
    )
    assert abs(got[0].item() - beta * by_hand.item()) < 1e-4


def test_implicit_cases_have_answers_of_different_lengths_and_keep_the_rng():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    for seed in checks.IMPLICIT_SEEDS:
        policy, reference, prompts, completions, beta = checks.implicit_case(seed)
        lengths = tl.completion_mask(completions).sum(-1)
        assert len(set(lengths.tolist())) == len(lengths), lengths
        assert prompts.shape[1] + completions.shape[1] <= policy.cfg.max_len
        assert "política" in repr(policy) and "referencia" in repr(reference)
        assert all(p.requires_grad for p in reference.parameters())
    assert torch.equal(torch.random.get_rng_state(), before)
    # La referencia es otra: las recompensas no son cero
    assert checks._implicit_ref(*checks.implicit_case(1)).abs().min() > 0


# ---------------------------------------------------------------------------
# Las referencias pasan; cada error típico se diagnostica con su mensaje
# ---------------------------------------------------------------------------

CHECKS = [
    (checks.check_bradley_terry_loss, checks._bt_ref, checks.BT_MISTAKES),
    (checks.check_bradley_terry_loss_stable, checks._bt_ref, checks.BT_STABLE_MISTAKES),
    (checks.check_pairwise_accuracy, checks._acc_ref, checks.ACCURACY_MISTAKES),
    (checks.check_dpo_loss, checks._dpo_ref, checks.DPO_MISTAKES),
    (checks.check_ipo_loss, checks._dpo_ref, checks.IPO_MISTAKES),
    (checks.check_implicit_rewards, checks._implicit_ref, checks.IMPLICIT_MISTAKES),
    (checks.check_dpo_step, pref.dpo_step, checks.STEP_MISTAKES),
    (checks.check_dpo_step_clip, pref.dpo_step, checks.CLIP_MISTAKES),
    (checks.check_dpo_step_returns, pref.dpo_step, checks.RETURN_MISTAKES),
]


@pytest.mark.parametrize(
    ("check", "reference", "mistakes"), CHECKS, ids=[c.__name__ for c, _, _ in CHECKS]
)
def test_reference_passes_and_each_mistake_gets_its_own_message(
    check, reference, mistakes
):
    check(reference, quiet=True)
    for mistake in mistakes:
        with pytest.raises(CheckError) as caught:
            check(mistake.variant, quiet=True)
        assert mistake.message.splitlines()[0][:60] in str(caught.value), (
            mistake.id,
            str(caught.value),
        )
        # Su id, o el de otra fila con el mismo mensaje (el mismo error escrito
        # de otra manera) o el del desbordamiento, que se mira antes.
        same_message = {m.id for m in mistakes if m.message == mistake.message}
        assert caught.value.mistake in same_message | {"bt_overflow"}, (
            mistake.id,
            caught.value.mistake,
        )


@pytest.mark.slow
def test_dpo_step_reference_is_the_module_step_and_train_dpo():
    """La referencia de las comprobaciones es ``pref.dpo_step``, y tres pasos
    suyos son los tres primeros de ``pref.train_dpo`` (que calcula las
    log-probabilidades de la referencia una sola vez)."""
    pairs = pref.train_pairs().subset(slice(0, 3 * 64))
    cfg = pref.DPOConfig(epochs=1)
    trained, _ = pref.train_dpo(pairs, cfg)
    policy, reference = tl.load_pretrained(), tl.load_pretrained()
    optimizer = torch.optim.Adam(policy.parameters(), lr=cfg.lr)
    order = torch.randperm(
        len(pairs), generator=torch.Generator().manual_seed(cfg.seed)
    )
    for rows in order.split(cfg.batch_size):
        pref.dpo_step(policy, reference, optimizer, pairs.subset(rows), cfg.beta)
    for name, value in trained.state_dict().items():
        assert torch.allclose(value, policy.state_dict()[name], atol=1e-6), name


def test_dpo_step_cases_clip_and_keep_the_rng():
    """El recorte de la prueba del recorte siempre actúa; el de la prueba de los
    parámetros, nunca; y crear los casos no toca el estado aleatorio."""
    before = torch.random.get_rng_state()
    for seed in (*checks.STEP_SEEDS, 5, 6, 7, 8, 9):
        policy, reference, batch, beta = checks.step_case(seed)
        chosen = pref.implicit_rewards(
            policy, reference, batch.prompts, batch.chosen, beta
        )
        rejected = pref.implicit_rewards(
            policy, reference, batch.prompts, batch.rejected, beta
        )
        (-F.logsigmoid(chosen - rejected).mean()).backward()
        norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), float("inf"))
        assert checks.TIGHT_CLIP < norm < checks.NO_CLIP, (seed, norm)
        assert not torch.equal(batch.chosen, batch.rejected)
    assert torch.equal(torch.random.get_rng_state(), before)


def test_gradient_check_passes_the_reference_with_other_seeds():
    checks.check_implicit_rewards_grad(checks._implicit_ref, seeds=(3, 4), quiet=True)
    checks.check_implicit_rewards(checks._implicit_ref, seeds=(7, 8), quiet=True)


def test_checks_accept_the_notebook_style_hidden_cases():
    generator = torch.Generator().manual_seed(101)
    cases = [
        (torch.randn(n, generator=generator) * 3, torch.randn(n, generator=generator))
        for n in (1, 5, 33)
    ]
    checks.check_bradley_terry_loss(pref.bradley_terry_loss, cases=cases, quiet=True)
    with pytest.raises(CheckError, match="se desborda"):
        checks.check_bradley_terry_loss_stable(
            lambda c, r: -torch.log(torch.sigmoid(c - r)).mean(),
            cases=[(torch.tensor([-150.0, 3.0]), torch.tensor([150.0, -3.0]))],
        )
    five = [checks.dpo_case(9, 3, 0.1)[:5], checks.dpo_case(10, 2, 2.0)[:5]]
    checks.check_dpo_loss(pref.dpo_loss, cases=five, quiet=True)
    checks.check_ipo_loss(pref.dpo_loss, cases=five, quiet=True)


def test_dpo_loss_checks_the_default_loss_type():
    def ipo_by_default(pc, pr, rc, rr, beta, loss_type="ipo"):
        return pref.dpo_loss(pc, pr, rc, rr, beta, loss_type)

    with pytest.raises(CheckError, match='loss_type="sigmoid"'):
        checks.check_dpo_loss(ipo_by_default, quiet=True)


def test_a_float_loss_is_rejected_with_a_reason():
    with pytest.raises(CheckError, match="debe devolver un tensor"):
        checks.check_bradley_terry_loss(
            lambda c, r: pref.bradley_terry_loss(c, r).item(), quiet=True
        )
    with pytest.raises(CheckError, match="Conviértelo con .item()"):
        checks.check_pairwise_accuracy(
            lambda c, r: torch.tensor(pref.pairwise_accuracy(c, r)), quiet=True
        )


# ---------------------------------------------------------------------------
# El cuestionario: solo la forma, y el mismo mensaje para cualquier respuesta
# ---------------------------------------------------------------------------


def test_experiment_check_looks_only_at_the_form(capsys):
    outputs = set()
    for marks in [(True,) * 4, (False,) * 4, (True, False, np.bool_(True), False)]:
        checks.check_experiment_answer(dict(zip("abcd", marks, strict=True)))
        outputs.add(capsys.readouterr().out)
    assert len(outputs) == 1 and "no dice si aciertas" in outputs.pop()
    for wrong, phrase in [
        (None, "Todavía no has respondido la pregunta del experimento"),
        ([True] * 4, "es un diccionario"),
        ({"a": True, "b": True, "c": True}, "falta d\\."),
        ({"a": True, "b": True}, "faltan c y d\\."),
        ({"a": True, "b": "F", "c": True, "d": True}, "sin comillas; recibí el texto"),
        (
            {"a": True, "b": 1, "c": True, "d": True},
            "True o False, y recibí 1 \\(int\\)",
        ),
    ]:
        with pytest.raises(CheckError, match=phrase):
            checks.check_experiment_answer(wrong)


def test_exercises_are_registered_in_notebook_order():
    keys = [ex.key for ex in helpers.checks.exercises(checks.MODULE)]
    assert keys == [
        "bradley_terry_loss",
        "pairwise_accuracy",
        checks.EXPERIMENT_KEY,
        "dpo_loss",
        "implicit_rewards",
        "dpo_step",
        "optimal_policy",
    ]
    assert bank.EXPERIMENT == checks.EXPERIMENT_KEY


# ---------------------------------------------------------------------------
# El banco contra las comprobaciones visibles
# ---------------------------------------------------------------------------

#: Lo que la celda de preparación del cuaderno pone a mano.
SETUP = {"torch": torch, "F": F, "np": np, "tl": tl, "pref": pref, "helpers": helpers}

#: Celda de pruebas -> (función o variable del cuaderno, su comprobación visible).
VISIBLE = {
    "bradley_terry_loss": {
        "bradley_terry_loss_test": checks.check_bradley_terry_loss,
        "bradley_terry_loss_test_stable": checks.check_bradley_terry_loss_stable,
    },
    "pairwise_accuracy": {"pairwise_accuracy_test": checks.check_pairwise_accuracy},
    "dpo_loss": {
        "dpo_loss_test": checks.check_dpo_loss,
        "dpo_loss_test_ipo": checks.check_ipo_loss,
    },
    "implicit_rewards": {
        "implicit_rewards_test": checks.check_implicit_rewards,
        "implicit_rewards_test_grad": checks.check_implicit_rewards_grad,
    },
    "dpo_step": {
        "dpo_step_test": checks.check_dpo_step,
        "dpo_step_test_clip": checks.check_dpo_step_clip,
        "dpo_step_test_returns": checks.check_dpo_step_returns,
    },
    bank.EXPERIMENT: {"experiment_answer_test": checks.check_experiment_answer},
    "optimal_policy": {
        "optimal_policy_test": checks.check_optimal_policy,
        "optimal_policy_test_stable": checks.check_optimal_policy_stable,
    },
}
NAMES = {bank.EXPERIMENT: "answer_experiment"}


def _run(exercise: str, source: str) -> list[tuple[str, BaseException | None, str]]:
    namespace = dict(SETUP)
    exec(compile(source, f"<{exercise}>", "exec"), namespace)
    value = namespace[NAMES.get(exercise, exercise)]
    outcomes = []
    for test_id, check in VISIBLE[exercise].items():
        stderr = io.StringIO()
        error = None
        with (
            contextlib.redirect_stderr(stderr),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            try:
                check(value)
            except BaseException as caught:  # noqa: BLE001 - lo informamos
                error = caught
        outcomes.append((test_id, error, stderr.getvalue()))
    return outcomes


def _answers(kind: str) -> list:
    return [
        pytest.param(exercise, answer, id=f"{exercise}:{answer.name}")
        for exercise, answers in getattr(bank, kind).items()
        for answer in answers
    ]


def test_bank_covers_every_exercise():
    assert set(bank.WRONG) == set(VISIBLE)
    for exercise in VISIBLE:
        assert len(bank.WRONG[exercise]) >= 4, exercise
        if exercise != bank.EXPERIMENT:  # su clave vive en el cuaderno
            assert len(bank.RIGHT[exercise]) >= 2, exercise


@pytest.mark.parametrize(("exercise", "answer"), _answers("WRONG"))
def test_wrong_answer_fails_the_visible_checks_it_names(exercise, answer):
    outcomes = _run(exercise, answer.source)
    if answer.name in bank.KEY_ONLY:
        # Bien escrita: la comprobación visible no dice si acierta
        assert all(error is None for _, error, _ in outcomes), outcomes
        return
    must_fail = set(answer.fails or VISIBLE[exercise])
    assert must_fail <= set(VISIBLE[exercise])
    for test_id, error, stderr in outcomes:
        assert stderr == "", stderr
        if test_id in must_fail:
            assert isinstance(error, AssertionError), (test_id, error)
        else:
            assert error is None, (test_id, error)
    first = next(error for test_id, error, _ in outcomes if test_id in must_fail)
    assert getattr(first, "mistake", None) == answer.mistake, str(first)


@pytest.mark.parametrize(("exercise", "answer"), _answers("RIGHT"))
def test_right_answer_passes_the_visible_checks(exercise, answer):
    for test_id, error, stderr in _run(exercise, answer.source):
        assert error is None, f"{test_id}: {error}"
        assert stderr == "", stderr
