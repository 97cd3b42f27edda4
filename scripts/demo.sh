#!/usr/bin/env bash
# Quick start: set up .venv, install bgbot (with its shipped model) and ask it for the best plays in a few real
# positions and for two cube actions. Usage: bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
# A plain (non-editable) install, as a user gets it; a development install that imports bgbot from this source
# tree (pip install -e) is left alone.
here=$(pwd -P)
installed=$(cd / && python -c "import bgbot, os; print(os.path.dirname(os.path.dirname(os.path.realpath(bgbot.__file__))))" \
    2>/dev/null || true)
if [ "$installed" != "$here" ]; then
    pip install --disable-pip-version-check -q .
fi

demo() {
    echo
    echo "\$ bgbot $*"
    bgbot "$@"
}
# The opening roll 3-1, money play.
demo move 4HPwATDgc/ABMA 31
# A GNUbg ID (Position ID:Match ID) at 2-4 in a 5-point match: plays ranked by match winning chance.
demo move sOfgwQDgZ8PBAA:cAmgAEAAEAAE 64
# An XGID that carries its own dice (5-2), money play.
demo move "XGID=-ABCbC-CC---------abbbcba-:0:0:1:52:0:0:1:0:10"
# Cube actions: a money position, then 0-0 in a 7-point match.
demo cube 7bYFAAbtnDsAAA
demo cube t7MxABBs20YEBA:cAngAAAAAAAE
# The same as JSON, for programs.
demo moves 4HPwATDgc/ABMA 21 --json
