"""Numbers in text output: the one formatter of equities, ppg, intervals and differences that never prints a negative
zero (``-0.000``), :func:`figure`; the note of a play valued at another depth than asked, :func:`ply_note`."""

from __future__ import annotations

__all__ = ["figure", "ply_note"]


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


def ply_note(ply: int, asked: int) -> str:
    """The note that follows a ranked play's line in a hint (``bgbot move``, ``bgbot play``'s ``hint``) when the play
    was valued at ``ply`` rather than the ``asked`` depth (a play the move filter dropped keeps its 0-ply value, as GNU
    Backgammon's hint labels each play's depth): ``"  [0-ply: outside the move filter]"``, or ``""`` at the asked depth.

    >>> ply_note(0, 2), ply_note(2, 2)
    ('  [0-ply: outside the move filter]', '')
    """
    return "" if ply == asked else f"  [{ply}-ply: outside the move filter]"
