"""Encontrar las entregas en una carpeta o en la descarga de un LMS, sin perder a nadie.

Exportar las notas al LMS es cosa de :mod:`autograder.export`.

Cada cuaderno (``.ipynb``) de la carpeta o del zip es una fila calificada, con un
id estable que conserva el número que le da el LMS. Lo demás (otros archivos,
copias de Jupyter, metadatos) se lista con su motivo: nada se descarta en
silencio.

Formas admitidas (rutas relativas a la carpeta, o al zip):

* ``<id>.ipynb``: un cuaderno por estudiante; el id es el nombre del archivo.
* ``<id>/<cualquier cosa>.ipynb`` y ``<id>/<módulo>/<módulo>.ipynb`` (la
  carpeta ``submitted`` de nbgrader): el id es la primera carpeta.
* Moodle, «Descargar todas las entregas» (``mod/assign/classes/downloader.php``):
  con carpetas (lo habitual desde Moodle 3.1),
  ``Nombre Apellido_12345_assignsubmission_file/<ruta>/<archivo>`` (hasta Moodle
  4.0 la carpeta acaba en ``_file_``); sin carpetas,
  ``Nombre Apellido_12345_assignsubmission_file_<archivo>``. El número es el
  del participante en esa tarea, el mismo que usa la hoja de calificaciones
  («Participant 12345»). Con la identidad oculta, el nombre es «Participant».
  El id es ``Nombre_Apellido_12345``.
* Canvas, «Download Submissions» (``lib/content_zipper.rb``):
  ``apellidonombre_12345_67890_<archivo>``, con ``_late`` tras el nombre si se
  entregó tarde: 12345 es el id de usuario de Canvas y 67890 el del archivo.
  El id es ``apellidonombre_12345``.
* Lo mismo dentro de un zip, con o sin una carpeta que lo envuelva.

Si una persona entrega varios cuadernos, se califican todos: el que se llama
``<módulo>.ipynb`` (o el primero en orden) lleva el id y los demás, el id
seguido de ``-<nombre del archivo>``.
"""

from __future__ import annotations

import json
import re
import unicodedata
import zipfile
from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

# Nombres que dejan las descargas de un LMS.
LMS_PATTERNS = {
    # Moodle con carpetas: «Nombre Apellido_12345_assignsubmission_file» (o
    # «..._file_» hasta Moodle 4.0). Sin número en las entregas por grupos sin
    # grupo («Default group_assignsubmission_file»).
    "moodle_folder": re.compile(
        r"^(?P<name>.+?)(?:_(?P<number>\d+))?_assignsubmission_[a-z]+_?$"
    ),
    # Moodle sin carpetas: «Nombre Apellido_12345_assignsubmission_file_x.ipynb».
    "moodle_flat": re.compile(
        r"^(?P<name>.+?)(?:_(?P<number>\d+))?_assignsubmission_file_(?P<file>.+)$"
    ),
    # Canvas: «apellidonombre_late_12345_67890_x.ipynb». Sin nombre si la
    # calificación es anónima.
    "canvas": re.compile(
        r"^(?:(?P<name>.+?)_)??(?:late_)?(?P<number>\d+)_\d+_(?P<file>.+)$",
        re.IGNORECASE,
    ),
}

# Archivos que el intercambio de nbgrader deja junto a cada entrega.
NBGRADER_FILES = {"timestamp.txt", "submission_secret.txt"}


def safe_id(raw: str) -> str:
    """Un id de estudiante seguro para rutas: sin tildes, espacios ni barras."""
    ascii_id = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", ascii_id).strip("._") or "sin_id"


@dataclass(frozen=True)
class Origin:
    """De dónde sale una entrega.

    Attributes:
        path: la ruta del cuaderno dentro del zip o de la carpeta.
        lms: ``"moodle"``, ``"canvas"`` o ``""`` (carpeta o nbgrader).
        lms_id: el número de participante de Moodle o el id de usuario de
            Canvas; ``""`` si no lo hay.
        name: el nombre que da el LMS, tal cual.
    """

    path: str
    lms: str = ""
    lms_id: str = ""
    name: str = ""


@dataclass
class Collected:
    """Lo que se encontró en la carpeta o el zip de entregas.

    Attributes:
        found: id de estudiante → cuaderno que calificar (uno por fila).
        skipped: ``(ruta dentro del zip o la carpeta, motivo)`` de cada archivo
            que no se califica.
        origins: id de estudiante → :class:`Origin` de su cuaderno.
    """

    found: dict[str, Path] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    origins: dict[str, Origin] = field(default_factory=dict)


