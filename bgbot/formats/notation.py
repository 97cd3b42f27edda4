"""Play notation as GNU Backgammon writes it (``24/18 13/11``, ``bar/22*``, ``6/off``, ``8/5(2) 6/5(2)``), and
a forgiving parser that resolves what a user types to a legal play.

Points are written in the mover's numbering: 1..24, ``bar`` for the mover's bar (index 25 of a :mod:`bgbot.rules.board`
position) and ``off`` for borne off (index 0 of a step's destination). The rules for writing a play follow GNU
Backgammon's ``FormatMove`` (drawboard.c):

* the single-die steps are sorted by source point, highest first (ties: higher destination first);
* steps of one checker are joined: ``24/18 18/13`` becomes ``24/13``, but a point where it hit on the way stays
  written with a star: ``24/18*/13``;
* identical moves are written once with a count: ``8/5(2)``;
* a destination that held an opponent's blot gets a star, once per point: ``8/5*(2)``, ``6/5* 8/5``.

A play with no steps (no legal play: the dice are forfeited) is written :data:`NO_PLAY`, ``"(no play)"``;
GNU Backgammon writes an empty move there.
"""

from __future__ import annotations

import re

import numpy as np

from bgbot.errors import BgbotError
from bgbot.formats.positionid import encode
from bgbot.rules.board import BAR, Play, move_checker, play_step, validate
from bgbot.rules.movegen import Plays, generate_plays

__all__ = [
    "NO_PLAY",
    "PlaySyntaxError",
    "IllegalPlayError",
    "format_play",
    "format_steps",
    "format_no_play",
    "legal_steps",
    "parse_play",
    "play_sequence",
]

NO_PLAY = "(no play)"
"""How a forfeited turn (no legal play) is written; :func:`parse_play` also accepts ``""``, ``"no play"``,
``"cannot move"`` and ``"pass"`` for it."""

_NO_PLAY_SPELLINGS = {"", NO_PLAY, "no play", "cannot move", "pass"}
_COUNT_RE = re.compile(r"\((\d{1,3})\)", re.ASCII)  # ASCII digits, short: never a huge int()


class PlaySyntaxError(BgbotError):
    """Text that is not a play at all (unknown point names, a move without a destination, a bad count)."""


class IllegalPlayError(BgbotError):
    """A well-formed play that is not legal (or is ambiguous) in the given position with the given dice."""


def _point_name(index: int) -> str:
    """``25`` -> ``"bar"``, ``0`` -> ``"off"``, else the number."""
    return "bar" if index == BAR else "off" if index == 0 else str(index)


def format_no_play() -> str:
    """The notation of a forfeited turn: :data:`NO_PLAY`."""
    return NO_PLAY


def format_play(position: np.ndarray, play: Play) -> str:
    """GNU Backgammon's notation of ``play`` made from ``position``.

    Args:
        position: ``(26,)`` int8, the position BEFORE the play, from the mover's side (see :mod:`bgbot.rules.board`).
        play: a :class:`bgbot.rules.board.Play` of that position (only its ``steps`` are read).

    Returns:
        e.g. ``"24/18 13/11"``, ``"bar/22*"``, ``"6/off"``, ``"8/5(2) 6/5(2)"``, ``"24/18*/13"``; :data:`NO_PLAY`
        for a play without steps.

    >>> from bgbot.rules.board import starting_position
    >>> start = starting_position()
    >>> [format_play(start, p) for p in legal_steps(start, (6, 5))][:3]
    ['24/13', '24/18 13/8', '24/18 8/3']
    >>> '8/5 6/5' in [format_play(start, p) for p in legal_steps(start, (3, 1))]
    True
    """
    return format_steps(position, play.steps)


def format_steps(position: np.ndarray | list[int], steps: tuple[tuple[int, int], ...]) -> str:
    """GNU Backgammon's notation of the single-die checker ``steps`` ``((from, to), ...)`` played from ``position``
    (the board BEFORE the play, ``(26,)`` from the mover's side, or a list of 26 ints): :func:`format_play` of a
    play with those steps. The notation depends on the steps as a multiset, not on their order."""
    board = [int(x) for x in position]
    if not steps:
        return NO_PLAY
    # One path per step, sorted by source then destination, highest first.
    paths = [list(step) for step in sorted(steps, reverse=True)]
    hit_on_way: list[list[int]] = [[] for _ in paths]  # intermediate points where the checker hit
    alive = [True] * len(paths)
    for i in range(len(paths)):
        for j in range(i + 1, len(paths)):
            if alive[i] and alive[j] and paths[i][-1] == paths[j][0]:
                if board[paths[i][-1]] < 0:
                    hit_on_way[i].append(paths[i][-1])
                paths[i][-1] = paths[j][-1]
                alive[j] = False
    moves = [(p[0], *hit_on_way[i], p[-1]) for i, p in enumerate(paths) if alive[i]]
    counted: dict[tuple[int, ...], int] = {}
    for move in moves:
        counted[move] = counted.get(move, 0) + 1
    starred: set[int] = set()
    parts = []
    for move, count in counted.items():
        text = _point_name(move[0]) + "".join(f"/{_point_name(p)}*" for p in move[1:-1])
        starred.update(move[1:-1])
        dest = move[-1]
        text += "/" + _point_name(dest)
        if dest and board[dest] < 0 and dest not in starred:
            text += "*"
            starred.add(dest)
        parts.append(text + (f"({count})" if count > 1 else ""))
    return " ".join(parts)


