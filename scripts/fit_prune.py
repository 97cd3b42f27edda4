"""Fit a move filter's net (:mod:`bgbot.evaluation.prune`) to a model's own 0-ply equities of the plays of its own
self-play, and write it next to the model.

The model plays itself at 0-ply (``--games-in-flight`` games together, the dice from ``--seed``, new games from the
starting position as games end) for ``--plies`` plies; every position with more than one legal play and no play into a
finished game or a bear-off database position contributes all its plays, each with the model's 0-ply cubeless equity
for the mover (:func:`bgbot.evaluation.evaluator.afterstate_probabilities`). The targets are the engine's own; no other
program is consulted. The net is fitted by :func:`bgbot.evaluation.prune.fit` and written atomically to ``--out``
(default ``prune/NAME.pt`` beside the model ``NAME.pt``: ``models/prune/bgbot-5.pt`` was made by
``python scripts/fit_prune.py --model models/bgbot-5.pt``, the defaults).

Prints one JSON object: positions and plays fitted, the fit's seconds, and on a held-out tenth of the positions how
often the model's best play is the net's first, within its first 2, 4 and 8.

``--evaluate NET`` fits nothing: it collects plays the same way (use another ``--seed``) and reports, for each
setting of :data:`GRID`, the share of plays the filter keeps, how often it drops the model's best play, and the model's
own equity lost per position (:func:`grid`).

Usage: ``python scripts/fit_prune.py [--model PATH] [--out PATH] [--plies 400] [--games-in-flight 512]
[--hidden 64] [--epochs 6] [--seed 12345] [--evaluate NET]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from bgbot.api import DEFAULT_MODEL
from bgbot.arena.engine import Table, play_ply
from bgbot.errors import int_at_least, run_script
from bgbot.evaluation import bearoff, checkpoint, classes, prune
from bgbot.evaluation.evaluator import afterstate_probabilities
from bgbot.evaluation.network import set_threads
from bgbot.evaluation.selection import segment_argmax
from bgbot.evaluation.specialists import evaluator_for
from bgbot.rules.board import extremes
from bgbot.rules.movegen import Plays, generate_plays
from bgbot.rules.outcomes import equity
from bgbot_training.selfplay import roll_dice


class _Recorder:
    """0-ply greedy self-play that keeps the plays of every filterable position and their equities."""

    def __init__(self, evaluator) -> None:
        self.evaluator = evaluator
        self.after: list[np.ndarray] = []
        self.parent: list[np.ndarray] = []
        self.value: list[np.ndarray] = []
        self.n = 0

    def choose(self, positions: np.ndarray, dice: np.ndarray) -> np.ndarray:
        plays = generate_plays(positions, dice)
        eq = equity(afterstate_probabilities(self.evaluator, plays.afterstates)).astype(np.float32)
        chosen = segment_argmax(eq, plays.parent)
        code = classes.classify_batch(plays.afterstates, extremes(plays.afterstates))
        exact = (code == classes.OVER) | (code == classes.BEAROFF_TS) | (code == classes.BEAROFF_OS)
        counts = np.bincount(plays.parent, minlength=len(positions))
        bad = np.bincount(plays.parent[exact], minlength=len(positions)) > 0
        use = (counts > 1) & ~bad
        rows = np.flatnonzero(use[plays.parent])
        renum = np.cumsum(use) - 1 + self.n
        self.after.append(plays.afterstates[rows])
        self.parent.append(renum[plays.parent[rows]])
        self.value.append(eq[rows])
        self.n += int(use.sum())
        return plays.afterstates[chosen]


def collect(model: str, plies: int, games_in_flight: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(afterstates (M, 26) int8, parent (M,) int64, equity (M,) float32)`` from ``plies`` plies of self-play."""
    net, _ = checkpoint.load(model)
    rec = _Recorder(evaluator_for(net))
    rng = np.random.default_rng(seed)
    table = Table.create(games_in_flight, seats=np.zeros((games_in_flight, 2), dtype=np.int64))
    table.start(np.arange(games_in_flight))
    opening = np.ones(games_in_flight, dtype=bool)
    for _ in range(plies):
        ply = play_ply(table, lambda t, idx: roll_dice(rng, opening[idx]), (rec,), max_plies=10**9)
        opening[:] = False
        opening[ply.ended] = True
        table.start(ply.ended)
    return np.concatenate(rec.after), np.concatenate(rec.parent), np.concatenate(rec.value)


