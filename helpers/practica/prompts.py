"""Enunciados de verdad: longitudes distintas, plantilla de chat y relleno.

Los enunciados del curso miden todos 6 tokens («17×24=»), así que en 07–09
nunca hubo relleno en el enunciado. Un modelo real recibe enunciados de
longitudes distintas, y un lote los iguala **rellenando por la izquierda**
(para que todas las respuestas empiecen en la misma columna). Este módulo pone
los datos del ejercicio 1 del cuaderno 11 y su referencia:

- ``practice_problems``: problemas con factores de una y de dos cifras
  («7×8=», «7×24=», «17×24=»), para que los enunciados midan 4, 5 y 6 tokens;
- ``chat_dataset``: el ``datasets.Dataset`` con las columnas de TRL
  (``prompt`` conversacional y ``answer``);
- ``left_padded_batch``: un lote con la disposición de TRL (enunciado
  rellenado a la izquierda, respuesta muestreada y rellenada a la derecha);
- ``response_log_probs``: **la referencia del ejercicio 1**, la
  log-probabilidad de cada token de la respuesta en un lote así;
- ``unpadded_log_probs``: la verdad, una secuencia sin relleno cada vez;
- ``padding_table``: cuánto se equivocan los logits si falta la máscara de
  atención o faltan las posiciones;
- ``trl_log_prob_gap``: lo que calcula el propio ``GRPOTrainer`` de TRL 1.16
  en ese lote (su pasada de entrenamiento no pasa ``position_ids``);
- ``tiny_rotary_model``: un modelo diminuto con posiciones rotatorias (RoPE,
  como Qwen o Llama), donde ese mismo descuido no cambia nada.

Las posiciones importan porque el modelo del curso (GPT-2 convertido, con
``n_positions = 32``) **suma a cada token el embedding de su posición
absoluta**. Con relleno a la izquierda, el primer token real de un enunciado
corto está en la columna 2, pero su posición debe ser 0:
``position_ids = cumsum(attention_mask) − 1``.
"""

from __future__ import annotations

import random
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import torch
from torch.nn import functional as F
from transformers import PreTrainedModel, PreTrainedTokenizerBase
from transformers.utils import logging as hf_logging

from helpers.tinylm import MAX_NEW_TOKENS, Problem, prompt_text

if TYPE_CHECKING:
    import datasets

#: Los tres pases del modelo que compara ``padding_table``, con su nombre.
PADDING_FORWARDS: dict[str, str] = {
    "nothing": "sin attention_mask ni position_ids",
    "mask": "solo attention_mask",
    "mask_and_positions": "attention_mask y position_ids = cumsum(máscara) − 1",
}


