"""Two tournaments with the same dice, compared game by game: the paired difference of the left player's ppg.

Two models that play the same checkers (a model and its copy with other cube nets, ``python -m training combine``)
against the same opponent with the same seed meet the same dice, and mostly the same games: the games differ only
where a cube decision differs. Comparing the two tournaments pair by pair (each duplicate pair's mean points) removes the
luck they share, so the interval of the difference is far narrower than either tournament's own::

    bgbot tournament --player A.pt --player gnubg:0 --games 40000 --cube --seed 32 --workers 2 --out runs/a
    bgbot tournament --player B.pt --player gnubg:0 --games 40000 --cube --seed 32 --workers 2 --out runs/b
    python scripts/paired_games.py runs/a/01_*.mat runs/b/01_*.mat

Each ``.mat`` file holds one pairing's games as ``bgbot tournament --out`` writes it (money games, the first-named
player on the left, duplicate pairs as consecutive games). Prints JSON: games, each file's ppg for its left player,
the mean difference (first minus second) per duplicate pair with its 95% Student-t interval, and the number of pairs
whose points differ.

Usage: ``python scripts/paired_games.py FIRST.mat SECOND.mat``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy import stats

from bgbot.errors import BgbotError, run_script
from bgbot.formats.matfile import read_match


def left_points(path: str) -> np.ndarray:
    """The left player's points in each game of the file ``path`` ``(G,)`` float64.

    Raises:
        bgbot.formats.matfile.MatFileError: the file is not a readable ``.mat`` file, or a game in it is unfinished.
        BgbotError: no such file, or a match (not money games).
    """
    file = Path(path)
    if not file.is_file():
        raise BgbotError(f"no game file at {path!r}")
    match = read_match(file.read_text(), path)
    if match.length:
        raise BgbotError(f"{path!r} is a {match.length}-point match; this compares money games")
    if any(g.game.winner not in (0, 1) for g in match.games):
        raise BgbotError(f"{path!r} holds an unfinished game")
    return np.array([g.game.points if g.game.winner == 0 else -g.game.points for g in match.games], dtype=np.float64)


def paired(first: np.ndarray, second: np.ndarray) -> dict:
    """The paired comparison of two tournaments' left-player points ``(G,)`` each, ``G`` even (duplicate pairs).

    Returns:
        ``{"games", "ppg_first", "ppg_second", "diff", "ci_low", "ci_high", "pairs_differing"}``: ``diff`` the mean
        over duplicate pairs of (first - second) pair means, its 95% Student-t interval.

    Raises:
        BgbotError: files of different lengths, an odd number of games, or fewer than two pairs.
    """
    if len(first) != len(second):
        raise BgbotError(f"the files hold {len(first)} and {len(second)} games: they must be the same games")
    if len(first) % 2 or len(first) < 4:
        raise BgbotError(f"a tournament of duplicate pairs holds an even number of games, at least 4; got {len(first)}")
    d = first.reshape(-1, 2).mean(axis=1) - second.reshape(-1, 2).mean(axis=1)
    half = float(stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d)))
    return {
        "games": len(first),
        "ppg_first": round(float(first.mean()), 5),
        "ppg_second": round(float(second.mean()), 5),
        "diff": round(float(d.mean()), 5),
        "ci_low": round(float(d.mean()) - half, 5),
        "ci_high": round(float(d.mean()) + half, 5),
        "pairs_differing": int((d != 0).sum()),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("first", help="the first tournament's .mat file")
    p.add_argument("second", help="the second tournament's .mat file (the same dice)")
    args = p.parse_args()
    print(
        json.dumps(
            {"first": args.first, "second": args.second, **paired(left_points(args.first), left_points(args.second))}
        )
    )


if __name__ == "__main__":
    run_script(main)
