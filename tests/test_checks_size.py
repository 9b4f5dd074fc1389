"""El tamaño de ``helpers/checks/`` no vuelve a crecer (issue #48).

Las comprobaciones visibles son filas de los tipos del núcleo; cuando un tema
vuelve a escribir a mano lo que un tipo ya hace, se nota aquí. Los techos son
lo medido tras la última reescritura (``tools.checks_size.LINE_CEILINGS``):
un cambio que añade líneas de comprobaciones las quita en otra parte, o baja
el techo si acorta. Las cifras, con ``python -m tools.checks_size``.
"""

from tools.checks_size import LINE_CEILINGS, measure


def test_checks_do_not_grow_past_their_ceilings():
    figures = measure()
    assert figures["exercises"] >= 78  # los ejercicios calificados del curso
    for key in ("modules_01_10", "per_exercise"):
        assert figures[key] <= LINE_CEILINGS[key], (
            f"{key}: {figures[key]:.0f} líneas, por encima del techo "
            f"{LINE_CEILINGS[key]}: python -m tools.checks_size"
        )
