"""Checkpoint benchmarks for training runs, the progress plot, and the promotion gate for ``models/``.

All three use :func:`bgbot.arena.tournament.run` (duplicate dice, 95% CI over pairs). The gate may also judge the
cube: cubeful games (``cube``), and the money cube decisions on held-out long rollouts (:func:`cube_check`, the record
:class:`CubeGate`, the method :mod:`bgbot.arena.cubegate`), shared with ``python -m training gate``.

**Stopping.** Games stopped early (SIGINT or SIGTERM under :func:`bgbot.arena.distributed.interrupt_signals`, a
failing player or worker) raise :class:`GamesStopped`, which carries :func:`benchmark`'s result over the whole
duplicate pairs finished: a partial result that judges nothing (``bgbot gate`` and ``python -m training gate`` print
it, promote nothing and write no record).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import signal
from pathlib import Path

import numpy as np
import torch

from bgbot import files
from bgbot.arena import cubegate, distributed, tournament
from bgbot.arena.players import NetPlayer, Player
from bgbot.errors import BgbotError, duplicate_path, is_int
from bgbot.formats import matfile
from bgbot.formats.figures import figure
from bgbot.formats.store import reference_positions

GATE_SECTION = "## Gate decisions"
MIN_GATE_GAMES = 200
"""Fewest games the gate decides on: below this the t-interval over 100 duplicate pairs is too wide to promote on,
and the normal approximation behind it is not to be trusted (a 4-game run showed CI [+1.000, +1.000])."""
EXIT_ACCEPTED, EXIT_REJECTED = 0, 1
"""``bgbot gate`` exit status: 0 promoted, 1 rejected (2: an error, as every command)."""


class GateError(BgbotError):
    """A gate that cannot run: a missing candidate or current model, or a promotion that would overwrite a
    different file in ``models/``."""


class GamesStopped(BgbotError):
    """The games of :func:`benchmark` (of a gate) stopped before all were played: SIGINT or SIGTERM (under
    :func:`bgbot.arena.distributed.interrupt_signals`), or a failing player or worker.

    Attributes:
        partial: :func:`benchmark`'s result over the whole duplicate pairs finished (its ``games`` those played), or
            None when too few finished for an estimate. Partial: it judges nothing.
        games: the games asked for. games_done: the games of the whole duplicate pairs finished.
        cause: the :class:`bgbot.arena.distributed.Interrupted` or the error that stopped them.
        signal: the signal's name (``"SIGINT"``, ``"SIGTERM"``), or None when an error stopped them.
    """

    def __init__(self, cause: BaseException, games: int, games_done: int, partial: dict | None) -> None:
        self.cause, self.games, self.games_done, self.partial = cause, games, games_done, partial
        self.signal = signal.Signals(cause.signum).name if isinstance(cause, distributed.Interrupted) else None
        why = f"interrupted ({self.signal})" if self.signal else f"stopped ({cause})"
        super().__init__(f"{why} after {games_done} of {games} games")

    @property
    def exit_status(self) -> int:
        """128 + the signal's number when interrupted (130 SIGINT, 143 SIGTERM), else 2 (an error)."""
        return self.cause.exit_status if isinstance(self.cause, distributed.Interrupted) else 2


@dataclasses.dataclass(frozen=True)
class CubeErrors:
    """One model's cube errors of one kind against the referee.

    Attributes:
        decisions: how many decisions of the kind the reference holds.
        mean_millipoints: the model's mean error a decision, in millipoints (None: no decision).
    """

    decisions: int
    mean_millipoints: float | None

    @classmethod
    def of(cls, errors: np.ndarray) -> CubeErrors:
        """From :func:`bgbot.arena.cubegate.decision_errors`' ``(P,)`` float64 errors of one kind (NaN: none)."""
        e = errors[~np.isnan(errors)]
        return cls(len(e), float(e.mean()) if len(e) else None)


