"""What a tournament is asked to play, checked before anything is played: the limits of a tournament (games, seeds,
workers), :class:`TournamentSettings` (every field's range checked when it is made), :func:`check_settings` (the
players against the settings) and :func:`check_variants` (the rule variants, shared with the chouette).

Part of :mod:`bgbot.arena.tournament`, which re-exports every public name here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgbot.arena.chunks import TournamentError
from bgbot.errors import is_int

__all__ = [
    "MAX_GAMES",
    "MIN_GAMES",
    "MAX_SEED",
    "MAX_WORKERS",
    "FORCE_WITH_RESUME",
    "TournamentSettings",
    "check_settings",
    "check_variants",
]

MAX_GAMES = 10_000_000
"""Most games (or matches) per pairing: results are held in memory (about 40 bytes a game), and at a few hundred games
a second this is already days of play; more is refused up front."""
MIN_GAMES = 4
"""Fewest games per pairing (money play): two duplicate pairs, the fewest a t-interval of ppg can be computed from.
Matches need two (one duplicate pair): their interval is Wilson's, over matches."""
MAX_SEED = 2**63 - 1
"""Seeds are 0 .. 2**63 - 1 (they are hashed as 64-bit words)."""
MAX_WORKERS = 1024
"""Most worker processes."""
FORCE_WITH_RESUME = (
    "--force (delete an earlier tournament's files and start afresh) cannot be used with --resume (finish the "
    "tournament saved there): give one of them"
)
"""Why ``force`` and ``resume`` are refused together (by :class:`TournamentSettings` and the command line)."""


