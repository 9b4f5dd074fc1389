"""Los errores típicos son filas de datos, y los bancos esperan sus ids.

- Cada fila (:class:`helpers.checks.Mistake`) de una tabla de
  ``helpers.checks.<tema>`` tiene un id con la forma de un identificador, y
  dos filas con el mismo id dicen lo mismo: un id nombra un diagnóstico.
- Cada respuesta errónea de ``tests/banks`` espera un id (``mistake=``), no
  una frase del mensaje, y ese id existe: lo declara una fila o un
  ``fail(..., "id")`` de las comprobaciones de su tema, del núcleo
  (``helpers/checks/__init__.py``), del cuestionario (``quiz.py``) o de las
  pruebas ocultas de su cuaderno (las filas de un cuestionario). Así un
  id mal escrito en el banco no puede pasar por casualidad.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import helpers.checks
from autograder.sources import parse_code
from helpers.checks import Mistake
from helpers.topics import TOPICS
from tests.banks import bank
from tests.notebooks import read, solution_path

CHECKS = Path(helpers.checks.__file__).parent
#: Lo común a todos los temas: el núcleo (``__init__`` y ``core/``) y el
#: cuestionario.
SHARED = (
    "__init__.py",
    "quiz.py",
    *sorted(str(p.relative_to(CHECKS)) for p in (CHECKS / "core").glob("*.py")),
)
ID = re.compile(r"[a-z][a-z0-9_]*")


def _topics() -> list[str]:
    return list(TOPICS.values())


def _constant_id(node: ast.expr) -> str | None:
    """El id escrito en ``node``: una cadena, o el principio fijo de una
    f-string seguido de ``*`` (``f"statement_{letter}"`` → ``statement_*``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value + "*"
    return None


def declared_ids(tree: ast.AST) -> set[str]:
    """Los ids que declara un código de comprobaciones: el primer argumento
    de cada ``Mistake(...)`` y de cada fila ``("id", variante)`` de
    ``with_messages``, el segundo (o ``mistake=``) de cada ``fail`` y
    ``CheckError``, los ids de cada bloque ``diagnoses(texto)``, lo que se
    asigna a una variable ``…mistake…`` y el primero de cada ``return ("id",
    mensaje)`` (los síntomas del núcleo)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        candidates: list[ast.expr] = []
        if name == "Mistake" and node.args:
            candidates.append(node.args[0])
        if name in ("fail", "CheckError") and len(node.args) > 1:
            candidates.append(node.args[1])
        candidates += [
            k.value for k in node.keywords if k.arg in ("mistake", "id") and k.value
        ]
        # Un bloque de diagnósticos, ``diagnoses("""id: mensaje…""")``
        if name == "diagnoses" and node.args and isinstance(node.args[0], ast.Constant):
            found |= set(helpers.checks.diagnoses(node.args[0].value))
        # Las filas ``("id", variante)`` de ``with_messages(texto, …)``
        if name == "with_messages":
            candidates += [
                row.elts[0]
                for row in node.args[1:]
                if isinstance(row, ast.Tuple) and row.elts
            ]
        for candidate in candidates:
            ident = _constant_id(candidate)
            if ident is not None:
                found.add(ident)
    # Un id guardado en una variable antes de fallar (``mistake = "…"``)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = [(target, node.value)]
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs = list(zip(target.elts, node.value.elts, strict=False))
            for name, value in pairs:
                if isinstance(name, ast.Name) and "mistake" in name.id:
                    ident = _constant_id(value)
                    if ident is not None:
                        found.add(ident)
    # Los síntomas comunes del núcleo se devuelven como ``("id", mensaje)``
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            first = node.value.elts[0] if node.value.elts else None
            ident = _constant_id(first) if first is not None else None
            if ident is not None and ID.fullmatch(ident):
                found.add(ident)
    return found


#: Los ids que las clases de comprobación construyen desde ``prefix="loss"``
#: cuando la fila no da el suyo (``helpers/checks/core/gradients.py`` y
#: ``procedures.py``).
DERIVED = (
    "no_gradient",
    "gradient_leaks",
    "wrong_gradient",
    "forward_count",
    "microbatch_rows",
    "backward_per_microbatch",
    "step_count",
)


def derived_ids(tree: ast.AST) -> set[str]:
    """Los ids que pueden salir de un ``prefix="…"`` de una clase de
    comprobación: un banco puede esperarlos, aunque ninguna fila los escriba."""
    found: set[str] = set()
    for node in ast.walk(tree):
        for keyword in (
            getattr(node, "keywords", []) if isinstance(node, ast.Call) else []
        ):
            ident = _constant_id(keyword.value) if keyword.arg == "prefix" else None
            if ident is not None and not ident.endswith("*"):
                found |= {f"{ident}_{suffix}" for suffix in DERIVED}
    return found


def _known(ident: str, declared: set[str]) -> bool:
    return ident in declared or any(
        d.endswith("*") and ident.startswith(d[:-1]) for d in declared
    )


@pytest.mark.parametrize("topic", _topics())
def test_mistake_rows_have_well_formed_ids_and_one_message_each(topic):
    # Un id nombra un diagnóstico: la misma fila puede servir a dos celdas
    # (el mismo error en el valor y en el gradiente), pero dos filas con el
    # mismo id dicen lo mismo.
    module = importlib.import_module(f"helpers.checks.{topic}")
    rows: list[Mistake] = []
    for value in vars(module).values():
        items = value.values() if isinstance(value, dict) else value
        if isinstance(items, list | tuple) and items:
            rows += [item for item in items if isinstance(item, Mistake)]
    assert rows, f"helpers.checks.{topic} no tiene tablas de Mistake"
    bad = sorted({row.id for row in rows if not ID.fullmatch(row.id)})
    assert not bad, f"ids que no son identificadores: {bad}"
    messages: dict[str, set[str]] = {}
    for row in rows:
        messages.setdefault(row.id, set()).add(row.message)
    repeated = sorted(ident for ident, texts in messages.items() if len(texts) > 1)
    assert not repeated, (
        f"ids con mensajes distintos en helpers.checks.{topic}: {repeated}"
    )


@pytest.mark.parametrize("topic", _topics())
def test_banks_expect_declared_mistake_ids(topic):
    module = importlib.import_module(f"helpers.checks.{topic}")
    module_bank = bank(module.MODULE)
    assert module_bank is not None
    declared = set()
    for path in (CHECKS / f"{topic}.py", *(CHECKS / shared for shared in SHARED)):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declared |= declared_ids(tree) | derived_ids(tree)
    # Las pruebas ocultas de un cuestionario declaran sus filas (la clave no
    # viaja en helpers/, que tiene el estudiante)
    for cell in read(solution_path(module.MODULE)).cells:
        tree = parse_code(cell.source) if cell.cell_type == "code" else None
        if tree is not None:
            declared |= declared_ids(tree)
    for grade_id, answers in module_bank.WRONG.items():
        for answer in answers:
            where = f"{module.MODULE}:{grade_id}:{answer.name}"
            assert answer.mistake is not None, f"{where}: sin mistake="
            assert _known(answer.mistake, declared), (
                f"{where}: el id {answer.mistake!r} no lo declara ninguna comprobación"
            )


def test_declared_ids_reads_rows_fails_and_prefixes():
    source = (
        "ROWS = [Mistake('no_mask', f, 'm')]\n"
        "fail('mensaje', 'returns_tensor')\n"
        "fail('mensaje', mistake=f'statement_{letter}')\n"
        "fail('sin id')\n"
        "hint, mistake = '', 'loop_sum'\n"
        "def symptom():\n    return 'sign', 'el signo'\n"
        'SAYS = diagnoses("""\nbatch_skips_last: Mensaje\n    largo.\n'
        'one, two: Lo mismo.\n""")\n'
    )
    declared = declared_ids(ast.parse(source))
    assert declared == {
        "no_mask",
        "returns_tensor",
        "statement_*",
        "sign",
        "loop_sum",
        "batch_skips_last",
        "one",
        "two",
    }
    assert _known("statement_b", declared)
    assert not _known("returns_list", declared)


