"""El modelo del curso como un ``GPT2LMHeadModel`` de transformers, y de vuelta.

``TinyLM`` (``helpers.tinylm.model``) es un GPT en miniatura: embeddings de
token y de posición, bloques pre-norma [atención causal, MLP con GELU], una
LayerNorm final y la matriz del embedding «atada» a la salida. Es justo la
arquitectura de GPT-2, así que cabe en la clase de serie de transformers, sin
código propio. Lo que hay que traducir:

- **Los nombres**: ``tok_emb`` → ``wte``, ``pos_emb`` → ``wpe``, ``ln_attn``
  → ``ln_1``, ``qkv`` → ``c_attn``, ``proj`` → ``c_proj``, ``ln_mlp`` →
  ``ln_2``, ``mlp[0]`` → ``c_fc``, ``mlp[2]`` → ``mlp.c_proj`` y
  ``ln_final`` → ``ln_f``.
- **La orientación**: GPT-2 guarda sus capas lineales como ``Conv1D``, con la
  matriz ``(entrada, salida)``; ``nn.Linear`` la guarda ``(salida, entrada)``.
  Cada matriz se traspone.
- **La configuración**: GELU exacta (``"gelu"``, no la aproximación
  ``"gelu_new"`` de GPT-2), ``layer_norm_epsilon=1e-5`` (el de
  ``nn.LayerNorm``), ``n_positions=32``, sin dropout y embeddings atados.

Con la atención «eager» (la de toda la vida: softmax de QKᵀ/√d) los logits
salen iguales bit a bit; con ``"sdpa"`` difieren en torno a 1e-5 por el orden
de las sumas. Por eso ``gpt2_config`` la fija, y ``load_gpt2`` la vuelve a
pedir al cargar: ``save_pretrained`` no la guarda en ``config.json``, y
``from_pretrained`` elige ``"sdpa"`` si nadie dice otra cosa.
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel

from helpers.tinylm import TinyLM, TinyLMConfig, load_pretrained, tokenizer

# (nombre en TinyLM, nombre en GPT-2, ¿trasponer?) dentro de cada bloque i.
_BLOCK_MAP: tuple[tuple[str, str, bool], ...] = (
    ("ln_attn.weight", "ln_1.weight", False),
    ("ln_attn.bias", "ln_1.bias", False),
    ("attn.qkv.weight", "attn.c_attn.weight", True),
    ("attn.qkv.bias", "attn.c_attn.bias", False),
    ("attn.proj.weight", "attn.c_proj.weight", True),
    ("attn.proj.bias", "attn.c_proj.bias", False),
    ("ln_mlp.weight", "ln_2.weight", False),
    ("ln_mlp.bias", "ln_2.bias", False),
    ("mlp.0.weight", "mlp.c_fc.weight", True),
    ("mlp.0.bias", "mlp.c_fc.bias", False),
    ("mlp.2.weight", "mlp.c_proj.weight", True),
    ("mlp.2.bias", "mlp.c_proj.bias", False),
)
_TOP_MAP: tuple[tuple[str, str], ...] = (
    ("tok_emb.weight", "transformer.wte.weight"),
    ("pos_emb.weight", "transformer.wpe.weight"),
    ("ln_final.weight", "transformer.ln_f.weight"),
    ("ln_final.bias", "transformer.ln_f.bias"),
)


def gpt2_config(cfg: TinyLMConfig | None = None) -> GPT2Config:
    """La ``GPT2Config`` que reproduce exactamente la arquitectura de ``cfg``.

    Los ids especiales son los del tokenizador del curso: el relleno («_») es
    el 0 y el token de fin («.») el 14; no hay token de inicio.
    """
    cfg = cfg or TinyLMConfig()
    return GPT2Config(
        vocab_size=cfg.vocab_size,
        n_positions=cfg.max_len,
        n_embd=cfg.d_model,
        n_layer=cfg.n_layers,
        n_head=cfg.n_heads,
        n_inner=cfg.d_mlp,
        activation_function="gelu",  # nn.GELU() es la exacta (erf)
        layer_norm_epsilon=1e-5,  # el de nn.LayerNorm
        resid_pdrop=0.0,  # TinyLM no tiene dropout
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.end_id,
        pad_token_id=tokenizer.pad_id,
        attn_implementation="eager",
    )


def to_gpt2(model: TinyLM) -> GPT2LMHeadModel:
    """Copia los pesos de ``model`` en un ``GPT2LMHeadModel`` nuevo (en float32).

    El resultado está en modo evaluación, como ``load_pretrained()``, y no
    comparte memoria con ``model``: entrenar uno no cambia el otro.
    """
    source = model.state_dict()
    target: dict[str, torch.Tensor] = {}
    for ours, theirs in _TOP_MAP:
        target[theirs] = source[ours]
    for i in range(model.cfg.n_layers):
        for ours, theirs, transpose in _BLOCK_MAP:
            weight = source[f"blocks.{i}.{ours}"]
            target[f"transformer.h.{i}.{theirs}"] = weight.T if transpose else weight
    hf = GPT2LMHeadModel(gpt2_config(model.cfg))
    # lm_head.weight es la misma matriz que wte (atada): no hay que copiarla
    missing, unexpected = hf.load_state_dict(
        {k: v.detach().clone().contiguous() for k, v in target.items()}, strict=False
    )
    leftover = [k for k in missing if k != "lm_head.weight"]
    if leftover or unexpected:
        raise RuntimeError(
            f"La conversión no encaja: faltan {leftover}, sobran {unexpected}."
        )
    if hf.lm_head.weight.data_ptr() != hf.transformer.wte.weight.data_ptr():
        raise RuntimeError("La cabeza de salida no quedó atada al embedding.")
    return hf.eval()


def to_tinylm(hf: GPT2LMHeadModel) -> TinyLM:
    """El camino de vuelta: un ``GPT2LMHeadModel`` de esta forma -> ``TinyLM``.

    Sirve para comparar un paso de entrenamiento hecho en transformers con el
    mismo paso hecho con el código del curso.
    """
    c = hf.config
    cfg = TinyLMConfig(
        vocab_size=c.vocab_size,
        max_len=c.n_positions,
        d_model=c.n_embd,
        n_heads=c.n_head,
        n_layers=c.n_layer,
        d_mlp=c.n_inner or 4 * c.n_embd,
    )
    source = hf.state_dict()
    target: dict[str, torch.Tensor] = {}
    for ours, theirs in _TOP_MAP:
        target[ours] = source[theirs]
    for i in range(cfg.n_layers):
        for ours, theirs, transpose in _BLOCK_MAP:
            weight = source[f"transformer.h.{i}.{theirs}"]
            target[f"blocks.{i}.{ours}"] = weight.T if transpose else weight
    model = TinyLM(cfg)
    model.load_state_dict(
        {k: v.detach().clone().contiguous() for k, v in target.items()}
    )
    return model.eval()


def load_pretrained_gpt2() -> GPT2LMHeadModel:
    """El modelo del ajuste supervisado que trae el paquete, ya en transformers."""
    return to_gpt2(load_pretrained())


def load_gpt2(path: str | Path) -> GPT2LMHeadModel:
    """Carga lo que guardó ``save_pretrained`` en ``path``, con atención «eager».

    Es ``GPT2LMHeadModel.from_pretrained(path, attn_implementation="eager")``:
    una carpeta local, sin descargar nada. Devuelve el modelo en modo
    evaluación.
    """
    return GPT2LMHeadModel.from_pretrained(path, attn_implementation="eager").eval()
