"""GNU Backgammon's own analysis of tests/data/noisy_match.mat, the oracle of bgbot analyse's statistics.

Runs ``gnubg -t -q`` (default analysis settings, a fresh HOME so no saved settings apply) on the command file
tests/data/noisy_match.gnubg-commands.txt (import mat, analyse match, show statistics match), plus ``export match text``
to read GNU Backgammon's cube equities of every cube decision (No double, Double/take, Double/pass in normalised
equity, the doubler's side) and who made it.

Usage: python scripts/gnubg_match_analysis.py
Needs Debian's gnubg (/usr/games/gnubg). Output: tests/data/noisy_match.gnubg-analysis.txt (the statistics as
GNU Backgammon prints them), tests/data/noisy_match_gnubg_cube.json.
"""

import json
import re
import subprocess
import tempfile
from pathlib import Path

from bgbot.errors import run_script

GNUBG = "/usr/games/gnubg"
ROOT = Path(__file__).resolve().parent.parent
ACTIONS = {"moves": "no_double", "cannot": "no_double", "doubles": "double", "accepts": "take", "rejects": "pass"}


def cube_decisions(export: str) -> list[dict]:
    """GNU Backgammon's cube analyses in a text export, in order: player, decision, nd, dt, dp."""
    out = []
    for block in re.split(r"\nMove number \d+:", export)[1:]:
        m = re.search(r"^\* (\S+) (moves|cannot|doubles|accepts|rejects)", block, re.M)
        if not m or "Cube analysis" not in block:
            continue
        values = [
            float(re.search(pattern + r"\s+([+-]\d+\.\d+)", block).group(1))
            for pattern in (r"No (?:re)?double", r"[Dd]ouble, take", r"[Dd]ouble, pass")
        ]
        out.append({"player": m.group(1), "decision": ACTIONS[m.group(2)], **dict(zip(("nd", "dt", "dp"), values))})
    return out


def main() -> None:
    commands = (ROOT / "tests" / "data" / "noisy_match.gnubg-commands.txt").read_text()
    with tempfile.TemporaryDirectory() as home:
        run = subprocess.run(
            [GNUBG, "-t", "-q"],
            input=commands,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={"HOME": home},
        )
        (ROOT / "tests" / "data" / "noisy_match.gnubg-analysis.txt").write_text(run.stdout)
        export = Path(home) / "m.txt"
        script = commands.replace("show statistics match", f"export match text {export}")
        subprocess.run(
            [GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, check=True, cwd=ROOT, env={"HOME": home}
        )
        texts = [export.read_text()] + [p.read_text() for p in sorted(Path(home).glob("m_0*.txt"))]
    games = [cube_decisions(t) for t in texts]
    data = {
        "source": "GNU Backgammon 1.07 'analyse match' (default settings: 2-ply) of tests/data/noisy_match.mat, "
        "'export match text'; made by scripts/gnubg_match_analysis.py",
        "games": games,
    }
    (ROOT / "tests" / "data" / "noisy_match_gnubg_cube.json").write_text(json.dumps(data, indent=1) + "\n")
    print(sum(len(g) for g in games), "cube decisions")


if __name__ == "__main__":
    run_script(main)
