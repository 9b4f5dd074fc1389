"""Prepara la máquina para el hub del curso (como root): cuentas, intercambio.

    python hub/prepare.py            # crea lo que falte e imprime las cuentas
    python hub/prepare.py --remove   # borra las cuentas (userdel -r)

Crea, si no existen:

* la cuenta de docente y las de estudiante (``hub/settings.py``: variables
  ``RLHUB_INSTRUCTOR`` y ``RLHUB_STUDENTS``), con su ``$HOME`` en modo 0700 (nadie
  lee el trabajo de otra persona) y una contraseña: ``RLHUB_PASSWORD`` si se da,
  o una aleatoria por cuenta, que se escribe en ``<RLHUB_DIR>/contrasenas.txt``
  (solo root);
* ``<RLHUB_DIR>/hub`` (0700, el estado del hub) y ``<RLHUB_DIR>/exchange``
  (1777, como ``/tmp``: el intercambio de nbgrader), con la carpeta del curso
  dentro, de la docente;
* ``~docente/rl-para-llms/.grading/``: entregas, notas y gradebook de la docente.

Además, las cuentas tienen que poder ejecutar el Python del curso: si alguna
carpeta por encima de ``.venv``, del Python base o del repositorio no se puede
atravesar (p. ej. ``/root`` con pyenv, o un clon en ``/tmp/tmp.XXXX``), le
añade solo el permiso de paso (``o+x``, no el de listar) y lo dice.
"""

from __future__ import annotations

import argparse
import os
import pwd
import secrets
import stat
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hub import settings  # noqa: E402


def _require_root() -> None:
    if os.geteuid() != 0:
        raise SystemExit(
            "hub/prepare.py crea cuentas del sistema: hay que ejecutarlo como root."
        )


def needed_paths() -> list[Path]:
    """Lo que las cuentas del hub tienen que poder leer y ejecutar."""
    paths = [settings.REPO, settings.VENV_BIN]
    config = settings.REPO / ".venv" / "pyvenv.cfg"
    if config.exists():
        for line in config.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                paths.append(Path(value.strip()))
    paths.append(Path(os.path.realpath(settings.VENV_BIN / "python")))
    return paths


def make_traversable(paths: list[Path]) -> list[tuple[Path, int]]:
    """Añade ``o+x`` a cada carpeta por encima de ``paths`` que no lo tenga.

    Returns:
        Las carpetas cambiadas con su modo anterior (para poder deshacerlo).
    """
    changed: list[tuple[Path, int]] = []
    seen: set[Path] = set()
    for path in paths:
        path = Path(os.path.realpath(path))
        for folder in [*reversed(path.parents), path]:
            if folder in seen or not folder.is_dir():
                continue
            seen.add(folder)
            mode = stat.S_IMODE(folder.stat().st_mode)
            if not mode & stat.S_IXOTH:
                folder.chmod(mode | stat.S_IXOTH)
                changed.append((folder, mode))
                print(f"Permiso de paso (o+x) añadido a {folder} para las cuentas.")
    return changed


def user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def create_user(name: str, password: str | None) -> None:
    """Una cuenta local con ``$HOME`` privado (0700); ``password`` la cambia."""
    if not user_exists(name):
        subprocess.run(
            ["useradd", "--create-home", "--shell", "/bin/bash", name], check=True
        )
    Path(pwd.getpwnam(name).pw_dir).chmod(0o700)
    if password is not None:
        subprocess.run(
            ["chpasswd"], input=f"{name}:{password}\n", text=True, check=True
        )


def remove_user(name: str) -> None:
    if user_exists(name):
        subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)


def _owned_dir(path: Path, mode: int, user: str | None = None) -> None:
    path.mkdir(parents=True, exist_ok=True)
    if user is not None:
        account = pwd.getpwnam(user)
        os.chown(path, account.pw_uid, account.pw_gid)
    path.chmod(mode)


def prepare(passwords: dict[str, str] | None = None) -> dict[str, str]:
    """Crea cuentas, carpetas e intercambio.

    Args:
        passwords: contraseña de cada cuenta. Las cuentas nuevas sin contraseña
            dada reciben ``RLHUB_PASSWORD`` o una aleatoria; las que ya existían
            la conservan (salvo que se dé ``RLHUB_PASSWORD``).

    Returns:
        Las contraseñas que se pusieron, por cuenta.
    """
    _require_root()
    passwords = dict(passwords or {})
    shared = os.environ.get("RLHUB_PASSWORD")
    accounts = [settings.instructor(), *settings.students()]
    for name in accounts:
        if name not in passwords and (shared or not user_exists(name)):
            passwords[name] = shared or secrets.token_urlsafe(12)
        create_user(name, passwords.get(name))

    state = settings.state_dir()
    _owned_dir(state, 0o755)
    _owned_dir(state / "hub", 0o700)
    # El intercambio: todo el mundo escribe (nbgrader lo exige), nadie borra
    # lo de otro (bit pegajoso). La carpeta del curso es de la docente, y
    # nbgrader crea dentro outbound/ (0755), inbound/ (2733: se entrega sin ver
    # las demás entregas) y feedback/ (0711: cada cual lee solo la suya).
    exchange = settings.exchange_dir()
    _owned_dir(exchange, 0o1777)
    _owned_dir(exchange / settings.COURSE_ID, 0o755, settings.instructor())

    home = Path(pwd.getpwnam(settings.instructor()).pw_dir)
    course = home / settings.INSTRUCTOR_COURSE
    _owned_dir(course, 0o700, settings.instructor())
    _owned_dir(course / ".grading", 0o700, settings.instructor())
    make_traversable(needed_paths())
    return passwords


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python hub/prepare.py",
        description="Prepara cuentas e intercambio para el hub del curso.",
    )
    parser.add_argument(
        "--remove", action="store_true", help="borra las cuentas (userdel -r)"
    )
    args = parser.parse_args(argv)
    _require_root()
    accounts = [settings.instructor(), *settings.students()]
    if args.remove:
        for name in accounts:
            remove_user(name)
            print(f"Cuenta borrada: {name}")
        return 0
    passwords = prepare()
    listing = settings.state_dir() / "contrasenas.txt"
    if passwords:
        known = {}
        if listing.exists():
            for line in listing.read_text().splitlines():
                name, _, password = line.partition("\t")
                known[name] = password
        known.update(passwords)
        listing.touch(mode=0o600)
        listing.chmod(0o600)
        listing.write_text("".join(f"{n}\t{p}\n" for n, p in known.items()))
    print(f"Docente: {settings.instructor()} · estudiantes: {', '.join(accounts[1:])}")
    print(f"Contraseñas (solo root): {listing}")
    print(f"Intercambio de nbgrader: {settings.exchange_dir()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
