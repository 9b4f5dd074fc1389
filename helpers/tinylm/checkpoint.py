"""Guardar y cargar el modelo: pesos y configuración viajan juntos.

El checkpoint que trae el paquete (``tinylm_sft.pt``) lo produce
``python -m helpers.tinylm.sft``; ``load_pretrained()`` lo carga sin
argumentos y sin descargar nada.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from .model import TinyLM, TinyLMConfig

CHECKPOINT_PATH = Path(__file__).with_name("tinylm_sft.pt")


def save_checkpoint(
    model: TinyLM, path: Path | str, extra: dict[str, Any] | None = None
) -> None:
    """Guarda ``config`` + ``state_dict`` (+ ``extra``: métricas, receta...)."""
    torch.save(
        {
            "config": asdict(model.cfg),
            "state_dict": model.state_dict(),
            "extra": extra or {},
        },
        path,
    )


def load_checkpoint(path: Path | str = CHECKPOINT_PATH) -> TinyLM:
    """Reconstruye el modelo de ``path``, en modo evaluación y en float32."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = TinyLM(TinyLMConfig(**checkpoint["config"]))
    model.load_state_dict(checkpoint["state_dict"])
    return model.eval()


def load_pretrained() -> TinyLM:
    """El modelo del ajuste supervisado que trae el paquete (el punto de partida)."""
    return load_checkpoint(CHECKPOINT_PATH)


def checkpoint_info(path: Path | str = CHECKPOINT_PATH) -> dict[str, Any]:
    """Lo que se guardó junto a los pesos: receta del SFT, tiempo y métricas."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    return {"config": checkpoint["config"], **checkpoint["extra"]}
