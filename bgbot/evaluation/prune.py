"""A move filter for 0-ply checker play: a cheap first pass ranks every play of a roll, and only the few best
candidates get the model's full evaluation.

Most plays of a roll are nowhere near the best one; a model with GNU Backgammon-class features spends most of its time
on inputs and nets for them. The filter (in the spirit of GNU Backgammon's move filters and pruning nets, eval.c
``FindnSaveBestMoves`` / ``pnetsPrune``) is a small net, :class:`PruneNet`, that scores an afterstate from its checker
counts alone: each point's signed count (26 one-hot groups: point index times the 31 counts -15..15) and each side's
borne-off count (2 groups of 16), summed rows of one table (an embedding-bag, no encoding), ``H`` sigmoid hidden units,
one linear output: the mover's cubeless equity, up to a constant per roll. It is fitted to the model's own 0-ply
equities of the afterstates of its own self-play (:func:`fit`, ``scripts/fit_prune.py``), so the filter and the model
belong together (:attr:`PruneNet.model_sha256`).

:class:`MoveFilter` keeps, for each position, the ``keep`` plays the net ranks first, and up to ``extra`` more within
``margin`` (equity) of its best; ties go to the earlier play. Positions whose plays are all kept anyway (at most
``keep`` legal plays, one legal play included) and positions where a play may end the game or reach a bear-off
database position (exact values, cheap; :meth:`MoveFilter.candidates` says how this is told from the position) are
not filtered. Each position's candidates depend on its own plays only,
never on the batch it is in (the net's rows are summed per position; ``tests/test_prune.py`` checks a batch against
one position at a time).

:class:`PrunedEvaluator` wraps a position evaluator with a filter: everything it evaluates is the wrapped evaluator's,
and :func:`bgbot.evaluation.evaluator.best_plays` (0-ply checker play in tournaments, self-play and plain rollout
trials) then evaluates only the candidates. n-ply search and variance-reduced rollouts' luck (all plays of all 21
rolls) evaluate every play as before.

:func:`filter_for` finds a model file's own filter (``prune/<name>.pt`` beside it, fitted to that very file): the
self-play benchmark and profile (``scripts/bench_selfplay.py``, ``scripts/profile_selfplay.py``) play the shipped
model through it by default (``--no-filter``: every play evaluated), and :func:`bgbot_training.train.train` takes one
as ``move_filter`` (off by default: a filter fits fixed weights, and a run's net moves away from them).
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from bgbot.errors import BgbotError, is_int
from bgbot.evaluation.network import bag_sum
from bgbot.files import write_atomic
from bgbot.rules.board import extremes
from bgbot.rules.movegen import Plays

__all__ = [
    "PruneError",
    "PruneNet",
    "MoveFilter",
    "PrunedEvaluator",
    "filter_indices",
    "FitSettings",
    "fit",
    "load",
    "save",
    "filter_for",
    "N_ROWS",
]

N_ROWS = 26 * 31
"""Rows of the table: 31 signed counts (-15..15) for each of the 26 indices (bar, points 1..24, the other bar). The
borne-off counts need no rows of their own: 15 less the checkers on the board, a sum over the points, which the
points' own rows absorb before the hidden units' sigmoid."""
_OFFSETS = np.arange(15, N_ROWS, 31, dtype=np.int32)
FORMAT = "bgbot-prune/1"
SCORE_CHUNK = 16384
"""Afterstates scored at a time by :meth:`PruneNet.scores` (a variance-reduced rollout scores the plays of all 21 rolls
of thousands of positions at once; in chunks of this size their index arrays stay small, about 2x faster, the same
scores: each row's depends on that row alone)."""


class PruneError(BgbotError):
    """A move filter that cannot be used: a damaged or foreign filter file, bad settings."""


def filter_indices(positions: np.ndarray) -> np.ndarray:
    """The table rows of each position ``(M, 26)`` int8 -> ``(M, 26)`` int32: ``31 * i + count + 15`` for index
    ``i`` 0..25."""
    out = np.asarray(positions, dtype=np.int8).astype(np.int32)
    out += _OFFSETS
    return out


class PruneNet(torch.nn.Module):
    """The filter's net: ``score = out · sigmoid(sum of 26 table rows + bias)`` (module docstring), the mover's
    equity of an afterstate (opponent on roll) up to a constant per roll.

    Args:
        n_hidden: ``H``.
        model_sha256: the SHA-256 (hex) of the model file whose equities it was fitted to ("" unknown).
    """

    def __init__(self, n_hidden: int = 32, model_sha256: str = "") -> None:
        super().__init__()
        if not isinstance(n_hidden, int) or n_hidden < 1:
            raise PruneError(f"a prune net needs at least 1 hidden unit, got {n_hidden!r}")
        self.n_hidden = n_hidden
        self.model_sha256 = model_sha256
        self.table = torch.nn.Parameter(torch.randn(N_ROWS, n_hidden) * 0.1)
        self.bias = torch.nn.Parameter(torch.zeros(n_hidden))
        self.out = torch.nn.Parameter(torch.randn(n_hidden) * 0.1)

    def forward(self, index: torch.Tensor) -> torch.Tensor:
        """Scores ``(M,)`` float32 of rows ``index`` ``(M, 26)`` int32 or int64 (:func:`filter_indices`)."""
        h = torch.sigmoid(torch.nn.functional.embedding_bag(index, self.table, mode="sum") + self.bias)
        return (h * self.out).sum(dim=1)

    def scores(self, afterstates: np.ndarray) -> np.ndarray:
        """Scores ``(M,)`` float32 of afterstates ``(M, 26)`` int8 (opponent on roll), the mover's equity up to a
        constant per roll; each row's score depends on that row alone."""
        out = np.empty(len(afterstates), dtype=np.float32)
        with torch.inference_mode():  # :meth:`forward`'s operations, in place (the same values, fewer temporaries)
            for start in range(0, len(afterstates), SCORE_CHUNK):
                h = bag_sum(filter_indices(afterstates[start : start + SCORE_CHUNK]), self.table)
                out[start : start + SCORE_CHUNK] = h.add_(self.bias).sigmoid_().mul_(self.out).sum(dim=1).numpy()
        return out


@dataclass(frozen=True)
class MoveFilter:
    """Which plays get the full evaluation: the ``keep`` best by :attr:`net`, plus up to ``extra`` more within
    ``margin`` (equity, the net's units) of the net's best (module docstring). The defaults are the setting measured
    for bgbot-5 with ``models/prune/bgbot-5.pt`` (docs in ``scripts/bench_prune.py``, ``scripts/bench_decisions.py``).

    Raises:
        PruneError: ``keep`` below 1, ``extra`` below 0 or a negative or non-finite ``margin``.
    """

    net: PruneNet
    keep: int = 4
    extra: int = 10
    margin: float = 0.3

    def __post_init__(self) -> None:
        if not is_int(self.keep) or self.keep < 1:
            raise PruneError(f"a move filter keeps at least 1 play, got keep={self.keep!r}")
        if not is_int(self.extra) or self.extra < 0:
            raise PruneError(f"a move filter's extra plays are an integer >= 0, got extra={self.extra!r}")
        if not np.isfinite(self.margin) or self.margin < 0:
            raise PruneError(f"a move filter's margin is a finite equity >= 0, got margin={self.margin!r}")

    def candidates(self, positions: np.ndarray, plays: Plays) -> np.ndarray:
        """Which plays to evaluate in full, ``(M,)`` bool, of ``plays`` (:class:`bgbot.rules.movegen.Plays`) of
        ``positions`` ``(N, 26)`` int8 (side on roll). At least one play of every position is kept.

        Not filtered: positions with at most ``keep`` plays, and positions where a play may end the game or reach a
        bear-off database position: the mover has at most 4 checkers left, or the opponent (who does not move) has
        all its checkers in its home board (both are needed for a database position, bgbot.evaluation.classes)."""
        m = len(plays.afterstates)
        keep = np.ones(m, dtype=bool)
        n = len(positions)
        counts = plays.counts(n)  # (N,)
        many = counts > self.keep
        if not many.any():
            return keep
        ext = extremes(positions)
        many &= (ext.n_mine > 4) & (ext.their_back < 19)
        if not many.any():
            return keep
        rows = np.flatnonzero(many[plays.parent])  # (R,) whole runs of the filtered positions, in order
        c = counts[many]  # (S,)
        seg = np.repeat(np.arange(len(c), dtype=np.int64), c)  # (R,) the run of each row
        starts = np.cumsum(c) - c  # (S,) each run's first row in rows
        score = self.net.scores(plays.afterstates[rows])  # (R,) float32
        # one stable sort by (run, score descending): run << 32 | the score's bits ordered descending
        bits = (-score).view(np.int32).astype(np.int64)
        key = (seg << 32) | np.where(bits < 0, ~bits & 0x7FFFFFFF, bits | 0x80000000)
        order = np.argsort(key, kind="stable")  # ties keep row order
        rank = np.arange(len(rows)) - starts[seg]  # seg[order] == seg: runs stay in place
        kept = rank < self.keep
        if self.extra:
            best = score[order[starts]][seg]  # the net's best of each run
            kept |= (rank < self.keep + self.extra) & (score[order] >= best - np.float32(self.margin))
        keep[rows[order]] = kept
        return keep


class PrunedEvaluator:
    """A position evaluator with a :class:`MoveFilter`: evaluates exactly as ``evaluator`` does (every other attribute
    is the wrapped evaluator's), and :func:`bgbot.evaluation.evaluator.best_plays` reads :attr:`move_filter`."""

    def __init__(self, evaluator, move_filter: MoveFilter) -> None:  # noqa: D107
        self.evaluator = evaluator
        self.move_filter = move_filter

    def evaluate(self, positions: np.ndarray) -> np.ndarray:
        """The wrapped evaluator's ``evaluate``: ``(M, 26)`` int8 -> ``(M, 5)`` float32."""
        return self.evaluator.evaluate(positions)

    def __getattr__(self, name: str):
        if name in ("evaluator", "move_filter"):  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.evaluator, name)


