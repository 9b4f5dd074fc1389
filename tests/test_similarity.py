"""Parecidos entre entregas (:mod:`autograder.similarity`).

La prueba principal arma una clase sintética de 01_bandidos con los bancos de
respuestas: estudiantes honestas (cada una con sus respuestas, correctas o
erróneas, y fórmulas cortas que muchas repiten) y copias plantadas (nombres
cambiados, otro formato, comentarios, una instrucción de más o en otro orden,
la solución de referencia). Cada copia plantada debe aparecer (exhaustividad
del 100 %) y ninguna pareja honesta (precisión del 100 %). Los cuadernos no se
ejecutan: la comparación solo lee el código.
"""

from __future__ import annotations

import ast
import difflib
import functools
import io
import itertools
import re
import tokenize
from dataclasses import dataclass

import pytest

from autograder import similarity as sim
from helpers.checks import exercises as registered_exercises
from tests.banks import bank
from tests.notebooks import (
    course_path,
    exercises,
    fill_solutions,
    module_ids,
    read,
    solution_path,
    student_version,
)

MODULE = "01_bandidos"
REFERENCE = "«solución»"


# ---------------------------------------------------------------------------
# Cómo disfraza una copia su origen
# ---------------------------------------------------------------------------


def local_names(source: str) -> list[str]:
    """Los argumentos y variables que define el código (no el nombre de la
    función del ejercicio, que las pruebas necesitan)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        found = []
        if isinstance(node, ast.arg):
            found = [node.arg]
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found = [node.id]
        names += [name for name in found if name not in names]
    return names


_F_PREFIX = re.compile(r"^[rbuRBU]*[fF]")
_FIELD = re.compile(r"\{[^{}]*\}")
_NAME = re.compile(r"(?<![.\w])[A-Za-z_]\w*")


def rename(source: str, mapping: dict[str, str] | None = None) -> str:
    """Cambia los nombres locales, sin tocar atributos (``.sum``) ni los
    argumentos por nombre de una llamada (``dtype=``)."""
    source = student_version(source).strip("\n") + "\n"
    if mapping is None:
        mapping = {name: f"mi_{name}" for name in local_names(source)}
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    edits = []
    depth, in_def = 0, False
    for i, token in enumerate(tokens):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif token.type == tokenize.NAME and token.string == "def":
            in_def = True
        elif token.type == tokenize.OP and token.string == ":" and depth == 0:
            in_def = False
        if token.type == tokenize.STRING and _F_PREFIX.match(token.string):
            # En Python 3.11 una f-string es un solo token: sus {nombres} también
            if token.start[0] == token.end[0]:
                text = _FIELD.sub(
                    lambda m: _NAME.sub(
                        lambda n: mapping.get(n.group(), n.group()), m.group()
                    ),
                    token.string,
                )
                edits.append((token.start, token.end, text))
            continue
        if token.type != tokenize.NAME or token.string not in mapping:
            continue
        after = tokens[i + 1].string if i + 1 < len(tokens) else ""
        before = tokens[i - 1].string if i else ""
        keyword = depth > 0 and after == "=" and not in_def
        if before == "." or keyword:
            continue
        edits.append((token.start, token.end, mapping[token.string]))
    lines = source.splitlines(keepends=True)
    for (row, start), (_, end), new in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + new + line[end:]
    renamed = "".join(lines)
    ast.parse(renamed)
    return renamed


def reformat(source: str) -> str:
    """Otro formato: espacios, comillas dobles, paréntesis y líneas en blanco."""
    text = ast.unparse(ast.parse(student_version(source))).replace("'", '"')
    text = re.sub(r"^(\s*)return (.+)$", r"\1return (\2)", text, flags=re.M)
    text = "\n\n".join(line.rstrip() + "  " for line in text.splitlines())
    ast.parse(text)
    return text


def add_comments(source: str) -> str:
    """Un docstring propio y comentarios por todas partes."""
    lines = student_version(source).strip("\n").splitlines()
    out = ["# Mi solución, escrita por mí"]
    docstring = False
    for i, line in enumerate(lines):
        out.append(line + ("  # aquí" if line.strip().startswith("return") else ""))
        following = [later for later in lines[i + 1 :] if later.strip()]
        if line.rstrip().endswith(":") and following:
            indent = re.match(r"\s*", following[0]).group()
            text = "# seguimos" if docstring else '"""Mi versión del ejercicio."""'
            out.append(indent + text)
            docstring = True
    commented = "\n".join(out)
    ast.parse(commented)
    return commented


def body_lines(source: str) -> list[str]:
    return student_version(source).strip("\n").splitlines()


def swap(source: str, i: int, j: int) -> str:
    """Cambia de sitio dos líneas (instrucciones independientes)."""
    lines = body_lines(source)
    lines[i], lines[j] = lines[j], lines[i]
    swapped = "\n".join(lines)
    ast.parse(swapped)
    return swapped


def insert(source: str, after: int, statement: str) -> str:
    """Añade una instrucción tras la línea ``after``, con la sangría de la
    siguiente."""
    lines = body_lines(source)
    indent = re.match(r"\s*", lines[after + 1]).group()
    lines.insert(after + 1, indent + statement)
    inserted = "\n".join(lines)
    ast.parse(inserted)
    return inserted


def add_statement(source: str) -> str:
    """Una instrucción inútil al principio de la función (o de la celda, si no
    define ninguna)."""
    tree = ast.parse(student_version(source))
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    body = functions[0].body if functions else tree.body
    body.insert(0, ast.parse("checked = True").body[0])
    return ast.unparse(tree)


# ---------------------------------------------------------------------------
# Las respuestas honestas de los bancos
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Honest:
    module: str
    grade_id: str
    name: str
    source: str
    normalized: str


# Respuestas de los bancos escritas a propósito como otra respuesta del banco
# más una instrucción (para cazar una clase de error: redondear, sumar ruido).
# No son de autoras distintas, así que no forman parejas «honestas»; la prueba
# de abajo comprueba que de verdad derivan de otra.
DERIVED = {
    ("01_bandidos", "epsilon_greedy", "desempata con ruido sumado a la entrada"),
    ("02_dqn", "q_learning_update", "redondea la tabla a dos decimales"),
    # Los errores de un bucle de entrenamiento (DQN, PPO) son la solución con
    # una etapa cambiada de sitio o quitada: derivados a propósito.
    *(
        ("02_dqn", "dqn_update", name)
        for name in (
            "sin borrar los gradientes viejos",
            "step antes de backward",
            "sin recorte",
            "recorta después del paso",
            "copia la red objetivo antes del paso",
        )
    ),
    *(
        ("06_ppo", "ppo_update", name)
        for name in (
            "sin zero_grad",
            "normaliza las ventajas del lote en su sitio",
            "recorta después del paso",
            "sin recortar el gradiente",
        )
    ),
    ("07_grpo", "grpo_update", "recorta la norma del gradiente"),
    # Los que cubren cada id de su comprobación (filas ↔ bancos): otra
    # respuesta del banco con un solo paso cambiado o quitado.
    ("01_bandidos", "testbed_step", "los brazos al azar antes que la moneda"),
    ("01_bandidos", "testbed_step", "Q sin actualizar"),
    (
        "01_bandidos",
        "testbed_step",
        "N con new_counts[actions]: suma 1 a filas enteras",
    ),
    ("02_dqn", "dqn_loss", "Q(s, a) envuelto en un tensor nuevo con requires_grad"),
    ("03_reinforce", "reinforce_updates", "zero_grad entre backward y step"),
    ("05_actor_critico", "actor_critic_loss", "olvida el return"),
    ("10_preferencias", "dpo_step", "copia la política en la referencia"),
    # El paso de REINFORCE con V: el otro optimizador quitado de la respuesta
    # que suma las dos pérdidas.
    ("04_lineas_base", "baseline_update", "un solo optimizador para las dos pérdidas"),
}


@functools.cache
def bank_answers(include_derived: bool = False) -> list[Honest]:
    """Las respuestas de los bancos y la solución de cada ejercicio."""
    found = []
    for module in module_ids():
        answers = bank(module)
        if answers is None:
            continue
        solutions = {
            ex.grade_id: ex.solution for ex in exercises(read(solution_path(module)))
        }
        for grade_id, solution in solutions.items():
            named = [(REFERENCE, solution)] + [
                (a.name, a.source)
                for a in answers.RIGHT.get(grade_id, [])
                + answers.WRONG.get(grade_id, [])
            ]
            for name, source in named:
                if not include_derived and (module, grade_id, name) in DERIVED:
                    continue
                found.append(
                    Honest(module, grade_id, name, source, sim.normalize(source))
                )
    return found


def honest_pairs():
    """Cada pareja de respuestas distintas del mismo ejercicio."""
    key = lambda h: (h.module, h.grade_id)  # noqa: E731
    for _, group in itertools.groupby(sorted(bank_answers(), key=key), key=key):
        yield from itertools.combinations(list(group), 2)


def statement_count(normalized: str) -> int:
    """Instrucciones de la respuesta: las del cuerpo de la función, si la celda
    es una función, o las de la celda (una compuesta cuenta como una)."""
    body = ast.parse(normalized).body
    if len(body) == 1 and isinstance(body[0], ast.FunctionDef):
        body = body[0].body
    return len(body)


# ---------------------------------------------------------------------------
# Normalizar
# ---------------------------------------------------------------------------


def test_normalize_renames_in_order_of_first_appearance():
    source = '''
def f(estimate: float, reward, count) -> float:
    """La media."""
    ### BEGIN SOLUTION
    step = (reward - estimate) / count  # el paso
    return estimate + step
    ### END SOLUTION
'''
    assert sim.normalize(source) == (
        "def fun1(arg1, arg2, arg3):\n"
        "    var1 = (arg2 - arg1) / arg3\n"
        "    return arg1 + var1"
    )


def test_normalize_keeps_attributes_imports_builtins_and_outside_names():
    source = """
