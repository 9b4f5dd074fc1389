"""Qué demos del cuaderno no hacen falta para calificar.

Al calificar solo importan las celdas de solución y las de pruebas (y lo que
ellas necesitan). Muchas celdas del curso solo enseñan algo: una figura, un
widget, un «pruébalo», un error común reproducido. Ejecutarlas en cada una de
cien entregas cuesta más que todo lo demás junto.

:func:`demo_cell_ids` lee el cuaderno fuente de atrás hacia delante con
``ast``: una celda libre (sin metadatos de nbgrader) es una demo prescindible
si ninguna celda que sí se ejecuta después lee un nombre que ella asigna o
modifica (``x = ...``, ``x.attr = ...``, ``x[i] = ...``, ``x.metodo(...)``,
salvo los métodos que solo leen, :data:`READ_METHODS`) antes de asignarlo
ella misma. Las celdas «slow» ya no se ejecutan, así que
lo que leen no cuenta. Los módulos importados no cuentan como modificados por
llamar a sus funciones (``plt.show()``, ``np.mean(...)``), ni el espacio de
nombres ``demo = demo_functions(...)`` por llamar a ``demo.softmax(...)``: solo
elige entre la función del estudiante y la de referencia.

Una celda con ``import`` nunca se salta, salvo si solo importa módulos del
propio curso (``from helpers.widgets.bandits import BanditGame``) u otros de
:data:`HARMLESS_IMPORTS`: cargarlos no cambia nada de lo que califica. Y solo
se salta una demo si la entrega la trae **tal cual** está en la fuente: si el
estudiante la cambió (quizá para definir algo que usa su solución), se ejecuta.
"""

from __future__ import annotations

import ast
import symtable

from nbformat.notebooknode import NotebookNode

from autograder.course import nbgrader_meta
from autograder.sources import SLOW_TAG, parse_code


def _root(node: ast.AST) -> str | None:
    """El nombre del que cuelga ``a.b[c].d(...)``: ``a``."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


#: Métodos que solo leen su objeto (los de un tokenizador de Hugging Face y
#: los que pasan un tensor a Python): ``tokenizer.decode(ids)`` no modifica
#: ``tokenizer``. Cualquier otro método cuenta como una modificación.
READ_METHODS = frozenset(
    {
        "apply_chat_template",
        "batch_decode",
        "convert_ids_to_tokens",
        "decode",
        "item",
        "tolist",
    }
)


def _writes_and_reads(node: ast.AST, modules: set[str]) -> tuple[set[str], set[str]]:
    """Nombres que una instrucción asigna o modifica, y nombres que lee."""
    writes: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            writes.add(child.name)
        elif isinstance(child, ast.Import | ast.ImportFrom):
            writes |= {(a.asname or a.name).split(".")[0] for a in child.names}
        elif isinstance(child, ast.Name) and not isinstance(child.ctx, ast.Load):
            writes.add(child.id)
        elif isinstance(child, ast.Attribute | ast.Subscript) and not isinstance(
            child.ctx, ast.Load
        ):
            writes.add(_root(child) or "")
        elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
            root = _root(child.func)
            if root and root not in modules and child.func.attr not in READ_METHODS:
                writes.add(root)  # x.append(...), agent.train(...): modifica x
    writes.discard("")
    return writes, _global_reads(node)


def _global_reads(node: ast.AST) -> set[str]:
    """Nombres globales que lee una instrucción, también dentro de sus funciones.

    Dentro de una función, sus parámetros y variables locales no son lecturas
    de la celda: ``symtable`` sabe qué nombres son de verdad globales.
    """
    reads: set[str] = set()

    def visit(table: symtable.SymbolTable, top: bool) -> None:
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (top or symbol.is_global()):
                reads.add(symbol.get_name())
        for child in table.get_children():
            visit(child, top=False)

    visit(symtable.symtable(ast.unparse(node), "<celda>", "exec"), top=True)
    return reads


def _exposed_reads(statements: list[ast.stmt], assigned: set[str]) -> set[str]:
    """Nombres globales que ``statements`` lee antes de asignarlos ellas mismas.

    Se recorren en orden. La variable de un ``for`` (o el ``as`` de un
    ``with``) está asignada dentro de su cuerpo: ``for a in x: f(a)`` lee
    ``x``, no ``a``. El ``else`` de un ``for`` puede ejecutarse sin ninguna
    vuelta, así que ahí la variable no cuenta como asignada.
    """
    exposed: set[str] = set()
    assigned = set(assigned)
    for statement in statements:
        if isinstance(statement, ast.For | ast.AsyncFor):
            exposed |= _global_reads(statement.iter) - assigned
            targets = _plain_names(statement.target)
            if targets is None:  # for x[i] in ...: lee x e i
                exposed |= _global_reads(statement.target) - assigned
                targets = set()
            exposed |= _exposed_reads(statement.body, assigned | targets)
            exposed |= _exposed_reads(statement.orelse, assigned)
        elif isinstance(statement, ast.With | ast.AsyncWith):
            names: set[str] = set()
            for item in statement.items:
                exposed |= _global_reads(item.context_expr) - assigned
                if item.optional_vars is not None:
                    plain = _plain_names(item.optional_vars)
                    if plain is None:
                        exposed |= _global_reads(item.optional_vars) - assigned
                    names |= plain or set()
            exposed |= _exposed_reads(statement.body, assigned | names)
        elif isinstance(statement, ast.If):
            exposed |= _global_reads(statement.test) - assigned
            exposed |= _exposed_reads(statement.body, assigned)
            exposed |= _exposed_reads(statement.orelse, assigned)
        else:
            exposed |= _global_reads(statement) - assigned
        assigned |= {n.id for n in ast.walk(statement) if _stores(n)}
    return exposed


def _plain_names(target: ast.AST) -> set[str] | None:
    """Los nombres de ``a`` o ``a, (b, *c)``; ``None`` si hay ``x.y`` o ``x[i]``."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Starred):
        return _plain_names(target.value)
    if isinstance(target, ast.Tuple | ast.List):
        names: set[str] = set()
        for element in target.elts:
            inner = _plain_names(element)
            if inner is None:
                return None
            names |= inner
        return names
    return None