def _unzip(archive_path: Path, target: Path) -> list[tuple[str, str]]:
    """Extrae el zip en ``target``; devuelve lo que no se extrajo, con su motivo."""
    refused: list[tuple[str, str]] = []
    target.mkdir(parents=True, exist_ok=True)
    root = target.resolve()
    with zipfile.ZipFile(archive_path) as archive:
        for member in archive.infolist():
            if member.is_dir():
                continue
            # Nada fuera de la carpeta de destino (rutas absolutas, «..»).
            destination = (target / member.filename).resolve()
            if not destination.is_relative_to(root):
                reason = "su ruta sale de la carpeta del zip: no se extrajo"
                refused.append((member.filename, reason))
                continue
            archive.extract(member, target)
    return refused


def _is_student_folder(folder: Path, module_id: str) -> bool:
    """Si una carpeta es la de una estudiante (y no una que envuelve a todas)."""
    return bool(
        LMS_PATTERNS["moodle_folder"].match(folder.name)
        or (folder / f"{module_id}.ipynb").is_file()
        or (folder / module_id / f"{module_id}.ipynb").is_file()
    )


def _wrapper(root: Path, module_id: str) -> Path | None:
    """La carpeta que envuelve todas las entregas, si la hay (``clase/...``)."""
    entries = [p for p in root.iterdir() if not p.name.startswith(("_", "."))]
    if len(entries) == 1 and entries[0].is_dir():
        if not _is_student_folder(entries[0], module_id):
            return entries[0]
    return None


def _skip_reason(parts: tuple[str, ...], path: Path) -> str | None:
    """Por qué un archivo no se califica, o ``None`` si es un cuaderno."""
    if ".ipynb_checkpoints" in parts:
        return "copia automática de Jupyter (.ipynb_checkpoints)"
    if any(part == "__MACOSX" or part.startswith(".") for part in parts):
        return "archivo oculto o de sistema (__MACOSX, .DS_Store...)"
    if path.is_symlink():
        return "enlace simbólico: no se sigue"
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return "un .zip dentro de las entregas: descomprímelo y vuelve a calificar"
    if path.name in NBGRADER_FILES and len(parts) > 1:
        return "archivo del intercambio de nbgrader (no es una entrega)"
    if suffix != ".ipynb":
        return "no es un cuaderno (.ipynb)"
    return None


def identify(parts: tuple[str, ...]) -> tuple[str, Origin]:
    """``(id base, origen)`` de un cuaderno a partir de su ruta relativa.

    El id base puede repetirse entre cuadernos: :func:`collect` los distingue.
    """
    relative = "/".join(parts)
    moodle_folder = LMS_PATTERNS["moodle_folder"].match(parts[0])
    if len(parts) > 1 and moodle_folder:
        name, number = moodle_folder["name"], moodle_folder["number"] or ""
        base = safe_id(f"{name}_{number}" if number else name)
        return base, Origin(relative, "moodle", number, name)
    if len(parts) == 1:
        moodle_flat = LMS_PATTERNS["moodle_flat"].match(parts[0])
        if moodle_flat:
            name, number = moodle_flat["name"], moodle_flat["number"] or ""
            base = safe_id(f"{name}_{number}" if number else name)
            return base, Origin(relative, "moodle", number, name)
        canvas = LMS_PATTERNS["canvas"].match(parts[0])
        if canvas:
            name, number = canvas["name"] or "", canvas["number"]
            base = safe_id(f"{name or 'canvas'}_{number}")
            return base, Origin(relative, "canvas", number, name)
        return safe_id(Path(parts[0]).stem), Origin(relative)
    # <id>/<módulo>.ipynb, <id>/<módulo>/<módulo>.ipynb o más hondo: la
    # primera carpeta es la estudiante.
    return safe_id(parts[0]), Origin(relative)


def _secondary_id(base: str, stem: str, used: set[str]) -> str:
    """El id del segundo (tercero...) cuaderno con el mismo id base."""
    if stem != base and f"{base}-{stem}" not in used:
        return f"{base}-{stem}"
    number = 2
    while f"{base}-{number}" in used:
        number += 1
    return f"{base}-{number}"


