"""El informe de la clase: un HTML autocontenido con figuras de matplotlib.

Reparto de notas, porcentaje de aprobados por ejercicio y, para cada
ejercicio, los diagnósticos más frecuentes: qué error comete la clase.
"""

from __future__ import annotations

import base64
import html
import io
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from autograder.collect import count  # noqa: E402
from autograder.results import Result, Status  # noqa: E402
from helpers.plotting import use_course_style  # noqa: E402


def _figure_to_img(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img alt="figura" src="data:image/png;base64,{data}">'


def _short(title: str, limit: int = 48) -> str:
    """Un título que cabe como etiqueta de una barra."""
    return title if len(title) <= limit else title[: limit - 1] + "…"


def write_report(
    path: Path,
    module_id: str,
    results: list[Result],
    cells: list[tuple[str, float]],
    sandboxed: bool,
    *,
    skipped: list[tuple[str, str]] | None = None,
    titles: dict[str, str] | None = None,
    similarity_html: str = "",
) -> None:
    """Escribe ``report.html`` a partir de los resultados de la calificación.

    Args:
        path: dónde escribirlo.
        module_id: el módulo calificado.
        results: los ``Result`` de cada entrega.
        cells: ``(grade_id, puntos)`` de cada celda calificada, en orden.
        sandboxed: si las entregas se ejecutaron aisladas.
        skipped: ``(archivo, motivo)`` de lo que no se calificó (ver
            :func:`autograder.collect.collect`).
        titles: el título de cada celda («Ejercicio 1 · …»), para nombrar los
            ejercicios por su título y no por el id de la celda.
        similarity_html: el apartado de parecidos entre entregas (ver
            :func:`autograder.similarity.render_html`).
    """
    use_course_style()
    titles = titles or {}
    graded = [r for r in results if r.status.was_run]
    max_score = sum(points for _, points in cells)

    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.hist(
        [r.score for r in graded],
        bins=min(20, int(max_score) + 1),
        range=(0, max_score),
        color="#0072B2",
        edgecolor="white",
    )
    ax.set(
        title=f"{module_id}: reparto de notas",
        xlabel=f"nota (de {max_score:g})",
        ylabel="estudiantes",
    )
    histogram = _figure_to_img(fig)

    rates = []
    for grade_id, points in cells:
        scored = [r.cells.get(grade_id) for r in graded if grade_id in r.cells]
        full = sum(1 for s in scored if s is not None and s >= points)
        rates.append(100 * full / len(scored) if scored else 0.0)
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * len(cells)))
    labels = [_short(titles.get(g, g)) for g, _ in cells]
    ax.barh(labels[::-1], rates[::-1], color="#009E73")
    ax.set(
        title="Porcentaje de la clase con todos los puntos",
        xlabel="% de entregas",
        xlim=(0, 100),
    )
    pass_rates = _figure_to_img(fig)

    rows = []
    for (grade_id, points), rate in zip(cells, rates, strict=True):
        counter = Counter(
            r.diagnostics[grade_id] for r in graded if grade_id in r.diagnostics
        )
        common = (
            "".join(
                f"<li><b>{count}</b> × {html.escape(text)}</li>"
                for text, count in counter.most_common(3)
            )
            or "<li>—</li>"
        )
        rows.append(
            f"<tr><td>{html.escape(titles.get(grade_id, grade_id))}</td>"
            f"<td>{points:g}</td>"
            f"<td>{rate:.0f} %</td><td><ul>{common}</ul></td></tr>"
        )

    # Toda entrega con algo que contar, aunque haya sacado puntos: un estado
    # distinto de «ok», una incidencia (tiempo, memoria, stderr...) o un
    # hallazgo que revisar.
    problems = [r for r in results if r.status is not Status.OK or r.incidents]
    problem_rows = (
        "".join(
            f"<tr><td>{html.escape(r.student_id)}</td><td>{r.status}</td>"
            f"<td>{html.escape(r.reason)}</td>"
            f"<td>{'<br>'.join(html.escape(i) for i in r.incidents) or '—'}</td>"
            "</tr>"
            for r in problems
        )
        or '<tr><td colspan="4">Ninguna.</td></tr>'
    )
    warning = (
        ""
        if sandboxed
        else (
            '<p class="aviso">⚠ Estas entregas se ejecutaron <b>sin aislamiento</b> '
            "(no había bubblewrap): solo con límites de tiempo, memoria y procesos.</p>"
        )
    )
    not_graded = skipped_html(skipped or [])
    mean = sum(r.score for r in graded) / len(graded) if graded else 0.0
    page = f"""<!DOCTYPE html>
<html lang="es"><head><meta charset="utf-8">
<title>Informe de la clase · {module_id}</title>
<style>
body {{ font-family: sans-serif; max-width: 960px; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 6px; text-align: left;
  vertical-align: top; }}
ul {{ margin: 0; padding-left: 1.2em; }}
.aviso {{ background: #fde8e8; padding: 0.8em; border-left: 4px solid #D55E00; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>Informe de la clase · {module_id}</h1>
<p>{len(results)} entregas · {len(graded)} calificadas · nota media
{mean:.2f} de {max_score:g} · generado el {datetime.now():%Y-%m-%d %H:%M}</p>
{warning}
<h2>Reparto de notas</h2>
{histogram}
<h2>Por ejercicio</h2>
{pass_rates}
<table><tr><th>ejercicio</th><th>puntos</th><th>con todos los puntos</th>
<th>diagnósticos más frecuentes (qué error comete la clase)</th></tr>
{"".join(rows)}
</table>
<h2>Entregas con incidencias</h2>
<table><tr><th>estudiante</th><th>estado</th><th>motivo</th>
<th>incidencias</th></tr>
{problem_rows}
</table>
<h2>Archivos que no se calificaron</h2>
{not_graded}
{similarity_html}
</body></html>
"""
    path.write_text(page, encoding="utf-8")


def skipped_html(skipped: list[tuple[str, str]]) -> str:
    """La sección «Archivos que no se calificaron» de ``report.html``."""
    if not skipped:
        return (
            "<p>Ninguno: cada archivo era un cuaderno y tiene su fila en "
            "<code>grades.csv</code>.</p>"
        )
    counts: dict[str, int] = defaultdict(int)
    for _, reason in skipped:
        counts[reason] += 1
    summary = "".join(
        f"<li><b>{count}</b> × {html.escape(reason)}</li>"
        for reason, count in sorted(counts.items(), key=lambda item: -item[1])
    )
    rows = "".join(
        f"<tr><td><code>{html.escape(path)}</code></td>"
        f"<td>{html.escape(reason)}</td></tr>"
        for path, reason in skipped
    )
    table = f"<table><tr><th>archivo</th><th>motivo</th></tr>{rows}</table>"
    if len(skipped) > 20:
        table = f"<details><summary>Ver los {len(skipped)}</summary>{table}</details>"
    return (
        f"<p>Sin calificar: {count(len(skipped), 'archivo')} de la carpeta o del "
        "zip (cada cuaderno .ipynb es una fila de <code>grades.csv</code>):</p>"
        f"<ul>{summary}</ul>{table}"
    )
