"""A tournament's games as ``.mat`` files: their names in the output directory (``NN_A_vs_B.mat`` a pairing of money
games, ``NN_A_vs_B_MMMM.mat`` a match; :data:`MAT_NAME` recognises them), their text (:func:`mat_text`, by
:func:`bgbot.formats.matfile.match_text`) and writing them (:func:`write_files`, :class:`OutputError`).

Part of :mod:`bgbot.arena.tournament`, which re-exports :func:`write_files` and :class:`OutputError`.
"""

from __future__ import annotations

import re
from pathlib import Path

from bgbot.arena.chunks import TournamentError
from bgbot.arena.engine import CubeRules
from bgbot.formats import matfile

__all__ = ["MAT_NAME", "OutputError", "mat_path", "mat_text", "write_files"]

MAT_NAME = re.compile(r"\d{2,}_.+_vs_.+\.mat")
"""The name of a tournament's ``.mat`` file (:func:`mat_path`): ``NN_A_vs_B.mat``, ``NN_A_vs_B_MMMM.mat``."""


class OutputError(TournamentError):
    """Some ``.mat`` files could not be written (the results were computed and are kept in ``results``)."""

    def __init__(self, message: str, results: dict, not_written: list[str]) -> None:
        super().__init__(message)
        self.results = results
        self.not_written = not_written


def _mat_names(a: str, b: str) -> tuple[str, str]:
    """The players' names as a ``.mat`` file gives them (:func:`bgbot.formats.matfile.safe_name`), ``-A`` and ``-B``
    added when they would be the same."""
    names = (matfile.safe_name(a), matfile.safe_name(b))
    return (names[0] + "-A", names[1] + "-B") if names[0] == names[1] else names


def mat_path(out_dir: Path, k: int, a: str, b: str, match_no: int | None = None) -> Path:
    """Where pairing ``k`` (0-based) of players ``a`` and ``b`` is written in ``out_dir``: ``NN_A_vs_B.mat`` (``NN``
    = ``k + 1``, two digits at least), or with ``match_no`` (1-based) that match's ``NN_A_vs_B_MMMM.mat``."""
    names = _mat_names(a, b)
    suffix = "" if match_no is None else f"_{match_no:04d}"
    return out_dir / f"{k + 1:02d}_{names[0]}_vs_{names[1]}{suffix}.mat"


def mat_text(
    a: str, b: str, games: list, match_length: int = 0, jacoby: bool | None = None, rules: CubeRules | None = None
) -> str:
    """The ``.mat`` text of ``games`` (:class:`bgbot.formats.matfile.Game`) between ``a`` and ``b``
    (:func:`bgbot.formats.matfile.match_text`): a match to ``match_length`` points, or a money session (0) with
    ``jacoby``'s header line (None: none); ``rules`` gives the backgammon value and the automatic doubles (None: 3
    and none)."""
    return matfile.match_text(
        _mat_names(a, b),
        games,
        match_length,
        jacoby=jacoby,
        backgammon_value=rules.backgammon_value if rules else 3,
        auto_doubles=rules.auto_doubles if rules else 0,
    )


def write_files(results: dict, files: list[tuple[Path, str]]) -> None:
    """Write each planned file atomically (:func:`bgbot.formats.matfile.write_atomic`), going on past failures.

    Raises:
        OutputError: the files not written and why (``results`` kept on the error).
    """
    failed: list[str] = []
    first = ""
    for path, text in files:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            matfile.write_atomic(path, text)
        except OSError as e:
            failed.append(str(path))
            first = first or f"{e.strerror or e}"
    if failed:
        written = len(files) - len(failed)
        raise OutputError(
            f"{len(failed)} of {len(files)} .mat file(s) not written ({first}), first {failed[0]!r}; "
            f"{written} written; the results above are complete",
            results,
            failed,
        )
