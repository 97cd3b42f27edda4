"""The Python API: legal plays, ranked plays, evaluations and cube actions, as the command line gives them.

Public API::

    legal_plays(position, dice=None) -> list[LegalPlay]           # no model needed (bgbot.formats.plays)
    Bot.load(path=None) -> Bot                                    # default: the model shipped with bgbot
    Bot(net, meta=None, path=None)
    Bot.legal_plays(position, dice=None) -> list[LegalPlay]
    Bot.rank_plays(position, dice=None, cube=None, match=None, ply=0) -> list[RankedPlay]   # best first
    Bot.rank_contexts(contexts, ply=0) -> bgbot.arena.ranking.Ranking     # many requests at once, named
    Bot.evaluate(position, ply=0) -> Probabilities                # side on roll, the play nets
    Bot.evaluate_with_class(position, cube=False) -> (Probabilities, str)   # ... and the evaluator that answered
    Bot.cube_probabilities(position, ply=0) -> Probabilities      # what the cube decisions read (cube nets if any)
    Bot.has_cube_nets -> bool                                     # separate nets answer the cube (checkpoint format 3)
    Bot.cube_action(position_or_probabilities, cube=None, match=None, *, probabilities=None, efficiency=None)
        -> bgbot.cube.decision.CubeDecision
    Probabilities(win, win_gammon, win_backgammon, lose_gammon, lose_backgammon)
    moves_json(ranking, contexts) -> [dict];  move_json(ctx, ranked) -> dict;  cube_json(bot, ctx, ...) -> dict
    DEFAULT_MODEL                                                 # importlib.resources path of the shipped model
    ApiError(ValueError)

``position`` is a ``(26,)`` integer array from the side on roll (:mod:`bgbot.rules.board`: index 25 my bar, index 0 the
opponent's bar), or any POSITION text :func:`bgbot.formats.context.parse_position` reads: a GNUbg ID or XGID also gives the
cube, the match score and the dice, used unless ``cube``, ``match`` or ``dice`` are passed (dice that differ from the
text's are an error, as on the command line). ``dice`` is a pair ``(d1, d2)`` or text like ``"31"``
(:func:`bgbot.formats.context.parse_dice`).

>>> [p.play for p in legal_plays("4HPwATDgc/ABMA", "31")][:3]
['24/23 24/21', '24/20', '24/21 8/7']
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import numpy as np

from bgbot.arena import ranking
from bgbot.cube import decision as cube_lib
from bgbot.errors import BgbotError
from bgbot.evaluation import checkpoint, evaluator, search
from bgbot.evaluation.classes import CLASS_NAMES, classify_batch, cube_efficiency
from bgbot.evaluation.network import ValueNet, set_threads
from bgbot.evaluation.specialists import ClassNets, evaluator_for
from bgbot.formats import positionid
from bgbot.formats.context import Context, DiceSyntaxError
from bgbot.formats.plays import LegalPlay, as_context, as_position, legal_plays
from bgbot.rules.outcomes import equity, flip_probabilities
from bgbot.rules.state import CubeState, MatchState

__all__ = [
    "ApiError",
    "Bot",
    "DEFAULT_MODEL",
    "LegalPlay",
    "Probabilities",
    "RankedPlay",
    "legal_plays",
    "move_answer",
    "moves_json",
    "round_array",
]

DEFAULT_MODEL = resources.files("bgbot") / "data" / "default_model.pt"
"""The model shipped as package data (a Traversable; ``str()`` of it is a file path for a normal install)."""

PROBABILITY_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")

EVALUATORS = CLASS_NAMES + ("given",)
"""The fixed list of ``"evaluator"`` values (``bgbot move`` per play, ``bgbot cube`` per answer): the position classes
of :mod:`bgbot.evaluation.classes` -- ``over`` (exact: the game is over), ``bearoff-two-sided`` (exact: two-sided
database), ``bearoff-one-sided`` (exact 0-ply values from the one-sided database), ``race``, ``crashed``, ``contact``
(the network, outcome-constrained) -- and ``given`` (``bgbot cube --probabilities``: the caller's numbers)."""


class ApiError(BgbotError):
    """A request the API cannot answer (an unsupported search depth, neither a position nor probabilities, ...)."""


@dataclass(frozen=True)
class Probabilities:
    """Five cumulative outcome probabilities, GNU Backgammon's convention, for one side (win includes gammons,
    gammons include backgammons)."""

    win: float
    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float

    @classmethod
    def from_array(cls, p) -> Probabilities:
        """From a sequence or array of 5 values ``(w, wg, wbg, lg, lbg)``."""
        values = np.asarray(p, dtype=np.float64).reshape(5)
        return cls(*(float(v) for v in values))

    def to_array(self) -> np.ndarray:
        """``(5,)`` float64 ``(w, wg, wbg, lg, lbg)``."""
        return np.array([self.win, self.win_gammon, self.win_backgammon, self.lose_gammon, self.lose_backgammon])

    def to_dict(self, digits: int | None = None) -> dict[str, float]:
        """``{"win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"}``, rounded if ``digits``."""
        values = self.to_array()
        if digits is not None:
            values = np.round(values, digits)  # numpy's rounding, as round() of a numpy float64 gives (not Python's)
        return dict(zip(PROBABILITY_NAMES, values.tolist()))

    def flipped(self) -> Probabilities:
        """The same outcome seen by the other side: ``(1 - w, lg, lbg, wg, wbg)``."""
        return Probabilities.from_array(flip_probabilities(self.to_array()))

    @property
    def equity(self) -> float:
        """Cubeless money equity ``2w - 1 + wg - lg + wbg - lbg`` in points per game (cube 1)."""
        return float(equity(self.to_array()))


@dataclass(frozen=True, eq=False)
class RankedPlay(LegalPlay):
    """A legal play with its value for the side that makes it.

    Attributes:
        equity: cubeless money equity in points per game (cube 1), from the mover's side.
        probabilities: the mover's outcome probabilities after the play.
        mwc: the mover's match winning chance after the play (cubeful where the cube is alive); None for money.
        ply: the lookahead this play was valued at (with ``--ply N``, plays the move filter dropped keep 0).
        evaluator: what valued the position after the play, one of :data:`EVALUATORS` (its position class: exact for
            ``over`` and the two bear-off classes, the network with outcome constraints for the others; at N-ply the
            leaves of the search are valued the same way, each by its own class).
    """

    equity: float = 0.0
    probabilities: Probabilities | None = None
    mwc: float | None = None
    ply: int = 0
    evaluator: str = "contact"

    def to_json(self) -> dict:
        """``{"play", "position_id", "equity", "probabilities", "ply", "evaluator"}`` (+ ``"mwc"`` at a match
        score), 6 decimals."""
        if self.probabilities is None:  # the default exists only because LegalPlay's fields have defaults
            raise TypeError("a RankedPlay needs its probabilities")
        out = {
            **super().to_json(),
            "equity": round(self.equity, 6),
            "probabilities": self.probabilities.to_dict(6),
            "ply": self.ply,
            "evaluator": self.evaluator,
        }
        if self.mwc is not None:
            out["mwc"] = round(self.mwc, 6)
        return out


class Bot:
    """A value network ready to answer requests; see the module docstring."""

    def __init__(
        self, net: ValueNet | ClassNets, meta: checkpoint.CheckpointMeta | None = None, path: str | None = None
    ):
        self.net = net
        self.meta = meta
        self.path = path
        self.evaluator = evaluator_for(net)

    def __repr__(self) -> str:
        return f"Bot.load({self.path!r})"

    @classmethod
    def load(cls, path: str | Path | None = None, threads: int | None = 1) -> Bot:
        """Load a checkpoint (:func:`bgbot.evaluation.checkpoint.load`); ``None`` loads :data:`DEFAULT_MODEL`.

        ``threads``: torch's intra-op threads for inference (:func:`bgbot.evaluation.network.set_threads`; a process-
        wide torch setting). The evaluator's small batches run about 10x faster on one thread than on two competing
        ones (``bgbot move --ply 1``: 8 ms against 80 ms here); ``None`` leaves torch's setting as it is.

        Raises:
            bgbot.evaluation.checkpoint.CheckpointError: missing, corrupt or incompatible file.
        """
        if threads is not None:
            set_threads(threads)
        if path is None:
            with resources.as_file(DEFAULT_MODEL) as default:
                net, meta = checkpoint.load(default)
                return cls(net, meta, str(default))
        net, meta = checkpoint.load(path)
        return cls(net, meta, str(path))

    def legal_plays(self, position, dice=None) -> list[LegalPlay]:
        """:func:`legal_plays` (the model is not used)."""
        return legal_plays(position, dice)

    def evaluate(self, position, ply: int = 0) -> Probabilities:
        """The side on roll's cubeless probabilities before rolling (exact where the position's class allows:
        :mod:`bgbot.evaluation.evaluator`).

        ``ply`` 0 is the net's own evaluation; ``ply`` N >= 1 the N-ply lookahead of
        :func:`bgbot.evaluation.search.afterstate_values` (the position is an afterstate of the opponent's: the mean
        over the 21 rolls of my best reply valued at N-1 ply).

        Raises:
            bgbot.evaluation.search.SearchError: ``ply`` not a whole number 0 .. 2
                (:func:`bgbot.evaluation.search.check_ply`).
        """
        return _probabilities(self.evaluator, position, ply)

    def cube_probabilities(self, position, ply: int = 0) -> Probabilities:
        """:meth:`evaluate` by the model's cube nets where it has them (:func:`bgbot.evaluation.evaluator.for_cube`,
        a checkpoint of format 3): the probabilities its cube decisions read. Equal to :meth:`evaluate` for a model
        without cube nets. Raises as :meth:`evaluate`."""
        return _probabilities(evaluator.for_cube(self.evaluator), position, ply)

    @property
    def has_cube_nets(self) -> bool:
        """Whether separate nets answer this model's cube decisions (:meth:`cube_probabilities`)."""
        return evaluator.for_cube(self.evaluator) is not self.evaluator

    def evaluate_with_class(self, position, cube: bool = False) -> tuple[Probabilities, str]:
        """The 0-ply :meth:`evaluate` (:meth:`cube_probabilities` with ``cube``) and the evaluator that answered, one
        of :data:`EVALUATORS`."""
        pos = as_position(position)
        ev = evaluator.for_cube(self.evaluator) if cube else self.evaluator
        probs, codes = evaluator.classified_probabilities(ev, pos[None, :])
        return Probabilities.from_array(probs[0]), CLASS_NAMES[int(codes[0])]

    def rank_plays(
        self, position, dice=None, cube: CubeState | None = None, match: MatchState | None = None, ply: int = 0
    ) -> list[RankedPlay]:
        """Every legal play, best first, with its value for the mover: :func:`bgbot.arena.ranking.rank` of this one
        position.

        At 0 ply each resulting position gets the net's own evaluation (GNU Backgammon's 0-ply); at ``ply`` N >= 1 the
        cubeless N-ply lookahead of :mod:`bgbot.evaluation.search` with its move filter (plays the filter drops keep
        their 0-ply values and come after the searched ones). Plays rank by :func:`bgbot.cube.decision.play_values`, as
        tournament players do: money play by cubeless equity (a backgammon worth a gammon when
        ``match.backgammons`` is False); at a match score by the mover's match winning chance (cubeful with
        Janowski's model where the cube is alive, from the cubeless probabilities). Ties keep notation order at 0
        ply, the search's order at N ply (:attr:`bgbot.arena.ranking.Ranking.order`).

        Args:
            position, dice: see the module docstring.
            cube, match: seen from the side on roll; default: what POSITION text carries (a GNUbg ID or XGID), else
                a centred cube in money play.
            ply: search depth, 0, 1 or 2.

        Raises:
            bgbot.evaluation.search.SearchError: ``ply`` not a whole number 0 .. 2. bgbot.formats.context.ContextError,
                bgbot.rules.board.PositionError: bad input.
        """
        ply = search.check_ply(ply)
        ctx = as_context(position, dice)
        if ctx.dice is None:
            raise DiceSyntaxError(f"no dice given for {ctx.position_id!r}, and the position carries none")
        cube, match = cube or ctx.cube, match or ctx.match
        dice_rows = np.array([ctx.dice])
        found = ranking.rank(self.evaluator, ctx.position[None, :], dice_rows, int(ply), [(cube, match)], named=True)
        return ranked_plays(found, 0, match.is_money)

    def rank_contexts(self, contexts: list[Context], ply: int = 0) -> ranking.Ranking:
        """:func:`bgbot.arena.ranking.rank` of requests, named: each context's position, dice, cube and match.

        Raises:
            bgbot.evaluation.search.SearchError: ``ply`` not a whole number 0 .. 2. bgbot.formats.context.DiceSyntaxError:
                a context without dice.
        """
        ply = search.check_ply(ply)
        for ctx in contexts:
            if ctx.dice is None:
                raise DiceSyntaxError(f"no dice given for {ctx.position_id!r}, and the position carries none")
        positions = np.stack([ctx.position for ctx in contexts]) if contexts else np.zeros((0, 26), dtype=np.int8)
        dice = np.array([ctx.dice for ctx in contexts], dtype=np.int64).reshape(-1, 2)
        states = [(ctx.cube, ctx.match) for ctx in contexts]
        return ranking.rank(self.evaluator, positions, dice, int(ply), states, named=True)

    def cube_action(
        self,
        position=None,
        cube: CubeState | None = None,
        match: MatchState | None = None,
        *,
        probabilities=None,
        efficiency: float | None = None,
    ) -> cube_lib.CubeDecision:
        """The cube action of the side on roll before rolling (:func:`bgbot.cube.decision.decide`; for a position
        alone, :func:`bgbot.arena.ranking.decide_cubes` of this one position).

        In money play, a position of the two-sided bear-off class evaluated here (no ``probabilities`` or
        ``efficiency`` given) takes its action from the database's exact cubeful equities
        (:func:`bgbot.cube.decision.decide_from_money_equities`), as GNU Backgammon does; the decision's
        ``evaluator`` says what answered (:data:`EVALUATORS`).

        Args:
            position: the position (array or POSITION text), or instead its probabilities (5 values or
                :class:`Probabilities`).
            cube, match: seen from the side on roll; default: what POSITION text carries, else a centred cube in
                money play with the Jacoby rule on.
            probabilities: the side on roll's cubeless probabilities, instead of the net's evaluation of ``position``.
            efficiency: cube efficiency x; default :func:`bgbot.evaluation.classes.cube_efficiency` of ``position``, 0.68
                (contact) when only probabilities are given.

        Raises:
            ApiError: neither a position nor probabilities. bgbot.rules.outcomes.ProbabilityError, CubeStateError: bad input.
        """
        if isinstance(position, Probabilities) or (
            position is not None and not isinstance(position, str) and np.shape(position) == (5,)
        ):
            position, probabilities = None, position
        if position is None and probabilities is None:
            raise ApiError("a cube action needs a position or probabilities")
        ctx = None if position is None else as_context(position)
        pos = None if ctx is None else ctx.position
        if ctx is not None:
            cube, match = cube or ctx.cube, match or ctx.match
        cube, match = cube or CubeState(), match or MatchState()
        if probabilities is None and efficiency is None:
            assert pos is not None  # checked above: a position or probabilities
            return ranking.decide_cubes(self.evaluator, pos[None, :], [(cube, match)]).decisions[0]
        source = "given"
        if probabilities is None:
            assert pos is not None
            probs, source = self.evaluate_with_class(pos, cube=True)
            probabilities = probs.to_array()
        if isinstance(probabilities, Probabilities):
            probabilities = probabilities.to_array()
        if efficiency is None:
            efficiency = 0.68 if pos is None else cube_efficiency(pos)
        return replace(cube_lib.decide(probabilities, cube, match, efficiency), evaluator=source)


def _probabilities(ev: evaluator.PositionEvaluator, position, ply) -> Probabilities:
    """:meth:`Bot.evaluate` with the evaluator ``ev``."""
    ply = search.check_ply(ply)
    pos = as_position(position)
    if ply == 0:
        probs, _ = evaluator.classified_probabilities(ev, pos[None, :])
        return Probabilities.from_array(probs[0])
    theirs = search.afterstate_values(ev, pos[None, :], int(ply))  # (1, 5) opponent's view
    return Probabilities.from_array(flip_probabilities(theirs)[0])


def ranked_plays(found: ranking.Ranking, i: int, money: bool) -> list[RankedPlay]:
    """Position ``i`` of a :class:`bgbot.arena.ranking.Ranking` (made with ``named``) as :class:`RankedPlay` objects,
    best first; ``money`` False gives each its match winning chance (``mwc``)."""
    rows = found.rows(i)
    assert found.names is not None, "ranked_plays needs a ranking made with named=True"
    ids = positionid.encode_many(found.plays.afterstates[rows])
    return [
        RankedPlay(
            found.names[r],
            ids[k],
            found.plays.afterstates[r],
            float(found.equities[r]),
            Probabilities.from_array(found.probabilities[r]),
            None if money else float(found.values[r]),
            found.ply if found.searched[r] else 0,
            CLASS_NAMES[int(found.classes[r])],
        )
        for k, r in enumerate(rows.tolist())
    ]


def round_array(values, digits: int) -> np.ndarray:
    """``round(v, digits)`` of every value at once: ``(...)`` float -> ``(...)`` float64, equal to Python's ``round``.

    Python's ``round`` rounds the exact binary value half to even; ``np.round`` scales by ``10**digits`` first, a
    product that may itself be rounded. The two agree unless the scaled value lies within 1e-6 of a half (far more
    than the product's rounding error for values below 1e6): those few are rounded by Python's ``round``.
    """
    x = np.asarray(values, dtype=np.float64)
    scale = 10.0**digits
    y = x * scale
    out = np.rint(y) / scale
    near = np.abs(np.abs(y - np.floor(y)) - 0.5) < 1e-6
    if near.any():
        out[near] = [round(float(v), digits) for v in x[near]]
    return out


def move_json(ctx, ranked: list[RankedPlay]) -> dict:
    """The answer of ``bgbot move --json`` (and of the HTTP API's ``/v1/move``) for ranked plays, best first.

    ``{"position_id", "dice", "plays": [{"play", "position_id", "equity", "probabilities", "ply", "evaluator",
    "rank"[, "mwc", "emg"]}]}``; a match score (or backgammons counted as gammons) adds ``"cube"`` and ``"match"``.
    ``rank`` is the play's place among all
    legal plays (1 = best); ``emg`` (match score only) is GNU Backgammon's normalised equity of the play's match
    winning chance (its "Eq." at a match score).

    Args:
        ctx: the request's :class:`bgbot.formats.context.Context` (position, dice, cube, match).
        ranked: :meth:`Bot.rank_plays` of it.
    """
    return move_answer(ctx, [{**p.to_json(), "rank": i} for i, p in enumerate(ranked, 1)])


def move_answer(ctx, plays: list[dict]) -> dict:
    """:func:`move_json` from the plays' JSON already made (best first, with ``"rank"``; ``"mwc"`` at a match score).
    Adds ``"emg"`` to each play at a match score."""
    if not ctx.match.is_money:
        emg = cube_lib.normalised_equity([p["mwc"] for p in plays], ctx.cube, ctx.match)
        for p, e in zip(plays, emg):
            p["emg"] = round(float(e), 6)
    out: dict = {"position_id": ctx.position_id, "dice": list(ctx.dice), "plays": plays}
    if not ctx.match.is_money or not ctx.match.backgammons:
        out["cube"] = {"value": ctx.cube.value, "owner": ctx.cube.owner}
        out["match"] = cube_lib.match_json(ctx.match)
    return out


def moves_json(found: ranking.Ranking, contexts: list[Context]) -> list[dict]:
    """:func:`move_json` of every request of a ranking (:meth:`Bot.rank_contexts` of ``contexts``), built from its
    arrays at once (the equities rounded by :func:`round_array` as ``RankedPlay.to_json`` rounds them one by one)."""
    assert found.names is not None, "moves_json needs a ranking made with named=True"
    ids = positionid.encode_many(found.plays.afterstates)
    equities = round_array(found.equities, 6).tolist()
    values = round_array(found.values, 6).tolist()
    rounded = np.round(found.probabilities.astype(np.float64), 6).tolist()
    names = [CLASS_NAMES[c] for c in found.classes.tolist()]
    plies = np.where(found.searched, found.ply, 0).tolist()
    out = []
    for j, ctx in enumerate(contexts):
        plays = []
        for r, i in enumerate(found.rows(j).tolist(), 1):
            play = {
                "play": found.names[i],
                "position_id": ids[i],
                "equity": equities[i],
                "probabilities": dict(zip(PROBABILITY_NAMES, rounded[i])),
                "ply": plies[i],
                "evaluator": names[i],
            }
            if not ctx.match.is_money:
                play["mwc"] = values[i]
            play["rank"] = r
            plays.append(play)
        out.append(move_answer(ctx, plays))
    return out


def cube_json(bot: Bot | None, ctx, probabilities=None, ply: int = 0, cube_search: bool = False) -> dict:
    """The answer of ``bgbot cube --json`` (and of the HTTP API's ``/v1/cube``) for one position.

    :func:`bgbot.cube.decision.to_json` of the decision, with ``"position_id"`` first, ``"options"`` in GNU
    Backgammon's order (the proper action first, :func:`bgbot.cube.decision.options`) and ``"ply"``; at a match score
    ``"emg"``, the equities as GNU Backgammon's normalised equity; while a double awaits an answer,
    ``"double_offered": true``, ``"action"`` the taker's answer (Take, Pass or Beaver), ``"doubler_action"`` the
    doubler's proper action and ``"taker"`` the taker's values. ``"evaluator"`` says what answered (:data:`EVALUATORS`:
    the position's class, or ``given`` for given probabilities); in the two-sided bear-off class, money play, the
    action comes from the database's exact cubeful equities at any ``ply``. A model with separate cube nets
    (:meth:`Bot.has_cube_nets`) decides, and reports the probabilities of, its cube nets, with ``"cube_nets": true``.

    Args:
        bot: the model; may be None when ``probabilities`` are given.
        ctx: the request's :class:`bgbot.formats.context.Context`.
        probabilities: five cumulative probabilities of the side on roll to use instead of the model's, or None.
        ply: lookahead of the model's cubeless probabilities (the cube formula stays Janowski's).
        cube_search: decide by cubeful search at ``ply`` instead (:func:`bgbot.arena.cubesearch.decide_searched`:
            Janowski's cubeful values at the leaves, averaged over the rolls; ``"cube_search": true`` in the answer).

    Raises:
        bgbot.rules.outcomes.ProbabilityError: inconsistent ``probabilities``.
    """
    if probabilities is not None:
        efficiency = cube_efficiency(ctx.position)
        decision = replace(cube_lib.decide(probabilities, ctx.cube, ctx.match, efficiency), evaluator="given")
        ply = 0
    else:
        if bot is None:
            raise ApiError("a model is needed unless probabilities are given")
        ply = search.check_ply(ply)
        source = CLASS_NAMES[int(classify_batch(ctx.position[None, :])[0])]
        exact = source == "bearoff-two-sided" and ctx.match.is_money and evaluator.class_dispatch()
        if cube_search and not exact:
            from bgbot.arena import cubesearch

            probabilities = bot.cube_probabilities(ctx.position, ply=ply).to_array()
            decision = cubesearch.decide_searched(bot.evaluator, ctx.position, ctx.cube, ctx.match, ply)[0]
            decision = replace(decision, evaluator=source)
        else:
            found = ranking.decide_cubes(bot.evaluator, ctx.position[None, :], [(ctx.cube, ctx.match)], ply)
            probabilities, decision = found.probabilities[0], found.decisions[0]
    out = {"position_id": ctx.position_id, **cube_lib.to_json(decision, probabilities, ctx.cube, ctx.match)}
    emg = None
    if decision.unit == "mwc":
        keys = list(decision.equities)
        values = cube_lib.normalised_equity([decision.equities[k] for k in keys], ctx.cube, ctx.match)
        emg = {k: round(float(v), 6) for k, v in zip(keys, values)}
        out["emg"] = emg
    out["options"] = cube_lib.options(decision.equities, emg, decision.cube_available)
    out["ply"] = ply
    if cube_search:
        out["cube_search"] = True
    if bot is not None and bot.has_cube_nets and decision.evaluator != "given":
        out["cube_nets"] = True
    if ctx.double_offered:
        taker = cube_lib.take_answer(decision, ctx.match)
        out["double_offered"] = True
        out["doubler_action"] = out["action"]
        out["action"] = taker["action"]
        out["taker"] = taker
    return out
