"""Checkpoint benchmarks for training runs, the progress plot, and the promotion gate for ``models/``.

All three use :func:`bgbot.arena.tournament.run` (duplicate dice, 95% CI over pairs).
"""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import torch

from bgbot import files
from bgbot.arena import tournament
from bgbot.arena.players import NetPlayer, Player
from bgbot.errors import BgbotError, is_int
from bgbot.formats import matfile

GATE_SECTION = "## Gate decisions"
MIN_GATE_GAMES = 200
"""Fewest games the gate decides on: below this the t-interval over 100 duplicate pairs is too wide to promote on,
and the normal approximation behind it is not to be trusted (a 4-game run showed CI [+1.000, +1.000])."""
EXIT_ACCEPTED, EXIT_REJECTED = 0, 1
"""``bgbot gate`` exit status: 0 promoted, 1 rejected (2: an error, as every command)."""


class GateError(BgbotError):
    """A gate that cannot run: a missing candidate or current model, or a promotion that would overwrite a
    different file in ``models/``."""


def _player_spec(candidate, plies: int):
    """A checkpoint path -> ``"PATH:PLY"``; an evaluator -> a :class:`NetPlayer`; a :class:`Player` as is."""
    if isinstance(candidate, Player):
        return candidate
    if isinstance(candidate, (str, Path)):
        return f"{candidate}:{plies}"
    return NetPlayer(candidate, plies, name="candidate")


def benchmark(
    candidate,
    opponent: str = "pubeval",
    games: int = 2000,
    seed: int = 0,
    workers: int = 1,
    plies: int = 0,
    cube: bool = False,
) -> dict:
    """Benchmark a checkpoint (path) or a position evaluator against ``opponent`` with duplicate dice.

    Args:
        candidate: a checkpoint path, a :class:`bgbot.evaluation.evaluator.PositionEvaluator` (e.g.
            ``bgbot.evaluation.specialists.evaluator_for(net)``; pickled to the workers when ``workers > 1``) or a
            :class:`Player`.
        opponent: a player spec (``pubeval``, ``gnubg:0``, ``models/x.pt``, ...).
        games: even, >= 2. seed: the dice. workers: processes. plies: the candidate's lookahead.
        cube: cubeful money games (Jacoby on; each side's cube decisions from its own probabilities,
            :mod:`bgbot.arena.cubeful`) instead of cubeless ones.

    Returns:
        ``{"ppg", "ci_low", "ci_high", "ci_half_width", "stderr", "games", "pairs", "win_rate", "gammon_rate",
        "backgammon_rate", "opponent_gammon_rate", "opponent_backgammon_rate", "opponent", "seed", "games_per_s"}``
        -- points per game of the candidate (money, cubeless unless ``cube``), rates as fractions of all games.
    """
    r = tournament.run(
        [_player_spec(candidate, plies), opponent],
        tournament.TournamentSettings(games, seed=seed, workers=workers, cube=cube),
    )
    row = r["pairings"][0]
    return {k: row[k] for k in ("ppg", "ci_low", "ci_high", "ci_half_width", "stderr", "games", "pairs")} | {
        "win_rate": row["stats_a"]["win_rate"],
        "gammon_rate": row["stats_a"]["gammon_rate"],
        "backgammon_rate": row["stats_a"]["backgammon_rate"],
        "opponent_gammon_rate": row["stats_b"]["gammon_rate"],
        "opponent_backgammon_rate": row["stats_b"]["backgammon_rate"],
        "opponent": opponent,
        "seed": seed,
        "games_per_s": r["games_per_s"],
    }