import math
from numpy import flatnonzero as nz

def g(q, n):
    best = nz(q == max(q))
    return softmax(q).sum() + math.log(len(best)) + np.float64(n)
"""
    normalized = sim.normalize(source)
    for kept in ("math.log", "nz(", "max(", "len(", "softmax(", ".sum()", "np.float64"):
        assert kept in normalized, kept
    for renamed in ("best", "def g", "(q,"):
        assert renamed not in normalized, renamed


def test_normalize_drops_docstrings_quotes_annotations_and_format():
    a = "def f(x):\n    'doc'\n    y: int = x*2\n    return {'a': y}\n"
    b = 'def f(x: int) -> dict:\n\n    out = x * 2\n    return {"a": (out)}'
    assert sim.normalize(a) == sim.normalize(b)


def test_normalize_reads_magics_and_rejects_invalid_code():
    assert sim.normalize("%time x = 1") is not None
    assert sim.normalize("def f(:\n    pass") is None
    assert sim.is_trivial(None)


def test_tokens_ignore_layout():
    assert sim.tokens("if x:\n    return y  # no") == ["if", "x", ":", "return", "y"]


# ---------------------------------------------------------------------------
# El umbral y la regla, medidos en los bancos
# ---------------------------------------------------------------------------


def misclassified(threshold: int) -> int:
    """Respuestas de los bancos que un umbral deja en el lado equivocado: las de
    una instrucción que sí se comparan más las de varias que no."""
    wrong = 0
    for one, size in sizes():
        kept = size >= threshold
        wrong += kept if one else not kept
    return wrong


@functools.cache
def sizes() -> list[tuple[bool, int]]:
    """``(¿una sola instrucción?, tamaño)`` de cada respuesta de los bancos."""
    return [
        (statement_count(a.normalized) == 1, sim.size(a.normalized))
        for a in bank_answers()
    ]


def test_min_tokens_is_the_threshold_measured_on_the_banks():
    errors = {threshold: misclassified(threshold) for threshold in range(5, 60)}
    best = min(errors.values())
    assert errors[sim.MIN_TOKENS] <= 1.1 * best, (
        f"MIN_TOKENS = {sim.MIN_TOKENS} deja {errors[sim.MIN_TOKENS]} respuestas "
        f"en el lado equivocado; el mejor umbral de los bancos deja {best}: "
        f"{[t for t, e in errors.items() if e == best]}. Vuelve a medirlo."
    )


def test_honest_bank_answers_are_never_identical_or_near():
    reported = [
        (a.module, a.grade_id, a.name, b.name)
        for a, b in honest_pairs()
        if not sim.is_trivial(a.normalized)
        and not sim.is_trivial(b.normalized)
        and (
            a.normalized == b.normalized
            or sim.near_identical(a.normalized, b.normalized)
        )
    ]
    assert not reported, reported


def test_derived_bank_answers_really_derive_from_another():
    answers = bank_answers(include_derived=True)
    for module, grade_id, name in DERIVED:
        key = (module, grade_id, name)
        derived = next(a for a in answers if (a.module, a.grade_id, a.name) == key)
        assert any(
            sim.near_identical(derived.normalized, other.normalized)
            for other in answers
            if (other.module, other.grade_id) == (module, grade_id)
            and other is not derived
        ), name


def test_an_order_sensitive_token_ratio_could_not_tell_them_apart():
    """Por qué la regla mira instrucciones enteras: con ``difflib`` sobre los
    símbolos, dos errores típicos distintos del mismo ejercicio (un símbolo
    cambiado) se parecen más que una copia con dos instrucciones en otro
    orden."""

    def ratio(a: str, b: str) -> float:
        return difflib.SequenceMatcher(
            None, sim.tokens(a), sim.tokens(b), autojunk=False
        ).ratio()

    honest = max(
        ratio(a.normalized, b.normalized)
        for a, b in honest_pairs()
        if not sim.is_trivial(a.normalized) and not sim.is_trivial(b.normalized)
    )
    answer = next(
        a
        for a in bank_answers()
        if (a.module, a.grade_id, a.name)
        == (MODULE, "gradient_bandit_update", "copia y dos pasos")
    )
    reordered = sim.normalize(swap(rename(answer.source), 1, 2))
    assert ratio(answer.normalized, reordered) < honest
    assert sim.near_identical(answer.normalized, reordered)
    assert sim.similarity(answer.normalized, reordered) == 1.0


def non_trivial() -> list[Honest]:
    return [a for a in bank_answers() if not sim.is_trivial(a.normalized)]


@pytest.mark.parametrize(
    "disguise",
    [rename, reformat, add_comments, lambda s: add_comments(reformat(rename(s)))],
)
def test_every_bank_answer_disguised_is_still_identical(disguise):
    missed = [
        (a.module, a.grade_id, a.name)
        for a in non_trivial()
        if sim.normalize(disguise(a.source)) != a.normalized
    ]
    assert not missed, missed


def test_every_bank_answer_with_a_statement_more_is_near():
    missed = [
        (a.module, a.grade_id, a.name)
        for a in non_trivial()
        if not sim.near_identical(a.normalized, sim.normalize(add_statement(a.source)))
    ]
    assert not missed, missed


def test_is_reference_copy():
    solutions = {
        ex.grade_id: ex.solution for ex in exercises(read(solution_path(MODULE)))
    }
    reference = solutions["epsilon_greedy"]
    assert sim.is_reference_copy(reformat(rename(reference)), reference)
    assert sim.is_reference_copy(reference, reference)
    # Una fórmula de una línea es trivial: coincidir con ella no delata a nadie.
    trivial = solutions["incremental_mean"]
    assert not sim.is_reference_copy(rename(trivial), trivial)
    for answer in bank(MODULE).RIGHT["epsilon_greedy"]:
        assert not sim.is_reference_copy(answer.source, reference)
    assert not sim.is_reference_copy("def f(:", reference)


def test_solution_cells_are_the_code_answers_only():
    nb = read(solution_path("07_grpo"))
    cells = sim.solution_cells(nb)
    assert "why_lone_failure" not in cells  # respuesta escrita (Markdown)
    assert "path_log_probability" in cells
    assert not any(grade_id.endswith("_test") for grade_id in cells)
    assert list(sim.solution_cells(read(course_path("07_grpo")))) == list(cells)


# ---------------------------------------------------------------------------
# Una clase sintética con copias plantadas
# ---------------------------------------------------------------------------

N_HONEST = 20


@dataclass(frozen=True)
class Plant:
    """Una copia plantada: ``copier`` copia ``grade_id`` de ``source``."""

    copier: str
    grade_id: str
    source: str  # una estudiante, o REFERENCE
    kind: str  # el parecido que debe aparecer, o "" si la celda es trivial


@dataclass
class SyntheticClass:
    notebooks: dict
    honest: list[str]
    plants: list[Plant]
    reference_nb: object
    release_nb: object

    def direct_pairs(self) -> set[tuple[str, frozenset[str]]]:
        return {
            (p.grade_id, frozenset((p.copier, p.source)))
            for p in self.plants
            if p.source != REFERENCE and p.kind
        }

    def families(self) -> dict[tuple[str, str], int]:
        """``(grade_id, estudiante) → familia``: quienes comparten origen."""
        parent: dict[tuple[str, str], tuple[str, str]] = {}

        def root(x):
            while parent.setdefault(x, x) != x:
                x = parent[x]
            return x

        for p in self.plants:
            parent[root((p.grade_id, p.copier))] = root((p.grade_id, p.source))
        roots = sorted({root(x) for x in parent})
        return {x: roots.index(root(x)) for x in parent}


def build_class() -> SyntheticClass:
    reference_nb = read(solution_path(MODULE))
    release_nb = read(course_path(MODULE))
    answers_bank = bank(MODULE)
    solutions = {ex.grade_id: ex.solution for ex in exercises(reference_nb)}
    honest = [f"honesta_{i:02d}" for i in range(1, N_HONEST + 1)]
    answers: dict[str, dict[str, str]] = {s: {} for s in honest}
    who: dict[tuple[str, str], str] = {}  # (grade_id, respuesta) → estudiante

    # Honestas: cada respuesta no trivial del banco, a una sola estudiante; las
    # triviales (fórmulas de una línea), repetidas entre las demás, como en
    # una clase de verdad. Cada ejercicio empieza en otra estudiante.
    for k, grade_id in enumerate(solutions):
        pool = [
            a
            for a in answers_bank.RIGHT[grade_id] + answers_bank.WRONG[grade_id]
            if (MODULE, grade_id, a.name) not in DERIVED
        ]
        long = [a for a in pool if not sim.is_trivial(sim.normalize(a.source))]
        short = [a for a in pool if sim.is_trivial(sim.normalize(a.source))]
        for position in range(N_HONEST):
            student = honest[(position + 4 * k) % N_HONEST]
            if position < len(long):
                answer = long[position]
            elif short:
                answer = short[position % len(short)]
            else:
                continue
            answers[student][grade_id] = answer.source
            who.setdefault((grade_id, answer.name), student)

    plants: list[Plant] = []

    def plant(copier, grade_id, origin, disguise, kind=sim.IDENTICAL):
        if origin == REFERENCE:
            source, text = REFERENCE, solutions[grade_id]
        else:
            source = who[(grade_id, origin)]
            text = answers[source][grade_id]
        answers.setdefault(copier, {})[grade_id] = disguise(text)
        plants.append(Plant(copier, grade_id, source, kind))

    plant("copia_nombres", "epsilon_greedy", "con un bucle", rename)
    plant(
        "copia_error",
        "epsilon_greedy",
        "explora solo entre los no voraces",
        lambda s: add_comments(rename(s)),
    )
    plant("copia_formato", "ucb_action", "infinito para los no probados", reformat)
    plant("copia_comentarios", "gradient_bandit_update", "con un bucle", add_comments)
    plant(
        "copia_orden",
        "gradient_bandit_update",
        "copia y dos pasos",
        lambda s: swap(rename(s), 1, 2),
        sim.NEAR,
    )
    plant(
        "copia_de_mas",
        "softmax",
        "log-sum-exp",
        lambda s: add_comments(insert(s, 1, "n = len(h)")),
        sim.NEAR,
    )
    for i, disguise in enumerate(
        [lambda s: s, rename, lambda s: add_comments(reformat(s))], start=1
    ):
        plant(f"copia_grupo_{i}", "ucb_action", "con un bucle", disguise)
    # Una estudiante que lo copia todo de otra.
    fullest = max(
        honest,
        key=lambda s: sum(
            not sim.is_trivial(sim.normalize(a)) for a in answers[s].values()
        ),
    )
    for grade_id, text in answers[fullest].items():
        if not sim.is_trivial(sim.normalize(text)):
            name = next(
                n for (g, n), s in who.items() if g == grade_id and s == fullest
            )
            plant("copia_total", grade_id, name, lambda s: reformat(rename(s)))
    # La solución de referencia, tal cual (con sus marcadores) o disfrazada.
    plant("copia_solucion_1", "epsilon_greedy", REFERENCE, lambda s: s)
    plant(
        "copia_solucion_2", "epsilon_greedy", REFERENCE, lambda s: reformat(rename(s))
    )
    plant("copia_solucion_3", "ucb_action", REFERENCE, add_statement, sim.NEAR)
    # Copiar una fórmula de una línea no se señala: es trivial.
    plant("copia_trivial", "incremental_mean", "media ponderada", rename, "")

    notebooks = {
        student: fill_solutions(release_nb, own) for student, own in answers.items()
    }
    return SyntheticClass(notebooks, honest, plants, reference_nb, release_nb)


@pytest.fixture(scope="module")
def synthetic():
    klass = build_class()
    result = sim.class_similarity(
        MODULE, klass.notebooks, klass.reference_nb, klass.release_nb
    )
    return klass, result


def test_the_synthetic_class_is_a_class(synthetic):
    klass, result = synthetic
    assert len(klass.notebooks) >= 30
    assert list(result.exercises) == list(sim.solution_cells(klass.reference_nb))
    # Las fórmulas cortas se repiten entre las honestas, y no se comparan.
    assert result.exercises["incremental_mean"].trivial >= N_HONEST // 2
    assert all(ex.unanswered for ex in result.exercises.values())


def test_finds_every_planted_copy_recall_100(synthetic):
    klass, result = synthetic
    expected = klass.direct_pairs()
    found = expected & result.pairs()
    recall = len(found) / len(expected)
    assert recall == 1.0, (
        f"exhaustividad {recall:.0%}: faltan {sorted(map(str, expected - found))}"
    )


def test_reports_no_honest_pair_precision_100(synthetic):
    klass, result = synthetic
    families = klass.families()
    reported = result.pairs()
    right = {
        (grade_id, pair)
        for grade_id, pair in reported
        if len({families.get((grade_id, s)) for s in pair} - {None}) == 1
        and all((grade_id, s) in families for s in pair)
    }
    precision = len(right) / len(reported)
    assert precision == 1.0, (
        f"precisión {precision:.0%}: sobran {sorted(map(str, reported - right))}"
    )
    sources = {p.source for p in klass.plants}
    flagged_honest = set(result.students()) & (set(klass.honest) - sources)
    assert not flagged_honest


def test_each_disguise_gets_its_kind(synthetic):
    klass, result = synthetic
    for p in klass.plants:
        matches = [
            m
            for m in result.exercises[p.grade_id].matches
            if p.copier in (*m.students, *m.others)
        ]
        if not p.kind:
            assert not matches, p
            continue
        if p.source == REFERENCE:
            assert [m.kind for m in matches if m.reference] == [p.kind], p
        else:
            assert any(
                m.kind == p.kind and p.source in (*m.students, *m.others)
                for m in matches
            ), p
    near = {
        m.detail for m in result.matches() if m.kind == sim.NEAR and not m.reference
    }
    assert near == {"otro orden", "1 instrucción de más"}


def test_groups_of_identical_students_are_one_row(synthetic):
    klass, result = synthetic
    group = [
        m
        for m in result.exercises["ucb_action"].matches
        if "copia_grupo_1" in m.students
    ]
    assert len(group) == 1 and group[0].kind == sim.IDENTICAL
    members = set(group[0].students)
    assert {"copia_grupo_1", "copia_grupo_2", "copia_grupo_3"} <= members
    assert len(group[0].students) == len(members) >= 4


def test_reference_copies_are_listed_apart(synthetic):
    klass, result = synthetic
    assert result.reference_copies() == {
        "epsilon_greedy": ["copia_solucion_1", "copia_solucion_2"]
    }
    assert not any("copia_solucion_1" in pair for _, pair in result.pairs()), (
        "dos copias de la solución no se cuentan como copia entre ellas"
    )


def test_unanswered_cells_are_never_compared():
    release_nb = read(course_path(MODULE))
    notebooks = {f"en_blanco_{i}": release_nb for i in range(4)}
    result = sim.class_similarity(
        MODULE, notebooks, read(solution_path(MODULE)), release_nb
    )
    assert not result.matches()
    assert all(
        ex.unanswered == 4 and not ex.compared for ex in result.exercises.values()
    )


# ---------------------------------------------------------------------------
# La sección del informe
# ---------------------------------------------------------------------------


def titles() -> dict[str, str]:
    return {ex.key: ex.title for ex in registered_exercises(MODULE)}


def test_render_html_names_exercises_by_title_and_groups_compactly(synthetic):
    klass, result = synthetic
    page = sim.render_html(result, titles())
    assert "<h2>Parecidos entre entregas</h2>" in page
    for title in titles().values():
        assert title in page
    assert "<h3>ucb_action" not in page
    rows = [row for row in page.split("<tr>") if "copia_grupo_1" in row]
    assert len(rows) == 1 and rows[0].count("copia_grupo_2") == 1
    assert "idéntico a la solución" in page
    assert "casi idéntico (otro orden)" in page
    assert f"menos de {sim.MIN_TOKENS} símbolos" in page


def test_render_html_escapes_and_says_when_there_is_nothing():
    match = sim.Match("softmax", sim.IDENTICAL, ("<b>ana</b>", "eva & co"))
    result = sim.Similarity(
        MODULE, {"softmax": sim.ExerciseSimilarity("softmax", 2, matches=[match])}
    )
    page = sim.render_html(result, {"softmax": "Softmax <estable>"})
    assert "&lt;b&gt;ana&lt;/b&gt;" in page and "eva &amp; co" in page
    assert "Softmax &lt;estable&gt;" in page and "<b>ana</b>" not in page
    empty = sim.Similarity(MODULE, {"softmax": sim.ExerciseSimilarity("softmax", 3)})
    assert "Ningún parecido." in sim.render_html(empty, {})


def test_unreadable_cells_are_named_not_compared():
    release_nb = read(course_path(MODULE))
    broken = fill_solutions(release_nb, {"softmax": "def softmax(h):\n    return (h"})
    notebooks = {"rota_1": broken, "rota_2": broken}
    result = sim.class_similarity(
        MODULE, notebooks, read(solution_path(MODULE)), release_nb
    )
    assert result.exercises["softmax"].unreadable == ["rota_1", "rota_2"]
    assert not result.matches()
    assert "Softmax estable (rota_1, rota_2)" in sim.render_html(result, titles())


def test_a_configuration_counts_its_logic_not_its_fields():
    """Una configuración que el enunciado dicta campo a campo no cuenta como
    código largo (dos personas la escriben igual); un cálculo con dos
    argumentos con nombre sí se cuenta entero."""
    from autograder.similarity import CONFIG_KEYWORDS, logic_size, normalize, size

    config = normalize(
        "def f(out, beta):\n"
        "    c = trl.DPOConfig(output_dir=out, beta=beta, learning_rate=2e-4,\n"
        "        lr_scheduler_type='constant', use_cpu=True, bf16=False,\n"
        "        report_to=[], seed=0, loss_type=['ipo'], save_strategy='no')\n"
        "    return trl.DPOTrainer(model=m, args=c, train_dataset=d,\n"
        "        processing_class=t)\n"
    )
    assert size(config) >= 60 > logic_size(config)
    formula = normalize(
        "def f(r):\n"
        "    G = r.shape[-1]\n"
        "    return r - (r.sum(dim=-1, keepdim=True) - r) / (G - 1)\n"
    )
    assert logic_size(formula) == size(formula)
    # Un argumento calculado se queda, aunque la llamada sea una configuración
    computed = normalize(
        "x = F(" + ", ".join(f"k{i}={i}" for i in range(CONFIG_KEYWORDS)) + ", y=a+b)"
    )
    assert "a + b" in computed and logic_size(computed) < size(computed)


def test_names_inside_f_strings_are_compared_like_the_rest():
    """Python 3.11 da una f-string como un solo token: sus nombres, aun así,
    llevan la etiqueta de cómo se definen."""
    body = (
        "    bad = [i for i, x in enumerate(a) if not x]\n"
        "    good = [x * 2 + 1 for x in a if x]\n"
        "    total = sum(good) / max(len(good), 1)\n"
        "    return total, f'filas {bad}: {len(bad)} de {len(a)}'\n"
    )
    one = sim.normalize("def f(a):\n" + body)
    more = sim.normalize("def f(a):\n    ok = True\n" + body)
    assert not sim.is_trivial(one)
    assert sim.near_identical(one, more)
    assert "bad" not in sim.tokens(one)  # el nombre canónico, también dentro
