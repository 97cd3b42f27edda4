"""Fuzzing the command line: generated inputs for every parser, and a table of hostile command lines, all
through :func:`bgbot.cli.main` in this one process. Every answer must be a valid one (exit 0) or one clean
``error: ...`` line with exit status 2 -- never a traceback (any exception escaping ``main`` fails the test).

Inputs: Position IDs, Match IDs (every 12-character base64 string is a bit pattern over all fields: game states,
resignations, doubles, dice, cubes, scores), XGIDs (fields drawn around their valid ranges), play notation, dice,
training configs (TOML values of every type), and batch lines (with carriage returns, NUL, non-ASCII, huge).
The model is loaded once (``load_bot`` is cached) so that the thousands of calls take seconds.
"""

from __future__ import annotations

import base64
import json
import string

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgbot import cli
from bgbot.commands import common
from bgbot.formats import positionid
from bgbot.rules.board import starting_position

START = "4HPwATDgc/ABMA"
XSTART = "-b----E-C---eE---c-e----B-"
B64 = string.ascii_letters + string.digits + "+/"
FUZZ = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module", autouse=True)
def cached_bot():
    """Load the shipped model once for the whole module."""
    bot = common.load_bot(type("Args", (), {"model": None})())
    original = common.load_bot
    common.load_bot = lambda args: bot if args.model is None else original(args)
    yield bot
    common.load_bot = original


def check(capsys, argv: list[str]) -> tuple[int, str]:
    """Run ``bgbot argv``: exit 0 with output, or exit 2 with exactly one ``error:`` line. Returns (status, out)."""
    status = cli.main(argv)
    out, err = capsys.readouterr()
    if status == 0:
        assert out.strip(), (argv, err)
    else:
        assert status == 2, (argv, status, err)
        lines = [line for line in err.splitlines() if not line.startswith("note: ")]
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
    return status, out


text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)
b64 = st.text(st.sampled_from(B64), min_size=0, max_size=16)


@st.composite
def position_ids(draw) -> str:
    """Valid Position IDs of random positions, mutated or not, or base64 noise."""
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(b64)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pos = starting_position().copy()
    for _ in range(draw(st.integers(0, 30))):  # shuffle checkers around, keeping 15 a side on the board
        side = rng.choice([1, -1])
        src = [i for i in range(26) if pos[i] * side > 0]
        dst = [i for i in range(1, 25) if pos[i] * side >= 0]
        i, j = rng.choice(src), rng.choice(dst)
        pos[i] -= side
        pos[j] += side
    pid = positionid.encode(pos)
    if kind == 2:
        k = draw(st.integers(0, 13))
        pid = pid[:k] + draw(st.sampled_from(B64 + "=-_ ")) + pid[k + 1 :]
    return pid


@st.composite
def match_ids(draw) -> str:
    """Any 12-character base64 string (random values of every Match ID field, also the impossible ones), or, as often,
    a plausible Match ID (a game in progress, a small cube, a score within the match) with a few bits flipped."""
    if draw(st.booleans()):
        return base64.b64encode(draw(st.integers(0, 2**66 - 1)).to_bytes(9, "little")).decode()
    on_roll = draw(st.integers(0, 1))
    length = draw(st.sampled_from([0, 1, 3, 5, 7, 25, 40, 64, 65]))
    dice = draw(st.sampled_from([(0, 0), (0, 0)]) | st.tuples(st.integers(1, 6), st.integers(1, 6)))
    fields = [  # (value, width) from bit 0, GNU Backgammon's layout (bgbot.formats.matchid)
        (draw(st.integers(0, 3)), 4),
        (draw(st.sampled_from([0, 1, 3, 3])), 2),
        (on_roll, 1),
        (draw(st.sampled_from([False, False, False, True])), 1),
        (1, 3),
        (on_roll, 1),
        (0, 1),
        (0, 2),
        (dice[0], 3),
        (dice[1], 3),
        (length, 15),
        (draw(st.integers(0, max(length - 1, 0))), 15),
        (draw(st.integers(0, max(length - 1, 0))), 15),
        (draw(st.integers(0, 1)), 1),
    ]
    bits, shift = 0, 0
    for value, width in fields:
        bits |= int(value) << shift
        shift += width
    for flip in draw(st.lists(st.integers(0, 65), max_size=1)):
        bits ^= 1 << flip
    return base64.b64encode(bits.to_bytes(9, "little")).decode()


