"""El banco de pruebas del curso: ``make bench`` y ``python -m benchmarks``.

Mide lo que el curso promete, no lo afirma:

* :mod:`benchmarks.notebooks`: tiempo y memoria de cada cuaderno de solución;
* :mod:`benchmarks.cartpole`: los agentes de CartPole junto a Stable-Baselines3;
* :mod:`benchmarks.grading`: cuánto tarda calificar una clase entera;
* :mod:`benchmarks.report`: todo lo anterior y GRPO, escrito en BENCHMARKS.md.

No forma parte del curso que usan los estudiantes: solo lo importa quien mide.
"""
