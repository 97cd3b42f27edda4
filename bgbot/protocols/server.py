"""``bgbot serve``: an HTTP JSON API (FastAPI + uvicorn, the optional extra ``bgbot[server]``).

Endpoints (OpenAPI documentation at ``/docs``, the schema at ``/openapi.json``)::

    GET  /v1/health                                  {"status": "ok", "version", "model", "requests", "batches"}
    GET  /v1/moves?position=P&dice=D                 as ``bgbot moves P D --json``
    GET  /v1/move?position=P&dice=D&ply=N            as ``bgbot move P D --ply N --json``
    GET  /v1/cube?position=P[&jacoby=on|off][&probabilities=W,WG,WBG,LG,LBG]     as ``bgbot cube ... --json``
    POST /v1/batch  {"requests": [{"endpoint": "move"|"moves"|"cube", "position", "dice", "ply", "jacoby",
                     "probabilities"}, ...]}  ->  {"answers": [answer or {"error": message}, ...]}

A bad position, dice or ply is HTTP 400 with ``{"detail": message}``, the message the CLI prints after ``error:``; a
malformed request (a missing parameter, a ply that is not an integer, a batch body that is not the schema) is 422.
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
import socket
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np

import bgbot
from bgbot.api import PROBABILITY_NAMES, Bot, cube_json, move_answer, move_json, round_array
from bgbot.errors import BgbotError
from bgbot.evaluation import bearoff
from bgbot.evaluation.classes import CLASS_NAMES
from bgbot.evaluation.evaluator import class_dispatch, classified_probabilities, position_probabilities
from bgbot.evaluation.network import set_threads
from bgbot.formats import context, notation, plays, positionid
from bgbot.rules import movegen_scalar
from bgbot.rules.board import flip
from bgbot.rules.outcomes import equity, flip_probabilities

__all__ = ["ServerError", "create_app", "serve", "answer"]

MAX_BATCH = 1000
"""Most requests one ``POST /v1/batch`` may carry."""


class ServerError(BgbotError):
    """A server that cannot start (port in use, FastAPI missing) or a request it cannot answer."""


# -- answers, as the CLI's --json gives them --------------------------------------------------------------------------


def _position_text(text: str) -> str:
    """A ``+`` decoded to a space (an unencoded query string) is read back as ``+``."""
    return text.replace(" ", "+") if isinstance(text, str) else text


def _resolve(position: str, dice: str | None, need_dice: bool) -> context.Context:
    """POSITION and DICE as the CLI reads them; with ``need_dice`` the context has dice."""
    ctx = context.resolve(_position_text(position), dice)
    if need_dice and ctx.dice is None:
        raise context.DiceSyntaxError(
            f"no dice: give DICE after POSITION {position!r} (e.g. 31), or a position that carries dice"
        )
    return ctx


def answer(bot: "Bot", endpoint: str, request: dict[str, Any]) -> dict:
    """One answer: ``endpoint`` "moves", "move" or "cube" with the request's fields, the CLI's ``--json`` shape.

    Raises:
        BgbotError: bad input (the CLI's message).
    """
    position, dice = request.get("position"), request.get("dice")
    if not isinstance(position, str):
        raise ServerError("a request needs a position (Position ID, PositionID:MatchID or XGID=...)")
    if endpoint == "moves":
        ctx = _resolve(position, dice, need_dice=True)
        assert ctx.dice is not None
        found = plays.legal_plays(ctx.position, ctx.dice)
        return {"position_id": ctx.position_id, "dice": list(ctx.dice), "plays": [p.to_json() for p in found]}
    ply = request.get("ply", 0)
    if not isinstance(ply, int) or isinstance(ply, bool):
        raise ServerError(f"ply is a search depth 0, 1, 2, got {ply!r}")
    if endpoint == "move":
        ctx = _resolve(position, dice, need_dice=True)
        assert ctx.dice is not None
        return move_json(ctx, bot.rank_plays(ctx.position, ctx.dice, ctx.cube, ctx.match, ply=ply))
    if endpoint == "cube":
        ctx = _resolve(position, None, need_dice=False)
        jacoby = request.get("jacoby")
        if jacoby is not None:
            if jacoby not in ("on", "off"):
                raise ServerError(f"jacoby is 'on' or 'off', got {jacoby!r}")
            ctx = ctx.with_jacoby(jacoby == "on")
        given = request.get("probabilities")
        if given is not None and ply:
            raise ServerError("probabilities replace the evaluation; they cannot be used with ply")
        probabilities = None if given is None else context.parse_probabilities(given)
        return cube_json(bot, ctx, probabilities=probabilities, ply=ply)
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


def _fast_moves(bot: "Bot", ctxs: list[context.Context]) -> list[dict | BgbotError]:
    """The ``move`` answers at 0 ply in money play of many requests, their afterstates evaluated in one call: what
    :func:`answer` gives (:meth:`bgbot.api.Bot.rank_plays`: the legal plays in notation order, sorted by equity,
    ties kept in that order; :func:`bgbot.api.move_json`), built from arrays rather than one object per play.

    The plays and their notation come from the scalar generator (:func:`bgbot.rules.movegen_scalar.legal_plays`,
    one play per distinct afterstate, the set :func:`bgbot.formats.plays.legal_plays` checks against the batched
    generator); equities and probabilities are rounded all at once as ``RankedPlay.to_json`` rounds them one by one
    (:func:`bgbot.api.round_array`: Python's ``round`` for the equity, numpy's for the probabilities).
    """
    out: list[dict | BgbotError] = []
    texts: list[str] = []
    afters: list[np.ndarray] = []
    counts: list[int] = []
    seen: dict[tuple[bytes, int, int], tuple[list[str], list[np.ndarray]]] = {}  # the same request twice: once
    for ctx in ctxs:
        assert ctx.dice is not None
        pos, (d1, d2) = ctx.position, ctx.dice
        key = (pos.tobytes(), d1, d2)  # the dice order picks which step sequence names a play
        if key not in seen:
            try:
                scalar = movegen_scalar.legal_plays(pos, d1, d2)
            except BgbotError as err:
                out.append(err)
                counts.append(0)
                continue
            if scalar:
                board = [int(x) for x in pos]  # format_play reads the board as Python ints: convert once
                seen[key] = (
                    [notation.format_play(board, q) for q in scalar],  # type: ignore[arg-type]
                    [q.afterstate for q in scalar],
                )
            else:
                seen[key] = ([notation.format_no_play()], [pos])
        text, play_after = seen[key]
        out.append({})
        texts.extend(text)
        afters.extend(play_after)
        counts.append(len(text))
    if not afters:
        return out
    after = flip(np.stack(afters)).astype(np.int8)  # (N, 26) opponent on roll
    probs, codes = classified_probabilities(bot.evaluator, after)  # (N, 5) float32, (N,) int8
    mine = flip_probabilities(probs).astype(np.float64)  # (N, 5) the mover's, as Probabilities holds them
    request = np.repeat(np.arange(len(ctxs)), counts)  # (N,) which request each play belongs to
    gammons_only = np.array([not c.match.backgammons for c in ctxs])[request]  # (N,) backgammons count as gammons
    values = equity(np.where(gammons_only[:, None] & (np.arange(5) % 2 == 0) & (np.arange(5) > 0), 0.0, mine))
    order = np.lexsort((np.arange(len(after)), -values, request))  # (N,) best first within each request
    ids = positionid.encode_many(after)
    equities = round_array(values, 6).tolist()
    rounded = np.round(mine, 6).tolist()
    names = [CLASS_NAMES[c] for c in codes.tolist()]
    start = 0
    for j, ctx in enumerate(ctxs):
        n = counts[j]
        if not n:
            continue
        plays = [
            {
                "play": texts[i],
                "position_id": ids[i],
                "equity": equities[i],
                "probabilities": dict(zip(PROBABILITY_NAMES, rounded[i])),
                "ply": 0,
                "evaluator": names[i],
                "rank": r,
            }
            for r, i in enumerate(order[start : start + n].tolist(), 1)
        ]
        out[j] = move_answer(ctx, plays)
        start += n
    return out


def answer_many(bot: "Bot", requests: list[tuple[str, dict]]) -> list[dict | BgbotError]:
    """Answers to many requests, their evaluations batched: each an answer dict, or the BgbotError it raised.

    ``move`` requests at 0 ply in money play are answered from one batched evaluation (:func:`_fast_moves`); the
    others through :func:`answer` with an evaluator that already holds the values of the batch's positions."""
    fast: dict[int, context.Context] = {}
    singles = []
    for k, (endpoint, req) in enumerate(requests):
        try:
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
        for k, result in zip(fast, _fast_moves(bot, list(fast.values()))):
            out[k] = result
    if len(fast) == len(requests):
        return out
    evaluator = _Prefetched(bot.evaluator, np.stack(singles) if singles else np.zeros((0, 26), dtype=np.int8))
    slow = copy.copy(bot)
    slow.evaluator = evaluator  # type: ignore[assignment]
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
        self.requests = 0  # requests answered through the queue
        self.batches = 0  # rounds of the worker: each evaluates the positions of all its requests together

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
            self.requests += len(items)
            self.batches += 1
            try:
                results = await loop.run_in_executor(self.pool, answer_many, self.bot, [(e, r) for e, r, _ in items])
            except Exception as err:  # a bug: every waiting request gets it (500), the loop goes on
                results = [err] * len(items)  # type: ignore[list-item]
            for (_, _, future), result in zip(items, results):
                if future.done():
                    continue
                if isinstance(result, Exception) and not isinstance(result, BgbotError):
                    future.set_exception(result)
                else:
                    future.set_result(result)


# -- the app ----------------------------------------------------------------------------------------------------


def _fastapi():
    try:
        import fastapi
        import pydantic
    except ImportError as err:
        raise ServerError("bgbot serve needs the optional extra: pip install 'bgbot[server]'") from err
    return fastapi, pydantic


def create_app(bot: "Bot"):
    """The FastAPI application answering with ``bot``. Raises ServerError without FastAPI installed."""
    fastapi, pydantic = _fastapi()
    from fastapi import Query
    from fastapi.responses import JSONResponse

    app = fastapi.FastAPI(
        title="bgbot",
        version=bgbot.__version__,
        description="Backgammon plays and cube actions by bgbot's value network. The JSON shapes are those of the "
        "command line's --json. Position IDs contain + and /: URL-encode them.",
    )
    batcher = _Batcher(bot)
    app.state.batcher = batcher

    @app.exception_handler(BgbotError)
    async def _bad_input(request, err: BgbotError):
        return JSONResponse(status_code=400, content={"detail": str(err)})

    from fastapi.encoders import jsonable_encoder
    from fastapi.exceptions import RequestValidationError

    def _finite(v):  # a non-finite number in a malformed body (1e400) would make the 422 answer itself fail (500)
        if isinstance(v, float) and not np.isfinite(v):
            return repr(v)
        if isinstance(v, dict):
            return {k: _finite(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [_finite(x) for x in v]
        return v

    @app.exception_handler(RequestValidationError)
    async def _malformed(request, err: RequestValidationError):
        return JSONResponse(status_code=422, content={"detail": _finite(jsonable_encoder(err.errors()))})

    POSITION = Query(..., description="Position ID, PositionID:MatchID (GNUbg ID) or XGID=...")
    DICE = Query(None, description="the roll: 31, 3-1 or '3 1' (optional when the position carries dice)")

    @app.get("/v1/health")
    async def health() -> dict:
        """Liveness: version and model path; ``requests`` and ``batches``: the ``move`` and ``cube`` requests answered
        so far and the evaluator batches that answered them (concurrent requests share a batch)."""
        return {
            "status": "ok",
            "version": bgbot.__version__,
            "model": bot.path,
            "requests": batcher.requests,
            "batches": batcher.batches,
        }

    @app.get("/v1/moves")
    async def moves(position: str = POSITION, dice: str | None = DICE) -> dict:
        """Every legal play of the dice, each resulting position once (``bgbot moves --json``)."""
        return answer(bot, "moves", {"position": position, "dice": dice})

    @app.get("/v1/move")
    async def move(
        position: str = POSITION, dice: str | None = DICE, ply: int = Query(0, description="search depth 0..2")
    ) -> dict:
        """The legal plays ranked by the model, best first (``bgbot move --json``)."""
        return await batcher.submit("move", {"position": position, "dice": dice, "ply": ply})

    @app.get("/v1/cube")
    async def cube(
        position: str = POSITION,
        jacoby: Literal["on", "off"] | None = Query(None, description="Jacoby rule for money play"),
        probabilities: str | None = Query(None, description="W,WG,WBG,LG,LBG to use instead of the model's"),
        ply: int = Query(0, description="lookahead of the cubeless probabilities, 0..2"),
    ) -> dict:
        """The cube action of the side on roll before rolling (``bgbot cube --json``)."""
        request = {"position": position, "jacoby": jacoby, "probabilities": probabilities, "ply": ply}
        return await batcher.submit("cube", request)

    class BatchRequest(pydantic.BaseModel):  # type: ignore[name-defined]
        endpoint: Literal["moves", "move", "cube"]
        position: str
        dice: str | None = None
        ply: int = 0
        jacoby: Literal["on", "off"] | None = None
        probabilities: str | None = None

    class Batch(pydantic.BaseModel):  # type: ignore[name-defined]
        requests: list[BatchRequest] = pydantic.Field(..., max_length=MAX_BATCH)

    @app.post("/v1/batch")
    async def batch(body: Batch) -> dict:
        """Many requests, one answer each (``{"error": message}`` for a bad one), evaluated in one batch."""
        reqs: list[tuple[str, dict]] = [(r.endpoint, r.model_dump(exclude={"endpoint"})) for r in body.requests]
        loop = asyncio.get_running_loop()
        results = await loop.run_in_executor(batcher.pool, answer_many, bot, reqs)
        return {"answers": [{"error": str(r)} if isinstance(r, BgbotError) else r for r in results]}

    return app


def check_port(host: str, port: int) -> None:
    """Raise ServerError when ``host:port`` cannot be listened on (in use, bad address)."""
    if not 0 < port < 65536:
        raise ServerError(f"--port must be 1..65535, got {port}")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as err:
            raise ServerError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None


def serve(bot: "Bot", host: str = "127.0.0.1", port: int = 8080) -> int:
    """Run the API with uvicorn until interrupted. Raises ServerError (port in use, FastAPI missing)."""
    check_port(host, port)
    set_threads()  # one torch thread: requests are small batches, and threads fighting for cores cost ~10 ms each
    if class_dispatch():
        bearoff.load()  # the bear-off databases now, not on the first request that reaches a bear-off (~0.5 s)
    app = create_app(bot)
    try:
        import uvicorn
    except ImportError as err:
        raise ServerError("bgbot serve needs the optional extra: pip install 'bgbot[server]'") from err
    sys.stderr.write(f"bgbot serve: listening on http://{host}:{port} (API documentation at /docs)\n")
    sys.stderr.flush()
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0