@st.composite
def xgids(draw) -> str:
    """Plausible XGIDs (small cube within the maximum, a score within the match, Crawford/Jacoby in range), with
    one field in two replaced by a value from around (or far outside) its range, or by noise."""
    length = draw(st.sampled_from([0, 0, 1, 3, 5, 7, 25, 40, 64]))
    fields: list[object] = [
        XSTART,
        draw(st.integers(0, 3)),
        draw(st.integers(-1, 1)),
        draw(st.sampled_from([-1, 1])),
        draw(st.sampled_from(["00", "52", "66", "31", "D"])),
        draw(st.integers(0, max(length - 1, 0))),
        draw(st.integers(0, max(length - 1, 0))),
        draw(st.integers(0, 1 if length else 3)),
        length,
        10,
    ]
    if draw(st.booleans()):
        k = draw(st.integers(0, 9))
        fields[k] = draw(
            st.one_of(
                st.integers(-2, 70),
                st.sampled_from(["D", "B", "R", "70", "x", "123", "", "1000000", "-0"]),
                text,
            )
        )
    return "XGID=" + ":".join(str(f) for f in fields)


@FUZZ
@given(pid=position_ids())
def test_position_ids(capsys, pid):
    check(capsys, ["show", pid])


@FUZZ
@given(mid=match_ids())
def test_match_ids(capsys, mid):
    status, _ = check(capsys, ["show", f"{START}:{mid}"])
    check(capsys, ["cube", f"{START}:{mid}", "--probabilities", "0.6,0.2,0.01,0.1,0.005", "--json"])
    if status == 0:
        check(capsys, ["move", f"{START}:{mid}", "31", "--json"])


@FUZZ
@given(xgid=xgids())
def test_xgids(capsys, xgid):
    status, _ = check(capsys, ["show", xgid])
    if status == 0:
        check(capsys, ["cube", xgid, "--json"])


@settings(
    max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    play=st.one_of(
        text, st.from_regex(r"(bar|\d{1,3})([/-](\d{1,3}|off|o|b)\*?){1,3}(\(\d{1,5}\))?( \d{1,2}/\d{1,2}){0,3}")
    )
)
def test_play_notation(capsys, play):
    check(capsys, ["move", START, "31", "--play", play, "--json"])


@FUZZ
@given(dice=st.one_of(text, st.from_regex(r"\s*\d{1,3}\s*[-, /]?\s*\d{0,3}\s*", fullmatch=True)))
def test_dice(capsys, dice):
    check(capsys, ["moves", START, dice])


@FUZZ
@given(
    ply=st.one_of(st.integers(-(2**70), 2**70), st.integers(-2, 4)),
    command=st.sampled_from(["move", "cube"]),
)
def test_counts(capsys, ply, command):
    argv = [command, START] + (["31"] if command == "move" else []) + ["--ply", str(ply)]
    if ply <= 0 or ply > 1:  # 2-ply answers take a second each: the validation is what is fuzzed
        check(capsys, argv)


toml_values = st.one_of(
    st.integers(-(2**65), 2**65).map(str),
    st.floats(allow_nan=True).map(lambda v: repr(v).replace("inf", "inf").replace("nan", "nan")),
    st.booleans().map(lambda v: "true" if v else "false"),
    text.map(json.dumps),
    st.just("[1, 2]"),
    st.just("{a = 1}"),
    st.just("1979-05-27"),
)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.lists(
        st.tuples(
            st.sampled_from(["games", "lr", "n_hidden", "td_lambda", "seed", "activation", "bogus"]), toml_values
        ),
        max_size=4,
    ),
    garbage=st.one_of(st.just(""), text),
)
def test_training_configs(capsys, tmp_path_factory, body, garbage):
    # --resume in an empty run directory: a config that passes stops at "nothing to resume", so nothing trains
    folder = tmp_path_factory.mktemp("cfg")
    config = folder / "c.toml"
    config.write_text("\n".join(f"{k} = {v}" for k, v in dict(body).items()) + "\n" + garbage)
    status, _ = check(capsys, ["train", "--config", str(config), "--run-dir", str(folder / "run"), "--resume"])
    assert status == 2


