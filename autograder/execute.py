"""Ejecuta un cuaderno dentro del sandbox y devuelve el resultado por un pipe.

Es el programa que corre *dentro* de bubblewrap (o, sin sandbox, con los
límites que se puedan poner). Lee el cuaderno, fija los límites de recursos,
ejecuta las celdas con el preprocesador ``Execute`` de nbgrader y escribe el
cuaderno ejecutado en el descriptor que le indican: el kernel no lo hereda, así
que el código del estudiante no puede escribir ahí.

Uso interno: ``python -m autograder.execute CUADERNO --fd N [límites]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys

# jsonschema (que nbformat usa para validar) carga rfc3987_syntax, que construye
# una gramática al importarse: más de un segundo por entrega en una máquina
# cargada, para validar un formato (IRI) que ningún cuaderno usa. Sin él,
# jsonschema simplemente no comprueba ese formato.
sys.modules.setdefault("rfc3987_syntax", None)

import nbformat  # noqa: E402

from autograder import audit  # noqa: E402

#: La etiqueta de las celdas que calificar salta (las vacía y la pone
#: ``autograder.preprocessors.skip_cell``): el ejecutor ni las manda al kernel.
#: La que traiga una entrega se borra antes de ejecutar.
SKIP_TAG = "autograder-saltada"


def set_limits(memory_bytes: int, processes: int, file_bytes: int) -> None:
    """Límites que heredan el kernel y todo lo que lance."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


# Lo que queda en una celda que agotó su tiempo (como en nbgrader).
TIMEOUT_ERROR = {
    "ename": "CellTimeoutError",
    "evalue": "",
    "traceback": ["CellTimeoutError: la celda no terminó en el tiempo permitido"],
}


def record_reply_error(cell, cell_index, execute_reply) -> None:
    """Si el kernel respondió con un error que no quedó en las salidas (una
    interrupción por tiempo, por ejemplo), se añade: así la celda puntúa 0."""
    content = execute_reply["content"]
    if content["status"] != "error":
        return
    if any(
        o.output_type == "error" and o.ename == content["ename"] for o in cell.outputs
    ):
        return
    cell.outputs.append(
        nbformat.v4.new_output(
            "error",
            ename=content["ename"],
            evalue=content["evalue"],
            traceback=content["traceback"] or [content["ename"]],
        )
    )


def run(nb, notebook_dir: str, cell_timeout: int, hidden: list[str], fork_kernel=None):
    """Ejecuta ``nb`` con un kernel nuevo y devuelve el cuaderno ejecutado.

    Args:
        nb: el cuaderno.
        notebook_dir: su carpeta (la única en la que puede escribir, con /tmp).
        cell_timeout: segundos por celda.
        hidden: carpetas cuya lectura o escritura es un intento.
        fork_kernel: ``None`` lanza el kernel como un proceso nuevo (lo normal);
            si se da, una función ``(channel, arguments) -> km`` que lo bifurca
            de este proceso ya cargado (ver :mod:`autograder.forkserver`).

    El estado de la ejecución queda en ``nb.metadata["autograder_execution"]`` y
    los intentos del registro en ``nb.metadata["autograder_audit"]``.
    """
    # nbclient directamente (lo mismo que hace el Execute de nbgrader, sin
    # importar nbgrader entero en cada entrega: se nota en un lote de 100).
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    # Un error de protocolo con el kernel (p. ej. «Invalid Signature» con la
    # máquina muy cargada) no es culpa de la entrega: se reintenta una vez con
    # un kernel nuevo. Si vuelve a pasar, se informa.
    # Una celda de nbgrader nunca se salta, venga como venga el cuaderno: una
    # celda de pruebas sin ejecutar no tendría error y contaría como aprobada.
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags") or []
        if SKIP_TAG in tags and cell.get("metadata", {}).get("nbgrader"):
            cell["metadata"]["tags"] = [tag for tag in tags if tag != SKIP_TAG]
    original = nbformat.from_dict(nb)
    # Lo que escribe fuera de su carpeta o sale a la red, aunque se trague el
    # error: lo anota un gancho dentro del kernel (ver autograder/audit.py).
    allowed = [notebook_dir, "/tmp"]
    arguments = ["--HistoryManager.hist_file=:memory:", *audit.KERNEL_ARGUMENTS]
    attempts: list[dict] = []
    for attempt in range(2):
        nb = nbformat.from_dict(original) if attempt else nb
        channel = audit.AuditChannel(allowed, hidden, audit.read_only_roots())
        km = fork_kernel(channel, arguments) if fork_kernel else None
        if km is None:
            os.environ.update(channel.environment())
        client = NotebookClient(
            nb,
            km=km,
            timeout=cell_timeout,
            interrupt_on_timeout=True,
            allow_errors=True,
            raise_on_iopub_timeout=True,
            error_on_timeout=TIMEOUT_ERROR,
            kernel_name="python3",
            extra_arguments=arguments,
            on_cell_executed=record_reply_error,
            # Las salidas ya están: no hace falta esperar a que el kernel se
            # despida (unas décimas por entrega).
            shutdown_kernel="immediate",
            # Solo las celdas que vació SkipSlowCells (o skip_unneeded_cells)
            # llevan esta etiqueta: la de una entrega se borró antes.
            skip_cells_with_tag=SKIP_TAG,
            resources={"metadata": {"path": notebook_dir}},
        )
        channel.attach(client)
        status = "ok"
        try:
            client.execute(pass_fds=(channel.kernel_fd,))
        except DeadKernelError:
            status = "dead_kernel"
        except Exception as error:  # el kernel no arrancó, mensajes corruptos...
            status = f"error: {type(error).__name__}: {error}"[:300]
        finally:
            if km is not None:
                km.kill_forked()
        attempts += channel.finish(status == "ok")
        if not status.startswith("error"):
            break
    nb.metadata["autograder_execution"] = status
    nb.metadata["autograder_audit"] = attempts
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.execute")
    parser.add_argument("notebook")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--cell-timeout", type=int, default=60)
    parser.add_argument("--memory", type=int, default=3 * 1024**3)
    parser.add_argument("--processes", type=int, default=256)
    parser.add_argument("--file-size", type=int, default=256 * 1024**2)
    args = parser.parse_args(argv)

    out = os.fdopen(args.fd, "w", encoding="utf-8")
    # El kernel no puede abrir los descriptores de este proceso por /proc (ni
    # este pipe ni el del registro de intentos).
    audit.protect_process()
    nb = nbformat.read(args.notebook, as_version=4)
    set_limits(args.memory, args.processes, args.file_size)
    hidden = os.environ.pop(audit.HIDDEN_ENV, "").split(":")
    notebook_dir = os.path.dirname(os.path.abspath(args.notebook))
    nb = run(nb, notebook_dir, args.cell_timeout, hidden)
    out.write(nbformat.writes(nb))
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