@dataclass(frozen=True)
class TournamentSettings:
    """How a tournament is played (:func:`bgbot.arena.tournament.play`), checked when it is made (every field's range
    below).

    Attributes:
        games: games per pairing, even (``games / 2`` duplicate pairs), :data:`MIN_GAMES` .. :data:`MAX_GAMES`
            (matches: 2 ..).
        seed: selects the dice (and the random player's choices), 0 .. :data:`MAX_SEED`.
        workers: processes, 1 .. :data:`MAX_WORKERS`; 1 plays in this process.
        out_dir: when given, the games are recorded and each pairing's ``.mat`` file is planned as
            ``out_dir/NN_A_vs_B.mat``; each work unit's games are saved in ``out_dir/chunks/`` as they finish.
        chunk_pairs: pairs per work unit, default :data:`bgbot.arena.tournament.CHUNK_PAIRS` (results do not depend
            on it only when players are deterministic functions of their input batch; keep the default to compare
            runs).
        cube: play cubeful money games (:mod:`bgbot.arena.cubeful`; ``jacoby`` sets the Jacoby rule).
        match_length: > 0 plays matches to that many points (cubeful, Crawford rule); ``games`` then counts matches
            and the ``.mat`` output is one file per match, ``out_dir/NN_A_vs_B_MMMM.mat``.
        jacoby: the Jacoby rule in cubeful money games.
        auto_doubles: money games with the cube only: the most automatic doubles a game may have (an opening tie
            doubles the centred cube), 0 = off.
        backgammon_value: 3, or 2 (backgammons count as gammons: scoring, cube decisions, checker play).
        ray: run the work units on Ray (an address or ``"local"``; :mod:`bgbot.arena.distributed`) instead of the
            process pool; the results are the same (apart from timing and the ``ray`` field).
        resume: take the units already saved in ``out_dir`` (the settings must be those saved there); needs
            ``out_dir``.
        progress: show a tqdm progress bar on stderr.
        force: a fresh tournament may use an ``out_dir`` that holds another tournament's files, which are deleted
            (:func:`bgbot.arena.tournament_store.claim_out_dir`; other files are kept); needs ``out_dir``, and not
            with ``resume``.

    Raises:
        TournamentError: ``games`` not an even integer in :data:`MIN_GAMES` .. :data:`MAX_GAMES` (2 .. for
            matches); ``seed`` outside 0 .. :data:`MAX_SEED`; ``workers`` outside 1 .. :data:`MAX_WORKERS`; an
            empty ``out_dir``; ``chunk_pairs`` not None or an integer >= 1; ``match_length`` not an integer >= 0;
            ``backgammon_value`` not 2 or 3; ``auto_doubles`` not an integer >= 0, or > 0 in match play or without
            the cube; ``resume`` or ``force`` without ``out_dir``; ``force`` with ``resume``.
    """

    games: int
    seed: int = 0
    workers: int = 1
    out_dir: str | Path | None = None
    chunk_pairs: int | None = None
    cube: bool = False
    match_length: int = 0
    jacoby: bool = True
    auto_doubles: int = 0
    backgammon_value: int = 3
    ray: str | None = None
    resume: bool = False
    progress: bool = False
    force: bool = False

    def __post_init__(self) -> None:
        games, match_length, out_dir = self.games, self.match_length, self.out_dir
        if not is_int(match_length) or match_length < 0:
            raise TournamentError(f"the match length must be an integer >= 0 (0 = money play), got {match_length!r}")
        least = 2 if match_length > 0 else MIN_GAMES
        if not is_int(games) or games < least or games % 2:
            raise TournamentError(
                f"games per pairing must be an even number >= {least} (duplicate pairs"
                + ("; two pairs at least for a confidence interval of ppg" if least > 2 else "")
                + f"), got {games!r}"
            )
        if games > MAX_GAMES:
            raise TournamentError(
                f"games per pairing must be at most {MAX_GAMES:,} (results are held in memory), got {games}"
            )
        if not is_int(self.seed) or not 0 <= self.seed <= MAX_SEED:
            raise TournamentError(f"the seed must be an integer in 0 .. 2**63 - 1, got {self.seed!r}")
        if not is_int(self.workers) or not 1 <= self.workers <= MAX_WORKERS:
            raise TournamentError(f"workers must be an integer in 1 .. {MAX_WORKERS}, got {self.workers!r}")
        if out_dir is not None and not str(out_dir).strip():
            raise TournamentError("the output directory is empty; give a directory name (or leave --out out)")
        if self.chunk_pairs is not None and (not is_int(self.chunk_pairs) or self.chunk_pairs < 1):
            raise TournamentError(
                f"chunk_pairs (duplicate pairs per work unit) must be an integer >= 1, got {self.chunk_pairs!r}"
            )
        check_variants(self.auto_doubles, self.backgammon_value, match_length)
        if self.auto_doubles and not self.cube:
            raise TournamentError("automatic doubles need the cube: add --cube (cubeful money games)")
        if self.resume and out_dir is None:
            raise TournamentError("resume finishes the tournament saved in an output directory: give its directory")
        if self.force and self.resume:
            raise TournamentError(FORCE_WITH_RESUME)
        if self.force and out_dir is None:
            raise TournamentError("--force deletes an earlier tournament's files in the output directory: give --out")


def check_settings(players: list, settings: TournamentSettings) -> None:
    """Refuse players a tournament cannot run with, before anything is played (the settings were checked when they
    were made, :class:`TournamentSettings`).

    Raises:
        TournamentError: fewer than two players; ``settings`` not a :class:`TournamentSettings`.
    """
    if len(players) < 2:
        raise TournamentError(f"a tournament needs at least two players, got {players!r}")
    if not isinstance(settings, TournamentSettings):
        raise TournamentError(f"the settings must be a TournamentSettings, got {type(settings).__name__}")


def check_variants(auto_doubles: int, backgammon_value: int, match_length: int = 0) -> None:
    """Refuse a backgammon value other than 2 or 3, automatic doubles that are not an integer >= 0, and automatic
    doubles in match play (they do not apply there), as :class:`TournamentError` (the chouette checks the same)."""
    if not isinstance(backgammon_value, (int, np.integer)) or backgammon_value not in (2, 3):
        raise TournamentError(
            f"the backgammon value must be 3 (the standard) or 2 (backgammons count as gammons), got {backgammon_value!r}"
        )
    if not is_int(auto_doubles) or auto_doubles < 0:
        raise TournamentError(
            f"automatic doubles must be an integer >= 0 (0 = off, 1 = the usual), got {auto_doubles!r}"
        )
    if auto_doubles and match_length:
        raise TournamentError("automatic doubles apply to money play only, not to matches (drop --auto-doubles)")
