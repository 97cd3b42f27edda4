"""Match equity tables (MET): the chance to win a match from a score, before and after the Crawford game.

Public API::

    MatchEquityTable(name, source, pre_crawford, post_crawford)     # frozen dataclass
    MatchEquityTable.from_json(path) -> MatchEquityTable
    MatchEquityTable.mwc(away_me, away_opp, post_crawford=False) -> float
    MatchEquityTable.max_length -> int
    kazaross_xg2() -> MatchEquityTable                               # the default table, cached (25 points)
    kazaross_xg2_extended() -> MatchEquityTable                      # extended to 64 points as GNU Backgammon does
    METError(ValueError)

Scores are given as "points away" (points still needed to win the match): ``away <= 0`` means that side has already
won. The table is pluggable: :mod:`bgbot.cube.decision` takes any :class:`MatchEquityTable`; the default is Kazaross-XG2,
shipped as package data ``bgbot/data/met_kazaross_xg2.json`` (Neil Kazaross 2011, distributed with GNU Backgammon as
``met/Kazaross-XG2.xml``; its notice permits copying and distribution).

Longer matches: :func:`kazaross_xg2_extended` is the same table extended to 64-away by GNU Backgammon's own
extrapolation (``ExtendMET`` in matchequity.c, which gnubg applies to every table shorter than its MAXSCORE of 64),
shipped as ``bgbot/data/met_kazaross_xg2_gnubg64.json`` and written by ``scripts/gnubg_met_extension.py`` from
``gnubg -t`` ``show matchequitytable 64``; within 25 points it is Kazaross-XG2 itself. Matches over 64 points are refused.

Which table a lookup uses follows GNU Backgammon's ``getME``/``getMEMultiple`` (matchequity.c): once either side is
1-away (the Crawford game or post-Crawford play), every later score is read from the post-Crawford table; before that,
from the pre-Crawford table, whose 1-away row is the equity at the start of the Crawford game.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from bgbot.errors import BgbotError


class METError(BgbotError):
    """A match equity table file that is malformed, or a score outside the table."""


@dataclass(frozen=True)
class MatchEquityTable:
    """A match equity table, match winning chance (0..1) of the first-named side.

    Attributes:
        name: human-readable name.
        source: where the numbers come from.
        pre_crawford: ``(L, L)`` float64, ``[i, j]`` = chance that the side ``i + 1`` away wins against a side
            ``j + 1`` away, cube centred at 1, before the Crawford game (row 0 = at the start of the Crawford game).
        post_crawford: ``(L,)`` float64, ``[j]`` = chance that the trailer ``j + 1`` away wins against a leader who is
            1-away, after the Crawford game.
    """

    name: str
    source: str
    pre_crawford: np.ndarray = field(repr=False)
    post_crawford: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        pre = np.asarray(self.pre_crawford, dtype=np.float64)
        post = np.asarray(self.post_crawford, dtype=np.float64)
        if pre.ndim != 2 or pre.shape[0] != pre.shape[1] or post.shape != (pre.shape[0],):
            raise METError(
                f"MET {self.name!r}: pre-Crawford must be (L, L) and post-Crawford (L,), "
                f"got {pre.shape} and {post.shape}"
            )
        if np.any((pre < 0) | (pre > 1)) or np.any((post < 0) | (post > 1)):
            raise METError(f"MET {self.name!r}: match winning chances must lie in [0, 1]")
        pre.setflags(write=False)
        post.setflags(write=False)
        object.__setattr__(self, "pre_crawford", pre)
        object.__setattr__(self, "post_crawford", post)

    @classmethod
    def from_json(cls, path: str | Path) -> MatchEquityTable:
        """Read a table in the layout of ``bgbot/data/met_kazaross_xg2.json`` (keys name, source, pre_crawford.table,
        post_crawford.table). Raises :class:`METError` on a malformed file."""
        try:
            data = json.loads(Path(path).read_text())
            return cls(
                name=data["name"],
                source=data["source"],
                pre_crawford=np.array(data["pre_crawford"]["table"], dtype=np.float64),
                post_crawford=np.array(data["post_crawford"]["table"], dtype=np.float64),
            )
        except (OSError, KeyError, TypeError, json.JSONDecodeError) as err:
            raise METError(f"cannot read a match equity table from {str(path)!r}: {err}") from err

    @property
    def max_length(self) -> int:
        """The longest match the table covers, in points."""
        return int(self.pre_crawford.shape[0])

    def mwc(self, away_me: int, away_opp: int, post_crawford: bool = False) -> float:
        """Match winning chance of "me" when I need ``away_me`` points and the opponent ``away_opp``.

        ``post_crawford`` selects the post-Crawford table (set it when the game being valued is the Crawford game or
        later, i.e. when either side was already 1-away at the start of it). ``away <= 0``: that side has won (a side
        with away <= 0 wins; me first).

        Raises:
            METError: a score beyond the table.
        """
        if away_me <= 0:
            return 1.0
        if away_opp <= 0:
            return 0.0
        n = self.max_length
        if away_me > n or away_opp > n:
            raise METError(f"score {away_me}-away, {away_opp}-away is beyond the {n}-point table {self.name!r}")
        if post_crawford and (away_me == 1 or away_opp == 1):
            if away_me == 1:
                return 1.0 - float(self.post_crawford[away_opp - 1])
            return float(self.post_crawford[away_me - 1])
        return float(self.pre_crawford[away_me - 1, away_opp - 1])


@functools.cache
def kazaross_xg2() -> MatchEquityTable:
    """The Kazaross-XG2 table shipped with bgbot (package data ``bgbot/data/met_kazaross_xg2.json``)."""
    ref = resources.files("bgbot").joinpath("data/met_kazaross_xg2.json")
    with resources.as_file(ref) as path:
        return MatchEquityTable.from_json(path)


EXTENDED_LENGTH = 64
"""The longest match bgbot plays at a score: GNU Backgammon's MAXSCORE."""


@functools.cache
def kazaross_xg2_extended() -> MatchEquityTable:
    """Kazaross-XG2 extended to 64 points by GNU Backgammon's extrapolation (package data
    ``bgbot/data/met_kazaross_xg2_gnubg64.json``; see the module docstring)."""
    ref = resources.files("bgbot").joinpath("data/met_kazaross_xg2_gnubg64.json")
    with resources.as_file(ref) as path:
        return MatchEquityTable.from_json(path)
