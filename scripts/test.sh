#!/usr/bin/env bash
# Set up .venv (if missing), install bgbot with its test dependencies (editable) and run the test suite.
# Usage: bash scripts/test.sh [extra pytest arguments]; exits with pytest's status.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
pip install --disable-pip-version-check -q -e '.[test]'
exec python -m pytest -q -n 2 "$@"
