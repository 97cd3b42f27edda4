"""``bgbot serve``: an HTTP JSON API (FastAPI + uvicorn, the optional extra ``bgbot[server]``).

Endpoints (OpenAPI documentation at ``/docs``, the schema at ``/openapi.json``)::

    GET  /v1/health                                  {"status": "ok", "version", "model", "requests", "batches"}
    GET  /v1/moves?position=P&dice=D                 as ``bgbot moves P D --json``
    GET  /v1/move?position=P&dice=D&ply=N            as ``bgbot move P D --ply N --json``
    GET  /v1/cube?position=P[&ply=N][&cube_search=true][&jacoby=on|off][&probabilities=W,WG,WBG,LG,LBG]
                                                     as ``bgbot cube ... [--ply N] [--cube-search] --json``
    POST /v1/batch  {"requests": [{"endpoint": "move"|"moves"|"cube", "position", "dice", "ply", "jacoby",
                     "probabilities", "cube_search"}, ...]}
                    ->  {"answers": [answer or {"error": message, "status": 400|422}, ...]}

A bad position or dice is HTTP 400 with ``{"detail": message}``, the message the CLI prints after ``error:``; a
malformed request (a missing parameter, a ply that is not a whole number 0 .. 2 with the message of
:func:`bgbot.evaluation.search.check_ply`, a field the endpoint does not take, a batch body that is not the schema) is
422, and so are settings that cannot be used together (``cube_search`` with ``probabilities``: :class:`RequestConflict`)
(:func:`error_status`). A batch request refused alone answers ``{"error": message, "status": code}``: the message and
status the GET endpoint gives the same request (:func:`error_answer`); the batch itself is then 200.
Nothing is ignored: a query parameter an endpoint does not take (``p26``, a misspelt name) or a body field a schema does
not have is 422 naming it; one given twice, or both a position and a board, is 400 (:func:`query_position`).
Whole numbers are whole numbers: a query's ``ply=1.0``, ``ply=true`` or ``ply=２`` (a digit other than 0-9) is 422
naming the field, never read as 1 or 2; a batch request's ``"ply": true`` or ``"ply": 1.0`` is refused alone (422)
with the query's words, and its ``"ply": "1"`` and ``"dice": 31`` are read as ``ply=1`` and ``dice=31``; every
whole number of a JSON body (``POST /v1/games``' ``ply``, ``match_length``, ``seed``; ``/v1/board``'s checker counts,
cube and score; ``/v1/steps``' points) is read as a batch request's ``"ply"`` (:func:`whole_number_json`).
Booleans likewise: a query's ``cube_search`` (and ``/v1/rollout``'s ``cube``, ``variance_reduction``, ...) is one of
``true``, ``false``, ``1``, ``0`` (:func:`boolean_text`: ``yes``, ``on``, ``True`` are 422 naming it), a batch
request's ``cube_search`` is read as its query would be (:func:`boolean_query_json`), and every other boolean of a
JSON body (``POST /v1/games``' ``bgbot_first``, ``/v1/board``'s ``crawford``) is JSON ``true`` or ``false`` only
(:func:`boolean_json`).
A batch request that is not its schema (a type, an endpoint, a field it does not have) is refused alone, as one that
its endpoint refuses: the batch is 422 only when the envelope is malformed (not JSON, no ``requests`` list, more than
:data:`MAX_BATCH` requests). A JSON body that gives a key twice in one object is 400 naming the key
(:func:`unique_keys`), never read as its last value.
Position IDs contain ``+`` and ``/``: clients URL-encode them; a ``+`` that arrives decoded to a space is read back as
``+`` (positions never contain spaces).

Concurrency: every request is answered by one worker thread that takes all requests waiting at that moment as one
batch: the afterstates of all their legal plays (and the positions of cube requests) go through the evaluator in one
call, then each answer is built from those values (:class:`_Prefetched`). Concurrent requests are thus batched
through the evaluator rather than serialised one network call each.
"""

# No ``from __future__ import annotations``: FastAPI reads the endpoint annotations, some of them local classes.

import asyncio
import copy
import dataclasses
import errno
import ipaddress
import json
import re
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np

import bgbot
from bgbot.api import Bot, cube_json, moves_json
from bgbot.errors import BgbotError, parse_whole
from bgbot.evaluation import bearoff
from bgbot.evaluation.evaluator import class_dispatch, for_cube, position_probabilities
from bgbot.evaluation.network import set_threads
from bgbot.evaluation.search import SearchError, check_ply
from bgbot.formats import context, plays
from bgbot.protocols import web
from bgbot.rules.state import CubeState, MatchState

__all__ = [
    "ServerError",
    "MalformedRequest",
    "RequestConflict",
    "error_status",
    "error_answer",
    "create_app",
    "serve",
    "answer",
    "query_position",
    "BOARD_FIELDS",
]

MAX_BATCH = 1000
"""Most requests one ``POST /v1/batch`` may carry."""
MAX_BODY = 1 << 20
"""Default limit of a request body in bytes (``bgbot serve --max-body``); a larger body is refused (413) unread."""
MAX_MESSAGE = 200
"""Longest error message an answer carries."""
MAX_ROLLOUTS = 2
"""Default number of rollouts the web page may run at once (``bgbot serve --max-rollouts``)."""
WEB_DIR = Path(__file__).resolve().parent.parent / "web"
"""The web page's static files (package data)."""


class ServerError(BgbotError):
    """A server that cannot start (port in use, FastAPI missing) or a request it cannot answer."""


class MalformedRequest(ServerError):
    """A request that is not well formed (a field its endpoint does not take): HTTP 422, as FastAPI answers a body
    that is not its schema."""


class RequestConflict(MalformedRequest):
    """A request whose settings cannot be used together (``cube_search`` with ``probabilities``): HTTP 422, a
    malformed request, as the command line refuses the same flags before any work."""


def error_status(err: BgbotError) -> int:
    """The HTTP status of a request refused with ``err``: 422 for a malformed request (:class:`MalformedRequest`, a
    ply outside 0 .. 2: :class:`bgbot.evaluation.search.SearchError`), 400 for bad input (a position, dice, ...)."""
    return 422 if isinstance(err, (MalformedRequest, SearchError)) else 400


