"""The web page of ``bgbot serve`` in a real browser: Debian's chromium driven by Playwright (no browser download),
against a real server on a free loopback port; every request to another address is blocked.

The page's figures are read from the SVG board's data attributes and the page's tables and compared with the CLI's
``--json`` (``bgbot show``, ``bgbot move``, ``bgbot cube``); games are played to their ends by clicks, a saved
``.mat`` is imported by GNU Backgammon to the same final score; the tutor's flags of a take and of a match double
from set-up positions are checked against the bot's cube analysis; checkers are dragged with a mouse and a finger."""

import functools
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx
import numpy as np
import pytest

from bgbot import cli
from bgbot.api import Bot
from bgbot.arena import rollout as ro
from bgbot.cube.decision import normalised_equity
from bgbot.formats import context, matfile, notation
from bgbot.rules.board import apply_steps, flip
from bgbot.rules.movegen_scalar import legal_plays
from bgbot.rules.state import CubeState, MatchState
from tests.servers import serving

playwright_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
GNUBG = shutil.which("gnubg") or "/usr/games/gnubg"
if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("web")

XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"
MATCH_5 = "4HPwATDgc/ABMA:MAGgABAAEAAE"  # the start of a 5-point match at 1-2
BEAROFF = "XGID=aBBBCBB-------------b-c-aA:1:1:1:63:1:2:0:5:10"  # both bars taken, checkers off, cube 2 owned, match
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
RACE_BGBOT_DOUBLES = "d7cNAAB3twEAAA"  # bgbot on roll, 13 checkers on its 1-5 points against 15: Double, pass
BGBOT_TOO_GOOD = "wN1tAwDf9wEAAA"  # bgbot on roll, 15 checkers on its 1-3 points against 15 outside: too good


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    (runs / "tiny").mkdir()
    (runs / "tiny" / "eval.jsonl").write_text(
        "\n".join(
            json.dumps({"games_trained": g, "ppg": p, "ci_low": p - 0.05, "ci_high": p + 0.05, "opponent": "pubeval"})
            for g, p in ((1000, -0.2), (2000, 0.05), (3000, 0.2))
        )
        + "\n"
    )
    with serving("--max-body", "65536", "--max-rollouts", "1", "--models", "models", "--runs", str(runs)) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    blocked: list[str] = []

    def route(r):
        host = urlparse(r.request.url).hostname
        if host in LOOPBACK:
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("dialog", lambda d: (errors.append("dialog: " + d.message), d.dismiss()))
    pg.goto(server + "/")
    pg.wait_for_selector("#board [data-point='1']")
    yield pg
    ctx.close()
    assert not errors, errors  # no script error, no alert()
    assert not blocked, blocked  # the page asks nothing of the internet


def cli_json(capsys, *argv):
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def board_facts(pg, svg="#board") -> dict:
    """What the drawn board shows, read from its data attributes."""
    return pg.evaluate(
        """(sel) => {
        const svg = document.querySelector(sel);
        const pts = new Array(26).fill(0);
        svg.querySelectorAll('[data-point]').forEach((g) => { pts[+g.dataset.point] = +g.dataset.count; });
        const d = svg.dataset;
        return {points: pts, pips: [+d.pipsX, +d.pipsO], off: [+d.offX, +d.offO],
                cube: {value: +d.cubeValue, owner: d.cubeOwner}, score: [+d.scoreX, +d.scoreO],
                length: +d.matchLength, dice: d.dice, flip: d.flip};
    }""",
        svg,
    )


def show(pg, position, dice=""):
    pg.evaluate("() => { document.querySelector('#ids').textContent = '' }")
    pg.fill("#position-input", position)
    pg.fill("#dice-input", dice)
    pg.click("#show-button")


