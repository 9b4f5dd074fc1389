"""Un transformer diminuto, solo decodificador, para leer de arriba abajo.

Es la misma arquitectura que la de GPT, en miniatura:

    tokens -> embedding de token + embedding de posición
           -> n_layers bloques [atención causal, MLP], con pre-norma y residuo
           -> LayerNorm final -> logits (con la matriz del embedding, «atada»)

Los logits de la posición t son la distribución del token t + 1: el modelo
predice el siguiente carácter a partir de los anteriores, nunca de los
posteriores (por eso la atención es *causal*).

Para muestrear deprisa guardamos una *caché de claves y valores* (KV cache):
al generar el token t + 1 no hace falta recalcular lo que ya sabíamos de los
tokens 0..t, basta con procesar el último y atender a lo guardado.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class TinyLMConfig:
    """Hiperparámetros de la arquitectura."""

    vocab_size: int = 15  # tokens distintos (ver tokenizer.py)
    max_len: int = 32  # longitud máxima de enunciado + respuesta
    d_model: int = 64  # anchura del flujo residual
    n_heads: int = 4  # cabezas de atención (d_model / n_heads por cabeza)
    n_layers: int = 2  # bloques transformer apilados
    d_mlp: int = 256  # anchura de la capa oculta del MLP


class KVCache:
    """Claves y valores ya calculados, capa a capa, durante la generación.

    Cada capa guarda dos tensores ``(B, n_heads, L, d_head)``, donde ``L`` es
    el número de posiciones vistas hasta ahora. Las capas los amplían en su
    sitio al procesar tokens nuevos.
    """

    def __init__(self, n_layers: int) -> None:
        self.keys: list[torch.Tensor | None] = [None] * n_layers
        self.values: list[torch.Tensor | None] = [None] * n_layers

    def __len__(self) -> int:
        """Número de posiciones ya guardadas."""
        return 0 if self.keys[0] is None else self.keys[0].shape[2]

    def extend(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Añade las claves/valores nuevos de ``layer`` y devuelve todos."""
        if self.keys[layer] is not None:
            k = torch.cat([self.keys[layer], k], dim=2)
            v = torch.cat([self.values[layer], v], dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v


class CausalSelfAttention(nn.Module):
    """Atención multi-cabeza en la que cada posición solo mira hacia atrás."""

    def __init__(self, cfg: TinyLMConfig, layer: int) -> None:
        super().__init__()
        assert cfg.d_model % cfg.n_heads == 0, "d_model debe ser múltiplo de n_heads"
        self.layer = layer  # para encontrar su sitio en la KV cache
        self.n_heads = cfg.n_heads
        self.d_head = cfg.d_model // cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)  # consulta, clave, valor
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """``x``: ``(B, T, d_model)`` -> ``(B, T, d_model)``."""
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)
        # (B, T, D) -> (B, n_heads, T, d_head): cada cabeza trabaja por su lado
        q, k, v = (
            t.view(B, T, self.n_heads, self.d_head).transpose(1, 2) for t in (q, k, v)
        )
        if cache is not None:
            k, v = cache.extend(self.layer, k, v)
        L = k.shape[2]  # posiciones a las que se puede atender (pasadas + nuevas)

        # Puntuación de cada consulta contra cada clave, escalada por sqrt(d_head)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, H, T, L)
        # La consulta i está en la posición L - T + i: ve las claves 0..L - T + i
        # (con un solo token nuevo, T = 1, las ve todas: no hay nada que tapar)
        if T > 1:
            causal = torch.ones(T, L, dtype=torch.bool, device=x.device).tril(L - T)
            scores = scores.masked_fill(~causal, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = weights @ v  # (B, H, T, d_head)
        out = out.transpose(1, 2).reshape(B, T, D)  # juntamos las cabezas
        return self.proj(out)


class Block(nn.Module):
    """Un bloque pre-norma: x + atención(LN(x)), después x + MLP(LN(x))."""

    def __init__(self, cfg: TinyLMConfig, layer: int) -> None:
        super().__init__()
        self.ln_attn = nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg, layer)
        self.ln_mlp = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.d_mlp),
            nn.GELU(),
            nn.Linear(cfg.d_mlp, cfg.d_model),
        )

    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """``(B, T, d_model)`` -> ``(B, T, d_model)``."""
        x = x + self.attn(self.ln_attn(x), cache)
        x = x + self.mlp(self.ln_mlp(x))
        return x


class TinyLM(nn.Module):
    """El modelo de lenguaje completo: ids de token -> logits del siguiente."""

    def __init__(self, cfg: TinyLMConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg = cfg or TinyLMConfig()
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.max_len, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg, layer) for layer in range(cfg.n_layers))
        self.ln_final = nn.LayerNorm(cfg.d_model)
        self.apply(_init_weights)

    def forward(
        self, tokens: torch.Tensor, cache: KVCache | None = None
    ) -> torch.Tensor:
        """``tokens``: ``(B, T)`` enteros -> logits ``(B, T, vocab_size)``.

        Con ``cache``, ``tokens`` son los que siguen a los ya guardados en
        ella (por ejemplo, solo el último token muestreado) y la caché se
        amplía en su sitio.
        """
        B, T = tokens.shape
        start = 0 if cache is None else len(cache)
        if start + T > self.cfg.max_len:
            raise ValueError(
                f"La secuencia ocupa {start + T} posiciones y el modelo solo "
                f"admite {self.cfg.max_len}."
            )
        positions = torch.arange(start, start + T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)  # (B, T, d_model)
        for block in self.blocks:
            x = block(x, cache)
        x = self.ln_final(x)
        # Embeddings atados: la misma matriz lee los tokens y escribe los logits
        return x @ self.tok_emb.weight.T

    def num_params(self) -> int:
        """Número de parámetros entrenables (la matriz atada cuenta una vez)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def _init_weights(module: nn.Module) -> None:
    """Pesos pequeños al empezar (como en GPT-2): logits iniciales casi planos."""
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, std=0.02)
        nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, std=0.02)
