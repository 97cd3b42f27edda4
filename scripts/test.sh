#!/usr/bin/env bash
# Set up .venv (if missing), install bgbot editable with its test extra (and the optional extras "ray" and "server"
# where pyproject.toml defines them), then run every check in order: ruff lint, ruff format, mypy on the library,
# the import-linter contracts, and the test suite with the library's and the README's doctests.
# Every check runs even after one fails (so one run shows every problem); exits non-zero if any failed.
# Usage: bash scripts/test.sh [extra pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

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
