"""Where a tournament's work units run: in this process, in the spawn-started process pool (a unit whose worker dies
is replayed, up to :data:`bgbot.arena.distributed.MAX_ATTEMPTS` starts), or on Ray (:func:`run_chunks`). Each unit
is one :class:`bgbot.arena.chunks.Task`, played by :func:`bgbot.arena.chunks.run_chunk`.

Part of :mod:`bgbot.arena.tournament`.
"""

from __future__ import annotations

from collections.abc import Callable

from bgbot.arena import distributed
from bgbot.arena.chunks import Chunk, Task, TournamentError, run_chunk, worker_init
from bgbot.progress import progress_bar

__all__ = ["run_chunks"]


def run_chunks(
    tasks: list[Task],
    workers: int,
    progress: bool = False,
    ray: str | None = None,
    on_chunk: Callable[[Chunk], object] | None = None,
) -> tuple[list[Chunk], int]:
    """Run chunk tasks in this process (``workers <= 1``), a spawn pool, or on Ray (``ray``: an address or ``"local"``,
    :mod:`bgbot.arena.distributed`, which re-runs the chunk of a worker that dies) -> (results in task order, restarts:
    pool restarts or deaths of Ray workers). ``progress``: a tqdm bar of games played on stderr. Each chunk's final
    positions are dropped (bounded memory); ``on_chunk`` is called with each chunk as it finishes."""
    total = sum(t.games for t in tasks)
    bar = progress_bar(total=total, unit="game", enabled=progress, leave=False, dynamic_ncols=True)

    def done(r: Chunk) -> Chunk:
        r.final = r.final[:0]
        bar.update(2 * (r.stop - r.start))
        if on_chunk is not None:  # as each chunk finishes: saved at once (resume), kept when the run stops early
            on_chunk(r)
        return r

    try:
        if ray is not None:
            deaths: list[None] = []  # one per Ray worker that died (its chunk was run again), as pool restarts
            chunks = distributed.run_tasks(
                run_chunk, tasks, ray=ray, on_result=done, on_restart=lambda: deaths.append(None)
            )
            return chunks, len(deaths)
        if workers <= 1:
            import torch  # lazily: a tournament of pubeval and random players needs no torch

            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return [done(run_chunk(t)) for t in tasks], 0
            finally:
                torch.set_num_threads(threads)

        def too_many(i: int) -> TournamentError:
            t = tasks[i]
            return TournamentError(
                f"pairs {t.start}..{t.stop} of pairing {t.pairing} failed {distributed.MAX_ATTEMPTS} times "
                "(a worker process died each time)"
            )

        results, restarts = distributed.run_pool(
            run_chunk, tasks, workers, lambda i, r: done(r), initializer=worker_init, too_many=too_many
        )
        return results, restarts
    finally:
        bar.close()
