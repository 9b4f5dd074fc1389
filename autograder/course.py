"""El curso tal como lo ve el autograder: rutas y el modelo de cada cuaderno.

Es el único módulo de ``autograder`` que lee los metadatos de nbgrader de un
cuaderno y sus encabezados. Los demás piden aquí lo que necesitan:

* las rutas del repositorio (``REPO``, ``SOLUTIONS``, ``COURSE``, ``GRADING``)
  y la de cada cuaderno (:func:`source_path`, :func:`text_path`,
  :func:`release_path`): también las herramientas de ``tools/`` y
  ``benchmarks/`` las piden aquí;
* las celdas calificadas de un módulo, con sus puntos y su título
  (:class:`NotebookModel`, :func:`read_module`);
* los ejercicios: las celdas de solución de código seguidas y las celdas de
  pruebas que vienen detrás, con el título del encabezado «Ejercicio N · …»
  (:class:`ExerciseCells`).

El título de una celda sale siempre del cuaderno: el último encabezado ``###``
de una celda de texto que no sea de nbgrader, sin los puntos del final
(«(2 puntos)», «(2 puntos, corrección manual)»). Las marcas
``### BEGIN SOLUTION`` de una respuesta escrita no son encabezados.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SOLUTIONS = REPO / "solutions"
COURSE = REPO / "course"
GRADING = REPO / ".grading"

# Lo que se quita del final de un encabezado: sus puntos, con o sin nota.
_POINTS = re.compile(r"\s*\([^()]*\bpuntos?\b[^()]*\)\s*$")
_MARKERS = re.compile(r"^#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")


# ---------------------------------------------------------------------------
# Rutas
# ---------------------------------------------------------------------------


def notebook_name(module_id: str) -> str:
    """El nombre del cuaderno de un módulo: ``07_grpo.ipynb``."""
    return f"{module_id}.ipynb"


def text_name(module_id: str) -> str:
    """El nombre del texto MyST de un módulo: ``07_grpo.md``."""
    return f"{module_id}.md"


def source_path(module_id: str) -> Path:
    """El cuaderno fuente (con soluciones) de un módulo, en ``solutions/``."""
    return SOLUTIONS / module_id / notebook_name(module_id)


def text_path(module_id: str) -> Path:
    """El texto MyST del cuaderno fuente, al lado (el que se edita: ver
    :mod:`tools.notebook_text`)."""
    return SOLUTIONS / module_id / text_name(module_id)


def release_path(module_id: str) -> Path:
    """El cuaderno publicado (el del estudiante) de un módulo, en ``course/``."""
    return COURSE / module_id / notebook_name(module_id)


def module_ids(*, text: bool = False) -> list[str]:
    """Los ids de los módulos que hay en ``solutions/``, en orden: los que
    tienen cuaderno o, con ``text``, los que tienen texto MyST."""
    path = text_path if text else source_path
    return sorted(p.name for p in SOLUTIONS.iterdir() if path(p.name).exists())


# ---------------------------------------------------------------------------
# Una celda
# ---------------------------------------------------------------------------


def nbgrader_meta(cell: NotebookNode) -> dict:
    """Los metadatos de nbgrader de una celda (``{}`` si no tiene)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id_of(cell: NotebookNode) -> str | None:
    """El ``grade_id`` de una celda, si lo tiene."""
    return nbgrader_meta(cell).get("grade_id")


def is_graded(cell: NotebookNode) -> bool:
    """¿Da puntos la celda (``grade: true``)?"""
    return bool(nbgrader_meta(cell).get("grade"))


def is_solution(cell: NotebookNode) -> bool:
    """¿La escribe el estudiante (``solution: true``)?"""
    return bool(nbgrader_meta(cell).get("solution"))


def is_locked(cell: NotebookNode) -> bool:
    """¿La bloquea nbgrader (``locked: true``)?"""
    return bool(nbgrader_meta(cell).get("locked"))


