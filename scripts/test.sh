#!/usr/bin/env bash
# Install the programs the tests use where they are missing, set up .venv (if missing), install bgbot editable with
# its test extra (and the optional extras "ray" and "server" where pyproject.toml defines them), then run every check
# in order: ruff lint, ruff format, mypy on the library, the import-linter contracts, and the test suite with the
# library's and the README's doctests.
# The programs are Debian packages: gnubg (GNU Backgammon at /usr/games/gnubg, an oracle of the tests), chromium and
# chromium-driver (the browser and its WebDriver for the browser tests). They are installed with apt-get as root or
# through sudo; where that is not possible the script stops before any test and prints the one command that installs
# them (no test is ever skipped for want of them). gnubg-nn, the other oracle, comes with the test extra.
# Every check runs even after one fails (so one run shows every problem); exits non-zero if any failed.
# Usage: bash scripts/test.sh [extra pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian package -> a program it installs.
declare -A PROGRAM=([gnubg]=/usr/games/gnubg [chromium]=chromium [chromium-driver]=chromedriver)
missing=()
for pkg in gnubg chromium chromium-driver; do
    command -v "${PROGRAM[$pkg]}" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    install="apt-get install -y --no-install-recommends ${missing[*]}"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    how="${SUDO:+sudo }apt-get update && ${SUDO:+sudo }$install"
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "error: the tests need ${missing[*]} (Debian packages) and apt-get is not available; install them, on Debian: $how" >&2
        exit 1
    fi
    if [ -n "$SUDO" ] && ! { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; }; then
        echo "error: the tests need ${missing[*]}, and installing needs root; run: $how" >&2
        exit 1
    fi
    echo "== installing ${missing[*]} (apt-get)"
    if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO $install -qq >/dev/null; }; then
        echo "error: installing ${missing[*]} failed; run: $how" >&2
        exit 1
    fi
fi
if ! /usr/games/gnubg --version >/dev/null 2>&1; then
    echo "error: GNU Backgammon (/usr/games/gnubg) does not run; the tests need it; run: apt-get install --reinstall gnubg" >&2
    exit 1
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
extras=$(python - <<'PY'
import tomllib

with open("pyproject.toml", "rb") as f:
    defined = tomllib.load(f)["project"].get("optional-dependencies", {})
print(",".join(["test"] + [name for name in ("ray", "server") if name in defined]))
PY
)
pip install --disable-pip-version-check -q -e ".[$extras]"
python -c "import gnubg_nn" || { echo "error: gnubg-nn (a test oracle) is not importable" >&2; exit 1; }

failed=()
check() {
    echo "== $*"
    local start=$SECONDS
    if "$@"; then
        echo "   ok ($((SECONDS - start)) s)"
    else
        echo "   FAILED: $*"
        failed+=("$*")
    fi
}
check ruff check .
check ruff format --check .
check mypy
check lint-imports
check python -m pytest -q -n 2 "$@"

if [ ${#failed[@]} -gt 0 ]; then
    printf 'failed checks:\n' >&2
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "all checks passed"
