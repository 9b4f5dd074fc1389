"""Integridad de una entrega: ni la respuesta de referencia ni comprobaciones trucadas.

Las implementaciones de referencia de cada ejercicio viven en ``helpers`` (las
usan las demostraciones y los módulos siguientes), así que una entrega podría
«responder» con ``from helpers.bandits import incremental_mean``. Y como el
código del estudiante corre en el mismo kernel que las pruebas, podría
cambiar las comprobaciones (``helpers.checks.bandits.check_x = ...``). Este
módulo lo impide en dos capas:

1. **Lectura del código** (:func:`inspect_submission`, con ``ast``, nunca con
   expresiones regulares). En las celdas de solución de cada ejercicio se
   busca la referencia de *ese* ejercicio: un import, un alias, un acceso por
   atributo (``helpers.bandits.incremental_mean``), ``getattr`` con el nombre
   escrito, una función que solo la llama o un código idéntico a la
   referencia (tras normalizarlo, ver :mod:`autograder.similarity`). Ese
   ejercicio puntúa 0 y la entrega queda «revisar». En todas las celdas que
   edita el estudiante se busca además código que escribe en ``helpers.*``,
   ``builtins``, ``sys.modules``, la maquinaria de importación o la de
   IPython: «revisar», con la celda y la construcción en el motivo.
2. **Ejecución** (:func:`guard_test_cells` y :mod:`autograder.guard`). Cada
   celda de pruebas empieza descartando los módulos ``helpers`` y
   ``autograder`` ya importados (así sus comprobaciones se importan de nuevo,
   intactas, desde el disco) y volviendo a importar los nombres de la
   preparación (``np``, ``torch``...). Mientras corre, un perfilador anota si
   el código de una celda llama a la referencia del ejercicio, y al final la
   celda imprime una marca con un número secreto de esta calificación: si la
   marca no sale (alguien se tragó el error de la prueba), la celda puntúa 0.

Quien aprende por su cuenta sigue importando las referencias en las demos de
los módulos siguientes: solo se juzgan las celdas de los ejercicios.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import pkgutil
import re
import secrets
from dataclasses import dataclass, field
from enum import StrEnum

import nbformat
from nbformat.notebooknode import NotebookNode

from autograder.course import (
    ExerciseCells,
    grade_id_of,
    is_graded,
    is_locked,
    nbgrader_meta,
)
from autograder.guard import unwrap as _unwrap
from autograder.similarity import is_reference_copy, logic_size, normalize
from autograder.sources import parse_code

# Raíces de paquetes que un estudiante nunca debe modificar. Escribir en
# cualquier otro módulo importado también es sospechoso, salvo estos ajustes
# legítimos de bibliotecas.
PROTECTED_ROOTS = {
    "helpers",
    "autograder",
    "builtins",
    "sys",
    "importlib",
    "IPython",
    "ipykernel",
}
ALLOWED_MODULE_WRITES = ("torch.backends", "matplotlib", "numpy.set_printoptions")
# Funciones que ejecutan código o lo buscan por su nombre: en una celda de
# ejercicio no se puede saber qué hacen leyéndolas.
DYNAMIC_CALLS = {"exec", "eval", "compile", "__import__", "globals", "vars"}
# Llamadas que tocan el intérprete por dentro.
INTERPRETER_CALLS = {
    "sys.settrace",
    "sys.setprofile",
    "sys._getframe",
    "sys.setrecursionlimit",
    "gc.get_referrers",
    "gc.get_referents",
    "gc.get_objects",
    "inspect.currentframe",
    "inspect.stack",
    "importlib.reload",
    "importlib.import_module",
    "importlib.util.spec_from_file_location",
    "get_ipython",
    "IPython.get_ipython",
}
MUTATING_METHODS = {
    "update",
    "pop",
    "popitem",
    "setdefault",
    "clear",
    "append",
    "insert",
    "extend",
    "remove",
    "__setitem__",
    "__delitem__",
}
SENSITIVE_CONTAINERS = {"sys.modules", "sys.meta_path", "sys.path_hooks"}
MARK_PREFIX = "«AG:"
SNAPSHOT_ID = "autograder-builtins"
SNAPSHOT_SOURCE = (
    "import builtins as __ag_b, sys as __ag_s; "
    "__ag_s._ag_builtins = dict(vars(__ag_b)); del __ag_b, __ag_s"
)
# Tamaño mínimo (símbolos del código normalizado) de una copia de la solución
# publicada que quita los puntos: por debajo, dos personas que entienden la
# fórmula la escriben igual. Con este umbral, ninguna de las respuestas
# correctas de tests/banks cuenta como copia (lo comprueba
# tests/test_grading_integrity.py).
COPY_MIN_TOKENS = 60


# ---------------------------------------------------------------------------
# Las referencias que trae helpers
# ---------------------------------------------------------------------------


@functools.cache
def _helpers_modules() -> tuple:
    import helpers

    modules = []
    for info in pkgutil.walk_packages(helpers.__path__, "helpers."):
        if info.name.startswith("helpers.checks"):
            continue
        try:
            modules.append(importlib.import_module(info.name))
        except Exception:  # un módulo que no importa aquí no es una referencia
            continue
    return (helpers, *modules)


def preload_references() -> None:
    """Importa ya los módulos de helpers (para heredarlos al bifurcar)."""
    _helpers_modules()


def reference_objects(names: tuple[str, ...]) -> list[object]:
    """Los objetos de ``helpers`` que se llaman como lo que define el ejercicio."""
    found: list[object] = []
    for module in _helpers_modules():
        for name in names:
            obj = getattr(module, name, None)
            if obj is None or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not str(getattr(obj, "__module__", "")).startswith("helpers"):
                continue
            if not any(obj is seen for seen in found):
                found.append(obj)
    return found


def code_keys(objects: list[object]) -> list[list]:
    """``[archivo, línea, nombre]`` del código de cada referencia (y sus métodos)."""
    keys: list[list] = []
    for obj in objects:
        functions = [obj]
        if inspect.isclass(obj):
            functions = [_unwrap(v) for v in vars(obj).values()]
        for function in functions:
            code = getattr(function, "__code__", None)
            if code is not None:
                keys.append([code.co_filename, code.co_firstlineno, code.co_name])
    return keys


# ---------------------------------------------------------------------------
# Leer el código de la entrega
# ---------------------------------------------------------------------------


class FindingKind(StrEnum):
    """Qué clase de cosa encontró la lectura (o la ejecución) de una entrega.

    El valor es la palabra que se guarda en ``_estado.json`` y en
    ``resultados.json``; el programa decide por el tipo, nunca por la frase.
    """

    REFERENCE = "referencia"
    """El ejercicio se respondió con la implementación de referencia: puntúa 0."""
    TAMPERING = "manipulación"
    """Escribe en módulos o en el intérprete, o usa las comprobaciones."""
    DYNAMIC = "dinámico"
    """Código que no se puede leer (``exec``, ``getattr`` con un nombre calculado)."""

    @property
    def zeroes_exercise(self) -> bool:
        """¿Pierden sus puntos las celdas de pruebas del ejercicio?"""
        return self is FindingKind.REFERENCE


@dataclass(frozen=True)
class Hit:
    """Una construcción que encontró un detector, antes de ser un mensaje.

    Attributes:
        node: el nodo del código.
        kind: su :class:`FindingKind`.
        what: lo que hace, en español («importa «helpers.x.f», la
            implementación de referencia»).
    """

    node: ast.AST
    kind: FindingKind
    what: str


@dataclass
class Finding:
    """Algo que un docente debe mirar en una entrega.

    Attributes:
        kind: un :class:`FindingKind`.
        cell: el id de la celda.
        message: la frase, en español, con la construcción
            (:func:`render_message`).
        grade_ids: las celdas de pruebas que pierden sus puntos (solo si
            ``kind.zeroes_exercise``).
    """

    kind: FindingKind
    cell: str
    message: str
    grade_ids: list[str] = field(default_factory=list)


def render_message(
    kind: FindingKind,
    cell_id: str,
    *,
    title: str = "",
    node: ast.AST | None = None,
    what: str = "",
) -> str:
    """La frase de un hallazgo, a partir de su tipo y de lo encontrado.

    Con ``node``, la construcción encontrada («…: usa «exec()»: `exec(x)`.»);
    sin él, un hallazgo de todo el código de la celda (una copia de la
    referencia).
    """
    where = f"celda {cell_id}" + (f", {_line(node)}" if node is not None else "")
    if node is None and kind is FindingKind.REFERENCE:
        detail = (
            "el código es idéntico a la solución publicada (o a la de helpers), "
            "salvo nombres y formato."
        )
    else:
        detail = f"{what}: `{_construct(node)}`." if node is not None else f"{what}."
    if title:
        return f"«{title}» ({where}): {detail}"
    return f"{where[0].upper()}{where[1:]}: {detail}"


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` de un nombre o una cadena de atributos, o ``None``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


class _Scope:
    """Los nombres del cuaderno que apuntan a módulos u objetos importados."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {"__builtins__": "builtins"}

    def resolve(self, node: ast.AST) -> str | None:
        """La ruta importada a la que apunta una expresión, si se sabe."""
        if isinstance(node, ast.Call) and _dotted(node.func) == "getattr":
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                base = self.resolve(node.args[0])
                if base and isinstance(node.args[1].value, str):
                    return f"{base}.{node.args[1].value}"
            return None
        if isinstance(node, ast.Subscript):
            base = self.resolve(node.value)
            if base == "sys.modules" and isinstance(node.slice, ast.Constant):
                return str(node.slice.value)
            return None
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        return None

    def bind(self, tree: ast.AST) -> None:
        """Anota los imports y los alias (``x = helpers.bandits``) de un árbol."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        self.aliases[root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name == "*":
                        self._bind_star(node.module)
                    else:
                        path = f"{node.module}.{alias.name}"
                        self.aliases[alias.asname or alias.name] = path
            elif isinstance(
                node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
            ):
                self.aliases.pop(node.name, None)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                value = node.value
                targets = (
                    node.targets if isinstance(node, ast.Assign) else [node.target]
                )
                path = self.resolve(value) if value is not None else None
                for target in targets:
                    if isinstance(target, ast.Name):
                        if path:
                            self.aliases[target.id] = path
                        else:
                            self.aliases.pop(target.id, None)

    def _bind_star(self, module_name: str) -> None:
        try:
            module = importlib.import_module(module_name)
        except Exception:
            return
        public = getattr(module, "__all__", None) or [
            n for n in vars(module) if not n.startswith("_")
        ]
        for name in public:
            self.aliases[name] = f"{module_name}.{name}"


def _lookup(path: str) -> object | None:
    """El objeto de una ruta ``helpers....`` (importando lo que haga falta)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def _is_module_path(path: str) -> bool:
    try:
        return inspect.ismodule(_lookup(path))
    except Exception:
        return False