def is_nbgrader_cell(cell: NotebookNode) -> bool:
    """¿Es una celda que nbgrader califica o bloquea (solución, prueba, tarea)?"""
    meta = nbgrader_meta(cell)
    return any(meta.get(key) for key in ("solution", "grade", "locked", "task"))


def points_of(cell: NotebookNode) -> float:
    """Los puntos de una celda calificada (0 si no tiene)."""
    return float(nbgrader_meta(cell).get("points", 0) or 0)


def source_text(cell: NotebookNode) -> str:
    """El código o el texto de una celda (también si viene en líneas)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def heading(cell: NotebookNode) -> str | None:
    """El título que una celda de texto da a lo que viene debajo, o ``None``.

    Es su último encabezado ``###`` (el más cercano a lo que sigue), sin los
    puntos del final. Las celdas de nbgrader (una respuesta escrita con sus
    marcas ``### BEGIN SOLUTION``) no dan título.
    """
    if cell.get("cell_type") != "markdown" or is_solution(cell) or is_graded(cell):
        return None
    found = None
    for line in source_text(cell).splitlines():
        if line.startswith("### ") and not _MARKERS.match(line):
            found = _POINTS.sub("", line[4:]).strip()
    return found or None


def defined_names(source: str) -> list[str]:
    """Nombres que define el nivel superior de una celda (funciones, clases, =)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------------------
# Los ejercicios y las celdas calificadas de un cuaderno
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ExerciseCells:
    """Un ejercicio de código del cuaderno fuente.

    Attributes:
        title: «Ejercicio 1 · La media incremental» (el encabezado, sin puntos).
        solution_ids: ``grade_id`` de sus celdas de solución.
        test_ids: ``grade_id`` de sus celdas de pruebas.
        names: lo que definen sus soluciones (``incremental_mean``...).
        reference: la solución de referencia (el código del cuaderno fuente).
    """

    title: str
    solution_ids: tuple[str, ...]
    test_ids: tuple[str, ...]
    names: tuple[str, ...]
    reference: str


@dataclass(frozen=True)
class GradedCell:
    """Una celda que da puntos.

    Attributes:
        grade_id: su id en nbgrader.
        points: sus puntos.
        cell_type: ``"code"`` (una celda de pruebas) o ``"markdown"`` (una
            respuesta escrita, que se corrige a mano).
        title: el título que ve la gente: el del ejercicio (con «· prueba 2 de
            3» si tiene varias celdas de pruebas) o el encabezado que precede
            a la respuesta escrita.
    """

    grade_id: str
    points: float
    cell_type: str
    title: str

    @property
    def manual(self) -> bool:
        """¿Se corrige a mano? (las respuestas escritas)."""
        return self.cell_type == "markdown"


def exercise_cells(nb: NotebookNode) -> list[ExerciseCells]:
    """Agrupa las celdas de un cuaderno en ejercicios de código, en orden.

    Las celdas de solución de código seguidas forman un ejercicio junto con
    las celdas de pruebas que vienen detrás (hasta la siguiente solución o el
    siguiente encabezado).
    """
    found: list[ExerciseCells] = []
    title = ""
    solutions: list[NotebookNode] = []
    tests: list[str] = []

    def close() -> None:
        if solutions and tests:
            source = "\n\n".join(source_text(c) for c in solutions)
            found.append(
                ExerciseCells(
                    title=title,
                    solution_ids=tuple(grade_id_of(c) for c in solutions),
                    test_ids=tuple(tests),
                    names=tuple(defined_names(source)),
                    reference=source,
                )
            )

    for cell in nb.cells:
        title_here = heading(cell)
        code = cell.get("cell_type") == "code"
        if title_here and not solutions:
            title = title_here
        if is_solution(cell) and not is_graded(cell) and code:
            if tests:
                close()
                solutions, tests = [], []
            solutions.append(cell)
        elif is_graded(cell) and code and solutions:
            tests.append(grade_id_of(cell))
        elif title_here and tests:
            close()
            solutions, tests = [], []
            title = title_here
    close()
    return found


def cell_titles(nb: NotebookNode, numbered: bool = True) -> dict[str, str]:
    """El título que ve la gente para cada celda calificada o de solución.

    Las celdas de un ejercicio llevan el título del ejercicio; si un ejercicio
    tiene varias celdas de pruebas y ``numbered``, se numeran («… · prueba 2
    de 2»). Las demás (una respuesta escrita) llevan el encabezado que las
    precede; sin ninguno, su ``grade_id``.
    """
    titles: dict[str, str] = {}
    for ex in exercise_cells(nb):
        for grade_id in ex.solution_ids:
            titles[grade_id] = ex.title
        for index, grade_id in enumerate(ex.test_ids, start=1):
            suffix = f" · prueba {index} de {len(ex.test_ids)}"
            several = numbered and len(ex.test_ids) > 1
            titles[grade_id] = ex.title + (suffix if several else "")
    last = ""
    for cell in nb.cells:
        last = heading(cell) or last
        grade_id = grade_id_of(cell)
        if grade_id and grade_id not in titles:
            titles[grade_id] = last or grade_id
    return titles


@dataclass(frozen=True)
class NotebookModel:
    """Lo que el autograder necesita saber de un cuaderno.

    Attributes:
        graded: las celdas que dan puntos, en orden.
        solution_ids: las celdas que escribe el estudiante (código y texto).
        exercises: los ejercicios de código (:func:`exercise_cells`).
        titles: ``grade_id → título`` (:func:`cell_titles`).
    """

    graded: tuple[GradedCell, ...]
    solution_ids: tuple[str, ...]
    exercises: tuple[ExerciseCells, ...]
    titles: dict[str, str]

    @classmethod
    def of(cls, nb: NotebookNode) -> NotebookModel:
        """El modelo de un cuaderno (fuente, publicado o entregado)."""
        titles = cell_titles(nb)
        graded = []
        seen: set[str] = set()
        for cell in nb.cells:
            grade_id = grade_id_of(cell)
            if not is_graded(cell) or grade_id in seen:
                continue
            seen.add(grade_id)
            graded.append(
                GradedCell(grade_id, points_of(cell), cell.cell_type, titles[grade_id])
            )
        return cls(
            graded=tuple(graded),
            solution_ids=tuple(grade_id_of(c) for c in nb.cells if is_solution(c)),
            exercises=tuple(exercise_cells(nb)),
            titles=titles,
        )

    @property
    def grade_ids(self) -> list[str]:
        """Los ``grade_id`` de las celdas calificadas, en orden."""
        return [cell.grade_id for cell in self.graded]

    @property
    def points(self) -> dict[str, float]:
        """``grade_id → puntos`` de las celdas calificadas."""
        return {cell.grade_id: cell.points for cell in self.graded}

    @property
    def max_score(self) -> float:
        """Los puntos de todo el cuaderno."""
        return sum(cell.points for cell in self.graded)

    @property
    def manual_ids(self) -> list[str]:
        """Las celdas que se corrigen a mano (respuestas escritas)."""
        return [cell.grade_id for cell in self.graded if cell.manual]


def read_source(module_id: str) -> NotebookNode:
    """El cuaderno fuente de un módulo."""
    return nbformat.read(source_path(module_id), as_version=4)


def read_module(module_id: str) -> NotebookModel:
    """El modelo del cuaderno fuente de un módulo."""
    return NotebookModel.of(read_source(module_id))


def grade_cells(module_id: str) -> list[tuple[str, float]]:
    """``(grade_id, puntos)`` de cada celda calificada del módulo, en orden."""
    return [(cell.grade_id, cell.points) for cell in read_module(module_id).graded]
