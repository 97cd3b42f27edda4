"""Regenerate tests/data/gnubg_cube_cases.json by driving GNU Backgammon (``gnubg -t -q``).

Usage: ``python scripts/gnubg_cube_cases.py [--out tests/data/gnubg_cube_cases.json] [--gnubg /usr/games/gnubg]``

Three kinds of records, all printed by gnubg itself (GNU Backgammon 1.07, Debian package ``gnubg``):

* ``cube``: positions from a few gnubg-nn 0-ply self-play games, each under one cube/score setting; gnubg's 0-ply
  ``hint`` prints the cubeless probabilities (6 digits, ``set output digits 6``) and the cubeful No double,
  Double/Take, Double/Pass (money: equity; match: MWC, ``set output mwc on``) and the proper action.
  Settings: ``set beavers 0`` (bgbot's rules have no beavers), ``set evaluation cubedecision evaluation plies 0``,
  ``set matchequitytable .../Kazaross-XG2.xml``. Positions where both sides are in gnubg's small two-sided bear-off
  database are skipped (gnubg values those from exact cubeful tables, not Janowski).
* ``matchid``: gnubg's Match ID and Position ID after a sequence of ``set`` commands.
* ``xgid``: the Position ID and Match ID gnubg shows after ``set xgid``.

Needs gnubg and the gnubg-nn package (venv) only when run; the tests read the JSON file alone.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import gnubg_nn  # noqa: E402
from gnubg_oracle import from_gnubg  # noqa: E402

from bgbot.errors import run_script, whole_number  # noqa: E402

MET = "/usr/share/gnubg/met/Kazaross-XG2.xml"
HEADER = [
    "set player 0 human",
    "set player 1 human",
    "set beavers 0",
    "set output digits 6",
    "set output mwc on",
    f"set matchequitytable {MET}",
    "set evaluation cubedecision evaluation plies 0",
]

# (length, score player 0 (opponent), score player 1 (on roll), crawford, cube value, owner: None / "me" / "opp",
#  jacoby)
SETTINGS = [
    (0, 0, 0, False, 1, None, True),
    (0, 0, 0, False, 1, None, False),
    (0, 0, 0, False, 2, "me", True),
    (0, 0, 0, False, 4, "me", False),
    (7, 0, 0, False, 1, None, False),
    (5, 1, 3, False, 1, None, False),
    (5, 2, 2, False, 1, None, False),
    (7, 5, 2, False, 2, "me", False),
    (5, 4, 2, False, 1, None, False),
    (9, 4, 6, False, 1, None, False),
    (11, 7, 3, False, 2, "me", False),
    (3, 0, 0, False, 1, None, False),
    (7, 6, 1, False, 1, None, False),
    (5, 3, 3, False, 1, None, False),
    (13, 5, 8, False, 4, "me", False),
    (0, 0, 0, False, 1, None, True),
    (25, 10, 12, False, 1, None, False),
    (5, 3, 4, True, 1, None, False),
]


def run_gnubg(gnubg: str, commands: list[str]) -> str:
    text = "\n".join(HEADER + commands + ["quit", "y"]) + "\n"
    return subprocess.run([gnubg, "-t", "-q"], input=text, capture_output=True, text=True, timeout=120).stdout


def self_play_positions(n_games: int, seed: int) -> list[list[list[int]]]:
    """Boards [opp, me] (side on roll = me, before rolling) from gnubg-nn 0-ply self-play."""
    rng = random.Random(seed)
    out = []
    for _ in range(n_games):
        b = gnubg_nn.board_from_position_id("4HPwATDgc/ABMA")
        b = [list(b[0]), list(b[1])]
        for _ply in range(200):
            if sum(b[0]) == 0 or sum(b[1]) == 0:
                break
            out.append([list(b[0]), list(b[1])])
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
            keys = gnubg_nn.moves(b, d1, d2)
            if keys:
                mv = gnubg_nn.best_move(b, d1, d2)
                after = gnubg_nn.board_from_position_key(_key_after(b, mv, keys))
                b = [list(after[1]), list(after[0])]
            else:
                b = [b[1], b[0]]
    return out


def _key_after(b, mv, keys):
    """The key of the board after play ``mv`` (1-based (from, to) pairs) among ``keys``."""
    me, opp = list(b[1]), list(b[0])
    flat = [v for step in mv for v in (step if isinstance(step, tuple) else (step,))]
    for k in range(0, len(flat), 2):
        f, t = flat[k] - 1, flat[k + 1] - 1
        me[f] -= 1
        if t >= 0:
            me[t] += 1
            if opp[23 - t] == 1:
                opp[23 - t] = 0
                opp[24] += 1
    key = gnubg_nn.key_of_board([opp, me])
    return key if key in keys else keys[0]


def two_sided_bearoff(b) -> bool:
    """Both sides all home with at most 6 checkers: gnubg's built-in two-sided database."""
    return all(sum(side[6:]) == 0 and sum(side) <= 6 for side in b)


