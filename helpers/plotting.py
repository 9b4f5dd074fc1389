"""Un estilo común para las figuras del curso."""

from __future__ import annotations

import matplotlib as mpl

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


def use_course_style() -> None:
    """Aplica el estilo de figuras del curso: tamaño, rejilla, fuentes y colores."""
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
