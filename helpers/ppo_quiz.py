"""Módulo 06 · El cuestionario de PPO: las preguntas y su corrección.

Cuatro preguntas de opción múltiple sobre el gradiente de política y PPO. Las
respuestas correctas **no** están escritas aquí: solo se guarda una huella
(SHA-256 con sal) de cada letra correcta, y la explicación de cada opción va
cifrada con una clave que se deriva de esa misma opción. Para leer por qué una
opción es buena o mala hay que elegirla: en el formulario
(``helpers.widgets.ppo.QuizForm``) o en las celdas calificadas del cuaderno
(``helpers.checks.ppo.check_quiz_answer``).

Aquí solo están los datos y la corrección (``grade``, ``explanation``...), sin
vista: las pruebas los manejan sin navegador.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

_SALT = "rl-para-llms/06_ppo/cuestionario"
LETTERS = ("a", "b", "c", "d")


@dataclass(frozen=True)
class Question:
    """Una pregunta: enunciado, cuatro opciones y lo necesario para corregirla.

    Attributes:
        key: identificador corto (``"q1"``...).
        text: el enunciado.
        choices: las cuatro opciones, en el orden de ``LETTERS``.
        correct_digest: la huella de la letra correcta.
        explanations: la explicación de cada opción, cifrada (base64).
    """

    key: str
    text: str
    choices: tuple[str, str, str, str]
    correct_digest: str
    explanations: tuple[str, str, str, str]


def digest(key: str, letter: str) -> str:
    """La huella SHA-256 (con sal) de la opción ``letter`` de la pregunta ``key``."""
    return hashlib.sha256(f"{_SALT}|{key}|{letter}".encode()).hexdigest()


def _keystream(key: str, letter: str, n: int) -> bytes:
    seed = hashlib.sha256(f"{_SALT}|{key}|{letter}|texto".encode()).digest()
    blocks, counter = [], 0
    while sum(map(len, blocks)) < n:
        blocks.append(hashlib.sha256(seed + counter.to_bytes(4, "big")).digest())
        counter += 1
    return b"".join(blocks)[:n]


def encrypt(key: str, letter: str, text: str) -> str:
    """Cifra ``text`` con la clave de la opción (para escribir el cuestionario)."""
    raw = text.encode()
    stream = _keystream(key, letter, len(raw))
    return base64.b64encode(
        bytes(a ^ b for a, b in zip(raw, stream, strict=True))
    ).decode()


def decrypt(key: str, letter: str, blob: str) -> str:
    """Descifra la explicación de la opción ``letter`` de la pregunta ``key``."""
    raw = base64.b64decode(blob)
    stream = _keystream(key, letter, len(raw))
    return bytes(a ^ b for a, b in zip(raw, stream, strict=True)).decode()


def normalize(answer: object) -> str | None:
    """La letra de una respuesta (``"B"``, ``" b) "``...), o ``None`` si no es una."""
    if not isinstance(answer, str):
        return None
    letter = answer.strip().lower().rstrip(").").strip()
    return letter if letter in LETTERS else None


# --- las preguntas (generadas por el guion del módulo; no editar a mano) ----
# BEGIN QUESTIONS
QUESTIONS: tuple[Question, ...] = (
    Question(
        "q1",
        (
            "¿Qué hace la recompensa R_t dentro del estimador del "
            "gradiente de REINFORCE?"
        ),
        (
            ("Es el objetivo de una regresión: la red aprende a predecirla."),
            (
                "Es un factor de escala: dice cuánto, y en qué sentido, "
                "empujar la log-probabilidad de la acción tomada."
            ),
            "Es la dirección del paso en el espacio de parámetros.",
            "Solo decide el signo del paso; su tamaño da igual.",
        ),
        "2ceb63d246a3ff91349496a25d8c4e7e58b2320b5e20f514babf0fd8fa7d311f",
        (
            (
                "cXQliDmDfpgGzosD7irKW6Zp2rIIdHSitnfUEYyTr/7L5QxrqWi30mVH"
                "HRk+UkWqSO3XhN2z0TCI2h4pC+Vd+tJ1yd3R9Ixm5vK0WVyMG7ucGZtY"
                "YdQLM57LpOTHLsVExKQYCZaI2rqXHrsLEcRpNSc6kMpcQh+ZO2CJ97dw"
                "b4hntef6Rx5cWs5hwb4h6kBsgOg="
            ),
            (
                "xWEbF/lOXdrO/Dm6YTz+FEURTz8+37Ly4h+Z46Q6FG3FowFCeiOq0Fua"
                "rzRRyd34KnQaTuXKd4WrH993myl8A4VWh6OAwVnFoeasPRytVtyy/ZID"
                "3ZVSs5Rt3ILxNl02HMgp/MVDcOJcHErBm6nxjaJtIBbG5AeIT9vNnFT2"
                "XWWdReoeKuUC84cABfFJL7/z2WqUg/6Ihjhy/U79PHuBWCfov0L5zi0y"
                "fwOgrQzQ5l3YOpy+08bs"
            ),
            (
                "l2aL1ze9FolX+FjINOZRfBOY1+aSHVu3XIgxS5FJHoWv0Dq0hm/TqJFJ"
                "qrAal0bAC9NKVe+VdJ5Xt898ZKkTpws5L6FGmjfLJj7AQgx1kz0IEvgR"
                "bGQLdU62vU9+1thWWUdb9G2PtJ56bjd+f2ihxQ=="
            ),
            (
                "PSCyyNm4f6dAY4Y4b2v8o4zEEPPHiUtra8aHiYqNiJ37TukFXHC9tWPf"
                "P8JeF/o7fgN+DkzNCRguBVQ1IzLAaBxf/ChCGTjoPD2HXXRPemwXTWn7"
                "NhttIvQDRLZOEaRW9jh8ZD9yiLOUzchjglLFoO61xwwCjlbzfXf63gS3"
                "RlGsEn1ih3vy"
            ),
        ),
    ),
    Question(
        "q2",
        ("¿Por qué restamos una línea base a la recompensa para calcular la ventaja?"),
        (
            (
                "Para que el gradiente sea exactamente cero cuando la "
                "política ya es óptima."
            ),
            ("Porque corrige el gradiente esperado hacia una dirección mejor."),
            (
                "Para reducir la varianza sin sesgar el gradiente: la "
                "señal pasa a ser «mejor o peor de lo esperado»."
            ),
            "Para que todas las recompensas sean positivas.",
        ),
        "cfa788f2ed01d061afe1628ca97f458c25fc2b75a977febf38a7037863bf8867",
        (
            (
                "jbfpWHN8NMqPypS23p8WuXZomQAko8wjzRL2tJoGgqr8Ij2Vp56fsG7a"
                "YBOCsIIZ9wBvy2RjvqE4eHB8HFYVJ9SwSqdv+ll9nAm9H06qYCyQQE3G"
                "cHxDAUDVDyq4OsdK5QC0nSHXLzBVWoEwcLkdM69z03A3sUVLpw=="
            ),
            (
                "+wLRPhtu2N1055CUDpz06eSMH9mNQWU3LcMgoA7kSZWWraLR02tm3YZW"
                "uidoWfOgyfbo9x5Peuqv+agPYAGeKsW8lK/cPzhweVbDdkpWqGsRz2Zr"
                "xpqzRv0dt+Ybw4+KGrBZbmb/AGT4VXA25hKfAgI7V1CWOcsAZ1nAakNz"
                "5cg7DKTHk+iHdA=="
            ),
            (
                "EzXV+GMSXlVUBZgdKMbcBZFB4ehHikrlQJzqRlmcxcSCitf7y9O1JE5F"
                "eBroi3SXwidgIxpCwB3JRpx8w1KZd3b62Fobx2vWBt1TgC9zgcuMJqrz"
                "czngfB8b5VMjjtWCHGQaIwqgoTFBtkPRIXzlFCy0KfZAhxzGfacCEdqQ"
                "lmdblhcFD+SW4yB8gt9aKDJ7Tt0vlnBKw3s7zIE3+trX/TtqoiWAMYor"
                "y5N+yBG9qH8t2ttuu5wmBfA5Xdy5Fi9i+3scrLJD7y+Ll3B9"
            ),
            (
                "2R615DSOdoQX4diO3BuLjksRBqJnCq0DPsDCAxPBEfX8O2w8R7mJv9X2"
                "hdzd0AzYpfRFFf2xCWxv0D+LOhw/VVFMgy9HVeuxwl3Dlj5/R5ROkwUV"
                "G124sLqTDWLbqKVXcz5RZO4hcmEv1xLtwvwjZVlh1NzbQDA="
            ),
        ),
    ),
    Question(
        "q3",
        ("Con A_t > 0, ¿qué ocurre en L^CLIP cuando el cociente r_t ya pasa de 1 + ε?"),
        (
            (
                "El término recortado se satura en (1 + ε)·A_t, el min se"
                " queda con él y ya no hay gradiente que empuje r_t más "
                "arriba."
            ),
            "El gradiente cambia de signo y devuelve r_t hacia 1.",
            ("La pérdida se hace infinita y la actualización se descarta."),
            "Nada: el recorte solo actúa cuando A_t < 0.",
        ),
        "49225c9dc89537a96c0031c6c291e4081cfc854890d18d2390987930047d5da0",
        (
            (
                "7Qap/gB5pKzdoyyoR+7H9/aWmw+rRKjyXCtD1lkIxz4M0/qjD4QAzWML"
                "G2dCi8u2uel2zjUKWTr3azmQ8xFwlVSO8wBHh4mmcs1iVBlB6Mc/oZhh"
                "5QZOmnisVJS67SIOrBVfLex7g+TeGe6CfBMoUxO4xnPyd52kkkpmgmwq"
                "TRPYXzV8gaSGx5WSBTbjMoXvR+LQThIHd29pf74q5Up6UGwFtzdlZn5G"
                "OI9aYfJEBKdxUUV4Z1LxmVBr68vebd3KydlOn/XvIh02YK7AEaE78Hx6"
                "OPzjLjGdgzJYUQW3IuQd7CNgOVATHnsBTDyF2NP0CLfkMA=="
            ),
            (
                "rkIWzXnPwq9jQIGV2UXn8ymm11U+uq9PUpsxUeYZKq0ssJUIPV1ayG/S"
                "5AEbtQHVku7/yAGa/agNVTHdGxdP5wKF60Duv78t6HbrASJRVleYozFX"
                "unarav/dwLm07covkHyZA5o="
            ),
            (
                "FMv+gaJMojBn+x5aMRd9oA4CFWGkvPKtoRB8lkM0QNSYrBX0vXjPjOTR"
                "jIOchWTfZenWWv4uOfawuUNeZR1nXJesZiE9Hn5rJhlRoVCHNDMa8GID"
                "/A+xDIlCYkwKCXXsjfLGs55CbybpXTxNZ00aQQf/7GhR09XSbLnZ7JZv"
                "Y9myaSijeBFpFJNFfYYDY2HE+B3KCsECJri5njmaYqO0"
            ),
            (
                "xUwQuCCjbPUBh9xzmNbvabqQkw0Ba7509Ejt/Z4HMgOdDJLa9E0pV3lj"
                "9TyNeieeJMliYjww6LgN5W9DPWSduhZZUe8HhL8fDPA1a+8jO2UlE69Y"
                "4LOFIDF9qwRJd4c02EAa3Zcsw09GmK/HVQlWTsg9"
            ),
        ),
    ),
    Question(
        "q4",
        (
            "¿Por qué PPO ejecuta varias épocas de gradiente sobre el"
            " mismo lote de trayectorias?"
        ),
        (
            (
                "Porque las ventajas se recalculan en cada época y cada "
                "pasada las hace menos ruidosas."
            ),
            (
                "Porque PPO es off-policy y puede reutilizar datos de "
                "cualquier política antigua."
            ),
            ("Para que el crítico termine de aprender antes de tocar el actor."),
            (
                "Por eficiencia de datos: las trayectorias son caras, y "
                "el recorte impide que varias pasadas alejen demasiado la"
                " política de la que las generó."
            ),
        ),
        "74c8282db1ff08c9e69e98d0c803e307ec034e1caf690c2c5aadc53f5346a4cb",
        (
            (
                "v2kkQh7wWQh1eTzW+gaKdoTnzef+MzrYM86Aj0zJmtEego3oSyH7VtBg"
                "oahdyBPejofqbdmml7DI6zYw2di/MZFhdnpBWz1+Rv/0JeuUhlBqyVdO"
                "t7P0/KH0OubZsWGpV8jc/3JixBggxL2bOnbfsA=="
            ),
            (
                "HBmgcce//ya619EavZA7sepeCDuxN1qrba+lykinps13O3VKrV3Yq2sy"
                "YaDTb3tnvc3vV9H1w0Bp9fTvKXrzR8t/OLOEYi2rAnuoiCkDMQkSyXgG"
                "zLXzBg/ON7p00+kjoA6doqBrQqvcax/kl05KKPFPVKvqmup0q6OR3WSI"
                "t10/E4XRFg/0+WTqTp5zMiqtApc1T4s46NDlIA=="
            ),
            (
                "9p7RPJk2GbObl4LTbPRC0HBMeBLErWvxY2ayj6JFRqC37d2EhQhg0u16"
                "wPIF+5Ve4ZYkQ3AYE/zaGZqpnPS/5oY/dP+fmYu1FsBp4N3jFf7clQ=="
            ),
            (
                "foj06hextPsSre7WBkw5hhm0Kb6urAlrXKDhIqGdZRldC6KHL0aOFRzb"
                "2HSRRsBPbEm/GP6U2C8Y1ENNoKiEoFBMRTOcNK5ppeX01pQq3ui+9Wen"
                "t12qpMftZeVrbsDj4RrHsMkA5MV8p6wmRhj2v1Zx+N4BVOGVktE0cZvG"
                "Q7C+sPtHqW/k3q/h4aS5N1YQhCXQwX7NYACYbghZL2Fv8Z+jBcNlJsTK"
                "7Hx7RvT7sKM0zSFB0NQPWzNCoqgDLPLr9w=="
            ),
        ),
    ),
)
# END QUESTIONS


def question(number: int) -> Question:
    """La pregunta ``number`` (de 1 a 4)."""
    if not 1 <= number <= len(QUESTIONS):
        raise ValueError(f"Solo hay preguntas de la 1 a la {len(QUESTIONS)}.")
    return QUESTIONS[number - 1]


def grade(number: int, answer: object) -> bool:
    """¿Es ``answer`` la opción correcta de la pregunta ``number``?"""
    letter = normalize(answer)
    q = question(number)
    return letter is not None and digest(q.key, letter) == q.correct_digest


def explanation(number: int, answer: object) -> str:
    """Por qué la opción ``answer`` de la pregunta ``number`` es buena o mala."""
    letter = normalize(answer)
    if letter is None:
        raise ValueError(f"{answer!r} no es una de las letras a, b, c, d.")
    q = question(number)
    return decrypt(q.key, letter, q.explanations[LETTERS.index(letter)])


def diagnose(number: int, answer: object) -> str | None:
    """``None`` si ``answer`` es la respuesta de la pregunta ``number``; si no, por qué.

    Lo usa la comprobación calificada (:func:`helpers.checks.ppo.check_quiz_answer`).
    """
    if answer is None or answer is Ellipsis:
        return (
            f"Todavía no has respondido la pregunta {number}: asigna la letra de tu "
            'respuesta, por ejemplo "a".'
        )
    letter = normalize(answer)
    if letter is None:
        return (
            f"La respuesta debe ser una de las letras a, b, c o d (un str); "
            f"recibí {answer!r}."
        )
    if not grade(number, letter):
        return f"«{letter}» no es la respuesta. {explanation(number, letter)}"
    return None
