"""El cuestionario del módulo 06: hay que responderlo, no adivinarlo.

Cuatro preguntas de un punto: dos piden un número (1: una componente del
gradiente de REINFORCE con línea base; 3: ``L^CLIP`` de un minilote) y dos, marcar
cuatro afirmaciones como verdaderas o falsas (2: línea base y ventaja; 4: KL y
entropía). La comprobación visible (``helpers.checks.ppo.check_quiz_answer``)
solo mira la forma de la respuesta; la clave y su explicación viven solo en las
pruebas ocultas del cuaderno de soluciones.

Estas pruebas ejecutan esas pruebas ocultas tal como están en el cuaderno y
comprueban que la clave es correcta (calculada aquí de otra manera), que la
comprobación visible no deja adivinarla y que quien responde a ciegas saca, en
esperanza, como mucho un 25 %.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import helpers
from autograder.results import diagnostic
from helpers import ppo
from helpers.checks import CheckError
from helpers.checks.ppo import QUIZ_KINDS, STATEMENT_KEYS, check_quiz_answer
from helpers.widgets.ppo import ClipExplorer
from tests.notebooks import (
    HIDDEN_REGION,
    REPO,
    course_path,
    exercises,
    read,
    solution_path,
    student_version,
)

SOLUTION = read(solution_path("06_ppo"))
QUIZ = {
    int(ex.grade_id.removeprefix("quiz_")): ex
    for ex in exercises(SOLUTION)
    if re.fullmatch(r"quiz_\d", ex.grade_id)
}
NUMBERS = [n for n, kind in QUIZ_KINDS.items() if kind == "number"]
STATEMENTS = [n for n, kind in QUIZ_KINDS.items() if kind == "statements"]
TOLERANCE = 1e-3  # la de las pruebas ocultas: «tres decimales al menos»


def _hidden(number: int) -> str:
    """El código de la prueba oculta de la pregunta ``number``."""
    return HIDDEN_REGION.search(QUIZ[number].tests[0][1]).group(1)


def _grade(number: int, answer) -> tuple[bool, str, dict]:
    """Califica ``answer`` con la prueba oculta: (¿acierta?, mensaje, variables)."""
    namespace = {"helpers": helpers, f"answer_{number}": answer}
    try:
        exec(compile(_hidden(number), f"<quiz_{number}_test>", "exec"), namespace)
    except AssertionError as error:
        return False, str(error), namespace
    return True, "", namespace


def _key(number: int) -> dict:
    """Las variables de la prueba oculta (la clave, los datos del enunciado...)."""
    return _grade(number, _solution_answer(number))[2]


def _solution_answer(number: int):
    """La respuesta del cuaderno de soluciones, calculada como allí."""
    namespace = {"torch": torch}
    exec(student_version(QUIZ[number].solution), namespace)
    return namespace[f"answer_{number}"]


def _question(number: int) -> str:
    """El enunciado (Markdown) de la pregunta, sin las marcas de MyST."""
    cell = next(c for c in SOLUTION.cells if c.get("id") == f"quiz-{number}-md")
    return cell.source.replace("{,}", ",").replace("\\ ", " ")


def _statements(number: int) -> dict[str, str]:
    """Las afirmaciones ``a)``–``d)`` de una pregunta de verdadero o falso."""
    found = re.findall(r"^- \*\*([a-d])\)\*\* (.+)$", _question(number), re.M)
    return dict(found)


def _visible(number: int, answer) -> str:
    """Lo que escribe la comprobación visible (falla si lanza algo)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        check_quiz_answer(number, answer)
    return out.getvalue()


def _all_marks() -> list[dict[str, bool]]:
    """Las 16 formas de marcar cuatro afirmaciones."""
    return [
        dict(zip(STATEMENT_KEYS, marks, strict=True))
        for marks in itertools.product((True, False), repeat=4)
    ]


# ---------------------------------------------------------------------------
# La forma del cuestionario
# ---------------------------------------------------------------------------


def test_four_questions_of_one_point_two_numbers_and_two_sets_of_statements():
    assert sorted(QUIZ) == [1, 2, 3, 4]
    assert all(ex.points == 1 for ex in QUIZ.values())
    assert NUMBERS == [1, 3] and STATEMENTS == [2, 4]
    for number in STATEMENTS:
        assert list(_statements(number)) == list(STATEMENT_KEYS)
        assert set(_key(number)[f"q{number}_key"]) == set(STATEMENT_KEYS)


