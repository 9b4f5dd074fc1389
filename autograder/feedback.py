"""La retroalimentación de cada estudiante: un HTML que puede guardar.

Se escribe a partir del cuaderno calificado, sin la plantilla de nbgrader: por
cada ejercicio (por su título, el del cuaderno), los puntos, si pasa y el
diagnóstico de la comprobación. Una respuesta escrita que espera su nota manual
sale «pendiente», y la nota total dice cuántos puntos faltan por corregir a
mano. Debajo, el enunciado, su código y lo que imprimieron las
pruebas. El código de las pruebas ocultas **no** aparece (ni en las celdas ni
en los errores: solo se muestra el mensaje, nunca la traza), salvo con
``--feedback-show-hidden``. Las fórmulas van en MathML, que los navegadores
dibujan sin descargar nada: el archivo se lee sin red.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import mistune
from latex2mathml.converter import convert as latex_to_mathml
from nbformat.notebooknode import NotebookNode

from autograder.audit import NOTES_CELL_ID
from autograder.course import NotebookModel, heading, nbgrader_meta
from autograder.results import Result, Status
from autograder.sources import HIDDEN_REGION

MAX_MESSAGE = 600
MAX_OUTPUT = 2_000
_MATH = re.compile(r"\$\$(?P<block>.+?)\$\$|\$(?P<inline>[^$\n]+?)\$", re.DOTALL)
_markdown = mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])

#: Lo que la estudiante lee de cada estado de su entrega.
STATUS_WORDS = {
    Status.OK: "calificada",
    Status.REVIEW: "pendiente de revisión por tu docente",
    Status.KILLED: "el kernel se detuvo a mitad",
    Status.TIMEOUT: "se agotó el tiempo del cuaderno",
    Status.ERROR: "no se pudo ejecutar entera",
    Status.INVALID: "el archivo no se pudo leer",
    Status.WRONG_MODULE: "parece el cuaderno de otro módulo",
}


#: La coma decimal del TeX del curso (``0{,}2``), tal como la deja
#: latex2mathml: un operador entre dos números, que el navegador separa
#: («0, 2», como si fueran dos valores).
_DECIMAL_COMMA = re.compile(
    r"<mn>(\d+)</mn><mrow><mo>&#x0002C;</mo></mrow><mn>(\d+)</mn>"
)


def math_to_mathml(tex: str, display: bool) -> str:
    """Una fórmula en MathML; si no se puede convertir, el TeX tal cual. Un
    número con coma decimal (``0{,}2``) queda en un solo ``<mn>0,2</mn>``."""
    try:
        mathml = latex_to_mathml(tex.strip(), display="block" if display else "inline")
    except Exception:  # una macro que latex2mathml no conoce
        return f"<code>{html.escape(tex)}</code>"
    return _DECIMAL_COMMA.sub(r"<mn>\1,\2</mn>", mathml)


def markdown_to_html(text: str) -> str:
    """Markdown a HTML, con las fórmulas ``$…$`` y ``$$…$$`` en MathML."""
    formulas: list[str] = []

    def stash(match: re.Match) -> str:
        block = match["block"] is not None
        formulas.append(math_to_mathml(match["block"] or match["inline"], block))
        return f"MATHPLACEHOLDER{len(formulas) - 1}X"

    rendered = _markdown(_MATH.sub(stash, text))
    return re.sub(
        r"MATHPLACEHOLDER(\d+)X", lambda m: formulas[int(m[1])], str(rendered)
    )


def visible_source(source: str, show_hidden: bool) -> str:
    """El código de una celda de pruebas sin las pruebas ocultas (o con ellas)."""
    if show_hidden:
        return source
    return HIDDEN_REGION.sub("# (pruebas ocultas)\n", source).rstrip()


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _outputs(cell: NotebookNode) -> str:
    """Lo que imprimió una celda: texto y mensajes de error, nunca trazas."""
    parts: list[str] = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            parts.append(html.escape(_cap(output.get("text", ""), MAX_OUTPUT)))
        elif kind == "error":
            message = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
            parts.append(
                f'<span class="error">{html.escape(_cap(message, MAX_MESSAGE))}</span>'
            )
        elif kind in ("execute_result", "display_data"):
            text = output.get("data", {}).get("text/plain")
            if text:
                parts.append(html.escape(_cap(text, MAX_OUTPUT)))
    return f'<pre class="salida">{"".join(parts)}</pre>' if parts else ""


def _readable(text: str, titles: dict[str, str]) -> str:
    """El texto con los ids de las celdas calificadas cambiados por su título.

    Los motivos y los diagnósticos se escriben para la docente, con el id de la
    celda (``why_lone_failure``); la estudiante ve el título del cuaderno.
    """
    if not text or not titles:
        return text
    names = sorted(titles, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: f"«{titles[m[1]]}»", text)


def total_line(result, pending_points: float) -> str:
    """La nota total, en HTML: con los puntos pendientes de corrección a mano."""
    if not pending_points:
        return f"<b>{result.score:g}</b> de {result.max_score:g} puntos."
    graded = result.max_score - pending_points
    plural = "" if pending_points == 1 else "s"
    return (
        f"<b>{result.score:g}</b> de {graded:g} puntos + "
        f"{pending_points:g} pendiente{plural} de corrección a mano "
        f"({result.max_score:g} en total)."
    )


def _sections(nb: NotebookNode) -> list[dict]:
    """Agrupa el cuaderno en ejercicios: enunciado, soluciones y pruebas.

    Un ejercicio empieza en un encabezado ``###`` de una celda de texto que no
    es de nbgrader: la respuesta escrita de una estudiante nunca abre uno.
    """
    sections: list[dict] = []
    current: dict | None = None
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.get("id") == NOTES_CELL_ID:
            continue  # los intentos registrados son solo para la docente
        if heading(cell):
            current = {"statement": [cell.source], "cells": []}
            sections.append(current)
            continue
        if current is None:
            continue
        if meta.get("grade") or meta.get("solution"):
            current["cells"].append(cell)
        elif cell.cell_type == "markdown" and not current["cells"]:
            current["statement"].append(cell.source)
    return [s for s in sections if s["cells"]]


def render_feedback(
    module_id: str,
    result: Result,
    nb: NotebookNode | None,
    source_nb: NotebookNode,
    show_hidden: bool = False,
) -> str:
    """El HTML de la retroalimentación de una entrega.

    Args:
        module_id: el módulo.
        result: su :class:`autograder.results.Result`.
        nb: el cuaderno calificado (``None`` si no se pudo calificar).
        source_nb: el cuaderno fuente, para los títulos de los ejercicios.
        show_hidden: mostrar también el código de las pruebas ocultas.
    """
    model = NotebookModel.of(source_nb)
    titles = model.titles
    pending = set(getattr(result, "pending", []))
    pending_points = 0.0
    rows = []
    for cell in model.graded:
        grade_id, maximum = cell.grade_id, cell.points
        got = result.cells.get(grade_id)
        diagnostic = _readable(result.diagnostics.get(grade_id, ""), titles)
        if grade_id in pending or got is None:
            pending_points += maximum if grade_id in pending else 0.0
            mark, got_text = "✎", "pendiente"
            diagnostic = diagnostic or "La corrige tu docente a mano."
        else:
            mark = "✔" if got >= maximum else "✘"
            got_text = f"{got:g}"
        rows.append(
            f"<tr><td>{html.escape(cell.title)}</td>"
            f"<td>{got_text} / {maximum:g}</td><td>{mark}</td>"
            f"<td>{html.escape(_cap(diagnostic, MAX_MESSAGE))}</td></tr>"
        )
    notes = ""
    if result.status is not Status.OK or result.reason:
        status = STATUS_WORDS[result.status]
        reason = _readable(result.reason, titles)
        notes = (
            f'<p class="aviso"><b>Estado:</b> {html.escape(status)}. '
            f"{html.escape(_cap(reason, 1_500))}</p>"
        )
    body = []
    for section in _sections(nb) if nb is not None else []:
        statement = "\n\n".join(section["statement"])
        parts = [f'<div class="enunciado">{markdown_to_html(statement)}</div>']
        for cell in section["cells"]:
            meta = nbgrader_meta(cell)
            grade_id = meta.get("grade_id", "")
            if meta.get("solution") and cell.cell_type == "markdown":
                label = "Tu respuesta"
                if grade_id in pending:
                    label += " (pendiente de corrección a mano)"
                parts.append(
                    f'<p class="etiqueta">{label}</p>'
                    f'<div class="respuesta">{markdown_to_html(cell.source)}</div>'
                )
            elif meta.get("solution"):
                parts.append(
                    '<p class="etiqueta">Tu código</p>'
                    f"<pre>{html.escape(cell.source)}</pre>"
                )
            if meta.get("grade") and cell.cell_type == "code":
                title = titles.get(grade_id, grade_id)
                parts.append(
                    f'<p class="etiqueta">Pruebas · {html.escape(title)}</p>'
                    f"<pre>{html.escape(visible_source(cell.source, show_hidden))}"
                    f"</pre>{_outputs(cell)}"
                )
        body.append(f"<section>{''.join(parts)}</section>")
    page_title = html.escape(f"Retroalimentación · {module_id} · {result.student_id}")
    return f"""<!DOCTYPE html>