@dataclasses.dataclass(frozen=True)
class PairedDifference:
    """The candidate's error minus the incumbent's, position by position, in millipoints.

    Attributes:
        mean: the mean difference (None: no decision). ci_low, ci_high: its 95% interval (None: under two decisions).
        not_worse: whether the data do not show the candidate worse (the interval's lower end at most 0).
    """

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    not_worse: bool


@dataclasses.dataclass(frozen=True)
class CubeGate:
    """The cube check of a gate: two models' money cube decisions judged on held-out long rollouts, paired
    (:mod:`bgbot.arena.cubegate`). ``to_json()`` is the ``"cube_check"`` of ``bgbot gate --json`` and the ``"cube"`` of
    ``python -m training gate``'s record.

    Attributes:
        reference: the campaign stores of the long rollouts.
        positions: the positions they hold.
        candidate, against: each model's errors by kind (``"double"``, ``"take"``).
        diff: the paired difference by kind.
    """

    reference: tuple[str, ...]
    positions: int
    candidate: dict[str, CubeErrors]
    against: dict[str, CubeErrors]
    diff: dict[str, PairedDifference]

    @property
    def not_worse(self) -> bool:
        """Whether the candidate is not worse at every kind of decision: the cube half of the gate's verdict."""
        return all(d.not_worse for d in self.diff.values())

    def to_json(self) -> dict:
        """The record as JSON-ready dicts, with ``not_worse``."""
        return dataclasses.asdict(self) | {"reference": list(self.reference), "not_worse": self.not_worse}