# -- the board -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("position", [XGID, MATCH_5, BEAROFF, "4HPwATDgc/ABMA"])
def test_board_matches_show_json(page, capsys, position):
    show(page, position)
    page.wait_for_selector("#id-position-id")
    want = cli_json(capsys, "show", position)
    got = board_facts(page)
    assert got["points"] == [int(v) for v in context.resolve(position).position]
    assert got["pips"] == want["pips"] and got["off"] == want["off"]
    assert got["cube"] == {"value": want["cube"]["value"], "owner": want["cube"]["owner"]}
    assert got["score"] == want["match"]["score"] and got["length"] == want["match"]["length"]
    assert got["dice"] == "".join(map(str, want["dice"] or []))
    ids = {k: page.text_content(f"#id-{k}") for k in ("position-id", "gnubg-id", "xgid")}
    assert ids["position-id"] == want["position_id"]
    ref = context.resolve(position)
    for key in ("gnubg-id", "xgid"):  # each shown ID reads back as the same position, cube, score and dice
        back = context.resolve(ids[key])
        assert (back.position_id, back.dice, back.cube) == (ref.position_id, ref.dice, ref.cube)
        assert (back.match.length, back.match.score, back.match.crawford) == (
            ref.match.length,
            ref.match.score,
            ref.match.crawford,
        )
    # the other direction: point 1 moves from the bottom right to the bottom left, the counts stay
    x_right = page.eval_on_selector("#board [data-point='1'] polygon", "e => e.getBBox().x")
    page.check("#flip-input")
    x_left = page.eval_on_selector("#board [data-point='1'] polygon", "e => e.getBBox().x")
    assert x_left < 100 < x_right
    assert board_facts(page)["points"] == got["points"] and board_facts(page)["flip"] == "1"


def test_hint_and_cube_as_the_cli(page, capsys):
    show(page, MATCH_5, "31")
    page.wait_for_function("() => document.querySelector('#board').dataset.dice === '31'")
    page.select_option("#hint-ply", "1")
    page.click("#hint-button")
    page.wait_for_selector("#hint-out tr[data-rank='1']")
    want = cli_json(capsys, "move", MATCH_5, "31", "--ply", "1")
    rows = page.eval_on_selector_all("#hint-out tr[data-play]", "rs => rs.map(r => r.dataset.play)")
    assert rows == [p["play"] for p in want["plays"]]
    assert f"{100 * want['plays'][0]['mwc']:.1f}%" in page.text_content("#hint-out tr[data-rank='1']")
    # a selected play is shown on the board: the result of 8/5 6/5 from the mover's side
    page.click("#hint-out tr[data-rank='1']")
    best = want["plays"][0]
    after = context.resolve(best["position_id"]).position[::-1] * -1
    page.wait_for_function("() => document.querySelector(\"#board [data-point='5']\").dataset.count !== '0'")
    assert board_facts(page)["points"] == [int(v) for v in after]
    show(page, "4HPwATDgc/ABMA")
    page.wait_for_function("() => document.querySelector('#board').dataset.dice === ''")
    page.select_option("#hint-ply", "0")
    page.click("#cube-button")
    page.wait_for_selector("#cube-action")
    assert page.get_attribute("#cube-action", "data-action") == cli_json(capsys, "cube", "4HPwATDgc/ABMA")["action"]


def test_set_up_by_clicking(page):
    page.check("#edit-input")
    page.click("#edit-clear")
    page.select_option("#edit-side", "1")
    for _ in range(15):
        page.click("#board [data-point='6']")
    page.select_option("#edit-side", "-1")
    for _ in range(15):
        page.click("#board [data-point='19']")
    page.select_option("#edit-cube", "2")
    page.select_option("#edit-owner", "me")
    page.fill("#edit-dice", "64")
    page.click("#edit-apply")
    page.wait_for_function("() => document.querySelector('#board').dataset.cubeValue === '2'")
    got = board_facts(page)
    assert got["points"][6] == 15 and got["points"][19] == -15 and got["pips"] == [90, 90]
    ctx = context.resolve(page.text_content("#id-gnubg-id"))
    assert ctx.cube.value == 2 and ctx.cube.owner == "me" and ctx.dice == (6, 4)


# -- games -----------------------------------------------------------------------------------------------------------


def idle(pg) -> None:
    """Wait until the page has no request in flight."""
    pg.wait_for_function("() => document.body.dataset.pending === '0'")


def prompt(pg) -> str:
    idle(pg)
    pg.wait_for_function(
        "() => ['roll','play','take','another','accept','over'].includes(document.querySelector('#game-status').dataset.prompt)"
    )
    return pg.get_attribute("#game-status", "data-prompt")


