"""The ``fit`` stage: the next generation's nets fitted to the targets of earlier stages.

``python -m training fit --init M --targets DIR [DIR ...] --run-dir DIR [--epochs E] [--resume]`` writes
``RUN_DIR/latest.pt`` (with the optimiser, each epoch), ``RUN_DIR/best.pt`` (lowest validation loss) and
``RUN_DIR/curve.jsonl`` (one line per epoch: losses overall and per class, seconds). A fit resumed on other data or
settings is refused, never mixed: a resumed fit continues the same split, batches and learning-rate schedule, and ends
with the weights of an uninterrupted one.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import torch

from bgbot.errors import check_distinct_paths
from bgbot.evaluation import checkpoint, encoding, specialists
from bgbot.evaluation.network import NetConfig, ValueNet, set_threads
from bgbot.evaluation.prune import file_sha256
from bgbot.formats.store import exact_finished_games
from bgbot.progress import progress_bar

from .jsonl import append_jsonl
from .parts import StageError, check_settings, first_rows, load_npz
from .plays import choice_losses

__all__ = [
    "FIT_ARCHS",
    "FitConfig",
    "SingleFit",
    "EncodedTargets",
    "DecisionTargets",
    "load_decisions",
    "fit_lr",
    "stderr_weights",
    "load_targets",
    "run_fit",
]

FIT_ENCODINGS = {"v1": encoding.ENCODING_VERSION, "v2": specialists.ENCODING_V2, "v3": specialists.ENCODING_V3}
"""``--encoding`` name -> the encoding version of the nets' inputs."""
FIT_ARCHS = ("specialists", "single")


@dataclass(frozen=True)
class FitConfig:
    """The settings of ``fit``.

    Attributes:
        init: the checkpoint to start from (a v1 single net or specialists).
        targets: target directories, read in order.
        run_dir: where the checkpoints and the curve go.
        last_wins: a position in several target parts is fitted once, to the last part's target.
        epochs: passes over the training positions.
        lr: Adam's learning rate (the first epoch's with ``lr_final``), finite, >= 0.
        lr_final: anneal the learning rate to this by the last epoch (cosine, :func:`fit_lr`); None: constant.
        batch: positions per Adam step.
        val_frac: the share of the positions held out for validation, strictly between 0 and 1.
        seed: the split, the batches and torch's seed.
        arch: one of :data:`FIT_ARCHS`.
        encoding: ``"v1"``, ``"v2"`` or ``"v3"`` (:data:`FIT_ENCODINGS`); None: v2 for specialists made from a
            single net, else ``init``'s own.
        race_encoding: widen the race specialist to this encoding (of :data:`FIT_ENCODINGS`) before a fresh fit
            (:func:`bgbot.evaluation.specialists.with_race_encoding`, new inputs at weight 0); None: keep it.
        hidden: widen every specialist to this many hidden units before a fresh fit
            (:func:`bgbot.evaluation.specialists.with_hidden`, new units at output weight 0); None: keep them.
        classes: fit only the positions of these classes (of :data:`bgbot.evaluation.specialists.CLASSES`; the
            split into training and held-out rows is made over all positions first); None: all.
        stderr_scale: weigh each target by ``TAU^2 / (TAU^2 + se^2)`` (:func:`stderr_weights`); None: unweighted.
        decisions: plays stores (:mod:`training.plays`) whose decisions add the decision loss
            (:class:`DecisionTargets`) to every step; empty: none.
        decision_weight: the decision loss's weight beside the targets' loss.
        held_out_decisions: plays stores (or folders of their parts) never fitted; each epoch's curve records the
            nets' decision loss and 0-ply choice loss on them (``val.held_out_decisions``, ``val.held_out_choice_mp``).
        resume: continue the fit in ``run_dir``.
        quiet: no progress bar.
    """

    init: str
    targets: tuple[str, ...]
    run_dir: Path
    last_wins: bool = False
    epochs: int = 10
    lr: float = 1e-4
    lr_final: float | None = None
    batch: int = 128
    val_frac: float = 0.05
    seed: int = 1
    arch: str = "specialists"
    encoding: str | None = None
    race_encoding: str | None = None
    hidden: int | None = None
    classes: tuple[str, ...] | None = None
    stderr_scale: float | None = None
    decisions: tuple[str, ...] = ()
    decision_weight: float = 1.0
    held_out_decisions: tuple[str, ...] = ()
    resume: bool = False
    quiet: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> FitConfig:
        """The config of ``fit``'s parsed command line (checked by :func:`run_fit`).

        Raises:
            StageError: ``--decision-weight`` without ``--decisions`` (it would weigh nothing).
        """
        if args.decision_weight is not None and not args.decisions:
            raise StageError("--decision-weight weighs the decision loss of --decisions STORE: give --decisions too")
        return cls(
            init=args.init,
            targets=tuple(args.targets),
            run_dir=Path(args.run_dir),
            last_wins=args.last_wins,
            epochs=args.epochs,
            lr=args.lr,
            lr_final=args.lr_final,
            batch=args.batch,
            val_frac=args.val_frac,
            seed=args.seed,
            arch=args.arch,
            encoding=args.encoding,
            race_encoding=args.race_encoding,
            hidden=args.hidden,
            classes=None if args.classes is None else tuple(args.classes),
            stderr_scale=args.stderr_scale,
            decisions=tuple(args.decisions or ()),
            decision_weight=1.0 if args.decision_weight is None else args.decision_weight,
            held_out_decisions=tuple(args.held_out_decisions or ()),
            resume=args.resume,
            quiet=args.quiet,
        )


