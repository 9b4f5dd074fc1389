"""Descargas de Moodle y Canvas, notas manuales y archivos para importar en el LMS.

Casi todo se prueba con entradas fabricadas (zips, resultados y gradebooks
sintéticos). Una sola prueba califica de verdad: un zip de Moodle, notas a
mano, otra calificación y la exportación.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.collect import (
    Collected,
    Origin,
    collect,
    describe_skipped,
    identify,
    read_manifest,
    write_manifest,
)
from autograder.course import grade_cells
from autograder.export import (
    CANVAS_STUDENT_COLUMNS,
    MOODLE_WORDS,
    by_participant,
    canvas_rows,
    csv_rows,
    export,
    moodle_rows,
)
from autograder.gradebook import (
    apply_scores,
    enter_marks,
    open_gradebook,
    read_marks,
    record,
)
from autograder.integrity import Finding, FindingKind
from autograder.report import skipped_html
from autograder.results import (
    FIXED_COLUMNS,
    RESULTS,
    Result,
    Status,
    load_results,
    read_csv,
    write_csv,
    write_results,
)
from tests.notebooks import REPO, course_path

MODULE = "01_bandidos"
WRITTEN = "07_grpo"  # el módulo con una respuesta escrita (corrección manual)


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


# ---------------------------------------------------------------------------
# Encontrar las entregas: nadie se pierde
# ---------------------------------------------------------------------------

MOODLE_ZIP = {
    # Dos participantes con el mismo nombre: los distingue su número.
    f"Ana García_101_assignsubmission_file/{MODULE}.ipynb": "{}",
    "Ana García_102_assignsubmission_file/Mi cuaderno (final).ipynb": "{}",
    # La misma persona entrega dos cuadernos: se califican los dos.
    "Ana García_102_assignsubmission_file/borrador.ipynb": "{}",
    # Moodle 3.1-4.0 (carpeta acabada en «_») y Moodle sin carpetas.
    "Beto Ruiz_7_assignsubmission_file_/sub/tarea.ipynb": "{}",
    "Carla Sanz_9_assignsubmission_file_entrega.IPYNB": "{}",
    # Identidades ocultas.
    "Participant_55_assignsubmission_file/x.ipynb": "{}",
    # Lo que no se califica, con su motivo.
    "Carla Sanz_9_assignsubmission_onlinetext/onlinetext.html": "<p>hola</p>",
    "Beto Ruiz_7_assignsubmission_file_/.ipynb_checkpoints/t-checkpoint.ipynb": "{}",
    "Beto Ruiz_7_assignsubmission_file_/entrega.zip": "PK",
    "__MACOSX/._x": "",
    "../../fuera.ipynb": "{}",
}


def test_moodle_zip_loses_nobody(tmp_path):
    archive = _zip(tmp_path / "moodle.zip", MOODLE_ZIP)
    found = collect(MODULE, archive, tmp_path / "trabajo")
    assert list(found.found) == [
        "Ana_Garcia_101",
        "Ana_Garcia_102",
        "Ana_Garcia_102-borrador",
        "Beto_Ruiz_7",
        "Carla_Sanz_9",
        "Participant_55",
    ]
    # Cada cuaderno, una fila; cada archivo del zip, calificado o listado.
    graded = {origin.path for origin in found.origins.values()}
    skipped = {path for path, _ in found.skipped}
    assert graded | skipped == set(MOODLE_ZIP)
    assert not graded & skipped
    reasons = dict(found.skipped)
    assert (
        "no es un cuaderno"
        in reasons["Carla Sanz_9_assignsubmission_onlinetext/onlinetext.html"]
    )
    assert (
        ".ipynb_checkpoints"
        in reasons[
            "Beto Ruiz_7_assignsubmission_file_/.ipynb_checkpoints/t-checkpoint.ipynb"
        ]
    )
    assert "descomprímelo" in reasons["Beto Ruiz_7_assignsubmission_file_/entrega.zip"]
    assert "sale de la carpeta" in reasons["../../fuera.ipynb"]
    assert not (tmp_path / "fuera.ipynb").exists()
    # El número de participante viaja con la entrega.
    ana = found.origins["Ana_Garcia_102-borrador"]
    assert (ana.lms, ana.lms_id, ana.name) == ("moodle", "102", "Ana García")
    assert found.origins["Ana_Garcia_102"].path.endswith("Mi cuaderno (final).ipynb")
    assert found.origins["Carla_Sanz_9"].lms_id == "9"


def test_canvas_names_keep_the_user_id():
    cases = {
        f"perezana_late_1234_5678_{MODULE}.ipynb": ("perezana_1234", "1234"),
        "gomezjose_77_88_Mi cuaderno-1.ipynb": ("gomezjose_77", "77"),
        "ana_maria_12_34_x.ipynb": ("ana_maria_12", "12"),
        # Calificación anónima: sin nombre.
        "late_1235_5679_x.ipynb": ("canvas_1235", "1235"),
        "1236_5680_x.ipynb": ("canvas_1236", "1236"),
    }
    for name, (student_id, number) in cases.items():
        base, origin = identify((name,))
        assert (base, origin.lms, origin.lms_id) == (student_id, "canvas", number)
    # Un archivo cualquiera no es de Canvas.
    for plain in (f"{MODULE}.ipynb", "estudiante007.ipynb", "ana_2.ipynb"):
        assert identify((plain,))[1].lms == ""


def test_ids_are_stable_distinct_and_never_collide_silently(tmp_path):
    members = {
        "José.ipynb": "{}",
        "Jose.ipynb": "{}",
        "ana.ipynb": "{}",
        f"ana/{MODULE}.ipynb": "{}",
        f"bea/{MODULE}/{MODULE}.ipynb": "{}",
        "bea/otro.ipynb": "{}",
    }
    forward = collect(MODULE, _zip(tmp_path / "a.zip", members), tmp_path / "a")
    backward = collect(
        MODULE,
        _zip(tmp_path / "b.zip", dict(reversed(list(members.items())))),
        tmp_path / "b",
    )
    assert forward.found.keys() == backward.found.keys()
    assert forward.origins == backward.origins
    assert len(forward.found) == len(members)
    assert sorted(forward.found) == [
        "Jose",
        "Jose-2",
        "ana",
        "ana-2",
        "bea",
        "bea-otro",
    ]
    # El que se llama como el módulo se queda con el id.
    assert forward.origins["ana"].path == f"ana/{MODULE}.ipynb"
    assert forward.origins["bea"].path == f"bea/{MODULE}/{MODULE}.ipynb"


def test_a_lone_student_folder_is_not_a_wrapper(tmp_path):
    lone_moodle = {"Ana García_101_assignsubmission_file/cuaderno.ipynb": "{}"}
    found = collect(MODULE, _zip(tmp_path / "m.zip", lone_moodle), tmp_path / "m")
    assert list(found.found) == ["Ana_Garcia_101"]
    lone = {f"ana/{MODULE}.ipynb": "{}"}
    found = collect(MODULE, _zip(tmp_path / "a.zip", lone), tmp_path / "a")
    assert list(found.found) == ["ana"]
    wrapped = {"clase/ana.ipynb": "{}", "clase/bea.ipynb": "{}", "__MACOSX/._a": ""}
    found = collect(MODULE, _zip(tmp_path / "w.zip", wrapped), tmp_path / "w")
    assert list(found.found) == ["ana", "bea"]
    assert [path for path, _ in found.skipped] == ["__MACOSX/._a"]


def test_nbgrader_exchange_files_are_listed(tmp_path):
    subs = tmp_path / "submitted"
    for student in ("ana", "beto"):
        folder = subs / student / MODULE
        folder.mkdir(parents=True)
        (folder / f"{MODULE}.ipynb").write_text("{}", encoding="utf-8")
        (folder / "timestamp.txt").write_text("2026-12-01", encoding="utf-8")
    found = collect(MODULE, subs, tmp_path / "trabajo")
    assert list(found.found) == ["ana", "beto"]
    assert [reason for _, reason in found.skipped] == [
        "archivo del intercambio de nbgrader (no es una entrega)"
    ] * 2


def test_skipped_files_reach_the_manifest_and_the_report(tmp_path):
    collected = Collected(
        {"ana": tmp_path / "ana.ipynb"},
        [("notas.txt", "no es un cuaderno (.ipynb)")],
        {"ana": Origin("ana.ipynb")},
    )
    write_manifest(tmp_path, MODULE, collected)
    origins, skipped = read_manifest(tmp_path)
    assert origins == collected.origins and skipped == collected.skipped
    assert describe_skipped(skipped) == [
        "1 archivo sin calificar:",
        "  · notas.txt: no es un cuaderno (.ipynb)",
    ]
    many = [(f"f{i}.txt", "no es un cuaderno (.ipynb)") for i in range(30)]
    assert describe_skipped(many)[-1] == "  ... y 20 más (ver report.html)."
    html = skipped_html(many)
    assert "<b>30</b> × no es un cuaderno" in html and "<details>" in html
    assert "Ninguno" in skipped_html([])


# ---------------------------------------------------------------------------
# Notas manuales: funciones puras
# ---------------------------------------------------------------------------


def test_pending_round_trips_through_grades_csv_and_resultados_json(tmp_path):
    # «pending» es una columna y un campo: nunca una frase del motivo.
    results = [
        Result(
            "ana",
            score=3.0,
            max_score=7.0,
            status="revisar",
            reason="Revisar: algo; calificado SIN aislamiento",
            cells={"t1": 1.0, "t2": 2.0, "escrita": 0.0, "otra": None},
            pending=["escrita", "otra"],
            incidents=["una celda superó el límite de tiempo"],
        ),
        Result("beto", max_score=7.0, status="invalid", reason="Vacío."),
    ]
    grade_ids = ["t1", "t2", "escrita", "otra"]
    write_csv(tmp_path / "grades.csv", "07_grpo", results, grade_ids)
    header = (tmp_path / "grades.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",") == FIXED_COLUMNS + grade_ids
    back = read_csv(tmp_path / "grades.csv")
    assert [r.pending for r in back] == [["escrita", "otra"], []]
    for before, after in zip(results, back, strict=True):
        for name in ("student_id", "score", "max_score", "status", "reason"):
            assert getattr(after, name) == getattr(before, name), name
        assert after.incidents == before.incidents
        assert after.cells == {g: before.cells.get(g) for g in grade_ids}
    # resultados.json guarda el Result entero.
    write_results(tmp_path, WRITTEN, results)
    assert load_results(tmp_path) == results


def test_an_old_grades_csv_without_pending_still_reads(tmp_path):
    # Antes de la columna «pending»: se lee con pending vacío (la frase del
    # motivo no se interpreta).
    (tmp_path / "grades.csv").write_text(
        "student_id,module,score,max_score,status,reason,incidents,c\n"
        "ana,07_grpo,3,5,ok,Pendiente de corrección manual: c,,0\n",
        encoding="utf-8",
    )
    (old,) = read_csv(tmp_path / "grades.csv")
    assert old.pending == [] and old.cells == {"c": 0.0} and old.score == 3
    assert old.status is Status.OK


def test_results_json_keeps_its_format_and_reads_back_typed(tmp_path):
    finding = Finding(
        FindingKind.REFERENCE,
        "softmax",
        "«Ejercicio 2» (celda softmax): importa la implementación de referencia.",
        ["softmax_test"],
    )
    result = Result("ana", max_score=7.0, status=Status.REVIEW, findings=[finding])
    write_results(tmp_path, WRITTEN, [result])
    (row,) = json.loads((tmp_path / RESULTS).read_text(encoding="utf-8"))
    # La fila de siempre: el estado y el tipo del hallazgo, con su palabra.
    assert row["status"] == "revisar"
    assert row["findings"] == [
        {
            "kind": "referencia",
            "cell": "softmax",
            "message": finding.message,
            "grade_ids": ["softmax_test"],
        }
    ]
    (back,) = load_results(tmp_path)
    assert back == result
    assert back.status is Status.REVIEW
    assert back.findings[0].kind is FindingKind.REFERENCE


def test_apply_scores_moves_the_total_with_the_cells():
    result = Result(
        "ana",
        score=3.0,
        max_score=5.0,
        cells={"t1": 1.0, "t2": 2.0, "escrita": 0.0},
        pending=["escrita"],
    )
    apply_scores(result, {"escrita": 1.5}, [])
    assert result.score == 4.5 and result.cells["escrita"] == 1.5
    assert result.pending == [] and result.reason == ""
    # Idempotente: aplicar otra vez lo mismo no cambia nada.
    apply_scores(result, {"escrita": 1.5}, [])
    assert result.score == 4.5
    # Un ajuste de la nota total (p. ej. un cero por copiar) se respeta.
    zeroed = Result("beto", score=0.0, max_score=5.0, cells={"t1": 1.0, "t2": 2.0})
    apply_scores(zeroed, {"t1": 0.5}, [])
    assert zeroed.score == 0.0


def test_read_marks_accepts_spanish_spreadsheets(tmp_path):
    marks = tmp_path / "notas.csv"
    marks.write_text(
        "\ufeffstudent_id;grade_id;points;comment\n"
        'ana;why_lone_failure;1,5;"Bien; falta la suma cero."\n'
        "beto;why_lone_failure;;\n\n",
        encoding="utf-8",
    )
    read = read_marks(marks)
    assert [(m.line, m.student_id, m.points, m.comment) for m in read] == [
        (2, "ana", 1.5, "Bien; falta la suma cero."),
        (3, "beto", None, ""),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("student_id,points\nana,1\n", "faltan columnas: grade_id"),
        ("student_id,grade_id,points\nana,c,uno\n", "«uno» no es un número"),
        ("student_id,grade_id,points\nana,c,1,sobra\n", "más columnas"),
        ("", "está vacío"),
    ],
)
def test_read_marks_explains_what_is_wrong(tmp_path, text, message):
    marks = tmp_path / "notas.csv"
    marks.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit, match=message):
        read_marks(marks)


# ---------------------------------------------------------------------------
# El gradebook persistente, con resultados sintéticos
# ---------------------------------------------------------------------------


def _written_results(answered: float = 0.0) -> list[Result]:
    """Resultados de 07 como los deja la calificación: la escrita, pendiente."""
    cells = grade_cells(WRITTEN)
    max_score = sum(points for _, points in cells)
    full = {g: points for g, points in cells}
    full["why_lone_failure"] = 0.0
    return [
        Result(
            "ana",
            score=max_score - 2,
            max_score=max_score,
            cells=full,
            pending=["why_lone_failure"],
        ),
        Result("beto", max_score=max_score, status="invalid", reason="Vacío."),
    ]


def _grade_synthetic(out: Path) -> list[Result]:
    """Lo que hace ``grade()`` al final, con resultados fabricados."""
    results = _written_results()
    collected = Collected(
        origins={
            "ana": Origin("Ana_1_assignsubmission_file/x.ipynb", "moodle", "1", "Ana"),
            "beto": Origin("beto.ipynb"),
        }
    )
    record(out, WRITTEN, results, collected)
    write_results(out, WRITTEN, results)
    return results


def _grades(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_manual_marks_survive_regrading(tmp_path):
    max_score = sum(points for _, points in grade_cells(WRITTEN))
    first = _grade_synthetic(tmp_path)
    assert first[0].score == max_score - 2
    assert first[0].pending == ["why_lone_failure"]
    assert _grades(tmp_path)["ana"]["pending"] == "why_lone_failure"
    (tmp_path / "notas.csv").write_text(
        "student_id,grade_id,points,comment\n"
        "ana,why_lone_failure,1.5,Falta la suma cero.\n",
        encoding="utf-8",
    )
    enter_marks(WRITTEN, tmp_path / "notas.csv", tmp_path)
    rows = _grades(tmp_path)
    assert float(rows["ana"]["score"]) == max_score - 0.5
    assert float(rows["ana"]["why_lone_failure"]) == 1.5
    assert rows["ana"]["pending"] == "" and rows["ana"]["reason"] == ""
    # Otra calificación (la escrita vuelve a llegar pendiente): la nota manual
    # se queda.
    again = _grade_synthetic(tmp_path)
    assert again[0].score == max_score - 0.5
    assert again[0].cells["why_lone_failure"] == 1.5
    assert again[0].pending == []
    assert again[1].score == 0.0 and again[1].status == "invalid"
    with open_gradebook(tmp_path) as gb:
        grade = gb.find_grade("why_lone_failure", WRITTEN, WRITTEN, "ana")
        assert (grade.auto_score, grade.manual_score) == (None, 1.5)
        assert not grade.needs_manual_grade
        comment = gb.find_comment("why_lone_failure", WRITTEN, WRITTEN, "ana")
        assert comment.manual_comment == "Falta la suma cero."
        assert gb.find_student("ana").lms_user_id == "1"
    # Un «points» vacío borra la nota manual: vuelve a estar pendiente.
    (tmp_path / "borrar.csv").write_text(
        "student_id,grade_id,points\nana,why_lone_failure,\n", encoding="utf-8"
    )
    enter_marks(WRITTEN, tmp_path / "borrar.csv", tmp_path)
    rows = _grades(tmp_path)
    assert float(rows["ana"]["score"]) == max_score - 2
    assert rows["ana"]["pending"] == "why_lone_failure"
    assert (tmp_path / "nbgrader_config.py").exists()


@pytest.mark.slow
def test_manual_marks_refuse_unknown_students_cells_and_points(tmp_path):
    _grade_synthetic(tmp_path)
    before = (tmp_path / "grades.csv").read_text(encoding="utf-8")
    (tmp_path / "notas.csv").write_text(
        "student_id,grade_id,points,comment\n"
        "anna,why_lone_failure,1,\n"
        "ana,why_lone,1,\n"
        "ana,why_lone_failure,3,\n"
        "ana,verify_test,1,un comentario\n"
        "beto,why_lone_failure,1,\n"
        "beto,why_lone_failure,2,\n",
        encoding="utf-8",
    )
    with pytest.raises(SystemExit) as error:
        enter_marks(WRITTEN, tmp_path / "notas.csv", tmp_path)
    message = str(error.value)
    assert "No se guardó ninguna nota" in message
    assert "Fila 2: no hay ninguna entrega de «anna»" in message
    assert "¿Quizá «ana»?" in message
    assert "Fila 3: «why_lone» no es una celda calificada" in message
    assert "«why_lone_failure»?" in message
    assert "Fila 4: los puntos de «why_lone_failure» van de 0 a 2, y pone 3" in message
    assert "Fila 5: «verify_test» es una celda de pruebas" in message
    assert "Fila 7: «beto» y «why_lone_failure» ya aparecen en la fila 6" in message
    # Nada cambió.
    assert (tmp_path / "grades.csv").read_text(encoding="utf-8") == before
    with open_gradebook(tmp_path) as gb:
        grade = gb.find_grade("why_lone_failure", WRITTEN, WRITTEN, "beto")
        assert grade.manual_score is None


@pytest.mark.slow
def test_a_module_that_changed_cells_keeps_its_gradebook(tmp_path, monkeypatch):
    from autograder import gradebook

    _grade_synthetic(tmp_path)
    graded, solutions = gradebook._source_cells(WRITTEN)
    dropped = next(iter(graded))
    changed = {k: v for k, v in graded.items() if k != dropped}
    changed["celda_nueva"] = (1.0, "code")
    monkeypatch.setattr(gradebook, "_source_cells", lambda m: (changed, solutions))
    record(tmp_path, WRITTEN, _written_results(), Collected())
    with open_gradebook(tmp_path) as gb:
        submitted = gb.find_submission_notebook(WRITTEN, WRITTEN, "ana")
        names = {grade.name for grade in submitted.grades}
        assert names == set(changed)
        assert gb.find_grade("celda_nueva", WRITTEN, WRITTEN, "ana").auto_score == 0


def test_manual_needs_a_grading_first(tmp_path):
    with pytest.raises(SystemExit, match="primero califica"):
        enter_marks(WRITTEN, None, tmp_path)


# ---------------------------------------------------------------------------
# Exportar: los formatos documentados
# ---------------------------------------------------------------------------

ORIGINS = {
    "Ana_Garcia_101": Origin("a", "moodle", "101", "Ana García"),
    "Ana_Garcia_102": Origin("b", "moodle", "102", "Ana García"),
    "Ana_Garcia_102-borrador": Origin("c", "moodle", "102", "Ana García"),
    "local": Origin("local.ipynb"),
    "perezana_77": Origin("d", "canvas", "77", "perezana"),
}


def _results() -> list[Result]:
    scores = {
        "Ana_Garcia_101": 12.5,
        "Ana_Garcia_102": 4.0,
        "Ana_Garcia_102-borrador": 9.0,
        "local": 13.0,
        "perezana_77": 6.0,
    }
    return [Result(s, score=v, max_score=13, cells={"c": v}) for s, v in scores.items()]


def _moodle_import(rows: list[list[str]], lang: str) -> dict[str, str]:
    """Lo que hace el importador de Moodle (importgradeslib.php) con el CSV."""
    words = MOODLE_WORDS[lang]
    header = rows[0]
    # Las tres columnas obligatorias, por su nombre.
    id_index = header.index(words["id"])
    grade_index = header.index(words["grade"])
    header.index(words["modified"])
    grades = {}
    for row in rows[1:]:
        # substr($idstr, strlen(get_string('hiddenuser', 'assign')))
        number = row[id_index][len(words["participant"]) :]
        assert number.isdigit(), row[id_index]
        grades[number] = row[grade_index]
    return grades


@pytest.mark.parametrize("lang", ["es", "en"])
def test_moodle_worksheet(lang):
    comments = {"Ana_Garcia_101": {"why": "Bien."}}
    rows, warnings = moodle_rows(
        _results(), ORIGINS, comments, lang=lang, modified="2026-12-01T10:00:00+01:00"
    )
    words = MOODLE_WORDS[lang]
    assert rows[0] == [
        words[k] for k in ("id", "name", "grade", "max", "modified", "comments")
    ]
    # Una fila por participante, con la entrega de más nota y punto decimal.
    assert _moodle_import(rows, lang) == {"101": "12.5", "102": "9"}
    prefix = {"es": "Participante101", "en": "Participant 101"}[lang]
    assert rows[1][0] == prefix and rows[1][1] == "Ana García"
    assert rows[1][3] == "13" and rows[1][4] == "2026-12-01T10:00:00+01:00"
    assert rows[1][5] == "12,5 de 13 puntos. why: Bien."
    assert any("102 tiene 2 entregas" in w and "102-borrador" in w for w in warnings)
    assert any("local" in w and "Moodle" in w for w in warnings)
    assert any("perezana_77" in w for w in warnings)


def test_moodle_worksheet_rescales_to_the_assignment_maximum():
    rows, _ = moodle_rows(
        _results(), ORIGINS, {}, max_grade=10, modified="2026-12-01T10:00:00+00:00"
    )
    assert [row[2:4] for row in rows[1:]] == [["9.62", "10"], ["6.92", "10"]]


def test_canvas_gradebook_import():
    rows, warnings = canvas_rows(_results(), ORIGINS, assignment="Bandidos (4321)")
    header = rows[0]
    # Lo que comprueba Canvas (gradebook_importer.rb) antes de aceptar el archivo.
    assert len(header) > 3 and re.search("Student", header[0])
    assert re.search("ID", header[1])
    assert re.search(r"SIS\s+User\s+ID", header[2])
    assert re.search(r"SIS\s+Login\s+ID", header[3])
    assert re.search("Section", header[4])
    assert header == [*CANVAS_STUDENT_COLUMNS, "Bandidos (4321)"]
    assert rows[1] == ["Points Possible", "", "", "", "", "13"]
    assert rows[2:] == [["perezana", "77", "", "", "", "6"]]
    assert any("id de Canvas" in w and "local" in w for w in warnings)


def test_generic_csv_keeps_every_submission():
    rows = csv_rows(_results(), ORIGINS, ["c"])
    assert rows[0][:6] == ["student_id", "lms", "lms_id", "name", "path", "score"]
    assert [row[0] for row in rows[1:]] == list(ORIGINS)
    assert rows[1][1:3] == ["moodle", "101"] and rows[1][-1] == "12.5"


def test_by_participant_prefers_the_best_submission():
    chosen, warnings = by_participant(_results(), ORIGINS, "moodle")
    assert {k: v[1].student_id for k, v in chosen.items()} == {
        "101": "Ana_Garcia_101",
        "102": "Ana_Garcia_102-borrador",
    }
    assert len(warnings) == 2


# ---------------------------------------------------------------------------
# De principio a fin, calificando de verdad
# ---------------------------------------------------------------------------


def _run(*args: str) -> subprocess.CompletedProcess:
    completed = subprocess.run(
        [sys.executable, "-m", "autograder", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr
    return completed


@pytest.mark.grading
def test_moodle_zip_grade_manual_regrade_export(tmp_path):
    released = nbformat.writes(nbformat.read(course_path(MODULE), as_version=4))
    archive = _zip(
        tmp_path / "descarga.zip",
        {
            f"Ana García_101_assignsubmission_file/{MODULE}.ipynb": released,
            "Ana García_102_assignsubmission_file/mi cuaderno.ipynb": released,
            "Ana García_102_assignsubmission_onlinetext/onlinetext.html": "<p>x</p>",
        },
    )
    out = tmp_path / "notas"
    graded = _run("grade", MODULE, str(archive), "--out", str(out), "--jobs", "2")
    assert "1 archivo sin calificar:" in graded.stdout
    assert "onlinetext.html: no es un cuaderno" in graded.stdout
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Archivos que no se calificaron" in report
    assert "onlinetext.html" in report
    rows = _grades(out)
    assert sorted(rows) == ["Ana_Garcia_101", "Ana_Garcia_102"]
    assert all(float(row["score"]) == 0 for row in rows.values())

    test_cell = grade_cells(MODULE)[0][0]
    (tmp_path / "a_mano.csv").write_text(
        f"student_id,grade_id,points\nAna_Garcia_102,{test_cell},1\n", encoding="utf-8"
    )
    _run("manual", MODULE, str(tmp_path / "a_mano.csv"), "--out", str(out))
    assert float(_grades(out)["Ana_Garcia_102"]["score"]) == 1
    _run("grade", MODULE, str(archive), "--out", str(out), "--jobs", "2")
    rows = _grades(out)
    assert float(rows["Ana_Garcia_102"]["score"]) == 1
    assert float(rows["Ana_Garcia_102"][test_cell]) == 1
    assert float(rows["Ana_Garcia_101"]["score"]) == 0

    exported = _run("export", MODULE, "--format", "moodle", "--out", str(out))
    assert str(out / "moodle.csv") in exported.stdout
    text = (out / "moodle.csv").read_text(encoding="utf-8")
    imported = _moodle_import(list(csv.reader(io.StringIO(text))), "es")
    assert imported == {"101": "0", "102": "1"}
    manifest = json.loads((out / "entregas.json").read_text(encoding="utf-8"))
    assert manifest["submissions"]["Ana_Garcia_102"]["path"] == (
        "Ana García_102_assignsubmission_file/mi cuaderno.ipynb"
    )


def test_export_warns_about_recorded_attempts(tmp_path):
    # Un intento registrado (autograder/audit.py) no cambia la nota ni el
    # estado, pero la exportación avisa de mirarlo.
    results = _results()
    results[0].incidents = [
        "registrado en la celda [3] «import socket»: intentó usar la red "
        "(conectarse a 127.0.0.1:80)"
    ]
    results[1].incidents = ["escribió en stderr en una celda de pruebas"]
    write_results(tmp_path, "01_bandidos", results)
    write_manifest(tmp_path, "01_bandidos", Collected(origins=ORIGINS))
    _, warnings = export("01_bandidos", "csv", tmp_path)
    attempts = [w for w in warnings if "intentos registrados" in w]
    assert len(attempts) == 1 and "Ana_Garcia_101" in attempts[0]
    assert "Ana_Garcia_102" not in attempts[0]
