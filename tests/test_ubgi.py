"""bgbot ubgi: every command of UBGI v0.1 Level 0-2 and v0.2's set/get/keys, errors, and a tournament through the
protocol that must equal the direct player's, move for move."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bgbot.api import Bot
from bgbot.arena import tournament
from bgbot.formats.notation import parse_play
from bgbot.formats.positionid import decode, encode
from bgbot.protocols.ubgi import Engine, format_steps
from bgbot.rules.board import flip

MODEL = str(Path(__file__).resolve().parents[1] / "bgbot" / "data" / "default_model.pt")  # what "bgbot ubgi" plays

START = "4HPwATDgc/ABMA"
BGBOT = [sys.executable, "-m", "bgbot.cli"]


@pytest.fixture(scope="module")
def bot():
    return Bot.load()


@pytest.fixture
def engine(bot):
    return Engine(bot)


def answer(engine, *lines):
    out = []
    for line in lines:
        out += engine.handle(line)
    return out


def test_handshake_and_options(engine):
    hello = answer(engine, "ubgi")
    assert hello[0] == "id name bgbot" and hello[-1] == "ubgiok"
    names = {line.split()[2] for line in hello if line.startswith("option name")}
    assert {"Threads", "Seed", "Deterministic", "EvalMode", "Model", "Ply"} <= names
    assert answer(engine, "isready") == ["readyok"]
    assert answer(engine, "setoption name Seed value 7", "setoption name Deterministic value true") == []
    assert answer(engine, "setoption name Threads value 1", "setoption name EvalMode value cubeless") == []
    assert engine.options.seed == 7 and engine.options.evalmode == "cubeless"
    assert answer(engine, "setoption name Ply value 1") == [] and engine.options.ply == 1
    assert answer(engine, "get engine.ply") == ["value engine.ply 2"]  # v0.2: root-inclusive
    for bad in ("setoption name Ply value 9", "setoption name EvalMode value fast", "setoption name Seed value x"):
        assert answer(engine, bad)[0].startswith("error bad_argument")
    assert answer(engine, "setoption name Colour value red")[0].startswith("error unsupported_feature")
    assert answer(engine, "setoption Ply 1")[0].startswith("error bad_argument expected")


def test_v02_keys(engine):
    keys = answer(engine, "keys")
    assert keys[-1] == "keysok" and "key engine.ply int 1..3 1" in keys[0]
    assert answer(engine, "set engine.ply 3", "get engine.ply") == ["value engine.ply 3"] and engine.options.ply == 2
    assert answer(engine, "set game.length 5", "get game.type") == ["value game.type match"]
    assert answer(engine, "set engine.ply 0")[0].startswith("error bad_argument engine.ply must be in 1..3")
    assert answer(engine, "set engine.ply \uff12") == ["error bad_argument engine.ply must be an integer, got '\uff12'"]
    assert answer(engine, "set engine.nonsense 1")[0].startswith("error unsupported_feature")
    assert answer(engine, "set game.variant nackgammon")[0].startswith("error unsupported_feature")
    assert answer(engine, "get")[0].startswith("error bad_argument")


def test_level0_chequer_play_is_the_best_ranked_play(engine, bot):
    out = answer(engine, "newgame", f"position gnubgid {START}", "dice 3 1", "go role chequer")
    assert [line.split()[0] for line in out] == ["info", "bestmoveid", "bestmove"]
    best = bot.rank_plays(START, "31")[0]
    assert out[2] == "bestmove 8/5 6/5"  # single-die steps in gnubg's order, no counts or hit marks
    assert out[1] == f"bestmoveid {best.position_id}"
    info = out[0].split()
    assert float(info[info.index("eq") + 1]) == pytest.approx(best.equity, abs=1e-5)
    assert float(info[info.index("pwin") + 1]) == pytest.approx(best.probabilities.win, abs=1e-5)
    # v0.2 spellings and depth (root-inclusive: depth 2 = bgbot 1-ply)
    assert answer(engine, "go")[-1] == out[2] and answer(engine, "go chequer")[-1] == out[2]
    deep = answer(engine, "go role chequer depth 2 movetime 100")
    assert "depth 2" in deep[0] and deep[1] == f"bestmoveid {bot.rank_plays(START, '31', ply=1)[0].position_id}"


def test_bar_off_and_pass(engine):
    # 5-5 with a checker on the bar and the 5-point (our 20) blocked: no play at all
    pos = np.zeros(26, dtype=np.int8)
    pos[25], pos[6], pos[20], pos[0], pos[19] = 1, 14, -2, 0, -13
    assert answer(engine, f"position gnubgid {encode(pos)}", "dice 5 5", "go role chequer")[-1] == "bestmove pass"
    out = answer(engine, "dice 6 1", "go role chequer")[-1]
    assert out.startswith("bestmove bar/")
    bearoff = np.zeros(26, dtype=np.int8)
    bearoff[1], bearoff[2], bearoff[24] = 1, 1, -15
    out = answer(engine, f"position gnubgid {encode(bearoff)}", "dice 2 1", "go")[-1]
    assert sorted(out.split()[1:]) == ["1/off", "2/off"]


def test_every_answer_is_legal_on_random_positions(engine):
    lines = [x for x in open("tests/data/gnubg_selfplay_positions.txt") if x.strip() and not x.startswith("#")]
    positions = [decode(x.split()[0]) for x in lines[:40]]
    rng = np.random.default_rng(1)
    for pos in positions:
        d = tuple(int(v) for v in rng.integers(1, 7, size=2))
        out = answer(engine, f"position gnubgid {encode(pos)}", f"dice {d[0]} {d[1]}", "go role chequer")
        play = parse_play(pos, d, out[-1].split(" ", 1)[1])
        assert encode(flip(play.afterstate)) == out[1].split()[1]


def test_cube_take_and_turn(engine, bot):
    strong = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"
    assert answer(engine, f"position gnubgid {START}", "go role cube")[-1] == "bestcube nodouble"
    assert answer(engine, "go role take")[-1] == "bestcube take"
    # a racing position far ahead: double, pass
    race = np.zeros(26, dtype=np.int8)
    race[1:7] = [3, 3, 3, 2, 2, 2]
    race[19:25] = [-2, -2, -2, -3, -3, -3]
    answer(engine, f"position gnubgid {encode(race)}")
    cube = answer(engine, "go role cube")
    d = bot.cube_action(race)
    assert cube[-1] == ("bestcube double" if d.kind.doubles else "bestcube nodouble")
    probs = [float(v) for v in cube[0].split(" probs ")[1].split()]
    assert probs == pytest.approx(bot.evaluate(race).to_array(), abs=1e-6)
    take = answer(engine, "go role take")[-1]
    assert take == ("bestcube take" if d.answer.takes else "bestcube pass")
    turn = answer(engine, "dice 6 5", "go role turn")
    assert turn[-1].startswith("bestturn cube=") and " move=" in turn[-1]
    assert answer(engine, f"position xgid {strong}", "go role chequer")[-1].startswith("bestmove ")


def test_session_context(engine, bot):
    answer(engine, "newsession type match length 5 crawford off", "setscore 3 4", "setturn p0")
    answer(engine, f"position gnubgid {START}")
    # p0 trails 2-away / 1-away post-Crawford: the trailer doubles at once
    assert answer(engine, "go role cube")[-1] == "bestcube double"
    chequer = answer(engine, "dice 3 1", "go role chequer")
    assert " mwc " in chequer[0]
    answer(engine, "setturn p1")  # now the leader is on roll: no double post-Crawford
    assert answer(engine, "go role cube")[-1] == "bestcube nodouble"
    assert answer(engine, "setcube value 2 owner p1") == []
    assert answer(engine, "setscore 5 0")[0].startswith("error bad_argument")  # past the match length
    assert answer(engine, "setcube value 3 owner p0")[0].startswith("error bad_argument")
    assert answer(engine, "setcube value 2 owner nobody")[0].startswith("error bad_argument")
    assert answer(engine, "setturn p2")[0].startswith("error bad_argument")
    assert answer(engine, "newsession type match")[0].startswith("error bad_argument a match needs length")
    assert answer(engine, "newsession type money jacoby off") == []
    assert answer(engine, "get game.jacoby") == ["value game.jacoby false"]


def test_errors_and_missing_context(engine):
    assert answer(engine, "hello")[0] == "error unknown_command unknown command 'hello'"
    assert answer(engine, "newgame", "go role chequer")[0].startswith("error missing_context no position")
    assert answer(engine, f"position gnubgid {START}", "go role chequer")[0].startswith("error missing_context no dice")
    for bad in (
        "position gnubgid nonsense",
        "position gnubgid",
        "position fen x",
        "dice 7 1",
        "dice 3",
        "go role sideways",
        "go role chequer depth 9",
        "go role chequer depth",
        "setscore a b",
    ):
        out = answer(engine, bad)
        assert len(out) == 1 and out[0].startswith("error bad_argument"), (bad, out)
    assert answer(engine, "stop") == [] and answer(engine, "") == []
    assert answer(engine, "\x00\xff garbage")[0].startswith("error unknown_command")
    answer(engine, "quit")
    assert engine.done


def test_subprocess_engine_and_tournament_through_the_protocol(tmp_path):
    """bgbot ubgi as a process, then the acceptance tournament: 200 games against the direct player, same result as
    the direct player against itself, every move legal (the ubgi player checks each)."""
    script = "\n".join(["ubgi", "isready", f"position gnubgid {START}", "dice 6 6", "go", "bogus", "quit", ""])
    done = subprocess.run([*BGBOT, "ubgi"], input=script, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and "ubgiok" in lines and "readyok" in lines
    assert lines[-2].startswith("bestmove 24/18 24/18 13/7 13/7") and lines[-1].startswith("error unknown_command")

    argv = [*BGBOT, "tournament", "--games", "200", "--workers", "1", "--json", "--out", str(tmp_path / "ubgi")]
    argv += ["--player", f"ubgi:{sys.executable} -m bgbot.cli ubgi", "--player", MODEL]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    via = json.loads(done.stdout)["pairings"][0]
    direct = tournament.run(
        [f"{MODEL}:0", MODEL], tournament.TournamentSettings(200, workers=1, out_dir=tmp_path / "direct")
    )
    direct = direct["pairings"][0]
    keys = ("ppg", "stats_a", "stats_b", "mean_plies", "games")
    assert {k: via[k] for k in keys} == {k: direct[k] for k in keys}
    assert via["ppg"] == 0.0  # the same player on both sides with duplicate dice

    def games(folder):  # the move lines of every game, names left out
        (path,) = (tmp_path / folder).glob("*.mat")
        return [line for line in path.read_text().splitlines() if ")" in line or "Wins" in line]

    assert games("ubgi") == games("direct")  # move for move


def test_ubgi_player_rejects_a_broken_engine():
    from bgbot.arena.players import PlayerSpecError, make_player

    with pytest.raises(PlayerSpecError, match="cannot start"):
        make_player("ubgi:/no/such/engine")
    with pytest.raises(PlayerSpecError, match="exited"):
        make_player("ubgi:true")
    with pytest.raises(PlayerSpecError, match="ubgi:COMMAND"):
        make_player("ubgi:")


def test_ubgi_player_times_out_a_silent_handshake(monkeypatch):
    from bgbot.arena.players import PlayerSpecError, UbgiPlayer, make_player

    monkeypatch.setattr(UbgiPlayer, "HANDSHAKE_TIMEOUT", 1.0)
    with pytest.raises(PlayerSpecError, match="did not answer 'ubgi' with 'ubgiok' within 1 s"):
        make_player("ubgi:cat")  # echoes every command, never says ubgiok: without the timeout, a hang


FAKE = """
import sys
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "ubgi":
        print("id name fake"); print("ubgiok")
    elif cmd[0] == "isready":
        print("readyok")
    elif cmd[:2] == ["go", "role"] and cmd[2] == "cube":
        print("info role cube probs 0.5 garbage"); print("bestcube nodouble")
    elif cmd[0] == "go":
        print("bestmove 24/18 24/18 24/18")
    elif cmd[0] == "quit":
        break
    sys.stdout.flush()