def _protected(path: str) -> bool:
    return path.split(".")[0] in PROTECTED_ROOTS


def _line(node: ast.AST) -> str:
    return f"línea {getattr(node, 'lineno', '?')}"


def _construct(node: ast.AST) -> str:
    text = ast.unparse(node).splitlines()[0]
    return text if len(text) <= 70 else text[:67] + "..."


def _target_chain(targets: list[ast.AST]) -> list[ast.AST]:
    """Los destinos de una asignación (desplegando tuplas), sin sus índices."""
    found: list[ast.AST] = []
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List):
            found += _target_chain(list(target.elts))
        elif isinstance(target, ast.Starred):
            found += _target_chain([target.value])
        else:
            found.append(target)
    return found


def _tampering(scope: _Scope, tree: ast.AST) -> list[tuple[ast.AST, str]]:
    """Construcciones que escriben en módulos o tocan el intérprete."""
    found: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in _target_chain(targets):
            if isinstance(target, ast.Name) and target.id == "__builtins__":
                found.append((node, "reasigna __builtins__"))
            if isinstance(target, ast.Attribute):
                base = scope.resolve(target.value)
                if base and (_protected(base) or _is_module_path(base)):
                    if not f"{base}.{target.attr}".startswith(ALLOWED_MODULE_WRITES):
                        found.append((node, f"escribe en el módulo «{base}»"))
            if isinstance(target, ast.Subscript):
                base = scope.resolve(target.value)
                value = target.value
                if (
                    isinstance(value, ast.Call)
                    and _dotted(value.func) == "vars"
                    and value.args
                ):
                    module = scope.resolve(value.args[0])
                    if module and (_protected(module) or _is_module_path(module)):
                        base = f"{module}.__dict__"
                if base and (
                    base in SENSITIVE_CONTAINERS
                    or base.startswith("builtins")
                    or base.endswith("__dict__")
                ):
                    found.append((node, f"escribe en «{base}»"))
        if isinstance(node, ast.Call):
            name = _dotted(node.func) or ""
            resolved = scope.resolve(node.func) or name
            if name in ("setattr", "delattr") and node.args:
                base = scope.resolve(node.args[0])
                if base and (_protected(base) or _is_module_path(base)):
                    found.append((node, f"cambia con {name} el módulo «{base}»"))
            if isinstance(node.func, ast.Attribute):
                owner = scope.resolve(node.func.value)
                if owner in SENSITIVE_CONTAINERS and node.func.attr in MUTATING_METHODS:
                    found.append((node, f"modifica «{owner}»"))
                if (
                    owner
                    and owner.endswith("__dict__")
                    and node.func.attr in (MUTATING_METHODS)
                ):
                    found.append((node, f"modifica «{owner}»"))
            if resolved in INTERPRETER_CALLS or name in INTERPRETER_CALLS:
                found.append((node, f"usa «{resolved}» (el intérprete por dentro)"))
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            for module in modules:
                root = module.split(".")[0]
                if root in ("autograder", "ctypes", "ipykernel"):
                    found.append((node, f"importa «{module}»"))
        if isinstance(node, ast.Attribute) and node.attr in (
            "f_globals",
            "f_locals",
            "f_back",
            "__subclasses__",
            "__code__",
            "__globals__",
        ):
            found.append((node, f"accede a «.{node.attr}»"))
    return found


