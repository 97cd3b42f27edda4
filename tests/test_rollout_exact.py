"""Rollouts stay bit-identical: each case's per-trial results (a SHA-256 of their bytes), means and standard errors
against the values recorded for fixed seeds with the evaluation path as it was before its speed-ups (classes passed
down, one pass over the features, ...). A speed-up that moves one bit of one plain trial fails here.

Plain trials are pinned to the bit: they read the network only through which play is best. Variance-reduced trials
add up evaluated luck terms, and a float32 matrix product's last bits depend on the CPU's kernels (AVX2 against
AVX-512 machines differ by up to about 1e-7 in a case's means), so their means and standard errors are pinned within
``VR_TOLERANCE`` (1e-6) instead: a different play in any one trial moves a mean by far more than that.

The cases cover plain and variance-reduced trials, with the bear-off databases on and off, truncated and full-length,
position rollouts, a checker-play rollout and a cubeful cube rollout, on bgbot-6 (``models/bgbot-6.pt``, a fixed file:
the values do not follow the shipped model). Regenerate only for a change that is meant to move results:
``python -m tests.test_rollout_exact`` prints the table.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from bgbot.arena import rollout as ro
from bgbot.evaluation.checkpoint import load
from bgbot.evaluation.specialists import evaluator_for
from bgbot.formats import positionid

MODEL = Path(__file__).resolve().parents[1] / "models" / "bgbot-6.pt"

CASES: dict[str, dict] = {
    "plain-opening-no-db": {"position": "4HPwATDgc/ABMA", "trials": 144, "seed": 7, "vr": False, "db": False},
    "plain-contact-db": {"position": "tm2AhBFn5wYgQA", "trials": 72, "seed": 3, "vr": False, "db": True},
    "vr-crashed-no-db": {"position": "n9kAAHDdbQBAAA", "trials": 36, "seed": 11, "vr": True, "db": False},
    "vr-opening-truncated": {
        "position": "4HPwATDgc/ABMA",
        "trials": 72,
        "seed": 5,
        "vr": True,
        "db": True,
        "truncate": 9,
    },
    "vr-race-db": {"position": "FwAAoG0bqgAAAA", "trials": 72, "seed": 2, "vr": True, "db": True},
    "vr-race-no-db": {"position": "2wEAAP4zAAgAAA", "trials": 36, "seed": 4, "vr": True, "db": False},
    "plain-bearoff-no-db": {"position": "b1sHAIAvAAAAAA", "trials": 72, "seed": 9, "vr": False, "db": False},
    "plays-vr-truncated": {
        "position": "4HPwATDgc/ABMA",
        "dice": [3, 1],
        "trials": 36,
        "seed": 6,
        "vr": True,
        "db": True,
        "truncate": 7,
    },
    "cube-vr-truncated": {
        "position": "tm2AhBFn5wYgQA",
        "trials": 36,
        "seed": 8,
        "vr": True,
        "db": True,
        "truncate": 6,
        "cube": True,
    },
}
"""Case name -> the rollout: a position (Position ID), trials, seed, variance reduction, databases, truncation; with
``dice`` a checker-play rollout of the 0-ply filter's best 3 candidates, with ``cube`` a cube rollout (money)."""


def run_case(ev, case: dict) -> np.ndarray:
    """The case's per-trial results ``(K, T, 5 or 6)`` float64 (one row per start)."""
    settings = ro.RolloutSettings(
        trials=case["trials"],
        seed=case["seed"],
        variance_reduction=case["vr"],
        databases=case["db"],
        truncate=case.get("truncate", 0),
        cube=case.get("cube", False),
    )
    pos = positionid.decode(case["position"])
    if "dice" in case:
        cands = ro.candidates(ev, pos, tuple(case["dice"]), max_candidates=3)
        starts = np.array([c.afterstate for c in cands], dtype=np.int8)
        return ro._run(ev, starts, np.zeros(len(cands), dtype=bool), settings)
    if case.get("cube"):
        starts = np.array([pos, pos], dtype=np.int8)
        cs = np.array([[1, -1, 1], [2, 1, 1]], dtype=np.int64)
        return ro._run(ev, starts, np.ones(2, dtype=bool), settings, cube_state=cs)
    return ro._run(ev, pos[None], np.ones(1, dtype=bool), settings)


