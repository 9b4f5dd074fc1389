"""Qué tema lleva cada módulo del curso: la tabla, escrita una sola vez.

Un módulo (``"04_lineas_base"``) es una carpeta de ``solutions/`` y un
cuaderno; su tema (``"baselines"``) es el nombre que lleva en todas partes:
``helpers/<tema>.py`` (o el paquete de sus referencias), ``helpers/checks/
<tema>.py``, ``helpers/widgets/<tema>.py`` y ``tests/banks/<tema>.py``. Los
nombres de tema no siempre traducen el del módulo (``05_actor_critico`` →
``actor_critic``, ``08_mas_alla`` → ``mas_alla``), así que no se deducen: se
leen de aquí.

Este módulo no importa nada: lo usan el resumen de progreso
(``helpers.checks``), ``autograder`` y las pruebas sin cargar NumPy ni las
comprobaciones.
"""

from __future__ import annotations

#: Módulo del curso → su tema, en el orden del curso.
TOPICS: dict[str, str] = {
    "01_bandidos": "bandits",
    "02_dqn": "dqn",
    "03_reinforce": "reinforce",
    "04_lineas_base": "baselines",
    "05_actor_critico": "actor_critic",
    "06_ppo": "ppo",
    "07_grpo": "grpo",
    "08_mas_alla": "mas_alla",
    "09_puente": "puente",
    "10_preferencias": "preferencias",
    "11_practica": "practica",
    "12_oraculo": "oraculo",
}


def topic(module_id: str) -> str | None:
    """El tema de ``module_id`` (``"06_ppo"`` → ``"ppo"``); ``None`` si no es
    un módulo del curso."""
    return TOPICS.get(module_id)


def module_of(topic_name: str) -> str | None:
    """El módulo cuyo tema es ``topic_name`` (``"ppo"`` → ``"06_ppo"``)."""
    return next((m for m, t in TOPICS.items() if t == topic_name), None)
