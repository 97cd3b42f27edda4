"""What the tests expect of the shipped model (``bgbot/data/default_model.pt``), in one table keyed by the SHA-256 of
its weights (``CheckpointMeta.checksum``), so that shipping a new model means adding one entry here (and refreshing the
README's examples, which show the shipped model's own numbers).

Every other test is independent of the shipped weights: it uses the default model only as "a trained model" (values it
checks hold for any decent net, or are compared with the same model run another way), or it loads ``BGBOT_1``
(the previous generation, kept in ``models/``) where it tests one-net machinery or needs fixed weights.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BGBOT_1 = ROOT / "models" / "bgbot-1.pt"
"""bgbot-1, one 203-input net (checkpoint format 1): the fixed model of the one-net tests."""
DEFAULT_MODEL_PATH = ROOT / "bgbot" / "data" / "default_model.pt"

SHIPPED: dict[str, dict] = {
    "41f8992d538c1b89eda2cfa742837a02c5bdc67c12114373dec763b17926c19b": {
        "name": "bgbot-1",
        "format_version": 1,
        "encoding_version": "tesauro196+expert7/v1",
        "games_trained": 400_005,
        "stage": "td",
        "win_rate_vs_random": 0.95,  # at least, 0-ply over 1,000 duplicate games (seed 11)
    },
    "061db00ec653d0d25f0225e057cba328d692ca7d889de576a990cca689b6f4d1": {
        "name": "bgbot-2",
        "format_version": 2,
        "encoding_version": "tesauro196+expert7+gnubg50/v2",
        "games_trained": 0,  # fitted to 2-ply targets (training stage "fit"), started from bgbot-1's 400,005 TD games
        "stage": "fit",
        "win_rate_vs_random": 0.95,
    },
    "db67cacd54f414ea88bb6203812f7782a303fa298a598461028951720e575e08": {
        "name": "bgbot-5",
        "format_version": 2,
        "encoding_version": "tesauro196+expert7+gnubg50/v2",
        "games_trained": 0,  # fitted to 2-ply targets of bgbot-1, bgbot-2 and bgbot-4, started from bgbot-1
        "stage": "fit",
        "win_rate_vs_random": 0.95,
    },
    "d49a07c600eccf2383002a6eb4ab2bcbe3ed9ff4c156b724d9dc5e7bd08a7702": {
        "name": "bgbot-6",
        "format_version": 3,  # bgbot-5's nets for the plays, cube nets fitted to the campaign's rollouts
        "encoding_version": "tesauro196+expert7+gnubg50/v2",
        "games_trained": 0,
        "stage": "combine",
        "win_rate_vs_random": 0.95,
    },
    "eda8b4d66d01f56aa5ebd97363d360fa9bf6c83472cd1050545524720996b86e": {
        "name": "bgbot-7",
        "format_version": 3,  # bgbot-6 with its play nets fitted to the plays campaign's rollouts, its cube nets kept
        "encoding_version": "tesauro196+expert7+gnubg50/v2",
        "games_trained": 0,
        "stage": "fit",
        "win_rate_vs_random": 0.95,
    },
}


def shipped(checksum: str | None) -> dict:
    """The expectations of the shipped model whose weights have SHA-256 ``checksum``; a model missing from
    :data:`SHIPPED` fails the test, saying what to add."""
    if checksum not in SHIPPED:
        pytest.fail(
            f"the shipped model (weights SHA-256 {checksum}) has no entry in tests/shipped_values.py: add one "
            "(see scripts/refresh_shipped_values.py) and refresh the README's examples"
        )
    return SHIPPED[checksum]
