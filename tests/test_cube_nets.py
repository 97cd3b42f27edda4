"""Separate cube nets (checkpoint format 3, ``python -m training combine``): the play nets choose every play, the cube
nets answer every cube decision, and each is exactly the model it came from.

The combined model here: bgbot-5's nets for the plays, generation 6's fit F (``models/candidates/gen6``) for the cube.
Every check compares the combined model with the two source models, bit for bit where the same code path runs."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from bgbot.api import Bot, cube_json
from bgbot.arena import cubesearch, ranking
from bgbot.arena.players import NetPlayer
from bgbot.arena.rollout import _RolloutPlayer
from bgbot.evaluation import checkpoint, specialists
from bgbot.evaluation.evaluator import for_cube, position_probabilities
from bgbot.formats import context, positionid
from bgbot.protocols.server import answer_many
from bgbot.protocols.ubgi import Engine
from bgbot.rules.state import CubeState, MatchState
from training.combine import CombineConfig, run_combine
from training.parts import StageError

ROOT = Path(__file__).resolve().parents[1]
PLAY = str(ROOT / "models" / "bgbot-5.pt")
CUBE = str(ROOT / "models" / "candidates" / "gen6" / "bgbot-6-fitF.pt")
# positions where the two models differ (held-out campaign positions: contact, crashed, race; and the start)
POSITIONS = ["ds8BANC2bUAQCA", "4HPwATDgc/ABMA", "c/Y2AACmO4CBGQ", "G7cNEAKYOSzADQ", "ZlvBBCF2AAAgAA", "Ts7UBgDCz88AAA"]


@pytest.fixture(scope="module")
def combined(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("combine") / "combined.pt"
    summary = run_combine(CombineConfig(model=PLAY, cube=CUBE, out=str(out)))
    assert summary["format_version"] == checkpoint.FORMAT_VERSION_CUBE_NETS == 3
    return str(out)


@pytest.fixture(scope="module")
def bots(combined):
    return Bot.load(combined), Bot.load(PLAY), Bot.load(CUBE)


def positions() -> np.ndarray:
    return np.stack([positionid.decode(p) for p in POSITIONS])


def test_the_file_holds_both_models_bit_for_bit(combined):
    net, meta = checkpoint.load(combined)
    play, _ = checkpoint.load(PLAY)
    cube, _ = checkpoint.load(CUBE)
    assert meta.format_version == 3 and meta.checksum_verified
    assert net.cube_nets is not None
    for mine, theirs in ((net, play), (net.cube_nets, cube)):
        a, b = mine.state_dict(), theirs.state_dict()
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    # the cube nets are no parameters of the play nets: training fits the play nets only
    assert sum(p.numel() for p in net.parameters()) == sum(p.numel() for p in play.parameters())
    assert meta.training_config["cube"]["path"] == CUBE and meta.training_config["model"]["path"] == PLAY


def test_play_nets_play_and_cube_nets_decide(bots):
    both, play, cube = bots
    pos = positions()
    p_both = position_probabilities(both.evaluator, pos)
    assert np.array_equal(p_both, position_probabilities(play.evaluator, pos))
    p_cube = position_probabilities(for_cube(both.evaluator), pos)
    assert np.array_equal(p_cube, position_probabilities(cube.evaluator, pos))
    assert np.abs(p_cube - p_both).max() > 0.01  # the two models differ here, so the checks below can fail
    assert for_cube(play.evaluator) is play.evaluator and not play.has_cube_nets and both.has_cube_nets
    for pid in POSITIONS:
        assert both.evaluate(pid) == play.evaluate(pid)
        assert both.cube_probabilities(pid) == cube.evaluate(pid)
        assert both.cube_probabilities(pid, ply=1) == cube.evaluate(pid, ply=1)
        assert both.cube_action(pid) == cube.cube_action(pid)
        match = MatchState(length=7, score=(2, 4))
        assert both.cube_action(pid, match=match) == cube.cube_action(pid, match=match)
    ranked = [p.play for p in both.rank_plays("4HPwATDgc/ABMA", "31", ply=1)]
    assert ranked == [p.play for p in play.rank_plays("4HPwATDgc/ABMA", "31", ply=1)]


def test_every_cube_path_reads_the_cube_nets(bots):
    both, _, cube = bots
    pos = positions()
    states = [(CubeState(), MatchState())] * len(pos)
    for ply in (0, 1):
        a = ranking.decide_cubes(both.evaluator, pos, states, ply)
        b = ranking.decide_cubes(cube.evaluator, pos, states, ply)
        assert np.array_equal(a.probabilities, b.probabilities) and a.decisions == b.decisions
    a = cubesearch.decide_searched(both.evaluator, pos, CubeState(), MatchState(), 1)
    b = cubesearch.decide_searched(cube.evaluator, pos, CubeState(), MatchState(), 1)
    assert [(d.action, d.equities) for d in a] == [(d.action, d.equities) for d in b]  # take_point may be nan
    # tournaments' players and rollout trials
    assert np.array_equal(NetPlayer(both.evaluator).probabilities(pos), NetPlayer(cube.evaluator).probabilities(pos))
    assert np.array_equal(
        _RolloutPlayer(both.evaluator, 0, False).probabilities(pos),
        _RolloutPlayer(cube.evaluator, 0, False).probabilities(pos),
    )
    # the command line's / HTTP API's answer, alone and batched
    ctx = context.parse_position("ds8BANC2bUAQCA")
    mine, theirs = cube_json(both, ctx), cube_json(cube, ctx)
    assert mine.pop("cube_nets") is True and mine == theirs
    assert (
        cube_json(both, ctx, ply=1, cube_search=True)["probabilities"] == cube_json(cube, ctx, ply=1)["probabilities"]
    )
    batch = [answer_many(bot, [("cube", {"position": p}) for p in POSITIONS]) for bot in (both, cube)]
    assert [{k: v for k, v in r.items() if k != "cube_nets"} for r in batch[0]] == batch[1]
    # UBGI
    lines = {}
    for bot in (both, cube):
        engine = Engine(bot)
        out = [
            line
            for cmd in ("newgame", "position gnubgid ds8BANC2bUAQCA", "go role cube")
            for line in engine.handle(cmd)
        ]
        lines[bot] = [" ".join(w for w in line.split() if not w.isdigit()) for line in out if "time_ms" not in line]
        lines[bot] += [line.split("time_ms")[1].split(" ", 2)[2] for line in out if "time_ms" in line]
    assert lines[both] == lines[cube]


def test_a_fit_from_the_combined_model_carries_its_cube_nets(combined, tmp_path):
    from training.fit import FitConfig, run_fit

    targets = ROOT / "models" / "candidates" / "campaign-1-holdout"
    run_fit(FitConfig(init=combined, targets=(str(targets),), run_dir=tmp_path / "fit", epochs=1))
    net, meta = checkpoint.load(tmp_path / "fit" / "latest.pt")
    assert meta.format_version == 3
    cube, _ = checkpoint.load(CUBE)
    assert all(torch.equal(v, cube.state_dict()[k]) for k, v in net.cube_nets.state_dict().items())
    play, _ = checkpoint.load(PLAY)
    assert not all(torch.equal(v, play.state_dict()[k]) for k, v in net.state_dict().items())  # the play nets moved


def test_bad_combinations_are_refused(combined, tmp_path):
    with pytest.raises(StageError, match="is the --model checkpoint"):
        run_combine(CombineConfig(model=combined, cube=CUBE, out=combined))
    other = tmp_path / "other.pt"
    other.write_bytes(b"an unrelated file")
    with pytest.raises(StageError, match="already exists: pass --force"):
        run_combine(CombineConfig(model=PLAY, cube=CUBE, out=str(other)))
    assert other.read_bytes() == b"an unrelated file"
    run_combine(CombineConfig(model=PLAY, cube=CUBE, out=str(other), force=True))
    assert checkpoint.load(other)[1].format_version == 3
    single = tmp_path / "single.pt"
    checkpoint.save(
        single, checkpoint.load(str(ROOT / "models" / "bgbot-1.pt"))[0], games_trained=0, training_config={}
    )
    with pytest.raises(StageError, match="holds one net"):
        run_combine(CombineConfig(model=PLAY, cube=str(single), out=str(tmp_path / "x.pt")))
    with pytest.raises(specialists.ClassNetsError, match="cube nets of their own"):
        net, _ = checkpoint.load(combined)
        specialists.attach_cube_nets(checkpoint.load(PLAY)[0], net)
    # a damaged format-3 file: cube weights changed, or its cube configs gone
    data = torch.load(combined, weights_only=True)
    data["state_dict"]["cube_nets.nets.race.out.bias"] += 1.0
    torch.save(data, tmp_path / "flipped.pt")
    with pytest.raises(checkpoint.CheckpointError, match="SHA-256"):
        checkpoint.load(tmp_path / "flipped.pt")
    data = torch.load(combined, weights_only=True)
    del data["cube_nets"]
    torch.save(data, tmp_path / "nocfg.pt")
    with pytest.raises(checkpoint.CheckpointError, match="format 3 without its 'cube_nets' entry"):
        checkpoint.load(tmp_path / "nocfg.pt")


def test_the_cube_gate_plays_cubeful_games(combined, capsys):
    from bgbot.arena import tournament
    from training import stages

    argv = ["gate", "--candidate", combined, "--against", PLAY, "--games", "40", "--seed", "5", "--cube", "--quiet"]
    assert stages.main(argv) == 1  # rejected (the record printed): exit status 1
    record = json.loads(capsys.readouterr().out)
    assert record["cube_games"] is True
    direct = tournament.run([combined, PLAY], tournament.TournamentSettings(40, seed=5, cube=True))["pairings"][0]
    assert record["results"][PLAY]["ppg"] == direct["ppg"]
    cubeless = tournament.run([combined, PLAY], tournament.TournamentSettings(40, seed=5))["pairings"][0]
    assert cubeless["ppg"] == 0.0  # the same play nets: cubeless duplicate games are all even
    assert direct["ppg"] != 0.0  # the cube decisions differ, and only cubeful games see it


def test_paired_games_compares_two_tournaments_game_by_game(combined, tmp_path, capsys):
    import importlib.util

    from bgbot.arena import tournament
    from bgbot.errors import BgbotError

    spec = importlib.util.spec_from_file_location("paired_games", ROOT / "scripts" / "paired_games.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = {}
    for name, model in (("a", combined), ("b", PLAY)):
        settings = tournament.TournamentSettings(200, seed=3, cube=True, out_dir=tmp_path / name)
        rows[name] = tournament.run([model, str(ROOT / "models" / "bgbot-1.pt")], settings)["pairings"][0]
    first, second = (module.left_points(str(next((tmp_path / n).glob("01_*.mat")))) for n in ("a", "b"))
    assert (
        len(first) == 200
        and first.mean() == pytest.approx(rows["a"]["ppg"])
        and second.mean() == pytest.approx(rows["b"]["ppg"])
    )
    out = module.paired(first, second)
    pairs = first.reshape(-1, 2).mean(1) - second.reshape(-1, 2).mean(1)
    assert (
        out["diff"]
        == pytest.approx(rows["a"]["ppg"] - rows["b"]["ppg"], abs=1e-5)
        == pytest.approx(pairs.mean(), abs=1e-5)
    )
    assert out["ci_low"] <= out["diff"] <= out["ci_high"] and out["pairs_differing"] == int((pairs != 0).sum()) > 0
    same = module.paired(first, first)
    assert same["diff"] == same["ci_low"] == same["ci_high"] == 0.0
    with pytest.raises(BgbotError, match="the same games"):
        module.paired(first, second[:-2])
    with pytest.raises(BgbotError, match="no game file"):
        module.left_points(str(tmp_path / "missing.mat"))


def test_a_combined_model_as_cube_source_gives_its_play_nets_with_a_note(combined, tmp_path, capsys):
    """A format-3 ``--cube`` (what ``fit --init`` of a format-3 model writes: the fitted play nets, the cube nets
    carried) gives its play nets; that its cube nets are left out is said on stderr (it was silent), with their
    recorded source."""
    out = tmp_path / "again.pt"
    run_combine(CombineConfig(model=PLAY, cube=combined, out=str(out)))
    assert capsys.readouterr().err == (
        f"note: --cube {combined!r} has cube nets of its own (checkpoint format 3); its play nets become the cube "
        f"nets, its cube nets are left out (they came from {CUBE!r})\n"
    )
    net, _ = checkpoint.load(out)
    play, _ = checkpoint.load(PLAY)  # the combined file's play nets are PLAY's
    a, b = net.cube_nets.state_dict(), play.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    run_combine(CombineConfig(model=PLAY, cube=CUBE, out=str(out), force=True))  # a format-2 source: no note
    assert capsys.readouterr().err == ""


def test_a_format_2_file_holding_cube_weights_is_refused(combined, tmp_path):
    """Format 2 has no cube nets: weights under ``cube_nets.`` there do not fit (they were dropped in silence)."""
    data = torch.load(combined, weights_only=True)
    data["format_version"] = checkpoint.FORMAT_VERSION_CLASS_NETS
    torch.save(data, tmp_path / "v2.pt")
    with pytest.raises(checkpoint.CheckpointError, match="specialist nets do not fit") as refused:
        checkpoint.load(tmp_path / "v2.pt")
    assert "'cube_nets.nets.contact.hidden.weight' unexpected" in str(refused.value)
