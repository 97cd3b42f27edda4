"""Periodic benchmarks of a training run against pubeval, through the tournament harness."""

from __future__ import annotations

import json
from pathlib import Path

from bgbot.arena.benchmark import benchmark, plot_progress
from bgbot.evaluation.network import ValueNet
from bgbot.evaluation.specialists import ClassNets, evaluator_for

from .config import TrainConfig


def pubeval_benchmark(config: TrainConfig, run_dir: str | Path):
    """An ``evaluate(net, games_trained) -> record`` for :func:`training.train.train`.

    Each call plays ``config.eval_games`` duplicate games (the same dice every time: seed ``config.seed``) of the
    net at 0-ply against pubeval and redraws ``run_dir/progress.png`` from every record in ``eval.jsonl`` so far
    plus the new one.
    """
    run_dir = Path(run_dir)

    def evaluate(net: ValueNet | ClassNets, games_trained: int) -> dict:
        record = benchmark(evaluator_for(net), "pubeval", games=config.eval_games, seed=config.seed)
        log = run_dir / "eval.jsonl"
        past = [json.loads(s) for s in log.read_text().splitlines()] if log.exists() else []
        plot_progress(past + [{"games_trained": games_trained, **record}], run_dir / "progress.png")
        net.train()
        return record

    return evaluate