def _expected(module_id: str) -> set[str]:
    module_bank = bank(module_id)
    return {a.mistake for answers in module_bank.WRONG.values() for a in answers}


def _missing(declared: set[str], expected: set[str]) -> list[str]:
    """Los ids declarados que ninguna respuesta del banco espera (un id con
    prefijo, ``statement_*``, cuenta si alguna espera uno que empiece así)."""
    return sorted(
        ident
        for ident in declared
        if not (
            ident in expected
            or (ident.endswith("*") and any(e.startswith(ident[:-1]) for e in expected))
        )
    )


@pytest.mark.parametrize("topic", _topics())
def test_every_declared_mistake_is_expected_by_a_bank_answer(topic):
    # El otro sentido: una fila o un ``fail`` con id que ninguna respuesta del
    # banco provoca podría estar muerta (tapada por una fila anterior, o igual
    # a la referencia en los casos) sin que nada lo notara.
    module = importlib.import_module(f"helpers.checks.{topic}")
    declared = declared_ids(ast.parse((CHECKS / f"{topic}.py").read_text("utf-8")))
    missing = _missing(declared, _expected(module.MODULE))
    assert not missing, (
        f"ids de helpers.checks.{topic} que ningún banco de {module.MODULE} "
        f"espera (añade una respuesta errónea que los provoque, o quita la "
        f"fila): {missing}"
    )


def test_every_shared_mistake_is_expected_by_some_bank_answer():
    declared = set()
    for shared in SHARED:
        declared |= declared_ids(ast.parse((CHECKS / shared).read_text("utf-8")))
    expected: set[str] = set()
    for topic in _topics():
        module = importlib.import_module(f"helpers.checks.{topic}")
        expected |= _expected(module.MODULE)
    missing = _missing(declared, expected)
    assert not missing, f"ids del núcleo que ningún banco espera: {missing}"