line_text = st.text(st.characters(codec="utf-8"), max_size=60)


@settings(
    max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(
        st.one_of(
            line_text,
            position_ids().map(lambda p: p + " 31"),
            match_ids().map(lambda m: f"{START}:{m}"),
            xgids(),
            st.sampled_from(
                [f"{START} 31\rjunk", f"{START}\r31", "\x00\x01\x02", " " * 5, f"{START} 31 " + "9" * 5000]
            ),
        ),
        max_size=8,
    ),
    command=st.sampled_from(["moves", "move", "cube"]),
)
def test_batch_lines(capsys, tmp_path_factory, lines, command):
    requests = tmp_path_factory.mktemp("batch") / "requests.txt"
    requests.write_bytes("\n".join(line.replace("\n", " ") for line in lines).encode("utf-8", "surrogatepass") + b"\n")
    status, out = cli.main([command, "--batch", str(requests)]), capsys.readouterr().out
    expected = [line for line in requests.read_bytes().decode("utf-8", "replace").split("\n") if line.strip()]
    answers = out.splitlines()
    assert status == 0 and len(answers) == len(expected)  # one answer per request, in step
    for answer in answers:
        obj = json.loads(answer)
        assert set(obj) == {"error"} or "position_id" in obj


HOSTILE = [
    ["move", START, "31", "--ply", "-1"],
    ["move", START, "31", "--ply", "3"],
    ["move", START, "31", "--ply", "18446744073709551616"],
    ["move", START, "31", "--ply", "1e3"],
    ["cube", START, "--ply", "99"],
    ["cube", START, "--probabilities", "nan,0,0,0,0"],
    ["cube", START, "--probabilities", "inf,inf,inf,inf,inf"],
    ["cube", START, "--probabilities", "1,1,1,1,1"],
    ["cube", START, "--probabilities", "0.5,0.2", "--ply", "1"],
    ["cube", START, "--jacoby", "on", "--probabilities", "0.5,0.1,0,0.1,0"],
    ["cube", f"{START}:cAngAAAAAAAE", "--jacoby", "on"],
    ["move", START, "71"],
    ["move", START, "3", "1", "2"],
    ["move", START, "٣١"],
    ["move", "", "31"],
    ["move", START + "\x00", "31"],
    ["move", START, "31", "--play", ""],
    ["move", START, "31", "--play", "24/" + "9" * 5000],
    ["move", START, "31", "--play", "bar/22"],
    ["move", START, "31", "--play", "8/5(" + "9" * 5000 + ")"],
    ["move", START, "31", "--play", "8/5(٢) 6/5"],
    ["move", START, "31", "--play", "８/５ ６/５"],
    ["move", START, "31", "--model", "/nonexistent.pt"],
    ["move", START, "31", "--model", "/dev/null"],
    ["move", START, "31", "--model", "/"],
    ["move", START, "31", "--batch", "/nonexistent"],
    ["move", START, "31", "--batch", "-"],
    ["moves", "--batch", "/"],
    ["show", "XGID=" + ":" * 9],
    ["show", "XGID=" + XSTART + ":0:0:1:00:0:0:1:0:99"],
    ["show", "XGID=" + XSTART + ":20:0:1:00:0:0:1:0:10"],
    ["show", "XGID=" + XSTART + ":1:0:1:00:0:0:1:1:10"],
    ["show", START + ":" + "A" * 12],
    ["show", START + ":" + "/" * 12],
    ["show", START + ":cAkAAAAAAAAA:extra"],
    ["show", "x" * 100000],
    ["show", START, "66", "66"],
    ["train", "--config", "/nonexistent.toml", "--run-dir", "/tmp/bgbot-fuzz-never"],
    ["train", "--config", "tiny", "--run-dir", "/tmp/bgbot-fuzz-never", "--games", "0"],
    ["train", "--config", "tiny", "--run-dir", "/tmp/bgbot-fuzz-never", "--games", "-5"],
    ["train", "--config", "tiny", "--run-dir", "/tmp/bgbot-fuzz-never", "--games", "10101010101010101010"],
    ["train", "--config", "tiny", "--run-dir", "", "--games", "64"],
    ["train", "--config", "tiny", "--run-dir", "/proc/bgbot", "--games", "64"],
    ["train", "--config", "tiny", "--run-dir", "/tmp/bgbot-fuzz-never", "--resume", "--force"],
    ["train", "--config", "/", "--run-dir", "/tmp/bgbot-fuzz-never"],
    ["nosuchcommand"],
    [],
    ["--version", "extra"],
]


