"""Screenshots of each view of the web page of ``bgbot serve``, as PNG files in ``docs/screenshots/``.

Starts this checkout's ``bgbot serve`` on a free loopback port (models from ``models/``, the training run of
``models/bgbot-1-progress.jsonl``), drives Debian's chromium through Playwright (no browser download; requests to
any other address are blocked) and writes, at 1100 px wide unless said otherwise:

* ``position.png``: a position of a 5-point match with its IDs, the ranked plays at 1 ply and the cube analysis;
* ``play.png``: a money game against the bot with the tutor on: a poor play flagged, a checker being dragged;
* ``rollout.png``: a finished rollout of the best plays of an opening 31;
* ``analyse.png``: ``tests/data/noisy_match.mat`` analysed, one flagged position on the board;
* ``models.png``: the models with their cards' figures and bgbot-1's training progress;
* ``phone.png``: the position view at 390 px wide.

Prints ``{"files": [...], "seconds": ...}`` as JSON. Usage: ``python scripts/screenshots.py [--out DIR] [--only
NAME ...]`` (``--only play phone``: just those views; needs ``bgbot[server]``, ``playwright`` and
``/usr/bin/chromium``).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
VIEWS = ("position", "rollout", "play", "analyse", "models", "phone")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server() -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli", "serve", "--port", str(port), "--models", str(ROOT / "models")],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(url + "/v1/health", timeout=5).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("error: bgbot serve did not start")


def idle(page) -> None:
    page.wait_for_function("() => document.body.dataset.pending === '0'", timeout=300_000)


def play_view(page, url: str) -> None:
    """A money game with the tutor on: the bot's worst-ranked play typed at the first play of the player's (the tutor
    flags it), then at the next one a checker lifted and dragged half way (the mouse left pressed)."""
    page.click("[data-view='play']")
    page.check("#tutor-input")
    page.fill("#tutor-threshold", "0.03")
    page.click("#new-game")
    idle(page)
    typed = False
    for _ in range(16):
        state = page.get_attribute("#game-status", "data-prompt")
        if state in ("roll", "take"):
            page.click("#act-roll" if state == "roll" else "#act-take")
        elif state == "play" and not typed:
            gid = parse_qs(urlparse(page.url).query)["game"][0]
            game = httpx.get(f"{url}/v1/games/{gid}", timeout=60).json()
            plays = httpx.get(f"{url}/v1/move", params={"position": game["gnubg_id"]}, timeout=60).json()["plays"]
            page.fill("#play-text", plays[-1]["play"])
            page.click("#play-form button")
            typed = True
        else:
            break
        idle(page)
    if page.get_attribute("#game-status", "data-prompt") != "play":
        return
    spots = page.evaluate(
        """() => {
        const svg = document.querySelector('#game-board');
        const g = [...svg.querySelectorAll('[data-point]')].filter((x) => +x.dataset.count > 0 && +x.dataset.point > 12)
          .concat([...svg.querySelectorAll('[data-point]')].filter((x) => +x.dataset.count > 0))[0];
        const b = g.querySelector('polygon, rect').getBBox();
        const top = b.y < 150;
        const m = svg.getScreenCTM();
        const at = (x, y) => { const p = svg.createSVGPoint(); p.x = x; p.y = y; const s = p.matrixTransform(m); return [s.x, s.y]; };
        return [at(b.x + b.width / 2, top ? b.y + 18 : b.y + b.height - 18), at(b.x + b.width / 2 + 80, 110)];
    }"""
    )
    (x0, y0), (x1, y1) = spots
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=6)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="directory of the PNG files")
    parser.add_argument("--only", nargs="+", choices=VIEWS, default=list(VIEWS), help="just these views")
    args = parser.parse_args(argv)
    want = set(args.only)
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    proc, url = start_server()
    files: list[str] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)

            def new_page(width: int):
                ctx = browser.new_context(viewport={"width": width, "height": 900})
                ctx.route(
                    "**/*",
                    lambda r: r.continue_() if urlparse(r.request.url).hostname == "127.0.0.1" else r.abort(),
                )
                page = ctx.new_page()
                page.goto(url + "/")
                page.wait_for_selector("#board [data-point='1']")
                return page

            def shot(page, name: str) -> None:
                path = out / name
                page.screenshot(path=str(path), full_page=True)
                files.append(str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path))

            page = new_page(1100)
            if want & {"position", "rollout"}:
                page.fill("#position-input", "4HPwATDgc/ABMA:MAGgABAAEAAE")
                page.fill("#dice-input", "31")
                page.click("#show-button")
                idle(page)
                page.select_option("#hint-ply", "1")
                page.click("#hint-button")
                page.wait_for_selector("#hint-out tr[data-rank='1']")
                page.click("#hint-out tr[data-rank='1']")
                page.click("#cube-button")
                page.wait_for_selector("#cube-action")
                idle(page)
                if "position" in want:
                    shot(page, "position.png")

            if "rollout" in want:
                page.click("[data-view='rollout']")
                page.fill("#ro-trials", "288")
                page.click("#ro-start")
                page.wait_for_selector("#ro-status[data-state='done']", timeout=600_000)
                shot(page, "rollout.png")

            if "play" in want:
                play_view(page, url)
                shot(page, "play.png")
                page.mouse.up()

            if "analyse" in want:
                page.click("[data-view='analyse']")
                page.set_input_files("#mat-file", str(ROOT / "tests" / "data" / "noisy_match.mat"))
                page.click("#analyse-button")
                page.wait_for_selector("#an-decisions tr[data-gnubg-id]", timeout=600_000)
                flagged = page.query_selector("#an-decisions tr.mark-verybad") or page.query_selector(
                    "#an-decisions tr[data-gnubg-id]"
                )
                assert flagged is not None
                flagged.click()
                idle(page)
                shot(page, "analyse.png")

            if "models" in want:
                page.click("[data-view='models']")
                page.wait_for_selector("#run-plot polyline")
                shot(page, "models.png")

            if "phone" in want:
                phone = new_page(390)
                phone.fill("#position-input", "4HPwATDgc/ABMA:MAGgABAAEAAE")
                phone.fill("#dice-input", "31")
                phone.click("#show-button")
                idle(phone)
                phone.click("#hint-button")
                phone.wait_for_selector("#hint-out tr[data-rank='1']")
                shot(phone, "phone.png")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(json.dumps({"files": files, "seconds": round(time.perf_counter() - t0, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
