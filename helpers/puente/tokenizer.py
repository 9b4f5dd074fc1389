"""El tokenizador de caracteres del curso como ``PreTrainedTokenizerFast``.

Un tokenizador de Hugging Face tiene tres piezas (biblioteca ``tokenizers``):

- un **pre-tokenizador** que corta el texto en trozos: aquí, carácter a
  carácter;
- un **modelo** que da un id a cada trozo: aquí ``WordLevel``, una tabla fija
  con los 15 símbolos del curso en el mismo orden (``"_"`` es el 0, ``"0"``
  el 1... y ``"."`` el 14);
- un **decodificador** que junta los trozos al volver a texto: aquí
  ``Fuse``, que los pega sin espacios.

Así ``make_tokenizer()("17×24=")["input_ids"]`` es ``[2, 8, 11, 3, 5, 13]``,
lo mismo que ``helpers.tinylm.tokenizer.encode("17×24=")``.

La **plantilla de chat** dice cómo se escribe una conversación como texto. El
modelo del curso no conoce roles ni marcas especiales: el mensaje del usuario
es el enunciado tal cual y la respuesta del asistente sigue sin separador. Un
modelo de chat real (Qwen, Llama...) mete ahí sus marcas de rol; la plantilla
es la que las pone.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedModel, PreTrainedTokenizerFast

from helpers.tinylm import MAX_NEW_TOKENS, Problem, prompt_text
from helpers.tinylm.tokenizer import tokenizer as course_tokenizer

# El usuario escribe el enunciado («17×24=») y el asistente, el desarrollo
# terminado en «.». Nada más: sin roles que el alfabeto no puede escribir.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] not in ['user', 'assistant'] %}"
    "{{ raise_exception('Este modelo solo conoce los roles user y assistant.') }}"
    "{% endif %}"
    "{{ message['content'] }}"
    "{% endfor %}"
)


def make_tokenizer() -> PreTrainedTokenizerFast:
    """Un ``PreTrainedTokenizerFast`` con el vocabulario y los ids del curso.

    Relleno ``"_"`` (id 0) y fin ``"."`` (id 14), como ``CharTokenizer``; sin
    token desconocido: un carácter fuera del alfabeto es un error, no un id.
    El relleno va a la izquierda, que es lo que espera ``generate()`` en un
    lote (los enunciados del curso miden todos lo mismo, así que no hay).
    """
    vocab = dict(course_tokenizer.stoi)
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=None))
    # Cada carácter es un trozo (Regex(".") con «isolated»: uno por coincidencia)
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token=course_tokenizer.itos[course_tokenizer.pad_id],
        eos_token=course_tokenizer.itos[course_tokenizer.end_id],
        padding_side="left",
        chat_template=CHAT_TEMPLATE,
        model_max_length=32,
        clean_up_tokenization_spaces=False,
    )


@torch.no_grad()
def greedy_completions(
    model: PreTrainedModel,
    problems: Sequence[Problem],
    hf_tokenizer: PreTrainedTokenizerFast | None = None,
    max_new_tokens: int = MAX_NEW_TOKENS,
) -> list[str]:
    """Respuestas voraces de ``model.generate()`` a ``problems``, como texto.

    Es la decodificación voraz de ``helpers.tinylm.sample(..., temperature=0)``
    dicha a la manera de transformers:

    - ``do_sample=False``: el token más probable en cada paso;
    - ``eos_token_id``: parar al escribir «.» (con ``stop_strings`` no
      funciona en este vocabulario, que no tiene espacios ni palabras);
    - ``suppress_tokens``: el relleno nunca se escribe (el curso le pone
      log-probabilidad −∞ al generar).

    El texto de cada respuesta incluye el punto final, si lo escribió, y no
    lleva relleno: es lo que lee ``helpers.tinylm.verify``.
    """
    hf_tokenizer = hf_tokenizer or make_tokenizer()
    texts = [prompt_text(a, b) for a, b in problems]
    batch = hf_tokenizer(texts, return_tensors="pt", padding=True)
    out = model.generate(
        **batch,
        do_sample=False,
        max_new_tokens=max_new_tokens,
        eos_token_id=hf_tokenizer.eos_token_id,
        pad_token_id=hf_tokenizer.pad_token_id,
        suppress_tokens=[hf_tokenizer.pad_token_id],
    )
    completions = out[:, batch["input_ids"].shape[1] :]
    # El relleno tras el «.» lo quita el decodificador del curso, que conserva
    # el «.» (skip_special_tokens=True se llevaría también el token de fin)
    return course_tokenizer.decode_batch(completions)
