"""bgbot.formats.figures.figure: numbers in text output never print a negative zero."""

import pytest

from bgbot.formats.figures import figure


@pytest.mark.parametrize(
    "value,spec,text",
    [
        (-0.0004, "+.3f", "+0.000"),
        (-0.0, "+.3f", "+0.000"),
        (-0.0004, ".3f", "0.000"),
        (-0.0004, "+7.3f", " +0.000"),
        (-0.00004, "+.2%", "+0.00%"),
        (-0.00004, "+8.4f", " +0.0000"),
        (-0.04, "+.1f", "+0.0"),
        (-0.0006, "+.3f", "-0.001"),
        (-1.5, "+7.3f", " -1.500"),
        (0.0004, "+.3f", "+0.000"),
        (2.25, ".2f", "2.25"),
    ],
)
def test_a_value_rounding_to_zero_prints_as_zero(value, spec, text):
    assert figure(value, spec) == text