def _references_used(
    scope: _Scope, tree: ast.AST, references: list[object]
) -> list[Hit]:
    """Usos de la referencia del ejercicio: nombre, atributo, alias o getattr
    (:attr:`FindingKind.REFERENCE`), y de las comprobaciones del curso
    (:attr:`FindingKind.TAMPERING`)."""
    found: list[Hit] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            # El import mismo ya trae la referencia al cuaderno.
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if alias.name == "*" and isinstance(node, ast.ImportFrom):
                    # import *: basta con que el módulo traiga la referencia.
                    module = node.module or ""
                    bound = next(
                        (
                            n
                            for n, path in scope.aliases.items()
                            if path.startswith(f"{module}.")
                            and any(_unwrap(_lookup(path)) is r for r in references)
                        ),
                        "",
                    )
                path = scope.aliases.get(bound, "")
                obj = _lookup(path) if path.startswith("helpers") else None
                if obj is not None and any(_unwrap(obj) is r for r in references):
                    found.append(
                        Hit(
                            node,
                            FindingKind.REFERENCE,
                            f"importa «{path}», la implementación de referencia",
                        )
                    )
            continue
        if not isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            continue
        path = scope.resolve(node)
        if not path or not path.startswith("helpers"):
            continue
        obj = _lookup(path)
        if obj is not None and any(_unwrap(obj) is ref for ref in references):
            what = f"usa «{path}», la implementación de referencia"
            found.append(Hit(node, FindingKind.REFERENCE, what))
        elif path.startswith("helpers.checks"):
            what = f"usa «{path}», las comprobaciones del curso"
            found.append(Hit(node, FindingKind.TAMPERING, what))
    return found


