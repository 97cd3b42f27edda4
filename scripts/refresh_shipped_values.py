"""Ship a model as the default, then show (and optionally write) what the tests and the README expect of it.

1. ``--install models/NAME.pt`` points ``bgbot/data/default_model.pt`` (a symbolic link into ``models/``) at that
   checkpoint, atomically. Never copy a file onto ``default_model.pt``: the copy would go through the link and
   overwrite the model it points to (``models/bgbot-1.pt``).
2. Prints, as JSON, the shipped model's entry for ``tests/shipped_values.py`` (keyed by the SHA-256 of its weights)
   and whether the table already has it; paste it there (``win_rate_vs_random`` is the requirement, 0.95, not a
   measurement).
3. Runs the README's Python examples on the shipped model and lists each whose output changed (README line, the
   output written there, the output now); ``--write-readme`` writes the new outputs into README.md. Read the diff
   before committing: an example chosen to show a difference (the backgammon-value one) may stop showing it.

Usage: ``python scripts/refresh_shipped_values.py [--install models/NAME.pt] [--write-readme]`` from the checkout.
"""

from __future__ import annotations

import argparse
import doctest
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = ROOT / "bgbot" / "data" / "default_model.pt"
README = ROOT / "README.md"


def install(model: str) -> None:
    """Point :data:`LINK` at ``model`` (a checkpoint under ``models/`` that loads), replacing the link atomically."""
    from bgbot.evaluation import checkpoint

    path = (ROOT / model).resolve() if not Path(model).is_absolute() else Path(model).resolve()
    if path.parent != (ROOT / "models").resolve():
        sys.exit(f"error: the shipped model must be a checkpoint in models/, got {model!r}")
    checkpoint.load(path)  # refuses a file that does not load
    tmp = LINK.with_name(".default_model.pt.tmp")
    tmp.unlink(missing_ok=True)
    os.symlink(os.path.relpath(path, LINK.parent), tmp)
    os.replace(tmp, LINK)


def entry() -> dict:
    """The ``tests/shipped_values.py`` entry of the shipped model."""
    from bgbot.evaluation import checkpoint

    _, meta = checkpoint.load(LINK)
    return {
        meta.checksum: {
            "name": Path(os.path.realpath(LINK)).stem,
            "format_version": meta.format_version,
            "encoding_version": meta.encoding_version,
            "games_trained": meta.games_trained,
            "stage": meta.training_config.get("stage", "td"),
            "win_rate_vs_random": 0.95,
        }
    }


class _Collect(doctest.DocTestRunner):
    """A doctest runner that records every example whose output differs instead of printing it."""

    def __init__(self) -> None:
        super().__init__(verbose=False)
        self.changed: list[tuple[doctest.Example, str]] = []

    def report_failure(self, out, test, example, got) -> None:  # noqa: D102
        self.changed.append((example, got))

    def report_unexpected_exception(self, out, test, example, exc_info) -> None:  # noqa: D102
        self.changed.append((example, f"<raised {exc_info[1]!r}>\n"))


def readme_changes() -> tuple[str, list[tuple[doctest.Example, str]]]:
    """README.md's text and its examples whose output differs on the shipped model."""
    text = README.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {}, "README.md", str(README), 0)
    runner = _Collect()
    runner.run(test, out=lambda s: None)
    return text, runner.changed


def rewrite(text: str, changed: list[tuple[doctest.Example, str]]) -> str:
    """``text`` with each changed example's output replaced by the new one."""
    lines = text.splitlines(keepends=True)
    for example, got in sorted(changed, key=lambda c: -c[0].lineno):
        if got.startswith("<raised"):
            sys.exit(f"error: README line {example.lineno + 1} raised: {got.strip()}")
        start = example.lineno + example.source.count("\n")
        indent = " " * example.indent
        lines[start : start + example.want.count("\n")] = [indent + g for g in got.splitlines(keepends=True)]
    return "".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--install", metavar="MODEL", help="make models/NAME.pt the shipped model (bgbot/data link)")
    p.add_argument("--write-readme", action="store_true", help="write the new outputs of the README's examples")
    args = p.parse_args()
    if args.install:
        install(args.install)
    sys.path.insert(0, str(ROOT))
    from tests.shipped_values import SHIPPED

    new = entry()
    (checksum,) = new
    text, changed = readme_changes()
    report = {
        "shipped_model": os.path.realpath(LINK),
        "shipped_values_entry": new,
        "in_tests_shipped_values": checksum in SHIPPED,
        "readme_changes": [
            {"line": ex.lineno + ex.source.count("\n") + 1, "source": ex.source.strip(), "was": ex.want, "now": got}
            for ex, got in changed
        ],
    }
    print(json.dumps(report, indent=1))
    if args.write_readme and changed:
        tmp = README.with_name(".README.md.tmp")
        tmp.write_text(rewrite(text, changed), encoding="utf-8")
        os.replace(tmp, README)


if __name__ == "__main__":
    main()