def test_the_solution_answers_are_the_key():
    for number in QUIZ:
        passed, message, _ = _grade(number, _solution_answer(number))
        assert passed, message


# ---------------------------------------------------------------------------
# La comprobación visible no revela nada
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("number", NUMBERS)
def test_visible_check_says_the_same_for_every_number(number):
    key = _key(number)[f"q{number}_key"]
    guesses = [key, -key, 0, 7, -1.25, 1e6, np.float32(0.5), torch.tensor(2.0)]
    guesses += list(np.linspace(-3, 3, 61))
    outputs = {_visible(number, guess) for guess in guesses}
    assert len(outputs) == 1
    (output,) = outputs
    assert "no dice si aciertas" in output and "se califica al corregir" in output


@pytest.mark.parametrize("number", STATEMENTS)
def test_brute_force_over_the_statements_learns_nothing(number):
    """Las 16 marcas pasan la comprobación visible con el mismo mensaje, y la
    prueba oculta solo acepta una: la de la solución."""
    outputs = {_visible(number, marks) for marks in _all_marks()}
    assert len(outputs) == 1
    accepted = [marks for marks in _all_marks() if _grade(number, marks)[0]]
    assert accepted == [_solution_answer(number)]


@pytest.mark.parametrize(
    ("number", "answer", "phrase"),
    [
        (1, None, "Todavía no has respondido"),
        (1, "0,12", "no un texto"),
        (1, "0.12", "no un texto"),
        (1, True, "no True o False"),
        (1, torch.tensor([0.1, 0.2]), "un solo número"),
        (1, [0.12], "debe ser un número"),
        (3, float("nan"), "finito"),
        (3, math.inf, "finito"),
        (3, 1 + 2j, "debe ser un número"),
        (2, None, "Todavía no has respondido"),
        (2, [True, False, True, False], "diccionario"),
        (2, {"a": None, "b": None, "c": None, "d": None}, "Todavía no has marcado"),
        (2, {"A": True, "b": True, "c": True, "d": True}, "falta a"),
        (4, {"a": True, "b": True, "c": True, "d": True, "e": 1}, "sobra 'e'"),
        (4, {"a": "True", "b": True, "c": True, "d": True}, "sin comillas"),
        (4, {"a": 1, "b": True, "c": True, "d": True}, "True o False"),
    ],
)
def test_visible_check_rejects_malformed_answers(number, answer, phrase):
    with pytest.raises(CheckError, match=re.escape(phrase)):
        check_quiz_answer(number, answer, quiet=True)


def test_visible_check_knows_only_four_questions():
    with pytest.raises(ValueError):
        check_quiz_answer(5, 1.0)


# ---------------------------------------------------------------------------
# Las pruebas ocultas: la clave, bien calculada
# ---------------------------------------------------------------------------


def test_question_texts_show_the_data_of_the_hidden_tests():
    number = helpers.number
    q1, text1 = _key(1), _question(1)
    pi = "; ".join(number(p, 1) for p in q1["q1_pi"])
    assert f"\\pi_\\theta = ({pi})" in text1
    assert f"Se muestrea la acción {q1['q1_action']}" in text1
    assert f"$G = {number(q1['q1_return'], 0)}$" in text1
    assert f"$b = {number(q1['q1_baseline'], 1)}$" in text1
    q3, text3 = _key(3), _question(3)
    assert f"\\varepsilon = {number(q3['q3_eps'], 1)}" in text3
    for i, (r, a) in enumerate(q3["q3_samples"], start=1):
        assert f"| {i} | {number(r, 1)} | {number(a, 0)} |" in text3


def test_question_1_key_is_the_autograd_gradient():
    q1 = _key(1)
    logits = torch.log(torch.tensor(q1["q1_pi"], dtype=torch.float64))
    logits.requires_grad_(True)
    assert torch.allclose(torch.softmax(logits, 0), logits.exp().detach())
    advantage = q1["q1_return"] - q1["q1_baseline"]
    (advantage * torch.log_softmax(logits, 0)[q1["q1_action"]]).backward()
    want = torch.tensor(q1["q1_grad"], dtype=torch.float64)
    torch.testing.assert_close(logits.grad, want)
    assert q1["q1_key"] == pytest.approx(logits.grad[0].item(), abs=1e-12)