def _dynamic(tree: ast.AST, scope: _Scope) -> list[tuple[ast.AST, str]]:
    found: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in DYNAMIC_CALLS:
                found.append((node, f"usa «{name}()»: código que no se puede leer"))
            if (
                name == "getattr"
                and len(node.args) >= 2
                and not isinstance(node.args[1], ast.Constant)
                and (scope.resolve(node.args[0]) or "").startswith(("helpers", "sys"))
            ):
                found.append((node, "busca un atributo de helpers con getattr"))
    return found


def _student_cells(nb: NotebookNode) -> list[NotebookNode]:
    """Las celdas de código cuyo contenido decide el estudiante."""
    return [
        cell
        for cell in nb.cells
        if cell.cell_type == "code" and not is_locked(cell) and not is_graded(cell)
    ]


def inspect_submission(
    nb: NotebookNode, exercises: list[ExerciseCells]
) -> list[Finding]:
    """Lee (sin ejecutar) las celdas de una entrega y anota lo que hay que mirar.

    Args:
        nb: la entrega, con las celdas bloqueadas ya restauradas desde la fuente.
        exercises: los ejercicios del cuaderno fuente (:func:`exercise_cells`).

    Returns:
        Los hallazgos, en orden de celda. Los de tipo
        :attr:`FindingKind.REFERENCE` quitan los puntos de su ejercicio.
    """
    by_solution = {sid: ex for ex in exercises for sid in ex.solution_ids}
    student = {id(c) for c in _student_cells(nb)}
    scope = _Scope()
    findings: list[Finding] = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tree = parse_code(cell.source)
        if tree is None:
            continue
        scope.bind(tree)
        if id(cell) not in student:
            continue
        cell_id = cell.get("id", "?")
        ex = by_solution.get(grade_id_of(cell) or "")
        if ex is not None:
            refs = reference_objects(ex.names)
            hits = _references_used(scope, tree, refs)
            if (
                not hits
                and refs
                and _reference_copy(cell.source, [ex.reference, *_sources(refs)])
            ):
                findings.append(_finding(FindingKind.REFERENCE, cell_id, ex))
            hits += [
                Hit(node, FindingKind.DYNAMIC, what)
                for node, what in _dynamic(tree, scope)
            ]
            findings += [_finding(hit.kind, cell_id, ex, hit) for hit in hits]
        for node, what in _tampering(scope, tree):
            hit = Hit(node, FindingKind.TAMPERING, what)
            findings.append(_finding(hit.kind, cell_id, None, hit))
    return _dedupe(findings)


