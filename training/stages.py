"""Training by generations: the stages after TD pre-training, each its own resumable, seeded command.

    python -m training sample  --model M --out DIR --positions N [--seed S] [--generation G]
    python -m training select  --model M --positions DIR [DIR ...] --out DIR [--classes C,...] [--win LO HI]
    python -m training targets --model M --positions DIR --out DIR --kind ply2|ply1|ply0|rollout
    python -m training fit     --init M --targets DIR [DIR ...] --run-dir DIR [--epochs E] [--resume]
    python -m training gate    --candidate C --against P --games N [--opponent pubeval ...] [--cube-reference STORE] [--cube]
                               --out FILE.json
    python -m training campaign plan|run|status --store DIR ...   (training.campaign: the rollout campaign)
    python -m training combine --model PLAY --cube CUBE --out M   (training.combine: separate cube nets)

This module is their command line: the parser, and each stage's typed config built from it once
(``Config.from_args``). The stages themselves: :mod:`training.sample`, :mod:`training.selection`,
:mod:`training.targets`, :mod:`training.fit`, :mod:`training.gate`, :mod:`training.combine` and :mod:`training.campaign`; their files and
the checks that keep a rerun from mixing settings: :mod:`training.parts`.

Files (every one written atomically, temp file + ``os.replace``; a stage killed at any moment loses at most the part
it was working on and continues with ``--resume`` or by simply being run again with the same settings: an output
directory holding parts made with other settings, or a fit resumed on other data or settings, is refused, never mixed).
No GNU Backgammon output is used anywhere here: positions come from the model's own self-play, targets from the engine's
own search and rollouts.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bgbot.errors import BgbotError, int_at_least, whole_number
from bgbot.evaluation import specialists

from .combine import CombineConfig, run_combine
from .fit import FIT_ARCHS, FIT_ENCODINGS, FitConfig, run_fit
from .gate import GATE_EXIT_STATUS, GateConfig, gate_status, run_gate
from .parts import StageStopped
from .sample import DEFAULT_KEEP, SAMPLE_CLASSES, SampleConfig, run_sample
from .selection import SelectConfig, run_select
from .targets import TARGET_KINDS, TargetsConfig, run_targets

__all__ = ["Stage", "STAGES", "build_parser", "main"]


@dataclass(frozen=True)
class Stage:
    """A stage of the command line: ``configure`` turns its parsed options into its config, once; ``run`` runs it
    and returns its JSON-able summary; ``status`` is the exit status of a finished run's summary (0 unless the stage
    says otherwise: the gate's 1 for a rejected candidate)."""

    configure: Callable[[argparse.Namespace], Any]
    run: Callable[[Any], dict]
    status: Callable[[dict], int] = lambda summary: 0


def _campaign_args(args: argparse.Namespace) -> argparse.Namespace:
    """The campaign reads its options itself (:func:`training.campaign.run_campaign`)."""
    return args


def _run_campaign(args: argparse.Namespace) -> dict:
    from .campaign import run_campaign

    return run_campaign(args)


STAGES = {
    "sample": Stage(SampleConfig.from_args, run_sample),
    "select": Stage(SelectConfig.from_args, run_select),
    "targets": Stage(TargetsConfig.from_args, run_targets),
    "fit": Stage(FitConfig.from_args, run_fit),
    "gate": Stage(GateConfig.from_args, run_gate, gate_status),
    "combine": Stage(CombineConfig.from_args, run_combine),
    "campaign": Stage(_campaign_args, _run_campaign),
}
"""Each stage's name and how it runs (``python -m training STAGE``; ``bgbot train STAGE`` forwards here)."""


