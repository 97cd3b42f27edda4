"""bgbot serve: a real server on a free port, every endpoint through a real HTTP client, answers equal to the CLI's
--json, bad input (400/422) with the server staying up, and 200 concurrent move requests batched through the
evaluator (few evaluator batches), each answered as when it comes alone. Speed: scripts/bench_server.py."""

import asyncio
import json
import re
import socket
import subprocess
from pathlib import Path
from urllib.parse import quote, urlencode

import httpx
import pytest

from bgbot import cli
from bgbot.api import Bot, move_json
from bgbot.arena import rollout as ro
from bgbot.formats import context, matfile
from tests.gnubg_import import imported_score
from tests.servers import BGBOT, free_port, serving

START = "4HPwATDgc/ABMA"
PLUS = "4GvwASHgc+QBUA"  # a Position ID with a '+'
MATCH = "4HPwATDgc/ABMA:cAkAAAAAAAAA"
XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"
DOUBLED = "4HPwATDgc/ABUA:MBkAAAAAAAAA"  # a double awaits the answer
XGID_BEFORE_ROLL = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10"


@pytest.fixture(scope="module")
def server():
    with serving() as url:
        yield url


def cli_json(capsys, *argv):
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def close(a, b, tol=2e-6):
    """JSON equal up to the last digit of 6-decimal rounding (a batch of another size may round the other way; two
    plays whose values differ by less than that may then swap places, and their ranks with them)."""
    if isinstance(a, dict) and "plays" in a and "equity" in a["plays"][0]:
        rest = all(close(a[k], b[k], tol) for k in a if k != "plays") and a.keys() == b.keys()
        # a play's rank follows from the order, which near-ties may swap: compare the rest play by play
        pa, pb = ({p["position_id"]: {k: v for k, v in p.items() if k != "rank"} for p in x["plays"]} for x in (a, b))
        key = "mwc" if "mwc" in a["plays"][0] else "equity"
        ordered = all(x[i][key] >= x[i + 1][key] - tol for x in (a["plays"], b["plays"]) for i in range(len(x) - 1))
        return rest and ordered and pa.keys() == pb.keys() and all(close(pa[k], pb[k], tol) for k in pa)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= tol
    return a == b


def get(url, path, **params):
    query = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
    return httpx.get(f"{url}{path}?{query}", timeout=60)


def test_health_and_docs(server):
    health = httpx.get(server + "/v1/health").json()
    assert health["status"] == "ok" and health["model"].endswith("default_model.pt")
    assert httpx.get(server + "/docs").status_code == 200
    paths = httpx.get(server + "/openapi.json").json()["paths"]
    assert {"/v1/health", "/v1/moves", "/v1/move", "/v1/cube", "/v1/batch"} <= set(paths)


@pytest.mark.parametrize(
    "path,params,argv",
    [
        ("/v1/moves", {"position": START, "dice": "31"}, ["moves", START, "31"]),
        ("/v1/moves", {"position": PLUS, "dice": "6-6"}, ["moves", PLUS, "66"]),
        ("/v1/move", {"position": START, "dice": "31"}, ["move", START, "31"]),
        ("/v1/move", {"position": PLUS, "dice": "52", "ply": 1}, ["move", PLUS, "52", "--ply", "1"]),
        ("/v1/move", {"position": MATCH, "dice": "43"}, ["move", MATCH, "43"]),
        ("/v1/move", {"position": XGID}, ["move", XGID]),
        ("/v1/cube", {"position": PLUS}, ["cube", PLUS]),
        ("/v1/cube", {"position": START, "jacoby": "off"}, ["cube", START, "--jacoby", "off"]),
        ("/v1/cube", {"position": START, "ply": 1}, ["cube", START, "--ply", "1"]),
        (
            "/v1/cube",
            {"position": START, "probabilities": "0.7,0.2,0.01,0.05,0.001"},
            ["cube", START, "--probabilities", "0.7,0.2,0.01,0.05,0.001"],
        ),
        ("/v1/cube", {"position": XGID_BEFORE_ROLL}, ["cube", XGID_BEFORE_ROLL]),
        (
            "/v1/cube",
            {"position": XGID_BEFORE_ROLL, "ply": 1, "cube_search": "true"},
            ["cube", XGID_BEFORE_ROLL, "--ply", "1", "--cube-search"],
        ),
        (
            "/v1/cube",
            {"position": PLUS, "ply": 1, "cube_search": "true"},
            ["cube", PLUS, "--ply", "1", "--cube-search"],
        ),
    ],
)
def test_answers_equal_the_cli(server, capsys, path, params, argv):
    got = get(server, path, **params)
    assert got.status_code == 200, got.text
    assert close(got.json(), cli_json(capsys, *argv))


def test_plus_decoded_to_a_space_is_read_back(server, capsys):
    raw = httpx.get(f"{server}/v1/moves?position={PLUS}&dice=31")  # '+' unencoded: the server sees a space
    assert raw.status_code == 200 and raw.json() == cli_json(capsys, "moves", PLUS, "31")


