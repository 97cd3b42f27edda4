"""bgbot play through a pseudo-terminal (pexpect): plays typed, confirmed and undone, an illegal play explained, a
hint, a double offered and taken, a double received and taken, resignations both ways, dice high first, quit with a
question, the end of input and a hang-up saving the game in progress, and --resume continuing it; the saved .mat file
replays with legal plays only."""

import json
import re
import signal
import sys
from pathlib import Path

import pexpect

from bgbot import cli
from bgbot.formats import matfile
from tests.gnubg_import import imported_score

BGBOT = [sys.executable, "-m", "bgbot.cli"]


def spawn(*args, cwd):
    child = pexpect.spawn(BGBOT[0], [*BGBOT[1:], "play", *args], cwd=str(cwd), encoding="utf-8", timeout=60)
    child.setwinsize(60, 140)
    return child


def test_a_short_money_game(tmp_path):
    save = tmp_path / "game.mat"
    child = spawn("--dice", "manual", "--save", str(save), cwd=tmp_path)
    child.expect("opening roll")
    child.sendline("31")  # you 3, bgbot 1: you move first with 3-1
    child.expect("you move first")
    child.expect("pips 167")  # the board, drawn as bgbot show draws it
    child.expect("your play with 3-1")
    child.sendline("hint")
    child.expect(r"1\. (8/5 6/5|6/5 8/5)\s+equity")
    child.sendline("24/18")  # a 6: illegal with 3-1
    child.expect("24/18 is not a move with 3-1")
    child.sendline("7/4 6/5")
    child.expect("no checkers of yours on the 7 point")
    child.sendline("8/5 6/5")
    child.expect(r"play 8/5 6/5\? \(Enter confirms, undo takes it back\)")
    child.sendline("undo")
    child.expect("your play with 3-1")
    child.sendline("8/5")
    child.expect("a legal play uses both dice")
    child.sendline("24/23 13/10")
    child.expect("Enter confirms")
    child.sendline("")
    child.expect("dice for bgbot's roll")
    child.sendline("79")  # bad dice: explained, asked again
    child.expect("impossible dice '79'")
    child.expect("dice for bgbot's roll")
    child.sendline("26")  # typed low first: shown high first, as GNU Backgammon shows dice
    child.expect(r"bgbot rolls 6-2 and plays (\S+ ?)+\.")
    child.expect("your turn")
    child.sendline("hint")
    child.expect("No double")
    child.sendline("double")
    child.expect("bgbot takes; the cube is at 2")
    child.expect("dice for your roll")
    child.sendline("45")
    child.expect("your play with 5-4")
    child.sendline("13/8 13/9")
    child.expect("Enter confirms")
    child.sendline("")
    child.expect("dice for bgbot's roll")
    child.sendline("33")
    child.expect("bgbot rolls 3-3 and plays")
    child.expect("your turn")
    child.sendline("resign")
    child.expect("bgbot accepts your resignation")
    child.expect("bgbot wins 2 points")
    child.expect("Saved to")
    child.expect(r"another game\? \[y/n\]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    match = matfile.read_match(save.read_text())
    (game,) = match.games
    assert match.names == ("you", "bgbot") and game.game.winner == 1 and game.game.points == 2
    kinds = [d.kind for d in matfile.replay(game, 0)]  # every play legal
    assert kinds.count("move") == 4 and "double" in kinds and "take" in kinds


def test_another_answer_to_the_confirmation_is_explained(tmp_path):
    child = spawn("--dice", "manual", "--save", str(tmp_path / "game.mat"), cwd=tmp_path)
    child.expect("opening roll")
    child.sendline("31")
    child.expect("your play with 3-1")
    child.sendline("8/5 6/5")
    child.expect(r"play 8/5 6/5\? \(Enter confirms, undo takes it back\)")
    child.sendline("24/23 13/10")  # a second play before answering: said so, the first one still awaits
    child.expect("'24/23 13/10' is not an answer here: Enter confirms 8/5 6/5, undo takes it back")
    child.expect(r"play 8/5 6/5\? \(Enter confirms")
    child.sendline("")
    child.expect("dice for bgbot's roll")
    child.sendeof()
    child.expect(pexpect.EOF)


def test_bgbot_doubles_and_you_take(tmp_path):
    # bgbot on roll in a race it leads by far: it doubles at once
    race = "d7cNAAB3twEAAA"  # bgbot 13 checkers on its 1-5 points, you 15 on your 1-6: Double, pass
    child = spawn(
        "--dice", "manual", "--position", race, "--bgbot-first", "--save", str(tmp_path / "r.mat"), cwd=tmp_path
    )
    child.expect("bgbot doubles to 2")
    child.sendline("hint")
    child.expect("bgbot's view")
    child.sendline("take")
    child.expect("dice for bgbot's roll")
    child.sendline("66")
    child.expect("bgbot rolls 6-6")
    child.expect("your turn")
    child.sendline("quit")
    child.expect(r"quit\? the game in progress is kept and saved to \S+r\.session\.json \[y/n\]")
    child.sendline("n")  # asked again
    child.expect("your turn")
    child.sendline("quit")
    child.expect(r"\[y/n\]")
    child.sendline("y")
    child.expect(r"continue it with: bgbot play --resume \S+r\.session\.json")
    child.expect("Bye")
    child.expect(pexpect.EOF)
    saved = json.loads((tmp_path / "r.session.json").read_text())
    game = saved["current"]
    assert game["cube"] == 2 and game["owner"] == 0 and saved["at"] == {"side": 0, "dice": None}
    assert [t.get("cube") for t in game["turns"]] == ["double", "take", None]  # the double, the take, bgbot's 6-6
    # --resume continues: the same game, cube 2 owned by you, your turn before the roll
    child = spawn("--resume", str(tmp_path / "r.session.json"), cwd=tmp_path)
    child.expect("Resuming the game in progress")
    child.expect("your turn")
    child.sendline("resign")
    child.expect("bgbot accepts your resignation")
    child.expect("bgbot wins 2 points")
    child.expect(r"another game\? \[y/n\]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    assert not (tmp_path / "r.session.json").exists()  # the session it continued is over
    (played,) = matfile.read_match((tmp_path / "r.mat").read_text()).games
    assert played.game.points == 2 and played.game.winner == 1


def test_bad_options(capsys, tmp_path):
    for argv, message in (
        (["play", "--ply", "7"], "ply must be a whole number 0 .. 2 (the search depth), got 7"),
        (["play", "--bgbot-first"], "--bgbot-first needs --position"),
        (["play", "--match-length", "-1"], "--match-length must be >= 0"),
        (["play", "--match-length", "65"], "65-point match is longer than the 64 points"),
        (["play", "--seed", "-1"], "--seed must be in 0 .. 2**63 - 1"),
        (["play", "--save", "/nonexistent-dir/x.mat"], "no directory '/nonexistent-dir'"),
        (["play", "--save", str(tmp_path)], "is not a regular file (a directory?)"),  # refused before any game
    ):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_end_of_input_and_hangup_save_the_game(tmp_path):
    """The end of input, and SIGHUP (a closed terminal), save the game in progress with the dice already rolled."""
    for stop in ("eof", "hangup"):
        save = tmp_path / f"{stop}.mat"
        child = spawn("--dice", "manual", "--save", str(save), cwd=tmp_path)
        child.expect("opening roll")
        child.sendline("52")
        child.expect("your play with 5-2")
        if stop == "eof":
            child.sendeof()
        else:
            child.kill(signal.SIGHUP)
        child.expect("continue it with: bgbot play --resume")
        child.expect(pexpect.EOF)
        saved = json.loads(save.with_suffix(".session.json").read_text())
        assert saved["at"] == {"side": 0, "dice": [5, 2]} and saved["current"]["turns"] == []
        child = spawn("--resume", str(save.with_suffix(".session.json")), cwd=tmp_path)
        child.expect("your play with 5-2")  # the same roll: resuming does not roll again
        child.sendline("13/11 13/8")
        child.expect("Enter confirms")
        child.sendline("")
        child.expect("dice for bgbot's roll")
        child.sendeof()
        child.expect(pexpect.EOF)


def test_resign_after_rolling_and_bgbot_resigns(tmp_path):
    child = spawn("--dice", "manual", "--save", str(tmp_path / "a.mat"), cwd=tmp_path)
    child.expect("opening roll")
    child.sendline("41")
    child.expect("your play with 4-1")
    child.sendline("resign gammon")  # more than bgbot expects at the start: accepted
    child.expect(r"bgbot accepts your resignation \(gammon\)")
    child.expect("bgbot wins 1 point")  # money play, Jacoby rule, cube centred: a single game
    child.sendline("n")
    child.expect(pexpect.EOF)
    # bgbot on roll with 15 checkers on its 1 point, you with one checker left on your 1 point: it cannot win
    hopeless = "AQAA/P8BAAAAAA"
    for answer, then in (("n", "You decline; play on."), ("y", "You win 1 point")):
        child = spawn(
            "--dice",
            "manual",
            "--position",
            hopeless,
            "--bgbot-first",
            "--save",
            str(tmp_path / "b.mat"),
            cwd=tmp_path,
        )
        child.expect(r"bgbot resigns a single game \(1 point\)\. accept\? \[y/n\]")
        child.sendline(answer)
        child.expect(then)
        if answer == "n":
            child.expect("dice for bgbot's roll")  # declined: play on, and the offer is not repeated
            child.sendline("21")
            child.expect("bgbot rolls 2-1")
            child.expect("your turn")
            child.sendline("")
            child.expect("dice for your roll")
            child.sendline("31")
            child.expect("your play with 3-1")
            child.sendline("1/off")
            child.expect("Enter confirms")
            child.sendline("")
            child.expect("You win 1 point")
        child.expect(r"another game\? \[y/n\]")
        child.sendline("n")
        child.expect(pexpect.EOF)


def test_resignations_are_saved_as_gnubg_writes_them(tmp_path):
    """A resignation after rolling keeps the roll (``53:`` with no play) before the winner's ``Wins`` line, one before
    the roll is the ``Wins`` line alone; GNU Backgammon imports the file to the same score."""
    save = tmp_path / "r.mat"
    child = spawn("--dice", "manual", "--save", str(save), cwd=tmp_path)
    child.expect("opening roll")
    child.sendline("41")
    child.expect("your play with 4-1")
    child.sendline("24/23 13/9")
    child.expect("Enter confirms")
    child.sendline("")
    child.expect("dice for bgbot's roll")
    child.sendline("62")
    child.expect("your turn")
    child.sendline("")
    child.expect("dice for your roll")
    child.sendline("53")
    child.expect("your play with 5-3")
    child.sendline("resign gammon")  # after rolling
    child.expect(r"bgbot accepts your resignation \(gammon\)")
    child.expect("bgbot wins 1 point")  # the Jacoby rule with the cube centred: a single game
    child.expect(r"another game\? \[y/n\]")
    child.sendline("y")
    child.expect("opening roll")
    child.sendline("14")
    child.expect("bgbot moves first")
    child.expect("your turn")
    child.sendline("resign")  # before rolling
    child.expect("bgbot accepts your resignation")
    child.expect(r"another game\? \[y/n\]")
    child.sendline("n")
    child.expect(pexpect.EOF)
    text = save.read_text()
    assert "  2) 53:                         Wins 1 point" in text.splitlines()
    first, second = matfile.read_match(text).games
    assert first.game.turns[-1] == matfile.Turn(0, (5, 3), "") and (first.game.winner, first.game.points) == (1, 1)
    assert [d.kind for d in matfile.replay(first, 0)] == ["move", "no_double", "move", "no_double"]
    assert [t.side for t in second.game.turns] == [1] and (second.game.winner, second.game.points) == (1, 1)
    assert imported_score(save) == (0, 2)


def test_resume_refuses_a_bad_file(tmp_path, capsys):
    bad = tmp_path / "x.session.json"
    bad.write_text('{"format": "bgbot-play-session", "version": 1}')
    for argv, message in (
        (["play", "--resume", str(bad)], "a damaged session file (KeyError"),
        (["play", "--resume", str(tmp_path / "none.json")], "No such file"),
        (["play", "--resume", str(bad), "--match-length", "3"], "--resume continues a saved session"),
    ):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_resume_refuses_a_session_whose_game_cannot_be(tmp_path, capsys):
    """A session edited by hand (a side 5 to act, dice 9-9, a cube of 3, a score below 0) is refused when it is read,
    with one error line, before any play: never a traceback, never an error in the middle of the game."""
    good = {
        "format": "bgbot-play-session", "version": 1, "match_length": 0, "jacoby": True, "manual_dice": False,
        "save": str(tmp_path / "s.mat"), "score": [0, 1], "crawford_done": False, "games": [],
        "current": {
            "position": [0, -1, 0, -1, 0, 0, 5, 0, 3, 0, 0, 0, -4, 5, 0, 0, 0, -4, 0, -5, 0, 0, 0, 0, 2, 0],
            "turns": [{"side": 1, "dice": [5, 2], "play": "24/22 13/8"}], "cube": 1, "owner": -1, "crawford": False,
            "declined": 0,
        },
        "at": {"side": 0, "dice": None},
        "rng": {"bit_generator": "PCG64", "state": {"state": 1, "inc": 3}, "has_uint32": 0, "uinteger": 0},
    }  # fmt: skip
    for name, edit in (
        ("side", lambda d: d["at"].update(side=5)),
        ("dice", lambda d: d["at"].update(dice=[9, 9])),
        ("cube", lambda d: d["current"].update(cube=3)),
        ("score", lambda d: d.update(score=[-1, 0])),
        ("position", lambda d: d["current"].update(position=[300] * 26)),
    ):
        data = json.loads(json.dumps(good))
        edit(data)
        path = tmp_path / f"{name}.session.json"
        path.write_text(json.dumps(data))
        assert cli.main(["play", "--resume", str(path)]) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "a damaged session file" in err and err.count("\n") == 1, (name, err)


def test_a_hint_at_one_ply_marks_the_plays_valued_at_0_ply(tmp_path):
    """``hint`` at ``--ply 1`` lists the plays the move filter dropped with their 0-ply equity marked as such, as
    ``bgbot move`` does, never as if they were 1-ply values."""
    six = str(Path(__file__).resolve().parents[1] / "models" / "bgbot-6.pt")  # fixed weights: the values below are its
    child = spawn("--dice", "manual", "--ply", "1", "--position", "iucjICiY89ABMA", "--model", six, cwd=tmp_path)
    child.expect("your turn")  # you on roll in the given position: no opening roll
    child.sendline("")
    child.expect("dice for your roll")
    child.sendline("62")
    child.expect("your play with 6-2")
    child.sendline("hint")
    child.expect(r"  5\. [^\r\n]*\r\n")
    lines = [x for x in (child.before + child.after).splitlines() if re.match(r"  \d\. ", x)]
    assert [x.split()[1:3] for x in lines[:2]] == [["24/22*", "13/7*"], ["24/22*", "8/2*"]]
    assert lines[0].endswith("equity +0.945")  # the move filter's one candidate: 1-ply
    assert lines[1].endswith("equity +0.810  [0-ply: outside the move filter]")
    assert all(x.endswith("  [0-ply: outside the move filter]") for x in lines[1:]) and len(lines) == 5
    child.sendline("quit")
    child.expect(r"\[y/n\]")
    child.sendline("y")
    child.expect(pexpect.EOF)


def test_dice_carried_by_the_position_are_the_first_roll(tmp_path):
    """An XGID or a Match ID with dice rolled starts the game with those dice to play, by the side on roll in it, as GNU
    Backgammon plays on after ``set xgid`` or ``set matchid`` with dice: no roll asked for, never dice ignored."""
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"
    child = spawn("--dice", "manual", "--position", xgid, "--save", str(tmp_path / "x.mat"), cwd=tmp_path)
    assert child.expect(["your play with 5-2", "your turn", "dice for your roll"]) == 0
    child.sendline("13/8 13/11")
    child.expect("Enter confirms")
    child.sendline("")
    child.expect("dice for bgbot's roll")  # the next roll is rolled (here: typed) as ever
    child.close(force=True)
    match_id = "4HPwATDgc/ABMA:cIkqAAAAAAAA"  # the same opening position, 5-2 rolled
    child = spawn(
        "--dice", "manual", "--position", match_id, "--bgbot-first", "--save", str(tmp_path / "m.mat"), cwd=tmp_path
    )
    assert child.expect([r"bgbot rolls 5-2 and plays", "dice for bgbot's roll", "your turn"]) == 0
    child.expect("your turn")
    child.close(force=True)
