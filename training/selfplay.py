"""Batched self-play and its TD(lambda) targets on afterstates.

Algorithm (TD-Gammon's, batched):

* ``G`` games advance together, one ply per :meth:`SelfPlay.step` by the arena's engine
  (:func:`bgbot.arena.engine.play_ply`, the same function tournaments use), both seats held by one greedy player
  (:class:`GreedyPlayer`). At each ply every game's side on roll (call it X) rolls; :func:`bgbot.rules.movegen.
  generate_plays` lists every afterstate of every game, the network evaluates them all in one call
  (:func:`bgbot.evaluation.evaluator.afterstate_probabilities`, which scores finished games exactly), and X takes the play of
  highest cubeless equity (greedy: the dice give enough exploration). A game's first play uses a non-double
  opening roll, as the rules have it. Finished games are replaced by new games from the starting position.
* The position before X rolls, ``s_t``, is exactly the afterstate the other side's last play produced (flipped so X is
  on roll), so a value of pre-roll positions *is* a value of afterstates. The one-step target of ``s_t`` is

      v_t = value of X's chosen afterstate, from X's side = flip(net(a_t))   (probabilities (w, wg, wbg, lg, lbg))

  where ``flip`` maps ``(w, wg, wbg, lg, lbg)`` to ``(1 - w, lg, lbg, wg, wbg)``: the net sees ``a_t`` with X's
  opponent on roll. When X's play ends the game, ``v_t`` is the actual result for X, who has won: ``w = 1``,
  ``wg = 1`` if the loser has no checker off, ``wbg = 1`` if in addition it has a checker on the bar or in X's home
  board, ``lg = lbg = 0`` (:func:`bgbot.rules.outcomes.terminal_probabilities`).
* TD(lambda), forward view, truncated to a window of ``H`` plies: the target of ``s_t`` is the lambda-return

      G_t = (1 - lambda) * v_t + lambda * flip(G_{t+1}),   G_t = v_t  if the game ended at ply t or t = t0 + H - 1

  (``flip`` again because ``s_{t+1}`` belongs to the other side). With ``lambda = 0`` this is TD(0): ``G_t = v_t``.
  The targets of a ply are known ``H - 1`` plies later; :class:`SelfPlay` keeps a ring buffer of the last ``H``
  plies of every game slot and hands out the positions whose targets have just become complete.
* The network is then fitted to the targets for all those positions in one optimiser step (mean squared error over
  the five outputs), as TD-Gammon does with one gradient step per position; values ``v_t`` are those computed
  when the ply was played.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bgbot.arena.engine import Table, play_ply
from bgbot.evaluation.evaluator import PositionEvaluator, best_plays
from bgbot.rules.outcomes import flip_probabilities

# The 30 ordered non-double rolls: an opening roll is one of them, uniformly (each side rolls one die, ties re-rolled).
_OPENING_ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7) if a != b], dtype=np.int8)


def roll_dice(rng: np.random.Generator, opening: np.ndarray) -> np.ndarray:
    """Dice ``(G, 2)`` int8 for ``G`` games; rows where ``opening`` ``(G,)`` bool is set get a non-double roll."""
    dice = rng.integers(1, 7, size=(len(opening), 2), dtype=np.int8)
    n_open = int(opening.sum())
    if n_open:
        dice[opening] = _OPENING_ROLLS[rng.integers(0, len(_OPENING_ROLLS), size=n_open)]
    return dice


def lambda_returns(values: np.ndarray, done: np.ndarray, td_lambda: float) -> np.ndarray:
    """Truncated lambda-return of the oldest ply in a window.

    Args:
        values: ``(H, G, 5)`` float32, ``v`` of plies ``t0 .. t0 + H - 1`` of each game slot, oldest first, each
            from the side that played that ply.
        done: ``(H, G)`` bool, the game ended with that ply (later plies of that slot belong to another game).
        td_lambda: in [0, 1).

    Returns:
        ``(G, 5)`` float32: ``G_{t0}`` from the side that played ply ``t0`` (see the module docstring).
    """
    ret = values[-1]
    for h in range(len(values) - 2, -1, -1):
        mixed = (1.0 - td_lambda) * values[h] + td_lambda * flip_probabilities(ret)
        ret = np.where(done[h][:, None], values[h], mixed)
    return ret.astype(np.float32)


class GreedyPlayer:
    """Self-play's checker play: the afterstate of highest cubeless equity under ``evaluator`` (terminal afterstates
    scored exactly); keeps the chosen afterstates' probabilities ``values`` ``(N, 5)`` float32 (mover's side) of its
    last :meth:`choose` call, the one-step TD targets."""

    def __init__(self, evaluator: PositionEvaluator) -> None:
        self.evaluator = evaluator
        self.values = np.zeros((0, 5), dtype=np.float32)

    def choose(self, positions: np.ndarray, dice: np.ndarray) -> np.ndarray:
        plays, chosen, probs = best_plays(self.evaluator, positions, dice)  # probs (M, 5) from the mover's side
        self.values = probs[chosen]
        return plays.afterstates[chosen]


Encoder = Callable[[np.ndarray], dict[str, np.ndarray]]
"""``encode(positions (N, 26) int8) -> {encoding version: (N, n_inputs) float32}``: the inputs a learner reads, row by
row (row ``i`` of each array depends on position ``i`` only)."""


class SelfPlay:
    """``G`` self-play games in flight, advanced one ply at a time by :meth:`step`.

    Args:
        games_in_flight: ``G``.
        rng: the source of all dice.
        td_lambda, horizon: see :func:`lambda_returns`; ``horizon`` 1 (or ``td_lambda`` 0) is TD(0).
        encode: if given, the positions :meth:`step` hands out come with their inputs (:attr:`inputs`), encoded
            ``horizon`` plies at a time: the window holds the positions of the next ``horizon - 1`` batches already,
            and one call over ``H * G`` rows costs far less than ``H`` calls over ``G`` (an encoding's many array
            operations have a fixed cost each). The same arrays as encoding each batch alone (row by row).

    ``positions`` ``(G, 26)`` (side on roll) and ``opening`` ``(G,)`` bool (the next ply is a game's first: a
    non-double roll) may be set between steps.
    """

    def __init__(
        self,
        games_in_flight: int,
        rng: np.random.Generator,
        td_lambda: float = 0.0,
        horizon: int = 1,
        encode: Encoder | None = None,
    ):
        g = games_in_flight
        self.rng = rng
        self.td_lambda = td_lambda
        self.horizon = 1 if td_lambda == 0.0 else horizon
        self.table = Table.create(g, seats=np.zeros((g, 2), dtype=np.int64))  # one player in both seats
        self.table.start(np.arange(g))
        self.opening = np.ones(g, dtype=bool)  # (G,) the next ply is a game's first
        self._states = np.zeros((self.horizon, g, 26), dtype=np.int8)  # ring buffer: pre-roll positions
        self._values = np.zeros((self.horizon, g, 5), dtype=np.float32)  # their one-step targets v_t
        self._done = np.zeros((self.horizon, g), dtype=bool)
        self._filled = 0
        self.encode = encode
        self._inputs: dict[str, np.ndarray] = {}  # encoding version -> (H, G, n_inputs) float32: the ring's inputs
        self._encoded = np.zeros(self.horizon, dtype=bool)  # slots of the ring whose inputs are current
        self.inputs: dict[str, np.ndarray] = {}
        """With ``encode``: the inputs ``(K, n_inputs)`` float32 of the positions the last :meth:`step` returned, by
        encoding version (views into a buffer, valid until the next step); empty without."""
        self.games_finished = 0
        self.results = np.zeros(3, dtype=np.int64)  # games ended as [single, gammon, backgammon]

    @property
    def positions(self) -> np.ndarray:
        """``(G, 26)`` int8 positions of the games in flight, side on roll."""
        return self.table.positions

    @positions.setter
    def positions(self, value: np.ndarray) -> None:
        self.table.positions[:] = value

    def _roll(self, table: Table, idx: np.ndarray) -> np.ndarray:
        return roll_dice(self.rng, self.opening[idx])

    def step(self, evaluator: PositionEvaluator) -> tuple[np.ndarray, np.ndarray]:
        """Play one ply in every game; return training pairs whose targets are complete.

        Returns:
            ``(positions, targets)``: ``(K, 26)`` int8 pre-roll positions (side on roll) and ``(K, 5)`` float32
            lambda-return targets from that side; ``K`` is ``G`` once the window is full, 0 before.
        """
        player = GreedyPlayer(evaluator)
        slot = self._filled % self.horizon
        self._states[slot] = self.table.positions
        self._encoded[slot] = False
        ply = play_ply(self.table, self._roll, (player,), max_plies=np.iinfo(np.int64).max)
        done = np.zeros(len(self.opening), dtype=bool)
        done[ply.ended] = True
        self._values[slot] = player.values
        self._done[slot] = done
        self._filled += 1

        n_done = len(ply.ended)
        if n_done:
            self.results += np.bincount(ply.kind - 1, minlength=3)
            self.games_finished += n_done
            self.table.start(ply.ended)
        self.opening = done

        if self._filled < self.horizon:
            self.inputs = {}
            return np.zeros((0, 26), dtype=np.int8), np.zeros((0, 5), dtype=np.float32)
        order = (np.arange(self.horizon) + self._filled) % self.horizon  # oldest first
        targets = lambda_returns(self._values[order], self._done[order], self.td_lambda)
        if self.encode is not None:
            self.inputs = self._inputs_of(int(order[0]))
        return self._states[order[0]].copy(), targets

    def _inputs_of(self, slot: int) -> dict[str, np.ndarray]:
        """The inputs of the ring's ``slot`` (window full): if not yet encoded, every slot not encoded is, in one call
        (the oldest is handed out now, the others in the next plies)."""
        assert self.encode is not None
        if not self._encoded[slot]:
            todo = np.flatnonzero(~self._encoded)
            g = self._states.shape[1]
            for version, x in self.encode(self._states[todo].reshape(-1, 26)).items():
                buf = self._inputs.get(version)
                if buf is None:
                    buf = self._inputs[version] = np.empty((self.horizon, g, x.shape[1]), dtype=np.float32)
                buf[todo] = x.reshape(len(todo), g, x.shape[1])
            self._encoded[todo] = True
        return {version: buf[slot] for version, buf in self._inputs.items()}