def _directory(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("a directory name, got an empty one")
    return text


def build_parser(prog: str = "python -m training") -> argparse.ArgumentParser:
    """The stages' parser; ``prog`` names the command in usage and error lines (``bgbot train`` when forwarded)."""
    p = argparse.ArgumentParser(prog=prog, description="Training stages after TD pre-training.")
    sub = p.add_subparsers(dest="stage", required=True)
    s = sub.add_parser("sample", help="sample positions from the model's self-play")
    s.add_argument("--model", required=True)
    s.add_argument("--out", required=True, type=_directory, help="directory of part-NNNNN.npz files")
    s.add_argument("--positions", type=int_at_least(1), required=True)
    s.add_argument("--part-size", type=int_at_least(1), default=500)
    s.add_argument("--seed", type=int_at_least(0), default=1)
    s.add_argument("--generation", type=int_at_least(1), default=1)
    s.add_argument("--games-in-flight", type=int_at_least(1), default=256)
    s.add_argument("--keep", action="append", metavar="CLASS=RATE", help=f"keep rates, defaults {DEFAULT_KEEP}")
    c = sub.add_parser("select", help="keep sampled positions of given classes and 0-ply winning chances")
    c.add_argument("--model", required=True, help="the model whose 0-ply win probability selects")
    c.add_argument("--positions", required=True, nargs="+", help="sample (or target) directories")
    c.add_argument("--out", required=True, type=_directory)
    c.add_argument(
        "--classes",
        default="contact,crashed,backgame",
        help=f"comma-separated names of {list(SAMPLE_CLASSES.values())}",
    )
    c.add_argument(
        "--win", type=float, nargs=2, metavar=("LO", "HI"), default=(0.0, 1.0), help="side on roll's 0-ply win range"
    )
    c.add_argument("--part-size", type=int_at_least(1), default=500)
    c.add_argument("--max", type=int_at_least(0), default=0, help="keep at most N positions (0: all)")
    t = sub.add_parser("targets", help="compute targets of sampled positions with the engine")
    t.add_argument("--model", required=True)
    t.add_argument("--positions", required=True, help="a sample directory")
    t.add_argument("--out", required=True, type=_directory)
    t.add_argument("--kind", default="ply2", choices=TARGET_KINDS)
    t.add_argument("--chunk", type=int_at_least(1), default=100, help="positions searched together")
    t.add_argument("--limit", type=int_at_least(0), default=0, help="only the first N parts (0: all)")
    t.add_argument(
        "--trials", type=int_at_least(1), help="rollout: trials per position (default 36: each first roll once)"
    )
    t.add_argument(
        "--horizon", type=int_at_least(0), help="rollout: half-moves before the net values the position (default 8)"
    )
    t.add_argument("--seed", type=int_at_least(0), help="rollout: dice seed (default 1)")
    t.add_argument(
        "--workers", type=int_at_least(1), help="rollout: worker processes (default 1; the targets do not depend on it)"
    )
    t.add_argument("--ray", metavar="ADDRESS", help="rollout: run on Ray ('local' or HOST:PORT); the same targets")
    t.add_argument(
        "--no-variance-reduction",
        dest="variance_reduction",
        action="store_const",
        const=False,
        help="rollout: plain trials (no luck estimation; cheaper per unit of accuracy for full rollouts)",
    )
    f = sub.add_parser("fit", help="fit the next generation's nets to targets")
    f.add_argument(
        "--init",
        required=True,
        help="checkpoint to start from (v1 single net or specialists; cube nets, if any, are carried as they are)",
    )
    f.add_argument(
        "--targets",
        required=True,
        nargs="+",
        help="target directories, read in order; one given k times weighs its positions k times (each copy is a row of "
        "its own, so copies may fall on both sides of the validation split)",
    )
    f.add_argument(
        "--last-wins",
        action="store_true",
        help="a position in several target parts is fitted once, to the last part's target (list rollouts last)",
    )
    f.add_argument(
        "--decisions",
        nargs="+",
        help="plays stores (campaign plan --plays, or folders of their parts): each step adds the decision loss, the "
        "nets' differences between a decision's candidates against the rollouts' (training.fit.DecisionTargets)",
    )
    f.add_argument(
        "--decision-weight", type=float, default=None, help="the decision loss's weight beside the targets' (default 1)"
    )
    f.add_argument(
        "--held-out-decisions",
        nargs="+",
        metavar="DIR",
        help="plays stores or folders of their parts never fitted (e.g. a folder of a store's part-????9.npz): each "
        "epoch's curve "
        "records the nets' decision loss on them and the millipoints their 0-ply choice loses "
        "(training.fit.DecisionTargets.choice_loss)",
    )
    f.add_argument("--run-dir", required=True, type=_directory)
    f.add_argument("--epochs", type=int_at_least(1), default=10)
    f.add_argument("--lr", type=float, default=1e-4)
    f.add_argument(
        "--lr-final", type=float, help="anneal the learning rate from --lr to this by the last epoch (cosine)"
    )
    f.add_argument("--batch", type=int_at_least(1), default=128)
    f.add_argument("--val-frac", type=float, default=0.05)
    f.add_argument("--seed", type=int_at_least(0), default=1)
    f.add_argument(
        "--arch",
        choices=FIT_ARCHS,
        default="specialists",
        help="specialists: a net per class (contact, crashed, race); single: one net, the --init net's shape",
    )
    f.add_argument(
        "--encoding",
        choices=sorted(FIT_ENCODINGS),
        help="inputs: v1 (bgbot-1's 203), v2 (plus GNU-style features, 253) or v3 (plus GNU Backgammon's race inputs, "
        "283); default: v2 for specialists made from a single net, else --init's own",
    )
    f.add_argument(
        "--race-encoding",
        choices=sorted(FIT_ENCODINGS),
        help="widen the race specialist to this encoding before fitting (v3: plus GNU Backgammon's race inputs, "
        "one-hot borne-off counts and crossovers, new inputs starting at weight 0); a fresh fit only",
    )
    f.add_argument(
        "--hidden",
        type=int_at_least(1),
        metavar="N",
        help="widen every specialist to N hidden units before fitting (the new units start at output weight 0, so "
        "the fit starts from the same values); a fresh fit only",
    )
    f.add_argument(
        "--classes",
        nargs="+",
        choices=specialists.CLASSES,
        help="fit only the positions of these classes (the split into training and held-out rows is made over all "
        "positions first, so the held-out rows are those the full fit holds out); default: all",
    )
    f.add_argument(
        "--stderr-scale",
        type=float,
        metavar="TAU",
        help="weigh each target by TAU^2 / (TAU^2 + se^2), se its standard error (rollouts; 0 for search targets), "
        "e.g. 0.02",
    )
    f.add_argument("--resume", action="store_true")
    g = sub.add_parser(
        "gate", help="duplicate games of a candidate against the previous generation", epilog=GATE_EXIT_STATUS
    )
    g.add_argument("--candidate", required=True)
    g.add_argument("--against", required=True, help="the previous generation (.pt) or a player spec (gnubg:0, ...)")
    g.add_argument("--games", type=whole_number, required=True)
    g.add_argument("--opponent", action="append", help="more opponents to record (pubeval, gnubg:0, ...)")
    g.add_argument("--seed", type=whole_number, default=0)
    g.add_argument("--workers", type=whole_number, default=1)
    g.add_argument("--ply", type=whole_number, default=0)
    g.add_argument("--out", help="JSON record file")
    g.add_argument(
        "--cube",
        action="store_true",
        help="cubeful money games (Jacoby on), each side doubling and taking from its own probabilities: the gate of "
        "a candidate whose cube decisions change (training combine)",
    )
    g.add_argument(
        "--cube-reference",
        nargs="+",
        metavar="STORE",
        help="campaign stores of held-out long rollouts: accept only if the candidate's money cube decisions on them "
        "are not worse than --against's (bgbot.arena.cubegate)",
    )
    m = sub.add_parser("combine", help="one model: a checkpoint's nets for the plays, another's for the cube")
    m.add_argument("--model", required=True, help="the checkpoint whose nets choose the checker plays")
    m.add_argument(
        "--cube",
        required=True,
        help="the checkpoint whose nets answer the cube decisions (its play nets; cube nets of its own are left out)",
    )
    m.add_argument("--out", required=True, help="the combined checkpoint to write")
    m.add_argument("--force", action="store_true", help="replace a file already at --out")
    from .campaign import add_parser as add_campaign

    add_campaign(sub)
    for sp in (s, c, t, f, g, m, sub.choices["campaign"]):
        sp.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str], prog: str = "python -m training") -> int:
    """Run the stage ``argv`` names with its options; print its JSON summary. Returns the exit status: the stage's
    :attr:`Stage.status` of its summary (0; the gate: 1 when the candidate is rejected), or 2 with one ``error:`` line
    on bad input or a failed write (argparse exits with 2 on a malformed command line); a stage stopped early
    (:class:`training.parts.StageStopped`) prints its partial summary, one ``error:`` line, and returns its status
    (130 SIGINT, 143 SIGTERM)."""
    args = build_parser(prog).parse_args(argv)
    stage = STAGES[args.stage]
    try:
        summary = stage.run(stage.configure(args))
    except StageStopped as stop:  # interrupted: what it has (marked incomplete), then one line
        print(json.dumps(stop.summary), flush=True)
        print(f"error: {stop}", file=sys.stderr)
        return stop.exit_status
    except (BgbotError, OSError) as e:  # bad input (a player spec, games), a failed write: one line, status 2
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary))
    return stage.status(summary)