def test_batch(server, capsys):
    body = {
        "requests": [
            {"endpoint": "move", "position": START, "dice": "31"},
            {"endpoint": "moves", "position": PLUS, "dice": "21"},
            {"endpoint": "cube", "position": MATCH},
            {"endpoint": "move", "position": START, "dice": "71"},
            {"endpoint": "move", "position": START, "dice": "44", "ply": 1},
            {"endpoint": "move", "position": DOUBLED},
            # settings an endpoint does not take: refused as GET /v1/cube?dice=... is, never ignored
            {"endpoint": "cube", "position": START, "dice": "31"},
            {"endpoint": "moves", "position": START, "dice": "31", "ply": 1},
            {"endpoint": "move", "position": START, "dice": "31", "jacoby": "off"},
            {"endpoint": "move", "position": START, "dice": "31", "probabilities": "0.5,0.1,0,0.1,0"},
            {"endpoint": "moves", "position": START, "dice": "31", "ply": 0},  # the default: taken
        ]
    }
    answers = httpx.post(server + "/v1/batch", json=body, timeout=60).json()["answers"]
    assert close(answers[0], cli_json(capsys, "move", START, "31"))
    assert answers[1] == cli_json(capsys, "moves", PLUS, "21")
    assert close(answers[2], cli_json(capsys, "cube", MATCH))
    assert answers[3] == {"error": "impossible dice '71': each die is 1 to 6", "status": 400}
    assert close(answers[4], cli_json(capsys, "move", START, "44", "--ply", "1"))
    assert cli.main(["move", DOUBLED, "--json"]) == 2
    assert answers[5] == {"error": capsys.readouterr().err.strip().removeprefix("error: "), "status": 400}
    assert answers[5]["error"].startswith("a double awaits an answer in '4HPwATDgc/ABUA:MBkAAAAAAAAA'")
    assert answers[6:10] == [
        {
            "error": "unknown field 'dice': a cube request takes position, jacoby, ply, probabilities, cube_search or a board",
            "status": 422,
        },
        {"error": "unknown field 'ply': a moves request takes position, dice or a board", "status": 422},
        {"error": "unknown field 'jacoby': a move request takes position, dice, ply or a board", "status": 422},
        {"error": "unknown field 'probabilities': a move request takes position, dice, ply or a board", "status": 422},
    ]
    assert answers[10] == cli_json(capsys, "moves", START, "31") and len(answers[10]["plays"]) == 16


def test_bad_input_400_and_422_server_stays_up(server, capsys):
    cases = [
        ("/v1/move", {"position": START, "dice": "71"}, ["move", START, "71"]),
        ("/v1/move", {"position": "nonsense", "dice": "31"}, ["move", "nonsense", "31"]),
        ("/v1/move", {"position": START}, ["move", START]),
        ("/v1/moves", {"position": "4HPwATDgc/ABMA:zzzz", "dice": "31"}, ["moves", "4HPwATDgc/ABMA:zzzz", "31"]),
        ("/v1/cube", {"position": START, "probabilities": "1,2"}, ["cube", START, "--probabilities", "1,2"]),
        # a double awaits the answer: no roll to play, with or without dice, as the CLI says
        ("/v1/move", {"position": DOUBLED}, ["move", DOUBLED]),
        ("/v1/move", {"position": DOUBLED, "dice": "31"}, ["move", DOUBLED, "31"]),
        ("/v1/moves", {"position": DOUBLED}, ["moves", DOUBLED]),
    ]
    for path, params, argv in cases:
        got = get(server, path, **params)
        assert cli.main(argv) == 2
        message = capsys.readouterr().err.strip().removeprefix("error: ")
        if (
            path == "/v1/move" and "dice" not in params and params["position"] != DOUBLED
        ):  # the CLI asks for DICE after POSITION; the API for dice
            message = "no dice: give dice (e.g. 31), or a position that carries dice"
        message = re.sub(r"--([a-z]+)", r"\1", message)  # the API names its fields, not the CLI's flags
        assert got.status_code == 400 and got.json() == {"detail": message}, (params, got.text)
    got = get(server, "/v1/cube", position=XGID)  # dice rolled: no cube decision, as bgbot cube says
    assert got.status_code == 400 and got.json()["detail"].startswith("the dice are already rolled (52)")
    got = get(server, "/v1/move", dice="31")  # neither a position nor a board
    assert got.status_code == 400 and "needs a position" in got.json()["detail"]
    for path, params in [
        ("/v1/move", {"position": START, "dice": "31", "ply": "deep"}),
        ("/v1/cube", {"position": START, "jacoby": "maybe"}),
    ]:
        assert get(server, path, **params).status_code == 422
    assert httpx.post(server + "/v1/batch", content=b"not json").status_code == 422
    assert httpx.post(server + "/v1/batch", json={"requests": {"endpoint": "move"}}).status_code == 422
    got = httpx.post(server + "/v1/batch", json={"requests": [{"endpoint": "x"}]})  # refused alone
    assert got.status_code == 200
    assert got.json() == {"answers": [{"error": "endpoint: Input should be 'moves', 'move' or 'cube'", "status": 422}]}
    # a non-finite number in the body: refused naming it, not a 500 from rendering the validation error
    body = b'{"requests": [{"endpoint": "move", "position": "4HPwATDgc/ABMA", "dice": "31", "ply": 1e400}]}'
    got = httpx.post(server + "/v1/batch", content=body, headers={"content-type": "application/json"})
    assert got.status_code == 200 and got.json()["answers"][0]["error"].startswith("ply: ")
    assert httpx.get(server + "/v1/health").json()["status"] == "ok"


def test_port_in_use():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        done = subprocess.run([*BGBOT, "serve", "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert (
        done.stderr
        == f"error: port {port} on 127.0.0.1 is already in use: stop what listens there, or give another --port\n"
    )


def test_serve_refuses_a_port_in_use_itself():
    """``serve`` binds the socket it serves on before anything else (uvicorn is handed that socket, never binds one of
    its own): a port taken after ``bgbot serve``'s early check is refused with the same one-line message."""
    from bgbot.protocols import server as srv

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        with pytest.raises(srv.ServerError) as err:
            srv.serve(Bot.load(), "127.0.0.1", port)
    assert (
        str(err.value) == f"port {port} on 127.0.0.1 is already in use: stop what listens there, or give another --port"
    )


async def _raw_get_all(url: str, paths: list[str]) -> list[dict]:
    """GET every path at once, each on its own keep-alive HTTP/1.1 connection opened beforehand, all requests written
    before any answer is read (a minimal client: httpx spends ~2.5 ms of CPU a request, so its requests reach the
    server one by one and the server, keeping pace, would answer them one by one)."""
    host, _, port = url.removeprefix("http://").partition(":")
    conns = [await asyncio.open_connection(host, int(port)) for _ in paths]

    async def one(conn, path):
        reader, writer = conn
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode("ascii"))
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
        return json.loads(await reader.readexactly(length))

    try:
        return await asyncio.gather(*(one(c, p) for c, p in zip(conns, paths)))
    finally:
        for _, writer in conns:
            writer.close()


