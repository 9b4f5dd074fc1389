"""Números en español: coma decimal, miles con espacio fino, signo menos."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import torch

import helpers
from helpers import formatting

T = formatting.THIN_SPACE


@pytest.mark.parametrize(
    ("x", "decimals", "expected"),
    [
        (0.7271, 3, "0,727"),
        (0.0, 2, "0,00"),
        (1234.5, 1, "1234,5"),
        (16384, 0, f"16{T}384"),
        (1234567.891, 2, f"1{T}234{T}567,89"),
        (-0.5, 1, "−0,5"),
        (-0.0001, 2, "0,00"),
        (2.5, 0, "2"),
        (np.float32(0.25), 2, "0,25"),
        (torch.tensor(3.0), 1, "3,0"),
        (float("nan"), 2, "NaN"),
    ],
)
def test_number(x, decimals, expected):
    assert helpers.number(x, decimals) == expected


def test_signs_and_percent():
    assert helpers.number(25.9, 1, sign=True) == "+25,9"
    assert helpers.number(-3, 0, sign=True) == "−3"
    assert helpers.number(0.0, 1, sign=True) == "0,0"
    assert helpers.percent(0.756) == "75,6\u00a0%"
    assert helpers.percent(0.259, sign=True) == "+25,9\u00a0%"
    assert helpers.percent(1.0, 0) == "100\u00a0%"


def test_docstring_examples():
    assert doctest.testmod(formatting).failed == 0