def practice_problems(n: int, seed: int) -> list[Problem]:
    """``n`` problemas cuyos enunciados miden 4, 5 y 6 tokens, por turnos.

    La fila i es, según ``i % 3``: una cifra por una cifra («7×8=», 4 tokens),
    una cifra por dos o dos por una («7×24=» o «24×7=», 5 tokens) y dos por dos
    («17×24=», 6 tokens). Así la primera fila tiene siempre el enunciado más
    corto y, con ``n ≥ 3``, el lote tiene las tres longitudes. Los factores
    salen al azar de ``random.Random(seed)``: la misma semilla da los mismos
    problemas.

    **Ojo**: el modelo del curso solo se ajustó (SFT) con factores de dos
    cifras, así que a «7×8=» suele responder mal. Para las tuberías da igual:
    el ejercicio compara log-probabilidades con las del mismo modelo sin
    relleno, no mira si la respuesta es correcta.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n debe ser un entero ≥ 1; es {n!r}.")
    rng = random.Random(seed)
    problems: list[Problem] = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            problem = (rng.randint(2, 9), rng.randint(2, 9))
        elif kind == 1:
            one, two = rng.randint(2, 9), rng.randint(10, 99)
            problem = (one, two) if rng.random() < 0.5 else (two, one)
        else:
            problem = (rng.randint(10, 99), rng.randint(10, 99))
        problems.append(problem)
    return problems


def chat_dataset(
    problems: Sequence[Problem], conversational: bool = True
) -> datasets.Dataset:
    """Un ``datasets.Dataset`` con las columnas que espera ``GRPOTrainer``.

    - ``prompt``: la conversación ``[{"role": "user", "content": "7×24="}]``
      (con ``conversational=False``, el texto ``"7×24="`` sin más: el formato
      «estándar» de TRL);
    - ``answer``: el producto correcto como texto (``"168"``). TRL pasa cada
      columna que no es ``prompt`` a las funciones de recompensa como
      argumento con nombre: ``correctness_reward(completions, answer=...)``.

    Con este modelo las dos formas dan el mismo texto: la plantilla de chat
    (``helpers.puente.tokenizer``) no añade marcas de rol.
    """
    import datasets

    if not problems:
        raise ValueError("Hace falta al menos un problema.")
    texts = [prompt_text(a, b) for a, b in problems]
    prompts = (
        [[{"role": "user", "content": t}] for t in texts] if conversational else texts
    )
    return datasets.Dataset.from_dict(
        {"prompt": prompts, "answer": [str(a * b) for a, b in problems]}
    )


def prompt_texts(
    problems: Sequence[Problem], tokenizer: PreTrainedTokenizerBase
) -> list[str]:
    """Los enunciados como texto, pasados por la plantilla de chat.

    Es lo que hace TRL con un ``prompt`` conversacional:
    ``apply_chat_template(..., add_generation_prompt=True, tokenize=False)``.
    """
    if tokenizer.chat_template is None:
        raise ValueError(
            "El tokenizador no tiene plantilla de chat: usa "
            "helpers.puente.tokenizer.make_tokenizer()."
        )
    conversations = [
        [{"role": "user", "content": prompt_text(a, b)}] for a, b in problems
    ]
    return [
        tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=False)
        for c in conversations
    ]


def _sample(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    problems: Sequence[Problem],
    seed: int,
    max_new_tokens: int,
    **generate_kwargs: Any,
):
    """Enunciados rellenados a la izquierda y ``model.generate`` a T = 1.

    Devuelve ``(encoded, output)``. ``generate`` recibe la máscara de atención
    y, a partir de ella, calcula él mismo las posiciones
    (``cumsum(attention_mask) − 1``) y las sigue contando paso a paso: por eso
    lo que muestrea es lo mismo que muestrearía sin relleno.
    """
    encoded = tokenizer(
        prompt_texts(problems, tokenizer),
        return_tensors="pt",
        padding=True,
        padding_side="left",
    )
    width = encoded["input_ids"].shape[1]
    limit = model.config.n_positions if hasattr(model.config, "n_positions") else None
    if limit is not None and width + max_new_tokens > limit:
        raise ValueError(
            f"El enunciado más largo ({width} tokens) más max_new_tokens "
            f"({max_new_tokens}) pasa de las {limit} posiciones del modelo."
        )
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        output = model.generate(
            **encoded,
            do_sample=True,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            max_new_tokens=max_new_tokens,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
            suppress_tokens=[tokenizer.pad_token_id],
            **generate_kwargs,
        )
    return encoded, output


def left_padded_batch(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    problems: Sequence[Problem],
    seed: int,
    max_new_tokens: int = MAX_NEW_TOKENS,
) -> dict[str, Any]:
    """Un lote con la disposición de TRL: respuestas muestreadas a T = 1.

    Devuelve un diccionario con (B problemas, P el enunciado más largo, C la
    respuesta más larga):

    - ``prompt_ids``, ``prompt_mask``: ``(B, P)``, rellenados **a la
      izquierda** con el id 0 (máscara 0 en el relleno);
    - ``completion_ids``, ``completion_mask``: ``(B, C)``, rellenados **a la
      derecha**; la máscara vale 1 hasta el token de fin «.» incluido y 0
      después (una respuesta cortada, sin «.», vale 1 entera);
    - ``input_ids = cat(prompt_ids, completion_ids)`` y ``attention_mask =
      cat(prompt_mask, completion_mask)``: ``(B, P + C)``;
    - ``logits_to_keep``: el entero C (la respuesta son las C últimas
      columnas).

    Es lo que ``GRPOTrainer._generate_and_score_completions`` de TRL 1.16 arma
    antes de la pérdida. La misma semilla da el mismo lote.
    """
    encoded, output = _sample(model, tokenizer, problems, seed, max_new_tokens)
    prompt_ids = encoded["input_ids"]
    prompt_mask = encoded["attention_mask"].long()
    completion_ids = output[:, prompt_ids.shape[1] :]
    # 1 hasta el primer «.» incluido (como TRL); sin «.», toda la fila
    is_end = completion_ids == tokenizer.eos_token_id
    length = completion_ids.shape[1]
    first_end = torch.where(
        is_end.any(dim=1),
        is_end.int().argmax(dim=1),
        torch.full_like(is_end[:, 0], length, dtype=torch.long),
    )
    columns = torch.arange(length).expand_as(completion_ids)
    completion_mask = (columns <= first_end[:, None]).long()
    completion_ids = completion_ids.masked_fill(
        completion_mask == 0, tokenizer.pad_token_id
    )
    return {
        "prompt_ids": prompt_ids,
        "prompt_mask": prompt_mask,
        "completion_ids": completion_ids,
        "completion_mask": completion_mask,
        "input_ids": torch.cat([prompt_ids, completion_ids], dim=1),
        "attention_mask": torch.cat([prompt_mask, completion_mask], dim=1),
        "logits_to_keep": length,
    }


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """``cumsum(attention_mask) − 1``, con 0 en el relleno de la izquierda.

    Es lo que hace ``generate`` de transformers al muestrear. En el relleno
    de la derecha siguen contando desde la última posición real; no importa:
    esas columnas no se leen.
    """
    return (attention_mask.long().cumsum(dim=-1) - 1).clamp(min=0)


def response_log_probs(
    model: PreTrainedModel,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    logits_to_keep: int,
) -> torch.Tensor:
    """Log-probabilidad de cada token de la respuesta: la referencia del ejercicio 1.

    - ``input_ids``, ``attention_mask``: ``(B, P + C)``, enunciado rellenado a
      la izquierda y respuesta rellenada a la derecha (``left_padded_batch``);
    - ``logits_to_keep``: C, la respuesta son las C últimas columnas.

    Devuelve ``(B, C)``: en la casilla (i, j), ``log π(y_ij | enunciado,
    y_i<j)``, y **0 en el relleno de la respuesta** (donde ``attention_mask``
    vale 0). Conserva el grafo: el gradiente llega a los pesos del modelo.

    Cuatro cosas a la vez:

    1. **La máscara de atención**: que ningún token mire al relleno.
    2. **Las posiciones**: ``position_ids = cumsum(attention_mask) − 1`` (0 en
       el relleno). Sin ellas, GPT-2 numera las columnas 0, 1, 2… y el primer
       token real de un enunciado corto recibe el embedding de otra posición.
    3. **El desplazamiento**: los logits de la columna t predicen el token
       t + 1, así que la respuesta (columnas ``−C:``) se lee en los logits de
       las columnas ``−C−1:−1``.
    4. **El log-softmax sobre el vocabulario** (el último eje) y ``gather``
       del token que se escribió.

    Es el contrato de ``GRPOTrainer._get_per_token_logps_and_entropies`` de
    TRL 1.16 (el antiguo ``_get_per_token_logps``): los mismos argumentos y
    la misma forma de salida, con 0 en el relleno (TRL lo pone con
    ``masked_fill``). Dos diferencias: TRL no pasa ``position_ids`` (ver
    ``trl_log_prob_gap``) y calcula el log-softmax por trozos sin guardar los
    logits enteros (su cabeza «fusionada»), además de dividir los logits
    entre la temperatura de muestreo (aquí T = 1).
    """
    position_ids = position_ids_from_mask(attention_mask)
    logits = model(
        input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids
    ).logits
    shifted = logits[:, -logits_to_keep - 1 : -1].float()  # (B, C, V)
    log_p = F.log_softmax(shifted, dim=-1)
    completion = input_ids[:, -logits_to_keep:]
    chosen = log_p.gather(-1, completion.unsqueeze(-1)).squeeze(-1)
    keep = attention_mask[:, -logits_to_keep:].bool()
    return torch.where(keep, chosen, torch.zeros_like(chosen))


@contextmanager
def _quiet() -> Iterator[None]:
    """Sin los avisos ni las barras de progreso de transformers (y restaurados).

    ``padding_table`` hace a propósito un pase sin máscara (transformers avisa
    de que falta) y ``trl_log_prob_gap`` guarda y carga el modelo (con barras).
    """
    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def _real_rows(batch: dict[str, Any]) -> list[tuple[torch.Tensor, int, int]]:
    """Cada fila sin relleno: (ids, longitud del enunciado, de la respuesta)."""
    rows = []
    for i in range(batch["prompt_ids"].shape[0]):
        prompt = batch["prompt_ids"][i][batch["prompt_mask"][i].bool()]
        completion = batch["completion_ids"][i][batch["completion_mask"][i].bool()]
        rows.append((torch.cat([prompt, completion]), len(prompt), len(completion)))
    return rows


def unpadded_log_probs(model: PreTrainedModel, batch: dict[str, Any]) -> torch.Tensor:
    """La verdad: ``(B, C)`` calculado con una secuencia sin relleno cada vez.

    Cada fila es su enunciado sin relleno más su respuesta sin relleno, con
    posiciones 0, 1, 2… y sin máscara (no hay nada que tapar). Como en
    ``response_log_probs``, vale 0 en el relleno de la respuesta.
    """
    size = batch["completion_ids"].shape
    result = torch.zeros(size)
    for i, (ids, p, c) in enumerate(_real_rows(batch)):
        logits = model(input_ids=ids[None]).logits[0]
        log_p = F.log_softmax(logits[p - 1 : p + c - 1].float(), dim=-1)
        result[i, :c] = log_p.gather(-1, ids[p:, None]).squeeze(-1)
    return result


@torch.no_grad()
def padding_table(model: PreTrainedModel, batch: dict[str, Any]) -> dict[str, float]:
    """Máx. |Δ logits| en los tokens reales frente al pase sin relleno.

    Tres pases del lote rellenado (``PADDING_FORWARDS``): sin máscara ni
    posiciones (``"nothing"``), solo con la máscara (``"mask"``) y con la
    máscara y ``position_ids = cumsum(máscara) − 1``
    (``"mask_and_positions"``). Se comparan los logits de todo el vocabulario
    en cada token real (enunciado y respuesta) con los de la misma fila sin
    relleno. Solo el tercero debe dar ≈ 0 en un modelo de posiciones
    absolutas; en uno rotatorio (``tiny_rotary_model``) basta la máscara.
    """
    input_ids, mask = batch["input_ids"], batch["attention_mask"]
    with _quiet():  # el aviso de transformers: falta la máscara (a propósito)
        nothing = model(input_ids=input_ids).logits
    forwards = {
        "nothing": nothing,
        "mask": model(input_ids=input_ids, attention_mask=mask).logits,
        "mask_and_positions": model(
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=position_ids_from_mask(mask),
        ).logits,
    }
    gaps = dict.fromkeys(forwards, 0.0)
    for i, (ids, _, _) in enumerate(_real_rows(batch)):
        truth = model(input_ids=ids[None]).logits[0]
        real = mask[i].bool()
        for name, logits in forwards.items():
            gap = (logits[i][real] - truth).abs().max().item()
            gaps[name] = max(gaps[name], gap)
    return gaps


@torch.no_grad()
def trl_log_prob_gap(model: PreTrainedModel, batch: dict[str, Any]) -> dict[str, float]:
    """Máx. |Δ log p| en la respuesta frente a la verdad: TRL 1.16 y la referencia.

    Construye un ``GRPOTrainer`` de verdad sobre una copia de ``model``
    guardada en una carpeta temporal (``helpers.puente.trl_equality.
    make_trl_trainer``, ~1 s) y llama a su propio método,
    ``_get_per_token_logps_and_entropies``, con ``input_ids``,
    ``attention_mask`` y ``logits_to_keep`` del lote. Devuelve:

    - ``"trl"``: su distancia a ``unpadded_log_probs``. TRL pasa la máscara
      pero no ``position_ids``, y GPT-2 entonces numera las columnas desde 0:
      en las filas con relleno la distancia no es 0;
    - ``"reference"``: la de ``response_log_probs`` (≈ 0).

    Solo se miran las casillas de la respuesta con máscara 1.
    """
    from helpers.puente.trl_equality import make_trl_trainer

    truth = unpadded_log_probs(model, batch)
    keep = batch["completion_mask"].bool()
    with tempfile.TemporaryDirectory() as folder, _quiet():
        model.save_pretrained(folder)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer = make_trl_trainer(folder, "grpo", 0.0, f"{folder}/salida")
        trainer.model.eval()
        trl_logps, _, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model,
            batch["input_ids"],
            batch["attention_mask"],
            batch["logits_to_keep"],
        )
    ours = response_log_probs(
        model, batch["input_ids"], batch["attention_mask"], batch["logits_to_keep"]
    )
    return {
        "trl": (trl_logps - truth)[keep].abs().max().item(),
        "reference": (ours - truth)[keep].abs().max().item(),
    }


def tiny_rotary_model(seed: int = 0, vocab_size: int = 15) -> PreTrainedModel:
    """Un ``Qwen2ForCausalLM`` diminuto y aleatorio: posiciones rotatorias (RoPE).

    Dos capas de 32 dimensiones, el vocabulario del curso y pesos al azar con
    ``initializer_range = 0,5`` (para que los logits no sean casi 0). No sabe
    multiplicar: solo sirve para ver que con RoPE **desplazar todas las
    posiciones de una fila no cambia nada** (la atención solo ve la distancia
    entre dos posiciones), mientras que con posiciones absolutas (GPT-2) sí.
    """
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        initializer_range=0.5,
        pad_token_id=0,
        eos_token_id=14,
        bos_token_id=None,
        tie_word_embeddings=True,
        attn_implementation="eager",
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    return model.eval()