def test_200_concurrent_moves_answered_correctly_in_few_batches(server):
    """200 concurrent move requests: each answer equal to the one the same request gets alone (over httpx) and to
    the CLI's (bgbot.api.move_json of Bot.rank_plays), and the server evaluated them in a few batches, not 200.
    Their speed against 200 sequential requests is measured by scripts/bench_server.py, not here."""
    lines = [x.split()[0] for x in open("tests/data/gnubg_selfplay_positions.txt") if x.strip() and x[0] != "#"]
    requests = [{"position": pid, "dice": f"{1 + i % 6}{1 + (i * 7) % 6}"} for i, pid in enumerate(lines[1:201])]
    with httpx.Client(base_url=server, timeout=60) as client:
        sequential = [client.get("/v1/move", params=r) for r in requests]
    assert all(r.status_code == 200 for r in sequential)
    before = httpx.get(server + "/v1/health").json()
    concurrent = asyncio.run(_raw_get_all(server, [f"/v1/move?{urlencode(r)}" for r in requests]))
    after = httpx.get(server + "/v1/health").json()
    bot = Bot.load()
    for r, alone, together in zip(requests, sequential, concurrent):
        ctx = context.resolve(r["position"], r["dice"])
        expected = move_json(ctx, bot.rank_plays(ctx.position, ctx.dice, ctx.cube, ctx.match))
        assert close(together, alone.json()) and close(together, expected), r
    assert after["requests"] - before["requests"] == 200
    batches = after["batches"] - before["batches"]
    assert 1 <= batches <= 20, batches  # all 200 requests were in flight together: typically 2 batches


# -- the server's limits -----------------------------------------------------------------------------------------------


def test_body_over_the_limit_is_refused_unread(server):
    big = b'{"requests": [' + b" " * (2 << 20) + b"]}"  # 2 MB, over the default 1 MB limit
    got = httpx.post(server + "/v1/batch", content=big, headers={"content-type": "application/json"})
    assert got.status_code == 413 and got.json() == {
        "detail": "the request body is larger than the server's limit of 1048576 bytes"
    }

    def chunks():  # no Content-Length: refused once the bytes read pass the limit
        for _ in range(40):
            yield b" " * 65536

    got = httpx.post(server + "/v1/batch", content=chunks(), headers={"content-type": "application/json"})
    assert got.status_code == 413 and "limit of 1048576 bytes" in got.json()["detail"]
    assert httpx.get(server + "/v1/health").json()["status"] == "ok"


def test_malformed_batch_answer_is_short_and_does_not_echo(server):
    body = {"requests": [{"endpoint": "move", "position": START, "dice": "31"}] * 1001}
    got = httpx.post(server + "/v1/batch", json=body)
    assert got.status_code == 422 and got.json() == {"detail": "requests: at most 1000 requests in a batch"}
    got = httpx.post(server + "/v1/batch", json={"requests": [{"endpoint": "x" * 5000, "position": START}]})
    assert got.status_code == 200 and len(got.text) < 300 and "xxxx" not in got.text  # refused alone, not echoed


def test_openapi_documents_the_batch_limit(server):
    schema = httpx.get(server + "/openapi.json").json()
    requests = schema["components"]["schemas"]["Batch"]["properties"]["requests"]
    assert requests["maxItems"] == 1000 and "1000" in requests["description"]
    assert "1000" in schema["paths"]["/v1/batch"]["post"]["description"]


def test_errors_name_api_fields_not_cli_flags(server):
    got = get(server, "/v1/cube", position=START, probabilities="1,2")
    assert got.status_code == 400 and got.json()["detail"].startswith("probabilities takes five comma-separated")
    assert "--" not in got.text


STARTING_BOARD = {"p1": -2, "p6": 5, "p8": 3, "p12": -5, "p13": 5, "p17": -3, "p19": -5, "p24": 2}


def test_board_as_signed_checker_counts(server):
    by_id = get(server, "/v1/move", position=START, dice="31").json()
    assert get(server, "/v1/move", dice="31", **STARTING_BOARD).json() == by_id
    shown = get(server, "/v1/show", **{**STARTING_BOARD, "p25": 1, "p24": 1}).json()  # one checker of the 24 on the bar
    assert shown["points"][25] == 1 and shown["pips"] == [167 + 1, 167]
    board = [0] * 26
    for k, v in STARTING_BOARD.items():
        board[int(k[1:])] = v
    got = httpx.post(
        server + "/v1/batch",
        json={
            "requests": [{"endpoint": "move", "board": board, "dice": "31"}, {"endpoint": "cube", "board": [0] * 26}]
        },
    ).json()["answers"]
    assert got[0] == by_id and "game is over" in got[1]["error"]
    bad = get(server, "/v1/move", dice="31", **{**STARTING_BOARD, "p6": 9})  # 19 checkers
    assert bad.status_code == 400 and len(bad.json()["detail"]) < 200
    assert get(server, "/v1/move", dice="31", p6="five").status_code == 400


def test_a_board_count_too_large_for_a_machine_integer_is_400(server):
    huge = "9" * 20  # beyond int64: numpy raised OverflowError, a 500
    bad = get(server, "/v1/move", dice="31", p1=huge)
    assert bad.status_code == 400 and "at most 15 checkers" in bad.json()["detail"]
    board = [0] * 26
    board[1] = int(huge)
    bad = httpx.post(server + "/v1/board", json={"points": board}, timeout=60)
    assert bad.status_code == 400 and "at most 15 checkers" in bad.json()["detail"]
    assert get(server, "/v1/health").status_code == 200


def test_a_step_off_the_board_is_400(server):
    for body in ({"steps": [[99, -4]]}, {"move": [26, 3]}, {"steps": [[8, 5]], "move": [-1, 5]}):
        got = httpx.post(server + "/v1/steps", json={"position": START, "dice": "31", **body}, timeout=60)
        assert got.status_code == 400 and "points 0 (off) .. 25" in got.json()["detail"], (body, got.text)
    assert get(server, "/v1/health").status_code == 200


