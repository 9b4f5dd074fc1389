"""Las partes de los cuadernos que escribe una herramienta, no una persona.

El glosario (``tools.glossary``), la bibliografía (``tools.bibliography``) y el
«Tiempo estimado» (``tools.study_time``) se escriben en cada
``solutions/NN_x/NN_x.md`` con la misma receta: calcular el texto nuevo y
reescribir el archivo si cambió, o, con ``--check``, solo decir cuál no está al
día. :func:`rewrite` es esa receta, una vez.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

from autograder.course import text_path


def rewrite(
    module_ids: Iterable[str],
    transform: Callable[[str, str], str],
    *,
    check: bool,
    stale: str,
    rewritten: str,
) -> bool:
    """Aplica ``transform(texto, módulo)`` al texto MyST de cada módulo.

    Sin ``check`` escribe el resultado donde cambió y lo dice con
    ``«módulo: rewritten»``; con ``check`` no escribe nada y avisa por stderr
    con ``«módulo: stale»``. Devuelve ``True`` si con ``check`` algún módulo no
    estaba al día. Los módulos sin texto se saltan.
    """
    failed = False
    for module_id in module_ids:
        path = text_path(module_id)
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        new = transform(text, module_id)
        if new == text:
            continue
        if check:
            print(f"{module_id}: {stale}", file=sys.stderr)
            failed = True
        else:
            path.write_text(new, encoding="utf-8")
            print(f"{module_id}: {rewritten}")
    return failed