def summary(results: np.ndarray) -> dict:
    """The values a case is pinned by: the SHA-256 of the results' bytes, and each start's means and standard errors
    as ``float.hex`` strings."""
    est = [ro.Estimate.of(r) for r in results]
    return {
        "sha256": hashlib.sha256(np.ascontiguousarray(results, dtype=np.float64).tobytes()).hexdigest(),
        "mean": [[float(x).hex() for x in e.mean] for e in est],
        "se": [[float(x).hex() for x in e.se] for e in est],
    }


EXPECTED: dict[str, dict] = {
    "plain-opening-no-db": {
        "sha256": "c7e9b5117828c6e3827e2180405a9780331e918ff7cfcb3eb28d8e91719a7d03",
        "mean": [
            [
                "0x1.c71c71c71c71cp-2",
                "0x1.8e38e38e38e39p-4",
                "0x1.c71c71c71c71cp-8",
                "0x1.c71c71c71c71cp-4",
                "0x1.c71c71c71c71cp-8",
            ]
        ],
        "se": [
            [
                "0x1.546760246161bp-5",
                "0x1.95e7da44789abp-6",
                "0x1.c71c71c71c733p-8",
                "0x1.ae949eb1c1a7cp-6",
                "0x1.c71c71c71c72dp-8",
            ]
        ],
    },
    "plain-contact-db": {
        "sha256": "d91127330f28d872367e2475647976526e4d7d5a242f6ef57da721a8aeb18f45",
        "mean": [["0x1.fd42910000000p-3", "0x1.5555555555555p-4", "0x0.0p+0", "0x1.638e38e38e38ep-2", "0x0.0p+0"]],
        "se": [["0x1.9a199f4b9f96cp-5", "0x1.0cb47faaa018fp-5", "0x0.0p+0", "0x1.cedb7e31d5a7bp-5", "0x0.0p+0"]],
    },
    "vr-crashed-no-db": {
        "sha256": "cc00db0aab12e8f3955a1c604cd3ae1bde1d0f9617627380f7b5d6b8be07b434",
        "mean": [
            [
                "0x1.e004f40ca45a9p-6",
                "-0x1.3e15bb602adfcp-26",
                "0x1.e4131421cf570p-45",
                "0x1.1818f3c741b3dp-7",
                "0x1.c96f43b883050p-16",
            ]
        ],
        "se": [
            [
                "0x1.1ed590203bb16p-7",
                "0x1.21c5c00e61085p-25",
                "0x1.d4ce7bb4c8c91p-42",
                "0x1.d8e03e2ed71cfp-11",
                "0x1.6ca0c1bef7271p-17",
            ]
        ],
    },
    "vr-opening-truncated": {
        "sha256": "835de9f88d33b7e0c1727b57537d76c8887a1da90891d8224a4556ce4f1363bd",
        "mean": [
            [
                "0x1.1025a613c0caap-1",
                "0x1.1643f93632913p-3",
                "0x1.5dd248051a914p-8",
                "0x1.b9c02e0cfcd68p-4",
                "0x1.f6ba29aaf1b27p-9",
            ]
        ],
        "se": [
            [
                "0x1.f679d59aa319ap-10",
                "0x1.de602da8f4afdp-10",
                "0x1.8775b8a50da42p-13",
                "0x1.9b94593529022p-10",
                "0x1.0733282d44324p-13",
            ]
        ],
    },
    "vr-race-db": {
        "sha256": "ea6286ad2e0ba65b29d3ffc4615bcbae5c1650dc104567d79b866fee2c52a7f3",
        "mean": [["0x1.b425ec7c71caap-27", "0x0.0p+0", "0x0.0p+0", "0x1.e76904d37e6b7p-1", "0x0.0p+0"]],
        "se": [["0x1.44a3d86013bb4p-24", "0x0.0p+0", "0x0.0p+0", "0x1.279efb730e72ap-7", "0x0.0p+0"]],
    },
    "vr-race-no-db": {
        "sha256": "025853b9a58c52bd27922f3bce871bcf2472b09597f3f96b162469dc91359dcb",
        "mean": [
            [
                "0x1.06980fcd6e826p-12",
                "0x1.d24754f2f0160p-62",
                "0x1.e1030387b03bbp-90",
                "-0x1.b5fd05b46c578p-19",
                "0x1.41d749c51f3b4p-39",
            ]
        ],
        "se": [
            [
                "0x1.5726320b2f4bdp-11",
                "0x1.4855847b1625cp-57",
                "0x1.b993ce60de8cfp-91",
                "0x1.91758a1a551b4p-17",
                "0x1.126b32caf42efp-39",
            ]
        ],
    },
    "plain-bearoff-no-db": {
        "sha256": "a3e319cdced3a3036bc79b68ad0b90f026e2bde1bdd2459bc69e5cd676969e0d",
        "mean": [["0x1.0000000000000p+0", "0x0.0p+0", "0x0.0p+0", "0x0.0p+0", "0x0.0p+0"]],
        "se": [["0x0.0p+0", "0x0.0p+0", "0x0.0p+0", "0x0.0p+0", "0x0.0p+0"]],
    },
    "plays-vr-truncated": {
        "sha256": "155e613897507693c8275f3e38ab4a622f9b669529652a9c775632ac59aa7d46",
        "mean": [
            [
                "0x1.1a62d45a12f67p-1",
                "0x1.3a01ef1ce6b70p-3",
                "0x1.952e9ea37d094p-8",
                "0x1.b0d2b96f097b3p-4",
                "0x1.eb39dd3c75ba2p-9",
            ],
            [
                "0x1.f4e9190fcd6ebp-2",
                "0x1.f01acab0fcd6cp-4",
                "0x1.189e7d0157683p-8",
                "0x1.fb9ef76581944p-4",
                "0x1.29e251f4cc97bp-8",
            ],
        ],
        "se": [
            [
                "0x1.269f1ba686537p-9",
                "0x1.f7161954718a8p-10",
                "0x1.706597d6c94d3p-13",
                "0x1.b2997af3517c3p-10",
                "0x1.26c7974763493p-13",
            ],
            [
                "0x1.f79789b5e4e04p-10",
                "0x1.0b442139331ecp-9",
                "0x1.6bb8bd4f783a1p-13",
                "0x1.630051e2c7484p-10",
                "0x1.402bfc301eb24p-13",
            ],
        ],
    },
    "cube-vr-truncated": {
        "sha256": "45ab180cef5244991a460901f6bfe07c7f5f34814055c23543ac475723a5d56b",
        "mean": [
            [
                "0x1.fa00ccabda12ep-3",
                "0x1.39e7588981948p-4",
                "0x1.ac56bd03587eep-9",
                "0x1.465cb1143f35bp-2",
                "0x1.29b47f2f80ca6p-6",
            ],
            [
                "0x1.e826300b0fcd9p-3",
                "0x1.3f9c6c0a35ba6p-4",
                "0x1.c3f7ebd739c78p-9",
                "0x1.3a8ca01bf0328p-2",
                "0x1.f5a11a58e2c3cp-7",
            ],
        ],
        "se": [
            [
                "0x1.8cb53016ccbafp-9",
                "0x1.8e42951950e5bp-9",
                "0x1.7444a3ca7b5c7p-12",
                "0x1.12743df8d798dp-9",
                "0x1.56e0e61911eefp-10",
            ],
            [
                "0x1.155fca09bcb75p-8",
                "0x1.addb4ff05e078p-9",
                "0x1.7cb31a562c938p-12",
                "0x1.abaa1f739ae8cp-9",
                "0x1.89beea53b0745p-10",
            ],
        ],
    },
}
"""Case name -> :func:`summary` of its results, recorded before the evaluation path's speed-ups."""


