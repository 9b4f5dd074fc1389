"""Procedimientos: qué hizo la función, además de qué dejó.

Dos respuestas pueden dejar los mismos gradientes y no hacer lo mismo: un
solo ``backward()`` tras todos los micro-lotes (sin el ahorro de memoria que
pide el enunciado), o micro-lotes de filas salteadas. Aquí se ve:

- :class:`Recorder` apunta, en orden, cada forward de un modelo (con las
  filas del lote que recibió), cada ``backward()`` que llega a sus
  parámetros y cada paso y ``zero_grad`` del optimizador: un :class:`Trace`;
- :class:`Microbatches` es la regla «k forwards de filas seguidas, en orden,
  cada uno con su ``backward()`` antes del siguiente» (y, si se pide, cuántos
  pasos del optimizador), con un id por violación;
- :class:`Procedure` junta un ejercicio con estado en datos: cómo empezar
  (:class:`Setup`), qué observar y cómo comparar, y su regla. Su
  :meth:`Procedure.check` es :func:`check_procedure` más la regla.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from helpers.checks.core.calls import _copies, _unmodified
from helpers.checks.core.diagnose import check_procedure
from helpers.checks.core.mistakes import Diagnosis, Mistake, fail

#: Lo que apunta un :class:`Recorder`.
EventKind = Literal["forward", "backward", "step", "zero_grad"]


@dataclass(frozen=True)
class Event:
    """Algo que pasó: un forward (con las filas del lote que recibió, o
    ``None`` si no se sabe), un ``backward()``, un paso o un ``zero_grad``."""

    kind: EventKind
    rows: tuple[int, ...] | None = None


@dataclass
class Trace:
    """Lo que apuntó un :class:`Recorder`, en orden."""

    events: list[Event] = field(default_factory=list)

    def count(self, kind: EventKind) -> int:
        """Cuántas veces pasó ``kind``."""
        return sum(event.kind == kind for event in self.events)

    @property
    def forwards(self) -> list[tuple[int, ...] | None]:
        """Las filas de cada forward, en orden."""
        return [event.rows for event in self.events if event.kind == "forward"]


class Recorder:
    """Apunta forwards, ``backward()`` y pasos del optimizador mientras dura::

        with Recorder(model, optimizer, batch=input_ids) as trace:
            accumulate_gradients(model, input_ids, ...)
        trace.count("backward"), trace.forwards

    Cada llamada a ``model`` es un forward, con sus filas (su primera entrada
    tensor, o ``input_ids``, buscada en las filas de ``batch``, distintas dos
    a dos); cada ``backward()`` que llega a sus parámetros cuenta una vez. Se
    apuntan también ``step()`` y los ``zero_grad()``. Al salir, todo queda
    como estaba.
    """

    def __init__(
        self, model: Any = None, optimizer: Any = None, *, batch: Any = None
    ) -> None:
        self.model = model
        self.optimizer = optimizer
        self.batch = batch
        self.trace = Trace()
        self._undo: list[Callable[[], None]] = []
        if batch is not None:
            rows = [tuple(row.reshape(-1).tolist()) for row in batch]
            if len(set(rows)) != len(rows):
                raise ValueError("Recorder: las filas de batch deben ser distintas")
            self._rows = {row: i for i, row in enumerate(rows)}

    def _record(self, kind: EventKind, rows: tuple[int, ...] | None = None) -> None:
        self.trace.events.append(Event(kind, rows))

    def _rows_of(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import torch

        if self.batch is None:
            return None
        given = kwargs.get("input_ids")
        if given is None:
            given = next((a for a in args if isinstance(a, torch.Tensor)), None)
        if given is None:
            return None
        return tuple(
            self._rows.get(tuple(row.reshape(-1).tolist()), -1) for row in given
        )

    def __enter__(self) -> Trace:
        from torch.autograd.graph import register_multi_grad_hook

        if self.model is not None:
            model = self.model

            def forward(module: Any, args: tuple, kwargs: dict) -> None:
                self._record("forward", self._rows_of(args, kwargs))

            handle = model.register_forward_pre_hook(forward, with_kwargs=True)
            self._undo.append(handle.remove)
            parameters = [p for p in model.parameters() if p.requires_grad]
            if parameters:
                hook = register_multi_grad_hook(
                    parameters, lambda grads: self._record("backward"), mode="any"
                )
                self._undo.append(hook.remove)
            self._wrap(model, "zero_grad")
        if self.optimizer is not None:
            step = self.optimizer.register_step_pre_hook(
                lambda optimizer, args, kwargs: self._record("step")
            )
            self._undo.append(step.remove)
            self._wrap(self.optimizer, "zero_grad")
        return self.trace

    def _wrap(self, owner: Any, method: str) -> None:
        """Cambia ``owner.method`` por uno que apunta y llama al de siempre."""
        original = getattr(owner, method)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            self._record("zero_grad")
            return original(*args, **kwargs)

        setattr(owner, method, wrapped)
        self._undo.append(lambda: delattr(owner, method))

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()


@dataclass(frozen=True)
class Microbatches:
    """La regla de la acumulación de gradientes en micro-lotes, declarada.

    ``count`` forwards de ``rows // count`` filas **seguidas y en orden** (el
    j-ésimo, las filas ``j·B/k`` a ``(j+1)·B/k − 1``), cada uno con su
    ``backward()`` antes del siguiente forward; y, si ``steps`` no es
    ``None``, ese número de pasos del optimizador.

    Los ids por defecto empiezan por ``prefix``: ``<prefix>_forward_count``,
    ``<prefix>_microbatch_rows``, ``<prefix>_backward_per_microbatch`` y
    ``<prefix>_step_count``. ``forwards``, ``rows_order``, ``backwards`` y
    ``stepping`` los cambian (:class:`Diagnosis`: id y, si se quiere, el
    mensaje).
    """

    count: int
    rows: int
    prefix: str
    steps: int | None = None
    forwards: Diagnosis | None = None
    rows_order: Diagnosis | None = None
    backwards: Diagnosis | None = None
    stepping: Diagnosis | None = None

    def __post_init__(self) -> None:
        if self.rows % self.count:
            raise ValueError("Microbatches: count debe dividir a rows")

    def expected(self) -> list[tuple[int, ...]]:
        """Las filas de cada micro-lote, en orden."""
        size = self.rows // self.count
        return [tuple(range(j * size, (j + 1) * size)) for j in range(self.count)]

    def _fail(self, override: Diagnosis | None, suffix: str, message: str) -> None:
        if override is not None and override.message:
            message = override.message
        fail(message, override.id if override else f"{self.prefix}_{suffix}")

    def check(self, trace: Trace, what: str) -> None:
        """Falla si ``trace`` no cumple la regla; ``what`` nombra la llamada
        en el mensaje («accumulate_gradients con k = 4»)."""
        k, size = self.count, self.rows // self.count
        where = f"{what} con {k} micro-lotes"
        forwards = trace.forwards
        if len(forwards) != k:
            plural = "forward" if len(forwards) == 1 else "forwards"
            whole = " (¿el lote entero de una vez?)" if len(forwards) == 1 else ""
            self._fail(
                self.forwards,
                "forward_count",
                f"{where} hizo {len(forwards)} {plural} del modelo{whole}; deben "
                f"ser {k}, uno por micro-lote de {size} filas: así nunca está "
                "en memoria el grafo del lote entero.",
            )
        for j, (got, want) in enumerate(zip(forwards, self.expected(), strict=True)):
            if got is None or got == want:
                continue  # None: sin lote con que reconocer las filas
            strided = got == tuple(range(j, self.rows, k))
            how = f" (salteadas, de {k} en {k})" if strided else ""
            self._fail(
                self.rows_order,
                "microbatch_rows",
                f"En {where}, el micro-lote {j + 1} recibió las filas "
                f"{list(got)}{how}; deben ser filas seguidas y en orden: el "
                f"micro-lote {j + 1} son las filas {list(want)}.",
            )
        pattern = [e.kind for e in trace.events if e.kind in ("forward", "backward")]
        if pattern != ["forward", "backward"] * k:
            backwards = trace.count("backward")
            if backwards == 1 and k > 1:
                message = (
                    f"En {where} hay un solo backward(), tras todos: "
                    "así el grafo de todos sigue en memoria a la vez, y ahorrar "
                    "esa memoria es la razón de acumular. Haz loss.backward() "
                    "dentro del bucle, una vez por micro-lote, justo después de "
                    "su forward."
                )
            else:
                message = (
                    f"En {where} hubo {backwards} backward(): cada micro-lote "
                    "hace el suyo, justo después de su forward y antes del "
                    "siguiente."
                )
            self._fail(self.backwards, "backward_per_microbatch", message)
        if self.steps is not None and trace.count("step") != self.steps:
            self._fail(
                self.stepping,
                "step_count",
                f"En {where} el optimizador dio {trace.count('step')} pasos, y "
                f"deben ser {self.steps}.",
            )


@dataclass(frozen=True)
class Setup:
    """Un punto de partida de un procedimiento, nuevo en cada ejecución.

    ``args``: los argumentos de la llamada. ``model``, ``optimizer`` y
    ``batch``: lo que vigila el :class:`Recorder` (``None``: nada). La
    llamada puede modificar ``model`` y ``optimizer``; si modifica otro
    argumento, se falla con ``modified_input``.
    """

    args: tuple[Any, ...]
    model: Any = None
    optimizer: Any = None
    batch: Any = None


def _no_description(got: Any, want: Any) -> str:
    return ""


@dataclass(frozen=True)
class Procedure:
    """Un ejercicio con estado, como datos: ``setup()`` da un punto de
    partida nuevo e igual cada vez (:class:`Setup`), ``observe(setup,
    returned)`` lo que se compara tras la llamada (gradientes, parámetros, lo
    devuelto), ``same``, ``describe``, ``same_as_mistake`` y ``unexplained``
    como en :func:`check_procedure`, y ``schedule`` la regla de lo que debe
    hacer la llamada (:class:`Microbatches`). Cada fila se ejecuta desde el
    mismo ``setup()``."""

    name: str
    setup: Callable[[], Setup]
    observe: Callable[[Setup, Any], Any]
    same: Callable[[Any, Any], bool]
    describe: Callable[[Any, Any], str] = _no_description
    same_as_mistake: Callable[[Any, Any], bool] | None = None
    unexplained: Callable[[Any, Any], bool | None] | None = None
    schedule: Microbatches | None = None

    def run(
        self, implementation: Callable[..., Any], *, student: bool = False
    ) -> tuple[Any, Trace]:
        """Ejecuta ``implementation`` desde un ``setup()`` nuevo: lo observado
        y lo que hizo. Con ``student``, falla si modificó una entrada que no
        es el modelo ni el optimizador."""
        state = self.setup()
        before = _copies(state.args) if student else ()
        with Recorder(state.model, state.optimizer, batch=state.batch) as trace:
            returned = implementation(*state.args)
        if student:
            allowed = [
                i
                for i, a in enumerate(state.args)
                if a is state.model or a is state.optimizer
            ]
            _unmodified(implementation, self.name, before, state.args, allowed)
        return self.observe(state, returned), trace

    def check(
        self,
        student: Callable[..., Any],
        reference: Callable[..., Any],
        mistakes: Iterable[Mistake] = (),
    ) -> Any:
        """:func:`check_procedure` con lo observado y, si el resultado está
        bien, la regla (``schedule``) sobre lo que hizo el estudiante."""
        traces: list[Trace] = []

        def run(implementation: Callable[..., Any]) -> Any:
            first = not traces
            observed, trace = self.run(implementation, student=first)
            traces.append(trace)
            return observed

        got = check_procedure(
            student,
            reference,
            mistakes,
            run=run,
            same=self.same,
            describe=self.describe,
            same_as_mistake=self.same_as_mistake,
            unexplained=self.unexplained,
        )
        if self.schedule is not None:
            self.schedule.check(traces[0], self.name)
        return got

    def check_schedule(self, student: Callable[..., Any]) -> None:
        """Solo la regla (una celda calificada aparte): falla si lo que hizo
        ``student`` no la cumple."""
        if self.schedule is None:
            raise ValueError("Procedure.check_schedule: no hay regla (schedule)")
        _, trace = self.run(student, student=True)
        self.schedule.check(trace, self.name)