def _finding(
    kind: FindingKind, cell_id: str, ex: ExerciseCells | None, hit: Hit | None = None
) -> Finding:
    """Un hallazgo con su mensaje (:func:`render_message`) y las celdas que
    pierden sus puntos."""
    message = render_message(
        kind,
        cell_id,
        title=ex.title if ex else "",
        node=hit.node if hit else None,
        what=hit.what if hit else "",
    )
    zeroed = list(ex.test_ids) if ex and kind.zeroes_exercise else []
    return Finding(kind, cell_id, message, zeroed)


def unfinished_test_finding(grade_id: str) -> Finding:
    """Una celda de pruebas que no imprimió su marca final: puntúa 0."""
    message = (
        f"La celda de pruebas {grade_id} no terminó como debe (falta su "
        "marca final): algo capturó, ocultó o saltó sus errores."
    )
    return Finding(FindingKind.TAMPERING, grade_id, message, [grade_id])


def delegated_test_finding(grade_id: str, what: str) -> Finding:
    """Una celda de pruebas en la que el código llamó a la referencia: puntúa 0."""
    message = f"Al ejecutar la celda de pruebas {grade_id}: {what}."
    return Finding(FindingKind.REFERENCE, grade_id, message, [grade_id])


def _reference_copy(source: str, references: list[str]) -> bool:
    """¿Es la solución publicada (o el código de helpers), cambiando solo nombres
    y formato?

    Solo cuenta si el código es largo (:data:`COPY_MIN_TOKENS` símbolos
    normalizados, unas seis líneas con lógica, sin contar los argumentos que
    son datos: ``similarity.logic_size``): una fórmula corta, o una
    configuración que el enunciado dicta campo a campo, la escribe igual
    cualquiera que la entienda. Las copias cortas las ve el docente en el
    apartado de parecidos del informe, sin quitar puntos.
    """
    normalized = normalize(source)
    if normalized is None or logic_size(normalized) < COPY_MIN_TOKENS:
        return False
    return any(is_reference_copy(source, reference) for reference in references)


def _sources(objects: list[object]) -> list[str]:
    """El código fuente de cada referencia de helpers (si se puede leer)."""
    found = []
    for obj in objects:
        try:
            found.append(inspect.getsource(obj))
        except (OSError, TypeError):
            continue
    return found


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[str] = set()
    unique = []
    for finding in findings:
        if finding.message not in seen:
            seen.add(finding.message)
            unique.append(finding)
    return unique


# ---------------------------------------------------------------------------
# Vigilar las celdas de pruebas al ejecutarlas
# ---------------------------------------------------------------------------