def game_state(pg, server) -> dict:
    gid = re.search(r"game=([0-9a-f]+)", pg.url).group(1)
    return httpx.get(f"{server}/v1/games/{gid}").json()


def click_play(pg, server) -> None:
    """Make a legal play by clicks: a checker, then its destination, for each step; then Confirm."""
    st = game_state(pg, server)
    pos = np.array(st["points"], dtype=np.int8)
    plays = legal_plays(pos, *st["dice"])
    play = plays[len(plays) // 2]
    for src, dst in play.steps:
        pg.click(f"#game-board [data-point='{src}']")
        pg.click(f"#game-board [data-point='{dst}']" if dst else "#game-board [data-off='x']")
        idle(pg)
    pg.wait_for_selector("#act-confirm:not([disabled])")
    pg.click("#act-confirm")


def test_money_game_by_clicks_with_undo_reload_and_illegal_play(page, server):
    page.click("[data-view='play']")
    page.select_option("#play-length", "0")
    page.check("#tutor-input")
    page.fill("#tutor-threshold", "0.001")
    page.click("#new-game")
    turns, undone, reloaded, illegal = 0, False, False, False
    while True:
        p = prompt(page)
        if p == "roll":
            page.click("#act-roll")
        elif p == "take":
            page.click("#act-take")
        elif p == "play":
            if not illegal:  # a typed illegal play: its message, and the game waits for a play
                page.fill("#play-text", "24/1")
                page.click("#play-form button")
                page.wait_for_selector("#message:not([hidden])")
                assert "24/1" in page.text_content("#message") and prompt(page) == "play"
                illegal = True
            if not undone:  # one step, then undo: the board is back as it was
                st = game_state(page, server)
                step = legal_plays(np.array(st["points"], dtype=np.int8), *st["dice"])[0].steps[0]
                before = board_facts(page, "#game-board")["points"]
                page.click(f"#game-board [data-point='{step[0]}']")
                page.click(f"#game-board [data-point='{step[1]}']" if step[1] else "#game-board [data-off='x']")
                page.wait_for_selector("#act-undo:not([disabled])")
                assert board_facts(page, "#game-board")["points"] != before
                page.click("#act-undo")
                page.wait_for_function(
                    "(b) => JSON.stringify([...Array(26).keys()].map(i => +(document.querySelector("
                    "`#game-board [data-point='${i}']`)?.dataset.count || 0))) === JSON.stringify(b)",
                    arg=before,
                )
                undone = True
            click_play(page, server)
            turns += 1
            if turns == 3 and not reloaded and prompt(page) in ("roll", "play", "take"):  # a reload continues it
                gid = game_state(page, server)["game_id"]
                before = game_state(page, server)
                page.reload()
                page.wait_for_selector("#game-board [data-point='1']")
                assert game_state(page, server)["game_id"] == gid
                assert board_facts(page, "#game-board")["points"] == before["points"]
                reloaded = True
        elif p == "accept":
            page.click("#act-accept")
        elif p == "another":
            break
        else:
            raise AssertionError(p)
        assert turns < 200
    st = game_state(page, server)
    assert st["games"] == 1 and sum(st["score"]) >= 1
    flagged = page.eval_on_selector_all("#tutor-log li", "ls => ls.map(l => l.textContent)")
    assert flagged and all(re.match(r"tutor: .+ loses \d\.\d{3}", t) for t in flagged), flagged
    page.click("#act-stop")
    assert prompt(page) == "over"


def test_match_with_a_double_saved_and_imported_by_gnubg(page, server, tmp_path):
    page.click("[data-view='play']")
    page.select_option("#play-length", "3")
    page.click("#new-game")
    doubled = 0
    for _ in range(400):
        p = prompt(page)
        if p == "over":
            break
        if p == "roll":
            if page.is_visible("#act-double"):
                page.click("#act-double")  # the cube action: bgbot takes (then we resign) or passes
                doubled += 1
            elif game_state(page, server)["cube"]["value"] > 1:
                page.select_option("#resign-level", "backgammon")
                page.click("#act-resign")
            else:
                page.click("#act-roll")
        elif p == "play":
            click_play(page, server)
        elif p == "take":
            page.click("#act-pass")
        elif p == "accept":
            page.click("#act-accept")
        else:
            raise AssertionError(p)
    st = game_state(page, server)
    assert st["prompt"] == "over" and max(st["score"]) >= 3 and doubled >= 1
    page.wait_for_selector("#save-mat:not([hidden])")
    with page.expect_download() as dl:
        page.click("#save-mat")
    path = tmp_path / "game.mat"
    dl.value.save_as(path)
    text = path.read_text()
    assert matfile.read_match(text).length == 3
    if not Path(GNUBG).exists():
        pytest.skip("GNU Backgammon is not installed")
    out = subprocess.run(
        [GNUBG, "-t", "-q"], input=f"import mat {path}\nshow score\n", capture_output=True, text=True, timeout=120
    ).stdout
    m = re.search(r"The score \(after \d+ games?\) is: you (\d+), bgbot (\d+)", out)
    assert m, out[-500:]
    assert [int(m.group(1)), int(m.group(2))] == st["score"]


@functools.cache
def shipped_bot() -> Bot:
    """The model ``bgbot serve`` answers with by default."""
    return Bot.load()


def tutor_on(pg, threshold: str) -> None:
    pg.click("[data-view='play']")
    pg.check("#tutor-input")
    pg.fill("#tutor-threshold", threshold)


def tutor_notes(pg) -> list[dict]:
    return pg.eval_on_selector_all(
        "#tutor-log li", "ls => ls.map(l => ({text: l.textContent, error: +l.dataset.error, unit: l.dataset.unit}))"
    )


def test_tutor_flags_a_take_of_a_pass_in_money_play(page, server):
    # bgbot on roll in a race it leads by far (set up in the Position view): it doubles before rolling
    show(page, RACE_BGBOT_DOUBLES)
    page.wait_for_selector("#id-position-id")
    tutor_on(page, "0.06")
    page.select_option("#play-length", "0")
    page.check("#play-from-position")
    page.check("#play-bgbot-first")
    page.click("#new-game")
    assert prompt(page) == "take"
    assert board_facts(page, "#game-board")["points"] == [
        int(v) for v in flip(context.resolve(RACE_BGBOT_DOUBLES).position)
    ]
    page.click("#act-take")
    assert prompt(page) == "roll"
    d = shipped_bot().cube_action(context.resolve(RACE_BGBOT_DOUBLES).position)  # bgbot's own analysis, money play
    assert d.action == "Double, pass"
    (note,) = tutor_notes(page)
    assert note["text"] == (
        f"tutor: take loses {d.errors['take']:.3f} equity ({1000 * d.errors['take']:.0f} mp) against pass "
        "(bgbot: Double, pass)"
    )
    assert note["unit"] == "equity" and note["error"] == pytest.approx(d.errors["take"], abs=1e-6)
    assert game_state(page, server)["cube"] == {"value": 2, "owner": "me"}  # the take was played
    page.reload()  # the game's flagged decisions are kept with it
    page.wait_for_selector("#tutor-log li")
    assert [n["text"] for n in tutor_notes(page)] == [note["text"]]
    # bearing off by clicks with the cube (yours now) drawn over your tray: a click there is on the tray
    page.click("#act-roll")
    assert prompt(page) == "play"
    st = game_state(page, server)
    # a checker borne off exactly by the first die (every point 1-6 holds checkers here, whatever the dice: doubles
    # too, whose generated steps may start inside the board)
    src = int(st["dice"][0])
    plays = legal_plays(np.array(st["points"], dtype=np.int8), *st["dice"])
    assert any((src, 0) in p.steps for p in plays)
    page.click(f"#game-board [data-point='{src}']")
    page.click("#game-board [data-off='x']")
    idle(page)
    assert board_facts(page, "#game-board")["points"][src] == st["points"][src] - 1


def test_tutor_flags_a_double_at_a_match_score(page, server):
    # a 3-point match from a set-up position with seeded dice: bgbot, too good to double, plays on; you double
    body = {"match_length": 3, "seed": 7, "position": BGBOT_TOO_GOOD, "bgbot_first": True}
    gid = httpx.post(f"{server}/v1/games", json=body, timeout=60).json()["game_id"]
    page.goto(f"{server}/?game={gid}")
    tutor_on(page, "0.2")
    assert prompt(page) == "roll" and page.is_visible("#act-double")
    st = game_state(page, server)
    cube, match = CubeState(), MatchState(3, (0, 0))
    d = shipped_bot().cube_action(np.array(st["points"], dtype=np.int8), cube, match)
    values = [d.equities[k] for k in ("no_double", "double_take", "double_pass")]
    emg = normalised_equity(values, cube, match)
    page.click("#act-double")
    assert prompt(page) in ("roll", "play")  # bgbot took
    (note,) = tutor_notes(page)
    assert note["unit"] == "emg" and note["error"] == pytest.approx(emg[0] - min(emg[1], emg[2]), abs=1e-6)
    assert note["text"] == (
        f"tutor: double loses {emg[0] - min(emg[1], emg[2]):.3f} EMG ({100 * d.errors['double']:.1f}% MWC) "
        f"against no double (bgbot: {d.action})"
    )
    assert game_state(page, server)["cube"] == {"value": 2, "owner": "opponent"}


def checker_spot(pg, index: int) -> tuple[float, float]:
    """Where on the screen (CSS pixels) a checker of point ``index`` of the game board sits, or the tray for 0."""
    return tuple(
        pg.evaluate(
            """(i) => {
            const svg = document.querySelector('#game-board');
            const sel = i === 0 ? "[data-off='x'] rect" : `[data-point='${i}'] ${i === 25 ? 'rect' : 'polygon'}`;
            const b = svg.querySelector(sel).getBBox();
            const top = b.y < 150;
            const pt = svg.createSVGPoint();
            pt.x = b.x + b.width / 2;
            pt.y = i === 0 ? b.y + b.height / 2 : (top ? b.y + 18 : b.y + b.height - 18);
            const s = pt.matrixTransform(svg.getScreenCTM());
            return [s.x, s.y];
        }""",
            index,
        )
    )


def test_checkers_moved_by_dragging_with_a_mouse_and_a_finger(browser, server):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    ctx.route("**/*", lambda r: r.continue_() if urlparse(r.request.url).hostname in LOOPBACK else r.abort())
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    gid = httpx.post(f"{server}/v1/games", json={"seed": 3}, timeout=60).json()["game_id"]
    pg.goto(f"{server}/?game={gid}")
    while prompt(pg) == "roll":  # seeded: the same rolls every time
        pg.click("#act-roll")
    assert prompt(pg) == "play"
    st = game_state(pg, server)
    pos = np.array(st["points"], dtype=np.int8)
    plays = legal_plays(pos, *st["dice"])
    play = max(plays, key=lambda p: len({s for s, _ in p.steps}))  # checkers from as many points as there are
    # a mouse drags the first checker: it follows the pointer, lands on its point; Undo puts it back
    (x0, y0), (x1, y1) = checker_spot(pg, play.steps[0][0]), checker_spot(pg, play.steps[0][1])
    pg.mouse.move(x0, y0)
    pg.mouse.down()
    pg.mouse.move(x1, y1, steps=8)
    assert pg.query_selector("#game-board .drag-checker") is not None
    pg.mouse.up()
    idle(pg)
    after = apply_steps(pos, [play.steps[0]])
    assert board_facts(pg, "#game-board")["points"] == [int(v) for v in after]
    assert pg.query_selector("#game-board .drag-checker") is None
    pg.click("#act-undo")
    idle(pg)
    assert board_facts(pg, "#game-board")["points"] == [int(v) for v in pos]
    # a finger drags each checker of the play (touch events: the page does not scroll, the checker moves)
    cdp = ctx.new_cdp_session(pg)
    for k, (src, dst) in enumerate(play.steps):
        (x0, y0), (x1, y1) = checker_spot(pg, src), checker_spot(pg, dst)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]})
        for t in (0.25, 0.5, 0.75, 1.0):
            point = {"x": x0 + t * (x1 - x0), "y": y0 + t * (y1 - y0)}
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        idle(pg)
        want = apply_steps(pos, list(play.steps[: k + 1]))
        assert board_facts(pg, "#game-board")["points"] == [int(v) for v in want], (k, src, dst)
    assert pg.evaluate("() => window.scrollY") == 0
    assert pg.text_content("#pending-play") == f"play {notation.format_play(pos, play)}"
    pg.click("#act-confirm")
    assert prompt(pg) in ("roll", "take", "another", "accept")
    turns = game_state(pg, server)
    assert turns["game_id"] == gid and not errors, errors
    ctx.close()


