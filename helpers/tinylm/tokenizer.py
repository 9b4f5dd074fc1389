"""Tokenizador de caracteres para el alfabeto de la aritmética.

Nuestro modelo de lenguaje no lee palabras sino caracteres sueltos: cada
carácter es un token. El alfabeto es diminuto:

    dígitos 0-9, «×», «+», «=», el punto final «.» y el relleno.

El punto final es el *token de fin*: el modelo lo escribe cuando da por
terminada su respuesta (``17×24=17×20+17×4=340+68=408.``). El relleno no es
un carácter que se pueda escribir: solo sirve para igualar la longitud de
las secuencias de un lote, y ``decode`` lo omite.

Ejemplo::

    >>> tok = CharTokenizer()
    >>> tok.encode("17×24=")
    [2, 8, 11, 3, 5, 13]
    >>> tok.decode([2, 8, 11, 3, 5, 13])
    '17×24='
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

PAD = "_"  # relleno: nunca forma parte de un texto
END = "."  # token de fin: «he terminado mi respuesta»
ALPHABET = "0123456789×+=" + END  # lo que el modelo puede escribir

# Pistas para los despistes más frecuentes al escribir un enunciado.
_HINTS = {
    "x": "para multiplicar usa «×» (no la letra x)",
    "X": "para multiplicar usa «×» (no la letra X)",
    "*": "para multiplicar usa «×» (no el asterisco)",
    " ": "escribe sin espacios, p. ej. «17×24=»",
}


class CharTokenizer:
    """Convierte texto en identificadores de token y viceversa.

    El identificador 0 es el relleno; después vienen los caracteres de
    ``ALPHABET`` en orden, así que ``"0"`` es el 1, ``"1"`` el 2, etc.
    """

    def __init__(self) -> None:
        self.itos: list[str] = [PAD, *ALPHABET]  # id -> carácter
        self.stoi: dict[str, int] = {ch: i for i, ch in enumerate(self.itos)}
        self.pad_id: int = self.stoi[PAD]
        self.end_id: int = self.stoi[END]

    @property
    def vocab_size(self) -> int:
        """Número de tokens distintos (relleno incluido)."""
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        """Texto -> lista de ids, un id por carácter.

        Lanza ``ValueError`` con un mensaje en español si aparece un carácter
        que no está en el alfabeto (el relleno tampoco se admite en un texto).
        """
        ids = []
        for position, ch in enumerate(text):
            if ch == PAD or ch not in self.stoi:
                hint = _HINTS.get(ch, f"el alfabeto es «{ALPHABET}»")
                raise ValueError(
                    f"El carácter {ch!r} (posición {position} de {text!r}) no está "
                    f"en el alfabeto del modelo: {hint}."
                )
            ids.append(self.stoi[ch])
        return ids

    def decode(self, ids: Iterable[int] | torch.Tensor) -> str:
        """Lista (o tensor 1-D) de ids -> texto. El relleno se omite.

        Lanza ``ValueError`` si algún id no existe en el vocabulario.
        """
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        chars = []
        for i in ids:
            if not 0 <= i < self.vocab_size:
                raise ValueError(
                    f"El id {i} no existe: el vocabulario va de 0 a "
                    f"{self.vocab_size - 1}."
                )
            if i != self.pad_id:
                chars.append(self.itos[i])
        return "".join(chars)

    def encode_batch(self, texts: list[str], length: int | None = None) -> torch.Tensor:
        """Varios textos -> tensor ``(N, length)`` de ids, rellenado a la derecha.

        Si ``length`` es ``None`` se usa la longitud del texto más largo.
        """
        encoded = [self.encode(t) for t in texts]
        longest = max((len(e) for e in encoded), default=0)
        length = longest if length is None else length
        if longest > length:
            raise ValueError(
                f"Un texto tiene {longest} caracteres y no cabe en {length}."
            )
        batch = torch.full((len(texts), length), self.pad_id, dtype=torch.long)
        for row, e in enumerate(encoded):
            batch[row, : len(e)] = torch.tensor(e, dtype=torch.long)
        return batch

    def decode_batch(self, ids: torch.Tensor) -> list[str]:
        """Tensor ``(N, T)`` de ids -> lista de N textos (sin relleno)."""
        return [self.decode(row) for row in ids.tolist()]


# Una única instancia compartida: el alfabeto no cambia nunca.
tokenizer = CharTokenizer()