<html lang="es"><head><meta charset="utf-8">
<title>{page_title}</title>
<style>
body {{ font-family: sans-serif; max-width: 960px; margin: 2em auto; color: #222;
  line-height: 1.45; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 6px; text-align: left;
  vertical-align: top; }}
pre {{ background: #f6f6f6; padding: 0.6em; white-space: pre-wrap; }}
pre.salida {{ background: #fff; border-left: 3px solid #0072B2; }}
.error {{ color: #b00020; }}
.aviso {{ background: #fdf3e8; padding: 0.8em; border-left: 4px solid #D55E00; }}
.etiqueta {{ font-weight: bold; margin-bottom: 0.2em; }}
section {{ border-top: 2px solid #0072B2; margin-top: 2em; }}
</style></head><body>
<h1>Retroalimentación · {html.escape(module_id)}</h1>
<p class="nota">Entrega de <b>{html.escape(result.student_id)}</b>: \
{total_line(result, pending_points)}</p>
{notes}
<h2>Resumen por ejercicio</h2>
<table><tr><th>ejercicio</th><th>puntos</th><th></th><th>diagnóstico</th></tr>
{"".join(rows)}
</table>
<h2>Ejercicio a ejercicio</h2>
{"".join(body) or "<p>No hay cuaderno calificado que mostrar.</p>"}
</body></html>
"""


def write_feedback(path: Path, *args, **kwargs) -> None:
    """Escribe :func:`render_feedback` en ``path``."""
    path.write_text(render_feedback(*args, **kwargs), encoding="utf-8")