# -- rollouts --------------------------------------------------------------------------------------------------------


def test_rollout_progress_result_and_cancel(page, server):
    show(page, "4HPwATDgc/ABMA", "31")
    page.wait_for_function("() => document.querySelector('#board').dataset.dice === '31'")
    page.click("[data-view='rollout']")
    page.fill("#ro-trials", "144")
    page.fill("#ro-candidates", "2")
    page.fill("#ro-truncate", "6")  # short trials: the test is about the stream, not the figures
    page.click("#ro-start")
    page.wait_for_selector("#ro-progress[data-done]")
    page.wait_for_selector("#ro-status[data-state='done']", timeout=120_000)
    assert page.eval_on_selector_all("#ro-out tr[data-play]", "rs => rs.length") == 2
    # a long one, cancelled after its first progress; the server's only rollout slot is free again at once
    page.fill("#ro-trials", "100000")
    page.click("#ro-start")
    page.wait_for_function(
        "() => +document.querySelector('#ro-progress').dataset.done < 100000 && "
        "document.querySelector('#ro-status').textContent.includes('of 200000')"
    )
    busy = httpx.get(f"{server}/v1/rollout", params={"position": "4HPwATDgc/ABMA", "trials": 2}, timeout=60).text
    assert "event: failed" in busy and "1 rollouts already" in busy  # the limit on rollouts at once
    page.click("#ro-cancel")
    assert page.get_attribute("#ro-status", "data-state") == "cancelled"
    wait_for_free_slot(server)
    # a closed page cancels its rollout too
    other = page.context.new_page()
    other.goto(server + "/")
    other.wait_for_selector("#board [data-point='1']")
    other.click("[data-view='rollout']")
    other.fill("#ro-trials", "100000")
    other.click("#ro-start")
    other.wait_for_selector("#ro-progress[data-done]")
    other.close()
    wait_for_free_slot(server)


