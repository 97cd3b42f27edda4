"""``bgbot rollout POSITION [DICE]``: roll out the candidate plays of a roll, or the position before the roll."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Any

import numpy as np

from bgbot.arena.rollout import MIN_SIGNIFICANCE_TRIALS
from bgbot.commands import common
from bgbot.cube import decision as cube_lib
from bgbot.errors import whole_number
from bgbot.formats.figures import figure

MAX_WORKERS = 1024


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "rollout",
        help="roll out candidate plays (with DICE) or a position (without)",
        description="Play POSITION out many times with the model at --ply and average the results (cubeless; --cube: "
        "cubeful money play). With "
        "DICE: a checker-play rollout of the candidate plays (GNU Backgammon's 0-ply move filter, or --play), ranked "
        "with each play's difference from the best and whether it is significant (95%, paired over trials; below "
        f"{MIN_SIGNIFICANCE_TRIALS} trials: too few trials to judge). "
        "Without DICE: the position before the roll. Variance reduction (luck estimation) and quasi-random dice are "
        "on by default; results for a --seed are the same for any --workers and with --ray. With --truncate, the "
        "standard errors cover the trials' noise only, not the bias of the model's valuation at the horizon. A "
        "position's match score is ignored, and said to be (cubeless money equities; JSON: match_score_ignored).",
    )
    p.add_argument("position", metavar="POSITION", help="Position ID, PositionID:MatchID (GNUbg ID) or XGID=...")
    p.add_argument("dice", nargs="*", metavar="DICE", help="the roll: 31, 3-1 or '3 1' (none: position rollout)")
    common.add_model_argument(p)
    p.add_argument(
        "--play", action="append", default=[], type=_play, metavar="PLAY", help="a play to roll out (repeatable)"
    )
    p.add_argument(
        "--candidates",
        type=whole_number,
        default=None,
        metavar="N",
        help="roll out N plays: those given with --play (at most N), then the best others by the move filter "
        "(fewer when the filter keeps fewer)",
    )
    p.add_argument("--trials", type=whole_number, default=1296, metavar="N", help="trials per candidate (default 1296)")
    p.add_argument(
        "--truncate",
        type=whole_number,
        default=0,
        metavar="PLIES",
        help="stop trials after PLIES, valued there by the model at 0-ply (0 = never); the standard errors then "
        "exclude that valuation's bias (JSON: se_excludes_truncation_bias)",
    )
    p.add_argument("--ply", type=common.ply, default=0, metavar="N", help="lookahead of the players inside (default 0)")
    p.add_argument("--seed", type=whole_number, default=0, help="dice seed (default 0)")
    p.add_argument("--no-variance-reduction", dest="vr", action="store_false", help="no luck estimation (much noisier)")
    p.add_argument("--no-quasi-random", dest="quasi", action="store_false", help="plain random first two rolls")
    p.add_argument(
        "--no-databases", dest="databases", action="store_false", help="no exact bear-off databases inside the trials"
    )
    p.add_argument(
        "--cube",
        action="store_true",
        help="cubeful money rollout: the cube played inside every trial; without DICE: No double, Double/Take, "
        "Double/Pass and the proper action",
    )
    p.add_argument(
        "--filter",
        action="store_true",
        help="0-ply trials choose among the candidates of the model's own move filter (bgbot.evaluation.prune), "
        "variance reduction too: faster, no longer exactly the model's 0-ply play",
    )
    p.add_argument("--workers", type=whole_number, default=1, metavar="N", help="worker processes (default 1)")
    p.add_argument("--ray", metavar="ADDRESS", help="run on Ray: 'local' or a cluster address HOST:PORT")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    p.set_defaults(func=run)


def _play(text: str) -> str:
    """The argparse ``type=`` of ``--play``: an empty (or blank) play is argparse's usage error naming the option
    (``error: argument --play: an empty play ...``, exit status 2), not a play the position cannot have."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty play: write the play to roll out, e.g. --play '8/5 6/5'")
    return text