def test_steps_of_a_play_made_by_clicks(server):
    # 24/20 with 3-1 as one click: through 21 (the 3, then the 1) or 23; both are the play 24/20
    got = httpx.post(server + "/v1/steps", json={"position": START, "dice": "31", "move": [24, 20]}).json()
    assert got["complete"] and got["play"] == "24/20" and len(got["steps"]) == 2
    half = httpx.post(server + "/v1/steps", json={"position": START, "dice": "31", "move": [8, 5]}).json()
    assert not half["complete"] and half["steps"] == [[8, 5]] and half["points"][5] == 1 and 6 in half["sources"]
    done = httpx.post(server + "/v1/steps", json={"position": START, "dice": "31", "steps": [[8, 5]], "move": [6, 5]})
    assert done.json()["play"] == "8/5 6/5"
    bad = httpx.post(server + "/v1/steps", json={"position": START, "dice": "31", "move": [6, 1]})
    assert bad.status_code == 400 and bad.json()["detail"] == "6/1 is not a legal move with 3-1 in this position"


def test_a_game_from_a_position_with_the_tutor(server):
    # bgbot on roll in a race it leads by far doubles at once; a take is flagged, the game goes on with the cube at 2
    race = "d7cNAAB3twEAAA"
    game = httpx.post(server + "/v1/games", json={"position": race, "bgbot_first": True}, timeout=60).json()
    assert game["prompt"] == "take" and game["tutor"] == []
    url = f"{server}/v1/games/{game['game_id']}"
    took = httpx.post(url, json={"line": "take", "tutor": 0.06}, timeout=60).json()
    verdict = took["verdict"]
    assert verdict["flagged"] and (verdict["played"], verdict["best"], verdict["unit"]) == ("take", "pass", "equity")
    assert verdict["action"] == "Double, pass" and verdict["error"] > 0.5 and took["tutor"] == [verdict]
    assert took["cube"] == {"value": 2, "owner": "me"} and took["prompt"] == "roll"
    assert httpx.get(url, timeout=60).json()["tutor"] == [verdict]  # kept with the game
    for body, code, text in (
        ({"bgbot_first": True}, 400, "bgbot_first needs a position"),
        ({"position": "nonsense!!"}, 400, "not a position"),
    ):
        bad = httpx.post(server + "/v1/games", json=body, timeout=60)
        assert bad.status_code == code and text in bad.json()["detail"], bad.text
    bad = httpx.post(url, json={"line": "roll", "tutor": -1}, timeout=60)
    assert bad.status_code == 422 and "tutor" in bad.json()["detail"]
    assert get(server, "/v1/health").status_code == 200


def test_a_game_from_a_position_with_dice_plays_those_dice_first(server):
    """``POST /v1/games`` from an XGID with 5-2 rolled asks for a play with 5-2 (the dice are the first roll), as
    ``bgbot play --position`` and GNU Backgammon's ``set xgid`` do."""
    game = httpx.post(server + "/v1/games", json={"position": XGID, "seed": 3}, timeout=60).json()  # 5-2 rolled
    assert (game["prompt"], game["dice"], game["position_id"]) == ("play", [5, 2], context.resolve(XGID).position_id)
    assert game["question"].startswith("your play with 5-2")
    played = httpx.post(f"{server}/v1/games/{game['game_id']}", json={"line": "13/8 13/11"}, timeout=60).json()
    assert played["error"] is None and played["prompt"] == "roll", played  # played; bgbot has rolled and played
    assert len(played["messages"]) == 1 and played["messages"][0].startswith("bgbot rolls "), played


def test_warns_when_not_on_the_loopback():
    from bgbot.protocols import server as srv

    assert srv.is_loopback("127.0.0.1") and srv.is_loopback("::1") and srv.is_loopback("localhost")
    assert not srv.is_loopback("0.0.0.0") and not srv.is_loopback("192.168.1.5")
    port = free_port()
    proc = subprocess.Popen(
        [*BGBOT, "serve", "--host", "0.0.0.0", "--port", str(port)], stderr=subprocess.PIPE, text=True
    )
    try:
        first = proc.stderr.readline()
        assert "warning" in first and "no login" in first and "0.0.0.0" in first
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_unknown_or_repeated_fields_and_a_position_with_a_board_are_refused(server):
    by_id = get(server, "/v1/move", position=START, dice="31")
    assert by_id.status_code == 200
    for path in ("/v1/move", "/v1/moves", "/v1/show"):
        bad = get(server, path, dice="31", **{**STARTING_BOARD, "p26": 1})  # p26: no such point
        assert bad.status_code == 422 and bad.json()["detail"].startswith("unknown field 'p26'"), (path, bad.text)
        both = get(server, path, position=START, dice="31", p6=4)  # the board's p6 must not lose silently
        assert both.status_code == 400, (path, both.text)
        assert both.json()["detail"] == "give one of position or a board (p0 .. p25), not both"
    bad = get(server, "/v1/cube", **{**STARTING_BOARD, "p-1": 1})
    assert bad.status_code == 422 and "unknown field 'p-1'" in bad.json()["detail"]
    typo = get(server, "/v1/move", position=START, dise="31")
    assert typo.status_code == 422 and typo.json()["detail"].startswith("unknown field 'dise': this request takes")
    assert "dice" in typo.json()["detail"]
    twice = httpx.get(f"{server}/v1/move?dice=31&p6=5&p6=4&p8=3", timeout=60)
    assert twice.status_code == 400 and twice.json()["detail"] == "'p6' is given 2 times: give it once"
    both = get(server, "/v1/cube", position=START, p6=5)
    assert both.status_code == 400 and "not both" in both.json()["detail"]
    # a batch: a request with both is refused alone; an unknown field is a 422 naming it
    board = [0] * 26
    for k, v in STARTING_BOARD.items():
        board[int(k[1:])] = v
    reqs = [{"endpoint": "move", "position": START, "board": board, "dice": "31"}, {"endpoint": "cube", "board": board}]
    got = httpx.post(server + "/v1/batch", json={"requests": reqs}, timeout=60)
    assert got.status_code == 200
    answers = got.json()["answers"]
    assert answers[0] == {"error": "give one of position or board, not both", "status": 400} and "cube" in answers[1]
    extra = httpx.post(
        server + "/v1/batch", json={"requests": [{"endpoint": "cube", "board": board, "p26": 1}]}, timeout=60
    )
    assert extra.status_code == 200 and extra.json()["answers"] == [{"error": "p26: unknown field", "status": 422}]
    extra = httpx.post(server + "/v1/board", json={"points": board, "cube": 2}, timeout=60)
    assert extra.status_code == 422 and extra.json()["detail"] == "cube: unknown field"
    extra = httpx.post(server + "/v1/steps", json={"position": START, "dice": "31", "board": board}, timeout=60)
    assert extra.status_code == 422 and extra.json()["detail"] == "board: unknown field"
    extra = httpx.post(server + "/v1/games", json={"match_length": 0, "plies": 2}, timeout=60)
    assert extra.status_code == 422 and extra.json()["detail"] == "plies: unknown field"
    assert get(server, "/v1/health").status_code == 200


