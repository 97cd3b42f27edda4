"""Test-suite fixtures shared by several test modules."""

from __future__ import annotations

import pytest

from bgbot.evaluation import bearoff


@pytest.fixture(scope="session")
def bearoff_db() -> bearoff.Databases:
    """The bear-off databases, read from the on-disk cache (``bearoff.cache_path()``) or built there once; one load
    per test process (xdist worker), shared by every test that evaluates positions."""
    return bearoff.load()