def run(args: argparse.Namespace) -> int:
    from bgbot.arena import distributed
    from bgbot.arena import rollout as ro

    if not 1 <= args.workers <= MAX_WORKERS:
        raise common.UsageError(f"--workers must be 1 .. {MAX_WORKERS}, got {args.workers}")
    settings = ro.RolloutSettings(
        trials=args.trials,
        truncate=args.truncate,
        plies=args.ply,
        seed=args.seed,
        variance_reduction=args.vr,
        quasi_random=args.quasi,
        databases=args.databases,
        cube=args.cube,
        jacoby=True,
        move_filter=args.filter,
    )
    dice_text = " ".join(args.dice) or None
    ctx = common.resolve(args.position, dice_text, need_dice=False)
    if ctx.dice is None and (args.play or args.candidates is not None):
        raise common.UsageError("--play and --candidates need DICE (a checker-play rollout)")
    if args.cube and not ctx.match.is_money:
        raise common.UsageError("cubeful rollouts at a match score are not implemented; money positions only")
    if args.cube:
        settings = ro.RolloutSettings(**{**settings.to_json(), "jacoby": ctx.match.jacoby})
    cube = (ctx.cube.value, ctx.cube.owner_code)
    if args.cube and ctx.dice is None and cube[1] < 0:
        raise common.UsageError("the side on roll cannot double (the opponent owns the cube): nothing to roll out")
    if args.ray is not None:
        distributed.connect_ray(args.ray)  # an unreachable address fails now, before the model is loaded
    bot = common.load_bot(args)
    evaluator: Any = bot.evaluator
    if args.filter:
        from bgbot.evaluation import prune

        move_filter = prune.filter_for(bot.path) if bot.path else None
        if move_filter is None:
            raise common.UsageError(f"--filter: the model {bot.path} has no move filter of its own (prune/<name>.pt)")
        evaluator = prune.PrunedEvaluator(evaluator, move_filter)
    spec = evaluator  # the evaluator itself travels to the workers (a Ray cluster's machines need no model file)
    if ctx.dice is not None:
        cands = ro.candidates(evaluator, ctx.position, ctx.dice, args.play, args.candidates)
    else:
        cands = [ro.Candidate("(position)", ctx.position)]
    n_starts = 2 if (args.cube and ctx.dice is None) else len(cands)
    bar, progress = _progress(args.progress and not args.json, n_starts, settings)
    t0 = time.perf_counter()
    res = None
    cube_result = None
    interrupted: ro.RolloutInterrupted | None = None
    with distributed.interrupt_signals():  # Ctrl-C, SIGTERM: stop the workers, keep the finished trials
        try:
            if ctx.dice is not None:
                ro.rollout_plays(
                    spec, cands, settings, workers=args.workers, ray=args.ray, progress=progress, cube=cube
                )
                res = np.array([c.estimate.results for c in cands if c.estimate is not None])
            elif args.cube:
                cube_result = ro.cube_rollout(spec, ctx.position, settings, cube, args.workers, args.ray, progress)
                res = np.zeros((2, settings.trials, 0))
            else:
                res = ro._run(
                    spec, ctx.position[None], np.ones(1, dtype=bool), settings, args.workers, args.ray, progress
                )
        except ro.RolloutInterrupted as e:
            interrupted = e
            res = e.results
        finally:
            if bar is not None:
                bar.close()
    elapsed = time.perf_counter() - t0
    done = res.shape[1]
    if interrupted is not None and done < ro.MIN_TRIALS:
        print(
            f"error: interrupted ({signal.Signals(interrupted.signum).name}) after {done} of {settings.trials} "
            "trials: too few for an estimate",
            file=sys.stderr,
        )
        return interrupted.exit_status
    out: dict = {
        "position_id": ctx.position_id,
        "dice": list(ctx.dice) if ctx.dice is not None else None,
        "settings": settings.to_json(),
    }
    if ctx.dice is not None:
        for c, r in zip(cands, res):
            c.estimate = ro.Estimate.of(r)
        out["plays"] = ro.rank_candidates(cands)
    elif args.cube:
        out["cube"] = cube_result if cube_result is not None else ro.cube_result(res, cube[1], settings.jacoby)
        if ctx.double_offered:  # the answer is the taker's, as bgbot cube gives it while a double awaits it
            out["cube"], out["double_offered"] = ro.taker_answer(out["cube"], ctx.match.beavers), True
    else:
        out["position"] = ro.estimate_json(ro.Estimate.of(res[0]))
    out["elapsed_s"] = round(elapsed, 3)
    out["trials_per_s"] = round(done * n_starts / max(elapsed, 1e-9), 2)
    out["workers"] = "ray" if args.ray else args.workers
    out["trials_done"] = int(done)
    out["se_excludes_truncation_bias"] = ro.se_excludes_truncation_bias(
        settings, np.stack([c.afterstate for c in cands])
    )
    # a rollout is of cubeless money equities: a position's match score is shown, and said to be ignored
    out["match_score_ignored"] = not ctx.match.is_money
    if not ctx.match.is_money:
        out["match"] = cube_lib.match_json(ctx.match)
    out["complete"] = interrupted is None
    if interrupted is not None:
        out["interrupted"] = signal.Signals(interrupted.signum).name
    if args.json:
        common.print_json(out)
    else:
        print_table(out)
    if interrupted is not None:
        print(
            f"interrupted ({out['interrupted']}) after {done} of {settings.trials} trials: the results above are "
            f"those of the {done} trials finished",
            file=sys.stderr,
        )
        return interrupted.exit_status
    return 0