def error_answer(err: BgbotError) -> dict:
    """A batch request refused with ``err``: ``{"error": message, "status": code}``, the ``detail`` and the status code
    the GET endpoint answers the same request with (:func:`api_message`, :func:`error_status`)."""
    return {"error": api_message(err), "status": error_status(err)}


WHOLE_NUMBER = "must be a whole number written in digits 0-9"  # a whole number's refusal, after the field's name


def whole_number_text(value: object) -> object:
    """A query parameter's whole number as written: text that is not the digits 0-9 with an optional sign (``1.0``,
    ``true``, ``1e3``, the full-width ``２``) is refused rather than read as a number; other values pass to the field's
    own check unchanged.

    Raises:
        ValueError: ``"must be a whole number written in digits 0-9"`` (the API names the field before it).
    """
    if isinstance(value, str):
        try:
            parse_whole(value)
        except ValueError:
            raise ValueError(WHOLE_NUMBER) from None
    return value


def whole_number_json(value: object) -> int:
    """A batch request's whole number (``ply``) read as its GET query would read it: a JSON integer, or text of the
    digits 0-9 (``"1"``, as ``ply=1``); ``1.0``, ``1e0``, ``true`` or ``"1.0"`` are refused with the query's words.

    Raises:
        ValueError: ``"must be a whole number written in digits 0-9"`` (the API names the field before it).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        whole_number_text(value)
        return parse_whole(value)
    raise ValueError(WHOLE_NUMBER)


BOOLEAN_TEXT = "must be true, false, 1 or 0"  # a query's boolean's refusal, after the parameter's name
BOOLEAN_JSON = "must be true or false"  # a JSON body's boolean's refusal, after the field's name


def boolean_text(value: object) -> object:
    """A query parameter's boolean as written: only ``true``, ``false``, ``1`` or ``0`` (pydantic alone would also read
    ``yes``, ``on``, ``t``, ``True``); other values pass to the field's own check unchanged.

    Raises:
        ValueError: ``"must be true, false, 1 or 0"`` (the API names the parameter before it).
    """
    if isinstance(value, str) and value not in ("true", "false", "1", "0"):
        raise ValueError(BOOLEAN_TEXT)
    return value


def boolean_query_json(value: object) -> bool:
    """A batch request's boolean (``cube_search``) read as its GET query would read it: JSON ``true`` or ``false``, or
    the query's text (``"true"``, ``"0"``, as ``"ply": "1"`` is ``ply=1``); ``"yes"``, ``1`` or ``null`` are refused
    with the query's words.

    Raises:
        ValueError: ``"must be true, false, 1 or 0"`` (the API names the field before it).
    """
    if isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise ValueError(BOOLEAN_TEXT)
    boolean_text(value)
    return value in ("true", "1")


def boolean_json(value: object) -> bool:
    """A JSON body's boolean (``bgbot_first``, ``crawford``): JSON ``true`` or ``false`` only, never ``"yes"``, ``1``
    or ``"true"`` read as true.

    Raises:
        ValueError: ``"must be true or false"`` (the API names the field before it).
    """
    if isinstance(value, bool):
        return value
    raise ValueError(BOOLEAN_JSON)


def dice_json(value: object) -> object:
    """A batch request's dice read as its GET query would read them: a JSON integer (``31``) is its digits (``"31"``),
    left to the dice's own check (:func:`bgbot.formats.context.parse_dice`); other values pass unchanged."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object of a request body's JSON (:func:`json.loads`'s ``object_pairs_hook``), refusing a key given twice in
    it instead of keeping the last value silently.

    Raises:
        ServerError: ``"duplicate key 'position' in the JSON body: give each field once"``.
    """
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ServerError(f"duplicate key {key!r} in the JSON body: give each field once")
        out[key] = value
    return out


def check_json_body(body: bytes, content_type: str | None) -> None:
    """Refuse a request body read as JSON (no content type, ``application/json`` or ``application/*+json``, as FastAPI
    reads bodies) that gives a key twice in one object (:func:`unique_keys`); a body that is not JSON is left to the
    endpoint's schema (422).

    Raises:
        ServerError: a duplicated key, named.
    """
    media = (content_type or "").split(";")[0].strip().lower()
    if not body or (media and media != "application/json" and not re.fullmatch(r"application/\S+\+json", media)):
        return
    try:
        json.loads(body, object_pairs_hook=unique_keys)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        pass  # not JSON: FastAPI's own reading refuses it


def check_cube_settings(request: dict[str, Any]) -> None:
    """Refuse a cube request's ``cube_search`` that is not a bool, or that comes with ``probabilities`` (they replace
    the evaluation the search would make). Raises ServerError; RequestConflict for the conflict."""
    search = request.get("cube_search", False)
    if not isinstance(search, bool):
        raise ServerError(f"cube_search is true or false, got {search!r}")
    if search and request.get("probabilities") is not None:
        raise RequestConflict(
            "cube_search and probabilities cannot be used together: probabilities replace the evaluation that "
            "cube_search searches"
        )


# -- answers, as the CLI's --json gives them --------------------------------------------------------------------------


def _position_text(text: str) -> str:
    """A ``+`` decoded to a space (an unencoded query string) is read back as ``+``."""
    return text.replace(" ", "+") if isinstance(text, str) else text


def _resolve(position: str, dice: str | None, need_dice: bool) -> context.Context:
    """POSITION and DICE as the CLI reads them; with ``need_dice`` the context has dice, and a position whose double
    awaits an answer is refused as the CLI refuses it (:func:`bgbot.formats.context.double_pending`)."""
    text = _position_text(position)
    if need_dice and context.parse_position(text).double_offered:
        raise context.double_pending(text)
    ctx = context.resolve(text, dice)
    if need_dice and ctx.dice is None:
        raise context.DiceSyntaxError("no dice: give dice (e.g. 31), or a position that carries dice")
    return ctx


_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z-]*)")


def api_message(err: Exception) -> str:
    """An error's message in the API's terms: the first line, command-line flags named as the request's fields
    (``--probabilities`` -> ``probabilities``), at most :data:`MAX_MESSAGE` characters."""
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    text = _FLAG.sub(lambda m: m.group(1).replace("-", "_"), text)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def points_position(points) -> str:
    """The Position ID of a board given as 26 signed checker counts (wildbg's ``p0``..``p25``: index 1..24 the
    points of the side on roll, positive its checkers and negative the opponent's, 25 its bar, 0 the opponent's bar,
    negative). Raises PositionError."""
    return web.context_from_points(points).position_id


def _query_names(dependant) -> set[str]:
    """The query parameter names a FastAPI route's ``dependant`` takes: its own and those of its dependencies (a
    settings record given as ``Depends()``), recursively."""
    names = {f.alias for f in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


BOARD_FIELDS = tuple(f"p{i}" for i in range(26))
"""The query parameters of a board given as signed checker counts (wildbg's ``p0`` .. ``p25``)."""


def query_position(position: str | None, params: list[tuple[str, str]], known: set[str]) -> str:
    """The position of a GET request: the text of ``position``, or the board of its ``p0`` .. ``p25`` parameters as a
    Position ID.

    Args:
        position: the ``position`` parameter, or None.
        params: every query parameter as ``(name, value)``, repeats included (Starlette's ``multi_items()``).
        known: the endpoint's own parameter names (``position``, ``dice``, ...).

    Raises:
        MalformedRequest: a parameter the endpoint does not take (``p26``, a misspelt name).
        ServerError: a parameter given twice, both a position and a board, neither, or a count that is not an
            integer.
        PositionError: the board is not a position (too many checkers, both sides on a point, ...).
    """
    names = [k for k, _ in params]
    for k in names:
        if k not in known and k not in BOARD_FIELDS:
            if re.fullmatch(r"p[-+]?\d+", k):
                raise MalformedRequest(f"unknown field {k!r}: a board is p0 .. p25 (p25 the bar of the side on roll)")
            raise MalformedRequest(
                f"unknown field {k!r}: this request takes {', '.join(sorted(known))} or a board p0 .. p25"
            )
        if names.count(k) > 1:
            raise ServerError(f"{k!r} is given {names.count(k)} times: give it once")
    board = {k: v for k, v in params if k in BOARD_FIELDS}
    if position is not None and board:
        raise ServerError("give one of position or a board (p0 .. p25), not both")
    if position is not None:
        return position
    if not board:
        raise ServerError("a request needs a position (Position ID, PositionID:MatchID or XGID=...) or a board")
    try:
        points = [int(board.get(f"p{i}", "0")) for i in range(26)]
    except ValueError:
        raise ServerError("a board's p0 .. p25 are integers (checker counts, the opponent's negative)") from None
    return points_position(points)


ENDPOINT_FIELDS = {
    "moves": ("dice",),
    "move": ("dice", "ply"),
    "cube": ("jacoby", "ply", "probabilities", "cube_search"),
}
"""The settings each endpoint takes besides its position (a batch request's others must be left out)."""


def check_fields(endpoint: str, request: dict[str, Any]) -> None:
    """Refuse a setting ``endpoint`` does not take (a batch request's ``dice`` for ``cube``, ``ply`` for ``moves``,
    ...), as the GET endpoints and the CLI refuse it, instead of ignoring it. A setting left out or at its default
    (None, ``ply`` 0, ``cube_search`` false) passes. Raises MalformedRequest."""
    takes = ENDPOINT_FIELDS.get(endpoint, ())
    for name in ("dice", "ply", "jacoby", "probabilities", "cube_search"):
        value = request.get(name)
        default = value is None or (name == "ply" and value == 0) or (name == "cube_search" and value is False)
        if name not in takes and not default:
            raise MalformedRequest(
                f"unknown field {name!r}: a {endpoint} request takes {', '.join(('position', *takes))} or a board"
            )


def answer(bot: "Bot", endpoint: str, request: dict[str, Any]) -> dict:
    """One answer: ``endpoint`` "moves", "move" or "cube" with the request's fields, the CLI's ``--json`` shape.

    Raises:
        BgbotError: bad input (the CLI's message).
    """
    check_fields(endpoint, request)
    position, dice = request.get("position"), request.get("dice")
    if not isinstance(position, str):
        raise ServerError("a request needs a position (Position ID, PositionID:MatchID or XGID=...)")
    if endpoint == "moves":
        ctx = _resolve(position, dice, need_dice=True)
        assert ctx.dice is not None
        found = plays.legal_plays(ctx.position, ctx.dice)
        return {"position_id": ctx.position_id, "dice": list(ctx.dice), "plays": [p.to_json() for p in found]}
    ply = check_ply(request.get("ply", 0))
    if endpoint == "move":
        ctx = _resolve(position, dice, need_dice=True)
        assert ctx.dice is not None
        return moves_json(bot.rank_contexts([ctx], ply), [ctx])[0]
    if endpoint == "cube":
        ctx = _resolve(position, None, need_dice=False)
        if ctx.dice is not None:
            raise ServerError(
                f"the dice are already rolled ({ctx.dice[0]}{ctx.dice[1]}): no double is possible after the roll "
                "(a cube decision comes before rolling; give the position without dice, or ask for the move)"
            )
        jacoby = request.get("jacoby")
        if jacoby is not None:
            if jacoby not in ("on", "off"):
                raise ServerError(f"jacoby is 'on' or 'off', got {jacoby!r}")
            ctx = ctx.with_jacoby(jacoby == "on")
        check_cube_settings(request)
        given = request.get("probabilities")
        if given is not None and ply:
            raise ServerError("probabilities replace the evaluation; they cannot be used with ply")
        probabilities = None if given is None else context.parse_probabilities(given)
        return cube_json(bot, ctx, probabilities=probabilities, ply=ply, cube_search=request.get("cube_search", False))
    raise ServerError(f"endpoint is 'moves', 'move' or 'cube', got {endpoint!r}")


# -- batching ---------------------------------------------------------------------------------------------------


class _Prefetched:
    """An evaluator that answers from values computed in one batch, falling back to ``inner`` for the rest."""

    def __init__(self, inner, positions: np.ndarray) -> None:
        self.inner = inner
        self.rows: dict[bytes, np.ndarray] = {}
        if len(positions):
            values = position_probabilities(inner, positions)
            self.rows = {bytes(p): v for p, v in zip(positions, values)}

    def evaluate(self, positions: np.ndarray) -> np.ndarray:
        positions = np.asarray(positions, dtype=np.int8)
        keys = [bytes(p) for p in positions]
        missing = [i for i, k in enumerate(keys) if k not in self.rows]
        if missing:
            for i, v in zip(missing, self.inner.evaluate(positions[missing])):
                self.rows[keys[i]] = v
        return np.stack([self.rows[k] for k in keys]) if keys else np.zeros((0, 5), dtype=np.float32)


def answer_many(bot: "Bot", requests: list[tuple[str, dict]]) -> list[dict | BgbotError]:
    """Answers to many requests, their evaluations batched: each an answer dict, or the BgbotError it raised.

    ``move`` requests at 0 ply in money play are ranked together in one call (:meth:`bgbot.api.Bot.rank_contexts`:
    their plays generated and evaluated at once); the others through :func:`answer` with an evaluator that already holds the values of the batch's positions."""
    fast: dict[int, context.Context] = {}
    singles = []
    for k, (endpoint, req) in enumerate(requests):
        try:
            check_fields(endpoint, req)
            ply = req.get("ply", 0)
            if endpoint == "move" and type(ply) is int and ply == 0:
                ctx = _resolve(req["position"], req.get("dice"), need_dice=True)
                if ctx.match.is_money:
                    fast[k] = ctx
            elif endpoint == "cube" and req.get("probabilities") is None:
                singles.append(_resolve(req["position"], None, need_dice=False).position)
        except (BgbotError, KeyError, TypeError):
            pass  # answered (with its error) below
    out: list[dict | BgbotError] = [{} for _ in requests]
    if fast:
        for k, result in zip(fast, moves_json(bot.rank_contexts(list(fast.values())), list(fast.values()))):
            out[k] = result
    if len(fast) == len(requests):
        return out
    cube_inner = for_cube(bot.evaluator)  # cube requests are what the batch prefetches
    prefetched = _Prefetched(cube_inner, np.stack(singles) if singles else np.zeros((0, 26), dtype=np.int8))
    evaluator: Any = prefetched
    if cube_inner is not bot.evaluator:  # separate cube nets: the model's evaluator with the prefetched cube values
        evaluator = copy.copy(bot.evaluator)
        evaluator.cube_evaluator = prefetched
    slow = copy.copy(bot)
    slow.evaluator = evaluator
    for k, (endpoint, req) in enumerate(requests):
        if k in fast:
            continue
        try:
            out[k] = answer(slow, endpoint, req)
        except BgbotError as err:
            out[k] = err
    return out


class _Batcher:
    """Collects the requests waiting at a moment and answers them together in one worker thread."""

    def __init__(self, bot: "Bot") -> None:
        self.bot = bot
        self.queue: asyncio.Queue | None = None
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bgbot-eval")
        self.task: asyncio.Task | None = None
        self.requests = 0  # requests answered (not refused) by the worker
        self.batches = 0  # rounds of the worker that answered a request: each evaluates its requests together

    def count(self, results: list) -> None:
        """Count a round's answers: ``requests`` those answered, ``batches`` the round when it answered one (a request
        refused with an error, a batch of none, is no answer and no evaluator round)."""
        answered = sum(not isinstance(r, Exception) for r in results)
        self.requests += answered
        self.batches += answered > 0

    async def submit(self, endpoint: str, request: dict) -> dict:
        if self.queue is None:
            self.queue = asyncio.Queue()
            self.task = asyncio.get_running_loop().create_task(self._run())
        future = asyncio.get_running_loop().create_future()
        await self.queue.put((endpoint, request, future))
        result = await future
        if isinstance(result, BgbotError):
            raise result
        return result

    async def _run(self) -> None:
        assert self.queue is not None
        loop = asyncio.get_running_loop()
        while True:
            items = [await self.queue.get()]
            await asyncio.sleep(0)  # let requests that arrived together join this batch
            while not self.queue.empty():
                items.append(self.queue.get_nowait())
            try:
                results = await loop.run_in_executor(self.pool, answer_many, self.bot, [(e, r) for e, r, _ in items])
            except Exception as err:  # a bug: every waiting request gets it (500), the loop goes on
                results = [err] * len(items)  # type: ignore[list-item]
            self.count(results)
            for (_, _, future), result in zip(items, results):
                if future.done():
                    continue
                if isinstance(result, Exception) and not isinstance(result, BgbotError):
                    future.set_exception(result)
                else:
                    future.set_result(result)

    async def answer_batch(self, requests: list[tuple[str, dict]]) -> list[dict | BgbotError]:
        """The requests of one ``POST /v1/batch`` answered together in the worker thread (:func:`answer_many`),
        counted by :meth:`count` (``requests``: each one answered; ``batches``: one, unless none was)."""
        if not requests:
            return []
        results = await asyncio.get_running_loop().run_in_executor(self.pool, answer_many, self.bot, requests)
        self.count(results)
        return results


# -- the app ----------------------------------------------------------------------------------------------------


def _fastapi():
    try:
        import fastapi
        import pydantic
    except ImportError as err:
        raise ServerError("bgbot serve needs the optional extra: pip install 'bgbot[server]'") from err
    return fastapi, pydantic


class _BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes is answered 413 before it is read (by its
    Content-Length), or, for a body without a length (chunked), as soon as the bytes read pass the limit; such a
    body is read here (at most ``limit`` bytes held) and handed on whole."""

    def __init__(self, app, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        message = {"detail": f"the request body is larger than the server's limit of {self.limit} bytes"}
        length = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    length = self.limit + 1
        if length is not None:
            if length > self.limit:
                return await _send_json(send, 413, message)
            return await self.app(scope, receive, send)
        if scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS"):
            return await self.app(scope, receive, send)
        parts, size = [], 0
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return  # the client went away
            size += len(msg.get("body", b""))
            if size > self.limit:
                return await _send_json(send, 413, message)
            parts.append(msg.get("body", b""))
            if not msg.get("more_body", False):
                break
        replayed = False

        async def whole():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(parts), "more_body": False}
            return await receive()

        await self.app(scope, whole, send)


class _ServerTiming:
    """ASGI middleware: every answer carries ``server-timing: app;dur=MS``, the milliseconds from the request's
    arrival to its answer's start (``scripts/bench_server.py`` reads it: the server-side latency)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()

        async def timed(msg):
            if msg["type"] == "http.response.start":
                ms = f"app;dur={1000 * (time.perf_counter() - t0):.2f}".encode()
                msg = {**msg, "headers": [*msg.get("headers", ()), (b"server-timing", ms)]}
            await send(msg)

        await self.app(scope, receive, timed)


async def _send_json(send, status: int, content: dict) -> None:
    body = json.dumps(content).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _validation_message(errors: list) -> str:
    """A malformed request's first problem as ``field: what is wrong`` (never the request's values)."""
    if not errors:
        return "malformed request"
    e = errors[0]
    where = ".".join(str(x) for x in e.get("loc", ()) if x not in ("body", "query"))
    what = str(e.get("msg", "invalid"))
    if e.get("type") == "too_long" and where == "requests":
        what = f"at most {MAX_BATCH} requests in a batch"
    elif e.get("type") == "extra_forbidden":
        what = "unknown field"
    elif e.get("type") == "string_unicode" and not where:  # the text body: /v1/analyse's .mat file is the only one
        what = "the request body (the .mat text) is not UTF-8: send the match file's text encoded as UTF-8"
    elif e.get("type") == "value_error":  # a schema's own check (settings that cannot be used together)
        what = what.removeprefix("Value error, ")
    return api_message(ValueError(f"{where}: {what}" if where else what))


def create_app(
    bot: "Bot",
    *,
    max_body: int = MAX_BODY,
    max_rollouts: int = MAX_ROLLOUTS,
    models_dir: str | None = None,
    runs_dir: str | None = None,
):
    """The FastAPI application answering with ``bot``, and the web page at ``/``. Raises ServerError without
    FastAPI installed.

    Args:
        max_body: the largest request body accepted, in bytes (larger: 413, unread).
        max_rollouts: rollouts that may run at once (more: the stream says the server is busy).
        models_dir: a directory of models and their cards for ``/v1/models`` (None: none).
        runs_dir: a directory of training runs (``NAME/eval.jsonl``) for ``/v1/runs``.
    """
    fastapi, pydantic = _fastapi()
    from fastapi import Body, Depends, Query, Request
    from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, StreamingResponse
    from fastapi.staticfiles import StaticFiles

    async def json_body(request: Request) -> None:
        """Every request's JSON body read for a key given twice (:func:`check_json_body`) before its endpoint runs."""
        if request.method in ("POST", "PUT", "PATCH"):
            check_json_body(await request.body(), request.headers.get("content-type"))

    app = fastapi.FastAPI(
        dependencies=[Depends(json_body)],
        title="bgbot",
        version=bgbot.__version__,
        description="Backgammon plays and cube actions by bgbot's value network. The JSON shapes are those of the "
        "command line's --json. Position IDs contain + and /: URL-encode them. A position is a Position ID, a GNUbg "
        "ID (PositionID:MatchID) or an XGID, or instead a board as 26 signed checker counts (query parameters p0 .. "
        f'p25, as wildbg\'s; in a batch, "board"), never both. A parameter or field an endpoint does not take is '
        f"refused (400 or 422), never ignored, and so is a JSON key given twice. Request bodies are limited to {max_body} bytes (413 beyond); a "
        f"batch carries at most {MAX_BATCH} requests.",
    )
    app.add_middleware(_BodyLimit, limit=max_body)
    app.add_middleware(_ServerTiming)
    batcher = _Batcher(bot)
    app.state.batcher = batcher
    games = web.Games(bot)
    app.state.games = games
    rollout_slots = threading.BoundedSemaphore(max_rollouts)
    rollout_pool = ThreadPoolExecutor(max_workers=max_rollouts, thread_name_prefix="bgbot-rollout")
    work_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="bgbot-web")

    @app.on_event("shutdown")
    async def _shutdown() -> None:
        games.close()

    @app.exception_handler(BgbotError)
    async def _bad_input(request, err: BgbotError):
        return JSONResponse(status_code=error_status(err), content={"detail": api_message(err)})

    from fastapi.exceptions import RequestValidationError

    @app.exception_handler(RequestValidationError)
    async def _malformed(request, err: RequestValidationError):
        return JSONResponse(status_code=422, content={"detail": _validation_message(list(err.errors()))})

    POSITION = Query(
        None, description="Position ID, PositionID:MatchID (GNUbg ID) or XGID=...; or instead the board as p0 .. p25"
    )
    DICE = Query(None, description="the roll: 31, 3-1 or '3 1' (optional when the position carries dice)")
    Whole = Annotated[int, pydantic.BeforeValidator(whole_number_text)]  # a query's integer: 1.0 and true refused
    Flag = Annotated[bool, pydantic.BeforeValidator(boolean_text)]  # a query's boolean: true, false, 1, 0 only

    def position_of(position: str | None, request) -> str:
        """The request's position (:func:`query_position`), its endpoint's parameters read from the route."""
        route = request.scope.get("route")
        known = _query_names(route.dependant) if route is not None else {"position", "dice"}
        return query_position(position, list(request.query_params.multi_items()), known)

    @app.get("/v1/health")
    async def health() -> dict:
        """Liveness: version and model path; ``requests`` and ``batches``: the requests answered by the evaluator so
        far and the evaluator batches that answered them. ``requests`` counts each ``GET /v1/move`` and ``/v1/cube``
        answered and each request (item) of a ``POST /v1/batch`` answered, never one refused (400, 422, or a batch
        item's ``{"error", "status"}``); ``batches`` counts rounds of the evaluator that answered a request:
        concurrent GET requests share one, a ``POST /v1/batch`` is one, and one of no requests (or only refused
        ones) is none."""
        return {
            "status": "ok",
            "version": bgbot.__version__,
            "model": bot.path,
            "requests": batcher.requests,
            "batches": batcher.batches,
        }

    @app.get("/v1/show")
    async def show(request: Request, position: str | None = POSITION, dice: str | None = DICE) -> dict:
        """The facts ``bgbot show --json`` prints, with ``points`` (26 signed counts), ``gnubg_id`` and ``xgid``."""
        return web.board_facts(context.resolve(_position_text(position_of(position, request)), dice))

    @app.get("/v1/moves")
    async def moves(request: Request, position: str | None = POSITION, dice: str | None = DICE) -> dict:
        """Every legal play of the dice, each resulting position once (``bgbot moves --json``)."""
        return answer(bot, "moves", {"position": position_of(position, request), "dice": dice})

    @app.get("/v1/move")
    async def move(
        request: Request,
        position: str | None = POSITION,
        dice: str | None = DICE,
        ply: Annotated[Whole, Query(description="search depth 0..2")] = 0,
    ) -> dict:
        """The legal plays ranked by the model, best first (``bgbot move --json``)."""
        return await batcher.submit("move", {"position": position_of(position, request), "dice": dice, "ply": ply})

    @app.get("/v1/cube")
    async def cube(
        request: Request,
        position: str | None = POSITION,
        jacoby: Literal["on", "off"] | None = Query(None, description="Jacoby rule for money play"),
        probabilities: str | None = Query(None, description="W,WG,WBG,LG,LBG to use instead of the model's"),
        ply: Annotated[Whole, Query(description="lookahead of the cubeless probabilities, 0..2")] = 0,
        cube_search: Annotated[
            Flag,
            Query(description="decide by cubeful search at ply (bgbot cube --cube-search); not with probabilities"),
        ] = False,
    ) -> dict:
        """The cube action of the side on roll before rolling (``bgbot cube --json``)."""
        pos = position_of(position, request)
        req = {"position": pos, "jacoby": jacoby, "probabilities": probabilities, "ply": ply}
        if cube_search:
            req["cube_search"] = True
        check_cube_settings(req)  # a conflict is refused (422) before the request joins a batch
        return await batcher.submit("cube", req)

    strict = pydantic.ConfigDict(extra="forbid")  # an unknown field is a 422 naming it, never ignored
    WholeJson = Annotated[int, pydantic.BeforeValidator(whole_number_json)]  # a JSON body's integer: 1.0, true refused
    BoolJson = Annotated[bool, pydantic.BeforeValidator(boolean_json)]  # a JSON body's boolean: "yes", 1 refused
    FlagJson = Annotated[bool, pydantic.BeforeValidator(boolean_query_json)]  # a batch request's: as its query's

    class BatchRequest(pydantic.BaseModel):  # type: ignore[name-defined]
        # strict: "ply": true or 1.0 is refused naming the field, never read as 1 (the query's words); "dice": 31 is "31"
        model_config = pydantic.ConfigDict(extra="forbid", strict=True)
        endpoint: Literal["moves", "move", "cube"]
        position: str | None = None
        board: list[int] | None = pydantic.Field(
            None, min_length=26, max_length=26, description="instead of position: 26 signed checker counts"
        )
        dice: Annotated[str | None, pydantic.BeforeValidator(dice_json)] = None
        ply: WholeJson = 0
        jacoby: Literal["on", "off"] | None = None
        probabilities: str | None = None
        cube_search: FlagJson = pydantic.Field(False, description="cube: decide by cubeful search at ply")

        @pydantic.model_validator(mode="after")
        def _no_conflict(self):
            check_cube_settings({"cube_search": self.cube_search, "probabilities": self.probabilities})
            return self

    def refused_alone(value, handler):
        """A batch request read by its schema, or the MalformedRequest that refuses it alone when it is not the schema
        (``"ply": 1.0``, an unknown endpoint or field, ``cube_search`` with ``probabilities``): one malformed request
        never fails its batch."""
        if not isinstance(value, dict):
            return MalformedRequest('a batch request is an object: {"endpoint": "move", "position": ..., ...}')
        try:
            return handler(value)
        except pydantic.ValidationError as err:
            return MalformedRequest(_validation_message(list(err.errors())))

    class Batch(pydantic.BaseModel):  # type: ignore[name-defined]
        model_config = strict
        requests: list[Annotated[BatchRequest, pydantic.WrapValidator(refused_alone)]] = pydantic.Field(
            ..., max_length=MAX_BATCH, description=f"at most {MAX_BATCH} requests"
        )

    @app.post("/v1/batch")
    async def batch(body: Batch) -> dict:
        """Many requests (at most 1000), one answer each, evaluated in one batch. A request refused alone answers
        ``{"error": message, "status": code}``: the ``detail`` and status code of the GET endpoint for it."""
        asked: list[int] = []  # the requests the evaluator answers (their places in the batch)
        reqs: list[tuple[str, dict]] = []
        refused: dict[int, BgbotError] = {}
        for k, r in enumerate(body.requests):
            if isinstance(r, BgbotError):  # not the schema (refused_alone)
                refused[k] = r
                continue
            fields = r.model_dump(exclude={"endpoint", "board"})
            if r.position is not None and r.board is not None:
                refused[k] = ServerError("give one of position or board, not both")
                continue
            if r.board is not None:
                try:
                    fields["position"] = points_position(r.board)
                except BgbotError as err:
                    refused[k] = err
                    continue
            asked.append(k)
            reqs.append((r.endpoint, fields))
        results = dict(zip(asked, await batcher.answer_batch(reqs)))
        answers = [refused[k] if k in refused else results[k] for k in range(len(body.requests))]
        return {"answers": [error_answer(a) if isinstance(a, BgbotError) else a for a in answers]}

    # -- the web page's own requests -------------------------------------------------------------------------------

    class StepsRequest(pydantic.BaseModel):  # type: ignore[name-defined]
        model_config = strict
        position: str
        dice: str | None = None
        steps: list[tuple[WholeJson, WholeJson]] = pydantic.Field(default_factory=list, max_length=4)
        move: tuple[WholeJson, WholeJson] | None = None

    @app.post("/v1/steps")
    async def steps(body: StepsRequest) -> dict:
        """A play made step by step (the page's clicks): the board after the steps, whether the play is complete and
        its notation, and the points a checker may still move from. An illegal step is 400."""
        ctx = context.resolve(_position_text(body.position), body.dice)
        return web.steps(ctx, list(body.steps), body.move)

    class BoardRequest(pydantic.BaseModel):  # type: ignore[name-defined]
        model_config = strict
        # whole numbers: true or 1.0 refused naming the field, never read as a checker count, cube or score of 1
        points: list[WholeJson] = pydantic.Field(
            ..., min_length=26, max_length=26, description="26 signed checker counts"
        )
        dice: str | None = None
        cube_value: WholeJson = 1
        cube_owner: Literal["centre", "me", "opponent"] = "centre"
        match_length: WholeJson = pydantic.Field(0, ge=0, le=64)
        score: tuple[WholeJson, WholeJson] = (0, 0)
        crawford: BoolJson = False

    @app.post("/v1/board")
    async def board_setup(body: BoardRequest) -> dict:
        """A position set up on the page (checker counts, cube, score, dice): the facts of ``/v1/show``."""
        cube = CubeState(body.cube_value, body.cube_owner)
        match = MatchState(body.match_length, body.score, body.crawford) if body.match_length else MatchState()
        dice = context.parse_dice(body.dice) if body.dice else None
        return web.board_facts(web.context_from_points(body.points, dice, cube, match))

    class NewGame(pydantic.BaseModel):  # type: ignore[name-defined]
        model_config = strict
        # whole numbers: 1.0 or true refused in the query's words (as a batch request's ply), never read as 1
        match_length: WholeJson = pydantic.Field(0, ge=0, le=64, description="0: money play")
        ply: WholeJson = pydantic.Field(0, description="the bot's search depth, 0 .. 2")
        seed: WholeJson | None = pydantic.Field(None, ge=0, le=2**63 - 1)

        @pydantic.field_validator("ply")
        @classmethod
        def _ply(cls, value: int) -> int:
            return check_ply(value)

        position: str | None = pydantic.Field(
            None,
            max_length=200,
            description="start the first game here (Position ID, GNUbg ID or XGID; you on roll; dice it carries are "
            "the first roll)",
        )
        bgbot_first: BoolJson = pydantic.Field(False, description="with position: bgbot is on roll in it")

    class GameLine(pydantic.BaseModel):  # type: ignore[name-defined]
        model_config = strict
        line: str = pydantic.Field(
            ..., max_length=200, description="roll, double, take, pass, resign ..., a play, y, n"
        )
        tutor: float | None = pydantic.Field(
            None,
            ge=0,
            le=1000,
            description="judge the line against the bot's choice; flag it when it loses more than this (money "
            "equity, or EMG in a match)",
        )

    @app.post("/v1/games")
    async def new_game(body: NewGame) -> dict:
        """A game against the bot (money play, or a match of ``match_length``), kept under its game ID; from
        ``position`` (bgbot on roll in it with ``bgbot_first``) as ``bgbot play --position P [--bgbot-first]``."""
        loop = asyncio.get_running_loop()
        position = None if body.position is None else _position_text(body.position)
        game = await loop.run_in_executor(
            work_pool,
            lambda: games.new(body.match_length, body.ply, body.seed, position, body.bgbot_first),
        )
        return game.state()

    @app.get("/v1/games/{game_id}")
    async def game_state(game_id: str) -> dict:
        """The game: board from your side, dice, cube, score, the question it waits on (``prompt``), the log."""
        return games.get(game_id).state()

    @app.post("/v1/games/{game_id}")
    async def game_send(game_id: str, body: GameLine) -> dict:
        """Answer the game's question with a line as ``bgbot play`` reads it; the messages it gave in ``messages``.
        With ``tutor`` (a threshold) the line is first judged against the bot's choice: ``verdict`` (None where the
        line is no play or cube action), and the flagged verdicts of the game in ``tutor``."""
        game = games.get(game_id)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(work_pool, game.send, body.line, body.tutor)

    @app.get("/v1/games/{game_id}/mat")
    async def game_mat(game_id: str):
        """The finished games as a Jellyfish ``.mat`` file."""
        text = games.get(game_id).mat()
        headers = {"content-disposition": f'attachment; filename="bgbot-{game_id}.mat"'}
        return PlainTextResponse(text, headers=headers)

    @dataclasses.dataclass
    class RolloutQuery:
        """The rollout settings of ``/v1/rollout``, each a query parameter (FastAPI reads the fields)."""

        trials: Annotated[Whole, Query(description="trials per candidate")] = 1296
        truncate: Annotated[Whole, Query(description="plies before a trial is valued (0: none)")] = 0
        ply: Annotated[Whole, Query(description="lookahead of the players inside")] = 0
        seed: Annotated[Whole, Query()] = 0
        candidates: Annotated[Whole | None, Query(description="at most this many of the best plays")] = None
        cube: Annotated[Flag, Query(description="cubeful money rollout")] = False
        variance_reduction: Annotated[Flag, Query()] = True
        quasi_random: Annotated[Flag, Query()] = True
        databases: Annotated[Flag, Query()] = True

    @app.get("/v1/rollout")
    async def rollout(
        request: Request,
        position: str | None = POSITION,
        dice: str | None = DICE,
        query: RolloutQuery = Depends(),
    ):
        """A rollout as ``bgbot rollout --json``, streamed as server-sent events: ``progress`` events (trials done,
        running means and standard errors), then ``result`` or ``failed``. Closing the stream cancels the rollout.

        A request refused before any work is no stream but the API's error answer: 422 naming the field for a
        malformed one (an unknown field, ``trials=0``, ``truncate=-1``, ``candidates=0``, ``ply=3``), 400 for bad
        input (the position, the dice, a cubeful rollout the position cannot have). A stream's ``failed`` event is a
        refusal only the run can find (the server busy, the rollout cancelled)."""
        check_ply(query.ply)  # a bad ply is a malformed request (422), as everywhere in the API
        ctx = context.resolve(_position_text(position_of(position, request)), dice)
        try:
            settings = web.ro.RolloutSettings(
                trials=query.trials,
                truncate=query.truncate,
                plies=query.ply,
                seed=query.seed,
                variance_reduction=query.variance_reduction,
                quasi_random=query.quasi_random,
                databases=query.databases,
                cube=query.cube,
                jacoby=ctx.match.jacoby,
            )
            web.ro.check_max_candidates(query.candidates)
        except web.ro.RolloutError as err:  # a setting out of its range: a malformed request, as a bad ply
            raise MalformedRequest(str(err)) from None
        req = web.RolloutRequest(ctx, settings, query.candidates)
        web.check_rollout(req)

        def event(kind: str, data) -> bytes:
            return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()

        async def events():
            if not rollout_slots.acquire(blocking=False):
                yield event("failed", {"detail": f"the server runs {max_rollouts} rollouts already; try again later"})
                return
            loop = asyncio.get_running_loop()
            q: asyncio.Queue = asyncio.Queue()
            stop = threading.Event()

            def work():
                try:
                    return web.run_rollout(
                        bot, req, lambda m: loop.call_soon_threadsafe(q.put_nowait, ("progress", m)), stop.is_set
                    )
                finally:
                    rollout_slots.release()

            future = loop.run_in_executor(rollout_pool, work)
            future.add_done_callback(lambda f: q.put_nowait(("done", None)))
            try:
                while True:
                    kind, data = await q.get()
                    if kind == "progress":
                        yield event("progress", data)
                        continue
                    try:
                        yield event("result", future.result())
                    except web.Cancelled:
                        yield event("failed", {"detail": "the rollout was cancelled"})
                    except BgbotError as err:
                        yield event("failed", {"detail": api_message(err)})
                    return
            finally:
                stop.set()  # the page closed the stream (cancel): the rollout stops after its current work unit

        return StreamingResponse(events(), media_type="text/event-stream", headers={"cache-control": "no-store"})

    @app.post("/v1/analyse")
    async def analyse(
        text: str = Body(..., media_type="text/plain"),
        ply: Annotated[Whole, Query(description="search depth 0 .. 2")] = 0,
    ) -> dict:
        """``bgbot analyse --json`` of a Jellyfish ``.mat`` file sent as the body, each decision with its
        ``gnubg_id``."""
        check_ply(ply)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(work_pool, web.analyse, bot, text, ply)

    @app.get("/v1/models")
    async def list_models() -> dict:
        """The shipped and candidate models with their cards' headline figures, the training runs and the gate
        records (:func:`bgbot.protocols.web.gates`)."""
        return {
            "models": web.models(models_dir),
            "runs": web.runs(runs_dir, models_dir),
            "gates": web.gates(models_dir),
        }

    @app.get("/v1/runs/{name}")
    async def run_progress(name: str) -> dict:
        """A training run's progress records (games trained, ppg against the benchmark opponent, its 95% CI)."""
        return {"name": name, "records": web.run_records(runs_dir, models_dir, name)}

    @app.get("/", include_in_schema=False)
    async def index():
        return FileResponse(WEB_DIR / "index.html", headers={"cache-control": "no-cache"})

    app.mount("/static", StaticFiles(directory=WEB_DIR), name="static")
    return app


def listen_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (IPv6 where ``host`` has a colon, as uvicorn binds), the one
    :func:`serve` hands to uvicorn.

    Raises:
        ServerError: ``"port 8000 on 127.0.0.1 is already in use"``, or ``"cannot listen on HOST:PORT: why"`` (a port
            outside 1 .. 65535, an address not of this machine).
    """
    if not 0 < port < 65536:
        raise ServerError(f"--port must be 1..65535, got {port}")
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        s.listen(2048)
    except OSError as err:
        s.close()
        if err.errno == errno.EADDRINUSE:
            raise ServerError(
                f"port {port} on {host} is already in use: stop what listens there, or give another --port"
            ) from None
        raise ServerError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    return s


def check_port(host: str, port: int) -> None:
    """Raise ServerError when ``host:port`` cannot be listened on (in use, bad address: :func:`listen_socket`), before
    any work (the model is loaded after this check)."""
    listen_socket(host, port).close()


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(
    bot: "Bot",
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    max_body: int = MAX_BODY,
    max_rollouts: int = MAX_ROLLOUTS,
    models_dir: str | None = None,
    runs_dir: str | None = None,
) -> int:
    """Run the API and the web page with uvicorn until interrupted (see :func:`create_app` for the options), on the
    socket of :func:`listen_socket`, bound before anything else is done and kept: a port taken meanwhile is refused with
    the same message, never by uvicorn's own log line.

    Raises:
        ServerError: the port is in use or cannot be listened on; FastAPI or uvicorn missing.
    """
    with listen_socket(host, port) as sock:
        set_threads()  # one torch thread: requests are small batches, and threads fighting for cores cost ~10 ms each
        if class_dispatch():
            bearoff.load()  # the bear-off databases now, not on the first request that reaches a bear-off (~0.5 s)
        app = create_app(bot, max_body=max_body, max_rollouts=max_rollouts, models_dir=models_dir, runs_dir=runs_dir)
        try:
            import uvicorn
        except ImportError as err:
            raise ServerError("bgbot serve needs the optional extra: pip install 'bgbot[server]'") from err
        if not is_loopback(host):
            sys.stderr.write(
                f"bgbot serve: warning: listening on {host}, not the loopback: the page and the API have no login; "
                "anyone who can reach this address can use them\n"
            )
        sys.stderr.write(
            f"bgbot serve: listening on http://{host}:{port} (the page at /, API documentation at /docs)\n"
        )
        sys.stderr.flush()
        server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
        server.run(sockets=[sock])
    return 0 if server.started else 1
