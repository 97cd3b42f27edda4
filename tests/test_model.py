"""The shipped model: it loads as the default, describes itself, and plays far better than chance."""

from __future__ import annotations

from importlib import resources

import numpy as np

from bgbot.api import DEFAULT_MODEL
from bgbot.arena.players import NetPlayer, RandomPlayer
from bgbot.arena.tournament import play_games
from bgbot.evaluation import checkpoint, encoding
from bgbot.evaluation.network import Evaluator


def test_default_model_describes_itself():
    with resources.as_file(DEFAULT_MODEL) as path:
        net, meta = checkpoint.load(path)
    assert meta.encoding_version == encoding.ENCODING_VERSION
    assert meta.games_trained >= 100_000
    assert meta.training_config["n_hidden"] == net.config.n_hidden
    assert meta.git_revision


def test_default_model_beats_a_random_player_in_95_percent_of_1000_games():
    with resources.as_file(DEFAULT_MODEL) as path:
        net, _ = checkpoint.load(path)
    result = play_games(
        NetPlayer(Evaluator(net), 0, "bgbot"), RandomPlayer(seed=11), seed=11, pairing=0, start=0, stop=500
    )  # 500 duplicate pairs = 1,000 games
    wins = np.asarray(result.points_a) > 0
    assert len(wins) == 1000
    assert wins.mean() >= 0.95