"""


def test_ubgi_player_checks_every_move_and_needs_probabilities_for_the_cube(tmp_path):
    from bgbot.arena.players import PlayerSpecError, make_player
    from bgbot.rules.board import starting_position

    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE)
    player = make_player(f"ubgi:{sys.executable} {script}")
    start = starting_position()[None, :]
    with pytest.raises(PlayerSpecError, match="played '24/18 24/18 24/18'"):
        player.choose(start, np.array([[3, 1]]))
    with pytest.raises(PlayerSpecError, match="'probs' needs five numbers"):
        player.probabilities(start)
    player.close()


def test_bestmove_orders_its_steps_as_gnubg_orders_a_play(engine):
    """GNU Backgammon orders a play's single-die steps by source point, highest first, ties by destination, highest
    first (drawboard.c CanonicalMoveOrder / CompareMovesSimple); the CLI writes 8/5 6/5. gnubg-nn's best_move gives
    the steps of its play in generation order, which the comparator sorts."""
    assert answer(engine, f"position gnubgid {START}", "dice 3 1", "go role chequer")[-1] == "bestmove 8/5 6/5"
    import gnubg_nn

    from tests.gnubg_oracle import to_gnubg

    lines = [x for x in open("tests/data/gnubg_selfplay_positions.txt") if x.strip() and not x.startswith("#")]
    rng = np.random.default_rng(2)
    compared = 0
    for line in lines[:60]:
        pos = decode(line.split()[0])
        d = tuple(int(v) for v in rng.integers(1, 7, size=2))
        theirs = gnubg_nn.best_move(to_gnubg(pos), *d)
        if not theirs:
            continue
        canonical = sorted(((s, max(t, 0)) for s, t in theirs), reverse=True)  # CompareMovesSimple
        text = " ".join(f"{'bar' if s == 25 else s}/{'off' if t == 0 else t}" for s, t in canonical)
        ours = format_steps(pos, d, flip(parse_play(pos, d, text).afterstate))
        if sorted(ours.split()) == sorted(text.split()):  # the same steps (a play may have several)
            assert ours == text, (line, d)
            compared += 1
    assert compared >= 40


@pytest.mark.parametrize("content", [None, b"not a checkpoint", b""])
def test_a_missing_or_corrupt_model_file_is_refused_at_startup(tmp_path, content):
    """A missing, corrupt or empty --model is refused before the handshake, with the line `bgbot move` gives."""
    model = tmp_path / "model.pt"
    if content is not None:
        model.write_bytes(content)
    r = subprocess.run([*BGBOT, "ubgi", "--model", str(model)], input="ubgi\nquit\n", capture_output=True, text=True)
    move = subprocess.run(
        [*BGBOT, "move", "4HPwATDgc/ABMA", "31", "--model", str(model)], capture_output=True, text=True
    )
    assert r.returncode == 2 and r.stdout == "" and move.returncode == 2
    assert r.stderr == move.stderr
    if content is None:
        assert r.stderr == f"error: no checkpoint file at {str(model)!r}\n"
    else:
        assert r.stderr.startswith(f"error: {str(model)!r} is ") and r.stderr.count("\n") == 1
