"""Make the analysis test match: GNU Backgammon plays a match against itself with noise on player 0's checker play
and cube decisions, analyses it with its own ``analyse match`` (default analysis settings) and exports it; the .mat
file and GNU Backgammon's verdict on every decision (from the saved .sgf) are written to tests/data/.

Usage: python scripts/make_noisy_match.py [--length 7] [--seed 7] [--noise 0.35] [--cube-noise 0.1]
Needs Debian's gnubg (/usr/games/gnubg). Output: tests/data/noisy_match.mat, tests/data/noisy_match_gnubg.json.
"""

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

from bgbot.errors import run_script, whole_number

GNUBG = "/usr/games/gnubg"
MARKS = {"DO[]": "doubtful", "BM[1]": "bad", "BM[2]": "very bad"}


def sgf_verdicts(sgf: str) -> dict:
    """GNU Backgammon's marks per game: a list of {"side", "action", "mark"} in the order of the game's actions
    (a checker play's mark is its checker-play skill; a double, take or drop node's mark its cube skill)."""
    names = {"W": re.search(r"PW\[([^\]]*)\]", sgf).group(1), "B": re.search(r"PB\[([^\]]*)\]", sgf).group(1)}
    games = []
    for game in sgf.split("(;")[1:]:
        actions = []
        for node in re.finditer(r";([BW])\[([^\]]*)\]((?:[A-Z]*(?:\[[^\]]*\])*)*)", game):
            colour, move, props = node.groups()
            mark = next((m for key, m in MARKS.items() if key in props), None)
            kind = move if move in ("double", "take", "drop") else "move"
            actions.append({"player": names[colour], "action": kind, "mark": mark})
        games.append(actions)
    return {"names": names, "games": games}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", type=whole_number, default=7)
    ap.add_argument("--seed", type=whole_number, default=7)
    ap.add_argument("--noise", type=float, default=0.35, help="noise on player 0's checker play")
    ap.add_argument("--cube-noise", type=float, default=0.1, help="noise on player 0's cube decisions")
    args = ap.parse_args()
    out = Path(__file__).resolve().parent.parent / "tests" / "data"
    with tempfile.TemporaryDirectory() as tmp:
        mat, sgf = Path(tmp) / "m.mat", Path(tmp) / "m.sgf"
        script = [
            "set player 0 gnubg",
            "set player 1 gnubg",
            "set player 0 chequerplay evaluation plies 0",
            f"set player 0 chequerplay evaluation noise {args.noise}",
            "set player 0 chequerplay evaluation deterministic off",
            "set player 0 cubedecision evaluation plies 0",
            f"set player 0 cubedecision evaluation noise {args.cube_noise}",
            "set player 0 cubedecision evaluation deterministic off",
            "set player 1 chequerplay evaluation plies 0",
            "set player 1 cubedecision evaluation plies 0",
            "set display off",
            f"set seed {args.seed}",
            f"new match {args.length}",
            "analyse match",
            f"export match mat {mat}",
            f"save match {sgf}",
            "quit",
            "y",
            "",
        ]
        subprocess.run([GNUBG, "-t", "-q"], input="\n".join(script), capture_output=True, text=True, check=True)
        (out / "noisy_match.mat").write_text(mat.read_text())
        verdicts = sgf_verdicts(sgf.read_text())
    verdicts["source"] = (
        f"GNU Backgammon 1.07 'analyse match' (default analysis settings, thresholds 0.030/0.060/0.120) of a "
        f"{args.length}-point match, gnubg 0-ply vs itself, player 0 with noise {args.noise} (cube {args.cube_noise}), seed {args.seed}; "
        "made by scripts/make_noisy_match.py"
    )
    counts = {}
    for game in verdicts["games"]:
        for a in game:
            counts[(a["player"], a["mark"])] = counts.get((a["player"], a["mark"]), 0) + 1
    verdicts["counts"] = {f"{p}: {m}": n for (p, m), n in sorted(counts.items(), key=str) if m}
    (out / "noisy_match_gnubg.json").write_text(json.dumps(verdicts, indent=1) + "\n")
    print(json.dumps(verdicts["counts"], indent=1))


if __name__ == "__main__":
    run_script(main)
