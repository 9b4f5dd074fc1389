"""Los verificadores con math-verify (helpers.puente.rewards): casos límite.

Formato y corrección van por separado; una referencia ilegible paga 0 y se
informa, nunca se paga.
"""

from __future__ import annotations

import pytest
import torch

from helpers.puente import (
    TRLReward,
    check_answer,
    correctness_reward,
    format_reward,
    score_batch,
)
from helpers.tinylm import solution_text, tokenizer, verify


@pytest.mark.parametrize(
    ("completion", "gold", "fmt", "correct"),
    [
        # El formato del curso, bien y mal
        (solution_text(17, 24), 408, 1, 1),
        ("17×20+17×4=340+68=407.", 408, 1, 0),
        # \boxed, con texto alrededor
        ("La respuesta es \\boxed{408}", "408", 1, 1),
        ("La respuesta es \\boxed{408}.", "408", 1, 1),
        ("$\\boxed{408}$", "408", 1, 1),
        # Texto después de la respuesta: el recuadro manda, pero no es formato
        ("\\boxed{408} porque 17 × 24 = 408 y 12 más", "408", 0, 1),
        # ...y sin recuadro, el último número la sustituye: no se paga
        ("408. Y luego 12", "408", 0, 0),
        # Separadores de miles
        ("\\boxed{1,234}", "1234", 1, 1),
        ("\\boxed{1{,}234}", "1234", 1, 1),
        ("La respuesta es 1,234", "1234", 0, 1),
        ("\\boxed{1234}", "1,234", 1, 1),
        # 408.0 es 408; 408.5 no
        ("\\boxed{408.0}", "408", 1, 1),
        ("408.0", "408", 0, 1),
        ("\\boxed{408.5}", "408", 1, 0),
        # LaTeX: fracciones y matemáticas en línea
        ("\\boxed{\\frac{816}{2}}", "408", 1, 1),
        ("$408$", "408", 0, 1),
        ("\\boxed{408}", "\\frac{816}{2}", 1, 1),
        # Sin \boxed: un número suelto es correcto pero no tiene formato
        ("La respuesta es 408", "408", 0, 1),
        ("408", "408", 0, 1),
        # Nada que leer, o un recuadro vacío o sin cerrar
        ("no lo sé", "408", 0, 0),
        ("", "408", 0, 0),
        ("\\boxed{}", "408", 0, 0),
        ("\\boxed{408", "408", 0, 0),  # sin cerrar: math-verify no lee nada
        # Referencias con otras formas: GSM8K («#### 72») y en recuadro
        ("\\boxed{72}", "#### 72", 1, 1),
        ("\\boxed{72}", "\\boxed{72}", 1, 1),
    ],
)
def test_edge_cases(completion, gold, fmt, correct):
    verdict = check_answer(completion, gold)
    assert verdict.gold_ok
    assert (verdict.format, verdict.correctness) == (fmt, correct), verdict
    assert format_reward(completion, gold) == fmt
    assert correctness_reward(completion, gold) == correct


@pytest.mark.parametrize("gold", ["", "   ", "N/A", "sin respuesta", "\\boxed{}"])
def test_unparsable_gold_pays_zero_and_is_reported(gold):
    # Ni siquiera una respuesta «igual de vacía» cobra
    for completion in ("\\boxed{408}", "", gold, "\\boxed{}", solution_text(17, 24)):
        verdict = check_answer(completion, gold)
        assert not verdict.gold_ok
        assert (verdict.format, verdict.correctness) == (0.0, 0.0)
    batch = score_batch(["\\boxed{408}", "\\boxed{408}"], ["408", gold], 0.5)
    assert batch.rewards == [1.5, 0.0]
    assert batch.unparsable_golds == [1]
    assert len(batch.warnings) == 1 and "ejemplo 1" in batch.warnings[0]


def test_agrees_with_the_course_verifier_on_its_own_format():
    """En el formato del curso, math-verify da lo mismo que ``verify``."""
    cases = [(a, b, solution_text(a, b)) for a, b in [(17, 24), (99, 99), (10, 10)]]
    cases += [(17, 24, "17×20+17×4=340+68=409."), (17, 24, "17×20+17×4=340+68=")]
    for a, b, text in cases:
        assert correctness_reward(text, a * b) == verify(text, a, b), text


def test_score_batch_weights_format():
    batch = score_batch(
        ["\\boxed{408}", "408", "\\boxed{407}"], [408, 408, 408], format_weight=0.25
    )
    assert batch.correctness == [1.0, 1.0, 0.0]
    assert batch.format == [1.0, 0.0, 1.0]
    assert batch.rewards == [1.25, 1.0, 0.25]
    assert batch.unparsable_golds == []


def test_trl_reward_reads_completion_ids_not_text():
    """TRL quita el «.» final del texto; los ids lo conservan."""
    ids = tokenizer.encode(solution_text(17, 24)) + [tokenizer.pad_id] * 3
    stripped_text = solution_text(17, 24)[:-1]  # lo que pasaría TRL como texto
    correctness, fmt = TRLReward("correctness"), TRLReward("format")
    assert correctness.__name__ == "correctness"
    kwargs = {"completions": [stripped_text] * 2, "answer": ["408", "409"]}
    assert correctness(completion_ids=[ids, torch.tensor(ids)], **kwargs) == [1.0, 0.0]
    assert fmt(completion_ids=[ids, ids], **kwargs) == [1.0, 1.0]
    # Una referencia ilegible: 0, avisada y apuntada
    with pytest.warns(UserWarning, match="ilegible"):
        assert correctness(completion_ids=[ids], answer=[""]) == [0.0]
    assert correctness.unparsable_golds == [""]
    with pytest.raises(ValueError, match="completion_ids"):
        correctness(completions=[stripped_text], answer=["408"])