def cube_check(candidate: str | Path, against: str | Path, stores: list[str]) -> CubeGate:
    """Judge the cube decisions of checkpoint ``candidate`` against checkpoint ``against`` on the held-out long
    rollouts of the campaign ``stores``, each model reading its cube nets (:func:`bgbot.evaluation.evaluator.for_cube`)
    at 0-ply.

    Raises:
        GateError: a missing checkpoint; fewer than :data:`bgbot.arena.cubegate.MIN_DECISIONS` decisions of a kind.
        bgbot.formats.store.StoreError: a store that is not one, or not a held-out cube reference
            (:func:`bgbot.arena.cubegate.check_reference`), a torn or foreign part, no finished rollouts, a store
            given twice. bgbot.evaluation.checkpoint.CheckpointError: an unreadable checkpoint.
    """
    from bgbot.evaluation import checkpoint
    from bgbot.evaluation.evaluator import for_cube, position_probabilities
    from bgbot.evaluation.specialists import evaluator_for

    for path in (candidate, against):
        if not Path(path).is_file():
            raise GateError(f"the cube check needs checkpoints: no file at {str(path)!r}")
    for store in stores:
        cubegate.check_reference(store)
    pos, ref = reference_positions(stores)
    errors = {}
    for who, path in (("candidate", candidate), ("against", against)):
        evaluator = for_cube(evaluator_for(checkpoint.load(path)[0]))
        errors[who] = cubegate.decision_errors(position_probabilities(evaluator, pos).astype(np.float64), pos, ref)
    for kind in cubegate.KINDS:
        n = int((~np.isnan(errors["candidate"][kind])).sum())
        if n < cubegate.MIN_DECISIONS:
            raise GateError(
                f"the held-out rollouts in {stores!r} hold {n} {kind} decisions, too few to judge the cube "
                f"(at least {cubegate.MIN_DECISIONS}): finish or add a reference store"
            )
    diff = {}
    for kind in cubegate.KINDS:
        mean, low, high = cubegate.paired(errors["candidate"][kind], errors["against"][kind])
        diff[kind] = PairedDifference(mean, low, high, bool(low is None or low <= 0))
    return CubeGate(
        reference=tuple(stores),
        positions=len(pos),
        candidate={k: CubeErrors.of(v) for k, v in errors["candidate"].items()},
        against={k: CubeErrors.of(v) for k, v in errors["against"].items()},
        diff=diff,
    )


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
        ``{"ppg", "ci_low", "ci_high", "ci_half_width", "stderr", "games", "pairs", "interval_reliable", "win_rate",
        "gammon_rate", "backgammon_rate", "opponent_gammon_rate", "opponent_backgammon_rate", "opponent", "seed",
        "games_per_s"}``
        -- points per game of the candidate (money, cubeless unless ``cube``), rates as fractions of all games.

    Raises:
        GamesStopped: the games stopped early (SIGINT or SIGTERM under
            :func:`bgbot.arena.distributed.interrupt_signals`, a failing player or worker), with the partial result.
    """
    r = _play(
        [_player_spec(candidate, plies), opponent],
        tournament.TournamentSettings(games, seed=seed, workers=workers, cube=cube),
    )
    return _result(r, opponent, seed)


def _play(players: list, settings: tournament.TournamentSettings) -> dict:
    """:func:`bgbot.arena.tournament.run` of the one pairing of ``players`` (candidate, opponent), the games of
    :func:`benchmark` and :func:`gate`.

    Raises:
        GamesStopped: the tournament stopped early (its partial result as :func:`benchmark`'s), or a signal arrived
            before the first game (loading the players).
    """
    try:
        return tournament.run(players, settings)
    except tournament.TournamentStopped as stop:
        done = stop.results
        partial = _result(done, str(players[1]), settings.seed) if done["pairings"] else None
        raise GamesStopped(stop.cause, settings.games, 2 * done["pairs_done"], partial) from None
    except distributed.Interrupted as e:
        raise GamesStopped(e, settings.games, 0, None) from None


def _result(r: dict, opponent: str, seed: int) -> dict:
    """:func:`benchmark`'s result from the tournament's results ``r`` of its one pairing."""
    row = r["pairings"][0]
    keys = ("ppg", "ci_low", "ci_high", "ci_half_width", "stderr", "games", "pairs", "interval_reliable")
    return {k: row[k] for k in keys} | {
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
    the 95% interval of its ppg against the current model is above 0, an interval over enough games to be reliable
    (:data:`bgbot.arena.stats.MIN_INTERVAL_GAMES`; ``result``: :func:`benchmark`'s, or a tournament's pairing row)."""
    return bool(result["ci_low"] > 0 and result.get("interval_reliable", True))


@dataclasses.dataclass(frozen=True)
class GateSettings:
    """How :func:`gate` judges a candidate.

    Attributes:
        games: at least :data:`MIN_GATE_GAMES`. seed, workers: as :class:`bgbot.arena.tournament.TournamentSettings`.
        plies: both players' lookahead.
        cube: cubeful money games (Jacoby on; each side doubling and taking from its own probabilities) instead of
            cubeless ones: the gate of a candidate that changes only the cube.
        cube_reference: campaign stores of held-out long rollouts (empty: no cube check, :func:`cube_check`); judged
            before any game.

    Raises:
        GateError: fewer than :data:`MIN_GATE_GAMES` games.
    """

    games: int
    seed: int = 0
    workers: int = 1
    plies: int = 0
    cube: bool = False
    cube_reference: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not is_int(self.games) or self.games < MIN_GATE_GAMES:
            raise GateError(
                f"the gate decides on at least {MIN_GATE_GAMES} games (a smaller sample cannot show a real edge), "
                f"got {self.games!r}"
            )


def gate(
    candidate: str | Path, against: str | Path, settings: GateSettings, models_dir: str | Path | None = None
) -> dict:
    """Promote ``candidate`` into ``models_dir`` only if it beats ``against`` significantly (95% CI lower bound > 0)
    and, with ``settings.cube_reference``, its cube decisions on held-out long rollouts are not worse
    (:func:`cube_check`).

    The decision is appended to the registry ``models_dir/README.md`` under "## Gate decisions" (the section is
    created when missing) when it concerns that folder: a candidate promoted into it, or any decision on a candidate
    that lies in it (``models/candidates/...``). A candidate from elsewhere that is not promoted (``/tmp/x.pt``) leaves
    the registry untouched (``"registry"`` None).

    Args:
        candidate, against: checkpoint paths. settings: :class:`GateSettings`.
        models_dir: where the model goes (default: ``against``'s directory).

    Returns:
        ``{"accepted": bool, "candidate", "against", "promoted_to" (path or None), "ppg", "ci_low", "ci_high",
        "games", "seed", "plies", "cube" (bool: cubeful games), "cube_check" (:meth:`CubeGate.to_json`, or None),
        "date", "registry" (the README.md the decision was appended to, or None)}``.

    The promoted file is the candidate without its optimiser state (:func:`strip_optimizer`: a model to play with,
    a third of the size); the candidate keeps it, to resume training from.

    Raises:
        GateError: a missing checkpoint; ``against`` the candidate itself (compared resolved); a file with other
            weights already at the promotion path; too few
            decisions in ``cube_reference`` (:func:`cube_check`); a registry path that is not a file (before any
            game) or cannot be written (the message says whether the candidate was promoted).
        GamesStopped: the games stopped early (as :func:`benchmark`'s): nothing promoted, nothing recorded.
        bgbot.formats.store.StoreError: a ``cube_reference`` that is not a readable campaign store.
    """
    games, seed, plies, cube = settings.games, settings.seed, settings.plies, settings.cube
    if duplicate_path((candidate, against)):
        raise GateError(
            f"--against {str(against)!r} is the candidate {str(candidate)!r}: a candidate cannot be gated against itself"
        )
    candidate, against = Path(candidate), Path(against)
    for p in (candidate, against):
        if not p.is_file():
            raise GateError(f"no checkpoint file at {str(p)!r}")
    models = Path(models_dir) if models_dir is not None else against.parent
    registry = models / "README.md"
    if registry.exists() and not registry.is_file():  # found before any game, not after a promotion
        raise GateError(f"the registry {str(registry)!r} is not a file: the gate records its decisions there")
    checked = cube_check(candidate, against, list(settings.cube_reference)) if settings.cube_reference else None
    games_settings = tournament.TournamentSettings(games, seed=seed, workers=settings.workers, cube=cube)
    row = _play([f"{candidate}:{plies}", f"{against}:{plies}"], games_settings)["pairings"][0]
    accepted = accepts(row) and (checked is None or checked.not_worse)
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
        "cube": cube,
        "cube_check": None if checked is None else checked.to_json(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "registry": None,
    }
    if promoted is not None or candidate.resolve().is_relative_to(models.resolve()):
        decision["registry"] = str(registry)
        try:
            record_decision(registry, decision)
        except OSError as err:
            done = f"promoted to {promoted!r}, but " if promoted is not None else ""
            raise GateError(f"{done}the decision could not be recorded in {str(registry)!r}: {err}") from None
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
        f"{figure(decision['ppg'], '+.3f')} ± {half:.3f} ppg "
        f"(95% CI [{figure(decision['ci_low'], '+.3f')}, {figure(decision['ci_high'], '+.3f')}]), "
        f"{decision['games']} games{' (cubeful)' if decision.get('cube') else ''}, seed {decision['seed']}, "
        f"{decision.get('plies', 0)}-ply"
        + cube_check_note(decision.get("cube_check"))
        + (f"; promoted to `{decision['promoted_to']}`" if decision["promoted_to"] else "")
        + "\n"
    )
    readme.parent.mkdir(parents=True, exist_ok=True)
    matfile.write_atomic(readme, head + line + tail)


def cube_check_note(check: dict | None) -> str:
    """The cube check's clause of a gate decision line and of ``bgbot gate``'s verdict: ``check`` is
    :meth:`CubeGate.to_json` (None: empty)."""
    if check is None:
        return ""
    parts = []
    for kind in cubegate.KINDS:
        d = check["diff"][kind]
        interval = "" if d["ci_low"] is None else f" [{figure(d['ci_low'], '+.1f')}, {figure(d['ci_high'], '+.1f')}]"
        mean = "n/a" if d["mean"] is None else f"{figure(d['mean'], '+.1f')}"
        parts.append(f"{kind} {mean}{interval} mp")
    verdict = "not worse" if check["not_worse"] else "WORSE"
    return f"; cube on {check['positions']} held-out rollouts: {', '.join(parts)} ({verdict})"


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