def load_targets(
    dirs: list[str] | tuple[str, ...], last_wins: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
    """Positions ``(N, 26)`` int8, targets ``(N, 5)`` float32, their standard errors ``(N, 5)`` float32 (0 where a part
    records none: search targets) and each part's file, kind and model, from the ``part-*.npz`` of ``dirs`` in order
    (each directory's parts sorted by name); a directory given k times is read k times, which weighs its positions k
    times (the rollouts of ``models/candidates/gen6/``; the held-out rows may then hold copies of trained ones).
    ``last_wins``: a position held by several parts is kept once, with the target of the last part that holds it
    (rollout targets of some positions, listed after the 2-ply targets of them all, replace those)."""
    pos, tg, se, metas = [], [], [], []
    for d in dirs:
        parts = sorted(Path(d).glob("part-*.npz"))
        if not parts:
            raise StageError(f"no target parts (part-*.npz) in {d!r}")
        for p in parts:
            z = load_npz(p)
            if "targets" not in z:
                raise StageError(f"{str(p)!r} holds no targets (a positions part?)")
            t, e = exact_finished_games(z["positions"], z["targets"], z.get("stderr", np.zeros_like(z["targets"])))
            pos.append(z["positions"])
            tg.append(t)
            se.append(e)
            metas.append({"file": str(p), "kind": z["meta"].get("kind"), "model": z["meta"].get("model")})
    positions, targets = np.concatenate(pos), np.concatenate(tg).astype(np.float32)
    stderr = np.concatenate(se).astype(np.float32)
    if last_wins:
        keep = np.sort(len(positions) - 1 - first_rows(positions[::-1]))  # each position's last occurrence
        positions, targets, stderr = positions[keep], targets[keep], stderr[keep]
    return positions, targets, stderr, metas


def stderr_weights(stderr: np.ndarray, scale: float) -> np.ndarray:
    """Per-output weights of targets by their standard errors: ``scale^2 / (scale^2 + se^2)``, ``(N, 5)`` float32.

    Weighted least squares with each target's error variance ``se^2`` beside a common variance ``scale^2`` that the
    net cannot fit anyway (its approximation error): a target known to within its ``se`` counts in proportion to the
    inverse of its total error variance, normalised so that an exact target (se = 0: search targets, databases)
    weighs 1. ``scale`` is in the targets' units (probability), e.g. 0.02.
    """
    s2 = np.float32(scale) ** 2
    return (s2 / (s2 + np.asarray(stderr, dtype=np.float32) ** 2)).astype(np.float32)


def _select_classes(
    pos: np.ndarray,
    tg: np.ndarray,
    weights: np.ndarray | None,
    val: np.ndarray,
    train: np.ndarray,
    names: list[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    """A fit's data cut to the positions of classes ``names`` (of :data:`specialists.CLASSES`; finished games count as
    race, as in :meth:`specialists.ClassNets.loss`): the positions ``(K, 26)``, targets ``(K, 5)``, weights and the
    validation and training rows renumbered into them, each keeping the order it had.

    Raises:
        StageError: no position of those classes in the validation or training rows.
    """
    cls = specialists.classify(pos)
    cls[cls == specialists.OVER] = specialists.RACE
    keep = np.isin(cls, [specialists.CLASSES.index(n) + 1 for n in names])
    index = np.full(len(pos), -1, dtype=np.int64)
    index[keep] = np.arange(int(keep.sum()))
    val, train = index[val[keep[val]]], index[train[keep[train]]]
    if len(val) == 0 or len(train) == 0:
        raise StageError(f"--classes {' '.join(names)}: the targets hold no such positions to train on and hold out")
    return pos[keep], tg[keep], None if weights is None else weights[keep], val, train


def fit_lr(epoch: int, epochs: int, lr: float, lr_final: float | None) -> float:
    """The learning rate of epoch ``epoch`` (0-based) of ``epochs``: ``lr`` throughout when ``lr_final`` is None, else
    cosine annealing from ``lr`` (epoch 0) to ``lr_final`` (the last epoch), SGDR's schedule without restarts
    (Loshchilov & Hutter 2017). A pure function of the epoch, so a resumed fit continues the same schedule."""
    if lr_final is None or epochs <= 1:
        return lr
    return lr_final + 0.5 * (lr - lr_final) * (1.0 + math.cos(math.pi * epoch / (epochs - 1)))


class SingleFit(torch.nn.Module):
    """One :class:`ValueNet` for every position, with the loss :meth:`ClassNets.loss` computes (bgbot-1's shape: no
    dispatch and no features, so no speed cost)."""

    def __init__(self, net: ValueNet) -> None:
        super().__init__()
        self.net = net

    @property
    def config(self) -> NetConfig:
        return self.net.config

    def loss(self, positions: np.ndarray, targets: np.ndarray) -> torch.Tensor:
        x = torch.from_numpy(specialists.ENCODERS[self.net.config.encoding_version][0](positions))
        return ((self.net(x) - torch.from_numpy(targets)) ** 2).mean()

    def saved(self) -> ValueNet:
        return self.net


class EncodedTargets:
    """A fit's positions encoded once, each by the net that values it, so that an epoch only gathers rows.

    ``loss(rows)`` equals ``net.loss(positions[rows], targets[rows])`` (:meth:`ClassNets.loss`: mean squared error
    over the five outputs, finished games to the race net) without encoding again. Memory: 4 bytes an input, e.g.
    253 MB for 250,000 positions on encoding v2.
    """

    def __init__(
        self,
        net: SingleFit | specialists.ClassNets,
        positions: np.ndarray,
        targets: np.ndarray,
        weights: np.ndarray | None = None,
    ) -> None:
        if isinstance(net, SingleFit):
            self.nets: list[ValueNet] = [net.net]
            group = np.zeros(len(positions), dtype=np.int64)
        else:
            self.nets = [net.net(name) for name in specialists.CLASSES]
            cls = specialists.classify(positions)
            cls[cls == specialists.OVER] = specialists.RACE
            group = cls.astype(np.int64) - 1
        self.group = group
        self.within = np.zeros(len(positions), dtype=np.int64)
        self.inputs: list[torch.Tensor] = []
        for g, sub in enumerate(self.nets):
            rows = np.flatnonzero(group == g)
            self.within[rows] = np.arange(len(rows))
            encode = specialists.ENCODERS[sub.config.encoding_version][0]
            x = encode(positions[rows]) if len(rows) else np.zeros((0, sub.config.n_inputs), dtype=np.float32)
            self.inputs.append(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)))
        self.targets = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32))
        self.weights = None if weights is None else torch.from_numpy(np.ascontiguousarray(weights, dtype=np.float32))

    def loss(self, rows: np.ndarray) -> torch.Tensor:
        """Mean squared error over the five outputs of ``rows`` ``(K,)`` int64 (autograd on), each squared error times
        its weight when the targets have weights (:func:`stderr_weights`)."""
        total = torch.zeros(())
        groups = self.group[rows]
        for g, sub in enumerate(self.nets):
            sel = rows[groups == g]
            if len(sel) == 0:
                continue
            out = sub(self.inputs[g][torch.from_numpy(self.within[sel])])
            sq = (out - self.targets[torch.from_numpy(sel)]) ** 2
            total = total + (sq if self.weights is None else sq * self.weights[torch.from_numpy(sel)]).sum()
        return total / (5 * max(len(rows), 1))

    def outputs(self, rows: np.ndarray) -> torch.Tensor:
        """The nets' outputs ``(K, 5)`` for ``rows`` ``(K,)`` int64, in that order (autograd on)."""
        out = torch.zeros((len(rows), 5))
        groups = self.group[rows]
        for g, sub in enumerate(self.nets):
            at = np.flatnonzero(groups == g)
            if len(at):
                out = out.index_copy(
                    0, torch.from_numpy(at), sub(self.inputs[g][torch.from_numpy(self.within[rows[at]])])
                )
        return out


