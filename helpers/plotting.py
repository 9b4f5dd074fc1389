"""Un estilo común para las figuras del curso."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib as mpl
import numpy as np
from matplotlib import scale as mscale
from matplotlib import ticker

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from helpers.bench_data import CartPoleResult

# Paleta apta para daltónicos (Okabe e Ito, 2008).
COLORS: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)


def _comma(text: str) -> str:
    """``text`` con coma decimal (``{,}`` dentro de una fórmula, sin espacio)."""
    return text.replace(".", "{,}" if "$" in text else ",")


class DecimalCommaFormatter(ticker.ScalarFormatter):
    """Las marcas de los ejes con coma decimal, como los números del texto
    (``helpers.formatting``): 0,5 y no 0.5. No depende del *locale* de la
    máquina, que en Binder suele ser el inglés."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return _comma(super().__call__(x, pos))

    def get_offset(self) -> str:
        return _comma(super().get_offset())

    def format_data_short(self, value: float) -> str:
        return _comma(super().format_data_short(value))


class _CourseLinearScale(mscale.LinearScale):
    """La escala lineal de siempre, con las marcas en coma decimal."""

    def __init__(self, *args: object) -> None:
        # Sin el parámetro «axis», que Matplotlib 3.11 da por obsoleto (las
        # versiones anteriores lo pasan, y aquí no hace falta).
        super().__init__()

    def set_default_locators_and_formatters(self, axis) -> None:  # noqa: ANN001
        super().set_default_locators_and_formatters(axis)
        axis.set_major_formatter(DecimalCommaFormatter())


def use_course_style() -> None:
    """Aplica el estilo de figuras del curso: tamaño, rejilla, fuentes, colores
    y coma decimal en las marcas de los ejes lineales."""
    # Sustituye a la escala «linear» del registro de Matplotlib: los ejes que
    # se creen desde ahora formatean sus marcas con DecimalCommaFormatter.
    mscale.register_scale(_CourseLinearScale)
    mpl.rcParams.update(
        {
            "figure.figsize": (8.0, 4.5),
            "figure.dpi": 100,
            "savefig.dpi": 120,
            "savefig.bbox": "tight",
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": 13,
            "axes.titleweight": "bold",
            "axes.labelsize": 11,
            "legend.fontsize": 10,
            "legend.frameon": False,
            "lines.linewidth": 1.8,
            "axes.prop_cycle": mpl.cycler(color=list(COLORS)),
            "axes.formatter.use_locale": False,
        }
    )


def plot_seed_spread(results: list[CartPoleResult], ax: Axes | None = None) -> Axes:
    """Los pasos hasta «llegar» de cada semilla de ``make bench``, por agente.

    Un punto por semilla (hueco si no llegó: está en el tope), la caja del
    rango intercuartílico y una raya en la mediana. Así se ve cuánto cambia un
    mismo algoritmo de una semilla a otra antes de comparar medianas.
    """
    import matplotlib.pyplot as plt

    from helpers.formatting import number

    if ax is None:
        _, ax = plt.subplots(figsize=(8.0, 1.0 + 0.8 * len(results)))
    jitter = np.random.default_rng(0)
    for row, result in enumerate(results):
        color = COLORS[row % len(COLORS)]
        q1, q3 = result.steps_quartiles
        median = result.median_steps
        ax.add_patch(
            mpl.patches.Rectangle(
                (q1, row - 0.25), q3 - q1, 0.5, color=color, alpha=0.18, lw=0
            )
        )
        ax.plot([median, median], [row - 0.3, row + 0.3], color=color, lw=3)
        offsets = jitter.uniform(-0.15, 0.15, len(result.all_steps))
        solved = np.array(result.reached)
        steps = np.array(result.all_steps)
        ax.scatter(steps[solved], row + offsets[solved], color=color, s=28, zorder=3)
        ax.scatter(
            steps[~solved],
            row + offsets[~solved],
            facecolors="none",
            edgecolors=color,
            s=28,
            zorder=3,
            label="no llega (en el tope)" if (~solved).any() else None,
        )
    ax.set_yticks(range(len(results)), [r.name for r in results])
    ax.set_ylim(-0.6, len(results) - 0.4)
    ax.invert_yaxis()
    ax.set(
        title="Pasos hasta llegar a 475, semilla a semilla (make bench)",
        xlabel="pasos de entorno (caja: de Q1 a Q3; raya: mediana)",
    )
    ax.set_xlim(left=0)
    ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda x, _: number(x, 0)))
    if any(r.n_solved < len(r.seeds) for r in results):
        ax.legend(loc="lower right")
    return ax