def parse_hint(out: str) -> dict | None:
    m = re.search(
        r"Cube analysis\n.*\n\s+([\d.]+) ([\d.]+) ([\d.]+) - ([\d.]+) ([\d.]+) ([\d.]+)\n"
        r"Cubeful equities:\n(.*?)Proper cube action: ([^\n(]+)",
        out,
        re.S,
    )
    if not m:
        return None
    w, wg, wbg, _, lg, lbg = (float(m.group(i)) for i in range(1, 7))
    eq = {}
    for line in m.group(7).splitlines():
        mm = re.match(r"\d\. (.+?)\s{2,}([+-]?[\d.]+)(%?)", line.strip())
        if not mm:
            continue
        value = float(mm.group(2)) / (100.0 if mm.group(3) else 1.0)
        label = mm.group(1).lower()
        key = "no_double" if label.startswith("no") else "double_take" if "take" in label else "double_pass"
        eq[key] = value
    return {"probabilities": [w, wg, wbg, lg, lbg], "equities": eq, "action": m.group(8).strip()}


def ids(out: str) -> list[tuple[str, str]]:
    return re.findall(r"Position ID: (\S+)\n\s+Match ID\s+: (\S+)", out)


def cube_cases(gnubg: str, n: int, seed: int) -> list[dict]:
    boards = [b for b in self_play_positions(12, seed) if not two_sided_bearoff(b)]
    rng = random.Random(seed)
    picks = rng.sample(boards, n)
    cases = []
    for k, b in enumerate(picks):
        length, s0, s1, crawford, cube, owner, jacoby = SETTINGS[k % len(SETTINGS)]
        pid = gnubg_nn.position_id(b)
        cmds = ["new session" if length == 0 else f"new match {length}", f"set jacoby {'on' if jacoby else 'off'}"]
        if length:
            cmds.append(f"set score {s0} {s1}")
            if crawford:
                cmds.append("set crawford on")
        cmds += ["set turn 1", f"set board {pid}"]
        if cube > 1:
            cmds += [f"set cube value {cube}", f"set cube owner {1 if owner == 'me' else 0}"]
        cmds += ["show board", "hint"]
        out = run_gnubg(gnubg, cmds)
        shown = ids(out)
        hint = parse_hint(out)
        if hint is None or not shown:
            print(f"skipped {pid} {cmds}: no cube analysis", file=sys.stderr)
            continue
        cases.append(
            {
                "position_id": shown[-1][0],
                "match_id": shown[-1][1],
                "commands": cmds,
                "position": from_gnubg(b).tolist(),
                "length": length,
                "score": [s1, s0],
                "crawford": crawford,
                "cube": cube,
                "owner": "centre" if owner is None else owner,
                "jacoby": jacoby,
                **hint,
            }
        )
    return cases


MATCHID_SCENARIOS = [
    (["new session", "set turn 1"], {}),
    (["new match 5", "set turn 0"], {}),
    (["new match 7", "set score 3 4", "set turn 1"], {}),
    (["new match 7", "set score 2 6", "set crawford on", "set turn 0"], {}),
    (["new match 9", "set score 8 4", "set turn 1", "set cube value 4", "set cube owner 1"], {}),
    (["new match 5", "set turn 1", "set dice 6 3"], {}),
    (["new match 11", "set score 10 9", "set turn 0", "set dice 4 4"], {}),
    (["new session", "set turn 0", "set cube value 8", "set cube owner 0", "set dice 2 1"], {}),
    (["new match 3", "set turn 1", "double"], {}),
    (["new session", "set jacoby on", "set turn 1"], {}),
]

XGIDS = [
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:1:0:10",
    "XGID=-b----E-C---eE---c-e----B-:0:0:-1:00:0:0:0:0:10",
    "XGID=-b----E-C---eE---c-e----B-:1:1:-1:00:3:1:0:7:10",
    "XGID=a-BBBBB----A---a-bbbcbb-A-:2:-1:1:00:2:4:0:9:10",
    "XGID=-a-BCBC-A---cA--a-cbbb---A:1:1:1:52:0:0:1:0:10",
    "XGID=--BBBBC-------------bccdc-:0:0:-1:00:4:2:1:5:10",
    "XGID=-A-AABBBC----------bbbccb-:0:0:1:31:4:3:0:5:10",
]


def matchid_cases(gnubg: str) -> list[dict]:
    out = []
    for cmds, _ in MATCHID_SCENARIOS:
        shown = ids(run_gnubg(gnubg, cmds + ["show board"]))
        out.append({"commands": cmds, "position_id": shown[-1][0], "match_id": shown[-1][1]})
    return out


def xgid_cases(gnubg: str) -> list[dict]:
    out = []
    for x in XGIDS:
        shown = ids(run_gnubg(gnubg, [f"set xgid {x}", "show board"]))
        pid, mid = shown[-1]
        b = gnubg_nn.board_from_position_id(pid)
        out.append({"xgid": x, "position_id": pid, "match_id": mid, "position": from_gnubg(b).tolist()})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "tests/data/gnubg_cube_cases.json"))
    ap.add_argument("--gnubg", default="/usr/games/gnubg")
    ap.add_argument("--n", type=whole_number, default=40)
    ap.add_argument("--seed", type=whole_number, default=5)
    args = ap.parse_args()
    version = subprocess.run([args.gnubg, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    data = {
        "source": f"{version}, `gnubg -t -q`, written by scripts/gnubg_cube_cases.py",
        "settings": HEADER,
        "cube": cube_cases(args.gnubg, args.n, args.seed),
        "matchid": matchid_cases(args.gnubg),
        "xgid": xgid_cases(args.gnubg),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(data['cube'])} cube cases, {len(data['matchid'])} Match IDs, {len(data['xgid'])} XGIDs -> {args.out}")


if __name__ == "__main__":
    run_script(main)