def play_sequence(
    position: list[int], target: list[int], d1: int, d2: int
) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    """The first sequence of single-die steps GNU Backgammon's move search finds from ``position`` to ``target``.

    Args:
        position: the board before the play, 26 ints from the mover's side (:mod:`bgbot.rules.board`).
        target: minus the reversed afterstate, i.e. the board after a legal play, still from the mover's side.
        d1, d2: the dice as given (their order decides which sequence the search meets first).

    Returns:
        ``(key, steps)``: ``key`` orders plays as the search first finds them (smaller first) and ``steps`` are the
        ``(from, to)`` steps of that sequence (the notation depends only on them as a multiset, which every sequence
        to ``target`` shares up to the checker's route, and the route never changes the notation). ``((), ())`` for
        no play. A double has one multiset of steps, the flow of checkers down each chain of points ``d`` apart,
        found in one pass from the bar down and searched with sources never rising; otherwise both dice orders are
        tried, sources from the bar and 24 down (a play of one die when no sequence of two reaches ``target``).

    Raises:
        ValueError: ``target`` is not reachable with the dice (not a legal play of ``position``).
    """
    if position == target:
        return (), ()
    if d1 == d2:
        flow = [0] * 26
        steps: list[tuple[int, int]] = []
        for src in range(BAR, 0, -1):
            out = flow[src] + max(position[src], 0) - max(target[src], 0)
            if out < 0:
                raise ValueError(f"{target} is not reached from {position} with {d1}-{d2}")
            dest = max(src - d1, 0)
            flow[dest] += out
            steps += [(src, dest)] * out
        if not 1 <= len(steps) <= 4:
            raise ValueError(f"{target} is not reached from {position} with {d1}-{d2}")
        return tuple(-src for src, _ in steps), tuple(steps)
    single = None
    for order, (first, second) in enumerate(((d1, d2), (d2, d1))):
        # the first step leaves a point that loses a checker, or is the middle of one checker's route whose second
        # part is played first (by a checker already there)
        for s1 in range(BAR, 0, -1):
            if position[s1] <= 0 or not (
                position[s1] > target[s1] or (s1 + second <= BAR and 0 < position[s1 + second] > target[s1 + second])
            ):
                continue
            step = play_step(position, s1, first)
            if step is None:
                continue
            after = move_checker(position, s1, *step)
            if after == target:
                single = single or ((order, -s1), ((s1, step[0]),))
                continue
            for s2 in range(BAR, 0, -1):  # the second step leaves the one point still holding too many
                if after[s2] <= max(target[s2], 0) or (step2 := play_step(after, s2, second)) is None:
                    continue
                if move_checker(after, s2, *step2) == target:
                    return (order, -s1, -s2), ((s1, step[0]), (s2, step2[0]))
                break
    if single is None:
        raise ValueError(f"{target} is not reached from {position} with {d1}-{d2}")
    return single[0][1:], single[1]


def legal_steps(position: np.ndarray, dice: tuple[int, int], plays: Plays | None = None) -> list[Play]:
    """Every legal play of ``dice`` in ``position`` with its single-die steps, in notation order.

    Args:
        position: ``(26,)`` int8, the mover's view (see :mod:`bgbot.rules.board`); ``dice``: ``(d1, d2)``.
        plays: the position's plays as :func:`bgbot.rules.movegen.generate_plays` gave them (one parent), when the
            caller has them; else they are generated here.

    Returns:
        One :class:`bgbot.rules.board.Play` per legal play (its afterstate NOT flipped), with the first sequence of
        steps GNU Backgammon's search finds (:func:`play_sequence`); empty when no play is legal.
    """
    d1, d2 = (int(d) for d in dice)
    if plays is None:
        plays = generate_plays(np.asarray(position, dtype=np.int8)[None, :], np.array([[d1, d2]]))
    board = [int(x) for x in position]
    found = []
    for target in np.negative(plays.afterstates[:, ::-1], dtype=np.int64).tolist():
        key, steps = play_sequence(board, target, d1, d2)
        if not steps:
            return []
        hits, now = [], board
        for src, to in steps:
            hits.append(bool(to) and now[to] == -1)
            now = move_checker(now, src, to, hits[-1])
        found.append((key, Play(steps, tuple(hits), np.array(target, dtype=np.int8))))
    return [play for _, play in sorted(found, key=lambda kp: kp[0])]


