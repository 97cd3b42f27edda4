"""bgbot play through a pseudo-terminal (pexpect): plays typed, an illegal play explained, a hint, a double offered
and taken, a double received and taken, a resignation; the saved .mat file replays with legal plays only."""

import sys

import pexpect

from bgbot import cli
from bgbot.formats import matfile

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
    child.sendline("8/5 6/5")
    child.expect("dice for bgbot's roll")
    child.sendline("79")  # bad dice: explained, asked again
    child.expect("impossible dice '79'")
    child.expect("dice for bgbot's roll")
    child.sendline("62")
    child.expect(r"bgbot rolls 6-2 and plays (\S+ ?)+\.")
    child.expect("your turn")
    child.sendline("hint")
    child.expect("No double")
    child.sendline("double")
    child.expect("bgbot takes; the cube is at 2")
    child.expect("dice for your roll")
    child.sendline("54")
    child.expect("your play with 5-4")
    child.sendline("13/8 13/9")
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
    child.expect("Bye")
    child.expect(pexpect.EOF)


def test_bad_options(capsys):
    for argv, message in (
        (["play", "--ply", "7"], "--ply must be 0..2"),
        (["play", "--bgbot-first"], "--bgbot-first needs --position"),
        (["play", "--match-length", "-1"], "--match-length must be >= 0"),
    ):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1