@pytest.mark.parametrize("argv", HOSTILE, ids=lambda a: " ".join(a)[:60])
def test_hostile_command_lines(capsys, argv, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    check(capsys, argv)


@st.composite
def valid_games(draw) -> tuple[str, str, str]:
    """A valid game state and a roll: (ID without dice, the same as a GNUbg ID or an XGID, dice text). The position
    comes from random legal play from the start; the cube and score are ones that occur (money: any cube up to 64,
    centred or owned; a match: cube 1 centred, or 2 owned where the doubler needed more than 1 point)."""
    from bgbot.formats.matchid import MatchID
    from bgbot.formats.xgid import XGID
    from bgbot.rules.board import flip, game_result
    from bgbot.rules.movegen_scalar import legal_plays
    from bgbot.rules.state import CubeState, MatchState

    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pos = starting_position()
    for _ in range(draw(st.integers(0, 40))):
        plays = legal_plays(pos, *(int(d) for d in rng.integers(1, 7, size=2)))
        after = np.asarray(plays[rng.integers(len(plays))].afterstate, dtype=np.int8) if plays else pos
        if game_result(after[None, :])[0] != 0:
            break
        pos = flip(after)
    length = draw(st.sampled_from([0, 0, 1, 3, 5, 7, 11, 25]))
    owner = draw(st.sampled_from(["centre", "me", "opponent"]))
    if length:
        score = (draw(st.integers(0, length - 1)), draw(st.integers(0, length - 1)))
        crawford = (length - 1) in score and draw(st.booleans())
        doubler_away = length - (score[1] if owner == "me" else score[0])
        cube = CubeState(2, owner) if owner != "centre" and not crawford and doubler_away > 1 else CubeState()
        match = MatchState(length, score, crawford)
    else:
        cube = CubeState(1 << draw(st.integers(0 if owner == "centre" else 1, 6)), owner)
        match = MatchState(jacoby=draw(st.booleans()))
    dice = draw(st.tuples(st.integers(1, 6), st.integers(1, 6)))
    pid = positionid.encode(pos)
    ids = [f"{pid}:{MatchID.from_states(cube, match).to_string()}", XGID.from_states(pos, cube, match).to_string()]
    return pid, draw(st.sampled_from(ids)), f"{dice[0]}{dice[1]}"


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(game=valid_games())
def test_valid_input_is_never_refused(capsys, game):
    """Every valid position, GNUbg ID and XGID, valid dice and every legal play written as GNU Backgammon writes it are
    answered (exit 0) by show, cube, moves and move."""
    from bgbot.formats import context, notation
    from bgbot.rules.movegen_scalar import legal_plays

    pid, full, dice = game
    for argv in (["show", full], ["cube", full, "--json"], ["moves", full, dice], ["show", pid, dice]):
        status, _ = check(capsys, argv)
        assert status == 0, argv
    status, out = check(capsys, ["move", full, dice, "--json"])
    assert status == 0
    ctx = context.resolve(full, dice)
    for play in legal_plays(ctx.position, *ctx.dice)[:3]:
        written = notation.format_play(ctx.position, play)
        status, _ = check(capsys, ["move", full, dice, "--play", written or "(no play)", "--json"])
        assert status == 0, (full, dice, written)
