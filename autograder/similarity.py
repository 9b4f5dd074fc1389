"""Parecidos entre las entregas de una clase: copias entre estudiantes y copias
de la solución.

Cada celda de solución se **normaliza** antes de compararla, para que no
cuenten los cambios que no cambian el programa: nombres de variables, de
argumentos y de funciones propias, comentarios, docstrings, líneas en blanco,
formato, comillas, anotaciones de tipo y los marcadores ``### BEGIN/END
SOLUTION``. Se lee con :mod:`ast` y se vuelve a escribir con
:func:`ast.unparse`; cada nombre que la celda define se cambia por uno
canónico (``arg1``, ``var1``, ``fun1``...) en orden de primera aparición. Los
nombres que vienen de fuera (``np``, ``torch``, ``len``, ``softmax`` de una
celda anterior), los importados y los atributos (``.sum``) se quedan igual.

Dos respuestas normalizadas son:

- **idénticas** si el texto normalizado es el mismo;
- **casi idénticas** si cada instrucción de la más corta aparece, tal cual, en
  la otra (quizá en otro orden o con los nombres locales en otro orden) y lo
  que sobra es poco: el :func:`similarity` de las dos llega a
  :data:`NEAR_SIMILARITY`. Cambiar un solo símbolo de una instrucción (``<``
  por ``>``, ``max`` por ``min``) ya no es «casi idéntico»: así se escriben
  los errores típicos, que muchas estudiantes cometen por su cuenta.

Las celdas **triviales** no se comparan: si el cuerpo normalizado (sin la
firma ``def ...:`` que ya da la celda de partida) tiene menos de
:data:`MIN_TOKENS` símbolos, es una fórmula de una línea a la que la clase
llega sola, y coincidir en ella no dice nada. El umbral está medido en los
bancos de respuestas honestas de ``tests/banks``: ver :data:`MIN_TOKENS`.

Nada de esto prueba una copia: señala entregas que la docente debería mirar.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import html
import io
import itertools
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from nbformat.notebooknode import NotebookNode

from autograder.course import grade_id_of, is_graded, is_solution, source_text
from autograder.sources import student_version
from helpers.formatting import percent

IDENTICAL = "idéntico"
NEAR = "casi idéntico"

#: Símbolos del cuerpo normalizado por debajo de los cuales una respuesta es
#: trivial y no se compara. Está medido en los bancos de ``tests/banks`` (las
#: respuestas honestas, correctas y erróneas, de todos los módulos, más la
#: solución de cada ejercicio): las respuestas de una sola instrucción (una
#: fórmula, ``return ...``) son a las que la clase llega por su cuenta; las de
#: varias llevan decisiones propias (variables intermedias, orden, bucles).
#: El umbral es el que mejor separa las dos clases en los bancos: el que deja
#: menos fórmulas de una instrucción comparadas más respuestas de varias sin
#: comparar. ``tests/test_similarity.py`` rehace la medida.
MIN_TOKENS = 24

#: Parecido mínimo (ver :func:`similarity`) para que dos respuestas, con las
#: instrucciones de la más corta todas en la otra, cuenten como «casi
#: idénticas»: con 0,8, lo que sobra no pasa de la mitad de lo que comparten.
NEAR_SIMILARITY = 0.8

# Prefijos de los nombres canónicos, según cómo se define el nombre.
_ARG, _VAR, _FUN, _CLS = "arg", "var", "fun", "cls"
_KIND = re.compile("[a-z]+")
_LAYOUT = {
    tokenize.NEWLINE,
    tokenize.NL,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.COMMENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
}


# ---------------------------------------------------------------------------
# Normalizar el código de una celda
# ---------------------------------------------------------------------------


def _preorder(node: ast.AST):
    """Los nodos de ``node`` en el orden en que aparecen en el texto."""
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _preorder(child)


def _identifiers(node: ast.AST) -> list[tuple[str, str | None]]:
    """``(nombre, cómo lo define o None si solo lo usa)`` de los nombres del nodo."""
    if isinstance(node, ast.Name):
        bound = isinstance(node.ctx, (ast.Store, ast.Del))
        return [(node.id, _VAR if bound else None)]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [(node.name, _FUN)]
    if isinstance(node, ast.ClassDef):
        return [(node.name, _CLS)]
    if isinstance(node, ast.arg):
        return [(node.arg, _ARG)]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [(node.name, _VAR)]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return [(name, _VAR) for name in node.names]
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [(node.name, _VAR)]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [(node.rest, _VAR)]
    return []


def _imported(tree: ast.AST) -> set[str]:
    """Los nombres que la celda importa: se conservan."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
    return names


