"""Benchmark lookahead: single-position latency at 1 and 2 ply against GNU Backgammon's, and 1-ply tournaments.

Prints one JSON object from one run:

* ``latency``: for each ply (1, 2), the mean CPU milliseconds per position of ``bgbot.arena.ranking.rank`` (every
  legal play ranked at that ply after GNU Backgammon's move filter, what ``bgbot move --ply N`` does) and of
  ``gnubg_nn.best_move(board, d1, d2, n=PLY)`` on the same positions and dice (``--positions`` positions spread over
  ``tests/data/gnubg_selfplay_positions.txt``, dice drawn with ``--seed``), the two calls interleaved position by
  position on one core (one torch and one BLAS thread; CPU seconds of this process, ``time.process_time``), and
  ``ratio`` = gnubg's latency / bgbot's (>= 1: bgbot at least as fast). The bear-off databases are read before the
  clock starts (``bearoff_load_s``: CPU seconds, once per process; gnubg-nn reads its own at import);
* ``tournament``: games per second (wall clock, ``--workers`` processes) of a 1-ply bgbot (the shipped model, or
  ``--model``) against pubeval and of ``gnubg:1`` against pubeval through the same harness
  (``bgbot.arena.tournament.run``, duplicate dice, the same seed, games split into one chunk per worker), and
  ``ratio`` = bgbot's / gnubg's.

Usage: ``python scripts/bench_search.py [--model PATH] [--positions 60] [--games 400] [--gnubg-games 200]
[--workers 2] [--seed 11] [--no-tournament]`` (needs ``gnubg-nn``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from bgbot.api import DEFAULT_MODEL
from bgbot.arena import ranking, tournament
from bgbot.arena.players import to_gnubg
from bgbot.errors import int_at_least, run_script
from bgbot.evaluation import bearoff, checkpoint
from bgbot.evaluation.network import Evaluator, set_threads
from bgbot.evaluation.specialists import evaluator_for
from bgbot.formats import positionid
from bgbot.rules.board import game_result

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "gnubg_selfplay_positions.txt"


def bench_positions(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` positions ``(n, 26)`` int8 spread evenly over the committed self-play positions, and dice ``(n, 2)``."""
    ids = [s.strip() for s in DATA.read_text().splitlines() if s.strip() and not s.startswith("#")]
    positions = np.stack([positionid.decode(ids[i]) for i in np.linspace(0, len(ids) - 1, 4 * n).astype(int)])
    positions = positions[game_result(positions) == 0][:n]
    dice = np.random.default_rng(seed).integers(1, 7, size=(len(positions), 2))
    return positions, dice


def latency(evaluator: Evaluator, positions: np.ndarray, dice: np.ndarray, plies: int) -> dict:
    """Mean CPU ms per position of bgbot's ranking and gnubg-nn's best_move at ``plies``, interleaved."""
    import gnubg_nn

    ours = theirs = 0.0
    ranking.rank(evaluator, positions[:1], dice[:1], plies)  # warm-up (the first-layer table, allocations)
    for p, (d1, d2) in zip(positions, dice):
        board = to_gnubg(p)
        t0 = time.process_time()
        ranking.rank(evaluator, p[None, :], np.array([[d1, d2]]), plies)
        t1 = time.process_time()
        gnubg_nn.best_move(board, int(d1), int(d2), n=plies)
        t2 = time.process_time()
        ours, theirs = ours + t1 - t0, theirs + t2 - t1
    n = len(positions)
    return {
        "plies": plies,
        "positions": n,
        "bgbot_ms": round(1e3 * ours / n, 3),
        "gnubg_ms": round(1e3 * theirs / n, 3),
        "ratio": round(theirs / ours, 3),
    }


def load_databases() -> float:
    """Read the bear-off databases (and their cumulative sums) now, as every process does once at the first bear-off
    position it meets (gnubg-nn reads its own at import), so that the latency figures do not carry this one-time cost;
    returns the CPU seconds it took."""
    t0 = time.process_time()
    db = bearoff.load()
    db.off_cdf, db.first_cdf  # noqa: B018  (cached on first use)
    return time.process_time() - t0


def tournament_speed(spec: str, games: int, workers: int, seed: int) -> float:
    """Wall-clock games per second of ``spec`` against pubeval, ``games`` duplicate games in ``workers`` chunks."""
    pairs = games // 2
    result = tournament.run(
        [spec, "pubeval"],
        tournament.TournamentSettings(games, seed=seed, workers=workers, chunk_pairs=-(-pairs // workers)),
    )
    return float(result["games_per_s"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None, help="checkpoint (default: the shipped model)")
    p.add_argument("--positions", type=int_at_least(1), default=60, help="positions for the latency figures")
    p.add_argument(
        "--games",
        type=int_at_least(tournament.MIN_GAMES, even=True),
        default=400,
        help="games of the 1-ply bgbot tournament (even)",
    )
    p.add_argument(
        "--gnubg-games",
        type=int_at_least(tournament.MIN_GAMES, even=True),
        default=200,
        help="games of the gnubg:1 tournament (even)",
    )
    p.add_argument("--workers", type=int_at_least(1), default=2, help="tournament processes")
    p.add_argument("--seed", type=int_at_least(0), default=11, help="dice seed")
    p.add_argument("--no-tournament", action="store_true", help="latency only")
    args = p.parse_args()
    model = args.model or str(DEFAULT_MODEL)
    set_threads()
    net, _ = checkpoint.load(model)
    evaluator = evaluator_for(net)
    positions, dice = bench_positions(args.positions, args.seed)
    with threadpool_limits(1):
        load_s = load_databases()
        lat = [latency(evaluator, positions, dice, plies) for plies in (1, 2)]
    out: dict = {"model": model, "bearoff_load_s": round(load_s, 3), "latency": lat}
    if not args.no_tournament:
        theirs = tournament_speed("gnubg:1", args.gnubg_games, args.workers, args.seed)
        ours = tournament_speed(f"{model}:1", args.games, args.workers, args.seed)
        out["tournament"] = {
            "workers": args.workers,
            "bgbot_1ply_vs_pubeval_games_per_s": round(ours, 2),
            "bgbot_games": args.games,
            "gnubg_1ply_vs_pubeval_games_per_s": round(theirs, 2),
            "gnubg_games": args.gnubg_games,
            "ratio": round(ours / theirs, 3),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    run_script(main)