def test_a_rollout_refused_before_it_starts_shows_the_servers_words(page):
    """The server answers bad settings with 422 before any stream (no ``failed`` event to read): the page still shows
    its words, and a good rollout runs after it."""
    show(page, "4HPwATDgc/ABMA", "31")
    page.wait_for_function("() => document.querySelector('#board').dataset.dice === '31'")
    page.click("[data-view='rollout']")
    page.fill("#ro-trials", "0")
    page.click("#ro-start")
    page.wait_for_selector("#ro-status[data-state='failed']")
    message = f"trials must be an integer {ro.MIN_TRIALS} .. {ro.MAX_TRIALS}, got 0"
    assert page.text_content("#ro-status") == message and page.text_content("#message") == message
    assert page.is_enabled("#ro-start") and not page.is_enabled("#ro-cancel")
    page.fill("#ro-trials", "36")
    page.fill("#ro-truncate", "2")
    page.click("#ro-start")
    page.wait_for_selector("#ro-status[data-state='done']", timeout=120_000)


def wait_for_free_slot(server) -> None:
    """The server (one rollout at a time) runs a new rollout within a minute: the last one has stopped."""
    deadline = time.monotonic() + 60
    while True:  # the cancelled rollout stops after its current work unit and frees the slot
        params = {"position": "4HPwATDgc/ABMA", "trials": 2, "truncate": 2}
        with httpx.stream("GET", f"{server}/v1/rollout", params=params, timeout=60) as r:
            body = r.read().decode()
        if "event: result" in body:
            break
        assert "already" in body and time.monotonic() < deadline, body
        time.sleep(0.5)


