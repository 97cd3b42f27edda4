"""bgbot external: GNU Backgammon 1.07 (Debian's gnubg, headless) plays whole matches against it through its
external-player socket; every play it recorded must be legal, and the match must end with a final score."""

import socket
import subprocess
import sys
import time

import pytest

from bgbot.api import Bot
from bgbot.formats import matfile
from bgbot.formats.positionid import encode
from bgbot.protocols import external
from bgbot.rules.board import starting_position

GNUBG = "/usr/games/gnubg"
BGBOT = [sys.executable, "-m", "bgbot.cli"]
# Lines GNU Backgammon 1.07 sent to player 0 (named gnubg) in a match against player 1 (root).
OPENING = "board:gnubg:root:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:-1:2:1:2:1:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1"
HIT = "board:gnubg:root:3:0:0:-1:-1:2:0:0:0:5:2:1:0:0:0:-3:4:-1:0:0:-4:0:-5:0:0:0:0:1:0:-1:3:1:3:1:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1"
DOUBLED = "board:root:gnubg:3:0:0:-1:-1:2:0:0:0:5:2:1:0:0:0:-3:4:-1:0:0:-4:0:-5:0:0:0:0:1:0:1:0:0:0:0:1:1:1:1:1:-1:0:25:0:0:0:0:0:0:0:1"
OWNED = "board:gnubg:root:3:0:0:-1:-1:2:0:2:0:5:1:0:0:0:0:-3:4:-1:0:0:-4:0:-5:0:0:0:0:1:0:-1:0:0:0:0:2:0:1:0:1:-1:0:25:0:0:0:0:0:0:0:1"


@pytest.fixture(scope="module")
def bot():
    return Bot.load()


def test_parse_board_as_gnubg_sends_it():
    b = external.parse_board(OPENING + "\x00")
    assert encode(b.position) == encode(starting_position()) and b.dice == (2, 1) and not b.doubled
    assert b.match.length == 3 and b.cube.owner == "centre" and b.names == ("gnubg", "root")
    hit = external.parse_board(HIT)
    # player 0 after 24/23 13/11, 13/10 10/8; its blot on 23 was hit: one checker on the bar
    assert hit.position[25] == 1 and hit.position[24] == 1 and hit.position[13] == 3 and hit.position[8] == 4
    assert hit.position[11] == 1 and hit.position[6] == 5 and hit.dice == (3, 1)
    d = external.parse_board(DOUBLED)
    assert d.doubled and encode(d.position) == encode(hit.position) and d.dice is None
    assert d.cube.value == 1 and d.names == ("gnubg", "root")
    owned = external.parse_board(OWNED)
    assert owned.cube.value == 2 and owned.cube.owner == "me" and owned.dice is None


def test_answers(bot):
    assert external.answer_line(bot, OPENING) in ("24/23 13/11", "13/11 24/23")
    assert external.answer_line(bot, HIT).startswith("bar/")
    assert external.answer_line(bot, DOUBLED) in ("take", "drop")
    assert external.answer_line(bot, OWNED) in ("roll", "double")
    for bad in ("hello", "board:a:b:3", OPENING.replace(":5:", ":x:", 1), OPENING.replace(":-2:", ":-9:", 1)):
        answer = external.answer_line(bot, bad)
        assert answer.startswith("Error: ") and "\n" not in answer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [*BGBOT, "external", "--port", str(port)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    assert "listening" in proc.stderr.readline()
    return proc


def test_port_in_use_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        done = subprocess.run([*BGBOT, "external", "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}")


def test_gnubg_plays_a_3_point_match_against_bgbot_external(tmp_path):
    port = _free_port()
    proc = _start(port)
    try:
        # garbage first: a clear error line, and the server keeps serving
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"hello there\n")
            assert s.makefile().readline().startswith("Error: expected a FIBS 'board:...' line")
        mat = tmp_path / "match.mat"
        script = "\n".join(
            [
                f"set player 0 external localhost:{port}",
                "set player 1 gnubg",
                "set player 1 chequerplay evaluation plies 0",
                "set player 1 cubedecision evaluation plies 0",
                "set display off",
                "set seed 11",
                "new match 3",
                f"export match mat {mat}",
                "quit",
                "y",
                "",
            ]
        )
        start = time.time()
        done = subprocess.run([GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=300)
        assert "has won the match" in done.stdout, done.stdout[-2000:]
        assert proc.poll() is None, "bgbot external stopped"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    match = matfile.read_match(mat.read_text())
    assert match.length == 3 and match.names == ("gnubg", "root")
    final = list(match.games[-1].scores)
    plays = 0
    for g in match.games:
        decisions = matfile.replay(g, match.length)  # raises on any illegal or missing play
        plays += sum(d.kind == "move" and d.side == 0 for d in decisions)
        assert g.game.winner in (0, 1) and g.game.points >= 1
    final[match.games[-1].game.winner] += match.games[-1].game.points
    assert max(final) >= 3 and min(final) < 3, final
    assert plays >= 10, f"bgbot made only {plays} plays in {time.time() - start:.0f} s"