def _progress(enabled: bool, n_cands: int, settings):
    """A tqdm bar over trials with the running estimate (first candidate's equity) and its standard error."""
    if not enabled:
        return None, None
    from bgbot.progress import progress_bar
    from bgbot.rules.outcomes import equity

    bar = progress_bar(total=settings.trials * n_cands, unit="trial", leave=False, dynamic_ncols=True)
    seen: list[np.ndarray] = []

    def progress(result) -> None:
        _, r = result  # (K, T, 5): a block of candidates
        if r.shape[0] != n_cands:  # more candidates than one work unit holds: no running estimate
            bar.update(r.shape[0] * r.shape[1])
            return
        seen.append(r[..., 5] if r.shape[2] > 5 else equity(r[..., :5]))  # (K, T) the ranking value
        eq = np.concatenate(seen, axis=1)
        means = eq.mean(axis=1)
        best = int(np.argmax(means))
        se = eq[best].std(ddof=1) / np.sqrt(eq.shape[1]) if eq.shape[1] > 1 else float("nan")
        bar.set_postfix_str(f"best {figure(means[best], '+.4f')} ± {se:.4f}")
        bar.update(r.shape[0] * r.shape[1])

    return bar, progress


def print_table(out: dict) -> None:
    s = out["settings"]
    horizon = f"{s['truncate']} {'ply' if s['truncate'] == 1 else 'plies'}"
    trials = f"{s['trials']} trials"
    if not out.get("complete", True):  # the trials finished, not those asked for
        trials = f"{out['trials_done']} of {s['trials']} trials (interrupted, {out['interrupted']})"
    how = (
        f"{trials}, {s['plies']}-ply, seed {s['seed']}, "
        f"{'variance reduction' if s['variance_reduction'] else 'no variance reduction'}, "
        f"{'truncated at ' + horizon if s['truncate'] else 'no truncation'}, "
        f"{'cubeful (money)' if s['cube'] else 'cubeless'}"
    )
    truncated = (
        f"  (± SE: the trials' noise only, not the bias of the model's valuation where they stop, after {horizon})"
        if out.get("se_excludes_truncation_bias")
        else None
    )
    ignored = None
    if out.get("match_score_ignored"):
        m = out["match"]
        ignored = (
            f"  Match score {m['score'][0]}-{m['score'][1]} to {m['length']} (side on roll first) ignored: cubeless "
            "money equities, ranked as in money play"
        )
    notes = [line for line in (ignored, truncated) if line]

    def header(title: str) -> None:
        print(f"{title}; {how}")
        for line in notes:
            print(line)

    if "cube" in out:
        c = out["cube"]
        header(f"Cube rollout of Position ID {out['position_id']}")
        nd, dt = c["no_double"], c["double_take"]
        print(f"  No double     {figure(nd['cubeful_equity'], '+8.4f')} ± {nd['cubeful_equity_se']:.4f}")
        print(f"  Double/Take   {figure(dt['cubeful_equity'], '+8.4f')} ± {dt['cubeful_equity_se']:.4f}")
        print(f"  Double/Pass   {figure(c['double_pass'], '+8.4f')}")
        print(
            f"  DT - ND       {figure(c['double_take_minus_no_double'], '+8.4f')} ± {c['double_take_minus_no_double_se']:.4f}"
        )
        if out.get("double_offered"):
            t = c["taker"]
            print(f"  Doubler's proper action: {c['doubler_action']}")
            print(
                f"  A double awaits the answer. Taker: take {figure(t['take'], '+.4f')}, pass "
                f"{figure(t['pass'], '+.4f')} (equity)"
            )
        print(f"  Proper cube action: {c['action']}")
        if c.get("significance_note"):
            sig = c["significance_note"]
        else:
            sig = f"{'significant' if c['significant'] else 'NOT significant'} at 95% after {nd['trials']} trials"
        print(
            f"    ({sig}: double - no double {figure(c['double_minus_no_double'], '+.4f')} "
            f"± {c['double_minus_no_double_se']:.4f}, take - pass {figure(c['take_minus_pass'], '+.4f')} "
            f"± {c['take_minus_pass_se']:.4f})"
        )
        q = nd["probabilities"]
        print(
            "  Cubeless (no double): "
            + " ".join(f"{k} {v:.4f}" for k, v in q.items())
            + f"  equity {figure(nd['equity'], '+.4f')}"
        )
        return
    if out["dice"] is None:
        e = out["position"]
        q, se = e["probabilities"], e["probabilities_se"]
        header(f"Rollout of Position ID {out['position_id']} before the roll")
        print(f"{'':8}{'Win':>8} {'W(g)':>8} {'W(bg)':>8} {'L(g)':>8} {'L(bg)':>8}  {'Equity':>8}")
        print(f"{'':8}" + " ".join(f"{v:8.4f}" for v in q.values()) + f"  {figure(e['equity'], '+8.4f')}")
        print(f"{'± SE':8}" + " ".join(f"{v:8.4f}" for v in se.values()) + f"  {e['equity_se']:8.4f}")
        return
    plays = out["plays"]
    header(f"Rollout of Position ID {out['position_id']}, dice {common.format_dice(out['dice'])}")
    width = max(4, max(len(p["play"]) for p in plays))
    print(
        f"{'':5} {'Play':<{width}}  {'Equity':>8} {'± SE':>7}  {'Win':>6} {'W(g)':>6} {'W(bg)':>6} "
        f"{'L(g)':>6} {'L(bg)':>6}  {'Diff':>8} {'± SE':>7}"
    )
    cubeful = "cubeful_equity" in plays[0]
    if cubeful:
        print("      (Equity columns: cubeful money equity; cubeless equity in --json)")
    for p in plays:
        q = p["probabilities"]
        diff = "" if p["rank"] == 1 else f"  {figure(p['difference'], '+8.4f')} {p['difference_se']:7.4f}"
        mark = " *" if p["significant"] else ""
        eq, se = (p["cubeful_equity"], p["cubeful_equity_se"]) if cubeful else (p["equity"], p["equity_se"])
        print(
            f"{p['rank']:4d}. {p['play']:<{width}}  {figure(eq, '+8.4f')} {se:7.4f}  "
            + " ".join(f"{v:6.3f}" for v in q.values())
            + diff
            + mark
        )
    if len(plays) > 1 and plays[0].get("significance_note"):
        print(f"Differences not judged: {plays[0]['significance_note']}")
    elif any(p["significant"] for p in plays):
        print("* significantly worse than the best play (95%, paired over trials with the same dice)")
    elif len(plays) > 1:
        print("No play significantly worse than the best (95%, paired over trials with the same dice)")
