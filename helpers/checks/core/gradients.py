"""Gradientes: el de la respuesta contra el de la referencia, por autograd.

:func:`check_gradients` no deriva nada a mano: el gradiente esperado es el
que ``torch.autograd`` calcula sobre **la referencia**, con las mismas
entradas. Una tabla (``wrt``) dice qué entradas deben recibir gradiente
(:data:`MUST`) y cuáles no (:data:`MUST_NOT`), con un id por violación; las
filas de errores típicos pasan por el mismo autograd para saber cuál explica
un gradiente equivocado. Si la salida no es un escalar, se deriva una suma
ponderada fija de sus posiciones (pesos aleatorios con semilla): dos funciones
con la misma jacobiana dan lo mismo, y una que se equivoca en una posición
casi seguro no.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from helpers.checks.core.calls import _call, _copies, _unmodified
from helpers.checks.core.compare import describe_difference
from helpers.checks.core.mistakes import CheckError, Diagnosis, Mistake, fail
from helpers.checks.core.symptoms import _symptom


@dataclass(frozen=True)
class Flow:
    """Si una entrada debe recibir gradiente (``must=True``) o no.

    ``id`` y ``message`` son el diagnóstico cuando no se cumple; por defecto,
    ``<prefix>_no_gradient`` o ``<prefix>_gradient_leaks`` (ver
    :func:`check_gradients`) con un mensaje que nombra la entrada. ``id``
    puede ser un :class:`Diagnosis` (el de un bloque ``diagnoses``), que trae
    los dos: ``Flow(True, SAYS["loss_no_grad"])``.
    """

    must: bool
    id: str | Diagnosis | None = None
    message: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.id, Diagnosis):
            object.__setattr__(self, "message", self.message or self.id.message)
            object.__setattr__(self, "id", self.id.id)


#: Lo que se dice de un gradiente equivocado que ninguna fila explica.
WRONG_GRADIENT_HINT = (
    "El gradiente debe ser el de la referencia: repasa la fórmula y qué entradas "
    "entran en ella como constantes."
)

#: Las pistas de un error lanzado con gradiente: (trozos del error, pista).
_RAISED_HINTS = (
    (
        ("in-place", "inplace"),
        " Modificas una entrada que lleva gradiente en su sitio (+=, *=, "
        "x[...] = ...): calcula sobre valores nuevos.",
    ),
    (
        ("numpy()",),
        " Un tensor con gradiente no pasa a NumPy: haz la cuenta con operaciones "
        "de PyTorch (torch.exp, .clamp, torch.where…) y corta con .detach() solo "
        "lo que el enunciado dice que no se deriva.",
    ),
)

#: La entrada debe recibir gradiente (lo que se optimiza).
MUST = Flow(True)
#: La entrada no debe recibir gradiente (una constante: ventajas, objetivos,
#: log-probabilidades viejas, la política de referencia).
MUST_NOT = Flow(False)


@dataclass
class _Run:
    """Una llamada con gradiente: lo devuelto y los gradientes por entrada
    (o el error que lanzó)."""

    output: Any = None
    gradients: dict[str, Any] | None = None
    error: BaseException | None = None


def _leaves(
    named: dict[str, Any], wrt: Mapping[str, Flow]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Las entradas de un caso, copiadas, con ``requires_grad`` en las de
    ``wrt``. Devuelve los argumentos por nombre y las hojas por etiqueta (el
    nombre del argumento, o ``red.parámetro``).

    Una clave es el nombre de un argumento tensor, o de una red
    (``nn.Module``: cuentan todos sus parámetros) o ``"red.parte"`` (los
    parámetros cuyo nombre empieza por ``parte``)."""
    import torch

    args = dict(zip(named, _copies(tuple(named.values())), strict=True))
    leaves: dict[str, Any] = {}
    for key in wrt:
        base, _, part = key.partition(".")
        value = args[base]
        if isinstance(value, torch.nn.Module):
            for pname, parameter in value.named_parameters():
                if pname.startswith(part):
                    leaves[f"{base}.{pname}"] = parameter
            continue
        if not isinstance(value, torch.Tensor) or not value.is_floating_point():
            raise ValueError(f"check_gradients: {key!r} no es un tensor de floats")
        args[base] = value.detach().clone().requires_grad_(True)
        leaves[key] = args[base]
    return args, leaves