# -- analysis and bad input ------------------------------------------------------------------------------------------

EVIL = matfile.match_text(
    ("<img/src=x/onerror=f()>", "<script>g()</script>"),
    [
        matfile.Game(
            (
                matfile.Turn(0, (3, 1), "8/5 6/5"),
                matfile.Turn(1, (4, 2), "8/4 6/4"),
                matfile.Turn(0, (6, 1), "24/18 6/5"),
                matfile.CubeAction(1, "double", 2),
                matfile.CubeAction(0, "pass"),
            ),
            1,
            1,
        )
    ],
    3,
)


def upload(pg, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    pg.click("[data-view='analyse']")
    pg.set_input_files("#mat-file", str(path))
    pg.click("#analyse-button")


def test_analysis_with_script_names_shown_as_text(page, tmp_path):
    page.add_init_script("window.f = () => { window.__ran = 1 }; window.g = window.f;")
    page.reload()
    page.wait_for_selector("#board [data-point='1']")
    upload(page, tmp_path, "evil.mat", EVIL)
    page.wait_for_selector("#an-decisions tr[data-gnubg-id]")
    summary = page.text_content("#an-summary")
    assert "<img/src=x/onerror=f()>" in summary and "<script>g()</script>" in summary
    assert page.evaluate("window.__ran") is None and page.query_selector("#an-summary img, #an-summary script") is None
    rows = page.eval_on_selector_all("#an-decisions tr[data-gnubg-id]", "rs => rs.map(r => r.textContent)")
    assert any("24/18 6/5" in r for r in rows)  # the analysed play, with its error
    lines = page.eval_on_selector_all("#an-summary tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))")
    got = {row[0]: row[1:] for row in lines}
    from bgbot.api import Bot
    from bgbot.protocols import analysis

    want = analysis.analyse_match(Bot.load(), matfile.read_match(EVIL, "evil"), 0, source="evil")["players"]
    assert got["luck total"] == [f"{p['luck']['total']:.3f}" for p in want]  # luck and ratings as bgbot analyse
    assert got["overall rating"] == [p["overall"]["rating"] for p in want]
    page.click("#an-decisions tr[data-gnubg-id]:last-child")
    page.wait_for_selector("#an-board:not([hidden]) [data-point='1']")


@pytest.mark.parametrize(
    "what, expect",
    [
        ("id", "not a position"),
        ("broken", "line"),
        ("big", "larger than the server's limit"),
    ],
)
def test_bad_input_messages(page, tmp_path, what, expect):
    if what == "id":
        show(page, "nonsense!!")
    elif what == "broken":
        upload(page, tmp_path, "broken.mat", " 3 point match\n\n Game 1\n garbage here\n")
    else:
        upload(page, tmp_path, "big.mat", EVIL + ";" + "x" * 70_000 + "\n")
    page.wait_for_function(
        "(t) => document.querySelector('#message').textContent.toLowerCase().includes(t)", arg=expect.lower()
    )
    assert httpx.get(page.url.split("?")[0] + "v1/health").status_code == 200  # the server keeps running


# -- models, narrow screens ------------------------------------------------------------------------------------------


def test_models_and_training_plot(page):
    page.click("[data-view='models']")
    page.wait_for_selector("#run-plot polyline")
    text = page.text_content("#models-out")
    assert "bgbot-1" in text and "+0.467 ppg" in text and "candidate" in text
    gate = json.loads(Path("models/candidates/gen5/gate1-seed4.json").read_text())  # a gate record, as a table row
    row = page.text_content("#models-out tr[data-gate='candidates/gen5/gate1-seed4.json']")
    assert f"{gate['results']['models/candidates/bgbot-4.pt']['ppg']:+.3f}" in row and row.endswith("no")
    page.select_option("#run-select", "tiny")
    page.wait_for_selector("#run-plot polyline[data-points='3']")


def test_390_pixels_wide_without_horizontal_scrolling(browser, server):
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    ctx.route("**/*", lambda r: r.continue_() if urlparse(r.request.url).hostname in LOOPBACK else r.abort())
    pg = ctx.new_page()
    pg.goto(server + "/")
    pg.wait_for_selector("#board [data-point='1']")
    show(pg, MATCH_5, "31")
    pg.click("#hint-button")
    pg.wait_for_selector("#hint-out tr[data-rank='1']")
    for view in ("position", "play", "rollout", "analyse", "models"):
        pg.click(f"[data-view='{view}']")
        if view == "play":
            pg.click("#new-game")
            prompt(pg)
        pg.wait_for_timeout(200)
        width = pg.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1] == 390, (view, width)
    ctx.close()
