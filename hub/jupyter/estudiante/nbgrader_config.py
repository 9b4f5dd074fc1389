# nbgrader para las estudiantes del hub: el curso y el intercambio. Con esto
# la pestaña «Assignments» (y `nbgrader fetch_assignment`, `submit`,
# `fetch_feedback` en una terminal) trabajan con el intercambio del hub.
import os

c = get_config()  # noqa: F821  (lo inyecta traitlets al cargar el archivo)

c.CourseDirectory.course_id = "rl-para-llms"
c.Exchange.root = os.environ.get("RLHUB_EXCHANGE", "/srv/rl-para-llms/exchange")
