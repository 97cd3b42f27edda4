"""The light layers stay light: rules, formats, cube, pubeval and the pubeval/random players never import torch.

Each check runs in a fresh interpreter (this one has imported torch long ago). The import-linter contract in
pyproject.toml forbids the static imports; this test also catches imports made at run time (inside functions).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LIGHT = """
import importlib, pkgutil, sys
import numpy as np
import bgbot, bgbot.rules, bgbot.formats, bgbot.cube
for pkg in (bgbot.rules, bgbot.formats, bgbot.cube):
    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{info.name}")
import bgbot.evaluation.pubeval, bgbot.evaluation.classes, bgbot.evaluation.selection
from bgbot.arena.players import make_player
from bgbot.rules import board
from bgbot.formats import plays, positionid
start = board.starting_position()
for spec in ("pubeval", "random"):  # choosing a play is part of what must stay light
    chosen = make_player(spec, seed=1).choose(np.stack([start, start]), np.array([[3, 1], [6, 6]], dtype=np.int8))
    assert chosen.shape == (2, 26), chosen.shape
assert plays.legal_plays(positionid.encode(start), "31")[0].play == "24/23 24/21"
assert bgbot.legal_plays is not None and bgbot.CubeState is not None  # the lazy re-exports of light names
loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
print("torch modules:", len(loaded))
"""


def _run(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_rules_formats_cube_and_pubeval_players_do_not_import_torch():
    assert _run(LIGHT) == "torch modules: 0"


def test_the_check_sees_torch_when_a_network_is_imported():
    """The control: the same check does see torch once the network module is imported."""
    out = _run(LIGHT + "import bgbot.evaluation.network\nprint('torch' in sys.modules)\n")
    assert out.splitlines() == ["torch modules: 0", "True"]