def test_question_3_key_is_the_clipped_objective():
    q3 = _key(3)
    samples = torch.tensor(q3["q3_samples"], dtype=torch.float64)
    ratios, advantages = samples[:, 0], samples[:, 1]
    loss = ppo.clipped_surrogate_loss(
        torch.log(ratios), torch.zeros(3, dtype=torch.float64), advantages, q3["q3_eps"]
    )
    assert q3["q3_key"] == pytest.approx(-loss.item(), abs=1e-12)
    per_sample = [
        ClipExplorer(clip_eps=q3["q3_eps"], advantage=a).objective(r)[0]
        for r, a in q3["q3_samples"]
    ]
    assert q3["q3_key"] == pytest.approx(np.mean(per_sample), abs=1e-12)
    # Cada muestra cae en un caso distinto de la tabla de la sección 3.
    explorer = ClipExplorer(clip_eps=q3["q3_eps"])
    regions = []
    for r, a in q3["q3_samples"]:
        explorer.set_advantage(a)
        regions.append(explorer.region(r))
    assert "sin recortar" in regions[0]
    assert all("recortada" in region for region in regions[1:])


def _softmax_case():
    generator = torch.Generator().manual_seed(6)
    logits = torch.randn(4, generator=generator, dtype=torch.float64)
    pi = torch.softmax(logits, 0)
    # score[a] = ∇_θ log π(a): la fila a de la jacobiana de log-softmax.
    score = torch.eye(4, dtype=torch.float64) - pi
    return logits, pi, score


def _question_2_truths() -> dict[str, bool]:
    """Cada afirmación de la pregunta 2, comprobada con una cuenta exacta."""
    logits, pi, score = _softmax_case()
    rewards = torch.tensor([1.0, 3.0, -2.0, 0.5], dtype=torch.float64)

    def moments(baseline):
        weights = pi[:, None] * (rewards - baseline)[:, None] * score
        mean = weights.sum(0)
        second = (pi[:, None] * ((rewards - baseline)[:, None] * score) ** 2).sum(0)
        return mean, second - mean**2

    plain, plain_var = moments(torch.zeros(4, dtype=torch.float64))
    with_b, with_b_var = moments(torch.full((4,), 1.2, dtype=torch.float64))
    a = torch.allclose(plain, with_b) and not torch.allclose(plain_var, with_b_var)
    advantages = rewards - (pi * rewards).sum()  # b = V: la media bajo π
    b = bool((advantages > 0).all())
    action_baseline = torch.tensor([0.3, -1.0, 2.0, 0.0], dtype=torch.float64)
    biased, _ = moments(action_baseline)
    c = torch.allclose(plain, biased)
    # d: un paso pequeño con A < 0 (recompensa 1 > 0, línea base 3).
    theta = logits.clone().requires_grad_(True)
    torch.log_softmax(theta, 0)[0].backward()
    stepped = logits + 1e-3 * (1.0 - 3.0) * theta.grad
    d = bool(torch.softmax(stepped, 0)[0] < pi[0])
    return {"a": bool(a), "b": b, "c": bool(c), "d": d}


def _question_4_truths() -> dict[str, bool]:
    """Cada afirmación de la pregunta 4, comprobada con una cuenta exacta."""
    rho = torch.linspace(0.01, 5.0, 500, dtype=torch.float64)
    k3 = (rho - 1) - torch.log(rho)
    a = bool((k3[rho < 1] < 0).any())
    generator = torch.Generator().manual_seed(4)
    q = torch.softmax(torch.randn(5, generator=generator, dtype=torch.float64), 0)
    p = torch.softmax(torch.randn(5, generator=generator, dtype=torch.float64), 0)
    k1 = -torch.log(p / q)
    exact = (q * torch.log(q / p)).sum()
    b = bool((k1 < 0).any()) and math.isclose((q * k1).sum(), exact, abs_tol=1e-12)
    # c: un paso de gradiente sobre −c_H·H sube la entropía.
    logits = torch.tensor([2.0, 0.0, -1.0], dtype=torch.float64, requires_grad=True)

    def entropy(theta):
        log_pi = torch.log_softmax(theta, 0)
        return -(log_pi.exp() * log_pi).sum()

    before = entropy(logits)
    (-0.01 * before).backward()
    c = bool(entropy(logits.detach() - 1.0 * logits.grad) > before)
    # d: π* ∝ π_ref·exp(R/β); con β grande se queda en la referencia.
    pi_ref = torch.tensor([0.15, 0.10, 0.40, 0.15, 0.20], dtype=torch.float64)
    reward = torch.tensor([0.9, 0.8, 0.5, 0.3, 0.05], dtype=torch.float64)
    optimal = torch.softmax(torch.log(pi_ref) + reward / 100.0, 0)
    d = not bool((optimal - pi_ref).abs().max() < 0.01)
    return {"a": a, "b": b, "c": c, "d": d}


