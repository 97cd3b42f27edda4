"""The one base class of every error bgbot raises for bad input: the command line reports a :class:`BgbotError` as one
``error: ...`` line with exit status 2; any other exception is a bug and keeps its traceback."""

from __future__ import annotations


class BgbotError(ValueError):
    """Bad input or an unusable state, with a message that names what is wrong (a malformed ID, impossible dice, an
    illegal play, a corrupt checkpoint, a bad request). A ``ValueError``, so that callers catching that keep working."""