def _cotangent(reference_output: Any) -> Any:
    """Los pesos fijos de la suma que se deriva (1 si la salida es escalar)."""
    import torch

    if reference_output.numel() == 1:
        return torch.ones_like(reference_output)
    generator = torch.Generator().manual_seed(0)
    return torch.randn(
        reference_output.shape, generator=generator, dtype=reference_output.dtype
    )


def _gradients(output: Any, leaves: dict[str, Any], weights: Any) -> dict[str, Any]:
    import torch

    if not output.requires_grad:  # una referencia que devuelve una constante
        return {label: torch.zeros_like(leaf) for label, leaf in leaves.items()}
    found = torch.autograd.grad(
        (output.reshape(weights.shape) * weights).sum(),
        list(leaves.values()),
        allow_unused=True,
    )
    return {
        label: (torch.zeros_like(leaf) if g is None else g.detach())
        for (label, leaf), g in zip(leaves.items(), found, strict=True)
    }


def check_gradients(
    function: Callable[..., Any],
    name: str,
    cases: Iterable[tuple[Any, ...]],
    reference: Callable[..., Any],
    mistakes: Iterable[Mistake] = (),
    *,
    wrt: Mapping[str, Flow],
    prefix: str,
    mistake: str | None = None,
    hint: str = "",
    wrong_shape: Diagnosis | None = None,
    without_gradient: Diagnosis | None = None,
    raised: Diagnosis | None = None,
    attach: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    atol: float = 1e-6,
    rtol: float = 1e-5,
) -> None:
    """Comprueba los **gradientes** de ``function`` contra los de ``reference``.

    En cada caso, las entradas de ``wrt`` (nombre del argumento, o
    ``"red.parte"`` → :class:`Flow`) se copian con ``requires_grad`` y se
    derivan por autograd la salida de la referencia y la del estudiante. La
    referencia debe cumplir la tabla (si no, ``ValueError``: la tabla está mal
    escrita). Falla, en este orden:

    1. si la función lanza con entradas que llevan gradiente (``raised``: su
       id, y su mensaje tras el error y la pista del núcleo; por defecto
       ``"raised"``) o modifica una entrada (``"modified_input"``);
    2. si devuelve algo sin gradiente (``without_gradient``; por defecto
       ``<prefix>_no_gradient``) o de otra forma que la referencia
       (``wrong_shape``; por defecto, el síntoma de forma del núcleo);
    3. si llega gradiente a una entrada :data:`MUST_NOT` (el id de su
       :class:`Flow`, o ``<prefix>_gradient_leaks``);
    4. si no llega a una :data:`MUST` (o ``<prefix>_no_gradient``);
    5. si algún gradiente no es el de la referencia: la fila de ``mistakes``
       cuyas variantes, derivadas igual, dan los del estudiante en todos los
       casos, o ``mistake`` (por defecto ``<prefix>_wrong_gradient``) con
       dónde difiere y ``hint`` (por defecto :data:`WRONG_GRADIENT_HINT`; la
       fórmula del enunciado en prosa, «−A_i · m_it / B, cero en el relleno»).

    Una referencia que devuelve una constante se comprueba con todo
    :data:`MUST_NOT`. El valor no se mira: lo mira otra celda, y un gradiente
    bien repartido saca sus puntos aunque el valor no. ``attach``, si una
    entrada se calcula a partir de otra como en un bucle de verdad (``Â = R −
    V``), recibe los argumentos por nombre, ya con gradiente, y devuelve los
    que cambian. ``atol`` y ``rtol``: la tolerancia de los gradientes.
    """
    cases = list(cases)
    parameters = [
        p.name
        for p in inspect.signature(reference).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    rows = list(mistakes)

    # Lo esperado: la referencia, derivada por autograd (y la tabla, comprobada).
    weights: list[Any] = []
    expected: list[_Run] = []
    for case in cases:
        args, leaves = _arguments(parameters, case, wrt, attach)
        output = reference(*args)
        weights.append(_cotangent(output.detach()))
        expected.append(_Run(output, _gradients(output, leaves, weights[-1])))
    _check_table(expected, wrt)

    def run(implementation: Callable[..., Any], index: int, student: bool) -> _Run:
        args, leaves = _arguments(parameters, cases[index], wrt, attach)
        before = _copies(_detached(args))
        try:
            with np.errstate(all="ignore"):
                output = implementation(*args)
            if not _has_gradient(output):
                want = expected[index]
                # Sin gradiente, como la referencia: nada que derivar ni mirar
                return _Run(output) if _has_gradient(want.output) else want
            if output.numel() != weights[index].numel():
                return _Run(output=output, gradients={})
            return _Run(output, _gradients(output, leaves, weights[index]))
        except (NotImplementedError, CheckError):
            raise
        except Exception as error:
            return _Run(error=error)
        finally:
            if student:
                _unmodified(function, name, before, _detached(args))

    got = [run(function, index, student=True) for index in range(len(cases))]

    def matching_row(same_output: bool = False) -> Mistake | None:
        """La fila cuyas variantes, derivadas igual, dan los gradientes del
        estudiante en todos los casos (y, con ``same_output``, también su
        salida)."""
        for row in rows:
            fingerprint = [
                run(row.variant, i, student=False) for i in range(len(cases))
            ]
            if all(
                f.error is None
                and bool(f.gradients)
                and _first_difference(m.gradients, f.gradients, atol, rtol) is None
                and (not same_output or _same_output(m.output, f.output, atol, rtol))
                for m, f in zip(got, fingerprint, strict=True)
            ):
                return row
        return None

    def difference(index: int) -> str | None:
        """Dónde difiere el gradiente del caso ``index``, o ``None``."""
        mine, want = got[index], expected[index]
        label = _first_difference(mine.gradients, want.gradients, atol, rtol)
        if label is None:
            return None
        what = "el gradiente"
        if want.output.numel() > 1:
            what += " (de una suma ponderada fija de sus salidas)"
        text = describe_difference(
            mine.gradients[label].double().numpy(),
            want.gradients[label].double().numpy(),
            atol=atol,
        )
        text = text.replace("devuelve un resultado que difiere", "difiere", 1).replace(
            "devolvió ", "vale ", 1
        )
        return f"Con {_call(name, cases[index])}, {what} respecto a «{label}» {text}"

    must_ids = {f"{prefix}_no_gradient"} | {
        flow.id for flow in wrt.values() if flow.must and flow.id
    }
    for index, (mine, want) in enumerate(zip(got, expected, strict=True)):
        try:
            _check_flow(
                mine,
                want,
                _call(name, cases[index]),
                wrt,
                prefix,
                wrong_shape,
                without_gradient,
                raised,
            )
        except CheckError as error:
            # Un gradiente que vale cero en un caso (la esquina de un abs o un
            # relu, todo recortado) no es uno que no llega: si una fila da lo
            # mismo que el estudiante en todos los casos (gradientes y salida),
            # el diagnóstico es esa fila.
            if error.mistake not in must_ids or not mine.gradients:
                raise
            row = matching_row(same_output=True)
            if row is None:
                raise
            fail(f"{difference(index) or error}\n{row.message}", row.id)
    for index in range(len(cases)):
        intro = difference(index)
        if intro is None:
            continue
        row = matching_row()
        if row is not None:
            fail(f"{intro}\n{row.message}", row.id)
        fail(
            f"{intro}\n{hint or WRONG_GRADIENT_HINT}",
            mistake or f"{prefix}_wrong_gradient",
        )


def _same_output(got: Any, want: Any, atol: float, rtol: float) -> bool:
    import torch

    return got.shape == want.shape and torch.allclose(
        got.detach().double(),
        want.detach().double(),
        atol=atol,
        rtol=rtol,
        equal_nan=True,
    )


def _arguments(
    parameters: list[str],
    case: tuple[Any, ...],
    wrt: Mapping[str, Flow],
    attach: Callable[[dict[str, Any]], dict[str, Any]] | None,
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Los argumentos de una llamada, nuevos, con sus hojas de gradiente."""
    named = dict(zip(parameters, case, strict=False))
    args, leaves = _leaves(named, wrt)
    if attach is not None:
        args.update(attach(args))
    return tuple(args.values()), leaves


def _has_gradient(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor) and value.requires_grad


def _detached(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Los argumentos, con los tensores que llevan gradiente separados (para
    copiarlos y compararlos: comparten memoria con los de verdad)."""
    return tuple(a.detach() if _has_gradient(a) else a for a in args)


def _check_table(expected: list[_Run], wrt: Mapping[str, Flow]) -> None:
    """La referencia cumple la tabla (si no, la tabla está mal escrita)."""
    for key, flow in wrt.items():
        reached = any(
            bool(g.abs().max() > 0)
            for run in expected
            for label, g in run.gradients.items()
            if label == key or label.startswith(f"{key}.")
        )
        if reached != flow.must:
            raise ValueError(
                f"check_gradients: la referencia {'no ' if flow.must else ''}"
                f"deriva respecto a {key!r}, y la tabla wrt dice lo contrario"
            )


def _first_difference(
    got: dict[str, Any] | None, want: dict[str, Any], atol: float, rtol: float
) -> str | None:
    """La primera entrada cuyo gradiente no es el esperado, o ``None``."""
    import torch

    if not got:
        return next(iter(want))
    for label, expected in want.items():
        mine = got[label]
        if mine.shape != expected.shape or not torch.allclose(
            mine.double(), expected.double(), atol=atol, rtol=rtol, equal_nan=True
        ):
            return label
    return None


def _check_flow(
    mine: _Run,
    want: _Run,
    call_text: str,
    wrt: Mapping[str, Flow],
    prefix: str,
    wrong_shape: Diagnosis | None,
    without_gradient: Diagnosis | None,
    raised: Diagnosis | None,
) -> None:
    """Pasos 1–4 de :func:`check_gradients` en un caso."""
    if mine.error is not None:
        text = str(mine.error)
        hint = next((h for ks, h in _RAISED_HINTS if any(k in text for k in ks)), "")
        fail(
            f"Con entradas que llevan gradiente, {call_text} lanzó "
            f"{type(mine.error).__name__}: {text.rstrip('.')}.{hint}"
            + (f" {raised.message}" if raised and raised.message else ""),
            raised.id if raised else "raised",
        )
    if mine.gradients is None:
        what = (
            "un tensor sin gradiente"
            if hasattr(mine.output, "requires_grad")
            else f"{type(mine.output).__name__}, no un tensor con gradiente"
        )
        message = (
            f"{call_text} devuelve {what}: ¿usaste .item(), float(), "
            ".detach(), NumPy o torch.no_grad() en el camino? Devuelve un "
            "tensor de PyTorch calculado a partir de las entradas, para que "
            "el gradiente llegue hasta ellas."
        )
        if without_gradient is not None:
            fail(without_gradient.message or message, without_gradient.id)
        fail(message, f"{prefix}_no_gradient")
    got_shape = tuple(mine.output.shape)
    want_shape = tuple(want.output.shape)
    scalars = mine.output.numel() == want.output.numel() == 1
    if got_shape != want_shape and not scalars:
        got_array = mine.output.detach().double().numpy()
        want_array = want.output.detach().double().numpy()
        symptom = _symptom(mine.output, got_array, want_array)
        intro = (
            f"{call_text} devolvió algo de forma {got_shape}, pero debía tener "
            f"forma {want_shape}."
        )
        if wrong_shape is not None:
            fail(
                f"{intro}\n{wrong_shape.message}" if wrong_shape.message else intro,
                wrong_shape.id,
            )
        fail(
            intro + (f"\n{symptom[1]}" if symptom else ""),
            symptom[0] if symptom else "wrong_value",
        )
    for key, flow in wrt.items():
        labels = [g for g in want.gradients if g == key or g.startswith(f"{key}.")]
        got_any = any(bool((mine.gradients[g] != 0).any()) for g in labels)
        want_any = any(bool((want.gradients[g] != 0).any()) for g in labels)
        if not flow.must and got_any:
            fail(
                flow.message
                or (
                    f"Con {call_text}, llega gradiente a «{key}», y no debía: "
                    "para esta función es una constante (un peso fijo, un "
                    "objetivo), no algo que optimizar. Sepárala del grafo con "
                    f"{key}.detach() donde la uses."
                ),
                flow.id or f"{prefix}_gradient_leaks",
            )
        if flow.must and want_any and not got_any:
            fail(
                flow.message
                or (
                    f"Con {call_text}, no llega gradiente a «{key}»: ¿usaste "
                    ".detach(), .item(), float(), NumPy o torch.no_grad() en el "
                    f"camino? El resultado debe depender de {key} a través de "
                    "operaciones de PyTorch."
                ),
                flow.id or f"{prefix}_no_gradient",
            )
