"""The command line, run in-process (``cli.main``) plus one run of the installed ``bgbot`` console script."""

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import gnubg_nn
import pytest

import bgbot
from bgbot import cli
from bgbot.api import Bot

START = "4HPwATDgc/ABMA"
CASES = json.loads((Path(__file__).parent / "data" / "gnubg_cube_cases.json").read_text())["cube"]


BGBOT_5 = Path(__file__).resolve().parents[1] / "models" / "bgbot-5.pt"


@pytest.fixture(scope="module")
def bot():
    return Bot.load()


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``bgbot argv``."""
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys, *argv):
    status, out, err = run(capsys, *argv, "--json")
    assert status == 0, err
    return json.loads(out)


def expected_8_5_6_5():
    """The Position ID after 8/5 6/5 from the start, by gnubg-nn alone (opponent on roll)."""
    opp, me = (list(side) for side in gnubg_nn.board_from_position_id(START))
    me[7] -= 1
    me[5] -= 1
    me[4] += 2
    return gnubg_nn.position_id([me, opp])


def test_moves_json(capsys):
    result = run_json(capsys, "moves", START, "31")
    assert result["position_id"] == START and result["dice"] == [3, 1]
    assert len(result["plays"]) == 16
    plays = {p["play"]: p["position_id"] for p in result["plays"]}
    assert plays["8/5 6/5"] == expected_8_5_6_5()
    assert set(result["plays"][0]) == {"play", "position_id"}


@pytest.mark.parametrize("dice", [["3-1"], ["3", "1"], ["3 1"]])
def test_dice_spellings(capsys, dice):
    assert len(run_json(capsys, "moves", START, *dice)["plays"]) == 16


def test_moves_table(capsys):
    status, out, _ = run(capsys, "moves", START, "31")
    assert status == 0
    assert "16 legal plays" in out and "8/5 6/5" in out and expected_8_5_6_5() in out


def test_move_json_matches_evaluate(capsys, bot):
    result = run_json(capsys, "move", START, "31")
    plays = result["plays"]
    assert len(plays) == 16
    assert [p["equity"] for p in plays] == sorted((p["equity"] for p in plays), reverse=True)
    for p in plays:
        expected = bot.evaluate(p["position_id"]).flipped().to_dict()
        for k, v in expected.items():
            assert p["probabilities"][k] == pytest.approx(v, abs=1e-6)
        assert p["equity"] == pytest.approx(-bot.evaluate(p["position_id"]).equity, abs=2e-6)


def test_move_ply_1(capsys):
    plays = run_json(capsys, "move", START, "31", "--ply", "1")["plays"]
    assert len(plays) == 16 and plays[0]["equity"] >= plays[1]["equity"]


def test_move_table(capsys):
    status, out, _ = run(capsys, "move", START, "31")
    assert status == 0
    lines = out.splitlines()
    assert "money play" in lines[0] and "Equity" in lines[1]
    assert len(lines) == 2 + 16 and lines[2].lstrip().startswith("1.")


def test_move_table_marks_the_plays_the_move_filter_left_at_0_ply(capsys):
    """At ``--ply 1`` the table lists every play; those the move filter dropped keep their 0-ply equity and say so on
    their line (as the JSON's ``ply`` does), never shown as 1-ply values."""
    plays = run_json(capsys, "move", "iucjICiY89ABMA", "26", "--ply", "1")["plays"]
    status, out, _ = run(capsys, "move", "iucjICiY89ABMA", "26", "--ply", "1")
    assert status == 0
    rows = out.splitlines()[2:]
    assert len(rows) == len(plays) == 27
    assert [p["ply"] for p in plays[:3]] == [1, 0, 0] and {p["ply"] for p in plays[1:]} == {0}
    for row, p in zip(rows, plays):
        assert row.split(".", 1)[1].split()[: len(p["play"].split())] == p["play"].split()
        assert row.endswith("  [0-ply: outside the move filter]") == (p["ply"] == 0), row


def test_move_with_dice_in_gnubg_id(capsys):
    with_dice = run_json(capsys, "move", START + ":MIEJAAAAAAAA")
    assert with_dice["dice"] == [3, 2]
    assert with_dice == run_json(capsys, "move", START, "32")


def test_move_at_match_score_ranks_by_mwc(capsys):
    # gnubg: new match 7, set score 3 4, set turn 1: the side on roll leads 4-3.
    result = run_json(capsys, "move", START + ":cAngADAAIAAE", "31")
    mwcs = [p["mwc"] for p in result["plays"]]
    assert mwcs == sorted(mwcs, reverse=True)
    assert result["match"] == {
        "length": 7,
        "score": [4, 3],
        "crawford": False,
        "post_crawford": False,
        "jacoby": False,
        "backgammons": True,
    }
    status, out, _ = run(capsys, "move", START + ":cAngADAAIAAE", "31")
    assert "7-point match, score 4-3" in out and "MWC" in out


def test_cube_json(capsys, bot):
    result = run_json(capsys, "cube", START)
    assert {"action", "equities", "unit", "probabilities", "cube", "match"} <= set(result)
    assert result["unit"] == "equity" and result["match"]["jacoby"] is True
    assert result["probabilities"]["win"] == pytest.approx(bot.cube_probabilities(START).win, abs=1e-6)
    assert not run_json(capsys, "cube", START, "--jacoby", "off")["match"]["jacoby"]


@pytest.mark.parametrize(
    "case", CASES[:6] + [c for c in CASES if c["length"]][:6], ids=lambda c: f"{c['position_id']}:{c['match_id']}"
)
def test_cube_probabilities_against_gnubg(capsys, case):
    probabilities = ",".join(str(v) for v in case["probabilities"])
    argv = ["cube", f"{case['position_id']}:{case['match_id']}", "--probabilities", probabilities]
    result = run_json(capsys, *argv)
    assert result["action"] == case["action"]
    for key, value in case["equities"].items():
        assert result["equities"][key] == pytest.approx(value, abs=0.005)


def test_cube_table(capsys):
    status, out, _ = run(capsys, "cube", START, "--probabilities", "0.75,0.2,0.01,0.05,0.001")
    assert status == 0
    assert "Proper cube action:" in out and "No double" in out and "Double, pass" in out
    assert "the cube nets" not in out  # given probabilities: no nets answered
    status, out, _ = run(capsys, "cube", START)  # the shipped bgbot-6 has separate cube nets, and says so
    assert status == 0 and "; evaluator contact (the cube nets); cube efficiency 0.680; 0-ply" in out.splitlines()[0]
    status, out, _ = run(capsys, "cube", START, "--model", str(BGBOT_5))
    assert "the cube nets" not in out.splitlines()[0]


def test_batch_with_bad_line(capsys, tmp_path, bot):
    requests = tmp_path / "requests.txt"
    requests.write_text(f"{START} 31\n\ngarbage 31\n{START} 71\n{START}:MIEJAAAAAAAA\n")
    status, out, err = run(capsys, "move", "--batch", requests)
    assert status == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 4
    assert lines[0]["dice"] == [3, 1] and len(lines[0]["plays"]) == 16
    assert "garbage" in lines[1]["error"] and set(lines[1]) == {"error"}
    assert "71" in lines[2]["error"]
    assert lines[3]["dice"] == [3, 2]


def test_batch_stdin_moves_and_cube(capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{START} 31\n{START}\n"))
    status, out, _ = run(capsys, "moves", "--batch", "-")
    assert status == 0
    first, second = (json.loads(line) for line in out.splitlines())
    assert len(first["plays"]) == 16 and "no dice" in second["error"]
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{START}\n{START} 31\n"))
    first, second = (json.loads(line) for line in run(capsys, "cube", "--batch", "-")[1].splitlines())
    assert first["position_id"] == START and "error" in second


@pytest.mark.parametrize(
    "argv, quoted",
    [
        (["move", "garbage", "31"], "'garbage'"),
        (["move", START, "71"], "'71'"),
        (["moves", START, "0-3"], "'0-3'"),
        (["moves", START, "3"], "'3'"),
        (["move", START + ":MIEJAAAAAAAA", "31"], "'31'"),
        (["move", START], "no dice"),
        (["move", START, "31", "--model", "/nonexistent/model.pt"], "/nonexistent/model.pt"),
        (["move", START, "31", "--ply", "-1"], "-1"),
        (["cube", START, "--probabilities", "0.5,0.1"], "'0.5,0.1'"),
        (["cube", START, "--probabilities", "0.5,0.6,0,0,0"], "inconsistent"),
        (["cube", START, "--probabilities", "nan,0,0,0,0"], "finite numbers from 0 to 1, got 'nan,0,0,0,0'"),
        (["cube", START, "--probabilities", "0.5,0,0,0,inf"], "finite numbers from 0 to 1, got '0.5,0,0,0,inf'"),
        (["cube", START + ":cAngADAAIAAE", "--jacoby", "on"], "money play only"),
        (["move", START, "31", "--batch", "-"], "not both"),
        (["move"], "POSITION"),
        (["move", "--batch", "/nonexistent/requests.txt"], "/nonexistent/requests.txt"),
        (["frobnicate"], "frobnicate"),
    ],
)
def test_bad_input_is_one_error_line_and_status_2(capsys, argv, quoted):
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert quoted in err


@pytest.mark.parametrize("command", ["moves", "move", "cube"])
def test_a_batch_file_that_cannot_be_read_is_one_line_naming_it(capsys, tmp_path, command):
    missing = tmp_path / "missing.txt"
    for path, message in (
        (
            tmp_path,
            f"--batch {str(tmp_path)!r} is not a regular file (a directory?): give a file of requests, one a line",
        ),
        (missing, f"cannot read --batch {str(missing)!r}: No such file or directory"),
    ):
        assert run(capsys, command, "--batch", path) == (2, "", f"error: {message}\n")


@pytest.mark.parametrize(
    ("argv", "extra"),
    [
        (["move", START, "--play", "8/5 6/5", "31"], "31"),  # DICE after --play: --play took one value
        (["moves", START, "31", "--frobnicate"], "--frobnicate"),
        (["cube", START, "31"], "31"),
        (["rollout", START, "31", "--frobnicate"], "--frobnicate"),
        (["analyse", "match.mat", "extra.mat"], "extra.mat"),
        (["play", "--frobnicate"], "--frobnicate"),
        (["ubgi", "--frobnicate"], "--frobnicate"),
    ],
)
def test_unrecognized_arguments_point_at_the_subcommands_help(capsys, argv, extra):
    assert run(capsys, *argv) == (2, "", f"error: unrecognized arguments: {extra} (see 'bgbot {argv[0]} --help')\n")


def test_an_unknown_command_points_at_the_top_level_help(capsys):
    status, out, err = run(capsys, "frobnicate")
    assert status == 2 and out == "" and err.startswith("error: argument COMMAND: invalid choice: 'frobnicate'")
    assert err.endswith(" (see 'bgbot --help')\n")


def test_every_ply_option_is_refused_by_the_one_check(capsys, tmp_path):
    message = "error: argument --ply: ply must be a whole number 0 .. 2 (the search depth), got 3"
    for argv in (
        ["move", START, "31"],
        ["cube", START],
        ["rollout", START, "31"],
        ["analyse", str(tmp_path / "any.mat")],
        ["play"],
        ["gate", str(tmp_path / "c.pt"), "--against", str(tmp_path / "a.pt"), "--games", "200"],
        ["external", "--port", "1"],
        ["ubgi"],
    ):
        status, out, err = run(capsys, *argv, "--ply", "3")
        assert status == 2 and out == "" and err.startswith(message), argv


@pytest.mark.parametrize("text", ["\u0663", "\uff13", "1_000", " 3", "3 ", "+", "0x10"])
def test_whole_number_options_take_only_the_digits_0_to_9(capsys, tmp_path, text):
    """Python's ``int`` reads the Arabic-Indic ``٣``, the full-width ``３``, ``1_000`` and blanks around the digits:
    every whole-number option refuses them in argparse's words, naming the option, before any work."""
    for argv, option, rule in (
        (["move", START, "31", "--ply", text], "--ply", "ply must be a whole number 0 .. 2 (the search depth)"),
        (["rollout", START, "31", "--trials", text], "--trials", "a whole number"),
        (["play", "--seed", text], "--seed", "a whole number"),
        (["play", "--match-length", text], "--match-length", "a whole number"),
        (["serve", "--port", text], "--port", "a whole number"),
        (["gate", str(tmp_path / "c.pt"), "--against", str(tmp_path / "a.pt"), "--games", text], "--games", None),
    ):
        status, out, err = run(capsys, *argv)
        rule = rule or "an even whole number 200 .. 10,000,000"
        assert (status, out) == (2, ""), argv
        assert err.startswith(f"error: argument {option}: {rule}, got {text!r}"), (argv, err)
    assert run(capsys, "move", START, "31", "--ply", "+0", "--json")[0] == 0  # a sign stays allowed


def test_corrupt_model(capsys, tmp_path):
    bad = tmp_path / "model.pt"
    bad.write_bytes(b"\x00" * 100)
    status, _, err = run(capsys, "cube", START, "--model", bad)
    assert status == 2 and err.startswith("error: ") and "corrupt" in err


def test_version(capsys):
    status, out, _ = run(capsys, "--version")
    assert status == 0 and out.strip() == f"bgbot {bgbot.__version__}"


def test_missing_command_modules_are_skipped(monkeypatch):
    monkeypatch.setattr(cli, "COMMANDS", ["moves", "no_such_command"])
    parser = cli.build_parser()
    assert "moves" in parser.format_help() and "no_such_command" not in parser.format_help()


def test_installed_console_script_as_engine():
    script = Path(sys.executable).parent / "bgbot"
    assert script.exists(), f"no console script at {script}: install bgbot into this environment (scripts/test.sh)"
    done = subprocess.run([script, "moves", START, "31", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and len(json.loads(done.stdout)["plays"]) == 16
    # One process as an engine: each answer arrives (flushed) before the next request is sent.
    engine = subprocess.Popen(
        [script, "move", "--batch", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for request in (f"{START} 31", "garbage", f"{START} 66"):
            engine.stdin.write(request + "\n")
            engine.stdin.flush()
            answer = json.loads(engine.stdout.readline())
            assert ("error" in answer) == (request == "garbage")
    finally:
        engine.stdin.close()
        assert engine.wait(timeout=60) == 0
    bad = subprocess.run([script, "moves", START, "71"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and bad.stderr.count("\n") == 1


# --- everyday commands and states --------------------------------------------------------------------------------


def _pending(case):
    """The case's GNUbg ID with a double offered by the side on roll (turn to the other player), if it may double."""
    from dataclasses import replace

    from bgbot.cube.decision import may_double
    from bgbot.formats.context import parse_position
    from bgbot.formats.matchid import MatchID

    ctx = parse_position(f"{case['position_id']}:{case['match_id']}")
    if not may_double(ctx.cube, ctx.match):
        return None
    m = MatchID.from_string(case["match_id"])
    return f"{case['position_id']}:{replace(m, double_offered=True, turn=1 - m.on_roll).to_string()}"


@pytest.mark.parametrize(
    "case", CASES[:8] + [c for c in CASES if c["length"]][:8], ids=lambda c: f"{c['position_id']}:{c['match_id']}"
)
def test_pending_double_answered_from_the_takers_side_as_gnubg(capsys, case):
    gid = _pending(case)
    if gid is None:
        pytest.skip("the side on roll may not double here")
    probabilities = ",".join(str(v) for v in case["probabilities"])
    result = run_json(capsys, "cube", gid, "--probabilities", probabilities)
    # gnubg's doubler action names the right answer: "..., take" -> Take, "..., pass" -> Pass
    assert result["double_offered"] and result["doubler_action"] == case["action"]
    assert result["action"] == ("Take" if case["action"].endswith("take") else "Pass")
    eq = case["equities"]
    sign = 1 if result["unit"] == "mwc" else -1
    t = result["taker"]
    if result["unit"] == "equity":
        assert t["take"] == pytest.approx(-eq["double_take"], abs=0.005) and t["pass"] == -1.0
    else:
        assert t["take"] == pytest.approx(1 - eq["double_take"], abs=0.005) and sign == 1
    status, out, err = run(capsys, "move", gid, "31")
    assert status == 2 and "double awaits" in err and out == ""


# gnubg 1.07 `hint` (0-ply cube decisions) on the first case of each action in tests/data/gnubg_cube_cases.json:
# the order of its "Cubeful equities" list depends on the proper action only.
GNUBG_ORDER = {
    "No double, take": ["No double", "Double, pass", "Double, take"],
    "No redouble, take": ["No double", "Double, pass", "Double, take"],
    "Too good to double, pass": ["No double", "Double, take", "Double, pass"],
    "Too good to redouble, pass": ["No double", "Double, take", "Double, pass"],
    "Double, take": ["Double, take", "Double, pass", "No double"],
    "Redouble, take": ["Double, take", "Double, pass", "No double"],
    "Double, pass": ["Double, pass", "Double, take", "No double"],
    "Redouble, pass": ["Double, pass", "Double, take", "No double"],
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['position_id']}:{c['match_id']}")
def test_cube_options_in_gnubgs_order(capsys, case):
    probabilities = ",".join(str(v) for v in case["probabilities"])
    result = run_json(capsys, "cube", f"{case['position_id']}:{case['match_id']}", "--probabilities", probabilities)
    assert result["action"] == case["action"]
    names = [o["name"] for o in result["options"]]
    if case["action"] in GNUBG_ORDER:
        assert names == GNUBG_ORDER[case["action"]]
    assert result["options"][0]["diff"] == 0.0


def test_cube_ply_and_the_proper_action_first(capsys, bot):
    result = run_json(capsys, "cube", START, "--ply", "1")
    assert (
        result["ply"] == 1 and result["action"] == "No double, take" and result["options"][0]["option"] == "no_double"
    )
    one = bot.cube_probabilities(START, ply=1)
    assert result["probabilities"]["win"] == pytest.approx(one.win, abs=1e-6)
    assert abs(one.win - bot.cube_probabilities(START).win) > 1e-4  # a real lookahead, not the 0-ply value
    status, out, _ = run(capsys, "cube", START, "--ply", "1")
    assert status == 0 and "1-ply" in out and out.index("1. ") < out.index("2. ") < out.index("3. ")
    at_max = run_json(
        capsys, "cube", "XGID=-b----E-C---eE---c-e----B-:3:1:1:00:0:0:1:0:3", "--probabilities", "0.8,0.3,0.01,0.05,0"
    )  # cube 8 at the XGID's maximum of 8
    assert at_max["action"] == "No double (cube not available)" and [o["option"] for o in at_max["options"]] == [
        "no_double"
    ]


def test_beaver_bit_gives_gnubgs_no_double_beaver(capsys):
    # gnubg 1.07 with `set beavers 3` on tnk4AAO6eQYCAw (the first cube case): "No double, beaver"
    case = CASES[0]
    assert case["position_id"] == "tnk4AAO6eQYCAw" and case["action"] == "No double, take"
    from bgbot.formats.context import parse_position
    from bgbot.formats.xgid import XGID

    ctx = parse_position(f"{case['position_id']}:{case['match_id']}")
    with_beavers = XGID.from_states(ctx.position, ctx.cube, dataclasses.replace(ctx.match, beavers=True)).to_string()
    probabilities = ",".join(str(v) for v in case["probabilities"])
    assert run_json(capsys, "cube", with_beavers, "--probabilities", probabilities)["action"] == "No double, beaver"


def test_normalised_equity_at_a_match_score(capsys):
    result = run_json(capsys, "cube", "t7MxABBs20YEBA:cAngAAAAAAAE")
    assert result["unit"] == "mwc" and result["emg"]["double_pass"] == pytest.approx(1.0, abs=1e-9)
    moves = run_json(capsys, "move", "sOfgwQDgZ8PBAA:cAmgAEAAEAAE", "64")
    from bgbot.cube.decision import normalised_equity
    from bgbot.formats.context import parse_position

    ctx = parse_position("sOfgwQDgZ8PBAA:cAmgAEAAEAAE")
    for p in moves["plays"][:3]:
        assert p["emg"] == pytest.approx(float(normalised_equity([p["mwc"]], ctx.cube, ctx.match)[0]), abs=1e-6)
    # mwc2eq maps the MWC of losing a single game to -1 and of winning one to +1
    from bgbot.cube.met import kazaross_xg2

    met = kazaross_xg2()
    lose, win = met.mwc(3, 0, post_crawford=True), met.mwc(3 - 1, 1, post_crawford=True)  # at 3-away, 1-away
    assert normalised_equity([lose, win], ctx.cube, ctx.match) == pytest.approx([-1.0, 1.0])
    status, out, _ = run(capsys, "move", "sOfgwQDgZ8PBAA:cAmgAEAAEAAE", "64")
    assert "Eq.(norm)" in out and "MWC" in out


def test_move_play_evaluates_given_plays_beside_the_best(capsys):
    full = run_json(capsys, "move", START, "31")["plays"]
    picked = run_json(capsys, "move", START, "31", "--play", "24/21 24/23", "--play", "13/10 6/5")["plays"]
    assert picked[0] == full[0] and picked[0]["rank"] == 1
    names = {p["play"] for p in picked}
    assert {"24/23 24/21", "13/10 6/5"} <= names and len(picked) == 3
    for p in picked:
        assert p == full[p["rank"] - 1]
    status, out, err = run(capsys, "move", START, "31", "--play", "8/2")
    assert status == 2 and err.startswith("error: ") and out == ""


def test_match_longer_than_the_kazaross_table(capsys):
    from bgbot.formats.matchid import MatchID

    long_match = MatchID(length=40, score=(10, 3), on_roll=1).to_string()
    moves = run_json(capsys, "move", f"{START}:{long_match}", "31")
    assert moves["match"]["length"] == 40 and 0 < moves["plays"][0]["mwc"] < 1
    assert run_json(capsys, "cube", f"{START}:{long_match}")["unit"] == "mwc"
    too_long = MatchID(length=65).to_string()
    status, _, err = run(capsys, "cube", f"{START}:{too_long}")
    assert status == 2 and "64" in err


def test_batch_bare_carriage_return_is_one_request(capsys, tmp_path):
    requests = tmp_path / "cr.txt"
    requests.write_bytes(f"{START} 31\rjunk\n{START}\r31\r\n{START} 31\r\n\r\n{START}\x0b31\n".encode())
    status, out, _ = run(capsys, "moves", "--batch", requests)
    answers = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and len(answers) == 4  # four requests, four answers
    assert "error" in answers[0] and "error" in answers[1] and len(answers[2]["plays"]) == 16 and "error" in answers[3]


@pytest.mark.parametrize(
    "position",
    ["4HPwATDgc/ABMA:MIEKAAAAAAAA", "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:1:0:10"],  # dice 5-2 rolled
)
def test_cube_refuses_rolled_dice(capsys, position):
    """After the roll no double is possible: bgbot cube says so instead of answering as if before the roll."""
    for extra in ([], ["--json"]):
        assert cli.main(["cube", position, *extra]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        assert err.startswith("error: the dice are already rolled") and "(52)" in err and "no double" in err


def test_help_texts_do_not_drift(capsys):
    """Every subcommand's --help: no doubled percent sign (argparse does not %-format descriptions), no model file
    that does not exist; bgbot gate says where it copies the candidate (AGAINST's directory)."""
    from bgbot.cli import COMMANDS

    for command in [None, *COMMANDS]:
        assert cli.main([command, "--help"] if command else ["--help"]) == 0
        text = capsys.readouterr().out
        assert "%%" not in text, command
        for path in set(re.findall(r"models/[\w.-]+\.pt", text)):
            assert (Path(__file__).parents[1] / path).is_file(), (command, path)
        if command == "gate":
            assert "AGAINST's directory" in " ".join(text.split()) and "into models/" not in text


def test_ctrl_c_while_a_command_loads_exits_130_quietly(monkeypatch, capsys):
    def loading(command):
        raise KeyboardInterrupt  # as a Ctrl-C during the command modules' imports

    monkeypatch.setattr(cli, "build_parser", loading)
    assert cli.main(["rollout", "4HPwATDgc/ABMA"]) == 130
    out, err = capsys.readouterr()
    assert out == "" and err == ""