@pytest.mark.parametrize(
    ("number", "truths"), [(2, _question_2_truths), (4, _question_4_truths)]
)
def test_statement_keys_agree_with_the_maths(number, truths):
    key = {k: truth for k, (truth, _) in _key(number)[f"q{number}_key"].items()}
    assert key == truths()
    assert key == _solution_answer(number)


# ---------------------------------------------------------------------------
# Nadie puntúa a ciegas
# ---------------------------------------------------------------------------


def _blind_numbers(data: list[float]) -> set[float]:
    """Lo que escribiría quien no sabe hacer la cuenta: 0, ±1, ±0,5, los datos
    del enunciado y lo que sale de combinar dos de ellos con + − × ÷."""
    pool = {0.0, 1.0, -1.0, 0.5, -0.5, *data, *(-x for x in data)}
    for x, y in itertools.permutations(list(pool), 2):
        pool |= {x + y, x - y, x * y}
        if y:
            pool.add(x / y)
    return pool


def test_a_blind_guesser_scores_at_most_a_quarter():
    """La esperanza de la nota de quien responde a ciegas, pregunta a pregunta.

    * Afirmaciones: cuatro marcas independientes calificadas a todo o nada. De
      las 16 maneras de marcarlas, la prueba oculta acepta 1: P = 1/16.
    * Números: la prueba acepta un intervalo de ancho 2·10⁻³ alrededor de la
      clave; un número cualquiera no cae ahí (P ≈ 0). Aun con un adivino que
      prueba los datos del enunciado y sus combinaciones de dos en dos (más de
      un centenar de candidatos), ninguno cae en el intervalo: P = 0.

    En total, (1/16 + 1/16 + P₁ + P₃) / 4 = 1/32 ≈ 3 %, muy por debajo del 25 %.
    """
    chances = {}
    for number in STATEMENTS:
        marks = _all_marks()
        chances[number] = sum(_grade(number, m)[0] for m in marks) / len(marks)
        assert chances[number] == 1 / 16
    data = {
        1: [*_key(1)["q1_pi"], _key(1)["q1_return"], _key(1)["q1_baseline"]],
        3: [_key(3)["q3_eps"], *itertools.chain(*_key(3)["q3_samples"])],
    }
    for number in NUMBERS:
        guesses = _blind_numbers(data[number])
        assert len(guesses) > 100
        chances[number] = sum(_grade(number, g)[0] for g in guesses) / len(guesses)
        assert chances[number] == 0
        for naive in (0.0, 1.0, -1.0, *data[number]):
            assert not _grade(number, naive)[0]
    expected = sum(chances.values()) / len(chances)
    assert expected <= 0.25
    assert expected == pytest.approx(1 / 32)


@pytest.mark.parametrize("number", NUMBERS)
def test_numbers_are_graded_with_the_announced_tolerance(number):
    key = _key(number)[f"q{number}_key"]
    assert _grade(number, round(key, 3))[0]
    assert _grade(number, key + 0.6 * TOLERANCE)[0]
    assert not _grade(number, key + 2 * TOLERANCE)[0]
    assert not _grade(number, key - 2 * TOLERANCE)[0]
    assert not _grade(number, round(key, 1))[0]


def test_statements_give_nothing_away_by_length_or_pattern():
    keys = {n: _solution_answer(n) for n in STATEMENTS}
    for number in STATEMENTS:
        lengths = [len(text) for text in _statements(number).values()]
        assert max(lengths) - min(lengths) <= 0.1 * np.mean(lengths)
        assert 0 < sum(keys[number].values()) < 4  # hay de las dos
    assert keys[2] != keys[4]
    longest = [max(_statements(n).items(), key=lambda kv: len(kv[1]))[0] for n in keys]
    assert {keys[n][k] for n, k in zip(STATEMENTS, longest, strict=True)} == {
        True,
        False,
    }