def _parse_point(word: str, text: str) -> int:
    """One point name -> index: ``bar``/``b``/``25`` -> 25, ``off``/``o``/``0`` -> 0, ``1``..``24``."""
    if word in ("bar", "b"):
        return BAR
    if word in ("off", "o"):
        return 0
    if word.isascii() and word.isdigit() and len(word) <= 3 and int(word) <= 25:  # ASCII digits, never huge
        return int(word)
    raise PlaySyntaxError(f"{word!r} is not a point (1-24, bar, off) in play {text!r}")


def _parse_moves(text: str) -> list[tuple[list[int], list[bool], int]]:
    """Split play text into moves: (points along the path, star per point, count)."""
    moves = []
    for token in re.split(r"[\s,]+", text.strip().lower()):
        if not token:
            continue
        count = 1
        match = _COUNT_RE.search(token)
        if match:
            count = int(match.group(1))
            if not 1 <= count <= 4:
                raise PlaySyntaxError(f"a move is repeated 1 to 4 times, got ({count}) in play {text!r}")
            token = token[: match.start()] + token[match.end() :]
        words = re.split(r"[/-]", token)
        if len(words) < 2 or any(not w for w in words):
            raise PlaySyntaxError(f"{token!r} is not a move like '24/18' in play {text!r}")
        stars = [w.endswith("*") for w in words]
        points = [_parse_point(w.rstrip("*"), text) for w in words]
        moves.append((points, stars, count))
    return moves


def parse_play(position: np.ndarray, dice: tuple[int, int], text: str, plays: Plays | None = None) -> Play:
    """Resolve a play typed by a user to the legal play with the same resulting position.

    Accepted spellings: GNU Backgammon's own (:func:`format_play`), a checker's whole path (``13/7/2``), chained
    moves (``bar/20 20/15``), ``b``/``25`` for the bar, ``o``/``0`` for off, ``-`` instead of ``/``, counts
    ``(2)``..``(4)``, hits marked with ``*`` or not, moves in any order, separated by spaces or commas; case is
    ignored. A point written as a landing point that holds an opponent's blot is a hit. When a checker's path could
    hit on an intermediate point that is not written, the play that hits only where written is chosen (``24/13``
    is the non-hitting play, ``24/18*/13`` the hitting one), or the one legal play if only one fits.

    Args:
        position: ``(26,)`` int8, the mover's view (see :mod:`bgbot.rules.board`).
        dice: ``(d1, d2)``, 1..6 each.
        text: the play; see :data:`NO_PLAY` for a forfeited turn.
        plays: the position's plays from :func:`bgbot.rules.movegen.generate_plays`, when the caller has them.

    Returns:
        The matching :class:`bgbot.rules.board.Play` of :func:`legal_steps` (or, when no
        play is legal and ``text`` says so, a Play without steps whose afterstate is ``position``).

    Raises:
        PlaySyntaxError: ``text`` is not a play.
        IllegalPlayError: a well-formed play that is illegal or ambiguous here (the message gives the Position ID
            and dice).
        bgbot.rules.dice.DiceError, bgbot.rules.board.PositionError: bad dice or position.

    >>> from bgbot.rules.board import starting_position
    >>> start = starting_position()
    >>> format_play(start, parse_play(start, (6, 5), "13/7/2"))
    '13/2'
    >>> format_play(start, parse_play(start, (3, 1), "6-5, 8-5"))
    '8/5 6/5'
    """
    board = validate(position)
    d1, d2 = dice
    legal = legal_steps(board, (d1, d2), plays)
    where = f"with {d1}-{d2} in position {encode(board)}"
    if not isinstance(text, str):
        raise PlaySyntaxError(f"a play is a string, got {text!r}")
    if text.strip().lower() in _NO_PLAY_SPELLINGS:
        if legal:
            raise IllegalPlayError(f"{text!r}: a play is possible {where}")
        return Play((), (), board)
    moves = _parse_moves(text)
    if not legal:
        raise IllegalPlayError(f"no play is legal {where}, got {text!r}")
    reach = {d1, d2, d1 + d2} if d1 != d2 else {d1 * k for k in range(1, 5)}
    mine = np.maximum(board, 0).astype(np.int64)
    required: set[int] = set()
    for points, stars, count in moves:
        for a, b in zip(points, points[1:]):
            if a == 0 or b == BAR or b >= a or (b and a - b not in reach):
                why = f": {a - b} pips, and the dice are {d1} and {d2}" if 0 < b < a else ""
                raise IllegalPlayError(f"{_point_name(a)}/{_point_name(b)} is not a move {where} (play {text!r}){why}")
        for p, star in zip(points[1:], stars[1:]):
            if p and board[p] == -1:
                required.add(p)
            elif star:
                raise IllegalPlayError(f"no blot to hit on {p} {where} (play {text!r})")
        mine[points[0]] -= count
        if points[-1]:
            mine[points[-1]] += count
    fits = []
    for play in legal:
        if np.array_equal(np.maximum(play.afterstate, 0), mine):
            hits = {p for p in range(1, 25) if board[p] == -1 and play.afterstate[p] >= 0}
            if hits >= required:
                fits.append((hits == required, play))
    exact = [play for is_exact, play in fits if is_exact]
    if len(exact) == 1:
        return exact[0]
    if len(fits) == 1:
        return fits[0][1]
    if not fits:
        raise IllegalPlayError(f"illegal play {text!r} {where}: {_why_illegal(board, (d1, d2), moves, legal)}")
    options = ", ".join(repr(format_play(board, play)) for _, play in fits)
    raise IllegalPlayError(f"ambiguous play {text!r} {where}: it could be {options}")