def _hits(net: prune.PruneNet, after: np.ndarray, parent: np.ndarray, value: np.ndarray) -> dict:
    """How often the model's best play ranks within the net's first k, k = 1, 2, 4, 8."""
    score = net.scores(after).astype(np.float64)
    best = segment_argmax(value, parent)
    order = np.lexsort((-score, parent))
    starts = np.flatnonzero(np.r_[True, parent[order][1:] != parent[order][:-1]])
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    r = rank[best]
    return {f"top{k}": round(float((r < k).mean()), 4) for k in (1, 2, 4, 8)}


GRID = (
    (2, 0, 0.0),
    (3, 0, 0.0),
    (4, 0, 0.0),
    (6, 0, 0.0),
    (8, 0, 0.0),
    (2, 6, 0.1),
    (3, 6, 0.1),
    (4, 6, 0.1),
    (2, 8, 0.2),
    (3, 8, 0.2),
    (4, 8, 0.2),
)
"""(keep, extra, margin) settings :func:`grid` reports."""


def grid(net: prune.PruneNet, after: np.ndarray, parent: np.ndarray, value: np.ndarray) -> list[dict]:
    """For each setting of :data:`GRID`, on plays of filterable positions: the share of plays kept, how often the
    model's best play is dropped, and the model's own equity lost per position by playing the best kept play
    (millipoints; the model's 0-ply values, not a referee's)."""
    n = int(parent[-1]) + 1
    positions = np.zeros((n, 26), dtype=np.int8)  # the filter reads the parents only for its end-game rule
    positions[:, 1], positions[:, 0] = 15, -15  # a live position: filtered whenever it has enough plays
    plays = Plays(after, parent)
    best = segment_argmax(value, parent)
    out = []
    for keep, extra, margin in GRID:
        kept = prune.MoveFilter(net, keep, extra, margin).candidates(positions, plays)
        chosen = segment_argmax(np.where(kept, value, -np.inf), parent)
        loss = value[best] - value[chosen]
        out.append(
            {
                "keep": keep,
                "extra": extra,
                "margin": margin,
                "kept_share": round(float(kept.mean()), 4),
                "best_dropped": round(float((chosen != best).mean()), 4),
                "loss_mp": round(float(loss.mean() * 1000), 3),
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="checkpoint (default: the shipped model)")
    ap.add_argument("--out", default=None, help="output file (default: prune/NAME.pt beside the model NAME.pt)")
    ap.add_argument("--plies", type=int_at_least(1), default=400, help="plies of self-play to collect")
    ap.add_argument("--games-in-flight", type=int_at_least(1), default=512)
    ap.add_argument("--hidden", type=int_at_least(1), default=64, help="the net's hidden units")
    ap.add_argument("--epochs", type=int_at_least(1), default=6)
    ap.add_argument("--seed", type=int_at_least(0), default=12345, help="dice and fit seed")
    ap.add_argument(
        "--evaluate",
        default=None,
        help="fit nothing: collect --plies plies with --seed and report this filter net's settings grid (GRID)",
    )
    args = ap.parse_args()
    model = args.model or str(DEFAULT_MODEL)
    out = Path(args.out) if args.out else Path(model).parent / "prune" / Path(model).name
    set_threads()
    bearoff.load()
    if args.evaluate:
        with threadpool_limits(1):
            after, parent, value = collect(model, args.plies, args.games_in_flight, args.seed)
            net = prune.load(args.evaluate)
            report = {"net": args.evaluate, "positions": int(parent[-1]) + 1, "plays": len(after)}
            report["held_out_best_within"] = _hits(net, after, parent, value)
            report["grid"] = grid(net, after, parent, value)
        print(json.dumps(report, indent=1))
        return
    with threadpool_limits(1):
        t0 = time.perf_counter()
        after, parent, value = collect(model, args.plies, args.games_in_flight, args.seed)
        t_collect = time.perf_counter() - t0
        n = int(parent[-1]) + 1
        cut = n - n // 10  # the last tenth held out
        train = parent < cut
        t0 = time.perf_counter()
        net = prune.fit(
            after[train],
            parent[train],
            value[train],
            prune.FitSettings(n_hidden=args.hidden, epochs=args.epochs, seed=args.seed),
            model_sha256=prune.file_sha256(model),
        )
        t_fit = time.perf_counter() - t0
        held = _hits(net, after[~train], parent[~train] - cut, value[~train])
    out.parent.mkdir(parents=True, exist_ok=True)
    prune.save(net, out)
    print(
        json.dumps(
            {
                "model": model,
                "out": str(out),
                "positions": n,
                "plays": len(after),
                "collect_s": round(t_collect, 1),
                "fit_s": round(t_fit, 1),
                "held_out_best_within": held,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    run_script(main)