EQUITY_WEIGHTS = torch.tensor([2.0, 1.0, 1.0, -1.0, -1.0])
"""Cubeless money equity of cumulative probabilities: ``2 w - 1 + wg - lg + wbg - lbg``
(:func:`bgbot.rules.outcomes.equity`), as ``p @ EQUITY_WEIGHTS - 1``."""


def load_decisions(dirs: list[str] | tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rolled-out candidates of plays stores (:mod:`training.plays`): afterstates ``(K, 26)`` int8, targets
    ``(K, 5)`` float32 and a decision number ``(K,)`` int64 (0 .. D-1, the candidates of one decision together), from
    the ``part-*.npz`` of ``dirs`` (a store or a folder of its parts) that hold ``decisions``.

    Raises:
        StageError: a directory without such parts.
    """
    pos, tg, key = [], [], []
    count = 0
    for d in dirs:
        parts = sorted(Path(d).glob("part-*.npz"))
        found = False
        for p in parts:
            z = load_npz(p)
            if "decisions" not in z:
                continue
            found = True
            _, inverse = np.unique(z["decisions"], return_inverse=True)
            pos.append(z["positions"])
            tg.append(exact_finished_games(z["positions"], z["targets"], np.zeros_like(z["targets"]))[0])
            key.append(inverse.astype(np.int64) + count)
            count += int(inverse.max()) + 1 if len(inverse) else 0
        if not found:
            raise StageError(f"no plays parts (part-*.npz with decisions) in {d!r}: give a plays store")
    return (
        np.concatenate(pos).astype(np.int8),
        np.concatenate(tg).astype(np.float32),
        np.concatenate(key),
    )


class DecisionTargets:
    """The decision loss: how far the nets' differences between a decision's candidates are from the rollouts'.

    For each decision (the rolled-out candidate afterstates of one roll, :mod:`training.plays`), the mover's cubeless
    money equity of each candidate is minus the equity of the afterstate's probabilities (for the side on roll in it);
    the loss is the mean over candidates of ``((net_i - mean(net)) - (rollout_i - mean(rollout)))^2`` in points^2,
    each decision's mean taken out. What a checker play needs is the order of its candidates: the rollouts of one
    decision share their dice trial by trial, so their differences carry much less noise than their values. Targets
    of the same rows in ``--targets`` still fit the values themselves.

    Args:
        net: the model being fitted. positions, targets, decision: :func:`load_decisions`'s arrays.
    """

    def __init__(self, net, positions: np.ndarray, targets: np.ndarray, decision: np.ndarray) -> None:
        order = np.argsort(decision, kind="stable")
        self.encoded = EncodedTargets(net, positions[order], targets[order])
        key = decision[order]
        self.starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        self.ends = np.r_[self.starts[1:], len(key)]
        self.mover = -(self.encoded.targets @ EQUITY_WEIGHTS - 1.0)  # (K,) the rollouts' equity for the mover

    def __len__(self) -> int:
        return len(self.starts)

    def loss(self, decisions: np.ndarray) -> torch.Tensor:
        """The decision loss of decisions ``(B,)`` int64 (0 .. len-1), autograd on; 0 for none."""
        if len(decisions) == 0:
            return torch.zeros(())
        sizes = self.ends[decisions] - self.starts[decisions]
        rows = np.concatenate([np.arange(a, b) for a, b in zip(self.starts[decisions], self.ends[decisions])])
        seg = torch.from_numpy(np.repeat(np.arange(len(decisions)), sizes))
        n = torch.from_numpy(sizes.astype(np.float32))
        mine = -(self.encoded.outputs(rows) @ EQUITY_WEIGHTS - 1.0)
        diff = mine - self.mover[torch.from_numpy(rows)]
        mean = torch.zeros(len(decisions)).index_add(0, seg, diff) / n
        return ((diff - mean[seg]) ** 2).mean()

    def choice_loss(self) -> np.ndarray:
        """What the nets' 0-ply choice among each decision's candidates loses against the rollouts' best.

        Returns:
            ``(D,)`` float64, one per decision (in decision order), in points of the mover's cubeless money equity
            (>= 0; the rollouts' own noise is in it, the same for every model): the rollouts' best candidate's equity
            minus that of the candidate the nets rank first (:func:`training.plays.choice_losses`). The
            nets' own choice: the bear-off databases that answer such positions in play are not consulted.
        """
        with torch.no_grad():
            mine = self.encoded.outputs(np.arange(len(self.mover))).double().numpy()
        key = np.repeat(np.arange(len(self)), self.ends - self.starts)
        return choice_losses(mine, key, self.encoded.targets.double().numpy())


def _saved(net: SingleFit | specialists.ClassNets) -> ValueNet | specialists.ClassNets:
    """What a fit checkpoint holds: the single net itself, or the specialists."""
    return net.net if isinstance(net, SingleFit) else net


def _fit_model(
    base: torch.nn.Module, arch: str, encoding_version: str | None, *, resumed: bool
) -> SingleFit | specialists.ClassNets:
    """The model ``fit`` trains: ``base`` as is or turned into ``arch`` on ``encoding_version``.

    Raises:
        StageError: ``base`` cannot become ``arch`` (specialists cannot become one net; a run resumed with another
            ``--arch`` than it started with).
    """
    is_classes = bool(getattr(base, "is_class_nets", False))
    if arch == "single":
        if is_classes:
            what = "this run holds specialist nets" if resumed else "--init holds specialist nets"
            raise StageError(f"--arch single needs a single net: {what}")
        if encoding_version is not None and base.config.encoding_version != encoding_version:  # type: ignore[union-attr]
            raise StageError(
                f"--arch single keeps the net's encoding ({base.config.encoding_version}); "  # type: ignore[union-attr]
                f"--encoding asked for {encoding_version}"
            )
        return SingleFit(cast(ValueNet, base))
    if not is_classes:
        if resumed:
            raise StageError("this run holds a single net: resume it with --arch single")
        return specialists.from_single(cast(ValueNet, base), encoding_version or specialists.ENCODING_V2)
    return cast(specialists.ClassNets, base)


def run_fit(cfg: FitConfig) -> dict:
    """Fit (or resume fitting) ``cfg.init``'s nets to the targets -> a summary: epochs, best_val, positions, run_dir.

    Raises:
        StageError: a run directory that holds a fit (without ``resume``) or none (with it); a learning rate, a
            ``val_frac`` or a ``stderr_scale`` out of range; target directories without target parts; a resumed fit
            whose settings or data differ from those it started with; an ``arch`` its net cannot take; a store given
            twice to ``decisions`` or to ``held_out_decisions`` (compared resolved: ``S`` and ``S/`` are one store).
    """
    set_threads(None)
    run_dir = cfg.run_dir
    latest = run_dir / "latest.pt"
    if latest.exists() and not cfg.resume:
        raise StageError(f"{run_dir} already holds a fit (latest.pt); pass --resume or pick another --run-dir")
    if cfg.resume and not latest.exists():
        raise StageError(f"nothing to resume: {latest} does not exist")
    for name, value in (("lr", cfg.lr), ("lr_final", cfg.lr_final)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise StageError(f"--{name.replace('_', '-')} must be a finite number >= 0, got {value}")
    if not 0 < cfg.val_frac < 1:
        raise StageError(f"--val-frac must lie strictly between 0 and 1, got {cfg.val_frac}")
    arch = cfg.arch
    encoding_version = FIT_ENCODINGS.get(cfg.encoding or "")
    race_encoding = FIT_ENCODINGS.get(cfg.race_encoding or "")
    fit_classes = sorted(set(cfg.classes or specialists.CLASSES))
    if race_encoding is not None and arch != "specialists":
        raise StageError("--race-encoding widens the race specialist: it needs --arch specialists")
    if cfg.hidden is not None and arch != "specialists":
        raise StageError("--hidden widens the specialists: it needs --arch specialists")
    if fit_classes != sorted(specialists.CLASSES) and arch != "specialists":
        raise StageError("--classes fits some specialists only: it needs --arch specialists")
    data_settings = {  # a resumed fit must see the same positions, split and steps
        "init": cfg.init,
        "targets": list(cfg.targets),
        "classes": fit_classes,
        "race_encoding": race_encoding,
        "hidden": cfg.hidden,
        "last_wins": cfg.last_wins,
        "val_frac": cfg.val_frac,
        "lr": cfg.lr,
        "lr_final": cfg.lr_final,
        "batch": cfg.batch,
        "seed": cfg.seed,
        "stderr_scale": cfg.stderr_scale,
    }
    check_distinct_paths(cfg.decisions, "--decisions", StageError)
    check_distinct_paths(cfg.held_out_decisions, "--held-out-decisions", StageError)
    if cfg.held_out_decisions:  # by content: a part copied or linked into a fitted folder is fitted too
        fitted = {file_sha256(p) for d in (*cfg.decisions, *cfg.targets) for p in Path(d).glob("part-*.npz")}
        for d in cfg.held_out_decisions:
            for p in sorted(Path(d).glob("part-*.npz")):
                if file_sha256(p) in fitted:
                    raise StageError(
                        f"--held-out-decisions {str(p)!r} is also fitted (the same part is in --targets or "
                        "--decisions): it is not held out"
                    )
    if cfg.decisions:  # recorded only when used: fits made before the decision loss existed resume as they were
        if fit_classes != sorted(specialists.CLASSES):
            raise StageError("--decisions fits every net a decision's candidates reach: it cannot go with --classes")
        if not (math.isfinite(cfg.decision_weight) and cfg.decision_weight > 0):
            raise StageError(f"--decision-weight must be a finite number > 0, got {cfg.decision_weight}")
        data_settings |= {"decisions": list(cfg.decisions), "decision_weight": cfg.decision_weight}
    hint = "resume with the run's own settings, or start a new fit (--init RUN_DIR/latest.pt)"
    meta: checkpoint.CheckpointMeta | None = None
    if cfg.resume:
        loaded, meta = checkpoint.load(latest)
        net = _fit_model(loaded, arch, encoding_version, resumed=True)
        check_settings(meta.training_config, data_settings, str(latest), hint)
    pos, tg, se, metas = load_targets(cfg.targets, cfg.last_wins)
    scale = data_settings["stderr_scale"]
    if scale is not None and not (math.isfinite(scale) and scale > 0):
        raise StageError(f"--stderr-scale must be a finite number > 0, got {scale}")
    weights = None if scale is None else stderr_weights(se, scale)
    digest = hashlib.sha256(  # what a resumed fit must see again
        pos.tobytes() + tg.tobytes() + (b"" if weights is None else weights.tobytes())
    ).hexdigest()
    if meta is not None:
        check = {"positions": len(pos), "data_sha256": digest}
        check_settings(meta.training_config, check, str(latest), "the target parts changed; " + hint)
    rng = np.random.default_rng(cfg.seed)
    order = rng.permutation(len(pos))
    n_val = max(1, int(len(pos) * cfg.val_frac))
    val, train = order[:n_val], order[n_val:]
    if fit_classes != sorted(specialists.CLASSES):  # split first: the held-out rows are those of the full fit
        pos, tg, weights, val, train = _select_classes(pos, tg, weights, val, train, fit_classes)
    torch.manual_seed(cfg.seed)
    if meta is not None:
        epoch0 = meta.training_config["epoch"]
        best = meta.training_config["best_val"]
    else:
        base, _ = checkpoint.load(cfg.init)
        net = _fit_model(base, arch, encoding_version, resumed=False)
        if race_encoding is not None:
            try:
                wider = specialists.with_race_encoding(cast(specialists.ClassNets, net), race_encoding)
                net = specialists.attach_cube_nets(wider, getattr(net, "cube_nets", None))  # cube nets carried
            except specialists.ClassNetsError as e:
                raise StageError(f"--race-encoding: {e}") from None
        if cfg.hidden is not None:
            try:
                wider = specialists.with_hidden(cast(specialists.ClassNets, net), cfg.hidden)
                net = specialists.attach_cube_nets(wider, getattr(net, "cube_nets", None))  # cube nets carried
            except specialists.ClassNetsError as e:
                raise StageError(f"--hidden: {e}") from None
        epoch0, best, meta = 0, float("inf"), None
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    if meta is not None and meta.optimizer_state is not None:
        opt.load_state_dict(meta.optimizer_state)
    settings = {
        "stage": "fit",
        **data_settings,
        "positions": len(pos),
        "data_sha256": digest,
        "val_positions": n_val,
        "epochs": cfg.epochs,
        "arch": arch,
        "encoding": net.config.encoding_version,
    }

    data = EncodedTargets(net, pos, tg, weights)
    plays = DecisionTargets(net, *load_decisions(cfg.decisions)) if cfg.decisions else None
    held_plays = DecisionTargets(net, *load_decisions(cfg.held_out_decisions)) if cfg.held_out_decisions else None

    def val_loss() -> dict:
        with torch.no_grad():
            net.eval()
            out = {"all": float(data.loss(val))}
            if plays is not None:  # over every decision (the plays store's held-out parts judge the fit)
                out["decisions"] = float(plays.loss(np.arange(len(plays))))
            if held_plays is not None:  # never fitted: the curve of the decisions the fit is judged on
                out["held_out_decisions"] = float(held_plays.loss(np.arange(len(held_plays))))
                out["held_out_choice_mp"] = 1000.0 * float(held_plays.choice_loss().mean())
            cls = specialists.classify(pos[val])
            for code, name in enumerate(specialists.CLASSES, start=1):
                rows = val[cls == code]
                if len(rows):
                    out[name] = float(data.loss(rows))
            net.train()
        return out

    if epoch0 == 0 and not cfg.resume:
        append_jsonl(run_dir / "curve.jsonl", {"epoch": 0, "train_loss": None, "val": val_loss(), "seconds": 0.0})
    for epoch in range(epoch0, cfg.epochs):
        t0 = time.perf_counter()
        lr = fit_lr(epoch, cfg.epochs, cfg.lr, cfg.lr_final)
        for group in opt.param_groups:
            group["lr"] = lr
        perm = np.random.default_rng([cfg.seed, epoch]).permutation(train)
        steps = range(0, len(perm), cfg.batch)
        if plays is not None:  # every decision once an epoch, spread over its steps
            chunks = np.array_split(np.random.default_rng([cfg.seed, epoch, 1]).permutation(len(plays)), len(steps))
        losses = []
        for k, i in enumerate(progress_bar(steps, desc=f"fit epoch {epoch + 1}", enabled=not cfg.quiet, leave=False)):
            rows = perm[i : i + cfg.batch]
            loss = data.loss(rows)
            if plays is not None:
                loss = loss + cfg.decision_weight * plays.loss(chunks[k])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        v = val_loss()
        rec = {
            "epoch": epoch + 1,
            "lr": lr,
            "train_loss": float(np.mean(losses)),
            "val": v,
            "seconds": time.perf_counter() - t0,
        }
        append_jsonl(run_dir / "curve.jsonl", rec)
        if v["all"] < best:
            best = v["all"]
            checkpoint.save(
                run_dir / "best.pt", _saved(net), games_trained=0, training_config=settings | {"epoch": epoch + 1}
            )
        record = settings | {"epoch": epoch + 1, "best_val": best, "target_files": len(metas)}
        checkpoint.save(latest, _saved(net), games_trained=0, training_config=record, optimizer=opt)
    return {"epochs": cfg.epochs, "best_val": best, "positions": len(pos), "run_dir": str(run_dir)}
