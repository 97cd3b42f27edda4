"""Numbers in text output: the one formatter of equities, ppg, intervals and differences that never prints a negative
zero (``-0.000``), :func:`figure`."""

from __future__ import annotations

__all__ = ["figure"]


def figure(value: float, spec: str) -> str:
    """``format(value, spec)``, except that a negative value that rounds to zero at the spec's precision prints as zero
    (``+0.000``, ``0.000``, ``+0.00%``), never ``-0.000``; the width, alignment and sign rule of ``spec`` are kept.

    Args:
        value: a float (an equity, a ppg, an interval end, a difference, a probability).
        spec: a format specification for floats (``"+.3f"``, ``"+7.3f"``, ``".2%"``, ...).

    Returns:
        The text.

    >>> figure(-0.0004, "+.3f"), figure(-0.0004, ".3f"), figure(-0.00004, "+7.2%"), figure(-0.0006, "+.3f")
    ('+0.000', '0.000', ' +0.00%', '-0.001')
    """
    text = format(value, spec)
    if "-" in text and not any(c in "123456789" for c in text):
        return format(0.0, spec)
    return text
