# Configuración de nbgrader para el curso. La cargan `python -m autograder`
# (release, grade) y también sirve tal cual a quien use la CLI de nbgrader:
#   nbgrader generate_assignment 01_bandidos --config autograder/nbgrader_config.py
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from autograder.course import GRADING, REPO, SOLUTIONS
from autograder.preprocessors import (
    DeduplicateGradeIds,
    RemoveGradingNotes,
    SandboxedExecute,
    SkipSlowCells,
)

c = get_config()  # noqa: F821  (lo inyecta traitlets al cargar el archivo)

c.CourseDirectory.course_id = "rl-para-llms"
c.CourseDirectory.root = str(REPO)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "course"
# Entregas, calificaciones y gradebook: fuera de git, en .grading/.
c.CourseDirectory.submitted_directory = ".grading/submitted"
c.CourseDirectory.autograded_directory = ".grading/autograded"
c.CourseDirectory.feedback_directory = ".grading/feedback"
c.CourseDirectory.db_url = f"sqlite:///{GRADING / 'gradebook.db'}"

# Junto a cada cuaderno fuente está su texto (NN_x.md, con las soluciones): se
# edita y se revisa, pero nunca se publica ni se copia a las entregas.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    "*.md",
]

# Lo que ve el estudiante donde estaba la solución.
c.ClearSolutions.code_stub = {
    "python": (
        "# TU CÓDIGO AQUÍ\n"
        'raise NotImplementedError("Escribe tu solución aquí y borra esta línea.")'
    )
}
c.ClearSolutions.text_stub = "ESCRIBE TU RESPUESTA AQUÍ"

# Calificar debe tardar segundos: las celdas con la etiqueta «slow»
# (entrenamientos y demos largas) no se ejecutan al calificar. Las pruebas
# ocultas nunca dependen de ellas. nbval sí las ejecuta todas.
c.SkipSlowCells.source_root = str(SOLUTIONS)
c.SandboxedExecute.source_root = str(SOLUTIONS)
# Saneado de cada entrega antes de ejecutarla (las celdas de pruebas y las
# bloqueadas se restauran desde la fuente).
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateGradeIds,
    OverwriteKernelspec,
    OverwriteCells,
    CheckCellMetadata,
]
# Cada entrega se ejecuta aislada (bubblewrap: sin red, solo lectura salvo su
# carpeta, procesos y memoria limitados): ver autograder/sandbox.py.
c.Autograde.autograde_preprocessors = [
    SkipSlowCells,
    SandboxedExecute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]

# Los intentos registrados al calificar encabezan el cuaderno calificado en
# Formgrader, solo para la docente: la retroalimentación de nbgrader (y la de
# autograder/feedback.py) nunca los lleva.
c.GenerateFeedback.preprocessors = [
    RemoveGradingNotes,
    GetGrades,
    CSSHTMLHeaderPreprocessor,
]

# Un límite explícito por celda al calificar (segundos), igual en todas partes.
CELL_TIMEOUT = 60
c.Execute.timeout = CELL_TIMEOUT
c.ExecutePreprocessor.timeout = CELL_TIMEOUT
c.SandboxedExecute.cell_timeout = CELL_TIMEOUT
c.SandboxedExecute.notebook_timeout = 600
c.SandboxedExecute.hide = [str(GRADING), str(SOLUTIONS)]

# Si un estudiante borra una celda de pruebas, se vuelve a poner al calificar.
c.OverwriteCells.add_missing_cells = True
c.OverwriteCells.missing_cell_notification = (
    "Esta celda (id: {cell_id}) faltaba en la entrega y se ha restaurado al "
    "calificar.\n"
)