# ---------------------------------------------------------------------------
# La explicación llega con la retroalimentación
# ---------------------------------------------------------------------------


WRONG = {
    1: [0.0, -0.3, -0.12, -0.4, 3.0],
    3: [0.7333, -0.6, -0.6667, 2.0],
    2: [m for m in _all_marks()[:6]],
    4: [m for m in _all_marks()[-6:]],
}


@pytest.mark.parametrize("number", sorted(WRONG))
def test_a_wrong_answer_gets_the_explanation_and_a_short_last_line(number):
    key = _key(number)[f"q{number}_key"]
    for answer in WRONG[number]:
        if answer == _solution_answer(number):
            continue
        passed, message, _ = _grade(number, answer)
        assert not passed
        lines = message.splitlines()
        assert len(lines) >= 3, message
        last = lines[-1]
        assert last.startswith(f"Pregunta {number}: ") and len(last) <= 200, last
        # El calificador muestra justo esa línea como diagnóstico.
        assert diagnostic({"ename": "AssertionError", "evalue": message}) == last
        if number in NUMBERS:
            assert helpers.number(key, 2 if number == 1 else 3) in last
        else:
            wrong = [k for k in STATEMENT_KEYS if answer[k] != key[k][0]]
            assert f"mal marcadas {', '.join(wrong)};" in last
            for k in STATEMENT_KEYS:  # el porqué de las cuatro, no solo de las malas
                assert key[k][1] in message


def test_typical_mistakes_are_named():
    cases = {
        1: {
            0.0: "también recibe gradiente",
            -0.3: "θ_1",
            -0.12: "signo",
            -0.4: "falta la línea base",
        },
        3: {0.7333: "la pérdida", -0.6: "falta el recorte", -0.6667: "sin el min"},
    }
    for number, answers in cases.items():
        for answer, phrase in answers.items():
            last = _grade(number, answer)[1].splitlines()[-1]
            assert phrase in last, last
    # Los errores típicos se distinguen entre sí y de la clave.
    for number in NUMBERS:
        ns = _key(number)
        values = [ns[f"q{number}_key"], *(m.variant for m in ns[f"q{number}_typical"])]
        gaps = [abs(x - y) for x, y in itertools.combinations(values, 2)]
        assert min(gaps) > 2 * TOLERANCE


# ---------------------------------------------------------------------------
# La clave no viaja con el curso
# ---------------------------------------------------------------------------


def _shipped_texts() -> dict[Path, str]:
    """Los textos que recibe el estudiante: helpers/ y el cuaderno publicado."""
    files = [
        p
        for p in (REPO / "helpers").rglob("*")
        if p.is_file() and p.suffix in {".py", ".toml", ".json", ".txt", ".md"}
    ]
    files.append(course_path("06_ppo"))
    return {path: path.read_text(encoding="utf-8") for path in files}


def test_the_key_ships_only_in_the_hidden_tests():
    assert not (REPO / "helpers" / "ppo_quiz.py").exists()
    secrets = []
    for number in STATEMENTS:
        secrets += [why[:40] for _, why in _key(number)[f"q{number}_key"].values()]
    for number in NUMBERS:
        secrets += [m.message[:30] for m in _key(number)[f"q{number}_typical"]]
    secrets += [f"q{number}_key" for number in QUIZ]
    for path, text in _shipped_texts().items():
        leaked = [s for s in secrets if s in text]
        assert not leaked, f"{path.relative_to(REPO)} contiene {leaked}"
    # En el cuaderno publicado, las celdas de respuesta solo traen la plantilla.
    released = read(course_path("06_ppo"))
    for number in QUIZ:
        cell = next(c for c in released.cells if c.get("id") == f"quiz_{number}")
        template = cell.source.split("raise NotImplementedError")[0]
        namespace: dict = {}
        exec(template, namespace)
        answer = namespace[f"answer_{number}"]
        if number in NUMBERS:
            assert answer is None
        else:
            assert answer == dict.fromkeys(STATEMENT_KEYS)