def test_a_web_game_resigned_after_rolling_saves_the_roll_and_imports_in_gnubg(server, tmp_path):
    """The web game's .mat records a resignation as GNU Backgammon writes it: the roll with no play, then the winner's
    ``Wins`` line; GNU Backgammon imports it to the game's score."""
    state = httpx.post(server + "/v1/games", json={"match_length": 0, "ply": 0, "seed": 3}, timeout=60).json()
    gid = state["game_id"]

    def send(line: str) -> dict:
        return httpx.post(f"{server}/v1/games/{gid}", json={"line": line}, timeout=60).json()

    if state["prompt"] == "roll":
        state = send("roll")
    assert state["prompt"] == "play", state
    dice = tuple(sorted(state["dice"], reverse=True))
    state = send("resign gammon")
    assert state["prompt"] == "another" and state["score"] == [0, 1], state  # Jacoby, cube centred: one point
    state = send("n")
    mat = httpx.get(f"{server}/v1/games/{gid}/mat", timeout=60).text
    (game,) = matfile.read_match(mat).games
    assert game.game.turns[-1] == matfile.Turn(0, dice, "") and (game.game.winner, game.game.points) == (1, 1)
    path = tmp_path / "web.mat"
    path.write_text(mat)
    assert imported_score(path) == (0, 1)


def test_batched_move_at_one_ply_is_the_cli_answer_bit_for_bit():
    """A 1-ply move answered in a batch (beside a cube request, through the batch's prefetched evaluator) is the
    command line's answer exactly: its plays are evaluated once, in the order the command line evaluates them (a
    play outside the move filter once showed its 0-ply equity 1e-6 off here: -0.113834 against -0.113833)."""
    from bgbot.commands import move
    from bgbot.protocols import server as srv

    bot = Bot.load(str(Path(__file__).resolve().parents[1] / "models" / "bgbot-6.pt"))  # fixed weights: the value below
    position, dice = "iucjICiY89ABMA", "26"
    out = srv.answer_many(
        bot, [("cube", {"position": START}), ("move", {"position": position, "dice": dice, "ply": 1})]
    )
    expected = move.answer(bot, position, dice, 1)
    assert out[1] == expected
    late = next(p for p in expected["plays"] if p["play"] == "12/6 4/2*")
    assert late["ply"] == 0 and late["equity"] == -0.113833


def test_rollout_stream_takes_its_settings_and_names_a_misspelt_one(server, capsys):
    """``/v1/rollout`` reads its settings (trials, candidates, truncate, ...: a record of query parameters) and gives the
    result ``bgbot rollout --json`` gives for the same settings; a misspelt setting is refused naming it."""
    params = {"position": "4HPwATDgc/ABMA", "dice": "31", "trials": 36, "candidates": 2, "truncate": 4}
    with httpx.stream("GET", f"{server}/v1/rollout?{urlencode(params)}", timeout=120) as r:
        text = "".join(r.iter_text())
    events = [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]
    result = json.loads(events[-1])
    assert "event: result" in text, text[-300:]
    cli_out = cli_json(
        capsys,
        "rollout",
        "4HPwATDgc/ABMA",
        "3",
        "1",
        "--trials",
        "36",
        "--candidates",
        "2",
        "--truncate",
        "4",
        "--no-progress",
    )
    assert [p["play"] for p in result["plays"]] == [p["play"] for p in cli_out["plays"]] == ["8/5 6/5", "24/23 13/10"]
    assert result["plays"][0]["equity"] == pytest.approx(cli_out["plays"][0]["equity"], abs=1e-9)
    assert result["se_excludes_truncation_bias"] is cli_out["se_excludes_truncation_bias"] is True
    got = get(server, "/v1/rollout", position=START, trails=36)
    assert got.status_code == 422 and got.json()["detail"].startswith("unknown field 'trails'")
    assert "trials" in got.json()["detail"]


@pytest.mark.parametrize(
    "params,status,detail",
    [
        ({"trials": 0}, 422, f"trials must be an integer {ro.MIN_TRIALS} .. {ro.MAX_TRIALS}, got 0"),
        ({"truncate": -1}, 422, f"truncate must be an integer 0 .. {ro.MAX_TRUNCATE} plies (0 = none), got -1"),
        ({"seed": -1}, 422, "seed must be an integer 0 .. 2**63 - 1, got -1"),
        ({"dice": "31", "candidates": 0}, 422, "the number of candidates must be at least 1, got 0"),
        ({"tirals": 36}, 422, "unknown field 'tirals'"),
        (
            {"position": XGID_BEFORE_ROLL.replace(":0:0:3:0:10", ":0:0:0:5:10"), "cube": "true"},
            400,
            "cubeful rollouts at a match score are not implemented",
        ),
        ({"position": "nonsense"}, 400, "not a position"),
    ],
)
def test_a_rollout_refused_before_it_starts_is_an_error_answer_not_a_stream(server, params, status, detail):
    """Bad settings (or an unusable position) are the API's error answer, before any stream: 422 naming the field
    for a malformed request, 400 for bad input; never 200 with a ``failed`` event."""
    got = get(server, "/v1/rollout", **{"position": START, "trials": 36, **params})
    assert got.status_code == status, got.text[:300]
    assert got.headers["content-type"] == "application/json"
    assert got.json()["detail"].startswith(detail), got.json()