# ------------------------------------------------------------------------------------------------ fitting and files


@dataclass(frozen=True)
class FitSettings:
    """How :func:`fit` trains a :class:`PruneNet`.

    Attributes:
        n_hidden: hidden units of the net.
        epochs: passes over the positions.
        batch_positions: positions (each with all its plays) per Adam step.
        lr: Adam's step size.
        seed: torch's seed and the order of the positions.
    """

    n_hidden: int = 32
    epochs: int = 4
    batch_positions: int = 256
    lr: float = 3e-3
    seed: int = 0


def fit(
    afterstates: np.ndarray,
    parent: np.ndarray,
    targets: np.ndarray,
    settings: FitSettings = FitSettings(),
    model_sha256: str = "",
) -> PruneNet:
    """Fit a :class:`PruneNet` to the equities of plays, relative to each position's mean play.

    Args:
        afterstates: ``(M, 26)`` int8 plays (opponent on roll) of ``N`` positions.
        parent: ``(M,)`` int64 sorted, the position of each play (every position at least one play).
        targets: ``(M,)`` float32 the mover's cubeless equity of each play (the model's 0-ply values).
        settings: the net's size and the training (:class:`FitSettings`).
        model_sha256: recorded in the net (:attr:`PruneNet.model_sha256`).

    Returns:
        The fitted net. Loss: mean squared error of ``score - mean(score of the position)`` against ``target -
        mean(target of the position)`` (only differences within a roll matter to the filter).
    """
    n_hidden, epochs, batch_positions, lr, seed = (
        settings.n_hidden,
        settings.epochs,
        settings.batch_positions,
        settings.lr,
        settings.seed,
    )
    torch.manual_seed(seed)
    net = PruneNet(n_hidden, model_sha256)
    parent = np.asarray(parent, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])
    bounds = np.r_[starts, len(parent)]
    index = torch.from_numpy(filter_indices(afterstates))
    t_all = torch.from_numpy(np.asarray(targets, dtype=np.float32))
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    n = len(starts)
    for _ in range(epochs):
        perm = rng.permutation(n)
        for i in range(0, n, batch_positions):
            pos = np.sort(perm[i : i + batch_positions])
            lo, hi = bounds[pos], bounds[pos + 1]
            rows = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)])
            seg = torch.from_numpy(np.repeat(np.arange(len(pos)), hi - lo))
            size = torch.from_numpy((hi - lo).astype(np.float32))
            score = net(index[rows])
            t = t_all[rows]
            d = score - t
            mean = torch.zeros(len(pos)).index_add_(0, seg, d) / size
            loss = ((d - mean[seg]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net


def save(net: PruneNet, path: str | Path) -> Path:
    """Write ``net`` to ``path`` atomically (a torch file of its tensors and settings)."""
    buf = io.BytesIO()
    torch.save(
        {
            "format": FORMAT,
            "n_hidden": net.n_hidden,
            "model_sha256": net.model_sha256,
            "state": {k: v.detach().clone() for k, v in net.state_dict().items()},
        },
        buf,
    )
    return write_atomic(path, buf.getvalue())


def load(path: str | Path) -> PruneNet:
    """Read a net :func:`save` wrote.

    Raises:
        PruneError: no such file, not a prune net file, or tensors of the wrong shape or non-finite.
    """
    try:
        data = torch.load(Path(path), weights_only=True)
    except FileNotFoundError:
        raise PruneError(f"no prune net file at {str(path)!r}") from None
    except Exception as e:  # torch's message runs over several lines (and suggests weights_only=False): name it only
        raise PruneError(
            f"cannot read prune net file {str(path)!r}: corrupt, truncated or not a torch file "
            f"(torch.load failed with {type(e).__name__})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PruneError(f"{str(path)!r} is not a prune net file ({FORMAT})")
    net = PruneNet(int(data["n_hidden"]), str(data.get("model_sha256", "")))
    try:
        net.load_state_dict(data["state"])
    except (RuntimeError, KeyError, TypeError) as e:
        raise PruneError(f"prune net file {str(path)!r} is damaged: {e}") from None
    if not all(torch.isfinite(p).all() for p in net.parameters()):
        raise PruneError(f"prune net file {str(path)!r} has non-finite weights")
    net.eval()
    return net


def filter_for(model: str | Path) -> MoveFilter | None:
    """The move filter of the model file ``model``, with :class:`MoveFilter`'s default settings: the net
    ``prune/<name>.pt`` in the model file's directory (links followed: ``bgbot/data/default_model.pt`` ->
    ``models/bgbot-5.pt`` -> ``models/prune/bgbot-5.pt``) when it exists and was fitted to this very file
    (:attr:`PruneNet.model_sha256` equal to the file's SHA-256); ``None`` otherwise (no filter for that model).

    Raises:
        PruneError: the filter file exists but is damaged (:func:`load`).
    """
    path = Path(model).resolve()
    candidate = path.parent / "prune" / path.name
    if not candidate.is_file():
        return None
    net = load(candidate)
    if net.model_sha256 != file_sha256(path):
        return None
    return MoveFilter(net)


def chosen_filter(
    model: str | Path,
    path: str | Path | None = None,
    *,
    off: bool = False,
    keep: int = 4,
    extra: int = 10,
    margin: float = 0.3,
) -> MoveFilter | None:
    """The move filter a benchmark plays ``model`` through: none when ``off``; else the net at ``path``, or the
    model's own (:func:`filter_for`) when ``path`` is None; with the settings ``keep``, ``extra``, ``margin``
    (:class:`MoveFilter`). None when the model has no filter of its own.

    Raises:
        PruneError: a damaged filter file; bad settings (:class:`MoveFilter`).
    """
    if off:
        return None
    found = filter_for(model) if path is None else load(path)
    net = found.net if isinstance(found, MoveFilter) else found
    return None if net is None else MoveFilter(net, keep, extra, margin)


def file_sha256(path: str | Path) -> str:
    """SHA-256 (hex) of a file's bytes (a model file, recorded in the prune net fitted to it)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
