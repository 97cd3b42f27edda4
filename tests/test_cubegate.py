"""The gate's cube: cubeful gate games (``bgbot gate --cube``) and the money cube decisions of two models judged on
held-out long rollouts (``bgbot gate --cube-reference``, :mod:`bgbot.arena.cubegate`, the record
:class:`bgbot.arena.benchmark.CubeGate`), shared with ``python -m training gate``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from bgbot.arena import benchmark, cubegate, tournament
from bgbot.cli import main
from bgbot.evaluation import checkpoint
from bgbot.evaluation.evaluator import for_cube, position_probabilities
from bgbot.evaluation.network import NetConfig, ValueNet
from bgbot.evaluation.specialists import evaluator_for
from bgbot.formats.store import StoreError, reference_positions

ROOT = Path(__file__).resolve().parents[1]
HOLDOUT = str(ROOT / "models" / "candidates" / "campaign-1-holdout")
ONE, SIX = str(ROOT / "models" / "bgbot-1.pt"), str(ROOT / "models" / "bgbot-6.pt")
WIN = {"pairings": [{"ppg": 0.3, "ci_low": 0.1, "ci_high": 0.5}], "games_per_s": 1.0}
"""A tournament result the gate's ppg rule accepts: the games are not what these tests are about."""


def _tiny(path: Path, seed: int) -> str:
    torch.manual_seed(seed)
    return str(checkpoint.save(path, ValueNet(NetConfig(n_hidden=8)), games_trained=0, training_config={}))


def _errors(model: str, kind: str) -> float:
    """The oracle: a model's mean error of one kind on the held-out rollouts, from the method's parts."""
    pos, ref = reference_positions([HOLDOUT])
    p = position_probabilities(for_cube(evaluator_for(checkpoint.load(model)[0])), pos).astype(np.float64)
    e = cubegate.decision_errors(p, pos, ref)[kind]
    return float(np.nanmean(e))


def test_cube_reference_rejects_a_winner_whose_takes_are_worse(tmp_path, monkeypatch, capsys):
    """bgbot-1's take/pass decisions on the held-out rollouts are worse than bgbot-6's (mean +10.1 mp, 95% interval
    [+1.4, +18.7]): a candidate that wins its games is still rejected, and the record says why."""
    models = tmp_path / "models"
    (models / "candidates").mkdir(parents=True)
    against = shutil.copy(SIX, models / "bgbot-6.pt")
    candidate = shutil.copy(ONE, models / "candidates" / "bgbot-1.pt")  # a candidate of the folder: recorded
    monkeypatch.setattr(tournament, "run", lambda *a, **k: WIN)
    argv = ["gate", str(candidate), "--against", str(against), "--games", "200", "--cube-reference", HOLDOUT, "--json"]
    assert main(argv) == benchmark.EXIT_REJECTED
    d = json.loads(capsys.readouterr().out)
    check = d["cube_check"]
    assert d["accepted"] is False and d["promoted_to"] is None and d["cube"] is False
    assert check["positions"] == 200 and check["not_worse"] is False
    assert check["candidate"]["take"]["decisions"] == 81 and check["against"]["double"]["decisions"] == 118
    assert check["candidate"]["take"]["mean_millipoints"] == pytest.approx(_errors(ONE, "take"), rel=1e-12)
    assert check["against"]["take"]["mean_millipoints"] == pytest.approx(_errors(SIX, "take"), rel=1e-12)
    take = check["diff"]["take"]
    assert take["mean"] == pytest.approx(_errors(ONE, "take") - _errors(SIX, "take"), rel=1e-9)
    assert take["ci_low"] > 0 and take["not_worse"] is False
    assert check["diff"]["double"]["not_worse"] is True  # the doubling decisions: not shown worse
    assert not (models / "bgbot-1.pt").exists()
    line = (models / "README.md").read_text().splitlines()[-1]
    assert "rejected" in line and "cube on 200 held-out rollouts" in line and "(WORSE)" in line