def _canonical_names(tree: ast.AST) -> dict[str, str]:
    """Nombre canónico de cada nombre que la celda define (y no importa).

    El prefijo sale de la primera vez que se define (argumento, variable,
    función o clase) y el número, del orden de primera aparición.
    """
    kept = _imported(tree)
    order: list[str] = []
    kind: dict[str, str] = {}
    for node in _preorder(tree):
        for name, how in _identifiers(node):
            if name not in order:
                order.append(name)
            if how and name not in kind and name not in kept:
                kind[name] = how
    counters: Counter[str] = Counter()
    mapping = {}
    for name in order:
        if name in kind:
            counters[kind[name]] += 1
            mapping[name] = f"{kind[name]}{counters[kind[name]]}"
    return mapping


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _without_noise(body: list[ast.stmt]) -> list[ast.stmt]:
    """Un cuerpo sin textos sueltos (docstrings o «comentarios» entre comillas,
    que no hacen nada) y con ``x: float = 1.0`` escrito ``x = 1.0``."""
    kept: list[ast.stmt] = []
    for statement in body:
        if _is_docstring(statement):
            continue
        if isinstance(statement, ast.AnnAssign):
            if statement.value is None:  # `x: float` sin valor no hace nada
                continue
            statement = ast.Assign(targets=[statement.target], value=statement.value)
        kept.append(statement)
    return kept


def _canonicalize(tree: ast.Module, mapping: dict[str, str]) -> ast.Module:
    """Cambia los nombres según ``mapping`` y quita docstrings y anotaciones."""

    def rename(name: str | None) -> str | None:
        return mapping.get(name, name) if name else name

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = rename(node.id)
        elif isinstance(node, ast.arg):
            node.arg, node.annotation = rename(node.arg), None
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.name, node.returns = rename(node.name), None
        elif isinstance(node, (ast.ClassDef, ast.ExceptHandler)):
            node.name = rename(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)):
            node.name = rename(node.name)
        elif isinstance(node, ast.MatchMapping):
            node.rest = rename(node.rest)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [rename(name) for name in node.names]
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                body = _without_noise(body)
                setattr(node, name, body or ([ast.Pass()] if name == "body" else []))
    return tree