def _module_names(cells: list[NotebookNode]) -> set[str]:
    """Nombres que llamar a sus funciones no modifica: módulos y ``demo``."""
    names: set[str] = set()
    for cell in cells:
        tree = parse_code(cell.source)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and _root(node.value.func) == "demo_functions"
            ):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


#: Módulos cuya carga no cambia nada de lo que se califica: los del propio
#: curso, la visualización de IPython, dos de la biblioteca estándar sin estado,
#: math-verify y TRL (importarlos deja igual el tipo por defecto, los hilos, el
#: gradiente y los generadores aleatorios de PyTorch, NumPy y Python: lo
#: comprueba tests/test_autograder_units.py; y el servidor de kernels ya los
#: tiene cargados). El nombre que ligan sí cuenta (como cualquier asignación).
HARMLESS_IMPORTS = ("helpers", "IPython.display", "copy", "math", "math_verify", "trl")


def _harmless(module: str) -> bool:
    return any(module == m or module.startswith(f"{m}.") for m in HARMLESS_IMPORTS)


def _course_import(node: ast.AST) -> bool:
    """¿Importa solo módulos de :data:`HARMLESS_IMPORTS` (sin efectos al calificar)?"""
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and _harmless(node.module or "")
    return all(_harmless(a.name) for a in node.names)


def demo_cell_ids(source_nb: NotebookNode) -> set[str]:
    """Los ids de las demos del cuaderno fuente que calificar no necesita."""
    cells = [c for c in source_nb.cells if c.cell_type == "code"]
    modules = _module_names(cells)
    needed: set[str] = set()
    demos: set[str] = set()
    for cell in reversed(cells):
        if SLOW_TAG in cell.metadata.get("tags", []):
            continue  # no se ejecuta al calificar: lo que lee no cuenta
        tree = parse_code(cell.source)
        if tree is None:
            # Sin poder leerla, se ejecuta y se supone que lo necesita todo.
            needed |= {"*"}
            continue
        writes: set[str] = set()
        for statement in tree.body:
            writes |= _writes_and_reads(statement, modules)[0]
        exposed = _exposed_reads(tree.body, set())
        # Los imports se ejecutan siempre (pueden tener efectos al cargarse),
        # salvo los de submódulos del curso.
        imports = any(
            isinstance(n, ast.Import | ast.ImportFrom) and not _course_import(n)
            for n in ast.walk(tree)
        )
        free = not nbgrader_meta(cell) and not imports
        if free and "*" not in needed and not (writes & needed):
            demos.add(cell.get("id", ""))
        else:
            needed |= exposed
    demos.discard("")
    return demos


def _stores(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
