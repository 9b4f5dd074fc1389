"""Las cuatro reglas con que se compara una cifra guardada con la recalculada."""

from helpers import seeding


def test_a_float_figure_admits_only_the_last_digits():
    assert seeding.same_figure(0.0858912467956543, 0.08589126169681549)
    assert not seeding.same_figure(0.0858, 0.0859)
    # relativa por encima de 1
    assert seeding.same_figure(1234.5, 1234.5 * (1 + 0.5 * seeding.FLOAT_TOLERANCE))


def test_a_sampled_fraction_admits_a_few_answers_and_no_more():
    margin = seeding.SAMPLED_ANSWERS_MARGIN
    assert seeding.same_sampled_fraction(0.5, 0.5 + margin / 1024, 1024)
    assert not seeding.same_sampled_fraction(0.5, 0.5 + (margin + 1) / 1024, 1024)


def test_a_trained_fraction_admits_its_margin_and_no_more():
    margin = seeding.TRAINED_FRACTION_MARGIN
    # lo medido con los núcleos genéricos (51 de 4096 pares) cabe
    assert seeding.same_trained_fraction(0.829345703125, 0.841796875)
    assert seeding.same_trained_fraction(0.8, 0.8 - margin)
    assert not seeding.same_trained_fraction(0.8, 0.8 + margin + 0.001)
    # y es más ancho que el de las respuestas muestreadas de un mismo modelo
    assert margin > seeding.SAMPLED_ANSWERS_MARGIN / 256


def test_a_near_chance_fraction_admits_its_margin_and_no_more():
    margin = seeding.NEAR_CHANCE_MARGIN
    # lo medido con los núcleos genéricos en un Intel Xeon (33 de 512 pares)
    assert seeding.same_near_chance_fraction(0.533203125, 0.59765625)
    assert not seeding.same_near_chance_fraction(0.55, 0.55 + margin + 0.001)
    # ese cambio no cabe en el margen de una cifra entrenada
    assert not seeding.same_trained_fraction(0.533203125, 0.59765625)