def test_cube_reference_promotes_a_winner_whose_cube_is_not_worse(tmp_path, monkeypatch, capsys):
    models = tmp_path / "models"
    models.mkdir()
    against = shutil.copy(ONE, models / "bgbot-1.pt")
    monkeypatch.setattr(tournament, "run", lambda *a, **k: WIN)
    assert main(["gate", SIX, "--against", str(against), "--games", "200", "--cube-reference", HOLDOUT]) == 0
    out = capsys.readouterr().out
    assert "ACCEPTED" in out and "cube on 200 held-out rollouts" in out and "(not worse)" in out
    assert (models / "bgbot-6.pt").is_file()


def test_bgbot_gate_and_the_training_gate_give_one_cube_record(tmp_path, monkeypatch, capsys):
    from training import stages

    monkeypatch.setattr(tournament, "run", lambda *a, **k: WIN)
    models = tmp_path / "models"
    models.mkdir()
    against = str(shutil.copy(SIX, models / "bgbot-6.pt"))
    main(["gate", ONE, "--against", against, "--games", "200", "--cube-reference", HOLDOUT, "--json"])
    cli = json.loads(capsys.readouterr().out)["cube_check"]
    monkeypatch.setattr(benchmark, "benchmark", lambda *a, **k: dict(WIN["pairings"][0]))
    argv = ["gate", "--candidate", ONE, "--against", against, "--games", "200", "--cube-reference", HOLDOUT]
    assert stages.main([*argv, "--quiet"]) == 1  # rejected: bgbot-1's take decisions are worse than bgbot-6's
    assert json.loads(capsys.readouterr().out)["cube"] == cli


def test_cube_reference_errors_are_one_line_before_any_game(tmp_path, monkeypatch, capsys):
    def no_games(*a, **k):
        raise AssertionError("games played before the cube reference was read")

    monkeypatch.setattr(tournament, "run", no_games)
    models = tmp_path / "models"
    models.mkdir()
    against = str(shutil.copy(SIX, models / "bgbot-6.pt"))
    cases = (
        ([str(tmp_path / "nowhere")], "is not a campaign store"),
        ([HOLDOUT, HOLDOUT + "/"], "is given twice"),
    )
    for stores, message in cases:
        assert main(["gate", ONE, "--against", against, "--games", "200", "--cube-reference", *stores]) == 2
        err = capsys.readouterr().err
        assert message in err and err.startswith("error:") and "Traceback" not in err
    monkeypatch.setattr(cubegate, "MIN_DECISIONS", 119)  # the store holds 118 doubling decisions
    assert main(["gate", ONE, "--against", against, "--games", "200", "--cube-reference", HOLDOUT]) == 2
    assert "118 double decisions, too few to judge the cube" in capsys.readouterr().err
    assert not (models / "README.md").exists()


@pytest.mark.parametrize(
    ("store", "lacks"),
    [
        ("campaign-5", "it is a plays store of checker-play decisions"),
        ("campaign-1", "its rollouts have 1296 trials, fewer than 2592"),
    ],
)
def test_a_store_that_is_not_a_held_out_cube_reference_is_refused_before_any_game(
    tmp_path, monkeypatch, capsys, store, lacks
):
    """A training store as the reference (campaign-5: checker-play decisions, 108 truncated trials; campaign-1: the
    positions fitted, 1,296 trials): one line naming it and what it lacks, from bgbot gate and the training gate,
    before any game."""
    from training import stages

    def no_games(*a, **k):
        raise AssertionError("games played before the cube reference was checked")

    monkeypatch.setattr(tournament, "run", no_games)
    monkeypatch.setattr(benchmark, "benchmark", no_games)
    models = tmp_path / "models"
    models.mkdir()
    against = str(shutil.copy(SIX, models / "bgbot-6.pt"))
    path = str(ROOT / "models" / "candidates" / store)
    want = f"error: {path!r} is not a held-out cube reference (long rollouts of doubling-window positions): {lacks}\n"
    assert main(["gate", ONE, "--against", against, "--games", "200", "--cube-reference", HOLDOUT, path]) == 2
    assert capsys.readouterr().err == want
    argv = ["gate", "--candidate", ONE, "--against", against, "--games", "200", "--cube-reference", path, "--quiet"]
    assert stages.main(argv) == 2
    assert capsys.readouterr().err.endswith(want[len("error: ") :])
    assert not (models / "README.md").exists()


