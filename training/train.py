"""The training run: self-play TD(lambda), checkpoints, resume, periodic benchmarks against pubeval.

A run lives in a run directory (``runs/NAME/``, git-ignored):

* ``latest.pt`` -- the newest checkpoint, rewritten atomically (what ``--resume`` continues from);
* ``checkpoints/games-NNNNNNNN.pt`` -- a copy at every ``checkpoint_every`` games;
* ``log.jsonl`` -- one line per checkpoint (games, loss, games/s, result mix);
* ``eval.jsonl`` and ``progress.png`` -- benchmarks against pubeval and their plot.

Resuming restores the network, the optimiser, the games trained and the learning-rate schedule; the dice continue
from a generator seeded by ``(seed, games trained)``. Games that were in flight when the run stopped are not
counted and simply start again. Resuming a finished run (``latest.pt`` at ``games``) does nothing and writes nothing.

The game count is exact: games that finish in the same ply as the last counted one are not counted, so a run ends at
``games`` and its final checkpoint is written once. A new run refuses a directory that holds another run's
``latest.pt`` or logs unless ``force``, which deletes them first.

Nothing saved is lost: checkpoints are written atomically (:func:`bgbot.evaluation.checkpoint.save`) and each log
line is appended with one write and fsynced. A failed write (disk full, ...) stops the run with a
:class:`RunError` that says which checkpoint ``latest.pt`` still holds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from bgbot.errors import BgbotError
from bgbot.evaluation import checkpoint, encoding
from bgbot.evaluation.network import EvaluationError, NetConfig, ValueNet, set_threads
from bgbot.evaluation.prune import MoveFilter, PrunedEvaluator
from bgbot.evaluation.specialists import ENCODERS, ClassNets, evaluator_for
from bgbot.progress import progress_bar

from .config import TrainConfig
from .jsonl import append_jsonl
from .selfplay import Encoder, SelfPlay

EvaluateFn = Callable[[ValueNet | ClassNets, int], dict]
"""``evaluate(net, games_trained) -> record``; the record holds at least ``ppg``, ``ci_low``, ``ci_high``."""


class RunError(BgbotError):
    """A run directory that cannot be started or resumed as asked."""


@dataclass
class RunState:
    """What a finished call to :func:`train` reports."""

    games_trained: int
    seconds: float
    games_per_second: float
    last_eval: dict | None


def _learning_rate(config: TrainConfig, games: int) -> float:
    """Geometric decay from ``lr`` at 0 games to ``lr_final`` at ``config.games``."""
    frac = min(games / config.games, 1.0)
    return config.lr * (config.lr_final / config.lr) ** frac


def adam(params, lr: float) -> torch.optim.Adam:
    """The training runs' optimiser: Adam with torch's defaults (betas 0.9, 0.999; eps 1e-8), in its fused kernel
    (one pass over all the parameters per step instead of a dozen small tensor ops each: the same updates up to
    float32 rounding, about half the time of the default per-tensor loop on this CPU)."""
    return torch.optim.Adam(params, lr=lr, fused=True)


def _fused(opt: torch.optim.Optimizer) -> torch.optim.Optimizer:
    """``opt`` set back to the fused kernel after :meth:`torch.optim.Optimizer.load_state_dict` (which takes the saved
    groups' settings, and a checkpoint written before the fused kernel asks for the per-tensor loop)."""
    for group in opt.param_groups:
        group["fused"], group["foreach"] = True, None
    return opt


RUN_FILES = ("latest.pt", "log.jsonl", "eval.jsonl", "progress.png")
"""What a run leaves in its directory (besides ``checkpoints/``); a new run refuses a directory holding any of them."""


def _clear(run_dir: Path) -> None:
    """Delete an earlier run's files (``--force``)."""
    for name in RUN_FILES:
        (run_dir / name).unlink(missing_ok=True)
    for old in (run_dir / "checkpoints").glob("games-*.pt"):
        old.unlink()


def _start(config: TrainConfig, run_dir: Path, resume: bool, force: bool = False):
    """Build or restore the net, optimiser and games trained."""
    latest = run_dir / "latest.pt"
    if force and not resume:
        _clear(run_dir)
    if resume and not latest.exists():
        raise RunError(f"nothing to resume: {latest} does not exist (start the run without --resume)")
    if resume:
        net, meta = checkpoint.load(latest)
        if isinstance(net, ClassNets) != config.specialists:
            held, wanted = ("specialist nets", "one net") if isinstance(net, ClassNets) else ("one net", "specialists")
            raise RunError(
                f"{latest} holds {held} and the config trains {wanted} (specialists = "
                f"{str(config.specialists).lower()}): resume it with the config it was started with"
            )
        if net.config.n_hidden != config.n_hidden or net.config.activation != config.activation:
            raise RunError(
                f"{latest} holds a net {net.config} that does not match the config (n_hidden "
                f"{config.n_hidden}, activation {config.activation!r})"
            )
        net.train()
        opt = adam(net.parameters(), config.lr)
        if meta.optimizer_state is not None:
            opt.load_state_dict(meta.optimizer_state)
            _fused(opt)
        return net, opt, meta.games_trained
    if latest.exists():
        raise RunError(
            f"{run_dir} already holds a run (latest.pt); pass --resume to continue it, --force to start over "
            "(deleting it), or pick another run directory"
        )
    held = [name for name in RUN_FILES if (run_dir / name).exists()]
    if held or any((run_dir / "checkpoints").glob("games-*.pt")):
        raise RunError(
            f"{run_dir} holds another run's files ({', '.join(held) or 'checkpoints/'}) but no latest.pt to resume; "
            "pass --force to delete them and start over, or pick another run directory"
        )
    torch.manual_seed(config.seed)
    if config.specialists:
        from bgbot.evaluation import specialists

        if config.init_from:
            base, _ = checkpoint.load(config.init_from)
            nets = base if isinstance(base, ClassNets) else specialists.from_single(base)
        else:
            nets = specialists.fresh(config.n_hidden, config.activation)
        nets.train()
        return nets, adam(nets.parameters(), config.lr), 0
    net = ValueNet(NetConfig(n_inputs=encoding.N_FEATURES, n_hidden=config.n_hidden, activation=config.activation))
    return net, adam(net.parameters(), config.lr), 0


def encoder_for(net: ValueNet | ClassNets) -> Encoder:
    """The inputs ``net`` reads: ``encode(positions (N, 26) int8) -> {encoding version: (N, n_inputs) float32}`` for
    each encoding of its nets (:data:`bgbot.evaluation.specialists.ENCODERS`), what :func:`td_loss` takes as
    ``inputs`` (and :class:`bgbot_training.selfplay.SelfPlay` computes ahead with ``encode``)."""
    nets = list(net.configs().values()) if isinstance(net, ClassNets) else [net.config]
    versions = sorted({cfg.encoding_version for cfg in nets})

    def encode(positions: np.ndarray) -> dict[str, np.ndarray]:
        return {version: ENCODERS[version][0](positions) for version in versions}

    return encode


def td_loss(
    net: ValueNet | ClassNets,
    positions: np.ndarray,
    targets: np.ndarray,
    inputs: dict[str, np.ndarray] | None = None,
) -> torch.Tensor:
    """The TD step's loss (autograd on): mean squared error of ``net``'s probabilities of ``positions`` ``(K, 26)``
    int8 against ``targets`` ``(K, 5)`` float32; specialist nets send each position through its class's net
    (:meth:`bgbot.evaluation.specialists.ClassNets.loss`), one net reads its encoding (v1). ``inputs``: the positions'
    inputs by encoding version if already computed (:func:`encoder_for`, ``SelfPlay.inputs``); those missing are
    computed here."""
    inputs = dict(inputs or {})
    if isinstance(net, ClassNets):
        return net.loss_encoded(positions, targets, inputs)
    version = net.config.encoding_version
    x = inputs[version] if version in inputs else ENCODERS[version][0](positions)
    out = net(torch.from_numpy(x))
    return torch.nn.functional.mse_loss(out, torch.from_numpy(targets))


def td_update(
    net: ValueNet | ClassNets,
    opt: torch.optim.Optimizer,
    positions: np.ndarray,
    targets: np.ndarray,
    inputs: dict[str, np.ndarray] | None = None,
) -> float:
    """One learning step of self-play training: :func:`td_loss` of ``positions`` ``(K, 26)`` int8 against their
    lambda-return ``targets`` ``(K, 5)`` float32 (``inputs`` as :func:`td_loss` takes them), then, if the loss is
    finite, one step of ``opt``. Returns the loss (mean squared error, a float); a NaN or infinite loss leaves the
    weights as they were, for the caller to report."""
    if not net.training:  # the mode is only hygiene (the nets have no dropout or batch norm); setting it costs
        net.train()
    loss = td_loss(net, positions, targets, inputs)
    value = loss.item()
    if math.isfinite(value):
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return value


def train(
    config: TrainConfig,
    run_dir: str | Path,
    *,
    resume: bool = False,
    evaluate: EvaluateFn | None = None,
    progress: bool = True,
    force: bool = False,
    move_filter: MoveFilter | None = None,
) -> RunState:
    """Train a value network by self-play until ``config.games`` games have been played.

    Args:
        config: the run's :class:`TrainConfig`.
        run_dir: the run directory (created if missing).
        resume: continue from ``run_dir/latest.pt``.
        evaluate: benchmark called every ``config.eval_every`` games and at the end (``None``: no benchmarks).
        progress: show a tqdm bar (games, games/s, loss, latest ppg against pubeval).
        force: start a new run in a directory that holds another run's files, deleting them.
        move_filter: self-play's checker play through this move filter (:class:`bgbot.evaluation.prune.MoveFilter`:
            only its candidates evaluated; the TD targets are the chosen plays' values as before). A filter is fitted
            to one model's equities (:func:`bgbot.evaluation.prune.filter_for`) and stays fixed while the net learns:
            meant for runs that start from that model's weights. ``None`` (the default): every play evaluated.

    Raises:
        RunError: ``run_dir`` holds a run and neither ``resume`` nor ``force``, ``resume`` without
            ``run_dir/latest.pt``, a checkpoint that does not match the config, or a checkpoint or log that could not
            be written (the message says what ``latest.pt`` still holds).
        bgbot.evaluation.checkpoint.CheckpointError: ``latest.pt`` is corrupt.
    """
    run_dir = Path(run_dir)
    if str(run_dir) in ("", "."):
        raise RunError("give a run directory of its own (e.g. runs/NAME), not the current directory")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RunError(f"cannot create the run directory {str(run_dir)!r}: {err.strerror or err}") from err
    set_threads(config.threads or None)
    net, opt, games = _start(config, run_dir, resume, force)
    if resume and games >= config.games:  # a finished run: nothing to do, nothing written
        return RunState(games, 0.0, 0.0, None)
    evaluator = evaluator_for(net)
    if move_filter is not None:
        evaluator = PrunedEvaluator(evaluator, move_filter)
    rng = np.random.default_rng([config.seed, games])
    selfplay = SelfPlay(config.games_in_flight, rng, config.td_lambda, config.lambda_horizon, encoder_for(net))
    start_games, t0 = games, time.perf_counter()
    next_ckpt = (games // config.checkpoint_every + 1) * config.checkpoint_every
    next_eval = (games // config.eval_every + 1) * config.eval_every if config.eval_every else None
    last_eval: dict | None = None
    losses: list[float] = []
    saved = {"games": games if resume else None}  # what latest.pt holds

    def kept() -> str:
        if saved["games"] is None:
            return "no checkpoint was saved yet"
        return f"{run_dir / 'latest.pt'} is intact and holds {saved['games']} games (resume with --resume)"

    def save() -> None:
        meta_cfg = config.to_dict()
        try:
            checkpoint.save(run_dir / "latest.pt", net, games_trained=games, training_config=meta_cfg, optimizer=opt)
            saved["games"] = games
            checkpoint.save(
                run_dir / "checkpoints" / f"games-{games:08d}.pt", net, games_trained=games, training_config=meta_cfg
            )
            elapsed = time.perf_counter() - t0
            append_jsonl(
                run_dir / "log.jsonl",
                {
                    "games": games,
                    "loss": float(np.mean(losses)) if losses else None,
                    "games_per_second": (games - start_games) / max(elapsed, 1e-9),
                    "single_gammon_backgammon": selfplay.results.tolist(),
                },
            )
        except (checkpoint.CheckpointWriteError, OSError) as err:
            raise RunError(f"training stopped at {games} games: {err}; {kept()}") from err
        losses.clear()

    def bench() -> dict:
        assert evaluate is not None
        record = {"games_trained": games, **evaluate(net, games)}
        try:
            append_jsonl(run_dir / "eval.jsonl", record)
        except OSError as err:
            raise RunError(f"training stopped at {games} games: cannot write eval.jsonl: {err}; {kept()}") from err
        return record

    bar = progress_bar(total=config.games, initial=games, unit="game", enabled=progress, smoothing=0.05)
    while games < config.games:
        try:
            positions, targets = selfplay.step(evaluator)
        except EvaluationError as err:
            raise RunError(f"training diverged at {games} games: {err}; {kept()}") from err
        if len(positions):
            for group in opt.param_groups:
                group["lr"] = _learning_rate(config, games)
            loss = td_update(net, opt, positions, targets, selfplay.inputs)
            if not math.isfinite(loss):
                raise RunError(f"training diverged at {games} games: the loss is {loss}; {kept()}")
            losses.append(loss)
        done = min(start_games + selfplay.games_finished, config.games) - games  # exact: extras are not counted
        if done:
            games += done
            bar.update(done)
            postfix = {"loss": f"{np.mean(losses[-50:]):.4f}" if losses else "-"}
            if last_eval:
                postfix["ppg_vs_pubeval"] = f"{last_eval['ppg']:+.3f}"
            bar.set_postfix(postfix, refresh=False)
        if games >= next_ckpt:
            save()
            next_ckpt += config.checkpoint_every
        if next_eval is not None and evaluate is not None and games >= next_eval:
            last_eval = bench()
            next_eval += config.eval_every
    bar.close()
    if games != next_ckpt - config.checkpoint_every:  # not saved at this count yet
        save()
    if evaluate is not None and (last_eval is None or last_eval["games_trained"] != games):
        last_eval = bench()
    seconds = time.perf_counter() - t0
    return RunState(games, seconds, (games - start_games) / max(seconds, 1e-9), last_eval)
