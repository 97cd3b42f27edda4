"""A tournament's output directory, apart from its ``.mat`` files (:mod:`bgbot.arena.tournament_mat`): the work units
saved as they finish (``OUT/chunks/``, :class:`ChunkStore`) and the settings saved with them, which ``--resume``
reads back (:func:`resume_settings`); a finished tournament's ``OUT/results.json`` (:func:`finish_saved`,
:class:`TournamentComplete`); and which files of a directory are a tournament's, so that a new tournament refuses
(or with ``--force`` deletes) another's (:func:`tournament_files`, :func:`claim_out_dir`).

Part of :mod:`bgbot.arena.tournament`, which re-exports every public name here.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from bgbot.arena.chunks import Chunk, Task, TournamentError
from bgbot.arena.tournament_mat import MAT_NAME
from bgbot.files import not_a_directory, write_atomic

__all__ = [
    "CHUNKS_DIR",
    "RESULTS_FILE",
    "ChunkStore",
    "TournamentComplete",
    "discard_saved",
    "finish_saved",
    "resume_settings",
    "tournament_files",
    "claim_out_dir",
]

CHUNKS_DIR = "chunks"
"""Where a tournament with an output directory saves its finished work units (``OUT/chunks/``)."""


class ChunkStore:
    """The finished work units of a tournament, saved in ``out_dir/chunks/`` as each finishes (``unit-NNNNNN.pkl``,
    pickles of :data:`bgbot.arena.chunks.Chunk` with their games, written atomically), with the settings in
    ``tournament.json``. A fresh run starts in a directory :func:`claim_out_dir` cleared; a resumed one checks the
    settings and loads the units (pickles: resume only directories this program wrote). A directory that cannot be
    written (read-only, a full disk) does not stop the tournament: saving stops, :attr:`error` holds why, and the
    run's results and ``.mat`` files are handled as without it.

    Raises:
        TournamentError: resuming a directory without ``tournament.json``, with other settings, or an unreadable unit.
    """

    def __init__(self, out_dir: Path, settings: dict, tasks: list[Task], resume: bool) -> None:
        self.dir = out_dir / CHUNKS_DIR
        self.saved: dict[int, Chunk] = {}
        self.error: OSError | None = None
        manifest = self.dir / "tournament.json"
        if resume:
            saved = resume_settings(out_dir)
            if saved != settings:
                diff = sorted(k for k in settings if saved.get(k) != settings[k])
                raise TournamentError(f"{out_dir} holds a tournament with other settings ({', '.join(diff)})")
            for path in sorted(self.dir.glob("unit-*.pkl")):
                try:
                    i = int(path.stem.split("-")[1])
                    chunk = pickle.loads(path.read_bytes())
                    t = tasks[i]
                    ok = (chunk.pairing, chunk.start, chunk.stop) == (t.pairing, t.start, t.stop)
                except (OSError, ValueError, IndexError, EOFError, pickle.UnpicklingError, AttributeError) as e:
                    raise TournamentError(f"cannot read the saved games in {path}: {e}") from e
                if not ok:
                    raise TournamentError(f"{path} holds other games than its name says")
                self.saved[i] = chunk
            return
        try:  # a fresh run: no earlier tournament's files are here (claim_out_dir)
            self.dir.mkdir(parents=True, exist_ok=True)
            write_atomic(manifest, json.dumps(settings, indent=2) + "\n")
        except OSError as e:
            self.error = e
            discard_saved(out_dir)

    def save(self, i: int, chunk: Chunk) -> None:
        """Save a finished unit; after a failed write nothing more is saved and the directory is removed (it could
        not resume the run)."""
        if self.error is not None:
            return
        try:
            write_atomic(self.dir / f"unit-{i:06d}.pkl", pickle.dumps(chunk))
        except OSError as e:
            self.error = e
            discard_saved(self.dir.parent)


RESULTS_FILE = "results.json"
"""A finished tournament's results in its output directory (``OUT/results.json``, the results dict of
:func:`bgbot.arena.tournament.play`), written by :func:`finish_saved`; ``resume`` of that directory answers with them
(:class:`TournamentComplete`)."""


def discard_saved(out_dir: str | Path) -> None:
    """Remove the saved work units of a tournament (``out_dir/chunks/``): nothing is left to resume."""
    import shutil

    shutil.rmtree(Path(out_dir) / CHUNKS_DIR, ignore_errors=True)


def finish_saved(out_dir: str | Path, results: dict) -> None:
    """A tournament in ``out_dir`` has finished and its ``.mat`` files are written: record its ``results`` in
    ``out_dir/results.json`` (atomically), then remove its saved work units (:func:`discard_saved`).

    Raises:
        OSError: ``results.json`` cannot be written (the work units are then kept).
    """
    write_atomic(Path(out_dir) / RESULTS_FILE, json.dumps(results, indent=2) + "\n")
    discard_saved(out_dir)


class TournamentComplete(TournamentError):
    """``resume`` of a directory whose tournament has finished: there is nothing left to play. ``results`` holds
    its results as recorded in ``results.json`` (None when the directory predates that file), ``path`` the file."""

    def __init__(self, out_dir: str | Path, results: dict | None) -> None:
        self.path = Path(out_dir) / RESULTS_FILE
        self.results = results
        where = f"its results are in {self.path}" if results is not None else "its .mat files are all it kept"
        super().__init__(f"{out_dir} holds a finished tournament, so there is nothing to resume: {where}")


def resume_settings(out_dir: str | Path) -> dict:
    """The settings of the tournament saved in ``out_dir`` (``chunks/tournament.json``): ``players`` (specs),
    ``games``, ``seed``, ``cube``, ``match_length``, ``jacoby``, ``auto_doubles``, ``backgammon_value``,
    ``chunk_pairs``.

    Raises:
        TournamentComplete: the tournament in ``out_dir`` has finished (its ``results.json``, or its ``.mat`` files
            without saved work units).
        TournamentError: no such file, or not one this program wrote.
    """
    path = Path(out_dir) / CHUNKS_DIR / "tournament.json"
    if not path.exists():
        _refuse_finished(Path(out_dir))
        raise TournamentError(f"{out_dir} holds no tournament to resume (no {path})")
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise TournamentError(f"cannot read {path}: {e}") from e
    keys = ("players", "games", "seed", "cube", "match_length", "jacoby", "auto_doubles", "backgammon_value")
    if not isinstance(saved, dict) or any(k not in saved for k in (*keys, "chunk_pairs")):
        raise TournamentError(f"{path} is not a tournament's settings file")
    return saved


def _refuse_finished(out_dir: Path) -> None:
    """Raise :class:`TournamentComplete` when ``out_dir`` holds a finished tournament (its ``results.json``, or
    ``.mat`` files alone); return otherwise.

    Raises:
        TournamentError: ``results.json`` is unreadable or not a tournament's results.
    """
    done = out_dir / RESULTS_FILE
    if done.is_file():
        try:
            results = json.loads(done.read_text())
        except (OSError, ValueError) as e:
            raise TournamentError(f"cannot read {done}: {e}") from e
        if not isinstance(results, dict) or "pairings" not in results:
            raise TournamentError(f"{done} is not a tournament's results file")
        raise TournamentComplete(out_dir, results)
    if any(out_dir.glob("*.mat")):
        raise TournamentComplete(out_dir, None)


def tournament_files(out_dir: str | Path) -> list[Path]:
    """What a tournament wrote in ``out_dir`` that is there now, sorted: its ``.mat`` files (named
    ``NN_A_vs_B[_MMMM].mat``), :data:`RESULTS_FILE` and the :data:`CHUNKS_DIR` directory. Empty when ``out_dir`` is
    not a directory."""
    d = Path(out_dir)
    if not d.is_dir():
        return []
    return sorted(
        p
        for p in d.iterdir()
        if p.name == RESULTS_FILE or p.name == CHUNKS_DIR or (MAT_NAME.fullmatch(p.name) and p.is_file())
    )


def claim_out_dir(out_dir: str | Path, force: bool = False) -> None:
    """Make ``out_dir`` the output directory of a new tournament: refuse it while it holds another tournament's files
    (:func:`tournament_files`), unless ``force``, which deletes those files (and only those; a user's other files stay).

    Raises:
        TournamentError: ``out_dir`` exists and is not a directory; another tournament's files are there and ``force``
            is off.
        OSError: one of them cannot be deleted.
    """
    import shutil

    if Path(out_dir).exists() and not Path(out_dir).is_dir():
        raise TournamentError(not_a_directory("--out", out_dir, "a directory for the .mat files"))
    found = tournament_files(out_dir)
    if found and not force:
        names = [p.name + ("/" if p.is_dir() else "") for p in found]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        unfinished = any(p.name == CHUNKS_DIR for p in found)
        raise TournamentError(
            f"{out_dir} holds another tournament's files ({shown}): give another --out"
            + (f", --resume {out_dir} to finish that tournament" if unfinished else "")
            + ", or --force to delete them (other files are kept)"
        )
    for p in found:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
