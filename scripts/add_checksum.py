"""Give checkpoints saved before weight checksums existed their SHA-256 checksum, in place and atomically.

Everything else in each file (meta, optimiser state) is kept, and the weights stay bit-identical: the script prints,
per file, the checksum of the weights before and after the rewrite (they must be equal) as JSON.

Usage: ``python scripts/add_checksum.py models/bgbot-1.pt [...]``
"""

from __future__ import annotations

import argparse
import json

import torch

from bgbot.errors import run_script
from bgbot.evaluation import checkpoint


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="+", help="checkpoint files")
    args = p.parse_args()
    for path in args.paths:
        checkpoint.load(path)  # a missing, damaged or foreign file: one error line naming it (CheckpointError)
        before = checkpoint.weights_checksum(torch.load(path, map_location="cpu", weights_only=True)["state_dict"])
        written = checkpoint.add_checksum(path)
        _, meta = checkpoint.load(path)
        after = checkpoint.weights_checksum(torch.load(path, map_location="cpu", weights_only=True)["state_dict"])
        print(
            json.dumps(
                {
                    "path": path,
                    "written": written,
                    "before": before,
                    "after": after,
                    "identical": before == after == meta.checksum,
                    "verified": meta.checksum_verified,
                }
            )
        )


if __name__ == "__main__":
    run_script(main)