def _why_illegal(board: np.ndarray, dice: tuple[int, int], moves: list, plays: list[Play]) -> str:
    """Why typed moves (as :func:`_parse_moves` splits them) make no legal play: the first broken rule found, in the
    order a player meets them (the bar, an empty source, a blocked point, bearing off, the dice to use), naming the
    checker and the point; the rules broken: enter first, no landing on 2+ opposing checkers,
    bear off only with all checkers home, use both dice (all four of a double) or the larger die if only one can be
    played."""
    on_bar = int(board[BAR])
    from_bar = sum(count for points, _, count in moves if points[0] == BAR)
    if on_bar and from_bar < on_bar and any(points[0] != BAR for points, _, _ in moves):
        return (
            f"you have {on_bar} checker{'s' if on_bar > 1 else ''} on the bar: enter "
            f"{'them' if on_bar > 1 else 'it'} before moving any other checker"
        )
    left = np.maximum(board, 0).astype(np.int64)
    for points, _, count in moves:
        a = points[0]
        if left[a] < count:
            have = int(max(board[a], 0))
            where = "on the bar" if a == BAR else f"on the {a} point"
            return f"{'no' if have == 0 else f'only {have}'} checker{'s' if have != 1 else ''} of yours {where}"
        for p in points[1:]:
            if p and board[p] <= -2:
                return f"the {p} point is blocked ({-int(board[p])} opposing checkers): {_point_name(a)}/{p} cannot move there"
        left[a] -= count
        if points[-1]:
            left[points[-1]] += count
    if any(points[-1] == 0 for points, _, _ in moves):
        outside = int(left[7:26].sum())
        if outside:
            return f"you cannot bear off while {outside} checker{'s are' if outside > 1 else ' is'} outside your home board"
        for points, _, _ in moves:
            a = points[-2]
            if points[-1] == 0 and a not in dice and not (max(dice) > a and not left[a + 1 : 7].any()):
                return (
                    f"{a}/off needs a {a}, or a higher die with no checker above the {a} point; the dice are "
                    f"{dice[0]} and {dice[1]}"
                )
    used = max(len(p.steps) for p in plays)
    typed = sum(count * (len(points) - 1) for points, _, count in moves)
    example = format_play(board, plays[0])
    if dice[0] != dice[1] and used == 1:
        small = min(dice)
        larger = any(a - b != small for p in plays for a, b in p.steps)  # a legal play uses the larger die
        if larger and typed == 1 and moves[0][0][0] - moves[0][0][1] == small:
            return f"only one die can be played, so it must be the larger, {max(dice)} (e.g. {example!r})"
        return f"only one die can be played here (e.g. {example!r})"
    if typed < used:
        need = "both dice" if used == 2 else f"{used} of the four {dice[0]}s" if used < 4 else "all four dice"
        return f"a legal play uses {need}: you must play as many as can be played (e.g. {example!r})"
    return f"no legal play gives that position (e.g. {example!r})"
