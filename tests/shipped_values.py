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
    # A stand-in for the specialists model of issue 12 (runs/exp/spec-v2-cos/best.pt, not committed): remove this
    # entry when the final model ships.
    "a6ff44538123d57c45ac093488f55e492781516e6d0c9e08bf388482c6b7438a": {
        "name": "specialists stand-in (spec-v2-cos)",
        "format_version": 2,
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