def test_cube_search_in_a_batch_and_its_conflict_with_probabilities(server, capsys):
    body = {
        "requests": [
            {"endpoint": "cube", "position": PLUS, "ply": 1, "cube_search": True},
            {"endpoint": "cube", "position": PLUS, "ply": 1},
            {"endpoint": "move", "position": START, "dice": "31", "cube_search": True},
        ]
    }
    answers = httpx.post(server + "/v1/batch", json=body, timeout=60).json()["answers"]
    searched = cli_json(capsys, "cube", PLUS, "--ply", "1", "--cube-search")
    assert searched["cube_search"] is True and close(answers[0], searched)
    assert close(answers[1], cli_json(capsys, "cube", PLUS, "--ply", "1")) and "cube_search" not in answers[1]
    assert answers[2] == {
        "error": "unknown field 'cube_search': a move request takes position, dice, ply or a board",
        "status": 422,
    }
    conflict = "cube_search and probabilities cannot be used together"
    got = get(server, "/v1/cube", position=START, cube_search="true", probabilities="0.7,0.2,0.01,0.05,0.001")
    assert got.status_code == 422 and got.json()["detail"].startswith(conflict)
    request = {"endpoint": "cube", "position": START, "cube_search": True, "probabilities": "0.7,0.2,0.01,0.05,0.001"}
    got = httpx.post(server + "/v1/batch", json={"requests": [body["requests"][1], request]}, timeout=60)
    assert got.status_code == 200 and close(got.json()["answers"][0], answers[1])
    assert got.json()["answers"][1]["error"].startswith(conflict) and got.json()["answers"][1]["status"] == 422
    got = get(server, "/v1/cube", position=START, cube_search="maybe")
    assert got.status_code == 422 and got.json()["detail"].startswith("cube_search: ")


def test_a_ply_outside_0_to_2_is_422_with_the_one_checks_message(server):
    message = "ply must be a whole number 0 .. 2 (the search depth), got 3"
    for path, params in (
        ("/v1/move", {"position": START, "dice": "31", "ply": 3}),
        ("/v1/cube", {"position": START, "ply": 3}),
        ("/v1/cube", {"position": START, "ply": 3, "cube_search": "true"}),
        ("/v1/rollout", {"position": START, "dice": "31", "ply": 3, "trials": 36}),
    ):
        got = get(server, path, **params)
        assert got.status_code == 422 and got.json() == {"detail": message}, (path, got.text)
    got = httpx.post(server + "/v1/analyse?ply=3", content=b" 1 point match\n", timeout=60)
    assert got.status_code == 422 and got.json() == {"detail": message}
    got = httpx.post(server + "/v1/games", json={"ply": 3}, timeout=60)
    assert got.status_code == 422 and got.json() == {"detail": f"ply: {message}"}
    body = {"requests": [{"endpoint": "move", "position": START, "dice": "31", "ply": 3}]}
    answers = httpx.post(server + "/v1/batch", json=body, timeout=60).json()["answers"]
    assert answers == [{"error": message, "status": 422}]


def test_a_batch_request_refused_alone_carries_the_get_endpoints_status_and_message(server):
    """Each refused request of a batch answers ``{"error", "status"}``: the ``detail`` and the status code the GET
    endpoint gives the same request (422 for a bad ply or a field the endpoint does not take, 400 for bad dice)."""
    cases = [
        ("move", {"position": START, "dice": "31", "ply": 3}, 422),
        ("move", {"position": START, "dice": "31", "ply": 7}, 422),
        ("cube", {"position": START, "ply": 3}, 422),
        ("move", {"position": START, "dice": "71"}, 400),
    ]
    body = {"requests": [{"endpoint": e, **params} for e, params, _ in cases]}
    answers = httpx.post(server + "/v1/batch", json=body, timeout=60).json()["answers"]
    for (endpoint, params, status), got in zip(cases, answers):
        alone = get(server, f"/v1/{endpoint}", **params)
        assert alone.status_code == status and got == {"error": alone.json()["detail"], "status": status}, got
    assert answers[1]["error"] == "ply must be a whole number 0 .. 2 (the search depth), got 7"
    # a field the endpoint does not take: 422 both ways (each message lists what that form of request takes)
    body = {"requests": [{"endpoint": "cube", "position": START, "dice": "31"}]}
    (got,) = httpx.post(server + "/v1/batch", json=body, timeout=60).json()["answers"]
    alone = get(server, "/v1/cube", position=START, dice="31")
    assert alone.status_code == got["status"] == 422
    assert got["error"].startswith("unknown field 'dice': ")
    assert alone.json()["detail"].startswith("unknown field 'dice': ")