VR_TOLERANCE = 1e-6
"""Largest absolute difference allowed in a variance-reduced case's means and standard errors (probabilities and
equities, in their units): about 8x the largest difference measured between two x86-64 CPUs' float32 kernels."""


def _floats(rows: list[list[str]]) -> np.ndarray:
    return np.array([[float.fromhex(x) for x in row] for row in rows])


@pytest.fixture(scope="module")
def ev():
    net, _ = load(MODEL)
    return evaluator_for(net)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rollout_results_match_the_recorded_ones(ev, name):
    got = summary(run_case(ev, CASES[name]))
    want = EXPECTED[name]
    if CASES[name]["vr"]:
        np.testing.assert_allclose(_floats(got["mean"]), _floats(want["mean"]), rtol=0, atol=VR_TOLERANCE)
        np.testing.assert_allclose(_floats(got["se"]), _floats(want["se"]), rtol=0, atol=VR_TOLERANCE)
        return
    assert got["mean"] == want["mean"]
    assert got["se"] == want["se"]
    assert got["sha256"] == want["sha256"]


if __name__ == "__main__":
    net, _ = load(MODEL)
    evaluator = evaluator_for(net)
    print(json.dumps({name: summary(run_case(evaluator, case)) for name, case in CASES.items()}, indent=1))
