"""Ningún ciclo de imports en ``autograder/``, ``helpers/`` ni ``benchmarks/``,
y las capas de ``helpers`` en su orden (al final del archivo).

Se leen los imports con ``ast``, sin importar nada, y se busca un ciclo en el
grafo «el módulo A importa el módulo B» con los tres paquetes juntos (una
flecha de ``autograder`` a ``helpers`` cuenta igual que una de dentro).

Qué cuenta como import:

* **Todos, también los de dentro de una función** (los «perezosos»). Un import
  perezoso sigue siendo una dependencia: puede servir para arrancar antes
  (``python -m autograder check`` no carga matplotlib), pero no para esquivar
  un ciclo. Si dos módulos se necesitan, lo compartido baja a un tercero.
* Los de un bloque ``if TYPE_CHECKING:`` no cuentan: nunca se ejecutan.
* ``import a.b.c`` y ``from a.b import c`` apuntan a ``a.b.c`` si es un
  módulo, y si no a ``a.b`` (lo que se importa es un nombre de su
  ``__init__``). También apuntan a los paquetes padre (``a``, ``a.b``), cuyo
  ``__init__`` Python ejecuta antes, salvo al paquete que contiene al propio
  módulo (``helpers.checks.grpo`` no depende de ``helpers.checks`` por estar
  dentro).
* Un ``importlib.import_module`` con un nombre calculado no se ve: no es un
  ``import``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("autograder", "helpers", "benchmarks")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found[_module_name(path)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Todos los imports del árbol, en cualquier nivel, salvo TYPE_CHECKING."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _target(name: str, modules: dict[str, Path]) -> str | None:
    """El módulo del proyecto que nombra ``name`` (o su paquete más cercano)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def import_graph() -> dict[str, set[str]]:
    """``módulo → módulos del proyecto que importa`` (ver el docstring)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _import_nodes(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" for alias in node.names] or [base]
            for target in targets:
                found = _target(target, modules)
                if not found:
                    continue
                parts = found.split(".")
                for cut in range(1, len(parts) + 1):
                    module = ".".join(parts[:cut])
                    inside = name == module or name.startswith(f"{module}.")
                    if module in modules and not inside:
                        graph[name].add(module)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Las componentes fuertemente conexas con más de un módulo (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _explain(component: list[str], graph: dict[str, set[str]]) -> str:
    members = set(component)
    arrows = [
        f"    {a} → {b}" for a in component for b in sorted(graph[a]) if b in members
    ]
    return " ↔ ".join(component) + "\n" + "\n".join(arrows)


def test_the_graph_sees_lazy_and_relative_imports():
    # La prueba de abajo solo vale si el grafo ve de verdad los imports.
    graph = import_graph()
    assert "autograder.course" in graph["autograder.grade"]
    # Un import dentro de una función (perezoso) también es una flecha.
    assert "autograder.check" in graph["autograder.__main__"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(package):
    graph = import_graph()
    found = [c for c in cycles(graph) if any(m.split(".")[0] == package for m in c)]
    assert not found, "Ciclos de imports:\n" + "\n\n".join(
        _explain(c, graph) for c in found
    )


# ---------------------------------------------------------------------------
# Las capas de helpers: nada corre hacia arriba al importar
# ---------------------------------------------------------------------------


def test_importing_helpers_does_not_run_the_checks():
    # El calificador importa helpers.formatting y helpers.plotting: no debe
    # ejecutar el núcleo de las comprobaciones. progress_summary se carga al
    # pedirlo.
    code = (
        "import sys, helpers, helpers.formatting, helpers.topics, helpers.demo\n"
        "assert 'helpers.checks' not in sys.modules, 'helpers cargó checks'\n"
        "assert callable(helpers.progress_summary)\n"
        "assert 'helpers.checks' in sys.modules\n"
        "from helpers import progress_summary\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    tree = ast.parse((REPO / "helpers" / "__init__.py").read_text(encoding="utf-8"))
    top = [
        node
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and "checks" in (getattr(node, "module", None) or node.names[0].name)
    ]
    assert not top, "helpers/__init__.py importa helpers.checks al cargarse"


def test_the_checks_core_sits_below_the_topics():
    # core/ importa solo de core/ (y de helpers.formatting y helpers.topics):
    # nunca del paquete helpers.checks ni de un tema.
    graph = import_graph()
    core = [name for name in graph if name.startswith("helpers.checks.core.")]
    assert core, "no se encontró helpers/checks/core/"
    allowed = {"helpers.formatting", "helpers.topics", "helpers"}
    for name in core:
        path = REPO / Path(*name.split(".")).with_suffix(".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _import_nodes(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = node.module
                if module.startswith(("helpers", "autograder", "tests")):
                    assert module.startswith("helpers.checks.core.") or (
                        module in allowed
                    ), f"{name} importa {module}"
    for name in ("helpers.topics", "helpers.demo"):
        assert not graph[name], f"{name} no debe importar nada del proyecto"