def test_check_reference_names_what_a_positions_store_lacks(tmp_path):
    """A copy of the held-out store's campaign.json, changed one setting at a time: each lack is its own line."""
    settings = json.loads((Path(HOLDOUT) / "campaign.json").read_text())
    cubegate.check_reference(HOLDOUT)
    cases = (
        ({"rules": {"base": "x", "prime": "y"}}, "its plan has no cube rule (cube or race_cube), only base, prime"),
        ({"rollout": settings["rollout"] | {"truncate": 10}}, "its rollouts stop after 10 plies (truncated)"),
        ({"rollout": settings["rollout"] | {"cube": True}}, "its rollouts are cubeful"),
        ({"rollout": settings["rollout"] | {"trials": 2591}}, "its rollouts have 2591 trials, fewer than 2592"),
    )
    for i, (change, lacks) in enumerate(cases):
        store = tmp_path / f"s{i}"
        store.mkdir()
        (store / "campaign.json").write_text(json.dumps(settings | change))
        want = f"^{re.escape(repr(str(store)))} is not a held-out cube reference .*: {re.escape(lacks)}"
        with pytest.raises(StoreError, match=want):
            cubegate.check_reference(str(store))


def test_gate_cube_plays_cubeful_games(tmp_path, capsys):
    """Two different nets: the gate's ppg is the cubeful tournament's with the same dice, not the cubeless one's."""
    a, b = _tiny(tmp_path / "models" / "candidates" / "a.pt", 1), _tiny(tmp_path / "models" / "b.pt", 2)
    assert main(["gate", a, "--against", b, "--games", "200", "--seed", "3", "--workers", "1", "--cube", "--json"]) in (
        0,
        1,
    )
    d = json.loads(capsys.readouterr().out)
    cubeful = tournament.run([f"{a}:0", f"{b}:0"], tournament.TournamentSettings(200, seed=3, cube=True))
    cubeless = tournament.run([f"{a}:0", f"{b}:0"], tournament.TournamentSettings(200, seed=3))
    assert d["cube"] is True and d["cube_check"] is None
    assert d["ppg"] == cubeful["pairings"][0]["ppg"] != cubeless["pairings"][0]["ppg"]
    assert "(cubeful)" in (tmp_path / "models" / "README.md").read_text()


def test_a_reference_store_given_twice_is_refused(monkeypatch):
    monkeypatch.chdir(ROOT)
    holdout = "models/candidates/campaign-1-holdout"
    pos, ref = reference_positions([holdout])
    assert pos.shape == (200, 26) and ref.shape == (200, 5)
    for twice in ([holdout, holdout], [holdout, f"./{holdout}/"], [holdout, str(ROOT / holdout)]):
        with pytest.raises(StoreError, match=r"the reference store .* is given twice.*: give it once"):
            reference_positions(twice)


def test_bgbot_gate_refuses_a_candidate_gated_against_itself(tmp_path, monkeypatch, capsys):
    """``bgbot gate X --against X`` (however the path is written) is one ``error:`` line, status 2, before any game."""

    def no_games(*a, **k):
        raise AssertionError("games played against the candidate itself")

    monkeypatch.setattr(tournament, "run", no_games)
    models = tmp_path / "models"
    models.mkdir()
    x = str(shutil.copy(ONE, models / "x.pt"))
    for against in (x, str(models / "." / "x.pt")):
        assert main(["gate", x, "--against", against, "--games", "200"]) == 2
        assert capsys.readouterr().err == (
            f"error: --against {against!r} is the candidate {x!r}: a candidate cannot be gated against itself\n"
        )
    assert not (models / "README.md").exists()
