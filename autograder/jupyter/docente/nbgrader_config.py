# La vista de docente (`make lab-docente`): Formgrader y «Create Assignment»
# leen aquí la configuración del curso, la misma de `python -m autograder`.
from pathlib import Path

load_subconfig(str(Path(__file__).resolve().parents[2] / "nbgrader_config.py"))  # noqa: F821
