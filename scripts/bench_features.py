"""Benchmark the encoding-v2 inputs: v1 encoding, the GNU Backgammon-class features and encode_v2, per position.

Positions: afterstates (every legal play, one random roll each) of the 60,000 positions in
``models/candidates/gen2/ply2-targets/*.npz`` (self-play positions of the engine), ``--positions`` of them drawn at
random; timed in batches of ``--batch`` (self-play evaluates about 8,000 afterstates a call). The reference, in the same
run and on the same batches: the first vectorised features (``tests/features_reference.py``, kept verbatim to pin the
values) and v1's ``encoding.encode``; the JSON also says whether the features equal the reference's exactly.
``sparse_inputs_v2`` is what the v2 evaluators compute (v1's sparse rows and the features less the borne-off ones,
sharing one pass over the checkers), ``sparse_inputs_v2_vs_separate`` its time over that of ``sparse_encode_v1``
and ``features`` called apart. Times are CPU seconds of this process (``time.process_time``), the best of
``--repeat`` interleaved runs, numpy on one thread.

Usage: ``python scripts/bench_features.py [--positions 46000] [--batch 46000] [--repeat 5] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests/features_reference.py

from bgbot.errors import BgbotError, int_at_least, run_script  # noqa: E402
from bgbot.evaluation import encoding, features  # noqa: E402
from bgbot.evaluation.specialists import encode_v2  # noqa: E402
from bgbot.rules.movegen import generate_plays  # noqa: E402
from tests import features_reference  # noqa: E402

TARGETS = ROOT / "models" / "candidates" / "gen2" / "ply2-targets"


def afterstates(n: int, seed: int) -> np.ndarray:
    """``n`` afterstates ``(n, 26)`` int8 of the target files' positions, one random roll each, drawn at random."""
    files = sorted(TARGETS.glob("*.npz"))
    if not files:
        raise BgbotError(f"no position files (*.npz) in {str(TARGETS)!r}")
    rng = np.random.default_rng(seed)
    positions = np.concatenate([np.load(f)["positions"] for f in files])
    after = generate_plays(positions, rng.integers(1, 7, (len(positions), 2))).afterstates
    while len(after) < n:
        after = np.concatenate([after, after])
    return after[np.sort(rng.choice(len(after), n, replace=False))]


def sparse_inputs_v2(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the v2 evaluators compute (``EvaluatorV2.inputs``): v1's sparse rows and the features but the borne-off
    ones (folded into the first layer's table) from one pass over the checkers (point masks, borne-off counts)."""
    f_t, masks, off = features.v2_parts(x, 3)
    return encoding.sparse_encode(x, masks, off), f_t


def best_time(fn: Callable[[np.ndarray], object], x: np.ndarray, batch: int) -> float:
    """CPU seconds of ``fn`` over ``x`` in batches of ``batch`` rows."""
    t0 = time.process_time()
    for i in range(0, len(x), batch):
        fn(x[i : i + batch])
    return time.process_time() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=int_at_least(1), default=46000, help="afterstates timed")
    p.add_argument("--batch", type=int_at_least(1), default=46000, help="positions per call")
    p.add_argument("--repeat", type=int_at_least(1), default=5, help="interleaved runs; the best of each is reported")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="draws the positions and rolls")
    args = p.parse_args()
    x = afterstates(args.positions, args.seed)
    fns: dict[str, Callable[[np.ndarray], object]] = {
        "encode_v1": encoding.encode,
        "sparse_encode_v1": encoding.sparse_encode,
        "features": features.features,
        "encode_v2": encode_v2,
        "sparse_inputs_v2": sparse_inputs_v2,
        "features_reference": features_reference.features,
    }
    runs: dict[str, list[float]] = {k: [] for k in fns}
    with threadpool_limits(1):
        for fn in fns.values():  # warm-up (tables, caches)
            fn(x[:100])
        for _ in range(args.repeat):
            for k, fn in fns.items():
                runs[k].append(best_time(fn, x, args.batch))
    us = {k: round(min(v) / len(x) * 1e6, 3) for k, v in runs.items()}
    equal = all(
        np.array_equal(features.features(x[i : i + 10000]), features_reference.features(x[i : i + 10000]))
        for i in range(0, len(x), 10000)
    )
    print(
        json.dumps(
            {
                "positions": len(x),
                "batch": args.batch,
                "repeat": args.repeat,
                "us_per_position": us,
                "ms_per_46000": {k: round(v * 46000 / 1000, 1) for k, v in us.items()},
                "features_speedup_vs_reference": round(us["features_reference"] / us["features"], 2),
                "features_vs_encode_v1": round(us["features"] / us["encode_v1"], 2),
                "sparse_inputs_v2_vs_separate": round(
                    us["sparse_inputs_v2"] / (us["sparse_encode_v1"] + us["features"]), 3
                ),
                "features_equal_reference": equal,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    run_script(main)