def _assign_ids(
    notebooks: list[tuple[tuple[str, ...], Path, str]], module_id: str
) -> tuple[dict[str, Path], dict[str, Origin]]:
    """Un id distinto y estable para cada cuaderno ``(partes, ruta, ruta mostrada)``."""
    groups: dict[str, list[tuple[tuple[str, ...], Path, Origin]]] = defaultdict(list)
    for parts, path, shown in notebooks:
        base, origin = identify(parts)
        groups[base].append((parts, path, replace(origin, path=shown)))
    found: dict[str, Path] = {}
    origins: dict[str, Origin] = {}
    used = set(groups)
    for base in sorted(groups):
        # Lleva el id el cuaderno que se llama como el módulo, o el más corto.
        members = sorted(
            groups[base],
            key=lambda m: (m[0][-1] != f"{module_id}.ipynb", len(m[0]), m[0]),
        )
        for index, (parts, path, origin) in enumerate(members):
            student_id = base
            if index:
                student_id = _secondary_id(base, safe_id(Path(parts[-1]).stem), used)
                used.add(student_id)
            found[student_id] = path
            origins[student_id] = origin
    order = sorted(found)
    return {s: found[s] for s in order}, {s: origins[s] for s in order}


def collect(module_id: str, submissions: Path, scratch: Path) -> Collected:
    """Encuentra las entregas de una carpeta o de un zip.

    Args:
        module_id: el módulo, p. ej. ``"01_bandidos"``.
        submissions: carpeta de entregas o zip (también la descarga de Moodle o
            de Canvas).
        scratch: carpeta de trabajo donde descomprimir el zip.

    Returns:
        Un :class:`Collected`: cada cuaderno con su id (ordenados), su origen y
        la lista de archivos que no se califican, con el motivo.
    """
    submissions = Path(submissions)
    skipped: list[tuple[str, str]] = []
    if submissions.is_file() and zipfile.is_zipfile(submissions):
        unpacked = scratch / "descomprimido"
        skipped += _unzip(submissions, unpacked)
        submissions = unpacked
    if not submissions.is_dir():
        raise SystemExit(
            f"No encuentro la carpeta de entregas «{submissions}». Pasa una carpeta "
            "con un <id>.ipynb por estudiante, o <id>/<módulo>.ipynb, o un .zip."
        )
    wrapper = _wrapper(submissions, module_id)
    root = wrapper or submissions
    notebooks: list[tuple[tuple[str, ...], Path, str]] = []
    for path in sorted(submissions.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        shown = path.relative_to(submissions).as_posix()
        if not path.is_relative_to(root):
            skipped.append(
                (shown, "archivo fuera de la carpeta que envuelve las entregas")
            )
            continue
        parts = path.relative_to(root).parts
        reason = _skip_reason(parts, path)
        if reason:
            skipped.append((shown, reason))
        else:
            notebooks.append((parts, path, shown))
    found, origins = _assign_ids(notebooks, module_id)
    return Collected(found, sorted(skipped), origins)


# ---------------------------------------------------------------------------
# De dónde sale cada entrega: entregas.json
# ---------------------------------------------------------------------------

MANIFEST = "entregas.json"


def write_manifest(out: Path, module_id: str, collected: Collected) -> None:
    """Escribe ``<out>/entregas.json``: el origen de cada id y lo no calificado."""
    data = {
        "module": module_id,
        "submissions": {
            student_id: asdict(origin)
            for student_id, origin in collected.origins.items()
        },
        "skipped": [
            {"path": path, "reason": reason} for path, reason in collected.skipped
        ],
    }
    (Path(out) / MANIFEST).write_text(
        json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8"
    )


def read_manifest(out: Path) -> tuple[dict[str, Origin], list[tuple[str, str]]]:
    """``(origen de cada id, archivos no calificados)`` de ``<out>/entregas.json``."""
    path = Path(out) / MANIFEST
    if not path.exists():
        return {}, []
    data = json.loads(path.read_text(encoding="utf-8"))
    origins = {key: Origin(**value) for key, value in data["submissions"].items()}
    return origins, [(item["path"], item["reason"]) for item in data["skipped"]]


def count(n: int, noun: str) -> str:
    """«1 entrega», «3 entregas»."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def describe_skipped(skipped: list[tuple[str, str]], limit: int = 10) -> list[str]:
    """Líneas para la terminal con los archivos que no se calificaron."""
    if not skipped:
        return []
    lines = [f"{count(len(skipped), 'archivo')} sin calificar:"]
    lines += [f"  · {path}: {reason}" for path, reason in skipped[:limit]]
    if len(skipped) > limit:
        lines.append(f"  ... y {len(skipped) - limit} más (ver report.html).")
    return lines
