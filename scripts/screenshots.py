"""Screenshots of each view of the web page of ``bgbot serve``, as PNG files in ``docs/screenshots/``.

Starts this checkout's ``bgbot serve`` on a free loopback port (models from ``models/``, the training run of
``models/bgbot-1-progress.jsonl``), drives Debian's chromium through Playwright (no browser download; requests to
any other address are blocked) and writes, at 1100 px wide unless said otherwise:

* ``position.png``: a position of a 5-point match with its IDs, the ranked plays at 1 ply and the cube analysis;
* ``play.png``: a money game against the bot, a play being made by clicks;
* ``rollout.png``: a finished rollout of the best plays of an opening 31;
* ``analyse.png``: ``tests/data/noisy_match.mat`` analysed, one flagged position on the board;
* ``models.png``: the models with their cards' figures and bgbot-1's training progress;
* ``phone.png``: the position view at 390 px wide.

Prints ``{"files": [...], "seconds": ...}`` as JSON. Usage: ``python scripts/screenshots.py [--out DIR]`` (needs
``bgbot[server]``, ``playwright`` and ``/usr/bin/chromium``).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="directory of the PNG files")
    args = parser.parse_args(argv)
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
            shot(page, "position.png")

            page.click("[data-view='rollout']")
            page.fill("#ro-trials", "288")
            page.click("#ro-start")
            page.wait_for_selector("#ro-status[data-state='done']", timeout=600_000)
            shot(page, "rollout.png")

            page.click("[data-view='play']")
            page.click("#new-game")
            idle(page)
            for _ in range(4):
                state = page.get_attribute("#game-status", "data-prompt")
                if state == "roll":
                    page.click("#act-roll")
                    idle(page)
                elif state == "take":
                    page.click("#act-take")
                    idle(page)
                if page.get_attribute("#game-status", "data-prompt") == "play":
                    break
            if page.get_attribute("#game-status", "data-prompt") == "play":
                sources = page.evaluate(
                    "() => [...document.querySelectorAll('#game-board [data-point]')]"
                    ".filter(g => +g.dataset.count > 0).map(g => g.dataset.point)"
                )
                page.click(f"#game-board [data-point='{sources[-1]}']")
            shot(page, "play.png")

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

            page.click("[data-view='models']")
            page.wait_for_selector("#run-plot polyline")
            shot(page, "models.png")

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