def test_booleans_and_fractions_are_not_whole_numbers(server):
    """``ply=1.0``, ``ply=true`` or a digit other than 0-9 (the full-width ``２``) in a query is 422 naming the field
    and what it takes, never read as a number; a batch request's ``"ply": true`` or ``1.0`` is refused alone (422), and
    ``POST /v1/games`` refuses them in the same words (its ``ply``, ``match_length`` and ``seed``)."""
    digits = "must be a whole number written in digits 0-9"
    for value in ("1.0", "true", "1e0", "\uff12", "\u0662"):  # full-width 2, Arabic-Indic 2
        got = get(server, "/v1/move", position=START, dice="31", ply=value)
        assert got.status_code == 422 and got.json() == {"detail": f"ply: {digits}"}, (value, got.text)
        got = get(server, "/v1/cube", position=START, ply=value)
        assert got.status_code == 422 and got.json() == {"detail": f"ply: {digits}"}, (value, got.text)
    got = get(server, "/v1/rollout", position=START, dice="31", trials="36.0")
    assert got.status_code == 422 and got.json() == {"detail": f"trials: {digits}"}
    got = httpx.post(server + "/v1/analyse?ply=%EF%BC%92", content=b" 1 point match\n", timeout=60)
    assert got.status_code == 422 and got.json() == {"detail": f"ply: {digits}"}
    for value in (True, 1.0, 1e0, "1.0", None):  # a batch request's refusal is its GET request's
        body = {"requests": [{"endpoint": "move", "position": START, "dice": "31", "ply": value}]}
        got = httpx.post(server + "/v1/batch", json=body, timeout=60)
        assert got.status_code == 200
        assert got.json() == {"answers": [{"error": f"ply: {digits}", "status": 422}]}, (value, got.text)
    for field in ("ply", "match_length", "seed"):  # a new game's whole numbers: the same words and status
        for value in (True, 1.0, "1.0") + ((None,) if field != "seed" else ()):  # no seed: fresh entropy
            got = httpx.post(server + "/v1/games", json={field: value}, timeout=60)
            assert got.status_code == 422 and got.json() == {"detail": f"{field}: {digits}"}, (field, value, got.text)
    board = [0] * 26
    for point, count in STARTING_BOARD.items():
        board[int(point[1:])] = count
    assert httpx.post(server + "/v1/board", json={"points": board}, timeout=60).json()["position_id"] == START
    for extra, field in (  # a set-up board's counts, cube and score; a step's points
        ({"points": board[:24] + [True, False]}, "points.24"),
        ({"points": board[:24] + [2.0, 0]}, "points.24"),
        ({"points": board, "cube_value": 2.0}, "cube_value"),
        ({"points": board, "match_length": True}, "match_length"),
        ({"points": board, "match_length": 5, "score": [True, 0]}, "score.0"),
    ):
        got = httpx.post(server + "/v1/board", json=extra, timeout=60)
        assert got.status_code == 422 and got.json() == {"detail": f"{field}: {digits}"}, (extra, got.text)
    got = httpx.post(server + "/v1/steps", json={"position": START, "dice": "31", "move": [8.0, True]}, timeout=60)
    assert got.status_code == 422 and got.json()["detail"] in (f"move.0: {digits}", f"move.1: {digits}"), got.text
    body = {"requests": [{"endpoint": "cube", "position": START, "cube_search": 1}]}
    got = httpx.post(server + "/v1/batch", json=body, timeout=60)
    assert got.status_code == 200 and got.json()["answers"][0]["error"].startswith("cube_search: ")
    assert get(server, "/v1/move", position=START, dice="31", ply="1").status_code == 200


def test_booleans_are_true_or_false_never_yes(server):
    """A query's boolean is ``true``, ``false``, ``1`` or ``0`` (``yes``, ``on``, ``True`` are 422 naming it), a batch
    request's ``cube_search`` is refused alone with its GET request's message, and a JSON body's boolean is JSON
    ``true`` or ``false`` only."""
    text = "must be true, false, 1 or 0"
    for value in ("yes", "on", "True", "2", ""):
        got = get(server, "/v1/cube", position=START, cube_search=value)
        assert got.status_code == 422 and got.json() == {"detail": f"cube_search: {text}"}, (value, got.text)
    for name in ("cube", "variance_reduction", "quasi_random", "databases"):
        got = get(server, "/v1/rollout", position=START, dice="31", trials=36, **{name: "yes"})
        assert got.status_code == 422 and got.json() == {"detail": f"{name}: {text}"}, (name, got.text)
    searched = get(server, "/v1/cube", position=START, cube_search="1").json()
    assert (
        searched["cube_search"] is True
        and "cube_search" not in get(server, "/v1/cube", position=START, cube_search="0").json()
    )
    requests = [{"endpoint": "cube", "position": START, "cube_search": v} for v in ("yes", 1, None, "1", True)]
    answers = httpx.post(server + "/v1/batch", json={"requests": requests}, timeout=60).json()["answers"]
    assert answers[:3] == [{"error": f"cube_search: {text}", "status": 422}] * 3
    assert close(answers[3], searched) and close(answers[4], searched)
    for value in ("yes", 1, 0, "true", None):
        got = httpx.post(server + "/v1/games", json={"bgbot_first": value}, timeout=60)
        assert got.status_code == 422 and got.json() == {"detail": "bgbot_first: must be true or false"}, value
    board = [0] * 26
    for point, count in STARTING_BOARD.items():
        board[int(point[1:])] = count
    got = httpx.post(server + "/v1/board", json={"points": board, "match_length": 5, "crawford": "yes"}, timeout=60)
    assert got.status_code == 422 and got.json() == {"detail": "crawford: must be true or false"}


def test_a_mat_body_that_is_not_utf8_is_422_saying_so(server):
    for body in (b" 1 point match\n\xff\xfe", "x".encode("utf-16")):
        got = httpx.post(server + "/v1/analyse", content=body, headers={"content-type": "text/plain"}, timeout=60)
        assert got.status_code == 422 and got.json() == {
            "detail": "the request body (the .mat text) is not UTF-8: send the match file's text encoded as UTF-8"
        }


def test_health_counts_each_request_of_a_batch(server):
    """``/v1/health``'s ``requests`` counts each request (item) of a ``POST /v1/batch`` answered, never one refused,
    and ``batches`` the batch as one evaluator round."""

    def counts() -> tuple[int, int]:
        health = httpx.get(server + "/v1/health").json()
        return health["requests"], health["batches"]

    before = counts()
    body = {
        "requests": [
            {"endpoint": "move", "position": START, "dice": "31"},
            {"endpoint": "moves", "position": START, "dice": "31"},
            {"endpoint": "cube", "position": START, "ply": 3},  # refused alone: no answer
            {"endpoint": "move", "position": START, "dice": "31", "ply": 1.0},  # refused alone by the schema
            {"endpoint": "cube", "board": [0] * 26, "position": START},  # refused alone: position and board
        ]
    }
    assert httpx.post(server + "/v1/batch", json=body, timeout=60).status_code == 200
    after = counts()
    assert (after[0] - before[0], after[1] - before[1]) == (2, 1)


