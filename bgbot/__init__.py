"""bgbot: a backgammon bot with a numpy-vectorised move generator and a self-play-trained value network.

The library is grouped by job, lowest layer first (``docs/ARCHITECTURE.md``): :mod:`bgbot.rules` (board, dice, cube
and match state, outcomes, move generation), :mod:`bgbot.formats` (Position ID, Match ID, XGID, notation, .mat),
:mod:`bgbot.evaluation` (encodings, networks, checkpoints, pubeval, search), :mod:`bgbot.cube` (match equity, cube
decisions), :mod:`bgbot.arena` (players, the game engine, tournaments, the gate), then the interfaces
(:mod:`bgbot.api`, :mod:`bgbot.cli`). The public API is re-exported here lazily, so ``import bgbot`` stays light and
only a name that needs torch (``bgbot.Bot``) imports it.

>>> import bgbot
>>> bgbot.legal_plays("4HPwATDgc/ABMA", "31")[0].play
'24/23 24/21'
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Bot": "bgbot.api",
    "Probabilities": "bgbot.api",
    "RankedPlay": "bgbot.api",
    "legal_plays": "bgbot.formats.plays",
    "LegalPlay": "bgbot.formats.plays",
    "parse_position": "bgbot.formats.context",
    "CubeState": "bgbot.rules.state",
    "MatchState": "bgbot.rules.state",
    "CubeDecision": "bgbot.cube.decision",
    "BgbotError": "bgbot.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    """Import a re-exported name on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bgbot' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