@dataclass
class GuardPlan:
    """Lo que se añadió a cada celda de pruebas, para deshacerlo y leerlo."""

    nonce: str
    original: dict[str, str] = field(default_factory=dict)


def setup_imports(source_nb: NotebookNode) -> str:
    """Los ``import`` de las celdas bloqueadas que no califican (la preparación)."""
    lines: list[str] = []
    for cell in source_nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type != "code" or not meta.get("locked") or meta.get("grade"):
            continue
        tree = parse_code(cell.source)
        if tree is None:
            continue
        lines += [
            ast.unparse(node)
            for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom)
        ]
    return "; ".join(dict.fromkeys(lines))


def guard_test_cells(
    nb: NotebookNode, source_nb: NotebookNode, exercises: list[ExerciseCells]
) -> GuardPlan:
    """Añade a cada celda de pruebas su prólogo y su epílogo de vigilancia.

    El prólogo va en la misma línea que la primera de la celda, así los
    números de línea de los errores no cambian.
    """
    plan = GuardPlan(nonce=secrets.token_hex(12))
    by_test = {tid: ex for ex in exercises for tid in ex.test_ids}
    imports = setup_imports(source_nb)
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        ex = by_test.get(meta["grade_id"])
        refs = reference_objects(ex.names) if ex else []
        config = {
            "nonce": plan.nonce,
            "names": list(ex.names) if ex else [],
            "codes": code_keys(refs),
            "classes": [f"{r.__module__}.{r.__qualname__}" for r in refs],
        }
        prologue = (
            "import sys as __ag_sys; "
            "__ag_sys.modules['builtins'].__dict__.update(__ag_sys._ag_builtins); "
            "[__ag_sys.modules.pop(__m) for __m in list(__ag_sys.modules) "
            "if __m.split('.')[0] in ('helpers', 'autograder')]; "
            f"{imports + '; ' if imports else ''}"
            "from autograder.guard import Guard as __AgGuard; "
            f"__ag = __AgGuard({json.dumps(config)!r}); __ag.start(); "
        )
        plan.original[meta["grade_id"]] = cell.source
        cell.source = prologue + cell.source + "\n__ag.finish(globals())\n"
    # Antes de cualquier código del estudiante: una copia de builtins, para
    # devolverle a cada celda de pruebas los abs, isinstance... de verdad.
    nb.cells.insert(0, nbformat.v4.new_code_cell(SNAPSHOT_SOURCE, id=SNAPSHOT_ID))
    return plan


@dataclass
class GuardReport:
    """Lo que dijeron las celdas de pruebas vigiladas."""

    unfinished: list[str] = field(default_factory=list)
    delegated: dict[str, str] = field(default_factory=dict)


def read_guard_marks(nb: NotebookNode, plan: GuardPlan) -> GuardReport:
    """Devuelve a cada celda de pruebas su código y lee (y quita) sus marcas."""
    report = GuardReport()
    nb.cells = [c for c in nb.cells if c.get("id") != SNAPSHOT_ID]
    pattern = re.compile(
        re.escape(MARK_PREFIX) + re.escape(plan.nonce) + r":(?P<data>.*)»\n?"
    )
    for cell in nb.cells:
        grade_id = grade_id_of(cell)
        if grade_id not in plan.original:
            continue
        cell.source = plan.original[grade_id]
        data = None
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                match = pattern.search(output.get("text", ""))
                if match:
                    data = json.loads(match["data"])
                    output["text"] = pattern.sub("", output["text"])
        cell["outputs"] = [
            o
            for o in cell.get("outputs", [])
            if not (o.get("output_type") == "stream" and not o.get("text"))
        ]
        failed = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
        if cell.get("execution_count") is None or failed:
            continue
        if data is None:
            report.unfinished.append(grade_id)
        elif data.get("delegated"):
            report.delegated[grade_id] = str(data["delegated"])
    return report


def zero_cell(cell: NotebookNode, message: str) -> None:
    """Deja una celda de pruebas con un error que explica por qué puntúa 0."""
    cell["outputs"] = [
        *[o for o in cell.get("outputs", []) if o.get("output_type") != "error"],
        nbformat.v4.new_output(
            "error",
            ename="IntegrityError",
            evalue=message,
            traceback=[message],
        ),
    ]
