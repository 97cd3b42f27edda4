"""``bgbot serve``: an HTTP JSON API (FastAPI + uvicorn, the optional extra ``bgbot[server]``).

Endpoints (OpenAPI documentation at ``/docs``, the schema at ``/openapi.json``)::

    GET  /v1/health                                  {"status": "ok", "version", "model"}
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
from bgbot.api import Bot, Probabilities, RankedPlay, cube_json, move_json
from bgbot.errors import BgbotError
from bgbot.evaluation.classes import CLASS_NAMES, classify_batch
from bgbot.evaluation.evaluator import position_probabilities
from bgbot.formats import context, notation, plays, positionid
from bgbot.rules import movegen_scalar
from bgbot.rules.board import flip
from bgbot.rules.movegen import generate_plays
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
    if endpoint == "move":
        ply = request.get("ply", 0)
        if not isinstance(ply, int) or isinstance(ply, bool):
            raise ServerError(f"ply is a search depth 0, 1, 2, got {ply!r}")
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
        return cube_json(bot, ctx, probabilities=None if given is None else context.parse_probabilities(given))
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


def _fast_move(ctx: context.Context, after: np.ndarray, mine: np.ndarray, ids: list[str]) -> dict:
    """The ``move`` answer at 0 ply in money play from values already computed (what :meth:`bgbot.api.Bot.rank_plays`
    gives: the legal plays in notation order, sorted by equity, ties kept in that order).

    Args:
        ctx: the request. after: ``(M, 26)`` its distinct afterstates (flipped). mine: ``(M, 5)`` float32 the mover's
            probabilities after each. ids: their M Position IDs.
    """
    assert ctx.dice is not None
    pos, (d1, d2) = ctx.position, ctx.dice
    scalar = movegen_scalar.legal_plays(pos, d1, d2)
    row = {bytes(a): i for i, a in enumerate(after)}
    if scalar:
        found = [(notation.format_play(pos, q), row[bytes(flip(q.afterstate).astype(np.int8))]) for q in scalar]
    else:
        found = [(notation.format_no_play(), 0)]
    rows = np.array([i for _, i in found])
    q = mine[rows]  # (M, 5) in notation order
    equities = equity(q.astype(np.float64))
    order = np.lexsort((np.arange(len(rows)), -equities))
    codes = classify_batch(after[rows])  # what valued each play (bgbot.api.EVALUATORS)
    ranked = [
        RankedPlay(
            found[i][0],
            ids[rows[i]],
            after[rows[i]],
            float(equities[i]),
            Probabilities.from_array(q[i]),
            evaluator=CLASS_NAMES[int(codes[i])],
        )
        for i in order
    ]
    return move_json(ctx, ranked)


def answer_many(bot: "Bot", requests: list[tuple[str, dict]]) -> list[dict | BgbotError]:
    """Answers to many requests, their evaluations batched: each an answer dict, or the BgbotError it raised.

    ``move`` requests at 0 ply in money play are answered from one batched move generation and evaluation
    (:func:`_fast_move`); the others through :func:`answer` with an evaluator that already holds the values of the
    batch's positions."""
    fast_ctx: dict[int, context.Context] = {}
    singles = []
    for k, (endpoint, req) in enumerate(requests):
        try:
            if endpoint == "move" and req.get("ply", 0) == 0:
                ctx = _resolve(req["position"], req.get("dice"), need_dice=True)
                if ctx.match.is_money:
                    fast_ctx[k] = ctx
            elif endpoint == "cube" and req.get("probabilities") is None:
                singles.append(_resolve(req["position"], None, need_dice=False).position)
        except (BgbotError, KeyError, TypeError):
            pass  # answered (with its error) below
    out: list[dict | BgbotError] = [{} for _ in requests]
    if fast_ctx:
        keys = list(fast_ctx)
        found = generate_plays(
            np.stack([fast_ctx[k].position for k in keys]), np.array([fast_ctx[k].dice for k in keys])
        )
        mine = flip_probabilities(position_probabilities(bot.evaluator, found.afterstates))  # (M, 5) mover's view
        ids = positionid.encode_many(found.afterstates)
        starts = found.offsets(len(keys))
        for j, k in enumerate(keys):
            a, b = starts[j], starts[j + 1]
            try:
                out[k] = _fast_move(fast_ctx[k], found.afterstates[a:b], mine[a:b], ids[a:b])
            except BgbotError as err:
                out[k] = err
    evaluator = _Prefetched(bot.evaluator, np.stack(singles) if singles else np.zeros((0, 26), dtype=np.int8))
    slow = copy.copy(bot)
    slow.evaluator = evaluator  # type: ignore[assignment]
    for k, (endpoint, req) in enumerate(requests):
        if k in fast_ctx:
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

    POSITION = Query(..., description="Position ID, PositionID:MatchID (GNUbg ID) or XGID=...")
    DICE = Query(None, description="the roll: 31, 3-1 or '3 1' (optional when the position carries dice)")

    @app.get("/v1/health")
    async def health() -> dict:
        """Liveness: version and model path."""
        return {"status": "ok", "version": bgbot.__version__, "model": bot.path}

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
    ) -> dict:
        """The cube action of the side on roll before rolling (``bgbot cube --json``)."""
        return await batcher.submit("cube", {"position": position, "jacoby": jacoby, "probabilities": probabilities})

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
    app = create_app(bot)
    try:
        import uvicorn
    except ImportError as err:
        raise ServerError("bgbot serve needs the optional extra: pip install 'bgbot[server]'") from err
    sys.stderr.write(f"bgbot serve: listening on http://{host}:{port} (API documentation at /docs)\n")
    sys.stderr.flush()
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0