def test_health_counts_no_refused_request_and_no_empty_batch(server):
    """A request refused (400 or 422, or a batch whose every request is refused) and a batch of no requests are no
    answers and no evaluator rounds: ``/v1/health`` counts none of them; an answered GET is one of each."""

    def counts() -> tuple[int, int]:
        health = httpx.get(server + "/v1/health").json()
        return health["requests"], health["batches"]

    before = counts()
    assert get(server, "/v1/move", position=START, dice="71").status_code == 400
    assert get(server, "/v1/cube", position=START, ply=3).status_code == 422
    assert get(server, "/v1/move", position=START, dice="31", ply="1.0").status_code == 422
    assert httpx.post(server + "/v1/batch", json={"requests": []}, timeout=60).json() == {"answers": []}
    refused = {
        "requests": [
            {"endpoint": "move", "position": START, "dice": "71"},
            {"endpoint": "cube", "position": START, "ply": 3},
        ]
    }
    got = httpx.post(server + "/v1/batch", json=refused, timeout=60).json()["answers"]
    assert [a["status"] for a in got] == [400, 422]
    assert httpx.post(server + "/v1/batch", json={"requests": 5}, timeout=60).status_code == 422
    assert counts() == before
    assert get(server, "/v1/move", position=START, dice="31").status_code == 200
    assert counts() == (before[0] + 1, before[1] + 1)


def test_a_batch_request_not_of_the_schema_is_refused_alone(server, capsys):
    """A batch request that is not its schema (``"ply": 1.0``, an unknown endpoint, not an object) answers
    ``{"error", "status": 422}`` in its place, as a ``"ply": 3`` does, and the others are answered; a malformed
    envelope (no ``requests`` list, an unknown top-level field) is still 422."""
    body = {
        "requests": [
            {"endpoint": "move", "position": START, "dice": "31", "ply": 1.0},
            {"endpoint": "move", "position": START, "dice": "31", "ply": 3},
            {"endpoint": "move", "position": START, "dice": "31"},
            {"endpoint": "moves", "position": START, "dice": 71},
            {"endpoint": "hint", "position": START},
            "move",
        ]
    }
    got = httpx.post(server + "/v1/batch", json=body, timeout=60)
    assert got.status_code == 200, got.text
    answers = got.json()["answers"]
    assert answers[0] == {"error": "ply: must be a whole number written in digits 0-9", "status": 422}
    assert answers[1] == {"error": "ply must be a whole number 0 .. 2 (the search depth), got 3", "status": 422}
    assert close(answers[2], cli_json(capsys, "move", START, "31"))
    assert answers[3] == {"error": "impossible dice '71': each die is 1 to 6", "status": 400}
    assert get(server, "/v1/moves", position=START, dice="71").json() == {"detail": answers[3]["error"]}
    assert answers[4] == {"error": "endpoint: Input should be 'moves', 'move' or 'cube'", "status": 422}
    assert answers[5] == {
        "error": 'a batch request is an object: {"endpoint": "move", "position": ..., ...}',
        "status": 422,
    }
    for envelope, detail in (
        ({"requests": "move"}, "requests: Input should be a valid list"),
        ({"requests": [], "ply": 1}, "ply: unknown field"),
        ({}, "requests: Field required"),
    ):
        got = httpx.post(server + "/v1/batch", json=envelope, timeout=60)
        assert got.status_code == 422 and got.json() == {"detail": detail}, got.text


def test_a_json_key_given_twice_is_refused_naming_it(server):
    """A JSON body that gives a key twice in one object is 400 naming the key, never read as its last value: in a
    batch request, in the batch envelope, and in the other JSON endpoints' bodies."""
    json_type = {"content-type": "application/json"}
    for path, raw, key in (
        (
            "/v1/batch",
            b'{"requests": [{"endpoint": "moves", "position": "a", "position": "%s", "dice": "31"}]}' % START.encode(),
            "position",
        ),
        ("/v1/batch", b'{"requests": [], "requests": []}', "requests"),
        ("/v1/games", b'{"ply": 0, "ply": 2}', "ply"),
        ("/v1/steps", b'{"position": "%s", "dice": "31", "dice": "42"}' % START.encode(), "dice"),
    ):
        got = httpx.post(server + path, content=raw, headers=json_type, timeout=60)
        assert got.status_code == 400, (path, got.text)
        assert got.json() == {"detail": f"duplicate key {key!r} in the JSON body: give each field once"}
    got = httpx.post(
        server + "/v1/batch",
        content=b'{"requests": [{"endpoint": "moves", "position": "%s", "dice": "31"}]}' % START.encode(),
        headers=json_type,
        timeout=60,
    )
    assert got.status_code == 200 and len(got.json()["answers"][0]["plays"]) == 16  # the same keys once: answered


def test_a_batch_request_reads_whole_numbers_and_dice_as_its_get_request(server, capsys):
    """A batch request's ``"dice": 31`` (a JSON number) and ``"ply": "1"`` are read as the GET query's ``dice=31`` and
    ``ply=1``: the same answer as the CLI's."""
    body = {
        "requests": [
            {"endpoint": "moves", "position": START, "dice": 31},
            {"endpoint": "move", "position": START, "dice": 44, "ply": "1"},
        ]
    }
    got = httpx.post(server + "/v1/batch", json=body, timeout=60)
    assert got.status_code == 200, got.text
    moves, move = got.json()["answers"]
    assert moves == cli_json(capsys, "moves", START, "31")
    assert close(move, cli_json(capsys, "move", START, "44", "--ply", "1"))
