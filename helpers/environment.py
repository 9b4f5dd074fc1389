"""El informe del entorno que imprime la primera celda de cada cuaderno."""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass, field
from importlib import metadata

from packaging.requirements import Requirement

DISTRIBUTION = "rl-para-llms"
# Lo que cada cuaderno importa de verdad; el resto de dependencias (jupyterlab,
# nbgrader, nbval) se comprueban igual, pero no se listan en el informe corto.
SHOWN = ("numpy", "torch", "matplotlib", "gymnasium", "ipywidgets", "tqdm")


@dataclass
class EnvironmentReport:
    """Lo que encontró :func:`report_environment`.

    Attributes:
        python: la versión de Python.
        versions: versión instalada de cada dependencia (``None`` si falta).
        problems: frases en español, una por problema encontrado.
    """

    python: str
    versions: dict[str, str | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """``True`` si no falta nada y todas las versiones son las pedidas."""
        return not self.problems


def _requirements() -> list[Requirement]:
    """Las dependencias declaradas por el paquete del curso instalado."""
    declared = metadata.requires(DISTRIBUTION) or []
    requirements = [Requirement(text) for text in declared]
    return [r for r in requirements if r.marker is None]


def check_environment() -> EnvironmentReport:
    """Compara lo instalado con lo que pide el curso, sin imprimir nada."""
    report = EnvironmentReport(python=platform.python_version())
    # Un kernel con otro Python puede importar esto sin haber instalado el curso.
    if sys.version_info < (3, 11):  # noqa: UP036
        report.problems.append(
            f"El curso necesita Python ≥ 3.11 y esto es Python {report.python}."
        )
    try:
        requirements = _requirements()
    except metadata.PackageNotFoundError:
        report.problems.append(
            "El paquete del curso no está instalado: ejecuta `make lab` desde la "
            "carpeta del repositorio (crea el entorno e instala todo)."
        )
        return report
    for requirement in requirements:
        try:
            version = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            report.versions[requirement.name] = None
            report.problems.append(
                f"Falta «{requirement.name}» (el curso pide {requirement})."
            )
            continue
        report.versions[requirement.name] = version
        if not requirement.specifier.contains(version, prereleases=True):
            report.problems.append(
                f"«{requirement.name}» {version} no es la versión que pide el curso "
                f"({requirement.specifier})."
            )
    return report


def report_environment() -> EnvironmentReport:
    """Imprime qué hay instalado y avisa, en español, de lo que falte o sobre.

    Returns:
        El :class:`EnvironmentReport` con los detalles.
    """
    report = check_environment()
    cores = os.cpu_count() or 1
    shown = [
        f"{name} {report.versions[name]}"
        for name in SHOWN
        if report.versions.get(name) is not None
    ]
    print(f"Python {report.python} · " + " · ".join(shown))
    # PyTorch tarda un segundo en cargarse: solo se consulta si el cuaderno ya
    # lo importó (los que no usan redes no lo cargan).
    torch = sys.modules.get("torch")
    if torch is None:
        print(f"CPU: {cores} núcleos · PyTorch instalado (este cuaderno no lo carga)")
    else:
        print(
            f"CPU: {cores} núcleos · PyTorch usa {torch.get_num_threads()} hilo(s) · "
            f"GPU: {'sí' if torch.cuda.is_available() else 'no (no hace falta)'}"
        )
    if report.ok:
        print("✔ Entorno listo: todo lo que el curso necesita está instalado.")
    else:
        print("⚠ Hay que arreglar el entorno antes de seguir:")
        for problem in report.problems:
            print(f"  - {problem}")
    return report