def _parse(source: str) -> ast.Module | None:
    """El árbol del código; las órdenes mágicas de IPython (``%time``, ``!ls``)
    se traducen antes a Python. ``None`` si no es Python válido."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        pass
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return ast.parse(TransformerManager().transform_cell(source))
    except Exception:  # noqa: BLE001 - cualquier fallo es «no se entiende»
        return None


@lru_cache(maxsize=4096)
def normalize(source: str) -> str | None:
    """El código de una celda normalizado, o ``None`` si no es Python válido.

    Quita los marcadores ``### BEGIN/END SOLUTION``, los comentarios, los
    docstrings, las anotaciones de tipo y el formato, y cambia cada nombre que
    la celda define por uno canónico en orden de primera aparición
    (``arg1``, ``var1``, ``fun1``, ``cls1``). Los atributos, los nombres
    importados y los que vienen de fuera de la celda (``np``, ``len``) se
    quedan como están.

    >>> normalize("def f(x):\\n    y = x*2  # doble\\n    return y")
    'def fun1(arg1):\\n    var1 = arg1 * 2\\n    return var1'
    """
    tree = _parse(student_version(source))
    if tree is None:
        return None
    tree = _canonicalize(tree, _canonical_names(tree))
    return ast.unparse(ast.fix_missing_locations(tree))


# ---------------------------------------------------------------------------
# Instrucciones, símbolos y parecido
# ---------------------------------------------------------------------------

_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


_F_STRING = re.compile(r"^[rbuRBU]*[fF]")
_F_PARTS = re.compile(r"\{\{|\}\}|\{[^{}]*\}|[^{}]+")


def _string_tokens(text: str) -> list[str]:
    """Un texto es un símbolo; una f-string, sus trozos y los símbolos de
    cada ``{campo}`` (Python 3.11 da la f-string entera como un solo token, y
    los nombres de dentro deben compararse como los de fuera)."""
    if not _F_STRING.match(text):
        return [text]
    parts = []
    for piece in _F_PARTS.findall(text):
        if piece.startswith("{") and piece not in ("{{", "}}"):
            parts += ["{", *tokens(piece[1:-1]), "}"]
        else:
            parts.append(piece)
    return parts


def tokens(normalized: str) -> list[str]:
    """Los símbolos (nombres, operadores, números, textos) de un código, sin
    saltos de línea, sangrías ni comentarios."""
    try:
        found = tokenize.generate_tokens(io.StringIO(normalized + "\n").readline)
        return [
            part
            for t in found
            if t.type not in _LAYOUT
            for part in (
                _string_tokens(t.string) if t.type == tokenize.STRING else [t.string]
            )
        ]
    except (tokenize.TokenError, SyntaxError):
        return normalized.split()


def _statements(tree: ast.Module):
    """Cada instrucción del código en orden, sin los cuerpos de las
    compuestas: ``(profundidad, nodo, texto de la cabecera)``.

    ``if x:``, ``else:``, ``except E as e:`` o ``def f(a):`` son una
    instrucción cada una; lo que llevan dentro va después, un nivel más hondo.
    """

    def header(node: ast.AST) -> str:
        shallow = copy.copy(node)
        for name in _BODIES:
            if hasattr(shallow, name):
                setattr(shallow, name, [])
        return ast.unparse(shallow)

    def visit(nodes, depth: int):
        for node in nodes:
            compound = any(getattr(node, name, None) for name in _BODIES)
            yield depth, node, header(node) if compound else ast.unparse(node)
            if not compound:
                continue
            yield from visit(getattr(node, "body", []), depth + 1)
            for handler in getattr(node, "handlers", []):
                yield depth, handler, header(handler)
                yield from visit(handler.body, depth + 1)
            for case in getattr(node, "cases", []):
                yield depth, case, "case " + ast.unparse(case.pattern) + ":"
                yield from visit(case.body, depth + 1)
            if getattr(node, "orelse", None):
                yield depth, None, "else:"
                yield from visit(node.orelse, depth + 1)
            if getattr(node, "finalbody", None):
                yield depth, None, "finally:"
                yield from visit(node.finalbody, depth + 1)

    yield from visit(tree.body, 0)


def _bound_here(node: ast.AST | None) -> list[str]:
    """Los nombres que define una instrucción (sin mirar en sus cuerpos)."""
    if node is None:
        return []
    shallow = copy.copy(node)
    for name in _BODIES:
        if hasattr(shallow, name):
            setattr(shallow, name, [])
    names = []
    for child in _preorder(shallow):
        for name, how in _identifiers(child):
            if how and name not in names:
                names.append(name)
    return names


@dataclass(frozen=True)
class _Code:
    """Lo que se compara de una respuesta normalizada.

    Las instrucciones llevan cada nombre local cambiado por una etiqueta que
    sale de **cómo se define** (la instrucción que le da su primer valor), no
    del orden en que aparece: así, reordenar instrucciones independientes no
    cambia ninguna etiqueta, y ``one_hot - probs`` sigue siendo distinto de
    ``probs - one_hot``.
    """

    normalized: str
    lines: tuple[tuple[int, tuple[str, ...]], ...]
    counts: Counter
    size: int

    @property
    def tokens(self) -> list[str]:
        return [token for _, words in self.lines for token in words]


@lru_cache(maxsize=4096)
def _code(normalized: str) -> _Code:
    tree = ast.parse(normalized)
    # Los nombres locales ya son canónicos: su prefijo dice cómo se definen.
    local = _canonical_names(tree)
    kinds = {name: _KIND.match(canonical).group() for name, canonical in local.items()}
    statements = list(_statements(tree))
    label: dict[str, str] = {}
    for depth, node, text in statements:
        words = tokens(text)
        for name in _bound_here(node):
            if name in local and name not in label:
                signature = (depth, tuple(_label(w, name, label, kinds) for w in words))
                digest = hashlib.sha1(repr(signature).encode()).hexdigest()[:8]
                label[name] = f"{kinds[name]}_{digest}"
    lines = tuple(
        (depth, tuple(label.get(w, kinds.get(w, w)) for w in tokens(text)))
        for depth, _, text in statements
    )
    body = sum(
        len(tokens(text))
        for _, node, text in statements
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    )
    return _Code(normalized, lines, Counter(lines), body)


def _label(word: str, itself: str, label: dict[str, str], kinds: dict[str, str]):
    if word == itself:
        return "@"
    return label.get(word, kinds.get(word, word))


def size(normalized: str) -> int:
    """Símbolos del cuerpo de un código normalizado, sin las cabeceras
    ``def ...:`` / ``class ...:`` (que ya da la celda de partida)."""
    return _code(normalized).size


def _is_datum(node: ast.AST) -> bool:
    """Un valor que se escribe, no se calcula: una constante, un nombre, un
    atributo, o una lista, tupla o diccionario de ellos."""
    if isinstance(node, ast.Constant | ast.Name | ast.Attribute):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True  # -1, -1e-3
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_is_datum(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(
            k is not None and _is_datum(k) and _is_datum(v)
            for k, v in zip(node.keys, node.values, strict=True)
        )
    return False


#: Una llamada con al menos tantos argumentos con nombre que son datos es una
#: configuración (``DPOConfig(...)``, ``GRPOTrainer(...)``), no un cálculo.
CONFIG_KEYWORDS = 4


class _DropConfigurations(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        data = [k for k in node.keywords if k.arg is not None and _is_datum(k.value)]
        if len(data) >= CONFIG_KEYWORDS:
            node.keywords = [k for k in node.keywords if k not in data]
        return node


def logic_size(normalized: str) -> int:
    """Como :func:`size`, sin los argumentos con nombre que son datos
    (``beta=0.1``, ``output_dir=output_dir``, ``report_to=[]``...) de las
    llamadas que son configuraciones (:data:`CONFIG_KEYWORDS` o más).

    Una respuesta que es una configuración (``GRPOConfig(...)`` con quince
    campos) mide mucho en símbolos y no tiene lógica: dos personas que leen el
    mismo enunciado la escriben igual. Lo que cuenta para decir «es una
    copia» es lo que se calcula.
    """
    try:
        tree = ast.parse(normalized)
    except SyntaxError:
        return size(normalized)
    tree = _DropConfigurations().visit(tree)
    return size(ast.unparse(ast.fix_missing_locations(tree)))


def is_trivial(normalized: str | None) -> bool:
    """Si una respuesta es demasiado corta para que coincidir en ella diga
    algo: menos de :data:`MIN_TOKENS` símbolos en el cuerpo sin contar los
    campos de una configuración (:func:`logic_size`), o no se entiende."""
    return normalized is None or logic_size(normalized) < MIN_TOKENS


def similarity(a: str | None, b: str | None) -> float:
    """Parecido entre dos códigos normalizados, de 0 a 1.

    Es la fracción de los símbolos de los dos que están en instrucciones que
    aparecen igual en el otro, sin contar su orden: 1 si solo cambia el orden,
    ``2n/(2n+k)`` si a un código de ``n`` símbolos se le añade una instrucción
    de ``k``, y menos en cuanto una instrucción cambia aunque sea en un
    símbolo. ``0`` si alguno es ``None``.
    """
    if a is None or b is None:
        return 0.0
    if a == b:
        return 1.0
    code_a, code_b = _code(a), _code(b)
    total = len(code_a.tokens) + len(code_b.tokens)
    common = code_a.counts & code_b.counts
    shared = sum(len(words) * n for (_, words), n in common.items())
    return 2 * shared / total if total else 0.0


def near_identical(a: str | None, b: str | None) -> bool:
    """Si dos códigos normalizados, distintos y no triviales, son casi
    idénticos: cada instrucción del más corto está, tal cual, en el otro, y
    :func:`similarity` llega a :data:`NEAR_SIMILARITY`."""
    if a is None or b is None or a == b or is_trivial(a) or is_trivial(b):
        return False
    small, large = sorted((_code(a).counts, _code(b).counts), key=lambda c: c.total())
    if small - large:
        return False
    return similarity(a, b) >= NEAR_SIMILARITY


def _difference(a: str, b: str) -> str:
    """Qué separa dos respuestas casi idénticas, en palabras."""
    extra = abs(_code(a).counts.total() - _code(b).counts.total())
    if not extra:
        return "otro orden"
    return "1 instrucción de más" if extra == 1 else f"{extra} instrucciones de más"


def is_reference_copy(student_source: str, reference_source: str) -> bool:
    """Si una celda es la solución de referencia: idéntica después de
    normalizar (nombres, comentarios, formato) y no trivial."""
    student = normalize(student_source)
    return (
        student is not None
        and student == normalize(reference_source)
        and not is_trivial(student)
    )


# ---------------------------------------------------------------------------
# Una clase entera
# ---------------------------------------------------------------------------


def solution_cells(nb: NotebookNode) -> dict[str, str]:
    """``grade_id → código`` de las celdas de solución de código del cuaderno
    (nbgrader ``solution: true`` y ``grade: false``). Si una celda aparece
    repetida, cuenta la primera."""
    cells: dict[str, str] = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code" or not is_solution(cell):
            continue
        if is_graded(cell) or not grade_id_of(cell):
            continue
        cells.setdefault(grade_id_of(cell), source_text(cell))
    return cells


@dataclass(frozen=True)
class Match:
    """Un parecido en un ejercicio.

    Attributes:
        grade_id: la celda de solución.
        kind: :data:`IDENTICAL` o :data:`NEAR`.
        students: las estudiantes con el mismo código normalizado (en
            «idéntico», el grupo entero, de dos o más).
        others: en «casi idéntico», las del otro código; vacío si el otro
            código es la solución de referencia (``reference``).
        score: :func:`similarity` entre los dos códigos (1 en «idéntico»).
        detail: en «casi idéntico», qué los separa («otro orden», «1
            instrucción de más»).
        reference: si el parecido es con la solución de referencia.
    """

    grade_id: str
    kind: str
    students: tuple[str, ...]
    others: tuple[str, ...] = ()
    score: float = 1.0
    detail: str = ""
    reference: bool = False

    def pairs(self) -> set[frozenset[str]]:
        """Las parejas de estudiantes que implica este parecido."""
        if self.reference:
            return set()
        if self.kind == IDENTICAL:
            return {frozenset(p) for p in itertools.combinations(self.students, 2)}
        return {frozenset((a, b)) for a in self.students for b in self.others}


@dataclass
class ExerciseSimilarity:
    """Los parecidos de un ejercicio y cuántas respuestas se compararon."""

    grade_id: str
    compared: int = 0
    unanswered: int = 0
    trivial: int = 0
    unreadable: list[str] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)

    @property
    def reference_copies(self) -> list[str]:
        """Las estudiantes cuya celda es idéntica a la solución de referencia."""
        return sorted(
            s
            for m in self.matches
            if m.reference and m.kind == IDENTICAL
            for s in m.students
        )


@dataclass
class Similarity:
    """Los parecidos de una clase, por ejercicio (en el orden del cuaderno)."""

    module_id: str
    exercises: dict[str, ExerciseSimilarity] = field(default_factory=dict)

    def matches(self) -> list[Match]:
        return [m for ex in self.exercises.values() for m in ex.matches]

    def pairs(self) -> set[tuple[str, frozenset[str]]]:
        """``(grade_id, {a, b})`` de cada pareja de estudiantes señalada."""
        return {(m.grade_id, pair) for m in self.matches() for pair in m.pairs()}

    def reference_copies(self) -> dict[str, list[str]]:
        """``grade_id → estudiantes`` con la celda idéntica a la referencia."""
        return {
            grade_id: ex.reference_copies
            for grade_id, ex in self.exercises.items()
            if ex.reference_copies
        }

    def students(self) -> dict[str, list[str]]:
        """``estudiante → ejercicios`` en los que aparece algún parecido."""
        found: dict[str, list[str]] = {}
        for m in self.matches():
            for student in (*m.students, *m.others):
                if m.grade_id not in found.setdefault(student, []):
                    found[student].append(m.grade_id)
        return found


def _compare_exercise(
    grade_id: str,
    answers: dict[str, str],
    reference: str | None,
    starter: str | None,
) -> ExerciseSimilarity:
    """Agrupa las respuestas idénticas y busca las casi idénticas."""
    result = ExerciseSimilarity(grade_id)
    starter_code = normalize(starter) if starter is not None else None
    groups: dict[str, list[str]] = {}
    for student in sorted(answers):
        code = normalize(answers[student])
        if code is None:
            result.unreadable.append(student)
        elif starter_code is not None and code == starter_code:
            result.unanswered += 1
        elif is_trivial(code):
            result.trivial += 1
        else:
            result.compared += 1
            groups.setdefault(code, []).append(student)
    reference_code = normalize(reference) if reference is not None else None
    if is_trivial(reference_code):
        reference_code = None

    for code, members in groups.items():
        if code == reference_code:
            result.matches.append(
                Match(grade_id, IDENTICAL, tuple(members), reference=True)
            )
        elif len(members) > 1:
            result.matches.append(Match(grade_id, IDENTICAL, tuple(members)))
    codes = list(groups)
    if reference_code is not None and reference_code not in groups:
        codes.append(reference_code)
    for a, b in itertools.combinations(codes, 2):
        if not near_identical(a, b):
            continue
        if b == reference_code or a == reference_code:
            student_code = a if b == reference_code else b
            result.matches.append(
                Match(
                    grade_id,
                    NEAR,
                    tuple(groups[student_code]),
                    score=similarity(a, b),
                    detail=_difference(a, b),
                    reference=True,
                )
            )
        else:
            result.matches.append(
                Match(
                    grade_id,
                    NEAR,
                    tuple(groups[a]),
                    tuple(groups[b]),
                    score=similarity(a, b),
                    detail=_difference(a, b),
                )
            )
    return result


def class_similarity(
    module_id: str,
    notebooks: dict[str, NotebookNode],
    reference_nb: NotebookNode,
    release_nb: NotebookNode,
) -> Similarity:
    """Los parecidos entre las entregas de una clase, ejercicio a ejercicio.

    Args:
        module_id: el módulo, p. ej. ``"01_bandidos"``.
        notebooks: ``id de estudiante → cuaderno entregado``.
        reference_nb: el cuaderno de ``solutions/`` (con las soluciones).
        release_nb: el cuaderno publicado de ``course/``: las celdas que siguen
            como en él no se han respondido y no se comparan.

    Returns:
        Un :class:`Similarity` con, para cada celda de solución del cuaderno de
        referencia, los grupos de estudiantes con el mismo código normalizado,
        las parejas casi idénticas y quién entregó la solución de referencia.
    """
    references = solution_cells(reference_nb)
    starters = solution_cells(release_nb)
    cells = {student: solution_cells(nb) for student, nb in notebooks.items()}
    result = Similarity(module_id)
    for grade_id, reference in references.items():
        answers = {
            student: own[grade_id] for student, own in cells.items() if grade_id in own
        }
        result.exercises[grade_id] = _compare_exercise(
            grade_id, answers, reference, starters.get(grade_id)
        )
    return result


# ---------------------------------------------------------------------------
# La sección del informe
# ---------------------------------------------------------------------------


def _names(students: tuple[str, ...]) -> str:
    return ", ".join(html.escape(s) for s in students)


def _row(match: Match) -> str:
    if match.kind == IDENTICAL:
        kind = "idéntico a la solución" if match.reference else "idéntico"
        who = _names(match.students)
    else:
        kind = "casi idéntico a la solución" if match.reference else "casi idéntico"
        kind += f" ({html.escape(match.detail)})"
        who = _names(match.students)
        if match.others:
            who += " ↔ " + _names(match.others)
    return f"<tr><td>{kind}</td><td>{who}</td><td>{percent(match.score, 0)}</td></tr>"


def render_html(sim: Similarity, titles: dict[str, str]) -> str:
    """La sección «Parecidos entre entregas» del informe de la clase (HTML).

    Args:
        sim: lo que devuelve :func:`class_similarity`.
        titles: ``grade_id → título`` de cada ejercicio (el de su
            comprobación); si falta uno, se usa el ``grade_id``.

    Returns:
        Un ``<section id="parecidos">`` con una tabla corta por cada ejercicio
        con parecidos: los grupos de tres o más con el mismo código van en una
        sola fila, y la solución de referencia, aparte.
    """
    parts = [
        '<section id="parecidos">',
        "<h2>Parecidos entre entregas</h2>",
        "<p>Cada celda de solución se compara con las de las demás entregas y "
        "con la solución de referencia después de <b>normalizarla</b>: no "
        "cuentan los nombres de variables, argumentos y funciones propias, los "
        "comentarios, los docstrings, el formato ni las comillas. "
        "<b>Idéntico</b>: el mismo código normalizado. <b>Casi idéntico</b>: "
        "cada instrucción de una está, tal cual, en la otra, quizá en otro "
        f"orden o con alguna de más. Las respuestas de menos de {MIN_TOKENS} "
        "símbolos (una fórmula de una línea, a la que muchas llegan por su "
        "cuenta) no se comparan. Un parecido no prueba una copia: señala "
        "entregas que conviene mirar.</p>",
    ]
    quiet, short, unreadable = [], [], []
    for grade_id, exercise in sim.exercises.items():
        title = html.escape(titles.get(grade_id, grade_id))
        if exercise.unreadable:
            unreadable.append(f"{title} ({_names(tuple(exercise.unreadable))})")
        if not exercise.matches:
            if exercise.compared or not exercise.trivial:
                quiet.append(title)
            else:
                short.append(title)
            continue
        answers = "respuestas comparadas"
        if exercise.compared == 1:
            answers = "respuesta comparada"
        ordered = sorted(
            exercise.matches,
            key=lambda m: (not m.reference, m.kind != IDENTICAL, -m.score),
        )
        parts += [
            f"<h3>{title} <small>· {exercise.compared} {answers}</small></h3>",
            "<table><tr><th>tipo</th><th>estudiantes</th><th>código en común</th></tr>",
            *(_row(m) for m in ordered),
            "</table>",
        ]
    if not sim.matches():
        parts.append("<p>Ningún parecido.</p>")
    if quiet and sim.matches():
        parts.append(f"<p>Sin parecidos: {', '.join(quiet)}.</p>")
    if short:
        parts.append(
            f"<p>No se comparan (todas las respuestas son demasiado cortas): "
            f"{', '.join(short)}.</p>"
        )
    if unreadable:
        parts.append(
            "<p>No se pudo leer el código (no es Python válido), así que no se "
            f"compara: {'; '.join(unreadable)}.</p>"
        )
    parts.append("</section>")
    return "\n".join(parts)
