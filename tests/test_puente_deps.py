"""Las dependencias del curso, iguales en pyproject.toml y en binder/.

Binder instala ``binder/requirements.txt`` *antes* de PyTorch para CPU
(``binder/postBuild``); lo que dependa de torch tiene que ir después, en
``binder/requirements-after-torch.txt``, o pip traería la rueda de PyPI con
CUDA (varios GB). Estas pruebas lo comprueban con los metadatos de lo
instalado, y que cada dependencia de pyproject esté en binder/ con una
versión que la cumpla.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
BINDER = REPO / "binder"
HF_STACK = ("transformers", "trl", "peft", "accelerate", "datasets", "math-verify")


def _pyproject() -> list[Requirement]:
    with open(REPO / "pyproject.toml", "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    return [Requirement(d) for d in deps]


def _pins(path: Path) -> dict[str, str]:
    """``nombre canónico -> versión`` de un requirements.txt con ``==``."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line).groups()
            pins[canonicalize_name(name)] = version
    return pins


def _needs_torch(name: str, seen: set[str] | None = None) -> bool:
    """¿Pide ``name`` torch, directa o indirectamente (según lo instalado)?"""
    seen = set() if seen is None else seen
    name = canonicalize_name(name)
    if name == "torch":
        return True
    if name in seen:
        return False
    seen.add(name)
    env = {**default_environment(), "extra": ""}
    try:
        requires = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return False
    for text in requires:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate(env):
            continue
        if _needs_torch(requirement.name, seen):
            return True
    return False


def test_hf_stack_is_pinned_in_pyproject():
    pinned = {canonicalize_name(r.name): r for r in _pyproject()}
    for name in HF_STACK:
        specifier = str(pinned[canonicalize_name(name)].specifier)
        assert specifier.startswith("=="), (name, specifier)
        assert metadata.version(name) == specifier[2:], name


def test_every_dependency_is_in_binder_with_a_version_that_satisfies_it():
    before = _pins(BINDER / "requirements.txt")
    after = _pins(BINDER / "requirements-after-torch.txt")
    assert not set(before) & set(after)
    binder = {**before, **after}
    for requirement in _pyproject():
        name = canonicalize_name(requirement.name)
        if name == "torch":  # lo instala postBuild (tools/install_torch.sh)
            assert name not in binder
            continue
        assert name in binder, f"{name} falta en binder/"
        assert requirement.specifier.contains(binder[name], prereleases=True), (
            name,
            binder[name],
            str(requirement.specifier),
        )


def test_nothing_installed_before_torch_pulls_torch():
    before = _pins(BINDER / "requirements.txt")
    assert [n for n in before if _needs_torch(n)] == []
    # Y lo de después sí lo necesita (si no, iría antes): al menos peft y accelerate
    after = _pins(BINDER / "requirements-after-torch.txt")
    assert {"peft", "accelerate"} <= {n for n in after if _needs_torch(n)}


def test_post_build_installs_after_torch_file_after_torch():
    script = (BINDER / "postBuild").read_text()
    torch_at = script.index("tools/install_torch.sh")
    after_at = script.index("requirements-after-torch.txt")
    course_at = script.index("pip install --no-cache-dir --no-deps -e .")
    assert torch_at < after_at < course_at
