# nbgrader para la docente del hub: la configuración del curso
# (autograder/nbgrader_config.py, con el aislamiento al calificar) con dos
# cambios. La fuente (solutions/) y la versión publicada (course/) se leen del
# repositorio; entregas, notas, retroalimentación y gradebook van a
# ~/rl-para-llms/.grading/, que es de la docente. Y el intercambio es el del hub.
import os
from pathlib import Path

c = get_config()  # noqa: F821  (lo inyecta traitlets al cargar el archivo)

REPO = Path(__file__).resolve().parents[3]
load_subconfig(str(REPO / "autograder" / "nbgrader_config.py"))  # noqa: F821

COURSE = Path.home() / "rl-para-llms"
# El gradebook necesita su carpeta (hub/prepare.py ya la crea en el hub local;
# en Kubernetes el $HOME empieza vacío).
COURSE.mkdir(exist_ok=True, mode=0o700)
(COURSE / ".grading").mkdir(exist_ok=True, mode=0o700)
c.CourseDirectory.root = str(COURSE)
c.CourseDirectory.source_directory = str(REPO / "solutions")
c.CourseDirectory.release_directory = str(REPO / "course")
c.CourseDirectory.db_url = f"sqlite:///{COURSE / '.grading' / 'gradebook.db'}"
c.Exchange.root = os.environ.get("RLHUB_EXCHANGE", "/srv/rl-para-llms/exchange")
# Las entregas nunca ven las notas ni las demás entregas al calificarse.
c.SandboxedExecute.hide = [*c.SandboxedExecute.hide, str(COURSE / ".grading")]
