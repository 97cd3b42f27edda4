"""The shipped model: it loads as the default, is the one ``tests/shipped_values.py`` describes, and plays far better
than chance."""

from __future__ import annotations

from importlib import resources

import numpy as np

from bgbot.api import DEFAULT_MODEL
from bgbot.arena.players import NetPlayer, RandomPlayer
from bgbot.arena.tournament import play_games
from bgbot.evaluation import checkpoint, specialists
from bgbot.evaluation.specialists import evaluator_for
from tests.shipped_values import shipped


def test_default_model_describes_itself():
    with resources.as_file(DEFAULT_MODEL) as path:
        net, meta = checkpoint.load(path)
    want = shipped(meta.checksum)
    assert meta.checksum_verified and meta.git_revision
    assert meta.format_version == want["format_version"]
    assert isinstance(net, specialists.ClassNets) == (meta.format_version in (checkpoint.FORMAT_VERSION_CLASS_NETS, 3))
    assert (getattr(net, "cube_nets", None) is not None) == (meta.format_version == checkpoint.FORMAT_VERSION_CUBE_NETS)
    assert meta.encoding_version == want["encoding_version"] == net.config.encoding_version
    assert meta.encoding_version in specialists.ENCODERS
    assert meta.games_trained == want["games_trained"]
    assert meta.training_config.get("stage", "td") == want["stage"]
    if want["stage"] == "td":
        assert meta.training_config["n_hidden"] == net.config.n_hidden


def test_default_model_beats_a_random_player_in_95_percent_of_1000_games():
    with resources.as_file(DEFAULT_MODEL) as path:
        net, meta = checkpoint.load(path)
    result = play_games(
        NetPlayer(evaluator_for(net), 0, "bgbot"), RandomPlayer(seed=11), seed=11, pairing=0, start=0, stop=500
    )  # 500 duplicate pairs = 1,000 games
    wins = np.asarray(result.points_a) > 0
    assert len(wins) == 1000
    assert wins.mean() >= shipped(meta.checksum)["win_rate_vs_random"]