def plot_progress(records: list[dict], path: str | Path, opponent: str = "pubeval") -> Path:
    """Plot ppg against ``opponent`` with 95% CI bars over games trained and save it (PNG, matplotlib Agg).

    Args:
        records: dicts with ``games_trained``, ``ppg``, ``ci_low``, ``ci_high`` (e.g. :func:`benchmark` results with
            ``games_trained`` added), in any order.
        path: the image file to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recs = sorted(records, key=lambda r: r["games_trained"])
    x = [r["games_trained"] for r in recs]
    y = [r["ppg"] for r in recs]
    err = [[r["ppg"] - r["ci_low"] for r in recs], [r["ci_high"] - r["ppg"] for r in recs]]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(x, y, yerr=err, fmt="o-", capsize=3, label=f"ppg vs {opponent} (95% CI)")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("games trained")
    ax.set_ylabel("points per game")
    ax.set_title(f"Benchmark against {opponent}")
    ax.legend(loc="lower right")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def accepts(result: dict) -> bool:
    """The gate's rule, for :func:`gate` and the training stages' gate: a candidate is accepted when the lower end of
    the 95% interval of its ppg against the current model is above 0 (``result``: :func:`benchmark`'s, or a
    tournament's pairing row)."""
    return bool(result["ci_low"] > 0)


def gate(
    candidate: str | Path,
    against: str | Path,
    games: int,
    seed: int = 0,
    workers: int = 1,
    models_dir: str | Path | None = None,
    plies: int = 0,
) -> dict:
    """Promote ``candidate`` into ``models_dir`` only if it beats ``against`` significantly (95% CI lower bound > 0).

    Every decision, accepted or rejected, is appended to ``models_dir/README.md`` under "## Gate decisions" (the
    section is created when missing).

    Args:
        candidate, against: checkpoint paths. games, seed, workers: as :class:`bgbot.arena.tournament.TournamentSettings`.
        models_dir: where the model goes (default: ``against``'s directory). plies: both players' lookahead.

    Returns:
        ``{"accepted": bool, "candidate", "against", "promoted_to" (path or None), "ppg", "ci_low", "ci_high",
        "games", "seed", "date"}``.

    The promoted file is the candidate without its optimiser state (:func:`strip_optimizer`: a model to play with,
    a third of the size); the candidate keeps it, to resume training from.

    Raises:
        GateError: fewer than :data:`MIN_GATE_GAMES` games, a missing checkpoint, or a file with other weights
            already at the promotion path.
    """
    if not is_int(games) or games < MIN_GATE_GAMES:
        raise GateError(
            f"the gate decides on at least {MIN_GATE_GAMES} games (a smaller sample cannot show a real edge), "
            f"got {games!r}"
        )
    candidate, against = Path(candidate), Path(against)
    for p in (candidate, against):
        if not p.is_file():
            raise GateError(f"no checkpoint file at {str(p)!r}")
    models = Path(models_dir) if models_dir is not None else against.parent
    settings = tournament.TournamentSettings(games, seed=seed, workers=workers)
    row = tournament.run([f"{candidate}:{plies}", f"{against}:{plies}"], settings)["pairings"][0]
    accepted = accepts(row)
    target = models / candidate.name
    promoted = None
    if accepted:
        if target.exists() and target.resolve() != candidate.resolve() and not same_weights(target, candidate):
            raise GateError(f"{str(target)!r} exists and differs from the candidate {str(candidate)!r}; rename one")
        if target.resolve() != candidate.resolve():
            models.mkdir(parents=True, exist_ok=True)
            strip_optimizer(candidate, target)
        promoted = str(target)
    decision = {
        "accepted": accepted,
        "candidate": str(candidate),
        "against": str(against),
        "promoted_to": promoted,
        "ppg": row["ppg"],
        "ci_low": row["ci_low"],
        "ci_high": row["ci_high"],
        "games": games,
        "seed": seed,
        "plies": plies,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    record_decision(models / "README.md", decision)
    return decision


def record_decision(readme: str | Path, decision: dict) -> None:
    """Append one gate decision line to ``readme``, creating the file and the "## Gate decisions" section if missing."""
    readme = Path(readme)
    text = readme.read_text() if readme.exists() else "# Models\n"
    if GATE_SECTION not in text:
        text = text.rstrip("\n") + f"\n\n{GATE_SECTION}\n\n"
    start = text.index(GATE_SECTION) + len(GATE_SECTION)
    nxt = text.find("\n## ", start)
    head, tail = (text, "") if nxt < 0 else (text[:nxt], text[nxt:])
    head = head.rstrip("\n") + "\n\n" if head.rstrip("\n").endswith(GATE_SECTION) else head.rstrip("\n") + "\n"
    verdict = "ACCEPTED" if decision["accepted"] else "rejected"
    half = (decision["ci_high"] - decision["ci_low"]) / 2
    line = (
        f"- {decision['date']}: {verdict} `{decision['candidate']}` against `{decision['against']}`: "
        f"{decision['ppg']:+.3f} ± {half:.3f} ppg "
        f"(95% CI [{decision['ci_low']:+.3f}, {decision['ci_high']:+.3f}]), "
        f"{decision['games']} games, seed {decision['seed']}, {decision.get('plies', 0)}-ply"
        + (f"; promoted to `{decision['promoted_to']}`" if decision["promoted_to"] else "")
        + "\n"
    )
    readme.parent.mkdir(parents=True, exist_ok=True)
    matfile.write_atomic(readme, head + line + tail)


def _load_payload(path: str | Path) -> dict:
    try:
        payload = torch.load(Path(path), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a damaged file
        raise GateError(f"cannot read the checkpoint {str(path)!r}: {e}") from e
    if not isinstance(payload, dict) or "state_dict" not in payload:
        raise GateError(f"{str(path)!r} is not a bgbot checkpoint")
    return payload


def same_weights(a: str | Path, b: str | Path) -> bool:
    """Whether two checkpoints hold bit-identical network weights (whatever their optimiser state)."""
    sa, sb = _load_payload(a)["state_dict"], _load_payload(b)["state_dict"]
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def strip_optimizer(src: str | Path, dst: str | Path) -> Path:
    """Write checkpoint ``src`` to ``dst`` (atomically) without its optimiser state; weights and metadata unchanged.

    Raises:
        GateError: ``src`` is not a readable bgbot checkpoint. OSError: ``dst`` cannot be written.
    """
    payload = _load_payload(src)
    payload["optimizer_state"] = None
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    return files.write_atomic(dst, buffer.getvalue())
