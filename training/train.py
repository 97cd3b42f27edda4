"""The training run: self-play TD(lambda), checkpoints, resume, periodic benchmarks against pubeval.

A run lives in a run directory (``runs/NAME/``, git-ignored):

* ``latest.pt`` -- the newest checkpoint, rewritten atomically (what ``--resume`` continues from);
* ``checkpoints/games-NNNNNNNN.pt`` -- a copy at every ``checkpoint_every`` games;
* ``log.jsonl`` -- one line per checkpoint (games, loss, games/s, result mix);
* ``eval.jsonl`` and ``progress.png`` -- benchmarks against pubeval and their plot.

Resuming restores the network, the optimiser, the games trained and the learning-rate schedule; the dice continue
from a generator seeded by ``(seed, games trained)``. Games that were in flight when the run stopped are not
counted and simply start again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from bgbot.errors import BgbotError
from bgbot.evaluation import checkpoint, encoding
from bgbot.evaluation.network import Evaluator, NetConfig, ValueNet, set_threads

from .config import TrainConfig
from .selfplay import SelfPlay

EvaluateFn = Callable[[ValueNet, int], dict]
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


def _start(config: TrainConfig, run_dir: Path, resume: bool):
    """Build or restore the net, optimiser and games trained."""
    latest = run_dir / "latest.pt"
    if resume and not latest.exists():
        raise RunError(f"nothing to resume: {latest} does not exist (start the run without --resume)")
    if resume:
        net, meta = checkpoint.load(latest)
        if net.config.n_hidden != config.n_hidden or net.config.activation != config.activation:
            raise RunError(
                f"{latest} holds a net {net.config} that does not match the config (n_hidden "
                f"{config.n_hidden}, activation {config.activation!r})"
            )
        net.train()
        opt = torch.optim.Adam(net.parameters(), lr=config.lr)
        if meta.optimizer_state is not None:
            opt.load_state_dict(meta.optimizer_state)
        return net, opt, meta.games_trained
    if latest.exists():
        raise RunError(
            f"{run_dir} already holds a run (latest.pt); pass --resume to continue it or pick another run directory"
        )
    torch.manual_seed(config.seed)
    if config.specialists:
        from bgbot.evaluation import specialists

        if config.init_from:
            base, _ = checkpoint.load(config.init_from)
            net = base if getattr(base, "is_class_nets", False) else specialists.from_single(base)
        else:
            net = specialists.fresh(config.n_hidden, config.activation)
        net.train()
        return net, torch.optim.Adam(net.parameters(), lr=config.lr), 0
    net = ValueNet(NetConfig(n_inputs=encoding.N_FEATURES, n_hidden=config.n_hidden, activation=config.activation))
    return net, torch.optim.Adam(net.parameters(), lr=config.lr), 0


def _append_jsonl(path: Path, record: dict) -> None:
    with path.open("a") as f:
        f.write(json.dumps(record) + "\n")


def train(
    config: TrainConfig,
    run_dir: str | Path,
    *,
    resume: bool = False,
    evaluate: EvaluateFn | None = None,
    progress: bool = True,
) -> RunState:
    """Train a value network by self-play until ``config.games`` games have been played.

    Args:
        config: the run's :class:`TrainConfig`.
        run_dir: the run directory (created if missing).
        resume: continue from ``run_dir/latest.pt``.
        evaluate: benchmark called every ``config.eval_every`` games and at the end (``None``: no benchmarks).
        progress: show a tqdm bar (games, games/s, loss, latest ppg against pubeval).

    Raises:
        RunError: ``run_dir`` holds a run and ``resume`` is false, ``resume`` without ``run_dir/latest.pt``, or a
            checkpoint that does not match the config.
        bgbot.evaluation.checkpoint.CheckpointError: ``latest.pt`` is corrupt.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    set_threads(config.threads or None)
    net, opt, games = _start(config, run_dir, resume)
    evaluator = Evaluator(net)
    rng = np.random.default_rng([config.seed, games])
    selfplay = SelfPlay(config.games_in_flight, rng, config.td_lambda, config.lambda_horizon)
    start_games, t0 = games, time.perf_counter()
    next_ckpt = (games // config.checkpoint_every + 1) * config.checkpoint_every
    next_eval = (games // config.eval_every + 1) * config.eval_every if config.eval_every else None
    last_eval, losses = None, []

    def save() -> None:
        meta_cfg = config.to_dict()
        checkpoint.save(run_dir / "latest.pt", net, games_trained=games, training_config=meta_cfg, optimizer=opt)
        checkpoint.save(
            run_dir / "checkpoints" / f"games-{games:08d}.pt", net, games_trained=games, training_config=meta_cfg
        )
        elapsed = time.perf_counter() - t0
        _append_jsonl(
            run_dir / "log.jsonl",
            {
                "games": games,
                "loss": float(np.mean(losses)) if losses else None,
                "games_per_second": (games - start_games) / max(elapsed, 1e-9),
                "single_gammon_backgammon": selfplay.results.tolist(),
            },
        )
        losses.clear()

    def bench() -> dict:
        record = {"games_trained": games, **evaluate(net, games)}
        _append_jsonl(run_dir / "eval.jsonl", record)
        return record

    bar = tqdm(total=config.games, initial=games, unit="game", disable=not progress, smoothing=0.05)
    while games < config.games:
        positions, targets = selfplay.step(evaluator)
        if len(positions):
            for group in opt.param_groups:
                group["lr"] = _learning_rate(config, games)
            net.train()
            if getattr(net, "is_class_nets", False):
                loss = net.loss(positions, targets)
            else:
                out = net(torch.from_numpy(encoding.encode(positions)))
                loss = torch.nn.functional.mse_loss(out, torch.from_numpy(targets))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        done = start_games + selfplay.games_finished - games
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
